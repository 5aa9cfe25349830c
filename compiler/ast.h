/* ast.h — the syntax tree of a .bext file.
 *
 * Every node lives in the compilation's arena (never freed one by one) and
 * carries a span.  Lists are arena arrays {items, len, cap}; grow them with
 * BXC_LIST_PUSH.  Expression nodes carry a `ty` slot the checker fills.
 * Builders (bxc_ast_*) are called by the Lemon actions in grammar/parser.y
 * and may also be used by tools that synthesize trees. */
#ifndef BXC_AST_H
#define BXC_AST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "source.h"

struct bxc_type;     /* the checker's semantic type (check*.c) */
struct bxc_module;   /* module.h */

typedef struct bxc_expr bxc_expr;
typedef struct bxc_stmt bxc_stmt;
typedef struct bxc_item bxc_item;
typedef struct bxc_pat bxc_pat;
typedef struct bxc_tyexpr bxc_tyexpr;
typedef struct bxc_attr bxc_attr;
typedef struct bxc_attr_arg bxc_attr_arg;
typedef struct bxc_block bxc_block;
typedef struct bxc_param bxc_param;
typedef struct bxc_field bxc_field;
typedef struct bxc_variant bxc_variant;
typedef struct bxc_generic bxc_generic;
typedef struct bxc_field_init bxc_field_init;
typedef struct bxc_fn bxc_fn;

typedef struct bxc_ident {
    const char *name;     /* arena copy, NUL-terminated */
    bxc_span span;
} bxc_ident;

#define BXC_DEFINE_LIST(name, T) \
    typedef struct name { T *items; uint32_t len, cap; } name
BXC_DEFINE_LIST(bxc_ident_list, bxc_ident);
BXC_DEFINE_LIST(bxc_expr_list, bxc_expr *);
BXC_DEFINE_LIST(bxc_stmt_list, bxc_stmt *);
BXC_DEFINE_LIST(bxc_item_list, bxc_item *);
BXC_DEFINE_LIST(bxc_pat_list, bxc_pat *);
BXC_DEFINE_LIST(bxc_tyexpr_list, bxc_tyexpr *);
BXC_DEFINE_LIST(bxc_attr_list, bxc_attr *);
BXC_DEFINE_LIST(bxc_attr_arg_list, bxc_attr_arg *);
BXC_DEFINE_LIST(bxc_param_list, bxc_param *);
BXC_DEFINE_LIST(bxc_field_list, bxc_field *);
BXC_DEFINE_LIST(bxc_variant_list, bxc_variant *);
BXC_DEFINE_LIST(bxc_generic_list, bxc_generic *);
BXC_DEFINE_LIST(bxc_field_init_list, bxc_field_init *);
BXC_DEFINE_LIST(bxc_fn_list, bxc_fn *);

/* `A::B::c` — one or more segments. */
typedef struct bxc_path {
    bxc_ident_list segs;
    bxc_span span;
} bxc_path;

/* ---- attributes: generic data, interpreted by the checker ------------- */

typedef enum bxc_attr_arg_kind {
    BXC_ATTR_ARG_PATH,    /* `Cube`, `default`, `std::x`            path */
    BXC_ATTR_ARG_ASSIGN,  /* `dtype = expr`, `feature = "x"`        path(name), value */
    BXC_ATTR_ARG_COLON,   /* `NdArray: cfg(feature = "x")`          path(name), args (1) */
    BXC_ATTR_ARG_CALL,    /* `cfg(...)`, `not(...)`, `any()`        path(name), args */
    BXC_ATTR_ARG_STRING,  /* `"text"`                               string */
} bxc_attr_arg_kind;

struct bxc_attr_arg {
    bxc_attr_arg_kind kind;
    bxc_span span;
    bxc_path *path;            /* PATH, and the name of ASSIGN/COLON/CALL */
    bxc_expr *value;           /* ASSIGN */
    bxc_attr_arg_list args;    /* CALL arguments; COLON: what follows `:` */
    const char *string;        /* STRING: decoded value */
    uint32_t string_len;
};

/* `#[path]` or `#[path(args)]` */
struct bxc_attr {
    bxc_path *path;
    bool has_args;             /* parentheses present (`any()` has 0 args) */
    bxc_attr_arg_list args;
    bxc_span span;             /* from `#` to `]` */
};

/* ---- types as written -------------------------------------------------- */

typedef enum bxc_tyexpr_kind {
    BXC_TY_PATH,     /* `FloatTensor<Self>`, `u32`     path, args */
    BXC_TY_REF,      /* `&T`, `&mut T`                 inner, is_mut */
    BXC_TY_TUPLE,    /* `(A, B)`; `()` is unit (elems.len == 0) */
    BXC_TY_ARRAY,    /* `[T; N]`                       inner, len */
    BXC_TY_SLICE,    /* `[T]`                          inner */
    BXC_TY_ERROR,    /* placeholder after a syntax error */
} bxc_tyexpr_kind;

struct bxc_tyexpr {
    bxc_tyexpr_kind kind;
    bxc_span span;
    bxc_path *path;
    bxc_tyexpr_list args;      /* PATH generic args (on the last segment) */
    bxc_tyexpr *inner;
    bool is_mut;
    bxc_tyexpr_list elems;     /* TUPLE */
    bxc_expr *len;             /* ARRAY */
    struct bxc_type *ty;       /* checker slot */
};

/* ---- patterns (let, closure params, for) -------------------------------- */

typedef enum bxc_pat_kind {
    BXC_PAT_IDENT,   /* `x`, `mut x`  name, is_mut */
    BXC_PAT_WILD,    /* `_` */
    BXC_PAT_TUPLE,   /* `(a, mut b)`  elems */
    BXC_PAT_ERROR,
} bxc_pat_kind;

struct bxc_pat {
    bxc_pat_kind kind;
    bxc_span span;
    bxc_ident name;
    bool is_mut;
    bxc_pat_list elems;
    struct bxc_type *ty;       /* checker slot */
};

/* ---- expressions ------------------------------------------------------- */

typedef enum bxc_expr_kind {
    BXC_EXPR_INT,          /* int_lit */
    BXC_EXPR_FLOAT,        /* float_lit */
    BXC_EXPR_STRING,       /* string_lit */
    BXC_EXPR_BOOL,         /* bool_lit */
    BXC_EXPR_PATH,         /* path: `x`, `A::B::c`, `DType::F32` */
    BXC_EXPR_UNARY,        /* unary */
    BXC_EXPR_BINARY,       /* binary */
    BXC_EXPR_ASSIGN,       /* assign: `=` (op NONE) and `+=` etc. */
    BXC_EXPR_CAST,         /* cast: `e as T` */
    BXC_EXPR_CALL,         /* call: `f(a)`, `Shape::new()` */
    BXC_EXPR_METHOD_CALL,  /* method_call: `s.swap(0, 1)` */
    BXC_EXPR_FIELD,        /* field: `x.shape` */
    BXC_EXPR_TUPLE_FIELD,  /* tuple_field: `t.0` */
    BXC_EXPR_INDEX,        /* index: `s[i]` */
    BXC_EXPR_BLOCK,        /* block */
    BXC_EXPR_IF,           /* if_ */
    BXC_EXPR_WHILE,        /* while_ */
    BXC_EXPR_FOR,          /* for_: `for i in a..b { }` */
    BXC_EXPR_LOOP,         /* loop_: `loop { }` */
    BXC_EXPR_BREAK,        /* no payload */
    BXC_EXPR_CONTINUE,     /* no payload */
    BXC_EXPR_RETURN,       /* ret */
    BXC_EXPR_STRUCT,       /* struct_lit: `Name { a: e, b }` */
    BXC_EXPR_TUPLE,        /* tuple: `(a, b)`, `(a,)`, `()` */
    BXC_EXPR_ARRAY,        /* array: `[2, 3]` (shape literals) */
    BXC_EXPR_CLOSURE,      /* closure: `|a, b| e` */
    BXC_EXPR_RANGE,        /* range: `a..b`, `a..=b` */
    BXC_EXPR_ERROR,        /* placeholder after an error */
    BXC_EXPR_KIND_COUNT
} bxc_expr_kind;

typedef enum bxc_unop {
    BXC_UN_NEG,      /* -e */
    BXC_UN_NOT,      /* !e */
    BXC_UN_DEREF,    /* *e */
    BXC_UN_REF,      /* &e */
    BXC_UN_REF_MUT,  /* &mut e */
} bxc_unop;

/* ORDER: bxc_binop_str in ast.c */
typedef enum bxc_binop {
    BXC_BIN_NONE,    /* plain `=` in assign */
    BXC_BIN_ADD, BXC_BIN_SUB, BXC_BIN_MUL, BXC_BIN_DIV, BXC_BIN_REM,
    BXC_BIN_AND,     /* && */
    BXC_BIN_OR,      /* || */
    BXC_BIN_BITAND, BXC_BIN_BITOR, BXC_BIN_BITXOR,
    BXC_BIN_EQ, BXC_BIN_NE, BXC_BIN_LT, BXC_BIN_LE, BXC_BIN_GT, BXC_BIN_GE,
    BXC_BINOP_COUNT
} bxc_binop;

struct bxc_field_init {        /* `name: value` or shorthand `name` */
    bxc_ident name;
    bxc_expr *value;           /* shorthand: a PATH expr naming `name` */
    bool shorthand;
    bxc_span span;
};

struct bxc_block {
    bxc_stmt_list stmts;
    bxc_expr *tail;            /* value of the block, or NULL (unit) */
    bxc_span span;             /* `{` .. `}` */
};

/* What the checker resolved a name to: the one answer the interpreter,
 * the C generator and the REPL read instead of resolving again (docs/
 * frontend.md, "Resolution records").  Filled on PATH, CALL, METHOD_CALL,
 * FIELD and STRUCT expressions; a CALL carries what its callee names.
 * NONE where the checker did not resolve (an error, code never checked). */
typedef enum bxc_res_kind {
    BXC_RES_NONE,
    BXC_RES_LOCAL,          /* a `let`, parameter or closure parameter: decl */
    BXC_RES_FN,             /* helper fn: item, fn, module (declaring) */
    BXC_RES_IMPL_FN,        /* fn of an inherent impl block: fn, item (the block), module, type (Self) */
    BXC_RES_VARIANT,        /* enum variant: type (the enum), index */
    BXC_RES_STRUCT,         /* struct: type (literal, unit-struct value) */
    BXC_RES_FIELD,          /* struct field: type (the struct), index */
    BXC_RES_SPEC_FIELD,     /* TensorSpec's `shape` (index 0) / `dtype` (1) */
    BXC_RES_SPEC,           /* `TensorSpec { .. }` literal */
    BXC_RES_BUILTIN_METHOD, /* builtins.h method row: index (bxc_builtin_method) */
    BXC_RES_BUILTIN_FN,     /* index: bxc_builtin_fn */
    BXC_RES_DTYPE,          /* `DType::X`: index in bxc_dtype_names order */
    BXC_RES_CLONE,          /* `.clone()` */
    BXC_RES_TENSOR_OP,      /* tensor_ops.h op (default bodies): op */
} bxc_res_kind;

typedef enum bxc_builtin_fn {
    BXC_BFN_SHAPE_NEW, BXC_BFN_SPEC_NEW, BXC_BFN_PANIC,
} bxc_builtin_fn;

struct bxc_top;
struct bxc_fn;

typedef struct bxc_res {
    bxc_res_kind kind;
    uint32_t index;
    struct bxc_module *module;   /* FN, IMPL_FN: where the fn is declared */
    const struct bxc_item *item; /* FN: its item; IMPL_FN: the impl block */
    const struct bxc_fn *fn;     /* FN, IMPL_FN */
    struct bxc_type *type;       /* IMPL_FN, VARIANT, STRUCT, FIELD: the type */
    const struct bxc_top *op;    /* TENSOR_OP */
    bxc_span decl;               /* LOCAL: where it is bound (its pattern's name), or none (`grad`, `output`) */
} bxc_res;

/* "fn", "impl fn", ... for dumps and tests. */
const char *bxc_res_kind_name(bxc_res_kind k);

struct bxc_expr {
    bxc_expr_kind kind;
    bxc_span span;
    struct bxc_type *ty;       /* filled by the checker */
    bxc_res res;               /* filled by the checker (above) */
    uint32_t depth;            /* tree height, bounded by the parser */
    union {
        struct { const char *text; uint64_t value; } int_lit;    /* text as written */
        struct { const char *text; double value; } float_lit;
        struct { const char *value; uint32_t len; } string_lit;  /* decoded */
        bool bool_lit;
        bxc_path *path;
        struct { bxc_unop op; bxc_expr *operand; } unary;
        struct { bxc_binop op; bxc_expr *lhs, *rhs; } binary;
        struct { bxc_binop op; bxc_expr *target, *value; } assign;
        struct { bxc_expr *expr; bxc_tyexpr *type; } cast;
        struct { bxc_expr *callee; bxc_expr_list args; } call;
        struct { bxc_expr *receiver; bxc_ident method; bxc_expr_list args; } method_call;
        struct { bxc_expr *object; bxc_ident name; } field;
        struct { bxc_expr *object; uint32_t index; bxc_span index_span; } tuple_field;
        struct { bxc_expr *object, *index; } index;
        bxc_block *block;
        /* else_: NULL, a BLOCK expr, or an IF expr (`else if`) */
        struct { bxc_expr *cond; bxc_block *then_block; bxc_expr *else_; } if_;
        struct { bxc_expr *cond; bxc_block *body; } while_;
        struct { bxc_pat *pat; bxc_expr *iter; bxc_block *body; } for_;
        struct { bxc_block *body; } loop_;
        struct { bxc_expr *value; } ret;                  /* value may be NULL */
        struct { bxc_path *path; bxc_field_init_list fields; } struct_lit;
        struct { bxc_expr_list elems; } tuple;
        struct { bxc_expr_list elems; } array;
        /* params: pat + optional type (NULL when omitted) */
        struct { bxc_param_list params; bxc_tyexpr *ret; bxc_expr *body; } closure;
        struct { bxc_expr *start, *end; bool inclusive; } range;
    };
};

/* ---- statements --------------------------------------------------------- */

typedef enum bxc_stmt_kind {
    BXC_STMT_LET,     /* `let pat: T = init;`  pat, type?, init? */
    BXC_STMT_EXPR,    /* `expr;` or a block-like expr without `;`  expr, has_semi */
    BXC_STMT_EMPTY,   /* `;` */
    BXC_STMT_ITEM,    /* nested item (REPL input) */
    BXC_STMT_ERROR,   /* placeholder after a syntax error */
} bxc_stmt_kind;

struct bxc_stmt {
    bxc_stmt_kind kind;
    bxc_span span;
    bxc_pat *pat;
    bxc_tyexpr *type;
    bxc_expr *init;
    bxc_expr *expr;
    bool has_semi;
    bxc_item *item;
};

/* ---- items -------------------------------------------------------------- */

typedef enum bxc_item_kind {
    BXC_ITEM_USE,         /* use_ */
    BXC_ITEM_TYPE_ALIAS,  /* alias */
    BXC_ITEM_STRUCT,      /* struct_ */
    BXC_ITEM_ENUM,        /* enum_ */
    BXC_ITEM_FN,          /* fn */
    BXC_ITEM_TRAIT,       /* trait */
    BXC_ITEM_IMPL,        /* impl */
    BXC_ITEM_ERROR,       /* placeholder after a syntax error */
} bxc_item_kind;

/* `<F: Float, B: Backend + Clone>` */
struct bxc_generic {
    bxc_ident name;
    bxc_tyexpr_list bounds;
    bxc_span span;
};

/* Named field `name: T` (struct, struct variant) or positional field
 * (tuple variant / tuple struct: name.name == NULL). */
struct bxc_field {
    bxc_attr_list attrs;
    bool is_pub;
    bxc_ident name;
    bxc_tyexpr *type;
    bxc_span span;
};

typedef enum bxc_variant_kind {
    BXC_VARIANT_UNIT,     /* `Empty` */
    BXC_VARIANT_TUPLE,    /* `Nested(A, u32)` — fields unnamed */
    BXC_VARIANT_STRUCT,   /* `Float { tensor: T }` */
} bxc_variant_kind;

struct bxc_variant {
    bxc_attr_list attrs;
    bxc_variant_kind kind;
    bxc_ident name;
    bxc_field_list fields;
    bxc_span span;
};

/* Function parameter `pat: T` (fn) or `pat` / `pat: T` (closure).
 * `self` / `&self` / `&mut self` parse as pat `self` with type NULL and
 * self_ref/self_mut set. */
struct bxc_param {
    bxc_attr_list attrs;
    bxc_pat *pat;
    bxc_tyexpr *type;
    bool is_self, self_ref, self_mut;
    bxc_span span;
};

/* A free fn, a trait method (body = default body), or an impl method. */
struct bxc_fn {
    bxc_attr_list attrs;
    bool is_pub;
    bxc_ident name;
    bxc_generic_list generics;
    bxc_param_list params;
    bxc_tyexpr *ret;           /* NULL: returns unit */
    bxc_block *body;           /* NULL: declaration only (`;`) */
    bxc_span span;
    const char *doc;           /* its `///` lines, joined by '\n', or NULL */
    /* checker: a backend-extension trait method's record (below), or NULL */
    const struct bxc_method_rec *method;
};

typedef enum bxc_use_kind {
    BXC_USE_SINGLE,   /* `use a::b::c;`       module a::b, names [c] */
    BXC_USE_GROUP,    /* `use a::b::{c, d};`  module a::b, names [c, d] */
    BXC_USE_GLOB,     /* `use a::b::*;`       module a::b */
    BXC_USE_MODULE,   /* `use a;`             module a */
} bxc_use_kind;

struct bxc_item {
    bxc_item_kind kind;
    bxc_span span;
    bxc_attr_list attrs;
    const char *doc;           /* its `///` lines, joined by '\n', or NULL */
    bool is_pub;
    bxc_ident name;            /* not for USE / IMPL */
    union {
        struct {
            bxc_use_kind kind;
            bxc_path *module_path;       /* the module part */
            bxc_ident_list names;        /* imported names */
            struct bxc_module *module;   /* resolved by module.c, or NULL */
        } use_;
        struct { bxc_generic_list generics; bxc_tyexpr *type; } alias;
        struct {
            bxc_generic_list generics;
            bool is_tuple;               /* `struct S(A, B);` */
            bool is_unit;                /* `struct S;` */
            bxc_field_list fields;
        } struct_;
        struct { bxc_generic_list generics; bxc_variant_list variants; } enum_;
        bxc_fn *fn;
        struct {
            bxc_generic_list generics;
            bxc_tyexpr_list supertraits; /* `: Backend + X` */
            bxc_fn_list methods;
            /* checker: `#[backend_extension]`'s selectors (above), or NULL */
            const struct bxc_trait_selectors *selectors;
        } trait;
        struct {
            bxc_generic_list generics;
            bxc_tyexpr *trait_ty;        /* NULL for an inherent impl */
            bxc_tyexpr *self_ty;
            bxc_fn_list methods;
        } impl;
    };
};

/* The checker's record of a trait's `#[backend_extension(..)]`, kept on the
 * trait (item->trait.selectors) also when a `#[cfg]` switches the trait off
 * (the generator still emits it, under `#if`): the selectors in the order
 * written, each once. */
typedef struct bxc_selector_use {
    uint32_t index;              /* check_internal.h CHK_SEL_* (bext.h backends, then layers) */
    const char *name;            /* as written */
    const bxc_attr_arg *cfg;     /* `Sel: cfg(..)`: that `cfg(..)` argument, else NULL */
} bxc_selector_use;

typedef struct bxc_trait_selectors {
    bxc_selector_use *items;
    uint32_t len;
    const bxc_attr_arg *bad;     /* the first argument that is no selector, or NULL */
} bxc_trait_selectors;

/* The checker's record of one backend-extension trait method
 * (bxc_fn.method), filled once from its signature and attributes, so the
 * C generator, the interpreter (`:meta`, `:scalars`), the REPL and the
 * language server read the same facts instead of re-reading the syntax.
 * Kept also for a method a `#[cfg]` switches off (`active` false): its C
 * is generated under `#if`, so its signature and attributes are read (no
 * diagnostics: the checker does not check it as code), but its metadata
 * expressions carry no types.  Arena memory of the unit. */
typedef enum bxc_fusion_form {
    BXC_FUSION_NONE,      /* no form, or an invalid one (reported) */
    BXC_FUSION_FIELDS,    /* `dtype = e, shape = e` */
    BXC_FUSION_META,      /* `meta = callable` */
    BXC_FUSION_DEFAULT,   /* `default`: the default body, run lazily */
} bxc_fusion_form;

/* How an argument is exposed to fusion optimizers (language.md §4). */
typedef enum bxc_scalar_kind {
    BXC_SCALAR_NONE,      /* a tensor, an extension value, or not exposed */
    BXC_SCALAR_INFERRED,  /* an integer, f32, f64 or bool written as such (not borrowed, no alias) */
    BXC_SCALAR_MARKED,    /* `#[fusion(scalar)]` on it, on its alias or on its struct / enum */
    BXC_SCALAR_CUSTOM,    /* `#[fusion(scalar = e)]`: `encoding` */
} bxc_scalar_kind;

typedef enum bxc_arg_class {
    BXC_ARG_TENSOR,       /* a tensor (owned or borrowed) */
    BXC_ARG_EXT,          /* an extension value (#[derive(ExtensionType)]) */
    BXC_ARG_ORDINARY,     /* anything else: hashed into the op's key */
    BXC_ARG_BAD,          /* a receiver, or a type that did not resolve */
} bxc_arg_class;

typedef struct bxc_method_param {
    const bxc_param *p;
    const char *name;             /* as written; "_" for a pattern */
    struct bxc_type *type;        /* as declared (references kept); the error type when unresolved */
    struct bxc_type *base;        /* references stripped */
    bool borrowed;                /* `&T` */
    bxc_arg_class cls;
    bxc_scalar_kind scalar;
    const bxc_attr_arg *encoding; /* CUSTOM: the `scalar = e` argument (e is its value) */
} bxc_method_param;

/* How a scalar's value is read from its argument (language.md §4). */
typedef enum bxc_scalar_read {
    BXC_SCALAR_READ_VALUE,      /* the argument itself: an integer, f32, f64 or bool */
    BXC_SCALAR_READ_TAG,        /* a unit-only enum: its variant's index, a u32 */
    BXC_SCALAR_READ_FIELD,      /* a one-field struct: that field */
    BXC_SCALAR_READ_ENCODING,   /* CUSTOM: the value of its `scalar = e` */
    BXC_SCALAR_READ_NONE,       /* a marked type that converts to no scalar (reported, E0508) */
} bxc_scalar_read;

/* One scalar a method exposes to fusion optimizers: the list the
 * generator's `scalars` member, `:scalars` and the server's hover read. */
typedef struct bxc_method_scalar {
    uint32_t param;               /* its argument: params[param] */
    bxc_scalar_kind kind;         /* INFERRED, MARKED or CUSTOM */
    bxc_scalar_read read;
    struct bxc_type *type;        /* the scalar's type (an integer, float or bool); NULL for READ_NONE
                                   * and for an encoding the checker did not type (a method switched off) */
} bxc_method_scalar;

typedef struct bxc_method_rec {
    const struct bxc_item *trait;
    const bxc_fn *fn;
    struct bxc_module *module;    /* declaring module (names in its metadata code) */
    bool active;                  /* false: a `#[cfg]` switches it or its trait off */
    bxc_fusion_form form;
    const bxc_attr_arg *dtype, *shape, *meta;   /* the form's arguments (FIELDS / META) */
    const char *op_id;            /* `#[fusion(id = "..")]`, else the method's name */
    bxc_span op_id_span;          /* where it is written */
    const bxc_attr *backward;     /* `#[backward(x = f, ..)]` (formulas), or NULL */
    bool backward_manual;         /* `#[backward(manual)]` */
    bxc_method_param *params;
    uint32_t nparams;
    struct bxc_type *ret;         /* the output (`()` when none; the error type when unresolved) */
    uint32_t in_slots, out_slots; /* routing slots: tensors in the arguments, in the output */
    bxc_method_scalar *scalars;   /* the scalars it exposes, in declaration order */
    uint32_t nscalars;
} bxc_method_rec;

const char *bxc_fusion_form_name(bxc_fusion_form f);   /* "dtype/shape", "meta", "default", "none" */
const char *bxc_scalar_kind_name(bxc_scalar_kind k);   /* "inferred", "marked", "custom", "none" */
const char *bxc_scalar_read_name(bxc_scalar_read r);   /* "value", "variant index", "field", "encoding", "none" */

/* One parsed file (or REPL input). */
typedef struct bxc_file {
    uint32_t file_id;
    bxc_item_list items;
    /* REPL mode only: the statements and value expression typed. */
    bxc_block *repl;
} bxc_file;

/* ---- builders (ast.c) --------------------------------------------------- */

bxc_ident bxc_ast_ident(bxc_arena *a, const char *text, bxc_span span);
bxc_path *bxc_ast_path1(bxc_arena *a, bxc_ident first);
bxc_path *bxc_ast_path_push(bxc_arena *a, bxc_path *p, bxc_ident next);
bxc_expr *bxc_ast_expr(bxc_arena *a, bxc_expr_kind kind, bxc_span span);
bxc_stmt *bxc_ast_stmt(bxc_arena *a, bxc_stmt_kind kind, bxc_span span);
bxc_item *bxc_ast_item(bxc_arena *a, bxc_item_kind kind, bxc_span span);
bxc_tyexpr *bxc_ast_tyexpr(bxc_arena *a, bxc_tyexpr_kind kind, bxc_span span);
bxc_pat *bxc_ast_pat(bxc_arena *a, bxc_pat_kind kind, bxc_span span);
/* Recomputes e->depth from its children (call after filling a node). */
uint32_t bxc_ast_expr_update_depth(bxc_expr *e);

const char *bxc_binop_str(bxc_binop op);   /* "+", "&&", "="(NONE) */
const char *bxc_unop_str(bxc_unop op);     /* "-", "!", "*", "&", "&mut" */
const char *bxc_expr_kind_name(bxc_expr_kind k);

/* `p` is the single segment `name` (`#[cube]`, `scalar = ..`): the one test
 * the checker and the generator use for attribute names and keys. */
bool bxc_path_is(const bxc_path *p, const char *name);
/* `#[backward(manual)]`: the method's Autodiff implementation is
 * hand-written (language.md §6).  One predicate for the checker, which
 * then skips the formula rules and the W0303 reminder, and the generator,
 * which then references the user's `_autodiff` instead of generating one. */
bool bxc_attr_is_backward_manual(const bxc_attr *a);

/* The node at byte `offset` of a parsed file (ast_at.c): the innermost
 * expression holding it — its `ty` and `res` are the checker's answers
 * (after bxc_check_unit) — and the item and fn around it (NULL where none;
 * an offset in a `#[fusion(..)]` argument finds its expression and the
 * method).  False when no item holds the offset.  The base of hover and
 * go-to-definition: nothing is resolved here. */
typedef struct bxc_node_at {
    const bxc_item *item;
    const bxc_fn *fn;
    const bxc_expr *expr;
} bxc_node_at;
bool bxc_ast_node_at(const bxc_file *file, uint32_t offset, bxc_node_at *out);

/* Calls fn(ctx, e) on every expression of a parsed file, parents before
 * children, in source order: bodies, default bodies, attribute arguments
 * (ast_walk.c).  Missing children of a broken tree are skipped. */
typedef void (*bxc_expr_visit_fn)(void *ctx, const bxc_expr *e);
void bxc_ast_each_expr(const bxc_file *file, bxc_expr_visit_fn fn, void *ctx);

/* --dump-ast: a stable indented S-expression, one node per line. */
void bxc_ast_dump(FILE *out, const bxc_file *file);
void bxc_ast_dump_expr(FILE *out, const bxc_expr *e, int indent);
void bxc_ast_dump_item(FILE *out, const bxc_item *it, int indent);

#endif
