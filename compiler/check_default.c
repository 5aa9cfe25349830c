/* check_default.c — the subset of the language a default body may use.
 *
 * A default body (language.md §3) is lowered by the C generator
 * (emit_body.c) into straight-line C over the core op API: `let` bindings
 * of single names, expression statements, numbers, booleans, parameters
 * and locals, tensor fields of extension parameters (`p.values`), unary
 * `-` `!` `&` `*`, binary operators, the ops of tensor_ops.h called as
 * functions or methods, nested blocks and `as` casts of numbers; its value
 * is one tensor and the method returns one tensor.  Control flow (`if`,
 * `match`, loops, `return`), tuples, struct literals, closures, indexing
 * and the like have no lowering there.  This file rejects exactly those,
 * with a located error, so that what `bextc --check` accepts `bextc -o`
 * generates.  It mirrors emit_body.c's structure on purpose: a change to
 * what the generator lowers must be made in both. */
#include "check_internal.h"
#include "tensor_ops.h"

#define DEF_MAX_VARS 128   /* emit_body.c's MAX_VARS */

typedef struct def_ctx {
    chk_ctx *cx;
    const char *vars[DEF_MAX_VARS];
    bool var_tensor[DEF_MAX_VARS];
    uint32_t nvars;
    bool ok;               /* one error per body: the generator stops at its first */
    bool formula;          /* a `#[backward]` formula rather than a default body */
} def_ctx;

static void def_err(def_ctx *d, bxc_span span, const char *what) {
    if (!d->ok) return;
    d->ok = false;
    bxc_diag *dg = chk_error(d->cx, d->formula ? CHK_E_BACKWARD : CHK_E_FUSION_DEFAULT, span,
                             "%s is not allowed in %s", what,
                             d->formula ? "a backward formula" : "a default body");
    chk_help(d->cx, dg,
             "%s straight-line tensor expressions: `let` bindings, numbers, tensor operators and "
             "ops, and `as` on numbers (see language.md %s)",
             d->formula ? "backward formulas are" : "default bodies are", d->formula ? "§6" : "§3");
}

static bool ty_tensor(bxc_type *t) {
    return t && bxc_type_strip_refs(bxc_type_resolve(t))->kind == BXC_TYPE_TENSOR;
}

static int def_lookup(def_ctx *d, const char *name) {
    for (uint32_t i = d->nvars; i-- > 0;)
        if (strcmp(d->vars[i], name) == 0) return (int)i;
    return -1;
}

static bool def_expr(def_ctx *d, const bxc_expr *e);

static const char *flipped(const char *n) {
    if (!strcmp(n, "lt")) return "gt";
    if (!strcmp(n, "gt")) return "lt";
    if (!strcmp(n, "le")) return "ge";
    if (!strcmp(n, "ge")) return "le";
    return n;
}

/* emit_body.c's tensor_binary: which scalar operands have a lowering. */
static void def_binary(def_ctx *d, const bxc_top *op, bool lt, bool rt, bxc_span span) {
    if (lt && rt) return;
    if (!op->scalar_cfn) {
        def_err(d, span, bxc_arena_printf(d->cx->arena, "`%s` with a number operand", op->name));
        return;
    }
    if (lt) return;
    if (!bxc_top_scalar_left_ok(op)) {
        def_err(d, span, bxc_arena_printf(d->cx->arena, "`%s` with a number on the left", op->name));
        return;
    }
    if (!strcmp(op->name, "sub") || !strcmp(op->name, "div")) return;
    const bxc_top *sw = bxc_top_find(flipped(op->name));
    if (!sw || !sw->scalar_cfn)
        def_err(d, span, bxc_arena_printf(d->cx->arena, "`%s` with a number on the left", op->name));
}

/* emit_body.c's apply_op: returns whether the result is a tensor. */
static bool def_op(def_ctx *d, const char *m, bool recv_tensor, const bxc_expr *const *args,
                   uint32_t nargs, bxc_span span) {
    const bxc_top *op = bxc_top_find(m);
    if (!op) {
        def_err(d, span, bxc_arena_printf(d->cx->arena, "the call of `%s`", m));
        return recv_tensor;
    }
    if (!recv_tensor) {
        if (op->cmath && nargs == 0) return false;
        def_err(d, span, bxc_arena_printf(d->cx->arena, "the op `%s` on a number", m));
        return false;
    }
    if (nargs != op->nargs) {
        def_err(d, span, bxc_arena_printf(d->cx->arena, "the op `%s` with %u argument(s)", m, nargs));
        return true;
    }
    if (op->nargs == 1 && op->args[0] == BXC_TOP_ARG_OPERAND) {
        bool r = def_expr(d, args[0]);
        if (d->ok) def_binary(d, op, true, r, span);
        return true;
    }
    for (uint32_t i = 0; i < op->nargs && d->ok; i++) {
        bool v = def_expr(d, args[i]);
        bool want = op->args[i] == BXC_TOP_ARG_TENSOR || op->args[i] == BXC_TOP_ARG_INDICES ||
                    op->args[i] == BXC_TOP_ARG_MASK || op->args[i] == BXC_TOP_ARG_OPERAND;
        if (d->ok && v != want)
            def_err(d, args[i]->span, want ? "a number where the op takes a tensor"
                                           : "a tensor where the op takes a number");
    }
    return true;
}

/* Returns whether the block's value is a tensor (no tail: a number). */
static bool def_block(def_ctx *d, const bxc_block *b) {
    uint32_t mark = d->nvars;
    for (uint32_t i = 0; i < b->stmts.len && d->ok; i++) {
        const bxc_stmt *s = b->stmts.items[i];
        if (s->kind == BXC_STMT_EMPTY) continue;
        if (s->kind == BXC_STMT_ERROR) {   /* the parser reported it */
            d->ok = false;
            break;
        }
        if (s->kind == BXC_STMT_EXPR) {
            def_expr(d, s->expr);
            continue;
        }
        if (s->kind != BXC_STMT_LET || !s->init || !s->pat || s->pat->kind != BXC_PAT_IDENT) {
            def_err(d, s->span, s->kind == BXC_STMT_LET ? "this `let` (one name and a value only)"
                                                        : "this statement");
            break;
        }
        bool t = def_expr(d, s->init);
        if (!d->ok) break;
        if (d->nvars == DEF_MAX_VARS) {
            def_err(d, s->span, "more than 128 variables");
            break;
        }
        d->vars[d->nvars] = s->pat->name.name;
        d->var_tensor[d->nvars++] = t;
    }
    bool r = b->tail ? def_expr(d, b->tail) : false;
    d->nvars = mark;
    return r;
}

static bool def_expr(def_ctx *d, const bxc_expr *e) {
    if (!d->ok || !e) return false;
    switch (e->kind) {
    case BXC_EXPR_INT:
    case BXC_EXPR_FLOAT:
    case BXC_EXPR_BOOL: return false;
    case BXC_EXPR_PATH:
        if (e->path->segs.len == 1) {
            int v = def_lookup(d, e->path->segs.items[0].name);
            if (v >= 0) return d->var_tensor[v];
        }
        def_err(d, e->span, d->formula ? "a name other than an argument, `grad`, `output` or a `let` variable"
                                       : "a name other than a parameter or `let` variable");
        return false;
    case BXC_EXPR_FIELD: {
        const bxc_expr *o = e->field.object;
        if (o->kind == BXC_EXPR_PATH && o->path->segs.len == 1 && ty_tensor(e->ty)) {
            int v = def_lookup(d, o->path->segs.items[0].name);
            if (v >= 0 && !d->var_tensor[v]) return true;
        }
        def_err(d, e->span, "a field access other than a tensor field of a parameter");
        return false;
    }
    case BXC_EXPR_UNARY:
        if (e->unary.op == BXC_UN_DEREF || e->unary.op == BXC_UN_REF || e->unary.op == BXC_UN_NEG ||
            e->unary.op == BXC_UN_NOT)
            return def_expr(d, e->unary.operand);
        def_err(d, e->span, "`&mut`");
        return false;
    case BXC_EXPR_BINARY: {
        bool l = def_expr(d, e->binary.lhs);
        bool r = def_expr(d, e->binary.rhs);
        if (!d->ok || (!l && !r)) return false;
        const bxc_top *op = bxc_top_operator(e->binary.op);
        if (!op) {
            def_err(d, e->span, bxc_arena_printf(d->cx->arena, "`%s` on tensors",
                                                 bxc_binop_str(e->binary.op)));
            return true;
        }
        def_binary(d, op, l, r, e->span);
        return true;
    }
    case BXC_EXPR_CALL: {
        const bxc_expr *callee = e->call.callee;
        if (callee->kind == BXC_EXPR_PATH && callee->path->segs.len == 1 && e->call.args.len >= 1) {
            bool x = def_expr(d, e->call.args.items[0]);
            if (!d->ok) return x;
            return def_op(d, callee->path->segs.items[0].name, x,
                          (const bxc_expr *const *)e->call.args.items + 1, e->call.args.len - 1,
                          e->span);
        }
        def_err(d, e->span, "this call (only tensor ops can be called)");
        return false;
    }
    case BXC_EXPR_METHOD_CALL: {
        bool x = def_expr(d, e->method_call.receiver);
        if (!d->ok) return x;
        return def_op(d, e->method_call.method.name, x,
                      (const bxc_expr *const *)e->method_call.args.items, e->method_call.args.len,
                      e->span);
    }
    case BXC_EXPR_BLOCK: return def_block(d, e->block);
    case BXC_EXPR_CAST:
        if (def_expr(d, e->cast.expr)) def_err(d, e->span, "`as` on a tensor");
        return false;
    case BXC_EXPR_ERROR: d->ok = false; return false;   /* the parser reported it */
    default:
        def_err(d, e->span, bxc_arena_printf(d->cx->arena, "`%s`", bxc_expr_kind_name(e->kind)));
        return false;
    }
}

void chk_default_body_subset(chk_ctx *cx, const bxc_fn *fn, bxc_type *ret) {
    if (!fn->body) return;
    def_ctx d;
    memset(&d, 0, sizeof d);
    d.cx = cx;
    d.ok = true;
    bxc_type *rt = ret ? bxc_type_resolve(ret) : NULL;
    if (rt && !bxc_type_is_error(rt) && rt->kind != BXC_TYPE_TENSOR) {
        bxc_diag *dg = chk_error(cx, CHK_E_FUSION_DEFAULT, fn->ret ? fn->ret->span : fn->name.span,
                                 "a default body must return one tensor, and `%s` returns `%s`",
                                 fn->name.name, chk_tn(cx, rt));
        chk_help(cx, dg, "drop the default body and implement `%s` per backend", fn->name.name);
        return;
    }
    for (uint32_t i = 0; i < fn->params.len && d.nvars < DEF_MAX_VARS; i++) {
        const bxc_param *p = fn->params.items[i];
        if (!p->pat || p->pat->kind != BXC_PAT_IDENT || !p->pat->ty) continue;
        d.vars[d.nvars] = p->pat->name.name;
        d.var_tensor[d.nvars++] = ty_tensor(p->pat->ty);
    }
    bool t = def_block(&d, fn->body);
    if (d.ok && !t) {
        bxc_span at = fn->body->tail ? fn->body->tail->span : fn->body->span;
        bxc_diag *dg = chk_error(cx, CHK_E_FUSION_DEFAULT, at,
                                 "the value of a default body must be a tensor");
        chk_help(cx, dg, "end the body with the tensor it computes");
    }
}

/* A `#[backward]` formula (language.md §6) is lowered by the same
 * generator as a default body (emit_body.c), with the method's arguments,
 * `grad` and `output` in scope; its value is the gradient, a tensor. */
void chk_backward_formula_subset(chk_ctx *cx, const bxc_fn *fn, const bxc_expr *formula) {
    def_ctx d;
    memset(&d, 0, sizeof d);
    d.cx = cx;
    d.ok = true;
    d.formula = true;
    for (uint32_t i = 0; i < fn->params.len && d.nvars < DEF_MAX_VARS - 2; i++) {
        const bxc_param *p = fn->params.items[i];
        if (!p->pat || p->pat->kind != BXC_PAT_IDENT || !p->pat->ty) continue;
        d.vars[d.nvars] = p->pat->name.name;
        d.var_tensor[d.nvars++] = ty_tensor(p->pat->ty);
    }
    d.vars[d.nvars] = "grad";
    d.var_tensor[d.nvars++] = true;
    d.vars[d.nvars] = "output";
    d.var_tensor[d.nvars++] = true;
    if (def_expr(&d, formula) || !d.ok) return;
    bxc_diag *dg = chk_error(cx, CHK_E_BACKWARD, formula->span, "the value of a backward formula must be a tensor");
    chk_help(cx, dg, "a formula computes the gradient of its argument, a tensor of the argument's shape");
}
