/* main.c — the outside project's program: builds against an installed
 * (or build-tree) bext, calls both generated entry points on Flex and
 * NdArray, checks the values against a computation done here, checks that
 * softsign on Flex ran the override from the static library (overrides.c)
 * and on NdArray the default body, launches the kernel of a module two
 * imports deep (modules/offsets.bext) and checks that its ahead-of-time
 * code in outside.kernels.o ran, and prints one line per call plus
 * "outside: ok" (the integration test looks for exactly these lines). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "outside.h"

static int check(const char *what, const char *dev, bext_tensor *y, const float *want, int n) {
  float got[8];
  if (!y || bext_numel(y) != n || !bext_read(y, got, sizeof got[0] * (size_t)n)) {
    fprintf(stderr, "outside: %s on %s failed: %s\n", what, dev, bext_last_error());
    bext_release(y);
    return 1;
  }
  printf("%s on %s:", what, dev);
  for (int i = 0; i < n; i++) printf(" %.3f", (double)got[i]);
  printf("\n");
  bext_release(y);
  for (int i = 0; i < n; i++)
    if (fabsf(got[i] - want[i]) > 1e-5f) {
      fprintf(stderr, "outside: %s on %s: element %d is %f, expected %f\n", what, dev, i,
              (double)got[i], (double)want[i]);
      return 1;
    }
  return 0;
}

int main(void) {
  const float in[4] = { -2, -0.5f, 1, 3 };
  const Scale s = { .factor = 1.5f, .offset = -1 };
  float aff[4], soft[4];
  for (int i = 0; i < 4; i++) {
    aff[i] = in[i] * s.factor + s.offset;
    soft[i] = in[i] / (fabsf(in[i]) + 1);
  }
  const char *devs[2] = { "flex", "ndarray" };
  int bad = 0;
  for (int d = 0; d < 2; d++) {
    const bext_device *dev;
    if (!(dev = bext_device_get(devs[d]))) return 1;
    bext_tensor *x = bext_from_data(in, BEXT_F32, (const int64_t[]){ 4 }, 1, dev);
    bext_tensor *x2 = bext_retain(x);
    bad |= check("affine", devs[d], outside_affine(x, s), aff, 4);
    unsetenv("OUTSIDE_SOFTSIGN_OVERRIDE");
    bad |= check("softsign", devs[d], outside_softsign(x2), soft, 4);
    /* flex: the override in liboverrides.a (overrides.c) must have run,
     * not the default body; ndarray has no override: the default body. */
    const char *mark = getenv("OUTSIDE_SOFTSIGN_OVERRIDE");
    if (d == 0 && !mark) {
      fprintf(stderr, "outside: softsign on flex ran the default body, not the override in the static library\n");
      bad = 1;
    } else if (d == 1 && mark) {
      fprintf(stderr, "outside: softsign on ndarray ran an override (%s), not the default body\n", mark);
      bad = 1;
    } else {
      printf("softsign on %s: %s\n", devs[d], mark ? "override from the static library" : "default body");
    }
  }
  /* The kernel of offsets.bext (imported by units.bext only): the
   * launcher exists, and the CPU runtime adopts the code linked in
   * outside.kernels.o rather than compiling the embedded IR. */
  const bext_device *flex = bext_device_get("flex");
  bext_tensor *x = bext_from_data(in, BEXT_F32, (const int64_t[]){ 4 }, 1, flex);
  bext_tensor *y = bext_zeros((const int64_t[]){ 4 }, 1, BEXT_F32, flex);
  bext_kernel_stat before, after;
  const bext_grid grid = { { 1, 1, 1 }, { 4, 1, 1 } };
  if (!x || !y || !bext_kernel_stats(&before) || !outside_offsets_add_offset_launch(&grid, x, y, 0.5) ||
      !bext_kernel_stats(&after)) {
    fprintf(stderr, "outside: add_offset on flex failed: %s\n", bext_last_error());
    return 1;
  }
  bext_release(x);
  const float off[4] = { -1.5f, 0, 1.5f, 3.5f };
  bad |= check("add_offset", "flex", y, off, 4);
  if (after.adopted - before.adopted != 1 || after.compiled != before.compiled) {
    fprintf(stderr, "outside: add_offset adopted %llu and compiled %llu kernels; expected its code from "
            "outside.kernels.o (1 adopted, 0 compiled)\n",
            (unsigned long long)(after.adopted - before.adopted),
            (unsigned long long)(after.compiled - before.compiled));
    bad = 1;
  } else {
    printf("add_offset on flex: code from outside.kernels.o\n");
  }
  if (bad) return 1;
  printf("outside: ok\n");
  return 0;
}
