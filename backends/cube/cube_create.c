/* cube_create.c — creation ops on a cube device: zeros, ones and full
 * launch stdlib/cube/create.bext's fill kernel, arange its arange kernel;
 * empty only allocates (bext.h: its contents are unspecified, as on Flex
 * and in PyTorch), because its callers, a Cube implementation making an
 * output, overwrite every element: zeroing first cost the GELU kernel row
 * a third of its time.  The
 * random ops fill on the host with the runtime's generator
 * (bxr_rng_uniform / bxr_rng_normal, the values every backend gives),
 * the way NdArray does: the generator is the runtime's, not an op's
 * scalar semantics. */
#include <stdio.h>

#include "cube.h"

/* The values on the host, then the device's from_data: host code never
 * writes a cube device's storage (on cube:vulkan it is device memory). */
static bext_tensor *random_fill(struct bxr_op *op) {
  bext_dtype dt = op->out.dtype;
  int64_t n = bxr_numel(op->out.rank, op->out.shape);
  size_t bytes = (size_t)n * bext_dtype_size(dt);
  void *p = bxr_alloc(bytes ? bytes : 1);
  if (!p) return NULL;
  double a = op->sc[0].f, b = op->sc[1].f;
  for (int64_t i = 0; i < n; i++)
    bxr_store_f64(p, dt, i,
                  op->code == BXR_OP_RANDOM_UNIFORM ? a + (b - a) * bxr_rng_uniform(op->at.seed, (uint64_t)i)
                                                    : a + b * bxr_rng_normal(op->at.seed, (uint64_t)i));
  bext_tensor *t = op->device->vt->from_data(op->device, dt, op->out.rank, op->out.shape, p);
  bxr_free(p, bytes ? bytes : 1);
  return t;
}

bext_tensor *cube_exec_create(struct bxr_op *op) {
  if (!cube_check_dtypes(op)) return NULL;
  if (op->code == BXR_OP_RANDOM_UNIFORM || op->code == BXR_OP_RANDOM_NORMAL) return random_fill(op);
  if (op->code == BXR_OP_EMPTY) return cube_alloc(op->device, &op->out);
  bext_dtype dt = op->out.dtype;
  char inst[64];
  union bxl_scalar sc[2];
  if (op->code == BXR_OP_ARANGE) {
    if (dt == BEXT_BOOL) return cube_not_yet(op);
    snprintf(inst, sizeof inst, "arange_%s", cube_dtype_name(dt));
    sc[0].f64 = op->sc[0].f;
    sc[1].f64 = op->sc[2].f;
  } else {
    double v = op->code == BXR_OP_ONES ? 1.0 : op->code == BXR_OP_FULL ? op->sc[0].f : 0.0;
    snprintf(inst, sizeof inst, "fill_%s", cube_dtype_name(dt));
    sc[0] = cube_scalar(dt, v);
  }
  struct bxr_kernel *k = cube_kernel(op->device, inst);
  if (!k) return NULL;
  bext_tensor *t = cube_alloc(op->device, &op->out);
  if (!t) return NULL;
  if (!cube_fits_u32(op->device, t) || !cube_launch(op->device, k, (uint32_t)bxr_numel(t->rank, t->shape), 256, &t, sc)) {
    bext_release(t);
    return NULL;
  }
  return t;
}
