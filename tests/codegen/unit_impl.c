/* unit_impl.c — inherent impl methods in the generated C (docs/codegen.md,
 * "impl methods"): emitted as metadata functions named
 * <stem>_<type>_<method>, called by the metadata functions that use them
 * (field expressions, `meta`, helpers and custom scalar encodings, so
 * nothing is left to the run-time E1010 fallback), and a clash with a
 * helper fn's C name is a located error.  Their results are compared with
 * the interpreter's by unit_diff.c (tests/codegen/ext/impls.bext). */
#include "unit_util.h"

static unsigned count_code(const bxc_diag_list *l, const char *code) {
  unsigned n = 0;
  for (uint32_t i = 0; i < l->count; i++) n += strcmp(l->items[i].code, code) == 0;
  return n;
}

Test(impl, scalar_encoding_example_lowers_without_fallback) {
  bxc_unit u;
  cg_load(&u, "tests/compiler/lang/scalars.bext");
  const char *h, *c;
  cr_assert(bxc_emit_c_memory(&u, NULL, &h, &c));
  cr_assert_eq(count_code(&u.diags, "W1101"), 0, "a construct was not lowered");
  cr_assert(strstr(h, "bool scalars_strategy_to_code(const Strategy *self, uint32_t *bext_out, bext_meta_error *err);"),
            "%s", h);
  cr_assert(strstr(h, "bool scalars_strategy_default_strategy(Strategy *bext_out, bext_meta_error *err);"), "%s", h);
  cr_assert_null(strstr(c, "E1010"), "a metadata function fell back to the run-time error");
  /* the custom scalar encoding `strategy.to_code()` calls the impl fn */
  cr_assert(strstr(h, "bool ops_blend_scalar_strategy(const bext_meta_spec *x, const Strategy *strategy, "
                      "uint32_t *bext_out, bext_meta_error *err);"), "%s", h);
  const char *enc = strstr(c, "bool ops_blend_scalar_strategy(");
  cr_assert_not_null(enc);
  cr_assert(strstr(enc, "scalars_strategy_to_code(&"), "the encoding does not call the impl fn");
  bxc_unit_free(&u);
}

Test(impl, callers_call_the_emitted_functions) {
  bxc_unit u;
  cg_load(&u, "tests/codegen/ext/impls.bext");
  const char *h, *c;
  cr_assert(bxc_emit_c_memory(&u, NULL, &h, &c));
  cr_assert_eq(count_code(&u.diags, "W1101"), 0);
  cr_assert_null(strstr(c, "E1010"));
  /* a method call, an associated fn, a method through its type */
  cr_assert(strstr(c, "impls_window_out_len(&"));
  cr_assert(strstr(c, "impls_window_new("));
  cr_assert(strstr(c, "impls_mode_code(&"));
  cr_assert(strstr(c, "impls_mode_fallback("));
  bxc_unit_free(&u);
}

/* The checker reports it (the generator's name plan, emit.h
 * bxc_emit_check_names), so `--check` and bext-lsp see what -o refuses. */
Test(impl, c_name_clash_is_a_located_error) {
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/codegen/bad/impl_clash.bext", cg_src());
  bxc_unit u;
  bxc_unit_init(&u);
  bxc_unit_load(&u, path);
  cr_assert_not(bxc_check_unit(&u));
  bool found = false;
  for (uint32_t i = 0; i < u.diags.count; i++) {
    const bxc_diag *d = &u.diags.items[i];
    if (d->severity == BXC_SEV_ERROR && strstr(d->message, "impl fn `Mode::code` and helper fn `mode_code`") &&
        strstr(d->message, "`impl_clash_mode_code`")) {
      found = true;
      /* located (on the impl fn's name) */
      cr_assert_gt(d->span.length, 0u);
    }
  }
  cr_assert(found, "no clash error");
  bxc_unit_free(&u);
}
