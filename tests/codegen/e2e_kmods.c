/* e2e_kmods.c — kernels of imported modules (docs/codegen.md "Kernels"):
 * ka.bext and kb.bext both import kcommon.bext, whose kernel gets a
 * launcher in each (`ka_kcommon_scale_shift_launch`,
 * `kb_kcommon_scale_shift_launch`) and ahead-of-time code in each
 * <stem>.kernels.o; ka's own kernel calls kcommon's helper.  Both outputs
 * and both objects link into this one program, and the launches run the
 * objects' code: the CPU runtime adopts it and compiles nothing. */
#include <criterion/criterion.h>
#include <math.h>

#include "ka.h"
#include "kb.h"

enum { N = 37 };
static const bext_grid grid = {{3, 1, 1}, {16, 1, 1}}; /* 48 units over 37 elements */

static bext_tensor *vec(const double *v, bext_dtype dt, const char *dev) {
  bext_tensor *t = bext_cast(bext_from_data(v, BEXT_F64, (const int64_t[]){N}, 1, bext_device_get(dev)), dt);
  cr_assert(t, "%s", bext_last_error());
  return t;
}

static void expect_values(bext_tensor *t, double a, double b, const double *x, const char *what) {
  double got[N];
  bext_tensor *d = bext_cast(bext_retain(t), BEXT_F64);
  cr_assert(d && bext_read(d, got, sizeof got), "%s", bext_last_error());
  bext_release(d);
  for (int i = 0; i < N; i++)
    cr_expect(fabs(got[i] - (x[i] * a + b)) <= 1e-6 * (1 + fabs(x[i] * a + b)), "%s i=%d: %g vs %g", what, i,
              got[i], x[i] * a + b);
}

/* Compiled and adopted kernels during the launches alone (the casts and
 * reads around them run cube:cpu's stdlib kernels, which a cold disk
 * cache compiles). */
static uint64_t compiled, adopted;
static void counting(bool ok, bext_kernel_stat *before) {
  bext_kernel_stat after;
  cr_assert(ok, "%s", bext_last_error());
  cr_assert(bext_kernel_stats(&after));
  compiled += after.compiled - before->compiled;
  adopted += after.adopted - before->adopted;
}

Test(kmods, imported_kernels_run_from_both_objects) {
  double x[N], z[N] = {0};
  for (int i = 0; i < N; i++) x[i] = i * 0.25 - 3;
  bext_kernel_stat before;
  struct { const char *dev; bext_dtype dt; bool from_kb; } runs[] = {
      {"flex", BEXT_F32, false}, {"flex", BEXT_F64, true}, {"cube:cpu", BEXT_F32, true},
      {"cube:cpu", BEXT_F64, false}, {"flex", BEXT_BF16, true}, {"cube:cpu", BEXT_BF16, false}};
  for (size_t r = 0; r < sizeof runs / sizeof *runs; r++) {
    bext_tensor *tx = vec(x, runs[r].dt, runs[r].dev), *to = vec(z, runs[r].dt, runs[r].dev);
    cr_assert(bext_kernel_stats(&before));
    counting(runs[r].from_kb ? kb_kcommon_scale_shift_launch(&grid, tx, to, 0.5)
                             : ka_kcommon_scale_shift_launch(&grid, tx, to, 0.5),
             &before);
    expect_values(to, 0.5, 1.0, x, runs[r].dev);
    bext_release(tx), bext_release(to);
  }
  /* ka's own kernel inlines kcommon's helper */
  bext_tensor *tx = vec(x, BEXT_F32, "flex"), *to = vec(z, BEXT_F32, "flex");
  cr_assert(bext_kernel_stats(&before));
  counting(twice_less_one_launch(&grid, tx, to), &before);
  expect_values(to, 2.0, -1.0, x, "twice_less_one");
  bext_release(tx), bext_release(to);
  /* a concrete f16 scalar: 0.75 reaches the kernel as its f16 bits */
  tx = vec(x, BEXT_F32, "cube:cpu"), to = vec(z, BEXT_F16, "cube:cpu");
  cr_assert(bext_kernel_stats(&before));
  counting(to_half_scaled_launch(&grid, tx, to, 0.75f), &before);
  expect_values(to, 0.75, 0.0, x, "to_half_scaled");
  bext_release(tx), bext_release(to);
  cr_expect_eq(compiled, 0, "the objects' code ran: nothing compiled");
  cr_expect_eq(adopted, 8, "one adoption per instantiation and device");
}

/* The launcher's error names the prefixed instantiations. */
Test(kmods, missing_instantiation_names_the_prefixed_rows) {
  double x[N] = {0};
  bext_tensor *t = vec(x, BEXT_I32, "flex");
  cr_expect_not(ka_kcommon_scale_shift_launch(&grid, t, t, 1.0));
  cr_expect(strstr(bext_last_error(), "ka_kcommon_scale_shift_launch: no instantiation for F = i32") &&
                strstr(bext_last_error(), "ka_kcommon_scale_shift_f32, ka_kcommon_scale_shift_f64"),
            "%s", bext_last_error());
  bext_release(t);
}
