/* unit_ops.c — the compiler's tensor-op table (compiler/tensor_ops.c)
 * against the runtime: every row of BXR_OP_TABLE has a surface or a reason
 * why not, the derived surfaces are the ones language.md §3 promises, and
 * every surface's C call (receiver, argument kinds, keepdim, fixed args)
 * compiles against bext.h / gen.h with -Werror, so a table that drifts
 * from the public API fails here rather than in a user's build. */
#include "tensor_ops.h"
#include "unit_util.h"

Test(ops, every_row_has_a_surface_or_a_reason) {
  uint32_t rows = bxc_top_row_count(), n;
  const bxc_top *all = bxc_top_all(&n);
  cr_assert_eq(rows, 87u);
  for (uint32_t r = 0; r < rows; r++) {
    const char *name = bxc_top_row_name((int)r);
    bool surfaced = false;
    for (uint32_t i = 0; i < n; i++)
      if (all[i].row == (int)r && strcmp(all[i].name, "transpose") && strcmp(all[i].name, "gelu")) surfaced = true;
    const char *why = bxc_top_excluded(name);
    cr_assert(surfaced != (why != NULL), "row `%s`: surfaced=%d, reason=%s", name, surfaced, why ? why : "-");
  }
  cr_assert_not_null(bxc_top_excluded("reshape"));
  cr_assert_not_null(bxc_top_excluded("cat"));
  cr_assert_null(bxc_top_excluded("swap_dims"));
}

Test(ops, derived_surfaces) {
  const bxc_top *t = bxc_top_find("sum_dim");
  cr_assert_not_null(t);
  cr_assert_str_eq(t->cfn, "bext_sum_dim");
  cr_assert(t->keepdim);
  cr_assert_eq(t->nargs, 1);
  cr_assert_eq(t->args[0], BXC_TOP_ARG_DIM);
  t = bxc_top_find("max_all");   /* MAX_REDUCE's whole form: `max` is the binary op */
  cr_assert_not_null(t);
  cr_assert_str_eq(t->cfn, "bext_max_all");
  t = bxc_top_find("max");
  cr_assert_eq(t->args[0], BXC_TOP_ARG_OPERAND);
  cr_assert_str_eq(t->scalar_cfn, "bext_max_scalar");
  t = bxc_top_find("matmul");
  cr_assert_eq(t->args[0], BXC_TOP_ARG_TENSOR, "no matmul_scalar row: tensors only");
  cr_assert_null(t->scalar_cfn);
  t = bxc_top_find("erf");
  cr_assert_eq(t->kinds, BXC_TOP_KF);
  cr_assert_str_eq(t->cmath, "erf");
  cr_assert_eq(bxc_top_find("argmax_dim")->out, BXC_TOP_OUT_INT);
  cr_assert_eq(bxc_top_find("gt")->out, BXC_TOP_OUT_BOOL);
  cr_assert_eq(bxc_top_find("mask_fill")->args[0], BXC_TOP_ARG_MASK);
  cr_assert_eq(bxc_top_find("gather")->args[1], BXC_TOP_ARG_INDICES);
  cr_assert_eq(bxc_top_find("powi")->args[0], BXC_TOP_ARG_INT);
  cr_assert_eq(bxc_top_operator(BXC_BIN_LT), bxc_top_find("lt"));
  cr_assert_null(bxc_top_find("reshape"));
  cr_assert_null(bxc_top_find("cast"));
}

/* One C statement per surface calling its function the way emit_body.c
 * does, compiled with gcc -Werror: arity and pointer-vs-number mistakes
 * are hard errors. */
Test(ops, every_surface_calls_a_real_bext_function, .timeout = 60) {
  uint32_t n;
  const bxc_top *all = bxc_top_all(&n);
  char path[1024];
  snprintf(path, sizeof path, "%s/ops_calls.c", cg_tmp());
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs("#include \"bext/gen.h\"\n"
        "void calls(bext_tensor *t, bext_tensor *u, double s, int64_t k, int d);\n"
        "void calls(bext_tensor *t, bext_tensor *u, double s, int64_t k, int d) {\n"
        "  bext_tensor *r;\n  double x;\n",
        f);
  for (uint32_t i = 0; i < n; i++) {
    const bxc_top *t = &all[i];
    fprintf(f, "  r = %s(t", t->cfn);
    for (uint32_t j = 0; j < t->nargs; j++) {
      switch (t->args[j]) {
      case BXC_TOP_ARG_DIM: fputs(", d", f); break;
      case BXC_TOP_ARG_INT: fputs(", k", f); break;
      case BXC_TOP_ARG_FLOAT: fputs(", s", f); break;
      default: fputs(", u", f); break;
      }
    }
    if (t->fixed_args) fprintf(f, ", %s", t->fixed_args);
    if (t->keepdim) fputs(", true", f);
    fputs(");\n  (void)r;\n", f);
    if (t->scalar_cfn) fprintf(f, "  r = %s(t, s);\n  (void)r;\n", t->scalar_cfn);
    if (t->cmath) fprintf(f, "  x = %s(s);\n  (void)x;\n", t->cmath);
  }
  fputs("}\n", f);
  fclose(f);
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "cd %s && gcc -std=c11 -Wall -Wextra -Werror -Wconversion -Wno-sign-conversion -Iruntime/include -I%s/../include -c %s "
           "-o %s/ops_calls.o",
           cg_src(), getenv("BEXT_BIN_DIR"), path, cg_tmp());
  cr_assert_eq(cg_run(cmd), 0, "a surface's call does not match bext.h (see %s)", path);
}
