/* diag.c — the diagnostic list and its two renderers (text, JSON). */
#include "diag.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *const code_strs[] = {
#define BXC_X_(name, code, desc) #code,
    BXC_DIAG_CODES(BXC_X_)
#undef BXC_X_
};
static const char *const code_descs[] = {
#define BXC_X_(name, code, desc) desc,
    BXC_DIAG_CODES(BXC_X_)
#undef BXC_X_
};
_Static_assert(sizeof code_strs / sizeof code_strs[0] == BXC_DIAG_CODE_COUNT,
               "one string per diagnostic code");
_Static_assert(sizeof code_descs / sizeof code_descs[0] == BXC_DIAG_CODE_COUNT,
               "one description per diagnostic code");
/* Codes are unique: each becomes an enumerator here, and a code listed twice
 * is a redeclared enumerator — a compile error. */
enum bxc_diag_code_unique_ {
#define BXC_X_(name, code, desc) BXC_DIAG_UNIQUE_##code,
    BXC_DIAG_CODES(BXC_X_)
#undef BXC_X_
};

const char *bxc_diag_code_str(bxc_diag_code c) {
    return (unsigned)c < BXC_DIAG_CODE_COUNT ? code_strs[c] : code_strs[BXC_E_INTERNAL];
}

const char *bxc_diag_code_desc(bxc_diag_code c) {
    return (unsigned)c < BXC_DIAG_CODE_COUNT ? code_descs[c] : code_descs[BXC_E_INTERNAL];
}

bxc_severity bxc_diag_code_severity(bxc_diag_code c) {
    return bxc_diag_code_str(c)[0] == 'W' ? BXC_SEV_WARNING : BXC_SEV_ERROR;
}

bool bxc_diag_code_find(const char *code, bxc_diag_code *out) {
    if (!code) return false;
    for (unsigned i = 0; i < BXC_DIAG_CODE_COUNT; i++)
        if (strcmp(code_strs[i], code) == 0) {
            if (out) *out = (bxc_diag_code)i;
            return true;
        }
    return false;
}

const char *bxc_diag_describe(const char *code) {
    bxc_diag_code c;
    return bxc_diag_code_find(code, &c) ? code_descs[c] : NULL;
}

const char *const *bxc_diag_code_strs(void) { return code_strs; }

const char *bxc_severity_name(bxc_severity s) {
    switch (s) {
    case BXC_SEV_ERROR: return "error";
    case BXC_SEV_WARNING: return "warning";
    case BXC_SEV_NOTE: return "note";
    }
    return "error";
}

void bxc_diag_list_init(bxc_diag_list *l, bxc_arena *arena) {
    memset(l, 0, sizeof *l);
    l->arena = arena;
    l->limit = BXC_DIAG_DEFAULT_LIMIT;
}

static bxc_diag *push(bxc_diag_list *l) {
    if (l->count == l->cap) {
        uint32_t nc = l->cap ? l->cap * 2 : 16;
        bxc_diag *ni = bxc_arena_alloc(l->arena, nc * sizeof *ni);
        if (l->count) memcpy(ni, l->items, l->count * sizeof *ni);
        l->items = ni;
        l->cap = nc;
    }
    bxc_diag *d = &l->items[l->count++];
    memset(d, 0, sizeof *d);
    return d;
}

bxc_diag *bxc_diag_vadd(bxc_diag_list *l, bxc_severity sev, const char *code,
                        bxc_span span, const char *fmt, va_list ap) {
    if (sev != BXC_SEV_NOTE && l->errors + l->warnings >= l->limit) {
        if (!l->truncated) {
            l->truncated = true;
            bxc_diag *t = push(l);
            t->severity = BXC_SEV_ERROR;
            t->code = bxc_diag_code_str(BXC_E_TOO_MANY);
            t->span = bxc_span_none();
            t->message = bxc_arena_printf(l->arena,
                "too many errors (limit %u); stopping here", l->limit);
            l->errors++;
        }
        /* Errors past the cap still count, so the exit status is right. */
        if (sev == BXC_SEV_ERROR) l->errors++;
        return NULL;
    }
    bxc_diag *d = push(l);
    d->severity = sev;
    d->code = code ? code : bxc_diag_code_str(BXC_E_INTERNAL);
    d->span = span;
    d->message = bxc_arena_vprintf(l->arena, fmt, ap);
    if (sev == BXC_SEV_ERROR) l->errors++;
    else if (sev == BXC_SEV_WARNING) l->warnings++;
    return d;
}

bxc_diag *bxc_diag_add(bxc_diag_list *l, bxc_severity sev, const char *code,
                       bxc_span span, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    bxc_diag *d = bxc_diag_vadd(l, sev, code, span, fmt, ap);
    va_end(ap);
    return d;
}

bxc_diag *bxc_diag_error(bxc_diag_list *l, bxc_diag_code code, bxc_span span,
                         const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    bxc_diag *d = bxc_diag_vadd(l, BXC_SEV_ERROR, bxc_diag_code_str(code),
                                span, fmt, ap);
    va_end(ap);
    return d;
}

bxc_diag *bxc_diag_warning(bxc_diag_list *l, bxc_diag_code code, bxc_span span,
                           const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    bxc_diag *d = bxc_diag_vadd(l, BXC_SEV_WARNING, bxc_diag_code_str(code),
                                span, fmt, ap);
    va_end(ap);
    return d;
}

void bxc_diag_set_help(bxc_diag_list *l, bxc_diag *d, const char *fmt, ...) {
    if (!d) return;
    va_list ap;
    va_start(ap, fmt);
    d->help = bxc_arena_vprintf(l->arena, fmt, ap);
    va_end(ap);
}

void bxc_diag_add_note(bxc_diag_list *l, bxc_diag *d, bxc_span span,
                       const char *fmt, ...) {
    if (!d) return;
    bxc_diag_note *n = bxc_arena_alloc(l->arena, sizeof *n);
    n->span = span;
    va_list ap;
    va_start(ap, fmt);
    n->message = bxc_arena_vprintf(l->arena, fmt, ap);
    va_end(ap);
    bxc_diag_note **tail = &d->notes;
    while (*tail) tail = &(*tail)->next;
    *tail = n;
    d->nnotes++;
}

/* ---- text ---------------------------------------------------------------- */

/* Length of a valid UTF-8 sequence at p (bounded by end), or 0 if invalid. */
static int utf8_len(const unsigned char *p, const unsigned char *end) {
    unsigned c = p[0];
    int n;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) n = 3;
    else if (c >= 0xF0 && c <= 0xF4) n = 4;
    else return 0;
    if (end - p < n) return 0;
    for (int i = 1; i < n; i++)
        if ((p[i] & 0xC0) != 0x80) return 0;
    return n;
}

/* Longest source line shown; longer lines are shown as a window around the
 * caret so a 1 MB line does not flood the terminal. */
#define SHOW_MAX 240

static void render_snippet(FILE *out, const bxc_source *src, bxc_span span) {
    uint32_t line, col;
    bxc_source_position(src, span.offset, &line, &col);
    uint32_t len;
    const unsigned char *text = (const unsigned char *)bxc_source_line(src, line, &len);
    uint32_t c0 = col - 1;                 /* byte index of the span in the line */
    if (c0 > len) c0 = len;
    uint32_t from = 0, to = len;
    if (len > SHOW_MAX) {
        from = c0 > SHOW_MAX / 2 ? c0 - SHOW_MAX / 2 : 0;
        to = from + SHOW_MAX < len ? from + SHOW_MAX : len;
        /* Do not start or stop inside a UTF-8 sequence. */
        while (from > 0 && (text[from] & 0xC0) == 0x80) from--;
        while (to < len && (text[to] & 0xC0) == 0x80) to++;
    }
    uint32_t end_in_line = c0 + span.length;
    if (end_in_line > to) end_in_line = to;

    /* Source line: printable bytes as is, anything else as '?' so caret
     * columns stay aligned and no control bytes reach the terminal. */
    const char *prefix = from > 0 ? "..." : "";
    fputs(prefix, out);
    for (uint32_t i = from; i < to;) {
        int n = utf8_len(text + i, text + to);
        if (n == 1 && (text[i] >= 0x20 || text[i] == '\t') && text[i] != 0x7F) {
            fputc(text[i], out);
        } else if (n > 1) {
            fwrite(text + i, 1, (size_t)n, out);
        } else {
            fputc('?', out);
            n = 1;
        }
        i += (uint32_t)n;
    }
    fputs(to < len ? "...\n" : "\n", out);

    /* Caret line: one column per displayed character. */
    fputs(from > 0 ? "   " : "", out);
    uint32_t i = from;
    while (i < c0 && i < to) {
        int n = utf8_len(text + i, text + to);
        fputc(text[i] == '\t' ? '\t' : ' ', out);
        i += n > 0 ? (uint32_t)n : 1;
    }
    fputc('^', out);
    if (i < end_in_line) {
        int n = utf8_len(text + i, text + to);
        i += n > 0 ? (uint32_t)n : 1;
    }
    while (i < end_in_line) {
        int n = utf8_len(text + i, text + to);
        fputc('~', out);
        i += n > 0 ? (uint32_t)n : 1;
    }
    fputc('\n', out);
}

/* The head line: "file:line:col: error[E0101]: message"; a note has no
 * code ("note: ..."). */
static void render_head(FILE *out, const bxc_source *src, bxc_span span,
                        const char *sev, const char *code, const char *msg) {
    const char *lb = code ? "[" : "", *rb = code ? "]" : "";
    if (!code) code = "";
    if (src) {
        uint32_t line, col;
        bxc_source_position(src, span.offset, &line, &col);
        fprintf(out, "%s:%u:%u: %s%s%s%s: %s\n", src->path, line, col, sev, lb, code, rb, msg);
        render_snippet(out, src, span);
    } else {
        fprintf(out, "bextc: %s%s%s%s: %s\n", sev, lb, code, rb, msg);
    }
}

void bxc_diag_render_one_text(FILE *out, const bxc_diag *d,
                              const bxc_sources *sources) {
    const bxc_source *src = bxc_sources_get(sources, d->span.file);
    render_head(out, src, d->span, bxc_severity_name(d->severity), d->code, d->message);
    if (d->help) fprintf(out, "help: %s\n", d->help);
    for (const bxc_diag_note *n = d->notes; n; n = n->next)
        render_head(out, bxc_sources_get(sources, n->span.file), n->span,
                    "note", NULL, n->message);
}

void bxc_diag_render_text(FILE *out, const bxc_diag_list *l,
                          const bxc_sources *sources) {
    for (uint32_t i = 0; i < l->count; i++)
        bxc_diag_render_one_text(out, &l->items[i], sources);
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_location(cJSON *o, const bxc_source *src, bxc_span span) {
    if (!src) {
        cJSON_AddNullToObject(o, "file");
        cJSON_AddNullToObject(o, "line");
        cJSON_AddNullToObject(o, "column");
        cJSON_AddNullToObject(o, "end_line");
        cJSON_AddNullToObject(o, "end_column");
        return;
    }
    uint32_t l0, c0, l1, c1;
    bxc_source_position(src, span.offset, &l0, &c0);
    bxc_source_position(src, span.offset + span.length, &l1, &c1);
    cJSON_AddStringToObject(o, "file", src->path);
    cJSON_AddNumberToObject(o, "line", l0);
    cJSON_AddNumberToObject(o, "column", c0);
    cJSON_AddNumberToObject(o, "end_line", l1);
    cJSON_AddNumberToObject(o, "end_column", c1);
}

static cJSON *json_one(const bxc_diag *d, const bxc_sources *sources) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    json_location(o, bxc_sources_get(sources, d->span.file), d->span);
    cJSON_AddStringToObject(o, "severity", bxc_severity_name(d->severity));
    cJSON_AddStringToObject(o, "code", d->code);
    cJSON_AddStringToObject(o, "message", d->message);
    if (d->help) cJSON_AddStringToObject(o, "help", d->help);
    else cJSON_AddNullToObject(o, "help");
    cJSON *notes = cJSON_AddArrayToObject(o, "notes");
    for (const bxc_diag_note *n = d->notes; n && notes; n = n->next) {
        cJSON *no = cJSON_CreateObject();
        if (!no) break;
        json_location(no, bxc_sources_get(sources, n->span.file), n->span);
        cJSON_AddStringToObject(no, "message", n->message);
        cJSON_AddItemToArray(notes, no);
    }
    return o;
}

char *bxc_diag_render_json(const bxc_diag_list *l, const bxc_sources *sources) {
    /* One object per line inside the array: valid JSON, and line-friendly. */
    size_t cap = 256, len = 0;
    char *buf = malloc(cap);
    if (!buf) return NULL;
    buf[len++] = '[';
    for (uint32_t i = 0; i < l->count; i++) {
        cJSON *o = json_one(&l->items[i], sources);
        char *s = o ? cJSON_PrintUnformatted(o) : NULL;
        cJSON_Delete(o);
        if (!s) {
            free(buf);
            return NULL;
        }
        size_t n = strlen(s);
        if (len + n + 8 > cap) {
            while (len + n + 8 > cap) cap *= 2;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(s);
                free(buf);
                return NULL;
            }
            buf = nb;
        }
        buf[len++] = i ? ',' : '\n';
        if (i) buf[len++] = '\n';
        memcpy(buf + len, s, n);
        len += n;
        free(s);
    }
    if (l->count) buf[len++] = '\n';
    buf[len++] = ']';
    buf[len++] = '\n';
    buf[len] = '\0';
    return buf;
}

void bxc_diag_render_json_file(FILE *out, const bxc_diag_list *l,
                               const bxc_sources *sources) {
    char *s = bxc_diag_render_json(l, sources);
    if (s) {
        fputs(s, out);
        free(s);
    }
}

/* ---- did you mean ---- */

/* Case-insensitive Levenshtein distance, capped (names are short). */
static unsigned edit_distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) return 99;
    unsigned prev[64], cur[64];
    for (size_t j = 0; j <= lb; j++) prev[j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (unsigned)i;
        for (size_t j = 1; j <= lb; j++) {
            unsigned sub = prev[j - 1] +
                           (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            unsigned del = prev[j] + 1, ins = cur[j - 1] + 1;
            unsigned m = sub < del ? sub : del;
            cur[j] = m < ins ? m : ins;
        }
        memcpy(prev, cur, (lb + 1) * sizeof *prev);
    }
    return prev[lb];
}

const char *bxc_diag_nearest(const char *word, const char *const *cands, uint32_t n) {
    const char *best = NULL;
    unsigned best_d = 99;
    size_t len = strlen(word);
    /* Allow one edit per three characters (at least one), never so many
     * that unrelated short names match. */
    unsigned limit = len < 3 ? 1 : (unsigned)(len / 3 > 3 ? 3 : (len / 3 < 1 ? 1 : len / 3));
    for (uint32_t i = 0; i < n; i++) {
        if (!cands[i] || strcmp(cands[i], word) == 0) continue;
        unsigned d = edit_distance(word, cands[i]);
        if (d < best_d) {
            best_d = d;
            best = cands[i];
        }
    }
    return best_d <= limit && best_d < len ? best : NULL;
}
