/* lt_shim.h — the boundary between the LibTorch backend's C side
 * (lt_backend.c: the vtable, bext's storage and element rules) and its
 * C++ side (lt_shim.cpp: ATen).  Plain C data only: the runtime's
 * backend header uses C11 atomics C++ cannot read, so the C side
 * describes each op as views of bext storage (pointer, dtype, shape,
 * strides) plus the op's scalars already put through bext's scalar rules,
 * and the shim answers with a status and, for a failure, ATen's message.
 * Prefix: bxlt_. */
#ifndef BXLT_SHIM_H
#define BXLT_SHIM_H

#include "bext/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A strided view of host memory that bext owns (storage data + offset):
 * the shim wraps it with at::from_blob, so ATen reads and writes bext's
 * buffers in place. */
struct bxlt_view {
  void *data;
  bext_dtype dtype;
  int rank;
  const int64_t *shape;
  const int64_t *strides;   /* in elements, 0 for expanded dims */
};

struct bxlt_call {
  enum bxr_opcode code;
  int n_in;
  const struct bxlt_view *in;
  /* The op's scalars as bext reads them (lt_backend.c computes these with
   * the runtime's rules, bxk_scalar.h through dtype.c):
   *   sc      the op's scalars as given (float operands: sc[k].f; powi,
   *           narrow, repeat_dim read sc[k].i)
   *   i[k]    bxr_f64_to_i64_sat(sc[k].f): int operands' scalar
   *   fill    FULL / MASK_FILL: sc[0].f stored into the output's dtype and
   *           read back (fill_f as double, fill_i as int64) */
  const bext_scalar *sc;
  int64_t i[3];
  double fill_f;
  int64_t fill_i;
  const bext_attrs *at;
  /* The output, allocated by bext (contiguous, op->out's dtype and shape).
   * data NULL for the view ops (reshape, swap_dims, permute, expand,
   * slice, narrow): the shim then answers BXLT_VIEW with the view's
   * strides and offset relative to in[0], or BXLT_NEED_OUT when ATen
   * would copy (a reshape of a layout no view can express). */
  struct bxlt_view out;
  int64_t view_strides[BEXT_MAX_RANK];
  int64_t view_offset;      /* elements, relative to in[0].data */
};

enum bxlt_status { BXLT_OK, BXLT_VIEW, BXLT_NEED_OUT, BXLT_ERROR };

/* Runs c on ATen (inference mode: no autograd).  Every C++ exception stops
 * here: BXLT_ERROR with ATen's message (without its backtrace) in err. */
__attribute__((visibility("hidden"))) enum bxlt_status bxlt_run(struct bxlt_call *c, char *err,
                                                                 size_t errn);
/* Whether this libtorch can run on `target` ("cpu" always; "cuda" when it
 * was built with CUDA and sees a device); false with the reason in err. */
__attribute__((visibility("hidden"))) bool bxlt_target_ok(const char *target, int index, char *err,
                                                          size_t errn);

/* The shim is its own shared object, libbext_torch.so, which the backend
 * dlopens when a libtorch device first opens (plugin.c): libtorch costs a
 * process about a second to map and initialize, and every program that
 * links libbext would otherwise pay it.  Its one export is this table. */
#define BXLT_API_VERSION 1
#define BXLT_API_SYMBOL "bxlt_api_v1"
struct bxlt_api {
  uint32_t version;   /* BXLT_API_VERSION */
  enum bxlt_status (*run)(struct bxlt_call *c, char *err, size_t errn);
  bool (*target_ok)(const char *target, int index, char *err, size_t errn);
};

#ifdef __cplusplus
}
#endif

#endif /* BXLT_SHIM_H */
