/* remote_ops_impl.c — the Flex implementations of remote_ops.bext, linked
 * into the test (the client's own flex runs) and into remote_ext_server
 * (what the server runs for a remote call). */
#include "remote_ops.h"

bext_tensor *remote_ops_affine_flex(bext_tensor *x, float a, float b) {
  if (a == 0.0f) {   /* the tests' deliberate failure */
    bext_release(x);
    return NULL;
  }
  return bext_add_scalar(bext_mul_scalar(x, a), b);
}

bool remote_ops_scaled_flex(bext_tensor *x, float a, Scaled *out) {
  if (a == 0.0f) {   /* the tests' deliberate failures: none, a wrong field, a wrong shape */
    bext_release(x);
    return false;
  }
  out->factor = a < 0 ? -a : a;
  out->rank = (size_t)bext_rank(x);
  out->y = a == 7.0f ? bext_sum(x) : bext_mul_scalar(x, a);
  return out->y != NULL;
}

bext_tensor *remote_shapes_row_sums_flex(bext_tensor *x, double scale) {
  return bext_mul_scalar(bext_sum_dim(x, 1, false), scale);
}

bool remote_values_summary_flex(bext_tensor *x, double scale, Summary *out) {
  out->count = (uint32_t)bext_numel(x);
  out->scale = scale;
  out->total = bext_mul_scalar(bext_sum(x), scale);
  return out->total != NULL;
}

bool remote_values_split_flex(bext_tensor *x, uint8_t parts, Split *out) {
  switch (parts) {
  case 0:
    bext_release(x);
    out->tag = SPLIT_NOTHING;
    return true;
  case 1:
    out->tag = SPLIT_WHOLE;
    out->as.Whole._0 = x;
    out->as.Whole._1 = 1;
    return true;
  case 2:
    out->tag = SPLIT_HALVES;
    out->as.Halves.cut = -bext_numel(x);
    out->as.Halves.lo = bext_add_scalar(bext_retain(x), -1.0);
    out->as.Halves.hi = bext_add_scalar(x, 1.0);
    return out->as.Halves.lo && out->as.Halves.hi;
  case 3:
    bext_release(x);
    out->tag = SPLIT_WHOLE;
    out->as.Whole._1 = 3;
    return true;
  default:
    bext_release(x);
    return false;
  }
}

bool remote_values_halves_flex(bext_tensor *x, remote_ops_tuple3_tensor_tensor_usize *out) {
  out->_0 = bext_mul_scalar(bext_retain(x), 2.0);
  out->_1 = bext_sum_dim(bext_retain(x), 1, false);
  out->_2 = (size_t)bext_rank(x);
  return out->_0 && out->_1;
}

bool remote_values_count_above_flex(bext_tensor *x, float t, uint64_t *out) {
  float v[64];
  int64_t n = bext_numel(x);
  if (bext_dtype_of(x) != BEXT_F32 || n > 64 || !bext_read(x, v, (size_t)n * sizeof v[0])) return false;
  *out = 0;
  for (int64_t i = 0; i < n; i++) *out += v[i] > t;
  return true;
}
