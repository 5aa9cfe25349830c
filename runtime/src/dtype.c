/* dtype.c — the dtype table's functions, f16/bf16 conversion (round to
 * nearest even), element load/store with bext_cast's semantics, and the
 * shared counter-based random generator. */
#include <math.h>
#include <string.h>

#include "internal.h"

static const struct {
  const char *name;
  size_t size;
  bext_kind kind;
} dtype_info[BEXT_DTYPE_COUNT] = {
#define BEXT_X_(E, n, t, s, k) [BEXT_##E] = {#n, s, k},
    BEXT_DTYPES(BEXT_X_)
#undef BEXT_X_
};
_Static_assert(sizeof dtype_info / sizeof dtype_info[0] == BEXT_DTYPE_COUNT, "one row per dtype");

bool bext_dtype_valid(bext_dtype dt) { return (unsigned)dt < BEXT_DTYPE_COUNT; }
const char *bext_dtype_name(bext_dtype dt) { return bext_dtype_valid(dt) ? dtype_info[dt].name : "?"; }
size_t bext_dtype_size(bext_dtype dt) { return bext_dtype_valid(dt) ? dtype_info[dt].size : 0; }
bext_kind bext_dtype_kind(bext_dtype dt) {
  return bext_dtype_valid(dt) ? dtype_info[dt].kind : BEXT_KIND_FLOAT;
}

bool bext_dtype_from_name(const char *name, bext_dtype *out) {
  if (!name || !out) return bxr_error("bext_dtype_from_name: NULL argument");
  for (int i = 0; i < BEXT_DTYPE_COUNT; i++)
    if (strcmp(name, dtype_info[i].name) == 0) {
      *out = (bext_dtype)i;
      return true;
    }
  return bxr_error("bext_dtype_from_name: unknown dtype '%s' (expected one of f32 f64 f16 bf16 "
                   "i32 i64 u8 bool)", name);
}

/* ---------------------------------------------------------------- f16/bf16 */

static uint32_t f2u(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static float u2f(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

float bxr_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) {
    float r = (float)m * (1.0f / 16777216.0f); /* m * 2^-24, exact */
    return sign ? -r : r;
  }
  if (e == 31) return u2f(sign | 0x7f800000u | (m << 13));
  return u2f(sign | ((e - 15 + 127) << 23) | (m << 13));
}

uint16_t bxr_f32_to_f16(float f) {
  uint32_t x = f2u(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) { /* inf or NaN (NaN stays quiet NaN) */
    if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    return (uint16_t)(sign | 0x7c00u);
  }
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520 rounds to inf */
  if (ax < 0x38800000u) {                                  /* below 2^-14: subnormal */
    /* scale by 2^24 (exact) and round to an integer, ties to even */
    uint32_t m = (uint32_t)nearbyintf(u2f(ax) * 16777216.0f);
    return (uint16_t)(sign | m); /* m == 0x400 encodes the smallest normal */
  }
  uint32_t h = (((ax >> 23) - 127 + 15) << 10) | ((ax & 0x7fffffu) >> 13);
  uint32_t rem = ax & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++; /* carry may reach the exponent: right */
  return (uint16_t)(sign | h);
}

float bxr_bf16_to_f32(uint16_t h) { return u2f((uint32_t)h << 16); }

uint16_t bxr_f32_to_bf16(float f) {
  uint32_t x = f2u(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN */
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

/* ------------------------------------------------------------ load/store */

int64_t bxr_f64_to_i64_sat(double v) {
  if (v != v) return 0;
  v = trunc(v);
  if (v >= 9223372036854775807.0) return INT64_MAX; /* 2^63 and above */
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)v;
}

double bxr_load_f64(const void *p, bext_dtype dt, int64_t i) {
  switch (dt) {
  case BEXT_F32: return ((const float *)p)[i];
  case BEXT_F64: return ((const double *)p)[i];
  case BEXT_F16: return bxr_f16_to_f32(((const uint16_t *)p)[i]);
  case BEXT_BF16: return bxr_bf16_to_f32(((const uint16_t *)p)[i]);
  case BEXT_I32: return ((const int32_t *)p)[i];
  case BEXT_I64: return (double)((const int64_t *)p)[i];
  case BEXT_U8: return ((const uint8_t *)p)[i];
  case BEXT_BOOL: return ((const uint8_t *)p)[i] != 0;
  default: BXR_ASSERT(!"bad dtype");
  }
}

int64_t bxr_load_i64(const void *p, bext_dtype dt, int64_t i) {
  switch (dt) {
  case BEXT_I32: return ((const int32_t *)p)[i];
  case BEXT_I64: return ((const int64_t *)p)[i];
  case BEXT_U8: return ((const uint8_t *)p)[i];
  case BEXT_BOOL: return ((const uint8_t *)p)[i] != 0;
  default: return bxr_f64_to_i64_sat(bxr_load_f64(p, dt, i));
  }
}

static int64_t clamp_i64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

void bxr_store_f64(void *p, bext_dtype dt, int64_t i, double v) {
  switch (dt) {
  case BEXT_F32: ((float *)p)[i] = (float)v; break;
  case BEXT_F64: ((double *)p)[i] = v; break;
  case BEXT_F16: ((uint16_t *)p)[i] = bxr_f32_to_f16((float)v); break;
  case BEXT_BF16: ((uint16_t *)p)[i] = bxr_f32_to_bf16((float)v); break;
  case BEXT_I32: ((int32_t *)p)[i] = (int32_t)clamp_i64(bxr_f64_to_i64_sat(v), INT32_MIN, INT32_MAX); break;
  case BEXT_I64: ((int64_t *)p)[i] = bxr_f64_to_i64_sat(v); break;
  case BEXT_U8: ((uint8_t *)p)[i] = (uint8_t)clamp_i64(bxr_f64_to_i64_sat(v), 0, 255); break;
  case BEXT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
  default: BXR_ASSERT(!"bad dtype");
  }
}

void bxr_store_i64(void *p, bext_dtype dt, int64_t i, int64_t v) {
  switch (dt) {
  case BEXT_F32: ((float *)p)[i] = (float)v; break;
  case BEXT_F64: ((double *)p)[i] = (double)v; break;
  case BEXT_F16: ((uint16_t *)p)[i] = bxr_f32_to_f16((float)v); break;
  case BEXT_BF16: ((uint16_t *)p)[i] = bxr_f32_to_bf16((float)v); break;
  case BEXT_I32: ((int32_t *)p)[i] = (int32_t)(uint32_t)(uint64_t)v; break;
  case BEXT_I64: ((int64_t *)p)[i] = v; break;
  case BEXT_U8: ((uint8_t *)p)[i] = (uint8_t)(uint64_t)v; break;
  case BEXT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
  default: BXR_ASSERT(!"bad dtype");
  }
}

void bxr_convert(void *dst, bext_dtype ddt, const void *src, bext_dtype sdt, int64_t n) {
  if (ddt == sdt) {
    memcpy(dst, src, (size_t)n * bext_dtype_size(ddt));
    return;
  }
  if (bext_dtype_kind(sdt) == BEXT_KIND_FLOAT) {
    for (int64_t i = 0; i < n; i++) bxr_store_f64(dst, ddt, i, bxr_load_f64(src, sdt, i));
  } else {
    for (int64_t i = 0; i < n; i++) bxr_store_i64(dst, ddt, i, bxr_load_i64(src, sdt, i));
  }
}

/* ------------------------------------------------------------------- rng */

uint64_t bxr_rng_u64(uint64_t seed, uint64_t counter) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + counter + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double bxr_rng_uniform(uint64_t seed, uint64_t i) {
  return (double)(bxr_rng_u64(seed, i) >> 11) * (1.0 / 9007199254740992.0);
}

double bxr_rng_normal(uint64_t seed, uint64_t i) {
  double u1 = 1.0 - bxr_rng_uniform(seed, 2 * i);
  double u2 = bxr_rng_uniform(seed, 2 * i + 1);
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925 * u2);
}
