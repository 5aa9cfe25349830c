/* main.c — driver of samples/counted: Counting::counted returns a Counted
 * struct (a tensor and a `count`) on Flex and on NdArray; the driver
 * prints both fields, checks them against values computed here, releases
 * the struct with the generated counted_release(), and shows the Fusion
 * `meta` function's answer for the same input spec. */
#include <stdio.h>
#include <string.h>

#include "../common/sample.h"
#include "counted.h"

int main(void) {
  enum { N = 5 };
  const float in[N] = { -2.5f, -1, 0, 1.5f, 3 };
  float want[N], got[N];
  for (int i = 0; i < N; i++) want[i] = fabsf(in[i]);

  for (int d = 0; d < SAMPLE_NDEVICES; d++) {
    const char *dev = sample_devices[d];
    printf("== %s\n", dev);
    bext_tensor *x = sample_tensor(in, (const int64_t[]){ N }, 1, dev);
    sample_print("input", x, got, N);
    Counted c;
    if (!counting_counted(x, &c)) sample_die("counting_counted");   /* consumes x */
    sample_print("counted.tensor", c.tensor, got, N);
    printf("counted.count: %zu\n", c.count);
    sample_expect("counted.tensor", got, want, N, 0.0);
    if (c.count != N) {
      fprintf(stderr, "sample: count is %zu, expected %d\n", c.count, N);
      return 1;
    }
    counted_release(&c);
  }

  /* The lazy (Fusion) description of the same call, from the spec only. */
  bext_meta_spec spec = { .shape = { .len = 1, .dims = { N } }, .dtype = BEXT_F32 };
  CountedMetadata m;
  bext_meta_error err;
  memset(&err, 0, sizeof err);
  if (!counting_counted_meta(&spec, &m, &err)) {
    fprintf(stderr, "sample: meta function failed: %s\n", err.msg);
    return 1;
  }
  printf("== fusion metadata\ncounted([%d] f32) -> tensor [%llu] %s, count %zu\n", N,
         (unsigned long long)m.tensor.shape.dims[0], bext_dtype_name(m.tensor.dtype), m.count);
  if (m.count != N || m.tensor.shape.len != 1 || m.tensor.shape.dims[0] != N) {
    fprintf(stderr, "sample: meta function disagrees with the backends\n");
    return 1;
  }
  return 0;
}
