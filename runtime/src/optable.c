/* optable.c — the op table as data (bxr_op_info), generated from ops.h. */
#include "op.h"

const struct bxr_op_info bxr_op_info[BXR_OP_COUNT] = {
#define BXR_X_(E, n, nin_, k0, k1, k2, ns, at_, inf) \
  [BXR_OP_##E] = {.name = #n, .nin = nin_, .kinds = {k0, k1, k2}, .nscalar = ns, .attrs = at_, .infer = inf},
    BXR_OP_TABLE(BXR_X_)
#undef BXR_X_
};
_Static_assert(sizeof bxr_op_info / sizeof bxr_op_info[0] == BXR_OP_COUNT, "one info row per op");

const char *bxr_op_name(enum bxr_opcode code) {
  if ((unsigned)code >= BXR_OP_COUNT) return "?";
  return bxr_op_info[code].name;
}
