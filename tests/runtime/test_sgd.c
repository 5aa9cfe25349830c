/* test_sgd.c — bext_sgd_step: its values are bext_sub(p,
 * bext_mul_scalar(g, lr))'s bit for bit on plain and autodiff devices, for
 * the one-pass kernel (f32, f64; tails and pool-split sizes) and the core
 * ops' route (f16, strided views); it writes in place only into a
 * uniquely held contiguous parameter, so other handles on the buffer, a
 * transposed view and a live graph's saved values keep theirs; tracked
 * parameters come back as fresh leaves; bad operands give located errors. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "autodiff.h"
#include "bext/bext.h"

static const bext_device *dev_of(const char *spec) {
  const bext_device *d = bext_device_get(spec);
  cr_assert(d && bext_device_available(d), "%s: %s", spec, bext_last_error());
  return d;
}

/* n values of dtype dt from a fixed formula (no two alike in a row) */
static bext_tensor *ramp(const bext_device *d, bext_dtype dt, int64_t r, int64_t c, double scale, unsigned mul) {
  double *v = malloc((size_t)(r * c) * sizeof *v);
  cr_assert_not_null(v);
  for (int64_t i = 0; i < r * c; i++) v[i] = scale * ((double)((i * mul) % 97) / 97.0 - 0.5) + 1e-7 * (double)i;
  bext_tensor *t = bext_cast(bext_from_data(v, BEXT_F64, (int64_t[]){r, c}, 2, d), dt);
  free(v);
  cr_assert_not_null(t, "%s", bext_last_error());
  return t;
}

static void *host(const bext_tensor *t, size_t *bytes) {
  *bytes = (size_t)bext_numel(t) * bext_dtype_size(bext_dtype_of(t));
  void *b = malloc(*bytes ? *bytes : 1);
  cr_assert(bext_read(t, b, *bytes), "%s", bext_last_error());
  return b;
}

/* bext_sgd_step(p, g, lr) == bext_sub(p, bext_mul_scalar(g, lr)), bytes */
static void expect_same_as_ops(const char *spec, bext_dtype dt, int64_t r, int64_t c, double lr) {
  const bext_device *d = dev_of(spec);
  bext_tensor *p = ramp(d, dt, r, c, 3.0, 13), *g = ramp(d, dt, r, c, 2.0, 7);
  bext_tensor *want = bext_sub(bext_retain(p), bext_mul_scalar(bext_retain(g), lr));
  bext_tensor *got = bext_sgd_step(p, g, lr);
  cr_assert_not_null(got, "%s: %s", spec, bext_last_error());
  size_t nw, ng;
  void *w = host(want, &nw), *h = host(got, &ng);
  cr_expect(nw == ng && !memcmp(w, h, nw), "%s %s %lldx%lld lr %g: sgd_step differs from sub(p, mul_scalar(g, lr))",
            spec, bext_dtype_name(dt), (long long)r, (long long)c, lr);
  free(w);
  free(h);
  bext_release(want);
  bext_release(got);
  bext_release(g);
}

Test(sgd, values_are_sub_of_mul_scalar_bit_for_bit) {
  const char *specs[] = {"flex", "ndarray", "flex+autodiff", "ndarray+autodiff"};
  /* 1e-3 is not exact in f32 (the product is rounded from f64), 0.5 is;
   * 3x7 has a tail past the 4-lane loop; 301x299 splits across the pool */
  for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++)
    for (int big = 0; big < 2; big++)
      for (int l = 0; l < 2; l++) {
        int64_t r = big ? 301 : 3, c = big ? 299 : 7;
        double lr = l ? 0.5 : 1e-3;
        expect_same_as_ops(specs[k], BEXT_F32, r, c, lr);
        expect_same_as_ops(specs[k], BEXT_F64, r, c, lr);
        expect_same_as_ops(specs[k], BEXT_F16, r, c, lr);   /* the core ops' route */
      }
}

/* The buffer under a flex or flex+autodiff tensor (internals: the test
 * looks inside the handle). */
static const void *buffer_of(const bext_tensor *t) {
  if (bext_device_of(t)->vt == &bxad_backend) t = bxad_inner(t);
  return t->storage->data;
}

Test(sgd, a_uniquely_held_parameter_is_updated_in_place) {
  const char *specs[] = {"flex", "flex+autodiff"};
  for (int k = 0; k < 2; k++) {
    const bext_device *d = dev_of(specs[k]);
    bext_tensor *p = ramp(d, BEXT_F32, 64, 32, 1.0, 5), *g = ramp(d, BEXT_F32, 64, 32, 1.0, 3);
    if (k) p = bext_require_grad(p);
    const void *before = buffer_of(p);
    p = bext_sgd_step(p, g, 0.25);
    cr_assert_not_null(p, "%s", bext_last_error());
    cr_expect_eq(buffer_of(p), before, "%s: a uniquely held parameter got a new buffer", specs[k]);
    cr_expect(bext_is_tracked(p) == (k == 1), "%s: tracking changed", specs[k]);
    bext_release(p);
    bext_release(g);
  }
}

Test(sgd, other_handles_on_the_parameter_keep_their_values) {
  const bext_device *d = dev_of("flex");
  /* a second reference, and a view sharing the storage */
  for (int how = 0; how < 2; how++) {
    bext_tensor *p = ramp(d, BEXT_F32, 40, 40, 1.0, 5), *g = ramp(d, BEXT_F32, 40, 40, 1.0, 3);
    bext_tensor *other = how ? bext_reshape(bext_retain(p), (int64_t[]){1600}, 1) : bext_retain(p);
    size_t n;
    float *was = host(other, &n);
    bext_tensor *want = bext_sub(bext_retain(p), bext_mul_scalar(bext_retain(g), 0.1));
    bext_tensor *q = bext_sgd_step(p, g, 0.1);
    cr_assert_not_null(q, "%s", bext_last_error());
    float *now = host(other, &n), *qv = host(q, &n), *wv = host(want, &n);
    cr_expect(!memcmp(was, now, n), "%s: the update changed another handle's values", how ? "a view" : "a reference");
    cr_expect(!memcmp(qv, wv, n), "the update of a shared parameter is wrong");
    free(was);
    free(now);
    free(qv);
    free(wv);
    bext_release(q);
    bext_release(want);
    bext_release(other);
    bext_release(g);
  }
}

Test(sgd, a_transposed_parameter_gets_the_same_values) {
  const char *specs[] = {"flex", "flex+autodiff", "ndarray"};
  for (int k = 0; k < 3; k++) {
    const bext_device *d = dev_of(specs[k]);
    bext_tensor *base = ramp(d, BEXT_F32, 24, 40, 1.0, 5), *g = ramp(d, BEXT_F32, 40, 24, 1.0, 3);
    bext_tensor *p = bext_transpose(bext_retain(base));   /* strided: 40x24 over base's buffer */
    bext_tensor *want = bext_sub(bext_contiguous(bext_transpose(bext_retain(base))),
                                 bext_mul_scalar(bext_retain(g), 1e-2));
    size_t n;
    float *was = host(base, &n);
    bext_tensor *q = bext_sgd_step(p, g, 1e-2);
    cr_assert_not_null(q, "%s: %s", specs[k], bext_last_error());
    float *now = host(base, &n), *qv = host(q, &n), *wv = host(want, &n);
    cr_expect(!memcmp(qv, wv, n), "%s: a transposed parameter's update is wrong", specs[k]);
    cr_expect(!memcmp(was, now, n), "%s: the update wrote into the transposed view's base", specs[k]);
    free(was);
    free(now);
    free(qv);
    free(wv);
    bext_release(q);
    bext_release(want);
    bext_release(base);
    bext_release(g);
  }
}

Test(sgd, a_live_graph_keeps_the_values_it_saved) {
  /* the graph still holds w (matmul saved it for x's gradient, g w^T):
   * stepping w before the loss is released must not change what a second
   * backward reads */
  const char *specs[] = {"flex+autodiff", "ndarray+autodiff", "flex+autodiff(balanced)"};
  for (int k = 0; k < 3; k++) {
    const bext_device *d = dev_of(specs[k]);
    bext_tensor *x = bext_require_grad(ramp(d, BEXT_F32, 8, 6, 1.0, 5));
    bext_tensor *w = bext_require_grad(ramp(d, BEXT_F32, 6, 4, 1.0, 3));
    bext_tensor *loss = bext_sum(bext_relu(bext_matmul(bext_retain(x), bext_retain(w))));
    bext_grads *g1 = bext_backward(loss);
    cr_assert_not_null(g1, "%s: %s", specs[k], bext_last_error());
    bext_tensor *gw = bext_grad(g1, w), *gx1 = bext_grad(g1, x);
    w = bext_sgd_step(w, gw, 0.5);
    cr_assert_not_null(w, "%s: %s", specs[k], bext_last_error());
    cr_expect(bext_is_tracked(w), "%s: a tracked parameter came back untracked", specs[k]);
    bext_grads *g2 = bext_backward(loss);
    cr_assert_not_null(g2, "%s: %s", specs[k], bext_last_error());
    cr_expect_null(bext_grad(g2, w), "%s: the stepped parameter kept the old graph's history", specs[k]);
    bext_tensor *gx2 = bext_grad(g2, x);
    size_t n;
    float *a = host(gx1, &n), *b = host(gx2, &n);
    cr_expect(!memcmp(a, b, n), "%s: stepping w changed the value the graph saved", specs[k]);
    free(a);
    free(b);
    bext_release(gx1);
    bext_release(gx2);
    bext_release(gw);
    bext_grads_free(g1);
    bext_grads_free(g2);
    bext_release(loss);
    bext_release(w);
    bext_release(x);
  }
}

Test(sgd, bad_operands_are_located_errors) {
  const bext_device *f = dev_of("flex"), *n = dev_of("ndarray");
  struct {
    bext_tensor *p, *g;
    const char *says;
  } c[] = {
      {NULL, ramp(f, BEXT_F32, 2, 2, 1, 3), "the parameter is NULL"},
      {ramp(f, BEXT_F32, 2, 2, 1, 3), NULL, "bext_grad gives NULL"},
      {ramp(f, BEXT_F32, 2, 2, 1, 3), ramp(n, BEXT_F32, 2, 2, 1, 3), "its gradient on ndarray"},
      {ramp(f, BEXT_F32, 2, 2, 1, 3), ramp(f, BEXT_F32, 2, 3, 1, 3), "does not match the parameter"},
      {ramp(f, BEXT_F32, 2, 2, 1, 3), ramp(f, BEXT_F64, 2, 2, 1, 3), "does not match the parameter"},
      {ramp(f, BEXT_I32, 2, 2, 1, 3), ramp(f, BEXT_I32, 2, 2, 1, 3), "is not a float tensor"},
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    cr_expect_null(bext_sgd_step(c[i].p, c[i].g, 0.1), "case %zu succeeded", i);
    const char *e = bext_last_error();
    cr_expect(e && strstr(e, "bext_sgd_step") && strstr(e, c[i].says), "case %zu: error '%s' lacks '%s'", i,
              e ? e : "(none)", c[i].says);
    bext_release(c[i].g);
  }
}
