/* sync.c — open documents (didOpen / didChange / didSave / didClose),
 * URIs and positions, and the diagnostics published after every change.
 *
 * Changes are applied to the workspace's overlay in order, each range
 * converted from the negotiated encoding against the text as it stands
 * after the previous change (LSP's rule).  After a change the document is
 * checked, its diagnostics published, and every other open document whose
 * last check read this one is checked and published again. */
#include "lsp.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- URIs --------------------------------------------------------------------- */

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    c = tolower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

char *lsp_path_of_uri(const char *uri) {
    if (strncmp(uri, "file://", 7) != 0) return NULL;
    const char *p = uri + 7;
    if (strncmp(p, "localhost/", 10) == 0) p += 9;
    if (*p != '/') return NULL;
    char *out = malloc(strlen(p) + 1), *o = out;
    if (!out) return NULL;
    for (; *p && *p != '?' && *p != '#'; p++) {
        if (*p != '%') {
            *o++ = *p;
            continue;
        }
        int hi = hexval((unsigned char)p[1]), lo = hi < 0 ? -1 : hexval((unsigned char)p[2]);
        if (lo < 0 || (hi == 0 && lo == 0)) {   /* bad escape, or a NUL */
            free(out);
            return NULL;
        }
        *o++ = (char)(hi * 16 + lo);
        p += 2;
    }
    *o = '\0';
    return out;
}

/* Percent-encodes all but RFC 3986's unreserved characters and '/'. */
static char *uri_of_path(const char *path) {
    char *out = malloc(7 + 3 * strlen(path) + 1), *o = out;
    if (!out) return NULL;
    memcpy(o, "file://", 7);
    o += 7;
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if (isalnum(*p) || strchr("/-._~", *p)) *o++ = (char)*p;
        else o += sprintf(o, "%%%02X", *p);
    }
    *o = '\0';
    return out;
}

char *lsp_uri_of_path(const lsp_server *s, const char *path) {
    for (const lsp_doc *d = s->docs; d; d = d->next)
        if (strcmp(d->doc->path, path) == 0) return strdup(d->uri);
    char *c = bxc_ws_canonical(path);
    if (!c) return NULL;
    char *u = uri_of_path(c);
    free(c);
    return u;
}

/* ---- positions -------------------------------------------------------------------- */

cJSON *lsp_position(const lsp_server *s, const bxc_source *src, uint32_t offset) {
    uint32_t line = 0, col = 0;
    if (src) bxc_source_lsp_position(src, offset, s->enc, &line, &col);
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "line", line);
    cJSON_AddNumberToObject(p, "character", col);
    return p;
}

cJSON *lsp_range(const lsp_server *s, const bxc_unit *u, bxc_span span) {
    const bxc_source *src = span.file == BXC_NO_FILE ? NULL : bxc_sources_get(&u->sources, span.file);
    cJSON *r = cJSON_CreateObject();
    cJSON_AddItemToObject(r, "start", lsp_position(s, src, span.offset));
    cJSON_AddItemToObject(r, "end", lsp_position(s, src, span.offset + span.length));
    return r;
}

cJSON *lsp_location(const lsp_server *s, const bxc_unit *u, bxc_span span) {
    const bxc_source *src = bxc_sources_get(&u->sources, span.file);
    if (!src) return NULL;
    char *uri = lsp_uri_of_path(s, src->path);
    if (!uri) return NULL;
    cJSON *l = cJSON_CreateObject();
    cJSON_AddStringToObject(l, "uri", uri);
    free(uri);
    cJSON_AddItemToObject(l, "range", lsp_range(s, u, span));
    return l;
}

static bool get_u32(const cJSON *o, const char *key, uint32_t *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble != v->valuedouble) return false;
    /* LSP positions are uinteger; anything larger is past every line */
    *out = v->valuedouble >= 4294967295.0 ? UINT32_MAX : (uint32_t)v->valuedouble;
    return true;
}

/* A Position of the document's current text as a byte offset. */
static bool offset_in(const lsp_server *s, const bxc_doc *d, const cJSON *pos, uint32_t *off) {
    uint32_t line, col;
    if (!cJSON_IsObject(pos) || !get_u32(pos, "line", &line) || !get_u32(pos, "character", &col))
        return false;
    *off = bxc_text_offset(d->text, d->len, line, col, s->enc);
    return true;
}

bool lsp_offset_of(lsp_server *s, const lsp_doc *d, const cJSON *params,
                   uint32_t *offset, lsp_error *err) {
    if (!offset_in(s, d->doc, cJSON_GetObjectItemCaseSensitive(params, "position"), offset)) {
        lsp_fail(err, LSP_INVALID_PARAMS, "expected `position: {line, character}`");
        return false;
    }
    return true;
}

/* ---- documents ---------------------------------------------------------------------- */

static const char *uri_param(const cJSON *params) {
    const cJSON *td = cJSON_GetObjectItemCaseSensitive(params, "textDocument");
    const cJSON *uri = cJSON_GetObjectItemCaseSensitive(td, "uri");
    return cJSON_IsString(uri) ? uri->valuestring : NULL;
}

static lsp_doc *find_uri(lsp_server *s, const char *uri) {
    for (lsp_doc *d = s->docs; d; d = d->next)
        if (strcmp(d->uri, uri) == 0) return d;
    return NULL;
}

lsp_doc *lsp_doc_of(lsp_server *s, const cJSON *params, lsp_error *err) {
    const char *uri = uri_param(params);
    if (!uri) return lsp_fail(err, LSP_INVALID_PARAMS, "expected `textDocument.uri`"), NULL;
    lsp_doc *d = find_uri(s, uri);
    if (!d) lsp_fail(err, LSP_INVALID_PARAMS, "document not open: %.200s", uri);
    return d;
}

static void doc_free(lsp_server *s, lsp_doc *d) {
    bxc_ws_close(&s->ws, d->doc);
    free(d->uri);
    free(d);
}

void lsp_docs_free(lsp_server *s) {
    while (s->docs) {
        lsp_doc *n = s->docs->next;
        doc_free(s, s->docs);
        s->docs = n;
    }
}

/* ---- diagnostics ------------------------------------------------------------------ */

static void related(const lsp_server *s, const bxc_unit *u, cJSON *list, bxc_span span,
                    bxc_span fallback, const char *prefix, const char *message) {
    cJSON *loc = lsp_location(s, u, span.file == BXC_NO_FILE ? fallback : span);
    if (!loc) return;
    cJSON *r = cJSON_CreateObject();
    cJSON_AddItemToObject(r, "location", loc);
    size_t n = strlen(prefix) + strlen(message) + 1;
    char *text = malloc(n);
    if (text) snprintf(text, n, "%s%s", prefix, message);
    cJSON_AddStringToObject(r, "message", text ? text : message);
    free(text);
    cJSON_AddItemToArray(list, r);
}

/* One LSP Diagnostic.  A diagnostic located in another file (an imported
 * module's error) is shown at the top of this one, with its place as
 * related information. */
static cJSON *diagnostic(const lsp_server *s, const bxc_doc *doc, const bxc_diag *g) {
    const bxc_unit *u = &doc->unit;
    uint32_t root = u->nmodules ? u->modules[0]->file_id : 0;
    bool here = g->span.file == root;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "range", lsp_range(s, u, here ? g->span : bxc_span_make(root, 0, 0)));
    cJSON_AddNumberToObject(o, "severity", g->severity == BXC_SEV_ERROR ? 1
                                           : g->severity == BXC_SEV_WARNING ? 2 : 3);
    cJSON_AddStringToObject(o, "code", g->code);
    cJSON_AddStringToObject(o, "source", "bext");
    const bxc_source *src = here ? NULL : bxc_sources_get(&u->sources, g->span.file);
    if (src) {
        size_t n = strlen(src->path) + strlen(g->message) + 8;
        char *m = malloc(n);
        if (m) snprintf(m, n, "in %s: %s", src->path, g->message);
        cJSON_AddStringToObject(o, "message", m ? m : g->message);
        free(m);
    } else {
        cJSON_AddStringToObject(o, "message", g->message);
    }
    cJSON *rel = cJSON_CreateArray();
    bxc_span at = g->span.file == BXC_NO_FILE ? bxc_span_make(root, 0, 0) : g->span;
    if (src) related(s, u, rel, g->span, at, "", g->message);
    if (g->help) related(s, u, rel, at, at, "help: ", g->help);
    for (const bxc_diag_note *n = g->notes; n; n = n->next) related(s, u, rel, n->span, at, "note: ", n->message);
    if (cJSON_GetArraySize(rel)) cJSON_AddItemToObject(o, "relatedInformation", rel);
    else cJSON_Delete(rel);
    return o;
}

static void publish(lsp_server *s, const char *uri, int64_t version, const bxc_doc *doc) {
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "uri", uri);
    if (doc) cJSON_AddNumberToObject(p, "version", (double)version);
    cJSON *list = cJSON_AddArrayToObject(p, "diagnostics");
    if (doc && doc->status == BXC_WS_OOM) {
        cJSON *o = cJSON_CreateObject();
        cJSON *r = cJSON_AddObjectToObject(o, "range");
        cJSON *a = cJSON_AddObjectToObject(r, "start"), *b = cJSON_AddObjectToObject(r, "end");
        cJSON_AddNumberToObject(a, "line", 0), cJSON_AddNumberToObject(a, "character", 0);
        cJSON_AddNumberToObject(b, "line", 0), cJSON_AddNumberToObject(b, "character", 0);
        cJSON_AddNumberToObject(o, "severity", 1);
        cJSON_AddStringToObject(o, "source", "bext");
        cJSON_AddStringToObject(o, "message", "bext-lsp ran out of memory checking this document");
        cJSON_AddItemToArray(list, o);
    } else if (doc) {
        for (uint32_t i = 0; i < doc->unit.diags.count; i++) {
            const bxc_diag *g = &doc->unit.diags.items[i];
            if (g->severity == BXC_SEV_NOTE) continue;   /* notes ride on their diagnostic */
            cJSON_AddItemToArray(list, diagnostic(s, doc, g));
        }
    }
    lsp_notify(s, "textDocument/publishDiagnostics", p);
}

static void check_and_publish(lsp_server *s, lsp_doc *d) {
    bxc_ws_check(&s->ws, d->doc);
    publish(s, d->uri, d->version, d->doc);
}

/* Documents whose last check read `changed` see its new text. */
static void recheck_dependents(lsp_server *s, const lsp_doc *changed) {
    for (lsp_doc *d = s->docs; d; d = d->next)
        if (d != changed && bxc_doc_uses(d->doc, changed->doc->path)) check_and_publish(s, d);
}

static int64_t version_of(const cJSON *td) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(td, "version");
    return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
}

void lsp_did_open(lsp_server *s, const cJSON *params) {
    const cJSON *td = cJSON_GetObjectItemCaseSensitive(params, "textDocument");
    const char *uri = uri_param(params);
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(td, "text");
    if (!uri || !cJSON_IsString(text)) return;
    lsp_doc *d = find_uri(s, uri);
    /* Untitled documents (no file: URI) get their URI as a path: they
     * import from the stdlib and -I directories only. */
    char *path = lsp_path_of_uri(uri);
    const char *key = path ? path : uri;
    size_t len = strlen(text->valuestring);
    if (d) {
        if (!bxc_ws_set_text(d->doc, text->valuestring, len)) goto fail;
    } else {
        bxc_doc *same = bxc_ws_find(&s->ws, key);
        for (lsp_doc *o = s->docs; same && o; o = o->next)
            if (o->doc == same) {
                /* A second URI for an open file (a symlink): one document
                 * per file, so the first URI keeps it. */
                if (s->log) fprintf(s->log, "bext-lsp: %s is already open as %s\n", uri, o->uri);
                free(path);
                return;
            }
        d = calloc(1, sizeof *d);
        if (!d || !(d->uri = strdup(uri))) {
            free(d);
            goto fail;
        }
        d->doc = bxc_ws_open(&s->ws, key, text->valuestring, len);
        if (!d->doc) {
            free(d->uri);
            free(d);
            goto fail;
        }
        d->next = s->docs;
        s->docs = d;
    }
    free(path);
    d->version = version_of(td);
    check_and_publish(s, d);
    recheck_dependents(s, d);
    return;
fail:
    free(path);
    if (s->log) fprintf(s->log, "bext-lsp: cannot open %s (out of memory or over %u bytes)\n",
                        uri, BXC_SOURCE_MAX_BYTES);
}

/* One TextDocumentContentChangeEvent; false if malformed or refused. */
static bool apply_change(lsp_server *s, bxc_doc *doc, const cJSON *ch) {
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(ch, "text");
    if (!cJSON_IsString(text)) return false;
    size_t len = strlen(text->valuestring);
    const cJSON *range = cJSON_GetObjectItemCaseSensitive(ch, "range");
    if (!range) return bxc_ws_set_text(doc, text->valuestring, len);
    uint32_t a, b;
    if (!offset_in(s, doc, cJSON_GetObjectItemCaseSensitive(range, "start"), &a) ||
        !offset_in(s, doc, cJSON_GetObjectItemCaseSensitive(range, "end"), &b))
        return false;
    return bxc_ws_edit(doc, a, b, text->valuestring, len);
}

void lsp_did_change(lsp_server *s, const cJSON *params) {
    const char *uri = uri_param(params);
    lsp_doc *d = uri ? find_uri(s, uri) : NULL;
    const cJSON *changes = cJSON_GetObjectItemCaseSensitive(params, "contentChanges"), *ch;
    if (!d || !cJSON_IsArray(changes)) return;
    cJSON_ArrayForEach(ch, changes)
        if (!apply_change(s, d->doc, ch) && s->log)
            fprintf(s->log, "bext-lsp: dropped a malformed or refused change to %s\n", uri);
    d->version = version_of(cJSON_GetObjectItemCaseSensitive(params, "textDocument"));
    check_and_publish(s, d);
    recheck_dependents(s, d);
}

void lsp_did_save(lsp_server *s, const cJSON *params) {
    const char *uri = uri_param(params);
    lsp_doc *d = uri ? find_uri(s, uri) : NULL;
    if (!d) return;
    /* The overlay already has the text; files it imports may have
     * changed on disk. */
    check_and_publish(s, d);
}

void lsp_did_close(lsp_server *s, const cJSON *params) {
    const char *uri = uri_param(params);
    lsp_doc *d = uri ? find_uri(s, uri) : NULL;
    if (!d) return;
    publish(s, d->uri, 0, NULL);   /* clears its diagnostics in the editor */
    for (lsp_doc **p = &s->docs; *p; p = &(*p)->next)
        if (*p == d) {
            *p = d->next;
            break;
        }
    char *path = strdup(d->doc->path);
    doc_free(s, d);
    if (!path) return;
    /* Its importers read the disk again. */
    for (lsp_doc *o = s->docs; o; o = o->next)
        if (bxc_doc_uses(o->doc, path)) check_and_publish(s, o);
    free(path);
}
