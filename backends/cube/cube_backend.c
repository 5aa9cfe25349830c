/* cube_backend.c — the Cube backend's definition object
 * (bxr_backend_cube): host-memory storage through the runtime's helpers
 * (like NdArray), kernels through the runtime's CPU JIT (cube:cpu), and
 * one exec entry per row of the op table, each a launch of stdlib kernels
 * (cube.h).  Rows this device does not run yet point at cube_not_yet, so
 * they fail with a named error that the conformance matrix lists as
 * unsupported; none is NULL. */
#include <string.h>

#include "cube.h"

/* open: the cube targets other than cpu need a GPU runtime of their own
 * (kernel_prepare / kernel_launch for their memory): not in this build. */
static bool cube_device_open(struct bext_device *dev) {
  if (strcmp(dev->target, "cpu") != 0)
    return bxr_error("%s: the cube target `%s` is not available in this build (only cube:cpu)", dev->name,
                     dev->target);
  return cube_open(dev);
}

static void cube_device_close(struct bext_device *dev) {
  cube_close(dev);
  bxr_host_cache_trim();
}

static void cube_memory(struct bext_device *dev, bext_memory *st) { st->cached_bytes = bxr_host_cache_bytes(); }

static bool cube_copy(bext_tensor *dst, const bext_tensor *src) {
  if (!cube_dtype_ok(src->dtype)) return bxr_host_copy(dst, src);   /* a dtype without kernels moves as bytes */
  return cube_copy_into(dst->device, dst, src, 0);
}

#define EW cube_exec_elementwise
#define LAY cube_exec_layout
#define RED cube_exec_reduce
const struct bxr_backend bxr_backend_cube = {
  .api_version = BXR_BACKEND_API_VERSION,
  .name = "cube",
  .kind = BEXT_BACKEND_CUBE,
  .open = cube_device_open,
  .close = cube_device_close,
  .memory = cube_memory,
  .storage_alloc = bxr_cached_storage_alloc,   /* the large-buffer cache Flex uses */
  .storage_free = bxr_cached_storage_free,
  .inline_small = true,
  .host_memory = true,
  .from_data = bxr_host_from_data,
  .read = bxr_host_read,
  .copy = cube_copy,
  /* cube:cpu: the runtime's CPU JIT (kernel_cpu.c) */
  .kernel_prepare = bxr_kernel_cpu_prepare,
  .kernel_launch = bxr_kernel_cpu_launch,
  .exec = {
    /* creation (cube_create.c) */
    [BXR_OP_EMPTY] = cube_exec_create, [BXR_OP_ZEROS] = cube_exec_create,
    [BXR_OP_ONES] = cube_exec_create, [BXR_OP_FULL] = cube_exec_create,
    [BXR_OP_ARANGE] = cube_exec_create, [BXR_OP_RANDOM_UNIFORM] = cube_exec_create,
    [BXR_OP_RANDOM_NORMAL] = cube_exec_create,
    /* layout: views where possible, else the copy kernel (cube_layout.c) */
    [BXR_OP_RESHAPE] = LAY, [BXR_OP_SWAP_DIMS] = LAY, [BXR_OP_PERMUTE] = LAY,
    [BXR_OP_EXPAND] = LAY, [BXR_OP_SLICE] = LAY, [BXR_OP_SLICE_ASSIGN] = LAY,
    [BXR_OP_CAT] = LAY, [BXR_OP_FLIP] = LAY, [BXR_OP_NARROW] = LAY, [BXR_OP_REPEAT_DIM] = LAY,
    /* masks and elementwise (cube_elem.c) */
    [BXR_OP_MASK_WHERE] = cube_exec_mask, [BXR_OP_MASK_FILL] = cube_exec_mask,
    [BXR_OP_ADD] = EW, [BXR_OP_SUB] = EW, [BXR_OP_MUL] = EW, [BXR_OP_DIV] = EW,
    [BXR_OP_REM] = EW, [BXR_OP_POW] = EW, [BXR_OP_MAX] = EW, [BXR_OP_MIN] = EW,
    [BXR_OP_ADD_SCALAR] = EW, [BXR_OP_SUB_SCALAR] = EW, [BXR_OP_MUL_SCALAR] = EW,
    [BXR_OP_DIV_SCALAR] = EW, [BXR_OP_REM_SCALAR] = EW, [BXR_OP_POW_SCALAR] = EW,
    [BXR_OP_MAX_SCALAR] = EW, [BXR_OP_MIN_SCALAR] = EW,
    [BXR_OP_EQ] = EW, [BXR_OP_NE] = EW, [BXR_OP_GT] = EW, [BXR_OP_GE] = EW,
    [BXR_OP_LT] = EW, [BXR_OP_LE] = EW,
    [BXR_OP_EQ_SCALAR] = EW, [BXR_OP_NE_SCALAR] = EW, [BXR_OP_GT_SCALAR] = EW,
    [BXR_OP_GE_SCALAR] = EW, [BXR_OP_LT_SCALAR] = EW, [BXR_OP_LE_SCALAR] = EW,
    [BXR_OP_AND] = EW, [BXR_OP_OR] = EW, [BXR_OP_XOR] = EW, [BXR_OP_NOT] = EW,
    [BXR_OP_NEG] = EW, [BXR_OP_ABS] = EW, [BXR_OP_EXP] = EW, [BXR_OP_LOG] = EW,
    [BXR_OP_LOG1P] = EW, [BXR_OP_SQRT] = EW, [BXR_OP_RSQRT] = EW, [BXR_OP_SIN] = EW,
    [BXR_OP_COS] = EW, [BXR_OP_TANH] = EW, [BXR_OP_ERF] = EW, [BXR_OP_SIGMOID] = EW,
    [BXR_OP_RELU] = EW, [BXR_OP_RECIP] = EW, [BXR_OP_FLOOR] = EW, [BXR_OP_CEIL] = EW,
    [BXR_OP_ROUND] = EW, [BXR_OP_SIGN] = EW, [BXR_OP_CLAMP] = EW, [BXR_OP_POWI] = EW,
    [BXR_OP_CAST] = cube_exec_cast,

    /* reductions, cumsum (cube_reduce.c), matmul (cube_matmul.c), indexing
     * (cube_index.c) */
    [BXR_OP_SUM] = RED, [BXR_OP_MEAN] = RED, [BXR_OP_PROD] = RED,
    [BXR_OP_MAX_REDUCE] = RED, [BXR_OP_MIN_REDUCE] = RED, [BXR_OP_ARGMAX] = RED,
    [BXR_OP_ARGMIN] = RED, [BXR_OP_ANY] = RED, [BXR_OP_ALL] = RED,
    [BXR_OP_CUMSUM] = cube_exec_cumsum,
    [BXR_OP_MATMUL] = cube_exec_matmul,
    [BXR_OP_GATHER] = cube_exec_gather, [BXR_OP_SELECT] = cube_exec_gather,
    [BXR_OP_SCATTER_ADD] = cube_exec_scatter_add, [BXR_OP_SELECT_ASSIGN] = cube_exec_scatter_add,
  },
};
#undef EW
#undef LAY
#undef RED
