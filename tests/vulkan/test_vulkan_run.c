/* test_vulkan_run.c — kernels run on the first Vulkan device (lavapipe,
 * Mesa's CPU Vulkan device, in the suite) and compared with bxk_scalar.h
 * through the IR's evaluator (bxk_eval_*): bit for bit for integer ops,
 * casts and exact float ops (IEEE add/sub/mul/div/sqrt, rounding
 * functions, max/min, rem), within stated tolerances for the
 * transcendental functions GLSL.std.450 computes.  The scalar-semantics
 * edge cases are also asserted with hand-written values.  Without a device
 * every test here says "skipped: no Vulkan device ..." (test_vulkan_spirv
 * still validates every module). */
#include <math.h>
#include <time.h>

#include "bxk_scalar.h"
#include "vk_run.h"

static struct bxvk_dev *dev;
static void setup(void) { dev = NULL; }
static void teardown(void) {
  bxvk_close(dev);
  dev = NULL;
}
TestSuite(vulkan, .init = setup, .fini = teardown);

static const double fvals[] = {0.0,  -0.0,  1.0,  -1.0,     0.5,       -2.5, 2.5,   3.0,   -3.0,    7.25,
                               -7.25, 1e30, -1e30, INFINITY, -INFINITY, NAN,  1e-3,  3e9,   -3e9,    255.5,
                               65504.0, 1e-8, 4294967296.0, 1e-40, 0.125, -100.75, 1.5, -0.5, 12.0, 0.7, -5.5};
static const int64_t ivals[] = {0,  1,   -1,  2,         -2,        3,
                                -3, 7,   -7,  13,        100,       -100,
                                255, 256, INT32_MAX, INT32_MIN, (int64_t)UINT32_MAX, INT64_MAX,
                                INT64_MIN, 1000000000000ll, -1000000000000ll, 31, 33, 64};
#define NF (sizeof fvals / sizeof fvals[0])
#define NI (sizeof ivals / sizeof ivals[0])

static void put_lit(unsigned t, void *p, size_t i, union bxk_lit v) {
  v = bxk_lit_norm(t, v);
  switch (t) {
  case BXK_BOOL: case BXK_U8: ((uint8_t *)p)[i] = (uint8_t)v.u; break;
  case BXK_I32: ((int32_t *)p)[i] = (int32_t)v.i; break;
  case BXK_U32: ((uint32_t *)p)[i] = (uint32_t)v.u; break;
  case BXK_I64: ((int64_t *)p)[i] = v.i; break;
  case BXK_F16: ((uint16_t *)p)[i] = bxk_f32_to_f16((float)v.f); break;
  case BXK_F32: ((float *)p)[i] = (float)v.f; break;
  case BXK_F64: ((double *)p)[i] = v.f; break;
  }
}

static union bxk_lit get_lit(unsigned t, const void *p, size_t i) {
  union bxk_lit v = {0};
  switch (t) {
  case BXK_BOOL: case BXK_U8: v.u = ((const uint8_t *)p)[i]; break;
  case BXK_I32: v.i = ((const int32_t *)p)[i]; break;
  case BXK_U32: v.u = ((const uint32_t *)p)[i]; break;
  case BXK_I64: v.i = ((const int64_t *)p)[i]; break;
  case BXK_F16: v.f = bxk_f16_to_f32(((const uint16_t *)p)[i]); break;
  case BXK_F32: v.f = ((const float *)p)[i]; break;
  case BXK_F64: v.f = ((const double *)p)[i]; break;
  }
  return v;
}

static union bxk_lit val(unsigned t, size_t j) {
  union bxk_lit v;
  if (bxk_type_is_float(t)) v.f = fvals[j % NF];
  else v.i = ivals[j % NI];
  return bxk_lit_norm(t, v);
}
static size_t nvals(unsigned t) { return bxk_type_is_float(t) ? NF : t == BXK_BOOL ? 2 : NI; }

/* Ops whose float results are GLSL.std.450's approximations (or built on
 * them), compared within a tolerance; every other result bit for bit. */
static bool approx_op(unsigned op) {
  return op == BXK_OP_POW || op == BXK_OP_EXP || op == BXK_OP_LOG || op == BXK_OP_LOG1P || op == BXK_OP_SIN ||
         op == BXK_OP_COS || op == BXK_OP_TANH || op == BXK_OP_ERF;
}

static double max_rel[2][BXK_OP_COUNT];

/* got within rel (relative, or absolute below 1) of want, NaN and the
 * infinities matching exactly. */
static bool close_to(double got, double want, double rel) {
  if (want != want || isinf(want) || got != got || isinf(got)) return (got != got && want != want) || got == want;
  double err = fabs(got - want) / fmax(1.0, fabs(want));
  return err <= rel;
}

static bool same(unsigned t, union bxk_lit a, union bxk_lit b) {
  if (bxk_type_is_float(t)) {
    if (a.f != a.f || b.f != b.f) return a.f != a.f && b.f != b.f;
    return a.f == b.f && signbit(a.f) == signbit(b.f);
  }
  return a.u == b.u;
}

static int mismatches;

static const char *fmt(unsigned t, union bxk_lit v, char *buf) {
  if (bxk_type_is_float(t)) snprintf(buf, 40, "%.17g", v.f);
  else if (bxk_type_is_signed(t)) snprintf(buf, 40, "%lld", (long long)v.i);
  else snprintf(buf, 40, "%llu", (unsigned long long)v.u);
  return buf;
}

static void report(const char *what, unsigned t, unsigned rt, union bxk_lit x, union bxk_lit y, union bxk_lit got,
                   union bxk_lit want) {
  char b[4][40];
  if (mismatches++ < 30)
    cr_log_error("%s.%s(%s, %s) = %s on Vulkan, bxk_scalar.h says %s", what, bxk_type_name(t), fmt(t, x, b[0]),
                 fmt(t, y, b[1]), fmt(rt, got, b[2]), fmt(rt, want, b[3]));
}

/* The tolerance of an approximate op: f32 math within 4e-6 relative
 * (GLSL.std.450 promises less; lavapipe's LLVM math gives this), f16 one
 * f16 ulp.  sin and cos only where |x| <= 100 (the IR does not promise
 * their results for huge arguments: no argument reduction is exact). */
static double tol(unsigned t) { return t == BXK_F16 ? 1e-3 : t == BXK_F64 ? 1e-14 : 4e-6; }

static void check_bins(unsigned t) {
  unsigned ops[BXK_OP_COUNT], nops;
  struct bxk_kernel *k = vk_binops(t, ops, &nops);
  struct bxvk_kernel *vk = vk_prepare(dev, k);
  size_t m = nvals(t), n = m * m;
  void *mem[2 + BXK_OP_COUNT];
  uint32_t len[2 + BXK_OP_COUNT];
  for (unsigned j = 0; j < 2 + nops; j++) mem[j] = calloc(n, 8), len[j] = (uint32_t)n;
  for (size_t i = 0; i < n; i++) {
    put_lit(t, mem[0], i, val(t, i / m));
    put_lit(t, mem[1], i, val(t, i % m));
  }
  vk_run1d(dev, vk, k, mem, len, (uint32_t)n, 32, NULL);
  for (unsigned j = 0; j < nops; j++) {
    unsigned op = ops[j], rt = bxk_opinfo[op].cls == BXK_C_CMP ? BXK_BOOL : t;
    for (size_t i = 0; i < n; i++) {
      union bxk_lit x = get_lit(t, mem[0], i), y = get_lit(t, mem[1], i), want = {0};
      cr_assert(bxk_eval_bin((enum bxk_op)op, (enum bxk_type)t, x, y, &want));
      want = bxk_lit_norm(rt, want);
      union bxk_lit got = get_lit(rt, mem[2 + j], i);
      /* pow f64 is exp(y log|x|) in double: its error grows with |y log x| */
      double tl = op == BXK_OP_POW && t == BXK_F64 ? 1e-13 : tol(t);
      bool ok = approx_op(op) && bxk_type_is_float(t) ? close_to(got.f, want.f, tl) : same(rt, got, want);
      if (!ok) report(bxk_opinfo[op].name, t, rt, x, y, got, want);
    }
  }
  for (unsigned j = 0; j < 2 + nops; j++) free(mem[j]);
  bxk_kernel_free(k);
}

static void check_uns(unsigned t) {
  unsigned ops[BXK_OP_COUNT], nops;
  struct bxk_kernel *k = vk_unops(t, ops, &nops);
  struct bxvk_kernel *vk = vk_prepare(dev, k);
  size_t n = nvals(t);
  void *mem[1 + BXK_OP_COUNT];
  uint32_t len[1 + BXK_OP_COUNT];
  for (unsigned j = 0; j < 1 + nops; j++) mem[j] = calloc(n, 8), len[j] = (uint32_t)n;
  for (size_t i = 0; i < n; i++) put_lit(t, mem[0], i, val(t, i));
  vk_run1d(dev, vk, k, mem, len, (uint32_t)n, 5, NULL);
  for (unsigned j = 0; j < nops; j++)
    for (size_t i = 0; i < n; i++) {
      unsigned op = ops[j];
      union bxk_lit x = get_lit(t, mem[0], i), want = {0};
      if ((op == BXK_OP_SIN || op == BXK_OP_COS) && !(fabs(x.f) <= 100)) continue;
      cr_assert(bxk_eval_un((enum bxk_op)op, (enum bxk_type)t, x, &want));
      want = bxk_lit_norm(t, want);
      union bxk_lit got = get_lit(t, mem[1 + j], i);
      bool ok = approx_op(op) ? close_to(got.f, want.f, tol(t)) : same(t, got, want);
      if (approx_op(op) && got.f == got.f && want.f == want.f && !isinf(want.f))
        max_rel[t == BXK_F64][op] = fmax(max_rel[t == BXK_F64][op], fabs(got.f - want.f) / fmax(1.0, fabs(want.f)));
      if (!ok) report(bxk_opinfo[op].name, t, t, x, x, got, want);
    }
  for (unsigned j = 0; j < 1 + nops; j++) free(mem[j]);
  bxk_kernel_free(k);
}

Test(vulkan, binary_ops_match_header) {
  dev = vk_dev_or_skip(NULL);
  mismatches = 0;
  for (size_t t = 0; t < VK_NTYPES; t++) check_bins(vk_types[t]);
  cr_expect_eq(mismatches, 0, "%d elements differ from bxk_scalar.h", mismatches);
}

Test(vulkan, unary_ops_match_header) {
  dev = vk_dev_or_skip(NULL);
  mismatches = 0;
  memset(max_rel, 0, sizeof max_rel);
  for (size_t t = 0; t < VK_NTYPES; t++) check_uns(vk_types[t]);
  for (int w = 0; w < 2; w++)
    cr_log_info("vulkan: largest relative error (%s): exp %.2g log %.2g log1p %.2g sin %.2g cos %.2g tanh %.2g "
                "erf %.2g",
                w ? "f64" : "f32 and f16", max_rel[w][BXK_OP_EXP], max_rel[w][BXK_OP_LOG], max_rel[w][BXK_OP_LOG1P],
                max_rel[w][BXK_OP_SIN], max_rel[w][BXK_OP_COS], max_rel[w][BXK_OP_TANH], max_rel[w][BXK_OP_ERF]);
  cr_expect_eq(mismatches, 0, "%d elements differ from bxk_scalar.h", mismatches);
}

Test(vulkan, casts_match_header) {
  dev = vk_dev_or_skip(NULL);
  mismatches = 0;
  for (size_t f = 0; f < VK_NTYPES; f++) {
    unsigned from = vk_types[f];
    struct bxk_kernel *k = vk_casts(from);
    struct bxvk_kernel *vk = vk_prepare(dev, k);
    size_t n = nvals(from);
    void *mem[9];
    uint32_t len[9];
    for (int j = 0; j < 9; j++) mem[j] = calloc(n, 8), len[j] = (uint32_t)n;
    for (size_t i = 0; i < n; i++) put_lit(from, mem[0], i, val(from, i));
    vk_run1d(dev, vk, k, mem, len, (uint32_t)n, 16, NULL);
    for (size_t t = 0; t < VK_NTYPES; t++)
      for (size_t i = 0; i < n; i++) {
        unsigned to = vk_types[t];
        union bxk_lit x = get_lit(from, mem[0], i), want = {0};
        cr_assert(bxk_eval_cast((enum bxk_type)to, (enum bxk_type)from, x, &want));
        union bxk_lit got = get_lit(to, mem[1 + t], i);
        if (!same(to, got, want)) {
          char what[32];
          snprintf(what, sizeof what, "cast->%s", bxk_type_name(to));
          report(what, from, to, x, x, got, want);
        }
      }
    for (int j = 0; j < 9; j++) free(mem[j]);
    bxk_kernel_free(k);
  }
  cr_expect_eq(mismatches, 0, "%d elements differ from bxk_scalar.h", mismatches);
}

/* The rules of bxk_scalar.h that GPUs do not give for free, with the
 * values written out by hand. */
Test(vulkan, scalar_semantics_edge_cases) {
  dev = vk_dev_or_skip(NULL);
  /* i32: rem and div */
  {
    unsigned ops[BXK_OP_COUNT], nops;
    struct bxk_kernel *k = vk_binops(BXK_I32, ops, &nops);
    struct bxvk_kernel *vk = vk_prepare(dev, k);
    enum { N = 6 };
    int32_t a[N] = {-7, 7, -7, 5, INT32_MIN, INT32_MIN}, b[N] = {3, -3, -3, 0, -1, 0};
    void *mem[2 + BXK_OP_COUNT] = {a, b};
    uint32_t len[2 + BXK_OP_COUNT];
    int32_t out[BXK_OP_COUNT][N];
    for (unsigned j = 0; j < 2 + nops; j++) len[j] = N;
    for (unsigned j = 0; j < nops; j++) mem[2 + j] = out[j];
    vk_run1d(dev, vk, k, mem, len, N, 4, NULL);
    int32_t *div = NULL, *rem = NULL;
    for (unsigned j = 0; j < nops; j++) {
      if (ops[j] == BXK_OP_DIV) div = out[j];
      if (ops[j] == BXK_OP_REM) rem = out[j];
    }
    cr_assert(div && rem);
    static const int32_t wrem[N] = {2, -2, -1, 0, 0, 0}, wdiv[N] = {-2, -2, 2, 0, INT32_MIN, 0};
    for (int i = 0; i < N; i++) {
      cr_expect_eq(rem[i], wrem[i], "%d rem %d = %d, expected %d (floored; x%%0 = 0; x%%-1 = 0)", a[i], b[i],
                   rem[i], wrem[i]);
      cr_expect_eq(div[i], wdiv[i], "%d div %d = %d, expected %d (x/0 = 0; INT_MIN/-1 wraps)", a[i], b[i], div[i],
                   wdiv[i]);
    }
    bxk_kernel_free(k);
  }
  /* f32: max/min with NaN, floored rem */
  {
    unsigned ops[BXK_OP_COUNT], nops;
    struct bxk_kernel *k = vk_binops(BXK_F32, ops, &nops);
    struct bxvk_kernel *vk = vk_prepare(dev, k);
    enum { N = 4 };
    float a[N] = {NAN, 1, -7.5f, 7.5f}, b[N] = {1, NAN, 2, -2};
    void *mem[2 + BXK_OP_COUNT] = {a, b};
    uint32_t len[2 + BXK_OP_COUNT];
    float out[BXK_OP_COUNT][N];
    for (unsigned j = 0; j < 2 + nops; j++) len[j] = N;
    for (unsigned j = 0; j < nops; j++) mem[2 + j] = out[j];
    vk_run1d(dev, vk, k, mem, len, N, 4, NULL);
    for (unsigned j = 0; j < nops; j++) {
      if (ops[j] == BXK_OP_MAX || ops[j] == BXK_OP_MIN) {
        cr_expect(isnan(out[j][0]) && isnan(out[j][1]), "%s with a NaN operand must be NaN: %g %g",
                  bxk_opinfo[ops[j]].name, out[j][0], out[j][1]);
      }
      if (ops[j] == BXK_OP_REM) {
        cr_expect_eq(out[j][2], 0.5f, "-7.5 rem 2 = %g, expected 0.5 (floored)", out[j][2]);
        cr_expect_eq(out[j][3], -0.5f, "7.5 rem -2 = %g, expected -0.5 (floored)", out[j][3]);
      }
    }
    bxk_kernel_free(k);
  }
  /* f32 -> int casts: NaN -> 0, saturation; round half to even */
  {
    struct bxk_kernel *k = vk_casts(BXK_F32);
    struct bxvk_kernel *vk = vk_prepare(dev, k);
    enum { N = 4 };
    float a[N] = {NAN, 1e20f, -1e20f, -3.7f};
    int32_t i32[N];
    uint32_t u32[N];
    int64_t i64[N];
    uint8_t u8[N], bl[N];
    uint16_t h[N];
    float f[N];
    double dd[N];
    void *mem[9] = {a, bl, u8, i32, u32, i64, h, f, dd};
    uint32_t len[9] = {N, N, N, N, N, N, N, N, N};
    vk_run1d(dev, vk, k, mem, len, N, 2, NULL);
    cr_expect(i32[0] == 0 && i32[1] == INT32_MAX && i32[2] == INT32_MIN && i32[3] == -3, "i32: %d %d %d %d", i32[0],
              i32[1], i32[2], i32[3]);
    cr_expect(u32[0] == 0 && u32[1] == UINT32_MAX && u32[2] == 0 && u32[3] == 0, "u32: %u %u %u %u", u32[0], u32[1],
              u32[2], u32[3]);
    cr_expect(i64[0] == 0 && i64[1] == INT64_MAX && i64[2] == INT64_MIN && i64[3] == -3, "i64");
    cr_expect(u8[0] == 0 && u8[1] == 255 && u8[2] == 0 && u8[3] == 0, "u8: %u %u %u %u", u8[0], u8[1], u8[2], u8[3]);
    cr_expect(bl[0] == 1 && bl[1] == 1 && bl[3] == 1, "bool: NaN and non-zero are true");
    bxk_kernel_free(k);
  }
  {
    struct bxk_kernel *k = sample_unop(BXK_OP_ROUND, BXK_F32);
    struct bxvk_kernel *vk = vk_prepare(dev, k);
    enum { N = 6 };
    float a[N] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 3.49999f}, o[N];
    void *mem[2] = {a, o};
    uint32_t len[2] = {N, N};
    vk_run1d(dev, vk, k, mem, len, N, 8, NULL);
    static const float w[N] = {0, 2, 2, -0.0f, -2, 3};
    for (int i = 0; i < N; i++)
      cr_expect(o[i] == w[i] && signbit(o[i]) == signbit(w[i]), "round(%g) = %g, expected %g (half to even)", a[i],
                o[i], w[i]);
    bxk_kernel_free(k);
  }
}

/* erf against libm over [-6, 6] and tiny arguments.  f32 (A&S 7.1.26 and
 * a series, bxvk_emit_ops.c): within 2.5e-7 absolute, and 1e-6 relative
 * below 0.5 (where the series is used).  f64: a few ulps. */
Test(vulkan, erf_error_bound) {
  dev = vk_dev_or_skip(NULL);
  struct bxk_kernel *k = sample_unop(BXK_OP_ERF, BXK_F32);
  struct bxvk_kernel *vk = vk_prepare(dev, k);
  enum { N = 2401 + 8 };
  float *a = malloc(N * 4), *o = malloc(N * 4);
  for (int i = 0; i < 2401; i++) a[i] = -6.0f + (float)i * 0.005f;
  static const float tiny[8] = {1e-30f, -1e-20f, 1e-10f, 3e-8f, -1e-5f, 1e-3f, 0.49999f, -0.5f};
  memcpy(a + 2401, tiny, sizeof tiny);
  void *mem[2] = {a, o};
  uint32_t len[2] = {N, N};
  vk_run1d(dev, vk, k, mem, len, N, 64, NULL);
  double worst_abs = 0, worst_rel = 0;
  for (int i = 0; i < N; i++) {
    double want = erf((double)a[i]), err = fabs(o[i] - want);
    worst_abs = fmax(worst_abs, err);
    if (fabs(a[i]) < 0.5 && want != 0) worst_rel = fmax(worst_rel, err / fabs(want));
    cr_expect(err <= 2.5e-7, "erf(%.9g) = %.9g, libm %.9g: error %.3g", a[i], o[i], want, err);
  }
  cr_log_info("vulkan: erf f32 max error %.3g absolute, %.3g relative below 0.5", worst_abs, worst_rel);
  cr_expect_leq(worst_rel, 1e-6);
  free(a), free(o);
  bxk_kernel_free(k);

  /* f64 (bxvk_emit_f64.c: series below 2, continued fraction to 6):
   * within 4 ulps of 1 absolute, and 4 ulps relative near 0 */
  k = sample_unop(BXK_OP_ERF, BXK_F64);
  vk = vk_prepare(dev, k);
  double *x = malloc(N * 8), *y = malloc(N * 8);
  for (int i = 0; i < 2401; i++) x[i] = -6.0 + i * 0.005 + 1e-7;
  for (int i = 0; i < 8; i++) x[2401 + i] = tiny[i];
  mem[0] = x, mem[1] = y;
  vk_run1d(dev, vk, k, mem, len, N, 64, NULL);
  worst_abs = worst_rel = 0;
  for (int i = 0; i < N; i++) {
    double want = erf(x[i]), err = fabs(y[i] - want);
    worst_abs = fmax(worst_abs, err);
    if (want != 0) worst_rel = fmax(worst_rel, err / fabs(want));
    cr_expect(err <= 4 * 0x1p-52 * fmax(fabs(want), 0.25), "erf(%.17g) = %.17g, libm %.17g", x[i], y[i], want);
  }
  cr_log_info("vulkan: erf f64 max error %.3g absolute, %.3g relative", worst_abs, worst_rel);
  free(x), free(y);
  bxk_kernel_free(k);
}

/* ------------------------------------------------------------- kernels */

Test(vulkan, add_sizes_and_cube_dims) {
  dev = vk_dev_or_skip(NULL);
  struct bxk_kernel *k = sample_add(BXK_F32, true);
  struct bxvk_kernel *vk = vk_prepare(dev, k);
  static const uint32_t sizes[] = {1, 7, 64, 1000, 4099}, dims[] = {1, 3, 64, 256};
  for (size_t s = 0; s < 5; s++)
    for (size_t di = 0; di < 4; di++) {
      uint32_t n = sizes[s];
      float *a = malloc(n * 4), *b = malloc(n * 4), *o = malloc(n * 4);
      for (uint32_t i = 0; i < n; i++) a[i] = (float)i * 0.5f, b[i] = 1000.0f - (float)i, o[i] = -1;
      void *mem[3] = {a, b, o};
      uint32_t len[3] = {n, n, n};
      vk_run1d(dev, vk, k, mem, len, n, dims[di], NULL);
      for (uint32_t i = 0; i < n; i++)
        cr_assert_eq(o[i], a[i] + b[i], "n=%u dim=%u i=%u: %g", n, dims[di], i, o[i]);
      free(a), free(b), free(o);
    }
  struct bxvk_stats st;
  bxvk_stats(dev, &st);
  cr_assert_eq(st.modules, 1, "one module for every cube_dim");
  cr_assert_eq(st.pipelines, 4, "one pipeline per cube_dim");
  bxk_kernel_free(k);
}

Test(vulkan, loops_break_continue_return) {
  dev = vk_dev_or_skip(NULL);
  struct bxk_kernel *k = sample_loops();
  struct bxvk_kernel *vk = vk_prepare(dev, k);
  float a[] = {1, 2, -1, 0, 5, 3, -2, 7, 0, 4, 1}, o[19];
  uint32_t na = 11, n = 19;
  void *mem[2] = {a, o};
  uint32_t len[2] = {na, n};
  vk_run1d(dev, vk, k, mem, len, n + 5, 8, NULL); /* 5 units past len(out): they return */
  for (uint32_t i = 0; i < n; i++) {
    float acc = 0, npos = 0, w = (float)(i + 1);
    for (uint32_t j = 0; j < na; j++) {
      if (a[j] < 0) break;
      acc += a[j] * w;
    }
    for (uint32_t j = 0; j < na; j++)
      if (a[j] > 0) npos += 1;
    cr_assert_eq(o[i], acc + npos * 1000, "i=%u: %g vs %g", i, o[i], acc + npos * 1000);
  }
  bxk_kernel_free(k);
}

Test(vulkan, topology_3d_and_a_scalar) {
  dev = vk_dev_or_skip(NULL);
  struct bxk_kernel *k = sample_topo();
  struct bxvk_kernel *vk = vk_prepare(dev, k);
  uint32_t W = 8, H = 6, D = 6, n = W * H * D;
  uint32_t *o = calloc(n, 4);
  struct bxk_diags ds = {0};
  struct bxvk_arg arg = {.buf = bxvk_buf_new(dev, n * 4, &ds), .len = n, .rank = 2, .shape = {H * D, W},
                         .stride = {W, 1}};
  cr_assert(arg.buf);
  union bxl_scalar s = {.u32 = 7};
  uint32_t count[3] = {2, 3, 2}, dim[3] = {4, 2, 3};
  cr_assert(bxvk_launch(dev, vk, count, dim, &arg, &s, &ds), "%s", ds.n ? ds.d[0].msg : "?");
  cr_assert(bxvk_buf_download(dev, arg.buf, o, n * 4, &ds));
  for (uint32_t z = 0; z < D; z++)
    for (uint32_t y = 0; y < H; y++)
      for (uint32_t x = 0; x < W; x++) {
        uint32_t ux = x % 4, uy = y % 2, uz = z % 3, cx = x / 4, cy = y / 2, cz = z / 3;
        uint32_t unit = ux + 4 * (uy + 2 * uz), cube = cx + 2 * (cy + 3 * cz);
        uint32_t want = x + 1000 * y + 1000000 * unit + 100000000u * cube + 7;
        uint32_t at = x + W * (y + H * z);
        cr_assert_eq(o[at], want, "x=%u y=%u z=%u: %u vs %u", x, y, z, o[at], want);
      }
  bxvk_buf_free(dev, arg.buf);
  free(o);
  bxk_kernel_free(k);
}

/* Every scalar type in its push-constant slot. */
Test(vulkan, scalars_of_every_type) {
  dev = vk_dev_or_skip(NULL);
  struct bxk_kernel *k = vk_scalars();
  struct bxvk_kernel *vk = vk_prepare(dev, k);
  union bxl_scalar s[VK_NTYPES];
  memset(s, 0, sizeof s);
  s[0].u8 = 1, s[1].u8 = 200, s[2].i32 = -5, s[3].u32 = 3000000000u, s[4].i64 = -(1ll << 40);
  s[5].f16 = bxk_f32_to_f16(1.5f), s[6].f32 = 0.25f, s[7].f64 = -1e-3;
  double in[5] = {1, 2, 3, 4, 5}, out[5];
  void *mem[2] = {in, out};
  uint32_t len[2] = {5, 5};
  vk_run1d(dev, vk, k, mem, len, 5, 2, s);
  static const double sv[VK_NTYPES] = {1, 200, -5, 3000000000.0, -1099511627776.0, 1.5, 0.25, -1e-3};
  for (int i = 0; i < 5; i++) {
    double want = in[i];  /* summed in the kernel's order */
    for (int t = 0; t < VK_NTYPES; t++) want += sv[t] * (double)(1u << (3 * t));
    cr_assert_eq(out[i], want, "%d: %.17g vs %.17g", i, out[i], want);
  }
  bxk_kernel_free(k);
}

/* A transposed view (strides) and an offset view, read through the
 * metadata buffer. */
Test(vulkan, strided_and_offset_views) {
  dev = vk_dev_or_skip(NULL);
  struct bxk_kernel *k = vk_views();
  struct bxvk_kernel *vk = vk_prepare(dev, k);
  struct bxk_diags ds = {0};
  enum { R = 5, C = 7 };
  int32_t base[3 + R * C], out[R * C];
  for (int i = 0; i < 3 + R * C; i++) base[i] = i * 10;
  struct bxvk_buf *bin = bxvk_buf_new(dev, sizeof base, &ds), *bout = bxvk_buf_new(dev, sizeof out, &ds);
  cr_assert(bin && bout);
  cr_assert(bxvk_buf_upload(dev, bin, base, sizeof base, &ds));
  /* in: the C x R matrix at offset 3, viewed transposed as R x C */
  struct bxvk_arg args[2] = {{.buf = bin, .offset = 3, .len = R * C, .rank = 2, .shape = {R, C}, .stride = {1, R}},
                             {.buf = bout, .len = R * C, .rank = 2, .shape = {R, C}, .stride = {C, 1}}};
  uint32_t count[3] = {3, 1, 1}, dim[3] = {16, 1, 1};
  cr_assert(bxvk_launch(dev, vk, count, dim, args, NULL, &ds), "%s", ds.n ? ds.d[0].msg : "?");
  cr_assert(bxvk_buf_download(dev, bout, out, sizeof out, &ds));
  for (int r = 0; r < R; r++)
    for (int c = 0; c < C; c++) {
      int32_t want = base[3 + r + c * R] + 2 * 1000 + R * C * 1000000;
      cr_assert_eq(out[r * C + c], want, "(%d,%d): %d vs %d", r, c, out[r * C + c], want);
    }
  bxvk_buf_free(dev, bin), bxvk_buf_free(dev, bout);
  bxk_kernel_free(k);
}

Test(vulkan, gelu_f16_f32_f64) {
  dev = vk_dev_or_skip(NULL);
  for (int h = 0; h < 3; h++) {
    unsigned t = h == 0 ? BXK_F32 : h == 1 ? BXK_F16 : BXK_F64;
    struct bxk_kernel *k = sample_gelu((enum bxk_type)t);
    struct bxvk_kernel *vk = vk_prepare(dev, k);
    enum { N = 1001 };
    uint8_t in[N * 8], out[N * 8];
    for (int i = 0; i < N; i++) put_lit(t, in, (size_t)i, (union bxk_lit){.f = -5.0 + i * 0.01});
    void *mem[2] = {in, out};
    uint32_t len[2] = {N, N};
    vk_run1d(dev, vk, k, mem, len, N, 64, NULL);
    for (int i = 0; i < N; i++) {
      double x = get_lit(t, in, (size_t)i).f, got = get_lit(t, out, (size_t)i).f;
      double want = x * 0.5 * (1 + erf(x / sqrt(2.0)));
      double tolr = h == 0 ? 1e-6 : h == 1 ? 2e-3 : 1e-14;
      cr_assert(fabs(got - want) <= tolr * fmax(1.0, fabs(want)), "gelu.%s(%g) = %.9g, expected %.9g",
                bxk_type_name(t), x, got, want);
    }
    bxk_kernel_free(k);
  }
}

/* The shared-memory tree sum: each level reads what other units stored
 * before the barrier.  Sums of small integers are exact in any order. */
Test(vulkan, barrier_tree_sum) {
  dev = vk_dev_or_skip(NULL);
  for (uint32_t dim = 1; dim <= 1024; dim *= 4) {
    struct bxk_kernel *k = vk_tree_sum(dim);
    struct bxvk_kernel *vk = vk_prepare(dev, k);
    uint32_t cubes = 37, n = cubes * dim;
    float *in = malloc(n * 4), out[37];
    for (uint32_t i = 0; i < n; i++) in[i] = (float)((i * 7919u) % 13u);
    void *mem[2] = {in, out};
    uint32_t len[2] = {n, cubes};
    union bxl_scalar s = {.f32 = 0.5f};
    vk_run1d(dev, vk, k, mem, len, n, dim, &s);
    for (uint32_t c = 0; c < cubes; c++) {
      float want = 0.5f;
      for (uint32_t u = 0; u < dim; u++) want += in[c * dim + u];
      cr_assert_eq(out[c], want, "dim %u cube %u: %g vs %g", dim, c, out[c], want);
    }
    free(in);
    bxk_kernel_free(k);
  }
  /* 3-D cubes (4x2x2 units, 3x2x2 cubes): UNIT_POS and CUBE_POS linear */
  {
    struct bxk_kernel *k = vk_tree_sum(16);
    struct bxvk_kernel *vk = vk_prepare(dev, k);
    struct bxk_diags ds = {0};
    enum { CUBES = 12, UNITS = 16 };
    float in[CUBES * UNITS], out[CUBES];
    for (int i = 0; i < CUBES * UNITS; i++) in[i] = (float)(i % 7);
    struct bxvk_buf *bi = bxvk_buf_new(dev, sizeof in, &ds), *bo = bxvk_buf_new(dev, sizeof out, &ds);
    cr_assert(bxvk_buf_upload(dev, bi, in, sizeof in, &ds));
    struct bxvk_arg args[2] = {{bi, 0, CUBES * UNITS, 1, {CUBES * UNITS}, {1}}, {bo, 0, CUBES, 1, {CUBES}, {1}}};
    uint32_t count[3] = {3, 2, 2}, dim[3] = {4, 2, 2};
    union bxl_scalar s = {.f32 = 0};
    cr_assert(bxvk_launch(dev, vk, count, dim, args, &s, &ds), "%s", ds.n ? ds.d[0].msg : "?");
    cr_assert(bxvk_buf_download(dev, bo, out, sizeof out, &ds));
    /* unit (x,y,z) of cube (cx,cy,cz) reads in[ABSOLUTE_POS], linear over the grid */
    float want[CUBES] = {0};
    for (uint32_t z = 0; z < 4; z++)
      for (uint32_t y = 0; y < 4; y++)
        for (uint32_t x = 0; x < 12; x++)
          want[x / 4 + 3 * (y / 2 + 2 * (z / 2))] += in[x + 12 * (y + 4 * z)];
    for (int c = 0; c < CUBES; c++) cr_assert_eq(out[c], want[c], "3-D cube %d: %g vs %g", c, out[c], want[c]);
    bxvk_buf_free(dev, bi), bxvk_buf_free(dev, bo);
    bxk_kernel_free(k);
  }
  /* the same reduction without its barriers sums garbage: the test above
   * would catch a lowering that dropped them */
  struct bxk_kernel *k = vk_tree_sum_sync(256, false);
  struct bxvk_kernel *vk = vk_prepare(dev, k);
  uint32_t cubes = 8, n = cubes * 256, wrong = 0;
  float *in = malloc(n * 4), out[8];
  for (uint32_t i = 0; i < n; i++) in[i] = 1;
  void *mem[2] = {in, out};
  uint32_t len[2] = {n, cubes};
  union bxl_scalar s = {.f32 = 0};
  vk_run1d(dev, vk, k, mem, len, n, 256, &s);
  for (uint32_t c = 0; c < cubes; c++) wrong += out[c] != 256;
  cr_log_info("vulkan: without sync_cube, %u of %u cube sums are wrong (first %g, want 256)", wrong, cubes, out[0]);
  cr_assert_gt(wrong, 0, "the reduction does not depend on its barriers: it proves nothing");
  free(in);
  bxk_kernel_free(k);
}

/* ---------------------------------------------------------- the runtime */

Test(vulkan, batches_and_buffer_reuse) {
  dev = vk_dev_or_skip(NULL);
  struct bxk_diags ds = {0};
  struct bxvk_stats s0, s1;
  bxvk_stats(dev, &s0);
  struct bxvk_buf *a = bxvk_buf_new(dev, 1000, &ds);
  bxvk_buf_free(dev, a);
  struct bxvk_buf *b = bxvk_buf_new(dev, 1024, &ds); /* the same class: reused */
  cr_assert_eq(a, b);
  bxvk_stats(dev, &s1);
  cr_assert_eq(s1.buf_allocs - s0.buf_allocs, 1);
  cr_assert_eq(s1.buf_reuses - s0.buf_reuses, 1);
  cr_assert_eq(bxvk_buf_size(b), 1024);
  /* 600 launches of x += 1 on one buffer: batched (a few submits), and
   * each launch sees the previous one's result (the barriers) */
  struct bxk_kernel *k = bxk_kernel_new("inc");
  int o = bxk_add_binding(k, BXK_I32, 1, true);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_val pos = bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS);
  bxk_store(&B, o, pos, bxk_bin(&B, BXK_OP_ADD, bxk_load(&B, o, pos), bxk_const_i(&B, BXK_I32, 1)));
  struct bxvk_kernel *vk = vk_prepare(dev, k);
  int32_t x[256] = {0};
  cr_assert(bxvk_buf_upload(dev, b, x, sizeof x, &ds));
  struct bxvk_arg arg = {.buf = b, .len = 256, .rank = 1, .shape = {256}, .stride = {1}};
  uint32_t count[3] = {4, 1, 1}, dim[3] = {64, 1, 1};
  bxvk_stats(dev, &s0);
  for (int i = 0; i < 600; i++) cr_assert(bxvk_launch(dev, vk, count, dim, &arg, NULL, &ds));
  uint64_t ns = 0;
  cr_assert(bxvk_sync(dev, &ns, &ds));
  bxvk_stats(dev, &s1);
  cr_assert(bxvk_buf_download(dev, b, x, sizeof x, &ds));
  for (int i = 0; i < 256; i++) cr_assert_eq(x[i], 600, "x[%d] = %d", i, x[i]);
  cr_assert_eq(s1.launches - s0.launches, 600);
  cr_assert_eq(s1.submits - s0.submits, 3, "600 launches in batches of 256: %lu submits",
               s1.submits - s0.submits);
  cr_log_info("vulkan: the last batch of 88 launches took %.1f us of device time (timestamps)", ns / 1e3);
  bxvk_buf_free(dev, b);
  bxk_kernel_free(k);
}

Test(vulkan, named_errors) {
  dev = vk_dev_or_skip(NULL);
  struct bxk_diags ds = {0};
  struct bxk_kernel *k = sample_add(BXK_F32, true);
  struct bxvk_kernel *vk = vk_prepare(dev, k);
  struct bxvk_buf *small = bxvk_buf_new(dev, 40, &ds);
  struct bxvk_arg args[3];
  for (int j = 0; j < 3; j++)
    args[j] = (struct bxvk_arg){.buf = small, .len = 10, .rank = 1, .shape = {10}, .stride = {1}};
  uint32_t one[3] = {1, 1, 1}, zero[3] = {1, 0, 1}, huge[3] = {2048, 1, 1};
  cr_assert_not(bxvk_launch(dev, vk, one, zero, args, NULL, &ds));
  cr_assert(strstr(ds.d[0].msg, "kernel add: cube_count 1x1x1 and cube_dim 1x0x1 must be at least 1"), "%s",
            ds.d[0].msg);
  memset(&ds, 0, sizeof ds);
  cr_assert_not(bxvk_launch(dev, vk, one, huge, args, NULL, &ds));
  cr_assert(strstr(ds.d[0].msg, "exceeds Vulkan device 0"), "%s", ds.d[0].msg);
  args[1].len = 11, args[1].shape[0] = 11;
  memset(&ds, 0, sizeof ds);
  cr_assert_not(bxvk_launch(dev, vk, one, one, args, NULL, &ds));
  cr_assert(strstr(ds.d[0].msg, "kernel add: binding b1's view reaches byte 44 of a 40-byte buffer"), "%s",
            ds.d[0].msg);
  args[1].buf = NULL;
  memset(&ds, 0, sizeof ds);
  cr_assert_not(bxvk_launch(dev, vk, one, one, args, NULL, &ds));
  cr_assert(strstr(ds.d[0].msg, "binding b1 has no buffer"), "%s", ds.d[0].msg);
  memset(&ds, 0, sizeof ds);
  cr_assert_not(bxvk_buf_upload(dev, small, args, 41, &ds));
  cr_assert(strstr(ds.d[0].msg, "upload of 41 bytes into a Vulkan buffer of 40 bytes"), "%s", ds.d[0].msg);
  bxvk_buf_free(dev, small);
  bxk_kernel_free(k);

  /* a device without the feature a kernel needs */
  bxvk_device_mask_features(dev, ~BXVK_NEED(INT64));
  k = sample_add(BXK_I64, true);
  memset(&ds, 0, sizeof ds);
  cr_assert_null(bxvk_prepare(dev, k, 99, &ds));
  cr_assert(strstr(ds.d[0].msg, "kernel add needs shaderInt64, which Vulkan device 0"), "%s", ds.d[0].msg);
  cr_assert_eq(ds.d[0].err, BXK_E_VULKAN);
  bxk_kernel_free(k);
}

Test(vulkan, loader_and_device_errors) {
  struct bxk_diags ds = {0};
  cr_assert_null(bxvk_open_at("libbext-no-such-vulkan.so.1", 0, NULL, &ds));
  cr_assert(strstr(ds.d[0].msg, "backend unavailable: no Vulkan loader (libbext-no-such-vulkan.so.1: "), "%s",
            ds.d[0].msg);
  cr_assert_eq(ds.d[0].err, BXK_E_VULKAN);
  memset(&ds, 0, sizeof ds);
  cr_assert_null(bxvk_open_at("libm.so.6", 0, NULL, &ds));
  cr_assert(strstr(ds.d[0].msg, "no vkGetInstanceProcAddr"), "%s", ds.d[0].msg);
  dev = vk_dev_or_skip(NULL);
  int n = bxvk_device_count(dev);
  cr_log_info("vulkan: device 0 of %d: %s (features %#x)", n, bxvk_device_name(dev), bxvk_device_features(dev));
  memset(&ds, 0, sizeof ds);
  cr_assert_null(bxvk_open(n, NULL, &ds));
  char want[96];
  snprintf(want, sizeof want, "no Vulkan device %d (the loader sees %d)", n, n);
  cr_assert(strstr(ds.d[0].msg, want), "%s", ds.d[0].msg);
}

/* --------------------------------------------------------------- figures */

static double ms_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The figures docs/kernels.md quotes for lavapipe (logged; the asserts
 * are on the results only, timings on a shared machine are not stable):
 * pipeline creation for one cube_dim, the cost of recording a launch, a
 * launch + submit + wait round trip of a 16-element add, and an add over
 * 1M f32 (device time from the timestamps, and wall time). */
Test(vulkan, lavapipe_figures) {
  dev = vk_dev_or_skip(NULL);
  struct bxk_diags ds = {0};
  struct bxk_kernel *k = sample_add(BXK_F32, true);
  struct bxvk_kernel *vk = vk_prepare(dev, k);
  enum { N = 1 << 20, REPS = 101 };
  float *a = malloc(N * 4), *o = malloc(N * 4);
  for (int i = 0; i < N; i++) a[i] = (float)(i % 1000);
  struct bxvk_buf *ba = bxvk_buf_new(dev, N * 4, &ds), *bo = bxvk_buf_new(dev, N * 4, &ds);
  cr_assert(ba && bo);
  double t0 = ms_now();
  cr_assert(bxvk_buf_upload(dev, ba, a, N * 4, &ds));
  double up = ms_now() - t0;
  struct bxvk_arg big[3] = {{ba, 0, N, 1, {N}, {1}}, {ba, 0, N, 1, {N}, {1}}, {bo, 0, N, 1, {N}, {1}}};
  struct bxvk_arg tiny[3] = {{ba, 0, 16, 1, {16}, {1}}, {ba, 0, 16, 1, {16}, {1}}, {bo, 0, 16, 1, {16}, {1}}};
  uint32_t c1[3] = {1, 1, 1}, d16[3] = {16, 1, 1}, cbig[3] = {N / 256, 1, 1}, d256[3] = {256, 1, 1};
  t0 = ms_now();
  cr_assert(bxvk_launch(dev, vk, c1, d16, tiny, NULL, &ds)); /* makes the pipeline */
  double pipe = ms_now() - t0;
  cr_assert(bxvk_sync(dev, NULL, &ds));
  double rec[REPS], trip[REPS], bigw[REPS / 10], bigd[REPS / 10];
  for (int r = 0; r < REPS; r++) {
    t0 = ms_now();
    cr_assert(bxvk_launch(dev, vk, c1, d16, tiny, NULL, &ds));
    rec[r] = ms_now() - t0;
    cr_assert(bxvk_sync(dev, NULL, &ds));
    trip[r] = ms_now() - t0;
  }
  t0 = ms_now();
  cr_assert(bxvk_launch(dev, vk, cbig, d256, big, NULL, &ds)); /* pipeline for 256 */
  cr_assert(bxvk_sync(dev, NULL, &ds));
  double pipe256 = ms_now() - t0;
  for (int r = 0; r < REPS / 10; r++) {
    uint64_t ns = 0;
    t0 = ms_now();
    cr_assert(bxvk_launch(dev, vk, cbig, d256, big, NULL, &ds));
    cr_assert(bxvk_sync(dev, &ns, &ds));
    bigw[r] = ms_now() - t0;
    bigd[r] = ns / 1e6;
  }
  t0 = ms_now();
  cr_assert(bxvk_buf_download(dev, bo, o, N * 4, &ds));
  double down = ms_now() - t0;
  for (int i = 0; i < N; i++) cr_assert_eq(o[i], 2 * a[i], "%d", i);
  qsort(rec, REPS, sizeof rec[0], cmp_d);
  qsort(trip, REPS, sizeof trip[0], cmp_d);
  qsort(bigw, REPS / 10, sizeof bigw[0], cmp_d);
  qsort(bigd, REPS / 10, sizeof bigd[0], cmp_d);
  cr_log_info("lavapipe: pipeline creation (cube_dim 16) %.2f ms; first 1M launch incl. pipeline 256 %.2f ms",
              pipe, pipe256);
  cr_log_info("lavapipe: tiny add (16 elements): record %.1f us, launch+submit+wait %.1f us (medians of %d)",
              rec[REPS / 2] * 1e3, trip[REPS / 2] * 1e3, REPS);
  cr_log_info("lavapipe: add over 1M f32: %.2f ms wall, %.2f ms device (timestamps), %.1f GB/s; upload %.2f ms, "
              "download %.2f ms (4 MB each)",
              bigw[REPS / 20], bigd[REPS / 20], 12.0 * N / (bigw[REPS / 20] * 1e6), up, down);
  bxvk_buf_free(dev, ba), bxvk_buf_free(dev, bo);
  free(a), free(o);
  bxk_kernel_free(k);
}
