/* e2e_optimizer.c — custom fusion optimizers (bext/fusion.h), end to end
 * over ext/optim.bext: an optimizer registered by the test recognizes the
 * extension op `affine` (by its id) followed by a `mul_scalar` that is its
 * only reader, and replaces the pair by its own kernel — a C callback, or
 * the file's #[cube] kernel through bext_kernel_launch (the inner device's
 * kernel_prepare / kernel_launch) — reading the ops' scalars when the
 * replacement runs.  Results are compared with the same calls on eager
 * flex; a replayed plan runs with fresh scalars; a pair whose
 * intermediate the user holds is left alone.  Criterion runs each test in
 * its own process, so each registers its own optimizer. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include <bext/fusion.h>

#include "optim.h"

bext_tensor *affine_affine_flex(bext_tensor *x, float a, float b) {
  return bext_add_scalar(bext_mul_scalar(x, a), b);
}

static int runs, refused;

/* affine at i read once, by a mul_scalar: the pair */
static void find_pairs(void *user, bext_fusion_segment *g) {
  const bext_fusion_kernel *k = user;
  int n = bext_fusion_segment_len(g);
  for (int c = 0; c < n; c++) {
    if (strcmp(bext_fusion_op_name(g, c), "mul_scalar")) continue;
    int p = bext_fusion_op_input(g, c, 0);
    if (p < 0 || !bext_fusion_op_method(g, p) || strcmp(bext_fusion_op_name(g, p), "affine")) continue;
    if (!bext_fusion_replace(g, (int[]){p, c}, 2, k)) refused++;
  }
}

/* a, b of the affine, c of the mul_scalar: this run's values */
static bool scalars_of(const bext_fusion_segment *g, const int *mem, float *a, float *b, float *c) {
  bext_ext_scalar s[4];
  if (bext_fusion_op_scalars(g, mem[0], s, 4) != 2 || bext_fusion_op_scalars(g, mem[1], s + 2, 2) != 1) return false;
  cr_expect_str_eq(s[0].name, "a");
  cr_expect_eq(s[0].kind, BEXT_SCALAR_FLOAT);
  *a = (float)s[0].f;
  *b = (float)s[1].f;
  *c = (float)s[2].f;
  return true;
}

static bext_tensor *run_affine_scaled(void *user, const bext_fusion_segment *g, const int *mem, int nmem,
                                      bext_tensor *const *in, int nin) {
  (void)user;
  runs++;
  cr_assert_eq(nmem, 2);
  cr_assert_eq(nin, 1, "one outside input: x");
  float a, b, c;
  cr_assert(scalars_of(g, mem, &a, &b, &c));
  int64_t n = bext_numel(in[0]);
  float *x = malloc((size_t)n * sizeof *x);
  cr_assert(bext_read(in[0], x, (size_t)n * sizeof *x), "%s", bext_last_error());
  for (int64_t i = 0; i < n; i++) x[i] = (x[i] * a + b) * c;
  bext_tensor *y = bext_from_data(x, BEXT_F32, bext_shape(in[0]), bext_rank(in[0]), bext_device_of(in[0]));
  free(x);
  return y;
}

static int kernel_scalars(void *user, const bext_fusion_segment *g, const int *mem, int nmem, bext_kernel_scalar *out,
                          int cap) {
  (void)user;
  (void)nmem;
  runs++;
  float a, b, c;
  if (cap < 3 || !scalars_of(g, mem, &a, &b, &c)) return -1;
  out[0].f32 = a;
  out[1].f32 = b;
  out[2].f32 = c;
  return 3;
}

static const bext_fusion_kernel by_callback = {.run = run_affine_scaled};
static const bext_fusion_kernel by_kernel = {.src = &optim_bext_kernels[0], .scalars = kernel_scalars};

static void reg(const bext_fusion_kernel *k) {
  bext_fusion_optimizer o = {.name = "affine_scaled", .optimize = find_pairs, .user = (void *)k};
  cr_assert(bext_fusion_register_optimizer(&o), "%s", bext_last_error());
}

static bext_tensor *vec(const char *dev) {
  float v[1000];
  for (int i = 0; i < 1000; i++) v[i] = (float)i * 0.25f - 100.0f;
  bext_tensor *t = bext_from_data(v, BEXT_F32, (int64_t[]){10, 100}, 2, bext_device_get(dev));
  cr_assert_not_null(t, "%s", bext_last_error());
  return t;
}

/* (affine(x, a, b) * c) + 1 on dev, read into out */
static void program(const char *dev, float a, float b, float c, float *out) {
  bext_tensor *y = affine_affine(vec(dev), a, b);
  cr_assert_not_null(y, "%s", bext_last_error());
  bext_tensor *z = bext_add_scalar(bext_mul_scalar(y, c), 1.0);
  cr_assert(bext_read(z, out, 1000 * sizeof *out), "%s", bext_last_error());
  bext_release(z);
}

static void against_eager(const bext_fusion_kernel *k) {
  reg(k);
  const float sc[2][3] = {{2.0f, 1.0f, 3.0f}, {-0.5f, 4.0f, 0.25f}};
  for (int it = 0; it < 2; it++) {   /* the second replays the plan with new scalars */
    bext_fusion_stat s0, s1;
    cr_assert(bext_fusion_stats(&s0));
    int r0 = runs;
    float want[1000], got[1000];
    program("flex", sc[it][0], sc[it][1], sc[it][2], want);
    program("flex+fusion", sc[it][0], sc[it][1], sc[it][2], got);
    cr_assert(bext_fusion_stats(&s1));
    cr_expect_eq(runs, r0 + 1, "the replacement ran once");
    cr_expect_geq(s1.ops_fused - s0.ops_fused, 2, "affine and mul_scalar ran as one");
    if (it) cr_expect_eq(s1.plans_reused - s0.plans_reused, 1, "replayed");
    for (int i = 0; i < 1000; i++)
      cr_assert(fabsf(got[i] - want[i]) <= 1e-5f * (1.0f + fabsf(want[i])), "iteration %d, element %d: %g vs %g", it,
                i, got[i], want[i]);
  }
  cr_expect_eq(refused, 0);
}

Test(optimizer, a_c_callback_replaces_an_extension_op_and_its_neighbour) { against_eager(&by_callback); }

Test(optimizer, a_cube_kernel_replaces_an_extension_op_and_its_neighbour) { against_eager(&by_kernel); }

/* The user holds the intermediate: replacing the pair would lose it, so
 * bext_fusion_replace refuses, and the ops run as recorded. */
Test(optimizer, a_held_intermediate_is_not_replaced) {
  reg(&by_callback);
  bext_tensor *y = affine_affine(vec("flex+fusion"), 2.0f, 1.0f);
  bext_tensor *z = bext_mul_scalar(bext_retain(y), 3.0);
  float got[1000], mid[1000];
  cr_assert(bext_read(z, got, sizeof got), "%s", bext_last_error());
  cr_assert(bext_read(y, mid, sizeof mid), "%s", bext_last_error());
  cr_expect_eq(runs, 0, "not replaced");
  cr_expect_eq(refused, 1, "the optimizer asked and was refused");
  cr_expect_eq(got[0], (-100.0f * 2.0f + 1.0f) * 3.0f);
  cr_expect_eq(mid[0], -100.0f * 2.0f + 1.0f);
  bext_release(y);
  bext_release(z);
}

/* A replacement that fails fails the group's value at the read, naming
 * the optimizer and the op it replaced. */
static bext_tensor *broken(void *user, const bext_fusion_segment *g, const int *mem, int nmem, bext_tensor *const *in,
                           int nin) {
  (void)user, (void)g, (void)mem, (void)nmem, (void)in, (void)nin;
  return bext_reshape(bext_retain(in[0]), (int64_t[]){-1}, 1);   /* the wrong shape */
}
static const bext_fusion_kernel by_broken = {.run = broken};

Test(optimizer, a_wrong_replacement_fails_at_the_read) {
  reg(&by_broken);
  bext_tensor *z = bext_mul_scalar(affine_affine(vec("flex+fusion"), 2.0f, 1.0f), 3.0);
  float got[1000];
  cr_expect(!bext_read(z, got, sizeof got));
  cr_expect_str_eq(bext_last_error(),
                   "deferred custom kernel of optimizer `affine_scaled` (replacing `bext_mul_scalar`) failed: it "
                   "returned [1000] f32 on flex, the op it replaces is [10,100] f32 on flex");
  bext_release(z);
  cr_expect(!bext_sync(bext_device_get("flex+fusion")));
}

Test(optimizer, registration_checks_its_argument) {
  cr_expect(!bext_fusion_register_optimizer(&(bext_fusion_optimizer){.name = "x"}));
  cr_expect(strstr(bext_last_error(), "needs a name and an optimize function"), "%s", bext_last_error());
}
