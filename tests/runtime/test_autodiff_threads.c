/* test_autodiff_threads.c — the autodiff graph across threads (issue 8,
 * "thread-safe across tensors used on several threads"): tracked tensors
 * made on one thread (leaves and an interior node) are used by ops on four
 * threads at once, each building its own loss from them and running
 * backward over the shared nodes, and each thread's gradients must equal
 * the same computation done alone, bit for bit; graphs built on one
 * thread are run and released on another, with or without backward; two
 * graphs built on two threads at once and merged give the same gradient
 * bits as when built one after the other, in either order.  On
 * none and balanced devices both (balanced recomputes through the shared
 * nodes).  Runs under ThreadSanitizer (make tsan), which must see no
 * race. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <bext/bext.h>

#define THREADS 4
#define ROUNDS 6
#define IN 8
#define HID 16
#define BATCH 4

/* What every thread shares: two leaves and one interior node of theirs,
 * all made by the main thread. */
struct shared {
  const bext_device *dev;
  bext_tensor *w, *b, *h;   /* h = sin(w) * 0.5: a tracked interior node */
};

/* Thread k's loss: its own constant input through the shared tensors.
 * Borrows s's tensors (takes its own references). */
static bext_tensor *loss_of(const struct shared *s, int k) {
  float xv[BATCH * IN];
  for (int i = 0; i < BATCH * IN; i++) xv[i] = 0.05f * (float)((i * (k + 3)) % 17) - 0.4f;
  bext_tensor *x = bext_from_data(xv, BEXT_F32, (int64_t[]){BATCH, IN}, 2, s->dev);
  bext_tensor *z = bext_add(bext_matmul(x, bext_retain(s->h)), bext_retain(s->b));
  z = bext_mul_scalar(bext_tanh(bext_add(z, bext_matmul(bext_ones((int64_t[]){BATCH, IN}, 2, BEXT_F32, s->dev),
                                                         bext_retain(s->w)))),
                      (double)(k + 1));
  return bext_mean(bext_mul(bext_exp(bext_retain(z)), z));
}

/* The gradients of thread k's loss in w and b (IN*HID + HID floats). */
static bool grads_of(const struct shared *s, int k, float *out) {
  bext_tensor *l = loss_of(s, k);
  bext_grads *g = l ? bext_backward(l) : NULL;
  bext_tensor *gw = g ? bext_grad(g, s->w) : NULL, *gb = g ? bext_grad(g, s->b) : NULL;
  bool ok = gw && gb && bext_read(gw, out, IN * HID * sizeof *out) && bext_read(gb, out + IN * HID, HID * sizeof *out);
  bext_release(gw);
  bext_release(gb);
  bext_grads_free(g);
  bext_release(l);
  return ok;
}

struct worker {
  const struct shared *s;
  int k;
  const float *want;        /* the same loss's gradients computed alone */
  int bad;
};

static void *worker_run(void *arg) {
  struct worker *w = arg;
  float got[IN * HID + HID];
  for (int r = 0; r < ROUNDS; r++) {
    if (!grads_of(w->s, w->k, got) || memcmp(got, w->want, sizeof got)) w->bad++;
  }
  return NULL;
}

static void shared_make(struct shared *s, const char *spec) {
  s->dev = bext_device_get(spec);
  cr_assert(s->dev && bext_device_available(s->dev), "%s: %s", spec, bext_last_error());
  s->w = bext_require_grad(bext_random_normal((int64_t[]){IN, HID}, 2, 0, 0.5, 3, BEXT_F32, s->dev));
  s->b = bext_require_grad(bext_random_normal((int64_t[]){HID}, 1, 0, 0.5, 4, BEXT_F32, s->dev));
  s->h = bext_mul_scalar(bext_sin(bext_retain(s->w)), 0.5);
  cr_assert(s->w && s->b && s->h, "%s", bext_last_error());
}

static void shared_free(struct shared *s) {
  bext_release(s->h);
  bext_release(s->b);
  bext_release(s->w);
}

static void shared_leaves_on_four_threads(const char *spec) {
  struct shared s;
  shared_make(&s, spec);
  static float want[THREADS][IN * HID + HID];
  for (int k = 0; k < THREADS; k++) cr_assert(grads_of(&s, k, want[k]), "%s: %s", spec, bext_last_error());
  pthread_t th[THREADS];
  struct worker w[THREADS];
  for (int k = 0; k < THREADS; k++) {
    w[k] = (struct worker){&s, k, want[k], 0};
    cr_assert_eq(pthread_create(&th[k], NULL, worker_run, &w[k]), 0);
  }
  for (int k = 0; k < THREADS; k++) pthread_join(th[k], NULL);
  for (int k = 0; k < THREADS; k++)
    cr_expect_eq(w[k].bad, 0, "%s: thread %d got %d wrong or failed gradients of %d", spec, k, w[k].bad, ROUNDS);
  shared_free(&s);
}

Test(autodiff_threads, shared_tracked_tensors_on_four_threads) { shared_leaves_on_four_threads("flex+autodiff"); }
Test(autodiff_threads, shared_tracked_tensors_on_four_threads_balanced) {
  shared_leaves_on_four_threads("flex+autodiff(balanced)");
}

/* A graph built here is handed over whole: the other thread runs
 * backward (or not) and drops every tensor of it. */
struct handoff {
  bext_tensor *w, *loss;
  bool backward;
  float grad0;
  bool ok;
};

static void *finish_elsewhere(void *arg) {
  struct handoff *h = arg;
  h->ok = true;
  if (h->backward) {
    bext_grads *g = bext_backward(h->loss);
    bext_tensor *gw = g ? bext_grad(g, h->w) : NULL;
    float v[IN * HID];
    h->ok = gw && bext_read(gw, v, sizeof v);
    h->grad0 = h->ok ? v[0] : 0.0f;
    bext_release(gw);
    bext_grads_free(g);
  }
  bext_release(h->loss);
  bext_release(h->w);
  return NULL;
}

Test(autodiff_threads, a_graph_built_here_is_released_there) {
  const char *specs[] = {"flex+autodiff", "flex+autodiff(balanced)", "ndarray+autodiff(balanced)"};
  for (int i = 0; i < 3; i++) {
    for (int bw = 0; bw < 2; bw++) {
      struct shared s;
      shared_make(&s, specs[i]);
      float want[IN * HID + HID];
      cr_assert(grads_of(&s, 1, want), "%s", bext_last_error());
      struct handoff h = {bext_retain(s.w), loss_of(&s, 1), bw == 1, 0.0f, false};
      cr_assert_not_null(h.loss, "%s", bext_last_error());
      shared_free(&s);  /* the other thread now holds the only references */
      pthread_t th;
      cr_assert_eq(pthread_create(&th, NULL, finish_elsewhere, &h), 0);
      pthread_join(th, NULL);
      cr_expect(h.ok, "%s: backward on another thread failed: %s", specs[i], bext_last_error());
      if (bw) cr_expect(h.grad0 == want[0], "%s: %g on the other thread, %g here", specs[i], h.grad0, want[0]);
    }
  }
}

/* Two graphs over one shared leaf, built at once on two threads (their
 * nodes interleave differently every round) and merged here: backward's
 * order comes from the merged graph's shape, so the leaf's gradient, a
 * sum of four terms, has the same bits as when the graphs are built one
 * after the other, in either order. */
#define MERGE_N 256
struct branch {
  bext_tensor *w;           /* borrowed */
  double k;
  bext_tensor *out;
};
static void *branch_run(void *arg) {
  struct branch *b = arg;
  bext_tensor *s = bext_sin(bext_retain(b->w));
  b->out = bext_sum(bext_mul(bext_exp(bext_mul_scalar(bext_retain(b->w), b->k)), s));
  return NULL;
}
/* w's gradient of branch(k0) + branch(k1): built on two threads when
 * threaded, else in order (swap: the second branch first). */
static bool merged_grad(bext_tensor *w, bool threaded, bool swap, float *out) {
  struct branch br[2] = {{w, 1.7, NULL}, {w, -0.3, NULL}};
  if (threaded) {
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
      if (pthread_create(&th[i], NULL, branch_run, &br[i])) return false;
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  } else {
    branch_run(&br[swap ? 1 : 0]);
    branch_run(&br[swap ? 0 : 1]);
  }
  bext_tensor *l = br[0].out && br[1].out ? bext_add(br[0].out, br[1].out) : NULL;
  if (!l) {
    bext_release(br[0].out);
    bext_release(br[1].out);
    return false;
  }
  bext_grads *g = bext_backward(l);
  bext_tensor *gw = g ? bext_grad(g, w) : NULL;
  bool ok = gw && bext_read(gw, out, MERGE_N * sizeof *out);
  bext_release(gw);
  bext_grads_free(g);
  bext_release(l);
  return ok;
}

Test(autodiff_threads, graphs_built_on_two_threads_merge_deterministically) {
  const char *specs[] = {"flex+autodiff", "flex+autodiff(balanced)"};
  for (int i = 0; i < 2; i++) {
    const bext_device *d = bext_device_get(specs[i]);
    cr_assert(d && bext_device_available(d), "%s: %s", specs[i], bext_last_error());
    bext_tensor *w = bext_require_grad(bext_random_normal((int64_t[]){MERGE_N}, 1, 0, 1, 41, BEXT_F32, d));
    static float want[MERGE_N], other[MERGE_N], got[MERGE_N];
    cr_assert(merged_grad(w, false, false, want), "%s: %s", specs[i], bext_last_error());
    cr_assert(merged_grad(w, false, true, other), "%s: %s", specs[i], bext_last_error());
    cr_expect(!memcmp(want, other, sizeof want), "%s: building the second graph first changed the gradient",
              specs[i]);
    int bad = 0;
    for (int r = 0; r < 4 * ROUNDS; r++) {
      cr_assert(merged_grad(w, true, false, got), "%s: %s", specs[i], bext_last_error());
      bad += memcmp(want, got, sizeof want) != 0;
    }
    cr_expect_eq(bad, 0, "%s: %d of %d merges of graphs built on two threads differ", specs[i], bad, 4 * ROUNDS);
    bext_release(w);
  }
}
