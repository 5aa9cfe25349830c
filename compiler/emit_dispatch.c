/* emit_dispatch.c — dispatch entry points of backend-extension traits.
 *
 * For every method of a `#[backend_extension(...)]` trait in the root
 * module: the entry point (routing per language.md §3), the prototypes of
 * the per-backend implementations the user supplies, weak references and
 * the generated default body when the method has one, and the method's
 * metadata functions.  Conventions: docs/codegen.md. */
#include <stdio.h>
#include <string.h>

#include <bext/bext.h>
#include <bext/ext.h>

#include "emit_int.h"

/* The selectors: the runtime's backend and layer tables (bext.h), in
 * language.md §3's order.  A backend selector's arm is compiled when the
 * runtime has it (BEXT_HAVE_<ENUM>, bext/config.h). */
typedef struct selector_info {
    const char *name;       /* as written: `Flex` */
    const char *suffix;     /* implementation suffix: `flex` */
    bool runtime_arm;       /* the runtime supplies the arm (Fusion records the call,
                             * Remote sends it): no implementation for users */
    const char *have;       /* availability macro: BEXT_HAVE_FLEX */
    const char *backend;    /* BEXT_BACKEND_* constant; NULL for a layer */
    const char *layer;      /* BEXT_LAYER_* constant; NULL for a backend */
} selector_info;

static const selector_info selectors[] = {
#define SEL_B_(E, s, S) {#S, #s, BEXT_BACKEND_##E == BEXT_BACKEND_REMOTE, "BEXT_HAVE_" #E, "BEXT_BACKEND_" #E, NULL},
    BEXT_BACKENDS(SEL_B_)
#undef SEL_B_
#define SEL_L_(E, s, S, d) {#S, #s, BEXT_LAYER_##E == BEXT_LAYER_FUSION, "BEXT_HAVE_" #E, NULL, "BEXT_LAYER_" #E},
    BEXT_LAYERS(SEL_L_)
#undef SEL_L_
};
#define NSEL (sizeof selectors / sizeof *selectors)
/* The checker's selector record indexes this table (CHK_SEL_* order). */
_Static_assert(NSEL == BEXT_BACKEND_COUNT + BEXT_LAYER_COUNT, "one row per selector of bext.h");

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

/* The trait's selectors as the checker recorded them (ast.h
 * bxc_trait_selectors): the generator reads no selector syntax itself. */
static bool read_selectors(bxc_emit_ctx *cx, const bxc_item *it, const bxc_attr *at, trait_info *ti) {
    const bxc_trait_selectors *rec = it->trait.selectors;
    ti->listed = "";
    if (!rec || rec->bad) {
        /* chk_backend_extension reports every selector it cannot read (E0505) */
        bxc_emit_internal_error(cx, rec ? rec->bad->span : at->span, "a backend selector the checker did not read");
        return false;
    }
    for (uint32_t i = 0; i < rec->len; i++) {
        const bxc_selector_use *u = &rec->items[i];
        listed_sel *ls = &ti->sels[ti->nsels++];
        ls->info = &selectors[u->index];
        ls->cond_c = u->cfg ? bxc_emit_cfg_c(cx, u->cfg) : NULL;
        ls->cond_text = u->cfg ? bxc_emit_cfg_text(cx, u->cfg) : NULL;
        ti->listed = bxc_arena_printf(cx->a, "%s%s%s%s%s", ti->listed, i ? ", " : "", u->name,
                                      ls->cond_text ? ": " : "", ls->cond_text ? ls->cond_text : "");
    }
    return true;
}

typedef bxc_emit_param param_info;

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

/* The signature from the checker's record of the method (bxc_fn.method):
 * the types of every parameter and of the output, for a method a `#[cfg]`
 * switches off too (its C is generated under `#if`). */
static bool method_signature(bxc_emit_ctx *cx, const trait_info *ti, const bxc_fn *fn, method_info *mi) {
    memset(mi, 0, sizeof *mi);
    const bxc_method_rec *rec = fn->method;
    if (!rec) {   /* chk_trait / chk_method_record_off record every method */
        bxc_emit_internal_error(cx, fn->name.span, "a method the checker did not record");
        return false;
    }
    mi->fn = fn;
    mi->entry = bxc_arena_join(cx->a, ti->prefix, "_", fn->name.name, NULL);
    mi->what = bxc_arena_join(cx->a, ti->name, "::", fn->name.name, NULL);
    mi->params = bxc_arena_alloc(cx->a, (fn->params.len + 1) * sizeof *mi->params);
    const char *cp = "", *ca = "";
    for (uint32_t i = 0; i < rec->nparams; i++) {
        const bxc_method_param *mp = &rec->params[i];
        const bxc_param *p = mp->p;
        if (!bxc_emit_param_named(p) || mp->cls == BXC_ARG_BAD) {
            /* the checker resolves every written type, of methods a
             * `#[cfg]` switches off too, and reports unnamed parameters */
            bxc_emit_internal_error(cx, p->span, "a parameter the checker did not resolve");
            return false;
        }
        param_info *pi = &mi->params[mi->nparams++];
        pi->p = p;
        pi->rec = mp;
        pi->borrowed = mp->borrowed;
        pi->type = mp->base;
        pi->is_tensor = mp->cls == BXC_ARG_TENSOR;
        pi->src_name = mp->name;
        pi->name = bxc_emit_ident(cx->a, mp->name);
        const char *ct = bxc_emit_ctype_of(cx, pi->type);
        if (bxc_emit_no_c_form(pi->type)) {   /* the checker's E0710 */
            bxc_emit_internal_error(cx, p->span, "a parameter type with no C form");
            return false;
        }
        if (cx->plan) continue;   /* names only: the type is registered, no C text */
        const char *decl = pi->is_tensor ? bxc_arena_printf(cx->a, "bext_tensor *%s", pi->name)
                           : pi->borrowed ? bxc_arena_printf(cx->a, "const %s *%s", ct, pi->name)
                                          : bxc_arena_printf(cx->a, "%s %s", ct, pi->name);
        cp = bxc_arena_printf(cx->a, "%s%s%s", cp, i ? ", " : "", decl);
        ca = bxc_arena_printf(cx->a, "%s%s%s", ca, i ? ", " : "", pi->name);
    }
    bxc_type *rt = rec->ret;
    if (!rt || bxc_type_is_error(rt)) {   /* resolved by the checker, as parameters are */
        bxc_emit_internal_error(cx, fn->ret->span, "an output type the checker did not resolve");
        return false;
    }
    mi->ret = bxc_type_resolve(rt);
    mi->ret_tensor = mi->ret->kind == BXC_TYPE_TENSOR;
    mi->ret_unit = mi->ret->kind == BXC_TYPE_UNIT;
    if (!mi->ret_tensor && !mi->ret_unit) {
        mi->ret_ctype = bxc_emit_ctype_of(cx, mi->ret);
        if (bxc_emit_output_no_c_form(mi->ret)) {   /* the checker's E0710 */
            bxc_emit_internal_error(cx, fn->ret ? fn->ret->span : fn->span, "an output type with no C form");
            return false;
        }
        if (!cx->plan) {
            cp = bxc_arena_printf(cx->a, "%s%s%s *bext_out", cp, mi->nparams ? ", " : "", mi->ret_ctype);
            ca = bxc_arena_printf(cx->a, "%s%sbext_out", ca, mi->nparams ? ", " : "");
        }
    }
    if (!*cp) cp = "void";
    mi->cparams = cp;
    mi->cargs = ca;
    return true;
}

static const char *ret_decl(const method_info *mi) {
    return mi->ret_tensor ? "bext_tensor *" : "bool ";
}

/* Availability + condition of a listed selector's arm. */
static const char *impl_cond(bxc_emit_ctx *cx, const listed_sel *ls) {
    const char *have = bxc_arena_printf(cx->a, "defined(%s)", ls->info->have);
    return ls->cond_c ? bxc_arena_printf(cx->a, "%s && (%s)", have, ls->cond_c) : have;
}

/* Tensor slots: appends code that records every tensor of a value (given
 * as a C lvalue `acc`, named `disp` in messages) into bext_s[]; returns
 * the largest number of slots it can record. */
bool bxc_emit_param_named(const bxc_param *p) {
    return !p->is_self && p->pat && p->pat->kind == BXC_PAT_IDENT;
}

/* What collect() below fills: one slot per tensor, a struct's or tuple's
 * parts added, an enum's largest variant.  Each decl's count is kept, so a
 * DAG of types (two fields of one type, each level) costs one walk per decl. */
typedef struct slot_memo {
    const bxc_type_decl *d[256];
    uint64_t n[256];
    uint32_t len;
} slot_memo;

/* Counts saturate far above any limit: a wide DAG cannot overflow them. */
#define SLOTS_CAP ((uint64_t)1 << 40)

static uint64_t slots_rec(bxc_type *t, int depth, slot_memo *m) {
    t = bxc_type_strip_refs(bxc_type_resolve(t));
    if (depth > 64) return 0;
    if (t->kind == BXC_TYPE_TENSOR) return 1;
    uint64_t n = 0;
    if (t->kind == BXC_TYPE_TUPLE) {
        for (uint32_t i = 0; i < t->tuple.n; i++) n += slots_rec(t->tuple.elems[i], depth + 1, m);
        return n < SLOTS_CAP ? n : SLOTS_CAP;
    }
    if (t->kind != BXC_TYPE_STRUCT && t->kind != BXC_TYPE_ENUM) return 0;
    const bxc_type_decl *d = t->decl;
    for (uint32_t k = 0; k < m->len; k++)
        if (m->d[k] == d) return m->n[k];
    for (uint32_t i = 0; i < d->nfields; i++) n += slots_rec(d->fields[i].type, depth + 1, m);
    for (uint32_t v = 0; v < d->nvariants; v++) {
        uint64_t k = 0;
        for (uint32_t i = 0; i < d->variants[v].nfields; i++) k += slots_rec(d->variants[v].fields[i].type, depth + 1, m);
        if (k > n) n = k;
    }
    if (n > SLOTS_CAP) n = SLOTS_CAP;
    if (m->len < 256) {
        m->d[m->len] = d;
        m->n[m->len++] = n;
    }
    return n;
}

uint32_t bxc_emit_tensor_slots(bxc_type *t) {
    slot_memo m;
    m.len = 0;
    uint64_t n = slots_rec(t, 0, &m);
    return n > UINT32_MAX / 2 ? UINT32_MAX / 2 : (uint32_t)n;
}

static uint32_t collect(bxc_emit_ctx *cx, bxc_emit_buf *b, bxc_type *t, const char *acc, const char *disp,
                        bool borrowed, const char *ind, int depth) {
    t = bxc_type_strip_refs(bxc_type_resolve(t));
    if (depth > 64 || !bxc_emit_type_has_tensors(t)) return 0;
    if (t->kind == BXC_TYPE_TENSOR) {
        static const char *const kinds[] = {"BEXT_KIND_FLOAT", "BEXT_KIND_INT", "BEXT_KIND_BOOL", "-1"};
        bxc_emit_printf(b, "%sbext_s[bext_n++] = (bext_ext_slot){&%s, %s, %d, %d, %s};\n", ind, acc,
                        bxc_emit_cstring(cx->a, disp), t->tensor_kind == BXC_TENSOR_FLOAT, borrowed,
                        kinds[t->tensor_kind < BXC_TENSOR_QUANTIZED ? t->tensor_kind : 3]);
        return 1;
    }
    if (t->kind == BXC_TYPE_TUPLE) {
        uint32_t n = 0;
        for (uint32_t i = 0; i < t->tuple.n; i++)
            n += collect(cx, b, t->tuple.elems[i], bxc_arena_printf(cx->a, "%s._%u", acc, i),
                         bxc_arena_printf(cx->a, "%s.%u", disp, i), borrowed, ind, depth + 1);
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
                         borrowed, ind, depth + 1);
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
                         borrowed, ind2, depth + 1);
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

/* The C type a parameter has inside the argument struct: tensors as
 * handles, every other value by value (a borrowed `&T` is copied in). */
static const char *arg_field_decl(bxc_emit_ctx *cx, const param_info *p) {
    if (p->is_tensor) return bxc_arena_printf(cx->a, "bext_tensor *%s", p->name);
    return bxc_arena_printf(cx->a, "%s %s", bxc_emit_ctype_of(cx, p->type), p->name);
}

/* The Autodiff selector's row: backends first, then layers (above). */
#define AUTODIFF_SEL (&selectors[BEXT_BACKEND_COUNT + BEXT_LAYER_AUTODIFF])
_Static_assert(NSEL == BEXT_BACKEND_COUNT + BEXT_LAYER_COUNT, "selectors: one row per backend, then per layer");

/* The method's `#[backward(...)]` formulas (its record) when its trait
 * lists `Autodiff` (else the checker warned that it has no effect), or
 * NULL; NULL for `#[backward(manual)]`, whose `_autodiff` is the user's. */
static const bxc_attr *backward_attr(const trait_info *ti, const bxc_fn *fn) {
    bool listed = false;
    for (uint32_t k = 0; k < ti->nsels; k++) listed |= ti->sels[k].info == AUTODIFF_SEL;
    return listed ? fn->method->backward : NULL;
}

/* Whether the arm of selector ls is the user's function: not when the
 * runtime supplies it, nor for Autodiff when bextc generates it from
 * `#[backward]`. */
static bool user_arm(const listed_sel *ls, const bxc_attr *bw) {
    if (ls->info->runtime_arm) return false;
    return !(bw && ls->info == AUTODIFF_SEL);
}

/* The method descriptor, the argument struct, its slot functions and
 * invoke, then the entry point that packs a call and dispatches it. */
static void emit_descriptor(bxc_emit_ctx *cx, const trait_info *ti, const method_info *mi, const bxc_fn *fn,
                            bool has_default, const bxc_attr *bw, const bxc_emit_meta_info *meta, uint32_t *nin_out) {
    bxc_emit_buf *c = &cx->code_c;
    const char *e = mi->entry;
    /* argument struct: a dummy member keeps it non-empty */
    bxc_emit_printf(c, "struct %s_bext_args {\n", e);
    for (uint32_t i = 0; i < mi->nparams; i++) bxc_emit_printf(c, "  %s;\n", arg_field_decl(cx, &mi->params[i]));
    if (!mi->nparams) bxc_emit_puts(c, "  char bext_none;\n");
    bxc_emit_puts(c, "};\n");

    /* input slots */
    bxc_emit_buf coll = {0};
    uint32_t nin = 0;
    for (uint32_t i = 0; i < mi->nparams; i++) {
        const param_info *p = &mi->params[i];
        nin += collect(cx, &coll, p->type, bxc_arena_printf(cx->a, "bext_a->%s", p->name), p->src_name,
                       p->borrowed, "  ", 0);
    }
    *nin_out = nin;
    bxc_emit_printf(c, "static int %s_bext_in(void *bext_p, bext_ext_slot *bext_s) {\n", e);
    if (nin) {
        bxc_emit_printf(c, "  struct %s_bext_args *bext_a = bext_p;\n  int bext_n = 0;\n", e);
        bxc_emit_append(c, &coll);
        bxc_emit_puts(c, "  return bext_n;\n}\n");
    } else {
        bxc_emit_puts(c, "  (void)bext_p;\n  (void)bext_s;\n  return 0;\n}\n");
    }
    bxc_emit_buf_free(&coll);

    /* output slots */
    uint32_t nout = 0;
    bxc_emit_buf oc = {0};
    if (mi->ret_tensor) {
        static const char *const kinds[] = {"BEXT_KIND_FLOAT", "BEXT_KIND_INT", "BEXT_KIND_BOOL", "-1"};
        bxc_type *rt = bxc_type_strip_refs(bxc_type_resolve(mi->ret));
        bxc_emit_printf(&oc, "  bext_s[bext_n++] = (bext_ext_slot){(bext_tensor **)bext_p, \"output\", %d, 0, %s};\n",
                        rt->tensor_kind == BXC_TENSOR_FLOAT,
                        kinds[rt->tensor_kind < BXC_TENSOR_QUANTIZED ? rt->tensor_kind : 3]);
        nout = 1;
    } else if (!mi->ret_unit) {
        nout = collect(cx, &oc, mi->ret, "(*bext_o)", "output", false, "  ", 0);
    }
    bxc_emit_printf(c, "static int %s_bext_out(void *bext_p, bext_ext_slot *bext_s) {\n", e);
    if (nout) {
        if (!mi->ret_tensor) bxc_emit_printf(c, "  %s *bext_o = bext_p;\n", mi->ret_ctype);
        bxc_emit_puts(c, "  int bext_n = 0;\n");
        bxc_emit_append(c, &oc);
        bxc_emit_puts(c, "  return bext_n;\n}\n");
    } else {
        bxc_emit_puts(c, "  (void)bext_p;\n  (void)bext_s;\n  return 0;\n}\n");
    }
    bxc_emit_buf_free(&oc);
    if (nin > BEXT_EXT_MAX_SLOTS || nout > BEXT_EXT_MAX_SLOTS)   /* the checker's E0710 */
        bxc_emit_internal_error(cx, fn->span, "more than %d tensors in a method's %s", BEXT_EXT_MAX_SLOTS,
                                nin > BEXT_EXT_MAX_SLOTS ? "arguments" : "output");

    /* invoke: call an implementation with the struct's values */
    const char *args = "";
    for (uint32_t i = 0; i < mi->nparams; i++) {
        const param_info *p = &mi->params[i];
        bool ptr = !p->is_tensor && p->borrowed;
        args = bxc_arena_printf(cx->a, "%s%s%sbext_a->%s", args, i ? ", " : "", ptr ? "&" : "", p->name);
    }
    if (!mi->ret_tensor && !mi->ret_unit)
        args = bxc_arena_printf(cx->a, "%s%s(%s *)bext_out", args, mi->nparams ? ", " : "", mi->ret_ctype);
    bxc_emit_printf(c, "typedef %s(*%s_bext_fn)(%s);\n", ret_decl(mi), e, mi->cparams);
    bxc_emit_printf(c, "static bool %s_bext_invoke(bext_ext_fn bext_fn, void *bext_p, void *bext_out) {\n", e);
    bxc_emit_printf(c, "  struct %s_bext_args *bext_a = bext_p;\n", e);
    if (mi->ret_tensor)
        bxc_emit_printf(c, "  bext_tensor *bext_r = ((%s_bext_fn)bext_fn)(%s);\n  *(bext_tensor **)bext_out = bext_r;\n",
                        e, args);
    else
        bxc_emit_printf(c, "  bool bext_r = ((%s_bext_fn)bext_fn)(%s);\n%s", e, args,
                        mi->ret_unit ? "  (void)bext_out;\n" : "");
    /* owned values were consumed by the implementation */
    for (uint32_t i = 0; i < mi->nparams; i++) {
        const param_info *p = &mi->params[i];
        if (p->borrowed || !bxc_emit_type_has_tensors(p->type)) continue;
        if (p->is_tensor) bxc_emit_printf(c, "  bext_a->%s = NULL;\n", p->name);
        else bxc_emit_printf(c, "  memset(&bext_a->%s, 0, sizeof bext_a->%s);\n", p->name, p->name);
    }
    if (!mi->nparams) bxc_emit_puts(c, "  (void)bext_a;\n");
    bxc_emit_printf(c, "  return %s;\n}\n", mi->ret_tensor ? "bext_r != NULL" : "bext_r");

    /* hash / encode / decode, scalars, meta (emit_ext.c) */
    bxc_emit_buf members = {0};
    bxc_emit_ext_members(cx, e, mi->what, mi->params, mi->nparams, mi->ret, meta, &members);

    /* the descriptor */
    const char *id = fn->method->op_id;
    bxc_emit_printf(c, "static const bext_ext_method %s_bext_m = {\n", e);
    bxc_emit_printf(c, "  .trait = %s,\n  .method = %s,\n  .id = %s,\n  .what = %s,\n  .listed = %s,\n",
                    bxc_emit_cstring(cx->a, ti->name), bxc_emit_cstring(cx->a, fn->name.name),
                    bxc_emit_cstring(cx->a, id), bxc_emit_cstring(cx->a, mi->what),
                    bxc_emit_cstring(cx->a, ti->listed));
    bxc_emit_puts(c, "  .have = 0u\n");
    const listed_sel *only = NULL;
    for (uint32_t k = 0; k < ti->nsels; k++) {
        const listed_sel *ls = &ti->sels[k];
        if (!ls->info->backend) continue;
        if (!only) only = ls;
        bxc_emit_printf(c, "#if %s\n          | 1u << %s\n#endif\n", impl_cond(cx, ls), ls->info->backend);
    }
    bxc_emit_puts(c, "  ,\n");
    for (uint32_t k = 0; k < ti->nsels; k++) {
        const listed_sel *ls = &ti->sels[k];
        if (!ls->info->backend || ls->info->runtime_arm) continue;
        bxc_emit_printf(c, "#if %s\n  .impl[%s] = (bext_ext_fn)%s_%s,\n#endif\n", impl_cond(cx, ls), ls->info->backend, e,
                        ls->info->suffix);
    }
    if (has_default) bxc_emit_printf(c, "  .fallback = (bext_ext_fn)%s_bext_default,\n", e);

    for (uint32_t k = 0; k < ti->nsels; k++) {
        const listed_sel *ls = &ti->sels[k];
        if (!ls->info->backend) continue;
        bxc_emit_printf(c, "#if !defined(%s)\n  .why[%s] = \"is listed, but this runtime has no such backend\",\n",
                        ls->info->have, ls->info->backend);
        if (ls->cond_c)
            bxc_emit_printf(c, "#elif !(%s)\n  .why[%s] = %s,\n", ls->cond_c, ls->info->backend,
                            bxc_emit_cstring(cx->a, bxc_arena_printf(cx->a,
                                                                     "is listed as `%s: %s`, and that "
                                                                     "condition is off in this build",
                                                                     ls->info->name, ls->cond_text)));
        bxc_emit_puts(c, "#endif\n");
    }
    bxc_emit_puts(c, "  .layers = 0u\n");
    for (uint32_t k = 0; k < ti->nsels; k++) {
        const listed_sel *ls = &ti->sels[k];
        if (!ls->info->layer) continue;
        bxc_emit_printf(c, "#if %s\n          | 1u << %s\n#endif\n", impl_cond(cx, ls), ls->info->layer);
    }
    bxc_emit_puts(c, "  ,\n");
    for (uint32_t k = 0; k < ti->nsels; k++) {
        const listed_sel *ls = &ti->sels[k];
        if (!ls->info->layer || ls->info->runtime_arm) continue;
        bxc_emit_printf(c, "#if %s\n  .layer_impl[%s] = (bext_ext_fn)%s_%s%s,\n#endif\n", impl_cond(cx, ls),
                        ls->info->layer, e, user_arm(ls, bw) ? "" : "bext_", ls->info->suffix);
    }
    bxc_emit_printf(c, "  .only_backend = %s,\n", only ? only->info->backend : "0");
    bxc_emit_printf(c, "  .args_size = sizeof(struct %s_bext_args),\n", e);
    bxc_emit_printf(c, "  .out_size = %s,\n  .out_tensor = %s,\n",
                    mi->ret_tensor ? "sizeof(bext_tensor *)"
                    : mi->ret_unit ? "0"
                                   : bxc_arena_printf(cx->a, "sizeof(%s)", mi->ret_ctype),
                    mi->ret_tensor ? "true" : "false");
    bxc_emit_printf(c, "  .in_slots = %s_bext_in,\n  .out_slots = %s_bext_out,\n  .invoke = %s_bext_invoke,\n", e, e,
                    e);
    bxc_emit_append(c, &members);
    bxc_emit_buf_free(&members);
    bxc_emit_puts(c, "};\n");
}

/* The entry point: packs the arguments into a call (retaining borrowed
 * tensors: the call owns one reference of each) and dispatches it. */
static void emit_entry(bxc_emit_ctx *cx, const method_info *mi) {
    bxc_emit_buf *c = &cx->code_c;
    const char *e = mi->entry;
    bxc_emit_printf(c, "%s%s(%s) {\n", ret_decl(mi), e, mi->cparams);
    bxc_emit_printf(c, "  struct %s_bext_args bext_a;\n  memset(&bext_a, 0, sizeof bext_a);\n", e);
    for (uint32_t i = 0; i < mi->nparams; i++) {
        const param_info *p = &mi->params[i];
        if (p->is_tensor) {
            bxc_emit_printf(c, p->borrowed ? "  bext_a.%s = bext_retain(%s);\n" : "  bext_a.%s = %s;\n", p->name,
                            p->name);
        } else if (!p->borrowed) {
            bxc_emit_printf(c, "  bext_a.%s = %s;\n", p->name, p->name);
        } else if (bxc_emit_type_has_tensors(p->type)) {
            bxc_emit_ctype *ct = bxc_emit_register_type(cx, p->type);
            bxc_emit_printf(c, "  bext_a.%s = %s_retain(%s);\n", p->name, ct ? ct->fn_prefix : "?", p->name);
        } else {
            bxc_emit_printf(c, "  bext_a.%s = *%s;\n", p->name, p->name);
        }
    }
    if (mi->ret_tensor) {
        bxc_emit_printf(c, "  bext_tensor *bext_r = NULL;\n  bext_ext_call bext_c = {&%s_bext_m, &bext_a, &bext_r};\n"
                           "  bext_ext_dispatch(&bext_c);\n  return bext_r;\n}\n",
                        e);
    } else if (mi->ret_unit) {
        bxc_emit_printf(c, "  char bext_none = 0;\n  bext_ext_call bext_c = {&%s_bext_m, &bext_a, &bext_none};\n"
                           "  return bext_ext_dispatch(&bext_c);\n}\n",
                        e);
    } else {
        bxc_emit_printf(c, "  bext_ext_call bext_c = {&%s_bext_m, &bext_a, bext_out};\n"
                           "  return bext_ext_dispatch(&bext_c);\n}\n",
                        e);
    }
}

static void emit_method(bxc_emit_ctx *cx, const trait_info *ti, const bxc_fn *fn) {
    method_info mi;
    const char *mcond = bxc_emit_cfg_attrs(cx, &fn->attrs);
    if (!method_signature(cx, ti, fn, &mi)) return;
    bool has_default = fn->body != NULL;
    const bxc_attr *bw = backward_attr(ti, fn);
    /* every file-scope name this method produces (emit_names.c) */
    bool named = bxc_emit_claim_fmt(cx, mi.entry, fn->name.span, "the entry point of method `%s`", mi.what, NULL);
    for (uint32_t k = 0; k < ti->nsels; k++) {
        const listed_sel *ls = &ti->sels[k];
        if (!user_arm(ls, bw)) continue;
        named &= bxc_emit_claim_fmt(cx, bxc_arena_join(cx->a, mi.entry, "_", ls->info->suffix, NULL), fn->name.span,
                                    "the %s implementation of method `%s`", ls->info->name, mi.what);
    }
    if (has_default)
        named &= bxc_emit_claim_fmt(cx, bxc_arena_join(cx->a, mi.entry, "_bext_default", NULL), fn->name.span,
                                    "the default body of method `%s`", mi.what, NULL);
    if (bw)
        named &= bxc_emit_claim_fmt(cx, bxc_arena_join(cx->a, mi.entry, "_bext_autodiff", NULL), fn->name.span,
                                    "the generated Autodiff implementation of method `%s`", mi.what, NULL);
    if (!named) return;
    if (cx->plan) {
        /* the names of its metadata functions and scalar encodings */
        bxc_emit_meta_info meta;
        bxc_emit_method_meta(cx, mi.entry, fn->method, mcond, &meta);
        return;
    }
    bxc_emit_buf *h = &cx->protos_h, *c = &cx->code_c;

    /* ---- header ---- */
    bxc_emit_printf(h, "/* ---- %s ---- */\n", mi.what);
    if (mcond) bxc_emit_printf(h, "#if %s\n", mcond);
    bxc_emit_doc(h, fn->doc);
    bxc_emit_printf(h, "/* Entry point: routes to the implementation of the input tensors' device.\n"
                       " * Consumes its owned arguments; %s */\n",
                    mi.ret_tensor ? "NULL + bext_last_error() on failure."
                                  : "false + bext_last_error() on failure (*bext_out zeroed).");
    bxc_emit_printf(h, "%s%s(%s);\n", ret_decl(&mi), mi.entry, mi.cparams);
    bxc_emit_printf(h, "/* Implementations you supply%s (same contract)%s: */\n",
                    has_default ? " — optional: the default body serves a missing one" : "",
                    bw ? "; Autodiff's is generated from #[backward]" : "");
    for (uint32_t k = 0; k < ti->nsels; k++) {
        const listed_sel *ls = &ti->sels[k];
        if (!user_arm(ls, bw)) continue;
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
            if (!user_arm(ls, bw)) continue;
            bxc_emit_printf(c, "#if %s\nextern %s%s_%s(%s) __attribute__((weak));\n#endif\n", impl_cond(cx, ls),
                            ret_decl(&mi), mi.entry, ls->info->suffix, mi.cparams);
        }
        if (!mi.ret_tensor) {   /* the checker's E0702 (check_default.c) */
            bxc_emit_internal_error(cx, fn->span, "a default body without one tensor output");
        } else {
            bxc_emit_default_body(cx, fn, bxc_arena_printf(cx->a, "%s_bext_default", mi.entry), mi.cparams);
        }
    }
    /* the metadata functions first: the descriptor calls those that exist */
    bxc_emit_meta_info meta;
    bxc_emit_method_meta(cx, mi.entry, fn->method, mcond, &meta);
    /* the Autodiff implementation of #[backward]; it calls the entry
     * point, declared in the header */
    bool bw_ok = bw && mi.ret_tensor &&
                 bxc_emit_backward(cx, fn, bw, mi.entry, mi.what, mi.params, mi.nparams, mi.cparams);
    if (bw && !mi.ret_tensor)
        bxc_emit_internal_error(cx, bw->span, "`#[backward]` without one tensor output");   /* E0709 */
    if (bw && !bw_ok) return;
    uint32_t nin = 0;
    emit_descriptor(cx, ti, &mi, fn, has_default, bw, &meta, &nin);
    if (nin == 0) {
        /* No tensor input: the checker allows exactly one backend selector. */
        bool any = false;
        for (uint32_t k = 0; k < ti->nsels; k++) any |= ti->sels[k].info->backend != NULL;
        if (!any) bxc_emit_internal_error(cx, fn->span, "no tensor input and no backend selector");   /* E0604 */
    }
    emit_entry(cx, &mi);
    if (mcond) bxc_emit_printf(c, "#endif /* %s */\n", mi.what);
    bxc_emit_puts(c, "\n");
    /* start-up registration (bext_ext_register), under the same conditions */
    if (mcond) bxc_emit_printf(&cx->register_c, "#if %s\n", mcond);
    bxc_emit_printf(&cx->register_c, "  bext_ext_register(&%s_bext_m);\n", mi.entry);
    if (mcond) bxc_emit_printf(&cx->register_c, "#endif\n");

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
            if (bxc_path_is(it->attrs.items[k]->path, "backend_extension")) be = it->attrs.items[k];
        if (!be) continue;
        trait_info ti;
        memset(&ti, 0, sizeof ti);
        ti.name = it->name.name;
        ti.prefix = bxc_emit_snake(cx->a, it->name.name);
        if (!read_selectors(cx, it, be, &ti)) continue;
        const char *tcond = bxc_emit_cfg_attrs(cx, &it->attrs);
        if (cx->plan) {   /* names only (bxc_emit_check_names) */
            for (uint32_t m = 0; m < it->trait.methods.len; m++) emit_method(cx, &ti, it->trait.methods.items[m]);
            continue;
        }
        if (tcond) {
            bxc_emit_printf(&cx->protos_h, "#if %s\n", tcond);
            bxc_emit_printf(&cx->code_c, "#if %s\n", tcond);
            bxc_emit_printf(&cx->register_c, "#if %s\n", tcond);
        }
        bxc_emit_printf(&cx->protos_h, "/* ==== trait %s: #[backend_extension(%s)] ==== */\n\n", ti.name,
                        bxc_emit_comment_text(cx->a, ti.listed));
        for (uint32_t m = 0; m < it->trait.methods.len; m++) emit_method(cx, &ti, it->trait.methods.items[m]);
        if (tcond) {
            bxc_emit_printf(&cx->protos_h, "#endif /* %s */\n\n", ti.name);
            bxc_emit_printf(&cx->code_c, "#endif /* %s */\n\n", ti.name);
            bxc_emit_printf(&cx->register_c, "#endif\n");
        }
    }
}
