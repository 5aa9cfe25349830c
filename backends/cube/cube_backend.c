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
int cube_read_view(const bext_tensor *t, void *dst, bool from_storage, cube_download_fn dl, struct bxk_diags *ds) {
  int64_t n = bxr_numel(t->rank, t->shape);
  if (n == 0) return 1;
  size_t es = bext_dtype_size(t->dtype);
  int64_t first = from_storage ? t->offset : 0, far = first;
  for (int d = 0; d < t->rank; d++) {
    if (t->strides[d] < 0) return bxr_error("%s: reading a view with a negative stride", t->device->name);
    far += (t->shape[d] - 1) * t->strides[d];
  }
  size_t bytes = (size_t)(far + 1) * es;
  bool contig = bxr_is_contiguous(t) && first == 0;
  char *tmp = contig ? dst : bxr_alloc(bytes);
  if (!tmp) return bxr_error("%s: out of memory reading %zu bytes", t->device->name, bytes);
  bool ok = dl(t, tmp, bytes, ds);
  if (ok && !contig) {
    struct bxr_iter it;
    bxr_iter_init(&it, t->rank, t->shape, 1, t->strides);
    const char *base = tmp + (size_t)first * es;
    for (int64_t i = 0; i < n; i++, bxr_iter_next(&it)) memcpy((char *)dst + (size_t)i * es, base + it.off[0] * (int64_t)es, es);
  }
  if (!contig) bxr_free(tmp, bytes);
  return ok ? 1 : -1;
}

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
