/* check.h — the checker's entry point (names, types, language rules).
 * Implemented in check*.c by the checker; types in types.h. */
#ifndef BXC_CHECK_H
#define BXC_CHECK_H

#include <stdbool.h>

#include "ast.h"
#include "types.h"

struct bxc_unit;

/* Runs every rule over the loaded unit, appends diagnostics to
 * unit->diags, and returns false if any error was found.  Afterwards
 * every checked expression carries its type in bxc_expr.ty (never an
 * inference variable; see types.h), and unit->check holds the symbol
 * tables that bxc_check_repl_expr and bxc_check_lookup use.  Types live in
 * unit->arena and die with the unit. */
bool bxc_check_unit(struct bxc_unit *unit);

/* ---- bindings visible to an expression (REPL `let`s) ------------------- */

typedef struct bxc_binding {
    const char *name;
    struct bxc_type *type;
    bool is_mut;
    bxc_span span;                 /* where it was bound (may be none) */
    struct bxc_binding *next;      /* next older binding in the same scope */
} bxc_binding;

typedef struct bxc_scope {
    struct bxc_scope *parent;
    bxc_binding *first;            /* newest first: shadowing is lookup order */
} bxc_scope;

/* A new empty scope (parent may be NULL) in `a`. */
bxc_scope *bxc_scope_new(bxc_arena *a, bxc_scope *parent);
/* Binds (shadowing any older binding of the name); copies the name. */
bxc_binding *bxc_scope_bind(bxc_arena *a, bxc_scope *s, const char *name,
                            struct bxc_type *type, bool is_mut);
/* Innermost binding of `name` in s or its parents, or NULL. */
bxc_binding *bxc_scope_lookup(const bxc_scope *s, const char *name);

/* ---- the REPL ------------------------------------------------------------ */

/* Type-checks one standalone REPL input expression `e` (an expression, or a
 * BLOCK expr for a line of statements) against the already checked `unit`
 * (bxc_check_unit must have run; a unit with no modules is fine: the
 * built-in names still work) with `bindings` visible (may be NULL).  Names
 * resolve as in the unit's root module: its items, its imports, builtins.
 *
 * Diagnostics go to unit->diags (their spans are those of `e`).  Returns
 * the expression's type (recorded on every node, inference variables
 * resolved), or NULL after reporting an error.  Top-level `let`s of a
 * BLOCK are added to `bindings` (when non-NULL) with their types, so the
 * REPL can keep them for the next line; on error nothing is added.
 * New types live in unit->arena. */
struct bxc_type *bxc_check_repl_expr(struct bxc_unit *unit, bxc_scope *bindings,
                                     bxc_expr *e);

/* The same for a REPL line of statements (and an optional tail value);
 * returns the tail's type, `()` without a tail. */
struct bxc_type *bxc_check_repl_block(struct bxc_unit *unit, bxc_scope *bindings,
                                      bxc_block *b);

/* Checks REPL-typed items (a `fn` or a type defined at the prompt) and
 * adds them to the root module's names for later lines, replacing an older
 * item of the same name (the interpreter searches REPL items first, too);
 * false on errors. */
bool bxc_check_repl_item(struct bxc_unit *unit, bxc_item *item);

/* Makes the names of `other`'s root module (its items and what it imports)
 * and its impl methods visible to REPL input checked against `unit`, after
 * unit's own names (a name unit already has keeps its meaning).  The REPL
 * loads one unit per file and calls this for every further file, so typed
 * input (`:type`, evaluation) sees the names of every file, as `:meta`
 * does.  Both units must be checked; `other` must live as long as `unit`
 * is used. */
void bxc_check_repl_see_unit(struct bxc_unit *unit, struct bxc_unit *other);

/* ---- queries for the interpreter / code generators ----------------------- */

/* The type named `name` in the root module (structs, enums, aliases,
 * generated `NameMetadata` companions), or NULL. */
struct bxc_type *bxc_check_lookup_type(struct bxc_unit *unit, const char *name);
/* The FN type of the helper fn `name` visible from the root module. */
struct bxc_type *bxc_check_lookup_fn(struct bxc_unit *unit, const char *name);

/* bxc_type_print / bxc_type_name (types.h) spell a type for `:type`. */

#endif
