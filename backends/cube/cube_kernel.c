/* cube_kernel.c — the stdlib kernels on a cube device: the embedded
 * instantiations (bxr_stdlib_kir.inc lists one table per
 * .bext file of stdlib/cube, written by bextc --emit=kir-c at build time), found
 * by name, deserialized, verified and prepared through the device's own
 * kernel_prepare on first use, then cached per device; and the 1-D launch
 * every op uses.
 *
 * The name index is process-wide and built once; each device holds one
 * atomic kernel pointer per instantiation (its ctx, made by open), so a
 * hit is a hash probe and an acquire load, and a miss takes the device's
 * mutex so two threads prepare one instantiation once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cube.h"

#define BXR_KIR_FILE(s) extern const bext_kernel_src bxk_embed_##s[];
#include "bxr_stdlib_kir.inc"
#undef BXR_KIR_FILE

static const bext_kernel_src *const stdlib_files[] = {
#define BXR_KIR_FILE(s) bxk_embed_##s,
#include "bxr_stdlib_kir.inc"
#undef BXR_KIR_FILE
    NULL};

/* ------------------------------------------------------------ name index */

static struct {
  pthread_once_t once;
  const bext_kernel_src **rows; /* every instantiation, file by file */
  uint32_t n;
  uint32_t *slot;                /* open addressing: row index + 1, 0 empty */
  uint32_t mask;
} idx = {.once = PTHREAD_ONCE_INIT};

static uint32_t name_hash(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
  return h;
}

static void build_index(void) {
  uint32_t n = 0;
  for (int f = 0; stdlib_files[f]; f++)
    for (const bext_kernel_src *e = stdlib_files[f]; e->name; e++) n++;
  uint32_t cap = 16;
  while (cap < 2 * n) cap *= 2;
  /* process-lifetime tables (like the device registry): plain calloc */
  idx.rows = calloc(n + 1, sizeof *idx.rows);
  idx.slot = calloc(cap, sizeof *idx.slot);
  if (!idx.rows || !idx.slot) {
    free(idx.rows);
    free(idx.slot);
    idx.rows = NULL;
    idx.slot = NULL;
    return;
  }
  idx.mask = cap - 1;
  for (int f = 0; stdlib_files[f]; f++)
    for (const bext_kernel_src *e = stdlib_files[f]; e->name; e++) {
      uint32_t h = name_hash(e->name) & idx.mask;
      while (idx.slot[h]) h = (h + 1) & idx.mask;
      idx.rows[idx.n] = e;
      idx.slot[h] = ++idx.n;
    }
}

/* Row index of inst, or -1. */
static int64_t find_row(const char *inst) {
  pthread_once(&idx.once, build_index);
  if (!idx.slot) return -1;
  for (uint32_t h = name_hash(inst) & idx.mask; idx.slot[h]; h = (h + 1) & idx.mask)
    if (strcmp(idx.rows[idx.slot[h] - 1]->name, inst) == 0) return idx.slot[h] - 1;
  return -1;
}

/* ----------------------------------------------------------- per device */

struct cube_ctx {
  pthread_mutex_t lock;                 /* held across a prepare */
  void *target;                         /* the target runtime's state (cube:vulkan: its device) */
  uint32_t dtypes;                      /* bit per bext_dtype the device's kernels hold */
  char why[160];                        /* what the device lacks, for refusals */
  uint32_t shared_max;                  /* cube_set_limits; 0: none (the loop limit is dev->loop_max) */
  char limit_why[96];
  char identity[160];                   /* cube_set_identity: the autotuner's device key */
  uint32_t n;
  _Atomic(struct bxr_kernel *) k[];     /* one per embedded row */
};

bool cube_open(struct bext_device *dev) {
  pthread_once(&idx.once, build_index);
  if (!idx.slot) return bxr_error("%s: out of memory indexing the stdlib kernels", dev->name);
  struct cube_ctx *c = calloc(1, sizeof *c + idx.n * sizeof c->k[0]);
  if (!c) return bxr_error("%s: out of memory", dev->name);
  pthread_mutex_init(&c->lock, NULL);
  c->n = idx.n;
  c->dtypes = (1u << BEXT_DTYPE_COUNT) - 1;   /* every dtype until the target says otherwise */
  dev->ctx = c;
  return true;
}

void **cube_target(struct bext_device *dev) {
  struct cube_ctx *c = dev->ctx;
  return &c->target;
}

void cube_set_dtypes(struct bext_device *dev, uint32_t mask, const char *why) {
  struct cube_ctx *c = dev->ctx;
  c->dtypes = mask;
  snprintf(c->why, sizeof c->why, "%s", why ? why : "");
}

void cube_set_limits(struct bext_device *dev, uint32_t shared_max, uint32_t loop_max, const char *who) {
  struct cube_ctx *c = dev->ctx;
  c->shared_max = shared_max;
  dev->loop_max = loop_max;   /* on the device: Fusion plans around it too */
  snprintf(c->limit_why, sizeof c->limit_why, "%s", who ? who : "");
}

uint32_t cube_loop_max(struct bext_device *dev) { return dev->loop_max; }

void cube_set_identity(struct bext_device *dev, const char *identity) {
  struct cube_ctx *c = dev->ctx;
  snprintf(c->identity, sizeof c->identity, "%s", identity ? identity : "");
}

const char *cube_identity(struct bext_device *dev) {
  const struct cube_ctx *c = dev->ctx;
  return c ? c->identity : "";
}

bool cube_fits_shared(struct bext_device *dev, uint64_t bytes) {
  const struct cube_ctx *c = dev->ctx;
  return !c->shared_max || bytes <= c->shared_max;
}

bool cube_fits_loop(struct bxr_op *op, int64_t trips) {
  const struct cube_ctx *c = op->device->ctx;
  uint32_t lim = op->device->loop_max;
  if (!lim || trips <= (int64_t)lim) return true;
  return bxr_error("%s: `%s` with a loop of %lld steps is not supported on this device (%s runs at most %u "
                   "iterations of a loop)",
                   op->device->name, op->api, (long long)trips, c->limit_why, lim);
}

bool cube_dtype_ok(struct bext_device *dev, bext_dtype dt) {
  const struct cube_ctx *c = dev->ctx;
  return (unsigned)dt < BEXT_DTYPE_COUNT && c && (c->dtypes >> dt & 1u);
}

const char *cube_dtype_why(struct bext_device *dev) {
  const struct cube_ctx *c = dev->ctx;
  return c && c->why[0] ? c->why : "kernel dtypes: bool u8 i32 i64 f16 bf16 f32 f64";
}

void cube_close(struct bext_device *dev) {
  struct cube_ctx *c = dev->ctx;
  if (!c) return;
  pthread_mutex_destroy(&c->lock);
  free(c);
  dev->ctx = NULL;
}

struct bxr_kernel *cube_kernel(struct bext_device *dev, const char *inst) {
  int64_t row = find_row(inst);
  if (row < 0) {
    bxr_error("%s: no stdlib kernel `%s`", dev->name, inst);
    return NULL;
  }
  struct cube_ctx *c = dev->ctx;
  if (!c || !dev->vt->kernel_prepare) {
    bxr_error("%s: cannot run kernel `%s` (device not open or without kernel_prepare)", dev->name, inst);
    return NULL;
  }
  struct bxr_kernel *k = atomic_load_explicit(&c->k[row], memory_order_acquire);
  if (k) return k;
  pthread_mutex_lock(&c->lock);
  k = atomic_load_explicit(&c->k[row], memory_order_relaxed);
  if (!k) {
    k = bxr_kernel_src_prepare(dev, idx.rows[row]);
    if (k) atomic_store_explicit(&c->k[row], k, memory_order_release);
  }
  pthread_mutex_unlock(&c->lock);
  if (!k) {
    char why[1024];
    snprintf(why, sizeof why, "%s", bext_last_error());
    bxr_error("%s: stdlib kernel `%s`: %s", dev->name, inst, why);
  }
  return k;
}

uint32_t cube_stdlib_count(void) {
  pthread_once(&idx.once, build_index);
  return idx.n;
}

const bext_kernel_src *cube_stdlib_row(uint32_t i) {
  pthread_once(&idx.once, build_index);
  return i < idx.n ? idx.rows[i] : NULL;
}

bool cube_launch(struct bext_device *dev, struct bxr_kernel *k, uint32_t units, uint32_t cube_dim,
                 bext_tensor *const *bindings, const union bxl_scalar *scalars) {
  if (units == 0) return true;
  if (cube_dim == 0) return bxr_error("%s: cube_launch: cube_dim is 0", dev->name);
  const uint32_t count[3] = {units / cube_dim + (units % cube_dim != 0), 1, 1};
  const uint32_t dim[3] = {cube_dim, 1, 1};
  return dev->vt->kernel_launch(dev, k, count, dim, bindings, scalars);
}

bool cube_launch_flat(struct bext_device *dev, struct bxr_kernel *k, uint32_t units, uint32_t cube_dim,
                      bext_tensor *const *bindings, int nb, const union bxl_scalar *scalars) {
  uint32_t whole = units / cube_dim * cube_dim, rem = units - whole;
  if (whole && !cube_launch(dev, k, whole, cube_dim, bindings, scalars)) return false;
  if (!rem) return true;
  BXR_ASSERT(nb <= 8);
  bext_tensor *tail[8];
  const int64_t n = rem, one = 1;
  bool ok = true;
  for (int i = 0; i < nb; i++) {
    BXR_ASSERT(bxr_is_contiguous(bindings[i]) && bxr_numel(bindings[i]->rank, bindings[i]->shape) == units);
    tail[i] = bxr_tensor_view(bindings[i], 1, &n, &one, bindings[i]->offset + whole);
    ok &= tail[i] != NULL;
  }
  ok = ok && cube_launch(dev, k, rem, rem, tail, scalars);
  for (int i = 0; i < nb; i++) bext_release(tail[i]);
  return ok;
}

bext_tensor *cube_alloc(struct bext_device *dev, const bext_spec *spec) {
  return bxr_tensor_new(dev, spec->dtype, spec->rank, spec->shape);
}
