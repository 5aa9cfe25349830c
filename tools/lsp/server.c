/* server.c — JSON-RPC dispatch and the LSP lifecycle (initialize,
 * shutdown, exit).  One table lists every method served; anything else is
 * MethodNotFound (requests) or ignored (notifications), as the spec says. */
#include "lsp.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>


typedef cJSON *(*request_fn)(lsp_server *s, const cJSON *params, lsp_error *err);
typedef void (*notify_fn)(lsp_server *s, const cJSON *params);

static cJSON *initialize(lsp_server *s, const cJSON *params, lsp_error *err);
static cJSON *shutdown_(lsp_server *s, const cJSON *params, lsp_error *err);
static void initialized(lsp_server *s, const cJSON *params);
static void exit_(lsp_server *s, const cJSON *params);

static const struct {
    const char *method;
    request_fn request;     /* exactly one of the two */
    notify_fn notify;
} methods[] = {
    {"initialize", initialize, NULL},
    {"initialized", NULL, initialized},
    {"shutdown", shutdown_, NULL},
    {"exit", NULL, exit_},
    {"textDocument/didOpen", NULL, lsp_did_open},
    {"textDocument/didChange", NULL, lsp_did_change},
    {"textDocument/didSave", NULL, lsp_did_save},
    {"textDocument/didClose", NULL, lsp_did_close},
    {"textDocument/hover", lsp_hover, NULL},
    {"textDocument/definition", lsp_definition, NULL},
    {"textDocument/documentSymbol", lsp_document_symbol, NULL},
    {"textDocument/completion", lsp_completion, NULL},
    {"textDocument/semanticTokens/full", lsp_semantic_tokens, NULL},
};

void lsp_server_init(lsp_server *s, FILE *out, FILE *log) {
    memset(s, 0, sizeof *s);
    s->out = out;
    s->log = log;
    s->exit_code = 1;
    s->enc = BXC_POS_UTF16;
    bxc_ws_init(&s->ws);
}

void lsp_server_free(lsp_server *s) {
    lsp_docs_free(s);
    bxc_ws_free(&s->ws);
}

cJSON *lsp_fail(lsp_error *err, int code, const char *fmt, ...) {
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->text, sizeof err->text, fmt, ap);
    va_end(ap);
    return NULL;
}

static void logf_(lsp_server *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(lsp_server *s, const char *fmt, ...) {
    if (!s->log) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("bext-lsp: ", s->log);
    vfprintf(s->log, fmt, ap);
    fputc('\n', s->log);
    va_end(ap);
}

/* Sends `msg` (consumed).  Out of memory while printing drops the message:
 * the client then times the request out, the server lives on. */
static void send(lsp_server *s, cJSON *msg) {
    if (!msg) return;
    char *text = cJSON_PrintUnformatted(msg);
    cJSON_Delete(msg);
    if (!text) {
        logf_(s, "out of memory writing a message");
        return;
    }
    if (!lsp_write_message(s->out, text, strlen(text))) logf_(s, "cannot write to the client");
    free(text);
}

static cJSON *envelope(const cJSON *id) {
    cJSON *m = cJSON_CreateObject();
    if (!m) return NULL;
    cJSON_AddStringToObject(m, "jsonrpc", "2.0");
    cJSON *idc = id ? cJSON_Duplicate(id, false) : cJSON_CreateNull();
    if (!idc) {
        cJSON_Delete(m);
        return NULL;
    }
    cJSON_AddItemToObject(m, "id", idc);
    return m;
}

static void reply(lsp_server *s, const cJSON *id, cJSON *result) {
    cJSON *m = envelope(id);
    if (!m || !result) {
        cJSON_Delete(result);
        cJSON_Delete(m);
        logf_(s, "out of memory answering a request");
        return;
    }
    cJSON_AddItemToObject(m, "result", result);
    send(s, m);
}

static void reply_error(lsp_server *s, const cJSON *id, int code, const char *text) {
    cJSON *m = envelope(id);
    cJSON *e = cJSON_CreateObject();
    if (!m || !e) {
        cJSON_Delete(m);
        cJSON_Delete(e);
        return;
    }
    cJSON_AddNumberToObject(e, "code", code);
    cJSON_AddStringToObject(e, "message", text);
    cJSON_AddItemToObject(m, "error", e);
    send(s, m);
}

void lsp_notify(lsp_server *s, const char *method, cJSON *params) {
    cJSON *m = cJSON_CreateObject();
    if (!m || !params) {
        cJSON_Delete(m);
        cJSON_Delete(params);
        logf_(s, "out of memory sending %s", method);
        return;
    }
    cJSON_AddStringToObject(m, "jsonrpc", "2.0");
    cJSON_AddStringToObject(m, "method", method);
    cJSON_AddItemToObject(m, "params", params);
    send(s, m);
}

/* ---- lifecycle -------------------------------------------------------------- */

/* utf-8 when the client offers it (no conversion), else the default. */
static bxc_pos_enc negotiate(const cJSON *params) {
    const cJSON *caps = cJSON_GetObjectItemCaseSensitive(params, "capabilities");
    const cJSON *gen = cJSON_GetObjectItemCaseSensitive(caps, "general");
    const cJSON *encs = cJSON_GetObjectItemCaseSensitive(gen, "positionEncodings");
    const cJSON *e, *arr = cJSON_IsArray(encs) ? encs : NULL;
    cJSON_ArrayForEach(e, arr)
        if (cJSON_IsString(e) && strcmp(e->valuestring, "utf-8") == 0) return BXC_POS_UTF8;
    return BXC_POS_UTF16;
}

/* initializationOptions: {"includeDirs": ["dir", ...], "stdlibDir": "dir"}. */
static bool apply_options(lsp_server *s, const cJSON *params, lsp_error *err) {
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(params, "initializationOptions");
    if (!cJSON_IsObject(o)) return true;
    const cJSON *dirs = cJSON_GetObjectItemCaseSensitive(o, "includeDirs"), *d;
    if (!cJSON_IsArray(dirs)) dirs = NULL;
    cJSON_ArrayForEach(d, dirs) {
        if (!cJSON_IsString(d)) {
            lsp_fail(err, LSP_INVALID_PARAMS, "initializationOptions.includeDirs: expected strings");
            return false;
        }
        if (!bxc_ws_add_include_dir(&s->ws, d->valuestring)) {
            lsp_fail(err, LSP_INTERNAL_ERROR, "out of memory");
            return false;
        }
    }
    const cJSON *std = cJSON_GetObjectItemCaseSensitive(o, "stdlibDir");
    if (cJSON_IsString(std) && !bxc_ws_set_stdlib_dir(&s->ws, std->valuestring)) {
        lsp_fail(err, LSP_INTERNAL_ERROR, "out of memory");
        return false;
    }
    return true;
}

static cJSON *initialize(lsp_server *s, const cJSON *params, lsp_error *err) {
    if (s->state != LSP_UNINITIALIZED)
        return lsp_fail(err, LSP_INVALID_REQUEST, "initialize: the server is already initialized");
    if (!cJSON_IsObject(params)) return lsp_fail(err, LSP_INVALID_PARAMS, "initialize: params must be an object");
    if (!apply_options(s, params, err)) return NULL;
    s->enc = negotiate(params);

    cJSON *r = cJSON_CreateObject(), *caps = cJSON_AddObjectToObject(r, "capabilities");
    cJSON_AddStringToObject(caps, "positionEncoding", s->enc == BXC_POS_UTF8 ? "utf-8" : "utf-16");
    cJSON *sync = cJSON_AddObjectToObject(caps, "textDocumentSync");
    cJSON_AddBoolToObject(sync, "openClose", true);
    cJSON_AddNumberToObject(sync, "change", 2);   /* Incremental */
    cJSON_AddBoolToObject(sync, "save", true);
    cJSON_AddBoolToObject(caps, "hoverProvider", true);
    cJSON_AddBoolToObject(caps, "definitionProvider", true);
    cJSON_AddBoolToObject(caps, "documentSymbolProvider", true);
    cJSON *comp = cJSON_AddObjectToObject(caps, "completionProvider");
    cJSON *trig = cJSON_AddArrayToObject(comp, "triggerCharacters");
    cJSON_AddItemToArray(trig, cJSON_CreateString("."));
    cJSON_AddItemToArray(trig, cJSON_CreateString(":"));
    cJSON *sem = cJSON_AddObjectToObject(caps, "semanticTokensProvider");
    cJSON_AddItemToObject(sem, "legend", lsp_token_legend());
    cJSON_AddBoolToObject(sem, "full", true);
    cJSON *info = cJSON_AddObjectToObject(r, "serverInfo");
    cJSON_AddStringToObject(info, "name", "bext-lsp");
    cJSON_AddStringToObject(info, "version", BEXT_VERSION);
    /* cJSON_Add* return NULL on OOM and leave the tree consistent; one
     * check at the end finds any missing piece. */
    if (!cJSON_GetObjectItemCaseSensitive(r, "serverInfo") || !cJSON_GetObjectItemCaseSensitive(info, "version")) {
        cJSON_Delete(r);
        return lsp_fail(err, LSP_INTERNAL_ERROR, "out of memory");
    }
    s->state = LSP_RUNNING;
    return r;
}

static void initialized(lsp_server *s, const cJSON *params) {
    (void)s;
    (void)params;
}

static cJSON *shutdown_(lsp_server *s, const cJSON *params, lsp_error *err) {
    (void)params;
    (void)err;
    s->state = LSP_SHUTDOWN;
    return cJSON_CreateNull();
}

static void exit_(lsp_server *s, const cJSON *params) {
    (void)params;
    s->exit_code = s->state == LSP_SHUTDOWN ? 0 : 1;
    s->state = LSP_EXITED;
}

/* ---- dispatch ---------------------------------------------------------------- */

void lsp_handle(lsp_server *s, const char *body, size_t len) {
    cJSON *msg = cJSON_ParseWithLength(body, len);
    if (!msg) {
        reply_error(s, NULL, LSP_PARSE_ERROR, "parse error: the message is not JSON");
        return;
    }
    if (!cJSON_IsObject(msg)) {   /* batches are not LSP */
        reply_error(s, NULL, LSP_INVALID_REQUEST, "invalid request: expected an object");
        goto done;
    }
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
    const cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");
    if (id && !cJSON_IsNumber(id) && !cJSON_IsString(id) && !cJSON_IsNull(id)) {
        reply_error(s, NULL, LSP_INVALID_REQUEST, "invalid request: `id` must be a number or a string");
        goto done;
    }
    if (!cJSON_IsString(method)) {
        /* A response to us (we send no requests) is dropped; anything
         * else is no JSON-RPC message. */
        if (!(id && !method &&
              (cJSON_GetObjectItemCaseSensitive(msg, "result") ||
               cJSON_GetObjectItemCaseSensitive(msg, "error"))))
            reply_error(s, id, LSP_INVALID_REQUEST, "invalid request: expected an object with a `method`");
        goto done;
    }
    const char *name = method->valuestring;
    size_t i = 0, n = sizeof methods / sizeof methods[0];
    while (i < n && strcmp(methods[i].method, name) != 0) i++;
    bool is_request = id != NULL;

    if (!is_request) {
        /* Notifications: unknown ones (and `$/...`) are ignored; before
         * initialize only `exit` counts; after shutdown only `exit`. */
        if (i == n || !methods[i].notify) goto done;
        if (s->state != LSP_RUNNING && methods[i].notify != exit_) goto done;
        methods[i].notify(s, params);
        goto done;
    }
    if (s->state == LSP_UNINITIALIZED && strcmp(name, "initialize") != 0) {
        reply_error(s, id, LSP_SERVER_NOT_INITIALIZED, "the server is not initialized yet");
        goto done;
    }
    if (s->state == LSP_SHUTDOWN) {
        reply_error(s, id, LSP_INVALID_REQUEST, "the server is shut down: only `exit` is accepted");
        goto done;
    }
    if (i == n || !methods[i].request) {
        char text[200];
        snprintf(text, sizeof text, "method not found: `%.120s`", name);
        reply_error(s, id, LSP_METHOD_NOT_FOUND, text);
        goto done;
    }
    lsp_error err = {0};
    cJSON *result = methods[i].request(s, params, &err);
    if (result) reply(s, id, result);
    else reply_error(s, id, err.code ? err.code : LSP_INTERNAL_ERROR,
                     err.text[0] ? err.text : "internal error");
done:
    cJSON_Delete(msg);
}

int lsp_serve(lsp_server *s, FILE *in) {
    while (s->state != LSP_EXITED) {
        char *body;
        size_t len;
        lsp_read_status st = lsp_read_message(in, LSP_MAX_MESSAGE, &body, &len);
        if (st == LSP_READ_EOF) {
            /* The client went away: without a shutdown that is an error. */
            s->exit_code = s->state == LSP_SHUTDOWN ? 0 : 1;
            break;
        }
        if (st == LSP_READ_BAD_HEADER) {
            logf_(s, "dropped a header block without a Content-Length");
            continue;
        }
        if (st == LSP_READ_TOO_BIG || st == LSP_READ_OOM) {
            logf_(s, "dropped a message of more than %zu bytes", LSP_MAX_MESSAGE);
            continue;
        }
        lsp_handle(s, body, len);
        free(body);
    }
    return s->exit_code;
}
