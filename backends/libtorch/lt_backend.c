/* lt_backend.c — the LibTorch backend (device "libtorch:cpu"): its vtable
 * and the C half of every op; ATen runs in lt_shim.cpp (prefix bxlt_).
 *
 * Storage is bext's own host memory (the host storage members, small
 * buffers inline), so bext_data, views and the runtime's host helpers
 * work unchanged; the shim wraps each operand with at::from_blob over its
 * pointer, shape and strides — no copy for any layout — and ATen writes
 * the result into the output bext allocated.  View ops come back as
 * ATen's strides and offset over the same storage.
 *
 * What stays on this side: the element rules ATen does not share, each
 * called from the runtime (bxk_scalar.h through dtype.c), never written
 * again here — float->int casts (NaN -> 0, saturating: ATen gives
 * INT_MIN), arange and the random ops (bext's counter-based generator, so
 * every backend draws the same numbers), scalars put through bext's
 * saturation and store rules, and index range checks. */
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "lt_shim.h"
#include "plugin.h"

#ifndef BXLT_INSTALL_PATH
#define BXLT_INSTALL_PATH "/usr/local/lib/libbext_torch.so"
#endif
#ifndef BXLT_BUILD_PATH
#define BXLT_BUILD_PATH ""
#endif

/* libbext_torch.so's table, loaded by the first lt_open (under that
 * device's lock; a second device may load concurrently and gets the same
 * table: dlopen is reference counted and returns one mapping). */
static const struct bxlt_api *_Atomic shim;

/* Creation ops whose values are bext element rules: arange (double
 * arithmetic, stored with bext's store rule) and the seeded random ops. */
static bext_tensor *host_create(struct bxr_op *op) {
  bext_tensor *t = bxr_op_new_output(op);
  if (!t) return NULL;
  void *p = bxr_data(t);
  int64_t n = bxr_numel(t->rank, t->shape);
  const bext_scalar *sc = op->sc;
  for (int64_t i = 0; i < n; i++) {
    double v = op->code == BXR_OP_ARANGE ? sc[0].f + (double)i * sc[2].f
               : op->code == BXR_OP_RANDOM_UNIFORM
                   ? sc[0].f + (sc[1].f - sc[0].f) * bxr_rng_uniform(op->at.seed, (uint64_t)i)
                   : sc[0].f + sc[1].f * bxr_rng_normal(op->at.seed, (uint64_t)i);
    bxr_store_f64(p, t->dtype, i, v);
  }
  return t;
}

/* Float -> int casts: bext saturates (NaN -> 0), ATen's static_cast does not. */
static bext_tensor *host_cast(struct bxr_op *op) {
  bext_tensor *src = bxr_make_contiguous(bxr_op_take(op, 0));
  if (!src) return NULL;
  bext_tensor *out = bxr_op_new_output(op);
  if (out) bxr_convert(bxr_data(out), out->dtype, bxr_data(src), src->dtype, bxr_numel(out->rank, out->shape));
  bext_release(src);
  return out;
}

static void view_of(const bext_tensor *t, struct bxlt_view *v) {
  *v = (struct bxlt_view){bxr_data(t), t->dtype, t->rank, t->shape, t->strides};
}

static bool is_view_op(enum bxr_opcode c) {
  return c == BXR_OP_RESHAPE || c == BXR_OP_SWAP_DIMS || c == BXR_OP_PERMUTE || c == BXR_OP_EXPAND ||
         c == BXR_OP_SLICE || c == BXR_OP_NARROW;
}

/* The one exec entry: every opcode goes through it. */
static bext_tensor *lt_exec(struct bxr_op *op) {
  switch (op->code) {
  case BXR_OP_ARANGE: case BXR_OP_RANDOM_UNIFORM: case BXR_OP_RANDOM_NORMAL: return host_create(op);
  case BXR_OP_CAST:
    if (bext_dtype_kind(op->in[0]->dtype) == BEXT_KIND_FLOAT && bext_dtype_kind(op->out.dtype) == BEXT_KIND_INT)
      return host_cast(op);
    break;
  case BXR_OP_GATHER: case BXR_OP_SCATTER_ADD: case BXR_OP_SELECT: case BXR_OP_SELECT_ASSIGN:
    if (!bxr_check_indices(op)) return NULL;
    break;
  default: break;
  }
  struct bxlt_view inbuf[BXR_MAX_INPUTS], *in = inbuf;
  size_t inbytes = (size_t)op->n_in * sizeof *in;
  if (op->n_in > BXR_MAX_INPUTS && !(in = bxr_alloc(inbytes))) return NULL;   /* a long cat */
  for (int k = 0; k < op->n_in; k++) view_of(op->in[k], &in[k]);
  struct bxlt_call c = {.code = op->code, .n_in = op->n_in, .in = in, .sc = op->sc, .at = &op->at};
  for (int k = 0; k < 3; k++) c.i[k] = bxr_f64_to_i64_sat(op->sc[k].f);
  if (op->code == BXR_OP_FULL || op->code == BXR_OP_MASK_FILL) {
    char cell[8];   /* sc[0] as the output's dtype stores it */
    bxr_store_f64(cell, op->out.dtype, 0, op->sc[0].f);
    c.fill_f = bxr_load_f64(cell, op->out.dtype, 0);
    c.fill_i = bxr_load_i64(cell, op->out.dtype, 0);
  }
  bext_tensor *out = NULL;
  char err[512] = "";
  enum bxlt_status st = BXLT_OK;
  if (is_view_op(op->code)) st = atomic_load(&shim)->run(&c, err, sizeof err);
  if (st == BXLT_VIEW) {
    const bext_tensor *t = op->in[0];
    out = bxr_tensor_view(t, op->out.rank, op->out.shape, c.view_strides, t->offset + c.view_offset);
  } else if (st != BXLT_ERROR) {   /* not a view op, or a reshape that must copy */
    out = bxr_op_new_output(op);
    /* An empty result has nothing to compute (and ATen refuses some
     * empty reductions bext allows). */
    if (out && bxr_numel(out->rank, out->shape) > 0) {
      view_of(out, &c.out);
      const bool gemm = op->code == BXR_OP_MATMUL;   /* ATen's gemm: OpenBLAS's threads */
      const int blas = gemm ? bxr_blas_threads_begin() : 0;
      st = atomic_load(&shim)->run(&c, err, sizeof err);
      if (gemm) bxr_blas_threads_end(blas);
    }
  }
  if (in != inbuf) bxr_free(in, inbytes);
  if (st == BXLT_ERROR) {
    if (out) bext_release(out);
    bxr_op_error(op, "libtorch: %s", err);
    return NULL;
  }
  return out;
}

static const struct bxr_plugin torch_plugin = {
    "libbext_torch.so", BXLT_API_SYMBOL, BXLT_API_VERSION, "BEXT_TORCH_LIB", "libtorch", "runs ops on ATen"};

static bool lt_open(struct bext_device *dev) {
  const struct bxlt_api *api = atomic_load(&shim);
  if (!api) {
    api = (const struct bxlt_api *)bxr_plugin_find(&torch_plugin, BXLT_INSTALL_PATH, BXLT_BUILD_PATH);
    if (!api) {
      char why[2048];   /* the loader's message, copied before the error is set again */
      snprintf(why, sizeof why, "%s", bext_last_error());
      return bxr_error("%s: %s", dev->name, why);
    }
    atomic_store(&shim, api);
  }
  char err[256];
  if (!api->target_ok(dev->target, dev->index, err, sizeof err)) return bxr_error("%s: %s", dev->name, err);
  return true;
}

const struct bxr_backend bxr_backend_libtorch = {
    .api_version = BXR_BACKEND_API_VERSION,
    .name = "libtorch",
    .kind = BEXT_BACKEND_LIBTORCH,
    .host_memory = true,    /* CPU tensors: bext host memory ATen wraps */
    .open = lt_open,
    .storage_alloc = bxr_host_storage_alloc,
    .storage_free = bxr_host_storage_free,
    .inline_small = true,
    .from_data = bxr_host_from_data,
    .read = bxr_host_read,
    .copy = bxr_host_copy,
    /* every row of the op table: lt_exec switches on the opcode */
#define BXLT_ROW_(E, n, nin, k0, k1, k2, ns, at, inf) [BXR_OP_##E] = lt_exec,
    .exec = {BXR_OP_TABLE(BXLT_ROW_)},
#undef BXLT_ROW_
};
