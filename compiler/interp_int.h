/* interp_int.h — internals shared by the interpreter's files: interp.c
 * (state, program, bindings, errors), interp_ops.c (arithmetic, casts),
 * interp_eval.c (evaluation, entry points) and interp_meta.c
 * (`#[fusion(...)]`).  Not part of the interpreter's API: see interp.h. */
#ifndef BEXT_INTERP_INT_H
#define BEXT_INTERP_INT_H

#include <string.h>

#include "interp.h"

/* Status of evaluating one node: a value, an error already reported, or a
 * control transfer travelling up to the construct that handles it. */
typedef enum bxi_status {
    BXI_OK,
    BXI_ERR,
    BXI_RET,     /* `return`: the value is in interp->ret */
    BXI_BREAK,
    BXI_CONT,
} bxi_status;

/* A local variable; `val` is arena memory so pointers to it stay valid
 * while more variables are pushed. */
typedef struct bxi_var {
    const char *name;
    bool is_mut;
    BxvValue *val;
} bxi_var;

/* One active call, for the "in call to `f`" notes of a runtime error. */
typedef struct bxi_call_rec {
    bxc_span site;           /* global span of the call expression */
    const char *name;
} bxi_call_rec;

typedef struct bxi_items_ref {
    const bxc_item_list *items;
    uint32_t base;
} bxi_items_ref;

/* Captured variables of a closure (a snapshot of the defining frame). */
typedef struct bxi_capture {
    bxi_var *vars;
    uint32_t n;
    uint32_t base;
    uint32_t list;           /* module whose names it sees first */
} bxi_capture;

struct bxi_interp {
    bxc_diag_list *diags;
    bxc_arena scratch;        /* values of the current entry call */
    bxi_limits lim;

    bxi_items_ref *lists;     /* where names are found, in search order */
    uint32_t nlists, caplists;

    /* evaluation state, reset by every entry call */
    bxi_var *vars;            /* malloc'd; [frame_start, nvars) is visible */
    uint32_t nvars, capvars;
    uint32_t frame_start;
    uint32_t base;            /* file base of the code being run */
    uint32_t cur_list;        /* its item list (names resolve there first), or BXI_NO_LIST */
    const char *self_type;    /* `Self` inside an impl method, else NULL */
    uint32_t depth;           /* active calls */
    uint64_t steps;
    uintptr_t stack_base;     /* frame address at the entry call */
    bool budget_reported;
    bxi_call_rec *calls;
    uint32_t ncalls, capcalls;
    BxvValue ret;
    bxi_infer_fn infer;       /* bxi_set_infer, or NULL */
};

/* ---- helpers shared by interp*.c ---- */

/* A span of the running code in the merged file numbering (interp.h). */
static inline bxc_span bxi_global_span(const bxi_interp *in, bxc_span s)
{
    if (s.file != BXC_NO_FILE)
        s.file += in->base;
    return s;
}

void *bxi_xrealloc(void *p, size_t n);   /* aborts on OOM, as the arenas do */
/* A value's dynamic type as text, in the scratch arena (for messages). */
const char *bxi_type_str(bxi_interp *in, const BxvValue *v);

/* Decimal text of a checked integer (the one formatter lives in value.c). */
static inline const char *bxi_i128_str(char buf[48], __int128 v)
{
    return bxv_i128_str(buf, v);
}

/* The referent of a value (references are copies, see value.h). */
static inline BxvValue bxi_strip(BxvValue v)
{
    v.refs = 0;
    return v;
}

static inline bool bxi_name_is(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }
static inline const char *bxi_path_last(const bxc_path *p) { return p->segs.items[p->segs.len - 1].name; }

/* Errors: add a located diagnostic (span local to the running code) with
 * a note per active call, and return BXI_ERR. */
bxc_diag *bxi_error(bxi_interp *in, bxc_diag_code code, bxc_span span,
                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Entry-call bookkeeping: empties the scratch arena and the stacks. */
void bxi_reset(bxi_interp *in);
/* Makes env's bindings variables of the (outermost) frame. */
void bxi_push_env(bxi_interp *in, const bxi_env *env);
void bxi_push_var(bxi_interp *in, const char *name, bool is_mut, const BxvValue *v);

bxi_status bxi_eval_expr(bxi_interp *in, const bxc_expr *e, BxvValue *out);
bxi_status bxi_call_value(bxi_interp *in, const BxvValue *callee, BxvValue *args,
                          uint32_t nargs, bxc_span site, BxvValue *out);

/* A `#[fusion(default)]` method's output spec: its default body run over
 * the argument values (specs for tensors), each op through in->infer
 * (interp_body.c). */
bxi_status bxi_eval_default_body(bxi_interp *in, const bxc_fn *fn, const BxvValue *args, BxvValue *out);

/* The innermost visible variable `name` of the current frame, or NULL. */
bxi_var *bxi_find_var(bxi_interp *in, const char *name);

/* Arithmetic and casts (interp_ops.c).  Operators see through references;
 * an integer literal adopts the other operand's type. */
bxi_status bxi_binop(bxi_interp *in, bxc_binop op, BxvValue a, BxvValue b, bxc_span span, BxvValue *out);
bxi_status bxi_int_binop(bxi_interp *in, bxc_binop op, BxvValue a, BxvValue b, bxc_span span, BxvValue *out);
/* Gives an integer literal the type `ty` (range-checked). */
bxi_status bxi_int_adopt(bxi_interp *in, BxvValue *v, BxvIntType ty, bxc_span span);
/* A non-negative `usize` (or literal) usable as an index or dimension. */
bxi_status bxi_to_index(bxi_interp *in, BxvValue v, bxc_span span, const char *what, uint64_t *out);
bxi_status bxi_eval_cast(bxi_interp *in, const bxc_expr *e, BxvValue *out);

/* Items: the item `name` of one of the kinds, searched in the running
 * code's own module first (so a helper calls its module's fns, whatever
 * the root defines), then everywhere in program order.  *base and *list
 * (either may be NULL) say where it was found. */
#define BXI_NO_LIST UINT32_MAX
const bxc_item *bxi_find_item(const bxi_interp *in, const char *name,
                              uint32_t kinds_mask, uint32_t *base, uint32_t *list);
#define BXI_KIND(k) (1u << (k))
/* The item list holding `it` (an item the checker resolved a name to, ast.h
 * bxc_res): false when no registered list holds it.  Checked code calls
 * through this; bxi_find_item serves what the checker never saw (trees
 * evaluated unchecked, names typed as text such as `:meta Trait::m`). */
bool bxi_list_of(const bxi_interp *in, const bxc_item *it, uint32_t *base, uint32_t *list);
/* The fn `name` of an inherent `impl Type { ... }` block for the struct or
 * enum called `type_name` (program order, as bxi_find_item), or NULL. */
const bxc_fn *bxi_find_method(const bxi_interp *in, const char *type_name, const char *name,
                              uint32_t *base, uint32_t *list);
/* Whether an impl fn takes a receiver (`self`, `&self`, `self: T`). */
bool bxi_fn_has_self(const bxc_fn *fn);

/* Types as written: integer and float targets (aliases resolved). */
bool bxi_tyexpr_int(const bxi_interp *in, const bxc_tyexpr *t, BxvIntType *out);
bool bxi_tyexpr_float(const bxi_interp *in, const bxc_tyexpr *t, BxvFloatType *out);
/* Strips `&`s, returning how many. */
const bxc_tyexpr *bxi_tyexpr_strip_refs(const bxc_tyexpr *t, unsigned *refs);
/* Adapts an argument to a declared type: integer literals take the type,
 * the reference depth follows the declaration. */
bxi_status bxi_coerce(bxi_interp *in, BxvValue *v, const bxc_tyexpr *t, bxc_span span);

#endif
