/* test_flex_powi.c — f64 powi_f64 (powi and pow_scalar by an integer on
 * f64): glibc's pow bit for bit, in both kernel variants and through the
 * API against NdArray.  The AVX2 kernel keeps a double-double x^e only
 * where pow provably rounds the same way (flex_kern_body.h), so the
 * inputs here aim at the fallback's edges: values whose powers lie next
 * to a midpoint between doubles, the range limits, specials, every
 * binade.  BEXT_POWI_CHECK_N=100000000 runs that many random inputs per
 * exponent (off-line). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flex/flex_kern.h"
#include "internal.h"

static const int exps[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 17, 31, 32, 33, 63, 64,
                            -1, -2, -3, -4, -5, -7, -13, -32, -63, -64 };

static uint64_t rnd(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  uint64_t z = *s;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  return z ^ (z >> 27);
}

/* An input for exponent e: kind 0 any finite magnitude x^e can reach
 * (incl. over/underflow), 1 near 1, 2 an x whose x^e is within a few
 * ulps of a midpoint (the rounded e-th root of one), 3 specials. */
static double input(uint64_t *s, int e, int kind) {
  uint64_t r = rnd(s);
  double sign = (r >> 63) ? -1.0 : 1.0;
  switch (kind) {
  case 0: {
    int lim = e ? 1100 / abs(e) + 2 : 1000;
    double m = 1.0 + (double)(r >> 12) * 0x1p-52;
    return sign * ldexp(m, (int)(rnd(s) % (uint64_t)(2 * lim + 1)) - lim);
  }
  case 1: return sign * (1.0 + ((double)(int64_t)(r % 200001) - 100000) * 0x1p-52);
  case 2: {
    if (e == 0) return 1.5;
    double m = ldexp(1.0 + (double)(r >> 12) * 0x1p-52 + 0x1p-53, (int)(rnd(s) % 41) - 20);
    return sign * pow(m, 1.0 / e);
  }
  default: {
    static const double sp[] = { 0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.0, 0x1p-1074, -0x1p-1074,
                                 0x1p-1022, 0x1.fffffffffffffp+1023, -0x1.fffffffffffffp+1023, 2.0, 0.5,
                                 0x1p-16, 0x1p16, 0x1p-15 * 3, 10.0, 0.1, -3.0 };
    return sp[r % (sizeof sp / sizeof sp[0])];
  }
  }
}

static bool same(double a, double b) { return memcmp(&a, &b, 8) == 0 || (a != a && b != b); }

static void check_kernel(const struct bxfx_kernels *K, const char *name, long n_per_e) {
  enum { B = 4096 };
  static double x[B], y[B];
  uint64_t s = 12345;
  for (size_t ei = 0; ei < sizeof exps / sizeof *exps; ei++) {
    int e = exps[ei];
    for (long done = 0; done < n_per_e; done += B) {
      for (int k = 0; k < B; k++) x[k] = input(&s, e, (int)((done / B + k) % 4 == 3 ? (k % 7 ? 0 : 3) : (done / B + k) % 3));
      /* lengths around the vector widths, then the whole block */
      static const size_t lens[] = { 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33 };
      size_t at = 0;
      for (size_t l = 0; l < sizeof lens / sizeof *lens; l++) {
        K->powi_f64(x + at, y + at, lens[l], e);
        at += lens[l];
      }
      K->powi_f64(x + at, y + at, B - at, e);
      for (int k = 0; k < B; k++) {
        double want = pow(x[k], (double)e);
        cr_assert(same(y[k], want), "%s powi_f64(%a, %d) = %a, pow gives %a", name, x[k], e, y[k], want);
      }
      /* in place (Flex reuses a consumed input's buffer) */
      K->powi_f64(x, x, 9, e);
      K->powi_f64(x + 9, x + 9, B - 9, e);
      cr_assert(memcmp(x, y, sizeof x) == 0 || e == 0, "%s powi_f64 %d in place differs", name, e);
    }
  }
}

Test(flex_powi, kernels_match_pow_bit_for_bit) {
  const char *env = getenv("BEXT_POWI_CHECK_N");
  long n = env ? atol(env) : 40000;
  check_kernel(&bxfx_kern_gen, "generic", 4096);
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) check_kernel(&bxfx_kern_avx2, "avx2", n);
}

/* Through the API: powi and pow_scalar (integer scalars take the same
 * kernel) on Flex equal NdArray's pow per element, contiguous and on a
 * transposed view. */
static void api_case(int64_t rows, int64_t cols, bool transpose, int e, bool scalar) {
  int64_t n = rows * cols, shape[2] = { rows, cols };
  double *data = malloc(sizeof(double) * (size_t)n);
  uint64_t s = (uint64_t)n * 7 + (uint64_t)(e + 100);
  for (int64_t i = 0; i < n; i++) data[i] = input(&s, e, (int)(i % 4));
  bext_tensor *r[2];
  const char *devs[2] = { "flex", "ndarray" };
  for (int k = 0; k < 2; k++) {
    bext_tensor *t = bext_from_data(data, BEXT_F64, shape, 2, bext_device_get(devs[k]));
    cr_assert_not_null(t, "%s", bext_last_error());
    if (transpose) t = bext_swap_dims(t, 0, 1);
    r[k] = scalar ? bext_pow_scalar(t, (double)e) : bext_powi(t, e);
    cr_assert_not_null(r[k], "%s", bext_last_error());
  }
  double *g = malloc(sizeof(double) * (size_t)n), *w = malloc(sizeof(double) * (size_t)n);
  bext_read(r[0], g, sizeof(double) * (size_t)n);
  bext_read(r[1], w, sizeof(double) * (size_t)n);
  for (int64_t i = 0; i < n; i++)
    cr_assert(same(g[i], w[i]), "%s %d [%lldx%lld]%s at %lld: flex %a, ndarray %a", scalar ? "pow_scalar" : "powi",
              e, (long long)rows, (long long)cols, transpose ? " transposed" : "", (long long)i, g[i], w[i]);
  free(g);
  free(w);
  free(data);
  bext_release(r[0]);
  bext_release(r[1]);
}

Test(flex_powi, api_matches_ndarray) {
  static const int64_t lens[] = { 1, 7, 8, 9, 31, 33, 1037 };
  for (size_t ei = 0; ei < sizeof exps / sizeof *exps; ei++)
    for (int scalar = 0; scalar < 2; scalar++) {
      for (size_t l = 0; l < sizeof lens / sizeof *lens; l++) api_case(1, lens[l], false, exps[ei], scalar);
      api_case(33, 17, true, exps[ei], scalar);
    }
  /* beyond the kernel's exponents powi calls pow per element (pow_scalar
   * there keeps libmvec's pow, whose last bits the contract leaves open) */
  api_case(1, 33, false, 65, false);
  api_case(1, 33, false, -200, false);
}
