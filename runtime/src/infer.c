/* infer.c — the shape/dtype inference rules of the op table, on specs
 * alone (struct bxr_infer: input specs, scalars, attributes; no tensors,
 * no device).  Each rule validates a question completely (dims, ranks,
 * shapes, dtypes, ranges) and fills *q->out, so dispatch, bext_infer (the
 * REPL, generated code, check modes), Fusion creating outputs before
 * running anything and Remote checking before sending all share one
 * answer and one error text. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "op.h"

static void out_like(struct bxr_infer *q, const bext_spec *t, bext_dtype dt) {
  q->out->dtype = dt;
  q->out->rank = t->rank;
  memcpy(q->out->shape, t->shape, sizeof t->shape);
}

static bool size_ok(struct bxr_infer *q) {
  if (bxr_nbytes(q->out->dtype, q->out->rank, q->out->shape) == SIZE_MAX) {
    char sh[160];
    return bxr_infer_error(q, "result shape %s is too large",
                           bxr_describe_shape(q->out->rank, q->out->shape, sh, sizeof sh));
  }
  return true;
}

/* Normalizes dim (negatives count from the end) against rank. */
static bool norm_dim(struct bxr_infer *q, int *dim, int rank) {
  int d = *dim < 0 ? *dim + rank : *dim;
  if (d < 0 || d >= rank)
    return bxr_infer_error(q, "dim %d out of range for rank %d", *dim, rank);
  *dim = d;
  return true;
}

static bool same_dtype(struct bxr_infer *q, int i, int j) {
  if (q->in[i]->dtype != q->in[j]->dtype)
    return bxr_infer_error(q, "dtype mismatch: operand %d is %s, operand %d is %s", i + 1,
                           bext_dtype_name(q->in[i]->dtype), j + 1, bext_dtype_name(q->in[j]->dtype));
  return true;
}

static bool index_dtype(struct bxr_infer *q, int i) {
  bext_dtype dt = q->in[i]->dtype;
  if (dt != BEXT_I32 && dt != BEXT_I64)
    return bxr_infer_error(q, "indices (operand %d) must be i32 or i64, found %s", i + 1,
                           bext_dtype_name(dt));
  return true;
}

static bool check_target_shape(struct bxr_infer *q, bool allow_infer) {
  if (q->at->rank < 0 || q->at->rank > BEXT_MAX_RANK)
    return bxr_infer_error(q, "rank %d out of range (0..%d)", q->at->rank, BEXT_MAX_RANK);
  for (int i = 0; i < q->at->rank; i++)
    if (q->at->shape[i] < (allow_infer ? -1 : 0)) {
      char sh[160];
      return bxr_infer_error(q, "bad extent %lld in shape %s", (long long)q->at->shape[i],
                             bxr_describe_shape(q->at->rank, q->at->shape, sh, sizeof sh));
    }
  return true;
}

/* ---------------------------------------------------------------- creation */

bool bxr_infer_create(struct bxr_infer *q) {
  if (!bext_dtype_valid(q->at->dtype)) return bxr_infer_error(q, "invalid dtype %d", (int)q->at->dtype);
  if (!check_target_shape(q, false)) return false;
  q->out->dtype = q->at->dtype;
  q->out->rank = q->at->rank;
  memcpy(q->out->shape, q->at->shape, sizeof q->at->shape);
  return size_ok(q);
}

bool bxr_infer_random(struct bxr_infer *q) {
  if (!bxr_infer_create(q)) return false;
  if (bext_dtype_kind(q->at->dtype) != BEXT_KIND_FLOAT)
    return bxr_infer_error(q, "random tensors need a float dtype, found %s", bext_dtype_name(q->at->dtype));
  if (!isfinite(q->sc[0].f) || !isfinite(q->sc[1].f))
    return bxr_infer_error(q, "parameters must be finite (got %g, %g)", q->sc[0].f, q->sc[1].f);
  if (q->code == BXR_OP_RANDOM_UNIFORM && q->sc[0].f > q->sc[1].f)
    return bxr_infer_error(q, "low bound %g above high bound %g", q->sc[0].f, q->sc[1].f);
  if (q->code == BXR_OP_RANDOM_NORMAL && q->sc[1].f < 0)
    return bxr_infer_error(q, "negative standard deviation %g", q->sc[1].f);
  return true;
}

bool bxr_infer_arange(struct bxr_infer *q) {
  double a = q->sc[0].f, b = q->sc[1].f, s = q->sc[2].f;
  if (!bext_dtype_valid(q->at->dtype) || q->at->dtype == BEXT_BOOL)
    return bxr_infer_error(q, "arange needs a float or int dtype, found %s", bext_dtype_name(q->at->dtype));
  if (!isfinite(a) || !isfinite(b) || !isfinite(s) || s == 0)
    return bxr_infer_error(q, "bad range start=%g end=%g step=%g (finite, step != 0)", a, b, s);
  double n = ceil((b - a) / s);
  if (n < 0) n = 0;
  if (n > 1e12) return bxr_infer_error(q, "range of %g elements is too large", n);
  q->out->dtype = q->at->dtype;
  q->out->rank = 1;
  q->out->shape[0] = (int64_t)n;
  return size_ok(q);
}

/* ------------------------------------------------------------------ layout */

bool bxr_infer_reshape(struct bxr_infer *q) {
  const bext_spec *t = q->in[0];
  if (!check_target_shape(q, true)) return false;
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < q->at->rank; i++) {
    if (q->at->shape[i] == -1) {
      if (infer >= 0) return bxr_infer_error(q, "more than one -1 extent");
      infer = i;
    } else if (__builtin_mul_overflow(known, q->at->shape[i], &known)) {
      return bxr_infer_error(q, "target shape is too large");
    }
  }
  int64_t n = bxr_numel(t->rank, t->shape);
  if (infer >= 0) {
    if (known == 0 || n % known) {
      char sh[160];
      return bxr_infer_error(q, "cannot infer -1 in %s from %lld elements",
                             bxr_describe_shape(q->at->rank, q->at->shape, sh, sizeof sh), (long long)n);
    }
    q->at->shape[infer] = n / known;
  }
  if (infer < 0 && known != n) {
    char sh[160];
    return bxr_infer_error(q, "cannot reshape %lld elements to %s", (long long)n,
                           bxr_describe_shape(q->at->rank, q->at->shape, sh, sizeof sh));
  }
  q->out->dtype = t->dtype;
  q->out->rank = q->at->rank;
  memcpy(q->out->shape, q->at->shape, sizeof q->at->shape);
  return true;
}

bool bxr_infer_swap_dims(struct bxr_infer *q) {
  const bext_spec *t = q->in[0];
  if (q->at->ndims != 2) return bxr_infer_error(q, "needs two dims");
  if (!norm_dim(q, &q->at->dims[0], t->rank) || !norm_dim(q, &q->at->dims[1], t->rank)) return false;
  out_like(q, t, t->dtype);
  q->out->shape[q->at->dims[0]] = t->shape[q->at->dims[1]];
  q->out->shape[q->at->dims[1]] = t->shape[q->at->dims[0]];
  return true;
}

static bool distinct_dims(struct bxr_infer *q, int rank) {
  bool seen[BEXT_MAX_RANK] = {0};
  if (q->at->ndims < 0 || q->at->ndims > rank)
    return bxr_infer_error(q, "%d axes given for rank %d", q->at->ndims, rank);
  for (int i = 0; i < q->at->ndims; i++) {
    if (!norm_dim(q, &q->at->dims[i], rank)) return false;
    if (seen[q->at->dims[i]]) return bxr_infer_error(q, "axis %d repeated", q->at->dims[i]);
    seen[q->at->dims[i]] = true;
  }
  return true;
}

bool bxr_infer_permute(struct bxr_infer *q) {
  const bext_spec *t = q->in[0];
  if (q->at->ndims != t->rank)
    return bxr_infer_error(q, "permutation of %d axes for rank %d", q->at->ndims, t->rank);
  if (!distinct_dims(q, t->rank)) return false;
  q->out->dtype = t->dtype;
  q->out->rank = t->rank;
  for (int i = 0; i < t->rank; i++) q->out->shape[i] = t->shape[q->at->dims[i]];
  return true;
}

bool bxr_infer_flip(struct bxr_infer *q) {
  if (!distinct_dims(q, q->in[0]->rank)) return false;
  out_like(q, q->in[0], q->in[0]->dtype);
  return true;
}

/* t's dims, aligned on the right, each equal the target's or are 1 (the
 * shape half of bxr_broadcast_strides). */
static bool expands_to(const bext_spec *t, int rank, const int64_t *shape) {
  for (int d = rank - t->rank; d < rank; d++) {
    int64_t e = t->shape[d - (rank - t->rank)];
    if (e != shape[d] && e != 1) return false;
  }
  return true;
}

bool bxr_infer_expand(struct bxr_infer *q) {
  const bext_spec *t = q->in[0];
  if (!check_target_shape(q, false)) return false;
  if (q->at->rank < t->rank || !expands_to(t, q->at->rank, q->at->shape)) {
    char sh[160];
    return bxr_infer_error(q, "cannot expand to %s",
                           bxr_describe_shape(q->at->rank, q->at->shape, sh, sizeof sh));
  }
  q->out->dtype = t->dtype;
  q->out->rank = q->at->rank;
  memcpy(q->out->shape, q->at->shape, sizeof q->at->shape);
  return size_ok(q);
}

static bool check_ranges(struct bxr_infer *q, const bext_spec *t) {
  if (q->at->nranges < 0 || q->at->nranges > t->rank)
    return bxr_infer_error(q, "%d ranges for rank %d", q->at->nranges, t->rank);
  out_like(q, t, t->dtype);
  for (int d = 0; d < q->at->nranges; d++) {
    int64_t s = q->at->start[d], e = q->at->end[d];
    if (s < 0 || e < s || e > t->shape[d])
      return bxr_infer_error(q, "range %lld..%lld out of bounds for dim %d of extent %lld",
                             (long long)s, (long long)e, d, (long long)t->shape[d]);
    q->out->shape[d] = e - s;
  }
  return true;
}

bool bxr_infer_slice(struct bxr_infer *q) { return check_ranges(q, q->in[0]); }

bool bxr_infer_slice_assign(struct bxr_infer *q) {
  const bext_spec *t = q->in[0], *v = q->in[1];
  if (!same_dtype(q, 0, 1) || !check_ranges(q, t)) return false;
  bool ok = v->rank == t->rank;
  for (int d = 0; ok && d < t->rank; d++) ok = v->shape[d] == q->out->shape[d];
  if (!ok) {
    char sh[160];
    return bxr_infer_error(q, "value shape must equal the slice shape %s",
                           bxr_describe_shape(q->out->rank, q->out->shape, sh, sizeof sh));
  }
  out_like(q, t, t->dtype);
  return true;
}

bool bxr_infer_cat(struct bxr_infer *q) {
  if (q->n_in < 1) return bxr_infer_error(q, "needs at least one tensor");
  const bext_spec *t0 = q->in[0];
  if (!norm_dim(q, &q->at->dim, t0->rank)) return false;
  out_like(q, t0, t0->dtype);
  q->out->shape[q->at->dim] = 0;
  for (int i = 0; i < q->n_in; i++) {
    const bext_spec *t = q->in[i];
    if (!same_dtype(q, 0, i)) return false;
    if (t->rank != t0->rank) return bxr_infer_error(q, "operand %d has rank %d, expected %d", i + 1, t->rank, t0->rank);
    for (int d = 0; d < t->rank; d++)
      if (d != q->at->dim && t->shape[d] != t0->shape[d])
        return bxr_infer_error(q, "operand %d differs in dim %d (%lld vs %lld)", i + 1, d,
                               (long long)t->shape[d], (long long)t0->shape[d]);
    q->out->shape[q->at->dim] += t->shape[q->at->dim];
  }
  return size_ok(q);
}

bool bxr_infer_narrow(struct bxr_infer *q) {
  const bext_spec *t = q->in[0];
  if (!norm_dim(q, &q->at->dim, t->rank)) return false;
  int64_t s = q->sc[0].i, n = q->sc[1].i, e = t->shape[q->at->dim];
  if (s < 0 || n < 0 || s > e || n > e - s)
    return bxr_infer_error(q, "start %lld length %lld out of bounds for dim %d of extent %lld",
                           (long long)s, (long long)n, q->at->dim, (long long)e);
  out_like(q, t, t->dtype);
  q->out->shape[q->at->dim] = n;
  return true;
}

bool bxr_infer_repeat_dim(struct bxr_infer *q) {
  const bext_spec *t = q->in[0];
  if (!norm_dim(q, &q->at->dim, t->rank)) return false;
  int64_t k = q->sc[0].i;
  if (k < 0 || k > ((int64_t)1 << 40)) return bxr_infer_error(q, "bad repeat count %lld", (long long)k);
  out_like(q, t, t->dtype);
  if (__builtin_mul_overflow(t->shape[q->at->dim], k, &q->out->shape[q->at->dim]))
    return bxr_infer_error(q, "result too large");
  return size_ok(q);
}

/* ---------------------------------------------------------------- indexing */

static bool idx_fits(struct bxr_infer *q, const bext_spec *t, const bext_spec *idx) {
  if (idx->rank != t->rank)
    return bxr_infer_error(q, "indices have rank %d, tensor rank %d", idx->rank, t->rank);
  for (int d = 0; d < t->rank; d++)
    if (d != q->at->dim && idx->shape[d] > t->shape[d])
      return bxr_infer_error(q, "indices extent %lld exceeds tensor extent %lld in dim %d",
                             (long long)idx->shape[d], (long long)t->shape[d], d);
  return true;
}

bool bxr_infer_gather(struct bxr_infer *q) {
  const bext_spec *t = q->in[0], *idx = q->in[1];
  if (!index_dtype(q, 1) || !norm_dim(q, &q->at->dim, t->rank) || !idx_fits(q, t, idx)) return false;
  out_like(q, idx, t->dtype);
  return true;
}

bool bxr_infer_scatter_add(struct bxr_infer *q) {
  const bext_spec *t = q->in[0], *idx = q->in[1], *v = q->in[2];
  if (!index_dtype(q, 1) || !same_dtype(q, 0, 2) || !norm_dim(q, &q->at->dim, t->rank) ||
      !idx_fits(q, t, idx))
    return false;
  bool ok = v->rank == idx->rank;
  for (int d = 0; ok && d < v->rank; d++) ok = v->shape[d] == idx->shape[d];
  if (!ok) return bxr_infer_error(q, "values must have the shape of the indices");
  out_like(q, t, t->dtype);
  return true;
}

bool bxr_infer_select(struct bxr_infer *q) {
  const bext_spec *t = q->in[0], *idx = q->in[1];
  if (!index_dtype(q, 1) || !norm_dim(q, &q->at->dim, t->rank)) return false;
  if (idx->rank != 1) return bxr_infer_error(q, "indices must be 1-D, found rank %d", idx->rank);
  out_like(q, t, t->dtype);
  q->out->shape[q->at->dim] = idx->shape[0];
  return size_ok(q);
}

bool bxr_infer_select_assign(struct bxr_infer *q) {
  const bext_spec *t = q->in[0], *idx = q->in[1], *v = q->in[2];
  if (!index_dtype(q, 1) || !same_dtype(q, 0, 2) || !norm_dim(q, &q->at->dim, t->rank)) return false;
  if (idx->rank != 1) return bxr_infer_error(q, "indices must be 1-D, found rank %d", idx->rank);
  bool ok = v->rank == t->rank;
  for (int d = 0; ok && d < t->rank; d++)
    ok = v->shape[d] == (d == q->at->dim ? idx->shape[0] : t->shape[d]);
  if (!ok) return bxr_infer_error(q, "values must have the tensor's shape with the indices' length in dim %d", q->at->dim);
  out_like(q, t, t->dtype);
  return true;
}

static bool broadcast2(struct bxr_infer *q, const bext_spec *a, const bext_spec *b, int *rank,
                       int64_t *shape) {
  if (!bxr_broadcast_shape(a->rank, a->shape, b->rank, b->shape, rank, shape))
    return bxr_infer_error(q, "shapes are not broadcastable");
  return true;
}

bool bxr_infer_mask_where(struct bxr_infer *q) {
  if (!same_dtype(q, 0, 2)) return false;
  int r1;
  int64_t s1[BEXT_MAX_RANK];
  if (!broadcast2(q, q->in[0], q->in[1], &r1, s1)) return false;
  if (!bxr_broadcast_shape(r1, s1, q->in[2]->rank, q->in[2]->shape, &q->out->rank, q->out->shape))
    return bxr_infer_error(q, "shapes are not broadcastable");
  q->out->dtype = q->in[0]->dtype;
  return size_ok(q);
}

bool bxr_infer_mask_fill(struct bxr_infer *q) {
  if (!broadcast2(q, q->in[0], q->in[1], &q->out->rank, q->out->shape)) return false;
  q->out->dtype = q->in[0]->dtype;
  return size_ok(q);
}

/* -------------------------------------------------------------- elementwise */

bool bxr_infer_binary(struct bxr_infer *q) {
  const bext_spec *a = q->in[0], *b = q->in[1];
  /* Fast path, same answer: equal dtypes and shapes need no broadcasting,
   * and the result is no larger than an operand that already exists. */
  if (a->dtype == b->dtype && bxr_same_shape(a->rank, a->shape, b->rank, b->shape)) {
    q->out->dtype = a->dtype;
    q->out->rank = a->rank;
    memcpy(q->out->shape, a->shape, sizeof a->shape);   /* fixed size, as out_like: no call */
    q->same_shape = true;
    return true;
  }
  if (!same_dtype(q, 0, 1) || !broadcast2(q, q->in[0], q->in[1], &q->out->rank, q->out->shape))
    return false;
  q->out->dtype = q->in[0]->dtype;
  return size_ok(q);
}

bool bxr_infer_compare(struct bxr_infer *q) {
  if (q->n_in == 1) {
    out_like(q, q->in[0], BEXT_BOOL);
    q->same_shape = true;
    return true;
  }
  if (!same_dtype(q, 0, 1) || !broadcast2(q, q->in[0], q->in[1], &q->out->rank, q->out->shape))
    return false;
  q->out->dtype = BEXT_BOOL;
  if (bxr_same_shape(q->in[0]->rank, q->in[0]->shape, q->in[1]->rank, q->in[1]->shape)) q->same_shape = true;
  return size_ok(q);
}

bool bxr_infer_unary(struct bxr_infer *q) {
  if (q->code == BXR_OP_CLAMP && q->sc[0].f > q->sc[1].f)
    return bxr_infer_error(q, "lower bound %g above upper bound %g", q->sc[0].f, q->sc[1].f);
  out_like(q, q->in[0], q->in[0]->dtype);
  q->same_shape = true;
  return true;
}

/* -------------------------------------------------------------- reductions */

bool bxr_infer_reduce(struct bxr_infer *q) {
  const bext_spec *t = q->in[0];
  bext_dtype dt = t->dtype;
  if (q->code == BXR_OP_ARGMAX || q->code == BXR_OP_ARGMIN) dt = BEXT_I64;
  int64_t extent;
  if (q->at->all) {
    q->out->dtype = dt;
    q->out->rank = 0;
    extent = bxr_numel(t->rank, t->shape);
  } else {
    if (!norm_dim(q, &q->at->dim, t->rank)) return false;
    out_like(q, t, dt);
    extent = t->shape[q->at->dim];
    if (q->at->keepdim) q->out->shape[q->at->dim] = 1;
    else {
      for (int d = q->at->dim; d + 1 < t->rank; d++) q->out->shape[d] = t->shape[d + 1];
      q->out->rank--;
    }
  }
  bool needs_elem = q->code == BXR_OP_MAX_REDUCE || q->code == BXR_OP_MIN_REDUCE ||
                    q->code == BXR_OP_ARGMAX || q->code == BXR_OP_ARGMIN;
  if (needs_elem && extent == 0 && bxr_numel(q->out->rank, q->out->shape) > 0)
    return bxr_infer_error(q, "cannot reduce an empty extent");
  if (needs_elem && q->at->all && extent == 0) return bxr_infer_error(q, "cannot reduce an empty tensor");
  return true;
}

bool bxr_infer_cumsum(struct bxr_infer *q) {
  if (!norm_dim(q, &q->at->dim, q->in[0]->rank)) return false;
  out_like(q, q->in[0], q->in[0]->dtype);
  return true;
}

bool bxr_infer_matmul(struct bxr_infer *q) {
  const bext_spec *a = q->in[0], *b = q->in[1];
  if (!same_dtype(q, 0, 1)) return false;
  if (a->rank < 2 || b->rank < 2) return bxr_infer_error(q, "operands need rank >= 2");
  int64_t m = a->shape[a->rank - 2], k = a->shape[a->rank - 1];
  int64_t k2 = b->shape[b->rank - 2], n = b->shape[b->rank - 1];
  if (k != k2)
    return bxr_infer_error(q, "inner extents differ (%lld vs %lld)", (long long)k, (long long)k2);
  if (!bxr_broadcast_shape(a->rank - 2, a->shape, b->rank - 2, b->shape, &q->out->rank, q->out->shape))
    return bxr_infer_error(q, "batch dims are not broadcastable");
  q->out->shape[q->out->rank++] = m;
  q->out->shape[q->out->rank++] = n;
  q->out->dtype = a->dtype;
  return size_ok(q);
}

bool bxr_infer_cast(struct bxr_infer *q) {
  if (!bext_dtype_valid(q->at->dtype)) return bxr_infer_error(q, "invalid dtype %d", (int)q->at->dtype);
  out_like(q, q->in[0], q->at->dtype);
  return true;
}

/* ------------------------------------------------------------ the entry */

static const char *kinds_text(unsigned k) {
  switch (k) {
  case BXR_KF: return "a float dtype";
  case BXR_KI: return "an int dtype";
  case BXR_KB: return "bool";
  case BXR_KN: return "a float or int dtype";
  default: return "any dtype";
  }
}

bool bxr_infer_kind_error(const struct bxr_infer *q, int i, unsigned kinds) {
  return bxr_infer_error(q, "operand %d has dtype %s, expected %s", i + 1,
                         bext_dtype_name(q->in[i]->dtype), kinds_text(kinds));
}

/* The public question (bext/ops.h): checks what a caller's specs cannot
 * be trusted with (api.c's entries and tensors guarantee it on the
 * dispatch side), then asks the same bxr_infer_run dispatch does. */
bool bext_infer(const char *op, const bext_spec *in, int n_in, bext_op_args *args, bext_spec *out) {
  int code = -1;
  for (int i = 0; op && i < BXR_OP_COUNT && code < 0; i++)
    if (!strcmp(bxr_op_info[i].name, op)) code = i;
  if (code < 0) return bxr_error("bext_infer: unknown op '%s'", op ? op : "(NULL)");
  const struct bxr_op_info *info = &bxr_op_info[code];
  char api_buf[64];
  const char *api = args && args->api ? args->api : api_buf;
  if (api == api_buf) snprintf(api_buf, sizeof api_buf, "bext_%s", info->name);
  if (!out) return bxr_error("%s: output spec is NULL", api);
  if (n_in < 0 || (info->nin >= 0 && n_in != info->nin))
    return bxr_error("%s: expects %d input spec%s, found %d", api, info->nin, info->nin == 1 ? "" : "s", n_in);
  if (n_in > 0 && !in) return bxr_error("%s: input specs are NULL", api);
  for (int i = 0; i < n_in; i++) {
    bool ok = bext_dtype_valid(in[i].dtype) && in[i].rank >= 0 && in[i].rank <= BEXT_MAX_RANK;
    for (int d = 0; ok && d < in[i].rank; d++) ok = in[i].shape[d] >= 0;
    if (!ok) return bxr_error("%s: input spec %d is malformed (dtype %d, rank %d)", api, i + 1,
                              (int)in[i].dtype, in[i].rank);
  }
  bext_op_args zero = {0};
  if (!args) args = &zero;

  const bext_spec *specs_buf[8], **specs = specs_buf;
  if (n_in > 8 && !(specs = bxr_alloc((size_t)n_in * sizeof *specs))) return false;
  for (int i = 0; i < n_in; i++) specs[i] = &in[i];
  struct bxr_infer q = {.code = (enum bxr_opcode)code, .api = api, .n_in = n_in, .in = specs,
                        .sc = args->sc, .at = &args->at, .out = out};
  bool ok = bxr_infer_run(&q);
  if (specs != specs_buf) bxr_free(specs, (size_t)n_in * sizeof *specs);
  return ok;
}
