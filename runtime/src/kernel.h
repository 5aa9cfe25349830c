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
/* The first of paths (NULL or empty ones skipped) that loads and carries
 * this BXL_API_VERSION's table; NULL + an error listing each path with
 * why it failed, then note.  bxr_llvm_api's search, testable. */
BXR_FUNC const struct bxl_api *bxr_llvm_load(const char *const *paths, int n, const char *note);

/* The on-disk cache (kernel_cache.c; layout and checks there and in
 * docs/kernels.md).  target: bxl_host_target's text. */
struct bxr_kcache_entry {
  void *mem;            /* the file's bytes (scratch: bxr_kcache_release) */
  size_t cap;
  const void *obj;      /* the object inside mem */
  size_t len;
};
/* The entry's path into buf; false when the cache is off (BEXT_CACHE_DIR=off)
 * or no folder is known. */
BXR_FUNC bool bxr_kcache_path(uint64_t ir_hash, const char *target, char *buf, size_t cap);
/* 1: a valid entry in *e; 0: none; -1: an entry that failed its checks
 * (reported with $BEXT_DEBUG), to be rebuilt. */
BXR_FUNC int bxr_kcache_load(uint64_t ir_hash, const char *target, struct bxr_kcache_entry *e);
BXR_FUNC void bxr_kcache_release(struct bxr_kcache_entry *e);
/* Writes the entry atomically (temporary file + rename); best effort. */
BXR_FUNC void bxr_kcache_store(uint64_t ir_hash, const char *target, const void *obj, size_t len);

/* Ahead-of-time code for ir under key (kernel_api.c: a program that
 * linked <stem>.kernels.o): the next prepare of key finds fn and compiles
 * nothing.  A key already prepared keeps its code.  False + error only
 * when out of memory or ir is unusable. */
BXR_FUNC bool bxr_kernel_cpu_adopt(const struct bxk_kernel *ir, uint64_t key, bxl_kernel_fn fn);

#endif /* BXR_KERNEL_H */
