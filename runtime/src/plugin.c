/* plugin.c — loads a part of bext that links a heavy library (LLVM for
 * the kernel JIT, libtorch for the LibTorch backend) with dlopen on its
 * first use, so programs that never need it never map it: libtorch alone
 * costs a process about a second to load, and every test binary links
 * libbext.  A plugin exports one table whose first member is a uint32_t
 * version; the first candidate path that loads and carries the expected
 * version is kept for the process (never dlclose'd: its code runs as
 * long as what it made may). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "plugin.h"

/* One candidate: its table, or NULL with why appended to `why`. */
static const void *try_path(const char *path, const struct bxr_plugin *p, char *why, size_t cap) {
  size_t used = strlen(why);
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    snprintf(why + used, cap - used, "\n  %s: %s", path, e ? e : "cannot be loaded");
    return NULL;
  }
  const uint32_t *table = (const uint32_t *)dlsym(h, p->symbol);
  if (!table || *table != p->version) {
    if (table)
      snprintf(why + used, cap - used, "\n  %s: built for another version of libbext (its %s version differs)",
               path, p->symbol);
    else
      snprintf(why + used, cap - used, "\n  %s: has no %s (not %s)", path, p->symbol, p->library);
    dlclose(h);
    return NULL;
  }
  return table;
}

const void *bxr_plugin_load(const struct bxr_plugin *p, const char *const *paths, int n, const char *note) {
  char why[1536] = "";
  for (int i = 0; i < n; i++) {
    if (!paths[i] || !*paths[i]) continue;
    const void *t = try_path(paths[i], p, why, sizeof why);
    if (t) return t;
  }
  bxr_error("%s: cannot load %s, which %s (set %s to its path, or install bext); tried:%s%s", p->api,
            p->library, p->does, p->env, why, note ? note : "");
  return NULL;
}

const void *bxr_plugin_find(const struct bxr_plugin *p, const char *install_path, const char *build_path) {
  const char *env = getenv(p->env);
  const char *paths[3] = {env && *env ? env : NULL, install_path, build_path};
  char note[96];
  snprintf(note, sizeof note, "\n  ($%s is not set)", p->env);
  return bxr_plugin_load(p, paths, 3, env && *env ? NULL : note);
}
