/* cube_bench.c — a Cube device's launch overhead for bext-bench: one
 * cube_launch of a prepared stdlib kernel (binary_float_f32_0_0_1, the
 * contiguous f32 add) over 16 elements, outputs allocated once, so the
 * time is the launch alone (cube:cpu: the goal is <= 5 us;
 * CubeCL's CPU runtime: about 33 us), or the launch and a bext_sync
 * (cube:vulkan:0 records launches into a batch: the wait is the cost). */
#include <string.h>
#include <time.h>

#include "cube/cube.h"
#include "cube_bench.h"

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

double bxbt_cube_launch_ns(const char *device, bool wait, int iters) {
  static struct {
    const char *name;
    struct bext_device *dev;
    struct bxr_kernel *k;
    bext_tensor *bind[3];
  } st[4];
  int i = 0;
  while (i < 4 && st[i].name && strcmp(st[i].name, device)) i++;
  if (i == 4) return -1;
  if (!st[i].name) {
    const bext_device *cube = bext_device_get(device);
    if (!cube || !(st[i].dev = bxr_device_resolve(cube, "bench"))) return -1;
    if (!(st[i].k = cube_kernel(st[i].dev, "binary_float_f32_0_0_1"))) return -1;
    int64_t n = 16;
    st[i].bind[0] = bext_full(&n, 1, 0.5, BEXT_F32, cube);
    st[i].bind[1] = bext_full(&n, 1, 0.25, BEXT_F32, cube);
    st[i].bind[2] = bext_zeros(&n, 1, BEXT_F32, cube);
    if (!st[i].bind[0] || !st[i].bind[1] || !st[i].bind[2]) return -1;
    st[i].name = device;
  }
  union bxl_scalar s0 = {.f32 = 0};
  double t0 = now_ns();
  for (int r = 0; r < iters; r++) {
    /* exactly 16 units: the contig kernel has no guard */
    if (!cube_launch(st[i].dev, st[i].k, 16, 16, st[i].bind, &s0)) return -1;
    if (wait && !bext_sync(st[i].dev)) return -1;
  }
  return (now_ns() - t0) / iters;
}

void bxbt_cube_force_dim(uint32_t dim) { cube_tune_force(dim); }
uint32_t bxbt_cube_ew_default(void) { return cube_tune_elementwise.def; }
