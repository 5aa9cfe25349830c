/* test_decorator.c — a decorator sees extension ops exactly like core ops.
 * The "+count" test layer wraps flex and ndarray without any change to
 * them; the generated code of tests/codegen/ext/route.bext runs through
 * it and must give the undecorated results, leak nothing, count core and
 * extension ops separately, and keep routing's rules on device instances:
 * the mixed-device error (flex vs flex+count, cube:cuda:0 vs :1, flex vs
 * flex+fusion), a layer the trait does not list panicking with its name,
 * and the process-wide registry of extension ops. */
#include <criterion/criterion.h>
#include <setjmp.h>
#include <string.h>

#include "backend.h"
#include "count_layer.h"
#include "route.h"
#include "route_impl.h"

static const double V3[3] = {1.0, -2.0, 0.5};

static bext_tensor *make(const char *dev, bext_dtype dt) {
  const bext_device *d = bext_device_get(dev);
  cr_assert_not_null(d, "%s", bext_last_error());
  bext_tensor *t;
  if (dt == BEXT_F32) {
    float b[3] = {(float)V3[0], (float)V3[1], (float)V3[2]};
    t = bext_from_data(b, dt, (int64_t[]){3}, 1, d);
  } else {
    int64_t b[3] = {1, -2, 0};
    t = bext_from_data(b, BEXT_I64, (int64_t[]){3}, 1, d);
  }
  cr_assert_not_null(t, "%s", bext_last_error());
  return t;
}
static bext_tensor *f32(const char *dev) { return make(dev, BEXT_F32); }
static bext_tensor *i64(const char *dev) { return make(dev, BEXT_I64); }

static void read3(bext_tensor *t, float out[3]) {
  cr_assert_not_null(t, "%s", bext_last_error());
  cr_assert(bext_read(t, out, 3 * sizeof(float)), "%s", bext_last_error());
}

static void setup(void) {
  cr_assert(count_layer_register(), "%s", bext_last_error());
  count_reset();
}

/* Every method of route.bext on <base> and on <base>+count: same values,
 * the decorated output on the decorated device, one extension op counted
 * per call and no core op (the implementations' own ops run one layer
 * down, on the inner device). */
static void same_through_the_layer(const char *base) {
  char dec[32];
  snprintf(dec, sizeof dec, "%s+count", base);
  const bext_device *ddev = bext_device_get(dec);
  float a[3], b[3];
  count_reset();

  bext_tensor *p = routed_pick(i64(base), f32(base)), *q = routed_pick(i64(dec), f32(dec));
  read3(p, a);
  read3(q, b);
  cr_expect_arr_eq(a, b, sizeof a, "pick on %s", dec);
  cr_expect_eq(bext_device_of(q), ddev);
  cr_expect_str_eq(route_last_backend, base, "the inner implementation ran");
  bext_release(p);
  bext_release(q);

  Wrapped w1 = {.inner = {.left = i64(base), .right = f32(base)}, .scale = 2.0f};
  Wrapped w2 = {.inner = {.left = i64(dec), .right = f32(dec)}, .scale = 2.0f};
  Wrapped o1, o2;
  cr_assert(routed_rewrap(w1, &o1), "%s", bext_last_error());
  cr_assert(routed_rewrap(w2, &o2), "%s", bext_last_error());
  cr_expect_float_eq(o1.scale, o2.scale, 0);
  read3(o1.inner.right, a);
  read3(o2.inner.right, b);
  cr_expect_arr_eq(a, b, sizeof a);
  cr_expect_eq(bext_device_of(o2.inner.left), ddev, "every output tensor is wrapped");
  wrapped_release(&o1);
  wrapped_release(&o2);

  Choice c = {.tag = CHOICE_INTS, .as.Ints = {._0 = i64(dec)}};
  Choice co;
  cr_assert(routed_flip(c, &co), "%s", bext_last_error());
  cr_expect_eq(co.tag, CHOICE_FLOATS);
  cr_expect_eq(bext_device_of(co.as.Floats.t), ddev);
  choice_release(&co);

  route_tuple2_tensor_tensor t2;
  cr_assert(routed_split(f32(dec), &t2), "%s", bext_last_error());
  read3(t2._1, b);
  cr_expect_float_eq(b[1], 2.0f, 1e-6);
  route_tuple2_tensor_tensor_release(&t2);

  /* a borrowed input stays the caller's */
  bext_tensor *x = f32(dec);
  Counted k;
  cr_assert(routed_counted(x, &k), "%s", bext_last_error());
  cr_expect_eq(k.count, 3);
  cr_expect_eq(bext_refcount(x), 1);
  counted_release(&k);
  bext_release(x);

  /* default bodies: gelu has no implementation anywhere */
  p = routed_gelu(f32(base));
  q = routed_gelu(f32(dec));
  read3(p, a);
  read3(q, b);
  for (int i = 0; i < 3; i++) cr_expect_float_eq(a[i], b[i], 1e-6);
  bext_release(p);
  bext_release(q);

  cr_expect_eq(count_custom_total(), 6, "six decorated extension calls on %s", dec);
  cr_expect_eq(count_custom("pick"), 1);
  cr_expect_eq(count_custom("gelu"), 1);
  cr_expect_eq(count_core_total(), 0, "no core op ran on %s itself", dec);

  /* a core op on decorated tensors is counted as such */
  bext_tensor *s = bext_add(f32(dec), f32(dec));
  read3(s, b);
  cr_expect_float_eq(b[1], -4.0f, 1e-6);
  cr_expect_eq(count_core(BXR_OP_ADD), 1);
  cr_expect_eq(count_custom_total(), 6);
  bext_release(s);
}

Test(decorator, extension_ops_through_the_layer_on_flex, .init = setup) { same_through_the_layer("flex"); }
Test(decorator, extension_ops_through_the_layer_on_ndarray, .init = setup) { same_through_the_layer("ndarray"); }

/* Memory: everything the layer wrapped goes back (counted through the
 * allocation hook, as the codegen end-to-end tests do). */
static long long g_live;
static void *counting(void *ud, void *p, size_t o, size_t n) {
  (void)ud;
  if (n == 0) {
    if (p) g_live--;
    free(p);
    return NULL;
  }
  void *r = realloc(p, n);
  if (r && !p) g_live++;
  return r;
}

Test(decorator, nothing_leaks_through_the_layer, .init = setup) {
  bext_set_allocator(counting, NULL);
  g_live = 0;
  same_through_the_layer("flex");
  bext_set_allocator(counting, NULL); /* flushes this thread's block cache */
  cr_expect_eq(g_live, 0, "%lld blocks leaked", g_live);
  bext_set_allocator(NULL, NULL);
}

Test(decorator, routing_compares_device_instances, .init = setup) {
  bext_tensor *r = routed_pick(i64("flex"), f32("flex+count"));
  cr_expect_null(r);
  cr_expect(strstr(bext_last_error(), "Routed::pick: inputs on different devices: `b` is on flex+count, `a` is on flex"),
            "%s", bext_last_error());
  /* Devices this build lacks cannot make tensors; routing alone is
   * checked by moving host tensors' handles onto those device objects
   * (routing reads t->device before any backend runs). */
  const char *pairs[][2] = {{"cube:cuda:0", "cube:cuda:1"}, {"flex", "flex+fusion"}};
  for (int k = 0; k < 2; k++) {
    bext_tensor *a = i64("flex"), *b = f32("flex");
    struct bext_device *save = a->device;
    a->device = (struct bext_device *)bext_device_get(pairs[k][0]);
    b->device = (struct bext_device *)bext_device_get(pairs[k][1]);
    bext_retain(a);
    bext_retain(b);
    r = routed_pick(a, b);
    cr_expect_null(r);
    char want[160];
    snprintf(want, sizeof want, "`b` is on %s, `a` is on %s", pairs[k][1], pairs[k][0]);
    cr_expect(strstr(bext_last_error(), want), "%s", bext_last_error());
    a->device = b->device = save;
    bext_release(a);
    bext_release(b);
  }
  /* autodiff strategies of one stack route together */
  cr_expect_eq(((struct bext_device *)bext_device_get("flex+autodiff(balanced)"))->route,
               (struct bext_device *)bext_device_get("flex+autodiff"));
}

static jmp_buf g_jump;
static char g_panic[600];
static void record_panic(const char *msg, const char *file, int line, void *ud) {
  (void)file;
  (void)line;
  (void)ud;
  snprintf(g_panic, sizeof g_panic, "%s", msg);
  longjmp(g_jump, 1);
}

Test(decorator, a_layer_the_trait_does_not_list_panics_naming_it, .init = setup) {
  static bool registered;
  if (!registered) cr_assert(count_layer_register_opaque("trace"), "%s", bext_last_error());
  registered = true;
  bext_tensor *x = f32("flex+trace"), *y = i64("flex+trace");
  g_panic[0] = 0;
  if (setjmp(g_jump) == 0) {
    bext_set_panic_hook(record_panic, NULL);
    (void)routed_pick(y, x);
    bext_set_panic_hook(NULL, NULL);
    cr_assert_fail("an unlisted layer did not panic");
  }
  bext_set_panic_hook(NULL, NULL);
  cr_expect_str_eq(g_panic, "Routed::pick: no implementation for backend flex+trace: its layer +trace is not "
                            "listed (listed: Flex, NdArray: cfg(feature = \"nd\"))");
  /* core ops still run through it */
  bext_tensor *s = bext_neg(f32("flex+trace"));
  float b[3];
  read3(s, b);
  cr_expect_float_eq(b[1], 2.0f, 0);
  bext_release(s);
}

Test(decorator, extension_ops_are_registered_by_trait_and_id) {
  const bext_ext_method *m = bext_ext_find("Routed", "pick");
  cr_assert_not_null(m, "Routed::pick is registered at start-up");
  cr_expect_str_eq(m->what, "Routed::pick");
  cr_expect_null(bext_ext_find("Routed", "nope"));
  cr_expect_null(bext_ext_find(NULL, "pick"));
  const bext_ext_method *all[64];
  int n = bext_ext_list(all, 64);
  cr_expect_geq(n, 10, "every method of route.bext: %d", n);
  bool seen = false;
  for (int i = 0; i < n && i < 64; i++) seen |= all[i] == m;
  cr_expect(seen);
  /* registering the same descriptor again is harmless; another one under
   * a taken (trait, id) is a programming error naming both */
  bext_ext_register(m);
  cr_expect_eq(bext_ext_list(NULL, 0), n);
  static bext_ext_method dup;
  dup = *m;
  dup.what = "Other::pick";
  g_panic[0] = 0;
  if (setjmp(g_jump) == 0) {
    bext_set_panic_hook(record_panic, NULL);
    bext_ext_register(&dup);
    bext_set_panic_hook(NULL, NULL);
    cr_assert_fail("a duplicate id did not panic");
  }
  bext_set_panic_hook(NULL, NULL);
  cr_expect_str_eq(g_panic, "extension op id 'pick' of trait Routed is registered twice: by Routed::pick and by Other::pick");
}

/* +autodiff over another decorator, where +fusion will sit
 * ("flex+fusion+autodiff"): autodiff records against whatever device is
 * inside it, so a stack with a layer between gives the plain stack's
 * gradients bit for bit, and the layer below sees the forward ops and the
 * backward rules' ops (both run one level down). */
static void grads_of(const char *spec, double gx[6], double gw[3]) {
  const bext_device *d = bext_device_get(spec);
  cr_assert(d && bext_device_available(d), "%s: %s", spec, bext_last_error());
  const double xv[6] = {0.5, -1.0, 2.0, 0.25, -0.75, 1.5}, wv[3] = {1.0, -0.5, 0.25};
  bext_tensor *x = bext_require_grad(bext_from_data(xv, BEXT_F64, (int64_t[]){2, 3}, 2, d));
  bext_tensor *w = bext_require_grad(bext_from_data(wv, BEXT_F64, (int64_t[]){3}, 1, d));
  bext_tensor *l = bext_sum(bext_tanh(bext_mul(bext_exp(bext_retain(x)), bext_retain(w))));
  cr_assert_not_null(l, "%s: %s", spec, bext_last_error());
  bext_grads *g = bext_backward(l);
  cr_assert_not_null(g, "%s: %s", spec, bext_last_error());
  bext_tensor *a = bext_grad(g, x), *b = bext_grad(g, w);
  cr_assert(a && b && bext_read(a, gx, 6 * sizeof *gx) && bext_read(b, gw, 3 * sizeof *gw), "%s: %s", spec,
            bext_last_error());
  bext_release(a);
  bext_release(b);
  bext_grads_free(g);
  bext_release(l);
  bext_release(x);
  bext_release(w);
}

Test(decorator, autodiff_over_another_layer, .init = setup) {
  cr_assert(count_layer_register_at("below", 1), "%s", bext_last_error());
  const char *bases[] = {"flex", "ndarray"};
  for (int i = 0; i < 2; i++) {
    char plain[40], stacked[40];
    snprintf(plain, sizeof plain, "%s+autodiff", bases[i]);
    snprintf(stacked, sizeof stacked, "%s+below+autodiff", bases[i]);
    double px[6], pw[3], sx[6], sw[3];
    grads_of(plain, px, pw);
    count_reset();
    grads_of(stacked, sx, sw);
    cr_expect(!memcmp(px, sx, sizeof px) && !memcmp(pw, sw, sizeof pw), "%s: gradients differ from %s", stacked,
              plain);
    /* forward: exp, mul, tanh, sum; backward adds at least one op per rule */
    cr_expect_geq(count_core_total(), 8, "%s: %llu core ops seen below autodiff", stacked,
                  (unsigned long long)count_core_total());
    cr_expect_geq(count_core(BXR_OP_TANH), 1);
  }
}
