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
#include "ast.h"
#include "types.h"

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

struct bxc_module;
/* The C name of item `name` of imported module mod: `<stem>_<module>_name`
 * (`my_ext_std_shape_broadcast`), so that two extensions importing one
 * module link together.  Helper fns and kernels of imported modules. */
const char *bxc_emit_module_name(bxc_arena *a, struct bxc_unit *u, const struct bxc_module *mod, const char *name);

/* --emit=kir-c (emit_kir_c.c): the serialized IR of every kernel
 * instantiation of the root module as a C file on out, with the table
 * `const bext_kernel_src bxk_embed_<stem>[]` (bext.h).  False after
 * reporting errors on unit->diags. */
bool bxc_emit_kir_c(struct bxc_unit *unit, FILE *out);

/* The same into memory (tests): *header / *source are arena strings of the
 * unit; `stem` names the output (NULL: the root file's stem). */
bool bxc_emit_c_memory(struct bxc_unit *unit, const char *stem, const char **header,
                       const char **source);

/* What the generator can lower of a default body or a `#[backward]`
 * formula, asked by the checker (check_default.c) so that the limits have
 * one home, emit_body.c.  fn's parameters carry the checker's types; with
 * a formula, fn is the method and `grad` and `output` are in scope too.
 * The first construct with no lowering is reported once through err (its
 * span and what it is, e.g. "`match`", "the call of `foo`"). */
typedef enum bxc_body_verdict {
    BXC_BODY_TENSOR,    /* lowerable, and its value is a tensor */
    BXC_BODY_NUMBER,    /* lowerable, but its value is a number */
    BXC_BODY_REFUSED,   /* err was called */
    BXC_BODY_STOPPED,   /* a parse-error placeholder: already reported, err not called */
} bxc_body_verdict;
typedef void (*bxc_body_err_fn)(void *ud, bxc_span span, const char *what);
bxc_body_verdict bxc_body_lowerable(bxc_arena *a, const bxc_fn *fn, const bxc_expr *formula,
                                    bxc_body_err_fn err, void *ud);

/* ---- the generator's limits, asked by the checker (check_limits.c) ----
 * Each is the one statement of a limit: the generator relies on it, and
 * the checker turns a refusal into a located error, so that a unit the
 * checker accepts always generates (`bextc --check` runs no generator). */

/* How deep structs, enums and tuples may nest (each counts one level):
 * the generated header declares them inline, dependencies first. */
#define BXC_EMIT_MAX_TYPE_NESTING 64

/* The part of t that has no C form (the first met: `()` inside a value, a
 * function type, a type parameter), or NULL when every part has one. */
bxc_type *bxc_emit_no_c_form(bxc_type *t);
/* The same for a method's output, which also may not be a reference. */
bxc_type *bxc_emit_output_no_c_form(bxc_type *t);
/* Whether the generated C can name parameter p: a plain `name: Type`
 * (not `self`, `_` or a pattern). */
bool bxc_emit_param_named(const bxc_param *p);
/* How many tensor slots (bext_ext_slot) a value of type t fills at most;
 * a method's inputs, and its output, may fill BEXT_EXT_MAX_SLOTS each
 * (bext/ext.h). */
uint32_t bxc_emit_tensor_slots(bxc_type *t);
/* The C names `-o` would give the unit (docs/codegen.md "C name clashes"):
 * the generator's phases run in plan mode, forming and claiming every
 * file-scope name — entry points and implementations, default bodies,
 * Autodiff arms, metadata functions, scalar encodings, helpers, impl fns,
 * types of the root module and of signatures with their tags and
 * release / retain, kernel launchers, feature checks — and writing no C.
 * A clash or a reserved name is an E1103 on unit->diags (false then).
 * For a unit the checker accepted so far: names need its records. */
bool bxc_emit_check_names(struct bxc_unit *unit);

#endif
