/* test_llvm_jit.c — kernels built with the builder, lowered to LLVM,
 * verified, optimized (default<O3>) and run through the ORC JIT.
 *
 * The semantics tests run every op x type (and every cast) over all pairs
 * of awkward values (0, -0, +-1, INT_MIN, -1 divisors, NaN, inf,
 * out-of-range floats, ...) and compare each element with bxk_eval_*,
 * i.e. with bxk_scalar.h: that is how the lowering is held to the one
 * semantics header.  Sizes are odd on purpose (not multiples of 8). */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bxk_scalar.h"
#include "bxl.h"
#include "kir_samples.h"
#include "llvm_bind.h"

static struct bxl_jit *jit;
static double compile_ms[512], compile_cpu_ms[512];
static int ncompiled;

static void setup(void) {
  struct bxk_diags ds = {0};
  jit = bxl_jit_new(&ds);
  cr_assert(jit, "%s", ds.n ? ds.d[0].msg : "?");
}

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void teardown(void) {
  bxl_jit_free(jit);
  jit = NULL;
  if (ncompiled) {
    /* CPU time too: the suite shares its cores, wall time is noisy */
    qsort(compile_ms, (size_t)ncompiled, sizeof compile_ms[0], cmpd);
    qsort(compile_cpu_ms, (size_t)ncompiled, sizeof compile_cpu_ms[0], cmpd);
    cr_log_info("JIT: %d kernels, compile (verify+lower+O3+codegen) median %.1f ms wall, %.1f ms CPU; "
                "max %.1f ms wall", ncompiled, compile_ms[ncompiled / 2], compile_cpu_ms[ncompiled / 2],
                compile_ms[ncompiled - 1]);
    ncompiled = 0;
  }
}

static double clock_ms(clockid_t c) {
  struct timespec t;
  clock_gettime(c, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Compiles k (and frees it). */
static bxl_kernel_fn compile(struct bxk_kernel *k) {
  struct bxk_diags ds = {0};
  double t0 = clock_ms(CLOCK_MONOTONIC), c0 = clock_ms(CLOCK_THREAD_CPUTIME_ID);
  bxl_kernel_fn fn = bxl_jit_compile(jit, k, &ds);
  if (ncompiled < 512) {
    compile_cpu_ms[ncompiled] = clock_ms(CLOCK_THREAD_CPUTIME_ID) - c0;
    compile_ms[ncompiled++] = clock_ms(CLOCK_MONOTONIC) - t0;
  }
  char buf[2048];
  bxk_diags_render(&ds, buf, sizeof buf);
  cr_assert(fn, "kernel %s did not compile:\n%s", k->name, buf);
  bxk_kernel_free(k);
  return fn;
}

/* n units over 1-D cubes of dim units; the last call stops at n (the
 * range ABI: unguarded kernels never see a unit past the end). */
static void run1d(bxl_kernel_fn fn, struct bxl_binding *b, union bxl_scalar *s, uint32_t n, uint32_t dim) {
  struct bxl_grid g = {.cube_count = {(n + dim - 1) / dim, 1, 1}, .cube_dim = {dim, 1, 1}};
  for (uint32_t c = 0; c < g.cube_count[0]; c++) {
    g.cube_pos[0] = c;
    uint32_t last = n - c * dim < dim ? n - c * dim : dim;
    fn(b, s, &g, 0, last);
  }
}

/* ----------------------------------------------------------- elementwise */

TestSuite(llvm, .init = setup, .fini = teardown);

Test(llvm, add_odd_sizes) {
  bxl_kernel_fn guarded = compile(sample_add(BXK_F32, true));
  bxl_kernel_fn plain = compile(sample_add(BXK_F32, false));
  static const uint32_t sizes[] = {1, 7, 13, 100, 1001, 4099};
  static const uint32_t dims[] = {1, 3, 64, 256};
  for (size_t si = 0; si < 6; si++)
    for (size_t di = 0; di < 4; di++) {
      uint32_t n = sizes[si], dim = dims[di];
      float *a = malloc(n * 4), *b = malloc(n * 4), *o = malloc((n + dim) * 4);
      for (uint32_t i = 0; i < n; i++) a[i] = (float)i * 0.25f, b[i] = 1.0f / (float)(i + 1);
      struct bxl_binding bs[3] = {bind(a, n), bind(b, n), bind(o, n)};
      for (int pass = 0; pass < 2; pass++) {
        memset(o, 0xff, (n + dim) * 4);
        if (pass == 0) { /* guarded: whole cubes and one past the end, each
                            * cube in two calls; the kernel stops at len */
          struct bxl_grid g = {.cube_count = {(n + dim - 1) / dim + 1, 1, 1}, .cube_dim = {dim, 1, 1}};
          for (uint32_t c = 0; c < g.cube_count[0]; c++) {
            g.cube_pos[0] = c;
            guarded(bs, NULL, &g, 0, dim / 2);
            guarded(bs, NULL, &g, dim / 2, dim);
          }
        } else {
          run1d(plain, bs, NULL, n, dim);
        }
        for (uint32_t i = 0; i < n; i++) cr_assert_eq(o[i], a[i] + b[i], "n=%u dim=%u i=%u", n, dim, i);
        uint32_t past;
        memcpy(&past, &o[n], 4);
        cr_assert_eq(past, 0xffffffffu, "wrote past the end (n=%u dim=%u pass %d)", n, dim, pass);
      }
      free(a), free(b), free(o);
    }
}

Test(llvm, gelu_f32_f64) {
  bxl_kernel_fn g32 = compile(sample_gelu(BXK_F32));
  bxl_kernel_fn g64 = compile(sample_gelu(BXK_F64));
  uint32_t n = 1037;
  float *x = malloc(n * 4), *y = malloc(n * 4);
  double *xd = malloc(n * 8), *yd = malloc(n * 8);
  for (uint32_t i = 0; i < n; i++) x[i] = (float)i / 97.0f - 5.0f, xd[i] = x[i];
  struct bxl_binding b32[2] = {bind(x, n), bind(y, n)}, b64[2] = {bind(xd, n), bind(yd, n)};
  b32[0].rank = b64[0].rank = 0; /* rank-generic bindings */
  run1d(g32, b32, NULL, n, 128);
  run1d(g64, b64, NULL, n, 100);
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
  /* folded (sqrt(2) becomes a constant): the same results */
  struct bxk_kernel *k = sample_gelu(BXK_F32);
  cr_expect_eq(bxk_fold(k), 1);
  bxl_kernel_fn gf = compile(k);
  float *y2 = malloc(n * 4);
  b32[1].data = y2;
  run1d(gf, b32, NULL, n, 128);
  cr_expect(!memcmp(y, y2, n * 4), "folding changed the results");
  free(x), free(y), free(y2), free(xd), free(yd);
}

Test(llvm, loops_break_continue_return) {
  bxl_kernel_fn fn = compile(sample_loops());
  static const float a[] = {1, 2, -1, 0, 5, 3, -2, 7, 0, 4, 1};
  uint32_t na = 11, n = 19;
  float o[19];
  struct bxl_binding bs[2] = {bind((void *)a, na), bind(o, n)};
  run1d(fn, bs, NULL, n + 5, 8); /* 5 units past len(out): they return */
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
}

Test(llvm, topology_3d) {
  bxl_kernel_fn fn = compile(sample_topo());
  /* cubes 2x3x2 of 4x2x3 units: the general (3-D) unit loop */
  struct bxl_grid g = {.cube_count = {2, 3, 2}, .cube_dim = {4, 2, 3}};
  uint32_t W = 8, H = 6, D = 6, n = W * H * D;
  uint32_t *o = calloc(n, 4);
  struct bxl_binding b = bind(o, n);
  union bxl_scalar s = {.u32 = 7};
  for (uint32_t cz = 0; cz < 2; cz++)
    for (uint32_t cy = 0; cy < 3; cy++)
      for (uint32_t cx = 0; cx < 2; cx++) {
        g.cube_pos[0] = cx, g.cube_pos[1] = cy, g.cube_pos[2] = cz;
        fn(&b, &s, &g, 0, 5);   /* a cube's units split over two calls */
        fn(&b, &s, &g, 5, 24);
      }
  for (uint32_t z = 0; z < D; z++)
    for (uint32_t y = 0; y < H; y++)
      for (uint32_t x = 0; x < W; x++) {
        uint32_t ux = x % 4, uy = y % 2, uz = z % 3, cx = x / 4, cy = y / 2, cz = z / 3;
        uint32_t unit = ux + 4 * (uy + 2 * uz), cube = cx + 2 * (cy + 3 * cz);
        uint32_t want = x + 1000 * y + 1000000 * unit + 100000000u * cube + 7;
        uint32_t at = x + W * (y + H * z);
        cr_assert_eq(o[at], want, "x=%u y=%u z=%u: %u vs %u", x, y, z, o[at], want);
      }
  free(o);
}

/* ------------------------------------------------ semantics vs the header */

static const double fvals[] = {0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 2.5, 3.0, -3.0, 7.25, -7.25,
                               1e30, -1e30, INFINITY, -INFINITY, NAN, 1e-40, 3e9, -3e9,
                               255.5, 65504.0, 1e-8, 4294967296.0};
static const int64_t ivals[] = {0, 1, -1, 2, -2, 3, -3, 7, -7, 13, 100, -100, 255, 256,
                                INT32_MAX, INT32_MIN, (int64_t)UINT32_MAX, INT64_MAX, INT64_MIN,
                                1000000000000ll, -1000000000000ll};
#define NF (sizeof fvals / sizeof fvals[0])
#define NI (sizeof ivals / sizeof ivals[0])


/* typed memory <-> literals (union bxk_lit's convention) */
static void put_lit(unsigned t, void *p, size_t i, union bxk_lit v) {
  v = bxk_lit_norm(t, v);
  switch (t) {
  case BXK_BOOL: case BXK_U8: ((uint8_t *)p)[i] = (uint8_t)v.u; break;
  case BXK_I32: ((int32_t *)p)[i] = (int32_t)v.i; break;
  case BXK_U32: ((uint32_t *)p)[i] = (uint32_t)v.u; break;
  case BXK_I64: ((int64_t *)p)[i] = v.i; break;
  case BXK_F16: ((uint16_t *)p)[i] = bxk_f32_to_f16((float)v.f); break;
  case BXK_BF16: ((uint16_t *)p)[i] = bxk_f32_to_bf16((float)v.f); break;
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
  case BXK_BF16: v.f = bxk_bf16_to_f32(((const uint16_t *)p)[i]); break;
  case BXK_F32: v.f = ((const float *)p)[i]; break;
  case BXK_F64: v.f = ((const double *)p)[i]; break;
  }
  return v;
}

/* Literal number j of the value set for type t. */
static union bxk_lit val(unsigned t, size_t j) {
  union bxk_lit v;
  if (bxk_type_is_float(t)) v.f = fvals[j % NF];
  else v.i = ivals[j % NI];
  return bxk_lit_norm(t, v);
}
static size_t nvals(unsigned t) { return bxk_type_is_float(t) ? NF : t == BXK_BOOL ? 2 : NI; }

static bool same(unsigned t, union bxk_lit a, union bxk_lit b) {
  if (bxk_type_is_float(t)) {
    if (a.f != a.f || b.f != b.f) return a.f != a.f && b.f != b.f;
    return a.f == b.f && signbit(a.f) == signbit(b.f);
  }
  return a.u == b.u;
}

/* bxk_scalar.h: "transcendental functions are libm's for the type; their
 * last-bit results are not part of this contract".  The lowering calls
 * libmvec's vector variants where the loop vectorizes, whose results may
 * differ from scalar libm's in the last bits (glibc documents up to 4 ulp
 * for libmvec), so those ops are compared within 4 units in the last
 * place of the result type; every other op bit for bit. */
static bool libm_op(unsigned op) {
  switch (op) {
  case BXK_OP_EXP: case BXK_OP_LOG: case BXK_OP_LOG1P: case BXK_OP_SIN: case BXK_OP_COS:
  case BXK_OP_TANH: case BXK_OP_ERF: case BXK_OP_POW: return true;
  default: return false;
  }
}

static bool same_op(unsigned op, unsigned t, union bxk_lit a, union bxk_lit b) {
  if (same(t, a, b)) return true;
  if (!libm_op(op) || !bxk_type_is_float(t) || a.f != a.f || b.f != b.f || isinf(a.f) || isinf(b.f)) return false;
  int mant = t == BXK_F16 ? 10 : t == BXK_BF16 ? 7 : t == BXK_F32 ? 23 : 52;
  int e;
  frexp(fmax(fabs(a.f), fabs(b.f)), &e);
  double ulp = ldexp(1, e - 1 - mant);
  return fabs(a.f - b.f) <= 4 * ulp;
}

static const char *opn(unsigned op) { return bxk_opinfo[op].name; }

static int mismatches;

/* Whether op x t (x from) is valid IR: the verifier decides, on the
 * one-op sample kernel. */
static bool valid(struct bxk_kernel *k) {
  struct bxk_diags ds = {0};
  bool ok = bxk_verify(k, &ds);
  bxk_kernel_free(k);
  return ok;
}

static const char *fmt(unsigned t, union bxk_lit v, char *buf) {
  if (bxk_type_is_float(t)) snprintf(buf, 40, "%.17g", v.f);
  else if (bxk_type_is_signed(t)) snprintf(buf, 40, "%lld", (long long)v.i);
  else snprintf(buf, 40, "%llu", (unsigned long long)v.u);
  return buf;
}

/* t: the operands' type; rt: the result's */
static void report(const char *what, unsigned t, unsigned rt, union bxk_lit x, union bxk_lit y,
                   union bxk_lit got, union bxk_lit want) {
  char b[4][40];
  if (mismatches++ < 20)
    cr_log_error("%s.%s(%s, %s) = %s, bxk_scalar.h says %s", what, bxk_type_name(t), fmt(t, x, b[0]),
                 fmt(t, y, b[1]), fmt(rt, got, b[2]), fmt(rt, want, b[3]));
}

/* One kernel per type computes every valid binary op (one output each)
 * over all pairs of the type's values: few compiles, every element
 * checked against the evaluator. */
static void check_bins(unsigned t) {
  unsigned ops[BXK_OP_COUNT], nops = 0;
  for (unsigned op = BXK_OP_ADD; op <= BXK_OP_GE; op++)
    if (valid(sample_binop((enum bxk_op)op, (enum bxk_type)t))) ops[nops++] = op;
  struct bxk_kernel *k = bxk_kernel_new("binops");
  int a = bxk_add_binding(k, (enum bxk_type)t, 1, false), b = bxk_add_binding(k, (enum bxk_type)t, 1, false);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_val pos = bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS);
  bxk_val x = bxk_load(&B, a, pos), y = bxk_load(&B, b, pos);
  for (unsigned j = 0; j < nops; j++) {
    bool cmp = bxk_opinfo[ops[j]].cls == BXK_C_CMP;
    int o = bxk_add_binding(k, cmp ? BXK_BOOL : (enum bxk_type)t, 1, true);
    bxk_store(&B, o, pos, bxk_bin(&B, (enum bxk_op)ops[j], x, y));
  }
  bxl_kernel_fn fn = compile(k);
  size_t m = nvals(t), n = m * m;
  struct bxl_binding bs[2 + BXK_OP_COUNT];
  void *mem[2 + BXK_OP_COUNT];
  for (unsigned j = 0; j < 2 + nops; j++) bs[j] = bind(mem[j] = malloc(n * 8), (uint32_t)n);
  for (size_t i = 0; i < n; i++) {
    put_lit(t, mem[0], i, val(t, i / m));
    put_lit(t, mem[1], i, val(t, i % m));
  }
  run1d(fn, bs, NULL, (uint32_t)n, 32);
  for (unsigned j = 0; j < nops; j++) {
    unsigned op = ops[j], rt = bxk_opinfo[op].cls == BXK_C_CMP ? BXK_BOOL : t;
    for (size_t i = 0; i < n; i++) {
      union bxk_lit x = get_lit(t, mem[0], i), y = get_lit(t, mem[1], i), want = {0};
      cr_assert(bxk_eval_bin((enum bxk_op)op, (enum bxk_type)t, x, y, &want));
      want = bxk_lit_norm(rt, want);
      union bxk_lit got = get_lit(rt, mem[2 + j], i);
      if (!same_op(op, rt, got, want)) report(opn(op), t, rt, x, y, got, want);
    }
  }
  for (unsigned j = 0; j < 2 + nops; j++) free(mem[j]);
}

static void check_uns(unsigned t) {
  unsigned ops[BXK_OP_COUNT], nops = 0;
  for (unsigned op = BXK_OP_NEG; op <= BXK_OP_TRUNC; op++)
    if (valid(sample_unop((enum bxk_op)op, (enum bxk_type)t))) ops[nops++] = op;
  struct bxk_kernel *k = bxk_kernel_new("unops");
  int a = bxk_add_binding(k, (enum bxk_type)t, 1, false);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_val pos = bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS);
  bxk_val x = bxk_load(&B, a, pos);
  for (unsigned j = 0; j < nops; j++) {
    int o = bxk_add_binding(k, (enum bxk_type)t, 1, true);
    bxk_store(&B, o, pos, bxk_un(&B, (enum bxk_op)ops[j], x));
  }
  bxl_kernel_fn fn = compile(k);
  size_t n = nvals(t);
  struct bxl_binding bs[1 + BXK_OP_COUNT];
  void *mem[1 + BXK_OP_COUNT];
  for (unsigned j = 0; j < 1 + nops; j++) bs[j] = bind(mem[j] = malloc(n * 8), (uint32_t)n);
  for (size_t i = 0; i < n; i++) put_lit(t, mem[0], i, val(t, i));
  run1d(fn, bs, NULL, (uint32_t)n, 5);
  for (unsigned j = 0; j < nops; j++)
    for (size_t i = 0; i < n; i++) {
      union bxk_lit x = get_lit(t, mem[0], i), want = {0};
      cr_assert(bxk_eval_un((enum bxk_op)ops[j], (enum bxk_type)t, x, &want));
      want = bxk_lit_norm(t, want);
      union bxk_lit got = get_lit(t, mem[1 + j], i);
      if (!same_op(ops[j], t, got, want)) report(opn(ops[j]), t, t, x, x, got, want);
    }
  for (unsigned j = 0; j < 1 + nops; j++) free(mem[j]);
}

static const unsigned types[] = {BXK_BOOL, BXK_U8, BXK_I32, BXK_U32, BXK_I64, BXK_F16, BXK_F32, BXK_F64, BXK_BF16};
#define NTYPES (sizeof types / sizeof types[0])

Test(llvm, binary_ops_match_header) {
  mismatches = 0;
  for (size_t t = 0; t < NTYPES; t++) check_bins(types[t]);
  cr_expect_eq(mismatches, 0, "%d elements differ from bxk_scalar.h", mismatches);
}

Test(llvm, unary_ops_match_header) {
  mismatches = 0;
  for (size_t t = 0; t < NTYPES; t++) check_uns(types[t]);
  cr_expect_eq(mismatches, 0, "%d elements differ from bxk_scalar.h", mismatches);
}

/* One kernel per source type casts to every type. */
Test(llvm, casts_match_header) {
  mismatches = 0;
  for (size_t f = 0; f < NTYPES; f++) {
    unsigned from = types[f];
    struct bxk_kernel *k = bxk_kernel_new("casts");
    int a = bxk_add_binding(k, (enum bxk_type)from, 1, false);
    struct bxk_builder B = bxk_builder_at(k, NULL);
    bxk_val pos = bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS);
    bxk_val x = bxk_load(&B, a, pos);
    for (size_t t = 0; t < NTYPES; t++) {
      int o = bxk_add_binding(k, (enum bxk_type)types[t], 1, true);
      bxk_store(&B, o, pos, bxk_cast(&B, (enum bxk_type)types[t], x));
    }
    bxl_kernel_fn fn = compile(k);
    size_t n = nvals(from);
    struct bxl_binding bs[1 + NTYPES];
    void *mem[1 + NTYPES];
    for (size_t j = 0; j < 1 + NTYPES; j++) bs[j] = bind(mem[j] = malloc(n * 8), (uint32_t)n);
    for (size_t i = 0; i < n; i++) put_lit(from, mem[0], i, val(from, i));
    run1d(fn, bs, NULL, (uint32_t)n, 16);
    for (size_t t = 0; t < NTYPES; t++)
      for (size_t i = 0; i < n; i++) {
        unsigned to = types[t];
        union bxk_lit x = get_lit(from, mem[0], i), want = {0};
        cr_assert(bxk_eval_cast((enum bxk_type)to, (enum bxk_type)from, x, &want));
        union bxk_lit got = get_lit(to, mem[1 + t], i);
        if (!same(to, got, want)) {
          char what[32];
          snprintf(what, sizeof what, "cast->%s", bxk_type_name(to));
          report(what, from, to, x, x, got, want);
        }
      }
    for (size_t j = 0; j < 1 + NTYPES; j++) free(mem[j]);
  }
  cr_expect_eq(mismatches, 0, "%d elements differ from bxk_scalar.h", mismatches);
}

/* ------------------------------------------------------- stages, errors */

Test(llvm, emit_ll_vectorizes_unit_loop) {
  struct bxk_kernel *k = sample_add(BXK_F32, false);
  struct bxk_diags ds = {0};
  char *raw = bxl_emit_ll(k, BXL_CPU_BASELINE, false, &ds);
  char *opt = bxl_emit_ll(k, BXL_CPU_BASELINE, true, &ds);
  cr_assert(raw && opt, "%s", ds.n ? ds.d[0].msg : "?");
  cr_expect(strstr(raw, "define void @add(ptr"), "%s", raw);
  cr_expect(strstr(raw, "define internal void @add.unit("), "%s", raw);
  cr_expect(strstr(raw, "!invariant.load"));
  /* O3 for x86-64-v2: the 1-D unit loop is vectorized (SSE: 4 lanes) */
  cr_expect(strstr(opt, "<4 x float>"), "not vectorized:\n%s", opt);
  cr_expect(!strstr(opt, "@add.unit("), "unit function not inlined");
  free(raw), free(opt);
  bxk_kernel_free(k);
  /* bf16's widening and rounding are integer ops: the loop still
   * vectorizes, loads and stores whole vectors of i16 */
  k = sample_add(BXK_BF16, false);
  opt = bxl_emit_ll(k, BXL_CPU_BASELINE, true, &ds);
  cr_assert(opt, "%s", ds.n ? ds.d[0].msg : "?");
  cr_expect(strstr(opt, "load <8 x i16>") && strstr(opt, "store <8 x i16>"), "bf16 add not vectorized:\n%s", opt);
  free(opt);
  bxk_kernel_free(k);
}

/* The guarded GELU (`if ABSOLUTE_POS < len`, erf inside) vectorizes where
 * the target has masked loads and stores (AVX2: x86-64-v3): the guard
 * becomes masks, the binding's data pointer is loaded once before the
 * loop (the ABI's dereferenceable arrays), and erf calls libmvec's 8-lane
 * AVX2 variant.  The x86-64-v2 baseline may name only the SSE variants. */
Test(llvm, guarded_gelu_vectorizes_unmasked_with_libmvec) {
  struct bxk_diags ds = {0};
  struct bxk_kernel *k = sample_gelu(BXK_F32);
  char *v3 = bxl_emit_ll(k, "x86-64-v3", true, &ds);
  char *v2 = bxl_emit_ll(k, BXL_CPU_BASELINE, true, &ds);
  cr_assert(v3 && v2, "%s", ds.n ? ds.d[0].msg : "?");
  cr_expect(strstr(v3, "call <8 x float> @_ZGVdN8v_erff("), "no vector erf call:\n%s", v3);
  /* the 1-D loop stops at the guard's bound instead of masking it
   * (bxl_lower.c guard_of): no masked loads or stores */
  cr_expect(!strstr(v3, "@llvm.masked."), "the 1-D loop still masks its guard:\n%s", v3);
  cr_expect(strstr(v3, "@llvm.umin.i32"), "no bound from the guard:\n%s", v3);
  cr_expect(strstr(v2, "_ZGVbN4v_erff(_ZGVbN4v_erff)"), "no SSE variant named:\n%s", v2);
  cr_expect(!strstr(v2, "_ZGVd"), "an AVX2 variant on the x86-64-v2 baseline:\n%s", v2);
  free(v3), free(v2);
  bxk_kernel_free(k);
}

Test(llvm, rejects_what_it_cannot_compile) {
  struct bxk_diags ds = {0};
  /* a barrier under uniform control flow (the verifier accepts it): the
   * CPU lowering splits phases at top-level barriers only, and says so at
   * the barrier's location */
  struct bxk_kernel *k = bxk_kernel_new("nested_sync");
  int o = bxk_add_binding(k, BXK_F32, 1, true);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  struct bxk_block *body;
  bxk_val i = bxk_for(&B, bxk_const_i(&B, BXK_U32, 0), bxk_const_i(&B, BXK_U32, 4),
                      bxk_const_i(&B, BXK_U32, 1), &body);
  struct bxk_builder I = bxk_builder_at(k, body);
  I.loc = (struct bxk_loc){3, 120, 11};
  bxk_sync(&I);
  (void)i;
  bxk_store(&B, o, bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS), bxk_const_f(&B, BXK_F32, 1));
  cr_assert(bxk_verify(k, &ds), "the verifier should accept a barrier in a uniform loop");
  cr_expect(!bxl_jit_compile(jit, k, &ds));
  cr_assert_geq(ds.n, 1);
  cr_expect_eq(ds.d[0].err, BXK_E_LOWER);
  cr_expect(strstr(ds.d[0].msg, "sync_cube inside if/for/loop"), "%s", ds.d[0].msg);
  cr_expect(ds.d[0].loc.file == 3 && ds.d[0].loc.off == 120 && ds.d[0].loc.len == 11,
            "the refusal is not at the barrier");
  bxk_kernel_free(k);
  /* one object, two kernels with one name: refused, not renamed */
  struct bxk_kernel *two[2] = {sample_add(BXK_F32, true), sample_add(BXK_F64, true)};
  memset(&ds, 0, sizeof ds);
  cr_expect(!bxl_emit_object((const struct bxk_kernel *const *)two, 2, NULL, "/nonexistent/k.o", &ds));
  cr_expect(ds.n && strstr(ds.d[0].msg, "two kernels named add"), "%s", ds.n ? ds.d[0].msg : "");
  bxk_kernel_free(two[0]);
  bxk_kernel_free(two[1]);
  /* an unverified kernel never reaches LLVM */
  memset(&ds, 0, sizeof ds);
  k = bxk_kernel_new("bad");
  B = bxk_builder_at(k, NULL);
  bxk_un(&B, BXK_OP_EXP, bxk_const_i(&B, BXK_I32, 1));
  cr_expect(!bxl_jit_compile(jit, k, &ds));
  cr_expect(!bxl_emit_ll(k, NULL, true, &ds));
  cr_expect_eq(ds.d[0].err, BXK_E_TYPE);
  bxk_kernel_free(k);
}

Test(llvm, same_kernel_twice_and_shared_memory) {
  /* two compiles of one kernel get distinct symbols */
  bxl_kernel_fn f1 = compile(sample_add(BXK_I32, false));
  bxl_kernel_fn f2 = compile(sample_add(BXK_I32, false));
  cr_expect(f1 != f2);
  /* shared memory without a barrier: a cube reverses its slice */
  struct bxk_kernel *k = bxk_kernel_new("rev");
  int in = bxk_add_binding(k, BXK_I32, 1, false), out = bxk_add_binding(k, BXK_I32, 1, true);
  int sh = bxk_add_shared(k, BXK_I32, 16);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_val u = bxk_topo(&B, BXK_TOPO_UNIT_POS);
  bxk_val ap = bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS);
  bxk_sstore(&B, sh, u, bxk_load(&B, in, ap));
  bxk_val v = bxk_sload(&B, sh, u);
  bxk_store(&B, out, ap, bxk_bin(&B, BXK_OP_MUL, v, bxk_const_i(&B, BXK_I32, 3)));
  bxl_kernel_fn fr = compile(k);
  int32_t a[48], o[48];
  for (int i = 0; i < 48; i++) a[i] = i - 20;
  struct bxl_binding bs[2] = {bind(a, 48), bind(o, 48)};
  run1d(fr, bs, NULL, 48, 16);
  for (int i = 0; i < 48; i++) cr_assert_eq(o[i], 3 * (i - 20));
  /* with a barrier: unit 0 writes the cube's first element after every
   * unit stored its own (phases) */
  fr = compile(sample_shared_sum());
  float f[256], sums[4] = {0};
  for (int i = 0; i < 256; i++) f[i] = (float)(i * 3 + 1);
  struct bxl_binding fs[2] = {bind(f, 256), bind(sums, 4)};
  run1d(fr, fs, NULL, 256, 64);
  for (int c = 0; c < 4; c++) cr_assert_eq(sums[c], f[64 * c], "cube %d: %g", c, sums[c]);
}

/* Ahead of time: an object for the baseline CPU, linked into a shared
 * library by the system compiler and run (skipped when there is no cc). */
Test(llvm, aot_object_links_and_runs) {
  char dir[] = "/tmp/bxl_aotXXXXXX";
  cr_assert(mkdtemp(dir));
  char obj[128], so[128], cmd[512];
  snprintf(obj, sizeof obj, "%s/k.o", dir);
  snprintf(so, sizeof so, "%s/k.so", dir);
  struct bxk_kernel *ks[2] = {sample_add(BXK_F64, true), sample_loops()};
  struct bxk_diags ds = {0};
  cr_assert(bxl_emit_object((const struct bxk_kernel *const *)ks, 2, NULL, obj, &ds),
            "%s", ds.n ? ds.d[0].msg : "?");
  FILE *f = fopen(obj, "rb");
  cr_assert(f);
  unsigned char magic[4] = {0};
  cr_expect_eq(fread(magic, 1, 4, f), 4);
  fclose(f);
  cr_expect(!memcmp(magic, "\x7f" "ELF", 4));
  snprintf(cmd, sizeof cmd, "cc -shared -o %s %s -lm 2>/dev/null", so, obj);
  if (system(cmd) == 0) {
    void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    cr_assert(h, "%s", dlerror());
    bxl_kernel_fn add = (bxl_kernel_fn)(uintptr_t)dlsym(h, "add");
    cr_assert(add);
    double a[9], b[9], o[9];
    for (int i = 0; i < 9; i++) a[i] = i, b[i] = 0.5 * i;
    struct bxl_binding bs[3] = {bind(a, 9), bind(b, 9), bind(o, 9)};
    run1d(add, bs, NULL, 9, 4);
    for (int i = 0; i < 9; i++) cr_expect_eq(o[i], 1.5 * i);
    dlclose(h);
  } else {
    cr_log_warn("no cc: object emitted but not linked");
  }
  unlink(so);
  unlink(obj);
  rmdir(dir);
  bxk_kernel_free(ks[0]);
  bxk_kernel_free(ks[1]);
}
