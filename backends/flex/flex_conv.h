/* flex_conv.h — block conversions between storage dtypes and the few
 * "compute representations" Flex kernels work in.
 *
 * Every op computes in one representation: f32 for f32/f16/bf16 (half
 * types are widened in blocks, computed in f32 and rounded back to
 * nearest even, as the reference does), f64 for f64, i64 for the integer
 * types (stores wrap, so i32/u8 arithmetic wraps exactly as if done in
 * the narrow type), u8 0/1 for bool.  Contiguous same-representation
 * operands are used in place; everything else is gathered block by block
 * into a small stack buffer. */
#ifndef BXFX_CONV_H
#define BXFX_CONV_H

#include <stddef.h>
#include <stdint.h>

#include "bext/bext.h"

enum bxfx_repr { BXFX_R_F32, BXFX_R_F64, BXFX_R_I64, BXFX_R_U8 };

/* The representation ops on dtype dt compute in. */
static inline int bxfx_repr_of(bext_dtype dt) {
  switch (dt) {
  case BEXT_F64: return BXFX_R_F64;
  case BEXT_F32: case BEXT_F16: case BEXT_BF16: return BXFX_R_F32;
  case BEXT_BOOL: return BXFX_R_U8;
  default: return BXFX_R_I64;
  }
}
static inline size_t bxfx_repr_size(int r) {
  return r == BXFX_R_F32 ? 4 : r == BXFX_R_U8 ? 1 : 8;
}
/* True when dtype dt is stored exactly as representation r (no conversion). */
static inline int bxfx_is_native(bext_dtype dt, int r) {
  return (dt == BEXT_F32 && r == BXFX_R_F32) || (dt == BEXT_F64 && r == BXFX_R_F64) ||
         (dt == BEXT_I64 && r == BXFX_R_I64) || ((dt == BEXT_BOOL || dt == BEXT_U8) && r == BXFX_R_U8);
}

/* Loads n elements of dt from p (stride s elements, may be 0 or negative)
 * into the representation-r array dst.  Floats to ints: NaN 0, truncate,
 * saturate; anything to u8-bool: x != 0. */
void bxfx_load(void *dst, int r, const void *p, bext_dtype dt, int64_t s, size_t n);
/* Stores n representation-r values into contiguous dt storage at p: ints
 * wrap from i64 and saturate from floats; halves round to nearest even. */
void bxfx_store(void *p, bext_dtype dt, const void *src, int r, size_t n);

#endif
