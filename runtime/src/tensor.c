/* tensor.c — handle and storage lifecycle, layout helpers (contiguity,
 * index math, broadcast, strided iteration), host data movement, and the
 * public queries / data in-out functions.  Host storage buffers go back
 * to the hook that allocated them (bxr_storage_hook), not the one
 * installed when they are freed. */
#include <string.h>

#include "backend.h"

/* --------------------------------------------------------------- storage */

/* The block bxr_tensor_new allocates: storage record, its first handle,
 * then (inline_data) the buffer.  Both headers are multiples of 8 bytes
 * and the block 16-byte aligned, so the buffer is 16-byte aligned. */
struct bxr_tblock {
  struct bxr_storage s;
  bext_tensor t;
};
/* Inline buffers start 16-byte aligned (blocks are). */
#define TBLOCK_HDR ((sizeof(struct bxr_tblock) + 15) & ~(size_t)15)
#define TBLOCK_DATA(b) ((char *)(b) + TBLOCK_HDR)

void bxr_storage_retain(struct bxr_storage *s) {
  atomic_fetch_add_explicit(&s->refcount, 1, memory_order_relaxed);
}

static inline void storage_destroy(struct bxr_storage *s) {
  if (s->free_priv) {
    s->free_priv(s->priv);           /* opaque storage */
  } else if (!s->inline_data) {
    bxr_device_count_free(s->device, s->bytes);
    s->device->vt->storage_free(s);
  }
  bxr_block_free(s, s->cls);   /* the record starts its block */
}

/* Inlined into bxr_tensor_destroy: freeing a small op's result is one
 * call deep (release -> destroy -> block cache), not three. */
static inline __attribute__((always_inline)) void storage_release(struct bxr_storage *s) {
  if (!s) return;
  /* Count 1 while we hold a reference: ours alone (see tensor.h). */
  if (atomic_load_explicit(&s->refcount, memory_order_acquire) == 1) {
    storage_destroy(s);
    return;
  }
  int old = atomic_fetch_sub_explicit(&s->refcount, 1, memory_order_acq_rel);
  BXR_ASSERT(old > 0);
  if (old == 1) storage_destroy(s);
}

void bxr_storage_release(struct bxr_storage *s) { storage_release(s); }

void bxr_tensor_destroy(bext_tensor *t) {
  struct bxr_storage *s = t->storage;
  if (t->embedded) {
    /* t's memory belongs to s's block: freed with the last reference. */
    storage_release(s);
    return;
  }
  int cls = t->cls;
  storage_release(s);
  bxr_block_free(t, cls);
}

void bxr_over_release(void) {
  bxr_panic(__FILE__, __LINE__, "bext_release: handle released more often than retained");
}

size_t bxr_nbytes(bext_dtype dt, int rank, const int64_t *shape) {
  uint64_t n = bxr_dtype_size(dt);
  for (int i = 0; i < rank; i++) {
    if (shape[i] < 0) return SIZE_MAX;
    if (shape[i] == 0) return 0;
    if (__builtin_mul_overflow(n, (uint64_t)shape[i], &n)) return SIZE_MAX;
  }
  /* keep element counts representable as int64 and allocations sane */
  return n > ((uint64_t)1 << 48) ? SIZE_MAX : (size_t)n;
}

void bxr_contiguous_strides(int rank, const int64_t *shape, int64_t *strides) {
  int64_t s = 1;
  for (int i = rank - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i] > 0 ? shape[i] : 1;
  }
}

/* Fills the handle fields every constructor sets; unused dims are zeroed
 * so handles stay deterministic (the old calloc did the same).  Strides
 * are left zero: each constructor writes its own. */
static inline __attribute__((always_inline)) void handle_init(bext_tensor *t, struct bext_device *dev, bext_dtype dt, int rank,
                        const int64_t *shape) {
  atomic_init(&t->refcount, 1);
  atomic_init(&t->busy, 0);
  /* Biased towards this thread when the process has membarrier
   * (bxr_self decides that on a thread's first call, so ask it first). */
  uint64_t me = bxr_self();
  atomic_init(&t->owner, __atomic_load_n(&bxr_bias_on, __ATOMIC_ACQUIRE) ? me : 0);
  t->device = dev;
  t->dtype = dt;
  t->rank = rank;
  /* fixed sizes: a few vector stores, no memset call; then the rank
   * extents over them */
  memset(t->shape, 0, sizeof t->shape);
  memset(t->strides, 0, sizeof t->strides);
  for (int d = 0; d < rank; d++) t->shape[d] = shape[d];
  t->offset = 0;
  t->autodiff = NULL;
  t->priv = NULL;
}

/* The storage record and first handle of a fresh block b of class cls;
 * the caller fills the data members (data, priv, free_priv, inline_data). */
static inline __attribute__((always_inline)) bext_tensor *block_init(struct bxr_tblock *b, int cls,
                                                                     struct bext_device *dev, bext_dtype dt,
                                                                     int rank, const int64_t *shape,
                                                                     size_t bytes) {
  struct bxr_storage *s = &b->s;
  atomic_init(&s->refcount, 1);
  s->cls = (signed char)cls;
  s->device = dev;
  s->bytes = bytes;
  bext_tensor *t = &b->t;
  handle_init(t, dev, dt, rank, shape);
  t->embedded = true;
  t->cls = -1;
  bxr_contiguous_strides(rank, shape, t->strides);
  t->contig = true;   /* contiguous strides, by construction */
  t->storage = s;
  return t;
}

static __attribute__((cold, noinline)) bext_tensor *too_large(bext_dtype dt, int rank, const int64_t *shape) {
  char sh[160];
  bxr_error("tensor of shape %s %s is too large", bxr_describe_shape(rank, shape, sh, sizeof sh),
            bext_dtype_name(dt));
  return NULL;
}

/* A separate buffer from the backend (too large to ride in the block, or
 * a backend without inline_small): kept out of the small-tensor path. */
static __attribute__((noinline)) bool storage_buffer(struct bxr_tblock *b, const struct bxr_backend *be,
                                                     size_t bytes) {
  struct bxr_storage *s = &b->s;
  s->data = NULL;
  s->bytes = bytes;
  if (!be->storage_alloc(s, bytes)) return false;
  bxr_device_count_alloc(s->device, bytes);
  return true;
}

bext_tensor *bxr_tensor_new(struct bext_device *dev, bext_dtype dt, int rank,
                            const int64_t *shape) {
  const struct bxr_backend *be = dev->vt;
  BXR_ASSERT(be && be->storage_alloc && (unsigned)rank <= BEXT_MAX_RANK && (unsigned)dt < BEXT_DTYPE_COUNT);
  size_t bytes = bxr_nbytes(dt, rank, shape);
  if (__builtin_expect(bytes == SIZE_MAX, 0)) return too_large(dt, rank, shape);
  /* Small host buffers ride in the block: one allocation per tensor. */
  int cls = be->inline_small ? bxr_block_class(TBLOCK_HDR + bytes) : -1;
  bool inl = cls >= 0;
  if (!inl) cls = bxr_block_class(TBLOCK_HDR);
  struct bxr_tblock *b = bxr_block_alloc(cls);
  if (__builtin_expect(!b, 0)) return NULL;
  struct bxr_storage *s = &b->s;
  s->inline_data = inl;
  s->priv = NULL;
  s->free_priv = NULL;
  s->cls = (signed char)cls;
  s->device = dev;            /* storage_alloc may read the device's state */
  if (inl) {
    s->data = TBLOCK_DATA(b);
  } else if (!storage_buffer(b, be, bytes)) {
    bxr_block_free(b, cls);
    return NULL;
  }
  return block_init(b, cls, dev, dt, rank, shape, bytes);
}

bext_tensor *bxr_tensor_new_opaque(struct bext_device *dev, bext_dtype dt, int rank,
                                   const int64_t *shape, void *priv, void (*free_priv)(void *)) {
  BXR_ASSERT(dev && free_priv && rank >= 0 && rank <= BEXT_MAX_RANK && (unsigned)dt < BEXT_DTYPE_COUNT);
  int cls = bxr_block_class(TBLOCK_HDR);
  struct bxr_tblock *b = bxr_block_alloc(cls);
  if (!b) {
    free_priv(priv);
    return NULL;
  }
  b->s.inline_data = false;
  b->s.data = NULL;
  b->s.priv = priv;
  b->s.free_priv = free_priv;
  return block_init(b, cls, dev, dt, rank, shape, 0);
}

bext_tensor *bxr_tensor_view(const bext_tensor *base, int rank, const int64_t *shape,
                             const int64_t *strides, int64_t offset) {
  BXR_ASSERT(base && rank >= 0 && rank <= BEXT_MAX_RANK);
  int cls = bxr_block_class(sizeof(bext_tensor));
  bext_tensor *t = bxr_block_alloc(cls);
  if (!t) return NULL;
  handle_init(t, base->device, base->dtype, rank, shape);
  t->embedded = false;
  t->cls = (signed char)cls;
  if (rank) memcpy(t->strides, strides, (size_t)rank * sizeof *strides);
  t->contig = bxr_layout_contiguous(rank, t->shape, t->strides);
  t->offset = offset;
  t->storage = base->storage;
  bxr_storage_retain(t->storage);
  return t;
}

static inline void spin_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  atomic_signal_fence(memory_order_seq_cst);
#endif
}

void bxr_unbias(bext_tensor *t) {
  uint64_t o = atomic_load_explicit(&t->owner, memory_order_acquire);
  for (;;) {
    if (o == 0) return;
    if (o == 1) {   /* another thread is taking it over: wait for it */
      spin_pause();
      o = atomic_load_explicit(&t->owner, memory_order_acquire);
      continue;
    }
    /* Our own handle: only we write the count, atomics are fine too. */
    if (o == bxr_tls_id) return;
    if (atomic_compare_exchange_weak_explicit(&t->owner, &o, 1, memory_order_acq_rel,
                                              memory_order_acquire)) {
      /* After the fence the owner either sees owner == 1 on its next
       * update, or its busy flag is visible to us: wait it out. */
      bxr_heavy_fence();
      while (atomic_load_explicit(&t->busy, memory_order_acquire)) spin_pause();
      atomic_store_explicit(&t->owner, 0, memory_order_release);
      return;
    }
  }
}

bext_tensor *bext_retain(bext_tensor *t) {
  if (t) bxr_retain(t);
  return t;
}

void bext_release(bext_tensor *t) {
  if (t) bxr_release(t);
}

/* ----------------------------------------------------------- index math */

int64_t bxr_offset_of(int64_t i, int rank, const int64_t *shape, const int64_t *strides) {
  int64_t off = 0;
  for (int d = rank - 1; d >= 0; d--) {
    if (shape[d] == 0) return 0;
    off += (i % shape[d]) * strides[d];
    i /= shape[d];
  }
  return off;
}

bool bxr_broadcast_strides(const bext_tensor *t, int rank, const int64_t *shape, int64_t *strides) {
  if (t->rank > rank) return false;
  int lead = rank - t->rank;
  for (int d = 0; d < rank; d++) {
    if (d < lead) {
      strides[d] = 0;
      continue;
    }
    int64_t e = t->shape[d - lead];
    if (e == shape[d]) strides[d] = e == 1 ? 0 : t->strides[d - lead];
    else if (e == 1) strides[d] = 0;
    else return false;
  }
  return true;
}

bool bxr_broadcast_shape(int ra, const int64_t *sa, int rb, const int64_t *sb, int *rank,
                         int64_t *shape) {
  int r = ra > rb ? ra : rb;
  for (int d = 0; d < r; d++) {
    int64_t a = d - (r - ra) >= 0 ? sa[d - (r - ra)] : 1;
    int64_t b = d - (r - rb) >= 0 ? sb[d - (r - rb)] : 1;
    if (a == b || b == 1) shape[d] = a;
    else if (a == 1) shape[d] = b;
    else return false;
  }
  *rank = r;
  return true;
}

void bxr_iter_init(struct bxr_iter *it, int rank, const int64_t *shape, int nops, ...) {
  BXR_ASSERT(nops >= 1 && nops <= BXR_ITER_MAX && rank >= 0 && rank <= BEXT_MAX_RANK);
  va_list ap;
  va_start(ap, nops);
  it->rank = rank;
  it->nops = nops;
  it->numel = bxr_numel(rank, shape);
  for (int d = 0; d < rank; d++) {
    it->shape[d] = shape[d];
    it->idx[d] = 0;
  }
  for (int k = 0; k < nops; k++) {
    const int64_t *s = va_arg(ap, const int64_t *);
    for (int d = 0; d < rank; d++) it->strides[k][d] = s[d];
    it->off[k] = 0;
  }
  va_end(ap);
}

void bxr_iter_next(struct bxr_iter *it) {
  for (int d = it->rank - 1; d >= 0; d--) {
    if (++it->idx[d] < it->shape[d]) {
      for (int k = 0; k < it->nops; k++) it->off[k] += it->strides[k][d];
      return;
    }
    it->idx[d] = 0;
    for (int k = 0; k < it->nops; k++) it->off[k] -= it->strides[k][d] * (it->shape[d] - 1);
  }
}

/* ---------------------------------------------------- materialization */

void bxr_copy_to_contiguous(const bext_tensor *t, void *dst) {
  size_t es = bext_dtype_size(t->dtype);
  int64_t n = bxr_numel(t->rank, t->shape);
  if (n == 0) return;
  const char *src = bxr_data(t);
  if (bxr_is_contiguous(t)) {
    memcpy(dst, src, (size_t)n * es);
    return;
  }
  struct bxr_iter it;
  bxr_iter_init(&it, t->rank, t->shape, 1, t->strides);
  char *d = dst;
  for (int64_t i = 0; i < n; i++) {
    memcpy(d + (size_t)i * es, src + it.off[0] * (int64_t)es, es);
    bxr_iter_next(&it);
  }
}

bext_tensor *bxr_make_contiguous(bext_tensor *t) {
  if (bxr_is_contiguous(t)) return t;
  bext_tensor *c = bxr_tensor_new(t->device, t->dtype, t->rank, t->shape);
  if (c && !t->device->vt->copy(c, t)) {
    bext_release(c);
    c = NULL;
  }
  bext_release(t);
  return c;
}

/* --------------------------------------------------- host data members */

/* Through the storage's own hook: freed where it came from even after
 * bext_set_allocator switched hooks (see bxr_storage_hook). */
bool bxr_host_storage_alloc(struct bxr_storage *s, size_t bytes) {
  s->data = bxr_alloc_from(bxr_storage_hook(s), bytes);
  return s->data != NULL;
}

void bxr_host_storage_free(struct bxr_storage *s) {
  bxr_free_to(bxr_storage_hook(s), s->data, s->bytes);
}

bext_tensor *bxr_host_from_data(struct bext_device *dev, bext_dtype dt, int rank, const int64_t *shape,
                                const void *src) {
  bext_tensor *t = bxr_tensor_new(dev, dt, rank, shape);
  size_t n = t ? (size_t)bxr_numel(rank, shape) * bext_dtype_size(dt) : 0;
  if (n) memcpy(bxr_data(t), src, n);
  return t;
}

bool bxr_host_read(const bext_tensor *t, void *dst) {
  bxr_copy_to_contiguous(t, dst);
  return true;
}

bool bxr_host_copy(bext_tensor *dst, const bext_tensor *src) {
  bxr_copy_to_contiguous(src, bxr_data(dst));
  return true;
}

/* ------------------------------------------------------- public queries */

#define NEED(t, api, ret)                                          \
  do {                                                             \
    if (!(t)) {                                                    \
      bxr_error_null("%s: NULL tensor handle", api);            \
      return ret;                                                  \
    }                                                              \
  } while (0)

int bext_rank(const bext_tensor *t) {
  NEED(t, "bext_rank", 0);
  return t->rank;
}
const int64_t *bext_shape(const bext_tensor *t) {
  NEED(t, "bext_shape", NULL);
  return t->shape;
}
const int64_t *bext_strides(const bext_tensor *t) {
  NEED(t, "bext_strides", NULL);
  return t->strides;
}
int64_t bext_dim(const bext_tensor *t, int dim) {
  NEED(t, "bext_dim", -1);
  int d = dim < 0 ? dim + t->rank : dim;
  if (d < 0 || d >= t->rank) {
    char b[200];
    bxr_error("bext_dim: dim %d out of range for %s (rank %d)", dim, bxr_describe(t, b, sizeof b),
              t->rank);
    return -1;
  }
  return t->shape[d];
}
int64_t bext_numel(const bext_tensor *t) {
  NEED(t, "bext_numel", 0);
  return bxr_numel(t->rank, t->shape);
}
bext_dtype bext_dtype_of(const bext_tensor *t) {
  NEED(t, "bext_dtype_of", BEXT_F32);
  return t->dtype;
}
bool bext_is_contiguous(const bext_tensor *t) {
  NEED(t, "bext_is_contiguous", false);
  return bxr_is_contiguous(t);
}
int bext_refcount(const bext_tensor *t) {
  NEED(t, "bext_refcount", 0);
  return atomic_load(&t->refcount);
}
const bext_device *bext_device_of(const bext_tensor *t) {
  NEED(t, "bext_device_of", NULL);
  return t->device;
}

/* --------------------------------------------------------- data in/out */

static bool check_shape(const char *api, const int64_t *shape, int rank) {
  if (rank < 0 || rank > BEXT_MAX_RANK)
    return bxr_error("%s: rank %d out of range (0..%d)", api, rank, BEXT_MAX_RANK);
  if (rank > 0 && !shape) return bxr_error("%s: shape is NULL for rank %d", api, rank);
  for (int i = 0; i < rank; i++)
    if (shape[i] < 0) {
      char sh[160];
      return bxr_error("%s: negative extent in shape %s", api, bxr_describe_shape(rank, shape, sh, sizeof sh));
    }
  return true;
}

bext_tensor *bext_from_data(const void *data, bext_dtype dtype, const int64_t *shape, int rank,
                            const bext_device *dev) {
  const char *api = "bext_from_data";
  if (!bext_dtype_valid(dtype)) return bxr_error("%s: invalid dtype %d", api, (int)dtype), NULL;
  if (!check_shape(api, shape, rank)) return NULL;
  struct bext_device *d = bxr_device_resolve(dev, api);
  if (!d) return NULL;
  if (bxr_numel(rank, shape) > 0 && !data) return bxr_error("%s: data is NULL for a non-empty tensor", api), NULL;
  return d->vt->from_data(d, dtype, rank, shape, data);
}

bool bext_read(const bext_tensor *t, void *out, size_t out_bytes) {
  NEED(t, "bext_read", false);
  size_t need = (size_t)bxr_numel(t->rank, t->shape) * bext_dtype_size(t->dtype);
  if (need == 0) return true;
  if (!out) return bxr_error("bext_read: output buffer is NULL");
  if (out_bytes < need) {
    char b[200];
    return bxr_error("bext_read: buffer of %zu bytes too small for %s (%zu bytes)", out_bytes,
                     bxr_describe(t, b, sizeof b), need);
  }
  return t->device->vt->read(t, out);
}

bext_tensor *bext_to_device(bext_tensor *t, const bext_device *dev) {
  NEED(t, "bext_to_device", NULL);
  struct bext_device *d = bxr_device_resolve(dev, "bext_to_device");
  if (!d) {
    bext_release(t);
    return NULL;
  }
  if (d == t->device) return t;
  /* Through host memory: read row-major on the source device, upload on
   * the target.  Fine for CPU backends; GPU backends may add a direct path. */
  size_t bytes = (size_t)bxr_numel(t->rank, t->shape) * bext_dtype_size(t->dtype);
  bext_tensor *out = NULL;
  void *tmp = bxr_alloc(bytes);
  if (tmp && t->device->vt->read(t, tmp)) out = d->vt->from_data(d, t->dtype, t->rank, t->shape, tmp);
  bxr_free(tmp, bytes);
  bext_release(t);
  return out;
}

bext_tensor *bext_contiguous(bext_tensor *t) {
  NEED(t, "bext_contiguous", NULL);
  /* Opaque storage (a lazy or remote tensor, a decorator's wrapper) has
   * no strided views to materialize; buffers of a backend's own, host or
   * device memory (cube:vulkan), do: its copy member makes one. */
  if (!t->device->vt->storage_alloc) return t;
  return bxr_make_contiguous(t);
}
