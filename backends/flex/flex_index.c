/* flex_index.c — gather, scatter_add, select and select_assign.
 *
 * Index values are data, so inference cannot check them: every index is
 * validated here (bxr_check_indices) before anything is written (an
 * in-place output is never left half-updated), and a bad one is reported
 * with its position. */
#include <string.h>

#include "flex_internal.h"

static int64_t index_at(const bext_tensor *idx, int64_t off) {
  const char *p = bxr_data(idx);
  return idx->dtype == BEXT_I32 ? ((const int32_t *)p)[off] : ((const int64_t *)p)[off];
}

/* dst += src for one element of dtype dt (ints wrap, halves via f32). */
static void add_elem(char *dst, const char *src, bext_dtype dt) {
  switch (dt) {
  case BEXT_F32: { float a, b; memcpy(&a, dst, 4); memcpy(&b, src, 4); a += b; memcpy(dst, &a, 4); } break;
  case BEXT_F64: { double a, b; memcpy(&a, dst, 8); memcpy(&b, src, 8); a += b; memcpy(dst, &a, 8); } break;
  case BEXT_F16: { uint16_t a, b; memcpy(&a, dst, 2); memcpy(&b, src, 2);
                   a = bxk_f32_to_f16(bxk_f16_to_f32(a) + bxk_f16_to_f32(b)); memcpy(dst, &a, 2); } break;
  case BEXT_BF16: { uint16_t a, b; memcpy(&a, dst, 2); memcpy(&b, src, 2);
                    a = bxk_f32_to_bf16(bxk_bf16_to_f32(a) + bxk_bf16_to_f32(b)); memcpy(dst, &a, 2); } break;
  case BEXT_I32: { uint32_t a, b; memcpy(&a, dst, 4); memcpy(&b, src, 4); a += b; memcpy(dst, &a, 4); } break;
  case BEXT_I64: { uint64_t a, b; memcpy(&a, dst, 8); memcpy(&b, src, 8); a += b; memcpy(dst, &a, 8); } break;
  case BEXT_U8: *(uint8_t *)dst = (uint8_t)(*(uint8_t *)dst + *(const uint8_t *)src); break;
  default: *(uint8_t *)dst = (uint8_t)((*(uint8_t *)dst | *(const uint8_t *)src) != 0); break;
  }
}

/* out = a fresh contiguous copy of in[0], or in[0] itself when unique. */
static bext_tensor *copy_of_input(struct bxr_op *op) {
  bext_tensor *t = op->in[0];
  bext_tensor *out = bxfx_output(op, 1);
  if (out && out != t) {
    int64_t cs[BEXT_MAX_RANK];
    bxr_contiguous_strides(t->rank, t->shape, cs);
    bxfx_copy_strided(bxr_data(out), cs, bxr_data(t), t->strides, t->rank, t->shape,
                      bext_dtype_size(t->dtype));
  }
  return out;
}

bext_tensor *bxfx_exec_index(struct bxr_op *op) {
  bext_tensor *t = op->in[0], *idx = op->in[1];
  const int dim = op->at.dim;
  const size_t es = bext_dtype_size(t->dtype);
  if (!bxr_check_indices(op)) return NULL;
  switch (op->code) {
  case BXR_OP_GATHER: {
    bext_tensor *out = bxr_op_new_output(op);
    if (!out) return NULL;
    int64_t ts[BEXT_MAX_RANK], os[BEXT_MAX_RANK];
    memcpy(ts, t->strides, sizeof ts);
    ts[dim] = 0;  /* the index supplies this coordinate */
    bxr_contiguous_strides(out->rank, out->shape, os);
    struct bxr_iter it;
    bxr_iter_init(&it, idx->rank, idx->shape, 3, idx->strides, ts, os);
    const char *src = bxr_data(t);
    char *dst = bxr_data(out);
    for (int64_t n = 0; n < it.numel; n++) {
      int64_t v = index_at(idx, it.off[0]);
      memcpy(dst + it.off[2] * (int64_t)es, src + (it.off[1] + v * t->strides[dim]) * (int64_t)es, es);
      bxr_iter_next(&it);
    }
    return out;
  }
  case BXR_OP_SCATTER_ADD: {
    bext_tensor *vals = op->in[2];
    bext_tensor *out = copy_of_input(op);
    if (!out) return NULL;
    int64_t os[BEXT_MAX_RANK];
    memcpy(os, out->strides, sizeof os);
    os[dim] = 0;
    struct bxr_iter it;
    bxr_iter_init(&it, idx->rank, idx->shape, 3, idx->strides, vals->strides, os);
    char *dst = bxr_data(out);
    const char *src = bxr_data(vals);
    for (int64_t n = 0; n < it.numel; n++) {
      int64_t v = index_at(idx, it.off[0]);
      add_elem(dst + (it.off[2] + v * out->strides[dim]) * (int64_t)es, src + it.off[1] * (int64_t)es, t->dtype);
      bxr_iter_next(&it);
    }
    return out;
  }
  case BXR_OP_SELECT: {
    bext_tensor *out = bxr_op_new_output(op);
    if (!out) return NULL;
    int64_t shape[BEXT_MAX_RANK], os[BEXT_MAX_RANK];
    memcpy(shape, t->shape, sizeof shape);
    shape[dim] = 1;
    bxr_contiguous_strides(out->rank, out->shape, os);
    for (int64_t i = 0; i < idx->shape[0]; i++) {
      int64_t v = index_at(idx, i * idx->strides[0]);
      bxfx_copy_strided((char *)bxr_data(out) + i * os[dim] * (int64_t)es, os,
                        (const char *)bxr_data(t) + v * t->strides[dim] * (int64_t)es, t->strides,
                        t->rank, shape, es);
    }
    return out;
  }
  default: { /* SELECT_ASSIGN: out[.., idx[i], ..] += values[.., i, ..] */
    bext_tensor *vals = op->in[2];
    bext_tensor *out = copy_of_input(op);
    if (!out) return NULL;
    int64_t shape[BEXT_MAX_RANK];
    memcpy(shape, t->shape, sizeof shape);
    shape[dim] = 1;
    for (int64_t i = 0; i < idx->shape[0]; i++) {
      int64_t v = index_at(idx, i * idx->strides[0]);
      char *dst = (char *)bxr_data(out) + v * out->strides[dim] * (int64_t)es;
      const char *src = (const char *)bxr_data(vals) + i * vals->strides[dim] * (int64_t)es;
      struct bxr_iter it;
      bxr_iter_init(&it, t->rank, shape, 2, out->strides, vals->strides);
      for (int64_t n = 0; n < it.numel; n++) {
        add_elem(dst + it.off[0] * (int64_t)es, src + it.off[1] * (int64_t)es, t->dtype);
        bxr_iter_next(&it);
      }
    }
    return out;
  }
  }
}
