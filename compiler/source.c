/* source.c — source files, line tables, offset -> line/column. */
#include "source.h"

#include "arena.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void bxc_sources_init(bxc_sources *s) {
    s->files = NULL;
    s->count = s->cap = 0;
}

void bxc_sources_free(bxc_sources *s) {
    for (uint32_t i = 0; i < s->count; i++) {
        bxc_source *f = s->files[i];
        free(f->path);
        free(f->text);
        free(f->lines);
        free(f);
    }
    free(s->files);
    bxc_sources_init(s);
}

/* Takes ownership of text (length bytes + NUL).  Every piece is allocated
 * before anything is linked in, and on failure all of it (text included) is
 * freed before bxc_oom, so a recovery point (arena.h) loses nothing. */
static bxc_source *add_owned(bxc_sources *s, const char *path, char *text,
                             uint32_t length) {
    uint32_t n = 1;
    for (uint32_t i = 0; i < length; i++)
        if (text[i] == '\n') n++;
    size_t plen = strlen(path);
    bxc_source *f = malloc(sizeof *f);
    char *p = f ? malloc(plen + 1) : NULL;
    uint32_t *lines = p ? malloc((size_t)n * sizeof *lines) : NULL;
    if (lines && s->count == s->cap) {
        uint32_t nc = s->cap ? s->cap * 2 : 8;
        bxc_source **nf = realloc(s->files, nc * sizeof *nf);
        if (nf) {
            s->files = nf;
            s->cap = nc;
        } else {
            free(lines);
            lines = NULL;
        }
    }
    if (!lines) {
        free(p);
        free(f);
        free(text);
        bxc_oom(sizeof *f + plen + (size_t)n * sizeof *lines);
    }
    memcpy(p, path, plen + 1);
    uint32_t k = 0;
    lines[k++] = 0;
    for (uint32_t i = 0; i < length; i++)
        if (text[i] == '\n') lines[k++] = i + 1;
    f->id = s->count;
    f->path = p;
    f->text = text;
    f->length = length;
    f->lines = lines;
    f->nlines = n;
    s->files[s->count++] = f;
    return f;
}

bxc_source *bxc_sources_add_memory(bxc_sources *s, const char *path,
                                   const char *bytes, size_t len) {
    if (len > BXC_SOURCE_MAX_BYTES) len = BXC_SOURCE_MAX_BYTES;
    char *text = malloc(len + 1);
    if (!text) bxc_oom(len + 1);
    if (len) memcpy(text, bytes, len);
    text[len] = '\0';
    return add_owned(s, path, text, (uint32_t)len);
}

bxc_source *bxc_sources_load(bxc_sources *s, const char *path, char *err,
                             size_t errlen) {
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "cannot read `%s`: %s", path, strerror(errno));
        return NULL;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "cannot read `%s`: it is a directory", path);
        return NULL;
    }
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        snprintf(err, errlen, "cannot read `%s`: %s", path, strerror(errno));
        return NULL;
    }
    /* Read in chunks: works for pipes and files whose size changes. */
    size_t cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1 : 4096;
    if (cap > BXC_SOURCE_MAX_BYTES + 1) cap = BXC_SOURCE_MAX_BYTES + 1;
    char *buf = malloc(cap);
    if (!buf) {
        fclose(fp);
        snprintf(err, errlen, "cannot read `%s`: out of memory", path);
        return NULL;
    }
    size_t len = 0;
    for (;;) {
        if (len + 1 >= cap) {
            if (cap > BXC_SOURCE_MAX_BYTES) {
                free(buf);
                fclose(fp);
                snprintf(err, errlen, "cannot read `%s`: file larger than %u bytes",
                         path, BXC_SOURCE_MAX_BYTES);
                return NULL;
            }
            cap *= 2;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(fp);
                snprintf(err, errlen, "cannot read `%s`: out of memory", path);
                return NULL;
            }
            buf = nb;
        }
        size_t got = fread(buf + len, 1, cap - 1 - len, fp);
        len += got;
        if (got == 0) break;
    }
    int failed = ferror(fp);
    int saved = errno;
    fclose(fp);
    if (failed) {
        free(buf);
        snprintf(err, errlen, "cannot read `%s`: %s", path, strerror(saved));
        return NULL;
    }
    buf[len] = '\0';
    return add_owned(s, path, buf, (uint32_t)len);
}

const bxc_source *bxc_sources_get(const bxc_sources *s, uint32_t id) {
    if (!s || id >= s->count) return NULL;
    return s->files[id];
}

static uint32_t line_index(const bxc_source *src, uint32_t offset) {
    /* Last line start <= offset (binary search). */
    uint32_t lo = 0, hi = src->nlines;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (src->lines[mid] <= offset) lo = mid;
        else hi = mid;
    }
    return lo;
}

void bxc_source_position(const bxc_source *src, uint32_t offset,
                         uint32_t *line, uint32_t *column) {
    if (offset > src->length) offset = src->length;
    uint32_t li = line_index(src, offset);
    if (line) *line = li + 1;
    if (column) *column = offset - src->lines[li] + 1;
}

uint32_t bxc_source_utf16_column(const bxc_source *src, uint32_t offset) {
    if (offset > src->length) offset = src->length;
    uint32_t li = line_index(src, offset);
    uint32_t col = 1;
    const unsigned char *p = (const unsigned char *)src->text + src->lines[li];
    const unsigned char *end = (const unsigned char *)src->text + offset;
    while (p < end) {
        unsigned c = *p;
        int n = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        col += n == 4 ? 2 : 1;   /* astral code points are surrogate pairs */
        p += n;
    }
    return col;
}

const char *bxc_source_line(const bxc_source *src, uint32_t line,
                            uint32_t *length) {
    if (line == 0 || line > src->nlines) {
        if (length) *length = 0;
        return src->text + src->length;
    }
    uint32_t start = src->lines[line - 1];
    uint32_t end = line < src->nlines ? src->lines[line] - 1 : src->length;
    if (end > start && src->text[end - 1] == '\r') end--;
    if (length) *length = end - start;
    return src->text + start;
}

const char *bxc_source_text(const bxc_source *src, bxc_span span) {
    if (span.offset > src->length) return src->text + src->length;
    return src->text + span.offset;
}

/* ---- LSP positions ---------------------------------------------------------- */

/* Length of the UTF-8 sequence at p (before end), and how many `enc` units
 * it counts for.  A byte that starts no valid sequence is one unit. */
static uint32_t char_at(const unsigned char *p, const unsigned char *end,
                        bxc_pos_enc enc, uint32_t *units) {
    unsigned c = p[0];
    uint32_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3
               : (c & 0xF8) == 0xF0 ? 4 : 1;
    if (n > (uint32_t)(end - p)) n = 1;
    for (uint32_t i = 1; i < n; i++)
        if ((p[i] & 0xC0) != 0x80) {
            n = 1;
            break;
        }
    *units = enc == BXC_POS_UTF8 ? n : enc == BXC_POS_UTF16 && n == 4 ? 2 : 1;
    return n;
}

/* The line's end: its '\n', or a "\r" just before it, or the text's end. */
static const unsigned char *line_end(const unsigned char *p, const unsigned char *end) {
    const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) return end;
    return nl > p && nl[-1] == '\r' ? nl - 1 : nl;
}

uint32_t bxc_text_offset(const char *text, uint32_t len, uint32_t line,
                         uint32_t col, bxc_pos_enc enc) {
    const unsigned char *p = (const unsigned char *)text, *end = p + len;
    for (uint32_t l = 0; l < line; l++) {
        const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) return len;
        p = nl + 1;
    }
    const unsigned char *le = line_end(p, end);
    uint32_t at = 0;
    while (p < le) {
        uint32_t u, n = char_at(p, le, enc, &u);
        if (at + u > col) break;   /* col is inside this character, or before it */
        at += u;
        p += n;
    }
    return (uint32_t)(p - (const unsigned char *)text);
}

void bxc_source_lsp_position(const bxc_source *src, uint32_t offset,
                             bxc_pos_enc enc, uint32_t *line, uint32_t *col) {
    if (offset > src->length) offset = src->length;
    uint32_t li = line_index(src, offset);
    const unsigned char *p = (const unsigned char *)src->text + src->lines[li];
    const unsigned char *stop = (const unsigned char *)src->text + offset;
    const unsigned char *end = (const unsigned char *)src->text + src->length;
    uint32_t c = 0;
    while (p < stop) {
        uint32_t u, n = char_at(p, end, enc, &u);
        if (p + n > stop) break;
        c += u;
        p += n;
    }
    *line = li;
    *col = c;
}
