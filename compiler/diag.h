/* diag.h — diagnostics as data (style.md item 9).
 *
 * Library code never prints or exits: it appends bxc_diag records to a
 * bounded bxc_diag_list, and a driver renders them as clang-style text
 * (language.md §10) or JSON.
 *
 * Codes: every code any module emits (front end, checker, interpreter, C
 * generator) is a row of the one table in diag_codes.h, with its one-line
 * description; modules report with the table's enumerators. */
#ifndef BXC_DIAG_H
#define BXC_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "arena.h"
#include "diag_codes.h"
#include "source.h"

typedef enum bxc_diag_code {
#define BXC_X_(name, code, desc) name,
    BXC_DIAG_CODES(BXC_X_)
#undef BXC_X_
    BXC_DIAG_CODE_COUNT
} bxc_diag_code;

/* The code string ("E0101") and one-line description of a code. */
const char *bxc_diag_code_str(bxc_diag_code c);
const char *bxc_diag_code_desc(bxc_diag_code c);
/* The description of a code string ("E0505"), NULL if no such code. */
const char *bxc_diag_describe(const char *code);
/* The code of a code string; false if none. */
bool bxc_diag_code_find(const char *code, bxc_diag_code *out);
/* Every code string, in table order (BXC_DIAG_CODE_COUNT of them): the
 * candidates of a did-you-mean. */
const char *const *bxc_diag_code_strs(void);

typedef enum bxc_severity {
    BXC_SEV_ERROR,
    BXC_SEV_WARNING,
    BXC_SEV_NOTE,
} bxc_severity;

const char *bxc_severity_name(bxc_severity s);   /* "error", "warning", "note" */
/* The severity class of a code: its letter (W warning, else error). */
bxc_severity bxc_diag_code_severity(bxc_diag_code c);

typedef struct bxc_diag_note {
    bxc_span span;            /* may be bxc_span_none() */
    const char *message;
    struct bxc_diag_note *next;
} bxc_diag_note;

typedef struct bxc_diag {
    bxc_severity severity;
    const char *code;         /* "E0101"; never NULL */
    bxc_span span;            /* primary location; BXC_NO_FILE if none */
    const char *message;
    const char *help;         /* NULL if none */
    bxc_diag_note *notes;     /* secondary notes, in order */
    uint32_t nnotes;
} bxc_diag;

#define BXC_DIAG_DEFAULT_LIMIT 100

typedef struct bxc_diag_list {
    bxc_arena *arena;         /* strings and records live here */
    bxc_diag *items;
    uint32_t count, cap;
    uint32_t limit;           /* errors+warnings kept before "too many" */
    uint32_t errors, warnings;
    bool truncated;           /* the "too many errors" entry was added */
} bxc_diag_list;

void bxc_diag_list_init(bxc_diag_list *l, bxc_arena *arena);
/* Appends a diagnostic.  Returns NULL once the limit is reached (the first
 * refused error/warning adds the single "too many errors" entry); notes
 * are never refused while their diagnostic exists. */
bxc_diag *bxc_diag_add(bxc_diag_list *l, bxc_severity sev, const char *code,
                       bxc_span span, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
bxc_diag *bxc_diag_vadd(bxc_diag_list *l, bxc_severity sev, const char *code,
                        bxc_span span, const char *fmt, va_list ap);
/* Shorthands with a code of the table (any module's). */
bxc_diag *bxc_diag_error(bxc_diag_list *l, bxc_diag_code code, bxc_span span,
                         const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
bxc_diag *bxc_diag_warning(bxc_diag_list *l, bxc_diag_code code, bxc_span span,
                           const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Attach help / a secondary note; both accept d == NULL (a refused diag). */
void bxc_diag_set_help(bxc_diag_list *l, bxc_diag *d, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void bxc_diag_add_note(bxc_diag_list *l, bxc_diag *d, bxc_span span,
                       const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static inline bool bxc_diag_has_errors(const bxc_diag_list *l) {
    return l->errors > 0;
}

/* Renderers.  Text: language.md §10 —
 *   file:line:col: error[E0101]: message
 *   <source line>
 *   <spaces>^~~~
 *   help: ...
 * then each note the same way with "note:".  Diagnostics without a file
 * render as "bextc: error[CODE]: message".  `sources` may be NULL. */
void bxc_diag_render_text(FILE *out, const bxc_diag_list *l,
                          const bxc_sources *sources);
void bxc_diag_render_one_text(FILE *out, const bxc_diag *d,
                              const bxc_sources *sources);
/* JSON: an array, one object per diagnostic on its own line, fields
 *   file, line, column, end_line, end_column (end exclusive; 1-based),
 *   severity, code, message, help (null if none), notes [{file, line,
 *   column, end_line, end_column, message}].
 * Location fields are null for diagnostics without a file.
 * Returns a malloc'd string (caller frees); NULL only on OOM. */
char *bxc_diag_render_json(const bxc_diag_list *l, const bxc_sources *sources);
void bxc_diag_render_json_file(FILE *out, const bxc_diag_list *l,
                               const bxc_sources *sources);

/* The candidate nearest to `word` for a "did you mean `X`?" help (case-
 * insensitive edit distance, at most one edit per three characters), or
 * NULL when none is near enough.  Shared by the checker and the
 * interpreter. */
const char *bxc_diag_nearest(const char *word, const char *const *cands, uint32_t n);

#endif
