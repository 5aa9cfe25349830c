/* tensor_basics — a tour of the libbext C API: pick devices from strings,
 * copy data in, build a small computation (views, broadcasting, matmul,
 * reductions), read results out, move a tensor between backends, and see
 * what an error looks like.  Every op consumes its tensor operands; keep a
 * reference with bext_retain() when you need the tensor afterwards. */
#include <stdio.h>

#include <bext/bext.h>

static int fail(const char *what) {
  fprintf(stderr, "tensor_basics: %s: %s\n", what, bext_last_error());
  return 1;
}

static void print2d(const char *name, const bext_tensor *t) {
  float v[64];
  const int64_t *sh = bext_shape(t);
  if (bext_rank(t) != 2 || bext_numel(t) > 64 || bext_dtype_of(t) != BEXT_F32 || !bext_read(t, v, sizeof v)) {
    printf("%s: (not printable)\n", name);
    return;
  }
  printf("%s [%lldx%lld]:\n", name, (long long)sh[0], (long long)sh[1]);
  for (int64_t i = 0; i < sh[0]; i++) {
    for (int64_t j = 0; j < sh[1]; j++) printf(" %8.3f", v[i * sh[1] + j]);
    printf("\n");
  }
}

/* relu(x @ w + b) with w drawn from a seeded normal: the same numbers on
 * every backend for the same seed. */
static bext_tensor *layer(bext_tensor *x, const bext_device *dev) {
  bext_tensor *w = bext_random_normal((int64_t[]){3, 2}, 2, 0.1, 0.5, 7, BEXT_F32, dev);
  bext_tensor *b = bext_full((int64_t[]){2}, 1, 0.25, BEXT_F32, dev);
  return bext_relu(bext_add(bext_matmul(x, w), b)); /* consumes x, w, b */
}

int main(int argc, char **argv) {
  const char *spec = argc > 1 ? argv[1] : "flex";
  /* devices are objects from a registry: one per spec, compared by pointer */
  const bext_device *dev = bext_device_get(spec), *nd = bext_device_get("ndarray");
  if (!dev || !bext_device_available(dev)) return fail("device");

  /* x: 2x3 from host data (copied in) */
  const float xs[6] = {1, 2, 3, 4, 5, 6};
  bext_tensor *x = bext_from_data(xs, BEXT_F32, (int64_t[]){2, 3}, 2, dev);
  if (!x) return fail("x");
  bext_tensor *y = layer(bext_retain(x), dev); /* keep x for later */
  if (!y) return fail("y");
  print2d("x", x);
  print2d("relu(x @ w + b)", y);

  /* a transposed view is read back row-major */
  bext_tensor *xt = bext_swap_dims(bext_retain(x), 0, 1);
  printf("x^T is %scontiguous\n", bext_is_contiguous(xt) ? "" : "not ");
  print2d("x^T", xt);

  /* reductions: mean of each row (keepdim) and the argmax of the whole */
  bext_tensor *m = bext_mean_dim(bext_retain(x), 1, true);
  bext_tensor *am = bext_argmax(bext_retain(x));
  int64_t arg = -1;
  if (!m || !am || !bext_read(am, &arg, sizeof arg)) return fail("reductions");
  print2d("row means", m);
  printf("argmax(x) = %lld\n", (long long)arg);

  /* the same layer on the NdArray reference, compared after moving y */
  bext_tensor *y_nd = layer(bext_to_device(bext_retain(x), nd), nd);
  bext_tensor *diff = bext_max_all(bext_abs(bext_sub(bext_to_device(bext_retain(y), nd), y_nd)));
  float d = -1;
  if (!diff || !bext_read(diff, &d, sizeof d)) return fail("compare");
  printf("largest difference from the ndarray reference: %g\n", d);

  /* errors: NULL, and a message naming the op and the operand shapes */
  bext_tensor *bad = bext_add(bext_retain(x), bext_ones((int64_t[]){4}, 1, BEXT_F32, dev));
  printf("bad add -> %s; error: %s\n", bad ? "tensor" : "NULL", bext_last_error());

  bext_release(diff);
  bext_release(am);
  bext_release(m);
  bext_release(xt);
  bext_release(y);
  bext_release(x);
  return d >= 0 && d < 1e-4f && !bad ? 0 : 1;
}
