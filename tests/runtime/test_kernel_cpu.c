/* test_kernel_cpu.c — the CPU kernel runtime through Flex's
 * kernel_prepare / kernel_launch members (kernel_cpu.c): IR built with the
 * bxk_ builder, compiled by libbext_llvm.so (loaded on first use), run on
 * Flex tensors, contiguous and strided, over grids that stay on the
 * calling thread and grids the pool splits; the in-memory cache (one
 * compile per IR); and every launch error named. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "bxl.h"
#include "kernel.h"
#include "kir_samples.h"
#include "tensor.h"

/* Counts of compiles below must not depend on what an earlier run left
 * in a disk cache. */
static void no_disk_cache(void) { setenv("BEXT_CACHE_DIR", "off", 1); }
TestSuite(kernel_cpu, .init = no_disk_cache);

static struct bext_device *flex(void) {
  const bext_device *d = bext_device_get("flex");
  cr_assert_not_null(d, "%s", bext_last_error());
  return bxr_device_resolve(d, "test");
}

static bext_tensor *f32_tensor(const float *v, int rank, const int64_t *shape) {
  bext_tensor *t = bext_from_data(v, BEXT_F32, shape, rank, bext_device_get("flex"));
  cr_assert_not_null(t, "%s", bext_last_error());
  return t;
}

static unsigned long compiles(void) {
  struct bxr_kernel_stats st;
  bxr_kernel_cpu_stats(&st);
  return st.compiles;
}

static struct bxr_kernel *prepare(struct bext_device *d, struct bxk_kernel *ir, uint64_t key) {
  struct bxr_kernel *k = d->vt->kernel_prepare(d, ir, key);
  cr_assert_not_null(k, "%s", bext_last_error());
  return k;
}

/* out = a + b through the guarded sample, for n elements in cubes of dim. */
static void run_add(struct bext_device *d, struct bxr_kernel *k, int64_t n, uint32_t dim) {
  float *a = malloc(sizeof(float) * (size_t)(n + 1)), *b = malloc(sizeof(float) * (size_t)(n + 1));
  for (int64_t i = 0; i < n; i++) a[i] = (float)i * 0.5f, b[i] = (float)(n - i);
  bext_tensor *ta = f32_tensor(a, 1, &n), *tb = f32_tensor(b, 1, &n);
  bext_tensor *to = bext_zeros(&n, 1, BEXT_F32, bext_device_get("flex"));
  cr_assert_not_null(to, "%s", bext_last_error());
  bext_tensor *bind[3] = {ta, tb, to};
  uint32_t count[3] = {(uint32_t)((n + dim - 1) / dim), 1, 1}, cdim[3] = {dim, 1, 1};
  cr_assert(d->vt->kernel_launch(d, k, count, cdim, bind, NULL), "%s", bext_last_error());
  const float *o = bext_data(to);
  for (int64_t i = 0; i < n; i++)
    cr_assert_eq(o[i], a[i] + b[i], "n %lld dim %u: out[%lld] = %g, want %g", (long long)n, dim,
                 (long long)i, o[i], a[i] + b[i]);
  bext_release(ta), bext_release(tb), bext_release(to);
  free(a), free(b);
}

Test(kernel_cpu, flex_runs_add_inline_and_split) {
  struct bext_device *d = flex();
  cr_assert_not_null(d->vt->kernel_prepare, "flex has no kernel_prepare");
  struct bxk_kernel *ir = sample_add(BXK_F32, true);
  struct bxr_kernel *k = prepare(d, ir, 1);
  unsigned long split0 = bxr_pool_jobs_split();
  const int64_t sizes[] = {1, 7, 64, 4099, 300001};
  const uint32_t dims[] = {1, 3, 64, 256};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
    for (size_t j = 0; j < sizeof dims / sizeof *dims; j++) run_add(d, k, sizes[i], dims[j]);
  if (bxr_pool_threads() > 1)
    cr_expect_gt(bxr_pool_jobs_split(), split0, "300001 units never went to the pool's workers");
  bxk_kernel_free(ir);
}

Test(kernel_cpu, one_compile_per_ir) {
  struct bext_device *d = flex();
  struct bxk_kernel *ir = sample_add(BXK_F32, true);
  unsigned long c0 = compiles();
  struct bxr_kernel *k1 = prepare(d, ir, 42), *k2 = prepare(d, ir, 42);
  cr_assert_eq(k1, k2, "the same key gave two kernels");
  cr_assert_eq(compiles(), c0 + 1, "compiled %lu times for one key", compiles() - c0);
  struct bxr_kernel *k3 = prepare(d, ir, 43);   /* same IR, another key: no compile */
  cr_assert_eq(compiles(), c0 + 1, "the same IR under another key compiled again");
  run_add(d, k3, 100, 32);
  struct bxk_kernel *other = sample_add(BXK_F64, true);
  prepare(d, other, 44);
  cr_assert_eq(compiles(), c0 + 2, "another IR did not compile");
  bxk_kernel_free(ir);
  bxk_kernel_free(other);
}

/* out[i] = in[row, col] read through shape/stride of a rank-2 view:
 * row = i / shape(0,1), col = i % shape(0,1). */
static struct bxk_kernel *strided_copy(void) {
  struct bxk_kernel *k = bxk_kernel_new("strided_copy");
  int in = bxk_add_binding(k, BXK_F32, 2, false), out = bxk_add_binding(k, BXK_F32, 1, true);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_val pos = bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS);
  struct bxk_block *then;
  bxk_if(&B, bxk_bin(&B, BXK_OP_LT, pos, bxk_len(&B, in)), &then, NULL);
  struct bxk_builder I = bxk_builder_at(k, then);
  bxk_val zero = bxk_const_i(&I, BXK_U32, 0), one = bxk_const_i(&I, BXK_U32, 1);
  bxk_val cols = bxk_shape(&I, in, one);
  bxk_val row = bxk_bin(&I, BXK_OP_DIV, pos, cols), col = bxk_bin(&I, BXK_OP_REM, pos, cols);
  bxk_val s0 = bxk_stride(&I, in, zero), s1 = bxk_stride(&I, in, one);
  bxk_val at = bxk_bin(&I, BXK_OP_ADD, bxk_bin(&I, BXK_OP_MUL, row, s0), bxk_bin(&I, BXK_OP_MUL, col, s1));
  bxk_store(&I, out, pos, bxk_load(&I, in, at));
  return k;
}

Test(kernel_cpu, strided_views) {
  struct bext_device *d = flex();
  struct bxk_kernel *ir = strided_copy();
  struct bxr_kernel *k = prepare(d, ir, 7);
  float v[5 * 7];
  for (int i = 0; i < 35; i++) v[i] = (float)i;
  int64_t shape[2] = {5, 7};
  /* a transposed view [7,5] (strides 1,7) and a column slice [5,3] at offset 2 */
  bext_tensor *t = bext_transpose(f32_tensor(v, 2, shape));
  int64_t lo[2] = {0, 2}, hi[2] = {5, 5};
  bext_tensor *s = bext_slice(f32_tensor(v, 2, shape), lo, hi, 2);
  cr_assert(t && s, "%s", bext_last_error());
  cr_assert(!bext_is_contiguous(t) && !bext_is_contiguous(s), "the views came out contiguous");
  bext_tensor *views[2] = {t, s};
  for (int w = 0; w < 2; w++) {
    int64_t n = bext_numel(views[w]);
    bext_tensor *o = bext_zeros(&n, 1, BEXT_F32, bext_device_get("flex"));
    float want[35];
    cr_assert(bext_read(views[w], want, sizeof want), "%s", bext_last_error());
    bext_tensor *bind[2] = {views[w], o};
    uint32_t count[3] = {1, 1, 1}, dim[3] = {64, 1, 1};
    cr_assert(d->vt->kernel_launch(d, k, count, dim, bind, NULL), "%s", bext_last_error());
    const float *got = bext_data(o);
    for (int64_t i = 0; i < n; i++) cr_assert_eq(got[i], want[i], "view %d element %lld", w, (long long)i);
    bext_release(o);
  }
  bext_release(t), bext_release(s);
  bxk_kernel_free(ir);
}

/* out[ABSOLUTE_POS] = ABSOLUTE_POS + 1000 * CUBE_POS_Y over a 3-D grid:
 * every unit of every cube runs exactly once (the pool's cube split). */
Test(kernel_cpu, grid_3d_every_unit_once) {
  struct bext_device *d = flex();
  struct bxk_kernel *ir = bxk_kernel_new("grid3");
  int o = bxk_add_binding(ir, BXK_I32, 1, true);
  struct bxk_builder B = bxk_builder_at(ir, NULL);
  bxk_val pos = bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS);
  bxk_val old = bxk_load(&B, o, pos);
  bxk_val v = bxk_bin(&B, BXK_OP_ADD, bxk_cast(&B, BXK_I32, pos), old);
  bxk_store(&B, o, pos, v);
  struct bxr_kernel *k = prepare(d, ir, 99);
  uint32_t count[3] = {5, 3, 7}, dim[3] = {4, 2, 3};
  int64_t n = 5 * 3 * 7 * 4 * 2 * 3;
  int32_t *one = malloc(sizeof(int32_t) * (size_t)n);
  for (int64_t i = 0; i < n; i++) one[i] = 1;   /* each unit adds its position once */
  bext_tensor *t = bext_from_data(one, BEXT_I32, &n, 1, bext_device_get("flex"));
  bext_tensor *bind[1] = {t};
  cr_assert(d->vt->kernel_launch(d, k, count, dim, bind, NULL), "%s", bext_last_error());
  const int32_t *got = bext_data(t);
  for (int64_t i = 0; i < n; i++) cr_assert_eq(got[i], (int32_t)i + 1, "unit %lld ran %s", (long long)i,
                                                 got[i] == 1 ? "never" : "twice or wrong");
  bext_release(t);
  free(one);
  bxk_kernel_free(ir);
}

static void expect_error(bool ok, const char *part) {
  cr_assert(!ok, "accepted, expected an error with \"%s\"", part);
  cr_assert(strstr(bext_last_error(), part), "error \"%s\" lacks \"%s\"", bext_last_error(), part);
}

Test(kernel_cpu, launch_errors_are_named) {
  struct bext_device *d = flex();
  struct bxk_kernel *ir = sample_add(BXK_F32, true);
  struct bxr_kernel *k = prepare(d, ir, 5);
  int64_t n = 4, two[2] = {2, 2};
  float v[4] = {1, 2, 3, 4};
  bext_tensor *a = f32_tensor(v, 1, &n), *m = f32_tensor(v, 2, two);
  bext_tensor *i = bext_zeros(&n, 1, BEXT_I32, bext_device_get("flex"));
  uint32_t one[3] = {1, 1, 1}, zero[3] = {1, 0, 1}, huge[3] = {65536, 65536, 2};
  bext_tensor *ok[3] = {a, a, a}, *bad_dt[3] = {a, i, a}, *bad_rank[3] = {a, m, a}, *null[3] = {a, NULL, a};
  expect_error(d->vt->kernel_launch(d, k, one, one, bad_dt, NULL), "binding b1 expects f32, found [4] i32");
  expect_error(d->vt->kernel_launch(d, k, one, one, bad_rank, NULL), "binding b1 expects rank 1");
  expect_error(d->vt->kernel_launch(d, k, one, one, null, NULL), "binding b1 is NULL");
  expect_error(d->vt->kernel_launch(d, k, one, zero, ok, NULL), "must be >= 1 on every axis");
  expect_error(d->vt->kernel_launch(d, k, huge, one, ok, NULL), "more than 4294967295 units");
  cr_assert(d->vt->kernel_launch(d, k, one, one, ok, NULL), "%s", bext_last_error());
  bext_release(a), bext_release(m), bext_release(i);
  bxk_kernel_free(ir);
}

Test(kernel_cpu, prepare_errors_are_named) {
  struct bext_device *d = flex();
  /* u32 binding: no tensor dtype */
  struct bxk_kernel *u = bxk_kernel_new("u32_out");
  bxk_add_binding(u, BXK_U32, 1, true);
  expect_error(d->vt->kernel_prepare(d, u, 11) != NULL, "binding b0 has element type u32");
  /* an unverified kernel: a store into a read-only binding, K0007 */
  struct bxk_kernel *ro = bxk_kernel_new("readonly");
  int b = bxk_add_binding(ro, BXK_F32, 1, false);
  struct bxk_builder B = bxk_builder_at(ro, NULL);
  bxk_store(&B, b, bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS), bxk_const_f(&B, BXK_F32, 1));
  expect_error(d->vt->kernel_prepare(d, ro, 12) != NULL, "K0007");
  cr_assert(strstr(bext_last_error(), "readonly"), "%s", bext_last_error());
  expect_error(d->vt->kernel_prepare(d, NULL, 13) != NULL, "the kernel is NULL");
  bxk_kernel_free(u);
  bxk_kernel_free(ro);
}

/* A scalar parameter in its 8-byte slot: out[i] = in[i] * s0 (f64). */
Test(kernel_cpu, scalars) {
  struct bext_device *d = flex();
  struct bxk_kernel *ir = bxk_kernel_new("scale");
  int in = bxk_add_binding(ir, BXK_F64, 1, false), out = bxk_add_binding(ir, BXK_F64, 1, true);
  int s = bxk_add_scalar(ir, BXK_F64);
  struct bxk_builder B = bxk_builder_at(ir, NULL);
  bxk_val pos = bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS);
  bxk_store(&B, out, pos, bxk_bin(&B, BXK_OP_MUL, bxk_load(&B, in, pos), bxk_scalar(&B, s)));
  struct bxr_kernel *k = prepare(d, ir, 21);
  int64_t n = 10;
  double v[10];
  for (int i = 0; i < 10; i++) v[i] = i - 3.5;
  bext_tensor *ti = bext_from_data(v, BEXT_F64, &n, 1, bext_device_get("flex"));
  bext_tensor *to = bext_zeros(&n, 1, BEXT_F64, bext_device_get("flex"));
  union bxl_scalar sc[1] = {{.f64 = -2.25}};
  bext_tensor *bind[2] = {ti, to};
  uint32_t count[3] = {2, 1, 1}, dim[3] = {5, 1, 1};
  expect_error(d->vt->kernel_launch(d, k, count, dim, bind, NULL), "scalars is NULL");
  cr_assert(d->vt->kernel_launch(d, k, count, dim, bind, sc), "%s", bext_last_error());
  const double *o = bext_data(to);
  for (int i = 0; i < 10; i++) cr_assert_eq(o[i], v[i] * -2.25, "out[%d] = %g", i, o[i]);
  bext_release(ti), bext_release(to);
  bxk_kernel_free(ir);
}

/* The launch path allocates nothing: a counting allocation hook sees no
 * call over 1000 launches (prepared kernel, tensors made before). */
static long g_hook_calls;
static void *counting(void *ud, void *ptr, size_t osize, size_t nsize) {
  g_hook_calls++;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  return realloc(ptr, nsize);
}

Test(kernel_cpu, launch_allocates_nothing) {
  struct bext_device *d = flex();
  struct bxk_kernel *ir = sample_add(BXK_F32, true);
  struct bxr_kernel *k = prepare(d, ir, 77);
  int64_t n = 1000;
  bext_tensor *a = bext_zeros(&n, 1, BEXT_F32, bext_device_get("flex"));
  bext_tensor *o = bext_zeros(&n, 1, BEXT_F32, bext_device_get("flex"));
  cr_assert(a && o, "%s", bext_last_error());
  bext_tensor *bind[3] = {a, a, o};
  uint32_t count[3] = {4, 1, 1}, dim[3] = {250, 1, 1};
  bext_set_allocator(counting, NULL);
  g_hook_calls = 0;
  bool ok = true;
  for (int i = 0; i < 1000 && ok; i++) ok = d->vt->kernel_launch(d, k, count, dim, bind, NULL);
  long calls = g_hook_calls;
  bext_set_allocator(NULL, NULL);
  cr_assert(ok, "%s", bext_last_error());
  cr_assert_eq(calls, 0, "1000 launches called the allocation hook %ld times", calls);
  bext_release(a), bext_release(o);
  bxk_kernel_free(ir);
}

/* The loader's error when no candidate is libbext_llvm.so: every path is
 * named with its reason (bxr_llvm_load is bxr_llvm_api's search over the
 * three compiled-in places, which the build tree always satisfies). */
Test(kernel_cpu, missing_llvm_library_is_named) {
  const char *paths[3] = {"/nonexistent/libbext_llvm.so", NULL, "libc.so.6"};
  cr_assert_null(bxr_llvm_load(paths, 3, "\n  (a note)"), "libc.so.6 was taken for libbext_llvm");
  const char *e = bext_last_error();
  cr_assert(strstr(e, "cannot load libbext_llvm.so"), "%s", e);
  cr_assert(strstr(e, "/nonexistent/libbext_llvm.so: "), "the missing path is not named: %s", e);
  cr_assert(strstr(e, "libc.so.6: has no bxl_api_v1"), "the wrong library is not named: %s", e);
  cr_assert(strstr(e, "(a note)"), "%s", e);
  const char *good[1] = {BXR_TEST_LLVM_PATH};
  cr_assert_not_null(bxr_llvm_load(good, 1, NULL), "%s", bext_last_error());
}
