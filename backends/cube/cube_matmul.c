/* cube_matmul.c — the cube devices' batched matmul: the host half of
 * stdlib/cube/matmul.bext.  a [.., m, k] and b [.., k, n] are passed as
 * views of out's rank (broadcast batch axes get stride 0, views keep
 * their strides), so no operand is copied.  f32 and f64 run the tiled
 * kernel once per 64-wide chunk of k (its barrier must be at the top
 * level, so the loop over chunks is here) where the device's cubes have
 * its shared memory; integers, f32/f64 elsewhere (f64 on lavapipe) and
 * f16/bf16 (accumulating in f32) run one plain launch of a dot product
 * per output element. */
#include <stdio.h>

#include "cube.h"

/* matmul_tiled's tile: MM_TM rows x MM_TN columns of out per cube, MM_TK
 * of k per launch, MM_UNITS units per cube (each a 4 x 16 block of the
 * tile).  The kernel spells the same numbers. */
#define MM_TM 32u
#define MM_TN 64u
#define MM_TK 64u
#define MM_UNITS 32u

/* t as an operand of rank r over out's batch axes: its own last two axes,
 * and for each batch axis of out t's stride there, or 0 where t has
 * extent 1 or no such axis (NumPy broadcasting). */
static bext_tensor *batch_view(const bext_tensor *t, const bext_tensor *out) {
  int r = out->rank, lead = r - t->rank;
  int64_t shape[BEXT_MAX_RANK], strides[BEXT_MAX_RANK];
  for (int d = 0; d < r; d++) {
    int td = d - lead;
    bool batch = d < r - 2;
    shape[d] = batch ? out->shape[d] : t->shape[td];
    strides[d] = td < 0 || (batch && t->shape[td] == 1) ? 0 : t->strides[td];
  }
  return bxr_tensor_view(t, r, shape, strides, t->offset);
}

bext_tensor *cube_exec_matmul(struct bxr_op *op) {
  if (!cube_check_dtypes(op) || !cube_fits_u32(op->device, op->in[0]) || !cube_fits_u32(op->device, op->in[1])) return NULL;
  int64_t numel = bxr_numel(op->out.rank, op->out.shape);
  if (numel > (int64_t)UINT32_MAX)
    return bxr_op_error(op, "outputs of more than 2^32 - 1 elements are not supported on %s yet", op->device->name),
           NULL;
  bext_tensor *out = cube_alloc(op->device, &op->out);
  if (!out) return NULL;
  if (numel == 0) return out;
  int r = out->rank;
  int64_t m = out->shape[r - 2], n = out->shape[r - 1], kk = op->in[0]->shape[op->in[0]->rank - 1];
  bext_tensor *a = batch_view(op->in[0], out), *b = batch_view(op->in[1], out);
  bool half = out->dtype == BEXT_F16 || out->dtype == BEXT_BF16;
  /* the tiled kernel's shared memory: a's 32 x 64 slice, b's 64 x 64 */
  uint64_t tile_bytes = (uint64_t)(MM_TM * MM_TK + MM_TK * MM_TN) * bext_dtype_size(out->dtype);
  bool flt = bext_dtype_kind(out->dtype) == BEXT_KIND_FLOAT && !half && cube_fits_shared(op->device, tile_bytes);
  char inst[64];
  snprintf(inst, sizeof inst, "matmul_%s_%s", flt ? "tiled" : half ? "half" : "dot", cube_dtype_name(out->dtype));
  /* the dot kernels loop over k in one unit */
  bool ok = flt || cube_fits_loop(op, kk);
  struct bxr_kernel *k = ok && a && b ? cube_kernel(op->device, inst) : NULL;
  bext_tensor *bind[3] = {a, b, out};
  ok = k != NULL;
  if (ok && flt) {
    int64_t tiles = numel / (m * n) * ((m + MM_TM - 1) / MM_TM) * ((n + MM_TN - 1) / MM_TN);
    if (tiles * MM_UNITS > UINT32_MAX) {
      ok = bxr_op_error(op, "%s: %lld tiles of %u units exceed the grid's 2^32 - 1 units", op->device->name,
                        (long long)tiles, MM_UNITS);
    }
    /* k = 0: one launch that stores the zero tiles */
    for (int64_t k0 = 0; ok && (k0 < kk || k0 == 0); k0 += MM_TK) {
      union bxl_scalar sc[1] = {{.u64 = 0}};
      sc[0].u32 = (uint32_t)k0;
      ok = cube_launch(op->device, k, (uint32_t)(tiles * MM_UNITS), MM_UNITS, bind, sc);
    }
  } else if (ok) {
    ok = cube_launch(op->device, k, (uint32_t)numel, 64, bind, NULL);
  }
  if (a) bext_release(a);
  if (b) bext_release(b);
  if (ok) return out;
  bext_release(out);
  return NULL;
}
