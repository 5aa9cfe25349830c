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
