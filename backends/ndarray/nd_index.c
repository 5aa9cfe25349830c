/* nd_index.c — NdArray indexing ops: gather, scatter_add, select,
 * select_assign, mask_where, mask_fill.  Each index op range-checks its
 * index values (bxr_check_indices) before its kernel runs. */
#include <string.h>

#include "ndarray.h"

/* dst[j] += src[i] for one element, wrapping for ints. */
static void add_elem(void *dst, int64_t j, const void *src, int64_t i, bext_dtype dt) {
  if (bext_dtype_kind(dt) == BEXT_KIND_FLOAT)
    bxr_store_f64(dst, dt, j, bxr_load_f64(dst, dt, j) + bxr_load_f64(src, dt, i));
  else
    bxr_store_i64(dst, dt, j, (int64_t)((uint64_t)bxr_load_i64(dst, dt, j) + (uint64_t)bxr_load_i64(src, dt, i)));
}

bext_tensor *bxnd_gather(struct bxr_op *op) {
  if (!bxr_check_indices(op) || !bxnd_contig_inputs(op)) return NULL;
  bext_tensor *out = bxr_op_new_output(op);
  if (!out) return NULL;
  const bext_tensor *t = op->in[0], *ix = op->in[1];
  size_t es = bext_dtype_size(t->dtype);
  int64_t n = bxr_numel(out->rank, out->shape), idx[BEXT_MAX_RANK];
  for (int64_t i = 0; i < n; i++) {
    bxnd_unravel(i, out->rank, out->shape, idx);
    idx[op->at.dim] = bxr_load_i64(bxr_data(ix), ix->dtype, i);
    memcpy((char *)bxr_data(out) + i * (int64_t)es,
           (char *)bxr_data(t) + bxnd_ravel(t->rank, t->shape, idx) * (int64_t)es, es);
  }
  return out;
}

bext_tensor *bxnd_scatter_add(struct bxr_op *op) {
  if (!bxr_check_indices(op) || !bxnd_contig_inputs(op)) return NULL;
  bext_tensor *out = bxnd_copy_of_input(op, 0);
  if (!out) return NULL;
  const bext_tensor *ix = op->in[1], *v = op->in[2];
  int64_t n = bxr_numel(ix->rank, ix->shape), idx[BEXT_MAX_RANK];
  for (int64_t i = 0; i < n; i++) {
    bxnd_unravel(i, ix->rank, ix->shape, idx);
    idx[op->at.dim] = bxr_load_i64(bxr_data(ix), ix->dtype, i);
    add_elem(bxr_data(out), bxnd_ravel(out->rank, out->shape, idx), bxr_data(v), i, out->dtype);
  }
  return out;
}

bext_tensor *bxnd_select(struct bxr_op *op) {
  if (!bxr_check_indices(op) || !bxnd_contig_inputs(op)) return NULL;
  bext_tensor *out = bxr_op_new_output(op);
  if (!out) return NULL;
  const bext_tensor *t = op->in[0], *ix = op->in[1];
  size_t es = bext_dtype_size(t->dtype);
  int64_t n = bxr_numel(out->rank, out->shape), idx[BEXT_MAX_RANK];
  for (int64_t i = 0; i < n; i++) {
    bxnd_unravel(i, out->rank, out->shape, idx);
    idx[op->at.dim] = bxr_load_i64(bxr_data(ix), ix->dtype, idx[op->at.dim]);
    memcpy((char *)bxr_data(out) + i * (int64_t)es,
           (char *)bxr_data(t) + bxnd_ravel(t->rank, t->shape, idx) * (int64_t)es, es);
  }
  return out;
}

bext_tensor *bxnd_select_assign(struct bxr_op *op) {
  if (!bxr_check_indices(op) || !bxnd_contig_inputs(op)) return NULL;
  bext_tensor *out = bxnd_copy_of_input(op, 0);
  if (!out) return NULL;
  const bext_tensor *ix = op->in[1], *v = op->in[2];
  int64_t n = bxr_numel(v->rank, v->shape), idx[BEXT_MAX_RANK];
  for (int64_t i = 0; i < n; i++) {
    bxnd_unravel(i, v->rank, v->shape, idx);
    idx[op->at.dim] = bxr_load_i64(bxr_data(ix), ix->dtype, idx[op->at.dim]);
    add_elem(bxr_data(out), bxnd_ravel(out->rank, out->shape, idx), bxr_data(v), i, out->dtype);
  }
  return out;
}

bext_tensor *bxnd_mask(struct bxr_op *op) {
  if (!bxnd_contig_inputs(op)) return NULL;
  bext_tensor *out = bxr_op_new_output(op);
  if (!out) return NULL;
  const bext_tensor *t = op->in[0], *m = op->in[1];
  bool where = op->code == BXR_OP_MASK_WHERE;
  int64_t st[3][BEXT_MAX_RANK];
  BXR_ASSERT(bxr_broadcast_strides(t, out->rank, out->shape, st[0]));
  BXR_ASSERT(bxr_broadcast_strides(m, out->rank, out->shape, st[1]));
  if (where) BXR_ASSERT(bxr_broadcast_strides(op->in[2], out->rank, out->shape, st[2]));
  else memset(st[2], 0, sizeof st[2]);
  size_t es = bext_dtype_size(out->dtype);
  /* mask_fill: the scalar converted to the dtype once */
  char fill[8];
  bxr_store_f64(fill, out->dtype, 0, op->sc[0].f);
  const char *vsrc = where ? bxr_data(op->in[2]) : fill;
  struct bxr_iter it;
  bxr_iter_init(&it, out->rank, out->shape, 3, st[0], st[1], st[2]);
  char *dst = bxr_data(out);
  const char *tsrc = bxr_data(t);
  const uint8_t *msrc = bxr_data(m);
  for (int64_t i = 0; i < it.numel; i++) {
    const char *s = msrc[it.off[1]] ? vsrc + it.off[2] * (int64_t)es : tsrc + it.off[0] * (int64_t)es;
    memcpy(dst + i * (int64_t)es, s, es);
    bxr_iter_next(&it);
  }
  return out;
}
