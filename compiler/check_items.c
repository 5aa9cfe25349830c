/* check_items.c — names and types of items (language.md §1, §2).
 *
 * Symbols: every module has one table holding its own items (structs,
 * enums, aliases, helper fns, traits), the `NameMetadata` companions that
 * `#[extension_type(fusion)]` generates, and what its `use`s import.
 * Types and values share the table: a name means one thing per module.
 *
 * Types as written (bxc_tyexpr) resolve to bxc_type here: builtins
 * (tensors with their `<Self>` / `<B>` arguments ignored, scalars, Shape,
 * DType, TensorSpec), declared structs/enums, aliases (resolved away,
 * cycles reported), tuples and references. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_internal.h"
#include "emit.h"

/* ---- tables ---------------------------------------------------------------- */

static uint32_t hash_name(const char *s) {
    uint32_t h = 2166136261u;   /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h % CHK_BUCKETS;
}

static chk_entry *table_get(chk_table *t, const char *name) {
    for (chk_entry *e = t->buckets[hash_name(name)]; e; e = e->next)
        if (strcmp(e->name, name) == 0) return e;
    return NULL;
}

void chk_table_put(chk_ctx *cx, chk_table *t, const char *name, chk_symbol *s) {
    chk_entry *e = bxc_arena_alloc(cx->arena, sizeof *e);
    uint32_t h = hash_name(name);
    e->name = name;
    e->sym = s;
    e->next = t->buckets[h];
    t->buckets[h] = e;
}

chk_symbol *chk_lookup(chk_module *cm, const char *name) {
    if (!cm) return NULL;
    chk_entry *e = table_get(&cm->table, name);
    return e ? e->sym : NULL;
}

static void table_order_push(chk_ctx *cx, chk_table *t, chk_symbol *s) {
    if (t->norder == t->caporder) {
        uint32_t nc = t->caporder ? t->caporder * 2 : 16;
        chk_symbol **no = bxc_arena_alloc(cx->arena, nc * sizeof *no);
        if (t->norder) memcpy(no, t->order, t->norder * sizeof *no);
        t->order = no;
        t->caporder = nc;
    }
    t->order[t->norder++] = s;
}

const char **chk_names_of(chk_ctx *cx, chk_module *cm, int kind_mask, uint32_t *n) {
    uint32_t cap = 16, len = 0;
    const char **out = bxc_arena_alloc(cx->arena, cap * sizeof *out);
    if (kind_mask & (1 << CHK_SYM_TYPE))
        for (uint32_t i = 0; i < bxc_builtin_type_count; i++) {
            if (len == cap) {
                const char **no = bxc_arena_alloc(cx->arena, cap * 2 * sizeof *no);
                memcpy(no, out, len * sizeof *no);
                out = no;
                cap *= 2;
            }
            out[len++] = bxc_builtin_types[i].name;
        }
    if (cm)
        for (uint32_t b = 0; b < CHK_BUCKETS; b++)
            for (chk_entry *e = cm->table.buckets[b]; e; e = e->next) {
                int k = e->sym->kind == CHK_SYM_ALIAS ? CHK_SYM_TYPE : (int)e->sym->kind;
                if (!(kind_mask & (1 << k))) continue;
                if (len == cap) {
                    const char **no = bxc_arena_alloc(cx->arena, cap * 2 * sizeof *no);
                    memcpy(no, out, len * sizeof *no);
                    out = no;
                    cap *= 2;
                }
                out[len++] = e->name;
            }
    *n = len;
    return out;
}

/* ---- collection ------------------------------------------------------------ */

static chk_symbol *new_symbol(chk_ctx *cx, chk_module *cm, const char *name, chk_sym_kind kind,
                              bxc_item *it, bxc_span span) {
    chk_symbol *s = bxc_arena_alloc(cx->arena, sizeof *s);
    s->name = name;
    s->kind = kind;
    s->item = it;
    s->module = cm->mod;
    s->span = span;
    return s;
}

/* Adds `s` under its name unless the module already defines it. */
static bool define(chk_ctx *cx, chk_module *cm, chk_symbol *s) {
    chk_symbol *old = chk_lookup(cm, s->name);
    if (old) {
        bxc_diag *d = chk_error(cx, CHK_E_DUPLICATE, s->span, "`%s` is defined twice", s->name);
        if (old->item || old->span.file != BXC_NO_FILE)
            chk_note(cx, d, old->span, old->item ? "first defined here"
                                                 : "generated here by `#[extension_type(fusion)]`");
        return false;
    }
    chk_table_put(cx, &cm->table, s->name, s);
    table_order_push(cx, &cm->table, s);
    return true;
}

static bxc_attr_site site_of(const bxc_item *it) {
    switch (it->kind) {
    case BXC_ITEM_USE: return BXC_SITE_USE;
    case BXC_ITEM_TYPE_ALIAS: return BXC_SITE_ALIAS;
    case BXC_ITEM_STRUCT: return BXC_SITE_STRUCT;
    case BXC_ITEM_ENUM: return BXC_SITE_ENUM;
    case BXC_ITEM_FN: return BXC_SITE_FN;
    case BXC_ITEM_TRAIT: return BXC_SITE_TRAIT;
    default: return BXC_SITE_IMPL;
    }
}

static void collect_item(chk_ctx *cx, chk_module *cm, bxc_item *it) {
    if (it->kind == BXC_ITEM_ERROR || (it->kind == BXC_ITEM_FN && !it->fn)) return;
    chk_attrs_placement(cx, &it->attrs, site_of(it));
    if (it->kind == BXC_ITEM_FN && it->fn && it->fn->attrs.items != it->attrs.items)
        chk_attrs_placement(cx, &it->fn->attrs, BXC_SITE_FN);
    if (!chk_cfg_active(cx, &it->attrs)) return;
    switch (it->kind) {
    case BXC_ITEM_STRUCT:
    case BXC_ITEM_ENUM: {
        bxc_type_decl *d = bxc_arena_alloc(cx->arena, sizeof *d);
        d->name = it->name.name;
        d->is_enum = it->kind == BXC_ITEM_ENUM;
        d->is_tuple_struct = it->kind == BXC_ITEM_STRUCT && it->struct_.is_tuple;
        d->item = it;
        d->module = cm->mod;
        d->span = it->name.span;
        d->is_extension = chk_derives_extension(&it->attrs);
        chk_symbol *s = new_symbol(cx, cm, it->name.name, CHK_SYM_TYPE, it, it->name.span);
        s->type = bxc_type_decl_type(cx->arena, d);
        define(cx, cm, s);
        if (chk_has_fusion_companion(&it->attrs)) {
            bxc_type_decl *md = bxc_arena_alloc(cx->arena, sizeof *md);
            md->name = bxc_arena_printf(cx->arena, "%sMetadata", it->name.name);
            md->is_enum = d->is_enum;
            md->is_tuple_struct = d->is_tuple_struct;
            md->module = cm->mod;
            md->span = it->name.span;
            md->metadata_of = s->type;
            chk_symbol *ms = new_symbol(cx, cm, md->name, CHK_SYM_TYPE, NULL, it->name.span);
            ms->type = bxc_type_decl_type(cx->arena, md);
            if (define(cx, cm, ms)) d->metadata = ms->type;
        }
        break;
    }
    case BXC_ITEM_TYPE_ALIAS: {
        chk_symbol *s = new_symbol(cx, cm, it->name.name, CHK_SYM_ALIAS, it, it->name.span);
        s->fusion_scalar = chk_has_fusion_scalar(&it->attrs);
        define(cx, cm, s);
        break;
    }
    case BXC_ITEM_FN: {
        chk_symbol *s = new_symbol(cx, cm, it->fn->name.name, CHK_SYM_FN, it, it->fn->name.span);
        s->is_cube = chk_find_attr(&it->attrs, "cube") != NULL ||
                     chk_find_attr(&it->fn->attrs, "cube") != NULL;
        define(cx, cm, s);
        break;
    }
    case BXC_ITEM_TRAIT: {
        chk_symbol *s = new_symbol(cx, cm, it->name.name, CHK_SYM_TRAIT, it, it->name.span);
        define(cx, cm, s);
        break;
    }
    default:
        break;   /* `use`: next pass; `impl`: kernel implementations (§8) */
    }
}

void chk_collect_module(chk_ctx *cx, chk_module *cm) {
    bxc_item_list *items = &cm->mod->ast->items;
    for (uint32_t i = 0; i < items->len; i++) collect_item(cx, cm, items->items[i]);
}

/* ---- imports -------------------------------------------------------------- */

static void import_one(chk_ctx *cx, chk_module *cm, chk_module *from, bxc_ident name,
                       const char *modname) {
    chk_symbol *s = chk_lookup(from, name.name);
    if (!s) {
        const char **cands;
        uint32_t n;
        cands = chk_names_of(cx, from, ~0 & ~(1 << CHK_SYM_TYPE), &n);
        /* chk_names_of with the TYPE bit adds builtins; collect types apart */
        uint32_t nt;
        const char **tc = chk_names_of(cx, from, 1 << CHK_SYM_TYPE, &nt);
        bxc_diag *d = chk_error(cx, CHK_E_IMPORT, name.span, "module `%s` has no item `%s`",
                                modname, name.name);
        const char *near = chk_nearest(name.name, cands, n);
        if (!near) near = chk_nearest(name.name, tc, nt);
        if (near) chk_help(cx, d, "did you mean `%s`?", near);
        return;
    }
    chk_symbol *old = chk_lookup(cm, name.name);
    if (old == s) return;
    if (old) {
        bxc_diag *d = chk_error(cx, CHK_E_DUPLICATE, name.span,
                                "`%s` is imported but also defined in this module", name.name);
        chk_note(cx, d, old->span, "defined here");
        return;
    }
    chk_table_put(cx, &cm->table, s->name, s);
    /* an extension type brings its generated companion along */
    if (s->kind == CHK_SYM_TYPE && s->type->decl->metadata) {
        const char *mn = s->type->decl->metadata->decl->name;
        chk_symbol *ms = chk_lookup(from, mn);
        if (ms && !chk_lookup(cm, mn)) chk_table_put(cx, &cm->table, mn, ms);
    }
}

/* The imports of one (cfg-active) `use` whose module the loader found. */
static void resolve_use(chk_ctx *cx, chk_module *cm, bxc_item *it) {
    chk_module *from = chk_module_of(cx, it->use_.module);
    if (!from || from == cm) return;
    const char *modname = it->use_.module->name;
    switch (it->use_.kind) {
    case BXC_USE_SINGLE:
    case BXC_USE_GROUP:
        for (uint32_t k = 0; k < it->use_.names.len; k++)
            import_one(cx, cm, from, it->use_.names.items[k], modname);
        break;
    case BXC_USE_GLOB:
        for (uint32_t k = 0; k < from->table.norder; k++) {
            chk_symbol *s = from->table.order[k];
            if (!chk_lookup(cm, s->name)) chk_table_put(cx, &cm->table, s->name, s);
        }
        break;
    case BXC_USE_MODULE:
        break;   /* qualified paths find the module through the unit */
    }
}

void chk_resolve_imports(chk_ctx *cx, chk_module *cm) {
    bxc_item_list *items = &cm->mod->ast->items;
    for (uint32_t i = 0; i < items->len; i++) {
        bxc_item *it = items->items[i];
        if (it->kind != BXC_ITEM_USE || !it->use_.module) continue;  /* loader reported */
        if (!chk_cfg_active(cx, &it->attrs)) continue;
        resolve_use(cx, cm, it);
    }
}

/* A `use` typed at the REPL prompt: the loader never sees it, so it may
 * only name a module the session's unit already loaded (what the loaded
 * files use, the standard library's included); anything else is a located
 * error rather than an import silently dropped. */
static void repl_use(chk_ctx *cx, chk_module *cm, bxc_item *it) {
    const bxc_path *mp = it->use_.module_path;
    if (!mp || !mp->segs.len || !chk_cfg_active(cx, &it->attrs)) return;
    if (!it->use_.module) {
        const char *name = mp->segs.items[0].name;
        for (uint32_t i = 1; i < mp->segs.len; i++)
            name = bxc_arena_printf(cx->arena, "%s::%s", name, mp->segs.items[i].name);
        bxc_module *m = cx->unit ? bxc_unit_find_module(cx->unit, name) : NULL;
        if (!m || !chk_module_of(cx, m)) {
            bxc_diag *d = chk_error(cx, CHK_E_IMPORT, mp->span,
                                    "module `%s` is not loaded in this session", name);
            chk_help(cx, d, "`use` at the prompt imports from the modules the loaded files use: "
                            "put `use %s::{...};` in a file and `:load` it", name);
            return;
        }
        it->use_.module = m;
    }
    resolve_use(cx, cm, it);
}

/* `a::b::name` (or `b::name` after `use a::b;`): the symbol, or NULL. */
chk_symbol *chk_lookup_path(chk_ctx *cx, chk_module *cm, const bxc_path *p) {
    if (p->segs.len == 1) return chk_lookup(cm, p->segs.items[0].name);
    chk_module *target = chk_path_module(cx, cm, p);
    return target ? chk_lookup(target, p->segs.items[p->segs.len - 1].name) : NULL;
}

chk_module *chk_path_module(chk_ctx *cx, chk_module *cm, const bxc_path *p) {
    uint32_t n = p->segs.len;
    if (n < 2) return NULL;
    char buf[512];
    size_t len = 0;
    for (uint32_t i = 0; i + 1 < n; i++) {
        int w = snprintf(buf + len, sizeof buf - len, "%s%s", i ? "::" : "",
                         p->segs.items[i].name);
        if (w < 0 || (size_t)w >= sizeof buf - len) return NULL;
        len += (size_t)w;
    }
    bxc_module *m = bxc_unit_find_module(cx->unit, buf);
    if (!m && n == 2 && cm->mod->ast) {
        /* `use std::shape;` then `shape::broadcast` */
        bxc_item_list *items = &cm->mod->ast->items;
        for (uint32_t i = 0; i < items->len && !m; i++) {
            bxc_item *it = items->items[i];
            if (it->kind != BXC_ITEM_USE || it->use_.kind != BXC_USE_MODULE || !it->use_.module)
                continue;
            const bxc_path *mp = it->use_.module_path;
            if (mp && mp->segs.len &&
                strcmp(mp->segs.items[mp->segs.len - 1].name, p->segs.items[0].name) == 0)
                m = it->use_.module;
        }
    }
    return chk_module_of(cx, m);
}

/* ---- type expressions ------------------------------------------------------- */

static bool generic_named(const bxc_generic_list *g, const char *name) {
    if (!g) return false;
    for (uint32_t i = 0; i < g->len; i++)
        if (strcmp(g->items[i]->name.name, name) == 0) return true;
    return false;
}

static bool builtin_type(const char *n, bxc_type **out, bool *takes_args) {
    const bxc_builtin_type *bt = bxc_builtin_type_find(n);
    *takes_args = false;
    if (!bt) return false;
    *out = bxc_type_builtin(bt);
    *takes_args = bt->kind == BXC_TYPE_TENSOR;   /* `<Self>` / `<B>` carry no meaning */
    return true;
}

static bxc_type *resolve_alias(chk_ctx *cx, chk_symbol *s);

static bxc_type *resolve_path_type(chk_ctx *cx, chk_module *cm, bxc_tyexpr *ty,
                                   const bxc_generic_list *generics) {
    bxc_path *p = ty->path;
    uint32_t n = p->segs.len;
    const char *name = p->segs.items[n - 1].name;
    bxc_type *t = NULL;
    bool takes_args = false;
    if (n == 1 && generic_named(generics, name)) {
        t = bxc_type_generic(cx->arena, name);
    } else if (n == 1 && strcmp(name, "Self") == 0) {
        /* inside an impl block `Self` is its type; elsewhere (trait
         * methods' `FloatTensor<Self>`) an opaque parameter */
        t = cx->self_type ? cx->self_type : bxc_type_generic(cx->arena, name);
    } else if (n == 1 && builtin_type(name, &t, &takes_args)) {
        if (!cx->in_kernel && t->kind == BXC_TYPE_FLOAT && t->float_kind >= BXC_F16) {
            bxc_diag *d = chk_error(cx, CHK_E_BAD_TYPE, p->span,
                                    "`%s` is a kernel type: only `#[cube]` functions compute with it", name);
            chk_help(cx, d, "write `f32` here; an f16 or bf16 tensor keeps its dtype");
            return bxc_type_error();
        }
    } else {
        chk_symbol *s = chk_lookup_path(cx, cm, p);
        if (s && s->kind == CHK_SYM_TYPE) {
            t = s->type;
            takes_args = true;   /* `Counted<Self>`: generics carry no meaning */
        } else if (s && s->kind == CHK_SYM_ALIAS) {
            t = resolve_alias(cx, s);
        } else if (s) {
            chk_error(cx, CHK_E_UNKNOWN_TYPE, p->span, "`%s` is a %s, not a type", name,
                      s->kind == CHK_SYM_FN ? "function" : "trait");
            return bxc_type_error();
        } else {
            uint32_t nc;
            const char **cands = chk_names_of(cx, cm, 1 << CHK_SYM_TYPE, &nc);
            bxc_diag *d = chk_error(cx, CHK_E_UNKNOWN_TYPE, p->span, "unknown type `%s`", name);
            const char *near = chk_nearest(name, cands, nc);
            if (near) chk_help(cx, d, "did you mean `%s`?", near);
            else if (strcmp(name, "Tensor") == 0)
                chk_help(cx, d, "write `FloatTensor`, `IntTensor`, `BoolTensor` or `QuantizedTensor`");
            return bxc_type_error();
        }
    }
    for (uint32_t i = 0; i < ty->args.len; i++) {
        if (!takes_args) {
            chk_error(cx, CHK_E_TYPE_ARGS, ty->args.items[i]->span, "`%s` takes no type arguments",
                      name);
            break;
        }
        /* still resolve them so typos there are reported (Self/B are fine) */
        bxc_tyexpr *a = ty->args.items[i];
        if (a->kind == BXC_TY_PATH && a->path->segs.len == 1) {
            const char *an = a->path->segs.items[0].name;
            if (strcmp(an, "Self") == 0 || generic_named(generics, an) ||
                strcmp(an, "B") == 0) {
                a->ty = bxc_type_generic(cx->arena, an);
                continue;
            }
        }
        chk_resolve_tyexpr(cx, cm, a, generics);
    }
    return t;
}

bxc_type *chk_resolve_tyexpr(chk_ctx *cx, chk_module *cm, bxc_tyexpr *ty,
                             const bxc_generic_list *generics) {
    if (!ty) return bxc_type_unit();
    bxc_type *t = bxc_type_error();
    switch (ty->kind) {
    case BXC_TY_PATH:
        t = resolve_path_type(cx, cm, ty, generics);
        break;
    case BXC_TY_REF: {
        bxc_type *in = chk_resolve_tyexpr(cx, cm, ty->inner, generics);
        t = bxc_type_is_error(in) ? in : bxc_type_ref(cx->arena, in, ty->is_mut);
        break;
    }
    case BXC_TY_TUPLE: {
        uint32_t n = ty->elems.len;
        bxc_type **el = bxc_arena_alloc(cx->arena, (n ? n : 1) * sizeof *el);
        bool bad = false;
        for (uint32_t i = 0; i < n; i++) {
            el[i] = chk_resolve_tyexpr(cx, cm, ty->elems.items[i], generics);
            bad |= bxc_type_is_error(el[i]);
        }
        t = bad ? bxc_type_error() : bxc_type_tuple(cx->arena, el, n);
        break;
    }
    case BXC_TY_ARRAY:
    case BXC_TY_SLICE: {
        bxc_diag *d = chk_error(cx, CHK_E_BAD_TYPE, ty->span,
                                "array and slice types are not part of the language");
        chk_help(cx, d, "use `Shape` for a list of dimensions");
        break;
    }
    default:
        break;
    }
    ty->ty = t;
    return t;
}

chk_symbol *chk_alias_of(chk_module *cm, const bxc_tyexpr *ty) {
    if (!ty || ty->kind != BXC_TY_PATH || ty->path->segs.len != 1) return NULL;
    chk_symbol *s = chk_lookup(cm, ty->path->segs.items[0].name);
    return s && s->kind == CHK_SYM_ALIAS ? s : NULL;
}

static chk_module *module_of_symbol(chk_ctx *cx, chk_symbol *s) {
    return chk_module_of(cx, s->module);
}

static bxc_type *resolve_alias(chk_ctx *cx, chk_symbol *s) {
    if (s->resolved) return s->type;
    if (s->resolving) {
        chk_error(cx, CHK_E_ALIAS_CYCLE, s->span, "type alias `%s` refers to itself", s->name);
        s->type = bxc_type_error();
        s->resolved = true;
        return s->type;
    }
    s->resolving = true;
    bxc_type *t = chk_resolve_tyexpr(cx, module_of_symbol(cx, s), s->item->alias.type,
                                     &s->item->alias.generics);
    s->resolving = false;
    if (!s->resolved) {   /* a cycle may have set it already */
        s->type = t;
        s->resolved = true;
    }
    return s->type;
}

/* ---- structs, enums, companions ------------------------------------------------ */

static void resolve_fields(chk_ctx *cx, chk_module *cm, bxc_type_decl *d,
                           const bxc_field_list *in, const bxc_generic_list *g,
                           bxc_type_field **out, uint32_t *nout) {
    uint32_t n = in->len;
    bxc_type_field *fs = bxc_arena_alloc(cx->arena, (n ? n : 1) * sizeof *fs);
    for (uint32_t i = 0; i < n; i++) {
        bxc_field *f = in->items[i];
        chk_attrs_placement(cx, &f->attrs, BXC_SITE_FIELD);
        fs[i].name = f->name.name;
        fs[i].span = f->name.name ? f->name.span : f->span;
        if (!f->type) {   /* after a syntax error: reported by the parser */
            fs[i].type = bxc_type_error();
            continue;
        }
        fs[i].type = chk_resolve_tyexpr(cx, cm, f->type, g);
        bxc_attr *ext = chk_find_attr(&f->attrs, "extension_type");
        fs[i].is_ext = ext != NULL;
        bxc_type *ft = bxc_type_resolve(fs[i].type);
        const char *fname = f->name.name ? f->name.name : "";
        if (ext && !bxc_type_is_error(ft) && !bxc_type_is_extension(ft)) {
            bxc_diag *dg = chk_error(cx, CHK_E_EXT_TYPE, f->type->span,
                                     "`#[extension_type]` on `%s`, which is not an extension type",
                                     chk_tn(cx, ft));
            if (ft->kind == BXC_TYPE_STRUCT || ft->kind == BXC_TYPE_ENUM)
                chk_help(cx, dg, "derive it: `#[derive(ExtensionType)]` on `%s`", ft->decl->name);
            else
                chk_help(cx, dg, "remove `#[extension_type]`: the field is an ordinary value");
        } else if (!ext && bxc_type_is_extension(ft) && d->is_extension) {
            bxc_diag *dg = chk_error(cx, CHK_E_EXT_TYPE, f->type->span,
                                     "field%s%s%s has extension type `%s`", *fname ? " `" : "",
                                     fname, *fname ? "`" : "", chk_tn(cx, ft));
            chk_help(cx, dg, "mark it `#[extension_type]` so its tensors are routed");
        }
        /* (a type marked `#[extension_type]` without the derive is
         * reported once, by chk_type_attrs) */
        if (!d->is_extension && !d->metadata_of && bxc_type_has_tensors(ft) &&
            !chk_find_attr(&d->item->attrs, "extension_type")) {
            bxc_diag *dg = chk_error(cx, CHK_E_EXT_TYPE, f->type->span,
                                     "`%s` holds tensors but does not derive `ExtensionType`",
                                     d->name);
            chk_help(cx, dg, "add `#[derive(ExtensionType)]` to `%s`", d->name);
        }
    }
    *out = fs;
    *nout = n;
}

static void resolve_decl(chk_ctx *cx, chk_module *cm, chk_symbol *s) {
    bxc_type_decl *d = s->type->decl;
    if (d->resolved || !d->item) return;
    d->resolved = true;
    bxc_item *it = d->item;
    if (it->kind == BXC_ITEM_STRUCT) {
        resolve_fields(cx, cm, d, &it->struct_.fields, &it->struct_.generics, &d->fields,
                       &d->nfields);
        return;
    }
    uint32_t n = it->enum_.variants.len;
    d->variants = bxc_arena_alloc(cx->arena, (n ? n : 1) * sizeof *d->variants);
    d->nvariants = n;
    for (uint32_t i = 0; i < n; i++) {
        bxc_variant *v = it->enum_.variants.items[i];
        chk_attrs_placement(cx, &v->attrs, BXC_SITE_VARIANT);
        bxc_type_variant *tv = &d->variants[i];
        tv->name = v->name.name;
        tv->span = v->name.span;
        tv->shape = v->kind == BXC_VARIANT_UNIT ? BXC_VSHAPE_UNIT
                    : v->kind == BXC_VARIANT_TUPLE ? BXC_VSHAPE_TUPLE : BXC_VSHAPE_STRUCT;
        for (uint32_t k = 0; k < i; k++)
            if (strcmp(d->variants[k].name, tv->name) == 0) {
                bxc_diag *dg = chk_error(cx, CHK_E_DUPLICATE, tv->span,
                                         "variant `%s` is defined twice", tv->name);
                chk_note(cx, dg, d->variants[k].span, "first defined here");
            }
        resolve_fields(cx, cm, d, &v->fields, &it->enum_.generics, &tv->fields, &tv->nfields);
    }
}

/* Mirror of a field type in the metadata companion: tensors become
 * TensorSpec, marked extension fields their companion, tuples map their
 * elements, everything else is kept. */
static bxc_type *mirror_field(chk_ctx *cx, bxc_type_field *f, bxc_type *t, bxc_type_decl *owner) {
    t = bxc_type_resolve(t);
    if (t->kind == BXC_TYPE_TENSOR) return bxc_type_spec();
    if (t->kind == BXC_TYPE_REF) return mirror_field(cx, f, t->ref.inner, owner);
    if (bxc_type_is_extension(t)) {
        if (t->decl->metadata) return t->decl->metadata;
        bxc_diag *d = chk_error(cx, CHK_E_NO_METADATA, f->span,
                                "`%s` needs metadata for its field of type `%s`, which has none",
                                owner->name, t->decl->name);
        chk_help(cx, d, "add `#[extension_type(fusion)]` to `%s`", t->decl->name);
        return bxc_type_error();
    }
    if (t->kind == BXC_TYPE_TUPLE) {
        bxc_type **el = bxc_arena_alloc(cx->arena, t->tuple.n * sizeof *el);
        for (uint32_t i = 0; i < t->tuple.n; i++) el[i] = mirror_field(cx, f, t->tuple.elems[i], owner);
        return bxc_type_tuple(cx->arena, el, t->tuple.n);
    }
    return t;
}

static void mirror_fields(chk_ctx *cx, bxc_type_field *in, uint32_t n, bxc_type_decl *owner,
                          bxc_type_field **out) {
    bxc_type_field *fs = bxc_arena_alloc(cx->arena, (n ? n : 1) * sizeof *fs);
    for (uint32_t i = 0; i < n; i++) {
        fs[i] = in[i];
        fs[i].is_ext = false;
        fs[i].type = mirror_field(cx, &in[i], in[i].type, owner);
    }
    *out = fs;
}

static void build_companion(chk_ctx *cx, bxc_type_decl *d) {
    bxc_type_decl *md = d->metadata ? d->metadata->decl : NULL;
    if (!md || md->resolved) return;
    md->resolved = true;
    if (!d->is_enum) {
        mirror_fields(cx, d->fields, d->nfields, d, &md->fields);
        md->nfields = d->nfields;
        return;
    }
    md->nvariants = d->nvariants;
    md->variants = bxc_arena_alloc(cx->arena, (d->nvariants ? d->nvariants : 1) * sizeof *md->variants);
    for (uint32_t i = 0; i < d->nvariants; i++) {
        md->variants[i] = d->variants[i];
        mirror_fields(cx, d->variants[i].fields, d->variants[i].nfields, d, &md->variants[i].fields);
    }
}

/* ---- types that contain themselves ---------------------------------------------
 * Structs, enums and tuples are laid out by value (the C generator emits
 * them as plain C structs / tagged unions), so a type holding itself, even
 * through other types or references (which the generator also lowers by
 * value), has no finite size. Report it here, once per cycle, so that
 * `--check` rejects what `-o` would fail on. */

/* The generator's limit (emit.h).  The cycle search also stops this deep
 * (a cycle longer than that is reported as nesting too deep instead), which
 * bounds its recursion and its cost on a long chain of types. */
#define NEST_LIMIT BXC_EMIT_MAX_TYPE_NESTING

typedef struct cyc_walk {
    chk_ctx *cx;
    bxc_type_decl *target;
    bxc_type_decl **seen;    /* decls already searched (each once) */
    uint32_t nseen, capseen;
    const char **steps;      /* "field: Type" from target down to here */
    uint32_t nsteps, capsteps;
    bxc_span first;          /* the target's field that starts the cycle */
} cyc_walk;

static void cyc_push_decl(cyc_walk *w, bxc_type_decl *d) {
    if (w->nseen == w->capseen) {
        uint32_t nc = w->capseen ? w->capseen * 2 : 16;
        bxc_type_decl **n = bxc_arena_alloc(w->cx->arena, nc * sizeof *n);
        if (w->nseen) memcpy(n, w->seen, w->nseen * sizeof *n);
        w->seen = n;
        w->capseen = nc;
    }
    w->seen[w->nseen++] = d;
}

static void cyc_push_step(cyc_walk *w, const char *step) {
    if (w->nsteps == w->capsteps) {
        uint32_t nc = w->capsteps ? w->capsteps * 2 : 16;
        const char **n = bxc_arena_alloc(w->cx->arena, nc * sizeof *n);
        if (w->nsteps) memcpy(n, w->steps, w->nsteps * sizeof *n);
        w->steps = n;
        w->capsteps = nc;
    }
    w->steps[w->nsteps++] = step;
}

static bool cyc_decl(cyc_walk *w, bxc_type_decl *d);

/* `label` names where `t` sits: `next`, `B.0`, `pair.1`. */
static bool cyc_type(cyc_walk *w, bxc_type *t, const char *label) {
    if (!t) return false;
    t = bxc_type_strip_refs(bxc_type_resolve(t));
    if (t->kind == BXC_TYPE_TUPLE) {
        for (uint32_t i = 0; i < t->tuple.n; i++)
            if (cyc_type(w, t->tuple.elems[i], bxc_arena_printf(w->cx->arena, "%s.%u", label, i)))
                return true;
        return false;
    }
    if (t->kind != BXC_TYPE_STRUCT && t->kind != BXC_TYPE_ENUM) return false;
    if (w->nsteps > NEST_LIMIT) return false;
    bxc_type_decl *d = t->decl;
    cyc_push_step(w, bxc_arena_printf(w->cx->arena, "%s: %s", label, d->name));
    if (d == w->target) return true;
    for (uint32_t i = 0; i < w->nseen; i++)
        if (w->seen[i] == d) {
            w->nsteps--;
            return false;
        }
    cyc_push_decl(w, d);
    if (cyc_decl(w, d)) return true;
    w->nsteps--;
    return false;
}

static const char *cyc_field_label(chk_ctx *cx, const char *variant, const bxc_type_field *f,
                                   uint32_t i) {
    const char *f_name = f->name ? f->name : bxc_arena_printf(cx->arena, "%u", i);
    return variant ? bxc_arena_printf(cx->arena, "%s.%s", variant, f_name) : f_name;
}

static bool cyc_decl(cyc_walk *w, bxc_type_decl *d) {
    bool top = w->nsteps == 0;
    for (uint32_t i = 0; i < d->nfields; i++) {
        if (cyc_type(w, d->fields[i].type, cyc_field_label(w->cx, NULL, &d->fields[i], i))) {
            if (top) w->first = d->fields[i].span;
            return true;
        }
    }
    for (uint32_t v = 0; v < d->nvariants; v++)
        for (uint32_t i = 0; i < d->variants[v].nfields; i++) {
            bxc_type_field *f = &d->variants[v].fields[i];
            if (cyc_type(w, f->type, cyc_field_label(w->cx, d->variants[v].name, f, i))) {
                if (top) w->first = f->span;
                return true;
            }
        }
    return false;
}

/* The C generator also bounds how deep types nest (64 levels, counting
 * each struct, enum and tuple): a deeper acyclic chain is rejected here so
 * that `--check` never accepts what `-o` refuses (NEST_LIMIT, above). */

typedef struct nest_memo {
    bxc_type_decl **decls;
    uint32_t *depth;          /* UINT32_MAX while being computed (a cycle) */
    uint32_t n, cap;
} nest_memo;

static uint32_t nest_decl(chk_ctx *cx, nest_memo *m, bxc_type_decl *d, uint32_t level);

static uint32_t nest_type(chk_ctx *cx, nest_memo *m, bxc_type *t, uint32_t level) {
    if (!t) return 0;
    t = bxc_type_strip_refs(bxc_type_resolve(t));
    if (t->kind == BXC_TYPE_TUPLE) {
        uint32_t best = 0;
        for (uint32_t i = 0; i < t->tuple.n && best <= NEST_LIMIT; i++) {
            uint32_t k = nest_type(cx, m, t->tuple.elems[i], level + 1);
            if (k > best) best = k;
        }
        return best + 1;
    }
    if (t->kind == BXC_TYPE_STRUCT || t->kind == BXC_TYPE_ENUM) return nest_decl(cx, m, t->decl, level);
    return 0;
}

static uint32_t nest_decl(chk_ctx *cx, nest_memo *m, bxc_type_decl *d, uint32_t level) {
    /* past the limit the exact depth does not matter: stop (bounded stack) */
    if (level > NEST_LIMIT) return NEST_LIMIT + 1;
    for (uint32_t i = 0; i < m->n; i++)
        if (m->decls[i] == d) return m->depth[i] == UINT32_MAX ? 0 : m->depth[i];
    if (m->n == m->cap) {
        uint32_t nc = m->cap ? m->cap * 2 : 16;
        bxc_type_decl **nd = bxc_arena_alloc(cx->arena, nc * sizeof *nd);
        uint32_t *ndp = bxc_arena_alloc(cx->arena, nc * sizeof *ndp);
        if (m->n) {
            memcpy(nd, m->decls, m->n * sizeof *nd);
            memcpy(ndp, m->depth, m->n * sizeof *ndp);
        }
        m->decls = nd;
        m->depth = ndp;
        m->cap = nc;
    }
    uint32_t at = m->n++;
    m->decls[at] = d;
    m->depth[at] = UINT32_MAX;
    uint32_t best = 0;
    for (uint32_t i = 0; i < d->nfields && best <= NEST_LIMIT; i++) {
        uint32_t k = nest_type(cx, m, d->fields[i].type, level + 1);
        if (k > best) best = k;
    }
    for (uint32_t v = 0; v < d->nvariants && best <= NEST_LIMIT; v++)
        for (uint32_t i = 0; i < d->variants[v].nfields && best <= NEST_LIMIT; i++) {
            uint32_t k = nest_type(cx, m, d->variants[v].fields[i].type, level + 1);
            if (k > best) best = k;
        }
    /* A result cut short by `level` understates nothing that matters: the
     * cut means the root being measured is too deep, and the caller stops
     * at its first report, before any other root reads this entry. */
    m->depth[at] = best + 1;
    return best + 1;
}

/* Checks the declared types among `syms` (reported: decls already named in
 * a reported cycle, so a P <-> Q cycle is reported on P only). */
static void check_self_containing(chk_ctx *cx, chk_symbol **syms, uint32_t n) {
    bxc_type_decl **reported = NULL;
    uint32_t nreported = 0, capreported = 0;
    for (uint32_t k = 0; k < n; k++) {
        chk_symbol *s = syms[k];
        if (s->kind != CHK_SYM_TYPE || !s->item || !s->type || !s->type->decl) continue;
        bxc_type_decl *d = s->type->decl;
        if (!d->item || !d->resolved) continue;
        bool skip = false;
        for (uint32_t i = 0; i < nreported; i++) skip |= reported[i] == d;
        if (skip) continue;
        cyc_walk w = {.cx = cx, .target = d};
        cyc_push_decl(&w, d);
        if (!cyc_decl(&w, d)) continue;
        const char *path = d->name;
        for (uint32_t i = 0; i < w.nsteps; i++)
            path = bxc_arena_printf(cx->arena, "%s -> %s", path, w.steps[i]);
        bxc_diag *dg = chk_error(cx, CHK_E_BAD_TYPE, d->span, "`%s` contains itself by value (%s)",
                                 d->name, path);
        chk_note(cx, dg, w.first, "the cycle starts here");
        chk_help(cx, dg, "structs, enums and tuples are stored inline; a type cannot hold itself");
        /* every decl on the path is part of this cycle */
        for (uint32_t i = 0; i < w.nseen; i++) {
            if (nreported == capreported) {
                uint32_t nc = capreported ? capreported * 2 : 16;
                bxc_type_decl **nr = bxc_arena_alloc(cx->arena, nc * sizeof *nr);
                if (nreported) memcpy(nr, reported, nreported * sizeof *nr);
                reported = nr;
                capreported = nc;
            }
            reported[nreported++] = w.seen[i];
        }
    }
    if (nreported) return;   /* nesting depth is meaningless around a cycle */
    nest_memo memo = {0};
    for (uint32_t k = 0; k < n; k++) {
        chk_symbol *s = syms[k];
        if (s->kind != CHK_SYM_TYPE || !s->item || !s->type || !s->type->decl) continue;
        bxc_type_decl *d = s->type->decl;
        if (!d->item || !d->resolved) continue;
        if (nest_decl(cx, &memo, d, 0) <= NEST_LIMIT) continue;
        bxc_diag *dg = chk_error(cx, CHK_E_BAD_TYPE, d->span,
                                 "`%s` nests structs, enums and tuples more than %d levels deep",
                                 d->name, NEST_LIMIT);
        chk_help(cx, dg, "the C generator's limit; flatten the data");
        return;   /* one report: the types it contains are shallower */
    }
}

void chk_resolve_types(chk_ctx *cx, chk_module *cm) {
    chk_table *t = &cm->table;
    for (uint32_t i = 0; i < t->norder; i++) {
        chk_symbol *s = t->order[i];
        if (s->kind == CHK_SYM_ALIAS) resolve_alias(cx, s);
        else if (s->kind == CHK_SYM_TYPE && s->item) resolve_decl(cx, cm, s);
    }
    for (uint32_t i = 0; i < t->norder; i++) {
        chk_symbol *s = t->order[i];
        if ((s->kind == CHK_SYM_TYPE || s->kind == CHK_SYM_ALIAS) && s->item)
            chk_type_attrs(cx, cm, s->item, s);
    }
    for (uint32_t i = 0; i < t->norder; i++) {
        chk_symbol *s = t->order[i];
        if (s->kind == CHK_SYM_TYPE && s->item) build_companion(cx, s->type->decl);
    }
    check_self_containing(cx, t->order, t->norder);
}

/* ---- helper fns --------------------------------------------------------------- */

bxc_type *chk_fn_signature(chk_ctx *cx, chk_symbol *s) {
    if (s->resolved) return s->type;
    s->resolved = true;
    if (s->is_cube) {
        /* kernels (§8) are not metadata functions */
        s->type = bxc_type_error();
        return s->type;
    }
    bxc_fn *fn = s->item->fn;
    chk_module *cm = module_of_symbol(cx, s);
    uint32_t n = fn->params.len;
    bxc_type **ps = bxc_arena_alloc(cx->arena, (n ? n : 1) * sizeof *ps);
    for (uint32_t i = 0; i < n; i++) {
        bxc_param *p = fn->params.items[i];
        if (p->is_self) {
            chk_error(cx, CHK_E_RECEIVER, p->span, "helper fn `%s` cannot take `self`", s->name);
            ps[i] = bxc_type_error();
            continue;
        }
        ps[i] = chk_resolve_tyexpr(cx, cm, p->type, &fn->generics);
    }
    bxc_type *ret = fn->ret ? chk_resolve_tyexpr(cx, cm, fn->ret, &fn->generics) : bxc_type_unit();
    s->type = bxc_type_fn(cx->arena, ps, n, ret);
    return s->type;
}

void chk_fn_body(chk_ctx *cx, chk_module *cm, bxc_fn *fn, bxc_type *fnty, chk_mode mode,
                 const char *what) {
    if (!fn->body) return;
    fnty = bxc_type_resolve(fnty);
    chk_fn f;
    chk_fn_init(&f, cx, cm, mode);
    f.what = what;
    f.ret = fnty->kind == BXC_TYPE_FN ? fnty->fn.ret : bxc_type_error();
    chk_scope_push(&f);
    for (uint32_t i = 0; i < fn->params.len; i++) {
        bxc_param *p = fn->params.items[i];
        bxc_type *pt = fnty->kind == BXC_TYPE_FN && i < fnty->fn.nparams ? fnty->fn.params[i]
                                                                        : bxc_type_error();
        if (p->pat) chk_bind_pat(&f, p->pat, pt);
    }
    chk_block(&f, fn->body, f.ret);
    chk_zonk_block(cx, fn->body);
    for (uint32_t i = 0; i < fn->params.len; i++) {
        bxc_pat *pp = fn->params.items[i]->pat;
        if (pp && pp->ty) pp->ty = bxc_type_zonk(cx->arena, pp->ty);
    }
}

static void check_helper_fn(chk_ctx *cx, chk_module *cm, chk_symbol *s) {
    bxc_fn *fn = s->item->fn;
    for (uint32_t i = 0; i < fn->params.len; i++) {
        bxc_param *p = fn->params.items[i];
        if (p->attrs.len) {
            bxc_diag *d = chk_error(cx, CHK_E_MISPLACED_ATTR, p->attrs.items[0]->span,
                                    "attributes on helper fn parameters have no meaning");
            chk_help(cx, d, "`#[extension_type]` and `#[fusion(scalar)]` go on extension methods");
        }
    }
    bxc_type *t = chk_fn_signature(cx, s);
    if (!fn->body) {
        chk_error(cx, CHK_E_BAD_EXPR, fn->name.span, "helper fn `%s` has no body", s->name);
        return;
    }
    chk_fn_body(cx, cm, fn, t, CHK_MODE_META,
                bxc_arena_printf(cx->arena, "helper fn `%s`", s->name));
}

void chk_check_fns(chk_ctx *cx, chk_module *cm) {
    chk_table *t = &cm->table;
    for (uint32_t i = 0; i < t->norder; i++) {
        chk_symbol *s = t->order[i];
        if (s->kind != CHK_SYM_FN || s->is_cube || !s->item) continue;
        check_helper_fn(cx, cm, s);
    }
}

/* Removes `name` from a table (REPL redefinitions). */
static void table_remove(chk_table *t, const char *name) {
    for (chk_entry **pe = &t->buckets[hash_name(name)]; *pe; pe = &(*pe)->next)
        if (strcmp((*pe)->name, name) == 0) {
            *pe = (*pe)->next;
            return;
        }
}

void chk_add_item(chk_ctx *cx, chk_module *cm, bxc_item *it) {
    uint32_t first = cm->table.norder;
    /* An item typed at the prompt replaces an older one of the same name,
     * as the interpreter searches REPL items first. */
    const char *name = it->kind == BXC_ITEM_FN && it->fn ? it->fn->name.name
                       : it->kind == BXC_ITEM_USE || it->kind == BXC_ITEM_IMPL ? NULL
                                                                              : it->name.name;
    if (name) {
        table_remove(&cm->table, name);
        if (it->kind == BXC_ITEM_STRUCT || it->kind == BXC_ITEM_ENUM) {
            char mn[256];
            snprintf(mn, sizeof mn, "%sMetadata", name);
            table_remove(&cm->table, mn);
        }
    }
    collect_item(cx, cm, it);
    if (it->kind == BXC_ITEM_USE) {
        repl_use(cx, cm, it);
        return;
    }
    for (uint32_t i = first; i < cm->table.norder; i++) {
        chk_symbol *s = cm->table.order[i];
        if (s->kind == CHK_SYM_ALIAS) resolve_alias(cx, s);
        else if (s->kind == CHK_SYM_TYPE && s->item) resolve_decl(cx, cm, s);
    }
    check_self_containing(cx, cm->table.order + first, cm->table.norder - first);
    for (uint32_t i = first; i < cm->table.norder; i++) {
        chk_symbol *s = cm->table.order[i];
        if ((s->kind == CHK_SYM_TYPE || s->kind == CHK_SYM_ALIAS) && s->item)
            chk_type_attrs(cx, cm, s->item, s);
        if (s->kind == CHK_SYM_TYPE && s->item) build_companion(cx, s->type->decl);
        if (s->kind == CHK_SYM_FN && !s->is_cube) check_helper_fn(cx, cm, s);
    }
    if (it->kind == BXC_ITEM_TRAIT && chk_cfg_active(cx, &it->attrs)) chk_trait(cx, cm, it);
    if (it->kind == BXC_ITEM_IMPL && chk_cfg_active(cx, &it->attrs)) chk_add_impl(cx, cm, it);
}
