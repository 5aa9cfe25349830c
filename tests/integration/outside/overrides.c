/* overrides.c — the outside project's Flex override of Outside::softsign,
 * a method with a default body, built into a STATIC LIBRARY (liboverrides.a)
 * that nothing else references: the generated code refers to it weakly,
 * and a weak reference does not pull an archive member, so the library is
 * linked whole (bext_add_extension IMPLEMENTATIONS / -Wl,--whole-archive).
 * It leaves a mark in the environment so main.c can tell it ran instead of
 * the default body; main.c must not refer to anything here. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include <bext/bext.h>

/* The prototype of outside.h, written out: this library is built before
 * (and without) the generated header. */
bext_tensor *outside_softsign_flex(bext_tensor *x);

bext_tensor *outside_softsign_flex(bext_tensor *x) {
  setenv("OUTSIDE_SOFTSIGN_OVERRIDE", "flex", 1);
  bext_tensor *den = bext_add_scalar(bext_abs(bext_retain(x)), 1.0);   /* before x is consumed */
  return bext_div(x, den);
}
