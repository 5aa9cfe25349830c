/* dispatch.c — runs an op descriptor: operand checks (NULL handles, dtype
 * kinds, one device), the row's inference rule, the device's exec entry,
 * and a check that the backend returned what the inference promised.
 * Inputs are consumed in every case.  Index VALUES are not checked here:
 * reading them would force a lazy device to run its queue at record time,
 * so each backend checks them where it reads them (bxr_check_indices). */
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
  return bxr_tensor_new(op->device, op->out.dtype, op->out.rank, op->out.shape);
}

/* Host-memory backends call this from their index ops, before reading
 * the indices, so kernels may assume in-range indices. */
bool bxr_check_indices(struct bxr_op *op) {
  const bext_tensor *t = op->in[0], *idx = op->in[1];
  int64_t bound = t->shape[op->at.dim];
  int64_t n = bxr_numel(idx->rank, idx->shape);
  if (n == 0) return true;
  BXR_ASSERT(idx->device->vt->host_memory);
  const char *p = bxr_data(idx);
  bool i32 = idx->dtype == BEXT_I32;
  struct bxr_iter it;
  bxr_iter_init(&it, idx->rank, idx->shape, 1, idx->strides);
  for (int64_t i = 0; i < n; i++, bxr_iter_next(&it)) {
    int64_t v = i32 ? ((const int32_t *)p)[it.off[0]] : bxr_load_i64(p, idx->dtype, it.off[0]);
    if (v < 0 || v >= bound)
      return bxr_op_error(op, "index %lld (at flat position %lld) is out of range for dim %d of extent %lld",
                          (long long)v, (long long)i, op->at.dim, (long long)bound);
  }
  return true;
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
    op->device = op->in[0]->device;
    for (int i = 1; i < op->n_in; i++)
      if (op->in[i]->device != op->device) {
        bxr_op_error(op, "operands on different devices: operand 1 is on '%s', operand %d on '%s'",
                     op->device->name, i + 1, op->in[i]->device->name);
        goto done;
      }
  }
  if (!op->device) {
    bxr_op_error(op, "no device for the op");
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

  bext_tensor *(*fn)(struct bxr_op *) = op->device->vt->exec[op->code];
  if (!fn) {
    bxr_op_error(op, "op '%s' is not implemented by device '%s'", info->name, op->device->name);
    goto done;
  }
  uint64_t errors = bext_error_count(); /* a failure that sets none is caught below */
  res = fn(op);
  if (res) {
    bool ok = res->dtype == op->out.dtype && res->rank == op->out.rank && res->device == op->device;
    for (int d = 0; ok && d < res->rank; d++) ok = res->shape[d] == op->out.shape[d];
    if (!ok) {
      /* A broken backend is a programming error.  Clean up first so a
       * panic hook that longjmps leaks nothing. */
      char b[200], want[200];
      bxr_describe(res, b, sizeof b);
      bool moved = res->device != op->device;
      bxr_describe_shape(op->out.rank, op->out.shape, want, sizeof want);
      bext_release(res);
      for (int i = 0; i < op->n_in; i++) {
        bext_release(op->in[i]);
        op->in[i] = NULL;
      }
      bxr_panic(__FILE__, __LINE__, "device '%s' returned %s%s for op '%s', inference says %s %s",
                op->device->name, b, moved ? " on another device" : "", info->name,
                want, bext_dtype_name(op->out.dtype));
    }
  } else if (bext_error_count() == errors) {
    bxr_op_error(op, "device '%s' failed without a message", op->device->name);
  }
done:
  for (int i = 0; i < op->n_in; i++) {
    if (op->in[i]) bxr_release(op->in[i]);
    op->in[i] = NULL;
  }
  return res;
}
