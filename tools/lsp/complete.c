/* complete.c — textDocument/completion from the tables and the tree,
 * never from a list of its own.  After `.`: when the last check typed the
 * receiver (bxc_expr.ty), what that type has — a struct's fields,
 * TensorSpec's `shape`/`dtype`, the builtin methods of Shape or DType
 * (builtins.h BXC_BUILTIN_METHODS), a tensor's ops for default bodies
 * (tensor_ops.h); else every builtin method.  After `DType::` the dtype
 * constants (BXC_DTYPE_CONSTS).  Inside `#[...]` attribute names and
 * keys (complete_attr.c, from compiler/attrs.h).  Elsewhere the root file's items, the
 * names its `use`s import, and the builtin type names. */
#include "lsp.h"

#include <string.h>

#include "builtins.h"
#include "tensor_ops.h"
#include "types.h"

/* LSP CompletionItemKind values. */
enum { CK_METHOD = 2, CK_FUNCTION = 3, CK_FIELD = 5, CK_CLASS = 7, CK_INTERFACE = 8,
       CK_MODULE = 9, CK_ENUM = 13, CK_ENUM_MEMBER = 20, CK_STRUCT = 22, CK_CONSTANT = 21,
       CK_TYPE_PARAMETER = 25 };

static void item(cJSON *list, const char *label, int kind, const char *detail) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "label", label);
    cJSON_AddNumberToObject(o, "kind", kind);
    if (detail) cJSON_AddStringToObject(o, "detail", detail);
    cJSON_AddItemToArray(list, o);
}

/* The builtin methods of receivers of type kind `recv` (every one when
 * recv is BXC_TYPE_KIND_COUNT: the receiver's type is not known). */
static void methods(cJSON *list, unsigned recv) {
    for (unsigned i = 0; i < BXC_BM_COUNT; i++) {
        const bxc_builtin_method_info *m = &bxc_builtin_methods[i];
        if (recv != BXC_TYPE_KIND_COUNT && m->recv != recv) continue;
        char detail[96];
        snprintf(detail, sizeof detail, "%s::%s (%u usize argument%s)", bxc_type_kind_name(m->recv),
                 m->name, m->nparams, m->nparams == 1 ? "" : "s");
        item(list, m->name, CK_METHOD, detail);
    }
}

static void spec_fields(cJSON *list) {
    item(list, "shape", CK_FIELD, "TensorSpec.shape: Shape");
    item(list, "dtype", CK_FIELD, "TensorSpec.dtype: DType");
}

/* What a receiver of type `t` offers after `.`; false when t says nothing. */
static bool members(cJSON *list, bxc_type *t) {
    t = t ? bxc_type_strip_refs(t) : NULL;
    if (!t || bxc_type_is_error(t)) return false;
    char detail[160];
    switch (t->kind) {
    case BXC_TYPE_SHAPE:
    case BXC_TYPE_DTYPE:
        methods(list, t->kind);
        item(list, "clone", CK_METHOD, "clone(&self) -> Self");
        return true;
    case BXC_TYPE_SPEC:
        spec_fields(list);
        item(list, "clone", CK_METHOD, "clone(&self) -> Self");
        return true;
    case BXC_TYPE_STRUCT:
        for (uint32_t i = 0; t->decl && i < t->decl->nfields; i++) {
            const bxc_type_field *f = &t->decl->fields[i];
            if (!f->name) continue;
            char ty[120];
            bxc_type_print(ty, sizeof ty, f->type);
            snprintf(detail, sizeof detail, "%s.%s: %s", t->decl->name, f->name, ty);
            item(list, f->name, CK_FIELD, detail);
        }
        item(list, "clone", CK_METHOD, "clone(&self) -> Self");
        return true;
    case BXC_TYPE_TENSOR: {
        uint32_t n;
        const bxc_top *ops = bxc_top_all(&n);
        unsigned bit = bxc_top_kind_bit(t->tensor_kind);
        for (uint32_t i = 0; i < n; i++) {
            if (!(ops[i].kinds & bit)) continue;
            snprintf(detail, sizeof detail, "tensor op (%u argument%s): %s", ops[i].nargs,
                     ops[i].nargs == 1 ? "" : "s", ops[i].cfn);
            item(list, ops[i].name, CK_METHOD, detail);
        }
        return true;
    }
    default:
        return false;
    }
}

/* The receiver before the `.` at `dot`: the innermost expression the last
 * check recorded that ends right there. */
static bxc_type *receiver_type(const bxc_doc *d, uint32_t dot) {
    const bxc_file *f = bxc_doc_ast(d);
    bxc_node_at at;
    if (!f || dot == 0 || !bxc_ast_node_at(f, dot - 1, &at) || !at.expr) return NULL;
    if (at.expr->span.offset + at.expr->span.length != dot) return NULL;
    return at.expr->ty;
}

static void names(cJSON *list, const bxc_file *f) {
    for (uint32_t i = 0; f && i < f->items.len; i++) {
        const bxc_item *it = f->items.items[i];
        switch (it->kind) {
        case BXC_ITEM_FN: item(list, it->name.name, CK_FUNCTION, "fn"); break;
        case BXC_ITEM_STRUCT: item(list, it->name.name, CK_STRUCT, "struct"); break;
        case BXC_ITEM_ENUM: item(list, it->name.name, CK_ENUM, "enum"); break;
        case BXC_ITEM_TRAIT: item(list, it->name.name, CK_INTERFACE, "trait"); break;
        case BXC_ITEM_TYPE_ALIAS: item(list, it->name.name, CK_TYPE_PARAMETER, "type"); break;
        case BXC_ITEM_USE:
            for (uint32_t k = 0; k < it->use_.names.len; k++)
                item(list, it->use_.names.items[k].name, CK_FUNCTION,
                     it->use_.module ? it->use_.module->name : "use");
            break;
        default: break;
        }
    }
    for (uint32_t i = 0; i < bxc_builtin_type_count; i++)
        item(list, bxc_builtin_types[i].name, CK_CLASS, "builtin type");
}

cJSON *lsp_completion(lsp_server *s, const cJSON *params, lsp_error *err) {
    lsp_doc *d = lsp_doc_of(s, params, err);
    uint32_t off;
    if (!d || !lsp_offset_of(s, d, params, &off, err)) return NULL;
    const char *t = d->doc->text;
    /* the word being typed, then what precedes it */
    uint32_t w = off;
    while (w > 0 && (t[w - 1] == '_' || (t[w - 1] >= 'a' && t[w - 1] <= 'z') ||
                     (t[w - 1] >= 'A' && t[w - 1] <= 'Z') || (t[w - 1] >= '0' && t[w - 1] <= '9')))
        w--;
    cJSON *list = cJSON_CreateArray();
    if (!list) return lsp_fail(err, LSP_INTERNAL_ERROR, "out of memory");
    if (lsp_complete_attr(d->doc, w, list)) return list;
    if (w >= 1 && t[w - 1] == '.') {
        if (!members(list, receiver_type(d->doc, w - 1))) {
            methods(list, BXC_TYPE_KIND_COUNT);
            item(list, "clone", CK_METHOD, "clone(&self) -> Self");
            spec_fields(list);
        }
    } else if (w >= 7 && strncmp(t + w - 7, "DType::", 7) == 0) {
        for (unsigned i = 0; i < BXC_DT_COUNT; i++) item(list, bxc_dtype_const_names[i], CK_ENUM_MEMBER, bxc_dtype_const_c[i]);
    } else if (w >= 7 && strncmp(t + w - 7, "Shape::", 7) == 0) {
        item(list, "new", CK_FUNCTION, "Shape::new() -> Shape");
    } else if (w >= 12 && strncmp(t + w - 12, "TensorSpec::", 12) == 0) {
        item(list, "new", CK_FUNCTION, "TensorSpec::new(shape: Shape, dtype: DType) -> TensorSpec");
    } else {
        names(list, bxc_doc_ast(d->doc));
    }
    return list ? list : lsp_fail(err, LSP_INTERNAL_ERROR, "out of memory");
}
