/* lex.h — the reentrant re2c lexer (grammar/lexer.re).
 *
 * All state lives in bxc_lexer; token kinds are Lemon's TK_* codes from the
 * generated parser.h (one numbering).  Lexical errors become diagnostics
 * and lexing continues; bad bytes produce no token. */
#ifndef BXC_LEX_H
#define BXC_LEX_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "diag.h"
#include "source.h"

#define BXC_TK_EOF 0   /* Lemon's end-of-input code */

typedef struct bxc_token {
    int kind;          /* TK_* from parser.h, or BXC_TK_EOF */
    bxc_span span;
} bxc_token;

typedef struct bxc_lexer {
    const bxc_source *src;
    bxc_diag_list *diags;
    const unsigned char *start;   /* src->text */
    const unsigned char *cur;     /* YYCURSOR */
    const unsigned char *lim;     /* YYLIMIT: the NUL sentinel */
    const unsigned char *tok;     /* start of the current token */
    const unsigned char *marker;  /* YYMARKER */
    int prev;                     /* kind of the previous token */
    bool unterminated;            /* an unterminated string/comment was seen */
} bxc_lexer;

void bxc_lex_init(bxc_lexer *lx, const bxc_source *src, bxc_diag_list *diags);
/* Next token; BXC_TK_EOF (span at end of file) forever after the end. */
bxc_token bxc_lex_next(bxc_lexer *lx);
/* Human name for messages: "`;`", "`fn`", "identifier", "end of file". */
const char *bxc_token_name(int kind);
/* True for keyword tokens (dictionary for the fuzzer, editor support). */
bool bxc_token_is_keyword(int kind);

/* Decodes the body of a string literal token (with its quotes) into the
 * arena; escapes were validated by the lexer, unknown ones are kept as is. */
char *bxc_lex_decode_string(bxc_arena *a, const char *raw, uint32_t rawlen,
                            uint32_t *outlen);

#endif
