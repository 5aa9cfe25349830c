/* source.h — source files and locations.
 *
 * A location is {file id, byte offset, byte length} (style.md item 8); line
 * and column are computed on demand from a per-file line table.  Columns are
 * 1-based byte columns (what the text and JSON diagnostics show); the UTF-16
 * helper serves the language server. */
#ifndef BXC_SOURCE_H
#define BXC_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BXC_NO_FILE UINT32_MAX   /* span not tied to any file */

typedef struct bxc_span {
    uint32_t file;    /* index into bxc_sources, or BXC_NO_FILE */
    uint32_t offset;  /* byte offset from the start of the file */
    uint32_t length;  /* bytes */
} bxc_span;

typedef struct bxc_source {
    uint32_t id;
    char *path;        /* as given (malloc) */
    char *text;        /* bytes + a terminating NUL sentinel (malloc) */
    uint32_t length;   /* bytes, without the sentinel */
    uint32_t *lines;   /* offset of the first byte of each line */
    uint32_t nlines;
} bxc_source;

/* Every file a compilation has read, in reading order (also the depfile). */
typedef struct bxc_sources {
    bxc_source **files;
    uint32_t count, cap;
} bxc_sources;

/* Largest file accepted (offsets are 32-bit). */
#define BXC_SOURCE_MAX_BYTES (256u * 1024u * 1024u)

void bxc_sources_init(bxc_sources *s);
void bxc_sources_free(bxc_sources *s);
/* Copies `len` bytes; returns the new file (never NULL). */
bxc_source *bxc_sources_add_memory(bxc_sources *s, const char *path,
                                   const char *bytes, size_t len);
/* Reads a file.  On failure returns NULL and writes a message naming the
 * path ("cannot read `x`: No such file or directory", "`x` is a
 * directory") into err (size errlen). */
bxc_source *bxc_sources_load(bxc_sources *s, const char *path,
                             char *err, size_t errlen);
const bxc_source *bxc_sources_get(const bxc_sources *s, uint32_t id);

/* 1-based line and byte column of `offset` (clamped to the file). */
void bxc_source_position(const bxc_source *src, uint32_t offset,
                         uint32_t *line, uint32_t *column);
/* 1-based column counted in UTF-16 code units (LSP positions). */
uint32_t bxc_source_utf16_column(const bxc_source *src, uint32_t offset);
/* How a language-server client counts columns (LSP `positionEncoding`):
 * UTF-16 code units by default, or bytes, or code points. */
typedef enum bxc_pos_enc { BXC_POS_UTF16, BXC_POS_UTF8, BXC_POS_UTF32 } bxc_pos_enc;
/* Byte offset of the 0-based (line, col) of `text`, col counted in `enc`
 * units.  Never out of range: a line past the end gives the end of the
 * text, a column past its line's end (or in its "\r\n") the line's end, a
 * column inside a character (half a surrogate pair) that character's
 * start.  Bytes that are not UTF-8 count as one unit each (U+FFFD). */
uint32_t bxc_text_offset(const char *text, uint32_t len, uint32_t line,
                         uint32_t col, bxc_pos_enc enc);
/* The 0-based line and `enc` column of byte `offset` of a source (clamped
 * to the file; an offset inside a character counts from its start). */
void bxc_source_lsp_position(const bxc_source *src, uint32_t offset,
                             bxc_pos_enc enc, uint32_t *line, uint32_t *col);
/* Start and length (without the newline) of 1-based line `line`. */
const char *bxc_source_line(const bxc_source *src, uint32_t line,
                            uint32_t *length);
/* The bytes a span covers (not NUL-terminated). */
const char *bxc_source_text(const bxc_source *src, bxc_span span);

static inline bxc_span bxc_span_make(uint32_t file, uint32_t offset,
                                     uint32_t length) {
    bxc_span s = {file, offset, length};
    return s;
}
/* The smallest span covering both (same file assumed). */
static inline bxc_span bxc_span_join(bxc_span a, bxc_span b) {
    if (a.file == BXC_NO_FILE) return b;
    if (b.file == BXC_NO_FILE) return a;
    uint32_t lo = a.offset < b.offset ? a.offset : b.offset;
    uint32_t ea = a.offset + a.length, eb = b.offset + b.length;
    uint32_t hi = ea > eb ? ea : eb;
    return bxc_span_make(a.file, lo, hi - lo);
}
static inline bxc_span bxc_span_none(void) {
    return bxc_span_make(BXC_NO_FILE, 0, 0);
}

#endif
