/* test_devices.c — device instances: the whole grammar (backends this
 * build lacks and decorator layers included), canonical spelling and round
 * trips, interning (equal specs give the same object, also across
 * threads), availability, the default device, the device calls (list,
 * sync, memory stats, close), to_device, and the error for mixing devices
 * in one op. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <bext/bext.h>

static const bext_device *get_ok(const char *s) {
  const bext_device *d = bext_device_get(s);
  cr_assert_not_null(d, "'%s' should parse: %s", s, bext_last_error());
  return d;
}

/* s is canonical: it comes back as written. */
static void roundtrip(const char *s) { cr_expect_str_eq(bext_device_name(get_ok(s)), s); }

Test(devices, grammar_accepts_every_form) {
  const bext_device *d = get_ok("ndarray");
  cr_expect_eq(bext_device_backend(d), BEXT_BACKEND_NDARRAY);
  cr_expect_null(bext_device_layer(d));
  cr_expect_null(bext_device_inner(d));
  d = get_ok("flex+fusion");
  cr_expect_eq(bext_device_backend(d), BEXT_BACKEND_FLEX);
  cr_expect_str_eq(bext_device_layer(d), "fusion");
  cr_expect_eq(bext_device_inner(d), get_ok("flex"));
  d = get_ok("cube:vulkan:1");
  cr_expect_eq(bext_device_backend(d), BEXT_BACKEND_CUBE);
  cr_expect_eq(bext_device_index(d), 1);
  cr_expect_eq(bext_device_index(get_ok("cube:cuda")), 0);
  cr_expect_eq(bext_device_backend(get_ok("libtorch:cpu")), BEXT_BACKEND_LIBTORCH);
  d = get_ok("remote:tcp://127.0.0.1:7878+fusion");
  cr_expect_eq(bext_device_backend(d), BEXT_BACKEND_REMOTE);
  cr_expect_str_eq(bext_device_name(bext_device_inner(d)), "remote:tcp://127.0.0.1:7878");
  /* the full stack: fusion inside autodiff */
  d = get_ok("cube:vulkan:0+fusion+autodiff(balanced)");
  cr_expect_str_eq(bext_device_layer(d), "autodiff");
  cr_expect_str_eq(bext_device_name(bext_device_inner(d)), "cube:vulkan:0+fusion");
  cr_expect_str_eq(bext_device_name(bext_device_inner(bext_device_inner(d))), "cube:vulkan:0");

  const char *canonical[] = {"ndarray", "flex", "cube:cpu", "cube:vulkan:0", "cube:hip:3+fusion",
                             "libtorch:cuda:0", "remote:tcp://host:1", "flex+autodiff",
                             "flex+autodiff(balanced)", "flex+fusion+autodiff", "ndarray+fusion+autodiff(balanced)",
                             "cube:cuda:1+autodiff", "remote:tcp://h:2+fusion+autodiff(balanced)"};
  for (size_t i = 0; i < sizeof canonical / sizeof *canonical; i++) roundtrip(canonical[i]);
}

Test(devices, equal_specs_give_the_same_device) {
  cr_expect_eq(get_ok("flex"), get_ok("flex"));
  cr_expect_eq(get_ok("cube:cuda"), get_ok("cube:cuda:0"));
  cr_expect_str_eq(bext_device_name(get_ok("cube:cuda")), "cube:cuda:0");
  cr_expect_eq(get_ok("flex+autodiff(none)"), get_ok("flex+autodiff"));
  cr_expect_str_eq(bext_device_name(get_ok("flex+autodiff(none)")), "flex+autodiff");
  /* different instances are different objects */
  cr_expect_neq(get_ok("cube:cuda:0"), get_ok("cube:cuda:1"));
  cr_expect_neq(get_ok("flex"), get_ok("flex+fusion"));
  cr_expect_neq(get_ok("flex+autodiff"), get_ok("flex+autodiff(balanced)"));
  /* a decorator's inner device is the interned base */
  cr_expect_eq(bext_device_inner(get_ok("ndarray+fusion")), get_ok("ndarray"));
}

static void *intern_many(void *arg) {
  const bext_device **out = arg;
  char spec[64];
  for (int i = 0; i < 64; i++) {
    snprintf(spec, sizeof spec, "cube:hip:%d+fusion", i);
    out[i] = bext_device_get(spec);
  }
  return NULL;
}

Test(devices, interning_is_thread_safe) {
  enum { T = 4 };
  static const bext_device *got[T][64];
  pthread_t th[T];
  for (int t = 0; t < T; t++) pthread_create(&th[t], NULL, intern_many, got[t]);
  for (int t = 0; t < T; t++) pthread_join(th[t], NULL);
  for (int i = 0; i < 64; i++) {
    cr_assert_not_null(got[0][i]);
    for (int t = 1; t < T; t++) cr_expect_eq(got[t][i], got[0][i], "thread %d, device %d", t, i);
  }
}

Test(devices, grammar_rejects_bad_syntax) {
  struct {
    const char *spec, *why;
  } bad[] = {
      {"", "unknown backend"},
      {"gpu", "unknown backend"},
      {"flex+", "unknown decorator"},
      {"flex+lazy", "unknown decorator '+lazy' (expected '+autodiff' or '+fusion')"},
      {"cube:", "unknown cube target"},
      {"cube:tpu", "unknown cube target"},
      {"cube:vulkan:", "bad device index"},
      {"cube:vulkan:x", "bad device index"},
      {"cube:vulkan:-1", "bad device index"},
      {"libtorch:", "unknown libtorch target"},
      {"libtorch:mps", "unknown libtorch target"},
      {"remote:", "needs an address"},
      {"ndarray ", "unknown backend"},
      {"NDARRAY", "unknown backend (expected cube:..., flex, ndarray, libtorch:..., remote:...)"},
      {"flex:1", "this backend takes no target or index"},
      /* strategies */
      {"flex+autodiff(fast)", "unknown autodiff strategy 'fast' (expected none or balanced)"},
      {"flex+autodiff()", "unknown autodiff strategy ''"},
      {"flex+autodiff(balanced", "unclosed '('"},
      {"flex+fusion(balanced)", "takes no arguments"},
      {"flex+autodiff(balanced)x", "unexpected 'x'"},
      /* orders and repeats */
      {"flex+autodiff+fusion", "bad order: '+fusion' must come before '+autodiff'"},
      {"flex+fusion+fusion", "appears twice"},
      {"flex+autodiff+autodiff(balanced)", "appears twice"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    bext_clear_error();
    cr_expect_null(bext_device_get(bad[i].spec), "'%s' should not parse", bad[i].spec);
    const char *e = bext_last_error();
    cr_expect(strstr(e, "bext_device_get") && strstr(e, bad[i].why), "'%s': message: %s", bad[i].spec, e);
  }
  cr_expect_null(bext_device_get(NULL));
}

/* The autodiff decorator exists (runtime/src/autodiff.c) over both CPU
 * backends, with either strategy, and over fusion (runtime/src/fusion.c). */
Test(devices, autodiff_stacks_are_available) {
  const char *specs[] = {"flex+autodiff", "ndarray+autodiff", "flex+autodiff(balanced)", "ndarray+fusion",
                         "flex+fusion+autodiff", "ndarray+fusion+autodiff(balanced)"};
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
    cr_expect(bext_device_available(get_ok(specs[i])), "%s: %s", specs[i], bext_last_error());
}

Test(devices, unavailable_devices_say_so) {
  struct {
    const char *spec, *why;
  } later[] = {
#ifndef BEXT_HAVE_LIBTORCH   /* built where libtorch-dev is found (test_libtorch.c) */
      {"libtorch:cpu", "backend not available in this build"},
#endif
#ifndef BEXT_HAVE_REMOTE   /* built where nng and protobuf-c are found (tests/remote) */
      {"remote:tcp://127.0.0.1:7878", "backend not available in this build"},
#endif
      {NULL, NULL}, /* the end: both may be in the build */
  };
  for (size_t i = 0; later[i].spec; i++) {
    const bext_device *d = get_ok(later[i].spec);
    cr_expect(!bext_device_available(d), "%s", later[i].spec);
    cr_expect(strstr(bext_last_error(), later[i].why) != NULL, "message: %s", bext_last_error());
    bext_tensor *t = bext_zeros((int64_t[]){2}, 1, BEXT_F32, d);
    cr_expect_null(t);
    cr_expect(strstr(bext_last_error(), "bext_zeros") && strstr(bext_last_error(), later[i].spec),
              "message names the op and the device: %s", bext_last_error());
    cr_expect(!bext_sync(d));
  }
  /* The cube backend's GPU targets are in every build (their drivers
   * are dlopen'd): without an AMD GPU, the first use of cube:hip:0 says
   * the driver found none (test_cube_gpu.c tests these paths). */
  const bext_device *hip = get_ok("cube:hip:0");
  if (bext_device_available(hip)) return;
  cr_expect_null(bext_zeros((int64_t[]){2}, 1, BEXT_F32, hip));
  cr_expect(strstr(bext_last_error(), "cube:hip:0") && strstr(bext_last_error(), "backend unavailable: no HIP driver"),
            "message names the device and the driver: %s", bext_last_error());
}

Test(devices, default_is_flex) {
  const bext_device *d = bext_device_default();
  cr_expect_eq(d, get_ok("flex"), "default device should be flex");
  bext_tensor *t = bext_ones((int64_t[]){3}, 1, BEXT_F32, NULL);
  cr_assert_not_null(t, "%s", bext_last_error());
  cr_expect_eq(bext_device_of(t), get_ok("flex"));
  bext_release(t);

  const bext_device *nd = get_ok("ndarray");
  cr_assert(bext_set_default_device(nd));
  t = bext_ones((int64_t[]){3}, 1, BEXT_F32, NULL);
  cr_expect_eq(bext_device_of(t), nd);
  bext_release(t);
  cr_expect(!bext_set_default_device(get_ok("remote:tcp://127.0.0.1:7878")));
  cr_expect(bext_set_default_device(NULL)); /* back to the build default */
  cr_expect_eq(bext_device_default(), get_ok("flex"));
}

Test(devices, list_names_the_base_devices_of_this_build) {
  const bext_device *ds[8];
  int n = bext_device_list(ds, 8);
#ifdef BEXT_HAVE_LIBTORCH
  const int want = 4;   /* + libtorch:cpu, when libtorch-dev was found */
#else
  const int want = 3;
#endif
  cr_assert_eq(n, want, "this build has cube:cpu, flex, ndarray (and libtorch:cpu with libtorch): got %d", n);
  cr_expect_eq(ds[0], get_ok("cube:cpu")); /* table order */
  cr_expect_eq(ds[1], get_ok("flex"));
  cr_expect_eq(ds[2], get_ok("ndarray"));
#ifdef BEXT_HAVE_LIBTORCH
  cr_expect_eq(ds[3], get_ok("libtorch:cpu"));
#endif
  cr_expect_eq(bext_device_list(NULL, 0), want);
  cr_expect_eq(bext_device_list(ds, 1), want); /* the count even when cap is short */
}

Test(devices, sync_is_a_no_op_on_eager_devices) {
  cr_expect(bext_sync(get_ok("flex")));
  cr_expect(bext_sync(get_ok("ndarray")));
  cr_expect(bext_sync(NULL)); /* the default device */
}

/* Memory: live and peak follow big buffers; Flex's freed big buffers show
 * up as cached until the device is closed. */
Test(devices, memory_stats_measure_through_the_cache) {
  const bext_device *fx = get_ok("flex");
  bext_memory m0, m1, m2, m3;
  cr_assert(bext_device_close(fx)); /* start from an empty cache */
  cr_assert(bext_memory_stats(fx, &m0));
  cr_expect_eq(m0.cached_bytes, 0);
  cr_assert(bext_memory_reset_peak(fx));
  size_t bytes = (size_t)4 << 20; /* 4 MiB of f32 */
  bext_tensor *t = bext_zeros((int64_t[]){(int64_t)(bytes / 4)}, 1, BEXT_F32, fx);
  cr_assert_not_null(t, "%s", bext_last_error());
  cr_assert(bext_memory_stats(fx, &m1));
  cr_expect_eq(m1.live_bytes, m0.live_bytes + bytes);
  cr_expect_geq(m1.peak_bytes, m1.live_bytes);
  bext_release(t);
  cr_assert(bext_memory_stats(fx, &m2));
  cr_expect_eq(m2.live_bytes, m0.live_bytes);
  cr_expect_eq(m2.peak_bytes, m1.peak_bytes, "peak stays");
  cr_expect_geq(m2.cached_bytes, bytes, "the freed buffer is cached: %zu", m2.cached_bytes);
  cr_assert(bext_device_close(fx));
  cr_assert(bext_memory_stats(fx, &m3));
  cr_expect_eq(m3.cached_bytes, 0, "close frees the cache");
  /* the device is usable after close: it opens again */
  t = bext_ones((int64_t[]){4}, 1, BEXT_F32, fx);
  cr_expect_not_null(t, "%s", bext_last_error());
  bext_release(t);
  /* ndarray: no cache, same live accounting */
  const bext_device *nd = get_ok("ndarray");
  cr_assert(bext_memory_stats(nd, &m0));
  t = bext_zeros((int64_t[]){1 << 20}, 1, BEXT_F64, nd);
  cr_assert(bext_memory_stats(nd, &m1));
  cr_expect_eq(m1.live_bytes, m0.live_bytes + ((size_t)8 << 20));
  bext_release(t);
  cr_expect(!bext_memory_stats(NULL, &m0));
  cr_expect(!bext_memory_stats(nd, NULL));
  cr_expect(!bext_device_close(NULL));
}

Test(devices, to_device_moves_data_both_ways) {
  const bext_device *nd = get_ok("ndarray"), *fx = get_ok("flex");
  float v[6] = {1, -2, 3.5f, 4, 5, -6};
  bext_tensor *t = bext_from_data(v, BEXT_F32, (int64_t[]){2, 3}, 2, nd);
  t = bext_swap_dims(t, 0, 1); /* a strided view travels as its values */
  t = bext_to_device(t, fx);
  cr_assert_not_null(t, "%s", bext_last_error());
  cr_expect_eq(bext_device_of(t), fx);
  t = bext_to_device(t, nd);
  cr_assert_not_null(t, "%s", bext_last_error());
  cr_expect_eq(bext_device_of(t), nd);
  float out[6];
  cr_assert(bext_read(t, out, sizeof out));
  const float want[6] = {1, 4, -2, 5, 3.5f, -6};
  for (int i = 0; i < 6; i++) cr_expect_eq(out[i], want[i], "element %d", i);
  cr_expect_eq(bext_rank(t), 2);
  cr_expect_eq(bext_shape(t)[0], 3);
  /* same device: the handle itself comes back */
  bext_tensor *same = bext_to_device(t, nd);
  cr_expect_eq(same, t);
  bext_release(same);
}

Test(devices, mixing_devices_names_both) {
  const bext_device *nd = get_ok("ndarray"), *fx = get_ok("flex");
  bext_tensor *a = bext_ones((int64_t[]){2}, 1, BEXT_F32, nd);
  bext_tensor *b = bext_ones((int64_t[]){2}, 1, BEXT_F32, fx);
  cr_assert(a && b, "%s", bext_last_error());
  bext_tensor *c = bext_add(a, b);
  cr_expect_null(c);
  const char *e = bext_last_error();
  cr_expect(strstr(e, "bext_add") && strstr(e, "'ndarray'") && strstr(e, "'flex'"), "message: %s", e);
}

Test(devices, table_names) {
  cr_expect_str_eq(bext_backend_name(BEXT_BACKEND_FLEX), "flex");
  cr_expect_str_eq(bext_backend_name(BEXT_BACKEND_REMOTE), "remote");
  cr_expect_str_eq(bext_backend_name(BEXT_BACKEND_COUNT), "?");
  cr_expect_str_eq(bext_layer_name(BEXT_LAYER_FUSION), "fusion");
  cr_expect_str_eq(bext_layer_name(BEXT_LAYER_AUTODIFF), "autodiff");
  cr_expect_str_eq(bext_layer_name(BEXT_LAYER_COUNT), "?");
#ifdef BEXT_HAVE_FLEX
  cr_expect(bext_device_available(get_ok("flex")));
#else
  cr_expect_fail("bext/config.h should define BEXT_HAVE_FLEX in this build");
#endif
#ifdef BEXT_HAVE_CUBE
  cr_expect(bext_device_available(get_ok("cube:cpu")));
#else
  cr_expect_fail("bext/config.h should define BEXT_HAVE_CUBE (backends/cube)");
#endif
}
