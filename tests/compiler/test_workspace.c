/* test_workspace.c — the long-lived front end (compiler/workspace.h):
 * overlays seen by imports, edits, re-checks that free what they replace,
 * allocation failure as a result, and LSP position conversion. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workspace.h"

#if defined(__SANITIZE_ADDRESS__)
#define WS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WS_ASAN 1
#endif
#endif

static char *tmpdir(void) {
    char *d = strdup("/tmp/bext-ws-test-XXXXXX");
    cr_assert(mkdtemp(d));
    return d;
}

static char *join(const char *dir, const char *name) {
    char *p = NULL;
    cr_assert(asprintf(&p, "%s/%s", dir, name) > 0);
    return p;
}

static bool has_code(const bxc_doc *d, const char *code) {
    for (uint32_t i = 0; i < d->unit.diags.count; i++)
        if (strcmp(d->unit.diags.items[i].code, code) == 0) return true;
    return false;
}

Test(workspace, imports_see_open_documents_before_the_disk) {
    char *dir = tmpdir();
    char *main_path = join(dir, "main.bext"), *lib_path = join(dir, "lib.bext");
    bxc_ws ws;
    bxc_ws_init(&ws);
    const char *main_text = "use lib::triple;\nfn g(x: u32) -> u32 { triple(x) }\n";
    bxc_doc *m = bxc_ws_open(&ws, main_path, main_text, strlen(main_text));
    cr_assert(m);
    /* lib.bext exists nowhere on disk */
    cr_expect_eq(bxc_ws_check(&ws, m), BXC_WS_ERRORS);
    cr_expect(has_code(m, "E0202"), "a missing module is E0202");

    const char *lib_text = "pub fn triple(x: u32) -> u32 { x * 3 }\n";
    bxc_doc *l = bxc_ws_open(&ws, lib_path, lib_text, strlen(lib_text));
    cr_assert(l);
    cr_expect_eq(bxc_ws_check(&ws, m), BXC_WS_OK, "the open lib.bext was not seen");
    cr_expect(bxc_doc_uses(m, l->path));
    cr_expect(!bxc_doc_uses(l, m->path));
    cr_expect_eq(bxc_ws_find(&ws, lib_path), l);

    bxc_ws_close(&ws, l);
    cr_expect_null(bxc_ws_find(&ws, lib_path));
    cr_expect_eq(bxc_ws_check(&ws, m), BXC_WS_ERRORS, "a closed document is gone");
    bxc_ws_free(&ws);
    rmdir(dir);
    free(main_path), free(lib_path), free(dir);
}

Test(workspace, edits_replace_byte_ranges_clamped) {
    bxc_ws ws;
    bxc_ws_init(&ws);
    bxc_doc *d = bxc_ws_open(&ws, "/nonexistent/e.bext", "hello world", 11);
    cr_assert(d);
    cr_assert(bxc_ws_edit(d, 6, 11, "there", 5));
    cr_expect_str_eq(d->text, "hello there");
    cr_assert(bxc_ws_edit(d, 0, 0, ">> ", 3));
    cr_expect_str_eq(d->text, ">> hello there");
    cr_assert(bxc_ws_edit(d, 100, 200, "!", 1));   /* past the end: appends */
    cr_expect_str_eq(d->text, ">> hello there!");
    cr_assert(bxc_ws_edit(d, 9, 3, "", 0));        /* start > end: taken as end */
    cr_expect_str_eq(d->text, ">> hello there!");
    cr_assert(bxc_ws_edit(d, 2, 9, "", 0));
    cr_expect_str_eq(d->text, ">>there!");
    cr_expect_eq(d->len, 8);
    cr_expect_eq(d->status, BXC_WS_UNCHECKED);
    bxc_ws_free(&ws);
}

/* 1000 edit + check cycles hold what one cycle holds: the workspace's
 * own count (texts, arenas, sources) is equal, and the process heap (glibc's
 * count of bytes in use; ASan replaces malloc, LSan checks there) does not
 * grow. */
Test(workspace, thousand_rechecks_do_not_grow) {
    bxc_ws ws;
    bxc_ws_init(&ws);
    const char *good = "use std::shape::broadcast;\nfn f(a: &Shape) -> Shape { broadcast(a, a) }\n";
    bxc_doc *d = bxc_ws_open(&ws, "/nonexistent/grow.bext", good, strlen(good));
    cr_assert(d);
    size_t after10 = 0;
    size_t heap10 = 0;
    for (int i = 0; i < 1000; i++) {
        /* break the name, check, fix it, check */
        uint32_t at = (uint32_t)(strstr(d->text, "{ ") - d->text) + 2;
        cr_assert(bxc_ws_edit(d, at, at + 9, "broadcasX", 9));
        cr_assert_eq(bxc_ws_check(&ws, d), BXC_WS_ERRORS);
        cr_assert(bxc_ws_edit(d, at, at + 9, "broadcast", 9));
        cr_assert_eq(bxc_ws_check(&ws, d), BXC_WS_OK);
        if (i == 9) {
            after10 = bxc_ws_bytes(&ws);
            heap10 = mallinfo2().uordblks;
        }
    }
    cr_expect_eq(bxc_ws_bytes(&ws), after10, "held %zu bytes after 10 cycles, %zu after 1000",
                 after10, bxc_ws_bytes(&ws));
#ifndef WS_ASAN
    size_t heap1000 = mallinfo2().uordblks;
    cr_expect(heap1000 <= heap10 + 4096, "heap in use grew from %zu to %zu bytes", heap10, heap1000);
#else
    (void)heap10;
#endif
    bxc_ws_free(&ws);
}

/* A check past the arena limit is BXC_WS_OOM, not abort(); the document
 * checks again once memory allows. */
Test(workspace, allocation_failure_is_a_result) {
    bxc_ws ws;
    bxc_ws_init(&ws);
    const char *text = "use std::shape::broadcast;\nfn f(a: &Shape) -> Shape { broadcast(a, a) }\n";
    bxc_doc *d = bxc_ws_open(&ws, "/nonexistent/oom.bext", text, strlen(text));
    cr_assert(d);
    /* every limit from tiny to enough: each fails cleanly at a different
     * allocation (parser, loader, checker) */
    bool ok_seen = false;
    for (size_t limit = 256; limit < (1u << 22) && !ok_seen; limit = limit * 3 / 2) {
        ws.check_limit = limit;
        bxc_ws_status st = bxc_ws_check(&ws, d);
        cr_assert(st == BXC_WS_OOM || st == BXC_WS_OK, "limit %zu: status %d", limit, st);
        if (st == BXC_WS_OOM) {
            cr_expect_null(bxc_doc_ast(d));
            cr_expect_eq(d->unit.arena.total, 0);
        }
        ok_seen = st == BXC_WS_OK;
    }
    cr_expect(ok_seen, "no limit under 4 MiB was enough");
    ws.check_limit = 0;
    cr_expect_eq(bxc_ws_check(&ws, d), BXC_WS_OK);
    cr_expect_not_null(bxc_doc_ast(d));
    bxc_ws_free(&ws);
}

Test(workspace, refuses_text_over_the_source_limit) {
    bxc_ws ws;
    bxc_ws_init(&ws);
    bxc_doc *d = bxc_ws_open(&ws, "/nonexistent/big.bext", "x", 1);
    cr_assert(d);
    cr_expect(!bxc_ws_edit(d, 1, 1, "y", (size_t)BXC_SOURCE_MAX_BYTES));
    cr_expect_str_eq(d->text, "x", "a refused edit leaves the text alone");
    cr_expect(!bxc_ws_set_text(d, "y", (size_t)BXC_SOURCE_MAX_BYTES + 1));
    bxc_ws_free(&ws);
}

/* ---- positions ---------------------------------------------------------------- */

/* "a" é (2 bytes) "b" G clef (4 bytes, a surrogate pair in UTF-16) "c" */
static const char LINE[] = "x\na\xc3\xa9" "b\xf0\x9d\x84\x9e" "c\r\nz";

Test(positions, utf16_utf8_utf32_columns_to_offsets) {
    uint32_t n = (uint32_t)strlen(LINE);
    /* line 1: a=2, é=3..4, b=5, clef=6..9, c=10, \r=11 */
    cr_expect_eq(bxc_text_offset(LINE, n, 1, 0, BXC_POS_UTF16), 2);
    cr_expect_eq(bxc_text_offset(LINE, n, 1, 2, BXC_POS_UTF16), 5);    /* b */
    cr_expect_eq(bxc_text_offset(LINE, n, 1, 3, BXC_POS_UTF16), 6);    /* clef */
    cr_expect_eq(bxc_text_offset(LINE, n, 1, 4, BXC_POS_UTF16), 6);    /* its second half: its start */
    cr_expect_eq(bxc_text_offset(LINE, n, 1, 5, BXC_POS_UTF16), 10);   /* c */
    cr_expect_eq(bxc_text_offset(LINE, n, 1, 6, BXC_POS_UTF16), 11);   /* line end, before \r */
    cr_expect_eq(bxc_text_offset(LINE, n, 1, 999, BXC_POS_UTF16), 11); /* past it: clamped */
    cr_expect_eq(bxc_text_offset(LINE, n, 1, 4, BXC_POS_UTF32), 10);
    cr_expect_eq(bxc_text_offset(LINE, n, 1, 8, BXC_POS_UTF8), 10);
    cr_expect_eq(bxc_text_offset(LINE, n, 1, 2, BXC_POS_UTF8), 3);     /* é starts at byte col 1 */
    cr_expect_eq(bxc_text_offset(LINE, n, 2, 1, BXC_POS_UTF16), 14);
    cr_expect_eq(bxc_text_offset(LINE, n, 50, 0, BXC_POS_UTF16), n);   /* past the last line */
}

Test(positions, offsets_to_columns_and_bad_utf8) {
    bxc_sources s;
    bxc_sources_init(&s);
    const bxc_source *src = bxc_sources_add_memory(&s, "p.bext", LINE, strlen(LINE));
    uint32_t line, col;
    bxc_source_lsp_position(src, 10, BXC_POS_UTF16, &line, &col);
    cr_expect(line == 1 && col == 5, "c: %u:%u", line, col);
    bxc_source_lsp_position(src, 10, BXC_POS_UTF8, &line, &col);
    cr_expect_eq(col, 8);
    bxc_source_lsp_position(src, 10, BXC_POS_UTF32, &line, &col);
    cr_expect_eq(col, 4);
    bxc_source_lsp_position(src, 8, BXC_POS_UTF16, &line, &col);   /* inside the clef */
    cr_expect_eq(col, 3);
    bxc_source_lsp_position(src, 1000, BXC_POS_UTF16, &line, &col);
    cr_expect(line == 2 && col == 1);

    /* bytes that are not UTF-8 count one unit each, both ways */
    const char bad[] = "\xff\xc3(\xf0\x9d" "a";
    const bxc_source *b = bxc_sources_add_memory(&s, "b.bext", bad, strlen(bad));
    bxc_source_lsp_position(b, 5, BXC_POS_UTF16, &line, &col);
    cr_expect_eq(col, 5);
    cr_expect_eq(bxc_text_offset(bad, (uint32_t)strlen(bad), 0, 5, BXC_POS_UTF16), 5);
    bxc_sources_free(&s);
}
