/* internal.h — runtime-wide internals of libbext shared by the runtime and
 * every backend: the hidden-visibility marker, the allocation hook, error
 * and panic plumbing, always-on invariant checks, dtype element helpers
 * (f16/bf16 conversion, load/store through double or int64) and the shared
 * counter-based random generator (so every backend draws the same numbers).
 * Prefix: bxr_. */
#ifndef BXR_INTERNAL_H
#define BXR_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bext/bext.h"

/* Internal externs are hidden from the final shared object (Lua's LUAI_FUNC). */
#define BXR_FUNC __attribute__((visibility("hidden"))) extern
#define BXR_DATA __attribute__((visibility("hidden"))) extern

/* ------------------------------------------------------------ allocation */
/* Every runtime/backend allocation goes through bext_set_allocator's hook,
 * and every buffer goes back to the hook that allocated it, even when the
 * program installed another one meanwhile.  A hook is the pair (fn, ud):
 * memory that can outlive the call that allocated it records the hook
 * (block prefixes, storage via bxr_storage_hook, Flex's cache entries) and
 * is freed with bxr_free_to.  bxr_alloc/bxr_free use the hook installed
 * now: only for scratch freed before the allocating call returns, on the
 * same thread (bext_set_allocator may not run concurrently with bext
 * calls, so the hook cannot change in between).  Allocation returns NULL
 * on failure AND sets the error "out of memory". */
struct bxr_hook {
  bext_alloc_fn fn;
  void *ud;
};
/* The hook installed now (a plain read, see bext_set_allocator). */
BXR_FUNC struct bxr_hook bxr_hook_now(void);
static inline bool bxr_hook_eq(struct bxr_hook a, struct bxr_hook b) {
  return a.fn == b.fn && a.ud == b.ud;
}
BXR_FUNC void *bxr_alloc_from(struct bxr_hook h, size_t n);
BXR_FUNC void bxr_free_to(struct bxr_hook h, void *p, size_t n);  /* n: the size asked */
BXR_FUNC void *bxr_alloc(size_t n);    /* scratch: bxr_alloc_from(bxr_hook_now(), n) */
BXR_FUNC void *bxr_calloc(size_t n);   /* scratch, zero-filled */
BXR_FUNC void bxr_free(void *p, size_t n);  /* n: the size given to bxr_alloc */
/* Called by bext_set_allocator after it returned the calling thread's idle
 * blocks: a module keeping idle hook memory process-wide (Flex's cache of
 * large buffers) hands it back to its hooks there.  Register from a
 * constructor (single-threaded); at most BXR_MAX_DRAINS. */
#define BXR_MAX_DRAINS 4
BXR_FUNC void bxr_alloc_on_switch(void (*drain)(void));

/* Small runtime blocks (tensor headers, small inline buffers) through a
 * per-thread cache on top of the hook (alloc.c).  Sizes come in classes;
 * bxr_block_class(n) is the smallest class holding n bytes, -1 when n is
 * too large for any.  bxr_block_alloc returns NULL + "out of memory" like
 * bxr_alloc (16-byte aligned, contents undefined); bxr_block_free takes
 * the class the block was allocated with, from any thread. */
#define BXR_BLOCK_CLASSES 5
#define BXR_BLOCK_PREFIX 16      /* per-block header: the hook it came from */
/* The hook a block from bxr_block_alloc came from (read from its prefix). */
static inline struct bxr_hook bxr_block_hook(const void *p) {
  return ((const struct bxr_hook *)p)[-1];
}
/* Classes are 256 << k bytes including the prefix. */
static inline int bxr_block_class(size_t n) {
  size_t total = n + BXR_BLOCK_PREFIX;
  if (total <= 256) return 0;
  if (total > ((size_t)256 << (BXR_BLOCK_CLASSES - 1))) return -1;
  return 64 - __builtin_clzll((unsigned long long)(total - 1)) - 8;  /* ceil(log2) - 8 */
}
BXR_FUNC void *bxr_block_alloc(int cls);
BXR_FUNC void bxr_block_free(void *p, int cls);
/* Returns the calling thread's idle blocks to their hooks (tests). */
BXR_FUNC void bxr_block_flush(void);
/* Idle blocks cached by the calling thread (tests). */
BXR_FUNC int bxr_block_cached(void);

/* --------------------------------------------------------------- threads */
/* A small nonzero id per thread, never reused (alloc.c): the owner mark of
 * biased handle counts (tensor.h).  bxr_tls_id is 0 until the thread first
 * asks for it.  Ids 0 and 1 are never handed out (1 marks a take-over). */
extern _Thread_local uint64_t bxr_tls_id
    __attribute__((tls_model("initial-exec"), visibility("hidden")));
BXR_FUNC uint64_t bxr_self_slow(void);
static inline uint64_t bxr_self(void) {
  uint64_t id = bxr_tls_id;
  return __builtin_expect(id != 0, 1) ? id : bxr_self_slow();
}
/* True when handles may be biased: the process has an asymmetric fence
 * (Linux membarrier).  Decided once, before any id is handed out. */
BXR_DATA int bxr_bias_on;
/* The heavy half of the asymmetric fence: every thread of the process
 * executes a full barrier before this returns. */
BXR_FUNC void bxr_heavy_fence(void);

/* ---------------------------------------------------------------- errors */
/* Sets this thread's error message (printf format).  Always returns false
 * so callers can `return bxr_error(...)`. */
BXR_FUNC bool bxr_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
BXR_FUNC bool bxr_verror(const char *fmt, va_list ap);
/* The same for "a NULL tensor handle was passed": appends the pending
 * failure ("; earlier error: ...") when there is one (bext_set_null_error). */
BXR_FUNC bool bxr_error_null(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
BXR_FUNC bool bxr_verror_null(const char *fmt, va_list ap);
/* bext_error_count, inline: every dispatch reads it around its exec call
 * (error.c owns it). */
extern _Thread_local uint64_t bxr_tls_errors
    __attribute__((tls_model("initial-exec"), visibility("hidden")));
static inline uint64_t bxr_error_count(void) { return bxr_tls_errors; }
/* Formats "[2,3] f32" for t into buf (NULL -> "NULL"); the same text for
 * a spec (so tensor and spec inference messages agree). */
BXR_FUNC const char *bxr_describe(const bext_tensor *t, char *buf, size_t n);
BXR_FUNC const char *bxr_describe_spec(const bext_spec *s, char *buf, size_t n);
BXR_FUNC const char *bxr_describe_shape(int rank, const int64_t *shape, char *buf, size_t n);

/* Programming errors: calls the panic hook; never returns. */
BXR_FUNC _Noreturn void bxr_panic(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Always-on invariant check with file and line (GGML_ASSERT style),
 * independent of NDEBUG. */
#define BXR_ASSERT(c)                                                   \
  do {                                                                  \
    if (__builtin_expect(!(c), 0)) bxr_panic(__FILE__, __LINE__, "assertion failed: %s", #c); \
  } while (0)

/* ---------------------------------------------------------------- dtypes */
/* Inline forms of bext_dtype_size / bext_dtype_kind for hot paths (one
 * table load instead of a call); same answers for invalid dtypes. */
static inline size_t bxr_dtype_size(bext_dtype dt) {
  static const unsigned char size[BEXT_DTYPE_COUNT] = {
#define BXR_X_(E, n, t, s, k) [BEXT_##E] = s,
      BEXT_DTYPES(BXR_X_)
#undef BXR_X_
  };
  return (unsigned)dt < BEXT_DTYPE_COUNT ? size[dt] : 0;
}
static inline bext_kind bxr_dtype_kind(bext_dtype dt) {
  static const unsigned char kind[BEXT_DTYPE_COUNT] = {
#define BXR_X_(E, n, t, s, k) [BEXT_##E] = k,
      BEXT_DTYPES(BXR_X_)
#undef BXR_X_
  };
  return (unsigned)dt < BEXT_DTYPE_COUNT ? (bext_kind)kind[dt] : BEXT_KIND_FLOAT;
}

BXR_FUNC float bxr_f16_to_f32(uint16_t h);
BXR_FUNC uint16_t bxr_f32_to_f16(float f);     /* round to nearest even */
BXR_FUNC float bxr_bf16_to_f32(uint16_t h);
BXR_FUNC uint16_t bxr_f32_to_bf16(float f);    /* round to nearest even, NaN kept */

/* Element i of a contiguous array of dtype, as double / int64 (bool: 0/1). */
BXR_FUNC double bxr_load_f64(const void *p, bext_dtype dt, int64_t i);
BXR_FUNC int64_t bxr_load_i64(const void *p, bext_dtype dt, int64_t i);
/* Stores v into element i.  Float targets round (f16/bf16 via f32, RNE);
 * int targets follow bext_cast's rules (NaN->0, trunc, saturate);
 * bool: v != 0. */
BXR_FUNC void bxr_store_f64(void *p, bext_dtype dt, int64_t i, double v);
/* int64 store: int targets wrap (two's complement), float targets convert,
 * bool: v != 0. */
BXR_FUNC void bxr_store_i64(void *p, bext_dtype dt, int64_t i, int64_t v);
/* Converts n contiguous elements with bext_cast's semantics. */
BXR_FUNC void bxr_convert(void *dst, bext_dtype ddt, const void *src, bext_dtype sdt, int64_t n);
/* double -> int64 the way scalars and casts do it: NaN->0, trunc, saturate. */
BXR_FUNC int64_t bxr_f64_to_i64_sat(double v);

/* ------------------------------------------------------------------- rng */
/* Counter-based: value i of a tensor drawn with seed depends on (seed, i)
 * only, so a threaded backend draws the same numbers as a serial one.
 *   u64(seed, c) = splitmix64 finalizer of (seed * 0x9E3779B97F4A7C15 + c + 1)
 *   uniform(seed, i) = top 53 bits of u64(seed, i) / 2^53, in [0, 1)
 *   normal(seed, i)  = Box-Muller: u1 = 1 - uniform(seed, 2i) in (0, 1],
 *                      u2 = uniform(seed, 2i+1); sqrt(-2 ln u1) cos(2 pi u2)
 *                      in double, with rng.c's own log and cos (plain
 *                      double arithmetic, within 2 ulp of glibc's; since
 *                      2026-12 -- before, glibc's log and cos, so streams
 *                      drawn earlier differ in the last bits)
 * Element values: lo + (hi - lo) * uniform, mean + std * normal, computed
 * in double, then stored with bxr_store_f64. */
BXR_FUNC uint64_t bxr_rng_u64(uint64_t seed, uint64_t counter);
BXR_FUNC double bxr_rng_uniform(uint64_t seed, uint64_t i);
BXR_FUNC double bxr_rng_normal(uint64_t seed, uint64_t i);
/* out[j] = bxr_rng_normal(seed, i0 + j) for j < n, vectorized (rng.c). */
BXR_FUNC void bxr_rng_normal_block(uint64_t seed, uint64_t i0, size_t n, double *out);
/* The same with one copy of the code: isa 0 baseline, 1 AVX2, 2 AVX-512;
 * false (nothing written) where the CPU lacks it.  For the tests. */
BXR_FUNC bool bxr_rng_normal_block_isa(int isa, uint64_t seed, uint64_t i0, size_t n, double *out);
/* rng.c's log(u[k]) and cos(t[k]), k < n (u in [2^-53, 1], t in [0, 2 pi)),
 * for the tests that hold them to libm's. */
BXR_FUNC void bxr_rng_logcos(const double *u, const double *t, double *lg, double *cs, size_t n);

#endif /* BXR_INTERNAL_H */
