/* nd_elem.c — NdArray elementwise ops: unary, binary with NumPy
 * broadcasting, scalar forms, comparisons and bool logic, plus cast.
 * Floats compute in double and round once on store; ints compute in int64
 * with wrapping (unsigned) arithmetic; the semantics documented in bext.h
 * (floored rem, x/0 = 0 for ints, NaN-propagating max/min) live here. */
#include <math.h>
#include <string.h>

#include "ndarray.h"

/* ------------------------------------------------------------ float math */

static double f_rem(double a, double b) {
  double r = fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

static double f_bin(enum bxr_opcode c, double a, double b) {
  switch (c) {
  case BXR_OP_ADD: case BXR_OP_ADD_SCALAR: return a + b;
  case BXR_OP_SUB: case BXR_OP_SUB_SCALAR: return a - b;
  case BXR_OP_MUL: case BXR_OP_MUL_SCALAR: return a * b;
  case BXR_OP_DIV: case BXR_OP_DIV_SCALAR: return a / b;
  case BXR_OP_REM: case BXR_OP_REM_SCALAR: return f_rem(a, b);
  case BXR_OP_POW: case BXR_OP_POW_SCALAR: return pow(a, b);
  case BXR_OP_MAX: case BXR_OP_MAX_SCALAR: return (a != a || b != b) ? NAN : (a > b ? a : b);
  case BXR_OP_MIN: case BXR_OP_MIN_SCALAR: return (a != a || b != b) ? NAN : (a < b ? a : b);
  default: BXR_ASSERT(!"not a binary op");
  }
}

static double f_un(const struct bxr_op *op, double x) {
  switch (op->code) {
  case BXR_OP_NEG: return -x;
  case BXR_OP_ABS: return fabs(x);
  case BXR_OP_EXP: return exp(x);
  case BXR_OP_LOG: return log(x);
  case BXR_OP_LOG1P: return log1p(x);
  case BXR_OP_SQRT: return sqrt(x);
  case BXR_OP_RSQRT: return 1.0 / sqrt(x);
  case BXR_OP_SIN: return sin(x);
  case BXR_OP_COS: return cos(x);
  case BXR_OP_TANH: return tanh(x);
  case BXR_OP_ERF: return erf(x);
  case BXR_OP_SIGMOID: return 1.0 / (1.0 + exp(-x));
  case BXR_OP_RELU: return x < 0 ? 0.0 : x;
  case BXR_OP_RECIP: return 1.0 / x;
  case BXR_OP_FLOOR: return floor(x);
  case BXR_OP_CEIL: return ceil(x);
  case BXR_OP_ROUND: return nearbyint(x); /* default mode: ties to even */
  case BXR_OP_SIGN: return x > 0 ? 1.0 : x < 0 ? -1.0 : x;
  case BXR_OP_CLAMP: return x < op->sc[0].f ? op->sc[0].f : x > op->sc[1].f ? op->sc[1].f : x;
  case BXR_OP_POWI: return pow(x, (double)op->sc[0].i);
  default: BXR_ASSERT(!"not a unary op");
  }
}

/* -------------------------------------------------------------- int math */

static int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wrap_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

static int64_t i_div(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return wrap_sub(0, a); /* INT64_MIN / -1 wraps */
  return a / b;
}

static int64_t i_rem(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

static int64_t i_pow(int64_t a, int64_t e) {
  if (e < 0) return a == 1 ? 1 : a == -1 ? ((e & 1) ? -1 : 1) : 0;
  int64_t r = 1;
  while (e) {
    if (e & 1) r = wrap_mul(r, a);
    a = wrap_mul(a, a);
    e >>= 1;
  }
  return r;
}

static int64_t i_bin(enum bxr_opcode c, int64_t a, int64_t b) {
  switch (c) {
  case BXR_OP_ADD: case BXR_OP_ADD_SCALAR: return wrap_add(a, b);
  case BXR_OP_SUB: case BXR_OP_SUB_SCALAR: return wrap_sub(a, b);
  case BXR_OP_MUL: case BXR_OP_MUL_SCALAR: return wrap_mul(a, b);
  case BXR_OP_DIV: case BXR_OP_DIV_SCALAR: return i_div(a, b);
  case BXR_OP_REM: case BXR_OP_REM_SCALAR: return i_rem(a, b);
  case BXR_OP_POW: case BXR_OP_POW_SCALAR: return i_pow(a, b);
  case BXR_OP_MAX: case BXR_OP_MAX_SCALAR: return a > b ? a : b;
  case BXR_OP_MIN: case BXR_OP_MIN_SCALAR: return a < b ? a : b;
  case BXR_OP_AND: return a && b;
  case BXR_OP_OR: return a || b;
  case BXR_OP_XOR: return (a != 0) != (b != 0);
  default: BXR_ASSERT(!"not a binary op");
  }
}

static int64_t i_un(const struct bxr_op *op, int64_t x) {
  switch (op->code) {
  case BXR_OP_NEG: return wrap_sub(0, x);
  case BXR_OP_ABS: return x < 0 ? wrap_sub(0, x) : x;
  case BXR_OP_RELU: return x < 0 ? 0 : x;
  case BXR_OP_SIGN: return x > 0 ? 1 : x < 0 ? -1 : 0;
  case BXR_OP_NOT: return !x;
  case BXR_OP_CLAMP: {
    int64_t lo = bxr_f64_to_i64_sat(op->sc[0].f), hi = bxr_f64_to_i64_sat(op->sc[1].f);
    return x < lo ? lo : x > hi ? hi : x;
  }
  default: BXR_ASSERT(!"not an int unary op");
  }
}

/* ----------------------------------------------------------- comparisons */

static enum bxr_opcode cmp_base(enum bxr_opcode c) {
  switch (c) {
  case BXR_OP_EQ_SCALAR: return BXR_OP_EQ;
  case BXR_OP_NE_SCALAR: return BXR_OP_NE;
  case BXR_OP_GT_SCALAR: return BXR_OP_GT;
  case BXR_OP_GE_SCALAR: return BXR_OP_GE;
  case BXR_OP_LT_SCALAR: return BXR_OP_LT;
  case BXR_OP_LE_SCALAR: return BXR_OP_LE;
  default: return c;
  }
}

static bool is_cmp(enum bxr_opcode c) {
  c = cmp_base(c);
  return c == BXR_OP_EQ || c == BXR_OP_NE || c == BXR_OP_GT || c == BXR_OP_GE || c == BXR_OP_LT ||
         c == BXR_OP_LE;
}

#define CMP(c, a, b)                                       \
  ((c) == BXR_OP_EQ ? (a) == (b) : (c) == BXR_OP_NE ? (a) != (b) \
   : (c) == BXR_OP_GT ? (a) > (b) : (c) == BXR_OP_GE ? (a) >= (b) \
   : (c) == BXR_OP_LT ? (a) < (b) : (a) <= (b))

/* ------------------------------------------------------------------ kernel */

static bool scalar_form(enum bxr_opcode c) { return c >= BXR_OP_ADD_SCALAR && c <= BXR_OP_MIN_SCALAR; }
_Static_assert(BXR_OP_MIN_SCALAR - BXR_OP_ADD_SCALAR == 7, "scalar forms are contiguous in ops.h");

bext_tensor *bxnd_elementwise(struct bxr_op *op) {
  if (!bxnd_contig_inputs(op)) return NULL;
  const bext_tensor *a = op->in[0];
  const bext_tensor *b = op->n_in > 1 ? op->in[1] : NULL;
  bext_dtype dt = a->dtype; /* operand dtype; the output's may be bool */
  bool flt = bext_dtype_kind(dt) == BEXT_KIND_FLOAT;
  bool cmp = is_cmp(op->code);
  enum bxr_opcode base = cmp_base(op->code);
  /* in-place: only when the output keeps the operand's dtype and shape */
  bext_tensor *out = bxnd_output(op, cmp ? -1 : 0);
  if (!out) return NULL;
  /* after a take, in[0] is NULL: read a through `a` (same storage as out;
   * each element is read before it is written) */
  int64_t sa[BEXT_MAX_RANK], sb[BEXT_MAX_RANK] = {0};
  BXR_ASSERT(bxr_broadcast_strides(a, out->rank, out->shape, sa));
  if (b) BXR_ASSERT(bxr_broadcast_strides(b, out->rank, out->shape, sb));
  const void *pa = bxr_data(a), *pb = b ? bxr_data(b) : NULL;
  void *po = bxr_data(out);
  double fs = op->sc[0].f;
  int64_t is = bxr_f64_to_i64_sat(op->sc[0].f);
  struct bxr_iter it;
  bxr_iter_init(&it, out->rank, out->shape, 2, sa, sb);
  for (int64_t i = 0; i < it.numel; i++, bxr_iter_next(&it)) {
    if (flt) {
      double x = bxr_load_f64(pa, dt, it.off[0]);
      double y = b ? bxr_load_f64(pb, dt, it.off[1]) : fs;
      if (cmp) bxr_store_i64(po, BEXT_BOOL, i, CMP(base, x, y));
      else if (b || scalar_form(op->code))
        bxr_store_f64(po, dt, i, f_bin(op->code, x, y));
      else bxr_store_f64(po, dt, i, f_un(op, x));
    } else {
      int64_t x = bxr_load_i64(pa, dt, it.off[0]);
      int64_t y = b ? bxr_load_i64(pb, dt, it.off[1]) : is;
      if (cmp) bxr_store_i64(po, BEXT_BOOL, i, CMP(base, x, y));
      else if (b || scalar_form(op->code))
        bxr_store_i64(po, dt, i, i_bin(op->code, x, y));
      else bxr_store_i64(po, dt, i, i_un(op, x));
    }
  }
  return out;
}

bext_tensor *bxnd_cast(struct bxr_op *op) {
  if (!bxnd_contig_inputs(op)) return NULL;
  bext_tensor *out = bxnd_output(op, 0); /* same dtype: plain copy or in place */
  if (!out) return NULL;
  if (out != op->in[0] && op->in[0])
    bxr_convert(bxr_data(out), out->dtype, bxr_data(op->in[0]), op->in[0]->dtype,
                bxr_numel(out->rank, out->shape));
  return out;
}
