/* bxvk_emit.h — the SPIR-V emitter's private parts, shared by bxvk_emit.c
 * (module layout, types, constants, control flow, memory) and
 * bxvk_emit_ops.c (arithmetic, math, casts: bxk_scalar.h's semantics
 * spelled in SPIR-V). */
#ifndef BXVK_EMIT_H
#define BXVK_EMIT_H

#include <spirv/unified1/GLSL.std.450.h>
#include <spirv/unified1/spirv.h>

#include "bxvk.h"

/* A growing array of words; oom sticks. */
struct bxvk_words {
  uint32_t *w;
  size_t n, cap;
  bool oom;
};

struct bxvk_const {
  uint32_t type, lo, hi, id;
};

struct bxvk_ptr {
  uint32_t sc, pointee, id;
};

#define BXVK_MAX_DEPTH 66

struct bxvk_em {
  const struct bxk_kernel *k;
  struct bxk_diags *ds;
  bool failed;
  unsigned needs;
  uint32_t next;                      /* next free id */
  /* module sections, concatenated in this order at the end */
  struct bxvk_words annot, types, vars, fn;
  uint32_t glsl;                      /* GLSL.std.450 import */
  /* register types: bool, u8, u32 (i32 and u32 alike; ops pick the
   * signedness), u64 (i64), f32 (f16 values too), f64; storage types add
   * f16 */
  uint32_t t_void, t_bool, t_u8, t_u32, t_u64, t_f16, t_f32, t_f64, t_v3u32, t_v2f16;
  uint32_t t_frexp32, t_frexp64;
  struct bxvk_const *consts;
  uint32_t nconst, capconst;
  struct bxvk_ptr ptrs[64];
  uint32_t nptr;
  /* IR value -> SPIR-V id */
  uint32_t *val;
  uint8_t *vty;                       /* IR value -> its type */
  /* variables */
  uint32_t *bind_var, *bind_ptr, *bind_off, *shared_var, *local_var;
  uint32_t meta_var, pc_var;
  uint32_t in_gid, in_lid, in_wid, spec[3];
  /* the loops being emitted: break goes to merge, continue to cont */
  struct { uint32_t merge, cont; } loops[BXVK_MAX_DEPTH];
  uint32_t depth;
  bool term;                          /* the current block has its terminator */
};

BXK_FUNC void bxvk_put(struct bxvk_words *b, uint32_t w);
/* One instruction: opcode and n operand words. */
BXK_FUNC void bxvk_ins(struct bxvk_words *b, SpvOp op, int n, ...);
BXK_FUNC uint32_t bxvk_id(struct bxvk_em *e);
BXK_FUNC void bxvk_fail(struct bxvk_em *e, const struct bxk_inst *i, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Register type of an IR type; its constants (payload in union bxk_lit's
 * convention). */
BXK_FUNC uint32_t bxvk_reg(struct bxvk_em *e, unsigned t);
BXK_FUNC uint32_t bxvk_const(struct bxvk_em *e, unsigned t, union bxk_lit v);
BXK_FUNC uint32_t bxvk_const_u32(struct bxvk_em *e, uint32_t v);
BXK_FUNC uint32_t bxvk_const_f(struct bxvk_em *e, unsigned t, double v);
BXK_FUNC uint32_t bxvk_f16_type(struct bxvk_em *e);
/* struct {float type ty, u32}: FrexpStruct's result */
BXK_FUNC uint32_t bxvk_frexp_type(struct bxvk_em *e, uint32_t ty);
/* A Function variable of IR type t, zero at entry. */
BXK_FUNC uint32_t bxvk_fvar(struct bxvk_em *e, unsigned t);

/* Instruction helpers into e->fn: each returns the result id. */
BXK_FUNC uint32_t bxvk_op1(struct bxvk_em *e, SpvOp op, uint32_t ty, uint32_t a);
BXK_FUNC uint32_t bxvk_op2(struct bxvk_em *e, SpvOp op, uint32_t ty, uint32_t a, uint32_t b);
BXK_FUNC uint32_t bxvk_sel(struct bxvk_em *e, uint32_t ty, uint32_t c, uint32_t a, uint32_t b);
BXK_FUNC uint32_t bxvk_ext(struct bxvk_em *e, uint32_t ty, enum GLSLstd450 f, uint32_t a);
BXK_FUNC uint32_t bxvk_ext2(struct bxvk_em *e, uint32_t ty, enum GLSLstd450 f, uint32_t a, uint32_t b);

/* Float arithmetic the driver must not fuse; logic and comparisons. */
static inline uint32_t exact(struct bxvk_em *e, uint32_t r) {
  bxvk_ins(&e->annot, SpvOpDecorate, 2, r, SpvDecorationNoContraction);
  return r;
}
static inline uint32_t lor(struct bxvk_em *e, uint32_t a, uint32_t b) {
  return bxvk_op2(e, SpvOpLogicalOr, bxvk_reg(e, BXK_BOOL), a, b);
}
static inline uint32_t land(struct bxvk_em *e, uint32_t a, uint32_t b) {
  return bxvk_op2(e, SpvOpLogicalAnd, bxvk_reg(e, BXK_BOOL), a, b);
}
static inline uint32_t cmp(struct bxvk_em *e, SpvOp op, uint32_t a, uint32_t b) {
  return bxvk_op2(e, op, bxvk_reg(e, BXK_BOOL), a, b);
}

/* bxvk_emit_f64.c: the f64 math GLSL.std.450 lacks (exp log log1p sin
 * cos tanh erf), or 0 after bxvk_fail for an op it does not have; exp
 * and log alone for pow. */
BXK_FUNC uint32_t bxvk_math64(struct bxvk_em *e, const struct bxk_inst *i, unsigned op, uint32_t a);
BXK_FUNC uint32_t bxvk_exp64(struct bxvk_em *e, uint32_t x);
BXK_FUNC uint32_t bxvk_log64(struct bxvk_em *e, uint32_t x);

/* bxvk_emit_ops.c: value-level lowering.  t is the operands' IR type. */
BXK_FUNC uint32_t bxvk_round16(struct bxvk_em *e, uint32_t x);   /* f32 -> nearest f16, as f32 */
/* C's fmod, exact, with a loop (opens blocks in e->fn); t: F32 or F64. */
BXK_FUNC uint32_t bxvk_fmod(struct bxvk_em *e, unsigned t, uint32_t x, uint32_t y);
BXK_FUNC uint32_t bxvk_binop(struct bxvk_em *e, const struct bxk_inst *i, unsigned op, unsigned t,
                             uint32_t a, uint32_t b);
BXK_FUNC uint32_t bxvk_unop(struct bxvk_em *e, const struct bxk_inst *i, unsigned op, unsigned t, uint32_t a);
BXK_FUNC uint32_t bxvk_cast(struct bxvk_em *e, unsigned to, unsigned from, uint32_t a);

#endif
