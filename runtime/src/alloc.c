/* alloc.c — the one allocation hook (lua_Alloc style) every runtime and
 * backend allocation goes through, so tests can inject failures. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void *default_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  return realloc(ptr, nsize);
}

/* Set once by the program (tests swap it between cases); reads are plain
 * because changing the allocator while other threads allocate is a
 * documented misuse. */
static bext_alloc_fn g_alloc = default_alloc;
static void *g_alloc_ud;

void bext_set_allocator(bext_alloc_fn fn, void *ud) {
  g_alloc = fn ? fn : default_alloc;
  g_alloc_ud = fn ? ud : NULL;
}

void *bxr_alloc(size_t n) {
  /* Zero-byte requests still get a unique non-NULL block so NULL always
   * means failure. */
  void *p = g_alloc(g_alloc_ud, NULL, 0, n ? n : 1);
  if (!p) bxr_error("out of memory (allocating %zu bytes)", n);
  return p;
}

void *bxr_calloc(size_t n) {
  void *p = bxr_alloc(n);
  if (p) memset(p, 0, n ? n : 1);
  return p;
}

void bxr_free(void *p, size_t n) {
  if (p) g_alloc(g_alloc_ud, p, n ? n : 1, 0);
}
