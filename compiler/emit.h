/* emit.h — the C code generator's entry point (docs/codegen.md).
 *
 * `bextc FILE.bext -o DIR [-MD]` runs it after the checker passed: it
 * writes DIR/<stem>.h and DIR/<stem>.c (and DIR/<stem>.d with a depfile).
 * Output is built in memory and written only when generation succeeded,
 * so a failure never leaves half-written files; the same unit always gives
 * the same bytes.  Implemented in emit*.c (prefix bxc_emit_). */
#ifndef BXC_EMIT_H
#define BXC_EMIT_H

#include <stdbool.h>
#include <stdio.h>

#include "arena.h"

struct bxc_unit;

/* An output file that cannot be written is reported with BXC_EMIT_E_IO
 * (diag_codes.h; bextc exits 2 for it, as for an unreadable input). */

typedef struct bxc_emit_options {
    bool depfile;          /* -MD: also write DIR/<stem>.d */
} bxc_emit_options;

/* Generates C for a loaded and checked unit (bxc_check_unit returned true).
 * Problems are appended to unit->diags (I/O errors included); returns false
 * if any was an error, in which case no output file was (re)written. */
bool bxc_emit_c(struct bxc_unit *unit, const char *outdir, const bxc_emit_options *opts);
/* The stem every output file of the unit is named by: the root file's
 * name without `.bext` (`my_ext` for DIR/my_ext.h, my_ext.kernels.o). */
const char *bxc_emit_stem(struct bxc_unit *unit);

/* s as a C identifier (other characters become `_`; a leading digit
 * gets an `x`), an arena string. */
const char *bxc_emit_c_identifier(bxc_arena *a, const char *s);

/* --emit=kir-c (emit_kir_c.c): the serialized IR of every kernel
 * instantiation of the root module as a C file on out, with the table
 * `const struct bxk_embed bxk_embed_<stem>[]` (bxk.h).  False after
 * reporting errors on unit->diags. */
bool bxc_emit_kir_c(struct bxc_unit *unit, FILE *out);

/* The same into memory (tests): *header / *source are arena strings of the
 * unit; `stem` names the output (NULL: the root file's stem). */
bool bxc_emit_c_memory(struct bxc_unit *unit, const char *stem, const char **header,
                       const char **source);

#endif
