/* bxvk_run.c — kernel_prepare and kernel_launch on a Vulkan device.
 *
 * Prepare verifies the IR, finds the kernel in the device's table (by
 * key), else in the disk cache, else emits it; checks the device has what
 * the module needs; and makes the shader module, the descriptor set layout
 * (one storage buffer per binding plus the metadata buffer), the pipeline
 * layout (the scalars' push constants) and a VkPipelineCache.  Pipelines
 * are made per cube_dim at the first launch that uses it (the workgroup
 * size is a specialization constant, so one module serves every dim).
 *
 * The disk cache (bxvk_disk: libbext's kernel_cache.c) holds, per IR hash
 * and device target text (emitter version, device, driver, the driver's
 * pipelineCacheUUID), the SPIR-V and the pipeline cache's data:
 *   u32 "BXVK" | u32 needs | u32 nwords | words | pipeline cache data
 * so a later process skips the emitter and gives the driver its cache.
 * It is rewritten when a new pipeline grew the pipeline cache's data.
 *
 * Launches are recorded into one command buffer (a batch) with a barrier
 * after each launch.  A launch whose cube_count passes the device's
 * maxComputeWorkGroupCount on an axis (65535 on lavapipe) is recorded as
 * a grid of dispatches, each with its base (vkCmdDispatchBase, core in
 * Vulkan 1.1; every pipeline is made with DISPATCH_BASE so any launch can
 * split): WorkgroupId and GlobalInvocationId count from the base, and the
 * kernel reads the whole grid's counts from the metadata buffer
 * (bxvk.h), so a split launch means what one dispatch would; the batch is submitted when it holds
 * BXVK_BATCH_SETS launches or its metadata ring is full, by bxvk_sync, and
 * before any upload or download.  Each batch carries two timestamps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bxvk_vk.h"

#define ENTRY_MAGIC 0x4b565842u /* "BXVK" */

/* ----------------------------------------------------------- batches */

static bool begin(struct bxvk_dev *d, struct bxk_diags *ds) {
  if (d->recording) return true;
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  VkResult r = d->vkResetCommandBuffer(d->cmd, 0);
  if (r == VK_SUCCESS) r = d->vkBeginCommandBuffer(d->cmd, &bi);
  if (r != VK_SUCCESS) return bxvk_err(ds, "Vulkan device %d: vkBeginCommandBuffer: %s", d->index, bxvk_result(r));
  d->vkResetDescriptorPool(d->dev, d->dpool, 0);
  d->sets = 0;
  d->meta_used = 0;
  if (d->qpool) {
    d->vkCmdResetQueryPool(d->cmd, d->qpool, 0, 2);
    d->vkCmdWriteTimestamp(d->cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, d->qpool, 0);
  }
  d->recording = true;
  return true;
}

/* Ends, submits and waits for the command buffer being recorded. */
static bool submit_wait(struct bxvk_dev *d, struct bxk_diags *ds) {
  VkResult r = d->vkEndCommandBuffer(d->cmd);
  d->recording = false;
  if (r != VK_SUCCESS) return bxvk_err(ds, "Vulkan device %d: vkEndCommandBuffer: %s", d->index, bxvk_result(r));
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &d->cmd};
  if ((r = d->vkQueueSubmit(d->queue, 1, &si, d->fence)) != VK_SUCCESS)
    return bxvk_err(ds, "Vulkan device %d: vkQueueSubmit: %s", d->index, bxvk_result(r));
  d->st.submits++;
  r = d->vkWaitForFences(d->dev, 1, &d->fence, VK_TRUE, UINT64_MAX);
  d->vkResetFences(d->dev, 1, &d->fence);
  if (r != VK_SUCCESS) return bxvk_err(ds, "Vulkan device %d: vkWaitForFences: %s", d->index, bxvk_result(r));
  return true;
}

bool bxvk_batch_submit(struct bxvk_dev *d, struct bxk_diags *ds) {
  if (!d->recording) return true;
  if (d->qpool) d->vkCmdWriteTimestamp(d->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, d->qpool, 1);
  if (!submit_wait(d, ds)) return false;
  d->last_ns = 0;
  uint64_t t[2];
  if (d->qpool && d->vkGetQueryPoolResults(d->dev, d->qpool, 0, 2, sizeof t, t, sizeof t[0],
                                           VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) == VK_SUCCESS &&
      t[1] >= t[0])
    d->last_ns = (uint64_t)((double)(t[1] - t[0]) * d->props.limits.timestampPeriod);
  return true;
}

bool bxvk_sync(struct bxvk_dev *d, uint64_t *gpu_ns, struct bxk_diags *ds) {
  if (gpu_ns) *gpu_ns = 0;
  if (!d->recording) return true;
  if (!bxvk_batch_submit(d, ds)) return false;
  if (gpu_ns) *gpu_ns = d->last_ns;
  return true;
}

bool bxvk_copy_now(struct bxvk_dev *d, VkBuffer from, VkBuffer to, size_t bytes, struct bxk_diags *ds) {
  if (d->recording && !bxvk_batch_submit(d, ds)) return false;
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  VkResult r = d->vkResetCommandBuffer(d->cmd, 0);
  if (r == VK_SUCCESS) r = d->vkBeginCommandBuffer(d->cmd, &bi);
  if (r != VK_SUCCESS) return bxvk_err(ds, "Vulkan device %d: vkBeginCommandBuffer: %s", d->index, bxvk_result(r));
  VkBufferCopy c = {0, 0, bytes};
  d->vkCmdCopyBuffer(d->cmd, from, to, 1, &c);
  return submit_wait(d, ds);
}

/* ------------------------------------------------------------ kernels */

static void kernel_free(struct bxvk_dev *d, struct bxvk_kernel *k) {
  for (uint32_t j = 0; j < k->npipes; j++) d->vkDestroyPipeline(d->dev, k->pipes[j].p, NULL);
  if (k->cache) d->vkDestroyPipelineCache(d->dev, k->cache, NULL);
  if (k->layout) d->vkDestroyPipelineLayout(d->dev, k->layout, NULL);
  if (k->dsl) d->vkDestroyDescriptorSetLayout(d->dev, k->dsl, NULL);
  if (k->mod) d->vkDestroyShaderModule(d->dev, k->mod, NULL);
  free(k->words);
  free(k);
}

void bxvk_kernels_release(struct bxvk_dev *d) {
  for (struct bxvk_kernel *k = d->kernels, *n; k; k = n) {
    n = k->next;
    kernel_free(d, k);
  }
  d->kernels = NULL;
}

uint32_t bxvk_kernel_nbind(const struct bxvk_kernel *k) { return k ? k->nbind : 0; }

void bxvk_forget_kernels(struct bxvk_dev *d) {
  struct bxk_diags ds = {0};
  bxvk_batch_submit(d, &ds);
  bxvk_kernels_release(d);
}

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static uint32_t get32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

/* Writes the kernel's SPIR-V and pipeline cache data to the disk cache. */
static void disk_store(struct bxvk_dev *d, struct bxvk_kernel *k, bool again) {
  if (!d->has_disk) return;
  size_t blob = 0;
  if (d->vkGetPipelineCacheData(d->dev, k->cache, &blob, NULL) != VK_SUCCESS) blob = 0;
  if (again && blob == k->blob_stored) return; /* the driver kept nothing new */
  k->blob_stored = blob;
  size_t len = 12 + 4 * k->nwords + blob;
  uint8_t *p = malloc(len);
  if (!p) return;
  put32(p, ENTRY_MAGIC);
  put32(p + 4, k->needs);
  put32(p + 8, (uint32_t)k->nwords);
  memcpy(p + 12, k->words, 4 * k->nwords);
  if (blob && d->vkGetPipelineCacheData(d->dev, k->cache, &blob, p + 12 + 4 * k->nwords) != VK_SUCCESS) blob = 0;
  d->disk.store(k->ir_hash, d->target, p, 12 + 4 * k->nwords + blob);
  d->st.disk_stores++;
  free(p);
}

/* The kernel's SPIR-V and cache data from disk: 1 found (k->words set,
 * blob and blen point into the entry, release tok after), 0 none, -1 rejected. */
static int disk_load(struct bxvk_dev *d, struct bxvk_kernel *k, const void **blob, size_t *blen, void **tok) {
  if (!d->has_disk) return 0;
  const void *data = NULL;
  size_t len = 0;
  *tok = NULL;
  int r = d->disk.load(k->ir_hash, d->target, &data, &len, tok);
  if (r <= 0) return r;
  const uint8_t *p = data;
  /* the entry passed kernel_cache.c's checksum; still, never trust it */
  uint32_t nw = len >= 12 ? get32(p + 8) : 0;
  if (len < 12 || get32(p) != ENTRY_MAGIC || nw < 5 || nw > (len - 12) / 4 || get32(p + 12) != 0x07230203u) {
    d->disk.release(*tok);
    *tok = NULL;
    return -1;
  }
  k->words = malloc(4 * (size_t)nw);
  if (!k->words) {
    d->disk.release(*tok);
    *tok = NULL;
    return 0;
  }
  memcpy(k->words, p + 12, 4 * (size_t)nw);
  k->nwords = nw;
  k->needs = get32(p + 4);
  *blob = p + 12 + 4 * (size_t)nw;
  *blen = len - 12 - 4 * (size_t)nw;
  return 1;
}

static bool objects(struct bxvk_dev *d, struct bxvk_kernel *k, const void *blob, size_t blen, struct bxk_diags *ds) {
  VkShaderModuleCreateInfo smi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = 4 * k->nwords,
                                  .pCode = k->words};
  VkResult r = d->vkCreateShaderModule(d->dev, &smi, NULL, &k->mod);
  if (r != VK_SUCCESS) return bxvk_err(ds, "kernel %s: vkCreateShaderModule: %s", k->name, bxvk_result(r));
  d->st.modules++;
  VkDescriptorSetLayoutBinding lb[65];
  for (uint32_t j = 0; j <= k->nbind; j++)
    lb[j] = (VkDescriptorSetLayoutBinding){.binding = j, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                           .descriptorCount = 1, .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  VkDescriptorSetLayoutCreateInfo dli = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                         .bindingCount = k->nbind + 1, .pBindings = lb};
  if ((r = d->vkCreateDescriptorSetLayout(d->dev, &dli, NULL, &k->dsl)) != VK_SUCCESS)
    return bxvk_err(ds, "kernel %s: vkCreateDescriptorSetLayout: %s", k->name, bxvk_result(r));
  VkPushConstantRange pr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 8 * k->nscalar};
  VkPipelineLayoutCreateInfo pli = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .setLayoutCount = 1,
                                    .pSetLayouts = &k->dsl, .pushConstantRangeCount = k->nscalar ? 1 : 0,
                                    .pPushConstantRanges = &pr};
  if ((r = d->vkCreatePipelineLayout(d->dev, &pli, NULL, &k->layout)) != VK_SUCCESS)
    return bxvk_err(ds, "kernel %s: vkCreatePipelineLayout: %s", k->name, bxvk_result(r));
  VkPipelineCacheCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
                                   .initialDataSize = blen, .pInitialData = blen ? blob : NULL};
  r = d->vkCreatePipelineCache(d->dev, &pci, NULL, &k->cache);
  if (r != VK_SUCCESS && blen) { /* the driver refused the data: start empty */
    pci.initialDataSize = 0, pci.pInitialData = NULL;
    r = d->vkCreatePipelineCache(d->dev, &pci, NULL, &k->cache);
  }
  if (r != VK_SUCCESS) return bxvk_err(ds, "kernel %s: vkCreatePipelineCache: %s", k->name, bxvk_result(r));
  return true;
}

struct bxvk_kernel *bxvk_prepare(struct bxvk_dev *d, const struct bxk_kernel *ir, uint64_t key, struct bxk_diags *ds) {
  for (struct bxvk_kernel *k = d->kernels; k; k = k->next)
    if (k->key == key) {
      d->st.memory_hits++;
      return k;
    }
  if (!ir) {
    bxvk_err(ds, "kernel_prepare on Vulkan device %d: no kernel", d->index);
    return NULL;
  }
  if (!bxk_verify(ir, ds)) return NULL;
  if (ir->nbind > 63) {
    bxvk_err(ds, "kernel %s has %u bindings; the Vulkan runtime takes at most 63", ir->name, ir->nbind);
    return NULL;
  }
  if (ir->nbind + 1 > d->props.limits.maxPerStageDescriptorStorageBuffers) {
    bxvk_err(ds, "kernel %s needs %u storage buffers; Vulkan device %d (%s) has %u per stage", ir->name,
             ir->nbind + 1, d->index, d->props.deviceName, d->props.limits.maxPerStageDescriptorStorageBuffers);
    return NULL;
  }
  struct bxvk_kernel *k = calloc(1, sizeof *k);
  size_t slen = 0;
  uint8_t *ser = bxk_serialize(ir, &slen);
  if (!k || !ser) {
    free(k), free(ser);
    bxvk_err(ds, "out of memory preparing kernel %s", ir->name);
    return NULL;
  }
  k->key = key;
  k->ir_hash = bxk_hash64(ser, slen);
  free(ser);
  snprintf(k->name, sizeof k->name, "%s", ir->name);
  k->nbind = ir->nbind;
  k->nscalar = ir->nscalar;
  for (uint32_t j = 0; j < ir->nbind; j++) k->elem[j] = ir->bind[j].elem, k->rank[j] = ir->bind[j].rank;

  const void *blob = NULL;
  size_t blen = 0;
  void *tok = NULL;
  int got = disk_load(d, k, &blob, &blen, &tok);
  if (got > 0) d->st.disk_hits++;
  if (got < 0) d->st.disk_rejects++;
  uint32_t shared = 0;
  for (uint32_t j = 0; j < ir->nshared; j++) {
    unsigned t = ir->shared[j].elem;
    shared += ir->shared[j].count * (t == BXK_BOOL || t == BXK_U8 ? 1u : bxk_type_bits(t) / 8);
  }
  if (got <= 0) {
    struct bxvk_spirv m;
    if (!bxvk_emit(ir, &m, ds)) {
      free(k);
      return NULL;
    }
    k->words = m.words, k->nwords = m.nwords, k->needs = m.needs;
  }
  bool ok = true;
  unsigned missing = k->needs & ~d->features;
  for (unsigned b = 0; b < BXVK_NEED_COUNT && ok; b++)
    if (missing & (1u << b))
      ok = bxvk_err(ds, "kernel %s needs %s, which Vulkan device %d (%s) does not have", k->name,
                    bxvk_need_name(b), d->index, d->props.deviceName);
  if (ok && shared > d->props.limits.maxComputeSharedMemorySize)
    ok = bxvk_err(ds, "kernel %s uses %u bytes of shared memory; Vulkan device %d (%s) has %u", k->name, shared,
                  d->index, d->props.deviceName, d->props.limits.maxComputeSharedMemorySize);
  ok = ok && objects(d, k, blob, blen, ds);
  if (tok) d->disk.release(tok);
  if (!ok) {
    kernel_free(d, k);
    return NULL;
  }
  k->blob_stored = blen;
  if (got <= 0) disk_store(d, k, false);
  k->next = d->kernels;
  d->kernels = k;
  return k;
}

/* The pipeline for this cube_dim, made on first use. */
static VkPipeline pipeline(struct bxvk_dev *d, struct bxvk_kernel *k, const uint32_t dim[3], struct bxk_diags *ds) {
  for (uint32_t j = 0; j < k->npipes; j++)
    if (memcmp(k->pipes[j].dim, dim, sizeof k->pipes[j].dim) == 0) return k->pipes[j].p;
  if (k->npipes == BXVK_MAX_PIPES) { /* the oldest goes: it may be in the batch, so run that first */
    if (!bxvk_batch_submit(d, ds)) return VK_NULL_HANDLE;
    d->vkDestroyPipeline(d->dev, k->pipes[0].p, NULL);
    memmove(k->pipes, k->pipes + 1, (BXVK_MAX_PIPES - 1) * sizeof k->pipes[0]);
    k->npipes--;
  }
  VkSpecializationMapEntry me[3] = {{0, 0, 4}, {1, 4, 4}, {2, 8, 4}};
  VkSpecializationInfo si = {3, me, 12, dim};
  VkComputePipelineCreateInfo ci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = k->mod, .pName = "main", .pSpecializationInfo = &si},
      .layout = k->layout,
      .flags = VK_PIPELINE_CREATE_DISPATCH_BASE_BIT};
  VkPipeline p;
  VkResult r = d->vkCreateComputePipelines(d->dev, k->cache, 1, &ci, NULL, &p);
  if (r != VK_SUCCESS) {
    bxvk_err(ds, "kernel %s: vkCreateComputePipelines (cube_dim %ux%ux%u): %s", k->name, dim[0], dim[1], dim[2],
             bxvk_result(r));
    return VK_NULL_HANDLE;
  }
  d->st.pipelines++;
  k->pipes[k->npipes].p = p;
  memcpy(k->pipes[k->npipes].dim, dim, sizeof k->pipes[0].dim);
  k->npipes++;
  disk_store(d, k, true);
  return p;
}

static uint32_t min32(uint64_t a, uint32_t b) { return a < b ? (uint32_t)a : b; }

static uint32_t elem_bytes(unsigned t) { return t == BXK_BOOL || t == BXK_U8 ? 1 : bxk_type_bits(t) / 8; }

/* The view lies inside its buffer; its metadata words into w. */
static bool check_arg(struct bxvk_dev *d, struct bxvk_kernel *k, uint32_t j, const struct bxvk_arg *a, uint32_t *w,
                      struct bxk_diags *ds) {
  if (!a->buf) return bxvk_err(ds, "kernel %s: binding b%u has no buffer", k->name, j);
  if (a->rank > 8) return bxvk_err(ds, "kernel %s: binding b%u has rank %u (at most 8)", k->name, j, a->rank);
  if (k->rank[j] && a->rank != k->rank[j])
    return bxvk_err(ds, "kernel %s: binding b%u expects rank %u, found rank %u", k->name, j, k->rank[j], a->rank);
  uint64_t far = a->offset;
  if (a->rank == 0) {
    far += a->len ? a->len - 1 : 0;
  } else {
    for (uint32_t x = 0; x < a->rank; x++)
      if (a->shape[x]) far += (uint64_t)(a->shape[x] - 1) * a->stride[x];
  }
  uint64_t need = (far + 1) * elem_bytes(k->elem[j]);
  if (a->len && need > a->buf->req)
    return bxvk_err(ds, "kernel %s: binding b%u's view reaches byte %llu of a %zu-byte buffer", k->name, j,
                    (unsigned long long)need, a->buf->req);
  memset(w, 0, BXVK_META_WORDS * 4);
  w[0] = a->len, w[1] = a->rank, w[2] = a->offset;
  for (uint32_t x = 0; x < a->rank; x++) w[4 + x] = a->shape[x], w[12 + x] = a->stride[x];
  return true;
}

bool bxvk_launch(struct bxvk_dev *d, struct bxvk_kernel *k, const uint32_t cube_count[3], const uint32_t cube_dim[3],
                 const struct bxvk_arg *args, const union bxl_scalar *scalars, struct bxk_diags *ds) {
  if (!k) return bxvk_err(ds, "kernel_launch on Vulkan device %d: no kernel", d->index);
  const VkPhysicalDeviceLimits *L = &d->props.limits;
  uint64_t units = 1, per_cube = 1;
  for (int a = 0; a < 3; a++) {
    if (!cube_count[a] || !cube_dim[a])
      return bxvk_err(ds, "kernel %s: cube_count %ux%ux%u and cube_dim %ux%ux%u must be at least 1 on every axis",
                      k->name, cube_count[0], cube_count[1], cube_count[2], cube_dim[0], cube_dim[1], cube_dim[2]);
    if (cube_dim[a] > L->maxComputeWorkGroupSize[a])
      return bxvk_err(ds, "kernel %s: cube_dim %u on axis %c exceeds Vulkan device %d's %u", k->name, cube_dim[a],
                      "xyz"[a], d->index, L->maxComputeWorkGroupSize[a]);
    units *= (uint64_t)cube_count[a] * cube_dim[a];
    per_cube *= cube_dim[a];
  }
  if (per_cube > L->maxComputeWorkGroupInvocations)
    return bxvk_err(ds, "kernel %s: a cube of %llu units exceeds Vulkan device %d's %u", k->name,
                    (unsigned long long)per_cube, d->index, L->maxComputeWorkGroupInvocations);
  if (units > UINT32_MAX)
    return bxvk_err(ds, "kernel %s: %llu units do not fit u32 unit positions", k->name, (unsigned long long)units);
  if (k->nbind && !args) return bxvk_err(ds, "kernel %s: no bindings given for its %u", k->name, k->nbind);
  if (k->nscalar && !scalars) return bxvk_err(ds, "kernel %s: no scalars given for its %u", k->name, k->nscalar);

  VkPipeline p = pipeline(d, k, cube_dim, ds);
  if (!p) return false;
  size_t align = L->minStorageBufferOffsetAlignment ? L->minStorageBufferOffsetAlignment : 4;
  size_t mbytes = (k->nbind * BXVK_META_WORDS + BXVK_GRID_WORDS) * 4;
  size_t at = (d->meta_used + align - 1) / align * align;
  if (d->recording && (d->sets == BXVK_BATCH_SETS || at + mbytes > BXVK_META_RING)) {
    if (!bxvk_batch_submit(d, ds)) return false;
  }
  if (!begin(d, ds)) return false;
  at = (d->meta_used + align - 1) / align * align;
  uint32_t *w = (uint32_t *)((uint8_t *)d->meta->map + at);
  memset(w, 0, mbytes);
  for (uint32_t j = 0; j < k->nbind; j++)
    if (!check_arg(d, k, j, &args[j], w + j * BXVK_META_WORDS, ds)) return false;
  memcpy(w + k->nbind * BXVK_META_WORDS, cube_count, 3 * sizeof *cube_count);
  d->meta_used = at + mbytes;

  VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                    .descriptorPool = d->dpool, .descriptorSetCount = 1, .pSetLayouts = &k->dsl};
  VkDescriptorSet set;
  VkResult r = d->vkAllocateDescriptorSets(d->dev, &ai, &set);
  if (r != VK_SUCCESS) return bxvk_err(ds, "kernel %s: vkAllocateDescriptorSets: %s", k->name, bxvk_result(r));
  d->sets++;
  VkDescriptorBufferInfo bi[64];
  VkWriteDescriptorSet wr[64];
  for (uint32_t j = 0; j <= k->nbind; j++) {
    if (j < k->nbind) bi[j] = (VkDescriptorBufferInfo){args[j].buf->buf, 0, VK_WHOLE_SIZE};
    else bi[j] = (VkDescriptorBufferInfo){d->meta->buf, at, mbytes};
    wr[j] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = set, .dstBinding = j,
                                   .descriptorCount = 1, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                   .pBufferInfo = &bi[j]};
  }
  d->vkUpdateDescriptorSets(d->dev, k->nbind + 1, wr, 0, NULL);
  d->vkCmdBindPipeline(d->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p);
  d->vkCmdBindDescriptorSets(d->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k->layout, 0, 1, &set, 0, NULL);
  if (k->nscalar) d->vkCmdPushConstants(d->cmd, k->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 8 * k->nscalar, scalars);
  /* pieces of at most the device's count per axis (one, nearly always);
   * they may run in any order, as the cubes of one dispatch may */
  const uint32_t *most = L->maxComputeWorkGroupCount;
  for (uint64_t z = 0; z < cube_count[2]; z += most[2])
    for (uint64_t y = 0; y < cube_count[1]; y += most[1])
      for (uint64_t x = 0; x < cube_count[0]; x += most[0]) {
        d->vkCmdDispatchBase(d->cmd, (uint32_t)x, (uint32_t)y, (uint32_t)z, min32(cube_count[0] - x, most[0]),
                             min32(cube_count[1] - y, most[1]), min32(cube_count[2] - z, most[2]));
        d->st.dispatches++;
      }
  /* the next launch may read what this one wrote */
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                        .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
  d->vkCmdPipelineBarrier(d->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1,
                          &mb, 0, NULL, 0, NULL);
  d->st.launches++;
  return true;
}
