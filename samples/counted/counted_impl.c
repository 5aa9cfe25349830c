/* counted_impl.c — per-backend implementations of Counting::counted: the
 * absolute values of the input, and how many elements were processed.
 * A struct output is written through `out`; the function returns false
 * (with *out zeroed) on failure, as docs/codegen.md specifies. */
#include <string.h>

#include "counted.h"

static bool counted_common(bext_tensor *input, Counted *out) {
  memset(out, 0, sizeof *out);
  int64_t n = bext_numel(input);   /* borrowed query, before abs consumes input */
  bext_tensor *t = bext_abs(input);
  if (!t) return false;
  out->tensor = t;
  out->count = (size_t)n;
  return true;
}

bool counting_counted_flex(bext_tensor *input, Counted *out) { return counted_common(input, out); }
bool counting_counted_ndarray(bext_tensor *input, Counted *out) { return counted_common(input, out); }
