/* lexer.re — the re2c lexer of .bext files.
 *
 * Reentrant: all state is in bxc_lexer (lex.h).  The input is the source
 * text followed by its NUL sentinel (re2c:eof); a NUL before the end is an
 * ordinary bad byte.  Token codes are Lemon's TK_* from parser.h — no
 * second numbering.  Errors (bad bytes, invalid UTF-8, unterminated string
 * or block comment, unknown escapes) become diagnostics and lexing goes on;
 * a bad byte yields no token.  Comments, including doc comments (`///`,
 * `//!`, and block doc comments) and nested block comments, are skipped. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "lex.h"
#include "parser.h"

/*!re2c
    re2c:api = default;
    re2c:define:YYCTYPE = "unsigned char";
    re2c:define:YYCURSOR = "lx->cur";
    re2c:define:YYMARKER = "lx->marker";
    re2c:define:YYLIMIT = "lx->lim";
    re2c:yyfill:enable = 0;
    re2c:eof = 0;

    u_cont = [\x80-\xBF];
    utf8_mb = [\xC2-\xDF] u_cont
            | "\xE0" [\xA0-\xBF] u_cont
            | [\xE1-\xEC\xEE\xEF] u_cont u_cont
            | "\xED" [\x80-\x9F] u_cont
            | "\xF0" [\x90-\xBF] u_cont u_cont
            | [\xF1-\xF3] u_cont u_cont u_cont
            | "\xF4" [\x80-\x8F] u_cont u_cont;

    dec = [0-9] [0-9_]*;
    hex = "0" [xX] [0-9a-fA-F_]+;
    bin = "0" [bB] [01_]+;
    oct = "0" [oO] [0-7_]+;
    exp = [eE] [+-]? [0-9_]* [0-9] [0-9_]*;
    float = dec "." [0-9] [0-9_]* exp? | dec exp;
    ident = [a-zA-Z_] [a-zA-Z0-9_]*;
    ws = [ \t\r\n\f\v]+;
*/

void bxc_lex_init(bxc_lexer *lx, const bxc_source *src, bxc_diag_list *diags) {
    memset(lx, 0, sizeof *lx);
    lx->src = src;
    lx->diags = diags;
    lx->start = (const unsigned char *)src->text;
    lx->cur = lx->start;
    lx->lim = lx->start + src->length;
    lx->prev = BXC_TK_EOF;
}

static bxc_span span_of(const bxc_lexer *lx, const unsigned char *from,
                        const unsigned char *to) {
    return bxc_span_make(lx->src->id, (uint32_t)(from - lx->start),
                         (uint32_t)(to - from));
}

/* A byte that cannot start any token: NUL, invalid UTF-8, or a character
 * that has no meaning here.  Valid multi-byte characters are consumed
 * whole so the caret covers the character. */
static void bad_char(bxc_lexer *lx, const unsigned char *from) {
    unsigned char c = *from;
    if (c == 0) {
        bxc_diag_error(lx->diags, BXC_E_NUL_BYTE, span_of(lx, from, from + 1),
                       "NUL byte in source");
    } else if (c >= 0x80) {
        bxc_diag_error(lx->diags, BXC_E_BAD_UTF8, span_of(lx, from, from + 1),
                       "invalid UTF-8 byte 0x%02X", c);
    } else if (c < 0x20 || c == 0x7F) {
        bxc_diag_error(lx->diags, BXC_E_STRAY_CHAR, span_of(lx, from, from + 1),
                       "unexpected control character 0x%02X", c);
    } else {
        bxc_diag *d = bxc_diag_error(lx->diags, BXC_E_STRAY_CHAR, span_of(lx, from, from + 1),
                                     "unexpected character `%c`", c);
        if (c == '\'')
            bxc_diag_set_help(lx->diags, d, "strings use double quotes: \"...\"");
    }
}

static void bad_unicode(bxc_lexer *lx, const unsigned char *from, const unsigned char *to) {
    bxc_diag_error(lx->diags, BXC_E_STRAY_CHAR, span_of(lx, from, to),
                   "non-ASCII character in `%.*s` (identifiers are ASCII; "
                   "other text belongs in strings and comments)", (int)(to - from), (const char *)from);
}

/* After the opening slash-star: skips a (nested) block comment.  Returns false
 * if the input ends first. */
static bool block_comment(bxc_lexer *lx) {
    unsigned depth = 1;
    for (;;) {
        const unsigned char *t = lx->cur;
    /*!re2c
        "*" "/"  { if (--depth == 0) return true; continue; }
        "/" "*"  { depth++; continue; }
        [\x01-\x7F] { continue; }
        utf8_mb  { continue; }
        $        { return false; }
        *        { bad_char(lx, t); continue; }
    */
    }
}

/* After `//`: the rest of the line (doc comments included). */
static void line_comment(bxc_lexer *lx) {
    for (;;) {
        const unsigned char *t = lx->cur;
    /*!re2c
        [\n]    { return; }
        [\x01-\x09\x0B-\x7F] { continue; }
        utf8_mb  { continue; }
        $        { return; }
        *        { bad_char(lx, t); continue; }
    */
    }
}

/* After the opening quote: the rest of a string literal.  Returns false if
 * the input ends first. */
static bool string_rest(bxc_lexer *lx) {
    for (;;) {
        const unsigned char *t = lx->cur;
    /*!re2c
        ["]  { return true; }
        "\\" [nrt0\\"'] { continue; }
        "\\x" [0-7][0-9a-fA-F] { continue; }
        "\\u{" [0-9a-fA-F]{1,6} "}" {
            uint32_t cp = 0;
            for (const unsigned char *q = t + 3; *q != '}'; q++)
                cp = cp * 16 + (uint32_t)(*q <= '9' ? *q - '0' : (*q | 0x20) - 'a' + 10);
            if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
                bxc_diag_error(lx->diags, BXC_E_BAD_ESCAPE, span_of(lx, t, lx->cur),
                               "`\\u{%X}` is not a Unicode scalar value", cp);
            continue;
        }
        "\\" [\n] { continue; }
        "\\" {
            bxc_diag *d = bxc_diag_error(lx->diags, BXC_E_BAD_ESCAPE, span_of(lx, t, lx->cur + (lx->cur < lx->lim)),
                                         "unknown escape sequence in string");
            bxc_diag_set_help(lx->diags, d, "known escapes: \\n \\r \\t \\0 \\\\ \\\" \\' \\x7F \\u{...}");
            continue;
        }
        [\x01-\x21\x23-\x5B\x5D-\x7F] { continue; }
        utf8_mb { continue; }
        $    { return false; }
        *    { bad_char(lx, t); continue; }
    */
    }
}

bxc_token bxc_lex_next(bxc_lexer *lx) {
    bxc_token tk;
    int kind;
    for (;;) {
        lx->tok = lx->cur;
        /* A number right after `.` is a tuple index: `t.0.1` is t . 0 . 1,
         * not t . 0.1 (Rust's rule). */
        if (lx->prev == TK_DOT && *lx->cur >= '0' && *lx->cur <= '9' && lx->cur < lx->lim) {
            while (lx->cur < lx->lim && *lx->cur >= '0' && *lx->cur <= '9') lx->cur++;
            kind = TK_INT;
            goto done;
        }
    /*!re2c
        $    { kind = BXC_TK_EOF; goto done; }
        ws   { continue; }
        "//" { line_comment(lx); continue; }
        "/*" {
            if (!block_comment(lx)) {
                bxc_diag *d = bxc_diag_error(lx->diags, BXC_E_UNTERM_COMMENT,
                                             span_of(lx, lx->tok, lx->tok + 2),
                                             "unterminated block comment");
                bxc_diag_set_help(lx->diags, d, "close it with `*/` (block comments nest)");
                lx->unterminated = true;
            }
            continue;
        }
        ["] {
            if (!string_rest(lx)) {
                bxc_diag_error(lx->diags, BXC_E_UNTERM_STRING, span_of(lx, lx->tok, lx->tok + 1),
                               "unterminated string literal");
                lx->unterminated = true;
            }
            kind = TK_STRING; goto done;
        }

        "as"       { kind = TK_AS; goto done; }
        "break"    { kind = TK_BREAK; goto done; }
        "continue" { kind = TK_CONTINUE; goto done; }
        "else"     { kind = TK_ELSE; goto done; }
        "enum"     { kind = TK_ENUM; goto done; }
        "false"    { kind = TK_FALSE; goto done; }
        "fn"       { kind = TK_FN; goto done; }
        "for"      { kind = TK_FOR; goto done; }
        "if"       { kind = TK_IF; goto done; }
        "impl"     { kind = TK_IMPL; goto done; }
        "in"       { kind = TK_IN; goto done; }
        "let"      { kind = TK_LET; goto done; }
        "loop"     { kind = TK_LOOP; goto done; }
        "mut"      { kind = TK_MUT; goto done; }
        "pub"      { kind = TK_PUB; goto done; }
        "return"   { kind = TK_RETURN; goto done; }
        "struct"   { kind = TK_STRUCT; goto done; }
        "trait"    { kind = TK_TRAIT; goto done; }
        "true"     { kind = TK_TRUE; goto done; }
        "type"     { kind = TK_TYPE; goto done; }
        "use"      { kind = TK_USE; goto done; }
        "while"    { kind = TK_WHILE; goto done; }
        ident      { kind = TK_IDENT; goto done; }

        float      { kind = TK_FLOAT; goto done; }
        dec | hex | bin | oct { kind = TK_INT; goto done; }
        "0" [xXbBoO] {
            bxc_diag_error(lx->diags, BXC_E_BAD_NUMBER, span_of(lx, lx->tok, lx->cur),
                           "number prefix `%.*s` without digits", 2, (const char *)lx->tok);
            kind = TK_INT; goto done;
        }

        "("  { kind = TK_LPAREN; goto done; }
        ")"  { kind = TK_RPAREN; goto done; }
        "["  { kind = TK_LBRACKET; goto done; }
        "]"  { kind = TK_RBRACKET; goto done; }
        "{"  { kind = TK_LBRACE; goto done; }
        "}"  { kind = TK_RBRACE; goto done; }
        ","  { kind = TK_COMMA; goto done; }
        ";"  { kind = TK_SEMI; goto done; }
        "::" { kind = TK_COLONCOLON; goto done; }
        ":"  { kind = TK_COLON; goto done; }
        "..=" { kind = TK_DOTDOTEQ; goto done; }
        ".." { kind = TK_DOTDOT; goto done; }
        "."  { kind = TK_DOT; goto done; }
        "->" { kind = TK_ARROW; goto done; }
        "=>" { kind = TK_FATARROW; goto done; }
        "#"  { kind = TK_HASH; goto done; }
        "?"  { kind = TK_QUESTION; goto done; }
        "==" { kind = TK_EQEQ; goto done; }
        "!=" { kind = TK_NE; goto done; }
        "<=" { kind = TK_LE; goto done; }
        ">=" { kind = TK_GE; goto done; }
        "<"  { kind = TK_LT; goto done; }
        ">"  { kind = TK_GT; goto done; }
        "="  { kind = TK_EQ; goto done; }
        "!"  { kind = TK_BANG; goto done; }
        "+=" { kind = TK_PLUSEQ; goto done; }
        "-=" { kind = TK_MINUSEQ; goto done; }
        "*=" { kind = TK_STAREQ; goto done; }
        "/=" { kind = TK_SLASHEQ; goto done; }
        "%=" { kind = TK_PERCENTEQ; goto done; }
        "+"  { kind = TK_PLUS; goto done; }
        "-"  { kind = TK_MINUS; goto done; }
        "*"  { kind = TK_STAR; goto done; }
        "/"  { kind = TK_SLASH; goto done; }
        "%"  { kind = TK_PERCENT; goto done; }
        "&&" { kind = TK_ANDAND; goto done; }
        "||" { kind = TK_OROR; goto done; }
        "&"  { kind = TK_AMP; goto done; }
        "|"  { kind = TK_PIPE; goto done; }
        "^"  { kind = TK_CARET; goto done; }

        /* A word with non-ASCII letters: report it once and go on as if it
         * were an identifier, so the parser does not add errors of its own. */
        ([a-zA-Z_] | utf8_mb) ([a-zA-Z0-9_] | utf8_mb)* {
            bad_unicode(lx, lx->tok, lx->cur);
            kind = TK_IDENT; goto done;
        }
        *    { bad_char(lx, lx->tok); continue; }
    */
    }
done:
    /* `>>` and `<<` are never formed: `A<B<C>>` closes two generic lists. */
    tk.kind = kind;
    if (kind == BXC_TK_EOF) {
        lx->cur = lx->lim;   /* stay at the end on further calls */
        lx->tok = lx->lim;
    }
    tk.span = span_of(lx, lx->tok, lx->cur);
    lx->prev = kind;
    return tk;
}

const char *bxc_token_name(int kind) {
    switch (kind) {
    case BXC_TK_EOF: return "end of file";
    case TK_IDENT: return "identifier";
    case TK_INT: return "integer literal";
    case TK_FLOAT: return "float literal";
    case TK_STRING: return "string literal";
    case TK_AS: return "`as`";
    case TK_BREAK: return "`break`";
    case TK_CONTINUE: return "`continue`";
    case TK_ELSE: return "`else`";
    case TK_ENUM: return "`enum`";
    case TK_FALSE: return "`false`";
    case TK_FN: return "`fn`";
    case TK_FOR: return "`for`";
    case TK_IF: return "`if`";
    case TK_IMPL: return "`impl`";
    case TK_IN: return "`in`";
    case TK_LET: return "`let`";
    case TK_LOOP: return "`loop`";
    case TK_MUT: return "`mut`";
    case TK_PUB: return "`pub`";
    case TK_RETURN: return "`return`";
    case TK_STRUCT: return "`struct`";
    case TK_TRAIT: return "`trait`";
    case TK_TRUE: return "`true`";
    case TK_TYPE: return "`type`";
    case TK_USE: return "`use`";
    case TK_WHILE: return "`while`";
    case TK_LPAREN: return "`(`";
    case TK_RPAREN: return "`)`";
    case TK_LBRACKET: return "`[`";
    case TK_RBRACKET: return "`]`";
    case TK_LBRACE: return "`{`";
    case TK_STRUCT_LBRACE: return "`{`";
    case TK_RBRACE: return "`}`";
    case TK_COMMA: return "`,`";
    case TK_SEMI: return "`;`";
    case TK_COLONCOLON: return "`::`";
    case TK_COLON: return "`:`";
    case TK_DOTDOTEQ: return "`..=`";
    case TK_DOTDOT: return "`..`";
    case TK_DOT: return "`.`";
    case TK_ARROW: return "`->`";
    case TK_FATARROW: return "`=>`";
    case TK_HASH: return "`#`";
    case TK_QUESTION: return "`?`";
    case TK_EQEQ: return "`==`";
    case TK_NE: return "`!=`";
    case TK_LE: return "`<=`";
    case TK_GE: return "`>=`";
    case TK_LT: return "`<`";
    case TK_GT: return "`>`";
    case TK_EQ: return "`=`";
    case TK_BANG: return "`!`";
    case TK_PLUSEQ: return "`+=`";
    case TK_MINUSEQ: return "`-=`";
    case TK_STAREQ: return "`*=`";
    case TK_SLASHEQ: return "`/=`";
    case TK_PERCENTEQ: return "`%=`";
    case TK_PLUS: return "`+`";
    case TK_MINUS: return "`-`";
    case TK_STAR: return "`*`";
    case TK_SLASH: return "`/`";
    case TK_PERCENT: return "`%`";
    case TK_ANDAND: return "`&&`";
    case TK_OROR: return "`||`";
    case TK_AMP: return "`&`";
    case TK_PIPE: return "`|`";
    case TK_CARET: return "`^`";
    default: return "token";   /* parser-internal codes (REPL_START, ...) */
    }
}

bool bxc_token_is_keyword(int kind) {
    switch (kind) {
    case TK_AS: case TK_BREAK: case TK_CONTINUE: case TK_ELSE: case TK_ENUM:
    case TK_FALSE: case TK_FN: case TK_FOR: case TK_IF: case TK_IMPL: case TK_IN:
    case TK_LET: case TK_LOOP: case TK_MUT: case TK_PUB: case TK_RETURN:
    case TK_STRUCT: case TK_TRAIT: case TK_TRUE: case TK_TYPE: case TK_USE:
    case TK_WHILE:
        return true;
    default:
        return false;
    }
}

static int hexval(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static uint32_t put_utf8(char *out, uint32_t cp) {
    if (cp < 0x80) { out[0] = (char)cp; return 1; }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

char *bxc_lex_decode_string(bxc_arena *a, const char *raw, uint32_t rawlen,
                            uint32_t *outlen) {
    /* Strip the quotes (an unterminated literal has no closing one). */
    uint32_t b = rawlen && raw[0] == '"' ? 1 : 0;
    uint32_t e = rawlen > b && raw[rawlen - 1] == '"' ? rawlen - 1 : rawlen;
    char *out = bxc_arena_alloc(a, (e > b ? e - b : 0) + 1);
    uint32_t n = 0;
    for (uint32_t i = b; i < e; i++) {
        char c = raw[i];
        if (c != '\\' || i + 1 >= e) {
            out[n++] = c;
            continue;
        }
        char x = raw[++i];
        switch (x) {
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case '0': out[n++] = '\0'; break;
        case '\\': case '"': case '\'': out[n++] = x; break;
        case '\n':   /* line continuation: skip the newline and indentation */
            while (i + 1 < e && (raw[i + 1] == ' ' || raw[i + 1] == '\t' || raw[i + 1] == '\n'))
                i++;
            break;
        case 'x':
            if (i + 2 < e && hexval(raw[i + 1]) >= 0 && hexval(raw[i + 2]) >= 0) {
                out[n++] = (char)(hexval(raw[i + 1]) * 16 + hexval(raw[i + 2]));
                i += 2;
            } else {
                out[n++] = '\\';
                out[n++] = x;
            }
            break;
        case 'u': {
            uint32_t cp = 0, j = i + 1;
            bool ok = j < e && raw[j] == '{';
            uint32_t digits = 0;
            for (j++; ok && j < e && raw[j] != '}'; j++, digits++) {
                int h = hexval(raw[j]);
                if (h < 0 || digits >= 6) ok = false;
                else cp = cp * 16 + (uint32_t)h;
            }
            ok = ok && j < e && digits > 0 && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
            if (ok) {
                /* \u{...} may expand to 4 bytes from 5+ source bytes. */
                n += put_utf8(out + n, cp);
                i = j;
            } else {
                out[n++] = '\\';
                out[n++] = x;
            }
            break;
        }
        default:
            out[n++] = '\\';
            out[n++] = x;
            break;
        }
    }
    out[n] = '\0';
    if (outlen) *outlen = n;
    return out;
}
