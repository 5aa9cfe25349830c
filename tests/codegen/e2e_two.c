/* e2e_two.c — two extensions that import the same module, in one program.
 *
 * ext/two/ea.bext and ext/two/eb.bext both `use common::{Counted, Maybe}`.
 * bextc generates ea.h/ea.c and eb.h/eb.c at build time; this file
 * includes BOTH headers (so each imported type must be defined once per C
 * file: per-type guards) and is linked with BOTH .c files (so the types'
 * release/retain must not be defined twice: they are `static inline` in
 * the header).  Building this executable is half the test; the other half
 * runs both extensions' entry points on one value and checks the results,
 * the helpers and that every tensor reference comes back (ASan/LSan, and
 * bext_refcount below). */
#include <criterion/criterion.h>
#include <string.h>

#include "ea.h"
#include "eb.h"

/* ---- implementations the user supplies ---- */

bool a_a_flex(bext_tensor *x, Counted *bext_out) {
  bext_out->tensor = x;
  bext_out->count = 1;
  return true;
}

bool a_a_maybe_flex(Maybe m, Maybe *bext_out) {
  *bext_out = m;   /* ownership moves through */
  return true;
}

bool b_b_flex(bext_tensor *x, Counted *bext_out) {
  bext_out->tensor = x;
  bext_out->count = 2;
  return true;
}

bool b_b_count_flex(const Counted *c, Maybe *bext_out) {
  /* borrowed input: the output needs its own reference */
  Counted copy = counted_retain(c);
  bext_out->tag = MAYBE_SOME;
  bext_out->as.Some._0 = copy.tensor;
  return true;
}

/* ---- helpers ---- */

static bext_tensor *flex_f32(float v) {
  const bext_device *d;
  cr_assert((d = bext_device_get("flex")));
  int64_t shape[1] = {1};
  bext_tensor *t = bext_from_data(&v, BEXT_F32, shape, 1, d);
  cr_assert_not_null(t, "%s", bext_last_error());
  return t;
}

/* ---- tests ---- */

Test(two, both_extensions_run_on_the_shared_type) {
  bext_tensor *x = flex_f32(3.0f);
  bext_retain(x);   /* keep one reference to watch the count */
  Counted ca, cb;
  cr_assert(a_a(x, &ca), "%s", bext_last_error());
  cr_assert_eq(ca.count, 1, "ea's implementation must run for a_a");
  cr_assert_eq(ca.tensor, x);
  /* a value made by ea feeds eb: one C type `Counted` for both */
  Maybe m;
  cr_assert(b_b_count(&ca, &m), "%s", bext_last_error());
  cr_assert_eq(m.tag, MAYBE_SOME);
  cr_assert_eq(m.as.Some._0, x);
  cr_assert_eq(bext_refcount(x), 3);   /* ours, ca's, m's */
  Maybe back;
  cr_assert(a_a_maybe(m, &back), "%s", bext_last_error());   /* consumes m */
  cr_assert_eq(back.tag, MAYBE_SOME);
  maybe_release(&back);
  counted_release(&ca);
  cr_assert_null(ca.tensor, "release sets the handle NULL");
  cr_assert_eq(bext_refcount(x), 1);

  cr_assert(b_b(x, &cb), "%s", bext_last_error());   /* consumes our reference */
  cr_assert_eq(cb.count, 2, "eb's implementation must run for b_b");
  counted_release(&cb);
}

Test(two, helpers_are_per_extension) {
  size_t n = 21, ra = 0, rb = 0;
  bext_meta_error err;
  memset(&err, 0, sizeof err);
  cr_assert(ea_common_twice(&n, &ra, &err));
  cr_assert(eb_common_twice(&n, &rb, &err));
  cr_assert_eq(ra, 42);
  cr_assert_eq(rb, 42);
}
