/* tensor.h — the tensor handle and its refcounted storage, plus the layout
 * helpers every backend shares: contiguity, index math, strided iteration,
 * broadcast strides, views and materialization.
 *
 * A handle is a strided view (shape, strides in elements, offset in
 * elements) of a storage.  Views share the storage (its own refcount);
 * a handle is "unique" — an owned operand a backend may overwrite in place —
 * when the handle's refcount is 1 and its storage's refcount is 1.
 *
 * Memory: bxr_tensor_new puts the storage record and the first handle in
 * ONE block from the per-thread block cache (alloc.c), and, on backends
 * with inline_small, a small buffer right after them: one allocation per
 * small tensor.  That handle is "embedded": its memory is freed with the
 * storage record (when the last view of the storage dies), not when the
 * handle's own count reaches 0.  View handles are lone blocks.  A
 * storage's separate buffer comes from, and goes back to, the hook its
 * block came from (bxr_storage_hook), whatever hook is installed later.
 *
 * Handle counts are BIASED towards the creating thread (Choi et al.'s
 * biased reference counting, in its simplest form): while t->owner is the
 * creating thread's id, only that thread changes t->refcount, with plain
 * load/store (a locked RMW costs more than a whole small op).  The first
 * retain or release from any other thread "unbiases" the handle: it marks
 * t->owner as being taken over, runs the heavy half of an asymmetric fence
 * (membarrier) and waits until the owner is not inside a count update
 * (t->busy), then sets t->owner to 0; from then on every thread uses
 * atomic RMWs (relaxed retain, acq_rel release).  The owner's fast path
 * publishes t->busy before re-checking t->owner, the light half of the
 * fence, so either the owner sees the take-over or the taker sees busy.
 * The count itself is always the total; only who may write it changes.
 * Without membarrier (bxr_bias_on == 0) handles start unbiased.
 *
 * Releasing a reference that is provably the last one (count 1 seen with
 * acquire while we hold it: nobody else can retain without a reference)
 * skips the RMW; storage counts are never biased (views are rare). */
#ifndef BXR_TENSOR_H
#define BXR_TENSOR_H

#include <stdatomic.h>

#include "internal.h"

struct bxr_backend;
struct bext_device;

/* A buffer owned by one device's backend.  For host-memory backends
 * (ndarray, flex) data is host memory; others keep data NULL and use priv
 * (opaque storage: device memory, a lazy placeholder, a remote id, a
 * decorator's inner tensor). */
struct bxr_storage {
  atomic_int refcount;
  signed char cls;     /* block class of the block starting with this record */
  bool inline_data;    /* data lives in that block (no storage_alloc/free) */
  struct bext_device *device;
  void *data;      /* host pointer (host-memory backends); NULL when opaque */
  size_t bytes;    /* size requested at allocation */
  void *priv;      /* backend-private (e.g. a caching allocator's block) */
  void (*free_priv)(void *priv);  /* opaque storage: releases priv */
};

struct bext_tensor {
  atomic_int refcount;
  bool embedded;       /* lives in its storage's block (freed with it) */
  signed char cls;     /* block class of a lone handle (embedded: unused) */
  atomic_uchar busy;   /* owner inside a plain count update */
  bool contig;         /* bxr_layout_contiguous of shape and strides, set by
                          the constructor (neither ever changes afterwards) */
  _Atomic uint64_t owner;  /* biased: owning thread id; 1: being taken over; 0: shared */
  struct bext_device *device;      /* its device; device->vt is the backend */
  /* The handle's spec, in place: inference reads &t->spec with no copy,
   * while t->dtype / t->rank / t->shape keep their spellings (the two
   * members share one layout, asserted below). */
  union {
    bext_spec spec;
    struct {
      bext_dtype dtype;
      int rank;
      int64_t shape[BEXT_MAX_RANK];
    };
  };
  int64_t strides[BEXT_MAX_RANK];  /* in elements; 0 for expanded dims */
  int64_t offset;                  /* in elements, into storage */
  struct bxr_storage *storage;
  void *autodiff;                  /* autodiff slot: NULL until autodiff exists */
  void *priv;                      /* backend-private, NULL if unused */
};
_Static_assert(offsetof(struct bext_tensor, dtype) == offsetof(struct bext_tensor, spec.dtype) &&
                   offsetof(struct bext_tensor, rank) == offsetof(struct bext_tensor, spec.rank) &&
                   offsetof(struct bext_tensor, shape) == offsetof(struct bext_tensor, spec.shape) &&
                   sizeof(((struct bext_tensor *)0)->shape) == sizeof(((bext_spec *)0)->shape),
               "bext_tensor's spec and its named fields must coincide");

/* ---------------------------------------------------------- construction */
/* A new contiguous tensor with freshly allocated storage on dev (contents
 * undefined).  NULL + error on allocation failure or bad shape. */
BXR_FUNC bext_tensor *bxr_tensor_new(struct bext_device *dev, bext_dtype dt, int rank,
                                     const int64_t *shape);
/* A new handle on dev whose storage holds no buffer: priv is the
 * backend's (taken over; released by free_priv when the last view dies). */
BXR_FUNC bext_tensor *bxr_tensor_new_opaque(struct bext_device *dev, bext_dtype dt, int rank,
                                            const int64_t *shape, void *priv,
                                            void (*free_priv)(void *priv));
/* A new handle viewing base's storage (storage retained; base borrowed). */
BXR_FUNC bext_tensor *bxr_tensor_view(const bext_tensor *base, int rank, const int64_t *shape,
                                      const int64_t *strides, int64_t offset);
/* Storage refcounting (bxr_storage_release frees through the backend's storage_free). */
BXR_FUNC void bxr_storage_retain(struct bxr_storage *s);
BXR_FUNC void bxr_storage_release(struct bxr_storage *s);
/* The hook s's buffers are allocated from and freed to (storage_alloc /
 * storage_free use bxr_alloc_from / bxr_free_to with it): the one s's
 * record block came from.  bxr_tensor_new takes that block from the hook
 * installed then, so it is the hook of the call that made s — recorded
 * for free in the block prefix, so a hook switched while s is alive
 * never sees s's buffers. */
static inline struct bxr_hook bxr_storage_hook(const struct bxr_storage *s) {
  return bxr_block_hook(s);   /* the record starts its block */
}
/* Frees a handle whose count just reached 0 (releases its storage). */
BXR_FUNC void bxr_tensor_destroy(bext_tensor *t);
/* Panics: a handle released more often than retained. */
BXR_FUNC _Noreturn void bxr_over_release(void);

/* Unbiases t (see above) unless it is shared already or ours. */
BXR_FUNC void bxr_unbias(bext_tensor *t);

/* Owner fast path: runs with busy published; false when the handle was
 * taken over meanwhile (busy cleared again, nothing changed). */
static inline bool bxr_owner_enter(bext_tensor *t, uint64_t me) {
  atomic_store_explicit(&t->busy, 1, memory_order_relaxed);
  atomic_signal_fence(memory_order_seq_cst);  /* light half of the fence */
  if (__builtin_expect(atomic_load_explicit(&t->owner, memory_order_relaxed) == me, 1)) return true;
  atomic_store_explicit(&t->busy, 0, memory_order_release);
  return false;
}

/* bext_retain for a non-NULL handle. */
static inline void bxr_retain(bext_tensor *t) {
  uint64_t me = bxr_tls_id;
  if (me && atomic_load_explicit(&t->owner, memory_order_relaxed) == me && bxr_owner_enter(t, me)) {
    int rc = atomic_load_explicit(&t->refcount, memory_order_relaxed);
    atomic_store_explicit(&t->refcount, rc + 1, memory_order_relaxed);
    atomic_store_explicit(&t->busy, 0, memory_order_release);
    return;
  }
  if (atomic_load_explicit(&t->owner, memory_order_acquire) != 0) bxr_unbias(t);
  atomic_fetch_add_explicit(&t->refcount, 1, memory_order_relaxed);
}

/* bext_release for a non-NULL handle, inlined into the runtime's hot paths. */
static inline void bxr_release(bext_tensor *t) {
  uint64_t me = bxr_tls_id;
  if (me && atomic_load_explicit(&t->owner, memory_order_relaxed) == me && bxr_owner_enter(t, me)) {
    int rc = atomic_load_explicit(&t->refcount, memory_order_relaxed);
    /* release: our reads of the data happen before anyone reuses it */
    if (rc > 0) atomic_store_explicit(&t->refcount, rc - 1, memory_order_release);
    atomic_store_explicit(&t->busy, 0, memory_order_release);
    if (rc == 1) bxr_tensor_destroy(t);
    else if (rc <= 0) bxr_over_release();
    return;
  }
  if (atomic_load_explicit(&t->owner, memory_order_acquire) != 0) bxr_unbias(t);
  int rc = atomic_load_explicit(&t->refcount, memory_order_acquire);
  if (rc == 1) {
    /* Ours alone: no other holder can race with us, so no RMW.  The 0
     * left behind makes a second release panic while the block is idle. */
    atomic_store_explicit(&t->refcount, 0, memory_order_relaxed);
    bxr_tensor_destroy(t);
    return;
  }
  if (rc <= 0) bxr_over_release();
  int old = atomic_fetch_sub_explicit(&t->refcount, 1, memory_order_acq_rel);
  if (old == 1) bxr_tensor_destroy(t);
  else if (old <= 0) bxr_over_release();
}

/* ----------------------------------------------------------------- queries */
static inline int64_t bxr_numel(int rank, const int64_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++) n *= shape[i];
  return n;
}
/* numel * element size, or SIZE_MAX when it overflows. */
BXR_FUNC size_t bxr_nbytes(bext_dtype dt, int rank, const int64_t *shape);
BXR_FUNC void bxr_contiguous_strides(int rank, const int64_t *shape, int64_t *strides);
/* Row-major contiguous (size-1 and empty dims ignore their stride). */
static inline bool bxr_layout_contiguous(int rank, const int64_t *shape, const int64_t *strides) {
  int64_t s = 1;
  for (int i = rank - 1; i >= 0; i--) {
    if (shape[i] == 0) return true;
    if (shape[i] != 1 && strides[i] != s) return false;
    s *= shape[i];
  }
  return true;
}
/* The same for a handle: a flag its constructor computed (small ops ask
 * it for every operand). */
static inline bool bxr_is_contiguous(const bext_tensor *t) { return t->contig; }
/* Handle refcount 1 and storage refcount 1: safe to overwrite in place.
 * Always inlined: small ops ask it up to twice, and a call costs more
 * than the answer. */
static inline __attribute__((always_inline)) bool bxr_is_unique(const bext_tensor *t) {
  /* Biased towards another thread: its owner may be changing the count,
   * so never unique from here (conservative: no in-place reuse). */
  uint64_t o = atomic_load_explicit(&t->owner, memory_order_relaxed);
  if (o != 0 && o != bxr_tls_id) return false;
  return atomic_load_explicit(&t->refcount, memory_order_acquire) == 1 &&
         atomic_load_explicit(&t->storage->refcount, memory_order_acquire) == 1;
}
/* Host pointer to element 0 of the view (storage data + offset). */
static inline void *bxr_data(const bext_tensor *t) {
  return (char *)t->storage->data + t->offset * (int64_t)bxr_dtype_size(t->dtype);
}
/* Same rank and extents. */
static inline bool bxr_same_shape(int ra, const int64_t *sa, int rb, const int64_t *sb) {
  if (ra != rb) return false;
  for (int d = 0; d < ra; d++)
    if (sa[d] != sb[d]) return false;
  return true;
}
/* Same dtype, rank and extents. */
static inline bool bxr_same_spec(const bext_spec *a, const bext_spec *b) {
  return a->dtype == b->dtype && bxr_same_shape(a->rank, a->shape, b->rank, b->shape);
}

/* ---------------------------------------------------------- index math */
/* Storage offset (relative to the view's element 0) of the row-major linear
 * index i of a view with this shape/strides. */
BXR_FUNC int64_t bxr_offset_of(int64_t i, int rank, const int64_t *shape, const int64_t *strides);
/* Strides that read t as if broadcast to (rank, shape): t's dims align on
 * the right; stretched (size-1 or missing) dims get stride 0.  False when
 * not broadcastable (no error set). */
BXR_FUNC bool bxr_broadcast_strides(const bext_tensor *t, int rank, const int64_t *shape,
                                    int64_t *strides);
/* NumPy broadcast of two shapes; false when incompatible (no error set). */
BXR_FUNC bool bxr_broadcast_shape(int ra, const int64_t *sa, int rb, const int64_t *sb,
                                  int *rank, int64_t *shape);

/* Strided iteration over up to 4 operands sharing one shape, row-major:
 *   struct bxr_iter it; bxr_iter_init(&it, rank, shape, 2, strides_a, strides_b);
 *   for (int64_t n = 0; n < it.numel; n++) { use it.off[0], it.off[1]; bxr_iter_next(&it); }
 * off[k] is the element offset of operand k (relative to its element 0). */
#define BXR_ITER_MAX 4
struct bxr_iter {
  int rank, nops;
  int64_t numel;
  int64_t shape[BEXT_MAX_RANK];
  int64_t idx[BEXT_MAX_RANK];
  int64_t strides[BXR_ITER_MAX][BEXT_MAX_RANK];
  int64_t off[BXR_ITER_MAX];
};
BXR_FUNC void bxr_iter_init(struct bxr_iter *it, int rank, const int64_t *shape, int nops, ...);
BXR_FUNC void bxr_iter_next(struct bxr_iter *it);

/* ------------------------------------------------------ materialization */
/* Copies a host tensor (any layout) into dst, row-major contiguous. */
BXR_FUNC void bxr_copy_to_contiguous(const bext_tensor *t, void *dst);
/* t itself when contiguous (offset may be nonzero), else a contiguous copy
 * on the same backend.  OWNS t; NULL + error on allocation failure. */
BXR_FUNC bext_tensor *bxr_make_contiguous(bext_tensor *t);

#endif /* BXR_TENSOR_H */
