/* test_kernel_sync.c — sync_cube on the CPU (bxl_lower.c runs a cube's
 * units in phases split at top-level barriers), end to end on Flex.
 *
 * The kernel is a shared-memory tree reduction per cube, unrolled for its
 * cube size: every unit stores its element in sh, then log2(D) steps each
 * add sh[u + s] into sh[u] for u < s, each followed by a barrier.  Run
 * without phases (units one after another), unit 0 would add elements
 * that no unit has stored yet: the sums are right only when every barrier
 * is honoured.  The kernel also carries a loaded value and a local (a
 * step counter) across every barrier, and the last cube returns before
 * the first barrier (uniformly), so its outputs must stay untouched. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "bxl.h"
#include "kir_samples.h"

static void no_disk_cache(void) { setenv("BEXT_CACHE_DIR", "off", 1); }
TestSuite(kernel_sync, .init = no_disk_cache);

/* b0 in (f32), b1 sums (f32, one per cube), b2 echo (f32: in * steps, per unit) */
static struct bxk_kernel *tree_sum(uint32_t dim) {
  struct bxk_kernel *k = bxk_kernel_new("tree_sum");
  int in = bxk_add_binding(k, BXK_F32, 1, false), out = bxk_add_binding(k, BXK_F32, 1, true);
  int echo = bxk_add_binding(k, BXK_F32, 1, true);
  int sh = bxk_add_shared(k, BXK_F32, dim);
  int steps = bxk_add_local(k, BXK_F32);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_val u = bxk_topo(&B, BXK_TOPO_UNIT_POS);
  bxk_val cube = bxk_topo(&B, BXK_TOPO_CUBE_POS);
  /* element cube * CUBE_DIM + u: ABSOLUTE_POS is not cube-major on 3-D cubes */
  bxk_val ap = bxk_bin(&B, BXK_OP_ADD, bxk_bin(&B, BXK_OP_MUL, cube, bxk_topo(&B, BXK_TOPO_CUBE_DIM)), u);
  bxk_val lastc = bxk_bin(&B, BXK_OP_SUB, bxk_topo(&B, BXK_TOPO_CUBE_COUNT), bxk_const_i(&B, BXK_U32, 1));
  struct bxk_block *ret;
  bxk_if(&B, bxk_bin(&B, BXK_OP_EQ, cube, lastc), &ret, NULL);   /* uniform: the whole cube */
  struct bxk_builder R = bxk_builder_at(k, ret);
  bxk_return(&R);
  bxk_val x = bxk_load(&B, in, ap);
  bxk_sstore(&B, sh, u, x);
  bxk_sync(&B);
  bxk_val one = bxk_const_f(&B, BXK_F32, 1);
  for (uint32_t s = dim / 2; s >= 1; s /= 2) {
    struct bxk_block *then;
    bxk_if(&B, bxk_bin(&B, BXK_OP_LT, u, bxk_const_i(&B, BXK_U32, s)), &then, NULL);
    struct bxk_builder T = bxk_builder_at(k, then);
    bxk_val other = bxk_bin(&T, BXK_OP_ADD, u, bxk_const_i(&T, BXK_U32, s));
    bxk_val a = bxk_sload(&T, sh, u);
    bxk_val b = bxk_sload(&T, sh, other);
    bxk_sstore(&T, sh, u, bxk_bin(&T, BXK_OP_ADD, a, b));
    bxk_set(&B, steps, bxk_bin(&B, BXK_OP_ADD, bxk_get(&B, steps), one));
    bxk_sync(&B);
  }
  /* x (loaded before the first barrier) and the local survive every phase */
  bxk_store(&B, echo, ap, bxk_bin(&B, BXK_OP_MUL, x, bxk_bin(&B, BXK_OP_ADD, bxk_get(&B, steps), one)));
  struct bxk_block *first;
  bxk_if(&B, bxk_bin(&B, BXK_OP_EQ, u, bxk_const_i(&B, BXK_U32, 0)), &first, NULL);
  struct bxk_builder F = bxk_builder_at(k, first);
  bxk_store(&F, out, cube, bxk_sload(&F, sh, bxk_const_i(&F, BXK_U32, 0)));
  return k;
}

static void check_tree_sum(uint32_t dx, uint32_t dy, uint32_t dz, uint32_t cubes) {
  struct bext_device *d = bxr_device_resolve(bext_device_get("flex"), "test");
  uint32_t dim = dx * dy * dz, nsteps = 0;
  for (uint32_t s = dim / 2; s >= 1; s /= 2) nsteps++;
  struct bxk_kernel *ir = tree_sum(dim);
  struct bxr_kernel *k = d->vt->kernel_prepare(d, ir, 0x5c00 + dim);
  cr_assert_not_null(k, "%s", bext_last_error());
  int64_t n = (int64_t)dim * cubes, nc = cubes;
  float *in = malloc(sizeof(float) * (size_t)n);
  for (int64_t i = 0; i < n; i++) in[i] = (float)((i * 7) % 13) - 6;   /* small ints: exact sums */
  bext_tensor *ti = bext_from_data(in, BEXT_F32, &n, 1, bext_device_get("flex"));
  bext_tensor *ts = bext_full(&nc, 1, -999, BEXT_F32, bext_device_get("flex"));
  bext_tensor *te = bext_full(&n, 1, -999, BEXT_F32, bext_device_get("flex"));
  cr_assert(ti && ts && te, "%s", bext_last_error());
  bext_tensor *bind[3] = {ti, ts, te};
  uint32_t count[3] = {cubes, 1, 1}, cdim[3] = {dx, dy, dz};
  cr_assert(d->vt->kernel_launch(d, k, count, cdim, bind, NULL), "%s", bext_last_error());
  const float *sums = bext_data(ts), *echo = bext_data(te);
  for (uint32_t c = 0; c + 1 < cubes; c++) {
    float want = 0;
    for (uint32_t j = 0; j < dim; j++) want += in[(int64_t)c * dim + j];
    cr_assert_eq(sums[c], want, "cube dim %ux%ux%u, cube %u: sum %g, want %g", dx, dy, dz, c,
                 sums[c], want);
    for (uint32_t j = 0; j < dim; j++) {
      int64_t i = (int64_t)c * dim + j;
      cr_assert_eq(echo[i], in[i] * (float)(nsteps + 1), "cube dim %u, unit %lld: carried %g",
                   dim, (long long)i, echo[i]);
    }
  }
  cr_assert_eq(sums[cubes - 1], -999, "the cube that returned wrote its sum");
  for (uint32_t j = 0; j < dim; j++)
    cr_assert_eq(echo[(int64_t)(cubes - 1) * dim + j], -999, "a unit that returned ran a later phase");
  bext_release(ti), bext_release(ts), bext_release(te);
  free(in);
  bxk_kernel_free(ir);
}

Test(kernel_sync, tree_reduction_honours_barriers) {
  unsigned long split0 = bxr_pool_jobs_split();
  const uint32_t dims[] = {1, 2, 8, 64, 256, 1024};
  for (size_t i = 0; i < sizeof dims / sizeof *dims; i++) check_tree_sum(dims[i], 1, 1, 37);
  check_tree_sum(256, 1, 1, 400);   /* enough work for the pool: cubes on several threads */
  if (bxr_pool_threads() > 1) cr_expect_gt(bxr_pool_jobs_split(), split0, "no launch was split");
}

Test(kernel_sync, tree_reduction_3d_cubes) {
  check_tree_sum(4, 2, 2, 9);
  check_tree_sum(2, 8, 4, 5);
  check_tree_sum(1, 1, 32, 5);
}

Test(kernel_sync, limits_are_named) {
  struct bext_device *d = bxr_device_resolve(bext_device_get("flex"), "test");
  struct bxk_kernel *ir = tree_sum(2048);
  struct bxr_kernel *k = d->vt->kernel_prepare(d, ir, 0x5d00);
  cr_assert_not_null(k, "%s", bext_last_error());
  int64_t n = 2048;
  bext_tensor *t = bext_zeros(&n, 1, BEXT_F32, bext_device_get("flex"));
  bext_tensor *bind[3] = {t, t, t};
  uint32_t count[3] = {1, 1, 1}, dim[3] = {2048, 1, 1};
  cr_assert(!d->vt->kernel_launch(d, k, count, dim, bind, NULL), "a 2048-unit phased cube ran");
  cr_assert(strstr(bext_last_error(), "at most 1024 per cube"), "%s", bext_last_error());
  bext_release(t);
  bxk_kernel_free(ir);
  /* a barrier inside a loop: refused at prepare with K0013 */
  ir = bxk_kernel_new("loop_sync");
  int o = bxk_add_binding(ir, BXK_F32, 1, true);
  struct bxk_builder B = bxk_builder_at(ir, NULL);
  struct bxk_block *body;
  bxk_for(&B, bxk_const_i(&B, BXK_U32, 0), bxk_const_i(&B, BXK_U32, 3), bxk_const_i(&B, BXK_U32, 1), &body);
  struct bxk_builder L = bxk_builder_at(ir, body);
  bxk_sync(&L);
  bxk_store(&B, o, bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS), bxk_const_f(&B, BXK_F32, 0));
  cr_assert_null(d->vt->kernel_prepare(d, ir, 0x5d01));
  cr_assert(strstr(bext_last_error(), "K0013") && strstr(bext_last_error(), "sync_cube inside if/for/loop"),
            "%s", bext_last_error());
  bxk_kernel_free(ir);
}

/* NL locals that only the phase after the barrier touches, one local
 * that both phases do: b0 in, b1 out[u] = in[neighbour] * (1 + ... + NL)
 * + 1.  The private locals must start at zero in that phase and need no
 * spill slot (more than the 64 slots), the shared one must carry its
 * value across; with `cross` every local is touched in both phases and
 * the kernel is refused with K0013, naming the count (81 locals and
 * UNIT_POS, read in both phases). */
#define NL 80
static struct bxk_kernel *private_locals(uint32_t dim, bool cross) {
  struct bxk_kernel *k = bxk_kernel_new("private_locals");
  int in = bxk_add_binding(k, BXK_F32, 1, false), out = bxk_add_binding(k, BXK_F32, 1, true);
  int sh = bxk_add_shared(k, BXK_F32, dim);
  int carried = bxk_add_local(k, BXK_F32), loc[NL];
  for (int j = 0; j < NL; j++) loc[j] = bxk_add_local(k, BXK_F32);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_val u = bxk_topo(&B, BXK_TOPO_UNIT_POS);
  bxk_sstore(&B, sh, u, bxk_load(&B, in, u));
  bxk_set(&B, carried, bxk_const_f(&B, BXK_F32, 1));
  for (int j = 0; cross && j < NL; j++) bxk_set(&B, loc[j], bxk_get(&B, loc[j]));
  bxk_sync(&B);
  bxk_val nb = bxk_bin(&B, BXK_OP_REM, bxk_bin(&B, BXK_OP_ADD, u, bxk_const_i(&B, BXK_U32, 1)),
                       bxk_const_i(&B, BXK_U32, dim));
  bxk_val x = bxk_sload(&B, sh, nb);
  bxk_val sum = bxk_get(&B, carried);
  for (int j = 0; j < NL; j++) {
    bxk_set(&B, loc[j], bxk_bin(&B, BXK_OP_ADD, bxk_get(&B, loc[j]),
                                bxk_bin(&B, BXK_OP_MUL, x, bxk_const_f(&B, BXK_F32, j + 1))));
    sum = bxk_bin(&B, BXK_OP_ADD, sum, bxk_get(&B, loc[j]));
  }
  bxk_store(&B, out, u, sum);
  return k;
}

Test(kernel_sync, phase_private_locals_take_no_slot) {
  struct bext_device *d = bxr_device_resolve(bext_device_get("flex"), "test");
  const uint32_t dim = 16;
  struct bxk_kernel *ir = private_locals(dim, false);
  struct bxr_kernel *k = d->vt->kernel_prepare(d, ir, 0x5e00);
  cr_assert_not_null(k, "%s", bext_last_error());
  int64_t n = dim;
  float in[16];
  for (uint32_t i = 0; i < dim; i++) in[i] = (float)i - 5;
  bext_tensor *ti = bext_from_data(in, BEXT_F32, &n, 1, bext_device_get("flex"));
  bext_tensor *to = bext_full(&n, 1, -999, BEXT_F32, bext_device_get("flex"));
  cr_assert(ti && to, "%s", bext_last_error());
  bext_tensor *bind[2] = {ti, to};
  uint32_t count[3] = {1, 1, 1}, cdim[3] = {dim, 1, 1};
  cr_assert(d->vt->kernel_launch(d, k, count, cdim, bind, NULL), "%s", bext_last_error());
  const float *o = bext_data(to);
  for (uint32_t i = 0; i < dim; i++) {
    float want = in[(i + 1) % dim] * (NL * (NL + 1) / 2) + 1;
    cr_assert_eq(o[i], want, "unit %u: %g, want %g", i, o[i], want);
  }
  bext_release(ti), bext_release(to);
  bxk_kernel_free(ir);
  ir = private_locals(dim, true);
  cr_assert_null(d->vt->kernel_prepare(d, ir, 0x5e01), "81 locals live across a barrier were accepted");
  cr_assert(strstr(bext_last_error(), "K0013") && strstr(bext_last_error(), "82 locals and values"), "%s",
            bext_last_error());
  bxk_kernel_free(ir);
}
