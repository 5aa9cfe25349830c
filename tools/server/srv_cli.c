/* srv_cli.c — bext-server's command line (bext_server_main, public in
 * <bext/server.h>): flags, the token file, signals, the ready line.  The
 * program (srv_main.c) is this alone; a server program of your own, linked
 * with an extension's generated code so it runs that extension's ops,
 * calls it too (docs/remote.md).
 *
 *   bext-server --listen tcp://127.0.0.1:7878 --device flex
 *
 * Listens on loopback unless told otherwise.  Prints one line when ready
 * ("bext-server: listening on ADDR (port N), device DEV"), logs each
 * session's end and every refusal on stderr, and stops cleanly on SIGINT
 * or SIGTERM (every session ends and frees its tensors).  docs/remote.md. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bext/ext.h>
#include <bext/server.h>

#include "server.h"

static const char usage[] =
    "usage: bext-server [--listen ADDR] [--device DEV] [options]\n"
    "  --listen ADDR        tcp://HOST:PORT or ipc:///PATH (default tcp://127.0.0.1:7878; port 0: any)\n"
    "  --device DEV         the device stack to host: flex, flex+fusion, ndarray, libtorch:cpu ... (default flex)\n"
    "  --token-file PATH    clients must present this file's contents (BEXT_REMOTE_TOKEN)\n"
    "  --max-frame BYTES    raw bytes in one frame, i.e. the largest upload (default 1073741824)\n"
    "  --max-tensors N      live tensors per session (default 1048576)\n"
    "  --max-bytes BYTES    live tensor bytes per session (default 17179869184)\n"
    "  --max-sessions N     sessions open at once (default 64)\n"
    "  --max-conns-per-client N\n"
    "                       sessions open at once from one client address (ipc: one user) (default 32)\n"
    "  --frame-timeout MS   how long the rest of a begun frame may take (default 10000)\n"
    "  --quiet              log nothing\n";

static void log_line(void *ctx, const char *line) {
  (void)ctx;
  time_t now = time(NULL);
  struct tm tm;
  char ts[32];
  strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
  fprintf(stderr, "%s bext-server: %s\n", ts, line);
}

/* The extension ops this program was built with (what clients may call
 * by id), one log line. */
static void log_extensions(const struct bxsv_config *cfg) {
  if (!cfg->log) return;
  const bext_ext_method *ms[64];
  int n = bext_ext_list(ms, 64);
  char line[1024];
  size_t k = (size_t)snprintf(line, sizeof line, "extension ops: %d%s", n, n ? " (" : " (none linked in)");
  for (int i = 0; i < n && i < 64 && k < sizeof line; i++)
    k += (size_t)snprintf(line + k, sizeof line - k, "%s%s", i ? ", " : "", ms[i]->what);
  if (n && k < sizeof line) snprintf(line + k, sizeof line - k, "%s)", n > 64 ? ", ..." : "");
  cfg->log(cfg->log_ctx, line);
}

static bool parse_u64(const char *s, uint64_t *out) {
  if (!s || !*s || *s == '-') return false;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end) return false;
  *out = v;
  return true;
}

/* The token file's contents, without one trailing newline. */
static bool read_token(const char *path, uint8_t *buf, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "bext-server: cannot open --token-file '%s': %s\n", path, strerror(errno));
    return false;
  }
  size_t n = fread(buf, 1, BXRM_MAX_TOKEN + 1, f);
  fclose(f);
  if (n > BXRM_MAX_TOKEN) {
    fprintf(stderr, "bext-server: --token-file '%s' is longer than %d bytes\n", path, BXRM_MAX_TOKEN);
    return false;
  }
  while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) n--;
  if (n == 0) {
    fprintf(stderr, "bext-server: --token-file '%s' is empty\n", path);
    return false;
  }
  *len = n;
  return true;
}

int bext_server_main(int argc, char **argv) {
  struct bxsv_config cfg;
  bxsv_config_defaults(&cfg);
  cfg.log = log_line;
  static uint8_t token[BXRM_MAX_TOKEN + 1];
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    uint64_t n = 0;
    bool num_ok = parse_u64(v, &n);
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(usage, stdout);
      return 0;
    } else if (!strcmp(a, "--quiet")) {
      cfg.log = NULL;
      continue;
    } else if (!v) {
      fprintf(stderr, "bext-server: %s needs a value\n%s", a, usage);
      return 2;
    } else if (!strcmp(a, "--listen")) cfg.listen = v;
    else if (!strcmp(a, "--device")) cfg.device = v;
    else if (!strcmp(a, "--token-file")) {
      if (!read_token(v, token, &cfg.token_len)) return 2;
      cfg.token = token;
    } else if (!strcmp(a, "--max-frame") && num_ok && n > 0) cfg.max_frame = n;
    else if (!strcmp(a, "--max-tensors") && num_ok && n > 0) cfg.max_tensors = n;
    else if (!strcmp(a, "--max-bytes") && num_ok && n > 0) cfg.max_bytes = n;
    else if (!strcmp(a, "--max-sessions") && num_ok && n > 0 && n <= 100000) cfg.max_sessions = (int)n;
    else if (!strcmp(a, "--max-conns-per-client") && num_ok && n > 0 && n <= 100000) cfg.max_conns_per_client = (int)n;
    else if (!strcmp(a, "--frame-timeout") && num_ok && n > 0 && n <= 3600000) cfg.frame_timeout_ms = (int)n;
    else {
      fprintf(stderr, "bext-server: bad option or value '%s %s'\n%s", a, v, usage);
      return 2;
    }
    i++;
  }
  /* Signals are taken by sigwait below: block them before any thread
   * starts, so every thread inherits the mask.  SIGPIPE: a client that
   * vanishes mid-reply is an error result, not a reason to die. */
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  /* An inherited SIG_IGN would discard them before sigwait sees them
   * (a parent that ignores SIGINT, e.g. a test runner). */
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  signal(SIGPIPE, SIG_IGN);

  struct bxsv_server *srv = bxsv_start(&cfg);
  if (!srv) {
    fprintf(stderr, "%s\n", bext_last_error());
    return 1;
  }
  printf("bext-server: listening on %s (port %d), device %s\n", cfg.listen, bxsv_port(srv), cfg.device);
  fflush(stdout);
  log_extensions(&cfg);
  int sig = 0;
  sigwait(&set, &sig);
  if (cfg.log) log_line(NULL, sig == SIGINT ? "SIGINT: stopping" : "SIGTERM: stopping");
  bxsv_stop(srv);
  return 0;
}
