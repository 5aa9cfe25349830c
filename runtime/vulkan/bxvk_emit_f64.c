/* bxvk_emit_f64.c — the f64 math GLSL.std.450 lacks: its exp, log, sin,
 * cos, tanh and pow take 16- and 32-bit floats only.  Each function is
 * argument reduction plus a polynomial (Taylor or atanh series, with
 * enough terms that the truncation is below 2^-53), built from the
 * exact 64-bit instructions GLSL.std.450 does have (Ldexp, FrexpStruct,
 * RoundEven, Floor, FAbs).  Errors, checked against libm by
 * tests/vulkan/test_vulkan_run.c: a few ulps; sin and cos reduce by
 * pi/2 in three parts (Cody & Waite), accurate while |x| < 2^20 pi/2.
 *   exp   x = k ln2 + r, |r| <= ln2/2, Taylor to r^13, ldexp in two
 *         halves (subnormal results)
 *   log   x = 2^e m, m in [sqrt(1/2), sqrt(2)), s = (m-1)/(m+1),
 *         log m = 2s (1 + s^2/3 + ... + s^22/23)
 *   log1p log(u) x / (u - 1), u = 1 + x (Goldberg)
 *   tanh  expm1(2|x|) / (expm1(2|x|) + 2) with Kahan's expm1 from exp and
 *         log; 1 past 22
 *   erf   the Maclaurin series to x^67 below 2; 1 - erfc from Laplace's
 *         continued fraction (80 terms) up to 6; 1 past 6
 *   pow   exp(y log |x|) (bxvk_emit_ops.c adds C's special cases) */
#include <math.h>

#include "bxvk_emit.h"

#define T BXK_F64

static uint32_t D(struct bxvk_em *e) { return bxvk_reg(e, T); }
static uint32_t K(struct bxvk_em *e, double v) { return bxvk_const_f(e, T, v); }
static uint32_t add(struct bxvk_em *e, uint32_t a, uint32_t b) { return exact(e, bxvk_op2(e, SpvOpFAdd, D(e), a, b)); }
static uint32_t sub(struct bxvk_em *e, uint32_t a, uint32_t b) { return exact(e, bxvk_op2(e, SpvOpFSub, D(e), a, b)); }
static uint32_t mul(struct bxvk_em *e, uint32_t a, uint32_t b) { return exact(e, bxvk_op2(e, SpvOpFMul, D(e), a, b)); }
static uint32_t dvd(struct bxvk_em *e, uint32_t a, uint32_t b) { return exact(e, bxvk_op2(e, SpvOpFDiv, D(e), a, b)); }
static uint32_t sel(struct bxvk_em *e, uint32_t c, uint32_t a, uint32_t b) { return bxvk_sel(e, D(e), c, a, b); }
static uint32_t lt(struct bxvk_em *e, uint32_t a, uint32_t b) { return cmp(e, SpvOpFOrdLessThan, a, b); }
static uint32_t isnan_(struct bxvk_em *e, uint32_t a) { return bxvk_op1(e, SpvOpIsNan, bxvk_reg(e, BXK_BOOL), a); }
static uint32_t fabs_(struct bxvk_em *e, uint32_t a) { return bxvk_ext(e, D(e), GLSLstd450FAbs, a); }

/* c[0] + x (c[1] + x (... c[n-1])) */
static uint32_t horner(struct bxvk_em *e, uint32_t x, const double *c, int n) {
  uint32_t p = K(e, c[n - 1]);
  for (int j = n - 2; j >= 0; j--) p = add(e, mul(e, p, x), K(e, c[j]));
  return p;
}

static const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;

uint32_t bxvk_exp64(struct bxvk_em *e, uint32_t x) {
  uint32_t i32 = bxvk_reg(e, BXK_I32);
  uint32_t ok = lt(e, fabs_(e, x), K(e, 746));
  uint32_t xs = sel(e, ok, x, K(e, 0));
  uint32_t k = bxvk_ext(e, D(e), GLSLstd450RoundEven, mul(e, xs, K(e, 1.44269504088896338700e+00)));
  uint32_t r = sub(e, sub(e, xs, mul(e, k, K(e, ln2_hi))), mul(e, k, K(e, ln2_lo)));
  double c[14];
  c[0] = 1;
  for (int j = 1; j < 14; j++) c[j] = c[j - 1] / j;
  uint32_t p = horner(e, r, c, 14);
  uint32_t ki = bxvk_op1(e, SpvOpConvertFToS, i32, k);
  uint32_t k1 = bxvk_op2(e, SpvOpShiftRightArithmetic, i32, ki, bxvk_const_u32(e, 1));
  uint32_t k2 = bxvk_op2(e, SpvOpISub, i32, ki, k1);
  uint32_t res = bxvk_ext2(e, D(e), GLSLstd450Ldexp, bxvk_ext2(e, D(e), GLSLstd450Ldexp, p, k1), k2);
  res = sel(e, cmp(e, SpvOpFOrdGreaterThan, x, K(e, 7.09782712893383973096e+02)), K(e, INFINITY), res);
  res = sel(e, lt(e, x, K(e, -7.45133219101941108420e+02)), K(e, 0), res);
  return sel(e, isnan_(e, x), x, res);
}

uint32_t bxvk_log64(struct bxvk_em *e, uint32_t x) {
  uint32_t i32 = bxvk_reg(e, BXK_I32), z0 = K(e, 0);
  uint32_t sub_ = land(e, lt(e, x, K(e, 0x1p-1022)), cmp(e, SpvOpFOrdGreaterThan, x, z0));
  uint32_t xs = sel(e, sub_, mul(e, x, K(e, 0x1p54)), x);
  /* outside (0, inf) the reduction's input is 1: the result is selected */
  uint32_t fine = land(e, cmp(e, SpvOpFOrdGreaterThan, x, z0), lt(e, x, K(e, INFINITY)));
  xs = sel(e, fine, xs, K(e, 1));
  uint32_t st = bxvk_frexp_type(e, D(e));
  uint32_t fr = bxvk_ext(e, st, GLSLstd450FrexpStruct, xs), m = bxvk_id(e), ex = bxvk_id(e);
  bxvk_ins(&e->fn, SpvOpCompositeExtract, 4, D(e), m, fr, 0);
  bxvk_ins(&e->fn, SpvOpCompositeExtract, 4, i32, ex, fr, 1);
  ex = bxvk_op2(e, SpvOpISub, i32, ex, bxvk_sel(e, i32, sub_, bxvk_const_u32(e, 54), bxvk_const_u32(e, 0)));
  uint32_t small = lt(e, m, K(e, 0.70710678118654752440));
  m = sel(e, small, add(e, m, m), m);
  ex = bxvk_op2(e, SpvOpISub, i32, ex, bxvk_sel(e, i32, small, bxvk_const_u32(e, 1), bxvk_const_u32(e, 0)));
  uint32_t f = sub(e, m, K(e, 1));
  uint32_t s = dvd(e, f, add(e, K(e, 2), f)), z = mul(e, s, s);
  double c[12];
  for (int j = 0; j < 12; j++) c[j] = 1.0 / (2 * j + 1);
  uint32_t lm = mul(e, add(e, s, s), horner(e, z, c, 12));
  uint32_t ef = bxvk_op1(e, SpvOpConvertSToF, D(e), ex);
  uint32_t res = add(e, mul(e, ef, K(e, ln2_hi)), add(e, mul(e, ef, K(e, ln2_lo)), lm));
  res = sel(e, cmp(e, SpvOpFOrdEqual, x, z0), K(e, -INFINITY), res);
  res = sel(e, lt(e, x, z0), K(e, NAN), res);
  res = sel(e, cmp(e, SpvOpFOrdEqual, x, K(e, INFINITY)), x, res);
  return sel(e, isnan_(e, x), x, res);
}

static uint32_t log1p64(struct bxvk_em *e, uint32_t x) {
  uint32_t one = K(e, 1), u = add(e, one, x);
  uint32_t r = dvd(e, mul(e, bxvk_log64(e, u), x), sub(e, u, one));
  r = sel(e, cmp(e, SpvOpFOrdEqual, u, K(e, INFINITY)), u, r);
  return sel(e, cmp(e, SpvOpFOrdEqual, u, one), x, r);
}

/* expm1(y) = (u - 1) y / log u with u = exp y (Kahan); y where u == 1 */
static uint32_t expm1_64(struct bxvk_em *e, uint32_t y) {
  uint32_t one = K(e, 1), u = bxvk_exp64(e, y);
  uint32_t r = dvd(e, mul(e, sub(e, u, one), y), bxvk_log64(e, u));
  return sel(e, cmp(e, SpvOpFOrdEqual, u, one), y, r);
}

static uint32_t tanh64(struct bxvk_em *e, uint32_t x) {
  uint32_t ax = fabs_(e, x);
  uint32_t big = cmp(e, SpvOpFOrdGreaterThan, ax, K(e, 22));
  uint32_t em = expm1_64(e, add(e, ax, sel(e, big, K(e, 0), ax))); /* 2|x|, and 0 past 22 */
  uint32_t t = dvd(e, em, add(e, em, K(e, 2)));
  t = sel(e, big, K(e, 1), t);
  t = sel(e, lt(e, x, K(e, 0)), bxvk_op1(e, SpvOpFNegate, D(e), t), t);
  return sel(e, cmp(e, SpvOpFOrdEqual, ax, K(e, 0)), x, t); /* tanh(-0) = -0 */
}

static uint32_t sincos64(struct bxvk_em *e, uint32_t x, bool cosine) {
  uint32_t i32 = bxvk_reg(e, BXK_I32);
  uint32_t k = bxvk_ext(e, D(e), GLSLstd450RoundEven, mul(e, x, K(e, 6.36619772367581382433e-01)));
  uint32_t r = sub(e, x, mul(e, k, K(e, 1.57079632673412561417e+00)));
  r = sub(e, r, mul(e, k, K(e, 6.07710050630396597660e-11)));
  r = sub(e, r, mul(e, k, K(e, 2.02226624871116645580e-21)));
  /* the quadrant k mod 4, in floats (exact: k is an integer below 2^53) */
  uint32_t q = sub(e, k, mul(e, K(e, 4), bxvk_ext(e, D(e), GLSLstd450Floor, mul(e, k, K(e, 0.25)))));
  uint32_t fin = lt(e, fabs_(e, q), K(e, 4));
  uint32_t qi = bxvk_op1(e, SpvOpConvertFToS, i32, sel(e, fin, q, K(e, 0)));
  uint32_t z = mul(e, r, r);
  double cs[8], cc[9], f = 1;
  for (int j = 0; j < 8; j++) { /* sin: (-1)^(j+1) / (2j+3)! */
    f = 1;
    for (int m = 2; m <= 2 * j + 3; m++) f *= m;
    cs[j] = (j % 2 ? 1 : -1) / f;
  }
  for (int j = 0; j < 9; j++) { /* cos: (-1)^(j+1) / (2j+2)! */
    f = 1;
    for (int m = 2; m <= 2 * j + 2; m++) f *= m;
    cc[j] = (j % 2 ? 1 : -1) / f;
  }
  uint32_t sr = add(e, r, mul(e, mul(e, r, z), horner(e, z, cs, 8)));
  uint32_t cr = add(e, K(e, 1), mul(e, z, horner(e, z, cc, 9)));
  uint32_t nsr = bxvk_op1(e, SpvOpFNegate, D(e), sr), ncr = bxvk_op1(e, SpvOpFNegate, D(e), cr);
  uint32_t q1 = cmp(e, SpvOpIEqual, qi, bxvk_const_u32(e, 1)), q2 = cmp(e, SpvOpIEqual, qi, bxvk_const_u32(e, 2)),
           q3 = cmp(e, SpvOpIEqual, qi, bxvk_const_u32(e, 3));
  uint32_t res;
  if (cosine) res = sel(e, q1, nsr, sel(e, q2, ncr, sel(e, q3, sr, cr)));
  else res = sel(e, q1, cr, sel(e, q2, nsr, sel(e, q3, ncr, sr)));
  if (!cosine) res = sel(e, cmp(e, SpvOpFOrdEqual, x, K(e, 0)), x, res); /* sin(-0) = -0 */
  return sel(e, fin, res, K(e, NAN));                                       /* inf, NaN */
}

static uint32_t erf64(struct bxvk_em *e, uint32_t x) {
  uint32_t ax = fabs_(e, x), z = mul(e, x, x);
  double c[34], f = 1;
  for (int n = 0; n < 34; n++) { /* 2/sqrt(pi) (-1)^n / (n! (2n+1)) */
    if (n) f *= n;
    c[n] = 1.12837916709551257390 * (n % 2 ? -1 : 1) / (f * (2 * n + 1));
  }
  uint32_t series = mul(e, x, horner(e, z, c, 34));
  /* erfc(x) = e^{-x^2} / (sqrt(pi) (x + (1/2)/(x + (2/2)/(x + ...)))) */
  uint32_t ac = sel(e, lt(e, ax, K(e, 2)), K(e, 2), ax); /* keeps the fraction away from 0 */
  uint32_t t = ac;
  for (int n = 80; n >= 1; n--) t = add(e, ac, dvd(e, K(e, n * 0.5), t));
  uint32_t erfc = dvd(e, bxvk_exp64(e, bxvk_op1(e, SpvOpFNegate, D(e), mul(e, ac, ac))),
                      mul(e, K(e, 1.77245385090551602730), t));
  uint32_t big = sub(e, K(e, 1), erfc);
  big = sel(e, lt(e, ax, K(e, 6)), big, K(e, 1));
  big = sel(e, lt(e, x, K(e, 0)), bxvk_op1(e, SpvOpFNegate, D(e), big), big);
  uint32_t res = sel(e, lt(e, ax, K(e, 2)), series, big);
  return sel(e, isnan_(e, x), x, res);
}

uint32_t bxvk_math64(struct bxvk_em *e, const struct bxk_inst *i, unsigned op, uint32_t a) {
  switch (op) {
  case BXK_OP_EXP: return bxvk_exp64(e, a);
  case BXK_OP_LOG: return bxvk_log64(e, a);
  case BXK_OP_LOG1P: return log1p64(e, a);
  case BXK_OP_SIN: return sincos64(e, a, false);
  case BXK_OP_COS: return sincos64(e, a, true);
  case BXK_OP_TANH: return tanh64(e, a);
  case BXK_OP_ERF: return erf64(e, a);
  default:
    bxvk_fail(e, i, "%s on f64 has no SPIR-V lowering", bxk_opinfo[op < BXK_OP_COUNT ? op : 0].name);
    return 0;
  }
}
