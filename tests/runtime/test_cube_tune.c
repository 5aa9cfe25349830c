/* test_cube_tune.c — the cube devices' autotuner (backends/cube/cube_tune.c)
 * on cube:cpu.  Every candidate cube_dim of a tuned family gives the same
 * bits (forced one by one through cube_tune_force); the first process
 * start with a key times the candidates and appends the decision to
 * <BEXT_CACHE_DIR>/autotune.txt, a second start (a forked child, as
 * test_kernel_cache.c does it) reads it and times nothing; a damaged or
 * foreign-version file is rejected, warned about once and rewritten;
 * BEXT_AUTOTUNE=0 times, reads and writes nothing.  Each test has its own
 * temporary cache folder. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bxk.h"
#include "cube/cube.h"

static char tmp[64];
static char file[128];

/* A private folder for autotune.txt whose kernels/ links to the suite's
 * kernel cache (when there is one), so no test compiles the stdlib
 * kernels again: compiled code does not depend on the decisions. */
static void private_cache(void) {
  strcpy(tmp, "/tmp/bext-tune-XXXXXX");
  cr_assert_not_null(mkdtemp(tmp));
  const char *suite = getenv("BEXT_CACHE_DIR");
  if (suite && *suite && strcmp(suite, "off") != 0) {
    char from[4096], to[128];
    snprintf(from, sizeof from, "%s/kernels", suite);
    snprintf(to, sizeof to, "%s/kernels", tmp);
    mkdir(suite, 0755);
    mkdir(from, 0755);
    if (symlink(from, to) != 0) perror("symlink");
  }
  setenv("BEXT_CACHE_DIR", tmp, 1);
  snprintf(file, sizeof file, "%s/autotune.txt", tmp);
  unsetenv("BEXT_AUTOTUNE");
}
static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f) { return remove(p); }
static void remove_cache(void) { nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS); }
TestSuite(cube_tune, .init = private_cache, .fini = remove_cache);

/* Sizes above the tuner's minimum (2^15 elements of work), not multiples
 * of any candidate, so the flat launches have a tail. */
#define N_EW (70001)
#define ROWS 37
#define COLS 1999

static const bext_device *cube(void) { return bext_device_get("cube:cpu"); }

static bext_tensor *ramp(int64_t n, double scale) {
  float *v = malloc((size_t)n * sizeof *v);
  for (int64_t i = 0; i < n; i++) v[i] = (float)(scale * (double)((i * 7919) % 1009) / 97.0 - 3.0);
  bext_tensor *t = bext_from_data(v, BEXT_F32, &n, 1, cube());
  free(v);
  return t;
}

/* The results of the tuned ops, flattened into one f32 buffer: exp, add
 * (contiguous) and a broadcast add (strided), a float sum over the long
 * axis of few rows (two passes) and the short one, max over dim and a
 * cumsum (the line family). */
struct results { float *v; size_t n; };

/* Appends t's values (f32; OWNS t). */
static void take(struct results *r, bext_tensor *t) {
  cr_assert_not_null(t, "%s", bext_last_error());
  cr_assert_eq(bext_dtype_of(t), BEXT_F32);
  size_t n = (size_t)bext_numel(t);
  r->v = realloc(r->v, (r->n + n) * sizeof *r->v);
  cr_assert(bext_read(t, r->v + r->n, n * sizeof *r->v), "%s", bext_last_error());
  r->n += n;
  bext_release(t);
}

#define KEEP(t) bext_retain(t)

static struct results run_ops(void) {
  struct results r = {0};
  bext_tensor *a = ramp(N_EW, 1.0), *b = ramp(N_EW, 0.5);
  take(&r, bext_exp(KEEP(a)));
  take(&r, bext_add(a, b));
  int64_t shape[2] = {ROWS, COLS}, big[2] = {7, 40000}, row[2] = {1, COLS};
  bext_tensor *m = bext_reshape(ramp(ROWS * COLS, 1.0), shape, 2);
  bext_tensor *rw = bext_reshape(ramp(COLS, 2.0), row, 2);
  bext_tensor *l = bext_reshape(ramp(7 * 40000, 1.0), big, 2);
  cr_assert(m && rw && l, "%s", bext_last_error());
  take(&r, bext_add(KEEP(m), rw));
  take(&r, bext_sum_dim(KEEP(m), 0, false));
  take(&r, bext_sum_dim(KEEP(m), 1, false));
  take(&r, bext_sum_dim(l, 1, false));
  take(&r, bext_max_dim(KEEP(m), 1, false));
  take(&r, bext_cumsum(m, 1));
  return r;
}

static void expect_same(const struct results *x, const struct results *y, const char *what, uint32_t dim) {
  cr_assert_eq(x->n, y->n);
  cr_expect(memcmp(x->v, y->v, x->n * sizeof *x->v) == 0, "%s: cube_dim %u changed a result", what, dim);
}

static void every_candidate(const struct cube_tune_family *f) {
  cube_tune_force(f->def);
  struct results ref = run_ops();
  for (int i = 0; i < f->ncand; i++) {
    cube_tune_force(f->cand[i]);
    struct results got = run_ops();
    expect_same(&ref, &got, f->name, f->cand[i]);
    free(got.v);
  }
  /* untuned and tuned answers agree with the forced ones too */
  cube_tune_force(0);
  struct results tuned = run_ops();
  expect_same(&ref, &tuned, "tuned", 0);
  setenv("BEXT_AUTOTUNE", "0", 1);
  struct results plain = run_ops();
  expect_same(&ref, &plain, "BEXT_AUTOTUNE=0", 0);
  free(ref.v), free(tuned.v), free(plain.v);
}

/* cube_tune_force answers any candidate of its family; the other
 * families answer their default for a dim that is not theirs. */
Test(cube_tune, elementwise_candidates_give_identical_bits) { every_candidate(&cube_tune_elementwise); }
Test(cube_tune, reduce_candidates_give_identical_bits) { every_candidate(&cube_tune_reduce); }
Test(cube_tune, sum_candidates_give_identical_bits) { every_candidate(&cube_tune_sum); }

/* ---------------------------------------------------------- processes */

struct counts { unsigned long timed, loaded, rejects; bool ok; };

static struct counts start_here(void) {
  struct counts c = {0};
  int64_t shape[2] = {ROWS, COLS};
  bext_tensor *e = bext_exp(ramp(N_EW, 1.0));
  bext_tensor *s = bext_sum_dim(bext_reshape(ramp(ROWS * COLS, 1.0), shape, 2), 1, false);
  c.ok = e && s;
  bext_kernel_stat st;
  bext_kernel_stats(&st);
  c.timed = st.tune_timed, c.loaded = st.tune_loaded, c.rejects = st.tune_rejects;
  if (e) bext_release(e);
  if (s) bext_release(s);
  return c;
}

/* A fresh process start (a forked child: this test process has run no
 * op yet); its stderr goes to errpath when given. */
static struct counts start(const char *errpath) {
  int fd[2];
  cr_assert_eq(pipe(fd), 0);
  fflush(NULL);
  pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (pid == 0) {
    if (errpath) {
      int e = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(e, 2);
    }
    struct counts c = start_here();
    ssize_t w = write(fd[1], &c, sizeof c);
    _exit(w == (ssize_t)sizeof c ? 0 : 1);
  }
  close(fd[1]);
  struct counts c = {0};
  cr_assert_eq(read(fd[0], &c, sizeof c), (ssize_t)sizeof c, "the child died");
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  cr_assert(c.ok, "an op failed in the child");
  return c;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  static char buf[65536];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = 0;
  fclose(f);
  return buf;
}

static int lines(const char *s) {
  int n = 0;
  for (; s && *s; s++) n += *s == '\n';
  return n;
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f);
  fputs(text, f);
  fclose(f);
}

Test(cube_tune, decisions_persist_across_processes) {
  struct counts first = start(NULL);
  cr_expect_gt(first.timed, 0, "the first start timed no candidate");
  cr_expect_eq(first.loaded, 0);
  const char *s = slurp(file);
  cr_assert_not_null(s, "no %s after the first start", file);
  cr_expect(strncmp(s, "bext-autotune 1\n", 16) == 0, "header: %.40s", s);
  cr_expect_eq(lines(s), 3, "a header and two decisions (exp, the sum):\n%s", s);
  cr_expect_not_null(strstr(s, "\ncube:cpu|"), "keyed by the device's name:\n%s", s);
  struct counts second = start(NULL);
  cr_expect_eq(second.timed, 0, "the second start timed %lu candidates", second.timed);
  cr_expect_eq(second.loaded, 2);
  cr_expect_eq(second.rejects, 0);
  cr_expect_eq(lines(slurp(file)), 3, "the second start appended:\n%s", slurp(file));
}

static void rejected_and_rewritten(const char *content, const char *why) {
  write_file(file, content);
  char err[160];
  snprintf(err, sizeof err, "%s/stderr", tmp);
  struct counts c = start(err);
  cr_expect_eq(c.rejects, 1, "%s: not rejected", why);
  cr_expect_eq(c.loaded, 0, "%s: entries taken from a rejected file", why);
  cr_expect_gt(c.timed, 0, "%s: nothing timed after the rejection", why);
  const char *e = slurp(err);
  int warnings = 0;
  for (const char *p = e; p && (p = strstr(p, "autotune cache")); p++) warnings++;
  cr_expect_eq(warnings, 1, "%s: %d warnings, stderr: %s", why, warnings, e);
  const char *s = slurp(file);
  cr_expect(s && strncmp(s, "bext-autotune 1\n", 16) == 0 && lines(s) == 3, "%s: not rewritten:\n%s", why, s);
  struct counts again = start(NULL);
  cr_expect(again.timed == 0 && again.rejects == 0 && again.loaded == 2, "%s: the rewritten file was not reused", why);
}

Test(cube_tune, garbage_file_is_rejected_and_rewritten) {
  rejected_and_rewritten("hello\nworld\n", "garbage");
}

Test(cube_tune, foreign_version_is_rejected_and_rewritten) {
  rejected_and_rewritten("bext-autotune 99\nwhatever\t1\t0\n", "version 99");
}

Test(cube_tune, damaged_line_is_rejected_and_rewritten) {
  /* a well-formed line whose checksum does not match */
  rejected_and_rewritten("bext-autotune 1\ncube:cpu|x|t1|elementwise|k|16|-1\t256\t0123456789abcdef\n", "bad checksum");
}

Test(cube_tune, a_file_with_one_bad_line_gives_no_entry) {
  /* a valid line first: the whole file is checked before any entry is taken */
  char text[256];
  uint64_t h = bxk_hash64((const uint8_t *)"some key\t64", 11);
  snprintf(text, sizeof text, "bext-autotune 1\nsome key\t64\t%016llx\n", (unsigned long long)h);
  write_file(file, text);
  struct counts alone = start(NULL);
  cr_expect(alone.loaded == 1 && alone.rejects == 0, "the valid line alone: loaded %lu, rejected %lu", alone.loaded,
            alone.rejects);
  strcat(text, "broken\n");
  rejected_and_rewritten(text, "valid then broken");
}

Test(cube_tune, unterminated_last_line_is_an_append_in_flight) {
  write_file(file, "bext-autotune 1\ncube:cpu|x|t1|elementwise|k|16|-1\t25");
  struct counts c = start(NULL);
  cr_expect_eq(c.rejects, 0);
  cr_expect_gt(c.timed, 0);
}

Test(cube_tune, off_times_reads_and_writes_nothing) {
  setenv("BEXT_AUTOTUNE", "0", 1);
  write_file(file, "hello\n");   /* read, it would be rejected and rewritten */
  struct counts c = start(NULL);
  cr_expect(c.timed == 0 && c.loaded == 0 && c.rejects == 0, "timed %lu loaded %lu rejected %lu", c.timed,
            c.loaded, c.rejects);
  cr_expect_str_eq(slurp(file), "hello\n");
  unlink(file);
  c = start(NULL);
  cr_expect_eq(c.timed, 0);
  cr_expect_null(slurp(file), "BEXT_AUTOTUNE=0 wrote %s", file);
}

Test(cube_tune, cache_off_still_tunes_in_memory) {
  setenv("BEXT_CACHE_DIR", "off", 1);
  struct counts c = start(NULL);
  cr_expect_gt(c.timed, 0);
  cr_expect_null(slurp(file));
}
