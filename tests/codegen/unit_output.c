/* unit_output.c — what bextc -o writes: golden headers for stable cases,
 * deterministic bytes, the depfile, and every valid example of
 * language.md (tests/compiler/lang) plus the codegen test extensions
 * compiled with gcc and clang -Wall -Wextra -Wpedantic -Werror, with and
 * without feature macros, and with gcc -O3 (-Wmaybe-uninitialized). */
#include "unit_util.h"

/* Golden files: tests/codegen/golden/<name>.h is the expected header of
 * tests/compiler/lang/<name>.bext (or ext/<name>.bext).  To accept a
 * deliberate change, regenerate with
 *   bextc tests/compiler/lang/items.bext -o tests/codegen/golden
 * and keep only the .h. */
static void golden(const char *rel, const char *name) {
  bxc_unit u;
  cg_load(&u, rel);
  const char *h, *c;
  cr_assert(bxc_emit_c_memory(&u, NULL, &h, &c));
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/codegen/golden/%s.h", cg_src(), name);
  char *want = cg_read(path, NULL);
  cr_assert_not_null(want, "missing golden file %s", path);
  if (strcmp(want, h) != 0) {
    char out[1024];
    snprintf(out, sizeof out, "%s/%s.h.actual", cg_tmp(), name);
    FILE *f = fopen(out, "wb");
    if (f) {
      fputs(h, f);
      fclose(f);
    }
    cr_assert_fail("generated header of %s differs from %s (actual output in %s)", rel, path, out);
  }
  free(want);
  bxc_unit_free(&u);
}

Test(output, golden_items_header) { golden("tests/compiler/lang/items.bext", "items"); }
Test(output, golden_fusion_header) { golden("tests/compiler/lang/fusion.bext", "fusion"); }
Test(output, golden_route_header) { golden("tests/codegen/ext/route.bext", "route"); }

Test(output, same_input_same_bytes) {
  const char *files[] = {"tests/compiler/lang/meta_exprs.bext", "tests/codegen/ext/meta.bext",
                         "tests/codegen/ext/route.bext"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    bxc_unit a, b;
    cg_load(&a, files[i]);
    cg_load(&b, files[i]);
    const char *ha, *ca, *hb, *cb;
    cr_assert(bxc_emit_c_memory(&a, NULL, &ha, &ca));
    cr_assert(bxc_emit_c_memory(&b, NULL, &hb, &cb));
    cr_assert_str_eq(ha, hb, "%s: header differs between two runs", files[i]);
    cr_assert_str_eq(ca, cb, "%s: source differs between two runs", files[i]);
    bxc_unit_free(&a);
    bxc_unit_free(&b);
  }
  /* and through the driver, to files */
  char cmd[4096];
  const char *bin = getenv("BEXT_BIN_DIR");
  cr_assert(bin);
  snprintf(cmd, sizeof cmd,
           "cd %s && %s/bextc tests/codegen/ext/meta.bext -o %s/det1 -MD && %s/bextc tests/codegen/ext/meta.bext "
           "-o %s/det2 -MD && cmp %s/det1/meta.c %s/det2/meta.c && cmp %s/det1/meta.h %s/det2/meta.h",
           cg_src(), bin, cg_tmp(), bin, cg_tmp(), cg_tmp(), cg_tmp(), cg_tmp(), cg_tmp());
  cr_assert_eq(cg_run(cmd), 0, "two bextc runs differ");
}

Test(output, depfile_lists_every_bext_read) {
  char cmd[2048];
  const char *bin = getenv("BEXT_BIN_DIR");
  cr_assert(bin);
  snprintf(cmd, sizeof cmd, "cd %s && %s/bextc tests/codegen/ext/meta.bext -o %s/dep -MD", cg_src(), bin, cg_tmp());
  cr_assert_eq(cg_run(cmd), 0);
  char path[1024];
  snprintf(path, sizeof path, "%s/dep/meta.d", cg_tmp());
  char *d = cg_read(path, NULL);
  cr_assert_not_null(d);
  cr_assert(strstr(d, "/dep/meta.c"), "%s", d);
  cr_assert(strstr(d, "tests/codegen/ext/meta.bext"), "%s", d);
  cr_assert(strstr(d, "std/shape.bext"), "the imported stdlib module is missing: %s", d);
  free(d);
}

Test(output, errors_leave_no_files) {
  /* A unit with an error is never emitted: bextc stops after the checker
   * and the output directory stays empty. */
  char cmd[2048];
  const char *bin = getenv("BEXT_BIN_DIR");
  snprintf(cmd, sizeof cmd,
           "cd %s && rm -rf %s/bad && ! %s/bextc samples/ext/bad_selector.bext -o %s/bad 2>/dev/null && "
           "! ls %s/bad/*.c 2>/dev/null",
           cg_src(), cg_tmp(), bin, cg_tmp(), cg_tmp());
  cr_assert_eq(cg_run(cmd), 0);
}

/* Every valid language.md example and every codegen test extension: bextc -o,
 * then gcc and clang, strict, with no features and with all of them. */
Test(output, examples_compile_warning_free, .timeout = 600) {
  const char *bin = getenv("BEXT_BIN_DIR");
  cr_assert(bin);
  char cmd[8192];
  snprintf(cmd, sizeof cmd,
           "set -e; cd %s; out=%s/lang; rm -rf $out; mkdir -p $out; n=0; "
           "feats='-DBEXT_FEATURE_NDARRAY -DBEXT_FEATURE_WGPU -DBEXT_FEATURE_NO_NDARRAY -DBEXT_FEATURE_TORCH "
           "-DBEXT_FEATURE_REMOTE -DBEXT_FEATURE_FUSION -DBEXT_FEATURE_ND -DBEXT_FEATURE_EXTRA'; "
           "for f in tests/compiler/lang/*.bext tests/codegen/ext/*.bext samples/*/*.bext "
           "tests/compiler/parse_only/*.bext; do "
           "  case $f in */bad_*) continue;; "
           /* §6/§8 examples: only while the checker accepts them */
           "    */parse_only/*) %s/bextc $f --check 2>/dev/null || continue;; esac; "
           "  %s/bextc $f -o $out; s=$(basename $f .bext); "
           "  for cc in gcc clang; do "
           "    for d in '' \"-O2 $feats\"; do "
           "      $cc -std=c11 -Wall -Wextra -Wpedantic -Werror $d -Iruntime/include -I%s/../include -c $out/$s.c -o $out/$s.o; "
           "      n=$((n+1)); "
           "    done; "
           "  done; "
           /* gcc -O3 runs the flow analyses behind -Wmaybe-uninitialized
            * (every generated local must be initialized on every path) */
           "  for d in '-O3' \"-O3 $feats\"; do "
           "    gcc -std=c11 -Wall -Wextra -Wpedantic -Werror $d -Iruntime/include -I%s/../include -c $out/$s.c -o $out/$s.o; "
           "    n=$((n+1)); "
           "  done; "
           "done; test $n -ge 36",
           cg_src(), cg_tmp(), bin, bin, bin, bin);
  cr_assert_eq(cg_run(cmd), 0, "an example's generated C does not compile cleanly (see the output above)");
}

Test(output, unwritable_directory_is_a_clear_error) {
  /* /dev/null is a file: no directory can be created below it. */
  char cmd[2048];
  const char *bin = getenv("BEXT_BIN_DIR");
  snprintf(cmd, sizeof cmd, "cd %s && %s/bextc tests/compiler/lang/items.bext -o /dev/null/gen 2> %s/io.err; test $? -eq 2",
           cg_src(), bin, cg_tmp());
  cr_assert_eq(cg_run(cmd), 0, "bextc should exit 2 (an unwritable output is not an error in the input)");
  char path[1024];
  snprintf(path, sizeof path, "%s/io.err", cg_tmp());
  char *err = cg_read(path, NULL);
  cr_assert_not_null(err);
  cr_assert(strstr(err, "cannot create directory `/dev/null`") || strstr(err, "cannot create directory `/dev/null/gen`"),
            "unexpected message: %s", err);
  free(err);
}
