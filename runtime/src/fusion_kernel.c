/* fusion_kernel.c — the optimizer: elementwise chains of a segment (with
 * broadcast inputs), and a chain feeding a reduction, become one kernel in
 * the kernel IR (runtime/kir, bxk_ builder), run only through the inner
 * device's kernel_prepare / kernel_launch.  A device without those
 * members (LibTorch, Remote, and any device before its JIT lands) runs
 * every record unfused, in order; the plan and its groups are the same
 * either way.
 *
 * What fuses: ops whose every output element depends only on the input
 * elements at the same (broadcast) position and whose scalar semantics the
 * IR has (bxk_scalar.h, the one home of them): add sub mul div rem max min
 * pow, their *_scalar forms (int ones as Flex computes them: in i64
 * against the saturated scalar), comparisons, and or xor not, neg abs
 * sign, the float math of the IR, relu, sigmoid, clamp, mask_where, casts
 * between non-16-bit dtypes; and the views reshape, expand, swap_dims,
 * permute, slice, narrow and flip, as index maps (each member is evaluated
 * at the element its consumer reads).  A sum, mean, prod, max or min
 * (over a dim or all) reads its input chain on the fly: one unit per
 * output element walks the reduced extent in a fixed order, so the result
 * is deterministic.  Values of such rows read back along them (softmax's
 * max and sum, layer norm's mean and variance) make a row kernel: the
 * reductions, the row values and the ops reading them, one unit per row.
 * An extension call learned to be one elementwise `#[cube]` launch
 * (fusion_cube.c) is a member like these, its body the kernel's IR.
 * Not yet: f16/bf16, everything else that moves data. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bxk.h"
#include "bxl.h"
#include "fusion_kernel.h"

/* ------------------------------------------------------------ the table */

enum ew_how { EW_NO, EW_BIN, EW_BIN_SCALAR, EW_UN, EW_FUN, EW_CMP, EW_CMP_SCALAR, EW_LOGIC, EW_RELU, EW_WHERE, EW_CAST,
              EW_SIGMOID, EW_CLAMP, EW_VIEW };

/* How each opcode is written in the IR: one row per elementwise opcode.
 * Extension records carry the code BXR_OP_COUNT: its row (EW_NO) is
 * there so they index every table; a learned #[cube] body (fusion_cube.c)
 * is their IR. */
static const struct {
  uint8_t how, op;
} ew[BXR_OP_COUNT + 1] = {
    [BXR_OP_ADD] = {EW_BIN, BXK_OP_ADD}, [BXR_OP_SUB] = {EW_BIN, BXK_OP_SUB},
    [BXR_OP_MUL] = {EW_BIN, BXK_OP_MUL}, [BXR_OP_DIV] = {EW_BIN, BXK_OP_DIV},
    [BXR_OP_REM] = {EW_BIN, BXK_OP_REM}, [BXR_OP_MAX] = {EW_BIN, BXK_OP_MAX},
    [BXR_OP_MIN] = {EW_BIN, BXK_OP_MIN}, [BXR_OP_POW] = {EW_BIN, BXK_OP_POW},
    [BXR_OP_ADD_SCALAR] = {EW_BIN_SCALAR, BXK_OP_ADD}, [BXR_OP_SUB_SCALAR] = {EW_BIN_SCALAR, BXK_OP_SUB},
    [BXR_OP_MUL_SCALAR] = {EW_BIN_SCALAR, BXK_OP_MUL}, [BXR_OP_DIV_SCALAR] = {EW_BIN_SCALAR, BXK_OP_DIV},
    [BXR_OP_REM_SCALAR] = {EW_BIN_SCALAR, BXK_OP_REM}, [BXR_OP_POW_SCALAR] = {EW_BIN_SCALAR, BXK_OP_POW},
    [BXR_OP_MAX_SCALAR] = {EW_BIN_SCALAR, BXK_OP_MAX}, [BXR_OP_MIN_SCALAR] = {EW_BIN_SCALAR, BXK_OP_MIN},
    [BXR_OP_EQ] = {EW_CMP, BXK_OP_EQ}, [BXR_OP_NE] = {EW_CMP, BXK_OP_NE},
    [BXR_OP_GT] = {EW_CMP, BXK_OP_GT}, [BXR_OP_GE] = {EW_CMP, BXK_OP_GE},
    [BXR_OP_LT] = {EW_CMP, BXK_OP_LT}, [BXR_OP_LE] = {EW_CMP, BXK_OP_LE},
    [BXR_OP_EQ_SCALAR] = {EW_CMP_SCALAR, BXK_OP_EQ}, [BXR_OP_NE_SCALAR] = {EW_CMP_SCALAR, BXK_OP_NE},
    [BXR_OP_GT_SCALAR] = {EW_CMP_SCALAR, BXK_OP_GT}, [BXR_OP_GE_SCALAR] = {EW_CMP_SCALAR, BXK_OP_GE},
    [BXR_OP_LT_SCALAR] = {EW_CMP_SCALAR, BXK_OP_LT}, [BXR_OP_LE_SCALAR] = {EW_CMP_SCALAR, BXK_OP_LE},
    [BXR_OP_AND] = {EW_LOGIC, BXK_OP_AND}, [BXR_OP_OR] = {EW_LOGIC, BXK_OP_OR},
    [BXR_OP_XOR] = {EW_LOGIC, BXK_OP_XOR}, [BXR_OP_NOT] = {EW_UN, BXK_OP_NOT},
    [BXR_OP_NEG] = {EW_UN, BXK_OP_NEG}, [BXR_OP_ABS] = {EW_UN, BXK_OP_ABS},
    [BXR_OP_SIGN] = {EW_UN, BXK_OP_SIGN},
    [BXR_OP_EXP] = {EW_FUN, BXK_OP_EXP}, [BXR_OP_LOG] = {EW_FUN, BXK_OP_LOG},
    [BXR_OP_LOG1P] = {EW_FUN, BXK_OP_LOG1P}, [BXR_OP_SQRT] = {EW_FUN, BXK_OP_SQRT},
    [BXR_OP_RSQRT] = {EW_FUN, BXK_OP_RSQRT}, [BXR_OP_SIN] = {EW_FUN, BXK_OP_SIN},
    [BXR_OP_COS] = {EW_FUN, BXK_OP_COS}, [BXR_OP_TANH] = {EW_FUN, BXK_OP_TANH},
    [BXR_OP_ERF] = {EW_FUN, BXK_OP_ERF}, [BXR_OP_RECIP] = {EW_FUN, BXK_OP_RECIP},
    [BXR_OP_FLOOR] = {EW_FUN, BXK_OP_FLOOR}, [BXR_OP_CEIL] = {EW_FUN, BXK_OP_CEIL},
    [BXR_OP_ROUND] = {EW_FUN, BXK_OP_ROUND},
    [BXR_OP_RELU] = {EW_RELU, 0}, [BXR_OP_MASK_WHERE] = {EW_WHERE, 0}, [BXR_OP_CAST] = {EW_CAST, 0},
    [BXR_OP_SIGMOID] = {EW_SIGMOID, 0}, [BXR_OP_CLAMP] = {EW_CLAMP, 0},
    /* views: each output element is one input element at an index the
     * attributes fix (view_index), so they join a chain as index maps */
    [BXR_OP_RESHAPE] = {EW_VIEW, 0}, [BXR_OP_SWAP_DIMS] = {EW_VIEW, 0}, [BXR_OP_PERMUTE] = {EW_VIEW, 0},
    [BXR_OP_EXPAND] = {EW_VIEW, 0}, [BXR_OP_SLICE] = {EW_VIEW, 0}, [BXR_OP_FLIP] = {EW_VIEW, 0},
    [BXR_OP_NARROW] = {EW_VIEW, 0},   /* its start is a scalar: a parameter */
};

/* Reductions that fuse with the chain computing their input: how each
 * accumulates (Flex's rules, flex_reduce.c: floats sum and multiply in
 * f64, ints wrap in their dtype, max/min let NaN win, an int mean divides
 * the wrapped sum truncating). */
static const bool red[BXR_OP_COUNT + 1] = {
    [BXR_OP_SUM] = true, [BXR_OP_MEAN] = true, [BXR_OP_PROD] = true,
    [BXR_OP_MAX_REDUCE] = true, [BXR_OP_MIN_REDUCE] = true,
};

/* The IR element type of a dtype; BXK_VOID: none (f16, bf16 not yet). */
static enum bxk_type ir_type(bext_dtype dt) {
  switch (dt) {
  case BEXT_F32: return BXK_F32;
  case BEXT_F64: return BXK_F64;
  case BEXT_I32: return BXK_I32;
  case BEXT_I64: return BXK_I64;
  case BEXT_U8: return BXK_U8;
  case BEXT_BOOL: return BXK_BOOL;
  default: return BXK_VOID;
  }
}

static bool is_view(const struct bxfu_rec *r) { return r->kind == BXFU_CORE && ew[r->code].how == EW_VIEW; }

/* Whether record i is an elementwise op (or a view) the IR expresses for
 * its dtypes. */
static bool expressible(const struct bxfu_segment *g, int i) {
  const struct bxfu_rec *r = &g->rec[i];
  if (r->kind == BXFU_EXT ? !r->x->cube : ew[r->code].how == EW_NO) return false;
  if (ir_type(r->out.dtype) == BXK_VOID) return false;
  for (int k = 0; k < r->n_in; k++)
    if (ir_type(r->in[k]->dtype) == BXK_VOID) return false;
  bool fl = bxk_type_is_float(ir_type(r->in[0]->dtype));
  switch (ew[r->code].how) {
  case EW_BIN_SCALAR: return fl || r->code != BXR_OP_POW_SCALAR;   /* the IR's pow is float-only */
  case EW_BIN: return r->code != BXR_OP_POW || fl;
  default: return true;
  }
}

/* A fused reduction runs one unit per output element, each walking its
 * extent alone: with few outputs and long extents (a whole-tensor sum of
 * millions) that is one thread where Flex's own reduction uses the pool,
 * so such a reduction stays Flex's (its chain still fuses on its own). */
#define BXFU_RED_MAX_EXTENT 16384
#define BXFU_RED_MIN_UNITS 64

/* Sums, products, max and min accumulate in this many lanes, element k
 * into lane k % BXFU_RED_LANES (the tail past the last whole step into
 * lane 0), combined pairwise at the end: a fixed order, so still
 * deterministic, and the lanes are independent, so LLVM's SLP vectorizer
 * packs them into vectors (16 f32 lanes: one AVX-512 register, two AVX2
 * ones), libmvec's vector exp included. */
#define BXFU_RED_LANES 16

/* The most loop trips a fused reduction's unit runs over an extent of
 * ext (reduce_ir): its accumulating loop, BXFU_RED_LANES elements a trip
 * on long extents, and for max/min a rescan of the whole extent for the
 * first zero or NaN. */
static int64_t red_trips(const struct bxfu_rec *r, int64_t ext) {
  int64_t acc = ext >= 2 * BXFU_RED_LANES ? ext / BXFU_RED_LANES + BXFU_RED_LANES : ext;   /* + the tail */
  return acc + (r->code == BXR_OP_MAX_REDUCE || r->code == BXR_OP_MIN_REDUCE ? ext : 0);
}

/* Whether a unit's trips fit the loop limit of the device r's input is
 * recorded over.  The limit is a budget for all of a unit's loops
 * together, nested or in a row (llvmpipe keeps one counter per
 * invocation: cube_set_limits), so a row kernel counts every pass. */
static bool trips_fit(const struct bxfu_rec *r, int64_t trips) {
  uint32_t loop_max = r->in[0]->device->inner ? r->in[0]->device->inner->loop_max : 0;
  return !loop_max || trips <= (int64_t)loop_max;
}

/* Whether record i is a reduction a fused kernel computes (dim or all,
 * over a non-empty input of an IR dtype, not long and narrow, and not
 * longer than a loop of the inner device may run: a unit walks its
 * extent in loops of up to K trips (a max/min's rescan, a row kernel's
 * storing loop), and llvmpipe ends longer loops early without a word,
 * which would make a sum of 1.1M elements come back short; such a
 * reduction stays the inner device's, which splits or refuses it). */
static bool reducible(const struct bxfu_segment *g, int i) {
  const struct bxfu_rec *r = &g->rec[i];
  if (r->kind != BXFU_CORE || !red[r->code]) return false;
  enum bxk_type t = ir_type(r->out.dtype);
  int64_t n = bxr_numel(r->in[0]->rank, r->in[0]->shape), units = bxr_numel(r->out.rank, r->out.shape);
  return t != BXK_VOID && t != BXK_BOOL && r->in[0]->dtype == r->out.dtype && n > 0 &&
         (n / units <= BXFU_RED_MAX_EXTENT || units >= BXFU_RED_MIN_UNITS) && trips_fit(r, red_trips(r, n / units));
}

/* ------------------------------------------------------------ legality */

/* The reduction that elementwise record c feeds through a chain of
 * records of c's shape, each read once, by the next, held by nobody, none
 * a view (so the reduction's loop visits every element of c once); -1
 * when there is none. */
static int reduction_fed(const struct bxfu_segment *g, int c) {
  const struct bxfu_rec *rc = &g->rec[c];
  for (int cur = c;;) {
    const struct bxfu_rec *r = &g->rec[cur];
    if (!expressible(g, cur) || is_view(r) || g->uses[cur] != 1 || g->held[cur] ||
        !bxr_same_shape(r->out.rank, r->out.shape, rc->out.rank, rc->out.shape))
      return -1;
    int next = g->first_use[cur];
    if (reducible(g, next)) return next;
    cur = next;
  }
}

/* The dim along which a value of shape p is broadcast into shape c when
 * p is c with that one dim collapsed to 1 (a row's value read back along
 * the row); -1 otherwise. */
static int collapsed_dim(const bext_spec *p, const bext_spec *c) {
  if (p->rank != c->rank) return -1;
  int d = -1;
  for (int a = 0; a < c->rank; a++) {
    if (p->shape[a] == c->shape[a]) continue;
    if (p->shape[a] != 1 || d >= 0) return -1;
    d = a;
  }
  return d;
}

/* A row edge: p's value is per row of a reduction (the reduction itself,
 * keeping its dim, or an elementwise op of that shape) and elementwise c
 * reads it, at its own shape or broadcast back along the reduced dim:
 * softmax's max and sum, layer norm's mean, variance and rsqrt.  Only
 * whole row kernels (rows_fit, below) may hold such edges. */
static bool row_edge(const struct bxfu_segment *g, int p, int c) {
  const struct bxfu_rec *rp = &g->rec[p], *rc = &g->rec[c];
  if (!expressible(g, c) || is_view(rc)) return false;
  if (reducible(g, p))
    return !rp->at.all && rp->out.rank == rp->in[0]->rank &&
           (bxr_same_shape(rp->out.rank, rp->out.shape, rc->out.rank, rc->out.shape) || collapsed_dim(&rp->out, &rc->out) >= 0);
  return expressible(g, p) && !is_view(rp) && collapsed_dim(&rp->out, &rc->out) >= 0;
}

bool bxfu_can_fuse(const struct bxfu_segment *g, int p, int c) {
  const struct bxfu_rec *rp = &g->rec[p], *rc = &g->rec[c];
  /* p's value may be read again or held: the row kernel stores it, and
   * rows_fit checks that every read outside the group comes after it */
  if (row_edge(g, p, c)) return true;
  if (!expressible(g, p)) return false;
  /* A chain feeding a reduction is computed inside the reduction's loop,
   * at every element of its input.  p's value may be read again after
   * the reduction or held: the kernel then also stores it (the group's
   * wout), so nothing elided is visible; but every other read must come
   * after c, where the group runs. */
  if (reducible(g, c)) return (g->uses[p] == 1 && !g->held[p]) || g->first_use[p] == c;
  /* both elementwise (or views) and expressible; and of c's output shape,
   * so c's index is also p's (an intermediate is never broadcast inside a
   * kernel), unless c is a view, whose index map says where p is read */
  if (!expressible(g, c) || !(is_view(rc) || bxr_same_shape(rp->out.rank, rp->out.shape, rc->out.rank, rc->out.shape)))
    return false;
  /* p's value read once (by c) in the segment and held by nobody outside
   * it, so eliding it is invisible */
  if (g->uses[p] == 1 && !g->held[p]) return true;
  /* ...or stored, deeper in a reduction's chain (layer norm's centred
   * value, squared into the variance's mean and read again after it): c
   * feeds a reduction r through records of p's shape, and every read of
   * p up to r is by that chain, so the group (run at r) computes p before
   * anyone else reads it. */
  if (is_view(rc) || is_view(rp)) return false;
  int r = reduction_fed(g, c);
  if (r < 0) return false;
  for (int j = p + 1; j <= r; j++)
    for (int q = 0; q < g->nsrc[j]; q++) {
      if (g->src[j][q] != p) continue;
      bool on_chain = j == r;
      for (int cur = c; !on_chain && cur != r; cur = g->first_use[cur]) on_chain = cur == j;
      if (!on_chain) return false;
    }
  return true;
}

/* ------------------------------------------------------------ grouping */

static int find(int *parent, int i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

/* How many scalar parameters record r's row takes in a kernel. */
static int n_scalars(const struct bxfu_rec *r) {
  if (r->kind == BXFU_EXT) return r->x->cube ? bxfu_cube_nscalars(r->x->cube) : 0;   /* its kernel's */
  switch (ew[r->code].how) {
  case EW_BIN_SCALAR: case EW_CMP_SCALAR: return 1;
  case EW_CLAMP: return 2;
  default: return r->code == BXR_OP_NARROW;   /* the start (sc[0]); the length is in the shape */
  }
}

/* The type of scalar parameter q of record r: a float input's own type
 * (the scalar rounded to it: Flex does the same when the scalar is exact
 * in f32 and computes in f64 otherwise, so x * 0.1 may differ from eager
 * Flex in the last bit), else f64, turned
 * into i64 inside the kernel by the IR's saturating cast (Flex's
 * bxr_f64_to_i64_sat is that cast); comparisons take it as f64, so x <
 * 0.1 compares against 0.1 itself, as Flex's thresholds do.  A learned
 * #[cube] kernel's parameters keep their own types. */
static enum bxk_type scalar_type(const struct bxfu_rec *r, int q) {
  if (r->kind == BXFU_EXT) return (enum bxk_type)bxfu_cube_scalar_type(r->x->cube, q);
  if (r->code == BXR_OP_NARROW) return BXK_I64;
  enum bxk_type t = ir_type(r->in[0]->dtype);
  return bxk_type_is_float(t) && ew[r->code].how != EW_CMP_SCALAR ? t : BXK_F64;
}

static bxk_val cvt(struct bxk_builder *b, enum bxk_type to, enum bxk_type from, bxk_val v) {
  return to == from ? v : bxk_cast(b, to, v);
}

/* The kernel being built for one group. */
struct kb {
  const struct bxfu_segment *g;
  const struct bxfu_group *gr;
  struct bxk_kernel *k;
  bxk_val *val;            /* member record -> its value, once evaluated */
  bxk_val *at;             /* member record -> the index it was evaluated at */
  int *scal;               /* member record -> its first scalar parameter */
  int *wbind;              /* member record -> the binding storing it, or -1 */
  /* Stores of members held back while a reduction step evaluates its
   * lanes, then written after every lane's loads: a store between two
   * lanes' loads may alias them (bindings carry no alias facts), which
   * keeps LLVM's SLP vectorizer from packing the lanes into vectors. */
  struct { int bind; bxk_val idx, v; } *pend;
  int npend;
  bool defer;
  bool *unit;              /* member record -> a row's value (row kernels), computed once per row */
  bool *wdone, *wnow;      /* member record -> stored by an earlier loop / by the loop being built */
  int keep;                /* a row kernel's member kept in the root's output between loops, or -1 */
  bool keeping;            /* the loop being built stores it there */
};

/* Coordinate d of element idx of a row-major shape (0 for extent 1). */
static bxk_val coord(struct bxk_builder *b, bxk_val idx, int R, const int64_t *shape, int d) {
  if (shape[d] == 1) return bxk_const_i(b, BXK_U32, 0);
  int64_t ostride = 1;
  for (int e = d + 1; e < R; e++) ostride *= shape[e];
  bxk_val c = ostride > 1 ? bxk_bin(b, BXK_OP_DIV, idx, bxk_const_i(b, BXK_U32, ostride)) : idx;
  return d > 0 ? bxk_bin(b, BXK_OP_REM, c, bxk_const_i(b, BXK_U32, shape[d])) : c;
}

/* The element of a tensor of shape (tr, ts) read at element idx of shape
 * (R, shape) when it broadcasts there: dims align on the right; stretched
 * dims read 0. */
static bxk_val bcast_index(struct bxk_builder *b, bxk_val idx, int R, const int64_t *shape, int tr, const int64_t *ts) {
  if (bxr_same_shape(tr, ts, R, shape)) return idx;
  bxk_val at = bxk_const_i(b, BXK_U32, 0);
  int64_t istride = 1;
  for (int d = R - 1; d >= 0; d--) {
    int td = d - (R - tr);
    int64_t ext_d = td >= 0 ? ts[td] : 1;
    if (ext_d != 1)
      at = bxk_bin(b, BXK_OP_ADD, at, bxk_bin(b, BXK_OP_MUL, coord(b, idx, R, shape, d), bxk_const_i(b, BXK_U32, istride)));
    istride *= ext_d;
  }
  return at;
}

/* Where view r reads its input for its output element idx (both
 * row-major): reshape keeps the order; expand is a broadcast; the others
 * move coordinates (input dim perm[d] holds output coordinate d, slices
 * shift by their start, narrow by its start, scalar parameter scal, flips
 * mirror). */
static bxk_val view_index(struct bxk_builder *b, const struct bxfu_rec *r, bxk_val idx, int scal) {
  const bext_tensor *x = r->in[0];
  int R = r->out.rank;
  const int64_t *S = r->out.shape;
  if (r->code == BXR_OP_RESHAPE) return idx;
  if (r->code == BXR_OP_EXPAND) return bcast_index(b, idx, R, S, x->rank, x->shape);
  int perm[BEXT_MAX_RANK];
  int64_t istride[BEXT_MAX_RANK];
  for (int d = 0; d < R; d++) perm[d] = d;
  if (r->code == BXR_OP_SWAP_DIMS) perm[r->at.dims[0]] = r->at.dims[1], perm[r->at.dims[1]] = r->at.dims[0];
  if (r->code == BXR_OP_PERMUTE)
    for (int d = 0; d < R; d++) perm[d] = r->at.dims[d];
  for (int d = x->rank - 1, st = 1; d >= 0; d--) istride[d] = st, st *= (int)x->shape[d];
  bxk_val at = bxk_const_i(b, BXK_U32, 0);
  for (int d = 0; d < R; d++) {
    bxk_val c = coord(b, idx, R, S, d);
    if (r->code == BXR_OP_SLICE && d < r->at.nranges && r->at.start[d])
      c = bxk_bin(b, BXK_OP_ADD, c, bxk_const_i(b, BXK_U32, r->at.start[d]));
    if (r->code == BXR_OP_NARROW && d == r->at.dim) c = bxk_bin(b, BXK_OP_ADD, c, bxk_cast(b, BXK_U32, bxk_scalar(b, scal)));
    if (r->code == BXR_OP_FLIP)
      for (int f = 0; f < r->at.ndims; f++)
        if (r->at.dims[f] == d) c = bxk_bin(b, BXK_OP_SUB, bxk_const_i(b, BXK_U32, S[d] - 1), c);
    at = bxk_bin(b, BXK_OP_ADD, at, bxk_bin(b, BXK_OP_MUL, c, bxk_const_i(b, BXK_U32, istride[perm[d]])));
  }
  return at;
}

/* One elementwise member: its row written with the IR's ops (their scalar
 * semantics are bxk_scalar.h's); *scal: its first scalar parameter. */
static bxk_val member_ir(struct bxk_builder *b, const struct bxfu_rec *r, const bxk_val *in, int scal) {
  enum bxk_type ot = ir_type(r->out.dtype), it = ir_type(r->in[0]->dtype);
  bool fl = bxk_type_is_float(it);
  switch (ew[r->code].how) {
  case EW_BIN: case EW_LOGIC: case EW_CMP: return bxk_bin(b, ew[r->code].op, in[0], in[1]);
  case EW_BIN_SCALAR: case EW_CMP_SCALAR: {
    bxk_val sc = bxk_scalar(b, scal);
    bool cmp = ew[r->code].how == EW_CMP_SCALAR;
    /* floats compare in f64 (the scalar is not rounded first) */
    if (fl) return cmp ? bxk_bin(b, ew[r->code].op, cvt(b, BXK_F64, it, in[0]), sc) : bxk_bin(b, ew[r->code].op, in[0], sc);
    /* ints: Flex computes in i64 against the saturated scalar, then
     * stores wrapping to the dtype */
    bxk_val y = bxk_bin(b, ew[r->code].op, cvt(b, BXK_I64, it, in[0]), bxk_cast(b, BXK_I64, sc));
    return cmp ? y : cvt(b, ot, BXK_I64, y);
  }
  case EW_UN: case EW_FUN: return bxk_un(b, ew[r->code].op, in[0]);
  case EW_RELU: {
    bxk_val zero = fl ? bxk_const_f(b, ot, 0.0) : bxk_const_i(b, ot, 0);
    return bxk_select(b, bxk_bin(b, BXK_OP_LT, in[0], zero), zero, in[0]);
  }
  case EW_WHERE: return bxk_select(b, in[1], in[2], in[0]);  /* mask ? value : x */
  case EW_CAST: return bxk_cast(b, ot, in[0]);
  case EW_SIGMOID: {   /* 1 / (1 + exp(-x)), in the input's type, as Flex */
    bxk_val one = bxk_const_f(b, it, 1.0);
    return bxk_bin(b, BXK_OP_DIV, one, bxk_bin(b, BXK_OP_ADD, one, bxk_un(b, BXK_OP_EXP, bxk_un(b, BXK_OP_NEG, in[0]))));
  }
  case EW_CLAMP: {     /* x < lo ? lo : x > hi ? hi : x (NaN stays), ints in i64 */
    enum bxk_type ct = fl ? it : BXK_I64;
    bxk_val x = cvt(b, ct, it, in[0]), lo = bxk_scalar(b, scal), hi = bxk_scalar(b, scal + 1);
    if (!fl) lo = bxk_cast(b, ct, lo), hi = bxk_cast(b, ct, hi);
    bxk_val y = bxk_select(b, bxk_bin(b, BXK_OP_GT, x, hi), hi, x);
    y = bxk_select(b, bxk_bin(b, BXK_OP_LT, x, lo), lo, y);
    return cvt(b, ot, ct, y);
  }
  default: return 0;
  }
}

/* The value of member i at element idx of its output: its inputs first
 * (members evaluated at the index i reads them at, outside inputs loaded
 * there), then its row, stored too when it is read after the group.
 * Every member but the root has one consumer inside the group (a stored
 * one may be read twice by it, at one element), so each member is
 * evaluated once per element; in a row kernel a member may be read by
 * several (layer norm's centred value), each evaluation at one element
 * is shared, and a row's values (K->unit) are computed once per row
 * before the loops that read them. */
static bxk_val member_val(struct bxk_builder *b, struct kb *K, int i, bxk_val idx);

/* Input q of member i, read at element `at` of that input: a row's
 * value, a member evaluated there, or an outside input loaded there. */
static bxk_val operand(struct bxk_builder *b, struct kb *K, int i, int q, bxk_val at) {
  const struct bxfu_segment *g = K->g;
  const struct bxfu_group *gr = K->gr;
  int src = g->src[i][q];
  if (src >= 0 && K->unit[src] && K->val[src] != (bxk_val)-1) return K->val[src];   /* computed once per row */
  if (src >= 0 && K->val[src] && K->at[src] == at) return K->val[src];   /* a member read twice at one element */
  if (src >= 0 && K->val[src] == (bxk_val)-1) return member_val(b, K, src, at);   /* a member: evaluated there */
  const struct bxfu_val *v = bxfu_val_of(g->rec[i].in[q]);
  for (int e = 0; e < gr->next; e++)
    if (bxfu_val_of(g->rec[gr->ext_rec[e]].in[gr->ext_in[e]]) == v) return bxk_load(b, e, at);
  return 0;
}

static bxk_val member_val(struct bxk_builder *b, struct kb *K, int i, bxk_val idx) {
  const struct bxfu_segment *g = K->g;
  const struct bxfu_rec *r = &g->rec[i];
  bool view = is_view(r);
  bxk_val in[BXR_MAX_INPUTS] = {0};
  for (int q = 0; q < r->n_in; q++) {
    const bext_tensor *t = r->in[q];
    int src = g->src[i][q];
    bool row_value = src >= 0 && K->unit[src] && K->val[src] != (bxk_val)-1;   /* needs no index */
    in[q] = operand(b, K, i, q, row_value ? 0 : view ? view_index(b, r, idx, K->scal[i])
                                                 : bcast_index(b, idx, r->out.rank, r->out.shape, t->rank, t->shape));
  }
  K->at[i] = idx;
  K->val[i] = view                   ? in[0]
             : r->kind == BXFU_EXT ? bxfu_cube_inline(b, r->x->cube, in, idx, K->scal[i])
                                   : member_ir(b, r, in, K->scal[i]);
  if (i == K->keep && K->keeping && K->defer)   /* kept for the last loop, in the root's own element */
    K->pend[K->npend].bind = K->gr->next, K->pend[K->npend].idx = idx, K->pend[K->npend++].v = K->val[i];
  if (K->wbind[i] >= 0 && !K->wdone[i]) {   /* read after the group: stored once */
    K->wnow[i] = true;
    if (K->defer) {   /* after the step's loads */
      K->pend[K->npend].bind = K->wbind[i], K->pend[K->npend].idx = idx, K->pend[K->npend++].v = K->val[i];
    } else {
      bxk_store(b, K->wbind[i], idx, K->val[i]);
    }
  }
  return K->val[i];
}

/* Every member that is not a row's value forgotten, so the next loop (or
 * lane) evaluates its chain afresh at its own element. */
static void forget_elements(struct kb *K) {
  for (int m = 0; m < K->gr->n; m++) {
    int i = K->gr->member[m];
    if (!K->unit || !K->unit[i]) K->val[i] = (bxk_val)-1;
  }
}

/* Members stored in the loop just closed are not stored again by later
 * loops that evaluate them afresh. */
static void stores_done(struct kb *K) {
  for (int i = 0; i < K->g->n; i++)
    if (K->wnow[i]) K->wdone[i] = true, K->wnow[i] = false;
}

/* acc = acc (op) v, in the accumulator's type. */
static void accumulate(struct bxk_builder *b, enum bxr_opcode op, int acc, bxk_val v) {
  bxk_val a = bxk_get(b, acc), y;
  switch (op) {
  case BXR_OP_SUM: case BXR_OP_MEAN: y = bxk_bin(b, BXK_OP_ADD, a, v); break;
  case BXR_OP_PROD: y = bxk_bin(b, BXK_OP_MUL, a, v); break;
  /* the element first: a tie keeps the earlier value, a NaN either side wins */
  case BXR_OP_MAX_REDUCE: y = bxk_bin(b, BXK_OP_MAX, v, a); break;
  default: y = bxk_bin(b, BXK_OP_MIN, v, a); break;
  }
  bxk_set(b, acc, y);
}

/* The rows of a group: each unit (pos) is one row, the reduced dim's K
 * elements at base + k * inner, k = 0..K-1. */
struct rows {
  int64_t ext, inner;
  bxk_val base;
};

/* The element index of row element k. */
static bxk_val row_index(struct bxk_builder *b, const struct rows *w, bxk_val k) {
  return bxk_bin(b, BXK_OP_ADD, w->base, w->inner > 1 ? bxk_bin(b, BXK_OP_MUL, k, bxk_const_i(b, BXK_U32, w->inner)) : k);
}

/* Reduction member r over the row: k = 0..K-1 in order with its chain
 * evaluated at each element, accumulated as Flex accumulates (table
 * `red`) in BXFU_RED_LANES lanes.  Float max/min combine their lanes
 * exactly: lanes change nothing but where an equal element or a NaN sits,
 * so a zero or NaN result (the only values whose bits depend on which
 * equal element wins) walks the row again for its first occurrence, as
 * the sequential scan (and Flex) finds it. */
static bxk_val reduce_ir(struct bxk_builder *b, struct kb *K, int ri, const struct rows *w) {
  const struct bxfu_rec *r = &K->g->rec[ri];
  int64_t ext = w->ext;
  enum bxk_type t = ir_type(r->out.dtype);
  bool fl = bxk_type_is_float(t);
  enum bxr_opcode op = r->code;
  bool sum = op == BXR_OP_SUM || op == BXR_OP_MEAN, ext_op = op == BXR_OP_MAX_REDUCE || op == BXR_OP_MIN_REDUCE;
  enum bxk_type at = fl && (sum || op == BXR_OP_PROD) ? BXK_F64 : t;
  int lanes = ext >= 2 * BXFU_RED_LANES ? BXFU_RED_LANES : 1;
  int acc[BXFU_RED_LANES];
  bxk_val init;
  if (sum) init = fl ? bxk_const_f(b, at, 0.0) : bxk_const_i(b, at, 0);
  else if (op == BXR_OP_PROD) init = fl ? bxk_const_f(b, at, 1.0) : bxk_const_i(b, at, 1);
  else if (fl) init = bxk_const_f(b, at, op == BXR_OP_MAX_REDUCE ? -INFINITY : INFINITY);
  else {
    int64_t lo = t == BXK_I32 ? INT32_MIN : t == BXK_I64 ? INT64_MIN : 0;
    int64_t hi = t == BXK_I32 ? INT32_MAX : t == BXK_I64 ? INT64_MAX : 255;
    init = bxk_const_i(b, at, op == BXR_OP_MAX_REDUCE ? lo : hi);
  }
  for (int l = 0; l < lanes; l++) {
    acc[l] = bxk_add_local(K->k, at);
    bxk_set(b, acc[l], init);
  }
  /* whole steps of `lanes` elements, then the tail into lane 0 */
  int64_t whole = ext / lanes * lanes;
  for (int part = 0; part < 2; part++) {
    int64_t lo = part ? whole : 0, hi = part ? ext : whole, step = part ? 1 : lanes;
    if (lo >= hi) continue;
    struct bxk_block *body;
    bxk_val k = bxk_for(b, bxk_const_i(b, BXK_U32, lo), bxk_const_i(b, BXK_U32, hi), bxk_const_i(b, BXK_U32, step), &body);
    struct bxk_builder bb = bxk_builder_at(K->k, body);
    /* every lane's chain first (loads and math), then the stores it
     * held back, then the accumulators: lane by lane in that order, so
     * the vectorizer sees one load, one math op and one store per
     * member across the lanes */
    bxk_val v[BXFU_RED_LANES];
    K->defer = true;
    K->npend = 0;
    bxk_val idx0 = row_index(&bb, w, k);
    for (int l = 0; l < (part ? 1 : lanes); l++) {   /* lane l at idx0 + l * inner: one base for all */
      bxk_val idx = l ? bxk_bin(&bb, BXK_OP_ADD, idx0, bxk_const_i(&bb, BXK_U32, l * w->inner)) : idx0;
      forget_elements(K);
      v[l] = cvt(&bb, at, t, operand(&bb, K, ri, 0, idx));
    }
    for (int q = 0; q < K->npend; q++)   /* in the order they were evaluated */
      bxk_store(&bb, K->pend[q].bind, K->pend[q].idx, K->pend[q].v);
    K->defer = false;
    for (int l = 0; l < (part ? 1 : lanes); l++) accumulate(&bb, op, acc[l], v[l]);
  }
  stores_done(K);
  bxk_val res[BXFU_RED_LANES];   /* lanes combined pairwise: (0 1) (2 3) ..., then pairs of pairs */
  for (int l = 0; l < lanes; l++) res[l] = bxk_get(b, acc[l]);
  for (int wd = 1; wd < lanes; wd *= 2)
    for (int l = 0; l + wd < lanes; l += 2 * wd) {
      if (!ext_op) res[l] = bxk_bin(b, op == BXR_OP_PROD ? BXK_OP_MUL : BXK_OP_ADD, res[l], res[l + wd]);
      else res[l] = bxk_bin(b, op == BXR_OP_MAX_REDUCE ? BXK_OP_MAX : BXK_OP_MIN, res[l + wd], res[l]);
    }
  bxk_val y = res[0];
  if (ext_op && fl && lanes > 1) {   /* a zero or a NaN: the first one in the row */
    int out = bxk_add_local(K->k, t);
    bxk_set(b, out, y);
    bxk_val zero = bxk_const_f(b, t, 0.0);
    bxk_val again = bxk_bin(b, BXK_OP_OR, bxk_bin(b, BXK_OP_EQ, y, zero), bxk_bin(b, BXK_OP_NE, y, y));
    struct bxk_block *then_blk, *else_blk, *body, *hit, *miss;
    bxk_if(b, again, &then_blk, &else_blk);
    struct bxk_builder tb = bxk_builder_at(K->k, then_blk);
    bxk_val k = bxk_for(&tb, bxk_const_i(&tb, BXK_U32, 0), bxk_const_i(&tb, BXK_U32, ext), bxk_const_i(&tb, BXK_U32, 1), &body);
    struct bxk_builder bb = bxk_builder_at(K->k, body);
    forget_elements(K);
    bxk_val e = operand(&bb, K, ri, 0, row_index(&bb, w, k));
    bxk_if(&bb, bxk_bin(&bb, BXK_OP_OR, bxk_bin(&bb, BXK_OP_EQ, e, y), bxk_bin(&bb, BXK_OP_NE, e, e)), &hit, &miss);
    struct bxk_builder hb = bxk_builder_at(K->k, hit);
    bxk_set(&hb, out, e);
    bxk_break(&hb);
    y = bxk_get(b, out);
  }
  if (op == BXR_OP_MEAN) {
    if (fl) y = bxk_bin(b, BXK_OP_DIV, y, bxk_const_f(b, at, (double)ext));
    else y = cvt(b, at, BXK_I64, bxk_bin(b, BXK_OP_DIV, cvt(b, BXK_I64, at, y), bxk_const_i(b, BXK_I64, ext)));
  }
  return cvt(b, t, at, y);
}

/* Whether member i of a row kernel is an element of the rows (not a row
 * value) feeding member `to` through such elements, i itself included;
 * seen[] marks the members already walked from (each once). */
static bool feeds(const struct kb *K, int i, int to, bool *seen) {
  if (i == to) return true;
  if (seen[to]) return false;
  seen[to] = true;
  const struct bxfu_rec *r = &K->g->rec[to];
  for (int q = 0; q < r->n_in; q++) {
    int s = K->g->src[to][q];
    if (s >= i && K->val[s] == (bxk_val)-1 && !K->unit[s] && feeds(K, i, s, seen)) return true;
  }
  return false;
}

/* The element of the rows that a row kernel computes in its last
 * reduction's loop and reads again in its last loop (softmax's exp(x -
 * max), read by the sum and by the division): that loop stores it in the
 * root's own output element, of its dtype, and the last loop reads it
 * back there instead of computing it again (an exp per element saved).
 * The latest such member, so the most work is kept; -1 when none (or
 * the root is a row value).  last_red: the group's last reduction. */
static int kept_member(const struct kb *K, int last_red) {
  const struct bxfu_segment *g = K->g;
  const struct bxfu_group *gr = K->gr;
  int best = -1;
  if (K->unit[gr->root] || last_red < 0 || g->src[last_red][0] < 0) return -1;
  int in = g->src[last_red][0];
  bool *seen = calloc((size_t)g->n, sizeof *seen);
  for (int m = 0; seen && m < gr->n; m++) {
    int i = gr->member[m];
    if (K->unit[i] || i == gr->root || g->rec[i].out.dtype != g->rec[gr->root].out.dtype) continue;
    memset(seen, 0, (size_t)g->n * sizeof *seen);
    bool a = K->val[in] == (bxk_val)-1 && feeds(K, i, in, seen);
    memset(seen, 0, (size_t)g->n * sizeof *seen);
    if (a && feeds(K, i, gr->root, seen)) best = i;
  }
  free(seen);   /* (out of memory: nothing kept, all computed again) */
  return best;
}

/* A group with reductions, at unit pos (one row of [outer, K, inner], K
 * the reduced extent; the whole tensor for `all`): its members in record
 * order, each reduction as a loop over the row, each row value (K->unit)
 * once; then, when the root is an element of the rows (softmax's
 * division), a last loop storing it at every element of the row, its
 * chain evaluated afresh (a row's values read from before). */
static bool rows_ir(struct bxk_builder *b, struct kb *K, bxk_val pos, const struct bxfu_rec *rd) {
  const struct bxfu_segment *g = K->g;
  const struct bxfu_group *gr = K->gr;
  const bext_tensor *x = rd->in[0];
  struct rows w = {bxr_numel(x->rank, x->shape), 1, pos};
  if (!rd->at.all) {
    w.ext = x->shape[rd->at.dim];
    for (int d = rd->at.dim + 1; d < x->rank; d++) w.inner *= x->shape[d];
  }
  if (w.inner > 1 || w.ext > 1) {   /* base = o * ext * inner + i, with o = pos / inner, i = pos % inner */
    bxk_val cin = bxk_const_i(b, BXK_U32, w.inner);
    bxk_val o = w.inner > 1 ? bxk_bin(b, BXK_OP_DIV, pos, cin) : pos;
    w.base = bxk_bin(b, BXK_OP_MUL, o, bxk_const_i(b, BXK_U32, w.ext * w.inner));
    if (w.inner > 1) w.base = bxk_bin(b, BXK_OP_ADD, w.base, bxk_bin(b, BXK_OP_REM, pos, cin));
  }
  int last_red = -1;
  for (int m = 0; m < gr->n; m++)
    if (red[g->rec[gr->member[m]].code]) last_red = gr->member[m];
  K->keep = kept_member(K, last_red);
  for (int m = 0; m < gr->n; m++) {
    int i = gr->member[m];
    if (!K->unit[i]) continue;
    if (red[g->rec[i].code]) {
      K->keeping = i == last_red && K->keep >= 0;
      K->val[i] = reduce_ir(b, K, i, &w);
      K->keeping = false;
      K->at[i] = pos;
      if (K->wbind[i] >= 0) bxk_store(b, K->wbind[i], pos, K->val[i]);
    } else {
      member_val(b, K, i, pos);   /* its inputs are row values too: evaluated already */
    }
  }
  /* a member read after the group that no loop computed yet (it feeds
   * neither a reduction nor the root: min(x, min_dim(x)) read by a
   * gather while the group goes on to the row values) gets the last loop */
  bool element_root = !K->unit[gr->root], loop = element_root;
  for (int q = 0; q < gr->nwout; q++) loop |= !K->unit[gr->wout[q]] && !K->wdone[gr->wout[q]];
  if (!element_root) bxk_store(b, gr->next, pos, K->val[gr->root]);
  if (!loop) return true;
  struct bxk_block *body;
  bxk_val k = bxk_for(b, bxk_const_i(b, BXK_U32, 0), bxk_const_i(b, BXK_U32, w.ext), bxk_const_i(b, BXK_U32, 1), &body);
  struct bxk_builder bb = bxk_builder_at(K->k, body);
  forget_elements(K);
  bxk_val idx = row_index(&bb, &w, k);
  if (element_root && K->keep >= 0) {   /* read back, not computed again */
    K->val[K->keep] = bxk_load(&bb, gr->next, idx);
    K->at[K->keep] = idx;
  }
  if (element_root) bxk_store(&bb, gr->next, idx, member_val(&bb, K, gr->root, idx));
  for (int q = 0; q < gr->nwout; q++) {
    int i = gr->wout[q];
    if (!K->unit[i] && !K->wdone[i] && !(K->val[i] != (bxk_val)-1 && K->at[i] == idx)) member_val(&bb, K, i, idx);
  }
  stores_done(K);
  return true;
}

/* The kernel of group gr: one unit per element of the root's output;
 * each member evaluated at the element its consumer reads (member_val),
 * outside inputs loaded there; the root's value stored, or for a
 * reduction root, the chain evaluated inside its loop.  Shapes are constants (they are part
 * of the plan's key); scalars are parameters (fresh on every replay). */
static struct bxk_kernel *group_ir(const struct bxfu_segment *g, struct bxfu_group *gr) {
  const struct bxfu_rec *root = &g->rec[gr->root], *rd = NULL;
  int nred = 0;
  for (int m = 0; m < gr->n; m++)
    if (red[g->rec[gr->member[m]].code]) rd = rd ? rd : &g->rec[gr->member[m]], nred++;
  /* a row kernel: a reduction's value read inside the group (rows_fit
   * made its members elementwise, of the rows' shape or one value per row) */
  bool rows = rd && (nred > 1 || !red[root->code]);
  const bext_spec *is = rd ? &rd->in[0]->spec : &root->out;
  int64_t numel = rd ? bxr_numel(rd->out.rank, rd->out.shape) : bxr_numel(root->out.rank, root->out.shape);
  if (numel <= 0 || numel > (int64_t)UINT32_MAX / 2 || bxr_numel(is->rank, is->shape) > (int64_t)UINT32_MAX / 2)
    return NULL;
  for (int m = 0; m < gr->n; m++) {   /* every index of the kernel is a u32 */
    const struct bxfu_rec *r = &g->rec[gr->member[m]];
    if (bxr_numel(r->out.rank, r->out.shape) > (int64_t)UINT32_MAX / 2) return NULL;
    for (int q = 0; q < r->n_in; q++)
      if (bxr_numel(r->in[q]->rank, r->in[q]->shape) > (int64_t)UINT32_MAX / 2) return NULL;
  }
  gr->numel = (uint32_t)numel;
  char name[48];
  snprintf(name, sizeof name, rd ? "fused_%d_ops_%s" : "fused_%d_ops", gr->n, bxr_op_name(root->code));
  struct bxk_kernel *k = bxk_kernel_new(name);
  if (!k) return NULL;
  struct kb K = {.g = g, .gr = gr, .k = k, .keep = -1};
  K.val = malloc((size_t)g->n * sizeof *K.val);
  K.at = calloc((size_t)g->n, sizeof *K.at);
  K.scal = malloc((size_t)g->n * sizeof *K.scal);
  K.wbind = malloc((size_t)g->n * sizeof *K.wbind);
  K.pend = malloc(((size_t)gr->nwout + 1) * BXFU_RED_LANES * sizeof *K.pend);
  K.unit = calloc((size_t)g->n, sizeof *K.unit);
  K.wdone = calloc((size_t)g->n, sizeof *K.wdone);
  K.wnow = calloc((size_t)g->n, sizeof *K.wnow);
  bool ok = K.val && K.at && K.scal && K.wbind && K.pend && K.unit && K.wdone && K.wnow;
  if (ok) {
    /* members are marked -1 until evaluated; scalars numbered in member
     * order; stored members get their bindings after the root's */
    for (int i = 0; i < g->n; i++) K.val[i] = 0, K.wbind[i] = -1;
    for (int w = 0; w < gr->nwout; w++) K.wbind[gr->wout[w]] = gr->next + 1 + w;
    for (int m = 0, sc = 0; m < gr->n; m++) {
      const struct bxfu_rec *r = &g->rec[gr->member[m]];
      K.val[gr->member[m]] = (bxk_val)-1;
      K.scal[gr->member[m]] = sc;
      sc += n_scalars(r);
      /* a row's values: the reductions, and in a row kernel every member
       * of the rows' shape with the reduced dim collapsed */
      K.unit[gr->member[m]] = red[r->code] || (rows && !bxr_same_shape(r->out.rank, r->out.shape, is->rank, is->shape));
    }
    for (int e = 0; e < gr->next; e++) bxk_add_binding(k, ir_type(g->rec[gr->ext_rec[e]].in[gr->ext_in[e]]->dtype), 0, false);
    bxk_add_binding(k, ir_type(root->out.dtype), 0, true);
    for (int w = 0; w < gr->nwout; w++) bxk_add_binding(k, ir_type(g->rec[gr->wout[w]].out.dtype), 0, true);
    for (int m = 0; m < gr->n; m++) {
      const struct bxfu_rec *r = &g->rec[gr->member[m]];
      for (int q = 0; q < n_scalars(r); q++) bxk_add_scalar(k, scalar_type(r, q));
    }
    struct bxk_builder b0 = bxk_builder_at(k, NULL);
    bxk_val pos = bxk_topo(&b0, BXK_TOPO_ABSOLUTE_POS);
    struct bxk_block *then_blk, *else_blk;
    bxk_if(&b0, bxk_bin(&b0, BXK_OP_LT, pos, bxk_const_i(&b0, BXK_U32, numel)), &then_blk, &else_blk);
    struct bxk_builder b = bxk_builder_at(k, then_blk);
    if (rd) {
      ok = rows_ir(&b, &K, pos, rd);
    } else {
      K.val[gr->root] = 0;
      bxk_store(&b, gr->next, pos, member_val(&b, &K, gr->root, pos));
    }
  }
  free(K.val);
  free(K.at);
  free(K.scal);
  free(K.wbind);
  free(K.pend);
  free(K.unit);
  free(K.wdone);
  free(K.wnow);
  struct bxk_diags ds;
  memset(&ds, 0, sizeof ds);
  if (!ok || k->oom || !bxk_verify(k, &ds)) {
    bxk_kernel_free(k);  /* a group the IR cannot express runs unfused */
    return NULL;
  }
  return k;
}

/* The outside inputs, scalar parameters and stored intermediate of gr. */
static bool group_bindings(const struct bxfu_segment *g, struct bxfu_group *gr, const int *group_of, int id) {
  int cap = 0, nsc = 0;
  for (int m = 0; m < gr->n; m++) cap += g->rec[gr->member[m]].n_in, nsc += n_scalars(&g->rec[gr->member[m]]);
  gr->ext_rec = malloc(((size_t)cap + 1) * sizeof *gr->ext_rec);
  gr->ext_in = malloc(((size_t)cap + 1) * sizeof *gr->ext_in);
  gr->scal_rec = malloc(((size_t)nsc + 1) * sizeof *gr->scal_rec);
  gr->wout = malloc(((size_t)gr->n + 1) * sizeof *gr->wout);
  int *inside = calloc((size_t)g->n, sizeof *inside);   /* reads of each record by members */
  if (!gr->ext_rec || !gr->ext_in || !gr->scal_rec || !gr->wout || !inside) return free(inside), false;
  for (int m = 0; m < gr->n; m++)
    for (int q = 0; q < g->rec[gr->member[m]].n_in; q++)
      if (g->src[gr->member[m]][q] >= 0) inside[g->src[gr->member[m]][q]]++;
  int ne = 0;
  for (int m = 0; m < gr->n; m++) {
    int i = gr->member[m];
    const struct bxfu_rec *r = &g->rec[i];
    for (int q = 0; q < n_scalars(r); q++) gr->scal_rec[gr->nscal++] = i;
    /* read after the group or held: stored as well (bxfu_can_fuse allows
     * it only in a reduction's chain) */
    if (i != gr->root && (g->uses[i] > inside[i] || g->held[i])) gr->wout[gr->nwout++] = i;
    for (int q = 0; q < r->n_in; q++) {
      int src = g->src[i][q];
      if (src >= 0 && group_of[src] == id) continue;  /* computed inside */
      const struct bxfu_val *v = bxfu_val_of(r->in[q]);
      bool seen = false;
      for (int e = 0; e < ne && !seen; e++) seen = bxfu_val_of(g->rec[gr->ext_rec[e]].in[gr->ext_in[e]]) == v;
      if (seen) continue;
      gr->ext_rec[ne] = i;
      gr->ext_in[ne++] = q;
    }
  }
  gr->next = ne;
  free(inside);
  return true;
}

/* Whether the groups of roots a and b, joined by consumer c (the last
 * record of either), make one row kernel: every reduction in it reduces
 * one dim d of one shape S and keeps the dim (the rows); every member is
 * elementwise (no views) of shape S or of S with d collapsed (a row's
 * values, computed once per row); and no record outside reads a member
 * before c, where the group runs.  Legality of a group as a whole, next
 * to the pairwise rule (bxfu_can_fuse). */
static bool rows_fit(const struct bxfu_segment *g, int *parent, int a, int b, int c) {
  const bext_spec *S = NULL;
  int d = -1;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i <= c; i++) {
      int f = find(parent, i);
      if (f != a && f != b && i != c) continue;
      const struct bxfu_rec *r = &g->rec[i];
      if (pass == 0) {   /* the rows: one (S, d) for every reduction */
        if (r->kind != BXFU_CORE || !red[r->code]) continue;
        if (r->at.all || r->out.rank != r->in[0]->rank) return false;
        if (!S) S = &r->in[0]->spec, d = r->at.dim;
        else if (d != r->at.dim || !bxr_same_shape(S->rank, S->shape, r->in[0]->rank, r->in[0]->shape)) return false;
        continue;
      }
      if (!S || S->shape[d] == 1 || is_view(r)) return false;
      if (!bxr_same_shape(r->out.rank, r->out.shape, S->rank, S->shape) && collapsed_dim(&r->out, S) != d) return false;
    }
  if (!S) return false;
  /* the row kernel walks the row for each reduction and once more to
   * store: all of it within the device's loop budget */
  int64_t trips = S->shape[d];
  const struct bxfu_rec *any = NULL;
  for (int i = 0; i <= c; i++) {
    int f = find(parent, i);
    if ((f != a && f != b && i != c) || g->rec[i].kind != BXFU_CORE || !red[g->rec[i].code]) continue;
    trips += red_trips(&g->rec[i], S->shape[d]);
    any = &g->rec[i];
  }
  if (!trips_fit(any, trips)) return false;
  for (int j = 0; j < c; j++) {   /* a record outside the group reading a member runs before it */
    int fj = find(parent, j);
    if (fj == a || fj == b) continue;
    for (int q = 0; q < g->nsrc[j]; q++) {
      int p = g->src[j][q];
      if (p >= 0 && (find(parent, p) == a || find(parent, p) == b)) return false;
    }
  }
  return true;
}

void bxfu_groups_build(struct bxfu_groups *out, const struct bxfu_segment *g, struct bext_device *dev,
                       const int *claimed) {
  memset(out, 0, sizeof *out);
  out->n_rec = g->n;
  int *parent = malloc((size_t)g->n * sizeof *parent), *size = calloc((size_t)g->n, sizeof *size);
  bool *work = calloc((size_t)g->n, sizeof *work);
  out->group_of = malloc((size_t)g->n * sizeof *out->group_of);
  if (!parent || !size || !work || !out->group_of) goto fail;
  /* A consumer joins the group of every producer it may fuse with: since
   * a fusable producer has one use, the groups are trees rooted at their
   * last record. */
  for (int i = 0; i < g->n; i++) parent[i] = i;
  for (int c = 0; c < g->n; c++)
    for (int q = 0; q < g->rec[c].n_in; q++) {
      int p = g->src[c][q];
      if (claimed && (claimed[c] >= 0 || (p >= 0 && claimed[p] >= 0))) continue;   /* a custom kernel's */
      if (p < 0 || !bxfu_can_fuse(g, p, c)) continue;
      int a = find(parent, p), b = find(parent, c);
      if (a == b) continue;
      bool rows = work[a] || work[b] || row_edge(g, p, c);   /* work[]: "a row group", until sizes */
      if (rows && !rows_fit(g, parent, a, b, c)) continue;
      parent[a] = b;
      work[b] = rows;
    }
  for (int i = 0; i < g->n; i++) work[i] = false;
  /* size[root]: its members; a group of views only computes nothing (the
   * inner device makes views without copying), so it does not form */
  for (int i = 0; i < g->n; i++) size[find(parent, i)]++;
  for (int i = 0; i < g->n; i++)
    if (!is_view(&g->rec[i])) work[find(parent, i)] = true;
  for (int i = 0; i < g->n; i++)
    if (!work[i]) size[i] = 1;
  int ng = 0;
  for (int i = 0; i < g->n; i++) out->group_of[i] = -1;
  for (int i = 0; i < g->n; i++)
    if (size[i] > 1) out->group_of[i] = ng++;   /* roots of groups: the last record is the root */
  if (ng && !(out->g = calloc((size_t)ng, sizeof *out->g))) goto fail;
  out->ngroups = ng;
  for (int i = 0; i < g->n; i++) {
    int rt = find(parent, i);
    if (size[rt] > 1) out->group_of[i] = out->group_of[rt];
  }
  for (int i = 0; i < g->n; i++) {
    int id = out->group_of[i];
    if (id < 0) continue;
    struct bxfu_group *gr = &out->g[id];
    if (!gr->member && !(gr->member = malloc((size_t)size[find(parent, i)] * sizeof *gr->member))) goto fail;
    gr->member[gr->n++] = i;
    gr->root = i;   /* ascending: the last one stays */
  }
  bool jit = dev->inner->vt->kernel_prepare && dev->inner->vt->kernel_launch;
  for (int id = 0; id < ng; id++) {
    struct bxfu_group *gr = &out->g[id];
    if (!group_bindings(g, gr, out->group_of, id)) goto fail;
    gr->ir = group_ir(g, gr);
    if (gr->ir && jit) {
      size_t len = 0;
      uint8_t *ser = bxk_serialize(gr->ir, &len);
      uint64_t key = ser ? bxk_hash64(ser, len) : 0; /* the IR's identity, as every cache keys it */
      free(ser);
      gr->k = dev->inner->vt->kernel_prepare(dev->inner, gr->ir, key);
      if (gr->k) atomic_fetch_add_explicit(&bxfu_n_kernels_compiled, 1, memory_order_relaxed);
      else bext_clear_error();   /* a kernel the device refuses: the group runs unfused */
    }
  }
  free(parent);
  free(size);
  free(work);
  return;
fail:
  free(parent);
  free(size);
  free(work);
  bxfu_groups_free(out);
  memset(out, 0, sizeof *out);
}

void bxfu_groups_free(struct bxfu_groups *gs) {
  for (int i = 0; i < gs->ngroups; i++) {
    struct bxfu_group *gr = &gs->g[i];
    free(gr->member);
    free(gr->ext_rec);
    free(gr->ext_in);
    free(gr->scal_rec);
    free(gr->wout);
    if (gr->ir) bxk_kernel_free(gr->ir);
    /* gr->k belongs to the inner device (freed when it closes) */
  }
  free(gs->g);
  free(gs->group_of);
  gs->g = NULL;
  gs->group_of = NULL;
  gs->ngroups = 0;
}

/* ------------------------------------------------------------ running */

/* Runs group gr as its kernel; false (nothing consumed) when it cannot. */
static bool run_fused(const struct bxfu_segment *g, const struct bxfu_group *gr, struct bxfu_stream *s) {
  struct bext_device *inner = s->dev->inner;
  struct bxfu_rec *rr = &g->rec[gr->root];
  bext_tensor *bind[BEXT_EXT_MAX_SLOTS];
  union bxl_scalar sc[BEXT_EXT_MAX_SLOTS];
  if (gr->next + 1 + gr->nwout > BEXT_EXT_MAX_SLOTS || gr->nscal > BEXT_EXT_MAX_SLOTS) return false;
  const char *err = NULL;
  int nb = 0;
  for (int e = 0; e < gr->next; e++, nb++) {
    const struct bxfu_val *v = bxfu_val_of(g->rec[gr->ext_rec[e]].in[gr->ext_in[e]]);
    if (v->err) {
      err = v->err;
      break;
    }
    /* the kernel indexes elements row-major: views are materialized */
    if (!(bind[e] = bext_contiguous(bext_retain(v->inner)))) break;
  }
  bool ok = !err && nb == gr->next;
  if (ok) ok = (bind[nb] = bxr_tensor_new(inner, rr->out.dtype, rr->out.rank, rr->out.shape)) != NULL;
  if (ok) nb++;
  for (int w = 0; ok && w < gr->nwout; w++) {
    const struct bxfu_rec *wr = &g->rec[gr->wout[w]];
    if ((ok = (bind[nb] = bxr_tensor_new(inner, wr->out.dtype, wr->out.rank, wr->out.shape)) != NULL)) nb++;
  }
  /* scalar parameters in member order, each of the type the kernel
   * declared (scalar_type), from the records of this run: a replayed plan
   * computes with this call's values */
  for (int q = 0, prev = -1, j = 0; ok && q < gr->nscal; q++) {
    const struct bxfu_rec *r = &g->rec[gr->scal_rec[q]];
    j = gr->scal_rec[q] == prev ? j + 1 : 0;
    prev = gr->scal_rec[q];
    memset(&sc[q], 0, sizeof sc[q]);
    bext_kernel_scalar ks;
    if (r->kind == BXFU_EXT) {   /* a learned #[cube] kernel's: the call's own argument */
      if ((ok = bxfu_cube_scalar(r, j, &ks))) memcpy(&sc[q], &ks, sizeof ks);
    } else if (gr->ir->scalar[q] == BXK_F32) sc[q].f32 = (float)r->sc[j].f;
    else if (gr->ir->scalar[q] == BXK_I64) sc[q].i64 = r->sc[j].i;
    else sc[q].f64 = r->sc[j].f;
  }
  if (ok) {
    uint32_t dim[3] = {256, 1, 1}, count[3] = {(gr->numel + 255) / 256, 1, 1};
    ok = inner->vt->kernel_launch(inner, gr->k, count, dim, bind, sc);
  }
  if (ok) {
    for (int w = gr->nwout - 1; w >= 0; w--) g->rec[gr->wout[w]].res->inner = bind[--nb];
    rr->res->inner = bind[--nb];
    atomic_fetch_add_explicit(&bxfu_n_kernels_launched, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&bxfu_n_ops_fused, (uint64_t)gr->n, memory_order_relaxed);
    for (int m = 0; m < gr->n; m++)   /* a reduction inside (at the root, or a row kernel's) */
      if (red[g->rec[gr->member[m]].code]) {
        atomic_fetch_add_explicit(&bxfu_n_reductions_fused, 1, memory_order_relaxed);
        break;
      }
  } else {
    char msg[900];
    snprintf(msg, sizeof msg, "%s", err ? err : bext_last_error());
    if (!err) snprintf(msg, sizeof msg, "deferred fused kernel ending in `%s` failed: %s",
                       rr->api ? rr->api : bxr_op_name(rr->code), bext_last_error());
    bxfu_fail(s, rr, msg);
    for (int w = 0; w < gr->nwout; w++) bxfu_fail(s, &g->rec[gr->wout[w]], msg);
  }
  for (int i = 0; i < nb; i++) bext_release(bind[i]);
  for (int m = 0; m < gr->n; m++) {
    atomic_fetch_add_explicit(&bxfu_n_run, 1, memory_order_relaxed);
    bxfu_rec_done(&g->rec[gr->member[m]]);
  }
  return true;
}

void bxfu_groups_run(const struct bxfu_groups *gs, const struct bxfu_segment *g, struct bxfu_stream *s,
                     const struct bxfu_custom *cu) {
  for (int i = 0; i < g->n; i++) {
    if (bxfu_custom_run_at(cu, g, s, i)) continue;
    int id = gs->group_of ? gs->group_of[i] : -1;
    if (id < 0) {
      bxfu_run_rec(s, &g->rec[i]);
      continue;
    }
    const struct bxfu_group *gr = &gs->g[id];
    if (gr->root != i) continue;   /* members run with their root */
    if (gr->k && run_fused(g, gr, s)) continue;
    for (int m = 0; m < gr->n; m++) bxfu_run_rec(s, &g->rec[gr->member[m]]);
  }
}

/* ---------------------------------------------------------------- dumps */

void bxfu_plan_dump(const struct bxfu_groups *gs, const struct bxfu_segment *g, struct bext_device *dev) {
  const char *dir = getenv("BEXT_FUSION_DUMP");
  if (!dir || !*dir) return;
  static _Atomic unsigned seq;
  unsigned id = atomic_fetch_add(&seq, 1);
  char path[600];
  mkdir(dir, 0777);   /* EEXIST is fine; a failure shows at fopen */
  snprintf(path, sizeof path, "%s/plan_%04u.dot", dir, id);
  FILE *f = fopen(path, "w");
  if (!f) return;
  fprintf(f, "digraph plan_%u {\n  label=\"%s: %d ops, %d fused groups\";\n  node [shape=box];\n", id, dev->name,
          g->n, gs->ngroups);
  for (int gi = 0; gi < gs->ngroups; gi++)
    fprintf(f, "  subgraph cluster_%d { label=\"fused kernel %d%s\"; style=dashed; }\n", gi, gi,
            gs->g[gi].k ? "" : " (runs unfused: no kernel on this device)");
  for (int i = 0; i < g->n; i++) {
    const struct bxfu_rec *r = &g->rec[i];
    char sh[160];
    bxr_describe_shape(r->out.rank, r->out.shape, sh, sizeof sh);
    const char *name = r->kind == BXFU_EXT ? r->m->what : bxr_op_name(r->code);
    int gid = gs->group_of ? gs->group_of[i] : -1;
    if (gid >= 0) fprintf(f, "  subgraph cluster_%d { r%d; }\n", gid, i);
    fprintf(f, "  r%d [label=\"%d: %s\\n%s %s%s\"];\n", i, i, name, sh, bext_dtype_name(r->out.dtype),
            g->held[i] ? "\\nheld" : "");
    for (int q = 0; q < r->n_in; q++)
      if (g->src[i][q] >= 0) fprintf(f, "  r%d -> r%d;\n", g->src[i][q], i);
  }
  fputs("}\n", f);
  fclose(f);
  for (int gi = 0; gi < gs->ngroups; gi++) {
    if (!gs->g[gi].ir) continue;
    char *txt = bxk_print_alloc(gs->g[gi].ir);
    snprintf(path, sizeof path, "%s/plan_%04u_kernel_%d.kir", dir, id, gi);
    if (txt && (f = fopen(path, "w"))) {
      fputs(txt, f);
      fclose(f);
    }
    free(txt);
  }
}
