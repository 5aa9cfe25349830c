/* bxcu.h — kernel IR -> CUDA C -> PTX through NVRTC (prefix bxcu_).
 *
 * Needs no CUDA headers and links nothing of CUDA: NVRTC is loaded with
 * dlopen when a kernel is compiled (bxcu_nvrtc.c), so a machine without
 * CUDA builds and runs everything else.  docs/kernels.md "CUDA".
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

/* --------------------------------------------------------------- NVRTC */
struct bxcu_nvrtc;

/* Loads NVRTC: libnvrtc.so.13, then libnvrtc.so, then $BEXT_NVRTC_LIB.
 * NULL with a CUDA diagnostic ("NVRTC not found: ...", naming what was
 * tried and why each failed) when none loads or lacks a function. */
BXK_FUNC struct bxcu_nvrtc *bxcu_nvrtc_open(struct bxk_diags *ds);
/* Loads exactly this library (a path or a soname); the same diagnostics. */
BXK_FUNC struct bxcu_nvrtc *bxcu_nvrtc_open_at(const char *lib, struct bxk_diags *ds);
/* Frees the handle; the library itself stays loaded (RTLD_NODELETE). */
BXK_FUNC void bxcu_nvrtc_close(struct bxcu_nvrtc *nv);
/* Which library was loaded, and NVRTC's version as major*1000+minor*10. */
BXK_FUNC const char *bxcu_nvrtc_path(const struct bxcu_nvrtc *nv);
BXK_FUNC int bxcu_nvrtc_version(const struct bxcu_nvrtc *nv);

/* CUDA C -> PTX text (malloc'd; free()).  arch: a virtual architecture
 * for --gpu-architecture (NULL: "compute_90"); the other options are
 * fixed (-default-device --std=c++17 --fmad=false).  kernel names the kernel
 * in diagnostics.  When NVRTC rejects the source: NULL, a CUDA diagnostic
 * with the start of the compile log, and the whole log in *log when log
 * is not NULL (malloc'd; free(); set to NULL when there is none). */
BXK_FUNC char *bxcu_nvrtc_ptx(struct bxcu_nvrtc *nv, const char *src, const char *kernel,
                              const char *arch, char **log, struct bxk_diags *ds);

/* -------------------------------------------------------- CUDA driver */
/* The start of `cube:cuda:N`: the driver API dlopen'd, device N found and
 * named.  It loads no module and runs no kernel yet. */
struct bxcu_driver;

/* libcuda.so.1, cuInit, device index.  NULL with a CUDA diagnostic
 * "backend unavailable: no CUDA driver (libcuda.so.1: <why>)" where there
 * is no driver (or only the toolkit's stub), or "... no CUDA device N". */
BXK_FUNC struct bxcu_driver *bxcu_driver_open(int index, struct bxk_diags *ds);
/* The same with this library (a path or a soname). */
BXK_FUNC struct bxcu_driver *bxcu_driver_open_at(const char *lib, int index, struct bxk_diags *ds);
BXK_FUNC int bxcu_driver_devices(const struct bxcu_driver *d);
BXK_FUNC const char *bxcu_driver_device_name(const struct bxcu_driver *d);
/* Frees the handle; the driver stays loaded (RTLD_NODELETE). */
BXK_FUNC void bxcu_driver_close(struct bxcu_driver *d);

#endif
