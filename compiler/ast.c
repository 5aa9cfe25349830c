/* ast.c — AST node builders and the --dump-ast printer.
 *
 * The dump is an indented S-expression, one node per line, stable across
 * runs (no addresses), so tests and people can diff it. */
#include "ast.h"

#include <inttypes.h>

bxc_ident bxc_ast_ident(bxc_arena *a, const char *text, bxc_span span) {
    bxc_ident id;
    id.name = bxc_arena_strndup(a, text, span.length);
    id.span = span;
    return id;
}

bxc_path *bxc_ast_path1(bxc_arena *a, bxc_ident first) {
    bxc_path *p = bxc_arena_alloc(a, sizeof *p);
    BXC_LIST_PUSH(a, &p->segs, first);
    p->span = first.span;
    return p;
}

bxc_path *bxc_ast_path_push(bxc_arena *a, bxc_path *p, bxc_ident next) {
    BXC_LIST_PUSH(a, &p->segs, next);
    p->span = bxc_span_join(p->span, next.span);
    return p;
}

bxc_expr *bxc_ast_expr(bxc_arena *a, bxc_expr_kind kind, bxc_span span) {
    bxc_expr *e = bxc_arena_alloc(a, sizeof *e);
    e->kind = kind;
    e->span = span;
    e->depth = 1;
    return e;
}

bxc_stmt *bxc_ast_stmt(bxc_arena *a, bxc_stmt_kind kind, bxc_span span) {
    bxc_stmt *s = bxc_arena_alloc(a, sizeof *s);
    s->kind = kind;
    s->span = span;
    return s;
}

bxc_item *bxc_ast_item(bxc_arena *a, bxc_item_kind kind, bxc_span span) {
    bxc_item *it = bxc_arena_alloc(a, sizeof *it);
    it->kind = kind;
    it->span = span;
    return it;
}

bxc_tyexpr *bxc_ast_tyexpr(bxc_arena *a, bxc_tyexpr_kind kind, bxc_span span) {
    bxc_tyexpr *t = bxc_arena_alloc(a, sizeof *t);
    t->kind = kind;
    t->span = span;
    return t;
}

bxc_pat *bxc_ast_pat(bxc_arena *a, bxc_pat_kind kind, bxc_span span) {
    bxc_pat *p = bxc_arena_alloc(a, sizeof *p);
    p->kind = kind;
    p->span = span;
    return p;
}

static uint32_t dmax(uint32_t m, const bxc_expr *e) {
    return e && e->depth > m ? e->depth : m;
}

static uint32_t block_depth(const bxc_block *b) {
    uint32_t m = 0;
    if (!b) return 0;
    for (uint32_t i = 0; i < b->stmts.len; i++) {
        const bxc_stmt *s = b->stmts.items[i];
        m = dmax(m, s->init);
        m = dmax(m, s->expr);
    }
    return dmax(m, b->tail);
}

static uint32_t list_depth(uint32_t m, const bxc_expr_list *l) {
    for (uint32_t i = 0; i < l->len; i++) m = dmax(m, l->items[i]);
    return m;
}

uint32_t bxc_ast_expr_update_depth(bxc_expr *e) {
    uint32_t m = 0;
    switch (e->kind) {
    case BXC_EXPR_UNARY: m = dmax(m, e->unary.operand); break;
    case BXC_EXPR_BINARY: m = dmax(dmax(m, e->binary.lhs), e->binary.rhs); break;
    case BXC_EXPR_ASSIGN: m = dmax(dmax(m, e->assign.target), e->assign.value); break;
    case BXC_EXPR_CAST: m = dmax(m, e->cast.expr); break;
    case BXC_EXPR_CALL: m = list_depth(dmax(m, e->call.callee), &e->call.args); break;
    case BXC_EXPR_METHOD_CALL:
        m = list_depth(dmax(m, e->method_call.receiver), &e->method_call.args);
        break;
    case BXC_EXPR_FIELD: m = dmax(m, e->field.object); break;
    case BXC_EXPR_TUPLE_FIELD: m = dmax(m, e->tuple_field.object); break;
    case BXC_EXPR_INDEX: m = dmax(dmax(m, e->index.object), e->index.index); break;
    case BXC_EXPR_BLOCK: m = block_depth(e->block); break;
    case BXC_EXPR_IF:
        m = dmax(dmax(block_depth(e->if_.then_block), e->if_.cond), e->if_.else_);
        break;
    case BXC_EXPR_WHILE: m = dmax(block_depth(e->while_.body), e->while_.cond); break;
    case BXC_EXPR_FOR: m = dmax(block_depth(e->for_.body), e->for_.iter); break;
    case BXC_EXPR_LOOP: m = block_depth(e->loop_.body); break;
    case BXC_EXPR_RETURN: m = dmax(m, e->ret.value); break;
    case BXC_EXPR_STRUCT:
        for (uint32_t i = 0; i < e->struct_lit.fields.len; i++)
            m = dmax(m, e->struct_lit.fields.items[i]->value);
        break;
    case BXC_EXPR_TUPLE: m = list_depth(m, &e->tuple.elems); break;
    case BXC_EXPR_ARRAY: m = list_depth(m, &e->array.elems); break;
    case BXC_EXPR_CLOSURE: m = dmax(m, e->closure.body); break;
    case BXC_EXPR_RANGE: m = dmax(dmax(m, e->range.start), e->range.end); break;
    default: break;
    }
    e->depth = m + 1;
    return e->depth;
}

/* ORDER bxc_binop */
static const char *const binop_strs[] = {
    "=", "+", "-", "*", "/", "%", "&&", "||", "&", "|", "^",
    "==", "!=", "<", "<=", ">", ">=",
};
_Static_assert(sizeof binop_strs / sizeof binop_strs[0] == BXC_BINOP_COUNT,
               "one string per binop");

const char *bxc_binop_str(bxc_binop op) {
    return (unsigned)op < BXC_BINOP_COUNT ? binop_strs[op] : "?";
}

const char *bxc_unop_str(bxc_unop op) {
    switch (op) {
    case BXC_UN_NEG: return "-";
    case BXC_UN_NOT: return "!";
    case BXC_UN_DEREF: return "*";
    case BXC_UN_REF: return "&";
    case BXC_UN_REF_MUT: return "&mut";
    }
    return "?";
}

static const char *const expr_kind_names[] = {
    "int", "float", "string", "bool", "path", "unary", "binary", "assign",
    "cast", "call", "method-call", "field", "tuple-field", "index", "block",
    "if", "while", "for", "loop", "break", "continue", "return", "struct",
    "tuple", "array", "closure", "range", "error",
};
_Static_assert(sizeof expr_kind_names / sizeof expr_kind_names[0] == BXC_EXPR_KIND_COUNT,
               "one name per expression kind");

const char *bxc_expr_kind_name(bxc_expr_kind k) {
    return (unsigned)k < BXC_EXPR_KIND_COUNT ? expr_kind_names[k] : "?";
}

static const char *const res_kind_names[] = {
    "none", "local", "fn", "impl fn", "variant", "struct", "field", "spec field",
    "spec", "builtin method", "builtin fn", "dtype", "clone", "tensor op",
};
_Static_assert(sizeof res_kind_names / sizeof res_kind_names[0] == BXC_RES_TENSOR_OP + 1,
               "one name per resolution kind");

const char *bxc_res_kind_name(bxc_res_kind k) {
    return (unsigned)k <= BXC_RES_TENSOR_OP ? res_kind_names[k] : "?";
}

const char *bxc_fusion_form_name(bxc_fusion_form f) {
    switch (f) {
    case BXC_FUSION_NONE: return "none";
    case BXC_FUSION_FIELDS: return "dtype/shape";
    case BXC_FUSION_META: return "meta";
    case BXC_FUSION_DEFAULT: return "default";
    }
    return "?";
}

const char *bxc_scalar_kind_name(bxc_scalar_kind k) {
    switch (k) {
    case BXC_SCALAR_NONE: return "none";
    case BXC_SCALAR_INFERRED: return "inferred";
    case BXC_SCALAR_MARKED: return "marked";
    case BXC_SCALAR_CUSTOM: return "custom";
    }
    return "?";
}

const char *bxc_scalar_read_name(bxc_scalar_read r) {
    switch (r) {
    case BXC_SCALAR_READ_VALUE: return "value";
    case BXC_SCALAR_READ_TAG: return "variant index";
    case BXC_SCALAR_READ_FIELD: return "field";
    case BXC_SCALAR_READ_ENCODING: return "encoding";
    case BXC_SCALAR_READ_NONE: return "none";
    }
    return "?";
}

bool bxc_path_is(const bxc_path *p, const char *name) {
    return p && p->segs.len == 1 && strcmp(p->segs.items[0].name, name) == 0;
}

bool bxc_attr_is_backward_manual(const bxc_attr *a) {
    return a && bxc_path_is(a->path, "backward") && a->has_args && a->args.len == 1 &&
           a->args.items[0]->kind == BXC_ATTR_ARG_PATH && bxc_path_is(a->args.items[0]->path, "manual");
}

/* ---- dump ---------------------------------------------------------------- */

static void ind(FILE *out, int n) {
    for (int i = 0; i < n; i++) fputs("  ", out);
}

static void dump_str(FILE *out, const char *s, uint32_t len) {
    fputc('"', out);
    for (uint32_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
        else if (c == '\n') fputs("\\n", out);
        else if (c == '\t') fputs("\\t", out);
        else if (c < 0x20 || c == 0x7F) fprintf(out, "\\x%02x", c);
        else fputc(c, out);
    }
    fputc('"', out);
}

static void dump_path(FILE *out, const bxc_path *p) {
    for (uint32_t i = 0; i < p->segs.len; i++)
        fprintf(out, "%s%s", i ? "::" : "", p->segs.items[i].name);
}

static void dump_ty(FILE *out, const bxc_tyexpr *t);

static void dump_ty(FILE *out, const bxc_tyexpr *t) {
    if (!t) {
        fputs("()", out);
        return;
    }
    switch (t->kind) {
    case BXC_TY_PATH:
        dump_path(out, t->path);
        if (t->args.len) {
            fputc('<', out);
            for (uint32_t i = 0; i < t->args.len; i++) {
                if (i) fputs(", ", out);
                dump_ty(out, t->args.items[i]);
            }
            fputc('>', out);
        }
        break;
    case BXC_TY_REF:
        fputs(t->is_mut ? "&mut " : "&", out);
        dump_ty(out, t->inner);
        break;
    case BXC_TY_TUPLE:
        fputc('(', out);
        for (uint32_t i = 0; i < t->elems.len; i++) {
            if (i) fputs(", ", out);
            dump_ty(out, t->elems.items[i]);
        }
        if (t->elems.len == 1) fputc(',', out);
        fputc(')', out);
        break;
    case BXC_TY_ARRAY:
        fputc('[', out);
        dump_ty(out, t->inner);
        fputs("; N]", out);
        break;
    case BXC_TY_SLICE:
        fputc('[', out);
        dump_ty(out, t->inner);
        fputc(']', out);
        break;
    case BXC_TY_ERROR: fputs("<error>", out); break;
    }
}

static void dump_pat(FILE *out, const bxc_pat *p) {
    switch (p->kind) {
    case BXC_PAT_IDENT: fprintf(out, "%s%s", p->is_mut ? "mut " : "", p->name.name); break;
    case BXC_PAT_WILD: fputc('_', out); break;
    case BXC_PAT_TUPLE:
        fputc('(', out);
        for (uint32_t i = 0; i < p->elems.len; i++) {
            if (i) fputs(", ", out);
            dump_pat(out, p->elems.items[i]);
        }
        fputc(')', out);
        break;
    case BXC_PAT_ERROR: fputs("<error>", out); break;
    }
}

static void dump_block(FILE *out, const bxc_block *b, int n);

static void dump_list(FILE *out, const bxc_expr_list *l, int n) {
    for (uint32_t i = 0; i < l->len; i++) bxc_ast_dump_expr(out, l->items[i], n);
}

void bxc_ast_dump_expr(FILE *out, const bxc_expr *e, int n) {
    ind(out, n);
    if (!e) {
        fputs("(none)\n", out);
        return;
    }
    switch (e->kind) {
    case BXC_EXPR_INT: fprintf(out, "(int %s = %" PRIu64 ")\n", e->int_lit.text, e->int_lit.value); return;
    case BXC_EXPR_FLOAT: fprintf(out, "(float %s = %.17g)\n", e->float_lit.text, e->float_lit.value); return;
    case BXC_EXPR_STRING:
        fputs("(string ", out);
        dump_str(out, e->string_lit.value, e->string_lit.len);
        fputs(")\n", out);
        return;
    case BXC_EXPR_BOOL: fprintf(out, "(bool %s)\n", e->bool_lit ? "true" : "false"); return;
    case BXC_EXPR_PATH:
        fputs("(path ", out);
        dump_path(out, e->path);
        fputs(")\n", out);
        return;
    case BXC_EXPR_BREAK: fputs("(break)\n", out); return;
    case BXC_EXPR_CONTINUE: fputs("(continue)\n", out); return;
    case BXC_EXPR_ERROR: fputs("(error)\n", out); return;
    default: break;
    }
    fprintf(out, "(%s", bxc_expr_kind_name(e->kind));
    switch (e->kind) {
    case BXC_EXPR_UNARY:
        fprintf(out, " %s\n", bxc_unop_str(e->unary.op));
        bxc_ast_dump_expr(out, e->unary.operand, n + 1);
        break;
    case BXC_EXPR_BINARY:
        fprintf(out, " %s\n", bxc_binop_str(e->binary.op));
        bxc_ast_dump_expr(out, e->binary.lhs, n + 1);
        bxc_ast_dump_expr(out, e->binary.rhs, n + 1);
        break;
    case BXC_EXPR_ASSIGN:
        fprintf(out, " %s%s\n", e->assign.op == BXC_BIN_NONE ? "" : bxc_binop_str(e->assign.op),
                e->assign.op == BXC_BIN_NONE ? "=" : "=");
        bxc_ast_dump_expr(out, e->assign.target, n + 1);
        bxc_ast_dump_expr(out, e->assign.value, n + 1);
        break;
    case BXC_EXPR_CAST:
        fputc(' ', out);
        dump_ty(out, e->cast.type);
        fputc('\n', out);
        bxc_ast_dump_expr(out, e->cast.expr, n + 1);
        break;
    case BXC_EXPR_CALL:
        fputc('\n', out);
        bxc_ast_dump_expr(out, e->call.callee, n + 1);
        dump_list(out, &e->call.args, n + 1);
        break;
    case BXC_EXPR_METHOD_CALL:
        fprintf(out, " %s\n", e->method_call.method.name);
        bxc_ast_dump_expr(out, e->method_call.receiver, n + 1);
        dump_list(out, &e->method_call.args, n + 1);
        break;
    case BXC_EXPR_FIELD:
        fprintf(out, " %s\n", e->field.name.name);
        bxc_ast_dump_expr(out, e->field.object, n + 1);
        break;
    case BXC_EXPR_TUPLE_FIELD:
        fprintf(out, " %u\n", e->tuple_field.index);
        bxc_ast_dump_expr(out, e->tuple_field.object, n + 1);
        break;
    case BXC_EXPR_INDEX:
        fputc('\n', out);
        bxc_ast_dump_expr(out, e->index.object, n + 1);
        bxc_ast_dump_expr(out, e->index.index, n + 1);
        break;
    case BXC_EXPR_BLOCK:
        fputc('\n', out);
        dump_block(out, e->block, n + 1);
        break;
    case BXC_EXPR_IF:
        fputc('\n', out);
        bxc_ast_dump_expr(out, e->if_.cond, n + 1);
        dump_block(out, e->if_.then_block, n + 1);
        if (e->if_.else_) {
            ind(out, n + 1);
            fputs("(else\n", out);
            bxc_ast_dump_expr(out, e->if_.else_, n + 2);
            ind(out, n + 1);
            fputs(")\n", out);
        }
        break;
    case BXC_EXPR_WHILE:
        fputc('\n', out);
        bxc_ast_dump_expr(out, e->while_.cond, n + 1);
        dump_block(out, e->while_.body, n + 1);
        break;
    case BXC_EXPR_FOR:
        fputc(' ', out);
        dump_pat(out, e->for_.pat);
        fputc('\n', out);
        bxc_ast_dump_expr(out, e->for_.iter, n + 1);
        dump_block(out, e->for_.body, n + 1);
        break;
    case BXC_EXPR_LOOP:
        fputc('\n', out);
        dump_block(out, e->loop_.body, n + 1);
        break;
    case BXC_EXPR_RETURN:
        fputc('\n', out);
        if (e->ret.value) bxc_ast_dump_expr(out, e->ret.value, n + 1);
        break;
    case BXC_EXPR_STRUCT:
        fputc(' ', out);
        dump_path(out, e->struct_lit.path);
        fputc('\n', out);
        for (uint32_t i = 0; i < e->struct_lit.fields.len; i++) {
            const bxc_field_init *f = e->struct_lit.fields.items[i];
            ind(out, n + 1);
            fprintf(out, "(field %s%s\n", f->name.name, f->shorthand ? " shorthand" : "");
            bxc_ast_dump_expr(out, f->value, n + 2);
            ind(out, n + 1);
            fputs(")\n", out);
        }
        break;
    case BXC_EXPR_TUPLE:
        fputc('\n', out);
        dump_list(out, &e->tuple.elems, n + 1);
        break;
    case BXC_EXPR_ARRAY:
        fputc('\n', out);
        dump_list(out, &e->array.elems, n + 1);
        break;
    case BXC_EXPR_CLOSURE:
        for (uint32_t i = 0; i < e->closure.params.len; i++) {
            const bxc_param *p = e->closure.params.items[i];
            fputc(' ', out);
            dump_pat(out, p->pat);
            if (p->type) {
                fputs(": ", out);
                dump_ty(out, p->type);
            }
        }
        if (e->closure.ret) {
            fputs(" -> ", out);
            dump_ty(out, e->closure.ret);
        }
        fputc('\n', out);
        bxc_ast_dump_expr(out, e->closure.body, n + 1);
        break;
    case BXC_EXPR_RANGE:
        fputs(e->range.inclusive ? " ..=\n" : " ..\n", out);
        bxc_ast_dump_expr(out, e->range.start, n + 1);
        bxc_ast_dump_expr(out, e->range.end, n + 1);
        break;
    default:
        fputc('\n', out);
        break;
    }
    ind(out, n);
    fputs(")\n", out);
}

static void dump_block(FILE *out, const bxc_block *b, int n) {
    ind(out, n);
    fputs("{\n", out);
    for (uint32_t i = 0; i < b->stmts.len; i++) {
        const bxc_stmt *s = b->stmts.items[i];
        switch (s->kind) {
        case BXC_STMT_LET:
            ind(out, n + 1);
            fputs("(let ", out);
            dump_pat(out, s->pat);
            if (s->type) {
                fputs(": ", out);
                dump_ty(out, s->type);
            }
            fputc('\n', out);
            if (s->init) bxc_ast_dump_expr(out, s->init, n + 2);
            ind(out, n + 1);
            fputs(")\n", out);
            break;
        case BXC_STMT_EXPR:
            ind(out, n + 1);
            fputs(s->has_semi ? "(stmt;\n" : "(stmt\n", out);
            bxc_ast_dump_expr(out, s->expr, n + 2);
            ind(out, n + 1);
            fputs(")\n", out);
            break;
        case BXC_STMT_EMPTY: ind(out, n + 1); fputs("(empty)\n", out); break;
        case BXC_STMT_ITEM: bxc_ast_dump_item(out, s->item, n + 1); break;
        case BXC_STMT_ERROR: ind(out, n + 1); fputs("(error)\n", out); break;
        }
    }
    if (b->tail) {
        ind(out, n + 1);
        fputs("(value\n", out);
        bxc_ast_dump_expr(out, b->tail, n + 2);
        ind(out, n + 1);
        fputs(")\n", out);
    }
    ind(out, n);
    fputs("}\n", out);
}

static void dump_attr_arg(FILE *out, const bxc_attr_arg *a, int n);

static void dump_attr_args(FILE *out, const bxc_attr_arg_list *l, int n) {
    for (uint32_t i = 0; i < l->len; i++) dump_attr_arg(out, l->items[i], n);
}

static void dump_attr_arg(FILE *out, const bxc_attr_arg *a, int n) {
    ind(out, n);
    switch (a->kind) {
    case BXC_ATTR_ARG_PATH:
        fputs("(arg ", out);
        dump_path(out, a->path);
        fputs(")\n", out);
        return;
    case BXC_ATTR_ARG_STRING:
        fputs("(arg ", out);
        dump_str(out, a->string, a->string_len);
        fputs(")\n", out);
        return;
    case BXC_ATTR_ARG_ASSIGN:
        fputs("(arg ", out);
        dump_path(out, a->path);
        fputs(" =\n", out);
        bxc_ast_dump_expr(out, a->value, n + 1);
        break;
    case BXC_ATTR_ARG_COLON:
        fputs("(arg ", out);
        dump_path(out, a->path);
        fputs(" :\n", out);
        dump_attr_args(out, &a->args, n + 1);
        break;
    case BXC_ATTR_ARG_CALL:
        fputs("(arg ", out);
        dump_path(out, a->path);
        fputs(" (...)\n", out);
        dump_attr_args(out, &a->args, n + 1);
        break;
    }
    ind(out, n);
    fputs(")\n", out);
}

static void dump_attrs(FILE *out, const bxc_attr_list *l, int n) {
    for (uint32_t i = 0; i < l->len; i++) {
        const bxc_attr *a = l->items[i];
        ind(out, n);
        fputs("(attr ", out);
        dump_path(out, a->path);
        if (!a->has_args) {
            fputs(")\n", out);
            continue;
        }
        fputs(" (...)\n", out);
        dump_attr_args(out, &a->args, n + 1);
        ind(out, n);
        fputs(")\n", out);
    }
}

static void dump_generics(FILE *out, const bxc_generic_list *g) {
    if (!g->len) return;
    fputc('<', out);
    for (uint32_t i = 0; i < g->len; i++) {
        const bxc_generic *p = g->items[i];
        fprintf(out, "%s%s", i ? ", " : "", p->name.name);
        for (uint32_t j = 0; j < p->bounds.len; j++) {
            fputs(j ? " + " : ": ", out);
            dump_ty(out, p->bounds.items[j]);
        }
    }
    fputc('>', out);
}

static void dump_fields(FILE *out, const bxc_field_list *l, int n) {
    for (uint32_t i = 0; i < l->len; i++) {
        const bxc_field *f = l->items[i];
        ind(out, n);
        fprintf(out, "(field %s%s: ", f->is_pub ? "pub " : "", f->name.name ? f->name.name : "_");
        dump_ty(out, f->type);
        if (f->attrs.len) {
            fputc('\n', out);
            dump_attrs(out, &f->attrs, n + 1);
            ind(out, n);
        }
        fputs(")\n", out);
    }
}

static void dump_fn(FILE *out, const bxc_fn *f, int n) {
    ind(out, n);
    fprintf(out, "(fn %s%s", f->is_pub ? "pub " : "", f->name.name);
    dump_generics(out, &f->generics);
    fputc('\n', out);
    dump_attrs(out, &f->attrs, n + 1);
    for (uint32_t i = 0; i < f->params.len; i++) {
        const bxc_param *p = f->params.items[i];
        ind(out, n + 1);
        fputs("(param ", out);
        if (p->is_self) fprintf(out, "%sself", p->self_ref ? (p->self_mut ? "&mut " : "&") : "");
        else dump_pat(out, p->pat);
        if (p->type) {
            fputs(": ", out);
            dump_ty(out, p->type);
        }
        fputs(")\n", out);
        if (p->attrs.len) dump_attrs(out, &p->attrs, n + 2);
    }
    ind(out, n + 1);
    fputs("(returns ", out);
    dump_ty(out, f->ret);
    fputs(")\n", out);
    if (f->body) dump_block(out, f->body, n + 1);
    ind(out, n);
    fputs(")\n", out);
}

void bxc_ast_dump_item(FILE *out, const bxc_item *it, int n) {
    ind(out, n);
    const char *pub = it->is_pub ? "pub " : "";
    switch (it->kind) {
    case BXC_ITEM_USE: {
        static const char *const k[] = {"single", "group", "glob", "module"};
        fprintf(out, "(use %s ", k[it->use_.kind]);
        dump_path(out, it->use_.module_path);
        for (uint32_t i = 0; i < it->use_.names.len; i++)
            fprintf(out, " %s", it->use_.names.items[i].name);
        fputs(")\n", out);
        return;
    }
    case BXC_ITEM_TYPE_ALIAS:
        fprintf(out, "(type %s%s", pub, it->name.name);
        dump_generics(out, &it->alias.generics);
        fputs(" = ", out);
        dump_ty(out, it->alias.type);
        fputc('\n', out);
        dump_attrs(out, &it->attrs, n + 1);
        break;
    case BXC_ITEM_STRUCT:
        fprintf(out, "(struct %s%s", pub, it->name.name);
        dump_generics(out, &it->struct_.generics);
        fputs(it->struct_.is_tuple ? " tuple\n" : it->struct_.is_unit ? " unit\n" : "\n", out);
        dump_attrs(out, &it->attrs, n + 1);
        dump_fields(out, &it->struct_.fields, n + 1);
        break;
    case BXC_ITEM_ENUM:
        fprintf(out, "(enum %s%s", pub, it->name.name);
        dump_generics(out, &it->enum_.generics);
        fputc('\n', out);
        dump_attrs(out, &it->attrs, n + 1);
        for (uint32_t i = 0; i < it->enum_.variants.len; i++) {
            const bxc_variant *v = it->enum_.variants.items[i];
            static const char *const k[] = {"unit", "tuple", "struct"};
            ind(out, n + 1);
            fprintf(out, "(variant %s %s\n", v->name.name, k[v->kind]);
            dump_attrs(out, &v->attrs, n + 2);
            dump_fields(out, &v->fields, n + 2);
            ind(out, n + 1);
            fputs(")\n", out);
        }
        break;
    case BXC_ITEM_FN:
        fputs("(item\n", out);
        dump_fn(out, it->fn, n + 1);
        break;
    case BXC_ITEM_TRAIT:
        fprintf(out, "(trait %s%s", pub, it->name.name);
        dump_generics(out, &it->trait.generics);
        for (uint32_t i = 0; i < it->trait.supertraits.len; i++) {
            fputs(i ? " + " : ": ", out);
            dump_ty(out, it->trait.supertraits.items[i]);
        }
        fputc('\n', out);
        dump_attrs(out, &it->attrs, n + 1);
        for (uint32_t i = 0; i < it->trait.methods.len; i++)
            dump_fn(out, it->trait.methods.items[i], n + 1);
        break;
    case BXC_ITEM_IMPL:
        fputs("(impl", out);
        dump_generics(out, &it->impl.generics);
        fputc(' ', out);
        if (it->impl.trait_ty) {
            dump_ty(out, it->impl.trait_ty);
            fputs(" for ", out);
        }
        dump_ty(out, it->impl.self_ty);
        fputc('\n', out);
        dump_attrs(out, &it->attrs, n + 1);
        for (uint32_t i = 0; i < it->impl.methods.len; i++)
            dump_fn(out, it->impl.methods.items[i], n + 1);
        break;
    case BXC_ITEM_ERROR:
        fputs("(error)\n", out);
        return;
    }
    ind(out, n);
    fputs(")\n", out);
}

void bxc_ast_dump(FILE *out, const bxc_file *file) {
    fputs("(file\n", out);
    for (uint32_t i = 0; i < file->items.len; i++)
        bxc_ast_dump_item(out, file->items.items[i], 1);
    if (file->repl) dump_block(out, file->repl, 1);
    fputs(")\n", out);
}

/* ==== builders called by the grammar actions (grammar/parser.y) ==========
 * They take token spans, copy names out of the source into the arena, and
 * compute node spans from their parts.  Expression builders also bound the
 * tree height (left-nested chains like a+a+...+a never grow Lemon's stack,
 * so the bound has to live here); a node past the limit becomes an error
 * placeholder so later passes never recurse deeper than the limit. */

#include <errno.h>
#include <stdlib.h>

#include "lex.h"
#include "parse_int.h"

static const char *tok_text(bxc_pstate *ps, bxc_span s) {
    return ps->src->text + s.offset;
}

bxc_ident bxc_b_ident(bxc_pstate *ps, bxc_span name) {
    return bxc_ast_ident(ps->arena, tok_text(ps, name), name);
}

bxc_path *bxc_b_path1(bxc_pstate *ps, bxc_span name) {
    return bxc_ast_path1(ps->arena, bxc_b_ident(ps, name));
}

bxc_path *bxc_b_path_push(bxc_pstate *ps, bxc_path *p, bxc_span name) {
    return bxc_ast_path_push(ps->arena, p, bxc_b_ident(ps, name));
}

void bxc_b_add_item(bxc_pstate *ps, bxc_item *it) {
    BXC_LIST_PUSH(ps->arena, &ps->file->items, it);
}

void bxc_b_repl_stmt(bxc_pstate *ps, bxc_stmt *s) {
    BXC_LIST_PUSH(ps->arena, &ps->repl_stmts, s);
}

void bxc_b_repl_item(bxc_pstate *ps, bxc_item *it) {
    bxc_b_add_item(ps, it);
    bxc_stmt *s = bxc_ast_stmt(ps->arena, BXC_STMT_ITEM, it->span);
    s->item = it;
    bxc_b_repl_stmt(ps, s);
}

static bxc_span list_span(bxc_pstate *ps, const bxc_stmt_list *l, bxc_expr *tail) {
    bxc_span s = bxc_span_make(ps->src->id, 0, 0);
    if (l->len) s = bxc_span_join(l->items[0]->span, l->items[l->len - 1]->span);
    if (tail) s = l->len ? bxc_span_join(s, tail->span) : tail->span;
    return s;
}

void bxc_b_repl_end(bxc_pstate *ps, bxc_expr *tail) {
    bxc_block *b = bxc_arena_alloc(ps->arena, sizeof *b);
    b->stmts = ps->repl_stmts;
    b->tail = tail;
    /* A trailing `if`/block statement is the value, as at the end of a block. */
    if (!tail && b->stmts.len) {
        bxc_stmt *last = b->stmts.items[b->stmts.len - 1];
        if (last->kind == BXC_STMT_EXPR && !last->has_semi) {
            b->tail = last->expr;
            b->stmts.len--;
        }
    }
    b->span = list_span(ps, &b->stmts, b->tail);
    ps->file->repl = b;
}

void bxc_b_repl_let(bxc_pstate *ps, bxc_span let, bxc_pat *pat, bxc_tyexpr *ty,
                    bxc_expr *init) {
    bxc_b_repl_stmt(ps, bxc_b_let(ps, let, pat, ty, init, init->span));
    bxc_b_repl_end(ps, NULL);
}

/* ---- attributes ---- */

bxc_attr *bxc_b_attr(bxc_pstate *ps, bxc_span hash, bxc_path *path, bool has_args,
                     bxc_attr_arg_list *args, bxc_span end) {
    bxc_attr *a = bxc_arena_alloc(ps->arena, sizeof *a);
    a->path = path;
    a->has_args = has_args;
    if (args) a->args = *args;
    a->span = bxc_span_join(hash, end);
    return a;
}

static bxc_attr_arg *attr_arg(bxc_pstate *ps, bxc_attr_arg_kind k, bxc_path *p,
                              bxc_span span) {
    bxc_attr_arg *a = bxc_arena_alloc(ps->arena, sizeof *a);
    a->kind = k;
    a->path = p;
    a->span = span;
    return a;
}

bxc_attr_arg *bxc_b_attr_path(bxc_pstate *ps, bxc_path *path) {
    return attr_arg(ps, BXC_ATTR_ARG_PATH, path, path->span);
}

bxc_attr_arg *bxc_b_attr_string(bxc_pstate *ps, bxc_span str) {
    bxc_attr_arg *a = attr_arg(ps, BXC_ATTR_ARG_STRING, NULL, str);
    a->string = bxc_lex_decode_string(ps->arena, tok_text(ps, str), str.length,
                                      &a->string_len);
    return a;
}

bxc_attr_arg *bxc_b_attr_assign(bxc_pstate *ps, bxc_path *name, bxc_expr *value) {
    bxc_attr_arg *a = attr_arg(ps, BXC_ATTR_ARG_ASSIGN, name,
                               bxc_span_join(name->span, value->span));
    a->value = value;
    return a;
}

bxc_attr_arg *bxc_b_attr_colon(bxc_pstate *ps, bxc_path *name, bxc_attr_arg *arg) {
    bxc_attr_arg *a = attr_arg(ps, BXC_ATTR_ARG_COLON, name,
                               bxc_span_join(name->span, arg->span));
    BXC_LIST_PUSH(ps->arena, &a->args, arg);
    return a;
}

bxc_attr_arg *bxc_b_attr_call(bxc_pstate *ps, bxc_path *name,
                              bxc_attr_arg_list *args, bxc_span end) {
    bxc_attr_arg *a = attr_arg(ps, BXC_ATTR_ARG_CALL, name, bxc_span_join(name->span, end));
    a->args = *args;
    return a;
}

/* ---- items ---- */

static bxc_item *item(bxc_pstate *ps, bxc_item_kind k, bxc_attr_list *attrs,
                      bool pub, bxc_span kw, bxc_span end) {
    bxc_span span = bxc_span_join(kw, end);
    if (attrs && attrs->len) span = bxc_span_join(attrs->items[0]->span, span);
    bxc_item *it = bxc_ast_item(ps->arena, k, span);
    if (attrs) it->attrs = *attrs;
    it->is_pub = pub;
    return it;
}

bxc_item *bxc_b_use(bxc_pstate *ps, bxc_attr_list *attrs, bool pub, bxc_span kw,
                    bxc_use_kind kind, bxc_path *path, bxc_ident_list *names,
                    bxc_span end) {
    bxc_item *it = item(ps, BXC_ITEM_USE, attrs, pub, kw, end);
    it->use_.kind = kind;
    if (kind == BXC_USE_SINGLE) {
        /* `use a::b::c;` imports c from a::b; `use a;` names a module. */
        if (path->segs.len == 1) {
            it->use_.kind = BXC_USE_MODULE;
            it->use_.module_path = path;
        } else {
            bxc_path *mp = bxc_arena_alloc(ps->arena, sizeof *mp);
            for (uint32_t i = 0; i + 1 < path->segs.len; i++)
                BXC_LIST_PUSH(ps->arena, &mp->segs, path->segs.items[i]);
            mp->span = bxc_span_join(mp->segs.items[0].span,
                                     mp->segs.items[mp->segs.len - 1].span);
            it->use_.module_path = mp;
            BXC_LIST_PUSH(ps->arena, &it->use_.names, path->segs.items[path->segs.len - 1]);
        }
    } else {
        it->use_.module_path = path;
        if (names) it->use_.names = *names;
    }
    return it;
}

bxc_item *bxc_b_alias(bxc_pstate *ps, bxc_attr_list *attrs, bool pub, bxc_span kw,
                      bxc_span name, bxc_generic_list *g, bxc_tyexpr *ty, bxc_span end) {
    bxc_item *it = item(ps, BXC_ITEM_TYPE_ALIAS, attrs, pub, kw, end);
    it->name = bxc_b_ident(ps, name);
    it->alias.generics = *g;
    it->alias.type = ty;
    return it;
}

bxc_item *bxc_b_struct(bxc_pstate *ps, bxc_attr_list *attrs, bool pub, bxc_span kw,
                       bxc_span name, bxc_generic_list *g, bxc_field_list *fields,
                       int shape, bxc_span end) {
    bxc_item *it = item(ps, BXC_ITEM_STRUCT, attrs, pub, kw, end);
    it->name = bxc_b_ident(ps, name);
    it->struct_.generics = *g;
    it->struct_.is_tuple = shape == 1;
    it->struct_.is_unit = shape == 2;
    if (fields) it->struct_.fields = *fields;
    return it;
}

bxc_item *bxc_b_enum(bxc_pstate *ps, bxc_attr_list *attrs, bool pub, bxc_span kw,
                     bxc_span name, bxc_generic_list *g, bxc_variant_list *vs,
                     bxc_span end) {
    bxc_item *it = item(ps, BXC_ITEM_ENUM, attrs, pub, kw, end);
    it->name = bxc_b_ident(ps, name);
    it->enum_.generics = *g;
    it->enum_.variants = *vs;
    return it;
}

bxc_item *bxc_b_fn_item(bxc_pstate *ps, bxc_fn *fn) {
    bxc_item *it = bxc_ast_item(ps->arena, BXC_ITEM_FN, fn->span);
    it->attrs = fn->attrs;
    it->is_pub = fn->is_pub;
    it->name = fn->name;
    it->fn = fn;
    return it;
}

bxc_item *bxc_b_trait(bxc_pstate *ps, bxc_attr_list *attrs, bool pub, bxc_span kw,
                      bxc_span name, bxc_generic_list *g, bxc_tyexpr_list *supers,
                      bxc_fn_list *methods, bxc_span end) {
    bxc_item *it = item(ps, BXC_ITEM_TRAIT, attrs, pub, kw, end);
    it->name = bxc_b_ident(ps, name);
    it->trait.generics = *g;
    it->trait.supertraits = *supers;
    it->trait.methods = *methods;
    return it;
}

bxc_item *bxc_b_impl(bxc_pstate *ps, bxc_attr_list *attrs, bxc_span kw,
                     bxc_generic_list *g, bxc_tyexpr *trait_ty, bxc_tyexpr *self_ty,
                     bxc_fn_list *methods, bxc_span end) {
    bxc_item *it = item(ps, BXC_ITEM_IMPL, attrs, false, kw, end);
    it->impl.generics = *g;
    it->impl.trait_ty = trait_ty;
    it->impl.self_ty = self_ty;
    it->impl.methods = *methods;
    return it;
}

bxc_generic *bxc_b_generic(bxc_pstate *ps, bxc_span name, bxc_tyexpr_list *bounds) {
    bxc_generic *g = bxc_arena_alloc(ps->arena, sizeof *g);
    g->name = bxc_b_ident(ps, name);
    g->span = name;
    if (bounds) {
        g->bounds = *bounds;
        if (bounds->len)
            g->span = bxc_span_join(name, bounds->items[bounds->len - 1]->span);
    }
    return g;
}

bxc_field *bxc_b_field(bxc_pstate *ps, bxc_attr_list *attrs, bool pub,
                       const bxc_span *name, bxc_tyexpr *ty) {
    bxc_field *f = bxc_arena_alloc(ps->arena, sizeof *f);
    f->attrs = *attrs;
    f->is_pub = pub;
    if (name) f->name = bxc_b_ident(ps, *name);
    f->type = ty;
    f->span = name ? bxc_span_join(*name, ty->span) : ty->span;
    return f;
}

bxc_variant *bxc_b_variant(bxc_pstate *ps, bxc_attr_list *attrs, bxc_span name,
                           bxc_variant_kind kind, bxc_field_list *fields, bxc_span end) {
    bxc_variant *v = bxc_arena_alloc(ps->arena, sizeof *v);
    v->attrs = *attrs;
    v->kind = kind;
    v->name = bxc_b_ident(ps, name);
    if (fields) v->fields = *fields;
    v->span = bxc_span_join(name, end);
    return v;
}

bxc_fn *bxc_b_fn(bxc_pstate *ps, bxc_attr_list *attrs, bool pub, bxc_span kw,
                 bxc_span name, bxc_generic_list *g, bxc_param_list *params,
                 bxc_tyexpr *ret, bxc_block *body, bxc_span end) {
    bxc_fn *f = bxc_arena_alloc(ps->arena, sizeof *f);
    f->attrs = *attrs;
    f->is_pub = pub;
    f->name = bxc_b_ident(ps, name);
    f->generics = *g;
    f->params = *params;
    f->ret = ret;
    f->body = body;
    f->span = bxc_span_join(kw, end);
    return f;
}

bxc_param *bxc_b_param(bxc_pstate *ps, bxc_attr_list *attrs, bxc_pat *pat,
                       bxc_tyexpr *ty) {
    bxc_param *p = bxc_arena_alloc(ps->arena, sizeof *p);
    if (attrs) p->attrs = *attrs;
    p->pat = pat;
    p->type = ty;
    p->span = ty ? bxc_span_join(pat->span, ty->span) : pat->span;
    return p;
}

bxc_param *bxc_b_self_param(bxc_pstate *ps, bxc_attr_list *attrs, bxc_span start,
                            bool is_ref, bool is_mut, bxc_pat *pat) {
    bxc_param *p = bxc_b_param(ps, attrs, pat, NULL);
    p->span = bxc_span_join(start, pat->span);
    /* Only `self` may omit its type in a fn signature. */
    if (pat->kind == BXC_PAT_IDENT && strcmp(pat->name.name, "self") == 0) {
        p->is_self = true;
        p->self_ref = is_ref;
        p->self_mut = is_mut;
    } else {
        bxc_diag *d = bxc_diag_error(ps->diags, BXC_E_SYNTAX, pat->span,
                                     "expected `:` and a type after parameter `%s`",
                                     pat->kind == BXC_PAT_IDENT ? pat->name.name : "_");
        bxc_diag_set_help(ps->diags, d, "write `name: Type`");
    }
    return p;
}

/* ---- types ---- */

bxc_tyexpr *bxc_b_ty_path(bxc_pstate *ps, bxc_path *p, bxc_tyexpr_list *args,
                          bxc_span end) {
    bxc_tyexpr *t = bxc_ast_tyexpr(ps->arena, BXC_TY_PATH, bxc_span_join(p->span, end));
    t->path = p;
    if (args) t->args = *args;
    return t;
}

bxc_tyexpr *bxc_b_ty_ref(bxc_pstate *ps, bxc_span amp, bool is_mut, bxc_tyexpr *inner) {
    bxc_tyexpr *t = bxc_ast_tyexpr(ps->arena, BXC_TY_REF, bxc_span_join(amp, inner->span));
    t->inner = inner;
    t->is_mut = is_mut;
    return t;
}

bxc_tyexpr *bxc_b_ty_tuple(bxc_pstate *ps, bxc_span l, bxc_tyexpr_list *elems,
                           bxc_span r) {
    bxc_tyexpr *t = bxc_ast_tyexpr(ps->arena, BXC_TY_TUPLE, bxc_span_join(l, r));
    if (elems) t->elems = *elems;
    return t;
}

bxc_tyexpr *bxc_b_ty_tuple1(bxc_pstate *ps, bxc_span l, bxc_tyexpr *first, bxc_span r) {
    bxc_tyexpr *t = bxc_b_ty_tuple(ps, l, NULL, r);
    BXC_LIST_PUSH(ps->arena, &t->elems, first);
    return t;
}

bxc_tyexpr *bxc_b_ty_tuple2(bxc_pstate *ps, bxc_span l, bxc_tyexpr *first,
                            bxc_tyexpr_list *rest, bxc_span r) {
    bxc_tyexpr *t = bxc_b_ty_tuple1(ps, l, first, r);
    for (uint32_t i = 0; i < rest->len; i++) BXC_LIST_PUSH(ps->arena, &t->elems, rest->items[i]);
    return t;
}

bxc_tyexpr *bxc_b_ty_slice(bxc_pstate *ps, bxc_span l, bxc_tyexpr *inner,
                           bxc_expr *len, bxc_span r) {
    bxc_tyexpr *t = bxc_ast_tyexpr(ps->arena, len ? BXC_TY_ARRAY : BXC_TY_SLICE,
                                   bxc_span_join(l, r));
    t->inner = inner;
    t->len = len;
    return t;
}

/* ---- patterns ---- */

bxc_pat *bxc_b_pat_ident(bxc_pstate *ps, bxc_span start, bxc_span name, bool is_mut) {
    bxc_ident id = bxc_b_ident(ps, name);
    bool wild = !is_mut && strcmp(id.name, "_") == 0;
    bxc_pat *p = bxc_ast_pat(ps->arena, wild ? BXC_PAT_WILD : BXC_PAT_IDENT,
                             bxc_span_join(start, name));
    p->name = id;
    p->is_mut = is_mut;
    return p;
}

bxc_pat *bxc_b_pat_tuple(bxc_pstate *ps, bxc_span l, bxc_pat_list *elems, bxc_span r) {
    bxc_pat *p = bxc_ast_pat(ps->arena, BXC_PAT_TUPLE, bxc_span_join(l, r));
    if (elems) p->elems = *elems;
    return p;
}

/* ---- statements ---- */

bxc_block *bxc_b_block(bxc_pstate *ps, bxc_span l, bxc_stmt_list *stmts,
                       bxc_expr *tail, bxc_span r) {
    bxc_block *b = bxc_arena_alloc(ps->arena, sizeof *b);
    b->stmts = *stmts;
    b->tail = tail;
    b->span = bxc_span_join(l, r);
    /* `{ ...; if c { a } else { b } }`: the grammar ends the statement at
     * the block-like expression; as the last thing in a block it is the
     * block's value (Rust's rule). */
    if (!tail && b->stmts.len) {
        bxc_stmt *last = b->stmts.items[b->stmts.len - 1];
        if (last->kind == BXC_STMT_EXPR && !last->has_semi) {
            b->tail = last->expr;
            b->stmts.len--;
        }
    }
    return b;
}

bxc_stmt *bxc_b_empty_stmt(bxc_pstate *ps, bxc_span semi) {
    return bxc_ast_stmt(ps->arena, BXC_STMT_EMPTY, semi);
}

bxc_stmt *bxc_b_let(bxc_pstate *ps, bxc_span let, bxc_pat *pat, bxc_tyexpr *ty,
                    bxc_expr *init, bxc_span end) {
    bxc_stmt *s = bxc_ast_stmt(ps->arena, BXC_STMT_LET, bxc_span_join(let, end));
    s->pat = pat;
    s->type = ty;
    s->init = init;
    s->has_semi = true;
    return s;
}

bxc_stmt *bxc_b_expr_stmt(bxc_pstate *ps, bxc_expr *e, bool semi, bxc_span end) {
    bxc_stmt *s = bxc_ast_stmt(ps->arena, BXC_STMT_EXPR, bxc_span_join(e->span, end));
    s->expr = e;
    s->has_semi = semi;
    return s;
}

bxc_stmt *bxc_b_error_stmt(bxc_pstate *ps) {
    return bxc_ast_stmt(ps->arena, BXC_STMT_ERROR, bxc_span_make(ps->src->id, 0, 0));
}

/* ---- expressions ---- */

/* Finishes a node: computes its height and replaces it by an error node
 * when it is too tall (reported once per file). */
static bxc_expr *fin(bxc_pstate *ps, bxc_expr *e) {
    if (bxc_ast_expr_update_depth(e) > BXC_MAX_EXPR_DEPTH) {
        bxc_ps_too_deep(ps, e->span, BXC_MAX_EXPR_DEPTH);
        bxc_expr *err = bxc_ast_expr(ps->arena, BXC_EXPR_ERROR, e->span);
        return err;
    }
    return e;
}

static bxc_expr *mk(bxc_pstate *ps, bxc_expr_kind k, bxc_span span) {
    return bxc_ast_expr(ps->arena, k, span);
}

bxc_expr *bxc_b_block_expr(bxc_pstate *ps, bxc_block *b) {
    bxc_expr *e = mk(ps, BXC_EXPR_BLOCK, b->span);
    e->block = b;
    return fin(ps, e);
}

bxc_expr *bxc_b_if(bxc_pstate *ps, bxc_span kw, bxc_expr *cond, bxc_block *then_b,
                   bxc_expr *else_e) {
    bxc_expr *e = mk(ps, BXC_EXPR_IF, bxc_span_join(kw, else_e ? else_e->span : then_b->span));
    e->if_.cond = cond;
    e->if_.then_block = then_b;
    e->if_.else_ = else_e;
    return fin(ps, e);
}

bxc_expr *bxc_b_while(bxc_pstate *ps, bxc_span kw, bxc_expr *cond, bxc_block *body) {
    bxc_expr *e = mk(ps, BXC_EXPR_WHILE, bxc_span_join(kw, body->span));
    e->while_.cond = cond;
    e->while_.body = body;
    return fin(ps, e);
}

bxc_expr *bxc_b_for(bxc_pstate *ps, bxc_span kw, bxc_pat *pat, bxc_expr *iter,
                    bxc_block *body) {
    bxc_expr *e = mk(ps, BXC_EXPR_FOR, bxc_span_join(kw, body->span));
    e->for_.pat = pat;
    e->for_.iter = iter;
    e->for_.body = body;
    return fin(ps, e);
}

bxc_expr *bxc_b_loop(bxc_pstate *ps, bxc_span kw, bxc_block *body) {
    bxc_expr *e = mk(ps, BXC_EXPR_LOOP, bxc_span_join(kw, body->span));
    e->loop_.body = body;
    return fin(ps, e);
}

bxc_expr *bxc_b_int(bxc_pstate *ps, bxc_span t) {
    bxc_expr *e = mk(ps, BXC_EXPR_INT, t);
    const char *s = tok_text(ps, t);
    e->int_lit.text = bxc_arena_strndup(ps->arena, s, t.length);
    unsigned base = 10;
    uint32_t i = 0;
    if (t.length > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) base = 16, i = 2;
    else if (t.length > 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) base = 2, i = 2;
    else if (t.length > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'O')) base = 8, i = 2;
    uint64_t v = 0;
    bool overflow = false, any = false;
    for (; i < t.length; i++) {
        char c = s[i];
        if (c == '_') continue;
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                   : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                   : (unsigned)(c - 'A' + 10);
        if (d >= base) break;   /* the lexer only passes valid digits */
        any = true;
        if (v > (UINT64_MAX - d) / base) overflow = true;
        v = v * base + d;
    }
    if (!any) {
        bxc_diag_error(ps->diags, BXC_E_BAD_NUMBER, t, "number literal `%s` has no digits",
                       e->int_lit.text);
    } else if (overflow) {
        bxc_diag *d = bxc_diag_error(ps->diags, BXC_E_INT_TOO_LARGE, t,
                                     "integer literal `%s` does not fit in 64 bits",
                                     e->int_lit.text);
        bxc_diag_set_help(ps->diags, d, "the largest integer literal is %" PRIu64, UINT64_MAX);
        v = 0;
    }
    e->int_lit.value = v;
    return e;
}

bxc_expr *bxc_b_float(bxc_pstate *ps, bxc_span t) {
    bxc_expr *e = mk(ps, BXC_EXPR_FLOAT, t);
    e->float_lit.text = bxc_arena_strndup(ps->arena, tok_text(ps, t), t.length);
    /* strtod does not know `_` separators. */
    char *clean = bxc_arena_alloc(ps->arena, t.length + 1);
    uint32_t n = 0;
    for (uint32_t i = 0; i < t.length; i++)
        if (e->float_lit.text[i] != '_') clean[n++] = e->float_lit.text[i];
    clean[n] = '\0';
    e->float_lit.value = strtod(clean, NULL);
    return e;
}

bxc_expr *bxc_b_string(bxc_pstate *ps, bxc_span t) {
    bxc_expr *e = mk(ps, BXC_EXPR_STRING, t);
    e->string_lit.value = bxc_lex_decode_string(ps->arena, tok_text(ps, t), t.length,
                                                &e->string_lit.len);
    return e;
}

bxc_expr *bxc_b_bool(bxc_pstate *ps, bxc_span t, bool v) {
    bxc_expr *e = mk(ps, BXC_EXPR_BOOL, t);
    e->bool_lit = v;
    return e;
}

bxc_expr *bxc_b_path_expr(bxc_pstate *ps, bxc_path *p) {
    bxc_expr *e = mk(ps, BXC_EXPR_PATH, p->span);
    e->path = p;
    return e;
}

bxc_expr *bxc_b_struct_lit(bxc_pstate *ps, bxc_path *p, bxc_field_init_list *f,
                           bxc_span r) {
    bxc_expr *e = mk(ps, BXC_EXPR_STRUCT, bxc_span_join(p->span, r));
    e->struct_lit.path = p;
    e->struct_lit.fields = *f;
    return fin(ps, e);
}

bxc_expr *bxc_b_tuple(bxc_pstate *ps, bxc_span l, bxc_expr *first,
                      bxc_expr_list *rest, bxc_span r) {
    bxc_expr *e = mk(ps, BXC_EXPR_TUPLE, bxc_span_join(l, r));
    if (first) BXC_LIST_PUSH(ps->arena, &e->tuple.elems, first);
    if (rest)
        for (uint32_t i = 0; i < rest->len; i++)
            BXC_LIST_PUSH(ps->arena, &e->tuple.elems, rest->items[i]);
    return fin(ps, e);
}

bxc_expr *bxc_b_paren(bxc_pstate *ps, bxc_span l, bxc_expr *e, bxc_span r) {
    /* Parentheses only group: the inner node is the result (its span stays
     * the inner one, which is what diagnostics should underline). */
    (void)ps;
    (void)l;
    (void)r;
    return e;
}

bxc_expr *bxc_b_array(bxc_pstate *ps, bxc_span l, bxc_expr_list *elems, bxc_span r) {
    bxc_expr *e = mk(ps, BXC_EXPR_ARRAY, bxc_span_join(l, r));
    if (elems) e->array.elems = *elems;
    return fin(ps, e);
}

bxc_expr *bxc_b_unary(bxc_pstate *ps, bxc_span op_span, bxc_unop op, bxc_expr *x) {
    bxc_expr *e = mk(ps, BXC_EXPR_UNARY, bxc_span_join(op_span, x->span));
    e->unary.op = op;
    e->unary.operand = x;
    return fin(ps, e);
}

bxc_expr *bxc_b_binary(bxc_pstate *ps, bxc_binop op, bxc_expr *l, bxc_expr *r) {
    bxc_expr *e = mk(ps, BXC_EXPR_BINARY, bxc_span_join(l->span, r->span));
    e->binary.op = op;
    e->binary.lhs = l;
    e->binary.rhs = r;
    return fin(ps, e);
}

bxc_expr *bxc_b_range(bxc_pstate *ps, bxc_expr *l, bxc_expr *r, bool inclusive) {
    bxc_expr *e = mk(ps, BXC_EXPR_RANGE, bxc_span_join(l->span, r->span));
    e->range.start = l;
    e->range.end = r;
    e->range.inclusive = inclusive;
    return fin(ps, e);
}

bxc_expr *bxc_b_assign(bxc_pstate *ps, bxc_binop op, bxc_expr *l, bxc_expr *r) {
    bxc_expr *e = mk(ps, BXC_EXPR_ASSIGN, bxc_span_join(l->span, r->span));
    e->assign.op = op;
    e->assign.target = l;
    e->assign.value = r;
    return fin(ps, e);
}

bxc_expr *bxc_b_cast(bxc_pstate *ps, bxc_expr *x, bxc_tyexpr *ty) {
    bxc_expr *e = mk(ps, BXC_EXPR_CAST, bxc_span_join(x->span, ty->span));
    e->cast.expr = x;
    e->cast.type = ty;
    return fin(ps, e);
}

bxc_expr *bxc_b_call(bxc_pstate *ps, bxc_expr *f, bxc_expr_list *args, bxc_span r) {
    bxc_expr *e = mk(ps, BXC_EXPR_CALL, bxc_span_join(f->span, r));
    e->call.callee = f;
    e->call.args = *args;
    return fin(ps, e);
}

bxc_expr *bxc_b_method(bxc_pstate *ps, bxc_expr *recv, bxc_span name,
                       bxc_expr_list *args, bxc_span r) {
    bxc_expr *e = mk(ps, BXC_EXPR_METHOD_CALL, bxc_span_join(recv->span, r));
    e->method_call.receiver = recv;
    e->method_call.method = bxc_b_ident(ps, name);
    e->method_call.args = *args;
    return fin(ps, e);
}

bxc_expr *bxc_b_field_access(bxc_pstate *ps, bxc_expr *obj, bxc_span name) {
    bxc_expr *e = mk(ps, BXC_EXPR_FIELD, bxc_span_join(obj->span, name));
    e->field.object = obj;
    e->field.name = bxc_b_ident(ps, name);
    return fin(ps, e);
}

bxc_expr *bxc_b_tuple_field(bxc_pstate *ps, bxc_expr *obj, bxc_span index) {
    bxc_expr *e = mk(ps, BXC_EXPR_TUPLE_FIELD, bxc_span_join(obj->span, index));
    e->tuple_field.object = obj;
    e->tuple_field.index_span = index;
    const char *s = tok_text(ps, index);
    uint64_t v = 0;
    bool ok = index.length > 0;
    for (uint32_t i = 0; i < index.length && ok; i++) {
        if (s[i] < '0' || s[i] > '9') ok = false;
        else if ((v = v * 10 + (uint64_t)(s[i] - '0')) > UINT32_MAX) ok = false;
    }
    if (!ok)
        bxc_diag_error(ps->diags, BXC_E_SYNTAX, index, "invalid tuple index `%.*s`",
                       (int)(index.length > 40 ? 40 : index.length), s);
    e->tuple_field.index = ok ? (uint32_t)v : 0;
    return fin(ps, e);
}

bxc_expr *bxc_b_index(bxc_pstate *ps, bxc_expr *obj, bxc_expr *idx, bxc_span r) {
    bxc_expr *e = mk(ps, BXC_EXPR_INDEX, bxc_span_join(obj->span, r));
    e->index.object = obj;
    e->index.index = idx;
    return fin(ps, e);
}

bxc_expr *bxc_b_return(bxc_pstate *ps, bxc_span kw, bxc_expr *value) {
    bxc_expr *e = mk(ps, BXC_EXPR_RETURN, value ? bxc_span_join(kw, value->span) : kw);
    e->ret.value = value;
    return fin(ps, e);
}

bxc_expr *bxc_b_jump(bxc_pstate *ps, bxc_expr_kind kind, bxc_span kw) {
    return mk(ps, kind, kw);
}

bxc_expr *bxc_b_closure(bxc_pstate *ps, bxc_span l, bxc_param_list *params,
                        bxc_tyexpr *ret, bxc_expr *body) {
    bxc_expr *e = mk(ps, BXC_EXPR_CLOSURE, bxc_span_join(l, body->span));
    if (params) e->closure.params = *params;
    e->closure.ret = ret;
    e->closure.body = body;
    return fin(ps, e);
}

bxc_field_init *bxc_b_field_init(bxc_pstate *ps, bxc_span name, bxc_expr *value) {
    bxc_field_init *f = bxc_arena_alloc(ps->arena, sizeof *f);
    f->name = bxc_b_ident(ps, name);
    if (!value) {
        /* `Name { b }` is `Name { b: b }`. */
        f->shorthand = true;
        value = bxc_b_path_expr(ps, bxc_b_path1(ps, name));
    }
    f->value = value;
    f->span = bxc_span_join(name, value->span);
    return f;
}
