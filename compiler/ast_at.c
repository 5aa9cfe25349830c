/* ast_at.c — the node at a byte offset: the innermost expression (with the
 * type and resolution record the checker left on it), and the item and fn
 * around it.  The base of hover and go-to-definition in a language server
 * (issue 13): it reads the checker's answers and resolves nothing itself. */
#include "ast.h"

static bool holds(bxc_span s, uint32_t off) { return off >= s.offset && off - s.offset < s.length; }

static void at_expr(const bxc_expr *e, uint32_t off, bxc_node_at *out);
static void at_block(const bxc_block *b, uint32_t off, bxc_node_at *out);
static void at_item(const bxc_item *it, uint32_t off, bxc_node_at *out);

static void at_list(const bxc_expr_list *l, uint32_t off, bxc_node_at *out) {
    for (uint32_t i = 0; i < l->len; i++) at_expr(l->items[i], off, out);
}

static void at_expr(const bxc_expr *e, uint32_t off, bxc_node_at *out) {
    if (!e || !holds(e->span, off)) return;
    out->expr = e;   /* children below replace it: the innermost wins */
    switch (e->kind) {
    case BXC_EXPR_UNARY: at_expr(e->unary.operand, off, out); break;
    case BXC_EXPR_BINARY:
        at_expr(e->binary.lhs, off, out);
        at_expr(e->binary.rhs, off, out);
        break;
    case BXC_EXPR_ASSIGN:
        at_expr(e->assign.target, off, out);
        at_expr(e->assign.value, off, out);
        break;
    case BXC_EXPR_CAST: at_expr(e->cast.expr, off, out); break;
    case BXC_EXPR_CALL:
        at_expr(e->call.callee, off, out);
        at_list(&e->call.args, off, out);
        break;
    case BXC_EXPR_METHOD_CALL:
        at_expr(e->method_call.receiver, off, out);
        at_list(&e->method_call.args, off, out);
        break;
    case BXC_EXPR_FIELD: at_expr(e->field.object, off, out); break;
    case BXC_EXPR_TUPLE_FIELD: at_expr(e->tuple_field.object, off, out); break;
    case BXC_EXPR_INDEX:
        at_expr(e->index.object, off, out);
        at_expr(e->index.index, off, out);
        break;
    case BXC_EXPR_BLOCK: at_block(e->block, off, out); break;
    case BXC_EXPR_IF:
        at_expr(e->if_.cond, off, out);
        at_block(e->if_.then_block, off, out);
        at_expr(e->if_.else_, off, out);
        break;
    case BXC_EXPR_WHILE:
        at_expr(e->while_.cond, off, out);
        at_block(e->while_.body, off, out);
        break;
    case BXC_EXPR_FOR:
        at_expr(e->for_.iter, off, out);
        at_block(e->for_.body, off, out);
        break;
    case BXC_EXPR_LOOP: at_block(e->loop_.body, off, out); break;
    case BXC_EXPR_RETURN: at_expr(e->ret.value, off, out); break;
    case BXC_EXPR_STRUCT:
        for (uint32_t i = 0; i < e->struct_lit.fields.len; i++)
            at_expr(e->struct_lit.fields.items[i]->value, off, out);
        break;
    case BXC_EXPR_TUPLE: at_list(&e->tuple.elems, off, out); break;
    case BXC_EXPR_ARRAY: at_list(&e->array.elems, off, out); break;
    case BXC_EXPR_CLOSURE: at_expr(e->closure.body, off, out); break;
    case BXC_EXPR_RANGE:
        at_expr(e->range.start, off, out);
        at_expr(e->range.end, off, out);
        break;
    default: break;   /* literals, paths, break, continue, errors: leaves */
    }
}

static void at_block(const bxc_block *b, uint32_t off, bxc_node_at *out) {
    if (!b || !holds(b->span, off)) return;
    for (uint32_t i = 0; i < b->stmts.len; i++) {
        const bxc_stmt *s = b->stmts.items[i];
        if (!holds(s->span, off)) continue;
        if (s->kind == BXC_STMT_ITEM) at_item(s->item, off, out);
        at_expr(s->init, off, out);
        at_expr(s->expr, off, out);
    }
    at_expr(b->tail, off, out);
}

/* Attribute arguments hold metadata expressions (`#[fusion(shape = e)]`). */
static void at_attr_args(const bxc_attr_arg_list *l, uint32_t off, bxc_node_at *out) {
    for (uint32_t i = 0; i < l->len; i++) {
        const bxc_attr_arg *a = l->items[i];
        if (!holds(a->span, off)) continue;
        at_expr(a->value, off, out);
        at_attr_args(&a->args, off, out);
    }
}

static void at_attrs(const bxc_attr_list *l, uint32_t off, bxc_node_at *out) {
    for (uint32_t i = 0; i < l->len; i++)
        if (holds(l->items[i]->span, off)) at_attr_args(&l->items[i]->args, off, out);
}

static void at_fn(const bxc_fn *fn, uint32_t off, bxc_node_at *out) {
    if (!fn) return;
    at_attrs(&fn->attrs, off, out);   /* attributes precede the fn's span */
    if (!holds(fn->span, off)) return;
    out->fn = fn;
    at_block(fn->body, off, out);
}

static void at_fns(const bxc_fn_list *l, uint32_t off, bxc_node_at *out) {
    for (uint32_t i = 0; i < l->len; i++) at_fn(l->items[i], off, out);
}

static void at_item(const bxc_item *it, uint32_t off, bxc_node_at *out) {
    if (!it || !holds(it->span, off)) return;
    out->item = it;
    at_attrs(&it->attrs, off, out);
    switch (it->kind) {
    case BXC_ITEM_FN: at_fn(it->fn, off, out); break;
    case BXC_ITEM_TRAIT: at_fns(&it->trait.methods, off, out); break;
    case BXC_ITEM_IMPL: at_fns(&it->impl.methods, off, out); break;
    default: break;
    }
}

bool bxc_ast_node_at(const bxc_file *file, uint32_t offset, bxc_node_at *out) {
    *out = (bxc_node_at){0};
    if (!file) return false;
    for (uint32_t i = 0; i < file->items.len; i++) at_item(file->items.items[i], offset, out);
    at_block(file->repl, offset, out);
    return out->item || out->expr;
}
