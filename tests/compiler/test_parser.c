/* test_parser.c — the Lemon grammar: the language.md examples parse, and the
 * tree has the shape Rust's rules give (precedence, struct literals in
 * heads, block-like statements, attributes as data, REPL input). */
#include <criterion/criterion.h>
#include <dirent.h>

#include "fe_util.h"

static void parse_dir_clean(const char *sub, int min_files) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/compiler/%s", fe_srcdir(), sub);
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "cannot open %s", dir);
    int files = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".bext") != 0) continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        fe f;
        fe_init(&f);
        char err[512];
        bxc_source *src = bxc_sources_load(&f.sources, path, err, sizeof err);
        cr_assert_not_null(src, "%s", err);
        bxc_file *file = bxc_parse_file(&f.arena, &f.diags, src);
        char *txt = fe_text(&f.diags, &f.sources);
        cr_expect_eq(f.diags.count, 0, "%s:\n%s", e->d_name, txt);
        cr_expect_gt(file->items.len, 0, "%s has no items", e->d_name);
        free(txt);
        fe_free(&f);
        files++;
    }
    closedir(d);
    cr_assert_geq(files, min_files, "only %d files in %s", files, dir);
}

Test(parser, language_examples_parse) { parse_dir_clean("lang", 4); }
Test(parser, future_sections_parse) { parse_dir_clean("parse_only", 1); }

Test(parser, precedence) {
    fe f;
    fe_init(&f);
    fe_parse(&f, "fn f() -> bool { a + b * c == d && !e || f as u32 < g }");
    cr_assert_eq(f.diags.count, 0);
    bxc_expr *e = fe_tail(f.file);
    cr_assert_eq(e->kind, BXC_EXPR_BINARY);
    cr_assert_eq(e->binary.op, BXC_BIN_OR);
    bxc_expr *l = e->binary.lhs;
    cr_assert_eq(l->binary.op, BXC_BIN_AND);
    cr_assert_eq(l->binary.lhs->binary.op, BXC_BIN_EQ);
    bxc_expr *sum = l->binary.lhs->binary.lhs;
    cr_assert_eq(sum->binary.op, BXC_BIN_ADD);
    cr_assert_eq(sum->binary.rhs->binary.op, BXC_BIN_MUL);
    cr_assert_eq(l->binary.rhs->kind, BXC_EXPR_UNARY);
    bxc_expr *cmp = e->binary.rhs;          /* (f as u32) < g */
    cr_assert_eq(cmp->binary.op, BXC_BIN_LT);
    cr_assert_eq(cmp->binary.lhs->kind, BXC_EXPR_CAST);
    fe_free(&f);
}

Test(parser, unary_binds_tighter_than_binary_looser_than_postfix) {
    fe f;
    fe_init(&f);
    fe_parse(&f, "fn f() -> i64 { -a.b(1)[2] * *c }");
    cr_assert_eq(f.diags.count, 0);
    bxc_expr *e = fe_tail(f.file);
    cr_assert_eq(e->binary.op, BXC_BIN_MUL);
    bxc_expr *neg = e->binary.lhs;
    cr_assert_eq(neg->kind, BXC_EXPR_UNARY);
    cr_assert_eq(neg->unary.op, BXC_UN_NEG);
    cr_assert_eq(neg->unary.operand->kind, BXC_EXPR_INDEX);
    cr_assert_eq(neg->unary.operand->index.object->kind, BXC_EXPR_METHOD_CALL);
    cr_assert_eq(e->binary.rhs->unary.op, BXC_UN_DEREF);
    fe_free(&f);
}

Test(parser, assignment_is_right_associative_and_compound) {
    fe f;
    fe_init(&f);
    fe_parse(&f, "fn f() { a = b = c; s[i] += 1; }");
    cr_assert_eq(f.diags.count, 0);
    const bxc_block *b = f.file->items.items[0]->fn->body;
    cr_assert_eq(b->stmts.len, 2);
    bxc_expr *a = b->stmts.items[0]->expr;
    cr_assert_eq(a->kind, BXC_EXPR_ASSIGN);
    cr_assert_eq(a->assign.value->kind, BXC_EXPR_ASSIGN);
    bxc_expr *c = b->stmts.items[1]->expr;
    cr_assert_eq(c->assign.op, BXC_BIN_ADD);
    cr_assert_eq(c->assign.target->kind, BXC_EXPR_INDEX);
    fe_free(&f);
}

Test(parser, struct_literal_not_in_if_head) {
    fe f;
    fe_init(&f);
    /* `if a { b }`: a is the condition, `{ b }` the block. */
    fe_parse(&f, "fn f() -> u32 { if a { b } else { c } }");
    cr_assert_eq(f.diags.count, 0);
    bxc_expr *e = fe_tail(f.file);
    cr_assert_eq(e->kind, BXC_EXPR_IF);
    cr_assert_eq(e->if_.cond->kind, BXC_EXPR_PATH);
    cr_assert_not_null(e->if_.else_);
    fe_free(&f);

    fe_init(&f);
    /* Inside parentheses a struct literal is fine again. */
    fe_parse(&f, "fn f() { while ok(S { a: 1 }) { x = P { a, b: 2 }; } for i in 0..n { } }");
    cr_assert_eq(f.diags.count, 0, "%s", fe_text(&f.diags, &f.sources));
    fe_free(&f);
}

Test(parser, struct_and_enum_literals) {
    fe f;
    fe_init(&f);
    fe_parse(&f, "fn f() -> M { PacketMetadata::Float { tensor: t, mode } }");
    cr_assert_eq(f.diags.count, 0);
    bxc_expr *e = fe_tail(f.file);
    cr_assert_eq(e->kind, BXC_EXPR_STRUCT);
    cr_assert_eq(e->struct_lit.path->segs.len, 2);
    cr_assert_str_eq(e->struct_lit.path->segs.items[1].name, "Float");
    cr_assert_eq(e->struct_lit.fields.len, 2);
    cr_assert(!e->struct_lit.fields.items[0]->shorthand);
    cr_assert(e->struct_lit.fields.items[1]->shorthand);
    cr_assert_eq(e->struct_lit.fields.items[1]->value->kind, BXC_EXPR_PATH);
    fe_free(&f);
}

Test(parser, block_like_statements_need_no_semicolon) {
    fe f;
    fe_init(&f);
    fe_parse(&f, "fn f() -> u32 { if a { b(); } while c { } -1 }");
    cr_assert_eq(f.diags.count, 0, "%s", fe_text(&f.diags, &f.sources));
    const bxc_block *b = f.file->items.items[0]->fn->body;
    cr_assert_eq(b->stmts.len, 2);              /* if, while */
    cr_assert_eq(b->tail->kind, BXC_EXPR_UNARY); /* -1, not (while..) - 1 */
    fe_free(&f);

    fe_init(&f);
    /* A trailing if/else is the block's value. */
    fe_parse(&f, "fn f() -> u32 { let x = 1; if x > 0 { 1 } else { 2 } }");
    cr_assert_eq(f.diags.count, 0);
    b = f.file->items.items[0]->fn->body;
    cr_assert_eq(b->stmts.len, 1);
    cr_assert_not_null(b->tail);
    cr_assert_eq(b->tail->kind, BXC_EXPR_IF);
    fe_free(&f);
}

Test(parser, tuples_fields_and_ranges) {
    fe f;
    fe_init(&f);
    fe_parse(&f, "fn f() { let (a, mut b) = (1, (2,), ()); t.0.1; x.y; 0..n; [2, 3]; }");
    cr_assert_eq(f.diags.count, 0, "%s", fe_text(&f.diags, &f.sources));
    const bxc_block *b = f.file->items.items[0]->fn->body;
    cr_assert_eq(b->stmts.items[0]->pat->kind, BXC_PAT_TUPLE);
    cr_assert(b->stmts.items[0]->pat->elems.items[1]->is_mut);
    bxc_expr *tup = b->stmts.items[0]->init;
    cr_assert_eq(tup->tuple.elems.len, 3);
    cr_assert_eq(tup->tuple.elems.items[1]->kind, BXC_EXPR_TUPLE);
    cr_assert_eq(tup->tuple.elems.items[1]->tuple.elems.len, 1);
    cr_assert_eq(tup->tuple.elems.items[2]->tuple.elems.len, 0);
    bxc_expr *tf = b->stmts.items[1]->expr;
    cr_assert_eq(tf->kind, BXC_EXPR_TUPLE_FIELD);
    cr_assert_eq(tf->tuple_field.index, 1);
    cr_assert_eq(tf->tuple_field.object->tuple_field.index, 0);
    cr_assert_eq(b->stmts.items[2]->expr->kind, BXC_EXPR_FIELD);
    cr_assert_eq(b->stmts.items[3]->expr->kind, BXC_EXPR_RANGE);
    cr_assert_eq(b->stmts.items[4]->expr->kind, BXC_EXPR_ARRAY);
    fe_free(&f);
}

Test(parser, closures) {
    fe f;
    fe_init(&f);
    fe_parse(&f, "fn f() { let g = |a, b: &Shape| a + b; let h = || 1; }");
    cr_assert_eq(f.diags.count, 0);
    const bxc_block *b = f.file->items.items[0]->fn->body;
    bxc_expr *g = b->stmts.items[0]->init;
    cr_assert_eq(g->kind, BXC_EXPR_CLOSURE);
    cr_assert_eq(g->closure.params.len, 2);
    cr_assert_null(g->closure.params.items[0]->type);
    cr_assert_not_null(g->closure.params.items[1]->type);
    cr_assert_eq(g->closure.body->kind, BXC_EXPR_BINARY);  /* body extends */
    cr_assert_eq(b->stmts.items[1]->init->closure.params.len, 0);
    fe_free(&f);
}

Test(parser, literal_values) {
    fe f;
    fe_init(&f);
    fe_parse(&f, "fn f() { (1_000, 0xff, 0b101, 2.5e1, \"a\\tb\", true); }");
    cr_assert_eq(f.diags.count, 0);
    bxc_expr *t = f.file->items.items[0]->fn->body->stmts.items[0]->expr;
    cr_assert_eq(t->tuple.elems.items[0]->int_lit.value, 1000);
    cr_assert_str_eq(t->tuple.elems.items[0]->int_lit.text, "1_000");
    cr_assert_eq(t->tuple.elems.items[1]->int_lit.value, 255);
    cr_assert_eq(t->tuple.elems.items[2]->int_lit.value, 5);
    cr_assert_float_eq(t->tuple.elems.items[3]->float_lit.value, 25.0, 1e-12);
    cr_assert_str_eq(t->tuple.elems.items[4]->string_lit.value, "a\tb");
    cr_assert(t->tuple.elems.items[5]->bool_lit);
    fe_free(&f);
}

Test(parser, integer_too_large) {
    fe f;
    fe_init(&f);
    fe_parse(&f, "fn f() { 18446744073709551615; 18446744073709551616; }");
    cr_assert_eq(f.diags.errors, 1);
    cr_assert_str_eq(f.diags.items[0].code, "E0007");
    fe_free(&f);
}

Test(parser, attributes_are_data) {
    fe f;
    fe_init(&f);
    fe_parse(&f,
             "#[backend_extension(Cube, NdArray: cfg(feature = \"x\"), \"s\")]\n"
             "trait T: Backend { #[fusion(meta = |x| x.clone(), id = \"n\")] fn m(x: FloatTensor) -> FloatTensor; "
             "#[cfg(any())] fn n(); }");
    cr_assert_eq(f.diags.count, 0, "%s", fe_text(&f.diags, &f.sources));
    bxc_item *t = f.file->items.items[0];
    cr_assert_eq(t->kind, BXC_ITEM_TRAIT);
    cr_assert_eq(t->trait.supertraits.len, 1);
    bxc_attr *a = t->attrs.items[0];
    cr_assert_str_eq(a->path->segs.items[0].name, "backend_extension");
    cr_assert_eq(a->args.len, 3);
    cr_assert_eq(a->args.items[0]->kind, BXC_ATTR_ARG_PATH);
    bxc_attr_arg *nd = a->args.items[1];
    cr_assert_eq(nd->kind, BXC_ATTR_ARG_COLON);
    cr_assert_eq(nd->args.items[0]->kind, BXC_ATTR_ARG_CALL);
    bxc_attr_arg *feat = nd->args.items[0]->args.items[0];
    cr_assert_eq(feat->kind, BXC_ATTR_ARG_ASSIGN);
    cr_assert_eq(feat->value->kind, BXC_EXPR_STRING);
    cr_assert_eq(a->args.items[2]->kind, BXC_ATTR_ARG_STRING);
    cr_assert_str_eq(a->args.items[2]->string, "s");
    bxc_fn *m = t->trait.methods.items[0];
    cr_assert_eq(m->attrs.items[0]->args.items[0]->value->kind, BXC_EXPR_CLOSURE);
    cr_assert_null(m->body);
    bxc_attr *cfg = t->trait.methods.items[1]->attrs.items[0];
    cr_assert(cfg->has_args);
    cr_assert_eq(cfg->args.items[0]->kind, BXC_ATTR_ARG_CALL);
    cr_assert_eq(cfg->args.items[0]->args.len, 0);
    fe_free(&f);
}

Test(parser, items_and_types) {
    fe f;
    fe_init(&f);
    fe_parse(&f,
             "use std::shape::{broadcast, matmul_shape};\nuse a::b::c;\nuse m;\nuse x::y::*;\n"
             "type A = (u32, &mut T, [u8; 4], (), Vec<Box<T>>);\n"
             "struct U; struct P(u32, #[extension_type] Q);\n"
             "enum E<B: Backend + Clone> { A, B(u32), C { x: u32 }, }\n"
             "fn g<F: Float>(x: &Tensor<F>, y: &mut Tensor<F>) {}\n"
             "impl Tr for Cube { fn m(&self) -> u32 { 1 } }\n"
             "impl S { fn n(&mut self, k: u32) {} }\n");
    cr_assert_eq(f.diags.count, 0, "%s", fe_text(&f.diags, &f.sources));
    bxc_item **it = f.file->items.items;
    cr_assert_eq(it[0]->use_.kind, BXC_USE_GROUP);
    cr_assert_eq(it[0]->use_.module_path->segs.len, 2);
    cr_assert_eq(it[0]->use_.names.len, 2);
    cr_assert_eq(it[1]->use_.kind, BXC_USE_SINGLE);
    cr_assert_str_eq(it[1]->use_.names.items[0].name, "c");
    cr_assert_eq(it[2]->use_.kind, BXC_USE_MODULE);
    cr_assert_eq(it[3]->use_.kind, BXC_USE_GLOB);
    bxc_tyexpr *ty = it[4]->alias.type;
    cr_assert_eq(ty->kind, BXC_TY_TUPLE);
    cr_assert_eq(ty->elems.len, 5);
    cr_assert_eq(ty->elems.items[1]->kind, BXC_TY_REF);
    cr_assert(ty->elems.items[1]->is_mut);
    cr_assert_eq(ty->elems.items[2]->kind, BXC_TY_ARRAY);
    cr_assert_eq(ty->elems.items[3]->elems.len, 0);
    cr_assert_eq(ty->elems.items[4]->args.items[0]->args.len, 1);
    cr_assert(it[5]->struct_.is_unit);
    cr_assert(it[6]->struct_.is_tuple);
    cr_assert_eq(it[6]->struct_.fields.items[1]->attrs.len, 1);
    cr_assert_eq(it[7]->enum_.variants.len, 3);
    cr_assert_eq(it[7]->enum_.generics.items[0]->bounds.len, 2);
    cr_assert_eq(it[7]->enum_.variants.items[1]->kind, BXC_VARIANT_TUPLE);
    cr_assert_eq(it[7]->enum_.variants.items[2]->kind, BXC_VARIANT_STRUCT);
    cr_assert_eq(it[8]->fn->generics.len, 1);
    cr_assert(it[8]->fn->params.items[1]->type->is_mut);
    cr_assert_not_null(it[9]->impl.trait_ty);
    cr_assert(it[9]->impl.methods.items[0]->params.items[0]->is_self);
    cr_assert_null(it[10]->impl.trait_ty);
    cr_assert(it[10]->impl.methods.items[0]->params.items[0]->self_mut);
    fe_free(&f);
}

Test(parser, spans_cover_nodes) {
    fe f;
    fe_init(&f);
    const char *src = "fn f() -> u32 { foo(1, 2) + bar }";
    fe_parse(&f, src);
    bxc_expr *e = fe_tail(f.file);
    cr_assert_eq(e->span.offset, (uint32_t)(strstr(src, "foo") - src));
    cr_assert_eq(e->span.length, strlen("foo(1, 2) + bar"));
    cr_assert_eq(e->binary.lhs->span.length, strlen("foo(1, 2)"));
    fe_free(&f);
}

Test(parser, repl_mode) {
    fe f;
    fe_init(&f);
    const char *src = "fn g(x: u32) -> u32 { x }\nlet x = TensorSpec::new([2, 3], DType::F32);\njoined(&x.shape, &[4, 3], &0)";
    fe_parse_n(&f, src, strlen(src), BXC_PARSE_REPL);
    cr_assert_eq(f.diags.count, 0, "%s", fe_text(&f.diags, &f.sources));
    cr_assert_eq(f.file->items.len, 1);
    cr_assert_not_null(f.file->repl);
    cr_assert_eq(f.file->repl->stmts.len, 2);       /* the fn item, the let */
    cr_assert_eq(f.file->repl->stmts.items[0]->kind, BXC_STMT_ITEM);
    cr_assert_eq(f.file->repl->tail->kind, BXC_EXPR_CALL);
    fe_free(&f);

    fe_init(&f);
    const char *src2 = "let y = 3";                  /* no `;` needed at the end */
    fe_parse_n(&f, src2, strlen(src2), BXC_PARSE_REPL);
    cr_assert_eq(f.diags.count, 0);
    cr_assert_eq(f.file->repl->stmts.len, 1);
    cr_assert_eq(f.file->repl->stmts.items[0]->kind, BXC_STMT_LET);
    cr_assert_null(f.file->repl->tail);
    fe_free(&f);
}

Test(parser, dump_is_stable) {
    fe f;
    fe_init(&f);
    fe_parse(&f, "fn f(a: u32) -> u32 { a * 2 }");
    char *d = fe_dump(f.file);
    cr_assert_not_null(strstr(d, "(fn f\n"));
    cr_assert_not_null(strstr(d, "(param a: u32)"));
    cr_assert_not_null(strstr(d, "(binary *\n"));
    cr_assert_not_null(strstr(d, "(int 2 = 2)"));
    free(d);
    fe_free(&f);
}
