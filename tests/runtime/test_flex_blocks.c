/* test_flex_blocks.c — Flex's own building blocks: the AVX2 and generic
 * kernel variants agreeing, half-precision conversions against the
 * runtime's reference, and the caching allocator (reuse of large blocks;
 * failures of the allocation hook surface as errors).  The thread pool
 * they run on is the runtime's (test_pool.c). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flex/flex_internal.h"

Test(flex_blocks, kernel_variants_agree) {
  enum { N = 1037 };
  float a[N], b[N], o1[N], o2[N];
  for (int i = 0; i < N; i++) {
    a[i] = (float)((i * 37) % 101) / 10.0f - 5.0f;
    b[i] = (float)((i * 53) % 97) / 9.0f - 4.0f;
  }
  for (int op = 0; op < BXFX_BIN_COUNT; op++)
    for (int mode = 0; mode < 3; mode++) {
      bxfx_kern_avx2.bin[op](a, b, o1, N, mode);
      bxfx_kern_gen.bin[op](a, b, o2, N, mode);
      cr_expect(memcmp(o1, o2, sizeof o1) == 0, "binary %d mode %d differs", op, mode);
    }
  /* streaming stores, into a deliberately misaligned output */
  static float big_o[N + 8];
  for (int op = 0; op < BXFX_BIN_COUNT; op++)
    for (int mode = 0; mode < 3; mode++) {
      bxfx_kern_avx2.bin_nt[op](a, b, big_o + 1, N, mode);
      bxfx_kern_gen.bin[op](a, b, o2, N, mode);
      cr_expect(memcmp(big_o + 1, o2, sizeof o2) == 0, "streaming binary %d mode %d differs", op, mode);
    }
  for (int op = 0; op < BXFX_UN_COUNT; op++) {
    bxfx_kern_avx2.un[op](a, o1, N);
    bxfx_kern_gen.un[op](a, o2, N);
    for (int i = 0; i < N; i++) {
      if ((isnan(o1[i]) && isnan(o2[i])) || o1[i] == o2[i]) continue;
      cr_assert(fabsf(o1[i] - o2[i]) <= 4e-6f * (fabsf(o2[i]) + 1e-30f) + 1e-37f,
                "unary %d at %g: %g vs %g", op, a[i], o1[i], o2[i]);
    }
  }
  double s1 = bxfx_kern_avx2.sum_f32(a, N), s2 = bxfx_kern_gen.sum_f32(a, N), ref = 0;
  for (int i = 0; i < N; i++) ref += a[i];
  cr_expect(fabs(s1 - ref) < 1e-3 && fabs(s2 - ref) < 1e-3, "sum %g %g vs %g", s1, s2, ref);
  /* The sums are the same tree of lane-wise adds in both variants (no
   * FMA, no reassociation): the same bits, for every length's tail. */
  cr_expect(s1 == s2, "sum_f32: avx2 %.17g vs generic %.17g", s1, s2);
  static double d[N];
  for (int i = 0; i < N; i++) d[i] = (double)a[i] * (1.0 + 1e-9 * i);
  for (int n = 0; n <= N; n += n < 600 ? 1 : 997) {
    double t1 = bxfx_kern_avx2.sum_f64(d, (size_t)n), t2 = bxfx_kern_gen.sum_f64(d, (size_t)n);
    cr_assert(t1 == t2, "sum_f64 of %d: avx2 %.17g vs generic %.17g", n, t1, t2);
  }
}

Test(flex_blocks, half_conversions_match_reference) {
  for (uint32_t h = 0; h < 65536; h++) {
    float a = bxfx_h2f((uint16_t)h), b = bxr_f16_to_f32((uint16_t)h);
    cr_assert((isnan(a) && isnan(b)) || memcmp(&a, &b, 4) == 0, "f16 %04x", h);
    float c = bxfx_bf2f((uint16_t)h), d = bxr_bf16_to_f32((uint16_t)h);
    cr_assert((isnan(c) && isnan(d)) || memcmp(&c, &d, 4) == 0, "bf16 %04x", h);
  }
  /* A stride through all float bit patterns, plus the block converters. */
  uint16_t v1[64], v2[64];
  float f[64];
  for (uint64_t u = 0; u < (1ull << 32); u += 65521 * 64) {
    for (int i = 0; i < 64; i++) {
      uint32_t x = (uint32_t)(u + (uint64_t)i * 65521);
      memcpy(&f[i], &x, 4);
    }
    bxfx_kern()->f32_to_f16(f, v1, 64);
    for (int i = 0; i < 64; i++) {
      v2[i] = bxr_f32_to_f16(f[i]);
      if (!isnan(f[i])) cr_assert_eq(v1[i], v2[i], "f16 of %a: %04x vs %04x", f[i], v1[i], v2[i]);
      if (!isnan(f[i])) cr_assert_eq(bxfx_f2bf(f[i]), bxr_f32_to_bf16(f[i]), "bf16 of %a", f[i]);
    }
  }
}

Test(flex_blocks, large_blocks_are_cached) {
  const bext_device *d;
  (d = bext_device_get("flex"));
  int64_t n = 1 << 20;   /* 4 MiB: a cached, huge-page-aligned block */
  bext_tensor *a = bext_zeros(&n, 1, BEXT_F32, d);
  cr_assert_not_null(a);
  bext_release(a);
  unsigned long before = bxfx_alloc_hits();
  bext_tensor *b = bext_ones(&n, 1, BEXT_F32, d);
  cr_assert_not_null(b);
  cr_expect_gt(bxfx_alloc_hits(), before, "a freed 4 MiB block was not reused");
  /* the reused block must hold the new values, not the old zeros */
  bext_tensor *tail = bext_slice(b, (int64_t[]){ n - 4 }, (int64_t[]){ n }, 1);
  float v[4];
  cr_assert(bext_read(tail, v, sizeof v));
  for (int i = 0; i < 4; i++) cr_expect_eq(v[i], 1.0f);
  bext_release(tail);
  bxfx_alloc_trim();
}

static void *failing(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud; (void)osize;
  if (nsize == 0) { free(ptr); return NULL; }
  return nsize >= 4096 ? NULL : realloc(ptr, nsize);
}

Test(flex_blocks, allocation_failure_is_an_error) {
  const bext_device *d;
  (d = bext_device_get("flex"));
  bext_set_allocator(failing, NULL);
  int64_t n = 100000;
  bext_tensor *t = bext_zeros(&n, 1, BEXT_F32, d);
  cr_expect_null(t);
  cr_expect(strstr(bext_last_error(), "memory") != NULL, "error: %s", bext_last_error());
  bext_set_allocator(NULL, NULL);
}
