/* tokens.c — textDocument/semanticTokens/full: names colored by what the
 * checker resolved them to (bxc_expr.res), not by how they look.  A call
 * of a local fn and of a stdlib helper are both functions; `DType::F32`
 * is an enum member of the default library; a field access is a property.
 * Declarations come from the tree.  Keywords, literals and comments are
 * left to the editor's grammar. */
#include "lsp.h"

#include <stdlib.h>
#include <string.h>

/* ORDER: token_types below. */
enum { TT_FUNCTION, TT_METHOD, TT_STRUCT, TT_ENUM, TT_ENUM_MEMBER, TT_PROPERTY,
       TT_VARIABLE, TT_INTERFACE, TT_TYPE, TT_COUNT };
static const char *const token_types[TT_COUNT] = {
    "function", "method", "struct", "enum", "enumMember", "property", "variable", "interface", "type",
};
enum { TM_DECLARATION = 1, TM_DEFAULT_LIBRARY = 2 };
static const char *const token_mods[] = {"declaration", "defaultLibrary"};

cJSON *lsp_token_legend(void) {
    cJSON *l = cJSON_CreateObject();
    cJSON_AddItemToObject(l, "tokenTypes", cJSON_CreateStringArray(token_types, TT_COUNT));
    cJSON_AddItemToObject(l, "tokenModifiers", cJSON_CreateStringArray(token_mods, 2));
    return l;
}

typedef struct tok {
    uint32_t offset, length;
    uint8_t type, mods;
} tok;

typedef struct toks {
    tok *items;
    uint32_t len, cap;
    uint32_t file;          /* only spans of the root file */
    bool failed;
} toks;

static void add(toks *t, bxc_span s, int type, int mods) {
    if (s.file != t->file || !s.length || t->failed) return;
    if (t->len == t->cap) {
        uint32_t nc = t->cap ? t->cap * 2 : 256;
        tok *ni = realloc(t->items, nc * sizeof *ni);
        if (!ni) {
            t->failed = true;
            return;
        }
        t->items = ni;
        t->cap = nc;
    }
    t->items[t->len++] = (tok){s.offset, s.length, (uint8_t)type, (uint8_t)mods};
}

static void add_last(toks *t, const bxc_path *p, int type, int mods) {
    if (p && p->segs.len) add(t, p->segs.items[p->segs.len - 1].span, type, mods);
}

/* `Enum::Variant`, `Type::f`, `DType::F32`: the segment before the last. */
static void add_owner(toks *t, const bxc_path *p, int type, int mods) {
    if (p && p->segs.len >= 2) add(t, p->segs.items[p->segs.len - 2].span, type, mods);
}

static void visit(void *ctx, const bxc_expr *e) {
    toks *t = ctx;
    const bxc_res *r = &e->res;
    switch (e->kind) {
    case BXC_EXPR_PATH:
        switch (r->kind) {
        case BXC_RES_FN: add_last(t, e->path, TT_FUNCTION, 0); break;
        case BXC_RES_IMPL_FN:
            add_owner(t, e->path, TT_STRUCT, 0);
            add_last(t, e->path, TT_METHOD, 0);
            break;
        case BXC_RES_LOCAL: add_last(t, e->path, TT_VARIABLE, 0); break;
        case BXC_RES_VARIANT:
            add_owner(t, e->path, TT_ENUM, 0);
            add_last(t, e->path, TT_ENUM_MEMBER, 0);
            break;
        case BXC_RES_STRUCT: add_last(t, e->path, TT_STRUCT, 0); break;
        case BXC_RES_DTYPE:
            add_owner(t, e->path, TT_TYPE, TM_DEFAULT_LIBRARY);
            add_last(t, e->path, TT_ENUM_MEMBER, TM_DEFAULT_LIBRARY);
            break;
        case BXC_RES_BUILTIN_FN:
            add_owner(t, e->path, TT_TYPE, TM_DEFAULT_LIBRARY);
            add_last(t, e->path, TT_FUNCTION, TM_DEFAULT_LIBRARY);
            break;
        default: break;
        }
        break;
    case BXC_EXPR_METHOD_CALL:
        if (r->kind == BXC_RES_IMPL_FN) add(t, e->method_call.method.span, TT_METHOD, 0);
        else if (r->kind != BXC_RES_NONE) add(t, e->method_call.method.span, TT_METHOD, TM_DEFAULT_LIBRARY);
        break;
    case BXC_EXPR_FIELD:
        if (r->kind == BXC_RES_FIELD || r->kind == BXC_RES_SPEC_FIELD)
            add(t, e->field.name.span, TT_PROPERTY, r->kind == BXC_RES_SPEC_FIELD ? TM_DEFAULT_LIBRARY : 0);
        break;
    case BXC_EXPR_STRUCT:
        if (r->kind == BXC_RES_NONE) break;
        if (r->kind == BXC_RES_VARIANT) {
            add_owner(t, e->struct_lit.path, TT_ENUM, 0);
            add_last(t, e->struct_lit.path, TT_ENUM_MEMBER, 0);
        } else {
            add_last(t, e->struct_lit.path, TT_STRUCT, r->kind == BXC_RES_SPEC ? TM_DEFAULT_LIBRARY : 0);
        }
        for (uint32_t i = 0; i < e->struct_lit.fields.len; i++) {
            const bxc_field_init *f = e->struct_lit.fields.items[i];
            if (f && !f->shorthand) add(t, f->name.span, TT_PROPERTY, 0);
        }
        break;
    default:
        break;
    }
}

static void declare_fns(toks *t, const bxc_fn_list *l) {
    for (uint32_t i = 0; i < l->len; i++)
        if (l->items[i]) add(t, l->items[i]->name.span, TT_METHOD, TM_DECLARATION);
}

static void declarations(toks *t, const bxc_file *f) {
    for (uint32_t i = 0; i < f->items.len; i++) {
        const bxc_item *it = f->items.items[i];
        if (!it) continue;
        switch (it->kind) {
        case BXC_ITEM_FN: add(t, it->name.span, TT_FUNCTION, TM_DECLARATION); break;
        case BXC_ITEM_TYPE_ALIAS: add(t, it->name.span, TT_TYPE, TM_DECLARATION); break;
        case BXC_ITEM_STRUCT:
            add(t, it->name.span, TT_STRUCT, TM_DECLARATION);
            for (uint32_t k = 0; k < it->struct_.fields.len; k++)
                if (it->struct_.fields.items[k])
                    add(t, it->struct_.fields.items[k]->name.span, TT_PROPERTY, TM_DECLARATION);
            break;
        case BXC_ITEM_ENUM:
            add(t, it->name.span, TT_ENUM, TM_DECLARATION);
            for (uint32_t k = 0; k < it->enum_.variants.len; k++)
                if (it->enum_.variants.items[k])
                    add(t, it->enum_.variants.items[k]->name.span, TT_ENUM_MEMBER, TM_DECLARATION);
            break;
        case BXC_ITEM_TRAIT:
            add(t, it->name.span, TT_INTERFACE, TM_DECLARATION);
            declare_fns(t, &it->trait.methods);
            break;
        case BXC_ITEM_IMPL: declare_fns(t, &it->impl.methods); break;
        default: break;
        }
    }
}

static int by_offset(const void *a, const void *b) {
    const tok *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

cJSON *lsp_semantic_tokens(lsp_server *s, const cJSON *params, lsp_error *err) {
    lsp_doc *d = lsp_doc_of(s, params, err);
    if (!d) return NULL;
    const bxc_file *f = bxc_doc_ast(d->doc);
    const bxc_source *src = f ? bxc_sources_get(&d->doc->unit.sources, f->file_id) : NULL;
    toks t = {.file = f ? f->file_id : BXC_NO_FILE};
    if (f) {
        declarations(&t, f);
        bxc_ast_each_expr(f, visit, &t);
    }
    if (t.failed) {
        free(t.items);
        return lsp_fail(err, LSP_INTERNAL_ERROR, "out of memory");
    }
    if (t.len) qsort(t.items, t.len, sizeof *t.items, by_offset);
    /* five numbers per token, relative to the previous one; tokens never
     * overlap and never span lines */
    cJSON *data = cJSON_CreateArray();
    uint32_t pline = 0, pcol = 0, end = 0, sent = 0;
    for (uint32_t i = 0; src && i < t.len; i++) {
        const tok *k = &t.items[i];
        if (i && k->offset < end) continue;
        uint32_t line, col, eline, ecol;
        bxc_source_lsp_position(src, k->offset, s->enc, &line, &col);
        bxc_source_lsp_position(src, k->offset + k->length, s->enc, &eline, &ecol);
        if (eline != line || ecol <= col) continue;
        int nums[5] = {(int)(line - pline), (int)(line == pline ? col - pcol : col), (int)(ecol - col),
                       k->type, k->mods};
        for (int j = 0; j < 5; j++) cJSON_AddItemToArray(data, cJSON_CreateNumber(nums[j]));
        sent += 5;
        pline = line;
        pcol = col;
        end = k->offset + k->length;
    }
    free(t.items);
    /* a number lost to allocation failure would shift every later token */
    if (!data || cJSON_GetArraySize(data) != (int)sent) {
        cJSON_Delete(data);
        return lsp_fail(err, LSP_INTERNAL_ERROR, "out of memory");
    }
    cJSON *r = cJSON_CreateObject();
    cJSON_AddItemToObject(r, "data", data);
    return r;
}
