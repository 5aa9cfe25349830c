/* dispatch.c — runs an op descriptor: operand checks (NULL handles, dtype
 * kinds, one backend), the row's inference rule, index-value checks, the
 * backend's exec entry, and a check that the backend returned what the
 * inference promised.  Inputs are consumed in every case. */
#include <stdio.h>
#include <string.h>

#include "backend.h"

static const char *kinds_text(unsigned k) {
  switch (k) {
  case BXR_KF: return "a float dtype";
  case BXR_KI: return "an int dtype";
  case BXR_KB: return "bool";
  case BXR_KN: return "a float or int dtype";
  default: return "any dtype";
  }
}

/* bxr_op_error's message; null: a NULL operand, citing the pending error. */
static bool op_verror(const struct bxr_op *op, bool null, const char *fmt, va_list ap) {
  char msg[600], ops[400];
  size_t len = 0;
  vsnprintf(msg, sizeof msg, fmt, ap);
  ops[0] = 0;
  for (int i = 0; i < op->n_in && len < sizeof ops; i++) {
    char b[200];
    len += (size_t)snprintf(ops + len, sizeof ops - len, "%s%s", i ? ", " : "",
                            bxr_describe(op->in[i], b, sizeof b));
  }
  const char *api = op->api ? op->api : bxr_op_name(op->code);
  bool (*set)(const char *, ...) = null ? bxr_error_null : bxr_error;
  if (op->n_in > 0) return set("%s: %s (operands: %s)", api, msg, ops);
  return set("%s: %s", api, msg);
}

bool bxr_op_error(const struct bxr_op *op, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  op_verror(op, false, fmt, ap);
  va_end(ap);
  return false;
}

static bool op_null_error(const struct bxr_op *op, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  op_verror(op, true, fmt, ap);
  va_end(ap);
  return false;
}

bext_tensor *bxr_op_take(struct bxr_op *op, int i) {
  BXR_ASSERT(i >= 0 && i < op->n_in);
  bext_tensor *t = op->in[i];
  op->in[i] = NULL;
  return t;
}

bool bxr_op_can_reuse(const struct bxr_op *op, int i) {
  const bext_tensor *t = op->in[i];
  if (!t || t->dtype != op->out.dtype) return false;
  /* uniqueness first: the cheap test that fails for borrowed operands */
  return bxr_is_unique(t) && bxr_same_shape(t->rank, t->shape, op->out.rank, op->out.shape) &&
         bxr_is_contiguous(t);
}

bext_tensor *bxr_op_new_output(const struct bxr_op *op) {
  return bxr_tensor_new(op->backend, op->out.dtype, op->out.rank, op->out.shape);
}

static const char *backend_name(const struct bxr_backend *be) { return be ? be->name : "?"; }

/* Index operands are checked against their bound here, once for every
 * backend, so kernels may assume in-range indices.  (Reads through the
 * backend: a sync point for future asynchronous backends.) */
static bool check_index_values(struct bxr_op *op) {
  const bext_tensor *t = op->in[0], *idx = op->in[1];
  int64_t bound = t->shape[op->at.dim];
  int64_t n = bxr_numel(idx->rank, idx->shape);
  if (n == 0) return true;
  size_t bytes = (size_t)n * bext_dtype_size(idx->dtype);
  void *buf = bxr_alloc(bytes);
  if (!buf) return false;
  bool ok = idx->backend->read(idx, buf);
  for (int64_t i = 0; ok && i < n; i++) {
    int64_t v = bxr_load_i64(buf, idx->dtype, i);
    if (v < 0 || v >= bound) {
      bxr_op_error(op, "index %lld out of range for dim %d of extent %lld", (long long)v,
                   op->at.dim, (long long)bound);
      ok = false;
    }
  }
  bxr_free(buf, bytes);
  return ok;
}

bext_tensor *bxr_dispatch(struct bxr_op *op) {
  BXR_ASSERT((unsigned)op->code < BXR_OP_COUNT);
  const struct bxr_op_info *info = &bxr_op_info[op->code];
  bext_tensor *res = NULL;

  for (int i = 0; i < op->n_in; i++)
    if (!op->in[i]) {
      op_null_error(op, "operand %d is a NULL tensor handle", i + 1);
      goto done;
    }
  if (op->n_in > 0) {
    op->backend = op->in[0]->backend;
    for (int i = 1; i < op->n_in; i++)
      if (op->in[i]->backend != op->backend) {
        bxr_op_error(op, "operands on different devices: operand 1 is on '%s', operand %d on '%s'",
                     backend_name(op->backend), i + 1, backend_name(op->in[i]->backend));
        goto done;
      }
  }
  if (!op->backend) {
    bxr_op_error(op, "no backend for the op");
    goto done;
  }
  for (int i = 0; i < op->n_in; i++) {
    unsigned k = info->kinds[i < BXR_MAX_INPUTS ? i : BXR_MAX_INPUTS - 1];
    if (info->nin < 0) k = info->kinds[0];
    if (!(k & (1u << bxr_dtype_kind(op->in[i]->dtype)))) {
      bxr_op_error(op, "operand %d has dtype %s, expected %s", i + 1,
                   bext_dtype_name(op->in[i]->dtype), kinds_text(k));
      goto done;
    }
  }
  if (!info->infer(op)) goto done;
  if ((op->code == BXR_OP_GATHER || op->code == BXR_OP_SCATTER_ADD || op->code == BXR_OP_SELECT ||
       op->code == BXR_OP_SELECT_ASSIGN) &&
      !check_index_values(op))
    goto done;

  bext_tensor *(*fn)(struct bxr_op *) = op->backend->exec[op->code];
  if (!fn) {
    bxr_op_error(op, "op '%s' is not implemented by backend '%s'", info->name, op->backend->name);
    goto done;
  }
  uint64_t errors = bext_error_count(); /* a failure that sets none is caught below */
  res = fn(op);
  if (res) {
    bool ok = res->dtype == op->out.dtype && res->rank == op->out.rank && res->backend == op->backend;
    for (int d = 0; ok && d < res->rank; d++) ok = res->shape[d] == op->out.shape[d];
    if (!ok) {
      /* A broken backend is a programming error.  Clean up first so a
       * panic hook that longjmps leaks nothing. */
      char b[200], want[200];
      bxr_describe(res, b, sizeof b);
      bxr_describe_shape(op->out.rank, op->out.shape, want, sizeof want);
      bext_release(res);
      for (int i = 0; i < op->n_in; i++) {
        bext_release(op->in[i]);
        op->in[i] = NULL;
      }
      bxr_panic(__FILE__, __LINE__, "backend '%s' returned %s for op '%s', inference says %s %s",
                op->backend->name, b, info->name, want, bext_dtype_name(op->out.dtype));
    }
  } else if (bext_error_count() == errors) {
    bxr_op_error(op, "backend '%s' failed without a message", op->backend->name);
  }
done:
  for (int i = 0; i < op->n_in; i++) {
    if (op->in[i]) bxr_release(op->in[i]);
    op->in[i] = NULL;
  }
  return res;
}
