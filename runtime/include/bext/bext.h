/* bext.h — the public C API of libbext, the bext tensor runtime.
 *
 * One umbrella header: tensor handles, dtypes, devices, data in/out, the
 * core op set, errors and the allocation hook.
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

/* Device grammar (parsed fully, even for backends this build lacks):
 *   device  := backend [ "+fusion" ]
 *   backend := "ndarray" | "flex"
 *            | "cube:" ("cpu" | ("vulkan"|"cuda"|"hip") [":" index])
 *            | "libtorch:" ("cpu" | "cuda" [":" index])
 *            | "remote:" address            (e.g. remote:tcp://127.0.0.1:7878)
 * A syntactically valid device whose backend is not compiled in is answered
 * "backend not available in this build" when used, not a syntax error. */
typedef enum bext_backend_kind {
  BEXT_BACKEND_NDARRAY = 0,
  BEXT_BACKEND_FLEX,
  BEXT_BACKEND_CUBE,
  BEXT_BACKEND_LIBTORCH,
  BEXT_BACKEND_REMOTE,
  BEXT_BACKEND_COUNT
} bext_backend_kind;

typedef struct bext_device {
  bext_backend_kind backend;
  char target[16];   /* cube/libtorch target ("cpu", "vulkan", ...); "" else */
  int index;         /* device index (default 0) */
  bool fusion;       /* "+fusion" suffix: the lazy decorator */
  char address[96];  /* remote: the address after "remote:" */
} bext_device;

/* Parses a device string.  Returns false with an error for bad syntax. */
bool bext_device_parse(const char *spec, bext_device *out);
/* True when this build can create tensors on the device.  BORROWS. */
bool bext_device_available(const bext_device *dev);
/* The default device: flex (the fastest CPU path that is always there;
 * ndarray in a build without flex), unless bext_set_default_device chose
 * another. */
bext_device bext_device_default(void);
/* Changes the process-wide default used when an op gets dev == NULL
 * (set it before starting threads: it is a plain global).  False (and an
 * error) when the device is not available; NULL restores the build's
 * default. */
bool bext_set_default_device(const bext_device *dev);
/* Writes the canonical spelling ("flex", "cube:vulkan:0+fusion") into buf
 * (always NUL-terminated when n > 0); returns the full length. */
int bext_device_format(const bext_device *dev, char *buf, size_t n);

/* ----------------------------------------------------------------- handles */

typedef struct bext_tensor bext_tensor;

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
/* The device t lives on (backend kind; target/index/address left empty). */
bool bext_device_of(const bext_tensor *t, bext_device *out);
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

/* -------------------------------------------------------------- reductions */
/* Whole-tensor forms return a rank-0 tensor; _dim forms reduce one dim
 * (kept with extent 1 when keepdim).  All OWN t.  sum/prod/max/min keep the
 * dtype; mean of ints divides truncating; argmax/argmin give i64 (first
 * occurrence); any/all take bool and give bool.  max/min/argmax/argmin of
 * an empty extent are an error. */
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

/* ------------------------------------------------------- errors and hooks */

/* The last error of this thread ("" when none).  Valid until the next call
 * that fails on this thread. */
const char *bext_last_error(void);
void bext_clear_error(void);

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
