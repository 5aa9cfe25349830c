/* inproc.h — a bext-server inside the test process (tools/server's
 * library on its own threads), on an ipc socket in a temporary
 * directory, with its log kept in memory so tests can check what the
 * server said when it refused something. */
#ifndef BEXT_REMOTE_INPROC_H
#define BEXT_REMOTE_INPROC_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server.h"

struct ip_server {
  struct bxsv_server *srv;
  struct bxsv_config cfg;
  char dir[64], addr[128], spec[160];
  pthread_mutex_t mu;
  char log[16384];
  size_t loglen;
};

static void ip_log(void *ctx, const char *line) {
  struct ip_server *s = ctx;
  pthread_mutex_lock(&s->mu);
  int n = snprintf(s->log + s->loglen, sizeof s->log - s->loglen, "%s\n", line);
  if (n > 0 && s->loglen + (size_t)n < sizeof s->log) s->loglen += (size_t)n;
  pthread_mutex_unlock(&s->mu);
}

/* The defaults, on ipc in a fresh directory, hosting device; `tune`
 * (may be NULL) adjusts the config before the start. */
static inline bool ip_start(struct ip_server *s, const char *device, void (*tune)(struct bxsv_config *)) {
  memset(s, 0, sizeof *s);
  pthread_mutex_init(&s->mu, NULL);
  snprintf(s->dir, sizeof s->dir, "/tmp/bext-remote-XXXXXX");
  if (!mkdtemp(s->dir)) return false;
  snprintf(s->addr, sizeof s->addr, "ipc://%s/s", s->dir);
  snprintf(s->spec, sizeof s->spec, "remote:%s", s->addr);
  bxsv_config_defaults(&s->cfg);
  s->cfg.listen = s->addr;
  s->cfg.device = device;
  s->cfg.log = ip_log;
  s->cfg.log_ctx = s;
  if (tune) tune(&s->cfg);
  s->srv = bxsv_start(&s->cfg);
  return s->srv != NULL;
}

static inline void ip_stop(struct ip_server *s) {
  bxsv_stop(s->srv);
  s->srv = NULL;
  char sock[160];
  snprintf(sock, sizeof sock, "%s/s", s->dir);
  unlink(sock);
  rmdir(s->dir);
  pthread_mutex_destroy(&s->mu);
}

/* Whether the log holds `what` (waits up to 2 s: sessions log as they end). */
static inline bool ip_logged(struct ip_server *s, const char *what) {
  for (int i = 0; i < 200; i++) {
    pthread_mutex_lock(&s->mu);
    bool found = strstr(s->log, what) != NULL;
    pthread_mutex_unlock(&s->mu);
    if (found) return true;
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  return false;
}

/* Waits (up to 2 s) until the server holds `sessions` sessions and
 * `tensors` tensors; fills st with the last reading. */
static inline bool ip_settles(struct ip_server *s, uint64_t sessions, uint64_t tensors, struct bxsv_stats *st) {
  for (int i = 0; i < 200; i++) {
    bxsv_stats(s->srv, st);
    if (st->sessions == sessions && st->tensors == tensors) return true;
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  return false;
}

#endif /* BEXT_REMOTE_INPROC_H */
