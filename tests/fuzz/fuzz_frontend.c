/* fuzz_frontend.c — libFuzzer target for the whole front end: lex + parse
 * (file and REPL modes) + module loading + the checker + the C code
 * generator (in memory, for inputs that check clean) + both diagnostic
 * renderers.  Any crash, sanitizer report, leak, hang or runaway memory is
 * a finding. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "diag.h"
#include "emit.h"
#include "module.h"
#include "parse.h"

#ifndef BEXT_STDLIB_DIR
#define BEXT_STDLIB_DIR ""
#endif

static FILE *devnull;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!devnull) devnull = fopen("/dev/null", "w");

    /* As a file: the root lives in a directory that does not exist, so only
     * the (real) stdlib can satisfy a `use`; nothing else is read. */
    bxc_unit u;
    bxc_unit_init(&u);
    bxc_unit_set_stdlib_dir(&u, BEXT_STDLIB_DIR);
    bxc_load_status st = bxc_unit_load_memory(&u, "/nonexistent-fuzz/input.bext",
                                              (const char *)data, size);
    if (st != BXC_LOAD_UNREADABLE && bxc_check_unit(&u)) {
        const char *h = NULL, *c = NULL;
        bxc_emit_c_memory(&u, "fuzz", &h, &c);
    }
    bxc_diag_render_text(devnull, &u.diags, &u.sources);
    char *json = bxc_diag_render_json(&u.diags, &u.sources);
    free(json);
    bxc_unit_free(&u);

    /* As REPL input. */
    bxc_arena a;
    bxc_arena_init(&a);
    bxc_sources s;
    bxc_sources_init(&s);
    bxc_diag_list d;
    bxc_diag_list_init(&d, &a);
    bxc_source *src = bxc_sources_add_memory(&s, "repl", (const char *)data, size);
    bxc_parse(&a, &d, src, BXC_PARSE_REPL);
    bxc_diag_render_text(devnull, &d, &s);
    bxc_sources_free(&s);
    bxc_arena_free_all(&a);
    return 0;
}
