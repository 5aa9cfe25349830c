/* main.c — samples/cube: a chain of core ops on cube:cpu, where every op
 * is a `.bext` kernel from stdlib/cube (embedded in libbext as kernel IR,
 * compiled by the CPU JIT on first use): the GELU tanh chain, a
 * comparison and mask_fill, a cast, flip and cat.  Each result is checked
 * against the same ops on flex.
 *
 *   cube [DEVICE]   (default cube:cpu) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <bext/bext.h>

enum { N = 8 };

/* x * (0.5 + 0.5 tanh(0.79788456 x (1 + 0.044715 x^2))); x borrowed */
static bext_tensor *gelu(bext_tensor *x) {
  bext_tensor *t = bext_mul_scalar(bext_mul(bext_retain(x), bext_retain(x)), 0.044715);
  t = bext_mul_scalar(bext_mul(bext_add_scalar(t, 1.0), bext_retain(x)), 0.79788456);
  return bext_mul(bext_add_scalar(bext_mul_scalar(bext_tanh(t), 0.5), 0.5), bext_retain(x));
}

/* gelu, then negatives set to -1, then as i32 of 100x, then [flip, itself]
 * along the only axis; x borrowed */
static bext_tensor *chain(bext_tensor *x) {
  bext_tensor *g = gelu(x);
  bext_retain(g);
  bext_tensor *m = bext_mask_fill(g, bext_lt_scalar(g, 0.0), -1.0);
  bext_tensor *i = bext_cast(bext_mul_scalar(m, 100.0), BEXT_I32);
  bext_retain(i);
  bext_tensor *both[2] = {bext_flip(i, (int[]){0}, 1), i};
  return bext_cat(both, 2, 0);
}

static void die(const char *what) {
  fprintf(stderr, "cube sample: %s failed: %s\n", what, bext_last_error());
  exit(1);
}

int main(int argc, char **argv) {
  const char *spec = argc > 1 ? argv[1] : "cube:cpu";
  const bext_device *d = bext_device_get(spec), *flex = bext_device_get("flex");
  if (!d || !flex) die("bext_device_get");
  float v[N] = {-3, -1.5f, -0.5f, 0, 0.25f, 1, 2, 4}, g[N], gf[N];
  int32_t got[2 * N], want[2 * N];
  bext_tensor *x = bext_from_data(v, BEXT_F32, (int64_t[]){N}, 1, d);
  bext_tensor *xf = bext_from_data(v, BEXT_F32, (int64_t[]){N}, 1, flex);
  if (!x || !xf) die("bext_from_data");
  bext_tensor *y = gelu(x), *yf = gelu(xf);
  if (!y || !yf || !bext_read(y, g, sizeof g) || !bext_read(yf, gf, sizeof gf)) die("gelu");
  printf("== core ops on %s: each a stdlib .bext kernel\n", spec);
  printf("gelu (9 ops):");
  for (int i = 0; i < N; i++) printf(" %.4f", g[i]);
  printf("\n");
  for (int i = 0; i < N; i++)
    if (!(fabsf(g[i] - gf[i]) <= 1e-6f * (1 + fabsf(gf[i])))) {
      fprintf(stderr, "cube sample: gelu element %d is %g, flex says %g\n", i, g[i], gf[i]);
      return 1;
    }
  bext_tensor *c = chain(x), *cf = chain(xf);
  if (!c || !cf || !bext_read(c, got, sizeof got) || !bext_read(cf, want, sizeof want)) die("chain");
  printf("mask_fill, cast to i32, [flip, itself]:");
  for (int i = 0; i < 2 * N; i++) printf(" %d", got[i]);
  printf("\n");
  for (int i = 0; i < 2 * N; i++)
    if (got[i] != want[i]) {
      fprintf(stderr, "cube sample: element %d is %d, flex says %d\n", i, got[i], want[i]);
      return 1;
    }
  printf("same values as flex\n");
  bext_release(y), bext_release(yf), bext_release(c), bext_release(cf);
  bext_release(x), bext_release(xf);
  return 0;
}
