/* test_flex_paths.c — Flex's fast paths of the speed matrix (issue 15)
 * against the NdArray reference, exactly: arange in vector lanes (f32,
 * f64, i32 with saturation, fractional and negative steps), gather,
 * scatter_add, select and select_assign by rows over the pool (every dim,
 * i32 and i64 indices, strided operands, repeated indices, odd and empty
 * sizes, halves' adds on NaN/inf/overflow/subnormals,
 * bad indices still reported with their position), and integer batched
 * matmul shared out by batch.  Sizes run from a few elements (inline) to
 * above the pool's threshold (split across two threads). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bext/bext.h"

static void two_threads(void) { setenv("BEXT_NUM_THREADS", "2", 1); }
TestSuite(flex_paths, .init = two_threads);

static const bext_device *dev(const char *name) {
  const bext_device *d = bext_device_get(name);
  cr_assert_not_null(d, "%s", bext_last_error());
  return d;
}

/* got and want hold the same dtype, shape and bytes (floats compared by
 * bits, so signed zeros count), except that any NaN matches any NaN: which
 * of two NaN operands an add returns depends on how the compiler ordered
 * a commutative instruction, and no rule fixes a NaN's sign or payload. */
static bool both_nan(const void *a, const void *b, bext_dtype dt) {
  uint16_t ha, hb;
  switch (dt) {
  case BEXT_F32: { float x, y; memcpy(&x, a, 4); memcpy(&y, b, 4); return isnan(x) && isnan(y); }
  case BEXT_F64: { double x, y; memcpy(&x, a, 8); memcpy(&y, b, 8); return isnan(x) && isnan(y); }
  case BEXT_F16:
    memcpy(&ha, a, 2); memcpy(&hb, b, 2);
    return (ha & 0x7fff) > 0x7c00 && (hb & 0x7fff) > 0x7c00;
  case BEXT_BF16:
    memcpy(&ha, a, 2); memcpy(&hb, b, 2);
    return (ha & 0x7fff) > 0x7f80 && (hb & 0x7fff) > 0x7f80;
  default: return false;
  }
}

static void same(bext_tensor *got, bext_tensor *want, const char *what) {
  cr_assert_not_null(got, "%s (flex): %s", what, bext_last_error());
  cr_assert_not_null(want, "%s (ndarray): %s", what, bext_last_error());
  cr_assert_eq(bext_dtype_of(got), bext_dtype_of(want), "%s: dtype", what);
  int64_t n = bext_numel(got);
  cr_assert_eq(n, bext_numel(want), "%s: size", what);
  size_t bytes = (size_t)n * bext_dtype_size(bext_dtype_of(got));
  char *g = malloc(bytes + 1), *w = malloc(bytes + 1);
  cr_assert(bext_read(got, g, bytes) && bext_read(want, w, bytes), "%s: read", what);
  if (memcmp(g, w, bytes)) {
    size_t es = bext_dtype_size(bext_dtype_of(got));
    for (size_t i = 0; i < bytes; i += es)
      if (memcmp(g + i, w + i, es) && !both_nan(g + i, w + i, bext_dtype_of(got))) {
        unsigned long long gb = 0, wb = 0;
        memcpy(&gb, g + i, es);
        memcpy(&wb, w + i, es);
        cr_assert_fail("%s: element %zu differs (bits %llx, want %llx)", what, i / es, gb, wb);
      }
  }
  free(g);
  free(w);
  bext_release(got);
  bext_release(want);
}

Test(flex_paths, arange) {
  static const bext_dtype dts[] = { BEXT_F32, BEXT_F64, BEXT_I32, BEXT_I64, BEXT_F16, BEXT_BF16 };
  /* start, end, step: short, vector-width edges, threaded; fractional
   * steps whose products round; i32 past its range (saturates) */
  static const double cases[][3] = {
    { 0, 1, 1 },           { 0, 7, 1 },          { 0, 9, 1 },        { -3.25, 2.5, 0.37 },
    { 0.1, 30000.3, 0.3 }, { 5e5, -5e5, -0.7 },  { 0, 300001, 1 },   { 2147483000.5, 2147484000.0, 1.25 },
    { -2147484000.0, -2147483000.0, 0.5 },        { 1, 1, 1 },
    /* integer starts and steps (the integer-lane path where every value
     * is exact below 2^52 and in range; the f64 rule otherwise): vector
     * edges, threaded, negative steps, i32's bounds reached and passed,
     * f32 past 2^24 (rounds), starts near 2^52, 2^53 and 2^63 */
    { 0, 31, 1 },          { 0, 33, 1 },         { 5, -300001, -3 }, { 2147483000, 2147483648.0, 1 },
    { 2147483000, 2147483700.0, 1 },              { -2147483648.0, -2147483000.0, 1 },
    { 16777200, 16777300, 1 },                    { -4503599627370000.0, -4503599627470007.0, -1 },
    { 4503599627370400.0, 4503599627370500.0, 1 }, { 9007199254740000.0, 9007199254741000.0, 3 },
    { 9223372036854000000.0, 9223372036854775807.0, 4096 }, { -9223372036854775808.0, -9223372036854000000.0, 8192 },
    { 7, 300007 * 5 + 7, 5 },
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
      bool half = dts[d] == BEXT_F16 || dts[d] == BEXT_BF16;
      if (half && fabs(cases[c][1] - cases[c][0]) / fabs(cases[c][2]) > 3000) continue;
      char what[96];
      snprintf(what, sizeof what, "arange(%g, %g, %g) %s", cases[c][0], cases[c][1], cases[c][2],
               bext_dtype_name(dts[d]));
      same(bext_arange(cases[c][0], cases[c][1], cases[c][2], dts[d], dev("flex")),
           bext_arange(cases[c][0], cases[c][1], cases[c][2], dts[d], dev("ndarray")), what);
    }
}

static bool g_edges;   /* data() mixes edge values into float tensors */

/* Host values: n of dt (small ints for int dtypes, fractions for floats). */
static bext_tensor *data(bext_dtype dt, int rank, const int64_t *shape, unsigned seed, const char *devname) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= shape[d];
  bext_tensor *t = bext_random_uniform(shape, rank, -8, 8, seed, BEXT_F64, dev("flex"));
  if (g_edges && bext_dtype_kind(dt) == BEXT_KIND_FLOAT) {
    /* every 5th element an edge: NaN, infinities, signed zeros, the f16
     * maximum (two of them overflow), subnormals, bf16's large values */
    static const double edge[] = { NAN, INFINITY, -INFINITY, 0.0, -0.0, 65504.0, -65504.0, 3e-8, -6e-5, 3e38 };
    double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
    cr_assert(bext_read(t, v, sizeof(double) * (size_t)n));
    for (int64_t i = 0; i < n; i++)
      if ((i * 7 + seed) % 5 == 0) v[i] = edge[(i / 5 + seed) % 10];
    bext_release(t);
    t = bext_from_data(v, BEXT_F64, shape, rank, dev("flex"));
    free(v);
  }
  t = bext_cast(t, dt);
  cr_assert_not_null(t, "%s", bext_last_error());
  if (strcmp(devname, "flex")) t = bext_to_device(t, dev(devname));
  cr_assert_not_null(t, "%s", bext_last_error());
  (void)n;
  return t;
}

/* Indices in [0, bound) (or one at `bad_at` set to bound), as idt. */
static bext_tensor *indices(bext_dtype idt, int rank, const int64_t *shape, int64_t bound, unsigned seed,
                            int64_t bad_at, const char *devname) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= shape[d];
  int64_t *v = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
  uint64_t s = seed;
  for (int64_t i = 0; i < n; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    v[i] = (int64_t)((s >> 33) % (uint64_t)bound);
  }
  if (bad_at >= 0 && bad_at < n) v[bad_at] = bound;
  bext_tensor *t = bext_cast(bext_from_data(v, BEXT_I64, shape, rank, dev(devname)), idt);
  free(v);
  cr_assert_not_null(t, "%s", bext_last_error());
  return t;
}

static void index_case(int op, bext_dtype dt, bext_dtype idt, int64_t rows, int64_t cols, int dim, bool trans) {
  const char *devs[2] = { "flex", "ndarray" };
  bext_tensor *r[2];
  const int64_t shape[2] = { rows, cols };
  int64_t ishape[2] = { rows, cols };
  if (op == 0 && cols > 3) ishape[1] = cols - 3;   /* gather: a narrower index */
  int64_t bound = shape[dim];
  int64_t nsel = rows > 2 ? rows / 2 + 3 : 2;     /* select_assign: repeats likely */
  for (int k = 0; k < 2; k++) {
    bext_tensor *t = data(dt, 2, trans ? (int64_t[]){ cols, rows } : shape, 5, devs[k]);
    if (trans) t = bext_swap_dims(t, 0, 1);
    switch (op) {
    case 0: r[k] = bext_gather(t, dim, indices(idt, 2, ishape, bound, 9, -1, devs[k])); break;
    case 1: {
      bext_tensor *v = data(dt, 2, shape, 6, devs[k]);
      if (trans && dim == 0) v = bext_swap_dims(bext_contiguous(bext_swap_dims(v, 0, 1)), 0, 1);   /* strided values */
      r[k] = bext_scatter_add(t, dim, indices(idt, 2, shape, bound, 9, -1, devs[k]), v);
      break;
    }
    case 3: r[k] = bext_select(t, dim, indices(idt, 1, (int64_t[]){ nsel }, bound, 3, -1, devs[k])); break;
    default: {
      int64_t vshape[2] = { rows, cols };
      vshape[dim] = nsel;
      bext_tensor *v = data(dt, 2, vshape, 7, devs[k]);
      if (trans) v = bext_swap_dims(bext_contiguous(bext_swap_dims(v, 0, 1)), 0, 1);
      r[k] = bext_select_assign(t, dim, indices(idt, 1, (int64_t[]){ nsel }, bound, 3, -1, devs[k]), v);
      break;
    }
    }
  }
  char what[128];
  snprintf(what, sizeof what, "%s %s [%lld x %lld] dim %d, %s indices%s%s",
           op == 0 ? "gather" : op == 1 ? "scatter_add" : op == 3 ? "select" : "select_assign", bext_dtype_name(dt),
           (long long)rows, (long long)cols, dim, bext_dtype_name(idt), trans ? ", transposed" : "",
           g_edges ? ", edge values" : "");
  same(r[0], r[1], what);
}

Test(flex_paths, gather_scatter_select_assign) {
  static const bext_dtype dts[] = { BEXT_F32, BEXT_F64, BEXT_I32, BEXT_I64, BEXT_F16, BEXT_BF16, BEXT_BOOL };
  /* rows of 15-17, 32, 63 and 65: the 8-lane bf16 adds' blocks and tails */
  static const int64_t sizes[][2] = { { 1, 1 }, { 3, 7 }, { 17, 9 }, { 300, 257 }, { 5, 20011 },
                                      { 9, 8 }, { 20, 31 }, { 12, 33 }, { 5, 15 }, { 7, 16 },
                                      { 4, 17 }, { 2, 32 }, { 3, 63 }, { 3, 65 } };
  for (int op = 0; op < 4; op++)
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int dim = 0; dim < 2; dim++)
          for (int tr = 0; tr < 2; tr++) {
            if ((op == 1 || op == 2) && dts[d] == BEXT_BOOL) continue;   /* scatter_add/select_assign: numbers */
            index_case(op, dts[d], (s + (size_t)dim) % 2 ? BEXT_I32 : BEXT_I64, sizes[s][0], sizes[s][1], dim, tr);
          }
}

/* The halves' adds (f16 through f32 blocks, bf16 by the fused kernel,
 * strided rows and scatters by the scalar rule) on NaN, infinities,
 * signed zeros, overflowing sums and subnormals, at row lengths around
 * the vector width: the reference's bits. */
Test(flex_paths, half_adds_on_edge_values) {
  static const bext_dtype dts[] = { BEXT_F16, BEXT_BF16, BEXT_F32 };
  static const int64_t sizes[][2] = { { 4, 1 }, { 11, 7 }, { 10, 8 }, { 13, 9 }, { 40, 33 }, { 300, 257 } };
  g_edges = true;
  for (int op = 1; op < 3; op++)
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int dim = 0; dim < 2; dim++)
          for (int tr = 0; tr < 2; tr++) index_case(op, dts[d], BEXT_I64, sizes[s][0], sizes[s][1], dim, tr);
  g_edges = false;
}

/* Copies of long contiguous blocks (over 256 KiB, split by bytes across
 * the pool): repeat_dim and cat along dim 0, slice_assign of whole rows
 * and of a range inside each of 3 long rows (a few rows, each split), a
 * narrow of a long row made contiguous; 1-, 2-, 4- and 8-byte elements,
 * sizes that are not multiples of the 4 KiB split. */
Test(flex_paths, long_contiguous_block_copies) {
  static const bext_dtype dts[] = { BEXT_BOOL, BEXT_BF16, BEXT_F32, BEXT_I64 };
  const char *devs[2] = { "flex", "ndarray" };
  for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
    for (int op = 0; op < 5; op++) {
      bext_tensor *r[2];
      for (int k = 0; k < 2; k++) {
        bext_tensor *t = data(dts[d], 2, (int64_t[]){ 301, 1003 }, 11, devs[k]);
        bext_tensor *w = data(dts[d], 2, (int64_t[]){ 3, 200001 }, 12, devs[k]);
        switch (op) {
        case 0: r[k] = bext_repeat_dim(t, 0, 3); bext_release(w); break;
        case 1: r[k] = bext_cat((bext_tensor *[]){ t, bext_retain(t) }, 2, 0); bext_release(w); break;
        case 2:
          r[k] = bext_slice_assign(t, (int64_t[]){ 17 }, (int64_t[]){ 290 }, 1,
                                   data(dts[d], 2, (int64_t[]){ 273, 1003 }, 13, devs[k]));
          bext_release(w);
          break;
        case 3:
          r[k] = bext_slice_assign(w, (int64_t[]){ 0, 1001 }, (int64_t[]){ 3, 190000 }, 2,
                                   data(dts[d], 2, (int64_t[]){ 3, 188999 }, 14, devs[k]));
          bext_release(t);
          break;
        default: r[k] = bext_contiguous(bext_narrow(w, 1, 999, 150001)); bext_release(t); break;
        }
      }
      char what[96];
      snprintf(what, sizeof what, "long block copy %d of %s", op, bext_dtype_name(dts[d]));
      same(r[0], r[1], what);
    }
}

/* flip along every set of axes of 1-4 d tensors, bits compared with the
 * reference: rows flipped along the last dim by the in-register reversal
 * (lengths around the 32-byte vector's 32, 16, 8 and 4 lanes, then the
 * element tail), outer axes as row copies, a long tensor flipped along
 * all its axes as one reversed block split across the pool (sizes not a
 * multiple of the 4 KiB split); contiguous, transposed and narrowed
 * inputs; every dtype (bool from a comparison: both values). */
static bext_tensor *flip_input(bext_dtype dt, int rank, const int64_t *shape, int layout, const char *devname) {
  int64_t sh[4];
  memcpy(sh, shape, sizeof(int64_t) * (size_t)rank);
  if (layout == 1) sh[rank - 1] = shape[rank - 2], sh[rank - 2] = shape[rank - 1];
  if (layout == 2) sh[rank - 1] += 3;
  bext_tensor *t = dt == BEXT_BOOL ? bext_gt_scalar(data(BEXT_F32, rank, sh, 21, devname), 0.0)
                                   : data(dt, rank, sh, 21, devname);
  if (layout == 1) t = bext_swap_dims(t, rank - 2, rank - 1);
  if (layout == 2) t = bext_narrow(t, rank - 1, 2, shape[rank - 1]);
  cr_assert_not_null(t, "%s", bext_last_error());
  return t;
}

Test(flex_paths, flip_every_axis) {
  static const bext_dtype dts[] = { BEXT_F32, BEXT_F64, BEXT_I32, BEXT_I64, BEXT_F16, BEXT_BF16, BEXT_BOOL };
  static const struct { int rank; int64_t shape[4]; } shapes[] = {
    { 1, { 1 } },  { 1, { 7 } },  { 1, { 8 } },  { 1, { 9 } },  { 1, { 15 } },  { 1, { 16 } },
    { 1, { 17 } }, { 1, { 31 } }, { 1, { 32 } }, { 1, { 33 } }, { 1, { 63 } },  { 1, { 65 } },
    { 1, { 300007 } },            { 2, { 3, 33 } },            { 2, { 65, 17 } }, { 2, { 70, 64 } },
    { 2, { 2, 150001 } },         { 3, { 3, 5, 31 } },         { 4, { 2, 3, 4, 65 } },
  };
  const char *devs[2] = { "flex", "ndarray" };
  for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
      const int rank = shapes[s].rank;
      for (int mask = 1; mask < 1 << rank; mask++)
        for (int layout = 0; layout < 3; layout++) {
          if (layout == 1 && rank < 2) continue;
          int axes[4], n = 0;
          for (int a = 0; a < rank; a++)
            if (mask >> a & 1) axes[n++] = a;
          bext_tensor *r[2];
          for (int k = 0; k < 2; k++)
            r[k] = bext_flip(flip_input(dts[d], rank, shapes[s].shape, layout, devs[k]), axes, n);
          char what[128];
          snprintf(what, sizeof what, "flip %s rank %d shape %zu axes mask %d, %s", bext_dtype_name(dts[d]), rank, s,
                   mask, layout == 0 ? "contiguous" : layout == 1 ? "transposed" : "narrowed");
          same(r[0], r[1], what);
        }
    }
}

Test(flex_paths, empty_index_tensors) {
  const char *devs[2] = { "flex", "ndarray" };
  bext_tensor *r[2];
  for (int k = 0; k < 2; k++) {
    bext_tensor *t = data(BEXT_F32, 2, (int64_t[]){ 4, 5 }, 1, devs[k]);
    r[k] = bext_gather(t, 1, indices(BEXT_I64, 2, (int64_t[]){ 4, 0 }, 5, 1, -1, devs[k]));
  }
  same(r[0], r[1], "gather with an empty index");
}

Test(flex_paths, bad_index_named_by_position) {
  /* a large contiguous index tensor takes the parallel scan first; the bad
   * value must still be reported at its flat position */
  const int64_t shape[2] = { 300, 257 };
  for (int idt = 0; idt < 2; idt++) {
    bext_dtype it = idt ? BEXT_I32 : BEXT_I64;
    bext_tensor *t = data(BEXT_F32, 2, shape, 1, "flex");
    bext_tensor *r = bext_gather(t, 1, indices(it, 2, shape, 257, 4, 70001, "flex"));
    cr_assert_null(r);
    cr_assert(strstr(bext_last_error(), "at flat position 70001"), "%s", bext_last_error());
  }
}

/* gather and scatter_add check indices as they read them (into a fresh
 * output; scatter_add in place scans them first; f16/bf16 scatters per
 * block of positions, the other dtypes per element): a bad index, past the
 * end or negative, first or later in flat order, in a first or a last
 * row, of i32 or i64 indices read in place or transposed, of a small
 * (inline) or a large (pooled) op, is still named with its flat position
 * and value, and the op returns NULL.  With two bad indices the first in
 * flat order is named, whichever row a thread met first. */
static void bad_index_case(int op, bext_dtype dt, bext_dtype idt, int64_t rows, int64_t cols, int dim, bool trans, int64_t at,
                           int64_t bad, int64_t at2, bool in_place) {
  const int64_t shape[2] = { rows, cols };
  int64_t n = rows * cols, bound = shape[dim];
  int64_t *v = malloc(sizeof(int64_t) * (size_t)n);
  for (int64_t i = 0; i < n; i++) v[i] = (i * 7 + 3) % bound;
  /* the flat (row-major) position of the logical index tensor */
  v[at] = bad;
  if (at2 >= 0) v[at2] = bound + 5;
  bext_tensor *ix;
  if (trans) {   /* the same logical values from a transposed buffer */
    int64_t *w = malloc(sizeof(int64_t) * (size_t)n);
    for (int64_t r = 0; r < rows; r++)
      for (int64_t c = 0; c < cols; c++) w[c * rows + r] = v[r * cols + c];
    ix = bext_swap_dims(bext_from_data(w, BEXT_I64, (int64_t[]){ cols, rows }, 2, dev("flex")), 0, 1);
    free(w);
  } else {
    ix = bext_from_data(v, BEXT_I64, shape, 2, dev("flex"));
  }
  ix = bext_cast(ix, idt);
  if (trans) ix = bext_swap_dims(bext_contiguous(bext_swap_dims(ix, 0, 1)), 0, 1);   /* stays strided */
  free(v);
  bext_tensor *t = data(dt, 2, shape, 3, "flex");
  bext_tensor *r = op == 0 ? bext_gather(in_place ? t : bext_retain(t), dim, ix)
                           : bext_scatter_add(in_place ? t : bext_retain(t), dim, ix, data(dt, 2, shape, 4, "flex"));
  char want[160];
  snprintf(want, sizeof want, "index %lld (at flat position %lld) is out of range for dim %d of extent %lld",
           (long long)bad, (long long)at, dim, (long long)bound);
  cr_assert_null(r, "%s: a bad index at %lld was not reported", op ? "scatter_add" : "gather", (long long)at);
  cr_assert(strstr(bext_last_error(), want), "%s %s, %s indices [%lld x %lld] dim %d%s%s: got '%s', want '%s'",
            op ? "scatter_add" : "gather", bext_dtype_name(dt), bext_dtype_name(idt), (long long)rows, (long long)cols, dim,
            trans ? ", transposed" : "", in_place ? ", in place" : "", bext_last_error(), want);
  if (!in_place) bext_release(t);
}

Test(flex_paths, bad_indices_checked_as_read) {
  static const int64_t sizes[][2] = { { 3, 7 }, { 300, 257 } };
  static const bext_dtype dts[2][3] = { { BEXT_F32, BEXT_BOOL, BEXT_F16 }, { BEXT_F32, BEXT_BF16, BEXT_F16 } };
  for (int op = 0; op < 2; op++)
    for (int c = 0; c < 2 * 2 * 2 * 2 * 3; c++) {
      const int s = c & 1, dim = c >> 1 & 1, tr = c >> 2 & 1, idt = c >> 3 & 1, d = c >> 4;
      for (int in_place = 0; in_place < 1 + op; in_place++) {
        const int64_t rows = sizes[s][0], cols = sizes[s][1], n = rows * cols;
        const bext_dtype dt = dts[op][d], it = idt ? BEXT_I32 : BEXT_I64;
        const int64_t bound = dim ? cols : rows;
        /* past the end in the last row, negative in the first, then two
         * bad ones: the earlier (in a row far from the later) named */
        bad_index_case(op, dt, it, rows, cols, dim, tr, n - 2, bound, -1, in_place);
        bad_index_case(op, dt, it, rows, cols, dim, tr, 1, -1, -1, in_place);
        bad_index_case(op, dt, it, rows, cols, dim, tr, n / 3, -7, n - 1, in_place);
      }
    }
}

Test(flex_paths, integer_batched_matmul) {
  static const bext_dtype dts[] = { BEXT_I32, BEXT_I64, BEXT_F16 };
  for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
    const char *devs[2] = { "flex", "ndarray" };
    bext_tensor *r[2];
    for (int k = 0; k < 2; k++) {
      bext_tensor *a = data(dts[d], 3, (int64_t[]){ 37, 9, 13 }, 2, devs[k]);
      bext_tensor *b = data(dts[d], 3, (int64_t[]){ 37, 13, 6 }, 3, devs[k]);
      r[k] = bext_matmul(a, bext_swap_dims(bext_contiguous(bext_swap_dims(b, 1, 2)), 1, 2));
    }
    char what[64];
    snprintf(what, sizeof what, "batched matmul %s", bext_dtype_name(dts[d]));
    if (dts[d] == BEXT_F16) {   /* f32 sums in another order: compare loosely */
      bext_tensor *diff = bext_max_all(bext_abs(bext_sub(bext_cast(r[0], BEXT_F32),
                                                         bext_to_device(bext_cast(r[1], BEXT_F32), dev("flex")))));
      float m = 0;
      cr_assert(diff && bext_read(diff, &m, sizeof m), "%s", bext_last_error());
      cr_expect_leq(m, 1.0f, "%s: max |diff| %g", what, m);
      bext_release(diff);
    } else {
      same(r[0], r[1], what);
    }
  }
  /* i32 at its own width (mm_i32): column strips of 32, 8 and single
   * columns, an odd row count, a transposed (packed) left operand, a
   * broadcast batch, and products that wrap in 32 bits */
  static const int64_t shp[][3] = { { 7, 5, 77 }, { 2, 40, 33 }, { 1, 3, 32 }, { 65, 64, 64 } };
  for (size_t s = 0; s < sizeof shp / sizeof shp[0]; s++) {
    const char *devs[2] = { "flex", "ndarray" };
    bext_tensor *r[2];
    for (int q = 0; q < 2; q++) {
      bext_tensor *a = data(BEXT_I32, 3, (int64_t[]){ 3, shp[s][1], shp[s][0] }, 4, devs[q]);
      bext_tensor *b = data(BEXT_I32, 2, (int64_t[]){ shp[s][1], shp[s][2] }, 5, devs[q]);
      a = bext_mul_scalar(a, s == 3 ? 65537 * 4093 : 1);   /* large: the sums wrap */
      a = bext_swap_dims(a, 1, 2);
      r[q] = bext_matmul(s & 1 ? bext_contiguous(a) : a, b);   /* packed or read in place */
    }
    char what[64];
    snprintf(what, sizeof what, "i32 matmul %lldx%lldx%lld", (long long)shp[s][0], (long long)shp[s][1],
             (long long)shp[s][2]);
    same(r[0], r[1], what);
  }
}

/* n values of dt with the integer edge cases (0, -1, 1, the extremes)
 * mixed in, and for f64 NaN, infinities and signed zeros. */
static bext_tensor *edgy(bext_dtype dt, int64_t n, unsigned seed, const char *devname) {
  static const double fl[] = { 0.0, -0.0, 1.0, -1.0, NAN, INFINITY, -INFINITY, 2.5, -7.25 };
  static const int64_t in[] = { 0, -1, 1, INT32_MAX, INT32_MIN, 7, -7, INT64_MAX, INT64_MIN };
  double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
  int64_t *w = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
  uint64_t s = seed;
  for (int64_t i = 0; i < n; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t r = s >> 33;
    bool edge = r % 5 == 0;
    v[i] = edge ? fl[(r >> 4) % 9] : ((double)(r % 2001) - 1000) / 8;
    w[i] = edge ? in[(r >> 4) % (dt == BEXT_I32 ? 7 : 9)] : (int64_t)(r % 2001) - 1000;
  }
  bext_tensor *t = dt == BEXT_F64 ? bext_from_data(v, BEXT_F64, &n, 1, dev(devname))
                                  : bext_cast(bext_from_data(w, BEXT_I64, &n, 1, dev(devname)), dt);
  free(v);
  free(w);
  cr_assert_not_null(t, "%s", bext_last_error());
  return t;
}

static bext_tensor *native_op(int which, bext_tensor *a, bext_tensor *b, double s) {
  switch (which) {
  case 0: return bext_add(a, b);
  case 1: return bext_sub(a, b);
  case 2: return bext_mul(a, b);
  case 3: return bext_div(a, b);
  case 4: return bext_rem(a, b);
  case 5: return bext_max(a, b);
  case 6: return bext_min(a, b);
  case 7: return bext_eq(a, b);
  case 8: return bext_ne(a, b);
  case 9: return bext_gt(a, b);
  case 10: return bext_ge(a, b);
  case 11: return bext_lt(a, b);
  case 12: return bext_le(a, b);
  case 13: bext_release(b); return bext_add_scalar(a, s);
  case 14: bext_release(b); return bext_mul_scalar(a, s);
  case 15: bext_release(b); return bext_div_scalar(a, s);
  case 16: bext_release(b); return bext_rem_scalar(a, s);
  case 17: bext_release(b); return bext_max_scalar(a, s);
  case 18: bext_release(b); return bext_min_scalar(a, s);
  case 19: bext_release(b); return bext_gt_scalar(a, s);
  case 20: bext_release(b); return bext_le_scalar(a, s);
  case 21: bext_release(b); return bext_eq_scalar(a, s);
  case 22: bext_release(b); return bext_neg(a);
  case 23: bext_release(b); return bext_abs(a);
  case 24: bext_release(b); return bext_relu(a);
  case 25: bext_release(b); return bext_sign(a);
  case 26: return bext_pow(a, b);
  case 27: bext_release(b); return bext_pow_scalar(a, s);
  default: bext_release(b); return bext_clamp(a, s, s + 100);
  }
}

Test(flex_paths, native_width_ints_and_f64_comparisons) {
  /* i32 arithmetic at its own width and i32/i64/f64 comparisons, on
   * vector-edge and threaded sizes; scalars inside i32 (native) and
   * outside it or fractional (the general engine) */
  static const bext_dtype dts[] = { BEXT_I32, BEXT_I64, BEXT_F64 };
  static const int64_t ns[] = { 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 70001 };
  /* i64 divisors past i32 (by magic numbers), +-1 and 0 (the rule's own
   * answers), saturating ones (INT64_MIN/MAX) */
  static const double scal[] = { 3, -1, 0, 2.5, -2.5, 3e9, -3e9, 2147483647.0, -2147483648.0, 1, -7,
                                 4294967311.0, -1099511627776.0, 9.3e18, -9.3e18 };
  for (size_t d = 0; d < 3; d++)
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
      for (int which = 0; which <= 28; which++)
        for (size_t si = 0; si < (which >= 13 && which != 26 ? sizeof scal / sizeof scal[0] : 1); si++) {
          if (dts[d] == BEXT_F64 && (which == 26 || which == 27)) continue;   /* libmvec's pow: last bits open */
          bext_tensor *r[2];
          const char *devs[2] = { "flex", "ndarray" };
          for (int q = 0; q < 2; q++)
            r[q] = native_op(which, edgy(dts[d], ns[k], 1, devs[q]), edgy(dts[d], ns[k], 2, devs[q]), scal[si]);
          char what[96];
          snprintf(what, sizeof what, "op %d on %s [%lld], scalar %g", which, bext_dtype_name(dts[d]),
                   (long long)ns[k], scal[si]);
          same(r[0], r[1], what);
        }
}

Test(flex_paths, integer_ops_of_transposed_and_broadcast_operands) {
  /* the native-width ops' rows when an operand is a transposed view or
   * broadcasts: a transposed operand among row-major ones takes the tile
   * walk, rows shorter than 64 the general engine, longer rows of a row
   * broadcast ([C] or [1, C], either side) the native kernels a row at a
   * time, and operands sharing one transposed layout (numel >= 2048)
   * the native kernels over the flat buffers: i32 and i64 division, rem
   * and pow by tensors and scalars, unary ops, comparisons, on shapes
   * around the vector width and one split across threads mid-row */
  static const int64_t shp[][2] = { { 9, 33 }, { 40, 17 }, { 64, 256 }, { 3, 64 }, { 5, 65 }, { 33, 127 },
                                    { 300, 229 } };
  static const bext_dtype dts[] = { BEXT_I32, BEXT_I64 };
  const size_t nshp = sizeof shp / sizeof shp[0];
  for (size_t d = 0; d < 2; d++)
    for (size_t q = 0; q < nshp; q++)
      for (int form = 0; form < 6; form++)
        for (int which = 0; which <= 28; which++) {
          bext_tensor *r[2];
          const char *devs[2] = { "flex", "ndarray" };
          for (int v = 0; v < 2; v++) {
            const int64_t n = shp[q][0] * shp[q][1], tr[2] = { shp[q][1], shp[q][0] };
            const int64_t row1[2] = { 1, shp[q][1] };
            bext_tensor *a = bext_reshape(edgy(dts[d], n, 3, devs[v]), tr, 2);
            a = bext_swap_dims(a, 0, 1);   /* [rows, cols], transposed */
            bext_tensor *b = bext_reshape(edgy(dts[d], n, 4, devs[v]), shp[q], 2);
            if (form == 1 || form == 3 || form == 4) {   /* a row broadcast against a contiguous operand */
              bext_release(a);
              a = bext_reshape(edgy(dts[d], n, 5, devs[v]), shp[q], 2);
              bext_release(b);
              b = edgy(dts[d], shp[q][1], 6, devs[v]);
              if (form == 4) b = bext_reshape(b, row1, 2);   /* as [1, C] */
              if (form == 3) {   /* the row first */
                bext_tensor *t = a;
                a = b;
                b = t;
              }
            } else if (form == 2) {   /* the transposed operand second */
              bext_tensor *t = a;
              a = b;
              b = t;
            } else if (form == 5) {   /* both transposed alike: the layout is kept */
              bext_release(b);
              b = bext_swap_dims(bext_reshape(edgy(dts[d], n, 7, devs[v]), tr, 2), 0, 1);
            }
            r[v] = native_op(which, a, b, which % 2 ? -7 : 4294967311.0);
          }
          char what[96];
          snprintf(what, sizeof what, "op %d on %s [%lld x %lld] form %d", which, bext_dtype_name(dts[d]),
                   (long long)shp[q][0], (long long)shp[q][1], form);
          same(r[0], r[1], what);
        }
}

Test(flex_paths, f32_binary_ops_of_a_transposed_operand) {
  /* f32 arithmetic and comparisons with a transposed operand among
   * row-major ones: the tile walk, whose next tile's output rows are
   * prefetched for writing once a row has 512 columns and more (the
   * 1030- and 768-column shapes, bool and f32 outputs); ragged tiles
   * (7, 33, 257, 229 and 1030 are no multiples of 8 or 256), the
   * transposed operand on either side, NaN, infinities, signed zeros */
  static const int64_t shp[][2] = { { 7, 1 }, { 7, 33 }, { 33, 257 }, { 257, 33 }, { 64, 256 },
                                    { 40, 1030 }, { 300, 229 }, { 96, 768 } };
  const size_t nshp = sizeof shp / sizeof shp[0];
  for (size_t q = 0; q < nshp; q++)
    for (int form = 0; form < 2; form++)
      for (int which = 0; which < 12; which++) {
        bext_tensor *r[2];
        const char *devs[2] = { "flex", "ndarray" };
        for (int v = 0; v < 2; v++) {
          const int64_t n = shp[q][0] * shp[q][1], tr[2] = { shp[q][1], shp[q][0] };
          bext_tensor *a = bext_swap_dims(bext_reshape(edgy(BEXT_F32, n, 11, devs[v]), tr, 2), 0, 1);
          bext_tensor *b = bext_reshape(edgy(BEXT_F32, n, 12, devs[v]), shp[q], 2);
          if (form) {   /* the transposed operand second */
            bext_tensor *t = a;
            a = b;
            b = t;
          }
          switch (which) {
          case 0: r[v] = bext_add(a, b); break;
          case 1: r[v] = bext_sub(a, b); break;
          case 2: r[v] = bext_mul(a, b); break;
          case 3: r[v] = bext_div(a, b); break;
          case 4: r[v] = bext_max(a, b); break;
          case 5: r[v] = bext_min(a, b); break;
          case 6: r[v] = bext_eq(a, b); break;
          case 7: r[v] = bext_ne(a, b); break;
          case 8: r[v] = bext_lt(a, b); break;
          case 9: r[v] = bext_le(a, b); break;
          case 10: r[v] = bext_gt(a, b); break;
          default: r[v] = bext_ge(a, b); break;
          }
        }
        char what[96];
        snprintf(what, sizeof what, "f32 op %d [%lld x %lld] form %d", which, (long long)shp[q][0],
                 (long long)shp[q][1], form);
        same(r[0], r[1], what);
      }
}

/* n bools (0/1 bytes) from a seed. */
static bext_tensor *bools(int64_t n, unsigned seed, const char *devname) {
  uint8_t *v = malloc((size_t)(n ? n : 1));
  uint64_t s = seed;
  for (int64_t i = 0; i < n; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    v[i] = (uint8_t)((s >> 40) & 1);
  }
  bext_tensor *t = bext_from_data(v, BEXT_BOOL, &n, 1, dev(devname));
  free(v);
  cr_assert_not_null(t, "%s", bext_last_error());
  return t;
}

/* Bool op `which` (and, or, xor, eq, ne; 5: not of a) on a and b, both
 * consumed. */
static bext_tensor *bool_op(int which, bext_tensor *a, bext_tensor *b) {
  switch (which) {
  case 0: return bext_and(a, b);
  case 1: return bext_or(a, b);
  case 2: return bext_xor(a, b);
  case 3: return bext_eq(a, b);
  case 4: return bext_ne(a, b);
  default: bext_release(b); return bext_not(a);
  }
}

Test(flex_paths, bool_ops_at_their_width) {
  /* and, or, xor, eq, ne, not of bool tensors: contiguous (the byte
   * kernels) on lengths around the vector widths and threaded;
   * transposed among row-major (the tile walk); a row broadcast on
   * either side (rows of 64 and more: the byte kernels a row at a time,
   * shorter ones the general engine); both transposed alike (the byte
   * kernels over the kept layout from 2048 elements on) */
  static const int64_t ns[] = { 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 1000, 70001 };
  for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
    for (int form = 0; form < 5; form++)
      for (int which = 0; which < 6; which++) {
        bext_tensor *r[2];
        const char *devs[2] = { "flex", "ndarray" };
        const int64_t n = ns[k], sh[2] = { 3, n }, tr[2] = { n, 3 }, row1[2] = { 1, n };
        for (int v = 0; v < 2; v++) {
          bext_tensor *a = bools(3 * n, 7, devs[v]), *b = bools(3 * n, 8, devs[v]);
          if (form == 1) a = bext_swap_dims(bext_reshape(a, tr, 2), 0, 1), b = bext_reshape(b, sh, 2);
          if (form == 2) a = bext_reshape(a, sh, 2), bext_release(b), b = bools(n, 9, devs[v]);
          if (form == 3) b = bext_reshape(b, sh, 2), bext_release(a), a = bext_reshape(bools(n, 9, devs[v]), row1, 2);
          if (form == 4)
            a = bext_swap_dims(bext_reshape(a, tr, 2), 0, 1), b = bext_swap_dims(bext_reshape(b, tr, 2), 0, 1);
          r[v] = bool_op(which, a, b);
        }
        char what[64];
        snprintf(what, sizeof what, "bool op %d [%lld] form %d", which, (long long)n, form);
        same(r[0], r[1], what);
      }
}

Test(flex_paths, bool_ops_of_a_transposed_operand_by_tiles) {
  /* bool and, or, xor, eq, ne with a transposed operand among row-major
   * ones on shapes whose tiles are transposed by 16x16 blocks (rows and
   * columns multiples of 16), by 8x8 ones (24 rows, 40 columns) and
   * gathered (ragged: 33, 257, 7), the transposed operand on either side,
   * rows past 512 columns (the output prefetch) */
  static const int64_t shp[][2] = { { 64, 256 }, { 32, 1040 }, { 48, 80 }, { 24, 512 }, { 64, 40 },
                                    { 33, 257 }, { 257, 33 }, { 7, 1000 }, { 96, 768 } };
  for (size_t q = 0; q < sizeof shp / sizeof shp[0]; q++)
    for (int form = 0; form < 2; form++)
      for (int which = 0; which < 5; which++) {
        bext_tensor *r[2];
        const char *devs[2] = { "flex", "ndarray" };
        const int64_t n = shp[q][0] * shp[q][1], tr[2] = { shp[q][1], shp[q][0] };
        for (int v = 0; v < 2; v++) {
          bext_tensor *a = bext_swap_dims(bext_reshape(bools(n, 21, devs[v]), tr, 2), 0, 1);
          bext_tensor *b = bext_reshape(bools(n, 22, devs[v]), shp[q], 2);
          if (form) {
            bext_tensor *t = a;
            a = b;
            b = t;
          }
          r[v] = bool_op(which, a, b);
        }
        char what[64];
        snprintf(what, sizeof what, "bool op %d [%lld x %lld] form %d", which, (long long)shp[q][0],
                 (long long)shp[q][1], form);
        same(r[0], r[1], what);
      }
}

Test(flex_paths, rounding_and_sign_in_lanes) {
  /* floor, ceil, round (half to even) and sign of f32 (f16 and bf16 run
   * the same f32 kernels): halves, signed zeros, NaN, infinities,
   * subnormals, integers beyond 2^23, over a length with a scalar tail */
  enum { N = 1037 };
  static float v[N];
  static const float sp[] = { 0.0f, -0.0f, NAN, INFINITY, -INFINITY, 1e-40f, -1e-40f, 16777217.0f, -8388608.5f,
                              0.49999997f, -0.49999997f, 1e30f };
  for (int i = 0; i < N; i++) v[i] = i % 7 == 0 ? sp[(i / 7) % 12] : (float)(i % 83 - 41) / 4.0f;
  static const bext_dtype dts[] = { BEXT_F32, BEXT_F16, BEXT_BF16 };
  for (size_t d = 0; d < 3; d++)
    for (int which = 0; which < 4; which++) {
      bext_tensor *r[2];
      const char *devs[2] = { "flex", "ndarray" };
      for (int q = 0; q < 2; q++) {
        bext_tensor *t = bext_cast(bext_from_data(v, BEXT_F32, (int64_t[]){ N }, 1, dev(devs[q])), dts[d]);
        r[q] = which == 0 ? bext_floor(t) : which == 1 ? bext_ceil(t) : which == 2 ? bext_round(t) : bext_sign(t);
      }
      char what[64];
      snprintf(what, sizeof what, "%s %s", which == 0 ? "floor" : which == 1 ? "ceil" : which == 2 ? "round" : "sign",
               bext_dtype_name(dts[d]));
      same(r[0], r[1], what);
    }
}

static bext_tensor *int_red(int which, int dim, bext_tensor *t) {
  switch (which) {
  case 0: return dim < 0 ? bext_sum(t) : bext_sum_dim(t, dim, false);
  case 1: return dim < 0 ? bext_mean(t) : bext_mean_dim(t, dim, true);
  case 2: return dim < 0 ? bext_prod(t) : bext_prod_dim(t, dim, false);
  case 3: return dim < 0 ? bext_max_all(t) : bext_max_dim(t, dim, false);
  case 4: return dim < 0 ? bext_min_all(t) : bext_min_dim(t, dim, false);
  default: return dim < 0 ? bext_argmin(t) : bext_argmax_dim(t, dim, false);
  }
}

Test(flex_paths, integer_reductions_at_their_width) {
  /* sums and products that wrap, extremes at INT_MIN/INT_MAX, whole
   * tensors split across threads (chunks of 16K) and rows along both dims */
  static const int64_t shapes[][2] = { { 1, 1 }, { 3, 37 }, { 41, 9 }, { 7, 70001 }, { 5000, 33 } };
  for (int d = 0; d < 2; d++)
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
      for (int which = 0; which < 6; which++)
        for (int dim = -1; dim < 2; dim++) {
          bext_dtype dt = d ? BEXT_I64 : BEXT_I32;
          int64_t n = shapes[s][0] * shapes[s][1];
          bext_tensor *r[2];
          const char *devs[2] = { "flex", "ndarray" };
          for (int q = 0; q < 2; q++)
            r[q] = int_red(which, dim, bext_reshape(edgy(dt, n, 11, devs[q]), shapes[s], 2));
          char what[96];
          snprintf(what, sizeof what, "reduction %d dim %d of %s [%lld x %lld]", which, dim, bext_dtype_name(dt),
                   (long long)shapes[s][0], (long long)shapes[s][1]);
          same(r[0], r[1], what);
        }
}

int bxr_pool_set_threads(int n);   /* runtime/src/backend.h */

static bext_tensor *half_red(int which, int dim, bext_tensor *t) {
  switch (which) {
  case 0: return dim < 0 ? bext_sum(t) : bext_sum_dim(t, dim, false);
  case 1: return dim < 0 ? bext_mean(t) : bext_mean_dim(t, dim, false);
  case 2: return dim < 0 ? bext_max_all(t) : bext_max_dim(t, dim, false);
  case 3: return dim < 0 ? bext_min_all(t) : bext_min_dim(t, dim, true);
  case 4: return dim < 0 ? bext_argmax(t) : bext_argmax_dim(t, dim, false);
  default: return dim < 0 ? bext_argmin(t) : bext_argmin_dim(t, dim, false);
  }
}

Test(flex_paths, half_reductions_widen_in_lanes) {
  /* f16/bf16 sums, means and extremes widen blocks to f32 in lanes: the
   * result must be the f32 reduction of the widened values (the same
   * pairwise tree, the same double-to-f32-to-half store), bit for bit,
   * with one thread and with two (whole tensors split in 16K chunks) */
  static const int64_t shapes[][2] = { { 1, 3 }, { 3, 37 }, { 300, 257 }, { 4, 70001 }, { 2000, 40 } };
  for (int h = 0; h < 2; h++)
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
      for (int which = 0; which < 6; which++)
        for (int dim = -1; dim < 2; dim++)
          for (int threads = 1; threads <= 2; threads++) {
            bext_dtype dt = h ? BEXT_BF16 : BEXT_F16;
            int64_t n = shapes[s][0] * shapes[s][1];
            int old = bxr_pool_set_threads(threads);
            bext_tensor *x = bext_reshape(bext_cast(edgy(BEXT_F64, n, 5 + (unsigned)s, "flex"), dt), shapes[s], 2);
            bext_tensor *got = half_red(which, dim, bext_retain(x));
            bext_tensor *want = half_red(which, dim, bext_cast(x, BEXT_F32));
            if (want && which < 4) want = bext_cast(want, dt);
            bxr_pool_set_threads(old);
            char what[96];
            snprintf(what, sizeof what, "reduction %d dim %d of %s [%lld x %lld], %d thread(s)", which, dim,
                     bext_dtype_name(dt), (long long)shapes[s][0], (long long)shapes[s][1], threads);
            same(got, want, what);
          }
}

Test(flex_paths, half_argextremes_take_the_first_nan) {
  /* along an outer axis f16/bf16 once took the last NaN (the generic
   * combine); the reference stops at the first */
  for (int h = 0; h < 2; h++)
    for (int which = 4; which < 6; which++)
      for (int dim = 0; dim < 2; dim++) {
        bext_dtype dt = h ? BEXT_BF16 : BEXT_F16;
        bext_tensor *r[2];
        const char *devs[2] = { "flex", "ndarray" };
        for (int q = 0; q < 2; q++)
          r[q] = half_red(which, dim, bext_reshape(bext_cast(edgy(BEXT_F64, 300 * 57, 3, devs[q]), dt),
                                                   (int64_t[]){ 300, 57 }, 2));
        char what[64];
        snprintf(what, sizeof what, "arg-reduction %d dim %d of %s", which, dim, bext_dtype_name(dt));
        same(r[0], r[1], what);
      }
}

Test(flex_paths, mask_select_without_branches) {
  /* mask_where / mask_fill read both sides and select by mask: every
   * element width, random masks, broadcast masks and values, a
   * transposed input, sizes at and beyond the vector widths */
  static const bext_dtype dts[] = { BEXT_F32, BEXT_F64, BEXT_F16, BEXT_I32, BEXT_I64, BEXT_BOOL };
  static const int64_t shapes[][2] = { { 1, 1 }, { 3, 37 }, { 300, 257 } };
  for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
    for (size_t s = 0; s < 3; s++)
      for (int form = 0; form < 4; form++) {
        const int64_t *sh = shapes[s];
        int64_t n = sh[0] * sh[1];
        bext_tensor *r[2];
        const char *devs[2] = { "flex", "ndarray" };
        for (int q = 0; q < 2; q++) {
          bext_tensor *t = bext_reshape(bext_cast(edgy(BEXT_F64, n, 3, devs[q]), dts[d]), sh, 2);
          bext_tensor *m = bext_reshape(bext_gt_scalar(edgy(BEXT_F64, n, 4, devs[q]), 0), sh, 2);
          if (form == 2) t = bext_swap_dims(bext_contiguous(bext_swap_dims(t, 0, 1)), 0, 1);
          if (form == 3) m = bext_expand(bext_narrow(m, 0, 0, 1), sh, 2);   /* one row of mask for all */
          if (form == 1) {
            bext_release(t);
            t = NULL;
          }
          if (t) {
            bext_tensor *v = bext_reshape(bext_cast(edgy(BEXT_F64, n, 5, devs[q]), dts[d]), sh, 2);
            r[q] = bext_mask_where(t, m, v);
          } else {
            r[q] = bext_mask_fill(bext_reshape(bext_cast(edgy(BEXT_F64, n, 6, devs[q]), dts[d]), sh, 2), m, -2.5);
          }
        }
        char what[80];
        snprintf(what, sizeof what, "mask form %d of %s [%lld x %lld]", form, bext_dtype_name(dts[d]),
                 (long long)sh[0], (long long)sh[1]);
        same(r[0], r[1], what);
      }
}

/* n elements of random bits in dt (every NaN payload, signalling ones
 * included, for the float types; 0/1 for bool), the same on both devices. */
static void random_bits(bext_dtype dt, int64_t n, unsigned seed, bext_tensor **flex, bext_tensor **nd) {
  size_t es = bext_dtype_size(dt);
  unsigned char *b = malloc(es * (size_t)(n ? n : 1));
  uint64_t s = seed;
  for (int64_t i = 0; i < n; i++) {
    for (size_t k = 0; k < es; k++) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      b[(size_t)i * es + k] = (unsigned char)(s >> 40);
    }
    if (dt == BEXT_BOOL) b[i] &= 1;
  }
  *flex = bext_from_data(b, dt, &n, 1, dev("flex"));
  *nd = bext_from_data(b, dt, &n, 1, dev("ndarray"));
  free(b);
  cr_assert(*flex && *nd, "%s", bext_last_error());
}

/* got and want hold the same bytes, NaN payloads included. */
static void same_bits(bext_tensor *got, bext_tensor *want, const char *what) {
  cr_assert_not_null(got, "%s (flex): %s", what, bext_last_error());
  cr_assert_not_null(want, "%s (ndarray): %s", what, bext_last_error());
  cr_assert_eq(bext_dtype_of(got), bext_dtype_of(want), "%s: dtype", what);
  size_t es = bext_dtype_size(bext_dtype_of(got)), bytes = (size_t)bext_numel(want) * es;
  cr_assert_eq(bext_numel(got), bext_numel(want), "%s: size", what);
  char *g = malloc(bytes + 1), *w = malloc(bytes + 1);
  cr_assert(bext_read(got, g, bytes) && bext_read(want, w, bytes), "%s: read", what);
  for (size_t i = 0; i < bytes; i += es)
    if (memcmp(g + i, w + i, es)) {
      unsigned long long gb = 0, wb = 0;
      memcpy(&gb, g + i, es);
      memcpy(&wb, w + i, es);
      cr_assert_fail("%s: element %zu differs (bits %llx, want %llx)", what, i / es, gb, wb);
    }
  free(g);
  free(w);
  bext_release(got);
  bext_release(want);
}

Test(flex_paths, mask_select_at_the_element_width) {
  /* contiguous t, mask and value of one shape take mask_sel: a byte
   * select at the element's width, so every bit pattern (NaN payloads,
   * signalling NaNs of the halves) comes through as the reference copies
   * it; lengths around each width's vector (32 bytes: 32 bool, 16 halves,
   * 8 f32/i32, 4 f64/i64 lanes), threaded sizes, in place on a unique t,
   * fill values each dtype stores in its own way; a strided t and a
   * broadcast mask and value (the general engine, which moves halves as
   * 16-bit patterns too) */
  static const bext_dtype dts[] = { BEXT_F32, BEXT_F64, BEXT_F16, BEXT_BF16, BEXT_I32, BEXT_I64, BEXT_BOOL, BEXT_U8 };
  static const int64_t lens[] = { 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 65, 300001 };
  static const double fills[] = { -2.5, NAN, -0.0, 1e30, 3.0000001 };
  for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
      for (int form = 0; form < 3 + 5 + 1; form++) {   /* 0-2 where, 3-7 fill, 8 where broadcast */
        int64_t n = lens[l];
        bext_tensor *t[2], *v[2], *m[2], *r[2];
        random_bits(dts[d], form == 2 ? 2 * n : n, 11 + (unsigned)l, &t[0], &t[1]);
        random_bits(dts[d], n, 12 + (unsigned)l, &v[0], &v[1]);
        random_bits(BEXT_BOOL, n, 13 + (unsigned)l, &m[0], &m[1]);
        for (int q = 0; q < 2; q++) {
          if (form == 2) {   /* every other element: a strided t */
            t[q] = bext_narrow(bext_reshape(t[q], (int64_t[]){ n, 2 }, 2), 1, 1, 1);
            m[q] = bext_reshape(m[q], (int64_t[]){ n, 1 }, 2);
            v[q] = bext_reshape(v[q], (int64_t[]){ n, 1 }, 2);
          }
          if (form == 8) {   /* the mask and value of element 0 for all: stride 0 */
            m[q] = bext_expand(bext_narrow(m[q], 0, 0, 1), &n, 1);
            v[q] = bext_expand(bext_narrow(v[q], 0, 0, 1), &n, 1);
          }
          if (form == 1) bext_retain(t[q]);   /* shared: a fresh output */
          if (form < 3 || form == 8) r[q] = bext_mask_where(t[q], m[q], v[q]);
          else {
            bext_release(v[q]);
            r[q] = bext_mask_fill(t[q], m[q], fills[form - 3]);
          }
        }
        char what[96];
        snprintf(what, sizeof what, "mask %s form %d of %s [%lld]", form < 3 || form == 8 ? "where" : "fill", form,
                 bext_dtype_name(dts[d]), (long long)n);
        same_bits(r[0], r[1], what);
        if (form == 1) {
          bext_release(t[0]);
          bext_release(t[1]);
        }
      }
}

Test(flex_paths, float_comparisons_at_native_width) {
  /* f32, f16 and bf16 comparisons of contiguous tensors and with scalars
   * (one kernel call per pool chunk): edge values (NaN, infinities,
   * signed zeros) and random bit patterns (every NaN payload, subnormals)
   * on either side, scalars exact in the type, between two of its values,
   * not f32 values, past the halves' range, NaN; lengths around the 8-,
   * 16- and 32-lane steps and a threaded one */
  static const bext_dtype dts[] = { BEXT_F32, BEXT_F16, BEXT_BF16, BEXT_F64 };
  static const int64_t ns[] = { 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 65, 70001 };
  static const double scal[] = { 0, -0.0, 1, -7.25, NAN, INFINITY, -INFINITY, 0.1, -0.1, 1.0001, 1.0000001,
                                 65504, 65520, -65520, 1e-8, -1e-8, 1e-40, 3.4e38, 3.5e38, 1e300, -1e300 };
  bext_tensor *(*const fn[])(bext_tensor *, bext_tensor *) = { bext_eq, bext_ne, bext_gt, bext_ge, bext_lt, bext_le };
  bext_tensor *(*const fs[])(bext_tensor *, double) = { bext_eq_scalar, bext_ne_scalar, bext_gt_scalar,
                                                        bext_ge_scalar, bext_lt_scalar, bext_le_scalar };
  for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
      for (int bits = 0; bits < 2; bits++)
        for (int op = 0; op < 6; op++)
          for (size_t si = 0; si <= sizeof scal / sizeof scal[0]; si++) {
            bext_tensor *a[2], *b[2], *r[2];
            if (bits) {
              random_bits(dts[d], ns[k], 21 + (unsigned)k, &a[0], &a[1]);
              random_bits(dts[d], ns[k], 22 + (unsigned)k, &b[0], &b[1]);
            } else {
              const char *devs[2] = { "flex", "ndarray" };
              for (int q = 0; q < 2; q++) {
                a[q] = bext_cast(edgy(BEXT_F64, ns[k], 7, devs[q]), dts[d]);
                b[q] = bext_cast(edgy(BEXT_F64, ns[k], 8, devs[q]), dts[d]);
              }
            }
            /* si == 0: a tensor pair; else scalar si - 1 */
            for (int q = 0; q < 2; q++) {
              if (si == 0) r[q] = fn[op](a[q], b[q]);
              else {
                bext_release(b[q]);
                r[q] = fs[op](a[q], scal[si - 1]);
              }
            }
            char what[112];
            snprintf(what, sizeof what, "compare %d of %s [%lld]%s, %s %g", op, bext_dtype_name(dts[d]),
                     (long long)ns[k], bits ? " bits" : "", si ? "scalar" : "tensors", si ? scal[si - 1] : 0.0);
            same(r[0], r[1], what);
          }
}

/* got within ulps of want (relative, in units of the dtype's epsilon), a
 * NaN for a NaN, infinities and zeros exactly. */
static void close_to(bext_tensor *got, bext_tensor *want, double ulps, const char *what) {
  cr_assert_not_null(got, "%s (flex): %s", what, bext_last_error());
  cr_assert_not_null(want, "%s (ndarray): %s", what, bext_last_error());
  bool f32 = bext_dtype_of(want) == BEXT_F32;
  int64_t n = bext_numel(want);
  bext_tensor *g64 = bext_cast(got, BEXT_F64), *w64 = bext_cast(want, BEXT_F64);
  double *g = malloc(sizeof(double) * (size_t)n), *w = malloc(sizeof(double) * (size_t)n);
  cr_assert(bext_read(g64, g, sizeof(double) * (size_t)n) && bext_read(w64, w, sizeof(double) * (size_t)n));
  for (int64_t i = 0; i < n; i++) {
    if (isnan(w[i])) { cr_assert(isnan(g[i]), "%s[%lld]: %g, want NaN", what, (long long)i, g[i]); continue; }
    if (isinf(w[i]) || w[i] == 0) {
      cr_assert(g[i] == w[i], "%s[%lld]: %.17g, want %.17g", what, (long long)i, g[i], w[i]);
      continue;
    }
    double tol = ulps * fabs(w[i]) * (f32 ? 0x1p-23 : 0x1p-52);
    cr_assert(fabs(g[i] - w[i]) <= tol, "%s[%lld]: %.17g, want %.17g", what, (long long)i, g[i], w[i]);
  }
  free(g);
  free(w);
  bext_release(g64);
  bext_release(w64);
}

Test(flex_paths, f64_rem_in_lanes) {
  /* f64 rem's lane kernel (trunc + FMA) through the op against NdArray's
   * fmod rule, bit for bit: edge values (zeros, NaN, infinities) mixed
   * with small quotients, tiny and huge divisors (subnormal results,
   * quotients past 2^52), at vector-boundary lengths; a broadcast row,
   * a transposed view and a scalar divisor */
  static const int64_t ns[] = { 1, 7, 8, 9, 31, 33, 1037 };
  static const double scales[] = { 1.0, 0x1p-1070, 0x1p60, 1e-3 };
  for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
    for (size_t sc = 0; sc < 4; sc++)
      for (int form = 0; form < 4; form++) {
        bext_tensor *r[2];
        const char *devs[2] = { "flex", "ndarray" };
        const int64_t n = ns[k];
        for (int q = 0; q < 2; q++) {
          bext_tensor *a = edgy(BEXT_F64, form == 2 ? n * 3 : n, 11, devs[q]);
          bext_tensor *b = bext_mul_scalar(edgy(BEXT_F64, form == 1 ? 3 : form == 2 ? n * 3 : n, 12, devs[q]),
                                           scales[sc]);
          switch (form) {
          case 0: r[q] = bext_rem(a, b); break;
          case 1: r[q] = bext_rem(bext_reshape(a, (int64_t[]){ n, 1 }, 2),
                                  bext_reshape(b, (int64_t[]){ 1, 3 }, 2)); break;   /* both broadcast */
          case 2: r[q] = bext_rem(bext_swap_dims(bext_reshape(a, (int64_t[]){ 3, n }, 2), 0, 1),
                                  bext_reshape(b, (int64_t[]){ n, 3 }, 2)); break;   /* transposed a */
          default: bext_release(b); r[q] = bext_rem_scalar(a, -0.375 * scales[sc]); break;
          }
        }
        char what[64];
        snprintf(what, sizeof what, "f64 rem form %d scale %g [%lld]", form, scales[sc], (long long)n);
        same(r[0], r[1], what);
      }
}

Test(flex_paths, f64_transcendentals_and_pow_in_lanes) {
  /* libmvec's 4-lane f64 forms and its powf/pow against libm (ndarray):
   * within a few ulps, specials exact (NaN, infinities, pow's zeros and
   * ones), sizes with a padded tail */
  static const int64_t ns[] = { 1, 3, 4, 7, 1037 };
  for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
    for (int which = 0; which < 7; which++) {
      bext_tensor *r[2];
      const char *devs[2] = { "flex", "ndarray" };
      for (int q = 0; q < 2; q++) {
        bext_tensor *x = edgy(BEXT_F64, ns[k], 8, devs[q]);
        if (which == 0) x = bext_mul_scalar(x, 0.25);   /* exp: keep most in range */
        if (which == 1 || which == 2) x = bext_abs(x);  /* log, log1p: defined */
        switch (which) {
        case 0: r[q] = bext_exp(x); break;
        case 1: r[q] = bext_log(x); break;
        case 2: r[q] = bext_log1p(x); break;
        case 3: r[q] = bext_sin(x); break;
        case 4: r[q] = bext_cos(x); break;
        case 5: r[q] = bext_tanh(x); break;
        default: r[q] = bext_erf(x); break;
        }
      }
      char what[48];
      snprintf(what, sizeof what, "f64 unary %d [%lld]", which, (long long)ns[k]);
      close_to(r[0], r[1], 8, what);
    }
    for (int dt = 0; dt < 2; dt++)
      for (int form = 0; form < 6; form++) {
        bext_dtype t = dt ? BEXT_F64 : BEXT_F32;
        bext_tensor *r[2];
        const char *devs[2] = { "flex", "ndarray" };
        /* integer exponents of f32 take powi's f64 products (0: x^0 is 1 for NaN too) */
        static const double sc[] = { 3.0, 0.5, -1.0, 0.0, -3.0, 2.0 };
        for (int q = 0; q < 2; q++) {
          bext_tensor *x = bext_cast(bext_mul_scalar(edgy(BEXT_F64, ns[k], 9, devs[q]), 0.125), t);
          if (form == 0) r[q] = bext_pow(x, bext_cast(bext_mul_scalar(edgy(BEXT_F64, ns[k], 10, devs[q]), 0.05), t));
          else r[q] = bext_pow_scalar(x, sc[form]);
        }
        char what[48];
        snprintf(what, sizeof what, "pow %s form %d [%lld]", bext_dtype_name(t), form, (long long)ns[k]);
        close_to(r[0], r[1], 8, what);
      }
  }
}

Test(flex_paths, f64_unary_lanes_through_the_ops) {
  /* f64 sqrt, rsqrt, recip, floor, ceil, round (bit for bit) and sigmoid
   * (within ulps; its limits exact) through the ops against NdArray:
   * lengths around the 4-lane width and split across threads, contiguous
   * and a transposed view (the tile walk); halves and the double below
   * 0.5, signed zeros, 2^52 - 0.5 and past 2^52, subnormals, huge values,
   * NaN, infinities, negatives (sqrt's NaN) */
  static const double sp[] = { 0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 0.49999999999999994, -0.49999999999999994,
                               0x1p52 - 0.5, 0x1p52 + 1, -(0x1p52 + 1), 1e300, -1e300, 0x1p-1074, 0x0.8p-1022,
                               -0x1p-1060, NAN, -NAN, INFINITY, -INFINITY, -4.0, 1e-300 };
  enum { NS = sizeof sp / sizeof sp[0] };
  static const int64_t ns[] = { 1, 3, 4, 5, 7, 8, 9, 33, 1037, 70001 };
  for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
    for (int form = 0; form < 2; form++) {
      const int64_t n = ns[k], m = form ? 3 * n : n;
      double *v = malloc(sizeof(double) * (size_t)m);
      for (int64_t i = 0; i < m; i++)
        v[i] = i % 3 == 0 ? sp[(i / 3) % NS] : ((double)((i * 37) % 2001) - 1000) / 4 * (i % 7 == 1 ? 1e-3 : 1);
      for (int which = 0; which < 7; which++) {
        bext_tensor *r[2];
        const char *devs[2] = { "flex", "ndarray" };
        for (int q = 0; q < 2; q++) {
          bext_tensor *x = bext_from_data(v, BEXT_F64, &m, 1, dev(devs[q]));
          if (form) x = bext_swap_dims(bext_reshape(x, (int64_t[]){ 3, n }, 2), 0, 1);   /* [n, 3], transposed */
          switch (which) {
          case 0: r[q] = bext_sqrt(x); break;
          case 1: r[q] = bext_rsqrt(x); break;
          case 2: r[q] = bext_recip(x); break;
          case 3: r[q] = bext_floor(x); break;
          case 4: r[q] = bext_ceil(x); break;
          case 5: r[q] = bext_round(x); break;
          default: r[q] = bext_sigmoid(x); break;
          }
        }
        char what[64];
        snprintf(what, sizeof what, "f64 unary %d form %d [%lld]", which, form, (long long)n);
        if (which == 6) close_to(r[0], r[1], 8, what);
        else same(r[0], r[1], what);
      }
      free(v);
    }
}

Test(flex_paths, creation_fills_every_dtype) {
  /* zeros, ones and full (one 32-byte store kernel, fill8, for every
   * width; the streamed zeros are in test_flex_stream.c) on lengths around the vector widths and split
   * across threads at odd element counts, values whose bytes differ
   * (f16 1.5 is 0x3e00, i32 -3 is 0xfffffffd), against NdArray */
  static const int64_t ns[] = { 1, 2, 3, 7, 8, 9, 31, 33, 65, 70001, 300007 };
  static const bext_dtype dts[] = { BEXT_F32, BEXT_F64, BEXT_F16, BEXT_BF16, BEXT_I32, BEXT_I64, BEXT_BOOL, BEXT_U8 };
  static const double vals[] = { -3, 1.5, 65504, -0.0, 1e-3 };
  for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
      for (size_t w = 0; w < 2 + sizeof vals / sizeof vals[0]; w++) {
        bext_tensor *r[2];
        const char *devs[2] = { "flex", "ndarray" };
        const int64_t sh[2] = { 1, ns[k] };
        for (int v = 0; v < 2; v++)
          r[v] = w == 0 ? bext_zeros(sh, 2, dts[d], dev(devs[v]))
                 : w == 1 ? bext_ones(sh, 2, dts[d], dev(devs[v]))
                          : bext_full(sh, 2, vals[w - 2], dts[d], dev(devs[v]));
        char what[64];
        snprintf(what, sizeof what, "fill %zu %s [%lld]", w, bext_dtype_name(dts[d]), (long long)ns[k]);
        same(r[0], r[1], what);
      }
}
