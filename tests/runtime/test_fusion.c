/* test_fusion.c — the "+fusion" decorator (runtime/src/fusion*.c):
 * deferred execution (outputs published at once from the inference rule,
 * work run at a read, a sync, a full stream or a move off the device),
 * errors of deferred work reported at the read or sync naming the op,
 * records nobody can observe dropped, plans cached so a loop's second
 * iteration builds nothing, the cache's cap, the optimizer's groups
 * (seen through BEXT_FUSION_DUMP and bext_fusion_stats): elementwise
 * chains, chains feeding reductions, views inside chains, sigmoid, clamp
 * and int scalar ops, each against eager Flex; and the random program
 * generator (fusion_programs.c):
 * BEXT_FUSION_PROGRAMS (default 10000) programs of mixed core ops and, in
 * one program of four, custom ops (cubefuse's methods, linked in from
 * tests/codegen), each run on flex and on flex+fusion with identical
 * results (bitwise for non-float dtypes, within a tolerance for floats,
 * NaN equal to NaN) and identical error messages for calls that fail at
 * record time; that test is the ctest entry runtime/test_fusion_programs,
 * runtime/test_fusion runs the others (tests/runtime/CMakeLists.txt).
 * The same generator runs 300 programs on ndarray+fusion (core ops) and
 * 300 on cube:vulkan:0+fusion (lavapipe) against eager flex where a
 * Vulkan device exists.
 * The long run: `BEXT_FUSION_PROGRAMS=200000 runtime_test_fusion`
 * (`make test-long`); `BEXT_FUSION_FIRST=N` starts at program N, to
 * reproduce one. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bext/bext.h>

#include "cubefuse_impl.h"
#include "fusion_programs.h"

static const bext_device *dev(const char *spec) {
  const bext_device *d = bext_device_get(spec);
  cr_assert_not_null(d, "%s: %s", spec, bext_last_error());
  return d;
}

static bext_fusion_stat stats(void) {
  bext_fusion_stat s;
  cr_assert(bext_fusion_stats(&s));
  return s;
}

static bext_tensor *f32(const bext_device *d, const float *v, const int64_t *shape, int rank) {
  bext_tensor *t = bext_from_data(v, BEXT_F32, shape, rank, d);
  cr_assert_not_null(t, "%s", bext_last_error());
  return t;
}

/* ------------------------------------------------------------ basics */

Test(fusion, the_device_is_available_over_every_cpu_backend) {
  const char *specs[] = {"flex+fusion", "ndarray+fusion", "flex+fusion+autodiff", "ndarray+fusion+autodiff(balanced)"};
  for (size_t i = 0; i < sizeof specs / sizeof *specs; i++)
    cr_expect(bext_device_available(dev(specs[i])), "%s: %s", specs[i], bext_last_error());
}

Test(fusion, ops_are_deferred_until_a_read) {
  const bext_device *d = dev("flex+fusion");
  cr_assert(bext_sync(d));
  float v[6] = {1, 2, 3, 4, 5, 6};
  bext_tensor *x = f32(d, v, (int64_t[]){2, 3}, 2);
  bext_fusion_stat s0 = stats();
  bext_tensor *y = bext_sum_dim(bext_mul_scalar(bext_exp(bext_retain(x)), 2.0), 1, false);
  cr_assert_not_null(y, "%s", bext_last_error());
  /* the output's spec is there at once, nothing ran yet */
  cr_expect_eq(bext_rank(y), 1);
  cr_expect_eq(bext_shape(y)[0], 2);
  cr_expect_eq(bext_device_of(y), d);
  bext_fusion_stat s1 = stats();
  cr_expect_eq(s1.ops_run, s0.ops_run, "ran before a read");
  float got[2];
  cr_assert(bext_read(y, got, sizeof got), "%s", bext_last_error());
  bext_fusion_stat s2 = stats();
  cr_expect_eq(s2.ops_run - s0.ops_run, 3, "three ops ran at the read");
  for (int r = 0; r < 2; r++) {
    double want = 0;
    for (int c = 0; c < 3; c++) want += 2 * exp(v[r * 3 + c]);
    cr_expect(fabs(got[r] - want) < 1e-3 * want, "row %d: %g vs %g", r, got[r], want);
  }
  /* bext_data cannot hand out lazy memory: it says so instead */
  cr_expect_null(bext_data(y));
  cr_expect(strstr(bext_last_error(), "not host memory"), "%s", bext_last_error());
  bext_release(x);
  bext_release(y);
}

Test(fusion, moving_a_tensor_off_the_device_runs_its_stream) {
  const bext_device *d = dev("flex+fusion");
  float v[4] = {1, -2, 3, -4};
  bext_tensor *y = bext_relu(bext_neg(f32(d, v, (int64_t[]){4}, 1)));
  bext_tensor *z = bext_to_device(y, dev("flex"));
  cr_assert_not_null(z, "%s", bext_last_error());
  const float *p = bext_data(z);
  cr_assert_not_null(p);
  float want[4] = {0, 2, 0, 4};
  cr_expect_arr_eq(p, want, sizeof want);
  bext_release(z);
}

Test(fusion, sync_runs_every_stream_and_a_full_stream_runs_itself) {
  const bext_device *d = dev("flex+fusion");
  cr_assert(bext_sync(d));
  bext_fusion_stat s0 = stats();
  bext_tensor *x = bext_zeros((int64_t[]){3}, 1, BEXT_F32, d);
  for (int i = 0; i < 2500; i++) x = bext_add_scalar(x, 1.0);   /* past the cap (1024) twice */
  cr_assert_not_null(x, "%s", bext_last_error());
  bext_fusion_stat s1 = stats();
  cr_expect_geq(s1.flushes - s0.flushes, 2, "a full stream must run without a read");
  cr_assert(bext_sync(d), "%s", bext_last_error());
  bext_fusion_stat s2 = stats();
  cr_expect_eq(s2.ops_recorded - s0.ops_recorded, 2501);
  float got[3];
  cr_assert(bext_read(x, got, sizeof got));
  cr_expect_eq(got[0], 2500.0f);
  bext_release(x);
}

Test(fusion, unobserved_records_are_dropped_and_nothing_leaks) {
  const bext_device *d = dev("flex+fusion"), *flex = dev("flex");
  cr_assert(bext_sync(d));
  bext_memory m0;
  cr_assert(bext_memory_stats(flex, &m0));
  bext_fusion_stat s0 = stats();
  float v[4096];
  for (int i = 0; i < 4096; i++) v[i] = (float)i;
  bext_tensor *x = f32(d, v, (int64_t[]){4096}, 1);
  bext_tensor *keep = bext_exp(bext_retain(x));
  bext_tensor *lost = bext_sin(bext_cos(x));   /* released below, never read */
  bext_release(lost);
  cr_assert(bext_sync(d), "%s", bext_last_error());
  bext_fusion_stat s1 = stats();
  cr_expect_eq(s1.ops_dropped - s0.ops_dropped, 2, "cos and sin nobody can read");
  cr_expect_eq(s1.ops_run - s0.ops_run, 1);
  bext_release(keep);
  bext_memory m1;
  cr_assert(bext_memory_stats(flex, &m1));
  cr_expect_eq(m1.live_bytes, m0.live_bytes, "deferred values leaked %zu bytes",
               (size_t)(m1.live_bytes - m0.live_bytes));
  /* recorded and released without any sync: the records go at the next one */
  bext_release(bext_exp(bext_ones((int64_t[]){4096}, 1, BEXT_F32, d)));
  cr_assert(bext_sync(d));
  cr_assert(bext_memory_stats(flex, &m1));
  cr_expect_eq(m1.live_bytes, m0.live_bytes);
}

/* ------------------------------------------------------------ errors */

Test(fusion, an_index_error_surfaces_at_the_read_naming_the_op) {
  const bext_device *d = dev("flex+fusion");
  cr_assert(bext_sync(d));
  float v[3] = {1, 2, 3};
  int64_t bad[2] = {1, 7};
  bext_tensor *idx = bext_from_data(bad, BEXT_I64, (int64_t[]){2}, 1, d);
  bext_tensor *g = bext_gather(f32(d, v, (int64_t[]){3}, 1), 0, idx);
  cr_assert_not_null(g, "recording never reads index values: %s", bext_last_error());
  bext_tensor *h = bext_mul_scalar(g, 2.0);   /* computed from the failed value */
  float ok_v[3];
  bext_tensor *fine = bext_neg(f32(d, v, (int64_t[]){3}, 1));
  float got[2];
  cr_expect(!bext_read(h, got, sizeof got));
  const char *e = bext_last_error();
  cr_expect(strstr(e, "deferred op `bext_gather` failed") && strstr(e, "index 7") && strstr(e, "out of range"),
            "message: %s", e);
  /* a value that does not depend on it reads fine */
  cr_expect(bext_read(fine, ok_v, sizeof ok_v), "%s", bext_last_error());
  cr_expect_eq(ok_v[2], -3.0f);
  /* sync reports the failure once, then the device is clean again */
  cr_expect(!bext_sync(d));
  cr_expect(strstr(bext_last_error(), "bext_gather"), "%s", bext_last_error());
  cr_expect(bext_sync(d), "%s", bext_last_error());
  bext_release(h);
  bext_release(fine);
}

Test(fusion, record_time_errors_are_the_eager_ones) {
  const bext_device *d = dev("flex+fusion");
  bext_tensor *a = bext_zeros((int64_t[]){2, 3}, 2, BEXT_F32, d), *b = bext_zeros((int64_t[]){4}, 1, BEXT_F32, d);
  cr_expect_null(bext_add(a, b));
  cr_expect(strstr(bext_last_error(), "bext_add: shapes are not broadcastable"), "%s", bext_last_error());
  cr_expect(bext_sync(d), "an inference error is not a deferred one: %s", bext_last_error());
}

/* ------------------------------------------------------------ plans */

/* One step of a small training-like loop: y = tanh(x * w + b) * lr. */
static float loop_step(const bext_device *d, bext_tensor *x, bext_tensor *w, bext_tensor *b, double lr) {
  bext_tensor *y = bext_mul_scalar(bext_tanh(bext_add(bext_mul(bext_retain(x), bext_retain(w)), bext_retain(b))), lr);
  bext_tensor *l = bext_sum(y);
  float out = 0;
  cr_assert(bext_read(l, &out, sizeof out), "%s", bext_last_error());
  bext_release(l);
  (void)d;
  return out;
}

Test(fusion, the_second_iteration_of_a_loop_builds_nothing) {
  const bext_device *d = dev("flex+fusion");
  float xv[8] = {1, 2, 3, 4, 5, 6, 7, 8}, wv[8] = {.5f, .5f, .5f, .5f, -1, -1, -1, -1}, bv[1] = {0.25f};
  bext_tensor *x = f32(d, xv, (int64_t[]){2, 4}, 2), *w = f32(d, wv, (int64_t[]){2, 4}, 2),
              *b = f32(d, bv, (int64_t[]){1}, 1);
  cr_assert(bext_sync(d));
  bext_fusion_stat s0 = stats();
  float first = loop_step(d, x, w, b, 0.1);
  bext_fusion_stat s1 = stats();
  cr_expect_eq(s1.plans_built - s0.plans_built, 1);
  cr_expect_eq(s1.kernels_compiled - s0.kernels_compiled, 1, "mul, add, tanh, mul_scalar: one kernel");
  float second = loop_step(d, x, w, b, 0.2);   /* a new scalar: out of band */
  bext_fusion_stat s2 = stats();
  cr_expect_eq(s2.plans_built, s1.plans_built, "the second iteration built a plan");
  cr_expect_eq(s2.kernels_compiled, s1.kernels_compiled, "the second iteration compiled a kernel");
  cr_expect_eq(s2.plans_reused - s1.plans_reused, 1);
  cr_expect(fabsf(second - 2 * first) < 1e-5f, "the replay used the new scalar: %g vs 2 x %g", second, first);
  bext_release(x);
  bext_release(w);
  bext_release(b);
}

Test(fusion, a_never_repeating_graph_stops_growing_the_cache) {
  const bext_device *d = dev("ndarray+fusion");   /* a device of its own: an empty cache */
  bext_fusion_stat s0 = stats();
  for (int i = 1; i <= 300; i++) {   /* 300 shapes: 300 different segments */
    bext_tensor *t = bext_sum(bext_exp(bext_ones((int64_t[]){i}, 1, BEXT_F32, d)));
    float v;
    cr_assert(bext_read(t, &v, sizeof v), "%s", bext_last_error());
    cr_expect(fabsf(v - (float)i * expf(1)) < 1e-3f * (float)i);
    bext_release(t);
  }
  bext_fusion_stat s1 = stats();
  cr_expect_leq(s1.plans_built - s0.plans_built, 256, "the cache grew past its cap");
  cr_expect_geq(s1.segments_unplanned - s0.segments_unplanned, 300 - 256);
}

/* ------------------------------------------------------------ optimizer */

static int count_files(const char *dir, const char *suffix, char *last, size_t n) {
  DIR *dd = opendir(dir);
  if (!dd) return 0;
  int k = 0;
  struct dirent *e;
  while ((e = readdir(dd))) {
    size_t l = strlen(e->d_name), s = strlen(suffix);
    if (l > s && !strcmp(e->d_name + l - s, suffix)) {
      k++;
      if (last) snprintf(last, n, "%s/%s", dir, e->d_name);
    }
  }
  closedir(dd);
  return k;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = 0;
  fclose(f);
  return buf;
}

/* The GELU chain (9 ops as written here) becomes one group whose kernel IR verifies; the
 * dump shows it, whether or not the inner device can run IR kernels. */
Test(fusion, an_elementwise_chain_is_one_group_and_the_plan_dumps) {
  char dir[] = "/tmp/bext_fusion_dumpXXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  setenv("BEXT_FUSION_DUMP", dir, 1);
  const bext_device *d = dev("flex+fusion");
  float v[6] = {-2, -1, 0, .5f, 1, 3};
  bext_tensor *x = f32(d, v, (int64_t[]){2, 3}, 2);
  /* x * 0.5 * (1 + tanh(0.79788456 * (x + 0.044715 x^3))) */
  bext_tensor *x3 = bext_mul(bext_mul(bext_retain(x), bext_retain(x)), bext_retain(x));
  bext_tensor *in = bext_mul_scalar(bext_add(bext_retain(x), bext_mul_scalar(x3, 0.044715)), 0.79788456);
  bext_tensor *y = bext_mul(bext_mul_scalar(x, 0.5), bext_add_scalar(bext_tanh(in), 1.0));
  float got[6];
  bext_fusion_stat s0 = stats();
  cr_assert(bext_read(y, got, sizeof got), "%s", bext_last_error());
  bext_fusion_stat s1 = stats();
  unsetenv("BEXT_FUSION_DUMP");
  /* Flex runs IR kernels (kernel_prepare / kernel_launch): the chain ran
   * as one fused kernel */
  cr_expect_eq(s1.kernels_compiled - s0.kernels_compiled, 1);
  cr_expect_eq(s1.kernels_launched - s0.kernels_launched, 1);
  cr_expect_eq(s1.ops_fused - s0.ops_fused, 9);
  for (int i = 0; i < 6; i++) {
    double xx = v[i], want = 0.5 * xx * (1 + tanh(0.79788456 * (xx + 0.044715 * xx * xx * xx)));
    cr_expect(fabs(got[i] - want) < 1e-5, "%d: %g vs %g", i, got[i], want);
  }
  char kir[600], dot[600];
  cr_expect_eq(count_files(dir, ".dot", dot, sizeof dot), 1);
  cr_assert_eq(count_files(dir, ".kir", kir, sizeof kir), 1, "one fused group");
  char *txt = slurp(kir);
  cr_assert_not_null(txt);
  cr_expect(strstr(txt, "fused_9_ops"), "every op of the chain in one kernel:\n%s", txt);
  cr_expect(strstr(txt, "tanh"), "%s", txt);
  txt = slurp(dot);
  cr_expect(strstr(txt, "digraph") && strstr(txt, "cluster_0") && strstr(txt, "tanh"), "%s", txt);
  bext_release(y);
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_expect_eq(system(cmd), 0);
}

/* Legality: a value the user still holds is never folded into a kernel,
 * and a value read twice splits the chain. */
Test(fusion, held_and_shared_values_stay_outside_kernels) {
  char dir[] = "/tmp/bext_fusion_dumpXXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  setenv("BEXT_FUSION_DUMP", dir, 1);
  const bext_device *d = dev("flex+fusion");
  float v[4] = {1, 2, 3, 4};
  bext_tensor *x = f32(d, v, (int64_t[]){4}, 1);
  bext_tensor *a = bext_exp(x);                      /* held by us */
  bext_tensor *b = bext_sin(bext_neg(bext_retain(a)));   /* neg+sin fuse; a does not join */
  float got[4], ga[4];
  cr_assert(bext_read(b, got, sizeof got), "%s", bext_last_error());
  cr_assert(bext_read(a, ga, sizeof ga), "the held value is still readable: %s", bext_last_error());
  unsetenv("BEXT_FUSION_DUMP");
  for (int i = 0; i < 4; i++) {
    cr_expect(fabsf(ga[i] - expf(v[i])) < 1e-4f * expf(v[i]));
    cr_expect(fabsf(got[i] - sinf(-expf(v[i]))) < 1e-4f);
  }
  char kir[600];
  cr_assert_eq(count_files(dir, ".kir", kir, sizeof kir), 1);
  cr_expect(strstr(slurp(kir), "fused_2_ops"), "%s", slurp(kir));
  bext_release(a);
  bext_release(b);
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_expect_eq(system(cmd), 0);
}

/* ------------------------------------------------------ reductions */

/* fzp_agree (fusion_programs.c), then both released. */
static void agree(bext_tensor *e, bext_tensor *l, double tol, const char *what) {
  fzp_agree(e, l, tol, what);
  bext_release(e);
  bext_release(l);
}

/* x [5,7,3] op y [7,1] (broadcast), a scalar op, then the reduction: on
 * flex, and on flex+fusion where the three ops run as one kernel. */
static bext_tensor *red_case(const bext_device *d, bext_dtype dt, const void *xv, const void *yv, int red, int dim,
                             bool keepdim) {
  bext_tensor *x = bext_from_data(xv, dt, (int64_t[]){5, 7, 3}, 3, d), *y = bext_from_data(yv, dt, (int64_t[]){7, 1}, 2, d);
  bool fl = dt == BEXT_F32 || dt == BEXT_F64;
  /* floats: a scalar f32 cannot hold; ints: one past i32 (saturated to
   * i64, then wrapped: Flex's rule) */
  bext_tensor *t = fl ? bext_mul_scalar(bext_add(x, y), 0.3) : bext_add_scalar(bext_mul(x, y), 4294967299.0);
  static bext_tensor *(*const all[5])(bext_tensor *) = {bext_sum, bext_mean, bext_prod, bext_max_all, bext_min_all};
  static bext_tensor *(*const dims[5])(bext_tensor *, int, bool) = {bext_sum_dim, bext_mean_dim, bext_prod_dim, bext_max_dim,
                                                                   bext_min_dim};
  return dim < 0 ? all[red](t) : dims[red](t, dim, keepdim);
}

Test(fusion, every_reduction_fuses_with_the_chain_it_reads) {
  const bext_device *E = dev("flex"), *L = dev("flex+fusion");
  const bext_dtype dts[] = {BEXT_F32, BEXT_F64, BEXT_I32, BEXT_I64, BEXT_U8};
  bext_fusion_stat s0 = stats();
  int cases = 0;
  for (size_t di = 0; di < sizeof dts / sizeof *dts; di++) {
    bext_dtype dt = dts[di];
    unsigned char xv[105 * 8], yv[7 * 8];
    for (int i = 0; i < 105; i++) {
      double v = (double)((i * 37) % 13 - 6) * 0.25;
      if (dt == BEXT_F32) ((float *)xv)[i] = i == 40 ? NAN : (float)v;   /* max/min: NaN wins */
      else if (dt == BEXT_F64) ((double *)xv)[i] = i == 40 ? NAN : v;
      else if (dt == BEXT_I32) ((int32_t *)xv)[i] = (i * 7919) % 201 - 100;
      else if (dt == BEXT_I64) ((int64_t *)xv)[i] = (int64_t)((i * 7919) % 201 - 100) * ((int64_t)1 << 28);
      else xv[i] = (unsigned char)(i * 29);
    }
    for (int i = 0; i < 7; i++) {
      if (dt == BEXT_F32) ((float *)yv)[i] = (float)i * 0.5f - 1;
      else if (dt == BEXT_F64) ((double *)yv)[i] = i * 0.5 - 1;
      else if (dt == BEXT_I32) ((int32_t *)yv)[i] = i - 3;
      else if (dt == BEXT_I64) ((int64_t *)yv)[i] = i - 3;
      else yv[i] = (unsigned char)(i + 250);
    }
    for (int red = 0; red < 5; red++)
      for (int dim = -1; dim < 3; dim++) {
        char what[120];
        snprintf(what, sizeof what, "%s reduction %d over %s %d", bext_dtype_name(dt), red, dim < 0 ? "all" : "dim", dim);
        bool keep = (red + dim) & 1;
        agree(red_case(E, dt, xv, yv, red, dim, keep), red_case(L, dt, xv, yv, red, dim, keep), 1e-6, what);
        cases++;
      }
  }
  bext_fusion_stat s1 = stats();
  cr_expect_eq(s1.reductions_fused - s0.reductions_fused, (uint64_t)cases, "each case one kernel ending in its reduction");
  cr_expect_eq(s1.kernels_launched - s0.kernels_launched, (uint64_t)cases);
  cr_expect_eq(s1.ops_fused - s0.ops_fused, 3 * (uint64_t)cases);
}

/* A reduction with few outputs over a long extent (a whole-tensor sum of
 * 100,000) would run in one unit: it stays Flex's threaded reduction, and
 * its chain fuses on its own. */
Test(fusion, a_long_narrow_reduction_is_not_fused) {
  const bext_device *E = dev("flex"), *L = dev("flex+fusion");
  enum { N = 100000, R = 64, K = 20000 };
  float *v = malloc((size_t)R * K * sizeof *v);
  for (int i = 0; i < R * K; i++) v[i] = (float)(i % 17) * 0.01f;
  bext_tensor *y[2];
  for (int j = 0; j < 2; j++) y[j] = bext_sum(bext_exp(bext_mul_scalar(f32(j ? L : E, v, (int64_t[]){N}, 1), 0.5)));
  bext_fusion_stat s0 = stats();
  agree(y[0], y[1], 1e-6, "sum of 100,000");
  bext_fusion_stat s1 = stats();
  cr_expect_eq(s1.reductions_fused, s0.reductions_fused);
  cr_expect_eq(s1.kernels_launched - s0.kernels_launched, 1, "mul_scalar and exp");
  for (int j = 0; j < 2; j++)   /* a long extent over enough outputs to share out: fused */
    y[j] = bext_sum_dim(bext_exp(bext_mul_scalar(f32(j ? L : E, v, (int64_t[]){R, K}, 2), 0.5)), 1, false);
  agree(y[0], y[1], 1e-6, "64 sums of 20,000");
  bext_fusion_stat s2 = stats();
  cr_expect_eq(s2.reductions_fused - s1.reductions_fused, 1);
  free(v);
}

/* Softmax as core ops: the max and the sum are values of the rows, read
 * back along them by the sub and the division, so the whole of it is one
 * row kernel (one unit per row: a loop for the max, one for the sum of
 * exp(x - max), one storing the quotient); exp(x - max) is stored nowhere. */
static bext_tensor *softmax(bext_tensor *x) {
  bext_tensor *m = bext_max_dim(bext_retain(x), 1, true);
  bext_tensor *e = bext_exp(bext_sub(x, m));
  bext_tensor *s = bext_sum_dim(bext_retain(e), 1, true);
  return bext_div(e, s);
}

Test(fusion, softmax_is_one_row_kernel) {
  char dir[] = "/tmp/bext_fusion_dumpXXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  setenv("BEXT_FUSION_DUMP", dir, 1);
  const bext_device *E = dev("flex"), *L = dev("flex+fusion");
  float v[6 * 37];
  for (int i = 0; i < 6 * 37; i++) v[i] = (float)((i * 11) % 23) * 0.37f - 4;
  bext_fusion_stat s0 = stats();
  agree(softmax(f32(E, v, (int64_t[]){6, 37}, 2)), softmax(f32(L, v, (int64_t[]){6, 37}, 2)), 1e-6, "softmax");
  bext_fusion_stat s1 = stats();
  unsetenv("BEXT_FUSION_DUMP");
  cr_expect_eq(s1.reductions_fused - s0.reductions_fused, 1);
  cr_expect_eq(s1.kernels_launched - s0.kernels_launched, 1);
  cr_expect_eq(s1.ops_fused - s0.ops_fused, 5, "max_dim, sub, exp, sum_dim and div in one kernel");
  char kir[600];
  cr_assert_eq(count_files(dir, ".kir", kir, sizeof kir), 1);
  const char *txt = slurp(kir);
  cr_expect(strstr(txt, "fused_5_ops_div") && strstr(txt, "for ") && strstr(txt, "exp"), "%s", txt);
  cr_expect(!strstr(txt, "b2"), "the input and the output are its only bindings:\n%s", txt);
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_expect_eq(system(cmd), 0);
}

/* Values of a row kernel that the user holds are stored as it computes
 * them: the max (one per row) and exp(x - max) (every element, in the
 * loop of the sum that reads it). */
Test(fusion, softmax_stores_what_the_user_holds) {
  const bext_device *E = dev("flex"), *L = dev("flex+fusion");
  float v[5 * 70];
  for (int i = 0; i < 5 * 70; i++) v[i] = (float)((i * 7) % 31) * 0.29f - 3;
  bext_tensor *m[2], *e[2], *y[2];
  for (int j = 0; j < 2; j++) {
    bext_tensor *x = f32(j ? L : E, v, (int64_t[]){5, 70}, 2);
    m[j] = bext_max_dim(bext_retain(x), 1, true);
    e[j] = bext_exp(bext_sub(x, bext_retain(m[j])));
    bext_tensor *s = bext_sum_dim(bext_retain(e[j]), 1, true);
    y[j] = bext_div(bext_retain(e[j]), s);
  }
  bext_fusion_stat s0 = stats();
  agree(y[0], y[1], 1e-6, "softmax");
  bext_fusion_stat s1 = stats();
  cr_expect_eq(s1.kernels_launched - s0.kernels_launched, 1);
  agree(m[0], m[1], 0, "the max, stored per row");
  agree(e[0], e[1], 1e-6, "exp(x - max), stored by the sum's loop");
}

/* Log-softmax: (x - max) - log(sum(exp(x - max))); the log of the sum is
 * a row value too. */
Test(fusion, log_softmax_is_one_row_kernel) {
  const bext_device *E = dev("flex"), *L = dev("flex+fusion");
  float v[9 * 50];
  for (int i = 0; i < 9 * 50; i++) v[i] = (float)((i * 17) % 41) * 0.23f - 5;
  bext_tensor *y[2];
  for (int j = 0; j < 2; j++) {
    bext_tensor *x = f32(j ? L : E, v, (int64_t[]){9, 50}, 2);
    bext_tensor *m = bext_max_dim(bext_retain(x), 1, true);
    bext_tensor *xm = bext_sub(x, m);
    bext_tensor *ls = bext_log(bext_sum_dim(bext_exp(bext_retain(xm)), 1, true));
    y[j] = bext_sub(xm, ls);
  }
  bext_fusion_stat s0 = stats();
  agree(y[0], y[1], 1e-6, "log-softmax");
  bext_fusion_stat s1 = stats();
  cr_expect_eq(s1.kernels_launched - s0.kernels_launched, 1);
  cr_expect_eq(s1.ops_fused - s0.ops_fused, 6);
}

/* Rows along a middle dim ([outer, K, inner], inner > 1): the row of
 * unit (o, i) is strided, and its values broadcast back along it. */
Test(fusion, row_kernel_over_a_middle_dim) {
  const bext_device *E = dev("flex"), *L = dev("flex+fusion");
  float v[3 * 40 * 5];
  for (int i = 0; i < 3 * 40 * 5; i++) v[i] = (float)((i * 19) % 37) * 0.17f - 2;
  bext_tensor *y[2];
  for (int j = 0; j < 2; j++) {
    bext_tensor *x = f32(j ? L : E, v, (int64_t[]){3, 40, 5}, 3);
    bext_tensor *m = bext_mean_dim(bext_retain(x), 1, true);
    bext_tensor *s = bext_add_scalar(bext_sum_dim(bext_retain(x), 1, true), 100.0);
    y[j] = bext_div(bext_sub(x, m), s);
  }
  bext_fusion_stat s0 = stats();
  agree(y[0], y[1], 1e-6, "(x - mean) / (sum + 100) along dim 1");
  bext_fusion_stat s1 = stats();
  cr_expect_eq(s1.kernels_launched - s0.kernels_launched, 1);
}

/* Max and min keep their exact sequential answers although they reduce
 * in lanes: a row whose max is zero returns the sign of its first zero,
 * and a row with NaNs returns its first NaN, as eager Flex does. */
Test(fusion, max_in_lanes_keeps_the_first_zero_and_nan) {
  const bext_device *E = dev("flex"), *L = dev("flex+fusion");
  enum { C = 70 };
  float v[4 * C];
  for (int i = 0; i < 4 * C; i++) v[i] = -1.0f - (float)(i % 13);
  v[0 * C + 40] = -0.0f, v[0 * C + 41] = 0.0f;   /* row 0: max -0 (the first zero) */
  v[1 * C + 3] = 0.0f, v[1 * C + 50] = -0.0f;    /* row 1: max +0 */
  v[2 * C + 5] = -NAN, v[2 * C + 21] = NAN;      /* row 2: the first NaN (sign bit set) */
  for (int op = 0; op < 2; op++) {
    float got[2][4];
    for (int j = 0; j < 2; j++) {
      bext_tensor *x = bext_mul_scalar(f32(j ? L : E, v, (int64_t[]){4, C}, 2), op ? -1.0 : 1.0);
      bext_tensor *r = op ? bext_min_dim(x, 1, false) : bext_max_dim(x, 1, false);
      cr_assert(bext_read(r, got[j], sizeof got[j]), "%s", bext_last_error());
      bext_release(r);
    }
    for (int i = 0; i < 4; i++) {
      uint32_t a, b;
      memcpy(&a, &got[0][i], 4);
      memcpy(&b, &got[1][i], 4);
      cr_expect_eq(a, b, "%s row %d: fused %g (0x%08x), eager %g (0x%08x)", op ? "min" : "max", i, got[1][i], b,
                   got[0][i], a);
    }
  }
}

/* A row kernel runs where its last record is: a member read by a record
 * outside it before that point keeps the group from forming there, and
 * the results stay right. */
Test(fusion, row_kernel_waits_for_no_outside_reader) {
  const bext_device *E = dev("flex"), *L = dev("flex+fusion");
  float v[4 * 40], w[40 * 3];
  for (int i = 0; i < 4 * 40; i++) v[i] = (float)((i * 5) % 17) * 0.3f - 2;
  for (int i = 0; i < 40 * 3; i++) w[i] = (float)(i % 7) * 0.1f;
  bext_tensor *y[2], *z[2];
  for (int j = 0; j < 2; j++) {
    const bext_device *d = j ? L : E;
    bext_tensor *x = f32(d, v, (int64_t[]){4, 40}, 2);
    bext_tensor *m = bext_max_dim(bext_retain(x), 1, true);
    bext_tensor *e = bext_exp(bext_sub(x, m));
    z[j] = bext_matmul(bext_retain(e), f32(d, w, (int64_t[]){40, 3}, 2));   /* reads e before the sum */
    bext_tensor *s = bext_sum_dim(bext_retain(e), 1, true);
    y[j] = bext_div(e, s);
  }
  agree(y[0], y[1], 1e-6, "softmax");
  agree(z[0], z[1], 1e-5, "exp(x - max) @ w");
}

/* Layer norm as core ops: one row kernel: the mean, then the variance's
 * loop (the centred value squared), then the loop of the normalized,
 * scaled and shifted result (the centred value computed again there). */
static bext_tensor *layer_norm(bext_tensor *x, bext_tensor *w, bext_tensor *b) {
  bext_tensor *m = bext_mean_dim(bext_retain(x), 1, true);   /* before x is consumed */
  bext_tensor *xc = bext_sub(x, m);
  bext_tensor *var = bext_mean_dim(bext_mul(bext_retain(xc), bext_retain(xc)), 1, true);
  bext_tensor *y = bext_mul(xc, bext_rsqrt(bext_add_scalar(var, 1e-5)));
  return bext_add(bext_mul(y, w), b);
}

Test(fusion, layer_norm_is_one_row_kernel) {
  const bext_device *E = dev("flex"), *L = dev("flex+fusion");
  float xv[5 * 33], wv[33], bv[33];
  for (int i = 0; i < 5 * 33; i++) xv[i] = (float)((i * 13) % 29) * 0.21f - 3;
  for (int i = 0; i < 33; i++) wv[i] = 1 + (float)i * 0.01f, bv[i] = (float)i * -0.02f;
  bext_tensor *y[2];
  for (int j = 0; j < 2; j++) {
    const bext_device *d = j ? L : E;
    y[j] = layer_norm(f32(d, xv, (int64_t[]){5, 33}, 2), f32(d, wv, (int64_t[]){33}, 1), f32(d, bv, (int64_t[]){33}, 1));
  }
  bext_fusion_stat s0 = stats();
  agree(y[0], y[1], 1e-5, "layer norm");
  bext_fusion_stat s1 = stats();
  cr_expect_eq(s1.reductions_fused - s0.reductions_fused, 1);
  cr_expect_eq(s1.kernels_launched - s0.kernels_launched, 1, "both means, rsqrt, scale and shift in one kernel");
  cr_expect_eq(s1.ops_fused - s0.ops_fused, 9);
  cr_expect_eq(s1.ops_run - s0.ops_run, 9);
}

/* Legality: a reduction's input read by another op *before* the
 * reduction cannot move into the reduction's kernel (that op would run
 * before the kernel computed it); one held by the user can, stored. */
Test(fusion, a_value_read_before_the_reduction_stays_outside_it) {
  const bext_device *E = dev("flex"), *L = dev("flex+fusion");
  float v[12] = {1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6};
  for (int held = 0; held < 2; held++) {
    bext_tensor *ye[2], *yl[2];
    for (int k = 0; k < 2; k++) {
      const bext_device *d = k ? L : E;
      bext_tensor *e = bext_exp(f32(d, v, (int64_t[]){3, 4}, 2));
      bext_tensor *n = held ? NULL : bext_neg(bext_retain(e));   /* read before the sum */
      bext_tensor *s = bext_sum_dim(held ? bext_retain(e) : e, 0, false);
      (k ? yl : ye)[0] = s;
      (k ? yl : ye)[1] = held ? e : n;
    }
    bext_fusion_stat s0 = stats();
    agree(ye[0], yl[0], 1e-6, "the sum");
    bext_fusion_stat s1 = stats();
    agree(ye[1], yl[1], 1e-6, held ? "the held exp" : "the negation");
    cr_expect_eq(s1.reductions_fused - s0.reductions_fused, (uint64_t)held, "%s", held ? "a held input is stored" : "read before: unfused");
  }
}

/* sigmoid, clamp and integer *_scalar ops fuse, with Flex's results: the
 * int scalar saturated to i64, the op in i64, the result wrapped. */
static bext_tensor *int_chain(const bext_device *d, bext_dtype dt, const void *xv, int variant) {
  bext_tensor *x = bext_from_data(xv, dt, (int64_t[]){16}, 1, d);
  static const double big[] = {3e9, -1e19, 2.5, 1e300};
  double s = big[variant % 4];
  bext_tensor *t = bext_add_scalar(bext_mul_scalar(x, s), 7);
  t = bext_clamp(bext_max_scalar(bext_rem_scalar(t, variant % 2 ? -3 : 5), -s), -40, fabs(s));
  bext_tensor *q = bext_div_scalar(bext_retain(t), variant % 3 ? 0 : -1);   /* before t is consumed */
  return bext_add(q, bext_cast(bext_gt_scalar(t, 2.5), dt));
}

Test(fusion, sigmoid_clamp_and_int_scalars_fuse_with_flex_results) {
  const bext_device *E = dev("flex"), *L = dev("flex+fusion");
  bext_fusion_stat s0 = stats();
  float fv[16];
  for (int i = 0; i < 16; i++) fv[i] = (float)(i - 8) * 1.7f;
  fv[3] = NAN;
  for (int k = 0; k < 2; k++) {   /* relu(clamp(sigmoid(x) * 3 - 1, -0.5, 0.1)) */
    bext_tensor *y[2];
    for (int j = 0; j < 2; j++) {
      bext_tensor *x = f32(j ? L : E, fv, (int64_t[]){16}, 1);
      y[j] = bext_relu(bext_clamp(bext_sub_scalar(bext_mul_scalar(bext_sigmoid(x), 3), 1), -0.5, k ? 0.1 : 1e300));
    }
    agree(y[0], y[1], 1e-6, "sigmoid and clamp");
  }
  bext_fusion_stat s1 = stats();
  cr_expect_eq(s1.ops_fused - s0.ops_fused, 10, "two five-op kernels");
  const bext_dtype dts[] = {BEXT_I32, BEXT_I64, BEXT_U8};
  for (size_t di = 0; di < 3; di++) {
    unsigned char xv[16 * 8];
    for (int i = 0; i < 16; i++) {
      int64_t v = (int64_t)(i * 13 % 17) - 8;
      if (dts[di] == BEXT_I32) ((int32_t *)xv)[i] = (int32_t)v * 100000;
      else if (dts[di] == BEXT_I64) ((int64_t *)xv)[i] = v * ((int64_t)1 << 40);
      else xv[i] = (unsigned char)(v * 31);
    }
    for (int variant = 0; variant < 6; variant++) {
      char what[64];
      snprintf(what, sizeof what, "%s chain, variant %d", bext_dtype_name(dts[di]), variant);
      agree(int_chain(E, dts[di], xv, variant), int_chain(L, dts[di], xv, variant), 0, what);
    }
  }
  bext_fusion_stat s2 = stats();
  cr_expect_eq(s2.kernels_launched - s1.kernels_launched, 2 * 18, "t is read twice: its chain is one kernel, the rest another");
  cr_expect_eq(s2.ops_fused - s1.ops_fused, 9 * 18);
}

/* ------------------------------------------------------ views */

/* Views between elementwise ops are index maps inside the kernel: the
 * chain is not broken and the view is never materialized. */
static bext_tensor *view_chain(bext_tensor *x, bext_tensor *y, int variant, int64_t start) {
  bext_tensor *t = bext_exp(bext_mul_scalar(x, 0.25));                           /* [4,6,5] */
  t = variant & 1 ? bext_swap_dims(t, 0, 2) : bext_permute(t, (int[]){2, 0, 1}, 3);  /* [5,6,4] / [5,4,6] */
  t = bext_reshape(t, (int64_t[]){5, 24}, 2);
  t = bext_slice(bext_sub_scalar(t, 1), (int64_t[]){1, 3}, (int64_t[]){4, 21}, 2);   /* [3,18] */
  t = bext_narrow(bext_flip(bext_neg(t), (int[]){1}, 1), 1, start, 16);   /* [3,16], start a scalar */
  t = bext_add(bext_expand(bext_reshape(t, (int64_t[]){1, 3, 16}, 3), (int64_t[]){2, 3, 16}, 3), y);   /* y [2,1,16] */
  return variant & 2 ? bext_sum_dim(t, 1, false) : bext_tanh(t);
}

Test(fusion, views_inside_a_chain_are_index_maps) {
  char dir[] = "/tmp/bext_fusion_dumpXXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  setenv("BEXT_FUSION_DUMP", dir, 1);
  const bext_device *E = dev("flex"), *L = dev("flex+fusion");
  float xv[120], yv[32];
  for (int i = 0; i < 120; i++) xv[i] = (float)((i * 7) % 19) * 0.3f - 2;
  for (int i = 0; i < 32; i++) yv[i] = (float)i * 0.1f;
  for (int variant = 0; variant < 6; variant++) {
    /* variants 4 and 5 replay 0 and 1 with another narrow start: the
     * start is a scalar, so their plans are 0's and 1's */
    bext_tensor *y[2];
    for (int j = 0; j < 2; j++) {
      const bext_device *d = j ? L : E;
      y[j] = view_chain(f32(d, xv, (int64_t[]){4, 6, 5}, 3), f32(d, yv, (int64_t[]){2, 1, 16}, 3), variant % 4,
                        variant < 4 ? 1 : 2);
    }
    bext_fusion_stat s0 = stats();
    char what[40];
    snprintf(what, sizeof what, "view chain %d", variant);
    agree(y[0], y[1], 1e-6, what);
    bext_fusion_stat s1 = stats();
    cr_expect_eq(s1.kernels_launched - s0.kernels_launched, 1, "variant %d: one kernel", variant);
    cr_expect_eq(s1.ops_fused - s0.ops_fused, 13, "variant %d: every op and view of the chain", variant);
    if (variant >= 4) cr_expect_eq(s1.kernels_compiled, s0.kernels_compiled, "variant %d: replayed", variant);
  }
  unsetenv("BEXT_FUSION_DUMP");
  /* views alone make no kernel: the inner device's views copy nothing */
  float got[120];
  bext_fusion_stat s0 = stats();
  bext_tensor *v = bext_swap_dims(bext_reshape(f32(L, xv, (int64_t[]){4, 6, 5}, 3), (int64_t[]){24, 5}, 2), 0, 1);
  cr_assert(bext_read(v, got, sizeof got), "%s", bext_last_error());
  bext_fusion_stat s1 = stats();
  cr_expect_eq(s1.kernels_launched, s0.kernels_launched);
  cr_expect_eq(got[1], xv[5], "[0][1] of the transpose is [1][0]");
  bext_release(v);
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_expect_eq(system(cmd), 0);
}

/* ------------------------------------------------------ random programs */

/* Program families (fzp_run_programs' key), one per test. */
#define KEY_FLEX 0x9E3779B97F4A7C15ull
#define KEY_NDARRAY 0x5851F42D4C957F2Dull
#define KEY_VULKAN 0x2545F4914F6CDD1Dull

/* One program in CUSTOM_EVERY mixes cubefuse's methods (about a quarter
 * of its steps) with the core ops: they are slower (a #[cube] kernel
 * launch eager, learning and confirming lazily), and the core programs
 * keep the families they had. */
#ifndef CUSTOM_EVERY
#define CUSTOM_EVERY 4
#endif
#ifndef FRESH_CACHE
#define FRESH_CACHE 100
#endif

static fzp_config programs_on(const char *e, const char *l) {
  return (fzp_config){.E = dev(e), .L = dev(l), .custom = cubefuse_program_ops, .ncustom = CF_PROGRAM_OPS,
                      .custom_weight = 7, .custom_every = CUSTOM_EVERY, .fresh_every = FRESH_CACHE};
}

/* Runs n programs of the family key on c, then checks that L recorded
 * them lazily, fused some groups and left others unfused (so the
 * comparisons covered both paths), and that the custom ops ran. */
static fzp_tally programs_agree(const fzp_config *c, uint64_t key, long first, long n, bool fuses) {
  bext_fusion_stat s0 = stats();
  fzp_tally t = {0};
  fzp_run_programs(c, key, first, n, &t);
  bext_fusion_stat s1 = stats();
  cr_expect_gt(s1.ops_recorded - s0.ops_recorded, (uint64_t)t.programs * 4, "the programs ran lazily");
  cr_expect_gt(s1.ops_run - s0.ops_run, s1.ops_fused - s0.ops_fused, "unfused ops ran too");
  if (fuses) {
    cr_expect_gt(s1.kernels_launched - s0.kernels_launched, 0, "no fused kernel ran");
    cr_expect_gt(s1.reductions_fused - s0.reductions_fused, 0, "no chain fused into a reduction");
  } else {
    cr_expect_eq(s1.kernels_launched, s0.kernels_launched, "this device cannot run IR kernels");
  }
  long calls = 0;
  for (int k = 0; k < c->ncustom; k++) {
    cr_expect(t.programs < 40 * CUSTOM_EVERY || t.custom_calls[k] > 0, "%s was never called",
              c->custom[k].name);
    calls += t.custom_calls[k];
  }
  cr_log_info("%ld programs (%ld with custom ops: %ld calls), %ld steps, %ld values compared", t.programs,
              t.custom_programs, calls, t.steps, t.compared);
  return t;
}

/* The suite's 10,000 (BEXT_FUSION_PROGRAMS; BEXT_FUSION_FIRST=N starts at
 * program N, to reproduce one).  No Criterion timeout: its own ctest
 * entry (runtime/test_fusion_programs) has a generous TIMEOUT, and the
 * sanitizer tree runs fewer programs (tests/runtime/CMakeLists.txt). */
Test(fusion, random_programs_agree_with_eager_flex) {
  fzp_config c = programs_on("flex", "flex+fusion");
  long n = fzp_programs_from_env(10000);
  const char *first = getenv("BEXT_FUSION_FIRST");   /* reproducing one program: its number */
  long p0 = first ? strtol(first, NULL, 10) : 0;
  bext_fusion_stat s0 = stats();
  uint64_t lazy0[CF_PROGRAM_OPS];
  for (int k = 0; k < CF_PROGRAM_OPS; k++) lazy0[k] = (uint64_t)cubefuse_calls[k];
  fzp_tally t = programs_agree(&c, KEY_FLEX, p0, n, true);
  bext_fusion_stat s1 = stats();
  cr_expect_gt(s1.ops_dropped - s0.ops_dropped, 0, "some values were never read");
  cr_expect_gt(s1.ops_fused - s0.ops_fused, 0);
  cr_expect_gt(s1.reductions_fused - s0.reductions_fused, (uint64_t)t.programs / 4, "chains fused into reductions: %llu",
               (unsigned long long)(s1.reductions_fused - s0.reductions_fused));
  /* the elementwise methods were learned and fused: Fusion ran their
   * implementations fewer times than the programs called them */
  if (t.programs >= 40 * CUSTOM_EVERY)
    for (int k = 0; k < CF_PROGRAM_OPS; k++) {
      uint64_t lazy = (uint64_t)cubefuse_calls[k] - lazy0[k] - (uint64_t)t.custom_calls[k];
      if (k == CF_REVERSE)
        cr_expect_gt(lazy, 0, "reverse stays an opaque call");
      else
        cr_expect_lt(lazy, (uint64_t)t.custom_calls[k], "%s: %llu implementation runs for Fusion, %ld calls",
                     cubefuse_program_ops[k].name, (unsigned long long)lazy, t.custom_calls[k]);
    }
}

/* The same generator on ndarray+fusion: the decorator is not Flex's, and
 * NdArray runs no IR kernels, so every group runs unfused there (the
 * fallback LibTorch and Remote get).  Core ops only: cubefuse lists no
 * NdArray implementation. */
Test(fusion, random_programs_agree_on_ndarray_unfused) {
  fzp_config c = programs_on("ndarray", "ndarray+fusion");
  c.custom = NULL, c.ncustom = 0, c.fresh_every = 0;
  programs_agree(&c, KEY_NDARRAY, 0, 300, false);
}

/* The same generator on cube:vulkan:0+fusion (lavapipe here) against
 * eager flex: the plans' fused kernels go through the one lowering to
 * Vulkan's kernel_prepare (SPIR-V) and kernel_launch, and what does not
 * fuse runs as the device's stdlib kernels.  Skipped, saying so, where
 * there is no Vulkan device. */
Test(fusion, random_programs_agree_on_cube_vulkan) {
  fzp_config c = programs_on("flex", "cube:vulkan:0+fusion");
  if (!bext_device_available(c.L))
    cr_skip_test("skipped: cube:vulkan:0 is not available here: %s", bext_last_error());
  programs_agree(&c, KEY_VULKAN, 0, 300, true);
}
