/* bxvk_emit_ops.c — the IR's arithmetic, math and casts in SPIR-V, with
 * exactly bxk_scalar.h's semantics (the LLVM lowering's table in
 * docs/kernels.md, spelled for SPIR-V):
 *   - integer div/rem: the divisor is replaced by 1 where it is 0 or -1
 *     (OpSDiv/OpSRem are undefined there) and the result selected: x/0 and
 *     x%0 are 0, x/-1 the wrapping negation, x%-1 is 0; rem is floored by
 *     the header's fix-up (add the divisor when the signs differ);
 *   - float rem: C's fmod, exactly (bxvk_fmod: OpFRem is x - y*trunc(x/y)
 *     in Vulkan's precision rules, and lavapipe's is inexact and loses
 *     -0), then the same fix-up;
 *   - max/min: (a OP b || a != a) ? a : b, so NaN wins;
 *   - float -> int: NaN -> 0, saturation at the bounds (the operand is
 *     replaced by 0 before OpConvertFTo[SU], which is undefined out of
 *     range), otherwise truncation;
 *   - round is RoundEven; shift amounts are masked to the width;
 *   - f16 values are f32 registers rounded to f16 (FConvert there and
 *     back) after every op;
 *   - float add/sub/mul/div carry NoContraction, so no driver fuses them
 *     into an fma the CPU lowering does not make.
 * GLSL.std.450 has exp, log, sin, cos, tanh and pow for 16- and 32-bit
 * floats only: on f64 they (and erf, log1p) are bxvk_emit_f64.c's. */
#include <math.h>
#include <stdint.h>

#include "bxvk_emit.h"

uint32_t bxvk_round16(struct bxvk_em *e, uint32_t x) {
  uint32_t h = bxvk_op1(e, SpvOpFConvert, bxvk_f16_type(e), x);
  return bxvk_op1(e, SpvOpFConvert, bxvk_reg(e, BXK_F32), h);
}

static unsigned bits(unsigned t) { return t == BXK_U8 ? 8 : bxk_type_bits(t); }

static uint32_t ci(struct bxvk_em *e, unsigned t, int64_t v) { return bxvk_const(e, t, (union bxk_lit){.i = v}); }

/* ------------------------------------------------------------ integers */

static uint32_t int_divrem(struct bxvk_em *e, bool rem, unsigned t, uint32_t a, uint32_t b) {
  uint32_t ty = bxvk_reg(e, t), zero = ci(e, t, 0), one = ci(e, t, 1);
  uint32_t bz = cmp(e, SpvOpIEqual, b, zero);
  if (!bxk_type_is_signed(t)) {
    uint32_t sb = bxvk_sel(e, ty, bz, one, b);
    uint32_t q = bxvk_op2(e, rem ? SpvOpUMod : SpvOpUDiv, ty, a, sb);
    return bxvk_sel(e, ty, bz, zero, q);
  }
  uint32_t bm = cmp(e, SpvOpIEqual, b, ci(e, t, -1)), bad = lor(e, bz, bm);
  uint32_t sb = bxvk_sel(e, ty, bad, one, b);
  if (!rem) {
    uint32_t q = bxvk_op2(e, SpvOpSDiv, ty, a, sb);
    q = bxvk_sel(e, ty, bm, bxvk_op1(e, SpvOpSNegate, ty, a), q);
    return bxvk_sel(e, ty, bz, zero, q);
  }
  uint32_t r = bxvk_op2(e, SpvOpSRem, ty, a, sb);  /* the dividend's sign, as C's % */
  uint32_t fix = land(e, cmp(e, SpvOpINotEqual, r, zero),
                      cmp(e, SpvOpLogicalNotEqual, cmp(e, SpvOpSLessThan, r, zero), cmp(e, SpvOpSLessThan, sb, zero)));
  r = bxvk_sel(e, ty, fix, bxvk_op2(e, SpvOpIAdd, ty, r, sb), r);
  return bxvk_sel(e, ty, bad, zero, r);
}

/* ---------------------------------------------------------------- pow */

/* C's pow from |x|^y (GLSL's Pow for f32, defined for x > 0 only;
 * exp(y log |x|) for f64): the sign for negative bases with odd integer
 * exponents, NaN for other negative finite bases, the zero-base and unit
 * cases of C99 F.10.4.4, NaN operands. */
static uint32_t fpow(struct bxvk_em *e, unsigned T, uint32_t a, uint32_t b) {
  uint32_t ty = bxvk_reg(e, T), z = bxvk_const_f(e, T, 0), one = bxvk_const_f(e, T, 1);
  uint32_t inf = bxvk_const_f(e, T, INFINITY);
  uint32_t ax = bxvk_ext(e, ty, GLSLstd450FAbs, a);
  uint32_t r;
  if (T == BXK_F64) {
    r = bxvk_exp64(e, exact(e, bxvk_op2(e, SpvOpFMul, ty, b, bxvk_log64(e, ax))));
  } else {
    r = bxvk_ext2(e, ty, GLSLstd450Pow, ax, b);
    /* a subnormal base: exp2(y * (log2(x * 2^24) - 24)) (drivers' log2
     * reads the exponent field and gets subnormals wrong) */
    uint32_t sub = land(e, cmp(e, SpvOpFOrdLessThan, ax, bxvk_const_f(e, T, 0x1p-126)), cmp(e, SpvOpFOrdGreaterThan, ax, z));
    uint32_t l2 = bxvk_ext(e, ty, GLSLstd450Log2, exact(e, bxvk_op2(e, SpvOpFMul, ty, ax, bxvk_const_f(e, T, 0x1p24))));
    l2 = exact(e, bxvk_op2(e, SpvOpFSub, ty, l2, bxvk_const_f(e, T, 24)));
    r = bxvk_sel(e, ty, sub, bxvk_ext(e, ty, GLSLstd450Exp2, exact(e, bxvk_op2(e, SpvOpFMul, ty, b, l2))), r);
  }
  uint32_t yint = cmp(e, SpvOpFOrdEqual, bxvk_ext(e, ty, GLSLstd450Trunc, b), b);
  uint32_t odd = land(e, yint, cmp(e, SpvOpFOrdNotEqual, bxvk_op2(e, SpvOpFRem, ty, b, bxvk_const_f(e, T, 2)), z));
  uint32_t xneg = cmp(e, SpvOpFOrdLessThan, a, z), xzero = cmp(e, SpvOpFOrdEqual, a, z);
  uint32_t sign = lor(e, xneg, land(e, xzero, cmp(e, SpvOpFOrdLessThan, bxvk_op2(e, SpvOpFDiv, ty, one, a), z)));
  uint32_t zneg = land(e, xzero, cmp(e, SpvOpFOrdLessThan, b, z));
  r = bxvk_sel(e, ty, zneg, inf, r);
  r = bxvk_sel(e, ty, land(e, odd, sign), bxvk_op1(e, SpvOpFNegate, ty, r), r);
  uint32_t finite_neg = land(e, xneg, cmp(e, SpvOpFOrdGreaterThan, a, bxvk_const_f(e, T, -INFINITY)));
  uint32_t notint = bxvk_op1(e, SpvOpLogicalNot, bxvk_reg(e, BXK_BOOL), yint);
  r = bxvk_sel(e, ty, land(e, finite_neg, notint), bxvk_const_f(e, T, NAN), r);
  uint32_t nan = lor(e, bxvk_op1(e, SpvOpIsNan, bxvk_reg(e, BXK_BOOL), a), bxvk_op1(e, SpvOpIsNan, bxvk_reg(e, BXK_BOOL), b));
  r = bxvk_sel(e, ty, nan, bxvk_const_f(e, T, NAN), r);
  uint32_t unit = lor(e, cmp(e, SpvOpFOrdEqual, b, z), cmp(e, SpvOpFOrdEqual, a, one));
  unit = lor(e, unit, land(e, cmp(e, SpvOpFOrdEqual, ax, one), cmp(e, SpvOpFOrdEqual, bxvk_ext(e, ty, GLSLstd450FAbs, b), inf)));
  return bxvk_sel(e, ty, unit, one, r);
}

/* --------------------------------------------------------------- fmod */

/* C's fmod(x, y), exact: r = |x|, and while r >= |y|, subtract t, the
 * largest |y| * 2^k <= r.  t <= r < 2t, so r - t is exact (Sterbenz), and
 * r's exponent drops every step: at most the exponent range (~280 steps
 * for f32, ~2100 for f64).  The result takes x's sign; x itself where
 * |x| < |y|, y is infinite or x is a zero; NaN for y = 0, x infinite or
 * either NaN.  t is the float register type (f32 for f16 values). */
uint32_t bxvk_fmod(struct bxvk_em *e, unsigned t, uint32_t x, uint32_t y) {
  uint32_t ty = bxvk_reg(e, t), tb = bxvk_reg(e, BXK_BOOL), u = bxvk_reg(e, BXK_U32);
  uint32_t inf = bxvk_const_f(e, t, INFINITY), z = bxvk_const_f(e, t, 0);
  uint32_t ax = bxvk_ext(e, ty, GLSLstd450FAbs, x), ay = bxvk_ext(e, ty, GLSLstd450FAbs, y);
  uint32_t run = land(e, land(e, cmp(e, SpvOpFOrdGreaterThanEqual, ax, ay), cmp(e, SpvOpFOrdLessThan, ax, inf)),
                      land(e, cmp(e, SpvOpFOrdGreaterThan, ay, z), cmp(e, SpvOpFOrdLessThan, ay, inf)));
  uint32_t st = bxvk_frexp_type(e, ty);
  uint32_t fy = bxvk_ext(e, st, GLSLstd450FrexpStruct, ay), ey = bxvk_id(e);
  bxvk_ins(&e->fn, SpvOpCompositeExtract, 4, u, ey, fy, 1);
  uint32_t var = bxvk_fvar(e, t);
  bxvk_ins(&e->fn, SpvOpStore, 2, var, ax);
  uint32_t header = bxvk_id(e), body = bxvk_id(e), cont = bxvk_id(e), merge = bxvk_id(e);
  bxvk_ins(&e->fn, SpvOpBranch, 1, header);
  bxvk_ins(&e->fn, SpvOpLabel, 1, header);
  uint32_t r = bxvk_op1(e, SpvOpLoad, ty, var);
  uint32_t go = land(e, run, cmp(e, SpvOpFOrdGreaterThanEqual, r, ay));
  bxvk_ins(&e->fn, SpvOpLoopMerge, 3, merge, cont, SpvLoopControlMaskNone);
  bxvk_ins(&e->fn, SpvOpBranchConditional, 3, go, body, merge);
  bxvk_ins(&e->fn, SpvOpLabel, 1, body);
  uint32_t fr = bxvk_ext(e, st, GLSLstd450FrexpStruct, r), er = bxvk_id(e);
  bxvk_ins(&e->fn, SpvOpCompositeExtract, 4, u, er, fr, 1);
  uint32_t tt = bxvk_ext2(e, ty, GLSLstd450Ldexp, ay, bxvk_op2(e, SpvOpISub, u, er, ey));
  uint32_t half = exact(e, bxvk_op2(e, SpvOpFMul, ty, tt, bxvk_const_f(e, t, 0.5)));
  tt = bxvk_sel(e, ty, cmp(e, SpvOpFOrdGreaterThan, tt, r), half, tt);
  bxvk_ins(&e->fn, SpvOpStore, 2, var, exact(e, bxvk_op2(e, SpvOpFSub, ty, r, tt)));
  bxvk_ins(&e->fn, SpvOpBranch, 1, cont);
  bxvk_ins(&e->fn, SpvOpLabel, 1, cont);
  bxvk_ins(&e->fn, SpvOpBranch, 1, header);
  bxvk_ins(&e->fn, SpvOpLabel, 1, merge);
  r = bxvk_op1(e, SpvOpLoad, ty, var);
  r = bxvk_sel(e, ty, cmp(e, SpvOpFOrdLessThan, x, z), bxvk_op1(e, SpvOpFNegate, ty, r), r);
  r = bxvk_sel(e, ty, run, r, x);
  uint32_t nan = lor(e, lor(e, cmp(e, SpvOpFOrdEqual, ay, z), bxvk_op1(e, SpvOpLogicalNot, tb, cmp(e, SpvOpFOrdLessThan, ax, inf))),
                     bxvk_op1(e, SpvOpIsNan, tb, y));
  return bxvk_sel(e, ty, nan, bxvk_const_f(e, t, NAN), r);
}

/* ---------------------------------------------------------------- erf */

/* erf for f32.  |x| < 0.5: the Maclaurin series to x^13 (truncation
 * below 1e-9 relative).  Otherwise Abramowitz & Stegun 7.1.26,
 * 1 - t(a1 + t(a2 + ... a5 t)) e^{-x^2} with t = 1/(1 + p|x|), whose error
 * is below 1.5e-7 absolute (A&S), sign restored.  The suite checks the
 * bound against libm's erf (tests/vulkan/test_vulkan_run.c). */
static uint32_t ferf(struct bxvk_em *e, uint32_t x) {
  const unsigned T = BXK_F32;
  uint32_t ty = bxvk_reg(e, T);
  /* 2/sqrt(pi) * (-1)^n / (n! (2n+1)), n = 0..6 */
  static const double c[7] = {1.1283791670955126, -0.37612638903183754, 0.11283791670955126,
                              -0.026866170645131252, 0.0052239776254421878, -0.00085483270234508529,
                              0.00012055332981789664};
  uint32_t x2 = exact(e, bxvk_op2(e, SpvOpFMul, ty, x, x));
  uint32_t p = bxvk_const_f(e, T, c[6]);
  for (int n = 5; n >= 0; n--)
    p = exact(e, bxvk_op2(e, SpvOpFAdd, ty, exact(e, bxvk_op2(e, SpvOpFMul, ty, p, x2)), bxvk_const_f(e, T, c[n])));
  uint32_t small = exact(e, bxvk_op2(e, SpvOpFMul, ty, x, p));
  static const double a[5] = {0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429};
  uint32_t ax = bxvk_ext(e, ty, GLSLstd450FAbs, x), one = bxvk_const_f(e, T, 1);
  uint32_t t = bxvk_op2(e, SpvOpFDiv, ty, one,
                        exact(e, bxvk_op2(e, SpvOpFAdd, ty, one,
                                          exact(e, bxvk_op2(e, SpvOpFMul, ty, bxvk_const_f(e, T, 0.3275911), ax)))));
  uint32_t q = bxvk_const_f(e, T, a[4]);
  for (int n = 3; n >= 0; n--)
    q = exact(e, bxvk_op2(e, SpvOpFAdd, ty, exact(e, bxvk_op2(e, SpvOpFMul, ty, q, t)), bxvk_const_f(e, T, a[n])));
  q = exact(e, bxvk_op2(e, SpvOpFMul, ty, q, t));
  uint32_t ex = bxvk_ext(e, ty, GLSLstd450Exp, bxvk_op1(e, SpvOpFNegate, ty, x2));
  uint32_t big = exact(e, bxvk_op2(e, SpvOpFSub, ty, one, exact(e, bxvk_op2(e, SpvOpFMul, ty, q, ex))));
  big = bxvk_sel(e, ty, cmp(e, SpvOpFOrdLessThan, x, bxvk_const_f(e, T, 0)), bxvk_op1(e, SpvOpFNegate, ty, big), big);
  return bxvk_sel(e, ty, cmp(e, SpvOpFOrdLessThan, ax, bxvk_const_f(e, T, 0.5)), small, big);
}

/* log for f32, subnormals included: log(x * 2^24) - 24 ln 2 below the
 * smallest normal (drivers' log reads the exponent field: lavapipe's
 * gives -88.0 for 1e-40, not -92.1). */
static uint32_t flog(struct bxvk_em *e, uint32_t x) {
  const unsigned T = BXK_F32;
  uint32_t ty = bxvk_reg(e, T);
  uint32_t sub = land(e, cmp(e, SpvOpFOrdLessThan, x, bxvk_const_f(e, T, 0x1p-126)),
                      cmp(e, SpvOpFOrdGreaterThan, x, bxvk_const_f(e, T, 0)));
  uint32_t xs = bxvk_sel(e, ty, sub, exact(e, bxvk_op2(e, SpvOpFMul, ty, x, bxvk_const_f(e, T, 0x1p24))), x);
  uint32_t l = bxvk_ext(e, ty, GLSLstd450Log, xs);
  uint32_t fix = exact(e, bxvk_op2(e, SpvOpFSub, ty, l, bxvk_const_f(e, T, 16.635532333438687)));
  return bxvk_sel(e, ty, sub, fix, l);
}

/* log1p(x) = log(u) * x / (u - 1) with u = 1 + x (Goldberg, "What every
 * computer scientist should know...", Theorem 4): exact where u == 1, and
 * u itself where it is infinite. */
static uint32_t flog1p(struct bxvk_em *e, uint32_t x) {
  const unsigned T = BXK_F32;
  uint32_t ty = bxvk_reg(e, T), one = bxvk_const_f(e, T, 1);
  uint32_t u = exact(e, bxvk_op2(e, SpvOpFAdd, ty, one, x));
  uint32_t l = flog(e, u);
  uint32_t r = bxvk_op2(e, SpvOpFDiv, ty, exact(e, bxvk_op2(e, SpvOpFMul, ty, l, x)),
                        exact(e, bxvk_op2(e, SpvOpFSub, ty, u, one)));
  r = bxvk_sel(e, ty, cmp(e, SpvOpFOrdEqual, u, bxvk_const_f(e, T, INFINITY)), u, r);
  return bxvk_sel(e, ty, cmp(e, SpvOpFOrdEqual, u, one), x, r);
}

/* -------------------------------------------------------------- binary */

/* Integer pow, bxk_scalar.h's rule: wrapping square-and-multiply over
 * every bit of the exponent, unrolled with selects (as the LLVM lowering
 * does: no loop, no divergence); a negative exponent gives 0 except for
 * the bases 1 and -1. */
static uint32_t ipow(struct bxvk_em *e, const struct bxk_inst *i, unsigned t, uint32_t a, uint32_t x) {
  uint32_t ty = bxvk_reg(e, t), one = ci(e, t, 1), zero = ci(e, t, 0), r = one, base = a;
  for (unsigned k = 0; k < bits(t); k++) {
    uint32_t bit = bxvk_binop(e, i, BXK_OP_AND, t, bxvk_binop(e, i, BXK_OP_SHR, t, x, ci(e, t, k)), one);
    r = bxvk_sel(e, ty, cmp(e, SpvOpINotEqual, bit, zero), bxvk_binop(e, i, BXK_OP_MUL, t, r, base), r);
    base = bxvk_binop(e, i, BXK_OP_MUL, t, base, base);
  }
  if (!bxk_type_is_signed(t)) return r;
  uint32_t odd = cmp(e, SpvOpINotEqual, bxvk_binop(e, i, BXK_OP_AND, t, x, one), zero);
  uint32_t neg = bxvk_sel(e, ty, cmp(e, SpvOpIEqual, a, one), one,
                          bxvk_sel(e, ty, cmp(e, SpvOpIEqual, a, ci(e, t, -1)), bxvk_sel(e, ty, odd, ci(e, t, -1), one),
                                   zero));
  return bxvk_sel(e, ty, cmp(e, SpvOpSLessThan, x, zero), neg, r);
}

uint32_t bxvk_binop(struct bxvk_em *e, const struct bxk_inst *i, unsigned op, unsigned t, uint32_t a, uint32_t b) {
  uint32_t ty = bxvk_reg(e, t);
  bool fl = bxk_type_is_float(t), sg = bxk_type_is_signed(t), bl = t == BXK_BOOL;
  uint32_t r = 0;
  switch (op) {
  case BXK_OP_ADD: r = fl ? exact(e, bxvk_op2(e, SpvOpFAdd, ty, a, b)) : bxvk_op2(e, SpvOpIAdd, ty, a, b); break;
  case BXK_OP_SUB: r = fl ? exact(e, bxvk_op2(e, SpvOpFSub, ty, a, b)) : bxvk_op2(e, SpvOpISub, ty, a, b); break;
  case BXK_OP_MUL: r = fl ? exact(e, bxvk_op2(e, SpvOpFMul, ty, a, b)) : bxvk_op2(e, SpvOpIMul, ty, a, b); break;
  case BXK_OP_DIV: r = fl ? exact(e, bxvk_op2(e, SpvOpFDiv, ty, a, b)) : int_divrem(e, false, t, a, b); break;
  case BXK_OP_REM:
    if (!fl) return int_divrem(e, true, t, a, b);
    {
      uint32_t z = bxvk_const_f(e, t, 0);
      r = bxvk_fmod(e, t == BXK_F64 ? BXK_F64 : BXK_F32, a, b);
      uint32_t fix = land(e, cmp(e, SpvOpFUnordNotEqual, r, z),
                          cmp(e, SpvOpLogicalNotEqual, cmp(e, SpvOpFOrdLessThan, r, z),
                              cmp(e, SpvOpFOrdLessThan, b, z)));
      r = bxvk_sel(e, ty, fix, exact(e, bxvk_op2(e, SpvOpFAdd, ty, r, b)), r);
    }
    break;
  case BXK_OP_MIN: case BXK_OP_MAX: {
    bool mx = op == BXK_OP_MAX;
    SpvOp c = fl ? (mx ? SpvOpFOrdGreaterThan : SpvOpFOrdLessThan)
                 : sg ? (mx ? SpvOpSGreaterThan : SpvOpSLessThan) : (mx ? SpvOpUGreaterThan : SpvOpULessThan);
    uint32_t w = cmp(e, c, a, b);
    if (fl) w = lor(e, w, bxvk_op1(e, SpvOpIsNan, bxvk_reg(e, BXK_BOOL), a));
    return bxvk_sel(e, ty, w, a, b);
  }
  case BXK_OP_POW:
    if (!fl) return ipow(e, i, t, a, b);
    r = fpow(e, t == BXK_F64 ? BXK_F64 : BXK_F32, a, b);
    break;
  case BXK_OP_AND: return bxvk_op2(e, bl ? SpvOpLogicalAnd : SpvOpBitwiseAnd, ty, a, b);
  case BXK_OP_OR: return bxvk_op2(e, bl ? SpvOpLogicalOr : SpvOpBitwiseOr, ty, a, b);
  case BXK_OP_XOR: return bxvk_op2(e, bl ? SpvOpLogicalNotEqual : SpvOpBitwiseXor, ty, a, b);
  case BXK_OP_SHL: case BXK_OP_SHR: {
    uint32_t n = bxvk_op2(e, SpvOpBitwiseAnd, ty, b, ci(e, t, bits(t) - 1));
    SpvOp s = op == BXK_OP_SHL ? SpvOpShiftLeftLogical : sg ? SpvOpShiftRightArithmetic : SpvOpShiftRightLogical;
    return bxvk_op2(e, s, ty, a, n);
  }
  case BXK_OP_EQ: return cmp(e, bl ? SpvOpLogicalEqual : fl ? SpvOpFOrdEqual : SpvOpIEqual, a, b);
  case BXK_OP_NE: return cmp(e, bl ? SpvOpLogicalNotEqual : fl ? SpvOpFUnordNotEqual : SpvOpINotEqual, a, b);
  case BXK_OP_LT: return cmp(e, fl ? SpvOpFOrdLessThan : sg ? SpvOpSLessThan : SpvOpULessThan, a, b);
  case BXK_OP_LE: return cmp(e, fl ? SpvOpFOrdLessThanEqual : sg ? SpvOpSLessThanEqual : SpvOpULessThanEqual, a, b);
  case BXK_OP_GT: return cmp(e, fl ? SpvOpFOrdGreaterThan : sg ? SpvOpSGreaterThan : SpvOpUGreaterThan, a, b);
  case BXK_OP_GE:
    return cmp(e, fl ? SpvOpFOrdGreaterThanEqual : sg ? SpvOpSGreaterThanEqual : SpvOpUGreaterThanEqual, a, b);
  default:
    bxvk_fail(e, i, "op %s has no SPIR-V lowering", bxk_opinfo[op < BXK_OP_COUNT ? op : 0].name);
    return 0;
  }
  return t == BXK_F16 ? bxvk_round16(e, r) : r;
}

/* --------------------------------------------------------------- unary */

uint32_t bxvk_unop(struct bxvk_em *e, const struct bxk_inst *i, unsigned op, unsigned t, uint32_t a) {
  uint32_t ty = bxvk_reg(e, t), tb = bxvk_reg(e, BXK_BOOL);
  bool fl = bxk_type_is_float(t), sg = bxk_type_is_signed(t);
  uint32_t r = 0;
  if (t == BXK_F64 && (op == BXK_OP_EXP || op == BXK_OP_LOG || op == BXK_OP_LOG1P || op == BXK_OP_SIN ||
                       op == BXK_OP_COS || op == BXK_OP_TANH || op == BXK_OP_ERF))
    return bxvk_math64(e, i, op, a);
  switch (op) {
  case BXK_OP_NEG: return bxvk_op1(e, fl ? SpvOpFNegate : SpvOpSNegate, ty, a);
  case BXK_OP_ABS:
    if (fl) return bxvk_ext(e, ty, GLSLstd450FAbs, a);
    if (!sg) return a;
    return bxvk_sel(e, ty, cmp(e, SpvOpSLessThan, a, ci(e, t, 0)), bxvk_op1(e, SpvOpSNegate, ty, a), a);
  case BXK_OP_SIGN:
    if (fl) {
      uint32_t z = bxvk_const_f(e, t, 0);
      r = bxvk_sel(e, ty, cmp(e, SpvOpFOrdLessThan, a, z), bxvk_const_f(e, t, -1), a);
      return bxvk_sel(e, ty, cmp(e, SpvOpFOrdGreaterThan, a, z), bxvk_const_f(e, t, 1), r);
    }
    if (!sg) return bxvk_sel(e, ty, cmp(e, SpvOpUGreaterThan, a, ci(e, t, 0)), ci(e, t, 1), ci(e, t, 0));
    r = bxvk_sel(e, ty, cmp(e, SpvOpSLessThan, a, ci(e, t, 0)), ci(e, t, -1), ci(e, t, 0));
    return bxvk_sel(e, ty, cmp(e, SpvOpSGreaterThan, a, ci(e, t, 0)), ci(e, t, 1), r);
  case BXK_OP_NOT: return bxvk_op1(e, t == BXK_BOOL ? SpvOpLogicalNot : SpvOpNot, ty, a);
  case BXK_OP_EXP: r = bxvk_ext(e, ty, GLSLstd450Exp, a); break;
  case BXK_OP_LOG: r = flog(e, a); break;
  case BXK_OP_LOG1P: r = flog1p(e, a); break;
  case BXK_OP_SQRT: r = bxvk_ext(e, ty, GLSLstd450Sqrt, a); break;
  case BXK_OP_RSQRT: /* 1/sqrt, as the LLVM lowering and the evaluator */
    r = exact(e, bxvk_op2(e, SpvOpFDiv, ty, bxvk_const_f(e, t, 1), bxvk_ext(e, ty, GLSLstd450Sqrt, a)));
    break;
  case BXK_OP_RECIP: r = exact(e, bxvk_op2(e, SpvOpFDiv, ty, bxvk_const_f(e, t, 1), a)); break;
  case BXK_OP_SIN: r = bxvk_ext(e, ty, GLSLstd450Sin, a); break;
  case BXK_OP_COS: r = bxvk_ext(e, ty, GLSLstd450Cos, a); break;
  case BXK_OP_TANH: {
    /* tanh(+-20) is +-1 in f32; clamping first keeps drivers that compute
     * it from exp(2x) away from inf/inf */
    uint32_t big = cmp(e, SpvOpFOrdGreaterThan, bxvk_ext(e, ty, GLSLstd450FAbs, a), bxvk_const_f(e, t, 20));
    uint32_t c = bxvk_sel(e, ty, cmp(e, SpvOpFOrdLessThan, a, bxvk_const_f(e, t, 0)), bxvk_const_f(e, t, -20),
                          bxvk_const_f(e, t, 20));
    r = bxvk_ext(e, ty, GLSLstd450Tanh, bxvk_sel(e, ty, big, c, a));
    break;
  }
  case BXK_OP_ERF: r = ferf(e, a); break;
  case BXK_OP_FLOOR: r = bxvk_ext(e, ty, GLSLstd450Floor, a); break;
  case BXK_OP_CEIL: r = bxvk_ext(e, ty, GLSLstd450Ceil, a); break;
  case BXK_OP_ROUND: r = bxvk_ext(e, ty, GLSLstd450RoundEven, a); break;
  case BXK_OP_TRUNC: r = bxvk_ext(e, ty, GLSLstd450Trunc, a); break;
  default:
    bxvk_fail(e, i, "op %s has no SPIR-V lowering", bxk_opinfo[op < BXK_OP_COUNT ? op : 0].name);
    return 0;
  }
  (void)tb;
  return t == BXK_F16 ? bxvk_round16(e, r) : r;
}

/* --------------------------------------------------------------- casts */

uint32_t bxvk_cast(struct bxvk_em *e, unsigned to, unsigned from, uint32_t a) {
  if (to == from) return a;
  uint32_t tt = bxvk_reg(e, to);
  bool ff = bxk_type_is_float(from), ft = bxk_type_is_float(to);
  if (to == BXK_BOOL)
    return ff ? cmp(e, SpvOpFUnordNotEqual, a, bxvk_const_f(e, from, 0)) : cmp(e, SpvOpINotEqual, a, ci(e, from, 0));
  if (from == BXK_BOOL)
    return ft ? bxvk_sel(e, tt, a, bxvk_const_f(e, to, 1), bxvk_const_f(e, to, 0))
              : bxvk_sel(e, tt, a, ci(e, to, 1), ci(e, to, 0));
  if (ff && ft) {
    if (to == BXK_F64) return bxvk_op1(e, SpvOpFConvert, tt, a);      /* from f16/f32: exact */
    if (from == BXK_F64) a = bxvk_op1(e, SpvOpFConvert, bxvk_reg(e, BXK_F32), a);
    return to == BXK_F16 ? bxvk_round16(e, a) : a;                   /* f64 -> f16 through f32 */
  }
  if (!ff && ft) {
    SpvOp c = bxk_type_is_signed(from) ? SpvOpConvertSToF : SpvOpConvertUToF;
    if (to != BXK_F16) return bxvk_op1(e, c, tt, a);
    return bxvk_round16(e, bxvk_op1(e, c, bxvk_reg(e, BXK_F32), a));  /* int -> f16 through f32 */
  }
  if (ff) {
    /* saturating, bounds compared in the source's precision (the f32
     * image of INT32_MAX is 2^31, past every f32 that converts) */
    unsigned src = from == BXK_F64 ? BXK_F64 : BXK_F32;
    uint32_t sty = bxvk_reg(e, src);
    double lo, hi;
    int64_t mn, mx;
    switch (to) {
    case BXK_I32: lo = -2147483648.0, hi = 2147483647.0, mn = INT32_MIN, mx = INT32_MAX; break;
    case BXK_I64: lo = -9223372036854775808.0, hi = 9223372036854775807.0, mn = INT64_MIN, mx = INT64_MAX; break;
    case BXK_U32: lo = 0, hi = 4294967295.0, mn = 0, mx = UINT32_MAX; break;
    default: lo = 0, hi = 255.0, mn = 0, mx = 255; break;
    }
    uint32_t nan = bxvk_op1(e, SpvOpIsNan, bxvk_reg(e, BXK_BOOL), a);
    uint32_t ge = cmp(e, SpvOpFOrdGreaterThanEqual, a, bxvk_const_f(e, src, hi));
    uint32_t le = cmp(e, SpvOpFOrdLessThanEqual, a, bxvk_const_f(e, src, lo));
    uint32_t out = lor(e, lor(e, ge, le), nan);
    uint32_t safe = bxvk_sel(e, sty, out, bxvk_const_f(e, src, 0), a);
    uint32_t c = bxvk_op1(e, bxk_type_is_signed(to) ? SpvOpConvertFToS : SpvOpConvertFToU, tt, safe);
    c = bxvk_sel(e, tt, nan, ci(e, to, 0), c);
    c = bxvk_sel(e, tt, le, ci(e, to, mn), c);
    return bxvk_sel(e, tt, ge, ci(e, to, mx), c);
  }
  /* int -> int: same width is the same register type; wider extends by
   * the source's signedness, narrower truncates */
  unsigned fb = bits(from), tb = bits(to);
  if (fb == tb) return a;
  if (tb > fb && bxk_type_is_signed(from)) {
    /* Sign extension as shifts, not OpSConvert: lavapipe (Mesa 22) folds
     * an SConvert of our unsigned-declared i32 register into the
     * comparison after it as if it were zero-extended (abs, relu and sign
     * of i32 went wrong while a plain cast stored right).  The shifts'
     * signedness is in the opcode, which every driver reads alike. */
    uint32_t sh = bxvk_const_u32(e, tb - fb);
    uint32_t w = bxvk_op2(e, SpvOpShiftLeftLogical, tt, bxvk_op1(e, SpvOpUConvert, tt, a), sh);
    return bxvk_op2(e, SpvOpShiftRightArithmetic, tt, w, sh);
  }
  if (tb > fb) return bxvk_op1(e, SpvOpUConvert, tt, a);
  return bxvk_op1(e, SpvOpUConvert, tt, a);
}
