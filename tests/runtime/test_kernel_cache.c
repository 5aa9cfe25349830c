/* test_kernel_cache.c — the on-disk kernel cache (kernel_cache.c) across
 * processes.  Each "process start" is a forked child of the test (which
 * has not loaded LLVM yet when it forks) that prepares the same two
 * kernels on Flex, runs one, and reports its counters: the first start
 * compiles both and writes two entries, a second compiles nothing.
 * Damaged entries (truncated, a flipped byte, another kernel's bytes) are
 * detected, reported under $BEXT_DEBUG, rebuilt and rewritten.  Every
 * test uses its own temporary cache folder, never the user's. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"
#include "bxl.h"
#include "kir_samples.h"

static char tmp[64];

static void private_cache(void) {
  strcpy(tmp, "/tmp/bext-kcache-XXXXXX");
  cr_assert_not_null(mkdtemp(tmp));
  setenv("BEXT_CACHE_DIR", tmp, 1);
  unsetenv("BEXT_DEBUG");
}
static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f) { return remove(p); }
static void remove_cache(void) { nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS); }
TestSuite(kernel_cache, .init = private_cache, .fini = remove_cache);

struct counts { unsigned long compiles, hits, rejects; bool ran; };

/* This process prepares add and gelu (f32) on Flex and runs add. */
static struct counts start_here(void) {
  struct counts c = {0};
  struct bext_device *d = bxr_device_resolve(bext_device_get("flex"), "test");
  struct bxk_kernel *add = sample_add(BXK_F32, true), *gelu = sample_gelu(BXK_F32);
  struct bxr_kernel *ka = d ? d->vt->kernel_prepare(d, add, 1) : NULL;
  struct bxr_kernel *kg = d ? d->vt->kernel_prepare(d, gelu, 2) : NULL;
  if (ka && kg) {
    int64_t n = 100;
    float a[100];
    for (int i = 0; i < 100; i++) a[i] = (float)i;
    bext_tensor *t = bext_from_data(a, BEXT_F32, &n, 1, bext_device_get("flex"));
    bext_tensor *o = bext_zeros(&n, 1, BEXT_F32, bext_device_get("flex"));
    bext_tensor *bind[3] = {t, t, o};
    uint32_t count[3] = {4, 1, 1}, dim[3] = {32, 1, 1};
    c.ran = d->vt->kernel_launch(d, ka, count, dim, bind, NULL);
    const float *got = bext_data(o);
    for (int i = 0; i < 100 && c.ran; i++) c.ran = got[i] == 2.0f * (float)i;
    bext_release(t), bext_release(o);
  }
  struct bxr_kernel_stats st;
  bxr_kernel_cpu_stats(&st);
  c.compiles = st.compiles, c.hits = st.disk_hits, c.rejects = st.disk_rejects;
  bxk_kernel_free(add), bxk_kernel_free(gelu);
  return c;
}

/* A fresh process start (a forked child); its stderr goes to errpath. */
static struct counts start(const char *errpath) {
  int fd[2];
  cr_assert_eq(pipe(fd), 0);
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
  cr_assert(c.ran, "the kernel gave wrong results in the child");
  return c;
}

/* Paths of the entries under folder, sorted; returns how many. */
static int entries(const char *folder, char out[][512], int cap) {
  char dir[200];
  snprintf(dir, sizeof dir, "%s/kernels", folder);
  DIR *dp = opendir(dir);
  if (!dp) return 0;
  int n = 0;
  for (struct dirent *e; (e = readdir(dp));) {
    const char *dot = strrchr(e->d_name, '.');
    if (dot && strcmp(dot, ".bxko") == 0 && n < cap) snprintf(out[n++], 512, "%s/%s", dir, e->d_name);
    cr_assert(!strstr(e->d_name, ".tmp."), "a temporary file was left behind: %s", e->d_name);
  }
  closedir(dp);
  if (n == 2 && strcmp(out[0], out[1]) > 0) {
    char t[512];
    memcpy(t, out[0], 512), memcpy(out[0], out[1], 512), memcpy(out[1], t, 512);
  }
  return n;
}

static long file_size(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

static bool file_has(const char *p, const char *text) {
  char buf[8192] = "";
  FILE *f = fopen(p, "r");
  if (!f) return false;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = 0;
  fclose(f);
  return strstr(buf, text) != NULL;
}

Test(kernel_cache, second_start_compiles_nothing) {
  struct counts first = start(NULL);
  cr_assert_eq(first.compiles, 2, "first start compiled %lu kernels", first.compiles);
  cr_assert_eq(first.hits, 0);
  char e[4][512];
  cr_assert_eq(entries(tmp, e, 4), 2, "expected one entry per kernel");
  struct counts second = start(NULL);
  cr_assert_eq(second.compiles, 0, "the second start compiled %lu kernels", second.compiles);
  cr_assert_eq(second.hits, 2);
  /* and in this process too, with the results checked */
  struct counts here = start_here();
  cr_assert(here.ran);
  cr_assert_eq(here.compiles, 0);
  cr_assert_eq(here.hits, 2);
}

Test(kernel_cache, damaged_entries_are_rebuilt) {
  start(NULL);
  char e[4][512];
  cr_assert_eq(entries(tmp, e, 4), 2);
  long size0 = file_size(e[0]), size1 = file_size(e[1]);
  /* entry 0 truncated, entry 1 with one byte of its object flipped */
  cr_assert_eq(truncate(e[0], size0 / 2), 0);
  FILE *f = fopen(e[1], "r+b");
  cr_assert_not_null(f);
  fseek(f, size1 - 9, SEEK_SET);
  int ch = fgetc(f);
  fseek(f, size1 - 9, SEEK_SET);
  fputc(ch ^ 0x5a, f);
  fclose(f);
  char log[600];
  snprintf(log, sizeof log, "%s/debug.txt", tmp);
  setenv("BEXT_DEBUG", "1", 1);
  struct counts c = start(log);
  cr_assert_eq(c.rejects, 2, "rejected %lu damaged entries", c.rejects);
  cr_assert_eq(c.compiles, 2, "compiled %lu", c.compiles);
  cr_assert(file_has(log, "truncated"), "no report of the truncated entry in the debug output");
  cr_assert(file_has(log, "checksum mismatch"), "no report of the damaged entry in the debug output");
  cr_assert_eq(file_size(e[0]), size0, "entry 0 was not rewritten whole");
  /* another kernel's entry under this kernel's name */
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "cp '%s' '%s'", e[1], e[0]);
  cr_assert_eq(system(cmd), 0);
  c = start(log);
  cr_assert_eq(c.rejects, 1);
  cr_assert_eq(c.compiles, 1);
  cr_assert(file_has(log, "made for another kernel"), "no report of the misplaced entry");
  unsetenv("BEXT_DEBUG");
  c = start(NULL);
  cr_assert_eq(c.compiles, 0, "the rebuilt entries did not load");
  cr_assert_eq(c.rejects, 0);
}

Test(kernel_cache, off_and_default_folders) {
  char xdg[128], home[128], e[4][512], where[200];
  snprintf(xdg, sizeof xdg, "%s/xdg", tmp);
  snprintf(home, sizeof home, "%s/home", tmp);
  setenv("XDG_CACHE_HOME", xdg, 1);
  setenv("HOME", home, 1);
  setenv("BEXT_CACHE_DIR", "off", 1);
  cr_assert_eq(start(NULL).compiles, 2);
  cr_assert_eq(start(NULL).compiles, 2, "BEXT_CACHE_DIR=off still cached");
  cr_assert_eq(entries(tmp, e, 4), 0);
  snprintf(where, sizeof where, "%s/bext", xdg);
  cr_assert_eq(entries(where, e, 4), 0, "BEXT_CACHE_DIR=off wrote to XDG_CACHE_HOME");
  unsetenv("BEXT_CACHE_DIR");
  cr_assert_eq(start(NULL).compiles, 2);
  cr_assert_eq(entries(where, e, 4), 2, "nothing in $XDG_CACHE_HOME/bext/kernels");
  cr_assert_eq(start(NULL).compiles, 0);
  unsetenv("XDG_CACHE_HOME");
  cr_assert_eq(start(NULL).compiles, 2);
  snprintf(where, sizeof where, "%s/.cache/bext", home);
  cr_assert_eq(entries(where, e, 4), 2, "nothing in $HOME/.cache/bext/kernels");
}
