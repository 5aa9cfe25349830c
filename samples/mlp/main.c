/* mlp — a small network trained with the +autodiff decorator: a two-layer
 * MLP (2 -> 32 -> 1, tanh, f32) learns the smooth surface
 * y = sin(pi x0) cos(pi x1 / 2) on a 16 x 16 grid of [-1, 1]^2 by full-batch
 * gradient descent written with core ops only:
 *
 *   loss = mean((tanh(x @ w1 + b1) @ w2 + b2 - y)^2)
 *   grads = bext_backward(loss)
 *   w = bext_sgd_step(w, bext_grad(grads, w), lr)    (w - lr * grad, in place)
 *
 * It prints the loss every 200 steps and exits 1 unless the final loss is
 * below LOSS_BOUND (ctest and `make demo` run it).  Usage: mlp [DEVICE],
 * default flex+autodiff (any device whose outermost layer is +autodiff).
 *
 * Everything is deterministic: the data come from a formula and the
 * initial weights from bext_random_normal with fixed seeds (the same
 * numbers on every backend), so the trajectory is the same on every run
 * up to the last bits of the backend's float arithmetic. */
#include <math.h>
#include <stdio.h>

#include <bext/bext.h>

enum { GRID = 16, N = GRID * GRID, HIDDEN = 32, STEPS = 2000, EVERY = 200 };
static const double LR = 0.1;
/* The bound.  The target's mean square (the loss of predicting 0) is 0.22
 * on this grid, and the untrained network starts near 0.8.  These 2000
 * steps bring the loss to about 2.3e-3: it passes 0.01 near step 700 and
 * falls smoothly after (lr 0.1 is half the rate where plain SGD starts to
 * overshoot here).  0.01, under 5% of the target's mean square, is thus
 * met with a 4x margin, yet out of reach for a model whose hidden layer
 * does not learn: the best affine fit of this surface on the grid leaves
 * a loss of 0.139. */
static const double LOSS_BOUND = 0.01;

static int fail(const char *what) {
  fprintf(stderr, "mlp: %s: %s\n", what, bext_last_error());
  return 1;
}

/* The model's parameters: each a tracked leaf, replaced every step. */
enum { W1, B1, W2, B2, NPARAM };
static const char *const PARAM_NAME[NPARAM] = {"w1", "b1", "w2", "b2"};

/* mean((tanh(x @ w1 + b1) @ w2 + b2 - y)^2).  BORROWS everything. */
static bext_tensor *loss_of(bext_tensor *x, bext_tensor *y, bext_tensor *const *p) {
  bext_tensor *h = bext_tanh(bext_add(bext_matmul(bext_retain(x), bext_retain(p[W1])), bext_retain(p[B1])));
  bext_tensor *out = bext_add(bext_matmul(h, bext_retain(p[W2])), bext_retain(p[B2]));
  bext_tensor *err = bext_sub(out, bext_retain(y));
  return bext_mean(bext_mul(bext_retain(err), err));
}

int main(int argc, char **argv) {
  const char *spec = argc > 1 ? argv[1] : "flex+autodiff";
  const bext_device *dev = bext_device_get(spec);
  if (!dev || !bext_device_available(dev)) return fail(spec);

  /* the data set: a grid of inputs and the surface's values (constants) */
  static float xs[N * 2], ys[N];
  for (int i = 0; i < GRID; i++)
    for (int j = 0; j < GRID; j++) {
      int k = i * GRID + j;
      xs[2 * k] = -1.0f + 2.0f * (float)i / (GRID - 1);
      xs[2 * k + 1] = -1.0f + 2.0f * (float)j / (GRID - 1);
      ys[k] = (float)(sin(M_PI * xs[2 * k]) * cos(M_PI * xs[2 * k + 1] / 2));
    }
  bext_tensor *x = bext_from_data(xs, BEXT_F32, (int64_t[]){N, 2}, 2, dev);
  bext_tensor *y = bext_from_data(ys, BEXT_F32, (int64_t[]){N, 1}, 2, dev);
  if (!x || !y) return fail("data");

  /* parameters: seeded normal weights (std 1 for the 2 inputs, which lie
   * in [-1, 1]; 1/sqrt(HIDDEN) for the output layer), zero biases */
  bext_tensor *p[NPARAM];
  p[W1] = bext_random_normal((int64_t[]){2, HIDDEN}, 2, 0, 1.0, 1, BEXT_F32, dev);
  p[B1] = bext_zeros((int64_t[]){HIDDEN}, 1, BEXT_F32, dev);
  p[W2] = bext_random_normal((int64_t[]){HIDDEN, 1}, 2, 0, 1 / sqrt(HIDDEN), 2, BEXT_F32, dev);
  p[B2] = bext_zeros((int64_t[]){1}, 1, BEXT_F32, dev);
  for (int i = 0; i < NPARAM; i++)
    if (!(p[i] = bext_require_grad(p[i]))) return fail(PARAM_NAME[i]);

  printf("mlp: 2 -> %d -> 1 (tanh), %d points, plain SGD (lr %g), on %s\n", HIDDEN, N, LR,
         bext_device_name(dev));
  float first = 0, last = 0;
  for (int step = 0; step <= STEPS; step++) {
    bext_tensor *loss = loss_of(x, y, p);
    if (!loss || !bext_read(loss, &last, sizeof last)) return fail("forward");
    if (step == 0) first = last;
    if (step % EVERY == 0) printf("step %4d  loss %.6f\n", step, (double)last);
    if (step == STEPS) {
      bext_release(loss);
      break;
    }
    bext_grads *g = bext_backward(loss);
    if (!g) return fail("backward");
    /* the old graph dies with `loss` (g keeps the gradients), so each
     * parameter is held once and bext_sgd_step updates it in place: one
     * pass, p - LR * grad, and the result is the next step's leaf */
    bext_release(loss);
    for (int i = 0; i < NPARAM; i++) {
      bext_tensor *gi = bext_grad(g, p[i]);
      if (!gi) return fail(PARAM_NAME[i]);
      p[i] = bext_sgd_step(p[i], gi, LR);
      bext_release(gi);
      if (!p[i]) return fail("update");
    }
    bext_grads_free(g);
  }

  /* a few predictions next to their targets (no graph needed: detach) */
  float pred[N];
  bext_tensor *h = bext_tanh(bext_add(bext_matmul(bext_retain(x), bext_detach(bext_retain(p[W1]))),
                                      bext_detach(bext_retain(p[B1]))));
  bext_tensor *out = bext_add(bext_matmul(h, bext_detach(bext_retain(p[W2]))), bext_detach(bext_retain(p[B2])));
  if (!out || bext_is_tracked(out) || !bext_read(out, pred, sizeof pred)) return fail("predict");
  printf("x0      x1      target   model\n");
  for (int k = 0; k < N; k += 43)
    printf("%6.3f  %6.3f  %7.4f  %7.4f\n", (double)xs[2 * k], (double)xs[2 * k + 1], (double)ys[k],
           (double)pred[k]);

  bext_release(out);
  for (int i = 0; i < NPARAM; i++) bext_release(p[i]);
  bext_release(y);
  bext_release(x);
  bool ok = last < LOSS_BOUND;
  printf("loss %.6f -> %.6f after %d steps: %s (bound %g)\n", (double)first, (double)last, STEPS,
         ok ? "below the bound" : "NOT below the bound", LOSS_BOUND);
  return ok ? 0 : 1;
}
