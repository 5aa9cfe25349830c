/* kir_fold.c — constant folding: an arithmetic, comparison, unary or cast
 * instruction whose operands are all constants becomes a constant, with
 * the value bxk_eval_* computes (bxk_scalar.h's semantics, so folding
 * never changes what a kernel computes).
 *
 * In place: the instruction keeps its value id and type and turns into a
 * `const`, so every use stays valid and nothing is renumbered.  One pass
 * in program order folds chains, since operands come before their uses.
 * Runs on verified kernels only.
 *
 * An `if` on a constant condition is replaced by its taken block (spliced
 * in place; no block: removed), so a kernel's `#[comptime]` branches cost
 * nothing in the IR a device compiles.  Values of the spliced block keep
 * their ids and become visible further down the enclosing block, which
 * only widens their scope.  When the spliced block ends in a jump
 * (`break`, `continue`, `return`), what followed the `if` in the same
 * block is unreachable and goes too, so "nothing follows a jump" holds. */
#include <stdlib.h>
#include <string.h>

#include "kir_internal.h"

struct fstate {
  const struct bxk_inst **def;
  uint32_t nval;
  uint32_t folded;
  bool pruned;        /* a branch was dropped: ids need renumbering */
};

static const struct bxk_inst *konst(struct fstate *S, bxk_val v) {
  const struct bxk_inst *d = v && v <= S->nval ? S->def[v] : NULL;
  return d && d->op == BXK_OP_CONST ? d : NULL;
}

static bool is_jump(const struct bxk_inst *i) {
  return i->op == BXK_OP_BREAK || i->op == BXK_OP_CONTINUE || i->op == BXK_OP_RETURN;
}

/* Replaces the `if` i (after prev, or first in b) by its taken block t
 * (may be NULL); returns the instruction the walk goes on with. */
static struct bxk_inst *splice(struct bxk_block *b, struct bxk_inst *prev, struct bxk_inst *i,
                               struct bxk_block *t) {
  struct bxk_inst *after = i->next;
  b->n--;
  if (t && t->first && is_jump(t->last)) {
    /* the rest of b after the if is unreachable */
    for (struct bxk_inst *d = after; d; d = d->next) b->n--;
    after = NULL;
  }
  struct bxk_inst *head = after;
  if (t && t->first) {
    t->last->next = after;
    head = t->first;
    b->n += t->n;
    if (!after) b->last = t->last;
    t->first = t->last = NULL;
    t->n = 0;
  } else if (!after) {
    b->last = prev;
  }
  if (prev) prev->next = head;
  else b->first = head;
  return head;
}

static void fold_block(struct fstate *S, struct bxk_block *b) {
  struct bxk_inst *prev = NULL;
  for (struct bxk_inst *i = b->first; i; prev = i, i = i->next) {
  again:
    for (int j = 0; j < 2; j++)
      if (i->blk[j]) fold_block(S, i->blk[j]);
    const struct bxk_inst *cond = i->op == BXK_OP_IF ? konst(S, i->arg[0]) : NULL;
    if (cond) {
      /* the spliced instructions come next; folding them again is a no-op */
      S->folded++;
      S->pruned = true;
      i = splice(b, prev, i, i->blk[cond->imm.u ? 0 : 1]);
      if (!i) return;
      goto again;
    }
    if (i->res && i->res <= S->nval) S->def[i->res] = i;
    unsigned cls = bxk_opinfo[i->op].cls;
    const struct bxk_inst *a = konst(S, i->arg[0]), *c = konst(S, i->arg[1]);
    union bxk_lit r;
    bool ok = false;
    switch (cls) {
    case BXK_C_ARITH: case BXK_C_LOGIC: case BXK_C_SHIFT: case BXK_C_CMP:
      ok = a && c && bxk_eval_bin((enum bxk_op)i->op, (enum bxk_type)a->type, a->imm, c->imm, &r);
      break;
    case BXK_C_NUM1: case BXK_C_FLOAT1: case BXK_C_NOT:
      ok = a && bxk_eval_un((enum bxk_op)i->op, (enum bxk_type)a->type, a->imm, &r);
      break;
    case BXK_C_CAST:
      ok = a && bxk_eval_cast((enum bxk_type)i->type, (enum bxk_type)a->type, a->imm, &r);
      break;
    case BXK_C_SELECT: {
      const struct bxk_inst *pick = a ? (a->imm.u ? konst(S, i->arg[1]) : konst(S, i->arg[2])) : NULL;
      if (pick) r = pick->imm, ok = true;
      break;
    }
    default: break;
    }
    if (!ok) continue;
    i->op = BXK_OP_CONST;
    i->imm = bxk_lit_norm((enum bxk_type)i->type, r);
    i->arg[0] = i->arg[1] = i->arg[2] = 0;
    S->folded++;
  }
}

/* After a branch was dropped, some ids are defined nowhere: renumber the
 * values in program order (a verified kernel defines every id it
 * declares), operands and the builder's type view with them. */
struct renum {
  bxk_val *map;
  uint8_t *types;
  uint32_t n;
};

static void renum_block(struct renum *R, struct bxk_block *b, bool defs) {
  for (struct bxk_inst *i = b->first; i; i = i->next) {
    if (defs) {
      if (i->res) R->map[i->res] = ++R->n;
    } else {
      for (int j = 0; j < bxk_opinfo[i->op].nargs && j < 3; j++) i->arg[j] = R->map[i->arg[j]];
      if (i->res) i->res = R->map[i->res];
    }
    for (int j = 0; j < 2; j++)
      if (i->blk[j]) renum_block(R, i->blk[j], defs);
  }
}

static void renumber(struct bxk_kernel *k) {
  struct renum R = {0};
  R.map = calloc((size_t)k->nval + 1, sizeof *R.map);
  if (!R.map) return; /* ids stay sparse: the kernel then fails verification */
  renum_block(&R, &k->body, true);
  renum_block(&R, &k->body, false);
  if (k->vtype) {
    uint8_t *t = calloc((size_t)k->cap_vtype, 1);
    if (t) {
      for (uint32_t v = 1; v <= k->nval && v < k->cap_vtype; v++)
        if (R.map[v] && R.map[v] < k->cap_vtype) t[R.map[v]] = k->vtype[v];
      memcpy(k->vtype, t, k->cap_vtype);
      free(t);
    }
  }
  k->nval = R.n;
  free(R.map);
}

uint32_t bxk_fold(struct bxk_kernel *k) {
  struct fstate S = {.nval = k->nval};
  S.def = calloc((size_t)k->nval + 1, sizeof *S.def);
  if (!S.def) return 0; /* folding is an optimization: nothing done */
  fold_block(&S, &k->body);
  free(S.def);
  if (S.pruned) renumber(k);
  return S.folded;
}
