/* main.c — driver of samples/torch_ext: TorchOps on Flex (C over the core
 * ops) and on LibTorch (ATen through bext/torch.h), both checked against
 * libm: softplus has a per-backend implementation, swish a default body
 * that serves both backends. */
#include <stdio.h>

#include "../common/sample.h"
#include "torch_ext.h"

extern int torch_impl_calls; /* torch_impl.cpp */

int main(void) {
  enum { N = 7 };
  const float in[N] = { -3, -1.5f, -0.5f, 0, 0.5f, 1.5f, 3 };
  float sp[N], sw[N], got[N];
  for (int i = 0; i < N; i++) {
    double x = in[i];
    sp[i] = (float)(log1p(exp(2 * x)) / 2);
    sw[i] = (float)(x / (1 + exp(-x)));
  }
  static const char *const devs[] = { "flex", "libtorch:cpu" };
  for (int d = 0; d < 2; d++) {
    printf("== %s\n", devs[d]);
    bext_tensor *x = sample_tensor(in, (const int64_t[]){ N }, 1, devs[d]);
    sample_print("input", x, got, N);
    bext_tensor *y = torch_ops_softplus(bext_retain(x), 2.0);
    if (!y) sample_die("torch_ops_softplus");
    sample_print(d ? "softplus (at::softplus)" : "softplus (core ops)", y, got, N);
    sample_expect("softplus", got, sp, N, 1e-5);
    bext_release(y);
    y = torch_ops_swish(x);
    if (!y) sample_die("torch_ops_swish");
    sample_print("swish (default body)", y, got, N);
    sample_expect("swish", got, sw, N, 1e-5);
    bext_release(y);
  }
  printf("calls of the ATen implementation: %d\n", torch_impl_calls);
  return 0;
}
