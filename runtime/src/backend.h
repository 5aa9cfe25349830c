/* backend.h — the backend interface: one const struct of function pointers
 * per backend, filled with designated initializers (QBE's Target, ggml's
 * ggml_backend_i).  exec has ONE uniform signature for every opcode, so a
 * decorator (Fusion, Autodiff, Remote) can wrap any backend generically by
 * wrapping its exec entries.  A NULL exec entry means "not implemented":
 * dispatch answers with an error naming the op and the backend. */
#ifndef BXR_BACKEND_H
#define BXR_BACKEND_H

#include "op.h"

/* Bump when a member changes meaning; backends set .api_version to it and
 * the device table refuses a mismatching backend. */
#define BXR_BACKEND_API_VERSION 1

struct bxr_backend {
  int api_version;           /* BXR_BACKEND_API_VERSION */
  const char *name;          /* device spelling: "ndarray", "flex" */
  bext_backend_kind kind;    /* which device kind it serves */

  /* Storage.  storage_alloc fills s->data (and s->priv) for `bytes` bytes
   * (bytes may be 0), allocating through bxr_alloc (the allocation hook);
   * false with the error set on failure.  storage_free releases what it
   * allocated (s->bytes holds the size).  Required. */
  bool (*storage_alloc)(struct bxr_storage *s, size_t bytes);
  void (*storage_free)(struct bxr_storage *s);
  /* True when data is plain host memory the runtime may place inline in
   * the tensor's own block for small buffers (a few KiB): storage_alloc /
   * storage_free are then not called for it and s->inline_data is set.
   * False (the default) for backends whose buffers are not host memory. */
  bool inline_small;
  /* True when storage->data is plain host memory the CPU may read and
   * write directly: bext_data / bext_data_mut hand it to extension
   * kernels.  False (the default) answers them "not host memory". */
  bool host_memory;

  /* Data movement for tensors of this backend.  from_data fills the fresh,
   * contiguous dst from row-major host memory src; read copies t (any
   * layout) to host memory dst in row-major order; copy fills the fresh
   * contiguous dst (same dtype and shape) from src (any layout, same
   * backend).  Return false with the error set on failure.  Required
   * (CPU backends use bxr_host_from_data / bxr_host_read / bxr_host_copy). */
  bool (*from_data)(bext_tensor *dst, const void *src);
  bool (*read)(const bext_tensor *t, void *dst);
  bool (*copy)(bext_tensor *dst, const bext_tensor *src);

  /* One entry per opcode.  Called by dispatch after the inference rule
   * validated op and filled op->out; the inputs are on this backend and of
   * allowed kinds.  Returns a NEW tensor with exactly op->out's dtype and
   * shape (any layout: a view is fine), or NULL with the error set (e.g.
   * out of memory).  The descriptor owns the inputs; take one with
   * bxr_op_take to reuse it.  NULL entry: not implemented. */
  bext_tensor *(*exec[BXR_OP_COUNT])(struct bxr_op *op);
};

/* Host-memory implementations of the storage/data members for CPU backends. */
BXR_FUNC bool bxr_host_storage_alloc(struct bxr_storage *s, size_t bytes);
BXR_FUNC void bxr_host_storage_free(struct bxr_storage *s);
BXR_FUNC bool bxr_host_from_data(bext_tensor *dst, const void *src);
BXR_FUNC bool bxr_host_read(const bext_tensor *t, void *dst);
BXR_FUNC bool bxr_host_copy(bext_tensor *dst, const bext_tensor *src);

/* The backends this build knows.  The NdArray reference is defined in
 * backends/ndarray/; the Flex backend is defined by backends/flex/ as
 *     const struct bxr_backend bxfx_backend = { ... };
 * The device table (runtime/src/device.c) refers to it strongly when the
 * build defines BEXT_HAVE_FLEX (runtime/CMakeLists.txt does when a flex
 * source defines bxfx_backend), weakly otherwise: a build without
 * backends/flex answers "backend not available in this build" for "flex"
 * (and falls back to ndarray as the default device). */
BXR_DATA const struct bxr_backend bxnd_backend;
extern const struct bxr_backend bxfx_backend;

/* The backend serving a device kind, or NULL when not in this build. */
BXR_FUNC const struct bxr_backend *bxr_backend_for(bext_backend_kind kind);
/* The backend named by dev (NULL: the default device), or NULL with an
 * error ("backend not available in this build", naming the device). */
BXR_FUNC const struct bxr_backend *bxr_backend_of_device(const bext_device *dev, const char *api);

#endif /* BXR_BACKEND_H */
