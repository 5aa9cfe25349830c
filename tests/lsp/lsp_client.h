/* lsp_client.h — a minimal LSP client for the tests: runs the built
 * bext-lsp ($BEXT_BIN_DIR/bext-lsp) as a child over pipes, writes framed
 * JSON-RPC messages and reads the server's, parsed with cJSON.  Every read
 * has a deadline, so a server that hangs fails the test instead of
 * stalling the suite. */
#ifndef LSP_CLIENT_H
#define LSP_CLIENT_H

#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LC_TIMEOUT_MS 20000

typedef struct lsp_client {
    pid_t pid;
    int to, from;          /* the server's stdin / stdout */
    char *buf;             /* bytes read, not yet consumed */
    size_t len, cap;
    int next_id;
} lsp_client;

static inline const char *lc_bin(void) {
    static char path[4096];
    const char *dir = getenv("BEXT_BIN_DIR");
    snprintf(path, sizeof path, "%s/bext-lsp", dir ? dir : "build/bin");
    return path;
}

/* Starts bext-lsp with the given extra arguments (NULL-terminated). */
static inline lsp_client *lc_start_args(const char *const *args) {
    int in[2], out[2];
    cr_assert(pipe(in) == 0 && pipe(out) == 0);
    signal(SIGPIPE, SIG_IGN);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[0]), close(in[1]), close(out[0]), close(out[1]);
        const char *argv[16] = {lc_bin()};
        int n = 1;
        while (args && args[n - 1] && n < 15) argv[n] = args[n - 1], n++;
        argv[n] = NULL;
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    lsp_client *c = calloc(1, sizeof *c);
    c->pid = pid;
    c->to = in[1];
    c->from = out[0];
    c->next_id = 1;
    return c;
}

static inline lsp_client *lc_start(void) { return lc_start_args(NULL); }

static inline void lc_write(lsp_client *c, const void *bytes, size_t n) {
    const char *p = bytes;
    while (n) {
        ssize_t w = write(c->to, p, n);
        if (w < 0 && errno == EINTR) continue;
        cr_assert(w > 0, "the server stopped reading");
        p += w;
        n -= (size_t)w;
    }
}

/* One framed message with `body` as is. */
static inline void lc_send(lsp_client *c, const char *body) {
    char head[64];
    int n = snprintf(head, sizeof head, "Content-Length: %zu\r\n\r\n", strlen(body));
    lc_write(c, head, (size_t)n);
    lc_write(c, body, strlen(body));
}

static inline void lc_sendf(lsp_client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void lc_sendf(lsp_client *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *body = NULL;
    cr_assert(vasprintf(&body, fmt, ap) >= 0);
    va_end(ap);
    lc_send(c, body);
    free(body);
}

/* Reads more bytes; false at EOF.  Fails the test after the deadline. */
static inline bool lc_fill(lsp_client *c) {
    struct pollfd pf = {.fd = c->from, .events = POLLIN};
    int r;
    do r = poll(&pf, 1, LC_TIMEOUT_MS);
    while (r < 0 && errno == EINTR);
    cr_assert(r > 0, "no answer from bext-lsp within %d ms", LC_TIMEOUT_MS);
    if (c->len + 65536 > c->cap) {
        c->cap = c->cap ? c->cap * 2 : 131072;
        c->buf = realloc(c->buf, c->cap);
    }
    ssize_t n = read(c->from, c->buf + c->len, 65536);
    if (n <= 0) return false;
    c->len += (size_t)n;
    return true;
}

/* The next message from the server (owned by the caller), or NULL at EOF. */
static inline cJSON *lc_read(lsp_client *c) {
    for (;;) {
        char *end = c->len ? memmem(c->buf, c->len, "\r\n\r\n", 4) : NULL;
        if (end) {
            size_t hlen = (size_t)(end - c->buf) + 4;
            char *cl = memmem(c->buf, hlen, "Content-Length: ", 16);
            cr_assert(cl, "a header without Content-Length");
            size_t blen = strtoul(cl + 16, NULL, 10);
            while (c->len < hlen + blen)
                if (!lc_fill(c)) return NULL;
            cJSON *m = cJSON_ParseWithLength(c->buf + hlen, blen);
            cr_assert(m, "the server sent a body that is not JSON: %.*s", (int)blen, c->buf + hlen);
            memmove(c->buf, c->buf + hlen + blen, c->len - hlen - blen);
            c->len -= hlen + blen;
            return m;
        }
        if (!lc_fill(c)) return NULL;
    }
}

static inline const char *lc_method(const cJSON *m) {
    const cJSON *v = cJSON_GetObjectItem(m, "method");
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* The response to request `id`, skipping notifications. */
static inline cJSON *lc_response(lsp_client *c, int id) {
    for (;;) {
        cJSON *m = lc_read(c);
        cr_assert(m, "the server closed its output before answering request %d", id);
        const cJSON *i = cJSON_GetObjectItem(m, "id");
        if (cJSON_IsNumber(i) && i->valueint == id && !cJSON_GetObjectItem(m, "method")) return m;
        cJSON_Delete(m);
    }
}

/* Sends a request (params as JSON text) and returns its response. */
static inline cJSON *lc_request(lsp_client *c, const char *method, const char *params) {
    int id = c->next_id++;
    lc_sendf(c, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":%s}", id, method, params);
    return lc_response(c, id);
}

static inline void lc_notify(lsp_client *c, const char *method, const char *params) {
    lc_sendf(c, "{\"jsonrpc\":\"2.0\",\"method\":\"%s\",\"params\":%s}", method, params);
}

/* The next publishDiagnostics params for `uri` (the whole message). */
static inline cJSON *lc_diagnostics(lsp_client *c, const char *uri) {
    for (;;) {
        cJSON *m = lc_read(c);
        cr_assert(m, "the server closed its output before publishing diagnostics for %s", uri);
        const cJSON *p = cJSON_GetObjectItem(m, "params");
        const cJSON *u = cJSON_GetObjectItem(p, "uri");
        if (strcmp(lc_method(m), "textDocument/publishDiagnostics") == 0 && cJSON_IsString(u) &&
            strcmp(u->valuestring, uri) == 0)
            return m;
        cJSON_Delete(m);
    }
}

static inline cJSON *lc_diag_list(cJSON *msg) {
    return cJSON_GetObjectItem(cJSON_GetObjectItem(msg, "params"), "diagnostics");
}

/* Walks a dotted path of object keys and array indexes ("result.range.start.line"). */
static inline const cJSON *lc_at(const cJSON *j, const char *path) {
    char key[64];
    while (j && *path) {
        size_t n = strcspn(path, ".");
        snprintf(key, sizeof key, "%.*s", (int)n, path);
        if (cJSON_IsArray(j)) j = cJSON_GetArrayItem(j, atoi(key));
        else j = cJSON_GetObjectItem(j, key);
        path += n + (path[n] == '.');
    }
    return j;
}

static inline int lc_int(const cJSON *j, const char *path) {
    const cJSON *v = lc_at(j, path);
    cr_assert(cJSON_IsNumber(v), "`%s` is not a number", path);
    return v->valueint;
}

static inline const char *lc_str(const cJSON *j, const char *path) {
    const cJSON *v = lc_at(j, path);
    cr_assert(cJSON_IsString(v), "`%s` is not a string", path);
    return v->valuestring;
}

static inline void lc_initialize(lsp_client *c, const char *capabilities) {
    cJSON *r = lc_request(c, "initialize", capabilities ? capabilities : "{\"capabilities\":{}}");
    cr_assert(cJSON_IsObject(lc_at(r, "result.capabilities")), "initialize: no capabilities");
    cJSON_Delete(r);
    lc_notify(c, "initialized", "{}");
}

/* Closes the server's input and waits for it; its exit status, or -1
 * (killed after the deadline, or by a signal). */
static inline int lc_finish(lsp_client *c) {
    close(c->to);
    int st = 0;
    pid_t r = 0;
    for (int waited = 0; waited < LC_TIMEOUT_MS && (r = waitpid(c->pid, &st, WNOHANG)) == 0; waited += 10) {
        /* keep draining its output so it never blocks writing */
        struct pollfd pf = {.fd = c->from, .events = POLLIN};
        if (poll(&pf, 1, 10) > 0) {
            char sink[4096];
            if (read(c->from, sink, sizeof sink) <= 0) usleep(1000);
        }
    }
    if (r == 0) {
        kill(c->pid, SIGKILL);
        waitpid(c->pid, &st, 0);
        close(c->from);
        free(c->buf);
        free(c);
        return -1;
    }
    close(c->from);
    free(c->buf);
    free(c);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* shutdown, exit, and the exit status. */
static inline int lc_shutdown(lsp_client *c) {
    cJSON *r = lc_request(c, "shutdown", "null");
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(r, "result")), "shutdown: result is not null");
    cJSON_Delete(r);
    lc_notify(c, "exit", "null");
    return lc_finish(c);
}

/* A fresh directory for a test's files. */
static inline char *lc_tmpdir(void) {
    char *d = strdup("/tmp/bext-lsp-test-XXXXXX");
    cr_assert(mkdtemp(d));
    return d;
}

static inline void lc_write_file(const char *dir, const char *name, const char *text) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
}

static inline int lc_rm_one(const char *p, const struct stat *st, int flag, struct FTW *f) {
    (void)st, (void)flag, (void)f;
    return remove(p);
}

/* Removes a directory lc_tmpdir made, and frees its name. */
static inline void lc_rmdir(char *dir) {
    nftw(dir, lc_rm_one, 8, FTW_DEPTH | FTW_PHYS);
    free(dir);
}

/* A JSON string literal of `text` (quotes included), malloc'd. */
static inline char *lc_json_str(const char *text) {
    cJSON *s = cJSON_CreateString(text);
    char *out = cJSON_PrintUnformatted(s);
    cJSON_Delete(s);
    return out;
}

#endif
