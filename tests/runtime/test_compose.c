/* test_compose.c — the public ops that are compositions of core ops
 * (runtime/src/api_compose.c): bext_gelu against the formula, bext_transpose
 * against bext_swap_dims(-2, -1), ownership on success and failure. */
#include <criterion/criterion.h>
#include <math.h>

#include "backend.h"

static const bext_device *nd;
static void setup(void) { cr_assert((nd = bext_device_get("ndarray"))); }

Test(compose, gelu_matches_the_erf_formula, .init = setup) {
  float v[5] = {-3.0f, -1.0f, 0.0f, 0.5f, 2.0f}, out[5];
  bext_tensor *x = bext_from_data(v, BEXT_F32, (int64_t[]){5}, 1, nd);
  bext_retain(x);
  bext_tensor *y = bext_gelu(x);
  cr_assert_not_null(y, "%s", bext_last_error());
  cr_expect_eq(bext_refcount(x), 1, "bext_gelu consumed exactly the reference it was given");
  cr_assert(bext_read(y, out, sizeof out));
  for (int i = 0; i < 5; i++) {
    double want = v[i] * 0.5 * (1.0 + erf(v[i] / sqrt(2.0)));
    cr_expect(fabs(out[i] - want) < 1e-5, "gelu(%g) = %g, expected %g", v[i], out[i], want);
  }
  bext_release(x);
  bext_release(y);
}

Test(compose, gelu_of_an_int_tensor_fails_and_releases, .init = setup) {
  int32_t v[2] = {1, 2};
  bext_tensor *x = bext_from_data(v, BEXT_I32, (int64_t[]){2}, 1, nd);
  bext_retain(x);
  cr_expect_null(bext_gelu(x));
  cr_expect_eq(bext_refcount(x), 1);
  bext_release(x);
  cr_expect_null(bext_gelu(NULL));
}

Test(compose, transpose_swaps_the_last_two_dims, .init = setup) {
  float v[6] = {1, 2, 3, 4, 5, 6}, out[6];
  bext_tensor *t = bext_transpose(bext_from_data(v, BEXT_F32, (int64_t[]){2, 3}, 2, nd));
  cr_assert_not_null(t, "%s", bext_last_error());
  cr_expect_eq(bext_shape(t)[0], 3);
  cr_expect_eq(bext_shape(t)[1], 2);
  cr_assert(bext_read(t, out, sizeof out));
  cr_expect_eq(out[1], 4.0f);
  bext_release(t);
}
