/* flex_backend.c — the Flex backend's definition object (bxr_backend_flex):
 * storage through the caching allocator, host data movement, and one exec
 * entry for every row of the op table (ops.h).  tests/runtime/test_flex.c
 * checks that no entry is NULL, so a row added to the table without a Flex
 * kernel fails the suite (a count assert here would break the shared build
 * the moment the table grows). */
#include <string.h>

#include "flex_internal.h"

/* copy: dst is fresh and contiguous with src's dtype and shape. */
static bool flex_copy(bext_tensor *dst, const bext_tensor *src) {
  int64_t cs[BEXT_MAX_RANK];
  bxr_contiguous_strides(dst->rank, dst->shape, cs);
  bxfx_copy_strided(bxr_data(dst), cs, bxr_data(src), src->strides, src->rank, src->shape,
                    bext_dtype_size(src->dtype));
  return true;
}

/* bext_device_close: the idle large buffers go back to the hook. */
static void flex_close(struct bext_device *dev) { bxr_host_cache_trim(); }

static void flex_memory(struct bext_device *dev, bext_memory *st) {
  st->cached_bytes = bxr_host_cache_bytes();
}

#define EW bxfx_exec_elementwise
const struct bxr_backend bxr_backend_flex = {
  .api_version = BXR_BACKEND_API_VERSION,
  .name = "flex",
  .kind = BEXT_BACKEND_FLEX,
  .close = flex_close,
  .memory = flex_memory,
  .storage_alloc = bxr_cached_storage_alloc,
  .storage_free = bxr_cached_storage_free,
  .inline_small = true,   /* host memory: small buffers ride in the tensor block */
  .host_memory = true,    /* bext_data / bext_data_mut hand out storage->data */
  .from_data = bxr_host_from_data,
  .read = bxr_host_read,
  .copy = flex_copy,
  /* kernels in the kernel IR (Fusion's fused chains): the runtime's CPU JIT */
  .kernel_prepare = bxr_kernel_cpu_prepare,
  .kernel_launch = bxr_kernel_cpu_launch,
  .exec = {
    /* creation */
    [BXR_OP_EMPTY] = bxfx_exec_create, [BXR_OP_ZEROS] = bxfx_exec_create,
    [BXR_OP_ONES] = bxfx_exec_create, [BXR_OP_FULL] = bxfx_exec_create,
    [BXR_OP_ARANGE] = bxfx_exec_create, [BXR_OP_RANDOM_UNIFORM] = bxfx_exec_create,
    [BXR_OP_RANDOM_NORMAL] = bxfx_exec_create,
    /* layout: views where possible */
    [BXR_OP_RESHAPE] = bxfx_exec_layout, [BXR_OP_SWAP_DIMS] = bxfx_exec_layout,
    [BXR_OP_PERMUTE] = bxfx_exec_layout, [BXR_OP_EXPAND] = bxfx_exec_layout,
    [BXR_OP_SLICE] = bxfx_exec_layout, [BXR_OP_SLICE_ASSIGN] = bxfx_exec_layout,
    [BXR_OP_CAT] = bxfx_exec_layout, [BXR_OP_FLIP] = bxfx_exec_layout,
    [BXR_OP_NARROW] = bxfx_exec_layout, [BXR_OP_REPEAT_DIM] = bxfx_exec_layout,
    /* indexing */
    [BXR_OP_GATHER] = bxfx_exec_index, [BXR_OP_SCATTER_ADD] = bxfx_exec_index,
    [BXR_OP_SELECT] = bxfx_exec_index, [BXR_OP_SELECT_ASSIGN] = bxfx_exec_index,
    [BXR_OP_MASK_WHERE] = bxfx_exec_mask, [BXR_OP_MASK_FILL] = bxfx_exec_mask,
    /* elementwise */
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
    /* reductions */
    [BXR_OP_SUM] = bxfx_exec_reduce, [BXR_OP_MEAN] = bxfx_exec_reduce,
    [BXR_OP_PROD] = bxfx_exec_reduce, [BXR_OP_MAX_REDUCE] = bxfx_exec_reduce,
    [BXR_OP_MIN_REDUCE] = bxfx_exec_reduce, [BXR_OP_ARGMAX] = bxfx_exec_reduce,
    [BXR_OP_ARGMIN] = bxfx_exec_reduce, [BXR_OP_ANY] = bxfx_exec_reduce,
    [BXR_OP_ALL] = bxfx_exec_reduce, [BXR_OP_CUMSUM] = bxfx_exec_cumsum,
    /* matmul, cast */
    [BXR_OP_MATMUL] = bxfx_exec_matmul, [BXR_OP_CAST] = bxfx_exec_cast,
  },
};
#undef EW
