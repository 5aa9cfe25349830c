/* test_flex_edges.c — Flex's vectorized reductions, comparisons, powi and
 * casts against the NdArray reference on the values the conformance
 * matrix does not generate: NaN (one, several), infinities, signed zeros,
 * extremes that are zeros (the sign must be the first zero's), scalars
 * that f32 cannot hold, out-of-range casts, and lengths at and
 * around the vector widths and the kernels' block sizes.  Extremes,
 * argextremes, comparisons and casts must match exactly (a NaN matches
 * any NaN, a zero matches only a zero of the same sign); products, powi
 * and cumsum to a few ulps. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bext/bext.h"

static const bext_device *dev(const char *name) {
  const bext_device *d = bext_device_get(name);
  cr_assert_not_null(d, "%s", bext_last_error());
  return d;
}

/* A value stream with the edge cases sprinkled in at the given rate. */
static double edge_value(uint64_t *s, int kinds) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  uint64_t r = *s >> 33;
  if (kinds >= 2) {   /* zeros of both signs and one other value: extremes that are zeros */
    double v[] = { 0.0, -0.0, kinds == 2 ? -1.5 : 1.5 };
    return v[(r >> 5) % 3];
  }
  if (kinds && r % 97 == 0) {
    switch ((r >> 8) % 6) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: return 0.0;
    case 4: return -0.0;
    default: return 3.0e9;   /* out of i32 range */
    }
  }
  if (r % 13 == 0) return (r >> 7) % 2 ? 0.0 : -0.0;
  return ((double)(r % 2001) - 1000) / 64;
}

/* Host data of n values of dt. */
static void *make_data(bext_dtype dt, int64_t n, uint64_t seed, int kinds) {
  size_t es = bext_dtype_size(dt);
  char *p = calloc((size_t)(n ? n : 1), es);
  uint64_t s = seed;
  for (int64_t i = 0; i < n; i++) {
    double v = edge_value(&s, kinds);
    switch (dt) {
    case BEXT_F32: ((float *)p)[i] = (float)v; break;
    case BEXT_F64: ((double *)p)[i] = v; break;
    case BEXT_I32: ((int32_t *)p)[i] = isfinite(v) && fabs(v) < 2e9 ? (int32_t)v : (int32_t)(i * 7919); break;
    case BEXT_I64:   /* large magnitudes (wrapping products), beyond 2^53 for the float casts */
      ((int64_t *)p)[i] = isfinite(v) ? (int64_t)((uint64_t)(int64_t)(v * 1e6) * (i % 3 ? 1u : 1000003u))
                                      : INT64_MIN + i;
      break;
    default: cr_assert(false, "dtype %s not generated", bext_dtype_name(dt));
    }
  }
  return p;
}

/* Reads t as doubles. */
static double *read_all(bext_tensor *t, int64_t *n) {
  cr_assert_not_null(t, "%s", bext_last_error());
  *n = bext_numel(t);
  bext_tensor *d = bext_cast(bext_retain(t), BEXT_F64);
  cr_assert_not_null(d, "%s", bext_last_error());
  double *v = malloc(sizeof(double) * (size_t)(*n ? *n : 1));
  cr_assert(bext_read(d, v, sizeof(double) * (size_t)*n), "%s", bext_last_error());
  bext_release(d);
  return v;
}

/* Same values: exact (ulps == 0: a NaN matches a NaN, zeros must agree in
 * sign) or within ulps relative units of 2^-52 (f64) / 2^-23 (f32). */
static void expect_same(bext_tensor *got, bext_tensor *want, double ulps, bool f32, const char *what) {
  cr_assert_eq(bext_dtype_of(got), bext_dtype_of(want), "%s: dtype", what);
  int64_t n, m;
  double *g = read_all(got, &n), *w = read_all(want, &m);
  cr_assert_eq(n, m, "%s: size", what);
  for (int64_t i = 0; i < n; i++) {
    if (isnan(w[i])) {
      cr_assert(isnan(g[i]), "%s[%lld]: got %g, want NaN", what, (long long)i, g[i]);
      continue;
    }
    if (ulps == 0 || isinf(w[i]) || w[i] == 0) {
      cr_assert(g[i] == w[i] && signbit(g[i]) == signbit(w[i]), "%s[%lld]: got %.17g, want %.17g", what,
                (long long)i, g[i], w[i]);
      continue;
    }
    double tol = ulps * fabs(w[i]) * (f32 ? 0x1p-23 : 0x1p-52);
    cr_assert(fabs(g[i] - w[i]) <= tol, "%s[%lld]: got %.17g, want %.17g", what, (long long)i, g[i], w[i]);
  }
  free(g);
  free(w);
}

typedef bext_tensor *(*unop)(bext_tensor *t, void *arg);

/* Runs op on the same data on both devices and compares. */
static void check(bext_dtype dt, int rank, const int64_t *shape, int kinds, bool transpose, unop op, void *arg,
                  double ulps, const char *what) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= shape[d];
  void *data = make_data(dt, n, (uint64_t)n * 31 + (uint64_t)kinds, kinds);
  bext_tensor *r[2];
  const char *devs[2] = { "flex", "ndarray" };
  for (int k = 0; k < 2; k++) {
    bext_tensor *t = bext_from_data(data, dt, shape, rank, dev(devs[k]));
    cr_assert_not_null(t, "%s", bext_last_error());
    if (transpose) t = bext_swap_dims(t, 0, rank - 1);
    r[k] = op(t, arg);
    cr_assert_not_null(r[k], "%s on %s: %s", what, devs[k], bext_last_error());
  }
  char msg[160];
  snprintf(msg, sizeof msg, "%s %s [%lld%s%lld]%s", what, bext_dtype_name(dt), (long long)shape[0],
           rank > 1 ? "x" : "", rank > 1 ? (long long)shape[1] : 0LL, transpose ? " transposed" : "");
  expect_same(r[0], r[1], ulps, dt == BEXT_F32, msg);
  bext_release(r[0]);
  bext_release(r[1]);
  free(data);
}

struct red_arg { int which, dim; };
static bext_tensor *red_op(bext_tensor *t, void *a) {
  const struct red_arg *R = a;
  if (R->dim < 0) {
    switch (R->which) {
    case 0: return bext_max_all(t);
    case 1: return bext_min_all(t);
    case 2: return bext_argmax(t);
    case 3: return bext_argmin(t);
    default: return bext_prod(t);
    }
  }
  switch (R->which) {
  case 0: return bext_max_dim(t, R->dim, false);
  case 1: return bext_min_dim(t, R->dim, false);
  case 2: return bext_argmax_dim(t, R->dim, false);
  case 3: return bext_argmin_dim(t, R->dim, false);
  default: return bext_prod_dim(t, R->dim, false);
  }
}

/* Lengths around the lane widths (8, 4x8 unrolled) and the 2048-element
 * scan blocks. */
static const int64_t lens[] = { 1, 7, 8, 9, 31, 33, 100, 2047, 2048, 2049, 5000 };

Test(flex_edges, extremes_and_products) {
  const bext_dtype dts[] = { BEXT_F32, BEXT_F64, BEXT_I32, BEXT_I64 };
  for (size_t di = 0; di < 4; di++)
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
      for (int kinds = 0; kinds < 4; kinds++)
        for (int which = 0; which < 5; which++) {
          bool flt = dts[di] == BEXT_F32 || dts[di] == BEXT_F64;
          if (!flt && kinds) continue;   /* ints have no NaN or signed zeros */
          double ulps = which == 4 && flt ? 64 : 0;
          if (which == 4 && lens[li] > 100) continue;   /* long products: overflow order only */
          struct red_arg a = { which, -1 };
          check(dts[di], 1, (int64_t[]){ lens[li] }, kinds, false, red_op, &a, ulps, "reduce all");
          int64_t rows = lens[li] > 100 ? 3 : 37;
          for (int dim = 0; dim < 2; dim++) {
            a.dim = dim;
            check(dts[di], 2, (int64_t[]){ rows, lens[li] }, kinds, false, red_op, &a, ulps, "reduce dim");
          }
        }
}

Test(flex_edges, whole_tensor_extremes_split_across_threads) {
  /* Above the threaded whole-tensor threshold (chunks of 16K): NaNs and
   * zeros land in different chunks. */
  for (int kinds = 0; kinds < 4; kinds++)
    for (int which = 0; which < 4; which++) {
      struct red_arg a = { which, -1 };
      check(BEXT_F32, 1, (int64_t[]){ 100003 }, kinds, false, red_op, &a, 0, "reduce all (large)");
      check(BEXT_F64, 1, (int64_t[]){ 70001 }, kinds, false, red_op, &a, 0, "reduce all (large)");
    }
}

static bext_tensor *cumsum_op(bext_tensor *t, void *a) { return bext_cumsum(t, *(int *)a); }

Test(flex_edges, cumsum_rows) {
  for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
    for (int dim = 0; dim < 2; dim++) {
      int d = dim;
      check(BEXT_F32, 2, (int64_t[]){ 5, lens[li] }, 0, false, cumsum_op, &d, 0, "cumsum");
      check(BEXT_F64, 2, (int64_t[]){ 5, lens[li] }, 1, false, cumsum_op, &d, 0, "cumsum");
      check(BEXT_I32, 2, (int64_t[]){ 5, lens[li] }, 0, false, cumsum_op, &d, 0, "cumsum");
    }
}

struct cmp_arg { int which; double s; };
static bext_tensor *cmp_op(bext_tensor *t, void *a) {
  const struct cmp_arg *C = a;
  switch (C->which) {
  case 0: return bext_eq_scalar(t, C->s);
  case 1: return bext_ne_scalar(t, C->s);
  case 2: return bext_gt_scalar(t, C->s);
  case 3: return bext_ge_scalar(t, C->s);
  case 4: return bext_lt_scalar(t, C->s);
  default: return bext_le_scalar(t, C->s);
  }
}
static bext_tensor *cmp_self_op(bext_tensor *t, void *a) {
  /* t OP reversed t: a tensor-tensor comparison with NaNs on both sides */
  bext_tensor *f = bext_flip(bext_retain(t), (int[]){ 0 }, 1);
  switch (*(int *)a) {
  case 0: return bext_eq(t, f);
  case 1: return bext_ne(t, f);
  case 2: return bext_gt(t, f);
  case 3: return bext_ge(t, f);
  case 4: return bext_lt(t, f);
  default: return bext_le(t, f);
  }
}

Test(flex_edges, f32_comparisons_with_double_scalars) {
  /* Scalars exact in f32, between two f32s, beyond the f32 range, NaN,
   * infinities, zeros: every answer must be the double comparison's. */
  const double ss[] = { 0.0, -0.0, 0.5, 1.0 / 3.0, -1.0 / 3.0, 15.625 + 1e-12, 1e300, -1e300, 1e-300,
                        INFINITY, -INFINITY, NAN, 3.4028235677973366e38 };
  for (size_t si = 0; si < sizeof ss / sizeof ss[0]; si++)
    for (int which = 0; which < 6; which++)
      for (int kinds = 0; kinds < 2; kinds++) {
        struct cmp_arg a = { which, ss[si] };
        check(BEXT_F32, 1, (int64_t[]){ 1037 }, kinds, false, cmp_op, &a, 0, "compare scalar");
        check(BEXT_F32, 2, (int64_t[]){ 33, 17 }, kinds, true, cmp_op, &a, 0, "compare scalar");
      }
  for (int which = 0; which < 6; which++) {
    check(BEXT_F32, 1, (int64_t[]){ 1037 }, 1, false, cmp_self_op, &which, 0, "compare");
    check(BEXT_F32, 1, (int64_t[]){ 7 }, 1, false, cmp_self_op, &which, 0, "compare");
  }
}

static bext_tensor *powi_op(bext_tensor *t, void *a) { return bext_powi(t, *(int64_t *)a); }

Test(flex_edges, powi) {
  const int64_t es[] = { 0, 1, 2, 3, 4, 5, 7, -1, -2, -3, 13, 64, 65, -64 };
  for (size_t ei = 0; ei < sizeof es / sizeof es[0]; ei++)
    for (int kinds = 0; kinds < 2; kinds++) {
      /* x^2..x^4 are single roundings on both sides: exact; more factors
       * may differ in the double's last bit before the f32 rounding */
      double ulps = (es[ei] >= 0 && es[ei] <= 4) ? 0 : 1;
      check(BEXT_F32, 1, (int64_t[]){ 1037 }, kinds, false, powi_op, (void *)&es[ei], ulps, "powi");
      check(BEXT_F32, 2, (int64_t[]){ 9, 13 }, kinds, true, powi_op, (void *)&es[ei], ulps, "powi");
    }
}

/* Unary and scalar ops whose answers on signed zeros and NaN are part of
 * the rules (bxk_scalar.h): relu(-0) is -0 (it once was +0 in Flex),
 * sign and round keep zeros' signs, max/min with a zero of either sign,
 * floored rem of zeros. */
static bext_tensor *zero_op(bext_tensor *t, void *a) {
  switch (*(int *)a) {
  case 0: return bext_relu(t);
  case 1: return bext_sign(t);
  case 2: return bext_round(t);
  case 3: return bext_max_scalar(t, 0.0);
  case 4: return bext_max_scalar(t, -0.0);
  case 5: return bext_min_scalar(t, 0.0);
  case 6: return bext_min_scalar(t, -0.0);
  default: return bext_rem_scalar(t, -1.5);
  }
}

Test(flex_edges, signed_zeros_and_nans_elementwise) {
  const bext_dtype dts[] = { BEXT_F32, BEXT_F64, BEXT_I64 };
  for (int op = 0; op < 8; op++)
    for (size_t di = 0; di < 3; di++)
      for (int kinds = 1; kinds <= 2; kinds++) {
        if (dts[di] == BEXT_I64 && op == 2) continue;   /* round takes floats */
        check(dts[di], 1, (int64_t[]){ 1037 }, kinds, false, zero_op, &op, 0, "zeros");
        check(dts[di], 2, (int64_t[]){ 9, 13 }, kinds, true, zero_op, &op, 0, "zeros");
      }
}

static bext_tensor *cast_op(bext_tensor *t, void *a) { return bext_cast(t, *(bext_dtype *)a); }

Test(flex_edges, casts) {
  const bext_dtype from[] = { BEXT_F32, BEXT_F64, BEXT_I32, BEXT_I64 };
  for (size_t fi = 0; fi < 4; fi++)
    for (int to = 0; to < BEXT_DTYPE_COUNT; to++)
      for (int kinds = 0; kinds < 2; kinds++) {
        bext_dtype t = (bext_dtype)to;
        check(from[fi], 1, (int64_t[]){ 1037 }, kinds, false, cast_op, &t, 0, "cast");
        check(from[fi], 2, (int64_t[]){ 300, 301 }, kinds, false, cast_op, &t, 0, "cast");
      }
}

Test(flex_edges, f16_casts_of_special_values) {
  /* f32 -> f16 through F16C: NaN, infinities, overflow to inf, the
   * rounding boundary 65520, subnormal halves, ties to even, zeros. */
  const float v[] = { NAN, -NAN, INFINITY, -INFINITY, 65504.0f, 65519.99f, 65520.0f, -65520.0f, 1e-8f,
                      5.9604645e-8f, 2.9802322e-8f, 2.9802326e-8f, 6.097555e-5f, 6.1035156e-5f, 0.0f, -0.0f,
                      1.0009765625f, 1.00048828125f, 1.00146484375f, -3.5f, 1e10f, 1e-30f };
  enum { N = sizeof v / sizeof v[0] };
  float big[N * 8];
  for (int i = 0; i < N * 8; i++) big[i] = v[i % N];
  const char *devs[2] = { "flex", "ndarray" };
  uint16_t h[2][N * 8];
  for (int k = 0; k < 2; k++) {
    bext_tensor *t = bext_from_data(big, BEXT_F32, (int64_t[]){ N * 8 }, 1, dev(devs[k]));
    bext_tensor *c = bext_cast(t, BEXT_F16);
    cr_assert_not_null(c, "%s", bext_last_error());
    cr_assert(bext_read(c, h[k], sizeof h[k]), "%s", bext_last_error());
    bext_release(c);
  }
  for (int i = 0; i < N * 8; i++) {
    bool nan0 = (h[0][i] & 0x7c00u) == 0x7c00u && (h[0][i] & 0x3ffu);
    bool nan1 = (h[1][i] & 0x7c00u) == 0x7c00u && (h[1][i] & 0x3ffu);
    if (nan1) cr_expect(nan0, "f16 of %g: %#x, want a NaN", big[i], h[0][i]);
    else cr_expect_eq(h[0][i], h[1][i], "f16 of %g: %#x, want %#x", big[i], h[0][i], h[1][i]);
  }
}

static bext_tensor *neg_op(bext_tensor *t, void *a) { (void)a; return bext_neg(t); }
static bext_tensor *contig_op(bext_tensor *t, void *a) { (void)a; return bext_contiguous(t); }
static bext_tensor *add_self_op(bext_tensor *t, void *a) {
  /* transposed + contiguous copy of itself: one operand copied, one not */
  (void)a;
  bext_tensor *c = bext_contiguous(bext_retain(t));
  return bext_add(t, c);
}
static bext_tensor *gt_self_op(bext_tensor *t, void *a) {
  /* transposed > contiguous negation: the tile walk into a bool output */
  (void)a;
  bext_tensor *c = bext_neg(bext_contiguous(bext_retain(t)));
  return bext_gt(t, c);
}
static bext_tensor *where_self_op(bext_tensor *t, void *a) {
  /* mask_where with a transposed t and a contiguous mask and value */
  (void)a;
  bext_tensor *c = bext_contiguous(bext_retain(t));
  bext_tensor *m = bext_gt_scalar(bext_retain(c), 0.5);
  return bext_mask_where(t, m, bext_neg(c));
}
static bext_tensor *permute_contig_op(bext_tensor *t, void *a) {
  bext_tensor *p = bext_permute(t, (const int *)a, 3);
  return p ? bext_contiguous(p) : NULL;
}
static bext_tensor *permute_neg_op(bext_tensor *t, void *a) {
  bext_tensor *p = bext_permute(t, (const int *)a, 3);
  return p ? bext_neg(p) : NULL;
}

Test(flex_edges, transposed_inputs_through_tiles) {
  /* Shapes around the 32-element tiles (and under them), large enough for
   * the elementwise engine's tiled copy of a transposed input. */
  const int64_t shapes[][2] = { { 70, 45 }, { 64, 64 }, { 33, 97 }, { 31, 200 }, { 1000, 3 },
                                /* past one 32x256 tile and its prefetch distance, ragged */
                                { 33, 257 }, { 257, 33 }, { 300, 520 }, { 1, 3000 }, { 3000, 1 } };
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    const int64_t *sh = shapes[i];
    check(BEXT_F32, 2, sh, 1, true, neg_op, NULL, 0, "neg");
    check(BEXT_F64, 2, sh, 1, true, contig_op, NULL, 0, "contiguous");
    check(BEXT_I32, 2, sh, 0, true, contig_op, NULL, 0, "contiguous");
    check(BEXT_F32, 2, sh, 1, true, add_self_op, NULL, 0, "add");
    check(BEXT_F32, 2, sh, 1, true, gt_self_op, NULL, 0, "gt");
    check(BEXT_F32, 2, sh, 1, true, where_self_op, NULL, 0, "mask_where");
    check(BEXT_F64, 2, sh, 1, true, add_self_op, NULL, 0, "add");
    struct cmp_arg c = { 2, 0.3 };
    check(BEXT_F32, 2, sh, 1, true, cmp_op, &c, 0, "gt_scalar");
    bext_dtype to = BEXT_F16;
    check(BEXT_F32, 2, sh, 1, true, cast_op, &to, 0, "cast");
    to = BEXT_I64;
    check(BEXT_I32, 2, sh, 0, true, cast_op, &to, 0, "cast");
    int d = 1;
    check(BEXT_F32, 2, sh, 0, true, cumsum_op, &d, 0, "cumsum");
    struct red_arg r = { 2, 1 };
    check(BEXT_F32, 2, sh, 1, true, red_op, &r, 0, "argmax_dim");
  }
  /* rank 3: the source's contiguous dim moved to the front or middle */
  const int perms[][3] = { { 2, 0, 1 }, { 2, 1, 0 }, { 0, 2, 1 }, { 1, 2, 0 } };
  for (size_t i = 0; i < sizeof perms / sizeof perms[0]; i++) {
    check(BEXT_F32, 3, (int64_t[]){ 5, 40, 37 }, 1, false, permute_contig_op, (void *)perms[i], 0, "permute");
    check(BEXT_F32, 3, (int64_t[]){ 3, 35, 66 }, 1, false, permute_neg_op, (void *)perms[i], 0, "permute neg");
    check(BEXT_I64, 3, (int64_t[]){ 33, 2, 34 }, 0, false, permute_contig_op, (void *)perms[i], 0, "permute");
  }
}

/* A cast of a permuted view: Flex against the reference and against its
 * own cast of the contiguous copy, bit for bit.  A dense permuted input
 * keeps its layout (one flat pass); a slice of one (not dense) takes the
 * tiled copy; both must give the reference's values in logical order.
 * Sources other than f32/f64/i32/i64 are made by a cast of f32 edge data
 * on each device (NaN, infinities, out-of-range values, signed zeros). */
static void check_cast_view(bext_dtype from, bext_dtype to, int rank, const int64_t *shape, const int *perm,
                            bool narrow) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= shape[d];
  bool direct = from == BEXT_F32 || from == BEXT_F64 || from == BEXT_I32 || from == BEXT_I64;
  bext_dtype gen = direct ? from : BEXT_F32;
  void *data = make_data(gen, n, (uint64_t)n * 17 + (uint64_t)from, 1);
  bext_tensor *r[3];
  const char *devs[3] = { "flex", "ndarray", "flex" };
  for (int k = 0; k < 3; k++) {
    bext_tensor *t = bext_from_data(data, gen, shape, rank, dev(devs[k]));
    if (!direct) t = bext_cast(t, from);
    t = bext_permute(t, perm, rank);
    if (narrow) t = bext_narrow(t, rank - 1, 1, bext_dim(t, rank - 1) - 2);
    cr_assert_not_null(t, "%s", bext_last_error());
    if (k == 2) t = bext_contiguous(t);
    r[k] = bext_cast(t, to);
    cr_assert_not_null(r[k], "cast on %s: %s", devs[k], bext_last_error());
  }
  char msg[160];
  snprintf(msg, sizeof msg, "cast %s->%s [%lld x %lld%s] perm %d%d%d%s", bext_dtype_name(from), bext_dtype_name(to),
           (long long)shape[0], (long long)shape[1], rank > 2 ? " x .." : "", perm[0], perm[1],
           rank > 2 ? perm[2] : 9, narrow ? " narrowed" : "");
  expect_same(r[0], r[1], 0, false, msg);
  expect_same(r[0], r[2], 0, false, msg);
  for (int k = 0; k < 3; k++) bext_release(r[k]);
  free(data);
}

Test(flex_edges, casts_of_transposed_and_permuted_inputs) {
  /* around the 8-lane kernels and the 32-element tiles; 1 x N and N x 1
   * (a size-1 dim: contiguous once swapped) */
  const int64_t shapes[][2] = { { 33, 257 }, { 64, 64 }, { 1, 3000 }, { 3000, 1 }, { 7, 1001 }, { 45, 70 } };
  const int t2[] = { 1, 0 };
  for (int from = 0; from < BEXT_DTYPE_COUNT; from++)
    for (int to = 0; to < BEXT_DTYPE_COUNT; to++) {
      for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        check_cast_view((bext_dtype)from, (bext_dtype)to, 2, shapes[i], t2, false);
      check_cast_view((bext_dtype)from, (bext_dtype)to, 2, shapes[0], t2, true);
    }
  const int perms[][3] = { { 2, 0, 1 }, { 2, 1, 0 }, { 0, 2, 1 }, { 1, 2, 0 } };
  const bext_dtype pairs[][2] = { { BEXT_F32, BEXT_F16 }, { BEXT_BF16, BEXT_F32 }, { BEXT_F64, BEXT_I64 },
                                  { BEXT_I64, BEXT_BF16 }, { BEXT_BOOL, BEXT_F64 }, { BEXT_F32, BEXT_BOOL } };
  for (size_t i = 0; i < sizeof perms / sizeof perms[0]; i++)
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
      check_cast_view(pairs[p][0], pairs[p][1], 3, (int64_t[]){ 5, 40, 37 }, perms[i], false);
      check_cast_view(pairs[p][0], pairs[p][1], 3, (int64_t[]){ 33, 2, 34 }, perms[i], true);
    }
}
