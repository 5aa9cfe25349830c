/* test_errors.c — one test per class of bad argument: each call returns
 * NULL (or false), consumes its owned operands, never crashes, and leaves
 * a message in bext_last_error() naming the op and what was wrong (with
 * operand shapes where there are operands).  Also: "not implemented" names
 * the op and the backend, and programming errors reach the panic hook. */
#include <criterion/criterion.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "test_device.h"

static const bext_device *nd;
static void setup(void) { cr_assert((nd = bext_device_get("ndarray"))); }

static bext_tensor *t2(int64_t a, int64_t b, bext_dtype dt) {
  return bext_zeros((int64_t[]){a, b}, 2, dt, nd);
}

#define EXPECT_ERR(call, ...)                                                       \
  do {                                                                              \
    bext_clear_error();                                                             \
    cr_expect_null(call, #call " should fail");                                     \
    const char *needles_[] = {__VA_ARGS__};                                         \
    for (size_t k_ = 0; k_ < sizeof needles_ / sizeof needles_[0]; k_++)            \
      cr_expect(strstr(bext_last_error(), needles_[k_]) != NULL, "%s: message '%s' lacks '%s'", #call, \
                bext_last_error(), needles_[k_]);                                   \
  } while (0)

Test(errors, null_handles, .init = setup) {
  EXPECT_ERR(bext_add(NULL, t2(2, 3, BEXT_F32)), "bext_add", "operand 1", "NULL");
  EXPECT_ERR(bext_exp(NULL), "bext_exp", "NULL");
  EXPECT_ERR(bext_scatter_add(t2(2, 2, BEXT_F32), 0, t2(2, 2, BEXT_I64), NULL), "bext_scatter_add", "operand 3");
  EXPECT_ERR(bext_to_device(NULL, nd), "bext_to_device");
  EXPECT_ERR(bext_contiguous(NULL), "bext_contiguous");
  cr_expect_eq(bext_rank(NULL), 0);
  cr_expect(strstr(bext_last_error(), "bext_rank"));
  cr_expect_null(bext_shape(NULL));
  cr_expect_eq(bext_numel(NULL), 0);
  cr_expect(!bext_read(NULL, NULL, 0));
  cr_expect(!bext_is_contiguous(NULL));
  cr_expect_null(bext_device_of(NULL));
  bext_tensor *ts[2] = {NULL, t2(1, 1, BEXT_F32)};
  EXPECT_ERR(bext_cat(ts, 2, 0), "bext_cat", "NULL");
  EXPECT_ERR(bext_cat(NULL, 2, 0), "bext_cat");
}

Test(errors, bad_shapes, .init = setup) {
  EXPECT_ERR(bext_add(t2(2, 3, BEXT_F32), bext_zeros((int64_t[]){4}, 1, BEXT_F32, nd)), "bext_add",
             "not broadcastable", "[2,3] f32", "[4] f32");
  EXPECT_ERR(bext_reshape(t2(2, 3, BEXT_F32), (int64_t[]){4, 2}, 2), "bext_reshape", "[4,2]");
  EXPECT_ERR(bext_reshape(t2(2, 3, BEXT_F32), (int64_t[]){-1, -1}, 2), "bext_reshape", "-1");
  EXPECT_ERR(bext_reshape(t2(2, 3, BEXT_F32), (int64_t[]){1LL << 40, 1LL << 40, -1}, 3), "bext_reshape", "too large");
  EXPECT_ERR(bext_reshape(t2(2, 3, BEXT_F32), (int64_t[]){4, -1}, 2), "bext_reshape", "cannot infer");
  EXPECT_ERR(bext_matmul(t2(2, 3, BEXT_F32), t2(4, 2, BEXT_F32)), "bext_matmul", "inner", "[2,3] f32");
  EXPECT_ERR(bext_expand(t2(2, 3, BEXT_F32), (int64_t[]){4, 3}, 2), "bext_expand", "[4,3]");
  EXPECT_ERR(bext_zeros((int64_t[]){2, -3}, 2, BEXT_F32, nd), "bext_zeros", "-3");
  EXPECT_ERR(bext_zeros((int64_t[]){1 << 30, 1 << 30, 1 << 30}, 3, BEXT_F32, nd), "bext_zeros", "too large");
  EXPECT_ERR(bext_slice_assign(t2(4, 4, BEXT_F32), (int64_t[]){0}, (int64_t[]){2}, 1, t2(3, 4, BEXT_F32)),
             "bext_slice_assign", "slice shape");
  EXPECT_ERR(bext_cat((bext_tensor *[]){t2(2, 3, BEXT_F32), t2(2, 4, BEXT_F32)}, 2, 0), "bext_cat", "dim 1");
}

Test(errors, bad_dtypes, .init = setup) {
  EXPECT_ERR(bext_add(t2(2, 2, BEXT_F32), t2(2, 2, BEXT_I32)), "bext_add", "dtype mismatch", "f32", "i32");
  EXPECT_ERR(bext_exp(t2(2, 2, BEXT_I64)), "bext_exp", "i64", "float");
  EXPECT_ERR(bext_and(t2(2, 2, BEXT_F32), t2(2, 2, BEXT_F32)), "bext_and", "bool");
  EXPECT_ERR(bext_sum(t2(2, 2, BEXT_BOOL)), "bext_sum", "bool");
  EXPECT_ERR(bext_gather(t2(2, 2, BEXT_F32), 0, t2(2, 2, BEXT_U8)), "bext_gather", "i32 or i64");
  EXPECT_ERR(bext_mask_fill(t2(2, 2, BEXT_F32), t2(2, 2, BEXT_F32), 1), "bext_mask_fill", "bool");
  EXPECT_ERR(bext_random_uniform((int64_t[]){2}, 1, 0, 1, 1, BEXT_I32, nd), "bext_random_uniform", "float");
  EXPECT_ERR(bext_cast(t2(2, 2, BEXT_F32), (bext_dtype)42), "bext_cast", "dtype");
  EXPECT_ERR(bext_zeros((int64_t[]){2}, 1, (bext_dtype)-3, nd), "bext_zeros", "dtype");
}

Test(errors, bad_devices, .init = setup) {
  const bext_device *fx, *cube;
  cr_assert((fx = bext_device_get("flex")));
  cr_assert((cube = bext_device_get("cube:hip:0")));   /* no AMD GPU here: its driver says so */
  EXPECT_ERR(bext_matmul(t2(2, 2, BEXT_F32), bext_zeros((int64_t[]){2, 2}, 2, BEXT_F32, fx)), "bext_matmul",
             "different devices", "ndarray", "flex");
  if (!bext_device_available(cube)) {
    EXPECT_ERR(bext_from_data((float[]){1}, BEXT_F32, (int64_t[]){1}, 1, cube), "bext_from_data", "cube:hip:0",
               "unavailable");
    EXPECT_ERR(bext_to_device(t2(1, 1, BEXT_F32), cube), "bext_to_device", "unavailable");
  }
  EXPECT_ERR(bext_device_get("flex+fusion+fusion"), "bext_device_get", "twice");
}

Test(errors, bad_ranks, .init = setup) {
  int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  EXPECT_ERR(bext_zeros(nine, 9, BEXT_F32, nd), "bext_zeros", "rank 9");
  EXPECT_ERR(bext_from_data((float[]){1}, BEXT_F32, nine, 9, nd), "bext_from_data", "rank 9");
  EXPECT_ERR(bext_zeros(NULL, 2, BEXT_F32, nd), "bext_zeros", "NULL");
  EXPECT_ERR(bext_reshape(t2(1, 1, BEXT_F32), nine, 9), "bext_reshape", "rank 9");
  EXPECT_ERR(bext_permute(t2(2, 2, BEXT_F32), (int[]){0}, 1), "bext_permute", "1 axes", "rank 2");
  EXPECT_ERR(bext_permute(t2(2, 2, BEXT_F32), (int[]){0, 0}, 2), "bext_permute", "repeated");
  EXPECT_ERR(bext_matmul(bext_zeros((int64_t[]){3}, 1, BEXT_F32, nd), t2(3, 1, BEXT_F32)), "bext_matmul",
             "rank >= 2");
  EXPECT_ERR(bext_select(t2(2, 2, BEXT_F32), 0, t2(1, 1, BEXT_I64)), "bext_select", "1-D");
}

Test(errors, dims_out_of_range, .init = setup) {
  EXPECT_ERR(bext_sum_dim(t2(2, 3, BEXT_F32), 2, false), "bext_sum_dim", "dim 2", "rank 2", "[2,3] f32");
  EXPECT_ERR(bext_sum_dim(t2(2, 3, BEXT_F32), -3, true), "bext_sum_dim", "dim -3");
  EXPECT_ERR(bext_swap_dims(t2(2, 3, BEXT_F32), 0, 5), "bext_swap_dims", "dim 5");
  EXPECT_ERR(bext_cumsum(bext_zeros(NULL, 0, BEXT_F32, nd), 0), "bext_cumsum", "rank 0");
  EXPECT_ERR(bext_flip(t2(2, 3, BEXT_F32), (int[]){3}, 1), "bext_flip", "dim 3");
  EXPECT_ERR(bext_narrow(t2(2, 3, BEXT_F32), 1, 2, 2), "bext_narrow", "out of bounds");
  EXPECT_ERR(bext_slice(t2(2, 3, BEXT_F32), (int64_t[]){0, 2}, (int64_t[]){2, 4}, 2), "bext_slice", "2..4");
  EXPECT_ERR(bext_slice(t2(2, 3, BEXT_F32), (int64_t[]){1}, (int64_t[]){0}, 1), "bext_slice", "1..0");
  EXPECT_ERR(bext_argmax_dim(t2(0, 3, BEXT_F32), 0, false), "bext_argmax_dim", "empty");
  EXPECT_ERR(bext_max_all(t2(0, 3, BEXT_F32)), "bext_max_all", "empty");
  bext_tensor *t = t2(2, 3, BEXT_F32);
  cr_expect_eq(bext_dim(t, 7), -1);
  cr_expect(strstr(bext_last_error(), "dim 7"));
  cr_expect_eq(bext_dim(t, -1), 3);
  bext_release(t);
}

Test(errors, indices_out_of_range, .init = setup) {
  bext_tensor *idx = bext_from_data((int64_t[]){0, 5}, BEXT_I64, (int64_t[]){2}, 1, nd);
  EXPECT_ERR(bext_select(t2(3, 2, BEXT_F32), 0, idx), "bext_select", "index 5", "extent 3");
  idx = bext_from_data((int32_t[]){-1, 0}, BEXT_I32, (int64_t[]){1, 2}, 2, nd);
  EXPECT_ERR(bext_gather(t2(3, 2, BEXT_F32), 1, idx), "bext_gather", "index -1");
  idx = bext_from_data((int64_t[]){2}, BEXT_I64, (int64_t[]){1, 1}, 2, nd);
  EXPECT_ERR(bext_scatter_add(t2(2, 2, BEXT_F32), 0, idx, t2(1, 1, BEXT_F32)), "bext_scatter_add", "index 2");
}

Test(errors, bad_buffers_and_scalars, .init = setup) {
  bext_tensor *t = t2(2, 3, BEXT_F32);
  float small[2];
  cr_expect(!bext_read(t, small, sizeof small));
  cr_expect(strstr(bext_last_error(), "too small"));
  cr_expect(!bext_read(t, NULL, 100));
  bext_release(t);
  EXPECT_ERR(bext_from_data(NULL, BEXT_F32, (int64_t[]){2}, 1, nd), "bext_from_data", "NULL");
  EXPECT_ERR(bext_arange(0, 10, 0, BEXT_F32, nd), "bext_arange", "step");
  EXPECT_ERR(bext_arange(0, 1e300, 1, BEXT_I64, nd), "bext_arange", "too large");
  EXPECT_ERR(bext_clamp(t2(1, 1, BEXT_F32), 2, 1), "bext_clamp", "above");
  EXPECT_ERR(bext_repeat_dim(t2(1, 1, BEXT_F32), 0, -1), "bext_repeat_dim", "-1");
  EXPECT_ERR(bext_random_normal((int64_t[]){1}, 1, 0, -1, 1, BEXT_F32, nd), "bext_random_normal", "negative");
}

/* A backend with storage but no kernels. */
static bext_tensor *wrong_shape(struct bxr_op *op) {
  return bxr_tensor_new(op->device, op->out.dtype, 0, NULL); /* always rank 0 */
}
static const struct bxr_backend bare = {
    .api_version = BXR_BACKEND_API_VERSION,
    .name = "bare",
    .kind = BEXT_BACKEND_NDARRAY,
    .storage_alloc = bxr_host_storage_alloc,
    .storage_free = bxr_host_storage_free,
    .from_data = bxr_host_from_data,
    .read = bxr_host_read,
    .copy = bxr_host_copy,
    .exec = {[BXR_OP_NEG] = wrong_shape},
};
TEST_DEVICE(bare_dev, &bare, "bare");

Test(errors, not_implemented_names_op_and_backend) {
  bext_tensor *t = bxr_tensor_new(&bare_dev, BEXT_F32, 2, (int64_t[]){2, 2});
  cr_assert_not_null(t);
  EXPECT_ERR(bext_exp(t), "bext_exp", "'exp'", "not implemented", "'bare'");
}

static jmp_buf jb;
static char panic_msg[512];
static void on_panic(const char *msg, const char *file, int line, void *ud) {
  (void)ud;
  snprintf(panic_msg, sizeof panic_msg, "%s (%s:%d)", msg, file, line);
  longjmp(jb, 1);
}

Test(errors, programming_errors_reach_the_panic_hook) {
  bext_set_panic_hook(on_panic, NULL);
  /* a backend returning the wrong shape breaks the inference contract */
  bext_tensor *t = bxr_tensor_new(&bare_dev, BEXT_F32, 2, (int64_t[]){2, 2});
  if (setjmp(jb) == 0) {
    bext_neg(t);
    cr_assert_fail("no panic");
  }
  cr_expect(strstr(panic_msg, "'bare'") && strstr(panic_msg, "neg"), "%s", panic_msg);
  /* over-releasing a handle */
  bext_tensor *u = bxr_tensor_new(&bare_dev, BEXT_F32, 0, NULL);
  atomic_store(&u->refcount, 0);
  if (setjmp(jb) == 0) {
    bext_release(u);
    cr_assert_fail("no panic");
  }
  cr_expect(strstr(panic_msg, "released more often"), "%s", panic_msg);
  atomic_store(&u->refcount, 1);
  bext_release(u);
  bext_set_panic_hook(NULL, NULL);
}

Test(errors, extension_code_can_set_errors_and_panic) {
  cr_expect(!bext_set_error("my_op: bad extent %d", 7));
  cr_expect_str_eq(bext_last_error(), "my_op: bad extent 7");
  bext_set_panic_hook(on_panic, NULL);
  if (setjmp(jb) == 0) {
    bext_panic("ext.c", 12, "broken %s", "invariant");
    cr_assert_fail("no panic");
  }
  cr_expect_str_eq(panic_msg, "broken invariant (ext.c:12)");
  bext_set_panic_hook(NULL, NULL);
}

Test(errors, default_panic_aborts, .signal = SIGABRT) {
  bxr_panic(__FILE__, __LINE__, "deliberate");
}

/* Every public op answers NULL operands with an error naming itself,
 * never a crash. */
Test(errors, every_op_rejects_null_operands) {
  typedef bext_tensor *(*un_fn)(bext_tensor *);
  typedef bext_tensor *(*bin_fn)(bext_tensor *, bext_tensor *);
  typedef bext_tensor *(*sc_fn)(bext_tensor *, double);
  typedef bext_tensor *(*dim_fn)(bext_tensor *, int, bool);
  const struct { const char *name; un_fn f; } un[] = {
      {"bext_not", bext_not}, {"bext_neg", bext_neg}, {"bext_abs", bext_abs}, {"bext_exp", bext_exp},
      {"bext_log", bext_log}, {"bext_log1p", bext_log1p}, {"bext_sqrt", bext_sqrt}, {"bext_rsqrt", bext_rsqrt},
      {"bext_sin", bext_sin}, {"bext_cos", bext_cos}, {"bext_tanh", bext_tanh}, {"bext_erf", bext_erf},
      {"bext_sigmoid", bext_sigmoid}, {"bext_relu", bext_relu}, {"bext_recip", bext_recip},
      {"bext_floor", bext_floor}, {"bext_ceil", bext_ceil}, {"bext_round", bext_round}, {"bext_sign", bext_sign},
      {"bext_sum", bext_sum}, {"bext_mean", bext_mean}, {"bext_prod", bext_prod}, {"bext_max_all", bext_max_all},
      {"bext_min_all", bext_min_all}, {"bext_argmax", bext_argmax}, {"bext_argmin", bext_argmin},
      {"bext_any", bext_any}, {"bext_all", bext_all}, {"bext_contiguous", bext_contiguous}};
  const struct { const char *name; bin_fn f; } bin[] = {
      {"bext_add", bext_add}, {"bext_sub", bext_sub}, {"bext_mul", bext_mul}, {"bext_div", bext_div},
      {"bext_rem", bext_rem}, {"bext_pow", bext_pow}, {"bext_max", bext_max}, {"bext_min", bext_min},
      {"bext_eq", bext_eq}, {"bext_ne", bext_ne}, {"bext_gt", bext_gt}, {"bext_ge", bext_ge},
      {"bext_lt", bext_lt}, {"bext_le", bext_le}, {"bext_and", bext_and}, {"bext_or", bext_or},
      {"bext_xor", bext_xor}, {"bext_matmul", bext_matmul}};
  const struct { const char *name; sc_fn f; } sc[] = {
      {"bext_add_scalar", bext_add_scalar}, {"bext_sub_scalar", bext_sub_scalar},
      {"bext_mul_scalar", bext_mul_scalar}, {"bext_div_scalar", bext_div_scalar},
      {"bext_rem_scalar", bext_rem_scalar}, {"bext_pow_scalar", bext_pow_scalar},
      {"bext_max_scalar", bext_max_scalar}, {"bext_min_scalar", bext_min_scalar},
      {"bext_eq_scalar", bext_eq_scalar}, {"bext_ne_scalar", bext_ne_scalar}, {"bext_gt_scalar", bext_gt_scalar},
      {"bext_ge_scalar", bext_ge_scalar}, {"bext_lt_scalar", bext_lt_scalar}, {"bext_le_scalar", bext_le_scalar}};
  const struct { const char *name; dim_fn f; } dim[] = {
      {"bext_sum_dim", bext_sum_dim}, {"bext_mean_dim", bext_mean_dim}, {"bext_prod_dim", bext_prod_dim},
      {"bext_max_dim", bext_max_dim}, {"bext_min_dim", bext_min_dim}, {"bext_argmax_dim", bext_argmax_dim},
      {"bext_argmin_dim", bext_argmin_dim}, {"bext_any_dim", bext_any_dim}, {"bext_all_dim", bext_all_dim}};
  for (size_t i = 0; i < sizeof un / sizeof un[0]; i++) EXPECT_ERR(un[i].f(NULL), un[i].name, "NULL");
  for (size_t i = 0; i < sizeof bin / sizeof bin[0]; i++) EXPECT_ERR(bin[i].f(NULL, NULL), bin[i].name, "NULL");
  for (size_t i = 0; i < sizeof sc / sizeof sc[0]; i++) EXPECT_ERR(sc[i].f(NULL, 1), sc[i].name, "NULL");
  for (size_t i = 0; i < sizeof dim / sizeof dim[0]; i++) EXPECT_ERR(dim[i].f(NULL, 0, true), dim[i].name, "NULL");
  EXPECT_ERR(bext_reshape(NULL, (int64_t[]){1}, 1), "bext_reshape", "NULL");
  EXPECT_ERR(bext_swap_dims(NULL, 0, 1), "bext_swap_dims", "NULL");
  EXPECT_ERR(bext_permute(NULL, (int[]){0}, 1), "bext_permute", "NULL");
  EXPECT_ERR(bext_expand(NULL, (int64_t[]){1}, 1), "bext_expand", "NULL");
  EXPECT_ERR(bext_slice(NULL, NULL, NULL, 0), "bext_slice", "NULL");
  EXPECT_ERR(bext_slice_assign(NULL, NULL, NULL, 0, NULL), "bext_slice_assign", "NULL");
  EXPECT_ERR(bext_flip(NULL, NULL, 0), "bext_flip", "NULL");
  EXPECT_ERR(bext_narrow(NULL, 0, 0, 0), "bext_narrow", "NULL");
  EXPECT_ERR(bext_repeat_dim(NULL, 0, 1), "bext_repeat_dim", "NULL");
  EXPECT_ERR(bext_gather(NULL, 0, NULL), "bext_gather", "NULL");
  EXPECT_ERR(bext_select(NULL, 0, NULL), "bext_select", "NULL");
  EXPECT_ERR(bext_select_assign(NULL, 0, NULL, NULL), "bext_select_assign", "NULL");
  EXPECT_ERR(bext_mask_where(NULL, NULL, NULL), "bext_mask_where", "NULL");
  EXPECT_ERR(bext_mask_fill(NULL, NULL, 0), "bext_mask_fill", "NULL");
  EXPECT_ERR(bext_clamp(NULL, 0, 1), "bext_clamp", "NULL");
  EXPECT_ERR(bext_powi(NULL, 2), "bext_powi", "NULL");
  EXPECT_ERR(bext_cumsum(NULL, 0), "bext_cumsum", "NULL");
  EXPECT_ERR(bext_cast(NULL, BEXT_F32), "bext_cast", "NULL");
  /* array arguments NULL while counts say otherwise */
  const bext_device *nd;
  (nd = bext_device_get("ndarray"));
  EXPECT_ERR(bext_permute(bext_ones((int64_t[]){2}, 1, BEXT_F32, nd), NULL, 1), "bext_permute", "NULL");
  EXPECT_ERR(bext_slice(bext_ones((int64_t[]){2}, 1, BEXT_F32, nd), NULL, NULL, 1), "bext_slice", "NULL");
  EXPECT_ERR(bext_reshape(bext_ones((int64_t[]){2}, 1, BEXT_F32, nd), NULL, 1), "bext_reshape", "NULL");
  cr_expect(!bext_device_available(NULL));
  cr_expect_null(bext_device_of(NULL));
  cr_expect_str_eq(bext_device_name(NULL), "NULL");
  cr_expect_null(bext_device_get(NULL));
}
