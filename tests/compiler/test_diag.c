/* test_diag.c — diagnostics as data and their renderers: the §10 text
 * format with caret, JSON fields, line/column with multi-byte UTF-8, the
 * bounded list. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "bxk.h"
#include "fe_util.h"

Test(diag, text_format_matches_language_md) {
    fe f;
    fe_init(&f);
    const char *src = "// x\n\n\n\n\n\n    #[backend_extension(Wgpu, Fusion)]\n";
    bxc_source *s = bxc_sources_add_memory(&f.sources, "ext.bext", src, strlen(src));
    uint32_t off = (uint32_t)(strstr(src, "Wgpu") - src);
    bxc_diag *d = bxc_diag_error(&f.diags, CHK_E_SELECTOR, bxc_span_make(s->id, off, 4),
                                 "`Wgpu` is not a backend selector");
    bxc_diag_set_help(&f.diags, d, "WGPU is a Cube runtime: write `Cube`");
    char *txt = fe_text(&f.diags, &f.sources);
    cr_assert_str_eq(txt,
                     "ext.bext:7:25: error[E0505]: `Wgpu` is not a backend selector\n"
                     "    #[backend_extension(Wgpu, Fusion)]\n"
                     "                        ^~~~\n"
                     "help: WGPU is a Cube runtime: write `Cube`\n");
    free(txt);
    fe_free(&f);
}

Test(diag, notes_and_fileless) {
    fe f;
    fe_init(&f);
    bxc_source *s = bxc_sources_add_memory(&f.sources, "a.bext", "x y\n", 4);
    bxc_diag *d = bxc_diag_error(&f.diags, BXC_E_SYNTAX, bxc_span_make(s->id, 2, 1), "bad y");
    bxc_diag_add_note(&f.diags, d, bxc_span_make(s->id, 0, 1), "x was here");
    bxc_diag_error(&f.diags, BXC_E_FILE_UNREADABLE, bxc_span_none(), "cannot read `q`");
    bxc_diag_warning(&f.diags, BXC_E_SYNTAX, bxc_span_make(s->id, 0, 1), "careful");
    cr_assert_eq(f.diags.errors, 2);
    cr_assert_eq(f.diags.warnings, 1);
    char *txt = fe_text(&f.diags, &f.sources);
    cr_assert_str_eq(txt,
                     "a.bext:1:3: error[E0101]: bad y\n"
                     "x y\n"
                     "  ^\n"
                     "a.bext:1:1: note: x was here\n"
                     "x y\n"
                     "^\n"
                     "bextc: error[E0201]: cannot read `q`\n"
                     "a.bext:1:1: warning[E0101]: careful\n"
                     "x y\n"
                     "^\n");
    free(txt);
    fe_free(&f);
}

Test(diag, utf8_columns_and_caret) {
    fe f;
    fe_init(&f);
    /* "é" is 2 bytes, "😀" 4 bytes (2 UTF-16 units). */
    const char *src = "let s = \"\xC3\xA9\xF0\x9F\x98\x80\"; bad\n";
    bxc_source *s = bxc_sources_add_memory(&f.sources, "u.bext", src, strlen(src));
    uint32_t off = (uint32_t)(strstr(src, "bad") - src);
    uint32_t line, col;
    bxc_source_position(s, off, &line, &col);
    cr_assert_eq(line, 1);
    cr_assert_eq(col, off + 1);                         /* byte column */
    cr_assert_eq(bxc_source_utf16_column(s, off), 16);  /* 1 + 9 + 1 + 2 + 3 */
    bxc_diag_error(&f.diags, BXC_E_SYNTAX, bxc_span_make(s->id, off, 3), "bad");
    char *txt = fe_text(&f.diags, &f.sources);
    /* One caret column per character, not per byte. */
    const char *caret = strstr(txt, "\n              ^~~\n");   /* 14 columns */
    cr_assert_not_null(caret, "%s", txt);
    free(txt);
    fe_free(&f);
}

Test(diag, json_fields) {
    fe f;
    fe_init(&f);
    const char *src = "ab\n  c\xC3\xA9 d\n";
    bxc_source *s = bxc_sources_add_memory(&f.sources, "j.bext", src, strlen(src));
    uint32_t off = (uint32_t)(strstr(src, "d\n") - src);
    bxc_diag *d = bxc_diag_error(&f.diags, BXC_E_SYNTAX, bxc_span_make(s->id, off, 1),
                                 "expected `;`, found `d`");
    bxc_diag_set_help(&f.diags, d, "add \";\"");
    bxc_diag_error(&f.diags, BXC_E_FILE_UNREADABLE, bxc_span_none(), "no file");
    char *js = bxc_diag_render_json(&f.diags, &f.sources);
    cJSON *root = cJSON_Parse(js);
    cr_assert_not_null(root, "invalid JSON: %s", js);
    cr_assert(cJSON_IsArray(root));
    cr_assert_eq(cJSON_GetArraySize(root), 2);
    cJSON *o = cJSON_GetArrayItem(root, 0);
    cr_assert_str_eq(cJSON_GetObjectItem(o, "file")->valuestring, "j.bext");
    cr_assert_eq(cJSON_GetObjectItem(o, "line")->valueint, 2);
    cr_assert_eq(cJSON_GetObjectItem(o, "column")->valueint, 7);   /* bytes: "  cé " */
    cr_assert_eq(cJSON_GetObjectItem(o, "end_line")->valueint, 2);
    cr_assert_eq(cJSON_GetObjectItem(o, "end_column")->valueint, 8);
    cr_assert_str_eq(cJSON_GetObjectItem(o, "severity")->valuestring, "error");
    cr_assert_str_eq(cJSON_GetObjectItem(o, "code")->valuestring, "E0101");
    cr_assert_str_eq(cJSON_GetObjectItem(o, "message")->valuestring, "expected `;`, found `d`");
    cr_assert_str_eq(cJSON_GetObjectItem(o, "help")->valuestring, "add \";\"");
    cJSON *o2 = cJSON_GetArrayItem(root, 1);
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(o2, "file")));
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(o2, "help")));
    cJSON_Delete(root);
    free(js);
    fe_free(&f);
}

Test(diag, empty_list_renders_empty_json_array) {
    fe f;
    fe_init(&f);
    char *js = bxc_diag_render_json(&f.diags, &f.sources);
    cJSON *root = cJSON_Parse(js);
    cr_assert(cJSON_IsArray(root));
    cr_assert_eq(cJSON_GetArraySize(root), 0);
    cJSON_Delete(root);
    free(js);
    fe_free(&f);
}

Test(diag, bounded_list) {
    fe f;
    fe_init(&f);
    f.diags.limit = 5;
    for (int i = 0; i < 20; i++)
        bxc_diag_error(&f.diags, BXC_E_SYNTAX, bxc_span_none(), "error %d", i);
    cr_assert_eq(f.diags.count, 6);                 /* 5 + "too many errors" */
    cr_assert(f.diags.truncated);
    cr_assert_str_eq(f.diags.items[5].code, "E9999");
    cr_assert(bxc_diag_has_errors(&f.diags));
    fe_free(&f);
}

Test(diag, span_at_end_of_file_and_past_lines) {
    fe f;
    fe_init(&f);
    bxc_source *s = bxc_sources_add_memory(&f.sources, "e.bext", "fn f(", 5);
    bxc_diag_error(&f.diags, BXC_E_UNEXPECTED_EOF, bxc_span_make(s->id, 5, 0), "eof");
    char *txt = fe_text(&f.diags, &f.sources);
    cr_assert_str_eq(txt, "e.bext:1:6: error[E0103]: eof\nfn f(\n     ^\n");
    free(txt);
    fe_free(&f);
}

Test(diag, long_lines_are_windowed) {
    fe f;
    fe_init(&f);
    size_t n = 1 << 20;
    char *big = malloc(n + 1);
    memset(big, 'a', n);
    big[n] = 0;
    bxc_source *s = bxc_sources_add_memory(&f.sources, "l.bext", big, n);
    bxc_diag_error(&f.diags, BXC_E_SYNTAX, bxc_span_make(s->id, (uint32_t)(n / 2), 1), "mid");
    char *txt = fe_text(&f.diags, &f.sources);
    cr_assert_lt(strlen(txt), 1000);
    cr_assert_not_null(strstr(txt, "l.bext:1:524289: error[E0101]: mid"));
    free(txt);
    free(big);
    fe_free(&f);
}

Test(diag, codes_table) {
    cr_assert_str_eq(bxc_diag_code_str(BXC_E_NUL_BYTE), "E0001");
    cr_assert_str_eq(bxc_diag_code_str(BXC_E_SYNTAX), "E0101");
    cr_assert_str_eq(bxc_diag_code_str(BXC_E_MODULE_NOT_FOUND), "E0202");
    cr_assert_str_eq(bxc_severity_name(BXC_SEV_WARNING), "warning");
}

/* The one table of codes (diag_codes.h): every code is a letter and four
 * digits, listed once, with a description; lookups by string agree. */
Test(diag_codes, unique_well_formed_and_described) {
    const char *const *codes = bxc_diag_code_strs();
    for (unsigned i = 0; i < BXC_DIAG_CODE_COUNT; i++) {
        const char *c = codes[i];
        cr_assert_eq(strlen(c), 5, "%s", c);
        cr_assert(c[0] == 'E' || c[0] == 'W', "%s", c);
        for (int k = 1; k < 5; k++) cr_assert(c[k] >= '0' && c[k] <= '9', "%s", c);
        for (unsigned j = 0; j < i; j++) cr_assert_str_neq(codes[j], c, "%s listed twice", c);
        const char *desc = bxc_diag_code_desc((bxc_diag_code)i);
        cr_assert(desc && *desc && !strchr(desc, '\n'), "%s has no one-line description", c);
        cr_assert_eq(bxc_diag_describe(c), desc);
        bxc_diag_code found;
        cr_assert(bxc_diag_code_find(c, &found));
        cr_assert_eq(found, (bxc_diag_code)i);
        cr_assert_eq(bxc_diag_code_severity(found), c[0] == 'W' ? BXC_SEV_WARNING : BXC_SEV_ERROR);
    }
}

/* The kernel IR's table (BXK_ERRORS, bxk.h), which `bextc --explain`
 * reads too: a K and four digits, listed once, each described, and no
 * code shared with bextc's table. */
Test(diag_codes, kernel_codes_unique_and_described) {
    for (unsigned i = 0; i < BXK_ERR_COUNT; i++) {
        const char *c = bxk_err_code(i);
        cr_assert_eq(strlen(c), 5, "%s", c);
        cr_assert_eq(c[0], 'K', "%s", c);
        for (int k = 1; k < 5; k++) cr_assert(c[k] >= '0' && c[k] <= '9', "%s", c);
        for (unsigned j = 0; j < i; j++) cr_assert_str_neq(bxk_err_code(j), c, "%s listed twice", c);
        const char *desc = bxk_err_desc(i);
        cr_assert(desc && *desc && !strchr(desc, '\n'), "%s has no one-line description", c);
        cr_assert_null(bxc_diag_describe(c), "%s is in both tables", c);
    }
    cr_assert_str_eq(bxk_err_code(BXK_E_LOWER), "K0013");
    cr_assert_null(bxk_err_desc(BXK_ERR_COUNT));
}

Test(diag_codes, every_module_reports_from_the_table) {
    /* front end, checker, interpreter, generator */
    cr_assert_str_eq(bxc_diag_code_str(BXC_E_SYNTAX), "E0101");
    cr_assert_str_eq(bxc_diag_code_str(CHK_E_SELECTOR), "E0505");
    cr_assert_str_eq(bxc_diag_code_str(CHK_W_UNUSED_ATTR), "W0302");
    cr_assert_str_eq(bxc_diag_code_str(BXI_E_PANIC), "E1007");
    cr_assert_str_eq(bxc_diag_code_str(BXC_EMIT_E_IO), "E1102");
    cr_assert_str_eq(bxc_diag_code_str(BXC_EMIT_W_UNLOWERED), "W1101");
    cr_assert_str_eq(bxc_diag_describe("E0505"), "not a backend selector");
    cr_assert_null(bxc_diag_describe("E0550"));
    cr_assert_null(bxc_diag_describe(NULL));
    cr_assert_eq(bxc_diag_code_severity(CHK_W_UNUSED_ATTR), BXC_SEV_WARNING);
}

Test(diag_codes, warning_text_shows_its_code) {
    fe f;
    fe_init(&f);
    bxc_source *s = bxc_sources_add_memory(&f.sources, "w.bext", "#[x] fn f() {}\n", 15);
    bxc_diag_warning(&f.diags, CHK_W_UNUSED_ATTR, bxc_span_make(s->id, 0, 4), "`x` has no effect");
    char *txt = fe_text(&f.diags, &f.sources);
    cr_assert_str_eq(txt, "w.bext:1:1: warning[W0302]: `x` has no effect\n#[x] fn f() {}\n^~~~\n");
    free(txt);
    fe_free(&f);
}
