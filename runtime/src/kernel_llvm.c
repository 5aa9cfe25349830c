/* kernel_llvm.c — loads libbext_llvm.so, the only part of bext that links
 * LLVM, on the first kernel_prepare: programs that never compile a kernel
 * never map LLVM (some 100 MB of it).  Where it looks, in order:
 *   1. $BEXT_LLVM_LIB (the path of the .so), when set;
 *   2. the install libdir this libbext was configured with;
 *   3. the build tree that built this libbext.
 * The first that loads is kept for the process (never dlclose'd: its code
 * runs as long as compiled kernels may). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"

#ifndef BXR_LLVM_INSTALL_PATH
#define BXR_LLVM_INSTALL_PATH "/usr/local/lib/libbext_llvm.so"
#endif
#ifndef BXR_LLVM_BUILD_PATH
#define BXR_LLVM_BUILD_PATH ""
#endif

static const struct bxl_api *loaded;

/* One candidate: its table, or NULL with why appended to `why`. */
static const struct bxl_api *try_path(const char *path, char *why, size_t cap) {
  size_t used = strlen(why);
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    snprintf(why + used, cap - used, "\n  %s: %s", path, e ? e : "cannot be loaded");
    return NULL;
  }
  const struct bxl_api *api = (const struct bxl_api *)dlsym(h, BXL_API_SYMBOL);
  if (!api || api->version != BXL_API_VERSION) {
    snprintf(why + used, cap - used, "\n  %s: %s", path,
             api ? "built for another version of libbext (its bxl_api version differs)"
                 : "has no " BXL_API_SYMBOL " (not libbext_llvm)");
    dlclose(h);
    return NULL;
  }
  return api;
}

const struct bxl_api *bxr_llvm_load(const char *const *paths, int n, const char *note) {
  char why[1536] = "";
  for (int i = 0; i < n; i++) {
    if (!paths[i] || !*paths[i]) continue;
    const struct bxl_api *api = try_path(paths[i], why, sizeof why);
    if (api) return api;
  }
  bxr_error("kernel_prepare: cannot load libbext_llvm.so, which compiles kernels (set "
            "BEXT_LLVM_LIB to its path, or install bext); tried:%s%s", why, note ? note : "");
  return NULL;
}

const struct bxl_api *bxr_llvm_api(void) {
  if (loaded) return loaded;
  const char *env = getenv("BEXT_LLVM_LIB");
  const char *paths[3] = {env && *env ? env : NULL, BXR_LLVM_INSTALL_PATH, BXR_LLVM_BUILD_PATH};
  loaded = bxr_llvm_load(paths, 3, env && *env ? NULL : "\n  ($BEXT_LLVM_LIB is not set)");
  return loaded;
}
