/* main.c — samples/fusion: the GELU (tanh form) chain, 9 core ops, on
 * flex+fusion.  The ops are recorded, not run; the read runs them as one
 * fused kernel (Flex's JIT); a second iteration replays the cached plan
 * and compiles nothing.  The values are checked against eager flex.  With
 * BEXT_FUSION_DUMP=DIR the plan is written there as Graphviz DOT and the
 * kernel's IR as text (make demo does that).
 *
 *   fusion [DEVICE]   (default flex+fusion) */
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

static void die(const char *what) {
  fprintf(stderr, "fusion sample: %s failed: %s\n", what, bext_last_error());
  exit(1);
}

int main(int argc, char **argv) {
  const char *spec = argc > 1 ? argv[1] : "flex+fusion";
  const bext_device *d = bext_device_get(spec), *flex = bext_device_get("flex");
  if (!d || !flex) die("bext_device_get");
  float v[N] = {-3, -1.5f, -0.5f, 0, 0.25f, 1, 2, 4}, got[N], want[N];
  bext_tensor *x = bext_from_data(v, BEXT_F32, (int64_t[]){N}, 1, d);
  bext_tensor *xe = bext_from_data(v, BEXT_F32, (int64_t[]){N}, 1, flex);
  if (!x || !xe) die("bext_from_data");
  bext_tensor *ye = gelu(xe);
  if (!ye || !bext_read(ye, want, sizeof want)) die("eager gelu");
  printf("== gelu on %s (9 core ops)\n", spec);
  for (int it = 1; it <= 2; it++) {
    bext_fusion_stat a, b;
    bext_fusion_stats(&a);
    bext_tensor *y = gelu(x);
    if (!y) die("gelu");
    bext_fusion_stats(&b);
    printf("iteration %d: recorded, ops run so far %llu\n", it, (unsigned long long)(b.ops_run - a.ops_run));
    if (!bext_read(y, got, sizeof got)) die("bext_read");
    bext_fusion_stats(&b);
    printf("  read: %llu ops run, %llu inside %llu fused kernel(s); plans built %llu, reused %llu; "
           "kernels compiled %llu\n",
           (unsigned long long)(b.ops_run - a.ops_run), (unsigned long long)(b.ops_fused - a.ops_fused),
           (unsigned long long)(b.kernels_launched - a.kernels_launched),
           (unsigned long long)(b.plans_built - a.plans_built), (unsigned long long)(b.plans_reused - a.plans_reused),
           (unsigned long long)(b.kernels_compiled - a.kernels_compiled));
    for (int i = 0; i < N; i++)
      if (!(fabsf(got[i] - want[i]) <= 1e-6f * (1 + fabsf(want[i])))) {
        fprintf(stderr, "fusion sample: element %d is %g, eager flex says %g\n", i, got[i], want[i]);
        return 1;
      }
    bext_release(y);
  }
  printf("gelu:");
  for (int i = 0; i < N; i++) printf(" %.4f", got[i]);
  printf("\nsame values as eager flex\n");
  bext_release(x);
  bext_release(xe);
  bext_release(ye);
  return 0;
}
