/* route_impl.c — the user side of tests/codegen/ext/route.bext: the
 * per-backend implementations a user of the generated header supplies.
 * Each records the backend it ran on (route_last_backend) so the tests see
 * where the dispatch entry point routed; otherwise they do small real work
 * with the core ops and follow the ownership contract (owned arguments are
 * consumed, borrowed ones are not). */
#include <string.h>

#include "route.h"
#include "route_impl.h"

const char *route_last_backend = "";

#define IMPLS(BK)                                                                \
  bext_tensor *routed_pick_##BK(bext_tensor *a, bext_tensor *b) {                \
    route_last_backend = #BK;                                                    \
    bext_release(a);                                                             \
    return b;                                                                    \
  }                                                                              \
  bext_tensor *routed_nested_##BK(Wrapped w) {                                   \
    route_last_backend = #BK;                                                    \
    bext_release(w.inner.left);                                                  \
    return bext_mul_scalar(w.inner.right, w.scale);                              \
  }                                                                              \
  bext_tensor *routed_choose_##BK(const Choice *c, bext_tensor *x) {             \
    route_last_backend = #BK;                                                    \
    (void)c;                                                                     \
    return x;                                                                    \
  }                                                                              \
  bool routed_rewrap_##BK(Wrapped w, Wrapped *out) {                             \
    route_last_backend = #BK;                                                    \
    *out = w;                                                                    \
    out->scale = w.scale * 2;                                                    \
    return true;                                                                 \
  }                                                                              \
  bool routed_flip_##BK(Choice c, Choice *out) {                                 \
    route_last_backend = #BK;                                                    \
    memset(out, 0, sizeof *out);                                                 \
    switch (c.tag) {                                                             \
    case CHOICE_INTS:                                                            \
      out->tag = CHOICE_FLOATS;                                                  \
      out->as.Floats.t = bext_cast(c.as.Ints._0, BEXT_F32);                      \
      out->as.Floats.k = 7;                                                      \
      return out->as.Floats.t != NULL;                                           \
    case CHOICE_FLOATS:                                                          \
      out->tag = CHOICE_INTS;                                                    \
      out->as.Ints._0 = bext_cast(c.as.Floats.t, BEXT_I64);                      \
      return out->as.Ints._0 != NULL;                                            \
    default:                                                                     \
      out->tag = CHOICE_NOTHING;                                                 \
      return true;                                                               \
    }                                                                            \
  }                                                                              \
  bool routed_split_##BK(bext_tensor *x, route_tuple2_tensor_tensor *out) {      \
    route_last_backend = #BK;                                                    \
    out->_1 = bext_neg(bext_retain(x));                                          \
    out->_0 = x;                                                                 \
    return out->_1 != NULL;                                                      \
  }                                                                              \
  bool routed_counted_##BK(bext_tensor *x, Counted *out) {                       \
    route_last_backend = #BK;                                                    \
    out->tensor = bext_retain(x);                                                \
    out->count = (size_t)bext_numel(x);                                          \
    return true;                                                                 \
  }

IMPLS(flex)
#if defined(BEXT_FEATURE_ND)
IMPLS(ndarray)
#endif

/* Only Flex has its own `scaled` (x * factor + 100, so the tests can tell
 * it from the default body's x * factor + 1); nobody implements `gelu` or
 * `mixed`: the default bodies serve them. */
bext_tensor *routed_scaled_flex(bext_tensor *x, float factor) {
  route_last_backend = "flex";
  return bext_add_scalar(bext_mul_scalar(x, factor), 100.0);
}

#if defined(BEXT_FEATURE_EXTRA)
bext_tensor *routed_extra_flex(bext_tensor *x) {
  route_last_backend = "flex";
  return bext_neg(x);
}
#if defined(BEXT_FEATURE_ND)
bext_tensor *routed_extra_ndarray(bext_tensor *x) {
  route_last_backend = "ndarray";
  return bext_neg(x);
}
#endif
#endif

bool route_fail_quietly;

bext_tensor *flex_only_only_flex(bext_tensor *x) {
  route_last_backend = "flex";
  if (route_fail_quietly) {   /* fails without setting an error */
    bext_release(x);
    return NULL;
  }
  return x;
}

bext_tensor *flex_only_filled_flex(size_t n, float value) {
  route_last_backend = "flex";
  const bext_device *d;
  if (!(d = bext_device_get("flex"))) return NULL;
  int64_t shape[1] = {(int64_t)n};
  return bext_full(shape, 1, value, BEXT_F32, d);
}
