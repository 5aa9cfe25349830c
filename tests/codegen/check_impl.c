/* check_impl.c — the implementations of ext/checked.bext for the
 * check-mode tests (e2e_check.c).  Flex disagrees with the declared
 * metadata when asked to; NdArray always agrees (so the same calls on
 * NdArray show a correct implementation passing silently). */
#include "checked.h"

/* x + 0 on flex; with mode 1 flattened, 2 as f64, 3 as i32. */
bext_tensor *checked_same_flex(bext_tensor *x, uint32_t mode) {
  if (mode == 1) return bext_reshape(x, (int64_t[]){-1}, 1);   /* flattened */
  if (mode == 2) return bext_cast(x, BEXT_F64);
  if (mode == 3) return bext_cast(x, BEXT_I32);   /* not even a float */
  return bext_add_scalar(x, 0.0);
}
bext_tensor *checked_same_ndarray(bext_tensor *x, uint32_t mode) {
  (void)mode;
  return bext_add_scalar(x, 0.0);
}

static bool count_it(bext_tensor *x, size_t extra, Counted *out) {
  out->count = (size_t)bext_numel(x) + extra;
  out->tensor = bext_abs(x);
  return out->tensor != NULL;
}
bool checked_counted_flex(bext_tensor *x, size_t extra, Counted *out) { return count_it(x, extra, out); }
bool checked_counted_ndarray(bext_tensor *x, size_t extra, Counted *out) { return count_it(x, 0, out); }

static bool pack(bext_tensor *x, bool empty, Packet *out) {
  if (empty) {
    bext_release(x);
    out->tag = PACKET_EMPTY;
    return true;
  }
  out->tag = PACKET_FULL;
  out->as.Full.t = x;
  out->as.Full.tag = 3;
  return true;
}
bool checked_packet_flex(bext_tensor *x, bool empty, Packet *out) { return pack(x, empty, out); }
bool checked_packet_ndarray(bext_tensor *x, bool empty, Packet *out) { return pack(x, false, out); }

/* (x + 1, x * 2) */
static bool pair_of(bext_tensor *x, checked_tuple2_tensor_tensor *out) {
  out->_0 = bext_add_scalar(bext_retain(x), 1.0);
  out->_1 = bext_mul_scalar(x, 2.0);
  return out->_0 && out->_1;
}
bool checked_pair_flex(bext_tensor *x, checked_tuple2_tensor_tensor *out) { return pair_of(x, out); }
bool checked_pair_ndarray(bext_tensor *x, checked_tuple2_tensor_tensor *out) { return pair_of(x, out); }

static bool maybe_of(bext_tensor *x, bool full, bool lie, Packet *out) {
  if (full != lie) {
    out->tag = PACKET_FULL;
    out->as.Full.t = bext_neg(x);
    out->as.Full.tag = 1;
    return out->as.Full.t != NULL;
  }
  bext_release(x);
  out->tag = PACKET_EMPTY;
  return true;
}
bool checked_maybe_flex(bext_tensor *x, bool full, bool lie, Packet *out) { return maybe_of(x, full, lie, out); }
bool checked_maybe_ndarray(bext_tensor *x, bool full, bool lie, Packet *out) { return maybe_of(x, full, false, out); }

bext_tensor *checked_matrix_only_flex(bext_tensor *x) { return bext_neg(x); }
bext_tensor *checked_matrix_only_ndarray(bext_tensor *x) { return bext_neg(x); }

/* Overrides the default body (x * 2) and transposes by mistake. */
bext_tensor *checked_doubled_flex(bext_tensor *x) { return bext_swap_dims(bext_mul_scalar(x, 2.0), 0, 1); }
