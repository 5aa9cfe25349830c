/* interp_int.h — internals shared by interp.c (expressions, calls,
 * environments) and interp_meta.c (`#[fusion(...)]` evaluation).  Not part
 * of the interpreter's API: see interp.h for that. */
#ifndef BEXT_INTERP_INT_H
#define BEXT_INTERP_INT_H

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
    uint32_t depth;           /* active calls */
    uint64_t steps;
    uintptr_t stack_base;     /* frame address at the entry call */
    bool budget_reported;
    bxi_call_rec *calls;
    uint32_t ncalls, capcalls;
    BxvValue ret;
};

/* Errors: add a located diagnostic (span local to the running code) with
 * a note per active call, and return BXI_ERR. */
bxc_diag *bxi_error(bxi_interp *in, const char *code, bxc_span span,
                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Entry-call bookkeeping: empties the scratch arena and the stacks. */
void bxi_reset(bxi_interp *in);
/* Makes env's bindings variables of the (outermost) frame. */
void bxi_push_env(bxi_interp *in, const bxi_env *env);
void bxi_push_var(bxi_interp *in, const char *name, bool is_mut, const BxvValue *v);

bxi_status bxi_eval_expr(bxi_interp *in, const bxc_expr *e, BxvValue *out);
bxi_status bxi_call_value(bxi_interp *in, const BxvValue *callee, BxvValue *args,
                          uint32_t nargs, bxc_span site, BxvValue *out);

/* Items */
const bxc_item *bxi_find_item(const bxi_interp *in, const char *name,
                              uint32_t kinds_mask, uint32_t *base);
#define BXI_KIND(k) (1u << (k))

/* Types as written: integer and float targets (aliases resolved). */
bool bxi_tyexpr_int(const bxi_interp *in, const bxc_tyexpr *t, BxvIntType *out);
/* Strips `&`s, returning how many. */
const bxc_tyexpr *bxi_tyexpr_strip_refs(const bxc_tyexpr *t, unsigned *refs);
/* Adapts an argument to a declared type: integer literals take the type,
 * the reference depth follows the declaration. */
bxi_status bxi_coerce(bxi_interp *in, BxvValue *v, const bxc_tyexpr *t, bxc_span span);

#endif
