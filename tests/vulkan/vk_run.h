/* vk_run.h — running kernels on the first Vulkan device for the tests:
 * the device (or a plain skip that says why there is none), and a 1-D
 * launch of host arrays through device buffers. */
#ifndef VK_RUN_H
#define VK_RUN_H

#include <criterion/criterion.h>

#include "bxl.h"
#include "vk_test.h"

/* Device 0, or the test is skipped saying so (the SPIR-V is validated by
 * test_vulkan_spirv either way). */
static inline struct bxvk_dev *vk_dev_or_skip(const struct bxvk_disk *disk) {
  struct bxk_diags ds = {0};
  struct bxvk_dev *d = bxvk_open(0, disk, &ds);
  if (!d) cr_skip_test("skipped: no Vulkan device to run on: %s", ds.n ? ds.d[0].msg : "?");
  return d;
}

static inline struct bxvk_kernel *vk_prepare(struct bxvk_dev *d, struct bxk_kernel *k) {
  struct bxk_diags ds = {0};
  size_t n = 0;
  uint8_t *ser = bxk_serialize(k, &n);
  uint64_t key = bxk_hash64(ser, n);
  free(ser);
  struct bxvk_kernel *vk = bxvk_prepare(d, k, key, &ds);
  char buf[2048];
  bxk_diags_render(&ds, buf, sizeof buf);
  cr_assert(vk, "kernel %s: prepare failed:\n%s", k->name, buf);
  return vk;
}

static inline uint32_t vk_elem_bytes(unsigned t) { return t == BXK_BOOL || t == BXK_U8 ? 1 : bxk_type_bits(t) / 8; }

/* Runs k over n units in 1-D cubes of dim: host[j] holds len[j] elements
 * of binding j's type; every binding is uploaded, and read back after. */
static inline void vk_run1d(struct bxvk_dev *d, struct bxvk_kernel *vk, const struct bxk_kernel *k, void **host,
                            const uint32_t *len, uint32_t n, uint32_t dim, const union bxl_scalar *s) {
  struct bxk_diags ds = {0};
  struct bxvk_arg args[64];
  memset(args, 0, sizeof args);
  for (uint32_t j = 0; j < k->nbind; j++) {
    size_t bytes = (size_t)len[j] * vk_elem_bytes(k->bind[j].elem);
    args[j].buf = bxvk_buf_new(d, bytes, &ds);
    cr_assert(args[j].buf, "%s", ds.n ? ds.d[0].msg : "?");
    cr_assert(bxvk_buf_upload(d, args[j].buf, host[j], bytes, &ds), "%s", ds.d[0].msg);
    args[j].len = len[j], args[j].rank = 1, args[j].shape[0] = len[j], args[j].stride[0] = 1;
  }
  uint32_t count[3] = {(n + dim - 1) / dim, 1, 1}, cdim[3] = {dim, 1, 1};
  cr_assert(bxvk_launch(d, vk, count, cdim, args, s, &ds), "%s", ds.n ? ds.d[0].msg : "?");
  cr_assert(bxvk_sync(d, NULL, &ds), "%s", ds.d[0].msg);
  for (uint32_t j = 0; j < k->nbind; j++) {
    size_t bytes = (size_t)len[j] * vk_elem_bytes(k->bind[j].elem);
    cr_assert(bxvk_buf_download(d, args[j].buf, host[j], bytes, &ds), "%s", ds.d[0].msg);
    bxvk_buf_free(d, args[j].buf);
  }
}

#endif
