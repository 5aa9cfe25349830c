/* lsp.h — bext-lsp's internal interface: the language server, stdio
 * JSON-RPC (LSP 3.17) over the long-lived front end (compiler/workspace.h).
 *
 * The server answers from what the checker recorded (bxc_expr.ty / .res,
 * the diagnostics list); it never resolves a name itself.  Every handler
 * returns an error object rather than failing the process: a malformed
 * request, an unknown method, a position out of range or an allocation
 * failure costs that one request, never the server.
 *
 * Files: rpc.c (framing), server.c (dispatch and lifecycle), sync.c
 * (documents and diagnostics), hover.c (hover_meta.c), navigate.c (definition, symbols),
 * complete.c, complete_attr.c, tokens.c (semantic tokens), main.c (the program). */
#ifndef LSP_H
#define LSP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "workspace.h"

/* ---- framing (rpc.c) ------------------------------------------------------ */

typedef enum lsp_read_status {
    LSP_READ_OK,          /* *body holds len bytes (malloc'd, NUL-terminated) */
    LSP_READ_EOF,         /* the stream ended (also inside a message) */
    LSP_READ_BAD_HEADER,  /* a header block without a valid Content-Length */
    LSP_READ_TOO_BIG,     /* Content-Length over the limit: body skipped */
    LSP_READ_OOM,         /* no memory for the body: body skipped */
} lsp_read_status;

/* Largest message body read (a document of BXC_SOURCE_MAX_BYTES, JSON-
 * escaped, would not fit: such documents are refused with the message). */
#define LSP_MAX_MESSAGE ((size_t)64 << 20)
/* Longest header line kept (longer ones are a bad header). */
#define LSP_MAX_HEADER_LINE 1024

/* Reads one `Content-Length: N\r\n...\r\n\r\n<N bytes>` message.  Header
 * names are case-insensitive, other headers are ignored, a header line
 * with junk before `Content-Length:` still counts (resynchronizes after a
 * message whose length was understated). */
lsp_read_status lsp_read_message(FILE *in, size_t max, char **body, size_t *len);
/* Writes one message; false if the stream failed. */
bool lsp_write_message(FILE *out, const char *body, size_t len);

/* ---- the server (server.c) -------------------------------------------------- */

typedef enum lsp_state {
    LSP_UNINITIALIZED,    /* only `initialize` (and `exit`) are served */
    LSP_RUNNING,
    LSP_SHUTDOWN,         /* after `shutdown`: only `exit` */
    LSP_EXITED,
} lsp_state;

/* JSON-RPC and LSP error codes. */
enum {
    LSP_PARSE_ERROR = -32700,
    LSP_INVALID_REQUEST = -32600,
    LSP_METHOD_NOT_FOUND = -32601,
    LSP_INVALID_PARAMS = -32602,
    LSP_INTERNAL_ERROR = -32603,
    LSP_SERVER_NOT_INITIALIZED = -32002,
    LSP_REQUEST_FAILED = -32803,
};

/* An open document: the client's URI and version, and the front end's. */
typedef struct lsp_doc {
    char *uri;
    int64_t version;
    bxc_doc *doc;
    struct lsp_doc *next;
} lsp_doc;

typedef struct lsp_server {
    FILE *out;
    FILE *log;              /* stderr; NULL: silent (fuzzing) */
    lsp_state state;
    int exit_code;          /* set by `exit` or the end of input */
    bxc_pos_enc enc;        /* negotiated positionEncoding */
    bxc_ws ws;
    lsp_doc *docs;
} lsp_server;

/* A failed request: its JSON-RPC code and message. */
typedef struct lsp_error {
    int code;
    char text[256];
} lsp_error;

void lsp_server_init(lsp_server *s, FILE *out, FILE *log);
void lsp_server_free(lsp_server *s);
/* Handles one message body (any bytes). */
void lsp_handle(lsp_server *s, const char *body, size_t len);
/* Reads and handles messages until `exit` or the end of input; returns
 * the process exit status (0 after shutdown + exit, else 1). */
int lsp_serve(lsp_server *s, FILE *in);

/* Sends a notification (takes params). */
void lsp_notify(lsp_server *s, const char *method, cJSON *params);
/* Fails a request: returns NULL so handlers can `return lsp_fail(...)`. */
cJSON *lsp_fail(lsp_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- documents (sync.c) ------------------------------------------------------ */

void lsp_did_open(lsp_server *s, const cJSON *params);
void lsp_did_change(lsp_server *s, const cJSON *params);
void lsp_did_save(lsp_server *s, const cJSON *params);
void lsp_did_close(lsp_server *s, const cJSON *params);
void lsp_docs_free(lsp_server *s);

/* The open document `params.textDocument.uri` names, or NULL (err set). */
lsp_doc *lsp_doc_of(lsp_server *s, const cJSON *params, lsp_error *err);
/* The byte offset `params.position` names in the document's last checked
 * text, or false (err set) when the position is missing or malformed.
 * Out-of-range positions clamp (LSP). */
bool lsp_offset_of(lsp_server *s, const lsp_doc *d, const cJSON *params,
                   uint32_t *offset, lsp_error *err);
/* A Position / Range / Location of unit `u` (NULL on OOM). */
cJSON *lsp_position(const lsp_server *s, const bxc_source *src, uint32_t offset);
cJSON *lsp_range(const lsp_server *s, const bxc_unit *u, bxc_span span);
cJSON *lsp_location(const lsp_server *s, const bxc_unit *u, bxc_span span);
/* The URI of a file the unit read: the client's own for open documents. */
char *lsp_uri_of_path(const lsp_server *s, const char *path);
/* "file:///a%20b" -> "/a b"; NULL for other schemes or bad escapes. */
char *lsp_path_of_uri(const char *uri);

/* ---- requests (hover.c, navigate.c, complete.c, tokens.c) ----------------- */

cJSON *lsp_hover(lsp_server *s, const cJSON *params, lsp_error *err);
cJSON *lsp_definition(lsp_server *s, const cJSON *params, lsp_error *err);
cJSON *lsp_document_symbol(lsp_server *s, const cJSON *params, lsp_error *err);
cJSON *lsp_completion(lsp_server *s, const cJSON *params, lsp_error *err);
/* Completion inside `#[...]` (complete_attr.c) for the word starting at
 * byte `word`: adds to list and returns true when the cursor is at an
 * attribute's name or key, false elsewhere (a value expression inside an
 * attribute included). */
bool lsp_complete_attr(const bxc_doc *d, uint32_t word, cJSON *list);
cJSON *lsp_semantic_tokens(lsp_server *s, const cJSON *params, lsp_error *err);
/* The hover line of what trait method `r` computes for example inputs
 * (hover_meta.c, through the interpreter's `:meta` entry), malloc'd; NULL
 * when the method has no fusion form or memory ran out. */
char *lsp_meta_example(const bxc_unit *u, const bxc_method_rec *r);
/* The semanticTokensProvider legend (tokens.c owns the token types). */
cJSON *lsp_token_legend(void);

#endif
