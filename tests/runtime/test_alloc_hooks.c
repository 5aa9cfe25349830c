/* test_alloc_hooks.c — memory goes back where it came from: a program that
 * switches the allocation hook (bext_set_allocator) while tensors, views
 * and Flex's cache of large buffers are alive must see every buffer freed
 * through the hook that allocated it.  Two recording hooks share one
 * function and differ only in their user data (a hook is the pair), keep
 * every pointer they handed out with its size, and count a free of a
 * pointer they never handed out (or with the wrong size) as foreign.
 * Covers large storage on both CPU backends, small one-block tensors,
 * views, op outputs, Flex's large-buffer cache (a buffer cached under A
 * must not serve B, nor be freed through B) and a release from another
 * thread. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "flex/flex_internal.h"

/* ---------------------------------------------------------- recording hook */

#define MAXLIVE 4096

struct rec {
  const char *name;
  pthread_mutex_t m;
  void *ptr[MAXLIVE];   /* live pointers this hook handed out */
  size_t size[MAXLIVE];
  int nlive;
  long allocs, frees;
  size_t bytes_alloc, bytes_freed;
  long foreign;         /* frees of pointers it never handed out */
  long badsize;         /* frees whose osize differs from the request */
};

static struct rec A = { .name = "A", .m = PTHREAD_MUTEX_INITIALIZER };
static struct rec B = { .name = "B", .m = PTHREAD_MUTEX_INITIALIZER };

static void *recording(void *ud, void *ptr, size_t osize, size_t nsize) {
  struct rec *r = ud;
  pthread_mutex_lock(&r->m);
  if (ptr) {   /* free (or the free half of a realloc) */
    int i = r->nlive - 1;
    while (i >= 0 && r->ptr[i] != ptr) i--;
    if (i < 0) {
      r->foreign++;
    } else {
      if (r->size[i] != osize) r->badsize++;
      r->bytes_freed += r->size[i];
      r->frees++;
      r->ptr[i] = r->ptr[r->nlive - 1];
      r->size[i] = r->size[r->nlive - 1];
      r->nlive--;
    }
  }
  void *p = NULL;
  if (nsize) {
    p = malloc(nsize);
    if (p && ptr) memcpy(p, ptr, osize < nsize ? osize : nsize);
    if (p) {
      cr_assert_lt(r->nlive, MAXLIVE, "hook %s: too many live blocks for the test", r->name);
      r->ptr[r->nlive] = p;
      r->size[r->nlive] = nsize;
      r->nlive++;
      r->allocs++;
      r->bytes_alloc += nsize;
    }
  }
  pthread_mutex_unlock(&r->m);
  free(ptr);
  return p;
}

static bool owns(struct rec *r, const void *p) {
  pthread_mutex_lock(&r->m);
  bool yes = false;
  for (int i = 0; i < r->nlive && !yes; i++)
    yes = (const char *)p >= (char *)r->ptr[i] && (const char *)p < (char *)r->ptr[i] + r->size[i];
  pthread_mutex_unlock(&r->m);
  return yes;
}

/* Every cache of idle memory back to its hooks, then the default hook. */
static void drain(void) {
  bxr_block_flush();
  bxr_host_cache_trim();
  bext_set_allocator(NULL, NULL);
}

static void expect_balanced(struct rec *r) {
  cr_expect_eq(r->foreign, 0, "hook %s was handed %ld pointers it never allocated", r->name,
               r->foreign);
  cr_expect_eq(r->badsize, 0, "hook %s got %ld frees with the wrong size", r->name, r->badsize);
  cr_expect_eq(r->nlive, 0, "hook %s still has %d blocks out (%zu of %zu bytes freed)", r->name,
               r->nlive, r->bytes_freed, r->bytes_alloc);
  cr_expect_eq(r->bytes_freed, r->bytes_alloc, "hook %s: freed %zu bytes of %zu allocated",
               r->name, r->bytes_freed, r->bytes_alloc);
  cr_expect_gt(r->allocs, 0, "hook %s was used", r->name);
}

static void start(void) {
  /* nothing cached from the default hook may confuse the counts */
  bxr_block_flush();
  bxr_host_cache_trim();
}

static const bext_device *dev(const char *name) {
  const bext_device *d;
  cr_assert((d = bext_device_get(name)));
  return d;
}

#define BIG ((int64_t)300 * 1024)   /* 1.2 MiB of f32: past every block class and Flex's cache minimum */

static bext_tensor *filled(const bext_device *d, int64_t n, float v) {
  bext_tensor *t = bext_full((int64_t[]){n}, 1, v, BEXT_F32, d);
  cr_assert_not_null(t, "%s", bext_last_error());
  return t;
}

static float first(bext_tensor *t) {
  float v[1];
  bext_tensor *h = bext_slice(bext_retain(t), (int64_t[]){0}, (int64_t[]){1}, 1);
  cr_assert_not_null(h, "%s", bext_last_error());
  cr_assert(bext_read(h, v, sizeof v), "%s", bext_last_error());
  bext_release(h);
  return v[0];
}

/* --------------------------------------------------------------- tests */

/* Large storage, small one-block tensors and views made under A outlive
 * the switch to B and are released under B, on both CPU backends. */
static void switch_with_live_tensors(const char *devname) {
  start();
  const bext_device *d = dev(devname);
  bext_set_allocator(recording, &A);
  bext_tensor *big_a = filled(d, BIG, 1);
  bext_tensor *small_a = filled(d, 16, 2);
  bext_tensor *mid_a = filled(d, 900, 3);          /* a few KiB: past the inline classes */
  bext_tensor *view_a = bext_slice(bext_retain(big_a), (int64_t[]){1}, (int64_t[]){BIG}, 1);
  cr_assert_not_null(view_a, "%s", bext_last_error());
  cr_expect(owns(&A, bxr_data(big_a)), "A allocated the large buffer");

  bext_set_allocator(recording, &B);
  bext_tensor *big_b = filled(d, BIG, 4);
  bext_tensor *small_b = filled(d, 16, 5);
  cr_expect(owns(&B, bxr_data(big_b)), "B allocated the large buffer made under B");
  cr_expect(!owns(&A, bxr_data(big_b)), "nothing of A's serves a tensor made under B");
  /* an op under B reading A's tensors: its output is B's */
  bext_tensor *sum = bext_add(bext_retain(big_a), bext_retain(big_b));
  cr_assert_not_null(sum, "%s", bext_last_error());
  cr_expect_eq(first(sum), 5.0f);

  /* A's tensors die under B */
  bext_release(big_a);
  bext_release(small_a);
  bext_release(mid_a);
  cr_expect_eq(first(view_a), 1.0f, "the view kept A's storage alive");
  bext_release(view_a);
  bext_release(sum);
  bext_release(big_b);
  bext_release(small_b);
  drain();
  expect_balanced(&A);
  expect_balanced(&B);
}

Test(alloc_hooks, ndarray_tensors_outlive_a_hook_switch) { switch_with_live_tensors("ndarray"); }
Test(alloc_hooks, flex_tensors_outlive_a_hook_switch) { switch_with_live_tensors("flex"); }

/* A buffer Flex cached under A must not be handed to a tensor made under
 * B (B would then free it), and A's cached buffers still go back to A. */
Test(alloc_hooks, flex_cache_never_crosses_hooks) {
  start();
  const bext_device *fx = dev("flex");
  bext_set_allocator(recording, &A);
  bext_tensor *t = filled(fx, BIG, 1);
  bext_tensor *big = filled(fx, (int64_t)2 << 20, 1);   /* 8 MiB: the huge-page path */
  void *abuf = bxr_data(t);
  unsigned long hits = bxr_host_cache_hits();
  bext_release(t);                          /* into Flex's cache, A's buffer */
  t = filled(fx, BIG, 2);
  cr_expect_eq(bxr_host_cache_hits(), hits + 1, "same hook: the cached buffer is reused");
  cr_expect_eq(bxr_data(t), abuf);
  bext_release(t);
  bext_release(big);

  bext_set_allocator(recording, &B);
  cr_expect_eq(A.nlive, 0, "the switch returned A's idle blocks and cached buffers to A");
  long b_allocs = B.allocs;
  bext_tensor *u = filled(fx, BIG, 3);     /* same size as A's cached buffer */
  bext_tensor *ubig = filled(fx, (int64_t)2 << 20, 3);
  cr_expect(!owns(&A, bxr_data(u)), "A's cached buffer served a tensor made under B");
  cr_expect(!owns(&A, bxr_data(ubig)), "A's cached huge buffer served a tensor made under B");
  cr_expect(owns(&B, bxr_data(u)) && owns(&B, bxr_data(ubig)));
  cr_expect_gt(B.allocs, b_allocs);
  bext_release(u);
  bext_release(ubig);
  /* B's buffers cached now; the same size again under B reuses B's */
  u = filled(fx, BIG, 4);
  cr_expect(owns(&B, bxr_data(u)));
  bext_release(u);

  /* back to A: B's cached buffers must not serve A either */
  bext_set_allocator(recording, &A);
  u = filled(fx, BIG, 5);
  cr_expect(owns(&A, bxr_data(u)), "a tensor made under A got a buffer of A's");
  bext_release(u);
  drain();
  expect_balanced(&A);
  expect_balanced(&B);
}

/* Op outputs that reuse an operand's storage in place keep the operand's
 * hook: a chain started under A and finished under B frees through A. */
Test(alloc_hooks, in_place_outputs_keep_their_hook) {
  start();
  const bext_device *fx = dev("flex");
  bext_set_allocator(recording, &A);
  bext_tensor *t = filled(fx, BIG, 1);
  bext_tensor *s = filled(fx, 8, 1);
  bext_set_allocator(recording, &B);
  t = bext_exp(bext_neg(t));               /* unique operand: reused in place */
  cr_assert_not_null(t, "%s", bext_last_error());
  s = bext_exp(bext_neg(s));
  cr_assert_not_null(s, "%s", bext_last_error());
  bext_tensor *r = bext_sum(bext_retain(t));
  cr_assert_not_null(r, "%s", bext_last_error());
  bext_release(r);
  bext_release(t);
  bext_release(s);
  drain();
  expect_balanced(&A);
  expect_balanced(&B);
}

static void *release_it(void *t) {
  bext_release(t);
  return NULL;
}

/* A's tensors released by another thread after the switch: the large
 * buffers go to A at once, the blocks when that thread exits. */
Test(alloc_hooks, released_on_another_thread_after_the_switch) {
  start();
  const bext_device *nd = dev("ndarray"), *fx = dev("flex");
  bext_set_allocator(recording, &A);
  bext_tensor *ts[4] = { filled(nd, BIG, 1), filled(fx, BIG, 1), filled(nd, 4, 1),
                         filled(fx, 4, 1) };
  bext_set_allocator(recording, &B);
  bext_tensor *keep = filled(fx, BIG, 2);
  for (int i = 0; i < 4; i++) {
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, release_it, ts[i]), 0);
    pthread_join(th, NULL);
  }
  bext_release(keep);
  drain();
  expect_balanced(&A);
  expect_balanced(&B);
}
