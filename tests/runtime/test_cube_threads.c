/* test_cube_threads.c — cube:cpu from several threads at once (in the
 * TSan list): threads that ask the device for one stdlib instantiation
 * get one kernel from one compile (cube_kernel's per-device cache), and
 * every thread's op then gives the right values; threads tuning one
 * launch at once agree on one decision (cube_tune.c). */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cube/cube.h"

#define THREADS 4

static pthread_barrier_t go;

struct job {
  int id;
  struct bxr_kernel *k;
  bool ok;
};

static void *worker(void *arg) {
  struct job *j = arg;
  const bext_device *cube = bext_device_get("cube:cpu");
  struct bext_device *dev = bxr_device_resolve(cube, "test");
  pthread_barrier_wait(&go);
  j->k = dev ? cube_kernel(dev, "binary_float_f64_7_0_1") : NULL;   /* min, contiguous */
  int64_t n = 1000 + j->id;
  bext_tensor *a = bext_arange(0, (double)n, 1, BEXT_F64, cube);
  bext_tensor *b = bext_full(&n, 1, 500.5, BEXT_F64, cube);
  bext_tensor *m = a && b ? bext_min(a, b) : NULL;
  double *got = malloc(sizeof(double) * (size_t)n);
  j->ok = j->k && m && bext_read(m, got, sizeof(double) * (size_t)n);
  for (int64_t i = 0; j->ok && i < n; i++) j->ok = got[i] == (i <= 500 ? (double)i : 500.5);
  free(got);
  bext_release(m);
  return NULL;
}

Test(cube_threads, one_compile_per_instantiation) {
  setenv("BEXT_CACHE_DIR", "off", 1);   /* count compiles, not disk hits */
  struct bxr_kernel_stats st0, st1;
  bxr_kernel_cpu_stats(&st0);
  pthread_barrier_init(&go, NULL, THREADS);
  pthread_t t[THREADS];
  struct job jobs[THREADS];
  for (int i = 0; i < THREADS; i++) {
    jobs[i] = (struct job){.id = i};
    cr_assert_eq(pthread_create(&t[i], NULL, worker, &jobs[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&go);
  bxr_kernel_cpu_stats(&st1);
  for (int i = 0; i < THREADS; i++) {
    cr_expect(jobs[i].ok, "thread %d: %s", i, bext_last_error());
    cr_expect_eq(jobs[i].k, jobs[0].k, "thread %d got another kernel for the same instantiation", i);
  }
  /* min (shared), arange and full: three instantiations, one compile each */
  cr_expect_eq(st1.compiles - st0.compiles, 3, "compiles: %lu", st1.compiles - st0.compiles);
}

/* Threads tuning one key at once (cube_tune.c times outside its lock):
 * each gets a valid cube_dim and the same values, and the first to
 * finish decides for all, so the cache file holds one decision. */
#define TUNE_N 70001

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f) { return remove(p); }

struct tune_job {
  float *out;
  bool ok;
};

static void *tune_worker(void *arg) {
  struct tune_job *j = arg;
  const bext_device *cube = bext_device_get("cube:cpu");
  int64_t n = TUNE_N;
  pthread_barrier_wait(&go);
  bext_tensor *e = bext_sin(bext_arange(0, TUNE_N, 1, BEXT_F32, cube));
  j->ok = e && bext_numel(e) == n && bext_read(e, j->out, sizeof(float) * TUNE_N);
  bext_release(e);
  return NULL;
}

Test(cube_threads, one_tune_decision_per_key) {
  char dir[] = "/tmp/bext-tune-threads-XXXXXX", path[64];
  cr_assert_not_null(mkdtemp(dir));
  setenv("BEXT_CACHE_DIR", dir, 1);
  unsetenv("BEXT_AUTOTUNE");
  pthread_barrier_init(&go, NULL, THREADS);
  pthread_t t[THREADS];
  struct tune_job jobs[THREADS];
  for (int i = 0; i < THREADS; i++) {
    jobs[i] = (struct tune_job){.out = malloc(sizeof(float) * TUNE_N)};
    cr_assert_eq(pthread_create(&t[i], NULL, tune_worker, &jobs[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&go);
  for (int i = 0; i < THREADS; i++) {
    cr_expect(jobs[i].ok, "thread %d: %s", i, bext_last_error());
    cr_expect(memcmp(jobs[i].out, jobs[0].out, sizeof(float) * TUNE_N) == 0, "thread %d: other values", i);
  }
  snprintf(path, sizeof path, "%s/autotune.txt", dir);
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f, "no %s", path);
  int lines = 0;
  for (int c; (c = fgetc(f)) != EOF;) lines += c == '\n';
  fclose(f);
  cr_expect_eq(lines, 2, "a header and one decision, found %d lines", lines);
  for (int i = 0; i < THREADS; i++) free(jobs[i].out);
  nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}
