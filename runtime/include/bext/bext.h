/* bext.h — the public C API of libbext, the bext tensor runtime.
 *
 * One umbrella header: tensor handles, dtypes, devices, data in/out, the
 * core op set, errors and the allocation hook.  The op table itself and
 * spec-level inference (bext_infer) are in bext/ops.h, which bextc
 * includes too; extension descriptors in bext/ext.h.
 *
 * OWNERSHIP CONVENTION (applies to every function below; each one restates
 * which it does):
 *   - OWNED   tensor operands of ops are consumed: the call takes over the
 *             caller's reference, whether it succeeds or fails.  That lets a
 *             backend reuse a uniquely held buffer in place (Burn-style).
 *             Keep a reference for yourself with bext_retain() first.
 *   - BORROWED queries and reads (bext_rank, bext_read, ...) never change
 *             the reference count.
 *   - Every returned tensor is a NEW reference owned by the caller, to be
 *     given to an op or dropped with bext_release().
 * On error an op still consumes its owned operands and returns NULL; the
 * reason is in bext_last_error() (thread-local), naming the op, the operand
 * shapes/dtypes and what was wrong.  NULL handles are accepted everywhere
 * and answered with an error, never a crash.
 *
 * Dims may be negative (Python style: -1 is the last dim).  Scalars are
 * passed as double; for integer tensors they are truncated toward zero and
 * saturated to int64 first.
 */
#ifndef BEXT_BEXT_H
#define BEXT_BEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bext/config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ dtypes */

#define BEXT_MAX_RANK 8

typedef enum bext_kind {
  BEXT_KIND_FLOAT = 0,
  BEXT_KIND_INT = 1,
  BEXT_KIND_BOOL = 2
} bext_kind;

/* The one dtype table: X(ENUM, name, C storage type, size, kind).
 * f16 / bf16 are stored as their IEEE / bfloat16 bit patterns (uint16_t);
 * bool as one byte holding 0 or 1.  ORDER DTYPE: the enum follows it. */
#define BEXT_DTYPES(X)                                   \
  X(F32, f32, float, 4, BEXT_KIND_FLOAT)                 \
  X(F64, f64, double, 8, BEXT_KIND_FLOAT)                \
  X(F16, f16, uint16_t, 2, BEXT_KIND_FLOAT)              \
  X(BF16, bf16, uint16_t, 2, BEXT_KIND_FLOAT)            \
  X(I32, i32, int32_t, 4, BEXT_KIND_INT)                 \
  X(I64, i64, int64_t, 8, BEXT_KIND_INT)                 \
  X(U8, u8, uint8_t, 1, BEXT_KIND_INT)                   \
  X(BOOL, bool, uint8_t, 1, BEXT_KIND_BOOL)

typedef enum bext_dtype {
#define BEXT_X_(E, n, t, s, k) BEXT_##E,
  BEXT_DTYPES(BEXT_X_)
#undef BEXT_X_
  BEXT_DTYPE_COUNT
} bext_dtype;

const char *bext_dtype_name(bext_dtype dt);   /* "f32"...; "?" when invalid */
size_t bext_dtype_size(bext_dtype dt);        /* bytes per element; 0 when invalid */
bext_kind bext_dtype_kind(bext_dtype dt);     /* float / int / bool */
bool bext_dtype_valid(bext_dtype dt);
/* Parses "f32", "i64", "bool", ... ; false (and an error) when unknown. */
bool bext_dtype_from_name(const char *name, bext_dtype *out);

/* ----------------------------------------------------------------- devices */

/* THE backend table, one row per backend: X(ENUM, spelling, Selector).
 * The device parser, messages, bextc's backend selectors and the
 * availability macros of generated code all come from it: a backend this
 * build compiles in has BEXT_HAVE_<ENUM> defined to 1 in <bext/config.h>
 * (written by the build from the folders under backends/).  Adding a
 * backend = its folder + one row here.  ORDER BACKEND: language.md §3's
 * selector order (messages list them so). */
#define BEXT_BACKENDS(X)          \
  X(CUBE, cube, Cube)             \
  X(FLEX, flex, Flex)             \
  X(NDARRAY, ndarray, NdArray)    \
  X(LIBTORCH, libtorch, LibTorch) \
  X(REMOTE, remote, Remote)

typedef enum bext_backend_kind {
#define BEXT_X_(E, s, S) BEXT_BACKEND_##E,
  BEXT_BACKENDS(BEXT_X_)
#undef BEXT_X_
  BEXT_BACKEND_COUNT
} bext_backend_kind;

/* THE table of decorator layers, which stack over a backend:
 * X(ENUM, spelling, Selector, depth).  depth orders a stack: a layer of
 * smaller depth sits closer to the backend (fusion records what autodiff
 * emits), so "flex+fusion+autodiff" is valid and "flex+autodiff+fusion"
 * is not.  ORDER LAYER: the selector order of messages. */
#define BEXT_LAYERS(X)                  \
  X(AUTODIFF, autodiff, Autodiff, 2)    \
  X(FUSION, fusion, Fusion, 1)

typedef enum bext_layer_kind {
#define BEXT_X_(E, s, S, d) BEXT_LAYER_##E,
  BEXT_LAYERS(BEXT_X_)
#undef BEXT_X_
  BEXT_LAYER_COUNT
} bext_layer_kind;

/* Spellings ("flex", "fusion"); "?" when out of range. */
const char *bext_backend_name(bext_backend_kind kind);
const char *bext_layer_name(bext_layer_kind layer);

/* Autodiff's checkpointing strategy, "+autodiff(balanced)". */
typedef enum bext_autodiff_strategy {
  BEXT_AUTODIFF_NONE = 0,      /* keep every activation (the default) */
  BEXT_AUTODIFF_BALANCED = 1   /* keep compute-bound outputs (matmul, reductions) as
                                  * checkpoints, recompute memory-bound ops (elementwise,
                                  * layout, indexing) in backward: the same gradients bit
                                  * for bit, a lower peak (docs/runtime.md "Autodiff") */
} bext_autodiff_strategy;

/* A device is an object: one backend instance (its per-device state: a
 * thread pool, a CUDA context, a connection) plus the decorator layers
 * over it.  Device strings:
 *   device   := backend ["+fusion"] ["+autodiff" ["(" strategy ")"]]
 *   strategy := "none" | "balanced"                  (none is the default)
 *   backend  := "ndarray" | "flex"
 *             | "cube:" ("cpu" | ("vulkan"|"cuda"|"hip") [":" index])
 *             | "libtorch:" ("cpu" | "cuda" [":" index])
 *             | "remote:" address          (e.g. remote:tcp://127.0.0.1:7878)
 * bext_device_get parses a string and returns THE device for it: devices
 * live in one process-wide registry (thread-safe), made on first use and
 * never freed, so equal specs give the same pointer ("cube:cuda" and
 * "cube:cuda:0", "+autodiff" and "+autodiff(none)" are equal) and a device
 * pointer may be kept and compared freely.  A syntactically valid device
 * whose backend or layer this build lacks is still a device: using it is
 * answered "... not available in this build", not a syntax error.  NULL +
 * an error naming the problem for bad syntax. */
typedef struct bext_device bext_device;
const bext_device *bext_device_get(const char *spec);

/* Canonical spelling ("flex", "cube:vulkan:0+fusion", "flex+autodiff(balanced)"),
 * valid for the life of the process.  NULL -> "NULL". */
const char *bext_device_name(const bext_device *dev);
/* The base backend under every layer, and its device index (0 when the
 * backend has none). */
bext_backend_kind bext_device_backend(const bext_device *dev);
int bext_device_index(const bext_device *dev);
/* A decorator device's outermost layer spelling ("fusion", "autodiff", or a
 * layer a test registered) and the device it wraps ("flex+fusion" for
 * "flex+fusion+autodiff"); NULL for a base device. */
const char *bext_device_layer(const bext_device *dev);
const bext_device *bext_device_inner(const bext_device *dev);
/* True when this build can create tensors on dev (its backend and every
 * layer are compiled in); false + an error naming the device else. */
bool bext_device_available(const bext_device *dev);
/* The default device: flex (the fastest CPU path that is always there;
 * ndarray in a build without flex), unless bext_set_default_device chose
 * another.  Used when an op gets dev == NULL. */
const bext_device *bext_device_default(void);
/* Changes the process-wide default (atomic; set it before starting
 * threads that rely on it).  False (and an error) when the device is not
 * available; NULL restores the build's default. */
bool bext_set_default_device(const bext_device *dev);
/* Fills out[0..cap) with the available base devices of this build, in
 * table order ("cube:cpu" ... "flex", "ndarray"), and returns how many
 * there are (which may exceed cap).  Remote devices are not listed: each
 * is a server at an address (remote:tcp://HOST:PORT). */
int bext_device_list(const bext_device **out, int cap);
/* Finishes all work queued on dev (and on the devices it wraps).  A no-op
 * on eager devices.  False + error when the device is not available or a
 * deferred op failed (the error names that op). */
bool bext_sync(const bext_device *dev);
/* Memory of a device, in bytes.  live: storage of tensors alive on it
 * (buffers of the inline threshold and up; small tensors riding in their
 * handle's block are not counted); peak: the largest live since the
 * device was made or its peak last reset; cached: freed buffers the
 * backend keeps for reuse (Flex's large-buffer cache). */
typedef struct bext_memory {
  size_t live_bytes;
  size_t peak_bytes;
  size_t cached_bytes;
} bext_memory;
bool bext_memory_stats(const bext_device *dev, bext_memory *out);
/* Sets dev's peak to its current live bytes (tests measure one phase). */
bool bext_memory_reset_peak(const bext_device *dev);
/* What the +fusion layer did since the process started, over every fusion
 * device and thread (docs/runtime.md "Fusion"): ops recorded and run (or
 * dropped: nobody could read their result), stream flushes, plans built
 * and replayed from the cache (segments past the cache's cap run without
 * one), fused kernels compiled and launched, ops run inside them, and
 * fused kernels that ended in a reduction (a chain read by a sum, mean,
 * prod, max or min). */
typedef struct bext_fusion_stat {
  uint64_t ops_recorded, ops_run, ops_dropped, flushes;
  uint64_t plans_built, plans_reused, segments_unplanned;
  uint64_t kernels_compiled, kernels_launched, ops_fused;
  uint64_t reductions_fused;
} bext_fusion_stat;
bool bext_fusion_stats(bext_fusion_stat *out);
/* Closes dev: frees its caches and per-device state (drops a connection).
 * The device object stays valid, its tensors stay usable, and its next use
 * opens it again.  True on success (and for a device never opened).  Like
 * bext_set_allocator, not for a moment when other threads are inside a
 * call on dev: close between phases of a program. */
bool bext_device_close(const bext_device *dev);

/* ----------------------------------------------------------------- handles */

typedef struct bext_tensor bext_tensor;

/* A tensor's spec: what inference reads and computes (bext/ops.h's
 * bext_infer).  Every handle carries one (runtime/src/tensor.h). */
typedef struct bext_spec {
  bext_dtype dtype;
  int rank;
  int64_t shape[BEXT_MAX_RANK];
} bext_spec;

/* Adds a reference (atomic); returns t.  NULL -> NULL. */
bext_tensor *bext_retain(bext_tensor *t);
/* Drops a reference (atomic); frees the handle at zero and its storage when
 * no view shares it.  NULL is a no-op. */
void bext_release(bext_tensor *t);

/* Queries: all BORROW.  On a NULL handle they set an error and return
 * 0 / NULL / false. */
int bext_rank(const bext_tensor *t);
/* Pointer to rank extents, valid while t lives. */
const int64_t *bext_shape(const bext_tensor *t);
/* Pointer to rank strides in elements (views may be non-contiguous). */
const int64_t *bext_strides(const bext_tensor *t);
int64_t bext_dim(const bext_tensor *t, int dim);  /* -1 + error when out of range */
int64_t bext_numel(const bext_tensor *t);
bext_dtype bext_dtype_of(const bext_tensor *t);
/* The device t lives on (its whole layer stack); NULL + error for NULL. */
const bext_device *bext_device_of(const bext_tensor *t);
bool bext_is_contiguous(const bext_tensor *t);
/* Number of references to the handle (diagnostics and tests). */
int bext_refcount(const bext_tensor *t);

/* -------------------------------------------------------------- data in/out */

/* Copies numel(shape) elements of dtype from data (row-major) into a new
 * tensor on dev (NULL: default).  data may be NULL only when numel is 0. */
bext_tensor *bext_from_data(const void *data, bext_dtype dtype, const int64_t *shape,
                            int rank, const bext_device *dev);
/* Copies t out in row-major order whatever its layout.  BORROWS t.
 * out_bytes must be at least numel * dtype size.  False + error else. */
bool bext_read(const bext_tensor *t, void *out, size_t out_bytes);
/* Moves t to dev (OWNED t).  Same device: returns t itself. */
bext_tensor *bext_to_device(bext_tensor *t, const bext_device *dev);
/* A contiguous tensor with t's values (OWNED t; returns t when it already is). */
bext_tensor *bext_contiguous(bext_tensor *t);

/* Direct access to a tensor's elements, for kernels written in C (an
 * extension's per-backend implementation), on devices whose memory is host
 * memory (flex, ndarray).  Both BORROW t and return a BORROWED pointer to
 * element 0 of t's view (the storage plus the view's offset), in t's dtype's
 * C storage type (BEXT_DTYPES).  The pointer stays valid while the caller's
 * reference t lives and until t is given to an op (ops consume their
 * operands and may reuse or free the buffer) or released; never free it.
 * For an empty tensor (numel 0) it is a non-NULL pointer that must not be
 * dereferenced; NULL always means an error.
 *
 * bext_data (read-only) accepts any layout, like PyTorch's data_ptr:
 * element (i0, i1, ...) is at ptr[i0*strides[0] + i1*strides[1] + ...]
 * with bext_strides(t) (in elements; 0 for expanded dims, so one element
 * may appear at many indices).  Call bext_contiguous first to get the
 * row-major layout, where element i is ptr[i].  Do not write through it:
 * other handles (views, retained copies) may share the storage.
 *
 * bext_data_mut (read-write) requires a contiguous tensor (row-major:
 * element i is ptr[i]) that is uniquely held: one reference to the handle
 * and no other view of its storage, so writing cannot change the values
 * another handle sees.  A fresh bext_empty / bext_zeros result qualifies.
 * Otherwise NULL, and the error names the function, t's shape and dtype and
 * the problem: "is not contiguous: call bext_contiguous first", "is shared
 * (2 references)", "shares its storage with another view".
 * Both answer NULL + error for a NULL handle and for a tensor on a device
 * whose memory is not host memory ("lives on device 'X' whose memory is not
 * host memory": move it with bext_to_device, or use ops). */
const void *bext_data(const bext_tensor *t);
void *bext_data_mut(bext_tensor *t);

/* Saving and loading named tensors in the safetensors format (Hugging
 * Face's: an 8-byte little-endian header size N, N bytes of JSON header
 * naming each tensor's dtype, shape and data_offsets, then the data), so
 * a model trained with bext can be kept and shared with other frameworks.
 * Every bext dtype has its safetensors name: f32 F32, f64 F64, f16 F16,
 * bf16 BF16, i32 I32, i64 I64, u8 U8, bool BOOL (one byte, 0 or 1).
 *
 * bext_save writes tensors[i] under names[i], i < n (n >= 0).  BORROWS the
 * tensors (and both arrays); reads them through bext_read, so any device
 * and any layout (views, expanded dims) works, and the file holds the
 * row-major values.  metadata: NULL, or a NULL-terminated list of key,
 * value strings ("format", "pt", NULL) written as "__metadata__".
 * Names must be non-empty, distinct, valid UTF-8 and not "__metadata__";
 * metadata keys distinct, keys and values valid UTF-8.
 * Layout (what the reference writer does): the data in order of dtype
 * size, largest first, then by name (byte order), so every tensor starts
 * aligned to its element size; the header is compact JSON, "__metadata__"
 * first, then the tensors in data order, padded with spaces to a multiple
 * of 8 bytes.  Atomic: written to "<path>.tmp-<pid>-<k>" in the same
 * directory, flushed to disk, then renamed over path; on failure path is
 * untouched and the temporary file removed.  True on success; false + an
 * error naming the file and what went wrong. */
bool bext_save(const char *path, const char *const *names, bext_tensor *const *tensors, int n,
               const char *const *metadata);

/* A loaded file: its tensors (on the device given to the loader) and
 * metadata, in memory until bext_file_close. */
typedef struct bext_tensor_file bext_tensor_file;
/* Reads a whole safetensors file onto dev (NULL: the default device).
 * The reader trusts nothing in the file: the header size (at most
 * 100,000,000 bytes, like the reference), UTF-8 and JSON, a top-level
 * object, no duplicate names, each tensor's dtype (known to bext), shape
 * (at most 8 non-negative integers), data_offsets (two integers, in the
 * data, holding exactly numel * element size bytes), the tensors covering
 * the data without holes or overlap and nothing after the last one,
 * "__metadata__" an object of strings, and every bool byte 0 or 1.  Any
 * violation: NULL + an error naming the file, the tensor when there is
 * one, and what is wrong, e.g.
 *   bext_load: `w.safetensors`: tensor `w`: data_offsets [0, 12] hold 12
 *   bytes, but shape [2,2] f32 needs 16
 * Never undefined behavior on garbage (the suite fuzzes it). */
bext_tensor_file *bext_load(const char *path, const bext_device *dev);
/* The same from n bytes in memory (BORROWED: only read during the call);
 * messages name the file "<memory>". */
bext_tensor_file *bext_load_bytes(const void *bytes, size_t n, const bext_device *dev);
/* The file's tensors are sorted by name (byte order), index 0..count-1.
 * Names are BORROWED strings valid until bext_file_close. */
int bext_file_count(const bext_tensor_file *f);
const char *bext_file_name(const bext_tensor_file *f, int i);
/* A NEW reference to tensor i / the tensor named name (the file keeps its
 * own until it is closed; both share the storage).  NULL + error for an
 * index out of range or a name the file lacks. */
bext_tensor *bext_file_tensor(const bext_tensor_file *f, int i);
bext_tensor *bext_file_get(const bext_tensor_file *f, const char *name);
/* The "__metadata__" value of key (BORROWED, valid until close); NULL when
 * the file has no such key, which is not an error (keys are optional). */
const char *bext_file_meta(const bext_tensor_file *f, const char *key);
/* Drops the file's references and frees it.  NULL is a no-op. */
void bext_file_close(bext_tensor_file *f);

/* ---------------------------------------------------------------- creation */
/* shape has rank entries (rank 0..8, extents >= 0); dev NULL = default.
 * bext_empty's contents are unspecified (NdArray happens to zero them). */
bext_tensor *bext_empty(const int64_t *shape, int rank, bext_dtype dtype, const bext_device *dev);
bext_tensor *bext_zeros(const int64_t *shape, int rank, bext_dtype dtype, const bext_device *dev);
bext_tensor *bext_ones(const int64_t *shape, int rank, bext_dtype dtype, const bext_device *dev);
bext_tensor *bext_full(const int64_t *shape, int rank, double value, bext_dtype dtype,
                       const bext_device *dev);
/* 1-D: start, start+step, ... while < end (> end for negative step). */
bext_tensor *bext_arange(double start, double end, double step, bext_dtype dtype,
                         const bext_device *dev);
/* Seeded, float dtypes only.  Same seed -> same numbers on every backend
 * (counter-based generator documented in runtime/src/internal.h). */
bext_tensor *bext_random_uniform(const int64_t *shape, int rank, double lo, double hi,
                                 uint64_t seed, bext_dtype dtype, const bext_device *dev);
bext_tensor *bext_random_normal(const int64_t *shape, int rank, double mean, double std,
                                uint64_t seed, bext_dtype dtype, const bext_device *dev);

/* ------------------------------------------------------------------ layout */
/* All OWN their tensor operands. */
/* One extent may be -1 (inferred).  numel must match. */
bext_tensor *bext_reshape(bext_tensor *t, const int64_t *shape, int rank);
bext_tensor *bext_swap_dims(bext_tensor *t, int d0, int d1);
/* The last two dims swapped: bext_swap_dims(t, -2, -1) (rank >= 2). */
bext_tensor *bext_transpose(bext_tensor *t);
/* axes: a permutation of 0..rank-1 (negatives allowed). */
bext_tensor *bext_permute(bext_tensor *t, const int *axes, int rank);
/* NumPy broadcast of t to shape (rank >= t's rank; size-1 dims stretch). */
bext_tensor *bext_expand(bext_tensor *t, const int64_t *shape, int rank);
/* Half-open ranges [start[i], end[i]) for the first n dims (n <= rank);
 * 0 <= start <= end <= extent. */
bext_tensor *bext_slice(bext_tensor *t, const int64_t *start, const int64_t *end, int n);
/* t with the slice replaced by value (value's shape = the slice's shape). */
bext_tensor *bext_slice_assign(bext_tensor *t, const int64_t *start, const int64_t *end,
                               int n, bext_tensor *value);
/* Concatenates count tensors (all OWNED, same dtype/device/rank, equal
 * extents except along dim).  The array itself is borrowed. */
bext_tensor *bext_cat(bext_tensor *const *ts, int count, int dim);
bext_tensor *bext_flip(bext_tensor *t, const int *axes, int n);
bext_tensor *bext_narrow(bext_tensor *t, int dim, int64_t start, int64_t length);
/* Repeats t `times` times along dim: extent becomes extent * times. */
bext_tensor *bext_repeat_dim(bext_tensor *t, int dim, int64_t times);

/* ---------------------------------------------------------------- indexing */
/* indices are i32/i64 tensors; out-of-range indices are an error.  All OWN. */
/* out[..i..] = t[.. indices[..i..] ..] along dim; indices has t's rank and
 * its extents <= t's except along dim; out has indices' shape. */
bext_tensor *bext_gather(bext_tensor *t, int dim, bext_tensor *indices);
/* t with values added at the positions indices give along dim
 * (indices and values have the same shape). */
bext_tensor *bext_scatter_add(bext_tensor *t, int dim, bext_tensor *indices, bext_tensor *values);
/* Picks the slices indices (1-D) along dim. */
bext_tensor *bext_select(bext_tensor *t, int dim, bext_tensor *indices);
/* t with values' slices ADDED at indices (1-D) along dim (index_add). */
bext_tensor *bext_select_assign(bext_tensor *t, int dim, bext_tensor *indices,
                                bext_tensor *values);
/* where(mask, value, t): mask is bool; the three broadcast together. */
bext_tensor *bext_mask_where(bext_tensor *t, bext_tensor *mask, bext_tensor *value);
bext_tensor *bext_mask_fill(bext_tensor *t, bext_tensor *mask, double value);

/* ---------------------------------------------- elementwise, broadcasting */
/* Binary ops take two OWNED tensors of the same dtype and broadcast them
 * NumPy style.  Integers wrap on overflow; integer x/0 and x%0 give 0;
 * rem is the floored modulus (sign of the divisor, Python/Burn style). */
bext_tensor *bext_add(bext_tensor *a, bext_tensor *b);
bext_tensor *bext_sub(bext_tensor *a, bext_tensor *b);
bext_tensor *bext_mul(bext_tensor *a, bext_tensor *b);
bext_tensor *bext_div(bext_tensor *a, bext_tensor *b);  /* ints: truncated */
bext_tensor *bext_rem(bext_tensor *a, bext_tensor *b);
bext_tensor *bext_pow(bext_tensor *a, bext_tensor *b);
bext_tensor *bext_max(bext_tensor *a, bext_tensor *b);  /* elementwise; NaN wins */
bext_tensor *bext_min(bext_tensor *a, bext_tensor *b);
bext_tensor *bext_add_scalar(bext_tensor *a, double s);
bext_tensor *bext_sub_scalar(bext_tensor *a, double s);
bext_tensor *bext_mul_scalar(bext_tensor *a, double s);
bext_tensor *bext_div_scalar(bext_tensor *a, double s);
bext_tensor *bext_rem_scalar(bext_tensor *a, double s);
bext_tensor *bext_pow_scalar(bext_tensor *a, double s);
bext_tensor *bext_max_scalar(bext_tensor *a, double s);
bext_tensor *bext_min_scalar(bext_tensor *a, double s);
/* Comparisons -> bool. */
bext_tensor *bext_eq(bext_tensor *a, bext_tensor *b);
bext_tensor *bext_ne(bext_tensor *a, bext_tensor *b);
bext_tensor *bext_gt(bext_tensor *a, bext_tensor *b);
bext_tensor *bext_ge(bext_tensor *a, bext_tensor *b);
bext_tensor *bext_lt(bext_tensor *a, bext_tensor *b);
bext_tensor *bext_le(bext_tensor *a, bext_tensor *b);
bext_tensor *bext_eq_scalar(bext_tensor *a, double s);
bext_tensor *bext_ne_scalar(bext_tensor *a, double s);
bext_tensor *bext_gt_scalar(bext_tensor *a, double s);
bext_tensor *bext_ge_scalar(bext_tensor *a, double s);
bext_tensor *bext_lt_scalar(bext_tensor *a, double s);
bext_tensor *bext_le_scalar(bext_tensor *a, double s);
/* Bool logic (bool operands only). */
bext_tensor *bext_and(bext_tensor *a, bext_tensor *b);
bext_tensor *bext_or(bext_tensor *a, bext_tensor *b);
bext_tensor *bext_xor(bext_tensor *a, bext_tensor *b);
bext_tensor *bext_not(bext_tensor *a);

/* ------------------------------------------------------------------- unary */
/* OWN t.  neg abs sign relu clamp accept float and int; the rest float. */
bext_tensor *bext_neg(bext_tensor *t);
bext_tensor *bext_abs(bext_tensor *t);
bext_tensor *bext_exp(bext_tensor *t);
bext_tensor *bext_log(bext_tensor *t);
bext_tensor *bext_log1p(bext_tensor *t);
bext_tensor *bext_sqrt(bext_tensor *t);
bext_tensor *bext_rsqrt(bext_tensor *t);
bext_tensor *bext_sin(bext_tensor *t);
bext_tensor *bext_cos(bext_tensor *t);
bext_tensor *bext_tanh(bext_tensor *t);
bext_tensor *bext_erf(bext_tensor *t);
bext_tensor *bext_sigmoid(bext_tensor *t);
bext_tensor *bext_relu(bext_tensor *t);
bext_tensor *bext_recip(bext_tensor *t);
bext_tensor *bext_floor(bext_tensor *t);
bext_tensor *bext_ceil(bext_tensor *t);
bext_tensor *bext_round(bext_tensor *t);   /* half to even */
bext_tensor *bext_sign(bext_tensor *t);
bext_tensor *bext_clamp(bext_tensor *t, double lo, double hi);
bext_tensor *bext_powi(bext_tensor *t, int64_t n);
/* gelu(t) = t * 0.5 * (1 + erf(t / sqrt(2))) (the exact, erf form), float
 * only.  Not a row of the op table: a composition of bext_mul_scalar,
 * bext_erf, bext_add_scalar and bext_mul, so backends see those ops.
 * OWNS t; on failure releases what it holds and returns NULL with the
 * failing op's error. */
bext_tensor *bext_gelu(bext_tensor *t);

/* -------------------------------------------------------------- reductions */
/* Whole-tensor forms return a rank-0 tensor; _dim forms reduce one dim
 * (kept with extent 1 when keepdim).  All OWN t.  sum/prod/max/min keep the
 * dtype; mean of ints divides truncating; argmax/argmin give i64 (first
 * occurrence); any/all take bool and give bool.  max/min/argmax/argmin of
 * an empty extent are an error.
 *
 * ACCURACY of float sum/mean (whole tensor and _dim, every backend): they
 * accumulate in double with pairwise summation, as NumPy does, so the
 * error is O(log2(n) * eps) of sum(|x|) instead of a loop's O(n * eps):
 * |result - exact| <= (24 + log2(n)) * 2^-53 * sum(|x|) (to first order)
 * before the final rounding to the dtype.  Flex sums 256-element leaves in
 * 16 f64 lanes (16-row leaves along an outer dim); ndarray is NumPy's
 * algorithm (8 accumulators over 128-element blocks); cube:cpu sums
 * 256-element leaves in 16 f64 accumulators per output and merges the
 * leaves as a binary counter (stdlib/cube/reduce.bext).  Measured on 1M
 * uniform f64 values: ~3e-17 relative (the plain loop this replaced:
 * ~6e-15); f32 results are within one f32 ulp of the exact sum.  The
 * tree depends on n only, never on the thread count: a threaded flex sum
 * has the serial result's bits.  Backends may differ in the last bits
 * (different leaves).  Integer sums are exact and wrap like the dtype. */
bext_tensor *bext_sum(bext_tensor *t);
bext_tensor *bext_mean(bext_tensor *t);
bext_tensor *bext_prod(bext_tensor *t);
bext_tensor *bext_max_all(bext_tensor *t);
bext_tensor *bext_min_all(bext_tensor *t);
bext_tensor *bext_argmax(bext_tensor *t);   /* row-major flat index */
bext_tensor *bext_argmin(bext_tensor *t);
bext_tensor *bext_any(bext_tensor *t);
bext_tensor *bext_all(bext_tensor *t);
bext_tensor *bext_sum_dim(bext_tensor *t, int dim, bool keepdim);
bext_tensor *bext_mean_dim(bext_tensor *t, int dim, bool keepdim);
bext_tensor *bext_prod_dim(bext_tensor *t, int dim, bool keepdim);
bext_tensor *bext_max_dim(bext_tensor *t, int dim, bool keepdim);
bext_tensor *bext_min_dim(bext_tensor *t, int dim, bool keepdim);
bext_tensor *bext_argmax_dim(bext_tensor *t, int dim, bool keepdim);
bext_tensor *bext_argmin_dim(bext_tensor *t, int dim, bool keepdim);
bext_tensor *bext_any_dim(bext_tensor *t, int dim, bool keepdim);
bext_tensor *bext_all_dim(bext_tensor *t, int dim, bool keepdim);
/* Inclusive prefix sum along dim (same dtype). */
bext_tensor *bext_cumsum(bext_tensor *t, int dim);

/* ------------------------------------------------------------ matmul, cast */
/* a [..., m, k] x b [..., k, n] -> [..., m, n]; ranks >= 2, batch dims
 * broadcast NumPy style; same float/int dtype.  OWNS a and b. */
bext_tensor *bext_matmul(bext_tensor *a, bext_tensor *b);
/* Any dtype to any dtype (OWNS t).  float->int: NaN -> 0, truncate toward
 * zero, saturate to the target range; int->int wraps (two's complement);
 * ->bool: x != 0; bool->x: 0 or 1; f16/bf16 round to nearest even. */
bext_tensor *bext_cast(bext_tensor *t, bext_dtype dtype);

/* ----------------------------------------------------------------- kernels */

/* A `#[cube]` kernel instantiation as bextc embeds it in the generated C of
 * an extension (docs/codegen.md, "Kernels"): its name, its serialized
 * kernel IR (docs/kernels.md, the versioned form every runtime compiles
 * from), and on x86-64 its ahead-of-time CPU code when the program links
 * <stem>.kernels.o (NULL otherwise: the CPU JIT compiles the IR).  The
 * generated launchers fill these; a hand-written one may too. */
typedef struct bext_kernel_src {
  const char *name;
  const uint8_t *ir;
  uint32_t size;
  void (*cpu)(void);       /* the CPU kernel ABI (docs/kernels.md), cast */
} bext_kernel_src;

/* One scalar argument: an 8-byte slot with the value at offset 0, in the
 * member of the kernel parameter's type (bool and u8: .u8). */
typedef union bext_kernel_scalar {
  int64_t i64;
  uint64_t u64;
  double f64;
  float f32;
  int32_t i32;
  uint32_t u32;
  uint8_t u8;
} bext_kernel_scalar;

/* v stored in the slot the way a tensor of dtype dt stores a double
 * (bext_cast's rule: NaN -> 0, truncation, saturation; bool: v != 0): what
 * a generated launcher passes for a scalar of a kernel's type parameter. */
bext_kernel_scalar bext_kernel_scalar_of(bext_dtype dt, double v);

/* The grid of a launch: cube_count[i] cubes of cube_dim[i] units along
 * each axis (every component >= 1; at most 2^32 - 1 units in all). */
typedef struct bext_grid {
  uint32_t cube_count[3];
  uint32_t cube_dim[3];
} bext_grid;

/* Runs src over grid on the device of bindings[0], where every binding
 * must live; BORROWS everything.  bindings[i] is the kernel's binding i
 * (a tensor of its element type; `&mut` ones are written in place),
 * scalars[i] its scalar i.  The kernel is compiled once per device (the
 * device's kernel_prepare: the CPU JIT with its caches, or src->cpu when
 * given) and the launch itself allocates nothing.  False + error for a
 * device that runs no kernels (ndarray, libtorch), counts that do not
 * match the kernel, IR that does not load, or a failed launch. */
bool bext_kernel_launch(const bext_kernel_src *src, const bext_grid *grid, bext_tensor *const *bindings,
                        int nbindings, const bext_kernel_scalar *scalars, int nscalars);
/* What the CPU kernel runtime did since the process started, over every
 * CPU device (flex, cube:cpu): kernels compiled by LLVM, taken from
 * ahead-of-time code (a linked <stem>.kernels.o), loaded from the on-disk
 * cache, found in memory, and disk entries rejected by their checks; and
 * what the cube devices' autotuner did (docs/runtime.md "Autotune", any
 * cube device): launch-parameter candidates timed, decisions read from
 * the autotune cache file, cache files rejected and rewritten. */
typedef struct bext_kernel_stat {
  uint64_t compiled, adopted, disk_hits, memory_hits, disk_rejects;
  uint64_t tune_timed, tune_loaded, tune_rejects;
} bext_kernel_stat;
bool bext_kernel_stats(bext_kernel_stat *out);

/* ---------------------------------------------------------------- autodiff */
/* Gradients (docs/runtime.md "Autodiff").  A device with the +autodiff
 * layer ("flex+autodiff", "ndarray+autodiff(balanced)") runs every op on
 * its inner device and, when an input is TRACKED, records the op in a
 * graph.  Untracked tensors (bext_from_data, creation ops, results of
 * untracked inputs) are constants.  Ops with no gradient (comparisons,
 * bool and int ops, argmax/argmin, floor/round/sign, casts to int or
 * bool) give constants even from tracked inputs; an op whose rule is not
 * written yet fails with "bext_<op>: no autograd formula for op '<op>'
 * yet (tracked input)" rather than giving a wrong gradient.  The graph
 * lives exactly as long as the tensors (and grads) that reach it: drop
 * them and it is freed, whether or not backward ran.  Tracked tensors
 * may be used from several threads like any tensor. */
typedef struct bext_grads bext_grads;
/* A tracked leaf with t's values (OWNS t).  t must live on a device whose
 * outermost layer is +autodiff and have a float dtype; else NULL + an
 * error naming the device (or dtype).  Calling it on a tracked tensor
 * starts a new leaf: the result has no history. */
bext_tensor *bext_require_grad(bext_tensor *t);
/* True when t (BORROWED) is tracked: a leaf or the result of an op with a
 * tracked input.  False for NULL and for tensors of other devices. */
bool bext_is_tracked(const bext_tensor *t);
/* An untracked tensor with t's values on t's device (OWNS t; t itself
 * when it is untracked already).  NULL + error for NULL. */
bext_tensor *bext_detach(bext_tensor *t);
/* Runs backward from loss (BORROWED): the gradient of loss with respect to
 * every tracked leaf it depends on.  loss must be a tracked rank-0 tensor
 * on an autodiff device: a non-scalar loss is an error saying so (reduce
 * it first with bext_sum or bext_mean), as is an untracked one.  The
 * graph is left intact, so backward may run again (the results are
 * bit-identical: steps run in a topological order given by the graph's
 * shape alone, so graphs merged from several threads' work sum their
 * gradients in the same order on every run).  Returns a NEW set, freed
 * with bext_grads_free;
 * NULL + error on failure. */
bext_grads *bext_backward(bext_tensor *loss);
/* The gradient of the loss with respect to leaf t (BORROWED): a NEW
 * reference, untracked, on t's autodiff device, of t's shape and dtype.
 * NULL WITHOUT an error when t got no gradient (untracked, not a leaf,
 * or not reached from the loss); NULL + error when g or t is NULL.
 * Gradients are kept for leaves only (bext_require_grad's results). */
bext_tensor *bext_grad(const bext_grads *g, const bext_tensor *t);
/* Frees g and its references (tensors returned by bext_grad stay valid).
 * NULL is a no-op. */
void bext_grads_free(bext_grads *g);
/* One plain SGD step: param - lr * grad, as the parameter of the next
 * step.  OWNS param, BORROWS grad (of param's device, dtype and shape;
 * bext_grad's result).  The values are bext_sub(param,
 * bext_mul_scalar(grad, lr))'s bit for bit, computed in one pass (f32 and
 * f64 on eager host-memory devices: flex, ndarray, cube:cpu) and written into param's own buffer when
 * param is uniquely held and contiguous (release the loss first: the
 * graph holds the parameters it read), else into a new buffer; other
 * handles on param's buffer never see the change.  On an autodiff device
 * the update is not recorded: a tracked param comes back as a new tracked
 * leaf (no history), an untracked one untracked.  Works on any device
 * (plain ones too).  NULL + error (param released) for a NULL operand, a
 * gradient of another device, dtype or shape, or a non-float param. */
bext_tensor *bext_sgd_step(bext_tensor *param, const bext_tensor *grad, double lr);

/* Custom nodes: an op with a gradient of its own (torch.autograd.Function's
 * role), the route of a hand-written `_autodiff` implementation of an
 * extension method (docs/codegen.md "Extension calls on +autodiff
 * devices").  The implementation computes its result from the inputs'
 * values with any ops, on the inner device, then records ONE node whose
 * backward is its own function:
 *
 *   bext_tensor *x_ = bext_autodiff_value(x);          // inner, untracked
 *   bext_tensor *y_ = my_forward(bext_retain(x_));
 *   bext_custom_node n = {.name = "my_ext::op", .n_in = 1, .inputs = &x,
 *                         .n_saved = 1, .saved = &x_, .backward = my_backward};
 *   bext_tensor *y = bext_autodiff_record(&n, y_);     // tracked when x is
 *   bext_release(x_);
 *
 * The backward runs inside bext_backward, on the inner device, with plain
 * (untracked) tensors: grad is the gradient of the node's output
 * (BORROWED, the output's shape and dtype); saved[] are the tensors given
 * at record time (BORROWED); for every input with needs[i], grad_in[i]
 * must receive a NEW tensor on that device with input i's shape and
 * dtype (others may stay NULL).  It returns false (after bext_set_error)
 * to fail backward; a gradient of the wrong shape, dtype or device fails
 * backward with an error naming the node and the input. */
#define BEXT_AUTODIFF_MAX_INPUTS 64
typedef bool (*bext_backward_fn)(void *state, bext_tensor *grad, bext_tensor *const *saved, const bool *needs,
                                 bext_tensor **grad_in);
typedef struct bext_custom_node {
  const char *name;              /* for messages ("my_ext::gelu"); copied (47 bytes kept) */
  int n_in;                      /* 1..BEXT_AUTODIFF_MAX_INPUTS */
  bext_tensor *const *inputs;    /* BORROWED: what the output depends on, on one autodiff device */
  int n_saved;                   /* 0..BEXT_AUTODIFF_MAX_INPUTS */
  bext_tensor *const *saved;     /* BORROWED: values backward reads (the node keeps references) */
  bext_backward_fn backward;
  void *state;                   /* handed to backward; see bext_autodiff_record */
  void (*state_free)(void *state);  /* NULL: state is not freed */
} bext_custom_node;
/* The value of t (BORROWED) to compute with: for a tensor of an autodiff
 * device, a NEW reference to its untracked value on the inner device; for
 * any other tensor, t itself (a new reference), so one implementation
 * serves tracked and plain devices.  NULL + error for NULL. */
bext_tensor *bext_autodiff_value(const bext_tensor *t);
/* The custom op's result: output (OWNED; computed on the inputs' inner
 * device, or an untracked tensor of their autodiff device) as a tensor of
 * the inputs' autodiff device, tracked, with a node for n->backward, when
 * an input is tracked and the output has a float dtype; untracked
 * otherwise.  Inputs on plain devices: output is returned as it is.  The
 * inputs must share one device (an autodiff strategy mismatch is named).
 * n->state belongs to the call: freed with n->state_free when the node
 * dies, at once when no node is recorded, and on failure.  NULL + error
 * for bad arguments (each named). */
bext_tensor *bext_autodiff_record(const bext_custom_node *n, bext_tensor *output);

/* ------------------------------------------------------- errors and hooks */

/* ERROR CONTRACT (errno-like, per thread):
 *   - A call that fails sets the error (and returns NULL / false / its
 *     documented failure value).  A call that succeeds leaves the error
 *     alone: bext_last_error() is meaningful only right after a failure.
 *   - bext_error_count() counts the errors set on this thread; it only
 *     grows (bext_clear_error does not reset it).  Code that calls an
 *     implementation and must report its failure compares the count before
 *     and after: unchanged means the callee failed without setting an
 *     error during THIS call, so the caller sets its own (an older message
 *     still in bext_last_error() is not this call's cause).
 *   - Chaining: the newest error is "pending".  A call given a NULL tensor
 *     handle reports it and, when an error is pending, cites it:
 *       bext_mul: operand 1 is a NULL tensor handle (operands: NULL, [3] f32);
 *       earlier error: bext_rsqrt: operand 1 has dtype i64, expected a float
 *       dtype (operands: [3] i64)
 *     so `bext_sum(bext_mul(bext_rsqrt(x), y))` reports the rsqrt failure.
 *     Citing consumes: the citing message replaces the cited one as the
 *     pending error, so a failure is cited directly at most once, and a
 *     deeper chain nests (each step names the step before it; when the
 *     message would exceed the buffer, the middle of the cited part is
 *     elided as " [...] ", keeping the first cause at its end).  Only the
 *     newest error is ever cited, never an older one.  Successful calls do
 *     not clear the pending error (arguments of one expression run in an
 *     unspecified order, so an unrelated operand's creation may run between
 *     a failure and the op receiving its NULL); bext_clear_error() does.
 * The message is valid until the next error set on this thread. */
const char *bext_last_error(void);   /* "" when none (or cleared) */
uint64_t bext_error_count(void);
void bext_clear_error(void);

/* Check mode (PyTorch's opcheck for extension ops): every extension call
 * also evaluates the method's metadata — its #[fusion(dtype, shape)]
 * field expressions or its `meta` callable over the inputs' specs, or,
 * for a method with a default body whose user implementation ran, the
 * default body over specs (every op through its inference rule, no data)
 * — and compares it with what the implementation returned: shapes,
 * dtypes, enum variants and ordinary field values.  A mismatch fails the
 * call with an error naming the method, the implementation, the output
 * field and both values; a panic("...") a shape expression uses to
 * validate its inputs fails the call before the implementation runs.  On
 * when the environment has BEXT_CHECK=1 at start-up, or after
 * bext_set_check(true); process-wide.  Off, it costs one predictable
 * branch per extension call.  (Always, check mode or not, tensors of the
 * wrong declared kind are rejected on the way in; outputs of the wrong
 * declared kind fail the call in check mode and in debug builds.) */
void bext_set_check(bool on);
bool bext_check_enabled(void);

/* Programming errors (broken invariants, a backend returning the wrong
 * output) go to the panic hook; the default prints and aborts.  A hook may
 * longjmp out; if it returns, the runtime aborts.  NULL restores the default. */
typedef void (*bext_panic_fn)(const char *msg, const char *file, int line, void *ud);
void bext_set_panic_hook(bext_panic_fn fn, void *ud);

/* For code outside the runtime that implements ops (generated dispatch
 * entries, hand-written per-backend extension functions): set this
 * thread's error (printf format; always returns false, so
 * `return bext_set_error(...)` reads well), and raise a programming error
 * through the panic hook.  Added after the first contract. */
bool bext_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* bext_set_error for "a NULL tensor was passed": also cites the pending
 * error (see the ERROR CONTRACT above).  Always returns false. */
bool bext_set_null_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
__attribute__((noreturn)) void bext_panic(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Every allocation of the runtime and its backends goes through one hook
 * (lua_Alloc style): ptr NULL -> allocate nsize bytes; nsize 0 -> free ptr;
 * else reallocate.  Returning NULL for an allocation means "out of memory":
 * the op fails with an error, never a crash.  fn NULL restores malloc.
 *
 * A hook is the pair (fn, ud).  Every block a hook hands out goes back to
 * that same hook, with the size it was asked for, never to another one:
 * tensors, views, op outputs and idle cached memory made under hook A may
 * outlive a switch to hook B, and are freed through A when released.  So
 * A must stay callable for frees until everything made under it is gone.
 * Small blocks the runtime frees (tensor headers, buffers of a few KiB)
 * idle in a bounded per-thread cache, and Flex keeps a process-wide cache
 * of freed buffers of 1 MiB or more; both are reused without calling the
 * hook, but only for allocations under the hook that made them.
 * bext_set_allocator first returns the calling thread's idle blocks and
 * Flex's idle buffers to their hooks; other threads return their idle
 * blocks when they exit or when they next try to reuse one after the hook
 * changed.  Call it while no other thread is inside a bext call (tensors
 * may be alive anywhere): the hook itself is read without locking. */
typedef void *(*bext_alloc_fn)(void *ud, void *ptr, size_t osize, size_t nsize);
void bext_set_allocator(bext_alloc_fn fn, void *ud);

#ifdef __cplusplus
}
#endif
#endif /* BEXT_BEXT_H */
