/* hover.c — textDocument/hover: what the name under the cursor resolved
 * to, read from the checker's record on the innermost expression
 * (bxc_ast_node_at, bxc_expr.res): a fn's signature and doc comment, a
 * field's or variant's type, a builtin method's row, and the expression's
 * type as the REPL's `:type` prints it.  On a trait method's name: its
 * signature, its attributes (the fusion form), the trait's selectors and
 * the metadata it computes for example inputs (hover_meta.c). */
#include "lsp.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "builtins.h"
#include "tensor_ops.h"
#include "types.h"

/* A growing string; `failed` once an allocation failed (then empty). */
typedef struct buf {
    char *p;
    size_t len, cap;
    bool failed;
} buf;

static void put(buf *b, const char *s, size_t n) {
    if (b->failed) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1) cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np) {
            b->failed = true;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void puts_(buf *b, const char *s) { put(b, s, strlen(s)); }

static void putf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(buf *b, const char *fmt, ...) {
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0) put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* Source text [from, to) of file `file` with each run of whitespace
 * (line breaks and indentation of a long signature) as one space. */
static void put_source(buf *b, const bxc_unit *u, uint32_t file, uint32_t from, uint32_t to) {
    const bxc_source *src = bxc_sources_get(&u->sources, file);
    if (!src || from >= to) return;
    if (to > src->length) to = src->length;
    bool space = false;
    for (uint32_t i = from; i < to; i++) {
        char c = src->text[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            space = true;
            continue;
        }
        if (space && b->len && b->p[b->len - 1] != '\n') put(b, " ", 1);
        space = false;
        put(b, &c, 1);
    }
}

static void put_type(buf *b, const bxc_type *t) {
    char tmp[256];
    size_t n = bxc_type_print(tmp, sizeof tmp, t);
    put(b, tmp, n < sizeof tmp ? n : sizeof tmp - 1);
}

/* `fn name(params) -> ret`: the fn's text up to its body. */
static void put_signature(buf *b, const bxc_unit *u, const bxc_fn *fn) {
    uint32_t end = fn->body && fn->body->span.file == fn->span.file ? fn->body->span.offset
                                                                     : fn->span.offset + fn->span.length;
    put_source(b, u, fn->span.file, fn->span.offset, end);
    while (b->len && (b->p[b->len - 1] == ' ' || b->p[b->len - 1] == ';')) b->p[--b->len] = '\0';
}

static void put_doc(buf *b, const char *doc) {
    if (!doc || !*doc) return;
    puts_(b, "\n\n");
    puts_(b, doc);
}

static void code_open(buf *b) { puts_(b, "```bext\n"); }
static void code_close(buf *b) { puts_(b, "\n```"); }

static const char *ret_name(bxc_builtin_ret r) {
    return r == BXC_BRET_USIZE ? "usize" : r == BXC_BRET_BOOL ? "bool" : "()";
}

/* The last segment of a path expression (a local's name). */
static const char *path_name(const bxc_expr *e) {
    if (e->kind != BXC_EXPR_PATH || !e->path || !e->path->segs.len) return NULL;
    return e->path->segs.items[e->path->segs.len - 1].name;
}

static bxc_type_decl *decl_of(const bxc_type *t) {
    return t && (t->kind == BXC_TYPE_STRUCT || t->kind == BXC_TYPE_ENUM) ? t->decl : NULL;
}

/* What the record says, as a code block plus the doc comment. */
static void describe_res(buf *b, const bxc_unit *u, const bxc_expr *e) {
    const bxc_res *r = &e->res;
    bxc_type_decl *d = decl_of(r->type);
    switch (r->kind) {
    case BXC_RES_LOCAL:
        code_open(b);
        putf(b, "let %s: ", path_name(e) ? path_name(e) : "_");
        put_type(b, e->ty);
        code_close(b);
        return;
    case BXC_RES_FN:
    case BXC_RES_IMPL_FN:
        if (!r->fn) break;
        code_open(b);
        if (r->kind == BXC_RES_IMPL_FN && r->type) {
            puts_(b, "impl ");
            put_type(b, r->type);
            puts_(b, "\n");
        }
        put_signature(b, u, r->fn);
        code_close(b);
        if (r->module) putf(b, "\n\nin module `%s`", r->module->name);
        /* a free fn's `///` lines sit on its item */
        put_doc(b, r->fn->doc ? r->fn->doc : r->kind == BXC_RES_FN && r->item ? r->item->doc : NULL);
        return;
    case BXC_RES_VARIANT:
        if (!d || r->index >= d->nvariants) break;
        code_open(b);
        putf(b, "%s::%s", d->name, d->variants[r->index].name);
        code_close(b);
        if (d->item) put_doc(b, d->item->doc);
        return;
    case BXC_RES_STRUCT:
        if (!d) break;
        code_open(b);
        putf(b, "struct %s", d->name);
        code_close(b);
        if (d->item) put_doc(b, d->item->doc);
        return;
    case BXC_RES_FIELD:
        if (!d || r->index >= d->nfields) break;
        code_open(b);
        putf(b, "%s.%s: ", d->name, d->fields[r->index].name ? d->fields[r->index].name : "?");
        put_type(b, d->fields[r->index].type);
        code_close(b);
        return;
    case BXC_RES_SPEC_FIELD:
        code_open(b);
        puts_(b, r->index == 0 ? "TensorSpec.shape: Shape" : "TensorSpec.dtype: DType");
        code_close(b);
        return;
    case BXC_RES_SPEC:
        code_open(b);
        puts_(b, "struct TensorSpec { shape: Shape, dtype: DType }");
        code_close(b);
        return;
    case BXC_RES_BUILTIN_METHOD: {
        if (r->index >= BXC_BM_COUNT) break;
        const bxc_builtin_method_info *m = &bxc_builtin_methods[r->index];
        code_open(b);
        putf(b, "%s::%s(%s", bxc_type_kind_name(m->recv), m->name, m->mutates ? "&mut self" : "&self");
        for (unsigned i = 0; i < m->nparams; i++) puts_(b, ", usize");
        putf(b, ") -> %s", ret_name(m->ret));
        code_close(b);
        puts_(b, "\n\nbuiltin method");
        return;
    }
    case BXC_RES_BUILTIN_FN:
        code_open(b);
        puts_(b, r->index == BXC_BFN_SHAPE_NEW ? "Shape::new() -> Shape"
                 : r->index == BXC_BFN_SPEC_NEW ? "TensorSpec::new(shape: Shape, dtype: DType) -> TensorSpec"
                 : "panic(message: &str) -> !");
        code_close(b);
        puts_(b, "\n\nbuiltin function");
        return;
    case BXC_RES_DTYPE:
        if (r->index >= BXC_DT_COUNT) break;
        code_open(b);
        putf(b, "DType::%s", bxc_dtype_const_names[r->index]);
        code_close(b);
        putf(b, "\n\nruntime dtype `%s`", bxc_dtype_const_c[r->index]);
        return;
    case BXC_RES_CLONE:
        code_open(b);
        puts_(b, "fn clone(&self) -> Self");
        code_close(b);
        return;
    case BXC_RES_TENSOR_OP:
        if (!r->op) break;
        code_open(b);
        putf(b, "tensor op %s", r->op->name);
        code_close(b);
        putf(b, "\n\ncalls `%s`", r->op->cfn);
        return;
    case BXC_RES_NONE:
        break;
    }
    /* Unresolved (a literal, an operator, an error): the type alone. */
    code_open(b);
    put_type(b, e->ty);
    code_close(b);
}

static void describe_expr(buf *b, const bxc_unit *u, const bxc_expr *e) {
    describe_res(b, u, e);
    if (e->res.kind != BXC_RES_NONE && e->res.kind != BXC_RES_LOCAL && e->ty) {
        puts_(b, "\n\n---\ntype: `");
        put_type(b, e->ty);
        puts_(b, "`");
    }
}

/* What the checker recorded of a trait method (ast.h bxc_method_rec):
 * its fusion form, op id, routing slots and the scalars it exposes. */
static void put_method_record(buf *b, const bxc_method_rec *r) {
    if (!r) return;
    putf(b, "\n\nfusion form: `%s` · op id `%s` · routing slots: %u in, %u out", bxc_fusion_form_name(r->form),
         r->op_id, r->in_slots, r->out_slots);
    if (r->backward) puts_(b, " · gradient generated from `#[backward]`");
    if (!r->active) puts_(b, "\n\nswitched off by a `#[cfg]` for these features (its C is still generated)");
    for (uint32_t i = 0; i < r->nscalars; i++) {
        const bxc_method_scalar *sc = &r->scalars[i];
        putf(b, "%s`%s", i ? ", " : "\n\nscalars: ", r->params[sc->param].name);
        if (sc->type) {
            puts_(b, ": ");
            put_type(b, sc->type);
        }
        putf(b, "` (%s", bxc_scalar_kind_name(sc->kind));
        if (sc->read == BXC_SCALAR_READ_TAG || sc->read == BXC_SCALAR_READ_FIELD)
            putf(b, ", its %s", bxc_scalar_read_name(sc->read));
        puts_(b, ")");
    }
}

/* A fn's name: its signature; in a trait, its attributes (`#[fusion(..)]`
 * and friends) and the selectors the trait's extension serves. */
static void describe_fn(buf *b, const bxc_unit *u, const bxc_item *it, const bxc_fn *fn) {
    code_open(b);
    for (uint32_t i = 0; i < fn->attrs.len; i++) {
        const bxc_attr *a = fn->attrs.items[i];
        put_source(b, u, a->span.file, a->span.offset, a->span.offset + a->span.length);
        puts_(b, "\n");
    }
    put_signature(b, u, fn);
    code_close(b);
    if (it && it->kind == BXC_ITEM_TRAIT && it->trait.selectors && it->trait.selectors->len) {
        const bxc_trait_selectors *sel = it->trait.selectors;
        putf(b, "\n\nextension `%s` for: ", it->name.name ? it->name.name : "?");
        for (uint32_t i = 0; i < sel->len; i++) {
            putf(b, "%s`%s`", i ? ", " : "", sel->items[i].name);
            if (sel->items[i].cfg) {
                const bxc_span s = sel->items[i].cfg->span;
                puts_(b, " (`");
                put_source(b, u, s.file, s.offset, s.offset + s.length);
                puts_(b, "`)");
            }
        }
    }
    put_method_record(b, fn->method);
    char *meta = fn->method && fn->method->active ? lsp_meta_example(u, fn->method) : NULL;
    if (meta) {
        puts_(b, "\n\n");
        puts_(b, meta);
        free(meta);
    }
    put_doc(b, fn->doc);
}

static bool holds(bxc_span s, uint32_t off) {
    return off >= s.offset && off - s.offset <= s.length;
}

/* The item's header: its text up to the body. */
static void describe_item(buf *b, const bxc_unit *u, const bxc_item *it) {
    const bxc_source *src = bxc_sources_get(&u->sources, it->span.file);
    if (!src) return;
    uint32_t end = it->span.offset;
    uint32_t stop = it->span.offset + it->span.length;
    while (end < stop && end < src->length && src->text[end] != '{' && src->text[end] != ';') end++;
    code_open(b);
    put_source(b, u, it->span.file, it->span.offset, end);
    code_close(b);
    put_doc(b, it->doc);
}

cJSON *lsp_hover(lsp_server *s, const cJSON *params, lsp_error *err) {
    lsp_doc *d = lsp_doc_of(s, params, err);
    uint32_t off;
    if (!d || !lsp_offset_of(s, d, params, &off, err)) return NULL;
    const bxc_file *f = bxc_doc_ast(d->doc);
    bxc_node_at at;
    if (d->doc->status == BXC_WS_UNCHECKED || !f || !bxc_ast_node_at(f, off, &at)) return cJSON_CreateNull();
    const bxc_unit *u = &d->doc->unit;
    buf b = {0};
    bxc_span range;
    if (at.expr) {
        describe_expr(&b, u, at.expr);
        range = at.expr->span;
    } else if (at.fn && holds(at.fn->name.span, off)) {
        describe_fn(&b, u, at.item, at.fn);
        range = at.fn->name.span;
    } else if (at.item && at.item->kind != BXC_ITEM_USE && at.item->kind != BXC_ITEM_IMPL &&
               at.item->name.name && holds(at.item->name.span, off)) {
        describe_item(&b, u, at.item);
        range = at.item->name.span;
    } else {
        return cJSON_CreateNull();
    }
    if (b.failed || !b.p) {
        free(b.p);
        return lsp_fail(err, LSP_INTERNAL_ERROR, "out of memory");
    }
    cJSON *r = cJSON_CreateObject();
    cJSON *c = cJSON_AddObjectToObject(r, "contents");
    cJSON_AddStringToObject(c, "kind", "markdown");
    cJSON_AddStringToObject(c, "value", b.p);
    free(b.p);
    cJSON_AddItemToObject(r, "range", lsp_range(s, u, range));
    return r;
}
