/* main.c — driver of samples/transpose: calls the generated entry point
 * MyExtension::transpose_2d on a Flex and on an NdArray tensor, prints the
 * result and which implementation ran, checks every element against a
 * transpose computed here, then differentiates it on flex+autodiff and
 * ndarray+autodiff (the hand-written `_autodiff` of transpose_impl.c) and
 * shows the Fusion shape function the generator emitted from the
 * #[fusion(shape = ...)] block. */
#include <stdio.h>
#include <string.h>

#include "../common/sample.h"
#include "transpose.h"

extern const char *transpose_last_impl;

int main(void) {
  enum { R = 2, C = 3 };
  const float in[R * C] = { 1, 2, 3, 4, 5, 6 };
  float want[R * C], got[R * C];
  for (int i = 0; i < R; i++)
    for (int j = 0; j < C; j++) want[j * R + i] = in[i * C + j];

  for (int d = 0; d < SAMPLE_NDEVICES; d++) {
    const char *dev = sample_devices[d];
    bext_tensor *x = sample_tensor(in, (const int64_t[]){ R, C }, 2, dev);
    printf("== %s\n", dev);
    sample_print("input", x, got, R * C);
    transpose_last_impl = NULL;
    bext_tensor *y = my_extension_transpose_2d(x);   /* consumes x */
    if (!y) sample_die("my_extension_transpose_2d");
    sample_print("transpose_2d", y, got, R * C);
    printf("routed to: %s\n", transpose_last_impl ? transpose_last_impl : "(nothing)");
    if (bext_rank(y) != 2 || bext_shape(y)[0] != C || bext_shape(y)[1] != R) {
      fprintf(stderr, "sample: wrong output shape\n");
      return 1;
    }
    sample_expect("transpose_2d", got, want, R * C, 0.0);
    bext_release(y);
  }

  /* Gradients: d/dx sum(transpose_2d(x) * w) = transpose(w).  The
   * autodiff devices are used as they are (not through SAMPLE_LAYER). */
  const float w[C * R] = { 1, -1, 2, -2, 3, -3 };
  float gw[R * C];
  for (int i = 0; i < C; i++)
    for (int j = 0; j < R; j++) gw[j * C + i] = w[i * R + j];
  const char *const ad[] = { "flex+autodiff", "ndarray+autodiff" };
  for (int d = 0; d < 2; d++) {
    printf("== %s\n", ad[d]);
    bext_tensor *x = bext_require_grad(sample_tensor(in, (const int64_t[]){ R, C }, 2, ad[d]));
    if (!x) sample_die("bext_require_grad");
    transpose_last_impl = NULL;
    bext_tensor *y = my_extension_transpose_2d(bext_retain(x));
    if (!y) sample_die("my_extension_transpose_2d");
    printf("routed to: %s\n", transpose_last_impl ? transpose_last_impl : "(nothing)");
    bext_tensor *loss = bext_sum(bext_mul(y, sample_tensor(w, (const int64_t[]){ C, R }, 2, ad[d])));
    bext_grads *g = loss ? bext_backward(loss) : NULL;
    bext_tensor *gx = g ? bext_grad(g, x) : NULL;
    if (!gx) sample_die("bext_backward");
    sample_print("d loss / d input", gx, got, R * C);
    sample_expect("gradient", got, gw, R * C, 0.0);
    bext_release(gx);
    bext_grads_free(g);
    bext_release(loss);
    bext_release(x);
  }

  /* What Fusion will use to describe the output without running it. */
  bext_meta_shape s = { .len = 2, .dims = { R, C } }, out;
  bext_meta_error err;
  memset(&err, 0, sizeof err);
  if (!my_extension_transpose_2d_meta_shape(&s, &out, &err)) {
    fprintf(stderr, "sample: shape function failed: %s\n", err.msg);
    return 1;
  }
  printf("== fusion metadata\nshape of transpose_2d([%llu, %llu]) = [%llu, %llu]\n",
         (unsigned long long)s.dims[0], (unsigned long long)s.dims[1],
         (unsigned long long)out.dims[0], (unsigned long long)out.dims[1]);
  if (out.len != 2 || out.dims[0] != C || out.dims[1] != R) {
    fprintf(stderr, "sample: shape function disagrees with the result\n");
    return 1;
  }
  return 0;
}
