/* e2e_cube_fusion.c — `#[cube]` kernels are transparent to Fusion
 * (docs/runtime.md "Fusion", "Kernels of extensions"), end to end over
 * ext/cubefuse.bext, whose methods are implemented in cubefuse_impl.c as
 * one launch of a #[cube] kernel each, on Flex and on Cube.
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
 * fused kernel.  add_offset, shift_scale and add_steps (an i32 and a
 * bool) take scalar parameters: each
 * is bound to the call's scalar argument it was launched with, and the
 * fused kernel takes it per call, so a replayed plan computes with the
 * new values.  A binding is trusted only once a second call confirms it
 * with another value, so those calls fuse from the third iteration (or
 * earlier when one iteration calls the method twice with different
 * values).  offset_doubled passes `b * 2` and offset_one the constant
 * 1.0 (no argument of the call; equal to b by coincidence at b = 0 and b =
 * 1), and offset_as has a DType argument: all stay opaque. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bext/fusion.h>

#include "cubefuse.h"
#include "cubefuse_impl.h"

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
  iterate(gelu_chain, dev, dt, &cubefuse_calls[CF_GELU], d, calls);
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
  iterate(gelu_chain, "flex+fusion", BEXT_F32, &cubefuse_calls[CF_GELU], d, calls);
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
    int c0 = cubefuse_calls[CF_GELU];
    bext_tensor *y = gelu_sum(dev, BEXT_F64);
    cr_assert_not_null(y, "%s", bext_last_error());
    cr_assert(bext_read(y, it ? got : want, sizeof got), "%s", bext_last_error());
    bext_release(y);
    cr_assert(bext_fusion_stats(&s1));
    if (it == 2) {   /* the first fusion run learned, the second fuses */
      cr_expect_eq(cubefuse_calls[CF_GELU], c0, "gelu ran inside the reduction's kernel");
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
  iterate(reverse_chain, "flex+fusion", BEXT_F32, &cubefuse_calls[CF_REVERSE], d, calls);
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
  iterate(mix_chain, "flex+fusion", BEXT_F64, &cubefuse_calls[CF_MIX], d, calls);
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
  cr_expect_eq(cubefuse_calls[CF_GELU], 1, "learned at the first iteration, fused at the second");
}

/* ------------------------------------------------ scalar parameters */

/* Iteration it of a loop whose scalars change every iteration:
 * ((x*2 + b0) * scale + shift + b1) + 1, where x*2 + b0 and (..) + b1
 * are two calls of `offset` with different scalars. */
static double b0_of(int it) { return 0.25 + it; }
static double b1_of(int it) { return -1.5 * (it + 1); }
static double scale_of(int it) { return 0.5 + 0.25 * it; }
static double shift_of(int it) { return -0.75 * it; }
static bext_tensor *scalar_chain(const char *dev, bext_dtype dt, int it) {
  bext_tensor *x = bext_mul_scalar(vec(dev, dt, 0), 2.0);
  bext_tensor *y = cube_fused_offset(cube_fused_affine(cube_fused_offset(x, b0_of(it)), scale_of(it), shift_of(it)),
                                     b1_of(it));
  return bext_add_scalar(y, 1.0);
}

/* The first iteration learns offset and affine (their implementations
 * run); offset's second call (b1, not b0) confirms offset's binding
 * there, affine's is confirmed by the second iteration (its
 * implementation runs once more, the offsets are fused), the third
 * compiles the five ops as one kernel whose scalar parameters are the
 * calls' arguments, the fourth and fifth replay it with their own
 * scalars: every result equals eager flex at the same scalars and the
 * formula, and consecutive iterations differ. */
static void scalar_kernels_fuse(const char *dev, bext_dtype dt) {
  double want[N], got[N], prev[N];
  double x[N];
  read_f64(vec("flex", BEXT_F64, 0), x);
  double tol = dt == BEXT_F32 ? 1e-6 : 1e-12;
  for (int it = 0; it < 5; it++) {
    read_f64(scalar_chain("flex", dt, it), want);
    bext_fusion_stat s0, s1;
    cr_assert(bext_fusion_stats(&s0));
    int c0 = cubefuse_calls[CF_OFFSET] + cubefuse_calls[CF_AFFINE];
    read_f64(scalar_chain(dev, dt, it), got);
    cr_assert(bext_fusion_stats(&s1));
    int calls = cubefuse_calls[CF_OFFSET] + cubefuse_calls[CF_AFFINE] - c0;
    for (int i = 0; i < N; i++) {
      double f = (x[i] * 2 + b0_of(it)) * scale_of(it) + shift_of(it) + b1_of(it) + 1;
      cr_assert(fabs(got[i] - want[i]) <= tol * (1.0 + fabs(want[i])), "iteration %d, element %d: %.17g vs eager %.17g",
                it, i, got[i], want[i]);
      cr_assert(fabs(got[i] - f) <= 10 * tol * (1.0 + fabs(f)), "iteration %d, element %d: %.17g vs %.17g", it, i,
                got[i], f);
    }
    if (it) cr_expect_neq(memcmp(got, prev, sizeof got), 0, "iteration %d computed with new scalars", it);
    memcpy(prev, got, sizeof got);
    uint64_t built = s1.plans_built - s0.plans_built, reused = s1.plans_reused - s0.plans_reused;
    uint64_t compiled = s1.kernels_compiled - s0.kernels_compiled, launched = s1.kernels_launched - s0.kernels_launched;
    uint64_t fused = s1.ops_fused - s0.ops_fused;
    if (it == 0) {
      cr_expect_eq(calls, 3, "the first iteration runs the implementations (and learns)");
      cr_expect_eq(launched, 0, "nothing to fuse before the kernels are known");
    } else if (it == 1) {
      cr_expect_eq(calls, 1, "the second runs affine's implementation (confirming it), the offsets fused");
      cr_expect_eq(built, 1);
      cr_expect_eq(launched, 2, "x*2 with offset, offset with +1");
      cr_expect_eq(fused, 4);
    } else if (it == 2) {
      cr_expect_eq(calls, 0, "the third runs the kernels' bodies inside the fused kernel");
      cr_expect_eq(built, 1);
      cr_expect_eq(compiled, 1, "one kernel: x*2, offset, affine, offset, +1");
      cr_expect_eq(launched, 1);
      cr_expect_eq(fused, 5);
    } else {
      cr_expect_eq(calls, 0, "iteration %d", it);
      cr_expect_eq(reused, 1, "iteration %d replays the plan", it);
      cr_expect_eq(compiled, 0, "iteration %d compiles nothing", it);
      cr_expect_eq(launched, 1);
      cr_expect_eq(fused, 5);
    }
  }
}

Test(cube_fusion, scalar_kernels_fuse_f32) { scalar_kernels_fuse("flex+fusion", BEXT_F32); }
Test(cube_fusion, scalar_kernels_fuse_f64) { scalar_kernels_fuse("flex+fusion", BEXT_F64); }
Test(cube_fusion, scalar_kernels_fuse_on_cube_cpu) { scalar_kernels_fuse("cube:cpu+fusion", BEXT_F32); }

/* An i32 and a bool parameter: x*2 -> steps(n, up) -> +1 with n and up
 * changing every iteration (up alternating: the replay reads each call's
 * bool too).  The second call confirms both bindings (both values
 * changed), the third fuses, the fourth and fifth replay. */
Test(cube_fusion, integer_and_bool_scalars_fuse) {
  double x[N], want[N], got[N];
  read_f64(vec("flex", BEXT_F64, 0), x);
  for (int it = 0; it < 5; it++) {
    int32_t n = 2 + 3 * it;
    bool up = it % 2 == 0;
    for (int side = 0; side < 2; side++) {
      const char *dev = side ? "flex+fusion" : "flex";
      bext_fusion_stat s0, s1;
      cr_assert(bext_fusion_stats(&s0));
      int c0 = cubefuse_calls[CF_STEPS];
      read_f64(bext_add_scalar(cube_fused_steps(bext_mul_scalar(vec(dev, BEXT_F64, 0), 2.0), n, up), 1.0),
               side ? got : want);
      cr_assert(bext_fusion_stats(&s1));
      if (!side) continue;
      cr_expect_eq(cubefuse_calls[CF_STEPS] - c0, it < 2, "iteration %d: the implementation runs at the first two only", it);
      cr_expect_eq(s1.kernels_launched - s0.kernels_launched, it > 1, "iteration %d", it);
      cr_expect_eq(s1.kernels_compiled - s0.kernels_compiled, it == 2, "iteration %d compiles at the third only", it);
    }
    for (int i = 0; i < N; i++) {
      double f = x[i] * 2 + (up ? n : -n) + 1;
      cr_assert(fabs(got[i] - want[i]) <= 1e-12 * (1.0 + fabs(want[i])), "iteration %d, element %d", it, i);
      cr_assert(fabs(got[i] - f) <= 1e-12 * (1.0 + fabs(f)), "iteration %d, element %d: %.17g vs %.17g", it, i, got[i], f);
    }
  }
}

/* A kernel parameter given something that is not the call's scalar
 * argument (b * 2, the constant 1.0), or a call with an ordinary argument
 * that is no scalar (a DType): opaque, the implementation run every
 * iteration, results equal to eager.  b is b0 + step * it. */
static bext_tensor *offset_as_i32(bext_tensor *x, double b) { return cube_fused_offset_as(x, b, BEXT_I32); }

static void stays_opaque(bext_tensor *(*call)(bext_tensor *, double), const int *counter, double b0, double step) {
  for (int it = 0; it < 4; it++) {
    double want[N], got[N];
    for (int side = 0; side < 2; side++) {
      const char *dev = side ? "flex+fusion" : "flex";
      bext_tensor *x = bext_mul_scalar(vec(dev, BEXT_F32, 0), 2.0);
      bext_tensor *y = call(x, b0 + step * it);
      bext_fusion_stat s0, s1;
      cr_assert(bext_fusion_stats(&s0));
      int c0 = *counter;
      read_f64(bext_add_scalar(y, 1.0), side ? got : want);
      cr_assert(bext_fusion_stats(&s1));
      if (!side) continue;
      cr_expect_eq(*counter - c0, 1, "iteration %d runs the implementation", it);
      cr_expect_eq(s1.kernels_launched - s0.kernels_launched, 0, "iteration %d fuses nothing", it);
    }
    for (int i = 0; i < N; i++)
      cr_assert(fabs(got[i] - want[i]) <= 1e-6 * (1.0 + fabs(want[i])), "iteration %d, element %d: %.9g vs eager %.9g",
                it, i, got[i], want[i]);
  }
}

Test(cube_fusion, a_parameter_not_given_a_scalar_argument_stays_opaque) {
  stays_opaque(cube_fused_offset_doubled, &cubefuse_calls[CF_DOUBLED], 1.5, 1);
}
Test(cube_fusion, an_ordinary_argument_that_is_no_scalar_keeps_the_call_opaque) {
  stays_opaque(offset_as_i32, &cubefuse_calls[CF_AS], 1.5, 1);
}

/* Coincidences: a parameter equal to the call's argument at the first
 * call only (the constant 1.0 while b is 1.0; b * 2 at b = 0) is bound
 * there, pending; the second call, with another b, contradicts it, so
 * the call stays opaque for good (no iteration computes with the wrong
 * scalar, the implementation runs every time). */
Test(cube_fusion, a_constant_equal_to_the_first_argument_stays_opaque) {
  stays_opaque(cube_fused_offset_one, &cubefuse_calls[CF_ONE], 1.0, 0.5);
}
Test(cube_fusion, b_times_two_first_called_at_zero_stays_opaque) {
  stays_opaque(cube_fused_offset_doubled, &cubefuse_calls[CF_DOUBLED], 0, 0.75);
}

/* ------------------------------------------------ random programs */

/* The suite's random programs (tests/runtime/fusion_programs.c: core ops
 * mixed with the extension methods, here in every program and about a
 * third of the steps), each run three times on eager flex and on
 * flex+fusion, the scalars of offset, affine and steps shifted at each
 * run (the salt; the program is the same): the first run learns, the
 * second confirms the scalar bindings with the shifted values (and fuses
 * what needs no confirmation), the third fuses them, replaying plans with
 * other values than they were built at (against eager flex at those
 * values). */
Test(cube_fusion, random_programs_agree_with_eager_flex) {
  int ran[3][CF_PROGRAM_OPS] = {{0}};   /* implementation runs on the fusion side, per run and method */
  uint64_t reused = 0;                  /* plans the third runs replayed */
  for (long p = 0; p < 120; p++) {
    for (int run = 0; run < 3; run++) {
      fzp_config c = {.E = bext_device_get("flex"), .L = bext_device_get("flex+fusion"),
                      .custom = cubefuse_program_ops, .ncustom = CF_PROGRAM_OPS,
                      .custom_weight = 12, .custom_every = 1, .salt = run};
      fzp_tally t = {0};
      int c0[CF_COUNT];
      memcpy(c0, cubefuse_calls, sizeof c0);
      bext_fusion_stat s0, s1;
      cr_assert(bext_fusion_stats(&s0));
      fzp_run_program(&c, 0xC2B2AE3D27D4EB4Full, p, &t);
      cr_assert(bext_fusion_stats(&s1));
      if (run == 2) reused += s1.plans_reused - s0.plans_reused;
      /* every eager call ran its implementation once: the rest ran for Fusion */
      for (int k = 0; k < CF_PROGRAM_OPS; k++) ran[run][k] += cubefuse_calls[k] - c0[k] - (int)t.custom_calls[k];
    }
  }
  /* every run of a program records what the first did (the same calls,
   * the same dropped ones): its implementations run less only because
   * calls learned (and, with scalars, confirmed) before are fused now */
  cr_expect_lt(ran[1][CF_GELU], ran[0][CF_GELU], "gelu calls fused: %d implementation runs, %d before",
               ran[1][CF_GELU], ran[0][CF_GELU]);
  cr_expect_lt(ran[1][CF_MIX], ran[0][CF_MIX], "mix calls fused: %d implementation runs, %d before", ran[1][CF_MIX],
               ran[0][CF_MIX]);
  for (int k = CF_OFFSET; k <= CF_STEPS; k++) {
    cr_expect_lt(ran[2][k], ran[0][k], "%s calls fused: %d implementation runs, %d at first",
                 cubefuse_program_ops[k].name, ran[2][k], ran[0][k]);
    cr_expect_leq(ran[2][k], ran[1][k], "%s: confirmed bindings stay trusted", cubefuse_program_ops[k].name);
  }
  cr_expect_eq(ran[1][CF_REVERSE], ran[0][CF_REVERSE], "reverse never fuses");
  cr_expect_eq(ran[2][CF_REVERSE], ran[0][CF_REVERSE], "reverse never fuses");
  cr_expect_gt(ran[2][CF_REVERSE], 0);
  cr_expect_gt(reused, 0, "the third runs replay plans");
}
