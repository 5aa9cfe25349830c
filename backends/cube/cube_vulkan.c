/* cube_vulkan.c — the device `cube:vulkan:N` (bxr_backend_cube_vulkan):
 * the cube host code and exec table (CUBE_EXEC_TABLE) over the Vulkan
 * runtime of runtime/vulkan (prefix bxvk_).  What this file adds is what
 * a target owns: storage in Vulkan buffers (bxvk's caching allocator),
 * movement through its staging buffer (from_data uploads, read downloads
 * and gathers on the host), kernel_prepare = IR -> SPIR-V -> pipeline
 * (bxvk_prepare, pipelines cached on disk with the CPU kernels' cache) and
 * kernel_launch = a bxvk launch of the tensors' buffers as views.
 *
 * Why the Vulkan device outlives bext_device_close: tensors hold raw
 * bxvk buffers in their storage, and a tensor may outlive a close; so a
 * close forgets the kernels (as a new process would) and keeps the device
 * and its buffers, one per cube:vulkan:N for the process, like the device
 * objects themselves.  bxvk serves one thread at a time: every call into
 * it holds the state's mutex (after the cube ctx's, never before).
 *
 * Compiled only when the build found the Vulkan and SPIR-V headers
 * (backends/cube/backend.cmake, BEXT_HAVE_CUBE_VULKAN in config.h);
 * libvulkan itself is loaded at run time, so a machine without it builds
 * and runs, and this device says why it is unavailable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bxvk.h"
#include "cube.h"

struct cvk {
  struct bext_device *dev;   /* the device object it serves (never freed) */
  pthread_mutex_t lock;      /* one thread in bxvk at a time */
  struct bxvk_dev *vk;
  struct cvk *next;
};

/* One state per cube:vulkan:N, made on its first open (see above). */
static struct cvk *states;
static pthread_mutex_t states_lock = PTHREAD_MUTEX_INITIALIZER;

static const struct bxvk_disk disk = {
    .load = bxr_kcache_load_blob, .release = bxr_kcache_release_blob, .store = bxr_kcache_store};

/* bxvk's diagnostics as the runtime's error, behind what (the device and
 * the call); always false. */
static bool vk_error(struct bext_device *dev, const char *what, const struct bxk_diags *ds) {
  char buf[1024];
  if (!ds->n) snprintf(buf, sizeof buf, "unknown Vulkan error");
  else bxk_diags_render(ds, buf, sizeof buf);
  size_t n = strlen(buf);
  while (n && buf[n - 1] == '\n') buf[--n] = 0;
  return bxr_error("%s: %s: %s", dev->name, what, buf);
}

static struct cvk *state(struct bext_device *dev) { return *cube_target(dev); }

/* Which dtypes kernels can hold on a device with these BXVK_NEED bits
 * (the emitter's needs per IR type, bxvk_emit.c), and what is missing. */
static uint32_t dtype_mask(unsigned feat, char *why, size_t n) {
  static const struct {
    bext_dtype dt;
    unsigned need;
  } rows[] = {
      {BEXT_BOOL, BXVK_NEED(INT8) | BXVK_NEED(STORAGE8)}, {BEXT_U8, BXVK_NEED(INT8) | BXVK_NEED(STORAGE8)},
      {BEXT_I64, BXVK_NEED(INT64)}, {BEXT_F16, BXVK_NEED(FLOAT16) | BXVK_NEED(STORAGE16)},
      {BEXT_F64, BXVK_NEED(FLOAT64)}};
  uint32_t mask = (1u << BEXT_DTYPE_COUNT) - 1;
  mask &= ~(1u << BEXT_BF16);
  size_t w = (size_t)snprintf(why, n, "Vulkan has no bf16 in SPIR-V 1.3");
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    unsigned miss = rows[i].need & ~feat;
    if (!miss) continue;
    mask &= ~(1u << rows[i].dt);
    for (unsigned b = 0; b < BXVK_NEED_COUNT && w < n; b++)
      if (miss >> b & 1u)
        w += (size_t)snprintf(why + w, n - w, "; %s needs %s", bext_dtype_name(rows[i].dt), bxvk_need_name(b));
  }
  return mask;
}

/* At process exit every Vulkan device is closed: the driver frees what
 * it holds for a live VkDevice (lavapipe keeps some of it where
 * LeakSanitizer cannot see the pointers, so a device left open reads as
 * a leak of the driver's), and a storage freed later finds vk NULL and
 * has nothing left to free. */
static void close_all(void) {
  pthread_mutex_lock(&states_lock);
  for (struct cvk *s = states; s; s = s->next) {
    pthread_mutex_lock(&s->lock);
    bxvk_close(s->vk);
    s->vk = NULL;
    pthread_mutex_unlock(&s->lock);
  }
  pthread_mutex_unlock(&states_lock);
}

static bool cvk_open(struct bext_device *dev) {
  pthread_mutex_lock(&states_lock);
  if (!states) atexit(close_all);
  struct cvk *s = states;
  while (s && s->dev != dev) s = s->next;
  if (!s) {
    struct bxk_diags ds = {0};
    struct bxvk_dev *vk = bxvk_open(dev->index, &disk, &ds);
    if (!vk) {
      pthread_mutex_unlock(&states_lock);
      return vk_error(dev, "cannot open the Vulkan device", &ds);
    }
    if (!(s = calloc(1, sizeof *s))) {
      bxvk_close(vk);
      pthread_mutex_unlock(&states_lock);
      return bxr_error("%s: out of memory", dev->name);
    }
    s->dev = dev, s->vk = vk;
    pthread_mutex_init(&s->lock, NULL);
    s->next = states;
    states = s;
  }
  pthread_mutex_unlock(&states_lock);
  if (!cube_open(dev)) return false;
  *cube_target(dev) = s;
  char why[160];
  uint32_t mask = dtype_mask(bxvk_device_features(s->vk), why, sizeof why);
  char full[160 + 64];
  snprintf(full, sizeof full, "%s on %s", why, bxvk_device_name(s->vk));
  cube_set_dtypes(dev, mask, full);
  /* llvmpipe (lavapipe) ends loops early without a word: gallivm keeps
   * ONE counter per invocation (LP_MAX_TGSI_LOOP_ITERATIONS, 65535) that
   * the back edge of every loop decrements, nested or not.  Measured
   * (issue 11): nested loops of 2 x 50000 trips ran 65533 in all, 4 x
   * 25000 65531, two loops of 40000 in a row 65534; so a long loop
   * emitted as a nest of short ones gains nothing.  A long reduction line
   * would come back short, so the host splits or refuses it; the limit
   * leaves 256 trips to a kernel's other loops (its rank walks, up to 8
   * trips each: with the old limit of 65533, sum_dim and cumsum over a
   * 65533-element line of a rank-2 tensor came back short). */
  const char *name = bxvk_device_name(s->vk);
  cube_set_limits(dev, bxvk_device_shared_bytes(s->vk), strncmp(name, "llvmpipe", 8) == 0 ? 65535u - 256u : 0u,
                  name);
  cube_set_identity(dev, name);   /* the autotuner's key: decisions are per GPU */
  return true;
}

static void cvk_close(struct bext_device *dev) {
  struct cvk *s = state(dev);
  if (s) {
    pthread_mutex_lock(&s->lock);
    bxvk_forget_kernels(s->vk);   /* the cube ctx's kernel pointers die with it */
    pthread_mutex_unlock(&s->lock);
  }
  cube_close(dev);
}

/* bext_device_available: the Vulkan device N exists (opening it says
 * why not: no loader, no device N). */
static bool cvk_probe(struct bext_device *dev) { return bxr_device_use(dev, "bext_device_available"); }

static bool cvk_sync(struct bext_device *dev) {
  struct cvk *s = state(dev);
  struct bxk_diags ds = {0};
  pthread_mutex_lock(&s->lock);
  bool ok = bxvk_sync(s->vk, NULL, &ds);
  pthread_mutex_unlock(&s->lock);
  return ok || vk_error(dev, "sync", &ds);
}

/* ---------------------------------------------------------------- storage */

static bool cvk_storage_alloc(struct bxr_storage *st, size_t bytes) {
  struct cvk *s = state(st->device);
  struct bxk_diags ds = {0};
  pthread_mutex_lock(&s->lock);
  st->priv = bxvk_buf_new(s->vk, bytes, &ds);
  pthread_mutex_unlock(&s->lock);
  st->data = NULL;   /* device memory: nothing on the host to point at */
  return st->priv || vk_error(st->device, "allocating a tensor", &ds);
}

static void cvk_storage_free(struct bxr_storage *st) {
  /* a storage may be freed after its device closed: the state outlives
   * the close (file comment), found through the list */
  struct cvk *s;
  pthread_mutex_lock(&states_lock);
  for (s = states; s && s->dev != st->device; s = s->next) {
  }
  pthread_mutex_unlock(&states_lock);
  BXR_ASSERT(s);
  pthread_mutex_lock(&s->lock);
  if (s->vk) bxvk_buf_free(s->vk, st->priv);   /* NULL: closed at exit with its buffers */
  pthread_mutex_unlock(&s->lock);
}

static bext_tensor *cvk_from_data(struct bext_device *dev, bext_dtype dt, int rank, const int64_t *shape,
                                  const void *src) {
  bext_tensor *t = bxr_tensor_new(dev, dt, rank, shape);
  if (!t) return NULL;
  size_t bytes = (size_t)bxr_numel(rank, shape) * bext_dtype_size(dt);
  struct cvk *s = state(dev);
  struct bxk_diags ds = {0};
  pthread_mutex_lock(&s->lock);
  bool ok = bxvk_buf_upload(s->vk, t->storage->priv, src, bytes, &ds);
  pthread_mutex_unlock(&s->lock);
  if (!ok) {
    vk_error(dev, "uploading a tensor", &ds);
    bext_release(t);
    return NULL;
  }
  return t;
}

/* The storage's bytes up to t's farthest element (after the queued
 * launches: bxvk's download submits them); cube_read_view gathers the
 * view from them. */
static bool cvk_download(const bext_tensor *t, void *host, size_t bytes, struct bxk_diags *ds) {
  struct cvk *s = state(t->device);
  pthread_mutex_lock(&s->lock);
  bool ok = bxvk_buf_download(s->vk, t->storage->priv, host, bytes, ds);
  pthread_mutex_unlock(&s->lock);
  return ok;
}

static bool cvk_read(const bext_tensor *t, void *dst) {
  struct bxk_diags ds = {0};
  int r = cube_read_view(t, dst, true, cvk_download, &ds);
  return r > 0 || (r < 0 && vk_error(t->device, "reading a tensor", &ds));
}

/* ---------------------------------------------------------------- kernels */

static struct bxr_kernel *cvk_prepare(struct bext_device *dev, const struct bxk_kernel *ir, uint64_t key) {
  struct cvk *s = state(dev);
  struct bxk_diags ds = {0};
  pthread_mutex_lock(&s->lock);
  struct bxvk_kernel *k = bxvk_prepare(s->vk, ir, key, &ds);
  pthread_mutex_unlock(&s->lock);
  if (!k) {
    vk_error(dev, "kernel_prepare", &ds);
    return NULL;
  }
  return (struct bxr_kernel *)k;
}

/* A tensor as a binding: its buffer and its view in elements (u32, as
 * the kernels index; cube_fits_u32 checked the sizes before). */
static bool arg_of(struct bext_device *dev, uint32_t j, const bext_tensor *t, struct bxvk_arg *a) {
  if (!t) return bxr_error("%s: kernel_launch: binding b%u is NULL", dev->name, j);
  if (t->device != dev)
    return bxr_error("%s: kernel_launch: binding b%u is on %s", dev->name, j, t->device->name);
  memset(a, 0, sizeof *a);
  a->buf = t->storage->priv;
  a->offset = (uint32_t)t->offset;
  a->rank = (uint32_t)t->rank;
  uint64_t len = 1;
  for (int d = 0; d < t->rank; d++) {
    if (t->strides[d] < 0)
      return bxr_error("%s: kernel_launch: binding b%u has stride %lld on axis %d (kernels index with u32)",
                       dev->name, j, (long long)t->strides[d], d);
    a->shape[d] = (uint32_t)t->shape[d];
    a->stride[d] = (uint32_t)t->strides[d];
    len *= (uint64_t)t->shape[d];
  }
  if (len > UINT32_MAX || (uint64_t)t->offset > UINT32_MAX)
    return bxr_error("%s: kernel_launch: binding b%u does not fit u32 indexing", dev->name, j);
  a->len = (uint32_t)len;
  return true;
}

static bool cvk_launch(struct bext_device *dev, struct bxr_kernel *k, const uint32_t cube_count[3],
                       const uint32_t cube_dim[3], bext_tensor *const *bindings, const union bxl_scalar *scalars) {
  struct bxvk_arg args[16];
  uint32_t nb = bxvk_kernel_nbind((const struct bxvk_kernel *)k);
  if (nb > sizeof args / sizeof args[0])
    return bxr_error("%s: kernel_launch: %u bindings (at most %zu)", dev->name, nb, sizeof args / sizeof args[0]);
  if (nb && !bindings) return bxr_error("%s: kernel_launch: bindings is NULL", dev->name);
  for (uint32_t j = 0; j < nb; j++)
    if (!arg_of(dev, j, bindings[j], &args[j])) return false;
  struct cvk *s = state(dev);
  struct bxk_diags ds = {0};
  pthread_mutex_lock(&s->lock);
  bool ok = bxvk_launch(s->vk, (struct bxvk_kernel *)k, cube_count, cube_dim, args, scalars, &ds);
  pthread_mutex_unlock(&s->lock);
  return ok || vk_error(dev, "kernel_launch", &ds);
}

const struct bxr_backend bxr_backend_cube_vulkan = {
  .api_version = BXR_BACKEND_API_VERSION,
  .name = "cube",
  .kind = BEXT_BACKEND_CUBE,
  .target = "vulkan",
  .open = cvk_open,
  .close = cvk_close,
  .probe = cvk_probe,
  .sync = cvk_sync,
  .storage_alloc = cvk_storage_alloc,
  .storage_free = cvk_storage_free,
  .inline_small = false,     /* buffers are device memory */
  .host_memory = false,
  .from_data = cvk_from_data,
  .read = cvk_read,
  .copy = cube_copy,
  .kernel_prepare = cvk_prepare,
  .kernel_launch = cvk_launch,
  .exec = CUBE_EXEC_TABLE,
};
