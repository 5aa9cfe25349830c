/* kernel_bench.c — timings of the CPU kernel runtime (kernel_cpu.c) for
 * bext-bench's kernel_* rows.  The goals are issue 9's: a tiny launch
 * within 5 us (CubeCL's CPU runtime: about 33 us, cubecl #1545), a JIT
 * compile under 50 ms per kernel, a warm-cache load under 1 ms. */
#define _GNU_SOURCE
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "bxl.h"
#include "kernel_bench.h"
#include "kir_samples.h"

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static struct bext_device *flex(void) {
  return bxr_device_resolve(bext_device_get("flex"), "bench");
}

/* GELU with its 0.5 replaced by 0.5 + v * 1e-6: a kernel no earlier
 * variant's hash matches, of the size of a small fused chain. */
static struct bxk_kernel *gelu_variant(int v) {
  struct bxk_kernel *k = sample_gelu(BXK_F32);
  for (struct bxk_inst *i = k->body.first; i; i = i->next)
    if (i->op == BXK_OP_IF)
      for (struct bxk_inst *j = i->blk[0]->first; j; j = j->next)
        if (j->op == BXK_OP_CONST && j->imm.f == 0.5) j->imm.f = 0.5 + v * 1e-6;
  return k;
}

/* In a fresh process: prepare variants 1..reps, timing each, after one
 * untimed warm-up (variant 0: loads LLVM and starts the JIT).  Writes the
 * times to fd. */
static void child_prepare(int reps, int fd) {
  struct bext_device *d = flex();
  double t[99];
  bool ok = d != NULL;
  for (int r = 0; r <= reps && ok; r++) {
    struct bxk_kernel *k = gelu_variant(r);
    double t0 = now_ns();
    ok = d->vt->kernel_prepare(d, k, 0x9e100 + (uint64_t)r) != NULL;
    if (r) t[r - 1] = now_ns() - t0;
    bxk_kernel_free(k);
  }
  if (!ok) fprintf(stderr, "bext-bench: kernel_prepare: %s\n", bext_last_error());
  ssize_t w = ok ? write(fd, t, sizeof(double) * (size_t)reps) : -1;
  _exit(w == (ssize_t)(sizeof(double) * (size_t)reps) ? 0 : 1);
}

static bool in_child(int reps, double *out) {
  int fd[2];
  if (pipe(fd)) return false;
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    child_prepare(reps, fd[1]);
  }
  close(fd[1]);
  size_t want = sizeof(double) * (size_t)reps, got = 0;
  while (got < want) {
    ssize_t n = read(fd[0], (char *)out + got, want - got);
    if (n <= 0) break;
    got += (size_t)n;
  }
  close(fd[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  return got == want && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f) { return remove(p); }

bool bxbt_kernel_times(int reps, double *launch_ns, double *op_ns, double *compile_ns,
                       double *load_ns) {
  char dir[] = "/tmp/bext-bench-kcache-XXXXXX";
  if (!mkdtemp(dir)) return false;
  const char *old = getenv("BEXT_CACHE_DIR");
  char *saved = old ? strdup(old) : NULL;
  setenv("BEXT_CACHE_DIR", dir, 1);
  /* compiles in one fresh process, then loads in another */
  bool ok = in_child(reps, compile_ns) && in_child(reps, load_ns);
  if (!ok) fprintf(stderr, "bext-bench: the kernel compile/load children failed\n");

  struct bext_device *d = ok ? flex() : NULL;
  struct bxk_kernel *ir = sample_add(BXK_F32, true);
  struct bxr_kernel *k = d ? d->vt->kernel_prepare(d, ir, 0xadd16) : NULL;
  int64_t n = 16;
  const bext_device *fd = bext_device_get("flex");
  bext_tensor *a = bext_arange(0, 16, 1, BEXT_F32, fd), *b = bext_arange(0, 16, 1, BEXT_F32, fd);
  bext_tensor *o = bext_zeros(&n, 1, BEXT_F32, fd);
  ok = ok && k && a && b && o;
  bext_tensor *bind[3] = {a, b, o};
  uint32_t count[3] = {1, 1, 1}, dim[3] = {16, 1, 1};
  const int iters = 200000;
  for (int r = 0; r < reps && ok; r++) {
    double t0 = now_ns();
    for (int i = 0; i < iters && ok; i++) ok = d->vt->kernel_launch(d, k, count, dim, bind, NULL);
    launch_ns[r] = (now_ns() - t0) / iters;
    t0 = now_ns();
    for (int i = 0; i < iters && ok; i++) {
      bext_tensor *s = bext_add(bext_retain(a), bext_retain(b));
      ok = s != NULL;
      bext_release(s);
    }
    op_ns[r] = (now_ns() - t0) / iters;
  }
  if (ok) { /* the launches computed the add */
    const float *got = bext_data(o);
    for (int i = 0; i < 16 && ok; i++) ok = got[i] == 2.0f * (float)i;
  }
  if (!ok) fprintf(stderr, "bext-bench: kernel launch: %s\n", bext_last_error());
  bext_release(a), bext_release(b), bext_release(o);
  bxk_kernel_free(ir);
  if (saved) setenv("BEXT_CACHE_DIR", saved, 1), free(saved);
  else unsetenv("BEXT_CACHE_DIR");
  nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
  return ok;
}
