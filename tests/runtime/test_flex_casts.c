/* test_flex_casts.c — Flex's one-pass casts bit for bit against the
 * reference: the cast kernels (flex_kern_cast.h, both ISA variants)
 * against bxr_convert itself, and bext_cast on Flex against the NdArray
 * device for every pair of dtypes, on the values where a rule shows: NaN,
 * infinities, signed zeros, subnormals, both sides of every saturation
 * bound, i64 values past 2^24 and 2^53 (where a float rounds, and where
 * rounding through f64 first would round twice), in every lane position,
 * at lengths around the vector widths, and on transposed views. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flex/flex_internal.h"

static const float f32v[] = {
  NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 0x1p-149f, -0x1p-149f, 0x1p-126f, 0.99f, -0.99f, 3.5f, -3.5f,
  16777217.0f, 0x1p31f, -0x1p31f, 2147483520.0f, -2147483904.0f, 0x1p63f, -0x1p63f, 9223371487098961920.0f,
  -9223371487098961920.0f, 1e30f, -1e30f, 255.0f, 255.5f, 256.0f, 65504.0f, 65520.0f, 1e10f,
};
static const double f64v[] = {
  NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 0x1p-1074, -0x1p-1074, 0.5, -0.5, -0.99, 3.7,
  2147483647.0, 2147483647.5, 0x1p31, -0x1p31, -2147483648.5, -2147483649.0, 0x1p63, -0x1p63,
  9223372036854774784.0, -9223372036854774784.0, 1e300, -1e300, 1e10, -1e10, 0x1p53 + 2, 16777217.0,
  65520.0, 1e-40, 3.4028235677973366e38, 0x1.0000010000001p0,
};
static const int64_t i64v[] = {
  INT64_MIN, INT64_MAX, 0, -1, 1, (1LL << 24) + 1, -(1LL << 24) - 1, (1LL << 53), (1LL << 53) + 1,
  -(1LL << 53) - 1, (1LL << 53) - 1, (1LL << 53) + 3, (1LL << 62) + (1LL << 39) + 1, (1LL << 62) + (1LL << 38),
  (1LL << 31), -(1LL << 31) - 1, 0xffffffffLL, 0x100000000LL, -0x100000001LL, 0x7fffffff80000000LL,
  -0x7fffffff80000001LL, 0x20000020000001LL, (1LL << 40) + 1, 255, 256, -256, 65520, 123456789012LL,
  (1LL << 51), (1LL << 51) - 1, -(1LL << 51), -(1LL << 51) - 1, (1LL << 51) + 1, -(1LL << 52) - 3,
};

/* n values of dt: the edge list above rotated by `shift` (so each value
 * visits every lane), then blocks of 16 random values, alternately tame
 * (floats with fractions inside i32's range, ints below 2^53: the vector
 * paths) and wild (random bits; floats of all exponents up to 2^63). */
static void fill(void *p, bext_dtype dt, size_t n, unsigned shift, uint64_t seed) {
  size_t nf = sizeof f32v / sizeof *f32v, nd = sizeof f64v / sizeof *f64v, ni = sizeof i64v / sizeof *i64v;
  for (size_t i = 0; i < n; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t r = seed ^ (seed >> 29);
    size_t k = i + shift;
    bool edge = i < 64, tame = (i / 16) % 2 == 0;
    int64_t iv = edge ? i64v[k % ni] : tame ? (int64_t)(r >> 11) : (int64_t)(r >> (r % 64));
    if (!edge && (r & 1)) iv = -iv;
    double fv = edge ? f64v[k % nd]
                : tame ? (double)(int32_t)(uint32_t)(r >> 32) / (double)(1u << (r % 12))
                       : (double)(int64_t)r * ldexp(1.0, (int)(r % 90) - 100);
    switch (dt) {
    case BEXT_F32: ((float *)p)[i] = edge ? f32v[k % nf] : (float)fv; break;
    case BEXT_F64: ((double *)p)[i] = fv; break;
    case BEXT_F16: case BEXT_BF16: ((uint16_t *)p)[i] = (uint16_t)(edge ? (k * 0x1235u) ^ (k % 3 ? 0x7c00u : 0x7f80u) : r); break;
    case BEXT_I32: ((int32_t *)p)[i] = (int32_t)(uint32_t)(uint64_t)iv; break;
    case BEXT_I64: ((int64_t *)p)[i] = iv; break;
    default: ((uint8_t *)p)[i] = (uint8_t)(edge ? k * 37 : r); break;
    }
  }
}

/* The kernel of K for (s, d), or false if there is none. */
static bool run_kernel(const struct bxfx_kernels *K, bext_dtype s, bext_dtype d, const void *a, void *o, size_t n) {
  if (s == BEXT_I64 && d == BEXT_F64) K->i64_to_f64(a, o, n);
  else if (s == BEXT_I64 && d == BEXT_F32) K->i64_to_f32(a, o, n);
  else if (s == BEXT_F32 && d == BEXT_I64) K->f32_to_i64(a, o, n);
  else if (s == BEXT_F64 && d == BEXT_I64) K->f64_to_i64(a, o, n);
  else if (s == BEXT_F64 && d == BEXT_I32) K->f64_to_i32(a, o, n);
  else if (s == BEXT_I32 && d == BEXT_F64) K->i32_to_f64(a, o, n);
  else if (s == BEXT_I32 && d == BEXT_I64) K->i32_to_i64(a, o, n);
  else if (s == BEXT_I64 && d == BEXT_I32) K->i64_to_i32(a, o, n);
  else return false;
  return true;
}

Test(flex_casts, kernels_match_bxr_convert) {
  const bext_dtype ts[] = { BEXT_F32, BEXT_F64, BEXT_I32, BEXT_I64 };
  const size_t lens[] = { 1, 7, 8, 9, 15, 16, 17, 33, 64, 1037 };
  const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  enum { MAX = 1037 };
  static char src[MAX * 8], want[MAX * 8], got[MAX * 8 + 8];
  int pairs = 0;
  for (size_t si = 0; si < 4; si++)
    for (size_t di = 0; di < 4; di++) {
      bext_dtype s = ts[si], d = ts[di];
      if (s == d || !run_kernel(K[1], s, d, src, got, 0)) continue;
      pairs++;
      size_t ds = bext_dtype_size(d);
      for (size_t li = 0; li < sizeof lens / sizeof *lens; li++)
        for (unsigned shift = 0; shift < 8; shift++) {
          size_t n = lens[li];
          fill(src, s, n, shift * 5, n * 131 + shift);
          bxr_convert(want, d, src, s, (int64_t)n);
          for (int v = 0; v < 2; v++) {
            memset(got, 0xa5, sizeof got);
            run_kernel(K[v], s, d, src, got, n);
            for (size_t i = 0; i < n; i++)
              cr_assert(memcmp(got + i * ds, want + i * ds, ds) == 0, "%s %s->%s n=%zu [%zu]", K[v]->isa,
                        bext_dtype_name(s), bext_dtype_name(d), n, i);
            cr_assert_eq((unsigned char)got[n * ds], 0xa5, "%s %s->%s n=%zu wrote past the end", K[v]->isa,
                         bext_dtype_name(s), bext_dtype_name(d), n);
          }
        }
    }
  cr_assert_eq(pairs, 8);
}

/* Same bytes, except that any NaN matches any NaN of the same dtype. */
static bool same(bext_dtype dt, const void *a, const void *b) {
  switch (dt) {
  case BEXT_F32: {
    float x, y;
    memcpy(&x, a, 4), memcpy(&y, b, 4);
    return (x != x && y != y) || memcmp(&x, &y, 4) == 0;
  }
  case BEXT_F64: {
    double x, y;
    memcpy(&x, a, 8), memcpy(&y, b, 8);
    return (x != x && y != y) || memcmp(&x, &y, 8) == 0;
  }
  case BEXT_F16: case BEXT_BF16: {
    uint16_t x, y;
    memcpy(&x, a, 2), memcpy(&y, b, 2);
    uint16_t e = dt == BEXT_F16 ? 0x7c00u : 0x7f80u;
    bool nx = (x & e) == e && (x & (uint16_t)~(e | 0x8000u)), ny = (y & e) == e && (y & (uint16_t)~(e | 0x8000u));
    return (nx && ny) || x == y;
  }
  default: return memcmp(a, b, bext_dtype_size(dt)) == 0;
  }
}

/* bext_cast of n values (or a rows x cols transposed view) on Flex and on
 * the reference device. */
static void check_cast(bext_dtype s, bext_dtype d, const int64_t *shape, int rank, bool transpose, unsigned shift) {
  int64_t n = 1;
  for (int k = 0; k < rank; k++) n *= shape[k];
  void *data = calloc((size_t)n, 8);
  fill(data, s, (size_t)n, shift, (uint64_t)n * 977 + shift);
  const char *devs[2] = { "flex", "ndarray" };
  void *out[2];
  size_t ds = bext_dtype_size(d);
  for (int q = 0; q < 2; q++) {
    const bext_device *dev = bext_device_get(devs[q]);
    cr_assert_not_null(dev);
    bext_tensor *t = bext_from_data(data, s, shape, rank, dev);
    cr_assert_not_null(t, "%s", bext_last_error());
    if (transpose) t = bext_swap_dims(t, 0, 1);
    bext_tensor *c = bext_cast(t, d);
    cr_assert_not_null(c, "%s", bext_last_error());
    out[q] = malloc((size_t)n * ds);
    cr_assert(bext_read(c, out[q], (size_t)n * ds), "%s", bext_last_error());
    bext_release(c);
  }
  for (int64_t i = 0; i < n; i++)
    cr_assert(same(d, (char *)out[0] + i * (int64_t)ds, (char *)out[1] + i * (int64_t)ds),
              "cast %s->%s n=%lld%s [%lld]", bext_dtype_name(s), bext_dtype_name(d), (long long)n,
              transpose ? " transposed" : "", (long long)i);
  free(out[0]);
  free(out[1]);
  free(data);
}

Test(flex_casts, every_pair_matches_reference) {
  const int64_t lens[] = { 1, 7, 8, 9, 15, 16, 17, 33, 1037, 4099 };
  for (int s = 0; s < BEXT_DTYPE_COUNT; s++)
    for (int d = 0; d < BEXT_DTYPE_COUNT; d++) {
      if (s == d) continue;   /* a copy, not a conversion */
      for (size_t li = 0; li < sizeof lens / sizeof *lens; li++)
        check_cast((bext_dtype)s, (bext_dtype)d, &lens[li], 1, false, (unsigned)li * 3);
      check_cast((bext_dtype)s, (bext_dtype)d, (int64_t[]){ 33, 70 }, 2, true, 1);
      check_cast((bext_dtype)s, (bext_dtype)d, (int64_t[]){ 9, 17 }, 2, true, 2);
    }
}
