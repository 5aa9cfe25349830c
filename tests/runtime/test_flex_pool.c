/* test_flex_pool.c — Flex building blocks: the thread pool (every index
 * exactly once, threaded results equal serial ones bit for bit, nested
 * calls run inline), the two kernel variants agreeing, half-precision
 * conversions against the runtime's reference, and the caching allocator
 * (reuse of large blocks; failures of the allocation hook surface as
 * errors).  Runs with two pool threads even on a one-core machine. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../backends/flex/flex_internal.h"

static void two_threads(void) { setenv("BEXT_NUM_THREADS", "2", 1); }

TestSuite(flex_pool, .init = two_threads);

struct hits { atomic_uchar *seen; size_t n; };
static void mark(void *ctx, size_t b, size_t e) {
  struct hits *h = ctx;
  for (size_t i = b; i < e; i++) atomic_fetch_add(&h->seen[i], 1);
}

Test(flex_pool, every_index_once) {
  cr_assert_eq(bxfx_num_threads(), 2);
  size_t n = 1000003;
  struct hits h = { calloc(n, 1), n };
  unsigned long before = bxfx_pool_jobs_split();
  bxfx_parallel_for(n, 1, 16, mark, &h);
  cr_expect_gt(bxfx_pool_jobs_split(), before, "a large range was not split");
  for (size_t i = 0; i < n; i++) cr_assert_eq(h.seen[i], 1, "index %zu run %d times", i, h.seen[i]);
  free(h.seen);
}

/* After fork the child has no workers: a large range must still finish
 * (inline) instead of waiting forever. */
Test(flex_pool, forked_child_runs_inline, .timeout = 20) {
  size_t n = 1 << 20;
  struct hits h = { calloc(n, 1), n };
  bxfx_parallel_for(n, 1, 16, mark, &h);   /* workers exist now */
  pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (pid == 0) {
    memset(h.seen, 0, n);
    bxfx_parallel_for(n, 1, 16, mark, &h);
    for (size_t i = 0; i < n; i++)
      if (h.seen[i] != 1) _exit(1);
    _exit(0);
  }
  int status = 0;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
  free(h.seen);
}

static void nested(void *ctx, size_t b, size_t e) {
  struct hits *h = ctx;
  /* A call from inside a chunk must run inline, not deadlock. */
  bxfx_parallel_for(e - b, 1000000, 1, mark, &(struct hits){ h->seen + b, e - b });
}

Test(flex_pool, nested_calls_run_inline) {
  size_t n = 200000;
  struct hits h = { calloc(n, 1), n };
  bxfx_parallel_for(n, 1, 1, nested, &h);
  for (size_t i = 0; i < n; i++) cr_assert_eq(h.seen[i], 1);
  free(h.seen);
}

Test(flex_pool, small_work_stays_inline) {
  unsigned long before = bxfx_pool_jobs_split();
  size_t n = 100;
  struct hits h = { calloc(n, 1), n };
  bxfx_parallel_for(n, 1, 1, mark, &h);
  cr_expect_eq(bxfx_pool_jobs_split(), before);
  free(h.seen);
}

static bext_tensor *big(int64_t n, unsigned seed) {
  const bext_device *d;
  (d = bext_device_get("flex"));
  return bext_random_uniform((int64_t[]){ n }, 1, -3.0, 3.0, seed, BEXT_F32, d);
}

static float *values(bext_tensor *t) {
  int64_t n = bext_numel(t);
  float *v = malloc(sizeof(float) * (size_t)n);
  cr_assert(bext_read(t, v, sizeof(float) * (size_t)n));
  return v;
}

/* Threaded ops give exactly the serial values (the split never changes
 * what an element computes; the f32 sum's partials are fixed by the
 * thread count, so only it may differ in the last bits). */
Test(flex_pool, threaded_equals_serial) {
  const int64_t n = 1 << 18;
  bext_tensor *r[2][3];
  for (int pass = 0; pass < 2; pass++) {
    bxfx_set_num_threads(pass == 0 ? 1 : 2);
    unsigned long before = bxfx_pool_jobs_split();
    r[pass][0] = bext_add(big(n, 1), big(n, 2));
    r[pass][1] = bext_tanh(big(n, 3));
    r[pass][2] = bext_sum(big(n, 4));
    if (pass == 0) cr_expect_eq(bxfx_pool_jobs_split(), before, "one thread must not split");
    else cr_expect_gt(bxfx_pool_jobs_split(), before, "two threads must split");
  }
  for (int k = 0; k < 2; k++) {
    float *a = values(r[0][k]), *b = values(r[1][k]);
    cr_expect(memcmp(a, b, sizeof(float) * (size_t)n) == 0, "op %d differs threaded", k);
    free(a);
    free(b);
  }
  float s0, s1;
  bext_read(r[0][2], &s0, 4);
  bext_read(r[1][2], &s1, 4);
  cr_expect(fabsf(s0 - s1) <= 1e-3f * (fabsf(s0) + 1.0f), "sum %g vs %g", s0, s1);
  for (int p = 0; p < 2; p++)
    for (int k = 0; k < 3; k++) bext_release(r[p][k]);
}

/* Two user threads running large ops at once: one owns the pool, the
 * other runs inline; both must get exact results. */
static void *adder(void *arg) {
  int64_t n = 300000;
  const bext_device *d;
  (d = bext_device_get("flex"));
  bext_tensor *a = bext_arange(0, (double)n, 1, BEXT_F32, d);
  bext_tensor *c = bext_add(bext_retain(a), bext_mul_scalar(bext_retain(a), (double)(intptr_t)arg));
  float *v = malloc(sizeof(float) * (size_t)n);
  bool ok = c && bext_read(c, v, sizeof(float) * (size_t)n);
  for (int64_t i = 0; ok && i < n; i++) ok = v[i] == (float)i + (float)i * (float)(intptr_t)arg;
  free(v);
  bext_release(a);
  bext_release(c);
  return (void *)(intptr_t)ok;
}

Test(flex_pool, concurrent_callers) {
  for (int round = 0; round < 5; round++) {
    pthread_t t[3];
    for (intptr_t k = 0; k < 3; k++) pthread_create(&t[k], NULL, adder, (void *)(k + 2));
    for (int k = 0; k < 3; k++) {
      void *ok;
      pthread_join(t[k], &ok);
      cr_expect(ok != NULL, "thread %d got wrong values", k);
    }
  }
}

/* An add whose output is past the streaming threshold (32 MiB). */
Test(flex_pool, huge_add_streams_correctly) {
  const bext_device *d;
  (d = bext_device_get("flex"));
  const int64_t n = ((int64_t)1 << 23) + 5;
  bext_tensor *a = bext_arange(0, (double)n, 1, BEXT_F32, d);
  bext_tensor *b = bext_mul_scalar(bext_retain(a), 2.0);
  bext_tensor *c = bext_add(bext_retain(a), bext_retain(b));
  cr_assert_not_null(c, "%s", bext_last_error());
  float *v = values(c);
  for (int64_t i = 0; i < n; i++) {
    float want = (float)i + (float)(2 * i);
    if (v[i] != want) cr_assert_fail("c[%lld] = %g, want %g", (long long)i, v[i], want);
  }
  free(v);
  bext_release(a);
  bext_release(b);
  bext_release(c);
}

Test(flex_pool, kernel_variants_agree) {
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
}

Test(flex_pool, half_conversions_match_reference) {
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

Test(flex_pool, large_blocks_are_cached) {
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

Test(flex_pool, allocation_failure_is_an_error) {
  const bext_device *d;
  (d = bext_device_get("flex"));
  bext_set_allocator(failing, NULL);
  int64_t n = 100000;
  bext_tensor *t = bext_zeros(&n, 1, BEXT_F32, d);
  cr_expect_null(t);
  cr_expect(strstr(bext_last_error(), "memory") != NULL, "error: %s", bext_last_error());
  bext_set_allocator(NULL, NULL);
}
