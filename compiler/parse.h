/* parse.h — the parser driver around the Lemon grammar (grammar/parser.y).
 *
 * Feeds tokens from the lexer to Lemon, recovers from syntax errors at item,
 * trait-member and statement level (several errors per run), and bounds
 * nesting depth so no input can exhaust the C stack. */
#ifndef BXC_PARSE_H
#define BXC_PARSE_H

#include <stdbool.h>

#include "arena.h"
#include "ast.h"
#include "diag.h"
#include "source.h"

/* Brackets nested deeper than this, or expressions taller than
 * BXC_MAX_EXPR_DEPTH, are "nested too deeply" errors. */
#define BXC_MAX_NESTING 256
#define BXC_MAX_EXPR_DEPTH 1024

typedef enum bxc_parse_mode {
    BXC_PARSE_FILE,   /* a .bext file: items */
    BXC_PARSE_REPL,   /* REPL input: items, statements and an optional value
                         expression; a final `let` needs no `;` */
} bxc_parse_mode;

/* Parses one source file into an AST in `arena`; diagnostics (lexical and
 * syntax) go to `diags`.  Always returns a file (possibly with ERROR
 * placeholders); check diags for errors. */
bxc_file *bxc_parse_file(bxc_arena *arena, bxc_diag_list *diags,
                         const bxc_source *src);
bxc_file *bxc_parse(bxc_arena *arena, bxc_diag_list *diags,
                    const bxc_source *src, bxc_parse_mode mode);

#endif
