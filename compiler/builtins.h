/* builtins.h — the language's builtin names, one table per concept
 * (language.md §2, §7): integer kinds, builtin type names, and the builtin
 * methods of Shape and DType.  The checker, the interpreter, the REPL and
 * the C generator read these tables; none keeps its own list of the names.
 * Adding a row here is the whole change for the checker; the interpreter
 * (interp_eval.c) and the generator (emit_meta.c) switch on the method id,
 * and codegen/unit fails until the row has a helper in
 * tests/codegen/ext/builtins.bext that both evaluate alike.
 *
 * This header includes no other compiler header: types.h and value.h
 * generate their integer enums from BXC_INT_KINDS. */
#ifndef BXC_BUILTINS_H
#define BXC_BUILTINS_H

#include <stdbool.h>
#include <stdint.h>

/* X(NAME, "name", bits, signed, min, max, "C type", "generated-code kind")
 *   NAME    pasted into bxc_int_kind (BXC_I8, types.h) and BxvIntType
 *           (BXV_I8, value.h).
 *   bits    width; isize/usize are 64 bits (bext targets 64-bit hosts).
 *   min,max the range, as int64_t / uint64_t.
 *   C type  what the generator declares a value of the kind as.
 *   gen     the kind's constant in runtime/include/bext/gen.h.
 * ORDER BXC_INT_KIND: signed kinds first (bxc_int_kind_signed relies on it
 * only through the signed column), ILIT follows in value.h. */
#define BXC_INT_KINDS(X)                                                                    \
    X(I8,    "i8",    8,  true,  INT8_MIN,  INT8_MAX,   "int8_t",    "BEXT_GEN_I8")          \
    X(I16,   "i16",   16, true,  INT16_MIN, INT16_MAX,  "int16_t",   "BEXT_GEN_I16")         \
    X(I32,   "i32",   32, true,  INT32_MIN, INT32_MAX,  "int32_t",   "BEXT_GEN_I32")         \
    X(I64,   "i64",   64, true,  INT64_MIN, INT64_MAX,  "int64_t",   "BEXT_GEN_I64")         \
    X(ISIZE, "isize", 64, true,  INT64_MIN, INT64_MAX,  "ptrdiff_t", "BEXT_GEN_ISIZE")       \
    X(U8,    "u8",    8,  false, 0,         UINT8_MAX,  "uint8_t",   "BEXT_GEN_U8")          \
    X(U16,   "u16",   16, false, 0,         UINT16_MAX, "uint16_t",  "BEXT_GEN_U16")         \
    X(U32,   "u32",   32, false, 0,         UINT32_MAX, "uint32_t",  "BEXT_GEN_U32")         \
    X(U64,   "u64",   64, false, 0,         UINT64_MAX, "uint64_t",  "BEXT_GEN_U64")         \
    X(USIZE, "usize", 64, false, 0,         UINT64_MAX, "size_t",    "BEXT_GEN_USIZE")

typedef struct bxc_int_info {
    const char *name;   /* "u32" */
    uint8_t bits;
    bool is_signed;
    int64_t min;
    uint64_t max;
    const char *ctype;  /* "uint32_t" */
    const char *gen;    /* "BEXT_GEN_U32" */
} bxc_int_info;

/* Indexed by bxc_int_kind (== BxvIntType below BXV_ILIT). */
extern const bxc_int_info bxc_int_kinds[];
/* The kind named by the `len` bytes at `name` (a type name or a literal
 * suffix), or -1. */
int bxc_int_kind_find(const char *name, uint32_t len);

/* X("name", KIND, sub)
 *   KIND  the bxc_type_kind it names, without BXC_TYPE_ (types.h);
 *   sub   the tensor / float kind for TENSOR / FLOAT, else 0.
 * The integer kinds are builtin types too and come from BXC_INT_KINDS
 * (bxc_builtin_types lists them between bool and f32).  Tensor types
 * accept and ignore type arguments (`FloatTensor<B>`). */
#define BXC_BUILTIN_TYPES_HEAD(X)                                                             \
    X("FloatTensor", TENSOR, BXC_TENSOR_FLOAT) X("IntTensor", TENSOR, BXC_TENSOR_INT)        \
    X("BoolTensor", TENSOR, BXC_TENSOR_BOOL) X("QuantizedTensor", TENSOR, BXC_TENSOR_QUANTIZED) \
    X("Shape", SHAPE, 0) X("DType", DTYPE, 0) X("TensorSpec", SPEC, 0) X("bool", BOOL, 0)
#define BXC_BUILTIN_TYPES_TAIL(X) \
    X("f32", FLOAT, BXC_F32) X("f64", FLOAT, BXC_F64) X("f16", FLOAT, BXC_F16) X("bf16", FLOAT, BXC_BF16)

typedef struct bxc_builtin_type {
    const char *name;
    uint8_t kind;   /* bxc_type_kind */
    uint8_t sub;    /* bxc_tensor_kind, bxc_float_kind or bxc_int_kind */
} bxc_builtin_type;

extern const bxc_builtin_type bxc_builtin_types[];
extern const uint32_t bxc_builtin_type_count;
/* The builtin type named `name`, or NULL. */
const bxc_builtin_type *bxc_builtin_type_find(const char *name);

/* X(ID, RECV, "name", nparams, mutates, RET)
 *   ID       pasted into bxc_builtin_method (BXC_BM_SHAPE_LEN), the id the
 *            interpreter and the generator switch on.
 *   RECV     the receiver's bxc_type_kind without BXC_TYPE_.
 *   nparams  every parameter is a usize.
 *   mutates  needs a mutable place (`s.push(2)`).
 *   RET      bxc_builtin_ret without BXC_BRET_: the result type.
 * `clone` works on every value and is not a row (check_method).
 * ORDER: none — looked up by receiver and name. */
#define BXC_BUILTIN_METHODS(X)                                   \
    X(SHAPE_LEN,          SHAPE, "len",          0, false, USIZE) \
    X(SHAPE_NUM_ELEMENTS, SHAPE, "num_elements", 0, false, USIZE) \
    X(SHAPE_SWAP,         SHAPE, "swap",         2, true,  UNIT)  \
    X(SHAPE_PUSH,         SHAPE, "push",         1, true,  UNIT)  \
    X(SHAPE_POP,          SHAPE, "pop",          0, true,  USIZE) \
    X(SHAPE_INSERT,       SHAPE, "insert",       2, true,  UNIT)  \
    X(SHAPE_REMOVE,       SHAPE, "remove",       1, true,  USIZE) \
    X(DTYPE_IS_FLOAT,     DTYPE, "is_float",     0, false, BOOL)  \
    X(DTYPE_IS_INT,       DTYPE, "is_int",       0, false, BOOL)  \
    X(DTYPE_IS_BOOL,      DTYPE, "is_bool",      0, false, BOOL)  \
    X(DTYPE_SIZE,         DTYPE, "size",         0, false, USIZE)

typedef enum bxc_builtin_method {
    BXC_BM_NONE = -1,
#define X(id, r, s, n, m, ret) BXC_BM_##id,
    BXC_BUILTIN_METHODS(X)
#undef X
    BXC_BM_COUNT
} bxc_builtin_method;

typedef enum bxc_builtin_ret { BXC_BRET_UNIT, BXC_BRET_USIZE, BXC_BRET_BOOL } bxc_builtin_ret;

typedef struct bxc_builtin_method_info {
    const char *name;
    uint8_t recv;      /* bxc_type_kind */
    uint8_t nparams;
    bool mutates;
    bxc_builtin_ret ret;
} bxc_builtin_method_info;

/* Indexed by bxc_builtin_method. */
extern const bxc_builtin_method_info bxc_builtin_methods[BXC_BM_COUNT];
/* The builtin method `name` of receivers of type kind `recv`, or BXC_BM_NONE. */
bxc_builtin_method bxc_builtin_method_find(unsigned recv, const char *name);
/* Whether `name` is a mutating builtin method of some receiver: the
 * interpreter evaluates such a receiver as a place. */
bool bxc_builtin_method_mutates(const char *name);

/* X(ID, "name", "C constant"): the `DType::X` constants (language.md §7)
 * and the runtime's bext_dtype each generated value takes (bext.h).  The
 * checker resolves `DType::F32` to its row (BXC_RES_DTYPE, index). */
#define BXC_DTYPE_CONSTS(X)                                                        \
    X(F32, "F32", "BEXT_F32") X(F64, "F64", "BEXT_F64") X(F16, "F16", "BEXT_F16") \
    X(BF16, "BF16", "BEXT_BF16") X(I32, "I32", "BEXT_I32") X(I64, "I64", "BEXT_I64") \
    X(U8, "U8", "BEXT_U8") X(BOOL, "Bool", "BEXT_BOOL")

typedef enum bxc_dtype_const {
#define X(id, s, c) BXC_DT_##id,
    BXC_DTYPE_CONSTS(X)
#undef X
    BXC_DT_COUNT
} bxc_dtype_const;

/* Indexed by bxc_dtype_const. */
extern const char *const bxc_dtype_const_names[BXC_DT_COUNT];
extern const char *const bxc_dtype_const_c[BXC_DT_COUNT];

#endif
