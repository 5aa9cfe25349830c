/* srv_server.c — bext-server's listener (server.h): accepts connections
 * on its own thread, runs each session on a thread of its own (a slow
 * session never holds up another), counts what every session holds, and
 * stops cleanly: closing the listener and every stream ends each
 * session's wait, and each session frees its tensors as it ends.  Two
 * limits guard the door: sessions open at once (--max-sessions) and, so
 * one client cannot take them all, sessions per client address
 * (--max-conns-per-client). */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server.h"
#include "srv_internal.h"

struct slot {
  struct bxsv_server *srv;
  struct bxrm_io io;
  struct bxrm_reader rd;       /* the session thread's read-ahead */
  pthread_t th;
  uint64_t id;
  char peer[64];               /* who connected: peer_of() */
  atomic_bool done;            /* its thread has finished: join and free it */
  struct slot *next;
};

struct bxsv_server {
  struct bxsv_config cfg;
  uint8_t token[BXRM_MAX_TOKEN];
  struct bext_device *dev;
  nng_stream_listener *l;
  nng_aio *accept_aio;
  pthread_t accept_th;
  int port;
  pthread_mutex_t mu;          /* guards slots */
  struct slot *slots;
  atomic_bool stopping;
  _Atomic uint64_t open, tensors, bytes, total, refused, next_id;
  atomic_int refusing;         /* refusal threads still lingering: stop waits for them */
};

void bxsv_config_defaults(struct bxsv_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->listen = "tcp://127.0.0.1:7878";
  cfg->device = "flex";
  cfg->max_frame = BXRM_DEFAULT_MAX_FRAME;
  cfg->max_tensors = BXRM_DEFAULT_MAX_TENSORS;
  cfg->max_bytes = BXRM_DEFAULT_MAX_BYTES;
  cfg->max_sessions = BXRM_DEFAULT_MAX_SESSIONS;
  cfg->max_conns_per_client = BXRM_DEFAULT_MAX_CONNS_PER_CLIENT;
  cfg->frame_timeout_ms = 10000;
}

void bxsv_log(const struct bxsv_config *cfg, const char *fmt, ...) {
  if (!cfg->log) return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  cfg->log(cfg->log_ctx, line);
}

void bxsv_count(struct bxsv_server *srv, int64_t tensors, int64_t bytes) {
  atomic_fetch_add_explicit(&srv->tensors, (uint64_t)tensors, memory_order_relaxed);
  atomic_fetch_add_explicit(&srv->bytes, (uint64_t)bytes, memory_order_relaxed);
}

void bxsv_count_refused(struct bxsv_server *srv) { atomic_fetch_add_explicit(&srv->refused, 1, memory_order_relaxed); }

void bxsv_stats(struct bxsv_server *srv, struct bxsv_stats *st) {
  st->sessions = atomic_load(&srv->open);
  st->tensors = atomic_load(&srv->tensors);
  st->bytes = atomic_load(&srv->bytes);
  st->sessions_total = atomic_load(&srv->total);
  st->sessions_refused = atomic_load(&srv->refused);
}

int bxsv_port(const struct bxsv_server *srv) { return srv->port; }

/* A session's port over its stream: no deadline between frames (a client
 * may idle), the frame timeout within one and for every reply.  Reads go
 * through the slot's read-ahead: a client streams many small op frames
 * back to back, and one receive per batch instead of two per frame (each a
 * hand-off to nng's I/O thread and back) is most of a streamed op's cost
 * on the server (docs/remote.md, Speed). */
static int port_read(void *ctx, void *buf, size_t n, bool started) {
  struct slot *sl = ctx;
  return bxrm_io_read_buffered(&sl->io, &sl->rd, buf, n,
                               started ? sl->srv->cfg.frame_timeout_ms : NNG_DURATION_INFINITE);
}
static int port_write(void *ctx, const void *buf, size_t n) {
  struct slot *sl = ctx;
  return bxrm_io_write(&sl->io, buf, n, sl->srv->cfg.frame_timeout_ms);
}

static void *session_main(void *arg) {
  struct slot *sl = arg;
  struct bxsv_server *srv = sl->srv;
  struct bxsv_session *s =
      bxsv_session_new(&srv->cfg, srv->dev, srv, sl->id, (struct bxsv_port){sl, port_read, port_write});
  if (s) {
    const char *why = bxsv_session_run(s);
    bxsv_log(&srv->cfg, "session %llu ended: %s", (unsigned long long)sl->id, why);
    bxsv_session_free(s);
  }
  bxrm_io_close(&sl->io);
  bxrm_reader_free(&sl->rd);
  atomic_fetch_sub(&srv->open, 1);
  atomic_store_explicit(&sl->done, true, memory_order_release);
  return NULL;
}

/* Joins and frees finished sessions (all of them when `all`).  srv->mu held. */
static void reap(struct bxsv_server *srv, bool all) {
  for (struct slot **p = &srv->slots; *p;) {
    struct slot *sl = *p;
    if (all || atomic_load_explicit(&sl->done, memory_order_acquire)) {
      pthread_join(sl->th, NULL);
      bxrm_io_fini(&sl->io);
      *p = sl->next;
      free(sl);
    } else p = &sl->next;
  }
}

/* Who a connection comes from, for --max-conns-per-client: a TCP peer's
 * IP address (not its port: one machine's connections count together),
 * an ipc peer's user id (every ipc peer is on this machine). */
static void peer_of(nng_stream *st, char *buf, size_t n) {
  nng_sockaddr sa;
  uint64_t uid;
  if (nng_stream_get_addr(st, NNG_OPT_REMADDR, &sa) == 0 && sa.s_family == NNG_AF_INET &&
      inet_ntop(AF_INET, &sa.s_in.sa_addr, buf, (socklen_t)n))
    return;
  if (nng_stream_get_addr(st, NNG_OPT_REMADDR, &sa) == 0 && sa.s_family == NNG_AF_INET6 &&
      inet_ntop(AF_INET6, sa.s_in6.sa_addr, buf, (socklen_t)n))
    return;
  if (nng_stream_get_uint64(st, NNG_OPT_IPC_PEER_UID, &uid) == 0) {
    snprintf(buf, n, "ipc user %llu", (unsigned long long)uid);
    return;
  }
  snprintf(buf, n, "a peer of unknown address");
}

/* How many open sessions came from peer.  srv->mu held. */
static int sessions_of(const struct bxsv_server *srv, const char *peer) {
  int k = 0;
  for (const struct slot *sl = srv->slots; sl; sl = sl->next)
    k += !atomic_load_explicit(&sl->done, memory_order_acquire) && !strcmp(sl->peer, peer);
  return k;
}

/* A refused connection, answered on a thread of its own: the Fatal is
 * written, then the thread waits (up to REFUSE_LINGER_MS) for the client
 * to read it and hang up.  Closing at once would race the client's
 * Hello: a peer that sees the close before it reads (nng reports a hang-up
 * without reading what is pending) would lose the reason. */
#define REFUSE_LINGER_MS 1000
#define MAX_REFUSING 16        /* past this many at once, close without lingering */

struct refusal {
  struct bxsv_server *srv;
  struct bxrm_io io;
  struct bxrm_buf fatal;
};

static void *refuse_main(void *arg) {
  struct refusal *rf = arg;
  uint8_t scratch[4096];
  if (bxrm_io_write(&rf->io, rf->fatal.p, rf->fatal.len, REFUSE_LINGER_MS) == 0)
    bxrm_io_read(&rf->io, scratch, sizeof scratch, REFUSE_LINGER_MS);   /* ends when the client hangs up */
  bxrm_io_fini(&rf->io);
  bxrm_buf_free(&rf->fatal);
  atomic_fetch_sub(&rf->srv->refusing, 1);
  free(rf);
  return NULL;
}

/* Refuses a connection past a limit with a Fatal saying why (the client
 * reports it) and logs it. */
static void refuse(struct bxsv_server *srv, nng_stream *st, const char *why) {
  bxsv_log(&srv->cfg, "connection refused: %s", why);
  bxsv_count_refused(srv);
  struct refusal *rf = calloc(1, sizeof *rf);
  if (!rf || !bxrm_io_init(&rf->io, st)) {
    free(rf);
    nng_stream_free(st);
    return;
  }
  rf->srv = srv;
  Bxrm__Fatal f = BXRM__FATAL__INIT;
  f.reason = (char *)why;
  Bxrm__Reply r = BXRM__REPLY__INIT;
  r.body_case = BXRM__REPLY__BODY_FATAL;
  r.fatal = &f;
  bool framed = bxrm_buf_frame(&rf->fatal, &r.base, 0);
  bool started = false;
  if (framed) {
    if (atomic_fetch_add(&srv->refusing, 1) < MAX_REFUSING) {
      pthread_t th;
      pthread_attr_t at;
      if (!pthread_attr_init(&at)) {
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        started = !pthread_create(&th, &at, refuse_main, rf);
        pthread_attr_destroy(&at);
      }
    }
    if (!started) atomic_fetch_sub(&srv->refusing, 1);
  }
  if (started) return;
  /* too many at once (a flood) or no thread: the reason, then the close */
  if (framed) bxrm_io_write(&rf->io, rf->fatal.p, rf->fatal.len, 100);
  bxrm_io_fini(&rf->io);
  bxrm_buf_free(&rf->fatal);
  free(rf);
}

static void *accept_main(void *arg) {
  struct bxsv_server *srv = arg;
  for (;;) {
    nng_stream_listener_accept(srv->l, srv->accept_aio);
    nng_aio_wait(srv->accept_aio);
    int rv = nng_aio_result(srv->accept_aio);
    if (atomic_load(&srv->stopping)) {
      if (!rv) nng_stream_free(nng_aio_get_output(srv->accept_aio, 0));
      break;
    }
    if (rv) {
      if (rv == NNG_ECLOSED) break;
      bxsv_log(&srv->cfg, "accept failed: %s", nng_strerror(rv));
      continue;
    }
    nng_stream *st = nng_aio_get_output(srv->accept_aio, 0);
    nng_stream_set_bool(st, NNG_OPT_TCP_NODELAY, true);
    char peer[64], why[200];
    peer_of(st, peer, sizeof peer);
    pthread_mutex_lock(&srv->mu);
    reap(srv, false);
    int mine = sessions_of(srv, peer);
    why[0] = 0;
    if (atomic_load(&srv->open) >= (uint64_t)srv->cfg.max_sessions)
      snprintf(why, sizeof why, "the server has %d sessions open, its limit (--max-sessions)", srv->cfg.max_sessions);
    else if (mine >= srv->cfg.max_conns_per_client)
      snprintf(why, sizeof why, "%s has %d sessions open, the limit per client (--max-conns-per-client %d)", peer,
               mine, srv->cfg.max_conns_per_client);
    if (why[0]) {
      pthread_mutex_unlock(&srv->mu);
      refuse(srv, st, why);
      continue;
    }
    struct slot *sl = calloc(1, sizeof *sl);
    if (!sl || !bxrm_io_init(&sl->io, st)) {
      free(sl);
      nng_stream_free(st);
      pthread_mutex_unlock(&srv->mu);
      bxsv_log(&srv->cfg, "connection dropped: out of memory");
      continue;
    }
    sl->srv = srv;
    snprintf(sl->peer, sizeof sl->peer, "%s", peer);
    sl->id = atomic_fetch_add(&srv->next_id, 1) + 1;
    atomic_fetch_add(&srv->open, 1);
    atomic_fetch_add(&srv->total, 1);
    if (pthread_create(&sl->th, NULL, session_main, sl)) {
      atomic_fetch_sub(&srv->open, 1);
      bxrm_io_fini(&sl->io);
      free(sl);
      pthread_mutex_unlock(&srv->mu);
      bxsv_log(&srv->cfg, "connection dropped: no thread for it");
      continue;
    }
    sl->next = srv->slots;
    srv->slots = sl;
    pthread_mutex_unlock(&srv->mu);
    bxsv_log(&srv->cfg, "session %llu opened (%s)", (unsigned long long)sl->id, peer);
  }
  return NULL;
}

struct bxsv_server *bxsv_start(const struct bxsv_config *cfg) {
  if (cfg->token_len > BXRM_MAX_TOKEN) return bxr_error("bext-server: token longer than %d bytes", BXRM_MAX_TOKEN), NULL;
  if (cfg->max_sessions <= 0 || cfg->max_conns_per_client <= 0)
    return bxr_error("bext-server: the session limits must be positive (max_sessions %d, max_conns_per_client %d)",
                     cfg->max_sessions, cfg->max_conns_per_client), NULL;
  const bext_device *d = bext_device_get(cfg->device);
  struct bext_device *dev = d ? bxr_device_resolve(d, "bext-server") : NULL;
  if (!dev) return NULL;
  struct bxsv_server *srv = calloc(1, sizeof *srv);
  if (!srv) return bxr_error("bext-server: out of memory"), NULL;
  srv->cfg = *cfg;
  if (cfg->token) {
    memcpy(srv->token, cfg->token, cfg->token_len);
    srv->cfg.token = srv->token;
  }
  srv->dev = dev;
  pthread_mutex_init(&srv->mu, NULL);
  int rv = nng_stream_listener_alloc(&srv->l, cfg->listen);
  if (!rv) rv = nng_stream_listener_listen(srv->l);
  if (!rv) rv = nng_aio_alloc(&srv->accept_aio, NULL, NULL);
  if (rv) {
    bxr_error("bext-server: cannot listen on '%s': %s", cfg->listen, nng_strerror(rv));
    if (srv->l) nng_stream_listener_free(srv->l);
    pthread_mutex_destroy(&srv->mu);
    free(srv);
    return NULL;
  }
  if (strncmp(cfg->listen, "tcp", 3) == 0) nng_stream_listener_get_int(srv->l, NNG_OPT_TCP_BOUND_PORT, &srv->port);
  if (pthread_create(&srv->accept_th, NULL, accept_main, srv)) {
    bxr_error("bext-server: no thread for the listener");
    nng_aio_free(srv->accept_aio);
    nng_stream_listener_free(srv->l);
    pthread_mutex_destroy(&srv->mu);
    free(srv);
    return NULL;
  }
  return srv;
}

void bxsv_stop(struct bxsv_server *srv) {
  if (!srv) return;
  atomic_store(&srv->stopping, true);
  nng_stream_listener_close(srv->l);
  nng_aio_stop(srv->accept_aio);
  pthread_join(srv->accept_th, NULL);
  pthread_mutex_lock(&srv->mu);
  for (struct slot *sl = srv->slots; sl; sl = sl->next) bxrm_io_close(&sl->io);
  reap(srv, true);
  pthread_mutex_unlock(&srv->mu);
  /* refusal threads end within their linger time (a write and a read) */
  while (atomic_load(&srv->refusing) > 0) {
    struct timespec ts = {0, 2 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  nng_aio_free(srv->accept_aio);
  nng_stream_listener_free(srv->l);
  pthread_mutex_destroy(&srv->mu);
  free(srv);
}
