/* gelu_cloop.c — the peer of bext-bench's cube_gelu_16M row: GELU,
 * x * 0.5 * (1 + erf(x / sqrt(2))), as a hand-written C loop that calls
 * glibc's libmvec.  This file alone is compiled with -O3 -ffast-math:
 * glibc's math.h then declares erff's SIMD variants and GCC's vectorizer
 * calls _ZGVdN8v_erff (AVX2 clone, picked at run time when the CPU has
 * it) or _ZGVbN4v_erff.  Split over `threads` threads like the other C
 * loops of the bench. */
#include <math.h>
#include <pthread.h>
#include <stddef.h>

#include "gelu_cloop.h"

struct job {
  const float *x;
  float *y;
  size_t lo, hi;
};

__attribute__((target_clones("avx2,fma", "default"))) static void gelu_range(const float *x, float *y, size_t lo,
                                                                              size_t hi) {
  for (size_t i = lo; i < hi; i++) y[i] = x[i] * 0.5f * (1.0f + erff(x[i] * 0.70710678f));
}

static void *run(void *arg) {
  struct job *j = arg;
  gelu_range(j->x, j->y, j->lo, j->hi);
  return NULL;
}

void bxbt_gelu_cloop(const float *x, float *y, size_t n, int threads) {
  pthread_t th[64];
  struct job jobs[64];
  int T = threads < 1 ? 1 : threads > 64 ? 64 : threads;
  for (int t = 0; t < T; t++) {
    jobs[t] = (struct job){x, y, n * (size_t)t / (size_t)T, n * (size_t)(t + 1) / (size_t)T};
    if (t > 0) pthread_create(&th[t], NULL, run, &jobs[t]);
  }
  run(&jobs[0]);
  for (int t = 1; t < T; t++) pthread_join(th[t], NULL);
}
