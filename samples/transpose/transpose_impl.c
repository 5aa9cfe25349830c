/* transpose_impl.c — the per-backend implementations of
 * MyExtension::transpose_2d that the generated header asks for.  Inside,
 * the handle is already on that backend, so core ops work directly.  Each
 * records its name so the driver can show which one the router picked. */
#include "transpose.h"

const char *transpose_last_impl;

/* Flex has strided views: swap the dims (free) and materialize once. */
bext_tensor *my_extension_transpose_2d_flex(bext_tensor *input) {
  transpose_last_impl = "my_extension_transpose_2d_flex";
  return bext_contiguous(bext_swap_dims(input, 0, 1));
}

/* NdArray is the reference: the same through a full permutation. */
bext_tensor *my_extension_transpose_2d_ndarray(bext_tensor *input) {
  transpose_last_impl = "my_extension_transpose_2d_ndarray";
  return bext_contiguous(bext_permute(input, (const int[]){ 1, 0 }, 2));
}

/* cube:cpu: views as on Flex, and the copy is the stdlib's convert
 * kernel (the Cube arm exists since the cube backend is in the build). */
bext_tensor *my_extension_transpose_2d_cube(bext_tensor *input) {
  transpose_last_impl = "my_extension_transpose_2d_cube";
  return bext_contiguous(bext_swap_dims(input, 0, 1));
}

/* Autodiff, written by hand with the custom-node C API (bext.h,
 * bext_autodiff_record): the forward is the method itself on the input's
 * value (bext_autodiff_value: the inner device's tensor, so the call
 * routes to the Flex or NdArray implementation above), and one node
 * records it with its own backward: the gradient of a transpose is the
 * transposed gradient.  Nothing needs saving. */
static bool transpose_backward(void *state, bext_tensor *grad, bext_tensor *const *saved, const bool *needs,
                               bext_tensor **grad_in) {
  (void)state;
  (void)saved;
  if (needs[0] && !(grad_in[0] = bext_contiguous(bext_swap_dims(bext_retain(grad), 0, 1)))) return false;
  return true;
}

bext_tensor *my_extension_transpose_2d_autodiff(bext_tensor *input) {
  bext_tensor *value = bext_autodiff_value(input);                 /* NEW, untracked, inner device */
  bext_tensor *y = value ? my_extension_transpose_2d(value) : NULL; /* consumes value */
  const char *inner = transpose_last_impl;
  bext_custom_node n = {.name = "MyExtension::transpose_2d", .n_in = 1, .inputs = &input,
                        .backward = transpose_backward};
  bext_tensor *out = y ? bext_autodiff_record(&n, y) : NULL;       /* consumes y */
  bext_release(input);                                             /* owned: consumed */
  transpose_last_impl = inner ? "my_extension_transpose_2d_autodiff" : NULL;
  return out;
}
