/* cube_backend.c — the Cube backend's definition object for cube:cpu
 * (bxr_backend_cube): host-memory storage through the runtime's helpers
 * (like NdArray), kernels through the runtime's CPU JIT, and the exec
 * table every cube target shares (CUBE_EXEC_TABLE, cube.h): one exec
 * entry per row of the op table, each a launch of stdlib kernels through
 * the device's kernel_prepare / kernel_launch.  cube:vulkan:N's vtable is
 * cube_vulkan.c. */
#include <string.h>

#include "cube.h"

/* The other targets have vtables of their own (cube_vulkan.c); the
 * registry gives this one to cube:cpu alone (.target). */
static bool cube_device_open(struct bext_device *dev) { return cube_open(dev); }

static void cube_device_close(struct bext_device *dev) {
  cube_close(dev);
  bxr_host_cache_trim();
}

static void cube_memory(struct bext_device *dev, bext_memory *st) { st->cached_bytes = bxr_host_cache_bytes(); }

/* Every cube target's copy member: the cast kernel; on host memory a
 * dtype without kernels moves as bytes. */
bool cube_copy(bext_tensor *dst, const bext_tensor *src) {
  if (dst->device->vt->host_memory && !cube_dtype_ok(dst->device, src->dtype)) return bxr_host_copy(dst, src);
  return cube_copy_into(dst->device, dst, src, 0);
}

const struct bxr_backend bxr_backend_cube = {
  .api_version = BXR_BACKEND_API_VERSION,
  .name = "cube",
  .kind = BEXT_BACKEND_CUBE,
  .target = "cpu",
  .open = cube_device_open,
  .close = cube_device_close,
  .memory = cube_memory,
  .storage_alloc = bxr_cached_storage_alloc,   /* the large-buffer cache Flex uses */
  .storage_free = bxr_cached_storage_free,
  .inline_small = true,
  .host_memory = true,
  .from_data = bxr_host_from_data,
  .read = bxr_host_read,
  .copy = cube_copy,
  /* cube:cpu: the runtime's CPU JIT (kernel_cpu.c) */
  .kernel_prepare = bxr_kernel_cpu_prepare,
  .kernel_launch = bxr_kernel_cpu_launch,
  .exec = CUBE_EXEC_TABLE,
};
