/* bxcu.h — kernel IR -> CUDA C -> PTX through NVRTC, and the same C ->
 * an AMDGPU code object through hiprtc (prefix bxcu_).
 *
 * Needs no CUDA or ROCm headers and links nothing of either: the
 * compilers and drivers are loaded with dlopen when used (bxcu_rtc.c,
 * bxcu_driver.c), so a machine without them builds and runs everything
 * else.  docs/kernels.md "The CUDA and HIP lowering".
 *
 * The device ABI of an emitted kernel (mirrors the CPU ABI of bxl.h):
 *
 *   extern "C" __global__ void NAME(struct bxcu_bind0 b0, ...,   one per binding
 *                                   T0 s0, ...)                   one per scalar
 *
 * each binding passed by value as {data, len, rank, shape[8], stride[8]}
 * (80 bytes, the layout of struct bxl_binding, with a device pointer),
 * each scalar by value as its C type (bool and f16 as their storage:
 * uint8_t 0/1 and uint16_t binary16).  Topology comes from threadIdx,
 * blockIdx, blockDim and gridDim with the CPU ABI's linearization
 * (ABSOLUTE_POS linear over the whole grid, x fastest). */
#ifndef BXCU_H
#define BXCU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bxk.h"

/* The CUDA C source of one verified kernel (malloc'd; free()), or NULL
 * with diagnostics (the verifier's, or LOWER for a name that is not a C
 * identifier).  prelude: include the fixed-width types, the text of
 * bxk_scalar.h and the topology helpers, so the result compiles alone;
 * without it, only the kernel's own code (the golden tests read that). */
BXK_FUNC char *bxcu_emit(const struct bxk_kernel *k, bool prelude, struct bxk_diags *ds);

/* Bump when bxcu_emit's output changes for the same IR: the devices'
 * on-disk kernel caches put it in their target text (with a hash of
 * bxk_scalar.h's text), so an old PTX is never loaded for new code. */
#define BXCU_EMIT_VERSION 1

/* The text of bxk_scalar.h, embedded at build time (bxcu_scalar_src.c). */
BXK_FUNC const char bxcu_scalar_src[];

/* The two GPU toolchains that compile the emitted source: it is CUDA C,
 * which hiprtc compiles as HIP C unchanged (bxk_scalar.h's qualifiers
 * cover both), so the vendor picks only the compiler and the driver. */
enum bxcu_vendor { BXCU_CUDA, BXCU_HIP };

/* ------------------------------------------------ NVRTC and hiprtc */
struct bxcu_rtc;

/* Loads the vendor's runtime compiler: $BEXT_NVRTC_LIB, libnvrtc.so.13,
 * libnvrtc.so.12, libnvrtc.so, /usr/local/cuda/lib64/libnvrtc.so (CUDA); $BEXT_HIPRTC_LIB, libhiprtc.so.6, libhiprtc.so.5,
 * libamdhip64.so.5 (HIP: ROCm 5 keeps hiprtc in the HIP runtime).  NULL
 * with a diagnostic (K0015 CUDA, K0016 HIP: "NVRTC not found: ...",
 * naming what was tried and why each failed) when none loads or one lacks
 * a function. */
BXK_FUNC struct bxcu_rtc *bxcu_rtc_open(enum bxcu_vendor v, struct bxk_diags *ds);
/* Loads exactly this library (a path or a soname); the same diagnostics. */
BXK_FUNC struct bxcu_rtc *bxcu_rtc_open_at(enum bxcu_vendor v, const char *lib, struct bxk_diags *ds);
/* Frees the handle; the library itself stays loaded (RTLD_NODELETE). */
BXK_FUNC void bxcu_rtc_close(struct bxcu_rtc *rc);
/* Which library was loaded, and its version as major*1000+minor*10. */
BXK_FUNC const char *bxcu_rtc_path(const struct bxcu_rtc *rc);
BXK_FUNC int bxcu_rtc_version(const struct bxcu_rtc *rc);

/* Source -> PTX text (CUDA) or an AMDGPU code object, an ELF (HIP);
 * malloc'd, free(); NUL-terminated either way, *size (when not NULL) its
 * length without that NUL.  arch: CUDA's virtual architecture for
 * --gpu-architecture (NULL: "compute_90") or HIP's --offload-arch (NULL:
 * "gfx90a").  The other options are fixed: no contraction of a*b+c into
 * an fma (--fmad=false, -ffp-contract=off), C++17, device code by default.
 * kernel names the kernel in diagnostics.  When the compiler rejects the
 * source: NULL, a diagnostic with the start of the log, and the whole log
 * in *log when log is not NULL (malloc'd; free(); NULL when none). */
BXK_FUNC void *bxcu_rtc_compile(struct bxcu_rtc *rc, const char *src, const char *kernel, const char *arch,
                                size_t *size, char **log, struct bxk_diags *ds);

/* ------------------------------------------------- CUDA and HIP drivers */
/* The driver API under `cube:cuda:N` and `cube:hip:N`
 * (backends/cube/cube_cuda.c): dlopen'd (libcuda.so.1; libamdhip64.so.6,
 * else .so.5), initialized, device N found and named, its primary context
 * made current on every thread that calls in; device memory, modules
 * (PTX / code objects) and launches on the null stream, which orders them
 * (a download waits for the launches before it). */
struct bxcu_driver;
struct bxcu_module;

/* A device address (CUdeviceptr, hipDeviceptr_t: both 64-bit). */
typedef uint64_t bxcu_ptr;

/* What launches must fit, read from the device at open (CUDA:
 * cuDeviceGetAttribute; HIP: AMD's fixed limits, as HIP numbers its
 * attributes differently per ROCm release). */
struct bxcu_limits {
  int cc_major, cc_minor;     /* CUDA's compute capability (HIP: 0.0) */
  uint32_t threads;           /* units per cube */
  uint32_t block[3], grid[3]; /* cube_dim and cube_count per axis */
  uint32_t shared;            /* static shared memory per cube, bytes */
};

/* $BEXT_CUDA_LIB / $BEXT_HIP_LIB, when set, name the library to load.
 * NULL with a diagnostic "backend unavailable: no CUDA driver
 * (libcuda.so.1: <why>)" where there is no driver, only the toolkit's
 * stub, or (HIP) no device; "... no CUDA device N" past the last one. */
BXK_FUNC struct bxcu_driver *bxcu_driver_open(enum bxcu_vendor v, int index, struct bxk_diags *ds);
/* The same with this library (a path or a soname). */
BXK_FUNC struct bxcu_driver *bxcu_driver_open_at(enum bxcu_vendor v, const char *lib, int index,
                                                 struct bxk_diags *ds);
BXK_FUNC int bxcu_driver_devices(const struct bxcu_driver *d);
BXK_FUNC const char *bxcu_driver_device_name(const struct bxcu_driver *d);
BXK_FUNC const struct bxcu_limits *bxcu_driver_limits(const struct bxcu_driver *d);
/* cuDriverGetVersion / hipDriverGetVersion (CUDA 12.4: 12040); 0 unknown. */
BXK_FUNC int bxcu_driver_version(const struct bxcu_driver *d);
/* Frees the handle; the driver stays loaded (RTLD_NODELETE) and the
 * primary context retained (the process keeps it, as the driver does). */
BXK_FUNC void bxcu_driver_close(struct bxcu_driver *d);

/* Device memory.  Every call makes the device's context current on the
 * calling thread first; false + a diagnostic naming the driver call and
 * its error on failure.  Copies are synchronous for the host buffer. */
BXK_FUNC bool bxcu_mem_alloc(struct bxcu_driver *d, size_t bytes, bxcu_ptr *out, struct bxk_diags *ds);
BXK_FUNC bool bxcu_mem_free(struct bxcu_driver *d, bxcu_ptr p, struct bxk_diags *ds);
BXK_FUNC bool bxcu_mem_upload(struct bxcu_driver *d, bxcu_ptr dst, const void *src, size_t bytes,
                              struct bxk_diags *ds);
BXK_FUNC bool bxcu_mem_download(struct bxcu_driver *d, void *dst, bxcu_ptr src, size_t bytes,
                                struct bxk_diags *ds);
BXK_FUNC bool bxcu_mem_copy(struct bxcu_driver *d, bxcu_ptr dst, bxcu_ptr src, size_t bytes, struct bxk_diags *ds);
BXK_FUNC bool bxcu_mem_set8(struct bxcu_driver *d, bxcu_ptr dst, uint8_t v, size_t bytes, struct bxk_diags *ds);
/* Waits for everything queued (cuCtxSynchronize / hipDeviceSynchronize). */
BXK_FUNC bool bxcu_sync(struct bxcu_driver *d, struct bxk_diags *ds);

/* Loads image (PTX text, NUL-terminated, or a code object) and finds
 * its kernel `kernel`; NULL + a diagnostic (the driver's JIT rejecting
 * PTX newer than it reads says CUDA_ERROR_UNSUPPORTED_PTX_VERSION). */
BXK_FUNC struct bxcu_module *bxcu_module_load(struct bxcu_driver *d, const void *image, const char *kernel,
                                              struct bxk_diags *ds);
BXK_FUNC void bxcu_module_unload(struct bxcu_driver *d, struct bxcu_module *m);
/* Queues m's kernel over grid x block on the null stream; params[i]
 * points at parameter i's value (the bxcu ABI above: bindings, then
 * scalars).  An error inside the kernel surfaces at the next sync or
 * download. */
BXK_FUNC bool bxcu_launch(struct bxcu_driver *d, const struct bxcu_module *m, const uint32_t grid[3],
                          const uint32_t block[3], void **params, struct bxk_diags *ds);

#endif
