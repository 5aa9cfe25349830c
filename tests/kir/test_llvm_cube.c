/* test_llvm_cube.c — kernels written in .bext (tests/kir/cube/,
 * tests/compiler/lang/kernels.bext), checked and lowered by the front end
 * (check_cube.c, lower_kir.c), verified, JIT-compiled and run against the
 * C expression they stand for.  Integer results are compared with
 * bxk_eval_bin, the one home of the ops' scalar semantics. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bxk.h"
#include "bxl.h"
#include "check.h"
#include "cube.h"
#include "diag.h"
#include "llvm_bind.h"
#include "module.h"

static struct bxl_jit *jit;

static void setup(void) {
  struct bxk_diags ds = {0};
  jit = bxl_jit_new(&ds);
  cr_assert(jit, "%s", ds.n ? ds.d[0].msg : "?");
}

static void teardown(void) {
  bxl_jit_free(jit);
  jit = NULL;
}

TestSuite(cube, .init = setup, .fini = teardown);

/* Loads and checks SOURCE_DIR/rel; every diagnostic fails the test. */
static void load(bxc_unit *u, const char *rel) {
  const char *root = getenv("BEXT_SOURCE_DIR");
  cr_assert(root, "BEXT_SOURCE_DIR is not set");
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  bxc_unit_init(u);
  cr_assert_neq(bxc_unit_load(u, path), BXC_LOAD_UNREADABLE, "cannot read %s", path);
  bool ok = bxc_check_unit(u);
  if (u->diags.count) bxc_diag_render_text(stderr, &u->diags, &u->sources);
  cr_assert(ok && u->diags.count == 0, "%s does not check cleanly", rel);
}

static const bxc_cube_kernel *kernel(bxc_unit *u, const char *name) {
  const bxc_cube_set *set = bxc_cube_kernels(u);
  for (uint32_t i = 0; set && i < set->len; i++)
    if (strcmp(set->items[i]->name, name) == 0) return set->items[i];
  cr_assert_fail("no kernel `%s`", name);
  return NULL;
}

/* The instantiation named `inst` of ck, lowered; it must verify. */
static struct bxk_kernel *lower(bxc_unit *u, const bxc_cube_kernel *ck, const char *inst) {
  for (uint32_t i = 0; i < bxc_cube_instance_count(ck); i++) {
    if (strcmp(bxc_cube_instance_name(&u->arena, ck, i), inst) != 0) continue;
    struct bxk_kernel *k = bxc_cube_lower(u, ck, i);
    cr_assert(k, "lowering %s failed", inst);
    struct bxk_diags ds = {0};
    cr_assert(bxk_verify(k, &ds), "%s does not verify: %s", inst, ds.n ? ds.d[0].msg : "?");
    return k;
  }
  cr_assert_fail("no instantiation `%s`", inst);
  return NULL;
}

static bxl_kernel_fn compile(struct bxk_kernel *k) {
  struct bxk_diags ds = {0};
  bxl_kernel_fn fn = bxl_jit_compile(jit, k, &ds);
  cr_assert(fn, "JIT of %s failed: %s", k->name, ds.n ? ds.d[0].msg : "?");
  bxk_kernel_free(k);
  return fn;
}

/* Whole cubes of `dim` units over n: the kernels guard themselves. */
static void run(bxl_kernel_fn fn, struct bxl_binding *b, union bxl_scalar *s, uint32_t n,
                uint32_t dim) {
  struct bxl_grid g = {.cube_count = {(n + dim - 1) / dim, 1, 1}, .cube_dim = {dim, 1, 1}};
  for (uint32_t c = 0; c < g.cube_count[0]; c++) {
    g.cube_pos[0] = c;
    fn(b, s, &g, 0, dim);
  }
}

Test(cube, gelu_matches_the_c_expression) {
  bxc_unit u;
  load(&u, "tests/kir/cube/gelu.bext");
  const bxc_cube_kernel *ck = kernel(&u, "gelu_kernel");
  cr_assert_eq(bxc_cube_instance_count(ck), 2);
  bxl_kernel_fn g32 = compile(lower(&u, ck, "gelu_kernel_f32"));
  bxl_kernel_fn g64 = compile(lower(&u, ck, "gelu_kernel_f64"));
  uint32_t n = 1037;   /* not a multiple of the cube or the vector width */
  float *x = malloc(n * 4), *y = malloc((n + 64) * 4);
  double *xd = malloc(n * 8), *yd = malloc((n + 64) * 8);
  for (uint32_t i = 0; i < n; i++) x[i] = (float)i / 97.0f - 5.0f, xd[i] = x[i];
  memset(y, 0xff, (n + 64) * 4);
  struct bxl_binding b32[2] = {bind(x, n), bind(y, n)}, b64[2] = {bind(xd, n), bind(yd, n)};
  run(g32, b32, NULL, n, 128);
  run(g64, b64, NULL, n, 100);
  for (uint32_t i = 0; i < n; i++) {
    float w = x[i] * 0.5f * (1.0f + erff(x[i] / sqrtf(2.0f)));
    double wd = xd[i] * 0.5 * (1.0 + erf(xd[i] / sqrt(2.0)));
    /* erf may be libmvec's vector variant, within 4 ulp of libm's (a
     * transcendental's last bits are not part of bxk_scalar.h's contract);
     * 1 + erf cancels for x << 0, so the bound is absolute: */
    cr_assert_leq(fabs(y[i] - w), 2 * fabs(x[i]) * FLT_EPSILON + 4 * FLT_EPSILON * fabs(w),
                  "f32 i=%u x=%g: %.9g vs %.9g", i, x[i], y[i], w);
    cr_assert_leq(fabs(yd[i] - wd), 2 * fabs(xd[i]) * DBL_EPSILON + 4 * DBL_EPSILON * fabs(wd), "f64 i=%u", i);
  }
  uint32_t past;
  memcpy(&past, &y[n], 4);
  cr_assert_eq(past, 0xffffffffu, "the guard let a unit write past len");
  free(x), free(y), free(xd), free(yd);
  bxc_unit_free(&u);
}

/* Helpers inlined: a generic helper walks a strided view (here a 3 x 5
 * transpose of a 5 x 3 array), two generic float helpers nest; the
 * result is the C expression in the same order, bit for bit. */
Test(cube, helpers_inline_into_the_kernel) {
  bxc_unit u;
  load(&u, "tests/kir/cube/helper.bext");
  const bxc_cube_set *set = bxc_cube_kernels(&u);
  uint32_t kernels = 0;
  for (uint32_t i = 0; i < set->len; i++) kernels += !set->items[i]->is_helper;
  cr_expect_eq(kernels, 1, "helpers are not kernels");
  const bxc_cube_kernel *ck = kernel(&u, "strided_shift");
  bxl_kernel_fn fn = compile(lower(&u, ck, "strided_shift_f32"));
  float a[15], o[15 + 4];
  for (int i = 0; i < 15; i++) a[i] = (float)i * 0.37f - 2.0f;
  memset(o, 0xff, sizeof o);
  struct bxl_binding bs[2] = {bind(a, 15), bind(o, 15)};
  bs[0].rank = 2, bs[0].shape[0] = 3, bs[0].shape[1] = 5, bs[0].stride[0] = 1, bs[0].stride[1] = 3;
  union bxl_scalar s[1] = {{.f32 = 1.5f}};
  run(fn, bs, s, 15, 8);
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 5; c++) {
      float x = a[r + 3 * c], want = ((x * 2.0f + 1.0f) * 0.5f + 0.0f) * 1.5f;
      cr_expect_eq(o[r * 5 + c], want, "out[%d][%d] = %.9g, want %.9g", r, c, o[r * 5 + c], want);
    }
  uint32_t past;
  memcpy(&past, &o[15], 4);
  cr_expect_eq(past, 0xffffffffu, "the guard let a unit write past len");
  bxc_unit_free(&u);
}

Test(cube, loops_break_continue_return) {
  bxc_unit u;
  load(&u, "tests/kir/cube/loops.bext");
  bxl_kernel_fn fn = compile(lower(&u, kernel(&u, "loops"), "loops"));
  static const float a[] = {1, 2, -1, 0, 5, 3, -2, 7, 0, 4, 1};
  uint32_t na = 11, n = 19;
  float o[19 + 8];
  for (uint32_t i = 0; i < n + 8; i++) o[i] = -7;
  struct bxl_binding bs[2] = {bind((void *)a, na), bind(o, n)};
  run(fn, bs, NULL, n + 5, 8);   /* units past len(out) return */
  for (uint32_t i = 0; i < n; i++) {
    float acc = 0, w = (float)(i + 1);
    int npos = 0;
    for (uint32_t j = 0; j < na; j++) {
      if (a[j] < 0) break;
      acc += a[j] * w;
    }
    for (uint32_t j = 0; j < na; j++)
      if (a[j] > 0) npos++;
    float want = acc + (float)npos * 1000.0f;
    cr_assert_eq(o[i], want, "i=%u: %g vs %g", i, o[i], want);
  }
  for (uint32_t i = n; i < n + 8; i++) cr_assert_eq(o[i], -7, "unit %u ran past its return", i);
  bxc_unit_free(&u);
}

/* affine_mod<I: Int>: out[i] = (x[i] * k + i) % m, wrapping and floored,
 * as bxk_scalar.h says, for each instantiation. */
static void check_affine(bxc_unit *u, const char *inst, enum bxk_type t, int64_t k, int64_t m) {
  bxl_kernel_fn fn = compile(lower(u, kernel(u, "affine_mod"), inst));
  uint32_t n = 301, size = bxk_type_bits(t) / 8;
  unsigned char *x = calloc(n, 8), *o = calloc(n + 16, 8);
  for (uint32_t i = 0; i < n; i++) {
    int64_t v = (int64_t)i * 2654435761ll - 400000000000ll;   /* both signs, large */
    union bxk_lit lit = bxk_lit_norm(t, (union bxk_lit){.i = v});
    memcpy(x + i * size, &lit, size);   /* little-endian: the low bytes */
  }
  struct bxl_binding bs[2] = {bind(x, n), bind(o, n)};
  union bxl_scalar s[2];
  memset(s, 0, sizeof s);
  union bxk_lit lk = bxk_lit_norm(t, (union bxk_lit){.i = k}), lm = bxk_lit_norm(t, (union bxk_lit){.i = m});
  memcpy(&s[0], &lk, size);
  memcpy(&s[1], &lm, size);
  run(fn, bs, s, n, 32);
  for (uint32_t i = 0; i < n; i++) {
    union bxk_lit xi = {.u = 0}, ii, prod, sum, want, got = {.u = 0}, idx = {.u = i};
    memcpy(&xi, x + i * size, size);
    xi = bxk_lit_norm(t, xi);
    cr_assert(bxk_eval_cast(t, BXK_U32, idx, &ii));
    cr_assert(bxk_eval_bin(BXK_OP_MUL, t, xi, lk, &prod));
    cr_assert(bxk_eval_bin(BXK_OP_ADD, t, prod, ii, &sum));
    cr_assert(bxk_eval_bin(BXK_OP_REM, t, sum, lm, &want));
    memcpy(&got, o + i * size, size);
    got = bxk_lit_norm(t, got);
    cr_assert_eq(got.i, want.i, "%s i=%u: %lld vs %lld", inst, i, (long long)got.i,
                 (long long)want.i);
  }
  free(x), free(o);
}

Test(cube, integer_kernel_every_dtype) {
  bxc_unit u;
  load(&u, "tests/kir/cube/int.bext");
  cr_assert_eq(bxc_cube_instance_count(kernel(&u, "affine_mod")), 3);
  check_affine(&u, "affine_mod_i32", BXK_I32, 7, -5);    /* floored: takes m's sign */
  check_affine(&u, "affine_mod_u32", BXK_U32, 3, 1000);
  check_affine(&u, "affine_mod_i64", BXK_I64, -9, 0);    /* x % 0 is 0 */
  bxc_unit_free(&u);
}

/* Every instantiation of the §8 examples lowers to IR that verifies; all
 * compile except cube_sum, whose sync_cube sits inside a `for` (the CPU
 * lowering runs phases split at top-level barriers only: K0013 at the
 * barrier, docs/kernels.md). */
Test(cube, language_examples_lower_and_verify) {
  bxc_unit u;
  load(&u, "tests/compiler/lang/kernels.bext");
  struct bxk_kernel **ks;
  uint32_t n;
  cr_assert(bxc_cube_lower_root(&u, &ks, &n));
  cr_assert_eq(n, 14, "2 gelu + 2 transpose + 4 cube_sum + 5 clamp_scale + 1 first_negative, got %u", n);
  uint32_t compiled = 0, barriers = 0;
  for (uint32_t i = 0; i < n; i++) {
    struct bxk_diags ds = {0};
    cr_assert(bxk_verify(ks[i], &ds), "%s: %s", ks[i]->name, ds.n ? ds.d[0].msg : "?");
    bool has_sync = strncmp(ks[i]->name, "cube_sum_", 9) == 0;
    struct bxk_diags js = {0};
    bxl_kernel_fn fn = bxl_jit_compile(jit, ks[i], &js);
    if (has_sync) {
      cr_assert(!fn && js.n && js.d[0].err == BXK_E_LOWER, "%s: expected K0013", ks[i]->name);
      cr_assert(strstr(js.d[0].msg, "inside if/for/loop"), "%s: %s", ks[i]->name, js.d[0].msg);
      barriers++;
    } else {
      cr_assert(fn, "%s: %s", ks[i]->name, js.n ? js.d[0].msg : "?");
      compiled++;
    }
    bxk_kernel_free(ks[i]);
  }
  free(ks);
  cr_assert_eq(compiled, 10);
  cr_assert_eq(barriers, 4);
  bxc_unit_free(&u);
}

/* clamp_scale<N: Numeric> at f64 and i32: max/min then scale. */
Test(cube, numeric_kernel_float_and_int) {
  bxc_unit u;
  load(&u, "tests/compiler/lang/kernels.bext");
  const bxc_cube_kernel *ck = kernel(&u, "clamp_scale");
  bxl_kernel_fn ff = compile(lower(&u, ck, "clamp_scale_f64"));
  bxl_kernel_fn fi = compile(lower(&u, ck, "clamp_scale_i32"));
  uint32_t n = 77;
  double xd[77], od[77];
  int32_t xi[77], oi[77];
  for (uint32_t i = 0; i < n; i++) xd[i] = (double)i - 30.5, xi[i] = (int32_t)i - 30;
  xd[5] = NAN;
  struct bxl_binding bd[2] = {bind(xd, n), bind(od, n)}, bi[2] = {bind(xi, n), bind(oi, n)};
  union bxl_scalar sd[3] = {{.f64 = -10}, {.f64 = 20}, {.i32 = 3}};
  union bxl_scalar si[3] = {{.i32 = -10}, {.i32 = 20}, {.i32 = -2}};
  run(ff, bd, sd, n, 16);
  run(fi, bi, si, n, 16);
  for (uint32_t i = 0; i < n; i++) {
    if (i == 5) {
      cr_assert(isnan(od[i]), "NaN must win max/min");
    } else {
      double v = fmin(fmax(xd[i], -10), 20);
      cr_assert_eq(od[i], v * 3, "f64 i=%u", i);
    }
    int32_t v = xi[i] < -10 ? -10 : xi[i] > 20 ? 20 : xi[i];
    cr_assert_eq(oi[i], v * -2, "i32 i=%u", i);
  }
  bxc_unit_free(&u);
}
