/* rng.c — the shared counter-based random generator (internal.h "rng").
 *
 * Every backend draws through these functions, so a seed gives the same
 * tensor everywhere.  Normals are computed four at a time by one body
 * (rn_normal4) in plain double arithmetic: our own log and cos, no libm,
 * no FMA.  Two scalar libm calls per element made random_normal the
 * slowest creation op (0.27x libtorch); this body vectorizes, and since
 * +, -, *, / and sqrt are correctly rounded in any width, the AVX2 copy,
 * the baseline copy and bxr_rng_normal (the n = 1 case of the same body)
 * give the same bits.  This file is compiled with -ffp-contract=off (a
 * contracted a*b+c would round once where the other copy rounds twice);
 * the AVX2 copy is also built without the FMA target. */
#include <string.h>

#include "internal.h"

uint64_t bxr_rng_u64(uint64_t seed, uint64_t counter) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + counter + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double bxr_rng_uniform(uint64_t seed, uint64_t i) {
  return (double)(bxr_rng_u64(seed, i) >> 11) * (1.0 / 9007199254740992.0);
}

/* RN_W lanes a step: two AVX2 vectors side by side, so the long chains
 * (division, sqrt, the polynomials) of one overlap the other's. */
#define RN_W 8
typedef double rn_v4d __attribute__((vector_size(RN_W * 8)));
typedef uint64_t rn_v4q __attribute__((vector_size(RN_W * 8)));
typedef int64_t rn_v4l __attribute__((vector_size(RN_W * 8)));

/* 2^52's bits: OR-ing an integer below 2^52 into them and subtracting
 * 2^52 converts it exactly (AVX2 has no 64-bit int -> double). */
#define RN_MAGIC ((int64_t)0x4330000000000000ll)

/* Polynomial coefficients are exact fractions the compiler rounds once. */
#define RN_F(n) (1.0 / (n))

/* Four normals, for indices i .. i+3, into out[0..3].  Steps (each is
 * exact unless it says it rounds):
 *  - uniforms: the bxr_rng_u64 finalizer in lanes; top 53 bits to double
 *    by the 2^52 trick in two parts, times 2^-53 (as bxr_rng_uniform).
 *  - log(u1), u1 in [2^-53, 1]: u1 = 2^k m, m in [sqrt(1/2), sqrt(2)),
 *    f = m - 1 (Sterbenz), s = f / (2 + f) (rounds), so
 *    log(1+f) = 2 atanh(s) = f - s f + s R, R = 2 (z/3 + z^2/5 + ...),
 *    z = s^2 (11 terms: |s| <= 0.172, the next is below 2^-65 of the
 *    result), s f written as hfsq - s hfsq, hfsq = f^2 / 2, so the large
 *    term f is added last; k ln 2 in two parts (ln2_hi has 32 bits, so
 *    k ln2_hi is exact).
 *  - cos(t), t = 2 pi u2 rounded (the contract's argument, as libm got
 *    it): q = nearest integer to t 2/pi (0..4), r = t - q pi/2 with pi/2
 *    in three parts, P1 and P2 of 33 bits (q Pk exact, t - q P1 exact:
 *    both are multiples of t's ulp and the difference is below 1), the
 *    second step by an exact two-sum, leaving r = hi + lo to ~2^-117
 *    absolute (t is never closer than ~2^-56 to a multiple of pi/2).
 *    Taylor series on |hi| <= pi/4 (cos to z^9/18!, sin to x z^9/19!:
 *    the first terms left out are below 2^-63 of the result); cos adds
 *    1 - z/2 with its rounding error carried, sin adds x last; lo enters
 *    as cos(hi+lo) = cos hi - lo hi, sin(hi+lo) = sin hi + lo (1 - z/2).
 *    Quadrant q selects +-cos r or +-sin r.
 *  - sqrt(-2 log u1) cos(2 pi u2) as the contract writes it.
 * Measured against glibc's log and cos (tests/runtime/test_rng.c): within
 * 2 ulp over the inputs the generator produces. */
/* log(u) for u in [2^-53, 1] (normal, positive). */
static inline __attribute__((always_inline)) void rn_log4(const double *up, double *out) {
  rn_v4d u1;
  memcpy(&u1, up, sizeof u1);
  const rn_v4l bits = (rn_v4l)u1;
  const rn_v4l mant = bits & (int64_t)0xfffffffffffffll;
  const rn_v4l big = mant > (int64_t)0x6a09e667f3bcdll;   /* m > sqrt 2: halve it */
  const rn_v4d m = (rn_v4d)(mant | (((int64_t)0x3ff + big) << 52));
  const rn_v4l ke = (bits >> 52) - 1023 - big + 1024;   /* k + 1024 >= 0 */
  const rn_v4d kd = (rn_v4d)(ke | RN_MAGIC) - (0x1p52 + 1024.0);
  const rn_v4d f = m - 1.0;
  const rn_v4d s = f / (2.0 + f);
  const rn_v4d z = s * s, w = z * z;
  const rn_v4d te = 2 * RN_F(3) + w * (2 * RN_F(7) + w * (2 * RN_F(11) + w * (2 * RN_F(15) + w * (2 * RN_F(19) + w * (2 * RN_F(23))))));
  const rn_v4d to = 2 * RN_F(5) + w * (2 * RN_F(9) + w * (2 * RN_F(13) + w * (2 * RN_F(17) + w * (2 * RN_F(21)))));
  const rn_v4d R = z * (te + z * to);
  const rn_v4d hfsq = 0.5 * f * f;
  const double ln2_hi = 0x1.62e42fee00000p-1, ln2_lo = 0x1.a39ef35793c76p-33;
  const rn_v4d L = kd * ln2_hi + (f - (hfsq - (s * (hfsq + R) + kd * ln2_lo)));

  memcpy(out, &L, sizeof L);
}

/* cos(t) for t in [0, 2 pi). */
static inline __attribute__((always_inline)) void rn_cos4(const double *tp, double *out) {
  rn_v4d t;
  memcpy(&t, tp, sizeof t);
  rn_v4d qd = t * 0x1.45f306dc9c883p-1 + 0x1.8p52;
  const rn_v4l q = (rn_v4l)qd & 7;
  qd -= 0x1.8p52;
  const rn_v4d r1 = t - qd * 0x1.921fb54400000p+0;
  const rn_v4d nw = -(qd * 0x1.0b4611a600000p-34);
  const rn_v4d a = r1 + nw, bb = a - r1;
  const rn_v4d e1 = (r1 - (a - bb)) + (nw - bb);
  const rn_v4d lo0 = e1 - qd * 0x1.3198a2e037073p-69;
  const rn_v4d x = a + lo0, xl = lo0 - (x - a);
  const rn_v4d x2 = x * x, x4 = x2 * x2;
  /* cos x = 1 - x2/2 + x4 (1/4! - x2/6! + ...) */
  const rn_v4d ce = RN_F(24.0) + x4 * (RN_F(40320.0) + x4 * (RN_F(479001600.0) + x4 * RN_F(20922789888000.0)));
  const rn_v4d co = -RN_F(720.0) + x4 * (-RN_F(3628800.0) + x4 * (-RN_F(87178291200.0) + x4 * -RN_F(6402373705728000.0)));
  const rn_v4d hz = 0.5 * x2, cw = 1.0 - hz;
  const rn_v4d cv = cw + (((1.0 - cw) - hz) + (x4 * (ce + x2 * co) - x * xl));
  /* sin x = x + x^3 (-1/3! + x2/5! - ...) */
  const rn_v4d se = -RN_F(6.0) + x4 * (-RN_F(5040.0) + x4 * (-RN_F(39916800.0) + x4 * (-RN_F(1307674368000.0) + x4 * -RN_F(121645100408832000.0))));
  const rn_v4d so = RN_F(120.0) + x4 * (RN_F(362880.0) + x4 * (RN_F(6227020800.0) + x4 * RN_F(355687428096000.0)));
  const rn_v4d sv = x + (x2 * x * (se + x2 * so) + (xl - hz * xl));
  const rn_v4l odd = -(q & 1);
  rn_v4l cs = ((rn_v4l)sv & odd) | ((rn_v4l)cv & ~odd);
  cs ^= (rn_v4l)((rn_v4q)((q + 1) & 2) << 62);   /* quadrants 1 and 2 negate */

  memcpy(out, &cs, sizeof cs);
}

static inline __attribute__((always_inline)) void rn_normal4(uint64_t seed, uint64_t i, double *out) {
  const rn_v4q lane = { 0, 2, 4, 6, 8, 10, 12, 14 };
  rn_v4q c = (2 * i + lane) + (uint64_t)(seed * 0x9E3779B97F4A7C15ull + 1);
  rn_v4q h[2] = { c, c + 1 };
  rn_v4d u[2];
  for (int k = 0; k < 2; k++) {
    rn_v4q z = h[k];
    z = (z ^ (z >> 30)) * (uint64_t)0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * (uint64_t)0x94D049BB133111EBull;
    z = (z ^ (z >> 31)) >> 11;
    rn_v4d hi = (rn_v4d)((rn_v4l)(z >> 1) | RN_MAGIC) - 0x1p52;
    rn_v4d lo = (rn_v4d)((rn_v4l)(z & 1) | RN_MAGIC) - 0x1p52;
    u[k] = (hi + hi + lo) * 0x1p-53;
  }
  const rn_v4d u1 = 1.0 - u[0];
  const rn_v4d t = 0x1.921fb54442d18p+2 * u[1];   /* 2 pi u2, 6.283185307179586476925 */
  rn_v4d L, cs;
  rn_log4((const double *)&u1, (double *)&L);
  rn_cos4((const double *)&t, (double *)&cs);
  rn_v4d g = -2.0 * L;
  for (int k = 0; k < RN_W; k++) g[k] = __builtin_sqrt(g[k]);
  const rn_v4d res = g * cs;
  memcpy(out, &res, sizeof res);
}

/* n normals from index i0; a tail shorter than 4 computes a whole vector
 * into a buffer (the lanes past n are not stored). */
#define RN_BLOCK_BODY                                                   \
  size_t j = 0;                                                         \
  for (; j + RN_W <= n; j += RN_W) rn_normal4(seed, i0 + j, out + j);   \
  if (j < n) {                                                          \
    double t4[RN_W];                                                    \
    rn_normal4(seed, i0 + j, t4);                                       \
    memcpy(out + j, t4, (n - j) * sizeof *out);                         \
  }

static void rn_block_gen(uint64_t seed, uint64_t i0, size_t n, double *out) { RN_BLOCK_BODY }

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* AVX2 for the 4-lane integer and double ops; no "fma" in the target, so
 * no product can be contracted into an add even if the flags allowed it. */
__attribute__((target("avx2"))) static void rn_block_avx2(uint64_t seed, uint64_t i0, size_t n,
                                                          double *out) {
  RN_BLOCK_BODY
}
/* AVX-512: one register per 8 lanes and a 64-bit multiply (the
 * finalizer's), where AVX2 takes two registers and three 32-bit
 * multiplies a lane.  The file's -ffp-contract=off keeps its FMA unused. */
__attribute__((target("avx512f,avx512dq,avx512vl"))) static void rn_block_avx512(uint64_t seed, uint64_t i0,
                                                                                size_t n, double *out) {
  RN_BLOCK_BODY
}
#endif

bool bxr_rng_normal_block_isa(int isa, uint64_t seed, uint64_t i0, size_t n, double *out) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (isa == 2) {
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512dq") ||
        !__builtin_cpu_supports("avx512vl"))
      return false;
    rn_block_avx512(seed, i0, n, out);
    return true;
  }
  if (isa == 1) {
    if (!__builtin_cpu_supports("avx2")) return false;
    rn_block_avx2(seed, i0, n, out);
    return true;
  }
#endif
  if (isa != 0) return false;
  rn_block_gen(seed, i0, n, out);
  return true;
}

void bxr_rng_normal_block(uint64_t seed, uint64_t i0, size_t n, double *out) {
  if (!bxr_rng_normal_block_isa(2, seed, i0, n, out) && !bxr_rng_normal_block_isa(1, seed, i0, n, out))
    bxr_rng_normal_block_isa(0, seed, i0, n, out);
}

double bxr_rng_normal(uint64_t seed, uint64_t i) {
  double v[RN_W];
  rn_normal4(seed, i, v);
  return v[0];
}

void bxr_rng_logcos(const double *u, const double *t, double *lg, double *cs, size_t n) {
  double a[RN_W] = { 0 }, b[RN_W] = { 0 }, la[RN_W], cb[RN_W];
  for (size_t j = 0; j < n; j += RN_W) {
    size_t m = n - j < RN_W ? n - j : RN_W;
    for (size_t k = 0; k < RN_W; k++) a[k] = k < m ? u[j + k] : 1, b[k] = k < m ? t[j + k] : 0;
    rn_log4(a, la);
    rn_cos4(b, cb);
    memcpy(lg + j, la, m * sizeof *lg);
    memcpy(cs + j, cb, m * sizeof *cs);
  }
}
