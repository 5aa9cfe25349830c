/* layout_view.c — the zero-copy layout ops as strided views, shared by
 * every host-memory backend that returns views (Flex, cube): reshape (when
 * the strides can express the new shape), swap_dims, permute, expand
 * (stride 0), slice and narrow.  One home for this index math: a backend
 * calls bxr_layout_view and copies only when it answers NULL. */
#include "backend.h"

/* Strides expressing `t` with a new shape without copying (PyTorch's
 * computeStride): dims are grouped into chunks that are contiguous with
 * each other, and the new dims must tile each chunk exactly. */
static bool view_strides(const bext_tensor *t, int nr, const int64_t *ns, int64_t *out) {
  if (bxr_numel(t->rank, t->shape) == 0 || t->rank == 0) {
    bxr_contiguous_strides(nr, ns, out);
    return true;
  }
  int vd = nr - 1;
  int64_t base = t->strides[t->rank - 1], tnum = 1, vnum = 1;
  for (int d = t->rank - 1; d >= 0; d--) {
    tnum *= t->shape[d];
    if (d == 0 || (t->shape[d - 1] != 1 && t->strides[d - 1] != tnum * base)) {
      while (vd >= 0 && (vnum < tnum || ns[vd] == 1)) {
        out[vd] = vnum * base;
        vnum *= ns[vd];
        vd--;
      }
      if (vnum != tnum) return false;
      if (d > 0) {
        base = t->strides[d - 1];
        tnum = 1;
        vnum = 1;
      }
    }
  }
  return vd == -1;
}

static bext_tensor *view(struct bxr_op *op, const int64_t *strides, int64_t offset) {
  return bxr_tensor_view(op->in[0], op->out.rank, op->out.shape, strides, offset);
}

bext_tensor *bxr_layout_view(struct bxr_op *op) {
  bext_tensor *t = op->in[0];
  const bext_attrs *at = &op->at;
  int64_t st[BEXT_MAX_RANK];
  switch (op->code) {
  case BXR_OP_RESHAPE:
    return view_strides(t, op->out.rank, op->out.shape, st) ? view(op, st, t->offset) : NULL;
  case BXR_OP_SWAP_DIMS:
    for (int i = 0; i < t->rank; i++) st[i] = t->strides[i];
    st[at->dims[0]] = t->strides[at->dims[1]];
    st[at->dims[1]] = t->strides[at->dims[0]];
    return view(op, st, t->offset);
  case BXR_OP_PERMUTE:
    for (int i = 0; i < t->rank; i++) st[i] = t->strides[at->dims[i]];
    return view(op, st, t->offset);
  case BXR_OP_EXPAND: {
    bool ok = bxr_broadcast_strides(t, op->out.rank, op->out.shape, st);
    BXR_ASSERT(ok);
    return view(op, st, t->offset);
  }
  case BXR_OP_SLICE: {
    int64_t off = t->offset;
    for (int d = 0; d < at->nranges; d++)
      if (op->out.shape[d] > 0) off += at->start[d] * t->strides[d];
    return view(op, t->strides, off);
  }
  case BXR_OP_NARROW: {
    int64_t off = t->offset + (op->out.shape[at->dim] > 0 ? op->sc[0].i * t->strides[at->dim] : 0);
    return view(op, t->strides, off);
  }
  default:
    return NULL;
  }
}
