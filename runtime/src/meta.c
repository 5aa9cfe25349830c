/* meta.c — the meta device: tensors with a shape and a dtype and no data.
 *
 * Every op on a meta tensor goes through dispatch like any other, so its
 * inference rule checks the operands and computes the output spec; the
 * device's exec then returns a new meta tensor of that spec and computes
 * nothing.  Running code over meta tensors therefore yields the specs its
 * outputs would have (PyTorch's "meta" device plays the same role).  Check
 * mode runs default bodies this way (ext.c); reading a meta tensor is an
 * error.  The device is the runtime's own: it is not in the backend table,
 * no spec names it, and no extension routes to it. */
#include "backend.h"

static void no_priv(void *p) { (void)p; }

static bext_tensor *meta_exec(struct bxr_op *op) {
  return bxr_tensor_new_opaque(op->device, op->out.dtype, op->out.rank, op->out.shape, NULL, no_priv);
}

static bext_tensor *meta_from_data(struct bext_device *dev, bext_dtype dt, int rank, const int64_t *shape,
                                   const void *src) {
  (void)src;
  return bxr_tensor_new_opaque(dev, dt, rank, shape, NULL, no_priv);
}

static bool meta_read(const bext_tensor *t, void *dst) {
  (void)dst;
  char b[200];
  return bxr_error("bext_read: %s is a meta tensor (check mode evaluates specs only): it holds no data",
                   bxr_describe(t, b, sizeof b));
}

static const struct bxr_backend meta_vt = {
    .api_version = BXR_BACKEND_API_VERSION,
    .name = "meta",
    .kind = BEXT_BACKEND_NDARRAY, /* unused: nothing routes here */
    .from_data = meta_from_data,
    .read = meta_read,
    .exec = {
#define META_X_(E, n, nin, k0, k1, k2, ns, at, inf) [BXR_OP_##E] = meta_exec,
        BXR_OP_TABLE(META_X_)
#undef META_X_
    },
};

static struct bext_device meta_dev = {
    .vt = &meta_vt, .kind = BEXT_BACKEND_NDARRAY, .layer = -1, .available = true, .opened = true,
    .name = "meta", .route = &meta_dev, .lock = PTHREAD_MUTEX_INITIALIZER};

bext_tensor *bxr_meta_like(const bext_tensor *t) {
  return bxr_tensor_new_opaque(&meta_dev, t->dtype, t->rank, t->shape, NULL, no_priv);
}
