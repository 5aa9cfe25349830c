/* nd_layout.c — NdArray layout ops.  swap_dims, permute, expand, slice and
 * narrow only move metadata (views sharing storage); reshape is a view of a
 * contiguous copy; slice_assign, cat, flip and repeat_dim copy element by
 * element with plain index math. */
#include <string.h>

#include "ndarray.h"

bext_tensor *bxnd_reshape(struct bxr_op *op) {
  bext_tensor *t = bxr_make_contiguous(bxr_op_take(op, 0));
  if (!t) return NULL;
  int64_t st[BEXT_MAX_RANK];
  bxr_contiguous_strides(op->out.rank, op->out.shape, st);
  bext_tensor *v = bxr_tensor_view(t, op->out.rank, op->out.shape, st, t->offset);
  bext_release(t);
  return v;
}

bext_tensor *bxnd_view_op(struct bxr_op *op) {
  const bext_tensor *t = op->in[0];
  int64_t st[BEXT_MAX_RANK];
  int64_t off = t->offset;
  memcpy(st, t->strides, sizeof st);
  switch (op->code) {
  case BXR_OP_SWAP_DIMS: {
    int a = op->at.dims[0], b = op->at.dims[1];
    st[a] = t->strides[b];
    st[b] = t->strides[a];
    break;
  }
  case BXR_OP_PERMUTE:
    for (int d = 0; d < t->rank; d++) st[d] = t->strides[op->at.dims[d]];
    break;
  case BXR_OP_EXPAND: BXR_ASSERT(bxr_broadcast_strides(t, op->out.rank, op->out.shape, st)); break;
  case BXR_OP_SLICE:
    for (int d = 0; d < op->at.nranges; d++)
      if (op->at.end[d] > op->at.start[d]) off += op->at.start[d] * t->strides[d];
    break;
  case BXR_OP_NARROW:
    if (op->sc[1].i > 0) off += op->sc[0].i * t->strides[op->at.dim];
    break;
  default: BXR_ASSERT(!"not a view op");
  }
  return bxr_tensor_view(t, op->out.rank, op->out.shape, st, off);
}

bext_tensor *bxnd_slice_assign(struct bxr_op *op) {
  if (!bxnd_contig_inputs(op)) return NULL;
  bext_tensor *out = bxnd_copy_of_input(op, 0);
  if (!out) return NULL;
  const bext_tensor *v = op->in[1];
  size_t es = bext_dtype_size(out->dtype);
  int64_t n = bxr_numel(v->rank, v->shape), idx[BEXT_MAX_RANK];
  const char *src = bxr_data(v);
  char *dst = bxr_data(out);
  for (int64_t i = 0; i < n; i++) {
    bxnd_unravel(i, v->rank, v->shape, idx);
    for (int d = 0; d < op->at.nranges; d++) idx[d] += op->at.start[d];
    memcpy(dst + bxnd_ravel(out->rank, out->shape, idx) * (int64_t)es, src + i * (int64_t)es, es);
  }
  return out;
}

bext_tensor *bxnd_cat(struct bxr_op *op) {
  if (!bxnd_contig_inputs(op)) return NULL;
  bext_tensor *out = bxr_op_new_output(op);
  if (!out) return NULL;
  size_t es = bext_dtype_size(out->dtype);
  char *dst = bxr_data(out);
  int64_t base = 0, idx[BEXT_MAX_RANK];
  for (int k = 0; k < op->n_in; k++) {
    const bext_tensor *t = op->in[k];
    int64_t n = bxr_numel(t->rank, t->shape);
    const char *src = bxr_data(t);
    for (int64_t i = 0; i < n; i++) {
      bxnd_unravel(i, t->rank, t->shape, idx);
      idx[op->at.dim] += base;
      memcpy(dst + bxnd_ravel(out->rank, out->shape, idx) * (int64_t)es, src + i * (int64_t)es, es);
    }
    base += t->shape[op->at.dim];
  }
  return out;
}

bext_tensor *bxnd_flip(struct bxr_op *op) {
  if (!bxnd_contig_inputs(op)) return NULL;
  bext_tensor *out = bxr_op_new_output(op);
  if (!out) return NULL;
  const bext_tensor *t = op->in[0];
  size_t es = bext_dtype_size(out->dtype);
  int64_t n = bxr_numel(t->rank, t->shape), idx[BEXT_MAX_RANK];
  const char *src = bxr_data(t);
  char *dst = bxr_data(out);
  for (int64_t i = 0; i < n; i++) {
    bxnd_unravel(i, t->rank, t->shape, idx);
    for (int k = 0; k < op->at.ndims; k++) {
      int d = op->at.dims[k];
      idx[d] = t->shape[d] - 1 - idx[d];
    }
    memcpy(dst + bxnd_ravel(t->rank, t->shape, idx) * (int64_t)es, src + i * (int64_t)es, es);
  }
  return out;
}

bext_tensor *bxnd_repeat_dim(struct bxr_op *op) {
  if (!bxnd_contig_inputs(op)) return NULL;
  bext_tensor *out = bxr_op_new_output(op);
  if (!out) return NULL;
  const bext_tensor *t = op->in[0];
  size_t es = bext_dtype_size(out->dtype);
  int64_t n = bxr_numel(out->rank, out->shape), idx[BEXT_MAX_RANK];
  const char *src = bxr_data(t);
  char *dst = bxr_data(out);
  for (int64_t i = 0; i < n; i++) {
    bxnd_unravel(i, out->rank, out->shape, idx);
    idx[op->at.dim] %= t->shape[op->at.dim];
    memcpy(dst + i * (int64_t)es, src + bxnd_ravel(t->rank, t->shape, idx) * (int64_t)es, es);
  }
  return out;
}
