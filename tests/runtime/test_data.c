/* test_data.c — bext_data / bext_data_mut: borrowed pointers to element 0
 * of a host-memory tensor's view.  Reads on contiguous tensors and on
 * strided views (through bext_strides), writes read back with bext_read,
 * empty tensors, and each misuse with its message: a shared handle, a view
 * sharing storage, a non-contiguous view, a device whose memory is not
 * host memory (a test copy of the NdArray backend with host_memory false),
 * and a NULL handle. */
#include <criterion/criterion.h>
#include <string.h>

#include "backend.h"
#include "test_device.h"

static const char *const devices[] = {"flex", "ndarray"};

static const bext_device *dev(const char *spec) {
  const bext_device *d;
  cr_assert((d = bext_device_get(spec)));
  return d;
}

/* [2,3] f32 holding 0..5 */
static bext_tensor *iota(const char *spec) {
  const float v[6] = {0, 1, 2, 3, 4, 5};
  const bext_device *d = dev(spec);
  bext_tensor *t = bext_from_data(v, BEXT_F32, (int64_t[]){2, 3}, 2, d);
  cr_assert_not_null(t, "%s", bext_last_error());
  return t;
}

#define EXPECT_MSG(...)                                                                             \
  do {                                                                                              \
    const char *needles_[] = {__VA_ARGS__};                                                         \
    for (size_t k_ = 0; k_ < sizeof needles_ / sizeof needles_[0]; k_++)                            \
      cr_expect(strstr(bext_last_error(), needles_[k_]) != NULL, "message '%s' lacks '%s'",        \
                bext_last_error(), needles_[k_]);                                                   \
  } while (0)

Test(data, read_contiguous) {
  for (int d = 0; d < 2; d++) {
    bext_tensor *t = iota(devices[d]);
    const float *p = bext_data(t);
    cr_assert_not_null(p, "%s", bext_last_error());
    for (int i = 0; i < 6; i++) cr_expect_eq(p[i], (float)i, "%s: element %d", devices[d], i);
    bext_release(t);
  }
}

/* A transposed view: element (i, j) at p[i*strides[0] + j*strides[1]]. */
Test(data, read_a_view_through_its_strides) {
  for (int d = 0; d < 2; d++) {
    bext_tensor *v = bext_swap_dims(iota(devices[d]), 0, 1);   /* [3,2]: v[i][j] = 3j + i */
    cr_assert_not_null(v, "%s", bext_last_error());
    const float *p = bext_data(v);
    cr_assert_not_null(p, "%s", bext_last_error());
    const int64_t *st = bext_strides(v);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 2; j++)
        cr_expect_eq(p[i * st[0] + j * st[1]], (float)(3 * j + i), "%s: (%d,%d)", devices[d], i, j);
    /* a narrowed view starts at its own element 0 (offset applied) */
    bext_tensor *n = bext_narrow(v, 0, 1, 2);   /* rows 1..2 of v */
    cr_assert_not_null(n, "%s", bext_last_error());
    p = bext_data(n);
    cr_assert_not_null(p);
    cr_expect_eq(p[0], 1.0f);
    cr_expect_eq(p[bext_strides(n)[0]], 2.0f);
    bext_release(n);
  }
}

Test(data, write_then_read_back) {
  for (int d = 0; d < 2; d++) {
    const bext_device *dv = dev(devices[d]);
    bext_tensor *t = bext_empty((int64_t[]){4}, 1, BEXT_F64, dv);
    cr_assert_not_null(t);
    double *p = bext_data_mut(t);
    cr_assert_not_null(p, "%s", bext_last_error());
    for (int i = 0; i < 4; i++) p[i] = 1.5 * i;
    double out[4];
    cr_assert(bext_read(t, out, sizeof out));
    for (int i = 0; i < 4; i++) cr_expect_eq(out[i], 1.5 * i);
    /* what an op sees afterwards */
    bext_tensor *s = bext_sum(t);
    double sum = 0;
    cr_assert(bext_read(s, &sum, sizeof sum));
    cr_expect_eq(sum, 9.0);
    bext_release(s);
  }
}

/* Documented: empty tensors give a non-NULL pointer (not to be
 * dereferenced), also for bext_data_mut. */
Test(data, empty_tensor_gives_non_null) {
  const bext_device *dv = dev("flex");
  bext_tensor *t = bext_empty((int64_t[]){0, 3}, 2, BEXT_F32, dv);
  cr_assert_not_null(t);
  cr_expect_not_null(bext_data(t));
  cr_expect_not_null(bext_data_mut(t));
  bext_release(t);
}

Test(data, shared_handle_is_refused_for_writing) {
  bext_tensor *t = iota("flex");
  bext_retain(t);
  bext_clear_error();
  cr_expect_null(bext_data_mut(t));
  EXPECT_MSG("bext_data_mut: [2,3] f32 is shared (2 references)");
  cr_expect_not_null(bext_data(t), "reading a shared tensor is fine");
  bext_release(t);
  cr_expect_not_null(bext_data_mut(t), "%s", bext_last_error());   /* unique again */
  bext_release(t);
}

Test(data, view_sharing_storage_is_refused_for_writing) {
  bext_tensor *t = iota("ndarray");
  bext_tensor *v = bext_reshape(bext_retain(t), (int64_t[]){6}, 1);   /* a contiguous view of t */
  cr_assert_not_null(v, "%s", bext_last_error());
  cr_assert(bext_is_contiguous(v));
  bext_clear_error();
  cr_expect_null(bext_data_mut(v));
  EXPECT_MSG("bext_data_mut: [6] f32 shares its storage with another view");
  cr_expect_null(bext_data_mut(t));
  EXPECT_MSG("bext_data_mut: [2,3] f32 shares its storage");
  bext_release(t);
  cr_expect_not_null(bext_data_mut(v), "%s", bext_last_error());   /* the last view standing */
  bext_release(v);
}

Test(data, non_contiguous_is_refused_for_writing) {
  bext_tensor *v = bext_swap_dims(iota("flex"), 0, 1);
  cr_assert_not_null(v);
  cr_assert(!bext_is_contiguous(v));
  bext_clear_error();
  cr_expect_null(bext_data_mut(v));
  EXPECT_MSG("bext_data_mut: [3,2] f32 is not contiguous: call bext_contiguous first");
  v = bext_contiguous(v);
  cr_assert_not_null(v);
  float *p = bext_data_mut(v);
  cr_assert_not_null(p, "%s", bext_last_error());
  cr_expect_eq(p[1], 3.0f);
  bext_release(v);
}

Test(data, device_without_host_memory) {
  static struct bxr_backend gpu;   /* NdArray's members, but not host memory */
  gpu = *bext_device_get("ndarray")->vt;
  gpu.name = "fakegpu";
  gpu.host_memory = false;
  TEST_DEVICE(gpu_dev, &gpu, "fakegpu");
  bext_tensor *t = bxr_tensor_new(&gpu_dev, BEXT_F32, 1, (int64_t[]){4});
  cr_assert_not_null(t);
  bext_clear_error();
  cr_expect_null(bext_data(t));
  EXPECT_MSG("bext_data: [4] f32 lives on device 'fakegpu' whose memory is not host memory");
  bext_clear_error();
  cr_expect_null(bext_data_mut(t));
  EXPECT_MSG("bext_data_mut: [4] f32 lives on device 'fakegpu' whose memory is not host memory");
  bext_release(t);
}

Test(data, null_handle) {
  bext_clear_error();
  cr_expect_null(bext_data(NULL));
  cr_expect_str_eq(bext_last_error(), "bext_data: NULL tensor handle");
  cr_expect_null(bext_data_mut(NULL));
  /* NULL-operand errors cite the pending failure (bext.h's error contract) */
  cr_expect_str_eq(bext_last_error(), "bext_data_mut: NULL tensor handle; earlier error: bext_data: NULL tensor handle");
}
