/* navigate.c — textDocument/definition (from the checker's resolution
 * record: a local, fn, impl fn, struct, enum variant or field, in this file,
 * another module or the stdlib; a `use`'s module path opens the module)
 * and textDocument/documentSymbol (the root file's items and members). */
#include "lsp.h"

#include <string.h>

#include "types.h"

/* Where the record of `e` says its target is declared, or a span with no
 * file: a local's binding (the name in its `let`, parameter, closure
 * parameter or `match` pattern) comes from the record too (res.decl); the
 * server resolves nothing itself. */
static bxc_span target_of(const bxc_expr *e) {
    const bxc_res *r = &e->res;
    const bxc_type *t = r->type;
    bxc_type_decl *d = t && (t->kind == BXC_TYPE_STRUCT || t->kind == BXC_TYPE_ENUM) ? t->decl : NULL;
    switch (r->kind) {
    case BXC_RES_LOCAL:
        return r->decl;
    case BXC_RES_FN:
    case BXC_RES_IMPL_FN:
        if (r->fn) return r->fn->name.span;
        break;
    case BXC_RES_STRUCT:
        if (d) return d->span;
        break;
    case BXC_RES_VARIANT:
        if (d && r->index < d->nvariants) return d->variants[r->index].span;
        break;
    case BXC_RES_FIELD:
        if (d && r->index < d->nfields) return d->fields[r->index].span;
        break;
    default:
        break;
    }
    return bxc_span_none();
}

static bool holds(bxc_span s, uint32_t off) {
    return off >= s.offset && off - s.offset <= s.length;
}

cJSON *lsp_definition(lsp_server *s, const cJSON *params, lsp_error *err) {
    lsp_doc *d = lsp_doc_of(s, params, err);
    uint32_t off;
    if (!d || !lsp_offset_of(s, d, params, &off, err)) return NULL;
    const bxc_file *f = bxc_doc_ast(d->doc);
    bxc_node_at at;
    if (!f || !bxc_ast_node_at(f, off, &at)) return cJSON_CreateNull();
    const bxc_unit *u = &d->doc->unit;
    bxc_span target = bxc_span_none();
    if (at.expr) {
        target = target_of(at.expr);
    } else if (at.item && at.item->kind == BXC_ITEM_USE && at.item->use_.module &&
               at.item->use_.module_path && holds(at.item->use_.module_path->span, off)) {
        target = bxc_span_make(at.item->use_.module->file_id, 0, 0);
    }
    if (target.file == BXC_NO_FILE) return cJSON_CreateNull();
    cJSON *loc = lsp_location(s, u, target);
    return loc ? loc : lsp_fail(err, LSP_INTERNAL_ERROR, "out of memory");
}

/* ---- documentSymbol --------------------------------------------------------- */

/* LSP SymbolKind values. */
enum { SK_CLASS = 5, SK_METHOD = 6, SK_FIELD = 8, SK_ENUM = 10, SK_INTERFACE = 11,
       SK_FUNCTION = 12, SK_STRUCT = 23, SK_ENUM_MEMBER = 22, SK_TYPE_PARAMETER = 26 };

static cJSON *symbol(const lsp_server *s, const bxc_unit *u, const char *name, int kind,
                     bxc_span range, bxc_span sel) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", name && *name ? name : "?");
    cJSON_AddNumberToObject(o, "kind", kind);
    /* selectionRange must lie inside range */
    if (sel.file == BXC_NO_FILE || sel.offset < range.offset ||
        sel.offset + sel.length > range.offset + range.length)
        sel = range;
    cJSON_AddItemToObject(o, "range", lsp_range(s, u, range));
    cJSON_AddItemToObject(o, "selectionRange", lsp_range(s, u, sel));
    return o;
}

static void add_fns(const lsp_server *s, const bxc_unit *u, cJSON *kids, const bxc_fn_list *l) {
    for (uint32_t i = 0; i < l->len; i++) {
        const bxc_fn *fn = l->items[i];
        if (fn && fn->name.name) cJSON_AddItemToArray(kids, symbol(s, u, fn->name.name, SK_METHOD, fn->span, fn->name.span));
    }
}

static void add_fields(const lsp_server *s, const bxc_unit *u, cJSON *kids, const bxc_field_list *l) {
    for (uint32_t i = 0; i < l->len; i++) {
        const bxc_field *fl = l->items[i];
        if (fl && fl->name.name) cJSON_AddItemToArray(kids, symbol(s, u, fl->name.name, SK_FIELD, fl->span, fl->name.span));
    }
}

cJSON *lsp_document_symbol(lsp_server *s, const cJSON *params, lsp_error *err) {
    lsp_doc *d = lsp_doc_of(s, params, err);
    if (!d) return NULL;
    const bxc_file *f = bxc_doc_ast(d->doc);
    const bxc_unit *u = &d->doc->unit;
    cJSON *list = cJSON_CreateArray();
    for (uint32_t i = 0; f && i < f->items.len; i++) {
        const bxc_item *it = f->items.items[i];
        int kind;
        const char *name = it->name.name;
        bxc_span sel = it->name.span;
        char impl_name[160];
        switch (it->kind) {
        case BXC_ITEM_FN: kind = SK_FUNCTION; break;
        case BXC_ITEM_STRUCT: kind = SK_STRUCT; break;
        case BXC_ITEM_ENUM: kind = SK_ENUM; break;
        case BXC_ITEM_TRAIT: kind = SK_INTERFACE; break;
        case BXC_ITEM_TYPE_ALIAS: kind = SK_TYPE_PARAMETER; break;
        case BXC_ITEM_IMPL: {
            /* `impl Trait for Type` as written */
            kind = SK_CLASS;
            const bxc_tyexpr *ty = it->impl.self_ty;
            if (!ty) continue;
            const bxc_source *src = bxc_sources_get(&u->sources, ty->span.file);
            const char *text = src ? bxc_source_text(src, ty->span) : "?";
            snprintf(impl_name, sizeof impl_name, "impl %.*s", src ? (int)(ty->span.length > 140 ? 140 : ty->span.length) : 1, text);
            name = impl_name;
            sel = ty->span;
            break;
        }
        default: continue;   /* use, errors */
        }
        if (!name) continue;
        cJSON *o = symbol(s, u, name, kind, it->span, sel);
        cJSON *kids = cJSON_AddArrayToObject(o, "children");
        if (it->kind == BXC_ITEM_TRAIT) add_fns(s, u, kids, &it->trait.methods);
        if (it->kind == BXC_ITEM_IMPL) add_fns(s, u, kids, &it->impl.methods);
        if (it->kind == BXC_ITEM_STRUCT) add_fields(s, u, kids, &it->struct_.fields);
        if (it->kind == BXC_ITEM_ENUM)
            for (uint32_t k = 0; k < it->enum_.variants.len; k++) {
                const bxc_variant *v = it->enum_.variants.items[k];
                if (v && v->name.name)
                    cJSON_AddItemToArray(kids, symbol(s, u, v->name.name, SK_ENUM_MEMBER, v->span, v->name.span));
            }
        cJSON_AddItemToArray(list, o);
    }
    return list ? list : lsp_fail(err, LSP_INTERNAL_ERROR, "out of memory");
}
