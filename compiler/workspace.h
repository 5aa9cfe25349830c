/* workspace.h — the front end held by a long-lived process (bext-lsp).
 *
 * A workspace keeps the documents an editor has open: each one's unsaved
 * text (the overlay) and the unit of its last check.  Checking a document
 * loads it as the root of a fresh unit through the ordinary module loader
 * (module.h), whose `use`s see the other open documents' text before the
 * disk and the stdlib; the previous unit, arena and sources, is freed first,
 * so a process that re-checks after every edit holds one unit per document
 * and no more.  What the checker recorded (types, bxc_expr.res) is read
 * from doc->unit: the workspace resolves nothing itself.
 *
 * Allocation failure never aborts here: text edits report false, and a
 * check that runs out of memory (or past the workspace's per-document
 * limit) frees what it built and reports BXC_WS_OOM. */
#ifndef BXC_WORKSPACE_H
#define BXC_WORKSPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "module.h"

typedef enum bxc_ws_status {
    BXC_WS_UNCHECKED,   /* opened or edited, not checked since */
    BXC_WS_OK,          /* checked without errors (warnings allowed) */
    BXC_WS_ERRORS,      /* checked; errors in doc->unit.diags */
    BXC_WS_OOM,         /* the check ran out of memory; doc->unit is empty */
} bxc_ws_status;

typedef struct bxc_doc {
    char *path;             /* canonical absolute path: the document's key */
    char *text;             /* the editor's text, NUL-terminated (len bytes) */
    uint32_t len, cap;
    bxc_ws_status status;
    bxc_unit unit;          /* the last check (empty before the first) */
    struct bxc_doc *next;
} bxc_doc;

typedef struct bxc_ws {
    bxc_doc *docs;
    char **include_dirs;    /* -I directories for every check */
    uint32_t ninclude_dirs;
    char *stdlib_dir;       /* NULL: the loader's own search */
    size_t check_limit;     /* arena bytes one check may use; 0: none */
} bxc_ws;

/* Per-document arena limit a workspace starts with. */
#define BXC_WS_DEFAULT_CHECK_LIMIT ((size_t)1 << 30)

void bxc_ws_init(bxc_ws *ws);
void bxc_ws_free(bxc_ws *ws);
/* Both copy the string; false on allocation failure. */
bool bxc_ws_add_include_dir(bxc_ws *ws, const char *dir);
bool bxc_ws_set_stdlib_dir(bxc_ws *ws, const char *dir);

/* The canonical form of a path (realpath when the file exists, else the
 * path as given), malloc'd; NULL on allocation failure. */
char *bxc_ws_canonical(const char *path);

/* Opens `path` with `text` (replacing the text of a document already open
 * under that path); unchecked.  NULL on allocation failure or a text over
 * BXC_SOURCE_MAX_BYTES. */
bxc_doc *bxc_ws_open(bxc_ws *ws, const char *path, const char *text, size_t len);
/* The open document of `path` (canonicalized), or NULL. */
bxc_doc *bxc_ws_find(bxc_ws *ws, const char *path);
void bxc_ws_close(bxc_ws *ws, bxc_doc *doc);

/* Replaces the whole text / bytes [start, end) of it (clamped to the
 * text; start > end is taken as end).  False, with the text unchanged,
 * on allocation failure or when the result would pass
 * BXC_SOURCE_MAX_BYTES.  The document becomes unchecked. */
bool bxc_ws_set_text(bxc_doc *doc, const char *text, size_t len);
bool bxc_ws_edit(bxc_doc *doc, uint32_t start, uint32_t end,
                 const char *text, size_t len);

/* Checks the document: frees its last unit, loads its text as the root of
 * a new one (imports: open documents, then disk and the stdlib) and runs
 * the checker.  Diagnostics in doc->unit.diags. */
bxc_ws_status bxc_ws_check(bxc_ws *ws, bxc_doc *doc);

/* The root file of the last check, or NULL. */
const bxc_file *bxc_doc_ast(const bxc_doc *doc);
/* Whether the last check of `doc` read the file at canonical `path` (so
 * an edit of that file calls for a re-check of doc). */
bool bxc_doc_uses(const bxc_doc *doc, const char *path);

/* Bytes the workspace holds: texts, arenas, sources.  For tests that
 * prove edits do not make it grow. */
size_t bxc_ws_bytes(const bxc_ws *ws);

#endif
