/* error.c — thread-local error state (bext_last_error, the error count and
 * the chaining of NULL-operand errors to their cause) and the panic hook
 * for programming errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor.h"

/* The error contract (bext.h, next to bext_last_error):
 *   t_error         the message of the newest error set on this thread;
 *   bxr_tls_errors  how many errors were set on this thread (never reset),
 *                   so an entry point can tell whether a callee set one
 *                   during the call.
 * The message in t_error is the pending failure.  A NULL-operand error
 * (bxr_error_null) cites it ("; earlier error: ...") and replaces it: the
 * cited failure is consumed (no later message cites it directly again) and
 * the citing one is pending in its place, so a chain of calls fed one
 * failure's NULL names every step back to the cause, each exactly once.
 *
 * t_error has the default TLS model (not initial-exec like the small hot
 * per-thread words): 1 KiB would eat the static TLS surplus if libbext
 * ever ends up in a dlopen'ed object.  bxr_tls_errors is one of those
 * hot words (bxr_error_count, internal.h: dispatch reads it around every
 * exec). */
static _Thread_local char t_error[1024];
_Thread_local uint64_t bxr_tls_errors __attribute__((tls_model("initial-exec")));

bool bxr_verror(const char *fmt, va_list ap) {
  vsnprintf(t_error, sizeof t_error, fmt, ap);
  bxr_tls_errors++;
  return false;
}

bool bxr_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  bxr_verror(fmt, ap);
  va_end(ap);
  return false;
}

#define CITE_SEP "; earlier error: "
#define ELIDED " [...] "

bool bxr_verror_null(const char *fmt, va_list ap) {
  char cause[sizeof t_error];
  bool cite = t_error[0] != 0;
  if (cite) memcpy(cause, t_error, sizeof cause);
  /* formatted aside: an argument may point into t_error */
  char own[sizeof t_error];
  vsnprintf(own, sizeof own, fmt, ap);
  memcpy(t_error, own, sizeof own);
  bxr_tls_errors++;
  size_t len = strlen(t_error);
  if (!cite || len + sizeof CITE_SEP >= sizeof t_error) return false;
  /* Appends the cause.  A long chain keeps the cause's start (the failure
   * just before this one) and its end (where the first cause of the chain
   * sits), eliding the middle. */
  memcpy(t_error + len, CITE_SEP, sizeof CITE_SEP);
  len += sizeof CITE_SEP - 1;
  size_t room = sizeof t_error - 1 - len, clen = strlen(cause);
  if (clen <= room) {
    memcpy(t_error + len, cause, clen + 1);
  } else if (room > 3 * sizeof ELIDED) {
    size_t head = room / 3, tail = room - head - (sizeof ELIDED - 1);
    memcpy(t_error + len, cause, head);
    memcpy(t_error + len + head, ELIDED, sizeof ELIDED - 1);
    memcpy(t_error + len + head + sizeof ELIDED - 1, cause + clen - tail, tail + 1);
  } else {
    memcpy(t_error + len, cause, room);
    t_error[len + room] = 0;
  }
  return false;
}

bool bxr_error_null(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  bxr_verror_null(fmt, ap);
  va_end(ap);
  return false;
}

const char *bext_last_error(void) { return t_error; }
uint64_t bext_error_count(void) { return bxr_tls_errors; }

bool bext_set_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  bxr_verror(fmt ? fmt : "(no message)", ap);
  va_end(ap);
  return false;
}

bool bext_set_null_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  bxr_verror_null(fmt ? fmt : "(no message)", ap);
  va_end(ap);
  return false;
}

void bext_clear_error(void) { t_error[0] = 0; }

const char *bxr_describe_shape(int rank, const int64_t *shape, char *buf, size_t n) {
  size_t len = 0;
  if (n == 0) return buf;
  buf[0] = 0;
  len += (size_t)snprintf(buf + len, n - len, "[");
  for (int i = 0; i < rank && len < n; i++)
    len += (size_t)snprintf(buf + len, n - len, i ? ",%lld" : "%lld", (long long)shape[i]);
  if (len < n) snprintf(buf + len, n - len, "]");
  return buf;
}

const char *bxr_describe(const bext_tensor *t, char *buf, size_t n) {
  if (!t) {
    snprintf(buf, n, "NULL");
    return buf;
  }
  return bxr_describe_spec(&t->spec, buf, n);
}

const char *bxr_describe_spec(const bext_spec *s, char *buf, size_t n) {
  char sh[160];
  bxr_describe_shape(s->rank, s->shape, sh, sizeof sh);
  snprintf(buf, n, "%s %s", sh, bext_dtype_name(s->dtype));
  return buf;
}

/* ------------------------------------------------------------------ panic */

static void default_panic(const char *msg, const char *file, int line, void *ud) {
  (void)ud;
  fprintf(stderr, "bext panic at %s:%d: %s\n", file, line, msg);
  fflush(stderr);
}

static bext_panic_fn g_panic = default_panic;
static void *g_panic_ud;

void bext_set_panic_hook(bext_panic_fn fn, void *ud) {
  g_panic = fn ? fn : default_panic;
  g_panic_ud = fn ? ud : NULL;
}

static _Noreturn void vpanic(const char *file, int line, const char *fmt, va_list ap) {
  char msg[1024];
  vsnprintf(msg, sizeof msg, fmt ? fmt : "(no message)", ap);
  g_panic(msg, file ? file : "?", line, g_panic_ud);
  /* A hook that returns leaves the program in a broken state: abort. */
  abort();
}

void bxr_panic(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vpanic(file, line, fmt, ap);
}

void bext_panic(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vpanic(file, line, fmt, ap);
}
