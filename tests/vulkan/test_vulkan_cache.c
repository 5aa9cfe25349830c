/* test_vulkan_cache.c — the Vulkan runtime's disk cache across processes.
 * The runtime is given libbext's kernel_cache.c (bxr_kcache_*) as its
 * bxvk_disk, so entries follow the CPU cache's conventions (checksummed,
 * written to a temporary file and renamed, a damaged entry rebuilt).
 * Each "process start" is a forked child (the test process never opens
 * Vulkan itself) that prepares gelu and add, runs them, and reports its
 * counters and prepare time.  Every test uses its own temporary cache. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kernel.h"
#include "vk_run.h"

/* kernel_cache.c behind bxvk_disk: the callbacks cube:vulkan gives it */
static const struct bxvk_disk kc = {
    .load = bxr_kcache_load_blob, .release = bxr_kcache_release_blob, .store = bxr_kcache_store};

static char tmp[64];
static void private_cache(void) {
  strcpy(tmp, "/tmp/bext-vkcache-XXXXXX");
  cr_assert_not_null(mkdtemp(tmp));
  setenv("BEXT_CACHE_DIR", tmp, 1);
  unsetenv("BEXT_DEBUG");
}
static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f) {
  (void)st, (void)flag, (void)f;
  return remove(p);
}
static void remove_cache(void) { nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS); }
TestSuite(vulkan_cache, .init = private_cache, .fini = remove_cache);

struct counts {
  int status;                  /* 0 ran right; 1 no device; 2 wrong results or errors */
  char why[200];
  struct bxvk_stats st;
  double prepare_ms;           /* both prepares */
};

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static struct counts start_here(void) {
  struct counts c = {0};
  struct bxk_diags ds = {0};
  struct bxvk_dev *d = bxvk_open(0, &kc, &ds);
  if (!d) {
    c.status = 1;
    snprintf(c.why, sizeof c.why, "%s", ds.n ? ds.d[0].msg : "?");
    return c;
  }
  struct bxk_kernel *g = sample_gelu(BXK_F32), *a = sample_add(BXK_F32, true);
  double t0 = now_ms();
  struct bxvk_kernel *kg = bxvk_prepare(d, g, 1, &ds), *ka = bxvk_prepare(d, a, 2, &ds);
  c.prepare_ms = now_ms() - t0;
  if (!kg || !ka) {
    c.status = 2;
    snprintf(c.why, sizeof c.why, "prepare: %.180s", ds.n ? ds.d[0].msg : "?");
  } else {
    enum { N = 100 };
    float x[N], y[N], o[N];
    for (int i = 0; i < N; i++) x[i] = (float)i * 0.1f - 5, y[i] = 1;
    void *mg[2] = {x, o}, *ma[3] = {x, y, o};
    uint32_t lg[2] = {N, N}, la[3] = {N, N, N};
    vk_run1d(d, kg, g, mg, lg, N, 32, NULL);
    for (int i = 0; i < N && !c.status; i++) {
      double want = x[i] * 0.5 * (1 + erf(x[i] / sqrt(2.0)));
      if (fabs(o[i] - want) > 1e-6 * fmax(1, fabs(want))) c.status = 2, snprintf(c.why, sizeof c.why, "gelu %d", i);
    }
    vk_run1d(d, ka, a, ma, la, N, 64, NULL);
    for (int i = 0; i < N && !c.status; i++)
      if (o[i] != x[i] + 1) c.status = 2, snprintf(c.why, sizeof c.why, "add %d", i);
  }
  bxvk_stats(d, &c.st);
  bxvk_close(d);
  bxk_kernel_free(g), bxk_kernel_free(a);
  return c;
}

/* A fresh process start: a forked child. */
static struct counts start(void) {
  int fd[2];
  cr_assert_eq(pipe(fd), 0);
  pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (pid == 0) {
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
  if (c.status == 1) cr_skip_test("skipped: no Vulkan device to run on: %s", c.why);
  cr_assert_eq(c.status, 0, "the child: %s", c.why);
  return c;
}

static int entries(char out[][512], int cap) {
  char dir[200];
  snprintf(dir, sizeof dir, "%s/kernels", tmp);
  DIR *dp = opendir(dir);
  if (!dp) return 0;
  int n = 0;
  for (struct dirent *e; (e = readdir(dp));) {
    const char *dot = strrchr(e->d_name, '.');
    if (dot && strcmp(dot, ".bxko") == 0 && n < cap) snprintf(out[n++], 512, "%s/%s", dir, e->d_name);
    cr_assert(!strstr(e->d_name, ".tmp."), "a temporary file was left behind: %s", e->d_name);
  }
  closedir(dp);
  return n;
}

static long file_size(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

Test(vulkan_cache, second_start_loads_from_disk_and_damage_is_rebuilt) {
  struct counts first = start();
  cr_assert_eq(first.st.disk_hits, 0);
  cr_assert_eq(first.st.modules, 2);
  cr_assert_geq(first.st.disk_stores, 2);
  char e[4][512];
  cr_assert_eq(entries(e, 4), 2, "one entry per kernel");
  long sz[2] = {file_size(e[0]), file_size(e[1])};

  struct counts second = start();
  cr_assert_eq(second.st.disk_hits, 2, "the second start read %lu entries", second.st.disk_hits);
  cr_assert_eq(second.st.disk_rejects, 0);
  cr_assert_eq(second.st.disk_stores, 0, "nothing new to write");
  cr_log_info("vulkan cache: prepare of gelu+add: %.2f ms cold (emit), %.2f ms from disk; entries %ld and %ld "
              "bytes (SPIR-V and pipeline cache data)",
              first.prepare_ms, second.prepare_ms, sz[0], sz[1]);

  /* a flipped byte in one entry, a truncated other */
  int fd = open(e[0], O_RDWR);
  cr_assert_geq(fd, 0);
  uint8_t b;
  cr_assert_eq(pread(fd, &b, 1, sz[0] - 9), 1);
  b ^= 0x20;
  cr_assert_eq(pwrite(fd, &b, 1, sz[0] - 9), 1);
  close(fd);
  cr_assert_eq(truncate(e[1], sz[1] / 2), 0);
  struct counts third = start();
  cr_assert_eq(third.st.disk_rejects, 2, "both damaged entries rejected");
  cr_assert_eq(third.st.disk_hits, 0);
  cr_assert_geq(third.st.disk_stores, 2, "and rewritten");
  cr_assert_eq(file_size(e[0]), sz[0]);
  cr_assert_eq(file_size(e[1]), sz[1]);
  struct counts fourth = start();
  cr_assert_eq(fourth.st.disk_hits, 2);
  cr_assert_eq(fourth.st.disk_rejects, 0);
}

/* In one process: forgetting the prepared kernels sends the next prepare
 * to the disk; without a disk cache nothing is written. */
Test(vulkan_cache, forget_then_prepare_reads_disk) {
  struct bxk_diags ds = {0};
  struct bxvk_dev *d = bxvk_open(0, &kc, &ds);
  if (!d) cr_skip_test("skipped: no Vulkan device to run on: %s", ds.n ? ds.d[0].msg : "?");
  struct bxk_kernel *k = sample_add(BXK_I32, false);
  cr_assert(bxvk_prepare(d, k, 7, &ds));
  cr_assert(bxvk_prepare(d, k, 7, &ds));
  struct bxvk_stats st;
  bxvk_stats(d, &st);
  cr_assert_eq(st.memory_hits, 1);
  bxvk_forget_kernels(d);
  cr_assert(bxvk_prepare(d, k, 7, &ds));
  bxvk_stats(d, &st);
  cr_assert_eq(st.disk_hits, 1);
  bxvk_close(d);

  setenv("BEXT_CACHE_DIR", "off", 1);
  memset(&ds, 0, sizeof ds);
  d = bxvk_open(0, &kc, &ds);
  cr_assert(d);
  struct bxk_kernel *k2 = sample_add(BXK_U32, false);
  cr_assert(bxvk_prepare(d, k2, 8, &ds));
  bxvk_stats(d, &st);
  cr_assert_eq(st.disk_hits, 0);
  bxvk_close(d);
  setenv("BEXT_CACHE_DIR", tmp, 1);
  char e[4][512];
  cr_assert_eq(entries(e, 4), 1, "BEXT_CACHE_DIR=off wrote nothing");
  bxk_kernel_free(k), bxk_kernel_free(k2);
}
