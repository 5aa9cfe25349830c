/* test_dtypes.c — the dtype table, f16/bf16 conversion (round to nearest
 * even, subnormals, inf, NaN; every f16 value round-trips), element
 * load/store, and bext_cast's documented semantics end to end. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "internal.h"

Test(dtypes, table) {
  const struct {
    bext_dtype dt;
    const char *name;
    size_t size;
    bext_kind kind;
  } want[] = {{BEXT_F32, "f32", 4, BEXT_KIND_FLOAT}, {BEXT_F64, "f64", 8, BEXT_KIND_FLOAT},
              {BEXT_F16, "f16", 2, BEXT_KIND_FLOAT}, {BEXT_BF16, "bf16", 2, BEXT_KIND_FLOAT},
              {BEXT_I32, "i32", 4, BEXT_KIND_INT},   {BEXT_I64, "i64", 8, BEXT_KIND_INT},
              {BEXT_U8, "u8", 1, BEXT_KIND_INT},     {BEXT_BOOL, "bool", 1, BEXT_KIND_BOOL}};
  cr_assert_eq(BEXT_DTYPE_COUNT, 8);
  for (int i = 0; i < 8; i++) {
    cr_expect_str_eq(bext_dtype_name(want[i].dt), want[i].name);
    cr_expect_eq(bext_dtype_size(want[i].dt), want[i].size);
    cr_expect_eq(bext_dtype_kind(want[i].dt), want[i].kind);
    bext_dtype back;
    cr_expect(bext_dtype_from_name(want[i].name, &back));
    cr_expect_eq(back, want[i].dt);
  }
  bext_dtype x;
  cr_expect(!bext_dtype_from_name("f8", &x));
  cr_expect(strstr(bext_last_error(), "f8") != NULL);
  cr_expect_str_eq(bext_dtype_name((bext_dtype)99), "?");
  cr_expect_eq(bext_dtype_size((bext_dtype)-1), 0);
}

Test(dtypes, f16_known_values) {
  cr_expect_eq(bxr_f32_to_f16(1.0f), 0x3c00);
  cr_expect_eq(bxr_f32_to_f16(-2.0f), 0xc000);
  cr_expect_eq(bxr_f32_to_f16(65504.0f), 0x7bff);          /* largest finite */
  cr_expect_eq(bxr_f32_to_f16(65520.0f), 0x7c00);          /* tie rounds to even: inf */
  cr_expect_eq(bxr_f32_to_f16(65519.0f), 0x7bff);
  cr_expect_eq(bxr_f32_to_f16(INFINITY), 0x7c00);
  cr_expect_eq(bxr_f32_to_f16(0x1p-24f), 0x0001);          /* smallest subnormal */
  cr_expect_eq(bxr_f32_to_f16(0x1p-25f), 0x0000);          /* tie to even: 0 */
  cr_expect_eq(bxr_f32_to_f16(0x1.8p-25f), 0x0001);        /* above the tie */
  cr_expect_eq(bxr_f32_to_f16(0x1p-14f), 0x0400);          /* smallest normal */
  /* 1 + 2^-11 is halfway between 1 and 1 + 2^-10: to even (1.0) */
  cr_expect_eq(bxr_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);
  /* 1 + 3*2^-11 is halfway between 1+2^-10 (odd) and 1+2^-9: up */
  cr_expect_eq(bxr_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);
  cr_expect(isnan(bxr_f16_to_f32(bxr_f32_to_f16(NAN))));
  cr_expect_eq(bxr_f16_to_f32(0x0001), 0x1p-24f);
  cr_expect_eq(bxr_f16_to_f32(0xfc00), -INFINITY);
}

Test(dtypes, f16_every_value_round_trips) {
  for (uint32_t h = 0; h < 0x10000; h++) {
    float f = bxr_f16_to_f32((uint16_t)h);
    if (isnan(f)) continue; /* NaN payloads are quieted, not kept */
    cr_assert_eq(bxr_f32_to_f16(f), h, "f16 0x%04x -> %g -> 0x%04x", h, f, bxr_f32_to_f16(f));
  }
}

Test(dtypes, bf16_rounding) {
  cr_expect_eq(bxr_f32_to_bf16(1.0f), 0x3f80);
  cr_expect_eq(bxr_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);       /* tie, to even */
  cr_expect_eq(bxr_f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);   /* tie, odd -> up */
  cr_expect_eq(bxr_f32_to_bf16(1.0f + 0x1.8p-8f), 0x3f81);     /* above the tie */
  cr_expect(isnan(bxr_bf16_to_f32(bxr_f32_to_bf16(NAN))));
  cr_expect_eq(bxr_bf16_to_f32(0x4049), 3.140625f);
  for (uint32_t h = 0; h < 0x10000; h++) {
    float f = bxr_bf16_to_f32((uint16_t)h);
    if (!isnan(f)) cr_assert_eq(bxr_f32_to_bf16(f), h);
  }
}

static void cast_check(bext_dtype from, const double *in, int n, bext_dtype to, const double *want) {
  const bext_device *nd;
  cr_assert((nd = bext_device_get("ndarray")));
  bext_tensor *t = bext_from_data(in, BEXT_F64, (int64_t[]){n}, 1, nd);
  t = bext_cast(bext_cast(t, from), to);
  cr_assert_not_null(t, "%s", bext_last_error());
  unsigned char buf[64];
  cr_assert(bext_read(t, buf, sizeof buf));
  for (int i = 0; i < n; i++)
    cr_expect_eq(bxr_load_f64(buf, to, i), want[i], "%s->%s element %d: %g, want %g", bext_dtype_name(from),
                 bext_dtype_name(to), i, bxr_load_f64(buf, to, i), want[i]);
  bext_release(t);
}

Test(dtypes, cast_semantics) {
  /* float -> int: NaN -> 0, truncation toward zero, saturation */
  const double f[] = {NAN, -1.75, 2.9, 1e10, -1e10, 300};
  cast_check(BEXT_F64, f, 6, BEXT_I32, (double[]){0, -1, 2, 2147483647.0, -2147483648.0, 300});
  cast_check(BEXT_F64, f, 6, BEXT_U8, (double[]){0, 0, 2, 255, 0, 255});
  cast_check(BEXT_F64, f, 6, BEXT_BOOL, (double[]){1, 1, 1, 1, 1, 1});
  /* int -> int wraps */
  const double i[] = {-1, 256, 257, 0, 2147483648.0};
  cast_check(BEXT_I64, i, 5, BEXT_U8, (double[]){255, 0, 1, 0, 0});
  cast_check(BEXT_I64, i, 5, BEXT_I32, (double[]){-1, 256, 257, 0, -2147483648.0});
  cast_check(BEXT_I64, i, 5, BEXT_BOOL, (double[]){1, 1, 1, 0, 1});
  /* bool -> numbers: 0 / 1 */
  cast_check(BEXT_BOOL, (double[]){0, 3}, 2, BEXT_F16, (double[]){0, 1});
  /* to f16 / bf16 rounds to nearest even */
  cast_check(BEXT_F64, (double[]){1 + 0x1p-11, 65520}, 2, BEXT_F16, (double[]){1, INFINITY});
  cast_check(BEXT_F32, (double[]){1 + 3 * 0x1p-8}, 1, BEXT_BF16, (double[]){1 + 0x1p-6});
}

Test(dtypes, rng_is_counter_based_and_shared) {
  /* the generator is a function of (seed, index): same numbers every call */
  cr_expect_eq(bxr_rng_u64(7, 3), bxr_rng_u64(7, 3));
  cr_expect_neq(bxr_rng_u64(7, 3), bxr_rng_u64(8, 3));
  double sum = 0, sq = 0;
  int n = 20000;
  for (int i = 0; i < n; i++) {
    double u = bxr_rng_uniform(99, (uint64_t)i);
    cr_assert(u >= 0 && u < 1);
    double z = bxr_rng_normal(99, (uint64_t)i);
    sum += z;
    sq += z * z;
  }
  cr_expect(fabs(sum / n) < 0.05, "normal mean %g", sum / n);
  cr_expect(fabs(sq / n - 1) < 0.05, "normal variance %g", sq / n);
  /* both backends draw the same numbers for the same seed */
  const bext_device *nd, *fx;
  (nd = bext_device_get("ndarray"));
  (fx = bext_device_get("flex"));
  int64_t sh[] = {1000};
  bext_tensor *a = bext_random_normal(sh, 1, 0, 1, 5, BEXT_F32, nd);
  bext_tensor *b = bext_random_normal(sh, 1, 0, 1, 5, BEXT_F32, fx);
  cr_assert(a && b, "%s", bext_last_error());
  static float x[1000], y[1000];
  bext_read(a, x, sizeof x);
  bext_read(b, y, sizeof y);
  cr_expect(memcmp(x, y, sizeof x) == 0, "ndarray and flex draw different numbers for one seed");
  bext_release(a);
  bext_release(b);
}
