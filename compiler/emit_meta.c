/* emit_meta.c — metadata functions as C (language.md §5, §7).
 *
 * Helper `fn`s of every module, the `#[fusion(dtype = .., shape = ..)]`
 * field expressions and `#[fusion(meta = ..)]` callables of trait methods
 * become C functions over <bext/gen.h>:
 *
 *     bool NAME(<params>, RET *bext_out, bext_meta_error *err);
 *
 * They return false with err->code / err->msg set on every failure the
 * interpreter (compiler/interp.c) reports — checked integer arithmetic,
 * division by zero, out-of-range indexes and casts, `panic("..")`, the
 * step budget and the recursion limit — with the same messages, so the
 * differential test (tests/codegen) can require identical results and
 * identical errors.  Nothing here is undefined behaviour in C.
 *
 * Lowering: the language is expression-oriented and C is not, so every
 * expression is compiled into statements that leave its value in a fresh
 * temporary (v1, v2, ...) and the C expression naming it is returned.
 * Evaluation order follows the interpreter: operands left to right, method
 * arguments before the receiver, an assignment's value before its place.
 * Values have value semantics as in the interpreter: a reference `&x` is a
 * copy, `*x` too; `&T` parameters arrive as `const T *` and are read
 * through. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "diag.h"
#include "emit_int.h"

typedef struct mvar {
    const char *name;
    const char *c;          /* C lvalue */
    bxc_type *type;
} mvar;

typedef struct mctx {
    bxc_emit_ctx *cx;
    bxc_emit_buf out;
    int indent;
    uint32_t ntmp;
    mvar *vars;
    uint32_t nvars, capvars;
    bool ok;
    bool has_out;           /* the function writes *bext_out */
    uint32_t loop_depth;
    const char *fname;      /* for messages */
    const bxc_type_decl *self_decl;   /* `Self` inside an impl method, else NULL */
} mctx;

/* ---- small helpers ------------------------------------------------------------- */

static void line(mctx *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(mctx *m, const char *fmt, ...) {
    for (int i = 0; i < m->indent; i++) bxc_emit_puts(&m->out, "  ");
    va_list ap;
    va_start(ap, fmt);
    char *s = bxc_arena_vprintf(m->cx->a, fmt, ap);
    va_end(ap);
    bxc_emit_puts(&m->out, s);
    bxc_emit_puts(&m->out, "\n");
}

static void unsupported(mctx *m, bxc_span span, const char *what) {
    if (m->ok)
        bxc_diag_add(&m->cx->u->diags, BXC_SEV_WARNING, bxc_diag_code_str(BXC_EMIT_W_UNLOWERED), span,
                     "%s is not supported by the C generator: the generated `%s` reports an error instead", what,
                     m->fname);
    m->ok = false;
}

static bxc_type *T(bxc_type *t) { return t ? bxc_type_strip_refs(bxc_type_resolve(t)) : NULL; }

static const char *ctype(mctx *m, bxc_type *t) {
    t = T(t);
    if (!t) return NULL;
    const char *c = bxc_emit_ctype_of(m->cx, t);
    if (!c || t->kind == BXC_TYPE_TENSOR) return NULL;
    return c;
}

static bool is_valued(bxc_type *t) {
    t = T(t);
    return t && t->kind != BXC_TYPE_UNIT && t->kind != BXC_TYPE_NEVER && t->kind != BXC_TYPE_ERROR;
}

static const char *tmp(mctx *m) { return bxc_arena_printf(m->cx->a, "bext_v%u", ++m->ntmp); }

/* `T vN = expr;` -> "vN" */
static const char *bind_tmp(mctx *m, bxc_type *t, const char *expr) {
    const char *ct = ctype(m, t);
    if (!ct) {
        m->ok = false;
        return "0";
    }
    const char *v = tmp(m);
    line(m, "BEXT_GEN_UNUSED %s %s = %s;", ct, v, expr);
    return v;
}

static void push_var(mctx *m, const char *name, const char *c, bxc_type *t) {
    if (m->nvars == m->capvars) {
        uint32_t nc = m->capvars ? m->capvars * 2 : 16;
        mvar *n = bxc_arena_alloc(m->cx->a, nc * sizeof *n);
        if (m->nvars) memcpy(n, m->vars, m->nvars * sizeof *n);
        m->vars = n;
        m->capvars = nc;
    }
    m->vars[m->nvars++] = (mvar){name, c, t};
}

static mvar *find_var(mctx *m, const char *name) {
    for (uint32_t i = m->nvars; i-- > 0;)
        if (!strcmp(m->vars[i].name, name)) return &m->vars[i];
    return NULL;
}

static const char *fail_ret(void) { return "return false;"; }

static const char *int_kind_of(bxc_type *t) {
    t = T(t);
    return t && t->kind == BXC_TYPE_INT ? bxc_emit_int_kind(t->int_kind) : "BEXT_GEN_I64";
}

const char *bxc_emit_helper_name(bxc_emit_ctx *cx, const bxc_module *mod, const char *fn) {
    if (!mod || mod->is_root) return bxc_arena_printf(cx->a, "%s_%s", cx->cstem, fn);
    return bxc_emit_module_name(cx->a, cx->u, mod, fn);
}

const char *bxc_emit_module_name(bxc_arena *a, struct bxc_unit *u, const bxc_module *mod, const char *fn) {
    const char *cstem = bxc_emit_c_identifier(a, bxc_emit_stem(u));
    char *mn = bxc_arena_strdup(a, mod->name);
    for (char *p = mn; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'))) *p = '_';
    /* `std::shape` -> `std__shape`: squeeze the doubled underscores */
    char *w = mn;
    for (char *r = mn; *r; r++)
        if (!(*r == '_' && w > mn && w[-1] == '_')) *w++ = *r;
    *w = 0;
    return bxc_arena_printf(a, "%s_%s_%s", cstem, mn, fn);
}

/* ---- inherent impl methods (docs/codegen.md) ----------------------------------------- */

/* One fn of an inherent `impl Type` block. */
typedef struct impl_fn {
    const bxc_fn *fn;
    const bxc_module *mod;      /* the impl block's module */
    bxc_type *self_type;        /* the struct / enum */
} impl_fn;

/* The type an inherent, non-generic impl block is for, or NULL. */
static bxc_type *impl_self(const bxc_item *it) {
    if (it->kind != BXC_ITEM_IMPL || it->impl.trait_ty || it->impl.generics.len || !it->impl.self_ty ||
        !it->impl.self_ty->ty)
        return NULL;
    bxc_type *t = T(it->impl.self_ty->ty);
    /* Tensor-bearing (extension) values never reach metadata code, which
     * sees their companions: their impl fns have no C metadata form. */
    if (t && bxc_emit_type_has_tensors(t)) return NULL;
    return t && (t->kind == BXC_TYPE_STRUCT || t->kind == BXC_TYPE_ENUM) ? t : NULL;
}

/* The impl fn the checker resolved a call to (its record), when
 * emit_impl_fns gives it a C form. */
static bool impl_fn_of(const bxc_res *r, impl_fn *out) {
    bxc_type *st = r->kind == BXC_RES_IMPL_FN && r->item ? impl_self(r->item) : NULL;
    if (!st) return false;
    *out = (impl_fn){r->fn, r->module, st};
    return true;
}

static bool impl_has_self(const bxc_fn *fn) {
    if (!fn->params.len) return false;
    const bxc_param *p = fn->params.items[0];
    return p->is_self || (p->pat && p->pat->kind == BXC_PAT_IDENT && p->pat->name.name &&
                          !strcmp(p->pat->name.name, "self"));
}

/* Whether the receiver is passed by pointer (`&self`, `self: &Self`). */
static bool impl_self_by_pointer(const bxc_fn *fn) {
    const bxc_param *p = fn->params.items[0];
    if (p->is_self) return p->self_ref;
    return p->type && p->type->kind == BXC_TY_REF;
}

/* `Strategy::to_code` of the root module -> `<stem>_strategy_to_code`;
 * of module `a::b` -> `<stem>_a_b_strategy_to_code` (the helper rule). */
static const char *impl_fn_name(bxc_emit_ctx *cx, const impl_fn *f) {
    return bxc_emit_helper_name(cx, f->mod, bxc_arena_printf(cx->a, "%s_%s", bxc_emit_snake(cx->a, f->self_type->decl->name),
                                                             f->fn->name.name));
}

/* ---- expressions ---------------------------------------------------------------- */

static const char *mx(mctx *m, const bxc_expr *e);
static const char *mblock(mctx *m, const bxc_block *b, bxc_type *ty);

static const char *int_lit(mctx *m, bxc_type *ty, __int128 v, bxc_span span) {
    bxc_type *t = T(ty);
    if (!t || t->kind != BXC_TYPE_INT) {
        if (t && t->kind == BXC_TYPE_FLOAT) return bxc_arena_printf(m->cx->a, "%lld.0", (long long)v);
        unsupported(m, span, "an integer literal of this type");
        return "0";
    }
    bool neg = v < 0;
    unsigned long long u = neg ? (unsigned long long)(-(v + 1)) + 1ULL : (unsigned long long)v;
    return bind_tmp(m, t, bxc_arena_printf(m->cx->a, "(%s)%s%lluULL", ctype(m, t), neg ? "-" : "", u));
}

static const char *float_lit(mctx *m, bxc_type *ty, double v) {
    const char *s = bxc_arena_printf(m->cx->a, "%.17g", v);
    if (!strpbrk(s, ".eni")) s = bxc_arena_printf(m->cx->a, "%s.0", s);
    return bind_tmp(m, ty, bxc_arena_printf(m->cx->a, "(%s)%s", ctype(m, ty), s));
}

/* Checked integer op into a fresh temp of type ty. */
static const char *iop(mctx *m, char op, bxc_type *ty, const char *a, const char *b) {
    const char *w = tmp(m);
    line(m, "bext_i128 %s_ = 0;", w);
    line(m, "if (!bext_gen_iop(err, '%c', %s, (bext_i128)(%s), (bext_i128)(%s), &%s_)) %s", op, int_kind_of(ty), a, b,
         w, fail_ret());
    line(m, "BEXT_GEN_UNUSED %s %s = (%s)%s_;", ctype(m, ty), w, ctype(m, ty), w);
    return w;
}

static char binop_char(bxc_binop op) {
    switch (op) {
    case BXC_BIN_ADD: return '+';
    case BXC_BIN_SUB: return '-';
    case BXC_BIN_MUL: return '*';
    case BXC_BIN_DIV: return '/';
    case BXC_BIN_REM: return '%';
    case BXC_BIN_BITAND: return '&';
    case BXC_BIN_BITOR: return '|';
    case BXC_BIN_BITXOR: return '^';
    default: return 0;
    }
}

static const char *enum_tag(mctx *m, bxc_type *t, const char *variant);

/* A C expression for structural equality of two lvalues of type t (the
 * interpreter's value equality: field by field, enums by variant then
 * fields), or NULL for a type with no such lowering. */
static const char *eq_expr(mctx *m, bxc_type *t, const char *a, const char *b, int depth) {
    bxc_arena *A = m->cx->a;
    t = T(t);
    if (!t || depth > 16) return NULL;
    switch (t->kind) {
    case BXC_TYPE_INT: return bxc_arena_printf(A, "((bext_i128)(%s) == (bext_i128)(%s))", a, b);
    case BXC_TYPE_FLOAT:
    case BXC_TYPE_BOOL:
    case BXC_TYPE_DTYPE: return bxc_arena_printf(A, "((%s) == (%s))", a, b);
    case BXC_TYPE_SHAPE: return bxc_arena_printf(A, "bext_gen_shape_eq(&%s, &%s)", a, b);
    case BXC_TYPE_SPEC: return bxc_arena_printf(A, "bext_gen_spec_eq(&%s, &%s)", a, b);
    case BXC_TYPE_STRUCT: {
        const char *r = "1";
        for (uint32_t i = 0; i < t->decl->nfields; i++) {
            const char *fn = t->decl->fields[i].name ? bxc_emit_ident(A, t->decl->fields[i].name)
                                                      : bxc_arena_printf(A, "_%u", i);
            const char *f = eq_expr(m, t->decl->fields[i].type, bxc_arena_printf(A, "%s.%s", a, fn),
                                    bxc_arena_printf(A, "%s.%s", b, fn), depth + 1);
            if (!f) return NULL;
            r = bxc_arena_printf(A, "%s && %s", r, f);
        }
        return bxc_arena_printf(A, "(%s)", r);
    }
    case BXC_TYPE_ENUM: {
        const char *arms = "1";
        for (uint32_t v = t->decl->nvariants; v-- > 0;) {
            const bxc_type_variant *var = &t->decl->variants[v];
            if (!var->nfields) continue;
            const char *r = "1";
            for (uint32_t i = 0; i < var->nfields; i++) {
                const char *fn = var->fields[i].name ? bxc_emit_ident(A, var->fields[i].name)
                                                     : bxc_arena_printf(A, "_%u", i);
                const char *f = eq_expr(m, var->fields[i].type, bxc_arena_printf(A, "%s.as.%s.%s", a, var->name, fn),
                                        bxc_arena_printf(A, "%s.as.%s.%s", b, var->name, fn), depth + 1);
                if (!f) return NULL;
                r = bxc_arena_printf(A, "%s && %s", r, f);
            }
            arms = bxc_arena_printf(A, "(%s.tag == %s ? (%s) : %s)", a, enum_tag(m, t, var->name), r, arms);
        }
        return bxc_arena_printf(A, "(%s.tag == %s.tag && %s)", a, b, arms);
    }
    default: return NULL;
    }
}

/* a OP b for values of type lt (after refs); result type rt. */
static const char *binop_vals(mctx *m, bxc_binop op, bxc_type *lt, bxc_type *rt, const char *a, const char *b,
                              bxc_span span) {
    lt = T(lt);
    bxc_arena *A = m->cx->a;
    bool cmp = op >= BXC_BIN_EQ;
    if (lt->kind == BXC_TYPE_INT) {
        if (cmp)
            return bind_tmp(m, bxc_type_bool(),
                            bxc_arena_printf(A, "(bext_i128)(%s) %s (bext_i128)(%s)", a, bxc_binop_str(op), b));
        char c = binop_char(op);
        if (!c) {
            unsupported(m, span, "this integer operator");
            return "0";
        }
        return iop(m, c, rt, a, b);
    }
    if (lt->kind == BXC_TYPE_FLOAT) {
        if (cmp) return bind_tmp(m, bxc_type_bool(), bxc_arena_printf(A, "(%s) %s (%s)", a, bxc_binop_str(op), b));
        if (op == BXC_BIN_REM) return bind_tmp(m, rt, bxc_arena_printf(A, "fmod((%s), (%s))", a, b));
        if (op >= BXC_BIN_ADD && op <= BXC_BIN_DIV)
            return bind_tmp(m, rt, bxc_arena_printf(A, "(%s) %s (%s)", a, bxc_binop_str(op), b));
        unsupported(m, span, "this float operator");
        return "0";
    }
    if (lt->kind == BXC_TYPE_BOOL) {
        if (op == BXC_BIN_EQ || op == BXC_BIN_NE || op == BXC_BIN_BITAND || op == BXC_BIN_BITOR ||
            op == BXC_BIN_BITXOR)
            return bind_tmp(m, bxc_type_bool(), bxc_arena_printf(A, "(bool)((%s) %s (%s))", a, bxc_binop_str(op), b));
    }
    if ((op == BXC_BIN_EQ || op == BXC_BIN_NE)) {
        const char *neg = op == BXC_BIN_NE ? "!" : "";
        if (lt->kind == BXC_TYPE_DTYPE)
            return bind_tmp(m, bxc_type_bool(), bxc_arena_printf(A, "(%s) %s (%s)", a, bxc_binop_str(op), b));
        if (lt->kind == BXC_TYPE_SHAPE)
            return bind_tmp(m, bxc_type_bool(), bxc_arena_printf(A, "%sbext_gen_shape_eq(&%s, &%s)", neg, a, b));
        if (lt->kind == BXC_TYPE_SPEC)
            return bind_tmp(m, bxc_type_bool(), bxc_arena_printf(A, "%sbext_gen_spec_eq(&%s, &%s)", neg, a, b));
        if (lt->kind == BXC_TYPE_STRUCT || lt->kind == BXC_TYPE_ENUM) {
            const char *la = bind_tmp(m, lt, a), *lb = bind_tmp(m, lt, b);
            const char *q = eq_expr(m, lt, la, lb, 0);
            if (q) return bind_tmp(m, bxc_type_bool(), bxc_arena_printf(A, "%s%s", neg, q));
        }
    }
    unsupported(m, span, "this operator on these operands");
    return "0";
}

/* The call itself, for helpers and impl fns alike (one calling convention:
 * arguments, then an out-pointer for a value, then `err`; false on error).
 * `al` is the argument list with a trailing ", "; returns the C temporary
 * holding the result, or NULL for a unit call. */
static const char *emit_metadata_call(mctx *m, const bxc_expr *e, const char *name, const char *al) {
    if (!is_valued(e->ty)) {
        line(m, "if (!%s(%serr)) %s", name, al, fail_ret());
        return NULL;
    }
    const char *v = tmp(m);
    const char *ct = ctype(m, e->ty);
    if (!ct) {
        m->ok = false;
        return "0";
    }
    line(m, "%s %s;", ct, v);
    line(m, "memset(&%s, 0, sizeof %s);", v, v);
    line(m, "if (!%s(%s&%s, err)) %s", name, al, v, fail_ret());
    return v;
}

/* An lvalue for an assignment target / a mutating method's receiver.
 * Emits the index checks. */
static const char *place(mctx *m, const bxc_expr *e) {
    bxc_arena *A = m->cx->a;
    switch (e->kind) {
    case BXC_EXPR_PATH:
        if (e->path->segs.len == 1) {
            mvar *v = find_var(m, e->path->segs.items[0].name);
            if (v) return v->c;
        }
        break;
    case BXC_EXPR_FIELD: {
        const char *o = place(m, e->field.object);
        return bxc_arena_printf(A, "%s.%s", o, bxc_emit_ident(A, e->field.name.name));
    }
    case BXC_EXPR_TUPLE_FIELD: {
        const char *o = place(m, e->tuple_field.object);
        return bxc_arena_printf(A, "%s._%u", o, e->tuple_field.index);
    }
    case BXC_EXPR_INDEX: {
        const char *i = mx(m, e->index.index);
        const char *o = place(m, e->index.object);
        line(m, "if (!bext_gen_shape_index(err, &%s, (uint64_t)(%s))) %s", o, i, fail_ret());
        return bxc_arena_printf(A, "%s.dims[%s]", o, i);
    }
    case BXC_EXPR_UNARY:
        if (e->unary.op == BXC_UN_DEREF) return place(m, e->unary.operand);
        break;
    default: break;
    }
    unsupported(m, e->span, "this assignment target");
    return "bext_unused_";
}

static const char *call_helper(mctx *m, const bxc_expr *e, const bxc_item *fn, const bxc_module *mod,
                               const char **args, uint32_t nargs) {
    bxc_arena *A = m->cx->a;
    const bxc_fn *f = fn->fn;
    if (f->params.len != nargs) {
        unsupported(m, e->span, "a call with the wrong number of arguments");
        return "0";
    }
    const char *al = "";
    for (uint32_t i = 0; i < nargs; i++) {
        const bxc_param *p = f->params.items[i];
        bool ref = p->type && p->type->kind == BXC_TY_REF;
        al = bxc_arena_printf(A, "%s%s%s", al, ref ? "&" : "", args[i]);
        al = bxc_arena_printf(A, "%s, ", al);
    }
    return emit_metadata_call(m, e, bxc_emit_helper_name(m->cx, mod, f->name.name), al);
}

/* panic("dims {} and {} clash", a, b): the arguments are evaluated here (in
 * order, as the interpreter does), then one printf-style bext_gen_fail
 * whose text reads as the interpreter's (integers in decimal, bools as
 * `true`/`false`). */
static const char *panic_fmt(mctx *m, const bxc_expr_list *al) {
    bxc_arena *A = m->cx->a;
    const char **vals = bxc_arena_alloc(A, al->len * sizeof *vals);
    for (uint32_t i = 1; i < al->len; i++) vals[i] = mx(m, al->items[i]);
    const char *lit = al->items[0]->string_lit.value;
    char *fmt = bxc_arena_alloc(A, 2 * strlen(lit) + 4 * al->len + 8);
    size_t n = 0;
    const char *cargs = "";
    uint32_t next = 1;
    for (const char *c = lit; *c; c++) {
        if (c[0] == '{' && c[1] == '}' && next < al->len) {
            bxc_type *t = T(al->items[next]->ty);
            if (t && t->kind == BXC_TYPE_BOOL) {
                memcpy(fmt + n, "%s", 2);
                cargs = bxc_arena_printf(A, "%s, (%s) ? \"true\" : \"false\"", cargs, vals[next]);
            } else if (t && t->kind == BXC_TYPE_INT && bxc_int_kind_signed(t->int_kind)) {
                memcpy(fmt + n, "%lld", 4);
                n += 2;
                cargs = bxc_arena_printf(A, "%s, (long long)(%s)", cargs, vals[next]);
            } else {
                memcpy(fmt + n, "%llu", 4);
                n += 2;
                cargs = bxc_arena_printf(A, "%s, (unsigned long long)(%s)", cargs, vals[next]);
            }
            n += 2;
            next++;
            c++;
            continue;
        }
        if (*c == '%') fmt[n++] = '%';
        fmt[n++] = *c;
    }
    fmt[n] = 0;
    line(m, "return bext_gen_fail(err, \"%s\", %s%s);", bxc_diag_code_str(BXI_E_PANIC),
         bxc_emit_cstring(A, bxc_arena_printf(A, "panic: %s", fmt)), cargs);
    return NULL;
}

/* A call of an impl fn: `recv` (a C value of the receiver's type, NULL for
 * an associated fn) then `args`, already evaluated in the interpreter's
 * order.  Same calling convention as helpers. */
static const char *call_impl(mctx *m, const bxc_expr *e, const impl_fn *f, const char *recv, const char **args,
                             uint32_t nargs) {
    bxc_arena *A = m->cx->a;
    const bxc_fn *fn = f->fn;
    bool has_self = impl_has_self(fn);
    uint32_t first = has_self ? 1 : 0;
    if (fn->params.len - first != nargs || (has_self && !recv)) {
        unsupported(m, e->span, "a call with the wrong number of arguments");
        return "0";
    }
    const char *al = "";
    if (has_self) {
        /* a copy, as the interpreter binds `self` to a copy of the receiver */
        const char *r = bind_tmp(m, f->self_type, recv);
        al = bxc_arena_printf(A, "%s, ", impl_self_by_pointer(fn) ? bxc_arena_printf(A, "&%s", r) : r);
    }
    for (uint32_t i = 0; i < nargs; i++) {
        const bxc_param *p = fn->params.items[first + i];
        bool ref = p->type && p->type->kind == BXC_TY_REF;
        al = bxc_arena_printf(A, "%s%s%s, ", al, ref ? "&" : "", args[i]);
    }
    return emit_metadata_call(m, e, impl_fn_name(m->cx, f), al);
}

static const char *enum_tag(mctx *m, bxc_type *t, const char *variant) {
    return bxc_emit_tag_const(m->cx, T(t)->decl, variant);
}


static const char *mcall(mctx *m, const bxc_expr *e) {
    bxc_arena *A = m->cx->a;
    const bxc_expr *callee = e->call.callee;
    const bxc_expr_list *al = &e->call.args;
    if (callee->kind != BXC_EXPR_PATH) {
        unsupported(m, e->span, "calling a computed value");
        return "0";
    }
    /* what the call names is the checker's record (ast.h bxc_res) */
    const bxc_res *r = &e->res;
    const char *last = callee->path->segs.items[callee->path->segs.len - 1].name;
    if (r->kind == BXC_RES_LOCAL) {
        unsupported(m, e->span, "calling a closure or fn value");
        return "0";
    }
    bool is_panic = r->kind == BXC_RES_BUILTIN_FN && r->index == BXC_BFN_PANIC;
    /* arguments first, in order (the interpreter's eval_args) */
    const char **args = bxc_arena_alloc(A, (al->len + 1) * sizeof *args);
    if (!is_panic)
        for (uint32_t i = 0; i < al->len; i++) args[i] = mx(m, al->items[i]);
    if (r->kind == BXC_RES_BUILTIN_FN && r->index == BXC_BFN_SHAPE_NEW) {
        if (al->len == 0) return bind_tmp(m, bxc_type_shape(), "(bext_meta_shape){0}");
        return bind_tmp(m, bxc_type_shape(), args[0]);
    }
    if (r->kind == BXC_RES_BUILTIN_FN && r->index == BXC_BFN_SPEC_NEW && al->len == 2)
        return bind_tmp(m, bxc_type_spec(), bxc_arena_printf(A, "(bext_meta_spec){%s, %s}", args[0], args[1]));
    if (r->kind == BXC_RES_VARIANT) {
        const bxc_type_variant *var = &r->type->decl->variants[r->index];
        const char *inits = "";
        for (uint32_t i = 0; i < al->len && i < var->nfields; i++)
            inits = bxc_arena_printf(A, "%s%s._%u = %s", inits, i ? ", " : "", i, args[i]);
        return bind_tmp(m, e->ty,
                        bxc_arena_printf(A, "(%s){.tag = %s%s%s%s%s}", ctype(m, e->ty), enum_tag(m, e->ty, var->name),
                                         al->len ? ", .as." : "", al->len ? var->name : "", al->len ? " = {" : "",
                                         al->len ? bxc_arena_printf(A, "%s}", inits) : ""));
    }
    impl_fn f;
    if (impl_fn_of(r, &f)) {
        /* `Type::f(..)` / `Self::f(..)`: a method takes its receiver as
         * the first argument (`Strategy::to_code(&s)`) */
        if (impl_has_self(f.fn)) {
            if (al->len == 0) {
                unsupported(m, e->span, "a method call without its receiver");
                return "0";
            }
            return call_impl(m, e, &f, args[0], args + 1, al->len - 1);
        }
        return call_impl(m, e, &f, NULL, args, al->len);
    }
    if (r->kind == BXC_RES_FN && r->item) return call_helper(m, e, r->item, r->module, args, al->len);
    if (is_panic && al->len == 1 && al->items[0]->kind == BXC_EXPR_STRING) {
        line(m, "return bext_gen_panic_msg(err, \"panic\", %s);",
             bxc_emit_cstring(A, al->items[0]->string_lit.value));
        return NULL;
    }
    if (is_panic && al->len > 1 && al->items[0]->kind == BXC_EXPR_STRING) return panic_fmt(m, al);
    unsupported(m, e->span, bxc_arena_printf(A, "the call of `%s`", last));
    return "0";
}

static const char *mmethod(mctx *m, const bxc_expr *e) {
    bxc_arena *A = m->cx->a;
    const char *n = e->method_call.method.name;
    const bxc_expr_list *al = &e->method_call.args;
    const bxc_expr *recv = e->method_call.receiver;
    const char *args[4] = {0};
    if (al->len > 4) {
        unsupported(m, e->span, "a method call with this many arguments");
        return "0";
    }
    for (uint32_t i = 0; i < al->len; i++) args[i] = mx(m, al->items[i]);
    /* the checker's record: a builtin method row (with its arity) or an impl fn */
    bxc_builtin_method id =
        e->res.kind == BXC_RES_BUILTIN_METHOD ? (bxc_builtin_method)e->res.index : BXC_BM_NONE;
    if (id != BXC_BM_NONE && bxc_builtin_methods[id].mutates) {
        bool placeable = recv->kind == BXC_EXPR_PATH || recv->kind == BXC_EXPR_FIELD ||
                         recv->kind == BXC_EXPR_TUPLE_FIELD;
        const char *s = placeable ? place(m, recv) : mx(m, recv);
        const char *v = NULL;
        switch (id) {
        case BXC_BM_SHAPE_PUSH:
            line(m, "if (!bext_gen_shape_push(err, &%s, (uint64_t)(%s))) %s", s, args[0], fail_ret());
            return NULL;
        case BXC_BM_SHAPE_INSERT:
            line(m, "if (!bext_gen_shape_insert(err, &%s, (uint64_t)(%s), (uint64_t)(%s))) %s", s, args[0], args[1],
                 fail_ret());
            return NULL;
        case BXC_BM_SHAPE_SWAP:
            line(m, "if (!bext_gen_shape_swap(err, &%s, (uint64_t)(%s), (uint64_t)(%s))) %s", s, args[0], args[1],
                 fail_ret());
            return NULL;
        case BXC_BM_SHAPE_POP:
            v = tmp(m);
            line(m, "uint64_t %s_ = 0;", v);
            line(m, "if (!bext_gen_shape_pop(err, &%s, &%s_)) %s", s, v, fail_ret());
            break;
        case BXC_BM_SHAPE_REMOVE:
            v = tmp(m);
            line(m, "uint64_t %s_ = 0;", v);
            line(m, "if (!bext_gen_shape_remove(err, &%s, (uint64_t)(%s), &%s_)) %s", s, args[0], v, fail_ret());
            break;
        default:
            unsupported(m, e->span, bxc_arena_printf(A, "the method `%s`", n));
            return "0";
        }
        line(m, "BEXT_GEN_UNUSED size_t %s = (size_t)%s_;", v, v);
        return v;
    }
    const char *r = mx(m, recv);
    if (e->res.kind == BXC_RES_CLONE) return bind_tmp(m, recv->ty, r);
    impl_fn f;
    if (impl_fn_of(&e->res, &f) && impl_has_self(f.fn)) return call_impl(m, e, &f, r, args, al->len);
    switch (id) {
    case BXC_BM_SHAPE_LEN:
        return bind_tmp(m, e->ty, bxc_arena_printf(A, "(size_t)%s.len", r));
    case BXC_BM_SHAPE_NUM_ELEMENTS: {
        const char *v = tmp(m);
        line(m, "uint64_t %s_ = 0;", v);
        line(m, "if (!bext_gen_shape_numel(err, &%s, &%s_)) %s", r, v, fail_ret());
        line(m, "BEXT_GEN_UNUSED size_t %s = (size_t)%s_;", v, v);
        return v;
    }
    case BXC_BM_DTYPE_IS_FLOAT:
    case BXC_BM_DTYPE_IS_INT:
    case BXC_BM_DTYPE_IS_BOOL:
        /* bext_gen_dtype_is_float / _is_int / _is_bool: the method's name */
        return bind_tmp(m, e->ty, bxc_arena_printf(A, "bext_gen_dtype_%s(%s)", bxc_builtin_methods[id].name, r));
    case BXC_BM_DTYPE_SIZE:
        return bind_tmp(m, e->ty, bxc_arena_printf(A, "(size_t)bext_gen_dtype_size(%s)", r));
    default:
        break;
    }
    unsupported(m, e->span, bxc_arena_printf(A, "the method `%s`", n));
    return "0";
}

static const char *mstruct(mctx *m, const bxc_expr *e) {
    bxc_arena *A = m->cx->a;
    bxc_type *t = T(e->ty);
    const bxc_field_init_list *fl = &e->struct_lit.fields;
    const char **vals = bxc_arena_alloc(A, (fl->len + 1) * sizeof *vals);
    for (uint32_t i = 0; i < fl->len; i++) vals[i] = mx(m, fl->items[i]->value);
    if (t && t->kind == BXC_TYPE_SPEC) {
        /* `TensorSpec { shape: s, dtype: d }`: the checker made sure both
         * fields are there, each once; bext_meta_spec has the same names. */
        const char *inits = "";
        for (uint32_t i = 0; i < fl->len; i++)
            inits = bxc_arena_printf(A, "%s%s.%s = %s", inits, i ? ", " : "", fl->items[i]->name.name, vals[i]);
        return bind_tmp(m, t, bxc_arena_printf(A, "(bext_meta_spec){%s}", inits));
    }
    if (!t || (t->kind != BXC_TYPE_STRUCT && t->kind != BXC_TYPE_ENUM)) {
        unsupported(m, e->span, "this struct literal");
        return "0";
    }
    const char *inits = "";
    for (uint32_t i = 0; i < fl->len; i++)
        inits = bxc_arena_printf(A, "%s%s.%s = %s", inits, i ? ", " : "", bxc_emit_ident(A, fl->items[i]->name.name),
                                 vals[i]);
    if (t->kind == BXC_TYPE_STRUCT)
        return bind_tmp(m, t, bxc_arena_printf(A, "(%s){%s}", ctype(m, t), fl->len ? inits : "0"));
    const bxc_type_variant *var =
        e->res.kind == BXC_RES_VARIANT ? &e->res.type->decl->variants[e->res.index] : NULL;
    if (!var) {
        unsupported(m, e->span, "this enum variant");
        return "0";
    }
    return bind_tmp(m, t,
                    bxc_arena_printf(A, "(%s){.tag = %s%s%s%s}", ctype(m, t), enum_tag(m, t, var->name),
                                     fl->len ? bxc_arena_printf(A, ", .as.%s = {", var->name) : "", inits,
                                     fl->len ? "}" : ""));
}

static const char *mpath(mctx *m, const bxc_expr *e) {
    bxc_arena *A = m->cx->a;
    const bxc_path *p = e->path;
    const char *last = p->segs.items[p->segs.len - 1].name;
    if (e->res.kind == BXC_RES_LOCAL) {
        mvar *v = find_var(m, last);
        if (v) return bind_tmp(m, v->type, v->c);
    }
    if (e->res.kind == BXC_RES_DTYPE) return bind_tmp(m, bxc_type_dtype(), bxc_dtype_const_c[e->res.index]);
    if (e->res.kind == BXC_RES_VARIANT)
        return bind_tmp(m, e->ty, bxc_arena_printf(A, "(%s){.tag = %s}", ctype(m, e->ty),
                                                   enum_tag(m, e->ty, e->res.type->decl->variants[e->res.index].name)));
    unsupported(m, e->span, bxc_arena_printf(A, "the name `%s` as a value", last));
    return "0";
}

static const char *mcast(mctx *m, const bxc_expr *e) {
    bxc_arena *A = m->cx->a;
    const char *v = mx(m, e->cast.expr);
    bxc_type *from = T(e->cast.expr->ty), *to = T(e->ty);
    if (!from || !to) {
        m->ok = false;
        return "0";
    }
    if (to->kind == BXC_TYPE_INT) {
        const char *w = tmp(m);
        line(m, "bext_i128 %s_ = 0;", w);
        if (from->kind == BXC_TYPE_FLOAT)
            line(m, "if (!bext_gen_fcast(err, %s, (double)(%s), &%s_)) %s", int_kind_of(to), v, w, fail_ret());
        else
            line(m, "if (!bext_gen_icast(err, %s, (bext_i128)(%s), &%s_)) %s", int_kind_of(to), v, w, fail_ret());
        line(m, "BEXT_GEN_UNUSED %s %s = (%s)%s_;", ctype(m, to), w, ctype(m, to), w);
        return w;
    }
    if (to->kind == BXC_TYPE_FLOAT && (from->kind == BXC_TYPE_INT || from->kind == BXC_TYPE_FLOAT))
        return bind_tmp(m, to, bxc_arena_printf(A, "(%s)(%s)", ctype(m, to), v));
    unsupported(m, e->span, "this cast");
    return "0";
}

static const char *mif(mctx *m, const bxc_expr *e) {
    bool valued = is_valued(e->ty);
    const char *res = NULL;
    if (valued) {
        res = tmp(m);
        line(m, "%s %s;", ctype(m, e->ty), res);
        line(m, "memset(&%s, 0, sizeof %s);", res, res);
    }
    const char *c = mx(m, e->if_.cond);
    line(m, "if (%s) {", c);
    m->indent++;
    const char *a = mblock(m, e->if_.then_block, e->ty);
    if (valued && a) line(m, "%s = %s;", res, a);
    m->indent--;
    if (e->if_.else_) {
        line(m, "} else {");
        m->indent++;
        const char *b = mx(m, e->if_.else_);
        if (valued && b) line(m, "%s = %s;", res, b);
        m->indent--;
    }
    line(m, "}");
    return res;
}

static void mlet(mctx *m, const bxc_stmt *s);

static const char *mblock(mctx *m, const bxc_block *b, bxc_type *ty) {
    uint32_t mark = m->nvars;
    for (uint32_t i = 0; i < b->stmts.len; i++) {
        const bxc_stmt *s = b->stmts.items[i];
        switch (s->kind) {
        case BXC_STMT_LET: mlet(m, s); break;
        case BXC_STMT_EXPR: (void)mx(m, s->expr); break;
        case BXC_STMT_EMPTY: break;
        default: unsupported(m, s->span, "this statement");
        }
    }
    const char *r = NULL;
    if (b->tail) r = mx(m, b->tail);
    m->nvars = mark;
    (void)ty;
    return r;
}

static void bind_pat(mctx *m, const bxc_pat *p, bxc_type *t, const char *val) {
    bxc_arena *A = m->cx->a;
    if (p->kind == BXC_PAT_WILD) return;
    if (p->kind == BXC_PAT_IDENT) {
        const char *c = bxc_arena_printf(A, "bext_l%u_%s", ++m->ntmp, p->name.name);
        const char *ct = ctype(m, t);
        if (!ct) {
            m->ok = false;
            return;
        }
        if (val) {
            line(m, "BEXT_GEN_UNUSED %s %s = %s;", ct, c, val);
        } else {
            line(m, "BEXT_GEN_UNUSED %s %s;", ct, c);
            line(m, "memset(&%s, 0, sizeof %s);", c, c);
        }
        push_var(m, p->name.name, c, T(t));
        return;
    }
    if (p->kind == BXC_PAT_TUPLE && val) {
        bxc_type *tt = T(t);
        if (tt && tt->kind == BXC_TYPE_TUPLE && tt->tuple.n == p->elems.len) {
            for (uint32_t i = 0; i < p->elems.len; i++)
                bind_pat(m, p->elems.items[i], tt->tuple.elems[i], bxc_arena_printf(A, "%s._%u", val, i));
            return;
        }
    }
    unsupported(m, p->span, "this pattern");
}

static void mlet(mctx *m, const bxc_stmt *s) {
    bxc_type *t = s->pat && s->pat->ty ? s->pat->ty : s->init ? s->init->ty : NULL;
    if (s->type && s->type->ty) t = s->type->ty;
    const char *v = s->init ? mx(m, s->init) : NULL;
    if (!s->pat || !t) {
        unsupported(m, s->span, "this `let`");
        return;
    }
    bind_pat(m, s->pat, t, v);
}

static const char *mloop_body(mctx *m, const bxc_block *body) {
    m->loop_depth++;
    line(m, "if (!bext_gen_step(err)) %s", fail_ret());
    mblock(m, body, NULL);
    m->loop_depth--;
    return NULL;
}

static const char *mx(mctx *m, const bxc_expr *e) {
    bxc_arena *A = m->cx->a;
    if (!e) return NULL;
    switch (e->kind) {
    case BXC_EXPR_INT: return int_lit(m, e->ty, (__int128)e->int_lit.value, e->span);
    case BXC_EXPR_FLOAT: return float_lit(m, e->ty, e->float_lit.value);
    case BXC_EXPR_BOOL: return bind_tmp(m, bxc_type_bool(), e->bool_lit ? "true" : "false");
    case BXC_EXPR_STRING: unsupported(m, e->span, "a string outside `panic`"); return "0";
    case BXC_EXPR_PATH: return mpath(m, e);
    case BXC_EXPR_UNARY: {
        const bxc_expr *o = e->unary.operand;
        if (e->unary.op == BXC_UN_NEG && o->kind == BXC_EXPR_INT) {
            bxc_type *t = T(e->ty);
            __int128 v = -(__int128)o->int_lit.value;
            if (t && t->kind == BXC_TYPE_INT) {
                /* the interpreter negates before its range check */
                const char *w = tmp(m);
                line(m, "bext_i128 %s_ = 0;", w);
                char buf[48];
                unsigned long long mag = (unsigned long long)o->int_lit.value;
                (void)buf;
                line(m, "if (!bext_gen_icast(err, %s, -(bext_i128)%lluULL, &%s_)) %s", int_kind_of(t), mag, w,
                     bxc_arena_printf(A, "return bext_gen_fail(err, \"%s\", \"literal -%llu is out of range for `%s`\");",
                                      bxc_diag_code_str(bxc_int_kind_signed(t->int_kind) ? BXI_E_OVERFLOW : BXI_E_NEGATIVE), mag,
                                      bxc_int_kind_name(t->int_kind)));
                line(m, "BEXT_GEN_UNUSED %s %s = (%s)%s_;", ctype(m, t), w, ctype(m, t), w);
                (void)v;
                return w;
            }
        }
        if (e->unary.op == BXC_UN_REF || e->unary.op == BXC_UN_DEREF) return mx(m, o);
        const char *v = mx(m, o);
        bxc_type *t = T(o->ty);
        if (!t) {
            m->ok = false;
            return "0";
        }
        if (e->unary.op == BXC_UN_NOT) {
            if (t->kind == BXC_TYPE_BOOL) return bind_tmp(m, t, bxc_arena_printf(A, "!(%s)", v));
            if (t->kind == BXC_TYPE_INT)
                return bind_tmp(m, t, bxc_arena_printf(A, "(%s)bext_gen_inot(%s, (bext_i128)(%s))", ctype(m, t),
                                                       int_kind_of(t), v));
        }
        if (e->unary.op == BXC_UN_NEG) {
            if (t->kind == BXC_TYPE_FLOAT) return bind_tmp(m, t, bxc_arena_printf(A, "-(%s)", v));
            if (t->kind == BXC_TYPE_INT) {
                const char *w = tmp(m);
                line(m, "bext_i128 %s_ = 0;", w);
                line(m, "if (!bext_gen_ineg(err, %s, (bext_i128)(%s), &%s_)) %s", int_kind_of(t), v, w, fail_ret());
                line(m, "BEXT_GEN_UNUSED %s %s = (%s)%s_;", ctype(m, t), w, ctype(m, t), w);
                return w;
            }
        }
        unsupported(m, e->span, "this unary operator");
        return "0";
    }
    case BXC_EXPR_BINARY: {
        bxc_binop op = e->binary.op;
        if (op == BXC_BIN_AND || op == BXC_BIN_OR) {
            const char *r = tmp(m);
            const char *a = mx(m, e->binary.lhs);
            line(m, "bool %s = %s;", r, a);
            line(m, "if (%s%s) {", op == BXC_BIN_AND ? "" : "!", r);
            m->indent++;
            const char *b = mx(m, e->binary.rhs);
            line(m, "%s = %s;", r, b);
            m->indent--;
            line(m, "}");
            return r;
        }
        const char *a = mx(m, e->binary.lhs);
        const char *b = mx(m, e->binary.rhs);
        return binop_vals(m, op, e->binary.lhs->ty, e->ty, a, b, e->span);
    }
    case BXC_EXPR_ASSIGN: {
        const char *v = mx(m, e->assign.value);
        const char *pl = place(m, e->assign.target);
        if (e->assign.op != BXC_BIN_NONE) {
            bxc_type *tt = T(e->assign.target->ty);
            if (tt && tt->kind == BXC_TYPE_SHAPE) {
                unsupported(m, e->span, "compound assignment to a shape");
                return NULL;
            }
            const char *cur = bind_tmp(m, tt, pl);
            v = binop_vals(m, e->assign.op, tt, tt, cur, v, e->span);
        }
        line(m, "%s = %s;", pl, v);
        return NULL;
    }
    case BXC_EXPR_CAST: return mcast(m, e);
    case BXC_EXPR_CALL: return mcall(m, e);
    case BXC_EXPR_METHOD_CALL: return mmethod(m, e);
    case BXC_EXPR_FIELD: {
        const char *o = mx(m, e->field.object);
        return bind_tmp(m, e->ty, bxc_arena_printf(A, "%s.%s", o, bxc_emit_ident(A, e->field.name.name)));
    }
    case BXC_EXPR_TUPLE_FIELD: {
        const char *o = mx(m, e->tuple_field.object);
        return bind_tmp(m, e->ty, bxc_arena_printf(A, "%s._%u", o, e->tuple_field.index));
    }
    case BXC_EXPR_INDEX: {
        const char *o = mx(m, e->index.object);
        const char *i = mx(m, e->index.index);
        line(m, "if (!bext_gen_shape_index(err, &%s, (uint64_t)(%s))) %s", o, i, fail_ret());
        return bind_tmp(m, e->ty, bxc_arena_printf(A, "(size_t)%s.dims[%s]", o, i));
    }
    case BXC_EXPR_BLOCK: {
        bool valued = is_valued(e->ty);
        const char *res = NULL;
        if (valued) {
            res = tmp(m);
            line(m, "%s %s;", ctype(m, e->ty), res);
            line(m, "memset(&%s, 0, sizeof %s);", res, res);
        }
        line(m, "{");
        m->indent++;
        const char *v = mblock(m, e->block, e->ty);
        if (valued && v) line(m, "%s = %s;", res, v);
        m->indent--;
        line(m, "}");
        return res;
    }
    case BXC_EXPR_IF: return mif(m, e);
    case BXC_EXPR_WHILE: {
        line(m, "for (;;) {");
        m->indent++;
        const char *c = mx(m, e->while_.cond);
        line(m, "if (!(%s)) break;", c);
        mloop_body(m, e->while_.body);
        m->indent--;
        line(m, "}");
        return NULL;
    }
    case BXC_EXPR_LOOP: {
        line(m, "for (;;) {");
        m->indent++;
        mloop_body(m, e->loop_.body);
        m->indent--;
        line(m, "}");
        return NULL;
    }
    case BXC_EXPR_FOR: {
        const bxc_expr *it = e->for_.iter;
        if (it->kind != BXC_EXPR_RANGE || !it->range.start || !it->range.end) {
            unsupported(m, e->span, "this `for`");
            return NULL;
        }
        const char *a = mx(m, it->range.start);
        const char *b = mx(m, it->range.end);
        const char *i = tmp(m);
        bxc_type *et = T(it->range.start->ty);
        if (!et || et->kind != BXC_TYPE_INT) et = T(it->range.end->ty);
        line(m, "for (bext_i128 %s_ = (bext_i128)(%s); %s_ < (bext_i128)(%s)%s; %s_++) {", i, a, i, b,
             it->range.inclusive ? " + 1" : "", i);
        m->indent++;
        uint32_t mark = m->nvars;
        bind_pat(m, e->for_.pat, et, bxc_arena_printf(A, "(%s)%s_", ctype(m, et), i));
        mloop_body(m, e->for_.body);
        m->nvars = mark;
        m->indent--;
        line(m, "}");
        return NULL;
    }
    case BXC_EXPR_BREAK: line(m, "break;"); return NULL;
    case BXC_EXPR_CONTINUE: line(m, "continue;"); return NULL;
    case BXC_EXPR_RETURN: {
        const char *v = e->ret.value ? mx(m, e->ret.value) : NULL;
        if (m->has_out && v) line(m, "*bext_out = %s;", v);
        line(m, "err->depth--;");
        line(m, "return true;");
        return NULL;
    }
    case BXC_EXPR_STRUCT: return mstruct(m, e);
    case BXC_EXPR_TUPLE: {
        if (!e->tuple.elems.len) return NULL;
        const char *inits = "";
        for (uint32_t i = 0; i < e->tuple.elems.len; i++)
            inits = bxc_arena_printf(A, "%s%s%s", inits, i ? ", " : "", mx(m, e->tuple.elems.items[i]));
        return bind_tmp(m, e->ty, bxc_arena_printf(A, "(%s){%s}", ctype(m, e->ty), inits));
    }
    case BXC_EXPR_ARRAY: {
        const char *s = tmp(m);
        const char **vals = bxc_arena_alloc(A, (e->array.elems.len + 1) * sizeof *vals);
        for (uint32_t i = 0; i < e->array.elems.len; i++) vals[i] = mx(m, e->array.elems.items[i]);
        line(m, "BEXT_GEN_UNUSED bext_meta_shape %s = {0};", s);
        for (uint32_t i = 0; i < e->array.elems.len; i++)
            line(m, "if (!bext_gen_shape_push(err, &%s, (uint64_t)(%s))) %s", s, vals[i], fail_ret());
        return s;
    }
    default:
        unsupported(m, e->span, bxc_arena_printf(A, "`%s`", bxc_expr_kind_name(e->kind)));
        return "0";
    }
}

/* ---- functions ------------------------------------------------------------------ */

typedef struct mparam {
    const char *name;       /* source name */
    const char *cname;
    bxc_type *type;         /* value type (no refs) */
    bool by_pointer;        /* passed as `const T *` */
} mparam;

/* Emits one metadata function.  params are bound by name; body is an
 * expression (or block) whose value of type ret goes to *bext_out. */
static void emit_fn(bxc_emit_ctx *cx, const char *cname, const char *what, const mparam *ps, uint32_t np,
                    bxc_type *ret, const bxc_expr *body, const bxc_block *block, const char *cond,
                    const bxc_type_decl *self_decl) {
    mctx m;
    memset(&m, 0, sizeof m);
    m.cx = cx;
    m.self_decl = self_decl;
    m.ok = true;
    m.indent = 1;
    m.fname = what;
    bxc_arena *A = cx->a;
    const char *plist = "";
    for (uint32_t i = 0; i < np; i++) {
        const char *ct = ctype(&m, ps[i].type);
        if (!ct) {
            bxc_emit_error(cx, body ? body->span : block->span,
                           "a metadata function parameter of this type has no C representation");
            return;
        }
        if (cx->plan) continue;   /* names only: the type is registered (below too) */
        plist = bxc_arena_printf(A, "%s%s%s%s%s", plist, ps[i].by_pointer ? "const " : "", ct,
                                 ps[i].by_pointer ? " *" : " ", ps[i].cname);
        plist = bxc_arena_printf(A, "%s, ", plist);
        push_var(&m, ps[i].name, ps[i].by_pointer ? bxc_arena_printf(A, "(*%s)", ps[i].cname) : ps[i].cname,
                 ps[i].type);
    }
    m.has_out = is_valued(ret);
    const char *rct = m.has_out ? ctype(&m, ret) : NULL;
    if (m.has_out && !rct) {
        bxc_emit_error(cx, body ? body->span : block->span, "this metadata result has no C representation");
        return;
    }
    /* the name plan stops here: the signature's types are registered (and
     * their names claimed), the body is not lowered */
    if (cx->plan) return;
    const char *sig = bxc_arena_printf(A, "bool %s(%s%s%sbext_meta_error *err)", cname, plist, rct ? rct : "",
                                       rct ? " *bext_out, " : "");

    line(&m, "if (!bext_gen_enter(err, %s)) return false;", bxc_emit_cstring(A, what));
    for (uint32_t i = 0; i < np; i++) line(&m, "(void)%s;", ps[i].cname);
    const char *v = body ? mx(&m, body) : mblock(&m, block, ret);
    if (m.has_out && v) line(&m, "*bext_out = %s;", v);
    line(&m, "err->depth--;");
    line(&m, "return true;");

    if (cond) {
        bxc_emit_printf(&cx->protos_h, "#if %s\n", cond);
        bxc_emit_printf(&cx->code_c, "#if %s\n", cond);
    }
    bxc_emit_printf(&cx->protos_h, "%s;\n", sig);
    bxc_emit_printf(&cx->code_c, "%s {\n", sig);
    if (m.ok) {
        bxc_emit_append(&cx->code_c, &m.out);
    } else {
        /* A construct the generator cannot lower (warned about): the function
         * exists and says so at run time instead of failing the build. */
        if (rct) bxc_emit_puts(&cx->code_c, "  (void)bext_out;\n");
        for (uint32_t i = 0; i < np; i++) bxc_emit_printf(&cx->code_c, "  (void)%s;\n", ps[i].cname);
        bxc_emit_printf(&cx->code_c, "  return bext_gen_fail(err, \"%s\", \"%%s: not supported by generated code\", %s);\n",
                        bxc_diag_code_str(BXI_E_UNSUPPORTED), bxc_emit_cstring(A, what));
    }
    bxc_emit_puts(&cx->code_c, "}\n\n");
    if (cond) {
        bxc_emit_puts(&cx->protos_h, "#endif\n");
        bxc_emit_puts(&cx->code_c, "#endif\n\n");
    }
    bxc_emit_buf_free(&m.out);
}

static bool fn_is_cube(const bxc_item *it) {
    for (uint32_t i = 0; i < it->attrs.len; i++)
        if (bxc_path_is(it->attrs.items[i]->path, "cube")) return true;
    return false;
}

/* The helper fn whose C name is `cname`, or NULL. */
static const char *helper_named(bxc_emit_ctx *cx, const char *cname) {
    for (uint32_t k = 0; k < cx->u->nmodules; k++) {
        const bxc_module *mod = cx->u->modules[k];
        for (uint32_t i = 0; mod->ast && i < mod->ast->items.len; i++) {
            const bxc_item *it = mod->ast->items.items[i];
            if (it->kind == BXC_ITEM_FN && !strcmp(bxc_emit_helper_name(cx, mod, it->name.name), cname))
                return it->name.name;
        }
    }
    return NULL;
}

/* Every fn of every inherent impl block, as a metadata function named by
 * impl_fn_name: the receiver first (`self` by value, `&self` as
 * `const T *self`), then the fn's own parameters. */
static void emit_impl_fns(bxc_emit_ctx *cx) {
    bool header = false;
    for (uint32_t k = 0; k < cx->u->norder; k++) {
        const bxc_module *mod = cx->u->order[k];
        const bxc_file *f = mod->ast;
        for (uint32_t i = 0; f && i < f->items.len; i++) {
            const bxc_item *it = f->items.items[i];
            bxc_type *st = impl_self(it);
            if (!st) continue;
            for (uint32_t j = 0; j < it->impl.methods.len; j++) {
                const bxc_fn *fn = it->impl.methods.items[j];
                if (!fn->body || fn->generics.len) continue;
                uint32_t np = fn->params.len;
                mparam *ps = bxc_arena_alloc(cx->a, (np + 1) * sizeof *ps);
                bool ok = true, has_self = impl_has_self(fn);
                for (uint32_t p = 0; p < np && ok; p++) {
                    const bxc_param *pp = fn->params.items[p];
                    if (p == 0 && has_self) {
                        ps[p].name = "self";
                        ps[p].cname = "self";
                        ps[p].by_pointer = impl_self_by_pointer(fn);
                        ps[p].type = st;
                        continue;
                    }
                    if (!pp->pat || pp->pat->kind != BXC_PAT_IDENT || !pp->type || !pp->type->ty) {
                        ok = false;
                        break;
                    }
                    bxc_type *t = bxc_type_resolve(pp->type->ty);
                    ps[p].name = pp->pat->name.name;
                    ps[p].cname = bxc_emit_ident(cx->a, pp->pat->name.name);
                    ps[p].by_pointer = t->kind == BXC_TYPE_REF;
                    ps[p].type = bxc_type_strip_refs(t);
                    bxc_type_kind kd = ps[p].type->kind;
                    if (kd == BXC_TYPE_TENSOR || kd == BXC_TYPE_FN || kd == BXC_TYPE_GENERIC || kd == BXC_TYPE_ERROR)
                        ok = false;
                }
                bxc_type *ret = fn->ret ? fn->ret->ty : bxc_type_unit();
                if (!ok || !ret) continue;   /* not checked (or not metadata) */
                if (!header && !cx->plan) {
                    bxc_emit_puts(&cx->protos_h, "/* ---- impl methods (docs/codegen.md) ---- */\n");
                    header = true;
                }
                impl_fn in = {fn, mod, st};
                const char *clash = helper_named(cx, impl_fn_name(cx, &in));
                if (clash) {
                    bxc_emit_error(cx, fn->name.span,
                                   "impl fn `%s::%s` and helper fn `%s` would both be the C function `%s`: rename one",
                                   st->decl->name, fn->name.name, clash, impl_fn_name(cx, &in));
                    continue;
                }
                if (!bxc_emit_claim(cx, impl_fn_name(cx, &in), fn->name.span,
                                    bxc_arena_printf(cx->a, "impl fn `%s::%s`", st->decl->name, fn->name.name)))
                    continue;
                emit_fn(cx, impl_fn_name(cx, &in), bxc_arena_printf(cx->a, "%s::%s", st->decl->name, fn->name.name), ps,
                        np, ret, NULL, fn->body, NULL, st->decl);
            }
        }
    }
    if (header) bxc_emit_puts(&cx->protos_h, "\n");
}

void bxc_emit_helpers(bxc_emit_ctx *cx) {
    bool header = false;
    for (uint32_t k = 0; k < cx->u->norder; k++) {
        const bxc_module *mod = cx->u->order[k];
        const bxc_file *f = mod->ast;
        for (uint32_t i = 0; f && i < f->items.len; i++) {
            const bxc_item *it = f->items.items[i];
            if (it->kind != BXC_ITEM_FN || !it->fn->body || fn_is_cube(it) || it->fn->generics.len) continue;
            const bxc_fn *fn = it->fn;
            mparam *ps = bxc_arena_alloc(cx->a, (fn->params.len + 1) * sizeof *ps);
            bool ok = true;
            for (uint32_t p = 0; p < fn->params.len; p++) {
                const bxc_param *pp = fn->params.items[p];
                if (!pp->pat || pp->pat->kind != BXC_PAT_IDENT || !pp->type || !pp->type->ty) {
                    ok = false;
                    break;
                }
                bxc_type *t = bxc_type_resolve(pp->type->ty);
                ps[p].name = pp->pat->name.name;
                ps[p].cname = bxc_emit_ident(cx->a, pp->pat->name.name);
                ps[p].by_pointer = t->kind == BXC_TYPE_REF;
                ps[p].type = bxc_type_strip_refs(t);
                bxc_type_kind kd = ps[p].type->kind;
                if (kd == BXC_TYPE_TENSOR || kd == BXC_TYPE_FN || kd == BXC_TYPE_GENERIC || kd == BXC_TYPE_ERROR)
                    ok = false;
            }
            bxc_type *ret = fn->ret ? (fn->ret->ty ? fn->ret->ty : NULL) : bxc_type_unit();
            if (!ok || !ret) continue;   /* not a metadata helper the checker typed */
            if (!header && !cx->plan) {
                bxc_emit_puts(&cx->protos_h, "/* ---- metadata helper fns (docs/codegen.md) ---- */\n");
                header = true;
            }
            if (!bxc_emit_claim(cx, bxc_emit_helper_name(cx, mod, fn->name.name), fn->name.span,
                                mod->is_root ? bxc_arena_printf(cx->a, "helper fn `%s`", fn->name.name)
                                             : bxc_arena_printf(cx->a, "helper fn `%s::%s`", mod->name, fn->name.name)))
                continue;
            emit_fn(cx, bxc_emit_helper_name(cx, mod, fn->name.name), fn->name.name, ps, fn->params.len, ret, NULL,
                    fn->body, NULL, NULL);
        }
    }
    if (header) bxc_emit_puts(&cx->protos_h, "\n");
    emit_impl_fns(cx);
}

/* ---- #[fusion(...)] of trait methods ------------------------------------------------ */

/* The metadata type of a method parameter as seen by field expressions
 * (`spec_form` false: tensors are DType / Shape per field) or by `meta`
 * (tensors are TensorSpec); extension values are their companions. */
static bxc_type *meta_param_type(bxc_type *t, int form) {
    t = T(t);
    if (!t) return NULL;
    if (t->kind == BXC_TYPE_TENSOR)
        return form == 0 ? bxc_type_dtype() : form == 1 ? bxc_type_shape() : bxc_type_spec();
    if ((t->kind == BXC_TYPE_STRUCT || t->kind == BXC_TYPE_ENUM) && t->decl->is_extension)
        return t->decl->metadata;
    return t;
}

/* Custom scalar encodings (language.md §4): `<prefix>_scalar_<param>`, with
 * the arguments as the checker types them (check_sig.c, the `meta` view:
 * tensors as `const bext_meta_spec *`, extension values as their
 * companions, the rest borrowed). */
static void emit_scalar_encodings(bxc_emit_ctx *cx, const char *prefix, const bxc_method_rec *rec, const char *cond,
                                  bxc_emit_meta_info *info) {
    const bxc_fn *fn = rec->fn;
    uint32_t np = fn->params.len;
    mparam *ps = NULL;
    for (uint32_t j = 0; j < np; j++) {
        const bxc_attr_arg *arg = rec->params[j].encoding;
        const bxc_expr *enc = arg ? arg->value : NULL;
        if (!enc || !enc->ty) continue;   /* none, or not typed (a method a `#[cfg]` switches off) */
        if (!ps) {
            ps = bxc_arena_alloc(cx->a, (np + 1) * sizeof *ps);
            for (uint32_t i = 0; i < np; i++) {
                const bxc_param *p = fn->params.items[i];
                if (!p->pat || p->pat->kind != BXC_PAT_IDENT || !p->type || !p->type->ty) return;  /* unchecked */
                ps[i].name = p->pat->name.name;
                ps[i].cname = bxc_emit_ident(cx->a, p->pat->name.name);
                ps[i].type = meta_param_type(p->type->ty, 2);
                ps[i].by_pointer = true;
                if (!ps[i].type) return;
            }
        }
        const char *pn = fn->params.items[j]->pat->name.name;
        if (!bxc_emit_claim(cx, bxc_arena_printf(cx->a, "%s_scalar_%s", prefix, pn), arg->span,
                            bxc_arena_printf(cx->a, "the scalar encoding of argument `%s` of method `%s`", pn,
                                             fn->name.name)))
            continue;
        emit_fn(cx, bxc_arena_printf(cx->a, "%s_scalar_%s", prefix, pn),
                bxc_arena_printf(cx->a, "%s scalar %s", prefix, pn), ps, np, enc->ty, enc, NULL, cond, NULL);
        info->scalar[j] = enc->ty;
    }
}

void bxc_emit_method_meta(bxc_emit_ctx *cx, const char *prefix, const bxc_method_rec *rec, const char *cond,
                          bxc_emit_meta_info *info) {
    const bxc_fn *fn = rec->fn;
    memset(info, 0, sizeof *info);
    info->rec = rec;
    info->scalar = bxc_arena_alloc(cx->a, (fn->params.len + 1) * sizeof *info->scalar);
    memset(info->scalar, 0, (fn->params.len + 1) * sizeof *info->scalar);
    emit_scalar_encodings(cx, prefix, rec, cond, info);
    const bxc_attr_arg *dt = rec->dtype, *sh = rec->shape, *me = rec->meta;
    if (!dt && !sh && !me) return;
    uint32_t np = fn->params.len;
    mparam *ps = bxc_arena_alloc(cx->a, (np + 1) * sizeof *ps);
    bxc_type **raw = bxc_arena_alloc(cx->a, (np + 1) * sizeof *raw);
    for (uint32_t i = 0; i < np; i++) {
        const bxc_param *p = fn->params.items[i];
        if (!p->pat || p->pat->kind != BXC_PAT_IDENT || !p->type || !p->type->ty) return;  /* unchecked (cfg off) */
        raw[i] = p->type->ty;
        ps[i].name = p->pat->name.name;
        ps[i].cname = bxc_emit_ident(cx->a, p->pat->name.name);
    }
    struct { const bxc_attr_arg *arg; const char *suffix; int form; bxc_type *ret; } fields[2] = {
        {dt, "meta_dtype", 0, bxc_type_dtype()}, {sh, "meta_shape", 1, bxc_type_shape()}};
    for (int f = 0; f < 2; f++) {
        if (!fields[f].arg || !fields[f].arg->value || !fields[f].arg->value->ty) continue;
        bool bad = false;
        for (uint32_t i = 0; i < np; i++) {
            bxc_type *t = T(raw[i]);
            ps[i].type = meta_param_type(t, fields[f].form);
            /* a dtype is passed by value; everything else is borrowed */
            ps[i].by_pointer = !(t->kind == BXC_TYPE_TENSOR && fields[f].form == 0);
            if (!ps[i].type) bad = true;
        }
        if (bad) continue;
        const char *fname = bxc_arena_join(cx->a, prefix, "_", fields[f].suffix, NULL);
        if (!bxc_emit_claim_fmt(cx, fname, fields[f].arg->span, "the `%s` metadata function of method `%s`",
                                fields[f].arg->path->segs.items[0].name, fn->name.name))
            continue;
        emit_fn(cx, fname, bxc_arena_join(cx->a, prefix, " ", fields[f].arg->path->segs.items[0].name, NULL), ps, np,
                fields[f].ret, fields[f].arg->value, NULL, cond, NULL);
        if (f == 0) info->dtype = true;
        else info->shape = true;
    }
    if (me && me->value && me->value->ty) {
        const bxc_expr *v = me->value;
        bxc_type *ft = T(v->ty);
        if (!ft || ft->kind != BXC_TYPE_FN) return;
        if (!bxc_emit_claim_fmt(cx, bxc_arena_join(cx->a, prefix, "_meta", NULL), me->span,
                                "the `meta` function of method `%s`", fn->name.name, NULL))
            return;
        for (uint32_t i = 0; i < np; i++) {
            ps[i].type = meta_param_type(raw[i], 2);
            ps[i].by_pointer = true;
            if (!ps[i].type) return;
        }
        if (v->kind == BXC_EXPR_CLOSURE) {
            /* closure parameters rename the method's */
            mparam *cps = bxc_arena_alloc(cx->a, (np + 1) * sizeof *cps);
            if (v->closure.params.len != np) return;
            for (uint32_t i = 0; i < np; i++) {
                cps[i] = ps[i];
                const bxc_param *cp = v->closure.params.items[i];
                if (!cp->pat || cp->pat->kind != BXC_PAT_IDENT) return;
                cps[i].name = cp->pat->name.name;
                cps[i].cname = bxc_emit_ident(cx->a, cp->pat->name.name);
            }
            emit_fn(cx, bxc_arena_join(cx->a, prefix, "_meta", NULL), bxc_arena_join(cx->a, prefix, " meta", NULL), cps,
                    np, ft->fn.ret, v->closure.body, NULL, cond, NULL);
            info->meta = true;
            info->meta_ret = ft->fn.ret;
        } else if (v->kind == BXC_EXPR_PATH) {
            /* `meta = helper`: a call of the helper with every argument */
            if (v->res.kind != BXC_RES_FN || !v->res.fn) return;
            const bxc_module *mod = v->res.module;
            const char *last = v->res.fn->name.name;
            const char *plist = "", *alist = "";
            const char *rct = bxc_emit_ctype_of(cx, ft->fn.ret);
            for (uint32_t i = 0; i < np; i++) {
                plist = bxc_arena_printf(cx->a, "%sconst %s *%s, ", plist, bxc_emit_ctype_of(cx, ps[i].type), ps[i].cname);
                alist = bxc_arena_printf(cx->a, "%s%s, ", alist, ps[i].cname);
            }
            if (cx->plan) return;   /* names only: the types are registered */
            if (cond) {
                bxc_emit_printf(&cx->protos_h, "#if %s\n", cond);
                bxc_emit_printf(&cx->code_c, "#if %s\n", cond);
            }
            const char *sig = bxc_arena_printf(cx->a, "bool %s_meta(%s%s *bext_out, bext_meta_error *err)", prefix,
                                               plist, rct);
            bxc_emit_printf(&cx->protos_h, "%s;\n", sig);
            bxc_emit_printf(&cx->code_c, "%s {\n  return %s(%sbext_out, err);\n}\n\n", sig,
                            bxc_emit_helper_name(cx, mod, last), alist);
            info->meta = true;
            info->meta_ret = ft->fn.ret;
            if (cond) {
                bxc_emit_puts(&cx->protos_h, "#endif\n");
                bxc_emit_puts(&cx->code_c, "#endif\n\n");
            }
        }
    }
}
