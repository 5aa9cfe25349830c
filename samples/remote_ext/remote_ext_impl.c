/* remote_ext_impl.c — the Flex implementations of remote_ext.bext: what
 * the server runs when a client calls the ops on a remote: tensor (and
 * what the client runs on its own flex tensors). */
#include "remote_ext.h"

bext_tensor *remote_acts_softplus_flex(bext_tensor *x, float beta) {
  return bext_div_scalar(bext_log1p(bext_exp(bext_mul_scalar(x, beta))), beta);
}

bext_tensor *remote_rows_row_max_flex(bext_tensor *x) { return bext_max_dim(x, 1, false); }

bool remote_rows_row_stats_flex(bext_tensor *x, RowStats *out) {
  out->max = bext_max_dim(bext_retain(x), 1, false);
  out->mean = bext_mean_dim(bext_retain(x), 1, false);
  out->rows = (uint32_t)bext_shape(x)[0];
  return out->max && out->mean;
}
