/* bench.c — bext-gpu-bench OUT.json: the GPU check's figures for
 * cube:cuda:0 (issue 11), written as one JSON object to OUT.json:
 *
 *   add     16M f32 a + b on cube:cuda:0 against a device-to-device copy
 *           of the same bytes (cuMemcpyDtoD through bxcu): each one's
 *           bytes moved per second, and their ratio (the goal:
 *           >= 0.80 of the copy's bandwidth);
 *   matmul  4096^2 f32 on cube:cuda:0 against cublasSgemm when
 *           libcublas loads (dlopen; else "cuBLAS not found"): GFLOP/s
 *           of each and their ratio.
 *
 * Results are checked before they are timed (every element of the add;
 * sampled entries of the matmul against a host dot product in double),
 * so a fast wrong kernel is an error, not a figure.  Without the device
 * (no driver: `make test` here) the object says why it was skipped and
 * the exit status is 0; a device that opens but fails gives 1. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bext/bext.h>

#include "bxcu.h"

static FILE *out;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The JSON-safe text of s (quotes and backslashes dropped: messages). */
static const char *js(const char *s) {
  static char buf[600];
  size_t n = 0;
  for (; s && *s && n + 1 < sizeof buf; s++)
    if (*s != '"' && *s != '\\' && (unsigned char)*s >= 0x20) buf[n++] = *s;
  buf[n] = 0;
  return buf;
}

static int fail(const char *what, const char *why) {
  fprintf(out, "  \"status\": \"failed\",\n  \"error\": \"%s: ", what);
  fprintf(out, "%s\"\n}\n", js(why));
  fprintf(stderr, "bext-gpu-bench: %s: %s\n", what, why);
  return 1;
}

static float frand(unsigned *s) {
  *s = *s * 1664525u + 1013904223u;
  return (float)(*s >> 8) / 16777216.0f - 0.5f;
}

/* ------------------------------------------------------------ cuBLAS */

typedef int (*cublas_create_fn)(void **);
typedef int (*cublas_destroy_fn)(void *);
typedef int (*cublas_sgemm_fn)(void *, int, int, int, int, int, const float *, const float *, int, const float *,
                               int, const float *, float *, int);

/* Seconds per 4096^2 sgemm by cuBLAS on the same data (row-major C = A B
 * is column-major C^T = B^T A^T: sgemm(N, N, n, m, k, B, A)); < 0 with
 * why filled when it cannot run; c (host) gets its result. */
static double cublas_time(struct bxcu_driver *drv, int n, const float *a, const float *b, float *c, int reps,
                          char *why, size_t cap) {
  static const char *const libs[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so",
                                     "/usr/local/cuda/lib64/libcublas.so"};
  void *h = NULL;
  for (size_t i = 0; i < sizeof libs / sizeof *libs && !h; i++) h = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
  if (!h) return snprintf(why, cap, "cuBLAS not found (libcublas.so.13/.12: %s)", dlerror()), -1;
  cublas_create_fn create = (cublas_create_fn)dlsym(h, "cublasCreate_v2");
  cublas_destroy_fn destroy = (cublas_destroy_fn)dlsym(h, "cublasDestroy_v2");
  cublas_sgemm_fn sgemm = (cublas_sgemm_fn)dlsym(h, "cublasSgemm_v2");
  if (!create || !destroy || !sgemm) return snprintf(why, cap, "cuBLAS lacks cublasCreate_v2/cublasSgemm_v2"), -1;
  size_t bytes = (size_t)n * n * sizeof(float);
  bxcu_ptr da = 0, db = 0, dc = 0;
  struct bxk_diags ds = {0};
  double t = -1;
  void *handle = NULL;
  if (!bxcu_mem_alloc(drv, bytes, &da, &ds) || !bxcu_mem_alloc(drv, bytes, &db, &ds) ||
      !bxcu_mem_alloc(drv, bytes, &dc, &ds) || !bxcu_mem_upload(drv, da, a, bytes, &ds) ||
      !bxcu_mem_upload(drv, db, b, bytes, &ds)) {
    snprintf(why, cap, "cuBLAS buffers: %s", ds.n ? ds.d[0].msg : "?");
    goto done;
  }
  int r = create(&handle);
  if (r != 0) {
    snprintf(why, cap, "cublasCreate_v2: status %d", r);
    goto done;
  }
  const float one = 1, zero = 0;
  r = sgemm(handle, 0, 0, n, n, n, &one, (const float *)(uintptr_t)db, n, (const float *)(uintptr_t)da, n, &zero,
            (float *)(uintptr_t)dc, n);   /* warm-up */
  if (r != 0 || !bxcu_sync(drv, &ds)) {
    snprintf(why, cap, "cublasSgemm_v2: status %d %s", r, ds.n ? ds.d[0].msg : "");
    goto done;
  }
  double t0 = now();
  for (int i = 0; i < reps; i++)
    sgemm(handle, 0, 0, n, n, n, &one, (const float *)(uintptr_t)db, n, (const float *)(uintptr_t)da, n, &zero,
          (float *)(uintptr_t)dc, n);
  if (!bxcu_sync(drv, &ds) || !bxcu_mem_download(drv, c, dc, bytes, &ds)) {
    snprintf(why, cap, "cuBLAS: %s", ds.n ? ds.d[0].msg : "?");
    goto done;
  }
  t = (now() - t0) / reps;
done:
  if (handle) destroy(handle);
  bxcu_mem_free(drv, da, &ds);
  bxcu_mem_free(drv, db, &ds);
  bxcu_mem_free(drv, dc, &ds);
  return t;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: bext-gpu-bench OUT.json\n");
    return 2;
  }
  if (!(out = fopen(argv[1], "w"))) {
    perror(argv[1]);
    return 2;
  }
  fprintf(out, "{\n  \"device\": \"cube:cuda:0\",\n");
  const bext_device *dev = bext_device_get("cube:cuda:0");
  if (!dev || !bext_device_available(dev)) {
    fprintf(out, "  \"status\": \"skipped\",\n  \"why\": \"%s\"\n}\n", js(bext_last_error()));
    printf("bext-gpu-bench: cube:cuda:0 not available: %s\n", bext_last_error());
    fclose(out);
    return 0;
  }
  struct bxk_diags ds = {0};
  struct bxcu_driver *drv = bxcu_driver_open(BXCU_CUDA, 0, &ds);
  if (!drv) return fail("driver", ds.n ? ds.d[0].msg : "?");
  const struct bxcu_limits *L = bxcu_driver_limits(drv);
  struct bxcu_rtc *rc = bxcu_rtc_open(BXCU_CUDA, &ds);
  fprintf(out, "  \"gpu\": \"%s\",\n  \"compute_capability\": \"%d.%d\",\n  \"driver\": %d,\n  \"nvrtc\": \"%s %d\",\n",
          js(bxcu_driver_device_name(drv)), L->cc_major, L->cc_minor, bxcu_driver_version(drv),
          rc ? bxcu_rtc_path(rc) : "not found", rc ? bxcu_rtc_version(rc) : 0);
  if (rc) bxcu_rtc_close(rc);

  /* ---- 16M f32 add vs a device-to-device copy of the same bytes */
  const int64_t n = 16 << 20;
  const int reps = 20;
  size_t bytes = (size_t)n * sizeof(float);
  float *ha = malloc(bytes), *hb = malloc(bytes), *hc = malloc(bytes);
  if (!ha || !hb || !hc) return fail("add", "out of host memory");
  unsigned seed = 1;
  for (int64_t i = 0; i < n; i++) ha[i] = frand(&seed), hb[i] = frand(&seed);
  bext_tensor *a = bext_from_data(ha, BEXT_F32, &n, 1, dev), *b = bext_from_data(hb, BEXT_F32, &n, 1, dev);
  if (!a || !b) return fail("add: from_data", bext_last_error());
  bext_tensor *c = bext_add(a, b);   /* warm-up: compiles the kernel */
  if (!c || !bext_read(c, hc, bytes)) return fail("add", bext_last_error());
  for (int64_t i = 0; i < n; i++)
    if (hc[i] != ha[i] + hb[i]) {
      char m[160];
      snprintf(m, sizeof m, "element %lld is %g, expected %g", (long long)i, hc[i], ha[i] + hb[i]);
      return fail("add: wrong result", m);
    }
  bext_release(c);
  double t0 = now();
  for (int i = 0; i < reps; i++) {
    c = bext_add(a, b);
    if (!c) return fail("add", bext_last_error());
    bext_release(c);   /* the allocator keeps the block for the next one */
  }
  if (!bext_sync(dev)) return fail("add: sync", bext_last_error());
  double t_add = (now() - t0) / reps;
  bxcu_ptr s = 0, d = 0;
  if (!bxcu_mem_alloc(drv, bytes, &s, &ds) || !bxcu_mem_alloc(drv, bytes, &d, &ds) ||
      !bxcu_mem_copy(drv, d, s, bytes, &ds) || !bxcu_sync(drv, &ds))
    return fail("copy", ds.d[0].msg);
  t0 = now();
  for (int i = 0; i < reps; i++)
    if (!bxcu_mem_copy(drv, d, s, bytes, &ds)) return fail("copy", ds.d[0].msg);
  if (!bxcu_sync(drv, &ds)) return fail("copy: sync", ds.d[0].msg);
  double t_copy = (now() - t0) / reps;
  bxcu_mem_free(drv, s, &ds);
  bxcu_mem_free(drv, d, &ds);
  double bw_add = 3.0 * (double)bytes / t_add, bw_copy = 2.0 * (double)bytes / t_copy;
  fprintf(out,
          "  \"add_16M_f32\": {\"ms\": %.4f, \"GBps\": %.1f, \"copy_ms\": %.4f, \"copy_GBps\": %.1f, "
          "\"fraction_of_copy\": %.3f, \"goal\": 0.80},\n",
          t_add * 1e3, bw_add / 1e9, t_copy * 1e3, bw_copy / 1e9, bw_add / bw_copy);
  printf("add 16M f32: %.3f ms (%.0f GB/s), copy %.3f ms (%.0f GB/s): %.2f of the copy's bandwidth\n", t_add * 1e3,
         bw_add / 1e9, t_copy * 1e3, bw_copy / 1e9, bw_add / bw_copy);
  bext_release(a);
  bext_release(b);
  free(ha), free(hb), free(hc);

  /* ---- 4096^2 f32 matmul vs cuBLAS */
  const int64_t m = 4096, shape[2] = {m, m};
  const int mreps = 5;
  size_t mb = (size_t)m * m * sizeof(float);
  float *A = malloc(mb), *B = malloc(mb), *C = malloc(mb), *Cb = malloc(mb);
  if (!A || !B || !C || !Cb) return fail("matmul", "out of host memory");
  for (int64_t i = 0; i < m * m; i++) A[i] = frand(&seed), B[i] = frand(&seed);
  bext_tensor *ta = bext_from_data(A, BEXT_F32, shape, 2, dev), *tb = bext_from_data(B, BEXT_F32, shape, 2, dev);
  if (!ta || !tb) return fail("matmul: from_data", bext_last_error());
  bext_tensor *tc = bext_matmul(ta, tb);
  if (!tc || !bext_read(tc, C, mb)) return fail("matmul", bext_last_error());
  bext_release(tc);
  double worst = 0;   /* sampled entries against a host dot product in double */
  for (int s2 = 0; s2 < 64; s2++) {
    int64_t i = (s2 * 977 + 13) % m, j = (s2 * 613 + 101) % m;
    double ref = 0, mag = 0;
    for (int64_t k = 0; k < m; k++) ref += (double)A[i * m + k] * B[k * m + j], mag += fabs((double)A[i * m + k] * B[k * m + j]);
    double e = fabs(C[i * m + j] - ref) / (mag > 0 ? mag : 1);
    if (e > worst) worst = e;
  }
  if (worst > 1e-3) {   /* f32 sums of 4096 terms: ~1e-6 typical, n*eps = 2.4e-4 at worst */
    char msg[96];
    snprintf(msg, sizeof msg, "relative error %.3g on sampled entries", worst);
    return fail("matmul: wrong result", msg);
  }
  t0 = now();
  for (int i = 0; i < mreps; i++) {
    tc = bext_matmul(ta, tb);
    if (!tc) return fail("matmul", bext_last_error());
    bext_release(tc);
  }
  if (!bext_sync(dev)) return fail("matmul: sync", bext_last_error());
  double t_mm = (now() - t0) / mreps, flop = 2.0 * (double)m * m * m;
  fprintf(out, "  \"matmul_4096_f32\": {\"ms\": %.3f, \"GFLOPs\": %.1f, \"max_rel_err_sampled\": %.3g", t_mm * 1e3,
          flop / t_mm / 1e9, worst);
  printf("matmul 4096^2 f32: %.2f ms (%.0f GFLOP/s)\n", t_mm * 1e3, flop / t_mm / 1e9);
  char why[300] = "";
  double t_bl = cublas_time(drv, (int)m, A, B, Cb, mreps, why, sizeof why);
  if (t_bl > 0) {
    double diff = 0;
    for (int64_t i = 0; i < m * m; i += 4099) diff = fmax(diff, fabs(C[i] - Cb[i]));
    fprintf(out, ", \"cublas_ms\": %.3f, \"cublas_GFLOPs\": %.1f, \"fraction_of_cublas\": %.3f, \"max_abs_diff\": %.3g}\n",
            t_bl * 1e3, flop / t_bl / 1e9, t_bl / t_mm, diff);
    printf("cuBLAS sgemm: %.2f ms (%.0f GFLOP/s): cube is %.2f of it\n", t_bl * 1e3, flop / t_bl / 1e9, t_bl / t_mm);
  } else {
    fprintf(out, ", \"cublas\": \"%s\"}\n", js(why));
    printf("cuBLAS: %s\n", why);
  }
  fprintf(out, ",\n  \"status\": \"ok\"\n}\n");
  bext_release(ta);
  bext_release(tb);
  free(A), free(B), free(C), free(Cb);
  bxcu_driver_close(drv);
  fclose(out);
  return 0;
}
