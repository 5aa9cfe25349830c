/* ops.h — THE op table: one X-macro row per core op, shared by the
 * runtime (dispatch, the backends' exec tables) and bextc (tensor_ops.c
 * derives the body surfaces from it), plus what a row's inference rule
 * reads and writes as plain data (bext_spec, bext_scalar, bext_attrs) and
 * the public spec-level inference call, bext_infer.  It lives with the
 * public headers because both sides include it; the rows and the BXR_
 * names are the runtime's numbering, not an ABI yet (ORDER OP), while
 * bext_infer and its types are the stable entry for generated code, the
 * REPL and check modes.  Everything indexed by opcode (backend exec
 * tables, the op info table, autodiff rules, fusion, remote codecs) is
 * generated from or checked against this list with
 * _Static_assert(... == BXR_OP_COUNT).  ORDER OP: append new rows at the
 * end of their group.
 *
 * Row: X(ENUM, name, nin, k0, k1, k2, nscalar, attrs, infer)
 *   nin      tensor inputs (-1: variadic list, in[0..n_in))
 *   k0..k2   allowed dtype kinds of input 0..2 (BXR_K* bitmask, 0 = none)
 *   nscalar  scalar parameters used (sc[0..nscalar))
 *   attrs    attributes used (BXR_A* bitmask, see bext_attrs below)
 *   infer    the shape/dtype inference rule (runtime/src/infer.c), run on
 *            specs alone by dispatch before any backend sees the op and by
 *            bext_infer; it also validates every argument.
 *
 * Adding an op: a row here (BXR_OP_COUNT's _Static_assert will point at
 * every table to update), its inference rule (infer.c, declared through the
 * row), a public function (bext.h + api.c), kernels in backends/ndarray and
 * backends/flex, its autodiff row (runtime/src/autodiff_rules.c: a rule,
 * no gradient, or not yet; test_autodiff fails on a missing row), and
 * conformance cases (tests/conformance: make_cases and the oracle) — the
 * matrix fails until all exist.
 *
 * Per-op use of scalars and attributes (everything else is unused/zero):
 *   EMPTY ZEROS ONES       at.shape/at.rank, at.dtype
 *   FULL                   + sc[0].f value
 *   ARANGE                 sc[0].f start, sc[1].f end, sc[2].f step, at.dtype
 *   RANDOM_UNIFORM         at.shape, at.dtype, at.seed, sc[0].f lo, sc[1].f hi
 *   RANDOM_NORMAL          at.shape, at.dtype, at.seed, sc[0].f mean, sc[1].f std
 *   RESHAPE EXPAND         at.shape/at.rank (inference resolves -1 into out)
 *   SWAP_DIMS              at.dims[0], at.dims[1] (normalized >= 0)
 *   PERMUTE                at.dims[0..ndims) (normalized)
 *   FLIP                   at.dims[0..ndims) (normalized, distinct)
 *   SLICE SLICE_ASSIGN     at.start/at.end[0..nranges) (dims past nranges:
 *                          whole); SLICE_ASSIGN: in[1] is the value
 *   CAT                    at.dim; in[0..n_in)
 *   NARROW                 at.dim, sc[0].i start, sc[1].i length
 *   REPEAT_DIM             at.dim, sc[0].i times
 *   GATHER SELECT          at.dim; in[1] indices (i32/i64)
 *   SCATTER_ADD SELECT_ASSIGN at.dim; in[1] indices, in[2] values
 *   MASK_WHERE             in[1] mask (bool), in[2] value
 *   MASK_FILL              in[1] mask, sc[0].f value
 *   *_SCALAR, CMP scalars  sc[0].f (ints: bxr_f64_to_i64_sat(sc[0].f))
 *   CLAMP                  sc[0].f lo, sc[1].f hi
 *   POWI                   sc[0].i exponent
 *   SUM..ALL (reductions)  at.all (whole tensor -> rank 0) or at.dim, at.keepdim
 *   CUMSUM                 at.dim
 *   CAST                   at.dtype
 */
#ifndef BEXT_OPS_H
#define BEXT_OPS_H

#include <assert.h>

#include "bext/bext.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dtype kind masks */
#define BXR_KF 1u              /* float */
#define BXR_KI 2u              /* int (i32 i64 u8) */
#define BXR_KB 4u              /* bool */
#define BXR_KN (BXR_KF | BXR_KI)
#define BXR_KA (BXR_KF | BXR_KI | BXR_KB)

/* attribute masks (which fields of bext_attrs an op reads) */
#define BXR_A_SHAPE 0x01u
#define BXR_A_DTYPE 0x02u
#define BXR_A_SEED 0x04u
#define BXR_A_DIM 0x08u
#define BXR_A_DIMS 0x10u
#define BXR_A_KEEPDIM 0x20u
#define BXR_A_RANGES 0x40u

#define BXR_A_CREATE (BXR_A_SHAPE | BXR_A_DTYPE)
#define BXR_A_RED (BXR_A_DIM | BXR_A_KEEPDIM)

#define BXR_OP_TABLE(X)                                                                  \
  /* creation */                                                                         \
  X(EMPTY, empty, 0, 0, 0, 0, 0, BXR_A_CREATE, bxr_infer_create)                          \
  X(ZEROS, zeros, 0, 0, 0, 0, 0, BXR_A_CREATE, bxr_infer_create)                          \
  X(ONES, ones, 0, 0, 0, 0, 0, BXR_A_CREATE, bxr_infer_create)                            \
  X(FULL, full, 0, 0, 0, 0, 1, BXR_A_CREATE, bxr_infer_create)                            \
  X(ARANGE, arange, 0, 0, 0, 0, 3, BXR_A_DTYPE, bxr_infer_arange)                         \
  X(RANDOM_UNIFORM, random_uniform, 0, 0, 0, 0, 2, BXR_A_CREATE | BXR_A_SEED, bxr_infer_random) \
  X(RANDOM_NORMAL, random_normal, 0, 0, 0, 0, 2, BXR_A_CREATE | BXR_A_SEED, bxr_infer_random)   \
  /* layout */                                                                           \
  X(RESHAPE, reshape, 1, BXR_KA, 0, 0, 0, BXR_A_SHAPE, bxr_infer_reshape)                 \
  X(SWAP_DIMS, swap_dims, 1, BXR_KA, 0, 0, 0, BXR_A_DIMS, bxr_infer_swap_dims)            \
  X(PERMUTE, permute, 1, BXR_KA, 0, 0, 0, BXR_A_DIMS, bxr_infer_permute)                  \
  X(EXPAND, expand, 1, BXR_KA, 0, 0, 0, BXR_A_SHAPE, bxr_infer_expand)                    \
  X(SLICE, slice, 1, BXR_KA, 0, 0, 0, BXR_A_RANGES, bxr_infer_slice)                      \
  X(SLICE_ASSIGN, slice_assign, 2, BXR_KA, BXR_KA, 0, 0, BXR_A_RANGES, bxr_infer_slice_assign) \
  X(CAT, cat, -1, BXR_KA, 0, 0, 0, BXR_A_DIM, bxr_infer_cat)                              \
  X(FLIP, flip, 1, BXR_KA, 0, 0, 0, BXR_A_DIMS, bxr_infer_flip)                           \
  X(NARROW, narrow, 1, BXR_KA, 0, 0, 2, BXR_A_DIM, bxr_infer_narrow)                      \
  X(REPEAT_DIM, repeat_dim, 1, BXR_KA, 0, 0, 1, BXR_A_DIM, bxr_infer_repeat_dim)          \
  /* indexing */                                                                         \
  X(GATHER, gather, 2, BXR_KA, BXR_KI, 0, 0, BXR_A_DIM, bxr_infer_gather)                 \
  X(SCATTER_ADD, scatter_add, 3, BXR_KN, BXR_KI, BXR_KN, 0, BXR_A_DIM, bxr_infer_scatter_add) \
  X(SELECT, select, 2, BXR_KA, BXR_KI, 0, 0, BXR_A_DIM, bxr_infer_select)                 \
  X(SELECT_ASSIGN, select_assign, 3, BXR_KN, BXR_KI, BXR_KN, 0, BXR_A_DIM, bxr_infer_select_assign) \
  X(MASK_WHERE, mask_where, 3, BXR_KA, BXR_KB, BXR_KA, 0, 0, bxr_infer_mask_where)        \
  X(MASK_FILL, mask_fill, 2, BXR_KA, BXR_KB, 0, 1, 0, bxr_infer_mask_fill)                \
  /* binary arithmetic (same dtype, broadcasting) */                                     \
  X(ADD, add, 2, BXR_KN, BXR_KN, 0, 0, 0, bxr_infer_binary)                               \
  X(SUB, sub, 2, BXR_KN, BXR_KN, 0, 0, 0, bxr_infer_binary)                               \
  X(MUL, mul, 2, BXR_KN, BXR_KN, 0, 0, 0, bxr_infer_binary)                               \
  X(DIV, div, 2, BXR_KN, BXR_KN, 0, 0, 0, bxr_infer_binary)                               \
  X(REM, rem, 2, BXR_KN, BXR_KN, 0, 0, 0, bxr_infer_binary)                               \
  X(POW, pow, 2, BXR_KN, BXR_KN, 0, 0, 0, bxr_infer_binary)                               \
  X(MAX, max, 2, BXR_KN, BXR_KN, 0, 0, 0, bxr_infer_binary)                               \
  X(MIN, min, 2, BXR_KN, BXR_KN, 0, 0, 0, bxr_infer_binary)                               \
  /* scalar forms */                                                                     \
  X(ADD_SCALAR, add_scalar, 1, BXR_KN, 0, 0, 1, 0, bxr_infer_unary)                       \
  X(SUB_SCALAR, sub_scalar, 1, BXR_KN, 0, 0, 1, 0, bxr_infer_unary)                       \
  X(MUL_SCALAR, mul_scalar, 1, BXR_KN, 0, 0, 1, 0, bxr_infer_unary)                       \
  X(DIV_SCALAR, div_scalar, 1, BXR_KN, 0, 0, 1, 0, bxr_infer_unary)                       \
  X(REM_SCALAR, rem_scalar, 1, BXR_KN, 0, 0, 1, 0, bxr_infer_unary)                       \
  X(POW_SCALAR, pow_scalar, 1, BXR_KN, 0, 0, 1, 0, bxr_infer_unary)                       \
  X(MAX_SCALAR, max_scalar, 1, BXR_KN, 0, 0, 1, 0, bxr_infer_unary)                       \
  X(MIN_SCALAR, min_scalar, 1, BXR_KN, 0, 0, 1, 0, bxr_infer_unary)                       \
  /* comparisons -> bool (eq/ne also on bool) */                                         \
  X(EQ, eq, 2, BXR_KA, BXR_KA, 0, 0, 0, bxr_infer_compare)                                \
  X(NE, ne, 2, BXR_KA, BXR_KA, 0, 0, 0, bxr_infer_compare)                                \
  X(GT, gt, 2, BXR_KN, BXR_KN, 0, 0, 0, bxr_infer_compare)                                \
  X(GE, ge, 2, BXR_KN, BXR_KN, 0, 0, 0, bxr_infer_compare)                                \
  X(LT, lt, 2, BXR_KN, BXR_KN, 0, 0, 0, bxr_infer_compare)                                \
  X(LE, le, 2, BXR_KN, BXR_KN, 0, 0, 0, bxr_infer_compare)                                \
  X(EQ_SCALAR, eq_scalar, 1, BXR_KN, 0, 0, 1, 0, bxr_infer_compare)                       \
  X(NE_SCALAR, ne_scalar, 1, BXR_KN, 0, 0, 1, 0, bxr_infer_compare)                       \
  X(GT_SCALAR, gt_scalar, 1, BXR_KN, 0, 0, 1, 0, bxr_infer_compare)                       \
  X(GE_SCALAR, ge_scalar, 1, BXR_KN, 0, 0, 1, 0, bxr_infer_compare)                       \
  X(LT_SCALAR, lt_scalar, 1, BXR_KN, 0, 0, 1, 0, bxr_infer_compare)                       \
  X(LE_SCALAR, le_scalar, 1, BXR_KN, 0, 0, 1, 0, bxr_infer_compare)                       \
  /* bool logic */                                                                       \
  X(AND, and, 2, BXR_KB, BXR_KB, 0, 0, 0, bxr_infer_binary)                               \
  X(OR, or, 2, BXR_KB, BXR_KB, 0, 0, 0, bxr_infer_binary)                                 \
  X(XOR, xor, 2, BXR_KB, BXR_KB, 0, 0, 0, bxr_infer_binary)                               \
  X(NOT, not, 1, BXR_KB, 0, 0, 0, 0, bxr_infer_unary)                                     \
  /* unary */                                                                            \
  X(NEG, neg, 1, BXR_KN, 0, 0, 0, 0, bxr_infer_unary)                                     \
  X(ABS, abs, 1, BXR_KN, 0, 0, 0, 0, bxr_infer_unary)                                     \
  X(EXP, exp, 1, BXR_KF, 0, 0, 0, 0, bxr_infer_unary)                                     \
  X(LOG, log, 1, BXR_KF, 0, 0, 0, 0, bxr_infer_unary)                                     \
  X(LOG1P, log1p, 1, BXR_KF, 0, 0, 0, 0, bxr_infer_unary)                                 \
  X(SQRT, sqrt, 1, BXR_KF, 0, 0, 0, 0, bxr_infer_unary)                                   \
  X(RSQRT, rsqrt, 1, BXR_KF, 0, 0, 0, 0, bxr_infer_unary)                                 \
  X(SIN, sin, 1, BXR_KF, 0, 0, 0, 0, bxr_infer_unary)                                     \
  X(COS, cos, 1, BXR_KF, 0, 0, 0, 0, bxr_infer_unary)                                     \
  X(TANH, tanh, 1, BXR_KF, 0, 0, 0, 0, bxr_infer_unary)                                   \
  X(ERF, erf, 1, BXR_KF, 0, 0, 0, 0, bxr_infer_unary)                                     \
  X(SIGMOID, sigmoid, 1, BXR_KF, 0, 0, 0, 0, bxr_infer_unary)                             \
  X(RELU, relu, 1, BXR_KN, 0, 0, 0, 0, bxr_infer_unary)                                   \
  X(RECIP, recip, 1, BXR_KF, 0, 0, 0, 0, bxr_infer_unary)                                 \
  X(FLOOR, floor, 1, BXR_KF, 0, 0, 0, 0, bxr_infer_unary)                                 \
  X(CEIL, ceil, 1, BXR_KF, 0, 0, 0, 0, bxr_infer_unary)                                   \
  X(ROUND, round, 1, BXR_KF, 0, 0, 0, 0, bxr_infer_unary)                                 \
  X(SIGN, sign, 1, BXR_KN, 0, 0, 0, 0, bxr_infer_unary)                                   \
  X(CLAMP, clamp, 1, BXR_KN, 0, 0, 2, 0, bxr_infer_unary)                                 \
  X(POWI, powi, 1, BXR_KF, 0, 0, 1, 0, bxr_infer_unary)                                   \
  /* reductions (whole: at.all; along at.dim with at.keepdim) */                         \
  X(SUM, sum, 1, BXR_KN, 0, 0, 0, BXR_A_RED, bxr_infer_reduce)                            \
  X(MEAN, mean, 1, BXR_KN, 0, 0, 0, BXR_A_RED, bxr_infer_reduce)                          \
  X(PROD, prod, 1, BXR_KN, 0, 0, 0, BXR_A_RED, bxr_infer_reduce)                          \
  X(MAX_REDUCE, max_reduce, 1, BXR_KN, 0, 0, 0, BXR_A_RED, bxr_infer_reduce)              \
  X(MIN_REDUCE, min_reduce, 1, BXR_KN, 0, 0, 0, BXR_A_RED, bxr_infer_reduce)              \
  X(ARGMAX, argmax, 1, BXR_KN, 0, 0, 0, BXR_A_RED, bxr_infer_reduce)                      \
  X(ARGMIN, argmin, 1, BXR_KN, 0, 0, 0, BXR_A_RED, bxr_infer_reduce)                      \
  X(ANY, any, 1, BXR_KB, 0, 0, 0, BXR_A_RED, bxr_infer_reduce)                            \
  X(ALL, all, 1, BXR_KB, 0, 0, 0, BXR_A_RED, bxr_infer_reduce)                            \
  X(CUMSUM, cumsum, 1, BXR_KN, 0, 0, 0, BXR_A_DIM, bxr_infer_cumsum)                      \
  /* matmul, cast */                                                                     \
  X(MATMUL, matmul, 2, BXR_KN, BXR_KN, 0, 0, 0, bxr_infer_matmul)                         \
  X(CAST, cast, 1, BXR_KA, 0, 0, 0, BXR_A_DTYPE, bxr_infer_cast)

enum bxr_opcode {
#define BXR_X_(E, n, nin, k0, k1, k2, ns, at, inf) BXR_OP_##E,
  BXR_OP_TABLE(BXR_X_)
#undef BXR_X_
  BXR_OP_COUNT
};

/* Guard against silent table edits: update deliberately with the tables
 * indexed by op (op info, backend exec arrays, conformance cases).
 * static_assert (<assert.h>): the spelling C11 and C++ share, so C++ code
 * (the LibTorch backend's ATen shim) includes this header too. */
static_assert(BXR_OP_COUNT == 87, "op table changed: update every table indexed by op");

/* Scalar parameter: which member an op reads is fixed by its row. */
typedef union bext_scalar {
  double f;
  int64_t i;
} bext_scalar;

/* An op's attributes: which fields a row reads is its attrs column. */
typedef struct bext_attrs {
  int rank;                         /* BXR_A_SHAPE: target shape */
  int64_t shape[BEXT_MAX_RANK];
  int ndims;                        /* BXR_A_DIMS: axes (permute, flip, swap) */
  int dims[BEXT_MAX_RANK];
  int dim;                          /* BXR_A_DIM: normalized to 0..rank-1 by inference */
  bool keepdim;                     /* BXR_A_KEEPDIM */
  bool all;                         /* reductions: whole tensor (dim unused) */
  int nranges;                      /* BXR_A_RANGES: slice ranges of dims 0..nranges-1 */
  int64_t start[BEXT_MAX_RANK];
  int64_t end[BEXT_MAX_RANK];
  bext_dtype dtype;                 /* BXR_A_DTYPE */
  uint64_t seed;                    /* BXR_A_SEED */
} bext_attrs;

/* Everything of an op call besides its tensors, for bext_infer. */
typedef struct bext_op_args {
  const char *api;                  /* names the call in messages; NULL: "bext_<op>" */
  bext_scalar sc[3];
  bext_attrs at;
} bext_op_args;

/* Spec-level inference: what op `op` (a row name: "add", "sum", "cat")
 * would return for inputs of these specs, without tensors, devices or a
 * backend — the rule dispatch runs before every op, so the answer and the
 * error text are the ones the real call gives.  `in` holds n_in specs (the
 * row's input count; CAT: one or more); args (NULL: all zero) carries the
 * scalars and attributes the row reads, and is normalized in place as
 * dispatch does (negative dims resolved, reshape's -1 filled).  Fills
 * *out and returns true, or returns false with the error set ("<api>:
 * <problem> (operands: [2,3] f32, [4] f32)"), also for an unknown op name,
 * a wrong input count or a malformed spec.  Thread-safe; allocates
 * nothing for up to 8 inputs. */
bool bext_infer(const char *op, const bext_spec *in, int n_in, bext_op_args *args, bext_spec *out);

#ifdef __cplusplus
}
#endif

#endif /* BEXT_OPS_H */
