/* flex_impl.c — TorchOps::softplus on Flex, over the core ops:
 * log1p(exp(beta * x)) / beta.  (ATen's softplus switches to x itself
 * above a threshold of 20 in beta*x, where the two agree to f32 precision
 * anyway.) */
#include "torch_ext.h"

bext_tensor *torch_ops_softplus_flex(bext_tensor *x, double beta) {
  return bext_div_scalar(bext_log1p(bext_exp(bext_mul_scalar(x, beta))), beta);
}
