/* check_expr.c — types the metadata expression language (language.md §7).
 *
 * Bidirectional checking with unification: chk_expr(e, expected) passes the
 * type the context needs down (so `let x: u32 = 1` and `s.push(1)` type
 * their literals), computes the expression's type, records it on e->ty and
 * reports "expected X, found Y" when the two disagree.  Integer and float
 * literals without a context become inference variables that the first
 * use resolves (`let mut i = 0; while i < s.len()` makes i a usize);
 * chk_zonk_* then writes the resolutions (or the i64 / f64 defaults) back
 * onto the tree.  A reported error yields BXC_TYPE_ERROR, which unifies
 * with everything, so one mistake produces one message.
 *
 * Two modes: CHK_MODE_META is the metadata language of helper fns, field
 * expressions, `meta` and the REPL; CHK_MODE_TENSOR additionally allows
 * tensor arithmetic and the runtime's tensor ops (names, arity and
 * operand kinds from tensor_ops.h, shared with the C generator), for
 * default bodies and backward formulas (§3, §6).
 *
 * Deliberate leniencies (documented for the interpreter): arithmetic and
 * comparisons see through references (`*a + 1` and `a + 1` both work for
 * `a: &usize`, as Rust's operator impls on references do), and method
 * calls and field accesses auto-dereference. */
#include <stdio.h>
#include <stdlib.h>

#include "check_internal.h"
#include "tensor_ops.h"

/* ---- scopes ----------------------------------------------------------------- */

bxc_scope *bxc_scope_new(bxc_arena *a, bxc_scope *parent) {
    bxc_scope *s = bxc_arena_alloc(a, sizeof *s);
    s->parent = parent;
    return s;
}

bxc_binding *bxc_scope_bind(bxc_arena *a, bxc_scope *s, const char *name,
                            struct bxc_type *type, bool is_mut) {
    bxc_binding *b = bxc_arena_alloc(a, sizeof *b);
    b->name = bxc_arena_strdup(a, name);
    b->type = type;
    b->is_mut = is_mut;
    b->span = bxc_span_none();
    b->next = s->first;
    s->first = b;
    return b;
}

bxc_binding *bxc_scope_lookup(const bxc_scope *s, const char *name) {
    for (; s; s = s->parent)
        for (bxc_binding *b = s->first; b; b = b->next)
            if (strcmp(b->name, name) == 0) return b;
    return NULL;
}

bxc_scope *chk_scope_push(chk_fn *f) {
    f->scope = bxc_scope_new(f->cx->arena, f->scope);
    return f->scope;
}

void chk_scope_pop(chk_fn *f) {
    if (f->scope) f->scope = f->scope->parent;
}

void chk_bind(chk_fn *f, const char *name, bxc_type *t, bool is_mut, bxc_span span) {
    if (!f->scope) chk_scope_push(f);
    bxc_binding *b = bxc_scope_bind(f->cx->arena, f->scope, name, t, is_mut);
    b->span = span;
}

void chk_fn_init(chk_fn *f, chk_ctx *cx, chk_module *cm, chk_mode mode) {
    memset(f, 0, sizeof *f);
    f->cx = cx;
    f->cm = cm;
    f->mode = mode;
}

void chk_bind_pat(chk_fn *f, bxc_pat *p, bxc_type *t) {
    if (!p) return;
    p->ty = t;
    switch (p->kind) {
    case BXC_PAT_IDENT:
        chk_bind(f, p->name.name, t, p->is_mut, p->name.span);
        break;
    case BXC_PAT_TUPLE: {
        bxc_type *r = bxc_type_resolve(t);
        if (r->kind == BXC_TYPE_TUPLE && r->tuple.n == p->elems.len) {
            for (uint32_t i = 0; i < p->elems.len; i++)
                chk_bind_pat(f, p->elems.items[i], r->tuple.elems[i]);
            break;
        }
        if (!bxc_type_is_error(r))
            chk_error(f->cx, CHK_E_MISMATCH, p->span,
                      "expected a tuple of %u elements, found `%s`", p->elems.len,
                      chk_tn(f->cx, r));
        for (uint32_t i = 0; i < p->elems.len; i++)
            chk_bind_pat(f, p->elems.items[i], bxc_type_error());
        break;
    }
    default:
        break;
    }
}

/* ---- unification -------------------------------------------------------------- */

static bool occurs(bxc_type *v, bxc_type *t) {
    t = bxc_type_resolve(t);
    return t == v;
}

bool chk_unify(chk_ctx *cx, bxc_type *a, bxc_type *b) {
    (void)cx;
    a = bxc_type_resolve(a);
    b = bxc_type_resolve(b);
    if (!a || !b || a == b) return true;
    if (a->kind == BXC_TYPE_ERROR || b->kind == BXC_TYPE_ERROR) return true;
    if (a->kind == BXC_TYPE_NEVER || b->kind == BXC_TYPE_NEVER) return true;
    /* Type parameters of generic signatures are opaque: accept. */
    if (a->kind == BXC_TYPE_GENERIC || b->kind == BXC_TYPE_GENERIC) return true;
    if (a->kind == BXC_TYPE_VAR || b->kind == BXC_TYPE_VAR) {
        bxc_type *v = a->kind == BXC_TYPE_VAR ? a : b;
        bxc_type *o = v == a ? b : a;
        if (o->kind == BXC_TYPE_VAR) {
            if (o->var.is_float != v->var.is_float) return false;
            if (!occurs(v, o)) v->var.link = o;
            return true;
        }
        if (v->var.is_float ? o->kind != BXC_TYPE_FLOAT : o->kind != BXC_TYPE_INT)
            return false;
        v->var.link = o;
        return true;
    }
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case BXC_TYPE_INT: return a->int_kind == b->int_kind;
    case BXC_TYPE_FLOAT: return a->float_kind == b->float_kind;
    case BXC_TYPE_TENSOR: return a->tensor_kind == b->tensor_kind;
    case BXC_TYPE_REF:
        /* `&mut T` may be used where `&T` is expected. */
        if (a->ref.is_mut && !b->ref.is_mut) return false;
        return chk_unify(cx, a->ref.inner, b->ref.inner);
    case BXC_TYPE_TUPLE:
        if (a->tuple.n != b->tuple.n) return false;
        for (uint32_t i = 0; i < a->tuple.n; i++)
            if (!chk_unify(cx, a->tuple.elems[i], b->tuple.elems[i])) return false;
        return true;
    case BXC_TYPE_STRUCT:
    case BXC_TYPE_ENUM:
        return a->decl == b->decl;
    case BXC_TYPE_FN:
        if (a->fn.nparams != b->fn.nparams) return false;
        for (uint32_t i = 0; i < a->fn.nparams; i++)
            if (!chk_unify(cx, a->fn.params[i], b->fn.params[i])) return false;
        return chk_unify(cx, a->fn.ret, b->fn.ret);
    case BXC_TYPE_RANGE:
        return chk_unify(cx, a->range_elem, b->range_elem);
    default:
        return true;
    }
}

/* "`usize`", or "integer" for an unresolved literal (as rustc says). */
static const char *describe(chk_ctx *cx, bxc_type *t) {
    t = bxc_type_resolve(t);
    if (t && t->kind == BXC_TYPE_VAR)
        return t->var.is_float ? "floating-point number" : "integer";
    return bxc_arena_printf(cx->arena, "`%s`", chk_tn(cx, t));
}

static void mismatch(chk_fn *f, bxc_type *expected, bxc_type *found, bxc_span span) {
    chk_ctx *cx = f->cx;
    bxc_diag *d = chk_error(cx, CHK_E_MISMATCH, span, "expected %s, found %s",
                            describe(cx, expected), describe(cx, found));
    bxc_type *e = bxc_type_resolve(expected), *g = bxc_type_resolve(found);
    if (e->kind == BXC_TYPE_REF && bxc_type_equal(e->ref.inner, g))
        chk_help(cx, d, "borrow it with `&`");
    else if (g->kind == BXC_TYPE_REF && bxc_type_equal(g->ref.inner, e))
        chk_help(cx, d, bxc_type_is_scalar(e) ? "dereference it with `*`"
                                              : "copy it with `.clone()`");
    else if (bxc_type_is_numeric(e) && bxc_type_is_numeric(g) &&
             e->kind != BXC_TYPE_VAR && g->kind != BXC_TYPE_VAR)
        chk_help(cx, d, "convert with `as %s`", chk_tn(cx, e));
}

bool chk_coerce(chk_fn *f, bxc_type *expected, bxc_type *found, bxc_span span) {
    if (chk_unify(f->cx, expected, found)) return true;
    mismatch(f, expected, found, span);
    return false;
}

/* ---- helpers -------------------------------------------------------------------- */

static bxc_type *err(void) { return bxc_type_error(); }
static bxc_type *usize_t(void) { return bxc_type_int(BXC_USIZE); }

/* An index `s[i]` or a dim of a shape literal `[n, 2]`: a `usize`, read
 * through references as Rust's auto-deref does for operators, because
 * metadata code binds ordinary arguments as `&T` (language.md §5) and
 * `[n]` for `n: usize` must not need a `*`.  The interpreter and the C
 * generator already read through references here. */
static void index_operand(chk_fn *f, bxc_expr *e) {
    bxc_type *t = chk_expr(f, e, NULL);
    bxc_type *r = bxc_type_resolve(t);
    if (r->kind == BXC_TYPE_REF) t = bxc_type_strip_refs(r);
    if (!bxc_type_is_error(t)) chk_coerce(f, usize_t(), t, e->span);
}

static const char *path_str(chk_ctx *cx, const bxc_path *p) {
    if (!p || !p->segs.len) return "?";
    const char *s = p->segs.items[0].name;
    for (uint32_t i = 1; i < p->segs.len; i++)
        s = bxc_arena_printf(cx->arena, "%s::%s", s, p->segs.items[i].name);
    return s;
}

static bool is_builtin_type_name(const char *n) {
    return strcmp(n, "DType") == 0 || strcmp(n, "Shape") == 0 ||
           strcmp(n, "TensorSpec") == 0;
}

/* A type named by a path used as a qualifier (`Enum::V`, `Alias::V`). */
static bxc_type *qualifier_type(chk_fn *f, const bxc_path *p, uint32_t nseg) {
    if (nseg != 1) return NULL;
    /* `Self::Variant`, `Self::new()` inside an impl block */
    if (f->cx->self_type && strcmp(p->segs.items[0].name, "Self") == 0) return f->cx->self_type;
    chk_symbol *s = chk_lookup(f->cm, p->segs.items[0].name);
    if (!s) return NULL;
    if (s->kind == CHK_SYM_TYPE) return s->type;
    if (s->kind == CHK_SYM_ALIAS) {
        /* aliases resolve lazily through chk_resolve_types; by body time
         * they are resolved */
        return s->type;
    }
    return NULL;
}

/* ---- resolution records (ast.h bxc_res) ------------------------------------------ */

static bxc_res *res_set(bxc_expr *e, bxc_res_kind kind) {
    e->res = (bxc_res){.kind = kind};
    return &e->res;
}

static void res_fn(bxc_expr *e, const chk_symbol *s) {
    bxc_res *r = res_set(e, BXC_RES_FN);
    r->item = s->item;
    r->fn = s->item ? s->item->fn : NULL;
    r->module = s->module;
}

static void res_impl_fn(bxc_expr *e, const chk_method *im) {
    bxc_res *r = res_set(e, BXC_RES_IMPL_FN);
    r->item = im->impl;
    r->fn = im->fn;
    r->module = im->cm->mod;
    r->type = im->self_type;
}

static void res_variant(bxc_expr *e, bxc_type *enum_ty, const bxc_type_variant *v) {
    bxc_res *r = res_set(e, BXC_RES_VARIANT);
    r->type = enum_ty;
    r->index = (uint32_t)(v - enum_ty->decl->variants);
}

/* ---- places and mutability ------------------------------------------------------ */

/* Whether `e` names something that may be mutated; reports why not. */
static bool check_mutable(chk_fn *f, bxc_expr *e, const char *action) {
    chk_ctx *cx = f->cx;
    switch (e->kind) {
    case BXC_EXPR_PATH: {
        if (e->path->segs.len != 1) break;
        const char *n = e->path->segs.items[0].name;
        bxc_binding *b = bxc_scope_lookup(f->scope, n);
        if (!b) return true;   /* unknown name: already reported */
        bxc_type *t = bxc_type_resolve(b->type);
        if (t->kind == BXC_TYPE_REF) {
            if (t->ref.is_mut) return true;
            bxc_diag *d = chk_error(cx, CHK_E_NOT_MUTABLE, e->span,
                                    "cannot %s `%s`: it is a `&` reference", action, n);
            chk_help(cx, d, "copy it first: `let mut %s = %s.clone();`", n, n);
            return false;
        }
        if (b->is_mut) return true;
        bxc_diag *d = chk_error(cx, CHK_E_NOT_MUTABLE, e->span,
                                "cannot %s `%s`, which is not declared `mut`", action, n);
        chk_help(cx, d, "declare it `let mut %s`", n);
        return false;
    }
    case BXC_EXPR_FIELD:
        return check_mutable(f, e->field.object, action);
    case BXC_EXPR_TUPLE_FIELD:
        return check_mutable(f, e->tuple_field.object, action);
    case BXC_EXPR_INDEX:
        return check_mutable(f, e->index.object, action);
    case BXC_EXPR_UNARY:
        if (e->unary.op == BXC_UN_DEREF) {
            bxc_type *t = bxc_type_resolve(e->unary.operand->ty);
            if (t && t->kind == BXC_TYPE_REF && !t->ref.is_mut) {
                chk_error(cx, CHK_E_NOT_MUTABLE, e->span,
                          "cannot %s through a `&` reference", action);
                return false;
            }
        }
        return true;
    default:
        break;
    }
    return true;   /* temporaries may be mutated (`a.clone().push(1)`) */
}

static bool is_place(const bxc_expr *e) {
    switch (e->kind) {
    case BXC_EXPR_PATH: return e->path->segs.len == 1;
    case BXC_EXPR_FIELD:
    case BXC_EXPR_TUPLE_FIELD:
    case BXC_EXPR_INDEX: return true;
    case BXC_EXPR_UNARY: return e->unary.op == BXC_UN_DEREF;
    default: return false;
    }
}

/* ---- the expression checker ------------------------------------------------------- */

static bxc_type *check_block(chk_fn *f, bxc_block *b, bxc_type *expected);
static uint32_t first_error_stmt(const bxc_block *b);
static bxc_type *check_broken_block(chk_fn *f, bxc_block *b, uint32_t bad);

static bxc_type *check_args(chk_fn *f, const char *callee, bxc_span span,
                            bxc_expr_list *args, bxc_type *const *params,
                            uint32_t nparams, bxc_type *ret) {
    bool ok = true;
    if (args->len != nparams) {
        chk_error(f->cx, CHK_E_ARG_COUNT, span, "`%s` takes %u argument%s but %u %s given",
                  callee, nparams, nparams == 1 ? "" : "s", args->len,
                  args->len == 1 ? "was" : "were");
        ok = false;
    }
    for (uint32_t i = 0; i < args->len; i++)
        chk_expr(f, args->items[i], i < nparams ? params[i] : NULL);
    return ok ? ret : err();
}

/* A tensor op of the runtime's table (tensor_ops.h) applied to `recv` and
 * `args`: the receiver's kind, the arity and each argument's kind as the
 * table says; the result is the op's output kind.  `fn_form`: written
 * `op(recv, ..)`, which also takes a float scalar for the unary ops that
 * have a <math.h> twin (`erf(0.5)`). */
static bxc_type *check_tensor_op(chk_fn *f, const bxc_top *op, bxc_expr *recv, bxc_expr *const *args,
                                 uint32_t nargs, bool fn_form, bxc_span span) {
    chk_ctx *cx = f->cx;
    bool ok = true;
    bxc_type *rt = bxc_type_resolve(bxc_type_strip_refs(chk_expr(f, recv, NULL)));
    if (bxc_type_is_error(rt)) ok = false;
    else if (fn_form && nargs == 0 && op->cmath && bxc_type_is_float(rt)) {
        return rt;
    } else if (rt->kind != BXC_TYPE_TENSOR || !(bxc_top_kind_bit((int)rt->tensor_kind) & op->kinds)) {
        bxc_diag *d = chk_error(cx, CHK_E_MISMATCH, recv->span, "expected %s, found %s",
                                bxc_top_kinds_str(op->kinds), describe(cx, rt));
        chk_help(cx, d, "`%s` is an op on %s%s", op->name, bxc_top_kinds_str(op->kinds),
                 op->cmath && fn_form ? " or a float" : "");
        ok = false;
    }
    if (nargs != op->nargs) {
        uint32_t want = op->nargs + (fn_form ? 1u : 0u), got = nargs + (fn_form ? 1u : 0u);
        chk_error(cx, CHK_E_ARG_COUNT, span, "`%s` takes %u argument%s but %u %s given", op->name, want,
                  want == 1 ? "" : "s", got, got == 1 ? "was" : "were");
        ok = false;
    }
    for (uint32_t i = 0; i < nargs; i++) {
        bxc_type *at = bxc_type_resolve(bxc_type_strip_refs(chk_expr(f, args[i], NULL)));
        if (i >= op->nargs || bxc_type_is_error(at)) continue;
        bxc_top_arg k = op->args[i];
        const char *want = NULL;
        bool good;
        switch (k) {
        case BXC_TOP_ARG_DIM:
        case BXC_TOP_ARG_INT:
            good = bxc_type_is_int(at);
            want = k == BXC_TOP_ARG_DIM ? "an integer dim" : "an integer";
            break;
        case BXC_TOP_ARG_FLOAT:
            good = bxc_type_is_numeric(at);
            want = "a number";
            break;
        case BXC_TOP_ARG_INDICES:
            good = at->kind == BXC_TYPE_TENSOR && at->tensor_kind == BXC_TENSOR_INT;
            want = "IntTensor";
            break;
        case BXC_TOP_ARG_MASK:
            good = at->kind == BXC_TYPE_TENSOR && at->tensor_kind == BXC_TENSOR_BOOL;
            want = "BoolTensor";
            break;
        default: {   /* a tensor of the receiver's kind (or a number) */
            bool tensor_ok = at->kind == BXC_TYPE_TENSOR &&
                             (rt->kind != BXC_TYPE_TENSOR || at->tensor_kind == rt->tensor_kind);
            bool num_ok = k == BXC_TOP_ARG_OPERAND && op->scalar_cfn && bxc_type_is_numeric(at);
            good = tensor_ok || num_ok;
            const char *tk = rt->kind == BXC_TYPE_TENSOR ? chk_tn(cx, rt) : bxc_top_kinds_str(op->kinds);
            want = num_ok || k != BXC_TOP_ARG_OPERAND || !op->scalar_cfn
                       ? tk
                       : bxc_arena_printf(cx->arena, "%s or a number", tk);
            break;
        }
        }
        if (!good) {
            bxc_diag *d = chk_error(cx, CHK_E_MISMATCH, args[i]->span, "expected %s, found %s", want,
                                    describe(cx, at));
            chk_help(cx, d, "argument %u of `%s`", i + (fn_form ? 2u : 1u), op->name);
            ok = false;
        }
    }
    if (!ok) return err();
    switch (op->out) {
    case BXC_TOP_OUT_BOOL: return bxc_type_tensor(BXC_TENSOR_BOOL);
    case BXC_TOP_OUT_INT: return bxc_type_tensor(BXC_TENSOR_INT);
    default: return rt;
    }
}

static bxc_type *check_path(chk_fn *f, bxc_expr *e) {
    chk_ctx *cx = f->cx;
    bxc_path *p = e->path;
    uint32_t n = p->segs.len;
    const char *first = p->segs.items[0].name;
    if (n == 1) {
        bxc_binding *b = bxc_scope_lookup(f->scope, first);
        if (b) {
            res_set(e, BXC_RES_LOCAL)->decl = b->span;
            return b->type;
        }
        chk_symbol *s = chk_lookup(f->cm, first);
        if (s && s->kind == CHK_SYM_FN) {
            res_fn(e, s);
            return chk_fn_signature(cx, s);
        }
        if (s && s->kind == CHK_SYM_TYPE && s->type->kind == BXC_TYPE_STRUCT &&
            s->type->decl->item && s->type->decl->item->struct_.is_unit) {
            res_set(e, BXC_RES_STRUCT)->type = s->type;
            return s->type;
        }
        if (s && (s->kind == CHK_SYM_TYPE || s->kind == CHK_SYM_ALIAS)) {
            chk_error(cx, CHK_E_BAD_EXPR, e->span, "expected a value, found type `%s`", first);
            return err();
        }
        /* did-you-mean over the visible bindings */
        const char *cands[64];
        uint32_t nc = 0;
        for (const bxc_scope *sc = f->scope; sc && nc < 64; sc = sc->parent)
            for (bxc_binding *bb = sc->first; bb && nc < 64; bb = bb->next) cands[nc++] = bb->name;
        bxc_diag *d = chk_error(cx, CHK_E_UNKNOWN_NAME, e->span, "unknown name `%s`", first);
        const char *near = chk_nearest(first, cands, nc);
        if (!near) {
            uint32_t nf;
            const char **fns = chk_names_of(cx, f->cm, 1 << CHK_SYM_FN, &nf);
            near = chk_nearest(first, fns, nf);
        }
        if (near) chk_help(cx, d, "did you mean `%s`?", near);
        return err();
    }
    const char *last = p->segs.items[n - 1].name;
    if (n == 2 && strcmp(first, "DType") == 0) {
        for (uint32_t i = 0; i < BXC_DT_COUNT; i++)
            if (strcmp(bxc_dtype_const_names[i], last) == 0) {
                res_set(e, BXC_RES_DTYPE)->index = i;
                return bxc_type_dtype();
            }
        bxc_diag *d = chk_error(cx, CHK_E_UNKNOWN_NAME, p->segs.items[1].span,
                                "no constant `%s` on `DType`", last);
        const char *near = chk_nearest(last, bxc_dtype_const_names, BXC_DT_COUNT);
        chk_help(cx, d, near ? "did you mean `DType::%s`?" : "%s",
                 near ? near : "one of F32, F64, F16, BF16, I32, I64, U8, Bool");
        return err();
    }
    bxc_type *q = qualifier_type(f, p, n - 1);
    if (q) {
        q = bxc_type_resolve(q);
        if (q->kind == BXC_TYPE_ERROR) return err();
        /* `Type::f` names an impl fn; a variant of the same name wins, as
         * the interpreter looks variants up first */
        chk_method *im = chk_find_method(cx, q, last);
        if (im && !(q->kind == BXC_TYPE_ENUM && bxc_type_decl_variant(q->decl, last))) {
            /* calls are handled in check_call; fn values are helper fns only */
            bxc_diag *d = chk_error(cx, CHK_E_BAD_EXPR, e->span,
                                    "`%s::%s` is an impl fn, which can only be called", q->decl->name, last);
            chk_help(cx, d, "call it (`%s::%s(..)`), or wrap it in a helper fn", q->decl->name, last);
            return err();
        }
        if (q->kind == BXC_TYPE_ENUM) {
            bxc_type_variant *v = bxc_type_decl_variant(q->decl, last);
            if (!v) {
                chk_error(cx, CHK_E_UNKNOWN_NAME, p->segs.items[n - 1].span,
                          "no variant `%s` in enum `%s`", last, q->decl->name);
                return err();
            }
            if (v->shape != BXC_VSHAPE_STRUCT) res_variant(e, q, v);
            if (v->shape == BXC_VSHAPE_UNIT) return q;
            if (v->shape == BXC_VSHAPE_TUPLE) {
                bxc_type *ps[64];
                uint32_t np = v->nfields < 64 ? v->nfields : 64;
                for (uint32_t i = 0; i < np; i++) ps[i] = v->fields[i].type;
                return bxc_type_fn(cx->arena, ps, np, q);
            }
            bxc_diag *d = chk_error(cx, CHK_E_BAD_EXPR, e->span,
                                    "`%s::%s` is a struct variant", q->decl->name, last);
            chk_help(cx, d, "write `%s::%s { ... }`", q->decl->name, last);
            return err();
        }
        chk_error(cx, CHK_E_UNKNOWN_NAME, e->span, "no associated item `%s` on `%s`", last,
                  chk_tn(cx, q));
        return err();
    }
    if (n == 2 && is_builtin_type_name(first)) {
        chk_error(cx, CHK_E_BAD_EXPR, e->span,
                  "`%s::%s` is not a value (call it, or use a constant)", first, last);
        return err();
    }
    chk_symbol *s = chk_lookup_path(cx, f->cm, p);
    if (s && s->kind == CHK_SYM_FN) {
        res_fn(e, s);
        return chk_fn_signature(cx, s);
    }
    chk_module *m = chk_path_module(cx, f->cm, p);
    if (m && !s) {
        uint32_t nc;
        const char **cands = chk_names_of(cx, m, 1 << CHK_SYM_FN, &nc);
        bxc_diag *d = chk_error(cx, CHK_E_UNKNOWN_NAME, p->segs.items[n - 1].span,
                                "module `%s` has no item `%s`", m->mod->name, last);
        const char *near = chk_nearest(last, cands, nc);
        if (near) chk_help(cx, d, "did you mean `%s`?", near);
        return err();
    }
    chk_error(cx, CHK_E_UNKNOWN_NAME, e->span, "unknown name `%s`", path_str(cx, p));
    return err();
}

static bxc_type *check_call(chk_fn *f, bxc_expr *e) {
    chk_ctx *cx = f->cx;
    bxc_expr *callee = e->call.callee;
    bxc_expr_list *args = &e->call.args;
    if (callee->kind == BXC_EXPR_PATH) {
        bxc_path *p = callee->path;
        uint32_t n = p->segs.len;
        const char *first = p->segs.items[0].name;
        const char *last = p->segs.items[n - 1].name;
        bool shadowed = n == 1 && bxc_scope_lookup(f->scope, first) != NULL;
        if (n == 2 && strcmp(first, "Shape") == 0) {
            callee->ty = err();
            if (strcmp(last, "new") == 0) {
                res_set(e, BXC_RES_BUILTIN_FN)->index = BXC_BFN_SHAPE_NEW;
                callee->res = e->res;
                bxc_type *r = check_args(f, "Shape::new", e->span, args, NULL, 0, bxc_type_shape());
                callee->ty = bxc_type_fn(cx->arena, NULL, 0, bxc_type_shape());
                return r;
            }
            chk_error(cx, CHK_E_UNKNOWN_NAME, p->segs.items[1].span,
                      "no function `%s` on `Shape`", last);
            for (uint32_t i = 0; i < args->len; i++) chk_expr(f, args->items[i], NULL);
            return err();
        }
        if (n == 2 && strcmp(first, "TensorSpec") == 0) {
            callee->ty = err();
            if (strcmp(last, "new") == 0) {
                res_set(e, BXC_RES_BUILTIN_FN)->index = BXC_BFN_SPEC_NEW;
                callee->res = e->res;
                bxc_type *ps[2] = {bxc_type_shape(), bxc_type_dtype()};
                callee->ty = bxc_type_fn(cx->arena, ps, 2, bxc_type_spec());
                return check_args(f, "TensorSpec::new", e->span, args, ps, 2, bxc_type_spec());
            }
            chk_error(cx, CHK_E_UNKNOWN_NAME, p->segs.items[1].span,
                      "no function `%s` on `TensorSpec`", last);
            for (uint32_t i = 0; i < args->len; i++) chk_expr(f, args->items[i], NULL);
            return err();
        }
        if (n == 1 && !shadowed && strcmp(first, "panic") == 0 && !chk_lookup(f->cm, first)) {
            /* panic("message") or panic("dims {} and {} clash", a, b): a
             * string literal, then one integer or bool per `{}` */
            callee->ty = err();
            res_set(e, BXC_RES_BUILTIN_FN)->index = BXC_BFN_PANIC;
            callee->res = e->res;
            bxc_expr *msg = args->len ? args->items[0] : NULL;
            if (!msg || msg->kind != BXC_EXPR_STRING) {
                bxc_diag *d = chk_error(cx, CHK_E_ARG_COUNT, msg ? msg->span : e->span,
                                        "expected a string literal, found %s",
                                        msg ? "an expression" : "no arguments");
                chk_help(cx, d, "write `panic(\"message\")`, with `{}` for each further argument");
                for (uint32_t i = 0; i < args->len; i++) chk_expr(f, args->items[i], NULL);
                return bxc_type_never();
            }
            msg->ty = bxc_type_str();
            uint32_t holes = 0;
            for (const char *c = msg->string_lit.value; c && (c = strstr(c, "{}")); c += 2) holes++;
            if (holes != args->len - 1)
                chk_error(cx, CHK_E_ARG_COUNT, e->span,
                          "expected %u argument%s after the message (one per `{}`), found %u", holes,
                          holes == 1 ? "" : "s", args->len - 1);
            for (uint32_t i = 1; i < args->len; i++) {
                bxc_type *t = bxc_type_resolve(bxc_type_strip_refs(chk_expr(f, args->items[i], NULL)));
                if (t->kind == BXC_TYPE_VAR && !t->var.is_float) chk_unify(cx, usize_t(), t);
                t = bxc_type_resolve(t);
                if (!bxc_type_is_error(t) && !bxc_type_is_int(t) && t->kind != BXC_TYPE_BOOL)
                    chk_error(cx, CHK_E_MISMATCH, args->items[i]->span,
                              "expected an integer or `bool` to format, found %s", describe(cx, t));
            }
            return bxc_type_never();
        }
        if (n == 1 && !shadowed && f->mode == CHK_MODE_TENSOR && bxc_top_find(first) &&
            !chk_lookup(f->cm, first)) {
            /* `erf(x)`, `sum_dim(x, 1)`: an op with its receiver first */
            callee->ty = err();
            const bxc_top *op = bxc_top_find(first);
            res_set(e, BXC_RES_TENSOR_OP)->op = op;
            callee->res = e->res;
            if (args->len == 0) {
                chk_error(cx, CHK_E_ARG_COUNT, e->span, "`%s` takes %u argument%s but 0 were given",
                          first, op->nargs + 1u, op->nargs ? "s" : "");
                return err();
            }
            return check_tensor_op(f, op, args->items[0], args->items + 1, args->len - 1, true, e->span);
        }
        if (n == 1 && !shadowed && !chk_lookup(f->cm, first)) {
            callee->ty = err();
            const char **cands;
            uint32_t nc;
            cands = chk_names_of(cx, f->cm, 1 << CHK_SYM_FN, &nc);
            bxc_diag *d = chk_error(cx, CHK_E_UNKNOWN_NAME, callee->span,
                                    "unknown function `%s`", first);
            const char *near = chk_nearest(first, cands, nc);
            if (!near && f->mode == CHK_MODE_TENSOR) {
                uint32_t nt;
                const char *const *ops = bxc_top_names(&nt);
                near = chk_nearest(first, ops, nt);
            }
            if (near) chk_help(cx, d, "did you mean `%s`?", near);
            for (uint32_t i = 0; i < args->len; i++) chk_expr(f, args->items[i], NULL);
            return err();
        }
    }
    if (callee->kind == BXC_EXPR_PATH && callee->path->segs.len >= 2) {
        /* `Type::f(..)`: an impl fn (a variant of the same name wins) */
        bxc_path *p = callee->path;
        uint32_t n = p->segs.len;
        bxc_type *q = qualifier_type(f, p, n - 1);
        q = q ? bxc_type_resolve(q) : NULL;
        const char *last = p->segs.items[n - 1].name;
        chk_method *im = q ? chk_find_method(cx, q, last) : NULL;
        if (im && !(q->kind == BXC_TYPE_ENUM && bxc_type_decl_variant(q->decl, last))) {
            bxc_type *ft = bxc_type_resolve(im->type);
            callee->ty = ft;
            res_impl_fn(callee, im);
            e->res = callee->res;
            if (ft->kind != BXC_TYPE_FN) {
                for (uint32_t i = 0; i < args->len; i++) chk_expr(f, args->items[i], NULL);
                return err();
            }
            return check_args(f, path_str(cx, p), e->span, args, ft->fn.params, ft->fn.nparams,
                              ft->fn.ret);
        }
    }
    bxc_type *ct = bxc_type_resolve(chk_expr(f, callee, NULL));
    if (ct->kind == BXC_TYPE_ERROR) {
        for (uint32_t i = 0; i < args->len; i++) chk_expr(f, args->items[i], NULL);
        return err();
    }
    if (ct->kind == BXC_TYPE_REF) ct = bxc_type_strip_refs(ct);
    if (ct->kind != BXC_TYPE_FN) {
        chk_error(cx, CHK_E_BAD_EXPR, callee->span, "`%s` is not a function",
                  chk_tn(cx, ct));
        for (uint32_t i = 0; i < args->len; i++) chk_expr(f, args->items[i], NULL);
        return err();
    }
    const char *name = callee->kind == BXC_EXPR_PATH ? path_str(cx, callee->path) : "closure";
    /* the call names what its callee names (a fn, a tuple variant, a local) */
    e->res = callee->res;
    return check_args(f, name, e->span, args, ct->fn.params, ct->fn.nparams, ct->fn.ret);
}

/* The result type of a builtin method (builtins.h, language.md §7). */
static bxc_type *builtin_ret(bxc_builtin_ret r) {
    switch (r) {
    case BXC_BRET_UNIT: return bxc_type_unit();
    case BXC_BRET_USIZE: return usize_t();
    case BXC_BRET_BOOL: return bxc_type_bool();
    }
    return bxc_type_unit();
}

static bxc_type *check_method(chk_fn *f, bxc_expr *e) {
    chk_ctx *cx = f->cx;
    bxc_expr *recv = e->method_call.receiver;
    const char *m = e->method_call.method.name;
    bxc_expr_list *args = &e->method_call.args;
    bxc_type *rt = chk_expr(f, recv, NULL);
    bxc_type *t = bxc_type_strip_refs(rt);
    if (bxc_type_is_error(t)) {
        for (uint32_t i = 0; i < args->len; i++) chk_expr(f, args->items[i], NULL);
        return err();
    }
    if (strcmp(m, "clone") == 0 && t->kind != BXC_TYPE_FN && t->kind != BXC_TYPE_VAR &&
        t->kind != BXC_TYPE_NEVER) {
        res_set(e, BXC_RES_CLONE);
        return check_args(f, "clone", e->span, args, NULL, 0, t);
    }
    bxc_builtin_method id = bxc_builtin_method_find(t->kind, m);
    if (id != BXC_BM_NONE) {
        const bxc_builtin_method_info *bm = &bxc_builtin_methods[id];
        res_set(e, BXC_RES_BUILTIN_METHOD)->index = (uint32_t)id;
        if (bm->mutates) check_mutable(f, recv, bxc_arena_printf(cx->arena, "call `%s` on", m));
        bxc_type *ps[2] = {usize_t(), usize_t()};
        _Static_assert(sizeof ps / sizeof *ps == 2, "builtin methods take at most two usize");
        return check_args(f, m, e->span, args, ps, bm->nparams, builtin_ret(bm->ret));
    }
    if (t->kind == BXC_TYPE_STRUCT || t->kind == BXC_TYPE_ENUM) {
        chk_method *im = chk_find_method(cx, t, m);
        if (im && !im->has_self) {
            bxc_diag *d = chk_error(cx, CHK_E_UNKNOWN_METHOD, e->method_call.method.span,
                                    "`%s::%s` is an associated function, not a method", t->decl->name, m);
            chk_help(cx, d, "call it as `%s::%s(...)`", t->decl->name, m);
            for (uint32_t i = 0; i < args->len; i++) chk_expr(f, args->items[i], NULL);
            return err();
        }
        if (im) {
            /* The receiver is auto-referenced / dereferenced (and copied
             * for a by-value `self`: plain data is passed by value). */
            bxc_type *ft = bxc_type_resolve(im->type);
            if (ft->kind != BXC_TYPE_FN) {
                for (uint32_t i = 0; i < args->len; i++) chk_expr(f, args->items[i], NULL);
                return err();
            }
            res_impl_fn(e, im);
            return check_args(f, m, e->span, args, ft->fn.params + 1, ft->fn.nparams - 1, ft->fn.ret);
        }
    }
    if (t->kind == BXC_TYPE_TENSOR && f->mode == CHK_MODE_TENSOR) {
        const bxc_top *op = bxc_top_find(m);
        if (op) res_set(e, BXC_RES_TENSOR_OP)->op = op;
        if (op) return check_tensor_op(f, op, recv, args->items, args->len, false, e->span);
        /* unknown op: did-you-mean over the op table */
        uint32_t nt;
        const char *const *ops = bxc_top_names(&nt);
        bxc_diag *d = chk_error(cx, CHK_E_UNKNOWN_METHOD, e->method_call.method.span,
                                "no method `%s` on `%s`", m, chk_tn(cx, t));
        const char *near = chk_nearest(m, ops, nt);
        if (near) chk_help(cx, d, "did you mean `%s`?", near);
        else chk_help(cx, d, "the tensor ops usable in bodies are listed in language.md §3");
        for (uint32_t i = 0; i < args->len; i++) chk_expr(f, args->items[i], NULL);
        return err();
    }
    /* unknown method: suggest a near name of this receiver */
    const char *cands[32];
    uint32_t nc = 0;
    for (int i = 0; i < BXC_BM_COUNT; i++)
        if (bxc_builtin_methods[i].recv == t->kind) cands[nc++] = bxc_builtin_methods[i].name;
    cands[nc++] = "clone";
    if (t->kind == BXC_TYPE_STRUCT || t->kind == BXC_TYPE_ENUM)
        for (chk_method *im = cx->methods; im && nc < 32; im = im->next)
            if (im->decl == t->decl && im->has_self) cands[nc++] = im->name;
    bxc_diag *d = chk_error(cx, CHK_E_UNKNOWN_METHOD, e->method_call.method.span,
                            "no method `%s` on `%s`", m, chk_tn(cx, t));
    const char *near = chk_nearest(m, cands, nc);
    if (near) {
        chk_help(cx, d, "did you mean `%s`?", near);
    } else if (t->kind == BXC_TYPE_SPEC && (strcmp(m, "shape") == 0 || strcmp(m, "dtype") == 0)) {
        chk_help(cx, d, "`%s` is a field: write `.%s`", m, m);
    } else if (nc > 1) {
        char list[256];
        size_t len = 0;
        list[0] = '\0';
        for (uint32_t i = 0; i < nc && len < sizeof list; i++) {
            int w = snprintf(list + len, sizeof list - len, "%s`%s`", i ? ", " : "", cands[i]);
            if (w > 0) len += (size_t)w;
        }
        chk_help(cx, d, "the methods of `%s` are %s", chk_tn(cx, t), list);
    }
    for (uint32_t i = 0; i < args->len; i++) chk_expr(f, args->items[i], NULL);
    return err();
}

static bxc_type *check_field(chk_fn *f, bxc_expr *e) {
    chk_ctx *cx = f->cx;
    const char *name = e->field.name.name;
    bxc_type *t = bxc_type_strip_refs(chk_expr(f, e->field.object, NULL));
    if (bxc_type_is_error(t)) return err();
    if (t->kind == BXC_TYPE_SPEC) {
        if (strcmp(name, "shape") == 0) {
            res_set(e, BXC_RES_SPEC_FIELD)->index = 0;
            return bxc_type_shape();
        }
        if (strcmp(name, "dtype") == 0) {
            res_set(e, BXC_RES_SPEC_FIELD)->index = 1;
            return bxc_type_dtype();
        }
    }
    if (t->kind == BXC_TYPE_STRUCT) {
        bxc_type_field *fd = bxc_type_decl_field(t->decl, name);
        if (fd) {
            bxc_res *r = res_set(e, BXC_RES_FIELD);
            r->type = t;
            r->index = (uint32_t)(fd - t->decl->fields);
            return fd->type;
        }
    }
    bxc_diag *d = chk_error(cx, CHK_E_UNKNOWN_FIELD, e->field.name.span,
                            "no field `%s` on `%s`", name, chk_tn(cx, t));
    if (t->kind == BXC_TYPE_STRUCT) {
        const char *cands[64];
        uint32_t nc = 0;
        for (uint32_t i = 0; i < t->decl->nfields && nc < 64; i++)
            if (t->decl->fields[i].name) cands[nc++] = t->decl->fields[i].name;
        const char *near = chk_nearest(name, cands, nc);
        if (near) chk_help(cx, d, "did you mean `%s`?", near);
    } else if (t->kind == BXC_TYPE_SHAPE) {
        /* `s.len`: the argument-free methods read like fields */
        const char *cands[BXC_BM_COUNT];
        uint32_t nc = 0;
        for (int i = 0; i < BXC_BM_COUNT; i++)
            if (bxc_builtin_methods[i].recv == BXC_TYPE_SHAPE && !bxc_builtin_methods[i].nparams &&
                !bxc_builtin_methods[i].mutates)
                cands[nc++] = bxc_builtin_methods[i].name;
        const char *near = chk_nearest(name, cands, nc);
        if (near) chk_help(cx, d, "call the method `%s()`", near);
    }
    return err();
}

static bxc_type *check_binary(chk_fn *f, bxc_expr *e, bxc_type *expected) {
    chk_ctx *cx = f->cx;
    bxc_binop op = e->binary.op;
    const char *ops = bxc_binop_str(op);
    if (op == BXC_BIN_AND || op == BXC_BIN_OR) {
        chk_expr(f, e->binary.lhs, bxc_type_bool());
        chk_expr(f, e->binary.rhs, bxc_type_bool());
        return bxc_type_bool();
    }
    bool cmp = op >= BXC_BIN_EQ;
    bool arith = op >= BXC_BIN_ADD && op <= BXC_BIN_REM;
    bxc_type *hint = NULL;
    if (arith && expected) {
        bxc_type *x = bxc_type_resolve(expected);
        if (bxc_type_is_numeric(x)) hint = x;
    }
    bxc_type *lt = bxc_type_strip_refs(chk_expr(f, e->binary.lhs, NULL));
    if (hint && bxc_type_resolve(lt)->kind == BXC_TYPE_VAR) chk_unify(cx, hint, lt);
    bxc_type *rt = bxc_type_strip_refs(chk_expr(f, e->binary.rhs, NULL));
    lt = bxc_type_resolve(lt);
    rt = bxc_type_resolve(rt);
    if (bxc_type_is_error(lt) || bxc_type_is_error(rt)) return cmp ? bxc_type_bool() : err();

    if (f->mode == CHK_MODE_TENSOR && (lt->kind == BXC_TYPE_TENSOR || rt->kind == BXC_TYPE_TENSOR)) {
        /* tensor operators are the table's binary ops (tensor_ops.h) */
        const bxc_top *top = bxc_top_operator(op);
        bxc_type *tt = lt->kind == BXC_TYPE_TENSOR ? lt : rt;
        bxc_type *ot = tt == lt ? rt : lt;
        if (!top) {
            chk_error(cx, CHK_E_BAD_OPERAND, e->span, "cannot apply `%s` to `%s` and `%s`", ops,
                      chk_tn(cx, lt), chk_tn(cx, rt));
            return err();
        }
        if (ot->kind == BXC_TYPE_TENSOR && ot->tensor_kind != tt->tensor_kind) {
            chk_error(cx, CHK_E_MISMATCH, e->span, "`%s` between `%s` and `%s`", ops,
                      chk_tn(cx, lt), chk_tn(cx, rt));
            return err();
        }
        if (!(bxc_top_kind_bit((int)tt->tensor_kind) & top->kinds)) {
            bxc_diag *d = chk_error(cx, CHK_E_BAD_OPERAND, e->span, "cannot apply `%s` to `%s`", ops,
                                    chk_tn(cx, tt));
            chk_help(cx, d, "`%s` (`%s`) is an op on %s", ops, top->name, bxc_top_kinds_str(top->kinds));
            return err();
        }
        if (ot->kind != BXC_TYPE_TENSOR) {
            if (!bxc_type_is_numeric(ot) || !top->scalar_cfn) {
                chk_error(cx, CHK_E_BAD_OPERAND, e->span, "cannot apply `%s` to `%s` and `%s`", ops,
                          chk_tn(cx, lt), chk_tn(cx, rt));
                return err();
            }
            if (ot == lt && !bxc_top_scalar_left_ok(top)) {
                bxc_diag *d = chk_error(cx, CHK_E_BAD_OPERAND, e->span,
                                        "`%s` with a number on the left of a tensor has no lowering", ops);
                chk_help(cx, d, "put the tensor on the left, or make the number a tensor");
                return err();
            }
        }
        if (top->out == BXC_TOP_OUT_BOOL) return bxc_type_tensor(BXC_TENSOR_BOOL);
        return tt;
    }
    if (arith || (op >= BXC_BIN_BITAND && op <= BXC_BIN_BITXOR)) {
        bool bits = !arith;
        bool ok_l = bits ? (bxc_type_is_int(lt) || lt->kind == BXC_TYPE_BOOL)
                         : bxc_type_is_numeric(lt);
        bool ok_r = bits ? (bxc_type_is_int(rt) || rt->kind == BXC_TYPE_BOOL)
                         : bxc_type_is_numeric(rt);
        if (!ok_l || !ok_r) {
            bxc_diag *d = chk_error(cx, CHK_E_BAD_OPERAND, (!ok_l ? e->binary.lhs : e->binary.rhs)->span,
                                    "cannot apply `%s` to `%s`", ops,
                                    chk_tn(cx, !ok_l ? lt : rt));
            if ((!ok_l ? lt : rt)->kind == BXC_TYPE_SHAPE)
                chk_help(cx, d, "index the shape (`s[i]`) or use `num_elements()`");
            return err();
        }
        if (!chk_unify(cx, lt, rt)) {
            bxc_diag *d = chk_error(cx, CHK_E_MISMATCH, e->binary.rhs->span,
                                    "expected %s, found %s", describe(cx, lt), describe(cx, rt));
            if (bxc_type_is_numeric(lt) && bxc_type_is_numeric(rt))
                chk_help(cx, d, "mixing numeric types needs a cast: `(..) as %s`",
                         chk_tn(cx, lt));
            return err();
        }
        return lt;
    }
    /* comparisons */
    bool ordered = op >= BXC_BIN_LT;
    if (!chk_unify(cx, lt, rt)) {
        bxc_diag *d = chk_error(cx, CHK_E_MISMATCH, e->binary.rhs->span, "expected %s, found %s",
                                describe(cx, lt), describe(cx, rt));
        if (bxc_type_is_numeric(lt) && bxc_type_is_numeric(rt))
            chk_help(cx, d, "mixing numeric types needs a cast: `(..) as %s`", chk_tn(cx, lt));
        return bxc_type_bool();
    }
    bool comparable = ordered ? bxc_type_is_numeric(lt)
                              : lt->kind != BXC_TYPE_FN && lt->kind != BXC_TYPE_TENSOR &&
                                    lt->kind != BXC_TYPE_RANGE;
    if (!comparable)
        chk_error(cx, CHK_E_BAD_OPERAND, e->span, "cannot compare `%s` with `%s`",
                  chk_tn(cx, lt), ops);
    return bxc_type_bool();
}

static bxc_type *check_unary(chk_fn *f, bxc_expr *e, bxc_type *expected) {
    chk_ctx *cx = f->cx;
    switch (e->unary.op) {
    case BXC_UN_NEG: {
        bxc_type *t = bxc_type_strip_refs(chk_expr(f, e->unary.operand, NULL));
        if (expected && bxc_type_resolve(t)->kind == BXC_TYPE_VAR &&
            bxc_type_is_numeric(expected))
            chk_unify(cx, expected, t);
        t = bxc_type_resolve(t);
        if (bxc_type_is_error(t)) return err();
        if (t->kind == BXC_TYPE_TENSOR && f->mode == CHK_MODE_TENSOR) return t;
        if (t->kind == BXC_TYPE_INT && !bxc_int_kind_signed(t->int_kind)) {
            bxc_diag *d = chk_error(cx, CHK_E_BAD_OPERAND, e->span,
                                    "cannot negate a value of unsigned type `%s`", chk_tn(cx, t));
            chk_help(cx, d, "cast to a signed type first: `(x as i64)`");
            return err();
        }
        if (!bxc_type_is_numeric(t)) {
            chk_error(cx, CHK_E_BAD_OPERAND, e->span, "cannot negate `%s`", chk_tn(cx, t));
            return err();
        }
        return t;
    }
    case BXC_UN_NOT: {
        bxc_type *t = bxc_type_strip_refs(chk_expr(f, e->unary.operand, NULL));
        if (bxc_type_is_error(t)) return err();
        if (t->kind == BXC_TYPE_BOOL || bxc_type_is_int(t)) return t;
        /* `!mask` is the table's `not` (bool tensors only) */
        const bxc_top *nt = f->mode == CHK_MODE_TENSOR ? bxc_top_find("not") : NULL;
        if (nt && t->kind == BXC_TYPE_TENSOR && (bxc_top_kind_bit((int)t->tensor_kind) & nt->kinds)) return t;
        chk_error(cx, CHK_E_BAD_OPERAND, e->span, "cannot apply `!` to `%s`", chk_tn(cx, t));
        return err();
    }
    case BXC_UN_DEREF: {
        bxc_type *t = bxc_type_resolve(chk_expr(f, e->unary.operand, NULL));
        if (bxc_type_is_error(t)) return err();
        if (t->kind == BXC_TYPE_REF) return t->ref.inner;
        chk_error(cx, CHK_E_BAD_OPERAND, e->span,
                  "`%s` is not a reference and cannot be dereferenced", chk_tn(cx, t));
        return err();
    }
    case BXC_UN_REF: {
        bxc_type *inner_exp = NULL;
        if (expected) {
            bxc_type *x = bxc_type_resolve(expected);
            if (x->kind == BXC_TYPE_REF) inner_exp = x->ref.inner;
        }
        bxc_type *t = chk_expr(f, e->unary.operand, inner_exp);
        if (bxc_type_is_error(t)) return err();
        return bxc_type_ref(cx->arena, t, false);
    }
    case BXC_UN_REF_MUT: {
        bxc_diag *d = chk_error(cx, CHK_E_BAD_EXPR, e->span,
                                "`&mut` borrows are not part of the metadata language");
        chk_help(cx, d, "values are copied: use `&` or pass the value");
        chk_expr(f, e->unary.operand, NULL);
        return err();
    }
    }
    return err();
}

static bxc_type *check_cast(chk_fn *f, bxc_expr *e) {
    chk_ctx *cx = f->cx;
    bxc_type *orig = chk_expr(f, e->cast.expr, NULL);
    bxc_type *src = bxc_type_strip_refs(orig);
    bxc_type *dst = chk_resolve_tyexpr(cx, f->cm, e->cast.type, NULL);
    if (bxc_type_is_error(src) || bxc_type_is_error(dst)) return err();
    dst = bxc_type_resolve(dst);
    bool dst_ok = dst->kind == BXC_TYPE_INT || dst->kind == BXC_TYPE_FLOAT;
    bool src_ok = bxc_type_is_numeric(src) ||
                  (bxc_type_resolve(src)->kind == BXC_TYPE_BOOL && dst->kind == BXC_TYPE_INT);
    if (!dst_ok || !src_ok) {
        bxc_diag *d = chk_error(cx, CHK_E_BAD_OPERAND, e->span, "cannot cast `%s` as `%s`",
                                chk_tn(cx, orig), chk_tn(cx, dst));
        if (src_ok && bxc_type_resolve(orig)->kind == BXC_TYPE_REF)
            chk_help(cx, d, "dereference it first: `*x as %s`", chk_tn(cx, dst));
        return err();
    }
    return dst;
}

static bxc_type *check_struct_lit(chk_fn *f, bxc_expr *e) {
    chk_ctx *cx = f->cx;
    bxc_path *p = e->struct_lit.path;
    uint32_t n = p->segs.len;
    bxc_type *result = NULL;
    bxc_type_field *fields = NULL;
    uint32_t nfields = 0;
    const char *what = path_str(cx, p);
    if (n == 1) {
        chk_symbol *s = chk_lookup(f->cm, p->segs.items[0].name);
        bxc_type *t = s && (s->kind == CHK_SYM_TYPE || s->kind == CHK_SYM_ALIAS)
                          ? bxc_type_resolve(s->type) : NULL;
        if (!s && cx->self_type && strcmp(p->segs.items[0].name, "Self") == 0)
            t = bxc_type_resolve(cx->self_type);   /* `Self { .. }` in an impl */
        if (!s && strcmp(p->segs.items[0].name, "TensorSpec") == 0) {
            static bxc_type_field spec_fields[2];
            spec_fields[0] = (bxc_type_field){"shape", bxc_type_shape(), false, {0, 0, 0}};
            spec_fields[1] = (bxc_type_field){"dtype", bxc_type_dtype(), false, {0, 0, 0}};
            result = bxc_type_spec();
            fields = spec_fields;
            nfields = 2;
            res_set(e, BXC_RES_SPEC);
        } else if (t && t->kind == BXC_TYPE_STRUCT) {
            result = t;
            res_set(e, BXC_RES_STRUCT)->type = t;
            fields = t->decl->fields;
            nfields = t->decl->nfields;
        } else if (t && bxc_type_is_error(t)) {
            result = err();
        } else if (t) {
            chk_error(cx, CHK_E_STRUCT_LIT, p->span, "`%s` is not a struct", what);
            result = err();
        }
    } else {
        bxc_type *q = qualifier_type(f, p, n - 1);
        q = q ? bxc_type_resolve(q) : NULL;
        if (q && q->kind == BXC_TYPE_ENUM) {
            bxc_type_variant *v = bxc_type_decl_variant(q->decl, p->segs.items[n - 1].name);
            if (!v) {
                chk_error(cx, CHK_E_UNKNOWN_NAME, p->segs.items[n - 1].span,
                          "no variant `%s` in enum `%s`", p->segs.items[n - 1].name, q->decl->name);
                result = err();
            } else if (v->shape != BXC_VSHAPE_STRUCT) {
                chk_error(cx, CHK_E_STRUCT_LIT, p->span, "`%s` is not a struct variant", what);
                result = err();
            } else {
                result = q;
                fields = v->fields;
                nfields = v->nfields;
                res_variant(e, q, v);
            }
        } else if (q && bxc_type_is_error(q)) {
            result = err();
        }
    }
    if (!result) {
        const char **cands;
        uint32_t nc;
        cands = chk_names_of(cx, f->cm, 1 << CHK_SYM_TYPE, &nc);
        bxc_diag *d = chk_error(cx, CHK_E_UNKNOWN_TYPE, p->span, "unknown struct `%s`", what);
        const char *near = chk_nearest(p->segs.items[n - 1].name, cands, nc);
        if (near) chk_help(cx, d, "did you mean `%s`?", near);
        result = err();
    }
    bool *seen = nfields ? bxc_arena_alloc(cx->arena, nfields) : NULL;
    for (uint32_t i = 0; i < e->struct_lit.fields.len; i++) {
        bxc_field_init *fi = e->struct_lit.fields.items[i];
        bxc_type *ft = NULL;
        if (!bxc_type_is_error(result)) {
            uint32_t k;
            for (k = 0; k < nfields; k++)
                if (fields[k].name && strcmp(fields[k].name, fi->name.name) == 0) break;
            if (k == nfields) {
                chk_error(cx, CHK_E_UNKNOWN_FIELD, fi->name.span, "`%s` has no field `%s`", what,
                          fi->name.name);
            } else if (seen[k]) {
                chk_error(cx, CHK_E_STRUCT_LIT, fi->name.span, "field `%s` is given twice",
                          fi->name.name);
            } else {
                seen[k] = true;
                ft = fields[k].type;
            }
        }
        if (fi->value) chk_expr(f, fi->value, ft);
    }
    if (!bxc_type_is_error(result)) {
        char missing[256];
        size_t len = 0;
        uint32_t nmiss = 0;
        missing[0] = '\0';
        for (uint32_t k = 0; k < nfields; k++) {
            if (seen[k] || !fields[k].name) continue;
            if (len < sizeof missing - 1)
                len += (size_t)snprintf(missing + len, sizeof missing - len, "%s`%s`",
                                        nmiss ? ", " : "", fields[k].name);
            nmiss++;
        }
        if (len >= sizeof missing) len = sizeof missing - 1;
        if (nmiss)
            chk_error(cx, CHK_E_STRUCT_LIT, e->span, "missing field%s %s in `%s`",
                      nmiss == 1 ? "" : "s", missing, what);
    }
    return result;
}

static bxc_type *check_if(chk_fn *f, bxc_expr *e, bxc_type *expected) {
    chk_ctx *cx = f->cx;
    chk_expr(f, e->if_.cond, bxc_type_bool());
    if (!e->if_.else_) {
        bxc_type *t = check_block(f, e->if_.then_block, NULL);
        t = bxc_type_resolve(t);
        if (!bxc_type_is_error(t) && t->kind != BXC_TYPE_UNIT && t->kind != BXC_TYPE_NEVER) {
            bxc_diag *d = chk_error(cx, CHK_E_MISMATCH,
                                    e->if_.then_block->tail ? e->if_.then_block->tail->span
                                                            : e->if_.then_block->span,
                                    "`if` without `else` has type `()`, found %s",
                                    describe(cx, t));
            chk_help(cx, d, "add an `else` branch");
        }
        return bxc_type_unit();
    }
    bxc_type *tt = check_block(f, e->if_.then_block, expected);
    bxc_type *want = expected;
    if (!want) want = bxc_type_resolve(tt)->kind == BXC_TYPE_NEVER ? NULL : tt;
    bxc_type *et;
    if (want) {
        et = chk_expr(f, e->if_.else_, NULL);
        if (!chk_unify(cx, want, et)) {
            bxc_span sp = e->if_.else_->kind == BXC_EXPR_BLOCK && e->if_.else_->block->tail
                              ? e->if_.else_->block->tail->span : e->if_.else_->span;
            if (expected) mismatch(f, want, et, sp);
            else
                chk_error(cx, CHK_E_MISMATCH, sp,
                          "`if` and `else` have different types: expected %s, found %s",
                          describe(cx, want), describe(cx, et));
            return err();
        }
    } else {
        et = chk_expr(f, e->if_.else_, NULL);
    }
    bxc_type *rt = bxc_type_resolve(tt);
    if (rt->kind == BXC_TYPE_NEVER) return et;
    return tt;
}

bxc_type *chk_closure(chk_fn *f, bxc_expr *e, bxc_type *const *params, uint32_t nparams,
                      bxc_type *ret, bxc_type *body_expected) {
    chk_ctx *cx = f->cx;
    bxc_scope *saved = f->scope;
    bxc_type *saved_ret = f->ret;
    uint32_t saved_loops = f->loop_depth;
    chk_scope_push(f);
    uint32_t n = e->closure.params.len;
    bxc_type **ps = bxc_arena_alloc(cx->arena, (n ? n : 1) * sizeof *ps);
    for (uint32_t i = 0; i < n; i++) {
        bxc_param *p = e->closure.params.items[i];
        bxc_type *want = i < nparams ? params[i] : err();
        if (p->type) {
            bxc_type *decl = chk_resolve_tyexpr(cx, f->cm, p->type, NULL);
            if (!chk_unify(cx, want, decl)) {
                bxc_diag *d = chk_error(cx, CHK_E_META, p->type->span,
                                        "closure parameter has type `%s`, but receives `%s`",
                                        chk_tn(cx, decl), chk_tn(cx, want));
                chk_help(cx, d, "remove the annotation or write `%s`", chk_tn(cx, want));
            }
        }
        ps[i] = want;
        chk_bind_pat(f, p->pat, want);
    }
    f->ret = ret;
    f->loop_depth = 0;
    bxc_type *body = chk_expr(f, e->closure.body, body_expected);
    f->ret = saved_ret;
    f->loop_depth = saved_loops;
    f->scope = saved;
    bxc_type *t = bxc_type_fn(cx->arena, ps, n, body_expected ? body_expected : body);
    e->ty = t;
    return t;
}

static bxc_type *check_stmt(chk_fn *f, bxc_stmt *s) {
    chk_ctx *cx = f->cx;
    switch (s->kind) {
    case BXC_STMT_LET: {
        bxc_type *annot = s->type ? chk_resolve_tyexpr(cx, f->cm, s->type, NULL) : NULL;
        bxc_type *t = annot;
        if (s->init) {
            bxc_type *it = chk_expr(f, s->init, annot);
            if (!annot) t = it;
        } else if (!annot) {
            /* `let x;` would need inference from later assignments, which
             * the metadata language does not need */
            bxc_diag *d = chk_error(cx, CHK_E_BAD_EXPR, s->span,
                                    "`let` without a value needs a type");
            chk_help(cx, d, "write `let x: T;` or give it a value");
            t = err();
        }
        chk_bind_pat(f, s->pat, t ? t : err());
        return bxc_type_unit();
    }
    case BXC_STMT_EXPR:
        return chk_expr(f, s->expr, NULL);
    case BXC_STMT_ITEM:
        chk_error(cx, CHK_E_BAD_EXPR, s->span, "items are not allowed inside a body");
        return bxc_type_unit();
    default:
        return bxc_type_unit();
    }
}

bxc_type *chk_block(chk_fn *f, bxc_block *b, bxc_type *expected) {
    return check_block(f, b, expected);
}

bxc_type *chk_block_in_scope(chk_fn *f, bxc_block *b) {
    uint32_t bad = first_error_stmt(b);
    if (bad < b->stmts.len) return check_broken_block(f, b, bad);
    bxc_type *last = NULL;
    for (uint32_t i = 0; i < b->stmts.len; i++) last = check_stmt(f, b->stmts.items[i]);
    if (b->tail) return chk_expr(f, b->tail, NULL);
    return last && bxc_type_resolve(last)->kind == BXC_TYPE_NEVER ? bxc_type_never()
                                                                 : bxc_type_unit();
}

/* The index of the block's first syntax-error statement, or len. */
static uint32_t first_error_stmt(const bxc_block *b) {
    for (uint32_t i = 0; i < b->stmts.len; i++)
        if (b->stmts.items[i]->kind == BXC_STMT_ERROR) return i;
    return b->stmts.len;
}

/* A block with a syntax error (reported by the parser, which skipped to the
 * next statement): what precedes it is checked as usual; what follows,
 * the tail included, is still typed (the rest of the pipeline reads the
 * types) but without diagnostics, as the lost code (a `let`, an operand)
 * would make them spurious; the block's value is the error type, which
 * satisfies any expectation, so no "the block has no value" either. */
static bxc_type *check_broken_block(chk_fn *f, bxc_block *b, uint32_t bad) {
    for (uint32_t i = 0; i < bad; i++) check_stmt(f, b->stmts.items[i]);
    f->cx->quiet++;
    for (uint32_t i = bad; i < b->stmts.len; i++) check_stmt(f, b->stmts.items[i]);
    if (b->tail) chk_expr(f, b->tail, NULL);
    f->cx->quiet--;
    return err();
}

static bxc_type *check_block(chk_fn *f, bxc_block *b, bxc_type *expected) {
    if (!b) return bxc_type_unit();
    bxc_scope *saved = f->scope;
    chk_scope_push(f);
    uint32_t bad = first_error_stmt(b);
    if (bad < b->stmts.len) {
        bxc_type *t = check_broken_block(f, b, bad);
        f->scope = saved;
        return t;
    }
    bxc_type *last = NULL;
    for (uint32_t i = 0; i < b->stmts.len; i++) last = check_stmt(f, b->stmts.items[i]);
    bxc_type *t;
    if (b->tail) {
        t = chk_expr(f, b->tail, expected);
    } else {
        /* A block ending in a diverging statement (`return x;`) has no
         * value and satisfies any expectation. */
        t = last && bxc_type_resolve(last)->kind == BXC_TYPE_NEVER ? bxc_type_never()
                                                                  : bxc_type_unit();
        if (expected && !chk_unify(f->cx, expected, t)) {
            bxc_span end = bxc_span_make(b->span.file,
                                         b->span.offset + (b->span.length ? b->span.length - 1 : 0), 1);
            bxc_diag *d = chk_error(f->cx, CHK_E_MISMATCH, end,
                                    "expected %s, found `()`: the block has no value",
                                    describe(f->cx, expected));
            chk_help(f->cx, d, "end the block with an expression (no `;`)");
            t = err();
        }
    }
    f->scope = saved;
    return t;
}

static bxc_type *expr_inner(chk_fn *f, bxc_expr *e, bxc_type *expected) {
    chk_ctx *cx = f->cx;
    switch (e->kind) {
    case BXC_EXPR_INT: {
        bxc_type *x = expected ? bxc_type_resolve(expected) : NULL;
        if (x && (x->kind == BXC_TYPE_INT || (x->kind == BXC_TYPE_VAR && !x->var.is_float)))
            return x;
        return bxc_type_var(cx->arena, false);
    }
    case BXC_EXPR_FLOAT: {
        bxc_type *x = expected ? bxc_type_resolve(expected) : NULL;
        if (x && (x->kind == BXC_TYPE_FLOAT || (x->kind == BXC_TYPE_VAR && x->var.is_float)))
            return x;
        return bxc_type_var(cx->arena, true);
    }
    case BXC_EXPR_STRING: return bxc_type_str();
    case BXC_EXPR_BOOL: return bxc_type_bool();
    case BXC_EXPR_PATH: return check_path(f, e);
    case BXC_EXPR_UNARY: return check_unary(f, e, expected);
    case BXC_EXPR_BINARY: return check_binary(f, e, expected);
    case BXC_EXPR_ASSIGN: {
        bxc_expr *tg = e->assign.target;
        if (!is_place(tg)) {
            chk_error(cx, CHK_E_BAD_EXPR, tg->span, "invalid assignment target");
            chk_expr(f, tg, NULL);
            chk_expr(f, e->assign.value, NULL);
            return bxc_type_unit();
        }
        bxc_type *tt = chk_expr(f, tg, NULL);
        check_mutable(f, tg, "assign to");
        if (e->assign.op == BXC_BIN_NONE) {
            chk_expr(f, e->assign.value, tt);
        } else {
            bxc_type *lt = bxc_type_strip_refs(tt);
            bxc_type *vt = bxc_type_strip_refs(chk_expr(f, e->assign.value, NULL));
            if (!bxc_type_is_error(lt) && !bxc_type_is_numeric(lt))
                chk_error(cx, CHK_E_BAD_OPERAND, tg->span, "cannot apply `%s=` to `%s`",
                          bxc_binop_str(e->assign.op), chk_tn(cx, lt));
            else if (!chk_unify(cx, lt, vt)) {
                bxc_diag *d = chk_error(cx, CHK_E_MISMATCH, e->assign.value->span,
                                        "expected %s, found %s", describe(cx, lt), describe(cx, vt));
                if (bxc_type_is_numeric(vt))
                    chk_help(cx, d, "convert with `as %s`", chk_tn(cx, lt));
            }
        }
        return bxc_type_unit();
    }
    case BXC_EXPR_CAST: return check_cast(f, e);
    case BXC_EXPR_CALL: return check_call(f, e);
    case BXC_EXPR_METHOD_CALL: return check_method(f, e);
    case BXC_EXPR_FIELD: return check_field(f, e);
    case BXC_EXPR_TUPLE_FIELD: {
        bxc_type *t = bxc_type_strip_refs(chk_expr(f, e->tuple_field.object, NULL));
        if (bxc_type_is_error(t)) return err();
        if (t->kind == BXC_TYPE_TUPLE && e->tuple_field.index < t->tuple.n)
            return t->tuple.elems[e->tuple_field.index];
        chk_error(cx, CHK_E_UNKNOWN_FIELD, e->tuple_field.index_span, "no field `%u` on `%s`",
                  e->tuple_field.index, chk_tn(cx, t));
        return err();
    }
    case BXC_EXPR_INDEX: {
        bxc_type *t = bxc_type_strip_refs(chk_expr(f, e->index.object, NULL));
        index_operand(f, e->index.index);
        if (bxc_type_is_error(t)) return err();
        if (t->kind == BXC_TYPE_SHAPE) return usize_t();
        bxc_diag *d = chk_error(cx, CHK_E_BAD_OPERAND, e->index.object->span,
                                "cannot index into `%s`", chk_tn(cx, t));
        if (t->kind == BXC_TYPE_TUPLE) chk_help(cx, d, "use a tuple field: `.0`");
        if (t->kind == BXC_TYPE_SPEC) chk_help(cx, d, "index its shape: `.shape[i]`");
        return err();
    }
    case BXC_EXPR_BLOCK: return check_block(f, e->block, expected);
    case BXC_EXPR_IF: return check_if(f, e, expected);
    case BXC_EXPR_WHILE:
        chk_expr(f, e->while_.cond, bxc_type_bool());
        f->loop_depth++;
        check_block(f, e->while_.body, bxc_type_unit());
        f->loop_depth--;
        return bxc_type_unit();
    case BXC_EXPR_FOR: {
        bxc_type *it = bxc_type_resolve(chk_expr(f, e->for_.iter, NULL));
        bxc_type *elem = err();
        if (it->kind == BXC_TYPE_RANGE) elem = it->range_elem;
        else if (!bxc_type_is_error(it)) {
            bxc_diag *d = chk_error(cx, CHK_E_MISMATCH, e->for_.iter->span,
                                    "`for` iterates over a range `a..b`, found `%s`",
                                    chk_tn(cx, it));
            if (bxc_type_strip_refs(it)->kind == BXC_TYPE_SHAPE)
                chk_help(cx, d, "iterate over its indices: `for i in 0..s.len()`");
        }
        bxc_scope *saved = f->scope;
        chk_scope_push(f);
        chk_bind_pat(f, e->for_.pat, elem);
        f->loop_depth++;
        check_block(f, e->for_.body, bxc_type_unit());
        f->loop_depth--;
        f->scope = saved;
        return bxc_type_unit();
    }
    case BXC_EXPR_LOOP:
        f->loop_depth++;
        check_block(f, e->loop_.body, bxc_type_unit());
        f->loop_depth--;
        return bxc_type_unit();
    case BXC_EXPR_BREAK:
    case BXC_EXPR_CONTINUE:
        if (!f->loop_depth)
            chk_error(cx, CHK_E_BAD_EXPR, e->span, "`%s` outside of a loop",
                      e->kind == BXC_EXPR_BREAK ? "break" : "continue");
        return bxc_type_never();
    case BXC_EXPR_RETURN:
        if (!f->ret) {
            chk_error(cx, CHK_E_BAD_EXPR, e->span, "`return` is not allowed here");
            if (e->ret.value) chk_expr(f, e->ret.value, NULL);
            return bxc_type_never();
        }
        if (e->ret.value) chk_expr(f, e->ret.value, f->ret);
        else if (!chk_unify(cx, f->ret, bxc_type_unit()))
            chk_error(cx, CHK_E_MISMATCH, e->span, "`return` without a value in %s returning %s",
                      f->what ? f->what : "a body", describe(cx, f->ret));
        return bxc_type_never();
    case BXC_EXPR_STRUCT: return check_struct_lit(f, e);
    case BXC_EXPR_TUPLE: {
        uint32_t n = e->tuple.elems.len;
        if (!n) return bxc_type_unit();
        bxc_type *x = expected ? bxc_type_resolve(expected) : NULL;
        bool hint = x && x->kind == BXC_TYPE_TUPLE && x->tuple.n == n;
        bxc_type **el = bxc_arena_alloc(cx->arena, n * sizeof *el);
        bool bad = false;
        for (uint32_t i = 0; i < n; i++) {
            el[i] = chk_expr(f, e->tuple.elems.items[i], hint ? x->tuple.elems[i] : NULL);
            bad |= bxc_type_is_error(el[i]) && hint;
        }
        if (bad) return err();
        return bxc_type_tuple(cx->arena, el, n);
    }
    case BXC_EXPR_ARRAY:
        for (uint32_t i = 0; i < e->array.elems.len; i++)
            index_operand(f, e->array.elems.items[i]);
        return bxc_type_shape();
    case BXC_EXPR_CLOSURE: {
        bxc_diag *d = chk_error(cx, CHK_E_CLOSURE, e->span,
                                "closures are only allowed as `#[fusion(meta = ...)]` values");
        chk_help(cx, d, "write a helper `fn` instead");
        return err();
    }
    case BXC_EXPR_RANGE: {
        bxc_type *st = e->range.start ? bxc_type_strip_refs(chk_expr(f, e->range.start, NULL)) : NULL;
        bxc_type *et = e->range.end ? bxc_type_strip_refs(chk_expr(f, e->range.end, NULL)) : NULL;
        if (!st || !et) {
            chk_error(cx, CHK_E_BAD_EXPR, e->span, "a range needs both ends: `a..b`");
            return err();
        }
        if (bxc_type_is_error(st) || bxc_type_is_error(et)) return err();
        if (!bxc_type_is_int(st)) {
            chk_error(cx, CHK_E_MISMATCH, e->range.start->span, "expected an integer, found `%s`",
                      chk_tn(cx, st));
            return err();
        }
        if (!chk_unify(cx, st, et)) {
            mismatch(f, st, et, e->range.end->span);
            return err();
        }
        return bxc_type_range(cx->arena, st);
    }
    case BXC_EXPR_ERROR:
    default:
        return err();
    }
}

bxc_type *chk_expr(chk_fn *f, bxc_expr *e, bxc_type *expected) {
    if (!e) return err();
    bxc_type *t = expr_inner(f, e, expected);
    if (!t) t = err();
    e->ty = t;
    if (expected && !chk_unify(f->cx, expected, t)) {
        mismatch(f, expected, t, e->kind == BXC_EXPR_BLOCK && e->block->tail
                                      ? e->block->tail->span : e->span);
        return err();
    }
    return t;
}

/* ---- zonking ---------------------------------------------------------------------- */

static void zonk_pat(chk_ctx *cx, bxc_pat *p) {
    if (!p) return;
    if (p->ty) p->ty = bxc_type_zonk(cx->arena, p->ty);
    for (uint32_t i = 0; i < p->elems.len; i++) zonk_pat(cx, p->elems.items[i]);
}

void chk_zonk_block(chk_ctx *cx, bxc_block *b) {
    if (!b) return;
    for (uint32_t i = 0; i < b->stmts.len; i++) {
        bxc_stmt *s = b->stmts.items[i];
        zonk_pat(cx, s->pat);
        chk_zonk_expr(cx, s->init);
        chk_zonk_expr(cx, s->expr);
    }
    chk_zonk_expr(cx, b->tail);
}

/* A literal's magnitude (the sign is a separate negation) fits kind k. */
static bool int_fits(uint64_t v, bxc_int_kind k) {
    return k >= BXC_INT_KIND_COUNT || v <= bxc_int_kinds[k].max;
}

void chk_zonk_expr(chk_ctx *cx, bxc_expr *e) {
    if (!e) return;
    if (e->ty) e->ty = bxc_type_zonk(cx->arena, e->ty);
    switch (e->kind) {
    case BXC_EXPR_INT:
        /* A negated literal (`-128i8`) is checked by the interpreter; here a
         * literal bigger than its type's maximum is an error, as in Rust. */
        if (e->ty && e->ty->kind == BXC_TYPE_INT && !int_fits(e->int_lit.value, e->ty->int_kind))
            chk_error(cx, CHK_E_MISMATCH, e->span, "literal `%s` does not fit in `%s`",
                      e->int_lit.text ? e->int_lit.text : "?", bxc_int_kind_name(e->ty->int_kind));
        break;
    case BXC_EXPR_UNARY: {
        bxc_expr *o = e->unary.operand;
        if (e->unary.op == BXC_UN_NEG && o && o->kind == BXC_EXPR_INT) {
            /* `-128` is the negation of 128, which fits an i8 once negated */
            if (o->ty) o->ty = bxc_type_zonk(cx->arena, o->ty);
            if (o->ty && o->ty->kind == BXC_TYPE_INT && bxc_int_kind_signed(o->ty->int_kind) &&
                o->int_lit.value > 0 && !int_fits(o->int_lit.value - 1, o->ty->int_kind))
                chk_error(cx, CHK_E_MISMATCH, e->span, "literal `-%s` does not fit in `%s`",
                          o->int_lit.text ? o->int_lit.text : "?", bxc_int_kind_name(o->ty->int_kind));
            break;
        }
        chk_zonk_expr(cx, o);
        break;
    }
    case BXC_EXPR_BINARY:
        chk_zonk_expr(cx, e->binary.lhs);
        chk_zonk_expr(cx, e->binary.rhs);
        break;
    case BXC_EXPR_ASSIGN:
        chk_zonk_expr(cx, e->assign.target);
        chk_zonk_expr(cx, e->assign.value);
        break;
    case BXC_EXPR_CAST: chk_zonk_expr(cx, e->cast.expr); break;
    case BXC_EXPR_CALL:
        chk_zonk_expr(cx, e->call.callee);
        for (uint32_t i = 0; i < e->call.args.len; i++) chk_zonk_expr(cx, e->call.args.items[i]);
        break;
    case BXC_EXPR_METHOD_CALL:
        chk_zonk_expr(cx, e->method_call.receiver);
        for (uint32_t i = 0; i < e->method_call.args.len; i++)
            chk_zonk_expr(cx, e->method_call.args.items[i]);
        break;
    case BXC_EXPR_FIELD: chk_zonk_expr(cx, e->field.object); break;
    case BXC_EXPR_TUPLE_FIELD: chk_zonk_expr(cx, e->tuple_field.object); break;
    case BXC_EXPR_INDEX:
        chk_zonk_expr(cx, e->index.object);
        chk_zonk_expr(cx, e->index.index);
        break;
    case BXC_EXPR_BLOCK: chk_zonk_block(cx, e->block); break;
    case BXC_EXPR_IF:
        chk_zonk_expr(cx, e->if_.cond);
        chk_zonk_block(cx, e->if_.then_block);
        chk_zonk_expr(cx, e->if_.else_);
        break;
    case BXC_EXPR_WHILE:
        chk_zonk_expr(cx, e->while_.cond);
        chk_zonk_block(cx, e->while_.body);
        break;
    case BXC_EXPR_FOR:
        zonk_pat(cx, e->for_.pat);
        chk_zonk_expr(cx, e->for_.iter);
        chk_zonk_block(cx, e->for_.body);
        break;
    case BXC_EXPR_LOOP: chk_zonk_block(cx, e->loop_.body); break;
    case BXC_EXPR_RETURN: chk_zonk_expr(cx, e->ret.value); break;
    case BXC_EXPR_STRUCT:
        for (uint32_t i = 0; i < e->struct_lit.fields.len; i++)
            chk_zonk_expr(cx, e->struct_lit.fields.items[i]->value);
        break;
    case BXC_EXPR_TUPLE:
        for (uint32_t i = 0; i < e->tuple.elems.len; i++) chk_zonk_expr(cx, e->tuple.elems.items[i]);
        break;
    case BXC_EXPR_ARRAY:
        for (uint32_t i = 0; i < e->array.elems.len; i++) chk_zonk_expr(cx, e->array.elems.items[i]);
        break;
    case BXC_EXPR_CLOSURE:
        for (uint32_t i = 0; i < e->closure.params.len; i++)
            zonk_pat(cx, e->closure.params.items[i]->pat);
        chk_zonk_expr(cx, e->closure.body);
        break;
    case BXC_EXPR_RANGE:
        chk_zonk_expr(cx, e->range.start);
        chk_zonk_expr(cx, e->range.end);
        break;
    default:
        break;
    }
}
