/* unit_util.h — shared helpers of the codegen unit tests (unit_*.c):
 * loading and checking a .bext file, generating C into a directory,
 * running a shell command, reading a file. */
#ifndef CODEGEN_UNIT_UTIL_H
#define CODEGEN_UNIT_UTIL_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "diag.h"
#include "emit.h"
#include "module.h"

static inline const char *cg_src(void) {
  const char *s = getenv("BEXT_SOURCE_DIR");
  cr_assert(s, "BEXT_SOURCE_DIR is not set (run through ctest)");
  return s;
}

static inline const char *cg_tmp(void) {
  const char *s = getenv("BEXT_CODEGEN_TMP");
  cr_assert(s, "BEXT_CODEGEN_TMP is not set (run through ctest)");
  mkdir(s, 0777);
  return s;
}

/* Loads and checks path (relative to the source tree); fails the test on
 * any diagnostic error. */
static inline void cg_load(bxc_unit *u, const char *rel) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", cg_src(), rel);
  bxc_unit_init(u);
  bxc_unit_load(u, path);
  bxc_check_unit(u);
  if (bxc_diag_has_errors(&u->diags)) {
    bxc_diag_render_text(stderr, &u->diags, &u->sources);
    cr_assert_fail("%s does not check", rel);
  }
}

/* Loads and checks; false (no test failure) when the file has errors. */
static inline bool cg_try_load(bxc_unit *u, const char *rel) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", cg_src(), rel);
  bxc_unit_init(u);
  bxc_unit_load(u, path);
  bxc_check_unit(u);
  if (!bxc_diag_has_errors(&u->diags)) return true;
  bxc_unit_free(u);
  return false;
}

static inline char *cg_read(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)n + 1);
  size_t got = fread(b, 1, (size_t)n, f);
  fclose(f);
  b[got] = 0;
  if (len) *len = got;
  return b;
}

static inline int cg_run(const char *cmd) {
  int rc = system(cmd);
  return rc;
}

#endif
