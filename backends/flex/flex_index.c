/* flex_index.c — gather, scatter_add, select and select_assign.
 *
 * Index values are data, so inference cannot check them: every index is
 * validated here (bxr_check_indices) before anything is written (an
 * in-place output is never left half-updated), and a bad one is reported
 * with its position.
 *
 * gather and scatter_add walk the index tensor by rows (its last dim),
 * with each row's offsets computed once and a loop per element size (or
 * dtype, for the adds) inside.  Rows are split across the pool wherever
 * they cannot write the same element: every gather row, scatter_add rows
 * when it scatters along the last dim (each row then adds into its own
 * output row), select_assign's slice positions in blocks of a row's
 * columns (every index's slice visits them in index order).  Each element therefore sees its additions in the
 * reference's order, so results are the serial walk's bits. */
#include <string.h>

#include "flex_internal.h"

static int64_t index_at(const bext_tensor *idx, int64_t off) {
  const char *p = bxr_data(idx);
  return idx->dtype == BEXT_I32 ? ((const int32_t *)p)[off] : ((const int64_t *)p)[off];
}

/* a + b for halves: widened to f32, added, rounded once (bxk_scalar.h). */
static inline uint16_t add_f16(uint16_t a, uint16_t b) {
  return bxk_f32_to_f16(bxk_f16_to_f32(a) + bxk_f16_to_f32(b));
}
static inline uint16_t add_bf16(uint16_t a, uint16_t b) {
  return bxk_f32_to_bf16(bxk_bf16_to_f32(a) + bxk_bf16_to_f32(b));
}

/* dst += src for one element of dtype dt (ints wrap, halves via f32). */
static void add_elem(char *dst, const char *src, bext_dtype dt) {
  switch (dt) {
  case BEXT_F32: { float a, b; memcpy(&a, dst, 4); memcpy(&b, src, 4); a += b; memcpy(dst, &a, 4); } break;
  case BEXT_F64: { double a, b; memcpy(&a, dst, 8); memcpy(&b, src, 8); a += b; memcpy(dst, &a, 8); } break;
  case BEXT_F16: { uint16_t a, b; memcpy(&a, dst, 2); memcpy(&b, src, 2); a = add_f16(a, b); memcpy(dst, &a, 2); } break;
  case BEXT_BF16: { uint16_t a, b; memcpy(&a, dst, 2); memcpy(&b, src, 2); a = add_bf16(a, b); memcpy(dst, &a, 2); } break;
  case BEXT_I32: { uint32_t a, b; memcpy(&a, dst, 4); memcpy(&b, src, 4); a += b; memcpy(dst, &a, 4); } break;
  case BEXT_I64: { uint64_t a, b; memcpy(&a, dst, 8); memcpy(&b, src, 8); a += b; memcpy(dst, &a, 8); } break;
  case BEXT_U8: *(uint8_t *)dst = (uint8_t)(*(uint8_t *)dst + *(const uint8_t *)src); break;
  default: *(uint8_t *)dst = (uint8_t)((*(uint8_t *)dst | *(const uint8_t *)src) != 0); break;
  }
}

/* d[k] += s[k] for contiguous halves by the fused half add (bin_half:
 * widen, f32 add, round once per 8 lanes in registers, add_f16/add_bf16's
 * bits), in place: each 8 lanes are read before they are written. */
static void add_half_contig(uint16_t *d, const uint16_t *s, int64_t n, bext_dtype dt) {
  bxfx_kern()->bin_half[dt == BEXT_BF16 ? BXFX_H_BF16 : BXFX_H_F16][BXFX_BIN_add](d, s, 0.0f, d, (size_t)n, BXFX_VV);
}

/* out = a fresh contiguous copy of in[0], or in[0] itself when unique. */
static bext_tensor *copy_of_input(struct bxr_op *op) {
  bext_tensor *t = op->in[0];
  bext_tensor *out = bxfx_output(op, 1);
  if (out && out != t) {
    int64_t cs[BEXT_MAX_RANK];
    bxr_contiguous_strides(t->rank, t->shape, cs);
    bxfx_copy_strided(bxr_data(out), cs, bxr_data(t), t->strides, t->rank, t->shape,
                      bext_dtype_size(t->dtype));
  }
  return out;
}

/* dst[k * ds] += src[k * ss] for k < n (strides in elements), ints
 * wrapping, halves through f32: add_elem's rule with the dtype switch
 * taken once per row. */
static void add_row(char *dst, int64_t ds, const char *src, int64_t ss, int64_t n, bext_dtype dt) {
#define ADD_LOOP(T, expr)                                                      \
  {                                                                            \
    T *d = (T *)(void *)dst;                                                   \
    const T *s = (const T *)(const void *)src;                                 \
    if (ds == 1 && ss == 1)                                                    \
      for (int64_t k = 0; k < n; k++) { T a = d[k], b = s[k]; d[k] = (expr); } \
    else                                                                       \
      for (int64_t k = 0; k < n; k++) { T a = d[k * ds], b = s[k * ss]; d[k * ds] = (expr); } \
  }                                                                            \
  break
  switch (dt) {
  case BEXT_F32: ADD_LOOP(float, a + b);
  case BEXT_F64: ADD_LOOP(double, a + b);
  case BEXT_I32: ADD_LOOP(int32_t, bxk_add_i32(a, b));
  case BEXT_I64: ADD_LOOP(int64_t, bxk_add_i64(a, b));
  case BEXT_F16: case BEXT_BF16:
    if (ds == 1 && ss == 1) {
      add_half_contig((uint16_t *)(void *)dst, (const uint16_t *)(const void *)src, n, dt);
      break;
    }
    if (dt == BEXT_BF16) { ADD_LOOP(uint16_t, add_bf16(a, b)); }
    ADD_LOOP(uint16_t, add_f16(a, b));
  default: {
    size_t es = bext_dtype_size(dt);
    for (int64_t k = 0; k < n; k++) add_elem(dst + k * ds * (int64_t)es, src + k * ss * (int64_t)es, dt);
    break;
  }
  }
#undef ADD_LOOP
}

/* gather / scatter_add over the index tensor's rows: row r (all dims but
 * the last) has its element offsets into idx, the data tensor t (gather:
 * t's coordinate along dim comes from the index) and the dense side
 * (gather's output, scatter_add's values) computed once. */
struct rows_job {
  const bext_tensor *t, *idx;
  char *out;                                  /* gather: output; scatter: target */
  const char *src;                            /* gather: t's data; scatter: values */
  int rank;                                   /* of idx (>= 1: a rank-0 index is a row of 1) */
  int64_t shape[BEXT_MAX_RANK];
  int64_t is[BEXT_MAX_RANK];                  /* idx strides */
  int64_t ts[BEXT_MAX_RANK];                  /* indexed side's strides, 0 along dim */
  int64_t ds[BEXT_MAX_RANK];                  /* dense side's strides */
  int64_t dimstride;                          /* the indexed side's stride along dim */
  int64_t rows, len;
  int64_t bound;                              /* t's extent along dim: indices below it */
  int bad;                                    /* a row met a bad index (atomic) */
  bext_dtype dt;
  bool i32;
};

static void rows_setup(struct rows_job *J, const struct bxr_op *op, const bext_tensor *t, const bext_tensor *idx,
                       bext_tensor *out, const bext_tensor *vals) {
  memset(J, 0, sizeof *J);
  const int dim = op->at.dim;
  J->t = t;
  J->idx = idx;
  J->dt = t->dtype;
  J->i32 = idx->dtype == BEXT_I32;
  J->out = bxr_data(out);
  J->rank = idx->rank > 0 ? idx->rank : 1;
  for (int d = 0; d < J->rank; d++) J->shape[d] = 1;
  for (int d = 0; d < idx->rank; d++) {
    J->shape[d] = idx->shape[d];
    J->is[d] = idx->strides[d];
  }
  const bext_tensor *indexed = vals ? out : t;     /* the side the index addresses */
  for (int d = 0; d < idx->rank; d++) J->ts[d] = d == dim ? 0 : indexed->strides[d];
  J->dimstride = indexed->rank > 0 ? indexed->strides[dim] : 0;
  if (vals) {
    J->src = bxr_data(vals);
    for (int d = 0; d < idx->rank; d++) J->ds[d] = vals->strides[d];
  } else {
    J->src = bxr_data(t);
    bxr_contiguous_strides(out->rank, out->shape, J->ds);
  }
  J->bound = t->shape[dim];   /* bxr_check_indices's bound */
  J->len = J->shape[J->rank - 1];
  J->rows = J->len ? bxr_numel(J->rank, J->shape) / J->len : 0;
}

/* Offsets of row r's first element: idx, indexed side, dense side. */
static void row_offsets(const struct rows_job *J, int64_t r, int64_t *io, int64_t *to, int64_t *dof) {
  *io = *to = *dof = 0;
  for (int d = J->rank - 2; d >= 0; d--) {
    int64_t c = r % J->shape[d];
    r /= J->shape[d];
    *io += c * J->is[d];
    *to += c * J->ts[d];
    *dof += c * J->ds[d];
  }
}

/* gather checks each index as it reads it instead of after a separate
 * scan (bxr_check_indices read the whole index tensor once more: with i64
 * indices that is 8 bytes a value against 1-8 of data, and bool, f16 and
 * i32 gathers ran at 0.6-0.8x libtorch for it).  The output is fresh, so
 * a bad index leaves nothing visible: the task stops at it and
 * bxfx_exec_index lets bxr_check_indices name the first bad one in flat
 * order, the same report as before.  The compare-and-branch is never
 * taken on good data. */
static void gather_rows(void *ctx, size_t b, size_t e) {
  struct rows_job *J = ctx;
  const int L = J->rank - 1;
  const int64_t isl = J->is[L], tsl = J->ts[L], dsl = J->ds[L], ds = J->dimstride, n = J->len;
  const uint64_t bound = (uint64_t)J->bound;
  const char *ip = bxr_data(J->idx);
  for (int64_t r = (int64_t)b; r < (int64_t)e; r++) {
    int64_t io, to, dof;
    row_offsets(J, r, &io, &to, &dof);
#define GATHER_EL(IT, k, ISL, DSL, TSL, DS)                                                     \
  {                                                                                             \
    uint64_t v = (uint64_t)(int64_t)((const IT *)(const void *)ip)[io + (k) * (ISL)];            \
    if (__builtin_expect(v >= bound, 0)) goto bad;                                              \
    dst[(k) * (DSL)] = src[(k) * (TSL) + (int64_t)v * (DS)];                                    \
  }
/* the contiguous row along the gathered dim (the common case) with the
 * strides as constants, the rest general */
#define GATHER_LOOP(T)                                                                          \
  {                                                                                             \
    const T *src = (const T *)(const void *)J->src + to;                                        \
    T *dst = (T *)(void *)J->out + dof;                                                         \
    if (isl == 1 && dsl == 1 && tsl == 0 && ds == 1) {                                          \
      if (J->i32) for (int64_t k = 0; k < n; k++) GATHER_EL(int32_t, k, 1, 1, 0, 1)             \
      else for (int64_t k = 0; k < n; k++) GATHER_EL(int64_t, k, 1, 1, 0, 1)                    \
    } else if (J->i32) {                                                                        \
      for (int64_t k = 0; k < n; k++) GATHER_EL(int32_t, k, isl, dsl, tsl, ds)                  \
    } else {                                                                                    \
      for (int64_t k = 0; k < n; k++) GATHER_EL(int64_t, k, isl, dsl, tsl, ds)                  \
    }                                                                                           \
  }                                                                                             \
  break
    switch (bext_dtype_size(J->dt)) {
    case 1: GATHER_LOOP(uint8_t);
    case 2: GATHER_LOOP(uint16_t);
    case 4: GATHER_LOOP(uint32_t);
    default: GATHER_LOOP(uint64_t);
    }
#undef GATHER_LOOP
#undef GATHER_EL
  }
  return;
bad:
  __atomic_store_n(&J->bad, 1, __ATOMIC_RELAXED);
}

/* One f16 or bf16 row of scatter_add through the add_at_f16/_bf16
 * kernels (F16C, bf16 8 lanes at a time, where the CPU has AVX2): target
 * positions (each index checked) and values gathered in blocks. */
static bool scatter_row_half(const struct rows_job *J, int64_t io, int64_t to, int64_t dof) {
  const int L = J->rank - 1;
  const int64_t isl = J->is[L], tsl = J->ts[L], dsl = J->ds[L], ds = J->dimstride, n = J->len;
  const int64_t bm1 = J->bound - 1;
  const char *ip = bxr_data(J->idx);
  const uint16_t *src = (const uint16_t *)(const void *)J->src + dof;
  enum { B = 256 };
  int64_t pos[B];
  uint16_t val[B];
  for (int64_t k0 = 0; k0 < n; k0 += B) {
    int64_t m = n - k0 < B ? n - k0 : B;
    /* v is in [0, bound) iff v | (bound - 1 - v) has no sign bit: one
     * OR per block instead of a branch per index, and a loop the compiler
     * vectorizes; no position is used before the block is known good */
    int64_t bad = 0;
#define POS_LOOP(IT, ISL, TSL, DS)                                                    \
  {                                                                                   \
    const IT *ix = (const IT *)(const void *)ip + io + k0 * (ISL);                    \
    for (int64_t k = 0; k < m; k++) {                                                 \
      int64_t v = ix[k * (ISL)];                                                      \
      bad |= (int64_t)((uint64_t)v | ((uint64_t)bm1 - (uint64_t)v));                   \
      pos[k] = to + (k0 + k) * (TSL) + v * (DS);                                      \
    }                                                                                 \
  }
    if (isl == 1 && tsl == 0 && ds == 1) {
      if (J->i32) POS_LOOP(int32_t, 1, 0, 1)
      else POS_LOOP(int64_t, 1, 0, 1)
    } else if (J->i32) {
      POS_LOOP(int32_t, isl, tsl, ds)
    } else {
      POS_LOOP(int64_t, isl, tsl, ds)
    }
#undef POS_LOOP
    if (bad < 0) return false;
    const uint16_t *vp = src + k0 * dsl;
    if (dsl != 1) {
      for (int64_t k = 0; k < m; k++) val[k] = vp[k * dsl];
      vp = val;
    }
    (J->dt == BEXT_BF16 ? bxfx_kern()->add_at_bf16 : bxfx_kern()->add_at_f16)((uint16_t *)(void *)J->out, pos, vp,
                                                                             (size_t)m);
  }
  return true;
}

/* scatter_add checks its indices as it reads them, as gather_rows does,
 * when the target is a fresh copy (bxfx_exec_index scans them first only
 * when it adds in place). */
static void scatter_rows(void *ctx, size_t b, size_t e) {
  struct rows_job *J = ctx;
  const uint64_t bound = (uint64_t)J->bound;
  const int L = J->rank - 1;
  const int64_t isl = J->is[L], tsl = J->ts[L], dsl = J->ds[L], ds = J->dimstride, n = J->len;
  const size_t es = bext_dtype_size(J->dt);
  const char *ip = bxr_data(J->idx);
  for (int64_t r = (int64_t)b; r < (int64_t)e; r++) {
    int64_t io, to, dof;
    row_offsets(J, r, &io, &to, &dof);
#define SCATTER_LOOP(T, expr)                                                               \
  {                                                                                         \
    const T *src = (const T *)(const void *)J->src + dof;                                   \
    T *dst = (T *)(void *)J->out + to;                                                      \
    for (int64_t k = 0; k < n; k++) {                                                       \
      int64_t v = J->i32 ? ((const int32_t *)(const void *)ip)[io + k * isl]                \
                         : ((const int64_t *)(const void *)ip)[io + k * isl];               \
      if (__builtin_expect((uint64_t)v >= bound, 0)) goto bad;                              \
      T *d = dst + k * tsl + v * ds, a = *d, b_ = src[k * dsl];                             \
      *d = (expr);                                                                          \
    }                                                                                       \
  }                                                                                         \
  break
    switch (J->dt) {
    case BEXT_F32: SCATTER_LOOP(float, a + b_);
    case BEXT_F64: SCATTER_LOOP(double, a + b_);
    case BEXT_I32: SCATTER_LOOP(int32_t, bxk_add_i32(a, b_));
    case BEXT_I64: SCATTER_LOOP(int64_t, bxk_add_i64(a, b_));
    case BEXT_F16: case BEXT_BF16:
      if (!scatter_row_half(J, io, to, dof)) goto bad;
      break;
    default:
      for (int64_t k = 0; k < n; k++) {
        int64_t v = index_at(J->idx, io + k * isl);
        if ((uint64_t)v >= bound) goto bad;
        add_elem(J->out + (to + k * tsl + v * ds) * (int64_t)es, J->src + (dof + k * dsl) * (int64_t)es, J->dt);
      }
      break;
    }
#undef SCATTER_LOOP
  }
  return;
bad:
  __atomic_store_n(&J->bad, 1, __ATOMIC_RELAXED);
}

/* select_assign over the slice positions (t's shape with dim at 1), by
 * rows of its last dim; each row takes every index's values in order. */
struct sela_job {
  const bext_tensor *t, *idx, *vals;
  bext_tensor *out;
  int dim;
  int64_t shape[BEXT_MAX_RANK];
  int64_t rows, len;
  int64_t cblocks;                  /* column blocks of BXFX_SELA_COLS per row */
};
/* A task is one block of a row's columns: few slice positions (select
 * along dim 0 of a matrix has one row) still fill the pool, and each
 * element still takes every index's value in order. */
enum { BXFX_SELA_COLS = 1024 };

static void sela_rows(void *ctx, size_t b, size_t e) {
  const struct sela_job *J = ctx;
  const bext_tensor *t = J->t, *out = J->out, *vals = J->vals;
  const int rank = t->rank, dim = J->dim, last = rank - 1;
  const size_t es = bext_dtype_size(t->dtype);
  const bool rowdim = last >= 0 && last != dim;       /* rows run along the last dim */
  const int64_t ols = rowdim ? out->strides[last] : 0, vls = rowdim ? vals->strides[last] : 0;
  const int nd = rowdim ? rank - 1 : rank;            /* dims that number the rows */
  for (int64_t task = (int64_t)b; task < (int64_t)e; task++) {
    int64_t r = task / J->cblocks, c0 = task % J->cblocks * BXFX_SELA_COLS;
    int64_t len = J->len - c0 < BXFX_SELA_COLS ? J->len - c0 : BXFX_SELA_COLS;
    int64_t oo = c0 * ols, vo = c0 * vls, q = r;
    for (int d = nd - 1; d >= 0; d--) {
      int64_t c = q % J->shape[d];
      q /= J->shape[d];
      oo += c * out->strides[d];
      vo += c * vals->strides[d];
    }
    for (int64_t i = 0; i < J->idx->shape[0]; i++) {
      int64_t v = index_at(J->idx, i * J->idx->strides[0]);
      add_row((char *)bxr_data(out) + (oo + v * out->strides[dim]) * (int64_t)es, ols,
              (const char *)bxr_data(vals) + (vo + i * vals->strides[dim]) * (int64_t)es, vls, len, t->dtype);
    }
  }
}

/* select: slice idx[i] of t along dim copied to position i of out. */
struct sel_job {
  const bext_tensor *t, *idx;
  bext_tensor *out;
  int dim;
  size_t flat;              /* > 0: each slice is this many contiguous bytes on both sides */
  bool stream;              /* flat slices into an output past bxfx_stream_min */
  int64_t shape[BEXT_MAX_RANK], os[BEXT_MAX_RANK];
};

static void select_slices(void *ctx, size_t b, size_t e) {
  const struct sel_job *J = ctx;
  const bext_tensor *t = J->t;
  const int64_t es = (int64_t)bext_dtype_size(t->dtype);
  if (J->stream) {   /* whole rows of a large output: no read of the lines they overwrite */
    const struct bxfx_kernels *K = bxfx_kern();
    for (size_t i = b; i < e; i++) {
      int64_t v = index_at(J->idx, (int64_t)i * J->idx->strides[0]);
      K->stream_out((char *)bxr_data(J->out) + i * J->flat, (const char *)bxr_data(t) + v * t->strides[J->dim] * es,
                    J->flat);
    }
    bxfx_stream_fence();
    return;
  }
  for (size_t i = b; i < e; i++) {
    int64_t v = index_at(J->idx, (int64_t)i * J->idx->strides[0]);
    bxfx_copy_strided((char *)bxr_data(J->out) + (int64_t)i * J->os[J->dim] * es, J->os,
                      (const char *)bxr_data(t) + v * t->strides[J->dim] * es, t->strides, t->rank, J->shape,
                      (size_t)es);
  }
}

/* A row met a bad index: the output (a fresh one, never seen) goes, and
 * bxr_check_indices names the first bad index in flat order, the report
 * it gave when it ran before the rows. */
static bext_tensor *bad_index(struct bxr_op *op, bext_tensor *out) {
  bext_release(out);
  bool reported = !bxr_check_indices(op);
  BXR_ASSERT(reported);
  (void)reported;
  return NULL;
}

bext_tensor *bxfx_exec_index(struct bxr_op *op) {
  bext_tensor *t = op->in[0], *idx = op->in[1];
  const int dim = op->at.dim;
  if (op->code == BXR_OP_GATHER) {   /* checks as it reads (gather_rows) */
    bext_tensor *out = bxr_op_new_output(op);
    if (!out) return NULL;
    struct rows_job J;
    rows_setup(&J, op, t, idx, out, NULL);
    bxr_pool_for((size_t)J.rows, (size_t)J.len + 1, 1, gather_rows, &J);
    if (!__atomic_load_n(&J.bad, __ATOMIC_RELAXED)) return out;
    return bad_index(op, out);
  }
  if (op->code == BXR_OP_SCATTER_ADD) {
    /* in place (a unique target): nothing may be written before every
     * index is known good; into a fresh copy the rows check as they go */
    const bool fresh = !bxr_op_can_reuse(op, 0);
    if (!fresh && !bxr_check_indices(op)) return NULL;
    bext_tensor *vals = op->in[2];
    bext_tensor *out = copy_of_input(op);
    if (!out) return NULL;
    struct rows_job J;
    rows_setup(&J, op, t, idx, out, vals);
    if (dim == idx->rank - 1) bxr_pool_for((size_t)J.rows, (size_t)J.len + 1, 1, scatter_rows, &J);
    else scatter_rows(&J, 0, (size_t)J.rows);
    if (!__atomic_load_n(&J.bad, __ATOMIC_RELAXED)) return out;
    BXR_ASSERT(fresh);
    return bad_index(op, out);
  }
  if (!bxr_check_indices(op)) return NULL;
  switch (op->code) {
  case BXR_OP_SELECT: {
    bext_tensor *out = bxr_op_new_output(op);
    if (!out) return NULL;
    struct sel_job J = { .t = t, .idx = idx, .out = out, .dim = dim };
    memcpy(J.shape, t->shape, sizeof J.shape);
    J.shape[dim] = 1;
    bxr_contiguous_strides(out->rank, out->shape, J.os);
    int64_t slice = bxr_numel(t->rank, J.shape);
    /* A contiguous source whose dims before dim are 1s: slice v is
     * `slice` elements from v * strides[dim], as output slice i is. */
    bool lead1 = bxr_is_contiguous(t);
    for (int d = 0; d < dim; d++) lead1 = lead1 && t->shape[d] == 1;
    J.flat = lead1 ? (size_t)slice * bext_dtype_size(t->dtype) : 0;
    const size_t bytes = (size_t)bxr_numel(out->rank, out->shape) * bext_dtype_size(t->dtype);
    J.stream = J.flat && bxfx_streams(bytes, bytes);   /* each row read once, as written */
    /* Many slices: split them across the pool (each copy then runs
     * inline); a few large ones split inside bxfx_copy_strided. */
    if (idx->shape[0] >= 8) bxr_pool_for((size_t)idx->shape[0], (size_t)slice / 4 + 1, 1, select_slices, &J);
    else select_slices(&J, 0, (size_t)idx->shape[0]);
    return out;
  }
  default: { /* SELECT_ASSIGN: out[.., idx[i], ..] += values[.., i, ..] */
    bext_tensor *vals = op->in[2];
    bext_tensor *out = copy_of_input(op);
    if (!out) return NULL;
    struct sela_job J = { .t = t, .idx = idx, .out = out, .vals = vals, .dim = dim };
    memcpy(J.shape, t->shape, sizeof J.shape);
    J.shape[dim] = 1;
    int last = t->rank - 1;
    J.len = last >= 0 && last != dim ? t->shape[last] : 1;
    int64_t n = bxr_numel(t->rank, J.shape);
    J.rows = J.len ? n / J.len : 0;
    J.cblocks = J.len > BXFX_SELA_COLS ? (J.len + BXFX_SELA_COLS - 1) / BXFX_SELA_COLS : 1;
    bxr_pool_for((size_t)(J.rows * J.cblocks), (size_t)((J.len < BXFX_SELA_COLS ? J.len : BXFX_SELA_COLS) * idx->shape[0]) + 1,
                 1, sela_rows, &J);
    return out;
  }
  }
}
