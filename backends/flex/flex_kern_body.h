/* flex_kern_body.h — kernel bodies compiled once per ISA variant.
 *
 * Included by flex_kern_avx2.c (under a target pragma, BXFX_MVEC defined:
 * libmvec 8-lane transcendentals, F16C conversions) and by flex_kern_gen.c
 * (baseline ISA, scalar libm).  SFX(name) gives each variant its own
 * symbols; VARIANT names the exported table.  The loops are written with
 * GCC/Clang vector extensions so that both compilers emit full-width
 * vector code at -O2 without relying on the auto-vectorizer's cost model. */
#include <math.h>
#include <string.h>
#if defined(__SSE2__) && !defined(BXFX_AVX)
#include <emmintrin.h>   /* the baseline's streaming stores (x86-64 has SSE2) */
#endif

typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));
typedef uint32_t v8u __attribute__((vector_size(32)));
typedef uint64_t v4q __attribute__((vector_size(32)));

static inline v8f SFX(ld)(const float *p) { v8f v; memcpy(&v, p, sizeof v); return v; }
typedef double v4d __attribute__((vector_size(32)));
typedef float v4f __attribute__((vector_size(16)));
typedef int64_t v4l __attribute__((vector_size(32)));
typedef int32_t v4i __attribute__((vector_size(16)));
static inline v4d SFX(ld4d)(const double *p) { v4d v; memcpy(&v, p, sizeof v); return v; }
/* Four f32 widened to f64 (exact).  AVX: one vcvtps2pd from memory; GCC 12
 * lowers __builtin_convertvector(v4f -> v4d) to two 2-lane conversions, an
 * insert and a stack spill, which made the f32 sums compute bound. */
static inline v4d SFX(ld4w)(const float *p) {
#ifdef BXFX_AVX
  return (v4d)_mm256_cvtps_pd(_mm_loadu_ps(p));
#else
  v4f v;
  memcpy(&v, p, sizeof v);
  return __builtin_convertvector(v, v4d);
#endif
}
/* Helpers that take vectors are macros: a vector-typed parameter of a
 * function makes GCC print an ABI note in the baseline-ISA variant. */
#define BXFX_ST(p, v) do { v8f st_ = (v); memcpy((p), &st_, sizeof st_); } while (0)
static inline v8f SFX(splat)(float x) { v8f v = { x, x, x, x, x, x, x, x }; return v; }
static inline v8i SFX(splati)(int32_t x) { v8i v = { x, x, x, x, x, x, x, x }; return v; }
#ifdef BXFX_AVX
#define BXFX_VSQRT(x) ((v8f)_mm256_sqrt_ps((__m256)(x)))
#else
#define BXFX_VSQRT(x) ({ v8f sq_ = (x); for (int k_ = 0; k_ < 8; k_++) sq_[k_] = sqrtf(sq_[k_]); sq_; })
#endif
/* Lane select without the ?: operator (C has none for vectors): m is -1/0. */
#define BXFX_SEL(m, a, b) ((v8f)((((v8i)(a)) & (m)) | (((v8i)(b)) & ~(m))))

/* ---- binary ------------------------------------------------------------ */
/* Each expression sees vectors (VEXPR) or scalars (SEXPR) x, y.  The
 * scalar forms are bxk_scalar.h's; the vector max/min must agree with
 * bxk_max_f32/bxk_min_f32 lane for lane (NaN wins: x > y or x is NaN picks
 * x), which test_flex_blocks.c checks on NaN, signed zeros and infinities. */
#define BXFX_VEXPR_add (x + y)
#define BXFX_VEXPR_sub (x - y)
#define BXFX_VEXPR_mul (x * y)
#define BXFX_VEXPR_div (x / y)
#define BXFX_VEXPR_max BXFX_SEL((x > y) | (x != x), x, y)
#define BXFX_VEXPR_min BXFX_SEL((x < y) | (x != x), x, y)
#define BXFX_SEXPR_add (x + y)
#define BXFX_SEXPR_sub (x - y)
#define BXFX_SEXPR_mul (x * y)
#define BXFX_SEXPR_div (x / y)
#define BXFX_SEXPR_max bxk_max_f32(x, y)
#define BXFX_SEXPR_min bxk_min_f32(x, y)

#define BXFX_BIN_DEF(name)                                                           \
  static void SFX(bin_##name)(const float *a, const float *b, float *o, size_t n,   \
                              int mode) {                                            \
    size_t i = 0;                                                                    \
    if (mode == BXFX_VV) {                                                           \
      for (; i + 16 <= n; i += 16) {                                                 \
        v8f x = SFX(ld)(a + i), y = SFX(ld)(b + i);                                  \
        v8f x2 = SFX(ld)(a + i + 8), y2 = SFX(ld)(b + i + 8);                        \
        BXFX_ST(o + i, BXFX_VEXPR_##name);                                           \
        { v8f x = x2, y = y2; BXFX_ST(o + i + 8, BXFX_VEXPR_##name); }               \
      }                                                                              \
      for (; i + 8 <= n; i += 8) {                                                   \
        v8f x = SFX(ld)(a + i), y = SFX(ld)(b + i);                                  \
        BXFX_ST(o + i, BXFX_VEXPR_##name);                                           \
      }                                                                              \
      for (; i < n; i++) { float x = a[i], y = b[i]; o[i] = BXFX_SEXPR_##name; }     \
    } else if (mode == BXFX_SV) {                                                    \
      float xs = a[0];                                                               \
      v8f x = SFX(splat)(xs);                                                        \
      for (; i + 8 <= n; i += 8) { v8f y = SFX(ld)(b + i); BXFX_ST(o + i, BXFX_VEXPR_##name); } \
      for (; i < n; i++) { float x = xs, y = b[i]; o[i] = BXFX_SEXPR_##name; }       \
    } else {                                                                         \
      float ys = b[0];                                                               \
      v8f y = SFX(splat)(ys);                                                        \
      for (; i + 8 <= n; i += 8) { v8f x = SFX(ld)(a + i); BXFX_ST(o + i, BXFX_VEXPR_##name); } \
      for (; i < n; i++) { float x = a[i], y = ys; o[i] = BXFX_SEXPR_##name; }       \
    }                                                                                \
  }
BXFX_BIN_LIST(BXFX_BIN_DEF)
#undef BXFX_BIN_DEF

/* ---- streaming copy-out ---------------------------------------------- */
/* o[0..bytes) = s[0..bytes), non-temporal from o's first 32-byte boundary
 * (plain stores before it and for the tail).  A kernel's block computed in
 * L1 leaves for memory without the read-for-ownership of its lines: an
 * out-of-place op on outputs larger than the last-level cache moves 2
 * bytes per byte written instead of 3.  One copy-out for every kernel,
 * not a streaming twin of each.  The caller fences (bxfx_stream_fence)
 * before anyone reads o. */
#if defined(BXFX_AVX)
static void SFX(stream_out)(void *o, const void *s, size_t bytes) {
  char *d = o;
  const char *p = s;
  size_t head = (size_t)(-(uintptr_t)d & 31u);
  if (head > bytes) head = bytes;
  memcpy(d, p, head);
  d += head, p += head, bytes -= head;
  for (; bytes >= 64; d += 64, p += 64, bytes -= 64) {
    __m256i v0 = _mm256_loadu_si256((const __m256i *)(const void *)p);
    __m256i v1 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32));
    _mm256_stream_si256((__m256i *)(void *)d, v0);
    _mm256_stream_si256((__m256i *)(void *)(d + 32), v1);
  }
  if (bytes >= 32) {
    _mm256_stream_si256((__m256i *)(void *)d, _mm256_loadu_si256((const __m256i *)(const void *)p));
    d += 32, p += 32, bytes -= 32;
  }
  memcpy(d, p, bytes);
}
#elif defined(__SSE2__)
static void SFX(stream_out)(void *o, const void *s, size_t bytes) {
  char *d = o;
  const char *p = s;
  size_t head = (size_t)(-(uintptr_t)d & 15u);
  if (head > bytes) head = bytes;
  memcpy(d, p, head);
  d += head, p += head, bytes -= head;
  for (; bytes >= 16; d += 16, p += 16, bytes -= 16)
    _mm_stream_si128((__m128i *)(void *)d, _mm_loadu_si128((const __m128i *)(const void *)p));
  memcpy(d, p, bytes);
}
#else
static void SFX(stream_out)(void *o, const void *s, size_t bytes) { memcpy(o, s, bytes); }
#endif

/* ---- fills -------------------------------------------------------------- */
/* o[0..bytes) = pat repeated from o: byte j is byte j % 8 of pat (an
 * element of 1, 2, 4 or 8 bytes replicated to 8 fills any run of whole
 * elements).  Whole 32-byte (baseline: 16-byte) vectors from o's first
 * boundary, stored non-temporally when stream (no read-for-ownership of
 * the lines they overwrite; the caller fences), bytes before and after
 * it one at a time.  Plain stores tied glibc's wmemset (AVX2, ERMS) and
 * rep stosq on 16-128 MiB fills (2 threads, min of 100); flex_layout.c's
 * fill_chunk says when to stream. */
static void SFX(fill8)(void *o, size_t bytes, uint64_t pat, bool stream) {
  unsigned char *d = o;
  unsigned char pb[8];
  memcpy(pb, &pat, 8);
#if defined(BXFX_AVX)
  enum { W = 32 };
#else
  enum { W = 16 };
#endif
  size_t head = (size_t)(-(uintptr_t)d & (W - 1)), j = 0;
  if (head > bytes) head = bytes;
  for (; j < head; j++) d[j] = pb[j & 7];
  /* the pattern as seen from the first whole vector */
  unsigned char rb[W];
  for (int k = 0; k < W; k++) rb[k] = pb[(head + (size_t)k) & 7];
  /* four vectors an iteration: one store a loop ran 1.4x slower on a
   * 16 MiB (cache-resident) fill */
#define BXFX_FILL_LOOP(ST, T, V)                                                     \
  for (; j + 4 * W <= bytes; j += 4 * W)                                             \
    for (int k_ = 0; k_ < 4; k_++) ST((T *)(void *)(d + j + k_ * W), V);             \
  for (; j + W <= bytes; j += W) ST((T *)(void *)(d + j), V);
#if defined(BXFX_AVX)
  const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)rb);
  if (stream) { BXFX_FILL_LOOP(_mm256_stream_si256, __m256i, v) }
  else { BXFX_FILL_LOOP(_mm256_store_si256, __m256i, v) }
#elif defined(__SSE2__)
  const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)rb);
  if (stream) { BXFX_FILL_LOOP(_mm_stream_si128, __m128i, v) }
  else { BXFX_FILL_LOOP(_mm_store_si128, __m128i, v) }
#else
  (void)stream;
  for (; j + W <= bytes; j += W) memcpy(d + j, rb, W);
#endif
  for (; j < bytes; j++) d[j] = pb[j & 7];
}
#undef BXFX_FILL_LOOP

/* ---- comparisons ------------------------------------------------------- */
/* o[i] = a[i] OP b[i] as 0/1 bytes, with mode as for the binary kernels.
 * Lanes compare to all-ones masks; the low byte of each mask's "& 1" is
 * the answer, narrowed eight at a time. */
typedef uint8_t v8b __attribute__((vector_size(8)));
/* 32 answers from four 8-lane masks: AVX2 packs them (saturating -1 stays
 * -1) within 128-bit halves, a dword permute restores the order. */
#ifdef BXFX_AVX
#define BXFX_CMP_ST32(p, m0, m1, m2, m3) do {                                       \
    __m256i p01_ = _mm256_packs_epi32((__m256i)(m0), (__m256i)(m1));                  \
    __m256i p23_ = _mm256_packs_epi32((__m256i)(m2), (__m256i)(m3));                  \
    __m256i b_ = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(p01_, p23_),          \
                                             _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)); \
    _mm256_storeu_si256((__m256i *)(p), _mm256_and_si256(b_, _mm256_set1_epi8(1)));  \
  } while (0)
#else
#define BXFX_CMP_ST32(p, m0, m1, m2, m3) do {                                       \
    v8i ms_[4] = { (m0), (m1), (m2), (m3) };                                          \
    for (int q_ = 0; q_ < 4; q_++) {                                                  \
      v8b r_ = __builtin_convertvector(ms_[q_] & SFX(splati)(1), v8b);                \
      memcpy((p) + 8 * q_, &r_, sizeof r_);                                           \
    }                                                                                 \
  } while (0)
#endif
#define BXFX_CMP_DEF(name, OP)                                                      \
  static void SFX(cmp_##name)(const float *a, const float *b, uint8_t *o, size_t n, \
                              int mode) {                                           \
    size_t i = 0;                                                                   \
    const v8i one = SFX(splati)(1);                                                 \
    if (mode == BXFX_VV) {                                                          \
      for (; i + 32 <= n; i += 32)                                                  \
        BXFX_CMP_ST32(o + i, (v8i)(SFX(ld)(a + i) OP SFX(ld)(b + i)),               \
                      (v8i)(SFX(ld)(a + i + 8) OP SFX(ld)(b + i + 8)),              \
                      (v8i)(SFX(ld)(a + i + 16) OP SFX(ld)(b + i + 16)),            \
                      (v8i)(SFX(ld)(a + i + 24) OP SFX(ld)(b + i + 24)));           \
      for (; i + 8 <= n; i += 8) {                                                  \
        v8b r = __builtin_convertvector((v8i)(SFX(ld)(a + i) OP SFX(ld)(b + i)) & one, v8b); \
        memcpy(o + i, &r, sizeof r);                                                \
      }                                                                             \
      for (; i < n; i++) o[i] = a[i] OP b[i];                                       \
    } else if (mode == BXFX_SV) {                                                   \
      const v8f x = SFX(splat)(a[0]);                                               \
      for (; i + 32 <= n; i += 32)                                                  \
        BXFX_CMP_ST32(o + i, (v8i)(x OP SFX(ld)(b + i)), (v8i)(x OP SFX(ld)(b + i + 8)), \
                      (v8i)(x OP SFX(ld)(b + i + 16)), (v8i)(x OP SFX(ld)(b + i + 24))); \
      for (; i + 8 <= n; i += 8) {                                                  \
        v8b r = __builtin_convertvector((v8i)(x OP SFX(ld)(b + i)) & one, v8b);     \
        memcpy(o + i, &r, sizeof r);                                                \
      }                                                                             \
      for (; i < n; i++) o[i] = a[0] OP b[i];                                       \
    } else {                                                                        \
      const v8f y = SFX(splat)(b[0]);                                               \
      for (; i + 32 <= n; i += 32)                                                  \
        BXFX_CMP_ST32(o + i, (v8i)(SFX(ld)(a + i) OP y), (v8i)(SFX(ld)(a + i + 8) OP y), \
                      (v8i)(SFX(ld)(a + i + 16) OP y), (v8i)(SFX(ld)(a + i + 24) OP y)); \
      for (; i + 8 <= n; i += 8) {                                                  \
        v8b r = __builtin_convertvector((v8i)(SFX(ld)(a + i) OP y) & one, v8b);     \
        memcpy(o + i, &r, sizeof r);                                                \
      }                                                                             \
      for (; i < n; i++) o[i] = a[i] OP b[0];                                       \
    }                                                                               \
  }
/* The comparisons and their operators, for these and the half ones. */
#define BXFX_CMP_OPS(X) X(eq, ==) X(ne, !=) X(gt, >) X(ge, >=) X(lt, <) X(le, <=)
BXFX_CMP_OPS(BXFX_CMP_DEF)
#undef BXFX_CMP_DEF

/* ---- native-width ints, f64 comparisons --------------------------------- */
/* Plain loops over bxk_scalar.h's rules, one per op and mode, which the
 * compiler vectorizes at the variant's width (division and rem stay
 * scalar: no vector integer division). */
#define BXFX_TLOOP(T, OT, EXPR)                                                    \
  do {                                                                             \
    if (mode == BXFX_VS) {                                                         \
      const T y = b[0];                                                            \
      for (size_t i = 0; i < n; i++) { const T x = a[i]; o[i] = (OT)(EXPR); }      \
    } else {                                                                       \
      for (size_t i = 0; i < n; i++) { const T x = a[i], y = b[i]; o[i] = (OT)(EXPR); } \
    }                                                                              \
  } while (0)
/* The divisors a magic number does not serve (divs_i32, divs_i64): 0,
 * +-1 and the type's MIN, by the scalar rules. */
#define BXFX_DIVS_EDGES(T, S, MIN)                                                \
  do {                                                                            \
    if (d == 0 || (rem && (d == 1 || d == -1))) {                                 \
      memset(o, 0, n * sizeof *o);                                                \
      return;                                                                     \
    }                                                                             \
    if (d == 1 || d == -1 || d == MIN) {                                          \
      for (size_t i = 0; i < n; i++) {                                            \
        const T x = a[i];                                                         \
        if (d == 1) o[i] = x;                                                     \
        else if (d == -1) o[i] = bxk_neg_##S(x);                                  \
        else o[i] = rem ? bxk_rem_##S(x, d) : x == MIN;                           \
      }                                                                           \
      return;                                                                     \
    }                                                                             \
  } while (0)
/* i32 x / d and floored x % d for one d (bxk_div_i32, bxk_rem_i32 for
 * every x): the divisor's magic number (bxfx_magic) as a multiply-high
 * of eight lanes (two vpmuldq, even and odd lanes), where the f64 lanes
 * below divide four at a time and left div_scalar i32 at a quarter of
 * copy bandwidth.  0, 1, -1 and INT32_MIN as divisors take their own
 * rules, as in divs_i64. */
static void SFX(divs_i32)(const int32_t *a, int32_t d, int32_t *o, size_t n, bool rem) {
  BXFX_DIVS_EDGES(int32_t, i32, INT32_MIN);
  const struct bxfx_magic mg = bxfx_magic(d, 32);
  size_t i = 0;
#if defined(BXFX_AVX)
  const __m256i M = _mm256_set1_epi32((int32_t)mg.m), D = _mm256_set1_epi32(d), z = _mm256_setzero_si256();
  const __m256i addx = _mm256_set1_epi32(d > 0 && mg.m < 0 ? -1 : 0), subx = _mm256_set1_epi32(d < 0 && mg.m > 0 ? -1 : 0);
  const __m128i sh = _mm_cvtsi32_si128(mg.s);
  for (; i + 8 <= n; i += 8) {
    const __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(a + i));
    const __m256i ev = _mm256_srli_epi64(_mm256_mul_epi32(x, M), 32);
    const __m256i od = _mm256_mul_epi32(_mm256_srli_epi64(x, 32), M);
    __m256i q = _mm256_blend_epi32(ev, od, 0xAA);   /* the high halves, lane by lane */
    q = _mm256_sub_epi32(_mm256_add_epi32(q, _mm256_and_si256(x, addx)), _mm256_and_si256(x, subx));
    q = _mm256_sra_epi32(q, sh);
    q = _mm256_add_epi32(q, _mm256_srli_epi32(q, 31));
    if (rem) {   /* r + d where r != 0 and its sign is not d's */
      const __m256i r = _mm256_sub_epi32(x, _mm256_mullo_epi32(q, D));
      const __m256i fix = _mm256_andnot_si256(_mm256_cmpeq_epi32(r, z), _mm256_srai_epi32(_mm256_xor_si256(r, D), 31));
      q = _mm256_add_epi32(r, _mm256_and_si256(fix, D));
    }
    _mm256_storeu_si256((__m256i *)(void *)(o + i), q);
  }
#endif
  for (; i < n; i++) {
    const int32_t x = a[i], q = bxfx_magic_div_i32(x, d, mg);
    if (!rem) { o[i] = q; continue; }
    const int32_t r = (int32_t)((uint32_t)x - (uint32_t)q * (uint32_t)d);
    o[i] = r + (d & -(int32_t)((r != 0) & ((r ^ d) < 0)));
  }
}
/* i32 truncated division and floored rem (bxk_div_i32, bxk_rem_i32) in
 * f64 lanes: for i32 operands the f64 quotient truncates to the exact one
 * (its error |q| 2^-53 <= 2^-22/|b| stays below the 1/|b| gap between a
 * non-integer quotient and the next integer), and q*b, a - q*b and the
 * divisor's-sign fix are exact in f64.  Divisors 0 and -1 are divided by
 * 1 meanwhile (no lane traps or overflows) and take the rule's answers
 * after: 0, and for division by -1 the wrapping negation.  vdivpd takes
 * four lanes at a time where idiv takes one.  One divisor for every
 * element (BXFX_VS) takes divs_i32's multiply instead. */
typedef uint32_t v4u __attribute__((vector_size(16)));
static void SFX(divrem_i32)(const int32_t *a, const int32_t *b, int32_t *o, size_t n, int mode, bool rem) {
  if (mode == BXFX_VS) {
    SFX(divs_i32)(a, b[0], o, n, rem);
    return;
  }
  const v4d zero = { 0, 0, 0, 0 }, one = { 1, 1, 1, 1 }, mone = { -1, -1, -1, -1 };
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    v4i xi, yi;
    memcpy(&xi, a + i, sizeof xi);
    if (mode == BXFX_VS) yi = (v4i){ b[0], b[0], b[0], b[0] };
    else memcpy(&yi, b + i, sizeof yi);
    v4d x = __builtin_convertvector(xi, v4d), y = __builtin_convertvector(yi, v4d);
    v4l ok = (v4l)(y != zero) & (v4l)(y != mone);
    y = (v4d)(((v4l)y & ok) | ((v4l)one & ~ok));
    v4i qi = __builtin_convertvector(x / y, v4i), ri;
    if (rem) {
      v4d q = __builtin_convertvector(qi, v4d);
      v4d r = x - q * y;
      v4l fix = (v4l)(r != zero) & ((v4l)(r < zero) ^ (v4l)(y < zero));
      r += (v4d)((v4l)y & fix);
      ri = __builtin_convertvector((v4d)((v4l)r & ok), v4i);
    } else {
      v4i neg = (v4i)((v4u){ 0, 0, 0, 0 } - (v4u)xi);
      ri = (qi & __builtin_convertvector(ok, v4i)) | (neg & (yi == (v4i){ -1, -1, -1, -1 }));
    }
    memcpy(o + i, &ri, sizeof ri);
  }
  for (; i < n; i++) {
    const int32_t y = mode == BXFX_VS ? b[0] : b[i];
    o[i] = rem ? bxk_rem_i32(a[i], y) : bxk_div_i32(a[i], y);
  }
}
/* By one exponent m >= 0 (pow_scalar): m's bits walked once per 4 vectors
 * in registers, the same wrapping products.  The blocks below stage each
 * lane through memory per step, which ran ~1.7 ns an element in L1 (i32 by 3,
 * 22% of copy bandwidth on 2 threads). */
#define BXFX_POW_INT_S_DEF(name, T, UT, VU, W, S)                                  \
  static void SFX(name##_s)(const T *a, UT m, T *o, size_t n) {                    \
    size_t i = 0;                                                                  \
    for (; i + 4 * W <= n; i += 4 * W) {                                           \
      VU x0, x1, x2, x3, r0 = (VU){ 0 } + 1u, r1 = r0, r2 = r0, r3 = r0;           \
      memcpy(&x0, a + i, 32);                                                      \
      memcpy(&x1, a + i + W, 32);                                                  \
      memcpy(&x2, a + i + 2 * W, 32);                                              \
      memcpy(&x3, a + i + 3 * W, 32);                                              \
      for (UT k = m; k; k >>= 1) {                                                 \
        if (k & 1u) r0 *= x0, r1 *= x1, r2 *= x2, r3 *= x3;                        \
        if (k > 1u) x0 *= x0, x1 *= x1, x2 *= x2, x3 *= x3;                        \
      }                                                                            \
      memcpy(o + i, &r0, 32);                                                      \
      memcpy(o + i + W, &r1, 32);                                                  \
      memcpy(o + i + 2 * W, &r2, 32);                                              \
      memcpy(o + i + 3 * W, &r3, 32);                                              \
    }                                                                              \
    for (; i < n; i++) o[i] = bxk_pow_##S(a[i], (T)m);                             \
  }
BXFX_POW_INT_S_DEF(pow_i32, int32_t, uint32_t, v8u, 8, i32)
BXFX_POW_INT_S_DEF(pow_i64, int64_t, uint64_t, v4q, 4, i64)
#undef BXFX_POW_INT_S_DEF
/* Integer pow (bxk_pow_i32 / _i64) a block at a time: its square-and-multiply steps
 * taken for every lane at once, each step a loop the compiler vectorizes
 * (the per-element loop on the exponent does not), for as many steps as
 * the block's largest exponent has bits.  A lane multiplies by its base
 * where its exponent has the step's bit, by 1 elsewhere: the same
 * wrapping products (in another order, which wrapping multiplication
 * does not see).  Negative exponents take the scalar rule; one exponent
 * >= 0 for all (BXFX_VS) takes name_s.  Reads a block
 * before writing it, so o may be a or b. */
#define BXFX_POW_INT_DEF(name, T, UT, VU, W, S)                                    \
  static void SFX(name)(const T *a, const T *b, T *o, size_t n, int mode) {         \
    if (mode == BXFX_VS && b[0] >= 0) {                                            \
      SFX(name##_s)(a, (UT)b[0], o, n);                                            \
      return;                                                                      \
    }                                                                              \
    enum { B = 256 };                                                              \
    _Alignas(32) T x0[B], e0[B];                                                   \
    _Alignas(32) UT e[B], base[B], r[B];   /* e: the exponent, 0 for negative ones */ \
    for (size_t i0 = 0; i0 < n; i0 += B) {                                         \
      const size_t m = n - i0 < B ? n - i0 : B, mv = (m + W - 1) & ~(size_t)(W - 1); \
      UT top = 0;                                                                  \
      bool neg = false;                                                            \
      for (size_t j = 0; j < mv; j++) {   /* lanes past m: 1^0 */                  \
        x0[j] = j < m ? a[i0 + j] : 1;                                             \
        e0[j] = j >= m ? 0 : mode == BXFX_VS ? b[0] : b[i0 + j];                   \
        neg |= e0[j] < 0;                                                          \
        e[j] = e0[j] < 0 ? 0u : (UT)e0[j];                                         \
        top |= e[j];                                                               \
        base[j] = (UT)x0[j];                                                       \
        r[j] = 1;                                                                  \
      }                                                                            \
      for (unsigned k = 0; top >> k; k++) {                                        \
        const bool last = (top >> k) == 1;                                         \
        for (size_t j = 0; j < mv; j += W) {                                       \
          VU ej, bj, rj;                                                           \
          memcpy(&ej, e + j, 32);                                                  \
          memcpy(&bj, base + j, 32);                                               \
          memcpy(&rj, r + j, 32);                                                  \
          const VU bit = (VU){ 0 } - ((ej >> k) & 1u);                             \
          rj *= (bj & bit) | (1u & ~bit);                                          \
          memcpy(r + j, &rj, 32);                                                  \
          if (!last) { bj *= bj; memcpy(base + j, &bj, 32); }                      \
        }                                                                          \
      }                                                                            \
      for (size_t j = 0; j < m; j++) o[i0 + j] = (T)r[j];                          \
      if (neg)                                                                     \
        for (size_t j = 0; j < m; j++)                                             \
          if (e0[j] < 0) o[i0 + j] = bxk_pow_##S(x0[j], e0[j]);                    \
    }                                                                              \
  }
BXFX_POW_INT_DEF(pow_i32, int32_t, uint32_t, v8u, 8, i32)
BXFX_POW_INT_DEF(pow_i64, int64_t, uint64_t, v4q, 4, i64)
#undef BXFX_POW_INT_DEF
static void SFX(bin_i32)(int op, const int32_t *a, const int32_t *b, int32_t *o, size_t n, int mode) {
  switch (op) {
  case BXFX_IOP_add: BXFX_TLOOP(int32_t, int32_t, bxk_add_i32(x, y)); break;
  case BXFX_IOP_sub: BXFX_TLOOP(int32_t, int32_t, bxk_sub_i32(x, y)); break;
  case BXFX_IOP_mul: BXFX_TLOOP(int32_t, int32_t, bxk_mul_i32(x, y)); break;
  case BXFX_IOP_div: SFX(divrem_i32)(a, b, o, n, mode, false); break;
  case BXFX_IOP_rem: SFX(divrem_i32)(a, b, o, n, mode, true); break;
  case BXFX_IOP_max: BXFX_TLOOP(int32_t, int32_t, bxk_max_i32(x, y)); break;
  case BXFX_IOP_min: BXFX_TLOOP(int32_t, int32_t, bxk_min_i32(x, y)); break;
  default: SFX(pow_i32)(a, b, o, n, mode); break;
  }
}
/* i64 binary ops in the variant's ISA: under AVX2 the compiler
 * vectorizes add/sub, max/min (vpcmpgtq) and the wrapping multiply
 * (vpmuludq steps), which the general engine's loops, compiled for the
 * baseline (no 64-bit vector compare or multiply), ran element by
 * element: min_scalar i64 was compute bound at a third of copy
 * bandwidth.  Division and rem by a tensor stay an idiv per element. */
static void SFX(bin_i64)(int op, const int64_t *a, const int64_t *b, int64_t *o, size_t n, int mode) {
  switch (op) {
  case BXFX_IOP_add: BXFX_TLOOP(int64_t, int64_t, bxk_add_i64(x, y)); break;
  case BXFX_IOP_sub: BXFX_TLOOP(int64_t, int64_t, bxk_sub_i64(x, y)); break;
  case BXFX_IOP_mul: BXFX_TLOOP(int64_t, int64_t, bxk_mul_i64(x, y)); break;
  case BXFX_IOP_div: BXFX_TLOOP(int64_t, int64_t, bxk_div_i64(x, y)); break;
  case BXFX_IOP_rem: BXFX_TLOOP(int64_t, int64_t, bxk_rem_i64(x, y)); break;
  case BXFX_IOP_max: BXFX_TLOOP(int64_t, int64_t, bxk_max_i64(x, y)); break;
  case BXFX_IOP_min: BXFX_TLOOP(int64_t, int64_t, bxk_min_i64(x, y)); break;
  default: SFX(pow_i64)(a, b, o, n, mode); break;
  }
}
/* Unary ints (BXFX_IUN_*), i32 and i64 alike: plain loops the compiler
 * vectorizes here, under the variant's ISA (the general engine's loops
 * are compiled for the baseline, where i64 has no vector compare). */
#define BXFX_UN_INT_DEF(name, T, S)                                                \
  static void SFX(name)(int op, const T *a, T *o, size_t n, T lo, T hi) {          \
    switch (op) {                                                                  \
    case BXFX_IUN_neg: for (size_t i = 0; i < n; i++) o[i] = bxk_neg_##S(a[i]); break; \
    case BXFX_IUN_abs: for (size_t i = 0; i < n; i++) o[i] = bxk_abs_##S(a[i]); break; \
    case BXFX_IUN_relu: for (size_t i = 0; i < n; i++) o[i] = bxk_relu_##S(a[i]); break; \
    case BXFX_IUN_sign: for (size_t i = 0; i < n; i++) o[i] = bxk_sign_##S(a[i]); break; \
    default:                                                                       \
      for (size_t i = 0; i < n; i++) { T x = a[i]; o[i] = x < lo ? lo : x > hi ? hi : x; } \
      break;                                                                       \
    }                                                                              \
  }
BXFX_UN_INT_DEF(un_i32, int32_t, i32)
BXFX_UN_INT_DEF(un_i64, int64_t, i64)
#undef BXFX_UN_INT_DEF
/* Bool ops (BXFX_BOP_*) as byte loops the compiler vectorizes at the
 * variant's width: the same expressions as the general engine's. */
static void SFX(bop)(int op, const uint8_t *a, const uint8_t *b, uint8_t *o, size_t n) {
  switch (op) {
  case BXFX_BOP_and: for (size_t i = 0; i < n; i++) o[i] = a[i] & b[i]; break;
  case BXFX_BOP_or: for (size_t i = 0; i < n; i++) o[i] = a[i] | b[i]; break;
  case BXFX_BOP_xor: for (size_t i = 0; i < n; i++) o[i] = a[i] ^ b[i]; break;
  case BXFX_BOP_eq: for (size_t i = 0; i < n; i++) o[i] = a[i] == b[i]; break;
  case BXFX_BOP_ne: for (size_t i = 0; i < n; i++) o[i] = a[i] != b[i]; break;
  default: for (size_t i = 0; i < n; i++) o[i] = !a[i]; break;
  }
}
/* mask_where / mask_fill at the element's own width: o[i] = m[i] ? v[i] :
 * t[i] as bits (v[0] for every i when vs), the reference's byte copy of one
 * side.  The general engine widened halves to f32 and i32 to i64 and
 * narrowed back (three passes a block, and a NaN payload through bf16's
 * rounding).  The W mask bytes of one 32-byte vector of T widen to lanes
 * that are all ones where the byte is 0 (BXFX_MZ_<T>: one vpmovzx and a
 * compare; GCC lowers the generic byte-to-dword conversion to scalar
 * inserts), and both sides are read and blended, since a branch per
 * element mispredicts on a random mask. */
#ifdef BXFX_AVX
#define BXFX_MZ_uint8_t(p) _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(const void *)(p)), _mm256_setzero_si256())
#define BXFX_MZ_uint16_t(p) \
  _mm256_cmpeq_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(p))), _mm256_setzero_si256())
#define BXFX_MZ_uint32_t(p) \
  _mm256_cmpeq_epi32(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(p))), _mm256_setzero_si256())
#define BXFX_MZ_uint64_t(p) ({ int32_t w_; memcpy(&w_, (p), 4); \
  _mm256_cmpeq_epi64(_mm256_cvtepu8_epi64(_mm_cvtsi32_si128(w_)), _mm256_setzero_si256()); })
#define BXFX_MZ(T, W, p) ((vt_)BXFX_MZ_##T(p))
#else
#define BXFX_MZ(T, W, p) ({ typedef uint8_t vm_ __attribute__((vector_size(W))); \
  vm_ mb_; memcpy(&mb_, (p), sizeof mb_); (vt_)(__builtin_convertvector(mb_, vt_) == 0); })
#endif
#define BXFX_MSEL_DEF(T, W)                                                        \
  static void SFX(msel_##T)(const T *t, const uint8_t *m, const T *v, T *o, size_t n, bool vs) { \
    typedef T vt_ __attribute__((vector_size(32)));                                 \
    size_t i = 0;                                                                   \
    const vt_ vv = (vt_){ 0 } + v[0];                                               \
    for (; i + W <= n; i += W) {                                                    \
      vt_ x, y = vv, z = BXFX_MZ(T, W, m + i);                                      \
      memcpy(&x, t + i, sizeof x);                                                  \
      if (!vs) memcpy(&y, v + i, sizeof y);                                         \
      x = (x & z) | (y & ~z);                                                       \
      memcpy(o + i, &x, sizeof x);                                                  \
    }                                                                               \
    for (; i < n; i++) o[i] = m[i] ? v[vs ? 0 : i] : t[i];                          \
  }
BXFX_MSEL_DEF(uint8_t, 32)
BXFX_MSEL_DEF(uint16_t, 16)
BXFX_MSEL_DEF(uint32_t, 8)
BXFX_MSEL_DEF(uint64_t, 4)
#undef BXFX_MSEL_DEF
#undef BXFX_MZ
#undef BXFX_MZ_uint8_t
#undef BXFX_MZ_uint16_t
#undef BXFX_MZ_uint32_t
#undef BXFX_MZ_uint64_t
static void SFX(mask_sel)(size_t es, const void *t, const uint8_t *m, const void *v, void *o, size_t n, bool vs) {
  switch (es) {
  case 8: SFX(msel_uint64_t)(t, m, v, o, n, vs); break;
  case 4: SFX(msel_uint32_t)(t, m, v, o, n, vs); break;
  case 2: SFX(msel_uint16_t)(t, m, v, o, n, vs); break;
  default: SFX(msel_uint8_t)(t, m, v, o, n, vs); break;
  }
}

/* i64 x / d and floored x % d for one d (bxk_div_i64, bxk_rem_i64 for
 * every x): a multiply-high by d's magic number (bxfx_magic) instead
 * of an idiv per element; the remainder is x - q*d with the divisor's-sign
 * fix.  0, 1, -1 and INT64_MIN as divisors take their own rules. */
static void SFX(divs_i64)(const int64_t *a, int64_t d, int64_t *o, size_t n, bool rem) {
  BXFX_DIVS_EDGES(int64_t, i64, INT64_MIN);
  const struct bxfx_magic mg = bxfx_magic(d, 64);
  for (size_t i = 0; i < n; i++) {
    const int64_t x = a[i];
    const int64_t q = bxfx_magic_div_i64(x, d, mg);
    if (!rem) { o[i] = q; continue; }
    const int64_t r = (int64_t)((uint64_t)x - (uint64_t)q * (uint64_t)d);
    /* r + d where r != 0 and its sign is not d's, as a mask: a branch on
     * r != 0 mispredicts on every third element of a random row */
    o[i] = r + (d & -(int64_t)((r != 0) & ((r ^ d) < 0)));
  }
}
#undef BXFX_DIVS_EDGES
/* i32 comparisons in 8-lane vectors stored 32 answers at a time
 * (BXFX_CMP_ST32, as f32's): the compiler's own vectorization of the
 * plain loop masks and packs each answer twice over. */
static inline v8i SFX(ldi)(const int32_t *p) { v8i v; memcpy(&v, p, sizeof v); return v; }
#define BXFX_CMPI_LOOP(OP)                                                          \
  do {                                                                              \
    const v8i one = SFX(splati)(1), bs = SFX(splati)(b[0]);                         \
    const bool vs = mode == BXFX_VS;                                                \
    size_t i = 0;                                                                   \
    for (; i + 32 <= n; i += 32)                                                    \
      BXFX_CMP_ST32(o + i, SFX(ldi)(a + i) OP (vs ? bs : SFX(ldi)(b + i)),           \
                    SFX(ldi)(a + i + 8) OP (vs ? bs : SFX(ldi)(b + i + 8)),          \
                    SFX(ldi)(a + i + 16) OP (vs ? bs : SFX(ldi)(b + i + 16)),        \
                    SFX(ldi)(a + i + 24) OP (vs ? bs : SFX(ldi)(b + i + 24)));       \
    for (; i + 8 <= n; i += 8) {                                                    \
      v8b r = __builtin_convertvector((SFX(ldi)(a + i) OP (vs ? bs : SFX(ldi)(b + i))) & one, v8b); \
      memcpy(o + i, &r, sizeof r);                                                  \
    }                                                                               \
    for (; i < n; i++) o[i] = a[i] OP (vs ? b[0] : b[i]);                           \
  } while (0)
static void SFX(cmp_i32)(int cmp, const int32_t *a, const int32_t *b, uint8_t *o, size_t n, int mode) {
  switch (cmp) {
  case BXFX_CMP_eq: BXFX_CMPI_LOOP(==); break;
  case BXFX_CMP_ne: BXFX_CMPI_LOOP(!=); break;
  case BXFX_CMP_gt: BXFX_CMPI_LOOP(>); break;
  case BXFX_CMP_ge: BXFX_CMPI_LOOP(>=); break;
  case BXFX_CMP_lt: BXFX_CMPI_LOOP(<); break;
  default: BXFX_CMPI_LOOP(<=); break;
  }
}
#undef BXFX_CMPI_LOOP
#define BXFX_CMP_T_DEF(name, T)                                                     \
  static void SFX(name)(int cmp, const T *a, const T *b, uint8_t *o, size_t n, int mode) { \
    switch (cmp) {                                                                  \
    case BXFX_CMP_eq: BXFX_TLOOP(T, uint8_t, x == y); break;                        \
    case BXFX_CMP_ne: BXFX_TLOOP(T, uint8_t, x != y); break;                        \
    case BXFX_CMP_gt: BXFX_TLOOP(T, uint8_t, x > y); break;                         \
    case BXFX_CMP_ge: BXFX_TLOOP(T, uint8_t, x >= y); break;                        \
    case BXFX_CMP_lt: BXFX_TLOOP(T, uint8_t, x < y); break;                         \
    default: BXFX_TLOOP(T, uint8_t, x <= y); break;                                 \
    }                                                                               \
  }
BXFX_CMP_T_DEF(cmp_i64, int64_t)
BXFX_CMP_T_DEF(cmp_f64, double)
#undef BXFX_CMP_T_DEF
#undef BXFX_TLOOP

/* ---- unary ------------------------------------------------------------- */
/* Transcendentals: 8 lanes through libmvec when available, else libm. */
#ifdef BXFX_MVEC
#define BXFX_MV(fn) ((v8f)_ZGVdN8v_##fn((__m256)(x)))
#define BXFX_UN_TR(name, fn)                                                       \
  static void SFX(un_##name)(const float *a, float *o, size_t n) {               \
    size_t i = 0;                                                                  \
    for (; i + 8 <= n; i += 8) { v8f x = SFX(ld)(a + i); BXFX_ST(o + i, BXFX_MV(fn)); } \
    if (i < n) { /* tail through the same vector routine: same rounding */       \
      float t[8] = { 0 };                                                          \
      memcpy(t, a + i, (n - i) * sizeof(float));                                  \
      v8f x = SFX(ld)(t);                                                          \
      BXFX_ST(t, BXFX_MV(fn));                                                     \
      memcpy(o + i, t, (n - i) * sizeof(float));                                  \
    }                                                                              \
  }
#else
#define BXFX_UN_TR(name, fn)                                                       \
  static void SFX(un_##name)(const float *a, float *o, size_t n) {               \
    for (size_t i = 0; i < n; i++) o[i] = fn(a[i]);                               \
  }
#endif
#define BXFX_UN_TR_LIST(X) X(exp, expf) X(log, logf) X(log1p, log1pf) X(sin, sinf) X(cos, cosf) \
  X(tanh, tanhf) X(erf, erff)
BXFX_UN_TR_LIST(BXFX_UN_TR)

/* f64 (4 lanes) and the pows, the same way: a tail goes through the same
 * vector routine, padded. */
#ifdef BXFX_MVEC
#define BXFX_UND_TR(name, fn)                                                      \
  static void SFX(und_##name)(const double *a, double *o, size_t n) {            \
    size_t i = 0;                                                                  \
    for (; i + 4 <= n; i += 4) {                                                   \
      v4d x = SFX(ld4d)(a + i), r = (v4d)_ZGVdN4v_##fn((__m256d)x);                \
      memcpy(o + i, &r, sizeof r);                                                 \
    }                                                                              \
    if (i < n) {                                                                   \
      double t[4] = { 0 };                                                         \
      memcpy(t, a + i, (n - i) * sizeof(double));                                  \
      v4d x = SFX(ld4d)(t), r = (v4d)_ZGVdN4v_##fn((__m256d)x);                    \
      memcpy(t, &r, sizeof r);                                                     \
      memcpy(o + i, t, (n - i) * sizeof(double));                                  \
    }                                                                              \
  }
#define BXFX_POW_DEF(name, T, VT, W, LD, VFN, MT)                                  \
  static void SFX(name)(const T *a, const T *b, T *o, size_t n) {                  \
    size_t i = 0;                                                                  \
    for (; i + W <= n; i += W) {                                                   \
      VT r = (VT)VFN((MT)LD(a + i), (MT)LD(b + i));                                \
      memcpy(o + i, &r, sizeof r);                                                 \
    }                                                                              \
    if (i < n) {                                                                   \
      T x[W] = { 0 }, y[W] = { 0 };                                                \
      memcpy(x, a + i, (n - i) * sizeof(T));                                       \
      memcpy(y, b + i, (n - i) * sizeof(T));                                       \
      VT r = (VT)VFN((MT)LD(x), (MT)LD(y));                                        \
      memcpy(x, &r, sizeof r);                                                     \
      memcpy(o + i, x, (n - i) * sizeof(T));                                       \
    }                                                                              \
  }
BXFX_POW_DEF(pow_f32, float, v8f, 8, SFX(ld), _ZGVdN8vv_powf, __m256)
BXFX_POW_DEF(pow_f64, double, v4d, 4, SFX(ld4d), _ZGVdN4vv_pow, __m256d)
#undef BXFX_POW_DEF
#else
#define BXFX_UND_TR(name, fn)                                                      \
  static void SFX(und_##name)(const double *a, double *o, size_t n) {            \
    for (size_t i = 0; i < n; i++) o[i] = fn(a[i]);                               \
  }
static void SFX(pow_f32)(const float *a, const float *b, float *o, size_t n) {
  for (size_t i = 0; i < n; i++) o[i] = powf(a[i], b[i]);
}
static void SFX(pow_f64)(const double *a, const double *b, double *o, size_t n) {
  for (size_t i = 0; i < n; i++) o[i] = pow(a[i], b[i]);
}
#endif
BXFX_UND_TR(exp, exp)
BXFX_UND_TR(log, log)
BXFX_UND_TR(log1p, log1p)
BXFX_UND_TR(sin, sin)
BXFX_UND_TR(cos, cos)
BXFX_UND_TR(tanh, tanh)
BXFX_UND_TR(erf, erf)
#undef BXFX_UND_TR

static void SFX(un_sigmoid)(const float *a, float *o, size_t n) {
  /* 1 / (1 + exp(-x)): exp overflows to inf for very negative x, giving
   * exactly 0, which is the right limit. */
  size_t i = 0;
  for (; i < n; i += 256) {
    size_t m = n - i < 256 ? n - i : 256;
    float t[256];
    for (size_t j = 0; j < m; j++) t[j] = -a[i + j];
    SFX(un_exp)(t, t, m);
    for (size_t j = 0; j < m; j++) o[i + j] = 1.0f / (1.0f + t[j]);
  }
}

static void SFX(und_sigmoid)(const double *a, double *o, size_t n) {
  /* un_sigmoid's formula and limits, through und_exp's lanes. */
  for (size_t i = 0; i < n; i += 256) {
    size_t m = n - i < 256 ? n - i : 256;
    double t[256];
    for (size_t j = 0; j < m; j++) t[j] = -a[i + j];
    SFX(und_exp)(t, t, m);
    for (size_t j = 0; j < m; j++) o[i + j] = 1.0 / (1.0 + t[j]);
  }
}

/* f64 lane-wise unary ops: name, vector form (4 lanes x, constant one),
 * scalar form (bxk_scalar.h's rule, also the tail's).  Each vector form
 * gives the scalar form's bits: vsqrtpd and vdivpd round correctly as
 * sqrt and / do, and vroundpd's modes are floor's, ceil's and
 * nearbyint's (bxk_round_f64: the current mode) -- NaN payloads, -0.0,
 * infinities and |x| >= 2^52 pass through as from libm; test_flex_paths.c
 * checks each.  The baseline ISA has no vroundpd (libm per element), so
 * its table keeps the scalar loop for all of them. */
#define BXFX_UND_EL_LIST(X)                                                        \
  X(sqrt, BXFX_VSQRTD(x), sqrt(x))                                                \
  X(rsqrt, one / BXFX_VSQRTD(x), 1.0 / sqrt(x))                                   \
  X(recip, one / x, 1.0 / x)                                                      \
  X(floor, BXFX_VRNDD(x, _MM_FROUND_TO_NEG_INF), floor(x))                        \
  X(ceil, BXFX_VRNDD(x, _MM_FROUND_TO_POS_INF), ceil(x))                          \
  X(round, BXFX_VRNDD(x, _MM_FROUND_CUR_DIRECTION), bxk_round_f64(x))
#ifdef BXFX_AVX
#define BXFX_VSQRTD(x) ((v4d)_mm256_sqrt_pd((__m256d)(x)))
#define BXFX_VRNDD(x, m) ((v4d)_mm256_round_pd((__m256d)(x), (m) | _MM_FROUND_NO_EXC))
#define BXFX_UND_EL(name, VEXPR, SEXPR)                                            \
  static void SFX(und_##name)(const double *a, double *o, size_t n) {            \
    const v4d one = { 1, 1, 1, 1 };                                                \
    (void)one;                                                                     \
    size_t i = 0;                                                                  \
    for (; i + 4 <= n; i += 4) {                                                   \
      v4d x = SFX(ld4d)(a + i), r = VEXPR;                                         \
      memcpy(o + i, &r, sizeof r);                                                 \
    }                                                                              \
    for (; i < n; i++) { double x = a[i]; o[i] = SEXPR; }                          \
  }
#else
#define BXFX_UND_EL(name, VEXPR, SEXPR)                                            \
  static void SFX(und_##name)(const double *a, double *o, size_t n) {            \
    for (size_t i = 0; i < n; i++) { double x = a[i]; o[i] = SEXPR; }             \
  }
#endif
BXFX_UND_EL_LIST(BXFX_UND_EL)
#undef BXFX_UND_EL
#undef BXFX_UND_EL_LIST

/* Rounding: the AVX form rounds lanes with the same rule as floorf,
 * ceilf and nearbyintf (bxk_round_f32: the current mode, to nearest even
 * by default); the baseline form calls them lane by lane. */
#ifdef BXFX_AVX
#define BXFX_VRND(x, m) ((v8f)_mm256_round_ps((__m256)(x), (m) | _MM_FROUND_NO_EXC))
#define BXFX_VFLOOR(x) BXFX_VRND(x, _MM_FROUND_TO_NEG_INF)
#define BXFX_VCEIL(x) BXFX_VRND(x, _MM_FROUND_TO_POS_INF)
#define BXFX_VNEAR(x) BXFX_VRND(x, _MM_FROUND_CUR_DIRECTION)
#else
#define BXFX_VLANES(x, fn) ({ v8f r_ = (x); for (int k_ = 0; k_ < 8; k_++) r_[k_] = fn(r_[k_]); r_; })
#define BXFX_VFLOOR(x) BXFX_VLANES(x, floorf)
#define BXFX_VCEIL(x) BXFX_VLANES(x, ceilf)
#define BXFX_VNEAR(x) BXFX_VLANES(x, bxk_round_f32)
#endif
/* The lane-wise unary ops: name, vector form, scalar form (bxk_scalar.h's
 * rule), each seeing x (and the constants one and zero).  Listed once for
 * the f32 kernels and the fused half ones (un_half).
 * relu: the vector form must agree with bxk_relu_f32 (x < 0 ? 0 : x, so -0
 * and NaN pass through); sign: bxk_sign_f32 (1, -1, or x itself: zeros
 * and NaN); both checked by test_flex_blocks.c. */
#define BXFX_UN_EL_LIST(X)                                                        \
  X(sqrt, BXFX_VSQRT(x), sqrtf(x))                                                \
  X(rsqrt, one / BXFX_VSQRT(x), 1.0f / sqrtf(x))                                  \
  X(neg, -x, -x)                                                                  \
  X(abs, (v8f)((v8i)x & SFX(splati)(0x7fffffff)), fabsf(x))                       \
  X(relu, BXFX_SEL((v8i)(x < zero), zero, x), bxk_relu_f32(x))                    \
  X(recip, one / x, 1.0f / x)                                                     \
  X(floor, BXFX_VFLOOR(x), floorf(x))                                             \
  X(ceil, BXFX_VCEIL(x), ceilf(x))                                                \
  X(round, BXFX_VNEAR(x), bxk_round_f32(x))                                       \
  X(sign, BXFX_SEL((v8i)(x > zero), one, BXFX_SEL((v8i)(x < zero), -one, x)), bxk_sign_f32(x))
#define BXFX_UN_EL(name, VEXPR, SEXPR)                                             \
  static void SFX(un_##name)(const float *a, float *o, size_t n) {               \
    size_t i = 0;                                                                  \
    v8f one = SFX(splat)(1.0f), zero = SFX(splat)(0.0f);                          \
    (void)one; (void)zero;                                                         \
    for (; i + 8 <= n; i += 8) { v8f x = SFX(ld)(a + i); BXFX_ST(o + i, VEXPR); }  \
    for (; i < n; i++) { float x = a[i]; o[i] = SEXPR; }                           \
  }
BXFX_UN_EL_LIST(BXFX_UN_EL)
#undef BXFX_UN_EL

/* f32 op f64-scalar in f64 lanes (flex_kern.h binw_f32): one switch per
 * call, so each loop is a straight convert-op-convert. */
#define BXFX_BINW_LOOP(OP)                                                     \
  for (; i + 8 <= n; i += 8) {                                                 \
    v4d x0 = SFX(ld4w)(a + i), x1 = SFX(ld4w)(a + i + 4);                      \
    v4f f0 = __builtin_convertvector(x0 OP y, v4f), f1 = __builtin_convertvector(x1 OP y, v4f); \
    memcpy(o + i, &f0, sizeof f0);                                             \
    memcpy(o + i + 4, &f1, sizeof f1);                                         \
  }                                                                            \
  for (; i < n; i++) o[i] = (float)((double)a[i] OP s);
static void SFX(binw_f32)(int op, const float *a, double s, float *o, size_t n) {
  const v4d y = { s, s, s, s };
  size_t i = 0;
  switch (op) {
  case BXFX_BIN_add: BXFX_BINW_LOOP(+) break;
  case BXFX_BIN_sub: BXFX_BINW_LOOP(-) break;
  case BXFX_BIN_mul: BXFX_BINW_LOOP(*) break;
  case BXFX_BIN_div: BXFX_BINW_LOOP(/) break;
  default: break;
  }
}
#undef BXFX_BINW_LOOP

/* Integer powers of f32 in f64 lanes by repeated squaring, rounded to f32
 * once at the end: the reference rounds pow((double)x, e) to f32; x^2,
 * x^3 and x^4 are the correctly rounded doubles either way, larger |e|
 * differ from pow in the last bits of the double only.  |e| <= 64 (the
 * caller falls back to pow beyond); x^0 is 1 for every x, NaN included,
 * and negative powers are 1 / x^|e| (signed zeros give signed infinities,
 * like pow). */
/* b^m in 4 f64 lanes of four vectors b0..b3 (overwritten), then 1 / that
 * for e < 0, as r0..r3.  16 lanes a step, the exponent's bits walked once
 * for all four vectors: one vector a step was a chain of dependent
 * multiplies behind a branch per bit, ~2 cycles an element
 * (pow_scalar(x, 3) ran at half the copy bandwidth); four chains side by
 * side overlap.  Each lane's products are the same, in the same order.
 * Needs m, e and one (1.0 lanes). */
#define BXFX_POWI4_(b0, b1, b2, b3, r0, r1, r2, r3)                              \
  do {                                                                          \
    r0 = one, r1 = one, r2 = one, r3 = one;                                     \
    for (unsigned k_ = m;;) {                                                   \
      if (k_ & 1u) r0 *= b0, r1 *= b1, r2 *= b2, r3 *= b3;                      \
      k_ >>= 1;                                                                 \
      if (!k_) break;                                                           \
      b0 *= b0, b1 *= b1, b2 *= b2, b3 *= b3;                                   \
    }                                                                           \
    if (e < 0) r0 = one / r0, r1 = one / r1, r2 = one / r2, r3 = one / r3;      \
  } while (0)
/* One lane of the same. */
static inline float SFX(powi1)(double b, unsigned m, int e) {
  double r = 1;
  for (unsigned k = m;;) {
    if (k & 1u) r *= b;
    k >>= 1;
    if (!k) break;
    b *= b;
  }
  return (float)(e < 0 ? 1 / r : r);
}
static void SFX(powi_f32)(const float *a, float *o, size_t n, int e) {
  unsigned m = (unsigned)(e < 0 ? -e : e);
  const v4d one = { 1, 1, 1, 1 };
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    v4d b0 = SFX(ld4w)(a + i), b1 = SFX(ld4w)(a + i + 4), b2 = SFX(ld4w)(a + i + 8), b3 = SFX(ld4w)(a + i + 12);
    v4d r0, r1, r2, r3;
    BXFX_POWI4_(b0, b1, b2, b3, r0, r1, r2, r3);
    v4f f0 = __builtin_convertvector(r0, v4f), f1 = __builtin_convertvector(r1, v4f);
    v4f f2 = __builtin_convertvector(r2, v4f), f3 = __builtin_convertvector(r3, v4f);
    memcpy(o + i, &f0, sizeof f0);
    memcpy(o + i + 4, &f1, sizeof f1);
    memcpy(o + i + 8, &f2, sizeof f2);
    memcpy(o + i + 12, &f3, sizeof f3);
  }
  for (; i + 4 <= n; i += 4) {
    v4d b = SFX(ld4w)(a + i), r = one;
    for (unsigned k = m;;) {
      if (k & 1u) r *= b;
      k >>= 1;
      if (!k) break;
      b *= b;
    }
    if (e < 0) r = one / r;
    v4f f = __builtin_convertvector(r, v4f);
    memcpy(o + i, &f, sizeof f);
  }
  for (; i < n; i++) o[i] = SFX(powi1)(a[i], m, e);
}

/* ---- f64 integer powers ------------------------------------------------ */
/* f64 powi's reference is libm's pow(x, (double)e) per element, bit for
 * bit (docs/runtime.md "Integer and bool"), and pow_scalar by an integer
 * takes this kernel too.  glibc's pow (2.28+, the ARM routine) is within
 * 0.54 ulp: its result is the rounding of a value within
 *   0.011 + |e log|x|| * 1.5 * 2^-15 ulp
 * of the true x^e (its ulperr_exp 0.511 and relerr_log 1.5 * 2^-68
 * without FMA, the comment above its pow), so it returns the correctly
 * rounded x^e whenever x^e lies farther than that from a midpoint
 * between two doubles.  The AVX2 variant computes x^e in double-double
 * (FMA two-products, the exponent's bits walked once, 1/x^|e| by one
 * Newton step: relative error below 2^-98 for |e| <= 64), takes the
 * rounded head h = round(h + l), and keeps it for a lane when both
 * h + (l - M) and h + (l + M) round to h, M = c ulp(h) covering 1.5
 * times glibc's distance (c = 0.02 for 2^-64 <= |h| <= 2^64, where
 * |e log|x|| <= 44.4 and glibc's bound is 0.0131 ulp; 0.065 up to
 * 2^+-960/1000, bound 0.0428) -- then the true x^e, and everything
 * glibc's pow can round, rounds to h.  Lanes near a midpoint (~4% of
 * random inputs), outside that range (overflow,
 * subnormals, zeros), infinite or NaN take pow itself.  10^8 random
 * inputs per exponent matched pow bit for bit (tests/runtime/
 * test_flex_powi.c holds a smaller sample).  The baseline variant calls
 * pow per element (without FMA the two-products cost more than pow). */
#ifdef BXFX_AVX
#define BXFX_DDMUL(h, l, bh, bl) do {                                          \
    __m256d p_ = _mm256_mul_pd(h, bh), e_ = _mm256_fmsub_pd(h, bh, p_);      \
    e_ = _mm256_fmadd_pd(h, bl, e_);                                         \
    e_ = _mm256_fmadd_pd(l, bh, e_);                                         \
    h = _mm256_add_pd(p_, e_);                                               \
    l = _mm256_sub_pd(e_, _mm256_sub_pd(h, p_));                             \
  } while (0)
/* x^e for the lanes of V vectors x[] (m = |e| >= 1), side by side: the
 * double-double steps are latency-bound chains.  The lanes whose result
 * must come from pow get their bit set in the returned mask (4 a vector). */
#define BXFX_POWI_V 2
static inline int SFX(powi_f64v)(const __m256d *x, unsigned m, bool neg, __m256d *res) {
  enum { V = BXFX_POWI_V };
  const __m256d absm = _mm256_castsi256_pd(_mm256_set1_epi64x(INT64_MAX));
  const __m256d expm = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7ff0000000000000ll));
  const __m256d one = _mm256_set1_pd(1.0);
  __m256d bh[V], bl[V], rh[V], rl[V];
  for (int j = 0; j < V; j++) bh[j] = rh[j] = x[j], bl[j] = rl[j] = _mm256_setzero_pd();
  bool have = false;
  for (unsigned k = m;;) {
    if (k & 1u) {
      if (have)
        for (int j = 0; j < V; j++) BXFX_DDMUL(rh[j], rl[j], bh[j], bl[j]);
      else
        for (int j = 0; j < V; j++) rh[j] = bh[j], rl[j] = bl[j];
      have = true;
    }
    k >>= 1;
    if (!k) break;
    for (int j = 0; j < V; j++) BXFX_DDMUL(bh[j], bl[j], bh[j], bl[j]);
  }
  int bad = 0;
  for (int j = 0; j < V; j++) {
    /* |x^m| in [2^-960, 2^1000]: every partial power and its tail stay
     * normal (x^m's FMA residuals exact), 1/x^m too; NaN fails here. */
    __m256d ah = _mm256_and_pd(rh[j], absm);
    __m256d ok = _mm256_and_pd(_mm256_cmp_pd(ah, _mm256_set1_pd(0x1p-960), _CMP_GE_OQ),
                               _mm256_cmp_pd(ah, _mm256_set1_pd(0x1p1000), _CMP_LE_OQ));
    if (neg) {   /* 1/(h + l) = y (1 + r) + O(r^2), r = 1 - y (h + l) */
      const __m256d y = _mm256_div_pd(one, rh[j]);
      __m256d r = _mm256_fnmadd_pd(y, rh[j], one);
      r = _mm256_fnmadd_pd(y, rl[j], r);
      const __m256d ql = _mm256_mul_pd(y, r);
      rh[j] = _mm256_add_pd(y, ql);
      rl[j] = _mm256_sub_pd(ql, _mm256_sub_pd(rh[j], y));
      ah = _mm256_and_pd(rh[j], absm);
    }
    const __m256d near1 = _mm256_and_pd(_mm256_cmp_pd(ah, _mm256_set1_pd(0x1p-64), _CMP_GE_OQ),
                                        _mm256_cmp_pd(ah, _mm256_set1_pd(0x1p64), _CMP_LE_OQ));
    /* ulp(h): h's exponent bits (h >= 2^-1000 where it counts) times 2^-52 */
    const __m256d ulp = _mm256_mul_pd(_mm256_and_pd(rh[j], expm), _mm256_set1_pd(0x1p-52));
    const __m256d M = _mm256_mul_pd(ulp, _mm256_blendv_pd(_mm256_set1_pd(0.065), _mm256_set1_pd(0.02), near1));
    const __m256d up = _mm256_add_pd(rh[j], _mm256_add_pd(rl[j], M));
    const __m256d dn = _mm256_add_pd(rh[j], _mm256_sub_pd(rl[j], M));
    ok = _mm256_and_pd(ok, _mm256_and_pd(_mm256_cmp_pd(up, rh[j], _CMP_EQ_OQ), _mm256_cmp_pd(dn, rh[j], _CMP_EQ_OQ)));
    res[j] = rh[j];
    bad |= (~_mm256_movemask_pd(ok) & 15) << (4 * j);
  }
  return bad;
}
#undef BXFX_DDMUL

static void SFX(powi_f64)(const double *a, double *o, size_t n, int e) {
  enum { W = 4 * BXFX_POWI_V, B = 64 };
  const unsigned m = (unsigned)(e < 0 ? -e : e);
  const bool neg = e < 0;
  if (m == 0) {   /* pow(x, 0) is 1 for every x, NaN included */
    for (size_t i = 0; i < n; i++) o[i] = 1;
    return;
  }
  /* Blocks of 64: the lanes that need pow are collected in one mask and
   * patched after the block (a branch per 8 lanes mispredicted on ~30%
   * of them).  The inputs are kept in t: o may be a (in place). */
  for (size_t i = 0; i < n; i += B) {
    const size_t w = n - i < B ? n - i : B;
    double t[B];
    uint64_t bad = 0;
    for (size_t g = 0; g < w; g += W) {
      __m256d x[BXFX_POWI_V], y[BXFX_POWI_V];
      if (g + W <= w) {
        for (int j = 0; j < BXFX_POWI_V; j++) x[j] = _mm256_loadu_pd(a + i + g + 4 * j);
      } else {   /* the tail, padded with 1 (1^e = 1 passes the check) */
        double p[W];
        for (size_t k = 0; k < W; k++) p[k] = g + k < w ? a[i + g + k] : 1.0;
        for (int j = 0; j < BXFX_POWI_V; j++) x[j] = _mm256_loadu_pd(p + 4 * j);
      }
      for (int j = 0; j < BXFX_POWI_V; j++) _mm256_storeu_pd(t + g + 4 * j, x[j]);
      bad |= (uint64_t)SFX(powi_f64v)(x, m, neg, y) << g;
      if (g + W <= w) {
        for (int j = 0; j < BXFX_POWI_V; j++) _mm256_storeu_pd(o + i + g + 4 * j, y[j]);
      } else {
        double r[W];
        for (int j = 0; j < BXFX_POWI_V; j++) _mm256_storeu_pd(r + 4 * j, y[j]);
        memcpy(o + i + g, r, (w - g) * sizeof *o);
      }
    }
    if (w < B) bad &= (1ull << w) - 1;
    for (; bad; bad &= bad - 1) {
      const int k = __builtin_ctzll(bad);
      o[i + (size_t)k] = pow(t[k], (double)e);
    }
  }
}
#else
static void SFX(powi_f64)(const double *a, double *o, size_t n, int e) {
  for (size_t i = 0; i < n; i++) o[i] = pow(a[i], (double)e);
}
#endif

/* ---- floored remainder ------------------------------------------------- */
/* rem of f32 as bxk_rem_f32 defines it (fmodf, then the divisor's sign),
 * in f64 lanes without fmod: t = a / b, q = floor(t), r = a - q * b.
 * That is exact whenever |t| < 2^29: a quotient of two f32 values that is
 * not an integer lies at least 2^-24 from one (a - k*b is a nonzero
 * multiple of the smaller operand's ulp), farther than the f64
 * division's error |k| 2^-53, so q is the true floor; q * b needs at most
 * 29 + 24 bits (exact), and a - q * b is the true floored remainder r*
 * rounded once to f64, then to f32.  r* is either exact in f32 (the
 * truncated remainder) or the truncated remainder plus b, a sum of two
 * f32 values, where rounding through f64 (>= 2*24 + 2 bits) gives the
 * f32 sum bxk_rem_f32 computes.  A zero takes a's sign (fmodf's zero).
 * Vectors holding a lane outside the bound (|t| >= 2^29, NaN, infinite
 * a or b, b == 0) go through bxk_rem_f32 lane by lane.  floor is a
 * truncating conversion (|t| < 2^29 fits an i32) stepped down where it
 * rose, the same in both variants. */
#define BXFX_REM4(X, Y, R, BAD) do {                                                \
    const v4d lim_ = { 0x1p29, 0x1p29, 0x1p29, 0x1p29 }, inf_ = { INFINITY, INFINITY, INFINITY, INFINITY }; \
    const v4d one_ = { 1, 1, 1, 1 }, zero_ = { 0, 0, 0, 0 };                      \
    const v4l absm_ = { INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX };         \
    v4d t_ = (X) / (Y);                                                           \
    v4d at_ = (v4d)((v4l)t_ & absm_), ab_ = (v4d)((v4l)(Y) & absm_);      \
    v4l ok_ = (v4l)(at_ < lim_) & (v4l)(ab_ < inf_);                  \
    BAD |= ~ok_;                                                                  \
    t_ = (v4d)((v4l)t_ & ok_);                                                \
    v4d q_ = __builtin_convertvector(__builtin_convertvector(t_, v4i), v4d);      \
    q_ -= (v4d)((v4l)(q_ > t_) & (v4l)one_);                              \
    v4d r_ = (X) - q_ * (Y);                                                      \
    v4l z_ = (v4l)(r_ == zero_);                                          \
    R = (v4d)(((v4l)r_ & ~z_) | ((v4l)(X) & ~absm_ & z_));                \
  } while (0)
static void SFX(rem_f32)(const float *a, const float *b, float *o, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    v4d x0 = SFX(ld4w)(a + i), x1 = SFX(ld4w)(a + i + 4);
    v4d y0 = SFX(ld4w)(b + i), y1 = SFX(ld4w)(b + i + 4), r0, r1;
    v4l bad = { 0, 0, 0, 0 };
    BXFX_REM4(x0, y0, r0, bad);
    BXFX_REM4(x1, y1, r1, bad);
#ifdef BXFX_AVX
    const bool any_bad = !_mm256_testz_si256((__m256i)bad, (__m256i)bad);
#else
    const bool any_bad = (bad[0] | bad[1] | bad[2] | bad[3]) != 0;
#endif
    if (__builtin_expect(any_bad, 0)) {
      for (size_t j = i; j < i + 8; j++) o[j] = bxk_rem_f32(a[j], b[j]);
      continue;
    }
    v4f f0 = __builtin_convertvector(r0, v4f), f1 = __builtin_convertvector(r1, v4f);
    memcpy(o + i, &f0, sizeof f0);
    memcpy(o + i + 4, &f1, sizeof f1);
  }
  for (; i < n; i++) o[i] = bxk_rem_f32(a[i], b[i]);
}
#undef BXFX_REM4

/* rem of f64 as bxk_rem_f64 defines it: f = fmod(a, b) (exact, a's sign),
 * then f + b rounded once where f's sign is not b's.  Lanes: t = a / b,
 * q = trunc(t), f = fma(-q, b, a).  Division rounds monotonically and the
 * integers below 2^52 are doubles, so for |t| < 2^52 q is the true
 * truncated quotient T or one past it (t rounded up onto T + 1 from
 * within half an ulp, so |frac(a/b)| >= 3/4).  With T, a - T b is fmod
 * itself, a double, so the FMA's one rounding is exact, and the last
 * step is the reference's own rounded f + b.  One past, a - q b is
 * fmod - sign(a/b) b, exact too (Sterbenz: fmod and b agree in sign
 * when a/b > 0, |b|/2 <= |fmod| <= |b|; likewise with -b), and it is
 * already the floored result: for a/b > 0 its sign is not b's and the
 * last step adds b back, giving fmod, whose sign is b's; for a/b < 0 its
 * sign is b's and it is the exact fmod + b, which the reference rounds to
 * itself.  A zero takes a's sign (fmod's zero; never one past).  Vectors
 * holding a lane with |t| >= 2^52 (also NaN, a zero or infinite b, an
 * infinite a) go through bxk_rem_f64 lane by lane.  The baseline variant
 * keeps the scalar rule: without an FMA instruction libm's fma() is a
 * software routine slower than fmod. */
#ifdef BXFX_AVX
#define BXFX_FNMA4(q, y, x) ((v4d)_mm256_fnmadd_pd((__m256d)(q), (__m256d)(y), (__m256d)(x)))
#define BXFX_TRUNC4(t) ((v4d)_mm256_round_pd((__m256d)(t), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC))
#define BXFX_SEL4(m, a, b) ((v4d)(((v4l)(a) & (m)) | ((v4l)(b) & ~(m))))
#define BXFX_REMD4(X, Y, R, BAD) do {                                               \
    const v4d lim_ = { 0x1p52, 0x1p52, 0x1p52, 0x1p52 }, inf_ = { INFINITY, INFINITY, INFINITY, INFINITY }; \
    const v4d zero_ = { 0, 0, 0, 0 };                                             \
    const v4l absm_ = { INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX }, zl_ = { 0, 0, 0, 0 }; \
    v4d x_ = (X), y_ = (Y), t_ = x_ / y_;                                         \
    v4l ok_ = (v4l)((v4d)((v4l)t_ & absm_) < lim_) & (v4l)((v4d)((v4l)y_ & absm_) < inf_); \
    BAD |= ~ok_;                                                                  \
    v4d f_ = BXFX_FNMA4(BXFX_TRUNC4((v4d)((v4l)t_ & ok_)), y_, x_);               \
    v4l z_ = (v4l)(f_ == zero_);                                                  \
    f_ = (v4d)(((v4l)f_ & ~z_) | ((v4l)x_ & ~absm_ & z_));                        \
    v4l adj_ = ~z_ & (((v4l)f_ ^ (v4l)y_) < zl_);                                 \
    R = BXFX_SEL4(adj_, f_ + y_, f_);                                             \
  } while (0)
static void SFX(rem_f64)(const double *a, const double *b, double *o, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    v4d r0, r1;
    v4l bad = { 0, 0, 0, 0 };
    BXFX_REMD4(SFX(ld4d)(a + i), SFX(ld4d)(b + i), r0, bad);
    BXFX_REMD4(SFX(ld4d)(a + i + 4), SFX(ld4d)(b + i + 4), r1, bad);
    const bool any_bad = !_mm256_testz_si256((__m256i)bad, (__m256i)bad);
    if (__builtin_expect(any_bad, 0)) {
      for (size_t j = i; j < i + 8; j++) o[j] = bxk_rem_f64(a[j], b[j]);
      continue;
    }
    memcpy(o + i, &r0, sizeof r0);
    memcpy(o + i + 4, &r1, sizeof r1);
  }
  for (; i < n; i++) o[i] = bxk_rem_f64(a[i], b[i]);
}
#undef BXFX_REMD4
#undef BXFX_SEL4
#undef BXFX_TRUNC4
#undef BXFX_FNMA4
#else
static void SFX(rem_f64)(const double *a, const double *b, double *o, size_t n) {
  for (size_t i = 0; i < n; i++) o[i] = bxk_rem_f64(a[i], b[i]);
}
#endif

/* ---- integer matmul ---------------------------------------------------- */
/* C = A B for row-major contiguous integer matrices (A m x k, B k x n,
 * C m x n), wrapping in the dtype's width: bxk_scalar.h's rule, and for
 * i32 the i64 sum of products stored back, since wrapping products and
 * sums commute with the truncation.  Two rows of C by four vectors of
 * columns live in registers across the k loop (one broadcast of A's
 * element per row, four loads of B's row shared by both rows); narrower
 * strips and the last row take one vector or scalars.  i64 lanes
 * multiply by 32-bit halves (AVX2 has no 64-bit multiply), which still
 * beats the scalar loop. */
#define BXFX_MM_DEF(name, T, UT, VT, W)                                                \
  static void SFX(name)(const T *A, const T *B, T *C, size_t m, size_t n, size_t k) {  \
    size_t j = 0;                                                                      \
    for (; j + 4 * W <= n; j += 4 * W) {                                               \
      size_t i = 0;                                                                    \
      for (; i + 2 <= m; i += 2) {                                                     \
        VT c[2][4];                                                                    \
        memset(c, 0, sizeof c);                                                        \
        const T *a0 = A + i * k, *a1 = a0 + k, *b = B + j;                             \
        for (size_t p = 0; p < k; p++, b += n) {                                       \
          VT x0 = (VT){ 0 } + (UT)a0[p], x1 = (VT){ 0 } + (UT)a1[p];                   \
          for (int q = 0; q < 4; q++) {                                                \
            VT y;                                                                      \
            memcpy(&y, b + W * q, sizeof y);                                           \
            c[0][q] += x0 * y;                                                         \
            c[1][q] += x1 * y;                                                         \
          }                                                                            \
        }                                                                              \
        memcpy(C + i * n + j, c[0], sizeof c[0]);                                      \
        memcpy(C + (i + 1) * n + j, c[1], sizeof c[1]);                                \
      }                                                                                \
      for (; i < m; i++) {                                                             \
        VT c[4];                                                                       \
        memset(c, 0, sizeof c);                                                        \
        const T *b = B + j;                                                            \
        for (size_t p = 0; p < k; p++, b += n) {                                       \
          VT x = (VT){ 0 } + (UT)A[i * k + p];                                         \
          for (int q = 0; q < 4; q++) {                                                \
            VT y;                                                                      \
            memcpy(&y, b + W * q, sizeof y);                                           \
            c[q] += x * y;                                                             \
          }                                                                            \
        }                                                                              \
        memcpy(C + i * n + j, c, sizeof c);                                            \
      }                                                                                \
    }                                                                                  \
    for (; j + W <= n; j += W)                                                         \
      for (size_t i = 0; i < m; i++) {                                                 \
        VT c = { 0 };                                                                  \
        const T *b = B + j;                                                            \
        for (size_t p = 0; p < k; p++, b += n) {                                       \
          VT y;                                                                        \
          memcpy(&y, b, sizeof y);                                                     \
          c += ((VT){ 0 } + (UT)A[i * k + p]) * y;                                     \
        }                                                                              \
        memcpy(C + i * n + j, &c, sizeof c);                                           \
      }                                                                                \
    for (; j < n; j++)                                                                 \
      for (size_t i = 0; i < m; i++) {                                                 \
        UT c = 0;                                                                      \
        for (size_t p = 0; p < k; p++) c += (UT)A[i * k + p] * (UT)B[p * n + j];       \
        C[i * n + j] = (T)c;                                                           \
      }                                                                                \
  }
BXFX_MM_DEF(mm_i32, int32_t, uint32_t, v8u, 8)
BXFX_MM_DEF(mm_i64, int64_t, uint64_t, v4q, 4)
#undef BXFX_MM_DEF

/* ---- reductions -------------------------------------------------------- */
/* Sums: one leaf (at most BXFX_LEAF elements) in 16 f64 lanes, four
 * vectors of four so the adds overlap; leaves combined by the pairwise
 * counter (flex_kern.h).  Elements are widened to f64 on load (exact).
 *
 * The widening conversion (vcvtps2pd) and the add share the same two FP
 * pipes on the CPUs measured (Zen 4), so the AVX build adds with
 * fma(x, 1, s): one rounding of x + s, the add's bits, on the FMA pipes
 * (bf16 sum 0.14 -> 0.095 ns an element on one thread).  Its latency is
 * 4 cycles, not 3; two leaves interleaved to hide it ran 2-3x slower from
 * L3 (two streams 1 KiB apart defeat the prefetchers), while one leaf at
 * a time lets the out-of-order window overlap consecutive leaves.  The
 * baseline build has no FMA instruction and keeps the add. */
#ifdef BXFX_AVX
#define BXFX_ACC(s, x) ((v4d)_mm256_fmadd_pd((__m256d)(x), _mm256_set1_pd(1.0), (__m256d)(s)))
#else
#define BXFX_ACC(s, x) ((s) + (x))
#endif

#define BXFX_AS_IS(x) (x)
/* Four f16/bf16 widened to f64 (exact, as f16 -> f32 -> f64 is): a half
 * sum is the f32 sum of the widened values, without a widening pass. */
typedef uint16_t v4h __attribute__((vector_size(8)));
typedef uint32_t v4u __attribute__((vector_size(16)));
static inline v4d SFX(ld4bf)(const uint16_t *p) {
#ifdef BXFX_AVX
  __m128i u = _mm_cvtepu16_epi32(_mm_loadl_epi64((const __m128i *)p));
  return (v4d)_mm256_cvtps_pd(_mm_castsi128_ps(_mm_slli_epi32(u, 16)));
#else
  v4h h;
  memcpy(&h, p, sizeof h);
  return __builtin_convertvector((v4f)(__builtin_convertvector(h, v4u) << 16), v4d);
#endif
}
static inline v4d SFX(ld4hf)(const uint16_t *p) {
#ifdef BXFX_AVX
  return (v4d)_mm256_cvtps_pd(_mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)p)));
#else
  v4d v = { bxk_f16_to_f32(p[0]), bxk_f16_to_f32(p[1]), bxk_f16_to_f32(p[2]), bxk_f16_to_f32(p[3]) };
  return v;
#endif
}
/* Sixteen elements at p widened into x0..x3 (elements 0-3, 4-7, 8-11,
 * 12-15).  bf16 in the AVX build: two 16-byte loads, each word put above
 * a zero word (vpunpck{l,h}wd: the f32 bits), then vcvtps2pd: one shuffle
 * per four elements where zero-extension and a shift took two. */
#define BXFX_LD16_BY4(LD, p, x0, x1, x2, x3) \
  do { x0 = LD(p); x1 = LD((p) + 4); x2 = LD((p) + 8); x3 = LD((p) + 12); } while (0)
#define BXFX_LD16_f64(p, x0, x1, x2, x3) BXFX_LD16_BY4(SFX(ld4d), p, x0, x1, x2, x3)
#define BXFX_LD16_f32(p, x0, x1, x2, x3) BXFX_LD16_BY4(SFX(ld4w), p, x0, x1, x2, x3)
#define BXFX_LD16_f16(p, x0, x1, x2, x3) BXFX_LD16_BY4(SFX(ld4hf), p, x0, x1, x2, x3)
#ifdef BXFX_AVX
#define BXFX_LD16_bf16(p, x0, x1, x2, x3)                                                  \
  do {                                                                                     \
    __m128i z_ = _mm_setzero_si128(), a_ = _mm_loadu_si128((const __m128i *)(p));          \
    __m128i b_ = _mm_loadu_si128((const __m128i *)((p) + 8));                              \
    x0 = (v4d)_mm256_cvtps_pd(_mm_castsi128_ps(_mm_unpacklo_epi16(z_, a_)));               \
    x1 = (v4d)_mm256_cvtps_pd(_mm_castsi128_ps(_mm_unpackhi_epi16(z_, a_)));               \
    x2 = (v4d)_mm256_cvtps_pd(_mm_castsi128_ps(_mm_unpacklo_epi16(z_, b_)));               \
    x3 = (v4d)_mm256_cvtps_pd(_mm_castsi128_ps(_mm_unpackhi_epi16(z_, b_)));               \
  } while (0)
#else
#define BXFX_LD16_bf16(p, x0, x1, x2, x3) BXFX_LD16_BY4(SFX(ld4bf), p, x0, x1, x2, x3)
#endif
#define BXFX_LD4_f64 SFX(ld4d)
#define BXFX_LD4_f32 SFX(ld4w)
#define BXFX_LD4_bf16 SFX(ld4bf)
#define BXFX_LD4_f16 SFX(ld4hf)
#define BXFX_CV_f64 BXFX_AS_IS
#define BXFX_CV_f32 BXFX_AS_IS
#define BXFX_CV_bf16 bxk_bf16_to_f32
#define BXFX_CV_f16 bxk_f16_to_f32
typedef float f32_elem;
typedef double f64_elem;
typedef uint16_t bf16_elem;
typedef uint16_t f16_elem;

/* The 16 lanes of a leaf, combined: (s0 + s1) + (s2 + s3), then the four
 * lanes pairwise.  This order is the contract (test_flex_reduce.c). */
#define BXFX_LEAF_FOLD(s0, s1, s2, s3) \
  ({ v4d s_ = ((s0) + (s1)) + ((s2) + (s3)); (s_[0] + s_[1]) + (s_[2] + s_[3]); })
/* One leaf of m <= BXFX_LEAF elements. */
#define BXFX_LEAF_DEF(T)                                                              \
  static double SFX(leaf_##T)(const T##_elem *p, size_t m) {                          \
    v4d s0 = { 0 }, s1 = s0, s2 = s0, s3 = s0, x0, x1, x2, x3;                        \
    size_t j = 0;                                                                     \
    for (; j + 16 <= m; j += 16) {                                                    \
      BXFX_LD16_##T(p + j, x0, x1, x2, x3);                                           \
      s0 = BXFX_ACC(s0, x0); s1 = BXFX_ACC(s1, x1);                                   \
      s2 = BXFX_ACC(s2, x2); s3 = BXFX_ACC(s3, x3);                                   \
    }                                                                                 \
    for (; j + 4 <= m; j += 4) s0 = BXFX_ACC(s0, BXFX_LD4_##T(p + j));               \
    double r = BXFX_LEAF_FOLD(s0, s1, s2, s3);                                        \
    for (; j < m; j++) r += (double)BXFX_CV_##T(p[j]);                                \
    return r;                                                                         \
  }                                                                                   \
  /* The pairwise tree over the leaves. */                                            \
  static double SFX(sum_##T)(const T##_elem *a, size_t n) {                           \
    struct bxfx_pw pw;                                                                \
    bxfx_pw_init(&pw);                                                                \
    for (size_t i = 0; i < n; i += BXFX_LEAF)                                         \
      bxfx_pw_push(&pw, SFX(leaf_##T)(a + i, n - i < BXFX_LEAF ? n - i : BXFX_LEAF)); \
    return bxfx_pw_done(&pw);                                                         \
  }
BXFX_LEAF_DEF(f64)
BXFX_LEAF_DEF(f32)
BXFX_LEAF_DEF(bf16)
BXFX_LEAF_DEF(f16)
#undef BXFX_LEAF_DEF

/* Row accumulation across an outer axis: acc[i] = acc[i] OP x[i] in f64
 * (x widened), the step of flex_reduce.c's sums (rows_sum) and products
 * along a dim: per column the same sequence of operations as the
 * reference's.  (acc_f64 also merges rows_sum's tree nodes.) */
#define BXFX_ROWACC_F32(name, OP)                                                   \
  static void SFX(name##_f32)(double *acc, const float *x, size_t n) {              \
    size_t i = 0;                                                                   \
    for (; i + 8 <= n; i += 8) {                                                    \
      v4d a0 = SFX(ld4d)(acc + i), a1 = SFX(ld4d)(acc + i + 4);                     \
      a0 = a0 OP SFX(ld4w)(x + i);                                                  \
      a1 = a1 OP SFX(ld4w)(x + i + 4);                                              \
      memcpy(acc + i, &a0, sizeof a0);                                              \
      memcpy(acc + i + 4, &a1, sizeof a1);                                          \
    }                                                                               \
    for (; i < n; i++) acc[i] = acc[i] OP (double)x[i];                             \
  }
#define BXFX_ROWACC_F64(name, OP)                                                   \
  static void SFX(name##_f64)(double *acc, const double *x, size_t n) {             \
    size_t i = 0;                                                                   \
    for (; i + 4 <= n; i += 4) {                                                    \
      v4d a = SFX(ld4d)(acc + i) OP SFX(ld4d)(x + i);                               \
      memcpy(acc + i, &a, sizeof a);                                                \
    }                                                                               \
    for (; i < n; i++) acc[i] = acc[i] OP x[i];                                     \
  }
BXFX_ROWACC_F64(acc, +)   /* (f32 sums take leafrows_f32 below) */
BXFX_ROWACC_F32(mulacc, *)
BXFX_ROWACC_F64(mulacc, *)
#undef BXFX_ROWACC_F32
#undef BXFX_ROWACC_F64

/* One leaf of a sum across an outer axis: out[i] = x[0][i] + x[1][i] +
 * ... + x[rows-1][i] in f64, left to right (row r at x + r*stride), the
 * sequence the first row plus each further row added in turn computes,
 * with the running sums of a strip of 16 columns held in registers over
 * all the rows: one store per column per leaf instead of one per row. */
#define BXFX_LEAFROWS_DEF(T)                                                          \
  static void SFX(leafrows_##T)(double *out, const T##_elem *x, size_t stride, size_t rows, size_t n) { \
    size_t i = 0;                                                                       \
    for (; i + 16 <= n; i += 16) {                                                      \
      const T##_elem *p = x + i;                                                        \
      v4d s0, s1, s2, s3, x0, x1, x2, x3;                                               \
      BXFX_LD16_##T(p, s0, s1, s2, s3);                                                 \
      for (size_t r = 1; r < rows; r++) {                                               \
        p += stride;                                                                    \
        BXFX_LD16_##T(p, x0, x1, x2, x3);                                               \
        s0 = BXFX_ACC(s0, x0); s1 = BXFX_ACC(s1, x1);                                   \
        s2 = BXFX_ACC(s2, x2); s3 = BXFX_ACC(s3, x3);                                   \
      }                                                                                 \
      memcpy(out + i, &s0, sizeof s0);                                                  \
      memcpy(out + i + 4, &s1, sizeof s1);                                              \
      memcpy(out + i + 8, &s2, sizeof s2);                                              \
      memcpy(out + i + 12, &s3, sizeof s3);                                             \
    }                                                                                   \
    for (; i < n; i++) {                                                                \
      double s = (double)BXFX_CV_##T(x[i]);                                             \
      for (size_t r = 1; r < rows; r++) s += (double)BXFX_CV_##T(x[r * stride + i]);    \
      out[i] = s;                                                                       \
    }                                                                                   \
  }
BXFX_LEAFROWS_DEF(f32)
BXFX_LEAFROWS_DEF(f64)
/* halves widened in registers: the f32 leaf of the widened rows */
BXFX_LEAFROWS_DEF(bf16)
BXFX_LEAFROWS_DEF(f16)
#undef BXFX_LEAFROWS_DEF
#undef BXFX_LEAF_FOLD
#undef BXFX_LD16_BY4
#undef BXFX_LD16_f64
#undef BXFX_LD16_f32
#undef BXFX_LD16_f16
#undef BXFX_LD16_bf16
#undef BXFX_LD4_f64
#undef BXFX_LD4_f32
#undef BXFX_LD4_bf16
#undef BXFX_LD4_f16
#undef BXFX_CV_f64
#undef BXFX_CV_f32
#undef BXFX_CV_bf16
#undef BXFX_CV_f16
#undef BXFX_ACC
#undef BXFX_AS_IS

/* Index of a row's extreme as the reference finds it: the first NaN if
 * there is one, else the first element equal to the max (min).  Blocks of
 * BXFX_EXT_BLK are scanned with four vectors of lanes; only the first
 * block whose extreme beats every earlier block is walked again for the
 * index, so the row is read about once.  Comparisons are exact, so lanes
 * change nothing but the order of work (a zero's sign comes from the first
 * equal element, as in the sequential scan).  *val gets the element; with
 * BXFX_EXT_VALUE in flags the walk is skipped where the value alone is
 * known (not a zero) and -1 returned. */
enum { BXFX_EXT_BLK = 2048 };
#define BXFX_EXT_STEP(CMP, VT, VI, x, e) e = (VT)((((VI)(x)) & (VI)((x) CMP (e))) | (((VI)(e)) & ~(VI)((x) CMP (e))))
#define BXFX_EXT_SCAN(CMP, VT, VI, W, LD)                                                          \
  for (; j + 4 * W <= m; j += 4 * W) {                                              \
    VT x0 = LD(p + j), x1 = LD(p + j + W), x2 = LD(p + j + 2 * W), x3 = LD(p + j + 3 * W); \
    nv |= (VI)(x0 != x0) | (VI)(x1 != x1) | (VI)(x2 != x2) | (VI)(x3 != x3);         \
    BXFX_EXT_STEP(CMP, VT, VI, x0, e0); BXFX_EXT_STEP(CMP, VT, VI, x1, e1);                          \
    BXFX_EXT_STEP(CMP, VT, VI, x2, e2); BXFX_EXT_STEP(CMP, VT, VI, x3, e3);                          \
  }                                                                                 \
  BXFX_EXT_STEP(CMP, VT, VI, e1, e0); BXFX_EXT_STEP(CMP, VT, VI, e3, e2); BXFX_EXT_STEP(CMP, VT, VI, e2, e0); \
  for (; j + W <= m; j += W) {                                                      \
    VT x0 = LD(p + j);                                                              \
    nv |= (VI)(x0 != x0);                                                           \
    BXFX_EXT_STEP(CMP, VT, VI, x0, e0);                                                     \
  }
/* The vector part of a block scan for f32/f64: j advances over whole
 * vectors, e and nan take their extreme and whether a NaN was seen. */
#define BXFX_EXT_VSCAN_FLT(VT, VI, W, LD, p, m, j, e, nan, want_max)                  \
  if (m >= W) {                                                                      \
    VT e0 = LD(p), e1 = e0, e2 = e0, e3 = e0;                                        \
    VI nv = (VI)(e0 != e0);                                                          \
    if (want_max) { BXFX_EXT_SCAN(>, VT, VI, W, LD) } else { BXFX_EXT_SCAN(<, VT, VI, W, LD) } \
    (void)e1; (void)e2; (void)e3;                                                    \
    for (int l = 0; l < W; l++) {                                                    \
      nan |= nv[l] != 0;                                                             \
      if (want_max ? e0[l] > e : e0[l] < e) e = e0[l];                               \
    }                                                                                \
  }
#define BXFX_EXT_VSCAN_f32(...) BXFX_EXT_VSCAN_FLT(v8f, v8i, 8, SFX(ld), __VA_ARGS__)
#define BXFX_EXT_VSCAN_f64(...) BXFX_EXT_VSCAN_FLT(v4d, v4l, 4, SFX(ld4d), __VA_ARGS__)
/* bf16 scans the 16-bit patterns, 16 lanes a vector: x ^ ((x >> 15) &
 * 0x7fff) as an int16 orders the non-NaN values as floats order them,
 * except -0 (key -1) below +0 (key 0) (and it is its own inverse).  A
 * block's extreme key becomes its value, a zero of either sign if the
 * extreme is zero: the index walk below then takes the first zero, whose
 * sign the sequential scan keeps.  NaN: |x| (x & 0x7fff) above 0x7f80;
 * the largest |x| of the block says whether there is one.  Five integer
 * operations per 16 elements where widening to f32 took about 16. */
typedef int16_t v16s __attribute__((vector_size(32)));
#define BXFX_BF16_KEY(x) ((x) ^ (((x) >> 15) & 0x7fff))
/* Either half type's patterns: +inf (|x| above it: NaN), the quiet bit
 * the narrowing sets on a NaN, +1 (the 16-bit kernels below). */
#define BXFX_W16_INF_F16 0x7c00
#define BXFX_W16_Q_F16 0x0200
#define BXFX_W16_ONE_F16 0x3c00
#define BXFX_W16_INF_BF16 0x7f80
#define BXFX_W16_Q_BF16 0x0040
#define BXFX_W16_ONE_BF16 0x3f80
#ifdef BXFX_AVX
#define BXFX_V16_MAX(a, b) ((v16s)_mm256_max_epi16((__m256i)(a), (__m256i)(b)))
#define BXFX_V16_MIN(a, b) ((v16s)_mm256_min_epi16((__m256i)(a), (__m256i)(b)))
#else
#define BXFX_V16_MAX(a, b) ({ v16s p_ = (a), q_ = (b), m_ = p_ > q_; (p_ & m_) | (q_ & ~m_); })
#define BXFX_V16_MIN(a, b) ({ v16s p_ = (a), q_ = (b), m_ = p_ < q_; (p_ & m_) | (q_ & ~m_); })
#endif
#define BXFX_EXT_KSCAN(EXT, p, m, j, ek, am)                                         \
  for (; j + 16 <= m; j += 16) {                                                     \
    v16s x_;                                                                         \
    memcpy(&x_, (p) + j, sizeof x_);                                                 \
    v16s u_ = x_ & 0x7fff;                                                           \
    ek = EXT(ek, u_ ^ (x_ >> 15));                                                   \
    am = BXFX_V16_MAX(am, u_);                                                       \
  }
#define BXFX_EXT_VSCAN_bf16(p, m, j, e, nan, want_max)                                \
  if (m >= 16) {                                                                     \
    v16s ek, am = { 0 };                                                             \
    memcpy(&ek, p, sizeof ek);                                                       \
    ek = BXFX_BF16_KEY(ek);                                                          \
    if (want_max) { BXFX_EXT_KSCAN(BXFX_V16_MAX, p, m, j, ek, am) }                  \
    else { BXFX_EXT_KSCAN(BXFX_V16_MIN, p, m, j, ek, am) }                           \
    int16_t k_ = ek[0], a_ = am[0];                                                  \
    for (int l = 1; l < 16; l++) {                                                   \
      k_ = want_max ? (ek[l] > k_ ? ek[l] : k_) : (ek[l] < k_ ? ek[l] : k_);         \
      a_ = am[l] > a_ ? am[l] : a_;                                                  \
    }                                                                                \
    nan |= a_ > 0x7f80;                                                              \
    e = bxk_bf16_to_f32((uint16_t)BXFX_BF16_KEY(k_));                                \
  }
#define BXFX_ARGEXT_DEF(name, ET, T, VSCAN, CV)                                        \
  static int64_t SFX(name)(const ET *a, size_t n, int flags, T *val) {              \
    const bool want_max = flags & BXFX_EXT_MAX;                                    \
    T best = CV(a[0]);                                                                 \
    size_t bestblk = 0;                                                            \
    for (size_t b0 = 0; b0 < n; b0 += BXFX_EXT_BLK) {                              \
      const ET *p = a + b0;                                                         \
      size_t m = n - b0 < BXFX_EXT_BLK ? n - b0 : BXFX_EXT_BLK, j = 0;             \
      T e = CV(p[0]);                                                                  \
      bool nan = false;                                                            \
      VSCAN(p, m, j, e, nan, want_max);                                            \
      for (; j < m; j++) {                                                         \
        T x = CV(p[j]);                                                                \
        nan |= x != x;                                                             \
        if (want_max ? x > e : x < e) e = x;                                       \
      }                                                                            \
      if (nan)                                                                     \
        for (j = 0;; j++)                                                          \
          if (CV(p[j]) != CV(p[j])) { *val = CV(p[j]); return (int64_t)(b0 + j); }             \
      if (want_max ? e > best : e < best) best = e, bestblk = b0;                  \
    }                                                                              \
    *val = best;                                                                   \
    if ((flags & BXFX_EXT_VALUE) && best != 0) return -1;                        \
    for (size_t j = bestblk;; j++)                                                 \
      if (CV(a[j]) == best) { *val = CV(a[j]); return (int64_t)j; }                        \
  }
#define BXFX_EXT_AS_IS(x) (x)
BXFX_ARGEXT_DEF(argext_f32, float, float, BXFX_EXT_VSCAN_f32, BXFX_EXT_AS_IS)
BXFX_ARGEXT_DEF(argext_f64, double, double, BXFX_EXT_VSCAN_f64, BXFX_EXT_AS_IS)
BXFX_ARGEXT_DEF(argext_bf16, uint16_t, float, BXFX_EXT_VSCAN_bf16, bxk_bf16_to_f32)
#undef BXFX_EXT_AS_IS
#undef BXFX_ARGEXT_DEF
#undef BXFX_EXT_SCAN
#undef BXFX_EXT_VSCAN_FLT
#undef BXFX_EXT_VSCAN_f32
#undef BXFX_EXT_VSCAN_f64
#undef BXFX_EXT_VSCAN_bf16
#undef BXFX_EXT_KSCAN

/* One step of an extreme along an outer axis: per column, x (row k)
 * replaces acc when it beats it or is the first NaN (a NaN accumulator
 * stays), as the reference's sequential scan does; arg (may be NULL)
 * records k there.  Most rows change few columns, so the indexes are
 * patched lane by lane only where a vector's mask is not all zero. */
#define BXFX_EXTROW_DEF(name, T, VT, VI, W, LD)                                    \
  static void SFX(name)(T *acc, int64_t *arg, const T *x, size_t n, int64_t k, int flags) { \
    const bool want_max = flags & BXFX_EXT_MAX;                                    \
    size_t i = 0;                                                                  \
    for (; i + W <= n; i += W) {                                                   \
      VT v = LD(x + i), c = LD(acc + i);                                           \
      VI m = (VI)(want_max ? v > c : v < c) | ((VI)(v != v) & (VI)(c == c));       \
      VT r = (VT)(((VI)v & m) | ((VI)c & ~m));                                     \
      memcpy(acc + i, &r, sizeof r);                                               \
      if (arg) {                                                                   \
        bool any = false;                                                          \
        for (int l = 0; l < W; l++) any |= m[l] != 0;                              \
        if (any)                                                                   \
          for (int l = 0; l < W; l++)                                              \
            if (m[l]) arg[i + (size_t)l] = k;                                      \
      }                                                                            \
    }                                                                              \
    for (; i < n; i++) {                                                           \
      T v = x[i], c = acc[i];                                                      \
      if ((want_max ? v > c : v < c) || (v != v && c == c)) {                      \
        acc[i] = v;                                                                \
        if (arg) arg[i] = k;                                                       \
      }                                                                            \
    }                                                                              \
  }
BXFX_EXTROW_DEF(extrow_f32, float, v8f, v8i, 8, SFX(ld))
BXFX_EXTROW_DEF(extrow_f64, double, v4d, v4l, 4, SFX(ld4d))
#undef BXFX_EXTROW_DEF
#undef BXFX_EXT_STEP

/* Integer rows at their own width (flex_kern.h red_i32/red_i64): plain
 * loops the compiler vectorizes (wrapping unsigned sums and products are
 * associative, so lanes change nothing). */
#define BXFX_RED_INT_DEF(name, T, UT, VPROD)                                       \
  static int64_t SFX(name)(int op, const T *x, size_t n) {                         \
    switch (op) {                                                                  \
    case BXFX_RED_SUM: { UT s = 0; for (size_t i = 0; i < n; i++) s += (UT)x[i]; return (T)s; } \
    case BXFX_RED_PROD: { /* four chains: a 64-bit multiply has no vector form */ \
      UT p0 = 1, p1 = 1, p2 = 1, p3 = 1;                                          \
      size_t i = 0;                                                                \
      VPROD                                                                        \
      for (; i + 4 <= n; i += 4) {                                                 \
        p0 *= (UT)x[i]; p1 *= (UT)x[i + 1]; p2 *= (UT)x[i + 2]; p3 *= (UT)x[i + 3]; \
      }                                                                            \
      for (; i < n; i++) p0 *= (UT)x[i];                                           \
      return (T)(UT)((p0 * p1) * (p2 * p3));                                       \
    }                                                                              \
    case BXFX_RED_MAX: { T m = x[0]; for (size_t i = 1; i < n; i++) m = x[i] > m ? x[i] : m; return m; } \
    default: { T m = x[0]; for (size_t i = 1; i < n; i++) m = x[i] < m ? x[i] : m; return m; } \
    }                                                                              \
  }
/* i32 products in 32 lanes of vpmulld first (wrapping products do not
 * see the order): 0.097 -> 0.025 ns an element on one thread. */
#define BXFX_VPROD_U32                                                             \
  if (n >= 32) {                                                                   \
    v8u q0 = { 1, 1, 1, 1, 1, 1, 1, 1 }, q1 = q0, q2 = q0, q3 = q0, y0, y1, y2, y3; \
    for (; i + 32 <= n; i += 32) {                                                 \
      memcpy(&y0, x + i, sizeof y0); memcpy(&y1, x + i + 8, sizeof y1);            \
      memcpy(&y2, x + i + 16, sizeof y2); memcpy(&y3, x + i + 24, sizeof y3);      \
      q0 *= y0; q1 *= y1; q2 *= y2; q3 *= y3;                                      \
    }                                                                              \
    q0 = (q0 * q1) * (q2 * q3);                                                    \
    for (int l = 0; l < 8; l += 4) p0 *= q0[l], p1 *= q0[l + 1], p2 *= q0[l + 2], p3 *= q0[l + 3]; \
  }
BXFX_RED_INT_DEF(red_i32, int32_t, uint32_t, BXFX_VPROD_U32)
BXFX_RED_INT_DEF(red_i64, int64_t, uint64_t, )
#undef BXFX_VPROD_U32
#undef BXFX_RED_INT_DEF
/* One step of an int reduction across an outer axis: acc[i] = acc[i] OP
 * x[i] (BXFX_RED_*), wrapping for sums and products. */
#define BXFX_ROWACC_INT_DEF(name, T, UT)                                           \
  static void SFX(name)(int op, T *acc, const T *x, size_t n) {                    \
    switch (op) {                                                                  \
    case BXFX_RED_SUM: for (size_t i = 0; i < n; i++) acc[i] = (T)((UT)acc[i] + (UT)x[i]); break; \
    case BXFX_RED_PROD: for (size_t i = 0; i < n; i++) acc[i] = (T)((UT)acc[i] * (UT)x[i]); break; \
    case BXFX_RED_MAX: for (size_t i = 0; i < n; i++) acc[i] = x[i] > acc[i] ? x[i] : acc[i]; break; \
    default: for (size_t i = 0; i < n; i++) acc[i] = x[i] < acc[i] ? x[i] : acc[i]; break; \
    }                                                                              \
  }
BXFX_ROWACC_INT_DEF(rowacc_i32, int32_t, uint32_t)
BXFX_ROWACC_INT_DEF(rowacc_i64, int64_t, uint64_t)
#undef BXFX_ROWACC_INT_DEF

/* Products in f64 lanes (four vectors of four): the rounding differs from
 * a sequential product by O(n eps) relative, like any reordering. */
#define BXFX_PROD_DEF(name, T, LD)                                                \
  static double SFX(name)(const T *a, size_t n) {                                  \
    v4d one = { 1, 1, 1, 1 }, p0 = one, p1 = one, p2 = one, p3 = one;              \
    size_t j = 0;                                                                  \
    for (; j + 16 <= n; j += 16) {                                                 \
      p0 *= LD(a + j); p1 *= LD(a + j + 4); p2 *= LD(a + j + 8); p3 *= LD(a + j + 12); \
    }                                                                              \
    v4d p = (p0 * p1) * (p2 * p3);                                                 \
    double r = (p[0] * p[1]) * (p[2] * p[3]);                                      \
    for (; j < n; j++) r *= (double)a[j];                                          \
    return r;                                                                      \
  }
BXFX_PROD_DEF(prod_f32, float, SFX(ld4w))
BXFX_PROD_DEF(prod_f64, double, SFX(ld4d))
#undef BXFX_PROD_DEF

/* ---- reductions across an outer axis, a block of rows at a time ------- */
/* acc[i] = acc[i] OP x[r][i] for r = 0 .. rows-1 (row r at x + r*stride),
 * each column in order, as a row at a time (mulacc, extrow without arg)
 * computes it, with a strip of columns held in registers over the block:
 * one load and store of acc per block instead of per row.  Products in
 * f64 (x widened); extremes keep the first NaN (x replaces acc where it
 * beats it or is the first NaN). */
#define BXFX_MULROWS_DEF(T, LD)                                                           \
  static void SFX(mulrows_##T)(double *acc, const T##_elem *x, size_t stride, size_t rows, size_t n) { \
    size_t i = 0;                                                                         \
    for (; i + 16 <= n; i += 16) {                                                        \
      v4d a0 = SFX(ld4d)(acc + i), a1 = SFX(ld4d)(acc + i + 4);                           \
      v4d a2 = SFX(ld4d)(acc + i + 8), a3 = SFX(ld4d)(acc + i + 12);                      \
      const T##_elem *p = x + i;                                                          \
      for (size_t r = 0; r < rows; r++, p += stride) {                                    \
        a0 *= LD(p); a1 *= LD(p + 4); a2 *= LD(p + 8); a3 *= LD(p + 12);                  \
      }                                                                                   \
      memcpy(acc + i, &a0, sizeof a0);                                                    \
      memcpy(acc + i + 4, &a1, sizeof a1);                                                \
      memcpy(acc + i + 8, &a2, sizeof a2);                                                \
      memcpy(acc + i + 12, &a3, sizeof a3);                                               \
    }                                                                                     \
    for (; i < n; i++)                                                                    \
      for (size_t r = 0; r < rows; r++) acc[i] *= (double)x[r * stride + i];             \
  }
BXFX_MULROWS_DEF(f32, SFX(ld4w))
BXFX_MULROWS_DEF(f64, SFX(ld4d))
#undef BXFX_MULROWS_DEF
#define BXFX_EXTROWS_STEP(CMP, VT, VI, v, c)                                              \
  do {                                                                                    \
    VI m_ = (VI)((v) CMP (c)) | ((VI)((v) != (v)) & (VI)((c) == (c)));                    \
    c = (VT)(((VI)(v) & m_) | ((VI)(c) & ~m_));                                           \
  } while (0)
/* XT: the rows' element type, LDX its W lanes as VT, CVT one element as
 * T (the halves' rows widen exactly to f32 acc lanes) */
#define BXFX_EXTROWS_DEF(name, T, XT, VT, VI, W, LD, LDX, CVT)                            \
  static void SFX(name)(T *acc, const XT *x, size_t stride, size_t rows, size_t n, int flags) { \
    const bool want_max = flags & BXFX_EXT_MAX;                                           \
    size_t i = 0;                                                                         \
    for (; i + 4 * W <= n; i += 4 * W) {                                                  \
      VT c0 = LD(acc + i), c1 = LD(acc + i + W), c2 = LD(acc + i + 2 * W), c3 = LD(acc + i + 3 * W); \
      const XT *p = x + i;                                                                \
      if (want_max)                                                                       \
        for (size_t r = 0; r < rows; r++, p += stride) {                                  \
          VT v0 = LDX(p), v1 = LDX(p + W), v2 = LDX(p + 2 * W), v3 = LDX(p + 3 * W);      \
          BXFX_EXTROWS_STEP(>, VT, VI, v0, c0); BXFX_EXTROWS_STEP(>, VT, VI, v1, c1);      \
          BXFX_EXTROWS_STEP(>, VT, VI, v2, c2); BXFX_EXTROWS_STEP(>, VT, VI, v3, c3);      \
        }                                                                                 \
      else                                                                                \
        for (size_t r = 0; r < rows; r++, p += stride) {                                  \
          VT v0 = LDX(p), v1 = LDX(p + W), v2 = LDX(p + 2 * W), v3 = LDX(p + 3 * W);      \
          BXFX_EXTROWS_STEP(<, VT, VI, v0, c0); BXFX_EXTROWS_STEP(<, VT, VI, v1, c1);      \
          BXFX_EXTROWS_STEP(<, VT, VI, v2, c2); BXFX_EXTROWS_STEP(<, VT, VI, v3, c3);      \
        }                                                                                 \
      memcpy(acc + i, &c0, sizeof c0);                                                    \
      memcpy(acc + i + W, &c1, sizeof c1);                                                \
      memcpy(acc + i + 2 * W, &c2, sizeof c2);                                            \
      memcpy(acc + i + 3 * W, &c3, sizeof c3);                                            \
    }                                                                                     \
    for (; i < n; i++)                                                                    \
      for (size_t r = 0; r < rows; r++) {                                                 \
        T v = CVT(x[r * stride + i]), c = acc[i];                                         \
        if ((want_max ? v > c : v < c) || (v != v && c == c)) acc[i] = v;                 \
      }                                                                                   \
  }
#define BXFX_SAME(v) (v)
BXFX_EXTROWS_DEF(extrows_f32, float, float, v8f, v8i, 8, SFX(ld), SFX(ld), BXFX_SAME)
BXFX_EXTROWS_DEF(extrows_f64, double, double, v4d, v4l, 4, SFX(ld4d), SFX(ld4d), BXFX_SAME)
#undef BXFX_SAME

/* Int rows across an outer axis, a block at a time: acc[i] = acc[i] OP
 * x[r][i] (BXFX_RED_*) for r = 0 .. rows-1, four vectors of columns in
 * registers over the block; sums and products wrap in the unsigned twin,
 * so the bits are rowacc's row by row. */
typedef int32_t v8s __attribute__((vector_size(32)));
typedef int64_t v4s __attribute__((vector_size(32)));
/* c = c OP v for one vector (unsigned lanes for the wrapping ops) */
#define BXFX_RA_SUM(VU, VS, c, v) c = (VS)((VU)(c) + (VU)(v))
#define BXFX_RA_PROD(VU, VS, c, v) c = (VS)((VU)(c) * (VU)(v))
#define BXFX_RA_MAX(VU, VS, c, v) c = (VS)(((VU)(v) & (VU)((v) > (c))) | ((VU)(c) & ~(VU)((v) > (c))))
#define BXFX_RA_MIN(VU, VS, c, v) c = (VS)(((VU)(v) & (VU)((v) < (c))) | ((VU)(c) & ~(VU)((v) < (c))))
#define BXFX_RA_LOOP(STEP, T, VU, VS, W)                                                 \
  for (size_t r = 0; r < rows; r++, p += stride) {                                       \
    VS v0, v1, v2, v3;                                                                   \
    memcpy(&v0, p, sizeof v0); memcpy(&v1, p + W, sizeof v1);                            \
    memcpy(&v2, p + 2 * W, sizeof v2); memcpy(&v3, p + 3 * W, sizeof v3);                \
    STEP(VU, VS, c0, v0); STEP(VU, VS, c1, v1); STEP(VU, VS, c2, v2); STEP(VU, VS, c3, v3); \
  }
#define BXFX_ROWSACC_INT_DEF(name, T, VU, VS, W, TAIL)                                    \
  static void SFX(name)(int op, T *acc, const T *x, size_t stride, size_t rows, size_t n) { \
    size_t i = 0;                                                                        \
    for (; i + 4 * W <= n; i += 4 * W) {                                                 \
      VS c0, c1, c2, c3;                                                                 \
      memcpy(&c0, acc + i, sizeof c0); memcpy(&c1, acc + i + W, sizeof c1);              \
      memcpy(&c2, acc + i + 2 * W, sizeof c2); memcpy(&c3, acc + i + 3 * W, sizeof c3);  \
      const T *p = x + i;                                                                \
      switch (op) {                                                                      \
      case BXFX_RED_SUM: BXFX_RA_LOOP(BXFX_RA_SUM, T, VU, VS, W) break;                  \
      case BXFX_RED_PROD: BXFX_RA_LOOP(BXFX_RA_PROD, T, VU, VS, W) break;                \
      case BXFX_RED_MAX: BXFX_RA_LOOP(BXFX_RA_MAX, T, VU, VS, W) break;                  \
      default: BXFX_RA_LOOP(BXFX_RA_MIN, T, VU, VS, W) break;                            \
      }                                                                                  \
      memcpy(acc + i, &c0, sizeof c0); memcpy(acc + i + W, &c1, sizeof c1);              \
      memcpy(acc + i + 2 * W, &c2, sizeof c2); memcpy(acc + i + 3 * W, &c3, sizeof c3);  \
    }                                                                                    \
    for (size_t r = 0; r < rows && i < n; r++) TAIL(op, acc + i, x + r * stride + i, n - i); \
  }
BXFX_ROWSACC_INT_DEF(rowsacc_i32, int32_t, v8u, v8s, 8, SFX(rowacc_i32))
BXFX_ROWSACC_INT_DEF(rowsacc_i64, int64_t, v4q, v4s, 4, SFX(rowacc_i64))
#undef BXFX_ROWSACC_INT_DEF
#undef BXFX_RA_LOOP
#undef BXFX_RA_SUM
#undef BXFX_RA_PROD
#undef BXFX_RA_MAX
#undef BXFX_RA_MIN

/* ---- cumsum ------------------------------------------------------------ */
/* Running sums of ints along a row at their own width: wrapping in the
 * unsigned twin is the i64 running sum stored back (bxk_add's rule), so a
 * prefix in lanes (three shifted adds for 8 lanes, two for 4) plus the
 * carried total gives the sequential chain's bits. */
static void SFX(cumsum_i32)(const int32_t *x, int32_t *o, size_t n) {
  const v8u z = { 0 };
  v8u c = z;
  size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    v8u v;
    memcpy(&v, x + j, sizeof v);
    v += __builtin_shufflevector(z, v, 0, 8, 9, 10, 11, 12, 13, 14);
    v += __builtin_shufflevector(z, v, 0, 1, 8, 9, 10, 11, 12, 13);
    v += __builtin_shufflevector(z, v, 0, 1, 2, 3, 8, 9, 10, 11);
    v += c;
    memcpy(o + j, &v, sizeof v);
    c = __builtin_shufflevector(v, v, 7, 7, 7, 7, 7, 7, 7, 7);
  }
  uint32_t s = c[0];
  for (; j < n; j++) o[j] = (int32_t)(s += (uint32_t)x[j]);
}
static void SFX(cumsum_i64)(const int64_t *x, int64_t *o, size_t n) {
  const v4q z = { 0 };
  v4q c = z;
  size_t j = 0;
  for (; j + 4 <= n; j += 4) {
    v4q v;
    memcpy(&v, x + j, sizeof v);
    v += __builtin_shufflevector(z, v, 0, 4, 5, 6);
    v += __builtin_shufflevector(z, v, 0, 1, 4, 5);
    v += c;
    memcpy(o + j, &v, sizeof v);
    c = __builtin_shufflevector(v, v, 3, 3, 3, 3);
  }
  uint64_t s = c[0];
  for (; j < n; j++) o[j] = (int64_t)(s += (uint64_t)x[j]);
}
/* One step of a float cumsum across an outer axis: acc[i] += x[i] in f64
 * (x widened), o[i] = acc[i] rounded to the dtype: the reference's running
 * sum per column, stored every step, in one pass. */
static void SFX(cumstep_f32)(double *acc, const float *x, float *o, size_t n) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    v4d a = SFX(ld4d)(acc + i) + SFX(ld4w)(x + i);
    memcpy(acc + i, &a, sizeof a);
    v4f f = __builtin_convertvector(a, v4f);
    memcpy(o + i, &f, sizeof f);
  }
  for (; i < n; i++) o[i] = (float)(acc[i] += (double)x[i]);
}
static void SFX(cumstep_f64)(double *acc, const double *x, double *o, size_t n) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    v4d a = SFX(ld4d)(acc + i) + SFX(ld4d)(x + i);
    memcpy(acc + i, &a, sizeof a);
    memcpy(o + i, &a, sizeof a);
  }
  for (; i < n; i++) o[i] = acc[i] += x[i];
}

/* ---- conversions ------------------------------------------------------- */
/* 8 f16 lanes to f32 and back.  F16C's conversions give bxk_scalar.h's
 * bits for every input: round to nearest even, overflow to inf,
 * subnormals, NaN as sign|0x7e00|top payload (checked once off-line on
 * all 2^32 f32 patterns; test_flex_blocks.c runs every f16 pattern
 * through the ops).  The widening may quiet a signalling NaN, which the
 * narrowing quiets anyway.  The baseline ISA converts lane by lane with
 * the scalar rules themselves. */
#ifdef BXFX_AVX
#define BXFX_F16_LD(p) ((v8f)_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(p))))
#define BXFX_F16_ST(p, v) \
  _mm_storeu_si128((__m128i *)(void *)(p), _mm256_cvtps_ph((__m256)(v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC))
#else
#define BXFX_F16_LD(p) ({ v8f f_; for (int l_ = 0; l_ < 8; l_++) f_[l_] = bxk_f16_to_f32((p)[l_]); f_; })
#define BXFX_F16_ST(p, v) \
  do { v8f f_ = (v); for (int l_ = 0; l_ < 8; l_++) (p)[l_] = bxk_f32_to_f16(f_[l_]); } while (0)
#endif

static void SFX(f16_to_f32)(const uint16_t *a, float *o, size_t n) {
  size_t i = 0;
#ifdef BXFX_AVX
  for (; i + 8 <= n; i += 8) BXFX_ST(o + i, BXFX_F16_LD(a + i));
#endif
  for (; i < n; i++) o[i] = bxk_f16_to_f32(a[i]);
}
static void SFX(f32_to_f16)(const float *a, uint16_t *o, size_t n) {
  size_t i = 0;
#ifdef BXFX_AVX
  for (; i + 8 <= n; i += 8) BXFX_F16_ST(o + i, SFX(ld)(a + i));
#endif
  for (; i < n; i++) o[i] = bxk_f32_to_f16(a[i]);
}
/* base[pos[k]] = f16(f32(base[pos[k]]) + f32(v[k])) for k in order (a
 * position may repeat): scatter_add's f16 rule, one element at a time
 * with F16C's scalar conversions (the lane conversions above, one lane)
 * where the bit arithmetic of bxk_scalar.h costs several times more. */
static void SFX(add_at_f16)(uint16_t *base, const int64_t *pos, const uint16_t *v, size_t n) {
  for (size_t k = 0; k < n; k++) {
    uint16_t *d = base + pos[k];
#ifdef BXFX_AVX
    *d = (uint16_t)_cvtss_sh(_cvtsh_ss(*d) + _cvtsh_ss(v[k]), _MM_FROUND_TO_NEAREST_INT);
#else
    *d = bxk_f32_to_f16(bxk_f16_to_f32(*d) + bxk_f16_to_f32(v[k]));
#endif
  }
}
/* f32 -> i32 as casts do it (bxk_f64_to_i32, lane-wise).  Lanes outside
 * the range are parked at 0 before the conversion (whose result would be
 * undefined there) and patched after. */
static void SFX(f32_to_i32)(const float *a, int32_t *o, size_t n) {
  size_t i = 0;
  const v8f lo = SFX(splat)(-2147483648.0f), hi = SFX(splat)(2147483648.0f), zero = SFX(splat)(0.0f);
  const v8i imax = SFX(splati)(INT32_MAX);
  for (; i + 8 <= n; i += 8) {
    v8f x = SFX(ld)(a + i);
    v8i big = (v8i)(x >= hi);
    x = BXFX_SEL((v8i)(x != x) | big, zero, x);
    x = BXFX_SEL((v8i)(x < lo), lo, x);
    v8i r = __builtin_convertvector(x, v8i);
    r = (r & ~big) | (imax & big);
    memcpy(o + i, &r, sizeof r);
  }
  for (; i < n; i++) o[i] = bxk_f64_to_i32(a[i]);
}
/* i32 -> f32: one rounding, as the reference's (float)int64 does. */
static void SFX(i32_to_f32)(const int32_t *a, float *o, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    v8i x;
    memcpy(&x, a + i, sizeof x);
    v8f f = __builtin_convertvector(x, v8f);
    memcpy(o + i, &f, sizeof f);
  }
  for (; i < n; i++) o[i] = (float)a[i];
}
static void SFX(f32_to_f64)(const float *a, double *o, size_t n) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) { v4d d = SFX(ld4w)(a + i); memcpy(o + i, &d, sizeof d); }
  for (; i < n; i++) o[i] = a[i];
}
static void SFX(f64_to_f32)(const double *a, float *o, size_t n) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    v4f f = __builtin_convertvector(SFX(ld4d)(a + i), v4f);
    memcpy(o + i, &f, sizeof f);
  }
  for (; i < n; i++) o[i] = (float)a[i];
}
/* bf16 is the top half of an f32: widen by a shift; narrow rounding to
 * nearest even on the bits, NaN made quiet (bxk_bf16_to_f32/bxk_f32_to_bf16,
 * lane-wise). */
typedef uint16_t v8h __attribute__((vector_size(16)));
/* 8 bf16 lanes to f32 (a shift) and back (bxk_f32_to_bf16 lane-wise).
 * With AVX2 the widening is one vpmovzxwd from memory: GCC turns the
 * generic convertvector into two 128-bit widenings and an insert, which
 * perf showed as a fifth of a bf16 batched matmul (the widening pass). */
#ifdef BXFX_AVX
#define BXFX_BF16_LD(p) \
  ((v8f)_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(p))), 16))
#else
#define BXFX_BF16_LD(p) ({ v8h h_; memcpy(&h_, (p), sizeof h_); (v8f)(__builtin_convertvector(h_, v8u) << 16); })
#endif
static void SFX(bf16_to_f32)(const uint16_t *a, float *o, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) BXFX_ST(o + i, BXFX_BF16_LD(a + i));
  for (; i < n; i++) o[i] = bxk_bf16_to_f32(a[i]);
}
/* extrows on half rows widened in registers (exact, so the bits are
 * extrows_f32's on the widened rows): max/min of f16/bf16 across an outer
 * axis had each row widened into a buffer and compared row by row with
 * acc through memory (bf16 [2048, 2048] over dim 0, 2 threads: 0.93 ms,
 * 2.7x f32's on twice the bytes). */
BXFX_EXTROWS_DEF(extrows_f16, float, uint16_t, v8f, v8i, 8, SFX(ld), BXFX_F16_LD, bxk_f16_to_f32)
BXFX_EXTROWS_DEF(extrows_bf16, float, uint16_t, v8f, v8i, 8, SFX(ld), BXFX_BF16_LD, bxk_bf16_to_f32)
#undef BXFX_EXTROWS_DEF
#undef BXFX_EXTROWS_STEP
/* bxk_f32_to_bf16 on 8 lanes, the bf16 bits in each lane's low half: a
 * NaN lane adds no rounding bias (the carry would change its payload, or
 * its sign) and gets the quiet bit, so one unordered compare replaces the
 * reference's second branch (9 operations; masking the two results was
 * 12). */
#define BXFX_BF16_RNE(v)                                                          \
  ({                                                                              \
    v8f f_ = (v);                                                                 \
    v8u u_ = (v8u)f_, nan_ = (v8u)(f_ != f_);                                     \
    ((u_ + ((0x7fffu + ((u_ >> 16) & 1u)) & ~nan_)) | (nan_ & 0x400000u)) >> 16;  \
  })
/* The same for lanes that hold bf16 values already (or NaN): what the
 * exact ops give (abs, neg, relu, floor, ceil, round, sign, max and min
 * of bf16 values, clamp to bf16 bounds).  Rounding such a value is
 * truncation, so only the NaN rule is left. */
#define BXFX_BF16_TRN(v)                                                          \
  ({                                                                              \
    v8f f_ = (v);                                                                 \
    ((v8u)f_ | ((v8u)(f_ != f_) & 0x400000u)) >> 16;                              \
  })
#define BXFX_BF16_ST(p, v)                                                        \
  do {                                                                            \
    v8h h_ = __builtin_convertvector(BXFX_BF16_RNE(v), v8h);                      \
    memcpy((p), &h_, sizeof h_);                                                  \
  } while (0)
/* 16 lanes at a time for the fused kernels.  With AVX2 they are loaded as
 * words unpacked against zero (lanes 0-3 and 8-11 in one vector, 4-7 and
 * 12-15 in the other: the 128-bit halves unpack apart), and vpackusdw of
 * the two narrowed vectors puts them back in order with no permute (the
 * 8-lane forms take a vpermq each way).  The lanes of a fused op do not
 * interact, so their order inside does not matter.  ST16 rounds, STX16
 * truncates (BXFX_BF16_TRN: exact results only). */
#ifdef BXFX_AVX
#define BXFX_BF16_LD16(p, lo, hi)                                                 \
  do {                                                                            \
    __m256i w_ = _mm256_loadu_si256((const __m256i *)(const void *)(p));          \
    (lo) = (v8f)_mm256_unpacklo_epi16(_mm256_setzero_si256(), w_);                \
    (hi) = (v8f)_mm256_unpackhi_epi16(_mm256_setzero_si256(), w_);                \
  } while (0)
#define BXFX_BF16_PK16_(p, NARROW, lo, hi)                                        \
  _mm256_storeu_si256((__m256i *)(void *)(p),                                     \
                      _mm256_packus_epi32((__m256i)NARROW(lo), (__m256i)NARROW(hi)))
#else
#define BXFX_BF16_LD16(p, lo, hi) do { (lo) = BXFX_BF16_LD(p); (hi) = BXFX_BF16_LD((p) + 8); } while (0)
#define BXFX_BF16_PK16_(p, NARROW, lo, hi)                                        \
  do {                                                                            \
    v8h l_ = __builtin_convertvector(NARROW(lo), v8h);                            \
    v8h h_ = __builtin_convertvector(NARROW(hi), v8h);                            \
    memcpy((p), &l_, sizeof l_);                                                  \
    memcpy((p) + 8, &h_, sizeof h_);                                              \
  } while (0)
#endif
#define BXFX_BF16_ST16(p, lo, hi) BXFX_BF16_PK16_(p, BXFX_BF16_RNE, lo, hi)
#define BXFX_BF16_STX16(p, lo, hi) BXFX_BF16_PK16_(p, BXFX_BF16_TRN, lo, hi)
/* f16 takes its 16 lanes as two 8-lane conversions (F16C), which round
 * any value right: the same bits as before, exact results or not. */
#define BXFX_F16_LD16(p, lo, hi) do { (lo) = BXFX_F16_LD(p); (hi) = BXFX_F16_LD((p) + 8); } while (0)
#define BXFX_F16_ST16(p, lo, hi) do { BXFX_F16_ST((p), lo); BXFX_F16_ST((p) + 8, hi); } while (0)
#define BXFX_F16_STX16 BXFX_F16_ST16
static void SFX(f32_to_bf16)(const float *a, uint16_t *o, size_t n) {
  size_t i = 0;
#ifdef BXFX_AVX
  /* in order: the pack interleaves the 128-bit halves, one vpermq */
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256((__m256i *)(void *)(o + i),
                        _mm256_permute4x64_epi64(_mm256_packus_epi32((__m256i)BXFX_BF16_RNE(SFX(ld)(a + i)),
                                                                     (__m256i)BXFX_BF16_RNE(SFX(ld)(a + i + 8))),
                                                 0xd8));
#endif
  for (; i + 8 <= n; i += 8) BXFX_BF16_ST(o + i, SFX(ld)(a + i));
  for (; i < n; i++) o[i] = bxk_f32_to_bf16(a[i]);
}

/* base[pos[k]] = bf16(f32(base[pos[k]]) + f32(v[k])) for k < n in order
 * (positions may repeat): scatter_add's bf16 rule.  AVX2: 8 at a time
 * when their 8 positions differ (the low 32 bits compared lane against
 * lane by 4 rotations; random indices repeat within 8 rarely), the 8
 * targets read into one vector, added and rounded in lanes
 * (BXFX_BF16_ST) and written back: the bits of one at a time, as no two
 * of them touch the same element.  A block with a repeat goes one at a
 * time.  The scalar rule's ~25 instructions and its conversion chain
 * per element made bf16 scatter_add 0.6-0.75x libtorch. */
static void SFX(add_at_bf16)(uint16_t *base, const int64_t *pos, const uint16_t *v, size_t n) {
  size_t k = 0;
#ifdef BXFX_AVX
  for (; k + 8 <= n; k += 8) {
    const int64_t *q = pos + k;
    v4q a, b;
    memcpy(&a, q, sizeof a);
    memcpy(&b, q + 4, sizeof b);
    v8u p = __builtin_shufflevector((v8u)a, (v8u)b, 0, 2, 4, 6, 8, 10, 12, 14);
    v8i c = (p == __builtin_shufflevector(p, p, 1, 2, 3, 4, 5, 6, 7, 0)) |
            (p == __builtin_shufflevector(p, p, 2, 3, 4, 5, 6, 7, 0, 1)) |
            (p == __builtin_shufflevector(p, p, 3, 4, 5, 6, 7, 0, 1, 2)) |
            (p == __builtin_shufflevector(p, p, 4, 5, 6, 7, 0, 1, 2, 3));
    if (!_mm256_testz_si256((__m256i)c, (__m256i)c)) {
      for (int j = 0; j < 8; j++)
        base[q[j]] = bxk_f32_to_bf16(bxk_bf16_to_f32(base[q[j]]) + bxk_bf16_to_f32(v[k + j]));
      continue;
    }
    v8h h = { base[q[0]], base[q[1]], base[q[2]], base[q[3]], base[q[4]], base[q[5]], base[q[6]], base[q[7]] };
    v8f x = (v8f)_mm256_slli_epi32(_mm256_cvtepu16_epi32((__m128i)h), 16) + BXFX_BF16_LD(v + k);
    uint16_t r[8];
    BXFX_BF16_ST(r, x);
    for (int j = 0; j < 8; j++) base[q[j]] = r[j];
  }
#endif
  for (; k < n; k++) base[pos[k]] = bxk_f32_to_bf16(bxk_bf16_to_f32(base[pos[k]]) + bxk_bf16_to_f32(v[k]));
}

/* Half binary ops fused (f16 and bf16, BXFX_H_*): each 16 lanes widened,
 * combined by the f32 expression and narrowed in registers.  The same
 * values as the f32 kernel between the two conversions (f32 arithmetic
 * rounded to the half type, bxk_scalar.h), in one pass instead of three
 * over L1 blocks.  s is the broadcast operand (a in BXFX_SV, b in
 * BXFX_VS) already as f32.  H names the BXFX_<H>_LD/ST pairs, h the
 * scalar bxk_<h>_to_f32 / bxk_f32_to_<h>.  max and min of two half values
 * (or of one and a scalar that is a half value) are half values: they
 * narrow by BXFX_<H>_STX16 (BXFX_EXACT_*). */
#define BXFX_EXACT_add 0
#define BXFX_EXACT_sub 0
#define BXFX_EXACT_mul 0
#define BXFX_EXACT_div 0
#define BXFX_EXACT_max 1
#define BXFX_EXACT_min 1
/* Two 8-lane halves x0/y0 and x1/y1 through the expression, stored. */
#define BXFX_BINH_2_(ST16, name)                                                     \
  do {                                                                               \
    v8f r0_, r1_;                                                                    \
    { v8f x = x0, y = y0; r0_ = BXFX_VEXPR_##name; }                                 \
    { v8f x = x1, y = y1; r1_ = BXFX_VEXPR_##name; }                                 \
    ST16(o + i, r0_, r1_);                                                           \
  } while (0)
#define BXFX_BINH_LOOPS_(H, ST16, name)                                              \
  if (mode == BXFX_VV) {                                                             \
    for (; i + 16 <= n; i += 16) {                                                   \
      v8f x0, x1, y0, y1;                                                            \
      BXFX_##H##_LD16(a + i, x0, x1);                                                \
      BXFX_##H##_LD16(b + i, y0, y1);                                                \
      BXFX_BINH_2_(ST16, name);                                                      \
    }                                                                                \
  } else if (mode == BXFX_SV) {                                                      \
    const v8f x0 = SFX(splat)(s), x1 = x0;                                           \
    for (; i + 16 <= n; i += 16) {                                                   \
      v8f y0, y1;                                                                    \
      BXFX_##H##_LD16(b + i, y0, y1);                                                \
      BXFX_BINH_2_(ST16, name);                                                      \
    }                                                                                \
  } else {                                                                           \
    const v8f y0 = SFX(splat)(s), y1 = y0;                                           \
    for (; i + 16 <= n; i += 16) {                                                   \
      v8f x0, x1;                                                                    \
      BXFX_##H##_LD16(a + i, x0, x1);                                                \
      BXFX_BINH_2_(ST16, name);                                                      \
    }                                                                                \
  }
/* max and min on the 16-bit patterns, 16 lanes a step, for operands
 * that are half values (the scalar too): x where it is NaN, else where
 * neither is NaN, they are not both zeros (the f32 compare is false on
 * -0 vs +0) and the keys (BXFX_BF16_KEY, either type: ordered as the
 * values) compare; y otherwise; then the narrowing's quiet bit on NaN.
 * The bits of widen, f32 rule, narrow without F16C's two conversions. */
#define BXFX_W16K_max(kx, ky) ((kx) > (ky))
#define BXFX_W16K_min(kx, ky) ((kx) < (ky))
#define BXFX_W16K_add(kx, ky) (kx)
#define BXFX_W16K_sub(kx, ky) (kx)
#define BXFX_W16K_mul(kx, ky) (kx)
#define BXFX_W16K_div(kx, ky) (kx)
#define BXFX_BINW16_(H, h, name)                                                     \
  do {                                                                               \
    const v16s sw_ = (v16s){ 0 } + (int16_t)bxk_f32_to_##h(s);                       \
    for (; i + 16 <= n; i += 16) {                                                   \
      v16s x_ = sw_, y_ = sw_;                                                       \
      if (mode != BXFX_SV) memcpy(&x_, a + i, sizeof x_);                            \
      if (mode != BXFX_VS) memcpy(&y_, b + i, sizeof y_);                            \
      v16s mx_ = x_ & 0x7fff, my_ = y_ & 0x7fff;                                     \
      v16s yn_ = my_ > BXFX_W16_INF_##H, z_ = (mx_ | my_) == 0;                      \
      v16s f_ = (mx_ > BXFX_W16_INF_##H) |                                           \
                (~(yn_ | z_) & BXFX_W16K_##name(BXFX_BF16_KEY(x_), BXFX_BF16_KEY(y_))); \
      v16s r_ = (f_ & x_) | (~f_ & y_);                                              \
      r_ |= ((r_ & 0x7fff) > BXFX_W16_INF_##H) & BXFX_W16_Q_##H;                     \
      memcpy(o + i, &r_, sizeof r_);                                                 \
    }                                                                                \
  } while (0)
#define BXFX_BINH_DEF(H, h, name)                                                    \
  static void SFX(binh_##h##_##name)(const uint16_t *a, const uint16_t *b, float s,  \
                                     uint16_t *o, size_t n, int mode) {              \
    size_t i = 0;                                                                    \
    if (BXFX_EXACT_##name && (mode == BXFX_VV || bxk_round_##h(s) == s)) {           \
      BXFX_BINW16_(H, h, name);                                                      \
    } else {                                                                         \
      BXFX_BINH_LOOPS_(H, BXFX_##H##_ST16, name)                                     \
    }                                                                                \
    if (i + 8 <= n) {                                                                \
      v8f x = mode == BXFX_SV ? SFX(splat)(s) : BXFX_##H##_LD(a + i);                \
      v8f y = mode == BXFX_VS ? SFX(splat)(s) : BXFX_##H##_LD(b + i);                \
      BXFX_##H##_ST(o + i, BXFX_VEXPR_##name);                                       \
      i += 8;                                                                        \
    }                                                                                \
    for (; i < n; i++) {                                                             \
      float x = mode == BXFX_SV ? s : bxk_##h##_to_f32(a[i]);                        \
      float y = mode == BXFX_VS ? s : bxk_##h##_to_f32(b[i]);                        \
      o[i] = bxk_f32_to_##h(BXFX_SEXPR_##name);                                      \
    }                                                                                \
  }
#define BXFX_BINH_F16(name) BXFX_BINH_DEF(F16, f16, name)
#define BXFX_BINH_BF16(name) BXFX_BINH_DEF(BF16, bf16, name)
BXFX_BIN_LIST(BXFX_BINH_F16)
BXFX_BIN_LIST(BXFX_BINH_BF16)
#undef BXFX_BINH_F16
#undef BXFX_BINH_BF16
#undef BXFX_BINH_DEF
#undef BXFX_BINW16_
#undef BXFX_W16K_max
#undef BXFX_W16K_min
#undef BXFX_W16K_add
#undef BXFX_W16K_sub
#undef BXFX_W16K_mul
#undef BXFX_W16K_div
#undef BXFX_BINH_LOOPS_
#undef BXFX_BINH_2_

/* Half comparisons in the 16-bit domain, no widening: a half's sign and
 * magnitude bits map to an integer key that orders as the values do
 * (-(x & 0x7fff) when the sign bit is set, so -0 and +0 meet at 0; with
 * AVX2 one and and one vpsignw), 16 lanes a vector.  A lane whose
 * magnitude is above the infinity's bits (NB) is a NaN and answers false,
 * true for ne, as the f32 comparison of the widened values does
 * (bxk_scalar.h compares the f32 values).  32 answers are packed at a
 * time (one vpacksswb and a quadword permute). */
typedef int16_t v16s __attribute__((vector_size(32)));
/* P(a, b, z): the answer, or its negation where NEG is 1 (the store
 * flips it: an andnot instead of an and), with z the NaN lanes.  The
 * AVX2 forms are spelled out: GCC turned the generic (a > b) & ~z into a
 * min, an equality and a blend. */
#ifdef BXFX_AVX
#define BXFX_HKEY(m, v) ((v16s)_mm256_sign_epi16((__m256i)(m), (__m256i)(v)))
#define BXFX_VGT(a, b) ((v16s)_mm256_cmpgt_epi16((__m256i)(a), (__m256i)(b)))
#define BXFX_VEQ(a, b) ((v16s)_mm256_cmpeq_epi16((__m256i)(a), (__m256i)(b)))
#define BXFX_VANDN(z, c) ((v16s)_mm256_andnot_si256((__m256i)(z), (__m256i)(c)))
#define BXFX_VMAX(a, b) ((v16s)_mm256_max_epi16((__m256i)(a), (__m256i)(b)))
#define BXFX_CMP16_ST32(p, m0, m1, NEG) do {                                          \
    __m256i b_ = _mm256_permute4x64_epi64(_mm256_packs_epi16((__m256i)(m0), (__m256i)(m1)), 0xd8); \
    b_ = NEG ? _mm256_andnot_si256(b_, _mm256_set1_epi8(1)) : _mm256_and_si256(b_, _mm256_set1_epi8(1)); \
    _mm256_storeu_si256((__m256i *)(void *)(p), b_);                                   \
  } while (0)
#else
#define BXFX_HKEY(m, v) ({ v16s s_ = (v) >> 15; ((m) ^ s_) - s_; })
#define BXFX_VGT(a, b) ((v16s)((a) > (b)))
#define BXFX_VEQ(a, b) ((v16s)((a) == (b)))
#define BXFX_VANDN(z, c) ((c) & ~(z))
#define BXFX_VMAX(a, b) ({ v16s a_ = (a), b_ = (b); (a_ & (v16s)(a_ > b_)) | (b_ & ~(v16s)(a_ > b_)); })
#define BXFX_CMP16_ST32(p, m0, m1, NEG) do {                                          \
    typedef uint8_t v16b_ __attribute__((vector_size(16)));                           \
    v16b_ r0_ = __builtin_convertvector(((m0) & 1) ^ (NEG), v16b_);                   \
    v16b_ r1_ = __builtin_convertvector(((m1) & 1) ^ (NEG), v16b_);                   \
    memcpy((p), &r0_, 16);                                                            \
    memcpy((p) + 16, &r1_, 16);                                                       \
  } while (0)
#endif
#define BXFX_HLD(p) ({ v16s l_; memcpy(&l_, (p), sizeof l_); l_; })
#define BXFX_KOP_eq(a, b, z) BXFX_VANDN(z, BXFX_VEQ(a, b))
#define BXFX_KOP_ne(a, b, z) BXFX_VANDN(z, BXFX_VEQ(a, b))
#define BXFX_KOP_gt(a, b, z) BXFX_VANDN(z, BXFX_VGT(a, b))
#define BXFX_KOP_le(a, b, z) (BXFX_VGT(a, b) | (z))
#define BXFX_KOP_lt(a, b, z) BXFX_VANDN(z, BXFX_VGT(b, a))
#define BXFX_KOP_ge(a, b, z) (BXFX_VGT(b, a) | (z))
#define BXFX_KNEG_eq 0
#define BXFX_KNEG_ne 1
#define BXFX_KNEG_gt 0
#define BXFX_KNEG_le 1
#define BXFX_KNEG_lt 0
#define BXFX_KNEG_ge 1
/* Which half stands for a threshold: 1 the one at or below it (x > s,
 * x <= s), 2 the one at or above (x >= s, x < s); swapped when s is on the
 * left. */
#define BXFX_KCLS_eq 0
#define BXFX_KCLS_ne 0
#define BXFX_KCLS_gt 1
#define BXFX_KCLS_le 1
#define BXFX_KCLS_ge 2
#define BXFX_KCLS_lt 2
/* The key of a half h that gives x OP s's answers as x OP h for every half
 * x of type hk (cls as above), as f32_threshold does for f32: s's own key
 * when s is a half; else the key of the half below s (cls 1) or above it
 * (cls 2), one key step from the rounded s (keys of adjacent halves are
 * adjacent integers, the two zeros one key).  True when the answers are
 * those of a NaN: s is NaN, or eq/ne of an s no half equals. */
static bool SFX(half_key)(int hk, float s, int cls, int16_t *key) {
  if (s != s) return true;
  uint16_t h = hk == BXFX_H_F16 ? bxk_f32_to_f16(s) : bxk_f32_to_bf16(s);
  float hf = hk == BXFX_H_F16 ? bxk_f16_to_f32(h) : bxk_bf16_to_f32(h);
  int k = h & 0x8000u ? -(int)(h & 0x7fffu) : (int)h;
  if (hf != s) {
    if (cls == 0) return true;
    k += cls == 1 ? -(hf > s) : (hf < s);
  }
  *key = (int16_t)k;
  return false;
}
#define BXFX_CMPH_DEF(H, h, NB, name, OP)                                            \
  static void SFX(cmph_##h##_##name)(const uint16_t *a, const uint16_t *b, float s,  \
                                     uint8_t *o, size_t n, int mode) {               \
    size_t i = 0;                                                                    \
    const v16s nb = (v16s){ 0 } + NB;                                                \
    if (mode == BXFX_VV) {                                                           \
      for (; i + 32 <= n; i += 32) {                                                 \
        v16s x0 = BXFX_HLD(a + i), x1 = BXFX_HLD(a + i + 16);                        \
        v16s y0 = BXFX_HLD(b + i), y1 = BXFX_HLD(b + i + 16);                        \
        v16s mx0 = x0 & 0x7fff, mx1 = x1 & 0x7fff, my0 = y0 & 0x7fff, my1 = y1 & 0x7fff; \
        v16s z0 = BXFX_VGT(BXFX_VMAX(mx0, my0), nb), z1 = BXFX_VGT(BXFX_VMAX(mx1, my1), nb); \
        BXFX_CMP16_ST32(o + i, BXFX_KOP_##name(BXFX_HKEY(mx0, x0), BXFX_HKEY(my0, y0), z0), \
                        BXFX_KOP_##name(BXFX_HKEY(mx1, x1), BXFX_HKEY(my1, y1), z1), BXFX_KNEG_##name); \
      }                                                                              \
    } else if (n >= 32) {                                                            \
      const bool sv = mode == BXFX_SV;                                               \
      int16_t k = 0;                                                                 \
      const int cls = BXFX_KCLS_##name && sv ? 3 - BXFX_KCLS_##name : BXFX_KCLS_##name; \
      const v16s zs = (v16s){ 0 } - (int16_t)SFX(half_key)(BXFX_H_##H, s, cls, &k);  \
      const v16s ks = (v16s){ 0 } + k;                                               \
      const uint16_t *p = sv ? b : a;                                                \
      for (; i + 32 <= n; i += 32) {                                                 \
        v16s x0 = BXFX_HLD(p + i), x1 = BXFX_HLD(p + i + 16);                        \
        v16s m0 = x0 & 0x7fff, m1 = x1 & 0x7fff;                                     \
        v16s z0 = BXFX_VGT(m0, nb) | zs, z1 = BXFX_VGT(m1, nb) | zs;                 \
        v16s k0 = BXFX_HKEY(m0, x0), k1 = BXFX_HKEY(m1, x1);                         \
        if (sv)                                                                      \
          BXFX_CMP16_ST32(o + i, BXFX_KOP_##name(ks, k0, z0), BXFX_KOP_##name(ks, k1, z1), BXFX_KNEG_##name); \
        else                                                                         \
          BXFX_CMP16_ST32(o + i, BXFX_KOP_##name(k0, ks, z0), BXFX_KOP_##name(k1, ks, z1), BXFX_KNEG_##name); \
      }                                                                              \
    }                                                                                \
    for (; i < n; i++) {                                                             \
      float x = mode == BXFX_SV ? s : bxk_##h##_to_f32(a[i]);                        \
      float y = mode == BXFX_VS ? s : bxk_##h##_to_f32(b[i]);                        \
      o[i] = x OP y;                                                                 \
    }                                                                                \
  }
#define BXFX_CMPH_F16(name, OP) BXFX_CMPH_DEF(F16, f16, 0x7c00, name, OP)
#define BXFX_CMPH_BF16(name, OP) BXFX_CMPH_DEF(BF16, bf16, 0x7f80, name, OP)
BXFX_CMP_OPS(BXFX_CMPH_F16)
BXFX_CMP_OPS(BXFX_CMPH_BF16)
#undef BXFX_CMPH_F16
#undef BXFX_CMPH_BF16
#undef BXFX_CMPH_DEF
#undef BXFX_HKEY
#undef BXFX_HLD
#undef BXFX_CMP16_ST32
#undef BXFX_VGT
#undef BXFX_VEQ
#undef BXFX_VANDN
#undef BXFX_VMAX

/* Half unary ops fused likewise (the lane-wise ones, BXFX_UN_EL_LIST):
 * o may equal a (in place).  The exact ones (their result is a half
 * value, or NaN: BXFX_EXACT_* 1) narrow by BXFX_<H>_STX16; abs, neg,
 * relu and sign (2) need no widening at all (BXFX_W16_*), for either
 * half type: F16C's two conversions cost more than the op itself. */
#define BXFX_EXACT_sqrt 0
#define BXFX_EXACT_rsqrt 0
#define BXFX_EXACT_neg 2
#define BXFX_EXACT_abs 2
#define BXFX_EXACT_relu 2
#define BXFX_EXACT_recip 0
#define BXFX_EXACT_floor 1
#define BXFX_EXACT_ceil 1
#define BXFX_EXACT_round 1
#define BXFX_EXACT_sign 2
/* abs, neg, relu and sign on the 16-bit patterns (int16 lanes w), 16 a
 * vector: the sign bit cleared or flipped; the lane zeroed where it is
 * below zero (-0 and NaN are not: negative non-NaN patterns run from
 * -32767 to -inf's, INF | 0x8000); +-1 (ONE with w's sign bit) where w is
 * neither +-0 nor NaN.  Then the quiet bit Q on NaN, as the narrowing
 * (bxk_f32_to_<h>, vcvtps2ph) sets it on the widened result.  The bits of
 * widen, f32 op, narrow, with a third of the operations. The others'
 * entries are never used. */
typedef int16_t v16s __attribute__((vector_size(32)));
#define BXFX_W16_abs(w, INF, ONE) ((w) & 0x7fff)
#define BXFX_W16_neg(w, INF, ONE) ((w) ^ -32768)
#define BXFX_W16_relu(w, INF, ONE) ((w) & ~(((w) > -32768) & ((w) <= (int16_t)(0x8000 | (INF)))))
#define BXFX_W16_sign(w, INF, ONE)                                                  \
  ({ v16s m_ = (w) & 0x7fff, f_ = (m_ > 0) & (m_ <= (INF));                         \
     (f_ & (((w) & -32768) | (ONE))) | (~f_ & (w)); })
#define BXFX_W16_sqrt(w, INF, ONE) (w)
#define BXFX_W16_rsqrt(w, INF, ONE) (w)
#define BXFX_W16_recip(w, INF, ONE) (w)
#define BXFX_W16_floor(w, INF, ONE) (w)
#define BXFX_W16_ceil(w, INF, ONE) (w)
#define BXFX_W16_round(w, INF, ONE) (w)
#define BXFX_W16_LOOP_(H, name)                                                     \
  for (; i + 16 <= n; i += 16) {                                                    \
    v16s w_;                                                                        \
    memcpy(&w_, a + i, sizeof w_);                                                  \
    v16s r_ = BXFX_W16_##name(w_, BXFX_W16_INF_##H, BXFX_W16_ONE_##H) |             \
              (((w_ & 0x7fff) > BXFX_W16_INF_##H) & BXFX_W16_Q_##H);                \
    memcpy(o + i, &r_, sizeof r_);                                                  \
  }
#define BXFX_UNH_LOOP_(H, ST16, VEXPR)                                              \
  for (; i + 16 <= n; i += 16) {                                                    \
    v8f x0, x1, r0_, r1_;                                                           \
    BXFX_##H##_LD16(a + i, x0, x1);                                                 \
    { v8f x = x0; r0_ = VEXPR; }                                                    \
    { v8f x = x1; r1_ = VEXPR; }                                                    \
    ST16(o + i, r0_, r1_);                                                          \
  }
#define BXFX_UNH_DEF(H, h, name, VEXPR, SEXPR)                                      \
  static void SFX(unh_##h##_##name)(const uint16_t *a, uint16_t *o, size_t n) {     \
    size_t i = 0;                                                                   \
    v8f one = SFX(splat)(1.0f), zero = SFX(splat)(0.0f);                           \
    (void)one; (void)zero;                                                          \
    if (BXFX_EXACT_##name == 2) {                                                   \
      BXFX_W16_LOOP_(H, name)                                                       \
    } else if (BXFX_EXACT_##name) {                                                 \
      BXFX_UNH_LOOP_(H, BXFX_##H##_STX16, VEXPR)                                    \
    } else {                                                                        \
      BXFX_UNH_LOOP_(H, BXFX_##H##_ST16, VEXPR)                                     \
    }                                                                               \
    for (; i + 8 <= n; i += 8) { v8f x = BXFX_##H##_LD(a + i); BXFX_##H##_ST(o + i, VEXPR); } \
    for (; i < n; i++) { float x = bxk_##h##_to_f32(a[i]); o[i] = bxk_f32_to_##h(SEXPR); } \
  }
#define BXFX_UNH_F16(name, VEXPR, SEXPR) BXFX_UNH_DEF(F16, f16, name, VEXPR, SEXPR)
#define BXFX_UNH_BF16(name, VEXPR, SEXPR) BXFX_UNH_DEF(BF16, bf16, name, VEXPR, SEXPR)
BXFX_UN_EL_LIST(BXFX_UNH_F16)
BXFX_UN_EL_LIST(BXFX_UNH_BF16)
#undef BXFX_UNH_F16
#undef BXFX_UNH_BF16
#undef BXFX_UNH_DEF
#undef BXFX_W16_LOOP_

/* clamp of a half operand (flex_kern.h clamp_half), the f32 rule of the
 * block passes (x < lo ? lo : x > hi ? hi : x, NaN passes) rounded to the
 * type: exact, so truncated, when both bounds are half values. */
#define BXFX_VCLAMP_ BXFX_SEL((v8i)(x < lov), lov, BXFX_SEL((v8i)(x > hiv), hiv, x))
#define BXFX_CLAMPH_DEF(H, h)                                                       \
  static void SFX(clamph_##h)(const uint16_t *a, uint16_t *o, size_t n, float lo, float hi) { \
    size_t i = 0;                                                                   \
    const v8f lov = SFX(splat)(lo), hiv = SFX(splat)(hi);                           \
    if (bxk_round_##h(lo) == lo && bxk_round_##h(hi) == hi) {                       \
      BXFX_UNH_LOOP_(H, BXFX_##H##_STX16, BXFX_VCLAMP_)                             \
    } else {                                                                        \
      BXFX_UNH_LOOP_(H, BXFX_##H##_ST16, BXFX_VCLAMP_)                              \
    }                                                                               \
    for (; i + 8 <= n; i += 8) { v8f x = BXFX_##H##_LD(a + i); BXFX_##H##_ST(o + i, BXFX_VCLAMP_); } \
    for (; i < n; i++) {                                                            \
      float x = bxk_##h##_to_f32(a[i]);                                             \
      o[i] = bxk_f32_to_##h(x < lo ? lo : x > hi ? hi : x);                         \
    }                                                                               \
  }
BXFX_CLAMPH_DEF(F16, f16)
BXFX_CLAMPH_DEF(BF16, bf16)
#undef BXFX_CLAMPH_DEF
static void SFX(clamp_f32)(const float *a, float *o, size_t n, float lo, float hi) {
  const v8f lov = SFX(splat)(lo), hiv = SFX(splat)(hi);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    v8f x = SFX(ld)(a + i), x2 = SFX(ld)(a + i + 8);
    BXFX_ST(o + i, BXFX_VCLAMP_);
    x = x2;
    BXFX_ST(o + i + 8, BXFX_VCLAMP_);
  }
  for (; i + 8 <= n; i += 8) { v8f x = SFX(ld)(a + i); BXFX_ST(o + i, BXFX_VCLAMP_); }
  for (; i < n; i++) o[i] = a[i] < lo ? lo : a[i] > hi ? hi : a[i];
}
#undef BXFX_VCLAMP_
#undef BXFX_UNH_LOOP_

/* powi of a half operand (flex_kern.h powi_half): powi_f32's products of
 * the widened lanes, rounded to f32 and then to the type, in one pass
 * instead of three over L1 blocks.  W4D_ widens 8 f32 lanes to two f64
 * vectors, N8F_ narrows two back to 8 f32 lanes. */
#ifdef BXFX_AVX
#define BXFX_W4D_(x, lo, hi)                                                        \
  do {                                                                              \
    lo = (v4d)_mm256_cvtps_pd(_mm256_castps256_ps128((__m256)(x)));                 \
    hi = (v4d)_mm256_cvtps_pd(_mm256_extractf128_ps((__m256)(x), 1));               \
  } while (0)
#define BXFX_N8F_(lo, hi) \
  ((v8f)_mm256_set_m128((__m128)__builtin_convertvector(hi, v4f), (__m128)__builtin_convertvector(lo, v4f)))
#else
#define BXFX_W4D_(x, lo, hi)                                                        \
  do {                                                                              \
    float t_[8];                                                                    \
    memcpy(t_, &(x), sizeof t_);                                                    \
    lo = SFX(ld4w)(t_);                                                             \
    hi = SFX(ld4w)(t_ + 4);                                                         \
  } while (0)
#define BXFX_N8F_(lo, hi)                                                           \
  ({                                                                                \
    v4f l_ = __builtin_convertvector(lo, v4f), h_ = __builtin_convertvector(hi, v4f); \
    float t_[8];                                                                    \
    memcpy(t_, &l_, sizeof l_);                                                     \
    memcpy(t_ + 4, &h_, sizeof h_);                                                 \
    SFX(ld)(t_);                                                                    \
  })
#endif
/* Exponents 0 .. 3 skip f64.  x^2 of an f32 is one rounding of the exact
 * product in f32 and in f64 (48 bits) alike.  x^3 = x^2 * x: a half's x^2
 * is exact in f32 (bf16 8 significant bits -> 16, f16 11 -> 22), so the
 * f32 product is one rounding of the exact x^3, as f64's exact x^3 (24 or
 * 33 bits) rounded to f32 is.  Out of range they agree too: an f32 x^2
 * that overflows or loses bits to underflow (bf16 only) leaves |x^3| >=
 * 2^192 or < 2^-189, inf or 0 with x's sign from f64 as well.  NaN lanes keep their payload
 * through the multiplies and the narrowing quiets them, as before.  The
 * f64 widening and narrowing were most of the kernel (0.27 of 0.34 ns an
 * element in L1 for bf16 ^3 even at ^0): the matrix's powi and
 * pow_scalar by 3 on bf16 were compute bound at 0.9x libtorch. */
#define BXFX_POWIH_DEF(H, h)                                                        \
  static void SFX(powih_##h)(const uint16_t *a, uint16_t *o, size_t n, int e) {     \
    unsigned m = (unsigned)(e < 0 ? -e : e);                                        \
    const v4d one = { 1, 1, 1, 1 };                                                 \
    size_t i = 0;                                                                   \
    if (e >= 0 && e <= 3)                                                           \
      for (; i + 16 <= n; i += 16) {                                                \
        v8f x0, x1, r0 = SFX(splat)(1.0f), r1 = r0;                                 \
        BXFX_##H##_LD16(a + i, x0, x1);                                             \
        if (e >= 1) r0 = x0, r1 = x1;                                               \
        if (e >= 2) r0 *= x0, r1 *= x1;                                             \
        if (e >= 3) r0 *= x0, r1 *= x1;                                             \
        BXFX_##H##_ST16(o + i, r0, r1);                                             \
      }                                                                             \
    for (; i + 16 <= n; i += 16) {                                                  \
      v8f x0, x1;                                                                   \
      v4d b0, b1, b2, b3, r0, r1, r2, r3;                                           \
      BXFX_##H##_LD16(a + i, x0, x1);                                               \
      BXFX_W4D_(x0, b0, b1);                                                        \
      BXFX_W4D_(x1, b2, b3);                                                        \
      BXFX_POWI4_(b0, b1, b2, b3, r0, r1, r2, r3);                                  \
      BXFX_##H##_ST16(o + i, BXFX_N8F_(r0, r1), BXFX_N8F_(r2, r3));                 \
    }                                                                               \
    for (; i < n; i++) o[i] = bxk_f32_to_##h(SFX(powi1)(bxk_##h##_to_f32(a[i]), m, e)); \
  }
BXFX_POWIH_DEF(F16, f16)
BXFX_POWIH_DEF(BF16, bf16)
#undef BXFX_POWIH_DEF
#undef BXFX_W4D_
#undef BXFX_N8F_
#undef BXFX_POWI4_

/* The transcendentals fused the same way: full vectors through libmvec
 * (a padded tail too, as un_* does it: the lanes do not interact, so each
 * value is the f32 kernel's), or libm lane by lane in the baseline. */
#ifdef BXFX_MVEC
#define BXFX_UNH_TR_DEF(H, h, name, fn)                                             \
  static void SFX(unh_##h##_##name)(const uint16_t *a, uint16_t *o, size_t n) {     \
    size_t i = 0;                                                                   \
    for (; i + 8 <= n; i += 8) { v8f x = BXFX_##H##_LD(a + i); BXFX_##H##_ST(o + i, BXFX_MV(fn)); } \
    if (i < n) {                                                                    \
      uint16_t t[8] = { 0 };                                                        \
      memcpy(t, a + i, (n - i) * sizeof(uint16_t));                                 \
      v8f x = BXFX_##H##_LD(t);                                                     \
      BXFX_##H##_ST(t, BXFX_MV(fn));                                                \
      memcpy(o + i, t, (n - i) * sizeof(uint16_t));                                 \
    }                                                                               \
  }
#else
#define BXFX_UNH_TR_DEF(H, h, name, fn)                                             \
  static void SFX(unh_##h##_##name)(const uint16_t *a, uint16_t *o, size_t n) {     \
    for (size_t i = 0; i < n; i++) o[i] = bxk_f32_to_##h(fn(bxk_##h##_to_f32(a[i]))); \
  }
#endif
#define BXFX_UNH_TR_F16(name, fn) BXFX_UNH_TR_DEF(F16, f16, name, fn)
#define BXFX_UNH_TR_BF16(name, fn) BXFX_UNH_TR_DEF(BF16, bf16, name, fn)
BXFX_UN_TR_LIST(BXFX_UNH_TR_F16)
BXFX_UN_TR_LIST(BXFX_UNH_TR_BF16)
#undef BXFX_UNH_TR_F16
#undef BXFX_UNH_TR_BF16
#undef BXFX_UNH_TR_DEF

/* ---- creation ---------------------------------------------------------- */
/* arange: o[i] = start + (double)(i0 + i) * step, stored as the runtime's
 * stores do (bxr_store_f64): f32 rounds once, i32 by bxk_f64_to_i32
 * (NaN 0, truncate, saturate; lanes out of range are clamped to the bound
 * first, which truncates to the same saturated value).  The index is exact
 * in a double (< 2^53).  The product is kept apart from the add (an empty
 * asm) so the FMA target cannot contract the two roundings into one. */
#ifdef BXFX_AVX
#define BXFX_NOFUSE(p) __asm__("" : "+x"(p))
#else
#define BXFX_NOFUSE(p) ((void)0)   /* no FMA in the baseline ISA */
#endif
#define BXFX_ARANGE_DEF(name, OT, STORE, SCALAR)                                   \
  static void SFX(name)(OT *o, size_t n, double start, double step, int64_t i0) {  \
    const v4d st = { step, step, step, step }, s0 = { start, start, start, start }; \
    const v4d four = { 4, 4, 4, 4 };                                               \
    v4d ix = { (double)i0, (double)(i0 + 1), (double)(i0 + 2), (double)(i0 + 3) };  \
    size_t i = 0;                                                                  \
    for (; i + 4 <= n; i += 4) {                                                   \
      v4d p = ix * st;                                                             \
      BXFX_NOFUSE(p);                                                              \
      v4d v = s0 + p;                                                              \
      STORE;                                                                       \
      ix += four;                                                                  \
    }                                                                              \
    for (; i < n; i++) {                                                           \
      double p = (double)(i0 + (int64_t)i) * step;                                 \
      BXFX_NOFUSE(p);                                                              \
      double v = start + p;                                                        \
      o[i] = SCALAR;                                                               \
    }                                                                              \
  }
#define BXFX_ARANGE_ST_F32 do { v4f f_ = __builtin_convertvector(v, v4f); memcpy(o + i, &f_, sizeof f_); } while (0)
BXFX_ARANGE_DEF(arange_f32, float, BXFX_ARANGE_ST_F32, (float)v)
#undef BXFX_ARANGE_ST_F32
BXFX_ARANGE_DEF(arange_f64, double, memcpy(o + i, &v, sizeof v), v)
typedef int64_t v4m __attribute__((vector_size(32)));
#define BXFX_ARANGE_ST_I32 do {                                                     \
    const v4d lo_ = { -2147483648.0, -2147483648.0, -2147483648.0, -2147483648.0 }; \
    const v4d hi_ = { 2147483647.0, 2147483647.0, 2147483647.0, 2147483647.0 };     \
    v4m nan_ = (v4m)(v != v), big_ = (v4m)(v >= hi_), small_ = (v4m)(v <= lo_);      \
    v = (v4d)(((v4m)v & ~(nan_ | big_ | small_)) | ((v4m)hi_ & big_) | ((v4m)lo_ & small_)); \
    v4i r_ = __builtin_convertvector(v, v4i);                                        \
    memcpy(o + i, &r_, sizeof r_);                                                   \
  } while (0)
BXFX_ARANGE_DEF(arange_i32, int32_t, BXFX_ARANGE_ST_I32, bxk_f64_to_i32(v))
#undef BXFX_ARANGE_ST_I32
/* i64 by bxk_f64_to_i64 lane by lane (AVX2 has no f64 -> i64 conversion):
 * the general rule, for starts or steps that are not small integers. */
#define BXFX_ARANGE_ST_I64 do { for (int k_ = 0; k_ < 4; k_++) o[i + k_] = bxk_f64_to_i64(v[k_]); } while (0)
BXFX_ARANGE_DEF(arange_i64, int64_t, BXFX_ARANGE_ST_I64, bxk_f64_to_i64(v))
#undef BXFX_ARANGE_ST_I64
#undef BXFX_ARANGE_DEF
#undef BXFX_NOFUSE
/* Integer arange, o[i] = start + (i0 + i) * step, where the caller has
 * shown every value and product exact in a double (|x| < 2^52) and in
 * the output's range: then the f64 rule above gives exactly these
 * integers, computed here by adds in integer lanes (modulo 2^64 or 2^32,
 * exact since the true values fit).  Twice the lanes of the f64 rule's
 * and no conversions: the i32 and i64 aranges become as fast as a fill. */
static void SFX(iota_i64)(int64_t *o, size_t n, int64_t start, int64_t step, int64_t i0) {
  const uint64_t s = (uint64_t)start + (uint64_t)i0 * (uint64_t)step, t = (uint64_t)step;
  v4q v = { s, s + t, s + 2 * t, s + 3 * t }, v2 = v + 4 * t;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    memcpy(o + i, &v, sizeof v);
    memcpy(o + i + 4, &v2, sizeof v2);
    v += 8 * t, v2 += 8 * t;
  }
  for (; i < n; i++) o[i] = (int64_t)(s + (uint64_t)i * t);
}
static void SFX(iota_i32)(int32_t *o, size_t n, int64_t start, int64_t step, int64_t i0) {
  const uint32_t s = (uint32_t)((uint64_t)start + (uint64_t)i0 * (uint64_t)step), t = (uint32_t)step;
  v8u v = { s, s + t, s + 2 * t, s + 3 * t, s + 4 * t, s + 5 * t, s + 6 * t, s + 7 * t };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    memcpy(o + i, &v, sizeof v);
    v += 8 * t;
  }
  for (; i < n; i++) o[i] = (int32_t)(s + (uint32_t)i * t);
}
/* f32 from the same i32 lanes (values in i32's range): one rounding of
 * the exact integer, as (float) of the exact double is. */
static void SFX(iota_f32)(float *o, size_t n, int64_t start, int64_t step, int64_t i0) {
  const uint32_t s = (uint32_t)((uint64_t)start + (uint64_t)i0 * (uint64_t)step), t = (uint32_t)step;
  v8u v = { s, s + t, s + 2 * t, s + 3 * t, s + 4 * t, s + 5 * t, s + 6 * t, s + 7 * t };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    v8f f = __builtin_convertvector((v8i)v, v8f);
    memcpy(o + i, &f, sizeof f);
    v += 8 * t;
  }
  for (; i < n; i++) o[i] = (float)(int32_t)(s + (uint32_t)i * t);
}

/* ---- layout ------------------------------------------------------------ */
/* An 8x8 block transposed: d[m*ds + k] = s[k*ss + m] (strides in
 * elements), for 4-, 2- and 1-byte elements: the same lane moves on
 * 8-lane vectors of 32, 16 or 8 bytes.  Lanes only move (no arithmetic),
 * so any bits (NaN payloads, ints) are copied exactly: unpack pairs, then
 * quads, then halves. */
typedef uint8_t v8b __attribute__((vector_size(8)));
#define BXFX_TILE8_DEF(name, T, V)                                                          \
  static void SFX(name)(T *d, int64_t ds, const T *s, int64_t ss) {                         \
    V r[8], t[8], u[8];                                                                     \
    /* straight-line loads: gcc 12 -O3 made the loop a copy of 16-byte                    \
     * halves into a stack r[] read back 32 bytes at a time (a failed                      \
     * store-to-load forward per row), 2.7x the time of the shuffles */                    \
    memcpy(&r[0], s, sizeof r[0]), memcpy(&r[1], s + ss, sizeof r[1]);                     \
    memcpy(&r[2], s + 2 * ss, sizeof r[2]), memcpy(&r[3], s + 3 * ss, sizeof r[3]);       \
    memcpy(&r[4], s + 4 * ss, sizeof r[4]), memcpy(&r[5], s + 5 * ss, sizeof r[5]);       \
    memcpy(&r[6], s + 6 * ss, sizeof r[6]), memcpy(&r[7], s + 7 * ss, sizeof r[7]);       \
    for (int k = 0; k < 8; k += 2) {                                                        \
      t[k] = __builtin_shufflevector(r[k], r[k + 1], 0, 8, 1, 9, 4, 12, 5, 13);             \
      t[k + 1] = __builtin_shufflevector(r[k], r[k + 1], 2, 10, 3, 11, 6, 14, 7, 15);       \
    }                                                                                       \
    for (int k = 0; k < 8; k += 4)                                                          \
      for (int h = 0; h < 2; h++) {                                                         \
        u[k + 2 * h] = __builtin_shufflevector(t[k + h], t[k + 2 + h], 0, 1, 8, 9, 4, 5, 12, 13); \
        u[k + 2 * h + 1] = __builtin_shufflevector(t[k + h], t[k + 2 + h], 2, 3, 10, 11, 6, 7, 14, 15); \
      }                                                                                     \
    for (int m = 0; m < 4; m++) {                                                           \
      V lo = __builtin_shufflevector(u[m], u[m + 4], 0, 1, 2, 3, 8, 9, 10, 11);             \
      V hi = __builtin_shufflevector(u[m], u[m + 4], 4, 5, 6, 7, 12, 13, 14, 15);           \
      memcpy(d + m * ds, &lo, sizeof lo);                                                   \
      memcpy(d + (m + 4) * ds, &hi, sizeof hi);                                             \
    }                                                                                       \
  }
BXFX_TILE8_DEF(tile8_u32, uint32_t, v8i)
BXFX_TILE8_DEF(tile8_u8, uint8_t, v8b)
#undef BXFX_TILE8_DEF

/* tile8 for 2-byte elements: the same three rounds with whole-vector
 * interleaves (punpck{l,h}{wd,dq,qdq} on a 16-byte row): the 256-bit
 * lane order above took two pshufb and a por per step here (92
 * instructions a block, the f16 transpose slower than the f32 one). */
static void SFX(tile8_u16)(uint16_t *d, int64_t ds, const uint16_t *s, int64_t ss) {
  v8h r[8], t[8], u[8];
  memcpy(&r[0], s, sizeof r[0]), memcpy(&r[1], s + ss, sizeof r[1]);
  memcpy(&r[2], s + 2 * ss, sizeof r[2]), memcpy(&r[3], s + 3 * ss, sizeof r[3]);
  memcpy(&r[4], s + 4 * ss, sizeof r[4]), memcpy(&r[5], s + 5 * ss, sizeof r[5]);
  memcpy(&r[6], s + 6 * ss, sizeof r[6]), memcpy(&r[7], s + 7 * ss, sizeof r[7]);
  for (int k = 0; k < 8; k += 2) {   /* t[k]: rows k, k+1 of columns 0-3; t[k+1]: of 4-7 */
    t[k] = __builtin_shufflevector(r[k], r[k + 1], 0, 8, 1, 9, 2, 10, 3, 11);
    t[k + 1] = __builtin_shufflevector(r[k], r[k + 1], 4, 12, 5, 13, 6, 14, 7, 15);
  }
  for (int k = 0; k < 8; k += 4)     /* u[k+m]: rows k..k+3 of columns 2m, 2m+1 */
    for (int h = 0; h < 2; h++) {
      u[k + 2 * h] = __builtin_shufflevector(t[k + h], t[k + 2 + h], 0, 1, 8, 9, 2, 3, 10, 11);
      u[k + 2 * h + 1] = __builtin_shufflevector(t[k + h], t[k + 2 + h], 4, 5, 12, 13, 6, 7, 14, 15);
    }
  for (int m = 0; m < 4; m++) {
    v8h lo = __builtin_shufflevector(u[m], u[m + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    v8h hi = __builtin_shufflevector(u[m], u[m + 4], 4, 5, 6, 7, 12, 13, 14, 15);
    memcpy(d + 2 * m * ds, &lo, sizeof lo);
    memcpy(d + (2 * m + 1) * ds, &hi, sizeof hi);
  }
}

/* A 4x4 block of 8-byte elements transposed, d[m*ds + k] = s[k*ss + m]:
 * pairs interleaved within 128-bit halves, then halves swapped (AVX2:
 * vunpck{l,h}pd and vperm2f128).  The 8-byte transposed copy moved its
 * tiles element by element. */
static void SFX(tile4_u64)(uint64_t *d, int64_t ds, const uint64_t *s, int64_t ss) {
  v4q r0, r1, r2, r3;
  memcpy(&r0, s, sizeof r0), memcpy(&r1, s + ss, sizeof r1);
  memcpy(&r2, s + 2 * ss, sizeof r2), memcpy(&r3, s + 3 * ss, sizeof r3);
  v4q t0 = __builtin_shufflevector(r0, r1, 0, 4, 2, 6), t1 = __builtin_shufflevector(r0, r1, 1, 5, 3, 7);
  v4q t2 = __builtin_shufflevector(r2, r3, 0, 4, 2, 6), t3 = __builtin_shufflevector(r2, r3, 1, 5, 3, 7);
  v4q c0 = __builtin_shufflevector(t0, t2, 0, 1, 4, 5), c1 = __builtin_shufflevector(t1, t3, 0, 1, 4, 5);
  v4q c2 = __builtin_shufflevector(t0, t2, 2, 3, 6, 7), c3 = __builtin_shufflevector(t1, t3, 2, 3, 6, 7);
  memcpy(d, &c0, sizeof c0), memcpy(d + ds, &c1, sizeof c1);
  memcpy(d + 2 * ds, &c2, sizeof c2), memcpy(d + 3 * ds, &c3, sizeof c3);
}
/* A 16x16 block of bytes transposed (d[m*ds + k] = s[k*ss + m]): four
 * rounds of interleaving row pairs (punpck{l,h}{bw,wd,dq,qdq}, SSE2, so
 * the baseline build has them too), after which vector j holds column
 * bitrev4(j).  A 32-row bool tile took 16 tile8_u8 calls of ~90
 * instructions per 64 bytes; this is ~100 per 256. */
typedef uint8_t v16u8 __attribute__((vector_size(16)));
static void SFX(tile16_u8)(uint8_t *d, int64_t ds, const uint8_t *s, int64_t ss) {
  static const unsigned char rev[16] = { 0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15 };
  v16u8 v[16], w[16];
  for (int k = 0; k < 16; k++) memcpy(&v[k], s + k * ss, sizeof v[k]);
#define BXFX_T16_STAGE(l0, l1, l2, l3, l4, l5, l6, l7, l8, l9, l10, l11, l12, l13, l14, l15, \
                       h0, h1, h2, h3, h4, h5, h6, h7, h8, h9, h10, h11, h12, h13, h14, h15) \
  do {                                                                                      \
    for (int k = 0; k < 8; k++) {                                                          \
      w[k] = __builtin_shufflevector(v[2 * k], v[2 * k + 1], l0, l1, l2, l3, l4, l5, l6, l7, \
                                     l8, l9, l10, l11, l12, l13, l14, l15);                 \
      w[k + 8] = __builtin_shufflevector(v[2 * k], v[2 * k + 1], h0, h1, h2, h3, h4, h5, h6, \
                                         h7, h8, h9, h10, h11, h12, h13, h14, h15);         \
    }                                                                                      \
    memcpy(v, w, sizeof v);                                                                \
  } while (0)
  BXFX_T16_STAGE(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23,
                 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  BXFX_T16_STAGE(0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23,
                 8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31);
  BXFX_T16_STAGE(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23,
                 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
  BXFX_T16_STAGE(0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23,
                 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
#undef BXFX_T16_STAGE
  for (int j = 0; j < 16; j++) memcpy(d + rev[j] * ds, &v[j], sizeof v[j]);
}

/* d[i] = s[n - 1 - i] for i < n (flip along the last dim): 32 bytes a
 * step, lanes reversed in registers (AVX2: vpshufb and vpermq for 1- and
 * 2-byte lanes, vpermd/vpermq for 4 and 8), two vectors in flight, the
 * tail element by element.  Lanes only move: bits copied exactly.  The
 * strided element loop it replaces ran f16 and bool flips at 10-15% of
 * copy bandwidth. */
typedef uint8_t v32u8 __attribute__((vector_size(32)));
typedef uint16_t v16u16 __attribute__((vector_size(32)));
#define BXFX_REV_DEF(name, T, V, ...)                                                       \
  static void SFX(name)(T *d, const T *s, size_t n) {                                       \
    enum { W = 32 / sizeof(T) };                                                            \
    size_t i = 0;                                                                           \
    for (; i + 2 * W <= n; i += 2 * W) {                                                    \
      V a, b;                                                                               \
      memcpy(&a, s + n - i - W, sizeof a);                                                  \
      memcpy(&b, s + n - i - 2 * W, sizeof b);                                              \
      a = __builtin_shufflevector(a, a, __VA_ARGS__);                                       \
      b = __builtin_shufflevector(b, b, __VA_ARGS__);                                       \
      memcpy(d + i, &a, sizeof a);                                                          \
      memcpy(d + i + W, &b, sizeof b);                                                      \
    }                                                                                       \
    if (i + W <= n) {                                                                       \
      V a;                                                                                  \
      memcpy(&a, s + n - i - W, sizeof a);                                                  \
      a = __builtin_shufflevector(a, a, __VA_ARGS__);                                       \
      memcpy(d + i, &a, sizeof a);                                                          \
      i += W;                                                                               \
    }                                                                                       \
    for (; i < n; i++) d[i] = s[n - 1 - i];                                                 \
  }
BXFX_REV_DEF(rev_u8, uint8_t, v32u8, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16,
             15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
BXFX_REV_DEF(rev_u16, uint16_t, v16u16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
BXFX_REV_DEF(rev_u32, uint32_t, v8u, 7, 6, 5, 4, 3, 2, 1, 0)
BXFX_REV_DEF(rev_u64, uint64_t, v4q, 3, 2, 1, 0)
#undef BXFX_REV_DEF

#include "flex_kern_cast.h"

const struct bxfx_kernels VARIANT = {
  .isa = VARIANT_NAME,
  .bin = {
#define X(n) [BXFX_BIN_##n] = SFX(bin_##n),
    BXFX_BIN_LIST(X)
#undef X
  },
  .stream_out = SFX(stream_out),
  .fill8 = SFX(fill8),
  .un = {
#define X(n) [BXFX_UN_##n] = SFX(un_##n),
    BXFX_UN_LIST(X)
#undef X
  },
  .un_f64 = {
#define X(n) [BXFX_UND_##n] = SFX(und_##n),
    BXFX_UND_LIST(X)
#undef X
  },
  .pow_f32 = SFX(pow_f32),
  .pow_f64 = SFX(pow_f64),
  .cmp = {
#define X(n) [BXFX_CMP_##n] = SFX(cmp_##n),
    BXFX_CMP_LIST(X)
#undef X
  },
  .bin_i32 = SFX(bin_i32),
  .bin_i64 = SFX(bin_i64),
  .un_i32 = SFX(un_i32),
  .un_i64 = SFX(un_i64),
  .pow_i64 = SFX(pow_i64),
  .bop = SFX(bop),
  .mask_sel = SFX(mask_sel),
  .divs_i64 = SFX(divs_i64),
  .cmp_i32 = SFX(cmp_i32),
  .cmp_i64 = SFX(cmp_i64),
  .cmp_f64 = SFX(cmp_f64),
  .binw_f32 = SFX(binw_f32),
  .powi_f32 = SFX(powi_f32),
  .powi_f64 = SFX(powi_f64),
  .rem_f32 = SFX(rem_f32),
  .rem_f64 = SFX(rem_f64),
  .mm_i32 = SFX(mm_i32),
  .mm_i64 = SFX(mm_i64),
  .sum_f32 = SFX(sum_f32),
  .sum_f64 = SFX(sum_f64),
  .mulrows_f32 = SFX(mulrows_f32),
  .mulrows_f64 = SFX(mulrows_f64),
  .extrows_f32 = SFX(extrows_f32),
  .extrows_f64 = SFX(extrows_f64),
  .extrows_f16 = SFX(extrows_f16),
  .extrows_bf16 = SFX(extrows_bf16),
  .rowsacc_i32 = SFX(rowsacc_i32),
  .rowsacc_i64 = SFX(rowsacc_i64),
  .cumsum_i32 = SFX(cumsum_i32),
  .cumsum_i64 = SFX(cumsum_i64),
  .cumstep_f32 = SFX(cumstep_f32),
  .cumstep_f64 = SFX(cumstep_f64),
  .sum_bf16 = SFX(sum_bf16),
  .sum_f16 = SFX(sum_f16),
  .leafrows_bf16 = SFX(leafrows_bf16),
  .leafrows_f16 = SFX(leafrows_f16),
  .acc_f64 = SFX(acc_f64),
  .leafrows_f32 = SFX(leafrows_f32),
  .leafrows_f64 = SFX(leafrows_f64),
  .tile8_u32 = SFX(tile8_u32),
  .tile8_u16 = SFX(tile8_u16),
  .tile8_u8 = SFX(tile8_u8),
  .tile16_u8 = SFX(tile16_u8),
  .tile4_u64 = SFX(tile4_u64),
  .rev_u8 = SFX(rev_u8),
  .rev_u16 = SFX(rev_u16),
  .rev_u32 = SFX(rev_u32),
  .rev_u64 = SFX(rev_u64),
  .arange_f32 = SFX(arange_f32),
  .arange_f64 = SFX(arange_f64),
  .arange_i32 = SFX(arange_i32),
  .arange_i64 = SFX(arange_i64),
  .iota_i32 = SFX(iota_i32),
  .iota_f32 = SFX(iota_f32),
  .iota_i64 = SFX(iota_i64),
  .mulacc_f32 = SFX(mulacc_f32),
  .mulacc_f64 = SFX(mulacc_f64),
  .extrow_f32 = SFX(extrow_f32),
  .extrow_f64 = SFX(extrow_f64),
  .argext_f32 = SFX(argext_f32),
  .argext_f64 = SFX(argext_f64),
  .argext_bf16 = SFX(argext_bf16),
  .red_i32 = SFX(red_i32),
  .red_i64 = SFX(red_i64),
  .rowacc_i32 = SFX(rowacc_i32),
  .rowacc_i64 = SFX(rowacc_i64),
  .prod_f32 = SFX(prod_f32),
  .prod_f64 = SFX(prod_f64),
  .f16_to_f32 = SFX(f16_to_f32),
  .f32_to_f16 = SFX(f32_to_f16),
  .add_at_f16 = SFX(add_at_f16),
  .add_at_bf16 = SFX(add_at_bf16),
  .bf16_to_f32 = SFX(bf16_to_f32),
  .f32_to_bf16 = SFX(f32_to_bf16),
  .bin_half = {
#define X(n) SFX(binh_f16_##n),
    [BXFX_H_F16] = { BXFX_BIN_LIST(X) },
#undef X
#define X(n) SFX(binh_bf16_##n),
    [BXFX_H_BF16] = { BXFX_BIN_LIST(X) },
#undef X
  },
  .cmp_half = {
#define X(n) SFX(cmph_f16_##n),
    [BXFX_H_F16] = { BXFX_CMP_LIST(X) },
#undef X
#define X(n) SFX(cmph_bf16_##n),
    [BXFX_H_BF16] = { BXFX_CMP_LIST(X) },
#undef X
  },
  .un_half = {
#define X(n, v_, s_) [BXFX_UN_##n] = SFX(unh_f16_##n),
#define Y(n, f_) [BXFX_UN_##n] = SFX(unh_f16_##n),
    [BXFX_H_F16] = { BXFX_UN_EL_LIST(X) BXFX_UN_TR_LIST(Y) },
#undef X
#undef Y
#define X(n, v_, s_) [BXFX_UN_##n] = SFX(unh_bf16_##n),
#define Y(n, f_) [BXFX_UN_##n] = SFX(unh_bf16_##n),
    [BXFX_H_BF16] = { BXFX_UN_EL_LIST(X) BXFX_UN_TR_LIST(Y) },
#undef X
#undef Y
  },
  .clamp_half = { [BXFX_H_F16] = SFX(clamph_f16), [BXFX_H_BF16] = SFX(clamph_bf16) },
  .clamp_f32 = SFX(clamp_f32),
  .powi_half = { [BXFX_H_F16] = SFX(powih_f16), [BXFX_H_BF16] = SFX(powih_bf16) },
  .f32_to_i32 = SFX(f32_to_i32),
  .i32_to_f32 = SFX(i32_to_f32),
  .f32_to_f64 = SFX(f32_to_f64),
  .f64_to_f32 = SFX(f64_to_f32),
  .i64_to_f64 = SFX(i64_to_f64),
  .i64_to_f32 = SFX(i64_to_f32),
  .f32_to_i64 = SFX(f32_to_i64),
  .f64_to_i64 = SFX(f64_to_i64),
  .f64_to_i32 = SFX(f64_to_i32),
  .i32_to_f64 = SFX(i32_to_f64),
  .i32_to_i64 = SFX(i32_to_i64),
  .i64_to_i32 = SFX(i64_to_i32),
};
