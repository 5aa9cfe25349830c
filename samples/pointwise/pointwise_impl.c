/* pointwise_impl.c — the per-backend implementations of
 * Pointwise::softplus_scaled.  Flex: a plain C loop over data pointers
 * (the pattern for kernels the op set cannot express); NdArray: the same
 * function composed from core ops.  Each records its name so the driver
 * can show which one the router picked. */
#include <math.h>

#include "pointwise.h"

const char *pointwise_last_impl;

/* In double for both dtypes; past beta*x = 30, log1p(exp(bx)) / beta is x
 * to double precision, and exp would overflow soon after. */
static double softplus(double x, double beta) {
  double bx = beta * x;
  return bx > 30.0 ? x : log1p(exp(bx)) / beta;
}

/* The loop over data pointers.  Ownership: x is ours (OWNED), so
 * bext_contiguous may return it or a row-major copy, and we release it at
 * the end; `out` is fresh from bext_empty, hence contiguous and uniquely
 * held, which bext_data_mut requires.  Both pointers are borrowed: they
 * die with the references, so the loop runs before the release. */
bext_tensor *pointwise_softplus_scaled_flex(bext_tensor *x, float beta) {
  pointwise_last_impl = "pointwise_softplus_scaled_flex";
  x = bext_contiguous(x);   /* any layout in, row-major out: element i is p[i] */
  if (!x) return NULL;
  bext_tensor *out = bext_empty(bext_shape(x), bext_rank(x), bext_dtype_of(x), bext_device_of(x));
  const void *src = out ? bext_data(x) : NULL;
  void *dst = src ? bext_data_mut(out) : NULL;
  if (!dst) goto fail;   /* the failing call set the error */

  int64_t n = bext_numel(x);
  switch (bext_dtype_of(x)) {
  case BEXT_F32: {
    const float *a = src;
    float *o = dst;
    for (int64_t i = 0; i < n; i++) o[i] = (float)softplus(a[i], beta);
    break;
  }
  case BEXT_F64: {
    const double *a = src;
    double *o = dst;
    for (int64_t i = 0; i < n; i++) o[i] = softplus(a[i], beta);
    break;
  }
  default:
    bext_set_error("Pointwise::softplus_scaled (flex): dtype %s is not supported (f32 and f64 are)",
                   bext_dtype_name(bext_dtype_of(x)));
    goto fail;
  }
  bext_release(x);
  return out;
fail:
  bext_release(x);
  bext_release(out);
  return NULL;
}

/* NdArray: log1p(exp(beta * x)) / beta through the op set.  Ops consume
 * their operand and answer a NULL one with an error citing the failure
 * that produced it, so the chain needs no checks in between. */
bext_tensor *pointwise_softplus_scaled_ndarray(bext_tensor *x, float beta) {
  pointwise_last_impl = "pointwise_softplus_scaled_ndarray";
  return bext_div_scalar(bext_log1p(bext_exp(bext_mul_scalar(x, beta))), beta);
}
