/* api.c — the public op functions: each builds a descriptor for its op
 * table row and hands it to bxr_dispatch.  Argument checks that need no
 * tensor metadata (NULL arrays, ranks beyond BEXT_MAX_RANK) happen here;
 * everything else is the inference rule's job.  Owned operands are
 * released on every path. */
#include <string.h>

#include "backend.h"

static void op_init(struct bxr_op *op, enum bxr_opcode code, const char *api) {
  memset(op, 0, sizeof *op);
  op->code = code;
  op->api = api;
  op->in = op->inbuf;
}

/* op_init for the hot elementwise and reduction entries: the big attribute arrays are
 * left alone because every count that indexes them (at.rank, at.ndims,
 * at.nranges) is zeroed, so no reader looks at them; everything else is
 * set as op_init sets it.  Saves clearing ~500 bytes per small op. */
static inline void op_init_lite(struct bxr_op *op, enum bxr_opcode code, const char *api) {
  op->code = code;
  op->api = api;
  op->device = NULL;
  op->in = op->inbuf;
  op->inbuf[2] = NULL;
  op->sc[0].i = op->sc[1].i = op->sc[2].i = 0;
  op->at.rank = 0;
  op->at.ndims = 0;
  op->at.dim = 0;
  op->at.keepdim = false;
  op->at.all = false;
  op->at.nranges = 0;
  op->at.dtype = (bext_dtype)0;
  op->at.seed = 0;
  op->out.dtype = (bext_dtype)0;
  op->out.rank = 0;
  op->same_shape = false;
}

static bext_tensor *fail1(bext_tensor *t) {
  bext_release(t);
  return NULL;
}

static bext_tensor *un(enum bxr_opcode code, const char *api, bext_tensor *t) {
  struct bxr_op op;
  op_init_lite(&op, code, api);
  op.n_in = 1;
  op.in[0] = t;
  return bxr_dispatch(&op);
}

static bext_tensor *bin(enum bxr_opcode code, const char *api, bext_tensor *a, bext_tensor *b) {
  struct bxr_op op;
  op_init_lite(&op, code, api);
  op.n_in = 2;
  op.in[0] = a;
  op.in[1] = b;
  return bxr_dispatch(&op);
}

static bext_tensor *un_sc(enum bxr_opcode code, const char *api, bext_tensor *t, double s) {
  struct bxr_op op;
  op_init_lite(&op, code, api);
  op.n_in = 1;
  op.in[0] = t;
  op.sc[0].f = s;
  return bxr_dispatch(&op);
}

/* Copies a user shape into the descriptor; false + error when unusable. */
static bool take_shape(struct bxr_op *op, const int64_t *shape, int rank) {
  if (rank < 0 || rank > BEXT_MAX_RANK)
    return bxr_error("%s: rank %d out of range (0..%d)", op->api, rank, BEXT_MAX_RANK);
  if (rank > 0 && !shape) return bxr_error("%s: shape is NULL for rank %d", op->api, rank);
  op->at.rank = rank;
  if (rank) memcpy(op->at.shape, shape, (size_t)rank * sizeof *shape);
  return true;
}

static bool take_dims(struct bxr_op *op, const int *axes, int n) {
  if (n < 0 || n > BEXT_MAX_RANK)
    return bxr_error("%s: %d axes out of range (0..%d)", op->api, n, BEXT_MAX_RANK);
  if (n > 0 && !axes) return bxr_error("%s: axes array is NULL", op->api);
  op->at.ndims = n;
  for (int i = 0; i < n; i++) op->at.dims[i] = axes[i];
  return true;
}

/* ---------------------------------------------------------------- creation */

static bext_tensor *create(enum bxr_opcode code, const char *api, const int64_t *shape, int rank,
                           bext_dtype dt, const bext_device *dev, double a, double b, uint64_t seed) {
  struct bxr_op op;
  op_init(&op, code, api);
  if (!take_shape(&op, shape, rank)) return NULL;
  op.at.dtype = dt;
  op.at.seed = seed;
  op.sc[0].f = a;
  op.sc[1].f = b;
  op.device = bxr_device_resolve(dev, api);
  if (!op.device) return NULL;
  return bxr_dispatch(&op);
}

bext_tensor *bext_empty(const int64_t *shape, int rank, bext_dtype dt, const bext_device *dev) {
  return create(BXR_OP_EMPTY, "bext_empty", shape, rank, dt, dev, 0, 0, 0);
}
bext_tensor *bext_zeros(const int64_t *shape, int rank, bext_dtype dt, const bext_device *dev) {
  return create(BXR_OP_ZEROS, "bext_zeros", shape, rank, dt, dev, 0, 0, 0);
}
bext_tensor *bext_ones(const int64_t *shape, int rank, bext_dtype dt, const bext_device *dev) {
  return create(BXR_OP_ONES, "bext_ones", shape, rank, dt, dev, 0, 0, 0);
}
bext_tensor *bext_full(const int64_t *shape, int rank, double v, bext_dtype dt, const bext_device *dev) {
  return create(BXR_OP_FULL, "bext_full", shape, rank, dt, dev, v, 0, 0);
}
bext_tensor *bext_random_uniform(const int64_t *shape, int rank, double lo, double hi, uint64_t seed,
                                 bext_dtype dt, const bext_device *dev) {
  return create(BXR_OP_RANDOM_UNIFORM, "bext_random_uniform", shape, rank, dt, dev, lo, hi, seed);
}
bext_tensor *bext_random_normal(const int64_t *shape, int rank, double mean, double std, uint64_t seed,
                                bext_dtype dt, const bext_device *dev) {
  return create(BXR_OP_RANDOM_NORMAL, "bext_random_normal", shape, rank, dt, dev, mean, std, seed);
}
bext_tensor *bext_arange(double start, double end, double step, bext_dtype dt, const bext_device *dev) {
  struct bxr_op op;
  op_init(&op, BXR_OP_ARANGE, "bext_arange");
  op.at.dtype = dt;
  op.sc[0].f = start;
  op.sc[1].f = end;
  op.sc[2].f = step;
  op.device = bxr_device_resolve(dev, op.api);
  if (!op.device) return NULL;
  return bxr_dispatch(&op);
}

/* ------------------------------------------------------------------ layout */

bext_tensor *bext_reshape(bext_tensor *t, const int64_t *shape, int rank) {
  struct bxr_op op;
  op_init(&op, BXR_OP_RESHAPE, "bext_reshape");
  if (!take_shape(&op, shape, rank)) return fail1(t);
  op.n_in = 1;
  op.in[0] = t;
  return bxr_dispatch(&op);
}

bext_tensor *bext_expand(bext_tensor *t, const int64_t *shape, int rank) {
  struct bxr_op op;
  op_init(&op, BXR_OP_EXPAND, "bext_expand");
  if (!take_shape(&op, shape, rank)) return fail1(t);
  op.n_in = 1;
  op.in[0] = t;
  return bxr_dispatch(&op);
}

bext_tensor *bext_swap_dims(bext_tensor *t, int d0, int d1) {
  struct bxr_op op;
  op_init(&op, BXR_OP_SWAP_DIMS, "bext_swap_dims");
  op.at.ndims = 2;
  op.at.dims[0] = d0;
  op.at.dims[1] = d1;
  op.n_in = 1;
  op.in[0] = t;
  return bxr_dispatch(&op);
}

static bext_tensor *with_dims(enum bxr_opcode code, const char *api, bext_tensor *t, const int *axes, int n) {
  struct bxr_op op;
  op_init(&op, code, api);
  if (!take_dims(&op, axes, n)) return fail1(t);
  op.n_in = 1;
  op.in[0] = t;
  return bxr_dispatch(&op);
}
bext_tensor *bext_permute(bext_tensor *t, const int *axes, int rank) {
  return with_dims(BXR_OP_PERMUTE, "bext_permute", t, axes, rank);
}
bext_tensor *bext_flip(bext_tensor *t, const int *axes, int n) {
  return with_dims(BXR_OP_FLIP, "bext_flip", t, axes, n);
}

static bool take_ranges(struct bxr_op *op, const int64_t *start, const int64_t *end, int n) {
  if (n < 0 || n > BEXT_MAX_RANK)
    return bxr_error("%s: %d ranges out of range (0..%d)", op->api, n, BEXT_MAX_RANK);
  if (n > 0 && (!start || !end)) return bxr_error("%s: range arrays are NULL", op->api);
  op->at.nranges = n;
  for (int i = 0; i < n; i++) {
    op->at.start[i] = start[i];
    op->at.end[i] = end[i];
  }
  return true;
}

bext_tensor *bext_slice(bext_tensor *t, const int64_t *start, const int64_t *end, int n) {
  struct bxr_op op;
  op_init(&op, BXR_OP_SLICE, "bext_slice");
  if (!take_ranges(&op, start, end, n)) return fail1(t);
  op.n_in = 1;
  op.in[0] = t;
  return bxr_dispatch(&op);
}

bext_tensor *bext_slice_assign(bext_tensor *t, const int64_t *start, const int64_t *end, int n,
                               bext_tensor *value) {
  struct bxr_op op;
  op_init(&op, BXR_OP_SLICE_ASSIGN, "bext_slice_assign");
  if (!take_ranges(&op, start, end, n)) {
    bext_release(value);
    return fail1(t);
  }
  op.n_in = 2;
  op.in[0] = t;
  op.in[1] = value;
  return bxr_dispatch(&op);
}

bext_tensor *bext_cat(bext_tensor *const *ts, int count, int dim) {
  struct bxr_op op;
  op_init(&op, BXR_OP_CAT, "bext_cat");
  if (count <= 0 || !ts) {
    if (ts)
      for (int i = 0; i < count; i++) bext_release(ts[i]);
    return bxr_error("bext_cat: needs at least one tensor (count %d%s)", count, ts ? "" : ", array NULL"),
           NULL;
  }
  size_t bytes = (size_t)count * sizeof(bext_tensor *);
  bext_tensor **arr = count <= BXR_MAX_INPUTS ? op.inbuf : bxr_alloc(bytes);
  if (!arr) {
    for (int i = 0; i < count; i++) bext_release(ts[i]);
    return NULL;
  }
  for (int i = 0; i < count; i++) arr[i] = ts[i];
  op.in = arr;
  op.n_in = count;
  op.at.dim = dim;
  bext_tensor *r = bxr_dispatch(&op);
  if (arr != op.inbuf) bxr_free(arr, bytes);
  return r;
}

bext_tensor *bext_narrow(bext_tensor *t, int dim, int64_t start, int64_t length) {
  struct bxr_op op;
  op_init(&op, BXR_OP_NARROW, "bext_narrow");
  op.at.dim = dim;
  op.sc[0].i = start;
  op.sc[1].i = length;
  op.n_in = 1;
  op.in[0] = t;
  return bxr_dispatch(&op);
}

bext_tensor *bext_repeat_dim(bext_tensor *t, int dim, int64_t times) {
  struct bxr_op op;
  op_init(&op, BXR_OP_REPEAT_DIM, "bext_repeat_dim");
  op.at.dim = dim;
  op.sc[0].i = times;
  op.n_in = 1;
  op.in[0] = t;
  return bxr_dispatch(&op);
}

/* ---------------------------------------------------------------- indexing */

static bext_tensor *idx_op(enum bxr_opcode code, const char *api, bext_tensor *t, int dim,
                           bext_tensor *idx, bext_tensor *values) {
  struct bxr_op op;
  op_init(&op, code, api);
  op.at.dim = dim;
  op.n_in = values ? 3 : 2;
  op.in[0] = t;
  op.in[1] = idx;
  op.in[2] = values;
  return bxr_dispatch(&op);
}
bext_tensor *bext_gather(bext_tensor *t, int dim, bext_tensor *indices) {
  return idx_op(BXR_OP_GATHER, "bext_gather", t, dim, indices, NULL);
}
bext_tensor *bext_select(bext_tensor *t, int dim, bext_tensor *indices) {
  return idx_op(BXR_OP_SELECT, "bext_select", t, dim, indices, NULL);
}
/* values is mandatory here: a NULL values must be reported, not turn the
 * call into a two-operand op. */
static bext_tensor *idx_op3(enum bxr_opcode code, const char *api, bext_tensor *t, int dim,
                            bext_tensor *idx, bext_tensor *values) {
  struct bxr_op op;
  op_init(&op, code, api);
  op.at.dim = dim;
  op.n_in = 3;
  op.in[0] = t;
  op.in[1] = idx;
  op.in[2] = values;
  return bxr_dispatch(&op);
}
bext_tensor *bext_scatter_add(bext_tensor *t, int dim, bext_tensor *indices, bext_tensor *values) {
  return idx_op3(BXR_OP_SCATTER_ADD, "bext_scatter_add", t, dim, indices, values);
}
bext_tensor *bext_select_assign(bext_tensor *t, int dim, bext_tensor *indices, bext_tensor *values) {
  return idx_op3(BXR_OP_SELECT_ASSIGN, "bext_select_assign", t, dim, indices, values);
}

bext_tensor *bext_mask_where(bext_tensor *t, bext_tensor *mask, bext_tensor *value) {
  struct bxr_op op;
  op_init(&op, BXR_OP_MASK_WHERE, "bext_mask_where");
  op.n_in = 3;
  op.in[0] = t;
  op.in[1] = mask;
  op.in[2] = value;
  return bxr_dispatch(&op);
}

bext_tensor *bext_mask_fill(bext_tensor *t, bext_tensor *mask, double value) {
  struct bxr_op op;
  op_init(&op, BXR_OP_MASK_FILL, "bext_mask_fill");
  op.n_in = 2;
  op.in[0] = t;
  op.in[1] = mask;
  op.sc[0].f = value;
  return bxr_dispatch(&op);
}

/* ------------------------------------------------------------- elementwise */

#define BIN(fn, OP) \
  bext_tensor *bext_##fn(bext_tensor *a, bext_tensor *b) { return bin(BXR_OP_##OP, "bext_" #fn, a, b); }
#define SCAL(fn, OP) \
  bext_tensor *bext_##fn(bext_tensor *a, double s) { return un_sc(BXR_OP_##OP, "bext_" #fn, a, s); }
#define UN(fn, OP) \
  bext_tensor *bext_##fn(bext_tensor *t) { return un(BXR_OP_##OP, "bext_" #fn, t); }

BIN(add, ADD) BIN(sub, SUB) BIN(mul, MUL) BIN(div, DIV) BIN(rem, REM) BIN(pow, POW)
BIN(max, MAX) BIN(min, MIN)
SCAL(add_scalar, ADD_SCALAR) SCAL(sub_scalar, SUB_SCALAR) SCAL(mul_scalar, MUL_SCALAR)
SCAL(div_scalar, DIV_SCALAR) SCAL(rem_scalar, REM_SCALAR) SCAL(pow_scalar, POW_SCALAR)
SCAL(max_scalar, MAX_SCALAR) SCAL(min_scalar, MIN_SCALAR)
BIN(eq, EQ) BIN(ne, NE) BIN(gt, GT) BIN(ge, GE) BIN(lt, LT) BIN(le, LE)
SCAL(eq_scalar, EQ_SCALAR) SCAL(ne_scalar, NE_SCALAR) SCAL(gt_scalar, GT_SCALAR)
SCAL(ge_scalar, GE_SCALAR) SCAL(lt_scalar, LT_SCALAR) SCAL(le_scalar, LE_SCALAR)
BIN(and, AND) BIN(or, OR) BIN(xor, XOR) UN(not, NOT)
UN(neg, NEG) UN(abs, ABS) UN(exp, EXP) UN(log, LOG) UN(log1p, LOG1P) UN(sqrt, SQRT)
UN(rsqrt, RSQRT) UN(sin, SIN) UN(cos, COS) UN(tanh, TANH) UN(erf, ERF) UN(sigmoid, SIGMOID)
UN(relu, RELU) UN(recip, RECIP) UN(floor, FLOOR) UN(ceil, CEIL) UN(round, ROUND) UN(sign, SIGN)

bext_tensor *bext_clamp(bext_tensor *t, double lo, double hi) {
  struct bxr_op op;
  op_init(&op, BXR_OP_CLAMP, "bext_clamp");
  op.n_in = 1;
  op.in[0] = t;
  op.sc[0].f = lo;
  op.sc[1].f = hi;
  return bxr_dispatch(&op);
}

bext_tensor *bext_powi(bext_tensor *t, int64_t n) {
  struct bxr_op op;
  op_init(&op, BXR_OP_POWI, "bext_powi");
  op.n_in = 1;
  op.in[0] = t;
  op.sc[0].i = n;
  return bxr_dispatch(&op);
}

/* -------------------------------------------------------------- reductions */

static bext_tensor *red(enum bxr_opcode code, const char *api, bext_tensor *t, bool all, int dim,
                        bool keepdim) {
  struct bxr_op op;
  op_init_lite(&op, code, api);   /* reads no attribute array either */
  op.n_in = 1;
  op.in[0] = t;
  op.at.all = all;
  op.at.dim = dim;
  op.at.keepdim = keepdim;
  return bxr_dispatch(&op);
}

#define RED(fn, OP)                                                                 \
  bext_tensor *bext_##fn(bext_tensor *t) { return red(BXR_OP_##OP, "bext_" #fn, t, true, 0, false); } \
  bext_tensor *bext_##fn##_dim(bext_tensor *t, int dim, bool keepdim) {             \
    return red(BXR_OP_##OP, "bext_" #fn "_dim", t, false, dim, keepdim);            \
  }
RED(sum, SUM) RED(mean, MEAN) RED(prod, PROD) RED(argmax, ARGMAX) RED(argmin, ARGMIN)
RED(any, ANY) RED(all, ALL)

bext_tensor *bext_max_all(bext_tensor *t) { return red(BXR_OP_MAX_REDUCE, "bext_max_all", t, true, 0, false); }
bext_tensor *bext_min_all(bext_tensor *t) { return red(BXR_OP_MIN_REDUCE, "bext_min_all", t, true, 0, false); }
bext_tensor *bext_max_dim(bext_tensor *t, int dim, bool keepdim) {
  return red(BXR_OP_MAX_REDUCE, "bext_max_dim", t, false, dim, keepdim);
}
bext_tensor *bext_min_dim(bext_tensor *t, int dim, bool keepdim) {
  return red(BXR_OP_MIN_REDUCE, "bext_min_dim", t, false, dim, keepdim);
}

bext_tensor *bext_cumsum(bext_tensor *t, int dim) {
  struct bxr_op op;
  op_init(&op, BXR_OP_CUMSUM, "bext_cumsum");
  op.n_in = 1;
  op.in[0] = t;
  op.at.dim = dim;
  return bxr_dispatch(&op);
}

/* ------------------------------------------------------------ matmul, cast */

bext_tensor *bext_matmul(bext_tensor *a, bext_tensor *b) { return bin(BXR_OP_MATMUL, "bext_matmul", a, b); }

bext_tensor *bext_cast(bext_tensor *t, bext_dtype dt) {
  struct bxr_op op;
  op_init(&op, BXR_OP_CAST, "bext_cast");
  op.n_in = 1;
  op.in[0] = t;
  op.at.dtype = dt;
  return bxr_dispatch(&op);
}
