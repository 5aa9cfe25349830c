/* test_kir_verify.c — the builder makes kernels the verifier accepts, and
 * every malformed kernel is rejected with its code and message. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "bxk_scalar.h"
#include "kir_samples.h"

static void accept(struct bxk_kernel *k) {
  struct bxk_diags ds = {0};
  bool ok = bxk_verify(k, &ds);
  char buf[4096];
  bxk_diags_render(&ds, buf, sizeof buf);
  cr_expect(ok, "kernel %s rejected:\n%s", k->name, buf);
  bxk_kernel_free(k);
}

/* Expects a rejection whose first diagnostic has code e and contains msg. */
static void reject(struct bxk_kernel *k, enum bxk_err e, const char *msg) {
  struct bxk_diags ds = {0};
  bool ok = bxk_verify(k, &ds);
  char buf[4096];
  bxk_diags_render(&ds, buf, sizeof buf);
  cr_expect(!ok, "kernel accepted, expected %s", msg);
  cr_expect(ds.n >= 1);
  if (ds.n) {
    cr_expect_eq(ds.d[0].err, e, "expected %s, got:\n%s", bxk_err_code(e), buf);
    cr_expect(strstr(ds.d[0].msg, msg), "expected \"%s\", got:\n%s", msg, buf);
  }
  bxk_kernel_free(k);
}

Test(kir_verify, samples_verify) {
  accept(sample_add(BXK_F32, true));
  accept(sample_add(BXK_I64, false));
  accept(sample_gelu(BXK_F32));
  accept(sample_gelu(BXK_F16));
  accept(sample_loops());
  accept(sample_binop(BXK_OP_REM, BXK_I32));
  accept(sample_binop(BXK_OP_LT, BXK_F64));
  accept(sample_unop(BXK_OP_NOT, BXK_BOOL));
  accept(sample_cast(BXK_U8, BXK_F32));
  accept(sample_topo());
  accept(sample_shared_sum());
}

/* A fresh kernel with one f32 input, one f32 output, and a builder. */
static struct bxk_kernel *start(struct bxk_builder *B, bxk_val *pos) {
  struct bxk_kernel *k = bxk_kernel_new("bad");
  bxk_add_binding(k, BXK_F32, 1, false);
  bxk_add_binding(k, BXK_F32, 1, true);
  *B = bxk_builder_at(k, NULL);
  B->loc = (struct bxk_loc){1, 40, 7};
  *pos = bxk_topo(B, BXK_TOPO_ABSOLUTE_POS);
  return k;
}

Test(kir_verify, operand_types_differ) {
  struct bxk_builder B;
  bxk_val pos;
  struct bxk_kernel *k = start(&B, &pos);
  bxk_bin(&B, BXK_OP_ADD, bxk_load(&B, 0, pos), bxk_const_i(&B, BXK_I32, 1));
  reject(k, BXK_E_TYPE, "operands of add differ: f32 and i32");
}

Test(kir_verify, float_op_on_int) {
  struct bxk_builder B;
  bxk_val pos;
  struct bxk_kernel *k = start(&B, &pos);
  bxk_un(&B, BXK_OP_SQRT, bxk_const_i(&B, BXK_I32, 4));
  reject(k, BXK_E_TYPE, "sqrt expects a float operand, found i32");
}

Test(kir_verify, undefined_value) {
  struct bxk_builder B;
  bxk_val pos;
  struct bxk_kernel *k = start(&B, &pos);
  bxk_store(&B, 1, pos, 99);
  reject(k, BXK_E_UNDEFINED, "use of undefined value %99");
}

Test(kir_verify, value_escapes_its_block) {
  struct bxk_builder B;
  bxk_val pos;
  struct bxk_kernel *k = start(&B, &pos);
  struct bxk_block *then;
  bxk_if(&B, bxk_bin(&B, BXK_OP_LT, pos, bxk_len(&B, 1)), &then, NULL);
  struct bxk_builder T = bxk_builder_at(k, then);
  bxk_val x = bxk_load(&T, 0, pos);
  bxk_store(&B, 1, pos, x);
  reject(k, BXK_E_DOMINANCE, "is used outside the block that defines it");
}

Test(kir_verify, use_before_definition) {
  struct bxk_kernel *k = bxk_kernel_new("bad");
  bxk_add_binding(k, BXK_F32, 1, true);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  /* %2 is used by the first instruction and defined by the second */
  bxk_raw(&B, BXK_OP_STORE, BXK_VOID, 0, 2, 3, 0, (union bxk_lit){.u = 0});
  bxk_raw(&B, BXK_OP_TOPO, BXK_U32, 2, 0, 0, 0, (union bxk_lit){.u = BXK_TOPO_UNIT_POS});
  bxk_raw(&B, BXK_OP_CONST, BXK_F32, 3, 0, 0, 0, (union bxk_lit){.f = 1});
  reject(k, BXK_E_DOMINANCE, "value %2 is used before its definition");
}

/* A value id nobody defines: the deserializer bounds the value count by
 * the blob's size, so a verified kernel must define every id it declares
 * or its serialized form may not read back (found by fuzz/kir_20s; the
 * input is tests/fuzz/corpus-kir/undefined-values). */
Test(kir_verify, value_defined_by_no_instruction) {
  struct bxk_kernel *k = bxk_kernel_new("gap");
  bxk_add_binding(k, BXK_F32, 1, true);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_raw(&B, BXK_OP_CONST, BXK_F32, 2, 0, 0, 0, (union bxk_lit){.f = 1});
  cr_assert_eq(k->nval, 2);
  reject(k, BXK_E_MALFORMED, "kernel gap declares 2 values, but %1 is defined by no instruction");
}

Test(kir_verify, if_condition_not_bool) {
  struct bxk_builder B;
  bxk_val pos;
  struct bxk_kernel *k = start(&B, &pos);
  bxk_if(&B, pos, NULL, NULL);
  reject(k, BXK_E_TYPE, "condition of if must be bool, found u32");
}

Test(kir_verify, store_to_readonly) {
  struct bxk_builder B;
  bxk_val pos;
  struct bxk_kernel *k = start(&B, &pos);
  bxk_store(&B, 0, pos, bxk_const_f(&B, BXK_F32, 1));
  reject(k, BXK_E_READONLY, "store to binding b0, which is not mut");
}

Test(kir_verify, binding_out_of_range) {
  struct bxk_builder B;
  bxk_val pos;
  struct bxk_kernel *k = start(&B, &pos);
  bxk_load(&B, 5, pos);
  reject(k, BXK_E_RANGE, "load: binding 5 out of range (kernel has 2)");
}

Test(kir_verify, index_not_u32) {
  struct bxk_builder B;
  bxk_val pos;
  struct bxk_kernel *k = start(&B, &pos);
  bxk_load(&B, 0, bxk_const_i(&B, BXK_I64, 3));
  reject(k, BXK_E_TYPE, "index of load must be u32, found i64");
}

Test(kir_verify, stored_value_type) {
  struct bxk_builder B;
  bxk_val pos;
  struct bxk_kernel *k = start(&B, &pos);
  bxk_store(&B, 1, pos, bxk_const_f(&B, BXK_F64, 1));
  reject(k, BXK_E_TYPE, "stored value of store must be f32, found f64");
}

Test(kir_verify, break_outside_loop) {
  struct bxk_builder B;
  bxk_val pos;
  struct bxk_kernel *k = start(&B, &pos);
  bxk_break(&B);
  reject(k, BXK_E_CONTROL, "break outside a loop");
}

Test(kir_verify, code_after_jump) {
  struct bxk_builder B;
  bxk_val pos;
  struct bxk_kernel *k = start(&B, &pos);
  bxk_return(&B);
  bxk_len(&B, 0);
  reject(k, BXK_E_CONTROL, "len after a jump in the same block is unreachable");
}

Test(kir_verify, for_step_not_constant) {
  struct bxk_builder B;
  bxk_val pos;
  struct bxk_kernel *k = start(&B, &pos);
  struct bxk_block *body;
  bxk_for(&B, bxk_const_i(&B, BXK_U32, 0), bxk_len(&B, 0), pos, &body);
  reject(k, BXK_E_MALFORMED, "must be a constant > 0");
}

Test(kir_verify, for_step_zero) {
  struct bxk_builder B;
  bxk_val pos;
  struct bxk_kernel *k = start(&B, &pos);
  bxk_for(&B, bxk_const_i(&B, BXK_I32, 0), bxk_const_i(&B, BXK_I32, 9), bxk_const_i(&B, BXK_I32, 0), NULL);
  reject(k, BXK_E_MALFORMED, "must be a constant > 0");
}

Test(kir_verify, induction_value_after_loop) {
  struct bxk_builder B;
  bxk_val pos;
  struct bxk_kernel *k = start(&B, &pos);
  bxk_val i = bxk_for(&B, bxk_const_i(&B, BXK_U32, 0), bxk_len(&B, 0), bxk_const_i(&B, BXK_U32, 1), NULL);
  bxk_store(&B, 1, i, bxk_const_f(&B, BXK_F32, 0));
  reject(k, BXK_E_DOMINANCE, "used outside the block that defines it");
}

Test(kir_verify, barrier_under_divergent_if) {
  struct bxk_builder B;
  bxk_val pos;
  struct bxk_kernel *k = start(&B, &pos);
  struct bxk_block *then;
  bxk_if(&B, bxk_bin(&B, BXK_OP_LT, pos, bxk_len(&B, 1)), &then, NULL);
  struct bxk_builder T = bxk_builder_at(k, then);
  bxk_sync(&T);
  reject(k, BXK_E_BARRIER, "sync_cube where units of a cube may diverge");
}

Test(kir_verify, barrier_after_divergent_return) {
  struct bxk_builder B;
  bxk_val pos;
  struct bxk_kernel *k = start(&B, &pos);
  struct bxk_block *then;
  bxk_if(&B, bxk_bin(&B, BXK_OP_GE, pos, bxk_len(&B, 1)), &then, NULL);
  struct bxk_builder T = bxk_builder_at(k, then);
  bxk_return(&T);
  bxk_sync(&B);
  reject(k, BXK_E_BARRIER, "sync_cube after a return that only some units may take");
}

Test(kir_verify, barrier_in_loop_left_early) {
  struct bxk_builder B;
  bxk_val pos;
  struct bxk_kernel *k = start(&B, &pos);
  struct bxk_block *body, *then;
  bxk_val n = bxk_len(&B, 0);
  bxk_val i = bxk_for(&B, bxk_const_i(&B, BXK_U32, 0), n, bxk_const_i(&B, BXK_U32, 1), &body);
  struct bxk_builder L = bxk_builder_at(k, body);
  bxk_sync(&L);
  bxk_if(&L, bxk_bin(&L, BXK_OP_EQ, i, pos), &then, NULL);
  struct bxk_builder T = bxk_builder_at(k, then);
  bxk_break(&T);
  reject(k, BXK_E_BARRIER, "sync_cube where units of a cube may diverge");
}

Test(kir_verify, barrier_uniform_places_pass) {
  struct bxk_builder B;
  bxk_val pos;
  struct bxk_kernel *k = start(&B, &pos);
  struct bxk_block *body, *then;
  bxk_val n = bxk_len(&B, 0); /* uniform: same for every unit */
  bxk_val i = bxk_for(&B, bxk_const_i(&B, BXK_U32, 0), n, bxk_const_i(&B, BXK_U32, 1), &body);
  struct bxk_builder L = bxk_builder_at(k, body);
  bxk_sync(&L);
  bxk_if(&L, bxk_bin(&L, BXK_OP_EQ, i, bxk_topo(&L, BXK_TOPO_CUBE_POS)), &then, NULL);
  struct bxk_builder T = bxk_builder_at(k, then);
  bxk_sync(&T);
  bxk_load(&T, 0, pos);  /* varying work is fine, only the control matters */
  accept(k);
}

Test(kir_verify, redefined_value) {
  struct bxk_kernel *k = bxk_kernel_new("bad");
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_raw(&B, BXK_OP_CONST, BXK_I32, 1, 0, 0, 0, (union bxk_lit){.i = 1});
  bxk_raw(&B, BXK_OP_CONST, BXK_I32, 1, 0, 0, 0, (union bxk_lit){.i = 2});
  reject(k, BXK_E_REDEFINED, "value %1 is defined twice");
}

Test(kir_verify, result_type_wrong) {
  struct bxk_kernel *k = bxk_kernel_new("bad");
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_val a = bxk_const_i(&B, BXK_I32, 1);
  bxk_raw(&B, BXK_OP_LT, BXK_I32, 0, a, a, 0, (union bxk_lit){0});
  reject(k, BXK_E_TYPE, "result of lt must be bool, found i32");
}

Test(kir_verify, constant_does_not_fit) {
  struct bxk_kernel *k = bxk_kernel_new("bad");
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_raw(&B, BXK_OP_CONST, BXK_U8, 0, 0, 0, 0, (union bxk_lit){.i = 300});
  reject(k, BXK_E_TYPE, "constant %1: 300 does not fit u8");
}

Test(kir_verify, bad_opcode_and_locals) {
  struct bxk_kernel *k = bxk_kernel_new("bad");
  bxk_add_local(k, BXK_VOID);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_raw(&B, (enum bxk_op)200, BXK_VOID, 0, 0, 0, 0, (union bxk_lit){0});
  struct bxk_diags ds = {0};
  cr_expect(!bxk_verify(k, &ds));
  cr_expect_eq(ds.n, 2);
  cr_expect(strstr(ds.d[0].msg, "local v0: type void is not a value type"), "%s", ds.d[0].msg);
  cr_expect(strstr(ds.d[1].msg, "unknown opcode 200"), "%s", ds.d[1].msg);
  bxk_kernel_free(k);
}

Test(kir_verify, keeps_going_and_locates) {
  struct bxk_builder B;
  bxk_val pos;
  struct bxk_kernel *k = start(&B, &pos);
  B.loc = (struct bxk_loc){1, 100, 3};
  bxk_un(&B, BXK_OP_EXP, pos);                   /* float op on u32 */
  B.loc = (struct bxk_loc){1, 120, 5};
  bxk_store(&B, 0, pos, bxk_load(&B, 0, pos));   /* read-only */
  struct bxk_diags ds = {0};
  cr_expect(!bxk_verify(k, &ds));
  cr_assert_eq(ds.n, 2);
  cr_expect_eq(ds.d[0].loc.off, 100);
  cr_expect_eq(ds.d[1].loc.off, 120);
  cr_expect_eq(ds.d[1].loc.len, 5);
  char buf[512];
  bxk_diags_render(&ds, buf, sizeof buf);
  cr_expect(strstr(buf, "K0005 at 100+3: exp expects a float operand, found u32"), "%s", buf);
  bxk_kernel_free(k);
}

Test(kir_verify, scalar_semantics_header) {
  /* spot checks of bxk_scalar.h through the evaluator */
  union bxk_lit r;
  cr_expect(bxk_eval_bin(BXK_OP_REM, BXK_I32, (union bxk_lit){.i = -7}, (union bxk_lit){.i = 3}, &r));
  cr_expect_eq(r.i, 2);
  bxk_eval_bin(BXK_OP_REM, BXK_I32, (union bxk_lit){.i = 7}, (union bxk_lit){.i = -3}, &r);
  cr_expect_eq(r.i, -2);
  bxk_eval_bin(BXK_OP_DIV, BXK_I32, (union bxk_lit){.i = 7}, (union bxk_lit){.i = 0}, &r);
  cr_expect_eq(r.i, 0);
  bxk_eval_bin(BXK_OP_DIV, BXK_I32, (union bxk_lit){.i = INT32_MIN}, (union bxk_lit){.i = -1}, &r);
  cr_expect_eq(r.i, INT32_MIN);
  bxk_eval_bin(BXK_OP_REM, BXK_F64, (union bxk_lit){.f = -7.5}, (union bxk_lit){.f = 2}, &r);
  cr_expect_eq(r.f, 0.5);
  bxk_eval_bin(BXK_OP_MAX, BXK_F32, (union bxk_lit){.f = 1}, (union bxk_lit){.f = NAN}, &r);
  cr_expect(r.f != r.f);
  bxk_eval_cast(BXK_I32, BXK_F32, (union bxk_lit){.f = 3e9}, &r);
  cr_expect_eq(r.i, INT32_MAX);
  bxk_eval_cast(BXK_U8, BXK_F64, (union bxk_lit){.f = NAN}, &r);
  cr_expect_eq(r.u, 0);
  bxk_eval_cast(BXK_I32, BXK_I64, (union bxk_lit){.i = 0x1FFFFFFFFll}, &r);
  cr_expect_eq(r.i, -1);
  bxk_eval_cast(BXK_F16, BXK_F32, (union bxk_lit){.f = 1.0 + 1.0 / 2048}, &r); /* tie -> even */
  cr_expect_eq(r.f, 1.0);
  bxk_eval_un(BXK_OP_ROUND, BXK_F32, (union bxk_lit){.f = 2.5}, &r);
  cr_expect_eq(r.f, 2.0);
  bxk_eval_bin(BXK_OP_SHR, BXK_I32, (union bxk_lit){.i = -8}, (union bxk_lit){.i = 33}, &r);
  cr_expect_eq(r.i, -4);
}

/* The rows that are not IR ops yet (Flex and the runtime call them): bf16,
 * relu, integer pow, and the float -> int casts at their bounds. */
Test(kir_verify, scalar_semantics_header_direct) {
  cr_expect_eq(bxk_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);       /* tie, to even */
  cr_expect_eq(bxk_f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);   /* tie, odd -> up */
  cr_expect_eq(bxk_f32_to_bf16(0x1.fffffep127f), 0x7f80);      /* rounds to inf */
  cr_expect_eq(bxk_f32_to_bf16(-NAN) & 0xffc0, 0xffc0);         /* quiet NaN, sign kept */
  cr_expect_eq(bxk_bf16_to_f32(0x4049), 3.140625f);
  cr_expect(signbit(bxk_relu_f32(-0.0f)) && bxk_relu_f64(-2.0) == 0 && !signbit(bxk_relu_f64(-2.0)));
  cr_expect(isnan(bxk_relu_f32(NAN)));
  cr_expect_eq(bxk_relu_i64(-5), 0);
  cr_expect_eq(bxk_pow_i64(3, 4), 81);
  cr_expect_eq(bxk_pow_i64(2, 64), 0);                          /* wraps */
  cr_expect_eq(bxk_pow_i64(-1, -3), -1);
  cr_expect_eq(bxk_pow_i64(2, -1), 0);
  cr_expect_eq(bxk_pow_i32(-3, 3), -27);
  cr_expect_eq(bxk_f64_to_i64(0x1p63), INT64_MAX);
  cr_expect_eq(bxk_f64_to_i64(-0x1p63), INT64_MIN);
  cr_expect_eq(bxk_f64_to_i64(-0x1p63 - 4096), INT64_MIN);
  cr_expect_eq(bxk_f64_to_i32(2147483647.5), INT32_MAX);
  cr_expect_eq(bxk_f64_to_i32(-2147483648.9), INT32_MIN);
  cr_expect_eq(bxk_f64_to_i32(-2147483647.9), -2147483647);
  cr_expect_eq(bxk_f64_to_u8(-0.9), 0);
  cr_expect_eq(bxk_f64_to_u8(255.9), 255);
  cr_expect_eq(bxk_f64_to_u32(4294967295.5), UINT32_MAX);
  cr_expect_eq(bxk_f64_to_u32(1.9), 1);
}
