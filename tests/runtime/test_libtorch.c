/* test_libtorch.c — the LibTorch backend (libtorch:cpu) where ATen's
 * semantics differ from bext's, on the values the conformance matrix does
 * not generate: integer division and remainder by 0 and -1 (INT_MIN
 * included), negative integer powers, NaN and out-of-range float->int
 * casts, f16 ops ATen's CPU kernels lack, integer mean, sign(NaN), scalar
 * comparisons and clamp bounds ATen would round, wrap or promote.  Each result
 * is checked against hand-computed values AND against the NdArray
 * reference.  Also: operands share memory with ATen (views are views),
 * the random ops draw bext's numbers, and libtorch:cuda is refused
 * plainly.  Without libtorch in the build every test reports SKIPPED
 * (ctest shows them skipped, not passed). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "bext/bext.h"

#define SKIP_MSG "SKIPPED: libtorch is not in this build (libtorch-dev not found)"

static const bext_device *lt, *nd;

static void setup(void) {
#ifndef BEXT_HAVE_LIBTORCH
  /* printed too: Criterion shows skip reasons only with --verbose, and
   * ctest's SKIP_REGULAR_EXPRESSION looks for this line */
  fprintf(stderr, "%s\n", SKIP_MSG);
  cr_skip_test(SKIP_MSG);
#endif
  lt = bext_device_get("libtorch:cpu");
  cr_assert(lt && bext_device_available(lt), "%s", bext_last_error());
  nd = bext_device_get("ndarray");
  cr_assert_not_null(nd);
}

static bext_tensor *make(const bext_device *d, bext_dtype dt, const void *v, int64_t n) {
  bext_tensor *t = bext_from_data(v, dt, &n, 1, d);
  cr_assert_not_null(t, "%s", bext_last_error());
  return t;
}

/* Reads t (consumed) as n elements of size es. */
static void take(bext_tensor *t, void *out, size_t bytes) {
  cr_assert_not_null(t, "%s", bext_last_error());
  cr_assert(bext_read(t, out, bytes), "%s", bext_last_error());
  bext_release(t);
}

typedef bext_tensor *(*bin_fn)(bext_tensor *, bext_tensor *);

/* op(a, b) on libtorch and on ndarray, both read back as int32. */
static void both_i32(bin_fn f, const int32_t *a, const int32_t *b, int n, int32_t *got, int32_t *ref) {
  take(f(make(lt, BEXT_I32, a, n), make(lt, BEXT_I32, b, n)), got, (size_t)n * 4);
  take(f(make(nd, BEXT_I32, a, n), make(nd, BEXT_I32, b, n)), ref, (size_t)n * 4);
}

Test(libtorch, integer_division_by_zero_and_minus_one, .init = setup) {
  int32_t a[] = {7, -7, INT32_MIN, 5, 0, -9}, b[] = {0, 2, -1, -1, 0, 4};
  int32_t got[6], ref[6];
  int32_t div[] = {0, -3, INT32_MIN, -5, 0, -2};   /* trunc; /0 = 0; INT_MIN/-1 wraps */
  both_i32(bext_div, a, b, 6, got, ref);
  for (int i = 0; i < 6; i++) {
    cr_expect_eq(got[i], div[i], "div[%d]: %d", i, got[i]);
    cr_expect_eq(got[i], ref[i], "div[%d] vs ndarray", i);
  }
  int32_t rem[] = {0, 1, 0, 0, 0, 3};   /* floored; %0 = 0; %-1 = 0 */
  both_i32(bext_rem, a, b, 6, got, ref);
  for (int i = 0; i < 6; i++) {
    cr_expect_eq(got[i], rem[i], "rem[%d]: %d", i, got[i]);
    cr_expect_eq(got[i], ref[i], "rem[%d] vs ndarray", i);
  }
  /* the scalar forms, u8 too */
  uint8_t u[] = {9, 200, 0}, ug[3];
  take(bext_div_scalar(make(lt, BEXT_U8, u, 3), 0.0), ug, 3);
  for (int i = 0; i < 3; i++) cr_expect_eq(ug[i], 0, "u8 / 0 = 0");
  take(bext_rem_scalar(make(lt, BEXT_I32, a, 6), -1.0), got, 24);
  for (int i = 0; i < 6; i++) cr_expect_eq(got[i], 0, "x %% -1 = 0");
}

Test(libtorch, negative_integer_powers, .init = setup) {
  int32_t a[] = {2, 1, -1, -1, 0, 3}, e[] = {-1, -3, -3, -2, -1, 2};
  int32_t want[] = {0, 1, -1, 1, 0, 9}, got[6], ref[6];
  both_i32(bext_pow, a, e, 6, got, ref);
  for (int i = 0; i < 6; i++) {
    cr_expect_eq(got[i], want[i], "pow[%d]: %d", i, got[i]);
    cr_expect_eq(got[i], ref[i], "pow[%d] vs ndarray", i);
  }
  take(bext_pow_scalar(make(lt, BEXT_I32, a, 6), -1.0), got, 24);
  int32_t want_s[] = {0, 1, -1, -1, 0, 0};
  for (int i = 0; i < 6; i++) cr_expect_eq(got[i], want_s[i], "pow_scalar[%d]: %d", i, got[i]);
}

Test(libtorch, float_to_int_casts_saturate, .init = setup) {
  float v[] = {NAN, 1e20f, -1e20f, 2.7f, -2.7f, INFINITY};
  int32_t i32[6], want32[] = {0, INT32_MAX, INT32_MIN, 2, -2, INT32_MAX};
  take(bext_cast(make(lt, BEXT_F32, v, 6), BEXT_I32), i32, sizeof i32);
  for (int i = 0; i < 6; i++) cr_expect_eq(i32[i], want32[i], "i32[%d]: %d", i, i32[i]);
  uint8_t u8[6], want8[] = {0, 255, 0, 2, 0, 255};
  take(bext_cast(make(lt, BEXT_F32, v, 6), BEXT_U8), u8, sizeof u8);
  for (int i = 0; i < 6; i++) cr_expect_eq(u8[i], want8[i], "u8[%d]: %d", i, u8[i]);
  int64_t i64[6];
  take(bext_cast(make(lt, BEXT_F32, v, 6), BEXT_I64), i64, sizeof i64);
  cr_expect(i64[0] == 0 && i64[1] == INT64_MAX && i64[2] == INT64_MIN && i64[3] == 2);
}

/* f16 ops ATen 1.13 refuses on the CPU ("not implemented for 'Half'"):
 * bext computes them in f32 and rounds once, like NdArray. */
Test(libtorch, half_ops_aten_lacks, .init = setup) {
  float v[] = {-1.5f, -0.25f, 0.0f, 0.5f, 1.0f, 2.0f};
  bext_tensor *(*un[])(bext_tensor *) = {bext_exp, bext_erf, bext_tanh};
  const char *names[] = {"exp", "erf", "tanh"};
  for (int k = 0; k < 3; k++) {
    float got[6], ref[6];
    take(bext_cast(un[k](bext_cast(make(lt, BEXT_F32, v, 6), BEXT_F16)), BEXT_F32), got, sizeof got);
    take(bext_cast(un[k](bext_cast(make(nd, BEXT_F32, v, 6), BEXT_F16)), BEXT_F32), ref, sizeof ref);
    for (int i = 0; i < 6; i++) cr_expect_eq(got[i], ref[i], "%s f16[%d]: %g vs %g", names[k], i, got[i], ref[i]);
  }
  float got[6], ref[6];
  take(bext_cast(bext_cumsum(bext_cast(make(lt, BEXT_F32, v, 6), BEXT_F16), 0), BEXT_F32), got, sizeof got);
  cr_expect_eq(got[5], 1.75f, "cumsum f16: %g", got[5]);
  int64_t s2[] = {2, 3}, s3[] = {3, 2};
  bext_tensor *a = bext_cast(bext_reshape(make(lt, BEXT_F32, v, 6), s2, 2), BEXT_F16);
  bext_tensor *b = bext_cast(bext_reshape(make(lt, BEXT_F32, v, 6), s3, 2), BEXT_F16);
  float mm[4];
  take(bext_cast(bext_matmul(a, b), BEXT_F32), mm, sizeof mm);
  /* [-1.5 -.25 0; .5 1 2] x [-1.5 -.25; 0 .5; 1 2] */
  float want[] = {2.25f, 0.25f, 1.25f, 4.375f};
  for (int i = 0; i < 4; i++) cr_expect_eq(mm[i], want[i], "matmul f16[%d]: %g", i, mm[i]);
  (void)ref;
}

Test(libtorch, integer_mean_truncates, .init = setup) {
  int32_t a[] = {1, 2, 2}, b[] = {-1, -2}, r;
  take(bext_mean(make(lt, BEXT_I32, a, 3)), &r, 4);
  cr_expect_eq(r, 1);
  take(bext_mean(make(lt, BEXT_I32, b, 2)), &r, 4);
  cr_expect_eq(r, -1, "truncated toward zero: %d", r);
}

Test(libtorch, nan_sign_scalar_comparisons_and_clamp, .init = setup) {
  float v[] = {NAN, -2.0f, 0.0f, 3.0f}, s[4];
  take(bext_sign(make(lt, BEXT_F32, v, 4)), s, sizeof s);
  cr_expect(isnan(s[0]) && s[1] == -1.0f && s[2] == 0.0f && s[3] == 1.0f, "sign(NaN) is NaN: %g", s[0]);
  /* f16(0.1) < 0.1 in double; ATen would round the scalar to f16 first */
  float tenth = 0.1f;
  uint8_t lt_[1];
  take(bext_lt_scalar(bext_cast(make(lt, BEXT_F32, &tenth, 1), BEXT_F16), 0.1), lt_, 1);
  cr_expect_eq(lt_[0], 1, "f16(0.1) < 0.1");
  /* int scalars are bext's saturated int64: i32 >= 2.5 is >= 2 */
  int32_t i[] = {2, 3};
  uint8_t ge[2];
  take(bext_ge_scalar(make(lt, BEXT_I32, i, 2), 2.5), ge, 2);
  cr_expect(ge[0] == 1 && ge[1] == 1, "ge 2.5 on ints: %d %d", ge[0], ge[1]);
  /* u8 > -1: always (ATen would cast -1 to 255) */
  uint8_t u[] = {0, 255}, gt[2];
  take(bext_gt_scalar(make(lt, BEXT_U8, u, 2), -1.0), gt, 2);
  cr_expect(gt[0] == 1 && gt[1] == 1, "u8 > -1: %d %d", gt[0], gt[1]);
  /* clamp bounds are saturated int64 for ints: a u8 clamp to [-5, 300] keeps every value */
  uint8_t cu[2];
  take(bext_clamp(make(lt, BEXT_U8, u, 2), -5.0, 300.0), cu, 2);
  cr_expect(cu[0] == 0 && cu[1] == 255, "u8 clamp(-5, 300): %d %d", cu[0], cu[1]);
  /* an i32 scalar out of the dtype's range computes in int64 */
  int32_t big[] = {5, -5}, mx[2];
  take(bext_max_scalar(make(lt, BEXT_I32, big, 2), 4294967296.0 + 7), mx, sizeof mx);
  take(bext_max_scalar(make(nd, BEXT_I32, big, 2), 4294967296.0 + 7), i, sizeof i);
  cr_expect(mx[0] == i[0] && mx[1] == i[1] && mx[0] == 7, "max with 2^32+7: %d %d", mx[0], mx[1]);
}

/* Operands are bext storage that ATen reads in place: a view op's result
 * shares its input's buffer, and an op's output is plain host memory. */
Test(libtorch, views_share_memory_with_aten, .init = setup) {
  float v[] = {1, 2, 3, 4, 5, 6};
  int64_t s23[] = {2, 3};
  bext_tensor *t = bext_reshape(make(lt, BEXT_F32, v, 6), s23, 2);
  const float *base = bext_data(t);
  cr_assert_not_null(base, "%s", bext_last_error());
  bext_tensor *tr = bext_swap_dims(bext_retain(t), 0, 1);
  cr_assert_not_null(tr, "%s", bext_last_error());
  cr_expect_eq(bext_data(tr), base, "swap_dims is a view of the same storage");
  cr_expect(!bext_is_contiguous(tr));
  cr_expect(bext_strides(tr)[0] == 1 && bext_strides(tr)[1] == 3);
  int64_t st[] = {0, 1}, en[] = {2, 3};
  bext_tensor *sl = bext_slice(bext_retain(t), st, en, 2);
  cr_expect_eq((const float *)bext_data(sl), base + 1, "slice: offset into the same storage");
  /* a strided operand is read in place: transposed + 1 */
  float out[6];
  take(bext_add_scalar(tr, 1.0), out, sizeof out);
  float want[] = {2, 5, 3, 6, 4, 7};
  for (int i = 0; i < 6; i++) cr_expect_eq(out[i], want[i], "[%d]: %g", i, out[i]);
  bext_release(sl);
  bext_release(t);
}

Test(libtorch, random_ops_draw_bexts_numbers, .init = setup) {
  int64_t n = 257;
  double a[257], b[257];
  take(bext_random_normal(&n, 1, 0.5, 2.0, 42, BEXT_F64, lt), a, sizeof a);
  take(bext_random_normal(&n, 1, 0.5, 2.0, 42, BEXT_F64, nd), b, sizeof b);
  cr_expect(memcmp(a, b, sizeof a) == 0, "same seed, same numbers as ndarray");
}

Test(libtorch, cuda_target_is_refused_plainly, .init = setup) {
  const bext_device *d = bext_device_get("libtorch:cuda:0");
  bext_tensor *t = d ? bext_zeros((int64_t[]){2}, 1, BEXT_F32, d) : NULL;
  cr_expect_null(t);
  cr_expect(strstr(bext_last_error(), "libtorch:cuda") && strstr(bext_last_error(), "cpu only"), "%s",
            bext_last_error());
}
