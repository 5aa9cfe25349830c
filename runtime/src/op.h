/* op.h — the op descriptor: one core op call as data (opcode, input
 * handles, scalar parameters, attributes) plus the output metadata its
 * inference rule computed.  Dispatch builds one, validates it with the
 * row's inference rule (on the inputs' specs: struct bxr_infer), and
 * hands it to a backend's exec entry; Fusion will
 * record it, Autodiff tape it, Remote serialize it — so it holds plain data
 * only: besides the input handles, its only pointers are the static API
 * name (for messages) and the device.  Unused fields are deterministic
 * (hashable plans) up to the counts: every scalar field is initialized,
 * but array entries at or past at.rank / at.ndims / at.nranges / n_in /
 * out.rank may be garbage (the hot elementwise and reduction entries skip
 * clearing them), so hash and compare only the counted prefix. */
#ifndef BXR_OP_H
#define BXR_OP_H

#include "bext/ops.h"
#include "tensor.h"

#define BXR_MAX_INPUTS 3

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
  bext_scalar sc[3];
  bext_attrs at;
  bext_spec out;                    /* filled by the inference rule */
  /* Set by dispatch from the rule's answer: every input has exactly
   * out's shape (so a backend need not compare shapes again).  False
   * tells nothing. */
  bool same_shape;
};

/* One inference question, on specs alone: what a row's rule reads and
 * writes.  Dispatch points it into the descriptor and at the input
 * tensors' own specs (bext_tensor holds its bext_spec in place), so asking
 * costs a few pointer stores, never a shape copy; bext_infer points it at
 * the caller's specs.  at is normalized in place (dims, reshape's -1). */
struct bxr_infer {
  enum bxr_opcode code;
  const char *api;                  /* for messages */
  int n_in;
  const bext_spec *const *in;       /* n_in input specs */
  const bext_scalar *sc;            /* sc[0..3) */
  bext_attrs *at;
  bext_spec *out;                   /* the answer */
  bool same_shape;                  /* set (never cleared) by rules that know every input
                                       has exactly *out's shape; false tells nothing */
};

/* One row of the op table as data. */
struct bxr_op_info {
  const char *name;
  int nin;                          /* -1: variadic */
  unsigned kinds[BXR_MAX_INPUTS];   /* BXR_K* per input */
  int nscalar;
  unsigned attrs;                   /* BXR_A* */
  bool (*infer)(struct bxr_infer *q); /* fills *q->out or sets an error */
};
BXR_DATA const struct bxr_op_info bxr_op_info[BXR_OP_COUNT];

/* Inference rules (runtime/src/infer.c).  Each validates the question
 * (ranks, dims, shapes, dtypes, index dtypes, ranges), normalizes dims in
 * q->at, and fills *q->out; on failure it sets an error naming q->api,
 * the operands and the problem, and returns false. */
#define BXR_X_(E, n, nin, k0, k1, k2, ns, at, inf) BXR_FUNC bool inf(struct bxr_infer *q);
BXR_OP_TABLE(BXR_X_)
#undef BXR_X_
/* Sets an error "<api>: <message> (operands: [2,3] f32, [3] f32)" from
 * the question's specs: the text bxr_op_error gives for the same op. */
BXR_FUNC bool bxr_infer_error(const struct bxr_infer *q, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* "operand <i+1> has dtype x, expected <kinds>": bxr_infer_run's error. */
BXR_FUNC bool bxr_infer_kind_error(const struct bxr_infer *q, int i, unsigned kinds);

/* The whole metadata check dispatch and bext_infer share: every input's
 * dtype kind against the row, then the row's rule.  q->n_in must suit the
 * row (api.c and bext_infer guarantee it).  Inline: it is on every op's
 * path, and a call plus reloads cost a small op a few percent. */
static inline bool bxr_infer_run(struct bxr_infer *q) {
  const struct bxr_op_info *info = &bxr_op_info[q->code];
  for (int i = 0; i < q->n_in; i++) {
    unsigned k = info->kinds[info->nin < 0 ? 0 : i];   /* nin <= BXR_MAX_INPUTS */
    if (__builtin_expect(!(k & (1u << bxr_dtype_kind(q->in[i]->dtype))), 0))
      return bxr_infer_kind_error(q, i, k);
  }
  return info->infer(q);
}

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
/* A fresh contiguous output tensor with op->out's metadata on op->device
 * (inline: one call less on every small op). */
static inline bext_tensor *bxr_op_new_output(const struct bxr_op *op) {
  return bxr_tensor_new(op->device, op->out.dtype, op->out.rank, op->out.shape);
}
/* Sets an error "<api>: <message> (operands: [2,3] f32, [3] f32)". */
BXR_FUNC bool bxr_op_error(const struct bxr_op *op, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
BXR_FUNC const char *bxr_op_name(enum bxr_opcode code);

#endif /* BXR_OP_H */
