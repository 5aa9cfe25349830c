/* flex_kern.c — picks the kernel table for this CPU and holds the scalar
 * half-precision conversions both variants fall back on. */
#include "flex_kern.h"

#include <math.h>
#include <string.h>

const struct bxfx_kernels *bxfx_kern_chosen;

const struct bxfx_kernels *bxfx_kern_choose(void) {
  /* A benign race: every thread computes the same answer. */
  const struct bxfx_kernels *k = &bxfx_kern_gen;
#if defined(__x86_64__)
  __builtin_cpu_init();
  /* Every AVX2 CPU also has F16C (clang 14 cannot query f16c by name). */
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    k = &bxfx_kern_avx2;
#endif
  __atomic_store_n(&bxfx_kern_chosen, k, __ATOMIC_RELEASE);
  return k;
}

float bxfx_h2f(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, bits;
  if (e == 0) { /* zero or subnormal: m * 2^-24, exact in f32 */
    float v = ldexpf((float)m, -24);
    return sign ? -v : v;
  }
  if (e == 31) bits = sign | 0x7f800000u | (m << 13);
  else bits = sign | ((e + 112u) << 23) | (m << 13);
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t bxfx_f2h(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x > 0x7f800000u) return sign | 0x7e00u;            /* NaN stays NaN */
  if (x >= 0x477ff000u) return sign | 0x7c00u;           /* rounds past 65504 */
  if (x >= 0x38800000u) {                                /* normal half */
    x += 0xfffu + ((x >> 13) & 1u);                      /* nearest even at bit 13 */
    return sign | (uint16_t)((x - 0x38000000u) >> 13);
  }
  if (x < 0x33000000u) return sign;                      /* below half the least subnormal */
  /* Subnormal: units of 2^-24; the scaling is exact and nearbyintf rounds
   * to nearest even (1024 is the least normal, encoded the same way). */
  float a;
  memcpy(&a, &x, sizeof a);
  return sign | (uint16_t)nearbyintf(a * 16777216.0f);
}
