/* api_compose.c — public ops that are compositions of core ops rather than
 * rows of the op table: every op a default body may use has a public
 * bext_* function (docs/codegen.md "Default bodies"), and the generated C
 * calls these.  Kept apart from api.c, whose functions each build one
 * descriptor for one row. */
#include "backend.h"

/* gelu(x) = x * 0.5 * (1 + erf(x / sqrt(2))), exact (erf) form, over
 * bext_mul_scalar, bext_erf, bext_add_scalar and bext_mul.  OWNS x; on
 * failure releases everything it holds and returns NULL with the failing
 * op's error. */
bext_tensor *bext_gelu(bext_tensor *x) {
  if (!x) return bext_erf(NULL);   /* the core op reports the NULL operand */
  bext_tensor *keep = bext_retain(x);
  bext_tensor *e = bext_mul_scalar(x, 0.70710678118654752440);
  if (e) e = bext_erf(e);
  if (e) e = bext_add_scalar(e, 1.0);
  if (e) e = bext_mul_scalar(e, 0.5);
  if (!e) {
    bext_release(keep);
    return NULL;
  }
  return bext_mul(keep, e);
}

/* The last two dims swapped: bext_swap_dims(t, -2, -1).  OWNS t. */
bext_tensor *bext_transpose(bext_tensor *t) { return bext_swap_dims(t, -2, -1); }
