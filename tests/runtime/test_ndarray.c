/* test_ndarray.c — the NdArray reference against hand-computed values:
 * small literal cases for the semantics bext.h documents (broadcasting,
 * floored rem, integer x/0, half-to-even rounding, keepdim, first-index
 * argmax, batched matmul, gather/scatter, views). */
#include <criterion/criterion.h>
#include <math.h>

#include <bext/bext.h>

static const bext_device *nd;
static void setup(void) { cr_assert((nd = bext_device_get("ndarray"))); }

static bext_tensor *F(const float *v, int rank, const int64_t *shape) {
  return bext_from_data(v, BEXT_F32, shape, rank, nd);
}
static bext_tensor *I(const int64_t *v, int rank, const int64_t *shape) {
  return bext_from_data(v, BEXT_I64, shape, rank, nd);
}

static void expect_f(bext_tensor *t, int n, const float *want) {
  cr_assert_not_null(t, "%s", bext_last_error());
  cr_assert_eq(bext_numel(t), n);
  float got[64];
  cr_assert(bext_read(t, got, sizeof got));
  for (int i = 0; i < n; i++) cr_expect_float_eq(got[i], want[i], 1e-6, "element %d: %g, want %g", i, got[i], want[i]);
  bext_release(t);
}
static void expect_i(bext_tensor *t, int n, const int64_t *want) {
  cr_assert_not_null(t, "%s", bext_last_error());
  cr_assert_eq(bext_dtype_of(t), BEXT_I64);
  cr_assert_eq(bext_numel(t), n);
  int64_t got[64];
  cr_assert(bext_read(t, got, sizeof got));
  for (int i = 0; i < n; i++) cr_expect_eq(got[i], want[i], "element %d: %lld, want %lld", i, (long long)got[i], (long long)want[i]);
  bext_release(t);
}

Test(ndarray, broadcast_add, .init = setup) {
  bext_tensor *a = F((float[]){1, 2, 3}, 2, (int64_t[]){3, 1});
  bext_tensor *b = F((float[]){10, 20}, 1, (int64_t[]){2});
  bext_tensor *c = bext_add(a, b);
  cr_assert_eq(bext_rank(c), 2);
  cr_expect(bext_shape(c)[0] == 3 && bext_shape(c)[1] == 2);
  expect_f(c, 6, (float[]){11, 21, 12, 22, 13, 23});
}

Test(ndarray, integer_semantics, .init = setup) {
  int64_t sh[] = {4};
  expect_i(bext_rem(I((int64_t[]){7, -7, 7, -7}, 1, sh), I((int64_t[]){3, 3, -3, -3}, 1, sh)), 4,
           (int64_t[]){1, 2, -2, -1});
  expect_i(bext_div(I((int64_t[]){7, -7, 5, INT64_MIN}, 1, sh), I((int64_t[]){2, 2, 0, -1}, 1, sh)), 4,
           (int64_t[]){3, -3, 0, INT64_MIN});
  expect_i(bext_pow(I((int64_t[]){2, -3, 2, -1}, 1, sh), I((int64_t[]){10, 3, -1, -3}, 1, sh)), 4,
           (int64_t[]){1024, -27, 0, -1});
  expect_i(bext_add_scalar(I((int64_t[]){INT64_MAX, 0, 1, 2}, 1, sh), 1.9), 4,
           (int64_t[]){INT64_MIN, 1, 2, 3});
}

Test(ndarray, float_semantics, .init = setup) {
  int64_t sh[] = {6};
  expect_f(bext_round(F((float[]){0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.6f}, 1, sh)), 6,
           (float[]){0, 2, 2, -0.f, -2, 3});
  expect_f(bext_rem(F((float[]){5.5f, -5.5f, 5.5f, -5.5f, 1, 0}, 1, sh), F((float[]){2, 2, -2, -2, 1, 3}, 1, sh)), 6,
           (float[]){1.5f, 0.5f, -0.5f, -1.5f, 0, 0});
  bext_tensor *m = bext_max(F((float[]){1, NAN, 3, 0, 0, 0}, 1, sh), F((float[]){2, 0, NAN, 0, 0, 0}, 1, sh));
  float got[6];
  bext_read(m, got, sizeof got);
  cr_expect(got[0] == 2 && isnan(got[1]) && isnan(got[2]));
  bext_release(m);
  expect_f(bext_sigmoid(F((float[]){0}, 0, NULL)), 1, (float[]){0.5f});
  expect_f(bext_clamp(F((float[]){-3, 0.25f, 9}, 1, (int64_t[]){3}), -1, 1), 3, (float[]){-1, 0.25f, 1});
}

Test(ndarray, reductions, .init = setup) {
  int64_t sh[] = {2, 3};
  float v[] = {1, 5, 2, 7, 0, 7};
  bext_tensor *t = F(v, 2, sh);
  expect_f(bext_sum(bext_retain(t)), 1, (float[]){22});
  bext_tensor *k = bext_sum_dim(bext_retain(t), 1, true);
  cr_expect(bext_rank(k) == 2 && bext_shape(k)[1] == 1);
  expect_f(k, 2, (float[]){8, 14});
  expect_f(bext_mean_dim(bext_retain(t), 0, false), 3, (float[]){4, 2.5f, 4.5f});
  expect_f(bext_prod(bext_retain(t)), 1, (float[]){0});
  expect_f(bext_max_dim(bext_retain(t), -1, false), 2, (float[]){5, 7});
  expect_i(bext_argmax_dim(bext_retain(t), 1, false), 2, (int64_t[]){1, 0}); /* first of the two 7s */
  expect_i(bext_argmin(bext_retain(t)), 1, (int64_t[]){4});
  expect_f(bext_cumsum(bext_retain(t), 1), 6, (float[]){1, 6, 8, 7, 7, 14});
  bext_tensor *b = bext_gt_scalar(t, 4);
  bext_tensor *any = bext_any_dim(bext_retain(b), 0, false);
  bext_tensor *all = bext_all(b);
  uint8_t ga[3], gl;
  bext_read(any, ga, 3);
  bext_read(all, &gl, 1);
  cr_expect(ga[0] == 1 && ga[1] == 1 && ga[2] == 1 && gl == 0);
  bext_release(any);
  bext_release(all);
}

Test(ndarray, batched_matmul, .init = setup) {
  /* [2,2,2] x [2,1]: batch broadcast of b */
  bext_tensor *a = F((float[]){1, 2, 3, 4, 5, 6, 7, 8}, 3, (int64_t[]){2, 2, 2});
  bext_tensor *b = F((float[]){1, -1}, 2, (int64_t[]){2, 1});
  bext_tensor *c = bext_matmul(a, b);
  cr_assert_not_null(c, "%s", bext_last_error());
  cr_expect(bext_rank(c) == 3 && bext_shape(c)[0] == 2 && bext_shape(c)[2] == 1);
  expect_f(c, 4, (float[]){-1, -1, -1, -1});
  a = F((float[]){1, 2, 3, 4}, 2, (int64_t[]){2, 2});
  expect_f(bext_matmul(bext_retain(a), bext_swap_dims(bext_retain(a), 0, 1)), 4, (float[]){5, 11, 11, 25});
  bext_release(a);
}

Test(ndarray, indexing, .init = setup) {
  bext_tensor *t = F((float[]){1, 2, 3, 4, 5, 6}, 2, (int64_t[]){2, 3});
  expect_f(bext_gather(bext_retain(t), 1, I((int64_t[]){2, 0, 1, 1}, 2, (int64_t[]){2, 2})), 4,
           (float[]){3, 1, 5, 5});
  expect_f(bext_select(bext_retain(t), 1, I((int64_t[]){2, 2, 0}, 1, (int64_t[]){3})), 6,
           (float[]){3, 3, 1, 6, 6, 4});
  expect_f(bext_scatter_add(bext_retain(t), 1, I((int64_t[]){0, 0}, 2, (int64_t[]){1, 2}),
                            F((float[]){10, 20}, 2, (int64_t[]){1, 2})),
           6, (float[]){31, 2, 3, 4, 5, 6});
  expect_f(bext_select_assign(bext_retain(t), 0, I((int64_t[]){1, 1}, 1, (int64_t[]){2}),
                              bext_ones((int64_t[]){2, 3}, 2, BEXT_F32, nd)),
           6, (float[]){1, 2, 3, 6, 7, 8});
  bext_tensor *mask = bext_gt_scalar(bext_retain(t), 3.5);
  expect_f(bext_mask_fill(bext_retain(t), bext_retain(mask), -1), 6, (float[]){1, 2, 3, -1, -1, -1});
  expect_f(bext_mask_where(t, mask, F((float[]){0}, 0, NULL)), 6, (float[]){1, 2, 3, 0, 0, 0});
}

Test(ndarray, layout, .init = setup) {
  bext_tensor *t = F((float[]){1, 2, 3, 4, 5, 6}, 2, (int64_t[]){2, 3});
  expect_f(bext_flip(bext_retain(t), (int[]){1}, 1), 6, (float[]){3, 2, 1, 6, 5, 4});
  expect_f(bext_permute(bext_retain(t), (int[]){1, 0}, 2), 6, (float[]){1, 4, 2, 5, 3, 6});
  expect_f(bext_narrow(bext_retain(t), 1, 1, 2), 4, (float[]){2, 3, 5, 6});
  expect_f(bext_repeat_dim(bext_retain(t), 0, 2), 12, (float[]){1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6});
  expect_f(bext_expand(F((float[]){7, 8}, 2, (int64_t[]){2, 1}), (int64_t[]){2, 2, 2}, 3), 8,
           (float[]){7, 7, 8, 8, 7, 7, 8, 8});
  expect_f(bext_slice_assign(bext_retain(t), (int64_t[]){0, 1}, (int64_t[]){1, 3}, 2, F((float[]){0, 0}, 2, (int64_t[]){1, 2})),
           6, (float[]){1, 0, 0, 4, 5, 6});
  bext_tensor *parts[2] = {bext_retain(t), F((float[]){9, 9, 9}, 2, (int64_t[]){1, 3})};
  expect_f(bext_cat(parts, 2, 0), 9, (float[]){1, 2, 3, 4, 5, 6, 9, 9, 9});
  expect_f(bext_reshape(bext_swap_dims(t, 0, 1), (int64_t[]){-1}, 1), 6, (float[]){1, 4, 2, 5, 3, 6});
}

Test(ndarray, creation, .init = setup) {
  expect_f(bext_arange(1, 2, 0.25, BEXT_F32, nd), 4, (float[]){1, 1.25f, 1.5f, 1.75f});
  expect_i(bext_arange(5, 0, -2, BEXT_I64, nd), 3, (int64_t[]){5, 3, 1});
  expect_f(bext_full((int64_t[]){2}, 1, 2.5, BEXT_F32, nd), 2, (float[]){2.5f, 2.5f});
  bext_tensor *u = bext_random_uniform((int64_t[]){500}, 1, -1, 3, 9, BEXT_F64, nd);
  double v[500], s = 0;
  bext_read(u, v, sizeof v);
  for (int i = 0; i < 500; i++) {
    cr_assert(v[i] >= -1 && v[i] < 3);
    s += v[i];
  }
  cr_expect(fabs(s / 500 - 1) < 0.2, "uniform mean %g", s / 500);
  bext_release(u);
  bext_tensor *z = bext_zeros(NULL, 0, BEXT_U8, nd);
  cr_expect_eq(bext_rank(z), 0);
  cr_expect_eq(bext_numel(z), 1);
  bext_release(z);
}
