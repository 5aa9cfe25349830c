/* test_rng.c — the normal generator of rng.c: its own log and cos held to
 * glibc's (within 2 ulp), every ISA copy and the scalar entry giving the
 * same bits, the distribution, and the backends drawing the same tensors.
 * BEXT_RNG_CHECK_N=100000000 runs the libm comparison on that many inputs
 * (off-line; the default keeps the test to about a second). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static long check_n(long dflt) {
  const char *s = getenv("BEXT_RNG_CHECK_N");
  return s ? atol(s) : dflt;
}

/* |a - b| in ulps of b (b finite). */
static double ulps(double a, double b) {
  if (a == b) return 0;
  double u = nextafter(fabs(b), INFINITY) - fabs(b);
  return fabs(a - b) / u;
}

#define CH 4096

Test(rng, log_and_cos_within_2_ulp_of_libm) {
  static double u[CH], t[CH], lg[CH], cs[CH];
  const long n = check_n(2000000);
  double worst_l = 0, worst_c = 0, at_l = 0, at_c = 0;
  for (long b = 0; b < n; b += CH) {
    for (int k = 0; k < CH; k++) {
      uint64_t i = (uint64_t)(b + k);
      double u2 = bxr_rng_uniform(3, 2 * i + 1);
      switch ((b / CH) % 4) {
      case 0:   /* what the generator draws */
        u[k] = 1.0 - bxr_rng_uniform(3, 2 * i);
        break;
      case 1:   /* every binade the generator reaches, down to 2^-53 */
        u[k] = ldexp(1.0 - bxr_rng_uniform(5, i) / 2, -(int)(i % 54));
        if (u[k] > 1 || u[k] < 0x1p-53) u[k] = 1;
        break;
      case 2:   /* within 1000 ulp of 1 and of sqrt(2)/2 (the reduction's edge) */
        u[k] = (i & 1) ? 1.0 - (double)(i % 1000) * 0x1p-53 : 0x1.6a09e667f3bcdp-1 + ((double)(i % 2001) - 1000) * 0x1p-53;
        break;
      default:   /* u2 next to the quadrant edges and near 1 */
        u[k] = 1.0 - bxr_rng_uniform(3, 2 * i);
        u2 = (double)(i % 4) / 4 + ((double)(bxr_rng_u64(9, i) % 2001) - 1000) * 0x1p-53;
        if (u2 < 0) u2 = 1 + u2;
        break;
      }
      t[k] = 6.283185307179586476925 * u2;
    }
    bxr_rng_logcos(u, t, lg, cs, CH);
    for (int k = 0; k < CH; k++) {
      double el = ulps(lg[k], log(u[k])), ec = ulps(cs[k], cos(t[k]));
      if (el > worst_l) worst_l = el, at_l = u[k];
      if (ec > worst_c) worst_c = ec, at_c = t[k];
    }
  }
  cr_expect(worst_l <= 2, "log: %g ulp from libm at %a", worst_l, at_l);
  cr_expect(worst_c <= 2, "cos: %g ulp from libm at %a", worst_c, at_c);
  cr_log_info("log within %g ulp, cos within %g ulp of libm over %ld inputs", worst_l, worst_c, n);
  /* the exact points: log 1 = 0, cos 0 = 1 */
  double one[1] = { 1 }, zero[1] = { 0 }, l1[1], c0[1];
  bxr_rng_logcos(one, zero, l1, c0, 1);
  cr_expect(l1[0] == 0 && !signbit(l1[0]) && c0[0] == 1);
}

Test(rng, every_copy_and_the_scalar_entry_agree) {
  static const size_t lens[] = { 1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 1000 };
  static const uint64_t starts[] = { 0, 1, 5, 1ull << 40, UINT64_MAX - 40 };
  static double ref[1000], got[1000];
  int copies = 0;
  for (size_t a = 0; a < sizeof starts / sizeof *starts; a++)
    for (size_t l = 0; l < sizeof lens / sizeof *lens; l++) {
      size_t n = lens[l];
      for (size_t k = 0; k < n; k++) ref[k] = bxr_rng_normal(42, starts[a] + k);
      for (int isa = 0; isa < 3; isa++) {
        memset(got, 0xff, sizeof got);
        if (!bxr_rng_normal_block_isa(isa, 42, starts[a], n, got)) continue;
        copies += isa == 0;
        cr_assert(memcmp(got, ref, n * sizeof *ref) == 0, "isa %d, start %llu, n %zu: a value differs", isa,
                  (unsigned long long)starts[a], n);
        uint64_t pad;
        memcpy(&pad, &got[n < 1000 ? n : 999], 8);
        if (n < 1000) cr_assert_eq(pad, UINT64_MAX, "isa %d wrote past n = %zu", isa, n);
      }
      bxr_rng_normal_block(42, starts[a], n, got);
      cr_assert(memcmp(got, ref, n * sizeof *ref) == 0);
    }
  cr_assert(copies > 0);
}

/* Within 4 ulp of the libm formula the generator used before (the stream
 * changed in its last bits only), and distributed as N(0, 1). */
Test(rng, normal_distribution_and_old_formula) {
  enum { N = 1 << 20 };
  static double z[N];
  bxr_rng_normal_block(7, 0, N, z);
  double sum = 0, sq = 0, worst = 0, mx = 0;
  long over3 = 0, over4 = 0;
  for (long i = 0; i < N; i++) {
    double u1 = 1.0 - bxr_rng_uniform(7, 2 * (uint64_t)i), u2 = bxr_rng_uniform(7, 2 * (uint64_t)i + 1);
    double old = sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925 * u2);
    double e = ulps(z[i], old);
    if (e > worst) worst = e;
    sum += z[i];
    sq += z[i] * z[i];
    over3 += fabs(z[i]) > 3;
    over4 += fabs(z[i]) > 4;
    if (fabs(z[i]) > mx) mx = fabs(z[i]);
  }
  cr_expect(worst <= 4, "%g ulp from sqrt(-2 log u1) cos(2 pi u2) in libm", worst);
  cr_expect(fabs(sum / N) < 0.005, "mean %g", sum / N);
  cr_expect(fabs(sq / N - 1) < 0.005, "variance %g", sq / N);
  /* P(|z| > 3) = 0.0026998, P(|z| > 4) = 6.334e-5; counts within ~4.5 sigma */
  cr_expect(fabs(over3 - 0.0026998 * N) < 240, "|z| > 3: %ld of %d", over3, N);
  cr_expect(fabs(over4 - 6.334e-5 * N) < 37, "|z| > 4: %ld of %d", over4, N);
  cr_expect(mx <= 8.58, "|z| reached %g (u1 >= 2^-53 bounds it by 8.57)", mx);
}

/* Flex draws blocks through bxr_rng_normal_block, NdArray one value at a
 * time: the same tensor for every dtype, at lengths around the blocks. */
Test(rng, flex_and_ndarray_draw_the_same_tensors) {
  const bext_device *nd = bext_device_get("ndarray"), *fx = bext_device_get("flex");
  cr_assert(nd && fx);
  static const int64_t lens[] = { 1, 7, 8, 9, 31, 33, 255, 257, 4099, 100003 };
  static const bext_dtype dts[] = { BEXT_F32, BEXT_F64, BEXT_F16, BEXT_BF16 };
  static char x[100003 * 8], y[100003 * 8];
  for (size_t l = 0; l < sizeof lens / sizeof *lens; l++)
    for (size_t d = 0; d < sizeof dts / sizeof *dts; d++) {
      int64_t sh[] = { lens[l] };
      bext_tensor *a = bext_random_normal(sh, 1, 0.5, 2.0, 11, dts[d], nd);
      bext_tensor *b = bext_random_normal(sh, 1, 0.5, 2.0, 11, dts[d], fx);
      cr_assert(a && b, "%s", bext_last_error());
      size_t bytes = (size_t)lens[l] * bext_dtype_size(dts[d]);
      bext_read(a, x, bytes);
      bext_read(b, y, bytes);
      cr_expect(memcmp(x, y, bytes) == 0, "%s, n %lld: flex and ndarray differ", bext_dtype_name(dts[d]),
                (long long)lens[l]);
      bext_release(a);
      bext_release(b);
    }
}
