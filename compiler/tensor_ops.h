/* tensor_ops.h — the compiler's one list of tensor operations (bxc_top_).
 *
 * Default bodies and backward formulas (language.md §3, §6) call core ops.
 * The checker (check_expr.c) and the C generator (emit_body.c) both take
 * what an op is called, how many arguments of which kind it takes and
 * what it returns from this table, and the table itself is derived from
 * the runtime's BXR_OP_TABLE X-macro (runtime/include/bext/ops.h), so an op the
 * runtime gains is usable in .bext the moment it has a row (architecture.md,
 * "Runtime").  The compiler includes the header only: it never links the
 * runtime.
 *
 * Each row becomes zero, one or two "surfaces": the names a body writes.
 * An op is usable as a method (`x.erf()`, `x.sum_dim(1)`) and as a
 * function whose first argument is the receiver (`erf(x)`,
 * `sum_dim(x, 1)`); arithmetic and comparison operators and `&` `|` `^`
 * on bool tensors map to the binary rows (with their `_scalar` rows when
 * one operand is a number).  Rows whose arguments need shapes, dim lists,
 * ranges, tensor lists or a dtype have no surface yet (see
 * bxc_top_excluded and language.md §3). */
#ifndef BXC_TENSOR_OPS_H
#define BXC_TENSOR_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "ast.h"

/* Tensor kind masks: the runtime's BXR_KF / BXR_KI / BXR_KB values. */
#define BXC_TOP_KF 1u
#define BXC_TOP_KI 2u
#define BXC_TOP_KB 4u

/* What one argument after the receiver is. */
typedef enum bxc_top_arg {
    BXC_TOP_ARG_OPERAND,   /* a tensor of the receiver's kind, or a number
                              when the op has a `_scalar` row */
    BXC_TOP_ARG_TENSOR,    /* a tensor of the receiver's kind */
    BXC_TOP_ARG_INDICES,   /* an IntTensor */
    BXC_TOP_ARG_MASK,      /* a BoolTensor */
    BXC_TOP_ARG_DIM,       /* an integer dimension (negative: from the end) -> C int */
    BXC_TOP_ARG_INT,       /* an integer -> int64_t */
    BXC_TOP_ARG_FLOAT,     /* a number -> double */
} bxc_top_arg;

/* The result's tensor kind. */
typedef enum bxc_top_out {
    BXC_TOP_OUT_SAME,      /* the receiver's kind */
    BXC_TOP_OUT_BOOL,      /* comparisons */
    BXC_TOP_OUT_INT,       /* argmax / argmin */
} bxc_top_out;

#define BXC_TOP_MAX_ARGS 3

typedef struct bxc_top {
    const char *name;        /* the surface name: `x.name(..)`, `name(x, ..)` */
    const char *cfn;         /* the bext.h (or gen.h) function called */
    const char *scalar_cfn;  /* OPERAND given a number: this `_scalar` function */
    const char *fixed_args;  /* C arguments after the receiver that the surface
                                fixes (`transpose`: "-2, -1"), or NULL */
    const char *cmath;       /* function form on a float scalar: this <math.h>
                                function (`erf(0.5)`), or NULL */
    int row;                 /* the BXR_OP_TABLE row (opcode) */
    unsigned kinds;          /* allowed receiver kinds, BXC_TOP_K* */
    uint8_t nargs;           /* arguments after the receiver */
    bxc_top_arg args[BXC_TOP_MAX_ARGS];
    bxc_top_out out;
    bool keepdim;            /* C call ends with `, true`: `_dim` reductions keep
                                the reduced dim, as in Burn */
    bool reduce_all;         /* the whole-tensor form of a reduction (rank 0) */
} bxc_top;

/* The surface called `name`, or NULL. */
const bxc_top *bxc_top_find(const char *name);
/* The surface of a binary operator on tensors (`+` -> add, `<` -> lt,
 * `&` -> and), or NULL when the operator has none. */
const bxc_top *bxc_top_operator(bxc_binop op);
/* Every surface, in table order (for did-you-mean and documentation). */
const bxc_top *bxc_top_all(uint32_t *n);
/* Every surface name, in table order. */
const char *const *bxc_top_names(uint32_t *n);
/* NULL when the runtime row `name` has a surface; else why not. */
const char *bxc_top_excluded(const char *row_name);
/* The number of rows of the runtime's table. */
uint32_t bxc_top_row_count(void);
/* The name of row `row` ("sum"), or NULL when out of range. */
const char *bxc_top_row_name(int row);

/* "FloatTensor", "FloatTensor or IntTensor", ... for a kind mask. */
const char *bxc_top_kinds_str(unsigned kinds);
/* The mask bit of a checker tensor kind (BXC_TENSOR_FLOAT -> KF); 0 for
 * kinds the runtime's ops do not take (quantized). */
unsigned bxc_top_kind_bit(int tensor_kind);
/* Whether `scalar OP tensor` (number on the left) has a lowering. */
bool bxc_top_scalar_left_ok(const bxc_top *t);

#endif /* BXC_TENSOR_OPS_H */
