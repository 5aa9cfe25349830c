/* test_pool.c — the runtime's thread pool (runtime/src/pool.c, declared
 * in the backend-author header): every index exactly once, a forked child
 * runs inline, nested and small calls run inline, and through Flex, its
 * first user, threaded results equal serial ones bit for bit and
 * concurrent callers get exact values; OpenBLAS is single-threaded but
 * for the scoped calls that ask for the pool's count.  Runs with two pool
 * threads even on a one-core machine. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"

static void two_threads(void) { setenv("BEXT_NUM_THREADS", "2", 1); }

TestSuite(pool, .init = two_threads);

struct hits { atomic_uchar *seen; size_t n; };
static void mark(void *ctx, size_t b, size_t e) {
  struct hits *h = ctx;
  for (size_t i = b; i < e; i++) atomic_fetch_add(&h->seen[i], 1);
}

Test(pool, every_index_once) {
  cr_assert_eq(bxr_pool_threads(), 2);
  size_t n = 1000003;
  struct hits h = { calloc(n, 1), n };
  unsigned long before = bxr_pool_jobs_split();
  bxr_pool_for(n, 1, 16, mark, &h);
  cr_expect_gt(bxr_pool_jobs_split(), before, "a large range was not split");
  for (size_t i = 0; i < n; i++) cr_assert_eq(h.seen[i], 1, "index %zu run %d times", i, h.seen[i]);
  free(h.seen);
}

/* After fork the child has no workers: a large range must still finish
 * (inline) instead of waiting forever. */
Test(pool, forked_child_runs_inline, .timeout = 20) {
  size_t n = 1 << 20;
  struct hits h = { calloc(n, 1), n };
  bxr_pool_for(n, 1, 16, mark, &h);   /* workers exist now */
  pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (pid == 0) {
    memset(h.seen, 0, n);
    bxr_pool_for(n, 1, 16, mark, &h);
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
  bxr_pool_for(e - b, 1000000, 1, mark, &(struct hits){ h->seen + b, e - b });
}

Test(pool, nested_calls_run_inline) {
  size_t n = 200000;
  struct hits h = { calloc(n, 1), n };
  bxr_pool_for(n, 1, 1, nested, &h);
  for (size_t i = 0; i < n; i++) cr_assert_eq(h.seen[i], 1);
  free(h.seen);
}

Test(pool, small_work_stays_inline) {
  unsigned long before = bxr_pool_jobs_split();
  size_t n = 100;
  struct hits h = { calloc(n, 1), n };
  bxr_pool_for(n, 1, 1, mark, &h);
  cr_expect_eq(bxr_pool_jobs_split(), before);
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

/* Threaded ops give exactly the serial values: the split never changes
 * what an element computes, and the sum's chunks have fixed boundaries,
 * combined pairwise in order (flex_reduce.c), so it matches bit for bit. */
Test(pool, threaded_equals_serial) {
  const int64_t n = 1 << 18;
  bext_tensor *r[2][3];
  for (int pass = 0; pass < 2; pass++) {
    bxr_pool_set_threads(pass == 0 ? 1 : 2);
    unsigned long before = bxr_pool_jobs_split();
    r[pass][0] = bext_add(big(n, 1), big(n, 2));
    r[pass][1] = bext_tanh(big(n, 3));
    r[pass][2] = bext_sum(big(n, 4));
    if (pass == 0) cr_expect_eq(bxr_pool_jobs_split(), before, "one thread must not split");
    else cr_expect_gt(bxr_pool_jobs_split(), before, "two threads must split");
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
  cr_expect(memcmp(&s0, &s1, 4) == 0, "sum %.9g (serial) vs %.9g (threaded)", s0, s1);
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

Test(pool, concurrent_callers) {
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
Test(pool, huge_add_streams_correctly) {
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

/* bxr_blas_threads_begin/end (libtorch:cpu's matmul): OpenBLAS gets the
 * pool's thread count for one call and its single thread back after.
 * Looked up at run time: a build without OpenBLAS (BEXT_GPU_CHECK) has
 * no count to check, and says so. */
Test(pool, blas_threads_scoped_to_one_call) {
  int (*get)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "openblas_get_num_threads");
  if (!get) cr_skip_test("no OpenBLAS in this process");
  const int n = bxr_pool_threads();
  cr_assert_eq(n, 2);
  cr_assert_eq(get(), 1, "the pool keeps OpenBLAS single-threaded");
  const int old = bxr_blas_threads_begin();
  cr_assert_eq(old, 1);
  cr_assert_eq(get(), n, "OpenBLAS %d threads inside the scoped call, not the pool's %d", get(), n);
  bxr_blas_threads_end(old);
  cr_assert_eq(get(), 1, "OpenBLAS keeps %d threads after the scoped call", get());
}
