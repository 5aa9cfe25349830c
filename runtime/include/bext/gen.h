/* gen.h — support for the C that `bextc -o` generates (docs/codegen.md).
 *
 * Header-only (every function is static inline), so a generated file needs
 * nothing beyond libbext.  Three parts:
 *   1. which backends this runtime has (BEXT_HAVE_*, bext/config.h), so
 *      arms of backends that do not exist yet compile out;
 *   2. error and panic plumbing for generated code (entry points hand
 *      their calls to the runtime as descriptors: bext/ext.h);
 *   3. the metadata value types (bext_meta_shape, bext_meta_spec) and the checked
 *      integer arithmetic of the metadata language, with the same results
 *      and the same error messages as bextc's interpreter (compiler/interp.c),
 *      which a differential test (tests/codegen) keeps true.
 * Not meant to be used by hand; names may change with the generator. */
#ifndef BEXT_GEN_H
#define BEXT_GEN_H

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bext/bext.h"
#include "bext/ext.h"
#include "bext/meta_codes.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------ 1. backends of the runtime */
/* Which backends this libbext has: BEXT_HAVE_<BACKEND> (bext/config.h,
 * written by the build from bext.h's BEXT_BACKENDS rows and the backends/
 * folders).  Generated arms of absent backends compile out. */

/* ------------------------------------------------- 2. dispatch support */
/* Entry points hand their calls to the runtime as descriptors (bext/ext.h):
 * routing, the unlisted-backend panic and every error message live there. */
#define BEXT_GEN_SET_ERROR(...) ((void)bext_set_error(__VA_ARGS__))
#define BEXT_GEN_PANIC(...) bext_panic(__FILE__, __LINE__, __VA_ARGS__)

/* --------------------------------------------------- 3. metadata values */
#define BEXT_SHAPE_CAP 32

typedef struct bext_meta_shape {
  size_t len;
  uint64_t dims[BEXT_SHAPE_CAP];
} bext_meta_shape;

typedef struct bext_meta_spec {
  bext_meta_shape shape;
  bext_dtype dtype;
} bext_meta_spec;

/* The failure codes (meta_codes.h), by name: BEXT_META_E_OVERFLOW ... */
enum {
#define BEXT_MC_ENUM_(n, c, d) n,
  BEXT_META_CODES(BEXT_MC_ENUM_, BEXT_META_E_)
#undef BEXT_MC_ENUM_
  BEXT_META_E_COUNT_
};
#define BEXT_MC_STR_(c) #c
static inline const char *bext_meta_code(int e) {
  switch (e) {
#define BEXT_MC_CASE_(n, c, d) case n: return BEXT_MC_STR_(c);
  BEXT_META_CODES(BEXT_MC_CASE_, BEXT_META_E_)
#undef BEXT_MC_CASE_
  default: return "E0000";
  }
}

/* The evaluation state of one metadata call: the error (code + message, as
 * the interpreter's diagnostics: "E1001" ...) and the interpreter's limits
 * (steps = loop iterations + calls, and call depth).  Zero it before a call. */
typedef struct bext_meta_error {
  const char *code;
  char msg[256];
  uint64_t steps;
  unsigned depth;
} bext_meta_error;

#define BEXT_GEN_MAX_STEPS 2000000u
#define BEXT_GEN_MAX_DEPTH 128u

__extension__ typedef __int128 bext_i128;

/* Temporaries of generated metadata code may go unused. */
#define BEXT_GEN_UNUSED __attribute__((unused))

/* Integer kinds, in the order of the compiler's bxc_int_kind. */
enum {
  BEXT_GEN_I8, BEXT_GEN_I16, BEXT_GEN_I32, BEXT_GEN_I64, BEXT_GEN_ISIZE,
  BEXT_GEN_U8, BEXT_GEN_U16, BEXT_GEN_U32, BEXT_GEN_U64, BEXT_GEN_USIZE
};

static inline bool bext_gen_fail(bext_meta_error *err, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline bool bext_gen_fail(bext_meta_error *err, const char *code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  err->code = code;
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  return false;
}

static inline const char *bext_gen_int_name(int k) {
  static const char *const names[] = {"i8", "i16", "i32", "i64", "isize",
                                      "u8", "u16", "u32", "u64", "usize"};
  return k >= 0 && k <= BEXT_GEN_USIZE ? names[k] : "?";
}

static inline bool bext_gen_int_signed(int k) { return k <= BEXT_GEN_ISIZE; }

static inline bool bext_gen_int_fits(bext_i128 v, int k) {
  switch (k) {
  case BEXT_GEN_I8: return v >= INT8_MIN && v <= INT8_MAX;
  case BEXT_GEN_I16: return v >= INT16_MIN && v <= INT16_MAX;
  case BEXT_GEN_I32: return v >= INT32_MIN && v <= INT32_MAX;
  case BEXT_GEN_I64:
  case BEXT_GEN_ISIZE: return v >= INT64_MIN && v <= INT64_MAX;
  case BEXT_GEN_U8: return v >= 0 && v <= UINT8_MAX;
  case BEXT_GEN_U16: return v >= 0 && v <= UINT16_MAX;
  case BEXT_GEN_U32: return v >= 0 && v <= UINT32_MAX;
  default: return v >= 0 && v <= (bext_i128)UINT64_MAX;
  }
}

/* Decimal spelling of a 128-bit integer into buf[48]. */
static inline const char *bext_gen_i128_str(char *buf, bext_i128 v) {
  char tmp[48];
  int n = 0;
  bool neg = v < 0;
  __extension__ unsigned __int128 u = neg ? -(unsigned __int128)v : (unsigned __int128)v;
  do {
    tmp[n++] = (char)('0' + (int)(u % 10));
    u /= 10;
  } while (u);
  if (neg) tmp[n++] = '-';
  for (int i = 0; i < n; i++) buf[i] = tmp[n - 1 - i];
  buf[n] = 0;
  return buf;
}

/* One step of the budget: every call and every loop iteration. */
static inline bool bext_gen_step(bext_meta_error *err) {
  if (++err->steps <= BEXT_GEN_MAX_STEPS) return true;
  return bext_gen_fail(err, bext_meta_code(BEXT_META_E_BUDGET),
                       "evaluation exceeded its budget of %llu steps (loop iterations and calls)",
                       (unsigned long long)BEXT_GEN_MAX_STEPS);
}

static inline bool bext_gen_enter(bext_meta_error *err, const char *name) {
  if (!bext_gen_step(err)) return false;
  if (err->depth >= BEXT_GEN_MAX_DEPTH)
    return bext_gen_fail(err, bext_meta_code(BEXT_META_E_RECURSION), "recursion limit reached: %u nested calls (calling `%s`)",
                         BEXT_GEN_MAX_DEPTH, name);
  err->depth++;
  return true;
}

/* Checked + - * / % (op is the operator character) in 128 bits, then the
 * range of kind k: the interpreter's int_binop, message for message. */
static inline bool bext_gen_iop(bext_meta_error *err, char op, int k, bext_i128 x, bext_i128 y,
                                bext_i128 *out) {
  char bx[48], by[48], br[48];
  bext_i128 r = 0;
  bool ovf = false;
  const char *verb = "compute";
  switch (op) {
  case '+': ovf = __builtin_add_overflow(x, y, &r); verb = "add"; break;
  case '-': ovf = __builtin_sub_overflow(x, y, &r); verb = "subtract"; break;
  case '*': ovf = __builtin_mul_overflow(x, y, &r); verb = "multiply"; break;
  case '/':
  case '%':
    if (y == 0)
      return bext_gen_fail(err, bext_meta_code(BEXT_META_E_DIV_ZERO), "attempt to %s `%s` by zero",
                           op == '/' ? "divide" : "take the remainder of", bext_gen_i128_str(bx, x));
    r = op == '/' ? x / y : x % y;
    verb = op == '/' ? "divide" : "take the remainder";
    break;
  case '&': r = x & y; break;
  case '|': r = x | y; break;
  case '^': r = x ^ y; break;
  default: return bext_gen_fail(err, bext_meta_code(BEXT_META_E_TYPE), "`%c` does not apply to integers", op);
  }
  if (ovf || !bext_gen_int_fits(r, k)) {
    if (ovf)
      return bext_gen_fail(err, bext_meta_code(BEXT_META_E_OVERFLOW), "attempt to %s with overflow: `%s %c %s`", verb,
                           bext_gen_i128_str(bx, x), op, bext_gen_i128_str(by, y));
    if (r < 0 && !bext_gen_int_signed(k))
      return bext_gen_fail(err, bext_meta_code(BEXT_META_E_OVERFLOW),
                           "attempt to %s with overflow: `%s %c %s` is negative, which `%s` cannot hold",
                           verb, bext_gen_i128_str(bx, x), op, bext_gen_i128_str(by, y),
                           bext_gen_int_name(k));
    return bext_gen_fail(err, bext_meta_code(BEXT_META_E_OVERFLOW), "attempt to %s with overflow: `%s %c %s` = %s does not fit in `%s`",
                         verb, bext_gen_i128_str(bx, x), op, bext_gen_i128_str(by, y),
                         bext_gen_i128_str(br, r), bext_gen_int_name(k));
  }
  *out = r;
  return true;
}

/* `-x` for a value of kind k. */
static inline bool bext_gen_ineg(bext_meta_error *err, int k, bext_i128 x, bext_i128 *out) {
  char b[48];
  if (!bext_gen_int_signed(k))
    return bext_gen_fail(err, bext_meta_code(BEXT_META_E_NEGATIVE), "cannot negate a value of unsigned type `%s`", bext_gen_int_name(k));
  if (!bext_gen_int_fits(-x, k))
    return bext_gen_fail(err, bext_meta_code(BEXT_META_E_OVERFLOW), "attempt to negate with overflow: -(%s) does not fit in `%s`",
                         bext_gen_i128_str(b, x), bext_gen_int_name(k));
  *out = -x;
  return true;
}

/* `x as T` for an integer (or bool) x: out of range is an error. */
static inline bool bext_gen_icast(bext_meta_error *err, int k, bext_i128 x, bext_i128 *out) {
  char b[48];
  if (!bext_gen_int_fits(x, k)) {
    if (x < 0 && !bext_gen_int_signed(k))
      return bext_gen_fail(err, bext_meta_code(BEXT_META_E_NEGATIVE), "negative value %s cannot be cast to `%s`", bext_gen_i128_str(b, x),
                           bext_gen_int_name(k));
    return bext_gen_fail(err, bext_meta_code(BEXT_META_E_OVERFLOW), "value %s does not fit in `%s`", bext_gen_i128_str(b, x),
                         bext_gen_int_name(k));
  }
  *out = x;
  return true;
}

/* `f as T` for a float f. */
static inline bool bext_gen_fcast(bext_meta_error *err, int k, double f, bext_i128 *out) {
  double t = trunc(f);
  if (isnan(t) || t < -1.8e19 || t > 1.9e19)
    return bext_gen_fail(err, bext_meta_code(BEXT_META_E_OVERFLOW), "float value does not fit in `%s`", bext_gen_int_name(k));
  return bext_gen_icast(err, k, (bext_i128)t, out);
}

/* Bitwise `!x` within the width of kind k. */
static inline bext_i128 bext_gen_inot(int k, bext_i128 x) {
  if (bext_gen_int_signed(k)) return ~x;
  bext_i128 max = k == BEXT_GEN_U8 ? UINT8_MAX : k == BEXT_GEN_U16 ? UINT16_MAX
                : k == BEXT_GEN_U32 ? UINT32_MAX : (bext_i128)UINT64_MAX;
  return max ^ x;
}

/* ---- Shape ---- */
static inline bool bext_gen_shape_room(bext_meta_error *err, const bext_meta_shape *s) {
  if (s->len < BEXT_SHAPE_CAP) return true;
  return bext_gen_fail(err, bext_meta_code(BEXT_META_E_INDEX), "a shape has at most %d dimensions in generated code",
                       BEXT_SHAPE_CAP);
}

static inline bool bext_gen_shape_index(bext_meta_error *err, const bext_meta_shape *s, uint64_t i) {
  if (i < s->len) return true;
  return bext_gen_fail(err, bext_meta_code(BEXT_META_E_INDEX), "index %llu is out of range for a shape of rank %zu",
                       (unsigned long long)i, s->len);
}

static inline bool bext_gen_shape_push(bext_meta_error *err, bext_meta_shape *s, uint64_t d) {
  if (!bext_gen_shape_room(err, s)) return false;
  s->dims[s->len++] = d;
  return true;
}

static inline bool bext_gen_shape_pop(bext_meta_error *err, bext_meta_shape *s, uint64_t *out) {
  if (s->len == 0) return bext_gen_fail(err, bext_meta_code(BEXT_META_E_INDEX), "`pop` on an empty shape");
  *out = s->dims[--s->len];
  return true;
}

static inline bool bext_gen_shape_insert(bext_meta_error *err, bext_meta_shape *s, uint64_t at, uint64_t d) {
  if (at > s->len)
    return bext_gen_fail(err, bext_meta_code(BEXT_META_E_INDEX), "insertion index %llu is out of range for a shape of rank %zu",
                         (unsigned long long)at, s->len);
  if (!bext_gen_shape_room(err, s)) return false;
  memmove(&s->dims[at + 1], &s->dims[at], (s->len - at) * sizeof s->dims[0]);
  s->dims[at] = d;
  s->len++;
  return true;
}

static inline bool bext_gen_shape_remove(bext_meta_error *err, bext_meta_shape *s, uint64_t at, uint64_t *out) {
  if (at >= s->len)
    return bext_gen_fail(err, bext_meta_code(BEXT_META_E_INDEX), "removal index %llu is out of range for a shape of rank %zu",
                         (unsigned long long)at, s->len);
  *out = s->dims[at];
  memmove(&s->dims[at], &s->dims[at + 1], (s->len - at - 1) * sizeof s->dims[0]);
  s->len--;
  return true;
}

static inline bool bext_gen_shape_swap(bext_meta_error *err, bext_meta_shape *s, uint64_t a, uint64_t b) {
  if (!bext_gen_shape_index(err, s, a) || !bext_gen_shape_index(err, s, b)) return false;
  uint64_t t = s->dims[a];
  s->dims[a] = s->dims[b];
  s->dims[b] = t;
  return true;
}

static inline bool bext_gen_shape_numel(bext_meta_error *err, const bext_meta_shape *s, uint64_t *out) {
  bext_i128 n = 1;
  for (size_t i = 0; i < s->len; i++) {
    n *= s->dims[i];
    if (n > (bext_i128)UINT64_MAX)
      return bext_gen_fail(err, bext_meta_code(BEXT_META_E_OVERFLOW), "the number of elements overflows `usize`");
  }
  *out = (uint64_t)n;
  return true;
}

static inline bool bext_gen_shape_eq(const bext_meta_shape *a, const bext_meta_shape *b) {
  if (a->len != b->len) return false;
  for (size_t i = 0; i < a->len; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

static inline bool bext_gen_spec_eq(const bext_meta_spec *a, const bext_meta_spec *b) {
  return a->dtype == b->dtype && bext_gen_shape_eq(&a->shape, &b->shape);
}

/* ---- DType ---- */
static inline bool bext_gen_dtype_is_float(bext_dtype d) {
  return d == BEXT_F32 || d == BEXT_F64 || d == BEXT_F16 || d == BEXT_BF16;
}
static inline bool bext_gen_dtype_is_bool(bext_dtype d) { return d == BEXT_BOOL; }
static inline bool bext_gen_dtype_is_int(bext_dtype d) {
  return !bext_gen_dtype_is_float(d) && !bext_gen_dtype_is_bool(d);
}
static inline uint64_t bext_gen_dtype_size(bext_dtype d) { return bext_dtype_size(d); }

/* `panic("message")` of the metadata language. */
static inline bool bext_gen_panic_msg(bext_meta_error *err, const char *name, const char *msg) {
  return bext_gen_fail(err, bext_meta_code(BEXT_META_E_PANIC), "%s: %s", name, msg);
}

/* ------------------------------------ 4. descriptors: ordinary arguments */
/* The encoding of a call's ordinary arguments (docs/codegen.md,
 * "Descriptors"): little-endian, field by field, never raw struct bytes
 * (padding, and a process may lay out nothing the same way).  One writer
 * serves encode and hash: it stores what fits in buf and feeds every byte
 * to FNV-1a 64, so the hash is a function of the encoding and is the same
 * in every process.  The reader never reads past n: once bad, every get
 * returns 0 and the decoder reports the whole input as malformed. */
#define BEXT_GEN_ENCODING_VERSION 1u
#define BEXT_GEN_FNV_OFFSET 0xcbf29ce484222325ull
#define BEXT_GEN_FNV_PRIME 0x100000001b3ull

typedef struct bext_gen_writer {
  unsigned char *buf;
  size_t cap, len;
  uint64_t hash;
} bext_gen_writer;

typedef struct bext_gen_reader {
  const unsigned char *buf;
  size_t n, pos;
  bool bad;
} bext_gen_reader;

static inline void bext_gen_put(bext_gen_writer *w, uint64_t v, int nbytes) {
  for (int i = 0; i < nbytes; i++) {
    unsigned char byte = (unsigned char)(v >> (8 * i));
    if (w->len < w->cap) w->buf[w->len] = byte;
    w->len++;
    w->hash = (w->hash ^ byte) * BEXT_GEN_FNV_PRIME;
  }
}
/* Floats by bit pattern: -0.0 and every NaN payload travel unchanged
 * (an implementation may tell them apart), so they also hash apart. */
static inline void bext_gen_put_f32(bext_gen_writer *w, float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  bext_gen_put(w, b, 4);
}
static inline void bext_gen_put_f64(bext_gen_writer *w, double f) {
  uint64_t b;
  memcpy(&b, &f, sizeof b);
  bext_gen_put(w, b, 8);
}
static inline void bext_gen_put_shape(bext_gen_writer *w, const bext_meta_shape *s) {
  size_t len = s->len <= BEXT_SHAPE_CAP ? s->len : BEXT_SHAPE_CAP;
  bext_gen_put(w, len, 1);
  for (size_t i = 0; i < len; i++) bext_gen_put(w, s->dims[i], 8);
}

static inline uint64_t bext_gen_get(bext_gen_reader *r, int nbytes) {
  if (r->bad || r->n - r->pos < (size_t)nbytes) {
    r->bad = true;
    return 0;
  }
  uint64_t v = 0;
  for (int i = 0; i < nbytes; i++) v |= (uint64_t)r->buf[r->pos + (size_t)i] << (8 * i);
  r->pos += (size_t)nbytes;
  return v;
}
/* A signed integer of nbytes, sign-extended without implementation-defined
 * conversions. */
static inline int64_t bext_gen_get_signed(bext_gen_reader *r, int nbytes) {
  uint64_t u = bext_gen_get(r, nbytes);
  if (nbytes < 8 && (u >> (8 * nbytes - 1)) & 1u) u |= ~(uint64_t)0 << (8 * nbytes);
  return u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1;
}
static inline size_t bext_gen_get_usize(bext_gen_reader *r) {
  uint64_t u = bext_gen_get(r, 8);
#if SIZE_MAX < UINT64_MAX
  if (u > SIZE_MAX) r->bad = true;
#endif
  return (size_t)u;
}
static inline ptrdiff_t bext_gen_get_isize(bext_gen_reader *r) {
  int64_t v = bext_gen_get_signed(r, 8);
#if PTRDIFF_MAX < INT64_MAX
  if (v > PTRDIFF_MAX || v < PTRDIFF_MIN) r->bad = true;
#endif
  return (ptrdiff_t)v;
}
static inline bool bext_gen_get_bool(bext_gen_reader *r) {
  uint64_t v = bext_gen_get(r, 1);
  if (v > 1) r->bad = true;
  return v == 1;
}
static inline float bext_gen_get_f32(bext_gen_reader *r) {
  uint32_t b = (uint32_t)bext_gen_get(r, 4);
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}
static inline double bext_gen_get_f64(bext_gen_reader *r) {
  uint64_t b = bext_gen_get(r, 8);
  double f;
  memcpy(&f, &b, sizeof f);
  return f;
}
static inline bext_dtype bext_gen_get_dtype(bext_gen_reader *r) {
  uint64_t v = bext_gen_get(r, 1);
  if (v >= (uint64_t)BEXT_DTYPE_COUNT) {
    r->bad = true;
    return (bext_dtype)0;
  }
  return (bext_dtype)v;
}
static inline void bext_gen_get_shape(bext_gen_reader *r, bext_meta_shape *s) {
  uint64_t len = bext_gen_get(r, 1);
  if (len > BEXT_SHAPE_CAP) {
    r->bad = true;
    len = 0;
  }
  s->len = (size_t)len;
  for (size_t i = 0; i < s->len; i++) s->dims[i] = bext_gen_get(r, 8);
}
/* An enum tag below nvariants. */
static inline unsigned bext_gen_get_tag(bext_gen_reader *r, unsigned nvariants) {
  uint64_t v = bext_gen_get(r, 4);
  if (v >= nvariants) {
    r->bad = true;
    return 0;
  }
  return (unsigned)v;
}

/* A tensor's spec for the metadata view of a call's arguments (scalar
 * encodings and meta see tensors as specs).  `what` names the method. */
static inline bool bext_gen_spec_of(bext_meta_error *err, const char *what, const char *name, const bext_tensor *t,
                                    bext_meta_spec *out) {
  if (!t) return bext_gen_fail(err, bext_meta_code(BEXT_META_E_META), "%s: argument `%s` is a NULL tensor", what, name);
  int rank = bext_rank(t);
  const int64_t *dims = bext_shape(t);
  if (rank < 0 || rank > BEXT_SHAPE_CAP || (rank > 0 && !dims))
    return bext_gen_fail(err, bext_meta_code(BEXT_META_E_INDEX), "%s: argument `%s` has rank %d; a shape holds at most %d dims", what,
                         name, rank, BEXT_SHAPE_CAP);
  out->shape.len = (size_t)rank;
  for (int i = 0; i < rank; i++) out->shape.dims[i] = (uint64_t)dims[i];
  out->dtype = bext_dtype_of(t);
  return true;
}

/* ------------------------------------------- 5. check mode (bext_set_check) */
/* The generated `meta_check` of a descriptor compares the implementation's
 * output, seen as metadata, with what the metadata functions computed,
 * leaf by leaf; each helper returns false with `why` naming the output
 * field and both values. */
static inline void bext_gen_shape_text(const bext_meta_shape *s, char *buf, size_t n) {
  size_t len = (size_t)snprintf(buf, n, "[");
  for (size_t i = 0; i < s->len && len < n; i++)
    len += (size_t)snprintf(buf + len, n - len, i ? ", %llu" : "%llu", (unsigned long long)s->dims[i]);
  if (len < n) snprintf(buf + len, n - len, "]");
}

static inline bool bext_gen_check_spec(char *why, size_t n, const char *field, const bext_meta_spec *got,
                                       const bext_meta_spec *want) {
  if (got->dtype == want->dtype && bext_gen_shape_eq(&got->shape, &want->shape)) return true;
  char g[200], w[200];
  bext_gen_shape_text(&got->shape, g, sizeof g);
  bext_gen_shape_text(&want->shape, w, sizeof w);
  snprintf(why, n, "output `%s` is %s %s, the metadata says %s %s", field, g, bext_dtype_name(got->dtype), w,
           bext_dtype_name(want->dtype));
  return false;
}

static inline bool bext_gen_check_shape(char *why, size_t n, const char *field, const bext_meta_shape *got,
                                        const bext_meta_shape *want) {
  if (bext_gen_shape_eq(got, want)) return true;
  char g[200], w[200];
  bext_gen_shape_text(got, g, sizeof g);
  bext_gen_shape_text(want, w, sizeof w);
  snprintf(why, n, "output `%s` is %s, the metadata says %s", field, g, w);
  return false;
}

static inline bool bext_gen_check_dtype(char *why, size_t n, const char *field, bext_dtype got, bext_dtype want) {
  if (got == want) return true;
  snprintf(why, n, "output `%s` is %s, the metadata says %s", field, bext_dtype_name(got), bext_dtype_name(want));
  return false;
}

static inline bool bext_gen_check_int(char *why, size_t n, const char *field, bext_i128 got, bext_i128 want) {
  if (got == want) return true;
  char g[48], w[48];
  snprintf(why, n, "output `%s` is %s, the metadata says %s", field, bext_gen_i128_str(g, got),
           bext_gen_i128_str(w, want));
  return false;
}

static inline bool bext_gen_check_float(char *why, size_t n, const char *field, double got, double want) {
  if (got == want || (isnan(got) && isnan(want))) return true;
  snprintf(why, n, "output `%s` is %.17g, the metadata says %.17g", field, got, want);
  return false;
}

static inline bool bext_gen_check_bool(char *why, size_t n, const char *field, bool got, bool want) {
  if (got == want) return true;
  snprintf(why, n, "output `%s` is %s, the metadata says %s", field, got ? "true" : "false", want ? "true" : "false");
  return false;
}

/* Enum variants: names[] in declaration order. */
static inline bool bext_gen_check_tag(char *why, size_t n, const char *field, unsigned got, unsigned want,
                                      const char *const *names, unsigned count) {
  if (got == want) return true;
  snprintf(why, n, "output `%s` is variant %s, the metadata says variant %s", field,
           got < count ? names[got] : "?", want < count ? names[want] : "?");
  return false;
}

#ifdef __cplusplus
}
#endif
#endif /* BEXT_GEN_H */
