/* main.c — driver of samples/gelu_cube: a `#[cube]` GELU kernel behind
 * CubeActivations::gelu, run on cube:cpu and on flex, checked against
 * libm, f32 and f64, and then, unchanged, on cube:vulkan:0 (the Cube
 * arm: the same implementation and generated launcher, the kernel's IR
 * lowered to SPIR-V by the device's kernel_prepare), checked against the
 * cube:cpu result; where there is no Vulkan device it says why in one
 * line.  It prints how many kernels came from the ahead-of-time code in
 * gelu_cube.kernels.o (both instantiations: the CPU runtime adopts that
 * code instead of compiling the embedded IR) and shows the launcher's
 * error for a dtype the kernel has no instance of. */
#include <stdio.h>
#include <string.h>

#include "../common/sample.h"
#include "gelu_cube.h"

int main(void) {
  enum { N = 7 };
  const float in[N] = { -3, -1.5f, -0.5f, 0, 0.5f, 1.5f, 3 };
  float want[N], got[N];
  for (int i = 0; i < N; i++) {
    double x = in[i];
    want[i] = (float)(x * 0.5 * (1.0 + erf(x / sqrt(2.0))));
  }
  /* cube:cpu first: its results are what cube:vulkan:0 is checked
   * against */
  static const char *const devs[] = { "cube:cpu", "flex", "cube:vulkan:0" };
  float on_cpu[2][N];
  for (int d = 0; d < 3; d++) {
    const bext_device *dev = sample_device(devs[d]);
    if (!bext_device_available(dev)) {
      printf("%s not available: %s\n", devs[d], bext_last_error());
      continue;
    }
    printf("== %s\n", devs[d]);
    bext_tensor *x = sample_tensor(in, (const int64_t[]){ N }, 1, devs[d]);
    sample_print("input", x, got, N);
    bext_tensor *y = cube_activations_gelu(bext_retain(x));
    if (!y) sample_die("cube_activations_gelu");
    sample_print("gelu (#[cube] kernel)", y, got, N);
    sample_expect("gelu f32", got, want, N, 1e-6);
    sample_expect("gelu f32 against cube:cpu", got, d ? on_cpu[0] : got, N, 1e-6);
    if (!d) memcpy(on_cpu[0], got, sizeof got);
    bext_release(y);
    y = cube_activations_gelu(bext_cast(x, BEXT_F64));
    if (!y) sample_die("cube_activations_gelu f64");
    y = bext_cast(y, BEXT_F32);
    sample_print("gelu f64, shown as f32", y, got, N);
    sample_expect("gelu f64", got, want, N, 1e-6);
    sample_expect("gelu f64 against cube:cpu", got, d ? on_cpu[1] : got, N, 1e-6);
    if (!d) memcpy(on_cpu[1], got, sizeof got);
    bext_release(y);
  }
  bext_kernel_stat ks;
  if (!bext_kernel_stats(&ks)) sample_die("bext_kernel_stats");
  /* (the casts are cube:cpu's stdlib kernels: JIT-compiled or loaded from
   * the disk cache, so their count depends on the machine's cache) */
  printf("kernels taken from gelu_cube.kernels.o, not compiled: %llu\n", (unsigned long long)ks.adopted);
  /* an i32 tensor: the kernel is generic over Float only */
  bext_tensor *xi = bext_zeros((const int64_t[]){ 4 }, 1, BEXT_I32, bext_device_get("cube:cpu"));
  bext_grid grid = {{1, 1, 1}, {4, 1, 1}};
  if (gelu_kernel_launch(&grid, xi, xi)) sample_die("an i32 launch must fail");
  printf("i32 launch refused: %s\n", bext_last_error());
  bext_release(xi);
  return 0;
}
