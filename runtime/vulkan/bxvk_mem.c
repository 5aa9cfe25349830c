/* bxvk_mem.c — device buffers from a caching allocator, and the staging
 * copies that move bytes in and out of them.
 *
 * Sizes are rounded up to a power of two (at least 256 bytes), and a
 * freed buffer goes on its class's free list, so a program that makes and
 * drops tensors of the same sizes allocates device memory only at the
 * start (Vulkan allocations are slow and their number is limited:
 * maxMemoryAllocationCount can be 4096).  Buffers live in device-local
 * memory where the device has it; the host reaches them through one
 * host-visible staging buffer that grows to the largest copy. */
#include <stdlib.h>
#include <string.h>

#include "bxvk_vk.h"

static int mem_type(struct bxvk_dev *d, uint32_t bits, VkMemoryPropertyFlags want) {
  for (uint32_t i = 0; i < d->memp.memoryTypeCount; i++)
    if ((bits & (1u << i)) && (d->memp.memoryTypes[i].propertyFlags & want) == want) return (int)i;
  return -1;
}

struct bxvk_buf *bxvk_buf_raw(struct bxvk_dev *d, size_t bytes, VkMemoryPropertyFlags want, struct bxk_diags *ds) {
  struct bxvk_buf *b = calloc(1, sizeof *b);
  if (!b) {
    bxvk_err(ds, "out of memory for a Vulkan buffer of %zu bytes", bytes);
    return NULL;
  }
  b->size = b->req = bytes;
  b->cls = -1;
  VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = bytes ? bytes : 4,
                            .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                            .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  VkResult r = d->vkCreateBuffer(d->dev, &bci, NULL, &b->buf);
  if (r != VK_SUCCESS) {
    free(b);
    bxvk_err(ds, "vkCreateBuffer (%zu bytes): %s", bytes, bxvk_result(r));
    return NULL;
  }
  VkMemoryRequirements req;
  d->vkGetBufferMemoryRequirements(d->dev, b->buf, &req);
  int t = mem_type(d, req.memoryTypeBits, want);
  if (t < 0 && (want & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) t = mem_type(d, req.memoryTypeBits, 0);
  if (t < 0) {
    d->vkDestroyBuffer(d->dev, b->buf, NULL);
    free(b);
    bxvk_err(ds, "Vulkan device %d has no memory type for a buffer with properties %#x", d->index, (unsigned)want);
    return NULL;
  }
  VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size,
                              .memoryTypeIndex = (uint32_t)t};
  if ((r = d->vkAllocateMemory(d->dev, &mai, NULL, &b->mem)) != VK_SUCCESS ||
      (r = d->vkBindBufferMemory(d->dev, b->buf, b->mem, 0)) != VK_SUCCESS ||
      ((want & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) &&
       (r = d->vkMapMemory(d->dev, b->mem, 0, VK_WHOLE_SIZE, 0, &b->map)) != VK_SUCCESS)) {
    if (b->mem) d->vkFreeMemory(d->dev, b->mem, NULL);
    d->vkDestroyBuffer(d->dev, b->buf, NULL);
    free(b);
    bxvk_err(ds, "allocating %zu bytes on Vulkan device %d: %s", bytes, d->index, bxvk_result(r));
    return NULL;
  }
  d->st.buf_allocs++;
  return b;
}

void bxvk_buf_destroy(struct bxvk_dev *d, struct bxvk_buf *b) {
  if (b->map) d->vkUnmapMemory(d->dev, b->mem);
  d->vkDestroyBuffer(d->dev, b->buf, NULL);
  d->vkFreeMemory(d->dev, b->mem, NULL);
  free(b);
}

static int size_class(size_t bytes) {
  int c = 8;
  while (c < BXVK_SIZE_CLASSES && ((size_t)1 << c) < bytes) c++;
  return c;
}

struct bxvk_buf *bxvk_buf_new(struct bxvk_dev *d, size_t bytes, struct bxk_diags *ds) {
  int c = size_class(bytes);
  if (c >= BXVK_SIZE_CLASSES) {
    bxvk_err(ds, "a Vulkan buffer of %zu bytes is larger than the allocator's largest class", bytes);
    return NULL;
  }
  struct bxvk_buf *b = d->free_list[c];
  if (b) {
    d->free_list[c] = b->next_free;
    d->st.buf_reuses++;
  } else {
    b = bxvk_buf_raw(d, (size_t)1 << c, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, ds);
    if (!b) return NULL;
    b->cls = c;
    b->next_all = d->all;
    d->all = b;
  }
  b->req = bytes;
  b->next_free = NULL;
  return b;
}

void bxvk_buf_free(struct bxvk_dev *d, struct bxvk_buf *b) {
  if (!b) return;
  b->next_free = d->free_list[b->cls];
  d->free_list[b->cls] = b;
}

size_t bxvk_buf_size(const struct bxvk_buf *b) { return b->req; }

void bxvk_bufs_release(struct bxvk_dev *d) {
  for (struct bxvk_buf *b = d->all, *n; b; b = n) {
    n = b->next_all;
    bxvk_buf_destroy(d, b);
  }
  d->all = NULL;
  memset(d->free_list, 0, sizeof d->free_list);
  if (d->staging) bxvk_buf_destroy(d, d->staging);
  d->staging = NULL;
}

/* The staging buffer, grown to at least `bytes`. */
static struct bxvk_buf *staging(struct bxvk_dev *d, size_t bytes, struct bxk_diags *ds) {
  if (d->staging && d->staging->size >= bytes) return d->staging;
  if (d->staging) bxvk_buf_destroy(d, d->staging);
  size_t size = 1 << 16;
  while (size < bytes) size *= 2;
  d->staging = bxvk_buf_raw(d, size, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, ds);
  return d->staging;
}

static bool fits(struct bxvk_dev *d, const struct bxvk_buf *b, size_t bytes, const char *what, struct bxk_diags *ds) {
  if (!b) return bxvk_err(ds, "%s on Vulkan device %d: no buffer", what, d->index);
  if (bytes > b->req)
    return bxvk_err(ds, "%s of %zu bytes into a Vulkan buffer of %zu bytes", what, bytes, b->req);
  return true;
}

bool bxvk_buf_upload(struct bxvk_dev *d, struct bxvk_buf *b, const void *src, size_t bytes, struct bxk_diags *ds) {
  if (!fits(d, b, bytes, "upload", ds)) return false;
  if (!bytes) return true;
  struct bxvk_buf *s = staging(d, bytes, ds);
  if (!s) return false;
  /* launches queued before this upload may still read b: run them first */
  if (d->recording && !bxvk_batch_submit(d, ds)) return false;
  memcpy(s->map, src, bytes);
  return bxvk_copy_now(d, s->buf, b->buf, bytes, ds);
}

bool bxvk_buf_download(struct bxvk_dev *d, struct bxvk_buf *b, void *dst, size_t bytes, struct bxk_diags *ds) {
  if (!fits(d, b, bytes, "download", ds)) return false;
  if (!bytes) return true;
  struct bxvk_buf *s = staging(d, bytes, ds);
  if (!s) return false;
  if (d->recording && !bxvk_batch_submit(d, ds)) return false;
  if (!bxvk_copy_now(d, b->buf, s->buf, bytes, ds)) return false;
  memcpy(dst, s->map, bytes);
  return true;
}
