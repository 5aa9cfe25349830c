/* flex_conv.c — block conversions between dtypes and compute
 * representations (see flex_conv.h).  The switch runs once per block, the
 * inner loops are plain and vectorize where the types allow. */
#include "flex_conv.h"

#include <math.h>
#include <string.h>

#include "flex_kern.h"

/* Element rules (f16/bf16 rounding, saturating float -> int) are
 * bxk_scalar.h's, through flex_kern.h. */

#define LOOP(expr) for (size_t i = 0; i < n; i++) { expr; }

void bxfx_load(void *dst, int r, const void *p, bext_dtype dt, int64_t s, size_t n) {
  const char *b = p;
  size_t es = bext_dtype_size(dt);
  if (bxfx_is_native(dt, r) && s == 1) { memcpy(dst, p, n * es); return; }
#define AT(T, i) (*(const T *)(b + (int64_t)(i) * s * (int64_t)sizeof(T)))
  switch (r) {
  case BXFX_R_F32: {
    float *o = dst;
    switch (dt) {
    case BEXT_F32: LOOP(o[i] = AT(float, i)) break;
    case BEXT_F16:
      if (s == 1) bxfx_kern()->f16_to_f32(p, o, n);
      else LOOP(o[i] = bxk_f16_to_f32(AT(uint16_t, i)))
      break;
    case BEXT_BF16:
      if (s == 1) bxfx_kern()->bf16_to_f32(p, o, n);
      else LOOP(o[i] = bxk_bf16_to_f32(AT(uint16_t, i)))
      break;
    case BEXT_F64: LOOP(o[i] = (float)AT(double, i)) break;
    case BEXT_I32: LOOP(o[i] = (float)(double)AT(int32_t, i)) break;
    case BEXT_I64: LOOP(o[i] = (float)(double)AT(int64_t, i)) break;
    case BEXT_BOOL: LOOP(o[i] = AT(uint8_t, i) != 0) break;
    default: LOOP(o[i] = (float)AT(uint8_t, i)) break;
    }
    break;
  }
  case BXFX_R_F64: {
    double *o = dst;
    switch (dt) {
    case BEXT_F64: LOOP(o[i] = AT(double, i)) break;
    case BEXT_F32: LOOP(o[i] = AT(float, i)) break;
    case BEXT_F16: LOOP(o[i] = bxk_f16_to_f32(AT(uint16_t, i))) break;
    case BEXT_BF16: LOOP(o[i] = bxk_bf16_to_f32(AT(uint16_t, i))) break;
    case BEXT_I32: LOOP(o[i] = AT(int32_t, i)) break;
    case BEXT_I64: LOOP(o[i] = (double)AT(int64_t, i)) break;
    case BEXT_BOOL: LOOP(o[i] = AT(uint8_t, i) != 0) break;
    default: LOOP(o[i] = AT(uint8_t, i)) break;
    }
    break;
  }
  case BXFX_R_I64: {
    int64_t *o = dst;
    switch (dt) {
    case BEXT_I64: LOOP(o[i] = AT(int64_t, i)) break;
    case BEXT_I32: LOOP(o[i] = AT(int32_t, i)) break;
    case BEXT_U8: LOOP(o[i] = AT(uint8_t, i)) break;
    case BEXT_BOOL: LOOP(o[i] = AT(uint8_t, i) != 0) break;   /* any nonzero byte is true (bxr_load_i64) */
    case BEXT_F32: LOOP(o[i] = bxk_f64_to_i64(AT(float, i))) break;
    case BEXT_F64: LOOP(o[i] = bxk_f64_to_i64(AT(double, i))) break;
    case BEXT_F16: LOOP(o[i] = bxk_f64_to_i64(bxk_f16_to_f32(AT(uint16_t, i)))) break;
    default: LOOP(o[i] = bxk_f64_to_i64(bxk_bf16_to_f32(AT(uint16_t, i)))) break;
    }
    break;
  }
  default: {
    uint8_t *o = dst;
    switch (dt) {
    case BEXT_U8: case BEXT_BOOL: LOOP(o[i] = AT(uint8_t, i) != 0) break;
    case BEXT_I32: LOOP(o[i] = AT(int32_t, i) != 0) break;
    case BEXT_I64: LOOP(o[i] = AT(int64_t, i) != 0) break;
    case BEXT_F32: LOOP(o[i] = AT(float, i) != 0) break;
    case BEXT_F64: LOOP(o[i] = AT(double, i) != 0) break;
    case BEXT_F16: LOOP(o[i] = bxk_f16_to_f32(AT(uint16_t, i)) != 0) break;
    default: LOOP(o[i] = bxk_bf16_to_f32(AT(uint16_t, i)) != 0) break;
    }
    break;
  }
  }
#undef AT
}

/* Stores from a float representation (value v as double) into any dtype. */
#define STORE_FLOATISH(get)                                                    \
  switch (dt) {                                                                \
  case BEXT_F32: { float *o = p; LOOP(o[i] = (float)(get)) break; }            \
  case BEXT_F64: { double *o = p; LOOP(o[i] = (get)) break; }                  \
  case BEXT_F16: { uint16_t *o = p; LOOP(o[i] = bxk_f32_to_f16((float)(get))) break; } \
  case BEXT_BF16: { uint16_t *o = p; LOOP(o[i] = bxk_f32_to_bf16((float)(get))) break; } \
  case BEXT_I32: { int32_t *o = p; LOOP(o[i] = bxk_f64_to_i32(get)) break; } \
  case BEXT_I64: { int64_t *o = p; LOOP(o[i] = bxk_f64_to_i64(get)) break; }          \
  case BEXT_U8: { uint8_t *o = p; LOOP(o[i] = bxk_f64_to_u8(get)) break; } \
  default: { uint8_t *o = p; LOOP(o[i] = (get) != 0) break; }                  \
  }

void bxfx_store(void *p, bext_dtype dt, const void *src, int r, size_t n) {
  if (bxfx_is_native(dt, r) && !(dt == BEXT_BOOL && r != BXFX_R_U8)) {
    memcpy(p, src, n * bxfx_repr_size(r));
    return;
  }
  switch (r) {
  case BXFX_R_F32: {
    const float *a = src;
    if (dt == BEXT_F16) { bxfx_kern()->f32_to_f16(a, p, n); return; }
    if (dt == BEXT_BF16) { bxfx_kern()->f32_to_bf16(a, p, n); return; }
    STORE_FLOATISH((double)a[i])
    break;
  }
  case BXFX_R_F64: {
    const double *a = src;
    STORE_FLOATISH(a[i])
    break;
  }
  case BXFX_R_I64: {
    const int64_t *a = src;
    switch (dt) {
    case BEXT_I64: { int64_t *o = p; LOOP(o[i] = a[i]) break; }
    case BEXT_I32: { int32_t *o = p; LOOP(o[i] = (int32_t)(uint32_t)(uint64_t)a[i]) break; }
    case BEXT_U8: { uint8_t *o = p; LOOP(o[i] = (uint8_t)(uint64_t)a[i]) break; }
    case BEXT_BOOL: { uint8_t *o = p; LOOP(o[i] = a[i] != 0) break; }
    default: STORE_FLOATISH((double)a[i]) break;
    }
    break;
  }
  default: {
    const uint8_t *a = src;
    switch (dt) {
    case BEXT_I64: { int64_t *o = p; LOOP(o[i] = a[i]) break; }
    case BEXT_I32: { int32_t *o = p; LOOP(o[i] = a[i]) break; }
    case BEXT_U8: case BEXT_BOOL: { uint8_t *o = p; LOOP(o[i] = a[i]) break; }
    default: STORE_FLOATISH((double)a[i]) break;
    }
    break;
  }
  }
}
