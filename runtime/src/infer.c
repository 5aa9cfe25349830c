/* infer.c — the shape/dtype inference rules of the op table.  Each rule
 * validates a descriptor completely (dims, ranks, shapes, dtypes, ranges)
 * from metadata alone and fills op->out, so Fusion can create outputs
 * before running anything and Remote can check before sending. */
#include <math.h>
#include <string.h>

#include "op.h"

static void out_like(struct bxr_op *op, const bext_tensor *t, bext_dtype dt) {
  op->out.dtype = dt;
  op->out.rank = t->rank;
  memcpy(op->out.shape, t->shape, sizeof t->shape);
}

static bool size_ok(struct bxr_op *op) {
  if (bxr_nbytes(op->out.dtype, op->out.rank, op->out.shape) == SIZE_MAX) {
    char sh[160];
    return bxr_op_error(op, "result shape %s is too large",
                        bxr_describe_shape(op->out.rank, op->out.shape, sh, sizeof sh));
  }
  return true;
}

/* Normalizes dim (negatives count from the end) against rank. */
static bool norm_dim(struct bxr_op *op, int *dim, int rank) {
  int d = *dim < 0 ? *dim + rank : *dim;
  if (d < 0 || d >= rank)
    return bxr_op_error(op, "dim %d out of range for rank %d", *dim, rank);
  *dim = d;
  return true;
}

static bool same_dtype(struct bxr_op *op, int i, int j) {
  if (op->in[i]->dtype != op->in[j]->dtype)
    return bxr_op_error(op, "dtype mismatch: operand %d is %s, operand %d is %s", i + 1,
                        bext_dtype_name(op->in[i]->dtype), j + 1, bext_dtype_name(op->in[j]->dtype));
  return true;
}

static bool index_dtype(struct bxr_op *op, int i) {
  bext_dtype dt = op->in[i]->dtype;
  if (dt != BEXT_I32 && dt != BEXT_I64)
    return bxr_op_error(op, "indices (operand %d) must be i32 or i64, found %s", i + 1,
                        bext_dtype_name(dt));
  return true;
}

static bool check_target_shape(struct bxr_op *op, bool allow_infer) {
  if (op->at.rank < 0 || op->at.rank > BEXT_MAX_RANK)
    return bxr_op_error(op, "rank %d out of range (0..%d)", op->at.rank, BEXT_MAX_RANK);
  for (int i = 0; i < op->at.rank; i++)
    if (op->at.shape[i] < (allow_infer ? -1 : 0)) {
      char sh[160];
      return bxr_op_error(op, "bad extent %lld in shape %s", (long long)op->at.shape[i],
                          bxr_describe_shape(op->at.rank, op->at.shape, sh, sizeof sh));
    }
  return true;
}

/* ---------------------------------------------------------------- creation */

bool bxr_infer_create(struct bxr_op *op) {
  if (!bext_dtype_valid(op->at.dtype)) return bxr_op_error(op, "invalid dtype %d", (int)op->at.dtype);
  if (!check_target_shape(op, false)) return false;
  op->out.dtype = op->at.dtype;
  op->out.rank = op->at.rank;
  memcpy(op->out.shape, op->at.shape, sizeof op->at.shape);
  return size_ok(op);
}

bool bxr_infer_random(struct bxr_op *op) {
  if (!bxr_infer_create(op)) return false;
  if (bext_dtype_kind(op->at.dtype) != BEXT_KIND_FLOAT)
    return bxr_op_error(op, "random tensors need a float dtype, found %s", bext_dtype_name(op->at.dtype));
  if (!isfinite(op->sc[0].f) || !isfinite(op->sc[1].f))
    return bxr_op_error(op, "parameters must be finite (got %g, %g)", op->sc[0].f, op->sc[1].f);
  if (op->code == BXR_OP_RANDOM_UNIFORM && op->sc[0].f > op->sc[1].f)
    return bxr_op_error(op, "low bound %g above high bound %g", op->sc[0].f, op->sc[1].f);
  if (op->code == BXR_OP_RANDOM_NORMAL && op->sc[1].f < 0)
    return bxr_op_error(op, "negative standard deviation %g", op->sc[1].f);
  return true;
}

bool bxr_infer_arange(struct bxr_op *op) {
  double a = op->sc[0].f, b = op->sc[1].f, s = op->sc[2].f;
  if (!bext_dtype_valid(op->at.dtype) || op->at.dtype == BEXT_BOOL)
    return bxr_op_error(op, "arange needs a float or int dtype, found %s", bext_dtype_name(op->at.dtype));
  if (!isfinite(a) || !isfinite(b) || !isfinite(s) || s == 0)
    return bxr_op_error(op, "bad range start=%g end=%g step=%g (finite, step != 0)", a, b, s);
  double n = ceil((b - a) / s);
  if (n < 0) n = 0;
  if (n > 1e12) return bxr_op_error(op, "range of %g elements is too large", n);
  op->out.dtype = op->at.dtype;
  op->out.rank = 1;
  op->out.shape[0] = (int64_t)n;
  return size_ok(op);
}

/* ------------------------------------------------------------------ layout */

bool bxr_infer_reshape(struct bxr_op *op) {
  const bext_tensor *t = op->in[0];
  if (!check_target_shape(op, true)) return false;
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < op->at.rank; i++) {
    if (op->at.shape[i] == -1) {
      if (infer >= 0) return bxr_op_error(op, "more than one -1 extent");
      infer = i;
    } else if (__builtin_mul_overflow(known, op->at.shape[i], &known)) {
      return bxr_op_error(op, "target shape is too large");
    }
  }
  int64_t n = bxr_numel(t->rank, t->shape);
  if (infer >= 0) {
    if (known == 0 || n % known) {
      char sh[160];
      return bxr_op_error(op, "cannot infer -1 in %s from %lld elements",
                          bxr_describe_shape(op->at.rank, op->at.shape, sh, sizeof sh), (long long)n);
    }
    op->at.shape[infer] = n / known;
  }
  if (infer < 0 && known != n) {
    char sh[160];
    return bxr_op_error(op, "cannot reshape %lld elements to %s", (long long)n,
                        bxr_describe_shape(op->at.rank, op->at.shape, sh, sizeof sh));
  }
  op->out.dtype = t->dtype;
  op->out.rank = op->at.rank;
  memcpy(op->out.shape, op->at.shape, sizeof op->at.shape);
  return true;
}

bool bxr_infer_swap_dims(struct bxr_op *op) {
  const bext_tensor *t = op->in[0];
  if (op->at.ndims != 2) return bxr_op_error(op, "needs two dims");
  if (!norm_dim(op, &op->at.dims[0], t->rank) || !norm_dim(op, &op->at.dims[1], t->rank)) return false;
  out_like(op, t, t->dtype);
  op->out.shape[op->at.dims[0]] = t->shape[op->at.dims[1]];
  op->out.shape[op->at.dims[1]] = t->shape[op->at.dims[0]];
  return true;
}

static bool distinct_dims(struct bxr_op *op, int rank) {
  bool seen[BEXT_MAX_RANK] = {0};
  if (op->at.ndims < 0 || op->at.ndims > rank)
    return bxr_op_error(op, "%d axes given for rank %d", op->at.ndims, rank);
  for (int i = 0; i < op->at.ndims; i++) {
    if (!norm_dim(op, &op->at.dims[i], rank)) return false;
    if (seen[op->at.dims[i]]) return bxr_op_error(op, "axis %d repeated", op->at.dims[i]);
    seen[op->at.dims[i]] = true;
  }
  return true;
}

bool bxr_infer_permute(struct bxr_op *op) {
  const bext_tensor *t = op->in[0];
  if (op->at.ndims != t->rank)
    return bxr_op_error(op, "permutation of %d axes for rank %d", op->at.ndims, t->rank);
  if (!distinct_dims(op, t->rank)) return false;
  op->out.dtype = t->dtype;
  op->out.rank = t->rank;
  for (int i = 0; i < t->rank; i++) op->out.shape[i] = t->shape[op->at.dims[i]];
  return true;
}

bool bxr_infer_flip(struct bxr_op *op) {
  if (!distinct_dims(op, op->in[0]->rank)) return false;
  out_like(op, op->in[0], op->in[0]->dtype);
  return true;
}

bool bxr_infer_expand(struct bxr_op *op) {
  const bext_tensor *t = op->in[0];
  if (!check_target_shape(op, false)) return false;
  int64_t st[BEXT_MAX_RANK];
  if (op->at.rank < t->rank || !bxr_broadcast_strides(t, op->at.rank, op->at.shape, st)) {
    char sh[160];
    return bxr_op_error(op, "cannot expand to %s",
                        bxr_describe_shape(op->at.rank, op->at.shape, sh, sizeof sh));
  }
  op->out.dtype = t->dtype;
  op->out.rank = op->at.rank;
  memcpy(op->out.shape, op->at.shape, sizeof op->at.shape);
  return size_ok(op);
}

static bool check_ranges(struct bxr_op *op, const bext_tensor *t) {
  if (op->at.nranges < 0 || op->at.nranges > t->rank)
    return bxr_op_error(op, "%d ranges for rank %d", op->at.nranges, t->rank);
  out_like(op, t, t->dtype);
  for (int d = 0; d < op->at.nranges; d++) {
    int64_t s = op->at.start[d], e = op->at.end[d];
    if (s < 0 || e < s || e > t->shape[d])
      return bxr_op_error(op, "range %lld..%lld out of bounds for dim %d of extent %lld",
                          (long long)s, (long long)e, d, (long long)t->shape[d]);
    op->out.shape[d] = e - s;
  }
  return true;
}

bool bxr_infer_slice(struct bxr_op *op) { return check_ranges(op, op->in[0]); }

bool bxr_infer_slice_assign(struct bxr_op *op) {
  const bext_tensor *t = op->in[0], *v = op->in[1];
  if (!same_dtype(op, 0, 1) || !check_ranges(op, t)) return false;
  bool ok = v->rank == t->rank;
  for (int d = 0; ok && d < t->rank; d++) ok = v->shape[d] == op->out.shape[d];
  if (!ok) {
    char sh[160];
    return bxr_op_error(op, "value shape must equal the slice shape %s",
                        bxr_describe_shape(op->out.rank, op->out.shape, sh, sizeof sh));
  }
  out_like(op, t, t->dtype);
  return true;
}

bool bxr_infer_cat(struct bxr_op *op) {
  if (op->n_in < 1) return bxr_op_error(op, "needs at least one tensor");
  const bext_tensor *t0 = op->in[0];
  if (!norm_dim(op, &op->at.dim, t0->rank)) return false;
  out_like(op, t0, t0->dtype);
  op->out.shape[op->at.dim] = 0;
  for (int i = 0; i < op->n_in; i++) {
    const bext_tensor *t = op->in[i];
    if (!same_dtype(op, 0, i)) return false;
    if (t->rank != t0->rank) return bxr_op_error(op, "operand %d has rank %d, expected %d", i + 1, t->rank, t0->rank);
    for (int d = 0; d < t->rank; d++)
      if (d != op->at.dim && t->shape[d] != t0->shape[d])
        return bxr_op_error(op, "operand %d differs in dim %d (%lld vs %lld)", i + 1, d,
                            (long long)t->shape[d], (long long)t0->shape[d]);
    op->out.shape[op->at.dim] += t->shape[op->at.dim];
  }
  return size_ok(op);
}

bool bxr_infer_narrow(struct bxr_op *op) {
  const bext_tensor *t = op->in[0];
  if (!norm_dim(op, &op->at.dim, t->rank)) return false;
  int64_t s = op->sc[0].i, n = op->sc[1].i, e = t->shape[op->at.dim];
  if (s < 0 || n < 0 || s > e || n > e - s)
    return bxr_op_error(op, "start %lld length %lld out of bounds for dim %d of extent %lld",
                        (long long)s, (long long)n, op->at.dim, (long long)e);
  out_like(op, t, t->dtype);
  op->out.shape[op->at.dim] = n;
  return true;
}

bool bxr_infer_repeat_dim(struct bxr_op *op) {
  const bext_tensor *t = op->in[0];
  if (!norm_dim(op, &op->at.dim, t->rank)) return false;
  int64_t k = op->sc[0].i;
  if (k < 0 || k > ((int64_t)1 << 40)) return bxr_op_error(op, "bad repeat count %lld", (long long)k);
  out_like(op, t, t->dtype);
  if (__builtin_mul_overflow(t->shape[op->at.dim], k, &op->out.shape[op->at.dim]))
    return bxr_op_error(op, "result too large");
  return size_ok(op);
}

/* ---------------------------------------------------------------- indexing */

static bool idx_fits(struct bxr_op *op, const bext_tensor *t, const bext_tensor *idx) {
  if (idx->rank != t->rank)
    return bxr_op_error(op, "indices have rank %d, tensor rank %d", idx->rank, t->rank);
  for (int d = 0; d < t->rank; d++)
    if (d != op->at.dim && idx->shape[d] > t->shape[d])
      return bxr_op_error(op, "indices extent %lld exceeds tensor extent %lld in dim %d",
                          (long long)idx->shape[d], (long long)t->shape[d], d);
  return true;
}

bool bxr_infer_gather(struct bxr_op *op) {
  const bext_tensor *t = op->in[0], *idx = op->in[1];
  if (!index_dtype(op, 1) || !norm_dim(op, &op->at.dim, t->rank) || !idx_fits(op, t, idx)) return false;
  out_like(op, idx, t->dtype);
  return true;
}

bool bxr_infer_scatter_add(struct bxr_op *op) {
  const bext_tensor *t = op->in[0], *idx = op->in[1], *v = op->in[2];
  if (!index_dtype(op, 1) || !same_dtype(op, 0, 2) || !norm_dim(op, &op->at.dim, t->rank) ||
      !idx_fits(op, t, idx))
    return false;
  bool ok = v->rank == idx->rank;
  for (int d = 0; ok && d < v->rank; d++) ok = v->shape[d] == idx->shape[d];
  if (!ok) return bxr_op_error(op, "values must have the shape of the indices");
  out_like(op, t, t->dtype);
  return true;
}

bool bxr_infer_select(struct bxr_op *op) {
  const bext_tensor *t = op->in[0], *idx = op->in[1];
  if (!index_dtype(op, 1) || !norm_dim(op, &op->at.dim, t->rank)) return false;
  if (idx->rank != 1) return bxr_op_error(op, "indices must be 1-D, found rank %d", idx->rank);
  out_like(op, t, t->dtype);
  op->out.shape[op->at.dim] = idx->shape[0];
  return size_ok(op);
}

bool bxr_infer_select_assign(struct bxr_op *op) {
  const bext_tensor *t = op->in[0], *idx = op->in[1], *v = op->in[2];
  if (!index_dtype(op, 1) || !same_dtype(op, 0, 2) || !norm_dim(op, &op->at.dim, t->rank)) return false;
  if (idx->rank != 1) return bxr_op_error(op, "indices must be 1-D, found rank %d", idx->rank);
  bool ok = v->rank == t->rank;
  for (int d = 0; ok && d < t->rank; d++)
    ok = v->shape[d] == (d == op->at.dim ? idx->shape[0] : t->shape[d]);
  if (!ok) return bxr_op_error(op, "values must have the tensor's shape with the indices' length in dim %d", op->at.dim);
  out_like(op, t, t->dtype);
  return true;
}

static bool broadcast2(struct bxr_op *op, const bext_tensor *a, const bext_tensor *b, int *rank,
                       int64_t *shape) {
  if (!bxr_broadcast_shape(a->rank, a->shape, b->rank, b->shape, rank, shape))
    return bxr_op_error(op, "shapes are not broadcastable");
  return true;
}

bool bxr_infer_mask_where(struct bxr_op *op) {
  if (!same_dtype(op, 0, 2)) return false;
  int r1;
  int64_t s1[BEXT_MAX_RANK];
  if (!broadcast2(op, op->in[0], op->in[1], &r1, s1)) return false;
  if (!bxr_broadcast_shape(r1, s1, op->in[2]->rank, op->in[2]->shape, &op->out.rank, op->out.shape))
    return bxr_op_error(op, "shapes are not broadcastable");
  op->out.dtype = op->in[0]->dtype;
  return size_ok(op);
}

bool bxr_infer_mask_fill(struct bxr_op *op) {
  if (!broadcast2(op, op->in[0], op->in[1], &op->out.rank, op->out.shape)) return false;
  op->out.dtype = op->in[0]->dtype;
  return size_ok(op);
}

/* -------------------------------------------------------------- elementwise */

bool bxr_infer_binary(struct bxr_op *op) {
  const bext_tensor *a = op->in[0], *b = op->in[1];
  /* Fast path, same answer: equal dtypes and shapes need no broadcasting,
   * and the result is no larger than an operand that already exists. */
  if (a->dtype == b->dtype && bxr_same_shape(a->rank, a->shape, b->rank, b->shape)) {
    op->out.dtype = a->dtype;
    op->out.rank = a->rank;
    memcpy(op->out.shape, a->shape, (size_t)a->rank * sizeof *a->shape);
    return true;
  }
  if (!same_dtype(op, 0, 1) || !broadcast2(op, op->in[0], op->in[1], &op->out.rank, op->out.shape))
    return false;
  op->out.dtype = op->in[0]->dtype;
  return size_ok(op);
}

bool bxr_infer_compare(struct bxr_op *op) {
  if (op->n_in == 1) {
    out_like(op, op->in[0], BEXT_BOOL);
    return true;
  }
  if (!same_dtype(op, 0, 1) || !broadcast2(op, op->in[0], op->in[1], &op->out.rank, op->out.shape))
    return false;
  op->out.dtype = BEXT_BOOL;
  return size_ok(op);
}

bool bxr_infer_unary(struct bxr_op *op) {
  if (op->code == BXR_OP_CLAMP && op->sc[0].f > op->sc[1].f)
    return bxr_op_error(op, "lower bound %g above upper bound %g", op->sc[0].f, op->sc[1].f);
  out_like(op, op->in[0], op->in[0]->dtype);
  return true;
}

/* -------------------------------------------------------------- reductions */

bool bxr_infer_reduce(struct bxr_op *op) {
  const bext_tensor *t = op->in[0];
  bext_dtype dt = t->dtype;
  if (op->code == BXR_OP_ARGMAX || op->code == BXR_OP_ARGMIN) dt = BEXT_I64;
  int64_t extent;
  if (op->at.all) {
    op->out.dtype = dt;
    op->out.rank = 0;
    extent = bxr_numel(t->rank, t->shape);
  } else {
    if (!norm_dim(op, &op->at.dim, t->rank)) return false;
    out_like(op, t, dt);
    extent = t->shape[op->at.dim];
    if (op->at.keepdim) op->out.shape[op->at.dim] = 1;
    else {
      for (int d = op->at.dim; d + 1 < t->rank; d++) op->out.shape[d] = t->shape[d + 1];
      op->out.rank--;
    }
  }
  bool needs_elem = op->code == BXR_OP_MAX_REDUCE || op->code == BXR_OP_MIN_REDUCE ||
                    op->code == BXR_OP_ARGMAX || op->code == BXR_OP_ARGMIN;
  if (needs_elem && extent == 0 && bxr_numel(op->out.rank, op->out.shape) > 0)
    return bxr_op_error(op, "cannot reduce an empty extent");
  if (needs_elem && op->at.all && extent == 0) return bxr_op_error(op, "cannot reduce an empty tensor");
  return true;
}

bool bxr_infer_cumsum(struct bxr_op *op) {
  if (!norm_dim(op, &op->at.dim, op->in[0]->rank)) return false;
  out_like(op, op->in[0], op->in[0]->dtype);
  return true;
}

bool bxr_infer_matmul(struct bxr_op *op) {
  const bext_tensor *a = op->in[0], *b = op->in[1];
  if (!same_dtype(op, 0, 1)) return false;
  if (a->rank < 2 || b->rank < 2) return bxr_op_error(op, "operands need rank >= 2");
  int64_t m = a->shape[a->rank - 2], k = a->shape[a->rank - 1];
  int64_t k2 = b->shape[b->rank - 2], n = b->shape[b->rank - 1];
  if (k != k2)
    return bxr_op_error(op, "inner extents differ (%lld vs %lld)", (long long)k, (long long)k2);
  if (!bxr_broadcast_shape(a->rank - 2, a->shape, b->rank - 2, b->shape, &op->out.rank, op->out.shape))
    return bxr_op_error(op, "batch dims are not broadcastable");
  op->out.shape[op->out.rank++] = m;
  op->out.shape[op->out.rank++] = n;
  op->out.dtype = a->dtype;
  return size_ok(op);
}

bool bxr_infer_cast(struct bxr_op *op) {
  if (!bext_dtype_valid(op->at.dtype)) return bxr_op_error(op, "invalid dtype %d", (int)op->at.dtype);
  out_like(op, op->in[0], op->at.dtype);
  return true;
}
