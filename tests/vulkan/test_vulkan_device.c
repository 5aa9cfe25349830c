/* test_vulkan_device.c — the device `cube:vulkan:0` (backends/cube/
 * cube_vulkan.c) through the public API, on the first Vulkan device
 * (lavapipe here): tensors made there, the cube ops run as SPIR-V
 * kernels, results read back through the staging buffer and compared
 * with the same ops on ndarray (integers and bools equal, floats within
 * a normalized error); movement to and from flex; distinct storage;
 * and the named errors (no device N, host-memory calls, bad indices);
 * and launches of more cubes than the device dispatches at once, against
 * cube:cpu.
 * Without a Vulkan device each test says plainly that it is skipped. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "bxk.h"

static const bext_device *vk, *nd, *fx;

static void setup(void) {
  cr_assert((nd = bext_device_get("ndarray")), "%s", bext_last_error());
  cr_assert((fx = bext_device_get("flex")), "%s", bext_last_error());
  cr_assert((vk = bext_device_get("cube:vulkan:0")), "%s", bext_last_error());
  if (!bext_device_available(vk)) cr_skip_test("skipped: cube:vulkan:0 is not available here: %s", bext_last_error());
}

/* t's values as doubles (t borrowed). */
static double *values(const bext_tensor *t, int64_t *n) {
  *n = bext_numel(t);
  bext_dtype dt = bext_dtype_of(t);
  size_t es = bext_dtype_size(dt);
  void *raw = malloc((size_t)*n * es + 1);
  cr_assert(bext_read(t, raw, (size_t)*n * es), "%s", bext_last_error());
  double *v = malloc(sizeof(double) * (size_t)(*n + 1));
  for (int64_t i = 0; i < *n; i++) v[i] = bxr_load_f64(raw, dt, i);
  free(raw);
  return v;
}

/* got (on vk) equals want (on nd): same dtype and shape, same values
 * (floats: normalized squared error below tol).  Releases both. */
static void same(bext_tensor *got, bext_tensor *want, double tol, const char *what) {
  cr_assert(got, "%s on cube:vulkan:0: %s", what, bext_last_error());
  cr_assert(want, "%s on ndarray: %s", what, bext_last_error());
  cr_expect_eq(bext_device_of(got), vk, "%s: result on %s", what, bext_device_name(bext_device_of(got)));
  cr_assert_eq(bext_dtype_of(got), bext_dtype_of(want), "%s: dtype", what);
  cr_assert_eq(bext_rank(got), bext_rank(want), "%s: rank", what);
  for (int d = 0; d < bext_rank(got); d++) cr_assert_eq(bext_shape(got)[d], bext_shape(want)[d], "%s: dim %d", what, d);
  int64_t n, m;
  double *g = values(got, &n), *w = values(want, &m);
  double num = 0, den = 0;
  bext_dtype wd = bext_dtype_of(want);
  bool exact = !(wd == BEXT_F16 || wd == BEXT_BF16 || wd == BEXT_F32 || wd == BEXT_F64);
  for (int64_t i = 0; i < n; i++) {
    if (exact) cr_assert_eq(g[i], w[i], "%s: element %lld: %g, want %g", what, (long long)i, g[i], w[i]);
    num += (g[i] - w[i]) * (g[i] - w[i]);
    den += w[i] * w[i];
  }
  if (!exact) cr_expect_leq(num / (den > 0 ? den : 1), tol, "%s: normalized error %g", what, num / (den > 0 ? den : 1));
  free(g);
  free(w);
  bext_release(got);
  bext_release(want);
}

/* got (on vk) equals want (on cube:cpu) element for element (integers).
 * Releases both. */
static void same_as_cpu(bext_tensor *got, bext_tensor *want, const char *what) {
  cr_assert(got && want, "%s: %s", what, bext_last_error());
  int64_t n, m;
  double *g = values(got, &n), *w = values(want, &m);
  cr_assert_eq(n, m, "%s: %lld elements, cube:cpu %lld", what, (long long)n, (long long)m);
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < n; i++)
    if (g[i] != w[i] && !bad++) first = i;
  cr_expect_eq(bad, 0, "%s: %lld elements differ, the first at %lld (%g, cube:cpu %g)", what, (long long)bad,
               (long long)first, first >= 0 ? g[first] : 0, first >= 0 ? w[first] : 0);
  free(g), free(w);
  bext_release(got), bext_release(want);
}

/* The same seeded tensor on nd and on vk (moved through the host). */
static void pair(const int64_t *shape, int rank, uint64_t seed, bext_tensor **on_nd, bext_tensor **on_vk) {
  *on_nd = bext_random_uniform(shape, rank, -2, 2, seed, BEXT_F32, nd);
  cr_assert(*on_nd, "%s", bext_last_error());
  *on_vk = bext_to_device(bext_retain(*on_nd), vk);
  cr_assert(*on_vk, "%s", bext_last_error());
}

Test(cube_vulkan, only_existing_devices_are_available, .init = setup) {
  cr_expect(bext_device_available(vk));
  const bext_device *far = bext_device_get("cube:vulkan:97");
  cr_assert(far);
  cr_expect(!bext_device_available(far));
  cr_expect(strstr(bext_last_error(), "cube:vulkan:97") && strstr(bext_last_error(), "Vulkan device 97"),
            "the error names the device and the missing index: %s", bext_last_error());
  cr_expect_null(bext_zeros((int64_t[]){2}, 1, BEXT_F32, far));
  cr_expect(strstr(bext_last_error(), "bext_zeros") && strstr(bext_last_error(), "cube:vulkan:97"), "%s",
            bext_last_error());
}

Test(cube_vulkan, elementwise_against_ndarray, .init = setup) {
  int64_t shape[] = {37, 129};
  bext_tensor *a, *va, *b, *vb;
  pair(shape, 2, 11, &a, &va);
  pair(shape, 2, 12, &b, &vb);
#define BOTH(expr_vk, expr_nd, what) same(expr_vk, expr_nd, 1e-10, what)
  BOTH(bext_add(bext_retain(va), bext_retain(vb)), bext_add(bext_retain(a), bext_retain(b)), "add");
  BOTH(bext_mul_scalar(bext_retain(va), 3.5), bext_mul_scalar(bext_retain(a), 3.5), "mul_scalar");
  BOTH(bext_exp(bext_retain(va)), bext_exp(bext_retain(a)), "exp");
  BOTH(bext_tanh(bext_retain(va)), bext_tanh(bext_retain(a)), "tanh");
  BOTH(bext_cast(bext_gt(bext_retain(va), bext_retain(vb)), BEXT_I32),
       bext_cast(bext_gt(bext_retain(a), bext_retain(b)), BEXT_I32), "gt then cast");
  /* broadcasting: a row against the matrix */
  bext_tensor *row = bext_random_uniform((int64_t[]){129}, 1, -1, 1, 5, BEXT_F32, nd);
  bext_tensor *vrow = bext_to_device(bext_retain(row), vk);
  BOTH(bext_sub(bext_retain(va), vrow), bext_sub(bext_retain(a), row), "broadcast sub");
  bext_release(a), bext_release(b), bext_release(va), bext_release(vb);
}

Test(cube_vulkan, reductions_and_matmul_against_ndarray, .init = setup) {
  int64_t shape[] = {24, 70};
  bext_tensor *a, *va;
  pair(shape, 2, 21, &a, &va);
  same(bext_sum(bext_retain(va)), bext_sum(bext_retain(a)), 1e-10, "sum");
  same(bext_sum_dim(bext_retain(va), 1, true), bext_sum_dim(bext_retain(a), 1, true), 1e-10, "sum_dim 1");
  same(bext_sum_dim(bext_retain(va), 0, false), bext_sum_dim(bext_retain(a), 0, false), 1e-10, "sum_dim 0");
  same(bext_argmax(bext_retain(va)), bext_argmax(bext_retain(a)), 0, "argmax");
  same(bext_cumsum(bext_retain(va), 1), bext_cumsum(bext_retain(a), 1), 1e-10, "cumsum");
  bext_tensor *b, *vb;
  pair((int64_t[]){70, 33}, 2, 22, &b, &vb);
  same(bext_matmul(bext_retain(va), bext_retain(vb)), bext_matmul(bext_retain(a), bext_retain(b)), 1e-10, "matmul");
  /* a transposed operand: a strided view of a device buffer */
  same(bext_matmul(bext_swap_dims(bext_retain(vb), 0, 1), bext_swap_dims(bext_retain(va), 0, 1)),
       bext_matmul(bext_swap_dims(bext_retain(b), 0, 1), bext_swap_dims(bext_retain(a), 0, 1)), 1e-10,
       "matmul of transposes");
  bext_release(a), bext_release(b), bext_release(va), bext_release(vb);
}

Test(cube_vulkan, layout_ops_against_ndarray, .init = setup) {
  int64_t shape[] = {6, 5, 4};
  bext_tensor *a, *va;
  pair(shape, 3, 31, &a, &va);
  const int axes[] = {2, 0, 1};
  /* a view read back directly: the read gathers a strided view */
  same(bext_permute(bext_retain(va), axes, 3), bext_permute(bext_retain(a), axes, 3), 0, "permute (view read)");
  bext_tensor *pc = bext_contiguous(bext_permute(bext_retain(va), axes, 3));
  cr_assert(pc, "%s", bext_last_error());
  cr_expect(bext_is_contiguous(pc), "bext_contiguous materializes a device view");
  same(pc, bext_contiguous(bext_permute(bext_retain(a), axes, 3)), 0, "contiguous of permute");
  same(bext_slice(bext_retain(va), (int64_t[]){1, 2}, (int64_t[]){5, 4}, 2),
       bext_slice(bext_retain(a), (int64_t[]){1, 2}, (int64_t[]){5, 4}, 2), 0, "slice (offset view)");
  same(bext_narrow(bext_retain(va), 2, 1, 2), bext_narrow(bext_retain(a), 2, 1, 2), 0, "narrow");
  same(bext_flip(bext_retain(va), (int[]){0, 2}, 2), bext_flip(bext_retain(a), (int[]){0, 2}, 2), 0, "flip");
  bext_tensor *cv[2] = {bext_retain(va), bext_exp(bext_retain(va))}, *cn[2] = {bext_retain(a), bext_exp(bext_retain(a))};
  same(bext_cat(cv, 2, 1), bext_cat(cn, 2, 1), 1e-10, "cat");
  same(bext_expand(bext_slice(bext_retain(va), (int64_t[]){0}, (int64_t[]){1}, 1), (int64_t[]){3, 5, 4}, 3),
       bext_expand(bext_slice(bext_retain(a), (int64_t[]){0}, (int64_t[]){1}, 1), (int64_t[]){3, 5, 4}, 3), 0,
       "expand");
  bext_release(a), bext_release(va);
}

Test(cube_vulkan, moves_between_flex_and_vulkan_both_ways, .init = setup) {
  float src[300];
  for (int i = 0; i < 300; i++) src[i] = (float)i * 0.25f - 7;
  bext_tensor *f = bext_from_data(src, BEXT_F32, (int64_t[]){10, 30}, 2, fx);
  cr_assert(f, "%s", bext_last_error());
  bext_tensor *v = bext_to_device(f, vk);
  cr_assert(v, "%s", bext_last_error());
  cr_expect_eq(bext_device_of(v), vk);
  cr_expect_null(bext_data(v), "device memory is not handed out as host memory");
  cr_expect(strstr(bext_last_error(), "not host memory"), "%s", bext_last_error());
  /* a transposed view travels in row-major order of the view */
  bext_tensor *back = bext_to_device(bext_swap_dims(v, 0, 1), fx);
  cr_assert(back, "%s", bext_last_error());
  cr_expect_eq(bext_device_of(back), fx);
  float got[300];
  cr_assert(bext_read(back, got, sizeof got), "%s", bext_last_error());
  for (int i = 0; i < 30; i++)
    for (int j = 0; j < 10; j++) cr_assert_eq(got[i * 10 + j], src[j * 30 + i], "(%d,%d)", i, j);
  bext_release(back);
}

Test(cube_vulkan, two_tensors_have_distinct_storage, .init = setup) {
  bext_tensor *a = bext_full((int64_t[]){64}, 1, 1.0, BEXT_F32, vk);
  bext_tensor *b = bext_full((int64_t[]){64}, 1, 2.0, BEXT_F32, vk);
  cr_assert(a && b, "%s", bext_last_error());
  cr_expect_neq(a->storage->priv, b->storage->priv, "two tensors, two buffers");
  cr_expect_null(a->storage->data, "no host pointer for device memory");
  float x[64], y[64];
  cr_assert(bext_read(a, x, sizeof x) && bext_read(b, y, sizeof y), "%s", bext_last_error());
  for (int i = 0; i < 64; i++) cr_assert(x[i] == 1.0f && y[i] == 2.0f, "element %d: %g %g", i, x[i], y[i]);
  bext_release(a), bext_release(b);
}

Test(cube_vulkan, random_and_indices, .init = setup) {
  /* the runtime's generator: the same numbers as on ndarray */
  same(bext_random_normal((int64_t[]){1000}, 1, 0, 1, 77, BEXT_F32, vk),
       bext_random_normal((int64_t[]){1000}, 1, 0, 1, 77, BEXT_F32, nd), 0, "random_normal");
  bext_tensor *a, *va;
  pair((int64_t[]){8, 6}, 2, 41, &a, &va);
  int32_t idx[] = {5, 0, 3, 3, 1, 2};
  bext_tensor *i_nd = bext_from_data(idx, BEXT_I32, (int64_t[]){1, 6}, 2, nd);
  bext_tensor *i_vk = bext_from_data(idx, BEXT_I32, (int64_t[]){1, 6}, 2, vk);
  same(bext_gather(bext_retain(va), 0, i_vk), bext_gather(bext_retain(a), 0, i_nd), 0, "gather");
  /* an index out of range: read back from the device and named */
  int32_t bad[] = {0, 8, 1, 1, 1, 1};
  bext_tensor *i_bad = bext_from_data(bad, BEXT_I32, (int64_t[]){1, 6}, 2, vk);
  cr_expect_null(bext_gather(bext_retain(va), 0, i_bad));
  cr_expect(strstr(bext_last_error(), "index 8") && strstr(bext_last_error(), "out of range"), "%s",
            bext_last_error());
  bext_release(a), bext_release(va);
}

/* Signed integers through the unary kernels (abs, relu, sign of i32 take
 * the signed comparisons and negation of the SPIR-V lowering). */
Test(cube_vulkan, signed_integer_unary, .init = setup) {
  int32_t src[] = {0, 1, -3, 7, -2147483647, 42, -1, 5, 0, -9};
  int64_t n = sizeof src / sizeof src[0];
  bext_tensor *a = bext_from_data(src, BEXT_I32, &n, 1, nd), *va = bext_from_data(src, BEXT_I32, &n, 1, vk);
  cr_assert(a && va, "%s", bext_last_error());
  same(bext_cast(bext_retain(va), BEXT_I64), bext_cast(bext_retain(a), BEXT_I64), 0, "cast i32 to i64");
  bext_tensor *l = bext_cast(bext_retain(a), BEXT_I64), *vl = bext_cast(bext_retain(va), BEXT_I64);
  same(bext_abs(vl), bext_abs(l), 0, "abs i64");
  same(bext_abs(bext_retain(va)), bext_abs(bext_retain(a)), 0, "abs i32");
  same(bext_relu(bext_retain(va)), bext_relu(bext_retain(a)), 0, "relu i32");
  same(bext_sign(bext_retain(va)), bext_sign(bext_retain(a)), 0, "sign i32");
  same(bext_neg(bext_retain(va)), bext_neg(bext_retain(a)), 0, "neg i32");
  bext_release(a), bext_release(va);
}

/* Whole-tensor reductions over one long line (66820 elements: more than
 * llvmpipe's loops run). */
Test(cube_vulkan, long_integer_sum, .init = setup) {
  enum { N = 257 * 260 };
  static int32_t src[N];
  for (int i = 0; i < N; i++) src[i] = (int32_t)((i * 7919) % 201) - 100;
  int64_t shape[] = {257, 260};
  bext_tensor *a = bext_from_data(src, BEXT_I32, shape, 2, nd), *va = bext_from_data(src, BEXT_I32, shape, 2, vk);
  cr_assert(a && va, "%s", bext_last_error());
  same(bext_sum_dim(bext_retain(va), 0, false), bext_sum_dim(bext_retain(a), 0, false), 0, "sum_dim 0 i32");
  /* llvmpipe stops loops early: the sum runs in two stages there (it
   * came back short before: -25 for 161) */
  same(bext_sum(bext_retain(va)), bext_sum(bext_retain(a)), 0, "sum i32");
  same(bext_mean(bext_retain(va)), bext_mean(bext_retain(a)), 0, "mean i32");
  same(bext_max_all(bext_retain(va)), bext_max_all(bext_retain(a)), 0, "max_all i32");
  /* argmax is not split: exact, or refused by name, never short */
  bext_tensor *am = bext_argmax(bext_retain(va));
  if (!am)
    cr_expect(strstr(bext_last_error(), "not supported on this device") && strstr(bext_last_error(), "66820"), "%s",
              bext_last_error());
  else
    same(am, bext_argmax(bext_retain(a)), 0, "argmax i32");
  bext_release(a), bext_release(va);
}

/* A line as long as the device's loop limit (dev->loop_max) in tensors
 * of rank 2 and 8: the kernels' rank walks are loops too, and llvmpipe
 * counts every loop of a unit against one budget (cube_vulkan.c), so the
 * limit must leave them room: sum_dim and cumsum came back short here
 * with a limit of 65533.  The line's last element is its largest, so a
 * short argmax shows.  One element more is split or refused by name. */
Test(cube_vulkan, lines_at_the_loop_limit_are_whole, .init = setup) {
  const struct bext_device *base = bext_device_get("cube:vulkan:0");
  cr_assert(bext_sync(base), "%s", bext_last_error());   /* opened: loop_max set */
  int64_t n = base->loop_max ? base->loop_max : 70000;
  int32_t *src = malloc((size_t)(n + 1) * 4);
  for (int64_t i = 0; i <= n; i++) src[i] = 1 + (int32_t)(i % 3) + (i >= n - 1 ? 10 : 0);
  const bext_device *cc = bext_device_get("cube:cpu");
  for (int rank = 2; rank <= 8; rank += 6) {
    int64_t shape[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    shape[rank - 1] = n;
    bext_tensor *a = bext_from_data(src, BEXT_I32, shape, rank, vk), *c = bext_from_data(src, BEXT_I32, shape, rank, cc);
    cr_assert(a && c, "%s", bext_last_error());
    char what[64];
    snprintf(what, sizeof what, "sum_dim over %lld in rank %d", (long long)n, rank);
    same_as_cpu(bext_sum_dim(bext_retain(a), rank - 1, false), bext_sum_dim(bext_retain(c), rank - 1, false), what);
    snprintf(what, sizeof what, "cumsum over %lld in rank %d", (long long)n, rank);
    same_as_cpu(bext_cumsum(bext_retain(a), rank - 1), bext_cumsum(bext_retain(c), rank - 1), what);
    snprintf(what, sizeof what, "argmax_dim over %lld in rank %d", (long long)n, rank);
    same_as_cpu(bext_argmax_dim(bext_retain(a), rank - 1, false), bext_argmax_dim(bext_retain(c), rank - 1, false),
                what);
    bext_release(a), bext_release(c);
  }
  if (base->loop_max) {
    int64_t shape[2] = {1, n + 1};
    bext_tensor *a = bext_from_data(src, BEXT_I32, shape, 2, vk);
    bext_tensor *s = bext_sum_dim(a, 1, false);
    cr_expect_null(s, "a line one longer than the loop limit ran");
    cr_expect(strstr(bext_last_error(), "not supported on this device"), "%s", bext_last_error());
    if (s) bext_release(s);
  }
  free(src);
}

/* Without a Vulkan loader the device is unavailable and says so (a
 * device index not opened before: it reads $BEXT_VULKAN_LIB now); with
 * the loader back, the same device object opens on its next use. */
Test(cube_vulkan, missing_loader_is_named, .init = setup) {
  const bext_device *d = bext_device_get("cube:vulkan:96");
  cr_assert(d);
  setenv("BEXT_VULKAN_LIB", "/nonexistent/libvulkan.so.1", 1);
  bool avail = bext_device_available(d);
  char why[512];
  snprintf(why, sizeof why, "%s", bext_last_error());
  unsetenv("BEXT_VULKAN_LIB");
  cr_expect(!avail);
  cr_expect(strstr(why, "cube:vulkan:96") && strstr(why, "no Vulkan loader") && strstr(why, "/nonexistent/libvulkan.so.1"),
            "names the device and the missing loader: %s", why);
  cr_expect_null(bext_ones((int64_t[]){2}, 1, BEXT_F32, d));
  cr_expect(strstr(bext_last_error(), "bext_ones") && strstr(bext_last_error(), "no Vulkan device 96"),
            "with the loader back, the missing index is named: %s", bext_last_error());
}

/* Four threads on one device: bxvk serves one thread at a time, so every
 * call of the backend holds the device's mutex; each thread's results
 * must be its own. */
#include <pthread.h>

static void *worker(void *arg) {
  intptr_t id = (intptr_t)arg, bad = 0;
  for (int r = 0; r < 20; r++) {
    float src[257], got[257];
    for (int i = 0; i < 257; i++) src[i] = (float)(id * 1000 + r * 10 + i % 7);
    int64_t n = 257;
    bext_tensor *t = bext_from_data(src, BEXT_F32, &n, 1, vk);
    bext_tensor *u = t ? bext_add_scalar(bext_mul_scalar(t, 2.0), (double)id) : NULL;
    if (!u || !bext_read(u, got, sizeof got)) {
      bad++;
      if (u) bext_release(u);
      continue;
    }
    for (int i = 0; i < 257; i++) bad += got[i] != src[i] * 2 + (float)id;
    bext_release(u);
  }
  return (void *)bad;
}

Test(cube_vulkan, threads_share_one_device, .init = setup) {
  pthread_t th[4];
  for (intptr_t i = 0; i < 4; i++) cr_assert_eq(pthread_create(&th[i], NULL, worker, (void *)i), 0);
  for (int i = 0; i < 4; i++) {
    void *bad;
    pthread_join(th[i], &bad);
    cr_expect_eq((intptr_t)bad, 0, "thread %d: %ld wrong elements or failed calls", i, (long)(intptr_t)bad);
  }
}

/* A kernel that writes, at its ABSOLUTE_POS, every topology value folded
 * into one u32 (v = v * 31 + topo, wrapping; stored as i32): a unit that saw a wrong
 * position, count or dim, or wrote the wrong element, shows. */
static bext_kernel_src grid_kernel(void) {
  struct bxk_kernel *k = bxk_kernel_new("grid_topo");
  int o = bxk_add_binding(k, BXK_I32, 1, true);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_val pos = bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS);
  struct bxk_block *ret;
  bxk_if(&B, bxk_bin(&B, BXK_OP_GE, pos, bxk_len(&B, o)), &ret, NULL);
  struct bxk_builder R = bxk_builder_at(k, ret);
  bxk_return(&R);
  bxk_val v = bxk_const_i(&B, BXK_U32, 0);
  for (int t = 0; t < BXK_TOPO_COUNT; t++)
    v = bxk_bin(&B, BXK_OP_ADD, bxk_bin(&B, BXK_OP_MUL, v, bxk_const_i(&B, BXK_U32, 31)), bxk_topo(&B, t));
  bxk_store(&B, o, pos, bxk_cast(&B, BXK_I32, v));
  size_t n = 0;
  uint8_t *ir = bxk_serialize(k, &n);
  bxk_kernel_free(k);
  cr_assert(ir);
  return (bext_kernel_src){.name = "grid_topo", .ir = ir, .size = (uint32_t)n};
}

static uint32_t *grid_run(const bext_kernel_src *src, const bext_grid *g, const char *dev, int64_t n) {
  uint32_t *out = malloc((size_t)n * 4);
  memset(out, 0xff, (size_t)n * 4);
  bext_tensor *t = bext_from_data(out, BEXT_I32, &n, 1, bext_device_get(dev));
  cr_assert(t, "%s", bext_last_error());
  cr_assert(bext_kernel_launch(src, g, &t, 1, NULL, 0), "%s: %s", dev, bext_last_error());
  cr_assert(bext_read(t, out, (size_t)n * 4), "%s", bext_last_error());
  bext_release(t);
  return out;
}

/* More cubes on an axis than maxComputeWorkGroupCount (65535 on
 * lavapipe): the launch runs as several dispatches and means the same
 * as on cube:cpu, in 1-D (70000 and 200000 cubes), 2-D and 3-D. */
Test(cube_vulkan, grids_past_the_dispatch_limit_match_cube_cpu, .init = setup) {
  static const bext_grid grids[] = {
      {{70000, 1, 1}, {1, 1, 1}},  {{200000, 1, 1}, {2, 1, 1}}, {{70001, 3, 1}, {1, 2, 1}},
      {{3, 70000, 1}, {2, 1, 1}},  {{2, 3, 66000}, {1, 2, 2}},  {{65535, 1, 1}, {4, 1, 1}}};
  bext_kernel_src src = grid_kernel();
  for (size_t i = 0; i < sizeof grids / sizeof grids[0]; i++) {
    const bext_grid *g = &grids[i];
    int64_t n = 1;
    for (int a = 0; a < 3; a++) n *= (int64_t)g->cube_count[a] * g->cube_dim[a];
    n -= 3; /* the last units find pos >= len: they return */
    uint32_t *got = grid_run(&src, g, "cube:vulkan:0", n), *want = grid_run(&src, g, "cube:cpu", n);
    int64_t bad = 0, first = -1;
    for (int64_t j = 0; j < n; j++)
      if (got[j] != want[j] && !bad++) first = j;
    cr_expect_eq(bad, 0, "grid %ux%ux%u of %ux%ux%u: %lld elements differ, the first at %lld (%#x, cube:cpu %#x)",
                 g->cube_count[0], g->cube_count[1], g->cube_count[2], g->cube_dim[0], g->cube_dim[1],
                 g->cube_dim[2], (long long)bad, (long long)first, first >= 0 ? got[first] : 0,
                 first >= 0 ? want[first] : 0);
    free(got), free(want);
  }
  free((void *)src.ir);
}
