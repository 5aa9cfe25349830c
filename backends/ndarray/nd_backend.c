/* nd_backend.c — the NdArray reference backend's definition (the const
 * struct the device registry points at) and its shared helpers. */
#include <string.h>

#include "ndarray.h"

bool bxnd_contig_inputs(struct bxr_op *op) {
  for (int i = 0; i < op->n_in; i++) {
    op->in[i] = bxr_make_contiguous(op->in[i]);
    if (!op->in[i]) return false;
  }
  return true;
}

bext_tensor *bxnd_output(struct bxr_op *op, int reuse_input) {
  if (reuse_input >= 0 && bxr_op_can_reuse(op, reuse_input)) return bxr_op_take(op, reuse_input);
  return bxr_op_new_output(op);
}

bext_tensor *bxnd_copy_of_input(struct bxr_op *op, int i) {
  if (bxr_op_can_reuse(op, i)) return bxr_op_take(op, i);
  bext_tensor *c = bxr_op_new_output(op);
  if (c) bxr_copy_to_contiguous(op->in[i], bxr_data(c));
  return c;
}

void bxnd_unravel(int64_t i, int rank, const int64_t *shape, int64_t *idx) {
  for (int d = rank - 1; d >= 0; d--) {
    idx[d] = shape[d] ? i % shape[d] : 0;
    i = shape[d] ? i / shape[d] : 0;
  }
}

int64_t bxnd_ravel(int rank, const int64_t *shape, const int64_t *idx) {
  int64_t i = 0;
  for (int d = 0; d < rank; d++) i = i * shape[d] + idx[d];
  return i;
}

#define E(OP) [BXR_OP_##OP] = bxnd_elementwise
#define R(OP) [BXR_OP_##OP] = bxnd_reduce

const struct bxr_backend bxr_backend_ndarray = {
    .api_version = BXR_BACKEND_API_VERSION,
    .name = "ndarray",
    .kind = BEXT_BACKEND_NDARRAY,
    .storage_alloc = bxr_host_storage_alloc,
    .storage_free = bxr_host_storage_free,
    .inline_small = true,   /* host memory: small buffers ride in the tensor block */
    .host_memory = true,    /* bext_data / bext_data_mut hand out storage->data */
    .from_data = bxr_host_from_data,
    .read = bxr_host_read,
    .copy = bxr_host_copy,
    .exec =
        {
            [BXR_OP_EMPTY] = bxnd_create, [BXR_OP_ZEROS] = bxnd_create, [BXR_OP_ONES] = bxnd_create,
            [BXR_OP_FULL] = bxnd_create, [BXR_OP_ARANGE] = bxnd_create,
            [BXR_OP_RANDOM_UNIFORM] = bxnd_create, [BXR_OP_RANDOM_NORMAL] = bxnd_create,
            [BXR_OP_RESHAPE] = bxnd_reshape, [BXR_OP_SWAP_DIMS] = bxnd_view_op,
            [BXR_OP_PERMUTE] = bxnd_view_op, [BXR_OP_EXPAND] = bxnd_view_op,
            [BXR_OP_SLICE] = bxnd_view_op, [BXR_OP_NARROW] = bxnd_view_op,
            [BXR_OP_SLICE_ASSIGN] = bxnd_slice_assign, [BXR_OP_CAT] = bxnd_cat,
            [BXR_OP_FLIP] = bxnd_flip, [BXR_OP_REPEAT_DIM] = bxnd_repeat_dim,
            [BXR_OP_GATHER] = bxnd_gather, [BXR_OP_SCATTER_ADD] = bxnd_scatter_add,
            [BXR_OP_SELECT] = bxnd_select, [BXR_OP_SELECT_ASSIGN] = bxnd_select_assign,
            [BXR_OP_MASK_WHERE] = bxnd_mask, [BXR_OP_MASK_FILL] = bxnd_mask,
            E(ADD), E(SUB), E(MUL), E(DIV), E(REM), E(POW), E(MAX), E(MIN),
            E(ADD_SCALAR), E(SUB_SCALAR), E(MUL_SCALAR), E(DIV_SCALAR), E(REM_SCALAR),
            E(POW_SCALAR), E(MAX_SCALAR), E(MIN_SCALAR),
            E(EQ), E(NE), E(GT), E(GE), E(LT), E(LE),
            E(EQ_SCALAR), E(NE_SCALAR), E(GT_SCALAR), E(GE_SCALAR), E(LT_SCALAR), E(LE_SCALAR),
            E(AND), E(OR), E(XOR), E(NOT),
            E(NEG), E(ABS), E(EXP), E(LOG), E(LOG1P), E(SQRT), E(RSQRT), E(SIN), E(COS),
            E(TANH), E(ERF), E(SIGMOID), E(RELU), E(RECIP), E(FLOOR), E(CEIL), E(ROUND),
            E(SIGN), E(CLAMP), E(POWI),
            R(SUM), R(MEAN), R(PROD), R(MAX_REDUCE), R(MIN_REDUCE), R(ARGMAX), R(ARGMIN),
            R(ANY), R(ALL),
            [BXR_OP_CUMSUM] = bxnd_cumsum, [BXR_OP_MATMUL] = bxnd_matmul,
            [BXR_OP_CAST] = bxnd_cast,
        },
};
_Static_assert(BXR_OP_COUNT == 87, "NdArray: every op needs an exec entry above");
