/* interp_eval.c — the metadata interpreter's evaluator: expressions,
 * statements and blocks, places (assignment targets and receivers of
 * mutating methods), patterns, calls of helper fns and closures with the
 * call-depth limit and step budget, struct and enum values (with generated
 * `NameMetadata` companions), the builtin types' methods, and the public
 * entry points.  Arithmetic is in interp_ops.c. */
#include "interp_int.h"
#include "types.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- budget and recursion --------------------------------------------- */

static bxi_status step(bxi_interp *in, bxc_span span)
{
    if (++in->steps <= in->lim.max_steps)
        return BXI_OK;
    bxc_diag *d = bxi_error(in, BXI_E_BUDGET, span,
                            "evaluation exceeded its budget of %llu steps (loop iterations and calls)",
                            (unsigned long long)in->lim.max_steps);
    bxc_diag_set_help(in->diags, d, "metadata code must finish quickly; is this loop's condition ever false?");
    return BXI_ERR;
}

/* ---- places: assignment targets and receivers of mutating methods -------- */

typedef enum { PL_VALUE, PL_SHAPE, PL_DIM, PL_DTYPE } place_kind;
typedef struct place {
    place_kind kind;
    BxvValue *v;        /* PL_VALUE */
    BxvShape *shape;    /* PL_SHAPE, PL_DIM */
    size_t idx;         /* PL_DIM */
    BxvDType *dtype;    /* PL_DTYPE */
} place;

/* Resolves `e` to storage.  Index operands are evaluated before the storage
 * pointer is taken, so nothing evaluated later can move it. */
static bxi_status eval_place(bxi_interp *in, const bxc_expr *e, bool mutate, place *p)
{
    switch (e->kind) {
    case BXC_EXPR_PATH: {
        if (e->path->segs.len != 1)
            break;
        const char *name = e->path->segs.items[0].name;
        bxi_var *v = bxi_find_var(in, name);
        if (!v) {
            bxi_error(in, BXI_E_NAME, e->span, "cannot find variable `%s`", name);
            return BXI_ERR;
        }
        if (mutate && !v->is_mut) {
            bxc_diag *d = bxi_error(in, BXI_E_TYPE, e->span,
                                    "cannot assign to or mutate `%s`: it is not declared `mut`", name);
            bxc_diag_set_help(in->diags, d, "declare it with `let mut %s`", name);
            return BXI_ERR;
        }
        if (mutate && v->val->refs) {
            bxi_error(in, BXI_E_TYPE, e->span,
                      "cannot mutate through `%s`, a `&` reference (the language has no `&mut`)", name);
            return BXI_ERR;
        }
        p->kind = PL_VALUE;
        p->v = v->val;
        return BXI_OK;
    }
    case BXC_EXPR_FIELD: {
        place obj;
        if (eval_place(in, e->field.object, mutate, &obj) != BXI_OK)
            return BXI_ERR;
        if (obj.kind != PL_VALUE)
            break;
        BxvValue *o = obj.v;
        const char *f = e->field.name.name;
        if (o->kind == BXV_SPEC && strcmp(f, "shape") == 0) {
            p->kind = PL_SHAPE;
            p->shape = &o->u.spec.shape;
            return BXI_OK;
        }
        if (o->kind == BXV_SPEC && strcmp(f, "dtype") == 0) {
            p->kind = PL_DTYPE;
            p->dtype = &o->u.spec.dtype;
            return BXI_OK;
        }
        if ((o->kind == BXV_STRUCT || o->kind == BXV_ENUM) && o->u.agg.names) {
            for (size_t i = 0; i < o->u.agg.n; i++) {
                if (bxi_name_is(o->u.agg.names[i], f)) {
                    p->kind = PL_VALUE;
                    p->v = &o->u.agg.fields[i];
                    return BXI_OK;
                }
            }
        }
        bxi_error(in, BXI_E_NAME, e->field.name.span, "no field `%s` on a value of type `%s`", f,
                  bxi_type_str(in, o));
        return BXI_ERR;
    }
    case BXC_EXPR_TUPLE_FIELD: {
        place obj;
        if (eval_place(in, e->tuple_field.object, mutate, &obj) != BXI_OK)
            return BXI_ERR;
        if (obj.kind != PL_VALUE)
            break;
        BxvValue *o = obj.v;
        uint32_t k = e->tuple_field.index;
        if (o->kind == BXV_TUPLE && k < o->u.tuple.n) {
            p->kind = PL_VALUE;
            p->v = &o->u.tuple.items[k];
            return BXI_OK;
        }
        if ((o->kind == BXV_STRUCT || o->kind == BXV_ENUM) && !o->u.agg.braces && k < o->u.agg.n) {
            p->kind = PL_VALUE;
            p->v = &o->u.agg.fields[k];
            return BXI_OK;
        }
        bxi_error(in, BXI_E_INDEX, e->tuple_field.index_span, "no field `%u` on a value of type `%s`", k,
                  bxi_type_str(in, o));
        return BXI_ERR;
    }
    case BXC_EXPR_INDEX: {
        BxvValue iv;
        bxi_status st = bxi_eval_expr(in, e->index.index, &iv);
        if (st != BXI_OK)
            return st;
        uint64_t idx;
        if (bxi_to_index(in, iv, e->index.index->span, "an index", &idx) != BXI_OK)
            return BXI_ERR;
        place obj;
        if ((st = eval_place(in, e->index.object, mutate, &obj)) != BXI_OK)
            return st;
        BxvShape *s = obj.kind == PL_SHAPE ? obj.shape
                    : obj.kind == PL_VALUE && obj.v->kind == BXV_SHAPE ? &obj.v->u.shape : NULL;
        if (!s) {
            bxi_error(in, BXI_E_TYPE, e->index.object->span, "only a `Shape` can be indexed");
            return BXI_ERR;
        }
        if (idx >= s->len) {
            bxi_error(in, BXI_E_INDEX, e->span, "index %llu is out of range for a shape of rank %zu",
                      (unsigned long long)idx, s->len);
            return BXI_ERR;
        }
        p->kind = PL_DIM;
        p->shape = s;
        p->idx = (size_t)idx;
        return BXI_OK;
    }
    case BXC_EXPR_UNARY:
        if (e->unary.op == BXC_UN_DEREF) {
            bxi_error(in, BXI_E_TYPE, e->span,
                      "cannot assign through a `&` reference (the language has no `&mut`)");
            return BXI_ERR;
        }
        break;
    default:
        break;
    }
    bxi_error(in, BXI_E_TYPE, e->span, "this expression cannot be assigned to or mutated");
    return BXI_ERR;
}

static BxvValue place_load(bxi_interp *in, const place *p)
{
    switch (p->kind) {
    case PL_VALUE: return *p->v;
    case PL_SHAPE: {
        BxvValue v = {.kind = BXV_SHAPE};
        v.u.shape = *p->shape;
        return v;
    }
    case PL_DIM:   return bxv_int(p->shape->dims[p->idx], BXV_USIZE);
    case PL_DTYPE: return bxv_dtype(*p->dtype);
    }
    return bxv_unit();
}

static bxi_status place_store(bxi_interp *in, const place *p, BxvValue v, bxc_span span)
{
    switch (p->kind) {
    case PL_VALUE:
        if (p->v->kind == BXV_INT && v.kind == BXV_INT && bxi_int_adopt(in, &v, p->v->u.i.ty, span) != BXI_OK)
            return BXI_ERR;
        if (p->v->kind == BXV_FLOAT && v.kind == BXV_FLOAT && v.u.f.ty == BXV_FLIT)
            v = bxv_float(v.u.f.v, p->v->u.f.ty);
        if (p->v->kind != v.kind && p->v->kind != BXV_UNIT) {
            bxi_error(in, BXI_E_TYPE, span, "mismatched types: expected `%s`, found `%s`",
                      bxi_type_str(in, p->v), bxi_type_str(in, &v));
            return BXI_ERR;
        }
        *p->v = bxv_copy(&in->scratch, &v);
        return BXI_OK;
    case PL_SHAPE:
        v = bxi_strip(v);
        if (v.kind != BXV_SHAPE) {
            bxi_error(in, BXI_E_TYPE, span, "expected `Shape`, found `%s`", bxi_type_str(in, &v));
            return BXI_ERR;
        }
        *p->shape = bxv_copy(&in->scratch, &v).u.shape;
        return BXI_OK;
    case PL_DIM: {
        uint64_t d;
        if (bxi_to_index(in, v, span, "a dimension", &d) != BXI_OK)
            return BXI_ERR;
        p->shape->dims[p->idx] = d;
        return BXI_OK;
    }
    case PL_DTYPE:
        v = bxi_strip(v);
        if (v.kind != BXV_DTYPEV) {
            bxi_error(in, BXI_E_TYPE, span, "expected `DType`, found `%s`", bxi_type_str(in, &v));
            return BXI_ERR;
        }
        *p->dtype = v.u.dtype;
        return BXI_OK;
    }
    return BXI_ERR;
}

/* ---- patterns ----------------------------------------------------------- */

static bxi_status bind_pat(bxi_interp *in, const bxc_pat *pat, const BxvValue *v)
{
    switch (pat->kind) {
    case BXC_PAT_IDENT:
        bxi_push_var(in, pat->name.name, pat->is_mut, v);
        return BXI_OK;
    case BXC_PAT_WILD:
        return BXI_OK;
    case BXC_PAT_TUPLE: {
        BxvValue t = bxi_strip(*v);
        if (t.kind != BXV_TUPLE || t.u.tuple.n != pat->elems.len) {
            bxi_error(in, BXI_E_TYPE, pat->span, "a %u-element tuple pattern cannot match `%s`",
                      pat->elems.len, bxi_type_str(in, &t));
            return BXI_ERR;
        }
        for (uint32_t i = 0; i < pat->elems.len; i++) {
            BxvValue item = t.u.tuple.items[i];
            item.refs = v->refs;   /* destructuring a reference yields references */
            if (bind_pat(in, pat->elems.items[i], &item) != BXI_OK)
                return BXI_ERR;
        }
        return BXI_OK;
    }
    case BXC_PAT_ERROR:
        break;
    }
    bxi_error(in, BXI_E_UNSUPPORTED, pat->span, "cannot bind this pattern");
    return BXI_ERR;
}

/* ---- calls -------------------------------------------------------------- */

static bxi_status eval_block(bxi_interp *in, const bxc_block *b, BxvValue *out);

static bxi_status enter_call(bxi_interp *in, bxc_span site, const char *name)
{
    if (step(in, site) != BXI_OK)
        return BXI_ERR;
    if (in->depth >= in->lim.max_call_depth) {
        bxc_diag *d = bxi_error(in, BXI_E_RECURSION, site,
                                "recursion limit reached: %u nested calls (calling `%s`)",
                                in->lim.max_call_depth, name);
        bxc_diag_set_help(in->diags, d, "does the recursion have a base case that is reached?");
        return BXI_ERR;
    }
    if (in->ncalls == in->capcalls) {
        in->capcalls = in->capcalls ? in->capcalls * 2 : 16;
        in->calls = bxi_xrealloc(in->calls, in->capcalls * sizeof *in->calls);
    }
    in->calls[in->ncalls++] = (bxi_call_rec){bxi_global_span(in, site), name};
    in->depth++;
    return BXI_OK;
}

static void leave_call(bxi_interp *in)
{
    in->depth--;
    in->ncalls--;
}

/* Runs a body in a fresh frame after binding the parameters. */
typedef struct frame_save {
    uint32_t nvars, frame_start, base, list;
    const char *self_type;
} frame_save;

static frame_save frame_push(bxi_interp *in, uint32_t base, uint32_t list)
{
    frame_save s = {in->nvars, in->frame_start, in->base, in->cur_list, in->self_type};
    in->frame_start = in->nvars;
    in->base = base;
    in->cur_list = list;
    return s;
}

static void frame_pop(bxi_interp *in, frame_save s)
{
    in->nvars = s.nvars;
    in->frame_start = s.frame_start;
    in->base = s.base;
    in->cur_list = s.list;
    in->self_type = s.self_type;
}

/* `Self` names the type of the running impl method. */
static const char *self_map(const bxi_interp *in, const char *name)
{
    return in->self_type && bxi_name_is(name, "Self") ? in->self_type : name;
}

/* Finishes a body's status into a call result. */
static bxi_status call_result(bxi_interp *in, bxi_status st, BxvValue *out, const bxc_expr *where,
                              bxc_span fallback)
{
    if (st == BXI_RET) {
        *out = in->ret;
        return BXI_OK;
    }
    if (st == BXI_BREAK || st == BXI_CONT) {
        bxi_error(in, BXI_E_TYPE, where ? where->span : fallback, "`break`/`continue` outside of a loop");
        return BXI_ERR;
    }
    return st;
}

/* Calls a helper fn, or (self_type set) a fn of `impl self_type`; a method
 * with a receiver gets it in `recv`, bound to `self` as a copy (`&self`:
 * a reference to the copy), so a method never changes its caller's value. */
static bxi_status call_fn_in(bxi_interp *in, const bxc_fn *fn, uint32_t fn_base, uint32_t fn_list,
                             const char *self_type, const BxvValue *recv, BxvValue *args, uint32_t nargs,
                             bxc_span site, BxvValue *out)
{
    bool has_self = self_type && bxi_fn_has_self(fn);
    uint32_t nparams = 0;
    for (uint32_t i = has_self ? 1 : 0; i < fn->params.len; i++)
        nparams += !fn->params.items[i]->is_self;
    if (has_self && !recv) {
        bxi_error(in, BXI_E_ARITY, site, "`%s::%s` needs a receiver: call it as `value.%s(..)`", self_type,
                  fn->name.name, fn->name.name);
        return BXI_ERR;
    }
    if (nparams != nargs) {
        bxi_error(in, BXI_E_ARITY, site, "`%s` takes %u argument%s but %u %s given", fn->name.name,
                  nparams, nparams == 1 ? "" : "s", nargs, nargs == 1 ? "was" : "were");
        return BXI_ERR;
    }
    if (!fn->body) {
        bxi_error(in, BXI_E_UNSUPPORTED, site, "`%s` has no body to evaluate", fn->name.name);
        return BXI_ERR;
    }
    /* Coerce in the caller's span base: the argument spans are the call's. */
    for (uint32_t i = has_self ? 1 : 0, k = 0; i < fn->params.len; i++) {
        const bxc_param *p = fn->params.items[i];
        if (p->is_self)
            continue;
        if (bxi_coerce(in, &args[k], p->type, site) != BXI_OK)
            return BXI_ERR;
        k++;
    }
    BxvValue self_v;
    if (has_self) {
        const bxc_param *p = fn->params.items[0];
        self_v = bxi_strip(*recv);
        if (p->is_self)
            self_v.refs = p->self_ref ? 1 : 0;
        else if (bxi_coerce(in, &self_v, p->type, site) != BXI_OK)
            return BXI_ERR;
    }
    const char *cname = self_type ? bxc_arena_printf(&in->scratch, "%s::%s", self_type, fn->name.name)
                                  : fn->name.name;
    if (enter_call(in, site, cname) != BXI_OK)
        return BXI_ERR;
    frame_save fs = frame_push(in, fn_base, fn_list);
    in->self_type = self_type;
    bxi_status st = BXI_OK;
    if (has_self)
        bxi_push_var(in, "self", false, &self_v);
    for (uint32_t i = has_self ? 1 : 0, k = 0; i < fn->params.len && st == BXI_OK; i++) {
        const bxc_param *p = fn->params.items[i];
        if (p->is_self)
            continue;
        st = bind_pat(in, p->pat, &args[k++]);
    }
    if (st == BXI_OK) {
        st = call_result(in, eval_block(in, fn->body, out), out, NULL, fn->body->span);
        if (st == BXI_OK && fn->ret)
            st = bxi_coerce(in, out, fn->ret, fn->ret->span);
        if (st == BXI_OK && !fn->ret)
            *out = bxv_unit();
    }
    frame_pop(in, fs);
    leave_call(in);
    return st;
}

static bxi_status call_fn(bxi_interp *in, const bxc_fn *fn, uint32_t fn_base, uint32_t fn_list, BxvValue *args,
                          uint32_t nargs, bxc_span site, BxvValue *out)
{
    return call_fn_in(in, fn, fn_base, fn_list, NULL, NULL, args, nargs, site, out);
}

/* `Type::f(args)`: an associated fn, or a method called with its receiver
 * as the first argument (`Strategy::to_code(&s)`). */
static bxi_status call_assoc(bxi_interp *in, const bxc_fn *fn, uint32_t base, uint32_t list, const char *type_name,
                             BxvValue *args, uint32_t nargs, bxc_span site, BxvValue *out)
{
    if (bxi_fn_has_self(fn)) {
        if (nargs == 0) {
            bxi_error(in, BXI_E_ARITY, site, "`%s::%s` takes its receiver as the first argument", type_name,
                      fn->name.name);
            return BXI_ERR;
        }
        return call_fn_in(in, fn, base, list, type_name, &args[0], args + 1, nargs - 1, site, out);
    }
    return call_fn_in(in, fn, base, list, type_name, NULL, args, nargs, site, out);
}

static bxi_status call_closure(bxi_interp *in, const BxvValue *cv, BxvValue *args, uint32_t nargs,
                               bxc_span site, BxvValue *out)
{
    const bxc_expr *ce = cv->u.closure.node;
    const bxi_capture *cap = cv->u.closure.env;
    if (ce->closure.params.len != nargs) {
        bxi_error(in, BXI_E_ARITY, site, "the closure takes %u argument%s but %u %s given",
                  ce->closure.params.len, ce->closure.params.len == 1 ? "" : "s", nargs,
                  nargs == 1 ? "was" : "were");
        return BXI_ERR;
    }
    if (enter_call(in, site, "closure") != BXI_OK)
        return BXI_ERR;
    frame_save fs = frame_push(in, cap->base, cap->list);
    for (uint32_t i = 0; i < cap->n; i++)
        bxi_push_var(in, cap->vars[i].name, cap->vars[i].is_mut, cap->vars[i].val);
    bxi_status st = BXI_OK;
    for (uint32_t i = 0; i < nargs && st == BXI_OK; i++) {
        const bxc_param *p = ce->closure.params.items[i];
        st = bxi_coerce(in, &args[i], p->type, p->span);
        if (st == BXI_OK)
            st = bind_pat(in, p->pat, &args[i]);
    }
    if (st == BXI_OK) {
        st = call_result(in, bxi_eval_expr(in, ce->closure.body, out), out, NULL, ce->span);
        if (st == BXI_OK && ce->closure.ret)
            st = bxi_coerce(in, out, ce->closure.ret, ce->closure.ret->span);
    }
    frame_pop(in, fs);
    leave_call(in);
    return st;
}

bxi_status bxi_call_value(bxi_interp *in, const BxvValue *callee, BxvValue *args, uint32_t nargs,
                          bxc_span site, BxvValue *out)
{
    if (callee->kind == BXV_CLOSURE)
        return call_closure(in, callee, args, nargs, site, out);
    if (callee->kind == BXV_FN) {
        uint32_t base, list;
        const bxc_item *it = callee->u.fn.item;
        if (!it || !bxi_list_of(in, it, &base, &list))
            it = bxi_find_item(in, callee->u.fn.name, BXI_KIND(BXC_ITEM_FN), &base, &list);
        if (!it) {
            bxi_error(in, BXI_E_NAME, site, "cannot find function `%s`", callee->u.fn.name);
            return BXI_ERR;
        }
        return call_fn(in, it->fn, base, list, args, nargs, site, out);
    }
    bxi_error(in, BXI_E_TYPE, site, "a value of type `%s` cannot be called", bxi_type_str(in, callee));
    return BXI_ERR;
}

/* ---- struct / enum types ------------------------------------------------- */

/* The declaration behind a struct or enum name; `FooMetadata` (generated
 * by #[extension_type(fusion)]) resolves to `Foo`'s declaration, whose
 * field names and order it shares. */
static const bxc_item *find_type(const bxi_interp *in, const char *name, uint32_t kinds, bool *is_meta)
{
    const bxc_item *it = bxi_find_item(in, name, kinds, NULL, NULL);
    if (is_meta)
        *is_meta = false;
    if (it)
        return it;
    size_t n = strlen(name);
    const char *suffix = "Metadata";
    size_t sl = strlen(suffix);
    if (n > sl && strcmp(name + n - sl, suffix) == 0) {
        char base[256];
        if (n - sl >= sizeof base)
            return NULL;
        memcpy(base, name, n - sl);
        base[n - sl] = 0;
        it = bxi_find_item(in, base, kinds, NULL, NULL);
        if (it && is_meta)
            *is_meta = true;
    }
    return it;
}

static const bxc_variant *find_variant(const bxc_item *en, const char *name)
{
    for (uint32_t i = 0; i < en->enum_.variants.len; i++)
        if (bxi_name_is(en->enum_.variants.items[i]->name.name, name))
            return en->enum_.variants.items[i];
    return NULL;
}

/* Integer literal fields take their declared types (not in metadata
 * companions, whose tensor fields are specs). */
static bxi_status coerce_field(bxi_interp *in, BxvValue *v, const bxc_field *f, bool is_meta, bxc_span span)
{
    if (!f || !f->type)
        return BXI_OK;
    if (v->kind == BXV_INT || v->kind == BXV_FLOAT) {
        unsigned refs = v->refs;
        bxi_status st = bxi_coerce(in, v, f->type, span);
        if (is_meta)
            v->refs = (uint8_t)refs;
        return st;
    }
    return BXI_OK;
}

/* `TensorSpec { shape: s, dtype: d }`, the built-in struct (the checker
 * made sure both fields are there once, with their types); fields are
 * evaluated in the order written, as for any struct literal. */
static bxi_status eval_spec_lit(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    const bxc_field_init_list *inits = &e->struct_lit.fields;
    BxvValue shape = {.kind = BXV_UNIT}, dtype = {.kind = BXV_UNIT};
    for (uint32_t i = 0; i < inits->len; i++) {
        BxvValue v;
        bxi_status st = bxi_eval_expr(in, inits->items[i]->value, &v);
        if (st != BXI_OK)
            return st;
        v = bxi_strip(v);
        if (strcmp(inits->items[i]->name.name, "shape") == 0)
            shape = v;
        else
            dtype = v;
    }
    if (shape.kind != BXV_SHAPE || dtype.kind != BXV_DTYPEV) {
        bxi_error(in, BXI_E_TYPE, e->span, "`TensorSpec { .. }` needs `shape: Shape` and `dtype: DType`");
        return BXI_ERR;
    }
    *out = bxv_spec(&in->scratch, &shape.u.shape, dtype.u.dtype);
    return BXI_OK;
}

/* `Name { a: e, ... }` or `Enum::Variant { a: e, ... }`. */
static bxi_status eval_struct_lit(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    const bxc_path *path = e->struct_lit.path;
    const bxc_field_init_list *inits = &e->struct_lit.fields;
    const char *type_name, *variant = NULL;
    const bxc_field_list *decl = NULL;
    bool is_meta = false;
    if (path->segs.len >= 2) {
        type_name = self_map(in, path->segs.items[path->segs.len - 2].name);
        variant = bxi_path_last(path);
        const bxc_item *en = find_type(in, type_name, BXI_KIND(BXC_ITEM_ENUM), &is_meta);
        if (en) {
            const bxc_variant *var = find_variant(en, variant);
            if (!var) {
                bxi_error(in, BXI_E_NAME, path->span, "enum `%s` has no variant `%s`", type_name, variant);
                return BXI_ERR;
            }
            decl = &var->fields;
        } else {
            bxi_error(in, BXI_E_NAME, path->span, "cannot find enum `%s`", type_name);
            return BXI_ERR;
        }
    } else {
        type_name = self_map(in, bxi_path_last(path));
        const bxc_item *st = find_type(in, type_name, BXI_KIND(BXC_ITEM_STRUCT), &is_meta);
        if (!st && strcmp(type_name, "TensorSpec") == 0)
            return eval_spec_lit(in, e, out);
        if (!st) {
            bxi_error(in, BXI_E_NAME, path->span, "cannot find struct `%s`", type_name);
            return BXI_ERR;
        }
        decl = &st->struct_.fields;
    }
    /* Evaluate in the order written (side effects), store in declared order. */
    BxvValue *vals = bxc_arena_alloc(&in->scratch, (inits->len ? inits->len : 1) * sizeof *vals);
    for (uint32_t i = 0; i < inits->len; i++) {
        bxi_status st = bxi_eval_expr(in, inits->items[i]->value, &vals[i]);
        if (st != BXI_OK)
            return st;
        for (uint32_t j = 0; j < i; j++) {
            if (strcmp(inits->items[j]->name.name, inits->items[i]->name.name) == 0) {
                bxi_error(in, BXI_E_NAME, inits->items[i]->name.span, "field `%s` is given twice",
                          inits->items[i]->name.name);
                return BXI_ERR;
            }
        }
    }
    uint32_t n = decl->len;
    BxvValue r = {.kind = variant ? BXV_ENUM : BXV_STRUCT};
    r.u.agg.type = type_name;
    r.u.agg.variant = variant;
    r.u.agg.braces = true;
    r.u.agg.n = n;
    r.u.agg.names = bxc_arena_alloc(&in->scratch, (n ? n : 1) * sizeof(char *));
    r.u.agg.fields = bxc_arena_alloc(&in->scratch, (n ? n : 1) * sizeof(BxvValue));
    for (uint32_t i = 0; i < inits->len; i++) {
        bool known = false;
        for (uint32_t k = 0; k < decl->len; k++)
            known |= bxi_name_is(decl->items[k]->name.name, inits->items[i]->name.name);
        if (!known) {
            bxi_error(in, BXI_E_NAME, inits->items[i]->name.span, "`%s%s%s` has no field `%s`", type_name,
                      variant ? "::" : "", variant ? variant : "", inits->items[i]->name.name);
            return BXI_ERR;
        }
    }
    for (uint32_t k = 0; k < decl->len; k++) {
        const bxc_field *f = decl->items[k];
        r.u.agg.names[k] = f->name.name;
        uint32_t i = 0;
        while (i < inits->len && !bxi_name_is(inits->items[i]->name.name, f->name.name))
            i++;
        if (i == inits->len) {
            bxi_error(in, BXI_E_NAME, e->span, "missing field `%s` in `%s%s%s`",
                      f->name.name ? f->name.name : "?", type_name, variant ? "::" : "",
                      variant ? variant : "");
            return BXI_ERR;
        }
        if (coerce_field(in, &vals[i], f, is_meta, inits->items[i]->span) != BXI_OK)
            return BXI_ERR;
        r.u.agg.fields[k] = bxv_copy(&in->scratch, &vals[i]);
    }
    *out = r;
    return BXI_OK;
}

/* A tuple or unit enum variant `E::V(args)` / `E::V`; returns false when the
 * path does not name an enum variant. */
static bool enum_variant_path(bxi_interp *in, const bxc_path *path, const bxc_item **en,
                              const bxc_variant **var, bool *is_meta)
{
    if (path->segs.len < 2)
        return false;
    const char *type_name = self_map(in, path->segs.items[path->segs.len - 2].name);
    *en = find_type(in, type_name, BXI_KIND(BXC_ITEM_ENUM), is_meta);
    if (!*en)
        return false;
    *var = find_variant(*en, bxi_path_last(path));
    return true;
}

static BxvValue make_variant(bxi_interp *in, const bxc_path *path, const bxc_variant *var,
                             BxvValue *args, uint32_t n)
{
    BxvValue r = {.kind = BXV_ENUM};
    r.u.agg.type = self_map(in, path->segs.items[path->segs.len - 2].name);
    r.u.agg.variant = var->name.name;
    r.u.agg.n = n;
    r.u.agg.fields = bxc_arena_alloc(&in->scratch, (n ? n : 1) * sizeof(BxvValue));
    for (uint32_t i = 0; i < n; i++)
        r.u.agg.fields[i] = bxv_copy(&in->scratch, &args[i]);
    return r;
}

/* ---- builtin methods ------------------------------------------------------ */

static bxi_status want_args(bxi_interp *in, const bxc_expr *e, uint32_t want)
{
    uint32_t got = e->method_call.args.len;
    if (got == want)
        return BXI_OK;
    bxi_error(in, BXI_E_ARITY, e->span, "`%s` takes %u argument%s but %u %s given",
              e->method_call.method.name, want, want == 1 ? "" : "s", got, got == 1 ? "was" : "were");
    return BXI_ERR;
}

/* Room for one more dim (BXI_SHAPE_CAP); else the generated code's error. */
static bxi_status shape_room(bxi_interp *in, const BxvShape *s, bxc_span span)
{
    if (s->len < BXI_SHAPE_CAP)
        return BXI_OK;
    bxi_error(in, BXI_E_INDEX, span, "a shape has at most %d dimensions in generated code",
              BXI_SHAPE_CAP);
    return BXI_ERR;
}

static bxi_status shape_mutate(bxi_interp *in, const bxc_expr *e, BxvShape *s, BxvValue *args,
                               BxvValue *out)
{
    const bxc_expr_list *al = &e->method_call.args;
    *out = bxv_unit();
    bxc_builtin_method id = bxc_builtin_method_find(BXC_TYPE_SHAPE, e->method_call.method.name);
    switch (id) {
    case BXC_BM_SHAPE_PUSH: {
        uint64_t d;
        if (want_args(in, e, 1) || bxi_to_index(in, args[0], al->items[0]->span, "a dimension", &d) ||
            shape_room(in, s, e->span))
            return BXI_ERR;
        bxv_shape_push(&in->scratch, s, d);
        return BXI_OK;
    }
    case BXC_BM_SHAPE_POP:
        /* Rust's Vec::pop returns an Option; the language has no Option, so
         * popping an empty shape is an error and the result is the dim. */
        if (want_args(in, e, 0))
            return BXI_ERR;
        if (s->len == 0) {
            bxi_error(in, BXI_E_INDEX, e->span, "`pop` on an empty shape");
            return BXI_ERR;
        }
        *out = bxv_int(s->dims[--s->len], BXV_USIZE);
        return BXI_OK;
    case BXC_BM_SHAPE_INSERT: {
        uint64_t at, d;
        if (want_args(in, e, 2) || bxi_to_index(in, args[0], al->items[0]->span, "an index", &at) ||
            bxi_to_index(in, args[1], al->items[1]->span, "a dimension", &d))
            return BXI_ERR;
        if (at > s->len) {
            bxi_error(in, BXI_E_INDEX, al->items[0]->span,
                      "insertion index %llu is out of range for a shape of rank %zu", (unsigned long long)at,
                      s->len);
            return BXI_ERR;
        }
        if (shape_room(in, s, e->span))
            return BXI_ERR;
        bxv_shape_insert(&in->scratch, s, (size_t)at, d);
        return BXI_OK;
    }
    case BXC_BM_SHAPE_REMOVE: {
        uint64_t at;
        if (want_args(in, e, 1) || bxi_to_index(in, args[0], al->items[0]->span, "an index", &at))
            return BXI_ERR;
        if (at >= s->len) {
            bxi_error(in, BXI_E_INDEX, al->items[0]->span,
                      "removal index %llu is out of range for a shape of rank %zu", (unsigned long long)at,
                      s->len);
            return BXI_ERR;
        }
        *out = bxv_int(bxv_shape_remove(s, (size_t)at), BXV_USIZE);
        return BXI_OK;
    }
    case BXC_BM_SHAPE_SWAP:
        break;
    default:
        /* a mutating method of another receiver (builtins.h) */
        bxi_error(in, BXI_E_NAME, e->method_call.method.span, "no method `%s` on a value of type `Shape`",
                  e->method_call.method.name);
        return BXI_ERR;
    }
    uint64_t a, b;
    if (want_args(in, e, 2) || bxi_to_index(in, args[0], al->items[0]->span, "an index", &a) ||
        bxi_to_index(in, args[1], al->items[1]->span, "an index", &b))
        return BXI_ERR;
    for (int k = 0; k < 2; k++) {
        uint64_t v = k ? b : a;
        if (v >= s->len) {
            bxi_error(in, BXI_E_INDEX, al->items[k]->span, "index %llu is out of range for a shape of rank %zu",
                      (unsigned long long)v, s->len);
            return BXI_ERR;
        }
    }
    uint64_t t = s->dims[a];
    s->dims[a] = s->dims[b];
    s->dims[b] = t;
    return BXI_OK;
}

/* `v.m(args)` on a struct or enum value: a method of its type's impl
 * blocks (the receiver auto-dereferenced, args already evaluated): the fn
 * the checker recorded (IMPL_FN), else (a tree it never saw) the one
 * found by the value's type name. */
static bxi_status impl_method_call(bxi_interp *in, const bxc_expr *e, const BxvValue *recv, BxvValue *args,
                                   uint32_t nargs, BxvValue *out)
{
    const char *m = e->method_call.method.name;
    BxvValue v = bxi_strip(*recv);
    uint32_t base, list;
    const bxc_fn *fn = NULL;
    if (e->res.kind == BXC_RES_IMPL_FN && e->res.fn && e->res.item && bxi_list_of(in, e->res.item, &base, &list))
        fn = e->res.fn;
    else
        fn = bxi_find_method(in, v.u.agg.type, m, &base, &list);
    if (!fn) {
        bxi_error(in, BXI_E_NAME, e->method_call.method.span, "no method `%s` on a value of type `%s`", m,
                  bxi_type_str(in, &v));
        return BXI_ERR;
    }
    if (!bxi_fn_has_self(fn)) {
        bxc_diag *d = bxi_error(in, BXI_E_NAME, e->method_call.method.span,
                                "`%s::%s` is an associated function, not a method", v.u.agg.type, m);
        bxc_diag_set_help(in->diags, d, "call it as `%s::%s(...)`", v.u.agg.type, m);
        return BXI_ERR;
    }
    /* The args may live in the caller's small on-stack array: copy them
     * to the scratch arena, which outlives the call. */
    BxvValue *heap = bxc_arena_alloc(&in->scratch, (nargs ? nargs : 1) * sizeof *heap);
    for (uint32_t i = 0; i < nargs; i++)
        heap[i] = args[i];
    return call_fn_in(in, fn, base, list, v.u.agg.type, &v, heap, nargs, e->span, out);
}

static bxi_status method_call(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    const char *m = e->method_call.method.name;
    uint32_t nargs = e->method_call.args.len;
    /* Builtin methods take at most two arguments and keep none of them, so
     * a hot `while i < s.len()` allocates nothing. */
    BxvValue small[4];
    BxvValue *args = nargs <= 4 ? small : bxc_arena_alloc(&in->scratch, nargs * sizeof *args);
    for (uint32_t i = 0; i < nargs; i++) {
        bxi_status st = bxi_eval_expr(in, e->method_call.args.items[i], &args[i]);
        if (st != BXI_OK)
            return st;
    }
    if (bxc_builtin_method_mutates(m)) {
        const bxc_expr *recv = e->method_call.receiver;
        bool placeable = recv->kind == BXC_EXPR_PATH || recv->kind == BXC_EXPR_FIELD ||
                         recv->kind == BXC_EXPR_TUPLE_FIELD;
        BxvShape *s = NULL;
        const BxvValue *p_value = NULL, *tmp_value = NULL;
        if (placeable) {
            place p;
            if (eval_place(in, recv, true, &p) != BXI_OK)
                return BXI_ERR;
            if (p.kind == PL_SHAPE)
                s = p.shape;
            else if (p.kind == PL_VALUE && p.v->kind == BXV_SHAPE)
                s = &p.v->u.shape;
            else if (p.kind == PL_VALUE)
                p_value = p.v;
        } else {
            /* A temporary: mutate a private copy. */
            BxvValue *tmp = bxc_arena_alloc(&in->scratch, sizeof *tmp);
            bxi_status st = bxi_eval_expr(in, recv, tmp);
            if (st != BXI_OK)
                return st;
            *tmp = bxv_copy(&in->scratch, tmp);
            if (tmp->kind == BXV_SHAPE)
                s = &tmp->u.shape;
            tmp_value = tmp;
        }
        if (!s) {
            /* a struct/enum may have an impl method of that name */
            const BxvValue *rv = placeable ? p_value : tmp_value;
            if (rv && (rv->kind == BXV_STRUCT || rv->kind == BXV_ENUM))
                return impl_method_call(in, e, rv, args, nargs, out);
            bxi_error(in, BXI_E_NAME, e->method_call.method.span, "`%s` is a method of `Shape` only", m);
            return BXI_ERR;
        }
        return shape_mutate(in, e, s, args, out);
    }

    BxvValue rv;
    bxi_status st = bxi_eval_expr(in, e->method_call.receiver, &rv);
    if (st != BXI_OK)
        return st;
    BxvValue v = bxi_strip(rv);   /* methods auto-deref their receiver */
    if (!strcmp(m, "clone")) {
        if (want_args(in, e, 0))
            return BXI_ERR;
        *out = bxv_copy(&in->scratch, &v);
        return BXI_OK;
    }
    bxc_builtin_method id = v.kind == BXV_SHAPE ? bxc_builtin_method_find(BXC_TYPE_SHAPE, m)
                          : v.kind == BXV_DTYPEV ? bxc_builtin_method_find(BXC_TYPE_DTYPE, m)
                          : BXC_BM_NONE;
    if (id != BXC_BM_NONE && want_args(in, e, bxc_builtin_methods[id].nparams))
        return BXI_ERR;
    switch (id) {
    case BXC_BM_SHAPE_LEN:
        *out = bxv_int((__int128)v.u.shape.len, BXV_USIZE);
        return BXI_OK;
    case BXC_BM_SHAPE_NUM_ELEMENTS: {
        __int128 n = 1;
        for (size_t i = 0; i < v.u.shape.len; i++) {
            n *= v.u.shape.dims[i];
            if (n > (__int128)UINT64_MAX) {
                bxi_error(in, BXI_E_OVERFLOW, e->span, "the number of elements overflows `usize`");
                return BXI_ERR;
            }
        }
        *out = bxv_int(n, BXV_USIZE);
        return BXI_OK;
    }
    case BXC_BM_DTYPE_IS_FLOAT:
    case BXC_BM_DTYPE_IS_INT:
    case BXC_BM_DTYPE_IS_BOOL: {
        BxvDType d = v.u.dtype;
        bool fl = d == BXV_DT_F32 || d == BXV_DT_F64 || d == BXV_DT_F16 || d == BXV_DT_BF16;
        bool bo = d == BXV_DT_BOOL;
        *out = bxv_bool(id == BXC_BM_DTYPE_IS_FLOAT ? fl : id == BXC_BM_DTYPE_IS_BOOL ? bo : !fl && !bo);
        return BXI_OK;
    }
    case BXC_BM_DTYPE_SIZE:
        *out = bxv_int(bxv_dtype_size(v.u.dtype), BXV_USIZE);
        return BXI_OK;
    case BXC_BM_SHAPE_SWAP: case BXC_BM_SHAPE_PUSH: case BXC_BM_SHAPE_POP:
    case BXC_BM_SHAPE_INSERT: case BXC_BM_SHAPE_REMOVE:
        break;   /* mutators: evaluated on a place above */
    case BXC_BM_NONE: case BXC_BM_COUNT:
        break;
    }
    if (v.kind == BXV_STRUCT || v.kind == BXV_ENUM)
        return impl_method_call(in, e, &v, args, nargs, out);
    bxi_error(in, BXI_E_NAME, e->method_call.method.span, "no method `%s` on a value of type `%s`", m,
              bxi_type_str(in, &v));
    return BXI_ERR;
}

/* ---- calls by path: builtins, assoc fns, variants, helper fns ----------- */

static bxi_status eval_args(bxi_interp *in, const bxc_expr_list *l, BxvValue **args)
{
    *args = bxc_arena_alloc(&in->scratch, (l->len ? l->len : 1) * sizeof **args);
    for (uint32_t i = 0; i < l->len; i++) {
        bxi_status st = bxi_eval_expr(in, l->items[i], &(*args)[i]);
        if (st != BXI_OK)
            return st;
    }
    return BXI_OK;
}

static bxi_status call_expr(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    const bxc_expr *callee = e->call.callee;
    const bxc_expr_list *al = &e->call.args;
    BxvValue *args;
    bxi_status st;
    if (callee->kind == BXC_EXPR_PATH) {
        const bxc_path *path = callee->path;
        const char *last = bxi_path_last(path);
        const char *first = path->segs.items[0].name;
        bool single = path->segs.len == 1;
        /* What the checker resolved the callee to (ast.h bxc_res): a
         * helper fn or an impl fn is called where it is declared. */
        uint32_t rbase, rlist;
        if (e->res.kind == BXC_RES_FN && e->res.item && bxi_list_of(in, e->res.item, &rbase, &rlist)) {
            if ((st = eval_args(in, al, &args)) != BXI_OK)
                return st;
            return call_fn(in, e->res.fn, rbase, rlist, args, al->len, e->span, out);
        }
        if (e->res.kind == BXC_RES_IMPL_FN && e->res.item && bxi_list_of(in, e->res.item, &rbase, &rlist)) {
            if ((st = eval_args(in, al, &args)) != BXI_OK)
                return st;
            return call_assoc(in, e->res.fn, rbase, rlist, e->res.type->decl->name, args, al->len, e->span, out);
        }
        /* A local closure or fn value shadows everything. */
        bxi_var *var = single ? bxi_find_var(in, last) : NULL;
        if (var) {
            if ((st = eval_args(in, al, &args)) != BXI_OK)
                return st;
            BxvValue cv = bxi_strip(*var->val);
            return bxi_call_value(in, &cv, args, al->len, e->span, out);
        }
        if (path->segs.len == 2 && !strcmp(first, "Shape") && !strcmp(last, "new")) {
            if ((st = eval_args(in, al, &args)) != BXI_OK)
                return st;
            if (al->len == 0) {
                *out = bxv_shape_new(&in->scratch, 4);
                return BXI_OK;
            }
            BxvValue a0 = bxi_strip(args[0]);
            if (al->len == 1 && a0.kind == BXV_SHAPE) {
                *out = bxv_copy(&in->scratch, &a0);
                return BXI_OK;
            }
            bxi_error(in, BXI_E_ARITY, e->span, "`Shape::new` takes no argument or a shape literal");
            return BXI_ERR;
        }
        if (path->segs.len == 2 && !strcmp(first, "TensorSpec") && !strcmp(last, "new")) {
            if ((st = eval_args(in, al, &args)) != BXI_OK)
                return st;
            if (al->len != 2) {
                bxi_error(in, BXI_E_ARITY, e->span, "`TensorSpec::new` takes 2 arguments (shape, dtype) but %u %s given",
                          al->len, al->len == 1 ? "was" : "were");
                return BXI_ERR;
            }
            BxvValue s = bxi_strip(args[0]), d = bxi_strip(args[1]);
            if (s.kind != BXV_SHAPE) {
                bxi_error(in, BXI_E_TYPE, al->items[0]->span, "expected `Shape`, found `%s`", bxi_type_str(in, &s));
                return BXI_ERR;
            }
            if (d.kind != BXV_DTYPEV) {
                bxi_error(in, BXI_E_TYPE, al->items[1]->span, "expected `DType`, found `%s`", bxi_type_str(in, &d));
                return BXI_ERR;
            }
            *out = bxv_spec(&in->scratch, &s.u.shape, d.u.dtype);
            return BXI_OK;
        }
        if (path->segs.len >= 2) {
            /* `Type::f(..)` / `Self::f(..)`: an impl fn, unless the enum
             * has a variant of that name (variants come first). */
            const char *q = self_map(in, path->segs.items[path->segs.len - 2].name);
            uint32_t mbase, mlist;
            const bxc_fn *mf = bxi_find_method(in, q, last, &mbase, &mlist);
            const bxc_item *qe = mf ? find_type(in, q, BXI_KIND(BXC_ITEM_ENUM), NULL) : NULL;
            if (mf && !(qe && find_variant(qe, last))) {
                if ((st = eval_args(in, al, &args)) != BXI_OK)
                    return st;
                return call_assoc(in, mf, mbase, mlist, q, args, al->len, e->span, out);
            }
        }
        const bxc_item *en;
        const bxc_variant *var2;
        bool is_meta;
        if (enum_variant_path(in, path, &en, &var2, &is_meta)) {
            if (!var2) {
                bxi_error(in, BXI_E_NAME, path->span, "enum `%s` has no variant `%s`",
                          path->segs.items[path->segs.len - 2].name, last);
                return BXI_ERR;
            }
            if (var2->kind != BXC_VARIANT_TUPLE || var2->fields.len != al->len) {
                bxi_error(in, BXI_E_ARITY, e->span, "variant `%s` takes %u positional field%s but %u %s given", last,
                          var2->kind == BXC_VARIANT_TUPLE ? var2->fields.len : 0,
                          var2->fields.len == 1 ? "" : "s", al->len, al->len == 1 ? "was" : "were");
                return BXI_ERR;
            }
            if ((st = eval_args(in, al, &args)) != BXI_OK)
                return st;
            for (uint32_t i = 0; i < al->len; i++)
                if (coerce_field(in, &args[i], var2->fields.items[i], is_meta, al->items[i]->span) != BXI_OK)
                    return BXI_ERR;
            *out = make_variant(in, path, var2, args, al->len);
            return BXI_OK;
        }
        bool meta_struct;
        const bxc_item *ts = single ? find_type(in, last, BXI_KIND(BXC_ITEM_STRUCT), &meta_struct) : NULL;
        if (ts && ts->struct_.is_tuple && !bxi_find_item(in, last, BXI_KIND(BXC_ITEM_FN), NULL, NULL)) {
            /* `S(a, b)` builds a tuple struct. */
            if (ts->struct_.fields.len != al->len) {
                bxi_error(in, BXI_E_ARITY, e->span, "`%s` has %u field%s but %u %s given", last,
                          ts->struct_.fields.len, ts->struct_.fields.len == 1 ? "" : "s", al->len,
                          al->len == 1 ? "was" : "were");
                return BXI_ERR;
            }
            if ((st = eval_args(in, al, &args)) != BXI_OK)
                return st;
            BxvValue r = {.kind = BXV_STRUCT};
            r.u.agg.type = last;
            r.u.agg.n = al->len;
            r.u.agg.fields = bxc_arena_alloc(&in->scratch, (al->len ? al->len : 1) * sizeof(BxvValue));
            for (uint32_t i = 0; i < al->len; i++) {
                if (coerce_field(in, &args[i], ts->struct_.fields.items[i], meta_struct, al->items[i]->span) != BXI_OK)
                    return BXI_ERR;
                r.u.agg.fields[i] = bxv_copy(&in->scratch, &args[i]);
            }
            *out = r;
            return BXI_OK;
        }
        uint32_t base, list;
        const bxc_item *fn = bxi_find_item(in, last, BXI_KIND(BXC_ITEM_FN), &base, &list);
        if (fn) {
            if ((st = eval_args(in, al, &args)) != BXI_OK)
                return st;
            return call_fn(in, fn->fn, base, list, args, al->len, e->span, out);
        }
        if (single && !strcmp(last, "panic")) {
            /* panic("message") — the language's way to reject bad input in
             * metadata code: a located error carrying the message. */
            if ((st = eval_args(in, al, &args)) != BXI_OK)
                return st;
            BxvValue msg = al->len ? bxi_strip(args[0]) : bxv_unit();
            if (al->len < 1 || msg.kind != BXV_STR) {
                bxi_error(in, BXI_E_ARITY, e->span, "`%s` takes a string literal: %s(\"message\")", last, last);
                return BXI_ERR;
            }
            /* each `{}` is replaced by the next argument, Rust-style */
            BxvBuf b = {0};
            size_t k = 0;
            uint32_t next = 1;
            while (k < msg.u.str.len) {
                if (k + 1 < msg.u.str.len && msg.u.str.s[k] == '{' && msg.u.str.s[k + 1] == '}' &&
                    next < al->len) {
                    BxvValue a = bxi_strip(args[next++]);
                    bxv_print(&b, &a);
                    k += 2;
                } else {
                    bxv_buf_append(&b, msg.u.str.s + k, 1);
                    k++;
                }
            }
            bxi_error(in, BXI_E_PANIC, e->span, "%s: %.*s", last, (int)b.len, b.data ? b.data : "");
            bxv_buf_free(&b);
            return BXI_ERR;
        }
        bxi_error(in, BXI_E_NAME, path->span, "cannot find function `%s`", last);
        return BXI_ERR;
    }
    BxvValue cv;
    if ((st = bxi_eval_expr(in, callee, &cv)) != BXI_OK)
        return st;
    if ((st = eval_args(in, al, &args)) != BXI_OK)
        return st;
    cv = bxi_strip(cv);
    return bxi_call_value(in, &cv, args, al->len, e->span, out);
}

static bxi_status eval_path(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    const bxc_path *path = e->path;
    const char *last = bxi_path_last(path);
    if (path->segs.len == 1) {
        bxi_var *v = bxi_find_var(in, last);
        if (v) {
            /* Shallow: the value shares the variable's storage until it is
             * stored somewhere (binding and aggregates copy).  Rust's move
             * and borrow rules rule out mutating the variable in between
             * (`(s, { s[0] = 9; 1 })` uses `s` after moving it). */
            *out = *v->val;
            return BXI_OK;
        }
        if (e->res.kind == BXC_RES_FN || bxi_find_item(in, last, BXI_KIND(BXC_ITEM_FN), NULL, NULL)) {
            BxvValue f = {.kind = BXV_FN};
            f.u.fn.name = last;
            f.u.fn.item = e->res.kind == BXC_RES_FN ? e->res.item : NULL;
            *out = f;
            return BXI_OK;
        }
        const bxc_item *us = find_type(in, last, BXI_KIND(BXC_ITEM_STRUCT), NULL);
        if (us && us->struct_.is_unit) {
            /* `S` names the value of a unit struct. */
            *out = (BxvValue){.kind = BXV_STRUCT};
            out->u.agg.type = last;
            return BXI_OK;
        }
        bxi_error(in, BXI_E_NAME, e->span, "cannot find value `%s`", last);
        return BXI_ERR;
    }
    const char *first = path->segs.items[path->segs.len - 2].name;
    if (!strcmp(first, "DType")) {
        BxvDType d;
        if (bxv_dtype_from_name(last, strlen(last), &d)) {
            *out = bxv_dtype(d);
            return BXI_OK;
        }
        bxc_diag *dg = bxi_error(in, BXI_E_NAME, path->segs.items[path->segs.len - 1].span,
                                 "`DType` has no variant `%s`", last);
        bxc_diag_set_help(in->diags, dg, "the dtypes are F32, F64, F16, BF16, I32, I64, U8, Bool");
        return BXI_ERR;
    }
    const bxc_item *en;
    const bxc_variant *var;
    bool is_meta;
    if (enum_variant_path(in, path, &en, &var, &is_meta)) {
        if (!var) {
            bxi_error(in, BXI_E_NAME, path->span, "enum `%s` has no variant `%s`", first, last);
            return BXI_ERR;
        }
        if (var->kind != BXC_VARIANT_UNIT) {
            bxi_error(in, BXI_E_TYPE, path->span, "variant `%s::%s` needs its fields", first, last);
            return BXI_ERR;
        }
        *out = make_variant(in, path, var, NULL, 0);
        return BXI_OK;
    }
    /* `std::shape::broadcast` names a helper fn (unchecked code: by its
     * last segment) */
    if (e->res.kind == BXC_RES_FN || bxi_find_item(in, last, BXI_KIND(BXC_ITEM_FN), NULL, NULL)) {
        BxvValue f = {.kind = BXV_FN};
        f.u.fn.name = last;
        f.u.fn.item = e->res.kind == BXC_RES_FN ? e->res.item : NULL;
        *out = f;
        return BXI_OK;
    }
    bxi_error(in, BXI_E_NAME, e->span, "cannot find `%s`", last);
    return BXI_ERR;
}

/* ---- statements and blocks --------------------------------------------- */

static bxi_status eval_stmt(bxi_interp *in, const bxc_stmt *s)
{
    BxvValue v;
    bxi_status st;
    switch (s->kind) {
    case BXC_STMT_LET:
        if (!s->init) {
            /* `let x;` — later assignment needs a slot; unit marks it unset. */
            if (s->pat->kind == BXC_PAT_IDENT) {
                BxvValue u = bxv_unit();
                bxi_push_var(in, s->pat->name.name, true, &u);
                return BXI_OK;
            }
            bxi_error(in, BXI_E_UNSUPPORTED, s->span, "`let` without a value needs a plain name");
            return BXI_ERR;
        }
        if ((st = bxi_eval_expr(in, s->init, &v)) != BXI_OK)
            return st;
        if (s->type && bxi_coerce(in, &v, s->type, s->init->span) != BXI_OK)
            return BXI_ERR;
        return bind_pat(in, s->pat, &v);
    case BXC_STMT_EXPR:
        return bxi_eval_expr(in, s->expr, &v);
    case BXC_STMT_EMPTY:
        return BXI_OK;
    case BXC_STMT_ITEM:
        /* Nested items are registered by the caller (the REPL). */
        return BXI_OK;
    case BXC_STMT_ERROR:
        break;
    }
    bxi_error(in, BXI_E_UNSUPPORTED, s->span, "cannot evaluate a statement with syntax errors");
    return BXI_ERR;
}

static bxi_status eval_block(bxi_interp *in, const bxc_block *b, BxvValue *out)
{
    uint32_t mark = in->nvars;
    bxi_status st = BXI_OK;
    for (uint32_t i = 0; i < b->stmts.len && st == BXI_OK; i++)
        st = eval_stmt(in, b->stmts.items[i]);
    if (st == BXI_OK) {
        if (b->tail)
            st = bxi_eval_expr(in, b->tail, out);
        else
            *out = bxv_unit();
    }
    /* The block's value may point at its locals' storage: it lives in the
     * arena, so popping the variables does not invalidate it. */
    in->nvars = mark;
    return st;
}

static bxi_status eval_loop_body(bxi_interp *in, const bxc_block *body, bxc_span span, bool *stop)
{
    BxvValue v;
    if (step(in, span) != BXI_OK)
        return BXI_ERR;
    bxi_status st = eval_block(in, body, &v);
    *stop = st == BXI_BREAK;
    if (st == BXI_BREAK || st == BXI_CONT)
        return BXI_OK;
    return st;
}

static bxi_status eval_cond(bxi_interp *in, const bxc_expr *c, bool *out)
{
    BxvValue v;
    bxi_status st = bxi_eval_expr(in, c, &v);
    if (st != BXI_OK)
        return st;
    v = bxi_strip(v);
    if (v.kind != BXV_BOOL) {
        bxi_error(in, BXI_E_TYPE, c->span, "a condition must be a `bool`, found `%s`", bxi_type_str(in, &v));
        return BXI_ERR;
    }
    *out = v.u.b;
    return BXI_OK;
}

static bxi_status eval_for(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    const bxc_expr *it = e->for_.iter;
    *out = bxv_unit();
    if (it->kind != BXC_EXPR_RANGE || !it->range.start || !it->range.end) {
        bxi_error(in, BXI_E_UNSUPPORTED, it->span, "`for` iterates over a range `a..b` or `a..=b` only");
        return BXI_ERR;
    }
    BxvValue a, b;
    bxi_status st;
    if ((st = bxi_eval_expr(in, it->range.start, &a)) != BXI_OK)
        return st;
    if ((st = bxi_eval_expr(in, it->range.end, &b)) != BXI_OK)
        return st;
    a = bxi_strip(a);
    b = bxi_strip(b);
    if (a.kind != BXV_INT || b.kind != BXV_INT) {
        bxi_error(in, BXI_E_TYPE, it->span, "a range needs integer bounds, found `%s` and `%s`", bxi_type_str(in, &a),
                  bxi_type_str(in, &b));
        return BXI_ERR;
    }
    /* Unify the bound types (the literal side adopts the other's). */
    BxvValue cmp;
    if (bxi_int_binop(in, BXC_BIN_LE, a, b, it->span, &cmp) != BXI_OK)
        return BXI_ERR;
    BxvIntType ty = a.u.i.ty == BXV_ILIT ? b.u.i.ty : a.u.i.ty;
    __int128 end = b.u.i.v + (it->range.inclusive ? 1 : 0);
    for (__int128 i = a.u.i.v; i < end; i++) {
        uint32_t mark = in->nvars;
        BxvValue iv = bxv_int(i, ty);
        if ((st = bind_pat(in, e->for_.pat, &iv)) != BXI_OK)
            return st;
        bool stop;
        st = eval_loop_body(in, e->for_.body, it->span, &stop);
        in->nvars = mark;
        if (st != BXI_OK)
            return st;
        if (stop)
            break;
    }
    return BXI_OK;
}

/* ---- expressions ----------------------------------------------------------- */

/* Integer literal suffixes (`3usize`) fix the type; otherwise the checker's
 * recorded type would, and without one the literal adopts its context. */
static BxvIntType int_lit_type(const char *text)
{
    if (!text)
        return BXV_ILIT;
    const char *s = text;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X' || s[1] == 'b' || s[1] == 'B' || s[1] == 'o' || s[1] == 'O'))
        s += 2;
    for (; *s; s++) {
        if (*s == 'i' || *s == 'u') {
            BxvIntType t;
            if (bxv_int_type_from_name(s, strlen(s), &t))
                return t;
            break;
        }
    }
    return BXV_ILIT;
}

/* value.h's integer order mirrors the checker's, so kinds convert by cast. */
_Static_assert((int)BXC_I8 == (int)BXV_I8 && (int)BXC_ISIZE == (int)BXV_ISIZE && (int)BXC_U8 == (int)BXV_U8 &&
                   (int)BXC_USIZE == (int)BXV_USIZE && (int)BXC_INT_KIND_COUNT == (int)BXV_ILIT,
               "BxvIntType follows bxc_int_kind");

/* The checker's recorded type of a literal node, when it ran. */
static bool checked_int_type(const bxc_expr *e, BxvIntType *out)
{
    const bxc_type *t = e->ty;
    if (!t || t->kind != BXC_TYPE_INT)
        return false;
    *out = (BxvIntType)t->int_kind;
    return true;
}

static bool checked_float_type(const bxc_expr *e, BxvFloatType *out)
{
    const bxc_type *t = e->ty;
    if (!t || t->kind != BXC_TYPE_FLOAT)
        return false;
    *out = t->float_kind == BXC_F32 ? BXV_F32 : BXV_F64;
    return true;
}

static BxvFloatType float_lit_type(const char *text)
{
    size_t n = text ? strlen(text) : 0;
    if (n > 3 && !strcmp(text + n - 3, "f32"))
        return BXV_F32;
    if (n > 3 && !strcmp(text + n - 3, "f64"))
        return BXV_F64;
    return BXV_FLIT;
}

/* Each expression kind is its own function so the dispatcher's frame (one
 * per nesting level) stays small: sanitizer builds at -O0 give every local
 * of a big switch its own slot and red zones. */
static __attribute__((noinline)) bxi_status ev_int(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    BxvIntType t;
    if (!checked_int_type(e, &t))
        t = int_lit_type(e->int_lit.text);
    *out = bxv_int((__int128)e->int_lit.value, t);
    if (t != BXV_ILIT && !bxv_int_fits(out->u.i.v, t)) {
        bxi_error(in, BXI_E_OVERFLOW, e->span, "literal out of range for `%s`", bxv_int_type_name(t));
        return BXI_ERR;
    }
    return BXI_OK;
}

static __attribute__((noinline)) bxi_status ev_float(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    BxvFloatType t;
    if (!checked_float_type(e, &t))
        t = float_lit_type(e->float_lit.text);
    *out = bxv_float(e->float_lit.value, t);
    return BXI_OK;
}

static __attribute__((noinline)) bxi_status ev_string(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    *out = (BxvValue){.kind = BXV_STR};
    out->u.str.s = e->string_lit.value;
    out->u.str.len = e->string_lit.len;
    return BXI_OK;
}

static __attribute__((noinline)) bxi_status ev_bool(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    *out = bxv_bool(e->bool_lit);
    return BXI_OK;
}

static __attribute__((noinline)) bxi_status ev_unary(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    bxi_status st;
    BxvValue a;
    if (e->unary.op == BXC_UN_NEG && e->unary.operand->kind == BXC_EXPR_INT) {
        /* `-128` as an i8: negate before the range check. */
        const bxc_expr *lit = e->unary.operand;
        BxvIntType t;
        if (!checked_int_type(lit, &t) && !checked_int_type(e, &t))
            t = int_lit_type(lit->int_lit.text);
        __int128 v = -(__int128)lit->int_lit.value;
        if (!bxv_int_fits(v, t)) {
            char buf[48];
            bxi_error(in, !bxv_int_type_signed(t) ? BXI_E_NEGATIVE : BXI_E_OVERFLOW, e->span,
                      "literal %s is out of range for `%s`", bxi_i128_str(buf, v), bxv_int_type_name(t));
            return BXI_ERR;
        }
        *out = bxv_int(v, t);
        return BXI_OK;
    }
    if (e->unary.op == BXC_UN_REF_MUT) {
        bxi_error(in, BXI_E_UNSUPPORTED, e->span, "`&mut` is not part of the metadata language");
        return BXI_ERR;
    }
    if ((st = bxi_eval_expr(in, e->unary.operand, &a)) != BXI_OK)
        return st;
    switch (e->unary.op) {
    case BXC_UN_REF:
        if (a.refs == 255) {
            bxi_error(in, BXI_E_UNSUPPORTED, e->span, "too many levels of reference");
            return BXI_ERR;
        }
        a.refs++;
        *out = a;
        return BXI_OK;
    case BXC_UN_DEREF:
        if (a.refs == 0) {
            bxi_error(in, BXI_E_TYPE, e->span, "`%s` is not a reference and cannot be dereferenced",
                      bxi_type_str(in, &a));
            return BXI_ERR;
        }
        a.refs--;
        *out = a;
        return BXI_OK;
    case BXC_UN_NOT:
        a = bxi_strip(a);
        if (a.kind == BXV_BOOL) {
            *out = bxv_bool(!a.u.b);
            return BXI_OK;
        }
        if (a.kind == BXV_INT && a.u.i.ty != BXV_ILIT) {
            /* Bitwise not within the type's width. */
            __int128 r = bxv_int_type_signed(a.u.i.ty) ? ~a.u.i.v : 0;
            if (!bxv_int_type_signed(a.u.i.ty)) {
                __int128 max = (__int128)bxc_int_kinds[a.u.i.ty].max;
                r = max - a.u.i.v;
            }
            *out = bxv_int(r, a.u.i.ty);
            return BXI_OK;
        }
        bxi_error(in, BXI_E_TYPE, e->span, "cannot apply `!` to `%s`", bxi_type_str(in, &a));
        return BXI_ERR;
    case BXC_UN_NEG:
        a = bxi_strip(a);
        if (a.kind == BXV_FLOAT) {
            *out = bxv_float(-a.u.f.v, a.u.f.ty);
            return BXI_OK;
        }
        if (a.kind == BXV_INT) {
            if (a.u.i.ty != BXV_ILIT && !bxv_int_type_signed(a.u.i.ty)) {
                bxi_error(in, BXI_E_NEGATIVE, e->span, "cannot negate a value of unsigned type `%s`",
                          bxv_int_type_name(a.u.i.ty));
                return BXI_ERR;
            }
            if (!bxv_int_fits(-a.u.i.v, a.u.i.ty)) {
                char buf[48];
                bxi_error(in, BXI_E_OVERFLOW, e->span, "attempt to negate with overflow: -(%s) does not fit in `%s`",
                          bxi_i128_str(buf, a.u.i.v), bxv_int_type_name(a.u.i.ty));
                return BXI_ERR;
            }
            *out = bxv_int(-a.u.i.v, a.u.i.ty);
            return BXI_OK;
        }
        bxi_error(in, BXI_E_TYPE, e->span, "cannot negate `%s`", bxi_type_str(in, &a));
        return BXI_ERR;
    default:
        break;
    }
    return BXI_ERR;
}

static __attribute__((noinline)) bxi_status ev_binary(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    bxi_status st;
    BxvValue a, b;
    if (e->binary.op == BXC_BIN_AND || e->binary.op == BXC_BIN_OR) {
        bool x, y;
        if ((st = eval_cond(in, e->binary.lhs, &x)) != BXI_OK)
            return st;
        if (x == (e->binary.op == BXC_BIN_OR)) {
            *out = bxv_bool(x);
            return BXI_OK;
        }
        if ((st = eval_cond(in, e->binary.rhs, &y)) != BXI_OK)
            return st;
        *out = bxv_bool(y);
        return BXI_OK;
    }
    if ((st = bxi_eval_expr(in, e->binary.lhs, &a)) != BXI_OK)
        return st;
    if ((st = bxi_eval_expr(in, e->binary.rhs, &b)) != BXI_OK)
        return st;
    return bxi_binop(in, e->binary.op, a, b, e->span, out);
}

static __attribute__((noinline)) bxi_status ev_assign(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    bxi_status st;
    BxvValue a, b;
    if ((st = bxi_eval_expr(in, e->assign.value, &b)) != BXI_OK)
        return st;
    place p;
    if ((st = eval_place(in, e->assign.target, true, &p)) != BXI_OK)
        return st;
    if (e->assign.op != BXC_BIN_NONE) {
        a = place_load(in, &p);
        if (bxi_binop(in, e->assign.op, a, b, e->span, &b) != BXI_OK)
            return BXI_ERR;
    }
    *out = bxv_unit();
    return place_store(in, &p, b, e->span);
}

static __attribute__((noinline)) bxi_status ev_field(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    bxi_status st;
    BxvValue a;
    if ((st = bxi_eval_expr(in, e->field.object, &a)) != BXI_OK)
        return st;
    BxvValue o = bxi_strip(a);
    const char *f = e->field.name.name;
    if (o.kind == BXV_SPEC && !strcmp(f, "shape")) {
        *out = (BxvValue){.kind = BXV_SHAPE};
        out->u.shape = o.u.spec.shape;
        out->refs = a.refs;     /* a field of a reference is borrowed */
        return BXI_OK;
    }
    if (o.kind == BXV_SPEC && !strcmp(f, "dtype")) {
        *out = bxv_dtype(o.u.spec.dtype);
        return BXI_OK;
    }
    if ((o.kind == BXV_STRUCT || o.kind == BXV_ENUM) && o.u.agg.names) {
        for (size_t i = 0; i < o.u.agg.n; i++) {
            if (bxi_name_is(o.u.agg.names[i], f)) {
                *out = o.u.agg.fields[i];
                if (!out->refs)
                    out->refs = a.refs;
                return BXI_OK;
            }
        }
    }
    bxi_error(in, BXI_E_NAME, e->field.name.span, "no field `%s` on a value of type `%s`", f, bxi_type_str(in, &o));
    return BXI_ERR;
}

static __attribute__((noinline)) bxi_status ev_tuple_field(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    bxi_status st;
    BxvValue a;
    if ((st = bxi_eval_expr(in, e->tuple_field.object, &a)) != BXI_OK)
        return st;
    BxvValue o = bxi_strip(a);
    uint32_t k = e->tuple_field.index;
    if (o.kind == BXV_TUPLE && k < o.u.tuple.n) {
        *out = o.u.tuple.items[k];
        return BXI_OK;
    }
    if ((o.kind == BXV_STRUCT || o.kind == BXV_ENUM) && !o.u.agg.braces && k < o.u.agg.n) {
        *out = o.u.agg.fields[k];
        return BXI_OK;
    }
    bxi_error(in, BXI_E_INDEX, e->tuple_field.index_span, "no field `%u` on a value of type `%s`", k,
              bxi_type_str(in, &o));
    return BXI_ERR;
}

static __attribute__((noinline)) bxi_status ev_index(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    bxi_status st;
    BxvValue a, b;
    if ((st = bxi_eval_expr(in, e->index.object, &a)) != BXI_OK)
        return st;
    if ((st = bxi_eval_expr(in, e->index.index, &b)) != BXI_OK)
        return st;
    a = bxi_strip(a);
    if (a.kind != BXV_SHAPE) {
        bxi_error(in, BXI_E_TYPE, e->index.object->span, "only a `Shape` can be indexed, found `%s`",
                  bxi_type_str(in, &a));
        return BXI_ERR;
    }
    uint64_t idx;
    if (bxi_to_index(in, b, e->index.index->span, "an index", &idx) != BXI_OK)
        return BXI_ERR;
    if (idx >= a.u.shape.len) {
        bxi_error(in, BXI_E_INDEX, e->span, "index %llu is out of range for a shape of rank %zu",
                  (unsigned long long)idx, a.u.shape.len);
        return BXI_ERR;
    }
    *out = bxv_int(a.u.shape.dims[idx], BXV_USIZE);
    return BXI_OK;
}

static __attribute__((noinline)) bxi_status ev_if(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    bxi_status st;
    bool c;
    if ((st = eval_cond(in, e->if_.cond, &c)) != BXI_OK)
        return st;
    if (c)
        return eval_block(in, e->if_.then_block, out);
    if (e->if_.else_)
        return bxi_eval_expr(in, e->if_.else_, out);
    *out = bxv_unit();
    return BXI_OK;
}

static __attribute__((noinline)) bxi_status ev_while(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    bxi_status st;
    *out = bxv_unit();
    for (;;) {
        bool c, stop;
        if ((st = eval_cond(in, e->while_.cond, &c)) != BXI_OK)
            return st;
        if (!c)
            return BXI_OK;
        if ((st = eval_loop_body(in, e->while_.body, e->while_.cond->span, &stop)) != BXI_OK)
            return st;
        if (stop)
            return BXI_OK;
    }
}

static __attribute__((noinline)) bxi_status ev_loop(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    bxi_status st;
    *out = bxv_unit();
    for (;;) {
        bool stop;
        if ((st = eval_loop_body(in, e->loop_.body, e->span, &stop)) != BXI_OK)
            return st;
        if (stop)
            return BXI_OK;
    }
}

static __attribute__((noinline)) bxi_status ev_return(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    bxi_status st;
    BxvValue a;
    if (e->ret.value) {
        if ((st = bxi_eval_expr(in, e->ret.value, &a)) != BXI_OK)
            return st;
        in->ret = a;
    } else {
        in->ret = bxv_unit();
    }
    return BXI_RET;
}

static __attribute__((noinline)) bxi_status ev_tuple(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    bxi_status st;
    BxvValue a;
    uint32_t n = e->tuple.elems.len;
    BxvValue r = {.kind = n ? BXV_TUPLE : BXV_UNIT};
    if (n) {
        r.u.tuple.n = n;
        r.u.tuple.items = bxc_arena_alloc(&in->scratch, n * sizeof(BxvValue));
        for (uint32_t i = 0; i < n; i++) {
            if ((st = bxi_eval_expr(in, e->tuple.elems.items[i], &a)) != BXI_OK)
                return st;
            r.u.tuple.items[i] = bxv_copy(&in->scratch, &a);
        }
    }
    *out = r;
    return BXI_OK;
}

static __attribute__((noinline)) bxi_status ev_array(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    bxi_status st;
    BxvValue a;
    /* `[2, 3]` is a shape literal: its elements are `usize` dims. */
    BxvValue s = bxv_shape_new(&in->scratch, e->array.elems.len);
    for (uint32_t i = 0; i < e->array.elems.len; i++) {
        uint64_t d;
        if ((st = bxi_eval_expr(in, e->array.elems.items[i], &a)) != BXI_OK)
            return st;
        if (bxi_to_index(in, a, e->array.elems.items[i]->span, "a shape dimension", &d) != BXI_OK)
            return BXI_ERR;
        if (shape_room(in, &s.u.shape, e->array.elems.items[i]->span))
            return BXI_ERR;
        bxv_shape_push(&in->scratch, &s.u.shape, d);
    }
    *out = s;
    return BXI_OK;
}

static __attribute__((noinline)) bxi_status ev_closure(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    /* Capture the defining frame by value (closures cannot mutate their
     * captures: there is no `&mut`, and `move` semantics copy). */
    bxi_capture *cap = bxc_arena_alloc(&in->scratch, sizeof *cap);
    cap->n = in->nvars - in->frame_start;
    cap->base = in->base;
    cap->list = in->cur_list;
    cap->vars = bxc_arena_alloc(&in->scratch, (cap->n ? cap->n : 1) * sizeof *cap->vars);
    for (uint32_t i = 0; i < cap->n; i++) {
        const bxi_var *v = &in->vars[in->frame_start + i];
        BxvValue *slot = bxc_arena_alloc(&in->scratch, sizeof *slot);
        *slot = bxv_copy(&in->scratch, v->val);
        cap->vars[i] = (bxi_var){v->name, v->is_mut, slot};
    }
    *out = (BxvValue){.kind = BXV_CLOSURE};
    out->u.closure.node = e;
    out->u.closure.env = cap;
    return BXI_OK;
}

static __attribute__((noinline)) bxi_status ev_range(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    bxi_error(in, BXI_E_UNSUPPORTED, e->span, "a range is only allowed as the iterable of `for`");
    return BXI_ERR;
}

static bxi_status eval_expr_inner(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    switch (e->kind) {
    case BXC_EXPR_INT:
        return ev_int(in, e, out);
    case BXC_EXPR_FLOAT:
        return ev_float(in, e, out);
    case BXC_EXPR_STRING:
        return ev_string(in, e, out);
    case BXC_EXPR_BOOL:
        return ev_bool(in, e, out);
    case BXC_EXPR_PATH:
        return eval_path(in, e, out);
    case BXC_EXPR_UNARY:
        return ev_unary(in, e, out);
    case BXC_EXPR_BINARY:
        return ev_binary(in, e, out);
    case BXC_EXPR_ASSIGN:
        return ev_assign(in, e, out);
    case BXC_EXPR_CAST:
        return bxi_eval_cast(in, e, out);
    case BXC_EXPR_CALL:
        return call_expr(in, e, out);
    case BXC_EXPR_METHOD_CALL:
        return method_call(in, e, out);
    case BXC_EXPR_FIELD:
        return ev_field(in, e, out);
    case BXC_EXPR_TUPLE_FIELD:
        return ev_tuple_field(in, e, out);
    case BXC_EXPR_INDEX:
        return ev_index(in, e, out);
    case BXC_EXPR_BLOCK:
        return eval_block(in, e->block, out);
    case BXC_EXPR_IF:
        return ev_if(in, e, out);
    case BXC_EXPR_WHILE:
        return ev_while(in, e, out);
    case BXC_EXPR_LOOP:
        return ev_loop(in, e, out);
    case BXC_EXPR_FOR:
        return eval_for(in, e, out);
    case BXC_EXPR_BREAK:
        return BXI_BREAK;
    case BXC_EXPR_CONTINUE:
        return BXI_CONT;
    case BXC_EXPR_RETURN:
        return ev_return(in, e, out);
    case BXC_EXPR_STRUCT:
        return eval_struct_lit(in, e, out);
    case BXC_EXPR_TUPLE:
        return ev_tuple(in, e, out);
    case BXC_EXPR_ARRAY:
        return ev_array(in, e, out);
    case BXC_EXPR_CLOSURE:
        return ev_closure(in, e, out);
    case BXC_EXPR_RANGE:
        return ev_range(in, e, out);
    case BXC_EXPR_ERROR:
    case BXC_EXPR_KIND_COUNT:
        break;
    }
    bxi_error(in, BXI_E_UNSUPPORTED, e->span, "cannot evaluate an expression with syntax errors");
    return BXI_ERR;
}

bxi_status bxi_eval_expr(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    if (in->stack_base > here && in->stack_base - here > in->lim.max_stack_bytes) {
        bxc_diag *d = bxi_error(in, BXI_E_RECURSION, e->span,
                                "evaluation nested too deeply (more than %zu KiB of stack)",
                                in->lim.max_stack_bytes >> 10);
        bxc_diag_set_help(in->diags, d, "split the expression with `let` bindings, or recurse less deeply");
        return BXI_ERR;
    }
    return eval_expr_inner(in, e, out);
}

/* ---- public entry points -------------------------------------------------- */

static bool finish(bxi_interp *in, bxi_status st, BxvValue *out, bxc_span span)
{
    if (st == BXI_RET) {
        *out = in->ret;
        return true;
    }
    if (st == BXI_BREAK || st == BXI_CONT) {
        bxi_error(in, BXI_E_TYPE, span, "`break`/`continue` outside of a loop");
        return false;
    }
    return st == BXI_OK;
}

bool bxi_eval(bxi_interp *in, const bxc_expr *e, uint32_t file_base, const bxi_env *env, BxvValue *out)
{
    bxi_reset(in);
    in->base = file_base;
    bxi_push_env(in, env);
    return finish(in, bxi_eval_expr(in, e, out), out, e->span);
}

bool bxi_eval_repl(bxi_interp *in, const bxc_block *blk, uint32_t file_base, bxi_env *env, BxvValue *out,
                   bool *has_value)
{
    bxi_reset(in);
    in->base = file_base;
    *has_value = false;
    bxi_push_env(in, env);
    bxi_status st = BXI_OK;
    /* No scope of its own: top-level `let`s stay visible for the write-back. */
    for (uint32_t i = 0; i < blk->stmts.len && st == BXI_OK; i++)
        st = eval_stmt(in, blk->stmts.items[i]);
    if (st == BXI_OK && blk->tail) {
        st = bxi_eval_expr(in, blk->tail, out);
        *has_value = st == BXI_OK;
    }
    if (!finish(in, st, out, blk->span))
        return false;
    if (st == BXI_RET)
        *has_value = true;
    /* Persist the top-level variables (new lets and mutated bindings). */
    for (uint32_t i = 0; i < in->nvars; i++) {
        const bxi_var *v = &in->vars[i];
        if (v->val->kind == BXV_CLOSURE) {
            /* A closure points into this line's syntax tree, which is
             * discarded after the line; it cannot outlive it. */
            bxc_diag_warning(in->diags, BXI_E_UNSUPPORTED, bxc_span_none(),
                         "`%s` holds a closure, which the REPL does not keep past the line", v->name);
            continue;
        }
        bxi_env_set(env, v->name, v->is_mut, v->val);
    }
    /* The out value may live in the scratch arena; the caller prints it
     * before the next evaluation. */
    return true;
}

static bool call_entry(bxi_interp *in, const bxc_item *it, uint32_t base, uint32_t list, const BxvValue *args,
                       uint32_t nargs, BxvValue *out)
{
    BxvValue *copies = bxc_arena_alloc(&in->scratch, (nargs ? nargs : 1) * sizeof *copies);
    for (uint32_t i = 0; i < nargs; i++)
        copies[i] = bxv_copy(&in->scratch, &args[i]);
    in->base = base;
    return call_fn(in, it->fn, base, list, copies, nargs, it->fn->name.span, out) == BXI_OK;
}

bool bxi_call_fn(bxi_interp *in, const char *name, const BxvValue *args, uint32_t nargs, BxvValue *out)
{
    bxi_reset(in);
    uint32_t base, list;
    const bxc_item *it = bxi_find_item(in, name, BXI_KIND(BXC_ITEM_FN), &base, &list);
    if (!it) {
        bxc_diag_error(in->diags, BXI_E_NAME, bxc_span_none(), "cannot find function `%s`", name);
        return false;
    }
    return call_entry(in, it, base, list, args, nargs, out);
}

bool bxi_call_item(bxi_interp *in, const bxc_item *fn, const BxvValue *args, uint32_t nargs, BxvValue *out)
{
    bxi_reset(in);
    uint32_t base, list;
    if (!fn || fn->kind != BXC_ITEM_FN || !bxi_list_of(in, fn, &base, &list)) {
        bxc_diag_error(in->diags, BXI_E_NAME, bxc_span_none(), "cannot find function `%s`",
                       fn && fn->kind == BXC_ITEM_FN ? fn->fn->name.name : "?");
        return false;
    }
    return call_entry(in, fn, base, list, args, nargs, out);
}
