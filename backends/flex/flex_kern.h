/* flex_kern.h — the Flex backend's vectorized building blocks on raw
 * contiguous arrays.
 *
 * The same bodies (flex_kern_body.h) are compiled twice: once for
 * AVX2+FMA+F16C (flex_kern_avx2.c; transcendentals through glibc's libmvec
 * 8-lane entry points) and once for the baseline ISA (flex_kern_gen.c;
 * scalar libm).  bxfx_kern() picks one table per process from CPUID, so
 * libbext needs no per-file compile flags and still runs on any x86-64. */
#ifndef BXFX_KERN_H
#define BXFX_KERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The ops' scalar semantics (conversions, rem, max/min, ...), once: the
 * kernels' scalar paths call it, and the vector forms must agree with it
 * (test_flex_blocks.c checks they do). */
#include "bxk_scalar.h"

/* Ops of the integer row reductions (red_i32 / red_i64). */
enum { BXFX_RED_SUM, BXFX_RED_PROD, BXFX_RED_MAX, BXFX_RED_MIN };

/* Flags of the extreme kernels. */
enum { BXFX_EXT_MAX = 1, BXFX_EXT_VALUE = 2 };

/* The largest |exponent| powi_f32 takes; beyond, pow. */
#define BXFX_POWI_MAX 64

/* Binary f32 kernels: o[i] = a[i] OP b[i], with mode saying which operand
 * is a broadcast scalar (read at index 0). */
enum { BXFX_VV = 0, BXFX_SV = 1, BXFX_VS = 2 };
#define BXFX_BIN_LIST(X) X(add) X(sub) X(mul) X(div) X(max) X(min)
enum {
#define X(n) BXFX_BIN_##n,
  BXFX_BIN_LIST(X)
#undef X
  BXFX_BIN_COUNT
};
/* The half types of the fused kernels (bin_half's first index). */
enum { BXFX_H_F16, BXFX_H_BF16, BXFX_H_COUNT };
/* Unary f32 kernels o[i] = f(a[i]); o may equal a (in place). */
#define BXFX_UN_LIST(X) X(exp) X(log) X(log1p) X(sin) X(cos) X(tanh) X(erf) \
  X(sigmoid) X(sqrt) X(rsqrt) X(neg) X(abs) X(relu) X(recip) X(floor) X(ceil) \
  X(round) X(sign)
enum {
#define X(n) BXFX_UN_##n,
  BXFX_UN_LIST(X)
#undef X
  BXFX_UN_COUNT
};

/* Unary f64 kernels o[i] = f(a[i]); o may equal a.  Transcendentals
 * (exp .. erf, sigmoid) are libmvec's 4-lane forms in the AVX2 table,
 * libm's in the generic one (their last bits are not part of the ops'
 * contract, bxk_scalar.h); sqrt .. round are bit for bit bxk_scalar.h's
 * rule, 4 lanes in the AVX2 table, scalar loops in the generic one. */
#define BXFX_UND_LIST(X) X(exp) X(log) X(log1p) X(sin) X(cos) X(tanh) X(erf) \
  X(sigmoid) X(sqrt) X(rsqrt) X(recip) X(floor) X(ceil) X(round)
enum {
#define X(n) BXFX_UND_##n,
  BXFX_UND_LIST(X)
#undef X
  BXFX_UND_COUNT
};

/* f32 comparisons o[i] = a[i] OP b[i] as 0/1 bytes (same modes). */
#define BXFX_CMP_LIST(X) X(eq) X(ne) X(gt) X(ge) X(lt) X(le)
enum {
#define X(n) BXFX_CMP_##n,
  BXFX_CMP_LIST(X)
#undef X
  BXFX_CMP_COUNT
};

/* Native-width i32 ops (bxk_scalar.h's i32 rules: wrapping in 32 bits is
 * the i64 computation stored back to i32, for operands and scalars that
 * are i32 values). */
#define BXFX_IOP_LIST(X) X(add) X(sub) X(mul) X(div) X(rem) X(max) X(min) X(pow)
enum {
#define X(n) BXFX_IOP_##n,
  BXFX_IOP_LIST(X)
#undef X
  BXFX_IOP_COUNT
};
#define BXFX_IUN_LIST(X) X(neg) X(abs) X(relu) X(sign) X(clamp)
enum {
#define X(n) BXFX_IUN_##n,
  BXFX_IUN_LIST(X)
#undef X
  BXFX_IUN_COUNT
};

/* Signed division by an invariant d as a multiply-high and shifts
 * (Hacker's Delight 10-1, as libdivide does), for W = 32 or 64 bits: for
 * 2 <= |d| < 2^(W-1), bxfx_magic_div_i64(x, d, bxfx_magic(d, 64)) and
 * bxfx_magic_div_i32(x, d, bxfx_magic(d, 32)) are x / d truncated, for
 * every x.  m is the least 2^(W+s) / |d| rounded up that makes the
 * quotient exact (the loop finds the smallest such s), taken as a W-bit
 * signed number and negated for d < 0.  The arithmetic is 64-bit for
 * both widths: at W = 32 nothing wraps. */
struct bxfx_magic {
  int64_t m;
  int s;
};
static inline struct bxfx_magic bxfx_magic(int64_t d, int w) {
  const uint64_t top = 1ull << (w - 1);
  const uint64_t ad = d < 0 ? 0 - (uint64_t)d : (uint64_t)d;
  const uint64_t t = top + (d < 0);
  const uint64_t anc = t - 1 - t % ad;   /* |nc|, the largest dividend with nc % d == d - 1 */
  uint64_t q1 = top / anc, r1 = top - q1 * anc, q2 = top / ad, r2 = top - q2 * ad, delta;
  int p = w - 1;
  do {
    p++;
    q1 *= 2; r1 *= 2;
    if (r1 >= anc) { q1++; r1 -= anc; }
    q2 *= 2; r2 *= 2;
    if (r2 >= ad) { q2++; r2 -= ad; }
    delta = ad - r2;
  } while (q1 < delta || (q1 == delta && r1 == 0));
  uint64_t m = q2 + 1;
  if (d < 0) m = 0 - m;
  struct bxfx_magic mg = { w == 32 ? (int64_t)(int32_t)(uint32_t)m : (int64_t)m, p - w };
  return mg;
}
static inline int64_t bxfx_magic_div_i64(int64_t x, int64_t d, struct bxfx_magic mg) {
  int64_t q = (int64_t)(((__int128)x * mg.m) >> 64);
  if (d > 0 && mg.m < 0) q = (int64_t)((uint64_t)q + (uint64_t)x);
  else if (d < 0 && mg.m > 0) q = (int64_t)((uint64_t)q - (uint64_t)x);
  q >>= mg.s;   /* arithmetic (GCC and Clang define it) */
  return q + (int64_t)((uint64_t)q >> 63);
}
static inline int32_t bxfx_magic_div_i32(int32_t x, int32_t d, struct bxfx_magic mg) {
  int32_t q = (int32_t)((x * mg.m) >> 32);
  if (d > 0 && mg.m < 0) q = (int32_t)((uint32_t)q + (uint32_t)x);
  else if (d < 0 && mg.m > 0) q = (int32_t)((uint32_t)q - (uint32_t)x);
  q >>= mg.s;
  return q + (int32_t)((uint32_t)q >> 31);
}

/* Bool ops on 0/1 bytes (bext.h's representation: every bool byte is 0
 * or 1, so the bitwise forms are the logical ones). */
#define BXFX_BOP_LIST(X) X(and) X(or) X(xor) X(eq) X(ne) X(not)
enum {
#define X(n) BXFX_BOP_##n,
  BXFX_BOP_LIST(X)
#undef X
  BXFX_BOP_COUNT
};

typedef void (*bxfx_bin_f32_fn)(const float *a, const float *b, float *o, size_t n, int mode);
typedef void (*bxfx_un_f32_fn)(const float *a, float *o, size_t n);

struct bxfx_kernels {
  const char *isa;                           /* "avx2" or "generic" */
  bxfx_bin_f32_fn bin[BXFX_BIN_COUNT];
  /* o[0..bytes) = s[0..bytes) with non-temporal stores where o is
   * aligned (plain ones for its head and tail): a block computed in cache
   * copied out to an output too large to stay there.  Unfenced: see
   * bxfx_stream_fence (flex_internal.h). */
  void (*stream_out)(void *o, const void *s, size_t bytes);
  /* o[0..bytes) = pat repeated from o (byte j is byte j % 8 of pat: an
   * element replicated to 8 bytes), streamed past the caches when stream
   * (unfenced, as stream_out). */
  void (*fill8)(void *o, size_t bytes, uint64_t pat, bool stream);
  bxfx_un_f32_fn un[BXFX_UN_COUNT];
  void (*cmp[BXFX_CMP_COUNT])(const float *a, const float *b, uint8_t *o, size_t n, int mode);
  /* i32 o[i] = a[i] OP b[i] (BXFX_IOP_*), mode BXFX_VV or BXFX_VS; unary
   * i32 (BXFX_IUN_*; clamp to [lo, hi], lo <= hi not required: x < lo
   * first, as the reference tests). */
  void (*bin_i32)(int op, const int32_t *a, const int32_t *b, int32_t *o, size_t n, int mode);
  void (*bin_i64)(int op, const int64_t *a, const int64_t *b, int64_t *o, size_t n, int mode);
  void (*un_i32)(int op, const int32_t *a, int32_t *o, size_t n, int32_t lo, int32_t hi);
  void (*un_i64)(int op, const int64_t *a, int64_t *o, size_t n, int64_t lo, int64_t hi);
  /* i64 o[i] = bxk_pow_i64(a[i], b[i]) (b[0] for BXFX_VS), the steps of
   * square-and-multiply in lanes. */
  void (*pow_i64)(const int64_t *a, const int64_t *b, int64_t *o, size_t n, int mode);
  /* bool o[i] = a[i] OP b[i] (BXFX_BOP_*; not reads a only), contiguous. */
  void (*bop)(int op, const uint8_t *a, const uint8_t *b, uint8_t *o, size_t n);
  /* o[i] = m[i] ? v[i] : t[i] (v[0] for all i when vs) as es-byte elements
   * (1, 2, 4, 8), contiguous; o may equal t. */
  void (*mask_sel)(size_t es, const void *t, const uint8_t *m, const void *v, void *o, size_t n, bool vs);
  /* i64 o[i] = a[i] / d (truncated) or, with rem, the floored a[i] % d,
   * bxk_div_i64 / bxk_rem_i64 for any d: a multiply by d's magic number. */
  void (*divs_i64)(const int64_t *a, int64_t d, int64_t *o, size_t n, bool rem);
  /* Comparisons (BXFX_CMP_*) of i32, i64 and f64 as 0/1 bytes, mode
   * BXFX_VV or BXFX_VS. */
  void (*cmp_i32)(int cmp, const int32_t *a, const int32_t *b, uint8_t *o, size_t n, int mode);
  void (*cmp_i64)(int cmp, const int64_t *a, const int64_t *b, uint8_t *o, size_t n, int mode);
  void (*cmp_f64)(int cmp, const double *a, const double *b, uint8_t *o, size_t n, int mode);
  void (*un_f64[BXFX_UND_COUNT])(const double *a, double *o, size_t n);
  /* pow of two arrays (libmvec's powf/pow in lanes, libm's elsewhere). */
  void (*pow_f32)(const float *a, const float *b, float *o, size_t n);
  void (*pow_f64)(const double *a, const double *b, double *o, size_t n);
  /* o[i] = (float)((double)a[i] OP s) for add sub mul div (BXFX_BIN_*
   * indices 0..3): an f32 tensor with a scalar f32 cannot hold exactly
   * (an SGD step's 1e-3), in f64 lanes with one rounding, which is what
   * the reference computes. */
  void (*binw_f32)(int op, const float *a, double s, float *o, size_t n);
  /* o[i] = x^e rounded to f32 from f64 lanes, |e| <= BXFX_POWI_MAX. */
  void (*powi_f32)(const float *a, float *o, size_t n, int e);
  /* o[i] = pow(a[i], e), glibc's bits, |e| <= BXFX_POWI_MAX. */
  void (*powi_f64)(const double *a, double *o, size_t n, int e);
  /* o[i] = bxk_rem_f32(a[i], b[i]) (floored), bit for bit, in f64 lanes
   * where the quotient is below 2^29, by bxk_rem_f32 elsewhere. */
  void (*rem_f32)(const float *a, const float *b, float *o, size_t n);
  /* o[i] = bxk_rem_f64(a[i], b[i]), bit for bit: f64 lanes (trunc, FMA)
   * where |a/b| < 2^52, bxk_rem_f64 elsewhere. */
  void (*rem_f64)(const double *a, const double *b, double *o, size_t n);
  /* C = A B, row-major contiguous ints (A m x k, B k x n, C m x n, C
   * apart from A and B), wrapping in the dtype's width. */
  void (*mm_i32)(const int32_t *A, const int32_t *B, int32_t *C, size_t m, size_t n, size_t k);
  void (*mm_i64)(const int64_t *A, const int64_t *B, int64_t *C, size_t m, size_t n, size_t k);
  /* Sums of n elements, pairwise (bxfx_pw below) over leaves of
   * BXFX_LEAF elements, each leaf summed in 16 f64 lanes: the error is
   * O((16 + log2(n / BXFX_LEAF)) eps) of sum(|a|), like NumPy's, at memory
   * speed.  f32 inputs are widened, so an f32 result is the correctly
   * rounded f64 sum in all but pathological cases. */
  double (*sum_f32)(const float *a, size_t n);
  double (*sum_f64)(const double *a, size_t n);
  /* The same for f16/bf16, widened in registers (exact): the f32 sum of
   * the widened values, bit for bit, without a widening pass. */
  double (*sum_bf16)(const uint16_t *a, size_t n);
  double (*sum_f16)(const uint16_t *a, size_t n);
  /* acc[i] += x[i] (mulacc: *=) in f64: one row of a sum (product)
   * across an outer axis. */
  void (*acc_f64)(double *acc, const double *x, size_t n);
  /* out[i] = x[0*stride + i] + ... + x[(rows-1)*stride + i] in f64, left
   * to right (rows >= 1): a leaf of rows_sum, bit for bit the first row
   * plus each further row added in turn, without storing every step. */
  void (*leafrows_f32)(double *out, const float *x, size_t stride, size_t rows, size_t n);
  void (*leafrows_f64)(double *out, const double *x, size_t stride, size_t rows, size_t n);
  /* ... of f16/bf16 rows widened in registers: leafrows_f32 of the
   * widened rows, bit for bit. */
  void (*leafrows_bf16)(double *out, const uint16_t *x, size_t stride, size_t rows, size_t n);
  void (*leafrows_f16)(double *out, const uint16_t *x, size_t stride, size_t rows, size_t n);
  /* d[m*ds + k] = s[k*ss + m] for an 8x8 block of 4-, 2- or 1-byte
   * elements (strides in elements), bits copied exactly: transposed
   * copies. */
  void (*tile8_u32)(uint32_t *d, int64_t ds, const uint32_t *s, int64_t ss);
  void (*tile8_u16)(uint16_t *d, int64_t ds, const uint16_t *s, int64_t ss);
  void (*tile8_u8)(uint8_t *d, int64_t ds, const uint8_t *s, int64_t ss);
  /* the same for a 16x16 block of bytes (the tile walk's bool tiles) */
  void (*tile16_u8)(uint8_t *d, int64_t ds, const uint8_t *s, int64_t ss);
  /* and for a 4x4 block of 8-byte elements */
  void (*tile4_u64)(uint64_t *d, int64_t ds, const uint64_t *s, int64_t ss);
  /* d[i] = s[n - 1 - i] for i < n, bits copied exactly: flip along
   * the last dim (non-overlapping d and s). */
  void (*rev_u8)(uint8_t *d, const uint8_t *s, size_t n);
  void (*rev_u16)(uint16_t *d, const uint16_t *s, size_t n);
  void (*rev_u32)(uint32_t *d, const uint32_t *s, size_t n);
  void (*rev_u64)(uint64_t *d, const uint64_t *s, size_t n);
  /* arange: o[i] = start + (double)(i0 + i) * step (two roundings, never
   * fused), stored with the runtime's cast rules for the dtype. */
  void (*arange_f32)(float *o, size_t n, double start, double step, int64_t i0);
  void (*arange_f64)(double *o, size_t n, double start, double step, int64_t i0);
  void (*arange_i32)(int32_t *o, size_t n, double start, double step, int64_t i0);
  void (*arange_i64)(int64_t *o, size_t n, double start, double step, int64_t i0);
  /* The same aranges when start, step and every value and product are
   * integers below 2^52 in magnitude, in the output's range: o[i] =
   * start + (i0 + i) * step by integer adds (bit for bit the f64 rule;
   * f32 rounds the integer once). */
  void (*iota_i32)(int32_t *o, size_t n, int64_t start, int64_t step, int64_t i0);
  void (*iota_i64)(int64_t *o, size_t n, int64_t start, int64_t step, int64_t i0);
  void (*iota_f32)(float *o, size_t n, int64_t start, int64_t step, int64_t i0);   /* values in i32's range */
  void (*mulacc_f32)(double *acc, const float *x, size_t n);
  void (*mulacc_f64)(double *acc, const double *x, size_t n);
  /* Index (n >= 1) of the first NaN, else of the first max (flags has
   * BXFX_EXT_MAX) or min: what the reference's sequential scan keeps;
   * *val the element.  With BXFX_EXT_VALUE, -1 where only the value was
   * needed to know it. */
  int64_t (*argext_f32)(const float *a, size_t n, int flags, float *val);
  int64_t (*argext_f64)(const double *a, size_t n, int flags, double *val);
  /* The same on bf16 widened in registers (*val the widened element):
   * argext_f32 of the widened row, without a widening pass. */
  int64_t (*argext_bf16)(const uint16_t *a, size_t n, int flags, float *val);
  /* Row k of an extreme across an outer axis: acc[i] (and arg[i] = k
   * unless arg is NULL) take x[i] where it beats acc[i] or is the first
   * NaN. */
  void (*extrow_f32)(float *acc, int64_t *arg, const float *x, size_t n, int64_t k, int flags);
  void (*extrow_f64)(double *acc, int64_t *arg, const double *x, size_t n, int64_t k, int flags);
  /* A whole row of ints at their own width (BXFX_RED_*; n >= 1 for the
   * extremes): sums and products wrap in the dtype's unsigned twin (any
   * order gives the same bits), extremes are exact.  Returns the dtype's
   * value, sign-extended. */
  int64_t (*red_i32)(int op, const int32_t *x, size_t n);
  int64_t (*red_i64)(int op, const int64_t *x, size_t n);
  /* acc[i] = acc[i] OP x[i] (BXFX_RED_*): one row of an int reduction
   * across an outer axis, wrapping likewise. */
  void (*rowacc_i32)(int op, int32_t *acc, const int32_t *x, size_t n);
  void (*rowacc_i64)(int op, int64_t *acc, const int64_t *x, size_t n);
  /* Blocks of rows across an outer axis (row r at x + r*stride): acc[i]
   * *= each row's x[i] in f64 (mulrows), or takes it where it beats acc[i]
   * or is the first NaN (extrows, BXFX_EXT_MAX in flags for max), each
   * column in row order: mulacc / extrow (arg NULL) row by row, bit for
   * bit, with acc in registers over the block. */
  void (*mulrows_f32)(double *acc, const float *x, size_t stride, size_t rows, size_t n);
  void (*mulrows_f64)(double *acc, const double *x, size_t stride, size_t rows, size_t n);
  void (*extrows_f32)(float *acc, const float *x, size_t stride, size_t rows, size_t n, int flags);
  void (*extrows_f64)(double *acc, const double *x, size_t stride, size_t rows, size_t n, int flags);
  /* extrows_f32 on f16 / bf16 rows, widened exactly */
  void (*extrows_f16)(float *acc, const uint16_t *x, size_t stride, size_t rows, size_t n, int flags);
  void (*extrows_bf16)(float *acc, const uint16_t *x, size_t stride, size_t rows, size_t n, int flags);
  /* rowacc over a block of rows (row r at x + r*stride), acc in
   * registers across the block: the same bits. */
  void (*rowsacc_i32)(int op, int32_t *acc, const int32_t *x, size_t stride, size_t rows, size_t n);
  void (*rowsacc_i64)(int op, int64_t *acc, const int64_t *x, size_t stride, size_t rows, size_t n);
  /* cumsum: a row's running sums at the int's own width (wrapping: the
   * i64 chain stored back, bit for bit); one step across an outer axis
   * of a float cumsum, acc[i] += x[i] in f64 and o[i] = acc[i] rounded. */
  void (*cumsum_i32)(const int32_t *x, int32_t *o, size_t n);
  void (*cumsum_i64)(const int64_t *x, int64_t *o, size_t n);
  void (*cumstep_f32)(double *acc, const float *x, float *o, size_t n);
  void (*cumstep_f64)(double *acc, const double *x, double *o, size_t n);
  /* Product in f64 lanes (1 for n == 0). */
  double (*prod_f32)(const float *a, size_t n);
  double (*prod_f64)(const double *a, size_t n);
  /* Conversions, round to nearest even (NaN stays NaN). */
  void (*f16_to_f32)(const uint16_t *a, float *o, size_t n);
  void (*f32_to_f16)(const float *a, uint16_t *o, size_t n);
  /* base[pos[k]] = f16(f32(base[pos[k]]) + f32(v[k])) for k = 0..n-1 in
   * order (positions may repeat): scatter_add's f16 adds. */
  void (*add_at_f16)(uint16_t *base, const int64_t *pos, const uint16_t *v, size_t n);
  /* The same for bf16 (8 positions at a time in lanes when they differ). */
  void (*add_at_bf16)(uint16_t *base, const int64_t *pos, const uint16_t *v, size_t n);
  void (*bf16_to_f32)(const uint16_t *a, float *o, size_t n);
  void (*f32_to_bf16)(const float *a, uint16_t *o, size_t n);
  /* Half (BXFX_H_*) o[i] = a[i] OP b[i] (BXFX_BIN_*) computed in f32 and
   * rounded once, widening and narrowing in registers; the broadcast
   * operand of BXFX_SV / BXFX_VS is s (as f32), a or b unread there. */
  void (*bin_half[BXFX_H_COUNT][BXFX_BIN_COUNT])(const uint16_t *a, const uint16_t *b, float s, uint16_t *o, size_t n,
                                   int mode);
  /* Half comparisons (BXFX_CMP_*) as 0/1 bytes likewise. */
  void (*cmp_half[BXFX_H_COUNT][BXFX_CMP_COUNT])(const uint16_t *a, const uint16_t *b, float s, uint8_t *o,
                                                 size_t n, int mode);
  /* Half o[i] = f(a[i]) (BXFX_UN_*) likewise, o may equal a; each value
   * the f32 kernel's (un) rounded to the half type.  NULL for sigmoid. */
  void (*un_half[BXFX_H_COUNT][BXFX_UN_COUNT])(const uint16_t *a, uint16_t *o, size_t n);
  /* Half o[i] = a[i] < lo ? lo : a[i] > hi ? hi : a[i] in f32 (NaN passes,
   * lo <= hi not required) rounded to the type likewise; o may equal a. */
  void (*clamp_half[BXFX_H_COUNT])(const uint16_t *a, uint16_t *o, size_t n, float lo, float hi);
  /* The same clamp of f32 (o may equal a): the general engine's f32
   * clamp, which ran it as a scalar loop compiled for the baseline ISA. */
  void (*clamp_f32)(const float *a, float *o, size_t n, float lo, float hi);
  /* Half o[i] = powi_f32 of a[i] rounded to the type likewise, |e| <=
   * BXFX_POWI_MAX; o may equal a. */
  void (*powi_half[BXFX_H_COUNT])(const uint16_t *a, uint16_t *o, size_t n, int e);
  /* The rest with bext_cast's rules: f32 -> i32 NaN 0, truncate, saturate;
   * the others one rounding (or exact). */
  void (*f32_to_i32)(const float *a, int32_t *o, size_t n);
  void (*i32_to_f32)(const int32_t *a, float *o, size_t n);
  void (*f32_to_f64)(const float *a, double *o, size_t n);
  void (*f64_to_f32)(const double *a, float *o, size_t n);
  /* Casts between i32, i64, f64 and f32 <-> i64 with the same rules
   * (flex_kern_cast.h): int -> int wraps. */
  void (*i64_to_f64)(const int64_t *a, double *o, size_t n);
  void (*i64_to_f32)(const int64_t *a, float *o, size_t n);
  void (*f32_to_i64)(const float *a, int64_t *o, size_t n);
  void (*f64_to_i64)(const double *a, int64_t *o, size_t n);
  void (*f64_to_i32)(const double *a, int32_t *o, size_t n);
  void (*i32_to_f64)(const int32_t *a, double *o, size_t n);
  void (*i32_to_i64)(const int32_t *a, int64_t *o, size_t n);
  void (*i64_to_i32)(const int64_t *a, int32_t *o, size_t n);
};

/* Pairwise summation as a running binary counter: push the sums of
 * consecutive leaves, and equal-sized neighbours merge as soon as both
 * exist.  The result is P(leaves), P(v[0..m)) = P(v[0..h)) + P(v[h..m))
 * with h the largest power of two below m, a fixed tree that depends only
 * on the leaf count.  So a run cut into chunks of a power-of-two number of
 * leaves, each chunk summed on its own and the chunk sums pushed through
 * a second counter, gives the same bits as one pass: threaded sums do not
 * depend on the thread count. */
#define BXFX_LEAF 256
struct bxfx_pw {
  int top;
  unsigned char lvl[64];
  double v[64];
};
static inline void bxfx_pw_init(struct bxfx_pw *p) { p->top = 0; }
static inline void bxfx_pw_push(struct bxfx_pw *p, double x) {
  unsigned char l = 0;
  while (p->top > 0 && p->lvl[p->top - 1] == l) {
    x = p->v[--p->top] + x;
    l++;
  }
  p->v[p->top] = x;
  p->lvl[p->top++] = l;
}
static inline double bxfx_pw_done(const struct bxfx_pw *p) {
  if (p->top == 0) return 0.0;
  double s = p->v[p->top - 1];
  for (int i = p->top - 2; i >= 0; i--) s = p->v[i] + s;
  return s;
}

/* The table for this CPU (chosen once, thread-safe).  Inline: small ops
 * look it up on every call, so the chosen table is one load away. */
extern const struct bxfx_kernels *bxfx_kern_chosen;
const struct bxfx_kernels *bxfx_kern_choose(void);
static inline const struct bxfx_kernels *bxfx_kern(void) {
  const struct bxfx_kernels *k = __atomic_load_n(&bxfx_kern_chosen, __ATOMIC_ACQUIRE);
  return __builtin_expect(k != NULL, 1) ? k : bxfx_kern_choose();
}
/* Both tables, for tests that check the variants agree. */
extern const struct bxfx_kernels bxfx_kern_avx2;
extern const struct bxfx_kernels bxfx_kern_gen;

#endif
