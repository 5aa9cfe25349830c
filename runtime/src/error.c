/* error.c — thread-local error state (bext_last_error) and the panic hook
 * for programming errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor.h"

/* Default TLS model (not initial-exec like the small hot per-thread
 * words): 1 KiB would eat the static TLS surplus if libbext ever ends up
 * in a dlopen'ed object. */
static _Thread_local char t_error[1024];

bool bxr_verror(const char *fmt, va_list ap) {
  vsnprintf(t_error, sizeof t_error, fmt, ap);
  return false;
}

bool bxr_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  bxr_verror(fmt, ap);
  va_end(ap);
  return false;
}

const char *bext_last_error(void) { return t_error; }

bool bext_set_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  bxr_verror(fmt ? fmt : "(no message)", ap);
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
  char sh[160];
  bxr_describe_shape(t->rank, t->shape, sh, sizeof sh);
  snprintf(buf, n, "%s %s", sh, bext_dtype_name(t->dtype));
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
