/* runner.c — main() for the TSan stand-in of Criterion (criterion.h next
 * to this file says why it exists).  Runs every registered test in its own
 * forked child, like Criterion: a test's failed assert ends only that
 * child, process-wide state (hooks, caches, the Flex pool's thread count)
 * starts fresh per test, and a crash is reported as a failure.  Output is
 * Criterion-like; the exit status is 0 only when every test passed or was
 * skipped.  Command-line options (ctest passes --jobs=1) are ignored. */
#include <fnmatch.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "criterion/criterion.h"

#define BXT_SKIPPED 77   /* child exit status of cr_skip_test */

static struct bxt_test *g_tests, **g_tail = &g_tests;
static struct bxt_suite *g_suites;
static atomic_int g_failed;   /* failed expects in this (child) process */

void bxt_register_test(struct bxt_test *t) {
  *g_tail = t;   /* keep definition order */
  g_tail = &t->next;
}

void bxt_register_suite(struct bxt_suite *s) {
  s->next = g_suites;
  g_suites = s;
}

void bxt_check(bool fatal, bool ok, const char *file, int line, const char *expr, const char *fmt,
               ...) {
  if (ok) return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const char *m = msg[1] ? msg + 1 : expr;   /* skip the format's leading space */
  fprintf(stderr, "[----] %s:%d: %s\n[----]   %s\n", file, line,
          fatal ? "Assertion Failed" : "Expectation Failed", m);
  if (fatal) {
    fflush(NULL);
    _exit(1);
  }
  atomic_fetch_add(&g_failed, 1);
}

void bxt_skip(const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "[----]   skipped: %s\n", msg + 1);
  fflush(NULL);
  _exit(BXT_SKIPPED);
}

static const struct criterion_test_extra_data *suite_of(const char *name) {
  for (struct bxt_suite *s = g_suites; s; s = s->next)
    if (strcmp(s->name, name) == 0) return s->extra;
  return NULL;
}

static void run_child(const struct bxt_test *t) {
  const struct criterion_test_extra_data *se = suite_of(t->suite), *te = t->extra;
  void (*init)(void) = te->init ? te->init : se ? se->init : NULL;
  void (*fini)(void) = te->fini ? te->fini : se ? se->fini : NULL;
  double timeout = te->timeout > 0 ? te->timeout : se ? se->timeout : 0;
  if (timeout > 0) alarm((unsigned)timeout + 1);
  if (init) init();
  t->fn();
  if (fini) fini();
  fflush(NULL);
  exit(atomic_load(&g_failed) ? 1 : 0);   /* exit, not _exit: TSan's end-of-run checks */
}

/* Criterion's --filter PATTERN (or --filter=PATTERN): a glob over
 * "suite/test"; the GPU check (tools/gpu-check) runs one test of the
 * conformance file with it.  Other options (--jobs=1 from ctest) mean
 * nothing here: tests run one after another anyway. */
static const char *filter_arg(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], "--filter=", 9) == 0) return argv[i] + 9;
    if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc) return argv[i + 1];
  }
  return NULL;
}

int main(int argc, char **argv) {
  const char *filter = filter_arg(argc, argv);
  int n = 0, passed = 0, failed = 0, crashed = 0, skipped = 0;
  for (struct bxt_test *t = g_tests; t; t = t->next) {
    const struct criterion_test_extra_data *se = suite_of(t->suite);
    if (t->extra->disabled || (se && se->disabled)) continue;
    if (filter) {
      char full[256];
      snprintf(full, sizeof full, "%s/%s", t->suite, t->name);
      if (fnmatch(filter, full, 0) != 0) continue;
    }
    n++;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
      perror("fork");
      return 2;
    }
    if (pid == 0) run_child(t);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0) {}
    const char *verdict;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) verdict = "PASS", passed++;
    else if (WIFEXITED(st) && WEXITSTATUS(st) == BXT_SKIPPED) verdict = "SKIP", skipped++;
    else if (WIFEXITED(st)) verdict = "FAIL", failed++;
    else verdict = "CRASH", crashed++;
    if (WIFSIGNALED(st))
      fprintf(stderr, "[----] %s::%s: killed by signal %d (%s)\n", t->suite, t->name, WTERMSIG(st),
              WTERMSIG(st) == SIGALRM ? "timeout" : strsignal(WTERMSIG(st)));
    fprintf(stderr, "[%s] %s::%s\n", verdict, t->suite, t->name);
  }
  fprintf(stderr, "[====] Synthesis: Tested: %d | Passing: %d | Failing: %d | Crashing: %d | Skipped: %d\n",
          n, passed, failed, crashed, skipped);
  return failed || crashed ? 1 : 0;
}
