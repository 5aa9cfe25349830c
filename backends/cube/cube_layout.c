/* cube_layout.c — layout ops on a cube device.  reshape, swap_dims,
 * permute, expand, slice and narrow are strided views (the runtime's
 * bxr_layout_view, as Flex); what must move data (a reshape the strides
 * cannot express, flip, cat, repeat_dim, slice_assign, cast and the
 * backend's copy member) launches stdlib/cube/convert.bext's kernels
 * through cube_copy_into, writing into a view of the output where only a
 * part of it is filled. */
#include <stdio.h>

#include "cube.h"

/* Units per cube for copies (as elementwise launches). */
#define CUBE_COPY_DIM 256

bool cube_fits_u32(struct bext_device *dev, const bext_tensor *t) {
  int64_t far = 0;
  for (int d = 0; d < t->rank; d++) {
    if (t->shape[d] > (int64_t)UINT32_MAX || t->strides[d] > (int64_t)UINT32_MAX || t->strides[d] < 0)
      return bxr_error("%s: a view with extents or strides beyond 2^32 - 1 is not supported yet", dev->name);
    if (t->shape[d] > 0) far += (t->shape[d] - 1) * t->strides[d];
  }
  if (far > (int64_t)UINT32_MAX || bxr_numel(t->rank, t->shape) > (int64_t)UINT32_MAX)
    return bxr_error("%s: tensors of more than 2^32 - 1 elements are not supported yet", dev->name);
  return true;
}

bool cube_copy_into(struct bext_device *dev, bext_tensor *dst, const bext_tensor *src, uint32_t flip_mask) {
  bext_dtype s = src->dtype, d = dst->dtype;
  if (!cube_dtype_ok(dev, s) || !cube_dtype_ok(dev, d))
    return bxr_error("%s: copies of %s to %s are not supported on this device (%s)", dev->name, bext_dtype_name(s),
                     bext_dtype_name(d), cube_dtype_why(dev));
  BXR_ASSERT(bxr_same_shape(src->rank, src->shape, dst->rank, dst->shape));
  int64_t n = bxr_numel(dst->rank, dst->shape);
  if (n == 0) return true;
  if (!cube_fits_u32(dev, src) || !cube_fits_u32(dev, dst)) return false;
  int contig = flip_mask == 0 && bxr_is_contiguous(src) && bxr_is_contiguous(dst);
  char inst[64];
  if (s == BEXT_BOOL && d == BEXT_BOOL) snprintf(inst, sizeof inst, "copy_bool_%d", contig);
  else if (s == BEXT_BOOL) snprintf(inst, sizeof inst, "cast_from_bool_%s_%d", cube_dtype_name(d), contig);
  else if (d == BEXT_BOOL) snprintf(inst, sizeof inst, "cast_to_bool_%s_%d", cube_dtype_name(s), contig);
  else snprintf(inst, sizeof inst, "cast_%s_%s_%d", cube_dtype_name(s), cube_dtype_name(d), contig);
  struct bxr_kernel *k = cube_kernel(dev, inst);
  if (!k) return false;
  union bxl_scalar sc[1];
  sc[0].u64 = flip_mask;
  bext_tensor *b[2] = {(bext_tensor *)src, dst};
  return contig ? cube_launch_flat(dev, k, (uint32_t)n, CUBE_COPY_DIM, b, 2, sc)
                : cube_launch(dev, k, (uint32_t)n, CUBE_COPY_DIM, b, sc);
}

/* Copies src into the part of out that starts at element offset `off`
 * (relative to out's element 0) and has src's shape, with out's strides. */
static bool copy_into_part(struct bext_device *dev, bext_tensor *out, const bext_tensor *src, int64_t off) {
  if (bxr_numel(src->rank, src->shape) == 0) return true;
  bext_tensor *part = bxr_tensor_view(out, src->rank, src->shape, out->strides, out->offset + off);
  if (!part) return false;
  bool ok = cube_copy_into(dev, part, src, 0);
  bext_release(part);
  return ok;
}

/* A new output of op's spec, or NULL + error. */
static bext_tensor *new_out(struct bxr_op *op) { return cube_alloc(op->device, &op->out); }

static bext_tensor *done(bext_tensor *out, bool ok) {
  if (ok) return out;
  bext_release(out);
  return NULL;
}

bext_tensor *cube_exec_layout(struct bxr_op *op) {
  struct bext_device *dev = op->device;
  bext_tensor *t = op->in[0];
  const bext_attrs *at = &op->at;
  switch (op->code) {
  case BXR_OP_RESHAPE: case BXR_OP_SWAP_DIMS: case BXR_OP_PERMUTE: case BXR_OP_EXPAND:
  case BXR_OP_SLICE: case BXR_OP_NARROW: {
    bext_tensor *v;
    if (bxr_layout_view(op, &v)) return v;
    /* the strides cannot express the new shape: a contiguous copy, viewed */
    if (!cube_check_dtypes(op)) return NULL;
    bext_tensor *tmp = cube_alloc(dev, &t->spec);
    if (!tmp || !cube_copy_into(dev, tmp, t, 0)) return done(tmp, false);
    int64_t st[BEXT_MAX_RANK];
    bxr_contiguous_strides(op->out.rank, op->out.shape, st);
    v = bxr_tensor_view(tmp, op->out.rank, op->out.shape, st, tmp->offset);
    bext_release(tmp);
    return v;
  }
  default:
    break;
  }
  if (!cube_check_dtypes(op)) return NULL;
  bext_tensor *out = new_out(op);
  if (!out) return NULL;
  switch (op->code) {
  case BXR_OP_FLIP: {
    uint32_t mask = 0;
    for (int i = 0; i < at->ndims; i++) mask |= 1u << at->dims[i];
    return done(out, cube_copy_into(dev, out, t, mask));
  }
  case BXR_OP_CAT: {
    int64_t pos = 0;
    bool ok = true;
    for (int k = 0; k < op->n_in && ok; k++) {
      ok = copy_into_part(dev, out, op->in[k], pos * out->strides[at->dim]);
      pos += op->in[k]->shape[at->dim];
    }
    return done(out, ok);
  }
  case BXR_OP_REPEAT_DIM: {
    bool ok = true;
    int64_t ext = t->shape[at->dim];
    for (int64_t r = 0; r < op->sc[0].i && ok; r++)
      ok = copy_into_part(dev, out, t, r * ext * out->strides[at->dim]);
    return done(out, ok);
  }
  case BXR_OP_SLICE_ASSIGN: {
    const bext_tensor *val = op->in[1];
    if (!cube_copy_into(dev, out, t, 0)) return done(out, false);
    int64_t off = 0;
    for (int d = 0; d < at->nranges; d++)
      if (val->shape[d] > 0) off += at->start[d] * out->strides[d];
    return done(out, copy_into_part(dev, out, val, off));
  }
  default:
    BXR_ASSERT(!"cube: not a layout op");
    return done(out, false);
  }
}
