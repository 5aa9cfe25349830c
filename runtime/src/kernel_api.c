/* kernel_api.c — kernels from outside the runtime: bext_kernel_launch
 * (bext.h), which the launchers bextc generates for `#[cube]` kernels
 * call, and the loader the Cube backend's stdlib kernels share.
 *
 * A bext_kernel_src is static data (generated C, libbext's own stdlib
 * tables), so its address identifies it: the IR is deserialized and
 * verified once per process and found again by address, lock-free, and
 * its key (the IR's hash) is the one every device cache uses.  The device
 * compiles it with its own kernel_prepare; on the CPU, ahead-of-time code
 * that came with the source (the program linked <stem>.kernels.o) is
 * adopted instead of compiling, so such a program needs no LLVM at all. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "bxk.h"
#include "kernel.h"

#define BXR_SRC_BUCKETS 256

struct loaded {
  const bext_kernel_src *src;
  struct bxk_kernel *ir;
  uint64_t key;
  struct loaded *_Atomic next;
};

static struct {
  pthread_mutex_t lock;
  struct loaded *_Atomic bucket[BXR_SRC_BUCKETS];
} L = {.lock = PTHREAD_MUTEX_INITIALIZER};

static size_t src_bucket(const bext_kernel_src *src) {
  return (size_t)(((uintptr_t)src >> 4) * 0x9E3779B97F4A7C15ull >> 56) % BXR_SRC_BUCKETS;
}

static struct loaded *find(const bext_kernel_src *src) {
  struct loaded *l = atomic_load_explicit(&L.bucket[src_bucket(src)], memory_order_acquire);
  while (l && l->src != src) l = atomic_load_explicit(&l->next, memory_order_acquire);
  return l;
}

/* src's entry, made on first use (under the lock). */
static struct loaded *load(const bext_kernel_src *src) {
  struct loaded *l = find(src);
  if (l) return l;
  pthread_mutex_lock(&L.lock);
  if ((l = find(src)) != NULL) goto out;
  struct bxk_diags ds = {0};
  struct bxk_kernel *ir = bxk_deserialize(src->ir, src->size, &ds);
  if (ir && !bxk_verify(ir, &ds)) {
    bxk_kernel_free(ir);
    ir = NULL;
  }
  if (!ir) {
    char text[1024];
    bxk_diags_render(&ds, text, sizeof text);
    bxr_error("kernel `%s`: its IR does not load (%" PRIu32 " bytes): %s", src->name, src->size, text);
    goto out;
  }
  /* process-lifetime, like the compiled kernels they lead to */
  if (!(l = calloc(1, sizeof *l))) {
    bxk_kernel_free(ir);
    bxr_error("kernel `%s`: out of memory", src->name);
    goto out;
  }
  l->src = src;
  l->ir = ir;
  l->key = bxk_hash64(src->ir, src->size);
  struct loaded *_Atomic *head = &L.bucket[src_bucket(src)];
  atomic_store_explicit(&l->next, atomic_load_explicit(head, memory_order_relaxed), memory_order_relaxed);
  atomic_store_explicit(head, l, memory_order_release);
out:
  pthread_mutex_unlock(&L.lock);
  return l;
}

struct bxr_kernel *bxr_kernel_src_prepare(struct bext_device *dev, const bext_kernel_src *src) {
  if (!dev->vt || !dev->vt->kernel_prepare || !dev->vt->kernel_launch)
    return bxr_error("device %s runs no kernels (kernel `%s`): use a cube: or flex device", dev->name,
                     src->name), NULL;
  struct loaded *l = load(src);
  if (!l) return NULL;
  /* ahead-of-time code is CPU code: only the CPU runtime adopts it */
  if (src->cpu && dev->vt->kernel_prepare == bxr_kernel_cpu_prepare &&
      !bxr_kernel_cpu_adopt(l->ir, l->key, (bxl_kernel_fn)(void (*)(void))src->cpu))
    return NULL;
  return dev->vt->kernel_prepare(dev, l->ir, l->key);
}

const struct bxk_kernel *bxr_kernel_src_ir(const bext_kernel_src *src) {
  struct loaded *l = load(src);
  return l ? l->ir : NULL;
}

_Thread_local struct bxr_launch_watch *bxr_launch_watch;

/* The watcher's note of a launch (backend.h): the first one's kernel,
 * grid, bindings (retained) and scalars, and a count. */
static void watch_note(const bext_kernel_src *src, const bext_grid *grid, bext_tensor *const *bindings, int nbindings,
                       const bext_kernel_scalar *scalars, int nscalars) {
  struct bxr_launch_watch *w = bxr_launch_watch;
  if (w->n++) return;
  w->src = src;
  w->grid = *grid;
  w->nbind = nbindings;
  w->nscalar = nscalars;
  for (int i = 0; i < nbindings && nbindings <= BXR_WATCH_BINDINGS; i++) w->bind[i] = bext_retain(bindings[i]);
  for (int i = 0; i < nscalars && nscalars <= BXR_WATCH_SCALARS; i++) w->scalar[i] = scalars[i];
}

_Static_assert(sizeof(bext_kernel_scalar) == sizeof(union bxl_scalar),
               "bext_kernel_scalar is the public spelling of the kernel ABI's 8-byte scalar slot");

bool bext_kernel_launch(const bext_kernel_src *src, const bext_grid *grid, bext_tensor *const *bindings,
                        int nbindings, const bext_kernel_scalar *scalars, int nscalars) {
  if (!src || !src->name || !src->ir) return bext_set_error("bext_kernel_launch: no kernel (NULL src, name or IR)");
  if (!grid) return bext_set_error("bext_kernel_launch(%s): the grid is NULL", src->name);
  if (nbindings < 1 || !bindings)
    return bext_set_error("bext_kernel_launch(%s): no tensors: the device is bindings[0]'s", src->name);
  if (nscalars < 0 || (nscalars > 0 && !scalars))
    return bext_set_error("bext_kernel_launch(%s): %d scalars but no array", src->name, nscalars);
  for (int i = 0; i < nbindings; i++)
    if (!bindings[i]) return bext_set_null_error("bext_kernel_launch(%s): binding %d is NULL", src->name, i);
  struct bext_device *dev = bindings[0]->device;
  for (int i = 1; i < nbindings; i++)
    if (bindings[i]->device != dev)
      return bext_set_error("bext_kernel_launch(%s): binding %d is on %s, binding 0 on %s", src->name, i,
                            bindings[i]->device->name, dev->name);
  const struct bxk_kernel *ir = bxr_kernel_src_ir(src);
  if (!ir) return false;
  if ((uint32_t)nbindings != ir->nbind || (uint32_t)nscalars != ir->nscalar)
    return bext_set_error("bext_kernel_launch(%s): the kernel takes %" PRIu32 " tensors and %" PRIu32
                          " scalars; given %d and %d", src->name, ir->nbind, ir->nscalar, nbindings, nscalars);
  struct bxr_kernel *k = bxr_kernel_src_prepare(dev, src);
  if (!k) return false;
  if (__builtin_expect(bxr_launch_watch != NULL, 0)) watch_note(src, grid, bindings, nbindings, scalars, nscalars);
  return dev->vt->kernel_launch(dev, k, grid->cube_count, grid->cube_dim, bindings,
                                (const union bxl_scalar *)(const void *)scalars);
}

_Atomic unsigned long bxr_tune_timed, bxr_tune_loaded, bxr_tune_rejects;

bool bext_kernel_stats(bext_kernel_stat *out) {
  if (!out) return bext_set_error("bext_kernel_stats: out is NULL");
  struct bxr_kernel_stats st;
  bxr_kernel_cpu_stats(&st);
  *out = (bext_kernel_stat){st.compiles, st.adopted, st.disk_hits, st.memory_hits, st.disk_rejects,
                            bxr_tune_timed, bxr_tune_loaded, bxr_tune_rejects};
  return true;
}

/* The runtime's own store of a double into a dtype (bxr_store_f64, whose
 * conversions are bxk_scalar.h's): no second copy of the cast rule. */
bext_kernel_scalar bext_kernel_scalar_of(bext_dtype dt, double v) {
  bext_kernel_scalar s;
  memset(&s, 0, sizeof s);
  if ((unsigned)dt < BEXT_DTYPE_COUNT) bxr_store_f64(&s, dt, 0, v);
  return s;
}
