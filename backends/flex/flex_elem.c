/* flex_elem.c — the elementwise engine and the ops built on it: binary
 * arithmetic (tensor and scalar forms), comparisons, bool logic, unary
 * math, clamp/powi, mask_where/mask_fill and cast.
 *
 * An op is described once (inputs with broadcast strides, output, compute
 * representation); its index space is coalesced (adjacent dims merged
 * when every operand is contiguous across them) so the common cases — same
 * shape contiguous, tensor op scalar, row broadcast — become one long row.
 * Rows are processed in blocks: operands already stored in the compute
 * representation with unit stride are read in place, others are gathered
 * (and widened: f16/bf16 -> f32, ints -> i64) into stack buffers.  Large
 * index spaces are split across the pool; each chunk restarts the
 * multi-index, so threaded and serial runs compute the same values.
 * Operands that all share one dense permuted layout (a transposed view)
 * keep it: the output takes it and the buffers are walked flat
 * (keeps_layout; cast too).  A transposed operand among others is read
 * by a tile walk of the output (ew_tiled); f16/bf16 binary and unary ops
 * of operands read in place take fused widen-compute-narrow kernels
 * (ew_block_half, ew_block_unh). */
#include <math.h>
#include <string.h>

#include "flex_internal.h"

struct ew {
  int nin;
  const char *src[3];
  bext_dtype dt[3];
  int rk[3];                          /* representation each input is read in */
  int64_t st[3][BEXT_MAX_RANK];       /* broadcast strides over the out shape */
  char *dst;
  bext_dtype odt;
  int rin, rout;                      /* compute / output representations */
  int rank;
  int64_t shape[BEXT_MAX_RANK];
  bool stream;                        /* output past bxfx_stream_min: blocks go out by stream_out */
  signed char binh;                   /* BXFX_BIN_* + 1 of the fused half kernel, 0 none */
  signed char cmph;                   /* BXFX_CMP_* + 1 of the fused half comparison, 0 none */
  signed char hk;                     /* BXFX_H_* of binh / cmph / unh */
  signed char unh;                    /* BXFX_UN_* + 1 of the fused half unary kernel, 0 none */
  bool raw2;                          /* mask op on a half: 16-bit patterns (ew_block_mask2) */
  bool clamph;                        /* clamp of a half operand: the fused kernel (clamp_half) */
  bool powih;                         /* powi (|i0| <= BXFX_POWI_MAX) of one: powi_half */
  enum bxr_opcode op;                 /* scalar forms mapped to binary ones */
  double p0, p1;                      /* clamp bounds (float reprs) */
  int64_t i0, i1;                     /* clamp bounds (int repr), powi exponent */
  union { float f; double d; int64_t i; uint8_t b; } sv;  /* scalar operand */
  const bext_tensor *tin[3];          /* tensor inputs read through st (not flat, not scalar) */
  bext_tensor *tmp[3];                /* contiguous copies (layouts the tile walk does not take) */
};

/* The element rules (wrapping ints, x/0 and x%0 are 0, floored rem, NaN-
 * winning max/min, relu, sign, int pow, round) are bxk_scalar.h's. */

/* ------------------------------------------------------------- kernels */
/* Each case is one tight loop over n elements of contiguous arrays. */
#define L1(T, OT, expr) { const T *a = in[0]; OT *o = out; for (size_t i = 0; i < n; i++) { T x = a[i]; o[i] = (expr); } } break
#define L2(T, OT, expr) { const T *a = in[0], *b = in[1]; OT *o = out; for (size_t i = 0; i < n; i++) { T x = a[i], y = b[i]; o[i] = (expr); } } break

static bool is_fast_f32(const struct ew *E) {
  if (E->rin != BXFX_R_F32 || E->nin != 2) return false;
  switch (E->op) {
  case BXR_OP_ADD: case BXR_OP_SUB: case BXR_OP_MUL: case BXR_OP_DIV:
  case BXR_OP_MAX: case BXR_OP_MIN: return true;
  default: return false;
  }
}

static bool is_compare(enum bxr_opcode c);

/* f32 comparisons (of two tensors, or of a tensor and an f32 threshold,
 * see f32_threshold) run as vector kernels with the same broadcast modes. */
static bool is_fast_cmp(const struct ew *E) {
  return E->rin == BXFX_R_F32 && E->nin == 2 && is_compare(E->op);
}

static void kernel(const struct ew *E, const void *const *in, const int *bc, void *out, size_t n) {
  const struct bxfx_kernels *K = bxfx_kern();
  if (is_fast_cmp(E)) {
    static const int map[] = { [BXR_OP_EQ] = BXFX_CMP_eq, [BXR_OP_NE] = BXFX_CMP_ne,
                               [BXR_OP_GT] = BXFX_CMP_gt, [BXR_OP_GE] = BXFX_CMP_ge,
                               [BXR_OP_LT] = BXFX_CMP_lt, [BXR_OP_LE] = BXFX_CMP_le };
    int mode = bc[0] ? BXFX_SV : bc[1] ? BXFX_VS : BXFX_VV;
    K->cmp[map[E->op]](in[0], in[1], out, n, mode);
    return;
  }
  if (is_fast_f32(E)) {
    static const int map[] = { [BXR_OP_ADD] = BXFX_BIN_add, [BXR_OP_SUB] = BXFX_BIN_sub,
                               [BXR_OP_MUL] = BXFX_BIN_mul, [BXR_OP_DIV] = BXFX_BIN_div,
                               [BXR_OP_MAX] = BXFX_BIN_max, [BXR_OP_MIN] = BXFX_BIN_min };
    int mode = bc[0] ? BXFX_SV : bc[1] ? BXFX_VS : BXFX_VV;
    K->bin[map[E->op]](in[0], in[1], out, n, mode);
    return;
  }
  const float pf0 = (float)E->p0, pf1 = (float)E->p1;
  const double pd0 = E->p0, pd1 = E->p1;
  const int64_t pi0 = E->i0, pi1 = E->i1;
  switch (E->rin) {
  case BXFX_R_F32:
    switch (E->op) {
    case BXR_OP_REM: K->rem_f32(in[0], in[1], out, n); break;
    case BXR_OP_POW: K->pow_f32(in[0], in[1], out, n); break;
    case BXR_OP_EXP: K->un[BXFX_UN_exp](in[0], out, n); break;
    case BXR_OP_LOG: K->un[BXFX_UN_log](in[0], out, n); break;
    case BXR_OP_LOG1P: K->un[BXFX_UN_log1p](in[0], out, n); break;
    case BXR_OP_SQRT: K->un[BXFX_UN_sqrt](in[0], out, n); break;
    case BXR_OP_RSQRT: K->un[BXFX_UN_rsqrt](in[0], out, n); break;
    case BXR_OP_SIN: K->un[BXFX_UN_sin](in[0], out, n); break;
    case BXR_OP_COS: K->un[BXFX_UN_cos](in[0], out, n); break;
    case BXR_OP_TANH: K->un[BXFX_UN_tanh](in[0], out, n); break;
    case BXR_OP_ERF: K->un[BXFX_UN_erf](in[0], out, n); break;
    case BXR_OP_SIGMOID: K->un[BXFX_UN_sigmoid](in[0], out, n); break;
    case BXR_OP_NEG: K->un[BXFX_UN_neg](in[0], out, n); break;
    case BXR_OP_ABS: K->un[BXFX_UN_abs](in[0], out, n); break;
    case BXR_OP_RELU: K->un[BXFX_UN_relu](in[0], out, n); break;
    case BXR_OP_RECIP: K->un[BXFX_UN_recip](in[0], out, n); break;
    case BXR_OP_FLOOR: K->un[BXFX_UN_floor](in[0], out, n); break;
    case BXR_OP_CEIL: K->un[BXFX_UN_ceil](in[0], out, n); break;
    case BXR_OP_ROUND: K->un[BXFX_UN_round](in[0], out, n); break;
    case BXR_OP_SIGN: K->un[BXFX_UN_sign](in[0], out, n); break;
    case BXR_OP_CLAMP: K->clamp_f32(in[0], out, n, pf0, pf1); break;
    case BXR_OP_POWI:
      if (pi0 >= -BXFX_POWI_MAX && pi0 <= BXFX_POWI_MAX) { K->powi_f32(in[0], out, n, (int)pi0); break; }
      L1(float, float, (float)pow((double)x, (double)pi0));
    default: BXR_ASSERT(!"flex: f32 op without kernel");
    }
    break;
  case BXFX_R_F64:
    switch (E->op) {
    case BXR_OP_ADD: L2(double, double, x + y);
    case BXR_OP_SUB: L2(double, double, x - y);
    case BXR_OP_MUL: L2(double, double, x * y);
    case BXR_OP_DIV: L2(double, double, x / y);
    case BXR_OP_REM: K->rem_f64(in[0], in[1], out, n); break;
    case BXR_OP_POW: K->pow_f64(in[0], in[1], out, n); break;
    case BXR_OP_MAX: L2(double, double, bxk_max_f64(x, y));
    case BXR_OP_MIN: L2(double, double, bxk_min_f64(x, y));
    case BXR_OP_EQ: L2(double, uint8_t, x == y);
    case BXR_OP_NE: L2(double, uint8_t, x != y);
    case BXR_OP_GT: L2(double, uint8_t, x > y);
    case BXR_OP_GE: L2(double, uint8_t, x >= y);
    case BXR_OP_LT: L2(double, uint8_t, x < y);
    case BXR_OP_LE: L2(double, uint8_t, x <= y);
    case BXR_OP_EXP: K->un_f64[BXFX_UND_exp](in[0], out, n); break;
    case BXR_OP_LOG: K->un_f64[BXFX_UND_log](in[0], out, n); break;
    case BXR_OP_LOG1P: K->un_f64[BXFX_UND_log1p](in[0], out, n); break;
    case BXR_OP_SQRT: K->un_f64[BXFX_UND_sqrt](in[0], out, n); break;
    case BXR_OP_RSQRT: K->un_f64[BXFX_UND_rsqrt](in[0], out, n); break;
    case BXR_OP_SIN: K->un_f64[BXFX_UND_sin](in[0], out, n); break;
    case BXR_OP_COS: K->un_f64[BXFX_UND_cos](in[0], out, n); break;
    case BXR_OP_TANH: K->un_f64[BXFX_UND_tanh](in[0], out, n); break;
    case BXR_OP_ERF: K->un_f64[BXFX_UND_erf](in[0], out, n); break;
    case BXR_OP_SIGMOID: K->un_f64[BXFX_UND_sigmoid](in[0], out, n); break;
    case BXR_OP_NEG: L1(double, double, -x);
    case BXR_OP_ABS: L1(double, double, fabs(x));
    case BXR_OP_RELU: L1(double, double, bxk_relu_f64(x));
    case BXR_OP_RECIP: K->un_f64[BXFX_UND_recip](in[0], out, n); break;
    case BXR_OP_FLOOR: K->un_f64[BXFX_UND_floor](in[0], out, n); break;
    case BXR_OP_CEIL: K->un_f64[BXFX_UND_ceil](in[0], out, n); break;
    case BXR_OP_ROUND: K->un_f64[BXFX_UND_round](in[0], out, n); break;
    case BXR_OP_SIGN: L1(double, double, bxk_sign_f64(x));
    case BXR_OP_CLAMP: L1(double, double, x < pd0 ? pd0 : x > pd1 ? pd1 : x);
    case BXR_OP_POWI:
      if (pi0 >= -BXFX_POWI_MAX && pi0 <= BXFX_POWI_MAX) { K->powi_f64(in[0], out, n, (int)pi0); break; }
      L1(double, double, pow(x, (double)pi0));
    default: BXR_ASSERT(!"flex: f64 op without kernel");
    }
    break;
  case BXFX_R_I64:
    switch (E->op) {
    case BXR_OP_ADD: L2(int64_t, int64_t, bxk_add_i64(x, y));
    case BXR_OP_SUB: L2(int64_t, int64_t, bxk_sub_i64(x, y));
    case BXR_OP_MUL: L2(int64_t, int64_t, bxk_mul_i64(x, y));
    case BXR_OP_DIV: L2(int64_t, int64_t, bxk_div_i64(x, y));
    case BXR_OP_REM: L2(int64_t, int64_t, bxk_rem_i64(x, y));
    case BXR_OP_POW: L2(int64_t, int64_t, bxk_pow_i64(x, y));
    case BXR_OP_MAX: L2(int64_t, int64_t, bxk_max_i64(x, y));
    case BXR_OP_MIN: L2(int64_t, int64_t, bxk_min_i64(x, y));
    case BXR_OP_EQ: L2(int64_t, uint8_t, x == y);
    case BXR_OP_NE: L2(int64_t, uint8_t, x != y);
    case BXR_OP_GT: L2(int64_t, uint8_t, x > y);
    case BXR_OP_GE: L2(int64_t, uint8_t, x >= y);
    case BXR_OP_LT: L2(int64_t, uint8_t, x < y);
    case BXR_OP_LE: L2(int64_t, uint8_t, x <= y);
    case BXR_OP_NEG: L1(int64_t, int64_t, bxk_neg_i64(x));
    case BXR_OP_ABS: L1(int64_t, int64_t, bxk_abs_i64(x));
    case BXR_OP_RELU: L1(int64_t, int64_t, bxk_relu_i64(x));
    case BXR_OP_SIGN: L1(int64_t, int64_t, bxk_sign_i64(x));
    case BXR_OP_CLAMP: L1(int64_t, int64_t, x < pi0 ? pi0 : x > pi1 ? pi1 : x);
    default: BXR_ASSERT(!"flex: int op without kernel");
    }
    break;
  default: /* u8: bool logic and bool comparisons, by the byte kernels
              * native_width runs (the variant's ISA; these loops compiled
              * here were a third of a transposed bool op's time) */
    switch (E->op) {
    case BXR_OP_AND: K->bop(BXFX_BOP_and, in[0], in[1], out, n); break;
    case BXR_OP_OR: K->bop(BXFX_BOP_or, in[0], in[1], out, n); break;
    case BXR_OP_XOR: K->bop(BXFX_BOP_xor, in[0], in[1], out, n); break;
    case BXR_OP_NOT: K->bop(BXFX_BOP_not, in[0], in[0], out, n); break;
    case BXR_OP_EQ: K->bop(BXFX_BOP_eq, in[0], in[1], out, n); break;
    case BXR_OP_NE: K->bop(BXFX_BOP_ne, in[0], in[1], out, n); break;
    default: BXR_ASSERT(!"flex: bool op without kernel");
    }
    break;
  }
}

/* mask_where: in[0] t, in[1] mask (u8), in[2] value; same representation
 * for t and value, so this is a byte select.  Both operands are read
 * unconditionally and selected with a mask (m ? b : a as bits): the
 * compiler cannot speculate a load C reads on one side of ?: only, so the
 * plain form branched per element, mispredicting on a random mask (~10 ns
 * an element). */
#define BXFX_WHERE_LOOP(T)                                                    \
  {                                                                           \
    const T *a = (const void *)t, *b = (const void *)v;                       \
    T *r = (void *)o;                                                         \
    for (size_t i = 0; i < n; i++) {                                          \
      T x = a[i], y = b[i], k = (T)0 - (T)(m[i] != 0);                        \
      r[i] = (y & k) | (x & ~k);                                              \
    }                                                                         \
  }                                                                           \
  break
static void kernel_where(const struct ew *E, const void *const *in, void *out, size_t n) {
  size_t es = bxfx_repr_size(E->rin);
  const char *t = in[0], *v = in[2];
  const uint8_t *m = in[1];
  char *o = out;
  switch (es) {
  case 8: BXFX_WHERE_LOOP(uint64_t);
  case 4: BXFX_WHERE_LOOP(uint32_t);
  default: BXFX_WHERE_LOOP(uint8_t);
  }
}
#undef BXFX_WHERE_LOOP

/* ---------------------------------------------------------------- engine */
/* Per-thread block state: the gather/widen buffers and the splat cache
 * (an element splat in buf[k], and for how many lanes). */
struct ew_blk {
  _Alignas(32) char buf[3][BXFX_BLK * 8];
  _Alignas(32) char obuf[BXFX_BLK * 8];
  const char *bsrc[3];
  size_t bn[3];
};

/* An f16/bf16 binary op or comparison of operands of that type (or an
 * f32 scalar) in the fused kernel (bin_half, cmp_half), when each operand
 * is read in place or broadcast; false leaves the block to the widen /
 * compute / narrow path. */
static bool ew_block_half(const struct ew *E, const char *const *in, const int64_t *ist, size_t lin, size_t n) {
  const uint16_t *p[2];
  float s = 0;
  int mode = BXFX_VV;
  for (int k = 0; k < 2; k++) {
    int64_t st = ist[k];
    const char *q = in[k];
    p[k] = (const uint16_t *)(const void *)q;
    if (st == 1 && E->dt[k] != BEXT_F32) continue;
    if (st != 0 || mode != BXFX_VV) return false;
    s = E->dt[k] == BEXT_F32 ? *(const float *)(const void *)q
      : E->hk == BXFX_H_F16 ? bxk_f16_to_f32(*p[k]) : bxk_bf16_to_f32(*p[k]);
    mode = k == 0 ? BXFX_SV : BXFX_VS;
  }
  if (E->binh)
    bxfx_kern()->bin_half[E->hk][E->binh - 1](p[0], p[1], s, (uint16_t *)(void *)(E->dst + lin * 2), n, mode);
  else
    bxfx_kern()->cmp_half[E->hk][E->cmph - 1](p[0], p[1], s, (uint8_t *)E->dst + lin, n, mode);
  return true;
}

/* A unary op (but sigmoid), clamp or powi on a half operand read in
 * place: the fused kernel (un_half, clamp_half, powi_half). */
static bool ew_block_unh(const struct ew *E, const char *const *in, const int64_t *ist, size_t lin, size_t n) {
  if (ist[0] != 1) return false;
  const uint16_t *a = (const uint16_t *)(const void *)in[0];
  uint16_t *o = (uint16_t *)(void *)(E->dst + lin * 2);
  if (E->clamph) bxfx_kern()->clamp_half[E->hk](a, o, n, (float)E->p0, (float)E->p1);
  else if (E->powih) bxfx_kern()->powi_half[E->hk](a, o, n, (int)E->i0);
  else bxfx_kern()->un_half[E->hk][E->unh - 1](a, o, n);
  return true;
}

/* mask_where / mask_fill of halves here (broadcast or strided operands):
 * the elements move as 16-bit patterns, gathered into the block buffers,
 * and mask_sel picks them.  Through the f32 representation a signalling
 * NaN came out quiet, where the reference copies it as it is. */
static void ew_block_mask2(const struct ew *E, struct ew_blk *B, const char *const *in, const int64_t *ist,
                           size_t lin, size_t n) {
  const void *p[3];
  for (int k = 0; k < 3; k++) {
    const size_t es = k == 1 ? 1 : 2;
    if (ist[k] == 1) { p[k] = in[k]; continue; }
    char *buf = B->buf[k];
    for (size_t i = 0; i < n; i++) memcpy(buf + i * es, in[k] + (int64_t)i * ist[k] * (int64_t)es, es);
    B->bsrc[k] = NULL;
    p[k] = buf;
  }
  bxfx_kern()->mask_sel(2, p[0], p[1], p[2], E->dst + lin * 2, n, false);
}

/* One block: n (<= BXFX_BLK) elements along the innermost dim, input k
 * from in[k] by ist[k] elements, the output at linear index lin. */
static void ew_block(const struct ew *E, struct ew_blk *B, const char *const *in, const int64_t *ist, size_t lin,
                     size_t n) {
  if (E->raw2) { ew_block_mask2(E, B, in, ist, lin, n); return; }
  if ((E->binh || E->cmph) && ew_block_half(E, in, ist, lin, n)) return;
  if ((E->unh || E->clamph || E->powih) && ew_block_unh(E, in, ist, lin, n)) return;
  const int nin = E->nin;
  const bool fast = is_fast_f32(E) || is_fast_cmp(E);
  const void *ip[3];
  int bc[3] = { 0, 0, 0 };
  for (int k = 0; k < nin; k++) {
    int64_t s = ist[k];
    const char *p = in[k];
    size_t rs = bxfx_repr_size(E->rk[k]);
    char *buf = B->buf[k];
    if (s == 0) {
      /* The f32 kernels take at most one broadcast operand. */
      if (fast && !(k == 1 && bc[0])) {
        bxfx_load(buf, E->rk[k], p, E->dt[k], 0, 1);
        B->bsrc[k] = NULL;   /* buf now holds one lane only */
        bc[k] = 1;
      } else if (p != B->bsrc[k] || B->bn[k] < n) {
        /* generic kernels see full vectors: splat the value, once for
         * as long as the blocks keep reading the same element (a
         * tensor-scalar op: the whole chunk) */
        bxfx_load(buf, E->rk[k], p, E->dt[k], 0, 1);
        switch (rs) {
        case 8: { uint64_t v; memcpy(&v, buf, 8); for (size_t i = 1; i < n; i++) ((uint64_t *)(void *)buf)[i] = v; } break;
        case 4: { uint32_t v; memcpy(&v, buf, 4); for (size_t i = 1; i < n; i++) ((uint32_t *)(void *)buf)[i] = v; } break;
        default: memset(buf + 1, buf[0], n - 1); break;
        }
        B->bsrc[k] = p;
        B->bn[k] = n;
      }
      ip[k] = buf;
    } else if (s == 1 && bxfx_is_native(E->dt[k], E->rk[k])) {
      ip[k] = p;
    } else {
      bxfx_load(buf, E->rk[k], p, E->dt[k], s, n);
      B->bsrc[k] = NULL;
      ip[k] = buf;
    }
  }
  char *dp = E->dst + lin * bext_dtype_size(E->odt);
  const bool onative = bxfx_is_native(E->odt, E->rout);
  /* a streamed output (onative, ew_run) is computed in obuf, in L1 */
  void *op = onative && !E->stream ? (void *)dp : (void *)B->obuf;
  if (E->op == BXR_OP_MASK_WHERE) kernel_where(E, ip, op, n);
  else if (E->op == BXR_OP_CAST) memcpy(op, ip[0], n * bxfx_repr_size(E->rout));
  else kernel(E, ip, bc, op, n);
  if (!onative) bxfx_store(dp, E->odt, B->obuf, E->rout, n);
  else if (E->stream) bxfx_kern()->stream_out(dp, B->obuf, n * bext_dtype_size(E->odt));
}

static void ew_chunk(void *ctx, size_t b, size_t e) {
  const struct ew *E = ctx;
  const int R = E->rank, nin = E->nin;
  const int64_t L = E->shape[R - 1];
  struct ew_blk B;
  memset(B.bsrc, 0, sizeof B.bsrc);
  memset(B.bn, 0, sizeof B.bn);
  int64_t idx[BEXT_MAX_RANK], off[3] = { 0, 0, 0 };
  size_t rem = b;
  for (int d = R - 1; d >= 0; d--) {
    idx[d] = (int64_t)(rem % (size_t)E->shape[d]);
    rem /= (size_t)E->shape[d];
  }
  for (int k = 0; k < nin; k++)
    for (int d = 0; d < R; d++) off[k] += idx[d] * E->st[k][d];
  size_t lin = b;
  while (lin < e) {
    size_t n = (size_t)(L - idx[R - 1]);
    if (n > e - lin) n = e - lin;
    if (n > BXFX_BLK) n = BXFX_BLK;
    const char *in[3];
    int64_t ist[3];
    for (int k = 0; k < nin; k++) {
      in[k] = E->src[k] + off[k] * (int64_t)bext_dtype_size(E->dt[k]);
      ist[k] = E->st[k][R - 1];
    }
    ew_block(E, &B, in, ist, lin, n);
    /* advance the multi-index by n (n never crosses a row end) */
    lin += n;
    idx[R - 1] += (int64_t)n;
    for (int k = 0; k < nin; k++) off[k] += (int64_t)n * E->st[k][R - 1];
    if (idx[R - 1] == L) {
      for (int k = 0; k < nin; k++) off[k] -= L * E->st[k][R - 1];
      idx[R - 1] = 0;
      for (int d = R - 2; d >= 0; d--) {
        idx[d]++;
        for (int k = 0; k < nin; k++) off[k] += E->st[k][d];
        if (idx[d] < E->shape[d]) break;
        for (int k = 0; k < nin; k++) off[k] -= E->shape[d] * E->st[k][d];
        idx[d] = 0;
      }
    }
  }
  if (E->stream) bxfx_stream_fence();
}

/* ------------------------------------------------------------ tile walk */
/* An input whose innermost stride is neither 1 nor 0 (a transposed view)
 * but that is contiguous along the next dim: reading output rows in order
 * would take each of its elements from another line (and page).  The
 * output is walked in BXFX_TILE_R x BXFX_TILE_C tiles instead, row by row
 * through ew_block (the row walk's kernels): within a tile that input is
 * BXFX_TILE_C short runs of consecutive elements, read once into cache;
 * 4-, 2- and 1-byte operands are transposed into a tile buffer by 8x8
 * register blocks (bytes by 16x16 ones where the tile allows), 8-byte
 * ones gathered per row.  No full copy of the
 * operand and no second pass over memory.  Tiles, not rows, go to the
 * pool's threads. */
#define BXFX_TILE_R 32   /* rows: two lines of the transposed operand per column */
#define BXFX_TILE_C 256  /* columns: long rows, so a block's fixed cost is spread */

static bool ew_tiled(const struct ew *E) {
  const int R = E->rank;
  if (R < 2 || (size_t)bxr_numel(R, E->shape) < 4 * BXFX_BLK) return false;
  bool strided = false;
  for (int k = 0; k < E->nin; k++) {
    int64_t s = E->st[k][R - 1];
    if (s == 0 || s == 1) continue;
    if (E->st[k][R - 2] != 1 && E->st[k][R - 2] != 0) return false;
    strided = true;
  }
  return strided;
}

/* Per-thread tile state: a strided 4-, 2- or 1-byte operand's tile,
 * transposed into row order by 8x8 register blocks (tile8_u32/u16/u8, as
 * bext_contiguous does), so its rows are read like a contiguous
 * operand's (bool and half rows gathered byte by byte ran at 1-5% of
 * copy bandwidth). */
struct ew_tilebuf {
  _Alignas(32) uint32_t t[3][BXFX_TILE_R * BXFX_TILE_C];
};

/* Columns ahead of the one being transposed whose runs are prefetched
 * (bxfx_prefetch_runs): past the tile's end they are the next tile's of
 * the same tile row, the one a thread takes next. */
#define BXFX_TILE_PF 32

static void ew_tile_chunk(void *ctx, size_t b, size_t e) {
  const struct ew *E = ctx;
  const int R = E->rank, nin = E->nin;
  const int64_t rows = E->shape[R - 2], cols = E->shape[R - 1];
  const int64_t tr = (rows + BXFX_TILE_R - 1) / BXFX_TILE_R, tc = (cols + BXFX_TILE_C - 1) / BXFX_TILE_C;
  const struct bxfx_kernels *K = bxfx_kern();
  struct ew_blk B;
  memset(B.bsrc, 0, sizeof B.bsrc);
  memset(B.bn, 0, sizeof B.bn);
  /* per thread, not on the stack: 96 KiB would be a risk on a caller's
   * thread made with a small stack (the pool's caller runs chunks too) */
  static _Thread_local struct ew_tilebuf T;
  size_t esz[3];
  for (int k = 0; k < nin; k++) esz[k] = bext_dtype_size(E->dt[k]);
  const size_t osz = bext_dtype_size(E->odt);
  for (size_t t = b; t < e; t++) {
    /* tile t: outer index o (over dims 0..R-3), tile row i, tile column j */
    int64_t j = (int64_t)t % tc, i = ((int64_t)t / tc) % tr, o = (int64_t)t / tc / tr;
    int64_t base[3] = { 0, 0, 0 }, rem = o;
    for (int d = R - 3; d >= 0; d--) {
      int64_t x = rem % E->shape[d];
      rem /= E->shape[d];
      for (int k = 0; k < nin; k++) base[k] += x * E->st[k][d];
    }
    const int64_t r0 = i * BXFX_TILE_R, c0 = j * BXFX_TILE_C;
    const int64_t h = r0 + BXFX_TILE_R < rows ? BXFX_TILE_R : rows - r0;
    const size_t n = (size_t)(c0 + BXFX_TILE_C < cols ? BXFX_TILE_C : cols - c0);
    /* Full 8x8 blocks of a strided 4-, 2- or 1-byte operand are
     * transposed into T.t[k] (row stride BXFX_TILE_C elements); ragged
     * tiles and 8-byte operands are gathered per row. */
    bool tb[3] = { false, false, false };
    for (int k = 0; k < nin; k++) {
      const int64_t s1 = E->st[k][R - 1], es = (int64_t)esz[k];
      if (s1 == 0 || s1 == 1 || es == 8 || E->st[k][R - 2] != 1 || (h & 7) || (n & 7)) continue;
      const char *src = E->src[k] + (base[k] + r0 + c0 * s1) * es;
      char *dst = (char *)T.t[k];
      /* bytes by 16x16 blocks where the tile has them (a fifth of the
       * instructions per byte of tile8_u8's) */
      const int64_t bw = es == 1 && !(h & 15) && !(n & 15) ? 16 : 8;
      for (size_t cb = 0; cb < n; cb += (size_t)bw) {
        if (c0 + (int64_t)cb + BXFX_TILE_PF + bw <= cols)
          bxfx_prefetch_runs(src + ((int64_t)cb + BXFX_TILE_PF) * s1 * es, s1 * es, bw, h * es, false);
        for (int64_t rb = 0; rb < h; rb += bw) {
          char *d = dst + (rb * BXFX_TILE_C + (int64_t)cb) * es;
          const char *q = src + (rb + (int64_t)cb * s1) * es;
          switch (es) {
          case 4: K->tile8_u32((uint32_t *)(void *)d, BXFX_TILE_C, (const uint32_t *)(const void *)q, s1); break;
          case 2: K->tile8_u16((uint16_t *)(void *)d, BXFX_TILE_C, (const uint16_t *)(const void *)q, s1); break;
          default:
            if (bw == 16) K->tile16_u8((uint8_t *)d, BXFX_TILE_C, (const uint8_t *)q, s1);
            else K->tile8_u8((uint8_t *)d, BXFX_TILE_C, (const uint8_t *)q, s1);
            break;
          }
        }
      }
      tb[k] = true;
    }
    for (int64_t r = r0; r < r0 + h; r++) {
      const char *in[3];
      int64_t ist[3];
      for (int k = 0; k < nin; k++) {
        if (tb[k]) {
          in[k] = (const char *)T.t[k] + (r - r0) * BXFX_TILE_C * (int64_t)esz[k];
          ist[k] = 1;
        } else {
          in[k] = E->src[k] + (base[k] + r * E->st[k][R - 2] + c0 * E->st[k][R - 1]) * (int64_t)esz[k];
          ist[k] = E->st[k][R - 1];
          /* this row's part of the next tile, the one the thread takes
           * next: 32 interleaved 1 KiB runs are more streams than the
           * hardware prefetchers follow */
          if (ist[k] == 1 && c0 + 2 * (int64_t)n <= cols)
            bxfx_prefetch_runs(in[k] + n * esz[k], 0, 1, (int64_t)(n * esz[k]), false);
        }
      }
      const size_t lin = (size_t)((o * rows + r) * cols + c0);
      /* this row's part of the next tile's output, as for the inputs:
       * without it each 256-byte run of a bool output (1 KiB of f32)
       * stalled the stores on its lines (a third of a comparison's
       * time); streamed outputs skip the line reads altogether */
      if (!E->stream && c0 + 2 * (int64_t)n <= cols)
        bxfx_prefetch_runs(E->dst + (lin + n) * osz, 0, 1, (int64_t)(n * osz), true);
      ew_block(E, &B, in, ist, lin, n);
    }
  }
  if (E->stream) bxfx_stream_fence();
}

/* Sets E's index space to out's shape with each input's broadcast strides,
 * then drops size-1 dims and merges dims contiguous for every operand. */
static void ew_shape(struct ew *E, int rank, const int64_t *shape) {
  int r = 0;
  int64_t sh[BEXT_MAX_RANK], st[3][BEXT_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    if (shape[d] == 1) continue;
    if (r > 0) {
      bool merge = true;
      for (int k = 0; k < E->nin; k++)
        if (st[k][r - 1] != E->st[k][d] * shape[d]) merge = false;
      if (merge) {
        sh[r - 1] *= shape[d];
        for (int k = 0; k < E->nin; k++) st[k][r - 1] = E->st[k][d];
        continue;
      }
    }
    sh[r] = shape[d];
    for (int k = 0; k < E->nin; k++) st[k][r] = E->st[k][d];
    r++;
  }
  if (r == 0) { /* rank 0 or all ones: one element */
    sh[0] = 1;
    for (int k = 0; k < E->nin; k++) st[k][0] = 0;
    r = 1;
  }
  E->rank = r;
  memcpy(E->shape, sh, sizeof(int64_t) * (size_t)r);
  for (int k = 0; k < E->nin; k++) memcpy(E->st[k], st[k], sizeof(int64_t) * (size_t)r);
}

/* A large input of the output's shape whose innermost dim is not its
 * contiguous one (a transposed or permuted view): the blocks would gather
 * each element from another row (another line and page).  A tiled copy
 * (bxfx_copy_strided) into a Flex tensor (the caching allocator: no fresh
 * page faults in a loop) makes it contiguous first, for about the cost of
 * one more pass.  Returns the copy (caller releases) or NULL to read t in
 * place. */
static bext_tensor *transposed_copy(const bext_tensor *t, const bext_spec *out) {
  if (t->rank < 2 || t->rank != out->rank || bxr_is_contiguous(t)) return NULL;
  int64_t n = bxr_numel(t->rank, t->shape);
  if (n < 4 * BXFX_BLK) return NULL;
  int last = t->rank - 1;
  while (last > 0 && t->shape[last] == 1) last--;
  /* rows contiguous, or the innermost dim broadcast (an expand: every
   * block reads one element): read in place; a copy would only spend a
   * pass materializing the broadcast */
  if (t->strides[last] == 1 || t->strides[last] == 0) return NULL;
  for (int d = 0; d < t->rank; d++)
    if (t->shape[d] != out->shape[d]) return NULL;
  bext_tensor *c = bxr_tensor_new(t->storage->device, t->dtype, t->rank, t->shape);
  if (!c) return NULL;   /* no memory for the copy: the strided path still works */
  bxfx_copy_strided(bxr_data(c), c->strides, bxr_data(t), t->strides, t->rank, t->shape,
                    bext_dtype_size(t->dtype));
  return c;
}

/* Input k read in place with its broadcast strides over out's shape.  A
 * transposed input stays strided here: ew_run walks it by tiles
 * (ew_tiled) or, where tiles do not fit its layout, copies it first
 * (ew_copy_strided). */
static void ew_input(struct ew *E, int k, const bext_tensor *t, int repr, const bext_spec *out) {
  E->src[k] = bxr_data(t);
  E->dt[k] = t->dtype;
  E->rk[k] = repr;
  E->tin[k] = t;
  bool ok = bxr_broadcast_strides(t, out->rank, out->shape, E->st[k]);
  BXR_ASSERT(ok);
}

/* The fallback for layouts the tile walk does not take: contiguous copies
 * of the transposed inputs (transposed_copy), every tensor input's
 * strides over out's shape set again (ew_shape coalesced them).  Returns
 * whether anything was copied. */
static bool ew_copy_strided(struct ew *E, const bext_tensor *out) {
  bext_spec spec = { .dtype = out->dtype, .rank = out->rank };
  memcpy(spec.shape, out->shape, sizeof(int64_t) * (size_t)out->rank);
  bool any = false;
  for (int k = 0; k < E->nin; k++)
    if (E->tin[k] && (E->tmp[k] = transposed_copy(E->tin[k], &spec)) != NULL) {
      E->src[k] = bxr_data(E->tmp[k]);
      E->tin[k] = E->tmp[k];
      any = true;
    }
  if (!any) return false;
  for (int k = 0; k < E->nin; k++) {
    if (!E->tin[k]) { memset(E->st[k], 0, sizeof E->st[k]); continue; }
    bool ok = bxr_broadcast_strides(E->tin[k], out->rank, out->shape, E->st[k]);
    BXR_ASSERT(ok);
  }
  return true;
}

/* ---------------------------------------------------------- kept layout */
/* True when t is dense (its elements fill numel consecutive slots from
 * bxr_data(t), in some order of the dims) with positive strides but not
 * row-major: a transposed or permuted view of a whole buffer. */
static bool dense_permuted(const bext_tensor *t) {
  if (bxr_is_contiguous(t)) return false;
  int64_t st[BEXT_MAX_RANK], sh[BEXT_MAX_RANK];
  int r = 0;
  for (int d = 0; d < t->rank; d++) {
    if (t->shape[d] == 1) continue;
    if (t->strides[d] <= 0) return false;
    int j = r++;   /* insertion by stride, smallest first */
    while (j > 0 && st[j - 1] > t->strides[d]) { st[j] = st[j - 1]; sh[j] = sh[j - 1]; j--; }
    st[j] = t->strides[d];
    sh[j] = t->shape[d];
  }
  for (int i = 0; i < r; i++)
    if (st[i] != (i == 0 ? 1 : st[i - 1] * sh[i - 1])) return false;
  return r > 0;
}

/* Every tensor input of a large op has the output's shape and one and the
 * same dense permuted layout (x^T, exp(x^T), x^T * 2, a^T + b^T): then
 * the output takes that layout too and the op runs over the buffers as
 * flat arrays, with no transposition at all (PyTorch keeps layouts the
 * same way).  Walking the logical order instead would gather each element
 * from another row, or cost a tiled copy first (transposed_copy). */
static bool keeps_layout(const struct bxr_op *op, int ntensors) {
  if (bxr_numel(op->out.rank, op->out.shape) < 4 * BXFX_BLK) return false;
  const bext_tensor *a = op->in[0];
  if (!dense_permuted(a)) return false;
  for (int k = 0; k < ntensors; k++) {
    const bext_tensor *t = op->in[k];
    /* (op->same_shape false tells nothing: compare) */
    if (!op->same_shape && !bxr_same_shape(t->rank, t->shape, op->out.rank, op->out.shape)) return false;
    for (int d = 0; k > 0 && d < a->rank; d++)
      if (a->shape[d] != 1 && t->strides[d] != a->strides[d]) return false;
  }
  return true;
}

/* A fresh output of op laid out like `like` (dense permuted): a flat
 * buffer viewed with like's strides. */
static bext_tensor *output_like(const struct bxr_op *op, const bext_tensor *like) {
  int64_t n = bxr_numel(op->out.rank, op->out.shape);
  bext_tensor *flat = bxr_tensor_new(op->device, op->out.dtype, 1, &n);
  if (!flat) return NULL;
  bext_tensor *v = bxr_tensor_view(flat, op->out.rank, op->out.shape, like->strides, 0);
  bext_release(flat);
  return v;
}

/* Input k of a kept-layout op: its buffer, read as a flat array. */
static void ew_flat_input(struct ew *E, int k, const bext_tensor *t, int repr) {
  E->src[k] = bxr_data(t);
  E->dt[k] = t->dtype;
  E->rk[k] = repr;
  memset(E->st[k], 0, sizeof E->st[k]);
  E->st[k][0] = 1;
}

static void ew_free_tmp(struct ew *E) {
  for (int k = 0; k < 3; k++)
    if (E->tmp[k]) bext_release(E->tmp[k]);
}

/* A scalar operand as input k: a one-element broadcast of E->sv. */
static void ew_scalar_input(struct ew *E, int k, int repr) {
  static const bext_dtype native[] = { [BXFX_R_F32] = BEXT_F32, [BXFX_R_F64] = BEXT_F64,
                                       [BXFX_R_I64] = BEXT_I64, [BXFX_R_U8] = BEXT_U8 };
  E->src[k] = (const char *)&E->sv;
  E->dt[k] = native[repr];
  E->rk[k] = repr;
  memset(E->st[k], 0, sizeof E->st[k]);
}

static size_t ew_cost(const struct ew *E) {
  switch (E->op) {
  case BXR_OP_EXP: case BXR_OP_LOG: case BXR_OP_LOG1P: case BXR_OP_SIN: case BXR_OP_COS:
  case BXR_OP_TANH: case BXR_OP_ERF: case BXR_OP_SIGMOID: case BXR_OP_POW: case BXR_OP_POWI:
  case BXR_OP_REM: return 8;
  default: return E->rin == BXFX_R_F32 && !bxfx_is_native(E->odt, E->rout) ? 2 : 1;
  }
}

/* Whether E's kernel keeps up with memory, so that the lines a plain
 * store reads first are its cost.  Slower ones (transcendentals, pow,
 * rem, and by measurement sqrt, rsqrt, recip, f64 div and f64 rounding by
 * libm) hide that read behind their arithmetic, and their blocks staged
 * through L1 and streamed out in a burst ran 5-35% slower (200
 * calls alternating in one process, and the matrix, 4M elements; again
 * on 2026-12-03 for f32 sqrt, recip and powi: 4M, 2 threads, min of 40
 * rounds of 5 calls, 0.45 -> 0.51, 0.45 -> 0.59, 0.40 -> 0.59 ms).  f32
 * div in vdivps lanes (0.12 ns an element in L1, one thread) keeps up:
 * streamed, [2048, 2048] / [2048, 2048] 0.86 -> 0.63 ms and / [2048]
 * 0.69 -> 0.59 ms (medians 1.01 -> 0.68, 0.79 -> 0.61). */
static bool ew_memory_bound(const struct ew *E) {
  switch (E->op) {
  case BXR_OP_DIV: return E->rin == BXFX_R_F32 && bxfx_kern() == &bxfx_kern_avx2;
  case BXR_OP_SQRT: case BXR_OP_RSQRT: case BXR_OP_RECIP: return false;
  /* f64 rounding is vroundpd lanes in the AVX2 table, a libm call per
   * element in the baseline one (no roundsd before SSE4.1): 48-66% of
   * copy bandwidth there, slower streamed */
  case BXR_OP_FLOOR: case BXR_OP_CEIL: case BXR_OP_ROUND:
    return E->rin == BXFX_R_F32 || bxfx_kern() == &bxfx_kern_avx2;
  default: return ew_cost(E) == 1;
  }
}

/* Runs E into out over the index space `shape` (out's own, or [numel]
 * when the layout is kept: out's buffer as a flat array). */
static void ew_run(struct ew *E, bext_tensor *out, int rank, const int64_t *shape) {
  E->dst = bxr_data(out);
  E->odt = out->dtype;
  ew_shape(E, rank, shape);
  size_t n = (size_t)bxr_numel(rank, shape);
  if (n == 0) return;
  /* An op whose operands and output do not stay cached writes by
   * streaming stores; outputs the kernels do not write directly (narrowed
   * to f16, bf16, i32 from a wider representation) keep their plain
   * stores.  A broadcast operand counts its own bytes. */
  size_t in = 0;
  for (int k = 0; k < E->nin; k++) {
    size_t m = bext_dtype_size(E->dt[k]);
    for (int d = 0; d < E->rank; d++)
      if (E->st[k][d]) m *= (size_t)E->shape[d];
    in += m;
  }
  E->stream = bxfx_is_native(E->odt, E->rout) && ew_memory_bound(E) && bxfx_streams(n * bext_dtype_size(E->odt), in);
  for (int k = 0; k < E->nin; k++)
    if (E->src[k] == E->dst) E->stream = false;   /* in place: its lines are read anyway */
  /* The fused half kernels: operands of one half type h (the output's,
   * but for comparisons) or f32 (a scalar, or a threshold). */
  E->binh = E->cmph = E->unh = 0;
  E->clamph = E->powih = false;
  const bext_dtype h = is_fast_cmp(E) ? (E->dt[0] == BEXT_F32 ? E->dt[1] : E->dt[0]) : E->odt;
  E->hk = h == BEXT_F16 ? BXFX_H_F16 : BXFX_H_BF16;
  const bool halves = (h == BEXT_F16 || h == BEXT_BF16) && (E->dt[0] == h || E->dt[1] == h) &&
                      (E->dt[0] == h || E->dt[0] == BEXT_F32) && (E->dt[1] == h || E->dt[1] == BEXT_F32);
  if (is_fast_cmp(E) && halves) {
    static const signed char map[BXR_OP_COUNT] = {
      [BXR_OP_EQ] = BXFX_CMP_eq + 1, [BXR_OP_NE] = BXFX_CMP_ne + 1, [BXR_OP_GT] = BXFX_CMP_gt + 1,
      [BXR_OP_GE] = BXFX_CMP_ge + 1, [BXR_OP_LT] = BXFX_CMP_lt + 1, [BXR_OP_LE] = BXFX_CMP_le + 1 };
    E->cmph = map[E->op];
  }
  if (is_fast_f32(E) && halves) {
    static const signed char map[] = { [BXR_OP_ADD] = BXFX_BIN_add + 1, [BXR_OP_SUB] = BXFX_BIN_sub + 1,
                                       [BXR_OP_MUL] = BXFX_BIN_mul + 1, [BXR_OP_DIV] = BXFX_BIN_div + 1,
                                       [BXR_OP_MAX] = BXFX_BIN_max + 1, [BXR_OP_MIN] = BXFX_BIN_min + 1 };
    E->binh = map[E->op];
  }
  if (E->rin == BXFX_R_F32 && E->nin == 1 && (h == BEXT_F16 || h == BEXT_BF16) && E->dt[0] == h) {
    static const signed char map[BXR_OP_COUNT] = {
      [BXR_OP_SQRT] = BXFX_UN_sqrt + 1, [BXR_OP_RSQRT] = BXFX_UN_rsqrt + 1, [BXR_OP_NEG] = BXFX_UN_neg + 1,
      [BXR_OP_ABS] = BXFX_UN_abs + 1, [BXR_OP_RELU] = BXFX_UN_relu + 1, [BXR_OP_RECIP] = BXFX_UN_recip + 1,
      [BXR_OP_FLOOR] = BXFX_UN_floor + 1, [BXR_OP_CEIL] = BXFX_UN_ceil + 1, [BXR_OP_ROUND] = BXFX_UN_round + 1,
      [BXR_OP_SIGN] = BXFX_UN_sign + 1, [BXR_OP_EXP] = BXFX_UN_exp + 1, [BXR_OP_LOG] = BXFX_UN_log + 1,
      [BXR_OP_LOG1P] = BXFX_UN_log1p + 1, [BXR_OP_SIN] = BXFX_UN_sin + 1, [BXR_OP_COS] = BXFX_UN_cos + 1,
      [BXR_OP_TANH] = BXFX_UN_tanh + 1, [BXR_OP_ERF] = BXFX_UN_erf + 1 };
    E->unh = map[E->op];
    E->clamph = E->op == BXR_OP_CLAMP;
    E->powih = E->op == BXR_OP_POWI && E->i0 >= -BXFX_POWI_MAX && E->i0 <= BXFX_POWI_MAX;
  }
  if (ew_tiled(E)) {
    const int R = E->rank;
    size_t tiles = (size_t)((E->shape[R - 2] + BXFX_TILE_R - 1) / BXFX_TILE_R) *
                   (size_t)((E->shape[R - 1] + BXFX_TILE_C - 1) / BXFX_TILE_C) * (n / (size_t)(E->shape[R - 2] * E->shape[R - 1]));
    bxr_pool_for(tiles, ew_cost(E) * BXFX_TILE_R * BXFX_TILE_C, 1, ew_tile_chunk, E);
    return;
  }
  if (ew_copy_strided(E, out)) ew_shape(E, out->rank, out->shape);
  bxr_pool_for(n, ew_cost(E), 64, ew_chunk, E);
}

bext_tensor *bxfx_output(struct bxr_op *op, int reuse_from) {
  for (int i = 0; i < reuse_from; i++)
    if (op->in[i] && bxr_op_can_reuse(op, i)) return bxr_op_take(op, i);
  return bxr_op_new_output(op);
}

/* The binary opcode a scalar or comparison-with-scalar op computes. */
static enum bxr_opcode base_op(enum bxr_opcode c) {
  switch (c) {
  case BXR_OP_ADD_SCALAR: return BXR_OP_ADD;
  case BXR_OP_SUB_SCALAR: return BXR_OP_SUB;
  case BXR_OP_MUL_SCALAR: return BXR_OP_MUL;
  case BXR_OP_DIV_SCALAR: return BXR_OP_DIV;
  case BXR_OP_REM_SCALAR: return BXR_OP_REM;
  case BXR_OP_POW_SCALAR: return BXR_OP_POW;
  case BXR_OP_MAX_SCALAR: return BXR_OP_MAX;
  case BXR_OP_MIN_SCALAR: return BXR_OP_MIN;
  case BXR_OP_EQ_SCALAR: return BXR_OP_EQ;
  case BXR_OP_NE_SCALAR: return BXR_OP_NE;
  case BXR_OP_GT_SCALAR: return BXR_OP_GT;
  case BXR_OP_GE_SCALAR: return BXR_OP_GE;
  case BXR_OP_LT_SCALAR: return BXR_OP_LT;
  case BXR_OP_LE_SCALAR: return BXR_OP_LE;
  default: return c;
  }
}

static bool is_compare(enum bxr_opcode c) {
  return c == BXR_OP_EQ || c == BXR_OP_NE || c == BXR_OP_GT || c == BXR_OP_GE ||
         c == BXR_OP_LT || c == BXR_OP_LE;
}

/* x OP s for a double s is x OP' t for one f32 t, for every f32 x (f16
 * and bf16 values are f32 values): s itself when exact; else x > s iff
 * x > rd(s) and x <= s iff x <= rd(s), rd(s) the largest f32 below s;
 * x >= s and x < s likewise with ru(s), the least f32 above; x == s never
 * holds and x != s always does, which NaN as t gives (as it does for a
 * NaN s).  Returns OP', which is OP. */
static enum bxr_opcode f32_threshold(enum bxr_opcode c, double s, float *t) {
  float f = (float)s;
  if (s != s || (double)f == s) { *t = f; return c; }
  switch (c) {
  case BXR_OP_GT: case BXR_OP_LE: if ((double)f > s) f = nextafterf(f, -INFINITY); break;
  case BXR_OP_GE: case BXR_OP_LT: if ((double)f < s) f = nextafterf(f, INFINITY); break;
  default: f = NAN; break;
  }
  *t = f;
  return c;
}

/* bxr_data for a tensor known to be f32 (no dtype size lookup). */
static inline float *f32_data(const bext_tensor *t) { return (float *)t->storage->data + t->offset; }

/* The small-tensor path: contiguous f32 operands of the output's shape and
 * little enough work to stay on this thread go straight to the vector
 * kernel, with no block setup (per-op overhead is what small ops cost). */
static bool small_f32(struct bxr_op *op, bext_tensor **res) {
  static const signed char bin[BXR_OP_COUNT] = {
    [BXR_OP_ADD] = BXFX_BIN_add + 1, [BXR_OP_SUB] = BXFX_BIN_sub + 1,
    [BXR_OP_MUL] = BXFX_BIN_mul + 1, [BXR_OP_DIV] = BXFX_BIN_div + 1,
    [BXR_OP_MAX] = BXFX_BIN_max + 1, [BXR_OP_MIN] = BXFX_BIN_min + 1,
  };
  static const signed char un[BXR_OP_COUNT] = {
    [BXR_OP_NEG] = BXFX_UN_neg + 1, [BXR_OP_ABS] = BXFX_UN_abs + 1,
    [BXR_OP_RELU] = BXFX_UN_relu + 1, [BXR_OP_SQRT] = BXFX_UN_sqrt + 1,
    [BXR_OP_EXP] = BXFX_UN_exp + 1, [BXR_OP_TANH] = BXFX_UN_tanh + 1,
    [BXR_OP_SIGMOID] = BXFX_UN_sigmoid + 1, [BXR_OP_LOG] = BXFX_UN_log + 1,
  };
  /* op->same_shape: inference already found every input of the
   * output's shape (equal shapes, no broadcast), so only dtypes and
   * layouts are left to check. */
  const bext_tensor *a = op->in[0];
  if (a->dtype != BEXT_F32 || op->out.dtype != BEXT_F32 || !op->same_shape) return false;
  int64_t n = bxr_numel(op->out.rank, op->out.shape);
  if (n * 8 >= (int64_t)BXR_POOL_MIN || !bxr_is_contiguous(a)) return false;
  int k;
  if (op->n_in == 2 && (k = bin[op->code]) > 0) {
    const bext_tensor *b = op->in[1];
    if (b->dtype != BEXT_F32 || !bxr_is_contiguous(b)) return false;
    const float *pa = f32_data(a), *pb = f32_data(b);
    /* Both operands were just checked to match the output (dtype, shape,
     * contiguity): reuse needs only uniqueness, not bxfx_output's full
     * re-check. */
    bext_tensor *out = bxr_is_unique(a) ? bxr_op_take(op, 0)
                       : bxr_is_unique(b) ? bxr_op_take(op, 1)
                                          : bxr_op_new_output(op);
    if (out) bxfx_kern()->bin[k - 1](pa, pb, f32_data(out), (size_t)n, BXFX_VV);
    *res = out;
    return true;
  }
  /* tensor op scalar: the general engine computes these in f32 with the
   * same kernel (vector-scalar mode) exactly when the scalar is exact in
   * f32; otherwise (and for NaN) it widens to f64, so leave those to it. */
  static const signed char sc[BXR_OP_COUNT] = {
    [BXR_OP_ADD_SCALAR] = BXFX_BIN_add + 1, [BXR_OP_SUB_SCALAR] = BXFX_BIN_sub + 1,
    [BXR_OP_MUL_SCALAR] = BXFX_BIN_mul + 1, [BXR_OP_DIV_SCALAR] = BXFX_BIN_div + 1,
    [BXR_OP_MAX_SCALAR] = BXFX_BIN_max + 1, [BXR_OP_MIN_SCALAR] = BXFX_BIN_min + 1,
  };
  if (op->n_in == 1 && (k = sc[op->code]) > 0) {
    double s = op->sc[0].f;
    float sf = (float)s;
    if ((double)sf != s) return false;
    const float *pa = f32_data(a);
    bext_tensor *out = bxr_is_unique(a) ? bxr_op_take(op, 0) : bxr_op_new_output(op);
    if (out) bxfx_kern()->bin[k - 1](pa, &sf, f32_data(out), (size_t)n, BXFX_VS);
    *res = out;
    return true;
  }
  if (op->n_in == 1 && (k = un[op->code]) > 0) {
    const float *pa = f32_data(a);
    bext_tensor *out = bxr_is_unique(a) ? bxr_op_take(op, 0) : bxr_op_new_output(op);
    if (out) bxfx_kern()->un[k - 1](pa, f32_data(out), (size_t)n);
    *res = out;
    return true;
  }
  return false;
}

static bext_tensor *ew_general(struct bxr_op *op);

/* The jobs below write element i of their output at o + i*osz through
 * part(ctx, b, e, o + b*osz).  A streamed output (past bxfx_stream_min)
 * is computed BXFX_BLK elements at a time into an L1 buffer and copied
 * out by stream_out, as ew_block does; the chunk fences at its end. */
typedef void (*part_fn)(const void *ctx, size_t b, size_t e, char *o);
static void staged(part_fn part, const void *ctx, char *o, size_t osz, bool stream, size_t b, size_t e) {
  if (!stream) { part(ctx, b, e, o + b * osz); return; }
  _Alignas(32) char buf[BXFX_BLK * 8];
  const struct bxfx_kernels *K = bxfx_kern();
  for (size_t s = b; s < e; s += BXFX_BLK) {
    size_t m = e - s < BXFX_BLK ? e - s : BXFX_BLK;
    part(ctx, s, s + m, buf);
    K->stream_out(o + s * osz, buf, m * osz);
  }
  bxfx_stream_fence();
}
/* In place (o is an input) the lines are read anyway: nothing to skip. */
static bool streams(const void *o, const void *a, const void *b, size_t out, size_t in) {
  return o != a && o != b && bxfx_streams(out, in);
}

/* f32 tensor op a scalar f32 cannot hold (x * 1e-3): the result is the
 * f64 operation rounded once to f32, so a widening kernel computes it in
 * f64 lanes straight from the f32 input, split across the pool.  The
 * general engine would get the same values through three passes per
 * block (widen, operate, narrow) at about half the bandwidth. */
struct widen_job {
  int k;
  bool stream;
  double s;
  const float *a;
  float *o;
};
static void widen_part(const void *ctx, size_t b, size_t e, char *o) {
  const struct widen_job *J = ctx;
  bxfx_kern()->binw_f32(J->k, J->a + b, J->s, (float *)(void *)o, e - b);
}
static void widen_chunk(void *ctx, size_t b, size_t e) {
  const struct widen_job *J = ctx;
  staged(widen_part, J, (char *)J->o, sizeof(float), J->stream, b, e);
}
static bool widened_scalar(struct bxr_op *op, bext_tensor **res) {
  static const signed char wk[BXR_OP_COUNT] = {
    [BXR_OP_ADD_SCALAR] = BXFX_BIN_add + 1, [BXR_OP_SUB_SCALAR] = BXFX_BIN_sub + 1,
    [BXR_OP_MUL_SCALAR] = BXFX_BIN_mul + 1, [BXR_OP_DIV_SCALAR] = BXFX_BIN_div + 1,
  };
  const bext_tensor *a = op->in[0];
  int k = wk[op->code];
  if (k <= 0 || a->dtype != BEXT_F32 || op->out.dtype != BEXT_F32 || !bxr_is_contiguous(a)) return false;
  double s = op->sc[0].f;
  if ((double)(float)s == s) return false;  /* exact: the f32 kernels (NaN is unequal: here) */
  struct widen_job J = { k - 1, false, s, f32_data(a), NULL };
  bext_tensor *out = bxfx_output(op, 1);
  if (out) {
    size_t n = (size_t)bxr_numel(out->rank, out->shape);
    J.o = f32_data(out);
    J.stream = J.k != BXFX_BIN_div && streams(J.o, J.a, NULL, n * sizeof(float), n * sizeof(float));
    bxr_pool_for(n, 2, 64, widen_chunk, &J);
  }
  *res = out;
  return true;
}

/* i32 arithmetic, i64 unary ops, pow and division by a scalar, and
 * comparisons of every float and int type on contiguous operands of the
 * output's shape (or one operand and a scalar), on a contiguous row
 * broadcast against one (native_period), or on operands sharing one dense
 * permuted layout (keeps_layout), at their own width: the general engine
 * widens i32 to i64 a block at a time and narrows the result back (three
 * passes), divides i64 by idiv per element, and runs its loops compiled
 * for the baseline ISA; f32 and half comparisons, which it runs in the
 * same kernels, paid its per-block setup every 512 elements (a third of
 * the instructions of a compare with a scalar).  Their scalars are
 * f32_threshold's.  The values are the same: i32 wrapping ops are
 * the i64 ones stored back to i32, for every i32 operand and for scalars
 * that are i32 values (others are left to the general engine, which
 * saturates them to i64 first); i64 scalars are saturated as it does;
 * comparisons are exact at any width. */
enum native_kind { NK_BIN_I32, NK_BIN_I64, NK_UN_I32, NK_CMP_I32, NK_CMP_I64, NK_CMP_F64, NK_CMP_F32, NK_CMP_HALF, NK_UN_I64,
                   NK_DIVS_I64, NK_BOOL, NK_POW_I64 };
struct native_job {
  int k;                    /* kernel index (BXFX_IOP_*, BXFX_IUN_*, BXFX_CMP_*; NK_DIVS_I64: rem) */
  enum native_kind kind;
  int mode;
  int hk;                   /* NK_CMP_HALF: BXFX_H_* */
  float thr;                /* NK_CMP_F32 / NK_CMP_HALF with a scalar: f32_threshold's */
  bool stream;              /* staged(): the output streams */
  size_t osz;               /* output element bytes */
  const char *a, *b;
  char *o;
  size_t pa, pb;            /* periods: output element i reads a[i % pa], b[i % pb] */
  int64_t lo, hi;           /* clamp bounds */
};
/* n output elements into o, a read from a[ia], b from b[ib]. */
static void native_run(const struct native_job *J, size_t ia, size_t ib, char *o, size_t n) {
  const struct bxfx_kernels *K = bxfx_kern();
  size_t bs = J->mode == BXFX_VS ? 0 : ib;
  /* (unary kinds have no b: no pointer arithmetic on NULL) */
  const int32_t *a32 = (const int32_t *)(const void *)J->a + ia, *b32 = J->b ? (const int32_t *)(const void *)J->b + bs : NULL;
  const int64_t *a64 = (const int64_t *)(const void *)J->a + ia, *b64 = J->b ? (const int64_t *)(const void *)J->b + bs : NULL;
  switch (J->kind) {
  case NK_BIN_I32: K->bin_i32(J->k, a32, b32, (int32_t *)(void *)o, n, J->mode); break;
  case NK_BIN_I64: K->bin_i64(J->k, a64, b64, (int64_t *)(void *)o, n, J->mode); break;
  case NK_UN_I32: K->un_i32(J->k, a32, (int32_t *)(void *)o, n, (int32_t)J->lo, (int32_t)J->hi); break;
  case NK_UN_I64: K->un_i64(J->k, a64, (int64_t *)(void *)o, n, J->lo, J->hi); break;
  case NK_DIVS_I64: K->divs_i64(a64, *b64, (int64_t *)(void *)o, n, J->k); break;
  case NK_POW_I64: K->pow_i64(a64, b64, (int64_t *)(void *)o, n, J->mode); break;
  case NK_BOOL: K->bop(J->k, (const uint8_t *)J->a + ia, (const uint8_t *)J->b + bs, (uint8_t *)o, n); break;
  case NK_CMP_I32: K->cmp_i32(J->k, a32, b32, (uint8_t *)o, n, J->mode); break;
  case NK_CMP_I64: K->cmp_i64(J->k, a64, b64, (uint8_t *)o, n, J->mode); break;
  case NK_CMP_F64:
    K->cmp_f64(J->k, (const double *)(const void *)J->a + ia, (const double *)(const void *)J->b + bs,
               (uint8_t *)o, n, J->mode);
    break;
  case NK_CMP_F32:
    K->cmp[J->k]((const float *)(const void *)J->a + ia, J->mode == BXFX_VS ? &J->thr : (const float *)(const void *)J->b + ib,
                 (uint8_t *)o, n, J->mode);
    break;
  case NK_CMP_HALF: {
    const uint16_t *ha = (const uint16_t *)(const void *)J->a + ia;
    K->cmp_half[J->hk][J->k](ha, J->mode == BXFX_VS ? ha : (const uint16_t *)(const void *)J->b + ib, J->thr,
                             (uint8_t *)o, n, J->mode);
    break;
  }
  }
}
/* Output elements [b, e) into o, in runs that no operand's period cuts: a
 * row broadcast is one kernel call per row against the same row, not a
 * per-element index. */
static void native_part(const void *ctx, size_t b, size_t e, char *o) {
  const struct native_job *J = ctx;
  if (J->pa >= e && J->pb >= e) {   /* no wrap (every same-shape op): no divisions */
    native_run(J, b, b, o, e - b);
    return;
  }
  for (size_t i = b; i < e;) {
    size_t ia = i % J->pa, ib = i % J->pb, n = e - i;
    if (J->pa - ia < n) n = J->pa - ia;
    if (J->pb - ib < n) n = J->pb - ib;
    native_run(J, ia, ib, o + (i - b) * J->osz, n);
    i += n;
  }
}
static void native_chunk(void *ctx, size_t b, size_t e) {
  const struct native_job *J = ctx;
  staged(native_part, J, J->o, J->osz, J->stream, b, e);
}

/* The period of t as an operand of an op of output shape (rank, shape)
 * read flat: numel(t) when t is contiguous and, leading 1s dropped, of
 * out's trailing dims (out's shape itself, or a row broadcast such as
 * [C] or [1, C] against [R, C]): output element i reads t's i % numel.
 * 0 for other operands, and for periods too short to be worth a kernel
 * call each (the general engine splats those). */
static size_t native_period(const struct bxr_op *op, const bext_tensor *t, int rank, const int64_t *shape) {
  if (!bxr_is_contiguous(t)) return 0;
  if (op->same_shape) return (size_t)bxr_numel(rank, shape);   /* inference found no broadcast */
  int d0 = 0;
  while (d0 < t->rank && t->shape[d0] == 1) d0++;
  const int m = t->rank - d0;
  if (m > rank) return 0;
  for (int j = 0; j < m; j++)
    if (t->shape[d0 + j] != shape[rank - m + j]) return 0;
  const int64_t p = bxr_numel(t->rank, t->shape), n = bxr_numel(rank, shape);
  return p == n || p >= 64 ? (size_t)p : 0;
}

static bool fits_i32(double s) { return s == s && s >= -2147483648.0 && s <= 2147483647.0; }

static bool native_width(struct bxr_op *op, bext_tensor **res) {
  static const signed char iop[BXR_OP_COUNT] = {
    [BXR_OP_ADD] = BXFX_IOP_add + 1, [BXR_OP_SUB] = BXFX_IOP_sub + 1, [BXR_OP_MUL] = BXFX_IOP_mul + 1,
    [BXR_OP_DIV] = BXFX_IOP_div + 1, [BXR_OP_REM] = BXFX_IOP_rem + 1, [BXR_OP_MAX] = BXFX_IOP_max + 1,
    [BXR_OP_MIN] = BXFX_IOP_min + 1, [BXR_OP_POW] = BXFX_IOP_pow + 1,
  };
  static const signed char iun[BXR_OP_COUNT] = {
    [BXR_OP_NEG] = BXFX_IUN_neg + 1, [BXR_OP_ABS] = BXFX_IUN_abs + 1, [BXR_OP_RELU] = BXFX_IUN_relu + 1,
    [BXR_OP_SIGN] = BXFX_IUN_sign + 1, [BXR_OP_CLAMP] = BXFX_IUN_clamp + 1,
  };
  static const signed char cmp[BXR_OP_COUNT] = {
    [BXR_OP_EQ] = BXFX_CMP_eq + 1, [BXR_OP_NE] = BXFX_CMP_ne + 1, [BXR_OP_GT] = BXFX_CMP_gt + 1,
    [BXR_OP_GE] = BXFX_CMP_ge + 1, [BXR_OP_LT] = BXFX_CMP_lt + 1, [BXR_OP_LE] = BXFX_CMP_le + 1,
  };
  const bext_tensor *a = op->in[0];
  const bext_dtype dt = a->dtype;
  const enum bxr_opcode code = base_op(op->code);
  const bool scalar = code != op->code;
  const int64_t numel = bxr_numel(op->out.rank, op->out.shape);
  if (numel == 0) return false;
  /* Operands that share a dense permuted layout are read flat and the
   * output takes that layout (keeps_layout: the general engine's and
   * cast's rule); otherwise each must be contiguous with a period. */
  const bool keep = !bxr_is_contiguous(a) && keeps_layout(op, scalar ? 1 : op->n_in);
  struct native_job J = { .mode = scalar ? BXFX_VS : BXFX_VV, .a = bxr_data(a), .pa = (size_t)numel,
                          .pb = (size_t)numel };
  if (!keep && !(J.pa = native_period(op, a, op->out.rank, op->out.shape))) return false;
  union { int32_t i; int64_t l; double d; } sv;
  if (dt == BEXT_BOOL) {   /* bool logic and bool ==, != (no scalar forms) */
    static const signed char bop[BXR_OP_COUNT] = {
      [BXR_OP_AND] = BXFX_BOP_and + 1, [BXR_OP_OR] = BXFX_BOP_or + 1, [BXR_OP_XOR] = BXFX_BOP_xor + 1,
      [BXR_OP_EQ] = BXFX_BOP_eq + 1, [BXR_OP_NE] = BXFX_BOP_ne + 1, [BXR_OP_NOT] = BXFX_BOP_not + 1,
    };
    if (!bop[op->code] || op->out.dtype != BEXT_BOOL) return false;
    J.k = bop[op->code] - 1;
    J.kind = NK_BOOL;
    J.b = J.a;   /* not: read a only */
  } else if (cmp[code]) {
    J.k = cmp[code] - 1;
    J.kind = dt == BEXT_I32 ? NK_CMP_I32 : dt == BEXT_I64 ? NK_CMP_I64 : dt == BEXT_F64 ? NK_CMP_F64
           : dt == BEXT_F32 ? NK_CMP_F32 : NK_CMP_HALF;
    J.hk = dt == BEXT_F16 ? BXFX_H_F16 : BXFX_H_BF16;
    if (scalar) {
      double s = op->sc[0].f;
      if (dt == BEXT_I32) { if (!fits_i32(s)) return false; sv.i = (int32_t)s; }
      else if (dt == BEXT_I64) sv.l = bxr_f64_to_i64_sat(s);
      else if (dt == BEXT_F64) sv.d = s;
      else f32_threshold(code, s, &J.thr);   /* f32 and halves compare with an f32 */
    }
  } else if (dt == BEXT_I32 && iop[code]) {
    J.k = iop[code] - 1;
    J.kind = NK_BIN_I32;
    if (scalar) {
      if (!fits_i32(op->sc[0].f)) return false;
      sv.i = (int32_t)op->sc[0].f;
    }
  } else if (dt == BEXT_I64 && op->out.dtype == BEXT_I64 &&
             (code == BXR_OP_ADD || code == BXR_OP_SUB || code == BXR_OP_MUL || code == BXR_OP_MAX ||
              code == BXR_OP_MIN)) {
    J.k = iop[code] - 1;
    J.kind = NK_BIN_I64;
    if (scalar) sv.l = bxr_f64_to_i64_sat(op->sc[0].f);   /* as the general engine */
  } else if (dt == BEXT_I64 && code == BXR_OP_POW) {
    J.kind = NK_POW_I64;
    if (scalar) sv.l = bxr_f64_to_i64_sat(op->sc[0].f);   /* as the general engine */
  } else if (dt == BEXT_I64 && scalar && (code == BXR_OP_DIV || code == BXR_OP_REM)) {
    J.k = code == BXR_OP_REM;
    J.kind = NK_DIVS_I64;
    sv.l = bxr_f64_to_i64_sat(op->sc[0].f);
  } else if ((dt == BEXT_I32 || dt == BEXT_I64) && iun[op->code] && op->n_in == 1) {
    J.k = iun[op->code] - 1;
    J.kind = dt == BEXT_I32 ? NK_UN_I32 : NK_UN_I64;
    if (op->code == BXR_OP_CLAMP) {
      if (dt == BEXT_I32) {
        if (!fits_i32(op->sc[0].f) || !fits_i32(op->sc[1].f)) return false;
        J.lo = (int32_t)op->sc[0].f;
        J.hi = (int32_t)op->sc[1].f;
      } else {   /* the bounds the general engine takes */
        J.lo = bxr_f64_to_i64_sat(op->sc[0].f);
        J.hi = bxr_f64_to_i64_sat(op->sc[1].f);
      }
    }
  } else {
    return false;
  }
  const bool unary = J.kind == NK_UN_I32 || J.kind == NK_UN_I64 || op->n_in == 1;
  if (scalar) {
    J.b = (const char *)&sv;
  } else if (!unary) {
    const bext_tensor *b = op->in[1];
    if (b->dtype != dt) return false;
    if (!keep && !(J.pb = native_period(op, b, op->out.rank, op->out.shape))) return false;
    /* one operand at least spans the output (a broadcast of both is
     * the general engine's) */
    if (J.pa != (size_t)numel && J.pb != (size_t)numel) return false;
    J.b = bxr_data(b);
  }
  bext_tensor *out = keep ? output_like(op, a) : bxfx_output(op, scalar ? 1 : op->n_in);
  if (out) {
    J.o = bxr_data(out);
    J.osz = bext_dtype_size(out->dtype);
    /* (i32 division by a scalar multiplies: divs_i32) */
    const bool costly = J.kind == NK_DIVS_I64 || J.kind == NK_POW_I64 ||
                        (J.kind == NK_BIN_I32 && (((J.k == BXFX_IOP_div || J.k == BXFX_IOP_rem) && !scalar) ||
                                                  J.k == BXFX_IOP_pow));
    const size_t isz = bext_dtype_size(dt);
    J.stream = !costly && streams(J.o, J.a, J.b, (size_t)numel * J.osz,   /* as ew_memory_bound */
                                  J.pa * isz + (J.b && !scalar ? J.pb * isz : 0));
    bxr_pool_for((size_t)numel, costly ? 4 : 1, 64, native_chunk, &J);
  }
  *res = out;
  return true;
}

/* Every binary, scalar, comparison, logic and unary op.  The small f32
 * path stays in this lean frame; the general engine (a ~400-byte
 * descriptor and its setup) is a separate, non-inlined function so small
 * ops do not pay its prologue. */
bext_tensor *bxfx_exec_elementwise(struct bxr_op *op) {
  bext_tensor *res;
  const bext_dtype dt = op->in[0]->dtype;
  if (dt == BEXT_F32 && (small_f32(op, &res) || widened_scalar(op, &res))) return res;
  if ((dt == BEXT_I32 || dt == BEXT_I64 || dt == BEXT_F64 || dt == BEXT_BOOL) && native_width(op, &res)) return res;
  if ((dt == BEXT_F32 || dt == BEXT_F16 || dt == BEXT_BF16) && is_compare(base_op(op->code)) && native_width(op, &res))
    return res;
  return ew_general(op);
}

__attribute__((noinline)) static bext_tensor *ew_general(struct bxr_op *op) {
  struct ew E;
  memset(&E, 0, sizeof E);
  enum bxr_opcode code = op->code;
  E.op = base_op(code);
  bext_dtype idt = op->in[0]->dtype;
  E.rin = bxfx_repr_of(idt);
  bool scalar = E.op != code;
  float thr = 0;
  if (scalar && E.rin == BXFX_R_F32) {
    /* Computing in f32 with an f32 scalar equals the double computation
     * rounded to f32 when the scalar is exact in f32 (add/sub/mul/div are
     * correctly rounded either way); otherwise work in double so the
     * scalar is not rounded first.  Comparisons stay in f32 against a
     * threshold that gives the same answers (f32_threshold). */
    double s = op->sc[0].f;
    if (is_compare(E.op)) E.op = f32_threshold(E.op, s, &thr);
    else if ((double)(float)s != s || (s != s)) E.rin = BXFX_R_F64;
    else if (E.op == BXR_OP_POW && s == floor(s) && fabs(s) <= BXFX_POWI_MAX) {
      /* x^n with a small integer n: powi's f64 products rounded once
       * (exact for n = 2, and the correctly rounded double for 3 and 4,
       * as pow gives) instead of libmvec's powf; pow's last bits are
       * open (bxk_scalar.h), and powi keeps pow's special values
       * (x^0 = 1, signed zeros and infinities). */
      E.op = BXR_OP_POWI;
      E.i0 = (int64_t)s;
      scalar = false;
    }
  }
  if (scalar && E.rin == BXFX_R_F64 && E.op == BXR_OP_POW) {
    /* f64 x^n with a small integer n: powi_f64 gives pow's own bits
     * (double-double, pow where that could round otherwise), at a
     * fraction of libmvec's pow per element. */
    double s = op->sc[0].f;
    if (s == floor(s) && fabs(s) <= BXFX_POWI_MAX) {
      E.op = BXR_OP_POWI;
      E.i0 = (int64_t)s;
      scalar = false;
    }
  }
  E.rout = is_compare(E.op) ? BXFX_R_U8 : E.rin;
  E.nin = (op->n_in == 2 || scalar) ? 2 : 1;
  const bool keep = keeps_layout(op, scalar ? 1 : op->n_in);
  for (int k = 0; k < (scalar ? 1 : op->n_in); k++) {
    if (keep) ew_flat_input(&E, k, op->in[k], E.rin);
    else ew_input(&E, k, op->in[k], E.rin, &op->out);
  }
  if (scalar) {
    switch (E.rin) {
    case BXFX_R_F32: E.sv.f = is_compare(E.op) ? thr : (float)op->sc[0].f; break;
    case BXFX_R_F64: E.sv.d = op->sc[0].f; break;
    default: E.sv.i = bxr_f64_to_i64_sat(op->sc[0].f); break;
    }
    ew_scalar_input(&E, 1, E.rin);
  }
  if (code == BXR_OP_CLAMP) {
    E.p0 = op->sc[0].f; E.p1 = op->sc[1].f;
    E.i0 = bxr_f64_to_i64_sat(op->sc[0].f); E.i1 = bxr_f64_to_i64_sat(op->sc[1].f);
  }
  if (code == BXR_OP_POWI) E.i0 = op->sc[0].i;
  bext_tensor *out = keep ? output_like(op, op->in[0]) : bxfx_output(op, scalar ? 1 : op->n_in);
  if (out) {
    int64_t n = bxr_numel(out->rank, out->shape);
    if (keep) ew_run(&E, out, 1, &n);
    else ew_run(&E, out, out->rank, out->shape);
  }
  ew_free_tmp(&E);
  return out;
}

/* mask_where / mask_fill with t, the mask and value contiguous and of the
 * output's shape (value a scalar for fill): one select pass at the
 * element's width (mask_sel), split across the pool. */
struct mask_job {
  size_t es;
  const char *t, *v;
  const uint8_t *m;
  char *o;
  bool vs;
};
static void mask_chunk(void *ctx, size_t b, size_t e) {
  const struct mask_job *J = ctx;
  bxfx_kern()->mask_sel(J->es, J->t + b * J->es, J->m + b, J->vs ? J->v : J->v + b * J->es, J->o + b * J->es,
                        e - b, J->vs);
}
static bool mask_native(struct bxr_op *op, char *fill, bext_tensor **res) {
  const bext_dtype dt = op->out.dtype;
  const bool where = op->code == BXR_OP_MASK_WHERE;
  for (int k = 0; k < (where ? 3 : 2); k++) {
    const bext_tensor *x = op->in[k];
    bext_dtype want = k == 1 ? BEXT_BOOL : dt;
    if (x->dtype != want || !bxr_is_contiguous(x) || !bxr_same_shape(x->rank, x->shape, op->out.rank, op->out.shape))
      return false;
  }
  const size_t es = bext_dtype_size(dt);
  if (es != 1 && es != 2 && es != 4 && es != 8) return false;
  struct mask_job J = { es, bxr_data(op->in[0]), where ? bxr_data(op->in[2]) : fill, bxr_data(op->in[1]), NULL, !where };
  bext_tensor *out = bxfx_output(op, 1);
  if (out) {
    J.o = bxr_data(out);
    bxr_pool_for((size_t)bxr_numel(out->rank, out->shape), 1, 64, mask_chunk, &J);
  }
  *res = out;
  return true;
}

/* mask_where(t, mask, value) and mask_fill(t, mask, scalar). */
bext_tensor *bxfx_exec_mask(struct bxr_op *op) {
  /* The fill value stored exactly as the reference stores it. */
  char fill[8] = { 0 };
  if (op->code != BXR_OP_MASK_WHERE) bxr_store_f64(fill, op->out.dtype, 0, op->sc[0].f);
  bext_tensor *res;
  if (mask_native(op, fill, &res)) return res;
  struct ew E;
  memset(&E, 0, sizeof E);
  E.op = BXR_OP_MASK_WHERE;
  E.nin = 3;
  bext_dtype dt = op->out.dtype;
  /* A byte select: read t and value natively (no widening needed). */
  E.rin = E.rout = bxfx_repr_of(dt);
  ew_input(&E, 0, op->in[0], E.rin, &op->out);
  ew_input(&E, 1, op->in[1], BXFX_R_U8, &op->out);
  if (op->code == BXR_OP_MASK_WHERE) {
    ew_input(&E, 2, op->in[2], E.rin, &op->out);
  } else {
    bxfx_load(&E.sv, E.rin, fill, dt, 1, 1);
    ew_scalar_input(&E, 2, E.rin);
  }
  if (bext_dtype_size(dt) == 2) {   /* halves: as 16-bit patterns */
    E.raw2 = true;
    if (op->code != BXR_OP_MASK_WHERE) memcpy(&E.sv, fill, 2);
  }
  bext_tensor *out = bxfx_output(op, 1);
  if (out) ew_run(&E, out, out->rank, out->shape);
  ew_free_tmp(&E);
  return out;
}

/* cast: contiguous blocks go through bxr_convert (the reference's exact
 * conversion rules); strided inputs are gathered per block first. */
struct cast_job {
  const bext_tensor *t;
  const char *src;
  char *dst;
  bext_dtype sdt, ddt;
  bool contig;
  bool stream;   /* contiguous: blocks go out by stream_out (staged) */
};

/* One kernel call for the pairs that have one (bxr_convert's rule bit for
 * bit: flex_kern.h, flex_kern_cast.h); false for the others. */
static bool cast_direct(char *dst, bext_dtype ddt, const char *src, bext_dtype sdt, size_t n) {
  const struct bxfx_kernels *K = bxfx_kern();
#define PAIR(s, d) ((int)(s) * BEXT_DTYPE_COUNT + (int)(d))
  switch (PAIR(sdt, ddt)) {
  case PAIR(BEXT_F32, BEXT_F16): K->f32_to_f16((const float *)src, (uint16_t *)dst, n); return true;
  case PAIR(BEXT_F32, BEXT_BF16): K->f32_to_bf16((const float *)src, (uint16_t *)dst, n); return true;
  case PAIR(BEXT_F32, BEXT_I32): K->f32_to_i32((const float *)src, (int32_t *)dst, n); return true;
  case PAIR(BEXT_F32, BEXT_I64): K->f32_to_i64((const float *)src, (int64_t *)dst, n); return true;
  case PAIR(BEXT_F32, BEXT_F64): K->f32_to_f64((const float *)src, (double *)dst, n); return true;
  case PAIR(BEXT_F16, BEXT_F32): K->f16_to_f32((const uint16_t *)src, (float *)dst, n); return true;
  case PAIR(BEXT_BF16, BEXT_F32): K->bf16_to_f32((const uint16_t *)src, (float *)dst, n); return true;
  case PAIR(BEXT_I32, BEXT_F32): K->i32_to_f32((const int32_t *)src, (float *)dst, n); return true;
  case PAIR(BEXT_I64, BEXT_F32): K->i64_to_f32((const int64_t *)src, (float *)dst, n); return true;
  case PAIR(BEXT_F64, BEXT_F32): K->f64_to_f32((const double *)src, (float *)dst, n); return true;
  case PAIR(BEXT_F64, BEXT_I32): K->f64_to_i32((const double *)src, (int32_t *)dst, n); return true;
  case PAIR(BEXT_F64, BEXT_I64): K->f64_to_i64((const double *)src, (int64_t *)dst, n); return true;
  case PAIR(BEXT_I64, BEXT_F64): K->i64_to_f64((const int64_t *)src, (double *)dst, n); return true;
  case PAIR(BEXT_I32, BEXT_F64): K->i32_to_f64((const int32_t *)src, (double *)dst, n); return true;
  case PAIR(BEXT_I32, BEXT_I64): K->i32_to_i64((const int32_t *)src, (int64_t *)dst, n); return true;
  case PAIR(BEXT_I64, BEXT_I32): K->i64_to_i32((const int64_t *)src, (int32_t *)dst, n); return true;
  /* x != 0 (NaN is true): the comparison kernels against 0 */
  case PAIR(BEXT_F32, BEXT_BOOL): {
    const float zero = 0.0f;
    K->cmp[BXFX_CMP_ne]((const float *)src, &zero, (uint8_t *)dst, n, BXFX_VS);
    return true;
  }
  case PAIR(BEXT_F64, BEXT_BOOL): {
    const double zero = 0.0;
    K->cmp_f64(BXFX_CMP_ne, (const double *)src, &zero, (uint8_t *)dst, n, BXFX_VS);
    return true;
  }
  case PAIR(BEXT_I32, BEXT_BOOL): {
    const int32_t zero = 0;
    K->cmp_i32(BXFX_CMP_ne, (const int32_t *)src, &zero, (uint8_t *)dst, n, BXFX_VS);
    return true;
  }
  case PAIR(BEXT_I64, BEXT_BOOL): {
    const int64_t zero = 0;
    K->cmp_i64(BXFX_CMP_ne, (const int64_t *)src, &zero, (uint8_t *)dst, n, BXFX_VS);
    return true;
  }
  case PAIR(BEXT_BOOL, BEXT_F32): case PAIR(BEXT_U8, BEXT_F32): {   /* bool bytes read as x != 0, as bxr_load_i64 does */
    const uint8_t *a = (const uint8_t *)src;
    float *o = (float *)dst;
    if (sdt == BEXT_BOOL) for (size_t i = 0; i < n; i++) o[i] = a[i] != 0;
    else for (size_t i = 0; i < n; i++) o[i] = a[i];
    return true;
  }
  default: return false;
  }
#undef PAIR
}

/* Contiguous n elements in one pass.  Pairs without a kernel go through
 * f32 blocks that stay in L1 where that is bxr_convert's rule: f16, bf16,
 * bool and u8 widen to f32 exactly, and every store of a float value is a
 * rule on that f32 value; a float or int stored to f16/bf16 is rounded to
 * f32 first by the reference too (one rounding for i64, as (float)v).
 * The rest go through the compute representations by blocks: a float
 * source widens to f64 exactly and bxfx_store applies the reference's
 * per-dtype stores; an int source widens to i64 exactly.  Returns false
 * for a pair it does not take (none at present). */
static bool cast_fast(char *dst, bext_dtype ddt, const char *src, bext_dtype sdt, size_t n) {
  if (cast_direct(dst, ddt, src, sdt, n)) return true;
  size_t ss = bext_dtype_size(sdt), ds = bext_dtype_size(ddt);
  _Alignas(32) char buf[BXFX_BLK * 8];
  bool widen_exact = sdt == BEXT_F16 || sdt == BEXT_BF16 || sdt == BEXT_BOOL || sdt == BEXT_U8;
  bool to_half = ddt == BEXT_F16 || ddt == BEXT_BF16;
  /* Every dtype but f32 itself has a kernel to f32, and every one but u8
   * (and f32) a kernel from it. */
  if ((widen_exact || to_half) && ddt != BEXT_U8) {
    for (size_t i = 0; i < n; i += BXFX_BLK) {
      size_t m = n - i < BXFX_BLK ? n - i : BXFX_BLK;
      bool ok = cast_direct(buf, BEXT_F32, src + i * ss, sdt, m) && cast_direct(dst + i * ds, ddt, buf, BEXT_F32, m);
      BXR_ASSERT(ok);
    }
    return true;
  }
  bool flt = bext_dtype_kind(sdt) == BEXT_KIND_FLOAT;
  int r = flt ? BXFX_R_F64 : BXFX_R_I64;
  for (size_t i = 0; i < n; i += BXFX_BLK) {
    size_t m = n - i < BXFX_BLK ? n - i : BXFX_BLK;
    bxfx_load(buf, r, src + i * ss, sdt, 1, m);
    bxfx_store(dst + i * ds, ddt, buf, r, m);
  }
  return true;
}

/* Contiguous elements [b, e) into o (the output's, or staged's L1 block). */
static void cast_part(const void *ctx, size_t b, size_t e, char *o) {
  const struct cast_job *J = ctx;
  const char *src = J->src + b * bext_dtype_size(J->sdt);
  if (!cast_fast(o, J->ddt, src, J->sdt, e - b)) bxr_convert(o, J->ddt, src, J->sdt, (int64_t)(e - b));
}

static void cast_chunk(void *ctx, size_t b, size_t e) {
  const struct cast_job *J = ctx;
  size_t ss = bext_dtype_size(J->sdt), ds = bext_dtype_size(J->ddt);
  if (J->contig) {
    staged(cast_part, J, J->dst, ds, J->stream, b, e);
    return;
  }
  _Alignas(8) char tmp[BXFX_BLK * 8];
  const bext_tensor *t = J->t;
  for (size_t i = b; i < e;) {
    size_t n = e - i < BXFX_BLK ? e - i : BXFX_BLK;
    for (size_t j = 0; j < n; j++)
      memcpy(tmp + j * ss, J->src + bxr_offset_of((int64_t)(i + j), t->rank, t->shape, t->strides) * (int64_t)ss, ss);
    bxr_convert(J->dst + i * ds, J->ddt, tmp, J->sdt, (int64_t)n);
    i += n;
  }
}

/* A dense permuted input (x^T, a permute of a whole buffer) keeps its
 * layout, as the elementwise ops do (keeps_layout; libtorch's
 * preserve_format): the output is viewed with the input's strides and the
 * cast runs over both buffers as flat arrays, one pass at the contiguous
 * speed.  Other strided inputs take a tiled copy first (transposed_copy)
 * or are gathered per block. */
bext_tensor *bxfx_exec_cast(struct bxr_op *op) {
  bext_tensor *t = op->in[0];
  const bool keep = keeps_layout(op, 1);
  /* same dtype: in place is a no-op copy */
  bext_tensor *out = keep && !bxr_op_can_reuse(op, 0) ? output_like(op, t) : bxfx_output(op, 1);
  if (!out) return NULL;
  if (out == t) return out;
  struct cast_job J = { .t = t, .src = bxr_data(t), .dst = bxr_data(out), .sdt = t->dtype,
                        .ddt = out->dtype, .contig = keep || bxr_is_contiguous(t) };
  bext_tensor *tmp = J.contig ? NULL : transposed_copy(t, &op->out);
  if (tmp) J.src = bxr_data(tmp), J.contig = true;
  /* as the elementwise outputs: once input and output fill the LLC,
   * blocks cast in L1 go out by streaming stores */
  const size_t n = (size_t)bxr_numel(t->rank, t->shape);
  J.stream = J.contig && bxfx_streams(n * bext_dtype_size(J.ddt), n * bext_dtype_size(J.sdt));
  bxr_pool_for(n, J.contig ? 2 : 8, 64, cast_chunk, &J);
  if (tmp) bext_release(tmp);
  return out;
}
