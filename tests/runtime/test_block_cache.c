/* test_block_cache.c — the per-thread cache of tensor blocks (alloc.c)
 * and the one-block layout of small tensors (tensor.c): freed blocks are
 * reused by the same thread without the hook, blocks freed by another
 * thread stay correct there and go back to the hook when that thread
 * exits, a block never serves a hook other than the one that allocated
 * it, allocation failures with a warm cache are still clean errors, and a
 * view keeps a small tensor's one-block storage alive after its first
 * handle is gone. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

/* Counting hook: live blocks, hook allocations, optional failure of all
 * allocations.  Atomic: other threads allocate through it too. */
static atomic_long g_live, g_allocs;
static atomic_bool g_fail;

static void *counting(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  (void)osize;
  if (nsize == 0) {
    if (ptr) atomic_fetch_sub(&g_live, 1);
    free(ptr);
    return NULL;
  }
  if (!ptr) {
    if (atomic_load(&g_fail)) return NULL;
    atomic_fetch_add(&g_allocs, 1);
  }
  void *p = realloc(ptr, nsize);
  if (p && !ptr) atomic_fetch_add(&g_live, 1);
  return p;
}

static void reset(void) {
  atomic_store(&g_live, 0);
  atomic_store(&g_allocs, 0);
  atomic_store(&g_fail, false);
  bext_set_allocator(counting, NULL);
}
static void restore(void) { bext_set_allocator(NULL, NULL); }

static const bext_device *dev(const char *name) {
  const bext_device *d;
  cr_assert((d = bext_device_get(name)));
  return d;
}

static bext_tensor *ramp(const bext_device *d, int n, float base) {
  float v[64];
  for (int i = 0; i < n; i++) v[i] = base + (float)i;
  return bext_from_data(v, BEXT_F32, (int64_t[]){n}, 1, d);
}

static void expect_ramp(bext_tensor *t, int n, float base) {
  float v[64];
  cr_assert(bext_read(t, v, sizeof v), "%s", bext_last_error());
  for (int i = 0; i < n; i++) cr_expect_eq(v[i], base + (float)i, "element %d", i);
}

Test(block_cache, same_thread_reuse_skips_the_hook, .init = reset, .fini = restore) {
  const bext_device *fx = dev("flex");
  bext_tensor *a = ramp(fx, 16, 0);
  cr_assert_not_null(a);
  cr_expect_eq(atomic_load(&g_allocs), 1, "a 16-element tensor is one block");
  bext_tensor *first = a;
  bext_release(a);
  cr_expect_eq(bxr_block_cached(), 1, "the freed block idles in this thread's cache");
  long before = atomic_load(&g_allocs);
  bext_tensor *b = ramp(fx, 16, 100);
  cr_assert_not_null(b);
  cr_expect_eq(atomic_load(&g_allocs), before, "the cached block was reused, no hook call");
  cr_expect_eq(b, first, "LIFO: the same block came back");
  expect_ramp(b, 16, 100);   /* the new contents, not the old ones */
  /* an op producing a fresh output reuses blocks the same way */
  for (int i = 0; i < 100; i++) {
    bext_tensor *c = bext_add(bext_retain(b), bext_retain(b));
    cr_assert_not_null(c, "%s", bext_last_error());
    bext_release(c);
  }
  cr_expect_leq(atomic_load(&g_allocs), before + 1, "a loop of small ops allocates once");
  bext_release(b);
  bext_set_allocator(counting, NULL);   /* flushes this thread's cache */
  cr_expect_eq(atomic_load(&g_live), 0, "cached blocks were returned to the hook");
}

Test(block_cache, view_outlives_first_handle, .init = reset, .fini = restore) {
  const bext_device *nd = dev("ndarray");
  bext_tensor *a = ramp(nd, 6, 1);
  bext_tensor *v = bext_reshape(bext_retain(a), (int64_t[]){2, 3}, 2);
  cr_assert_not_null(v);
  cr_expect_eq(v->storage, a->storage);
  cr_expect(a->embedded && !v->embedded, "first handle in the storage block, view alone");
  bext_release(a);   /* the block stays: the view still holds its storage */
  float out[6];
  cr_assert(bext_read(v, out, sizeof out));
  for (int i = 0; i < 6; i++) cr_expect_eq(out[i], 1.0f + (float)i);
  bext_release(v);
  bext_set_allocator(counting, NULL);
  cr_expect_eq(atomic_load(&g_live), 0);
}

/* Thread B releases tensors thread A made, then makes its own from the
 * same (now cached-in-B) blocks. */
struct xfer {
  bext_tensor *ts[40];
  int n;
  bool ok;
};

static void *consumer(void *arg) {
  struct xfer *x = arg;
  const bext_device *fx;
  (fx = bext_device_get("flex"));
  x->ok = true;
  for (int i = 0; i < x->n; i++) {
    float v[16];
    x->ok &= bext_read(x->ts[i], v, sizeof v) && v[3] == (float)i + 3;
    bext_release(x->ts[i]);
  }
  x->ok &= bxr_block_cached() > 0;
  for (int i = 0; i < x->n; i++) {
    bext_tensor *t = ramp(fx, 16, (float)(1000 + i));
    float v[16];
    x->ok &= t && bext_read(t, v, sizeof v) && v[15] == (float)(1015 + i);
    bext_tensor *u = bext_mul_scalar(t, 2);  /* unique: in place */
    x->ok &= u && bext_read(u, v, sizeof v) && v[0] == (float)(2000 + 2 * i);
    bext_release(u);
  }
  return NULL;   /* thread exit returns B's cached blocks to the hook */
}

Test(block_cache, blocks_freed_by_another_thread, .init = reset, .fini = restore) {
  const bext_device *fx = dev("flex");
  struct xfer x = { .n = 40 };
  for (int i = 0; i < x.n; i++) cr_assert_not_null(x.ts[i] = ramp(fx, 16, (float)i));
  pthread_t th;
  cr_assert_eq(pthread_create(&th, NULL, consumer, &x), 0);
  pthread_join(th, NULL);
  cr_expect(x.ok, "the consumer thread saw wrong values");
  bext_set_allocator(counting, NULL);
  cr_expect_eq(atomic_load(&g_live), 0, "thread exit returned the consumer's cache to the hook");
}

/* A thread whose cache holds blocks of the default hook must not hand them
 * out after the hook changed: the new hook is asked (and here fails). */
static pthread_mutex_t g_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_phase;

static void wait_phase(int p) {
  pthread_mutex_lock(&g_m);
  while (g_phase < p) pthread_cond_wait(&g_cv, &g_m);
  pthread_mutex_unlock(&g_m);
}
static void set_phase(int p) {
  pthread_mutex_lock(&g_m);
  g_phase = p;
  pthread_cond_broadcast(&g_cv);
  pthread_mutex_unlock(&g_m);
}

static void *stale_cache(void *arg) {
  bool *ok = arg;
  const bext_device *fx;
  (fx = bext_device_get("flex"));
  bext_release(ramp(fx, 8, 0));          /* caches a default-hook block */
  *ok = bxr_block_cached() == 1;
  set_phase(1);
  wait_phase(2);                          /* main installed a failing hook */
  bext_tensor *t = ramp(fx, 8, 0);
  *ok &= t == NULL && strstr(bext_last_error(), "out of memory") != NULL;
  *ok &= bxr_block_cached() == 0;          /* stale block went to its own hook */
  bext_release(t);
  return NULL;
}

Test(block_cache, cached_blocks_never_serve_another_hook, .fini = restore) {
  bext_set_allocator(NULL, NULL);
  g_phase = 0;
  bool ok = false;
  pthread_t th;
  cr_assert_eq(pthread_create(&th, NULL, stale_cache, &ok), 0);
  wait_phase(1);
  atomic_store(&g_live, 0);
  atomic_store(&g_fail, true);
  bext_set_allocator(counting, NULL);
  set_phase(2);
  pthread_join(th, NULL);
  cr_expect(ok, "a block of the old hook served the new one, or the failure was not clean");
  cr_expect_eq(atomic_load(&g_live), 0, "the new hook never saw the old hook's block");
}

Test(block_cache, failures_with_a_warm_cache, .init = reset, .fini = restore) {
  const bext_device *fx = dev("flex");
  /* warm: a few blocks of each kind idle in the cache */
  bext_tensor *keep = ramp(fx, 16, 0);
  for (int i = 0; i < 4; i++) bext_release(bext_exp(bext_retain(keep)));
  atomic_store(&g_fail, true);
  /* served from the cache: works although the hook would fail */
  bext_tensor *r = bext_neg(bext_retain(keep));
  cr_expect_not_null(r, "%s", bext_last_error());
  bext_release(r);
  /* a size the cache does not hold: the hook is asked and fails cleanly */
  bext_tensor *big = bext_zeros((int64_t[]){1 << 16}, 1, BEXT_F32, fx);
  cr_expect_null(big);
  cr_expect(strstr(bext_last_error(), "out of memory"), "%s", bext_last_error());
  /* many live results at once outgrow the cache: later ones fail cleanly,
   * earlier ones stay valid, and all of them are released */
  bext_tensor *ts[64] = {0};
  int ok = 0, failed = 0;
  for (int i = 0; i < 64; i++) {
    ts[i] = bext_add_scalar(bext_retain(keep), 1);
    if (ts[i]) ok++;
    else {
      failed++;
      cr_expect(strstr(bext_last_error(), "out of memory"), "%s", bext_last_error());
    }
  }
  cr_expect_gt(failed, 0, "the hook was reached once the cache ran dry");
  cr_expect_gt(ok, 0, "cached blocks served the first results");
  for (int i = 0; i < 64; i++)
    if (ts[i]) expect_ramp(ts[i], 16, 1);
  for (int i = 0; i < 64; i++) bext_release(ts[i]);
  cr_expect_eq(bext_refcount(keep), 1, "failing ops still consumed their operand");
  atomic_store(&g_fail, false);
  bext_release(keep);
  bext_set_allocator(counting, NULL);
  cr_expect_eq(atomic_load(&g_live), 0);
}

Test(block_cache, over_release_of_a_cached_block_panics, .init = reset, .fini = restore) {
  /* Covered by test_errors for live handles; here only check that the
   * count of a released (idle) embedded handle reads 0, which is what makes
   * a second release reach the panic hook instead of corrupting the cache. */
  const bext_device *nd = dev("ndarray");
  bext_tensor *a = ramp(nd, 4, 0);
  bext_tensor *v = bext_reshape(bext_retain(a), (int64_t[]){2, 2}, 2);
  bext_release(a);   /* a's memory stays valid: v keeps the block alive */
  cr_expect_eq(atomic_load(&a->refcount), 0);
  bext_release(v);
}

/* Idle cached blocks are poisoned for ASan, so a use of a released handle
 * is still reported although its memory was not given back to malloc. */
#if defined(__SANITIZE_ADDRESS__)
#define TBC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TBC_ASAN 1
#endif
#endif
#ifdef TBC_ASAN
#include <sanitizer/asan_interface.h>
#endif

Test(block_cache, idle_blocks_are_poisoned_under_asan, .init = reset, .fini = restore) {
#ifdef TBC_ASAN
  const bext_device *nd = dev("ndarray");
  bext_tensor *a = ramp(nd, 4, 0);
  bext_tensor *v = bext_reshape(bext_retain(a), (int64_t[]){4}, 1);  /* a lone view handle */
  cr_assert_not_null(v);
  cr_expect(!v->embedded);
  bext_release(v);
  cr_expect(__asan_address_is_poisoned(&v->refcount), "released view handle still addressable");
  cr_expect(!__asan_address_is_poisoned(&a->refcount), "the live tensor is addressable");
  bext_release(a);
  cr_expect(__asan_address_is_poisoned(&a->refcount), "released tensor block still addressable");
  bext_tensor *b = ramp(nd, 4, 7);   /* reuses a's block: addressable again */
  cr_expect(!__asan_address_is_poisoned(&b->refcount));
  expect_ramp(b, 4, 7);
  bext_release(b);
#else
  cr_skip_test("not an ASan build: nothing is poisoned");
#endif
}
