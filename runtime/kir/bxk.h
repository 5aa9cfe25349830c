/* bxk.h — the kernel IR (prefix bxk_): one typed, structured IR for every
 * kernel, whether it comes from a `#[cube]` function (docs/language.md §8)
 * or from Fusion's generated elementwise chains, and every lowering (LLVM
 * for the CPU, CUDA C through NVRTC; HIP C and SPIR-V later) reads it.
 *
 * Shape of the IR (docs/kernels.md has the full description):
 *   - a kernel declares bindings (tensors: element type, mutability),
 *     scalar parameters, shared-memory arrays and mutable locals;
 *   - its body is a block: a list of instructions.  Every value is defined
 *     once (SSA) by one instruction; mutable state lives in locals (get/set)
 *     so structured control flow needs no phis;
 *   - control flow is structured: `if` (two blocks), `for` (a range with a
 *     constant positive step, the induction value is visible in the body),
 *     `loop` (until `break`), `break`, `continue`, `return` (ends the unit);
 *     a value is visible in the block that defines it and in the blocks
 *     nested in it, after its definition.
 *
 * Everything a kernel owns lives in one arena and dies with
 * bxk_kernel_free.  Library code never prints and never aborts on bad
 * input: the builder records what it is given, the verifier (kir_verify.c)
 * reports every problem as data (struct bxk_diags), and every consumer
 * (printer, serializer, lowerings) runs on verified kernels only, except
 * the printer, which prints anything. */
#ifndef BXK_H
#define BXK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BXK_FUNC __attribute__((visibility("hidden"))) extern

/* ----------------------------------------------------------------- types */
/* X(ENUM, spelling, bits, kind).  ORDER TYPE: the serialized form stores
 * the enum value, so new types go at the end (bf16 came in format version
 * 2; vector width is the planned extension: a lane count next to the
 * type, not new enum rows).  f16 and bf16 compute in f32 and round after
 * every op (bxk_scalar.h). */
#define BXK_TYPES(X)    \
  X(VOID, void, 0, 0)   \
  X(BOOL, bool, 1, 1)   \
  X(U8, u8, 8, 2)       \
  X(I32, i32, 32, 3)    \
  X(U32, u32, 32, 2)    \
  X(I64, i64, 64, 3)    \
  X(F16, f16, 16, 4)    \
  X(F32, f32, 32, 4)    \
  X(F64, f64, 64, 4)    \
  X(BF16, bf16, 16, 4)

enum bxk_type {
#define BXK_X_(E, s, b, k) BXK_##E,
  BXK_TYPES(BXK_X_)
#undef BXK_X_
  BXK_TYPE_COUNT
};

/* The type of every index, length, shape, stride and topology value. */
#define BXK_INDEX BXK_U32

BXK_FUNC const char *bxk_type_name(unsigned t);  /* "?" when out of range */
BXK_FUNC unsigned bxk_type_bits(unsigned t);
BXK_FUNC bool bxk_type_is_float(unsigned t);
BXK_FUNC bool bxk_type_is_int(unsigned t);      /* u8 i32 u32 i64 */
BXK_FUNC bool bxk_type_is_signed(unsigned t);   /* i32 i64 */
/* f16 or bf16: 16-bit storage, f32 arithmetic rounded after every op. */
BXK_FUNC bool bxk_type_is_half(unsigned t);

/* ------------------------------------------------------------ topology */
/* X(ENUM, spelling).  ORDER TOPO (serialized).  UNIT_* vary between the
 * units of a cube; ABSOLUTE_* too; CUBE_* are the same for all its units. */
#define BXK_TOPOS(X)                                             \
  X(ABSOLUTE_POS, ABSOLUTE_POS) X(ABSOLUTE_POS_X, ABSOLUTE_POS_X) \
  X(ABSOLUTE_POS_Y, ABSOLUTE_POS_Y) X(ABSOLUTE_POS_Z, ABSOLUTE_POS_Z) \
  X(UNIT_POS, UNIT_POS) X(UNIT_POS_X, UNIT_POS_X)                 \
  X(UNIT_POS_Y, UNIT_POS_Y) X(UNIT_POS_Z, UNIT_POS_Z)             \
  X(CUBE_POS, CUBE_POS) X(CUBE_POS_X, CUBE_POS_X)                 \
  X(CUBE_POS_Y, CUBE_POS_Y) X(CUBE_POS_Z, CUBE_POS_Z)             \
  X(CUBE_DIM, CUBE_DIM) X(CUBE_DIM_X, CUBE_DIM_X)                 \
  X(CUBE_DIM_Y, CUBE_DIM_Y) X(CUBE_DIM_Z, CUBE_DIM_Z)             \
  X(CUBE_COUNT, CUBE_COUNT) X(CUBE_COUNT_X, CUBE_COUNT_X)         \
  X(CUBE_COUNT_Y, CUBE_COUNT_Y) X(CUBE_COUNT_Z, CUBE_COUNT_Z)

enum bxk_topo {
#define BXK_X_(E, s) BXK_TOPO_##E,
  BXK_TOPOS(BXK_X_)
#undef BXK_X_
  BXK_TOPO_COUNT
};
BXK_FUNC const char *bxk_topo_name(unsigned t);
BXK_FUNC bool bxk_topo_varies(unsigned t);   /* differs between units of a cube */

/* ------------------------------------------------------------------- ops */
#include "bxk_ops.h"

/* --------------------------------------------------------------- values */
typedef uint32_t bxk_val;   /* 0: no value; ids are 1, 2, ... */

/* A constant's payload: ints sign- or zero-extended to 64 bits by their
 * type, floats as the double of the (already rounded) value, bool 0/1. */
union bxk_lit {
  int64_t i;
  uint64_t u;
  double f;
};

/* Where an instruction came from: {file, offset, length} into the .bext
 * source (the front end's locations), all 0 for generated kernels. */
struct bxk_loc {
  uint32_t file, off, len;
};

struct bxk_block;

struct bxk_inst {
  struct bxk_inst *next;
  uint8_t op;              /* enum bxk_op */
  uint8_t type;            /* result type (store/if/...: void; cast: target) */
  bxk_val res;             /* the value defined, or 0 */
  bxk_val arg[3];          /* operands, bxk_op_nargs(op) of them */
  union bxk_lit imm;       /* const payload, or binding/scalar/shared/local/topo index */
  struct bxk_block *blk[2];/* if: then, else; for/loop: body */
  struct bxk_loc loc;
};

struct bxk_block {
  struct bxk_inst *first, *last;
  uint32_t n;
};

/* A tensor the kernel reads or writes.  rank 0: any rank. */
struct bxk_binding {
  uint8_t elem;            /* enum bxk_type, not void */
  bool mut;                /* &mut: stores allowed */
  uint8_t rank;
};

struct bxk_shared {
  uint8_t elem;
  uint32_t count;          /* elements, per cube */
};

struct bxk_kernel {
  struct bxk_arena *arena;
  char *name;
  struct bxk_binding *bind; uint32_t nbind, cap_bind;
  uint8_t *scalar; uint32_t nscalar, cap_scalar;     /* scalar parameter types */
  struct bxk_shared *shared; uint32_t nshared, cap_shared;
  uint8_t *local; uint32_t nlocal, cap_local;        /* local types */
  struct bxk_block body;
  uint32_t nval;           /* values are 1..nval */
  uint8_t *vtype; uint32_t cap_vtype;                /* builder's view: type of each value */
  bool oom;                /* an allocation failed: the kernel is unusable */
};

/* ---------------------------------------------------------- diagnostics */
/* X(ENUM, CODE, "one-line description").  Every problem the verifier, the
 * deserializer and the lowerings report has one code; messages say what
 * was expected and what was found, naming the value or binding.  CODE is
 * a bare token (stringized for bxk_err_code); the description is what
 * `bextc --explain CODE` prints.  ORDER: append only (codes are stable). */
#define BXK_ERRORS(X)                                         \
  X(OOM, K0001, "out of memory") \
  X(UNDEFINED, K0002, "use of an undefined value") \
  X(DOMINANCE, K0003, "a value used outside its scope or before its definition") \
  X(REDEFINED, K0004, "a value defined twice") \
  X(TYPE, K0005, "an operand or result of the wrong type") \
  X(RANGE, K0006, "a binding, scalar, shared or local index out of range") \
  X(READONLY, K0007, "a store into a binding that is not mutable") \
  X(CONTROL, K0008, "break/continue outside a loop, or code after a jump") \
  X(BARRIER, K0009, "sync_cube where the units of a cube may diverge") \
  X(MALFORMED, K0010, "a malformed instruction (opcode, arity, step, ...)") \
  X(FORMAT, K0011, "a serialized kernel that does not read back (magic, truncation, checksum)") \
  X(VERSION, K0012, "a serialized kernel of an unsupported version") \
  X(LOWER, K0013, "a lowering cannot compile this kernel (yet)") \
  X(LLVM, K0014, "LLVM reported an error") \
  X(CUDA, K0015, "NVRTC or the CUDA driver: absent, or it rejected a kernel") \
  X(HIP, K0016, "hiprtc or the HIP runtime: absent, or it rejected a kernel") \
  X(VULKAN, K0017, "the Vulkan loader or device: absent, lacks a feature, or failed")

enum bxk_err {
#define BXK_X_(E, c, d) BXK_E_##E,
  BXK_ERRORS(BXK_X_)
#undef BXK_X_
  BXK_ERR_COUNT
};
BXK_FUNC const char *bxk_err_code(unsigned e);
/* Its one-line description ("out of memory"); NULL past the table. */
BXK_FUNC const char *bxk_err_desc(unsigned e);

struct bxk_diag {
  uint8_t err;             /* enum bxk_err */
  struct bxk_loc loc;
  bxk_val val;             /* the value concerned, or 0 */
  char msg[200];
};

#define BXK_MAX_DIAGS 32
struct bxk_diags {
  uint32_t n;              /* recorded, <= BXK_MAX_DIAGS */
  uint32_t total;          /* reported, may exceed n */
  struct bxk_diag d[BXK_MAX_DIAGS];
};

BXK_FUNC void bxk_diag_add(struct bxk_diags *ds, enum bxk_err e, struct bxk_loc loc, bxk_val v,
                           const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* "K0005 at 12+3: operands of add differ: f32 and i32" lines, into buf. */
BXK_FUNC size_t bxk_diags_render(const struct bxk_diags *ds, char *buf, size_t cap);

/* --------------------------------------------------------------- kernel */
/* NULL when out of memory.  The name is copied. */
BXK_FUNC struct bxk_kernel *bxk_kernel_new(const char *name);
BXK_FUNC void bxk_kernel_free(struct bxk_kernel *k);

/* Declarations; each returns its index (b0, s0, sh0, v0 in the text form),
 * or -1 when out of memory. */
BXK_FUNC int bxk_add_binding(struct bxk_kernel *k, enum bxk_type elem, int rank, bool mut);
BXK_FUNC int bxk_add_scalar(struct bxk_kernel *k, enum bxk_type t);
BXK_FUNC int bxk_add_shared(struct bxk_kernel *k, enum bxk_type elem, uint32_t count);
BXK_FUNC int bxk_add_local(struct bxk_kernel *k, enum bxk_type t);

/* The type of value v, or BXK_VOID when v is not defined (yet).  O(size):
 * for tools and tests; passes keep their own tables. */
BXK_FUNC enum bxk_type bxk_value_type(const struct bxk_kernel *k, bxk_val v);
/* Where kernel k first uses type t (a binding, scalar, shared array or
 * local declared with it, or an instruction that computes or casts from
 * it): true with *where set (a declaration's location is the first
 * instruction that refers to it, else {0}).  For lowerings that cannot
 * compile a type yet and must say where it is used. */
BXK_FUNC bool bxk_kernel_uses_type(const struct bxk_kernel *k, enum bxk_type t, struct bxk_loc *where);

/* ------------------------------------------------------------- builder */
/* Appends to blk.  Result types are inferred from the first operand (for
 * binary and unary ops), bool for comparisons, the target for casts, the
 * element for loads; the verifier checks them all again, so a builder fed
 * nonsense makes a kernel the verifier rejects, never a crash. */
struct bxk_builder {
  struct bxk_kernel *k;
  struct bxk_block *blk;
  struct bxk_loc loc;      /* given to every instruction appended */
};

BXK_FUNC struct bxk_builder bxk_builder_at(struct bxk_kernel *k, struct bxk_block *blk);

BXK_FUNC bxk_val bxk_const_f(struct bxk_builder *b, enum bxk_type t, double v);
BXK_FUNC bxk_val bxk_const_i(struct bxk_builder *b, enum bxk_type t, int64_t v);
BXK_FUNC bxk_val bxk_scalar(struct bxk_builder *b, int index);
BXK_FUNC bxk_val bxk_topo(struct bxk_builder *b, enum bxk_topo t);
BXK_FUNC bxk_val bxk_bin(struct bxk_builder *b, enum bxk_op op, bxk_val x, bxk_val y);
BXK_FUNC bxk_val bxk_un(struct bxk_builder *b, enum bxk_op op, bxk_val x);
BXK_FUNC bxk_val bxk_select(struct bxk_builder *b, bxk_val c, bxk_val x, bxk_val y);
BXK_FUNC bxk_val bxk_cast(struct bxk_builder *b, enum bxk_type to, bxk_val x);
BXK_FUNC bxk_val bxk_len(struct bxk_builder *b, int binding);
BXK_FUNC bxk_val bxk_rank(struct bxk_builder *b, int binding);
BXK_FUNC bxk_val bxk_shape(struct bxk_builder *b, int binding, bxk_val axis);
BXK_FUNC bxk_val bxk_stride(struct bxk_builder *b, int binding, bxk_val axis);
BXK_FUNC bxk_val bxk_load(struct bxk_builder *b, int binding, bxk_val index);
BXK_FUNC void bxk_store(struct bxk_builder *b, int binding, bxk_val index, bxk_val v);
BXK_FUNC bxk_val bxk_sload(struct bxk_builder *b, int shared, bxk_val index);
BXK_FUNC void bxk_sstore(struct bxk_builder *b, int shared, bxk_val index, bxk_val v);
BXK_FUNC bxk_val bxk_get(struct bxk_builder *b, int local);
BXK_FUNC void bxk_set(struct bxk_builder *b, int local, bxk_val v);
/* Structured control flow: the nested blocks are returned for the caller
 * to fill (bxk_builder_at(k, *then_blk) ...). */
BXK_FUNC void bxk_if(struct bxk_builder *b, bxk_val cond, struct bxk_block **then_blk,
                     struct bxk_block **else_blk);
/* for i in lo..hi step (step: a constant > 0); returns i, visible in body. */
BXK_FUNC bxk_val bxk_for(struct bxk_builder *b, bxk_val lo, bxk_val hi, bxk_val step,
                         struct bxk_block **body);
BXK_FUNC void bxk_loop(struct bxk_builder *b, struct bxk_block **body);
BXK_FUNC void bxk_break(struct bxk_builder *b);
BXK_FUNC void bxk_continue(struct bxk_builder *b);
BXK_FUNC void bxk_return(struct bxk_builder *b);
BXK_FUNC void bxk_sync(struct bxk_builder *b);
/* Any instruction, as given (the deserializer and malformed-IR tests);
 * res 0 with a non-void type takes a fresh value id. */
BXK_FUNC struct bxk_inst *bxk_raw(struct bxk_builder *b, enum bxk_op op, enum bxk_type type,
                                  bxk_val res, bxk_val a0, bxk_val a1, bxk_val a2, union bxk_lit imm);

/* ------------------------------------------------------------ verifier */
/* Checks the whole kernel, keeps going after an error; true when clean.
 * The rules: docs/kernels.md "Verifier". */
BXK_FUNC bool bxk_verify(const struct bxk_kernel *k, struct bxk_diags *ds);

/* -------------------------------------------------------------- printer */
/* The text form (stable; golden tests compare it).  Returns the length
 * written without the NUL; the output is truncated to cap (cap 0: measure). */
BXK_FUNC size_t bxk_print(const struct bxk_kernel *k, char *buf, size_t cap);
/* malloc'd text (free()), NULL when out of memory. */
BXK_FUNC char *bxk_print_alloc(const struct bxk_kernel *k);

/* ----------------------------------------------------------- serializer */
/* Version 2 added the type bf16 (ORDER TYPE row 9); the layout is
 * version 1's, so version-1 blobs still read (without bf16). */
#define BXK_FORMAT_VERSION 2
/* malloc'd bytes (free()); NULL when out of memory.  Only a verified
 * kernel is guaranteed to read back: an unverified one (a value defined
 * twice, a constant of type void) is written as it stands, and
 * bxk_deserialize may reject the result (the fuzzer found one). */
BXK_FUNC uint8_t *bxk_serialize(const struct bxk_kernel *k, size_t *len);
/* A new kernel, or NULL with a FORMAT/VERSION/OOM diagnostic.  Never
 * trusts the input: every count and index is bounded; the result is
 * structurally sound but still needs bxk_verify. */
BXK_FUNC struct bxk_kernel *bxk_deserialize(const uint8_t *p, size_t len, struct bxk_diags *ds);
/* FNV-1a 32 of the payload: the checksum the trailer carries. */
BXK_FUNC uint32_t bxk_checksum(const uint8_t *p, size_t len);
/* FNV-1a 64 of any bytes: the identity of a serialized kernel (the
 * runtime's kernel caches key on it; kernel_prepare's key may be it). */
BXK_FUNC uint64_t bxk_hash64(const uint8_t *p, size_t len);


/* ------------------------------------------------------------ evaluator */
/* Constant evaluation with exactly the semantics of bxk_scalar.h (the one
 * home of the core ops' scalar semantics).  Operands and result use
 * union bxk_lit's convention.  False when op/types are not a valid
 * combination (the verifier's rules). */
BXK_FUNC bool bxk_eval_bin(enum bxk_op op, enum bxk_type t, union bxk_lit a, union bxk_lit b,
                           union bxk_lit *out);
BXK_FUNC bool bxk_eval_un(enum bxk_op op, enum bxk_type t, union bxk_lit a, union bxk_lit *out);
BXK_FUNC bool bxk_eval_cast(enum bxk_type to, enum bxk_type from, union bxk_lit a,
                            union bxk_lit *out);
/* Constant folding in place (kir_fold.c): ops whose operands are all
 * constants become constants; value ids stay.  Returns how many folded.
 * For verified kernels. */
BXK_FUNC uint32_t bxk_fold(struct bxk_kernel *k);
/* A literal of type t normalized: ints wrapped to their width, floats
 * rounded to their precision, bool to 0/1. */
BXK_FUNC union bxk_lit bxk_lit_norm(enum bxk_type t, union bxk_lit a);

#endif
