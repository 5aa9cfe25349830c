/* kernel.h — the CPU kernel runtime's private parts (prefix bxr_), shared
 * by kernel_cpu.c (prepare, launch, the in-memory cache), kernel_llvm.c
 * (loading libbext_llvm.so) and kernel_cache.c (the on-disk cache).
 * Backends see only the two entry points in backend.h. */
#ifndef BXR_KERNEL_H
#define BXR_KERNEL_H

#include "backend.h"
#include "bxl.h"

/* The LLVM library's entry table, loading it on the first call (under the
 * caller's lock: kernel_cpu.c's).  NULL + an error naming every path tried
 * when it is missing, or names another BXL_API_VERSION. */
BXR_FUNC const struct bxl_api *bxr_llvm_api(void);

#endif /* BXR_KERNEL_H */
