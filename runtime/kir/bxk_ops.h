/* bxk_ops.h — the one table of kernel IR operations.
 * X(ENUM, spelling, operands, blocks, class, imm)
 *   operands: value operands (arg[0..]); blocks: nested blocks;
 *   class: how the verifier types it (enum bxk_class);
 *   imm: what inst.imm holds (enum bxk_immk).
 * ORDER OP: the serialized form stores the enum value, so new rows go at
 * the end and BXK_FORMAT_VERSION changes when a row changes meaning.
 * Semantics of every arithmetic row: bxk_scalar.h. */
#ifndef BXK_OPS_H
#define BXK_OPS_H

enum bxk_class {
  BXK_C_CONST, BXK_C_SCALAR, BXK_C_TOPO,
  BXK_C_ARITH,   /* x op y, numeric, same type (pow too: ints wrap, bxk_scalar.h) */
  BXK_C_LOGIC,   /* and/or/xor: bool or int */
  BXK_C_SHIFT,   /* int only */
  BXK_C_CMP,     /* same type -> bool */
  BXK_C_NUM1,    /* neg abs sign: int or float */
  BXK_C_FLOAT1,  /* math: float only */
  BXK_C_NOT,     /* bool or int */
  BXK_C_SELECT, BXK_C_CAST, BXK_C_QUERY, BXK_C_AXIS,
  BXK_C_LOAD, BXK_C_STORE, BXK_C_SLOAD, BXK_C_SSTORE, BXK_C_GET, BXK_C_SET,
  BXK_C_IF, BXK_C_FOR, BXK_C_LOOP, BXK_C_JUMP, BXK_C_SYNC,
};

enum bxk_immk { BXK_I_NONE, BXK_I_LIT, BXK_I_INDEX };

#define BXK_OPS(X)                                              \
  X(CONST, const, 0, 0, BXK_C_CONST, BXK_I_LIT)                 \
  X(SCALAR, scalar, 0, 0, BXK_C_SCALAR, BXK_I_INDEX)            \
  X(TOPO, topo, 0, 0, BXK_C_TOPO, BXK_I_INDEX)                  \
  X(ADD, add, 2, 0, BXK_C_ARITH, BXK_I_NONE)                    \
  X(SUB, sub, 2, 0, BXK_C_ARITH, BXK_I_NONE)                    \
  X(MUL, mul, 2, 0, BXK_C_ARITH, BXK_I_NONE)                    \
  X(DIV, div, 2, 0, BXK_C_ARITH, BXK_I_NONE)                    \
  X(REM, rem, 2, 0, BXK_C_ARITH, BXK_I_NONE)                    \
  X(MIN, min, 2, 0, BXK_C_ARITH, BXK_I_NONE)                    \
  X(MAX, max, 2, 0, BXK_C_ARITH, BXK_I_NONE)                    \
  X(POW, pow, 2, 0, BXK_C_ARITH, BXK_I_NONE)                    \
  X(AND, and, 2, 0, BXK_C_LOGIC, BXK_I_NONE)                    \
  X(OR, or, 2, 0, BXK_C_LOGIC, BXK_I_NONE)                      \
  X(XOR, xor, 2, 0, BXK_C_LOGIC, BXK_I_NONE)                    \
  X(SHL, shl, 2, 0, BXK_C_SHIFT, BXK_I_NONE)                    \
  X(SHR, shr, 2, 0, BXK_C_SHIFT, BXK_I_NONE)                    \
  X(EQ, eq, 2, 0, BXK_C_CMP, BXK_I_NONE)                        \
  X(NE, ne, 2, 0, BXK_C_CMP, BXK_I_NONE)                        \
  X(LT, lt, 2, 0, BXK_C_CMP, BXK_I_NONE)                        \
  X(LE, le, 2, 0, BXK_C_CMP, BXK_I_NONE)                        \
  X(GT, gt, 2, 0, BXK_C_CMP, BXK_I_NONE)                        \
  X(GE, ge, 2, 0, BXK_C_CMP, BXK_I_NONE)                        \
  X(NEG, neg, 1, 0, BXK_C_NUM1, BXK_I_NONE)                     \
  X(ABS, abs, 1, 0, BXK_C_NUM1, BXK_I_NONE)                     \
  X(SIGN, sign, 1, 0, BXK_C_NUM1, BXK_I_NONE)                   \
  X(NOT, not, 1, 0, BXK_C_NOT, BXK_I_NONE)                      \
  X(EXP, exp, 1, 0, BXK_C_FLOAT1, BXK_I_NONE)                   \
  X(LOG, log, 1, 0, BXK_C_FLOAT1, BXK_I_NONE)                   \
  X(LOG1P, log1p, 1, 0, BXK_C_FLOAT1, BXK_I_NONE)               \
  X(SQRT, sqrt, 1, 0, BXK_C_FLOAT1, BXK_I_NONE)                 \
  X(RSQRT, rsqrt, 1, 0, BXK_C_FLOAT1, BXK_I_NONE)               \
  X(RECIP, recip, 1, 0, BXK_C_FLOAT1, BXK_I_NONE)               \
  X(SIN, sin, 1, 0, BXK_C_FLOAT1, BXK_I_NONE)                   \
  X(COS, cos, 1, 0, BXK_C_FLOAT1, BXK_I_NONE)                   \
  X(TANH, tanh, 1, 0, BXK_C_FLOAT1, BXK_I_NONE)                 \
  X(ERF, erf, 1, 0, BXK_C_FLOAT1, BXK_I_NONE)                   \
  X(FLOOR, floor, 1, 0, BXK_C_FLOAT1, BXK_I_NONE)               \
  X(CEIL, ceil, 1, 0, BXK_C_FLOAT1, BXK_I_NONE)                 \
  X(ROUND, round, 1, 0, BXK_C_FLOAT1, BXK_I_NONE)               \
  X(TRUNC, trunc, 1, 0, BXK_C_FLOAT1, BXK_I_NONE)               \
  X(SELECT, select, 3, 0, BXK_C_SELECT, BXK_I_NONE)             \
  X(CAST, cast, 1, 0, BXK_C_CAST, BXK_I_NONE)                   \
  X(LEN, len, 0, 0, BXK_C_QUERY, BXK_I_INDEX)                   \
  X(RANK, rank, 0, 0, BXK_C_QUERY, BXK_I_INDEX)                 \
  X(SHAPE, shape, 1, 0, BXK_C_AXIS, BXK_I_INDEX)                \
  X(STRIDE, stride, 1, 0, BXK_C_AXIS, BXK_I_INDEX)              \
  X(LOAD, load, 1, 0, BXK_C_LOAD, BXK_I_INDEX)                  \
  X(STORE, store, 2, 0, BXK_C_STORE, BXK_I_INDEX)               \
  X(SLOAD, sload, 1, 0, BXK_C_SLOAD, BXK_I_INDEX)               \
  X(SSTORE, sstore, 2, 0, BXK_C_SSTORE, BXK_I_INDEX)            \
  X(GET, get, 0, 0, BXK_C_GET, BXK_I_INDEX)                     \
  X(SET, set, 1, 0, BXK_C_SET, BXK_I_INDEX)                     \
  X(IF, if, 1, 2, BXK_C_IF, BXK_I_NONE)                         \
  X(FOR, for, 3, 1, BXK_C_FOR, BXK_I_NONE)                      \
  X(LOOP, loop, 0, 1, BXK_C_LOOP, BXK_I_NONE)                   \
  X(BREAK, break, 0, 0, BXK_C_JUMP, BXK_I_NONE)                 \
  X(CONTINUE, continue, 0, 0, BXK_C_JUMP, BXK_I_NONE)           \
  X(RETURN, return, 0, 0, BXK_C_JUMP, BXK_I_NONE)               \
  X(SYNC, sync_cube, 0, 0, BXK_C_SYNC, BXK_I_NONE)

enum bxk_op {
#define BXK_X_(E, s, na, nb, c, im) BXK_OP_##E,
  BXK_OPS(BXK_X_)
#undef BXK_X_
  BXK_OP_COUNT
};

struct bxk_opinfo {
  const char *name;
  uint8_t nargs, nblk, cls, immk;
};
/* Indexed by enum bxk_op; rows for every op (static_assert in kir_types.c). */
BXK_FUNC const struct bxk_opinfo bxk_opinfo[BXK_OP_COUNT];
#define bxk_op_valid(op) ((unsigned)(op) < BXK_OP_COUNT)

#endif
