/* kernel_cpu.c — kernel_prepare / kernel_launch for every host-memory CPU
 * device (Flex now, cube:cpu next): kernel IR -> libbext_llvm's JIT ->
 * a plain function with the CPU kernel ABI (bxl.h), run over the grid on
 * the runtime's thread pool.
 *
 * One JIT and one cache serve the whole process: compiled code depends
 * only on the IR and this machine, never on which CPU device asked, so
 * Flex and cube:cpu share their kernels.  Compiled kernels live as long
 * as the process (JIT code cannot be unmapped piecemeal), which more than
 * meets backend.h's "valid until the device closes".
 *
 * Prepare: a lock-free lookup by key (the hit path of a caller that
 * prepares per launch); on a miss, the global lock is held across the
 * compile, so two threads preparing one key compile it once, and the
 * on-disk cache (kernel_cache.c) is asked before LLVM, so a second
 * process start compiles nothing.  IR equal to
 * an entry's under another key reuses its code (keyed by the hash of the
 * serialized form).
 *
 * Launch: no allocation and no lock.  Tensors become bxl_binding values
 * on the stack (every extent, stride and reachable index must fit u32),
 * and the grid is cut for bxr_pool_for: by units when the kernel can run
 * a cube piecewise, by whole cubes when it has shared memory (the array
 * lives in one call's frame) or sync_cube (phases run inside one call). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"
#include "tensor.h"

/* bindings a kernel may have: the launch maps them on the stack */
#define BXR_KERNEL_MAX_BINDINGS 32
#define BXR_KERNEL_BUCKETS 256
/* units per cube of a kernel with sync_cube: each unit's state between
 * phases (at most 65 8-byte slots, bxl_lower.c) lives on the stack of
 * the thread running the cube, so 1024 units take at most 520 KiB */
#define BXR_KERNEL_MAX_PHASED_CUBE 1024u

struct bxr_kernel {
  uint64_t key;            /* the caller's key */
  uint64_t hash;           /* bxk_hash64 of the serialized IR */
  bxl_kernel_fn fn;
  uint32_t nbind, nscalar;
  uint32_t cost;           /* per-unit work estimate for bxr_pool_for */
  bool whole_cube;         /* shared memory or sync_cube: a cube runs in one call */
  bool phased;             /* sync_cube: the cube runs in phases */
  bext_dtype dt[BXR_KERNEL_MAX_BINDINGS];
  uint8_t rank[BXR_KERNEL_MAX_BINDINGS];   /* 0: any */
  char name[48];
  struct bxr_kernel *_Atomic next;         /* bucket chain, published with release */
};

static struct {
  pthread_mutex_t lock;    /* compiles, the JIT, inserts */
  struct bxl_jit *jit;
  const struct bxl_api *api;
  struct bxr_kernel *_Atomic bucket[BXR_KERNEL_BUCKETS];
  char target[4096];        /* bxl_host_target, once */
  atomic_ulong compiles, hits, disk_hits, disk_rejects, adopted;
} K = {.lock = PTHREAD_MUTEX_INITIALIZER};

void bxr_kernel_cpu_stats(struct bxr_kernel_stats *st) {
  st->compiles = atomic_load(&K.compiles);
  st->adopted = atomic_load(&K.adopted);
  st->memory_hits = atomic_load(&K.hits);
  st->disk_hits = atomic_load(&K.disk_hits);
  st->disk_rejects = atomic_load(&K.disk_rejects);
}

static struct bxr_kernel *lookup(uint64_t key) {
  struct bxr_kernel *k = atomic_load_explicit(&K.bucket[key % BXR_KERNEL_BUCKETS], memory_order_acquire);
  while (k && k->key != key) k = atomic_load_explicit(&k->next, memory_order_acquire);
  return k;
}

/* An entry with this IR under another key (under the lock). */
static const struct bxr_kernel *lookup_hash(uint64_t hash) {
  for (int b = 0; b < BXR_KERNEL_BUCKETS; b++)
    for (struct bxr_kernel *k = atomic_load_explicit(&K.bucket[b], memory_order_relaxed); k;
         k = atomic_load_explicit(&k->next, memory_order_relaxed))
      if (k->hash == hash) return k;
  return NULL;
}

bext_dtype bxr_kernel_dtype(unsigned t) {
  switch (t) {
  case BXK_BOOL: return BEXT_BOOL;
  case BXK_U8: return BEXT_U8;
  case BXK_I32: return BEXT_I32;
  case BXK_I64: return BEXT_I64;
  case BXK_F16: return BEXT_F16;
  case BXK_BF16: return BEXT_BF16;
  case BXK_F32: return BEXT_F32;
  case BXK_F64: return BEXT_F64;
  default: return BEXT_DTYPE_COUNT;   /* u32: no tensor dtype holds it */
  }
}

/* Instructions in blk and below, and whether any is a sync_cube. */
static uint32_t walk(const struct bxk_block *blk, bool *sync) {
  uint32_t n = 0;
  for (const struct bxk_inst *i = blk ? blk->first : NULL; i; i = i->next) {
    n++;
    if (i->op == BXK_OP_SYNC) *sync = true;
    for (int j = 0; j < 2; j++) n += walk(i->blk[j], sync);
  }
  return n;
}

static bool diag_error(const char *what, const char *name, const struct bxk_diags *ds) {
  char text[2048];
  bxk_diags_render(ds, text, sizeof text);
  return bxr_error("kernel_prepare(%s): %s:\n%s", name, what, text);
}

/* k->fn for ir (under the lock): the disk cache's object when it has a
 * valid one, else a fresh compile, which is then kept on disk.  The
 * symbol is a function of the IR alone, so an object compiled by another
 * process defines the name this one looks up. */
static bool compile(struct bxr_kernel *k, const struct bxk_kernel *ir, struct bxk_diags *ds) {
  char sym[96];
  snprintf(sym, sizeof sym, "bxk.%.40s.%016" PRIx64, k->name, k->hash);
  struct bxr_kcache_entry e;
  bool retry = false;
  int got = bxr_kcache_load(k->hash, K.target, &e);
  if (got > 0) {
    k->fn = K.api->jit_add_object(K.jit, e.obj, e.len, sym, ds);
    bxr_kcache_release(&e);
    if (k->fn) {
      atomic_fetch_add(&K.disk_hits, 1);
      return true;
    }
    /* LLVM refused an entry that passed its checks: compile under another
     * name (the failed one may be half-defined in the JIT) */
    memset(ds, 0, sizeof *ds);
    got = -1;
    retry = true;
    snprintf(sym, sizeof sym, "bxk.%.40s.%016" PRIx64 ".r", k->name, k->hash);
  }
  if (got < 0) atomic_fetch_add(&K.disk_rejects, 1);
  void *obj = NULL;
  size_t olen = 0;
  atomic_fetch_add(&K.compiles, 1);
  if (!K.api->compile_object(ir, sym, &obj, &olen, ds))
    return diag_error("compiling the kernel failed", k->name, ds);
  k->fn = K.api->jit_add_object(K.jit, obj, olen, sym, ds);
  /* (a retried object's symbol is not the one other processes look up) */
  if (k->fn && !retry) bxr_kcache_store(k->hash, K.target, obj, olen);
  K.api->object_free(obj);
  if (!k->fn) return diag_error("loading the compiled kernel failed", k->name, ds);
  return true;
}

/* A new entry for key (under the lock): fn when given (ahead-of-time
 * code), else ir compiled. */
static struct bxr_kernel *build(const struct bxk_kernel *ir, uint64_t key, bxl_kernel_fn fn) {
  static struct bxk_diags ds;   /* 7 KB, under the lock */
  memset(&ds, 0, sizeof ds);
  const char *name = ir->name ? ir->name : "?";
  if (!bxk_verify(ir, &ds)) return diag_error("the kernel does not verify", name, &ds), NULL;
  if (ir->nbind > BXR_KERNEL_MAX_BINDINGS)
    return bxr_error("kernel_prepare(%s): %" PRIu32 " bindings; the CPU runtime takes at most %d",
                     name, ir->nbind, BXR_KERNEL_MAX_BINDINGS), NULL;
  struct bxr_kernel *k = bxr_alloc_from(bxr_hook_now(), sizeof *k);   /* lives for the process */
  if (!k) return NULL;
  memset(k, 0, sizeof *k);
  k->key = key;
  k->nbind = ir->nbind;
  k->nscalar = ir->nscalar;
  snprintf(k->name, sizeof k->name, "%s", name);
  for (uint32_t j = 0; j < ir->nbind; j++) {
    k->dt[j] = bxr_kernel_dtype(ir->bind[j].elem);
    k->rank[j] = ir->bind[j].rank;
    if (k->dt[j] == BEXT_DTYPE_COUNT) {
      bxr_free_to(bxr_hook_now(), k, sizeof *k);
      return bxr_error("kernel_prepare(%s): binding b%" PRIu32 " has element type %s, which no "
                       "tensor dtype holds", name, j, bxk_type_name(ir->bind[j].elem)), NULL;
    }
  }
  bool sync = false;
  uint32_t n = walk(&ir->body, &sync);
  k->cost = n < 1 ? 1 : n > 256 ? 256 : n;
  k->whole_cube = sync || ir->nshared > 0;
  k->phased = sync;

  size_t len = 0;
  uint8_t *bytes = bxk_serialize(ir, &len);
  if (!bytes) {
    bxr_free_to(bxr_hook_now(), k, sizeof *k);
    return bxr_error("kernel_prepare(%s): out of memory serializing the kernel", name), NULL;
  }
  k->hash = bxk_hash64(bytes, len);
  const struct bxr_kernel *same = fn ? NULL : lookup_hash(k->hash);
  if (fn) {
    k->fn = fn;
    atomic_fetch_add(&K.adopted, 1);
  } else if (same) {
    k->fn = same->fn;
  } else {
    if (!K.api && !(K.api = bxr_llvm_api())) goto fail;
    if (!K.jit && !(K.jit = K.api->jit_new(&ds))) {
      diag_error("starting the JIT failed", name, &ds);
      goto fail;
    }
    if (!K.target[0]) K.api->host_target(K.target, sizeof K.target);
    if (!compile(k, ir, &ds)) goto fail;
  }
  free(bytes);
  struct bxr_kernel *_Atomic *head = &K.bucket[key % BXR_KERNEL_BUCKETS];
  atomic_store_explicit(&k->next, atomic_load_explicit(head, memory_order_relaxed), memory_order_relaxed);
  atomic_store_explicit(head, k, memory_order_release);
  return k;
fail:
  free(bytes);
  bxr_free_to(bxr_hook_now(), k, sizeof *k);
  return NULL;
}

struct bxr_kernel *bxr_kernel_cpu_prepare(struct bext_device *dev, const struct bxk_kernel *ir,
                                          uint64_t key) {
  if (!ir) return bxr_error("kernel_prepare: the kernel is NULL"), NULL;
  struct bxr_kernel *k = lookup(key);
  if (k) {
    atomic_fetch_add_explicit(&K.hits, 1, memory_order_relaxed);
    return k;
  }
  pthread_mutex_lock(&K.lock);
  k = lookup(key);   /* another thread may have compiled it meanwhile */
  if (k) atomic_fetch_add_explicit(&K.hits, 1, memory_order_relaxed);
  else k = build(ir, key, NULL);
  pthread_mutex_unlock(&K.lock);
  return k;
}

bool bxr_kernel_cpu_adopt(const struct bxk_kernel *ir, uint64_t key, bxl_kernel_fn fn) {
  if (lookup(key)) return true;
  pthread_mutex_lock(&K.lock);
  bool ok = lookup(key) || build(ir, key, fn);
  pthread_mutex_unlock(&K.lock);
  return ok;
}

/* ------------------------------------------------------------- launch */

struct launch {
  bxl_kernel_fn fn;
  const struct bxl_binding *b;
  const union bxl_scalar *s;
  struct bxl_grid grid;
  uint64_t dim;            /* units per cube */
};

static void cube_pos(struct bxl_grid *g, uint64_t c) {
  g->cube_pos[0] = (uint32_t)(c % g->cube_count[0]);
  c /= g->cube_count[0];
  g->cube_pos[1] = (uint32_t)(c % g->cube_count[1]);
  g->cube_pos[2] = (uint32_t)(c / g->cube_count[1]);
}

/* Units [b, e) of the flattened grid, one call per cube touched. */
static void run_units(void *ctx, size_t b, size_t e) {
  const struct launch *L = ctx;
  struct bxl_grid g = L->grid;
  while (b < e) {
    uint64_t c = b / L->dim, base = c * L->dim;
    uint64_t stop = base + L->dim < e ? base + L->dim : e;
    cube_pos(&g, c);
    L->fn(L->b, L->s, &g, (uint32_t)(b - base), (uint32_t)(stop - base));
    b = stop;
  }
}

/* Cubes [b, e), each whole in one call. */
static void run_cubes(void *ctx, size_t b, size_t e) {
  const struct launch *L = ctx;
  struct bxl_grid g = L->grid;
  for (size_t c = b; c < e; c++) {
    cube_pos(&g, c);
    L->fn(L->b, L->s, &g, 0, (uint32_t)L->dim);
  }
}

static bool bind(const struct bxr_kernel *k, uint32_t j, const bext_tensor *t, struct bxl_binding *out) {
  char d[96];
  if (!t) return bxr_error_null("kernel_launch(%s): binding b%" PRIu32 " is NULL", k->name, j);
  if (!t->device->vt || !t->device->vt->host_memory || (!t->storage->data && t->storage->bytes))
    return bxr_error("kernel_launch(%s): binding b%" PRIu32 " is on %s, whose data is not host "
                     "memory", k->name, j, t->device->name);
  if (t->dtype != k->dt[j])
    return bxr_error("kernel_launch(%s): binding b%" PRIu32 " expects %s, found %s", k->name, j,
                     bext_dtype_name(k->dt[j]), bxr_describe(t, d, sizeof d));
  if (k->rank[j] && t->rank != k->rank[j])
    return bxr_error("kernel_launch(%s): binding b%" PRIu32 " expects rank %u, found %s", k->name,
                     j, k->rank[j], bxr_describe(t, d, sizeof d));
  uint64_t reach = 0, len = 1;
  out->data = bxr_data(t);
  out->rank = (uint32_t)t->rank;
  for (int a = 0; a < BXL_MAX_RANK; a++) out->shape[a] = out->stride[a] = 0;
  for (int a = 0; a < t->rank; a++) {
    int64_t n = t->shape[a], s = t->strides[a];
    if (s < 0)
      return bxr_error("kernel_launch(%s): binding b%" PRIu32 " (%s) has stride %" PRId64 " on "
                       "axis %d; kernels index with u32, so negative strides need a contiguous "
                       "copy first", k->name, j, bxr_describe(t, d, sizeof d), s, a);
    len *= (uint64_t)n;
    if (n > 0) reach += (uint64_t)(n - 1) * (uint64_t)s;
    if (len > UINT32_MAX || reach > UINT32_MAX || (uint64_t)s > UINT32_MAX)
      return bxr_error("kernel_launch(%s): binding b%" PRIu32 " (%s) is too large: kernels index "
                       "with u32, and its %s exceeds 4294967295", k->name, j,
                       bxr_describe(t, d, sizeof d),
                       len > UINT32_MAX ? "element count" : "farthest element offset");
    out->shape[a] = (uint32_t)n;
    out->stride[a] = (uint32_t)s;
  }
  out->len = (uint32_t)len;
  return true;
}

bool bxr_kernel_cpu_launch(struct bext_device *dev, struct bxr_kernel *k, const uint32_t cube_count[3],
                           const uint32_t cube_dim[3], bext_tensor *const *bindings,
                           const union bxl_scalar *scalars) {
  if (!k) return bxr_error("kernel_launch: the kernel is NULL");
  if (!cube_count || !cube_dim) return bxr_error("kernel_launch(%s): cube_count or cube_dim is NULL", k->name);
  if (k->nbind && !bindings) return bxr_error("kernel_launch(%s): bindings is NULL", k->name);
  if (k->nscalar && !scalars) return bxr_error("kernel_launch(%s): scalars is NULL", k->name);
  uint64_t cubes = 1, dim = 1;
  for (int a = 0; a < 3; a++) {
    if (!cube_count[a] || !cube_dim[a])
      return bxr_error("kernel_launch(%s): cube_count [%u,%u,%u] and cube_dim [%u,%u,%u] must be "
                       ">= 1 on every axis", k->name, cube_count[0], cube_count[1], cube_count[2],
                       cube_dim[0], cube_dim[1], cube_dim[2]);
    cubes *= cube_count[a];
    dim *= cube_dim[a];
    if (cubes > UINT32_MAX || dim > UINT32_MAX || cubes * dim > UINT32_MAX)
      return bxr_error("kernel_launch(%s): cube_count [%u,%u,%u] x cube_dim [%u,%u,%u] has more "
                       "than 4294967295 units (unit positions are u32)", k->name, cube_count[0],
                       cube_count[1], cube_count[2], cube_dim[0], cube_dim[1], cube_dim[2]);
  }
  if (k->phased && dim > BXR_KERNEL_MAX_PHASED_CUBE)
    return bxr_error("kernel_launch(%s): cube_dim [%u,%u,%u] has %" PRIu64 " units; a kernel with "
                     "sync_cube takes at most %u per cube on the CPU (each unit's state between "
                     "phases lives on the stack)", k->name, cube_dim[0], cube_dim[1], cube_dim[2],
                     dim, BXR_KERNEL_MAX_PHASED_CUBE);
  struct bxl_binding b[BXR_KERNEL_MAX_BINDINGS];
  for (uint32_t j = 0; j < k->nbind; j++)
    if (!bind(k, j, bindings[j], &b[j])) return false;
  struct launch L = {.fn = k->fn, .b = b, .s = scalars, .dim = dim};
  memcpy(L.grid.cube_count, cube_count, sizeof L.grid.cube_count);
  memcpy(L.grid.cube_dim, cube_dim, sizeof L.grid.cube_dim);
  if (k->whole_cube)
    bxr_pool_for((size_t)cubes, (size_t)(dim * k->cost), 1, run_cubes, &L);
  else
    bxr_pool_for((size_t)(cubes * dim), k->cost, 64, run_units, &L);
  return true;
}
