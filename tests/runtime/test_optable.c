/* test_optable.c — invariants of the op table (bext/ops.h) and the
 * backend tables built from it: one info row per opcode with a name, an
 * inference rule and operand kinds; unique names; every opcode implemented
 * by the NdArray reference and by Flex; inference alone (no backend)
 * computes output metadata, as Fusion and Remote will use it. */
#include <criterion/criterion.h>
#include <string.h>

#include "backend.h"

Test(optable, rows_are_complete_and_unique) {
  for (int i = 0; i < BXR_OP_COUNT; i++) {
    const struct bxr_op_info *r = &bxr_op_info[i];
    cr_assert_not_null(r->name, "op %d has no row", i);
    cr_expect_not_null(r->infer, "%s has no inference rule", r->name);
    cr_expect(r->nin >= -1 && r->nin <= BXR_MAX_INPUTS, "%s: nin %d", r->name, r->nin);
    for (int k = 0; k < (r->nin < 0 ? 1 : r->nin); k++)
      cr_expect_neq(r->kinds[k], 0u, "%s: input %d accepts no dtype", r->name, k);
    cr_expect(r->nscalar >= 0 && r->nscalar <= 3);
    for (int j = 0; j < i; j++) cr_expect_str_neq(r->name, bxr_op_info[j].name, "duplicate name");
  }
  cr_expect_str_eq(bxr_op_name(BXR_OP_ADD), "add");
  cr_expect_str_eq(bxr_op_name((enum bxr_opcode)BXR_OP_COUNT), "?");
}

Test(optable, reference_and_flex_implement_every_op) {
  const struct bxr_backend *be[] = {bext_device_get("ndarray")->vt, bext_device_get("flex")->vt};
  for (int b = 0; b < 2; b++) {
    cr_assert_not_null(be[b], "backend %d missing from this build", b);
    cr_expect_eq(be[b]->api_version, BXR_BACKEND_API_VERSION);
    cr_expect(be[b]->storage_alloc && be[b]->storage_free && be[b]->from_data && be[b]->read && be[b]->copy);
    for (int i = 0; i < BXR_OP_COUNT; i++)
      cr_expect_not_null(be[b]->exec[i], "%s lacks %s", be[b]->name, bxr_op_name((enum bxr_opcode)i));
  }
}

Test(optable, inference_runs_without_a_backend) {
  /* specs only: no tensor, no device, no storage */
  bext_spec a = {.dtype = BEXT_F16, .rank = 3, .shape = {2, 1, 4}};
  bext_spec b = {.dtype = BEXT_F16, .rank = 2, .shape = {3, 1}};
  bext_spec out;
  const bext_spec *ab[] = {&a, &b};
  bext_attrs at = {0};
  bext_scalar sc[3] = {{0}};
  struct bxr_infer q = {.code = BXR_OP_MUL, .api = "test", .n_in = 2, .in = ab, .sc = sc, .at = &at, .out = &out};
  cr_assert(bxr_infer_run(&q), "%s", bext_last_error());
  cr_expect_eq(out.dtype, BEXT_F16);
  cr_expect(out.rank == 3 && out.shape[0] == 2 && out.shape[1] == 3 && out.shape[2] == 4);
  struct bxr_infer red = {.code = BXR_OP_ARGMAX, .api = "test", .n_in = 1, .in = ab, .sc = sc, .at = &at, .out = &out};
  at.dim = -1;
  at.keepdim = true;
  cr_assert(bxr_infer_run(&red));
  cr_expect(out.dtype == BEXT_I64 && out.rank == 3 && out.shape[2] == 1);
  cr_expect_eq(at.dim, 2, "dims are normalized in place");
  at.dim = 3;
  cr_expect(!bxr_infer_run(&red));
  cr_expect_str_eq(bext_last_error(), "test: dim 3 out of range for rank 3 (operands: [2,1,4] f16)");
}
