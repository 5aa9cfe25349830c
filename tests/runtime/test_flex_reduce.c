/* test_flex_reduce.c — Flex's float sums pinned bit for bit, and its
 * reductions and cumsum on the shapes the speed paths split on.
 *
 * The summation order is the contract (bext.h's bound, docs/runtime.md
 * "Flex's speed"): a change of kernel must not move a bit.  So sums and
 * means of f32/f64 are checked against a transcription of the tree written
 * here, independently of the kernels: a contiguous run (a whole tensor or
 * a row along the last dim) in leaves of 256 elements, each leaf in 16
 * lanes (j mod 16; then 4-element steps into lanes 0..3), the lanes folded
 * ((l, l+4) + (l+8, l+12), then (0 + 1) + (2 + 3)) and the tail added in
 * order; along any other axis, leaves of 16 rows summed left to right per
 * column; leaves combined by the pairwise counter (flex_kern.h).  Halves
 * are the f32 sums of their widened values (checked against Flex's f32
 * sum, which the first test pins).  Values span 40 binades, so another
 * order would change bits.  Shapes: odd lengths, 1xN, Nx1, 3-d with the
 * middle axis reduced, empty dims, transposed views, whole tensors split
 * across threads, NaN and infinities (and zeros of both signs for the
 * extremes).  Reductions other than float sums
 * and cumsum are checked against the NdArray reference. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bext/bext.h"

int bxr_pool_set_threads(int n);   /* runtime/src/backend.h */

static const bext_device *dev(const char *name) {
  const bext_device *d = bext_device_get(name);
  cr_assert_not_null(d, "%s", bext_last_error());
  return d;
}

/* ---- the reference tree ------------------------------------------------ */

static double leaf(const double *x, size_t m) {
  double s[16] = { 0 };
  size_t j = 0;
  for (; j + 16 <= m; j += 16)
    for (int l = 0; l < 16; l++) s[l] += x[j + l];
  for (; j + 4 <= m; j += 4)
    for (int l = 0; l < 4; l++) s[l] += x[j + l];
  double v[4];
  for (int q = 0; q < 4; q++) v[q] = (s[q] + s[4 + q]) + (s[8 + q] + s[12 + q]);
  double r = (v[0] + v[1]) + (v[2] + v[3]);
  for (; j < m; j++) r += x[j];
  return r;
}

struct counter { int top; int lvl[64]; double v[64]; };
static void push(struct counter *c, double x) {
  int l = 0;
  while (c->top > 0 && c->lvl[c->top - 1] == l) x = c->v[--c->top] + x, l++;
  c->v[c->top] = x;
  c->lvl[c->top++] = l;
}
static double done(const struct counter *c) {
  if (c->top == 0) return 0.0;
  double s = c->v[c->top - 1];
  for (int i = c->top - 2; i >= 0; i--) s = c->v[i] + s;
  return s;
}

/* Sum of K values x[k * stride]: a contiguous run when stride is 1 (and
 * the reduction runs along the last axis), else rows of 16. */
static double ref_sum(const double *x, int64_t K, int64_t stride, bool run) {
  struct counter c = { 0 };
  double *tmp = malloc(sizeof(double) * 256);
  if (run) {
    for (int64_t k0 = 0; k0 < K; k0 += 256) {
      int64_t m = K - k0 < 256 ? K - k0 : 256;
      for (int64_t k = 0; k < m; k++) tmp[k] = x[(k0 + k) * stride];
      push(&c, leaf(tmp, (size_t)m));
    }
  } else {
    for (int64_t k0 = 0; k0 < K; k0 += 16) {
      int64_t k1 = k0 + 16 < K ? k0 + 16 : K;
      double s = x[k0 * stride];
      for (int64_t k = k0 + 1; k < k1; k++) s += x[k * stride];
      push(&c, s);
    }
  }
  free(tmp);
  return done(&c);
}

/* ---- data -------------------------------------------------------------- */

/* Values over 40 binades of both signs, exact in f32; kinds: NaN and
 * infinities sprinkled in. */
static double *values(int64_t n, uint64_t seed, bool kinds) {
  double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
  uint64_t s = seed * 2654435761u + 1;
  for (int64_t i = 0; i < n; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t r = s >> 20;
    double x = ldexp((double)(r % 16777216) / 16777216.0 + 0.5, (int)((r >> 24) % 40) - 20);
    if ((r >> 30) & 1) x = -x;
    if (kinds && (r >> 31) % 211 == 0) x = (r >> 40) % 3 == 0 ? NAN : (r >> 40) % 3 == 1 ? INFINITY : -INFINITY;
    if (kinds && (r >> 31) % 211 == 1) x = (r >> 40) % 2 ? 0.0 : -0.0;   /* extremes that are zeros */
    v[i] = (double)(float)x;
  }
  return v;
}

static bext_tensor *tensor_of(const double *v, int rank, const int64_t *shape, bext_dtype dt) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= shape[d];
  bext_tensor *t = bext_from_data(v, BEXT_F64, (int64_t[]){ n }, 1, dev("flex"));
  t = bext_reshape(t, shape, rank);
  if (dt != BEXT_F64) t = bext_cast(t, dt);
  cr_assert_not_null(t, "%s", bext_last_error());
  return t;
}

static double *read_f64(bext_tensor *t, int64_t *n) {
  cr_assert_not_null(t, "%s", bext_last_error());
  *n = bext_numel(t);
  bext_tensor *d = bext_cast(t, BEXT_F64);
  cr_assert_not_null(d, "%s", bext_last_error());
  double *v = malloc(sizeof(double) * (size_t)(*n ? *n : 1));
  cr_assert(bext_read(d, v, sizeof(double) * (size_t)*n), "%s", bext_last_error());
  bext_release(d);
  return v;
}

static bool same_bits(double g, double w) {
  if (isnan(g) && isnan(w)) return true;
  return memcmp(&g, &w, sizeof g) == 0;
}

/* ---- pinned sums ------------------------------------------------------- */

/* shape (rank <= 3), dim (-1: whole tensor) */
struct red_case { int rank; int64_t shape[3]; int dim; bool transposed; };
static const struct red_case cases[] = {
  { 1, { 1 }, -1, false },        { 1, { 7 }, -1, false },          { 1, { 33 }, -1, false },
  { 1, { 1000 }, -1, false },     { 1, { 0 }, -1, false },          { 1, { 100003 }, -1, false },
  { 1, { 300007 }, 0, false },    { 2, { 1, 9 }, 1, false },        { 2, { 1, 9 }, 0, false },
  { 2, { 9, 1 }, 0, false },      { 2, { 9, 1 }, 1, false },        { 2, { 31, 257 }, 0, false },
  { 2, { 31, 257 }, 1, false },   { 2, { 2049, 17 }, 0, false },    { 2, { 17, 2049 }, 1, false },
  { 2, { 8, 1031 }, 0, false },   { 2, { 40, 33 }, 0, true },       { 2, { 40, 33 }, 1, true },
  { 3, { 3, 37, 5 }, 1, false },  { 3, { 2, 300, 40 }, 1, false },  { 3, { 5, 1, 7 }, 1, false },
  { 3, { 4, 0, 3 }, 1, false },   { 3, { 4, 3, 0 }, 1, false },     { 3, { 3, 5, 600 }, 1, false },
  { 3, { 2, 3, 4 }, 2, false },   { 3, { 2, 3, 4 }, 0, false },     { 2, { 0, 5 }, 1, false },
  /* the lane steps (16, 4) and the kernels' two leaves at a time (512) */
  { 1, { 15 }, -1, false },       { 1, { 16 }, -1, false },         { 1, { 17 }, -1, false },
  { 1, { 31 }, -1, false },       { 1, { 511 }, -1, false },        { 1, { 512 }, -1, false },
  { 1, { 513 }, -1, false },      { 1, { 769 }, -1, false },        { 1, { 4097 }, -1, false },
  { 2, { 3, 1024 }, 1, false },   { 2, { 5, 1535 }, 1, false },     { 2, { 1030, 3 }, 0, true },
  { 2, { 33, 47 }, 0, false },    { 2, { 17, 31 }, 0, false },
};

/* The expected f64 sums (or means) of t's values v along dim. */
static double *expected(const struct red_case *C, const double *v, bool mean, int64_t *nout) {
  int64_t sh[3] = { 0 }, st[3] = { 0 }, numel = 1;
  for (int d = 0; d < C->rank; d++) sh[d] = C->shape[d], numel *= sh[d];
  if (C->transposed) {   /* the logical tensor is v viewed [a, b] swapped to [b, a] */
    int64_t a = sh[0];
    sh[0] = sh[1], sh[1] = a;
    st[0] = 1, st[1] = sh[0];
  } else {
    st[C->rank - 1] = 1;
    for (int d = C->rank - 2; d >= 0; d--) st[d] = st[d + 1] * sh[d + 1];
  }
  int64_t nres = 1;   /* outer * inner (more than numel when K is 0) */
  for (int d = 0; d < C->rank; d++)
    if (d != C->dim) nres *= sh[d];
  double *out = malloc(sizeof(double) * (size_t)(nres > 0 ? nres : 1));
  if (C->dim < 0) {
    double *flat = malloc(sizeof(double) * (size_t)(numel ? numel : 1));
    for (int64_t i = 0; i < numel; i++) {   /* logical (row-major) order */
      int64_t r = i, off = 0;
      for (int d = C->rank - 1; d >= 0; d--) off += (r % sh[d]) * st[d], r /= sh[d];
      flat[i] = v[off];
    }
    out[0] = ref_sum(flat, numel, 1, true);
    if (mean) out[0] /= (double)numel;
    free(flat);
    *nout = 1;
    return out;
  }
  /* a contiguous copy of the logical tensor, then [outer, K, inner] */
  double *c = malloc(sizeof(double) * (size_t)(numel ? numel : 1));
  for (int64_t i = 0; i < numel; i++) {
    int64_t r = i, off = 0;
    for (int d = C->rank - 1; d >= 0; d--) off += (r % sh[d]) * st[d], r /= sh[d];
    c[i] = v[off];
  }
  int64_t outer = 1, inner = 1, K = sh[C->dim];
  for (int d = 0; d < C->dim; d++) outer *= sh[d];
  for (int d = C->dim + 1; d < C->rank; d++) inner *= sh[d];
  int64_t n = 0;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      double s = ref_sum(c + o * K * inner + i, K, inner, inner == 1);
      out[n++] = mean ? s / (double)K : s;
    }
  free(c);
  *nout = n;
  return out;
}

static bext_tensor *run_sum(const struct red_case *C, bext_tensor *t, bool mean) {
  if (C->transposed) t = bext_swap_dims(t, 0, 1);
  if (C->dim < 0) return mean ? bext_mean(t) : bext_sum(t);
  return mean ? bext_mean_dim(t, C->dim, false) : bext_sum_dim(t, C->dim, false);
}

static void describe(char *buf, size_t size, const struct red_case *C, const char *op, bext_dtype dt, int threads) {
  snprintf(buf, size, "%s %s [%lld%s%lld%s%lld] dim %d%s, %d thread(s)", op, bext_dtype_name(dt),
           (long long)C->shape[0], C->rank > 1 ? "x" : "", C->rank > 1 ? (long long)C->shape[1] : 0LL,
           C->rank > 2 ? "x" : "", C->rank > 2 ? (long long)C->shape[2] : 0LL, C->dim,
           C->transposed ? " transposed" : "", threads);
}

Test(flex_reduce, float_sums_follow_the_pinned_tree) {
  const bext_dtype dts[] = { BEXT_F32, BEXT_F64 };
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
    for (int kinds = 0; kinds < 2; kinds++)
      for (int di = 0; di < 2; di++)
        for (int mean = 0; mean < 2; mean++)
          for (int threads = 1; threads <= 2; threads++) {
            const struct red_case *C = &cases[ci];
            int64_t numel = 1;
            for (int d = 0; d < C->rank; d++) numel *= C->shape[d];
            double *v = values(numel, ci * 7 + (uint64_t)kinds, kinds);
            int old = bxr_pool_set_threads(threads);
            bext_tensor *r = run_sum(C, tensor_of(v, C->rank, C->shape, dts[di]), mean);
            bxr_pool_set_threads(old);
            int64_t n, m;
            double *g = read_f64(r, &n), *w = expected(C, v, mean, &m);
            char what[160];
            describe(what, sizeof what, C, mean ? "mean" : "sum", dts[di], threads);
            cr_assert_eq(n, m, "%s: %lld results, want %lld", what, (long long)n, (long long)m);
            for (int64_t i = 0; i < n; i++) {
              double want = dts[di] == BEXT_F32 ? (double)(float)w[i] : w[i];
              cr_assert(same_bits(g[i], want), "%s [%lld]: got %a, want %a", what, (long long)i, g[i], want);
            }
            free(g);
            free(w);
            free(v);
          }
}

Test(flex_reduce, half_sums_are_the_f32_sums_of_the_widened_values) {
  const bext_dtype dts[] = { BEXT_BF16, BEXT_F16 };
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
    for (int kinds = 0; kinds < 2; kinds++)
      for (int di = 0; di < 2; di++)
        for (int mean = 0; mean < 2; mean++) {
          const struct red_case *C = &cases[ci];
          int64_t numel = 1;
          for (int d = 0; d < C->rank; d++) numel *= C->shape[d];
          double *v = values(numel, ci * 5 + (uint64_t)kinds, kinds);
          for (int64_t i = 0; i < numel; i++) v[i] = ldexp(v[i], -8);   /* mostly in f16's range */
          bext_tensor *h = tensor_of(v, C->rank, C->shape, dts[di]);
          bext_tensor *got = run_sum(C, bext_retain(h), mean);
          bext_tensor *want = bext_cast(run_sum(C, bext_cast(h, BEXT_F32), mean), dts[di]);
          int64_t n, m;
          double *g = read_f64(got, &n), *w = read_f64(want, &m);
          char what[160];
          describe(what, sizeof what, C, mean ? "mean" : "sum", dts[di], 2);
          cr_assert_eq(n, m, "%s: size", what);
          for (int64_t i = 0; i < n; i++)
            cr_assert(same_bits(g[i], w[i]), "%s [%lld]: got %a, want %a", what, (long long)i, g[i], w[i]);
          free(g);
          free(w);
          free(v);
        }
}

/* ---- against the reference --------------------------------------------- */

/* Flex's and NdArray's results of op on the same values: same dtype, shape
 * and bits (any NaN matches any NaN). */
static void same_as_reference(bext_dtype dt, int rank, const int64_t *shape, bool transposed, uint64_t seed,
                              bool kinds, bool near_one, bext_tensor *(*op)(bext_tensor *, int), int dim,
                              const char *what) {
  int64_t numel = 1;
  for (int d = 0; d < rank; d++) numel *= shape[d];
  double *v = values(numel, seed, kinds);
  if (near_one)   /* products that neither overflow nor vanish over many rows */
    for (int64_t i = 0; i < numel; i++)
      if (isfinite(v[i]) && v[i] != 0) v[i] = (double)(float)(1.0 + ldexp(fmod(fabs(v[i]), 1.0), -3) * (v[i] < 0 ? -1 : 1));
  if (dt == BEXT_I32 || dt == BEXT_I64)   /* ints near the type's limits: the running sums wrap */
    for (int64_t i = 0; i < numel; i++)
      v[i] = isfinite(v[i]) ? (v[i] < 0 ? -1.0 : 1.0) * (dt == BEXT_I32 ? 2.1e9 : 9.2e18) * fmod(fabs(v[i]), 1.0)
                            : (double)i;
  bext_tensor *r[2];
  const char *devs[2] = { "flex", "ndarray" };
  for (int q = 0; q < 2; q++) {
    bext_tensor *t = bext_from_data(v, BEXT_F64, (int64_t[]){ numel }, 1, dev(devs[q]));
    t = bext_cast(bext_reshape(t, shape, rank), dt);
    if (transposed) t = bext_swap_dims(t, 0, rank - 1);
    r[q] = op(t, dim);
    cr_assert_not_null(r[q], "%s on %s: %s", what, devs[q], bext_last_error());
  }
  cr_assert_eq(bext_dtype_of(r[0]), bext_dtype_of(r[1]), "%s: dtype", what);
  int64_t n = bext_numel(r[0]);
  cr_assert_eq(n, bext_numel(r[1]), "%s: size", what);
  size_t es = bext_dtype_size(bext_dtype_of(r[0])), bytes = (size_t)n * es;
  char *g = malloc(bytes + 1), *w = malloc(bytes + 1);
  cr_assert(bext_read(r[0], g, bytes) && bext_read(r[1], w, bytes), "%s: read", what);
  for (int64_t i = 0; i < n; i++) {
    if (!memcmp(g + i * es, w + i * es, es)) continue;
    if (dt == BEXT_BF16 || dt == BEXT_F16) {
      uint16_t a, b, inf = dt == BEXT_F16 ? 0x7c00 : 0x7f80;
      memcpy(&a, g + i * es, 2);
      memcpy(&b, w + i * es, 2);
      if ((a & 0x7fff) > inf && (b & 0x7fff) > inf) continue;
      cr_assert(false, "%s [%lld]: got 0x%04x, want 0x%04x", what, (long long)i, a, b);
    }
    if (dt == BEXT_F32 || dt == BEXT_F64) {
      double a = dt == BEXT_F32 ? (double)((float *)g)[i] : ((double *)g)[i];
      double b = dt == BEXT_F32 ? (double)((float *)w)[i] : ((double *)w)[i];
      if (isnan(a) && isnan(b)) continue;
      cr_assert(false, "%s [%lld]: got %a, want %a", what, (long long)i, a, b);
    }
    long long a = 0, b = 0;
    memcpy(&a, g + i * es, es);
    memcpy(&b, w + i * es, es);
    cr_assert(false, "%s [%lld]: got %lld, want %lld", what, (long long)i, a, b);
  }
  free(g);
  free(w);
  bext_release(r[0]);
  bext_release(r[1]);
  free(v);
}

struct shape_case { int rank; int64_t shape[3]; int dim; bool transposed; };
/* Lengths at the lane widths (8 i32, 4 i64/f64) and the 512-element
 * blocks, 1xN, Nx1, middle axes, empty dims, transposed views. */
static const struct shape_case scases[] = {
  { 1, { 1 }, 0, false },        { 1, { 7 }, 0, false },         { 1, { 8 }, 0, false },
  { 1, { 9 }, 0, false },        { 1, { 31 }, 0, false },        { 1, { 33 }, 0, false },
  { 1, { 0 }, 0, false },        { 2, { 1, 9 }, 1, false },      { 2, { 1, 9 }, 0, false },
  { 2, { 9, 1 }, 0, false },     { 2, { 9, 1 }, 1, false },      { 2, { 5, 1031 }, 1, false },
  { 2, { 37, 513 }, 0, false },  { 2, { 37, 33 }, 1, true },     { 2, { 33, 37 }, 0, true },
  { 3, { 3, 37, 5 }, 1, false }, { 3, { 2, 7, 600 }, 1, false }, { 3, { 4, 0, 3 }, 1, false },
  { 3, { 4, 3, 0 }, 2, false },  { 3, { 2, 3, 9 }, 2, false },   { 2, { 300, 257 }, 1, false },
  { 2, { 300, 257 }, 0, false },  { 2, { 33, 1100 }, 0, false },  { 3, { 2, 47, 40 }, 1, false },
  { 2, { 17, 9 }, 0, false },
};

static bext_tensor *cumsum_op(bext_tensor *t, int dim) { return bext_cumsum(t, dim); }

Test(flex_reduce, cumsum_matches_the_reference) {
  const bext_dtype dts[] = { BEXT_F32, BEXT_F64, BEXT_I32, BEXT_I64, BEXT_BF16, BEXT_F16 };
  for (size_t ci = 0; ci < sizeof scases / sizeof scases[0]; ci++)
    for (int di = 0; di < 6; di++)
      for (int kinds = 0; kinds < 2; kinds++) {
        const struct shape_case *C = &scases[ci];
        char what[128];
        snprintf(what, sizeof what, "cumsum %s [%lld x %lld x %lld] (rank %d) dim %d%s%s", bext_dtype_name(dts[di]),
                 (long long)C->shape[0], (long long)C->shape[1], (long long)C->shape[2], C->rank, C->dim,
                 C->transposed ? " transposed" : "", kinds ? " with NaN/inf" : "");
        same_as_reference(dts[di], C->rank, C->shape, C->transposed, ci * 3 + (uint64_t)kinds, kinds, false,
                          cumsum_op, C->dim, what);
      }
}

static bext_tensor *max_op(bext_tensor *t, int dim) { return bext_max_dim(t, dim, false); }
static bext_tensor *min_op(bext_tensor *t, int dim) { return bext_min_dim(t, dim, true); }
static bext_tensor *prod_op(bext_tensor *t, int dim) { return bext_prod_dim(t, dim, false); }
static bext_tensor *argmax_op(bext_tensor *t, int dim) { return bext_argmax_dim(t, dim, false); }
static bext_tensor *sum_op(bext_tensor *t, int dim) { return bext_sum_dim(t, dim, false); }

Test(flex_reduce, extremes_products_and_int_sums_along_every_axis) {
  /* across an outer axis these take blocks of 16 rows in registers; the
   * bits must stay the row-by-row ones: NaN first, a zero's sign from the
   * first equal element, products in f64 in row order, ints wrapping */
  bext_tensor *(*ops[])(bext_tensor *, int) = { max_op, min_op, prod_op, argmax_op, sum_op };
  const char *names[] = { "max", "min", "prod", "argmax", "sum" };
  const bext_dtype dts[] = { BEXT_F32, BEXT_F64, BEXT_I32, BEXT_I64, BEXT_BF16 };
  for (size_t ci = 0; ci < sizeof scases / sizeof scases[0]; ci++)
    for (int oi = 0; oi < 5; oi++)
      for (int di = 0; di < 5; di++)
        for (int kinds = 0; kinds < 2; kinds++) {
          const struct shape_case *C = &scases[ci];
          bool flt = dts[di] == BEXT_F32 || dts[di] == BEXT_F64 || dts[di] == BEXT_BF16;
          if ((oi == 4 && flt) || (kinds && !flt)) continue;   /* float sums: pinned above */
          if (dts[di] == BEXT_BF16 && oi == 2) continue;        /* bf16 extremes (scanned in place) only */
          if (oi != 2 && oi != 4 && C->shape[C->dim] == 0) continue;   /* no extreme of nothing */
          /* a float product along the last axis multiplies in lanes (a few
           * ulps from the reference: test_flex_edges) */
          if (oi == 2 && flt && C->dim == C->rank - 1) continue;
          char what[128];
          snprintf(what, sizeof what, "%s %s [%lld x %lld x %lld] (rank %d) dim %d%s%s", names[oi],
                   bext_dtype_name(dts[di]), (long long)C->shape[0], (long long)C->shape[1], (long long)C->shape[2],
                   C->rank, C->dim, C->transposed ? " transposed" : "", kinds ? " with NaN/inf/zeros" : "");
          same_as_reference(dts[di], C->rank, C->shape, C->transposed, ci * 5 + (uint64_t)kinds, kinds, oi == 2,
                            ops[oi], C->dim, what);
        }
}
