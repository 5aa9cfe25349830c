/* ndarray.h — internals of the NdArray reference backend (prefix bxnd_).
 * The reference is plainly written: every kernel first materializes its
 * inputs as contiguous arrays (runtime helper), computes element by element
 * in double (float dtypes, f16/bf16 through f32 storage rounding) or int64
 * (int and bool dtypes, wrapping), and stores with the runtime's dtype
 * helpers.  Layout ops that only move metadata return views. */
#ifndef BXND_NDARRAY_H
#define BXND_NDARRAY_H

#include "backend.h"   /* the backend-author header: all a backend takes from the runtime */

/* Replaces every input of op by a contiguous equivalent; false on OOM. */
BXR_FUNC bool bxnd_contig_inputs(struct bxr_op *op);
/* The output: input i taken in place when allowed, else a fresh tensor. */
BXR_FUNC bext_tensor *bxnd_output(struct bxr_op *op, int reuse_input);
/* A fresh copy of input i (for "t with some elements changed" ops), or
 * input i itself when unique and contiguous. */
BXR_FUNC bext_tensor *bxnd_copy_of_input(struct bxr_op *op, int i);
/* Unravels a row-major linear index into a multi-index. */
BXR_FUNC void bxnd_unravel(int64_t i, int rank, const int64_t *shape, int64_t *idx);
BXR_FUNC int64_t bxnd_ravel(int rank, const int64_t *shape, const int64_t *idx);

/* kernels by family (files nd_*.c) */
BXR_FUNC bext_tensor *bxnd_create(struct bxr_op *op);
BXR_FUNC bext_tensor *bxnd_reshape(struct bxr_op *op);
BXR_FUNC bext_tensor *bxnd_view_op(struct bxr_op *op);   /* swap_dims permute expand slice narrow */
BXR_FUNC bext_tensor *bxnd_slice_assign(struct bxr_op *op);
BXR_FUNC bext_tensor *bxnd_cat(struct bxr_op *op);
BXR_FUNC bext_tensor *bxnd_flip(struct bxr_op *op);
BXR_FUNC bext_tensor *bxnd_repeat_dim(struct bxr_op *op);
BXR_FUNC bext_tensor *bxnd_gather(struct bxr_op *op);
BXR_FUNC bext_tensor *bxnd_scatter_add(struct bxr_op *op);
BXR_FUNC bext_tensor *bxnd_select(struct bxr_op *op);
BXR_FUNC bext_tensor *bxnd_select_assign(struct bxr_op *op);
BXR_FUNC bext_tensor *bxnd_mask(struct bxr_op *op);       /* mask_where mask_fill */
BXR_FUNC bext_tensor *bxnd_elementwise(struct bxr_op *op);/* unary, binary, scalar, compare, bool */
BXR_FUNC bext_tensor *bxnd_reduce(struct bxr_op *op);
BXR_FUNC bext_tensor *bxnd_cumsum(struct bxr_op *op);
BXR_FUNC bext_tensor *bxnd_matmul(struct bxr_op *op);
BXR_FUNC bext_tensor *bxnd_cast(struct bxr_op *op);

#endif
