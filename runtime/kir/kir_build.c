/* kir_build.c — the builder: appends instructions to a block.
 *
 * It infers result types so callers (the `#[cube]` lowering, Fusion) write
 * little, but checks nothing: malformed input becomes a malformed kernel
 * that bxk_verify reports, so one place owns the rules. */
#include <string.h>

#include "kir_internal.h"

struct bxk_builder bxk_builder_at(struct bxk_kernel *k, struct bxk_block *blk) {
  return (struct bxk_builder){.k = k, .blk = blk ? blk : &k->body};
}

struct bxk_inst *bxk_raw(struct bxk_builder *b, enum bxk_op op, enum bxk_type type, bxk_val res,
                         bxk_val a0, bxk_val a1, bxk_val a2, union bxk_lit imm) {
  struct bxk_kernel *k = b->k;
  struct bxk_inst *i = bxk_arena_alloc(k, sizeof *i);
  if (!i) return NULL;
  i->op = (uint8_t)op;
  i->type = (uint8_t)type;
  if (!res && type != BXK_VOID) res = ++k->nval;
  if (res > k->nval) k->nval = res;
  if (res && res < BXK_MAX_VALUES) { /* beyond: the table is not grown (hostile input) */
    if (res >= k->cap_vtype) {
      uint32_t cap = k->cap_vtype;
      while (res >= cap) cap = cap ? cap * 2 : 64;
      uint8_t *p = bxk_arena_alloc(k, cap);
      if (!p) return NULL;
      if (k->cap_vtype) memcpy(p, k->vtype, k->cap_vtype);
      k->vtype = p;
      k->cap_vtype = cap;
    }
    k->vtype[res] = (uint8_t)type;
  }
  i->res = res;
  i->arg[0] = a0;
  i->arg[1] = a1;
  i->arg[2] = a2;
  i->imm = imm;
  i->loc = b->loc;
  if (bxk_op_valid(op))
    for (int j = 0; j < bxk_opinfo[op].nblk; j++) {
      i->blk[j] = bxk_arena_alloc(k, sizeof *i->blk[j]);
      if (!i->blk[j]) return NULL;
    }
  struct bxk_block *blk = b->blk;
  if (blk->last) blk->last->next = i;
  else blk->first = i;
  blk->last = i;
  blk->n++;
  return i;
}

static union bxk_lit idx(int64_t i) { return (union bxk_lit){.i = i}; }
static const union bxk_lit NOIMM;

static bxk_val res(struct bxk_inst *i) { return i ? i->res : 0; }

bxk_val bxk_const_f(struct bxk_builder *b, enum bxk_type t, double v) {
  return res(bxk_raw(b, BXK_OP_CONST, t, 0, 0, 0, 0, bxk_lit_norm(t, (union bxk_lit){.f = v})));
}

bxk_val bxk_const_i(struct bxk_builder *b, enum bxk_type t, int64_t v) {
  union bxk_lit l = {.i = v};
  if (bxk_type_is_float(t)) l.f = (double)v;
  return res(bxk_raw(b, BXK_OP_CONST, t, 0, 0, 0, 0, bxk_lit_norm(t, l)));
}

bxk_val bxk_scalar(struct bxk_builder *b, int index) {
  enum bxk_type t = index >= 0 && (uint32_t)index < b->k->nscalar ? b->k->scalar[index] : BXK_VOID;
  return res(bxk_raw(b, BXK_OP_SCALAR, t == BXK_VOID ? BXK_I32 : t, 0, 0, 0, 0, idx(index)));
}

bxk_val bxk_topo(struct bxk_builder *b, enum bxk_topo t) {
  return res(bxk_raw(b, BXK_OP_TOPO, BXK_INDEX, 0, 0, 0, 0, idx(t)));
}

/* The type operand x was given, for inference (void when unknown). */
static enum bxk_type ty(struct bxk_builder *b, bxk_val x) { return bxk_value_type(b->k, x); }

static enum bxk_type nonvoid(enum bxk_type t) { return t == BXK_VOID ? BXK_I32 : t; }

bxk_val bxk_bin(struct bxk_builder *b, enum bxk_op op, bxk_val x, bxk_val y) {
  enum bxk_type t = bxk_op_valid(op) && bxk_opinfo[op].cls == BXK_C_CMP ? BXK_BOOL : nonvoid(ty(b, x));
  return res(bxk_raw(b, op, t, 0, x, y, 0, NOIMM));
}

bxk_val bxk_un(struct bxk_builder *b, enum bxk_op op, bxk_val x) {
  return res(bxk_raw(b, op, nonvoid(ty(b, x)), 0, x, 0, 0, NOIMM));
}

bxk_val bxk_select(struct bxk_builder *b, bxk_val c, bxk_val x, bxk_val y) {
  return res(bxk_raw(b, BXK_OP_SELECT, nonvoid(ty(b, x)), 0, c, x, y, NOIMM));
}

bxk_val bxk_cast(struct bxk_builder *b, enum bxk_type to, bxk_val x) {
  return res(bxk_raw(b, BXK_OP_CAST, to, 0, x, 0, 0, NOIMM));
}

bxk_val bxk_len(struct bxk_builder *b, int binding) {
  return res(bxk_raw(b, BXK_OP_LEN, BXK_INDEX, 0, 0, 0, 0, idx(binding)));
}
bxk_val bxk_rank(struct bxk_builder *b, int binding) {
  return res(bxk_raw(b, BXK_OP_RANK, BXK_INDEX, 0, 0, 0, 0, idx(binding)));
}
bxk_val bxk_shape(struct bxk_builder *b, int binding, bxk_val axis) {
  return res(bxk_raw(b, BXK_OP_SHAPE, BXK_INDEX, 0, axis, 0, 0, idx(binding)));
}
bxk_val bxk_stride(struct bxk_builder *b, int binding, bxk_val axis) {
  return res(bxk_raw(b, BXK_OP_STRIDE, BXK_INDEX, 0, axis, 0, 0, idx(binding)));
}

bxk_val bxk_load(struct bxk_builder *b, int binding, bxk_val index) {
  enum bxk_type t = binding >= 0 && (uint32_t)binding < b->k->nbind ? b->k->bind[binding].elem : BXK_VOID;
  return res(bxk_raw(b, BXK_OP_LOAD, nonvoid(t), 0, index, 0, 0, idx(binding)));
}
void bxk_store(struct bxk_builder *b, int binding, bxk_val index, bxk_val v) {
  bxk_raw(b, BXK_OP_STORE, BXK_VOID, 0, index, v, 0, idx(binding));
}

bxk_val bxk_sload(struct bxk_builder *b, int shared, bxk_val index) {
  enum bxk_type t = shared >= 0 && (uint32_t)shared < b->k->nshared ? b->k->shared[shared].elem : BXK_VOID;
  return res(bxk_raw(b, BXK_OP_SLOAD, nonvoid(t), 0, index, 0, 0, idx(shared)));
}
void bxk_sstore(struct bxk_builder *b, int shared, bxk_val index, bxk_val v) {
  bxk_raw(b, BXK_OP_SSTORE, BXK_VOID, 0, index, v, 0, idx(shared));
}

bxk_val bxk_get(struct bxk_builder *b, int local) {
  enum bxk_type t = local >= 0 && (uint32_t)local < b->k->nlocal ? b->k->local[local] : BXK_VOID;
  return res(bxk_raw(b, BXK_OP_GET, nonvoid(t), 0, 0, 0, 0, idx(local)));
}
void bxk_set(struct bxk_builder *b, int local, bxk_val v) {
  bxk_raw(b, BXK_OP_SET, BXK_VOID, 0, v, 0, 0, idx(local));
}

void bxk_if(struct bxk_builder *b, bxk_val cond, struct bxk_block **then_blk,
            struct bxk_block **else_blk) {
  struct bxk_inst *i = bxk_raw(b, BXK_OP_IF, BXK_VOID, 0, cond, 0, 0, NOIMM);
  /* Out of memory: hand out the body so callers need no checks; nothing
   * more can be appended (the arena refuses once k->oom is set) and the
   * verifier rejects the kernel. */
  if (then_blk) *then_blk = i ? i->blk[0] : &b->k->body;
  if (else_blk) *else_blk = i ? i->blk[1] : &b->k->body;
}

bxk_val bxk_for(struct bxk_builder *b, bxk_val lo, bxk_val hi, bxk_val step, struct bxk_block **body) {
  struct bxk_inst *i = bxk_raw(b, BXK_OP_FOR, nonvoid(ty(b, lo)), 0, lo, hi, step, NOIMM);
  if (body) *body = i ? i->blk[0] : &b->k->body; /* out of memory: see bxk_if */
  return res(i);
}

void bxk_loop(struct bxk_builder *b, struct bxk_block **body) {
  struct bxk_inst *i = bxk_raw(b, BXK_OP_LOOP, BXK_VOID, 0, 0, 0, 0, NOIMM);
  if (body) *body = i ? i->blk[0] : &b->k->body; /* out of memory: see bxk_if */
}

void bxk_break(struct bxk_builder *b) { bxk_raw(b, BXK_OP_BREAK, BXK_VOID, 0, 0, 0, 0, NOIMM); }
void bxk_continue(struct bxk_builder *b) { bxk_raw(b, BXK_OP_CONTINUE, BXK_VOID, 0, 0, 0, 0, NOIMM); }
void bxk_return(struct bxk_builder *b) { bxk_raw(b, BXK_OP_RETURN, BXK_VOID, 0, 0, 0, 0, NOIMM); }
void bxk_sync(struct bxk_builder *b) { bxk_raw(b, BXK_OP_SYNC, BXK_VOID, 0, 0, 0, 0, NOIMM); }
