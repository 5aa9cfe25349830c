/* main.c — calls Feat::twice on Flex and prints "features: ok" when the
 * result is right.  Built with and without BEXT_FEATURE_ND by
 * outside_test.sh (mode pkgconfig-uninstalled). */
#include <stdio.h>

#include "feat.h"

int main(void) {
  const float in[3] = { 1, -2, 3 };
  float out[3] = { 0 };
  const bext_device *dev = bext_device_get("flex");
  bext_tensor *y = dev ? feat_twice(bext_from_data(in, BEXT_F32, (const int64_t[]){ 3 }, 1, dev)) : NULL;
  if (!y || !bext_read(y, out, sizeof out)) {
    fprintf(stderr, "features: %s\n", bext_last_error());
    bext_release(y);
    return 1;
  }
  bext_release(y);
  for (int i = 0; i < 3; i++)
    if (out[i] != 2 * in[i]) return 1;
  printf("features: ok\n");
  return 0;
}
