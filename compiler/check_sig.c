/* check_sig.c — backend-extension traits (language.md §3-§6): per method,
 * the signature rules (no receiver, no `&mut`, an output, a tensor to
 * route on), the default body and `#[backward]` formulas (tensor mode),
 * the choice of exactly one `#[fusion]` form, the field expressions and
 * `meta` callables with the bindings §5 gives them, the requirements of
 * those forms, and the scalars exposed to fusion optimizers (§4). */
#include <stdio.h>

#include "check_internal.h"
#include "emit.h"

/* A parameter as the checker classifies it: the record's own entry
 * (ast.h bxc_method_param), filled here once. */
typedef bxc_method_param arg_info;

enum { FORM_FIELD = 1, FORM_META = 2, FORM_DEFAULT = 4 };

typedef struct method {
    chk_ctx *cx;
    chk_module *cm;
    bxc_fn *fn;
    const char *name;
    const chk_selectors *sel;
    bxc_method_rec *rec;  /* what the method's readers get (bxc_fn.method) */
    arg_info *args;       /* rec->params */
    uint32_t nargs;
    bxc_type *ret;        /* resolved output type */
    /* #[fusion] */
    bxc_attr_arg *dtype, *shape, *meta, *id, *deflt;
    bxc_attr *dtype_attr, *shape_attr;
    unsigned forms;
    bool forms_ok;
    struct trait_state *ts;
} method;

/* What the methods of one trait learn about each other, so that advice
 * about `Fusion` (a trait-wide switch) does not go in a circle: a warning
 * on one method must not say "add `Fusion`" when another method of the
 * trait cannot have it.  Helps that depend on the whole trait are set
 * after its last method. */
typedef struct trait_state {
    const char *no_input;          /* first method with no tensor input at all */
    bxc_diag **no_effect;          /* "has no effect" warnings, help pending */
    const char **no_effect_self;   /* why that warning's method itself cannot take `Fusion`, or NULL */
    uint32_t nno_effect, cap;
} trait_state;

static const char *param_name(const bxc_param *p) {
    if (p->pat && p->pat->kind == BXC_PAT_IDENT) return p->pat->name.name;
    return "_";
}

static int popcount(unsigned x) {
    int n = 0;
    for (; x; x &= x - 1) n++;
    return n;
}

/* ---- signature ------------------------------------------------------------- */

static void classify_args(method *m) {
    chk_ctx *cx = m->cx;
    bxc_fn *fn = m->fn;
    m->nargs = fn->params.len;
    m->args = bxc_arena_alloc(cx->arena, (m->nargs ? m->nargs : 1) * sizeof *m->args);
    memset(m->args, 0, (m->nargs ? m->nargs : 1) * sizeof *m->args);
    m->rec->params = m->args;
    m->rec->nparams = m->nargs;
    for (uint32_t i = 0; i < m->nargs; i++) {
        bxc_param *p = fn->params.items[i];
        arg_info *a = &m->args[i];
        a->p = p;
        a->name = param_name(p);
        chk_attrs_placement(cx, &p->attrs, BXC_SITE_PARAM);
        if (p->is_self) {
            bxc_diag *d = chk_error(cx, CHK_E_RECEIVER, p->span,
                                    "backend extension methods take no receiver (`%s`)",
                                    p->self_ref ? (p->self_mut ? "&mut self" : "&self") : "self");
            chk_help(cx, d, "remove it: `%s` receives its tensors as arguments", m->name);
            a->cls = BXC_ARG_BAD;
            a->type = a->base = bxc_type_error();
            continue;
        }
        if (!p->type) {   /* after a syntax error: reported by the parser */
            a->cls = BXC_ARG_BAD;
            a->type = a->base = bxc_type_error();
            continue;
        }
        a->type = chk_resolve_tyexpr(cx, m->cm, p->type, &fn->generics);
        if (p->pat) p->pat->ty = a->type;
        bxc_type *t = bxc_type_resolve(a->type);
        a->borrowed = t->kind == BXC_TYPE_REF;
        a->base = bxc_type_strip_refs(t);
        if (bxc_type_is_error(a->base)) a->cls = BXC_ARG_BAD;
        else if (a->base->kind == BXC_TYPE_TENSOR) a->cls = BXC_ARG_TENSOR;
        else if (bxc_type_is_extension(a->base)) a->cls = BXC_ARG_EXT;
        else a->cls = BXC_ARG_ORDINARY;
        if (t->kind == BXC_TYPE_REF && t->ref.is_mut) {
            bxc_diag *d;
            if (a->cls == BXC_ARG_TENSOR) {
                d = chk_error(cx, CHK_E_MUT_REF, p->type->span,
                              "`&mut` tensor `%s`: tensors are owned or borrowed with `&`", a->name);
                chk_help(cx, d, "take it owned (`%s`) to reuse its buffer, or borrow it (`&%s`)",
                         chk_tn(cx, a->base), chk_tn(cx, a->base));
            } else {
                d = chk_error(cx, CHK_E_MUT_REF, p->type->span,
                              "`&mut` argument `%s`: extension methods take owned values or `&` borrows",
                              a->name);
                chk_help(cx, d, "return changed values as outputs instead");
            }
        }
        bxc_attr *ext = chk_find_attr(&p->attrs, "extension_type");
        if (ext && a->cls != BXC_ARG_BAD && a->cls != BXC_ARG_EXT) {
            bxc_diag *d = chk_error(cx, CHK_E_EXT_TYPE, p->type->span,
                                    "`#[extension_type]` on `%s`, which is not an extension type",
                                    chk_tn(cx, a->base));
            if (a->base->kind == BXC_TYPE_STRUCT || a->base->kind == BXC_TYPE_ENUM)
                chk_help(cx, d, "derive it: `#[derive(ExtensionType)]` on `%s`", a->base->decl->name);
        }
    }
}

static bool has_tensor_input(const method *m, bool owned_ext_only) {
    for (uint32_t i = 0; i < m->nargs; i++) {
        if (m->args[i].cls == BXC_ARG_TENSOR) return true;
        if (m->args[i].cls == BXC_ARG_EXT && (!owned_ext_only || !m->args[i].borrowed)) return true;
    }
    return false;
}

static bxc_type *method_fn_type(method *m) {
    bxc_type **ps = bxc_arena_alloc(m->cx->arena, (m->nargs ? m->nargs : 1) * sizeof *ps);
    for (uint32_t i = 0; i < m->nargs; i++) ps[i] = m->args[i].type;
    return bxc_type_fn(m->cx->arena, ps, m->nargs, m->ret);
}

/* ---- #[fusion(...)] forms ----------------------------------------------------- */

static void parse_fusion_attrs(method *m) {
    chk_ctx *cx = m->cx;
    bool reported_two = false;
    m->forms_ok = true;
    for (uint32_t i = 0; i < m->fn->attrs.len; i++) {
        bxc_attr *a = m->fn->attrs.items[i];
        if (!chk_attr_is(a, "fusion")) continue;
        if (!a->has_args || !a->args.len) {
            bxc_diag *d = chk_error(cx, CHK_E_FUSION_FORM, a->span, "`#[fusion]` needs a form");
            chk_help(cx, d, "write `#[fusion(dtype = .., shape = ..)]`, `#[fusion(meta = ..)]` or "
                            "`#[fusion(default)]`");
            m->forms_ok = false;
            continue;
        }
        for (uint32_t k = 0; k < a->args.len; k++) {
            bxc_attr_arg *arg = a->args.items[k];
            const char *key = arg->path && arg->path->segs.len == 1 ? arg->path->segs.items[0].name
                                                                    : NULL;
            bxc_attr_arg **slot = NULL;
            if (arg->kind == BXC_ATTR_ARG_PATH && key && strcmp(key, "default") == 0) {
                slot = &m->deflt;
            } else if (arg->kind == BXC_ATTR_ARG_ASSIGN && key) {
                if (strcmp(key, "dtype") == 0) slot = &m->dtype;
                else if (strcmp(key, "shape") == 0) slot = &m->shape;
                else if (strcmp(key, "meta") == 0) slot = &m->meta;
                else if (strcmp(key, "id") == 0) slot = &m->id;
            }
            if (!slot) {
                bxc_diag *d;
                if (key && strcmp(key, "scalar") == 0) {
                    d = chk_error(cx, CHK_E_BAD_ATTR, arg->span,
                                  "`scalar` goes on a method argument or a type, not on a method");
                } else {
                    d = chk_error(cx, CHK_E_BAD_ATTR, arg->span, "unknown `fusion` key `%s`",
                                  key ? key : "?");
                    const bxc_attr_info *fusion = bxc_attr_find("fusion");
                    const char *keys[32];
                    uint32_t nkeys = bxc_attr_key_names(fusion, BXC_SITE_METHOD, keys, 32);
                    const char *near = key ? chk_nearest(key, keys, nkeys) : NULL;
                    char list[160];
                    if (near) chk_help(cx, d, "did you mean `%s`?", near);
                    else chk_help(cx, d, "keys are %s", bxc_attr_key_list(fusion, BXC_SITE_METHOD, list, sizeof list));
                }
                m->forms_ok = false;
                continue;
            }
            if (*slot) {
                bxc_diag *d = chk_error(cx, CHK_E_FUSION_FORM, arg->span, "`%s` is given twice", key);
                chk_note(cx, d, (*slot)->span, "first given here");
                m->forms_ok = false;
                continue;
            }
            *slot = arg;
            if (slot == &m->dtype) m->dtype_attr = a;
            if (slot == &m->shape) m->shape_attr = a;
        }
        unsigned forms = (m->dtype || m->shape ? FORM_FIELD : 0) | (m->meta ? FORM_META : 0) |
                         (m->deflt ? FORM_DEFAULT : 0);
        if (popcount(forms) > 1 && !reported_two) {
            bxc_diag *d = chk_error(cx, CHK_E_FUSION_FORM, a->span,
                                    "`%s` chooses two `#[fusion]` forms", m->name);
            chk_help(cx, d, "choose exactly one of `dtype` + `shape`, `meta` or `default`");
            reported_two = true;
            m->forms_ok = false;
        }
        m->forms = forms;
    }
    if (!m->forms_ok) return;
    if (m->forms == FORM_FIELD) {
        if (m->dtype && !m->shape) {
            bxc_diag *d = chk_error(cx, CHK_E_FUSION_FORM, m->dtype->span,
                                    "`dtype` without `shape`: field expressions need both");
            chk_help(cx, d, "add `shape = ...` (a bare tensor name copies its shape)");
            m->forms_ok = false;
        } else if (m->shape && !m->dtype) {
            bxc_diag *d = chk_error(cx, CHK_E_FUSION_FORM, m->shape->span,
                                    "`shape` without `dtype`: field expressions need both");
            chk_help(cx, d, "add `dtype = ...` (a bare tensor name copies its dtype)");
            m->forms_ok = false;
        }
    }
    if (m->forms == FORM_DEFAULT && !m->fn->body && !has_tensor_input(m, false) &&
        m->sel->listed[CHK_SEL_FUSION]) {
        m->forms_ok = false;   /* no body could exist: check_method says why */
    } else if (m->forms == FORM_DEFAULT && !m->fn->body) {
        bxc_diag *d = chk_error(cx, CHK_E_FUSION_DEFAULT, m->deflt->span,
                                "`#[fusion(default)]` needs a default body, and `%s` has none",
                                m->name);
        chk_help(cx, d, "give `%s` a body, or describe its output with `dtype`/`shape` or `meta`",
                 m->name);
        m->forms_ok = false;
    }
    if (m->id) {
        if (m->forms == FORM_DEFAULT) {
            bxc_diag *d = chk_error(cx, CHK_E_FUSION_DEFAULT, m->id->span,
                                    "`id` cannot be combined with `default`");
            chk_help(cx, d, "a default body runs its own operations; it registers no custom op");
        }
        if (m->id->value && m->id->value->kind == BXC_EXPR_STRING)
            m->id->value->ty = bxc_type_str();
        if (!m->id->value || m->id->value->kind != BXC_EXPR_STRING) {
            bxc_diag *d = chk_error(cx, CHK_E_BAD_ATTR, m->id->value ? m->id->value->span : m->id->span,
                                    "`id` takes a string");
            chk_help(cx, d, "write `id = \"name\"`");
        } else if (m->id->value->string_lit.len == 0) {
            chk_error(cx, CHK_E_BAD_ATTR, m->id->value->span, "`id` must not be empty");
        }
    }
}

/* ---- bindings of metadata code ------------------------------------------------- */

typedef enum env_kind { ENV_DTYPE, ENV_SHAPE, ENV_META } env_kind;

/* The metadata view of an extension argument, or ERROR (reported by the
 * requirements check). */
static bxc_type *ext_metadata(bxc_type *base) {
    base = bxc_type_resolve(base);
    if (bxc_type_is_extension(base) && base->decl->metadata) return base->decl->metadata;
    return bxc_type_error();
}

static bxc_type *env_type(method *m, const arg_info *a, env_kind k) {
    bxc_arena *ar = m->cx->arena;
    switch (a->cls) {
    case BXC_ARG_TENSOR:
        if (k == ENV_DTYPE) return bxc_type_dtype();
        if (k == ENV_SHAPE) return bxc_type_ref(ar, bxc_type_shape(), false);
        return bxc_type_ref(ar, bxc_type_spec(), false);
    case BXC_ARG_EXT: {
        bxc_type *md = ext_metadata(a->base);
        return bxc_type_is_error(md) ? md : bxc_type_ref(ar, md, false);
    }
    case BXC_ARG_ORDINARY:
        return a->borrowed ? a->type : bxc_type_ref(ar, a->type, false);
    default:
        return bxc_type_error();
    }
}

static void bind_env(method *m, chk_fn *f, env_kind k) {
    chk_scope_push(f);
    for (uint32_t i = 0; i < m->nargs; i++) {
        arg_info *a = &m->args[i];
        /* bound by name only: the parameter's own pattern keeps the
         * declared type (the bindings differ per field expression) */
        if (a->p->is_self || !a->p->pat || a->p->pat->kind != BXC_PAT_IDENT) continue;
        chk_bind(f, a->p->pat->name.name, env_type(m, a, k), false, a->p->pat->name.span);
    }
}

/* ---- field expressions ------------------------------------------------------------ */

static void check_field_expr(method *m, bxc_attr_arg *arg, bool is_dtype) {
    chk_ctx *cx = m->cx;
    bxc_expr *e = arg->value;
    if (!e) return;
    if (e->kind == BXC_EXPR_CLOSURE) {
        bxc_diag *d = chk_error(cx, CHK_E_FIELD_EXPR, e->span,
                                "a closure is not invoked as a field expression");
        chk_help(cx, d, "use a block: `%s = { ... }` computes the value in place",
                 is_dtype ? "dtype" : "shape");
        e->ty = bxc_type_error();
        return;
    }
    chk_fn f;
    chk_fn_init(&f, cx, m->cm, CHK_MODE_META);
    f.what = is_dtype ? "a `dtype` field expression" : "a `shape` field expression";
    bind_env(m, &f, is_dtype ? ENV_DTYPE : ENV_SHAPE);
    bxc_type *t = chk_expr(&f, e, NULL);
    /* a bare operand copies: `shape = lhs` reads the `&Shape` */
    bxc_type *st = bxc_type_strip_refs(t);
    chk_coerce(&f, is_dtype ? bxc_type_dtype() : bxc_type_shape(), st, e->span);
    chk_zonk_expr(cx, e);
}

/* The tensor kind a `dtype = E` field expression certainly gives, when E
 * is a `DType::X` constant or a bare tensor argument; -1 when unknown. */
static int dtype_category(method *m, const bxc_expr *e) {
    if (!e || e->kind != BXC_EXPR_PATH) return -1;
    const bxc_path *p = e->path;
    if (p->segs.len == 2 && strcmp(p->segs.items[0].name, "DType") == 0) {
        static const struct { const char *name; int kind; } consts[] = {
            {"F32", BXC_TENSOR_FLOAT}, {"F64", BXC_TENSOR_FLOAT}, {"F16", BXC_TENSOR_FLOAT},
            {"BF16", BXC_TENSOR_FLOAT}, {"I32", BXC_TENSOR_INT}, {"I64", BXC_TENSOR_INT},
            {"U8", BXC_TENSOR_INT}, {"Bool", BXC_TENSOR_BOOL},
        };
        for (size_t i = 0; i < sizeof consts / sizeof *consts; i++)
            if (strcmp(consts[i].name, p->segs.items[1].name) == 0) return consts[i].kind;
        return -1;
    }
    if (p->segs.len != 1) return -1;
    for (uint32_t i = 0; i < m->nargs; i++)
        if (m->args[i].cls == BXC_ARG_TENSOR && strcmp(m->args[i].name, p->segs.items[0].name) == 0)
            return (int)m->args[i].base->tensor_kind;
    return -1;
}

/* A float dtype for an IntTensor output (and the like) is wrong for every
 * input; debug builds would only find out at run time. */
static void check_dtype_category(method *m) {
    bxc_type *out = bxc_type_resolve(m->ret);
    if (!m->dtype || bxc_type_is_error(out) || out->kind != BXC_TYPE_TENSOR ||
        out->tensor_kind == BXC_TENSOR_QUANTIZED || bxc_type_is_error(m->dtype->value->ty))
        return;
    int cat = dtype_category(m, m->dtype->value);
    if (cat < 0 || cat == BXC_TENSOR_QUANTIZED || cat == (int)out->tensor_kind) return;
    static const char *const cat_names[] = {"a float", "an integer", "a bool", "a quantized"};
    bxc_diag *d = chk_error(m->cx, CHK_E_FIELD_EXPR, m->dtype->value->span,
                            "`dtype` gives %s dtype, but `%s` returns `%s`", cat_names[cat],
                            m->name, chk_tn(m->cx, out));
    chk_help(m->cx, d, "the output's dtype must be of its tensor kind");
}

/* ---- meta -------------------------------------------------------------------------- */

static const char *ordinary_help =
    "put ordinary output fields in an extension struct with `#[extension_type(fusion)]`";

/* The metadata `meta` must produce for an output type; reports outputs
 * that cannot be described (at `span`). */
static bxc_type *mirror_output(method *m, bxc_type *t, bxc_span span, bool top) {
    chk_ctx *cx = m->cx;
    t = bxc_type_resolve(t);
    if (bxc_type_is_error(t)) return t;
    if (t->kind == BXC_TYPE_TENSOR) return bxc_type_spec();
    if (bxc_type_is_extension(t)) {
        if (t->decl->metadata) return t->decl->metadata;
        bxc_diag *d = chk_error(cx, CHK_E_NO_METADATA, span, "`%s` has no metadata type",
                                t->decl->name);
        chk_help(cx, d, "add `#[extension_type(fusion)]` to `%s`", t->decl->name);
        return bxc_type_error();
    }
    if (t->kind == BXC_TYPE_TUPLE) {
        bxc_type **el = bxc_arena_alloc(cx->arena, t->tuple.n * sizeof *el);
        bool bad = false;
        for (uint32_t i = 0; i < t->tuple.n; i++) {
            bxc_type *et = bxc_type_resolve(t->tuple.elems[i]);
            if (!bxc_type_is_error(et) && et->kind != BXC_TYPE_TENSOR && et->kind != BXC_TYPE_TUPLE &&
                !bxc_type_is_extension(et)) {
                bxc_diag *d = chk_error(cx, CHK_E_OUTPUT, span,
                                        "tuple outputs may hold only tensors and extension types, "
                                        "found `%s`", chk_tn(cx, et));
                chk_help(cx, d, "%s", ordinary_help);
                bad = true;
                continue;
            }
            el[i] = mirror_output(m, et, span, false);
            bad |= bxc_type_is_error(el[i]);
        }
        return bad ? bxc_type_error() : bxc_type_tuple(cx->arena, el, t->tuple.n);
    }
    bxc_diag *d;
    if (bxc_type_is_scalar(t))
        d = chk_error(cx, CHK_E_OUTPUT, span,
                      "a plain scalar return is not supported under `Fusion` (`%s` returns `%s`)",
                      m->name, chk_tn(cx, t));
    else
        d = chk_error(cx, CHK_E_OUTPUT, span,
                      "`meta` cannot describe an output of type `%s`%s", chk_tn(cx, t),
                      top ? "" : " inside a tuple");
    chk_help(cx, d, "%s", ordinary_help);
    return bxc_type_error();
}

static void check_meta(method *m) {
    chk_ctx *cx = m->cx;
    bxc_expr *e = m->meta->value;
    if (!e) return;
    bxc_span ret_span = m->fn->ret ? m->fn->ret->span : m->fn->name.span;
    bxc_type *want = mirror_output(m, m->ret, ret_span, true);
    bxc_type **ps = bxc_arena_alloc(cx->arena, (m->nargs ? m->nargs : 1) * sizeof *ps);
    for (uint32_t i = 0; i < m->nargs; i++) ps[i] = env_type(m, &m->args[i], ENV_META);
    bool want_ok = !bxc_type_is_error(want);

    if (e->kind == BXC_EXPR_CLOSURE) {
        uint32_t n = e->closure.params.len;
        if (n != m->nargs) {
            bxc_diag *d = chk_error(cx, CHK_E_META, e->span,
                                    "the `meta` closure takes %u argument%s but `%s` has %u", n,
                                    n == 1 ? "" : "s", m->name, m->nargs);
            chk_help(cx, d, "a `meta` closure receives every argument, in declaration order");
        }
        chk_fn f;
        chk_fn_init(&f, cx, m->cm, CHK_MODE_META);
        f.what = "the `meta` closure";
        chk_closure(&f, e, ps, m->nargs, want_ok ? want : bxc_type_error(), NULL);
        bxc_type *bt = e->closure.body->ty;
        if (want_ok && !chk_unify(cx, want, bt) && !bxc_type_is_error(bt)) {
            bxc_span sp = e->closure.body->kind == BXC_EXPR_BLOCK && e->closure.body->block->tail
                              ? e->closure.body->block->tail->span : e->closure.body->span;
            bxc_diag *d = chk_error(cx, CHK_E_META, sp,
                                    "`meta` result does not mirror the outputs: expected `%s`, found `%s`",
                                    chk_tn(cx, want), chk_tn(cx, bt));
            chk_help(cx, d, "`meta` returns `TensorSpec` per tensor output, tuples for tuples and "
                            "`NameMetadata` for extension outputs");
        }
        chk_zonk_expr(cx, e);
        return;
    }
    if (e->kind == BXC_EXPR_PATH) {
        chk_symbol *s = chk_lookup_path(cx, m->cm, e->path);
        if (!s || s->kind != CHK_SYM_FN) {
            const char *name = e->path->segs.items[e->path->segs.len - 1].name;
            bxc_diag *d = chk_error(cx, CHK_E_UNKNOWN_NAME, e->span, "unknown function `%s`", name);
            uint32_t nc;
            const char **cands = chk_names_of(cx, m->cm, 1 << CHK_SYM_FN, &nc);
            const char *near = chk_nearest(name, cands, nc);
            if (near) chk_help(cx, d, "did you mean `%s`?", near);
            e->ty = bxc_type_error();
            return;
        }
        bxc_type *ft = bxc_type_resolve(chk_fn_signature(cx, s));
        e->ty = ft;
        if (ft->kind != BXC_TYPE_FN) return;
        if (ft->fn.nparams != m->nargs) {
            bxc_diag *d = chk_error(cx, CHK_E_META, e->span,
                                    "`%s` takes %u argument%s but `meta` passes %u (one per argument of `%s`)",
                                    s->name, ft->fn.nparams, ft->fn.nparams == 1 ? "" : "s",
                                    m->nargs, m->name);
            chk_note(cx, d, s->span, "`%s` is defined here", s->name);
        } else {
            for (uint32_t i = 0; i < m->nargs; i++) {
                if (chk_unify(cx, ft->fn.params[i], ps[i])) continue;
                bxc_diag *d = chk_error(cx, CHK_E_META, e->span,
                                        "`meta` passes `%s` for `%s`, but parameter %u of `%s` has type `%s`",
                                        chk_tn(cx, ps[i]), m->args[i].name, i + 1, s->name,
                                        chk_tn(cx, ft->fn.params[i]));
                chk_note(cx, d, s->span, "`%s` is defined here", s->name);
            }
        }
        if (want_ok && !chk_unify(cx, want, ft->fn.ret)) {
            bxc_diag *d = chk_error(cx, CHK_E_META, e->span,
                                    "`meta` result does not mirror the outputs: expected `%s`, found `%s`",
                                    chk_tn(cx, want), chk_tn(cx, ft->fn.ret));
            chk_note(cx, d, s->span, "`%s` is defined here", s->name);
        }
        return;
    }
    bxc_diag *d = chk_error(cx, CHK_E_META, e->span, "`meta` takes a function path or a closure");
    chk_help(cx, d, "write `meta = helper` or `meta = |args| ...`");
}

/* ---- requirements of field expressions and meta (§5) ----------------------------------- */

static void check_requirements(method *m) {
    chk_ctx *cx = m->cx;
    if (m->fn->generics.len) {
        bxc_diag *d = chk_error(cx, CHK_E_FUSION_SIG, m->fn->generics.items[0]->span,
                                "generic method `%s` cannot use field expressions or `meta`", m->name);
        if (m->fn->body)
            chk_help(cx, d, "use `#[fusion(default)]` to run the default body lazily");
        else
            chk_help(cx, d, "give `%s` a default body and use `#[fusion(default)]`, or make it non-generic",
                     m->name);
    }
    if (!has_tensor_input(m, true)) {
        /* only a borrowed extension value carries tensors here (no tensor
         * input at all is reported by check_method) */
        bxc_diag *d = chk_error(cx, CHK_E_FUSION_SIG, m->fn->name.span,
                                "`%s` has no input tensor (directly or inside an owned extension value)",
                                m->name);
        chk_help(cx, d, "field expressions and `meta` need one: take the extension value by value");
    }
    for (uint32_t i = 0; i < m->nargs; i++) {
        arg_info *a = &m->args[i];
        if (a->cls == BXC_ARG_ORDINARY && a->borrowed) {
            bxc_diag *d = chk_error(cx, CHK_E_FUSION_SIG, a->p->type->span,
                                    "ordinary argument `%s` must be owned under `Fusion`", a->name);
            chk_help(cx, d, "take it by value: `%s: %s`", a->name, chk_tn(cx, a->base));
        }
        if (a->cls == BXC_ARG_EXT && !a->base->decl->metadata) {
            bxc_diag *d = chk_error(cx, CHK_E_NO_METADATA, a->p->type->span,
                                    "`%s` has no metadata type", a->base->decl->name);
            chk_help(cx, d, "add `#[extension_type(fusion)]` to `%s`", a->base->decl->name);
        }
    }
}

/* ---- scalars (§4) --------------------------------------------------------------------- */

/* The written type marks the argument: an alias on the way (followed) or
 * the struct / enum it names carries `#[fusion(scalar)]`.  A reference or
 * a tuple is not marked (language.md §4). */
static bool type_marked(chk_ctx *cx, chk_module *cm, const bxc_tyexpr *t) {
    const bxc_tyexpr *first = t;
    for (int hops = 0; t && t->kind == BXC_TY_PATH && hops < 16; hops++) {
        chk_symbol *al = chk_alias_of(cm, t);
        if (!al) {
            bxc_type *ty = t == first ? first->ty : (t->ty ? t->ty : NULL);
            ty = ty ? bxc_type_resolve(ty) : NULL;
            return ty && (ty->kind == BXC_TYPE_STRUCT || ty->kind == BXC_TYPE_ENUM) && ty->decl->fusion_scalar;
        }
        if (al->fusion_scalar) return true;
        if (!al->item) return false;
        cm = chk_module_of(cx, al->module);
        t = al->item->alias.type;
    }
    return false;
}

/* An integer, f32, f64 or bool written as such: one segment naming a
 * builtin (an alias of one is not inferred, nor a borrowed one). */
static bool type_inferred(const bxc_tyexpr *t) {
    if (!t || t->kind != BXC_TY_PATH || !t->path || t->path->segs.len != 1) return false;
    const bxc_builtin_type *bt = bxc_builtin_type_find(t->path->segs.items[0].name);
    return bt && (bt->kind == BXC_TYPE_INT || bt->kind == BXC_TYPE_FLOAT || bt->kind == BXC_TYPE_BOOL);
}

/* Reads the `#[fusion(scalar)]` / `#[fusion(scalar = e)]` of each argument
 * into the record (a->scalar, a->encoding), reporting misuse; an
 * encoding is typed only when `typed` (a method the features switch off
 * is not checked as code). */
static void check_scalars(method *m, bool active, bool typed) {
    chk_ctx *cx = m->cx;
    for (uint32_t i = 0; i < m->nargs; i++) {
        arg_info *a = &m->args[i];
        bxc_attr *fa = chk_find_attr(&a->p->attrs, "fusion");
        bool marked = false;
        bxc_expr *custom = NULL;
        bxc_attr_arg *custom_arg = NULL;
        bool has_custom = false;
        if (fa) {
            for (uint32_t k = 0; k < fa->args.len; k++) {
                bxc_attr_arg *arg = fa->args.items[k];
                if (bxc_path_is(arg->path, "scalar") && arg->kind == BXC_ATTR_ARG_PATH) {
                    marked = true;
                } else if (bxc_path_is(arg->path, "scalar") && arg->kind == BXC_ATTR_ARG_ASSIGN) {
                    if (has_custom) {
                        bxc_diag *d = chk_error(cx, CHK_E_BAD_ATTR, arg->span, "`scalar = ..` is given twice");
                        chk_help(cx, d, "an argument has one encoding");
                        continue;
                    }
                    has_custom = true;
                    custom_arg = arg;
                    custom = arg->value;
                } else {
                    bxc_diag *d = chk_error(cx, CHK_E_BAD_ATTR, arg->span,
                                            "`#[fusion(...)]` on an argument takes `scalar` or `scalar = expr`");
                    chk_help(cx, d, "forms go on the method: `#[fusion(dtype = .., shape = ..)]`");
                }
            }
            if (!fa->has_args || !fa->args.len)
                chk_error(cx, CHK_E_BAD_ATTR, fa->span, "`#[fusion]` on an argument needs `(scalar)`");
            if ((marked || has_custom) && (a->cls == BXC_ARG_TENSOR || a->cls == BXC_ARG_EXT)) {
                chk_error(cx, CHK_E_SCALAR_TYPE, fa->span,
                          "`#[fusion(scalar)]` on `%s`: only ordinary arguments are scalars", a->name);
                continue;
            }
        }
        if (a->cls != BXC_ARG_ORDINARY) continue;
        if (has_custom) {
            a->scalar = BXC_SCALAR_CUSTOM;
            a->encoding = custom_arg;
        } else if (marked || type_marked(cx, m->cm, a->p->type)) {
            a->scalar = BXC_SCALAR_MARKED;
        } else if (type_inferred(a->p->type)) {
            a->scalar = BXC_SCALAR_INFERRED;
        }
        if (marked && !chk_type_converts_to_scalar(a->base)) {
            chk_symbol *al = chk_alias_of(m->cm, a->p->type);
            if (!(al && al->fusion_scalar)) {
                bxc_diag *d = chk_error(cx, CHK_E_SCALAR_TYPE, a->p->type->span,
                                        "`#[fusion(scalar)]` on `%s`, whose type `%s` does not convert to a scalar",
                                        a->name, chk_tn(cx, a->base));
                chk_help(cx, d, "use `#[fusion(scalar = expr)]` with an expression producing a scalar");
            }
        }
        if (custom && typed) {
            chk_fn f;
            chk_fn_init(&f, cx, m->cm, CHK_MODE_META);
            f.what = "a `scalar` encoding";
            bind_env(m, &f, ENV_META);
            bxc_type *t = bxc_type_strip_refs(chk_expr(&f, custom, NULL));
            if (!bxc_type_is_error(t) && !bxc_type_is_scalar(t)) {
                bxc_diag *d = chk_error(cx, CHK_E_SCALAR_TYPE, custom->span,
                                        "expected a scalar, found `%s`", chk_tn(cx, t));
                chk_help(cx, d, "the encoding must produce an integer, `f32`, `f64` or `bool`");
            }
            chk_zonk_expr(cx, custom);
        }
        if (!active || marked || has_custom) continue;
        chk_symbol *al = chk_alias_of(m->cm, a->p->type);
        if (al && !al->fusion_scalar && al->type && bxc_type_is_scalar(al->type)) {
            bxc_diag *d = chk_warning(cx, CHK_W_SCALAR_ALIAS, a->p->type->span,
                                      "`%s` has alias type `%s` of scalar type `%s`, which is not "
                                      "exposed as a scalar",
                                      a->name, al->name, chk_tn(cx, al->type));
            chk_help(cx, d, "mark `%s` with `#[fusion(scalar)]` (or the argument) to expose it",
                     al->name);
        }
    }
}

/* ---- default bodies and backward formulas ----------------------------------------------- */

/* `#[backward(x = f, ...)]` (language.md §6): bextc generates the
 * method's Autodiff implementation from the formulas (emit_backward.c),
 * so besides typing each formula (tensor mode, with `grad` and `output`,
 * the output's gradient and value, bound next to the arguments) this
 * checks what that generator needs: one FloatTensor output, tensor and
 * ordinary arguments only, a formula for every FloatTensor argument (a
 * missing one would be a silent zero gradient), and formulas inside the
 * lowerable subset (check_default.c). */
static void check_backward(method *m, const char *trait) {
    chk_ctx *cx = m->cx;
    bxc_attr *first = NULL, *manual = NULL;
    for (uint32_t i = 0; i < m->fn->attrs.len; i++) {
        bxc_attr *a = m->fn->attrs.items[i];
        if (!chk_attr_is(a, "backward")) continue;
        if (first) continue;   /* check_attrs.c reports the duplicate */
        if (bxc_attr_is_backward_manual(a)) {
            manual = a;
            continue;
        }
        first = a;
        if (!a->has_args || !a->args.len) {
            chk_error(cx, CHK_E_BACKWARD, a->span,
                      "`#[backward]` needs a gradient per tensor argument: `#[backward(x = ...)]`");
            continue;
        }
        for (uint32_t k = 0; k < a->args.len; k++) {
            bxc_attr_arg *arg = a->args.items[k];
            const char *key = arg->path && arg->path->segs.len == 1 ? arg->path->segs.items[0].name : NULL;
            if (arg->kind != BXC_ATTR_ARG_ASSIGN || !key) {
                chk_error(cx, CHK_E_BACKWARD, arg->span, "expected `argument = gradient`");
                continue;
            }
            arg_info *target = NULL;
            for (uint32_t j = 0; j < m->nargs; j++)
                if (strcmp(m->args[j].name, key) == 0) target = &m->args[j];
            if (!target || target->cls != BXC_ARG_TENSOR) {
                bxc_diag *d = chk_error(cx, CHK_E_BACKWARD, arg->path->span,
                                        "`#[backward]` names `%s`, which is not a tensor argument of `%s`",
                                        key, m->name);
                chk_help(cx, d, "give one gradient per tensor argument");
            } else if (target->base->kind == BXC_TYPE_TENSOR && target->base->tensor_kind != BXC_TENSOR_FLOAT) {
                bxc_diag *d = chk_error(cx, CHK_E_BACKWARD, arg->path->span,
                                        "`%s` is a `%s`, which has no gradient", key, chk_tn(cx, target->base));
                chk_help(cx, d, "give gradients of `FloatTensor` arguments only");
            }
            for (uint32_t j = 0; j < k; j++) {
                bxc_attr_arg *o = a->args.items[j];
                if (o->kind == BXC_ATTR_ARG_ASSIGN && bxc_path_is(o->path, key))
                    chk_error(cx, CHK_E_BACKWARD, arg->span, "gradient of `%s` given twice", key);
            }
            uint32_t before = cx->diags->errors;
            chk_fn f;
            chk_fn_init(&f, cx, m->cm, CHK_MODE_TENSOR);
            f.what = "a backward formula";
            chk_scope_push(&f);
            for (uint32_t j = 0; j < m->nargs; j++)
                if (m->args[j].p->pat) chk_bind_pat(&f, m->args[j].p->pat, m->args[j].type);
            bxc_type *rt = bxc_type_resolve(m->ret);
            bxc_type *gt = rt->kind == BXC_TYPE_TENSOR ? rt : bxc_type_error();
            chk_bind(&f, "grad", gt, false, bxc_span_none());
            chk_bind(&f, "output", gt, false, bxc_span_none());
            bxc_type *t = bxc_type_strip_refs(chk_expr(&f, arg->value, NULL));
            if (target && target->cls == BXC_ARG_TENSOR && target->base->kind == BXC_TYPE_TENSOR &&
                target->base->tensor_kind == BXC_TENSOR_FLOAT)
                chk_coerce(&f, target->base, t, arg->value->span);
            chk_zonk_expr(cx, arg->value);
            if (cx->diags->errors == before) chk_backward_formula_subset(cx, m->fn, arg->value);
        }
    }
    if (manual && !m->sel->listed[CHK_SEL_AUTODIFF]) {
        bxc_diag *d = chk_warning(cx, CHK_W_UNUSED_ATTR, manual->span,
                                  "`#[backward(manual)]` has no effect: `%s` does not list `Autodiff`", trait);
        chk_help(cx, d, "add `Autodiff` to `#[backend_extension(...)]`");
    }
    if (!first) {
        /* Autodiff listed, no route bextc can see: the generated code
         * references a hand-written `_autodiff` strongly (docs/codegen.md),
         * so the link fails when it is missing; say it here first, unless
         * `#[backward(manual)]` says the user wrote it. */
        if (!manual && m->sel->listed[CHK_SEL_AUTODIFF] && !m->fn->body && has_tensor_input(m, false)) {
            bxc_type *rt = bxc_type_resolve(m->ret);
            bool one_float = rt->kind == BXC_TYPE_TENSOR && rt->tensor_kind == BXC_TENSOR_FLOAT;
            const char *x = NULL;
            for (uint32_t j = 0; j < m->nargs && !x; j++)
                if (m->args[j].cls == BXC_ARG_TENSOR && m->args[j].base->kind == BXC_TYPE_TENSOR &&
                    m->args[j].base->tensor_kind == BXC_TENSOR_FLOAT)
                    x = m->args[j].name;
            bxc_diag *d = chk_warning(cx, CHK_W_NO_AUTODIFF, m->fn->name.span,
                                      "`%s::%s` has no default body or `#[backward]`: `%s` lists "
                                      "`Autodiff`, so the generated code calls a hand-written `_autodiff` "
                                      "implementation, and the link fails without one",
                                      trait, m->name, trait);
            if (one_float)
                chk_help(cx, d, "give `%s` a default body (differentiated through its ops), write its "
                                "`_autodiff` implementation in C (bext_autodiff_value + bext_autodiff_record), "
                                "or add `#[backward(%s = ...)]` formulas; `#[backward(manual)]` says it is "
                                "hand-written and silences this",
                         m->name, x ? x : "x");
            else
                chk_help(cx, d, "write its `_autodiff` implementation in C (bext_autodiff_value + "
                                "bext_autodiff_record) and mark the method `#[backward(manual)]`: a default "
                                "body or `#[backward]` formulas need one `FloatTensor` output, and `%s` "
                                "returns `%s`",
                         m->name, chk_tn(cx, rt));
        }
        return;
    }
    /* what the generator of the Autodiff implementation supports */
    bxc_type *rt = bxc_type_resolve(m->ret);
    const char *why = NULL;
    if (!bxc_type_is_error(rt) && (rt->kind != BXC_TYPE_TENSOR || rt->tensor_kind != BXC_TENSOR_FLOAT))
        why = bxc_arena_printf(cx->arena, "it returns `%s`", chk_tn(cx, rt));
    for (uint32_t j = 0; !why && j < m->nargs; j++)
        if (m->args[j].cls == BXC_ARG_EXT)
            why = bxc_arena_printf(cx->arena, "its argument `%s` is an extension value", m->args[j].name);
    if (why) {
        bxc_diag *d = chk_error(cx, CHK_E_BACKWARD_SHAPE, first->span,
                                "bextc cannot generate the gradient of `%s` from `#[backward]`: %s",
                                m->name, why);
        chk_help(cx, d, "`#[backward]` supports methods returning one `FloatTensor` from tensor and "
                        "ordinary arguments; write the `_autodiff` implementation in C instead "
                        "(bext_autodiff_record)");
        return;
    }
    for (uint32_t j = 0; j < m->nargs; j++) {
        arg_info *ai = &m->args[j];
        if (!strcmp(ai->name, "grad") || !strcmp(ai->name, "output")) {
            bxc_diag *d = chk_error(cx, CHK_E_BACKWARD, ai->p->span,
                                    "argument `%s` of `%s` is hidden by the formulas' own `%s`",
                                    ai->name, m->name, ai->name);
            chk_help(cx, d, "rename the argument: in `#[backward]`, `grad` is the output's gradient "
                            "and `output` its value");
        }
        if (ai->cls != BXC_ARG_TENSOR || ai->base->kind != BXC_TYPE_TENSOR || ai->base->tensor_kind != BXC_TENSOR_FLOAT)
            continue;
        bool given = false;
        for (uint32_t k = 0; k < first->args.len; k++) {
            bxc_attr_arg *arg = first->args.items[k];
            given |= arg->kind == BXC_ATTR_ARG_ASSIGN && bxc_path_is(arg->path, ai->name);
        }
        if (!given && first->args.len) {
            bxc_diag *d = chk_error(cx, CHK_E_BACKWARD, first->span,
                                    "`#[backward]` gives no gradient for `%s`, a `FloatTensor` argument of `%s`",
                                    ai->name, m->name);
            chk_help(cx, d, "add `%s = <its gradient>`: an input without one would get a silent zero "
                            "gradient", ai->name);
        }
    }
    if (!m->sel->listed[CHK_SEL_AUTODIFF]) {
        bxc_diag *d = chk_warning(cx, CHK_W_UNUSED_ATTR, first->span,
                                  "`#[backward]` has no effect: `%s` does not list `Autodiff`", trait);
        chk_help(cx, d, "add `Autodiff` to `#[backend_extension(...)]`");
    }
}

/* ---- one method --------------------------------------------------------------------------- */

/* A new record for fn of trait it, hung on the fn. */
static void method_init(method *m, chk_ctx *cx, chk_module *cm, bxc_item *it, bxc_fn *fn,
                        const chk_selectors *sel, bool active) {
    memset(m, 0, sizeof *m);
    m->cx = cx;
    m->cm = cm;
    m->fn = fn;
    m->name = fn->name.name;
    m->sel = sel;
    m->rec = bxc_arena_alloc(cx->arena, sizeof *m->rec);
    memset(m->rec, 0, sizeof *m->rec);
    m->rec->trait = it;
    m->rec->fn = fn;
    m->rec->module = cm->mod;
    m->rec->active = active;
    fn->method = m->rec;
}

/* The op id (language.md §5): `#[fusion(id = "...")]`, else the name. */
static void record_op_id(method *m) {
    bxc_method_rec *r = m->rec;
    r->op_id = m->fn->name.name;
    r->op_id_span = m->fn->name.span;
    const bxc_expr *v = m->id ? m->id->value : NULL;
    if (v && v->kind == BXC_EXPR_STRING && v->string_lit.len && strlen(v->string_lit.value) == v->string_lit.len) {
        r->op_id = v->string_lit.value;
        r->op_id_span = v->span;
    }
}

/* The scalars the record lists (language.md §4), in declaration order,
 * with how each is read and its type: computed here once for every
 * reader (the generator's `scalars`, `:scalars`, hover). */
static void record_scalars(method *m) {
    bxc_method_rec *r = m->rec;
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->nargs; i++) n += m->args[i].scalar != BXC_SCALAR_NONE;
    r->scalars = bxc_arena_alloc(m->cx->arena, (n ? n : 1) * sizeof *r->scalars);
    r->nscalars = 0;
    for (uint32_t i = 0; i < m->nargs; i++) {
        const arg_info *a = &m->args[i];
        if (a->scalar == BXC_SCALAR_NONE) continue;
        bxc_method_scalar *sc = &r->scalars[r->nscalars++];
        sc->param = i;
        sc->kind = a->scalar;
        if (a->scalar == BXC_SCALAR_CUSTOM) {
            const bxc_expr *v = a->encoding ? a->encoding->value : NULL;
            bxc_type *t = v && v->ty ? bxc_type_strip_refs(bxc_type_resolve(v->ty)) : NULL;
            sc->read = BXC_SCALAR_READ_ENCODING;
            sc->type = t && bxc_type_is_scalar(t) ? t : NULL;
        } else {
            /* INFERRED is a scalar written as such: read as its value */
            sc->read = chk_scalar_read(a->base, &sc->type);
        }
    }
}

/* What the record keeps of the checks (forms, backward, slots, scalars). */
static void method_finish(method *m) {
    bxc_method_rec *r = m->rec;
    r->ret = m->ret;
    if (m->forms_ok) {
        r->form = m->forms == FORM_FIELD ? BXC_FUSION_FIELDS
                  : m->forms == FORM_META ? BXC_FUSION_META
                  : m->forms == FORM_DEFAULT ? BXC_FUSION_DEFAULT
                                             : BXC_FUSION_NONE;
        r->dtype = m->dtype;
        r->shape = m->shape;
        r->meta = m->meta;
    }
    record_op_id(m);
    for (uint32_t i = 0; i < m->fn->attrs.len; i++) {
        const bxc_attr *a = m->fn->attrs.items[i];
        if (!chk_attr_is(a, "backward") || r->backward || r->backward_manual) continue;
        if (bxc_attr_is_backward_manual(a)) r->backward_manual = true;
        else if (a->args.len) r->backward = a;
    }
    uint64_t in = 0;
    for (uint32_t i = 0; i < m->nargs; i++)
        if (m->args[i].cls != BXC_ARG_BAD) in += bxc_emit_tensor_slots(m->args[i].type);
    r->in_slots = in > UINT32_MAX ? UINT32_MAX : (uint32_t)in;
    r->out_slots = m->ret ? bxc_emit_tensor_slots(m->ret) : 0;
    record_scalars(m);
}

static void check_method(chk_ctx *cx, chk_module *cm, bxc_item *it, bxc_fn *fn, const chk_selectors *sel,
                         const char *trait, trait_state *ts) {
    method mm;
    method *m = &mm;
    method_init(m, cx, cm, it, fn, sel, true);
    m->ts = ts;
    classify_args(m);

    m->ret = fn->ret ? chk_resolve_tyexpr(cx, cm, fn->ret, &fn->generics) : bxc_type_unit();
    bxc_type *rt = bxc_type_resolve(m->ret);
    if (rt->kind == BXC_TYPE_UNIT) {
        bxc_diag *d = chk_error(cx, CHK_E_UNIT_RETURN, fn->ret ? fn->ret->span : fn->name.span,
                                "`%s` returns nothing", m->name);
        chk_help(cx, d, "an extension method returns a tensor, an extension value or a tuple of them");
        m->ret = bxc_type_error();
    }

    {
        bxc_type **ps = bxc_arena_alloc(cx->arena, (m->nargs ? m->nargs : 1) * sizeof *ps);
        for (uint32_t i = 0; i < m->nargs; i++) ps[i] = m->args[i].p->is_self ? NULL : m->args[i].type;
        chk_method_c_form(cx, fn, ps, fn->ret ? m->ret : NULL);
    }

    if (sel->present && !has_tensor_input(m, false) &&
        (sel->nexec != 1 || sel->listed[CHK_SEL_AUTODIFF])) {
        bool any_bad = false;
        for (uint32_t i = 0; i < m->nargs; i++) any_bad |= m->args[i].cls == BXC_ARG_BAD;
        if (!any_bad) {
            bxc_diag *d = chk_error(cx, CHK_E_NO_ROUTING, fn->name.span,
                                    "`%s` has no tensor input to route on", m->name);
            chk_help(cx, d, "`%s` lists %s; a method without tensor inputs needs exactly one "
                            "backend selector and no `Autodiff`",
                     trait, sel->names && *sel->names ? sel->names : "no backends");
        }
    }

    if (fn->body) {
        uint32_t before = cx->diags->errors;
        chk_fn_body(cx, cm, fn, method_fn_type(m), CHK_MODE_TENSOR,
                    bxc_arena_printf(cx->arena, "the default body of `%s`", m->name));
        /* only a body that types has its generator subset checked: no cascades */
        if (cx->diags->errors == before) chk_default_body_subset(cx, fn, m->ret);
    }
    check_backward(m, trait);

    parse_fusion_attrs(m);
    bool fusion = sel->listed[CHK_SEL_FUSION];
    /* No tensor input at all: no form can work (field expressions and
     * `meta` need an input tensor, a default body could only create one,
     * and creation ops are not allowed there), so say that once instead of
     * advising a form that leads to the next error. */
    bool no_input = !has_tensor_input(m, false);
    if (no_input && !ts->no_input) ts->no_input = m->name;
    if (fusion && no_input) {
        bxc_diag *d = chk_error(cx, CHK_E_FUSION_SIG, fn->name.span,
                                "`%s` has no tensor input, but `%s` lists `Fusion`, which needs one",
                                m->name, trait);
        if (m->forms || !m->forms_ok)
            chk_help(cx, d, "drop `Fusion` from `#[backend_extension(...)]` and the `#[fusion(...)]` "
                            "attribute from `%s`, or add a tensor argument", m->name);
        else
            chk_help(cx, d, "drop `Fusion` from `#[backend_extension(...)]`, or add a tensor argument "
                            "to `%s`", m->name);
        m->forms_ok = false;
    }
    if (fusion && m->forms == 0 && m->forms_ok) {
        bxc_diag *d = chk_error(cx, CHK_E_FUSION_FORM, fn->name.span,
                                "`%s` has no `#[fusion(...)]` form, but `%s` lists `Fusion`",
                                m->name, trait);
        if (fn->body)
            chk_help(cx, d, "add `#[fusion(default)]` to run the default body lazily, or describe the "
                            "output with `#[fusion(dtype = .., shape = ..)]` or `#[fusion(meta = ..)]`");
        else if (fn->generics.len)
            chk_help(cx, d, "give `%s` a default body and add `#[fusion(default)]`", m->name);
        else
            chk_help(cx, d, "add `#[fusion(dtype = .., shape = ..)]` or `#[fusion(meta = ..)]`, or give "
                            "`%s` a default body and add `#[fusion(default)]`", m->name);
    }
    bool lazy_form = m->forms_ok && (m->forms == FORM_FIELD || m->forms == FORM_META);
    if (lazy_form && !fusion && sel->present) {
        bxc_diag *d = chk_warning(cx, CHK_W_UNUSED_ATTR, m->fn->name.span,
                                  "`#[fusion]` on `%s` has no effect: `%s` does not list `Fusion`",
                                  m->name, trait);
        /* the help waits for the whole trait: see trait_state */
        if (d && ts->nno_effect < ts->cap) {
            ts->no_effect[ts->nno_effect] = d;
            ts->no_effect_self[ts->nno_effect++] =
                !has_tensor_input(m, true)
                    ? bxc_arena_printf(cx->arena, "`%s` has no owned tensor input, which `Fusion` needs", m->name)
                : fn->generics.len
                    ? bxc_arena_printf(cx->arena, "`%s` is generic, which field expressions and `meta` do not allow",
                                       m->name)
                    : NULL;
        }
    }
    if (lazy_form && fusion) check_requirements(m);
    if (m->forms_ok && m->forms == FORM_FIELD) {
        bxc_type *t = bxc_type_resolve(m->ret);
        if (!bxc_type_is_error(t) && t->kind != BXC_TYPE_TENSOR) {
            bxc_attr *at = m->dtype_attr ? m->dtype_attr : m->shape_attr;
            bxc_diag *d = chk_error(cx, CHK_E_FIELD_EXPR, at->span,
                                    "field expressions describe a single tensor output, but `%s` "
                                    "returns `%s`", m->name, chk_tn(cx, t));
            chk_help(cx, d, "describe other outputs with `#[fusion(meta = ...)]`");
        }
        check_field_expr(m, m->dtype, true);
        check_field_expr(m, m->shape, false);
        check_dtype_category(m);
    } else if (m->forms_ok && m->forms == FORM_META) {
        check_meta(m);
    }
    check_scalars(m, lazy_form && fusion, true);
    method_finish(m);
}

/* A method a `#[cfg]` switches off (or whose trait one does): its record,
 * read quietly from the syntax (the checker does not check it as code;
 * chk_method_switched_off asks what its generated C needs). */
void chk_method_record_off(chk_ctx *cx, chk_module *cm, bxc_item *it, bxc_fn *fn) {
    chk_selectors sel;
    memset(&sel, 0, sizeof sel);
    sel.names = "";
    method mm;
    method *m = &mm;
    method_init(m, cx, cm, it, fn, &sel, false);
    cx->quiet++;
    classify_args(m);
    m->ret = fn->ret ? chk_resolve_tyexpr(cx, cm, fn->ret, &fn->generics) : bxc_type_unit();
    parse_fusion_attrs(m);
    check_scalars(m, false, false);
    cx->quiet--;
    method_finish(m);
}

void chk_trait(chk_ctx *cx, chk_module *cm, bxc_item *it) {
    chk_selectors sel;
    memset(&sel, 0, sizeof sel);
    sel.names = "";
    bxc_attr *be = chk_find_attr(&it->attrs, "backend_extension");
    if (be) {
        chk_backend_extension(cx, be, &sel);
        it->trait.selectors = chk_selector_record(cx, be);
    }
    const char *trait = it->name.name;
    uint32_t n = it->trait.methods.len;
    bxc_fn **seen = bxc_arena_alloc(cx->arena, (n ? n : 1) * sizeof *seen);
    uint32_t nseen = 0;
    trait_state ts = {0};
    ts.cap = n;
    ts.no_effect = bxc_arena_alloc(cx->arena, (n ? n : 1) * sizeof *ts.no_effect);
    ts.no_effect_self = bxc_arena_alloc(cx->arena, (n ? n : 1) * sizeof *ts.no_effect_self);
    for (uint32_t i = 0; i < n; i++) {
        bxc_fn *fn = it->trait.methods.items[i];
        chk_attrs_placement(cx, &fn->attrs, BXC_SITE_METHOD);
        if (!chk_cfg_active(cx, &fn->attrs)) {
            chk_method_switched_off(cx, cm, fn);
            chk_method_record_off(cx, cm, it, fn);
            continue;
        }
        bxc_fn *dup = NULL;
        for (uint32_t k = 0; k < nseen; k++)
            if (strcmp(seen[k]->name.name, fn->name.name) == 0) dup = seen[k];
        if (dup) {
            bxc_diag *d = chk_error(cx, CHK_E_DUP_METHOD, fn->name.span,
                                    "duplicate method `%s` in `%s`", fn->name.name, trait);
            chk_note(cx, d, dup->name.span, "first defined here");
            chk_help(cx, d, "give it another name (methods are not overloaded)");
            continue;
        }
        seen[nseen++] = fn;
        check_method(cx, cm, it, fn, &sel, trait, &ts);
    }
    /* "add `Fusion`" only where adding it checks: not when this method or
     * another one of the trait cannot have `Fusion`. */
    for (uint32_t i = 0; i < ts.nno_effect; i++) {
        if (ts.no_effect_self[i])
            chk_help(cx, ts.no_effect[i], "remove the `#[fusion(...)]` attribute (%s)", ts.no_effect_self[i]);
        else if (ts.no_input)
            chk_help(cx, ts.no_effect[i], "remove the `#[fusion(...)]` attribute: `Fusion` cannot be "
                                          "listed while `%s` has no tensor input", ts.no_input);
        else
            chk_help(cx, ts.no_effect[i], "add `Fusion` to `#[backend_extension(...)]`");
    }
    /* Op ids key the process-wide registry with the trait, where a second
     * one is a panic at start-up: say so here, at the second id. */
    for (uint32_t i = 1; i < nseen; i++) {
        const bxc_method_rec *ri = seen[i]->method;
        for (uint32_t k = 0; k < i; k++) {
            const bxc_method_rec *rk = seen[k]->method;
            if (strcmp(rk->op_id, ri->op_id) != 0) continue;
            bxc_diag *d = chk_error(cx, CHK_E_DUP_METHOD, ri->op_id_span,
                                    "`%s` and `%s` of `%s` have the same op id \"%s\"", seen[k]->name.name,
                                    seen[i]->name.name, trait, ri->op_id);
            chk_note(cx, d, rk->op_id_span, "the op id of `%s`", seen[k]->name.name);
            chk_help(cx, d, "give one of them another `#[fusion(id = \"...\")]`");
            break;
        }
    }
}
