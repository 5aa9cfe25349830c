/* check_limits.c — what the C generator needs of a unit, asked of the
 * generator (the predicates of emit.h, the one statement of each limit)
 * and reported here as located errors, so that a unit the checker accepts
 * always generates: `bextc --check` runs no generator.
 *
 * Three places need it beyond the language's own rules:
 *   - every extension method's signature: parameters the C can name, types
 *     with a C form, at most BEXT_EXT_MAX_SLOTS tensors in and out;
 *   - methods a `#[cfg]` switches off: the checker does not check them as
 *     code (alternatives may share a name), yet their C is generated under
 *     `#if`, so their written types must resolve, their signature must have
 *     a C form and their default body and `#[backward]` formulas must lower;
 *   - the root module's structs and enums, which the header declares;
 *   - the file-scope C names of the whole unit (E1103), formed by the
 *     generator's own naming code in its plan mode (emit.h
 *     bxc_emit_check_names), once the unit checks.
 * The default-body subset itself is check_default.c's. */
#include <bext/ext.h>

#include "check_internal.h"
#include "emit.h"

static const char *param_name(const bxc_param *p) {
    return p->pat && p->pat->kind == BXC_PAT_IDENT ? p->pat->name.name : "_";
}

/* A type with no C form: says which part, when it is a part. */
static void no_c_form(chk_ctx *cx, bxc_span at, const char *what, bxc_type *t, bxc_type *bad) {
    bxc_diag *d;
    if (bxc_type_resolve(t) == bad)
        d = chk_error(cx, CHK_E_NO_C_FORM, at, "%s has type `%s`, which has no C form", what, chk_tn(cx, t));
    else
        d = chk_error(cx, CHK_E_NO_C_FORM, at, "%s has type `%s`, whose part `%s` has no C form", what,
                      chk_tn(cx, t), chk_tn(cx, bad));
    if (bad->kind == BXC_TYPE_GENERIC)
        chk_help(cx, d, "generated C functions are not generic: use a concrete type (type parameters may only "
                        "appear in tensor types)");
    else if (bad->kind == BXC_TYPE_REF)
        chk_help(cx, d, "return the value itself: outputs are handed to the caller");
    else
        chk_help(cx, d, "values that cross the generated C API are made of numbers, `bool`, Shape, DType, "
                        "TensorSpec, tensors, and structs, enums and tuples of those");
}

void chk_method_c_form(chk_ctx *cx, const bxc_fn *fn, bxc_type *const *ptypes, bxc_type *ret) {
    uint32_t slots = 0;
    for (uint32_t i = 0; i < fn->params.len; i++) {
        const bxc_param *p = fn->params.items[i];
        if (p->is_self || !p->type) continue;   /* E0601, or a syntax error */
        if (!bxc_emit_param_named(p)) {
            bxc_diag *d = chk_error(cx, CHK_E_NO_C_FORM, p->pat ? p->pat->span : p->span,
                                    "parameter %u of `%s` has no name: the generated C function names each "
                                    "argument", i + 1, fn->name.name);
            chk_help(cx, d, "give it a name, as in `x: %s`; `_` and patterns name no C argument",
                     ptypes[i] ? chk_tn(cx, ptypes[i]) : "T");
        }
        if (!ptypes[i]) continue;
        bxc_type *bad = bxc_emit_no_c_form(ptypes[i]);
        if (bad)
            no_c_form(cx, p->type->span, bxc_arena_printf(cx->arena, "argument `%s`", param_name(p)), ptypes[i], bad);
        slots += bxc_emit_tensor_slots(ptypes[i]);
        if (slots > (1u << 30)) slots = 1u << 30;   /* saturate: no overflow, still over the limit */
    }
    bxc_span rs = fn->ret ? fn->ret->span : fn->name.span;
    if (slots > BEXT_EXT_MAX_SLOTS) {
        bxc_diag *d = chk_error(cx, CHK_E_NO_C_FORM, fn->name.span,
                                "the arguments of `%s` hold %u tensors, and a method takes at most %d",
                                fn->name.name, slots, BEXT_EXT_MAX_SLOTS);
        chk_help(cx, d, "split the method, or pass fewer tensors (each argument's tensors count, "
                        "inside extension values too)");
    }
    if (!ret) return;
    bxc_type *bad = bxc_emit_output_no_c_form(ret);
    if (bad) no_c_form(cx, rs, bxc_arena_printf(cx->arena, "the output of `%s`", fn->name.name), ret, bad);
    uint32_t out = bxc_emit_tensor_slots(ret);
    if (out > BEXT_EXT_MAX_SLOTS) {
        bxc_diag *d = chk_error(cx, CHK_E_NO_C_FORM, rs, "the output of `%s` holds %u tensors, and a method "
                                "returns at most %d", fn->name.name, out, BEXT_EXT_MAX_SLOTS);
        chk_help(cx, d, "split the method into several");
    }
}

static void switched_off(chk_ctx *cx, chk_module *cm, bxc_fn *fn) {
    uint32_t before = cx->diags->errors;
    bxc_type **ps = bxc_arena_alloc(cx->arena, (fn->params.len + 1) * sizeof *ps);
    for (uint32_t i = 0; i < fn->params.len; i++) {
        bxc_param *p = fn->params.items[i];
        ps[i] = p->type && !p->is_self ? chk_resolve_tyexpr(cx, cm, p->type, &fn->generics) : NULL;
        if (p->pat && ps[i]) p->pat->ty = ps[i];   /* what bxc_body_lowerable reads */
    }
    bxc_type *ret = fn->ret ? chk_resolve_tyexpr(cx, cm, fn->ret, &fn->generics) : NULL;
    chk_method_c_form(cx, fn, ps, ret);
    if (cx->diags->errors != before) return;
    /* `#[backward]` and default bodies need one tensor output (E0702, E0709) */
    bool tensor_out = ret && bxc_type_resolve(ret)->kind == BXC_TYPE_TENSOR;
    if (fn->body) chk_default_body_subset(cx, fn, ret);
    for (uint32_t i = 0; i < fn->attrs.len; i++) {
        bxc_attr *a = fn->attrs.items[i];
        if (!chk_attr_is(a, "backward") || bxc_attr_is_backward_manual(a)) continue;
        if (!tensor_out) {
            bxc_diag *d = chk_error(cx, CHK_E_BACKWARD_SHAPE, a->span,
                                    "bextc cannot generate the gradient of `%s` from `#[backward]`: it returns `%s`",
                                    fn->name.name, ret ? chk_tn(cx, ret) : "()");
            chk_help(cx, d, "`#[backward]` supports methods returning one `FloatTensor`; write the `_autodiff` "
                            "implementation in C instead (bext_autodiff_record)");
            break;
        }
        for (uint32_t k = 0; k < a->args.len; k++)
            if (a->args.items[k]->kind == BXC_ATTR_ARG_ASSIGN && a->args.items[k]->value)
                chk_backward_formula_subset(cx, fn, a->args.items[k]->value);
        break;
    }
}

void chk_method_switched_off(chk_ctx *cx, chk_module *cm, bxc_fn *fn) {
    uint32_t before = cx->diags->errors;
    switched_off(cx, cm, fn);
    if (cx->diags->errors == before) return;
    /* say why a method the features leave out is checked at all */
    bxc_diag *last = cx->diags->count ? &cx->diags->items[cx->diags->count - 1] : NULL;
    if (last && last->severity == BXC_SEV_ERROR)
        chk_note(cx, last, fn->name.span,
                 "`%s` is switched off by its `#[cfg]` for these features, but bextc still generates its C "
                 "(under `#if`), which needs this", fn->name.name);
}

void chk_root_types_c_form(chk_ctx *cx) {
    if (!cx->unit->nmodules || !cx->nmods) return;
    chk_table *t = &cx->mods[0]->table;
    for (uint32_t k = 0; k < t->norder; k++) {
        chk_symbol *s = t->order[k];
        if (s->kind != CHK_SYM_TYPE || !s->item || !s->type) continue;
        bxc_type *ty = bxc_type_resolve(s->type);
        if ((ty->kind != BXC_TYPE_STRUCT && ty->kind != BXC_TYPE_ENUM) || !ty->decl->resolved) continue;
        const bxc_type_decl *d = ty->decl;
        for (uint32_t i = 0; i < d->nfields; i++) {
            bxc_type *bad = bxc_emit_no_c_form(d->fields[i].type);
            if (bad)
                no_c_form(cx, d->fields[i].span,
                          bxc_arena_printf(cx->arena, "field `%s` of `%s`",
                                           d->fields[i].name ? d->fields[i].name : "?", d->name),
                          d->fields[i].type, bad);
        }
        for (uint32_t v = 0; v < d->nvariants; v++)
            for (uint32_t i = 0; i < d->variants[v].nfields; i++) {
                const bxc_type_field *f = &d->variants[v].fields[i];
                bxc_type *bad = bxc_emit_no_c_form(f->type);
                if (bad)
                    no_c_form(cx, f->span,
                              bxc_arena_printf(cx->arena, "a field of `%s::%s`", d->name, d->variants[v].name),
                              f->type, bad);
            }
    }
}

void chk_c_names(chk_ctx *cx) {
    if (!cx->unit->nmodules) return;
    bxc_emit_check_names(cx->unit);
}
