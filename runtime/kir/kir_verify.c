/* kir_verify.c — the kernel IR's rules, checked; every problem reported
 * (as data, with the instruction's location), checking goes on after one.
 *
 * Rules (docs/kernels.md "Verifier"):
 *   - declarations: element/scalar/local types are real types, shared
 *     arrays have a count;
 *   - every operand is defined, once, before its use, in the using block
 *     or one enclosing it (dominance in structured form); a `for`'s
 *     induction value is visible in its body only;
 *   - operand and result types follow the op's class (bxk_ops.h); indices,
 *     axes and topology values are u32; stores go to `mut` bindings;
 *     binding/scalar/shared/local indices are in range;
 *   - `break`/`continue` only inside a loop, nothing after a jump in the
 *     same block; a `for` step is a constant > 0;
 *   - `sync_cube` only where all units of a cube arrive together: not under
 *     a condition or loop bound that may differ between units, not in a
 *     loop that units may leave early, not after a `return` some units may
 *     take.  "May differ" is a cheap taint: values derived from the UNIT_ and
 *     ABSOLUTE_ builtins, from locals or shared memory, or from loads at
 *     such indices.  Conservative: it rejects some uniform code. */
#include <stdlib.h>
#include <string.h>

#include "kir_internal.h"

/* A loop enclosing the walk, with the divergence at its entry (a jump
 * under a condition that diverges *inside* the loop makes units leave it
 * at different times). */
struct lframe {
  const struct bxk_inst *loop;
  bool entry_vary;
};

struct vstate {
  const struct bxk_kernel *k;
  struct bxk_diags *ds;
  uint32_t nval;
  const struct bxk_inst **def;  /* defining instruction, from the pre-pass */
  uint8_t *live;                /* 1 while in scope */
  uint8_t *seen;                /* 1 once defined in the walk */
  uint8_t *vary;                /* may differ between units of a cube */
  struct { const struct bxk_inst *loop; bool vexit; } *loops;
  uint32_t nloops, caploops;
  struct lframe lstack[BXK_MAX_DEPTH + 2];
  int loop_depth;
  bool ok, too_deep, vreturn;
};

#define ERR(S, e, i, v, ...) \
  ((S)->ok = false, bxk_diag_add((S)->ds, e, (i)->loc, v, __VA_ARGS__))

static const char *opname(unsigned op) { return bxk_op_valid(op) ? bxk_opinfo[op].name : "?"; }
static const char *tn(unsigned t) { return bxk_type_name(t); }

/* ---------------------------------------------------------- pre-pass */

static void collect(struct vstate *S, const struct bxk_block *b, int depth) {
  if (depth > BXK_MAX_DEPTH) {
    S->too_deep = true;
    return;
  }
  for (const struct bxk_inst *i = b->first; i; i = i->next) {
    if (i->res && i->res <= S->nval && !S->def[i->res]) S->def[i->res] = i;
    for (int j = 0; j < 2; j++)
      if (i->blk[j]) collect(S, i->blk[j], depth + 1);
  }
}

/* --------------------------------------------------------------- walk */

/* Type of operand j, or BXK_VOID after reporting why it cannot be used. */
static enum bxk_type operand(struct vstate *S, const struct bxk_inst *i, int j) {
  bxk_val v = i->arg[j];
  if (!v || v > S->nval || !S->def[v]) {
    ERR(S, BXK_E_UNDEFINED, i, v, "operand %d of %s: use of undefined value %%%u", j + 1,
        opname(i->op), v);
    return BXK_VOID;
  }
  if (!S->live[v]) {
    ERR(S, BXK_E_DOMINANCE, i, v,
        S->seen[v] ? "operand %d of %s: value %%%u is used outside the block that defines it"
                   : "operand %d of %s: value %%%u is used before its definition",
        j + 1, opname(i->op), v);
    return BXK_VOID;
  }
  return (enum bxk_type)S->def[v]->type;
}

static bool vary(const struct vstate *S, bxk_val v) { return v && v <= S->nval && S->vary[v]; }

static bool numeric(unsigned t) { return bxk_type_is_int(t) || bxk_type_is_float(t); }

static bool index_ok(struct vstate *S, const struct bxk_inst *i, uint32_t n, const char *what) {
  if (i->imm.u < n) return true;
  ERR(S, BXK_E_RANGE, i, 0, "%s: %s %llu out of range (kernel has %u)", opname(i->op), what,
      (unsigned long long)i->imm.u, n);
  return false;
}

static void want(struct vstate *S, const struct bxk_inst *i, enum bxk_type found, enum bxk_type t,
                 const char *what) {
  if (found != BXK_VOID && found != t)
    ERR(S, BXK_E_TYPE, i, i->res, "%s of %s must be %s, found %s", what, opname(i->op), tn(t),
        tn(found));
}

static void result(struct vstate *S, const struct bxk_inst *i, enum bxk_type t) {
  if (t != BXK_VOID && i->type != t)
    ERR(S, BXK_E_TYPE, i, i->res, "result of %s must be %s, found %s", opname(i->op), tn(t),
        tn(i->type));
}

static void walk(struct vstate *S, const struct bxk_block *b, bool cvary, int depth);

static void define(struct vstate *S, const struct bxk_inst *i, bool v) {
  if (i->res > S->nval) return;
  if (S->seen[i->res]) {
    ERR(S, BXK_E_REDEFINED, i, i->res, "value %%%u is defined twice", i->res);
    return;
  }
  S->seen[i->res] = S->live[i->res] = 1;
  S->vary[i->res] = v;
}

static void undefine_block(struct vstate *S, const struct bxk_block *b) {
  for (const struct bxk_inst *i = b->first; i; i = i->next)
    if (i->res && i->res <= S->nval && S->def[i->res] == i) S->live[i->res] = 0;
}

static bool *loop_vexit(struct vstate *S, const struct bxk_inst *loop) {
  for (uint32_t j = 0; j < S->nloops; j++)
    if (S->loops[j].loop == loop) return &S->loops[j].vexit;
  if (S->nloops == S->caploops) {
    uint32_t cap = S->caploops ? S->caploops * 2 : 8;
    void *p = realloc(S->loops, cap * sizeof *S->loops);
    if (!p) return NULL;
    S->loops = p;
    S->caploops = cap;
  }
  S->loops[S->nloops].loop = loop;
  S->loops[S->nloops].vexit = false;
  return &S->loops[S->nloops++].vexit;
}


static void check(struct vstate *S, const struct bxk_inst *i, bool cvary, int depth) {
  unsigned op = i->op;
  if (!bxk_op_valid(op)) {
    ERR(S, BXK_E_MALFORMED, i, i->res, "unknown opcode %u", op);
    return;
  }
  const struct bxk_opinfo *oi = &bxk_opinfo[op];
  enum bxk_type a[3] = {BXK_VOID, BXK_VOID, BXK_VOID};
  for (int j = 0; j < 3; j++) {
    if (j < oi->nargs) a[j] = operand(S, i, j);
    else if (i->arg[j])
      ERR(S, BXK_E_MALFORMED, i, i->res, "%s takes %d operands, found operand %d", oi->name,
          oi->nargs, j + 1);
  }
  for (int j = 0; j < 2; j++)
    if ((j < oi->nblk) != (i->blk[j] != NULL)) {
      ERR(S, BXK_E_MALFORMED, i, i->res, "%s takes %d blocks", oi->name, oi->nblk);
      return;
    }
  bool produces = oi->cls <= BXK_C_AXIS || oi->cls == BXK_C_LOAD || oi->cls == BXK_C_SLOAD ||
                  oi->cls == BXK_C_GET || oi->cls == BXK_C_FOR;
  if (produces && (!i->res || i->type == BXK_VOID || i->type >= BXK_TYPE_COUNT)) {
    ERR(S, BXK_E_MALFORMED, i, i->res, "%s must define a value of a non-void type", oi->name);
    return;
  }
  if (!produces && (i->res || i->type != BXK_VOID)) {
    ERR(S, BXK_E_MALFORMED, i, i->res, "%s defines no value, found %%%u: %s", oi->name, i->res,
        tn(i->type));
    return;
  }
  if (i->res > S->nval) {
    ERR(S, BXK_E_MALFORMED, i, i->res, "value id %%%u beyond the kernel's %u", i->res, S->nval);
    return;
  }
  const struct bxk_kernel *k = S->k;
  bool v = vary(S, i->arg[0]) || vary(S, i->arg[1]) || vary(S, i->arg[2]);
  switch (oi->cls) {
  case BXK_C_CONST:
    /* the payload must be what the type can hold: what is printed and
     * serialized is then what every lowering computes with */
    if (!bxk_type_is_float(i->type) && bxk_lit_norm((enum bxk_type)i->type, i->imm).u != i->imm.u)
      ERR(S, BXK_E_TYPE, i, i->res, "constant %%%u: %lld does not fit %s", i->res,
          (long long)i->imm.i, tn(i->type));
    break;
  case BXK_C_SCALAR:
    if (index_ok(S, i, k->nscalar, "scalar")) result(S, i, k->scalar[i->imm.u]);
    break;
  case BXK_C_TOPO:
    if (index_ok(S, i, BXK_TOPO_COUNT, "builtin")) v = bxk_topo_varies((unsigned)i->imm.u);
    result(S, i, BXK_INDEX);
    break;
  case BXK_C_ARITH: case BXK_C_LOGIC: case BXK_C_SHIFT: case BXK_C_CMP:
    if (a[0] != BXK_VOID && a[1] != BXK_VOID && a[0] != a[1]) {
      ERR(S, BXK_E_TYPE, i, i->res, "operands of %s differ: %s and %s", oi->name, tn(a[0]), tn(a[1]));
      break;
    }
    if (a[0] == BXK_VOID) break;
    {
      bool fits = oi->cls == BXK_C_ARITH ? numeric(a[0])
                : oi->cls == BXK_C_LOGIC ? (a[0] == BXK_BOOL || bxk_type_is_int(a[0]))
                : oi->cls == BXK_C_SHIFT ? bxk_type_is_int(a[0])
                : (a[0] != BXK_BOOL || op == BXK_OP_EQ || op == BXK_OP_NE);
      if (!fits) ERR(S, BXK_E_TYPE, i, i->res, "%s does not take %s operands", oi->name, tn(a[0]));
      result(S, i, oi->cls == BXK_C_CMP ? BXK_BOOL : a[0]);
    }
    break;
  case BXK_C_NUM1: case BXK_C_FLOAT1: case BXK_C_NOT:
    if (a[0] == BXK_VOID) break;
    if (oi->cls == BXK_C_NUM1 ? !numeric(a[0])
        : oi->cls == BXK_C_FLOAT1 ? !bxk_type_is_float(a[0])
        : !(a[0] == BXK_BOOL || bxk_type_is_int(a[0])))
      ERR(S, BXK_E_TYPE, i, i->res, "%s expects %s operand, found %s", oi->name,
          oi->cls == BXK_C_NUM1 ? "a numeric" : oi->cls == BXK_C_FLOAT1 ? "a float" : "a bool or int",
          tn(a[0]));
    result(S, i, a[0]);
    break;
  case BXK_C_SELECT:
    want(S, i, a[0], BXK_BOOL, "condition");
    if (a[1] != BXK_VOID && a[2] != BXK_VOID && a[1] != a[2])
      ERR(S, BXK_E_TYPE, i, i->res, "operands of select differ: %s and %s", tn(a[1]), tn(a[2]));
    else result(S, i, a[1]);
    break;
  case BXK_C_CAST: break;
  case BXK_C_QUERY: case BXK_C_AXIS:
    index_ok(S, i, k->nbind, "binding");
    if (oi->cls == BXK_C_AXIS) want(S, i, a[0], BXK_INDEX, "axis");
    result(S, i, BXK_INDEX);
    break;
  case BXK_C_LOAD: case BXK_C_STORE:
    want(S, i, a[0], BXK_INDEX, "index");
    if (!index_ok(S, i, k->nbind, "binding")) break;
    if (oi->cls == BXK_C_LOAD) result(S, i, k->bind[i->imm.u].elem);
    else {
      if (!k->bind[i->imm.u].mut)
        ERR(S, BXK_E_READONLY, i, 0, "store to binding b%llu, which is not mut",
            (unsigned long long)i->imm.u);
      want(S, i, a[1], k->bind[i->imm.u].elem, "stored value");
    }
    break;
  case BXK_C_SLOAD: case BXK_C_SSTORE:
    v = true;
    want(S, i, a[0], BXK_INDEX, "index");
    if (!index_ok(S, i, k->nshared, "shared array")) break;
    if (oi->cls == BXK_C_SLOAD) result(S, i, k->shared[i->imm.u].elem);
    else want(S, i, a[1], k->shared[i->imm.u].elem, "stored value");
    break;
  case BXK_C_GET: case BXK_C_SET:
    v = true;
    if (!index_ok(S, i, k->nlocal, "local")) break;
    if (oi->cls == BXK_C_GET) result(S, i, k->local[i->imm.u]);
    else want(S, i, a[0], k->local[i->imm.u], "value");
    break;
  case BXK_C_IF:
    want(S, i, a[0], BXK_BOOL, "condition");
    for (int j = 0; j < 2; j++) walk(S, i->blk[j], cvary || vary(S, i->arg[0]), depth + 1);
    break;
  case BXK_C_FOR: case BXK_C_LOOP: {
    bool lv = cvary;
    if (oi->cls == BXK_C_FOR) {
      if (!bxk_type_is_int(a[0]) && a[0] != BXK_VOID)
        ERR(S, BXK_E_TYPE, i, i->res, "for bounds must be integers, found %s", tn(a[0]));
      want(S, i, a[1], a[0], "upper bound");
      want(S, i, a[2], a[0], "step");
      result(S, i, a[0]);
      const struct bxk_inst *st = i->arg[2] && i->arg[2] <= S->nval ? S->def[i->arg[2]] : NULL;
      if (st && (st->op != BXK_OP_CONST || !(bxk_type_is_signed(st->type) ? st->imm.i > 0 : st->imm.u > 0)))
        ERR(S, BXK_E_MALFORMED, i, i->res, "for step %%%u must be a constant > 0", i->arg[2]);
      lv = lv || vary(S, i->arg[0]) || vary(S, i->arg[1]);
      define(S, i, lv);
    }
    bool *vx = loop_vexit(S, i);
    S->lstack[S->loop_depth].loop = i;
    S->lstack[S->loop_depth].entry_vary = lv;
    S->loop_depth++;
    walk(S, i->blk[0], lv || (vx && *vx), depth + 1);
    S->loop_depth--;
    if (oi->cls == BXK_C_FOR && i->res <= S->nval && S->def[i->res] == i) S->live[i->res] = 0;
    return;
  }
  case BXK_C_JUMP:
    if (op == BXK_OP_RETURN) {
      if (cvary) S->vreturn = true;
    } else if (S->loop_depth == 0) {
      ERR(S, BXK_E_CONTROL, i, 0, "%s outside a loop", oi->name);
    } else if (cvary && !S->lstack[S->loop_depth - 1].entry_vary) {
      bool *vx = loop_vexit(S, S->lstack[S->loop_depth - 1].loop);
      if (vx) *vx = true;
    }
    break;
  case BXK_C_SYNC:
    if (cvary || S->vreturn)
      ERR(S, BXK_E_BARRIER, i, 0,
          S->vreturn && !cvary ? "sync_cube after a return that only some units may take"
                               : "sync_cube where units of a cube may diverge (under a condition, "
                                 "loop bound or loop exit that may differ between units)");
    break;
  }
  if (i->res && oi->cls != BXK_C_FOR) define(S, i, v);
}

static void walk(struct vstate *S, const struct bxk_block *b, bool cvary, int depth) {
  if (depth > BXK_MAX_DEPTH) return; /* reported once by the caller */
  bool jumped = false;
  for (const struct bxk_inst *i = b->first; i; i = i->next) {
    if (jumped) {
      ERR(S, BXK_E_CONTROL, i, i->res, "%s after a jump in the same block is unreachable",
          opname(i->op));
      jumped = false; /* once per block */
      break;
    }
    check(S, i, cvary, depth);
    if (bxk_op_valid(i->op) && bxk_opinfo[i->op].cls == BXK_C_JUMP) jumped = true;
  }
  undefine_block(S, b);
}

static void check_decls(struct vstate *S) {
  const struct bxk_kernel *k = S->k;
  static const struct bxk_inst none;
  for (uint32_t j = 0; j < k->nbind; j++)
    if (k->bind[j].elem == BXK_VOID || k->bind[j].elem >= BXK_TYPE_COUNT)
      ERR(S, BXK_E_TYPE, &none, 0, "binding b%u: element type %s is not a storable type", j,
          tn(k->bind[j].elem));
  for (uint32_t j = 0; j < k->nscalar; j++)
    if (k->scalar[j] == BXK_VOID || k->scalar[j] >= BXK_TYPE_COUNT)
      ERR(S, BXK_E_TYPE, &none, 0, "scalar s%u: type %s is not a value type", j, tn(k->scalar[j]));
  for (uint32_t j = 0; j < k->nshared; j++)
    if (k->shared[j].elem == BXK_VOID || k->shared[j].elem >= BXK_TYPE_COUNT || !k->shared[j].count)
      ERR(S, BXK_E_TYPE, &none, 0, "shared sh%u: needs a value type and a count > 0, found %s[%u]",
          j, tn(k->shared[j].elem), k->shared[j].count);
  for (uint32_t j = 0; j < k->nlocal; j++)
    if (k->local[j] == BXK_VOID || k->local[j] >= BXK_TYPE_COUNT)
      ERR(S, BXK_E_TYPE, &none, 0, "local v%u: type %s is not a value type", j, tn(k->local[j]));
}

bool bxk_verify(const struct bxk_kernel *k, struct bxk_diags *ds) {
  static const struct bxk_inst none;
  struct vstate S = {.k = k, .ds = ds, .nval = k->nval, .ok = true};
  if (k->oom) {
    ERR(&S, BXK_E_OOM, &none, 0, "kernel %s: out of memory while it was built", k->name);
    return false;
  }
  size_t n = (size_t)k->nval + 1;
  S.def = calloc(n, sizeof *S.def);
  S.live = calloc(n, 3);
  if (!S.def || !S.live) {
    free(S.def);
    free(S.live);
    ERR(&S, BXK_E_OOM, &none, 0, "out of memory verifying kernel %s", k->name);
    return false;
  }
  S.seen = S.live + n;
  S.vary = S.live + 2 * n;
  check_decls(&S);
  collect(&S, &k->body, 0);
  if (S.too_deep) {
    ERR(&S, BXK_E_MALFORMED, &none, 0, "blocks nested deeper than %d", BXK_MAX_DEPTH);
  } else {
    walk(&S, &k->body, false, 0);
    /* The loops' early exits are known only after their bodies: barriers in
     * a loop that some units leave early are found by walking again. */
    bool again = false;
    for (uint32_t j = 0; j < S.nloops; j++) again |= S.loops[j].vexit;
    if (again && S.ok) {
      memset(S.live, 0, 3 * n);
      S.vreturn = false;
      walk(&S, &k->body, false, 0);
    }
  }
  /* After the walk, when nothing else is wrong: every value id is
   * defined by an instruction.  Besides being what the
   * builder makes, this is what lets the deserializer bound the value
   * count by the blob's size (each definition takes bytes), so a verified
   * kernel always reads back (a fuzzer found one declaring 3 values and
   * defining none). */
  for (uint32_t v = 1; S.ok && v <= k->nval; v++)
    if (!S.def[v]) {
      ERR(&S, BXK_E_MALFORMED, &none, v, "kernel %s declares %u values, but %%%u is defined by no instruction",
          k->name, k->nval, v);
      break;
    }
  free(S.def);
  free(S.live);
  free(S.loops);
  return S.ok;
}
