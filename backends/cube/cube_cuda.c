/* cube_cuda.c — the devices `cube:cuda:N` and `cube:hip:N`
 * (bxr_backend_cube_cuda, bxr_backend_cube_hip): the cube host code and
 * exec table (CUBE_EXEC_TABLE) over the CUDA/HIP runtime of runtime/cuda
 * (prefix bxcu_), one file for both vendors through bxcu's vendor enum.
 * What this file adds is what a target owns: storage in device memory
 * (a caching allocator, below), movement through host copies (from_data
 * uploads, read downloads and gathers on the host), kernel_prepare = IR
 * -> CUDA C (bxcu_emit) -> PTX / a code object (bxcu_rtc_compile, cached
 * on disk with the CPU kernels' cache) -> a loaded module, and
 * kernel_launch = a launch with the bxcu ABI (bindings by value, then the
 * scalars).
 *
 * Why the driver state outlives bext_device_close: tensors hold raw
 * device addresses in their storage, and a tensor may outlive a close; so
 * a close unloads the kernels (as a new process would) and keeps the
 * driver handle and the memory, one state per device for the process,
 * like the device objects themselves (cube_vulkan.c does the same).
 *
 * Built into every libbext: NVRTC, hiprtc and the drivers are dlopen'd,
 * so a machine without them builds and runs, and these devices say why
 * they are unavailable ("no CUDA driver (libcuda.so.1: ...)").  Not yet
 * run on a GPU: tools/gpu-check runs them where one is lent. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bxcu.h"
#include "cube.h"

/* The allocator's size classes: 2^8 .. 2^(CLASSES-1) bytes.  The policy
 * is bxvk_mem.c's (round up to a power of two, keep freed blocks on their
 * class's list, never give memory back while the process runs: device
 * allocations are slow and synchronize), written again here because
 * Vulkan's lists live inside its VkBuffer records; 20 lines of policy
 * did not seem worth a generic handle type. */
#define CCU_CLASSES 48
/* Bindings and scalars of one kernel (the CPU launcher's bound too). */
#define CCU_MAX_BINDINGS 32
#define CCU_MAX_SCALARS 64

struct ccu_kernel {          /* what kernel_prepare returns */
  struct bxcu_module *mod;
  uint64_t key;              /* the IR's hash: a second prepare finds it */
  uint32_t nbind, nscalar;
  bext_dtype dt[CCU_MAX_BINDINGS];
  char name[64];
  struct ccu_kernel *next;   /* the state's list, unloaded at close */
};

struct ccu {
  struct bext_device *dev;   /* the device object it serves (never freed) */
  enum bxcu_vendor vendor;
  pthread_mutex_t lock;      /* the free lists, the kernels, rtc */
  struct bxcu_driver *drv;
  struct bxcu_rtc *rtc;      /* opened on the first prepare that compiles */
  char arch[32];             /* compute_90, gfx90a */
  char target[128];          /* the kernel cache's target text: what the
                              * code depends on besides the IR */
  struct {                   /* freed blocks of 2^c bytes */
    bxcu_ptr *p;
    size_t n, cap;
  } free_list[CCU_CLASSES];
  size_t cached;             /* bytes on the free lists */
  struct ccu_kernel *kernels;
  struct ccu *next;
};

static struct ccu *states;
static pthread_mutex_t states_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const vendor_api[] = {[BXCU_CUDA] = "CUDA", [BXCU_HIP] = "HIP"};

/* bxcu's diagnostics as the runtime's error, behind what (the device and
 * the call); always false. */
static bool cu_error(struct bext_device *dev, const char *what, const struct bxk_diags *ds) {
  /* the code and message of each (no location: none is in a source) */
  char buf[1024] = "unknown driver error";
  for (uint32_t i = 0, n = 0; i < ds->n && n < sizeof buf; i++) {
    int w = snprintf(buf + n, sizeof buf - n, "%s%s: %s", i ? "; " : "", bxk_err_code(ds->d[i].err), ds->d[i].msg);
    if (w > 0) n += (uint32_t)w;
  }
  return bxr_error("%s: %s: %s", dev->name, what, buf);
}

static struct ccu *state(struct bext_device *dev) { return *cube_target(dev); }

static enum bxcu_vendor vendor_of(const struct bext_device *dev) {
  return strcmp(dev->target, "hip") == 0 ? BXCU_HIP : BXCU_CUDA;
}

static bool ccu_open(struct bext_device *dev) {
  enum bxcu_vendor v = vendor_of(dev);
  pthread_mutex_lock(&states_lock);
  struct ccu *s = states;
  while (s && s->dev != dev) s = s->next;
  if (!s) {
    struct bxk_diags ds = {0};
    struct bxcu_driver *drv = bxcu_driver_open(v, dev->index, &ds);
    if (!drv) {
      pthread_mutex_unlock(&states_lock);
      char what[48];
      snprintf(what, sizeof what, "cannot open the %s device", vendor_api[v]);
      return cu_error(dev, what, &ds);
    }
    if (!(s = calloc(1, sizeof *s))) {
      bxcu_driver_close(drv);
      pthread_mutex_unlock(&states_lock);
      return bxr_error("%s: out of memory", dev->name);
    }
    s->dev = dev, s->vendor = v, s->drv = drv;
    pthread_mutex_init(&s->lock, NULL);
    const struct bxcu_limits *L = bxcu_driver_limits(drv);
    const char *hip_arch = getenv("BEXT_HIP_ARCH");
    if (v == BXCU_CUDA) snprintf(s->arch, sizeof s->arch, "compute_%d%d", L->cc_major, L->cc_minor);
    else snprintf(s->arch, sizeof s->arch, "%s", hip_arch && *hip_arch ? hip_arch : "gfx90a");
    s->next = states;
    states = s;
  }
  pthread_mutex_unlock(&states_lock);
  if (!cube_open(dev)) return false;
  *cube_target(dev) = s;
  /* bxcu_emit refuses bf16 (K0013: bxk_scalar.h's bf16 is not device
   * code yet); every other kernel dtype is native C on both. */
  uint32_t mask = ((1u << BEXT_DTYPE_COUNT) - 1) & ~(1u << BEXT_BF16);
  char why[200];
  snprintf(why, sizeof why, "the %s lowering has no bf16 yet (K0013), on %s", vendor_api[v],
           bxcu_driver_device_name(s->drv));
  cube_set_dtypes(dev, mask, why);
  const struct bxcu_limits *L = bxcu_driver_limits(s->drv);
  cube_set_limits(dev, L->shared, 0, bxcu_driver_device_name(s->drv));
  /* the autotuner's key: decisions are per GPU model and driver */
  char identity[200];
  snprintf(identity, sizeof identity, "%s %s cc %d.%d driver %d", vendor_api[v], bxcu_driver_device_name(s->drv),
           L->cc_major, L->cc_minor, bxcu_driver_version(s->drv));
  cube_set_identity(dev, identity);
  return true;
}

static void ccu_close(struct bext_device *dev) {
  struct ccu *s = state(dev);
  if (s) {   /* the cube ctx's kernel pointers die with it */
    pthread_mutex_lock(&s->lock);
    for (struct ccu_kernel *k = s->kernels, *n; k; k = n) {
      n = k->next;
      bxcu_module_unload(s->drv, k->mod);
      free(k);
    }
    s->kernels = NULL;
    pthread_mutex_unlock(&s->lock);
  }
  cube_close(dev);
}

/* bext_device_available: the driver and device N exist (opening it says
 * why not: no driver, only the toolkit's stub, no device N). */
static bool ccu_probe(struct bext_device *dev) { return bxr_device_use(dev, "bext_device_available"); }

static bool ccu_sync(struct bext_device *dev) {
  struct bxk_diags ds = {0};
  return bxcu_sync(state(dev)->drv, &ds) || cu_error(dev, "sync", &ds);
}

static void ccu_memory(struct bext_device *dev, bext_memory *st) {
  struct ccu *s = state(dev);
  if (!s) return;
  pthread_mutex_lock(&s->lock);
  st->cached_bytes = s->cached;
  pthread_mutex_unlock(&s->lock);
}

/* ---------------------------------------------------------------- storage */

static int size_class(size_t bytes) {
  int c = 8;
  while (c < CCU_CLASSES && ((size_t)1 << c) < bytes) c++;
  return c;
}

/* The state of a storage's device: a storage may be freed after its
 * device closed, so found through the list, not the cube ctx. */
static struct ccu *state_of(const struct bext_device *dev) {
  pthread_mutex_lock(&states_lock);
  struct ccu *s = states;
  while (s && s->dev != dev) s = s->next;
  pthread_mutex_unlock(&states_lock);
  BXR_ASSERT(s);
  return s;
}

static bool ccu_storage_alloc(struct bxr_storage *st, size_t bytes) {
  struct ccu *s = state(st->device);
  st->data = NULL;   /* device memory: nothing on the host to point at */
  st->priv = NULL;
  int c = size_class(bytes);
  if (c >= CCU_CLASSES)
    return bxr_error("%s: a tensor of %zu bytes is larger than the allocator's largest class", st->device->name,
                     bytes);
  bxcu_ptr p = 0;
  pthread_mutex_lock(&s->lock);
  if (s->free_list[c].n) {
    p = s->free_list[c].p[--s->free_list[c].n];
    s->cached -= (size_t)1 << c;
  }
  pthread_mutex_unlock(&s->lock);
  if (!p) {
    struct bxk_diags ds = {0};
    if (!bxcu_mem_alloc(s->drv, (size_t)1 << c, &p, &ds)) return cu_error(st->device, "allocating a tensor", &ds);
  }
  st->priv = (void *)(uintptr_t)p;
  return true;
}

static void ccu_storage_free(struct bxr_storage *st) {
  bxcu_ptr p = (bxcu_ptr)(uintptr_t)st->priv;
  if (!p) return;
  struct ccu *s = state_of(st->device);
  int c = size_class(st->bytes);
  pthread_mutex_lock(&s->lock);
  bool kept = false;
  if (s->free_list[c].n == s->free_list[c].cap) {
    size_t cap = s->free_list[c].cap ? 2 * s->free_list[c].cap : 16;
    bxcu_ptr *np = realloc(s->free_list[c].p, cap * sizeof *np);
    if (np) s->free_list[c].p = np, s->free_list[c].cap = cap;
  }
  if (s->free_list[c].n < s->free_list[c].cap) {
    s->free_list[c].p[s->free_list[c].n++] = p;
    s->cached += (size_t)1 << c;
    kept = true;
  }
  pthread_mutex_unlock(&s->lock);
  if (!kept) {   /* no room on the list: give it back to the driver */
    struct bxk_diags ds = {0};
    bxcu_mem_free(s->drv, p, &ds);
  }
}

static bxcu_ptr dptr(const bext_tensor *t) {
  return (bxcu_ptr)(uintptr_t)t->storage->priv + (bxcu_ptr)t->offset * bext_dtype_size(t->dtype);
}

static bext_tensor *ccu_from_data(struct bext_device *dev, bext_dtype dt, int rank, const int64_t *shape,
                                  const void *src) {
  bext_tensor *t = bxr_tensor_new(dev, dt, rank, shape);
  if (!t) return NULL;
  size_t bytes = (size_t)bxr_numel(rank, shape) * bext_dtype_size(dt);
  struct bxk_diags ds = {0};
  if (!bxcu_mem_upload(state(dev)->drv, dptr(t), src, bytes, &ds)) {
    cu_error(dev, "uploading a tensor", &ds);
    bext_release(t);
    return NULL;
  }
  return t;
}

/* t's span from its first element (after the queued launches: the null
 * stream orders the copy behind them); cube_read_view gathers the view. */
static bool ccu_download(const bext_tensor *t, void *host, size_t bytes, struct bxk_diags *ds) {
  return bxcu_mem_download(state(t->device)->drv, host, dptr(t), bytes, ds);
}

static bool ccu_read(const bext_tensor *t, void *dst) {
  struct bxk_diags ds = {0};
  int r = cube_read_view(t, dst, false, ccu_download, &ds);
  return r > 0 || (r < 0 && cu_error(t->device, "reading a tensor", &ds));
}

/* ---------------------------------------------------------------- kernels */

/* The PTX / code object of ir: from the disk cache, else compiled (and
 * stored).  malloc'd; NULL + error.  Called under s->lock (s->rtc). */
static void *compile(struct ccu *s, const struct bxk_kernel *ir, uint64_t key) {
  struct bext_device *dev = s->dev;
  const void *blob;
  size_t len;
  void *tok;
  int got = bxr_kcache_load_blob(key, s->target, &blob, &len, &tok);
  if (got == 1) {
    /* PTX is stored with its NUL: an entry without one is damaged */
    void *img = len && (s->vendor == BXCU_HIP || ((const char *)blob)[len - 1] == 0) ? malloc(len) : NULL;
    if (img) memcpy(img, blob, len);
    bxr_kcache_release_blob(tok);
    if (img) return img;
  }
  struct bxk_diags ds = {0};
  if (!s->rtc && !(s->rtc = bxcu_rtc_open(s->vendor, &ds))) {
    cu_error(dev, "kernel_prepare", &ds);
    return NULL;
  }
  char *src = bxcu_emit(ir, true, &ds);
  if (!src) {
    cu_error(dev, "kernel_prepare", &ds);
    return NULL;
  }
  size_t size = 0;
  void *code = bxcu_rtc_compile(s->rtc, src, ir->name, s->arch, &size, NULL, &ds);
  free(src);
  if (!code) {
    cu_error(dev, "kernel_prepare", &ds);
    return NULL;
  }
  bxr_kcache_store(key, s->target, code, s->vendor == BXCU_CUDA ? size + 1 : size);
  return code;
}

/* A kernel prepared before with this key (equal keys: equal IR, name
 * included), or NULL.  Under s->lock. */
static struct ccu_kernel *find_kernel(struct ccu *s, uint64_t key) {
  for (struct ccu_kernel *k = s->kernels; k; k = k->next)
    if (k->key == key) return k;
  return NULL;
}

/* Every launch of a `.bext` kernel and every Fusion plan prepares again
 * (kernel_api.c, fusion_kernel.c): the device answers from memory, as the
 * CPU and Vulkan devices do, instead of loading one more module. */
static struct bxr_kernel *ccu_prepare(struct bext_device *dev, const struct bxk_kernel *ir, uint64_t key) {
  struct ccu *s = state(dev);
  pthread_mutex_lock(&s->lock);
  struct ccu_kernel *seen = find_kernel(s, key);
  pthread_mutex_unlock(&s->lock);
  if (seen) return (struct bxr_kernel *)seen;
  struct ccu_kernel *k = calloc(1, sizeof *k);
  if (!k) {
    bxr_error("%s: kernel_prepare(%s): out of memory", dev->name, ir->name);
    return NULL;
  }
  if (ir->nbind > CCU_MAX_BINDINGS || ir->nscalar > CCU_MAX_SCALARS) {
    free(k);
    bxr_error("%s: kernel_prepare(%s): %u bindings and %u scalars (at most %d and %d)", dev->name, ir->name,
              ir->nbind, ir->nscalar, CCU_MAX_BINDINGS, CCU_MAX_SCALARS);
    return NULL;
  }
  snprintf(k->name, sizeof k->name, "%s", ir->name);
  k->key = key, k->nbind = ir->nbind, k->nscalar = ir->nscalar;
  for (uint32_t j = 0; j < ir->nbind; j++) k->dt[j] = bxr_kernel_dtype(ir->bind[j].elem);
  pthread_mutex_lock(&s->lock);
  if (!s->target[0]) {   /* the compiler's version is part of what the code depends on: opened here */
    struct bxk_diags ds = {0};
    if (!s->rtc && !(s->rtc = bxcu_rtc_open(s->vendor, &ds))) {
      pthread_mutex_unlock(&s->lock);
      free(k);
      cu_error(dev, "kernel_prepare", &ds);
      return NULL;
    }
    uint64_t h = bxk_hash64((const uint8_t *)bxcu_scalar_src, strlen(bxcu_scalar_src));
    snprintf(s->target, sizeof s->target, "%s %s emit%d scalar %016" PRIx64 " rtc %d",
             s->vendor == BXCU_CUDA ? "cuda ptx" : "hip code-object", s->arch, BXCU_EMIT_VERSION, h,
             bxcu_rtc_version(s->rtc));
  }
  if ((seen = find_kernel(s, key)) != NULL) {   /* another thread was first */
    pthread_mutex_unlock(&s->lock);
    free(k);
    return (struct bxr_kernel *)seen;
  }
  void *code = compile(s, ir, key);
  struct bxk_diags ds = {0};
  if (code && !(k->mod = bxcu_module_load(s->drv, code, ir->name, &ds))) cu_error(dev, "kernel_prepare", &ds);
  free(code);
  if (k->mod) {
    k->next = s->kernels;
    s->kernels = k;
  }
  pthread_mutex_unlock(&s->lock);
  if (!k->mod) {
    free(k);
    return NULL;
  }
  return (struct bxr_kernel *)k;
}

/* A tensor as a binding: its address at the view's first element and its
 * view in elements (u32, as the kernels index). */
static bool arg_of(struct bext_device *dev, const struct ccu_kernel *k, uint32_t j, const bext_tensor *t,
                   struct bxl_binding *a) {
  if (!t) return bxr_error("%s: kernel_launch(%s): binding b%u is NULL", dev->name, k->name, j);
  if (t->device != dev)
    return bxr_error("%s: kernel_launch(%s): binding b%u is on %s", dev->name, k->name, j, t->device->name);
  if (t->dtype != k->dt[j])
    return bxr_error("%s: kernel_launch(%s): binding b%u expects %s, found %s", dev->name, k->name, j,
                     bext_dtype_name(k->dt[j]), bext_dtype_name(t->dtype));
  memset(a, 0, sizeof *a);
  a->data = (void *)(uintptr_t)dptr(t);
  a->rank = (uint32_t)t->rank;
  uint64_t len = 1, reach = 0;
  for (int d = 0; d < t->rank; d++) {
    if (t->strides[d] < 0)
      return bxr_error("%s: kernel_launch(%s): binding b%u has stride %lld on axis %d (kernels index with u32)",
                       dev->name, k->name, j, (long long)t->strides[d], d);
    a->shape[d] = (uint32_t)t->shape[d];
    a->stride[d] = (uint32_t)t->strides[d];
    len *= (uint64_t)t->shape[d];
    if (t->shape[d] > 0) reach += (uint64_t)(t->shape[d] - 1) * (uint64_t)t->strides[d];
    if (len > UINT32_MAX || reach > UINT32_MAX)
      return bxr_error("%s: kernel_launch(%s): binding b%u does not fit u32 indexing", dev->name, k->name, j);
  }
  a->len = (uint32_t)len;
  return true;
}

static bool ccu_launch(struct bext_device *dev, struct bxr_kernel *kk, const uint32_t cube_count[3],
                       const uint32_t cube_dim[3], bext_tensor *const *bindings, const union bxl_scalar *scalars) {
  struct ccu_kernel *k = (struct ccu_kernel *)kk;
  struct ccu *s = state(dev);
  if (!k) return bxr_error("%s: kernel_launch: the kernel is NULL", dev->name);
  if (k->nbind && !bindings) return bxr_error("%s: kernel_launch(%s): bindings is NULL", dev->name, k->name);
  if (k->nscalar && !scalars) return bxr_error("%s: kernel_launch(%s): scalars is NULL", dev->name, k->name);
  const struct bxcu_limits *L = bxcu_driver_limits(s->drv);
  uint64_t units = 1;
  for (int a = 0; a < 3; a++) {
    units *= cube_dim[a];
    if (!cube_count[a] || !cube_dim[a] || cube_count[a] > L->grid[a] || cube_dim[a] > L->block[a])
      return bxr_error("%s: kernel_launch(%s): cube_count %u and cube_dim %u on axis %c (this device: 1..%u and "
                       "1..%u)", dev->name, k->name, cube_count[a], cube_dim[a], "xyz"[a], L->grid[a], L->block[a]);
  }
  if (units > L->threads)
    return bxr_error("%s: kernel_launch(%s): cube_dim [%u,%u,%u] has %" PRIu64 " units (this device: at most %u)",
                     dev->name, k->name, cube_dim[0], cube_dim[1], cube_dim[2], units, L->threads);
  struct bxl_binding args[CCU_MAX_BINDINGS];
  void *params[CCU_MAX_BINDINGS + CCU_MAX_SCALARS];
  for (uint32_t j = 0; j < k->nbind; j++) {
    if (!arg_of(dev, k, j, bindings[j], &args[j])) return false;
    params[j] = &args[j];
  }
  /* a scalar's C type sits at offset 0 of its slot (bxl.h), which is
   * where the driver reads the parameter's bytes */
  for (uint32_t j = 0; j < k->nscalar; j++) params[k->nbind + j] = (void *)&scalars[j];
  struct bxk_diags ds = {0};
  return bxcu_launch(s->drv, k->mod, cube_count, cube_dim, params, &ds) || cu_error(dev, "kernel_launch", &ds);
}

#define CCU_VTABLE(tgt)                                                        \
  {                                                                            \
    .api_version = BXR_BACKEND_API_VERSION,                                    \
    .name = "cube",                                                            \
    .kind = BEXT_BACKEND_CUBE,                                                 \
    .target = tgt,                                                             \
    .open = ccu_open,                                                          \
    .close = ccu_close,                                                        \
    .probe = ccu_probe,                                                        \
    .sync = ccu_sync,                                                          \
    .memory = ccu_memory,                                                      \
    .storage_alloc = ccu_storage_alloc,                                        \
    .storage_free = ccu_storage_free,                                          \
    .inline_small = false, /* device memory */                                 \
    .host_memory = false,                                                      \
    .from_data = ccu_from_data,                                                \
    .read = ccu_read,                                                          \
    .copy = cube_copy,                                                         \
    .kernel_prepare = ccu_prepare,                                             \
    .kernel_launch = ccu_launch,                                               \
    .exec = CUBE_EXEC_TABLE,                                                   \
  }

/* One vtable per target (the registry picks by the spec's target); the
 * open tells the vendors apart by dev->target. */
const struct bxr_backend bxr_backend_cube_cuda = CCU_VTABLE("cuda");
const struct bxr_backend bxr_backend_cube_hip = CCU_VTABLE("hip");
