/* dtype.c — the dtype table's functions, f16/bf16 conversion (round to
 * nearest even, the rules of bxk_scalar.h), element load/store with
 * bext_cast's semantics (the random generator is rng.c). */
#include <math.h>
#include <string.h>

#include "bxk_scalar.h"
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

/* ------------------------------------------------- f16/bf16, float -> int */
/* The rules live in bxk_scalar.h (one home for the ops' scalar semantics,
 * shared with the kernel IR and Flex); these are the runtime's names for
 * them.  test_dtypes.c checks them against hand-computed values. */

float bxr_f16_to_f32(uint16_t h) { return bxk_f16_to_f32(h); }
uint16_t bxr_f32_to_f16(float f) { return bxk_f32_to_f16(f); }
float bxr_bf16_to_f32(uint16_t h) { return bxk_bf16_to_f32(h); }
uint16_t bxr_f32_to_bf16(float f) { return bxk_f32_to_bf16(f); }

/* ------------------------------------------------------------ load/store */

int64_t bxr_f64_to_i64_sat(double v) { return bxk_f64_to_i64(v); }

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

void bxr_store_f64(void *p, bext_dtype dt, int64_t i, double v) {
  switch (dt) {
  case BEXT_F32: ((float *)p)[i] = (float)v; break;
  case BEXT_F64: ((double *)p)[i] = v; break;
  case BEXT_F16: ((uint16_t *)p)[i] = bxr_f32_to_f16((float)v); break;
  case BEXT_BF16: ((uint16_t *)p)[i] = bxr_f32_to_bf16((float)v); break;
  case BEXT_I32: ((int32_t *)p)[i] = bxk_f64_to_i32(v); break;
  case BEXT_I64: ((int64_t *)p)[i] = bxr_f64_to_i64_sat(v); break;
  case BEXT_U8: ((uint8_t *)p)[i] = bxk_f64_to_u8(v); break;
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
