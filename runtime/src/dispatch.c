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

/* A contiguous index tensor is first scanned for any value outside
 * [0, bound) in parallel chunks (a branch-free OR the compiler vectorizes);
 * only when one exists does the ordered walk below run to name the
 * first. */
struct idx_scan {
  const void *p;
  bool i32;
  int64_t bound;
  int bad;   /* atomic */
};
static void idx_scan_chunk(void *ctx, size_t b, size_t e) {
  struct idx_scan *S = ctx;
  bool bad = false;
  if (S->i32) {
    const int32_t *v = (const int32_t *)S->p;
    for (size_t i = b; i < e; i++) bad |= (uint64_t)(int64_t)v[i] >= (uint64_t)S->bound;
  } else {
    const int64_t *v = (const int64_t *)S->p;
    for (size_t i = b; i < e; i++) bad |= (uint64_t)v[i] >= (uint64_t)S->bound;
  }
  if (bad) __atomic_store_n(&S->bad, 1, __ATOMIC_RELAXED);
}

/* The index values of in[1] against bound: host memory p (offsets by
 * strides, or contiguous when strides is NULL). */
static bool check_index_values(struct bxr_op *op, const char *p, const bext_tensor *idx, const int64_t *strides,
                               int64_t n, int64_t bound) {
  if (!strides && (idx->dtype == BEXT_I32 || idx->dtype == BEXT_I64)) {
    struct idx_scan S = { p, idx->dtype == BEXT_I32, bound, 0 };
    bxr_pool_for((size_t)n, 1, 64, idx_scan_chunk, &S);
    if (!__atomic_load_n(&S.bad, __ATOMIC_RELAXED)) return true;
  }
  bool i32 = idx->dtype == BEXT_I32;
  int64_t contig[BEXT_MAX_RANK];
  if (!strides) {
    bxr_contiguous_strides(idx->rank, idx->shape, contig);
    strides = contig;
  }
  struct bxr_iter it;
  bxr_iter_init(&it, idx->rank, idx->shape, 1, strides);
  for (int64_t i = 0; i < n; i++, bxr_iter_next(&it)) {
    int64_t v = i32 ? ((const int32_t *)p)[it.off[0]] : bxr_load_i64(p, idx->dtype, it.off[0]);
    if (v < 0 || v >= bound)
      return bxr_op_error(op, "index %lld (at flat position %lld) is out of range for dim %d of extent %lld",
                          (long long)v, (long long)i, op->at.dim, (long long)bound);
  }
  return true;
}

/* Backends call this from their index ops, before reading the indices,
 * so kernels may assume in-range indices.  Host memory is read in place;
 * a device's indices are read to the host first (its read member). */
bool bxr_check_indices(struct bxr_op *op) {
  const bext_tensor *t = op->in[0], *idx = op->in[1];
  int64_t bound = t->shape[op->at.dim];
  int64_t n = bxr_numel(idx->rank, idx->shape);
  if (n == 0) return true;
  if (idx->device->vt->host_memory)
    return check_index_values(op, bxr_data(idx), idx, bxr_is_contiguous(idx) ? NULL : idx->strides, n, bound);
  size_t bytes = (size_t)n * bext_dtype_size(idx->dtype);
  void *tmp = bxr_alloc(bytes);
  if (!tmp) return bxr_op_error(op, "out of memory reading %zu bytes of indices", bytes);
  bool ok = idx->device->vt->read(idx, tmp) && check_index_values(op, tmp, idx, NULL, n, bound);
  bxr_free(tmp, bytes);
  return ok;
}

/* The operand checks' slow half: runs only when the hot loop in
 * bxr_dispatch met a NULL operand or a second device, and reports what
 * the checks in their documented order find first (every NULL before any
 * device mismatch).  Always returns false. */
static __attribute__((cold, noinline)) bool operands_error(struct bxr_op *op) {
  for (int i = 0; i < op->n_in; i++)
    if (!op->in[i]) return op_null_error(op, "operand %d is a NULL tensor handle", i + 1);
  op->device = op->in[0]->device;
  for (int i = 1; i < op->n_in; i++)
    if (op->in[i]->device != op->device)
      return bxr_op_error(op, "operands on different devices: operand 1 is on '%s', operand %d on '%s'",
                          op->device->name, i + 1, op->in[i]->device->name);
  BXR_ASSERT(!"operands_error without a bad operand");
  return false;
}

static __attribute__((cold, noinline)) void no_exec_error(const struct bxr_op *op) {
  bxr_op_error(op, "op '%s' is not implemented by device '%s'", bxr_op_info[op->code].name, op->device->name);
}

/* A backend returned something else than the inference promised: a
 * programming error.  Cleans up first so a panic hook that longjmps
 * leaks nothing. */
static __attribute__((cold, noinline, noreturn)) void wrong_result(struct bxr_op *op, bext_tensor *res) {
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
            op->device->name, b, moved ? " on another device" : "", bxr_op_info[op->code].name,
            want, bext_dtype_name(op->out.dtype));
}

/* The hot path is one loop over the operands (NULL, device, spec
 * pointer), the inference question, the exec call, the result check and
 * the releases; every error is reported by a cold function above, so
 * small ops pay neither its code nor its stack. */
bext_tensor *bxr_dispatch(struct bxr_op *op) {
  BXR_ASSERT((unsigned)op->code < BXR_OP_COUNT);
  const int n = op->n_in;
  bext_tensor *res = NULL;
  bool inferred = false;
  /* The inference question points at the inputs' own specs (no copies):
   * the same rule bext_infer runs on caller specs. */
  const bext_spec *specs_buf[BXR_MAX_INPUTS], **specs = specs_buf;
  if (__builtin_expect(n > BXR_MAX_INPUTS, 0) && !(specs = bxr_alloc((size_t)n * sizeof *specs)))
    goto done;
  if (n > 0) {
    /* Every input non-NULL and on the first one's device. */
    bext_tensor *t0 = op->in[0];
    if (__builtin_expect(!t0, 0)) goto bad_operands;
    struct bext_device *dev = t0->device;
    specs[0] = &t0->spec;
    for (int i = 1; i < n; i++) {
      bext_tensor *t = op->in[i];
      if (__builtin_expect(!t || t->device != dev, 0)) goto bad_operands;
      specs[i] = &t->spec;
    }
    op->device = dev;
  }
  if (__builtin_expect(!op->device, 0)) {
    bxr_op_error(op, "no device for the op");
    goto asked;
  }
  struct bxr_infer q = {.code = op->code, .api = op->api, .n_in = n, .in = specs,
                        .sc = op->sc, .at = &op->at, .out = &op->out};
  inferred = bxr_infer_run(&q);
  op->same_shape = q.same_shape;
  goto asked;
bad_operands:
  operands_error(op);
asked:
  if (__builtin_expect(specs != specs_buf, 0)) bxr_free(specs, (size_t)n * sizeof *specs);
  if (!inferred) goto done;

  bext_tensor *(*fn)(struct bxr_op *) = op->device->vt->exec[op->code];
  if (__builtin_expect(!fn, 0)) {
    no_exec_error(op);
    goto done;
  }
  uint64_t errors = bxr_error_count(); /* a failure that sets none is caught below */
  res = fn(op);
  if (__builtin_expect(res != NULL, 1)) {
    bool ok = res->dtype == op->out.dtype && res->rank == op->out.rank && res->device == op->device;
    for (int d = 0; ok && d < res->rank; d++) ok = res->shape[d] == op->out.shape[d];
    if (__builtin_expect(!ok, 0)) wrong_result(op, res);
  } else if (bxr_error_count() == errors) {
    bxr_op_error(op, "device '%s' failed without a message", op->device->name);
  }
done:
  for (int i = 0; i < n; i++) {
    if (op->in[i]) bxr_release(op->in[i]);
    op->in[i] = NULL;
  }
  return res;
}
