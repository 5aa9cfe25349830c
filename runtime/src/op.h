/* op.h — the op descriptor: one core op call as data (opcode, input
 * handles, scalar parameters, attributes) plus the output metadata its
 * inference rule computed.  Dispatch builds one, validates it with the
 * row's inference rule, and hands it to a backend's exec entry; Fusion will
 * record it, Autodiff tape it, Remote serialize it — so it holds plain data
 * only: besides the input handles, its only pointers are the static API
 * name (for messages) and the device.  Unused fields are deterministic
 * (hashable plans) up to the counts: every scalar field is initialized,
 * but array entries at or past at.rank / at.ndims / at.nranges / n_in /
 * out.rank may be garbage (the hot elementwise entries skip clearing
 * them), so hash and compare only the counted prefix. */
#ifndef BXR_OP_H
#define BXR_OP_H

#include "ops.h"
#include "tensor.h"

#define BXR_MAX_INPUTS 3

/* Scalar parameter: which member an op reads is fixed by its row (ops.h). */
union bxr_scalar {
  double f;
  int64_t i;
};

struct bxr_attrs {
  int rank;                         /* BXR_A_SHAPE: target shape */
  int64_t shape[BEXT_MAX_RANK];
  int ndims;                        /* BXR_A_DIMS: axes (permute, flip, swap) */
  int dims[BEXT_MAX_RANK];
  int dim;                          /* BXR_A_DIM: normalized to 0..rank-1 by inference */
  bool keepdim;                     /* BXR_A_KEEPDIM */
  bool all;                         /* reductions: whole tensor (dim unused) */
  int nranges;                      /* BXR_A_RANGES: slice ranges of dims 0..nranges-1 */
  int64_t start[BEXT_MAX_RANK];
  int64_t end[BEXT_MAX_RANK];
  bext_dtype dtype;                 /* BXR_A_DTYPE */
  uint64_t seed;                    /* BXR_A_SEED */
};

/* Output metadata (inference result).  Outputs are always one tensor. */
struct bxr_meta {
  bext_dtype dtype;
  int rank;
  int64_t shape[BEXT_MAX_RANK];
};

struct bxr_op {
  enum bxr_opcode code;
  const char *api;                  /* public entry for messages ("bext_sum_dim") */
  struct bext_device *device;       /* the device that runs it (device->vt: its backend) */
  /* Inputs.  The descriptor OWNS one reference to each non-NULL in[i];
   * an exec that wants to reuse one (in place, or as a view's base it
   * returns) takes it with bxr_op_take(), which NULLs the slot.  Dispatch
   * releases whatever is left after exec. */
  int n_in;
  bext_tensor **in;                 /* = inbuf, or a heap array for CAT */
  bext_tensor *inbuf[BXR_MAX_INPUTS];
  union bxr_scalar sc[3];
  struct bxr_attrs at;
  struct bxr_meta out;              /* filled by the inference rule */
};

/* One row of the op table as data. */
struct bxr_op_info {
  const char *name;
  int nin;                          /* -1: variadic */
  unsigned kinds[BXR_MAX_INPUTS];   /* BXR_K* per input */
  int nscalar;
  unsigned attrs;                   /* BXR_A* */
  bool (*infer)(struct bxr_op *op); /* fills op->out or sets an error */
};
BXR_DATA const struct bxr_op_info bxr_op_info[BXR_OP_COUNT];

/* Inference rules (runtime/src/infer.c).  Each validates the descriptor
 * (ranks, dims, shapes, dtypes, index dtypes, ranges), normalizes dims in
 * op->at, and fills op->out; on failure it sets an error naming op->api,
 * the operands and the problem, and returns false. */
#define BXR_X_(E, n, nin, k0, k1, k2, ns, at, inf) BXR_FUNC bool inf(struct bxr_op *op);
BXR_OP_TABLE(BXR_X_)
#undef BXR_X_

/* Runs a descriptor: checks operands (NULL, kinds, one backend), infers,
 * calls op->device->vt->exec[op->code], checks the result against the
 * inference, releases the remaining inputs.  Returns the output or NULL
 * (error set).  Consumes the inputs in every case. */
BXR_FUNC bext_tensor *bxr_dispatch(struct bxr_op *op);

/* Takes input i's reference out of the descriptor (for in-place reuse or a
 * view over it): the caller now owns it. */
BXR_FUNC bext_tensor *bxr_op_take(struct bxr_op *op, int i);
/* True when input i may become the output in place: unique, contiguous,
 * and its dtype and shape equal the output's. */
BXR_FUNC bool bxr_op_can_reuse(const struct bxr_op *op, int i);
/* A fresh contiguous output tensor with op->out's metadata on op->device. */
BXR_FUNC bext_tensor *bxr_op_new_output(const struct bxr_op *op);
/* Sets an error "<api>: <message> (operands: [2,3] f32, [3] f32)". */
BXR_FUNC bool bxr_op_error(const struct bxr_op *op, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
BXR_FUNC const char *bxr_op_name(enum bxr_opcode code);

#endif /* BXR_OP_H */
