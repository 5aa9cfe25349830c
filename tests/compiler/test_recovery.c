/* test_recovery.c — syntax errors: one run reports each separate error,
 * with "expected X, found Y", and recovers at item, member and statement
 * level. */
#include <criterion/criterion.h>

#include "fe_util.h"

Test(recovery, three_separate_errors_three_reports) {
    fe f;
    fe_init(&f);
    fe_parse(&f,
             "fn a() -> u32 {\n    let x = ;\n    x\n}\n\n"
             "struct S {\n    a: u32\n    b: u32,\n}\n\n"
             "fn c(x: u32) -> u32 {\n    x + + 2\n}\n\n"
             "fn ok() {}\n");
    cr_assert_eq(f.diags.errors, 3, "%s", fe_text(&f.diags, &f.sources));
    uint32_t line;
    bxc_source_position(f.src, f.diags.items[0].span.offset, &line, NULL);
    cr_assert_eq(line, 2);
    bxc_source_position(f.src, f.diags.items[1].span.offset, &line, NULL);
    cr_assert_eq(line, 8);
    bxc_source_position(f.src, f.diags.items[2].span.offset, &line, NULL);
    cr_assert_eq(line, 12);
    cr_assert_str_eq(f.diags.items[0].message, "expected expression, found `;`");
    cr_assert_not_null(strstr(f.diags.items[1].message, "`,`"), "%s", f.diags.items[1].message);
    cr_assert_not_null(strstr(f.diags.items[1].message, "found identifier `b`"));
    /* The parse went on: the last fn is in the tree. */
    bxc_item *last = f.file->items.items[f.file->items.len - 1];
    cr_assert_str_eq(last->name.name, "ok");
    fe_free(&f);
}

Test(recovery, trait_members) {
    fe f;
    fe_init(&f);
    fe_parse(&f,
             "trait T: Backend {\n"
             "    fn a(x: ) -> FloatTensor;\n"
             "    fn b(x: FloatTensor) -> FloatTensor;\n"
             "    #[fusion(dtype = )]\n"
             "    fn c(x: FloatTensor) -> FloatTensor;\n"
             "}\n");
    cr_assert_eq(f.diags.errors, 2, "%s", fe_text(&f.diags, &f.sources));
    cr_assert_eq(f.file->items.len, 1);
    bxc_item *t = f.file->items.items[0];
    cr_assert_eq(t->kind, BXC_ITEM_TRAIT);
    /* b and c survive (c without its broken attribute). */
    cr_assert_geq(t->trait.methods.len, 2);
    cr_assert_str_eq(t->trait.methods.items[t->trait.methods.len - 1]->name.name, "c");
    fe_free(&f);
}

Test(recovery, unexpected_eof_names_it) {
    fe f;
    fe_init(&f);
    fe_parse(&f, "fn f() {\n  let x = 1;\n");
    cr_assert_eq(f.diags.errors, 1);
    cr_assert_str_eq(f.diags.items[0].code, "E0103");
    cr_assert_not_null(strstr(f.diags.items[0].message, "found end of file"));
    cr_assert_not_null(strstr(f.diags.items[0].message, "`}`"));
    fe_free(&f);
}

Test(recovery, struct_literal_in_head_gets_help) {
    fe f;
    fe_init(&f);
    fe_parse(&f, "fn f() { if x == S { a: 1 } { } }");
    cr_assert_geq(f.diags.errors, 1);
    fe_free(&f);
}

Test(recovery, many_errors_are_bounded) {
    fe f;
    fe_init(&f);
    /* 500 broken items: the list caps, then says so once. */
    const char *one = "fn f() { let = 1; }\n";
    size_t cap = 500 * strlen(one) + 1;
    char *src = malloc(cap);
    src[0] = 0;
    for (int i = 0; i < 500; i++) strcat(src, one);
    fe_parse(&f, src);
    cr_assert(f.diags.truncated);
    cr_assert_eq(f.diags.count, BXC_DIAG_DEFAULT_LIMIT + 1);
    cr_assert_eq(f.diags.errors, 500 + 1);   /* all counted, 100 kept + the cap entry */
    free(src);
    fe_free(&f);
}

Test(recovery, missing_semicolon_points_after_previous_token) {
    fe f;
    fe_init(&f);
    fe_parse(&f, "fn f() {\n    let a = 1\n    let b = 2;\n}\n");
    cr_assert_eq(f.diags.errors, 1);
    uint32_t line, col;
    bxc_source_position(f.src, f.diags.items[0].span.offset, &line, &col);
    cr_assert_eq(line, 2);
    cr_assert_eq(col, 14);                     /* right after `1` */
    cr_assert_str_eq(f.diags.items[0].message, "expected operator or `;`, found `let`");
    cr_assert_str_eq(f.diags.items[0].help, "add `;` here");
    fe_free(&f);
}

Test(recovery, expected_type) {
    fe f;
    fe_init(&f);
    fe_parse(&f, "fn g() -> { }\n");
    cr_assert_eq(f.diags.errors, 1);
    cr_assert_str_eq(f.diags.items[0].message, "expected type, found `{`");
    fe_free(&f);
}
