/* parse.c — the parser driver: lexer -> Lemon, with the token-level rules
 * the LALR grammar cannot express and the error messages.
 *
 *  - `{` after an identifier is emitted as STRUCT_LBRACE (a struct literal
 *    or an item body), except where it closes an `if`/`while`/`for` head at
 *    the head's own bracket depth: there it is a block (Rust's rule that
 *    struct literals need parentheses in those heads).
 *  - Bracket nesting deeper than BXC_MAX_NESTING stops the parse with one
 *    "nested too deeply" error; the Lemon stack is fixed-size and its
 *    overflow (long unbracketed chains like `- - - x`) is the same error.
 *  - Syntax errors say "expected X, found Y", X computed from the parser
 *    state (see bxc_lemon_accepts in parser.y). */
#include "parse_int.h"

#include <stdio.h>

#include "lex.h"
#include "parser.h"

void bxc_ps_too_deep(bxc_pstate *ps, bxc_span span, int limit) {
    if (ps->too_deep_reported) return;
    ps->too_deep_reported = true;
    bxc_diag *d = bxc_diag_error(ps->diags, BXC_E_TOO_DEEP, span,
                                 "nested too deeply (limit %d)", limit);
    bxc_diag_set_help(ps->diags, d, "split the expression with `let` bindings or helper fns");
}

void bxc_ps_overflow(bxc_pstate *ps) {
    ps->overflow = true;
    bxc_ps_too_deep(ps, ps->cur, BXC_MAX_NESTING);
}

static bool has(const int *set, int n, int tok) {
    for (int i = 0; i < n; i++)
        if (set[i] == tok) return true;
    return false;
}

static const int expr_starts[] = {
    TK_INT, TK_FLOAT, TK_STRING, TK_TRUE, TK_FALSE, TK_IDENT, TK_LPAREN,
    TK_LBRACKET, TK_MINUS, TK_BANG, TK_STAR, TK_AMP, TK_ANDAND, TK_PIPE,
    TK_OROR, TK_IF, TK_WHILE, TK_FOR, TK_LOOP, TK_RETURN, TK_BREAK,
    TK_CONTINUE, TK_LBRACE,
};
static const int operators[] = {
    TK_PLUS, TK_MINUS, TK_STAR, TK_SLASH, TK_PERCENT, TK_ANDAND, TK_OROR,
    TK_AMP, TK_PIPE, TK_CARET, TK_EQEQ, TK_NE, TK_LT, TK_LE, TK_GT, TK_GE,
    TK_DOTDOT, TK_DOTDOTEQ, TK_EQ, TK_PLUSEQ, TK_MINUSEQ, TK_STAREQ,
    TK_SLASHEQ, TK_PERCENTEQ, TK_AS, TK_DOT, TK_LBRACKET, TK_LPAREN,
};
static const int type_starts[] = {TK_IDENT, TK_AMP, TK_ANDAND, TK_LPAREN, TK_LBRACKET};
static const int item_starts[] = {
    TK_HASH, TK_PUB, TK_USE, TK_TYPE, TK_STRUCT, TK_ENUM, TK_FN, TK_TRAIT, TK_IMPL,
};
#define COUNT(a) (int)(sizeof a / sizeof a[0])

static bool in(const int *set, int n, int tok) { return has(set, n, tok); }

void bxc_ps_report(bxc_pstate *ps, int found, bxc_span span, const int *expected,
                   int nexpected) {
    ps->syntax_errors = true;
    if (found == BXC_TK_EOF && ps->quiet_eof) return;
    /* Group the raw terminal set into words a person reads. */
    const char *names[16];
    int nn = 0;
    bool expr = has(expected, nexpected, TK_INT);
    bool ops = has(expected, nexpected, TK_PLUS);
    bool items = has(expected, nexpected, TK_FN) && has(expected, nexpected, TK_STRUCT);
    bool types = !expr;
    for (int i = 0; i < COUNT(type_starts) && types; i++)
        types = has(expected, nexpected, type_starts[i]);
    if (items) names[nn++] = "item";
    if (types) names[nn++] = "type";
    if (expr) names[nn++] = "expression";
    if (ops) names[nn++] = "operator";
    bool more = false;
    for (int i = 0; i < nexpected; i++) {
        int t = expected[i];
        if (expr && in(expr_starts, COUNT(expr_starts), t)) continue;
        if (ops && in(operators, COUNT(operators), t)) continue;
        if (items && in(item_starts, COUNT(item_starts), t)) continue;
        if (types && in(type_starts, COUNT(type_starts), t)) continue;
        if (t == TK_STRUCT_LBRACE && has(expected, nexpected, TK_LBRACE)) continue;
        if (t == TK_REPL_START || t == TK_LOWEST || t == TK_UNARY || t == TK_BLOCKSTMT) continue;
        if (nn < 8) names[nn++] = bxc_token_name(t);
        else more = true;
    }

    char exp[512];
    size_t len = 0;
    exp[0] = '\0';
    for (int i = 0; i < nn; i++) {
        const char *sep = i == 0 ? "" : (i == nn - 1 && !more) ? " or " : ", ";
        len += (size_t)snprintf(exp + len, sizeof exp - len, "%s%s", sep, names[i]);
        if (len >= sizeof exp) len = sizeof exp - 1;
    }
    if (more) snprintf(exp + len, sizeof exp - len, ", ...");

    char what[160];
    const char *text = ps->src->text + span.offset;
    int shown = span.length > 40 ? 40 : (int)span.length;
    switch (found) {
    case BXC_TK_EOF: snprintf(what, sizeof what, "end of file"); break;
    case TK_IDENT: snprintf(what, sizeof what, "identifier `%.*s`", shown, text); break;
    case TK_INT: case TK_FLOAT:
        snprintf(what, sizeof what, "number `%.*s`", shown, text); break;
    case TK_STRING: snprintf(what, sizeof what, "string literal"); break;
    default: snprintf(what, sizeof what, "%s", bxc_token_name(found)); break;
    }

    bxc_diag_code code = found == BXC_TK_EOF ? BXC_E_UNEXPECTED_EOF : BXC_E_SYNTAX;
    /* A missing `;` at the end of a line: point just after the previous
     * token, where the `;` belongs, rather than at the next line. */
    bool semi_here = false;
    if (has(expected, nexpected, TK_SEMI) && ps->prev.file != BXC_NO_FILE) {
        uint32_t end = ps->prev.offset + ps->prev.length, l0, l1;
        bxc_source_position(ps->src, end, &l0, NULL);
        bxc_source_position(ps->src, span.offset, &l1, NULL);
        if (l1 > l0) {
            span = bxc_span_make(ps->src->id, end, 0);
            semi_here = true;
        }
    }
    bxc_diag *d;
    if (nn == 0)
        d = bxc_diag_error(ps->diags, code, span, "unexpected %s", what);
    else
        d = bxc_diag_error(ps->diags, code, span, "expected %s%s, found %s",
                           nn > 2 ? "one of " : "", exp, what);
    if (found == TK_STRUCT_LBRACE && expr)
        bxc_diag_set_help(ps->diags, d, "a struct literal here needs parentheses: `(Name { ... })`");
    else if (semi_here)
        bxc_diag_set_help(ps->diags, d, "add `;` here");
}

/* ---- doc comments ------------------------------------------------------------ */

/* The lexer skips comments, so the `///` lines right above an item or a
 * method (above its attributes too) are read back from the source: a run
 * of lines that start with `///` (not `////`), ending at the line before
 * `start`.  Each line loses `///` and one following space. */
static const char *doc_before(bxc_arena *a, const bxc_source *src, uint32_t start) {
    if (start > src->length) return NULL;
    uint32_t line_start = start;
    while (line_start && src->text[line_start - 1] != '\n') line_start--;
    /* only whitespace may precede the item on its own line, and `pub`
     * (an item's span starts after its visibility) */
    uint32_t k = line_start;
    while (k < start && (src->text[k] == ' ' || src->text[k] == '\t')) k++;
    if (start - k >= 3 && memcmp(src->text + k, "pub", 3) == 0) k += 3;
    while (k < start && (src->text[k] == ' ' || src->text[k] == '\t')) k++;
    if (k != start) return NULL;
    uint32_t first = line_start, nlines = 0;
    while (first) {
        uint32_t e = first - 1, b = e;   /* e: the '\n' ending the previous line */
        while (b && src->text[b - 1] != '\n') b--;
        uint32_t k = b;
        while (k < e && (src->text[k] == ' ' || src->text[k] == '\t')) k++;
        if (e - k < 3 || memcmp(src->text + k, "///", 3) != 0 || (e - k > 3 && src->text[k + 3] == '/'))
            break;
        first = b;
        nlines++;
    }
    if (!nlines) return NULL;
    char *out = bxc_arena_alloc(a, line_start - first + 1);
    size_t n = 0;
    for (uint32_t b = first; b < line_start;) {
        uint32_t e = b;
        while (src->text[e] != '\n') e++;
        uint32_t k = b;
        while (src->text[k] == ' ' || src->text[k] == '\t') k++;
        k += 3;
        if (k < e && src->text[k] == ' ') k++;
        uint32_t stop = e;
        if (stop > k && src->text[stop - 1] == '\r') stop--;
        memcpy(out + n, src->text + k, stop - k);
        n += stop - k;
        out[n++] = '\n';
        b = e + 1;
    }
    out[n ? n - 1 : 0] = 0;   /* no trailing newline */
    return out;
}

static uint32_t start_of(bxc_span span, const bxc_attr_list *attrs) {
    uint32_t s = span.offset;
    for (uint32_t i = 0; i < attrs->len; i++)
        if (attrs->items[i]->span.offset < s) s = attrs->items[i]->span.offset;
    return s;
}

static void attach_docs(bxc_arena *a, const bxc_source *src, bxc_file *f) {
    for (uint32_t i = 0; i < f->items.len; i++) {
        bxc_item *it = f->items.items[i];
        if (!it) continue;
        it->doc = doc_before(a, src, start_of(it->span, &it->attrs));
        if (it->kind == BXC_ITEM_FN && it->fn && !it->fn->doc) it->fn->doc = it->doc;
        bxc_fn_list *ms = it->kind == BXC_ITEM_TRAIT ? &it->trait.methods
                        : it->kind == BXC_ITEM_IMPL ? &it->impl.methods : NULL;
        for (uint32_t k = 0; ms && k < ms->len; k++) {
            bxc_fn *fn = ms->items[k];
            if (fn) fn->doc = doc_before(a, src, start_of(fn->span, &fn->attrs));
        }
    }
}

bxc_file *bxc_parse(bxc_arena *arena, bxc_diag_list *diags,
                    const bxc_source *src, bxc_parse_mode mode) {
    bxc_pstate ps;
    memset(&ps, 0, sizeof ps);
    ps.prev = ps.cur = bxc_span_none();
    ps.arena = arena;
    ps.diags = diags;
    ps.src = src;
    ps.file = bxc_arena_alloc(arena, sizeof *ps.file);
    ps.file->file_id = src->id;

    void *parser = bxc_lemonAlloc(malloc, &ps);
    if (!parser) bxc_oom(sizeof ps);
    /* The parser is the one thing here outside the arena: an allocation
     * failure below frees it, then goes on to the caller's point. */
    bxc_oom_point oom;
    bxc_oom_push(&oom);
    if (setjmp(oom.env)) {
        bxc_lemonFree(parser, free);
        bxc_oom(0);
    }
    bxc_lexer lx;
    bxc_lex_init(&lx, src, diags);
    if (mode == BXC_PARSE_REPL) bxc_lemon(parser, TK_REPL_START, bxc_span_make(src->id, 0, 0));

    /* Bracket depth at which each open `if`/`while`/`for` head started. */
    uint32_t heads[BXC_MAX_NESTING + 1];
    uint32_t nheads = 0, depth = 0;
    int prev = BXC_TK_EOF;
    for (;;) {
        bxc_token t = bxc_lex_next(&lx);
        int kind = t.kind;
        switch (kind) {
        case TK_IF: case TK_WHILE: case TK_FOR:
            if (nheads < BXC_MAX_NESTING + 1) heads[nheads++] = depth;
            break;
        case TK_LBRACE:
            if (nheads && heads[nheads - 1] == depth) nheads--;
            else if (prev == TK_IDENT) kind = TK_STRUCT_LBRACE;
            depth++;
            break;
        case TK_LPAREN: case TK_LBRACKET:
            depth++;
            break;
        case TK_RPAREN: case TK_RBRACKET: case TK_RBRACE:
            if (depth) depth--;
            while (nheads && heads[nheads - 1] > depth) nheads--;
            break;
        default:
            break;
        }
        /* After a syntax error, recovery discards tokens and the bracket
         * count no longer mirrors the parse (unclosed `(` in broken items);
         * Lemon's fixed stack still bounds the nesting then. */
        if (depth > BXC_MAX_NESTING && !ps.syntax_errors) {
            bxc_ps_too_deep(&ps, t.span, BXC_MAX_NESTING);
            break;
        }
        ps.prev = ps.cur;
        ps.cur = t.span;
        if (kind == BXC_TK_EOF) ps.quiet_eof = lx.unterminated;
        bxc_lemon_snapshot(parser, &ps);
        bxc_lemon(parser, kind, t.span);
        if (ps.overflow || kind == BXC_TK_EOF) break;
        prev = kind;
    }
    bxc_oom_pop(&oom);
    bxc_lemonFree(parser, free);
    attach_docs(arena, src, ps.file);
    if (mode == BXC_PARSE_REPL && !ps.file->repl) {
        /* A parse that failed still hands the REPL what it understood. */
        bxc_block *b = bxc_arena_alloc(arena, sizeof *b);
        b->stmts = ps.repl_stmts;
        b->span = bxc_span_make(src->id, 0, 0);
        ps.file->repl = b;
    }
    return ps.file;
}

bxc_file *bxc_parse_file(bxc_arena *arena, bxc_diag_list *diags,
                         const bxc_source *src) {
    return bxc_parse(arena, diags, src, BXC_PARSE_FILE);
}
