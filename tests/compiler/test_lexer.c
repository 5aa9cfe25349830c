/* test_lexer.c — the re2c lexer: tokens, comments, literals, bad bytes. */
#include <criterion/criterion.h>

#include "fe_util.h"
#include "parser.h"

/* Lexes `text` into kinds (at most cap); returns the count without EOF. */
static int lex_all(fe *f, const char *text, size_t len, int *kinds, bxc_span *spans, int cap) {
    f->src = bxc_sources_add_memory(&f->sources, "t.bext", text, len);
    bxc_lexer lx;
    bxc_lex_init(&lx, f->src, &f->diags);
    int n = 0;
    for (;;) {
        bxc_token t = bxc_lex_next(&lx);
        if (t.kind == BXC_TK_EOF) break;
        if (n < cap) {
            kinds[n] = t.kind;
            if (spans) spans[n] = t.span;
        }
        n++;
    }
    return n;
}

Test(lexer, punctuation_and_keywords) {
    fe f;
    fe_init(&f);
    const char *src = "fn f(a: &mut T) -> u32 { let x = a.0 ..= b .. c :: d; x += 1 }";
    int k[64];
    int n = lex_all(&f, src, strlen(src), k, NULL, 64);
    int want[] = {TK_FN, TK_IDENT, TK_LPAREN, TK_IDENT, TK_COLON, TK_AMP, TK_MUT, TK_IDENT,
                  TK_RPAREN, TK_ARROW, TK_IDENT, TK_LBRACE, TK_LET, TK_IDENT, TK_EQ,
                  TK_IDENT, TK_DOT, TK_INT, TK_DOTDOTEQ, TK_IDENT, TK_DOTDOT, TK_IDENT,
                  TK_COLONCOLON, TK_IDENT, TK_SEMI, TK_IDENT, TK_PLUSEQ, TK_INT, TK_RBRACE};
    cr_assert_eq(n, (int)(sizeof want / sizeof want[0]));
    for (int i = 0; i < n; i++) cr_assert_eq(k[i], want[i], "token %d: %d != %d", i, k[i], want[i]);
    cr_assert_eq(f.diags.count, 0);
    fe_free(&f);
}

Test(lexer, comments_nested_and_doc) {
    fe f;
    fe_init(&f);
    const char *src = "/// doc\n//! inner doc\n/* a /* nested */ still comment */ x /** doc */ y // tail";
    int k[8];
    int n = lex_all(&f, src, strlen(src), k, NULL, 8);
    cr_assert_eq(n, 2);
    cr_assert_eq(k[0], TK_IDENT);
    cr_assert_eq(k[1], TK_IDENT);
    cr_assert_eq(f.diags.count, 0);
    fe_free(&f);
}

Test(lexer, numbers) {
    fe f;
    fe_init(&f);
    const char *src = "1_000 0x1F 0b101 0o17 2.5 1e5 1.5e-3 0..n t.0.1 2.max";
    int k[32];
    bxc_span s[32];
    int n = lex_all(&f, src, strlen(src), k, s, 32);
    int want[] = {TK_INT, TK_INT, TK_INT, TK_INT, TK_FLOAT, TK_FLOAT, TK_FLOAT,
                  TK_INT, TK_DOTDOT, TK_IDENT,
                  TK_IDENT, TK_DOT, TK_INT, TK_DOT, TK_INT,   /* t.0.1: tuple indexes */
                  TK_INT, TK_DOT, TK_IDENT};
    cr_assert_eq(n, (int)(sizeof want / sizeof want[0]));
    for (int i = 0; i < n; i++) cr_assert_eq(k[i], want[i], "token %d", i);
    cr_assert_eq(s[0].length, 5);
    fe_free(&f);
}

Test(lexer, generics_close_without_shift_token) {
    fe f;
    fe_init(&f);
    const char *src = "A<B<C>>";
    int k[8];
    int n = lex_all(&f, src, strlen(src), k, NULL, 8);
    cr_assert_eq(n, 7);
    cr_assert_eq(k[5], TK_GT);
    cr_assert_eq(k[6], TK_GT);
    fe_free(&f);
}

Test(lexer, string_escapes_decode) {
    fe f;
    fe_init(&f);
    const char *src = "\"a\\n\\t\\\"\\\\\\x41\\u{e9}\\u{1F600}\"";
    int k[4];
    bxc_span s[4];
    int n = lex_all(&f, src, strlen(src), k, s, 4);
    cr_assert_eq(n, 1);
    cr_assert_eq(k[0], TK_STRING);
    cr_assert_eq(f.diags.count, 0);
    uint32_t len;
    char *v = bxc_lex_decode_string(&f.arena, src + s[0].offset, s[0].length, &len);
    cr_assert_str_eq(v, "a\n\t\"\\A\xC3\xA9\xF0\x9F\x98\x80");
    cr_assert_eq(len, strlen(v));
    fe_free(&f);
}

Test(lexer, bad_escape_and_surrogate) {
    fe f;
    fe_init(&f);
    const char *src = "\"\\q\" \"\\u{D800}\" x";
    int k[4];
    int n = lex_all(&f, src, strlen(src), k, NULL, 4);
    cr_assert_eq(n, 3);                 /* both strings still tokens, then x */
    cr_assert_eq(f.diags.errors, 2);
    cr_assert_str_eq(f.diags.items[0].code, "E0006");
    cr_assert_str_eq(f.diags.items[1].code, "E0006");
    fe_free(&f);
}

Test(lexer, bad_bytes_are_reported_and_skipped) {
    fe f;
    fe_init(&f);
    const char src[] = "a \0 b \xff c $ d";
    int k[8];
    bxc_span s[8];
    int n = lex_all(&f, src, sizeof src - 1, k, s, 8);
    cr_assert_eq(n, 4);                 /* a b c d */
    for (int i = 0; i < 4; i++) cr_assert_eq(k[i], TK_IDENT);
    cr_assert_eq(f.diags.errors, 3);
    cr_assert_str_eq(f.diags.items[0].code, "E0001");   /* NUL */
    cr_assert_eq(f.diags.items[0].span.offset, 2);
    cr_assert_str_eq(f.diags.items[1].code, "E0002");   /* invalid UTF-8 */
    cr_assert_str_eq(f.diags.items[2].code, "E0003");   /* stray `$` */
    fe_free(&f);
}

Test(lexer, non_ascii_identifier_reported_once) {
    fe f;
    fe_init(&f);
    const char *src = "fn f() { let caf\xC3\xA9 = 1; }";
    fe_parse(&f, src);
    cr_assert_eq(f.diags.errors, 1, "got %u errors", f.diags.errors);
    cr_assert_str_eq(f.diags.items[0].code, "E0003");
    fe_free(&f);
}

Test(lexer, utf8_inside_strings_and_comments_is_fine) {
    fe f;
    fe_init(&f);
    const char *src = "// h\xC3\xA9llo \xE2\x82\xAC\n\"w\xC3\xB6rld \xF0\x9F\x98\x80\" /* \xE6\x97\xA5 */";
    int k[4];
    int n = lex_all(&f, src, strlen(src), k, NULL, 4);
    cr_assert_eq(n, 1);
    cr_assert_eq(f.diags.count, 0);
    fe_free(&f);
}

Test(lexer, invalid_utf8_in_string_and_comment) {
    fe f;
    fe_init(&f);
    const char *src = "\"a\xC0\xAF\" // \xED\xA0\x80\n";   /* overlong, surrogate */
    int k[4];
    int n = lex_all(&f, src, strlen(src), k, NULL, 4);
    cr_assert_eq(n, 1);
    cr_assert_geq(f.diags.errors, 2);
    for (uint32_t i = 0; i < f.diags.count; i++) cr_assert_str_eq(f.diags.items[i].code, "E0002");
    fe_free(&f);
}

Test(lexer, unterminated_string_and_comment) {
    fe f;
    fe_init(&f);
    const char *src = "x \"abc";
    int k[4];
    int n = lex_all(&f, src, strlen(src), k, NULL, 4);
    cr_assert_eq(n, 2);
    cr_assert_eq(f.diags.errors, 1);
    cr_assert_str_eq(f.diags.items[0].code, "E0004");
    fe_free(&f);

    fe_init(&f);
    const char *src2 = "x /* a /* b */ c";
    n = lex_all(&f, src2, strlen(src2), k, NULL, 4);
    cr_assert_eq(n, 1);
    cr_assert_eq(f.diags.errors, 1);
    cr_assert_str_eq(f.diags.items[0].code, "E0005");
    fe_free(&f);
}

Test(lexer, eof_is_sticky) {
    fe f;
    fe_init(&f);
    f.src = bxc_sources_add_memory(&f.sources, "t.bext", "x", 1);
    bxc_lexer lx;
    bxc_lex_init(&lx, f.src, &f.diags);
    cr_assert_eq(bxc_lex_next(&lx).kind, TK_IDENT);
    for (int i = 0; i < 3; i++) {
        bxc_token t = bxc_lex_next(&lx);
        cr_assert_eq(t.kind, BXC_TK_EOF);
        cr_assert_eq(t.span.offset, 1);
    }
    fe_free(&f);
}

Test(lexer, token_names) {
    cr_assert_str_eq(bxc_token_name(TK_SEMI), "`;`");
    cr_assert_str_eq(bxc_token_name(TK_IDENT), "identifier");
    cr_assert_str_eq(bxc_token_name(BXC_TK_EOF), "end of file");
    cr_assert(bxc_token_is_keyword(TK_FN));
    cr_assert(!bxc_token_is_keyword(TK_IDENT));
}
