/* bxk_scalar.h — the scalar semantics of the kernel IR's core ops, once.
 *
 * Static inline C (BXK_SCALAR_FN), no dependencies beyond libm, so it can be included by
 * the IR's evaluator (kir_eval.c), by CPU kernels (Flex), and pasted into
 * generated CUDA/HIP C; the LLVM lowering (runtime/llvm) is tested element
 * by element against it (tests/kir/test_llvm_jit.c).
 *
 * The rules are the runtime's (bext.h "elementwise" and bext_cast, as the
 * NdArray reference implements them, independently, in
 * backends/ndarray/nd_elem.c).  Flex and the runtime's own conversions
 * (runtime/src/dtype.c, which NdArray's loads and stores use too, so
 * test_dtypes.c checks those against hand-computed values) call it:
 *   - integers wrap on overflow (two's complement); x/0 and x%0 give 0;
 *     signed x/-1 is the wrapping negation and x%-1 is 0 (so INT_MIN/-1
 *     does not trap);
 *   - rem is the floored modulus, result has the divisor's sign (Python,
 *     Burn), for floats and ints;
 *   - max/min: NaN wins (if either operand is NaN the result is NaN);
 *     otherwise a > b ? a : b (so max(-0, +0) is +0 and max(+0, -0) is -0,
 *     as the reference's expression gives);
 *   - relu(x) is x < 0 ? 0 : x (so relu(-0) is -0 and NaN stays NaN);
 *   - sign(x): 1, -1, or x itself (0, -0, NaN); ints -1/0/1;
 *   - integer pow (the IR's pow on ints): wrapping repeated squaring; a
 *     negative exponent gives 0 except for the bases 1 and -1 (1 / a^|e|
 *     truncated);
 *   - round: half to even; shifts take the amount modulo the bit width;
 *     shr is arithmetic for signed types, logical for unsigned;
 *   - casts: float->int NaN->0, truncate toward zero, saturate to the
 *     target range; int->int wraps; ->bool is x != 0; bool->x is 0 or 1;
 *     int->f16/bf16 and f64->f16/bf16 go through f32 (as the runtime's
 *     stores do); f16 rounds to nearest even; bf16 is the top half of an
 *     f32, rounded to nearest even on the bits, NaN made quiet;
 *   - f16 and bf16 arithmetic is f32 arithmetic rounded to the type after
 *     every op (comparisons compare the f32 values);
 *   - transcendental functions (exp log sin erf ...) are libm's for the
 *     type; their last-bit results are not part of this contract.
 */
#ifndef BXK_SCALAR_H
#define BXK_SCALAR_H

/* One qualifier for every function, so the same text compiles as CUDA
 * device code when the CUDA emitter (runtime/cuda) pastes it in. */
#if defined(__CUDACC__) || defined(__CUDACC_RTC__) || defined(__HIPCC_RTC__)
#define BXK_SCALAR_FN static __device__ __forceinline__
#else
#define BXK_SCALAR_FN static inline
#endif

/* NVRTC and hiprtc have no libc headers: the CUDA/HIP prelude
 * (runtime/cuda/bxcu_emit.c) defines the fixed-width types and limits;
 * device math and memcpy are built-ins of both. */
#if !defined(__CUDACC_RTC__) && !defined(__HIPCC_RTC__)
#include <math.h>
#include <stdint.h>
#include <string.h>
#endif

/* ---------------------------------------------------------------- f16 */

BXK_SCALAR_FN uint32_t bxk_f2u_(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
BXK_SCALAR_FN float bxk_u2f_(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

BXK_SCALAR_FN float bxk_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1f) return bxk_u2f_(sign | 0x7f800000u | (m << 13));        /* inf, NaN */
  if (e == 0) return (sign ? -1.0f : 1.0f) * (float)m * (1.0f / 16777216.0f); /* 2^-24 */
  return bxk_u2f_(sign | ((e + 112) << 23) | (m << 13));
}

/* Round to nearest even; NaN stays a quiet NaN with its top payload bits. */
BXK_SCALAR_FN uint16_t bxk_f32_to_f16(float f) {
  uint32_t x = bxk_f2u_(f);
  uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) {
    if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    return (uint16_t)(sign | 0x7c00u);
  }
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);  /* rounds to inf */
  if (ax < 0x38800000u)                                      /* subnormal: exact scale, RNE */
    return (uint16_t)(sign | (uint32_t)nearbyintf(bxk_u2f_(ax) * 16777216.0f));
  uint32_t h = (((ax >> 23) - 112) << 10) | ((ax & 0x7fffffu) >> 13);
  uint32_t r = ax & 0x1fffu;
  if (r > 0x1000u || (r == 0x1000u && (h & 1u))) h++;       /* carry into the exponent is right */
  return (uint16_t)(sign | h);
}

/* The f16 value nearest to x (as a float): how f16 arithmetic rounds. */
BXK_SCALAR_FN float bxk_round_f16(float x) { return bxk_f16_to_f32(bxk_f32_to_f16(x)); }

/* --------------------------------------------------------------- bf16 */

BXK_SCALAR_FN float bxk_bf16_to_f32(uint16_t h) { return bxk_u2f_((uint32_t)h << 16); }

/* Round to nearest even on the bits (a carry into the exponent is right,
 * and overflows to inf); NaN stays NaN, made quiet. */
BXK_SCALAR_FN uint16_t bxk_f32_to_bf16(float f) {
  uint32_t x = bxk_f2u_(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

/* The bf16 value nearest to x (as a float): how bf16 arithmetic rounds. */
BXK_SCALAR_FN float bxk_round_bf16(float x) { return bxk_bf16_to_f32(bxk_f32_to_bf16(x)); }

/* -------------------------------------------------------------- floats */

#define BXK_FLOAT_OPS_(T, S, FMOD, NEARBY)                                        \
  BXK_SCALAR_FN T bxk_rem_##S(T a, T b) {                                        \
    T r = FMOD(a, b);                                                            \
    if (r != 0 && ((r < 0) != (b < 0))) r += b;                                  \
    return r;                                                                    \
  }                                                                              \
  BXK_SCALAR_FN T bxk_max_##S(T a, T b) { return (a > b || a != a) ? a : b; }    \
  BXK_SCALAR_FN T bxk_min_##S(T a, T b) { return (a < b || a != a) ? a : b; }    \
  BXK_SCALAR_FN T bxk_sign_##S(T x) { return x > 0 ? (T)1 : x < 0 ? (T)-1 : x; } \
  BXK_SCALAR_FN T bxk_relu_##S(T x) { return x < 0 ? (T)0 : x; }                \
  BXK_SCALAR_FN T bxk_round_##S(T x) { return NEARBY(x); }

BXK_FLOAT_OPS_(float, f32, fmodf, nearbyintf)
BXK_FLOAT_OPS_(double, f64, fmod, nearbyint)
#undef BXK_FLOAT_OPS_

/* ---------------------------------------------------------------- ints */
/* T: the type, U: its unsigned twin, S: suffix.  Shared rows first, then
 * the rows that differ between signed and unsigned types. */
#define BXK_INT_COMMON_(T, U, S, BITS)                                            \
  BXK_SCALAR_FN T bxk_add_##S(T a, T b) { return (T)(U)((U)a + (U)b); }          \
  BXK_SCALAR_FN T bxk_sub_##S(T a, T b) { return (T)(U)((U)a - (U)b); }          \
  BXK_SCALAR_FN T bxk_mul_##S(T a, T b) { return (T)(U)((U)a * (U)b); }          \
  BXK_SCALAR_FN T bxk_neg_##S(T a) { return (T)(U)((U)0 - (U)a); }               \
  BXK_SCALAR_FN T bxk_max_##S(T a, T b) { return a > b ? a : b; }                \
  BXK_SCALAR_FN T bxk_min_##S(T a, T b) { return a < b ? a : b; }                \
  BXK_SCALAR_FN T bxk_shl_##S(T a, T b) { return (T)(U)((U)a << ((U)b & (BITS - 1))); }

#define BXK_INT_SIGNED_(T, U, S, BITS)                                            \
  BXK_INT_COMMON_(T, U, S, BITS)                                                 \
  BXK_SCALAR_FN T bxk_div_##S(T a, T b) {                                        \
    if (b == 0) return 0;                                                        \
    if (b == -1) return bxk_neg_##S(a); /* INT_MIN / -1 wraps */                 \
    return (T)(a / b);                                                           \
  }                                                                              \
  BXK_SCALAR_FN T bxk_rem_##S(T a, T b) {                                        \
    if (b == 0 || b == -1) return 0;                                             \
    T r = (T)(a % b);                                                            \
    if (r != 0 && ((r < 0) != (b < 0))) r = (T)(r + b);                          \
    return r;                                                                    \
  }                                                                              \
  BXK_SCALAR_FN T bxk_abs_##S(T a) { return a < 0 ? bxk_neg_##S(a) : a; }        \
  BXK_SCALAR_FN T bxk_sign_##S(T a) { return a > 0 ? 1 : a < 0 ? -1 : 0; }       \
  BXK_SCALAR_FN T bxk_relu_##S(T a) { return a < 0 ? 0 : a; }                    \
  BXK_SCALAR_FN T bxk_pow_##S(T a, T e) {                                       \
    if (e < 0) return a == 1 ? 1 : a == -1 ? ((e & 1) ? -1 : 1) : 0;             \
    T r = 1;                                                                     \
    while (e) {                                                                  \
      if (e & 1) r = bxk_mul_##S(r, a);                                          \
      a = bxk_mul_##S(a, a);                                                     \
      e = (T)(e >> 1);                                                           \
    }                                                                            \
    return r;                                                                    \
  }                                                                              \
  BXK_SCALAR_FN T bxk_shr_##S(T a, T b) { /* arithmetic, without C's UB */       \
    unsigned n = (unsigned)((U)b & (BITS - 1));                                  \
    return a < 0 ? (T)~(U)(~(U)a >> n) : (T)((U)a >> n);                         \
  }

#define BXK_INT_UNSIGNED_(T, S, BITS)                                             \
  BXK_INT_COMMON_(T, T, S, BITS)                                                 \
  BXK_SCALAR_FN T bxk_div_##S(T a, T b) { return b == 0 ? 0 : (T)(a / b); }      \
  BXK_SCALAR_FN T bxk_rem_##S(T a, T b) { return b == 0 ? 0 : (T)(a % b); }      \
  BXK_SCALAR_FN T bxk_pow_##S(T a, T e) {                                       \
    T r = 1;                                                                     \
    while (e) {                                                                  \
      if (e & 1) r = bxk_mul_##S(r, a);                                          \
      a = bxk_mul_##S(a, a);                                                     \
      e = (T)(e >> 1);                                                           \
    }                                                                            \
    return r;                                                                    \
  }                                                                              \
  BXK_SCALAR_FN T bxk_abs_##S(T a) { return a; }                                 \
  BXK_SCALAR_FN T bxk_sign_##S(T a) { return a > 0 ? 1 : 0; }                    \
  BXK_SCALAR_FN T bxk_shr_##S(T a, T b) { return (T)(a >> (b & (BITS - 1))); }

BXK_INT_SIGNED_(int32_t, uint32_t, i32, 32)
BXK_INT_SIGNED_(int64_t, uint64_t, i64, 64)
BXK_INT_UNSIGNED_(uint32_t, u32, 32)
BXK_INT_UNSIGNED_(uint8_t, u8, 8)
#undef BXK_INT_COMMON_
#undef BXK_INT_SIGNED_
#undef BXK_INT_UNSIGNED_

/* --------------------------------------------------------------- casts */

/* float -> int: NaN -> 0, truncate toward zero, saturate.  Doubles hold
 * every f32/f16 value exactly, so one set serves all float sources.  The
 * bounds are compared before truncating: a double at or past a bound
 * saturates either way (those at 2^52 and above are integers already), and
 * the C conversion truncates the rest.  No trunc() call: clang does not
 * inline it for baseline x86-64, and these run in Flex's conversion loops. */
BXK_SCALAR_FN int64_t bxk_f64_to_i64(double v) {
  if (v != v) return 0;
  if (v >= 9223372036854775807.0) return INT64_MAX; /* 2^63 and above */
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)v;
}
BXK_SCALAR_FN int32_t bxk_f64_to_i32(double v) {
  if (v != v) return 0;
  return v >= 2147483647.0 ? INT32_MAX : v <= -2147483648.0 ? INT32_MIN : (int32_t)v;
}
BXK_SCALAR_FN uint32_t bxk_f64_to_u32(double v) {
  if (v != v) return 0;
  return v >= 4294967295.0 ? UINT32_MAX : v <= 0 ? 0 : (uint32_t)v;
}
BXK_SCALAR_FN uint8_t bxk_f64_to_u8(double v) {
  if (v != v) return 0;
  return v >= 255.0 ? 255 : v <= 0 ? 0 : (uint8_t)v;
}

/* int -> f16 and f64 -> f16 round through f32 (the runtime's stores do). */
BXK_SCALAR_FN uint16_t bxk_i64_to_f16(int64_t v) { return bxk_f32_to_f16((float)v); }
BXK_SCALAR_FN uint16_t bxk_u64_to_f16(uint64_t v) { return bxk_f32_to_f16((float)v); }
BXK_SCALAR_FN uint16_t bxk_f64_to_f16(double v) { return bxk_f32_to_f16((float)v); }
/* The same for bf16. */
BXK_SCALAR_FN uint16_t bxk_i64_to_bf16(int64_t v) { return bxk_f32_to_bf16((float)v); }
BXK_SCALAR_FN uint16_t bxk_u64_to_bf16(uint64_t v) { return bxk_f32_to_bf16((float)v); }
BXK_SCALAR_FN uint16_t bxk_f64_to_bf16(double v) { return bxk_f32_to_bf16((float)v); }

#endif
