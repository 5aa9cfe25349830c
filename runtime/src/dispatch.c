/* dispatch.c — runs an op descriptor: operand checks (NULL handles, one
 * device), the inference question on the inputs' specs (dtype kinds and
 * the row's rule, shared with bext_infer), the device's exec entry, and a
 * check that the backend returned what the inference promised.
 * Inputs are consumed in every case.  Index VALUES are not checked here:
 * reading them would force a lazy device to run its queue at record time,
 * so each backend checks them where it reads them (bxr_check_indices). */
#include <stdio.h>
#include <string.h>

#include "backend.h"

/* "<api>: <message> (operands: [2,3] f32, [3] f32)": one text for a
 * descriptor (tensors, possibly NULL) and an inference question (specs).
 * null: a NULL operand, citing the pending error. */
static bool operands_verror(bool null, const char *api, int n, bext_tensor *const *ts,
                            const bext_spec *const *specs, const char *fmt, va_list ap) {
  char msg[600], ops[400];
  size_t len = 0;
  vsnprintf(msg, sizeof msg, fmt, ap);
  ops[0] = 0;
  for (int i = 0; i < n && len < sizeof ops; i++) {
    char b[200];
    len += (size_t)snprintf(ops + len, sizeof ops - len, "%s%s", i ? ", " : "",
                            ts ? bxr_describe(ts[i], b, sizeof b) : bxr_describe_spec(specs[i], b, sizeof b));
  }
  bool (*set)(const char *, ...) = null ? bxr_error_null : bxr_error;
  if (n > 0) return set("%s: %s (operands: %s)", api, msg, ops);
  return set("%s: %s", api, msg);
}

static bool op_verror(const struct bxr_op *op, bool null, const char *fmt, va_list ap) {
  const char *api = op->api ? op->api : bxr_op_name(op->code);
  return operands_verror(null, api, op->n_in, op->in, NULL, fmt, ap);
}

bool bxr_infer_error(const struct bxr_infer *q, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  operands_verror(false, q->api ? q->api : bxr_op_name(q->code), q->n_in, NULL, q->in, fmt, ap);
  va_end(ap);
  return false;
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
  /* The inference question points at the inputs' own specs (no copies):
   * the same rule bext_infer runs on caller specs.  The loop that fills
   * it also checks that every input is on the first one's device. */
  const bext_spec *specs_buf[BXR_MAX_INPUTS], **specs = specs_buf;
  if (op->n_in > BXR_MAX_INPUTS && !(specs = bxr_alloc((size_t)op->n_in * sizeof *specs))) goto done;
  if (op->n_in > 0) op->device = op->in[0]->device;
  bool inferred = false;
  for (int i = 0; i < op->n_in; i++) {
    if (op->in[i]->device != op->device) {
      bxr_op_error(op, "operands on different devices: operand 1 is on '%s', operand %d on '%s'",
                   op->device->name, i + 1, op->in[i]->device->name);
      goto asked;
    }
    specs[i] = &op->in[i]->spec;
  }
  if (!op->device) {
    bxr_op_error(op, "no device for the op");
    goto asked;
  }
  struct bxr_infer q = {.code = op->code, .api = op->api, .n_in = op->n_in, .in = specs,
                        .sc = op->sc, .at = &op->at, .out = &op->out};
  inferred = bxr_infer_run(&q);
asked:
  if (specs != specs_buf) bxr_free(specs, (size_t)op->n_in * sizeof *specs);
  if (!inferred) goto done;

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
