/* interp_meta.c — evaluating a trait method's `#[fusion(...)]` annotation
 * (language.md §5) on given argument values: the REPL's `:meta` and, later,
 * the code generator's differential test.
 *
 *   dtype = E, shape = E  tensor names are bound to their DType while E
 *                         (dtype) runs and to their &Shape while E (shape)
 *                         runs; the result is a TensorSpec.
 *   meta = callable       a closure or fn path called with &TensorSpec per
 *                         tensor, &NameMetadata per extension value and &T
 *                         per ordinary argument; its result is the output.
 *   default               the method inherits its default body: the body
 *                         runs over the specs, each op through the
 *                         runtime's inference rule (interp_body.c). */
#include "interp_int.h"
#include "types.h"

#include <string.h>

/* Every `:meta` and `:scalars` reads the checker's record of the method
 * (ast.h bxc_method_rec: its form, each argument's class, its scalar list),
 * never the attributes themselves. */

/* Binds every parameter for a field expression: tensors as `what` (0: their
 * DType, 1: their &Shape, 2: their whole TensorSpec — what a scalar
 * encoding sees), the rest borrowed. */
static void bind_field_params(bxi_interp *in, const bxc_method_rec *rec, const BxvValue *args, int what)
{
    for (uint32_t i = 0, k = 0; i < rec->nparams; i++) {
        const bxc_param *p = rec->params[i].p;
        if (p->is_self)
            continue;
        const BxvValue *a = &args[k++];
        if (p->pat->kind != BXC_PAT_IDENT)
            continue;
        BxvValue v;
        if (rec->params[i].cls == BXC_ARG_TENSOR && what != 2) {
            if (what == 0) {
                v = bxv_dtype(a->u.spec.dtype);
            } else {
                v = (BxvValue){.kind = BXV_SHAPE};
                v.u.shape = a->u.spec.shape;
                v.refs = 1;
            }
        } else {
            v = *a;
            v.refs++;
        }
        bxi_push_var(in, p->pat->name.name, false, &v);
    }
}

static bxi_status eval_field(bxi_interp *in, const bxc_method_rec *rec, const BxvValue *args,
                             const bxc_attr_arg *arg, int what, BxvValue *out)
{
    const bxc_expr *e = arg->value;   /* typed: a closure there is the checker's E0703 */
    uint32_t mark = in->nvars, start = in->frame_start;
    in->frame_start = in->nvars;
    bind_field_params(in, rec, args, what);
    bxi_status st = bxi_eval_expr(in, e, out);
    in->nvars = mark;
    in->frame_start = start;
    if (st == BXI_RET) {
        *out = in->ret;
        st = BXI_OK;
    }
    if (st != BXI_OK)
        return BXI_ERR;
    BxvValue v = *out;
    v.refs = 0;   /* a bare operand copies (`shape = lhs`) */
    if (what == 0 && v.kind != BXV_DTYPEV) {
        bxi_error(in, BXI_E_META, e->span, "`dtype = ...` must produce a `DType`");
        return BXI_ERR;
    }
    if (what == 1 && v.kind != BXV_SHAPE) {
        bxi_error(in, BXI_E_META, e->span, "`shape = ...` must produce a `Shape`");
        return BXI_ERR;
    }
    *out = v;
    return BXI_OK;
}

/* Output metadata mirrors the outputs: specs, tuples of them, or metadata
 * structs/enums.  Plain scalars are not metadata. */
static bool is_metadata(const BxvValue *v)
{
    switch (v->kind) {
    case BXV_SPEC:
    case BXV_STRUCT:
    case BXV_ENUM:
        return true;
    case BXV_TUPLE:
        for (size_t i = 0; i < v->u.tuple.n; i++)
            if (!is_metadata(&v->u.tuple.items[i]))
                return false;
        return true;
    default:
        return false;
    }
}

/* The checker's record of the trait method `trait::method`, or NULL
 * after an error. */
static const bxc_method_rec *trait_method(bxi_interp *in, const char *trait, const char *method, bxc_span site,
                                  uint32_t *base, uint32_t *list)
{
    const bxc_item *tr = bxi_find_item(in, trait, BXI_KIND(BXC_ITEM_TRAIT), base, list);
    if (!tr) {
        bxi_error(in, BXI_E_NAME, site, "cannot find trait `%s`", trait);
        return NULL;
    }
    const bxc_fn *fn = NULL;
    for (uint32_t i = 0; i < tr->trait.methods.len; i++)
        if (strcmp(tr->trait.methods.items[i]->name.name, method) == 0)
            fn = tr->trait.methods.items[i];
    if (!fn) {
        bxc_diag *d = bxi_error(in, BXI_E_NAME, site, "trait `%s` has no method `%s`", trait, method);
        uint32_t n = tr->trait.methods.len;
        const char **names = bxc_arena_alloc(&in->scratch, (n ? n : 1) * sizeof *names);
        for (uint32_t i = 0; i < n; i++) names[i] = tr->trait.methods.items[i]->name.name;
        const char *near = bxc_diag_nearest(method, names, n);
        if (near) bxc_diag_set_help(in->diags, d, "did you mean `%s`?", near);
        return NULL;
    }
    if (fn->method && !fn->method->active) {
        /* its metadata code is not checked, and its C has no metadata functions */
        bxc_diag *d = bxi_error(in, BXI_E_META, site, "`%s::%s` is switched off by a `#[cfg]` for these features",
                                trait, method);
        bxc_diag_set_help(in->diags, d, "load the file with the features that switch it on");
        return NULL;
    }
    if (!fn->method) {
        /* bxc_check_unit records every method of a checked unit */
        bxc_diag *d = bxi_error(in, BXI_E_META, site, "`%s::%s` was not checked", trait, method);
        bxc_diag_set_help(in->diags, d, "run the checker over its unit first (bxc_check_unit): `:meta` and "
                                        "`:scalars` read its record of the method");
        return NULL;
    }
    return fn->method;
}

static bool check_call_args(bxi_interp *in, const char *trait, const char *method, const bxc_method_rec *rec,
                            uint32_t base, BxvValue *args, uint32_t nargs, bxc_span site);

/* The core of :meta, on values already in the scratch arena; `site` (local
 * to in->base) locates argument errors. */
static bxi_meta_status meta_run(bxi_interp *in, const char *trait, const char *method, BxvValue *args,
                                uint32_t nargs, bxc_span site, BxvValue *out, const char **message)
{
    uint32_t base, list;
    const bxc_method_rec *rec = trait_method(in, trait, method, site, &base, &list);
    if (!rec)
        return BXI_META_ERROR;
    if (rec->form == BXC_FUSION_NONE) {
        bxc_diag *d = bxi_error(in, BXI_E_META, site, "`%s::%s` has no #[fusion(...)] annotation", trait, method);
        bxc_diag_set_help(in->diags, d, "only methods of traits with `Fusion` in #[backend_extension] carry output metadata");
        return BXI_META_ERROR;
    }
    bool deflt = rec->form == BXC_FUSION_DEFAULT;
    if (deflt && !rec->fn->body) {
        *message = bxc_arena_printf(&in->scratch,
                                    "`%s::%s` uses #[fusion(default)] but has no default body to evaluate",
                                    trait, method);
        return BXI_META_DEFAULT;
    }

    if (!check_call_args(in, trait, method, rec, base, args, nargs, site))
        return BXI_META_ERROR;
    if (deflt) {
        uint32_t saved_base = in->base, saved_list = in->cur_list;
        in->base = base;
        in->cur_list = list;
        bxi_status st = bxi_eval_default_body(in, rec->fn, args, out);
        in->base = saved_base;
        in->cur_list = saved_list;
        return st == BXI_OK ? BXI_META_VALUE : BXI_META_ERROR;
    }

    uint32_t saved_base = in->base, saved_list = in->cur_list;
    in->base = base;
    in->cur_list = list;   /* the annotation sees its own module's names */
    bxi_meta_status result = BXI_META_ERROR;
    const bxc_attr_arg *meta = rec->meta, *dt = rec->dtype, *sh = rec->shape;
    if (rec->form == BXC_FUSION_META) {
        uint32_t mark = in->nvars, start = in->frame_start;
        in->frame_start = in->nvars;   /* the callable sees no REPL locals */
        BxvValue callee;
        bxi_status st = bxi_eval_expr(in, meta->value, &callee);
        in->frame_start = start;
        in->nvars = mark;
        if (st == BXI_OK) {
            callee.refs = 0;
            if (callee.kind != BXV_CLOSURE && callee.kind != BXV_FN) {
                bxi_error(in, BXI_E_META, meta->value->span, "`meta = ...` must be a closure or a fn path");
            } else {
                /* Everything is passed by reference, in declaration order. */
                for (uint32_t i = 0; i < nargs; i++)
                    args[i].refs = 1;
                st = bxi_call_value(in, &callee, args, nargs, meta->value->span, out);
                if (st == BXI_OK) {
                    out->refs = 0;
                    if (!is_metadata(out)) {
                        BxvBuf b = {0};
                        bxv_print_type(&b, out);
                        bxc_diag *d = bxi_error(in, BXI_E_META, meta->value->span,
                                                "`meta` must return output metadata, found `%s`",
                                                b.data ? b.data : "?");
                        bxv_buf_free(&b);
                        bxc_diag_set_help(in->diags, d,
                                          "return a TensorSpec per tensor output, tuples of them, or a "
                                          "NameMetadata value; put ordinary output fields in an extension struct");
                    } else {
                        result = BXI_META_VALUE;
                    }
                }
            }
        }
    } else {   /* BXC_FUSION_FIELDS */
        BxvValue d, s;
        if (eval_field(in, rec, args, dt, 0, &d) == BXI_OK && eval_field(in, rec, args, sh, 1, &s) == BXI_OK) {
            *out = bxv_spec(&in->scratch, &s.u.shape, d.u.dtype);
            result = BXI_META_VALUE;
        }
    }
    in->base = saved_base;
    in->cur_list = saved_list;
    return result;
}

/* Checks `args` against the parameters of the method (one per parameter
 * in declaration order) and gives ordinary literals their declared types. */
static bool check_call_args(bxi_interp *in, const char *trait, const char *method, const bxc_method_rec *rec,
                            uint32_t base, BxvValue *args, uint32_t nargs, bxc_span site)
{
    uint32_t nparams = 0;
    for (uint32_t i = 0; i < rec->nparams; i++)
        nparams += !rec->params[i].p->is_self;
    if (nparams != nargs) {
        bxi_error(in, BXI_E_ARITY, site, "`%s::%s` takes %u argument%s but %u %s given", trait, method, nparams,
                  nparams == 1 ? "" : "s", nargs, nargs == 1 ? "was" : "were");
        return false;
    }
    for (uint32_t i = 0, k = 0; i < rec->nparams; i++) {
        const bxc_method_param *mp = &rec->params[i];
        const bxc_param *p = mp->p;
        if (p->is_self)
            continue;
        BxvValue *a = &args[k++];
        a->refs = 0;
        const char *pname = mp->name;
        if (mp->cls == BXC_ARG_TENSOR) {
            if (a->kind != BXV_SPEC) {
                bxc_diag *d = bxi_error(in, BXI_E_META, site, "argument `%s` is a tensor: pass a `TensorSpec`", pname);
                bxc_diag_set_help(in->diags, d, "e.g. `TensorSpec::new([2, 3], DType::F32)`");
                return false;
            }
        } else if (mp->cls == BXC_ARG_EXT) {
            /* An extension argument is described by its metadata companion. */
            const char *ext = mp->base->decl->name;
            size_t el = strlen(ext);
            bool ok = (a->kind == BXV_STRUCT || a->kind == BXV_ENUM) && a->u.agg.type &&
                      strncmp(a->u.agg.type, ext, el) == 0 && strcmp(a->u.agg.type + el, "Metadata") == 0;
            if (!ok) {
                bxc_diag *d = bxi_error(in, BXI_E_META, site,
                                        "argument `%s` is an extension value: pass a `%sMetadata`", pname, ext);
                bxc_diag_set_help(in->diags, d, "its tensors are TensorSpecs: `%sMetadata { ... }`", ext);
                return false;
            }
        } else {
            /* Ordinary values: literals take the declared type (in the base
             * of the method's declaration, where the type is written). */
            uint32_t saved = in->base;
            in->base = base;
            bxi_status st = bxi_coerce(in, a, p->type, p->span);
            in->base = saved;
            a->refs = 0;
            if (st != BXI_OK)
                return false;
        }
    }

    return true;
}

bxi_meta_status bxi_meta(bxi_interp *in, const char *trait, const char *method, const BxvValue *args,
                         uint32_t nargs, BxvValue *out, const char **message)
{
    bxi_reset(in);
    BxvValue *copies = bxc_arena_alloc(&in->scratch, (nargs ? nargs : 1) * sizeof *copies);
    for (uint32_t i = 0; i < nargs; i++)
        copies[i] = bxv_copy(&in->scratch, &args[i]);
    return meta_run(in, trait, method, copies, nargs, bxc_span_none(), out, message);
}

/* The shared front half of `:meta` and `:scalars`: `call` must be
 * `Trait::method(args...)`; evaluates the arguments into scratch copies. */
static bool eval_trait_call(bxi_interp *in, const bxc_expr *call, uint32_t file_base, const bxi_env *env,
                            const char *example, const bxc_path **path, BxvValue **args, uint32_t *nargs)
{
    bxi_reset(in);
    in->base = file_base;
    bxi_push_env(in, env);
    if (call->kind != BXC_EXPR_CALL || call->call.callee->kind != BXC_EXPR_PATH ||
        call->call.callee->path->segs.len != 2) {
        bxc_diag *d = bxi_error(in, BXI_E_META, call->span, "expected `Trait::method(args...)`");
        bxc_diag_set_help(in->diags, d, "%s", example);
        return false;
    }
    uint32_t n = call->call.args.len;
    BxvValue *vals = bxc_arena_alloc(&in->scratch, (n ? n : 1) * sizeof *vals);
    for (uint32_t i = 0; i < n; i++) {
        BxvValue v;
        if (bxi_eval_expr(in, call->call.args.items[i], &v) != BXI_OK)
            return false;
        vals[i] = bxv_copy(&in->scratch, &v);
    }
    *path = call->call.callee->path;
    *args = vals;
    *nargs = n;
    return true;
}

bxi_meta_status bxi_meta_call(bxi_interp *in, const bxc_expr *call, uint32_t file_base, const bxi_env *env,
                              BxvValue *out, const char **message)
{
    const bxc_path *p;
    BxvValue *args;
    uint32_t n;
    if (!eval_trait_call(in, call, file_base, env, "e.g. `:meta MyExtension::transpose_2d(x)` with x a TensorSpec",
                         &p, &args, &n))
        return BXI_META_ERROR;
    return meta_run(in, p->segs.items[0].name, p->segs.items[1].name, args, n, call->span, out, message);
}

/* ---- scalars (language.md §4) ------------------------------------------- */

static bool is_scalar_value(const BxvValue *v)
{
    return v->kind == BXV_INT || v->kind == BXV_FLOAT || v->kind == BXV_BOOL;
}

/* A marked value's scalar, read as the record says (bxc_method_scalar.read):
 * itself, a unit-only enum's variant index (in the declaration the checker
 * resolved the argument's type to), or a one-field struct's field. */
static bool read_marked(bxi_interp *in, const bxc_method_rec *rec, const bxc_method_scalar *sc, BxvValue v,
                        bxc_span site, BxvValue *out)
{
    const bxc_method_param *mp = &rec->params[sc->param];
    const bxc_type_decl *d = mp->base->kind == BXC_TYPE_ENUM || mp->base->kind == BXC_TYPE_STRUCT ? mp->base->decl : NULL;
    v.refs = 0;
    if (sc->read == BXC_SCALAR_READ_VALUE && is_scalar_value(&v)) {
        *out = v;
        return true;
    }
    if (sc->read == BXC_SCALAR_READ_TAG && d && v.kind == BXV_ENUM && v.u.agg.n == 0) {
        for (uint32_t i = 0; i < d->nvariants; i++)
            if (bxi_name_is(d->variants[i].name, v.u.agg.variant)) {
                *out = bxv_int(i, BXV_U32);
                return true;
            }
    }
    if (sc->read == BXC_SCALAR_READ_FIELD && v.kind == BXV_STRUCT && v.u.agg.n == 1 &&
        is_scalar_value(&v.u.agg.fields[0])) {
        *out = v.u.agg.fields[0];
        out->refs = 0;
        return true;
    }
    bxi_error(in, BXI_E_META, site, "argument `%s` (a `%s`) does not convert to a scalar", mp->name,
              bxi_type_str(in, &v));
    return false;
}

/* Evaluates the custom encoding of scalar sc: with the arguments in scope,
 * borrowed, as a field expression sees them; before any input is consumed. */
static bool read_custom(bxi_interp *in, const bxc_method_rec *rec, const bxc_method_scalar *sc, const BxvValue *args,
                        BxvValue *out)
{
    const bxc_method_param *mp = &rec->params[sc->param];
    const bxc_expr *enc = mp->encoding ? mp->encoding->value : NULL;
    if (!enc) {   /* the parser reported the missing expression */
        bxi_error(in, BXI_E_META, mp->p->span, "the scalar encoding of `%s` has no expression", mp->name);
        return false;
    }
    uint32_t mark = in->nvars, start = in->frame_start;
    in->frame_start = in->nvars;
    bind_field_params(in, rec, args, 2);   /* tensors as TensorSpec, like the checker */
    bxi_status st = bxi_eval_expr(in, enc, out);
    in->nvars = mark;
    in->frame_start = start;
    if (st == BXI_RET) {
        *out = in->ret;
        st = BXI_OK;
    }
    if (st != BXI_OK)
        return false;
    out->refs = 0;
    if (!is_scalar_value(out)) {
        bxc_diag *d = bxi_error(in, BXI_E_META, enc->span, "the scalar encoding of `%s` produced a `%s`, not a scalar",
                                mp->name, bxi_type_str(in, out));
        bxc_diag_set_help(in->diags, d, "it must produce an integer, `f32`, `f64` or `bool`");
        return false;
    }
    return true;
}

/* The record's scalar list (bxc_method_rec.scalars), evaluated on args. */
static bool scalars_run(bxi_interp *in, const char *trait, const char *method, BxvValue *args, uint32_t nargs,
                        bxc_span site, bxi_scalar **out, uint32_t *nout)
{
    *out = NULL;
    *nout = 0;
    uint32_t base, list;
    const bxc_method_rec *rec = trait_method(in, trait, method, site, &base, &list);
    if (!rec || !check_call_args(in, trait, method, rec, base, args, nargs, site))
        return false;
    bxi_scalar *res = bxc_arena_alloc(&in->scratch, (rec->nscalars ? rec->nscalars : 1) * sizeof *res);
    uint32_t n = 0;
    uint32_t saved_base = in->base, saved_list = in->cur_list;
    in->base = base;
    in->cur_list = list;   /* encodings see their own module's names */
    bool ok = true;
    for (uint32_t i = 0; i < rec->nscalars && ok; i++) {
        const bxc_method_scalar *sc = &rec->scalars[i];
        /* args skip receivers (a checker error, but the record keeps them) */
        uint32_t k = 0;
        for (uint32_t j = 0; j < sc->param; j++) k += !rec->params[j].p->is_self;
        BxvValue v;
        if (sc->read == BXC_SCALAR_READ_ENCODING)
            ok = read_custom(in, rec, sc, args, &v);
        else if (sc->kind == BXC_SCALAR_MARKED)
            ok = read_marked(in, rec, sc, args[k], rec->params[sc->param].p->span, &v);
        else {
            v = args[k];
            v.refs = 0;
        }
        if (ok)
            res[n++] = (bxi_scalar){rec->params[sc->param].name, sc->kind, bxv_copy(&in->scratch, &v)};
    }
    in->base = saved_base;
    in->cur_list = saved_list;
    if (!ok)
        return false;
    *out = res;
    *nout = n;
    return true;
}

bool bxi_scalars(bxi_interp *in, const char *trait, const char *method, const BxvValue *args, uint32_t nargs,
                 bxi_scalar **out, uint32_t *nout)
{
    bxi_reset(in);
    BxvValue *copies = bxc_arena_alloc(&in->scratch, (nargs ? nargs : 1) * sizeof *copies);
    for (uint32_t i = 0; i < nargs; i++)
        copies[i] = bxv_copy(&in->scratch, &args[i]);
    return scalars_run(in, trait, method, copies, nargs, bxc_span_none(), out, nout);
}

bool bxi_scalars_call(bxi_interp *in, const bxc_expr *call, uint32_t file_base, const bxi_env *env,
                      bxi_scalar **out, uint32_t *nout)
{
    const bxc_path *p;
    BxvValue *args;
    uint32_t n;
    *out = NULL;
    *nout = 0;
    if (!eval_trait_call(in, call, file_base, env, "e.g. `:scalars Ops::blend(x, Strategy::Fast)`", &p, &args, &n))
        return false;
    return scalars_run(in, p->segs.items[0].name, p->segs.items[1].name, args, n, call->span, out, nout);
}
