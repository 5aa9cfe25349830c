/* test_cube.c — the cube:cpu device (backends/cube): the stdlib kernels
 * embedded in libbext, and the elementwise kernels against the NdArray
 * reference over random shapes, layouts and values.
 *
 *   - every embedded instantiation (bextc --emit=kir-c at build time)
 *     deserializes, verifies, carries the current format version and a
 *     unique name;
 *   - differential: random shapes (rank 0..4, empty and odd extents that
 *     are no multiple of a vector width), contiguous, strided (transposed,
 *     sliced) and broadcast operands, for unary, binary, `_scalar`,
 *     comparison, bool, cast and mask kernels, each against ndarray:
 *     integers and bools equal, floats within a few ulps;
 *   - an instantiation is prepared once per device (a second use compiles
 *     and loads nothing);
 *   - named errors: f16, ops not implemented yet, unknown instantiations,
 *     cube targets this build does not have. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cube/cube.h"

static const bext_device *cube, *nd;

static void setup(void) {
  cr_assert((cube = bext_device_get("cube:cpu")), "%s", bext_last_error());
  cr_assert((nd = bext_device_get("ndarray")), "%s", bext_last_error());
}

/* ------------------------------------------------------ embedded kernels */

Test(cube_stdlib, every_embedded_instantiation_verifies) {
  uint32_t n = cube_stdlib_count();
  cr_assert_gt(n, 500, "the stdlib has the elementwise, convert and create kernels (%u)", n);
  for (uint32_t i = 0; i < n; i++) {
    const bext_kernel_src *e = cube_stdlib_row(i);
    cr_assert(e && e->name && e->ir && e->size > 12, "row %u", i);
    cr_expect_eq(memcmp(e->ir, "BXKIR\0", 6), 0, "%s: magic", e->name);
    cr_expect_eq(e->ir[6] | e->ir[7] << 8, BXK_FORMAT_VERSION, "%s: format version", e->name);
    struct bxk_diags ds = {0};
    struct bxk_kernel *k = bxk_deserialize(e->ir, e->size, &ds);
    cr_assert(k, "%s does not deserialize", e->name);
    cr_expect(bxk_verify(k, &ds), "%s does not verify: %s", e->name, ds.n ? ds.d[0].msg : "");
    cr_expect_str_eq(k->name, e->name);
    /* comptime branches were folded away: no `if` on a constant is left */
    cr_expect_eq(bxk_fold(k), 0, "%s: the embedded IR is not folded", e->name);
    bxk_kernel_free(k);
    for (uint32_t j = 0; j < i; j++) cr_expect_str_neq(cube_stdlib_row(j)->name, e->name);
  }
}

/* One instantiation is prepared once per device: the second use of an op
 * neither compiles nor loads anything. */
Test(cube_stdlib, prepared_once_per_device, .init = setup) {
  int64_t n = 77;
  bext_tensor *a = bext_full(&n, 1, 1.5, BEXT_F64, cube);
  cr_assert(a, "%s", bext_last_error());
  bext_retain(a);
  bext_tensor *b = bext_mul_scalar(a, 3.0);
  cr_assert(b, "%s", bext_last_error());
  struct bxr_kernel_stats s0, s1;
  bxr_kernel_cpu_stats(&s0);
  bext_retain(a);
  bext_tensor *c = bext_mul_scalar(a, 5.0);
  cr_assert(c, "%s", bext_last_error());
  bxr_kernel_cpu_stats(&s1);
  cr_expect_eq(s1.compiles + s1.disk_hits + s1.memory_hits, s0.compiles + s0.disk_hits + s0.memory_hits,
               "the second mul_scalar went back to kernel_prepare");
  double got[77];
  cr_assert(bext_read(c, got, sizeof got));
  for (int i = 0; i < 77; i++) cr_expect_eq(got[i], 7.5);
  bext_release(a), bext_release(b), bext_release(c);
}

/* ----------------------------------------------------------- differential */

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t next(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}
static int pick(int n) { return (int)(next() % (uint64_t)n); }

/* A value of dt: floats include negatives, zeros, NaN and infinities now
 * and then; ints span the type (u8 wraps). */
static double value(bext_dtype dt) {
  int r = pick(40);
  if (bext_dtype_kind(dt) == BEXT_KIND_FLOAT) {
    if (r == 0) return NAN;
    if (r == 1) return INFINITY;
    if (r == 2) return -0.0;
    return ((double)pick(20001) - 10000) / 997.0;
  }
  if (dt == BEXT_BOOL) return r & 1;
  if (dt == BEXT_U8) return pick(256);
  if (r == 0) return dt == BEXT_I32 ? -2147483648.0 : -9.2e18;
  return pick(2001) - 1000;
}

struct shape {
  int rank;
  int64_t s[BEXT_MAX_RANK];
};

static struct shape random_shape(void) {
  static const int64_t ext[] = {1, 2, 3, 5, 7, 9, 17, 33, 0};
  struct shape sh = {.rank = pick(5)};
  for (int d = 0; d < sh.rank; d++) sh.s[d] = ext[pick(pick(12) == 0 ? 9 : 8)];
  return sh;
}

enum layout { L_CONTIG, L_TRANS, L_SLICED, L_BCAST, L_COUNT };

/* The same tensor of `sh` on ndarray (*r) and cube (*c), laid out by lay:
 * a transposed view (swap_dims of the swapped shape), a slice of a larger
 * tensor, or (L_BCAST) a tensor with some extents 1 that the op
 * broadcasts.  Values from the test's generator. */
static void make_pair(bext_dtype dt, struct shape sh, enum layout lay, bext_tensor **r, bext_tensor **c) {
  struct shape base = sh;
  if (lay == L_BCAST)
    for (int d = 0; d < sh.rank; d++)
      if (pick(2)) base.s[d] = 1;
  if (lay == L_TRANS && sh.rank >= 2) {
    base.s[0] = sh.s[sh.rank - 1];
    base.s[sh.rank - 1] = sh.s[0];
  }
  if (lay == L_SLICED && sh.rank >= 1) base.s[sh.rank - 1] = sh.s[sh.rank - 1] + 3;
  int64_t n = 1;
  for (int d = 0; d < base.rank; d++) n *= base.s[d];
  unsigned char *buf = calloc((size_t)(n ? n : 1), 8);
  for (int64_t i = 0; i < n; i++) {
    double v = value(dt);
    switch (dt) {
    case BEXT_F32: ((float *)buf)[i] = (float)v; break;
    case BEXT_F64: ((double *)buf)[i] = v; break;
    case BEXT_I32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case BEXT_I64: ((int64_t *)buf)[i] = (int64_t)v; break;
    default: buf[i] = (unsigned char)v; break;
    }
  }
  const bext_device *devs[2] = {nd, cube};
  bext_tensor **outs[2] = {r, c};
  for (int k = 0; k < 2; k++) {
    bext_tensor *t = bext_from_data(buf, dt, base.s, base.rank, devs[k]);
    cr_assert(t, "%s", bext_last_error());
    if (lay == L_TRANS && sh.rank >= 2) t = bext_swap_dims(t, 0, sh.rank - 1);
    if (lay == L_SLICED && sh.rank >= 1) t = bext_narrow(t, sh.rank - 1, 1, sh.s[sh.rank - 1]);
    cr_assert(t, "%s", bext_last_error());
    *outs[k] = t;
  }
  free(buf);
}

/* Equal for ints and bools; floats: NaN for NaN, the same infinity, else
 * within 8 ulps of the reference (ndarray computes in double). */
static void same(const bext_tensor *got, const bext_tensor *want, const char *what) {
  cr_assert_eq(bext_dtype_of(got), bext_dtype_of(want), "%s: dtype", what);
  cr_assert_eq(bext_rank(got), bext_rank(want), "%s: rank", what);
  int64_t n = bext_numel(want);
  cr_assert_eq(bext_numel(got), n, "%s: numel", what);
  /* both through ndarray's cast, so the device's own cast is not the judge */
  bext_retain((bext_tensor *)got);
  bext_retain((bext_tensor *)want);
  bext_tensor *g64 = bext_cast(bext_to_device((bext_tensor *)got, nd), BEXT_F64);
  bext_tensor *w64 = bext_cast((bext_tensor *)want, BEXT_F64);
  cr_assert(g64 && w64, "%s", bext_last_error());
  double *g = malloc((size_t)(n ? n : 1) * 8), *w = malloc((size_t)(n ? n : 1) * 8);
  cr_assert(bext_read(g64, g, (size_t)n * 8) && bext_read(w64, w, (size_t)n * 8));
  bool flt = bext_dtype_kind(bext_dtype_of(want)) == BEXT_KIND_FLOAT;
  double eps = bext_dtype_of(want) == BEXT_F32 ? 8 * 1.2e-7 : 8 * 2.3e-16;
  for (int64_t i = 0; i < n; i++) {
    bool ok = g[i] == w[i] || (isnan(g[i]) && isnan(w[i]));
    if (!ok && flt && isfinite(w[i])) ok = fabs(g[i] - w[i]) <= eps * fabs(w[i]) + 1e-300;
    if (!ok) {
      cr_expect(false, "%s: element %lld is %.17g, want %.17g", what, (long long)i, g[i], w[i]);
      break;
    }
  }
  free(g), free(w);
  bext_release(g64), bext_release(w64);
}

typedef bext_tensor *(*un_fn)(bext_tensor *);
typedef bext_tensor *(*bin_fn)(bext_tensor *, bext_tensor *);

#define TRIALS 24

static void diff_unary(const char *name, un_fn f, bext_dtype dt) {
  for (int t = 0; t < TRIALS; t++) {
    struct shape sh = random_shape();
    enum layout lay = (enum layout)pick(L_BCAST);   /* no broadcast for one operand */
    bext_tensor *r, *c;
    make_pair(dt, sh, lay, &r, &c);
    bext_tensor *want = f(r), *got = f(c);
    cr_assert(want, "%s on ndarray: %s", name, bext_last_error());
    cr_assert(got, "%s on cube:cpu: %s", name, bext_last_error());
    char what[96];
    snprintf(what, sizeof what, "%s %s rank %d layout %d", name, bext_dtype_name(dt), sh.rank, lay);
    same(got, want, what);
    bext_release(want), bext_release(got);
  }
}

static void diff_binary(const char *name, bin_fn f, bext_dtype dt) {
  for (int t = 0; t < TRIALS; t++) {
    struct shape sh = random_shape();
    enum layout la = (enum layout)pick(L_COUNT), lb = (enum layout)pick(L_COUNT);
    if (la == L_BCAST && lb == L_BCAST) lb = L_CONTIG;   /* the output keeps sh */
    bext_tensor *ra, *ca, *rb, *cb;
    make_pair(dt, sh, la, &ra, &ca);
    make_pair(dt, sh, lb, &rb, &cb);
    bext_tensor *want = f(ra, rb), *got = f(ca, cb);
    cr_assert(want, "%s on ndarray: %s", name, bext_last_error());
    cr_assert(got, "%s on cube:cpu: %s", name, bext_last_error());
    char what[96];
    snprintf(what, sizeof what, "%s %s rank %d layouts %d %d", name, bext_dtype_name(dt), sh.rank, la, lb);
    same(got, want, what);
    bext_release(want), bext_release(got);
  }
}

static double scalar_arg;
static bext_tensor *sigmoid_(bext_tensor *t) { return bext_sigmoid(t); }
static bext_tensor *exp_(bext_tensor *t) { return bext_exp(t); }
static bext_tensor *neg_(bext_tensor *t) { return bext_neg(t); }
static bext_tensor *not_(bext_tensor *t) { return bext_not(t); }
static bext_tensor *clamp_(bext_tensor *t) { return bext_clamp(t, -2.5, 3.25); }
static bext_tensor *add_s(bext_tensor *t) { return bext_add_scalar(t, scalar_arg); }
static bext_tensor *div_s(bext_tensor *t) { return bext_div_scalar(t, scalar_arg); }
static bext_tensor *ge_s(bext_tensor *t) { return bext_ge_scalar(t, scalar_arg); }
static bext_tensor *to_i32(bext_tensor *t) { return bext_cast(t, BEXT_I32); }
static bext_tensor *to_bool(bext_tensor *t) { return bext_cast(t, BEXT_BOOL); }
static bext_tensor *to_f32(bext_tensor *t) { return bext_cast(t, BEXT_F32); }
static bext_tensor *mask_fill_(bext_tensor *t) {
  bext_retain(t);
  return bext_mask_fill(t, bext_gt_scalar(t, 0.0), 9.0);
}
static bext_tensor *mask_where_(bext_tensor *a, bext_tensor *b) {
  bext_retain(b);
  return bext_mask_where(a, bext_lt_scalar(b, 1.0), b);
}

Test(cube_diff, unary_float, .init = setup) {
  diff_unary("exp", exp_, BEXT_F32);
  diff_unary("sigmoid", sigmoid_, BEXT_F64);
  diff_unary("clamp", clamp_, BEXT_F32);
  diff_unary("neg", neg_, BEXT_F64);
}

Test(cube_diff, unary_int, .init = setup) {
  diff_unary("neg", neg_, BEXT_I32);
  diff_unary("clamp", clamp_, BEXT_U8);
}

Test(cube_diff, binary, .init = setup) {
  diff_binary("add", bext_add, BEXT_F32);
  diff_binary("rem", bext_rem, BEXT_F64);
  diff_binary("max", bext_max, BEXT_F32);
  diff_binary("div", bext_div, BEXT_I32);
  diff_binary("sub", bext_sub, BEXT_U8);
  diff_binary("mul", bext_mul, BEXT_I64);
  diff_binary("pow", bext_pow, BEXT_I32);   /* the IR's integer pow: wraps, negative exponents */
  diff_binary("pow", bext_pow, BEXT_U8);
  diff_binary("pow", bext_pow, BEXT_F64);
}

/* `_scalar` forms: scalars outside the dtype's range and negative ones on
 * u8 follow the runtime's rule (the double saturated to i64). */
Test(cube_diff, scalar_forms, .init = setup) {
  scalar_arg = -1;
  diff_unary("add_scalar -1", add_s, BEXT_U8);
  scalar_arg = 3e9;
  diff_unary("add_scalar 3e9", add_s, BEXT_I32);
  diff_unary("ge_scalar 3e9", ge_s, BEXT_I32);
  scalar_arg = -0.7;
  diff_unary("div_scalar", div_s, BEXT_F32);
  diff_unary("ge_scalar", ge_s, BEXT_F64);
  scalar_arg = 0;
  diff_unary("div_scalar 0", div_s, BEXT_I64);
}

Test(cube_diff, compare_bool_cast_mask, .init = setup) {
  diff_binary("lt", bext_lt, BEXT_F32);
  diff_binary("eq", bext_eq, BEXT_U8);
  diff_binary("xor", bext_xor, BEXT_BOOL);
  diff_binary("ne", bext_ne, BEXT_BOOL);
  diff_unary("not", not_, BEXT_BOOL);
  diff_unary("cast f32->i32", to_i32, BEXT_F32);
  diff_unary("cast f64->bool", to_bool, BEXT_F64);
  diff_unary("cast bool->f32", to_f32, BEXT_BOOL);
  diff_unary("cast i64->f32", to_f32, BEXT_I64);
  diff_unary("mask_fill", mask_fill_, BEXT_I32);
  diff_binary("mask_where", mask_where_, BEXT_F64);
}

/* ------------------------------------------------------------ errors */

Test(cube_errors, named_refusals, .init = setup) {
  int64_t n = 4;
  bext_tensor *h = bext_zeros(&n, 1, BEXT_F16, nd);
  cr_assert(h);
  h = bext_to_device(h, cube);
  cr_assert(h, "f16 storage moves to cube:cpu: %s", bext_last_error());
  /* f16 and bf16 run their own instantiations (exp(0) = 1: 0x3c00, 0x3f80) */
  bext_retain(h); /* ops consume their operands: h serves twice */
  bext_tensor *e = bext_exp(h);
  uint16_t bits[4] = {0};
  cr_assert(e && bext_read(e, bits, sizeof bits), "%s", bext_last_error());
  cr_expect(bits[0] == 0x3c00 && bits[3] == 0x3c00, "exp of f16 zeros: %04x", bits[0]);
  bext_release(e);
  e = bext_exp(bext_cast(h, BEXT_BF16));
  cr_assert(e && bext_read(e, bits, sizeof bits), "%s", bext_last_error());
  cr_expect(bits[0] == 0x3f80 && bits[3] == 0x3f80, "exp of bf16 zeros: %04x", bits[0]);
  bext_release(e);

  /* sum runs on cube:cpu since branch cube-kernels (reduce.bext) */
  bext_tensor *a = bext_sum(bext_ones(&n, 1, BEXT_F32, cube));
  float four = 0;
  cr_assert(a && bext_read(a, &four, sizeof four), "%s", bext_last_error());
  cr_expect_eq(four, 4.0f);
  bext_release(a);

  struct bext_device *dev = bxr_device_resolve(cube, "test");
  cr_assert(dev);
  cr_expect_null(cube_kernel(dev, "no_such_kernel_f32"));
  cr_expect(strstr(bext_last_error(), "no stdlib kernel `no_such_kernel_f32`"), "%s", bext_last_error());
  cr_expect(cube_kernel(dev, "unary_float_f16_2_1") && cube_kernel(dev, "matmul_half_bf16"), "%s",
            bext_last_error());

  const bext_device *hip = bext_device_get("cube:hip:0");
  cr_assert(hip, "%s", bext_last_error());
  cr_expect_null(bext_zeros(&n, 1, BEXT_F32, hip));
  cr_expect(strstr(bext_last_error(), "cube:hip"), "%s", bext_last_error());
}
