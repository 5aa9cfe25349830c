/* test_cube_ops.c — the stdlib kernels of stdlib/cube (reduce, scan,
 * matmul, index) with their host halves (backends/cube/cube_{reduce,
 * matmul,index}.c), differentially against the NdArray reference: random
 * shapes of ranks 1-4 with odd, empty and >64 extents, contiguous and
 * transposed (strided) inputs, every dim with and without keepdim, and
 * whole-tensor reductions; NaN and ties for max/argmax; broadcast batches
 * for matmul; both index dtypes for the index ops.  Plus: a long f32 sum
 * within bext.h's accuracy bound, bit-identical results at 1 and 2
 * threads, and an out-of-range index reported by name.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "op.h"

#define CUBE "cube:cpu"

static void setup(void) { bxr_device_resolve(bext_device_get(CUBE), "test"); }

/* The op on cube:cpu, through dispatch (inference, then the exec entry). */
static bext_tensor *cube_run(struct bxr_op *op) { return bxr_dispatch(op); }

TestSuite(cube_ops, .init = setup);

/* --------------------------------------------------------- the harness */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}
static double unif(void) { return (double)(next() >> 11) / 9007199254740992.0; }

/* n random elements of dt: floats in [-2, 2) (NaNs when nan), ints in
 * [-lim, lim] (u8: any byte, or [0, 2 lim] when lim <= 2), bools 0/1. */
static void *values(bext_dtype dt, int64_t n, int lim, bool nan) {
  size_t es = bext_dtype_size(dt);
  char *p = malloc((size_t)(n ? n : 1) * es);
  for (int64_t i = 0; i < n; i++) {
    double v = unif() * 4 - 2;
    if (nan && next() % 11 == 0) v = NAN;
    int64_t iv = (int64_t)(next() % (uint64_t)(2 * lim + 1)) - lim;
    switch (dt) {
    case BEXT_F32: ((float *)p)[i] = (float)v; break;
    case BEXT_F64: ((double *)p)[i] = v; break;
    case BEXT_I32: ((int32_t *)p)[i] = (int32_t)iv; break;
    case BEXT_I64: ((int64_t *)p)[i] = iv * 1000003; break;
    case BEXT_U8: ((uint8_t *)p)[i] = (uint8_t)(lim > 2 ? next() % 256 : (uint64_t)(iv + lim)); break;
    default: ((uint8_t *)p)[i] = (uint8_t)(next() % 2); break;
    }
  }
  return p;
}

/* A tensor on dev with these values; transposed: made with the last two
 * axes swapped, then swapped back as a strided view. */
static bext_tensor *make(const char *dev, bext_dtype dt, int rank, const int64_t *shape,
                         const void *data, bool transposed) {
  int64_t s[BEXT_MAX_RANK];
  memcpy(s, shape, sizeof(int64_t) * (size_t)rank);
  if (!transposed || rank < 2) return bext_from_data(data, dt, s, rank, bext_device_get(dev));
  /* data is row-major for shape: build its transpose, then view it back */
  int64_t r0 = 1;
  for (int d = 0; d < rank - 2; d++) r0 *= s[d];
  int64_t a = s[rank - 2], b = s[rank - 1];
  size_t es = bext_dtype_size(dt);
  int64_t cnt = r0 * a * b;
  char *t = malloc((size_t)(cnt > 0 ? cnt : 1) * es);
  for (int64_t o = 0; o < r0; o++)
    for (int64_t i = 0; i < a; i++)
      for (int64_t j = 0; j < b; j++)
        memcpy(t + ((o * b + j) * a + i) * (int64_t)es, (const char *)data + ((o * a + i) * b + j) * (int64_t)es, es);
  s[rank - 2] = b;
  s[rank - 1] = a;
  bext_tensor *x = bext_from_data(t, dt, s, rank, bext_device_get(dev));
  free(t);
  x = bext_swap_dims(x, rank - 2, rank - 1);
  cr_assert(x && !(a > 1 && b > 1 && bext_is_contiguous(x)), "%s", bext_last_error());
  return x;
}

static double at_f(const void *p, bext_dtype dt, int64_t i) {
  switch (dt) {
  case BEXT_F32: return ((const float *)p)[i];
  case BEXT_F64: return ((const double *)p)[i];
  case BEXT_I32: return ((const int32_t *)p)[i];
  case BEXT_I64: return (double)((const int64_t *)p)[i];
  default: return ((const uint8_t *)p)[i];
  }
}

/* got equals want: same dtype and shape, integers and bools exactly,
 * floats within tol relative to max(1, |want|), NaN where NaN. */
static void same(bext_tensor *got, bext_tensor *want, double tol, const char *what) {
  cr_assert(got, "%s: %s", what, bext_last_error());
  cr_assert(want, "%s (reference): %s", what, bext_last_error());
  cr_assert_eq(bext_dtype_of(got), bext_dtype_of(want), "%s: dtype", what);
  cr_assert_eq(bext_rank(got), bext_rank(want), "%s: rank", what);
  for (int d = 0; d < bext_rank(got); d++) cr_assert_eq(bext_shape(got)[d], bext_shape(want)[d], "%s: shape", what);
  bext_dtype dt = bext_dtype_of(got);
  int64_t n = bext_numel(got);
  size_t bytes = (size_t)(n ? n : 1) * bext_dtype_size(dt);
  char *g = malloc(bytes), *w = malloc(bytes);
  cr_assert(bext_read(got, g, bytes) && bext_read(want, w, bytes), "%s", bext_last_error());
  bool flt = bext_dtype_kind(dt) == BEXT_KIND_FLOAT;
  for (int64_t i = 0; i < n; i++) {
    if (!flt) {
      cr_assert(dt == BEXT_I64 ? ((int64_t *)g)[i] == ((int64_t *)w)[i] : at_f(g, dt, i) == at_f(w, dt, i),
                "%s: element %lld: %g, expected %g", what, (long long)i, at_f(g, dt, i), at_f(w, dt, i));
      continue;
    }
    double x = at_f(g, dt, i), y = at_f(w, dt, i);
    if (isnan(y)) {
      cr_assert(isnan(x), "%s: element %lld: %g, expected NaN", what, (long long)i, x);
      continue;
    }
    cr_assert(fabs(x - y) <= tol * fmax(1, fabs(y)), "%s: element %lld: %.17g, expected %.17g", what,
              (long long)i, x, y);
  }
  free(g);
  free(w);
  bext_release(got);
  bext_release(want);
}

static double tol_of(bext_dtype dt) { return dt == BEXT_F32 ? 2e-6 : dt == BEXT_F64 ? 1e-13 : 0; }

/* Runs code on cube:cpu and on ndarray. */
static void both(enum bxr_opcode code, int n, bext_tensor **cube_in, bext_tensor **nd_in, bext_attrs at,
                 double tol, const char *what) {
  struct bxr_op c = {.code = code, .api = "cube", .n_in = n}, r = {.code = code, .api = "nd", .n_in = n};
  c.in = c.inbuf;
  r.in = r.inbuf;
  for (int i = 0; i < n; i++) c.in[i] = cube_in[i], r.in[i] = nd_in[i];
  c.at = r.at = at;
  same(cube_run(&c), bxr_dispatch(&r), tol, what);
}

static const int64_t extents[] = {0, 1, 2, 3, 5, 7, 17, 33, 64, 65, 130};

static int rand_shape(int64_t *shape, bool nonempty) {
  int rank = 1 + (int)(next() % 4);
  for (int d = 0; d < rank; d++) {
    shape[d] = extents[next() % (sizeof extents / sizeof *extents)];
    if (nonempty && shape[d] == 0) shape[d] = 3;
    if (rank > 2 && shape[d] > 33) shape[d] = 9;   /* keep the cases small */
  }
  return rank;
}

/* ------------------------------------------------------------ the tests */

static void reduction_cases(enum bxr_opcode code, const bext_dtype *dts, int ndt, int lim, bool nan) {
  bool needs_extent = code == BXR_OP_MAX_REDUCE || code == BXR_OP_MIN_REDUCE || code == BXR_OP_ARGMAX ||
                      code == BXR_OP_ARGMIN;
  int cases = 0;
  for (int di = 0; di < ndt; di++)
    for (int rep = 0; rep < 24; rep++) {
      bext_dtype dt = dts[di];
      int64_t shape[BEXT_MAX_RANK];
      int rank = rand_shape(shape, needs_extent);
      int64_t n = bxr_numel(rank, shape);
      void *data = values(dt, n, lim, nan);
      bool tr = rep % 2 == 1;
      for (int d = -1; d < rank; d++) {
        bext_attrs at = {.dim = d < 0 ? 0 : d, .all = d < 0, .keepdim = next() % 2 == 0};
        bext_tensor *fi = make(CUBE, dt, rank, shape, data, tr), *ni = make("ndarray", dt, rank, shape, data, tr);
        char what[160];
        snprintf(what, sizeof what, "%s %s rank %d [%lld,..] %s dim %d keepdim %d", bxr_op_name(code),
                 bext_dtype_name(dt), rank, (long long)shape[0], tr ? "strided" : "contig", d, at.keepdim);
        both(code, 1, &fi, &ni, at, tol_of(dt), what);
        cases++;
      }
      free(data);
    }
  cr_assert_gt(cases, 20 * ndt);
}

static const bext_dtype nums[] = {BEXT_F32, BEXT_F64, BEXT_I32, BEXT_I64, BEXT_U8};

Test(cube_ops, sum_and_mean_match_ndarray) {
  reduction_cases(BXR_OP_SUM, nums, 5, 1000, false);
  reduction_cases(BXR_OP_MEAN, nums, 5, 1000, false);
}
Test(cube_ops, prod_matches_ndarray) { reduction_cases(BXR_OP_PROD, nums, 5, 3, false); }
Test(cube_ops, max_min_match_ndarray_with_nan) {
  reduction_cases(BXR_OP_MAX_REDUCE, nums, 5, 1000, true);
  reduction_cases(BXR_OP_MIN_REDUCE, nums, 5, 1000, true);
}
Test(cube_ops, argmax_argmin_match_ndarray_with_nan_and_ties) {
  /* ints in [-2, 2]: many ties, so "first occurrence" is exercised */
  reduction_cases(BXR_OP_ARGMAX, nums, 5, 2, true);
  reduction_cases(BXR_OP_ARGMIN, nums, 5, 2, true);
}
Test(cube_ops, any_all_match_ndarray) {
  static const bext_dtype b[] = {BEXT_BOOL};
  reduction_cases(BXR_OP_ANY, b, 1, 1, false);
  reduction_cases(BXR_OP_ALL, b, 1, 1, false);
}

Test(cube_ops, cumsum_matches_ndarray) {
  int cases = 0;
  for (int di = 0; di < 5; di++)
    for (int rep = 0; rep < 20; rep++) {
      int64_t shape[BEXT_MAX_RANK];
      int rank = rand_shape(shape, false);
      void *data = values(nums[di], bxr_numel(rank, shape), 1000, false);
      for (int d = 0; d < rank; d++) {
        bext_tensor *fi = make(CUBE, nums[di], rank, shape, data, rep % 2),
                    *ni = make("ndarray", nums[di], rank, shape, data, rep % 2);
        char what[96];
        snprintf(what, sizeof what, "cumsum %s rank %d dim %d", bext_dtype_name(nums[di]), rank, d);
        both(BXR_OP_CUMSUM, 1, &fi, &ni, (bext_attrs){.dim = d}, tol_of(nums[di]), what);
        cases++;
      }
      free(data);
    }
  cr_assert_gt(cases, 100);
}

/* a [ba.., m, k] x b [bb.., k, n] with broadcast batches, b transposed
 * (strided) every other time; sizes around the 32 x 64 x 64 tile. */
Test(cube_ops, matmul_matches_ndarray) {
  static const int64_t mk[] = {0, 1, 3, 31, 32, 33, 64, 65, 70, 130};
  int cases = 0;
  for (int di = 0; di < 5; di++)
    for (int rep = 0; rep < 14; rep++) {
      bext_dtype dt = nums[di];
      int64_t m = mk[next() % 10], n = mk[next() % 10], k = mk[next() % 10];
      int64_t sa[4] = {2, 1, m, k}, sb[3] = {3, k, n};
      int ra = rep % 3 == 0 ? 2 : 4, rb = rep % 3 == 1 ? 2 : 3;
      int64_t *pa = ra == 2 ? sa + 2 : sa, *pb = rb == 2 ? sb + 1 : sb;
      void *da = values(dt, bxr_numel(ra, pa), 9, false), *db = values(dt, bxr_numel(rb, pb), 9, false);
      bool tr = rep % 2 == 1;
      bext_tensor *f[2] = {make(CUBE, dt, ra, pa, da, false), make(CUBE, dt, rb, pb, db, tr)};
      bext_tensor *nd[2] = {make("ndarray", dt, ra, pa, da, false), make("ndarray", dt, rb, pb, db, tr)};
      char what[128];
      snprintf(what, sizeof what, "matmul %s m %lld n %lld k %lld ranks %d,%d%s", bext_dtype_name(dt),
               (long long)m, (long long)n, (long long)k, ra, rb, tr ? " b strided" : "");
      /* f32: the kernel sums in f32 in chunks, ndarray in f64 */
      both(BXR_OP_MATMUL, 2, f, nd, (bext_attrs){0}, dt == BEXT_F32 ? 1e-5 : tol_of(dt), what);
      free(da);
      free(db);
      cases++;
    }
  cr_assert_eq(cases, 70);
}

static void index_cases(enum bxr_opcode code) {
  static const bext_dtype ix_dts[] = {BEXT_I32, BEXT_I64};
  static const bext_dtype data_dts[] = {BEXT_F32, BEXT_F64, BEXT_I32, BEXT_I64, BEXT_U8, BEXT_BOOL};
  /* gather and select move bools too (as u8) */
  int ndt = code == BXR_OP_GATHER || code == BXR_OP_SELECT ? 6 : 5;
  int cases = 0;
  for (int di = 0; di < ndt; di++)
    for (int rep = 0; rep < 16; rep++) {
      bext_dtype dt = data_dts[di], xt = ix_dts[rep % 2];
      int64_t shape[BEXT_MAX_RANK];
      int rank = rand_shape(shape, true);
      int dim = (int)(next() % (uint64_t)rank);
      int64_t bound = shape[dim];
      /* the index tensor: gather/scatter_add: shape with dim's extent
       * (and others) possibly smaller; select/select_assign: 1-D */
      bool one_d = code == BXR_OP_SELECT || code == BXR_OP_SELECT_ASSIGN;
      int64_t xs[BEXT_MAX_RANK];
      int xr = one_d ? 1 : rank;
      if (one_d) xs[0] = 1 + (int64_t)(next() % 7);
      else
        for (int d = 0; d < rank; d++) xs[d] = d == dim ? 1 + (int64_t)(next() % 7) : shape[d] - (int64_t)(next() % 2);
      int64_t nx = bxr_numel(xr, xs);
      int64_t *iv = malloc(sizeof(int64_t) * (size_t)(nx ? nx : 1));
      int32_t *iv32 = malloc(sizeof(int32_t) * (size_t)(nx ? nx : 1));
      for (int64_t i = 0; i < nx; i++) iv[i] = (int64_t)(next() % (uint64_t)bound), iv32[i] = (int32_t)iv[i];
      void *ix = xt == BEXT_I32 ? (void *)iv32 : (void *)iv;
      void *data = values(dt, bxr_numel(rank, shape), 1000, false);
      bool tr = rep % 4 >= 2;
      bext_tensor *f[3] = {make(CUBE, dt, rank, shape, data, tr), make(CUBE, xt, xr, xs, ix, false), NULL};
      bext_tensor *nd[3] = {make("ndarray", dt, rank, shape, data, tr), make("ndarray", xt, xr, xs, ix, false), NULL};
      int nin = 2;
      void *vals = NULL;
      if (code == BXR_OP_SCATTER_ADD || code == BXR_OP_SELECT_ASSIGN) {
        int64_t vs[BEXT_MAX_RANK];
        int vr = code == BXR_OP_SCATTER_ADD ? xr : rank;
        for (int d = 0; d < vr; d++) vs[d] = code == BXR_OP_SCATTER_ADD ? xs[d] : d == dim ? xs[0] : shape[d];
        vals = values(dt, bxr_numel(vr, vs), 1000, false);
        f[2] = make(CUBE, dt, vr, vs, vals, tr);
        nd[2] = make("ndarray", dt, vr, vs, vals, tr);
        nin = 3;
      }
      char what[128];
      snprintf(what, sizeof what, "%s %s[%s] rank %d dim %d%s", bxr_op_name(code), bext_dtype_name(dt),
               bext_dtype_name(xt), rank, dim, tr ? " strided" : "");
      both(code, nin, f, nd, (bext_attrs){.dim = dim}, tol_of(dt), what);
      free(iv);
      free(iv32);
      free(data);
      free(vals);
      cases++;
    }
  cr_assert_eq(cases, 16 * ndt);
}

Test(cube_ops, gather_matches_ndarray) { index_cases(BXR_OP_GATHER); }
Test(cube_ops, scatter_add_matches_ndarray) { index_cases(BXR_OP_SCATTER_ADD); }
Test(cube_ops, select_matches_ndarray) { index_cases(BXR_OP_SELECT); }
Test(cube_ops, select_assign_matches_ndarray) { index_cases(BXR_OP_SELECT_ASSIGN); }

/* An index past the extent is the op's error naming the index, never a
 * write: the output tensor is not even made. */
Test(cube_ops, out_of_range_index_is_a_named_error) {
  float v[6] = {1, 2, 3, 4, 5, 6};
  int64_t s[2] = {2, 3}, ns = 2;
  int64_t bad[2] = {1, 7};
  bext_tensor *t = bext_from_data(v, BEXT_F32, s, 2, bext_device_get(CUBE));
  bext_tensor *ix = bext_from_data(bad, BEXT_I64, &ns, 1, bext_device_get(CUBE));
  struct bxr_op op = {.code = BXR_OP_SELECT, .api = "bext_select", .n_in = 2, .at = {.dim = 1}};
  op.in = op.inbuf;
  op.in[0] = t;
  op.in[1] = ix;
  cr_assert_null(cube_run(&op));
  const char *e = bext_last_error();
  cr_assert(strstr(e, "bext_select") && strstr(e, "index 7") && strstr(e, "extent 3"), "%s", e);
}

/* 2^20 f32 values: the pairwise f64 sum rounds to within one f32 ulp of
 * the exact sum (computed here in long double, exact enough), and the
 * bits are the same at 1 and 2 threads and across runs. */
Test(cube_ops, long_f32_sum_is_accurate_and_deterministic) {
  int64_t n = 1 << 20;
  float *v = malloc(sizeof(float) * (size_t)n);
  long double exact = 0;
  for (int64_t i = 0; i < n; i++) {
    v[i] = (float)(unif() * 2 - 0.5) * 1e3f;
    exact += v[i];
  }
  float got[3];
  int threads[3] = {1, 2, 2};
  for (int r = 0; r < 3; r++) {
    int prev = bxr_pool_set_threads(threads[r]);
    struct bxr_op op = {.code = BXR_OP_SUM, .api = "bext_sum", .n_in = 1, .at = {.all = true}};
    op.in = op.inbuf;
    op.in[0] = bext_from_data(v, BEXT_F32, &n, 1, bext_device_get(CUBE));
    bext_tensor *s = cube_run(&op);
    bxr_pool_set_threads(prev);
    cr_assert(s && bext_read(s, &got[r], sizeof got[r]), "%s", bext_last_error());
    bext_release(s);
  }
  float want = (float)exact;
  cr_assert(fabsf(got[0] - want) <= nextafterf(fabsf(want), INFINITY) - fabsf(want), "sum %.9g, exact %.9Lg", got[0],
            exact);
  cr_assert(memcmp(&got[0], &got[1], sizeof got[0]) == 0 && memcmp(&got[1], &got[2], sizeof got[0]) == 0,
            "sums differ across thread counts: %.9g %.9g %.9g", got[0], got[1], got[2]);
  free(v);
}

/* Column sums of a [4096, 64] matrix: many units, threaded, bit-identical
 * at 1 and 2 threads (each unit's order is fixed by the shape). */
Test(cube_ops, dim_sum_is_identical_across_thread_counts) {
  int64_t s[2] = {4096, 64}, n = s[0] * s[1];
  float *v = values(BEXT_F32, n, 0, false);
  float out[2][64];
  for (int r = 0; r < 2; r++) {
    int prev = bxr_pool_set_threads(r + 1);
    struct bxr_op op = {.code = BXR_OP_SUM, .api = "bext_sum_dim", .n_in = 1, .at = {.dim = 0}};
    op.in = op.inbuf;
    op.in[0] = bext_from_data(v, BEXT_F32, s, 2, bext_device_get(CUBE));
    bext_tensor *t = cube_run(&op);
    bxr_pool_set_threads(prev);
    cr_assert(t && bext_read(t, out[r], sizeof out[r]), "%s", bext_last_error());
    bext_release(t);
  }
  cr_assert(memcmp(out[0], out[1], sizeof out[0]) == 0);
  free(v);
}

/* Long lines: with few outputs and more than two chunks they take the
 * two-pass path (cube_reduce.c); [300, 5000] is one pass over many
 * leaves.  Sums and means along the long axis, contiguous and strided,
 * f32 and f64, against ndarray. */
Test(cube_ops, long_line_sums_match_ndarray) {
  static const int64_t shapes[4][2] = {{3, 40000}, {40000, 3}, {1, 50001}, {300, 5000}};
  int cases = 0;
  for (int di = 0; di < 2; di++)
    for (int si = 0; si < 4; si++)
      for (int mean = 0; mean < 2; mean++) {
        bext_dtype dt = nums[di];
        void *data = values(dt, shapes[si][0] * shapes[si][1], 0, false);
        int dim = shapes[si][0] > shapes[si][1] ? 0 : 1;
        for (int tr = 0; tr < 2; tr++) {
          /* transposed: the same logical values, the long axis strided */
          bext_tensor *fi = make(CUBE, dt, 2, shapes[si], data, tr), *ni = make("ndarray", dt, 2, shapes[si], data, tr);
          char what[96];
          snprintf(what, sizeof what, "%s %s [%lld, %lld] dim %d%s", mean ? "mean" : "sum", bext_dtype_name(dt),
                   (long long)shapes[si][0], (long long)shapes[si][1], dim, tr ? " strided" : "");
          both(mean ? BXR_OP_MEAN : BXR_OP_SUM, 1, &fi, &ni, (bext_attrs){.dim = dim}, tol_of(dt), what);
          cases++;
        }
        free(data);
      }
  cr_assert_eq(cases, 32);
}

/* An integer mean divides the wrapped sum by the extent in i64: 300 u8
 * values (more than the dtype holds) and i32 values, against ndarray. */
Test(cube_ops, int_mean_over_long_extents) {
  static const bext_dtype dts[] = {BEXT_U8, BEXT_I32};
  for (int di = 0; di < 2; di++) {
    int64_t s[2] = {3, 300};
    void *data = values(dts[di], 900, 1000, false);
    bext_tensor *ci = make(CUBE, dts[di], 2, s, data, false), *ni = make("ndarray", dts[di], 2, s, data, false);
    both(BXR_OP_MEAN, 1, &ci, &ni, (bext_attrs){.dim = 1}, 0, bext_dtype_name(dts[di]));
    free(data);
  }
}
