/* test_alloc.c — allocation-failure injection through the one allocation
 * hook (SQLite's fault-sim idea): the Nth allocation fails, for every N
 * along a realistic sequence of calls on both backends.  Each call must
 * fail cleanly (NULL + "out of memory"), never crash, and leak nothing
 * (LSan checks at exit). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include <bext/bext.h>

static long g_count, g_fail_at, g_live;

static void *failing_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  (void)osize;
  if (nsize == 0) {
    if (ptr) g_live--;
    free(ptr);
    return NULL;
  }
  if (!ptr && g_count++ == g_fail_at) return NULL;
  void *p = realloc(ptr, nsize);
  if (p && !ptr) g_live++;
  return p;
}

/* One pass of work; returns how many calls failed with "out of memory". */
static int workload(const bext_device *dev) {
  int oom = 0;
  bext_tensor *ts[8] = {0};
#define STEP(i, call)                                                        \
  do {                                                                       \
    ts[i] = (call);                                                          \
    if (!ts[i]) {                                                            \
      /* chained calls see the NULL an inner call returned on OOM */          \
      cr_expect(strstr(bext_last_error(), "out of memory") ||                \
                    strstr(bext_last_error(), "NULL tensor handle"),         \
                "%s: %s", #call, bext_last_error());                         \
      oom++;                                                                 \
    }                                                                        \
  } while (0)
  float v[6] = {1, 2, 3, 4, 5, 6};
  STEP(0, bext_from_data(v, BEXT_F32, (int64_t[]){2, 3}, 2, dev));
  STEP(1, bext_ones((int64_t[]){3}, 1, BEXT_F32, dev));
  if (ts[0] && ts[1]) STEP(2, bext_add(bext_swap_dims(bext_retain(ts[0]), 0, 1), bext_reshape(bext_retain(ts[1]), (int64_t[]){3, 1}, 2)));
  if (ts[0]) STEP(3, bext_sum_dim(bext_exp(bext_retain(ts[0])), 1, true));
  if (ts[0]) STEP(4, bext_matmul(bext_retain(ts[0]), bext_swap_dims(bext_retain(ts[0]), 0, 1)));
  if (ts[1]) {
    bext_tensor *parts[5];
    for (int i = 0; i < 5; i++) parts[i] = bext_retain(ts[1]);
    STEP(5, bext_cat(parts, 5, 0));
  }
  if (ts[0]) {
    bext_tensor *idx = bext_from_data((int64_t[]){1, 0}, BEXT_I64, (int64_t[]){2}, 1, dev);
    if (!idx) oom++;
    else STEP(6, bext_select(bext_retain(ts[0]), 1, idx));
  }
  if (ts[2]) {
    const bext_device *other =
        bext_device_get(bext_device_backend(dev) == BEXT_BACKEND_FLEX ? "ndarray" : "flex");
    STEP(7, bext_to_device(bext_cast(bext_retain(ts[2]), BEXT_F16), other));
  }
  float out[16];
  for (int i = 0; i < 8; i++) {
    if (ts[i]) {
      bext_read(ts[i], out, sizeof out);
      bext_release(ts[i]);
    }
  }
  return oom;
#undef STEP
}

static void sweep(const char *devname) {
  const bext_device *dev;
  cr_assert((dev = bext_device_get(devname)));
  int clean_runs = 0;
  for (g_fail_at = 0; g_fail_at < 400 && clean_runs == 0; g_fail_at++) {
    g_count = 0;
    bext_set_allocator(failing_alloc, NULL);
    int oom = workload(dev);
    bext_set_allocator(NULL, NULL);
    if (g_count <= g_fail_at) {
      cr_expect_eq(oom, 0, "no allocation failed, yet %d calls said out of memory", oom);
      clean_runs++;
    } else {
      cr_expect_gt(oom, 0, "allocation %ld failed but every call succeeded", g_fail_at);
    }
  }
  cr_expect_eq(clean_runs, 1, "the sweep reached a run without failures");
  /* Tensor blocks freed during the workload are reused from the thread's
   * cache, so the hook sees fewer calls than there are tensors; still every
   * one of them gets its turn to fail. */
  cr_expect_gt(g_fail_at, 10, "the workload makes a realistic number of allocations (%ld)", g_fail_at);
}

/* Pooled/cached blocks may stay alive inside a backend (g_live); what
 * matters is that LSan sees no leak at exit and nothing crashed. */
Test(alloc, ndarray_every_allocation_can_fail) { sweep("ndarray"); }
Test(alloc, flex_every_allocation_can_fail) { sweep("flex"); }

Test(alloc, hook_sees_every_allocation) {
  g_fail_at = -1;
  g_count = 0;
  g_live = 0;
  const bext_device *nd;
  (nd = bext_device_get("ndarray"));
  bext_set_allocator(failing_alloc, NULL);
  /* small: storage record, handle and the 128-byte buffer share one block */
  bext_tensor *t = bext_zeros((int64_t[]){4, 4}, 2, BEXT_F64, nd);
  long small = g_live;
  /* large: the block plus a separate buffer from the hook */
  bext_tensor *u = bext_zeros((int64_t[]){64, 64}, 2, BEXT_F64, nd);
  long large = g_live - small;
  bext_release(t);
  bext_release(u);
  /* freed blocks may idle in this thread's cache; switching the hook
   * returns them to the hook they came from */
  bext_set_allocator(NULL, NULL);
  cr_expect_eq(small, 1, "a small tensor is one allocation through the hook (%ld)", small);
  cr_expect_eq(large, 2, "a large tensor is header block + buffer through the hook (%ld)", large);
  cr_expect_eq(g_live, 0, "everything allocated through the hook was freed through it");
}
