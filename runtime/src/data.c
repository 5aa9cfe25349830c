/* data.c — borrowed pointers to a tensor's elements for kernels written in
 * C (bext_data, bext_data_mut; ownership rules in bext.h).  Only devices
 * whose backend declares host_memory hand them out; writing needs a
 * contiguous, uniquely held tensor so no other handle sees the change. */
#include "backend.h"

/* What an empty tensor's pointer points to: non-NULL (NULL means an error)
 * and never dereferenced, whatever the view's offset is. */
static max_align_t empty_data;

/* t's element 0, after the checks both functions share; NULL + error. */
static void *host_data(const bext_tensor *t, const char *api) {
  if (!t) return bxr_error_null("%s: NULL tensor handle", api), NULL;
  if (!t->device->vt->host_memory) {
    char b[200];
    bxr_error("%s: %s lives on device '%s' whose memory is not host memory (move it with bext_to_device, "
              "or use ops)",
              api, bxr_describe(t, b, sizeof b), t->device->name);
    return NULL;
  }
  if (bxr_numel(t->rank, t->shape) == 0) return &empty_data;
  return bxr_data(t);
}

const void *bext_data(const bext_tensor *t) { return host_data(t, "bext_data"); }

void *bext_data_mut(bext_tensor *t) {
  const char *api = "bext_data_mut";
  void *p = host_data(t, api);
  if (!p) return NULL;
  char b[200];
  /* Contiguity first: bext_contiguous cures it and returns a fresh,
   * uniquely held tensor, so the advice fixes both problems at once. */
  if (!bxr_is_contiguous(t))
    return bxr_error("%s: %s is not contiguous: call bext_contiguous first", api, bxr_describe(t, b, sizeof b)),
           NULL;
  if (!bxr_is_unique(t)) {
    int refs = atomic_load(&t->refcount), views = atomic_load(&t->storage->refcount);
    if (refs > 1)
      bxr_error("%s: %s is shared (%d references): writing would change the values the other holders see; "
                "write into a fresh bext_empty tensor instead",
                api, bxr_describe(t, b, sizeof b), refs);
    else if (views > 1)
      bxr_error("%s: %s shares its storage with another view (%d handles on it): writing would change that "
                "view's values; write into a fresh bext_empty tensor instead",
                api, bxr_describe(t, b, sizeof b), views);
    else
      bxr_error("%s: %s is held by another thread: write into a fresh bext_empty tensor instead", api,
                bxr_describe(t, b, sizeof b));
    return NULL;
  }
  return p;
}
