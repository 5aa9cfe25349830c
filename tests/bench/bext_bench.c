/* bext_bench.c — bext-bench: the runtime's speed against its peers, side
 * by side in one process (absolute figures drift between runs and
 * machines; ratios measured in the same run do not).
 *
 *   bext-bench [OUT.json] [--threads N] [--reps R]
 *
 * Each case runs R repetitions (default 7), alternating bext and the peer
 * so drift hits both alike, and reports medians.  ratio = peer_ns /
 * bext_ns: above 1 means bext is faster.  Every participant uses the same
 * thread count (default 2): the Flex pool (BEXT_NUM_THREADS, which also
 * sets OpenBLAS), libtorch's intra-op threads, and the C-loop peers.
 * OpenMP is made passive (re-exec with OMP_WAIT_POLICY=passive) so
 * libtorch's idle threads do not spin against the others on 2 cores.
 *
 * Cases (goal in brackets):
 *   add_16        16-element f32 add, new output, vs libtorch at::add  [>= 10]
 *   add_16M       16M f32 add, new output, vs a C loop into a warm buffer [>= 0.8]
 *   sum_16M       16M f32 sum vs a C loop                               [>= 0.8]
 *   matmul_1024   1024^2 f32 vs cblas_sgemm called directly            [>= 0.9]
 *   matmul_1024_torch  the same vs libtorch at::matmul
 *   exp_16M       16M f32 exp, new output, vs libtorch at::exp */
#define _GNU_SOURCE
#include <cblas.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bext/bext.h"
#include "torch_shim.h"

static int g_threads = 2, g_reps = 7;

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Peer buffers get what Flex's allocator gives large tensors (2 MiB
 * alignment, transparent huge pages), so the comparison is kernel against
 * kernel, not page size against page size. */
static float *huge_floats(size_t n) {
  void *p = NULL;
  if (posix_memalign(&p, (size_t)2 << 20, n * sizeof(float))) return NULL;
  madvise(p, n * sizeof(float), MADV_HUGEPAGE);
  return p;
}

static void die(const char *what) {
  fprintf(stderr, "bext-bench: %s: %s\n", what, bext_last_error());
  exit(1);
}

/* ------------------------------------------------------------ bext side */
static bext_device g_flex;

static bext_tensor *filled(int64_t n, double scale) {
  bext_tensor *t = bext_arange(0, (double)n, 1, BEXT_F32, &g_flex);
  if (!t) die("arange");
  t = bext_mul_scalar(bext_rem_scalar(t, 17), scale);
  if (!t) die("fill");
  return t;
}

/* ns per iteration of a bext op loop; inputs are retained each call so
 * every iteration allocates a new output, as the peers do. */
enum bcase { B_ADD, B_SUM, B_EXP, B_MATMUL };
static double bext_case(enum bcase c, bext_tensor *a, bext_tensor *b, int iters) {
  double t0 = now_ns();
  for (int i = 0; i < iters; i++) {
    bext_tensor *r;
    switch (c) {
    case B_ADD: r = bext_add(bext_retain(a), bext_retain(b)); break;
    case B_SUM: r = bext_sum(bext_retain(a)); break;
    case B_EXP: r = bext_exp(bext_retain(a)); break;
    default: r = bext_matmul(bext_retain(a), bext_retain(b)); break;
    }
    if (!r) die("op");
    bext_release(r);
  }
  return (now_ns() - t0) / iters;
}

/* --------------------------------------------------- plain C loop peers */
struct cjob {
  const float *a, *b;
  float *c;
  size_t lo, hi;
  double sum;
  int kind;  /* 0 add, 1 sum */
};

static void *cloop(void *arg) {
  struct cjob *j = arg;
  if (j->kind == 0) {
    for (size_t i = j->lo; i < j->hi; i++) j->c[i] = j->a[i] + j->b[i];
  } else {
    /* 16 independent float accumulators (4 x 4 lanes, the baseline SSE
     * width this file is compiled for): the loop runs at memory speed,
     * the fair peer for a bandwidth-bound reduction. */
    typedef float v4 __attribute__((vector_size(16)));
    v4 s0 = { 0 }, s1 = s0, s2 = s0, s3 = s0;
    size_t i = j->lo;
    for (; i + 16 <= j->hi; i += 16) {
      v4 x0, x1, x2, x3;
      memcpy(&x0, j->a + i, 16); memcpy(&x1, j->a + i + 4, 16);
      memcpy(&x2, j->a + i + 8, 16); memcpy(&x3, j->a + i + 12, 16);
      s0 += x0; s1 += x1; s2 += x2; s3 += x3;
    }
    v4 s = (s0 + s1) + (s2 + s3);
    double r = 0;
    for (int k = 0; k < 4; k++) r += s[k];
    for (; i < j->hi; i++) r += j->a[i];
    j->sum = r;
  }
  return NULL;
}

/* One pass over n elements split across g_threads threads (created per
 * call: ~50 us against a ~10 ms pass). */
static double cloop_pass(int kind, const float *a, const float *b, float *c, size_t n) {
  pthread_t th[64];
  struct cjob jobs[64];
  int T = g_threads < 64 ? g_threads : 64;
  for (int t = 0; t < T; t++) {
    jobs[t] = (struct cjob){ a, b, c, n * (size_t)t / (size_t)T, n * (size_t)(t + 1) / (size_t)T, 0, kind };
    if (t > 0) pthread_create(&th[t], NULL, cloop, &jobs[t]);
  }
  cloop(&jobs[0]);
  double s = jobs[0].sum;
  for (int t = 1; t < T; t++) {
    pthread_join(th[t], NULL);
    s += jobs[t].sum;
  }
  return s;
}

static double cloop_case(int kind, const float *a, const float *b, float *c, size_t n, int iters) {
  volatile double sink = 0;
  double t0 = now_ns();
  for (int i = 0; i < iters; i++) sink += cloop_pass(kind, a, b, c, n);
  (void)sink;
  return (now_ns() - t0) / iters;
}

static double sgemm_case(const float *a, const float *b, float *c, int n, int iters) {
  double t0 = now_ns();
  for (int i = 0; i < iters; i++)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
  return (now_ns() - t0) / iters;
}

/* --------------------------------------------------------------- report */
struct row {
  const char *name, *peer, *goal;
  double bext_ns, peer_ns;
};
static struct row g_rows[16];
static int g_nrows;

static void record(const char *name, const char *peer, const char *goal, double *bv, double *pv) {
  struct row *r = &g_rows[g_nrows++];
  r->name = name;
  r->peer = peer;
  r->goal = goal;
  r->bext_ns = median(bv, g_reps);
  r->peer_ns = median(pv, g_reps);
  printf("%-20s %14.1f %-22s %14.1f %8.2f  %s\n", name, r->bext_ns, peer, r->peer_ns,
         r->peer_ns / r->bext_ns, goal);
  fflush(stdout);
}

static int write_json(const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    return 1;
  }
  fprintf(f, "[\n");
  for (int i = 0; i < g_nrows; i++) {
    const struct row *r = &g_rows[i];
    fprintf(f, "  {\"name\": \"%s\", \"bext_ns\": %.1f, \"peer\": \"%s\", \"peer_ns\": %.1f, \"ratio\": %.4f}%s\n",
            r->name, r->bext_ns, r->peer, r->peer_ns, r->peer_ns / r->bext_ns, i + 1 < g_nrows ? "," : "");
  }
  fprintf(f, "]\n");
  return fclose(f) != 0;
}

int main(int argc, char **argv) {
  const char *out = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc) g_threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) g_reps = atoi(argv[++i]);
    else if (argv[i][0] != '-' && !out) out = argv[i];
    else {
      fprintf(stderr, "usage: bext-bench [OUT.json] [--threads N] [--reps R]\n");
      return 2;
    }
  }
  if (g_threads < 1) g_threads = 1;
  if (g_reps < 1 || g_reps > 99) g_reps = 7;
  /* OpenMP reads its environment when libgomp loads: set it and re-exec. */
  if (!getenv("BXBT_REEXEC")) {
    char nt[16];
    snprintf(nt, sizeof nt, "%d", g_threads);
    setenv("OMP_WAIT_POLICY", "passive", 1);
    setenv("OMP_NUM_THREADS", nt, 1);
    setenv("BEXT_NUM_THREADS", nt, 1);
    setenv("BXBT_REEXEC", "1", 1);
    execv("/proc/self/exe", argv);
    perror("bext-bench: re-exec");   /* fall through: run with what we have */
  }
  if (!bext_device_parse("flex", &g_flex)) die("device");
  int tt = bxbt_torch_set_threads(g_threads);

  printf("bext-bench: %d threads (flex pool, OpenBLAS, libtorch %d, C loops), median of %d\n",
         g_threads, tt, g_reps);
  printf("ratio = peer_ns / bext_ns  (> 1: bext is faster)\n\n");
  printf("%-20s %14s %-22s %14s %8s  %s\n", "case", "bext ns", "peer", "peer ns", "ratio", "goal");

  double bv[99], pv[99];
  const int64_t N16 = 16, NBIG = (int64_t)1 << 24;

  /* add, 16 elements */
  {
    bext_tensor *a = filled(N16, 0.5), *b = filled(N16, 0.25);
    int it = 200000;
    bext_case(B_ADD, a, b, it / 10);
    for (int r = 0; r < g_reps; r++) {
      bv[r] = bext_case(B_ADD, a, b, it);
      pv[r] = bxbt_torch_add_ns(N16, it);
      if (pv[r] < 0) die(bxbt_torch_error());
    }
    record("add_16", "libtorch at::add", ">= 10", bv, pv);
    bext_release(a);
    bext_release(b);
  }

  /* large elementwise and reductions */
  bext_tensor *A = filled(NBIG, 0.5), *B = filled(NBIG, 0.25);
  float *ca = huge_floats((size_t)NBIG), *cb = huge_floats((size_t)NBIG), *cc = huge_floats((size_t)NBIG);
  if (!ca || !cb || !cc) die("malloc");
  bext_read(A, ca, sizeof(float) * (size_t)NBIG);
  bext_read(B, cb, sizeof(float) * (size_t)NBIG);
  memset(cc, 0, sizeof(float) * (size_t)NBIG);   /* warm: no page faults in the peer */
  {
    int it = 10;
    bext_case(B_ADD, A, B, 2);
    cloop_case(0, ca, cb, cc, (size_t)NBIG, 2);
    for (int r = 0; r < g_reps; r++) {
      bv[r] = bext_case(B_ADD, A, B, it);
      pv[r] = cloop_case(0, ca, cb, cc, (size_t)NBIG, it);
    }
    record("add_16M", "C loop (warm out)", ">= 0.8", bv, pv);
  }
  {
    int it = 10;
    bext_case(B_SUM, A, NULL, 2);
    cloop_case(1, ca, NULL, NULL, (size_t)NBIG, 2);
    for (int r = 0; r < g_reps; r++) {
      bv[r] = bext_case(B_SUM, A, NULL, it);
      pv[r] = cloop_case(1, ca, NULL, NULL, (size_t)NBIG, it);
    }
    record("sum_16M", "C loop", ">= 0.8", bv, pv);
  }
  {
    int it = 4;
    bext_tensor *E = bext_mul_scalar(bext_retain(A), 0.02);   /* exp of [0, 0.17] */
    bext_case(B_EXP, E, NULL, 1);
    for (int r = 0; r < g_reps; r++) {
      bv[r] = bext_case(B_EXP, E, NULL, it);
      pv[r] = bxbt_torch_exp_ns(NBIG, it);
      if (pv[r] < 0) die(bxbt_torch_error());
    }
    record("exp_16M", "libtorch at::exp", "", bv, pv);
    bext_release(E);
  }
  free(ca);
  free(cb);
  free(cc);
  bext_release(A);
  bext_release(B);

  /* matmul 1024^2 */
  {
    const int n = 1024;
    bext_tensor *a = bext_reshape(filled((int64_t)n * n, 0.01), (int64_t[]){ n, n }, 2);
    bext_tensor *b = bext_reshape(filled((int64_t)n * n, 0.02), (int64_t[]){ n, n }, 2);
    float *fa = malloc(sizeof(float) * (size_t)n * n), *fb = malloc(sizeof(float) * (size_t)n * n),
          *fc = malloc(sizeof(float) * (size_t)n * n);
    bext_read(a, fa, sizeof(float) * (size_t)n * n);
    bext_read(b, fb, sizeof(float) * (size_t)n * n);
    int it = 5;
    bext_case(B_MATMUL, a, b, 1);
    sgemm_case(fa, fb, fc, n, 1);
    double bt[99], tv[99];
    for (int r = 0; r < g_reps; r++) {
      bv[r] = bext_case(B_MATMUL, a, b, it);
      bt[r] = bv[r];
      pv[r] = sgemm_case(fa, fb, fc, n, it);
      tv[r] = bxbt_torch_matmul_ns(n, it);
      if (tv[r] < 0) die(bxbt_torch_error());
    }
    record("matmul_1024", "cblas_sgemm", ">= 0.9", bv, pv);
    record("matmul_1024_torch", "libtorch at::matmul", "", bt, tv);
    free(fa);
    free(fb);
    free(fc);
    bext_release(a);
    bext_release(b);
  }

  if (out && write_json(out)) return 1;
  if (out) printf("\nwrote %s\n", out);
  return 0;
}
