/* test_sum_accuracy.c — sum and mean are as accurate as NumPy's pairwise
 * summation (bext.h "reductions": the error bound), on every host backend,
 * whole tensor and along either dim of a [1000,1000] matrix.
 *
 * The references are computed here, independently of the runtime: long
 * double with Neumaier compensation over the values read back from the
 * tensor (64-bit mantissa plus the compensation term: exact to well below
 * f64 rounding for these sizes).  A sequential double loop, what the
 * backends did before, misses the f64 bound by an order of magnitude on
 * the 1M-element cases (~3e-14), so these tests are the proof.
 *
 * Bounds: f64 results within 1e-15 relative of the reference on
 * well-conditioned data (uniform [0,1)); on the hard cases (one large
 * value among many tiny ones, alternating large values of both signs over
 * small ones) the error normalized by sum(|x|), which is what pairwise
 * summation bounds.  f32 results (accumulated in f64 inside the runtime)
 * within one f32 ulp of the f64 reference.  Flex's threaded whole-tensor
 * sum splits at fixed block boundaries, so its result does not depend on
 * the thread count: checked bit for bit against the serial path. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bext/bext.h"

static const char *const devices[] = {"flex", "ndarray"};
#define N_DEV 2
#define BIG (1 << 20)

static const bext_device *dev(const char *spec) {
  const bext_device *d = bext_device_get(spec);
  cr_assert_not_null(d, "%s", bext_last_error());
  return d;
}

/* Neumaier-compensated long double sum of n values at stride s. */
static long double ref_sum(const double *x, int64_t n, int64_t s) {
  long double sum = 0, c = 0;
  for (int64_t i = 0; i < n; i++) {
    long double v = x[i * s], t = sum + v;
    if (fabsl(sum) >= fabsl(v)) c += (sum - t) + v;
    else c += (v - t) + sum;
    sum = t;
  }
  return sum + c;
}

static double abs_sum(const double *x, int64_t n, int64_t s) {
  long double a = 0;
  for (int64_t i = 0; i < n; i++) a += fabsl((long double)x[i * s]);
  return (double)a;
}

static double scalar_of(bext_tensor *t) {
  cr_assert_not_null(t, "%s", bext_last_error());
  double v = 0;
  if (bext_dtype_of(t) == BEXT_F32) {
    float f;
    cr_assert(bext_read(t, &f, sizeof f), "%s", bext_last_error());
    v = f;
  } else {
    cr_assert(bext_read(t, &v, sizeof v), "%s", bext_last_error());
  }
  bext_release(t);
  return v;
}

/* 1M uniform [0,1) f64 values (seeded), as a tensor on d and on the host. */
static bext_tensor *uniform(const bext_device *d, double *host, bext_dtype dt) {
  bext_tensor *t = bext_random_uniform((int64_t[]){BIG}, 1, 0.0, 1.0, 1234, dt, d);
  cr_assert_not_null(t, "%s", bext_last_error());
  if (dt == BEXT_F64) {
    cr_assert(bext_read(t, host, BIG * sizeof(double)));
  } else {
    float *f = malloc(BIG * sizeof(float));
    cr_assert(bext_read(t, f, BIG * sizeof(float)));
    for (int64_t i = 0; i < BIG; i++) host[i] = f[i];
    free(f);
  }
  return t;
}

static double rel(double got, long double ref) {
  return ref == 0 ? fabs(got) : (double)(fabsl((long double)got - ref) / fabsl(ref));
}

Test(sum_accuracy, f64_uniform_1m_whole) {
  double *x = malloc(BIG * sizeof(double));
  for (int k = 0; k < N_DEV; k++) {
    bext_tensor *t = uniform(dev(devices[k]), x, BEXT_F64);
    long double ref = ref_sum(x, BIG, 1);
    double s = scalar_of(bext_sum(bext_retain(t)));
    double m = scalar_of(bext_mean(t));
    double es = rel(s, ref), em = rel(m, ref / BIG);
    cr_log_info("%s f64 uniform 1M: sum rel err %.3g, mean rel err %.3g", devices[k], es, em);
    cr_expect(es <= 1e-15, "%s: sum of 1M uniform f64 off by %.3g relative (bound 1e-15)", devices[k], es);
    cr_expect(em <= 1e-15, "%s: mean of 1M uniform f64 off by %.3g relative (bound 1e-15)", devices[k], em);
  }
  free(x);
}

/* The hard cases, error normalized by sum(|x|): pairwise summation bounds
 * it by O(log n) eps; a sequential loop's grows with n. */
static void hard_case(const char *what, double *x) {
  for (int k = 0; k < N_DEV; k++) {
    bext_tensor *t = bext_from_data(x, BEXT_F64, (int64_t[]){BIG}, 1, dev(devices[k]));
    cr_assert_not_null(t, "%s", bext_last_error());
    long double ref = ref_sum(x, BIG, 1);
    double s = scalar_of(bext_sum(t));
    double e = (double)(fabsl((long double)s - ref)) / abs_sum(x, BIG, 1);
    cr_log_info("%s %s: sum err / sum|x| %.3g", devices[k], what, e);
    cr_expect(e <= 1e-15, "%s: %s: sum off by %.3g of sum(|x|) (bound 1e-15)", devices[k], what, e);
  }
}

Test(sum_accuracy, f64_hard_cases) {
  double *x = malloc(BIG * sizeof(double));
  /* one large value among a million small ones of varied size */
  x[0] = 1.0;
  for (int64_t i = 1; i < BIG; i++) x[i] = 1e-9 * (1.0 + (double)(i % 97) / 97.0);
  hard_case("1 + 1M tiny", x);
  /* alternating large values of both signs, over small positive noise */
  for (int64_t i = 0; i < BIG; i++) x[i] = (i % 2 ? -1e6 : 1e6) + (double)(i % 1009) * 1e-3 + 0.1;
  hard_case("alternating +-1e6 + small", x);
  /* values spanning many magnitudes */
  for (int64_t i = 0; i < BIG; i++) x[i] = ldexp(1.0 + (double)(i % 13) / 13.0, (int)(i % 41) - 20);
  hard_case("magnitudes 2^-20..2^20", x);
  free(x);
}

/* [1000,1000] f64 (rows of the uniform data): every output of sum_dim and
 * mean_dim along dim 0 (columns, the strided case) and dim 1 (rows, the
 * contiguous case) within the bound. */
Test(sum_accuracy, f64_along_dims) {
  const int64_t R = 1000, C = 1000;
  double *x = malloc(BIG * sizeof(double)), *out = malloc(1000 * sizeof(double));
  for (int k = 0; k < N_DEV; k++) {
    bext_tensor *t = uniform(dev(devices[k]), x, BEXT_F64);
    t = bext_narrow(t, 0, 0, R * C);
    t = bext_reshape(t, (int64_t[]){R, C}, 2);
    cr_assert_not_null(t, "%s", bext_last_error());
    for (int dim = 0; dim < 2; dim++)
      for (int mean = 0; mean < 2; mean++) {
        bext_tensor *r = mean ? bext_mean_dim(bext_retain(t), dim, false) : bext_sum_dim(bext_retain(t), dim, false);
        cr_assert_not_null(r, "%s", bext_last_error());
        cr_assert(bext_read(r, out, 1000 * sizeof(double)));
        bext_release(r);
        double worst = 0;
        for (int64_t j = 0; j < 1000; j++) {
          long double ref = dim == 0 ? ref_sum(x + j, R, C) : ref_sum(x + j * C, C, 1);
          if (mean) ref /= 1000;
          double e = rel(out[j], ref);
          if (e > worst) worst = e;
        }
        cr_log_info("%s f64 [1000,1000] %s_dim(%d): worst rel err %.3g", devices[k], mean ? "mean" : "sum", dim,
                    worst);
        cr_expect(worst <= 1e-15, "%s: %s_dim(%d) of [1000,1000] f64 off by %.3g relative (bound 1e-15)",
                  devices[k], mean ? "mean" : "sum", dim, worst);
      }
    bext_release(t);
  }
  free(x);
  free(out);
}

/* f32: the result is within one f32 ulp (2^-23 relative) of the exact sum
 * of the f32 values, whole and along both dims. */
Test(sum_accuracy, f32_whole_and_dims) {
  double *x = malloc(BIG * sizeof(double));
  float *out = malloc(1000 * sizeof(float));
  const double ulp = ldexp(1.0, -23);
  for (int k = 0; k < N_DEV; k++) {
    bext_tensor *t = uniform(dev(devices[k]), x, BEXT_F32);
    long double ref = ref_sum(x, BIG, 1);
    double es = rel(scalar_of(bext_sum(bext_retain(t))), ref);
    double em = rel(scalar_of(bext_mean(bext_retain(t))), ref / BIG);
    cr_log_info("%s f32 uniform 1M: sum rel err %.3g, mean %.3g", devices[k], es, em);
    cr_expect(es <= ulp && em <= ulp, "%s: f32 sum/mean of 1M off by %.3g / %.3g relative (bound 2^-23)",
              devices[k], es, em);
    t = bext_reshape(bext_narrow(t, 0, 0, 1000000), (int64_t[]){1000, 1000}, 2);
    for (int dim = 0; dim < 2; dim++) {
      bext_tensor *r = bext_sum_dim(bext_retain(t), dim, false);
      cr_assert_not_null(r, "%s", bext_last_error());
      cr_assert(bext_read(r, out, 1000 * sizeof(float)));
      bext_release(r);
      double worst = 0;
      for (int64_t j = 0; j < 1000; j++) {
        long double ref1 = dim == 0 ? ref_sum(x + j, 1000, 1000) : ref_sum(x + j * 1000, 1000, 1);
        double e = rel(out[j], ref1);
        if (e > worst) worst = e;
      }
      cr_log_info("%s f32 [1000,1000] sum_dim(%d): worst rel err %.3g", devices[k], dim, worst);
      cr_expect(worst <= ulp, "%s: f32 sum_dim(%d) off by %.3g relative (bound 2^-23)", devices[k], dim, worst);
    }
    bext_release(t);
  }
  free(x);
  free(out);
}

/* The backends agree closely (both are pairwise, with different leaves). */
Test(sum_accuracy, backends_agree) {
  double *x = malloc(BIG * sizeof(double));
  double s[N_DEV];
  for (int k = 0; k < N_DEV; k++) s[k] = scalar_of(bext_sum(uniform(dev(devices[k]), x, BEXT_F64)));
  cr_expect(fabs(s[0] - s[1]) <= 2e-15 * fabs(s[1]), "flex %.17g vs ndarray %.17g", s[0], s[1]);
  free(x);
}

/* Sums of integers stay exact and wrap like the dtype, as before. */
Test(sum_accuracy, ints_exact_and_wrapping) {
  for (int k = 0; k < N_DEV; k++) {
    int64_t v[5] = {INT64_MAX, 1, 5, -5, 3};
    bext_tensor *t = bext_from_data(v, BEXT_I64, (int64_t[]){5}, 1, dev(devices[k]));
    bext_tensor *r = bext_sum(t);
    cr_assert_not_null(r, "%s", bext_last_error());
    int64_t got;
    cr_assert(bext_read(r, &got, sizeof got));
    bext_release(r);
    cr_expect_eq(got, INT64_MIN + 3, "%s: i64 sum wraps", devices[k]);
    int32_t w[3] = {INT32_MAX, 2, 7};
    r = bext_sum(bext_from_data(w, BEXT_I32, (int64_t[]){3}, 1, dev(devices[k])));
    int32_t g32;
    cr_assert(bext_read(r, &g32, sizeof g32));
    bext_release(r);
    cr_expect_eq(g32, INT32_MIN + 8, "%s: i32 sum wraps", devices[k]);
  }
}

/* Flex's threaded whole-tensor sum splits at fixed block boundaries and
 * combines the blocks pairwise in order: any thread count gives the same
 * bits as the serial loop. */
int bxr_pool_set_threads(int n);
Test(sum_accuracy, flex_threads_give_identical_bits) {
  double *x = malloc(BIG * sizeof(double));
  for (int dt = 0; dt < 2; dt++) {
    bext_dtype d = dt ? BEXT_F32 : BEXT_F64;
    bext_tensor *t = uniform(dev("flex"), x, d);
    double got[3];
    const int threads[3] = {1, 2, 0};
    for (int k = 0; k < 3; k++) {
      int old = bxr_pool_set_threads(threads[k]);
      got[k] = scalar_of(bext_sum(bext_retain(t)));
      bxr_pool_set_threads(old);
    }
    cr_expect(got[0] == got[1] && got[1] == got[2], "%s: %.17g (1 thread) %.17g (2) %.17g (all)",
              bext_dtype_name(d), got[0], got[1], got[2]);
    bext_release(t);
  }
  free(x);
}
