/* test_flex_layout.c — Flex's elementwise ops keep a dense permuted layout
 * (flex_elem.c, keeps_layout): when every tensor operand of a large op is
 * the same transposed or permuted view of a whole buffer, the output takes
 * that layout and the op runs over the buffers as flat arrays.  Checked
 * here: the output really has the operands' strides, its values equal the
 * row-major path's (the same op on bext_contiguous copies) at odd sizes,
 * with NaN, infinities and signed zeros in the data, for unary, scalar,
 * comparison, integer and two-operand ops; and the cases that must not
 * keep a layout (mixed layouts, views that skip elements, small tensors)
 * still give the row-major values in a row-major output.  And the
 * transposed copy (bext_contiguous of a transpose: 8x8 register blocks
 * of 4-, 2- and 1-byte elements plus ragged edges) puts every element,
 * bits and all, in its place, also from offset views of 3-d tensors. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bext/bext.h"

static const bext_device *flex(void) {
  const bext_device *d = bext_device_get("flex");
  cr_assert_not_null(d, "%s", bext_last_error());
  return d;
}

/* A rows x cols f32 (or i32) tensor with edge values sprinkled in. */
static bext_tensor *matrix(int64_t rows, int64_t cols, bext_dtype dt, unsigned seed) {
  int64_t n = rows * cols;
  float *f = malloc(sizeof(float) * (size_t)n);
  int32_t *v = malloc(sizeof(int32_t) * (size_t)n);
  uint64_t s = seed;
  for (int64_t i = 0; i < n; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t r = s >> 33;
    static const float edge[] = { NAN, INFINITY, -INFINITY, 0.0f, -0.0f };
    f[i] = r % 89 == 0 ? edge[(r >> 8) % 5] : ((float)(r % 2001) - 1000) / 64;
    v[i] = (int32_t)((int64_t)(r % 4001) - 2000 + (r % 97 == 0 ? INT32_MAX - 3000 : 0));   /* near the wrap */
  }
  bext_tensor *t = bext_from_data(dt == BEXT_F32 ? (void *)f : (void *)v, dt, (int64_t[]){ rows, cols }, 2, flex());
  free(f);
  free(v);
  cr_assert_not_null(t, "%s", bext_last_error());
  return t;
}

/* t's values row-major as bytes (t borrowed). */
static void *bytes_of(bext_tensor *t, size_t *size) {
  *size = (size_t)bext_numel(t) * bext_dtype_size(bext_dtype_of(t));
  void *p = malloc(*size ? *size : 1);
  cr_assert(bext_read(t, p, *size), "%s", bext_last_error());
  return p;
}

/* N_OPS: the ops every float test runs; the bool ones after it. */
enum { UNARY_EXP, UNARY_NEG, SCALAR_MUL, SCALAR_ADD_INEXACT, CMP_GT, BIN_ADD, BIN_MAX, N_OPS,
       BOOL_NOT = N_OPS, BOOL_XOR, CMP_LT, N_ALL };
static const char *const op_name[N_ALL] = { "exp", "neg", "mul_scalar", "add_scalar(0.1)", "gt_scalar", "add",
                                            "max", "not", "xor", "lt" };

static bext_tensor *apply(int op, bext_tensor *a, bext_tensor *b) {
  switch (op) {
  case UNARY_EXP: return bext_exp(a);
  case UNARY_NEG: return bext_neg(a);
  case SCALAR_MUL: return bext_mul_scalar(a, 3.0);
  case SCALAR_ADD_INEXACT: return bext_add_scalar(a, 0.1);   /* f32 cannot hold it: the f64 path */
  case CMP_GT: return bext_gt_scalar(a, 1.5);
  case BIN_ADD: return bext_add(a, b);
  case BOOL_NOT: return bext_not(a);
  case BOOL_XOR: return bext_xor(a, b);
  case CMP_LT: return bext_lt(a, b);
  default: return bext_max(a, b);
  }
}

/* Compares op on the views a (and b) with op on their row-major copies:
 * equal bits (NaN: any NaN), exp within 4 ulps (a lane's position in a
 * vector may differ between the two walks).  keep: the result must have
 * a's strides; otherwise it must be row-major. */
static void check(int op, bext_tensor *a, bext_tensor *b, bool keep) {
  bext_tensor *got = apply(op, bext_retain(a), b ? bext_retain(b) : NULL);
  bext_tensor *want = apply(op, bext_contiguous(bext_retain(a)), b ? bext_contiguous(bext_retain(b)) : NULL);
  cr_assert(got && want, "%s: %s", op_name[op], bext_last_error());
  const int r = bext_rank(a);
  if (keep) {
    cr_expect(!bext_is_contiguous(got), "%s: a kept layout is not row-major", op_name[op]);
    for (int d = 0; d < r; d++)
      if (bext_shape(a)[d] != 1)
        cr_expect_eq(bext_strides(got)[d], bext_strides(a)[d], "%s: stride %d is %ld, the input's %ld", op_name[op],
                     d, (long)bext_strides(got)[d], (long)bext_strides(a)[d]);
  } else {
    cr_expect(bext_is_contiguous(got), "%s: output should be row-major here", op_name[op]);
  }
  size_t ng, nw;
  unsigned char *g = bytes_of(got, &ng), *w = bytes_of(want, &nw);
  cr_assert_eq(ng, nw);
  bext_dtype dt = bext_dtype_of(got);
  int bad = 0;
  if (dt == BEXT_F32) {
    const float *gf = (const float *)g, *wf = (const float *)w;
    for (size_t i = 0; i < ng / 4 && bad < 3; i++) {
      bool ok = (isnan(gf[i]) && isnan(wf[i])) || memcmp(&gf[i], &wf[i], 4) == 0 ||
                (op == UNARY_EXP && fabsf(gf[i] - wf[i]) <= 4 * 1.2e-7f * fabsf(wf[i]));
      if (!ok) {
        cr_expect_fail("%s [%zu]: %.9g, row-major %.9g", op_name[op], i, gf[i], wf[i]);
        bad++;
      }
    }
  } else {
    cr_expect(memcmp(g, w, ng) == 0, "%s: values differ from the row-major path", op_name[op]);
  }
  free(g);
  free(w);
  bext_release(got);
  bext_release(want);
}

Test(flex_layout, transposed_operands_keep_their_layout) {
  bext_tensor *x = bext_transpose(matrix(67, 131, BEXT_F32, 1));   /* 131 x 67 view */
  bext_tensor *y = bext_transpose(matrix(67, 131, BEXT_F32, 2));
  for (int op = 0; op < N_OPS; op++) check(op, x, op >= BIN_ADD ? y : NULL, true);
  bext_release(x);
  bext_release(y);
}

Test(flex_layout, integer_and_permuted_views) {
  bext_tensor *x = bext_transpose(matrix(45, 77, BEXT_I32, 3));
  check(SCALAR_MUL, x, NULL, true);   /* wrapping i32 product */
  check(UNARY_NEG, x, NULL, true);
  bext_release(x);
  /* [6, 50, 23] viewed as (2, 0, 1): a 3-D permutation of a whole buffer */
  bext_tensor *base = bext_reshape(matrix(300, 23, BEXT_F32, 4), (int64_t[]){ 6, 50, 23 }, 3);
  bext_tensor *p = bext_permute(base, (int[]){ 2, 0, 1 }, 3);
  cr_assert_not_null(p, "%s", bext_last_error());
  bext_tensor *q = bext_permute(bext_reshape(matrix(300, 23, BEXT_F32, 5), (int64_t[]){ 6, 50, 23 }, 3),
                                (int[]){ 2, 0, 1 }, 3);
  check(UNARY_EXP, p, NULL, true);
  check(BIN_MAX, p, q, true);
  bext_release(p);
  bext_release(q);
}

/* The ops that run at their own width (flex_elem.c, native_width) keep
 * the layout by the same rule: i32 and i64 arithmetic, unary and
 * comparisons, bool logic; a row broadcast against a transposed operand
 * stays row-major. */
Test(flex_layout, native_width_ops_keep_the_layout) {
  bext_tensor *x = bext_transpose(matrix(45, 77, BEXT_I32, 11)), *y = bext_transpose(matrix(45, 77, BEXT_I32, 12));
  check(BIN_ADD, x, y, true);   /* wrapping i32 sum */
  check(BIN_MAX, x, y, true);
  check(CMP_LT, x, y, true);
  bext_tensor *x64 = bext_transpose(bext_cast(matrix(45, 77, BEXT_I32, 13), BEXT_I64));
  bext_tensor *y64 = bext_transpose(bext_cast(matrix(45, 77, BEXT_I32, 14), BEXT_I64));
  check(UNARY_NEG, x64, NULL, true);
  check(SCALAR_MUL, x64, NULL, true);
  check(CMP_LT, x64, y64, true);
  bext_tensor *p = bext_transpose(bext_gt_scalar(matrix(45, 77, BEXT_I32, 15), 0));
  bext_tensor *q = bext_transpose(bext_gt_scalar(matrix(45, 77, BEXT_I32, 16), 0));
  cr_assert(p && q, "%s", bext_last_error());
  check(BOOL_NOT, p, NULL, true);
  check(BOOL_XOR, p, q, true);
  bext_tensor *row = bext_gt_scalar(matrix(1, 45, BEXT_I32, 17), 0);
  check(BOOL_XOR, p, row, false);
  bext_release(x);
  bext_release(y);
  bext_release(x64);
  bext_release(y64);
  bext_release(p);
  bext_release(q);
  bext_release(row);
}

Test(flex_layout, other_layouts_stay_row_major) {
  bext_tensor *x = bext_transpose(matrix(67, 131, BEXT_F32, 6));
  bext_tensor *c = matrix(131, 67, BEXT_F32, 7);
  check(BIN_ADD, x, c, false);   /* mixed layouts: row-major */
  check(BIN_ADD, c, x, false);
  /* views that skip elements: a slice of the transpose, the transpose of a narrowed buffer */
  bext_tensor *s = bext_slice(bext_retain(x), (int64_t[]){ 0, 0 }, (int64_t[]){ 130, 67 }, 2);
  cr_assert_not_null(s, "%s", bext_last_error());
  bext_tensor *sv = bext_transpose(bext_narrow(matrix(67, 262, BEXT_F32, 8), 1, 0, 131));
  check(UNARY_EXP, sv, NULL, false);
  check(SCALAR_MUL, s, NULL, false);
  /* small: below the size where a layout is worth keeping */
  bext_tensor *t = bext_transpose(matrix(5, 7, BEXT_F32, 9));
  check(UNARY_EXP, t, NULL, false);
  bext_release(x);
  bext_release(c);
  bext_release(s);
  bext_release(sv);
  bext_release(t);
}

/* bext_contiguous of transposes whose sides are no multiple of the
 * register blocks (16x16 bytes, 8x8 of 2 and 4 bytes, 4x4 of 8) or the
 * 64-wide tiles (full tiles staged in a buffer, ragged ones by blocks and
 * element by element), or exactly one tile, every element size (f32 with
 * NaNs, i32, f16, bf16, bool, u8, f64, i64):
 * element (i, j) of the copy is (j, i) of the source, compared as bits. */
Test(flex_layout, transposed_copies_put_every_element_in_place) {
  const int64_t sides[][2] = { { 67, 131 }, { 8, 8 }, { 33, 40 }, { 257, 9 }, { 64, 64 }, { 130, 200 }, { 200, 65 },
                                { 40, 33 }, { 32, 71 }, { 128, 64 }, { 65, 199 }, { 137, 73 }, { 192, 129 } };
  const bext_dtype dts[] = { BEXT_F32, BEXT_I32, BEXT_F64, BEXT_I64, BEXT_BOOL, BEXT_F16, BEXT_BF16, BEXT_U8 };
  for (size_t si = 0; si < sizeof sides / sizeof sides[0]; si++)
    for (size_t di = 0; di < sizeof dts / sizeof dts[0]; di++) {
      const int64_t R = sides[si][0], C = sides[si][1];
      bext_dtype dt = dts[di];
      const bool ints = dt == BEXT_I32 || dt == BEXT_I64;
      bext_tensor *src = matrix(R, C, ints ? BEXT_I32 : BEXT_F32, 10 + (unsigned)si);
      if (dt != BEXT_F32 && dt != BEXT_I32) src = bext_cast(src, dt);
      cr_assert_not_null(src, "%s", bext_last_error());
      bext_tensor *c = bext_contiguous(bext_transpose(bext_retain(src)));
      cr_assert_not_null(c, "%s", bext_last_error());
      cr_expect(bext_is_contiguous(c));
      size_t ns, nc, es = bext_dtype_size(dt);
      unsigned char *s = bytes_of(src, &ns), *t = bytes_of(c, &nc);
      cr_assert_eq(ns, nc);
      int bad = 0;
      for (int64_t i = 0; i < C && bad < 3; i++)
        for (int64_t j = 0; j < R && bad < 3; j++)
          if (memcmp(t + (size_t)(i * R + j) * es, s + (size_t)(j * C + i) * es, es) != 0) {
            cr_expect_fail("%ldx%ld dtype %d: copy[%ld][%ld] is not source[%ld][%ld]", (long)R, (long)C, (int)dt,
                           (long)i, (long)j, (long)j, (long)i);
            bad++;
          }
      free(s);
      free(t);
      bext_release(src);
      bext_release(c);
    }
}

/* The same through views with an offset and a third dim, for every
 * element size (8, 4, 2, 1): a slice starting inside each of its last
 * two dims, transposed, copied; 41 columns (under one tile: element by
 * element) and 141 (two full tiles and a ragged one, rows 134 the same). */
static void offset_3d_transpose(int64_t C, int64_t C1, int64_t R, int64_t R1) {
  const bext_dtype dts[] = { BEXT_F16, BEXT_BF16, BEXT_U8, BEXT_BOOL, BEXT_I32, BEXT_F32, BEXT_F64, BEXT_I64 };
  enum { B = 3, R0 = 3, C0 = 2 };
  for (size_t di = 0; di < sizeof dts / sizeof dts[0]; di++) {
    bext_dtype dt = dts[di];
    const bool ints = dt == BEXT_I32 || dt == BEXT_I64;
    bext_tensor *src = matrix(B * R, C, ints ? BEXT_I32 : BEXT_F32, 40 + (unsigned)di);
    if (dt != BEXT_F32 && dt != BEXT_I32) src = bext_cast(src, dt);
    src = bext_reshape(src, (int64_t[]){ B, R, C }, 3);
    cr_assert_not_null(src, "%s", bext_last_error());
    bext_tensor *v = bext_slice(bext_retain(src), (int64_t[]){ 0, R0, C0 }, (int64_t[]){ B, R1, C1 }, 3);
    bext_tensor *c = bext_contiguous(bext_swap_dims(v, 1, 2));
    cr_assert_not_null(c, "%s", bext_last_error());
    size_t ns, nc, es = bext_dtype_size(dt);
    unsigned char *s = bytes_of(src, &ns), *t = bytes_of(c, &nc);
    cr_assert_eq(nc, (size_t)(B * (R1 - R0) * (C1 - C0)) * es);
    int bad = 0;
    for (int64_t b = 0; b < B; b++)
      for (int64_t i = 0; i < C1 - C0 && bad < 3; i++)
        for (int64_t j = 0; j < R1 - R0 && bad < 3; j++) {
          size_t to = (size_t)((b * (C1 - C0) + i) * (R1 - R0) + j) * es;
          size_t from = (size_t)((b * R + R0 + j) * C + C0 + i) * es;
          if (memcmp(t + to, s + from, es) != 0) {
            cr_expect_fail("dtype %d: copy[%ld][%ld][%ld] is not the view's [%ld][%ld][%ld]", (int)dt, (long)b,
                           (long)i, (long)j, (long)b, (long)j, (long)i);
            bad++;
          }
        }
    free(s);
    free(t);
    bext_release(src);
    bext_release(c);
  }
}

Test(flex_layout, transposed_copies_of_offset_3d_views) {
  offset_3d_transpose(45, 43, 70, 67);
  offset_3d_transpose(150, 143, 140, 137);
}
