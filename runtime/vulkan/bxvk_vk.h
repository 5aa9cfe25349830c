/* bxvk_vk.h — the Vulkan runtime's private parts, shared by bxvk_vk.c
 * (loader, instance, device), bxvk_mem.c (buffers, staging) and
 * bxvk_run.c (kernels, batches, launches).  Vulkan's entry points are
 * resolved at run time from libvulkan.so.1 (VK_NO_PROTOTYPES: nothing
 * links against the loader). */
#ifndef BXVK_VK_H
#define BXVK_VK_H

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include "bxvk.h"

/* X(name): resolved with vkGetInstanceProcAddr after the instance exists. */
#define BXVK_INSTANCE_FNS(X)                                                      \
  X(vkDestroyInstance) X(vkEnumeratePhysicalDevices) X(vkGetPhysicalDeviceProperties) \
  X(vkGetPhysicalDeviceFeatures2) X(vkGetPhysicalDeviceFeatures)                  \
  X(vkGetPhysicalDeviceQueueFamilyProperties) X(vkGetPhysicalDeviceMemoryProperties) \
  X(vkCreateDevice) X(vkGetDeviceProcAddr)

/* X(name): resolved with vkGetDeviceProcAddr. */
#define BXVK_DEVICE_FNS(X)                                                        \
  X(vkDestroyDevice) X(vkGetDeviceQueue) X(vkDeviceWaitIdle)                      \
  X(vkCreateBuffer) X(vkDestroyBuffer) X(vkGetBufferMemoryRequirements)           \
  X(vkAllocateMemory) X(vkFreeMemory) X(vkBindBufferMemory) X(vkMapMemory) X(vkUnmapMemory) \
  X(vkCreateShaderModule) X(vkDestroyShaderModule)                                \
  X(vkCreateDescriptorSetLayout) X(vkDestroyDescriptorSetLayout)                  \
  X(vkCreatePipelineLayout) X(vkDestroyPipelineLayout)                            \
  X(vkCreatePipelineCache) X(vkGetPipelineCacheData) X(vkDestroyPipelineCache)    \
  X(vkCreateComputePipelines) X(vkDestroyPipeline)                                \
  X(vkCreateDescriptorPool) X(vkDestroyDescriptorPool) X(vkResetDescriptorPool)   \
  X(vkAllocateDescriptorSets) X(vkUpdateDescriptorSets)                           \
  X(vkCreateCommandPool) X(vkDestroyCommandPool) X(vkAllocateCommandBuffers)      \
  X(vkBeginCommandBuffer) X(vkEndCommandBuffer) X(vkResetCommandBuffer)           \
  X(vkCmdBindPipeline) X(vkCmdBindDescriptorSets) X(vkCmdPushConstants)           \
  X(vkCmdDispatchBase) X(vkCmdPipelineBarrier) X(vkCmdCopyBuffer)                     \
  X(vkCmdWriteTimestamp) X(vkCmdResetQueryPool)                                   \
  X(vkCreateQueryPool) X(vkDestroyQueryPool) X(vkGetQueryPoolResults)             \
  X(vkQueueSubmit) X(vkCreateFence) X(vkDestroyFence) X(vkWaitForFences) X(vkResetFences)

#define BXVK_SIZE_CLASSES 48
#define BXVK_BATCH_SETS 256          /* launches per batch (descriptor sets) */
#define BXVK_META_RING (256u * 1024) /* binding metadata per batch, bytes */

struct bxvk_buf {
  VkBuffer buf;
  VkDeviceMemory mem;
  void *map;                 /* host-visible buffers: mapped for their life */
  size_t size;               /* the allocation (its size class) */
  size_t req;                /* bytes asked for */
  int cls;                   /* size class, -1: not pooled (staging, metadata) */
  struct bxvk_buf *next_free, *next_all;
};

struct bxvk_pipe {
  uint32_t dim[3];
  VkPipeline p;
};

#define BXVK_MAX_PIPES 16

struct bxvk_kernel {
  uint64_t key, ir_hash;
  char name[64];
  unsigned needs;
  uint32_t nbind, nscalar;
  uint8_t elem[64], rank[64];  /* bindings' element types and ranks */
  uint32_t *words;             /* the SPIR-V (kept: it goes to the disk cache) */
  size_t nwords;
  VkShaderModule mod;
  VkDescriptorSetLayout dsl;
  VkPipelineLayout layout;
  VkPipelineCache cache;
  size_t blob_stored;          /* pipeline cache bytes on disk (or loaded) */
  struct bxvk_pipe pipes[BXVK_MAX_PIPES];
  uint32_t npipes;
  struct bxvk_kernel *next;
};

struct bxvk_dev {
  void *lib;
  PFN_vkGetInstanceProcAddr gipa;
  VkInstance inst;
  VkPhysicalDevice phys;
  VkDevice dev;
  VkQueue queue;
  uint32_t qfam;
  int index, ndev;
  VkPhysicalDeviceProperties props;
  VkPhysicalDeviceMemoryProperties memp;
  unsigned features;           /* BXVK_NEED bits the device has (and were enabled) */
  char target[512];            /* the disk cache's target text */
  struct bxvk_disk disk;
  bool has_disk;
  /* the batch being recorded */
  VkCommandPool cpool;
  VkCommandBuffer cmd;
  VkFence fence;
  bool recording;
  VkDescriptorPool dpool;
  uint32_t sets;
  struct bxvk_buf *meta;       /* host-visible ring of binding metadata */
  size_t meta_used;
  VkQueryPool qpool;           /* 2 timestamps per batch, when the queue has them */
  uint64_t last_ns;
  /* buffers */
  struct bxvk_buf *free_list[BXVK_SIZE_CLASSES];
  struct bxvk_buf *all;
  struct bxvk_buf *staging;
  struct bxvk_kernel *kernels;
  struct bxvk_stats st;
#define BXVK_X_(f) PFN_##f f;
  BXVK_INSTANCE_FNS(BXVK_X_)
  BXVK_DEVICE_FNS(BXVK_X_)
#undef BXVK_X_
};

/* A VULKAN diagnostic; always returns false. */
BXK_FUNC bool bxvk_err(struct bxk_diags *ds, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
BXK_FUNC const char *bxvk_result(VkResult r);

/* bxvk_mem.c */
/* A buffer of `bytes` with the memory properties `want` (host-visible
 * ones stay mapped); NULL + diagnostic on failure.  Not pooled. */
BXK_FUNC struct bxvk_buf *bxvk_buf_raw(struct bxvk_dev *d, size_t bytes, VkMemoryPropertyFlags want,
                                       struct bxk_diags *ds);
BXK_FUNC void bxvk_buf_destroy(struct bxvk_dev *d, struct bxvk_buf *b);
BXK_FUNC void bxvk_bufs_release(struct bxvk_dev *d);

/* bxvk_run.c */
BXK_FUNC bool bxvk_batch_submit(struct bxvk_dev *d, struct bxk_diags *ds);
BXK_FUNC void bxvk_kernels_release(struct bxvk_dev *d);
/* Records and runs one command buffer of copies (after the queued batch). */
BXK_FUNC bool bxvk_copy_now(struct bxvk_dev *d, VkBuffer from, VkBuffer to, size_t bytes, struct bxk_diags *ds);

#endif
