/* flex_kern_cast.h — the cast kernels without an f32 side (and f32 <->
 * i64), part of flex_kern_body.h (compiled once per ISA variant).
 *
 * Each is bxk_scalar.h's rule lane by lane, bit for bit: float -> int
 * truncates, NaN gives 0 and out-of-range values saturate (bxk_f64_to_i32,
 * bxk_f64_to_i64); int -> float rounds once, to nearest even; int -> int
 * wraps.  Where one vector instruction cannot meet the rule for every
 * value (AVX2 has no 64-bit int <-> float conversions), the common range
 * takes the vector form and a vector holding any lane outside it takes the
 * scalar rule lane by lane: i64 values past 2^53 for i64 -> f32, floats
 * outside [-2^31, 2^31) for f32/f64 -> i64. */

typedef int64_t v8l __attribute__((vector_size(64)));
typedef uint64_t v4ul __attribute__((vector_size(32)));

/* True when any bit of the 32-byte mask m is set. */
#ifdef BXFX_AVX
#define BXFX_ANY(m) (!_mm256_testz_si256((__m256i)(m), (__m256i)(m)))
#else
#define BXFX_ANY(m) ({ v4l m_ = (v4l)(m); (m_[0] | m_[1] | m_[2] | m_[3]) != 0; })
#endif

/* x (4 lanes of i64) as doubles, correctly rounded: the high half times
 * 2^32 and the unsigned low half are both exact doubles (the low half by
 * its bits under 2^52's exponent), so their sum rounds once. */
#define BXFX_I64_F64(x)                                                                     \
  ({                                                                                        \
    const v4l x_ = (x);                                                                     \
    v4d h_ = __builtin_convertvector(__builtin_convertvector(x_ >> 32, v4i), v4d) * 0x1p32; \
    v4d l_ = (v4d)((x_ & 0xffffffffLL) | 0x4330000000000000LL) - 0x1p52;                    \
    h_ + l_;                                                                                \
  })

static void SFX(i64_to_f64)(const int64_t *a, double *o, size_t n) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    v4l x;
    memcpy(&x, a + i, sizeof x);
    v4d d = BXFX_I64_F64(x);
    memcpy(o + i, &d, sizeof d);
  }
  for (; i < n; i++) o[i] = (double)a[i];
}

/* (float)v rounds once from the integer.  Through the double that is the
 * same while |v| <= 2^53 (the double is v itself); beyond, rounding twice
 * could differ, so such vectors take (float)v per lane. */
static void SFX(i64_to_f32)(const int64_t *a, float *o, size_t n) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    v4l x;
    memcpy(&x, a + i, sizeof x);
    v4l far = (v4l)((v4ul)x + (1ull << 53) > (1ull << 54));
    if (__builtin_expect(BXFX_ANY(far), 0)) {
      for (size_t j = i; j < i + 4; j++) o[j] = (float)a[j];
      continue;
    }
    v4f f = __builtin_convertvector(BXFX_I64_F64(x), v4f);
    memcpy(o + i, &f, sizeof f);
  }
  for (; i < n; i++) o[i] = (float)a[i];
}

static void SFX(f32_to_i64)(const float *a, int64_t *o, size_t n) {
  size_t i = 0;
  const v8f lo = SFX(splat)(-0x1p31f), hi = SFX(splat)(0x1p31f);
  for (; i + 8 <= n; i += 8) {
    v8f x = SFX(ld)(a + i);
    v8i out = ~((x >= lo) & (x < hi));   /* NaN is out too */
    if (__builtin_expect(BXFX_ANY(out), 0)) {
      for (size_t j = i; j < i + 8; j++) o[j] = bxk_f64_to_i64(a[j]);
      continue;
    }
    v8l r = __builtin_convertvector(__builtin_convertvector(x, v8i), v8l);
    memcpy(o + i, &r, sizeof r);
  }
  for (; i < n; i++) o[i] = bxk_f64_to_i64(a[i]);
}

static void SFX(f64_to_i64)(const double *a, int64_t *o, size_t n) {
  size_t i = 0;
  const v4d lo = { -0x1p31, -0x1p31, -0x1p31, -0x1p31 }, hi = { 0x1p31, 0x1p31, 0x1p31, 0x1p31 };
  for (; i + 4 <= n; i += 4) {
    v4d x = SFX(ld4d)(a + i);
    v4l out = ~((x >= lo) & (x < hi));
    if (__builtin_expect(BXFX_ANY(out), 0)) {
      for (size_t j = i; j < i + 4; j++) o[j] = bxk_f64_to_i64(a[j]);
      continue;
    }
    v4l r = __builtin_convertvector(__builtin_convertvector(x, v4i), v4l);
    memcpy(o + i, &r, sizeof r);
  }
  for (; i < n; i++) o[i] = bxk_f64_to_i64(a[i]);
}

/* f64 -> i32 clamps in f64 first: both ends (-2^31, 2^31 - 1) are doubles
 * that truncate to the saturated values, and in-range values are kept, so
 * the truncating conversion then meets bxk_f64_to_i32 everywhere. */
static void SFX(f64_to_i32)(const double *a, int32_t *o, size_t n) {
  size_t i = 0;
  const v4d lo = { -0x1p31, -0x1p31, -0x1p31, -0x1p31 };
  const v4d hi = { 2147483647.0, 2147483647.0, 2147483647.0, 2147483647.0 }, zero = { 0, 0, 0, 0 };
  for (; i + 4 <= n; i += 4) {
    v4d x = SFX(ld4d)(a + i);
    x = (v4d)(((v4l)x & ~(v4l)(x != x)) | ((v4l)zero & (v4l)(x != x)));
    x = (v4d)(((v4l)x & ~(v4l)(x < lo)) | ((v4l)lo & (v4l)(x < lo)));
    x = (v4d)(((v4l)x & ~(v4l)(x > hi)) | ((v4l)hi & (v4l)(x > hi)));
    v4i r = __builtin_convertvector(x, v4i);
    memcpy(o + i, &r, sizeof r);
  }
  for (; i < n; i++) o[i] = bxk_f64_to_i32(a[i]);
}

static void SFX(i32_to_f64)(const int32_t *a, double *o, size_t n) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    v4i x;
    memcpy(&x, a + i, sizeof x);
    v4d d = __builtin_convertvector(x, v4d);
    memcpy(o + i, &d, sizeof d);
  }
  for (; i < n; i++) o[i] = a[i];
}

static void SFX(i32_to_i64)(const int32_t *a, int64_t *o, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    v8i x;
    memcpy(&x, a + i, sizeof x);
    v8l r = __builtin_convertvector(x, v8l);
    memcpy(o + i, &r, sizeof r);
  }
  for (; i < n; i++) o[i] = a[i];
}

/* Wraps: the low 32 bits. */
static void SFX(i64_to_i32)(const int64_t *a, int32_t *o, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    v8l x;
    memcpy(&x, a + i, sizeof x);
    v8i r = __builtin_convertvector(x, v8i);
    memcpy(o + i, &r, sizeof r);
  }
  for (; i < n; i++) o[i] = (int32_t)(uint32_t)(uint64_t)a[i];
}
