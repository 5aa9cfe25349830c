/* workspace.c — open documents, their overlays and their checks (see
 * workspace.h). */
#include "workspace.h"

#include <limits.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static char *dup_str(const char *s) {
    size_t n = strlen(s);
    char *p = malloc(n + 1);
    if (p) memcpy(p, s, n + 1);
    return p;
}

void bxc_ws_init(bxc_ws *ws) {
    memset(ws, 0, sizeof *ws);
    ws->check_limit = BXC_WS_DEFAULT_CHECK_LIMIT;
}

static void doc_free(bxc_doc *d) {
    bxc_unit_free(&d->unit);
    free(d->path);
    free(d->text);
    free(d);
}

void bxc_ws_free(bxc_ws *ws) {
    while (ws->docs) {
        bxc_doc *n = ws->docs->next;
        doc_free(ws->docs);
        ws->docs = n;
    }
    for (uint32_t i = 0; i < ws->ninclude_dirs; i++) free(ws->include_dirs[i]);
    free(ws->include_dirs);
    free(ws->stdlib_dir);
    memset(ws, 0, sizeof *ws);
}

bool bxc_ws_add_include_dir(bxc_ws *ws, const char *dir) {
    char **nd = realloc(ws->include_dirs, (ws->ninclude_dirs + 1) * sizeof *nd);
    if (!nd) return false;
    ws->include_dirs = nd;
    char *d = dup_str(dir);
    if (!d) return false;
    nd[ws->ninclude_dirs++] = d;
    return true;
}

bool bxc_ws_set_stdlib_dir(bxc_ws *ws, const char *dir) {
    char *d = dir ? dup_str(dir) : NULL;
    if (dir && !d) return false;
    free(ws->stdlib_dir);
    ws->stdlib_dir = d;
    return true;
}

char *bxc_ws_canonical(const char *path) {
    char *r = realpath(path, NULL);
    return r ? r : dup_str(path);
}

bxc_doc *bxc_ws_find(bxc_ws *ws, const char *path) {
    char *c = bxc_ws_canonical(path);
    if (!c) return NULL;
    bxc_doc *d = ws->docs;
    while (d && strcmp(d->path, c) != 0) d = d->next;
    free(c);
    return d;
}

/* Room for `len` bytes and the NUL; the text is unchanged on failure. */
static bool reserve(bxc_doc *d, size_t len) {
    if (len > BXC_SOURCE_MAX_BYTES) return false;
    if (len + 1 <= d->cap) return true;
    size_t cap = d->cap ? d->cap : 256;
    while (cap < len + 1) cap *= 2;
    char *t = realloc(d->text, cap);
    if (!t) return false;
    d->text = t;
    d->cap = (uint32_t)cap;
    return true;
}

static void mark_edited(bxc_doc *d) {
    /* The old unit stays until the next check: hover on a document that
     * has not been re-checked yet still reads the last answers, whose
     * spans point into the unit's own copy of the text. */
    d->status = BXC_WS_UNCHECKED;
}

bool bxc_ws_set_text(bxc_doc *d, const char *text, size_t len) {
    if (!reserve(d, len)) return false;
    if (len) memmove(d->text, text, len);
    d->text[len] = '\0';
    d->len = (uint32_t)len;
    mark_edited(d);
    return true;
}

bool bxc_ws_edit(bxc_doc *d, uint32_t start, uint32_t end, const char *text, size_t len) {
    if (end > d->len) end = d->len;
    if (start > end) start = end;
    size_t keep = d->len - (end - start);
    if (len > BXC_SOURCE_MAX_BYTES - keep || !reserve(d, keep + len)) return false;
    memmove(d->text + start + len, d->text + end, d->len - end + 1);   /* NUL too */
    if (len) memcpy(d->text + start, text, len);
    d->len = (uint32_t)(keep + len);
    mark_edited(d);
    return true;
}

bxc_doc *bxc_ws_open(bxc_ws *ws, const char *path, const char *text, size_t len) {
    bxc_doc *d = bxc_ws_find(ws, path);
    if (d) return bxc_ws_set_text(d, text, len) ? d : NULL;
    d = calloc(1, sizeof *d);
    if (!d) return NULL;
    bxc_unit_init(&d->unit);
    d->path = bxc_ws_canonical(path);
    if (!d->path || !bxc_ws_set_text(d, text, len)) {
        doc_free(d);
        return NULL;
    }
    d->next = ws->docs;
    ws->docs = d;
    return d;
}

void bxc_ws_close(bxc_ws *ws, bxc_doc *doc) {
    for (bxc_doc **p = &ws->docs; *p; p = &(*p)->next)
        if (*p == doc) {
            *p = doc->next;
            doc_free(doc);
            return;
        }
}

/* The loader's overlay (module.h): an open document's text. */
static const char *overlay(void *ctx, const char *realpath, size_t *len) {
    for (bxc_doc *d = ((bxc_ws *)ctx)->docs; d; d = d->next)
        if (strcmp(d->path, realpath) == 0) {
            *len = d->len;
            return d->text;
        }
    return NULL;
}

bxc_ws_status bxc_ws_check(bxc_ws *ws, bxc_doc *d) {
    bxc_unit_free(&d->unit);
    bxc_unit_init(&d->unit);
    d->unit.arena.limit = ws->check_limit;
    bxc_oom_point oom;
    bxc_oom_push(&oom);
    if (setjmp(oom.env)) {
        /* Everything the load and check built is in the unit. */
        bxc_unit_free(&d->unit);
        bxc_unit_init(&d->unit);
        d->status = BXC_WS_OOM;
        return d->status;
    }
    bxc_unit *u = &d->unit;
    for (uint32_t i = 0; i < ws->ninclude_dirs; i++) bxc_unit_add_include_dir(u, ws->include_dirs[i]);
    if (ws->stdlib_dir) bxc_unit_set_stdlib_dir(u, ws->stdlib_dir);
    u->overlay = overlay;
    u->overlay_ctx = ws;
    bxc_unit_load_memory(u, d->path, d->text, d->len);
    bxc_check_unit(u);
    bxc_oom_pop(&oom);
    d->status = bxc_diag_has_errors(&u->diags) ? BXC_WS_ERRORS : BXC_WS_OK;
    return d->status;
}

const bxc_file *bxc_doc_ast(const bxc_doc *d) {
    return d->unit.nmodules ? d->unit.modules[0]->ast : NULL;
}

bool bxc_doc_uses(const bxc_doc *d, const char *path) {
    for (uint32_t i = 1; i < d->unit.nmodules; i++)
        if (strcmp(d->unit.modules[i]->realpath, path) == 0) return true;
    return false;
}

size_t bxc_ws_bytes(const bxc_ws *ws) {
    size_t n = 0;
    for (const bxc_doc *d = ws->docs; d; d = d->next) {
        n += d->cap + d->unit.arena.total;
        for (uint32_t i = 0; i < d->unit.sources.count; i++)
            n += d->unit.sources.files[i]->length;
    }
    return n;
}
