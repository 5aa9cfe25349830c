/* cube_reduce.c — cube:cpu's reductions (sum mean prod max_reduce
 * min_reduce argmax argmin any all) and cumsum: host halves of the
 * kernels in stdlib/cube/reduce.bext and scan.bext.  The host picks the
 * instantiation for the op and dtype, allocates the output and launches
 * one unit per output element (per line, for cumsum); the kernels read the
 * input at its own strides.  A whole-tensor reduction is the same kernel
 * over the one axis of a rank-1 view (of a contiguous copy when the input
 * is a strided view: its elements are not one arithmetic sequence). */
#include <stdio.h>

#include "cube.h"

/* Units per cube of every kernel here: sum_float's shared stack holds 64. */
#define RED_CUBE 64u

/* The instantiation and scalars of a reduction on dtype dt over an
 * extent of ext elements (reduce.bext's kernels and their parameters). */
static void pick(enum bxr_opcode c, bext_dtype dt, int64_t ext, char *inst, size_t cap,
                 union bxl_scalar *div) {
  const char *d = bext_dtype_name(dt);
  bool flt = bext_dtype_kind(dt) == BEXT_KIND_FLOAT;
  switch (c) {
  case BXR_OP_SUM:
  case BXR_OP_MEAN:
    if (flt) {
      snprintf(inst, cap, "sum_float_%s", d);
      div->f64 = c == BXR_OP_MEAN ? (double)ext : 1.0;
    } else {
      snprintf(inst, cap, "fold_int_%s_0", d);
      /* the divisor in the dtype's slot (the kernel's `div: I`) */
      if (dt == BEXT_I64) div->i64 = c == BXR_OP_MEAN ? ext : 1;
      else div->i32 = c == BXR_OP_MEAN ? (int32_t)ext : 1;
    }
    return;
  case BXR_OP_PROD:
    if (flt) snprintf(inst, cap, "prod_float_%s", d);
    else {
      snprintf(inst, cap, "fold_int_%s_1", d);
      if (dt == BEXT_I64) div->i64 = 1;
      else div->i32 = 1;
    }
    return;
  case BXR_OP_MAX_REDUCE:
  case BXR_OP_MIN_REDUCE:
    snprintf(inst, cap, "extreme_%s_%d", d, c == BXR_OP_MAX_REDUCE);
    return;
  case BXR_OP_ARGMAX:
  case BXR_OP_ARGMIN:
    snprintf(inst, cap, "arg_extreme_%s_%d", d, c == BXR_OP_ARGMAX);
    return;
  case BXR_OP_ANY:
  case BXR_OP_ALL:
    snprintf(inst, cap, "any_all_%d", c == BXR_OP_ALL);
    return;
  default:
    BXR_ASSERT(!"not a reduction");
  }
}

/* in viewed so that the reduction runs along *dim: itself, or for a
 * whole-tensor reduction a rank-1 view of it (contiguous first).  A new
 * reference, or NULL + error. */
static bext_tensor *reduced_view(struct bxr_op *op, int *dim) {
  bext_tensor *t = bxr_op_take(op, 0);
  if (!op->at.all) {
    *dim = op->at.dim;
    return t;
  }
  *dim = 0;
  t = bxr_make_contiguous(t);
  if (!t) return NULL;
  int64_t n = bxr_numel(t->rank, t->shape), one = 1;
  bext_tensor *v = bxr_tensor_view(t, 1, &n, &one, t->offset);
  bext_release(t);
  return v;
}

bext_tensor *cube_exec_reduce(struct bxr_op *op) {
  int dim;
  bext_tensor *in = reduced_view(op, &dim);
  if (!in) return NULL;
  char inst[64];
  union bxl_scalar sc[2] = {{.u64 = 0}, {.u64 = 0}};
  sc[0].u32 = (uint32_t)dim;
  pick(op->code, in->dtype, in->shape[dim], inst, sizeof inst, &sc[1]);
  bext_tensor *out = cube_alloc(op->device, &op->out);
  int64_t units = out ? bxr_numel(out->rank, out->shape) : 0;
  bool ok = out != NULL;
  if (ok && units > 0) {
    struct bxr_kernel *k = cube_kernel(op->device, inst);
    bext_tensor *bind[2] = {in, out};
    ok = k && cube_launch(op->device, k, (uint32_t)units, RED_CUBE, bind, sc);
  }
  bext_release(in);
  if (ok) return out;
  if (out) bext_release(out);
  return NULL;
}

bext_tensor *cube_exec_cumsum(struct bxr_op *op) {
  const bext_tensor *in = op->in[0];
  int dim = op->at.dim;
  bext_tensor *out = cube_alloc(op->device, &op->out);
  if (!out) return NULL;
  int64_t ext = in->shape[dim], lines = ext ? bxr_numel(in->rank, in->shape) / ext : 0;
  if (lines == 0) return out;
  char inst[64];
  snprintf(inst, sizeof inst, "cumsum_%s_%s",
           bext_dtype_kind(in->dtype) == BEXT_KIND_FLOAT ? "float" : "int", bext_dtype_name(in->dtype));
  union bxl_scalar sc[1] = {{.u64 = 0}};
  sc[0].u32 = (uint32_t)dim;
  struct bxr_kernel *k = cube_kernel(op->device, inst);
  bext_tensor *bind[2] = {op->in[0], out};
  if (k && cube_launch(op->device, k, (uint32_t)lines, RED_CUBE, bind, sc)) return out;
  bext_release(out);
  return NULL;
}
