/* bxvk_emit.c — a verified kernel as a SPIR-V 1.3 compute module, written
 * word by word: the module's layout (capabilities from what the kernel
 * uses, the bindings, metadata buffer and push constants of bxvk.h's ABI,
 * the workgroup size as specialization constants), the IR's structured
 * control flow as OpSelectionMerge/OpLoopMerge constructs, and memory.
 * The arithmetic is in bxvk_emit_ops.c.
 *
 * Values: every IR value is one SPIR-V id (the IR is SSA and its scoping
 * rule, "visible in the defining block and the blocks nested in it",
 * implies dominance).  Locals and `for` counters are Function variables,
 * so no OpPhi is needed.  f16 values live in f32 registers holding values
 * f16 can represent (rounded after every op, as bxk_scalar.h says); bool
 * and u8 are stored as 8-bit integers. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bxvk_emit.h"

static const struct bxk_loc noloc;

const char *bxvk_need_name(unsigned bit) {
  static const char *const names[] = {
#define BXVK_X_(E, s) s,
      BXVK_NEEDS(BXVK_X_)
#undef BXVK_X_
  };
  return bit < BXVK_NEED_COUNT ? names[bit] : "?";
}

/* ------------------------------------------------------------- words */

void bxvk_put(struct bxvk_words *b, uint32_t w) {
  if (b->oom) return;
  if (b->n == b->cap) {
    size_t cap = b->cap ? 2 * b->cap : 256;
    uint32_t *p = realloc(b->w, cap * sizeof *p);
    if (!p) {
      b->oom = true;
      return;
    }
    b->w = p;
    b->cap = cap;
  }
  b->w[b->n++] = w;
}

void bxvk_ins(struct bxvk_words *b, SpvOp op, int n, ...) {
  va_list ap;
  va_start(ap, n);
  bxvk_put(b, ((uint32_t)(n + 1) << 16) | (uint32_t)op);
  for (int j = 0; j < n; j++) bxvk_put(b, va_arg(ap, uint32_t));
  va_end(ap);
}

/* A string operand: UTF-8, NUL-terminated, padded to whole words. */
static void put_str(struct bxvk_words *b, const char *s) {
  size_t n = strlen(s) + 1;
  for (size_t i = 0; i < n; i += 4) {
    uint32_t w = 0;
    for (size_t j = 0; j < 4 && i + j < n; j++) w |= (uint32_t)(uint8_t)s[i + j] << (8 * j);
    bxvk_put(b, w);
  }
}
static uint32_t str_words(const char *s) { return (uint32_t)(strlen(s) + 4) / 4; }

uint32_t bxvk_id(struct bxvk_em *e) { return e->next++; }

void bxvk_fail(struct bxvk_em *e, const struct bxk_inst *i, const char *fmt, ...) {
  char msg[160];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  bxk_diag_add(e->ds, BXK_E_LOWER, i ? i->loc : noloc, i ? i->res : 0, "kernel %s: %s", e->k->name, msg);
  e->failed = true;
}

/* -------------------------------------------------------------- types */

static uint32_t type_int(struct bxvk_em *e, uint32_t *slot, uint32_t bits) {
  if (!*slot) bxvk_ins(&e->types, SpvOpTypeInt, 3, *slot = bxvk_id(e), bits, 0);
  return *slot;
}
static uint32_t type_float(struct bxvk_em *e, uint32_t *slot, uint32_t bits) {
  if (!*slot) bxvk_ins(&e->types, SpvOpTypeFloat, 2, *slot = bxvk_id(e), bits);
  return *slot;
}

uint32_t bxvk_f16_type(struct bxvk_em *e) {
  e->needs |= BXVK_NEED(FLOAT16);
  return type_float(e, &e->t_f16, 16);
}

uint32_t bxvk_reg(struct bxvk_em *e, unsigned t) {
  switch (t) {
  case BXK_BOOL:
    if (!e->t_bool) bxvk_ins(&e->types, SpvOpTypeBool, 1, e->t_bool = bxvk_id(e));
    return e->t_bool;
  case BXK_U8: e->needs |= BXVK_NEED(INT8); return type_int(e, &e->t_u8, 8);
  case BXK_I32: case BXK_U32: return type_int(e, &e->t_u32, 32);
  case BXK_I64: e->needs |= BXVK_NEED(INT64); return type_int(e, &e->t_u64, 64);
  case BXK_F16: e->needs |= BXVK_NEED(FLOAT16); return type_float(e, &e->t_f32, 32);
  case BXK_F32: return type_float(e, &e->t_f32, 32);
  case BXK_F64: e->needs |= BXVK_NEED(FLOAT64); return type_float(e, &e->t_f64, 64);
  default: return 0;
  }
}

/* The type elements of t have in a storage buffer. */
static uint32_t stor(struct bxvk_em *e, unsigned t) {
  if (t == BXK_BOOL || t == BXK_U8) {
    e->needs |= BXVK_NEED(STORAGE8);
    return bxvk_reg(e, BXK_U8);
  }
  if (t == BXK_F16) {
    e->needs |= BXVK_NEED(STORAGE16);
    return bxvk_f16_type(e);
  }
  return bxvk_reg(e, t);
}

static uint32_t ptr(struct bxvk_em *e, SpvStorageClass sc, uint32_t pointee) {
  for (uint32_t j = 0; j < e->nptr; j++)
    if (e->ptrs[j].sc == (uint32_t)sc && e->ptrs[j].pointee == pointee) return e->ptrs[j].id;
  uint32_t id = bxvk_id(e);
  bxvk_ins(&e->types, SpvOpTypePointer, 3, id, (uint32_t)sc, pointee);
  if (e->nptr < 64) e->ptrs[e->nptr++] = (struct bxvk_ptr){(uint32_t)sc, pointee, id};
  return id;
}

/* ---------------------------------------------------------- constants */

static uint32_t konst(struct bxvk_em *e, uint32_t ty, uint32_t lo, uint32_t hi, int nwords) {
  for (uint32_t j = 0; j < e->nconst; j++)
    if (e->consts[j].type == ty && e->consts[j].lo == lo && e->consts[j].hi == hi) return e->consts[j].id;
  uint32_t id = bxvk_id(e);
  if (ty == e->t_bool && e->t_bool) bxvk_ins(&e->types, lo ? SpvOpConstantTrue : SpvOpConstantFalse, 2, ty, id);
  else if (nwords == 2) bxvk_ins(&e->types, SpvOpConstant, 4, ty, id, lo, hi);
  else bxvk_ins(&e->types, SpvOpConstant, 3, ty, id, lo);
  if (e->nconst == e->capconst) {
    uint32_t cap = e->capconst ? 2 * e->capconst : 64;
    struct bxvk_const *p = realloc(e->consts, cap * sizeof *p);
    if (!p) {
      e->types.oom = true;
      return id;
    }
    e->consts = p;
    e->capconst = cap;
  }
  e->consts[e->nconst++] = (struct bxvk_const){ty, lo, hi, id};
  return id;
}

uint32_t bxvk_const(struct bxvk_em *e, unsigned t, union bxk_lit v) {
  v = bxk_lit_norm(t, v);
  uint32_t ty = bxvk_reg(e, t);
  switch (t) {
  case BXK_BOOL: return konst(e, ty, v.u != 0, 0, 1);
  case BXK_U8: case BXK_I32: case BXK_U32: return konst(e, ty, (uint32_t)v.u, 0, 1);
  case BXK_I64: return konst(e, ty, (uint32_t)v.u, (uint32_t)(v.u >> 32), 2);
  case BXK_F16: case BXK_F32: {
    float f = (float)v.f;
    uint32_t u;
    memcpy(&u, &f, 4);
    return konst(e, ty, u, 0, 1);
  }
  default: {
    uint64_t u;
    memcpy(&u, &v.f, 8);
    return konst(e, ty, (uint32_t)u, (uint32_t)(u >> 32), 2);
  }
  }
}

uint32_t bxvk_const_u32(struct bxvk_em *e, uint32_t v) {
  return bxvk_const(e, BXK_U32, (union bxk_lit){.u = v});
}
uint32_t bxvk_const_f(struct bxvk_em *e, unsigned t, double v) {
  return bxvk_const(e, t, (union bxk_lit){.f = v});
}

/* -------------------------------------------------------- instructions */

uint32_t bxvk_op1(struct bxvk_em *e, SpvOp op, uint32_t ty, uint32_t a) {
  uint32_t r = bxvk_id(e);
  bxvk_ins(&e->fn, op, 3, ty, r, a);
  return r;
}
uint32_t bxvk_op2(struct bxvk_em *e, SpvOp op, uint32_t ty, uint32_t a, uint32_t b) {
  uint32_t r = bxvk_id(e);
  bxvk_ins(&e->fn, op, 4, ty, r, a, b);
  return r;
}
uint32_t bxvk_sel(struct bxvk_em *e, uint32_t ty, uint32_t c, uint32_t a, uint32_t b) {
  uint32_t r = bxvk_id(e);
  bxvk_ins(&e->fn, SpvOpSelect, 5, ty, r, c, a, b);
  return r;
}
uint32_t bxvk_ext(struct bxvk_em *e, uint32_t ty, enum GLSLstd450 f, uint32_t a) {
  uint32_t r = bxvk_id(e);
  bxvk_ins(&e->fn, SpvOpExtInst, 5, ty, r, e->glsl, (uint32_t)f, a);
  return r;
}
uint32_t bxvk_ext2(struct bxvk_em *e, uint32_t ty, enum GLSLstd450 f, uint32_t a, uint32_t b) {
  uint32_t r = bxvk_id(e);
  bxvk_ins(&e->fn, SpvOpExtInst, 6, ty, r, e->glsl, (uint32_t)f, a, b);
  return r;
}

static uint32_t load(struct bxvk_em *e, uint32_t ty, uint32_t p) { return bxvk_op1(e, SpvOpLoad, ty, p); }

static uint32_t chain(struct bxvk_em *e, uint32_t pty, uint32_t base, int n, uint32_t i0, uint32_t i1) {
  uint32_t r = bxvk_id(e);
  if (n == 1) bxvk_ins(&e->fn, SpvOpAccessChain, 4, pty, r, base, i0);
  else bxvk_ins(&e->fn, SpvOpAccessChain, 5, pty, r, base, i0, i1);
  return r;
}

static void label(struct bxvk_em *e, uint32_t id) {
  bxvk_ins(&e->fn, SpvOpLabel, 1, id);
  e->term = false;
}
static void branch(struct bxvk_em *e, uint32_t to) {
  bxvk_ins(&e->fn, SpvOpBranch, 1, to);
  e->term = true;
}

/* ------------------------------------------------------------ globals */

/* A buffer `struct { T data[]; }` (Block) at set 0, binding `binding`. */
static uint32_t buffer_var(struct bxvk_em *e, uint32_t elem, uint32_t stride, uint32_t binding,
                           bool readonly, uint32_t *elem_ptr) {
  uint32_t arr = bxvk_id(e), st = bxvk_id(e), var = bxvk_id(e);
  bxvk_ins(&e->types, SpvOpTypeRuntimeArray, 2, arr, elem);
  bxvk_ins(&e->types, SpvOpTypeStruct, 2, st, arr);
  bxvk_ins(&e->annot, SpvOpDecorate, 3, arr, SpvDecorationArrayStride, stride);
  bxvk_ins(&e->annot, SpvOpDecorate, 2, st, SpvDecorationBlock);
  bxvk_ins(&e->annot, SpvOpMemberDecorate, 4, st, 0, SpvDecorationOffset, 0);
  if (readonly) bxvk_ins(&e->annot, SpvOpMemberDecorate, 3, st, 0, SpvDecorationNonWritable);
  bxvk_ins(&e->types, SpvOpVariable, 3, ptr(e, SpvStorageClassStorageBuffer, st), var,
           SpvStorageClassStorageBuffer);
  bxvk_ins(&e->annot, SpvOpDecorate, 3, var, SpvDecorationDescriptorSet, 0);
  bxvk_ins(&e->annot, SpvOpDecorate, 3, var, SpvDecorationBinding, binding);
  *elem_ptr = ptr(e, SpvStorageClassStorageBuffer, elem);
  return var;
}

static uint32_t builtin(struct bxvk_em *e, SpvBuiltIn b) {
  uint32_t var = bxvk_id(e);
  bxvk_ins(&e->types, SpvOpVariable, 3, ptr(e, SpvStorageClassInput, e->t_v3u32), var, SpvStorageClassInput);
  bxvk_ins(&e->annot, SpvOpDecorate, 3, var, SpvDecorationBuiltIn, b);
  return var;
}

/* The slot type of a scalar in the push constants. */
static uint32_t slot_type(struct bxvk_em *e, unsigned t) {
  return t == BXK_BOOL || t == BXK_U8 || t == BXK_F16 ? bxvk_reg(e, BXK_U32) : bxvk_reg(e, t);
}

static void globals(struct bxvk_em *e) {
  const struct bxk_kernel *k = e->k;
  uint32_t u32 = bxvk_reg(e, BXK_U32);
  bxvk_ins(&e->types, SpvOpTypeVector, 3, e->t_v3u32 = bxvk_id(e), u32, 3);
  for (uint32_t j = 0; j < k->nbind; j++) {
    unsigned t = k->bind[j].elem;
    uint32_t bytes = t == BXK_BOOL || t == BXK_U8 ? 1 : bxk_type_bits(t) / 8;
    e->bind_var[j] = buffer_var(e, stor(e, t), bytes, j, !k->bind[j].mut, &e->bind_ptr[j]);
  }
  uint32_t meta_ptr;
  e->meta_var = buffer_var(e, u32, 4, k->nbind, true, &meta_ptr);
  (void)meta_ptr;
  if (k->nscalar) {
    uint32_t members[BXVK_MAX_SCALARS];
    for (uint32_t j = 0; j < k->nscalar; j++) members[j] = slot_type(e, k->scalar[j]);
    uint32_t st = bxvk_id(e);
    bxvk_put(&e->types, ((2 + k->nscalar) << 16) | SpvOpTypeStruct);
    bxvk_put(&e->types, st);
    for (uint32_t j = 0; j < k->nscalar; j++) {
      bxvk_put(&e->types, members[j]);
      bxvk_ins(&e->annot, SpvOpMemberDecorate, 4, st, j, SpvDecorationOffset, 8 * j);
    }
    bxvk_ins(&e->annot, SpvOpDecorate, 2, st, SpvDecorationBlock);
    e->pc_var = bxvk_id(e);
    bxvk_ins(&e->types, SpvOpVariable, 3, ptr(e, SpvStorageClassPushConstant, st), e->pc_var,
             SpvStorageClassPushConstant);
  }
  for (uint32_t j = 0; j < k->nshared; j++) {
    unsigned t = k->shared[j].elem;
    uint32_t elem = bxvk_reg(e, t), arr = bxvk_id(e);
    bxvk_ins(&e->types, SpvOpTypeArray, 3, arr, elem, bxvk_const_u32(e, k->shared[j].count));
    e->shared_var[j] = bxvk_id(e);
    bxvk_ins(&e->types, SpvOpVariable, 3, ptr(e, SpvStorageClassWorkgroup, arr), e->shared_var[j],
             SpvStorageClassWorkgroup);
  }
  e->in_gid = builtin(e, SpvBuiltInGlobalInvocationId);
  e->in_lid = builtin(e, SpvBuiltInLocalInvocationId);
  e->in_wid = builtin(e, SpvBuiltInWorkgroupId);
  /* cube_dim: specialization constants 0..2 decorated as the WorkgroupSize */
  for (uint32_t a = 0; a < 3; a++) {
    bxvk_ins(&e->types, SpvOpSpecConstant, 3, u32, e->spec[a] = bxvk_id(e), 1);
    bxvk_ins(&e->annot, SpvOpDecorate, 3, e->spec[a], SpvDecorationSpecId, a);
  }
  uint32_t wg = bxvk_id(e);
  bxvk_ins(&e->types, SpvOpSpecConstantComposite, 5, e->t_v3u32, wg, e->spec[0], e->spec[1], e->spec[2]);
  bxvk_ins(&e->annot, SpvOpDecorate, 3, wg, SpvDecorationBuiltIn, SpvBuiltInWorkgroupSize);
}

/* ------------------------------------------------------------ topology */

static uint32_t comp(struct bxvk_em *e, uint32_t var, uint32_t axis) {
  uint32_t v = load(e, e->t_v3u32, var), r = bxvk_id(e);
  bxvk_ins(&e->fn, SpvOpCompositeExtract, 4, bxvk_reg(e, BXK_U32), r, v, axis);
  return r;
}

static uint32_t meta(struct bxvk_em *e, uint32_t binding, uint32_t word, uint32_t axis);

/* The whole grid's cube count on an axis, from the words after the
 * bindings' metadata: not NumWorkgroups, which is one dispatch's when the
 * runtime splits a launch past maxComputeWorkGroupCount (WorkgroupId and
 * GlobalInvocationId include the dispatch's base, so they need nothing). */
static uint32_t grid(struct bxvk_em *e, uint32_t axis) { return meta(e, e->k->nbind, axis, 0); }

/* x + X * (y + Y * z): the CPU ABI's linearization, x fastest. */
static uint32_t linear(struct bxvk_em *e, const uint32_t v[3], const uint32_t ext[3]) {
  uint32_t u = bxvk_reg(e, BXK_U32);
  uint32_t r = bxvk_op2(e, SpvOpIAdd, u, v[1], bxvk_op2(e, SpvOpIMul, u, ext[1], v[2]));
  return bxvk_op2(e, SpvOpIAdd, u, v[0], bxvk_op2(e, SpvOpIMul, u, ext[0], r));
}

static uint32_t topo(struct bxvk_em *e, unsigned t) {
  uint32_t u = bxvk_reg(e, BXK_U32);
  uint32_t nwg[3], gid[3], lid[3], wid[3], ext[3];
  switch (t) {
  case BXK_TOPO_ABSOLUTE_POS_X: case BXK_TOPO_ABSOLUTE_POS_Y: case BXK_TOPO_ABSOLUTE_POS_Z:
    return comp(e, e->in_gid, t - BXK_TOPO_ABSOLUTE_POS_X);
  case BXK_TOPO_UNIT_POS_X: case BXK_TOPO_UNIT_POS_Y: case BXK_TOPO_UNIT_POS_Z:
    return comp(e, e->in_lid, t - BXK_TOPO_UNIT_POS_X);
  case BXK_TOPO_CUBE_POS_X: case BXK_TOPO_CUBE_POS_Y: case BXK_TOPO_CUBE_POS_Z:
    return comp(e, e->in_wid, t - BXK_TOPO_CUBE_POS_X);
  case BXK_TOPO_CUBE_COUNT_X: case BXK_TOPO_CUBE_COUNT_Y: case BXK_TOPO_CUBE_COUNT_Z:
    return grid(e, t - BXK_TOPO_CUBE_COUNT_X);
  case BXK_TOPO_CUBE_DIM_X: case BXK_TOPO_CUBE_DIM_Y: case BXK_TOPO_CUBE_DIM_Z:
    return e->spec[t - BXK_TOPO_CUBE_DIM_X];
  case BXK_TOPO_CUBE_DIM:
    return bxvk_op2(e, SpvOpIMul, u, bxvk_op2(e, SpvOpIMul, u, e->spec[0], e->spec[1]), e->spec[2]);
  case BXK_TOPO_CUBE_COUNT:
    for (int a = 0; a < 3; a++) nwg[a] = grid(e, a);
    return bxvk_op2(e, SpvOpIMul, u, bxvk_op2(e, SpvOpIMul, u, nwg[0], nwg[1]), nwg[2]);
  case BXK_TOPO_UNIT_POS:
    for (int a = 0; a < 3; a++) lid[a] = comp(e, e->in_lid, a);
    return linear(e, lid, e->spec);
  case BXK_TOPO_CUBE_POS:
    for (int a = 0; a < 3; a++) wid[a] = comp(e, e->in_wid, a), nwg[a] = grid(e, a);
    return linear(e, wid, nwg);
  default: /* ABSOLUTE_POS: linear over the whole grid */
    for (int a = 0; a < 3; a++) {
      gid[a] = comp(e, e->in_gid, a);
      ext[a] = bxvk_op2(e, SpvOpIMul, u, grid(e, a), e->spec[a]);
    }
    return linear(e, gid, ext);
  }
}

/* -------------------------------------------------------------- memory */

static uint32_t meta(struct bxvk_em *e, uint32_t binding, uint32_t word, uint32_t axis) {
  uint32_t u = bxvk_reg(e, BXK_U32);
  uint32_t w = bxvk_const_u32(e, binding * BXVK_META_WORDS + word);
  if (axis) w = bxvk_op2(e, SpvOpIAdd, u, w, bxvk_op2(e, SpvOpBitwiseAnd, u, axis, bxvk_const_u32(e, 7)));
  uint32_t p = chain(e, ptr(e, SpvStorageClassStorageBuffer, u), e->meta_var, 2, bxvk_const_u32(e, 0), w);
  return load(e, u, p);
}

/* Pointer to element idx of binding j (its view's offset added). */
static uint32_t elem_ptr(struct bxvk_em *e, uint32_t j, uint32_t idx) {
  uint32_t i = bxvk_op2(e, SpvOpIAdd, bxvk_reg(e, BXK_U32), idx, e->bind_off[j]);
  return chain(e, e->bind_ptr[j], e->bind_var[j], 2, bxvk_const_u32(e, 0), i);
}

static uint32_t load_elem(struct bxvk_em *e, uint32_t j, uint32_t idx) {
  unsigned t = e->k->bind[j].elem;
  uint32_t x = load(e, stor(e, t), elem_ptr(e, j, idx));
  if (t == BXK_BOOL)
    return bxvk_op2(e, SpvOpINotEqual, bxvk_reg(e, BXK_BOOL), x, bxvk_const(e, BXK_U8, (union bxk_lit){0}));
  if (t == BXK_F16) return bxvk_op1(e, SpvOpFConvert, bxvk_reg(e, BXK_F32), x);
  return x;
}

static void store_elem(struct bxvk_em *e, uint32_t j, uint32_t idx, uint32_t v) {
  unsigned t = e->k->bind[j].elem;
  if (t == BXK_BOOL)
    v = bxvk_sel(e, bxvk_reg(e, BXK_U8), v, bxvk_const(e, BXK_U8, (union bxk_lit){.u = 1}),
                 bxvk_const(e, BXK_U8, (union bxk_lit){0}));
  if (t == BXK_F16) v = bxvk_op1(e, SpvOpFConvert, bxvk_f16_type(e), v);
  bxvk_ins(&e->fn, SpvOpStore, 2, elem_ptr(e, j, idx), v);
}

static uint32_t scalar(struct bxvk_em *e, uint32_t j) {
  unsigned t = e->k->scalar[j];
  uint32_t st = slot_type(e, t);
  uint32_t x = load(e, st, chain(e, ptr(e, SpvStorageClassPushConstant, st), e->pc_var, 1,
                                 bxvk_const_u32(e, j), 0));
  switch (t) {
  case BXK_BOOL: return bxvk_op2(e, SpvOpINotEqual, bxvk_reg(e, BXK_BOOL), x, bxvk_const_u32(e, 0));
  case BXK_U8: return bxvk_op1(e, SpvOpUConvert, bxvk_reg(e, BXK_U8), x);
  case BXK_F16: {
    /* the slot's low 16 bits are binary16: the first lane of a half2 */
    if (!e->t_v2f16) bxvk_ins(&e->types, SpvOpTypeVector, 3, e->t_v2f16 = bxvk_id(e), bxvk_f16_type(e), 2);
    uint32_t v = bxvk_op1(e, SpvOpBitcast, e->t_v2f16, x), h = bxvk_id(e);
    bxvk_ins(&e->fn, SpvOpCompositeExtract, 4, e->t_f16, h, v, 0);
    return bxvk_op1(e, SpvOpFConvert, bxvk_reg(e, BXK_F32), h);
  }
  default: return x;
  }
}

static uint32_t shared_ptr(struct bxvk_em *e, uint32_t j, uint32_t idx) {
  uint32_t elem = bxvk_reg(e, e->k->shared[j].elem);
  return chain(e, ptr(e, SpvStorageClassWorkgroup, elem), e->shared_var[j], 1, idx, 0);
}

static uint32_t local_ptr(struct bxvk_em *e, uint32_t j) { return e->local_var[j]; }

uint32_t bxvk_frexp_type(struct bxvk_em *e, uint32_t ty) {
  uint32_t *slot = ty == e->t_f64 ? &e->t_frexp64 : &e->t_frexp32;
  if (!*slot) bxvk_ins(&e->types, SpvOpTypeStruct, 3, *slot = bxvk_id(e), ty, bxvk_reg(e, BXK_U32));
  return *slot;
}

uint32_t bxvk_fvar(struct bxvk_em *e, unsigned t) {
  uint32_t v = bxvk_id(e);
  bxvk_ins(&e->vars, SpvOpVariable, 4, ptr(e, SpvStorageClassFunction, bxvk_reg(e, t)), v,
           SpvStorageClassFunction, bxvk_const(e, t, (union bxk_lit){0}));
  return v;
}

/* ------------------------------------------------------ control flow */

static void block(struct bxvk_em *e, const struct bxk_block *b);

static uint32_t V(struct bxvk_em *e, bxk_val v) { return e->val[v]; }

static void emit_if(struct bxvk_em *e, const struct bxk_inst *i) {
  uint32_t then = bxvk_id(e), els = bxvk_id(e), merge = bxvk_id(e);
  bxvk_ins(&e->fn, SpvOpSelectionMerge, 2, merge, SpvSelectionControlMaskNone);
  bxvk_ins(&e->fn, SpvOpBranchConditional, 3, V(e, i->arg[0]), then, els);
  label(e, then);
  block(e, i->blk[0]);
  if (!e->term) branch(e, merge);
  label(e, els);
  block(e, i->blk[1]);
  if (!e->term) branch(e, merge);
  label(e, merge);
}

static void emit_loop(struct bxvk_em *e, const struct bxk_inst *i) {
  uint32_t header = bxvk_id(e), body = bxvk_id(e), cont = bxvk_id(e), merge = bxvk_id(e);
  bool isfor = i->op == BXK_OP_FOR;
  uint32_t var = 0, cur = 0, ty = 0;
  if (isfor) {
    var = bxvk_fvar(e, i->type);
    ty = bxvk_reg(e, i->type);
    bxvk_ins(&e->fn, SpvOpStore, 2, var, V(e, i->arg[0]));
  }
  branch(e, header);
  label(e, header);
  if (isfor) {
    cur = load(e, ty, var);
    uint32_t c = bxvk_op2(e, bxk_type_is_signed(i->type) ? SpvOpSLessThan : SpvOpULessThan,
                          bxvk_reg(e, BXK_BOOL), cur, V(e, i->arg[1]));
    bxvk_ins(&e->fn, SpvOpLoopMerge, 3, merge, cont, SpvLoopControlMaskNone);
    bxvk_ins(&e->fn, SpvOpBranchConditional, 3, c, body, merge);
    e->val[i->res] = cur;
    e->vty[i->res] = i->type;
  } else {
    bxvk_ins(&e->fn, SpvOpLoopMerge, 3, merge, cont, SpvLoopControlMaskNone);
    branch(e, body);
  }
  label(e, body);
  e->loops[e->depth].merge = merge;
  e->loops[e->depth].cont = cont;
  e->depth++;
  block(e, i->blk[0]);
  e->depth--;
  if (!e->term) branch(e, cont);
  label(e, cont);
  if (isfor) bxvk_ins(&e->fn, SpvOpStore, 2, var, bxvk_op2(e, SpvOpIAdd, ty, cur, V(e, i->arg[2])));
  branch(e, header);
  label(e, merge);
}

static void inst(struct bxvk_em *e, const struct bxk_inst *i) {
  const struct bxk_opinfo *oi = &bxk_opinfo[i->op];
  const struct bxk_kernel *k = e->k;
  uint32_t r = 0, j = (uint32_t)i->imm.u;
  unsigned at = i->arg[0] ? e->vty[i->arg[0]] : BXK_VOID;
  switch (oi->cls) {
  case BXK_C_CONST: r = bxvk_const(e, i->type, i->imm); break;
  case BXK_C_SCALAR: r = scalar(e, j); break;
  case BXK_C_TOPO: r = topo(e, j); break;
  case BXK_C_ARITH: case BXK_C_LOGIC: case BXK_C_SHIFT: case BXK_C_CMP:
    r = bxvk_binop(e, i, i->op, at, V(e, i->arg[0]), V(e, i->arg[1]));
    break;
  case BXK_C_NUM1: case BXK_C_FLOAT1: case BXK_C_NOT:
    r = bxvk_unop(e, i, i->op, at, V(e, i->arg[0]));
    break;
  case BXK_C_SELECT:
    r = bxvk_sel(e, bxvk_reg(e, i->type), V(e, i->arg[0]), V(e, i->arg[1]), V(e, i->arg[2]));
    break;
  case BXK_C_CAST: r = bxvk_cast(e, i->type, at, V(e, i->arg[0])); break;
  case BXK_C_QUERY: r = meta(e, j, i->op == BXK_OP_LEN ? 0 : 1, 0); break;
  case BXK_C_AXIS: r = meta(e, j, i->op == BXK_OP_SHAPE ? 4 : 12, V(e, i->arg[0])); break;
  case BXK_C_LOAD: r = load_elem(e, j, V(e, i->arg[0])); break;
  case BXK_C_STORE: store_elem(e, j, V(e, i->arg[0]), V(e, i->arg[1])); break;
  case BXK_C_SLOAD: r = load(e, bxvk_reg(e, k->shared[j].elem), shared_ptr(e, j, V(e, i->arg[0]))); break;
  case BXK_C_SSTORE: bxvk_ins(&e->fn, SpvOpStore, 2, shared_ptr(e, j, V(e, i->arg[0])), V(e, i->arg[1])); break;
  case BXK_C_GET: r = load(e, bxvk_reg(e, k->local[j]), local_ptr(e, j)); break;
  case BXK_C_SET: bxvk_ins(&e->fn, SpvOpStore, 2, local_ptr(e, j), V(e, i->arg[0])); break;
  case BXK_C_IF: emit_if(e, i); return;
  case BXK_C_FOR: case BXK_C_LOOP: emit_loop(e, i); return;
  case BXK_C_JUMP:
    if (i->op == BXK_OP_RETURN) {
      bxvk_ins(&e->fn, SpvOpReturn, 0);
      e->term = true;
    } else {
      branch(e, i->op == BXK_OP_BREAK ? e->loops[e->depth - 1].merge : e->loops[e->depth - 1].cont);
    }
    return;
  case BXK_C_SYNC:
    bxvk_ins(&e->fn, SpvOpControlBarrier, 3, bxvk_const_u32(e, SpvScopeWorkgroup),
             bxvk_const_u32(e, SpvScopeWorkgroup),
             bxvk_const_u32(e, SpvMemorySemanticsAcquireReleaseMask | SpvMemorySemanticsWorkgroupMemoryMask));
    return;
  }
  if (i->res) e->val[i->res] = r, e->vty[i->res] = i->type;
}

static void block(struct bxvk_em *e, const struct bxk_block *b) {
  if (!b) return;
  for (const struct bxk_inst *i = b->first; i && !e->failed; i = i->next) inst(e, i);
}

/* ------------------------------------------------------------- module */

static void cat(struct bxvk_words *to, const struct bxvk_words *from) {
  for (size_t j = 0; j < from->n; j++) bxvk_put(to, from->w[j]);
  if (from->oom) to->oom = true;
}

static void em_free(struct bxvk_em *e) {
  free(e->annot.w), free(e->types.w), free(e->vars.w), free(e->fn.w);
  free(e->consts), free(e->val), free(e->vty);
  free(e->bind_var), free(e->bind_ptr), free(e->bind_off), free(e->shared_var), free(e->local_var);
}

bool bxvk_emit(const struct bxk_kernel *k, struct bxvk_spirv *out, struct bxk_diags *ds) {
  memset(out, 0, sizeof *out);
  if (!k) {
    bxk_diag_add(ds, BXK_E_LOWER, noloc, 0, "no kernel to lower to SPIR-V");
    return false;
  }
  if (!bxk_verify(k, ds)) return false;
  struct bxk_loc at;
  if (bxk_kernel_uses_type(k, BXK_BF16, &at)) { /* no bf16 in SPIR-V 1.3 (SPV_KHR_bfloat16 is new) */
    bxk_diag_add(ds, BXK_E_LOWER, at, 0, "kernel %s uses bf16, which the SPIR-V lowering cannot compile yet", k->name);
    return false;
  }
  struct bxvk_em e = {.k = k, .ds = ds, .next = 1};
  if (k->nscalar > BXVK_MAX_SCALARS) {
    bxvk_fail(&e, NULL, "has %u scalar parameters; the Vulkan lowering passes at most %u (push constants)",
              k->nscalar, BXVK_MAX_SCALARS);
    return false;
  }
  size_t nb = k->nbind + 1u, ns = k->nshared + 1u, nl = k->nlocal + 1u;
  e.val = calloc(k->nval + 1u, sizeof *e.val);
  e.vty = calloc(k->nval + 1u, 1);
  e.bind_var = calloc(nb, 4), e.bind_ptr = calloc(nb, 4), e.bind_off = calloc(nb, 4);
  e.shared_var = calloc(ns, 4), e.local_var = calloc(nl, 4);
  if (!e.val || !e.vty || !e.bind_var || !e.bind_ptr || !e.bind_off || !e.shared_var || !e.local_var) {
    em_free(&e);
    bxk_diag_add(ds, BXK_E_OOM, noloc, 0, "out of memory lowering %s to SPIR-V", k->name);
    return false;
  }
  bxvk_ins(&e.types, SpvOpTypeVoid, 1, e.t_void = bxvk_id(&e));
  uint32_t fnty = bxvk_id(&e), fn = bxvk_id(&e), entry = bxvk_id(&e);
  bxvk_ins(&e.types, SpvOpTypeFunction, 2, fnty, e.t_void);
  e.glsl = bxvk_id(&e);
  globals(&e);
  /* the entry block: locals, then each binding's view offset, once */
  for (uint32_t j = 0; j < k->nlocal; j++) e.local_var[j] = bxvk_fvar(&e, k->local[j]);
  for (uint32_t j = 0; j < k->nbind; j++) e.bind_off[j] = meta(&e, j, 2, 0);
  block(&e, &k->body);
  if (!e.term) bxvk_ins(&e.fn, SpvOpReturn, 0);
  for (uint32_t j = 0; j < k->nshared; j++) {
    unsigned t = k->shared[j].elem;
    out->shared_bytes += k->shared[j].count * (t == BXK_BOOL || t == BXK_U8 ? 1u : bxk_type_bits(t) / 8);
  }

  struct bxvk_words m = {0};
  bxvk_put(&m, SpvMagicNumber);
  bxvk_put(&m, 0x00010300);     /* SPIR-V 1.3: Vulkan 1.1 */
  bxvk_put(&m, 0);              /* generator: none registered */
  bxvk_put(&m, e.next);         /* bound */
  bxvk_put(&m, 0);
  bxvk_ins(&m, SpvOpCapability, 1, SpvCapabilityShader);
  static const struct { unsigned need; SpvCapability cap; } caps[] = {
      {BXVK_NEED(INT8), SpvCapabilityInt8},
      {BXVK_NEED(STORAGE8), SpvCapabilityStorageBuffer8BitAccess},
      {BXVK_NEED(FLOAT16), SpvCapabilityFloat16},
      {BXVK_NEED(STORAGE16), SpvCapabilityStorageBuffer16BitAccess},
      {BXVK_NEED(INT64), SpvCapabilityInt64},
      {BXVK_NEED(FLOAT64), SpvCapabilityFloat64},
  };
  for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++)
    if (e.needs & caps[c].need) bxvk_ins(&m, SpvOpCapability, 1, caps[c].cap);
  if (e.needs & BXVK_NEED(STORAGE8)) {
    bxvk_put(&m, ((1 + str_words("SPV_KHR_8bit_storage")) << 16) | SpvOpExtension);
    put_str(&m, "SPV_KHR_8bit_storage");
  }
  bxvk_put(&m, ((2 + str_words("GLSL.std.450")) << 16) | SpvOpExtInstImport);
  bxvk_put(&m, e.glsl);
  put_str(&m, "GLSL.std.450");
  bxvk_ins(&m, SpvOpMemoryModel, 2, SpvAddressingModelLogical, SpvMemoryModelGLSL450);
  bxvk_put(&m, ((3 + str_words("main") + 3) << 16) | SpvOpEntryPoint);
  bxvk_put(&m, SpvExecutionModelGLCompute);
  bxvk_put(&m, fn);
  put_str(&m, "main");
  bxvk_put(&m, e.in_gid), bxvk_put(&m, e.in_lid), bxvk_put(&m, e.in_wid);
  bxvk_ins(&m, SpvOpExecutionMode, 5, fn, SpvExecutionModeLocalSize, 1, 1, 1);
  cat(&m, &e.annot);
  cat(&m, &e.types);
  bxvk_ins(&m, SpvOpFunction, 4, e.t_void, fn, SpvFunctionControlMaskNone, fnty);
  bxvk_ins(&m, SpvOpLabel, 1, entry);
  cat(&m, &e.vars);
  cat(&m, &e.fn);
  bxvk_ins(&m, SpvOpFunctionEnd, 0);
  bool oom = m.oom || e.annot.oom || e.types.oom || e.vars.oom || e.fn.oom;
  bool failed = e.failed;
  em_free(&e);
  if (failed || oom) {
    if (oom) bxk_diag_add(ds, BXK_E_OOM, noloc, 0, "out of memory lowering %s to SPIR-V", k->name);
    free(m.w);
    out->shared_bytes = 0;
    return false;
  }
  out->words = m.w;
  out->nwords = m.n;
  out->needs = e.needs;
  out->nbind = k->nbind;
  out->nscalar = k->nscalar;
  return true;
}

void bxvk_spirv_free(struct bxvk_spirv *m) {
  if (!m) return;
  free(m->words);
  memset(m, 0, sizeof *m);
}
