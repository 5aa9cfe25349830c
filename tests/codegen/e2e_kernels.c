/* e2e_kernels.c — the launchers bextc generates for #[cube] kernels
 * (ext/kernels.bext; docs/codegen.md "Kernels") and bext_kernel_launch
 * under them: instantiation by dtype and comptime value, generic scalars,
 * explicit dtype arguments, and every error a caller can provoke.  This
 * program does not link kernels.o, so the IR is compiled (the JIT path);
 * samples/gelu_cube covers the ahead-of-time one. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "kernels.h"

static bext_tensor *vec(const double *v, int n, bext_dtype dt, const char *dev) {
  bext_tensor *t = bext_cast(bext_from_data(v, BEXT_F64, (const int64_t[]){n}, 1, bext_device_get(dev)), dt);
  cr_assert(t, "%s", bext_last_error());
  return t;
}

static void read_f64(bext_tensor *t, double *out, int n) {
  bext_tensor *d = bext_cast(bext_retain(t), BEXT_F64);
  cr_assert(d && bext_read(d, out, (size_t)n * 8), "%s", bext_last_error());
  bext_release(d);
}

static const bext_grid grid37 = {{3, 1, 1}, {16, 1, 1}}; /* 48 units over 37 elements */

static void axpy_on(const char *dev, bext_dtype dt, int64_t n) {
  enum { N = 37 };
  double x[N], y[N], got[N];
  for (int i = 0; i < N; i++) x[i] = i * 0.25 - 3, y[i] = 1.0 / (i + 1);
  bext_tensor *tx = vec(x, N, dt, dev), *ty = vec(y, N, dt, dev);
  cr_assert(axpy_launch(&grid37, tx, ty, 0.5, n), "%s", bext_last_error());
  read_f64(ty, got, N);
  for (int i = 0; i < N; i++) {
    double want = y[i];
    for (int k = 0; k < n; k++) want += 0.5 * x[i];
    cr_expect(fabs(got[i] - want) <= 1e-6 * (1 + fabs(want)), "%s %s n=%lld i=%d: %g vs %g", dev,
              bext_dtype_name(dt), (long long)n, i, got[i], want);
  }
  bext_release(tx);
  bext_release(ty);
}

Test(kernels, comptime_and_dtype_pick_the_instantiation) {
  axpy_on("flex", BEXT_F32, 3);
  axpy_on("flex", BEXT_F64, 1);
  axpy_on("cube:cpu", BEXT_F32, 1);
  axpy_on("cube:cpu", BEXT_F64, 3);
}

Test(kernels, missing_instantiation_names_what_exists) {
  double v[4] = {1, 2, 3, 4};
  bext_tensor *a = vec(v, 4, BEXT_F32, "flex"), *b = vec(v, 4, BEXT_F32, "flex");
  cr_expect_not(axpy_launch(&grid37, a, b, 1.0, 2));
  cr_expect(strstr(bext_last_error(), "axpy_launch: no instantiation for F = f32, n = 2") &&
                strstr(bext_last_error(), "axpy_f32_1, axpy_f32_3, axpy_f64_1, axpy_f64_3"),
            "%s", bext_last_error());
  bext_tensor *i = vec(v, 4, BEXT_I32, "flex");
  cr_expect_not(axpy_launch(&grid37, i, i, 1.0, 1));
  cr_expect(strstr(bext_last_error(), "F = i32"), "%s", bext_last_error());
  bext_release(a), bext_release(b), bext_release(i);
}

/* v goes through T's dtype: truncated and saturated for integers, as
 * bext.h's cast rule says; T is an argument (no tensor carries it). */
Test(kernels, generic_scalar_converted_to_the_dtype) {
  const struct { bext_dtype t; double v, want; } cases[] = {
      {BEXT_I32, 2.7, 2}, {BEXT_I32, -2.7, -2}, {BEXT_I32, 1e20, 2147483647.0}, {BEXT_I32, NAN, 0},
      {BEXT_F64, 2.7, 2.7}, {BEXT_F32, 2.7, 2.7f}, {BEXT_I64, -1e30, (double)INT64_MIN},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    bext_tensor *out = bext_zeros((const int64_t[]){5}, 1, BEXT_F32, bext_device_get("cube:cpu"));
    bext_grid g = {{1, 1, 1}, {8, 1, 1}};
    cr_assert(fill_through_launch(&g, out, cases[c].v, cases[c].t), "%s", bext_last_error());
    double got[5];
    read_f64(out, got, 5);
    for (int i = 0; i < 5; i++)
      cr_expect_eq(got[i], (double)(float)cases[c].want, "T=%s v=%g: %g", bext_dtype_name(cases[c].t), cases[c].v,
                   got[i]);
    bext_release(out);
  }
  bext_tensor *out = bext_zeros((const int64_t[]){5}, 1, BEXT_F32, bext_device_get("flex"));
  bext_grid g = {{1, 1, 1}, {8, 1, 1}};
  cr_expect_not(fill_through_launch(&g, out, 1, BEXT_BOOL)); /* Numeric has no bool */
  cr_expect(strstr(bext_last_error(), "T = bool"), "%s", bext_last_error());
  bext_release(out);
}

Test(kernels, launch_errors_are_named) {
  double v[4] = {1, 2, 3, 4};
  bext_grid g = {{1, 1, 1}, {4, 1, 1}};
  /* a device that runs no kernels */
  bext_tensor *a = vec(v, 4, BEXT_F32, "ndarray"), *b = vec(v, 4, BEXT_F32, "ndarray");
  cr_expect_not(axpy_launch(&g, a, b, 1, 1));
  cr_expect(strstr(bext_last_error(), "device ndarray runs no kernels (kernel `axpy_f32_1`)"), "%s",
            bext_last_error());
  bext_release(b);
  /* tensors on two devices */
  b = vec(v, 4, BEXT_F32, "flex");
  cr_expect_not(axpy_launch(&g, b, a, 1, 1));
  cr_expect(strstr(bext_last_error(), "binding 1 is on ndarray, binding 0 on flex"), "%s", bext_last_error());
  /* a NULL tensor */
  cr_expect_not(axpy_launch(&g, b, NULL, 1, 1));
  cr_expect(strstr(bext_last_error(), "F = (a NULL tensor)") || strstr(bext_last_error(), "is NULL"), "%s",
            bext_last_error());
  /* the raw call: counts that do not match the kernel, a NULL grid */
  bext_tensor *one[1] = {b};
  cr_expect_not(bext_kernel_launch(&kernels_bext_kernels[0], &g, one, 1, NULL, 0));
  cr_expect(strstr(bext_last_error(), "the kernel takes 2 tensors and 1 scalars; given 1 and 0"), "%s",
            bext_last_error());
  cr_expect_not(bext_kernel_launch(&kernels_bext_kernels[0], NULL, one, 1, NULL, 0));
  cr_expect(strstr(bext_last_error(), "the grid is NULL"), "%s", bext_last_error());
  bext_release(a), bext_release(b);
}

/* a source whose bytes are not IR: an error naming the kernel, no crash */
Test(kernels, corrupt_ir_is_refused) {
  static const uint8_t junk[] = {'B', 'X', 'K', 'I', 1, 0, 0, 0, 0xff, 0xff};
  static const bext_kernel_src bad = {"bogus", junk, sizeof junk, 0};
  double v[2] = {1, 2};
  bext_tensor *a = vec(v, 2, BEXT_F32, "flex");
  bext_grid g = {{1, 1, 1}, {2, 1, 1}};
  cr_expect_not(bext_kernel_launch(&bad, &g, &a, 1, NULL, 0));
  cr_expect(strstr(bext_last_error(), "kernel `bogus`: its IR does not load"), "%s", bext_last_error());
  bext_release(a);
  bext_kernel_stat st;
  cr_assert(bext_kernel_stats(&st));
  cr_expect_eq(st.adopted, 0, "no kernels.o is linked here");
}
