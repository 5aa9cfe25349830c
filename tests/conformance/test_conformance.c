/* test_conformance.c — the cross-backend conformance matrix, in the style
 * of ggml's test-backend-ops.
 *
 * It walks the op table itself (bext/ops.h): every op x every dtype
 * its row allows x every backend of the build (the device registry's
 * bext_device_list, plus cube:vulkan:0 when the build has it and a
 * Vulkan device exists: lavapipe in `make test`), and each backend again under the "+count" test
 * decorator (tests/decorator), in several variants per cell —
 * contiguous, broadcasting, non-contiguous inputs (transposed, sliced,
 * expanded views made by the backend under test), empty tensors, rank 0,
 * rank 8, and (for some dtypes) sizes above Flex's threading threshold.  Inputs are built once on NdArray and moved to the backend, so
 * both backends see the same values.
 *   - NdArray is checked against closed-form expectations computed here, in
 *     double, by an independent naive oracle (index math on row-major data).
 *   - Every other backend, and every "<backend>+count", is checked against
 *     the NdArray reference.
 * Tolerance: normalized mean squared error sum((x-y)^2)/sum(y^2) (NaN must
 * match NaN; inf must match inf) below 1e-12 (f64), 1e-7 (f32), 1e-4 (f16),
 * 1e-3 (bf16); integer and bool results must be equal.
 * Each backend prints a table op x dtype (ok / FAIL / n/i = not implemented
 * / - = dtype not allowed by the row / unsup = the device says it does not
 * run this op or dtype yet) and the test fails on any FAIL or n/i; an op
 * without a conformance case is a FAIL too: no silent skips.  An unsup
 * cell is a device's own named refusal ("... is not implemented on this
 * device yet", "... is not supported on this device": cube:cpu before its
 * kernels exist, f16 on cube): it is listed with its message under the
 * table, not passed and not failed.
 * The same cases check spec-level inference: bext_infer on the inputs'
 * specs gives the dtype and shape the op returns, and failing calls give
 * the op's own message. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "count_layer.h"
#include "op.h"
#include "remote_harness.h"

/* ------------------------------------------------------------- test inputs */

enum vk { VK_GEN, VK_POS, VK_EXP, VK_SMALL, VK_IDX };
enum lay { L_CONTIG, L_TRANS, L_SLICED, L_EXPAND };

struct tin {
  bext_dtype dt;
  enum vk vk;
  enum lay lay;
  int rank;
  int64_t shape[BEXT_MAX_RANK];
  int64_t bound; /* VK_IDX: indices in [0, bound) */
};

struct tcase {
  const char *variant;
  int nin;
  struct tin in[6];
  double s[3];
  int dim;
  bool keepdim, all;
  int nd;
  int dims[BEXT_MAX_RANK];
  int rank2;                     /* reshape/expand target, creation shape */
  int64_t shape2[BEXT_MAX_RANK];
  int nr;                        /* slice ranges */
  int64_t a[BEXT_MAX_RANK], b[BEXT_MAX_RANK];
  bext_dtype dt2;                /* cast target, creation dtype */
  uint64_t seed;
};

#define MAXC 20

static struct tin mk(bext_dtype dt, enum vk vk, enum lay lay, int rank, const int64_t *shape) {
  struct tin t;
  memset(&t, 0, sizeof t);
  t.dt = dt;
  t.vk = vk;
  t.lay = lay;
  t.rank = rank;
  for (int i = 0; i < rank; i++) t.shape[i] = shape[i];
  return t;
}
#define SH(...) (const int64_t[]){__VA_ARGS__}
#define NSH(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
#define TIN(dt, vk, lay, ...) mk(dt, vk, lay, NSH(__VA_ARGS__), SH(__VA_ARGS__))
#define TIN0(dt, vk) mk(dt, vk, L_CONTIG, 0, NULL)

static uint64_t lcg(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return *s >> 33;
}

static double gen_value(const struct tin *ti, uint64_t *s) {
  bool flt = bext_dtype_kind(ti->dt) == BEXT_KIND_FLOAT;
  uint64_t r = lcg(s);
  if (ti->dt == BEXT_BOOL && ti->vk != VK_IDX) return (double)(r & 1);
  switch (ti->vk) {
  case VK_IDX: return (double)(r % (uint64_t)ti->bound);
  case VK_POS: return flt ? (double)(2 + r % 22) / 8 : (double)(1 + r % 4);
  case VK_EXP: return flt ? ((double)(r % 33) - 16) / 8 : (double)(r % 4);
  case VK_SMALL:
    if (flt) return ((double)(r % 17) - 8) / 8;
    return ti->dt == BEXT_U8 ? (double)(r % 3) : (double)(r % 5) - 2;
  default:
    if (flt) return ((double)(r % 33) - 16) / 8;
    return ti->dt == BEXT_U8 ? (double)(r % 7) : (double)(r % 7) - 3;
  }
}

static const bext_device *dev_nd;

/* Builds input ti on dev: values generated on NdArray (f64/i64, cast to the
 * dtype there), moved to dev, then given the requested layout by dev's own
 * view ops. */
static bext_tensor *make_input(const struct tin *ti, uint64_t seed, const bext_device *dev) {
  int r = ti->rank;
  int64_t phys[BEXT_MAX_RANK];
  memcpy(phys, ti->shape, sizeof phys);
  enum lay lay = ti->lay;
  if ((lay == L_TRANS && r < 2) || (lay != L_CONTIG && r < 1)) lay = L_CONTIG;
  if (lay == L_TRANS) {
    phys[r - 1] = ti->shape[r - 2];
    phys[r - 2] = ti->shape[r - 1];
  } else if (lay == L_SLICED) phys[r - 1] += 2;
  else if (lay == L_EXPAND) phys[0] = 1;
  int64_t n = 1;
  for (int i = 0; i < r; i++) n *= phys[i];
  bool flt = bext_dtype_kind(ti->dt) == BEXT_KIND_FLOAT;
  void *buf = malloc((size_t)(n ? n : 1) * 8);
  uint64_t s = seed * 7919 + 17;
  for (int64_t i = 0; i < n; i++) {
    double v = gen_value(ti, &s);
    if (flt) ((double *)buf)[i] = v;
    else ((int64_t *)buf)[i] = (int64_t)v;
  }
  bext_tensor *t = bext_from_data(buf, flt ? BEXT_F64 : BEXT_I64, phys, r, dev_nd);
  free(buf);
  t = bext_to_device(bext_cast(t, ti->dt), dev);
  if (lay == L_TRANS) t = bext_swap_dims(t, -1, -2);
  else if (lay == L_SLICED) {
    int64_t st[BEXT_MAX_RANK] = {0}, en[BEXT_MAX_RANK];
    memcpy(en, phys, sizeof en);
    st[r - 1] = 1;
    en[r - 1] = phys[r - 1] - 1;
    t = bext_slice(t, st, en, r);
  } else if (lay == L_EXPAND) t = bext_expand(t, ti->shape, r);
  return t;
}

/* ---------------------------------------------------------- host results */

struct host {
  bext_dtype dt;
  int rank;
  int64_t shape[BEXT_MAX_RANK];
  int64_t n;
  double *v;
};

static void host_free(struct host *h) {
  free(h->v);
  h->v = NULL;
}

static void host_init(struct host *h, bext_dtype dt, int rank, const int64_t *shape) {
  h->dt = dt;
  h->rank = rank;
  h->n = 1;
  for (int i = 0; i < rank; i++) {
    h->shape[i] = shape[i];
    h->n *= shape[i];
  }
  h->v = calloc((size_t)(h->n ? h->n : 1), sizeof(double));
}

static bool read_host(const bext_tensor *t, struct host *h) {
  host_init(h, bext_dtype_of(t), bext_rank(t), bext_shape(t));
  size_t es = bext_dtype_size(h->dt);
  void *raw = malloc((size_t)(h->n ? h->n : 1) * es);
  bool ok = bext_read(t, raw, (size_t)h->n * es);
  for (int64_t i = 0; ok && i < h->n; i++) h->v[i] = bxr_load_f64(raw, h->dt, i);
  free(raw);
  return ok;
}

/* -------------------------------------------------------------- run an op */

static bext_tensor *run(enum bxr_opcode op, const struct tcase *c, bext_tensor **in, const bext_device *dev) {
  bext_tensor *a = in[0], *b = in[1], *x = in[2];
  double s0 = c->s[0], s1 = c->s[1];
  switch (op) {
  case BXR_OP_EMPTY: return bext_empty(c->shape2, c->rank2, c->dt2, dev);
  case BXR_OP_ZEROS: return bext_zeros(c->shape2, c->rank2, c->dt2, dev);
  case BXR_OP_ONES: return bext_ones(c->shape2, c->rank2, c->dt2, dev);
  case BXR_OP_FULL: return bext_full(c->shape2, c->rank2, s0, c->dt2, dev);
  case BXR_OP_ARANGE: return bext_arange(s0, s1, c->s[2], c->dt2, dev);
  case BXR_OP_RANDOM_UNIFORM: return bext_random_uniform(c->shape2, c->rank2, s0, s1, c->seed, c->dt2, dev);
  case BXR_OP_RANDOM_NORMAL: return bext_random_normal(c->shape2, c->rank2, s0, s1, c->seed, c->dt2, dev);
  case BXR_OP_RESHAPE: return bext_reshape(a, c->shape2, c->rank2);
  case BXR_OP_SWAP_DIMS: return bext_swap_dims(a, c->dims[0], c->dims[1]);
  case BXR_OP_PERMUTE: return bext_permute(a, c->dims, c->nd);
  case BXR_OP_EXPAND: return bext_expand(a, c->shape2, c->rank2);
  case BXR_OP_SLICE: return bext_slice(a, c->a, c->b, c->nr);
  case BXR_OP_SLICE_ASSIGN: return bext_slice_assign(a, c->a, c->b, c->nr, b);
  case BXR_OP_CAT: return bext_cat(in, c->nin, c->dim);
  case BXR_OP_FLIP: return bext_flip(a, c->dims, c->nd);
  case BXR_OP_NARROW: return bext_narrow(a, c->dim, c->a[0], c->b[0]);
  case BXR_OP_REPEAT_DIM: return bext_repeat_dim(a, c->dim, c->a[0]);
  case BXR_OP_GATHER: return bext_gather(a, c->dim, b);
  case BXR_OP_SCATTER_ADD: return bext_scatter_add(a, c->dim, b, x);
  case BXR_OP_SELECT: return bext_select(a, c->dim, b);
  case BXR_OP_SELECT_ASSIGN: return bext_select_assign(a, c->dim, b, x);
  case BXR_OP_MASK_WHERE: return bext_mask_where(a, b, x);
  case BXR_OP_MASK_FILL: return bext_mask_fill(a, b, s0);
  case BXR_OP_ADD: return bext_add(a, b);
  case BXR_OP_SUB: return bext_sub(a, b);
  case BXR_OP_MUL: return bext_mul(a, b);
  case BXR_OP_DIV: return bext_div(a, b);
  case BXR_OP_REM: return bext_rem(a, b);
  case BXR_OP_POW: return bext_pow(a, b);
  case BXR_OP_MAX: return bext_max(a, b);
  case BXR_OP_MIN: return bext_min(a, b);
  case BXR_OP_ADD_SCALAR: return bext_add_scalar(a, s0);
  case BXR_OP_SUB_SCALAR: return bext_sub_scalar(a, s0);
  case BXR_OP_MUL_SCALAR: return bext_mul_scalar(a, s0);
  case BXR_OP_DIV_SCALAR: return bext_div_scalar(a, s0);
  case BXR_OP_REM_SCALAR: return bext_rem_scalar(a, s0);
  case BXR_OP_POW_SCALAR: return bext_pow_scalar(a, s0);
  case BXR_OP_MAX_SCALAR: return bext_max_scalar(a, s0);
  case BXR_OP_MIN_SCALAR: return bext_min_scalar(a, s0);
  case BXR_OP_EQ: return bext_eq(a, b);
  case BXR_OP_NE: return bext_ne(a, b);
  case BXR_OP_GT: return bext_gt(a, b);
  case BXR_OP_GE: return bext_ge(a, b);
  case BXR_OP_LT: return bext_lt(a, b);
  case BXR_OP_LE: return bext_le(a, b);
  case BXR_OP_EQ_SCALAR: return bext_eq_scalar(a, s0);
  case BXR_OP_NE_SCALAR: return bext_ne_scalar(a, s0);
  case BXR_OP_GT_SCALAR: return bext_gt_scalar(a, s0);
  case BXR_OP_GE_SCALAR: return bext_ge_scalar(a, s0);
  case BXR_OP_LT_SCALAR: return bext_lt_scalar(a, s0);
  case BXR_OP_LE_SCALAR: return bext_le_scalar(a, s0);
  case BXR_OP_AND: return bext_and(a, b);
  case BXR_OP_OR: return bext_or(a, b);
  case BXR_OP_XOR: return bext_xor(a, b);
  case BXR_OP_NOT: return bext_not(a);
  case BXR_OP_NEG: return bext_neg(a);
  case BXR_OP_ABS: return bext_abs(a);
  case BXR_OP_EXP: return bext_exp(a);
  case BXR_OP_LOG: return bext_log(a);
  case BXR_OP_LOG1P: return bext_log1p(a);
  case BXR_OP_SQRT: return bext_sqrt(a);
  case BXR_OP_RSQRT: return bext_rsqrt(a);
  case BXR_OP_SIN: return bext_sin(a);
  case BXR_OP_COS: return bext_cos(a);
  case BXR_OP_TANH: return bext_tanh(a);
  case BXR_OP_ERF: return bext_erf(a);
  case BXR_OP_SIGMOID: return bext_sigmoid(a);
  case BXR_OP_RELU: return bext_relu(a);
  case BXR_OP_RECIP: return bext_recip(a);
  case BXR_OP_FLOOR: return bext_floor(a);
  case BXR_OP_CEIL: return bext_ceil(a);
  case BXR_OP_ROUND: return bext_round(a);
  case BXR_OP_SIGN: return bext_sign(a);
  case BXR_OP_CLAMP: return bext_clamp(a, s0, s1);
  case BXR_OP_POWI: return bext_powi(a, (int64_t)s0);
#define RED_CASE(OP, f)                                                            \
  case BXR_OP_##OP: return c->all ? bext_##f(a) : bext_##f##_dim(a, c->dim, c->keepdim);
    RED_CASE(SUM, sum) RED_CASE(MEAN, mean) RED_CASE(PROD, prod) RED_CASE(ARGMAX, argmax)
    RED_CASE(ARGMIN, argmin) RED_CASE(ANY, any) RED_CASE(ALL, all)
  case BXR_OP_MAX_REDUCE: return c->all ? bext_max_all(a) : bext_max_dim(a, c->dim, c->keepdim);
  case BXR_OP_MIN_REDUCE: return c->all ? bext_min_all(a) : bext_min_dim(a, c->dim, c->keepdim);
  case BXR_OP_CUMSUM: return bext_cumsum(a, c->dim);
  case BXR_OP_MATMUL: return bext_matmul(a, b);
  case BXR_OP_CAST: return bext_cast(a, c->dt2);
  default: return NULL;
  }
}

/* ---------------------------------------------------------------- oracle */
/* A second, independent and deliberately naive implementation on row-major
 * doubles.  Integer results are exact small integers here and get wrapped
 * to their dtype by norm(); float results are rounded to the dtype by
 * storing them through the runtime's (separately tested) conversion. */

static void unravel(int64_t i, int rank, const int64_t *shape, int64_t *idx) {
  for (int d = rank - 1; d >= 0; d--) {
    idx[d] = shape[d] ? i % shape[d] : 0;
    i = shape[d] ? i / shape[d] : 0;
  }
}
static int64_t ravel(int rank, const int64_t *shape, const int64_t *idx) {
  int64_t i = 0;
  for (int d = 0; d < rank; d++) i = i * shape[d] + idx[d];
  return i;
}
/* Element of h at the broadcast position oidx of an output of rank orank. */
static double bget(const struct host *h, int orank, const int64_t *oidx) {
  int64_t idx[BEXT_MAX_RANK];
  for (int d = 0; d < h->rank; d++) {
    int64_t o = oidx[d + orank - h->rank];
    idx[d] = h->shape[d] == 1 ? 0 : o;
  }
  return h->v[ravel(h->rank, h->shape, idx)];
}

static double norm(bext_dtype dt, double v) {
  unsigned char buf[8];
  switch (dt) {
  case BEXT_I32: return (double)(int32_t)(uint32_t)(int64_t)v;
  case BEXT_U8: return (double)(uint8_t)(int64_t)v;
  case BEXT_I64: return v;
  case BEXT_BOOL: return v != 0;
  default: bxr_store_f64(buf, dt, 0, v); return bxr_load_f64(buf, dt, 0);
  }
}

static double fl_rem(double a, double b) {
  double r = fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

static double o_bin(enum bxr_opcode op, double a, double b, bool isint) {
  switch (op) {
  case BXR_OP_ADD: case BXR_OP_ADD_SCALAR: return a + b;
  case BXR_OP_SUB: case BXR_OP_SUB_SCALAR: return a - b;
  case BXR_OP_MUL: case BXR_OP_MUL_SCALAR: return a * b;
  case BXR_OP_DIV: case BXR_OP_DIV_SCALAR: return isint ? (b == 0 ? 0 : trunc(a / b)) : a / b;
  case BXR_OP_REM: case BXR_OP_REM_SCALAR: return isint && b == 0 ? 0 : fl_rem(a, b);
  case BXR_OP_POW: case BXR_OP_POW_SCALAR:
    if (isint && b < 0) return a == 1 ? 1 : a == -1 ? (fmod(b, 2) ? -1 : 1) : 0;
    return pow(a, b);
  case BXR_OP_MAX: case BXR_OP_MAX_SCALAR: return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
  case BXR_OP_MIN: case BXR_OP_MIN_SCALAR: return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
  case BXR_OP_EQ: case BXR_OP_EQ_SCALAR: return a == b;
  case BXR_OP_NE: case BXR_OP_NE_SCALAR: return a != b;
  case BXR_OP_GT: case BXR_OP_GT_SCALAR: return a > b;
  case BXR_OP_GE: case BXR_OP_GE_SCALAR: return a >= b;
  case BXR_OP_LT: case BXR_OP_LT_SCALAR: return a < b;
  case BXR_OP_LE: case BXR_OP_LE_SCALAR: return a <= b;
  case BXR_OP_AND: return a && b;
  case BXR_OP_OR: return a || b;
  case BXR_OP_XOR: return (a != 0) != (b != 0);
  default: return NAN;
  }
}

static double o_un(enum bxr_opcode op, double x, const struct tcase *c, bool isint) {
  switch (op) {
  case BXR_OP_NOT: return x == 0;
  case BXR_OP_NEG: return -x;
  case BXR_OP_ABS: return fabs(x);
  case BXR_OP_EXP: return exp(x);
  case BXR_OP_LOG: return log(x);
  case BXR_OP_LOG1P: return log1p(x);
  case BXR_OP_SQRT: return sqrt(x);
  case BXR_OP_RSQRT: return 1 / sqrt(x);
  case BXR_OP_SIN: return sin(x);
  case BXR_OP_COS: return cos(x);
  case BXR_OP_TANH: return tanh(x);
  case BXR_OP_ERF: return erf(x);
  case BXR_OP_SIGMOID: return 1 / (1 + exp(-x));
  case BXR_OP_RELU: return x < 0 ? 0 : x;
  case BXR_OP_RECIP: return 1 / x;
  case BXR_OP_FLOOR: return floor(x);
  case BXR_OP_CEIL: return ceil(x);
  case BXR_OP_ROUND: return nearbyint(x);
  case BXR_OP_SIGN: return x > 0 ? 1 : x < 0 ? -1 : x;
  case BXR_OP_CLAMP: {
    double lo = isint ? trunc(c->s[0]) : c->s[0], hi = isint ? trunc(c->s[1]) : c->s[1];
    return x < lo ? lo : x > hi ? hi : x;
  }
  case BXR_OP_POWI: return pow(x, c->s[0]);
  default: return NAN;
  }
}

static bool is_binary_elem(enum bxr_opcode op) {
  return (op >= BXR_OP_ADD && op <= BXR_OP_MIN) || (op >= BXR_OP_EQ && op <= BXR_OP_LE) ||
         op == BXR_OP_AND || op == BXR_OP_OR || op == BXR_OP_XOR;
}
static bool is_scalar_elem(enum bxr_opcode op) {
  return (op >= BXR_OP_ADD_SCALAR && op <= BXR_OP_MIN_SCALAR) || (op >= BXR_OP_EQ_SCALAR && op <= BXR_OP_LE_SCALAR);
}
static bool is_unary_elem(enum bxr_opcode op) { return op == BXR_OP_NOT || (op >= BXR_OP_NEG && op <= BXR_OP_POWI); }
static bool is_reduce(enum bxr_opcode op) { return op >= BXR_OP_SUM && op <= BXR_OP_ALL; }

/* Fills want; returns false when only metadata can be checked (EMPTY). */
static bool oracle(enum bxr_opcode op, const struct tcase *c, struct host *in, struct host *w) {
  const struct host *a = &in[0];
  int64_t idx[BEXT_MAX_RANK], j[BEXT_MAX_RANK];
  bool isint = c->nin > 0 && bext_dtype_kind(a->dt) != BEXT_KIND_FLOAT;
  if (is_binary_elem(op)) {
    int r = a->rank > in[1].rank ? a->rank : in[1].rank;
    int64_t sh[BEXT_MAX_RANK];
    for (int d = 0; d < r; d++) {
      int64_t x = d - (r - a->rank) >= 0 ? a->shape[d - (r - a->rank)] : 1;
      int64_t y = d - (r - in[1].rank) >= 0 ? in[1].shape[d - (r - in[1].rank)] : 1;
      sh[d] = x == 1 ? y : x;
    }
    bool cmp = op >= BXR_OP_EQ && op <= BXR_OP_LE;
    host_init(w, cmp ? BEXT_BOOL : a->dt, r, sh);
    for (int64_t i = 0; i < w->n; i++) {
      unravel(i, r, sh, idx);
      w->v[i] = o_bin(op, bget(a, r, idx), bget(&in[1], r, idx), isint);
    }
  } else if (is_scalar_elem(op) || is_unary_elem(op)) {
    bool cmp = op >= BXR_OP_EQ_SCALAR && op <= BXR_OP_LE_SCALAR;
    double s = isint ? trunc(c->s[0]) : c->s[0];
    host_init(w, cmp ? BEXT_BOOL : a->dt, a->rank, a->shape);
    for (int64_t i = 0; i < w->n; i++)
      w->v[i] = is_scalar_elem(op) ? o_bin(op, a->v[i], s, isint) : o_un(op, a->v[i], c, isint);
  } else if (is_reduce(op)) {
    int64_t sh[BEXT_MAX_RANK], outer, ext, inner;
    int r = 0;
    if (c->all) {
      outer = 1, ext = a->n, inner = 1;
    } else {
      int d0 = c->dim < 0 ? c->dim + a->rank : c->dim;
      outer = 1, inner = 1, ext = a->shape[d0];
      for (int d = 0; d < a->rank; d++) {
        if (d < d0) outer *= a->shape[d];
        if (d > d0) inner *= a->shape[d];
        if (d != d0) sh[r++] = a->shape[d];
        else if (c->keepdim) sh[r++] = 1;
      }
    }
    bext_dtype dt = op == BXR_OP_ARGMAX || op == BXR_OP_ARGMIN ? BEXT_I64 : a->dt;
    host_init(w, dt, r, sh);
    for (int64_t o = 0; o < outer; o++)
      for (int64_t q = 0; q < inner; q++) {
        double acc = op == BXR_OP_PROD || op == BXR_OP_ALL ? 1 : 0;
        int64_t best = 0;
        for (int64_t k = 0; k < ext; k++) {
          double x = a->v[(o * ext + k) * inner + q];
          switch (op) {
          case BXR_OP_SUM: case BXR_OP_MEAN: acc += x; break;
          case BXR_OP_PROD: acc *= x; break;
          case BXR_OP_ANY: acc = acc || x != 0; break;
          case BXR_OP_ALL: acc = acc && x != 0; break;
          case BXR_OP_MAX_REDUCE: acc = k == 0 || x > acc || isnan(x) ? x : acc; break;
          case BXR_OP_MIN_REDUCE: acc = k == 0 || x < acc || isnan(x) ? x : acc; break;
          case BXR_OP_ARGMAX: if (k == 0 || x > acc) acc = x, best = k; break;
          case BXR_OP_ARGMIN: if (k == 0 || x < acc) acc = x, best = k; break;
          default: break;
          }
        }
        if (op == BXR_OP_MEAN) acc = isint ? (ext ? trunc(norm(a->dt, acc) / (double)ext) : 0) : acc / (double)ext;
        if (op == BXR_OP_ARGMAX || op == BXR_OP_ARGMIN) acc = (double)best;
        w->v[o * inner + q] = acc;
      }
  } else {
    switch (op) {
    case BXR_OP_EMPTY:
      host_init(w, c->dt2, c->rank2, c->shape2);
      return false;
    case BXR_OP_ZEROS: case BXR_OP_ONES: case BXR_OP_FULL:
    case BXR_OP_RANDOM_UNIFORM: case BXR_OP_RANDOM_NORMAL:
      host_init(w, c->dt2, c->rank2, c->shape2);
      for (int64_t i = 0; i < w->n; i++)
        w->v[i] = op == BXR_OP_ZEROS ? 0 : op == BXR_OP_ONES ? 1 : op == BXR_OP_FULL ? c->s[0]
                  : op == BXR_OP_RANDOM_UNIFORM ? c->s[0] + (c->s[1] - c->s[0]) * bxr_rng_uniform(c->seed, (uint64_t)i)
                  : c->s[0] + c->s[1] * bxr_rng_normal(c->seed, (uint64_t)i);
      if (bext_dtype_kind(c->dt2) == BEXT_KIND_INT)
        for (int64_t i = 0; i < w->n; i++) w->v[i] = trunc(w->v[i]);
      break;
    case BXR_OP_ARANGE: {
      int64_t n = (int64_t)fmax(0, ceil((c->s[1] - c->s[0]) / c->s[2]));
      host_init(w, c->dt2, 1, &n);
      for (int64_t i = 0; i < n; i++) w->v[i] = c->s[0] + (double)i * c->s[2];
      if (bext_dtype_kind(c->dt2) == BEXT_KIND_INT)
        for (int64_t i = 0; i < n; i++) w->v[i] = trunc(w->v[i]);
      break;
    }
    case BXR_OP_RESHAPE: {
      int64_t sh[BEXT_MAX_RANK];
      memcpy(sh, c->shape2, sizeof sh);
      for (int d = 0; d < c->rank2; d++)
        if (sh[d] == -1) {
          int64_t k = 1;
          for (int e = 0; e < c->rank2; e++) if (e != d) k *= sh[e];
          sh[d] = a->n / k;
        }
      host_init(w, a->dt, c->rank2, sh);
      memcpy(w->v, a->v, (size_t)a->n * sizeof(double));
      break;
    }
    case BXR_OP_SWAP_DIMS: case BXR_OP_PERMUTE: {
      int perm[BEXT_MAX_RANK];
      int64_t sh[BEXT_MAX_RANK];
      for (int d = 0; d < a->rank; d++) perm[d] = d;
      if (op == BXR_OP_SWAP_DIMS) {
        int x = (c->dims[0] + a->rank) % a->rank, y = (c->dims[1] + a->rank) % a->rank;
        perm[x] = y, perm[y] = x;
      } else
        for (int d = 0; d < a->rank; d++) perm[d] = (c->dims[d] + a->rank) % a->rank;
      for (int d = 0; d < a->rank; d++) sh[d] = a->shape[perm[d]];
      host_init(w, a->dt, a->rank, sh);
      for (int64_t i = 0; i < w->n; i++) {
        unravel(i, a->rank, sh, idx);
        for (int d = 0; d < a->rank; d++) j[perm[d]] = idx[d];
        w->v[i] = a->v[ravel(a->rank, a->shape, j)];
      }
      break;
    }
    case BXR_OP_EXPAND:
      host_init(w, a->dt, c->rank2, c->shape2);
      for (int64_t i = 0; i < w->n; i++) {
        unravel(i, c->rank2, c->shape2, idx);
        w->v[i] = bget(a, c->rank2, idx);
      }
      break;
    case BXR_OP_SLICE: case BXR_OP_NARROW: {
      int64_t st[BEXT_MAX_RANK] = {0}, sh[BEXT_MAX_RANK];
      memcpy(sh, a->shape, sizeof sh);
      if (op == BXR_OP_SLICE)
        for (int d = 0; d < c->nr; d++) st[d] = c->a[d], sh[d] = c->b[d] - c->a[d];
      else {
        int d = (c->dim + a->rank) % a->rank;
        st[d] = c->a[0], sh[d] = c->b[0];
      }
      host_init(w, a->dt, a->rank, sh);
      for (int64_t i = 0; i < w->n; i++) {
        unravel(i, a->rank, sh, idx);
        for (int d = 0; d < a->rank; d++) idx[d] += st[d];
        w->v[i] = a->v[ravel(a->rank, a->shape, idx)];
      }
      break;
    }
    case BXR_OP_SLICE_ASSIGN:
      host_init(w, a->dt, a->rank, a->shape);
      memcpy(w->v, a->v, (size_t)a->n * sizeof(double));
      for (int64_t i = 0; i < in[1].n; i++) {
        unravel(i, in[1].rank, in[1].shape, idx);
        for (int d = 0; d < c->nr; d++) idx[d] += c->a[d];
        w->v[ravel(a->rank, a->shape, idx)] = in[1].v[i];
      }
      break;
    case BXR_OP_CAT: {
      int d0 = (c->dim + a->rank) % a->rank;
      int64_t sh[BEXT_MAX_RANK], base = 0;
      memcpy(sh, a->shape, sizeof sh);
      sh[d0] = 0;
      for (int k = 0; k < c->nin; k++) sh[d0] += in[k].shape[d0];
      host_init(w, a->dt, a->rank, sh);
      for (int k = 0; k < c->nin; k++) {
        for (int64_t i = 0; i < in[k].n; i++) {
          unravel(i, a->rank, in[k].shape, idx);
          idx[d0] += base;
          w->v[ravel(a->rank, sh, idx)] = in[k].v[i];
        }
        base += in[k].shape[d0];
      }
      break;
    }
    case BXR_OP_FLIP:
      host_init(w, a->dt, a->rank, a->shape);
      for (int64_t i = 0; i < w->n; i++) {
        unravel(i, a->rank, a->shape, idx);
        for (int k = 0; k < c->nd; k++) {
          int d = (c->dims[k] + a->rank) % a->rank;
          idx[d] = a->shape[d] - 1 - idx[d];
        }
        w->v[i] = a->v[ravel(a->rank, a->shape, idx)];
      }
      break;
    case BXR_OP_REPEAT_DIM: {
      int d0 = (c->dim + a->rank) % a->rank;
      int64_t sh[BEXT_MAX_RANK];
      memcpy(sh, a->shape, sizeof sh);
      sh[d0] *= c->a[0];
      host_init(w, a->dt, a->rank, sh);
      for (int64_t i = 0; i < w->n; i++) {
        unravel(i, a->rank, sh, idx);
        idx[d0] %= a->shape[d0];
        w->v[i] = a->v[ravel(a->rank, a->shape, idx)];
      }
      break;
    }
    case BXR_OP_GATHER: case BXR_OP_SELECT: {
      int d0 = (c->dim + a->rank) % a->rank;
      int64_t sh[BEXT_MAX_RANK];
      memcpy(sh, op == BXR_OP_GATHER ? in[1].shape : a->shape, sizeof sh);
      if (op == BXR_OP_SELECT) sh[d0] = in[1].n;
      host_init(w, a->dt, a->rank, sh);
      for (int64_t i = 0; i < w->n; i++) {
        unravel(i, a->rank, sh, idx);
        idx[d0] = (int64_t)in[1].v[op == BXR_OP_GATHER ? i : idx[d0]];
        w->v[i] = a->v[ravel(a->rank, a->shape, idx)];
      }
      break;
    }
    case BXR_OP_SCATTER_ADD: case BXR_OP_SELECT_ASSIGN: {
      int d0 = (c->dim + a->rank) % a->rank;
      host_init(w, a->dt, a->rank, a->shape);
      memcpy(w->v, a->v, (size_t)a->n * sizeof(double));
      const struct host *vals = &in[2];
      for (int64_t i = 0; i < vals->n; i++) {
        unravel(i, vals->rank, vals->shape, idx);
        idx[d0] = (int64_t)in[1].v[op == BXR_OP_SCATTER_ADD ? i : idx[d0]];
        w->v[ravel(a->rank, a->shape, idx)] += vals->v[i];
      }
      break;
    }
    case BXR_OP_MASK_WHERE: case BXR_OP_MASK_FILL: {
      int r = 0;
      int64_t sh[BEXT_MAX_RANK];
      for (int k = 0; k < (op == BXR_OP_MASK_WHERE ? 3 : 2); k++) if (in[k].rank > r) r = in[k].rank;
      for (int d = 0; d < r; d++) {
        sh[d] = 1;
        for (int k = 0; k < (op == BXR_OP_MASK_WHERE ? 3 : 2); k++) {
          int e = d - (r - in[k].rank);
          if (e >= 0 && in[k].shape[e] != 1) sh[d] = in[k].shape[e];
        }
      }
      host_init(w, a->dt, r, sh);
      for (int64_t i = 0; i < w->n; i++) {
        unravel(i, r, sh, idx);
        double m = bget(&in[1], r, idx);
        w->v[i] = m != 0 ? (op == BXR_OP_MASK_WHERE ? bget(&in[2], r, idx) : (isint ? trunc(c->s[0]) : c->s[0]))
                         : bget(a, r, idx);
      }
      break;
    }
    case BXR_OP_CUMSUM: {
      int d0 = (c->dim + a->rank) % a->rank;
      host_init(w, a->dt, a->rank, a->shape);
      for (int64_t i = 0; i < w->n; i++) {
        unravel(i, a->rank, a->shape, idx);
        double acc = 0;
        int64_t top = idx[d0];
        for (int64_t k = 0; k <= top; k++) {
          idx[d0] = k;
          acc += a->v[ravel(a->rank, a->shape, idx)];
        }
        w->v[i] = acc;
      }
      break;
    }
    case BXR_OP_MATMUL: {
      const struct host *b = &in[1];
      int br = (a->rank > b->rank ? a->rank : b->rank) - 2;
      int64_t sh[BEXT_MAX_RANK];
      int64_t m = a->shape[a->rank - 2], k = a->shape[a->rank - 1], n = b->shape[b->rank - 1];
      for (int d = 0; d < br; d++) {
        int ea = d - (br - (a->rank - 2)), eb = d - (br - (b->rank - 2));
        int64_t x = ea >= 0 ? a->shape[ea] : 1, y = eb >= 0 ? b->shape[eb] : 1;
        sh[d] = x == 1 ? y : x;
      }
      sh[br] = m, sh[br + 1] = n;
      host_init(w, a->dt, br + 2, sh);
      for (int64_t i = 0; i < w->n; i++) {
        unravel(i, br + 2, sh, idx);
        double acc = 0;
        for (int64_t l = 0; l < k; l++) {
          int64_t ia[BEXT_MAX_RANK], ib[BEXT_MAX_RANK];
          for (int d = 0; d < a->rank - 2; d++) ia[d] = a->shape[d] == 1 ? 0 : idx[d + br - (a->rank - 2)];
          for (int d = 0; d < b->rank - 2; d++) ib[d] = b->shape[d] == 1 ? 0 : idx[d + br - (b->rank - 2)];
          ia[a->rank - 2] = idx[br], ia[a->rank - 1] = l;
          ib[b->rank - 2] = l, ib[b->rank - 1] = idx[br + 1];
          acc += a->v[ravel(a->rank, a->shape, ia)] * b->v[ravel(b->rank, b->shape, ib)];
        }
        w->v[i] = acc;
      }
      break;
    }
    case BXR_OP_CAST: {
      host_init(w, c->dt2, a->rank, a->shape);
      bool src_float = bext_dtype_kind(a->dt) == BEXT_KIND_FLOAT;
      for (int64_t i = 0; i < w->n; i++) {
        double x = a->v[i];
        if (c->dt2 == BEXT_BOOL) x = x != 0;
        else if (bext_dtype_kind(c->dt2) != BEXT_KIND_FLOAT && src_float) {
          /* float -> int: truncate and saturate to the target range */
          x = isnan(x) ? 0 : trunc(x);
          double lo = c->dt2 == BEXT_U8 ? 0 : c->dt2 == BEXT_I32 ? -2147483648.0 : -9.2e18;
          double hi = c->dt2 == BEXT_U8 ? 255 : c->dt2 == BEXT_I32 ? 2147483647.0 : 9.2e18;
          x = x < lo ? lo : x > hi ? hi : x;
        }
        w->v[i] = x; /* int -> int wraps in norm() */
      }
      break;
    }
    default:
      host_init(w, BEXT_F32, 0, NULL);
      return false;
    }
  }
  for (int64_t i = 0; i < w->n; i++) w->v[i] = norm(w->dt, w->v[i]);
  return true;
}

/* ----------------------------------------------------------------- cases */

static struct tcase C(const char *variant) {
  struct tcase c;
  memset(&c, 0, sizeof c);
  c.variant = variant;
  c.seed = 42;
  return c;
}

static enum vk vk_a(enum bxr_opcode op) {
  switch (op) {
  case BXR_OP_LOG: case BXR_OP_SQRT: case BXR_OP_RSQRT: case BXR_OP_RECIP: case BXR_OP_POW:
  case BXR_OP_POW_SCALAR: case BXR_OP_POWI:
    return VK_POS;
  case BXR_OP_PROD: return VK_SMALL;
  default: return VK_GEN;
  }
}
static enum vk vk_b(enum bxr_opcode op) {
  switch (op) {
  case BXR_OP_DIV: case BXR_OP_REM: return VK_POS;
  case BXR_OP_POW: return VK_EXP;
  default: return VK_GEN;
  }
}

static double scalar_for(enum bxr_opcode op, bext_dtype dt) {
  bool flt = bext_dtype_kind(dt) == BEXT_KIND_FLOAT;
  switch (op) {
  case BXR_OP_DIV_SCALAR: return flt ? 0.5 : 2;
  case BXR_OP_REM_SCALAR: return flt ? 0.75 : 3;
  case BXR_OP_POW_SCALAR: return 2;
  case BXR_OP_POWI: return 3;
  case BXR_OP_MASK_FILL: return flt ? 0.5 : 7;
  default: return flt ? 0.5 : 1;
  }
}

/* Variants above Flex's threading threshold (> 64K elements) run for one
 * dtype of each storage path (f32, f16 through f32, i32/bool): enough to
 * catch splitting bugs while keeping the ASan run short. */
static bool large_dtype(bext_dtype dt) { return dt == BEXT_F32 || dt == BEXT_F16 || dt == BEXT_I32 || dt == BEXT_BOOL; }

/* The variants of one op x dtype cell.  Returns how many (0: no case). */
static int make_cases(enum bxr_opcode op, bext_dtype dt, struct tcase *cs) {
  int n = 0;
  enum vk va = vk_a(op), vb = vk_b(op);
  const int64_t r8[] = {2, 1, 2, 1, 1, 2, 1, 2};
  if (is_binary_elem(op)) {
    struct tcase c;
#define BIN(name, A, B) c = C(name), c.nin = 2, c.in[0] = A, c.in[1] = B, cs[n++] = c
    BIN("contig", TIN(dt, va, L_CONTIG, 3, 4), TIN(dt, vb, L_CONTIG, 3, 4));
    BIN("bcast", TIN(dt, va, L_CONTIG, 2, 3, 4), TIN(dt, vb, L_CONTIG, 3, 1));
    BIN("bcast2", TIN(dt, va, L_CONTIG, 4), TIN(dt, vb, L_CONTIG, 3, 1));
    BIN("strided", TIN(dt, va, L_TRANS, 3, 4), TIN(dt, vb, L_SLICED, 3, 4));
    BIN("expanded", TIN(dt, va, L_EXPAND, 3, 4), TIN(dt, vb, L_TRANS, 3, 4));
    BIN("empty", TIN(dt, va, L_CONTIG, 0, 3), TIN(dt, vb, L_CONTIG, 1, 3));
    BIN("rank0", TIN0(dt, va), TIN(dt, vb, L_CONTIG, 3, 4));
    BIN("rank8", mk(dt, va, L_CONTIG, 8, r8), mk(dt, vb, L_SLICED, 8, (const int64_t[]){2, 1, 1, 1, 1, 2, 1, 2}));
    /* above Flex's threading threshold (~64K elements) */
    if (large_dtype(dt)) {
      BIN("large", TIN(dt, va, L_CONTIG, 257, 260), TIN(dt, vb, L_CONTIG, 257, 260));
      BIN("large-bcast", TIN(dt, va, L_CONTIG, 257, 260), TIN(dt, vb, L_CONTIG, 260));
    }
#undef BIN
    return n;
  }
  if (is_scalar_elem(op) || is_unary_elem(op)) {
    struct tcase c;
#define UNC(name, A) c = C(name), c.nin = 1, c.in[0] = A, c.s[0] = scalar_for(op, dt), cs[n++] = c
    UNC("contig", TIN(dt, va, L_CONTIG, 3, 4));
    UNC("transposed", TIN(dt, va, L_TRANS, 3, 4));
    UNC("sliced", TIN(dt, va, L_SLICED, 3, 4));
    UNC("expanded", TIN(dt, va, L_EXPAND, 3, 4));
    UNC("empty", TIN(dt, va, L_CONTIG, 0, 3));
    UNC("rank0", TIN0(dt, va));
    UNC("rank8", mk(dt, va, L_TRANS, 8, r8));
    if (large_dtype(dt)) UNC("large", TIN(dt, va, L_CONTIG, 257, 260));
#undef UNC
    if (op == BXR_OP_CLAMP)
      for (int i = 0; i < n; i++) cs[i].s[0] = -1, cs[i].s[1] = bext_dtype_kind(dt) == BEXT_KIND_FLOAT ? 0.5 : 1;
    return n;
  }
  if (is_reduce(op)) {
    struct tcase c;
#define RC(name, A, all_, dim_, keep_) \
  c = C(name), c.nin = 1, c.in[0] = A, c.all = all_, c.dim = dim_, c.keepdim = keep_, cs[n++] = c
    RC("all", TIN(dt, va, L_CONTIG, 3, 4), true, 0, false);
    RC("dim1", TIN(dt, va, L_CONTIG, 3, 4), false, 1, false);
    RC("dim0-keep-transposed", TIN(dt, va, L_TRANS, 3, 4), false, 0, true);
    RC("dim-1-keep-sliced", TIN(dt, va, L_SLICED, 2, 3, 4), false, -1, true);
    RC("all-expanded", TIN(dt, va, L_EXPAND, 3, 4), true, 0, false);
    RC("empty-outer", TIN(dt, va, L_CONTIG, 0, 3), false, 1, false);
    RC("rank0", TIN0(dt, va), true, 0, false);
    RC("rank8", mk(dt, va, L_CONTIG, 8, r8), false, 5, false);
    if (op == BXR_OP_SUM || op == BXR_OP_MEAN || op == BXR_OP_PROD || op == BXR_OP_ANY || op == BXR_OP_ALL)
      RC("empty-extent", TIN(dt, va, L_CONTIG, 0, 3), false, 0, false);
    if (op != BXR_OP_PROD && large_dtype(dt)) { /* a long product only tests overflow order */
      RC("large-all", TIN(dt, va, L_CONTIG, 257, 260), true, 0, false);
      RC("large-dim0", TIN(dt, va, L_CONTIG, 257, 260), false, 0, false);
      RC("large-dim1", TIN(dt, va, L_CONTIG, 257, 260), false, 1, true);
    }
#undef RC
    return n;
  }
  struct tcase c;
  switch (op) {
  case BXR_OP_EMPTY: case BXR_OP_ZEROS: case BXR_OP_ONES: case BXR_OP_FULL:
  case BXR_OP_RANDOM_UNIFORM: case BXR_OP_RANDOM_NORMAL: {
    const int64_t *shapes[] = {SH(3, 4), NULL, r8, SH(0, 3)};
    const int ranks[] = {2, 0, 8, 2};
    const char *names[] = {"contig", "rank0", "rank8", "empty"};
    for (int i = 0; i < 4; i++) {
      c = C(names[i]);
      c.dt2 = dt;
      c.rank2 = ranks[i];
      for (int d = 0; d < ranks[i]; d++) c.shape2[d] = shapes[i][d];
      c.s[0] = op == BXR_OP_RANDOM_NORMAL ? 1 : op == BXR_OP_RANDOM_UNIFORM ? -2 : 1.5;
      c.s[1] = op == BXR_OP_RANDOM_NORMAL ? 2 : 3;
      c.seed = 1234 + (uint64_t)i;
      cs[n++] = c;
    }
    return n;
  }
  case BXR_OP_ARANGE: {
    bool flt = bext_dtype_kind(dt) == BEXT_KIND_FLOAT;
    const double args[][3] = {{0, 5, 1}, {flt ? -2 : 10, flt ? 3 : 0, flt ? 0.5 : -3}, {3, 3, 1}, {1, 8, 3}};
    const char *names[] = {"0..5", "step", "empty", "partial"};
    for (int i = 0; i < 4; i++) {
      c = C(names[i]);
      c.dt2 = dt;
      memcpy(c.s, args[i], sizeof c.s);
      cs[n++] = c;
    }
    return n;
  }
  case BXR_OP_RESHAPE:
#define ONE(name, A) c = C(name), c.nin = 1, c.in[0] = A
    ONE("contig", TIN(dt, VK_GEN, L_CONTIG, 3, 4)), c.rank2 = 2, c.shape2[0] = 2, c.shape2[1] = -1, cs[n++] = c;
    ONE("transposed", TIN(dt, VK_GEN, L_TRANS, 3, 4)), c.rank2 = 1, c.shape2[0] = 12, cs[n++] = c;
    ONE("sliced", TIN(dt, VK_GEN, L_SLICED, 3, 4)), c.rank2 = 3, c.shape2[0] = 2, c.shape2[1] = 3, c.shape2[2] = 2, cs[n++] = c;
    ONE("rank0", TIN0(dt, VK_GEN)), c.rank2 = 1, c.shape2[0] = 1, cs[n++] = c;
    ONE("rank8", mk(dt, VK_GEN, L_TRANS, 8, r8)), c.rank2 = 2, c.shape2[0] = 4, c.shape2[1] = 4, cs[n++] = c;
    ONE("empty", TIN(dt, VK_GEN, L_CONTIG, 0, 3)), c.rank2 = 2, c.shape2[0] = 3, c.shape2[1] = 0, cs[n++] = c;
    return n;
  case BXR_OP_SWAP_DIMS:
    ONE("contig", TIN(dt, VK_GEN, L_CONTIG, 3, 4)), c.dims[0] = 0, c.dims[1] = 1, cs[n++] = c;
    ONE("transposed", TIN(dt, VK_GEN, L_TRANS, 2, 3, 4)), c.dims[0] = -1, c.dims[1] = 0, cs[n++] = c;
    ONE("rank8", mk(dt, VK_GEN, L_SLICED, 8, r8)), c.dims[0] = 2, c.dims[1] = 7, cs[n++] = c;
    ONE("empty", TIN(dt, VK_GEN, L_CONTIG, 0, 3)), c.dims[0] = 1, c.dims[1] = 0, cs[n++] = c;
    return n;
  case BXR_OP_PERMUTE:
    ONE("contig", TIN(dt, VK_GEN, L_CONTIG, 2, 3, 4)), c.nd = 3, c.dims[0] = 2, c.dims[1] = 0, c.dims[2] = 1, cs[n++] = c;
    ONE("sliced", TIN(dt, VK_GEN, L_SLICED, 2, 3, 4)), c.nd = 3, c.dims[0] = 1, c.dims[1] = -1, c.dims[2] = 0, cs[n++] = c;
    ONE("rank8", mk(dt, VK_GEN, L_CONTIG, 8, r8)), c.nd = 8;
    for (int d = 0; d < 8; d++) c.dims[d] = 7 - d;
    cs[n++] = c;
    ONE("rank0", TIN0(dt, VK_GEN)), c.nd = 0, cs[n++] = c;
    return n;
  case BXR_OP_EXPAND:
    ONE("contig", TIN(dt, VK_GEN, L_CONTIG, 3, 1)), c.rank2 = 3, c.shape2[0] = 2, c.shape2[1] = 3, c.shape2[2] = 4, cs[n++] = c;
    ONE("transposed", TIN(dt, VK_GEN, L_TRANS, 1, 3)), c.rank2 = 2, c.shape2[0] = 4, c.shape2[1] = 3, cs[n++] = c;
    ONE("rank0", TIN0(dt, VK_GEN)), c.rank2 = 2, c.shape2[0] = 2, c.shape2[1] = 3, cs[n++] = c;
    ONE("to-empty", TIN(dt, VK_GEN, L_CONTIG, 1, 3)), c.rank2 = 2, c.shape2[0] = 0, c.shape2[1] = 3, cs[n++] = c;
    return n;
  case BXR_OP_SLICE:
    ONE("contig", TIN(dt, VK_GEN, L_CONTIG, 5, 6)), c.nr = 2, c.a[0] = 1, c.b[0] = 4, c.a[1] = 2, c.b[1] = 5, cs[n++] = c;
    ONE("first-dim", TIN(dt, VK_GEN, L_TRANS, 5, 6)), c.nr = 1, c.a[0] = 2, c.b[0] = 5, cs[n++] = c;
    ONE("empty", TIN(dt, VK_GEN, L_CONTIG, 5, 6)), c.nr = 2, c.a[0] = 2, c.b[0] = 2, c.a[1] = 0, c.b[1] = 6, cs[n++] = c;
    ONE("rank8", mk(dt, VK_GEN, L_CONTIG, 8, r8)), c.nr = 8;
    for (int d = 0; d < 8; d++) c.a[d] = r8[d] == 2 ? 1 : 0, c.b[d] = r8[d];
    cs[n++] = c;
    return n;
  case BXR_OP_SLICE_ASSIGN:
#define TWO(name, A, B) c = C(name), c.nin = 2, c.in[0] = A, c.in[1] = B
    TWO("contig", TIN(dt, VK_GEN, L_CONTIG, 5, 6), TIN(dt, VK_GEN, L_CONTIG, 3, 3)), c.nr = 2, c.a[0] = 1, c.b[0] = 4, c.a[1] = 2, c.b[1] = 5, cs[n++] = c;
    TWO("strided", TIN(dt, VK_GEN, L_TRANS, 5, 6), TIN(dt, VK_GEN, L_SLICED, 2, 6)), c.nr = 1, c.a[0] = 3, c.b[0] = 5, cs[n++] = c;
    TWO("empty", TIN(dt, VK_GEN, L_CONTIG, 5, 6), TIN(dt, VK_GEN, L_CONTIG, 0, 6)), c.nr = 1, c.a[0] = 2, c.b[0] = 2, cs[n++] = c;
    return n;
  case BXR_OP_CAT:
    c = C("dim0"), c.nin = 3, c.dim = 0;
    c.in[0] = TIN(dt, VK_GEN, L_CONTIG, 2, 3), c.in[1] = TIN(dt, VK_GEN, L_TRANS, 1, 3), c.in[2] = TIN(dt, VK_GEN, L_SLICED, 4, 3);
    cs[n++] = c;
    c = C("dim-1"), c.nin = 2, c.dim = -1;
    c.in[0] = TIN(dt, VK_GEN, L_CONTIG, 3, 2), c.in[1] = TIN(dt, VK_GEN, L_EXPAND, 3, 1);
    cs[n++] = c;
    c = C("many+empty"), c.nin = 5, c.dim = 1;
    for (int i = 0; i < 5; i++) c.in[i] = TIN(dt, VK_GEN, L_CONTIG, 2, i == 2 ? 0 : i + 1, 2);
    cs[n++] = c;
    c = C("single"), c.nin = 1, c.dim = 0, c.in[0] = TIN(dt, VK_GEN, L_CONTIG, 4);
    cs[n++] = c;
    return n;
  case BXR_OP_FLIP:
    ONE("both", TIN(dt, VK_GEN, L_CONTIG, 3, 4)), c.nd = 2, c.dims[0] = 0, c.dims[1] = 1, cs[n++] = c;
    ONE("last-sliced", TIN(dt, VK_GEN, L_SLICED, 3, 4)), c.nd = 1, c.dims[0] = -1, cs[n++] = c;
    ONE("rank8", mk(dt, VK_GEN, L_TRANS, 8, r8)), c.nd = 3, c.dims[0] = 0, c.dims[1] = 2, c.dims[2] = 7, cs[n++] = c;
    ONE("none", TIN(dt, VK_GEN, L_CONTIG, 0, 3)), c.nd = 0, cs[n++] = c;
    return n;
  case BXR_OP_NARROW:
    ONE("dim0", TIN(dt, VK_GEN, L_CONTIG, 5, 4)), c.dim = 0, c.a[0] = 1, c.b[0] = 3, cs[n++] = c;
    ONE("dim-1-transposed", TIN(dt, VK_GEN, L_TRANS, 5, 4)), c.dim = -1, c.a[0] = 2, c.b[0] = 2, cs[n++] = c;
    ONE("empty", TIN(dt, VK_GEN, L_CONTIG, 5, 4)), c.dim = 1, c.a[0] = 4, c.b[0] = 0, cs[n++] = c;
    return n;
  case BXR_OP_REPEAT_DIM:
    ONE("dim0", TIN(dt, VK_GEN, L_CONTIG, 2, 3)), c.dim = 0, c.a[0] = 3, cs[n++] = c;
    ONE("dim1-transposed", TIN(dt, VK_GEN, L_TRANS, 2, 3)), c.dim = 1, c.a[0] = 2, cs[n++] = c;
    ONE("zero", TIN(dt, VK_GEN, L_CONTIG, 2, 3)), c.dim = 0, c.a[0] = 0, cs[n++] = c;
    ONE("rank8", mk(dt, VK_GEN, L_CONTIG, 8, r8)), c.dim = 6, c.a[0] = 3, cs[n++] = c;
    return n;
  case BXR_OP_GATHER: case BXR_OP_SELECT: {
    bool g = op == BXR_OP_GATHER;
    struct tin i1 = g ? TIN(BEXT_I64, VK_IDX, L_CONTIG, 3, 2) : TIN(BEXT_I64, VK_IDX, L_CONTIG, 5);
    i1.bound = 4;
    TWO("dim1", TIN(dt, VK_GEN, L_CONTIG, 3, 4), i1), c.dim = 1, cs[n++] = c;
    struct tin i2 = g ? TIN(BEXT_I32, VK_IDX, L_TRANS, 2, 4) : TIN(BEXT_I32, VK_IDX, L_SLICED, 4);
    i2.bound = 3;
    TWO("dim0-i32-strided", TIN(dt, VK_GEN, L_TRANS, 3, 4), i2), c.dim = 0, cs[n++] = c;
    struct tin i3 = g ? TIN(BEXT_I64, VK_IDX, L_CONTIG, 3, 0) : TIN(BEXT_I64, VK_IDX, L_CONTIG, 0);
    i3.bound = 4;
    TWO("empty", TIN(dt, VK_GEN, L_CONTIG, 3, 4), i3), c.dim = -1, cs[n++] = c;
    return n;
  }
  case BXR_OP_SCATTER_ADD: case BXR_OP_SELECT_ASSIGN: {
    bool s = op == BXR_OP_SCATTER_ADD;
    c = C("dim1"), c.nin = 3, c.dim = 1;
    c.in[0] = TIN(dt, VK_GEN, L_CONTIG, 3, 4);
    c.in[1] = s ? TIN(BEXT_I64, VK_IDX, L_CONTIG, 3, 3) : TIN(BEXT_I64, VK_IDX, L_CONTIG, 5);
    c.in[1].bound = 4;
    c.in[2] = s ? TIN(dt, VK_GEN, L_CONTIG, 3, 3) : TIN(dt, VK_GEN, L_CONTIG, 3, 5);
    cs[n++] = c;
    c = C("dim0-i32-strided"), c.nin = 3, c.dim = 0;
    c.in[0] = TIN(dt, VK_GEN, L_TRANS, 3, 4);
    c.in[1] = s ? TIN(BEXT_I32, VK_IDX, L_TRANS, 2, 4) : TIN(BEXT_I32, VK_IDX, L_SLICED, 2);
    c.in[1].bound = 3;
    c.in[2] = TIN(dt, VK_GEN, L_SLICED, 2, 4);
    cs[n++] = c;
    return n;
  }
  case BXR_OP_MASK_WHERE:
    c = C("bcast"), c.nin = 3;
    c.in[0] = TIN(dt, VK_GEN, L_CONTIG, 3, 4), c.in[1] = TIN(BEXT_BOOL, VK_GEN, L_CONTIG, 3, 4), c.in[2] = TIN(dt, VK_GEN, L_CONTIG, 4);
    cs[n++] = c;
    c = C("strided"), c.nin = 3;
    c.in[0] = TIN(dt, VK_GEN, L_TRANS, 3, 4), c.in[1] = TIN(BEXT_BOOL, VK_GEN, L_SLICED, 3, 1), c.in[2] = TIN(dt, VK_GEN, L_EXPAND, 2, 3, 4);
    cs[n++] = c;
    c = C("empty"), c.nin = 3;
    c.in[0] = TIN(dt, VK_GEN, L_CONTIG, 0, 4), c.in[1] = TIN(BEXT_BOOL, VK_GEN, L_CONTIG, 4), c.in[2] = TIN0(dt, VK_GEN);
    cs[n++] = c;
    return n;
  case BXR_OP_MASK_FILL:
    TWO("bcast", TIN(dt, VK_GEN, L_CONTIG, 3, 4), TIN(BEXT_BOOL, VK_GEN, L_CONTIG, 1, 4)), c.s[0] = scalar_for(op, dt), cs[n++] = c;
    TWO("strided", TIN(dt, VK_GEN, L_TRANS, 3, 4), TIN(BEXT_BOOL, VK_GEN, L_SLICED, 3, 4)), c.s[0] = scalar_for(op, dt), cs[n++] = c;
    TWO("rank8", mk(dt, VK_GEN, L_CONTIG, 8, r8), TIN0(BEXT_BOOL, VK_GEN)), c.s[0] = scalar_for(op, dt), cs[n++] = c;
    return n;
  case BXR_OP_CUMSUM:
    ONE("dim1", TIN(dt, VK_GEN, L_CONTIG, 3, 4)), c.dim = 1, cs[n++] = c;
    ONE("dim0-transposed", TIN(dt, VK_GEN, L_TRANS, 3, 4)), c.dim = 0, cs[n++] = c;
    ONE("rank8", mk(dt, VK_GEN, L_SLICED, 8, r8)), c.dim = -1, cs[n++] = c;
    ONE("empty", TIN(dt, VK_GEN, L_CONTIG, 0, 3)), c.dim = 0, cs[n++] = c;
    ONE("rank1", TIN(dt, VK_GEN, L_CONTIG, 7)), c.dim = 0, cs[n++] = c;
    return n;
  case BXR_OP_MATMUL:
    TWO("2d", TIN(dt, VK_GEN, L_CONTIG, 3, 4), TIN(dt, VK_GEN, L_CONTIG, 4, 5)), cs[n++] = c;
    TWO("batched", TIN(dt, VK_GEN, L_CONTIG, 2, 3, 4), TIN(dt, VK_GEN, L_CONTIG, 4, 2)), cs[n++] = c;
    TWO("bcast-batch", TIN(dt, VK_GEN, L_CONTIG, 2, 1, 3, 4), TIN(dt, VK_GEN, L_CONTIG, 3, 4, 2)), cs[n++] = c;
    TWO("transposed", TIN(dt, VK_GEN, L_TRANS, 3, 4), TIN(dt, VK_GEN, L_TRANS, 4, 5)), cs[n++] = c;
    TWO("sliced", TIN(dt, VK_GEN, L_SLICED, 2, 3, 4), TIN(dt, VK_GEN, L_EXPAND, 2, 4, 3)), cs[n++] = c;
    TWO("k=0", TIN(dt, VK_GEN, L_CONTIG, 2, 0), TIN(dt, VK_GEN, L_CONTIG, 0, 3)), cs[n++] = c;
    TWO("empty-batch", TIN(dt, VK_GEN, L_CONTIG, 0, 2, 3), TIN(dt, VK_GEN, L_CONTIG, 3, 2)), cs[n++] = c;
    TWO("rank8", mk(dt, VK_GEN, L_CONTIG, 8, (const int64_t[]){2, 1, 1, 2, 1, 1, 2, 3}), TIN(dt, VK_GEN, L_CONTIG, 3, 2)), cs[n++] = c;
    if (large_dtype(dt)) TWO("large", TIN(dt, VK_GEN, L_CONTIG, 64, 96), TIN(dt, VK_GEN, L_TRANS, 96, 80)), cs[n++] = c;
    return n;
  case BXR_OP_CAST:
    for (int t = 0; t < BEXT_DTYPE_COUNT; t++) {
      ONE(bext_dtype_name((bext_dtype)t), TIN(dt, VK_GEN, t % 2 ? L_TRANS : L_CONTIG, 3, 4)), c.dt2 = (bext_dtype)t;
      cs[n++] = c;
    }
    ONE("empty", TIN(dt, VK_GEN, L_CONTIG, 0, 3)), c.dt2 = BEXT_F32, cs[n++] = c;
    ONE("rank0", TIN0(dt, VK_GEN)), c.dt2 = BEXT_I64, cs[n++] = c;
    return n;
#undef ONE
#undef TWO
  default: return 0;
  }
}

/* dtypes a cell exists for: the row's kinds for input 0; creation ops by op. */
static bool dtype_allowed(enum bxr_opcode op, bext_dtype dt) {
  const struct bxr_op_info *info = &bxr_op_info[op];
  if (info->nin == 0) {
    if (op == BXR_OP_ARANGE) return dt != BEXT_BOOL;
    if (op == BXR_OP_RANDOM_UNIFORM || op == BXR_OP_RANDOM_NORMAL) return bext_dtype_kind(dt) == BEXT_KIND_FLOAT;
    return true;
  }
  return (info->kinds[0] & (1u << bext_dtype_kind(dt))) != 0;
}

/* --------------------------------------------------------------- compare */

static double tol_for(bext_dtype dt) {
  switch (dt) {
  case BEXT_F64: return 1e-12;
  case BEXT_F32: return 1e-7;
  case BEXT_F16: return 1e-4;
  case BEXT_BF16: return 1e-3;
  default: return 0;
  }
}

static bool compare(const struct host *got, const struct host *want, bool values, char *why, size_t n) {
  if (got->dt != want->dt || got->rank != want->rank) {
    snprintf(why, n, "got dtype %s rank %d, want %s rank %d", bext_dtype_name(got->dt), got->rank,
             bext_dtype_name(want->dt), want->rank);
    return false;
  }
  for (int d = 0; d < got->rank; d++)
    if (got->shape[d] != want->shape[d]) {
      snprintf(why, n, "extent %lld in dim %d, want %lld", (long long)got->shape[d], d, (long long)want->shape[d]);
      return false;
    }
  if (!values) return true;
  double tol = tol_for(want->dt), num = 0, den = 0;
  for (int64_t i = 0; i < got->n; i++) {
    double x = got->v[i], y = want->v[i];
    if (isnan(x) || isnan(y) || isinf(x) || isinf(y) || tol == 0) {
      if (!(x == y || (isnan(x) && isnan(y)))) {
        snprintf(why, n, "element %lld is %g, want %g", (long long)i, x, y);
        return false;
      }
      continue;
    }
    num += (x - y) * (x - y);
    den += y * y;
  }
  double nmse = den > 0 ? num / den : num;
  if (nmse > tol) {
    snprintf(why, n, "normalized error %.3g above %.0e", nmse, tol);
    return false;
  }
  return true;
}

/* ---------------------------------------------------------------- matrix */

enum cell { CELL_NA, CELL_OK, CELL_FAIL, CELL_NI, CELL_UNSUP };

/* A device's own refusal of an op or dtype it does not run (yet). */
static bool unsupported(const char *why) {
  return strstr(why, "not implemented on this device yet") || strstr(why, "not supported on this device");
}

/* Runs one variant on dev; fills got (result read back).  Returns false
 * with the error text in why when the op failed. */
static bool run_variant(enum bxr_opcode op, const struct tcase *c, const bext_device *dev, struct host *ins,
                        struct host *got, char *why, size_t wn) {
  bext_tensor *in[6] = {0};
  for (int i = 0; i < c->nin; i++) {
    in[i] = make_input(&c->in[i], c->seed + (uint64_t)i * 101, dev);
    if (!in[i]) {
      snprintf(why, wn, "could not build input %d: %s", i + 1, bext_last_error());
      for (int k = 0; k < i; k++) bext_release(in[k]);
      return false;
    }
    if (ins) read_host(in[i], &ins[i]);
  }
  bext_tensor *out = run(op, c, in, dev);
  if (!out) {
    snprintf(why, wn, "%s", bext_last_error());
    return false;
  }
  bool ok = read_host(out, got);
  if (!ok) snprintf(why, wn, "read failed: %s", bext_last_error());
  if (ok && bext_device_of(out) != dev) {
    snprintf(why, wn, "result is on another device");
    ok = false;
  }
  bext_release(out);
  return ok;
}

/* flex == NULL: NdArray against the oracle.  Else flex against NdArray. */
static int run_matrix(const bext_device *dev, bool vs_reference, const char *title) {
  static struct tcase cs[MAXC];
  int failures = 0, unsup = 0;
  char details[16384], unsup_list[32768];
  size_t dl = 0, ul = 0;
  details[0] = unsup_list[0] = 0;
  printf("\n== conformance: %s ==\n"
         "cells: ok = every variant passes | FAIL | n/i = not implemented | - = dtype not in the row"
         " | unsup = the device refuses it (listed below)\n%-16s",
         title, "op");
  for (int t = 0; t < BEXT_DTYPE_COUNT; t++) printf(" %-5s", bext_dtype_name((bext_dtype)t));
  printf("\n");
  for (int o = 0; o < BXR_OP_COUNT; o++) {
    enum bxr_opcode op = (enum bxr_opcode)o;
    printf("%-16s", bxr_op_name(op));
    for (int t = 0; t < BEXT_DTYPE_COUNT; t++) {
      bext_dtype dt = (bext_dtype)t;
      enum cell cell = CELL_NA;
      char why[600] = "";
      const char *variant = "";
      if (dtype_allowed(op, dt)) {
        int n = make_cases(op, dt, cs);
        cell = n > 0 ? CELL_OK : CELL_FAIL;
        if (n == 0) snprintf(why, sizeof why, "no conformance case for this op");
        for (int k = 0; k < n && cell == CELL_OK; k++) {
          struct host ins[6] = {0}, got = {0}, want = {0};
          bool values = true;
          variant = cs[k].variant;
          bool ok = run_variant(op, &cs[k], dev, vs_reference ? NULL : ins, &got, why, sizeof why);
          if (ok && !vs_reference) {
            values = oracle(op, &cs[k], ins, &want);
          } else if (ok) {
            ok = run_variant(op, &cs[k], dev_nd, NULL, &want, why, sizeof why);
            if (!ok) snprintf(why + strlen(why), sizeof why - strlen(why), " (on the reference)");
            values = op != BXR_OP_EMPTY;
          }
          if (ok) ok = compare(&got, &want, values, why, sizeof why);
          if (!ok)
            cell = unsupported(why) ? CELL_UNSUP : strstr(why, "not implemented") ? CELL_NI : CELL_FAIL;
          for (int i = 0; i < 6; i++) host_free(&ins[i]);
          host_free(&got);
          host_free(&want);
        }
      }
      static const char *txt[] = {"-", "ok", "FAIL", "n/i", "unsup"};
      printf(" %-5s", txt[cell]);
      if (cell == CELL_UNSUP) {
        unsup++;
        if (ul < sizeof unsup_list - 700)
          ul += (size_t)snprintf(unsup_list + ul, sizeof unsup_list - ul, "  %s %s: %s\n", bxr_op_name(op),
                                 bext_dtype_name(dt), why);
      }
      if (cell == CELL_FAIL || cell == CELL_NI) {
        failures++;
        if (dl < sizeof details - 700)
          dl += (size_t)snprintf(details + dl, sizeof details - dl, "  %s %s [%s]: %s\n", bxr_op_name(op),
                                 bext_dtype_name(dt), variant, why);
      }
    }
    printf("\n");
  }
  printf("%s: %d failing cells (ok = all variants pass; n/i = not implemented)\n%s", title, failures, details);
  if (unsup)
    printf("%s: %d cells UNSUPPORTED by the device (not run, not passed):\n%s", title, unsup, unsup_list);
  fflush(stdout);
  return failures;
}

static void setup(void) {
  cr_assert((dev_nd = bext_device_get("ndarray")), "%s", bext_last_error());
}

/* The devices whose matrix runs: the backend registry's list, or the
 * device specs in $BEXT_CONFORMANCE_DEVICES ("ndarray,cube:cuda:0"),
 * which the GPU check (tools/gpu-check) names because its build has no
 * LLVM for cube:cpu.  A named device that does not open fails the test
 * with its reason: asking for a device is not a silent skip. */
static int matrix_devices(const bext_device **ds, int cap) {
  const char *env = getenv("BEXT_CONFORMANCE_DEVICES");
  if (!env || !*env) {
    int n = bext_device_list(ds, cap);
#ifdef BEXT_HAVE_CUBE_VULKAN
    /* The registry lists each backend's default device (cube:cpu); the
     * cube's Vulkan target runs on the first Vulkan device (lavapipe in
     * `make test`), when there is one: said plainly when not. */
    const bext_device *vk = bext_device_get("cube:vulkan:0");
    if (vk && bext_device_available(vk) && n < cap) ds[n++] = vk;
    else printf("conformance: cube:vulkan:0 is not available here (%s): its matrix is SKIPPED, not passed\n",
                bext_last_error());
#else
    printf("conformance: cube:vulkan is not in this build (no Vulkan headers): its matrix is SKIPPED, not passed\n");
#endif
    /* The GPU targets are in every build (their drivers are dlopen'd):
     * they join on a machine with the driver and a device, and say why
     * not elsewhere. */
    static const char *const gpus[] = {"cube:cuda:0", "cube:hip:0"};
    for (size_t g = 0; g < sizeof gpus / sizeof *gpus; g++) {
      const bext_device *gd = bext_device_get(gpus[g]);
      if (gd && bext_device_available(gd) && n < cap) ds[n++] = gd;
      else printf("conformance: %s is not available here (%s): its matrix is SKIPPED, not passed\n", gpus[g],
                  bext_last_error());
    }
    return n;
  }
  int n = 0;
  char buf[512];
  snprintf(buf, sizeof buf, "%s", env);
  for (char *save = NULL, *spec = strtok_r(buf, ",", &save); spec && n < cap; spec = strtok_r(NULL, ",", &save)) {
    const bext_device *d = bext_device_get(spec);
    cr_assert(d && bext_device_available(d), "BEXT_CONFORMANCE_DEVICES names %s: %s", spec, bext_last_error());
    ds[n++] = d;
  }
  return n;
}

/* The matrix comes from the backend registry: ndarray (the reference)
 * against the closed-form oracle, every other backend of this build
 * against ndarray.  A backend added to the build joins it by itself. */
Test(conformance, every_backend_of_the_build, .init = setup) {
  const bext_device *ds[BEXT_BACKEND_COUNT + 3];   /* + cube:vulkan:0, cube:cuda:0, cube:hip:0 */
  int n = matrix_devices(ds, BEXT_BACKEND_COUNT + 3);
  if (!getenv("BEXT_CONFORMANCE_DEVICES")) cr_assert_geq(n, 2, "this build has at least flex and ndarray");
  /* Say plainly which backends of the table this build lacks (libtorch
   * without libtorch-dev): their matrix did not run, so it did not pass. */
  for (int k = 0; k < BEXT_BACKEND_COUNT && !getenv("BEXT_CONFORMANCE_DEVICES"); k++) {
    const char *name = bext_backend_name((bext_backend_kind)k);
    bool built = false;
    for (int i = 0; i < n; i++) built |= strncmp(bext_device_name(ds[i]), name, strlen(name)) == 0;
    /* remote: not listed (a server at an address); remote_over_bext_server runs its matrix */
    if (k == BEXT_BACKEND_REMOTE) continue;
    if (!built) printf("conformance: backend %s is not in this build: its matrix is SKIPPED, not passed\n", name);
  }
  for (int i = 0; i < n; i++) {
    char title[96];
    bool ref = ds[i] == dev_nd;
    snprintf(title, sizeof title, "%s vs %s", bext_device_name(ds[i]),
             ref ? "closed-form oracle" : "ndarray reference");
    int f = run_matrix(ds[i], !ref, title);
    cr_expect_eq(f, 0, "%d failing %s cells (table above)", f, bext_device_name(ds[i]));
  }
}

/* The Remote backend over a real server: bext-server (a child process)
 * hosts flex on loopback TCP, then flex+fusion and cube:cpu on an ipc
 * socket in a temporary directory (both transports of remote:), and the
 * whole matrix runs through it against the ndarray reference — every
 * op's frame, the server's dispatch, uploads of every dtype and layout,
 * reads.  cube:cpu's refusals (f16, ...) come back as deferred errors
 * naming them: the same unsup cells as cube:cpu itself. */
Test(conformance, remote_over_bext_server, .init = setup) {
#ifdef BEXT_HAVE_REMOTE
  /* flex: host memory (reads straight from its buffers); flex+fusion: a
   * lazy stack (reads through bext_read, deferred work at the read);
   * cube:cpu: kernels compiled on the server (their disk cache warm after
   * every_backend_of_the_build: the child inherits BEXT_CACHE_DIR). */
  static const char *const hosted[] = {"flex", "flex+fusion", "cube:cpu"};
  for (size_t h = 0; h < sizeof hosted / sizeof *hosted; h++) {
    const bext_device *local = bext_device_get(hosted[h]);
    if (!local || !bext_device_available(local)) {   /* the server is this build: it could not host it either */
      printf("conformance: %s is not available in this build (%s): remote hosting it is SKIPPED, not passed\n",
             hosted[h], bext_last_error());
      continue;
    }
    struct rh_server srv;
    const char *const quiet[] = {"--quiet", NULL};
    cr_assert(h == 0 ? rh_start_tcp(&srv, hosted[h], quiet) : rh_start(&srv, hosted[h], quiet), "%s", srv.err);
    const bext_device *d = bext_device_get(srv.spec);
    cr_assert(d && bext_device_available(d), "%s", bext_last_error());
    char title[200];
    snprintf(title, sizeof title, "remote:%s://... hosting %s vs ndarray reference", h == 0 ? "tcp" : "ipc",
             hosted[h]);
    int f = run_matrix(d, true, title);
    cr_expect_eq(f, 0, "%d failing cells of remote hosting %s (table above)", f, hosted[h]);
    bext_device_close(d);
    int st = rh_stop(&srv, SIGTERM);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "bext-server hosting %s exits 0 on SIGTERM", hosted[h]);
  }
#else
  printf("conformance: backend remote is not in this build (no nng / protobuf-c): its matrix is SKIPPED, not passed\n");
#endif
}

/* A decorator wraps every backend without any change to them: the test
 * layer "+count" (tests/decorator) over each backend passes the matrix
 * against the ndarray reference, and it saw every op go through it. */
Test(conformance, count_decorator_over_every_backend, .init = setup) {
  cr_assert(count_layer_register(), "%s", bext_last_error());
  const bext_device *ds[BEXT_BACKEND_COUNT + 3];   /* + cube:vulkan:0, cube:cuda:0, cube:hip:0 */
  int n = matrix_devices(ds, BEXT_BACKEND_COUNT + 3);
  for (int i = 0; i < n; i++) {
    char spec[64], title[96];
    snprintf(spec, sizeof spec, "%s+count", bext_device_name(ds[i]));
    const bext_device *d = bext_device_get(spec);
    cr_assert(d && bext_device_available(d), "%s", bext_last_error());
    count_reset();
    snprintf(title, sizeof title, "%s vs ndarray reference", spec);
    int f = run_matrix(d, true, title);
    cr_expect_eq(f, 0, "%d failing %s cells (table above)", f, spec);
    for (int o = 0; o < BXR_OP_COUNT; o++)
      cr_expect_gt(count_core(o), 0, "op %s never went through %s", bxr_op_name((enum bxr_opcode)o), spec);
  }
}

/* Every op of the table has conformance cases for every dtype it allows:
 * this fails when a row is added without cases. */
Test(conformance, every_op_has_cases) {
  static struct tcase cs[MAXC];
  for (int o = 0; o < BXR_OP_COUNT; o++)
    for (int t = 0; t < BEXT_DTYPE_COUNT; t++)
      if (dtype_allowed((enum bxr_opcode)o, (bext_dtype)t))
        cr_expect_gt(make_cases((enum bxr_opcode)o, (bext_dtype)t, cs), 0, "no cases for %s %s",
                     bxr_op_name((enum bxr_opcode)o), bext_dtype_name((bext_dtype)t));
}

/* ------------------------------------------------- inference on specs */
/* bext_infer (bext/ops.h) answers from specs alone what the real op
 * returns: for every case of the matrix (every op x dtype x variant), the
 * same dtype and shape as running it on the reference backend. */

/* The scalars and attributes api.c's entry puts into the descriptor for
 * case c, from the row's columns (int scalars: the three rows bext.h
 * declares with int64_t parameters). */
static void args_for(enum bxr_opcode op, const struct tcase *c, bext_op_args *args) {
  const struct bxr_op_info *r = &bxr_op_info[op];
  memset(args, 0, sizeof *args);
  for (int k = 0; k < r->nscalar; k++) args->sc[k].f = c->s[k];
  if (op == BXR_OP_NARROW) args->sc[0].i = c->a[0], args->sc[1].i = c->b[0];
  if (op == BXR_OP_REPEAT_DIM) args->sc[0].i = c->a[0];
  if (op == BXR_OP_POWI) args->sc[0].i = (int64_t)c->s[0];
  bext_attrs *at = &args->at;
  if (r->attrs & BXR_A_SHAPE) {
    at->rank = c->rank2;
    memcpy(at->shape, c->shape2, sizeof at->shape);
  }
  if (r->attrs & BXR_A_DTYPE) at->dtype = c->dt2;
  if (r->attrs & BXR_A_SEED) at->seed = c->seed;
  if (r->attrs & BXR_A_DIM) at->dim = c->dim;
  if (r->attrs & BXR_A_KEEPDIM) at->keepdim = c->keepdim, at->all = c->all;
  if (r->attrs & BXR_A_DIMS) {
    at->ndims = op == BXR_OP_SWAP_DIMS ? 2 : c->nd;
    memcpy(at->dims, c->dims, sizeof at->dims);
  }
  if (r->attrs & BXR_A_RANGES) {
    at->nranges = c->nr;
    memcpy(at->start, c->a, sizeof at->start);
    memcpy(at->end, c->b, sizeof at->end);
  }
}

static bext_spec spec_of(const bext_tensor *t) {
  bext_spec s = {.dtype = bext_dtype_of(t), .rank = bext_rank(t)};
  for (int d = 0; d < s.rank; d++) s.shape[d] = bext_shape(t)[d];
  return s;
}

static bool same_spec(const bext_spec *a, const bext_spec *b) {
  if (a->dtype != b->dtype || a->rank != b->rank) return false;
  for (int d = 0; d < a->rank; d++)
    if (a->shape[d] != b->shape[d]) return false;
  return true;
}

Test(conformance, spec_inference_matches_every_op, .init = setup) {
  static struct tcase cs[MAXC];
  int checked = 0;
  for (int o = 0; o < BXR_OP_COUNT; o++)
    for (int t = 0; t < BEXT_DTYPE_COUNT; t++) {
      enum bxr_opcode op = (enum bxr_opcode)o;
      if (!dtype_allowed(op, (bext_dtype)t)) continue;
      int n = make_cases(op, (bext_dtype)t, cs);
      for (int k = 0; k < n; k++) {
        const struct tcase *c = &cs[k];
        bext_tensor *in[6] = {0};
        bext_spec specs[6];
        for (int i = 0; i < c->nin; i++) {
          cr_assert((in[i] = make_input(&c->in[i], c->seed + (uint64_t)i * 101, dev_nd)), "%s", bext_last_error());
          specs[i] = spec_of(in[i]);
        }
        bext_op_args args;
        args_for(op, c, &args);
        bext_spec want, got;
        bext_tensor *res = run(op, c, in, dev_nd);
        cr_assert_not_null(res, "%s [%s]: %s", bxr_op_name(op), c->variant, bext_last_error());
        want = spec_of(res);
        bext_release(res);
        cr_assert(bext_infer(bxr_op_name(op), specs, c->nin, &args, &got), "%s %s [%s]: %s", bxr_op_name(op),
                  bext_dtype_name((bext_dtype)t), c->variant, bext_last_error());
        char a[200], b[200];
        cr_expect(same_spec(&got, &want), "%s %s [%s]: bext_infer says %s, the op returns %s", bxr_op_name(op),
                  bext_dtype_name((bext_dtype)t), c->variant, bxr_describe_spec(&got, a, sizeof a),
                  bxr_describe_spec(&want, b, sizeof b));
        checked++;
      }
    }
  cr_expect_gt(checked, BXR_OP_COUNT, "every op was asked");
}

/* A failing call and its spec-level question give the same message: one
 * rule, one formatter.  Also the checks only bext_infer needs. */
Test(conformance, spec_inference_errors_match_the_ops, .init = setup) {
  int64_t s23[] = {2, 3}, s4[] = {4}, s32[] = {3, 2}, s5[] = {5};
  struct {
    const char *op, *api;
    bext_dtype dt0, dt1;
    int r0, r1;
    const int64_t *sh0, *sh1;
  } cases[] = {
      {"add", "bext_add", BEXT_F32, BEXT_F32, 2, 1, s23, s4},
      {"mul", "bext_mul", BEXT_F32, BEXT_F64, 2, 2, s23, s23},
      {"matmul", "bext_matmul", BEXT_F32, BEXT_F32, 2, 2, s23, s23},
      {"exp", "bext_exp", BEXT_I32, 0, 2, 0, s23, NULL},
      {"and", "bext_and", BEXT_F32, BEXT_BOOL, 2, 2, s23, s23},
      {"sum", "bext_sum_dim", BEXT_F32, 0, 2, 0, s23, NULL},
      {"reshape", "bext_reshape", BEXT_F32, 0, 2, 0, s23, NULL},
      {"cat", "bext_cat", BEXT_F32, BEXT_F32, 2, 2, s23, s32},
      {"gather", "bext_gather", BEXT_F32, BEXT_F32, 1, 1, s5, s5},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    bext_tensor *in[2] = {0};
    bext_spec specs[2];
    int n = cases[k].sh1 ? 2 : 1;
    for (int i = 0; i < n; i++) {
      bext_dtype dt = i ? cases[k].dt1 : cases[k].dt0;
      cr_assert((in[i] = bext_zeros(i ? cases[k].sh1 : cases[k].sh0, i ? cases[k].r1 : cases[k].r0, dt, dev_nd)));
      specs[i] = spec_of(in[i]);
    }
    bext_op_args args = {.api = cases[k].api};
    bext_tensor *res = NULL;
    const char *op = cases[k].op;
    if (!strcmp(op, "add")) res = bext_add(in[0], in[1]);
    else if (!strcmp(op, "mul")) res = bext_mul(in[0], in[1]);
    else if (!strcmp(op, "matmul")) res = bext_matmul(in[0], in[1]);
    else if (!strcmp(op, "exp")) res = bext_exp(in[0]);
    else if (!strcmp(op, "and")) res = bext_and(in[0], in[1]);
    else if (!strcmp(op, "sum")) res = bext_sum_dim(in[0], 5, false), args.at.dim = 5;
    else if (!strcmp(op, "reshape")) {
      int64_t to[] = {4, -1};
      res = bext_reshape(in[0], to, 2);
      args.at.rank = 2, args.at.shape[0] = 4, args.at.shape[1] = -1;
    } else if (!strcmp(op, "cat")) res = bext_cat(in, 2, 1), args.at.dim = 1;
    else if (!strcmp(op, "gather")) res = bext_gather(in[0], 0, in[1]);
    cr_assert_null(res, "%s should fail", op);
    char want[1024];
    snprintf(want, sizeof want, "%s", bext_last_error());
    bext_spec out;
    cr_assert(!bext_infer(op, specs, n, &args, &out), "bext_infer %s should fail", op);
    cr_expect_str_eq(bext_last_error(), want);
  }
  /* what only the spec path can get wrong */
  bext_spec a = {.dtype = BEXT_F32, .rank = 1, .shape = {3}}, bad = {.dtype = BEXT_F32, .rank = 9}, out;
  cr_expect(!bext_infer("no_such_op", &a, 1, NULL, &out));
  cr_expect_str_eq(bext_last_error(), "bext_infer: unknown op 'no_such_op'");
  cr_expect(!bext_infer("add", &a, 1, NULL, &out));
  cr_expect_str_eq(bext_last_error(), "bext_add: expects 2 input specs, found 1");
  cr_expect(!bext_infer("neg", &bad, 1, NULL, &out));
  cr_expect(strstr(bext_last_error(), "input spec 1 is malformed"), "%s", bext_last_error());
  /* args NULL: all zero; dims normalized in place */
  cr_assert(bext_infer("neg", &a, 1, NULL, &out) && same_spec(&out, &a));
  bext_op_args r = {.at = {.dim = -1}};
  cr_assert(bext_infer("argmax", &a, 1, &r, &out), "%s", bext_last_error());
  cr_expect(out.dtype == BEXT_I64 && out.rank == 0 && r.at.dim == 0);
}
