/* rm_client.c — the client end of a remote session (rm_client.h).
 *
 * Ops are appended to an output buffer as frames and written when it
 * holds BATCH bytes or when the client waits for a reply, so a chain of
 * small ops costs one write and one round trip at the read (burn-remote's
 * fire-and-forget tasks, batched).  Every wait is bounded: a server that
 * stops answering gives "remote session lost (... timed out ...)" after
 * BEXT_REMOTE_TIMEOUT_MS, a closed connection gives it at once. */
#include "rm_client.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BATCH ((size_t)64 << 10)      /* flush the output buffer past this */
#define RELEASE_BATCH 512             /* announce released ids in groups */
#define DIAL_TIMEOUT_MS 10000

/* The session is over: remember why (the first reason wins) and close
 * the stream.  c->mu held. */
static void lose(struct bxrm_conn *c, const char *fmt, ...) {
  if (!c->lost) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why, sizeof c->why, fmt, ap);
    va_end(ap);
    c->lost = true;
  }
  bxrm_io_close(&c->io);
}

static bool lost_error(const struct bxrm_conn *c, const char *api) {
  return bxr_error("%s: remote session lost (%s)", api, c->why);
}

/* nng's error as the reason a session ended. */
static void lose_io(struct bxrm_conn *c, int rv, const char *doing) {
  if (rv == NNG_ETIMEDOUT)
    lose(c, "remote:%s: no answer from the server within %d ms while %s", c->address, (int)c->timeout, doing);
  else if (rv == NNG_ECLOSED || rv == NNG_ECONNRESET || rv == NNG_ECONNSHUT)
    lose(c, "remote:%s: the server closed the connection while %s", c->address, doing);
  else lose(c, "remote:%s: %s while %s", c->address, nng_strerror(rv), doing);
}

/* Appends the pending Release frame.  c->mu held. */
static bool queue_releases(struct bxrm_conn *c) {
  if (c->nrel == 0) return true;
  Bxrm__Release rel = BXRM__RELEASE__INIT;
  rel.n_ids = c->nrel;
  rel.ids = c->rel;
  Bxrm__Request req = BXRM__REQUEST__INIT;
  req.body_case = BXRM__REQUEST__BODY_RELEASE;
  req.release = &rel;
  if (!bxrm_buf_frame(&c->out, &req.base, 0)) return false;
  c->nrel = 0;
  return true;
}

/* Writes the output buffer.  c->mu held. */
static bool flush(struct bxrm_conn *c, const char *api) {
  if (c->out.len == 0) return true;
  int rv = bxrm_io_write(&c->io, c->out.p, c->out.len, c->timeout);
  c->out.len = 0;
  if (rv) {
    lose_io(c, rv, "sending");
    return lost_error(c, api);
  }
  return true;
}

bool bxrm_conn_send(struct bxrm_conn *c, const char *api, const Bxrm__Request *req, const void *raw,
                    uint64_t raw_len, bool locked) {
  if (!locked) pthread_mutex_lock(&c->mu);
  bool ok = false;
  if (c->lost) {
    lost_error(c, api);
    goto out;
  }
  if (!bxrm_buf_frame(&c->out, &req->base, raw_len)) {
    bxr_error("%s: out of memory queueing a remote frame", api);
    goto out;
  }
  if (raw_len > 0) {
    /* Large raw parts go out straight from the caller's memory, after
     * what is queued (its header is the buffer's last frame). */
    if (raw_len <= 4096 && c->out.len + raw_len <= c->out.cap) {
      memcpy(c->out.p + c->out.len, raw, raw_len);
      c->out.len += raw_len;
    } else {
      int rv = bxrm_io_write2(&c->io, c->out.p, c->out.len, raw, raw_len, c->timeout);
      c->out.len = 0;
      if (rv) {
        lose_io(c, rv, "uploading");
        lost_error(c, api);
        goto out;
      }
    }
  }
  ok = c->out.len < BATCH || flush(c, api);
out:
  if (!locked) pthread_mutex_unlock(&c->mu);
  return ok;
}

/* Reads one reply frame; on a Fatal, the session is lost with the
 * server's reason.  c->mu held. */
static bool read_reply(struct bxrm_conn *c, const char *api, Bxrm__Reply **out, bxrm_raw_sink raw_for,
                       void *ctx) {
  uint8_t hb[BXRM_HEADER_BYTES];
  int rv = bxrm_io_read(&c->io, hb, sizeof hb, c->timeout);
  if (rv) {
    lose_io(c, rv, "waiting for a reply");
    return lost_error(c, api);
  }
  struct bxrm_header h = bxrm_header_get(hb);
  if (h.ctl > BXRM_MAX_CONTROL) {
    lose(c, "remote:%s: the server sent a control message of %u bytes (limit %u)", c->address, h.ctl,
         BXRM_MAX_CONTROL);
    return lost_error(c, api);
  }
  uint8_t *cb = malloc(h.ctl ? h.ctl : 1);
  if (!cb) return bxr_error("%s: out of memory", api);
  rv = bxrm_io_read(&c->io, cb, h.ctl, c->timeout);
  Bxrm__Reply *r = rv ? NULL : bxrm__reply__unpack(NULL, h.ctl, cb);
  free(cb);
  if (rv) {
    lose_io(c, rv, "reading a reply");
    return lost_error(c, api);
  }
  if (!r) {
    lose(c, "remote:%s: the server sent a malformed reply", c->address);
    return lost_error(c, api);
  }
  if (r->body_case == BXRM__REPLY__BODY_FATAL) {
    lose(c, "remote:%s: the server closed the session: %s", c->address, r->fatal->reason);
    bxrm__reply__free_unpacked(r, NULL);
    return lost_error(c, api);
  }
  if (h.raw > 0) {
    void *dst = raw_for ? raw_for(r, h.raw, ctx) : NULL;
    if (!dst) {
      lose(c, "remote:%s: the server sent %llu raw bytes the reply does not account for", c->address,
           (unsigned long long)h.raw);
      bxrm__reply__free_unpacked(r, NULL);
      return lost_error(c, api);
    }
    if ((rv = bxrm_io_read(&c->io, dst, h.raw, c->timeout))) {
      lose_io(c, rv, "downloading");
      bxrm__reply__free_unpacked(r, NULL);
      return lost_error(c, api);
    }
  }
  *out = r;
  return true;
}

bool bxrm_conn_call(struct bxrm_conn *c, const char *api, const Bxrm__Request *req, Bxrm__Reply **reply,
                    bxrm_raw_sink raw_for, void *ctx) {
  pthread_mutex_lock(&c->mu);
  bool ok = false;
  *reply = NULL;
  if (c->lost) lost_error(c, api);
  else if (!queue_releases(c) || !bxrm_buf_frame(&c->out, &req->base, 0))
    bxr_error("%s: out of memory queueing a remote frame", api);
  else if (flush(c, api)) ok = read_reply(c, api, reply, raw_for, ctx);
  pthread_mutex_unlock(&c->mu);
  return ok;
}

void bxrm_conn_forget(struct bxrm_conn *c, uint64_t id) {
  pthread_mutex_lock(&c->mu);
  if (!c->lost) {
    if (c->nrel == c->relcap) {
      size_t cap = c->relcap ? 2 * c->relcap : 64;
      uint64_t *p = realloc(c->rel, cap * sizeof *p);
      if (p) c->rel = p, c->relcap = cap;
    }
    /* Out of memory: the id stays on the server until the session ends. */
    if (c->nrel < c->relcap) c->rel[c->nrel++] = id;
    if (c->nrel >= RELEASE_BATCH) queue_releases(c);
  }
  pthread_mutex_unlock(&c->mu);
}

void bxrm_ref_free(void *priv) {
  struct bxrm_ref *r = priv;
  struct bxrm_conn *c = r->c;
  bxrm_conn_forget(c, r->id);
  free(r);
  bxrm_conn_unref(c);
}

bext_tensor *bxrm_handle_new(struct bext_device *dev, struct bxrm_conn *c, uint64_t id, bext_dtype dt, int rank,
                             const int64_t *shape) {
  struct bxrm_ref *r = malloc(sizeof *r);
  if (!r) return bxr_error("remote: out of memory"), NULL;
  r->c = c;
  r->id = id;
  atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
  bext_tensor *t = bxr_tensor_new_opaque(dev, dt, rank, shape, r, bxrm_ref_free);
  if (!t) bxrm_ref_free(r);   /* the id was never announced: a release is harmless */
  return t;
}

static void conn_free(struct bxrm_conn *c) {
  bxrm_io_fini(&c->io);
  bxrm_buf_free(&c->out);
  free(c->rel);
  free(c->ext_known);
  pthread_mutex_destroy(&c->mu);
  free(c);
}

void bxrm_conn_unref(struct bxrm_conn *c) {
  if (atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) == 1) conn_free(c);
}

void bxrm_conn_shutdown(struct bxrm_conn *c) {
  pthread_mutex_lock(&c->mu);
  if (!c->lost) {
    /* What is queued still reaches the server (releases included), then
     * the session ends and the server frees its tensors. */
    queue_releases(c);
    if (c->out.len) bxrm_io_write(&c->io, c->out.p, c->out.len, c->timeout);
    c->out.len = 0;
    lose(c, "remote:%s: the device was closed", c->address);
  }
  pthread_mutex_unlock(&c->mu);
}

static nng_duration env_timeout(void) {
  const char *s = getenv("BEXT_REMOTE_TIMEOUT_MS");
  if (s && *s) {
    char *end;
    long v = strtol(s, &end, 10);
    if (!*end && v > 0 && v <= 24L * 3600 * 1000) return (nng_duration)v;
  }
  return 60000;
}

struct bxrm_conn *bxrm_conn_open(const char *addr) {
  struct bxrm_conn *c = calloc(1, sizeof *c);
  if (!c) return bxr_error("remote:%s: out of memory", addr), NULL;
  pthread_mutex_init(&c->mu, NULL);
  atomic_init(&c->refs, 1);
  c->timeout = env_timeout();
  snprintf(c->address, sizeof c->address, "%s", addr);
  nng_stream *s = NULL;
  int rv = bxrm_dial(addr, DIAL_TIMEOUT_MS, &s);
  if (rv) {
    bxr_error("remote:%s: cannot connect: %s", addr, nng_strerror(rv));
    conn_free(c);
    return NULL;
  }
  if (!bxrm_io_init(&c->io, s)) {
    nng_stream_free(s);
    bxr_error("remote:%s: out of memory", addr);
    conn_free(c);
    return NULL;
  }
  Bxrm__Hello hello = BXRM__HELLO__INIT;
  hello.version = BXRM_PROTOCOL_VERSION;
  const char *tok = getenv("BEXT_REMOTE_TOKEN");
  if (tok) {
    hello.token.data = (uint8_t *)tok;
    hello.token.len = strnlen(tok, BXRM_MAX_TOKEN + 1);
  }
  Bxrm__Request req = BXRM__REQUEST__INIT;
  req.body_case = BXRM__REQUEST__BODY_HELLO;
  req.hello = &hello;
  Bxrm__Reply *r = NULL;
  char api[120];
  snprintf(api, sizeof api, "remote:%s", addr);
  if (!bxrm_conn_call(c, api, &req, &r, NULL, NULL)) {
    conn_free(c);
    return NULL;
  }
  bool ok = r->body_case == BXRM__REPLY__BODY_WELCOME && r->welcome->version == BXRM_PROTOCOL_VERSION;
  if (ok) {
    snprintf(c->server_device, sizeof c->server_device, "%s", r->welcome->device);
    c->session = r->welcome->session;
    c->max_frame = r->welcome->max_frame;
    c->extensions = r->welcome->extensions;
    c->ext_values = r->welcome->ext_values;
  } else {
    bxr_error("remote:%s: the server answered the handshake with %s", addr,
              r->body_case == BXRM__REPLY__BODY_WELCOME ? "another protocol version" : "something else");
  }
  bxrm__reply__free_unpacked(r, NULL);
  if (!ok) {
    conn_free(c);
    return NULL;
  }
  return c;
}
