/* bxvk.h — kernel IR -> SPIR-V, and a Vulkan compute runtime (prefix
 * bxvk_).  The start of the `cube:vulkan:N` device (issue 11, item 1).
 *
 * The emitter (bxvk_emit*.c) writes SPIR-V 1.3 words directly from a
 * verified kernel; nothing of glslang or shaderc is involved.  The runtime
 * (bxvk_vk.c, bxvk_mem.c, bxvk_run.c) loads libvulkan.so.1 with dlopen,
 * so nothing links Vulkan and a machine without it builds and runs
 * everything else.  docs/kernels.md "The SPIR-V lowering and the Vulkan
 * runtime" describes both.
 *
 * The device ABI of an emitted module (mirrors the CPU ABI of bxl.h):
 *   - descriptor set 0, binding j < nbind: binding j's elements, a storage
 *     buffer of its element type (bool and u8 as 8-bit integers 0/1 and
 *     0..255, f16 as binary16: the 8- and 16-bit storage features);
 *   - binding nbind: the metadata, BXVK_META_WORDS u32 words per binding:
 *     {len, rank, offset (elements), 0, shape[8], stride[8]}, then
 *     BXVK_GRID_WORDS words {cube_count x, y, z, 0}: the whole launch's
 *     grid (a launch past the device's maxComputeWorkGroupCount runs as
 *     several dispatches with a base, whose NumWorkgroups is their own);
 *   - push constants: scalar j at byte 8*j (as union bxl_scalar's slot;
 *     bool, u8 and f16 read from the slot's low 32 bits);
 *   - specialization constants 0, 1, 2: cube_dim x, y, z (the module
 *     serves every cube_dim; the runtime makes one pipeline per dim). */
#ifndef BXVK_H
#define BXVK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bxk.h"

/* Bumped when the emitted code changes meaning: caches key on it. */
#define BXVK_EMIT_VERSION 3u
#define BXVK_META_WORDS 20u
#define BXVK_GRID_WORDS 4u
/* Push constants every Vulkan device has (maxPushConstantsSize >= 128). */
#define BXVK_MAX_SCALARS 16u

/* What a module needs from the device, beyond Vulkan 1.1 compute. */
#define BXVK_NEEDS(X)                                               \
  X(INT8, "shaderInt8")                                             \
  X(STORAGE8, "storageBuffer8BitAccess")                            \
  X(FLOAT16, "shaderFloat16")                                       \
  X(STORAGE16, "storageBuffer16BitAccess")                          \
  X(INT64, "shaderInt64")                                           \
  X(FLOAT64, "shaderFloat64")

enum {
#define BXVK_X_(E, s) BXVK_NEED_BIT_##E,
  BXVK_NEEDS(BXVK_X_)
#undef BXVK_X_
  BXVK_NEED_COUNT
};
#define BXVK_NEED(E) (1u << BXVK_NEED_BIT_##E)
/* The Vulkan feature's name for need bit i ("shaderInt64"). */
BXK_FUNC const char *bxvk_need_name(unsigned bit);

struct bxvk_spirv {
  uint32_t *words;     /* malloc'd */
  size_t nwords;
  unsigned needs;      /* BXVK_NEED(...) bits */
  uint32_t nbind, nscalar, shared_bytes;
};

/* SPIR-V for one kernel (verified first: the verifier's diagnostics on
 * failure).  A kernel with more than BXVK_MAX_SCALARS scalars gets LOWER
 * (K0013) naming the kernel. */
BXK_FUNC bool bxvk_emit(const struct bxk_kernel *k, struct bxvk_spirv *out, struct bxk_diags *ds);
BXK_FUNC void bxvk_spirv_free(struct bxvk_spirv *m);

/* ------------------------------------------------------------ runtime */
/* A device is used by one thread at a time: its batch, descriptor pool
 * and buffer lists are not locked (the device backend calls it under its
 * device lock, as backend.h's members are called). */
struct bxvk_dev;
struct bxvk_buf;
struct bxvk_kernel;

/* The disk cache the runtime keeps pipelines in, as callbacks so that
 * libbext's kernel_cache.c stays the one home of the entry format (its
 * bxr_kcache_load, _release and _store fit these).  load: 1 with the
 * bytes in *data and *len (valid until release(*tok)), 0 for none, -1 for an entry that
 * failed its checks (rebuilt).  NULL: no disk cache. */
struct bxvk_disk {
  int (*load)(uint64_t ir_hash, const char *target, const void **data, size_t *len, void **tok);
  void (*release)(void *tok);
  void (*store)(uint64_t ir_hash, const char *target, const void *data, size_t len);
};

/* Opens Vulkan device `index` (cube:vulkan:N): loads libvulkan.so.1
 * ($BEXT_VULKAN_LIB first when set), makes an instance and a device with
 * one compute queue and every feature of BXVK_NEEDS the device has.
 * NULL with a VULKAN diagnostic: "backend unavailable: no Vulkan loader
 * (...)", "no Vulkan device N (the loader sees M)", or the failing call. */
BXK_FUNC struct bxvk_dev *bxvk_open(int index, const struct bxvk_disk *disk, struct bxk_diags *ds);
BXK_FUNC struct bxvk_dev *bxvk_open_at(const char *lib, int index, const struct bxvk_disk *disk,
                                      struct bxk_diags *ds);
/* Waits for queued work, frees every kernel, buffer and pool. */
BXK_FUNC void bxvk_close(struct bxvk_dev *d);
BXK_FUNC const char *bxvk_device_name(const struct bxvk_dev *d);
BXK_FUNC int bxvk_device_count(const struct bxvk_dev *d);
BXK_FUNC unsigned bxvk_device_features(const struct bxvk_dev *d);  /* BXVK_NEED bits it has */
/* maxComputeSharedMemorySize: a cube's shared memory, bytes. */
BXK_FUNC uint32_t bxvk_device_shared_bytes(const struct bxvk_dev *d);
/* For tests: the device acts as if it had only the features in mask. */
BXK_FUNC void bxvk_device_mask_features(struct bxvk_dev *d, unsigned mask);

/* Device buffers from a caching allocator (power-of-two size classes,
 * kept for reuse on free).  Upload and download go through a staging
 * buffer and wait: download first submits and waits for queued launches. */
BXK_FUNC struct bxvk_buf *bxvk_buf_new(struct bxvk_dev *d, size_t bytes, struct bxk_diags *ds);
BXK_FUNC void bxvk_buf_free(struct bxvk_dev *d, struct bxvk_buf *b);
BXK_FUNC size_t bxvk_buf_size(const struct bxvk_buf *b);
BXK_FUNC bool bxvk_buf_upload(struct bxvk_dev *d, struct bxvk_buf *b, const void *src, size_t bytes,
                              struct bxk_diags *ds);
BXK_FUNC bool bxvk_buf_download(struct bxvk_dev *d, struct bxvk_buf *b, void *dst, size_t bytes,
                                struct bxk_diags *ds);

/* backend.h's kernel_prepare: emits, checks the device's features (a
 * VULKAN error naming the kernel and the missing feature), makes the
 * shader module and layouts, and reads the pipeline cache from disk.
 * key as in backend.h (equal keys, equal IR); the device owns the result
 * until bxvk_close. */
BXK_FUNC struct bxvk_kernel *bxvk_prepare(struct bxvk_dev *d, const struct bxk_kernel *ir, uint64_t key,
                                          struct bxk_diags *ds);

/* How many bindings k takes (a launch passes that many). */
BXK_FUNC uint32_t bxvk_kernel_nbind(const struct bxvk_kernel *k);

/* A binding of a launch: a buffer viewed as a tensor (elements of the
 * binding's type; offset, shape and strides in elements). */
struct bxvk_arg {
  struct bxvk_buf *buf;
  uint32_t offset, len, rank;
  uint32_t shape[8], stride[8];
};

union bxl_scalar;
/* backend.h's kernel_launch: queued into the current batch (submitted
 * when full, and by bxvk_sync / a download).  Checks the grid (every
 * component >= 1, cube_dim within the device's limits, at most 2^32-1
 * units) and that each binding's view lies inside its buffer.  A
 * cube_count past the device's maxComputeWorkGroupCount on some axis is
 * recorded as several dispatches (vkCmdDispatchBase), one launch all the
 * same: the kernel sees the whole grid. */
BXK_FUNC bool bxvk_launch(struct bxvk_dev *d, struct bxvk_kernel *k, const uint32_t cube_count[3],
                          const uint32_t cube_dim[3], const struct bxvk_arg *args,
                          const union bxl_scalar *scalars, struct bxk_diags *ds);
/* Submits the batch and waits.  *gpu_ns (when not NULL): the batch's
 * device time from its timestamps (0 when the queue has none). */
BXK_FUNC bool bxvk_sync(struct bxvk_dev *d, uint64_t *gpu_ns, struct bxk_diags *ds);

struct bxvk_stats {
  unsigned long modules, pipelines;     /* shader modules and pipelines made */
  unsigned long memory_hits;            /* prepares answered by the in-memory table */
  unsigned long disk_hits, disk_rejects, disk_stores;
  unsigned long buf_allocs, buf_reuses; /* device allocations, and frees reused */
  unsigned long submits, launches;
  unsigned long dispatches;             /* more than launches when a grid was split */
};
BXK_FUNC void bxvk_stats(const struct bxvk_dev *d, struct bxvk_stats *st);
/* Forgets every prepared kernel (as a new process would): the next
 * prepare goes to the disk cache.  For tests and benchmarks. */
BXK_FUNC void bxvk_forget_kernels(struct bxvk_dev *d);

#endif
