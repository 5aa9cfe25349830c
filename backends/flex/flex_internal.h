/* flex_internal.h — what the Flex backend's modules share (prefix bxfx_).
 *
 * Flex is the fast eager CPU backend: zero-copy strided views for layout
 * ops, in-place reuse of uniquely held operands, vectorized contiguous
 * fast paths with a strided/broadcasting general path, the runtime's
 * thread pool (bxr_pool_for, backend.h) for large work, OpenBLAS for
 * float matmul, f16/bf16 computed through f32, and the runtime's caching
 * allocator for large buffers (runtime/src/host_cache.c).  Modules:
 *   flex_backend.c  the backend table (bxr_backend_flex) and storage hooks
 *   flex_elem.c     elementwise engine: binary, scalar, compare, logic,
 *                   unary, clamp/powi, mask_where/fill, cast
 *   flex_layout.c   creation and layout ops (views where possible)
 *   flex_index.c    gather/scatter_add/select/select_assign
 *   flex_reduce.c   reductions and cumsum
 *   flex_matmul.c   batched matmul (cblas for floats)
 *   flex_kern*.c, flex_conv.c  raw building blocks */
#ifndef BXFX_INTERNAL_H
#define BXFX_INTERNAL_H

/* the backend-author header: everything Flex takes from the runtime
 * (tensors, op descriptors, the vtable, host helpers, the thread pool) */
#include "backend.h"
#include "flex_conv.h"
#include "flex_kern.h"

#define BXFX_FUNC BXR_FUNC

/* Elements per block of the strided paths (stack buffers hold a block). */
#define BXFX_BLK 512

/* Storage: the runtime's caching host allocator (backend.h,
 * runtime/src/host_cache.c), shared with cube:cpu. */

/* Exec entries, by module. */
BXFX_FUNC bext_tensor *bxfx_exec_elementwise(struct bxr_op *op);
BXFX_FUNC bext_tensor *bxfx_exec_cast(struct bxr_op *op);
BXFX_FUNC bext_tensor *bxfx_exec_mask(struct bxr_op *op);
BXFX_FUNC bext_tensor *bxfx_exec_create(struct bxr_op *op);
BXFX_FUNC bext_tensor *bxfx_exec_layout(struct bxr_op *op);
BXFX_FUNC bext_tensor *bxfx_exec_index(struct bxr_op *op);
BXFX_FUNC bext_tensor *bxfx_exec_reduce(struct bxr_op *op);
BXFX_FUNC bext_tensor *bxfx_exec_cumsum(struct bxr_op *op);
BXFX_FUNC bext_tensor *bxfx_exec_matmul(struct bxr_op *op);

/* Copies a strided region: dst/src point at element 0 of their views,
 * strides in elements, esize bytes per element.  Threaded when large. */
BXFX_FUNC void bxfx_copy_strided(void *dst, const int64_t *dst_strides, const void *src,
                                 const int64_t *src_strides, int rank, const int64_t *shape,
                                 size_t esize);

/* Transposed reads (a tile of a transposed operand: many short runs a
 * row apart) into L2 ahead of use: `runs` runs of `bytes` bytes from p,
 * `stride` bytes apart.  The hardware prefetchers follow none of them,
 * so without this each run costs a full memory latency.  L2, not L1: with
 * a power-of-two row length every run maps to the same few L1 sets.
 * write: the runs are about to be written (an output's rows of a tile):
 * a store to a line not in cache waits for the line just as a load does. */
static inline void bxfx_prefetch_runs(const void *p, int64_t stride, int64_t runs, int64_t bytes, bool write) {
  for (int64_t q = 0; q < runs; q++)
    for (int64_t x = 0; x < bytes; x += 64) {
      if (write) __builtin_prefetch((const char *)p + q * stride + x, 1, 1);
      else __builtin_prefetch((const char *)p + q * stride + x, 0, 1);
    }
}

/* Non-temporal outputs (kernels' stream_out): an op whose output and
 * inputs together touch at least bxfx_stream_min() bytes computes its
 * output a block at a time in L1 and copies it out with streaming
 * stores, skipping the read-for-ownership of lines it overwrites whole.
 * The default is the last-level cache (sysfs, then 32 MiB): below it the
 * lines an op writes are still cached when the next call (or the next
 * op) comes, and plain stores find them there.  BEXT_FLEX_STREAM_MIN
 * (bytes) overrides it, and bxfx_stream_set_min (tests: 0 streams
 * everything, SIZE_MAX nothing) sets it and returns the previous value. */
BXFX_FUNC size_t bxfx_stream_min(void);
BXFX_FUNC size_t bxfx_stream_set_min(size_t bytes);
/* out bytes written, in bytes read (a broadcast operand's own size) */
static inline bool bxfx_streams(size_t out, size_t in) { return out + in >= bxfx_stream_min(); }

/* Streaming stores are weakly ordered: each thread that issued them fences
 * before its part of the work counts as done (the pool's join alone is
 * not documented to order them). */
static inline void bxfx_stream_fence(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_sfence();
#endif
}

/* The output of op: input i reused in place when bxr_op_can_reuse allows
 * (taken from the descriptor), else a fresh contiguous tensor. */
BXFX_FUNC bext_tensor *bxfx_output(struct bxr_op *op, int reuse_from);

#endif
