/* raw_session.h — the protocol spoken by hand, for tests that need what
 * the Remote backend never sends or never answers: a client session over
 * a raw stream (frames built here, replies decoded here: bad frames, a
 * watcher asking a server for its Stats) and the server end of a fake
 * server (one accepted stream, requests read with their raw bytes
 * skipped).  Header-only, for tests/remote; every failure of the test's
 * own plumbing is a Criterion assertion. */
#ifndef BEXT_REMOTE_RAW_SESSION_H
#define BEXT_REMOTE_RAW_SESSION_H

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <time.h>

#include "rm_wire.h"

/* Waits on a raw stream: long enough for a loaded 2-core machine, short
 * enough that a server that never answers fails the test, not hangs it. */
#define RS_WAIT_MS 5000

struct raw {
  struct bxrm_io io;
};

/* ------------------------------------------------------------ client end */

/* Connects to addr, sending nothing. */
static inline void raw_dial(struct raw *r, const char *addr) {
  nng_stream *st;
  cr_assert_eq(bxrm_dial(addr, RS_WAIT_MS, &st), 0, "connecting to %s", addr);
  cr_assert(bxrm_io_init(&r->io, st));
}

/* One frame: req's control message, then raw_len bytes of raw, the
 * header announcing `claim` raw bytes (a liar's claim when it differs). */
static inline void raw_send(struct raw *r, const Bxrm__Request *req, const void *raw, uint64_t raw_len,
                            uint64_t claim) {
  struct bxrm_buf b = {0};
  cr_assert(bxrm_buf_frame(&b, &req->base, claim));
  cr_assert_eq(bxrm_io_write2(&r->io, b.p, b.len, raw, raw_len, RS_WAIT_MS), 0);
  bxrm_buf_free(&b);
}

static inline void raw_hello(struct raw *r, uint32_t version) {
  Bxrm__Hello h = BXRM__HELLO__INIT;
  h.version = version;
  Bxrm__Request q = BXRM__REQUEST__INIT;
  q.body_case = BXRM__REQUEST__BODY_HELLO;
  q.hello = &h;
  raw_send(r, &q, NULL, 0, 0);
}

/* The next reply, its raw bytes skipped (NULL when the connection ended
 * instead).  Free it with bxrm__reply__free_unpacked. */
static inline Bxrm__Reply *raw_reply(struct raw *r) {
  uint8_t hb[BXRM_HEADER_BYTES];
  if (bxrm_io_read(&r->io, hb, sizeof hb, RS_WAIT_MS)) return NULL;
  struct bxrm_header h = bxrm_header_get(hb);
  cr_assert_leq(h.ctl, BXRM_MAX_CONTROL);
  uint8_t *p = malloc(h.ctl + 1);
  cr_assert_eq(bxrm_io_read(&r->io, p, h.ctl, RS_WAIT_MS), 0);
  Bxrm__Reply *rep = bxrm__reply__unpack(NULL, h.ctl, p);
  free(p);
  cr_assert(rep, "a reply that decodes");
  uint8_t sink[4096];
  for (uint64_t left = h.raw; left;) {
    size_t k = left < sizeof sink ? (size_t)left : sizeof sink;
    cr_assert_eq(bxrm_io_read(&r->io, sink, k, RS_WAIT_MS), 0);
    left -= k;
  }
  return rep;
}

/* Connects and says Hello; the server's Welcome must follow. */
static inline void raw_open(struct raw *r, const char *addr) {
  raw_dial(r, addr);
  raw_hello(r, BXRM_PROTOCOL_VERSION);
  Bxrm__Reply *w = raw_reply(r);
  cr_assert(w && w->body_case == BXRM__REPLY__BODY_WELCOME, "a Welcome from %s", addr);
  bxrm__reply__free_unpacked(w, NULL);
}

/* The server's open sessions, live tensors and their bytes (every
 * session), from a Stats request. */
struct raw_stats {
  uint64_t sessions, tensors, bytes;
};

static inline struct raw_stats raw_stats(struct raw *r) {
  Bxrm__Stats s = BXRM__STATS__INIT;
  Bxrm__Request q = BXRM__REQUEST__INIT;
  q.body_case = BXRM__REQUEST__BODY_STATS;
  q.stats = &s;
  raw_send(r, &q, NULL, 0, 0);
  Bxrm__Reply *rep = raw_reply(r);
  cr_assert(rep && rep->body_case == BXRM__REPLY__BODY_STATS, "a Stats request is answered");
  struct raw_stats st = {rep->stats->sessions, rep->stats->tensors, rep->stats->bytes};
  bxrm__reply__free_unpacked(rep, NULL);
  return st;
}

/* Waits (up to 10 s: sessions end on the server's threads) for the
 * server's counts to equal `want`; *got: the last counts seen. */
static inline bool raw_settles(struct raw *r, struct raw_stats want, struct raw_stats *got) {
  for (int i = 0; i < 1000; i++) {
    *got = raw_stats(r);
    if (got->sessions == want.sessions && got->tensors == want.tensors && got->bytes == want.bytes) return true;
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  return false;
}

/* ------------------------------------------------------------ server end */

/* A fake server: a listener on an ipc socket in a fresh directory and
 * the thread that serves it. */
struct raw_fake {
  char dir[64], addr[128], spec[160];   /* spec: "remote:" addr, for bext_device_get */
  nng_stream_listener *l;
  pthread_t th;
};

/* Listens, then runs `serve(arg)` on a thread of its own (it accepts
 * with raw_accept(f->l, ...)). */
static inline void raw_fake_start(struct raw_fake *f, void *(*serve)(void *), void *arg) {
  snprintf(f->dir, sizeof f->dir, "/tmp/bext-remote-XXXXXX");
  cr_assert(mkdtemp(f->dir));
  snprintf(f->addr, sizeof f->addr, "ipc://%s/s", f->dir);
  snprintf(f->spec, sizeof f->spec, "remote:%s", f->addr);
  cr_assert_eq(nng_stream_listener_alloc(&f->l, f->addr), 0);
  cr_assert_eq(nng_stream_listener_listen(f->l), 0);
  cr_assert_eq(pthread_create(&f->th, NULL, serve, arg), 0);
}

/* Waits for the serving thread to end, then removes the listener and
 * its socket. */
static inline void raw_fake_stop(struct raw_fake *f) {
  pthread_join(f->th, NULL);
  nng_stream_listener_free(f->l);
  char sock[160];
  snprintf(sock, sizeof sock, "%s/s", f->dir);
  unlink(sock);
  rmdir(f->dir);
}

/* Accepts one connection on l (within 10 s); false when none came. */
static inline bool raw_accept(nng_stream_listener *l, struct bxrm_io *io) {
  nng_aio *aio;
  if (nng_aio_alloc(&aio, NULL, NULL)) return false;
  nng_aio_set_timeout(aio, 10000);
  nng_stream_listener_accept(l, aio);
  nng_aio_wait(aio);
  bool ok = nng_aio_result(aio) == 0 && bxrm_io_init(io, nng_aio_get_output(aio, 0));
  nng_aio_free(aio);
  return ok;
}

/* The client's next request, an upload's raw bytes skipped; NULL when the
 * stream ended or sent what no client sends.  No assertions: fake servers
 * run on threads of their own. */
static inline Bxrm__Request *raw_request(struct bxrm_io *io) {
  uint8_t hb[BXRM_HEADER_BYTES];
  if (bxrm_io_read(io, hb, sizeof hb, RS_WAIT_MS)) return NULL;
  struct bxrm_header h = bxrm_header_get(hb);
  if (h.ctl > BXRM_MAX_CONTROL) return NULL;
  uint8_t *p = malloc(h.ctl + 1);
  Bxrm__Request *q = p && bxrm_io_read(io, p, h.ctl, RS_WAIT_MS) == 0 ? bxrm__request__unpack(NULL, h.ctl, p) : NULL;
  free(p);
  uint8_t sink[4096];
  for (uint64_t left = h.raw; q && left;) {
    size_t k = left < sizeof sink ? (size_t)left : sizeof sink;
    if (bxrm_io_read(io, sink, k, RS_WAIT_MS)) {
      bxrm__request__free_unpacked(q, NULL);
      return NULL;
    }
    left -= k;
  }
  return q;
}

/* A reply frame whose header announces `claim` raw bytes, of which the
 * first raw_len (at raw) are written. */
static inline bool raw_answer(struct bxrm_io *io, const Bxrm__Reply *rep, const void *raw, uint64_t raw_len,
                              uint64_t claim) {
  struct bxrm_buf b = {0};
  bool ok = bxrm_buf_frame(&b, &rep->base, claim) && bxrm_io_write2(io, b.p, b.len, raw, raw_len, RS_WAIT_MS) == 0;
  bxrm_buf_free(&b);
  return ok;
}

/* The Welcome of a fake server hosting `device` (protocol version 1;
 * `extensions`: it runs extension ops and carries value results). */
static inline bool raw_welcome(struct bxrm_io *io, const char *device, bool extensions) {
  Bxrm__Welcome w = BXRM__WELCOME__INIT;
  w.version = BXRM_PROTOCOL_VERSION, w.device = (char *)device, w.extensions = w.ext_values = extensions;
  Bxrm__Reply r = BXRM__REPLY__INIT;
  r.body_case = BXRM__REPLY__BODY_WELCOME, r.welcome = &w;
  return raw_answer(io, &r, NULL, 0, 0);
}

#endif /* BEXT_REMOTE_RAW_SESSION_H */
