/* desc_impl.c — the Flex implementations of tests/codegen/ext/desc.bext,
 * for e2e_desc.c: small real work whose outputs the descriptors' `meta`
 * must describe (same shape, same dtype), with the ownership contract
 * (owned arguments consumed). */
#include "desc.h"

bext_tensor *desc_scale_flex(bext_tensor *x, float factor, uint32_t steps, bool exact) {
  (void)steps;
  (void)exact;
  return bext_mul_scalar(x, factor);
}

/* A zero tensor of shape `s` and dtype `d` on x's device. */
bext_tensor *desc_shaped_flex(bext_tensor *x, bext_meta_shape s, bext_dtype d, bext_meta_spec spec, size_t n,
                              ptrdiff_t i) {
  (void)spec;
  (void)n;
  (void)i;
  int64_t dims[BEXT_SHAPE_CAP];
  for (size_t k = 0; k < s.len; k++) dims[k] = (int64_t)s.dims[k];
  bext_tensor *r = bext_zeros(dims, (int)s.len, d, bext_device_of(x));
  bext_release(x);
  return r;
}

bool desc_held_flex(Held h, Plain p, Mode m, float a, Level lv, Knob kb, Held *out) {
  (void)p;
  (void)m;
  (void)lv;
  (void)kb;
  out->t = bext_mul_scalar(h.t, a);
  out->k = h.k;
  out->on = h.on;
  return out->t != NULL;
}

bext_tensor *desc_pick_flex(Pick p, bext_tensor *x, double f, int16_t a, int64_t b, uint8_t c, uint64_t d, size_t e,
                            ptrdiff_t g, Mode m, desc_tuple2_u32_bool t) {
  (void)f, (void)a, (void)b, (void)c, (void)d, (void)e, (void)g, (void)m, (void)t;
  pick_release(&p);
  return bext_add_scalar(x, 1.0);
}
