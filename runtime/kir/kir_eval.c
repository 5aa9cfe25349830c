/* kir_eval.c — constant evaluation of one op on literals, with exactly the
 * semantics of bxk_scalar.h: what a constant folder computes, and what the
 * tests compare every lowering's results with (element by element). */
#include <math.h>

#include "bxk_scalar.h"
#include "kir_internal.h"

union bxk_lit bxk_lit_norm(enum bxk_type t, union bxk_lit a) {
  switch (t) {
  case BXK_BOOL: a.u = a.u != 0; break;
  case BXK_U8: a.u &= 0xff; break;
  case BXK_I32: a.i = (int32_t)(uint32_t)a.u; break;
  case BXK_U32: a.u &= 0xffffffffu; break;
  case BXK_F16: a.f = bxk_f16_to_f32(bxk_f64_to_f16(a.f)); break;
  case BXK_BF16: a.f = bxk_bf16_to_f32(bxk_f64_to_bf16(a.f)); break;
  case BXK_F32: a.f = (float)a.f; break;
  default: break;
  }
  return a;
}

/* f16 and bf16 compute in f32 and round after every op. */
static float round_half(enum bxk_type t, float r) {
  return t == BXK_F16 ? bxk_round_f16(r) : t == BXK_BF16 ? bxk_round_bf16(r) : r;
}

/* -------------------------------------------------------------- binary */

#define FBIN(T, S, POWF)                                              \
  switch (op) {                                                       \
  case BXK_OP_ADD: r = x + y; break;                                  \
  case BXK_OP_SUB: r = x - y; break;                                  \
  case BXK_OP_MUL: r = x * y; break;                                  \
  case BXK_OP_DIV: r = x / y; break;                                  \
  case BXK_OP_REM: r = bxk_rem_##S(x, y); break;                      \
  case BXK_OP_MIN: r = bxk_min_##S(x, y); break;                      \
  case BXK_OP_MAX: r = bxk_max_##S(x, y); break;                      \
  case BXK_OP_POW: r = POWF(x, y); break;                             \
  case BXK_OP_EQ: c = x == y; break;                                  \
  case BXK_OP_NE: c = x != y; break;                                  \
  case BXK_OP_LT: c = x < y; break;                                   \
  case BXK_OP_LE: c = x <= y; break;                                  \
  case BXK_OP_GT: c = x > y; break;                                   \
  case BXK_OP_GE: c = x >= y; break;                                  \
  default: return false;                                              \
  }

#define IBIN(T, S, F)                                                 \
  {                                                                   \
    T x = (T)a.F, y = (T)b.F, r;                                      \
    switch (op) {                                                     \
    case BXK_OP_ADD: r = bxk_add_##S(x, y); break;                    \
    case BXK_OP_SUB: r = bxk_sub_##S(x, y); break;                    \
    case BXK_OP_MUL: r = bxk_mul_##S(x, y); break;                    \
    case BXK_OP_DIV: r = bxk_div_##S(x, y); break;                    \
    case BXK_OP_REM: r = bxk_rem_##S(x, y); break;                    \
    case BXK_OP_MIN: r = bxk_min_##S(x, y); break;                    \
    case BXK_OP_MAX: r = bxk_max_##S(x, y); break;                    \
    case BXK_OP_POW: r = bxk_pow_##S(x, y); break;                    \
    case BXK_OP_AND: r = x & y; break;                                \
    case BXK_OP_OR: r = x | y; break;                                 \
    case BXK_OP_XOR: r = x ^ y; break;                                \
    case BXK_OP_SHL: r = bxk_shl_##S(x, y); break;                    \
    case BXK_OP_SHR: r = bxk_shr_##S(x, y); break;                    \
    case BXK_OP_EQ: out->u = x == y; return true;                     \
    case BXK_OP_NE: out->u = x != y; return true;                     \
    case BXK_OP_LT: out->u = x < y; return true;                      \
    case BXK_OP_LE: out->u = x <= y; return true;                     \
    case BXK_OP_GT: out->u = x > y; return true;                      \
    case BXK_OP_GE: out->u = x >= y; return true;                     \
    default: return false;                                            \
    }                                                                 \
    out->F = r;                                                       \
    return true;                                                      \
  }

bool bxk_eval_bin(enum bxk_op op, enum bxk_type t, union bxk_lit a, union bxk_lit b,
                  union bxk_lit *out) {
  int c = -1;
  switch (t) {
  case BXK_F64: {
    double x = a.f, y = b.f, r = 0;
    FBIN(double, f64, pow)
    if (c < 0) out->f = r;
    break;
  }
  case BXK_F32: case BXK_F16: case BXK_BF16: {
    float x = (float)a.f, y = (float)b.f, r = 0;
    FBIN(float, f32, powf)
    if (c < 0) out->f = round_half(t, r);
    break;
  }
  case BXK_I32: IBIN(int32_t, i32, i)
  case BXK_I64: IBIN(int64_t, i64, i)
  case BXK_U32: IBIN(uint32_t, u32, u)
  case BXK_U8: IBIN(uint8_t, u8, u)
  case BXK_BOOL: {
    bool x = a.u != 0, y = b.u != 0;
    switch (op) {
    case BXK_OP_AND: out->u = x && y; return true;
    case BXK_OP_OR: out->u = x || y; return true;
    case BXK_OP_XOR: case BXK_OP_NE: out->u = x != y; return true;
    case BXK_OP_EQ: out->u = x == y; return true;
    default: return false;
    }
  }
  default: return false;
  }
  if (c >= 0) out->u = (uint64_t)c;
  return true;
}

/* --------------------------------------------------------------- unary */

#define FUN(S, SUF)                                                   \
  switch (op) {                                                       \
  case BXK_OP_NEG: r = -x; break;                                     \
  case BXK_OP_ABS: r = fabs##SUF(x); break;                           \
  case BXK_OP_SIGN: r = bxk_sign_##S(x); break;                       \
  case BXK_OP_EXP: r = exp##SUF(x); break;                            \
  case BXK_OP_LOG: r = log##SUF(x); break;                            \
  case BXK_OP_LOG1P: r = log1p##SUF(x); break;                        \
  case BXK_OP_SQRT: r = sqrt##SUF(x); break;                          \
  case BXK_OP_RSQRT: r = 1 / sqrt##SUF(x); break;                     \
  case BXK_OP_RECIP: r = 1 / x; break;                                \
  case BXK_OP_SIN: r = sin##SUF(x); break;                            \
  case BXK_OP_COS: r = cos##SUF(x); break;                            \
  case BXK_OP_TANH: r = tanh##SUF(x); break;                          \
  case BXK_OP_ERF: r = erf##SUF(x); break;                            \
  case BXK_OP_FLOOR: r = floor##SUF(x); break;                        \
  case BXK_OP_CEIL: r = ceil##SUF(x); break;                          \
  case BXK_OP_ROUND: r = bxk_round_##S(x); break;                     \
  case BXK_OP_TRUNC: r = trunc##SUF(x); break;                        \
  default: return false;                                              \
  }

#define IUN(T, S, F)                                                  \
  {                                                                   \
    T x = (T)a.F, r;                                                  \
    switch (op) {                                                     \
    case BXK_OP_NEG: r = bxk_neg_##S(x); break;                       \
    case BXK_OP_ABS: r = bxk_abs_##S(x); break;                       \
    case BXK_OP_SIGN: r = bxk_sign_##S(x); break;                     \
    case BXK_OP_NOT: r = (T)~x; break;                                \
    default: return false;                                            \
    }                                                                 \
    out->F = r;                                                       \
    return true;                                                      \
  }

bool bxk_eval_un(enum bxk_op op, enum bxk_type t, union bxk_lit a, union bxk_lit *out) {
  switch (t) {
  case BXK_F64: {
    double x = a.f, r;
    FUN(f64, )
    out->f = r;
    return true;
  }
  case BXK_F32: case BXK_F16: case BXK_BF16: {
    float x = (float)a.f, r;
    FUN(f32, f)
    out->f = round_half(t, r);
    return true;
  }
  case BXK_I32: IUN(int32_t, i32, i)
  case BXK_I64: IUN(int64_t, i64, i)
  case BXK_U32: IUN(uint32_t, u32, u)
  case BXK_U8: IUN(uint8_t, u8, u)
  case BXK_BOOL:
    if (op != BXK_OP_NOT) return false;
    out->u = a.u == 0;
    return true;
  default: return false;
  }
}

/* --------------------------------------------------------------- casts */

bool bxk_eval_cast(enum bxk_type to, enum bxk_type from, union bxk_lit a, union bxk_lit *out) {
  if (from == BXK_VOID || to == BXK_VOID || from >= BXK_TYPE_COUNT || to >= BXK_TYPE_COUNT)
    return false;
  a = bxk_lit_norm(from, a);
  if (to == BXK_BOOL) {
    out->u = bxk_type_is_float(from) ? a.f != 0 : a.u != 0;
    return true;
  }
  if (bxk_type_is_float(from)) {
    switch (to) {
    case BXK_I32: out->i = bxk_f64_to_i32(a.f); break;
    case BXK_I64: out->i = bxk_f64_to_i64(a.f); break;
    case BXK_U32: out->u = bxk_f64_to_u32(a.f); break;
    case BXK_U8: out->u = bxk_f64_to_u8(a.f); break;
    case BXK_F16: case BXK_BF16: out->f = bxk_lit_norm(to, a).f; break;
    case BXK_F32: out->f = (float)a.f; break;
    default: out->f = a.f; break;
    }
    return true;
  }
  /* from an int or bool: a.i/a.u already extended by its signedness */
  bool s = bxk_type_is_signed(from);
  switch (to) {
  case BXK_F16: out->f = bxk_f16_to_f32(s ? bxk_i64_to_f16(a.i) : bxk_u64_to_f16(a.u)); break;
  case BXK_BF16: out->f = bxk_bf16_to_f32(s ? bxk_i64_to_bf16(a.i) : bxk_u64_to_bf16(a.u)); break;
  case BXK_F32: out->f = s ? (float)a.i : (float)a.u; break;
  case BXK_F64: out->f = s ? (double)a.i : (double)a.u; break;
  default: *out = bxk_lit_norm(to, a); break;  /* int -> int wraps */
  }
  return true;
}
