/* alloc.c — the one allocation hook (lua_Alloc style) every runtime and
 * backend allocation goes through, so tests can inject failures; the
 * per-thread cache of small runtime blocks (tensor headers, small inline
 * buffers) layered on top of it; and per-thread ids for biased counts.
 *
 * Memory goes back where it came from: a program may switch hooks while
 * tensors (or idle cached memory) are alive, so everything that can
 * outlive the call that allocated it records its hook, the pair (fn, ud),
 * and is freed through that record (bxr_free_to), never through whatever
 * hook is installed at free time.  Blocks carry it in a 16-byte prefix;
 * a storage's buffers use its record's block prefix (bxr_storage_hook);
 * Flex's cache keeps it per entry.
 *
 * Why a cache: a small op allocates and frees one block per result; going
 * to malloc for each costs more than the op itself.  Each thread keeps a
 * short LIFO list per size class.  Blocks still come from the hook (so
 * failure injection sees them), and every block records the hook it came
 * from, so it goes back to that hook even after bext_set_allocator changed
 * it or after it migrated to another thread: a block freed by thread B
 * that thread A allocated simply joins B's list (the memory is plain hook
 * memory, owned by whoever holds it).  Lists are bounded; a thread's list
 * is returned to the hooks when the thread exits, and the calling thread's
 * when bext_set_allocator is called. */
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

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

/* Set by the program (tests swap it between cases); reads are plain
 * because changing the allocator while other threads are inside bext
 * calls is a documented misuse (bext.h) — no atomics on the hot path. */
static struct bxr_hook g_hook = { default_alloc, NULL };

struct bxr_hook bxr_hook_now(void) { return g_hook; }

void *bxr_alloc_from(struct bxr_hook h, size_t n) {
  /* Zero-byte requests still get a unique non-NULL block so NULL always
   * means failure. */
  void *p = h.fn(h.ud, NULL, 0, n ? n : 1);
  if (!p) bxr_error("out of memory (allocating %zu bytes)", n);
  return p;
}

void bxr_free_to(struct bxr_hook h, void *p, size_t n) {
  if (p) h.fn(h.ud, p, n ? n : 1, 0);
}

void *bxr_alloc(size_t n) { return bxr_alloc_from(g_hook, n); }

void *bxr_calloc(size_t n) {
  void *p = bxr_alloc(n);
  if (p) memset(p, 0, n ? n : 1);
  return p;
}

void bxr_free(void *p, size_t n) { bxr_free_to(g_hook, p, n); }

/* ------------------------------------------------------ small-block cache */

/* Every cached block starts with this prefix; the caller's pointer is just
 * past it (16 bytes: the hook's malloc alignment is kept). */
struct bxr_blk {
  struct bxr_hook hook;   /* the hook that allocated it (and must free it) */
};
_Static_assert(sizeof(struct bxr_blk) == BXR_BLOCK_PREFIX, "prefix size");

static const size_t class_size[BXR_BLOCK_CLASSES] = { 256, 512, 1024, 2048, 4096 };

/* While on a free list, the LAST word of a block links it, so the caller's
 * area (where handles keep their counts) can be poisoned for ASan: a use
 * after release of a cached handle is reported, as it would be with
 * malloc/free. */
#define BLK_NEXT(b, k) (*(struct bxr_blk **)((char *)(b) + class_size[k] - sizeof(void *)))

#if defined(__SANITIZE_ADDRESS__)
#define BXR_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BXR_ASAN 1
#endif
#endif
#ifdef BXR_ASAN
#include <sanitizer/asan_interface.h>
#endif
/* The caller's area of an idle block, less the link word: poisoned while
 * the block idles, made addressable again when it leaves the cache. */
static inline void idle_poison(struct bxr_blk *b, int k, bool on) {
#ifdef BXR_ASAN
  size_t n = class_size[k] - sizeof(struct bxr_blk) - sizeof(void *);
  if (on) ASAN_POISON_MEMORY_REGION(b + 1, n);
  else ASAN_UNPOISON_MEMORY_REGION(b + 1, n);
#else
  (void)b, (void)k, (void)on;
#endif
}

/* Per-thread bound per class: at most ~100 KiB idle per thread. */
static const int class_cap[BXR_BLOCK_CLASSES] = { 64, 32, 16, 8, 8 };

struct tcache {
  struct bxr_blk *head[BXR_BLOCK_CLASSES];
  int n[BXR_BLOCK_CLASSES];
  /* How many blocks of each class this thread may keep: 0 until the
   * thread-exit destructor is installed (so the first free takes the slow
   * path that installs it) and again once the thread is exiting; else
   * class_cap.  One compare on the hot free path covers all three. */
  int cap[BXR_BLOCK_CLASSES];
  bool registered;     /* thread-exit destructor installed */
  bool closed;         /* thread exiting: no more caching */
};

/* initial-exec: the library is linked at startup (static archive), so a
 * fixed TLS offset works and avoids a __tls_get_addr call per op. */
static _Thread_local struct tcache tc __attribute__((tls_model("initial-exec")));

static pthread_key_t g_key;
static bool g_key_ok;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;

static void blk_release(struct bxr_blk *b, size_t size) { b->hook.fn(b->hook.ud, b, size, 0); }

static void flush(struct tcache *c) {
  for (int k = 0; k < BXR_BLOCK_CLASSES; k++) {
    struct bxr_blk *b = c->head[k];
    c->head[k] = NULL;
    c->n[k] = 0;
    while (b) {
      struct bxr_blk *next = BLK_NEXT(b, k);
      idle_poison(b, k, false);
      blk_release(b, class_size[k]);
      b = next;
    }
  }
}

static void on_thread_exit(void *p) {
  struct tcache *c = p;
  flush(c);
  c->closed = true;   /* releases in later TLS destructors go to the hook */
  for (int k = 0; k < BXR_BLOCK_CLASSES; k++) c->cap[k] = 0;
}

static void make_key(void) {
  /* Without the key the cache still works; a thread's idle blocks would
   * then be kept until set_allocator is called on it. */
  g_key_ok = pthread_key_create(&g_key, on_thread_exit) == 0;
}

/* The slow halves stay out of line so the hot halves need no stack frame. */
static __attribute__((noinline)) void *block_alloc_slow(struct tcache *c, int cls) {
  /* A block from another hook (bext_set_allocator ran on another thread
   * since it was cached) must not serve this hook's requests. */
  if (c->head[cls]) flush(c);
  struct bxr_blk *b = g_hook.fn(g_hook.ud, NULL, 0, class_size[cls]);
  if (!b) {
    bxr_error("out of memory (allocating %zu bytes)", class_size[cls]);
    return NULL;
  }
  b->hook = g_hook;
  return b + 1;
}

void *bxr_block_alloc(int cls) {
  struct tcache *c = &tc;
  struct bxr_blk *b = c->head[cls];
  if (__builtin_expect(b != NULL && bxr_hook_eq(b->hook, g_hook), 1)) {
    c->head[cls] = BLK_NEXT(b, cls);
    c->n[cls]--;
    idle_poison(b, cls, false);
    return b + 1;
  }
  return block_alloc_slow(c, cls);
}

static inline void block_push(struct tcache *c, struct bxr_blk *b, int cls) {
  BLK_NEXT(b, cls) = c->head[cls];
  idle_poison(b, cls, true);
  c->head[cls] = b;
  c->n[cls]++;
}

static __attribute__((noinline)) void block_free_slow(struct tcache *c, struct bxr_blk *b, int cls) {
  if (!c->registered && !c->closed) {
    pthread_once(&g_key_once, make_key);
    if (g_key_ok) pthread_setspecific(g_key, c);
    c->registered = true;
    for (int k = 0; k < BXR_BLOCK_CLASSES; k++) c->cap[k] = class_cap[k];
  }
  if (c->n[cls] < c->cap[cls]) block_push(c, b, cls);
  else blk_release(b, class_size[cls]);
}

void bxr_block_free(void *p, int cls) {
  if (!p) return;
  struct bxr_blk *b = (struct bxr_blk *)p - 1;
  struct tcache *c = &tc;
  if (__builtin_expect(c->n[cls] < c->cap[cls], 1)) block_push(c, b, cls);
  else block_free_slow(c, b, cls);
}

void bxr_block_flush(void) { flush(&tc); }

int bxr_block_cached(void) {
  int n = 0;
  for (int k = 0; k < BXR_BLOCK_CLASSES; k++) n += tc.n[k];
  return n;
}

static void (*g_drain[BXR_MAX_DRAINS])(void);

void bxr_alloc_on_switch(void (*drain)(void)) {
  for (int i = 0; i < BXR_MAX_DRAINS; i++)
    if (!g_drain[i] || g_drain[i] == drain) {
      g_drain[i] = drain;
      return;
    }
  BXR_ASSERT(!"more than BXR_MAX_DRAINS drains");
}

void bext_set_allocator(bext_alloc_fn fn, void *ud) {
  /* Idle memory goes back to the hook it came from now (the calling
   * thread's blocks, process-wide caches such as Flex's), so a test that
   * counts live blocks sees them returned and a program that retires a
   * hook gets its idle memory back at the switch. */
  flush(&tc);
  for (int i = 0; i < BXR_MAX_DRAINS && g_drain[i]; i++) g_drain[i]();
  g_hook = fn ? (struct bxr_hook){ fn, ud } : (struct bxr_hook){ default_alloc, NULL };
}

/* ------------------------------------------------------ thread identity */

_Thread_local uint64_t bxr_tls_id __attribute__((tls_model("initial-exec")));
int bxr_bias_on;
static atomic_uint_fast64_t g_next_id = 2;   /* 0: none, 1: take-over mark */
static pthread_once_t g_fence_once = PTHREAD_ONCE_INIT;

static long membarrier(int cmd) { return syscall(SYS_membarrier, cmd, 0, 0); }

static void fence_init(void) {
  /* Biased counts are only sound with a working asymmetric fence. */
  long q = membarrier(MEMBARRIER_CMD_QUERY);
  if (q > 0 && (q & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
      membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0)
    __atomic_store_n(&bxr_bias_on, 1, __ATOMIC_RELEASE);
}

uint64_t bxr_self_slow(void) {
  pthread_once(&g_fence_once, fence_init);
  bxr_tls_id = atomic_fetch_add_explicit(&g_next_id, 1, memory_order_relaxed);
  return bxr_tls_id;
}

void bxr_heavy_fence(void) {
  if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
  /* Registration is per process image; a forked child may need it again. */
  if (membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0 &&
      membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0)
    return;
  bxr_panic(__FILE__, __LINE__, "membarrier failed after biased handles were created");
}
