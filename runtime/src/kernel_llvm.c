/* kernel_llvm.c — loads libbext_llvm.so, the only part of bext that links
 * LLVM, on the first kernel_prepare: programs that never compile a kernel
 * never map LLVM (some 100 MB of it).  Where it looks, in order:
 *   1. $BEXT_LLVM_LIB (the path of the .so), when set;
 *   2. the install libdir this libbext was configured with;
 *   3. the build tree that built this libbext.
 * The search and its error are plugin.c's, shared with libtorch. */
#include "kernel.h"
#include "plugin.h"

#ifndef BXR_LLVM_INSTALL_PATH
#define BXR_LLVM_INSTALL_PATH "/usr/local/lib/libbext_llvm.so"
#endif
#ifndef BXR_LLVM_BUILD_PATH
#define BXR_LLVM_BUILD_PATH ""
#endif

static const struct bxl_api *loaded;

static const struct bxr_plugin llvm_plugin = {
    "libbext_llvm.so", BXL_API_SYMBOL, BXL_API_VERSION, "BEXT_LLVM_LIB", "kernel_prepare", "compiles kernels"};

const struct bxl_api *bxr_llvm_load(const char *const *paths, int n, const char *note) {
  return (const struct bxl_api *)bxr_plugin_load(&llvm_plugin, paths, n, note);
}

const struct bxl_api *bxr_llvm_api(void) {
  if (!loaded) loaded = (const struct bxl_api *)bxr_plugin_find(&llvm_plugin, BXR_LLVM_INSTALL_PATH, BXR_LLVM_BUILD_PATH);
  return loaded;
}
