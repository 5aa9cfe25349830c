/* check_internal.h — state and helpers shared by the checker's files.
 *
 *   check.c        entry point, the pass pipeline, diagnostics helpers,
 *                  the REPL API
 *   check_items.c  symbols, `use` imports, type expressions, structs/enums,
 *                  aliases, metadata companions, helper fn signatures/bodies
 *   check_attrs.c  attribute placement, `cfg` conditions, selectors of
 *                  `#[backend_extension]`, `#[extension_type]`,
 *                  `#[fusion(scalar)]` on types
 *   check_sig.c    backend-extension methods: signature rules, `#[fusion]`
 *                  forms, field expressions, `meta`, scalars, backward
 *   check_expr.c   the metadata expression language with type inference
 *   check_cube.c   `#[cube]` kernels (§8); their model is in cube.h
 *
 * Each check returns bool (false: it reported an error) and the callers
 * keep going, so one run reports every error (c3c style).  Not part of any
 * API: other areas use check.h and types.h. */
#ifndef BXC_CHECK_INTERNAL_H
#define BXC_CHECK_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <bext/bext.h>

#include "attrs.h"
#include "ast.h"
#include "check.h"
#include "diag.h"
#include "module.h"
#include "types.h"

/* Diagnostic codes of the checker: the CHK_E_* / CHK_W_* rows of the one
 * table (diag_codes.h); chk_code is that table's enum. */
typedef bxc_diag_code chk_code;

/* ---- symbols -------------------------------------------------------------- */

typedef enum chk_sym_kind {
    CHK_SYM_TYPE,     /* struct / enum (also generated companions): type */
    CHK_SYM_ALIAS,    /* `type A = T;`: type once resolved */
    CHK_SYM_FN,       /* helper fn: type is its FN type */
    CHK_SYM_TRAIT,    /* backend extension trait */
} chk_sym_kind;

typedef struct chk_symbol {
    const char *name;
    chk_sym_kind kind;
    bxc_item *item;              /* NULL for generated companions */
    bxc_module *module;          /* declaring module */
    bxc_span span;               /* the name */
    bxc_type *type;
    bool resolving;              /* alias: on the resolution stack */
    bool resolved;               /* alias / fn signature done */
    bool fusion_scalar;          /* alias marked `#[fusion(scalar)]` */
    bool is_cube;                /* `#[cube]` kernel fn: not checked here */
} chk_symbol;

/* name -> symbol, open hashing in the arena. */
typedef struct chk_entry {
    const char *name;
    chk_symbol *sym;
    struct chk_entry *next;
} chk_entry;

#define CHK_BUCKETS 128
typedef struct chk_table {
    chk_entry *buckets[CHK_BUCKETS];
    chk_symbol **order;          /* declaration order (own symbols only) */
    uint32_t norder, caporder;
} chk_table;

typedef struct chk_module {
    bxc_module *mod;
    chk_table table;             /* own items, companions and imports */
} chk_module;

/* A method or associated fn of an inherent `impl Type { ... }` block.
 * Registered per declaration (all impls of a type share one namespace);
 * `type` is its FN type, the receiver (`self`: Self, `&self`: &Self) first
 * when has_self. */
typedef struct chk_method {
    bxc_type_decl *decl;
    const char *name;
    bxc_fn *fn;
    bxc_item *impl;              /* the impl block */
    struct chk_module *cm;       /* module of the impl block */
    bxc_type *self_type;
    bxc_type *type;
    bool has_self;
    struct chk_method *next;
} chk_method;

/* A feature name met in a cfg condition, with its C macro
 * (BEXT_FEATURE_<NAME>, docs/codegen.md): two names with one macro would
 * be one feature in C (check_attrs.c). */
typedef struct chk_feature {
    const char *name, *macro;
    bxc_span span;
    bool first;                  /* the first spelling met for its macro */
    struct chk_feature *next;
} chk_feature;

typedef struct chk_ctx {
    bxc_unit *unit;
    bxc_arena *arena;
    bxc_diag_list *diags;
    chk_module **mods;           /* parallel to unit->modules */
    uint32_t nmods;
    chk_method *methods;         /* inherent impl methods, newest first */
    bxc_type *self_type;         /* `Self` inside an impl block, else NULL */
    /* > 0 while checking what follows a syntax error in a block: the parser
     * already reported it and dropped or misread code there, so errors and
     * warnings are not reported (chk_error returns NULL, which chk_help and
     * chk_note accept). */
    uint32_t quiet;
    chk_feature *features;       /* every feature name met, newest first */
    struct bxc_cube_set *cubes;  /* `#[cube]` kernels checked (check_cube.c, cube.h) */
    uint32_t in_kernel;          /* > 0 while checking a `#[cube]` fn: f16/bf16 resolve */
} chk_ctx;

/* The expression language is used in several places with slightly
 * different rules. */
typedef enum chk_mode {
    CHK_MODE_META,    /* helper fns, field expressions, meta, REPL */
    CHK_MODE_TENSOR,  /* default bodies and backward formulas: tensor ops */
} chk_mode;

/* Per-body state of the expression checker. */
typedef struct chk_fn {
    chk_ctx *cx;
    chk_module *cm;
    bxc_scope *scope;
    bxc_type *ret;               /* expected by `return` (NULL: not allowed) */
    uint32_t loop_depth;
    chk_mode mode;
    const char *what;            /* "helper fn `f`", for messages */
} chk_fn;

/* ---- check.c ---------------------------------------------------------------- */

bxc_diag *chk_error(chk_ctx *cx, chk_code code, bxc_span span, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
bxc_diag *chk_warning(chk_ctx *cx, chk_code code, bxc_span span, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void chk_help(chk_ctx *cx, bxc_diag *d, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void chk_note(chk_ctx *cx, bxc_diag *d, bxc_span span, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Type names for messages (arena strings). */
const char *chk_tn(chk_ctx *cx, bxc_type *t);
/* Nearest candidate by edit distance (case-insensitive), or NULL when none
 * is close enough to be a plausible typo. */
const char *chk_nearest(const char *word, const char *const *cands, uint32_t n);
chk_module *chk_module_of(chk_ctx *cx, const bxc_module *m);

/* ---- check_items.c ----------------------------------------------------------- */

chk_symbol *chk_lookup(chk_module *cm, const char *name);
void chk_table_put(chk_ctx *cx, chk_table *t, const char *name, chk_symbol *s);
void chk_collect_module(chk_ctx *cx, chk_module *cm);
void chk_resolve_imports(chk_ctx *cx, chk_module *cm);
void chk_resolve_types(chk_ctx *cx, chk_module *cm);
void chk_check_fns(chk_ctx *cx, chk_module *cm);
/* One item typed at the REPL: collected, resolved and checked at once. */
void chk_add_item(chk_ctx *cx, chk_module *cm, bxc_item *it);
/* Type of a written type; generics (may be NULL) are in scope as opaque
 * type parameters.  Reports unknown types; records ty->ty. */
bxc_type *chk_resolve_tyexpr(chk_ctx *cx, chk_module *cm, bxc_tyexpr *ty,
                             const bxc_generic_list *generics);
/* The FN type of a helper fn (signature resolved on first use). */
bxc_type *chk_fn_signature(chk_ctx *cx, chk_symbol *s);
/* The alias symbol a written type names directly, or NULL. */
chk_symbol *chk_alias_of(chk_module *cm, const bxc_tyexpr *ty);
/* Symbol a single-segment or module-qualified path names (fns, types). */
chk_symbol *chk_lookup_path(chk_ctx *cx, chk_module *cm, const bxc_path *p);
/* The module the qualifier of a multi-segment path names, or NULL. */
chk_module *chk_path_module(chk_ctx *cx, chk_module *cm, const bxc_path *p);
/* Checks a helper fn body (params bound, result against the return type). */
void chk_fn_body(chk_ctx *cx, chk_module *cm, bxc_fn *fn, bxc_type *fnty,
                 chk_mode mode, const char *what);
/* check_default.c: reject in a (typed, error-free) default body what the
 * C generator cannot lower; `ret` is the method's output type. */
void chk_default_body_subset(chk_ctx *cx, const bxc_fn *fn, bxc_type *ret);
/* The same for one (typed, error-free) `#[backward]` formula of fn. */
void chk_backward_formula_subset(chk_ctx *cx, const bxc_fn *fn, const bxc_expr *formula);
/* check_limits.c: what the C generator needs (emit.h's predicates).  The
 * signature of an extension method: ptypes[i] is parameter i's resolved
 * type (NULL: none), ret the output's (NULL: none). */
void chk_method_c_form(chk_ctx *cx, const bxc_fn *fn, bxc_type *const *ptypes, bxc_type *ret);
/* A method a `#[cfg]` switches off, whose C is generated all the same. */
void chk_method_switched_off(chk_ctx *cx, chk_module *cm, bxc_fn *fn);
/* The root module's structs and enums, which the generated header declares. */
void chk_root_types_c_form(chk_ctx *cx);
/* The C names -o would emit, asked of the generator's name plan
 * (bxc_emit_check_names): clashes and reserved names are E1103. */
void chk_c_names(chk_ctx *cx);
/* Candidate names of a kind for did-you-mean (arena array). */
const char **chk_names_of(chk_ctx *cx, chk_module *cm, int kind_mask, uint32_t *n);

/* ---- check_attrs.c ------------------------------------------------------------ */

/* Reports unknown attributes and attributes not allowed at `site`. */
void chk_attrs_placement(chk_ctx *cx, const bxc_attr_list *attrs, bxc_attr_site site);
bxc_attr *chk_find_attr(const bxc_attr_list *attrs, const char *name);
bool chk_attr_is(const bxc_attr *a, const char *name);
/* Validates a cfg condition (the argument of `cfg(...)`); on success
 * *value says whether it holds for the unit's features. */
bool chk_cfg_condition(chk_ctx *cx, const bxc_attr_arg *arg, bool *value);
/* `#[cfg(..)]` attributes of a list: all valid and all true. */
bool chk_cfg_active(chk_ctx *cx, const bxc_attr_list *attrs);
/* Item-level attribute rules: derive, extension_type, fusion(scalar). */
void chk_type_attrs(chk_ctx *cx, chk_module *cm, bxc_item *it, chk_symbol *s);
bool chk_derives_extension(const bxc_attr_list *attrs);
bool chk_has_fusion_companion(const bxc_attr_list *attrs);
bool chk_has_fusion_scalar(const bxc_attr_list *attrs);
/* Scalars, unit-only enums and one-scalar-field structs: how a marked
 * argument of type t is read as a scalar, and the scalar's type
 * (*scalar, NULL when READ_NONE). */
bxc_scalar_read chk_scalar_read(bxc_type *t, bxc_type **scalar);
bool chk_type_converts_to_scalar(bxc_type *t);

/* Parsed `#[backend_extension(...)]`.  The selectors are the runtime's
 * tables (bext.h): its backend rows (execution backends), then its layer
 * rows; chk_selector_names spells them, in that order. */
enum {
#define CHK_B_(E, s, S) CHK_SEL_##E,
    BEXT_BACKENDS(CHK_B_)
#undef CHK_B_
#define CHK_L_(E, s, S, d) CHK_SEL_##E,
    BEXT_LAYERS(CHK_L_)
#undef CHK_L_
    CHK_SEL_COUNT
};
_Static_assert(CHK_SEL_COUNT == BEXT_BACKEND_COUNT + BEXT_LAYER_COUNT, "one selector per table row");
extern const char *const chk_selector_names[CHK_SEL_COUNT];
/* "Cube, Flex, NdArray, LibTorch, Remote, Autodiff, Fusion" (backends only: "Cube, ..., Remote"). */
const char *chk_selector_list(bool backends_only);
typedef struct chk_selectors {
    bool present;                /* the attribute exists */
    bool listed[CHK_SEL_COUNT];
    uint32_t nexec;              /* execution backends (not Autodiff/Fusion) */
    const char *names;           /* "Cube, Flex" for messages */
} chk_selectors;
void chk_backend_extension(chk_ctx *cx, const bxc_attr *a, chk_selectors *out);
/* The trait's selector record (ast.h bxc_trait_selectors) from its
 * `#[backend_extension]`: no diagnostics (chk_backend_extension reports),
 * so it serves traits a `#[cfg]` switches off too. */
const bxc_trait_selectors *chk_selector_record(chk_ctx *cx, const bxc_attr *a);

/* ---- check_impl.c ------------------------------------------------------------ */

/* Inherent impl blocks of a module: self types, method signatures and
 * duplicates (before helper fn bodies, which may call methods). */
void chk_impl_signatures(chk_ctx *cx, chk_module *cm);
/* Their bodies (after every signature is known). */
void chk_impl_bodies(chk_ctx *cx, chk_module *cm);
/* One REPL-typed impl item: both at once. */
void chk_add_impl(chk_ctx *cx, chk_module *cm, bxc_item *it);
/* The method or associated fn `name` of a struct/enum type, or NULL. */
chk_method *chk_find_method(chk_ctx *cx, bxc_type *t, const char *name);

/* ---- check_sig.c ------------------------------------------------------------ */

void chk_trait(chk_ctx *cx, chk_module *cm, bxc_item *it);
/* The record (bxc_fn.method) of a method a `#[cfg]` switches off, or of a
 * method of a switched-off trait: read without diagnostics. */
void chk_method_record_off(chk_ctx *cx, chk_module *cm, bxc_item *it, bxc_fn *fn);

/* ---- check_expr.c ----------------------------------------------------------- */

void chk_fn_init(chk_fn *f, chk_ctx *cx, chk_module *cm, chk_mode mode);
/* Types `e` against `expected` (NULL: no expectation); records and
 * returns the type.  Reports mismatches itself when expected is given. */
bxc_type *chk_expr(chk_fn *f, bxc_expr *e, bxc_type *expected);
/* Unify `found` into `expected`; false (no report) when incompatible. */
bool chk_unify(chk_ctx *cx, bxc_type *expected, bxc_type *found);
/* Unify or report "expected X, found Y" at span. */
bool chk_coerce(chk_fn *f, bxc_type *expected, bxc_type *found, bxc_span span);
/* A block in a new scope / in the current scope (REPL top level). */
bxc_type *chk_block(chk_fn *f, bxc_block *b, bxc_type *expected);
bxc_type *chk_block_in_scope(chk_fn *f, bxc_block *b);
/* Types a closure against known parameter types (meta values): `ret` is
 * what `return` inside it must produce (NULL: no return allowed) and
 * `body_expected` what its body is checked against (NULL: inferred). */
bxc_type *chk_closure(chk_fn *f, bxc_expr *e, bxc_type *const *params, uint32_t nparams,
                      bxc_type *ret, bxc_type *body_expected);
/* Replaces inference variables on every recorded type under e / b. */
void chk_zonk_expr(chk_ctx *cx, bxc_expr *e);
void chk_zonk_block(chk_ctx *cx, bxc_block *b);
/* Scopes. */
bxc_scope *chk_scope_push(chk_fn *f);
void chk_scope_pop(chk_fn *f);
void chk_bind(chk_fn *f, const char *name, bxc_type *t, bool is_mut, bxc_span span);
/* Binds a pattern to a type (tuple patterns destructure). */
void chk_bind_pat(chk_fn *f, bxc_pat *p, bxc_type *t);

#endif
