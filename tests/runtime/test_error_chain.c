/* test_error_chain.c — the errno-like error contract (bext.h, next to
 * bext_last_error): a failure sets the error and successes leave it alone,
 * bext_error_count() tells whether a call set one, and a call given a NULL
 * tensor handle cites the pending failure that produced it, each failure
 * directly at most once and never an older one than the newest. */
#include <criterion/criterion.h>
#include <string.h>

#include "backend.h"
#include "test_device.h"

static const bext_device *nd;
static void setup(void) {
  cr_assert((nd = bext_device_get("ndarray")));
  bext_clear_error();
}

static bext_tensor *ints(void) {
  const int64_t v[6] = {1, 2, 3, 4, 5, 6};
  return bext_from_data(v, BEXT_I64, (int64_t[]){2, 3}, 2, nd);
}
static bext_tensor *floats(void) { return bext_ones((int64_t[]){3}, 1, BEXT_F32, nd); }

static int count_of(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

#define RSQRT_CAUSE "bext_rsqrt: operand 1 has dtype i64, expected a float dtype (operands: [2,3] i64)"

/* The README's chain of ops, fed an i64 tensor: the last op's error names
 * the first failure, through every step in between. */
Test(error_chain, chain_reports_the_first_cause, .init = setup) {
  bext_tensor *s = bext_sum(bext_mul_scalar(bext_rsqrt(ints()), 2.0));
  cr_assert_null(s);
  cr_expect_str_eq(bext_last_error(),
                   "bext_sum: operand 1 is a NULL tensor handle (operands: NULL); "
                   "earlier error: bext_mul_scalar: operand 1 is a NULL tensor handle (operands: NULL); "
                   "earlier error: " RSQRT_CAUSE);
  /* and through a query at the end of the chain */
  float v;
  cr_expect(!bext_read(s, &v, sizeof v));
  cr_expect(strncmp(bext_last_error(), "bext_read: NULL tensor handle; earlier error: bext_sum:", 55) == 0,
            "%s", bext_last_error());
  cr_expect_eq(count_of(bext_last_error(), "bext_rsqrt:"), 1, "%s", bext_last_error());
}

Test(error_chain, null_operand_without_earlier_failure, .init = setup) {
  cr_assert_null(bext_neg(NULL));
  cr_expect_str_eq(bext_last_error(), "bext_neg: operand 1 is a NULL tensor handle (operands: NULL)");
  bext_clear_error();
  cr_expect_eq(bext_rank(NULL), 0);
  cr_expect_str_eq(bext_last_error(), "bext_rank: NULL tensor handle");
}

/* Documented choice: a success in between (here an unrelated operand
 * created after the failure, as argument evaluation order may do) leaves
 * the failure pending, and the op that gets its NULL cites it. */
Test(error_chain, success_in_between_keeps_the_failure_pending, .init = setup) {
  bext_tensor *bad = bext_rsqrt(ints());
  cr_assert_null(bad);
  bext_tensor *ok = bext_add(floats(), floats());   /* succeeds: error left alone */
  cr_assert_not_null(ok);
  cr_expect_str_eq(bext_last_error(), RSQRT_CAUSE);
  cr_assert_null(bext_mul(bad, ok));
  cr_expect_str_eq(bext_last_error(),
                   "bext_mul: operand 1 is a NULL tensor handle (operands: NULL, [3] f32); earlier error: " RSQRT_CAUSE);
}

/* Citing consumes: a second NULL-operand call cites the first one's
 * failure (the newest), not the rsqrt failure again. */
Test(error_chain, a_failure_is_cited_once, .init = setup) {
  cr_assert_null(bext_rsqrt(ints()));
  cr_assert_null(bext_neg(NULL));
  cr_expect_str_eq(bext_last_error(),
                   "bext_neg: operand 1 is a NULL tensor handle (operands: NULL); earlier error: " RSQRT_CAUSE);
  cr_assert_null(bext_abs(NULL));
  const char *e = bext_last_error();
  cr_expect(strncmp(e, "bext_abs: operand 1 is a NULL tensor handle (operands: NULL); earlier error: bext_neg:", 85) ==
                0,
            "%s", e);
  cr_expect_eq(count_of(e, "earlier error: bext_rsqrt"), 1, "%s", e);
}

Test(error_chain, newest_failure_wins, .init = setup) {
  cr_assert_null(bext_rsqrt(ints()));
  cr_assert_null(bext_reshape(floats(), (int64_t[]){4}, 1));
  cr_assert_null(bext_exp(NULL));
  const char *e = bext_last_error();
  cr_expect(strstr(e, "; earlier error: bext_reshape:"), "%s", e);
  cr_expect(!strstr(e, "rsqrt"), "an older failure was cited: %s", e);
}

Test(error_chain, clear_error_drops_the_pending_failure, .init = setup) {
  cr_assert_null(bext_rsqrt(ints()));
  bext_clear_error();
  cr_expect_str_eq(bext_last_error(), "");
  cr_assert_null(bext_exp(NULL));
  cr_expect_str_eq(bext_last_error(), "bext_exp: operand 1 is a NULL tensor handle (operands: NULL)");
}

Test(error_chain, error_count_moves_only_on_errors, .init = setup) {
  uint64_t n0 = bext_error_count();
  bext_tensor *t = bext_add(floats(), floats());
  cr_assert_not_null(t);
  cr_expect_eq(bext_error_count(), n0);
  cr_assert_null(bext_rsqrt(ints()));
  uint64_t n1 = bext_error_count();
  cr_expect_gt(n1, n0);
  bext_clear_error();                       /* clears the text, not the count */
  cr_expect_eq(bext_error_count(), n1);
  cr_expect(!bext_set_error("mine"));
  cr_expect_eq(bext_error_count(), n1 + 1);
  /* a successful op leaves the error alone (no clearing as a side effect) */
  t = bext_neg(t);
  cr_assert_not_null(t);
  cr_expect_str_eq(bext_last_error(), "mine");
  bext_release(t);
}

/* Code outside the runtime reports a NULL argument through
 * bext_set_null_error, with the same citation. */
Test(error_chain, set_null_error_cites_like_the_runtime, .init = setup) {
  cr_assert_null(bext_rsqrt(ints()));
  cr_expect(!bext_set_null_error("my_op: argument `%s` is a NULL tensor", "x"));
  cr_expect_str_eq(bext_last_error(), "my_op: argument `x` is a NULL tensor; earlier error: " RSQRT_CAUSE);
  /* an argument that points into the message itself */
  cr_expect(!bext_set_null_error("again: %s", bext_last_error()));
  cr_expect(strncmp(bext_last_error(), "again: my_op:", 13) == 0, "%s", bext_last_error());
}

/* A chain longer than the message buffer keeps the newest step and the
 * first cause, eliding the middle. */
Test(error_chain, long_chain_keeps_both_ends, .init = setup) {
  bext_tensor *t = bext_rsqrt(ints());
  for (int i = 0; i < 40; i++) t = bext_neg(t);
  cr_assert_null(t);
  const char *e = bext_last_error();
  cr_expect_lt(strlen(e), 1024u);
  cr_expect(strncmp(e, "bext_neg: operand 1 is a NULL tensor handle", 43) == 0, "%s", e);
  cr_expect(strstr(e, " [...] "), "%s", e);
  size_t n = strlen(e), c = strlen(RSQRT_CAUSE);
  cr_expect(n > c && strcmp(e + n - c, RSQRT_CAUSE) == 0, "the first cause is lost: %s", e);
}

/* dispatch judges a backend's failure by the error count: a kernel that
 * fails silently after an unrelated, older failure gets dispatch's own
 * message, not the stale one. */
static bext_tensor *silent_failure(struct bxr_op *op) {
  (void)op;
  return NULL;
}
static const struct bxr_backend quiet = {
    .api_version = BXR_BACKEND_API_VERSION,
    .name = "quiet",
    .kind = BEXT_BACKEND_NDARRAY,
    .storage_alloc = bxr_host_storage_alloc,
    .storage_free = bxr_host_storage_free,
    .from_data = bxr_host_from_data,
    .read = bxr_host_read,
    .copy = bxr_host_copy,
    .exec = {[BXR_OP_NEG] = silent_failure},
};
TEST_DEVICE(quiet_dev, &quiet, "quiet");

Test(error_chain, silent_backend_failure_is_not_blamed_on_an_old_error, .init = setup) {
  cr_assert_null(bext_rsqrt(ints()));
  bext_tensor *t = bxr_tensor_new(&quiet_dev, BEXT_F32, 1, (int64_t[]){2});
  cr_assert_not_null(t);
  cr_assert_null(bext_neg(t));
  cr_expect_str_eq(bext_last_error(), "bext_neg: device 'quiet' failed without a message (operands: [2] f32)");
}
