/* main.c — driver of samples/pointwise: calls the generated entry point
 * Pointwise::softplus_scaled on Flex (a C loop over data pointers) and on
 * NdArray (core ops), prints the result and which implementation ran, and
 * checks every element against softplus computed here.  Then the Flex loop
 * on an f64 tensor and on a transposed view (bext_contiguous inside makes
 * it row-major), the error for a dtype the loop does not handle, and the
 * gradient on flex+autodiff and ndarray+autodiff, which bextc generated
 * from the method's #[backward] formula. */
#include <stdio.h>

#include "../common/sample.h"
#include "pointwise.h"

extern const char *pointwise_last_impl;

enum { R = 2, C = 4, N = R * C };
static const float in[N] = { -4, -1.5f, -0.5f, 0, 0.25f, 1, 2.5f, 6 };
static const float beta = 2.0f;

static double reference(double x) { return log(1.0 + exp(beta * x)) / beta; }

/* Runs the entry point on x (consumed), prints and checks against want. */
static void run(const char *label, bext_tensor *x, const float *want) {
  float got[N];
  pointwise_last_impl = NULL;
  bext_tensor *y = pointwise_softplus_scaled(x, beta);
  if (!y) sample_die("pointwise_softplus_scaled");
  if (bext_dtype_of(y) != BEXT_F32) y = bext_cast(y, BEXT_F32);   /* sample_print reads f32 */
  if (!y) sample_die("bext_cast");
  sample_print(label, y, got, N);
  printf("routed to: %s\n", pointwise_last_impl ? pointwise_last_impl : "(nothing)");
  sample_expect(label, got, want, N, 1e-5);
  bext_release(y);
}

int main(void) {
  float want[N], want_t[N], got[N];
  for (int i = 0; i < N; i++) want[i] = (float)reference(in[i]);
  for (int i = 0; i < R; i++)
    for (int j = 0; j < C; j++) want_t[j * R + i] = want[i * C + j];

  for (int d = 0; d < SAMPLE_NDEVICES; d++) {
    const char *dev = sample_devices[d];
    printf("== %s\n", dev);
    bext_tensor *x = sample_tensor(in, (const int64_t[]){ R, C }, 2, dev);
    sample_print("input", x, got, N);
    run("softplus_scaled(x, 2)", x, want);
  }

  printf("== flex, other inputs\n");
  bext_tensor *x = sample_tensor(in, (const int64_t[]){ R, C }, 2, "flex");
  bext_tensor *x64 = bext_cast(bext_retain(x), BEXT_F64);
  if (!x64) sample_die("bext_cast");
  run("f64", x64, want);
  bext_tensor *xt = bext_swap_dims(bext_retain(x), 0, 1);   /* a strided view */
  if (!xt) sample_die("bext_swap_dims");
  run("transposed view", xt, want_t);

  bext_tensor *x16 = bext_cast(x, BEXT_F16);
  if (!x16) sample_die("bext_cast");
  bext_tensor *bad = pointwise_softplus_scaled(x16, beta);
  printf("f16: %s\n", bad ? "unexpected success" : bext_last_error());
  if (bad) return 1;

  /* d/dx sum(softplus_scaled(x, beta)) = sigmoid(beta * x): the forward
   * runs the kernels above, the backward the #[backward] formula. */
  float dwant[N];
  for (int i = 0; i < N; i++) dwant[i] = (float)(1.0 / (1.0 + exp(-beta * in[i])));
  const char *const ad[] = { "flex+autodiff", "ndarray+autodiff" };
  for (int d = 0; d < 2; d++) {
    printf("== %s\n", ad[d]);
    bext_tensor *xg = bext_require_grad(sample_tensor(in, (const int64_t[]){ R, C }, 2, ad[d]));
    pointwise_last_impl = NULL;
    bext_tensor *y = xg ? pointwise_softplus_scaled(bext_retain(xg), beta) : NULL;
    if (!y) sample_die("pointwise_softplus_scaled");
    printf("forward routed to: %s\n", pointwise_last_impl ? pointwise_last_impl : "(nothing)");
    bext_tensor *loss = bext_sum(y);
    bext_grads *g = loss ? bext_backward(loss) : NULL;
    bext_tensor *gx = g ? bext_grad(g, xg) : NULL;
    if (!gx) sample_die("bext_backward");
    sample_print("d loss / d x", gx, got, N);
    sample_expect("gradient", got, dwant, N, 1e-6);
    bext_release(gx);
    bext_grads_free(g);
    bext_release(loss);
    bext_release(xg);
  }
  return 0;
}
