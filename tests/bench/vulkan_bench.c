/* vulkan_bench.c — the Vulkan runtime's timings for bext-bench's vulkan_*
 * rows, on Vulkan device 0 (lavapipe on a machine without a GPU: a CPU
 * rasterizer, so these measure overhead, not GPU speed):
 *   vulkan_launch_16  launch + submit + wait of a prepared 16-element add,
 *                     vs Flex's kernel_launch of the same IR
 *   vulkan_gelu_16m   the GELU kernel over 16M f32 (one launch of 65536
 *                     cubes of 256, two dispatches on lavapipe, waited
 *                     for), vs the same IR launched on Flex (cube:cpu's
 *                     kernel runtime, the LLVM JIT) */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "bxl.h"
#include "bxvk.h"
#include "kir_samples.h"
#include "vulkan_bench.h"

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static bool fail(struct bxk_diags *ds, const char *what) {
  fprintf(stderr, "bext-bench: vulkan: %s: %s\n", what, ds && ds->n ? ds->d[0].msg : bext_last_error());
  return false;
}

int bxbt_vulkan_times(int reps, double *launch_ns, double *cpu_launch_ns, double *gelu_ns, double *cpu_gelu_ns) {
  struct bxk_diags ds = {0};
  struct bxvk_dev *d = bxvk_open(0, NULL, &ds);
  if (!d) {
    printf("vulkan_* rows skipped: %s\n", ds.n ? ds.d[0].msg : "?");
    return 0;
  }
  bool ok = true;
  enum { N = 16 << 20 };
  struct bxk_kernel *add = sample_add(BXK_F32, true), *gelu = sample_gelu(BXK_F32);
  struct bxvk_kernel *ka = bxvk_prepare(d, add, 1, &ds), *kg = bxvk_prepare(d, gelu, 2, &ds);
  struct bxvk_buf *bx = bxvk_buf_new(d, (size_t)N * 4, &ds), *by = bxvk_buf_new(d, (size_t)N * 4, &ds);
  float *x = malloc((size_t)N * 4);
  if (!ka || !kg || !bx || !by || !x) ok = fail(&ds, "setup");
  for (int i = 0; ok && i < N; i++) x[i] = (float)(i % 1000) * 0.01f - 5;
  if (ok && !bxvk_buf_upload(d, bx, x, (size_t)N * 4, &ds)) ok = fail(&ds, "upload");
  struct bxvk_arg a16[3] = {{bx, 0, 16, 1, {16}, {1}}, {bx, 0, 16, 1, {16}, {1}}, {by, 0, 16, 1, {16}, {1}}};
  struct bxvk_arg ag[2] = {{bx, 0, N, 1, {N}, {1}}, {by, 0, N, 1, {N}, {1}}};
  uint32_t c1[3] = {1, 1, 1}, d16[3] = {16, 1, 1}, cg[3] = {N / 256, 1, 1}, d256[3] = {256, 1, 1};
  /* untimed: the pipelines */
  ok = ok && bxvk_launch(d, ka, c1, d16, a16, NULL, &ds) && bxvk_launch(d, kg, cg, d256, ag, NULL, &ds) &&
       bxvk_sync(d, NULL, &ds);
  const int iters = 200;
  bool vk_ok = ok;
  for (int r = 0; r < reps && ok; r++) {
    double t0 = now_ns();
    for (int i = 0; i < iters && ok; i++)
      ok = bxvk_launch(d, ka, c1, d16, a16, NULL, &ds) && bxvk_sync(d, NULL, &ds);
    launch_ns[r] = (now_ns() - t0) / iters;
    t0 = now_ns();
    ok = ok && bxvk_launch(d, kg, cg, d256, ag, NULL, &ds) && bxvk_sync(d, NULL, &ds);
    gelu_ns[r] = now_ns() - t0;
  }
  if (!ok && vk_ok) fail(&ds, "launch");

  /* the same IR on Flex */
  struct bext_device *fd = bxr_device_resolve(bext_device_get("flex"), "bench");
  struct bxr_kernel *fa = ok && fd ? fd->vt->kernel_prepare(fd, add, 0xadd16) : NULL;
  struct bxr_kernel *fg = fa ? fd->vt->kernel_prepare(fd, gelu, 0x9e1) : NULL;
  int64_t n16 = 16, nn = N;
  bext_tensor *t16 = fg ? bext_from_data(x, BEXT_F32, &n16, 1, bext_device_get("flex")) : NULL;
  bext_tensor *o16 = t16 ? bext_zeros(&n16, 1, BEXT_F32, bext_device_get("flex")) : NULL;
  bext_tensor *tn = o16 ? bext_from_data(x, BEXT_F32, &nn, 1, bext_device_get("flex")) : NULL;
  bext_tensor *on = tn ? bext_zeros(&nn, 1, BEXT_F32, bext_device_get("flex")) : NULL;
  if (ok && !on) ok = fail(NULL, "flex");
  bext_tensor *ba[3] = {t16, t16, o16}, *bg[2] = {tn, on};
  for (int r = 0; r < reps && ok; r++) {
    double t0 = now_ns();
    for (int i = 0; i < iters * 100 && ok; i++) ok = fd->vt->kernel_launch(fd, fa, c1, d16, ba, NULL);
    cpu_launch_ns[r] = (now_ns() - t0) / (iters * 100);
    t0 = now_ns();
    ok = ok && fd->vt->kernel_launch(fd, fg, cg, d256, bg, NULL);
    cpu_gelu_ns[r] = now_ns() - t0;
  }
  if (!ok) fail(NULL, "flex launch");
  bext_release(t16), bext_release(o16), bext_release(tn), bext_release(on);
  bxvk_buf_free(d, bx), bxvk_buf_free(d, by);
  bxvk_close(d);
  free(x);
  bxk_kernel_free(add), bxk_kernel_free(gelu);
  return ok ? 1 : -1;
}
