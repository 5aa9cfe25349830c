/* types.h — the checker's semantic types (language.md §2, §7).
 *
 * The checker records one of these on every expression (bxc_expr.ty), type
 * expression (bxc_tyexpr.ty) and pattern (bxc_pat.ty), so the interpreter,
 * the code generators and the REPL's `:type` read the same answer.
 *
 * Representation: primitive types (unit, bool, each integer and float
 * type, Shape, DType, TensorSpec, each tensor kind, the error and never
 * types) are static singletons, so they compare by pointer and need no
 * arena.  Composite types (references, tuples, function types, ranges) and
 * declarations (structs, enums, generated metadata companions) live in the
 * compilation's arena; `&T` / `&mut T` are interned on their target, other
 * composites compare structurally (bxc_type_equal).  Aliases are resolved
 * away: `type Amount = f32;` makes `Amount` the f32 singleton.
 *
 * Integer and float literals start as inference variables (BXC_TYPE_VAR)
 * that unify with the first integer (float) type their context needs, as
 * in Rust.  When the checker finishes a body it replaces every variable by
 * its resolution on the recorded types; a literal that nothing constrains
 * defaults to i64 (integers) or f64 (floats) — i64 rather than Rust's i32
 * because metadata code mostly counts elements and dimensions.  So the
 * recorded types never contain BXC_TYPE_VAR once bxc_check_unit (or
 * bxc_check_repl_expr) returns.
 */
#ifndef BXC_TYPES_H
#define BXC_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "builtins.h"
#include "source.h"

struct bxc_item;
struct bxc_module;

/* ORDER BXC_TYPE_KIND: bxc_type_kind_name in types.c. */
typedef enum bxc_type_kind {
    BXC_TYPE_ERROR,    /* after a reported error: unifies with anything, so
                          one mistake is reported once */
    BXC_TYPE_NEVER,    /* `return`, `break`, `panic(..)`: yields no value */
    BXC_TYPE_UNIT,     /* `()` */
    BXC_TYPE_BOOL,
    BXC_TYPE_INT,      /* int_kind */
    BXC_TYPE_FLOAT,    /* float_kind */
    BXC_TYPE_STR,      /* a string literal (`panic("..")`, ids) */
    BXC_TYPE_SHAPE,
    BXC_TYPE_DTYPE,
    BXC_TYPE_SPEC,     /* TensorSpec { shape: Shape, dtype: DType } */
    BXC_TYPE_TENSOR,   /* tensor_kind; `<Self>` / `<B>` arguments ignored */
    BXC_TYPE_REF,      /* ref.inner, ref.is_mut */
    BXC_TYPE_TUPLE,    /* tuple.elems (n >= 1; `()` is UNIT) */
    BXC_TYPE_STRUCT,   /* decl */
    BXC_TYPE_ENUM,     /* decl */
    BXC_TYPE_FN,       /* fn.params, fn.ret: helper fns and closures as values */
    BXC_TYPE_RANGE,    /* range_elem: `a..b` (only in `for`) */
    BXC_TYPE_VAR,      /* literal inference variable (see above) */
    BXC_TYPE_GENERIC,  /* a type parameter `T` of a generic signature */
    BXC_TYPE_KIND_COUNT
} bxc_type_kind;

/* The rows of builtins.h's BXC_INT_KINDS; value.h's BxvIntType is made
 * from the same table, so the interpreter converts with a cast. */
typedef enum bxc_int_kind {
#define X(n, s, b, sg, lo, hi, c, g) BXC_##n,
    BXC_INT_KINDS(X)
#undef X
    BXC_INT_KIND_COUNT
} bxc_int_kind;

/* f16 and bf16 are kernel types only (language.md §8): the resolver
 * refuses them outside `#[cube]` functions (check_items.c). */
typedef enum bxc_float_kind { BXC_F32, BXC_F64, BXC_F16, BXC_BF16, BXC_FLOAT_KIND_COUNT } bxc_float_kind;

/* ORDER: bxc_tensor_kind_name. */
typedef enum bxc_tensor_kind {
    BXC_TENSOR_FLOAT, BXC_TENSOR_INT, BXC_TENSOR_BOOL, BXC_TENSOR_QUANTIZED,
    BXC_TENSOR_KIND_COUNT
} bxc_tensor_kind;

typedef struct bxc_type bxc_type;

/* A field of a struct, of a struct variant, or a positional field of a
 * tuple variant / tuple struct (name NULL). */
typedef struct bxc_type_field {
    const char *name;
    bxc_type *type;
    bool is_ext;          /* marked `#[extension_type]` (nested extension) */
    bxc_span span;
} bxc_type_field;

typedef enum bxc_variant_shape {
    BXC_VSHAPE_UNIT, BXC_VSHAPE_TUPLE, BXC_VSHAPE_STRUCT
} bxc_variant_shape;

typedef struct bxc_type_variant {
    const char *name;
    bxc_variant_shape shape;
    bxc_type_field *fields;
    uint32_t nfields;
    bxc_span span;
} bxc_type_variant;

/* A struct or enum: user-declared, or the `NameMetadata` companion that
 * `#[extension_type(fusion)]` generates (item NULL, metadata_of set). */
typedef struct bxc_type_decl {
    const char *name;
    bool is_enum;
    bool is_tuple_struct;             /* `struct S(A, B);` */
    struct bxc_item *item;            /* NULL for generated companions */
    struct bxc_module *module;        /* where it is declared */
    bxc_span span;                    /* the name (companions: the source's) */
    bool is_extension;                /* `#[derive(ExtensionType)]` */
    bool fusion_scalar;               /* `#[fusion(scalar)]` */
    bxc_type *metadata;               /* companion, or NULL if none */
    bxc_type *metadata_of;            /* companion: its extension type */
    bool resolved;                    /* field types are known */
    bxc_type_field *fields;           /* structs */
    uint32_t nfields;
    bxc_type_variant *variants;       /* enums */
    uint32_t nvariants;
} bxc_type_decl;

struct bxc_type {
    bxc_type_kind kind;
    union {
        bxc_int_kind int_kind;
        bxc_float_kind float_kind;
        bxc_tensor_kind tensor_kind;
        struct { bxc_type *inner; bool is_mut; } ref;
        struct { bxc_type **elems; uint32_t n; } tuple;
        bxc_type_decl *decl;
        struct { bxc_type **params; uint32_t nparams; bxc_type *ret; } fn;
        bxc_type *range_elem;
        struct { bool is_float; bxc_type *link; } var;  /* link: resolution */
        const char *generic_name;
    };
    bxc_type *ref_cache[2];   /* interned `&T`, `&mut T` of this type */
};

/* ---- constructors ------------------------------------------------------ */

bxc_type *bxc_type_error(void);
bxc_type *bxc_type_never(void);
bxc_type *bxc_type_unit(void);
bxc_type *bxc_type_bool(void);
bxc_type *bxc_type_str(void);
bxc_type *bxc_type_shape(void);
bxc_type *bxc_type_dtype(void);
bxc_type *bxc_type_spec(void);
bxc_type *bxc_type_int(bxc_int_kind k);
bxc_type *bxc_type_float(bxc_float_kind k);
bxc_type *bxc_type_tensor(bxc_tensor_kind k);
bxc_type *bxc_type_ref(bxc_arena *a, bxc_type *inner, bool is_mut);
/* n == 0 gives unit; `elems` is copied. */
bxc_type *bxc_type_tuple(bxc_arena *a, bxc_type *const *elems, uint32_t n);
bxc_type *bxc_type_fn(bxc_arena *a, bxc_type *const *params, uint32_t n, bxc_type *ret);
bxc_type *bxc_type_range(bxc_arena *a, bxc_type *elem);
bxc_type *bxc_type_var(bxc_arena *a, bool is_float);
bxc_type *bxc_type_generic(bxc_arena *a, const char *name);
bxc_type *bxc_type_decl_type(bxc_arena *a, bxc_type_decl *decl);

/* ---- queries ------------------------------------------------------------ */

/* Follows inference-variable links (shallow). */
bxc_type *bxc_type_resolve(bxc_type *t);
/* Deep copy with every variable replaced by its resolution or default. */
bxc_type *bxc_type_zonk(bxc_arena *a, bxc_type *t);
/* Structural equality after resolution (ERROR equals anything). */
bool bxc_type_equal(bxc_type *a, bxc_type *b);
/* `&&T` -> `T`. */
bxc_type *bxc_type_strip_refs(bxc_type *t);

bool bxc_type_is_error(bxc_type *t);
bool bxc_type_is_int(bxc_type *t);      /* INT or an integer variable */
bool bxc_type_is_float(bxc_type *t);    /* FLOAT or a float variable */
bool bxc_type_is_numeric(bxc_type *t);
/* The types exposed to fusion optimizers as scalars: integers, f32, f64, bool. */
bool bxc_type_is_scalar(bxc_type *t);
bool bxc_type_is_tensor(bxc_type *t);
/* A tensor, an extension type, or a tuple holding one (after refs). */
bool bxc_type_has_tensors(bxc_type *t);
bool bxc_type_is_extension(bxc_type *t);

const char *bxc_int_kind_name(bxc_int_kind k);      /* "usize" */
const char *bxc_float_kind_name(bxc_float_kind k);  /* "f32" */
const char *bxc_tensor_kind_name(bxc_tensor_kind k);/* "FloatTensor" */
/* The singleton type a builtins.h builtin type row names. */
bxc_type *bxc_type_builtin(const bxc_builtin_type *bt);
bool bxc_int_kind_signed(bxc_int_kind k);
const char *bxc_type_kind_name(bxc_type_kind k);

/* Field lookup in a struct decl (or a struct variant); NULL if absent. */
bxc_type_field *bxc_type_decl_field(bxc_type_decl *d, const char *name);
bxc_type_variant *bxc_type_decl_variant(bxc_type_decl *d, const char *name);

/* ---- printing ----------------------------------------------------------- */

/* Rust spelling: `usize`, `&Shape`, `(TensorSpec, u32)`, `fn(&Shape) -> Shape`,
 * `InnerMetadata`, `{integer}` for an unresolved literal.  snprintf
 * semantics: writes at most cap bytes (NUL included) and returns the full
 * length. */
size_t bxc_type_print(char *buf, size_t cap, const bxc_type *t);
/* The same into the arena. */
const char *bxc_type_name(bxc_arena *a, const bxc_type *t);

#endif
