/* e2e_grads.c — gradients of extension methods through generated code
 * (ext/grads.bext), all three autodiff routes (docs/codegen.md
 * "Extension calls on `+autodiff` devices"):
 *   - Grads::cubic     a hand-written `_autodiff` (grads_impl.c, custom node);
 *   - Grads::smooth    a default body, differentiated through its ops;
 *   - Grads::mixed, Grads::my_matmul   generated from `#[backward]`.
 * Each gradient is checked against central finite differences in f64
 * (test_autodiff.c's gradcheck) on flex+autodiff, ndarray+autodiff and
 * flex+autodiff(balanced): the
 * loss is sum(f(inputs) * r) with a fixed r, so every output element
 * weighs differently.  Also: the strategy-mismatch error of the inputs'
 * contexts, a formula that leaves a broadcast unreduced, and no leak
 * (runtime blocks counted through the allocation hook, as in e2e_route.c). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "grads.h"

extern const char *grads_last_impl;
extern int grads_cubic_autodiff_calls;

static long long g_live_blocks;

static void *counting_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  (void)osize;
  if (nsize == 0) {
    if (ptr) g_live_blocks--;
    free(ptr);
    return NULL;
  }
  void *p = realloc(ptr, nsize);
  if (p && !ptr) g_live_blocks++;
  return p;
}

#define GR_TEST(suite, name)                                                       \
  static void suite##_##name##_body(void);                                         \
  Test(suite, name) {                                                              \
    bext_set_allocator(counting_alloc, NULL);                                      \
    g_live_blocks = 0;                                                             \
    suite##_##name##_body();                                                       \
    bext_set_allocator(counting_alloc, NULL);                                      \
    cr_assert_eq(g_live_blocks, 0, "leaked %lld runtime blocks", g_live_blocks);   \
  }                                                                                \
  static void suite##_##name##_body(void)

/* both strategies (grads.bext does not list Fusion: its stacks panic) */
static const char *const DEVS[] = {"flex+autodiff", "ndarray+autodiff", "flex+autodiff(balanced)"};
#define NDEVS ((int)(sizeof DEVS / sizeof DEVS[0]))

/* One method under test: its inputs' shapes and a call of the entry point
 * that takes NEW references of its inputs (in[i]) and gives its output. */
#define MAX_IN 2
typedef struct gcase {
  const char *name;
  int n_in;
  int rank[MAX_IN];
  int64_t shape[MAX_IN][2];
  bext_tensor *(*call)(bext_tensor **in);
} gcase;

static bext_tensor *call_cubic(bext_tensor **in) {
  bext_tensor *y = grads_cubic(in[0], in[1]);   /* w borrowed */
  bext_release(in[1]);
  return y;
}
static bext_tensor *call_smooth(bext_tensor **in) { return grads_smooth(in[0], 1.5f); }
static bext_tensor *call_mixed(bext_tensor **in) {
  bext_tensor *y = grads_mixed(in[0], in[1], 0.75f);
  bext_release(in[1]);
  return y;
}
static bext_tensor *call_matmul(bext_tensor **in) { return grads_my_matmul(in[0], in[1]); }

static const gcase CASES[] = {
    {"cubic (hand-written _autodiff)", 2, {2, 2}, {{2, 3}, {2, 3}}, call_cubic},
    {"smooth (default body)", 1, {2}, {{2, 3}}, call_smooth},
    {"mixed (#[backward])", 2, {1, 1}, {{5}, {5}}, call_mixed},
    {"my_matmul (#[backward])", 2, {2, 2}, {{2, 3}, {3, 4}}, call_matmul},
};

static int64_t numel(int rank, const int64_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++) n *= shape[i];
  return n;
}

/* Deterministic, varied values in about [-1.2, 1.2]. */
static void fill(double *v, int64_t n, int seed) {
  for (int64_t i = 0; i < n; i++) v[i] = sin(1.7 * (double)(i + 1) + 0.9 * seed) * 1.2;
}

/* sum(f(vals) * r) computed on dev with untracked inputs. */
static double loss_at(const gcase *c, const bext_device *dev, double *const *vals) {
  bext_tensor *in[MAX_IN];
  for (int k = 0; k < c->n_in; k++)
    cr_assert((in[k] = bext_from_data(vals[k], BEXT_F64, c->shape[k], c->rank[k], dev)), "%s", bext_last_error());
  bext_tensor *y = c->call(in);
  cr_assert_not_null(y, "%s: %s", c->name, bext_last_error());
  int64_t n = bext_numel(y);
  double r[64];
  cr_assert(n <= 64);
  fill(r, n, 7);
  bext_tensor *rt = bext_from_data(r, BEXT_F64, bext_shape(y), bext_rank(y), dev);
  bext_tensor *l = bext_sum(bext_mul(y, rt));
  double v = NAN;
  cr_assert(l && bext_read(l, &v, sizeof v), "%s", bext_last_error());
  bext_release(l);
  return v;
}

static void gradcheck(const gcase *c, const char *devname) {
  const bext_device *dev = bext_device_get(devname);
  cr_assert_not_null(dev, "%s", bext_last_error());
  double buf[MAX_IN][64], *vals[MAX_IN];
  bext_tensor *x[MAX_IN], *in[MAX_IN];
  for (int k = 0; k < c->n_in; k++) {
    int64_t n = numel(c->rank[k], c->shape[k]);
    fill(buf[k], n, k);
    vals[k] = buf[k];
    x[k] = bext_require_grad(bext_from_data(buf[k], BEXT_F64, c->shape[k], c->rank[k], dev));
    cr_assert_not_null(x[k], "%s", bext_last_error());
    in[k] = bext_retain(x[k]);
  }
  bext_tensor *y = c->call(in);
  cr_assert_not_null(y, "%s on %s: %s", c->name, devname, bext_last_error());
  cr_assert(bext_is_tracked(y), "%s on %s: the output is not tracked", c->name, devname);
  double r[64];
  fill(r, bext_numel(y), 7);
  bext_tensor *l = bext_sum(bext_mul(y, bext_from_data(r, BEXT_F64, bext_shape(y), bext_rank(y), dev)));
  bext_grads *g = l ? bext_backward(l) : NULL;
  cr_assert_not_null(g, "%s on %s: %s", c->name, devname, bext_last_error());
  const double h = 1e-6;
  for (int k = 0; k < c->n_in; k++) {
    bext_tensor *gk = bext_grad(g, x[k]);
    cr_assert_not_null(gk, "%s on %s: no gradient for input %d", c->name, devname, k);
    int64_t n = numel(c->rank[k], c->shape[k]);
    double an[64];
    cr_assert(bext_read(gk, an, (size_t)n * sizeof *an));
    for (int64_t i = 0; i < n; i++) {
      double keep = buf[k][i];
      buf[k][i] = keep + h;
      double lp = loss_at(c, dev, vals);
      buf[k][i] = keep - h;
      double lm = loss_at(c, dev, vals);
      buf[k][i] = keep;
      double num = (lp - lm) / (2 * h);
      cr_expect(fabs(an[i] - num) <= 1e-6 * (1 + fabs(num)), "%s on %s: d/d input %d [%lld] = %.10g, finite differences %.10g",
                c->name, devname, k, (long long)i, an[i], num);
    }
    bext_release(gk);
  }
  bext_grads_free(g);
  bext_release(l);
  for (int k = 0; k < c->n_in; k++) bext_release(x[k]);
}

GR_TEST(grads, hand_written_autodiff) {
  for (int d = 0; d < NDEVS; d++) {
    int before = grads_cubic_autodiff_calls;
    gradcheck(&CASES[0], DEVS[d]);
    cr_expect_gt(grads_cubic_autodiff_calls, before, "the hand-written _autodiff did not run");
  }
}

GR_TEST(grads, default_body) {
  for (int d = 0; d < NDEVS; d++) gradcheck(&CASES[1], DEVS[d]);
}

GR_TEST(grads, backward_formulas) {
  for (int d = 0; d < NDEVS; d++) {
    grads_last_impl = NULL;
    gradcheck(&CASES[2], DEVS[d]);
    /* the forward ran the inner device's own kernel */
    cr_expect(grads_last_impl && !strncmp(grads_last_impl, DEVS[d], strlen(grads_last_impl)), "%s: ran %s", DEVS[d],
              grads_last_impl ? grads_last_impl : "(nothing)");
    gradcheck(&CASES[3], DEVS[d]);
  }
}

/* Untracked inputs through the generated implementation: the kernel's
 * result, untracked, no node. */
GR_TEST(grads, backward_formulas_untracked_inputs_give_a_constant) {
  const bext_device *dev = bext_device_get("flex+autodiff");
  double v[3] = {0.5, -1, 2};
  bext_tensor *x = bext_from_data(v, BEXT_F64, (int64_t[]){3}, 1, dev);
  bext_tensor *w = bext_from_data(v, BEXT_F64, (int64_t[]){3}, 1, dev);
  bext_tensor *y = grads_mixed(x, w, 2.0f);
  cr_assert_not_null(y, "%s", bext_last_error());
  cr_expect(!bext_is_tracked(y));
  double o[3];
  cr_assert(bext_read(y, o, sizeof o));
  for (int i = 0; i < 3; i++) cr_expect(fabs(o[i] - (sin(v[i]) * v[i] * 2 + exp(v[i]))) < 1e-12);
  bext_release(y);
  bext_release(w);
}

/* Tracked inputs on two checkpointing strategies of one stack (they route
 * together): an error naming the method, the arguments and strategies;
 * an untracked input on another strategy is a constant and fine. */
GR_TEST(grads, tracked_inputs_on_two_strategies_are_an_error) {
  double v[3] = {0.5, -1, 2};
  const bext_device *none = bext_device_get("flex+autodiff"), *bal = bext_device_get("flex+autodiff(balanced)");
  cr_assert(none && bal, "%s", bext_last_error());
  bext_tensor *x = bext_require_grad(bext_from_data(v, BEXT_F64, (int64_t[]){3}, 1, none));
  bext_tensor *w = bext_require_grad(bext_from_data(v, BEXT_F64, (int64_t[]){3}, 1, bal));
  const char *want = "Grads::mixed: tracked inputs must share one checkpointing strategy: `x` is on flex+autodiff "
                     "(strategy none), `w` on flex+autodiff(balanced) (strategy balanced)";
  cr_expect_null(grads_mixed(bext_retain(x), w, 1.0f));
  cr_expect_str_eq(bext_last_error(), want);
  /* every route checks it first: the default body's and the hand-written one's too */
  cr_expect_null(grads_cubic(bext_retain(x), w));
  cr_expect(strstr(bext_last_error(), "Grads::cubic: tracked inputs must share one checkpointing strategy"), "%s",
            bext_last_error());
  bext_tensor *wc = bext_detach(bext_retain(w));
  bext_tensor *y = grads_mixed(bext_retain(x), wc, 1.0f);
  cr_expect_not_null(y, "an untracked input on another strategy: %s", bext_last_error());
  bext_release(y);
  bext_release(wc);
  bext_release(w);
  bext_release(x);
}

/* A formula whose value keeps the output's (broadcast) shape: backward
 * fails with the runtime's error naming the node and the input. */
GR_TEST(grads, unreduced_broadcast_fails_backward_naming_the_node) {
  const bext_device *dev = bext_device_get("ndarray+autodiff");
  double a[6] = {1, 2, 3, 4, 5, 6}, b[3] = {1, 1, 1};
  bext_tensor *x = bext_require_grad(bext_from_data(a, BEXT_F64, (int64_t[]){2, 3}, 2, dev));
  bext_tensor *z = bext_require_grad(bext_from_data(b, BEXT_F64, (int64_t[]){3}, 1, dev));
  bext_tensor *y = grads_add_bcast(bext_retain(x), bext_retain(z));
  cr_assert_not_null(y, "%s", bext_last_error());
  bext_tensor *l = bext_sum(y);
  cr_expect_null(bext_backward(l));
  cr_expect(strstr(bext_last_error(), "custom node 'Grads::add_bcast' gave input 1 a gradient"), "%s",
            bext_last_error());
  bext_release(l);
  bext_release(x);
  bext_release(z);
}
