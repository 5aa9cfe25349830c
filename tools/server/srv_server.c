/* srv_server.c — bext-server's listener (server.h): accepts connections
 * on its own thread, runs each session on a thread of its own (a slow
 * session never holds up another), counts what every session holds, and
 * stops cleanly: closing the listener and every stream ends each
 * session's wait, and each session frees its tensors as it ends. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"
#include "srv_internal.h"

struct slot {
  struct bxsv_server *srv;
  struct bxrm_io io;
  struct bxrm_reader rd;       /* the session thread's read-ahead */
  pthread_t th;
  uint64_t id;
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
};

void bxsv_config_defaults(struct bxsv_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->listen = "tcp://127.0.0.1:7878";
  cfg->device = "flex";
  cfg->max_frame = BXRM_DEFAULT_MAX_FRAME;
  cfg->max_tensors = BXRM_DEFAULT_MAX_TENSORS;
  cfg->max_bytes = BXRM_DEFAULT_MAX_BYTES;
  cfg->max_sessions = BXRM_DEFAULT_MAX_SESSIONS;
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

/* Refuses a connection past --max-sessions with a Fatal, then closes it. */
static void refuse(struct bxsv_server *srv, nng_stream *st) {
  struct bxrm_io io;
  if (bxrm_io_init(&io, st)) {
    char why[160];
    snprintf(why, sizeof why, "the server has %d sessions open, its limit (--max-sessions)", srv->cfg.max_sessions);
    Bxrm__Fatal f = BXRM__FATAL__INIT;
    f.reason = why;
    Bxrm__Reply r = BXRM__REPLY__INIT;
    r.body_case = BXRM__REPLY__BODY_FATAL;
    r.fatal = &f;
    struct bxrm_buf b = {0};
    if (bxrm_buf_frame(&b, &r.base, 0)) bxrm_io_write(&io, b.p, b.len, 1000);
    bxrm_buf_free(&b);
    bxsv_log(&srv->cfg, "connection refused: %s", why);
    bxrm_io_fini(&io);
  } else nng_stream_free(st);
  bxsv_count_refused(srv);
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
    pthread_mutex_lock(&srv->mu);
    reap(srv, false);
    if (atomic_load(&srv->open) >= (uint64_t)srv->cfg.max_sessions) {
      pthread_mutex_unlock(&srv->mu);
      refuse(srv, st);
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
    bxsv_log(&srv->cfg, "session %llu opened", (unsigned long long)sl->id);
  }
  return NULL;
}

struct bxsv_server *bxsv_start(const struct bxsv_config *cfg) {
  if (cfg->token_len > BXRM_MAX_TOKEN) return bxr_error("bext-server: token longer than %d bytes", BXRM_MAX_TOKEN), NULL;
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
  nng_aio_free(srv->accept_aio);
  nng_stream_listener_free(srv->l);
  pthread_mutex_destroy(&srv->mu);
  free(srv);
}
