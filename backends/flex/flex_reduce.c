/* flex_reduce.c — reductions (sum mean prod max min argmax argmin any
 * all, whole tensor or along one dim) and cumsum.
 *
 * The input is viewed as [outer, K, inner] with K the reduced extent (a
 * non-contiguous input is first copied contiguous).  inner == 1 reduces
 * contiguous rows; inner > 1 accumulates whole rows of `inner` elements,
 * which keeps the reads sequential instead of striding by `inner`.  Floats
 * accumulate in double, ints in wrapping i64, bools in u8; max/min let NaN
 * win; argmax/argmin take the first occurrence of the extreme (the first
 * NaN when there are NaNs, as the reference does).  bf16 extremes of a
 * row scan the 16-bit patterns as ordered int16 keys (argext_bf16), f16
 * ones widen blocks to f32 in lanes and take the f32 kernels; half sums
 * have kernels of their own that widen in registers (the f32 kernels'
 * bits).
 *
 * Float sums are pairwise (bext.h states the bound): a contiguous row goes
 * through the kernels' sum_f32/sum_f64 (leaves of BXFX_LEAF elements in
 * f64 lanes, combined by the pairwise counter of flex_kern.h); rows of
 * `inner` elements are summed in leaves of BXFX_ROW_LEAF rows (the
 * kernels' leafrows: running sums of a column strip stay in registers
 * over the leaf's rows), combined by the same counter with a block of
 * `inner` sums per node.  The whole-tensor
 * sum splits across threads in chunks of BXFX_SUM_CHUNK elements at fixed
 * boundaries, and the counter combines the chunk sums: the same bits as
 * one serial pass, whatever the thread count. */
#include <math.h>
#include <string.h>

#include "flex_internal.h"

struct red {
  enum bxr_opcode op;
  const char *src;
  bext_dtype dt;
  char *dst;
  bext_dtype odt;
  int repr;                 /* accumulator representation */
  int64_t outer, K, inner;
  /* whole-tensor float sum split: the sum of chunk c of BXFX_SUM_CHUNK
   * elements goes to part[c] */
  double *part;
  int64_t *pidx;            /* the same for extremes: each chunk's index */
};

/* Elements per chunk of the threaded whole-tensor sum: a power-of-two
 * number of leaves, so the chunk sums combine into exactly the serial
 * result (flex_kern.h, bxfx_pw). */
#define BXFX_SUM_CHUNK ((int64_t)BXFX_LEAF * 64)
/* Rows per leaf when summing rows of `inner` elements (inner > 1): the
 * leaf is a plain running sum, so its error grows with this; the counter
 * above it adds log2(K / BXFX_ROW_LEAF) levels. */
#define BXFX_ROW_LEAF 16
_Static_assert(BXFX_BLK % BXFX_LEAF == 0, "row blocks hold whole leaves");

static inline bool is_float_sum(const struct red *R) {
  return (R->op == BXR_OP_SUM || R->op == BXR_OP_MEAN) && R->repr == BXFX_R_F64;
}

/* Pairwise sum of n contiguous f16/bf16 elements: the kernels widen each
 * leaf in registers to f64 (exactly, as through f32): the widened values'
 * f32 sum, with the same tree. */
static double half_sum(bext_dtype dt, const uint16_t *p, size_t n) {
  return (dt == BEXT_F16 ? bxfx_kern()->sum_f16 : bxfx_kern()->sum_bf16)(p, n);
}

static inline bool is_half(bext_dtype dt) { return dt == BEXT_F16 || dt == BEXT_BF16; }

/* n f16/bf16 elements widened to f32 (the kernels' conversions). */
static void half_to_f32(bext_dtype dt, const void *p, float *o, size_t n) {
  (dt == BEXT_F16 ? bxfx_kern()->f16_to_f32 : bxfx_kern()->bf16_to_f32)((const uint16_t *)p, o, n);
}

/* Pairwise sum of one contiguous row of K elements (any float dtype). */
static double row_sum(const struct red *R, const char *row) {
  if (R->dt == BEXT_F32) return bxfx_kern()->sum_f32((const float *)row, (size_t)R->K);
  if (R->dt == BEXT_F64) return bxfx_kern()->sum_f64((const double *)row, (size_t)R->K);
  return half_sum(R->dt, (const uint16_t *)row, (size_t)R->K);
}

/* Pairwise sums over k of K rows of n <= rs_width(K) elements (row k at
 * base + k*inner elements) into out[0..n): leaves of BXFX_ROW_LEAF rows,
 * then bxfx_pw's tree with a block of n sums per node.  A column's tree
 * depends only on K, so the result does not depend on how the columns are
 * cut into blocks or threads.  The node stack (floor(log2(leaves)) + 2
 * blocks) lives on this frame: no allocation inside a pool task.  Its
 * BXFX_RS_CELLS doubles are cut into as wide blocks as K's tree allows:
 * wide blocks read each row in long runs (the rows are `inner` apart). */
enum { BXFX_RS_NODES = 44, BXFX_RS_CELLS = 44 * 128 };   /* 44 nodes: up to 2^42 leaves */
static size_t rs_width(int64_t K) {
  int64_t leaves = (K + BXFX_ROW_LEAF - 1) / BXFX_ROW_LEAF;
  int nodes = 2;
  while (leaves > 1) leaves >>= 1, nodes++;
  size_t w = (size_t)(BXFX_RS_CELLS / nodes) & ~(size_t)7;
  return w > BXFX_BLK ? BXFX_BLK : w;
}
__attribute__((noinline)) static void rows_sum(const struct red *R, const char *base, size_t n, double *out) {
  const size_t es = bext_dtype_size(R->dt);
  const int64_t rowbytes = R->inner * (int64_t)es;
  const struct bxfx_kernels *K = bxfx_kern();
  _Alignas(32) double cells[BXFX_RS_CELLS], x[BXFX_BLK];
  unsigned char lvl[BXFX_RS_NODES];
#define node(t) (cells + (size_t)(t) * n)
  int top = 0;
  for (int64_t k0 = 0; k0 < R->K; k0 += BXFX_ROW_LEAF) {
    BXR_ASSERT(top < BXFX_RS_NODES && (size_t)(top + 1) * n <= BXFX_RS_CELLS);
    double *leaf = node(top);
    int64_t k1 = k0 + BXFX_ROW_LEAF < R->K ? k0 + BXFX_ROW_LEAF : R->K;
    const char *row0 = base + k0 * rowbytes;
    if (R->dt == BEXT_F32) {
      K->leafrows_f32(leaf, (const float *)row0, (size_t)R->inner, (size_t)(k1 - k0), n);
    } else if (R->dt == BEXT_F64) {
      K->leafrows_f64(leaf, (const double *)row0, (size_t)R->inner, (size_t)(k1 - k0), n);
    } else if (is_half(R->dt)) {   /* rows widened in registers: the f32 leaf's bits */
      (R->dt == BEXT_F16 ? K->leafrows_f16 : K->leafrows_bf16)(leaf, (const uint16_t *)row0, (size_t)R->inner,
                                                               (size_t)(k1 - k0), n);
    } else {
      bxfx_load(leaf, BXFX_R_F64, row0, R->dt, 1, n);
      for (int64_t k = k0 + 1; k < k1; k++) {
        bxfx_load(x, BXFX_R_F64, base + k * rowbytes, R->dt, 1, n);
        K->acc_f64(leaf, x, n);
      }
    }
    unsigned char l = 0;
    while (top > 0 && lvl[top - 1] == l) {   /* equal neighbours merge: left += right */
      K->acc_f64(node(top - 1), node(top), n);
      top--;
      l++;
    }
    lvl[top++] = l;
  }
  if (top == 0) {
    memset(out, 0, n * sizeof(double));
    return;
  }
  for (int t = top - 2; t >= 0; t--)   /* collapse from the smallest: v[t] + (...) */
    for (size_t i = 0; i < n; i++) node(t)[i] += node(t + 1)[i];
  memcpy(out, node(0), n * sizeof(double));
#undef node
}

/* Reduces n-element blocks: acc/arg over k (block of values x at step k).
 * Integer sums and products wrap (bxk_scalar.h's add and mul). */
static void combine(const struct red *R, void *accv, int64_t *arg, const void *xv, size_t n, int64_t k) {
  switch (R->repr) {
  case BXFX_R_F64: {
    double *acc = accv;
    const double *x = xv;
    switch (R->op) {
    case BXR_OP_SUM: case BXR_OP_MEAN: for (size_t i = 0; i < n; i++) acc[i] += x[i]; break;
    case BXR_OP_PROD: for (size_t i = 0; i < n; i++) acc[i] *= x[i]; break;
    case BXR_OP_MAX_REDUCE:
      for (size_t i = 0; i < n; i++) if (x[i] > acc[i] || (x[i] != x[i] && acc[i] == acc[i])) acc[i] = x[i];
      break;
    case BXR_OP_MIN_REDUCE:
      for (size_t i = 0; i < n; i++) if (x[i] < acc[i] || (x[i] != x[i] && acc[i] == acc[i])) acc[i] = x[i];
      break;
    /* The first NaN takes the index and keeps it, as the reference's
     * scan (which stops there) does. */
    case BXR_OP_ARGMAX:
      for (size_t i = 0; i < n; i++)
        if ((x[i] != x[i] && acc[i] == acc[i]) || x[i] > acc[i]) { acc[i] = x[i]; arg[i] = k; }
      break;
    default: /* ARGMIN */
      for (size_t i = 0; i < n; i++)
        if ((x[i] != x[i] && acc[i] == acc[i]) || x[i] < acc[i]) { acc[i] = x[i]; arg[i] = k; }
      break;
    }
    break;
  }
  case BXFX_R_I64: {
    int64_t *acc = accv;
    const int64_t *x = xv;
    switch (R->op) {
    case BXR_OP_SUM: case BXR_OP_MEAN: for (size_t i = 0; i < n; i++) acc[i] = bxk_add_i64(acc[i], x[i]); break;
    case BXR_OP_PROD: for (size_t i = 0; i < n; i++) acc[i] = bxk_mul_i64(acc[i], x[i]); break;
    case BXR_OP_MAX_REDUCE: for (size_t i = 0; i < n; i++) if (x[i] > acc[i]) acc[i] = x[i]; break;
    case BXR_OP_MIN_REDUCE: for (size_t i = 0; i < n; i++) if (x[i] < acc[i]) acc[i] = x[i]; break;
    case BXR_OP_ARGMAX: for (size_t i = 0; i < n; i++) if (x[i] > acc[i]) { acc[i] = x[i]; arg[i] = k; } break;
    default: for (size_t i = 0; i < n; i++) if (x[i] < acc[i]) { acc[i] = x[i]; arg[i] = k; } break;
    }
    break;
  }
  default: {
    uint8_t *acc = accv;
    const uint8_t *x = xv;
    if (R->op == BXR_OP_ANY) for (size_t i = 0; i < n; i++) acc[i] |= x[i];
    else for (size_t i = 0; i < n; i++) acc[i] &= x[i];
    break;
  }
  }
}

static void init_acc(const struct red *R, void *acc, int64_t *arg, const void *first, size_t n) {
  size_t rs = bxfx_repr_size(R->repr);
  switch (R->op) {
  case BXR_OP_MAX_REDUCE: case BXR_OP_MIN_REDUCE: case BXR_OP_ARGMAX: case BXR_OP_ARGMIN:
    memcpy(acc, first, n * rs);   /* step 0 seeds the running extreme */
    for (size_t i = 0; i < n; i++) arg[i] = 0;
    return;
  case BXR_OP_PROD:
    if (R->repr == BXFX_R_F64) for (size_t i = 0; i < n; i++) ((double *)acc)[i] = 1.0;
    else for (size_t i = 0; i < n; i++) ((int64_t *)acc)[i] = 1;
    return;
  case BXR_OP_ALL: memset(acc, 1, n); return;
  default: memset(acc, 0, n * rs); return;
  }
}

/* Integer reductions on the storage's own width, in loops the compiler
 * vectorizes: sums and products wrap in the unsigned type of the dtype,
 * which is what the i64 accumulation stored back into the dtype gives
 * (and what an i32 mean divides); argmax/argmin find the extreme, then
 * its first index.  Rows (inner == 1) into acc[0]/arg[0]; and rows
 * across an outer axis into a typed accumulator, 16 rows per rowsacc
 * call (argmax/argmin row by row, for the indexes). */
#define BXFX_INT_ROW(T, UT, RED, ROWSACC)                                                        \
  static void int_row_##T(const struct red *R, const T##_t *x, int64_t *acc, int64_t *arg) { \
    const int64_t K = R->K;                                                             \
    *arg = 0;                                                                           \
    const struct bxfx_kernels *Kn = bxfx_kern();                                       \
    switch (R->op) {                                                                    \
    case BXR_OP_SUM: case BXR_OP_MEAN:                                                  \
      *acc = Kn->RED(BXFX_RED_SUM, x, (size_t)K);                                   \
      return;                                                                           \
    case BXR_OP_PROD:                                                                   \
      *acc = Kn->RED(BXFX_RED_PROD, x, (size_t)K);                                  \
      return;                                                                           \
    default: {                                                                          \
      const T##_t m = (T##_t)Kn->RED(wants_max(R->op) ? BXFX_RED_MAX : BXFX_RED_MIN, x, (size_t)K); \
      *acc = m;                                                                         \
      if (R->op == BXR_OP_ARGMAX || R->op == BXR_OP_ARGMIN)                             \
        for (int64_t k = 0;; k++)                                                       \
          if (x[k] == m) { *arg = k; break; }                                           \
      return;                                                                           \
    }                                                                                   \
    }                                                                                   \
  }                                                                                     \
  static void int_rows_##T(const struct red *R, const char *base, size_t n, int64_t *acc, int64_t *arg) { \
    const int64_t rowbytes = R->inner * (int64_t)sizeof(T##_t);                         \
    _Alignas(32) T##_t a[BXFX_BLK];                                                     \
    const enum bxr_opcode op = R->op;                                                   \
    for (size_t i = 0; i < n; i++) arg[i] = 0;                                          \
    if (op == BXR_OP_SUM || op == BXR_OP_MEAN || op == BXR_OP_PROD) {                   \
      for (size_t i = 0; i < n; i++) a[i] = op == BXR_OP_PROD ? 1 : 0;                  \
      for (int64_t k = 0; k < R->K; k += 16)   /* blocks of rows in registers */        \
        bxfx_kern()->ROWSACC(op == BXR_OP_PROD ? BXFX_RED_PROD : BXFX_RED_SUM, a,        \
                             (const T##_t *)(base + k * rowbytes), (size_t)R->inner,    \
                             (size_t)(R->K - k < 16 ? R->K - k : 16), n);               \
    } else {                                                                            \
      memcpy(a, base, n * sizeof(T##_t));                                               \
      if (op == BXR_OP_MAX_REDUCE || op == BXR_OP_MIN_REDUCE) {                         \
        for (int64_t k = 1; k < R->K; k += 16)                                          \
          bxfx_kern()->ROWSACC(op == BXR_OP_MAX_REDUCE ? BXFX_RED_MAX : BXFX_RED_MIN, a, \
                               (const T##_t *)(base + k * rowbytes), (size_t)R->inner,  \
                               (size_t)(R->K - k < 16 ? R->K - k : 16), n);             \
        for (size_t i = 0; i < n; i++) acc[i] = a[i];                                   \
        return;                                                                         \
      }                                                                                 \
      for (int64_t k = 1; k < R->K; k++) {                                              \
        const T##_t *x = (const T##_t *)(base + k * rowbytes);                          \
        switch (op) {                                                                   \
        case BXR_OP_ARGMAX:                                                             \
          for (size_t i = 0; i < n; i++) if (x[i] > a[i]) a[i] = x[i], arg[i] = k;      \
          break;                                                                        \
        default:                                                                        \
          for (size_t i = 0; i < n; i++) if (x[i] < a[i]) a[i] = x[i], arg[i] = k;      \
          break;                                                                        \
        }                                                                               \
      }                                                                                 \
    }                                                                                   \
    for (size_t i = 0; i < n; i++) acc[i] = a[i];                                       \
  }

static inline bool is_extreme(enum bxr_opcode c) {
  return c == BXR_OP_MAX_REDUCE || c == BXR_OP_MIN_REDUCE || c == BXR_OP_ARGMAX || c == BXR_OP_ARGMIN;
}
static inline bool wants_max(enum bxr_opcode c) { return c == BXR_OP_MAX_REDUCE || c == BXR_OP_ARGMAX; }

BXFX_INT_ROW(int32, uint32_t, red_i32, rowsacc_i32)
BXFX_INT_ROW(int64, uint64_t, red_i64, rowsacc_i64)
#undef BXFX_INT_ROW
#define int_row_i32 int_row_int32
#define int_row_i64 int_row_int64

/* One contiguous row of K >= 1 elements, any op but a float sum, into
 * acc[0] (and arg[0]).  f32/f64 rows go straight to the vector kernels;
 * other dtypes are widened a block at a time and each block reduced with
 * a tight loop (no per-element dispatch). */
static void row_reduce(const struct red *R, const char *row, void *accv, int64_t *arg) {
  const struct bxfx_kernels *Kn = bxfx_kern();
  const size_t es = bext_dtype_size(R->dt);
  const bool ext = is_extreme(R->op), mx = wants_max(R->op);
  /* max/min need the value only: the kernels may skip finding its index */
  const int flags = (mx ? BXFX_EXT_MAX : 0) |
                    (R->op == BXR_OP_MAX_REDUCE || R->op == BXR_OP_MIN_REDUCE ? BXFX_EXT_VALUE : 0);
  *arg = 0;
  if (R->repr == BXFX_R_F64) {
    double *acc = accv;
    if (R->dt == BEXT_F32 && ext) {
      float v;
      int64_t i = Kn->argext_f32((const float *)row, (size_t)R->K, flags, &v);
      *arg = i < 0 ? 0 : i;
      *acc = v;
      return;
    }
    if (R->dt == BEXT_BF16 && ext) {   /* widened in registers: argext_f32's answer */
      float v;
      int64_t i = Kn->argext_bf16((const uint16_t *)row, (size_t)R->K, flags, &v);
      *arg = i < 0 ? 0 : i;
      *acc = v;
      return;
    }
    if (R->dt == BEXT_F64 && ext) {
      int64_t i = Kn->argext_f64((const double *)row, (size_t)R->K, flags, acc);
      *arg = i < 0 ? 0 : i;
      return;
    }
    if (R->dt == BEXT_F32) { *acc = Kn->prod_f32((const float *)row, (size_t)R->K); return; }
    if (R->dt == BEXT_F64) { *acc = Kn->prod_f64((const double *)row, (size_t)R->K); return; }
    _Alignas(32) double x[BXFX_BLK];
    _Alignas(32) float hx[BXFX_BLK];
    *acc = 1.0;
    for (int64_t k0 = 0; k0 < R->K; k0 += BXFX_BLK) {
      size_t m = (size_t)(R->K - k0 < BXFX_BLK ? R->K - k0 : BXFX_BLK);
      double v;
      int64_t i;
      if (ext && is_half(R->dt)) {
        /* halves widened to f32 by the kernels; comparisons are exact
         * in either width */
        float fv;
        half_to_f32(R->dt, row + k0 * (int64_t)es, hx, m);
        i = Kn->argext_f32(hx, m, flags, &fv);
        v = fv;
      } else {
        bxfx_load(x, BXFX_R_F64, row + k0 * (int64_t)es, R->dt, 1, m);
        if (!ext) { *acc *= Kn->prod_f64(x, m); continue; }
        i = Kn->argext_f64(x, m, flags, &v);
      }
      if (i < 0) i = 0;
      if (v != v) { *acc = v; *arg = k0 + i; return; }   /* the first NaN wins */
      if (k0 == 0 || (mx ? v > *acc : v < *acc)) { *acc = v; *arg = k0 + i; }
    }
    return;
  }
  if (R->dt == BEXT_I32) { int_row_i32(R, (const int32_t *)row, accv, arg); return; }
  if (R->dt == BEXT_I64) { int_row_i64(R, (const int64_t *)row, accv, arg); return; }
  if (R->repr == BXFX_R_I64) {
    int64_t *acc = accv, a = R->op == BXR_OP_PROD ? 1 : 0, at = 0;
    _Alignas(32) int64_t x[BXFX_BLK];
    for (int64_t k0 = 0; k0 < R->K; k0 += BXFX_BLK) {
      size_t m = (size_t)(R->K - k0 < BXFX_BLK ? R->K - k0 : BXFX_BLK);
      bxfx_load(x, BXFX_R_I64, row + k0 * (int64_t)es, R->dt, 1, m);
      size_t j = 0;
      if (k0 == 0 && ext) a = x[j++];   /* the first element seeds the extreme */
      switch (R->op) {
      case BXR_OP_SUM: case BXR_OP_MEAN: for (; j < m; j++) a = bxk_add_i64(a, x[j]); break;
      case BXR_OP_PROD: for (; j < m; j++) a = bxk_mul_i64(a, x[j]); break;
      case BXR_OP_MAX_REDUCE: for (; j < m; j++) a = x[j] > a ? x[j] : a; break;
      case BXR_OP_MIN_REDUCE: for (; j < m; j++) a = x[j] < a ? x[j] : a; break;
      case BXR_OP_ARGMAX: for (; j < m; j++) if (x[j] > a) a = x[j], at = k0 + (int64_t)j; break;
      default: for (; j < m; j++) if (x[j] < a) a = x[j], at = k0 + (int64_t)j; break;
      }
    }
    *acc = a;
    *arg = at;
    return;
  }
  /* bool any/all: stop at the first element that decides the answer */
  const uint8_t *b = (const uint8_t *)row;
  bool any = R->op == BXR_OP_ANY;
  uint8_t r = any ? 0 : 1;
  for (int64_t k0 = 0; k0 < R->K && r == (any ? 0 : 1); k0 += BXFX_BLK) {
    size_t m = (size_t)(R->K - k0 < BXFX_BLK ? R->K - k0 : BXFX_BLK);
    uint8_t o = 0, a = 1;
    for (size_t j = 0; j < m; j++) o |= b[k0 + (int64_t)j], a &= b[k0 + (int64_t)j] != 0;
    r = any ? o != 0 : a;
  }
  *(uint8_t *)accv = r;
}

/* Extremes and products of f32/f64 across an outer axis: K rows of n
 * (<= BXFX_BLK) elements at base, row k at base + k*inner, straight from
 * storage through the row kernels into acc (as f64) and arg. */
static void rows_native(const struct red *R, const char *base, size_t n, void *accv, int64_t *arg) {
  const struct bxfx_kernels *Kn = bxfx_kern();
  const size_t es = bext_dtype_size(R->dt);
  const int64_t rowbytes = R->inner * (int64_t)es;
  double *acc = accv;
  /* Blocks of BXFX_ROWS_BLK rows go to the row-block kernels (acc in
   * registers over the block, each column in row order: the row-by-row
   * bits); argmax/argmin record indexes row by row. */
  enum { BXFX_ROWS_BLK = 16 };
  if (R->op == BXR_OP_PROD) {
    for (size_t i = 0; i < n; i++) acc[i] = 1.0;
    for (int64_t k = 0; k < R->K; k += BXFX_ROWS_BLK) {
      size_t rows = (size_t)(R->K - k < BXFX_ROWS_BLK ? R->K - k : BXFX_ROWS_BLK);
      if (R->dt == BEXT_F32) Kn->mulrows_f32(acc, (const float *)(base + k * rowbytes), (size_t)R->inner, rows, n);
      else Kn->mulrows_f64(acc, (const double *)(base + k * rowbytes), (size_t)R->inner, rows, n);
    }
    return;
  }
  const int flags = wants_max(R->op) ? BXFX_EXT_MAX : 0;
  int64_t *ap = R->op == BXR_OP_ARGMAX || R->op == BXR_OP_ARGMIN ? arg : NULL;
  for (size_t i = 0; i < n; i++) arg[i] = 0;
  if (!ap && (R->dt == BEXT_F32 || R->dt == BEXT_F64)) {
    _Alignas(32) float a[BXFX_BLK];
    if (R->dt == BEXT_F64) memcpy(acc, base, n * sizeof(double));
    else memcpy(a, base, n * sizeof(float));
    for (int64_t k = 1; k < R->K; k += BXFX_ROWS_BLK) {
      size_t rows = (size_t)(R->K - k < BXFX_ROWS_BLK ? R->K - k : BXFX_ROWS_BLK);
      if (R->dt == BEXT_F64) Kn->extrows_f64(acc, (const double *)(base + k * rowbytes), (size_t)R->inner, rows, n, flags);
      else Kn->extrows_f32(a, (const float *)(base + k * rowbytes), (size_t)R->inner, rows, n, flags);
    }
    if (R->dt == BEXT_F32)
      for (size_t i = 0; i < n; i++) acc[i] = a[i];
    return;
  }
  if (R->dt == BEXT_F64) {
    memcpy(acc, base, n * sizeof(double));
    for (int64_t k = 1; k < R->K; k++) Kn->extrow_f64(acc, ap, (const double *)(base + k * rowbytes), n, k, flags);
    return;
  }
  _Alignas(32) float a[BXFX_BLK];
  if (!ap && is_half(R->dt)) {   /* max/min: blocks widened in registers (extrows_f16/_bf16) */
    void (*const ext)(float *, const uint16_t *, size_t, size_t, size_t, int) =
        R->dt == BEXT_F16 ? Kn->extrows_f16 : Kn->extrows_bf16;
    half_to_f32(R->dt, base, a, n);
    for (int64_t k = 1; k < R->K; k += BXFX_ROWS_BLK) {
      size_t rows = (size_t)(R->K - k < BXFX_ROWS_BLK ? R->K - k : BXFX_ROWS_BLK);
      ext(a, (const uint16_t *)(const void *)(base + k * rowbytes), (size_t)R->inner, rows, n, flags);
    }
  } else if (is_half(R->dt)) {   /* rows widened to f32: comparisons are exact in either width */
    _Alignas(32) float h[BXFX_BLK];
    half_to_f32(R->dt, base, a, n);
    for (int64_t k = 1; k < R->K; k++) {
      half_to_f32(R->dt, base + k * rowbytes, h, n);
      Kn->extrow_f32(a, ap, h, n, k, flags);
    }
  } else {
    memcpy(a, base, n * sizeof(float));
    for (int64_t k = 1; k < R->K; k++) Kn->extrow_f32(a, ap, (const float *)(base + k * rowbytes), n, k, flags);
  }
  for (size_t i = 0; i < n; i++) acc[i] = a[i];
}

/* Writes n results (acc or arg) to output elements [pos, pos+n). */
static void finish(const struct red *R, void *acc, const int64_t *arg, size_t n, size_t pos) {
  char *dst = R->dst + pos * bxr_dtype_size(R->odt);
  if (R->op == BXR_OP_ARGMAX || R->op == BXR_OP_ARGMIN) {
    bxfx_store(dst, R->odt, arg, BXFX_R_I64, n);
    return;
  }
  if (R->op == BXR_OP_MEAN) {
    if (R->repr == BXFX_R_F64) for (size_t i = 0; i < n; i++) ((double *)acc)[i] /= (double)R->K;
    else for (size_t i = 0; i < n; i++) {
      /* The sum wraps to the dtype first (an i32 mean of an overflowing
       * sum divides the wrapped i32 sum), then divides truncating. */
      int64_t s = ((int64_t *)acc)[i];
      if (R->odt == BEXT_I32) s = (int32_t)(uint32_t)(uint64_t)s;
      else if (R->odt == BEXT_U8) s = (uint8_t)(uint64_t)s;
      ((int64_t *)acc)[i] = R->K == 0 ? 0 : s / R->K;
    }
  }
  bxfx_store(dst, R->odt, acc, R->repr, n);
}

/* Task = (o, inner block).  Blocks of BXFX_BLK inner elements. */
static void red_chunk(void *ctx, size_t b, size_t e) {
  const struct red *R = ctx;
  const size_t es = bxr_dtype_size(R->dt);
  const int64_t nblk = (R->inner + BXFX_BLK - 1) / BXFX_BLK;
  _Alignas(32) char acc[BXFX_BLK * 8], x[BXFX_BLK * 8];
  int64_t arg[BXFX_BLK];
  for (size_t task = b; task < e; task++) {
    int64_t o = (int64_t)task / nblk, i0 = ((int64_t)task % nblk) * BXFX_BLK;
    size_t n = (size_t)(R->inner - i0 < BXFX_BLK ? R->inner - i0 : BXFX_BLK);
    const char *base = R->src + ((o * R->K) * R->inner + i0) * (int64_t)es;
    if (R->inner == 1) {
      /* One contiguous row per output element: reduce it in blocks. */
      const char *row = base;
      if (is_float_sum(R)) {
        double s = row_sum(R, row);
        memcpy(acc, &s, sizeof s);
        finish(R, acc, arg, 1, (size_t)o);
        continue;
      }
      if (R->K == 0) init_acc(R, acc, arg, x, 1);  /* the identity */
      else row_reduce(R, row, acc, arg);
      finish(R, acc, arg, 1, (size_t)o);
      continue;
    }
    if (is_float_sum(R)) {
      const size_t w = rs_width(R->K);
      for (size_t j = 0; j < n; j += w) rows_sum(R, base + j * es, n - j < w ? n - j : w, (double *)acc + j);
    } else if (R->K == 0) {
      init_acc(R, acc, arg, x, n);
    } else if (((R->dt == BEXT_F32 || R->dt == BEXT_F64) && (is_extreme(R->op) || R->op == BXR_OP_PROD)) ||
               (is_half(R->dt) && is_extreme(R->op))) {
      rows_native(R, base, n, acc, arg);
    } else if (R->dt == BEXT_I32) {
      int_rows_int32(R, base, n, (int64_t *)acc, arg);
    } else if (R->dt == BEXT_I64) {
      int_rows_int64(R, base, n, (int64_t *)acc, arg);
    } else {
      bxfx_load(x, R->repr, base, R->dt, 1, n);
      init_acc(R, acc, arg, x, n);
      bool seeded_by_first = R->op == BXR_OP_MAX_REDUCE || R->op == BXR_OP_MIN_REDUCE ||
                             R->op == BXR_OP_ARGMAX || R->op == BXR_OP_ARGMIN;
      if (!seeded_by_first) combine(R, acc, arg, x, n, 0);
      for (int64_t k = 1; k < R->K; k++) {
        bxfx_load(x, R->repr, base + k * R->inner * (int64_t)es, R->dt, 1, n);
        combine(R, acc, arg, x, n, k);
      }
    }
    finish(R, acc, arg, n, (size_t)(o * R->inner + i0));
  }
}

/* Whole-tensor float sum: chunk c is elements [c*CHUNK, (c+1)*CHUNK). */
static void sum_chunks(void *ctx, size_t b, size_t e) {
  struct red *R = ctx;
  for (size_t c = b; c < e; c++) {
    int64_t lo = (int64_t)c * BXFX_SUM_CHUNK, hi = lo + BXFX_SUM_CHUNK < R->K ? lo + BXFX_SUM_CHUNK : R->K;
    R->part[c] = R->dt == BEXT_F32   ? bxfx_kern()->sum_f32((const float *)R->src + lo, (size_t)(hi - lo))
                 : R->dt == BEXT_F64 ? bxfx_kern()->sum_f64((const double *)R->src + lo, (size_t)(hi - lo))
                                     : half_sum(R->dt, (const uint16_t *)(const void *)R->src + lo, (size_t)(hi - lo));
  }
}

/* Whole-tensor extreme or product of f32/f64 (any reduction of i32/i64),
 * chunk c as in sum_chunks: part[c] the chunk's accumulator (an f64, or
 * the bits of an i64), R->pidx[c] its index (extremes). */
static void ext_chunks(void *ctx, size_t b, size_t e) {
  struct red *R = ctx;
  const size_t es = bext_dtype_size(R->dt);
  for (size_t c = b; c < e; c++) {
    int64_t lo = (int64_t)c * BXFX_SUM_CHUNK, hi = lo + BXFX_SUM_CHUNK < R->K ? lo + BXFX_SUM_CHUNK : R->K;
    struct red sub = *R;
    sub.K = hi - lo;
    int64_t at;
    row_reduce(&sub, R->src + lo * (int64_t)es, &R->part[c], &at);
    R->pidx[c] = lo + at;
  }
}

/* The contiguous data of in[0]: itself, or a copy in *tmp (freed by caller). */
static const char *contig_src(const bext_tensor *t, void **tmp, size_t *tmpsize) {
  *tmp = NULL;
  if (bxr_is_contiguous(t)) return bxr_data(t);
  size_t es = bext_dtype_size(t->dtype);
  *tmpsize = (size_t)bxr_numel(t->rank, t->shape) * es;
  *tmp = bxr_alloc(*tmpsize ? *tmpsize : 1);
  if (!*tmp) return NULL;
  int64_t cs[BEXT_MAX_RANK];
  bxr_contiguous_strides(t->rank, t->shape, cs);
  bxfx_copy_strided(*tmp, cs, bxr_data(t), t->strides, t->rank, t->shape, es);
  return *tmp;
}

static void shape3(const bext_tensor *t, bool all, int dim, int64_t *outer, int64_t *K, int64_t *inner) {
  if (all) { *outer = 1; *K = bxr_numel(t->rank, t->shape); *inner = 1; return; }
  *outer = 1; *inner = 1;
  for (int d = 0; d < dim; d++) *outer *= t->shape[d];
  for (int d = dim + 1; d < t->rank; d++) *inner *= t->shape[d];
  *K = t->shape[dim];
}

bext_tensor *bxfx_exec_reduce(struct bxr_op *op) {
  const bext_tensor *t = op->in[0];
  bext_tensor *out = bxr_op_new_output(op);
  if (!out) return NULL;
  /* A small whole-tensor f32 sum or mean of a contiguous input: exactly
   * the one serial step the general path below takes for it (sum_f32,
   * the mean's division in double, the store rounding to f32), without
   * its setup: per-op overhead is what small reductions cost. */
  if (op->at.all && t->dtype == BEXT_F32 && (op->code == BXR_OP_SUM || op->code == BXR_OP_MEAN)) {
    int64_t K = bxr_numel(t->rank, t->shape);
    if (K < (int64_t)BXR_POOL_MIN && bxr_is_contiguous(t)) {
      double s = bxfx_kern()->sum_f32((const float *)bxr_data(t), (size_t)K);
      if (op->code == BXR_OP_MEAN) s /= (double)K;
      *(float *)bxr_data(out) = (float)s;
      return out;
    }
  }
  size_t tmpsize = 0;
  void *tmp;
  const char *src = contig_src(t, &tmp, &tmpsize);
  if (!src) { bext_release(out); return NULL; }
  struct red RR, *R = &RR;
  memset(R, 0, sizeof *R);   /* a few words: part is set where it is used */
  R->op = op->code;
  R->src = src;
  R->dt = t->dtype;
  R->dst = bxr_data(out);
  R->odt = out->dtype;
  R->repr = t->dtype == BEXT_BOOL ? BXFX_R_U8
          : bxr_dtype_kind(t->dtype) == BEXT_KIND_FLOAT ? BXFX_R_F64 : BXFX_R_I64;
  shape3(t, op->at.all, op->at.dim, &R->outer, &R->K, &R->inner);
  int64_t nchunks = (R->K + BXFX_SUM_CHUNK - 1) / BXFX_SUM_CHUNK;
  if (R->outer == 1 && R->inner == 1 && (R->dt == BEXT_F32 || R->dt == BEXT_F64 || is_half(R->dt)) && is_float_sum(R) &&
      nchunks > 1 && bxr_pool_threads() > 1) {
    /* Chunk sums (threaded), then the pairwise counter over them: the
     * serial pass's bits (BXFX_SUM_CHUNK). */
    double local[256];
    size_t bytes = (size_t)nchunks * sizeof(double);
    R->part = nchunks <= 256 ? local : bxr_alloc(bytes);
    if (!R->part) {
      if (tmp) bxr_free(tmp, tmpsize ? tmpsize : 1);
      bext_release(out);
      return NULL;
    }
    bxr_pool_for((size_t)nchunks, (size_t)BXFX_SUM_CHUNK, 1, sum_chunks, R);
    struct bxfx_pw pw;
    bxfx_pw_init(&pw);
    for (int64_t c = 0; c < nchunks; c++) bxfx_pw_push(&pw, R->part[c]);
    double s = bxfx_pw_done(&pw);
    if (R->part != local) bxr_free(R->part, bytes);
    finish(R, &s, NULL, 1, 0);
  } else if (R->outer == 1 && R->inner == 1 && nchunks > 1 && bxr_pool_threads() > 1 &&
             (((R->dt == BEXT_F32 || R->dt == BEXT_F64) && (is_extreme(R->op) || R->op == BXR_OP_PROD)) ||
              (is_half(R->dt) && is_extreme(R->op)) || R->dt == BEXT_I32 || R->dt == BEXT_I64)) {
    /* Chunk extremes (products) in parallel, combined in chunk order: the
     * first NaN, else the first chunk holding the extreme, so the index is
     * the sequential scan's. */
    size_t bytes = (size_t)nchunks * (sizeof(double) + sizeof(int64_t));
    char *mem = bxr_alloc(bytes);
    if (!mem) {
      if (tmp) bxr_free(tmp, tmpsize ? tmpsize : 1);
      bext_release(out);
      return NULL;
    }
    R->part = (double *)mem;
    R->pidx = (int64_t *)(mem + (size_t)nchunks * sizeof(double));
    bxr_pool_for((size_t)nchunks, (size_t)BXFX_SUM_CHUNK, 1, ext_chunks, R);
    int64_t at = R->pidx[0];
    const bool mx = wants_max(R->op);
    if (R->repr == BXFX_R_I64) {   /* part holds each chunk's i64 accumulator */
      int64_t v, x;
      memcpy(&v, &R->part[0], sizeof v);
      for (int64_t c = 1; c < nchunks; c++) {
        memcpy(&x, &R->part[c], sizeof x);
        if (R->op == BXR_OP_SUM || R->op == BXR_OP_MEAN) v = bxk_add_i64(v, x);
        else if (R->op == BXR_OP_PROD) v = bxk_mul_i64(v, x);
        else if (mx ? x > v : x < v) v = x, at = R->pidx[c];
      }
      bxr_free(mem, bytes);
      finish(R, &v, &at, 1, 0);
    } else {
      double v = R->part[0];
      for (int64_t c = 1; c < nchunks; c++) {
        double x = R->part[c];
        if (R->op == BXR_OP_PROD) v *= x;
        else if (v != v) break;
        else if (x != x || (mx ? x > v : x < v)) v = x, at = R->pidx[c];
      }
      bxr_free(mem, bytes);
      finish(R, &v, &at, 1, 0);
    }
  } else {
    int64_t nblk = (R->inner + BXFX_BLK - 1) / BXFX_BLK;
    size_t tasks = (size_t)(R->outer * nblk);
    size_t cost = (size_t)(R->K * (R->inner < BXFX_BLK ? R->inner : BXFX_BLK)) + 1;
    bxr_pool_for(tasks, cost, 1, red_chunk, R);
  }
  if (tmp) bxr_free(tmp, tmpsize ? tmpsize : 1);
  return out;
}

/* cumsum along dim: running sums per (o, inner element), stored each step. */
struct cum {
  const char *src;
  char *dst;
  bext_dtype dt;
  int repr;
  int64_t outer, K, inner;
};

/* A block of cumsum's input in its representation, and its results back:
 * through the kernels' conversions for float dtypes (the same values as
 * bxfx_load/bxfx_store, whose strided loops do not vectorize and took
 * two thirds of a row cumsum's time); f16/bf16 pass through f32 (tmp),
 * exact on the way in, f64 -> f32 -> half on the way out as bxfx_store
 * rounds. */
static void cum_load(const struct cum *C, void *x, const char *p, size_t n, float *tmp) {
  const struct bxfx_kernels *Kn = bxfx_kern();
  if (C->dt == BEXT_F32) Kn->f32_to_f64((const float *)p, x, n);
  else if (is_half(C->dt)) half_to_f32(C->dt, p, tmp, n), Kn->f32_to_f64(tmp, x, n);
  else bxfx_load(x, C->repr, p, C->dt, 1, n);
}
static void cum_store(const struct cum *C, char *p, const void *x, size_t n, float *tmp) {
  const struct bxfx_kernels *Kn = bxfx_kern();
  if (C->dt == BEXT_F32) Kn->f64_to_f32(x, (float *)p, n);
  else if (is_half(C->dt)) {
    Kn->f64_to_f32(x, tmp, n);
    (C->dt == BEXT_F16 ? Kn->f32_to_f16 : Kn->f32_to_bf16)(tmp, (uint16_t *)p, n);
  } else bxfx_store(p, C->dt, x, C->repr, n);
}

/* Running sums along g <= BXFX_CUM_ROWS contiguous rows o0.. at once, a
 * block of each row at a time: each row's sum is the reference's
 * sequential chain, and the rows' chains interleave so the adds' latency
 * overlaps (one chain is latency bound). */
enum { BXFX_CUM_ROWS = 4 };
static void cum_rows(const struct cum *C, int64_t o0, int g) {
  const size_t es = bext_dtype_size(C->dt);
  _Alignas(32) char x[BXFX_CUM_ROWS][BXFX_BLK * 8];
  _Alignas(32) float tmp[BXFX_BLK];
  double fa[BXFX_CUM_ROWS] = { 0 };
  int64_t ia[BXFX_CUM_ROWS] = { 0 };
  for (int64_t k0 = 0; k0 < C->K; k0 += BXFX_BLK) {
    size_t m = (size_t)(C->K - k0 < BXFX_BLK ? C->K - k0 : BXFX_BLK);
    for (int r = 0; r < g; r++)
      cum_load(C, x[r], C->src + ((o0 + r) * C->K + k0) * (int64_t)es, m, tmp);
    if (C->repr == BXFX_R_F64) {
      double(*v)[BXFX_BLK] = (double(*)[BXFX_BLK])x;
      if (g == BXFX_CUM_ROWS)
        for (size_t j = 0; j < m; j++)
          for (int r = 0; r < BXFX_CUM_ROWS; r++) v[r][j] = fa[r] += v[r][j];
      else
        for (int r = 0; r < g; r++)
          for (size_t j = 0; j < m; j++) v[r][j] = fa[r] += v[r][j];
    } else {
      int64_t(*v)[BXFX_BLK] = (int64_t(*)[BXFX_BLK])x;
      for (int r = 0; r < g; r++)
        for (size_t j = 0; j < m; j++) v[r][j] = ia[r] = bxk_add_i64(ia[r], v[r][j]);
    }
    for (int r = 0; r < g; r++)
      cum_store(C, C->dst + ((o0 + r) * C->K + k0) * (int64_t)es, x[r], m, tmp);
  }
}

static void cum_chunk(void *ctx, size_t b, size_t e) {
  const struct cum *C = ctx;
  const struct bxfx_kernels *Kn = bxfx_kern();
  const size_t es = bext_dtype_size(C->dt);
  if (C->inner == 1 && (C->dt == BEXT_I32 || C->dt == BEXT_I64)) {   /* rows at their own width */
    for (size_t o = b; o < e; o++) {
      int64_t off = (int64_t)o * C->K * (int64_t)es;
      if (C->dt == BEXT_I32) Kn->cumsum_i32((const int32_t *)(C->src + off), (int32_t *)(C->dst + off), (size_t)C->K);
      else Kn->cumsum_i64((const int64_t *)(C->src + off), (int64_t *)(C->dst + off), (size_t)C->K);
    }
    return;
  }
  if (C->inner == 1) {   /* one task per contiguous row */
    for (size_t o = b; o < e; o += BXFX_CUM_ROWS)
      cum_rows(C, (int64_t)o, e - o < BXFX_CUM_ROWS ? (int)(e - o) : BXFX_CUM_ROWS);
    return;
  }
  const int64_t nblk = (C->inner + BXFX_BLK - 1) / BXFX_BLK;
  _Alignas(32) char acc[BXFX_BLK * 8], x[BXFX_BLK * 8];
  _Alignas(32) float tmp[BXFX_BLK];
  for (size_t task = b; task < e; task++) {
    int64_t o = (int64_t)task / nblk, i0 = ((int64_t)task % nblk) * BXFX_BLK;
    size_t n = (size_t)(C->inner - i0 < BXFX_BLK ? C->inner - i0 : BXFX_BLK);
    memset(acc, 0, sizeof acc);
    if (C->dt == BEXT_F32 || C->dt == BEXT_F64 || C->dt == BEXT_I32 || C->dt == BEXT_I64) {
      /* Row adds in one pass: floats keep the f64 running sums in acc and
       * store them rounded (cumstep); ints add the previous output row
       * at their own width (wrapping, the i64 chain's bits). */
      for (int64_t k = 0; k < C->K; k++) {
        int64_t pos = ((o * C->K + k) * C->inner + i0) * (int64_t)es;
        const char *xk = C->src + pos;
        char *ok = C->dst + pos, *prev = ok - C->inner * (int64_t)es;
        if (C->dt == BEXT_F32) Kn->cumstep_f32((double *)acc, (const float *)xk, (float *)ok, n);
        else if (C->dt == BEXT_F64) Kn->cumstep_f64((double *)acc, (const double *)xk, (double *)ok, n);
        else if (k == 0) memcpy(ok, xk, n * es);
        else if (C->dt == BEXT_I32) Kn->bin_i32(BXFX_IOP_add, (const int32_t *)prev, (const int32_t *)xk, (int32_t *)ok, n, BXFX_VV);
        else
          for (size_t i = 0; i < n; i++)
            ((int64_t *)ok)[i] = (int64_t)((uint64_t)((const int64_t *)prev)[i] + (uint64_t)((const int64_t *)xk)[i]);
      }
      continue;
    }
    for (int64_t k = 0; k < C->K; k++) {
      int64_t pos = (o * C->K + k) * C->inner + i0;
      cum_load(C, x, C->src + pos * (int64_t)es, n, tmp);
      if (C->repr == BXFX_R_F64) for (size_t i = 0; i < n; i++) ((double *)acc)[i] += ((double *)x)[i];
      else for (size_t i = 0; i < n; i++) ((int64_t *)acc)[i] = bxk_add_i64(((int64_t *)acc)[i], ((int64_t *)x)[i]);
      cum_store(C, C->dst + pos * (int64_t)es, acc, n, tmp);
    }
  }
}

bext_tensor *bxfx_exec_cumsum(struct bxr_op *op) {
  const bext_tensor *t = op->in[0];
  bext_tensor *out = bxr_op_new_output(op);
  if (!out) return NULL;
  size_t tmpsize = 0;
  void *tmp;
  const char *src = contig_src(t, &tmp, &tmpsize);
  if (!src) { bext_release(out); return NULL; }
  struct cum C = { .src = src, .dst = bxr_data(out), .dt = t->dtype,
                   .repr = bext_dtype_kind(t->dtype) == BEXT_KIND_FLOAT ? BXFX_R_F64 : BXFX_R_I64 };
  shape3(t, false, op->at.dim, &C.outer, &C.K, &C.inner);
  int64_t nblk = (C.inner + BXFX_BLK - 1) / BXFX_BLK;
  bxr_pool_for((size_t)(C.outer * nblk), (size_t)(C.K * (C.inner < BXFX_BLK ? C.inner : BXFX_BLK)) + 1, 1,
               cum_chunk, &C);
  if (tmp) bxr_free(tmp, tmpsize ? tmpsize : 1);
  return out;
}
