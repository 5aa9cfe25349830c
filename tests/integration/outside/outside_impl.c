/* outside_impl.c — the outside project's implementations of
 * Outside::affine (x * s.factor + s.offset), one per backend; softsign
 * has a default body and no implementation here. */
#include "outside.h"

bext_tensor *outside_affine_flex(bext_tensor *x, Scale s) {
  return bext_add_scalar(bext_mul_scalar(x, s.factor), s.offset);
}

/* NdArray: the same through full-tensor operands, so the two arms run
 * visibly different code. */
bext_tensor *outside_affine_ndarray(bext_tensor *x, Scale s) {
  const bext_device *dev = bext_device_of(x);
  if (!dev) return NULL;
  int rank = bext_rank(x);
  const int64_t *shape = bext_shape(x);
  bext_tensor *f = bext_full(shape, rank, s.factor, BEXT_F32, dev);
  bext_tensor *o = bext_full(shape, rank, s.offset, BEXT_F32, dev);
  return bext_add(bext_mul(x, f), o);
}
