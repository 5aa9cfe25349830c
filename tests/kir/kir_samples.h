/* kir_samples.h — kernels built with the builder, shared by the kernel IR
 * tests (verifier, printer, serializer, LLVM).  The printer's golden tests
 * use add, gelu and shared_sum, which never nest two builder calls in one
 * argument list (C leaves their order open: gcc and clang would number the
 * values differently). */
#ifndef KIR_SAMPLES_H
#define KIR_SAMPLES_H

#include "bxk.h"

/* out[i] = a[i] + b[i] for ABSOLUTE_POS < len(out) */
static inline struct bxk_kernel *sample_add(enum bxk_type t, bool guard) {
  struct bxk_kernel *k = bxk_kernel_new("add");
  int a = bxk_add_binding(k, t, 1, false), b = bxk_add_binding(k, t, 1, false);
  int o = bxk_add_binding(k, t, 1, true);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_val pos = bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS);
  struct bxk_builder I = B;
  if (guard) {
    struct bxk_block *then;
    bxk_if(&B, bxk_bin(&B, BXK_OP_LT, pos, bxk_len(&B, o)), &then, NULL);
    I = bxk_builder_at(k, then);
  }
  bxk_val x = bxk_load(&I, a, pos), y = bxk_load(&I, b, pos);
  bxk_store(&I, o, pos, bxk_bin(&I, BXK_OP_ADD, x, y));
  return k;
}

/* The GELU of docs/language.md §8: x * 0.5 * (1 + erf(x / sqrt(2))) */
static inline struct bxk_kernel *sample_gelu(enum bxk_type t) {
  struct bxk_kernel *k = bxk_kernel_new("gelu");
  int in = bxk_add_binding(k, t, 0, false), out = bxk_add_binding(k, t, 0, true);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_val pos = bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS);
  struct bxk_block *then;
  bxk_if(&B, bxk_bin(&B, BXK_OP_LT, pos, bxk_len(&B, out)), &then, NULL);
  struct bxk_builder I = bxk_builder_at(k, then);
  bxk_val x = bxk_load(&I, in, pos);
  bxk_val half = bxk_const_f(&I, t, 0.5), one = bxk_const_f(&I, t, 1.0);
  bxk_val s2 = bxk_un(&I, BXK_OP_SQRT, bxk_const_f(&I, t, 2.0));
  bxk_val e = bxk_un(&I, BXK_OP_ERF, bxk_bin(&I, BXK_OP_DIV, x, s2));
  bxk_val xh = bxk_bin(&I, BXK_OP_MUL, x, half);
  bxk_val r = bxk_bin(&I, BXK_OP_MUL, xh, bxk_bin(&I, BXK_OP_ADD, one, e));
  bxk_store(&I, out, pos, r);
  return k;
}

/* out[i] = sum of a[0..n) taken while a[j] >= 0 (a loop with break), plus
 * the count of positive a[j] seen (a `loop` with continue), as f32:
 *   for j in 0..n { if a[j] < 0 { break }; acc += a[j] * (i+1) }
 *   c = 0; loop { if c >= n break; c += 1; if a[c-1] <= 0 continue; pos += 1 } */
static inline struct bxk_kernel *sample_loops(void) {
  struct bxk_kernel *k = bxk_kernel_new("loops");
  int a = bxk_add_binding(k, BXK_F32, 1, false), o = bxk_add_binding(k, BXK_F32, 1, true);
  int acc = bxk_add_local(k, BXK_F32), c = bxk_add_local(k, BXK_U32), npos = bxk_add_local(k, BXK_F32);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_val pos = bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS);
  struct bxk_block *ret;
  bxk_if(&B, bxk_bin(&B, BXK_OP_GE, pos, bxk_len(&B, o)), &ret, NULL);
  struct bxk_builder R = bxk_builder_at(k, ret);
  bxk_return(&R);
  bxk_val n = bxk_len(&B, a);
  bxk_val w = bxk_cast(&B, BXK_F32, bxk_bin(&B, BXK_OP_ADD, pos, bxk_const_i(&B, BXK_U32, 1)));
  struct bxk_block *body;
  bxk_val j = bxk_for(&B, bxk_const_i(&B, BXK_U32, 0), n, bxk_const_i(&B, BXK_U32, 1), &body);
  struct bxk_builder F = bxk_builder_at(k, body);
  bxk_val x = bxk_load(&F, a, j);
  struct bxk_block *brk;
  bxk_if(&F, bxk_bin(&F, BXK_OP_LT, x, bxk_const_f(&F, BXK_F32, 0)), &brk, NULL);
  struct bxk_builder Br = bxk_builder_at(k, brk);
  bxk_break(&Br);
  bxk_set(&F, acc, bxk_bin(&F, BXK_OP_ADD, bxk_get(&F, acc), bxk_bin(&F, BXK_OP_MUL, x, w)));
  struct bxk_block *lb;
  bxk_loop(&B, &lb);
  struct bxk_builder Lp = bxk_builder_at(k, lb);
  bxk_val cv = bxk_get(&Lp, c);
  struct bxk_block *done;
  bxk_if(&Lp, bxk_bin(&Lp, BXK_OP_GE, cv, n), &done, NULL);
  struct bxk_builder D = bxk_builder_at(k, done);
  bxk_break(&D);
  bxk_val c1 = bxk_bin(&Lp, BXK_OP_ADD, cv, bxk_const_i(&Lp, BXK_U32, 1));
  bxk_set(&Lp, c, c1);
  struct bxk_block *skip;
  bxk_if(&Lp, bxk_bin(&Lp, BXK_OP_LE, bxk_load(&Lp, a, cv), bxk_const_f(&Lp, BXK_F32, 0)), &skip, NULL);
  struct bxk_builder S = bxk_builder_at(k, skip);
  bxk_continue(&S);
  bxk_set(&Lp, npos, bxk_bin(&Lp, BXK_OP_ADD, bxk_get(&Lp, npos), bxk_const_f(&Lp, BXK_F32, 1)));
  bxk_store(&B, o, pos, bxk_bin(&B, BXK_OP_ADD, bxk_get(&B, acc),
                                bxk_bin(&B, BXK_OP_MUL, bxk_get(&B, npos), bxk_const_f(&B, BXK_F32, 1000))));
  return k;
}

/* out[i] = op(a[i], b[i]) for one binary op and type: the semantics test. */
static inline struct bxk_kernel *sample_binop(enum bxk_op op, enum bxk_type t) {
  struct bxk_kernel *k = bxk_kernel_new("binop");
  bool cmp = bxk_opinfo[op].cls == BXK_C_CMP;
  int a = bxk_add_binding(k, t, 1, false), b = bxk_add_binding(k, t, 1, false);
  int o = bxk_add_binding(k, cmp ? BXK_BOOL : t, 1, true);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_val pos = bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS);
  bxk_store(&B, o, pos, bxk_bin(&B, op, bxk_load(&B, a, pos), bxk_load(&B, b, pos)));
  return k;
}

static inline struct bxk_kernel *sample_unop(enum bxk_op op, enum bxk_type t) {
  struct bxk_kernel *k = bxk_kernel_new("unop");
  int a = bxk_add_binding(k, t, 1, false), o = bxk_add_binding(k, t, 1, true);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_val pos = bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS);
  bxk_store(&B, o, pos, bxk_un(&B, op, bxk_load(&B, a, pos)));
  return k;
}

static inline struct bxk_kernel *sample_cast(enum bxk_type to, enum bxk_type from) {
  struct bxk_kernel *k = bxk_kernel_new("cast");
  int a = bxk_add_binding(k, from, 1, false), o = bxk_add_binding(k, to, 1, true);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_val pos = bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS);
  bxk_store(&B, o, pos, bxk_cast(&B, to, bxk_load(&B, a, pos)));
  return k;
}

/* A 2-D kernel: out[ABSOLUTE_POS] = ABSOLUTE_POS_X + 1000 * ABSOLUTE_POS_Y
 * + 1e6 * UNIT_POS + 1e8 * CUBE_POS (u32 arithmetic), and a scalar added. */
static inline struct bxk_kernel *sample_topo(void) {
  struct bxk_kernel *k = bxk_kernel_new("topo");
  int o = bxk_add_binding(k, BXK_U32, 2, true);
  int s = bxk_add_scalar(k, BXK_U32);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_val ap = bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS);
  bxk_val v = bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS_X);
  v = bxk_bin(&B, BXK_OP_ADD, v, bxk_bin(&B, BXK_OP_MUL, bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS_Y),
                                         bxk_const_i(&B, BXK_U32, 1000)));
  v = bxk_bin(&B, BXK_OP_ADD, v, bxk_bin(&B, BXK_OP_MUL, bxk_topo(&B, BXK_TOPO_UNIT_POS),
                                         bxk_const_i(&B, BXK_U32, 1000000)));
  v = bxk_bin(&B, BXK_OP_ADD, v, bxk_bin(&B, BXK_OP_MUL, bxk_topo(&B, BXK_TOPO_CUBE_POS),
                                         bxk_const_i(&B, BXK_U32, 100000000)));
  v = bxk_bin(&B, BXK_OP_ADD, v, bxk_scalar(&B, s));
  bxk_store(&B, o, ap, v);
  return k;
}

/* Shared memory with sync_cube: every unit stores its element, then unit
 * 0 writes the cube's first one (sh[0]) to out[CUBE_POS]. */
static inline struct bxk_kernel *sample_shared_sum(void) {
  struct bxk_kernel *k = bxk_kernel_new("shared_sum");
  int in = bxk_add_binding(k, BXK_F32, 1, false), out = bxk_add_binding(k, BXK_F32, 1, true);
  int sh = bxk_add_shared(k, BXK_F32, 64);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_val u = bxk_topo(&B, BXK_TOPO_UNIT_POS);
  bxk_sstore(&B, sh, u, bxk_load(&B, in, bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS)));
  bxk_sync(&B);
  struct bxk_block *first;
  bxk_if(&B, bxk_bin(&B, BXK_OP_EQ, u, bxk_const_i(&B, BXK_U32, 0)), &first, NULL);
  struct bxk_builder F = bxk_builder_at(k, first);
  bxk_val cube = bxk_topo(&F, BXK_TOPO_CUBE_POS);
  bxk_store(&F, out, cube, bxk_sload(&F, sh, bxk_const_i(&F, BXK_U32, 0)));
  return k;
}

#endif
