/* emit_dispatch.c — dispatch entry points of backend-extension traits.
 *
 * For every method of a `#[backend_extension(...)]` trait in the root
 * module: the entry point (routing per language.md §3), the prototypes of
 * the per-backend implementations the user supplies, weak references and
 * the generated default body when the method has one, and the method's
 * metadata functions.  Conventions: docs/codegen.md. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "emit_int.h"

/* The selectors, in the order of language.md §3. */
typedef struct selector_info {
    const char *name;       /* as written */
    const char *suffix;     /* implementation suffix; NULL: none (Fusion) */
    const char *has;        /* gen.h availability macro */
    const char *backend;    /* bext_backend_kind constant; NULL: not a device backend */
} selector_info;

static const selector_info selectors[] = {
    {"Cube", "cube", "BEXT_GEN_HAS_CUBE", "BEXT_BACKEND_CUBE"},
    {"Flex", "flex", "BEXT_GEN_HAS_FLEX", "BEXT_BACKEND_FLEX"},
    {"NdArray", "ndarray", "BEXT_GEN_HAS_NDARRAY", "BEXT_BACKEND_NDARRAY"},
    {"LibTorch", "libtorch", "BEXT_GEN_HAS_LIBTORCH", "BEXT_BACKEND_LIBTORCH"},
    {"Remote", "remote", "BEXT_GEN_HAS_REMOTE", "BEXT_BACKEND_REMOTE"},
    {"Autodiff", "autodiff", "BEXT_GEN_HAS_AUTODIFF", NULL},
    {"Fusion", NULL, "BEXT_GEN_HAS_FUSION", NULL},
};
#define NSEL (sizeof selectors / sizeof *selectors)

typedef struct listed_sel {
    const selector_info *info;
    const char *cond_c;     /* C condition or NULL */
    const char *cond_text;  /* `cfg(feature = "x")` or NULL */
} listed_sel;

typedef struct trait_info {
    const char *name;       /* MyExtension */
    const char *prefix;     /* my_extension */
    listed_sel sels[NSEL];
    uint32_t nsels;
    const char *listed;     /* for messages */
} trait_info;

static bool parse_selectors(bxc_emit_ctx *cx, const bxc_attr *at, trait_info *ti) {
    ti->listed = "";
    for (uint32_t i = 0; i < at->args.len; i++) {
        const bxc_attr_arg *arg = at->args.items[i];
        if ((arg->kind != BXC_ATTR_ARG_PATH && arg->kind != BXC_ATTR_ARG_COLON) || !arg->path ||
            arg->path->segs.len != 1) {
            bxc_emit_error(cx, arg->span, "cannot read this backend selector");
            return false;
        }
        const char *n = arg->path->segs.items[0].name;
        const selector_info *si = NULL;
        for (size_t k = 0; k < NSEL; k++)
            if (strcmp(selectors[k].name, n) == 0) si = &selectors[k];
        if (!si) {
            bxc_emit_error(cx, arg->span, "`%s` is not a backend selector", n);
            return false;
        }
        listed_sel *ls = &ti->sels[ti->nsels++];
        ls->info = si;
        ls->cond_c = NULL;
        ls->cond_text = NULL;
        if (arg->kind == BXC_ATTR_ARG_COLON && arg->args.len == 1) {
            ls->cond_c = bxc_emit_cfg_c(cx, arg->args.items[0]);
            ls->cond_text = bxc_emit_cfg_text(cx, arg->args.items[0]);
        }
        ti->listed = bxc_arena_printf(cx->a, "%s%s%s%s%s", ti->listed, i ? ", " : "", n,
                                      ls->cond_text ? ": " : "", ls->cond_text ? ls->cond_text : "");
        if (ti->nsels == NSEL) break;
    }
    return true;
}

/* One parameter as the generator sees it. */
typedef struct param_info {
    const char *name;       /* C name */
    const char *src_name;   /* as written (messages) */
    bxc_type *type;         /* without the reference */
    bool borrowed;          /* `&T` */
    bool is_tensor;
} param_info;

typedef struct method_info {
    const bxc_fn *fn;
    const char *entry;      /* my_extension_transpose_2d */
    const char *what;       /* MyExtension::transpose_2d */
    param_info *params;
    uint32_t nparams;
    bxc_type *ret;          /* resolved; UNIT when none */
    bool ret_tensor, ret_unit;
    const char *ret_ctype;  /* for non-tensor outputs */
    const char *cparams;    /* C parameter list */
    const char *cargs;      /* C argument list forwarding them */
} method_info;

/* The type of a written type.  The checker records it (tyexpr->ty) on
 * every method it checked; a method that a `#[cfg]` switched off for the
 * features bextc was given is not checked, yet its C must still exist
 * (the build decides), so its types are read from the syntax here. */
bxc_type *bxc_emit_tyexpr_type(bxc_emit_ctx *cx, const bxc_tyexpr *te) {
    if (!te) return NULL;
    if (te->ty) return te->ty;
    if (te->kind == BXC_TY_REF) {
        bxc_type *in = bxc_emit_tyexpr_type(cx, te->inner);
        return in ? bxc_type_ref(cx->a, in, te->is_mut) : NULL;
    }
    if (te->kind == BXC_TY_TUPLE) {
        bxc_type **el = bxc_arena_alloc(cx->a, (te->elems.len + 1) * sizeof *el);
        for (uint32_t i = 0; i < te->elems.len; i++)
            if (!(el[i] = bxc_emit_tyexpr_type(cx, te->elems.items[i]))) return NULL;
        return bxc_type_tuple(cx->a, el, te->elems.len);
    }
    if (te->kind != BXC_TY_PATH || !te->path || !te->path->segs.len) return NULL;
    const char *n = te->path->segs.items[te->path->segs.len - 1].name;
    static const char *const tk[] = {"FloatTensor", "IntTensor", "BoolTensor", "QuantizedTensor"};
    for (int k = 0; k < 4; k++)
        if (!strcmp(n, tk[k])) return bxc_type_tensor((bxc_tensor_kind)k);
    for (int k = 0; k < BXC_INT_KIND_COUNT; k++)
        if (!strcmp(n, bxc_int_kind_name((bxc_int_kind)k))) return bxc_type_int((bxc_int_kind)k);
    if (!strcmp(n, "f32")) return bxc_type_float(BXC_F32);
    if (!strcmp(n, "f64")) return bxc_type_float(BXC_F64);
    if (!strcmp(n, "bool")) return bxc_type_bool();
    if (!strcmp(n, "Shape")) return bxc_type_shape();
    if (!strcmp(n, "DType")) return bxc_type_dtype();
    if (!strcmp(n, "TensorSpec")) return bxc_type_spec();
    return bxc_check_lookup_type(cx->u, n);
}

static bool method_signature(bxc_emit_ctx *cx, const trait_info *ti, const bxc_fn *fn, method_info *mi) {
    memset(mi, 0, sizeof *mi);
    mi->fn = fn;
    mi->entry = bxc_arena_printf(cx->a, "%s_%s", ti->prefix, fn->name.name);
    mi->what = bxc_arena_printf(cx->a, "%s::%s", ti->name, fn->name.name);
    mi->params = bxc_arena_alloc(cx->a, (fn->params.len + 1) * sizeof *mi->params);
    const char *cp = "", *ca = "";
    for (uint32_t i = 0; i < fn->params.len; i++) {
        const bxc_param *p = fn->params.items[i];
        bxc_type *pt = p->type ? bxc_emit_tyexpr_type(cx, p->type) : NULL;
        if (p->is_self || !pt || !p->pat || p->pat->kind != BXC_PAT_IDENT) {
            bxc_emit_error(cx, p->span, "the C generator needs a named, typed parameter here");
            return false;
        }
        param_info *pi = &mi->params[mi->nparams++];
        bxc_type *t = bxc_type_resolve(pt);
        pi->borrowed = t->kind == BXC_TYPE_REF;
        pi->type = bxc_type_strip_refs(t);
        pi->is_tensor = pi->type->kind == BXC_TYPE_TENSOR;
        pi->src_name = p->pat->name.name;
        pi->name = bxc_emit_ident(cx->a, p->pat->name.name);
        const char *ct = bxc_emit_ctype_of(cx, pi->type);
        if (!ct || strcmp(ct, "void") == 0) {
            bxc_emit_error(cx, p->span, "this parameter's type has no C representation");
            return false;
        }
        const char *decl = pi->is_tensor ? bxc_arena_printf(cx->a, "bext_tensor *%s", pi->name)
                           : pi->borrowed ? bxc_arena_printf(cx->a, "const %s *%s", ct, pi->name)
                                          : bxc_arena_printf(cx->a, "%s %s", ct, pi->name);
        cp = bxc_arena_printf(cx->a, "%s%s%s", cp, i ? ", " : "", decl);
        ca = bxc_arena_printf(cx->a, "%s%s%s", ca, i ? ", " : "", pi->name);
    }
    bxc_type *rt = fn->ret ? bxc_emit_tyexpr_type(cx, fn->ret) : bxc_type_unit();
    if (!rt) {
        bxc_emit_error(cx, fn->ret->span, "the C generator cannot read this output type");
        return false;
    }
    mi->ret = bxc_type_resolve(rt);
    mi->ret_tensor = mi->ret->kind == BXC_TYPE_TENSOR;
    mi->ret_unit = mi->ret->kind == BXC_TYPE_UNIT;
    if (!mi->ret_tensor && !mi->ret_unit) {
        mi->ret_ctype = bxc_emit_ctype_of(cx, mi->ret);
        if (!mi->ret_ctype || strcmp(mi->ret_ctype, "void") == 0 || mi->ret->kind == BXC_TYPE_REF) {
            bxc_emit_error(cx, fn->ret ? fn->ret->span : fn->span, "this output type has no C representation");
            return false;
        }
        cp = bxc_arena_printf(cx->a, "%s%s%s *bext_out", cp, mi->nparams ? ", " : "", mi->ret_ctype);
        ca = bxc_arena_printf(cx->a, "%s%sbext_out", ca, mi->nparams ? ", " : "");
    }
    if (!*cp) cp = "void";
    mi->cparams = cp;
    mi->cargs = ca;
    return true;
}

static const char *ret_decl(const method_info *mi) {
    return mi->ret_tensor ? "bext_tensor *" : "bool ";
}

/* Availability + condition of a listed selector's implementation. */
static const char *impl_cond(bxc_emit_ctx *cx, const listed_sel *ls) {
    return ls->cond_c ? bxc_arena_printf(cx->a, "%s && (%s)", ls->info->has, ls->cond_c) : ls->info->has;
}

/* Routing slots: appends code that records every tensor of a value (given
 * as a C lvalue `acc`, named `disp` in messages); returns the maximum
 * number of slots it can record. */
static uint32_t collect(bxc_emit_ctx *cx, bxc_emit_buf *b, bxc_type *t, const char *acc, const char *disp,
                        const char *ind, int depth) {
    t = bxc_type_strip_refs(bxc_type_resolve(t));
    if (depth > 64 || !bxc_emit_type_has_tensors(t)) return 0;
    if (t->kind == BXC_TYPE_TENSOR) {
        bxc_emit_printf(b, "%sbext_rt_t[bext_rt_c] = %s;\n%sbext_rt_n[bext_rt_c] = %s;\n%sbext_rt_f[bext_rt_c++] = %d;\n", ind, acc, ind,
                        bxc_emit_cstring(cx->a, disp), ind, t->tensor_kind == BXC_TENSOR_FLOAT);
        return 1;
    }
    if (t->kind == BXC_TYPE_TUPLE) {
        uint32_t n = 0;
        for (uint32_t i = 0; i < t->tuple.n; i++)
            n += collect(cx, b, t->tuple.elems[i], bxc_arena_printf(cx->a, "%s._%u", acc, i),
                         bxc_arena_printf(cx->a, "%s.%u", disp, i), ind, depth + 1);
        return n;
    }
    bxc_type_decl *d = t->decl;
    if (!d->is_enum) {
        uint32_t n = 0;
        for (uint32_t i = 0; i < d->nfields; i++) {
            const bxc_type_field *f = &d->fields[i];
            const char *fn = f->name ? bxc_emit_ident(cx->a, f->name) : bxc_arena_printf(cx->a, "_%u", i);
            n += collect(cx, b, f->type, bxc_arena_printf(cx->a, "%s.%s", acc, fn),
                         bxc_arena_printf(cx->a, "%s.%s", disp, f->name ? f->name : bxc_arena_printf(cx->a, "%u", i)),
                         ind, depth + 1);
        }
        return n;
    }
    const char *U = bxc_emit_upper(cx->a, d->name);
    uint32_t best = 0;
    bxc_emit_printf(b, "%sswitch (%s.tag) {\n", ind, acc);
    const char *ind2 = bxc_arena_printf(cx->a, "%s  ", ind);
    for (uint32_t v = 0; v < d->nvariants; v++) {
        const bxc_type_variant *var = &d->variants[v];
        bxc_emit_buf sub = {0};
        uint32_t n = 0;
        for (uint32_t i = 0; i < var->nfields; i++) {
            const bxc_type_field *f = &var->fields[i];
            const char *fn = f->name ? bxc_emit_ident(cx->a, f->name) : bxc_arena_printf(cx->a, "_%u", i);
            n += collect(cx, &sub, f->type, bxc_arena_printf(cx->a, "%s.as.%s.%s", acc, var->name, fn),
                         bxc_arena_printf(cx->a, "%s(%s).%s", disp, var->name,
                                          f->name ? f->name : bxc_arena_printf(cx->a, "%u", i)),
                         ind2, depth + 1);
        }
        if (n) {
            bxc_emit_printf(b, "%scase %s_%s:\n", ind, U, bxc_emit_upper(cx->a, var->name));
            bxc_emit_append(b, &sub);
            bxc_emit_printf(b, "%sbreak;\n", ind2);
        }
        bxc_emit_buf_free(&sub);
        if (n > best) best = n;
    }
    bxc_emit_printf(b, "%sdefault:\n%sbreak;\n%s}\n", ind, ind2, ind);
    return best;
}

/* Releases of the owned tensor-bearing parameters. */
static void release_owned(bxc_emit_ctx *cx, bxc_emit_buf *b, const method_info *mi, const char *ind) {
    for (uint32_t i = 0; i < mi->nparams; i++) {
        const param_info *p = &mi->params[i];
        if (p->borrowed || !bxc_emit_type_has_tensors(p->type)) continue;
        if (p->is_tensor) {
            bxc_emit_printf(b, "%sbext_release(%s);\n", ind, p->name);
        } else {
            bxc_emit_ctype *ct = bxc_emit_register_type(cx, p->type);
            if (ct) bxc_emit_printf(b, "%s%s_release(&%s);\n", ind, ct->fn_prefix, p->name);
        }
    }
}

/* The call of one arm: the user's implementation, or (weak, missing) the
 * default body. */
static const char *arm_call(bxc_emit_ctx *cx, const method_info *mi, const listed_sel *ls, bool has_default) {
    const char *impl = bxc_arena_printf(cx->a, "%s_%s", mi->entry, ls->info->suffix);
    if (has_default)
        return bxc_arena_printf(cx->a, "(%s ? %s : %s_bext_default)(%s)", impl, impl, mi->entry, mi->cargs);
    return bxc_arena_printf(cx->a, "%s(%s)", impl, mi->cargs);
}

static void emit_arm_return(bxc_emit_ctx *cx, bxc_emit_buf *c, const method_info *mi, const listed_sel *ls,
                            bool has_default, const char *ind) {
    const char *call = arm_call(cx, mi, ls, has_default);
    const char *ok = mi->ret_tensor ? "bext_r != NULL" : "bext_r";
    /* The implementation failed silently when it set no error during this
     * call (bext.h's error contract): an older message is not its cause. */
    bxc_emit_printf(c,
                    "%s{\n%s  uint64_t bext_nerr = bext_error_count();\n%s  %sbext_r = %s;\n"
                    "%s  if (!(%s) && bext_error_count() == bext_nerr)\n"
                    "%s    BEXT_GEN_SET_ERROR(\"%%s (%s implementation) failed\", %s);\n"
                    "%s  return bext_r;\n%s}\n",
                    ind, ind, ind, mi->ret_tensor ? "bext_tensor *" : "bool ", call, ind, ok, ind, ls->info->suffix,
                    bxc_emit_cstring(cx->a, mi->what), ind, ind);
}

static void emit_method(bxc_emit_ctx *cx, const trait_info *ti, const bxc_fn *fn) {
    method_info mi;
    const char *mcond = bxc_emit_cfg_attrs(cx, &fn->attrs);
    if (!method_signature(cx, ti, fn, &mi)) return;
    bool has_default = fn->body != NULL;
    /* every file-scope name this method produces (emit_names.c) */
    bool named = bxc_emit_claim(cx, mi.entry, fn->name.span,
                                bxc_arena_printf(cx->a, "the entry point of method `%s`", mi.what));
    for (uint32_t k = 0; k < ti->nsels; k++) {
        const listed_sel *ls = &ti->sels[k];
        if (!ls->info->suffix) continue;
        named &= bxc_emit_claim(cx, bxc_arena_printf(cx->a, "%s_%s", mi.entry, ls->info->suffix), fn->name.span,
                                bxc_arena_printf(cx->a, "the %s implementation of method `%s`", ls->info->name,
                                                 mi.what));
    }
    if (has_default)
        named &= bxc_emit_claim(cx, bxc_arena_printf(cx->a, "%s_bext_default", mi.entry), fn->name.span,
                                bxc_arena_printf(cx->a, "the default body of method `%s`", mi.what));
    if (!named) return;
    bxc_emit_buf *h = &cx->protos_h, *c = &cx->code_c;

    /* ---- header ---- */
    bxc_emit_printf(h, "/* ---- %s ---- */\n", mi.what);
    if (mcond) bxc_emit_printf(h, "#if %s\n", mcond);
    bxc_emit_printf(h, "/* Entry point: routes to the implementation of the input tensors' backend.\n"
                       " * Consumes its owned arguments; %s */\n",
                    mi.ret_tensor ? "NULL + bext_last_error() on failure."
                                  : "false + bext_last_error() on failure (*bext_out zeroed).");
    bxc_emit_printf(h, "%s%s(%s);\n", ret_decl(&mi), mi.entry, mi.cparams);
    bxc_emit_printf(h, "/* Implementations you supply%s (same contract): */\n",
                    has_default ? " — optional: the default body serves a missing one" : "");
    for (uint32_t k = 0; k < ti->nsels; k++) {
        const listed_sel *ls = &ti->sels[k];
        if (!ls->info->suffix) continue;
        bxc_emit_printf(h, "#if %s\n%s%s_%s(%s);\n#endif\n", impl_cond(cx, ls), ret_decl(&mi), mi.entry,
                        ls->info->suffix, mi.cparams);
    }
    bxc_emit_puts(h, "\n");

    /* ---- source ---- */
    bxc_emit_printf(c, "/* ---- %s ---- */\n", mi.what);
    if (mcond) bxc_emit_printf(c, "#if %s\n", mcond);
    if (has_default) {
        for (uint32_t k = 0; k < ti->nsels; k++) {
            const listed_sel *ls = &ti->sels[k];
            if (!ls->info->suffix) continue;
            bxc_emit_printf(c, "#if %s\nextern %s%s_%s(%s) __attribute__((weak));\n#endif\n", impl_cond(cx, ls),
                            ret_decl(&mi), mi.entry, ls->info->suffix, mi.cparams);
        }
        if (!mi.ret_tensor) {
            bxc_emit_error(cx, fn->span, "the C generator supports default bodies with one tensor output only");
        } else {
            bxc_emit_default_body(cx, fn, bxc_arena_printf(cx->a, "%s_bext_default", mi.entry), mi.cparams);
        }
    }

    bxc_emit_printf(c, "%s%s(%s) {\n", ret_decl(&mi), mi.entry, mi.cparams);
    /* Ordinary arguments only reach the arms: with every arm compiled out
     * (a cfg condition off) they would be unused under -Wextra. */
    for (uint32_t i = 0; i < mi.nparams; i++)
        if (!bxc_emit_type_has_tensors(mi.params[i].type)) bxc_emit_printf(c, "  (void)%s;\n", mi.params[i].name);
    const char *what_lit = bxc_emit_cstring(cx->a, mi.what);
    const char *listed_lit = bxc_emit_cstring(cx->a, ti->listed);
    bxc_emit_buf coll = {0};
    uint32_t nslots = 0;
    for (uint32_t i = 0; i < mi.nparams; i++) {
        const param_info *p = &mi.params[i];
        const char *acc = p->is_tensor || !p->borrowed ? p->name : bxc_arena_printf(cx->a, "(*%s)", p->name);
        nslots += collect(cx, &coll, p->type, acc, p->src_name, "  ", 0);
    }
    if (nslots == 0) {
        /* No tensor input: the checker allows exactly one selector. */
        const listed_sel *only = NULL;
        for (uint32_t k = 0; k < ti->nsels; k++)
            if (ti->sels[k].info->backend) only = &ti->sels[k];
        if (!only) {
            bxc_emit_error(cx, fn->span, "a method without tensor inputs needs one backend selector");
        } else {
            bxc_emit_printf(c, "#if %s\n", impl_cond(cx, only));
            emit_arm_return(cx, c, &mi, only, has_default, "  ");
            bxc_emit_puts(c, "#else\n");
            release_owned(cx, c, &mi, "  ");
            bxc_emit_printf(c, "  BEXT_GEN_PANIC(\"%%s: no implementation for backend %s: it is not available "
                               "or its condition is off in this build (listed: %%s)\", %s, %s);\n#endif\n}\n",
                            only->info->suffix, what_lit, listed_lit);
        }
    } else {
        bxc_emit_printf(c, "  bext_tensor *bext_rt_t[%u] = {0};\n  const char *bext_rt_n[%u] = {0};\n  unsigned char bext_rt_f[%u] = {0};\n"
                           "  int bext_rt_c = 0;\n  const char *bext_why = \"is not listed\";\n",
                        nslots, nslots, nslots);
        bxc_emit_append(c, &coll);
        bxc_emit_printf(c, "  int bext_be = bext_gen_route(%s, bext_rt_t, bext_rt_n, bext_rt_f, bext_rt_c);\n  if (bext_be < 0) goto bext_fail;\n",
                        what_lit);
        bxc_emit_puts(c, "  switch (bext_be) {\n");
        for (uint32_t k = 0; k < ti->nsels; k++) {
            const listed_sel *ls = &ti->sels[k];
            if (!ls->info->backend) continue;
            bxc_emit_printf(c, "  case %s:\n#if %s\n", ls->info->backend, impl_cond(cx, ls));
            emit_arm_return(cx, c, &mi, ls, has_default, "    ");
            bxc_emit_printf(c, "#elif !%s\n    bext_why = \"is listed, but this runtime has no such backend\";\n"
                               "    break;\n",
                            ls->info->has);
            if (ls->cond_c)
                bxc_emit_printf(c, "#else\n    bext_why = %s;\n    break;\n",
                                bxc_emit_cstring(cx->a, bxc_arena_printf(cx->a,
                                                                         "is listed as `%s: %s`, and that "
                                                                         "condition is off in this build",
                                                                         ls->info->name, ls->cond_text)));
            bxc_emit_puts(c, "#endif\n");
        }
        bxc_emit_puts(c, "  default:\n    break;\n  }\n");
        release_owned(cx, c, &mi, "  ");
        bxc_emit_printf(c, "  BEXT_GEN_PANIC(\"%%s: no implementation for backend %%s: it %%s (listed: %%s)\", "
                           "%s, bext_gen_backend_name(bext_be), bext_why, %s);\n",
                        what_lit, listed_lit);
        bxc_emit_puts(c, "bext_fail:\n");
        release_owned(cx, c, &mi, "  ");
        if (!mi.ret_tensor && !mi.ret_unit) bxc_emit_puts(c, "  memset(bext_out, 0, sizeof *bext_out);\n");
        bxc_emit_printf(c, "  return %s;\n}\n", mi.ret_tensor ? "NULL" : "false");
    }
    bxc_emit_buf_free(&coll);
    if (mcond) bxc_emit_printf(c, "#endif /* %s */\n", mi.what);
    bxc_emit_puts(c, "\n");

    bxc_emit_method_meta(cx, mi.entry, fn, mcond);
    if (mcond) bxc_emit_printf(h, "#endif /* %s */\n\n", mi.what);
}

void bxc_emit_traits(bxc_emit_ctx *cx) {
    if (!cx->u->nmodules) return;
    bxc_file *f = cx->u->modules[0]->ast;
    for (uint32_t i = 0; f && i < f->items.len; i++) {
        bxc_item *it = f->items.items[i];
        if (it->kind != BXC_ITEM_TRAIT) continue;
        const bxc_attr *be = NULL;
        for (uint32_t k = 0; k < it->attrs.len; k++)
            if (bxc_emit_path_is(it->attrs.items[k]->path, "backend_extension")) be = it->attrs.items[k];
        if (!be) continue;
        trait_info ti;
        memset(&ti, 0, sizeof ti);
        ti.name = it->name.name;
        ti.prefix = bxc_emit_snake(cx->a, it->name.name);
        if (!parse_selectors(cx, be, &ti)) continue;
        const char *tcond = bxc_emit_cfg_attrs(cx, &it->attrs);
        if (tcond) {
            bxc_emit_printf(&cx->protos_h, "#if %s\n", tcond);
            bxc_emit_printf(&cx->code_c, "#if %s\n", tcond);
        }
        bxc_emit_printf(&cx->protos_h, "/* ==== trait %s: #[backend_extension(%s)] ==== */\n\n", ti.name,
                        bxc_emit_comment_text(cx->a, ti.listed));
        for (uint32_t m = 0; m < it->trait.methods.len; m++) emit_method(cx, &ti, it->trait.methods.items[m]);
        if (tcond) {
            bxc_emit_printf(&cx->protos_h, "#endif /* %s */\n\n", ti.name);
            bxc_emit_printf(&cx->code_c, "#endif /* %s */\n\n", ti.name);
        }
    }
}
