/* value.h — the metadata interpreter's values (language.md §7).
 *
 * A BxvValue is a small tagged union passed by value.  Everything it points
 * to (shape dimensions, tuple items, struct fields, strings) lives in a
 * bxc_arena: the interpreter evaluates each expression in a scratch arena
 * that is emptied afterwards (bxc_arena_free_all), and whatever must outlive
 * the evaluation (a REPL binding, a result handed to a caller) is
 * deep-copied with bxv_copy into an arena that the owner keeps.  Nothing in here prints or exits; printing goes
 * to a caller-supplied buffer.
 *
 * Values have value semantics: assignment and binding copy (bxv_copy), so a
 * mutation through one variable is never visible through another.  The
 * language has no `&mut`, so a reference `&x` can never be used to mutate x;
 * a reference is therefore represented as a copy of its target that carries
 * a reference depth (`refs`), which `*x` strips again and which only shows in
 * type names.
 */
#ifndef BEXT_VALUE_H
#define BEXT_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "builtins.h"

/* ---- integer and float types ----------------------------------------- */

/* The integer kinds of builtins.h's BXC_INT_KINDS (names, bounds), in its
 * order, then ILIT: an unsuffixed literal not yet given a type. */
typedef enum BxvIntType {
#define X(n, s, b, sg, lo, hi, c, g) BXV_##n,
    BXC_INT_KINDS(X)
#undef X
    BXV_ILIT,
    BXV_INT_TYPE_COUNT
} BxvIntType;

typedef enum BxvFloatType { BXV_F32, BXV_F64, BXV_FLIT } BxvFloatType;

/* ORDER BXV_DTYPE: names and sizes in value.c follow this order. */
#define BXV_DTYPES(X) \
    X(F32, "F32", 4) X(F64, "F64", 8) X(F16, "F16", 2) X(BF16, "BF16", 2) \
    X(I32, "I32", 4) X(I64, "I64", 8) X(U8, "U8", 1)  X(BOOL, "Bool", 1)
typedef enum BxvDType {
#define X(n, s, sz) BXV_DT_##n,
    BXV_DTYPES(X)
#undef X
    BXV_DTYPE_COUNT
} BxvDType;

/* ---- values ------------------------------------------------------------ */

typedef enum BxvKind {
    BXV_UNIT,     /* ()                                  */
    BXV_INT,      /* checked integer of a declared type  */
    BXV_FLOAT,
    BXV_BOOL,
    BXV_STR,      /* string literal (panic messages)     */
    BXV_SHAPE,
    BXV_DTYPEV,
    BXV_SPEC,     /* TensorSpec { shape, dtype }         */
    BXV_TUPLE,
    BXV_STRUCT,
    BXV_ENUM,
    BXV_CLOSURE,  /* `|x| ...` — only as a meta value    */
    BXV_FN,       /* a helper fn named as a value        */
} BxvKind;

typedef struct BxvValue BxvValue;

typedef struct BxvShape {
    uint64_t *dims;
    size_t len, cap;
} BxvShape;

/* Closures point into the AST that defined them; the interpreter owns the
 * meaning of `node` and `env` (value.c only copies the pointers). */
typedef struct BxvClosure {
    const void *node;
    void *env;
} BxvClosure;

struct BxvValue {
    BxvKind kind;
    uint8_t refs;                 /* reference depth: &&x -> 2 */
    union {
        struct { __int128 v; BxvIntType ty; } i;
        struct { double v; BxvFloatType ty; } f;
        bool b;
        struct { const char *s; size_t len; } str;
        BxvShape shape;
        BxvDType dtype;
        struct { BxvShape shape; BxvDType dtype; } spec;
        struct { BxvValue *items; size_t n; } tuple;
        /* Struct and enum: `type` is the type name, `variant` the enum
         * variant (NULL for structs); fields are named for brace forms and
         * unnamed (names NULL) for tuple forms. */
        struct {
            const char *type, *variant;
            const char **names;
            BxvValue *fields;
            size_t n;
            bool braces;          /* `V { a: .. }` vs `V(..)` / unit */
        } agg;
        BxvClosure closure;
        /* item: the fn the checker resolved its name to (ast.h bxc_res),
         * NULL when the code was never checked */
        struct { const char *name; const struct bxc_item *item; } fn;
    } u;
};

/* Constructors (no allocation unless noted). */
BxvValue bxv_unit(void);
BxvValue bxv_int(__int128 v, BxvIntType ty);
BxvValue bxv_float(double v, BxvFloatType ty);
BxvValue bxv_bool(bool b);
BxvValue bxv_dtype(BxvDType d);
BxvValue bxv_shape_new(bxc_arena *a, size_t cap);               /* empty */
BxvValue bxv_spec(bxc_arena *a, const BxvShape *s, BxvDType d);  /* copies s */

/* Shape editing (grows in arena `a`). */
void bxv_shape_push(bxc_arena *a, BxvShape *s, uint64_t d);
void bxv_shape_insert(bxc_arena *a, BxvShape *s, size_t at, uint64_t d); /* at <= len */
uint64_t bxv_shape_remove(BxvShape *s, size_t at);                       /* at < len  */

/* Integer types: name, bounds, signedness, and range checking. */
const char *bxv_int_type_name(BxvIntType t);
bool bxv_int_type_signed(BxvIntType t);
bool bxv_int_fits(__int128 v, BxvIntType t);
bool bxv_int_type_from_name(const char *name, size_t len, BxvIntType *out);
const char *bxv_float_type_name(BxvFloatType t);
const char *bxv_dtype_name(BxvDType d);
unsigned bxv_dtype_size(BxvDType d);
bool bxv_dtype_from_name(const char *name, size_t len, BxvDType *out);

/* Decimal text of an integer value (any width up to 128 bits) in `buf`;
 * returns buf. */
const char *bxv_i128_str(char buf[48], __int128 v);

/* Deep copy into `a` (strings, names and arrays included). */
BxvValue bxv_copy(bxc_arena *a, const BxvValue *v);

/* Structural equality (refs ignored; ints compared by value). */
bool bxv_equal(const BxvValue *x, const BxvValue *y);

/* A growable output buffer for printing; malloc-backed. */
typedef struct BxvBuf {
    char *data;
    size_t len, cap;
} BxvBuf;
void bxv_buf_printf(BxvBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void bxv_buf_append(BxvBuf *b, const char *s, size_t len);
void bxv_buf_free(BxvBuf *b);

/* Rust Debug style: `[6, 3]`, `F32`, `TensorSpec { shape: [3, 2], dtype: F32 }`,
 * `CountedMetadata { tensor: ..., count: 6 }`, `(1, true)`, `1.0`. */
void bxv_print(BxvBuf *b, const BxvValue *v);
/* The dynamic type of a value: `Shape`, `&Shape`, `usize`, `(u32, bool)`. */
void bxv_print_type(BxvBuf *b, const BxvValue *v);

#endif
