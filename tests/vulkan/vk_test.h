/* vk_test.h — shared by the Vulkan tests: SPIR-V validation through
 * SPIRV-Tools' C API (the library spirv-val is built on), and the kernels
 * of the op x type matrix (one kernel per type computes every valid op, as
 * tests/kir/test_llvm_jit.c does, so every op lowering is both validated
 * and run). */
#ifndef VK_TEST_H
#define VK_TEST_H

#include <spirv-tools/libspirv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bxk.h"
#include "bxvk.h"
#include "kir_samples.h"

static const unsigned vk_types[] = {BXK_BOOL, BXK_U8, BXK_I32, BXK_U32, BXK_I64, BXK_F16, BXK_F32, BXK_F64};
#define VK_NTYPES 8

/* Whether the module passes spirv-val's rules for Vulkan 1.1 (SPIR-V
 * 1.3); why not in err, with the start of the disassembly. */
static inline bool vk_spv_valid(const struct bxvk_spirv *m, char *err, size_t cap) {
  spv_context c = spvContextCreate(SPV_ENV_VULKAN_1_1);
  spv_const_binary_t bin = {m->words, m->nwords};
  spv_diagnostic d = NULL;
  spv_result_t r = spvValidate(c, &bin, &d);
  if (r != SPV_SUCCESS) {
    int n = snprintf(err, cap, "%s", d && d->error ? d->error : "(no message)");
    spv_text text = NULL;
    spv_diagnostic d2 = NULL;
    if (n >= 0 && (size_t)n < cap &&
        spvBinaryToText(c, m->words, m->nwords, SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES, &text, &d2) ==
            SPV_SUCCESS)
      snprintf(err + n, cap - (size_t)n, "\n%.6000s", text->str);
    spvTextDestroy(text);
    spvDiagnosticDestroy(d2);
  }
  spvDiagnosticDestroy(d);
  spvContextDestroy(c);
  return r == SPV_SUCCESS;
}

static inline bool vk_verifies(struct bxk_kernel *k) {
  struct bxk_diags ds = {0};
  bool ok = bxk_verify(k, &ds);
  bxk_kernel_free(k);
  return ok;
}

/* Every valid binary op on t, one output binding each: b0, b1 in, b2.. out.
 * ops[] receives the ops in binding order. */
static inline struct bxk_kernel *vk_binops(unsigned t, unsigned *ops, unsigned *nops) {
  *nops = 0;
  for (unsigned op = BXK_OP_ADD; op <= BXK_OP_GE; op++)
    if (vk_verifies(sample_binop((enum bxk_op)op, (enum bxk_type)t))) ops[(*nops)++] = op;
  struct bxk_kernel *k = bxk_kernel_new("binops");
  int a = bxk_add_binding(k, (enum bxk_type)t, 1, false), b = bxk_add_binding(k, (enum bxk_type)t, 1, false);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_val pos = bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS);
  bxk_val x = bxk_load(&B, a, pos), y = bxk_load(&B, b, pos);
  for (unsigned j = 0; j < *nops; j++) {
    bool cmp = bxk_opinfo[ops[j]].cls == BXK_C_CMP;
    int o = bxk_add_binding(k, cmp ? BXK_BOOL : (enum bxk_type)t, 1, true);
    bxk_store(&B, o, pos, bxk_bin(&B, (enum bxk_op)ops[j], x, y));
  }
  return k;
}

/* Every valid unary op on t. */
static inline struct bxk_kernel *vk_unops(unsigned t, unsigned *ops, unsigned *nops) {
  *nops = 0;
  for (unsigned op = BXK_OP_NEG; op <= BXK_OP_TRUNC; op++)
    if (vk_verifies(sample_unop((enum bxk_op)op, (enum bxk_type)t))) ops[(*nops)++] = op;
  struct bxk_kernel *k = bxk_kernel_new("unops");
  int a = bxk_add_binding(k, (enum bxk_type)t, 1, false);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_val pos = bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS);
  bxk_val x = bxk_load(&B, a, pos);
  for (unsigned j = 0; j < *nops; j++) {
    int o = bxk_add_binding(k, (enum bxk_type)t, 1, true);
    bxk_store(&B, o, pos, bxk_un(&B, (enum bxk_op)ops[j], x));
  }
  return k;
}

/* b0 of type from, cast to every type into b1..b8. */
static inline struct bxk_kernel *vk_casts(unsigned from) {
  struct bxk_kernel *k = bxk_kernel_new("casts");
  int a = bxk_add_binding(k, (enum bxk_type)from, 1, false);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_val pos = bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS);
  bxk_val x = bxk_load(&B, a, pos);
  for (size_t t = 0; t < VK_NTYPES; t++) {
    int o = bxk_add_binding(k, (enum bxk_type)vk_types[t], 1, true);
    bxk_store(&B, o, pos, bxk_cast(&B, (enum bxk_type)vk_types[t], x));
  }
  return k;
}

/* A shared-memory tree sum per cube of `dim` units (a power of two):
 * out[CUBE_POS] = sum of in[cube's units].  Each level reads what other
 * units stored before the barrier, so a barrier that is not honoured
 * gives wrong sums (sync false leaves them out, to show it).  One scalar
 * s0 (f32) is added to every sum. */
static inline struct bxk_kernel *vk_tree_sum_sync(uint32_t dim, bool sync) {
  struct bxk_kernel *k = bxk_kernel_new("tree_sum");
  int in = bxk_add_binding(k, BXK_F32, 1, false), out = bxk_add_binding(k, BXK_F32, 1, true);
  int sh = bxk_add_shared(k, BXK_F32, dim);
  int s = bxk_add_scalar(k, BXK_F32);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_val u = bxk_topo(&B, BXK_TOPO_UNIT_POS);
  bxk_sstore(&B, sh, u, bxk_load(&B, in, bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS)));
  for (uint32_t w = dim / 2; w >= 1; w /= 2) {
    if (sync) bxk_sync(&B);
    struct bxk_block *then;
    bxk_val wv = bxk_const_i(&B, BXK_U32, w);
    bxk_if(&B, bxk_bin(&B, BXK_OP_LT, u, wv), &then, NULL);
    struct bxk_builder T = bxk_builder_at(k, then);
    bxk_val other = bxk_bin(&T, BXK_OP_ADD, u, wv);
    bxk_val sum = bxk_bin(&T, BXK_OP_ADD, bxk_sload(&T, sh, u), bxk_sload(&T, sh, other));
    bxk_sstore(&T, sh, u, sum);
  }
  if (sync) bxk_sync(&B);
  struct bxk_block *first;
  bxk_if(&B, bxk_bin(&B, BXK_OP_EQ, u, bxk_const_i(&B, BXK_U32, 0)), &first, NULL);
  struct bxk_builder F = bxk_builder_at(k, first);
  bxk_val total = bxk_bin(&F, BXK_OP_ADD, bxk_sload(&F, sh, bxk_const_i(&F, BXK_U32, 0)), bxk_scalar(&F, s));
  bxk_store(&F, out, bxk_topo(&F, BXK_TOPO_CUBE_POS), total);
  return k;
}
static inline struct bxk_kernel *vk_tree_sum(uint32_t dim) { return vk_tree_sum_sync(dim, true); }

/* out[i] = in[i] * s0 + s1 with one scalar of every type: scalars in
 * their push-constant slots.  Types: in/out f32; s0 f32, s1 i32, and the
 * others summed in as (f32) casts. */
static inline struct bxk_kernel *vk_scalars(void) {
  struct bxk_kernel *k = bxk_kernel_new("scalars");
  int in = bxk_add_binding(k, BXK_F64, 1, false), out = bxk_add_binding(k, BXK_F64, 1, true);
  int s[VK_NTYPES];
  for (size_t t = 0; t < VK_NTYPES; t++) s[t] = bxk_add_scalar(k, (enum bxk_type)vk_types[t]);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_val pos = bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS);
  bxk_val acc = bxk_load(&B, in, pos);
  for (size_t t = 0; t < VK_NTYPES; t++) {
    bxk_val v = bxk_cast(&B, BXK_F64, bxk_scalar(&B, s[t]));
    v = bxk_bin(&B, BXK_OP_MUL, v, bxk_const_f(&B, BXK_F64, (double)(1u << (3 * t))));
    acc = bxk_bin(&B, BXK_OP_ADD, acc, v);
  }
  bxk_store(&B, out, pos, acc);
  return k;
}

/* Strided views: out[i] = in[stride(in, 0) * (i / shape(out, 1)) + i % shape(out, 1)] + rank * 1000 + len(in) * 1e6 */
static inline struct bxk_kernel *vk_views(void) {
  struct bxk_kernel *k = bxk_kernel_new("views");
  int in = bxk_add_binding(k, BXK_I32, 2, false), out = bxk_add_binding(k, BXK_I32, 2, true);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_val pos = bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS);
  struct bxk_block *then;
  bxk_if(&B, bxk_bin(&B, BXK_OP_LT, pos, bxk_len(&B, out)), &then, NULL);
  struct bxk_builder T = bxk_builder_at(k, then);
  bxk_val c = bxk_shape(&T, out, bxk_const_i(&T, BXK_U32, 1));
  bxk_val row = bxk_bin(&T, BXK_OP_DIV, pos, c), col = bxk_bin(&T, BXK_OP_REM, pos, c);
  bxk_val idx = bxk_bin(&T, BXK_OP_ADD, bxk_bin(&T, BXK_OP_MUL, row, bxk_stride(&T, in, bxk_const_i(&T, BXK_U32, 0))),
                        bxk_bin(&T, BXK_OP_MUL, col, bxk_stride(&T, in, bxk_const_i(&T, BXK_U32, 1))));
  bxk_val v = bxk_load(&T, in, idx);
  bxk_val extra = bxk_bin(&T, BXK_OP_ADD, bxk_bin(&T, BXK_OP_MUL, bxk_rank(&T, in), bxk_const_i(&T, BXK_U32, 1000)),
                          bxk_bin(&T, BXK_OP_MUL, bxk_len(&T, in), bxk_const_i(&T, BXK_U32, 1000000)));
  bxk_store(&T, out, pos, bxk_bin(&T, BXK_OP_ADD, v, bxk_cast(&T, BXK_I32, extra)));
  return k;
}

#endif
