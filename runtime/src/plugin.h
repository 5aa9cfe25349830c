/* plugin.h — parts of bext loaded with dlopen on first use (plugin.c). */
#ifndef BXR_PLUGIN_H
#define BXR_PLUGIN_H

#include <stdint.h>

#include "bext/bext.h"

struct bxr_plugin {
  const char *library;   /* "libbext_llvm.so", for messages */
  const char *symbol;    /* the exported table: "bxl_api_v1" */
  uint32_t version;      /* the table's first member must equal it */
  const char *env;       /* the variable that names its path: "BEXT_LLVM_LIB" */
  const char *api;       /* who asks, for messages: "kernel_prepare" */
  const char *does;      /* "compiles kernels" */
};

/* The first of paths[0..n) (NULL or "" skipped) that loads and exports
 * p's table at p's version; NULL + an error listing every path tried
 * with why it failed, then note. */
const void *bxr_plugin_load(const struct bxr_plugin *p, const char *const *paths, int n, const char *note);
/* bxr_plugin_load over $ENV, the install path, then the build tree. */
const void *bxr_plugin_find(const struct bxr_plugin *p, const char *install_path, const char *build_path);

#endif
