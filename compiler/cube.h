/* cube.h — `#[cube]` kernels in the front end (language.md §8).
 *
 *   check_cube.c  the kernel checker: signatures, generics and their
 *                 dtypes, `#[comptime]` values, bodies typed with the
 *                 checker's types (types.h) and scopes (check.h); it
 *                 records, per kernel, what every name in the body means
 *                 (a bxc_cube_kernel), so the lowering resolves nothing.
 *   lower_kir.c   one instantiation of a checked kernel -> the kernel IR
 *                 (runtime/kir/bxk.h) with the bxk_ builder, verified.
 *
 * A `#[cube(helper)]` fn is no kernel: kernels and other helpers call it,
 * and the lowering inlines its body at every call (its type parameters
 * take the types of the call's arguments; recursion is refused).
 *
 * A kernel generic over `F: Float` is one source and several IR kernels:
 * one per combination of its type parameters' dtypes and its comptime
 * parameters' values, named `name_f32`, `name_f64_256`, ... (mangling:
 * bxc_cube_instance_name).  The kernels of a unit live in the checker's
 * per-unit data and die with the unit. */
#ifndef BXC_CUBE_H
#define BXC_CUBE_H

#include <stdbool.h>
#include <stdint.h>

#include "ast.h"
#include "check.h"
#include "types.h"

struct bxc_unit;
struct bxk_kernel;
struct chk_ctx;
struct chk_module;

/* X(ENUM, "Bound", dtypes...): what a type parameter's bound allows and
 * the dtypes (enum bxk_type, without BXK_) a kernel is instantiated at,
 * in that order.  f16 and bf16 are taken only when a kernel lists them
 * (`#[cube(F = [f32, f16])]`): most kernels need no 16-bit copies. */
#define BXC_CUBE_BOUNDS(X)                                   \
    X(FLOAT, "Float", true, false, {BXK_F32, BXK_F64})       \
    X(INT, "Int", false, true, {BXK_I32, BXK_U32, BXK_I64})  \
    X(NUMERIC, "Numeric", true, true, {BXK_F32, BXK_F64, BXK_I32, BXK_U32, BXK_I64})

typedef enum bxc_cube_var_kind {
    BXC_CUBE_TENSOR,    /* `&Tensor<T>` / `&mut Tensor<T>` parameter: IR binding `slot` */
    BXC_CUBE_SCALAR,    /* scalar parameter: IR scalar `slot` */
    BXC_CUBE_COMPTIME,  /* `#[comptime]` parameter: comptime `slot`, a constant */
    BXC_CUBE_LET,       /* `let x = e;`: the value of e */
    BXC_CUBE_MUT,       /* `let mut x = e;`: an IR local */
    BXC_CUBE_SHARED,    /* `let s: SharedMemory<T> = SharedMemory::new(N);` */
    BXC_CUBE_INDEX,     /* `for i in a..b`: the loop's induction value */
} bxc_cube_var_kind;

typedef struct bxc_cube_var {
    bxc_cube_var_kind kind;
    const char *name;
    bxc_binding *binding;     /* its entry in the checker's scope */
    bxc_type *type;           /* value type; element type of a tensor / shared array */
    bool is_mut;              /* TENSOR: `&mut` */
    uint32_t id;              /* index in kernel->vars.items */
    uint32_t slot;            /* TENSOR, SCALAR, COMPTIME: parameter slot */
    bxc_expr *count;          /* SHARED: its element count, a constant expression */
    bxc_span span;
} bxc_cube_var;

typedef struct bxc_cube_generic {
    const char *name;         /* `F` */
    const uint8_t *dtypes;    /* enum bxk_type, instantiation order */
    uint32_t ndtypes;
    bool is_float, is_int;    /* what the bound allows (both: Numeric) */
} bxc_cube_generic;

typedef struct bxc_cube_comptime {
    bxc_cube_var *var;
    int64_t *values;          /* from `#[cube(name = v)]` / `= [v, w]` */
    uint32_t nvalues;
} bxc_cube_comptime;

BXC_DEFINE_LIST(bxc_cube_var_list, bxc_cube_var *);

/* A node of the body and the variable it names (a PATH expression) or
 * binds (the bxc_pat of a `let` or `for`). */
typedef struct bxc_cube_use {
    const void *node;
    bxc_cube_var *var;
} bxc_cube_use;

struct bxc_cube_kernel;

/* A call of a helper in a kernel's or helper's body. */
typedef struct bxc_cube_call {
    const bxc_expr *node;             /* the CALL expression */
    struct bxc_cube_kernel *helper;
    bxc_type **gtypes;                /* per type parameter of the helper: its type at this call */
} bxc_cube_call;
BXC_DEFINE_LIST(bxc_cube_call_list, bxc_cube_call *);

typedef struct bxc_cube_kernel {
    bxc_item *item;
    bxc_fn *fn;
    const char *name;
    bool in_root;             /* declared in the unit's root module */
    const char *prefix;       /* of its C names: "" in the root, `<stem>_<module>_` in an imported module */
    bool ok;                  /* checked without errors: lowering may run */
    bool is_helper;           /* `#[cube(helper)]`: inlined where called, never a kernel */
    bool sig_ok;              /* the signature checked (helpers: callable) */
    uint32_t nparams;         /* vars.items[0 .. nparams) are the tensor and scalar parameters */
    bxc_type *ret;            /* helpers: the return type (unit when none) */
    bxc_cube_call_list calls; /* the helpers its body calls */
    struct chk_module *cm;    /* where it is declared */
    bxc_scope *scope;         /* its parameters' scope, for the body */
    bxc_cube_generic *generics;
    uint32_t ngenerics;
    bxc_cube_comptime *comptimes;
    uint32_t ncomptimes;
    uint32_t nbindings, nscalars;
    bxc_cube_var_list vars;   /* parameters first, then body variables */
    bxc_cube_use *uses;       /* open addressing, capuses a power of two */
    uint32_t nuses, capuses;
} bxc_cube_kernel;

typedef struct bxc_cube_set {
    bxc_cube_kernel **items;
    uint32_t len, cap;
} bxc_cube_set;

/* ---- check_cube.c ----------------------------------------------------- */

/* The checker's pipeline hooks, after the metadata helper fns: first
 * every `#[cube]` signature of every module and every `#[cube(helper)]`
 * body (a recursive helper is an error at the call that closes the
 * cycle), then each module's kernels, each instantiation lowered once so
 * that rules the IR verifier enforces (`sync_cube` placement) become
 * located errors. */
void chk_cube_helpers(struct chk_ctx *cx, struct chk_module **cms, uint32_t n);
void chk_cube_module(struct chk_ctx *cx, struct chk_module *cm);
/* The call record of a CALL node of k's body, or NULL (an intrinsic). */
const bxc_cube_call *bxc_cube_call_of(const bxc_cube_kernel *k, const void *node);

/* The kernels bxc_check_unit checked (NULL before it ran). */
const bxc_cube_set *bxc_cube_kernels(const struct bxc_unit *u);
/* The variable a PATH expression of k's body names (NULL: a builtin), or
 * the one a `let` / `for` pattern binds. */
bxc_cube_var *bxc_cube_use_of(const bxc_cube_kernel *k, const void *node);
/* The IR op of a math intrinsic (`exp`, `max`, `abs`, ...) taking nargs
 * arguments, from the IR's own op table; -1 when `name` is none. */
int bxc_cube_intrinsic(const char *name, uint32_t *nargs, bool *float_only);
/* The IR topology row a builtin name (`ABSOLUTE_POS`) spells, or -1. */
int bxc_cube_topo(const char *name);

/* Instantiations: the product of the generics' dtype counts and the
 * comptime parameters' value counts; inst in [0, count) picks one. */
uint32_t bxc_cube_instance_count(const bxc_cube_kernel *k);
/* dtype (enum bxk_type) of generic g / value of comptime c in inst. */
unsigned bxc_cube_instance_dtype(const bxc_cube_kernel *k, uint32_t inst, uint32_t g);
int64_t bxc_cube_instance_value(const bxc_cube_kernel *k, uint32_t inst, uint32_t c);
/* `gelu_kernel_f32`, `sum_f64_256`: the prefix and name, then each
 * generic's dtype, then each comptime value (arena string). */
const char *bxc_cube_instance_name(bxc_arena *a, const bxc_cube_kernel *k, uint32_t inst);

/* ---- lower_kir.c ------------------------------------------------------- */

/* The IR type (enum bxk_type) of a kernel type that is not a type
 * parameter; BXK_VOID for anything else. */
unsigned bxc_cube_concrete_type(bxc_type *t);

/* One instantiation of a checked kernel (k->ok) as a verified IR kernel
 * (free with bxk_kernel_free), or NULL after reporting located errors on
 * u->diags (a `sync_cube` where units may diverge: E0805; anything else
 * the verifier rejects is a front-end bug: E0809). */
struct bxk_kernel *bxc_cube_lower(struct bxc_unit *u, const bxc_cube_kernel *k, uint32_t inst);
/* Every instantiation of every kernel of the unit (the root module's and
 * its imported modules', helpers aside), in module and declaration
 * order, into a malloc'd array (*out, *n; free each kernel, then the
 * array): what `bextc -o` puts in <stem>.kernels.o.  False after
 * reporting errors (nothing is returned then). */
bool bxc_cube_lower_root(struct bxc_unit *u, struct bxk_kernel ***out, uint32_t *n);

#endif
