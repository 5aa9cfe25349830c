/* remote_ops_impl.c — the Flex implementations of remote_ops.bext, linked
 * into the test (the client's own flex runs) and into remote_ext_server
 * (what the server runs for a remote call). */
#include "remote_ops.h"

bext_tensor *remote_ops_affine_flex(bext_tensor *x, float a, float b) {
  if (a == 0.0f) {   /* the tests' deliberate failure */
    bext_release(x);
    return NULL;
  }
  return bext_add_scalar(bext_mul_scalar(x, a), b);
}

bext_tensor *remote_shapes_row_sums_flex(bext_tensor *x, double scale) {
  return bext_mul_scalar(bext_sum_dim(x, 1, false), scale);
}
