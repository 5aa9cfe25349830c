/* fe_util.h — helpers shared by the front-end tests: parse a string, render
 * diagnostics into a string, read files of the source tree. */
#ifndef FE_UTIL_H
#define FE_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "ast.h"
#include "diag.h"
#include "lex.h"
#include "module.h"
#include "parse.h"
#include "source.h"

typedef struct fe {
    bxc_arena arena;
    bxc_sources sources;
    bxc_diag_list diags;
    bxc_source *src;
    bxc_file *file;
} fe;

static inline void fe_init(fe *f) {
    memset(f, 0, sizeof *f);
    bxc_arena_init(&f->arena);
    bxc_sources_init(&f->sources);
    bxc_diag_list_init(&f->diags, &f->arena);
}

static inline void fe_free(fe *f) {
    bxc_sources_free(&f->sources);
    bxc_arena_free_all(&f->arena);
}

/* Parses `len` bytes (text may contain NULs). */
static inline bxc_file *fe_parse_n(fe *f, const char *text, size_t len, bxc_parse_mode mode) {
    f->src = bxc_sources_add_memory(&f->sources, "t.bext", text, len);
    f->file = bxc_parse(&f->arena, &f->diags, f->src, mode);
    return f->file;
}

static inline bxc_file *fe_parse(fe *f, const char *text) {
    return fe_parse_n(f, text, strlen(text), BXC_PARSE_FILE);
}

/* Rendered text diagnostics (malloc'd). */
static inline char *fe_text(const bxc_diag_list *l, const bxc_sources *s) {
    char *buf = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&buf, &n);
    bxc_diag_render_text(m, l, s);
    fclose(m);
    return buf;
}

static inline char *fe_dump(const bxc_file *file) {
    char *buf = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&buf, &n);
    bxc_ast_dump(m, file);
    fclose(m);
    return buf;
}

static inline const char *fe_srcdir(void) {
    const char *d = getenv("BEXT_SOURCE_DIR");
    return d ? d : ".";
}

/* The first item's fn body tail expression, for expression tests. */
static inline bxc_expr *fe_tail(const bxc_file *file) {
    if (!file->items.len || file->items.items[0]->kind != BXC_ITEM_FN) return NULL;
    const bxc_block *b = file->items.items[0]->fn->body;
    return b ? b->tail : NULL;
}

#endif
