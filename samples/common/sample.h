/* sample.h — small helpers shared by the extension samples' drivers:
 * parse a device, build a tensor from floats, print a tensor, and fail
 * loudly (exit 1 with bext_last_error()) so ctest and `make demo` notice.
 * Header-only: each sample stays one target with no extra library. */
#ifndef BEXT_SAMPLE_H
#define BEXT_SAMPLE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <bext/bext.h>

/* The devices every sample runs on, in the order they are shown.  The
 * suite builds each sample a second time with SAMPLE_LAYER defined (to
 * "count", tests/decorator): the same program then runs every call
 * through that test decorator layer ("flex+count"). */
#ifdef SAMPLE_LAYER
#define SAMPLE_DEV(s) s "+" SAMPLE_LAYER
#else
#define SAMPLE_DEV(s) s
#endif
static const char *const sample_devices[] = { SAMPLE_DEV("flex"), SAMPLE_DEV("ndarray") };
#define SAMPLE_NDEVICES 2

static inline void sample_die(const char *what) {
  fprintf(stderr, "sample: %s failed: %s\n", what, bext_last_error());
  exit(1);
}

static inline const bext_device *sample_device(const char *spec) {
  const bext_device *d = bext_device_get(spec);
  if (!d) sample_die(spec);
  return d;
}

/* A new f32 tensor of the given shape holding vals (row-major). */
static inline bext_tensor *sample_tensor(const float *vals, const int64_t *shape, int rank,
                                         const char *device) {
  bext_tensor *t = bext_from_data(vals, BEXT_F32, shape, rank, sample_device(device));
  if (!t) sample_die("bext_from_data");
  return t;
}

/* Prints "shape [a, b] on DEV: [v, v, ...]" (row-major, 4 decimals) and
 * copies the values into out (at most cap of them).  BORROWS t. */
static inline int64_t sample_print(const char *label, const bext_tensor *t, float *out, int64_t cap) {
  int64_t n = bext_numel(t);
  if (n > cap) sample_die("sample_print: tensor too large for the buffer");
  if (!bext_read(t, out, (size_t)n * sizeof *out)) sample_die("bext_read");
  const char *dev = bext_device_name(bext_device_of(t));
  printf("%s: shape [", label);
  for (int i = 0; i < bext_rank(t); i++) printf("%s%lld", i ? ", " : "", (long long)bext_shape(t)[i]);
  printf("] on %s: [", dev);
  for (int64_t i = 0; i < n; i++) printf("%s%.4f", i ? ", " : "", (double)out[i]);
  printf("]\n");
  return n;
}

/* Exits 1 unless |got - want| <= tol for every element, naming the first
 * mismatch: the drivers recompute each result independently. */
static inline void sample_expect(const char *what, const float *got, const float *want, int64_t n,
                                 double tol) {
  for (int64_t i = 0; i < n; i++) {
    if (!(fabs((double)got[i] - (double)want[i]) <= tol)) {
      fprintf(stderr, "sample: %s: element %lld is %.6f, expected %.6f\n", what, (long long)i,
              (double)got[i], (double)want[i]);
      exit(1);
    }
  }
}

#endif
