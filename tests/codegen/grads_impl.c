/* grads_impl.c — the user's implementations of ext/grads.bext for
 * e2e_grads.c: Flex and NdArray kernels (core ops, one function for
 * both) and the hand-written Autodiff implementation of Grads::cubic. */
#include <string.h>

#include "grads.h"

const char *grads_last_impl;    /* which implementation ran last */
int grads_cubic_autodiff_calls;

static bext_tensor *cubic(bext_tensor *x, bext_tensor *w) {   /* x owned, w borrowed */
  return bext_mul(bext_mul(bext_retain(x), x), bext_retain(w));
}
bext_tensor *grads_cubic_flex(bext_tensor *x, bext_tensor *w) { grads_last_impl = "flex"; return cubic(x, w); }
bext_tensor *grads_cubic_ndarray(bext_tensor *x, bext_tensor *w) { grads_last_impl = "ndarray"; return cubic(x, w); }

/* d(x*x*w)/dx = 2*x*w, d/dw = x*x: saved are the inputs' values. */
static bool cubic_backward(void *state, bext_tensor *grad, bext_tensor *const *saved, const bool *needs,
                           bext_tensor **grad_in) {
  (void)state;
  bext_tensor *x = saved[0], *w = saved[1];
  if (needs[0] &&
      !(grad_in[0] = bext_mul(bext_retain(grad), bext_mul_scalar(bext_mul(bext_retain(x), bext_retain(w)), 2.0))))
    return false;
  if (needs[1] && !(grad_in[1] = bext_mul(bext_retain(grad), bext_mul(bext_retain(x), bext_retain(x)))))
    return false;
  return true;
}

bext_tensor *grads_cubic_autodiff(bext_tensor *x, bext_tensor *w) {
  grads_cubic_autodiff_calls++;
  bext_tensor *xv = bext_autodiff_value(x), *wv = bext_autodiff_value(w), *out = NULL;
  bext_tensor *y = xv && wv ? grads_cubic(bext_retain(xv), wv) : NULL;   /* the inner device's kernel */
  if (y) {
    bext_tensor *const in[2] = {x, w}, *const sv[2] = {xv, wv};
    bext_custom_node n = {.name = "Grads::cubic", .n_in = 2, .inputs = in, .n_saved = 2, .saved = sv,
                          .backward = cubic_backward};
    out = bext_autodiff_record(&n, y);
  }
  bext_release(xv);
  bext_release(wv);
  bext_release(x);   /* owned; w is borrowed */
  return out;
}

static bext_tensor *mixed(bext_tensor *x, bext_tensor *w, float alpha) {
  bext_tensor *s = bext_mul_scalar(bext_mul(bext_sin(bext_retain(x)), bext_retain(w)), alpha);
  return bext_add(s, bext_exp(x));
}
bext_tensor *grads_mixed_flex(bext_tensor *x, bext_tensor *w, float alpha) {
  grads_last_impl = "flex";
  return mixed(x, w, alpha);
}
bext_tensor *grads_mixed_ndarray(bext_tensor *x, bext_tensor *w, float alpha) {
  grads_last_impl = "ndarray";
  return mixed(x, w, alpha);
}

bext_tensor *grads_my_matmul_flex(bext_tensor *lhs, bext_tensor *rhs) {
  grads_last_impl = "flex";
  return bext_matmul(lhs, rhs);
}
bext_tensor *grads_my_matmul_ndarray(bext_tensor *lhs, bext_tensor *rhs) {
  grads_last_impl = "ndarray";
  return bext_matmul(lhs, rhs);
}
bext_tensor *grads_add_bcast_flex(bext_tensor *lhs, bext_tensor *rhs) { return bext_add(lhs, rhs); }
bext_tensor *grads_add_bcast_ndarray(bext_tensor *lhs, bext_tensor *rhs) { return bext_add(lhs, rhs); }
