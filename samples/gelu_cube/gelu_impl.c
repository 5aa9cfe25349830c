/* gelu_impl.c — CubeActivations::gelu on Cube and on Flex: the same
 * implementation, allocating the output and launching the kernel through
 * its generated launcher, 256 units per cube.  The kernel reads element
 * ABSOLUTE_POS of its input, so the input is made contiguous first. */
#include "gelu_cube.h"

static bext_tensor *gelu_launch(bext_tensor *x) {
  x = bext_contiguous(x);
  if (!x) return NULL;
  bext_tensor *y = bext_empty(bext_shape(x), bext_rank(x), bext_dtype_of(x), bext_device_of(x));
  int64_t n = bext_numel(x);
  bext_grid grid = {{(uint32_t)((n + 255) / 256), 1, 1}, {256, 1, 1}};
  bool ok = y && (n == 0 || gelu_kernel_launch(&grid, x, y));
  bext_release(x);
  if (!ok) {
    bext_release(y);
    return NULL;
  }
  return y;
}

bext_tensor *cube_activations_gelu_cube(bext_tensor *x) { return gelu_launch(x); }
bext_tensor *cube_activations_gelu_flex(bext_tensor *x) { return gelu_launch(x); }
