/* test_badinput.c — hostile input never crashes, hangs or grows without
 * bound: NUL bytes, invalid UTF-8, unterminated literals, a 1 MB line,
 * deep nesting, empty input; every case yields located errors. */
#include <criterion/criterion.h>

#include "fe_util.h"

static void parse_bytes(fe *f, const char *bytes, size_t n) {
    fe_parse_n(f, bytes, n, BXC_PARSE_FILE);
    /* Both renderers must cope with whatever was reported. */
    char *t = fe_text(&f->diags, &f->sources);
    char *j = bxc_diag_render_json(&f->diags, &f->sources);
    cr_assert_not_null(t);
    cr_assert_not_null(j);
    free(t);
    free(j);
}

Test(badinput, empty_and_whitespace) {
    fe f;
    fe_init(&f);
    parse_bytes(&f, "", 0);
    cr_assert_eq(f.diags.count, 0);
    cr_assert_eq(f.file->items.len, 0);
    fe_free(&f);
    fe_init(&f);
    parse_bytes(&f, " \n\t// only a comment\n", 20);
    cr_assert_eq(f.diags.count, 0);
    fe_free(&f);
}

Test(badinput, nul_bytes) {
    fe f;
    fe_init(&f);
    const char src[] = "fn f() {\0\0 }\0";
    parse_bytes(&f, src, sizeof src - 1);
    cr_assert_eq(f.diags.errors, 3);
    for (int i = 0; i < 3; i++) cr_assert_str_eq(f.diags.items[i].code, "E0001");
    cr_assert_eq(f.file->items.len, 1);   /* the fn itself is intact */
    fe_free(&f);
}

Test(badinput, invalid_utf8_everywhere) {
    fe f;
    fe_init(&f);
    const char src[] = "\xff\xfe fn f() { \"\xc3\x28\" } // \x80\n/* \xf8 */";
    parse_bytes(&f, src, sizeof src - 1);
    cr_assert_geq(f.diags.errors, 4);
    for (uint32_t i = 0; i < f.diags.count; i++)
        cr_assert_str_eq(f.diags.items[i].code, "E0002", "diag %u: %s", i, f.diags.items[i].message);
    fe_free(&f);
}

Test(badinput, unterminated_string_reports_once) {
    fe f;
    fe_init(&f);
    parse_bytes(&f, "fn f() { let s = \"abc\n", 22);
    cr_assert_eq(f.diags.errors, 1, "%s", fe_text(&f.diags, &f.sources));
    cr_assert_str_eq(f.diags.items[0].code, "E0004");
    fe_free(&f);
}

Test(badinput, unterminated_comment_reports_once) {
    fe f;
    fe_init(&f);
    parse_bytes(&f, "fn f() {} /* /* */", 18);
    cr_assert_eq(f.diags.errors, 1, "%s", fe_text(&f.diags, &f.sources));
    cr_assert_str_eq(f.diags.items[0].code, "E0005");
    fe_free(&f);
}

Test(badinput, one_megabyte_line) {
    fe f;
    fe_init(&f);
    size_t n = 1 << 20;
    char *src = malloc(n + 64);
    strcpy(src, "fn f() -> u32 { ");
    size_t k = strlen(src);
    while (k < n) {                     /* `1+1+1+...` on one line */
        src[k++] = '1';
        src[k++] = '+';
    }
    strcpy(src + k, "1 }");
    parse_bytes(&f, src, strlen(src));
    /* 500k terms exceed the expression height limit: one located error. */
    cr_assert_eq(f.diags.errors, 1);
    cr_assert_str_eq(f.diags.items[0].code, "E0102");
    free(src);
    fe_free(&f);
}

Test(badinput, long_valid_line) {
    fe f;
    fe_init(&f);
    size_t n = 1 << 20;
    char *src = malloc(n + 64);
    strcpy(src, "fn f() { let s = \"");
    size_t k = strlen(src);
    memset(src + k, 'x', n);
    strcpy(src + k + n, "\"; }");
    parse_bytes(&f, src, strlen(src));
    cr_assert_eq(f.diags.count, 0);
    free(src);
    fe_free(&f);
}

static void deep(const char *open, const char *mid, const char *close, int times) {
    fe f;
    fe_init(&f);
    size_t lo = strlen(open), lc = strlen(close);
    size_t n = 32 + times * (lo + lc) + strlen(mid);
    char *src = malloc(n);
    char *p = src;
    p += sprintf(p, "fn f() { ");
    for (int i = 0; i < times; i++) p += sprintf(p, "%s", open);
    p += sprintf(p, "%s", mid);
    for (int i = 0; i < times; i++) p += sprintf(p, "%s", close);
    sprintf(p, " }");
    parse_bytes(&f, src, strlen(src));
    cr_assert_eq(f.diags.errors, 1, "%s x%d: %s", open, times, fe_text(&f.diags, &f.sources));
    cr_assert_str_eq(f.diags.items[0].code, "E0102");
    cr_assert_not_null(strstr(f.diags.items[0].message, "nested too deeply (limit"));
    free(src);
    fe_free(&f);
}

Test(badinput, deep_nesting) {
    deep("(", "1", ")", 100000);
    deep("[", "1", "]", 5000);
    deep("{", "1", "}", 5000);
    deep("-", "1", "", 1000000);
    deep("!", "x", "", 100000);
    deep("f(", "1", ")", 3000);
    deep("if a { ", "1", " }", 3000);
    deep("|x| ", "1", "", 100000);
    deep("", "a", ".b", 100000);
    deep("", "a", "[0]", 100000);
}

Test(badinput, deep_types) {
    fe f;
    fe_init(&f);
    size_t n = 300000;
    char *src = malloc(n + 32);
    strcpy(src, "type T = ");
    size_t k = strlen(src);
    memset(src + k, '&', n);
    strcpy(src + k + n, "u32;");
    parse_bytes(&f, src, strlen(src));
    cr_assert_eq(f.diags.errors, 1);
    cr_assert_str_eq(f.diags.items[0].code, "E0102");
    free(src);
    fe_free(&f);
}

Test(badinput, nesting_within_limit_is_fine) {
    fe f;
    fe_init(&f);
    char src[2048];
    char *p = src;
    p += sprintf(p, "fn f() -> u32 { ");
    for (int i = 0; i < 200; i++) *p++ = '(';
    *p++ = '1';
    for (int i = 0; i < 200; i++) *p++ = ')';
    strcpy(p, " }");
    parse_bytes(&f, src, strlen(src));
    cr_assert_eq(f.diags.count, 0, "%s", fe_text(&f.diags, &f.sources));
    fe_free(&f);
}

Test(badinput, random_bytes_terminate) {
    /* A fixed pseudo-random byte soup, biased towards punctuation. */
    const char alphabet[] = "(){}[]<>;:,.=+-*/&|!#\"' \n\tfnletifx01\\\x80\xff";
    uint32_t seed = 12345;
    for (int round = 0; round < 50; round++) {
        char buf[4096];
        for (size_t i = 0; i < sizeof buf; i++) {
            seed = seed * 1103515245u + 12345u;
            buf[i] = alphabet[(seed >> 16) % (sizeof alphabet - 1)];
        }
        fe f;
        fe_init(&f);
        parse_bytes(&f, buf, sizeof buf);
        cr_assert_leq(f.diags.count, BXC_DIAG_DEFAULT_LIMIT + 1);
        fe_free(&f);
    }
}
