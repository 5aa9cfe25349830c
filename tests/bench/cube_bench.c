/* cube_bench.c — cube:cpu's launch overhead for bext-bench: one
 * cube_launch of a prepared stdlib kernel (binary_float_f32_0_0_1, the
 * contiguous f32 add) over 16 elements, outputs allocated once, so the
 * time is the launch alone (the goal: <= 5 us; CubeCL's CPU
 * runtime: about 33 us). */
#include <time.h>

#include "cube/cube.h"
#include "cube_bench.h"

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

double bxbt_cube_launch_ns(int iters) {
  static struct bext_device *dev;
  static struct bxr_kernel *k;
  static bext_tensor *bind[3];
  if (!k) {
    const bext_device *cube = bext_device_get("cube:cpu");
    if (!cube || !(dev = bxr_device_resolve(cube, "bench"))) return -1;
    if (!(k = cube_kernel(dev, "binary_float_f32_0_0_1"))) return -1;
    int64_t n = 16;
    bind[0] = bext_full(&n, 1, 0.5, BEXT_F32, cube);
    bind[1] = bext_full(&n, 1, 0.25, BEXT_F32, cube);
    bind[2] = bext_zeros(&n, 1, BEXT_F32, cube);
    if (!bind[0] || !bind[1] || !bind[2]) return -1;
  }
  union bxl_scalar s0 = {.f32 = 0};
  double t0 = now_ns();
  for (int i = 0; i < iters; i++)
    if (!cube_launch(dev, k, 16, 16, bind, &s0)) return -1;   /* exactly 16 units: the contig kernel has no guard */
  return (now_ns() - t0) / iters;
}

void bxbt_cube_force_dim(uint32_t dim) { cube_tune_force(dim); }
uint32_t bxbt_cube_ew_default(void) { return cube_tune_elementwise.def; }
