/* cube_index.c — cube:cpu's gather, scatter_add, select and
 * select_assign: host halves of stdlib/cube/index.bext.  Index values are
 * checked on the host first (bxr_check_indices: the index tensor is in
 * host memory on cube:cpu), so a bad index is the same error as on every
 * other CPU backend, naming the op, the index, its position and the
 * extent, and no kernel ever sees one.  The adding ops start from a copy
 * of the input (the device's copy) and give each unit one line along dim.
 * gather and select move bool tensors as u8 (a bool is one byte, 0 or 1),
 * so the kernels need no bool instantiation. */
#include <stdio.h>

#include "cube.h"

#define IX_CUBE 64u

/* t itself (retained), or for bool a u8 view of the same bytes. */
static bext_tensor *as_data(bext_tensor *t) {
  if (t->dtype != BEXT_BOOL) return bext_retain(t);
  bext_tensor *v = bxr_tensor_view(t, t->rank, t->shape, t->strides, t->offset);
  if (v) v->dtype = BEXT_U8;
  return v;
}

/* Launches `kernel`_<data>_<index dtype> with bindings b0, b1, out and
 * the dim, over `units` units. */
static bool launch(struct bxr_op *op, const char *kernel, int64_t units, bext_tensor *b0,
                   bext_tensor *b1, bext_tensor *out) {
  if (units == 0) return true;
  bext_tensor *v0 = as_data(b0), *v1 = as_data(b1), *vo = as_data(out);
  bool ok = v0 && v1 && vo;
  if (ok) {
    char inst[64];
    snprintf(inst, sizeof inst, "%s_%s_%s", kernel, cube_dtype_name(vo->dtype), cube_dtype_name(op->in[1]->dtype));
    struct bxr_kernel *k = cube_kernel(op->device, inst);
    union bxl_scalar sc[1] = {{.u64 = 0}};
    sc[0].u32 = (uint32_t)op->at.dim;
    bext_tensor *bind[3] = {v0, v1, vo};
    ok = k && cube_launch(op->device, k, (uint32_t)units, IX_CUBE, bind, sc);
  }
  bext_release(v0);
  bext_release(v1);
  bext_release(vo);
  return ok;
}

static bool fits(const struct bxr_op *op) {
  for (int i = 0; i < op->n_in; i++)
    if (!cube_fits_u32(op->device, op->in[i])) return false;
  return cube_check_dtypes(op);
}

/* gather / select: one unit per output element. */
bext_tensor *cube_exec_gather(struct bxr_op *op) {
  if (!fits(op) || !bxr_check_indices(op)) return NULL;
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
  if (!fits(op) || !bxr_check_indices(op)) return NULL;
  bext_tensor *out = cube_alloc(op->device, &op->out);
  if (!out) return NULL;
  if (!op->device->vt->copy(out, op->in[0])) {
    bext_release(out);
    return NULL;
  }
  const bext_tensor *lines = op->code == BXR_OP_SCATTER_ADD ? op->in[1] : op->in[2];
  int64_t ext = lines->shape[op->at.dim];
  int64_t units = ext ? bxr_numel(lines->rank, lines->shape) / ext : 0;
  if (!cube_fits_loop(op, ext)) {   /* one unit adds a whole line */
    bext_release(out);
    return NULL;
  }
  const char *name = op->code == BXR_OP_SCATTER_ADD ? "scatter_add" : "select_assign";
  if (launch(op, name, units, op->in[1], op->in[2], out)) return out;
  bext_release(out);
  return NULL;
}
