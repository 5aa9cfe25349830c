/* tensor_ops.c — derives the compiler's tensor-op surfaces from the
 * runtime's op table (see tensor_ops.h).
 *
 * The rows come from BXR_OP_TABLE itself; what a row looks like in a body
 * follows from its columns (tensor inputs, their kinds, scalar count,
 * attributes, inference rule):
 *   - no attributes: tensor inputs after the first are same-kind tensors,
 *     masks (bool-only inputs) or indices (int-only inputs of an op whose
 *     first input is not int-only); scalars are numbers; a binary op with
 *     a `<name>_scalar` row also takes a number;
 *   - a dim attribute alone: a leading dim argument, then the tensors,
 *     then integer scalars (NARROW's start/length, REPEAT_DIM's times);
 *   - reductions (dim + keepdim): `x.sum()` over the whole tensor and
 *     `x.sum_dim(d)` keeping the dim; a `_reduce` suffix is dropped and a
 *     whole form whose name another row owns gets `_all` (`max_all`), the
 *     names bext.h uses;
 *   - shapes, dim lists, ranges, tensor lists, a dtype, no tensor input:
 *     no surface yet (the language has no list or shape literals in
 *     bodies).
 * Two surfaces are compositions of rows with public functions of their
 * own (runtime/src/api_compose.c): `transpose` (bext_transpose, the last
 * two dims swapped) and `gelu` (bext_gelu).  The few facts
 * the columns do not carry (POWI's exponent is an integer; which unary ops
 * have a <math.h> twin for float scalars) are listed by name below, and
 * the table is rebuilt and checked against the runtime's row count at
 * compile time. */
#include "tensor_ops.h"

#include <stdio.h>
#include <string.h>

#include <bext/ops.h>   /* the op table, shared with the runtime */

#include "types.h"

_Static_assert(BXC_TOP_KF == BXR_KF && BXC_TOP_KI == BXR_KI && BXC_TOP_KB == BXR_KB,
               "tensor kind masks must match bext/ops.h");

typedef struct row {
    const char *name;
    int nin;
    unsigned k[3];
    int nscalar;
    unsigned attrs;
    const char *infer;
} row;

static const row rows[] = {
#define BXC_X_(E, n, nin, k0, k1, k2, ns, at, inf) {#n, nin, {k0, k1, k2}, ns, at, #inf},
    BXR_OP_TABLE(BXC_X_)
#undef BXC_X_
};
#define NROWS (sizeof rows / sizeof *rows)

/* ORDER OP: one row per opcode, so rows[op] describes op.  A new row is
 * picked up automatically; this assert makes whoever adds one look at the
 * derivation rules above (and at language.md §3's list). */
_Static_assert(sizeof rows / sizeof *rows == BXR_OP_COUNT, "one row per opcode");
_Static_assert(BXR_OP_COUNT == 87, "op table changed: check compiler/tensor_ops.c's derivation");

/* Ops whose scalars are integers (ops.h: `sc[0].i`). */
static bool int_scalars(const char *n) { return !strcmp(n, "powi") || !strcmp(n, "narrow") || !strcmp(n, "repeat_dim"); }

/* Unary float ops with a <math.h> twin, for `erf(0.5)` on a float scalar. */
static const char *cmath_of(const char *n) {
    static const char *const same[] = {"exp", "log", "log1p", "sqrt", "sin", "cos",
                                       "tanh", "erf", "floor", "ceil"};
    for (size_t i = 0; i < sizeof same / sizeof *same; i++)
        if (!strcmp(same[i], n)) return same[i];
    if (!strcmp(n, "abs")) return "fabs";
    if (!strcmp(n, "round")) return "nearbyint";   /* half to even, as bext_round */
    return NULL;
}

/* At most two surfaces per row, plus the compositions. */
#define MAX_SURF (2 * BXR_OP_COUNT + 2)
static bxc_top surf[MAX_SURF];
static const char *surf_names[MAX_SURF];
static uint32_t nsurf;
static char strbuf[MAX_SURF * 2][32];
static uint32_t nstr;
static bool built;

static int row_index(const char *name) {
    for (size_t i = 0; i < NROWS; i++)
        if (!strcmp(rows[i].name, name)) return (int)i;
    return -1;
}

/* a then b in a fresh slot of strbuf (names are short: the longest is
 * "bext_select_assign"; a longer one would be cut, never overflow). */
static const char *str2(const char *a, const char *b) {
    char *s = strbuf[nstr++];
    size_t la = strlen(a), lb = strlen(b), cap = sizeof strbuf[0] - 1;
    if (la > cap) la = cap;
    if (lb > cap - la) lb = cap - la;
    memcpy(s, a, la);
    memcpy(s + la, b, lb);
    s[la + lb] = 0;
    return s;
}

static const char *excluded_reason(const row *r) {
    if (r->nin == 0) return "creates a tensor from a shape and dtype, which bodies cannot write yet";
    if (r->nin < 0) return "takes a list of tensors, which bodies cannot write yet";
    if (r->attrs & BXR_A_SHAPE) return "takes a shape, which bodies cannot write yet";
    if (r->attrs & BXR_A_RANGES) return "takes index ranges, which bodies cannot write yet";
    if ((r->attrs & BXR_A_DIMS) && strcmp(r->name, "swap_dims") != 0)
        return "takes a list of dims, which bodies cannot write yet";
    if (r->attrs & BXR_A_DTYPE) return "takes a dtype, which the body generator does not lower yet";
    return NULL;
}

static bxc_top *add(const char *name, const char *cfn, int rowi) {
    bxc_top *t = &surf[nsurf];
    memset(t, 0, sizeof *t);
    t->name = name;
    t->cfn = cfn;
    t->row = rowi;
    t->kinds = rows[rowi].k[0];
    surf_names[nsurf++] = name;
    return t;
}

static void build(void) {
    if (built) return;
    built = true;
    for (size_t i = 0; i < NROWS; i++) {
        const row *r = &rows[i];
        if (excluded_reason(r)) continue;
        int ri = (int)i;
        if ((r->attrs & BXR_A_RED) == BXR_A_RED) {
            /* reductions: whole-tensor and `_dim` forms */
            const char *base = r->name;
            size_t bl = strlen(base);
            if (bl > 7 && !strcmp(base + bl - 7, "_reduce")) {
                char *s = strbuf[nstr++];
                snprintf(s, sizeof strbuf[0], "%.*s", (int)(bl - 7), base);
                base = s;
            }
            const char *whole = row_index(base) >= 0 && row_index(base) != ri ? str2(base, "_all") : base;
            bxc_top_out out = !strncmp(base, "arg", 3) ? BXC_TOP_OUT_INT : BXC_TOP_OUT_SAME;
            bxc_top *w = add(whole, str2("bext_", whole), ri);
            w->out = out;
            w->reduce_all = true;
            const char *dn = str2(base, "_dim");
            bxc_top *d = add(dn, str2("bext_", dn), ri);
            d->out = out;
            d->nargs = 1;
            d->args[0] = BXC_TOP_ARG_DIM;
            d->keepdim = true;
            continue;
        }
        bxc_top *t = add(r->name, str2("bext_", r->name), ri);
        if (!strcmp(r->infer, "bxr_infer_compare")) t->out = BXC_TOP_OUT_BOOL;
        if (r->attrs & BXR_A_DIMS) {   /* swap_dims */
            t->nargs = 2;
            t->args[0] = t->args[1] = BXC_TOP_ARG_DIM;
            continue;
        }
        if (r->attrs & BXR_A_DIM) t->args[t->nargs++] = BXC_TOP_ARG_DIM;
        for (int j = 1; j < r->nin && j < 3; j++) {
            unsigned k = r->k[j];
            bxc_top_arg a = BXC_TOP_ARG_TENSOR;
            if (k == BXR_KB && r->k[0] != BXR_KB) a = BXC_TOP_ARG_MASK;
            else if (k == BXR_KI && r->k[0] != BXR_KI) a = BXC_TOP_ARG_INDICES;
            t->args[t->nargs++] = a;
        }
        for (int j = 0; j < r->nscalar && t->nargs < BXC_TOP_MAX_ARGS; j++)
            t->args[t->nargs++] = int_scalars(r->name) ? BXC_TOP_ARG_INT : BXC_TOP_ARG_FLOAT;
        if (r->nin == 2 && r->nscalar == 0 && t->nargs == 1 && t->args[0] == BXC_TOP_ARG_TENSOR) {
            char sn[40];
            snprintf(sn, sizeof sn, "%s_scalar", r->name);
            if (row_index(sn) >= 0) {
                t->args[0] = BXC_TOP_ARG_OPERAND;
                t->scalar_cfn = str2("bext_", sn);
            }
        }
        if (r->nin == 1 && r->nscalar == 0 && !(r->attrs & BXR_A_DIM) && r->k[0] == BXR_KF)
            t->cmath = cmath_of(r->name);
        else if (!strcmp(r->name, "abs"))
            t->cmath = cmath_of(r->name);
    }
    /* compositions over rows */
    add("transpose", "bext_transpose", BXR_OP_SWAP_DIMS);
    bxc_top *g = add("gelu", "bext_gelu", BXR_OP_ERF);
    g->kinds = BXR_KF;
}

const bxc_top *bxc_top_find(const char *name) {
    build();
    for (uint32_t i = 0; i < nsurf; i++)
        if (!strcmp(surf[i].name, name)) return &surf[i];
    return NULL;
}

const bxc_top *bxc_top_operator(bxc_binop op) {
    switch (op) {
    case BXC_BIN_ADD: return bxc_top_find("add");
    case BXC_BIN_SUB: return bxc_top_find("sub");
    case BXC_BIN_MUL: return bxc_top_find("mul");
    case BXC_BIN_DIV: return bxc_top_find("div");
    case BXC_BIN_REM: return bxc_top_find("rem");
    case BXC_BIN_EQ: return bxc_top_find("eq");
    case BXC_BIN_NE: return bxc_top_find("ne");
    case BXC_BIN_LT: return bxc_top_find("lt");
    case BXC_BIN_LE: return bxc_top_find("le");
    case BXC_BIN_GT: return bxc_top_find("gt");
    case BXC_BIN_GE: return bxc_top_find("ge");
    case BXC_BIN_BITAND: return bxc_top_find("and");
    case BXC_BIN_BITOR: return bxc_top_find("or");
    case BXC_BIN_BITXOR: return bxc_top_find("xor");
    default: return NULL;
    }
}

const bxc_top *bxc_top_all(uint32_t *n) {
    build();
    *n = nsurf;
    return surf;
}

const char *const *bxc_top_names(uint32_t *n) {
    build();
    *n = nsurf;
    return surf_names;
}

const char *bxc_top_excluded(const char *row_name) {
    int i = row_index(row_name);
    return i < 0 ? "is not an op of the runtime" : excluded_reason(&rows[i]);
}

uint32_t bxc_top_row_count(void) { return (uint32_t)NROWS; }

const char *bxc_top_row_name(int r) { return r >= 0 && (size_t)r < NROWS ? rows[r].name : NULL; }

const char *bxc_top_kinds_str(unsigned k) {
    switch (k & 7u) {
    case BXR_KF: return "FloatTensor";
    case BXR_KI: return "IntTensor";
    case BXR_KB: return "BoolTensor";
    case BXR_KN: return "FloatTensor or IntTensor";
    case BXR_KA: return "a tensor";
    case BXR_KF | BXR_KB: return "FloatTensor or BoolTensor";
    case BXR_KI | BXR_KB: return "IntTensor or BoolTensor";
    default: return "no tensor";
    }
}

unsigned bxc_top_kind_bit(int tensor_kind) {
    switch (tensor_kind) {
    case BXC_TENSOR_FLOAT: return BXR_KF;
    case BXC_TENSOR_INT: return BXR_KI;
    case BXC_TENSOR_BOOL: return BXR_KB;
    default: return 0;
    }
}

/* `s + t`, `s * t`, `s == t`, `s max t`: the same op swapped; `s < t` is
 * `t > s`; `s - t` is `-t + s`; `s / t` is `recip(t) * s` (emit_body.c).
 * `%` and `**`-like ops have no such identity. */
bool bxc_top_scalar_left_ok(const bxc_top *t) {
    static const char *const ok[] = {"add", "mul", "eq", "ne", "max", "min", "lt",
                                     "le", "gt", "ge", "sub", "div"};
    if (!t->scalar_cfn) return false;
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        if (!strcmp(ok[i], t->name)) return true;
    return false;
}
