/* readme_main.c — main.c of the README's Makefile example (mode
 * readme-make of outside_test.sh): calls MyExt::scaled on Flex (the
 * implementation in readme_impl.c) and MyExt::offset (its default body). */
#include <stdio.h>

#include "my_ext.h"

int main(void) {
  const float in[2] = { 1, 2 };
  float a[2] = { 0 }, b[2] = { 0 };
  const bext_device *dev = bext_device_get("flex");
  if (!dev) return 1;
  bext_tensor *x = bext_from_data(in, BEXT_F32, (const int64_t[]){ 2 }, 1, dev);
  bext_tensor *s = my_ext_scaled(bext_retain(x));
  bext_tensor *o = my_ext_offset(x);
  int ok = s && o && bext_read(s, a, sizeof a) && bext_read(o, b, sizeof b);
  bext_release(s);
  bext_release(o);
  if (!ok) {
    fprintf(stderr, "my_app: %s\n", bext_last_error());
    return 1;
  }
  if (a[0] != 3 || a[1] != 6 || b[0] != 2 || b[1] != 3) return 1;
  printf("my_app: ok\n");
  return 0;
}
