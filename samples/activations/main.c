/* main.c — driver of samples/activations: Activations::gelu has only a
 * default body (no C implementation anywhere in this sample), yet it runs
 * on Flex and on NdArray.  The driver prints the results and checks them
 * against libm's erf. */
#include <stdio.h>

#include "../common/sample.h"
#include "activations.h"

int main(void) {
  enum { N = 7 };
  const float in[N] = { -3, -1.5f, -0.5f, 0, 0.5f, 1.5f, 3 };
  float want[N], got[N];
  for (int i = 0; i < N; i++) {
    double x = in[i];
    want[i] = (float)(x * 0.5 * (1.0 + erf(x / 1.41421356)));
  }
  for (int d = 0; d < SAMPLE_NDEVICES; d++) {
    const char *dev = sample_devices[d];
    printf("== %s\n", dev);
    bext_tensor *x = sample_tensor(in, (const int64_t[]){ N }, 1, dev);
    sample_print("input", x, got, N);
    bext_tensor *y = activations_gelu(x);   /* consumes x */
    if (!y) sample_die("activations_gelu");
    sample_print("gelu (default body)", y, got, N);
    sample_expect("gelu", got, want, N, 1e-5);
    bext_release(y);
  }
  return 0;
}
