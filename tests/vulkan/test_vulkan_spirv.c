/* test_vulkan_spirv.c — every kernel of the suite lowered to SPIR-V
 * (runtime/vulkan/bxvk_emit*.c) and validated with SPIRV-Tools' validator
 * under the Vulkan 1.1 rules: the builder samples (tests/kir/kir_samples.h),
 * every op x type and cast x type, the barrier and scalar kernels the
 * run tests use, and every `#[cube]` kernel written in .bext that checks
 * cleanly (tests/kir/cube, tests/compiler/lang/kernels.bext,
 * tests/golden/cube_*.bext), lowered by the front end.  No device needed. */
#include <criterion/criterion.h>
#include <dirent.h>

#include "check.h"
#include "cube.h"
#include "diag.h"
#include "module.h"
#include "vk_test.h"

static unsigned validated, refused_bf16;

/* Emits and validates k (and frees it); false when the emitter refused. */
static bool emit_valid(struct bxk_kernel *k, unsigned want_needs_mask, unsigned want_needs) {
  struct bxk_diags ds = {0};
  struct bxvk_spirv m;
  bool ok = bxvk_emit(k, &m, &ds);
  char buf[2048];
  bxk_diags_render(&ds, buf, sizeof buf);
  cr_assert(ok, "kernel %s was not lowered:\n%s", k->name, buf);
  static char err[8192];
  cr_assert(vk_spv_valid(&m, err, sizeof err), "kernel %s: spirv-val: %s", k->name, err);
  cr_assert_eq(m.needs & want_needs_mask, want_needs, "kernel %s needs %#x", k->name, m.needs);
  validated++;
  bxvk_spirv_free(&m);
  bxk_kernel_free(k);
  return true;
}

Test(spirv, samples_validate) {
  validated = 0;
  for (size_t t = 1; t < VK_NTYPES; t++) { /* add takes no bools */
    emit_valid(sample_add((enum bxk_type)vk_types[t], true), 0, 0);
    emit_valid(sample_add((enum bxk_type)vk_types[t], false), 0, 0);
  }
  emit_valid(sample_gelu(BXK_F32), ~0u, 0);
  emit_valid(sample_gelu(BXK_F64), ~0u, BXVK_NEED(FLOAT64));
  emit_valid(sample_gelu(BXK_F16), ~0u, BXVK_NEED(FLOAT16) | BXVK_NEED(STORAGE16));
  emit_valid(sample_loops(), ~0u, 0);
  emit_valid(sample_topo(), ~0u, 0);
  emit_valid(sample_shared_sum(), ~0u, 0);
  for (uint32_t d = 1; d <= 256; d *= 2) emit_valid(vk_tree_sum(d), ~0u, 0);
  emit_valid(vk_scalars(), ~0u, BXVK_NEED(INT8) | BXVK_NEED(FLOAT16) | BXVK_NEED(INT64) | BXVK_NEED(FLOAT64));
  emit_valid(vk_views(), ~0u, 0);
  cr_log_info("spirv: %u sample kernels valid", validated);
  cr_assert_eq(validated, 14 + 6 + 9 + 2);
}

/* What each type needs from the device, read off the module. */
Test(spirv, needs_follow_the_types) {
  static const unsigned need[VK_NTYPES] = {
      BXVK_NEED(INT8) | BXVK_NEED(STORAGE8), BXVK_NEED(INT8) | BXVK_NEED(STORAGE8), 0, 0, BXVK_NEED(INT64),
      BXVK_NEED(FLOAT16) | BXVK_NEED(STORAGE16), 0, BXVK_NEED(FLOAT64)};
  for (size_t t = 1; t < VK_NTYPES; t++) emit_valid(sample_add((enum bxk_type)vk_types[t], true), ~0u, need[t]);
  emit_valid(sample_binop(BXK_OP_AND, BXK_BOOL), ~0u, need[0]);
}

Test(spirv, op_matrix_validates) {
  validated = 0;
  unsigned ops[BXK_OP_COUNT], n, total = 0;
  for (size_t t = 0; t < VK_NTYPES; t++) {
    emit_valid(vk_binops(vk_types[t], ops, &n), 0, 0);
    total += n;
    emit_valid(vk_unops(vk_types[t], ops, &n), 0, 0);
    total += n;
    emit_valid(vk_casts(vk_types[t]), 0, 0);
    total += VK_NTYPES;
  }
  cr_log_info("spirv: %u op x type rows in %u modules, all valid", total, validated);
  cr_assert_eq(validated, 24);
  cr_assert_geq(total, 251);
}

/* Kernels with too many scalars are refused by name; unverified IR never
 * reaches the emitter. */
Test(spirv, refusals_are_named) {
  struct bxk_diags ds = {0};
  struct bxvk_spirv m;
  struct bxk_kernel *k;
  k = bxk_kernel_new("many");
  for (int j = 0; j < 17; j++) bxk_add_scalar(k, BXK_F32);
  memset(&ds, 0, sizeof ds);
  cr_assert_not(bxvk_emit(k, &m, &ds));
  cr_assert(strstr(ds.d[0].msg, "kernel many: has 17 scalar parameters"), "%s", ds.d[0].msg);
  bxk_kernel_free(k);

  k = bxk_kernel_new("ro");
  int b = bxk_add_binding(k, BXK_F32, 1, false);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_store(&B, b, bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS), bxk_const_f(&B, BXK_F32, 1));
  memset(&ds, 0, sizeof ds);
  cr_assert_not(bxvk_emit(k, &m, &ds));
  cr_assert_eq(ds.d[0].err, BXK_E_READONLY);
  bxk_kernel_free(k);

  memset(&ds, 0, sizeof ds);
  cr_assert_not(bxvk_emit(NULL, &m, &ds));
  cr_assert_eq(ds.n, 1);

  /* bf16 is refused by name, located at the first instruction that uses it */
  k = sample_cast(BXK_BF16, BXK_F32);
  struct bxk_loc here = {1, 40, 7};
  for (struct bxk_inst *i = k->body.first; i; i = i->next)
    if (i->op == BXK_OP_CAST) i->loc = here;
  memset(&ds, 0, sizeof ds);
  cr_assert_not(bxvk_emit(k, &m, &ds));
  cr_assert_eq(ds.n, 1);
  cr_expect_eq(ds.d[0].err, BXK_E_LOWER);
  cr_expect(strstr(ds.d[0].msg, "kernel cast uses bf16, which the SPIR-V lowering cannot compile yet"), "%s",
            ds.d[0].msg);
  cr_expect(ds.d[0].loc.off == 40 && ds.d[0].loc.len == 7, "located at the cast");
  bxk_kernel_free(k);
}

/* The validator is a real check: a module with a damaged instruction
 * fails it. */
Test(spirv, validator_rejects_damaged_module) {
  struct bxk_diags ds = {0};
  struct bxvk_spirv m;
  struct bxk_kernel *k = sample_add(BXK_F32, true);
  cr_assert(bxvk_emit(k, &m, &ds));
  char err[8192];
  cr_assert(vk_spv_valid(&m, err, sizeof err), "%s", err);
  /* the last instruction is OpFunctionEnd: drop it */
  m.nwords--;
  cr_assert_not(vk_spv_valid(&m, err, sizeof err));
  m.nwords++;
  m.words[3] = 2; /* an id bound below the ids used */
  cr_assert_not(vk_spv_valid(&m, err, sizeof err));
  bxvk_spirv_free(&m);
  bxk_kernel_free(k);
}

/* ------------------------------------------------------ .bext kernels */

/* Checks SOURCE_DIR/rel; lowers every kernel instance when it checks
 * cleanly and validates each.  Returns how many (-1: not clean). */
static int bext_file(const char *rel) {
  const char *root = getenv("BEXT_SOURCE_DIR");
  cr_assert(root, "BEXT_SOURCE_DIR is not set");
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  bxc_unit u;
  bxc_unit_init(&u);
  cr_assert_neq(bxc_unit_load(&u, path), BXC_LOAD_UNREADABLE, "cannot read %s", path);
  if (!bxc_check_unit(&u) || u.diags.count) {
    bxc_unit_free(&u);
    return -1;
  }
  struct bxk_kernel **ks;
  uint32_t n;
  cr_assert(bxc_cube_lower_root(&u, &ks, &n), "%s: lowering failed", rel);
  for (uint32_t i = 0; i < n; i++) {
    if (bxk_kernel_uses_type(ks[i], BXK_BF16, NULL)) { /* refused by name (refusals_are_named) */
      struct bxk_diags ds = {0};
      struct bxvk_spirv m;
      cr_expect_not(bxvk_emit(ks[i], &m, &ds), "kernel %s: bf16 lowered to SPIR-V", ks[i]->name);
      cr_expect(ds.n && ds.d[0].err == BXK_E_LOWER, "kernel %s: no K0013", ks[i]->name);
      refused_bf16++;
      bxk_kernel_free(ks[i]);
      continue;
    }
    emit_valid(ks[i], 0, 0);
  }
  free(ks);
  bxc_unit_free(&u);
  return (int)n;
}

Test(spirv, bext_kernels_validate) {
  validated = refused_bf16 = 0;
  int total = 0, files = 0;
  static const char *const dirs[] = {"tests/kir/cube", "tests/golden"};
  const char *root = getenv("BEXT_SOURCE_DIR");
  cr_assert(root);
  for (size_t d = 0; d < 2; d++) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s", root, dirs[d]);
    DIR *D = opendir(dir);
    cr_assert(D, "cannot open %s", dir);
    struct dirent *de;
    while ((de = readdir(D))) {
      size_t len = strlen(de->d_name);
      if (len < 6 || strcmp(de->d_name + len - 5, ".bext") != 0) continue;
      if (d == 1 && strncmp(de->d_name, "cube_", 5) != 0) continue;
      char rel[512];
      snprintf(rel, sizeof rel, "%s/%s", dirs[d], de->d_name);
      int n = bext_file(rel);
      if (n < 0) cr_log_info("spirv: %s: does not check cleanly (expected errors inline): skipped", rel);
      else cr_log_info("spirv: %s: %d kernel instances", rel, n);
      if (n >= 0) total += n, files++;
    }
    closedir(D);
  }
  int n = bext_file("tests/compiler/lang/kernels.bext");
  cr_assert_eq(n, 14);
  total += n;
  cr_log_info("spirv: %d .bext kernel instances from %d files, all valid", total, files + 1);
  cr_assert_geq(files, 4, "the 4 kernels of tests/kir/cube at least");
  cr_assert_eq((int)(validated + refused_bf16), total);
}
