/* nd_create.c — NdArray creation ops: empty/zeros/ones/full, arange and the
 * seeded random ops (through the runtime's shared generator). */
#include <string.h>

#include "ndarray.h"

bext_tensor *bxnd_create(struct bxr_op *op) {
  bext_tensor *t = bxr_op_new_output(op);
  if (!t) return NULL;
  void *p = bxr_data(t);
  int64_t n = bxr_numel(t->rank, t->shape);
  bext_dtype dt = t->dtype;
  switch (op->code) {
  case BXR_OP_EMPTY: /* zero-filled anyway: never hand out uninitialized memory */
  case BXR_OP_ZEROS: memset(p, 0, (size_t)n * bext_dtype_size(dt)); break;
  case BXR_OP_ONES:
    for (int64_t i = 0; i < n; i++) bxr_store_f64(p, dt, i, 1.0);
    break;
  case BXR_OP_FULL:
    for (int64_t i = 0; i < n; i++) bxr_store_f64(p, dt, i, op->sc[0].f);
    break;
  case BXR_OP_ARANGE:
    for (int64_t i = 0; i < n; i++) bxr_store_f64(p, dt, i, op->sc[0].f + (double)i * op->sc[2].f);
    break;
  case BXR_OP_RANDOM_UNIFORM:
    for (int64_t i = 0; i < n; i++)
      bxr_store_f64(p, dt, i, op->sc[0].f + (op->sc[1].f - op->sc[0].f) * bxr_rng_uniform(op->at.seed, (uint64_t)i));
    break;
  case BXR_OP_RANDOM_NORMAL:
    for (int64_t i = 0; i < n; i++)
      bxr_store_f64(p, dt, i, op->sc[0].f + op->sc[1].f * bxr_rng_normal(op->at.seed, (uint64_t)i));
    break;
  default: BXR_ASSERT(!"not a creation op");
  }
  return t;
}
