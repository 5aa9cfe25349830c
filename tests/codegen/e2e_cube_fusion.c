/* e2e_cube_fusion.c — `#[cube]` kernels are transparent to Fusion
 * (docs/runtime.md "Fusion", "Kernels of extensions"), end to end over
 * ext/cubefuse.bext, whose methods are implemented here as one launch of
 * a #[cube] kernel each, on Flex and on Cube.
 *
 * Under flex+fusion (and cube:cpu+fusion, cube:vulkan:0+fusion) a loop runs x*2 -> gelu -> +1:
 * the first iteration runs gelu's implementation (Fusion watches its one
 * launch and learns that it is elementwise), the second builds a plan
 * where mul_scalar, gelu's kernel body and add_scalar are one fused
 * kernel (the implementation is no longer called: the call counter says
 * so; the plan dump shows erf inside the fused kernel's IR), the third
 * replays that plan and compiles nothing.  Each is compared with eager
 * flex, in f32 and f64.  reverse_kernel reads element n-1-i: not
 * elementwise, so `reverse` stays an opaque call, run by its
 * implementation every time, still equal to eager.  soft_mix has two
 * inputs, an `if` value and a loop over a local, all copied into the
 * fused kernel. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bext/fusion.h>

#include "cubefuse.h"

static int calls_gelu, calls_reverse, calls_mix;
/* calls made while the random test runs its fusion side, per method */
static bool on_fusion;
static int fusion_calls[3];

/* out = kernel(inputs...), one unit per element, 256 per cube */
static bext_tensor *launch(bool (*k1)(const bext_grid *, bext_tensor *, bext_tensor *),
                           bool (*k2)(const bext_grid *, bext_tensor *, bext_tensor *, bext_tensor *), bext_tensor *a,
                           bext_tensor *b) {
  a = bext_contiguous(a);
  if (b) b = bext_contiguous(b);
  bext_tensor *y = a ? bext_empty(bext_shape(a), bext_rank(a), bext_dtype_of(a), bext_device_of(a)) : NULL;
  int64_t n = y ? bext_numel(y) : 0;
  bext_grid grid = {{(uint32_t)((n + 255) / 256), 1, 1}, {256, 1, 1}};
  bool ok = y && (k1 ? k1(&grid, a, y) : k2(&grid, a, b, y));
  bext_release(a);
  bext_release(b);
  if (!ok) bext_release(y);
  return ok ? y : NULL;
}

bext_tensor *cube_fused_gelu_flex(bext_tensor *x) {
  return calls_gelu++, fusion_calls[0] += on_fusion, launch(gelu_kernel_launch, NULL, x, NULL);
}
bext_tensor *cube_fused_gelu_cube(bext_tensor *x) { return cube_fused_gelu_flex(x); }
bext_tensor *cube_fused_reverse_flex(bext_tensor *x) {
  return calls_reverse++, fusion_calls[1] += on_fusion, launch(reverse_kernel_launch, NULL, x, NULL);
}
bext_tensor *cube_fused_reverse_cube(bext_tensor *x) { return cube_fused_reverse_flex(x); }
bext_tensor *cube_fused_mix_flex(bext_tensor *a, bext_tensor *b) {
  return calls_mix++, fusion_calls[2] += on_fusion, launch(NULL, soft_mix_launch, a, b);
}
bext_tensor *cube_fused_mix_cube(bext_tensor *a, bext_tensor *b) { return cube_fused_mix_flex(a, b); }

enum { N = 1000 };

/* values in [-4, 4), made as dt on dev (no cast: every op of a test is
 * one it counts) */
static bext_tensor *vec(const char *dev, bext_dtype dt, float phase) {
  float v[N];
  double w[N];
  for (int i = 0; i < N; i++) w[i] = v[i] = (float)((i * 37 + (int)(phase * 100)) % 800) / 100.0f - 4.0f;
  bext_tensor *t = bext_from_data(dt == BEXT_F32 ? (void *)v : (void *)w, dt, (int64_t[]){10, 100}, 2,
                                  bext_device_get(dev));
  cr_assert_not_null(t, "%s", bext_last_error());
  return t;
}

/* t (f32 or f64) read into out as doubles (consumes t) */
static void read_f64(bext_tensor *t, double *out) {
  cr_assert_not_null(t, "%s", bext_last_error());
  float v[N];
  bool f32 = bext_dtype_of(t) == BEXT_F32;
  cr_assert(bext_read(t, f32 ? (void *)v : (void *)out, N * (f32 ? sizeof *v : sizeof *out)), "%s", bext_last_error());
  for (int i = 0; f32 && i < N; i++) out[i] = v[i];
  bext_release(t);
}

typedef bext_tensor *(*program_fn)(const char *dev, bext_dtype dt);

static bext_tensor *gelu_chain(const char *dev, bext_dtype dt) {
  return bext_add_scalar(cube_fused_gelu(bext_mul_scalar(vec(dev, dt, 0), 2.0)), 1.0);
}
static bext_tensor *reverse_chain(const char *dev, bext_dtype dt) {
  return bext_add_scalar(cube_fused_reverse(bext_mul_scalar(vec(dev, dt, 0), 2.0)), 1.0);
}
static bext_tensor *mix_chain(const char *dev, bext_dtype dt) {
  bext_tensor *a = bext_mul_scalar(vec(dev, dt, 0), 2.0), *b = bext_add_scalar(vec(dev, dt, 0.5f), 1.0);
  return bext_neg(cube_fused_mix(a, b));
}

static void expect_close(const double *got, const double *want, bext_dtype dt, int it) {
  double tol = dt == BEXT_F32 ? 1e-6 : 1e-12;
  for (int i = 0; i < N; i++)
    cr_assert(fabs(got[i] - want[i]) <= tol * (1.0 + fabs(want[i])), "iteration %d, element %d: %.17g vs eager %.17g",
              it, i, got[i], want[i]);
}

/* Three iterations of prog on dev (a +fusion device) against eager flex;
 * returns the fusion stats' deltas per iteration and the implementation's
 * calls in each. */
static void iterate(program_fn prog, const char *dev, bext_dtype dt, const int *calls, bext_fusion_stat d[3],
                    int ncalls[3]) {
  double want[N], got[N];
  read_f64(prog("flex", dt), want);
  for (int it = 0; it < 3; it++) {
    bext_fusion_stat s0, s1;
    cr_assert(bext_fusion_stats(&s0));
    int c0 = *calls;
    read_f64(prog(dev, dt), got);
    cr_assert(bext_fusion_stats(&s1));
    ncalls[it] = *calls - c0;
    d[it].plans_built = s1.plans_built - s0.plans_built;
    d[it].plans_reused = s1.plans_reused - s0.plans_reused;
    d[it].kernels_compiled = s1.kernels_compiled - s0.kernels_compiled;
    d[it].kernels_launched = s1.kernels_launched - s0.kernels_launched;
    d[it].ops_fused = s1.ops_fused - s0.ops_fused;
    expect_close(got, want, dt, it);
  }
}

/* gelu's kernel learned at the first iteration, fused with its
 * neighbours from the second on, the plan replayed at the third */
static void gelu_fuses(const char *dev, bext_dtype dt) {
  bext_fusion_stat d[3];
  int calls[3];
  iterate(gelu_chain, dev, dt, &calls_gelu, d, calls);
  cr_expect_eq(calls[0], 1, "the first iteration runs the implementation");
  cr_expect_eq(d[0].kernels_launched, 0, "nothing to fuse before the kernel is known");
  cr_expect_eq(calls[1], 0, "the second runs gelu's kernel body inside the fused kernel");
  cr_expect_eq(d[1].plans_built, 1);
  cr_expect_eq(d[1].kernels_compiled, 1, "one kernel: x*2, gelu, +1");
  cr_expect_eq(d[1].kernels_launched, 1);
  cr_expect_eq(d[1].ops_fused, 3);
  cr_expect_eq(calls[2], 0);
  cr_expect_eq(d[2].plans_reused, 1, "the third replays the plan");
  cr_expect_eq(d[2].kernels_compiled, 0, "and compiles nothing");
  cr_expect_eq(d[2].kernels_launched, 1);
  cr_expect_eq(d[2].ops_fused, 3);
}

Test(cube_fusion, gelu_kernel_fuses_with_its_neighbours_f32) { gelu_fuses("flex+fusion", BEXT_F32); }
Test(cube_fusion, gelu_kernel_fuses_with_its_neighbours_f64) { gelu_fuses("flex+fusion", BEXT_F64); }
Test(cube_fusion, gelu_kernel_fuses_on_cube_cpu) { gelu_fuses("cube:cpu+fusion", BEXT_F32); }
/* The same on Vulkan (lavapipe here): the watch, the learned body and the
 * fused kernel go through the device's kernel_prepare / kernel_launch
 * like any other, so nothing here is Vulkan's own. */
Test(cube_fusion, gelu_kernel_fuses_on_cube_vulkan) {
  if (!bext_device_available(bext_device_get("cube:vulkan:0")))
    cr_skip_test("skipped: cube:vulkan:0 is not available here: %s", bext_last_error());
  gelu_fuses("cube:vulkan:0+fusion", BEXT_F32);
}

/* The fused plan's kernel IR holds the #[cube] body (its erf) between
 * the mul and the add of the core ops. */
Test(cube_fusion, the_dumped_plan_holds_the_kernel_body) {
  char dir[] = "/tmp/bext_cube_fusion_XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  setenv("BEXT_FUSION_DUMP", dir, 1);
  bext_fusion_stat d[3];
  int calls[3];
  iterate(gelu_chain, "flex+fusion", BEXT_F32, &calls_gelu, d, calls);
  unsetenv("BEXT_FUSION_DUMP");
  char path[200], text[8192];
  snprintf(path, sizeof path, "%s/plan_0001_kernel_0.kir", dir);   /* the second iteration's plan */
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f, "no %s", path);
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = 0;
  cr_expect_not_null(strstr(text, "fused_3_ops"), "%s", text);
  cr_expect_eq(d[1].ops_fused, 3);
  cr_expect_not_null(strstr(text, "erf"), "the kernel's body is inlined: %s", text);
  cr_expect_null(strstr(text, "len b"), "its guard is gone: %s", text);
  snprintf(path, sizeof path, "rm -rf '%s'", dir);
  cr_expect_eq(system(path), 0);
}

/* gelu's body inside a reduction's loop: sum over dim 1 of gelu(x*2),
 * [10,100] -> [10,1], one kernel for the three ops. */
static bext_tensor *gelu_sum(const char *dev, bext_dtype dt) {
  return bext_sum_dim(cube_fused_gelu(bext_mul_scalar(vec(dev, dt, 0), 2.0)), 1, true);
}

Test(cube_fusion, gelu_kernel_fuses_into_a_reduction) {
  double want[10], got[10];
  for (int it = 0; it < 3; it++) {
    const char *dev = it ? "flex+fusion" : "flex";
    bext_fusion_stat s0, s1;
    cr_assert(bext_fusion_stats(&s0));
    int c0 = calls_gelu;
    bext_tensor *y = gelu_sum(dev, BEXT_F64);
    cr_assert_not_null(y, "%s", bext_last_error());
    cr_assert(bext_read(y, it ? got : want, sizeof got), "%s", bext_last_error());
    bext_release(y);
    cr_assert(bext_fusion_stats(&s1));
    if (it == 2) {   /* the first fusion run learned, the second fuses */
      cr_expect_eq(calls_gelu, c0, "gelu ran inside the reduction's kernel");
      cr_expect_eq(s1.reductions_fused - s0.reductions_fused, 1);
      cr_expect_eq(s1.ops_fused - s0.ops_fused, 3);
    }
    for (int i = 0; it && i < 10; i++)
      cr_assert(fabs(got[i] - want[i]) <= 1e-12 * (1.0 + fabs(want[i])), "iteration %d, row %d: %.17g vs %.17g", it, i,
                got[i], want[i]);
  }
}

/* reverse_kernel is not elementwise: the call stays opaque (run by its
 * implementation every iteration), its neighbours alone, results equal. */
Test(cube_fusion, a_kernel_that_is_not_elementwise_stays_opaque) {
  bext_fusion_stat d[3];
  int calls[3];
  iterate(reverse_chain, "flex+fusion", BEXT_F32, &calls_reverse, d, calls);
  for (int it = 0; it < 3; it++) {
    cr_expect_eq(calls[it], 1, "iteration %d runs the implementation", it);
    cr_expect_eq(d[it].kernels_launched, 0, "iteration %d fuses nothing", it);
  }
  cr_expect_eq(d[2].plans_reused, 1);
}

/* Two inputs, each computed by a core op, an `if` value and a loop: four
 * ops in one kernel. */
Test(cube_fusion, two_inputs_and_control_flow_fuse) {
  bext_fusion_stat d[3];
  int calls[3];
  iterate(mix_chain, "flex+fusion", BEXT_F64, &calls_mix, d, calls);
  cr_expect_eq(calls[0], 1);
  cr_expect_eq(calls[1], 0);
  cr_expect_eq(calls[2], 0);
  cr_expect_eq(d[1].kernels_launched, 1);
  cr_expect_eq(d[1].ops_fused, 4, "mul_scalar, add_scalar, mix, neg");
  cr_expect_eq(d[2].kernels_compiled, 0);
}

/* The user holds gelu's output: it cannot vanish into the add's kernel,
 * so gelu is the root of its own group (with x*2) and is still computed
 * by its body, readable and equal to eager. */
Test(cube_fusion, a_held_output_is_the_root_of_its_group) {
  double want[N], got[N];
  for (int it = 0; it < 2; it++) {
    bext_tensor *g = cube_fused_gelu(bext_mul_scalar(vec("flex+fusion", BEXT_F32, 0), 2.0));
    bext_tensor *z = bext_add_scalar(bext_retain(g), 1.0);
    read_f64(z, got);
    read_f64(g, want);
    for (int i = 0; i < N; i++) cr_assert(fabs(got[i] - (want[i] + 1.0)) <= 1e-6 * (1.0 + fabs(got[i])), "%d", i);
  }
  cr_expect_eq(calls_gelu, 1, "learned at the first iteration, fused at the second");
}

/* ------------------------------------------------ random programs */

/* Random programs mixing the three extension methods with core ops
 * (scalar and broadcast binary ops, transposes, reductions, held
 * intermediates), in f32 and f64, each run on eager flex and twice on
 * flex+fusion (the second run fuses what the first learned), with equal
 * results within 1e-5 of 1 + |a| + |b|. */
static uint64_t rs;
static uint32_t rnd(uint32_t n) {
  rs = rs * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rs >> 33) % n;
}

enum { POOL = 8, MAXEL = 64 };

/* One program on dev: its values' final contents into out (row-major
 * f64), their counts into n[]; returns how many values. */
static int rprogram(uint64_t seed, const char *dev, double out[POOL][MAXEL], int *n) {
  rs = seed;
  bext_dtype dt = rnd(2) ? BEXT_F32 : BEXT_F64;
  int64_t r = 1 + rnd(5), c = 1 + rnd(6);
  bext_tensor *pool[POOL];
  int np = 0;
  for (int i = 0; i < 3; i++) {
    double v[MAXEL];
    float f[MAXEL];
    for (int k = 0; k < r * c; k++) f[k] = (float)(v[k] = (double)rnd(700) / 100.0 - 3.5);
    pool[np++] = bext_from_data(dt == BEXT_F32 ? (void *)f : (void *)v, dt, (int64_t[]){r, c}, 2, bext_device_get(dev));
  }
  int steps = 6 + (int)rnd(8);
  for (int s = 0; s < steps; s++) {
    int i = (int)rnd((uint32_t)np), j = (int)rnd((uint32_t)np);
    bext_tensor *a = pool[i], *y = NULL;
    bool keep = rnd(4) == 0;   /* the input stays in the pool: held by the user */
    if (keep) bext_retain(a);
    switch (rnd(11)) {
    case 0: case 1: y = cube_fused_gelu(a); break;
    case 2: y = cube_fused_reverse(a); break;
    case 3: {   /* mix needs equal shapes: a with a function of itself */
      bext_tensor *a2 = bext_retain(a);   /* before tanh may consume a */
      y = cube_fused_mix(a2, bext_tanh(a));
      break;
    }
    case 4: y = bext_mul_scalar(a, (double)((int)rnd(7) - 3) * 0.5); break;
    case 5: y = bext_add_scalar(a, (double)((int)rnd(7) - 3) * 0.5); break;
    case 6: y = bext_tanh(a); break;
    case 7: y = bext_sigmoid(bext_neg(a)); break;
    case 8:   /* broadcast: a row of the other value's sum over dim 0 */
      y = bext_add(a, bext_mul_scalar(bext_sum_dim(bext_retain(pool[j]), 0, true), 0.25));
      if (!y) bext_clear_error();   /* shapes that do not broadcast (after a transpose): fails on both */
      break;
    case 9: y = bext_transpose(a); break;
    default: y = bext_mean_dim(a, (int)rnd(2), true); break;
    }
    if (!keep) pool[i] = NULL;
    if (!y) continue;
    if (keep || !pool[i]) {
      int slot = keep && np < POOL ? np++ : i;
      if (keep && slot == i) bext_release(a);   /* the pool is full: replace it after all */
      pool[slot] = y;
    } else {
      bext_release(y);
    }
  }
  int nv = 0;
  for (int i = 0; i < np; i++) {
    if (!pool[i]) continue;
    n[nv] = (int)bext_numel(pool[i]);
    cr_assert_leq(n[nv], MAXEL);
    bext_tensor *t = bext_contiguous(pool[i]);   /* transposed values read row-major */
    double v[MAXEL];
    float f[MAXEL];
    bool f32 = bext_dtype_of(t) == BEXT_F32;
    cr_assert(bext_read(t, f32 ? (void *)f : (void *)v, (size_t)n[nv] * (f32 ? 4 : 8)), "%s", bext_last_error());
    for (int k = 0; k < n[nv]; k++) out[nv][k] = f32 ? f[k] : v[k];
    bext_release(t);
    nv++;
  }
  return nv;
}

Test(cube_fusion, random_programs_agree_with_eager_flex) {
  static double want[POOL][MAXEL], got[POOL][MAXEL];
  int nw[POOL], ng[POOL], ran[2][3] = {{0}};
  for (int p = 0; p < 120; p++) {
    uint64_t seed = 0x9E3779B97F4A7C15ull * (uint64_t)(p + 1);
    int nv = rprogram(seed, "flex", want, nw);
    for (int run = 0; run < 2; run++) {
      int c0[3];
      memcpy(c0, fusion_calls, sizeof c0);
      on_fusion = true;
      cr_assert_eq(rprogram(seed, "flex+fusion", got, ng), nv, "program %d", p);
      on_fusion = false;
      for (int k = 0; k < 3; k++) ran[run][k] += fusion_calls[k] - c0[k];
      for (int v = 0; v < nv; v++) {
        cr_assert_eq(ng[v], nw[v], "program %d value %d", p, v);
        for (int k = 0; k < nw[v]; k++) {
          double a = got[v][k], b = want[v][k];
          cr_assert(fabs(a - b) <= 1e-5 * (1 + fabs(a) + fabs(b)), "program %d run %d value %d element %d: %.17g vs %.17g",
                    p, run, v, k, a, b);
        }
      }
    }
  }
  /* the second run of a program records what the first did (the same
   * calls, the same dropped ones): its implementations run less only
   * because calls the first run learned are fused now */
  cr_expect_lt(ran[1][0], ran[0][0], "gelu calls fused: %d implementation runs, %d before", ran[1][0], ran[0][0]);
  cr_expect_lt(ran[1][2], ran[0][2], "mix calls fused: %d implementation runs, %d before", ran[1][2], ran[0][2]);
  cr_expect_eq(ran[1][1], ran[0][1], "reverse never fuses");
  cr_expect_gt(ran[1][1], 0);
}
