/* flex_kern_cast.h — the cast kernels without an f32 side (and f32 <->
 * i64), part of flex_kern_body.h (compiled once per ISA variant).
 *
 * Each is bxk_scalar.h's rule lane by lane, bit for bit: float -> int
 * truncates, NaN gives 0 and out-of-range values saturate (bxk_f64_to_i32,
 * bxk_f64_to_i64); int -> float rounds once, to nearest even; int -> int
 * wraps.  Where one vector instruction cannot meet the rule for every
 * value (AVX2 has no 64-bit int <-> float conversions), the common range
 * takes the vector form and a vector holding any lane outside it takes the
 * scalar rule lane by lane: i64 values of 2^51 and more for i64 -> f64/f32,
 * floats outside [-2^31, 2^31) for f32/f64 -> i64. */

typedef uint64_t v4ul __attribute__((vector_size(32)));

/* True when any bit of the 32-byte mask m is set. */
#ifdef BXFX_AVX
#define BXFX_ANY(m) (!_mm256_testz_si256((__m256i)(m), (__m256i)(m)))
#else
#define BXFX_ANY(m) ({ v4l m_ = (v4l)(m); (m_[0] | m_[1] | m_[2] | m_[3]) != 0; })
#endif
/* 8 i32 lanes sign-extended to i64 at o, as two 4-lane halves: a 64-byte
 * vector type would go through the stack under AVX2. */
#define BXFX_ST_I32_AS_I64(o, r)                                                   \
  do {                                                                              \
    const v8i r_ = (r);                                                             \
    v4l lo_ = __builtin_convertvector(__builtin_shufflevector(r_, r_, 0, 1, 2, 3), v4l); \
    v4l hi_ = __builtin_convertvector(__builtin_shufflevector(r_, r_, 4, 5, 6, 7), v4l); \
    memcpy((o), &lo_, sizeof lo_);                                                  \
    memcpy((o) + 4, &hi_, sizeof hi_);                                              \
  } while (0)

/* i64 -> f64 by the bits: for |x| < 2^51, t = x + 2^51 lies in [0, 2^52),
 * so t under 2^52's exponent is the double 2^52 + 2^51 + x, and
 * subtracting 2^52 + 2^51 leaves x exactly (two integer ops and one
 * subtraction a vector, where a scalar cvtsi2sd takes one per element).
 * `far` flags the lanes outside that range. */
#define BXFX_I64_F64(x, far)                                                       \
  ({                                                                               \
    v4ul t_ = (v4ul)(x) + (1ull << 51);                                            \
    far = (v4l)(t_ >> 52);                                                         \
    (v4d)(t_ | 0x4330000000000000ull) - 0x1.8p52;                                  \
  })

/* Exact below 2^51; vectors with a larger lane convert per lane. */
static void SFX(i64_to_f64)(const int64_t *a, double *o, size_t n) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    v4l x, far;
    memcpy(&x, a + i, sizeof x);
    v4d d = BXFX_I64_F64(x, far);
    if (__builtin_expect(BXFX_ANY(far), 0)) {
      for (size_t j = i; j < i + 4; j++) o[j] = (double)a[j];
      continue;
    }
    memcpy(o + i, &d, sizeof d);
  }
  for (; i < n; i++) o[i] = (double)a[i];
}

/* (float)v rounds once from the integer.  Through the double that is the
 * same while the double is v itself (below 2^51 here); beyond, rounding
 * twice could differ, so such vectors take (float)v per lane. */
static void SFX(i64_to_f32)(const int64_t *a, float *o, size_t n) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    v4l x, far;
    memcpy(&x, a + i, sizeof x);
    v4d d = BXFX_I64_F64(x, far);
    if (__builtin_expect(BXFX_ANY(far), 0)) {
      for (size_t j = i; j < i + 4; j++) o[j] = (float)a[j];
      continue;
    }
    v4f f = __builtin_convertvector(d, v4f);
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
    BXFX_ST_I32_AS_I64(o + i, __builtin_convertvector(x, v8i));
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
    BXFX_ST_I32_AS_I64(o + i, x);
  }
  for (; i < n; i++) o[i] = a[i];
}

/* Wraps: the low 32 bits. */
static void SFX(i64_to_i32)(const int64_t *a, int32_t *o, size_t n) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    v4l x;
    memcpy(&x, a + i, sizeof x);
    v4i r = __builtin_convertvector(x, v4i);
    memcpy(o + i, &r, sizeof r);
  }
  for (; i < n; i++) o[i] = (int32_t)(uint32_t)(uint64_t)a[i];
}
