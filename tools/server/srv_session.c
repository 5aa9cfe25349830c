/* srv_session.c — one client's session on bext-server: reads frames,
 * checks every field before use, and runs ops through the hosted
 * device's dispatch (the op table's inference rules judge shapes, dtypes
 * and dims; nothing here indexes by a client's number unchecked).
 *
 * Two kinds of failure:
 *   - a broken protocol (a malformed or oversized frame, an unknown id, a
 *     reused id, a wrong version or token, a limit on counts) ends the
 *     session: the reason is logged, sent as a Fatal, and the connection
 *     closed.  A correct client never causes one;
 *   - a valid op that fails (an index out of range, the byte limit, an
 *     inference error) fails its result: the id holds the message, ops on
 *     it fail the same way, a Read of it answers the message, and the
 *     next Sync reports the first such failure.  This is the client's
 *     "deferred error", named by the op that failed. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"
#include "srv_internal.h"
#include "srv_table.h"

/* Ends the session: remember why, log it, tell the client.  Returns false
 * so handlers can `return bxsv_fatal(...)`. */
bool bxsv_fatal(struct bxsv_session *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->why, sizeof s->why, fmt, ap);
  va_end(ap);
  bxsv_log(s->cfg, "session %llu closed: %s", (unsigned long long)s->id, s->why);
  if (s->srv) bxsv_count_refused(s->srv);
  Bxrm__Fatal f = BXRM__FATAL__INIT;
  f.reason = s->why;
  Bxrm__Reply r = BXRM__REPLY__INIT;
  r.body_case = BXRM__REPLY__BODY_FATAL;
  r.fatal = &f;
  s->out.len = 0;
  if (bxrm_buf_frame(&s->out, &r.base, 0)) s->port.write(s->port.ctx, s->out.p, s->out.len);
  s->out.len = 0;
  return false;
}

bool bxsv_reply(struct bxsv_session *s, const Bxrm__Reply *r, const void *raw, uint64_t raw_len) {
  s->out.len = 0;
  if (!bxrm_buf_frame(&s->out, &r->base, raw_len)) return bxsv_fatal(s, "out of memory building a reply");
  int rv = s->port.write(s->port.ctx, s->out.p, s->out.len);
  if (!rv && raw_len) rv = s->port.write(s->port.ctx, raw, raw_len);
  s->out.len = 0;
  if (rv) {
    snprintf(s->why, sizeof s->why, "the client went away while being answered (%s)", nng_strerror(rv));
    return false;
  }
  return true;
}

/* ------------------------------------------------------------ the table */

void bxsv_account(struct bxsv_session *s, int64_t tensors, int64_t bytes) {
  s->bytes += (uint64_t)bytes;
  if (s->srv) bxsv_count(s->srv, tensors, bytes);
}

void bxsv_drop(struct bxsv_session *s, struct bxsv_entry *e) {
  if (e->t) bext_release(e->t);
  free(e->err);
  bxsv_account(s, -1, -(int64_t)e->bytes);
  bxsv_table_remove(&s->tab, e);
}

struct bxsv_entry *bxsv_fresh(struct bxsv_session *s, uint64_t id, const char *what) {
  if (id == 0) return bxsv_fatal(s, "%s: result id 0 (ids start at 1)", what), NULL;
  if (bxsv_table_find(&s->tab, id))
    return bxsv_fatal(s, "%s: result id %llu is already in use", what, (unsigned long long)id), NULL;
  if (s->tab.n >= s->cfg->max_tensors)
    return bxsv_fatal(s, "%s: the session holds %zu tensors, the server's limit (--max-tensors)", what, s->tab.n), NULL;
  struct bxsv_entry *e = bxsv_table_add(&s->tab, id);
  if (!e) return bxsv_fatal(s, "%s: out of memory", what), NULL;
  bxsv_account(s, 1, 0);
  return e;
}

void bxsv_fail_entry(struct bxsv_session *s, struct bxsv_entry *e, const char *msg, bool first) {
  e->err = strdup(msg ? msg : "failed");
  if (first && !s->first_error) s->first_error = strdup(msg ? msg : "failed");
}

/* ------------------------------------------------------------ messages */

static bool valid_dtype(uint32_t dt) { return dt < (uint32_t)BEXT_DTYPE_COUNT; }

static bool on_hello(struct bxsv_session *s, const Bxrm__Hello *h) {
  if (s->greeted) return bxsv_fatal(s, "a second Hello");
  if (h->version != BXRM_PROTOCOL_VERSION)
    return bxsv_fatal(s, "protocol version %u, this server speaks version %u", h->version, BXRM_PROTOCOL_VERSION);
  if (s->cfg->token && !bxrm_token_equal(h->token.data, h->token.len, s->cfg->token, s->cfg->token_len))
    return bxsv_fatal(s, "wrong token (set BEXT_REMOTE_TOKEN to the server's --token-file contents)");
  s->greeted = true;
  Bxrm__Welcome w = BXRM__WELCOME__INIT;
  w.version = BXRM_PROTOCOL_VERSION;
  w.device = s->dev->name;
  w.session = s->id;
  w.max_frame = s->cfg->max_frame;
  w.max_tensors = s->cfg->max_tensors;
  w.max_bytes = s->cfg->max_bytes;
  w.extensions = true;
  w.ext_values = true;
  Bxrm__Reply r = BXRM__REPLY__INIT;
  r.body_case = BXRM__REPLY__BODY_WELCOME;
  r.welcome = &w;
  return bxsv_reply(s, &r, NULL, 0);
}

/* The api name an op's messages use: the client's when it looks like
 * one ("bext_sum_dim"), else the row's. */
static const char *op_api(const Bxrm__Op *m, char *buf, size_t n) {
  const char *a = m->api;
  size_t len = a ? strlen(a) : 0;
  bool ok = len > 0 && len <= 48;
  for (size_t i = 0; ok && i < len; i++) ok = (a[i] >= 'a' && a[i] <= 'z') || (a[i] >= '0' && a[i] <= '9') || a[i] == '_';
  if (ok) return a;
  snprintf(buf, n, "bext_%s", bxr_op_name((enum bxr_opcode)m->code));
  return buf;
}

static bool on_op(struct bxsv_session *s, const Bxrm__Op *m) {
  if (m->code >= (uint32_t)BXR_OP_COUNT) return bxsv_fatal(s, "op code %u is not in the op table (%d ops)", m->code, BXR_OP_COUNT);
  const struct bxr_op_info *row = &bxr_op_info[m->code];
  char apibuf[64];
  const char *api = op_api(m, apibuf, sizeof apibuf);
  /* The frame's shape against the row: counts first, ids next. */
  if (row->nin >= 0 ? m->n_in != (size_t)row->nin : (m->n_in < 1 || m->n_in > BXRM_MAX_OP_INPUTS))
    return bxsv_fatal(s, "%s: %zu inputs, the op takes %d", api, m->n_in, row->nin);
  if (m->n_sc != (size_t)row->nscalar) return bxsv_fatal(s, "%s: %zu scalars, the op takes %d", api, m->n_sc, row->nscalar);
  const Bxrm__Attrs *a = m->at;
  if (a && (a->n_shape > BEXT_MAX_RANK || a->n_dims > BEXT_MAX_RANK || a->n_start > BEXT_MAX_RANK ||
            a->n_start != a->n_end))
    return bxsv_fatal(s, "%s: malformed attributes (shape %zu, dims %zu, ranges %zu/%zu; at most %d each)", api,
                 a->n_shape, a->n_dims, a->n_start, a->n_end, BEXT_MAX_RANK);
  if (a && (row->attrs & BXR_A_DTYPE) && !valid_dtype(a->dtype)) return bxsv_fatal(s, "%s: dtype %u is not a dtype", api, a->dtype);
  const char *poisoned = NULL;   /* an input's message (the string stays put when the table grows) */
  for (size_t i = 0; i < m->n_in; i++) {
    struct bxsv_entry *e = bxsv_table_find(&s->tab, m->in[i]);
    if (!e)
      return bxsv_fatal(s, "%s: input %zu names id %llu, which this session does not hold (never made, or released)", api,
                   i + 1, (unsigned long long)m->in[i]);
    if (!e->t && !poisoned) poisoned = e->err;
  }
  struct bxsv_entry *out = bxsv_fresh(s, m->out, api);
  if (!out) return false;
  if (poisoned) {   /* the first failure's message, not a new one */
    bxsv_fail_entry(s, out, poisoned, false);
    return true;
  }

  struct bxr_op op;
  memset(&op, 0, sizeof op);
  op.code = (enum bxr_opcode)m->code;
  op.api = api;
  op.n_in = (int)m->n_in;
  op.in = op.n_in <= BXR_MAX_INPUTS ? op.inbuf : calloc((size_t)op.n_in, sizeof *op.in);
  if (!op.in) {
    bxsv_fail_entry(s, out, "out of memory on the server", true);
    return true;
  }
  for (int i = 0; i < row->nscalar; i++) memcpy(&op.sc[i], &m->sc[i], sizeof op.sc[i]);
  if (a) {
    op.at.rank = (int)a->n_shape;
    for (size_t i = 0; i < a->n_shape; i++) op.at.shape[i] = a->shape[i];
    op.at.ndims = (int)a->n_dims;
    for (size_t i = 0; i < a->n_dims; i++) op.at.dims[i] = a->dims[i];
    op.at.dim = a->dim;
    op.at.keepdim = a->keepdim;
    op.at.all = a->all;
    op.at.nranges = (int)a->n_start;
    for (size_t i = 0; i < a->n_start; i++) op.at.start[i] = a->start[i], op.at.end[i] = a->end[i];
    op.at.dtype = (bext_dtype)(valid_dtype(a->dtype) ? a->dtype : 0);
    op.at.seed = a->seed;
  }
  /* Inference first, on the inputs' specs, so the byte limit is checked
   * before anything is allocated (a hostile zeros([1e12]) allocates
   * nothing); dispatch asks the same rule again on the normalized attrs. */
  const bext_spec *specs_buf[BXR_MAX_INPUTS], **specs = specs_buf;
  if (op.n_in > BXR_MAX_INPUTS && !(specs = calloc((size_t)op.n_in, sizeof *specs))) {
    if (op.in != op.inbuf) free(op.in);
    bxsv_fail_entry(s, out, "out of memory on the server", true);
    return true;
  }
  for (int i = 0; i < op.n_in; i++) {
    struct bxsv_entry *e = bxsv_table_find(&s->tab, m->in[i]);   /* fresh() may have moved them */
    op.in[i] = e->t;
    specs[i] = &e->t->spec;
  }
  struct bxr_infer q = {.code = op.code, .api = api, .n_in = op.n_in, .in = specs, .sc = op.sc, .at = &op.at, .out = &op.out};
  bool inferred = bxr_infer_run(&q);
  if (specs != specs_buf) free(specs);
  char msg[1400];
  if (!inferred) {
    snprintf(msg, sizeof msg, "deferred op `%s` failed on the server: %s", api, bext_last_error());
    if (op.in != op.inbuf) free(op.in);
    bxsv_fail_entry(s, out, msg, true);
    return true;
  }
  uint64_t bytes = bxr_nbytes(op.out.dtype, op.out.rank, op.out.shape);
  if (bytes == SIZE_MAX || s->bytes + bytes > s->cfg->max_bytes || s->bytes + bytes < s->bytes) {
    snprintf(msg, sizeof msg,
             "deferred op `%s` failed on the server: its result of %llu bytes would pass the session's limit of %llu "
             "live bytes (%llu in use; bext-server --max-bytes)",
             api, (unsigned long long)bytes, (unsigned long long)s->cfg->max_bytes, (unsigned long long)s->bytes);
    if (op.in != op.inbuf) free(op.in);
    bxsv_fail_entry(s, out, msg, true);
    return true;
  }
  for (int i = 0; i < op.n_in; i++) bext_retain(op.in[i]);   /* dispatch consumes its inputs */
  op.device = s->dev;
  bext_tensor **arr = op.in;
  bext_tensor *res = bxr_dispatch(&op);
  if (arr != op.inbuf) free(arr);
  out = bxsv_table_find(&s->tab, m->out);
  if (!res) {
    snprintf(msg, sizeof msg, "deferred op `%s` failed on the server: %s", api, bext_last_error());
    bxsv_fail_entry(s, out, msg, true);
    return true;
  }
  out->t = res;
  out->bytes = bytes;
  bxsv_account(s, 0, (int64_t)bytes);
  return true;
}

static bool on_release(struct bxsv_session *s, const Bxrm__Release *r) {
  for (size_t i = 0; i < r->n_ids; i++) {
    struct bxsv_entry *e = bxsv_table_find(&s->tab, r->ids[i]);
    if (!e)
      return bxsv_fatal(s, "release of id %llu, which this session does not hold", (unsigned long long)r->ids[i]);
    bxsv_drop(s, e);
  }
  return true;
}

/* The raw part of an upload: straight into the new tensor's memory on a
 * host-memory device, else through a buffer and bext_from_data. */
static bool on_upload(struct bxsv_session *s, const Bxrm__Upload *u, uint64_t raw) {
  if (!valid_dtype(u->dtype)) return bxsv_fatal(s, "upload: dtype %u is not a dtype", u->dtype);
  if (u->n_shape > BEXT_MAX_RANK) return bxsv_fatal(s, "upload: rank %zu (at most %d)", u->n_shape, BEXT_MAX_RANK);
  for (size_t d = 0; d < u->n_shape; d++)
    if (u->shape[d] < 0) return bxsv_fatal(s, "upload: extent %lld in dim %zu", (long long)u->shape[d], d);
  bext_dtype dt = (bext_dtype)u->dtype;
  uint64_t bytes = bxr_nbytes(dt, (int)u->n_shape, u->shape);
  if (bytes != raw)
    return bxsv_fatal(s, "upload of a %zu-dim %s tensor announces %llu raw bytes, its shape needs %llu", u->n_shape,
                 bext_dtype_name(dt), (unsigned long long)raw, (unsigned long long)bytes);
  if (s->bytes + bytes > s->cfg->max_bytes)
    return bxsv_fatal(s, "upload of %llu bytes would pass the session's limit of %llu live bytes (bext-server --max-bytes)",
                 (unsigned long long)bytes, (unsigned long long)s->cfg->max_bytes);
  struct bxsv_entry *e = bxsv_fresh(s, u->id, "upload");
  if (!e) return false;
  bext_tensor *t = NULL;
  void *dst = NULL, *tmp = NULL;
  if (s->dev->vt->host_memory) {
    t = bext_empty(u->shape, (int)u->n_shape, dt, s->dev);
    dst = t && bytes ? bext_data_mut(t) : NULL;
  }
  if (!dst && bytes) dst = tmp = malloc(bytes);
  if (!dst && bytes) {
    bext_release(t);
    return bxsv_fatal(s, "upload: out of memory for %llu bytes", (unsigned long long)bytes);
  }
  int rv = s->port.read(s->port.ctx, dst, bytes, true);
  if (rv) {
    bext_release(t);
    free(tmp);
    return bxsv_fatal(s, "upload: the frame ended after its header (%s)", nng_strerror(rv));
  }
  if (tmp || !t) {
    bext_release(t);
    t = bext_from_data(tmp, dt, u->shape, (int)u->n_shape, s->dev);
    free(tmp);
  }
  e = bxsv_table_find(&s->tab, u->id);
  if (!t) {
    char msg[1200];
    snprintf(msg, sizeof msg, "deferred upload failed on the server: %s", bext_last_error());
    bxsv_fail_entry(s, e, msg, true);
    return true;
  }
  e->t = t;
  e->bytes = bytes;
  bxsv_account(s, 0, (int64_t)bytes);
  return true;
}

static bool on_read(struct bxsv_session *s, const Bxrm__Read *rd) {
  struct bxsv_entry *e = bxsv_table_find(&s->tab, rd->id);
  if (!e) return bxsv_fatal(s, "read of id %llu, which this session does not hold", (unsigned long long)rd->id);
  Bxrm__Data d = BXRM__DATA__INIT;
  Bxrm__Reply r = BXRM__REPLY__INIT;
  r.body_case = BXRM__REPLY__BODY_DATA;
  r.data = &d;
  if (!e->t) {
    d.error = e->err;
    return bxsv_reply(s, &r, NULL, 0);
  }
  bext_tensor *t = e->t;
  d.dtype = (uint32_t)t->dtype;
  d.n_shape = (size_t)t->rank;
  d.shape = t->shape;
  size_t bytes = bxr_nbytes(t->dtype, t->rank, t->shape);
  /* A contiguous host tensor goes out from its own memory. */
  if (t->device->vt->host_memory && bxr_is_contiguous(t)) return bxsv_reply(s, &r, bext_data(t), bytes);
  void *buf = malloc(bytes ? bytes : 1);
  char msg[1200];
  bool ok;
  if (!buf) {
    d.error = "out of memory on the server";
    ok = bxsv_reply(s, &r, NULL, 0);
  } else if (!bext_read(t, buf, bytes)) {
    snprintf(msg, sizeof msg, "%s", bext_last_error());
    d.error = msg;
    d.n_shape = 0;
    ok = bxsv_reply(s, &r, NULL, 0);
  } else ok = bxsv_reply(s, &r, buf, bytes);
  free(buf);
  return ok;
}

static bool on_sync(struct bxsv_session *s) {
  char msg[1200];
  if (!bext_sync(s->dev) && !s->first_error) {
    snprintf(msg, sizeof msg, "%s", bext_last_error());
    s->first_error = strdup(msg);
  }
  Bxrm__Done d = BXRM__DONE__INIT;
  if (s->first_error) d.error = s->first_error;
  Bxrm__Reply r = BXRM__REPLY__INIT;
  r.body_case = BXRM__REPLY__BODY_DONE;
  r.done = &d;
  bool ok = bxsv_reply(s, &r, NULL, 0);
  free(s->first_error);
  s->first_error = NULL;
  return ok;
}

static bool on_stats(struct bxsv_session *s) {
  Bxrm__StatsReply st = BXRM__STATS_REPLY__INIT;
  struct bxsv_stats all = {0};
  if (s->srv) bxsv_stats(s->srv, &all);
  st.sessions = all.sessions;
  st.tensors = all.tensors;
  st.bytes = all.bytes;
  st.session_tensors = s->tab.n;
  st.session_bytes = s->bytes;
  Bxrm__Reply r = BXRM__REPLY__INIT;
  r.body_case = BXRM__REPLY__BODY_STATS;
  r.stats = &st;
  return bxsv_reply(s, &r, NULL, 0);
}

/* ------------------------------------------------------------ frames */

static bool read_error(struct bxsv_session *s, int rv, const char *where) {
  if (rv == NNG_ETIMEDOUT)
    return bxsv_fatal(s, "truncated frame: %s did not arrive within %d ms", where, s->cfg->frame_timeout_ms);
  return bxsv_fatal(s, "truncated frame: the connection ended in %s (%s)", where, nng_strerror(rv));
}

/* One frame.  False: the session is over (s->why says why). */
static bool serve_frame(struct bxsv_session *s) {
  uint8_t hb[BXRM_HEADER_BYTES];
  int rv = s->port.read(s->port.ctx, hb, 1, false);   /* between frames: no deadline */
  if (rv) {
    snprintf(s->why, sizeof s->why, "the client closed the connection");
    return false;
  }
  if ((rv = s->port.read(s->port.ctx, hb + 1, sizeof hb - 1, true))) return read_error(s, rv, "the frame header");
  struct bxrm_header h = bxrm_header_get(hb);
  if (h.ctl == 0 || h.ctl > BXRM_MAX_CONTROL)
    return bxsv_fatal(s, "frame header claims a control message of %u bytes (1 to %u)", h.ctl, BXRM_MAX_CONTROL);
  if (h.raw > s->cfg->max_frame)
    return bxsv_fatal(s, "frame header claims %llu raw bytes, over the server's limit of %llu (--max-frame)",
                 (unsigned long long)h.raw, (unsigned long long)s->cfg->max_frame);
  if (h.ctl > s->ctlcap) {
    uint8_t *p = realloc(s->ctl, h.ctl);
    if (!p) return bxsv_fatal(s, "out of memory for a control message of %u bytes", h.ctl);
    s->ctl = p;
    s->ctlcap = h.ctl;
  }
  if ((rv = s->port.read(s->port.ctx, s->ctl, h.ctl, true))) return read_error(s, rv, "the control message");
  Bxrm__Request *req = bxrm__request__unpack(NULL, h.ctl, s->ctl);
  if (!req) return bxsv_fatal(s, "malformed control message (%u bytes that are not a Request)", h.ctl);
  bool ok;
  bool raw_ok = req->body_case == BXRM__REQUEST__BODY_UPLOAD;
  if (h.raw && !raw_ok) ok = bxsv_fatal(s, "a frame without tensor data announces %llu raw bytes", (unsigned long long)h.raw);
  else if (!s->greeted && req->body_case != BXRM__REQUEST__BODY_HELLO) ok = bxsv_fatal(s, "the first frame must be a Hello");
  else switch (req->body_case) {
  case BXRM__REQUEST__BODY_HELLO: ok = on_hello(s, req->hello); break;
  case BXRM__REQUEST__BODY_OP: ok = on_op(s, req->op); break;
  case BXRM__REQUEST__BODY_UPLOAD: ok = on_upload(s, req->upload, h.raw); break;
  case BXRM__REQUEST__BODY_READ: ok = on_read(s, req->read); break;
  case BXRM__REQUEST__BODY_RELEASE: ok = on_release(s, req->release); break;
  case BXRM__REQUEST__BODY_SYNC: ok = on_sync(s); break;
  case BXRM__REQUEST__BODY_STATS: ok = on_stats(s); break;
  case BXRM__REQUEST__BODY_EXT_FIND: ok = bxsv_on_ext_find(s, req->ext_find); break;
  case BXRM__REQUEST__BODY_EXT_CALL: ok = bxsv_on_ext_call(s, req->ext_call); break;
  default: ok = bxsv_fatal(s, "a Request without a body"); break;
  }
  bxrm__request__free_unpacked(req, NULL);
  return ok;
}

struct bxsv_session *bxsv_session_new(const struct bxsv_config *cfg, struct bext_device *dev, struct bxsv_server *srv,
                                      uint64_t id, struct bxsv_port port) {
  struct bxsv_session *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->cfg = cfg;
  s->dev = dev;
  s->srv = srv;
  s->id = id;
  s->port = port;
  return s;
}

const char *bxsv_session_run(struct bxsv_session *s) {
  while (serve_frame(s)) {
  }
  return s->why;
}

void bxsv_session_free(struct bxsv_session *s) {
  if (!s) return;
  /* Every tensor of the session dies with it: nothing outlives a client. */
  for (size_t i = 0; i < s->tab.cap; i++) {
    struct bxsv_entry *e = &s->tab.e[i];
    if (!e->id) continue;
    if (e->t) bext_release(e->t);
    free(e->err);
    bxsv_account(s, -1, -(int64_t)e->bytes);
  }
  bxsv_table_free(&s->tab);
  free(s->first_error);
  free(s->ctl);
  bxrm_buf_free(&s->out);
  free(s);
}
