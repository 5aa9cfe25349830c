/* interp.h — the metadata interpreter (language.md §5, §7).
 *
 * A tree-walking evaluator of the metadata expression language over the AST:
 * helper fns, `#[fusion(...)]` field expressions and `meta` callables, and
 * what the REPL types.  Every runtime failure (integer overflow, division by
 * zero, a negative value for an unsigned type, an index out of range, a
 * `panic("...")`, the recursion limit, the loop budget, an operation on the
 * wrong kind of value) is a located diagnostic (codes E10xx) with a note per
 * enclosing call — never undefined behaviour, never a hang.
 *
 * Memory: values produced by an evaluation live in the interpreter's scratch
 * arena, which the next public entry call empties.  Keep a value by copying
 * it (bxv_copy) into an arena you own; bxi_env does that for bindings and
 * compacts its arena, so a long REPL session stays bounded by what is bound.
 *
 * Spans: the interpreter can run code from several units (the REPL loads one
 * unit per file).  Each unit is registered with a `file_base`; diagnostics
 * carry span.file = file_base + the unit's own file id, so one merged source
 * list (the REPL builds one) renders all of them.
 *
 * Semantics where Rust leaves a choice: integer literals take the type the
 * checker recorded on the node, else the other operand's (Rust-style);
 * arithmetic, indexes and `as` casts are checked (a cast that does not fit
 * is an error, not a wrap); `Shape::pop` returns the dimension (no
 * Option); `panic("msg")` is the builtin that rejects bad input; a helper
 * fn's calls resolve in its own module first.  Evaluation order: operands
 * left to right, method arguments before the receiver, an assignment's
 * value before its place.
 *
 * Files: interp.c (state, program, bindings, errors), interp_ops.c
 * (arithmetic, casts), interp_eval.c (evaluation, entry points),
 * interp_meta.c (#[fusion(...)]), value.c (values and their printing).
 */
#ifndef BEXT_INTERP_H
#define BEXT_INTERP_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "ast.h"
#include "diag.h"
#include "module.h"
#include "source.h"
#include "value.h"

#include <bext/ops.h>   /* bext_spec, bext_op_args: the inference hook's types */

/* Diagnostic codes of the interpreter: the BXI_E_* rows of diag_codes.h. */
/* Shapes grow to at most this many dims, as in generated code
 * (gen.h's BEXT_SHAPE_CAP): the interpreter and the C generator must give
 * the same results and errors (E1003, same message). */
#define BXI_SHAPE_CAP    32

/* Top-level bindings (REPL `let`s).  Values are deep copies owned by the env. */
typedef struct bxi_binding {
    const char *name;
    bool is_mut;
    BxvValue value;
    size_t bytes;            /* arena bytes its copy took (compaction) */
} bxi_binding;

typedef struct bxi_env {
    bxc_arena arena;         /* names and values; compacted when mostly dead */
    size_t live_bytes;       /* sum of the live bindings' bytes */
    bxi_binding *items;      /* malloc'd */
    uint32_t len, cap;
} bxi_env;

void bxi_env_init(bxi_env *env);
void bxi_env_free(bxi_env *env);
/* Binds (or rebinds, shadowing) `name` to a deep copy of `v`. */
void bxi_env_set(bxi_env *env, const char *name, bool is_mut, const BxvValue *v);
const bxi_binding *bxi_env_get(const bxi_env *env, const char *name);

typedef struct bxi_interp bxi_interp;

typedef struct bxi_limits {
    uint32_t max_call_depth;  /* nested fn / closure calls */
    uint64_t max_steps;       /* loop iterations + calls per entry call */
    size_t max_stack_bytes;   /* C stack the evaluator may use (measured) */
} bxi_limits;
#define BXI_DEFAULT_CALL_DEPTH 128
#define BXI_DEFAULT_STEPS 2000000
/* The default stack budget is half of RLIMIT_STACK, at most this much; an
 * embedder that evaluates on a thread with a smaller stack must lower it. */
#define BXI_DEFAULT_STACK_MAX ((size_t)8 << 20)

/* `diags` receives every error (its spans are "global", see above). */
bxi_interp *bxi_new(bxc_diag_list *diags);
void bxi_free(bxi_interp *in);
/* Fields left 0 keep their current value. */
void bxi_set_limits(bxi_interp *in, bxi_limits limits);

/* Spec-level inference of one core op, for `:meta` on a method with a
 * `#[fusion(default)]` body: the runtime's bext_infer (bext/ops.h) plus
 * its error text.  The compiler library does not link the runtime, so a
 * program that has it (the REPL) passes it in; without one, default
 * bodies are not evaluated (an error says so). */
typedef bool (*bxi_infer_fn)(const char *op, const bext_spec *in, int n_in, bext_op_args *args, bext_spec *out,
                             const char **error);
void bxi_set_infer(bxi_interp *in, bxi_infer_fn fn);

/* Program: where names (fns, structs, enums, traits, aliases) are found.
 * Units are searched in registration order, every module of each; items
 * added with bxi_add_items (REPL-typed fns) are searched first. */
void bxi_add_unit(bxi_interp *in, const bxc_unit *unit, uint32_t file_base);
void bxi_add_items(bxi_interp *in, const bxc_item_list *items, uint32_t file_base);
void bxi_clear_program(bxi_interp *in);

/* Evaluates `e` (whose spans belong to `file_base`), with `env`'s bindings
 * visible (env may be NULL).  Returns false after adding a diagnostic. */
bool bxi_eval(bxi_interp *in, const bxc_expr *e, uint32_t file_base,
              const bxi_env *env, BxvValue *out);

/* Runs REPL input: the statements and optional tail of `blk`.  On success
 * every top-level `let` (and each mutated mutable binding) is stored into
 * `env`; *has_value says whether a tail value was produced.  On failure the
 * env is unchanged. */
bool bxi_eval_repl(bxi_interp *in, const bxc_block *blk, uint32_t file_base,
                   bxi_env *env, BxvValue *out, bool *has_value);

/* Calls the helper fn `name` with `args` (which must not live in the
 * interpreter's scratch arena).  Integer literals among the args take the
 * parameter types. */
bool bxi_call_fn(bxi_interp *in, const char *name, const BxvValue *args,
                 uint32_t nargs, BxvValue *out);
/* The same for one fn item of a registered unit (a module's fn whose name
 * another module also declares: names are the checker's business). */
bool bxi_call_item(bxi_interp *in, const bxc_item *fn, const BxvValue *args,
                   uint32_t nargs, BxvValue *out);

/* `:meta`: evaluates `Trait::method`'s #[fusion(...)] on `args`, one per
 * parameter in declaration order: a TensorSpec for each tensor, a metadata
 * value for each extension argument, a plain value otherwise. */
typedef enum bxi_meta_status {
    BXI_META_ERROR,     /* diagnostics were added */
    BXI_META_VALUE,     /* *out is the output metadata */
    BXI_META_DEFAULT,   /* #[fusion(default)]: see *message */
} bxi_meta_status;
bxi_meta_status bxi_meta(bxi_interp *in, const char *trait, const char *method,
                         const BxvValue *args, uint32_t nargs, BxvValue *out,
                         const char **message);
/* The same for a REPL call expression `Trait::method(arg, ...)`: the args
 * are evaluated with `env` visible; `span_base` applies to `call`. */
bxi_meta_status bxi_meta_call(bxi_interp *in, const bxc_expr *call,
                              uint32_t file_base, const bxi_env *env,
                              BxvValue *out, const char **message);

/* `:scalars`: the scalars `Trait::method` exposes to fusion optimizers
 * (language.md §4) for given argument values, in declaration order.
 * Ordinary arguments of an integer type, f32, f64 or bool are INFERRED;
 * `#[fusion(scalar)]` on the argument, its alias or its struct/enum makes
 * it MARKED (a unit-only enum converts to its variant's index as u32, a
 * one-field struct to that field); `#[fusion(scalar = e)]` is CUSTOM: e is
 * evaluated with the arguments borrowed, as field expressions see them,
 * and must produce an integer, float or bool.  Results live in the
 * scratch arena (valid until the next entry call). */
typedef struct bxi_scalar {
    const char *name;        /* the argument */
    bxc_scalar_kind kind;    /* INFERRED, MARKED or CUSTOM (ast.h) */
    BxvValue value;          /* an integer, float or bool */
} bxi_scalar;
bool bxi_scalars(bxi_interp *in, const char *trait, const char *method, const BxvValue *args,
                 uint32_t nargs, bxi_scalar **out, uint32_t *nout);
/* The same for a REPL call expression `Trait::method(arg, ...)`. */
bool bxi_scalars_call(bxi_interp *in, const bxc_expr *call, uint32_t file_base, const bxi_env *env,
                      bxi_scalar **out, uint32_t *nout);

#endif
