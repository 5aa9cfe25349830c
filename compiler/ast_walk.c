/* ast_walk.c — every expression of a parsed file, in source order, for
 * readers that want them all (the language server's semantic tokens):
 * item and method bodies, default bodies and the metadata expressions of
 * attribute arguments (`#[fusion(shape = e)]`).  Syntax-error nodes and
 * missing children (a half-typed file) are skipped. */
#include "ast.h"

typedef struct walker {
    bxc_expr_visit_fn fn;
    void *ctx;
} walker;

static void w_expr(const walker *w, const bxc_expr *e);
static void w_block(const walker *w, const bxc_block *b);
static void w_item(const walker *w, const bxc_item *it);

static void w_list(const walker *w, const bxc_expr_list *l) {
    for (uint32_t i = 0; i < l->len; i++) w_expr(w, l->items[i]);
}

static void w_expr(const walker *w, const bxc_expr *e) {
    if (!e) return;
    w->fn(w->ctx, e);
    switch (e->kind) {
    case BXC_EXPR_UNARY: w_expr(w, e->unary.operand); break;
    case BXC_EXPR_BINARY: w_expr(w, e->binary.lhs), w_expr(w, e->binary.rhs); break;
    case BXC_EXPR_ASSIGN: w_expr(w, e->assign.target), w_expr(w, e->assign.value); break;
    case BXC_EXPR_CAST: w_expr(w, e->cast.expr); break;
    case BXC_EXPR_CALL: w_expr(w, e->call.callee), w_list(w, &e->call.args); break;
    case BXC_EXPR_METHOD_CALL: w_expr(w, e->method_call.receiver), w_list(w, &e->method_call.args); break;
    case BXC_EXPR_FIELD: w_expr(w, e->field.object); break;
    case BXC_EXPR_TUPLE_FIELD: w_expr(w, e->tuple_field.object); break;
    case BXC_EXPR_INDEX: w_expr(w, e->index.object), w_expr(w, e->index.index); break;
    case BXC_EXPR_BLOCK: w_block(w, e->block); break;
    case BXC_EXPR_IF:
        w_expr(w, e->if_.cond);
        w_block(w, e->if_.then_block);
        w_expr(w, e->if_.else_);
        break;
    case BXC_EXPR_WHILE: w_expr(w, e->while_.cond), w_block(w, e->while_.body); break;
    case BXC_EXPR_FOR: w_expr(w, e->for_.iter), w_block(w, e->for_.body); break;
    case BXC_EXPR_LOOP: w_block(w, e->loop_.body); break;
    case BXC_EXPR_RETURN: w_expr(w, e->ret.value); break;
    case BXC_EXPR_STRUCT:
        for (uint32_t i = 0; i < e->struct_lit.fields.len; i++)
            if (e->struct_lit.fields.items[i]) w_expr(w, e->struct_lit.fields.items[i]->value);
        break;
    case BXC_EXPR_TUPLE: w_list(w, &e->tuple.elems); break;
    case BXC_EXPR_ARRAY: w_list(w, &e->array.elems); break;
    case BXC_EXPR_CLOSURE: w_expr(w, e->closure.body); break;
    case BXC_EXPR_RANGE: w_expr(w, e->range.start), w_expr(w, e->range.end); break;
    default: break;   /* leaves */
    }
}

static void w_block(const walker *w, const bxc_block *b) {
    if (!b) return;
    for (uint32_t i = 0; i < b->stmts.len; i++) {
        const bxc_stmt *s = b->stmts.items[i];
        if (!s) continue;
        if (s->kind == BXC_STMT_ITEM) w_item(w, s->item);
        w_expr(w, s->init);
        w_expr(w, s->expr);
    }
    w_expr(w, b->tail);
}

static void w_args(const walker *w, const bxc_attr_arg_list *l) {
    for (uint32_t i = 0; i < l->len; i++) {
        if (!l->items[i]) continue;
        w_expr(w, l->items[i]->value);
        w_args(w, &l->items[i]->args);
    }
}

static void w_attrs(const walker *w, const bxc_attr_list *l) {
    for (uint32_t i = 0; i < l->len; i++)
        if (l->items[i]) w_args(w, &l->items[i]->args);
}

static void w_fns(const walker *w, const bxc_fn_list *l) {
    for (uint32_t i = 0; i < l->len; i++) {
        const bxc_fn *fn = l->items[i];
        if (!fn) continue;
        w_attrs(w, &fn->attrs);
        w_block(w, fn->body);
    }
}

static void w_item(const walker *w, const bxc_item *it) {
    if (!it) return;
    /* a fn item shares its attribute list with its fn */
    if (it->kind != BXC_ITEM_FN) w_attrs(w, &it->attrs);
    switch (it->kind) {
    case BXC_ITEM_FN:
        if (it->fn) w_attrs(w, &it->fn->attrs), w_block(w, it->fn->body);
        break;
    case BXC_ITEM_TRAIT: w_fns(w, &it->trait.methods); break;
    case BXC_ITEM_IMPL: w_fns(w, &it->impl.methods); break;
    default: break;
    }
}

void bxc_ast_each_expr(const bxc_file *file, bxc_expr_visit_fn fn, void *ctx) {
    if (!file) return;
    walker w = {fn, ctx};
    for (uint32_t i = 0; i < file->items.len; i++) w_item(&w, file->items.items[i]);
    w_block(&w, file->repl);
}
