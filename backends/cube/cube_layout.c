/* cube_layout.c — layout ops on a cube device.  reshape, swap_dims,
 * permute, expand, slice and narrow are strided views (the runtime's
 * bxr_layout_view, as Flex); what must move data (a reshape the strides
 * cannot express, flip, cat, repeat_dim, slice_assign, and the backend's
 * copy member) launches stdlib/cube/layout.bext's copy kernel. */
#include "cube.h"

bext_tensor *cube_exec_layout(struct bxr_op *op) {
  switch (op->code) {
  case BXR_OP_RESHAPE: case BXR_OP_SWAP_DIMS: case BXR_OP_PERMUTE: case BXR_OP_EXPAND:
  case BXR_OP_SLICE: case BXR_OP_NARROW: {
    bext_tensor *v = bxr_layout_view(op);
    if (v || op->code != BXR_OP_RESHAPE) return v;
    return cube_not_yet(op);
  }
  default:
    return cube_not_yet(op);
  }
}

bool cube_copy_into(struct bext_device *dev, bext_tensor *dst, const bext_tensor *src, uint32_t flip_mask) {
  return bxr_error("%s: copies are not implemented on this device yet", dev->name);
}
