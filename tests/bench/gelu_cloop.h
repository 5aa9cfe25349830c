/* gelu_cloop.h — bext-bench's libmvec GELU loop (gelu_cloop.c). */
#ifndef BXBT_GELU_CLOOP_H
#define BXBT_GELU_CLOOP_H

#include <stddef.h>

/* y[i] = GELU(x[i]) for i < n, on `threads` threads. */
void bxbt_gelu_cloop(const float *x, float *y, size_t n, int threads);

#endif
