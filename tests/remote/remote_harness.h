/* remote_harness.h — starts bext-server for a test: a child process of
 * the built program ($BEXT_BIN_DIR/bext-server) listening on an ipc
 * socket in a fresh temporary directory (no port to race for), or on
 * loopback TCP at a port the server picks (rh_start_tcp), and stops it.
 * Header-only, for tests/remote, the conformance matrix and bext-bench's
 * remote rows. */
#ifndef BEXT_REMOTE_HARNESS_H
#define BEXT_REMOTE_HARNESS_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct rh_server {
  pid_t pid;
  char dir[64];
  char addr[128];      /* "ipc:///tmp/bext-remote-XXXXXX/s" or "tcp://127.0.0.1:PORT" */
  int port;            /* the TCP port (rh_start_tcp), else 0 */
  char spec[160];      /* "remote:" addr */
  char err[1024];      /* why rh_start failed */
};

/* Starts `PROGRAM --listen ADDR --device DEV` plus the extra arguments
 * (NULL-terminated), PROGRAM being bext-server or another server program
 * built in $BEXT_BIN_DIR (one linked with an extension: bext_server_main),
 * ADDR ipc://DIR/s or (tcp) tcp://127.0.0.1:0, the port it picked read
 * from its ready line; waits (up to 10 s) for its "listening" line.  False
 * with s->err set on failure. */
static inline bool rh_start_at(struct rh_server *s, const char *program, const char *device,
                               const char *const *extra, bool tcp) {
  memset(s, 0, sizeof *s);
  const char *bin_dir = getenv("BEXT_BIN_DIR");
  if (!bin_dir) {
    snprintf(s->err, sizeof s->err, "BEXT_BIN_DIR is not set (ctest sets it)");
    return false;
  }
  if (tcp) {
    snprintf(s->addr, sizeof s->addr, "tcp://127.0.0.1:0");
  } else {
    snprintf(s->dir, sizeof s->dir, "/tmp/bext-remote-XXXXXX");
    if (!mkdtemp(s->dir)) {
      snprintf(s->err, sizeof s->err, "mkdtemp: %s", strerror(errno));
      return false;
    }
    snprintf(s->addr, sizeof s->addr, "ipc://%s/s", s->dir);
  }
  char bin[512];
  snprintf(bin, sizeof bin, "%s/%s", bin_dir, program);
  const char *argv[24] = {bin, "--listen", s->addr, "--device", device};
  int n = 5;
  for (int i = 0; extra && extra[i] && n < 22; i++) argv[n++] = extra[i];
  argv[n] = NULL;
  int out[2];
  if (pipe(out)) {
    snprintf(s->err, sizeof s->err, "pipe: %s", strerror(errno));
    return false;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  int rv = posix_spawn(&s->pid, bin, &fa, NULL, (char *const *)argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(out[1]);
  if (rv) {
    close(out[0]);
    snprintf(s->err, sizeof s->err, "cannot start %s: %s", bin, strerror(rv));
    return false;
  }
  /* The ready line, within 10 s. */
  char line[512];
  size_t len = 0;
  bool ready = false;
  for (int waited = 0; waited < 10000 && !ready;) {
    struct pollfd p = {.fd = out[0], .events = POLLIN};
    int k = poll(&p, 1, 100);
    waited += 100;
    if (k <= 0) continue;
    ssize_t r = read(out[0], line + len, sizeof line - 1 - len);
    if (r <= 0) break;
    len += (size_t)r;
    line[len] = 0;
    const char *l = strstr(line, "listening on");
    ready = l && strchr(l, '\n');   /* the whole line: it holds the port */
  }
  close(out[0]);
  if (!ready) {
    snprintf(s->err, sizeof s->err, "%s did not say it was listening (output: '%.*s')", program, (int)len, line);
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
    s->pid = 0;
    return false;
  }
  if (tcp) {
    /* "... listening on tcp://127.0.0.1:0 (port N), ..." */
    const char *p = strstr(line, "(port ");
    s->port = p ? atoi(p + 6) : 0;
    if (s->port <= 0) {
      snprintf(s->err, sizeof s->err, "bext-server did not say its port (output: '%.*s')", (int)len, line);
      kill(s->pid, SIGKILL);
      waitpid(s->pid, NULL, 0);
      s->pid = 0;
      return false;
    }
    snprintf(s->addr, sizeof s->addr, "tcp://127.0.0.1:%d", s->port);
  }
  snprintf(s->spec, sizeof s->spec, "remote:%s", s->addr);
  return true;
}

/* bext-server itself (no extension ops linked in), on an ipc socket. */
static inline bool rh_start(struct rh_server *s, const char *device, const char *const *extra) {
  return rh_start_at(s, "bext-server", device, extra, false);
}

/* Another server program of $BEXT_BIN_DIR, on an ipc socket. */
static inline bool rh_start_program(struct rh_server *s, const char *program, const char *device,
                                    const char *const *extra) {
  return rh_start_at(s, program, device, extra, false);
}

/* bext-server on loopback TCP, at the port the server picks (s->port). */
static inline bool rh_start_tcp(struct rh_server *s, const char *device, const char *const *extra) {
  return rh_start_at(s, "bext-server", device, extra, true);
}
/* Stops the server (SIGSTOP: alive, connected, silent) and waits until
 * the kernel says it is stopped (delivery is asynchronous: a server on
 * the other core could still answer a frame or two); false after 1 s. */
static inline bool rh_pause(struct rh_server *s) {
  kill(s->pid, SIGSTOP);
  for (int i = 0; i < 200; i++) {
    char path[64], st[512] = "";
    snprintf(path, sizeof path, "/proc/%d/stat", (int)s->pid);
    FILE *f = fopen(path, "r");
    if (f) {
      if (!fgets(st, sizeof st, f)) st[0] = 0;
      fclose(f);
    }
    char *p = strrchr(st, ')');
    if (p && p[1] == ' ' && p[2] == 'T') return true;
    struct timespec ts = {0, 5 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  return false;
}

/* Sends sig and waits for the server to exit (SIGKILL after 5 s);
 * returns its wait status.  Removes the directory. */
static inline int rh_stop(struct rh_server *s, int sig) {
  int st = -1;
  if (s->pid > 0) {
    kill(s->pid, sig);
    for (int i = 0; i < 500; i++) {
      if (waitpid(s->pid, &st, WNOHANG) == s->pid) break;
      if (i == 499) {
        kill(s->pid, SIGKILL);
        waitpid(s->pid, &st, 0);
      }
      struct timespec ts = {0, 10 * 1000 * 1000};
      nanosleep(&ts, NULL);
    }
    s->pid = 0;
  }
  if (s->dir[0]) {
    char sock[160];
    snprintf(sock, sizeof sock, "%s/s", s->dir);
    unlink(sock);
    rmdir(s->dir);
  }
  return st;
}

#endif /* BEXT_REMOTE_HARNESS_H */
