/* main.c — driver of samples/gated: calls each method on Flex and NdArray.
 * Where the routing tensor's backend is not listed, or its condition is
 * off in this build, the generated entry point raises the runtime's panic
 * hook; this driver installs a hook that prints the message and longjmps
 * back (a hook must not return: the runtime aborts if it does), then goes
 * on with the next call.  The entry point has already released its owned
 * input by then, so nothing leaks. */
#include <setjmp.h>
#include <stdio.h>

#include "../common/sample.h"
#include "gated.h"

static jmp_buf g_jump;
static int g_panics;

static void print_and_jump(const char *msg, const char *file, int line, void *ud) {
  (void)file, (void)line, (void)ud;   /* the generated file's path varies by build */
  printf("panic hook: %s\n", msg);
  g_panics++;
  longjmp(g_jump, 1);
}

typedef bext_tensor *(*method_fn)(bext_tensor *);

/* Runs one entry point on a fresh [1, 2, 3] tensor on dev; prints the
 * result (checked against factor * input) or the panic message. */
static void call(const char *name, method_fn fn, double factor, const char *dev) {
  static const float in[3] = { 1, 2, 3 };
  float got[3], want[3];
  for (int i = 0; i < 3; i++) want[i] = (float)(factor * in[i]);
  bext_tensor *x = sample_tensor(in, (const int64_t[]){ 3 }, 1, dev);
  /* volatile: read after a longjmp back into this frame. */
  bext_tensor *volatile y = NULL;
  if (setjmp(g_jump) == 0) {
    y = fn(x);   /* consumes x */
    if (!y) sample_die(name);
    sample_print(name, y, got, 3);
    sample_expect(name, got, want, 3, 0.0);
    bext_release(y);
  } else {
    printf("%s on %s: no result (the panic hook ran)\n", name, dev);
  }
}

int main(void) {
  bext_set_panic_hook(print_and_jump, NULL);
#if defined(BEXT_FEATURE_REFERENCE)
  printf("features: reference=on");
#else
  printf("features: reference=off");
#endif
#if defined(BEXT_FEATURE_EXPERIMENTAL)
  printf(" experimental=on\n");
#else
  printf(" experimental=off\n");
#endif
  int expected_panics = 0;
  for (int d = 0; d < SAMPLE_NDEVICES; d++) {
    const char *dev = sample_devices[d];
    int is_nd = dev[0] == 'n';
    printf("== %s\n", dev);
    call("Gated::double", gated_double, 2.0, dev);
#if defined(BEXT_FEATURE_EXPERIMENTAL)
    call("Gated::triple", gated_triple, 3.0, dev);
#else
    if (d == 0) printf("Gated::triple: compiled out (#[cfg(feature = \"experimental\")] is off)\n");
#endif
    call("FlexOnly::negate", flex_only_negate, -1.0, dev);
#if defined(BEXT_FEATURE_REFERENCE)
    expected_panics += is_nd;        /* negate only */
#else
    expected_panics += 2 * is_nd;    /* double (condition off) and negate (not listed) */
#endif
  }
  bext_set_panic_hook(NULL, NULL);
  printf("panics: %d\n", g_panics);
  if (g_panics != expected_panics) {
    fprintf(stderr, "sample: %d panics, expected %d\n", g_panics, expected_panics);
    return 1;
  }
  return 0;
}
