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

#include "bxk.h"

/* The CUDA C source of one verified kernel (malloc'd; free()), or NULL
 * with diagnostics (the verifier's, or LOWER for a name that is not a C
 * identifier).  prelude: include the fixed-width types, the text of
 * bxk_scalar.h and the topology helpers, so the result compiles alone;
 * without it, only the kernel's own code (the golden tests read that). */
BXK_FUNC char *bxcu_emit(const struct bxk_kernel *k, bool prelude, struct bxk_diags *ds);

/* The text of bxk_scalar.h, embedded at build time (bxcu_scalar_src.c). */
BXK_FUNC const char bxcu_scalar_src[];

/* The two GPU toolchains that compile the emitted source: it is CUDA C,
 * which hiprtc compiles as HIP C unchanged (bxk_scalar.h's qualifiers
 * cover both), so the vendor picks only the compiler and the driver. */
enum bxcu_vendor { BXCU_CUDA, BXCU_HIP };

/* ------------------------------------------------ NVRTC and hiprtc */
struct bxcu_rtc;

/* Loads the vendor's runtime compiler: $BEXT_NVRTC_LIB, libnvrtc.so.13,
 * libnvrtc.so (CUDA); $BEXT_HIPRTC_LIB, libhiprtc.so.6, libhiprtc.so.5,
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
/* The start of `cube:cuda:N` and `cube:hip:N`: the driver API dlopen'd
 * (libcuda.so.1; libamdhip64.so.6, else .so.5), initialized, device N
 * found and named.  It loads no module and runs no kernel yet. */
struct bxcu_driver;

/* NULL with a diagnostic "backend unavailable: no CUDA driver
 * (libcuda.so.1: <why>)" where there is no driver, only the toolkit's
 * stub, or (HIP) no device; "... no CUDA device N" past the last one. */
BXK_FUNC struct bxcu_driver *bxcu_driver_open(enum bxcu_vendor v, int index, struct bxk_diags *ds);
/* The same with this library (a path or a soname). */
BXK_FUNC struct bxcu_driver *bxcu_driver_open_at(enum bxcu_vendor v, const char *lib, int index,
                                                 struct bxk_diags *ds);
BXK_FUNC int bxcu_driver_devices(const struct bxcu_driver *d);
BXK_FUNC const char *bxcu_driver_device_name(const struct bxcu_driver *d);
/* Frees the handle; the driver stays loaded (RTLD_NODELETE). */
BXK_FUNC void bxcu_driver_close(struct bxcu_driver *d);

#endif
