/* rpc.c — LSP base protocol framing: `Content-Length` headers, then the
 * body.  Reads never trust the peer: header lines are bounded, the length
 * is parsed without overflow and capped, and an over-long body is read
 * and dropped rather than allocated. */
#include "lsp.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Reads one line (without its "\r\n" / "\n") into buf, truncated to cap-1
 * bytes; *too_long says it was.  False at end of input before any byte. */
static bool read_line(FILE *in, char *buf, size_t cap, bool *too_long) {
    size_t n = 0;
    int c;
    bool any = false;
    *too_long = false;
    while ((c = getc(in)) != EOF) {
        any = true;
        if (c == '\n') break;
        if (c == '\0') c = ' ';   /* keeps the line one C string */
        if (n + 1 < cap) buf[n++] = (char)c;
        else *too_long = true;
    }
    if (n && buf[n - 1] == '\r') n--;
    buf[n] = '\0';
    return any;
}

/* The value of a `Content-Length:` header anywhere in the line (digits,
 * optional spaces), or -1. */
static long long content_length(const char *line) {
    static const char key[] = "content-length:";
    for (const char *p = line; *p; p++) {
        if (strncasecmp(p, key, sizeof key - 1) != 0) continue;
        p += sizeof key - 1;
        while (*p == ' ' || *p == '\t') p++;
        if (!isdigit((unsigned char)*p)) return -1;
        long long v = 0;
        for (; isdigit((unsigned char)*p); p++) {
            if (v > (1LL << 40)) return -1;   /* absurd: refuse before overflow */
            v = v * 10 + (*p - '0');
        }
        while (*p == ' ' || *p == '\t') p++;
        return *p ? -1 : v;
    }
    return -1;
}

static bool skip_bytes(FILE *in, size_t n) {
    char buf[4096];
    while (n) {
        size_t k = n < sizeof buf ? n : sizeof buf;
        size_t got = fread(buf, 1, k, in);
        if (got == 0) return false;
        n -= got;
    }
    return true;
}

lsp_read_status lsp_read_message(FILE *in, size_t max, char **body, size_t *len) {
    *body = NULL;
    *len = 0;
    char line[LSP_MAX_HEADER_LINE];
    long long length = -1;
    bool any = false, too_long;
    for (;;) {
        if (!read_line(in, line, sizeof line, &too_long)) return LSP_READ_EOF;
        if (!line[0] && !too_long) {
            if (any) break;
            continue;   /* blank lines between messages */
        }
        any = true;
        /* Other headers (Content-Type) and junk lines are ignored: only
         * a missing length makes the block unusable. */
        long long v = too_long ? -1 : content_length(line);
        if (v >= 0) length = v;
    }
    if (length < 0) return LSP_READ_BAD_HEADER;
    if ((unsigned long long)length > max) {
        return skip_bytes(in, (size_t)length) ? LSP_READ_TOO_BIG : LSP_READ_EOF;
    }
    char *b = malloc((size_t)length + 1);
    if (!b) return skip_bytes(in, (size_t)length) ? LSP_READ_OOM : LSP_READ_EOF;
    if (fread(b, 1, (size_t)length, in) != (size_t)length) {
        free(b);
        return LSP_READ_EOF;
    }
    b[length] = '\0';
    *body = b;
    *len = (size_t)length;
    return LSP_READ_OK;
}

bool lsp_write_message(FILE *out, const char *body, size_t len) {
    if (fprintf(out, "Content-Length: %zu\r\n\r\n", len) < 0) return false;
    if (fwrite(body, 1, len, out) != len) return false;
    return fflush(out) == 0;
}
