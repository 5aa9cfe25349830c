/* test_flex_stream.c — Flex's streamed outputs (bxfx_stream_min,
 * flex_internal.h): an elementwise output past the threshold is computed
 * a block at a time in L1 and copied out with non-temporal stores.  The
 * store kind must not change a bit, so every op is run with the threshold
 * at 0 (everything streams) and at SIZE_MAX (nothing does) and the two
 * outputs compared byte for byte: f32/f64/i32/i64 unary, scalar, binary
 * and comparison ops (the general engine, the native-width jobs and the
 * widening f32 scalar path), on lengths around the vector widths, rows of
 * odd lengths (unaligned output heads and tails in every block), a
 * transposed operand (the tile walk) and sizes split across two threads.
 * The copy-out itself (stream_out, both kernel variants) is checked on
 * every head alignment and short length against memcpy, bytes outside
 * untouched. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bext/bext.h"
#include "flex/flex_internal.h"

static void two_threads(void) { setenv("BEXT_NUM_THREADS", "2", 1); }
TestSuite(flex_stream, .init = two_threads);

static const bext_device *flex(void) {
  const bext_device *d = bext_device_get("flex");
  cr_assert_not_null(d, "%s", bext_last_error());
  return d;
}

Test(flex_stream, stream_out_copies_every_head_and_tail) {
  const struct bxfx_kernels *ks[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  _Alignas(64) unsigned char src[512], dst[640], want[640];
  for (int i = 0; i < 512; i++) src[i] = (unsigned char)(i * 37 + 11);
  for (int v = 0; v < 2; v++) {
    if (v == 0 && bxfx_kern() != &bxfx_kern_avx2) continue;   /* this CPU cannot run it */
    for (size_t off = 0; off < 64; off++)
      for (size_t so = 0; so < 3; so++)
        for (size_t bytes = 0; bytes <= 300; bytes++) {
          memset(dst, 0xa5, sizeof dst);
          memset(want, 0xa5, sizeof want);
          memcpy(want + off, src + so, bytes);
          ks[v]->stream_out(dst + off, src + so, bytes);
          bxfx_stream_fence();
          cr_assert(!memcmp(dst, want, sizeof dst), "%s stream_out: offset %zu, source offset %zu, %zu bytes",
                    ks[v]->isa, off, so, bytes);
        }
  }
}

static bext_tensor *values(bext_dtype dt, int64_t n, unsigned seed) {
  static const double fl[] = { 0.0, -0.0, 1.0, -1.0, NAN, INFINITY, -INFINITY, 2.5, -7.25, 1e-40, 3e38 };
  static const int64_t in[] = { 0, -1, 1, INT32_MAX, INT32_MIN, 7, -7, INT64_MAX, INT64_MIN };
  const bool fp = dt == BEXT_F32 || dt == BEXT_F64;
  double *v = malloc(sizeof(double) * (size_t)n);
  int64_t *w = malloc(sizeof(int64_t) * (size_t)n);
  uint64_t s = seed;
  for (int64_t i = 0; i < n; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t r = s >> 33;
    bool edge = r % 5 == 0;
    v[i] = edge ? fl[(r >> 4) % 11] : ((double)(r % 2001) - 1000) / 8;
    w[i] = edge ? in[(r >> 4) % (dt == BEXT_I32 ? 7 : 9)] : (int64_t)(r % 2001) - 1000;
  }
  bext_tensor *t = fp ? bext_cast(bext_from_data(v, BEXT_F64, &n, 1, flex()), dt)
                      : bext_cast(bext_from_data(w, BEXT_I64, &n, 1, flex()), dt);
  free(v);
  free(w);
  cr_assert_not_null(t, "%s", bext_last_error());
  return t;
}

#define N_OPS 31
/* Op `which` on a and b (both consumed; b unused by unary and scalar ops). */
static bext_tensor *op_of(int which, bext_tensor *a, bext_tensor *b) {
  if (which >= 8) bext_release(b);
  switch (which) {
  case 0: return bext_add(a, b);
  case 1: return bext_sub(a, b);
  case 2: return bext_mul(a, b);
  case 3: return bext_div(a, b);
  case 4: return bext_max(a, b);
  case 5: return bext_min(a, b);
  case 6: return bext_lt(a, b);
  case 7: return bext_rem(a, b);
  case 8: return bext_add_scalar(a, 3);
  case 9: return bext_mul_scalar(a, 1e-3);   /* f32: the widening path */
  case 10: return bext_div_scalar(a, -7);
  case 11: return bext_max_scalar(a, 0.5);
  case 12: return bext_ge_scalar(a, 1);
  case 13: return bext_neg(a);
  case 14: return bext_abs(a);
  case 15: return bext_relu(a);
  case 16: return bext_sqrt(a);
  case 17: return bext_rsqrt(a);
  case 18: return bext_floor(a);
  case 19: return bext_ceil(a);
  case 20: return bext_clamp(a, -3, 100);
  case 21: return bext_sign(a);
  case 22: return bext_exp(a);
  case 23: return bext_round(a);
  case 24: return bext_powi(a, 3);
  /* casts (contiguous ones stream their blocks; a transposed input keeps
   * its layout) */
  case 25: return bext_cast(a, BEXT_F32);
  case 26: return bext_cast(a, BEXT_I32);
  case 27: return bext_cast(a, BEXT_F64);
  case 28: return bext_cast(a, BEXT_I64);
  case 29: return bext_cast(a, BEXT_F16);
  default: return bext_cast(a, BEXT_BOOL);
  }
}

/* Ops the dtype has (ints: no sqrt/rsqrt/floor/ceil/exp/round/powi). */
static bool has_op(bext_dtype dt, int which) {
  bool fp = dt == BEXT_F32 || dt == BEXT_F64;
  return fp || !(which == 16 || which == 17 || which == 18 || which == 19 || which == 22 || which == 23 ||
                which == 24);
}

/* Runs `which` twice on the same operands, streamed and not, and compares
 * the bytes.  form 0: a and b of shape [n]; 1: a [rows, n] and b a row
 * [n] broadcast (rows of odd length: unaligned block starts); 2: a
 * transposed [rows, n] view (the tile walk). */
static void check(bext_dtype dt, int which, int form, int64_t n, int64_t rows) {
  int64_t sh[2] = { rows, n }, tr[2] = { n, rows };
  bext_tensor *a, *b;
  if (form == 0) {
    a = values(dt, n, 1);
    b = values(dt, n, 2);
  } else if (form == 1) {
    a = bext_reshape(values(dt, rows * n, 1), sh, 2);
    b = values(dt, n, 2);
  } else {
    a = bext_swap_dims(bext_reshape(values(dt, rows * n, 1), tr, 2), 0, 1);
    b = bext_reshape(values(dt, rows * n, 2), sh, 2);
  }
  cr_assert(a && b, "%s", bext_last_error());
  bext_tensor *r[2];
  const size_t lim[2] = { SIZE_MAX, 0 };
  for (int s = 0; s < 2; s++) {
    size_t old = bxfx_stream_set_min(lim[s]);
    r[s] = op_of(which, bext_retain(a), bext_retain(b));
    bxfx_stream_set_min(old);
    cr_assert_not_null(r[s], "op %d %s: %s", which, bext_dtype_name(dt), bext_last_error());
  }
  bext_release(a);
  bext_release(b);
  int64_t m = bext_numel(r[0]);
  cr_assert_eq(m, bext_numel(r[1]));
  size_t bytes = (size_t)m * bext_dtype_size(bext_dtype_of(r[0]));
  char *g = malloc(bytes + 1), *w = malloc(bytes + 1);
  cr_assert(bext_read(r[1], g, bytes) && bext_read(r[0], w, bytes));
  if (memcmp(g, w, bytes)) {
    size_t es = bext_dtype_size(bext_dtype_of(r[0]));
    size_t i = 0;
    while (!memcmp(g + i, w + i, es)) i += es;
    cr_assert_fail("op %d on %s form %d [%lld x %lld]: streamed element %zu differs", which, bext_dtype_name(dt),
                   form, (long long)rows, (long long)n, i / es);
  }
  free(g);
  free(w);
  bext_release(r[0]);
  bext_release(r[1]);
}

Test(flex_stream, streamed_outputs_equal_cached_ones) {
  static const bext_dtype dts[] = { BEXT_F32, BEXT_F64, BEXT_I32, BEXT_I64 };
  /* vector-width edges, a scalar tail, a long row, two threads' worth */
  static const int64_t ns[] = { 1, 7, 8, 9, 31, 33, 1037, 70001 };
  for (size_t d = 0; d < 4; d++)
    for (int which = 0; which < N_OPS; which++) {
      if (!has_op(dts[d], which)) continue;
      for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) check(dts[d], which, 0, ns[k], 1);
      check(dts[d], which, 1, 7, 3);
      check(dts[d], which, 1, 33, 5);
      check(dts[d], which, 1, 515, 300);    /* unaligned rows, threaded */
      check(dts[d], which, 2, 257, 64);     /* tile walk, ragged last tile */
      check(dts[d], which, 2, 1024, 96);    /* tile walk, threaded */
    }
}

/* fill8 (zeros streamed past the threshold, other fills stored): every
 * head alignment of o, lengths around both vector widths, streamed and
 * not, against the pattern byte by byte, bytes outside untouched. */
Test(flex_stream, fill8_every_head_and_tail) {
  const struct bxfx_kernels *ks[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  static const uint64_t pats[] = { 0, 0x0123456789abcdefull, 0x3ff0000000000000ull, 0xfffffffdfffffffdull };
  _Alignas(64) unsigned char dst[640], want[640];
  for (int v = 0; v < 2; v++) {
    if (v == 0 && bxfx_kern() != &bxfx_kern_avx2) continue;
    for (size_t p = 0; p < sizeof pats / sizeof pats[0]; p++)
      for (int stream = 0; stream < 2; stream++)
        for (size_t off = 0; off < 64; off++)
          for (size_t bytes = 0; bytes <= 300; bytes++) {
            memset(dst, 0xa5, sizeof dst);
            memset(want, 0xa5, sizeof want);
            for (size_t j = 0; j < bytes; j++) want[off + j] = (unsigned char)(pats[p] >> (8 * (j % 8)));
            ks[v]->fill8(dst + off, bytes, pats[p], stream);
            bxfx_stream_fence();
            cr_assert(!memcmp(dst, want, sizeof dst), "%s fill8 %llx: offset %zu, %zu bytes, stream %d", ks[v]->isa,
                      (unsigned long long)pats[p], off, bytes, stream);
          }
  }
}

/* zeros, ones and full streamed (threshold 0: zero patterns stream) and
 * not (SIZE_MAX): the same bytes, every dtype width, odd lengths, two
 * threads' worth; -0.0 is not a zero pattern. */
Test(flex_stream, fills_streamed_equal_stored) {
  static const bext_dtype dts[] = { BEXT_F32, BEXT_F64, BEXT_F16, BEXT_BF16, BEXT_I32, BEXT_I64, BEXT_BOOL, BEXT_U8 };
  static const int64_t ns[] = { 1, 7, 8, 9, 31, 33, 1037, 300007 };
  static const double vals[] = { 0.0, -0.0, 1.0, -3.0 };
  for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
      for (size_t w = 0; w < 5; w++) {
        bext_tensor *r[2];
        const size_t lim[2] = { SIZE_MAX, 0 };
        for (int s = 0; s < 2; s++) {
          size_t old = bxfx_stream_set_min(lim[s]);
          r[s] = w == 4 ? bext_zeros(&ns[k], 1, dts[d], flex()) : bext_full(&ns[k], 1, vals[w], dts[d], flex());
          bxfx_stream_set_min(old);
          cr_assert_not_null(r[s], "%s", bext_last_error());
        }
        size_t es = bext_dtype_size(dts[d]), bytes = (size_t)ns[k] * es;
        char *g = malloc(bytes), *h = malloc(bytes), e[8] = { 0 };
        cr_assert(bext_read(r[1], g, bytes) && bext_read(r[0], h, bytes));
        /* element 0 of the stored one is the reference's element: all equal it */
        memcpy(e, h, es);
        for (size_t i = 0; i < bytes; i += es)
          cr_assert(!memcmp(g + i, e, es) && !memcmp(h + i, e, es), "fill %zu %s [%lld]: element %zu differs", w,
                    bext_dtype_name(dts[d]), (long long)ns[k], i / es);
        if (w == 0 || w == 4)
          for (size_t i = 0; i < es; i++) cr_assert_eq(e[i], 0, "zeros %s", bext_dtype_name(dts[d]));
        free(g);
        free(h);
        bext_release(r[0]);
        bext_release(r[1]);
      }
}

/* select streamed (threshold 0) and not: the same bytes, and each output
 * row the source row its index names.  Rows are whole contiguous slices
 * when the dims before dim are 1s ([R, C] by dim 0, [1, R, C] by dim 1:
 * the streamed path); [R, C] by dim 1 and a transposed source copy
 * strided either way.  Repeated indices, odd row lengths (unaligned
 * output rows), enough rows for two threads. */
Test(flex_stream, select_streamed_equals_stored) {
  static const bext_dtype dts[] = { BEXT_F32, BEXT_F64, BEXT_BF16, BEXT_I64, BEXT_BOOL };
  static const int64_t cs[] = { 1, 7, 33, 1037 };
  for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++)
      for (int form = 0; form < 4; form++) {
        const int64_t R = 40, C = cs[c], K = 23;
        int64_t idx[23];
        for (int64_t k = 0; k < K; k++) idx[k] = (k * 17 + 3) % R;
        idx[5] = idx[4];   /* a repeat */
        bext_tensor *a = values(dts[d], R * C, 3);
        int dim = 0;
        if (form == 0) a = bext_reshape(a, (int64_t[]){ R, C }, 2);
        else if (form == 1) a = bext_reshape(a, (int64_t[]){ 1, R, C }, 3), dim = 1;
        else if (form == 2) a = bext_reshape(a, (int64_t[]){ C, R }, 2), dim = 1;
        else a = bext_swap_dims(bext_reshape(a, (int64_t[]){ C, R }, 2), 0, 1);
        cr_assert_not_null(a, "%s", bext_last_error());
        bext_tensor *ix = bext_from_data(idx, BEXT_I64, &K, 1, flex());
        bext_tensor *r[2];
        const size_t lim[2] = { SIZE_MAX, 0 };
        for (int s = 0; s < 2; s++) {
          size_t old = bxfx_stream_set_min(lim[s]);
          r[s] = bext_select(bext_retain(a), dim, bext_retain(ix));
          bxfx_stream_set_min(old);
          cr_assert_not_null(r[s], "%s", bext_last_error());
        }
        /* the reference: the rows (or columns) the indices name, read back */
        bext_tensor *ac = bext_contiguous(bext_retain(a));
        cr_assert_not_null(ac, "%s", bext_last_error());
        const size_t es = bext_dtype_size(dts[d]), bytes = (size_t)(K * C) * es;
        char *src = malloc((size_t)(R * C) * es), *g = malloc(bytes), *h = malloc(bytes), *w = malloc(bytes);
        cr_assert(bext_read(ac, src, (size_t)(R * C) * es));
        for (int64_t k = 0; k < K; k++)
          for (int64_t j = 0; j < C; j++) {
            /* forms 0, 1, 3: a is [.., R, C] read row idx[k]; form 2: [C, R] by column */
            int64_t from = form == 2 ? j * R + idx[k] : idx[k] * C + j, to = form == 2 ? j * K + k : k * C + j;
            memcpy(w + to * (int64_t)es, src + from * (int64_t)es, es);
          }
        cr_assert(bext_read(r[0], h, bytes) && bext_read(r[1], g, bytes));
        cr_assert(!memcmp(h, w, bytes), "select %s form %d C %lld: stored rows differ from the source's",
                  bext_dtype_name(dts[d]), form, (long long)C);
        cr_assert(!memcmp(g, w, bytes), "select %s form %d C %lld: streamed rows differ from the source's",
                  bext_dtype_name(dts[d]), form, (long long)C);
        free(src);
        free(g);
        free(h);
        free(w);
        bext_release(ac);
        bext_release(ix);
        bext_release(a);
        bext_release(r[0]);
        bext_release(r[1]);
      }
}

/* Layout copies streamed (threshold 0) and not: the same bytes.  Their
 * unit-stride runs go out by stream_out: cat along either dim (rows of
 * one part, then the other), repeat_dim, slice_assign (the copy of t,
 * then the slice), contiguous of a narrow and of an expand; a transpose
 * (whole tile rows streamed, full 64x64 tiles and ragged edges); odd row
 * lengths (unaligned runs), two threads' worth. */
Test(flex_stream, layout_copies_streamed_equal_stored) {
  static const bext_dtype dts[] = { BEXT_F32, BEXT_F64, BEXT_BF16, BEXT_I64, BEXT_BOOL };
  static const int64_t cs[] = { 1, 7, 33, 1037 };
  for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++)
      for (int which = 0; which < 7; which++) {
        const int64_t R = 300, C = cs[c];
        bext_tensor *r[2];
        const size_t lim[2] = { SIZE_MAX, 0 };
        for (int s = 0; s < 2; s++) {
          size_t old = bxfx_stream_set_min(lim[s]);
          bext_tensor *a = bext_reshape(values(dts[d], R * C, 5), (int64_t[]){ R, C }, 2);
          bext_tensor *b = bext_reshape(values(dts[d], R * C, 6), (int64_t[]){ R, C }, 2);
          cr_assert(a && b, "%s", bext_last_error());
          bext_tensor *ab[2] = { a, b };
          switch (which) {
          case 0: r[s] = bext_cat(ab, 2, 0); break;
          case 1: r[s] = bext_cat(ab, 2, 1); break;
          case 2: bext_release(b); r[s] = bext_repeat_dim(a, 0, 3); break;
          case 3:
            r[s] = bext_slice_assign(a, (int64_t[]){ 7, 0 }, (int64_t[]){ 107, C }, 2,
                                     bext_narrow(b, 0, 50, 100));
            break;
          case 4: bext_release(b); r[s] = bext_contiguous(bext_narrow(a, 0, 3, R - 5)); break;
          case 5: bext_release(b); r[s] = bext_contiguous(bext_swap_dims(a, 0, 1)); break;
          default:
            bext_release(b);
            r[s] = bext_contiguous(bext_expand(bext_narrow(a, 0, 2, 1), (int64_t[]){ 4, R, C }, 3));
            break;
          }
          bxfx_stream_set_min(old);
          cr_assert_not_null(r[s], "layout %d %s: %s", which, bext_dtype_name(dts[d]), bext_last_error());
        }
        const size_t bytes = (size_t)bext_numel(r[0]) * bext_dtype_size(dts[d]);
        cr_assert_eq(bext_numel(r[0]), bext_numel(r[1]));
        char *g = malloc(bytes), *h = malloc(bytes);
        cr_assert(bext_read(r[0], h, bytes) && bext_read(r[1], g, bytes));
        cr_assert(!memcmp(g, h, bytes), "layout copy %d %s C %lld: streamed bytes differ", which,
                  bext_dtype_name(dts[d]), (long long)C);
        free(g);
        free(h);
        bext_release(r[0]);
        bext_release(r[1]);
      }
}
