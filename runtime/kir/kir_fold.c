/* kir_fold.c — constant folding: an arithmetic, comparison, unary or cast
 * instruction whose operands are all constants becomes a constant, with
 * the value bxk_eval_* computes (bxk_scalar.h's semantics, so folding
 * never changes what a kernel computes).
 *
 * In place: the instruction keeps its value id and type and turns into a
 * `const`, so every use stays valid and nothing is renumbered.  One pass
 * in program order folds chains, since operands come before their uses.
 * Runs on verified kernels only. */
#include <stdlib.h>

#include "kir_internal.h"

struct fstate {
  const struct bxk_inst **def;
  uint32_t nval;
  uint32_t folded;
};

static const struct bxk_inst *konst(struct fstate *S, bxk_val v) {
  const struct bxk_inst *d = v && v <= S->nval ? S->def[v] : NULL;
  return d && d->op == BXK_OP_CONST ? d : NULL;
}

static void fold_block(struct fstate *S, struct bxk_block *b) {
  for (struct bxk_inst *i = b->first; i; i = i->next) {
    for (int j = 0; j < 2; j++)
      if (i->blk[j]) fold_block(S, i->blk[j]);
    if (i->res && i->res <= S->nval) S->def[i->res] = i;
    unsigned cls = bxk_opinfo[i->op].cls;
    const struct bxk_inst *a = konst(S, i->arg[0]), *c = konst(S, i->arg[1]);
    union bxk_lit r;
    bool ok = false;
    switch (cls) {
    case BXK_C_ARITH: case BXK_C_FARITH: case BXK_C_LOGIC: case BXK_C_SHIFT: case BXK_C_CMP:
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

uint32_t bxk_fold(struct bxk_kernel *k) {
  struct fstate S = {.nval = k->nval};
  S.def = calloc((size_t)k->nval + 1, sizeof *S.def);
  if (!S.def) return 0; /* folding is an optimization: nothing done */
  fold_block(&S, &k->body);
  free(S.def);
  return S.folded;
}
