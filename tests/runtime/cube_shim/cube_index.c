/* cube_index.c — cube:cpu's gather, scatter_add, select and
 * select_assign: host halves of stdlib/cube/index.bext.  Index values are
 * checked on the host first (bxr_check_indices: the index tensor is in
 * host memory on cube:cpu), so a bad index is the same error as on every
 * other CPU backend, naming the op, the index, its position and the
 * extent, and no kernel ever sees one.  The adding ops start from a copy
 * of the input and give each unit one line along dim. */
#include <stdio.h>

#include "cube.h"

#define IX_CUBE 64u

static bool launch(struct bxr_op *op, const char *kernel, int64_t units, bext_tensor *b0,
                   bext_tensor *b1, bext_tensor *out) {
  if (units == 0) return true;
  char inst[64];
  const bext_tensor *ix = op->in[1];
  snprintf(inst, sizeof inst, "%s_%s_%s", kernel, bext_dtype_name(out->dtype), bext_dtype_name(ix->dtype));
  struct bxr_kernel *k = cube_kernel(op->device, inst);
  union bxl_scalar sc[1] = {{.u64 = 0}};
  sc[0].u32 = (uint32_t)op->at.dim;
  bext_tensor *bind[3] = {b0, b1, out};
  return k && cube_launch(op->device, k, (uint32_t)units, IX_CUBE, bind, sc);
}

/* gather / select: one unit per output element. */
bext_tensor *cube_exec_gather(struct bxr_op *op) {
  if (!bxr_check_indices(op)) return NULL;
  bext_tensor *out = cube_alloc(op->device, &op->out);
  if (!out) return NULL;
  const char *name = op->code == BXR_OP_GATHER ? "gather" : "select";
  if (launch(op, name, bxr_numel(out->rank, out->shape), op->in[0], op->in[1], out)) return out;
  bext_release(out);
  return NULL;
}

/* scatter_add / select_assign: a copy of the input, then one unit per
 * line of the added values along dim (index lines for scatter_add). */
bext_tensor *cube_exec_scatter_add(struct bxr_op *op) {
  if (!bxr_check_indices(op)) return NULL;
  bext_tensor *out = cube_alloc(op->device, &op->out);
  if (!out) return NULL;
  if (!op->device->vt->copy(out, op->in[0])) {
    bext_release(out);
    return NULL;
  }
  const bext_tensor *lines = op->code == BXR_OP_SCATTER_ADD ? op->in[1] : op->in[2];
  int64_t ext = lines->shape[op->at.dim];
  int64_t units = ext ? bxr_numel(lines->rank, lines->shape) / ext : 0;
  const char *name = op->code == BXR_OP_SCATTER_ADD ? "scatter_add" : "select_assign";
  if (launch(op, name, units, op->in[1], op->in[2], out)) return out;
  bext_release(out);
  return NULL;
}
