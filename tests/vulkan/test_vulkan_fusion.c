/* test_vulkan_fusion.c — Fusion over cube:vulkan:0 (docs/runtime.md
 * "Fusion"): `cube:vulkan:0+fusion` records core ops like any fusion
 * device, and its plans' fused kernels go through the one lowering (the
 * bxk_ builder in fusion_kernel.c) to the inner device's kernel_prepare
 * (IR -> SPIR-V -> pipeline on lavapipe here) and kernel_launch.  Each
 * test runs a program on cube:vulkan:0+fusion and the same program eager
 * on ndarray, compares the values, and asserts from bext_fusion_stats
 * that the chain ran as ONE fused kernel and that a second iteration
 * (new scalars, same shapes) builds and compiles nothing; and that a
 * reduction longer than the device's loop limit (llvmpipe: 65279 trips)
 * is left to the device, which splits it, instead of being fused into a
 * kernel whose loop would stop early.  Without a
 * Vulkan device each test says plainly that it is skipped. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"   /* the device's loop limit */

static const bext_device *vk, *nd;

static void setup(void) {
  cr_assert((nd = bext_device_get("ndarray")), "%s", bext_last_error());
  cr_assert((vk = bext_device_get("cube:vulkan:0+fusion")), "%s", bext_last_error());
  if (!bext_device_available(vk)) cr_skip_test("skipped: cube:vulkan:0 is not available here: %s", bext_last_error());
}

static bext_fusion_stat stats(void) {
  bext_fusion_stat s;
  cr_assert(bext_fusion_stats(&s));
  return s;
}

/* The fusion counters' change between two snapshots. */
static bext_fusion_stat delta(bext_fusion_stat a, bext_fusion_stat b) {
  return (bext_fusion_stat){
      .ops_recorded = b.ops_recorded - a.ops_recorded, .plans_built = b.plans_built - a.plans_built,
      .plans_reused = b.plans_reused - a.plans_reused, .kernels_compiled = b.kernels_compiled - a.kernels_compiled,
      .kernels_launched = b.kernels_launched - a.kernels_launched, .ops_fused = b.ops_fused - a.ops_fused,
      .reductions_fused = b.reductions_fused - a.reductions_fused, .ops_run = b.ops_run - a.ops_run};
}

/* n deterministic values of dt in about [-3, 3) (ints: -50..50). */
static void *data(bext_dtype dt, int64_t n, int salt) {
  void *v = malloc((size_t)n * 8 + 8);
  for (int64_t i = 0; i < n; i++) {
    double x = (double)((i * 7919 + salt * 104729) % 601) / 100.0 - 3.0;
    if (dt == BEXT_F32) ((float *)v)[i] = (float)x;
    else if (dt == BEXT_F64) ((double *)v)[i] = x;
    else ((int32_t *)v)[i] = (int32_t)((i * 37 + salt) % 101) - 50;
  }
  return v;
}

/* Reads got (fused, on vk) and want (eager ndarray) and compares them:
 * ints bitwise, floats within tol of 1 + |a| + |b|.  Releases both. */
static void agree(bext_tensor *got, bext_tensor *want, double tol, const char *what) {
  cr_assert_not_null(got, "%s on cube:vulkan:0+fusion: %s", what, bext_last_error());
  cr_assert_not_null(want, "%s on ndarray: %s", what, bext_last_error());
  cr_expect_eq(bext_device_of(got), vk, "%s: the result is on %s", what, bext_device_name(bext_device_of(got)));
  bext_dtype dt = bext_dtype_of(want);
  cr_assert_eq(bext_dtype_of(got), dt, "%s: dtype", what);
  cr_assert_eq(bext_rank(got), bext_rank(want), "%s: rank", what);
  for (int d = 0; d < bext_rank(got); d++) cr_assert_eq(bext_shape(got)[d], bext_shape(want)[d], "%s: dim %d", what, d);
  size_t n = (size_t)bext_numel(want), bytes = n * bext_dtype_size(dt);
  unsigned char *g = malloc(bytes + 8), *w = malloc(bytes + 8);
  cr_assert(bext_read(got, g, bytes), "%s: reading the fused result: %s", what, bext_last_error());
  cr_assert(bext_read(want, w, bytes), "%s: %s", what, bext_last_error());
  for (size_t i = 0; i < n; i++) {
    if (dt != BEXT_F32 && dt != BEXT_F64) {
      size_t es = bext_dtype_size(dt);
      cr_assert(!memcmp(g + i * es, w + i * es, es), "%s: element %zu differs (bits)", what, i);
      continue;
    }
    double a = dt == BEXT_F32 ? ((float *)g)[i] : ((double *)g)[i];
    double b = dt == BEXT_F32 ? ((float *)w)[i] : ((double *)w)[i];
    cr_assert(fabs(a - b) <= tol * (1 + fabs(a) + fabs(b)), "%s: element %zu: %.9g fused, %.9g eager", what, i, a, b);
  }
  free(g);
  free(w);
  bext_release(got);
  bext_release(want);
}

static bext_tensor *on(const bext_device *d, bext_dtype dt, const void *v, const int64_t *shape, int rank) {
  bext_tensor *t = bext_from_data(v, dt, shape, rank, d);
  cr_assert_not_null(t, "%s: %s", bext_device_name(d), bext_last_error());
  return t;
}

typedef bext_tensor *(*prog_fn)(const bext_device *d, bext_dtype dt, double s);

/* Runs prog twice on vk (scalar s, then 2s: scalars are out of band, so
 * the second replays the first's plan) against ndarray, and checks that
 * each run was ops fused ops in one kernel (a reduction inside when
 * reductions is 1) and that the second built and compiled nothing. */
static void fuses_and_replays(prog_fn prog, bext_dtype dt, double tol, uint64_t ops, uint64_t reductions,
                              const char *what) {
  cr_assert(bext_sync(vk), "%s", bext_last_error());
  bext_fusion_stat d[2];
  for (int it = 0; it < 2; it++) {
    double s = 0.75 * (it + 1);
    bext_fusion_stat s0 = stats();
    bext_tensor *got = prog(vk, dt, s);
    cr_assert_not_null(got, "%s: %s", what, bext_last_error());
    cr_expect_eq(stats().ops_run, s0.ops_run, "%s: recorded, nothing run before the read", what);
    char w[160];
    snprintf(w, sizeof w, "%s (%s, iteration %d)", what, bext_dtype_name(dt), it);
    agree(got, prog(nd, dt, s), tol, w);
    d[it] = delta(s0, stats());
    cr_expect_eq(d[it].kernels_launched, 1, "%s: the chain ran as %llu fused kernels", w,
                 (unsigned long long)d[it].kernels_launched);
    cr_expect_eq(d[it].ops_fused, ops, "%s: %llu ops fused, want %llu", w, (unsigned long long)d[it].ops_fused,
                 (unsigned long long)ops);
    cr_expect_eq(d[it].ops_run, ops, "%s: every op ran inside the kernel", w);
    cr_expect_eq(d[it].reductions_fused, reductions, "%s", w);
  }
  cr_expect_eq(d[0].plans_built, 1, "%s: the first iteration builds its plan", what);
  cr_expect_eq(d[0].kernels_compiled, 1, "%s: and compiles one kernel", what);
  cr_expect_eq(d[1].plans_built, 0, "%s: the second iteration built a plan", what);
  cr_expect_eq(d[1].plans_reused, 1, "%s: the second iteration replays the plan", what);
  cr_expect_eq(d[1].kernels_compiled, 0, "%s: the second iteration compiled %llu kernels", what,
               (unsigned long long)d[1].kernels_compiled);
}

/* x [37,53] and b [53] (broadcast): (tanh(x + b) * s) - exp(-x), six ops
 * whose intermediates are each read once: one kernel. */
static bext_tensor *float_chain(const bext_device *d, bext_dtype dt, double s) {
  void *xv = data(dt, 37 * 53, 1), *bv = data(dt, 53, 2);
  bext_tensor *x = on(d, dt, xv, (int64_t[]){37, 53}, 2), *b = on(d, dt, bv, (int64_t[]){53}, 1);
  free(xv);
  free(bv);
  bext_tensor *l = bext_mul_scalar(bext_tanh(bext_add(bext_retain(x), b)), s);
  return bext_sub(l, bext_exp(bext_neg(x)));
}

Test(vulkan_fusion, an_elementwise_chain_is_one_kernel_f32, .init = setup) {
  fuses_and_replays(float_chain, BEXT_F32, 1e-6, 6, 0, "elementwise chain");
}

Test(vulkan_fusion, an_elementwise_chain_is_one_kernel_f64, .init = setup) {
  fuses_and_replays(float_chain, BEXT_F64, 1e-12, 6, 0, "elementwise chain");
}

/* ints: |x * y - x| + s, the scalar saturated to i64 and the result
 * wrapped as every backend does; equal bit for bit. */
static bext_tensor *int_chain(const bext_device *d, bext_dtype dt, double s) {
  void *xv = data(dt, 41 * 29, 3), *yv = data(dt, 41 * 29, 4);
  bext_tensor *x = on(d, dt, xv, (int64_t[]){41, 29}, 2), *y = on(d, dt, yv, (int64_t[]){41, 29}, 2);
  free(xv);
  free(yv);
  return bext_add_scalar(bext_abs(bext_sub(bext_mul(bext_retain(x), y), x)), s * 4);
}

Test(vulkan_fusion, an_integer_chain_is_one_kernel, .init = setup) {
  fuses_and_replays(int_chain, BEXT_I32, 0, 4, 0, "integer chain");
}

/* sum over dim 1 of exp(x * s) * x, [96,200] -> [96]: the chain runs
 * inside the reduction's loop (96 rows: enough outputs to fuse). */
static bext_tensor *sum_chain(const bext_device *d, bext_dtype dt, double s) {
  void *xv = data(dt, 96 * 200, 5);
  bext_tensor *x = on(d, dt, xv, (int64_t[]){96, 200}, 2);
  free(xv);
  return bext_sum_dim(bext_mul(bext_exp(bext_mul_scalar(bext_retain(x), s * 0.25)), x), 1, false);
}

Test(vulkan_fusion, a_chain_feeding_a_sum_is_one_kernel, .init = setup) {
  fuses_and_replays(sum_chain, BEXT_F32, 1e-5, 4, 1, "chain into sum_dim");
}

/* max over dim 0 of (x - s)^2 read through a transpose: a view inside the
 * chain is an index map, [120,70] -> [1,120] kept. */
static bext_tensor *max_chain(const bext_device *d, bext_dtype dt, double s) {
  void *xv = data(dt, 120 * 70, 6);
  bext_tensor *x = on(d, dt, xv, (int64_t[]){120, 70}, 2);
  free(xv);
  bext_tensor *c = bext_sub_scalar(bext_transpose(x), s);
  return bext_max_dim(bext_mul(bext_retain(c), c), 0, true);
}

Test(vulkan_fusion, a_chain_through_a_view_feeding_a_max_is_one_kernel, .init = setup) {
  fuses_and_replays(max_chain, BEXT_F64, 1e-12, 4, 1, "transpose chain into max_dim");
}

/* Softmax as core ops (max_dim, sub, exp, sum_dim, div): one row kernel,
 * the max and the sum read back along each row; scaled by s first. */
static bext_tensor *softmax(const bext_device *d, bext_dtype dt, double s) {
  void *xv = data(dt, 80 * 300, 7);
  bext_tensor *x = bext_mul_scalar(on(d, dt, xv, (int64_t[]){80, 300}, 2), s);
  free(xv);
  bext_tensor *m = bext_max_dim(bext_retain(x), 1, true);
  bext_tensor *e = bext_exp(bext_sub(x, m));
  bext_tensor *sum = bext_sum_dim(bext_retain(e), 1, true);
  return bext_div(e, sum);
}

Test(vulkan_fusion, softmax_is_one_row_kernel, .init = setup) {
  fuses_and_replays(softmax, BEXT_F32, 1e-6, 6, 1, "softmax");
}

/* sum over rows of 70000 (> llvmpipe's 65279-trip loops): Fusion leaves
 * the reduction to the device (which runs it in two stages) and fuses
 * nothing into it; the value is whole.  On a device without a loop limit
 * the chain fuses as any other. */
static bext_tensor *long_rows(const bext_device *d, bext_dtype dt, double s) {
  enum { R = 64, K = 70000 };
  float *v = malloc(sizeof(float) * R * K);
  for (int64_t i = 0; i < (int64_t)R * K; i++) v[i] = (float)(i % 7) - 3.0f;
  bext_tensor *x = on(d, dt, v, (int64_t[]){R, K}, 2);
  free(v);
  return bext_sum_dim(bext_add_scalar(bext_mul_scalar(x, s), 1.0), 1, false);
}

Test(vulkan_fusion, a_reduction_longer_than_a_loop_may_run_is_not_fused, .init = setup) {
  const struct bext_device *base = bext_device_get("cube:vulkan:0");
  uint32_t lim = base->loop_max;
  bext_fusion_stat s0 = stats();
  agree(long_rows(vk, BEXT_F32, 0.5), long_rows(nd, BEXT_F32, 0.5), 1e-5, "sum_dim over rows of 70000");
  bext_fusion_stat d = delta(s0, stats());
  if (lim && lim < 70000) {
    cr_expect_eq(d.reductions_fused, 0, "a row of 70000 fused on a device whose loops stop after %u trips", lim);
    cr_expect_eq(d.ops_fused, 2, "the chain before it still fuses: %llu", (unsigned long long)d.ops_fused);
  } else {
    cr_expect_eq(d.reductions_fused, 1, "no loop limit here: the whole chain fuses");
  }
}
