/* e2e_route.c — end-to-end tests of the generated C for ext/route.bext.
 *
 * bextc generates route.h / route.c at build time; this file, the user's
 * implementations (route_impl.c) and libbext are linked into two
 * executables: codegen_e2e_on (features `nd` and `extra` set, so the
 * NdArray arm and the `extra` method exist) and codegen_e2e_off (neither).
 * The suite runs under ASan + UBSan + LSan, so every owned argument the
 * entry points consume and every value they return must be released
 * exactly once: a leak or a double release fails the test. */
#include <criterion/criterion.h>
#include <math.h>
#include <setjmp.h>
#include <string.h>

#include "route.h"
#include "route_impl.h"

/* ---- leaks ----
 * Criterion runs each test in a child process whose exit-time LeakSanitizer
 * report does not fail the test, and an in-process LSan check can miss a
 * handle whose address is still lying in a dead stack frame.  So every
 * test counts the runtime's memory itself: all of it goes through the
 * allocation hook (bext_set_allocator), a test starts with a counting hook
 * and ends with every byte it allocated given back.  Installing the hook
 * again flushes this thread's block cache, so cached free blocks are not
 * mistaken for live ones. */
static long long g_live_bytes, g_live_blocks;

static void *counting_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  if (nsize == 0) {
    if (ptr) {
      g_live_bytes -= (long long)osize;
      g_live_blocks--;
    }
    free(ptr);
    return NULL;
  }
  void *p = realloc(ptr, nsize);
  if (p) {
    g_live_bytes += (long long)nsize - (ptr ? (long long)osize : 0);
    g_live_blocks += ptr ? 0 : 1;
  }
  return p;
}

/* A test whose body runs between a fresh counting hook and the count. */
#define CG_TEST(suite, name)                                                              \
  static void suite##_##name##_body(void);                                                \
  Test(suite, name) {                                                                     \
    bext_set_allocator(counting_alloc, NULL);                                             \
    g_live_bytes = g_live_blocks = 0;                                                     \
    suite##_##name##_body();                                                              \
    bext_set_allocator(counting_alloc, NULL); /* flushes the block cache */              \
    cr_assert_eq(g_live_blocks, 0, "leaked %lld runtime blocks (%lld bytes)", g_live_blocks, \
                 g_live_bytes);                                                           \
  }                                                                                       \
  static void suite##_##name##_body(void)

/* ---- helpers ---- */

static bext_tensor *make(const char *dev, bext_dtype dt, const double *vals, int64_t n) {
  const bext_device *d;
  cr_assert((d = bext_device_get(dev)));
  int64_t shape[1] = {n};
  if (dt == BEXT_F32) {
    float buf[16];
    for (int64_t i = 0; i < n; i++) buf[i] = (float)vals[i];
    return bext_from_data(buf, dt, shape, 1, d);
  }
  int64_t buf[16];
  for (int64_t i = 0; i < n; i++) buf[i] = (int64_t)vals[i];
  return bext_from_data(buf, BEXT_I64, shape, 1, d);
}

static const double V3[3] = {1.0, -2.0, 0.5};

static bext_tensor *f32(const char *dev) { return make(dev, BEXT_F32, V3, 3); }
static bext_tensor *i64(const char *dev) { return make(dev, BEXT_I64, V3, 3); }

static void read_f32(bext_tensor *t, float out[3]) {
  cr_assert_not_null(t, "%s", bext_last_error());
  cr_assert_eq(bext_numel(t), 3);
  cr_assert(bext_read(t, out, 3 * sizeof(float)));
}

static __attribute__((unused)) const char *backend_of(const bext_tensor *t) {
  return bext_device_name(bext_device_of(t));
}

/* Panic hook that records the message and jumps back into the test. */
static jmp_buf g_jump;
static char g_panic[1024];
static void record_panic(const char *msg, const char *file, int line, void *ud) {
  (void)file;
  (void)line;
  (void)ud;
  snprintf(g_panic, sizeof g_panic, "%s", msg);
  longjmp(g_jump, 1);
}

/* ---- routing ---- */

CG_TEST(route, float_tensor_routes_over_an_earlier_int_tensor) {
  bext_tensor *r = routed_pick(i64("flex"), f32("flex"));
  cr_assert_not_null(r, "%s", bext_last_error());
  cr_assert_str_eq(route_last_backend, "flex");
  bext_release(r);
  /* On different backends, the error names the routing (float) tensor first. */
  r = routed_pick(i64("ndarray"), f32("flex"));
  cr_assert_null(r);
  cr_assert(strstr(bext_last_error(), "Routed::pick: inputs on different devices: `b` is on flex, `a` is on ndarray"),
            "got: %s", bext_last_error());
}

/* Declared kinds are checked at the entry point, before routing and any
 * implementation: the argument, the declared kind and the actual dtype. */
CG_TEST(route, a_tensor_of_the_wrong_kind_is_rejected) {
  route_last_backend = "";
  bext_tensor *r = routed_pick(f32("flex"), f32("flex"));   /* `a` is an IntTensor */
  cr_assert_null(r);
  cr_assert_str_eq(bext_last_error(), "Routed::pick: argument `a` is declared IntTensor, but this tensor has dtype f32");
  cr_assert_str_eq(route_last_backend, "", "no implementation ran");
  Wrapped w = {.inner = {.left = i64("flex"), .right = i64("flex")}, .scale = 1.0f};
  r = routed_nested(w);   /* consumed on failure too: the leak check holds it */
  cr_assert_null(r);
  cr_assert(strstr(bext_last_error(), "argument `w.inner.right` is declared FloatTensor, but this tensor has dtype i64"),
            "%s", bext_last_error());
}

CG_TEST(route, looks_inside_nested_extension_values) {
  Wrapped w = {.inner = {.left = i64("ndarray"), .right = f32("flex")}, .scale = 2.0f};
  bext_tensor *r = routed_nested(w);   /* consumes w even on failure */
  cr_assert_null(r);
  cr_assert(strstr(bext_last_error(), "`w.inner.right` is on flex, `w.inner.left` is on ndarray"), "got: %s",
            bext_last_error());
  Wrapped ok = {.inner = {.left = i64("flex"), .right = f32("flex")}, .scale = 2.0f};
  float out[3];
  r = routed_nested(ok);
  read_f32(r, out);
  cr_assert_float_eq(out[1], -4.0f, 1e-6);
  bext_release(r);
}

CG_TEST(route, follows_the_active_enum_variant) {
  bext_tensor *x = i64("ndarray");
  Choice c = {.tag = CHOICE_FLOATS, .as.Floats = {.t = f32("flex"), .k = 1}};
  cr_assert_null(routed_choose(&c, bext_retain(x)));
  cr_assert(strstr(bext_last_error(), "`c(Floats).t` is on flex, `x` is on ndarray"), "got: %s", bext_last_error());
  choice_release(&c);

  Choice ints = {.tag = CHOICE_INTS, .as.Ints = {._0 = i64("flex")}};
  cr_assert_null(routed_choose(&ints, bext_retain(x)));
  cr_assert(strstr(bext_last_error(), "`c(Ints).0` is on flex, `x` is on ndarray"), "got: %s", bext_last_error());
  choice_release(&ints);

  /* No tensor in the variant: x routes. */
  Choice none = {.tag = CHOICE_NOTHING};
  bext_tensor *y = i64("flex");
  bext_tensor *r = routed_choose(&none, y);
  cr_assert_not_null(r, "%s", bext_last_error());
  cr_assert_str_eq(route_last_backend, "flex");
  bext_release(r);
  bext_release(x);
}

CG_TEST(route, null_handle_is_an_error_naming_the_argument) {
  cr_assert_null(routed_pick(i64("flex"), NULL));
  cr_assert(strstr(bext_last_error(), "argument `b` is a NULL tensor"), "got: %s", bext_last_error());
}

/* The NULL came from a failed op: the message cites that failure. */
CG_TEST(route, null_handle_cites_the_failure_that_produced_it) {
  bext_tensor *a = i64("flex");
  bext_tensor *b = bext_rsqrt(i64("flex"));
  cr_assert_null(b);
  cr_assert_null(routed_pick(a, b));
  cr_assert(strstr(bext_last_error(), "Routed::pick: argument `b` is a NULL tensor; earlier error: bext_rsqrt: "
                                      "operand 1 has dtype i64, expected a float dtype"),
            "got: %s", bext_last_error());
}

/* An implementation failing without an error after an earlier, unrelated
 * failure: the entry point reports it, not the stale message. */
CG_TEST(route, silent_failure_after_an_unrelated_one) {
  cr_assert_null(bext_rsqrt(i64("flex")));
  cr_assert(bext_last_error()[0]);
  route_fail_quietly = true;
  bext_tensor *r = flex_only_only(f32("flex"));
  route_fail_quietly = false;
  cr_assert_null(r);
  cr_assert_str_eq(bext_last_error(), "FlexOnly::only (flex implementation) failed");
}

/* ---- cfg-gated selector: NdArray only with feature `nd` ---- */

CG_TEST(route, ndarray_arm_follows_the_feature) {
  bext_tensor *a = i64("ndarray"), *b = f32("ndarray");
  g_panic[0] = 0;
  if (setjmp(g_jump) == 0) {
    bext_set_panic_hook(record_panic, NULL);
    bext_tensor *r = routed_pick(a, b);
    bext_set_panic_hook(NULL, NULL);
    (void)r;
#if defined(BEXT_FEATURE_ND)
    cr_assert_not_null(r, "%s", bext_last_error());
    cr_assert_str_eq(route_last_backend, "ndarray");
    cr_assert_str_eq(backend_of(r), "ndarray");
    bext_release(r);
#else
    cr_assert_fail("routing to an NdArray arm whose condition is off returned");
#endif
  } else {
    bext_set_panic_hook(NULL, NULL);
#if defined(BEXT_FEATURE_ND)
    cr_assert_fail("unexpected panic: %s", g_panic);
#else
    cr_assert_str_eq(g_panic,
                     "Routed::pick: no implementation for backend ndarray: it is listed as "
                     "`NdArray: cfg(feature = \"nd\")`, and that condition is off in this build "
                     "(listed: Flex, NdArray: cfg(feature = \"nd\"))");
#endif
  }
}

CG_TEST(route, unlisted_backend_goes_to_the_panic_hook) {
  bext_tensor *x = f32("ndarray");
  g_panic[0] = 0;
  if (setjmp(g_jump) == 0) {
    bext_set_panic_hook(record_panic, NULL);
    (void)flex_only_only(x);
    bext_set_panic_hook(NULL, NULL);
    cr_assert_fail("an unlisted backend did not panic");
  }
  bext_set_panic_hook(NULL, NULL);
  /* x was consumed before the panic: LSan checks nothing leaked. */
  cr_assert_str_eq(g_panic, "FlexOnly::only: no implementation for backend ndarray: it is not listed (listed: Flex)");
}

CG_TEST(route, no_tensor_input_calls_the_only_selector) {
  route_last_backend = "";
  bext_tensor *r = flex_only_filled(4, 2.5f);
  cr_assert_not_null(r, "%s", bext_last_error());
  cr_assert_str_eq(route_last_backend, "flex");
  cr_assert_eq(bext_numel(r), 4);
  float v[4];
  cr_assert(bext_read(r, v, sizeof v));
  cr_assert_float_eq(v[3], 2.5f, 1e-6);
  bext_release(r);
}

CG_TEST(route, cfg_on_a_method) {
#if defined(BEXT_FEATURE_EXTRA)
  float out[3];
  bext_tensor *r = routed_extra(f32("flex"));
  read_f32(r, out);
  cr_assert_float_eq(out[0], -1.0f, 1e-6);
  bext_release(r);
  r = routed_extra_default(f32("flex"), 3.0f);   /* default body of an unchecked method */
  read_f32(r, out);
  cr_assert_float_eq(out[1], -7.0f, 1e-6);
  bext_release(r);
#else
  /* Without the feature the method does not exist; the header says so. */
#ifdef ROUTED_EXTRA_DECLARED
  cr_assert_fail("extra declared");
#endif
  cr_assert(true);
#endif
}

/* ---- default bodies ---- */

CG_TEST(defaults, gelu_has_no_implementation_anywhere) {
  float out[3];
  bext_tensor *r = routed_gelu(f32("flex"));
  read_f32(r, out);
  for (int i = 0; i < 3; i++) {
    double x = V3[i], want = x * 0.5 * (1.0 + erf(x / 1.41421356));
    cr_assert_float_eq(out[i], (float)want, 1e-5, "gelu(%g) = %g, want %g", x, out[i], want);
  }
  bext_release(r);
}

CG_TEST(defaults, user_implementation_wins_over_the_default) {
  float out[3];
  bext_tensor *r = routed_scaled(f32("flex"), 3.0f);
  read_f32(r, out);
  cr_assert_float_eq(out[0], 103.0f, 1e-5);   /* Flex implementation: +100 */
  bext_release(r);
#if defined(BEXT_FEATURE_ND)
  r = routed_scaled(f32("ndarray"), 3.0f);
  read_f32(r, out);
  cr_assert_float_eq(out[0], 4.0f, 1e-5);     /* default body: +1 */
  cr_assert_str_eq(backend_of(r), "ndarray");
  bext_release(r);
#endif
}

CG_TEST(defaults, scalar_on_either_side_and_borrowed_operand) {
  bext_tensor *x = f32("flex");
  bext_tensor *y = f32("flex");
  int before = bext_refcount(x);
  float out[3];
  bext_tensor *r = routed_mixed(x, y);   /* x borrowed, y owned */
  cr_assert_eq(bext_refcount(x), before, "a borrowed argument's refcount changed");
  read_f32(r, out);
  for (int i = 0; i < 3; i++) {
    double v = V3[i], want = 2.0 - v / (v + 1.0) * 3.0;
    if (v + 1.0 == 0.0) continue;
    cr_assert_float_eq(out[i], (float)want, 1e-4, "mixed at %d: %g want %g", i, out[i], want);
  }
  bext_release(r);
  bext_release(x);
}

CG_TEST(defaults, names_that_clash_with_c_or_generated_locals) {
  bext_tensor *t1 = f32("flex");
  float out[3];
  bext_tensor *r = routed_collide(f32("flex"), 1u, 2.0f, t1, 3u);
  read_f32(r, out);
  for (int i = 0; i < 3; i++) cr_assert_float_eq(out[i], (float)(V3[i] * 2.0 + V3[i]), 1e-5);
  bext_release(r);
  bext_release(t1);
}

CG_TEST(defaults, unary_functions_and_methods) {
  float out[3];
  bext_tensor *r = routed_unary_mix(f32("flex"));
  read_f32(r, out);
  for (int i = 0; i < 3; i++) {
    double x = V3[i];
    double want = exp(x) + log1p(fabs(x)) - sqrt(fabs(x)) * tanh(x) + 1.0 / (1.0 + exp(-x)) - (x > 0 ? x : 0) +
                  sin(x) * cos(x) - floor(x) + ceil(x) + nearbyint(x) - 1.0 / (x + 10.0) - x + log(exp(x)) +
                  sqrt(fabs(x));
    cr_assert_float_eq(out[i], (float)want, 1e-4, "unary_mix(%g) = %g, want %g", x, out[i], want);
  }
  bext_release(r);
}

CG_TEST(defaults, matmul_and_reductions_as_methods) {
  const bext_device *d;
  cr_assert((d = bext_device_get("flex")));
  float av[6] = {1, 2, 3, 4, 5, 6}, bv[6] = {1, 0, 0, 1, 1, 1};
  int64_t as[2] = {2, 3}, bs[2] = {3, 2};
  bext_tensor *a = bext_from_data(av, BEXT_F32, as, 2, d), *b = bext_from_data(bv, BEXT_F32, bs, 2, d);
  bext_tensor *r = routed_gram(a, b);
  cr_assert_not_null(r, "%s", bext_last_error());
  cr_assert_eq(bext_rank(r), 0);
  float v;
  cr_assert(bext_read(r, &v, sizeof v));
  /* a.b = [[4,5],[10,11]] sums to 30; mean(a) = 3.5 */
  cr_assert_float_eq(v, 30.0f * 2.0f - 3.5f, 1e-4);
  bext_release(r);
}

/* x (3x3) and y (3x2) for the table-driven ops below. */
static const float OPS_X[9] = {1.0f, -2.0f, 0.5f, 0.3f, 0.7f, 1.0f, -1.0f, -2.0f, -3.0f};
static const float OPS_Y[6] = {1.0f, 0.5f, -1.0f, 2.0f, 0.25f, 1.0f};

static bext_tensor *ops_tensor(const char *dev, const float *v, int64_t rows, int64_t cols) {
  const bext_device *d;
  cr_assert((d = bext_device_get(dev)));
  int64_t shape[2] = {rows, cols};
  return bext_from_data(v, BEXT_F32, shape, 2, d);
}

/* Reads a [3, 1] result of dtype `dt` into out[3] as doubles. */
static void read_col(bext_tensor *r, bext_dtype dt, double out[3]) {
  cr_assert_not_null(r, "%s", bext_last_error());
  cr_assert_eq(bext_rank(r), 2);
  cr_assert_eq(bext_dim(r, 0), 3);
  cr_assert_eq(bext_dim(r, 1), 1, "the `_dim` reduction keeps the reduced dim");
  cr_assert_eq(bext_dtype_of(r), dt, "dtype %s", bext_dtype_name(bext_dtype_of(r)));
  if (dt == BEXT_F32) {
    float v[3];
    cr_assert(bext_read(r, v, sizeof v));
    for (int i = 0; i < 3; i++) out[i] = v[i];
  } else if (dt == BEXT_I64) {
    int64_t v[3];
    cr_assert(bext_read(r, v, sizeof v));
    for (int i = 0; i < 3; i++) out[i] = (double)v[i];
  } else {
    uint8_t v[3];
    cr_assert(bext_read(r, v, sizeof v));
    for (int i = 0; i < 3; i++) out[i] = v[i];
  }
}

static void check_rowwise(const char *dev) {
  double out[3];
  bext_tensor *r = routed_rowwise(ops_tensor(dev, OPS_X, 3, 3), ops_tensor(dev, OPS_Y, 3, 2));
  read_col(r, BEXT_F32, out);
  cr_assert_str_eq(backend_of(r), dev);
  for (int i = 0; i < 3; i++) {
    const float *x = OPS_X + 3 * i;
    double xy = 0, msum = 0, mx = x[0], xs = 0;
    for (int j = 0; j < 3; j++) {
      for (int k = 0; k < 2; k++) xy += (double)x[j] * OPS_Y[2 * j + k];
      double t = 2.5 * tanh(x[j]);
      double m = t < 0 ? 0 : t;
      msum += m > 1 ? 1 : m;
      if (x[j] > mx) mx = x[j];
      xs += x[j];
    }
    double want = xy + msum * msum - mx / 2.0 + erf(0.5) + xs;
    cr_assert_float_eq(out[i], want, 1e-4, "%s rowwise row %d = %g, want %g", dev, i, out[i], want);
  }
  bext_release(r);
}

CG_TEST(defaults, table_ops_as_methods_functions_and_operators) {
  check_rowwise("flex");
#if defined(BEXT_FEATURE_ND)
  check_rowwise("ndarray");
#endif
}

CG_TEST(defaults, output_kinds_follow_the_op_table) {
  double out[3];
  bext_tensor *r = routed_best(ops_tensor("flex", OPS_X, 3, 3));
  read_col(r, BEXT_I64, out);
  /* argmax * 10 + argmin per row: [0*10+1, 2*10+0, 0*10+2] */
  const double want_best[3] = {1, 20, 2};
  for (int i = 0; i < 3; i++) cr_assert_eq(out[i], want_best[i], "best row %d = %g", i, out[i]);
  bext_release(r);
  r = routed_positive_rows(ops_tensor("flex", OPS_X, 3, 3));
  read_col(r, BEXT_BOOL, out);
  /* some x > 0, and the row sum below 1.5: sums are -0.5, 2.0, -6 */
  const double want_pos[3] = {1, 0, 0};
  for (int i = 0; i < 3; i++) cr_assert_eq(out[i], want_pos[i], "positive_rows row %d = %g", i, out[i]);
  bext_release(r);
}

/* ---- struct / enum / tuple values ---- */

CG_TEST(values, struct_in_and_out) {
  Wrapped w = {.inner = {.left = i64("flex"), .right = f32("flex")}, .scale = 1.5f};
  Wrapped out;
  cr_assert(routed_rewrap(w, &out), "%s", bext_last_error());
  cr_assert_float_eq(out.scale, 3.0f, 1e-6);
  Wrapped copy = wrapped_retain(&out);
  cr_assert_eq(bext_refcount(out.inner.right), 2);
  wrapped_release(&copy);
  cr_assert_null(copy.inner.right);
  wrapped_release(&out);
}

CG_TEST(values, enum_in_and_out) {
  Choice c = {.tag = CHOICE_INTS, .as.Ints = {._0 = i64("flex")}};
  Choice out;
  cr_assert(routed_flip(c, &out), "%s", bext_last_error());
  cr_assert_eq(out.tag, CHOICE_FLOATS);
  cr_assert_eq(out.as.Floats.k, 7);
  cr_assert_eq(bext_dtype_of(out.as.Floats.t), BEXT_F32);
  choice_release(&out);
  /* A failed call zeroes *bext_out and still consumes the input. */
  Choice bad = {.tag = CHOICE_FLOATS, .as.Floats = {.t = NULL, .k = 0}};
  cr_assert_not(routed_flip(bad, &out));
  cr_assert_eq(out.tag, 0);
}

CG_TEST(values, tuple_output) {
  route_tuple2_tensor_tensor out;
  float a[3], b[3];
  cr_assert(routed_split(f32("flex"), &out), "%s", bext_last_error());
  read_f32(out._0, a);
  read_f32(out._1, b);
  cr_assert_float_eq(a[1], -2.0f, 1e-6);
  cr_assert_float_eq(b[1], 2.0f, 1e-6);
  route_tuple2_tensor_tensor_release(&out);
}

CG_TEST(values, borrowed_input_struct_output) {
  bext_tensor *x = f32("flex");
  Counted c;
  cr_assert(routed_counted(x, &c), "%s", bext_last_error());
  cr_assert_eq(c.count, 3);
  cr_assert_eq(bext_refcount(x), 2);   /* ours + the struct's */
  counted_release(&c);
  cr_assert_eq(bext_refcount(x), 1);
  bext_release(x);
}

/* ---- autodiff: default bodies are differentiable ----
 * On +autodiff, a method with a default body runs it on the autodiff
 * device, so its core ops record the graph (docs/codegen.md "Autodiff"),
 * whether or not the trait lists Autodiff (Routed does not). */

static bext_tensor *tracked_f64(const char *dev) {
  const bext_device *d;
  cr_assert((d = bext_device_get(dev)));
  bext_tensor *t = bext_from_data(V3, BEXT_F64, (int64_t[]){3}, 1, d);
  return bext_require_grad(t);
}

CG_TEST(autodiff, default_body_gelu_is_differentiated) {
  const char *devs[] = {"flex+autodiff", "ndarray+autodiff"};
  for (int k = 0; k < 2; k++) {
    bext_tensor *x = tracked_f64(devs[k]);
    bext_tensor *y = routed_gelu(bext_retain(x));
    cr_assert_not_null(y, "%s", bext_last_error());
    cr_assert(bext_is_tracked(y));
    bext_tensor *l = bext_sum(y);
    bext_grads *g = bext_backward(l);
    cr_assert_not_null(g, "%s", bext_last_error());
    bext_tensor *gx = bext_grad(g, x);
    double v[3];
    cr_assert(bext_read(gx, v, sizeof v));
    const double c = 1.41421356;
    for (int i = 0; i < 3; i++) {
      double t = V3[i], want = 0.5 * (1 + erf(t / c)) + 0.5 * t * (2 / sqrt(M_PI)) * exp(-(t / c) * (t / c)) / c;
      cr_expect(fabs(v[i] - want) < 1e-9, "%s: gelu'(%g) = %.12g, want %.12g", devs[k], t, v[i], want);
    }
    bext_release(gx);
    bext_grads_free(g);
    bext_release(l);
    bext_release(x);
  }
}

CG_TEST(autodiff, tracked_calls_take_the_default_body_untracked_the_kernel) {
  /* scaled has a Flex implementation (+100) and a default body (x*f+1):
   * tracked, the default body runs (it is the one with a gradient);
   * untracked, the inner device's own kernel does. */
  bext_tensor *x = tracked_f64("flex+autodiff");
  bext_tensor *y = routed_scaled(bext_retain(x), 3.0f);
  cr_assert_not_null(y, "%s", bext_last_error());
  double v[3];
  cr_assert(bext_read(y, v, sizeof v));
  cr_expect(fabs(v[0] - (V3[0] * 3 + 1)) < 1e-12, "%g", v[0]);
  bext_tensor *l = bext_sum(y);
  bext_grads *g = bext_backward(l);
  cr_assert_not_null(g, "%s", bext_last_error());
  bext_tensor *gx = bext_grad(g, x);
  cr_assert(bext_read(gx, v, sizeof v));
  for (int i = 0; i < 3; i++) cr_expect_eq(v[i], 3.0);
  bext_release(gx);
  bext_grads_free(g);
  bext_release(l);
  bext_tensor *c = routed_scaled(bext_detach(x), 3.0f);
  cr_assert_not_null(c, "%s", bext_last_error());
  cr_expect(!bext_is_tracked(c));
  cr_assert(bext_read(c, v, sizeof v));
  cr_expect(fabs(v[0] - (V3[0] * 3 + 100)) < 1e-12, "the Flex kernel: %g", v[0]);
  bext_release(c);
}

CG_TEST(autodiff, borrowed_tracked_argument) {
  bext_tensor *x = tracked_f64("ndarray+autodiff"), *y = tracked_f64("ndarray+autodiff");
  bext_tensor *r = routed_mixed(x, bext_retain(y));   /* 2 - x/(y+1)*3, x borrowed */
  cr_assert_not_null(r, "%s", bext_last_error());
  bext_tensor *l = bext_sum(r);
  bext_grads *g = bext_backward(l);
  cr_assert_not_null(g, "%s", bext_last_error());
  bext_tensor *gx = bext_grad(g, x), *gy = bext_grad(g, y);
  double a[3], b[3];
  cr_assert(bext_read(gx, a, sizeof a) && bext_read(gy, b, sizeof b));
  for (int i = 0; i < 3; i++) {
    double t = V3[i];
    if (t + 1.0 == 0.0) continue;
    cr_expect(fabs(a[i] - (-3.0 / (t + 1))) < 1e-12, "d/dx at %d: %g", i, a[i]);
    cr_expect(fabs(b[i] - (3.0 * t / ((t + 1) * (t + 1)))) < 1e-12, "d/dy at %d: %g", i, b[i]);
  }
  bext_release(gx);
  bext_release(gy);
  bext_grads_free(g);
  bext_release(l);
  bext_release(x);
  bext_release(y);
}

CG_TEST(autodiff, no_default_body_and_autodiff_unlisted_is_the_routing_panic) {
  bext_tensor *x = tracked_f64("flex+autodiff");
  g_panic[0] = 0;
  if (setjmp(g_jump) == 0) {
    bext_set_panic_hook(record_panic, NULL);
    (void)flex_only_only(x);
    bext_set_panic_hook(NULL, NULL);
    cr_assert_fail("an unlisted layer did not panic");
  }
  bext_set_panic_hook(NULL, NULL);
  cr_expect(strstr(g_panic, "its layer +autodiff is not listed"), "%s", g_panic);
}
