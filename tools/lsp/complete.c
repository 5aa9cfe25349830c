/* complete.c — textDocument/completion from the tables and the tree,
 * never from a list of its own: after `.` the builtin methods
 * (builtins.h BXC_BUILTIN_METHODS); after `DType::` the dtype constants
 * (BXC_DTYPE_CONSTS); elsewhere the root file's items, the names its
 * `use`s import, and the builtin type names (BXC_BUILTIN_TYPES). */
#include "lsp.h"

#include <string.h>

#include "builtins.h"
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

static void methods(cJSON *list) {
    for (unsigned i = 0; i < BXC_BM_COUNT; i++) {
        const bxc_builtin_method_info *m = &bxc_builtin_methods[i];
        char detail[96];
        snprintf(detail, sizeof detail, "%s::%s (%u usize argument%s)", bxc_type_kind_name(m->recv),
                 m->name, m->nparams, m->nparams == 1 ? "" : "s");
        item(list, m->name, CK_METHOD, detail);
    }
    item(list, "clone", CK_METHOD, "clone(&self) -> Self");
    item(list, "shape", CK_FIELD, "TensorSpec.shape: Shape");
    item(list, "dtype", CK_FIELD, "TensorSpec.dtype: DType");
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
    if (w >= 1 && t[w - 1] == '.') {
        methods(list);
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
