/* test_devices.c — device strings (the whole grammar, including backends
 * this build lacks), availability, the default device, to_device, and the
 * error for mixing devices in one op. */
#include <criterion/criterion.h>
#include <string.h>

#include <bext/bext.h>

static bext_device parse_ok(const char *s) {
  bext_device d;
  cr_assert(bext_device_parse(s, &d), "'%s' should parse: %s", s, bext_last_error());
  return d;
}

static void roundtrip(const char *s) {
  bext_device d = parse_ok(s);
  char buf[200];
  bext_device_format(&d, buf, sizeof buf);
  cr_expect_str_eq(buf, s);
}

Test(devices, grammar_accepts_every_form) {
  bext_device d = parse_ok("ndarray");
  cr_expect_eq(d.backend, BEXT_BACKEND_NDARRAY);
  cr_expect(!d.fusion);
  d = parse_ok("flex+fusion");
  cr_expect_eq(d.backend, BEXT_BACKEND_FLEX);
  cr_expect(d.fusion);
  d = parse_ok("cube:vulkan:1");
  cr_expect_eq(d.backend, BEXT_BACKEND_CUBE);
  cr_expect_str_eq(d.target, "vulkan");
  cr_expect_eq(d.index, 1);
  d = parse_ok("cube:cuda");
  cr_expect_eq(d.index, 0);
  d = parse_ok("libtorch:cpu");
  cr_expect_eq(d.backend, BEXT_BACKEND_LIBTORCH);
  d = parse_ok("remote:tcp://127.0.0.1:7878+fusion");
  cr_expect_eq(d.backend, BEXT_BACKEND_REMOTE);
  cr_expect_str_eq(d.address, "tcp://127.0.0.1:7878");
  cr_expect(d.fusion);
  roundtrip("ndarray");
  roundtrip("flex");
  roundtrip("cube:cpu");
  roundtrip("cube:vulkan:0");
  roundtrip("cube:hip:3+fusion");
  roundtrip("libtorch:cuda:0");
  roundtrip("remote:tcp://host:1");
}

Test(devices, grammar_rejects_bad_syntax) {
  const char *bad[] = {"", "gpu", "flex+", "flex+lazy", "cube:", "cube:tpu", "cube:vulkan:",
                       "cube:vulkan:x", "cube:vulkan:-1", "libtorch:", "libtorch:mps", "remote:",
                       "ndarray ", "NDARRAY"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    bext_device d;
    cr_expect(!bext_device_parse(bad[i], &d), "'%s' should not parse", bad[i]);
    cr_expect(strstr(bext_last_error(), "bext_device_parse") != NULL, "message: %s", bext_last_error());
  }
  cr_expect(!bext_device_parse(NULL, NULL));
}

Test(devices, unavailable_backends_say_so) {
  const char *later[] = {"cube:cpu", "cube:vulkan:0", "libtorch:cpu", "remote:tcp://127.0.0.1:7878",
                         "ndarray+fusion"};
  for (size_t i = 0; i < sizeof later / sizeof later[0]; i++) {
    bext_device d = parse_ok(later[i]);
    cr_expect(!bext_device_available(&d), "%s", later[i]);
    cr_expect(strstr(bext_last_error(), "not available in this build") != NULL, "message: %s",
              bext_last_error());
    bext_tensor *t = bext_zeros((int64_t[]){2}, 1, BEXT_F32, &d);
    cr_expect_null(t);
    cr_expect(strstr(bext_last_error(), "bext_zeros") && strstr(bext_last_error(), later[i]),
              "message names the op and the device: %s", bext_last_error());
  }
}

Test(devices, default_is_flex) {
  bext_device d = bext_device_default();
  cr_expect_eq(d.backend, BEXT_BACKEND_FLEX, "default device should be flex");
  bext_tensor *t = bext_ones((int64_t[]){3}, 1, BEXT_F32, NULL);
  cr_assert_not_null(t, "%s", bext_last_error());
  bext_device of;
  cr_assert(bext_device_of(t, &of));
  cr_expect_eq(of.backend, BEXT_BACKEND_FLEX);
  bext_release(t);

  bext_device nd = parse_ok("ndarray");
  cr_assert(bext_set_default_device(&nd));
  t = bext_ones((int64_t[]){3}, 1, BEXT_F32, NULL);
  cr_assert(bext_device_of(t, &of));
  cr_expect_eq(of.backend, BEXT_BACKEND_NDARRAY);
  bext_release(t);
  bext_device cube = parse_ok("cube:cpu");
  cr_expect(!bext_set_default_device(&cube));
  cr_expect(bext_set_default_device(NULL)); /* back to the build default */
  cr_expect_eq(bext_device_default().backend, BEXT_BACKEND_FLEX);
}

Test(devices, to_device_moves_data_both_ways) {
  bext_device nd = parse_ok("ndarray"), fx = parse_ok("flex");
  float v[6] = {1, -2, 3.5f, 4, 5, -6};
  bext_tensor *t = bext_from_data(v, BEXT_F32, (int64_t[]){2, 3}, 2, &nd);
  t = bext_swap_dims(t, 0, 1); /* a strided view travels as its values */
  t = bext_to_device(t, &fx);
  cr_assert_not_null(t, "%s", bext_last_error());
  bext_device of;
  bext_device_of(t, &of);
  cr_expect_eq(of.backend, BEXT_BACKEND_FLEX);
  t = bext_to_device(t, &nd);
  cr_assert_not_null(t, "%s", bext_last_error());
  bext_device_of(t, &of);
  cr_expect_eq(of.backend, BEXT_BACKEND_NDARRAY);
  float out[6];
  cr_assert(bext_read(t, out, sizeof out));
  const float want[6] = {1, 4, -2, 5, 3.5f, -6};
  for (int i = 0; i < 6; i++) cr_expect_eq(out[i], want[i], "element %d", i);
  cr_expect_eq(bext_rank(t), 2);
  cr_expect_eq(bext_shape(t)[0], 3);
  /* same device: the handle itself comes back */
  bext_tensor *same = bext_to_device(t, &nd);
  cr_expect_eq(same, t);
  bext_release(same);
}

Test(devices, mixing_devices_names_both) {
  bext_device nd = parse_ok("ndarray"), fx = parse_ok("flex");
  bext_tensor *a = bext_ones((int64_t[]){2}, 1, BEXT_F32, &nd);
  bext_tensor *b = bext_ones((int64_t[]){2}, 1, BEXT_F32, &fx);
  cr_assert(a && b, "%s", bext_last_error());
  bext_tensor *c = bext_add(a, b);
  cr_expect_null(c);
  const char *e = bext_last_error();
  cr_expect(strstr(e, "bext_add") && strstr(e, "'ndarray'") && strstr(e, "'flex'"), "message: %s", e);
}
