/* criterion.h (TSan stand-in) — the subset of Criterion's test API the
 * threaded runtime tests use, for `make tsan` only.
 *
 * Why not Criterion itself: its sandbox (BoxFort) maps an "inheritable
 * arena" at a random fixed address that ThreadSanitizer's reserved shadow
 * ranges cover, so every Criterion binary built with -fsanitize=thread
 * aborts at start ("Could not initialize inheritable arena",
 * Snaipe/Criterion#274, open).  The same test sources compile against this
 * header instead (tests/CMakeLists.txt puts tests/tsan first on the
 * include path when BEXT_TSAN is on) and run under runner.c, which keeps
 * Criterion's semantics that matter here: each test in its own forked
 * process, suite and test .init/.fini, .timeout, assert = stop the test,
 * expect = note and go on, skip. */
#ifndef BXT_CRITERION_SHIM_H
#define BXT_CRITERION_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct criterion_test_extra_data {
  int bxt_unused_;          /* lets `{ .bxt_unused_ = 0, __VA_ARGS__ }` take no options */
  void (*init)(void);
  void (*fini)(void);
  double timeout;           /* seconds; 0: none */
  bool disabled;
  const char *description;
};

struct bxt_test {
  const char *suite, *name;
  void (*fn)(void);
  const struct criterion_test_extra_data *extra;
  struct bxt_test *next;
};
struct bxt_suite {
  const char *name;
  const struct criterion_test_extra_data *extra;
  struct bxt_suite *next;
};

void bxt_register_test(struct bxt_test *t);
void bxt_register_suite(struct bxt_suite *s);
/* fmt starts with one space (see BXT_CHECK); fatal: end the test now. */
void bxt_check(bool fatal, bool ok, const char *file, int line, const char *expr,
               const char *fmt, ...) __attribute__((format(printf, 6, 7)));
__attribute__((noreturn)) void bxt_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define Test(suite, name, ...)                                                         \
  static void suite##_##name##_bxt_fn(void);                                          \
  static const struct criterion_test_extra_data suite##_##name##_bxt_extra = {         \
      .bxt_unused_ = 0, __VA_ARGS__};                                                  \
  static struct bxt_test suite##_##name##_bxt_test = {                                 \
      #suite, #name, suite##_##name##_bxt_fn, &suite##_##name##_bxt_extra, NULL};      \
  __attribute__((constructor)) static void suite##_##name##_bxt_reg(void) {            \
    bxt_register_test(&suite##_##name##_bxt_test);                                     \
  }                                                                                    \
  static void suite##_##name##_bxt_fn(void)

#define TestSuite(suite, ...)                                                          \
  static const struct criterion_test_extra_data suite##_bxt_suite_extra = {            \
      .bxt_unused_ = 0, __VA_ARGS__};                                                  \
  static struct bxt_suite suite##_bxt_suite = {#suite, &suite##_bxt_suite_extra, NULL}; \
  __attribute__((constructor)) static void suite##_bxt_suite_reg(void) {               \
    bxt_register_suite(&suite##_bxt_suite);                                            \
  }

/* The optional message is a format literal and its arguments; " " in
 * front makes an absent one a valid (one-space) format. */
#define BXT_CHECK(fatal, ok, expr, ...) \
  bxt_check(fatal, (ok), __FILE__, __LINE__, expr, " " __VA_ARGS__)

#define cr_assert(c, ...) BXT_CHECK(true, !!(c), #c, __VA_ARGS__)
#define cr_expect(c, ...) BXT_CHECK(false, !!(c), #c, __VA_ARGS__)
#define cr_assert_fail(...) BXT_CHECK(true, false, "cr_assert_fail", __VA_ARGS__)
#define cr_expect_fail(...) BXT_CHECK(false, false, "cr_expect_fail", __VA_ARGS__)
#define BXT_CMP(fatal, a, op, b, ...) BXT_CHECK(fatal, (a) op (b), #a " " #op " " #b, __VA_ARGS__)
#define cr_assert_eq(a, b, ...) BXT_CMP(true, a, ==, b, __VA_ARGS__)
#define cr_expect_eq(a, b, ...) BXT_CMP(false, a, ==, b, __VA_ARGS__)
#define cr_assert_neq(a, b, ...) BXT_CMP(true, a, !=, b, __VA_ARGS__)
#define cr_expect_neq(a, b, ...) BXT_CMP(false, a, !=, b, __VA_ARGS__)
#define cr_assert_lt(a, b, ...) BXT_CMP(true, a, <, b, __VA_ARGS__)
#define cr_expect_lt(a, b, ...) BXT_CMP(false, a, <, b, __VA_ARGS__)
#define cr_assert_leq(a, b, ...) BXT_CMP(true, a, <=, b, __VA_ARGS__)
#define cr_expect_leq(a, b, ...) BXT_CMP(false, a, <=, b, __VA_ARGS__)
#define cr_assert_gt(a, b, ...) BXT_CMP(true, a, >, b, __VA_ARGS__)
#define cr_expect_gt(a, b, ...) BXT_CMP(false, a, >, b, __VA_ARGS__)
#define cr_assert_geq(a, b, ...) BXT_CMP(true, a, >=, b, __VA_ARGS__)
#define cr_expect_geq(a, b, ...) BXT_CMP(false, a, >=, b, __VA_ARGS__)
#define cr_assert_null(p, ...) BXT_CHECK(true, (p) == NULL, #p " == NULL", __VA_ARGS__)
#define cr_expect_null(p, ...) BXT_CHECK(false, (p) == NULL, #p " == NULL", __VA_ARGS__)
#define cr_assert_not_null(p, ...) BXT_CHECK(true, (p) != NULL, #p " != NULL", __VA_ARGS__)
#define cr_expect_not_null(p, ...) BXT_CHECK(false, (p) != NULL, #p " != NULL", __VA_ARGS__)
#define cr_assert_str_eq(a, b, ...) BXT_CHECK(true, strcmp((a), (b)) == 0, #a " == " #b, __VA_ARGS__)
#define cr_expect_str_eq(a, b, ...) BXT_CHECK(false, strcmp((a), (b)) == 0, #a " == " #b, __VA_ARGS__)
#define cr_skip_test(...) bxt_skip(" " __VA_ARGS__)

#endif /* BXT_CRITERION_SHIM_H */
