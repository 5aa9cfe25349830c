/* torch_shim.h — the C face of the libtorch peer used by bext-bench.
 *
 * Each timing call builds its inputs first (untimed), runs `iters`
 * iterations of one operation the way a C++ user would write it (a new
 * output tensor per call) and returns nanoseconds per iteration.  The loop
 * lives inside the shim so the C->C++ call is not part of the figure.
 * A result of a timed call is checked against a checksum so the work
 * cannot be optimized away; a negative return means libtorch threw. */
#ifndef BXBT_TORCH_SHIM_H
#define BXBT_TORCH_SHIM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Sets libtorch's intra-op thread count; returns what it reports back. */
int bxbt_torch_set_threads(int n);
/* at::add(a, b) of two n-element f32 tensors. */
double bxbt_torch_add_ns(int64_t n, int iters);
/* at::exp(a) of an n-element f32 tensor. */
double bxbt_torch_exp_ns(int64_t n, int iters);
/* at::sum(a) of an n-element f32 tensor. */
double bxbt_torch_sum_ns(int64_t n, int iters);
/* at::matmul(a, b) of two n x n f32 matrices. */
double bxbt_torch_matmul_ns(int64_t n, int iters);
/* The last exception text ("" when none). */
const char *bxbt_torch_error(void);

#ifdef __cplusplus
}
#endif
#endif
