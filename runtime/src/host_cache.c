/* host_cache.c — storage for host-memory backends (Flex, cube:cpu):
 * small buffers straight from the runtime's allocation hook, large ones
 * through one small process-wide cache the backends share.
 *
 * Why: a fresh 64 MiB output costs ~16K page faults (~0.9M without huge
 * pages), which makes an allocating elementwise op several times slower
 * than the same op into a warm buffer (dependencies.md).  Freed blocks of
 * at least BXR_HC_CACHE_MIN bytes are kept on a free list by size class and
 * handed out again; blocks of at least 4 MiB are aligned to 2 MiB and
 * marked MADV_HUGEPAGE.  Every block comes from the storage's hook
 * (bxr_storage_hook: the bext_set_allocator hook installed when the
 * tensor was made) and goes back to that same hook when evicted, trimmed
 * or freed, whatever hook is installed by then: cache entries record their
 * hook, a block is only reused for storage of the same hook, entries of
 * other hooks are returned at the next large allocation, and
 * bext_set_allocator trims the cache.  The small path takes no lock: only
 * large blocks touch the cache mutex. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "backend.h"

#define BXR_HC_CACHE_MIN ((size_t)64 << 10)     /* cache blocks >= 64 KiB */
#define BXR_HC_HUGE_MIN ((size_t)4 << 20)       /* align + madvise >= 4 MiB */
#define BXR_HC_HUGE_ALIGN ((size_t)2 << 20)
#define BXR_HC_CACHE_SLOTS 64
#define BXR_HC_CACHE_BYTES ((size_t)1 << 30)    /* at most 1 GiB kept idle */

struct block {
  void *raw;       /* what the hook returned */
  size_t rawsize;  /* what was asked of it */
  struct bxr_hook hook;  /* the hook that allocated it: frees go there */
};

static struct {
  pthread_mutex_t m;
  struct block slot[BXR_HC_CACHE_SLOTS];
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

static size_t raw_size(size_t cls) { return cls >= BXR_HC_HUGE_MIN ? cls + BXR_HC_HUGE_ALIGN : cls; }

static void *data_of(void *raw, size_t cls) {
  if (cls < BXR_HC_HUGE_MIN) return raw;
  uintptr_t p = ((uintptr_t)raw + BXR_HC_HUGE_ALIGN - 1) & ~(uintptr_t)(BXR_HC_HUGE_ALIGN - 1);
  return (void *)p;
}

/* Hands out[0..n) back to their hooks (outside the lock: hooks may be slow). */
static void release_all(struct block *out, int n) {
  for (int i = 0; i < n; i++) bxr_free_to(out[i].hook, out[i].raw, out[i].rawsize);
}

bool bxr_cached_storage_alloc(struct bxr_storage *s, size_t bytes) {
  struct bxr_hook h = bxr_storage_hook(s);
  if (bytes < BXR_HC_CACHE_MIN) {
    s->priv = NULL;
    s->data = bxr_alloc_from(h, bytes ? bytes : 1);
    return s->data != NULL;
  }
  size_t cls = size_class(bytes), rs = raw_size(cls);
  void *raw = NULL;
  /* Only a block of s's own hook may serve s.  Blocks of another hook
   * (idle since before a switch) can serve nothing until that hook is
   * back: return them now. */
  struct block stale[BXR_HC_CACHE_SLOTS];
  int nstale = 0;
  pthread_mutex_lock(&C.m);
  for (int i = C.n - 1; i >= 0; i--) {
    bool mine = bxr_hook_eq(C.slot[i].hook, h);
    if (mine && (raw || C.slot[i].rawsize != rs)) continue;
    if (mine) raw = C.slot[i].raw;
    else stale[nstale++] = C.slot[i];
    C.bytes -= C.slot[i].rawsize;
    C.slot[i] = C.slot[--C.n];
  }
  pthread_mutex_unlock(&C.m);
  release_all(stale, nstale);
  if (raw) {
    atomic_fetch_add(&C.hits, 1);
  } else {
    raw = bxr_alloc_from(h, rs);
    if (!raw) return false;
    if (cls >= BXR_HC_HUGE_MIN) madvise(data_of(raw, cls), cls & ~(BXR_HC_HUGE_ALIGN - 1), MADV_HUGEPAGE);
  }
  s->priv = raw;
  s->data = data_of(raw, cls);
  return true;
}

void bxr_cached_storage_free(struct bxr_storage *s) {
  struct bxr_hook h = bxr_storage_hook(s);
  if (!s->priv) {
    if (s->data) bxr_free_to(h, s->data, s->bytes ? s->bytes : 1);
    s->data = NULL;
    return;
  }
  size_t rs = raw_size(size_class(s->bytes));
  void *raw = s->priv;
  struct block evict[BXR_HC_CACHE_SLOTS];
  int nevict = 0;
  /* A block whose hook is no longer installed could not serve anyone
   * until it is again: straight back to its hook instead of idling. */
  if (rs <= BXR_HC_CACHE_BYTES && bxr_hook_eq(h, bxr_hook_now())) {
    pthread_mutex_lock(&C.m);
    /* Keep it; make room by evicting the oldest entries (freed outside
     * the lock). */
    while (C.n > 0 && (C.n == BXR_HC_CACHE_SLOTS || C.bytes + rs > BXR_HC_CACHE_BYTES)) {
      evict[nevict++] = C.slot[0];
      C.bytes -= C.slot[0].rawsize;
      memmove(&C.slot[0], &C.slot[1], sizeof(struct block) * (size_t)(C.n - 1));
      C.n--;
    }
    C.slot[C.n++] = (struct block){ raw, rs, h };
    C.bytes += rs;
    raw = NULL;
    pthread_mutex_unlock(&C.m);
  }
  release_all(evict, nevict);
  if (raw) bxr_free_to(h, raw, rs);
  s->data = NULL;
  s->priv = NULL;
}

void bxr_host_cache_trim(void) {
  struct block out[BXR_HC_CACHE_SLOTS];
  pthread_mutex_lock(&C.m);
  int n = C.n;
  memcpy(out, C.slot, sizeof(struct block) * (size_t)n);
  C.n = 0;
  C.bytes = 0;
  pthread_mutex_unlock(&C.m);
  release_all(out, n);
}

/* bext_set_allocator returns the idle blocks to their hooks at the switch
 * (a program retiring a hook gets its memory back then). */
__attribute__((constructor)) static void register_drain(void) { bxr_alloc_on_switch(bxr_host_cache_trim); }

unsigned long bxr_host_cache_hits(void) { return atomic_load(&C.hits); }

size_t bxr_host_cache_bytes(void) {
  pthread_mutex_lock(&C.m);
  size_t b = C.bytes;
  pthread_mutex_unlock(&C.m);
  return b;
}
