/* torch_shim.h — the C face of the libtorch peer used by bext-bench and
 * bext-matrix.
 *
 * Each timing call builds its inputs first (untimed), runs `iters`
 * iterations of one operation the way a C++ user would write it (a new
 * output tensor per call) and returns nanoseconds per iteration.  The loop
 * lives inside the shim so the C->C++ call is not part of the figure.
 * A result of a timed call is checked against a checksum so the work
 * cannot be optimized away; a negative return means libtorch threw. */
#ifndef BXBT_TORCH_SHIM_H
#define BXBT_TORCH_SHIM_H

#include <stdbool.h>
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
/* x * (0.5 + 0.5 tanh(0.79788456 x (1 + 0.044715 x^2))) as 9 eager ops */
double bxbt_torch_gelu_chain_ns(int64_t n, int iters);
/* at::softmax(x, 1) (log: at::log_softmax(x, 1)) of a rows x cols f32
 * matrix (bext-bench's ramp). */
double bxbt_torch_softmax_ns(int64_t rows, int64_t cols, bool log, int iters);
/* at::layer_norm(x, {cols}, w, b, 1e-5): x rows x cols, w = 1 + ramp(0.02),
 * b = ramp(0.03), both [cols]. */
double bxbt_torch_layer_norm_ns(int64_t rows, int64_t cols, int iters);
/* at::sum(a) of an n-element f32 tensor. */
double bxbt_torch_sum_ns(int64_t n, int iters);
/* at::matmul(a, b) of two n x n f32 matrices. */
double bxbt_torch_matmul_ns(int64_t n, int iters);
/* Autograd peers (bext's +autodiff rows).  Both build their leaves with
 * requires_grad (untimed), and each iteration is what a libtorch user
 * writes: the forward ops, loss.backward(), the gradients read, then
 * grads set to none (zero_grad(set_to_none=true), the torch 2 default).
 *
 * a + b of two n-element f32 leaves, summed, backward. */
double bxbt_torch_autograd_add_ns(int64_t n, int iters);
/* One training step of an MLP: x [batch, width] (constant), w1, w2
 * [width, width], b1, b2 [width] (leaves), target y [batch, width];
 *   loss = mean(e * e),  e = relu(x @ w1 + b1) @ w2 + b2 - y
 * loss.backward(), then for each parameter p.add_(p.grad(), -lr) under
 * NoGradGuard (torch.optim.SGD's update) and its grad set to none.  The
 * data are row-major host floats, copied; every call starts from them.
 * *last_loss: the loss of the last step (bext-bench checks it is bext's). */
double bxbt_torch_mlp_step_ns(const float *x, const float *w1, const float *b1, const float *w2,
                              const float *b2, const float *y, int64_t batch, int64_t width,
                              double lr, int iters, float *last_loss);
/* ---------------------------------------------------- the speed matrix
 * bext-matrix (matrix.c) times every op of bext's table against its
 * libtorch counterpart.  The peer is prepared once per cell (inputs made
 * from the same host data bext's from_data reads, untimed) and then run
 * between bext's repetitions, so drift hits both alike.  One entry for
 * every op family; the op is named by its bext op-table row ("add",
 * "sum", "cast", ...) and the family is found from the name. */

/* One input: row-major host data of `shape` in bext dtype `dtype` (the
 * bext_dtype value; f16/bf16 as bit patterns, bool as bytes 0/1).  With
 * `transposed`, the op sees the view with dims 0 and 1 swapped (the
 * strided input of the "T" cases). */
typedef struct bxbt_in {
  const void *data;
  int dtype;
  int rank;
  int64_t shape[8];
  int transposed;
} bxbt_in;

/* What the op reads besides its tensors (which fields, per op, as in
 * bext/ops.h's table comment). */
typedef struct bxbt_params {
  double s0, s1;        /* scalars (clamp lo/hi, *_scalar, full, mask_fill) */
  int64_t i0, i1;       /* powi exponent; narrow start/length; repeat times */
  int dim;              /* reductions, cumsum, cat, gather, narrow, ... */
  int all;              /* reductions: whole tensor */
  int dtype;            /* cast target, creation dtype */
  int rank;             /* reshape/expand/creation shape */
  int64_t shape[8];
  int ndims;            /* permute/flip/swap axes */
  int dims[8];
  int nranges;          /* slice / slice_assign ranges */
  int64_t start[8], end[8];
} bxbt_params;

typedef struct bxbt_prep bxbt_prep;

/* Builds the peer of one cell: NULL when libtorch has no same-semantics
 * counterpart for this op and these dtypes (bxbt_torch_error() says why:
 * an ATen "not implemented for 'Half'", or "no peer" for an op the shim
 * does not map).  The data is copied; the caller may free it after. */
bxbt_prep *bxbt_torch_prepare(const char *op, const bxbt_in *in, int n_in, const bxbt_params *p);
/* Runs the prepared op `iters` times (after one warm-up call) and returns
 * ns per iteration; negative when libtorch threw. */
double bxbt_torch_run_ns(bxbt_prep *prep, int iters);
void bxbt_torch_free(bxbt_prep *prep);

/* The last exception text ("" when none). */
const char *bxbt_torch_error(void);

#ifdef __cplusplus
}
#endif
#endif
