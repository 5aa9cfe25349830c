/* flex_alloc.c — Flex storage: small buffers straight from the runtime's
 * allocation hook, large ones through a small cache.
 *
 * Why: a fresh 64 MiB output costs ~16K page faults (~0.9M without huge
 * pages), which makes an allocating elementwise op several times slower
 * than the same op into a warm buffer (dependencies.md).  Freed blocks of
 * at least BXFX_CACHE_MIN bytes are kept on a free list by size class and
 * handed out again; blocks of at least 4 MiB are aligned to 2 MiB and
 * marked MADV_HUGEPAGE.  Every block still comes from bxr_alloc (the
 * bext_set_allocator hook) and goes back through bxr_free when evicted or
 * trimmed.  The small path takes no lock: only large blocks touch the
 * cache mutex. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "flex_internal.h"

#define BXFX_CACHE_MIN ((size_t)1 << 20)      /* cache blocks >= 1 MiB */
#define BXFX_HUGE_MIN ((size_t)4 << 20)       /* align + madvise >= 4 MiB */
#define BXFX_HUGE_ALIGN ((size_t)2 << 20)
#define BXFX_CACHE_SLOTS 16
#define BXFX_CACHE_BYTES ((size_t)1 << 30)    /* at most 1 GiB kept idle */

struct block {
  void *raw;       /* what bxr_alloc returned */
  size_t rawsize;  /* what was asked of bxr_alloc */
};

static struct {
  pthread_mutex_t m;
  struct block slot[BXFX_CACHE_SLOTS];
  int n;
  size_t bytes;
  atomic_ulong hits;
} C = { .m = PTHREAD_MUTEX_INITIALIZER };

/* Size classes: eight per power of two, so a block serves requests up to
 * 12.5% smaller than itself. */
static size_t size_class(size_t bytes) {
  int lg = 63 - __builtin_clzll((unsigned long long)bytes);
  size_t step = (size_t)1 << (lg > 3 ? lg - 3 : 0);
  return (bytes + step - 1) / step * step;
}

static size_t raw_size(size_t cls) { return cls >= BXFX_HUGE_MIN ? cls + BXFX_HUGE_ALIGN : cls; }

static void *data_of(void *raw, size_t cls) {
  if (cls < BXFX_HUGE_MIN) return raw;
  uintptr_t p = ((uintptr_t)raw + BXFX_HUGE_ALIGN - 1) & ~(uintptr_t)(BXFX_HUGE_ALIGN - 1);
  return (void *)p;
}

bool bxfx_storage_alloc(struct bxr_storage *s, size_t bytes) {
  if (bytes < BXFX_CACHE_MIN) {
    s->priv = NULL;
    s->data = bxr_alloc(bytes ? bytes : 1);
    return s->data != NULL;
  }
  size_t cls = size_class(bytes), rs = raw_size(cls);
  void *raw = NULL;
  pthread_mutex_lock(&C.m);
  for (int i = C.n - 1; i >= 0; i--) {
    if (C.slot[i].rawsize == rs) {
      raw = C.slot[i].raw;
      C.bytes -= rs;
      C.slot[i] = C.slot[--C.n];
      break;
    }
  }
  pthread_mutex_unlock(&C.m);
  if (raw) {
    atomic_fetch_add(&C.hits, 1);
  } else {
    raw = bxr_alloc(rs);
    if (!raw) return false;
    if (cls >= BXFX_HUGE_MIN) madvise(data_of(raw, cls), cls & ~(BXFX_HUGE_ALIGN - 1), MADV_HUGEPAGE);
  }
  s->priv = raw;
  s->data = data_of(raw, cls);
  return true;
}

void bxfx_storage_free(struct bxr_storage *s) {
  if (!s->priv) {
    if (s->data) bxr_free(s->data, s->bytes ? s->bytes : 1);
    s->data = NULL;
    return;
  }
  size_t rs = raw_size(size_class(s->bytes));
  void *raw = s->priv, *evict = NULL;
  size_t evict_size = 0;
  pthread_mutex_lock(&C.m);
  if (rs <= BXFX_CACHE_BYTES) {
    /* Keep it; make room by evicting the oldest entries. */
    while (C.n > 0 && (C.n == BXFX_CACHE_SLOTS || C.bytes + rs > BXFX_CACHE_BYTES)) {
      /* Evict one at a time outside the lock. */
      evict = C.slot[0].raw;
      evict_size = C.slot[0].rawsize;
      C.bytes -= evict_size;
      memmove(&C.slot[0], &C.slot[1], sizeof(struct block) * (size_t)(C.n - 1));
      C.n--;
      pthread_mutex_unlock(&C.m);
      bxr_free(evict, evict_size);
      pthread_mutex_lock(&C.m);
    }
    C.slot[C.n++] = (struct block){ raw, rs };
    C.bytes += rs;
    raw = NULL;
  }
  pthread_mutex_unlock(&C.m);
  if (raw) bxr_free(raw, rs);
  s->data = NULL;
  s->priv = NULL;
}

void bxfx_alloc_trim(void) {
  for (;;) {
    pthread_mutex_lock(&C.m);
    if (C.n == 0) { pthread_mutex_unlock(&C.m); return; }
    struct block b = C.slot[--C.n];
    C.bytes -= b.rawsize;
    pthread_mutex_unlock(&C.m);
    bxr_free(b.raw, b.rawsize);
  }
}

unsigned long bxfx_alloc_hits(void) { return atomic_load(&C.hits); }

size_t bxfx_alloc_cached(void) {
  pthread_mutex_lock(&C.m);
  size_t b = C.bytes;
  pthread_mutex_unlock(&C.m);
  return b;
}
