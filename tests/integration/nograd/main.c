/* main.c — supplies the Flex implementation of NogradOps::halve and
 * calls it; no `_autodiff`, so linking must fail (outside_test.sh). */
#include "nograd.h"

bext_tensor *nograd_ops_halve_flex(bext_tensor *x) { return bext_mul_scalar(x, 0.5); }

int main(void) {
  const float in[2] = { 1, 2 };
  bext_tensor *y = nograd_ops_halve(bext_from_data(in, BEXT_F32, (const int64_t[]){ 2 }, 1, bext_device_get("flex")));
  bext_release(y);
  return 0;
}
