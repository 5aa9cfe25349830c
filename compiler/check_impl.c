/* check_impl.c — inherent `impl Type { fn ... }` blocks (language.md §4, §7).
 *
 * Methods on plain structs and enums (and on extension types) are part of
 * the metadata language: `strategy.to_code()` in a
 * `#[fusion(scalar = ...)]` encoding, `Mode::default_code()` in a helper.
 * All impl blocks of one type share one namespace, whichever module holds
 * them, so a method is found from the receiver's declaration.
 *
 * Two passes, because helper fn bodies may call methods and methods may
 * call helpers: chk_impl_signatures resolves every self type and signature
 * (before helper bodies), chk_impl_bodies types the bodies afterwards.
 * `Self` inside an impl is its type (cx->self_type while resolving and
 * typing).  Receivers are `self` (a copy) and `&self`; `&mut self` is
 * rejected because metadata methods act on copies.
 *
 * Trait impls: `impl Trait for Cube` (and the other backend selectors)
 * are kernel implementations (§8), parsed and not checked yet, as before;
 * any other `impl Trait for Type` is reported as not supported yet. */
#include <stdio.h>

#include "check_internal.h"

static bool names_selector(const bxc_tyexpr *t) {
    if (!t || t->kind != BXC_TY_PATH || !t->path || t->path->segs.len != 1) return false;
    for (int i = 0; i < CHK_SEL_COUNT; i++)
        if (strcmp(t->path->segs.items[0].name, chk_selector_names[i]) == 0) return true;
    return false;
}

chk_method *chk_find_method(chk_ctx *cx, bxc_type *t, const char *name) {
    t = bxc_type_resolve(t);
    if (!t || (t->kind != BXC_TYPE_STRUCT && t->kind != BXC_TYPE_ENUM)) return NULL;
    for (chk_method *m = cx->methods; m; m = m->next)
        if (m->decl == t->decl && strcmp(m->name, name) == 0) return m;
    return NULL;
}

/* Whether parameter `p` is the receiver: `self`, `&self`, `&mut self`, or
 * `self: T` written with a type. */
static bool is_receiver(const bxc_param *p) {
    return p->is_self || (p->pat && p->pat->kind == BXC_PAT_IDENT && p->pat->name.name &&
                          strcmp(p->pat->name.name, "self") == 0);
}

/* The FN type of one impl fn (receiver first).  cx->self_type is set. */
static bxc_type *method_signature(chk_ctx *cx, chk_module *cm, bxc_type *self_ty,
                                  const char *tname, bxc_fn *fn, bool *has_self) {
    uint32_t n = fn->params.len;
    bxc_type **ps = bxc_arena_alloc(cx->arena, (n ? n : 1) * sizeof *ps);
    *has_self = false;
    for (uint32_t i = 0; i < n; i++) {
        bxc_param *p = fn->params.items[i];
        if (p->attrs.len) {
            bxc_diag *d = chk_error(cx, CHK_E_MISPLACED_ATTR, p->attrs.items[0]->span,
                                    "attributes on method parameters have no meaning");
            chk_help(cx, d, "`#[extension_type]` and `#[fusion(scalar)]` go on extension methods");
        }
        if (!is_receiver(p)) {
            ps[i] = chk_resolve_tyexpr(cx, cm, p->type, &fn->generics);
            continue;
        }
        if (i != 0) {
            chk_error(cx, CHK_E_RECEIVER, p->span,
                      "`self` must be the first parameter of `%s::%s`", tname, fn->name.name);
            ps[i] = bxc_type_error();
            continue;
        }
        *has_self = true;
        if (p->is_self && p->self_mut) {
            bxc_diag *d = chk_error(cx, CHK_E_RECEIVER, p->span,
                                    "`&mut self` is not supported: `%s::%s` acts on a copy of its receiver",
                                    tname, fn->name.name);
            chk_help(cx, d, "take `&self` (or `self`) and return the new value");
            ps[i] = bxc_type_error();
        } else if (p->is_self) {
            ps[i] = p->self_ref ? bxc_type_ref(cx->arena, self_ty, false) : self_ty;
        } else {
            /* `self: Self` / `self: &Self` */
            bxc_type *t = chk_resolve_tyexpr(cx, cm, p->type, &fn->generics);
            if (!bxc_type_is_error(t) && !bxc_type_equal(bxc_type_strip_refs(t), self_ty)) {
                chk_error(cx, CHK_E_RECEIVER, p->type->span,
                          "expected `Self` or `&Self` for `self`, found `%s`", chk_tn(cx, t));
                t = bxc_type_error();
            }
            ps[i] = t;
        }
    }
    bxc_type *ret = fn->ret ? chk_resolve_tyexpr(cx, cm, fn->ret, &fn->generics) : bxc_type_unit();
    return bxc_type_fn(cx->arena, ps, n, ret);
}

/* Registers the methods of one inherent impl block. `replace`: REPL input
 * redefines a method of the same name instead of duplicating it. */
static uint32_t impl_signatures(chk_ctx *cx, chk_module *cm, bxc_item *it, bool replace) {
    uint32_t added = 0;
    if (it->impl.trait_ty) {
        if (names_selector(it->impl.self_ty)) return 0;   /* kernels (§8) */
        const char *tr = it->impl.trait_ty->kind == BXC_TY_PATH && it->impl.trait_ty->path &&
                                 it->impl.trait_ty->path->segs.len
                             ? it->impl.trait_ty->path->segs.items[it->impl.trait_ty->path->segs.len - 1].name
                             : "?";
        bxc_diag *d = chk_error(cx, CHK_E_IMPL, it->impl.trait_ty->span,
                                "trait impls are not supported yet (`impl %s for ...`)", tr);
        chk_help(cx, d, "write the methods in an inherent `impl Type { ... }` block; backend "
                        "implementations are `impl Trait for Cube` (§8) or C code");
        return 0;
    }
    if (!it->impl.self_ty) return 0;   /* after a syntax error */
    bxc_type *self_ty = chk_resolve_tyexpr(cx, cm, it->impl.self_ty, &it->impl.generics);
    if (bxc_type_is_error(self_ty)) return 0;   /* unknown type: reported */
    self_ty = bxc_type_resolve(self_ty);
    if (self_ty->kind != BXC_TYPE_STRUCT && self_ty->kind != BXC_TYPE_ENUM) {
        bxc_diag *d = chk_error(cx, CHK_E_IMPL, it->impl.self_ty->span,
                                "`impl` needs a struct or enum declared in a .bext file, found `%s`",
                                chk_tn(cx, self_ty));
        chk_help(cx, d, "write a helper fn taking the value instead");
        return 0;
    }
    const char *tname = self_ty->decl->name;
    cx->self_type = self_ty;
    for (uint32_t i = 0; i < it->impl.methods.len; i++) {
        bxc_fn *fn = it->impl.methods.items[i];
        if (!fn || !fn->name.name) continue;
        chk_attrs_placement(cx, &fn->attrs, BXC_SITE_FN);
        if (!chk_cfg_active(cx, &fn->attrs)) continue;
        if (chk_find_attr(&fn->attrs, "cube")) continue;   /* kernels: §8 */
        chk_method *old = chk_find_method(cx, self_ty, fn->name.name);
        if (old && replace) {
            for (chk_method **pm = &cx->methods; *pm; pm = &(*pm)->next)
                if (*pm == old) {
                    *pm = old->next;
                    break;
                }
            old = NULL;
        }
        if (old) {
            bxc_diag *d = chk_error(cx, CHK_E_DUP_METHOD, fn->name.span,
                                    "duplicate method `%s` on `%s`", fn->name.name, tname);
            chk_note(cx, d, old->fn->name.span, "first defined here");
            continue;
        }
        if (!fn->body) {
            chk_error(cx, CHK_E_BAD_EXPR, fn->name.span, "method `%s::%s` has no body", tname,
                      fn->name.name);
            continue;
        }
        chk_method *m = bxc_arena_alloc(cx->arena, sizeof *m);
        m->decl = self_ty->decl;
        m->name = fn->name.name;
        m->fn = fn;
        m->impl = it;
        m->cm = cm;
        m->self_type = self_ty;
        m->type = method_signature(cx, cm, self_ty, tname, fn, &m->has_self);
        m->next = cx->methods;
        cx->methods = m;
        added++;
    }
    cx->self_type = NULL;
    return added;
}

static void method_body(chk_ctx *cx, chk_method *m) {
    cx->self_type = m->self_type;
    chk_fn_body(cx, m->cm, m->fn, m->type, CHK_MODE_META,
                bxc_arena_printf(cx->arena, "method `%s::%s`", m->decl->name, m->name));
    cx->self_type = NULL;
}

void chk_impl_signatures(chk_ctx *cx, chk_module *cm) {
    bxc_item_list *items = &cm->mod->ast->items;
    for (uint32_t i = 0; i < items->len; i++) {
        bxc_item *it = items->items[i];
        if (it->kind != BXC_ITEM_IMPL || !chk_cfg_active(cx, &it->attrs)) continue;
        impl_signatures(cx, cm, it, false);
    }
}

void chk_impl_bodies(chk_ctx *cx, chk_module *cm) {
    for (chk_method *m = cx->methods; m; m = m->next)
        if (m->cm == cm) method_body(cx, m);
}

void chk_add_impl(chk_ctx *cx, chk_module *cm, bxc_item *it) {
    uint32_t added = impl_signatures(cx, cm, it, true);
    chk_method *m = cx->methods;
    for (uint32_t i = 0; i < added && m; i++, m = m->next) method_body(cx, m);
}
