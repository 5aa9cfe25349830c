/* bxvk_vk.c — Vulkan loaded with dlopen, an instance without layers, and
 * device N (cube:vulkan:N) opened with one compute queue and every
 * feature of BXVK_NEEDS it has.  No link-time dependency on Vulkan: a
 * machine without the loader gets "backend unavailable: no Vulkan loader
 * (...)" from bxvk_open and everything else of bext works. */
#define _GNU_SOURCE   /* dl_iterate_phdr */
#include <dlfcn.h>
#include <inttypes.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bxvk_vk.h"

static const struct bxk_loc noloc;

bool bxvk_err(struct bxk_diags *ds, const char *fmt, ...) {
  char msg[190];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  bxk_diag_add(ds, BXK_E_VULKAN, noloc, 0, "%s", msg);
  return false;
}

const char *bxvk_result(VkResult r) {
  switch (r) {
  case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
  case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
  case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
  case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
  case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
  case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
  case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
  case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
  case VK_ERROR_INVALID_SHADER_NV: return "VK_ERROR_INVALID_SHADER_NV";
  case VK_TIMEOUT: return "VK_TIMEOUT";
  default: {
    static _Thread_local char buf[32];
    snprintf(buf, sizeof buf, "VkResult %d", (int)r);
    return buf;
  }
  }
}

static struct bxvk_dev *fail(struct bxvk_dev *d, struct bxk_diags *ds, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static struct bxvk_dev *fail(struct bxvk_dev *d, struct bxk_diags *ds, const char *fmt, ...) {
  char msg[180];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  bxvk_err(ds, "backend unavailable: %s", msg);
  bxvk_close(d);
  return NULL;
}

/* Which of BXVK_NEEDS the physical device has; the chain in f2 is filled
 * with exactly those, ready to enable. */
struct feats {
  VkPhysicalDeviceFeatures2 f2;
  VkPhysicalDeviceVulkan11Features v11;
  VkPhysicalDeviceVulkan12Features v12;
};

static unsigned query_features(struct bxvk_dev *d, struct feats *f) {
  memset(f, 0, sizeof *f);
  f->f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  f->v11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  f->v12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  bool v12 = d->props.apiVersion >= VK_API_VERSION_1_2;
  if (v12) {
    f->f2.pNext = &f->v11;
    f->v11.pNext = &f->v12;
    d->vkGetPhysicalDeviceFeatures2(d->phys, &f->f2);
  } else {
    d->vkGetPhysicalDeviceFeatures(d->phys, &f->f2.features);
  }
  unsigned have = 0;
  if (f->f2.features.shaderInt64) have |= BXVK_NEED(INT64);
  if (f->f2.features.shaderFloat64) have |= BXVK_NEED(FLOAT64);
  if (v12 && f->v12.shaderInt8) have |= BXVK_NEED(INT8);
  if (v12 && f->v12.storageBuffer8BitAccess) have |= BXVK_NEED(STORAGE8);
  if (v12 && f->v12.shaderFloat16) have |= BXVK_NEED(FLOAT16);
  if (v12 && f->v11.storageBuffer16BitAccess) have |= BXVK_NEED(STORAGE16);
  /* enable those, nothing else */
  VkPhysicalDeviceFeatures2 keep = f->f2;
  memset(&f->f2.features, 0, sizeof f->f2.features);
  f->f2.features.shaderInt64 = keep.features.shaderInt64;
  f->f2.features.shaderFloat64 = keep.features.shaderFloat64;
  VkPhysicalDeviceVulkan11Features k11 = f->v11;
  VkPhysicalDeviceVulkan12Features k12 = f->v12;
  memset(&f->v11, 0, sizeof f->v11);
  memset(&f->v12, 0, sizeof f->v12);
  f->v11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  f->v12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  f->v11.pNext = &f->v12;
  f->v11.storageBuffer16BitAccess = k11.storageBuffer16BitAccess;
  f->v12.shaderInt8 = k12.shaderInt8;
  f->v12.storageBuffer8BitAccess = k12.storageBuffer8BitAccess;
  f->v12.shaderFloat16 = k12.shaderFloat16;
  f->f2.pNext = v12 ? &f->v11 : NULL;
  return have;
}

/* The drivers an instance loads stay loaded for the process, as the
 * loader itself does (NODELETE above).  The Vulkan loader dlcloses its
 * ICDs at vkDestroyInstance; lavapipe then unmaps with it libLLVM, whose
 * globals still point at heap blocks, which LeakSanitizer (make test's
 * sanitizer build) reports as leaks from an "<unknown module>", and the
 * next device open pays the driver's and LLVM's load again.  So: the
 * objects mapped before the first instance are recorded, and those that
 * appear with it are opened again with RTLD_NOLOAD | RTLD_NODELETE. */
enum { BXVK_MAX_OBJS = 1024 };
struct bxvk_objs {
  uintptr_t base[BXVK_MAX_OBJS];
  int n;
  char *fresh[64];
  int nfresh;
};
static int objs_record(struct dl_phdr_info *info, size_t size, void *p) {
  (void)size;
  struct bxvk_objs *o = p;
  if (o->n < BXVK_MAX_OBJS) o->base[o->n++] = (uintptr_t)info->dlpi_addr;
  return 0;
}
static int objs_fresh(struct dl_phdr_info *info, size_t size, void *p) {
  (void)size;
  struct bxvk_objs *o = p;
  if (!info->dlpi_name || !info->dlpi_name[0] || o->nfresh == 64) return 0;
  for (int k = 0; k < o->n; k++)
    if (o->base[k] == (uintptr_t)info->dlpi_addr) return 0;
  o->fresh[o->nfresh] = strdup(info->dlpi_name);   /* dlopen after the walk: it holds the loader's lock */
  if (o->fresh[o->nfresh]) o->nfresh++;
  return 0;
}
static void pin_drivers(struct bxvk_objs *before) {
  dl_iterate_phdr(objs_fresh, before);
  for (int k = 0; k < before->nfresh; k++) {
    (void)dlopen(before->fresh[k], RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);   /* kept: never closed */
    free(before->fresh[k]);
  }
}

struct bxvk_dev *bxvk_open_at(const char *lib, int index, const struct bxvk_disk *disk, struct bxk_diags *ds) {
  struct bxvk_dev *d = calloc(1, sizeof *d);
  if (!d) {
    bxvk_err(ds, "out of memory opening Vulkan");
    return NULL;
  }
  d->index = index;
  if (disk && disk->load && disk->release && disk->store) d->disk = *disk, d->has_disk = true;
  /* NODELETE: drivers keep threads and state for the process */
  d->lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!d->lib) {
    const char *e = dlerror();
    return fail(d, ds, "no Vulkan loader (%.60s: %.100s)", lib, e ? e : "dlopen failed");
  }
  *(void **)&d->gipa = dlsym(d->lib, "vkGetInstanceProcAddr");
  if (!d->gipa) return fail(d, ds, "no Vulkan loader (%.60s: no vkGetInstanceProcAddr)", lib);
  PFN_vkCreateInstance create = (PFN_vkCreateInstance)d->gipa(NULL, "vkCreateInstance");
  PFN_vkEnumerateInstanceVersion version =
      (PFN_vkEnumerateInstanceVersion)d->gipa(NULL, "vkEnumerateInstanceVersion");
  uint32_t iv = VK_API_VERSION_1_0;
  if (version) version(&iv);
  if (!create || iv < VK_API_VERSION_1_1)
    return fail(d, ds, "the Vulkan loader %.60s is older than Vulkan 1.1", lib);
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "bext",
                           .pEngineName = "bext", .apiVersion = iv >= VK_API_VERSION_1_2 ? VK_API_VERSION_1_2
                                                                                          : VK_API_VERSION_1_1};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
  static struct bxvk_objs before;   /* (8 KiB: not on a caller's stack) */
  static pthread_mutex_t pin_lock = PTHREAD_MUTEX_INITIALIZER;
  static bool pinned;
  pthread_mutex_lock(&pin_lock);
  if (!pinned) before.n = 0, before.nfresh = 0, dl_iterate_phdr(objs_record, &before);
  VkResult r = create(&ici, NULL, &d->inst);
  if (r == VK_SUCCESS && !pinned) pin_drivers(&before), pinned = true;
  pthread_mutex_unlock(&pin_lock);
  if (r != VK_SUCCESS) return fail(d, ds, "vkCreateInstance: %s", bxvk_result(r));
#define BXVK_X_(f)                                                   \
  d->f = (PFN_##f)d->gipa(d->inst, #f);                             \
  if (!d->f) return fail(d, ds, "the Vulkan loader has no %s", #f);
  BXVK_INSTANCE_FNS(BXVK_X_)
#undef BXVK_X_
  uint32_t n = 0;
  VkPhysicalDevice phys[16];
  r = d->vkEnumeratePhysicalDevices(d->inst, &n, NULL);
  if (r != VK_SUCCESS) return fail(d, ds, "vkEnumeratePhysicalDevices: %s", bxvk_result(r));
  d->ndev = (int)n;
  if (index < 0 || (uint32_t)index >= n) return fail(d, ds, "no Vulkan device %d (the loader sees %u)", index, n);
  if (n > 16) n = 16;
  r = d->vkEnumeratePhysicalDevices(d->inst, &n, phys);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) return fail(d, ds, "vkEnumeratePhysicalDevices: %s", bxvk_result(r));
  d->phys = phys[index];
  d->vkGetPhysicalDeviceProperties(d->phys, &d->props);
  d->vkGetPhysicalDeviceMemoryProperties(d->phys, &d->memp);
  if (d->props.apiVersion < VK_API_VERSION_1_1)
    return fail(d, ds, "Vulkan device %d (%s) is older than Vulkan 1.1", index, d->props.deviceName);
  uint32_t nq = 0;
  VkQueueFamilyProperties qf[16];
  d->vkGetPhysicalDeviceQueueFamilyProperties(d->phys, &nq, NULL);
  if (nq > 16) nq = 16;
  d->vkGetPhysicalDeviceQueueFamilyProperties(d->phys, &nq, qf);
  d->qfam = UINT32_MAX;
  for (uint32_t q = 0; q < nq && d->qfam == UINT32_MAX; q++)
    if (qf[q].queueFlags & VK_QUEUE_COMPUTE_BIT) d->qfam = q;
  if (d->qfam == UINT32_MAX) return fail(d, ds, "Vulkan device %d (%s) has no compute queue", index, d->props.deviceName);
  bool stamps = qf[d->qfam].timestampValidBits > 0 && d->props.limits.timestampPeriod > 0;

  struct feats f;
  d->features = query_features(d, &f);
  float prio = 1;
  VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = d->qfam,
                                 .queueCount = 1, .pQueuePriorities = &prio};
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1,
                            .pQueueCreateInfos = &qci};
  if (f.f2.pNext) dci.pNext = &f.f2;
  else dci.pEnabledFeatures = &f.f2.features;
  r = d->vkCreateDevice(d->phys, &dci, NULL, &d->dev);
  if (r != VK_SUCCESS) return fail(d, ds, "vkCreateDevice (%s): %s", d->props.deviceName, bxvk_result(r));
#define BXVK_X_(f)                                                     \
  d->f = (PFN_##f)d->vkGetDeviceProcAddr(d->dev, #f);               \
  if (!d->f) return fail(d, ds, "Vulkan device %d has no %s", index, #f);
  BXVK_DEVICE_FNS(BXVK_X_)
#undef BXVK_X_
  d->vkGetDeviceQueue(d->dev, d->qfam, 0, &d->queue);

  /* what a pipeline cache entry was made for: this emitter, this device
   * and driver (pipelineCacheUUID changes with the driver build) */
  int w = snprintf(d->target, sizeof d->target, "vulkan spirv%u %s %04x:%04x driver %u cache ", BXVK_EMIT_VERSION,
                   d->props.deviceName, d->props.vendorID, d->props.deviceID, d->props.driverVersion);
  for (unsigned j = 0; j < VK_UUID_SIZE && w > 0 && (size_t)w + 3 < sizeof d->target; j++)
    w += snprintf(d->target + w, sizeof d->target - (size_t)w, "%02x", d->props.pipelineCacheUUID[j]);

  VkCommandPoolCreateInfo cpi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                 .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                 .queueFamilyIndex = d->qfam};
  VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                     .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
  VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, BXVK_BATCH_SETS * 33};
  VkDescriptorPoolCreateInfo dpi = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                    .maxSets = BXVK_BATCH_SETS, .poolSizeCount = 1, .pPoolSizes = &ps};
  if ((r = d->vkCreateCommandPool(d->dev, &cpi, NULL, &d->cpool)) != VK_SUCCESS ||
      (cai.commandPool = d->cpool, (r = d->vkAllocateCommandBuffers(d->dev, &cai, &d->cmd)) != VK_SUCCESS) ||
      (r = d->vkCreateFence(d->dev, &fci, NULL, &d->fence)) != VK_SUCCESS ||
      (r = d->vkCreateDescriptorPool(d->dev, &dpi, NULL, &d->dpool)) != VK_SUCCESS)
    return fail(d, ds, "Vulkan device %d: setting up its queue: %s", index, bxvk_result(r));
  if (stamps) {
    VkQueryPoolCreateInfo qpi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                 .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = 2};
    if (d->vkCreateQueryPool(d->dev, &qpi, NULL, &d->qpool) != VK_SUCCESS) d->qpool = VK_NULL_HANDLE;
  }
  d->meta = bxvk_buf_raw(d, BXVK_META_RING, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                         ds);
  if (!d->meta) {
    bxvk_close(d);
    return NULL;
  }
  return d;
}

struct bxvk_dev *bxvk_open(int index, const struct bxvk_disk *disk, struct bxk_diags *ds) {
  const char *env = getenv("BEXT_VULKAN_LIB");
  return bxvk_open_at(env && *env ? env : "libvulkan.so.1", index, disk, ds);
}

void bxvk_close(struct bxvk_dev *d) {
  if (!d) return;
  if (d->dev) {
    if (d->recording) {
      struct bxk_diags ds = {0};
      bxvk_batch_submit(d, &ds);
    }
    d->vkDeviceWaitIdle(d->dev);
    bxvk_kernels_release(d);
    bxvk_bufs_release(d);
    if (d->meta) bxvk_buf_destroy(d, d->meta);
    if (d->qpool) d->vkDestroyQueryPool(d->dev, d->qpool, NULL);
    if (d->dpool) d->vkDestroyDescriptorPool(d->dev, d->dpool, NULL);
    if (d->fence) d->vkDestroyFence(d->dev, d->fence, NULL);
    if (d->cpool) d->vkDestroyCommandPool(d->dev, d->cpool, NULL);
    d->vkDestroyDevice(d->dev, NULL);
  }
  if (d->inst && d->vkDestroyInstance) d->vkDestroyInstance(d->inst, NULL);
  free(d);
}

const char *bxvk_device_name(const struct bxvk_dev *d) { return d->props.deviceName; }
int bxvk_device_count(const struct bxvk_dev *d) { return d->ndev; }
unsigned bxvk_device_features(const struct bxvk_dev *d) { return d->features; }
uint32_t bxvk_device_shared_bytes(const struct bxvk_dev *d) { return d->props.limits.maxComputeSharedMemorySize; }
void bxvk_device_mask_features(struct bxvk_dev *d, unsigned mask) { d->features &= mask; }
void bxvk_stats(const struct bxvk_dev *d, struct bxvk_stats *st) { *st = d->st; }
