/* srv_ext.c — extension calls on bext-server: a client's ExtFind and
 * ExtCall, run by (trait, id) through the runtime's registry of extension
 * ops (bext_ext_find) and its extension dispatch on the hosted device.
 * The server runs the extension ops of its own build: a server program
 * linked with an extension's generated code (bext_server_main, docs/remote.md)
 * has them registered before main.
 *
 * As for core ops, a broken frame ends the session (names too long or
 * empty, more tensor ids than a call can hold, an id the session does not
 * hold, a result id in use, a malformed output spec), while a call that
 * cannot run fails its value (a deferred error) or, when the client
 * waits, is answered with the reason: an op this build lacks, one the
 * hosted device has no arm for, arguments that do not decode (the
 * client's build of the extension differs), an implementation that fails,
 * a result that disagrees with the client's metadata or passes the byte
 * limit.  A result that is a value (struct, tuple, enum, plain value) has
 * its tensors held at the ids the call reserved; a waiting call's answer
 * carries its ordinary parts (the descriptor's out_encode), a streamed
 * one's frame carries what the client expects, checked here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "srv_internal.h"

static bool name_ok(const char *n) {
  size_t len = n ? strnlen(n, BXRM_MAX_EXT_NAME + 1) : 0;
  return len > 0 && len <= BXRM_MAX_EXT_NAME;
}

/* Why the hosted device cannot run (trait, id), or NULL (then *mp is set). */
static const char *cannot_run(struct bxsv_session *s, const char *trait, const char *id, const bext_ext_method **mp,
                              char *buf, size_t n) {
  const bext_ext_method *m = bext_ext_find(trait, id);
  *mp = m;
  if (!m) {
    snprintf(buf, n,
             "no extension op `%s` of trait %s in this server's build (a server runs the extension ops it was "
             "built with: docs/remote.md \"Extension ops\")",
             id, trait);
    return buf;
  }
  char why[200];
  if (!bxr_ext_arm_listed(m, s->dev, why, sizeof why)) {
    snprintf(buf, n, "%s has no implementation on the hosted device %s: %s (listed: %s)", m->what, s->dev->name, why,
             m->listed);
    return buf;
  }
  return NULL;
}

bool bxsv_on_ext_find(struct bxsv_session *s, const Bxrm__ExtFind *f) {
  if (!name_ok(f->trait) || !name_ok(f->id))
    return bxsv_fatal(s, "ExtFind: trait and op id must be 1 to %d bytes", BXRM_MAX_EXT_NAME);
  const bext_ext_method *m;
  char buf[600];
  Bxrm__ExtFound fo = BXRM__EXT_FOUND__INIT;
  const char *why = cannot_run(s, f->trait, f->id, &m, buf, sizeof buf);
  if (why) fo.error = (char *)why;
  Bxrm__Reply r = BXRM__REPLY__INIT;
  r.body_case = BXRM__REPLY__BODY_EXT_FOUND;
  r.ext_found = &fo;
  return bxsv_reply(s, &r, NULL, 0);
}

/* The call fails: answered when the client waits (the result id is then
 * not held), else the result's deferred error.  first: a new failure (not
 * an input's). */
static bool call_fails(struct bxsv_session *s, const Bxrm__ExtCall *x, const char *msg, bool first) {
  struct bxsv_entry *e = x->out ? bxsv_table_find(&s->tab, x->out) : NULL;
  if (!x->wait && x->n_out) {   /* a streamed value: each of its tensors fails */
    for (uint32_t i = 0; i < x->n_out; i++)
      if ((e = bxsv_table_find(&s->tab, x->out + i))) bxsv_fail_entry(s, e, msg, first && i == 0);
    return true;
  }
  if (x->wait) {
    if (e) bxsv_drop(s, e);
    Bxrm__ExtDone d = BXRM__EXT_DONE__INIT;
    d.error = (char *)msg;
    Bxrm__Reply r = BXRM__REPLY__INIT;
    r.body_case = BXRM__REPLY__BODY_EXT_DONE;
    r.ext_done = &d;
    return bxsv_reply(s, &r, NULL, 0);
  }
  if (e) bxsv_fail_entry(s, e, msg, first);
  else if (first && !s->first_error) s->first_error = strdup(msg);
  return true;
}

static bool same_spec_out(const bext_tensor *t, const Bxrm__TensorOut *o) {
  if ((uint32_t)t->dtype != o->dtype || (size_t)t->rank != o->n_shape) return false;
  for (int d = 0; d < t->rank; d++)
    if (t->shape[d] != o->shape[d]) return false;
  return true;
}

static bool spec_ok(const Bxrm__TensorOut *o) {
  if (o->absent || o->dtype >= (uint32_t)BEXT_DTYPE_COUNT || o->n_shape > BEXT_MAX_RANK) return false;
  for (size_t d = 0; d < o->n_shape; d++)
    if (o->shape[d] < 0) return false;
  return true;
}

static bool same_spec(const bext_tensor *t, const Bxrm__ExtCall *x) {
  if ((uint32_t)t->dtype != x->dtype || (size_t)t->rank != x->n_shape) return false;
  for (int d = 0; d < t->rank; d++)
    if (t->shape[d] != x->shape[d]) return false;
  return true;
}

/* "f32 [2, 3]" */
static void spec_text(bext_dtype dt, int rank, const int64_t *shape, char *buf, size_t n) {
  size_t k = (size_t)snprintf(buf, n, "%s [", bext_dtype_name(dt));
  for (int d = 0; d < rank && k < n; d++) k += (size_t)snprintf(buf + k, n - k, "%s%lld", d ? ", " : "", (long long)shape[d]);
  if (k < n) snprintf(buf + k, n - k, "]");
}

/* Runs the decoded call; its output value (one tensor, a value, nothing)
 * in out (zeroed on failure, msg set). */
static bool run(struct bxsv_session *s, const bext_ext_method *m, const Bxrm__ExtCall *x, void *args, void *out,
                char *msg, size_t n) {
  bext_ext_slot sl[BEXT_EXT_MAX_SLOTS];
  int k = m->in_slots(args, sl);
  if (k != (int)x->n_in) {
    snprintf(msg, n, "deferred op `%s` failed on the server: the call names %zu tensors, its arguments hold %d "
             "(the client's and the server's builds of the extension differ)", m->what, x->n_in, k);
    return false;
  }
  if (k == 0) {
    snprintf(msg, n, "deferred op `%s` failed on the server: it has no tensor input, so nothing routes it to the "
             "hosted device", m->what);
    return false;
  }
  /* the call owns one reference of each input: dispatch releases them */
  for (int i = 0; i < k; i++) *sl[i].at = bext_retain(bxsv_table_find(&s->tab, x->in[i])->t);
  bext_ext_call call = {m, args, out};
  if (!bext_ext_dispatch(&call)) {
    snprintf(msg, n, "deferred op `%s` failed on the server: %s", m->what, bext_last_error());
    return false;
  }
  return true;
}

static void release_value(const bext_ext_method *m, void *v) {
  bext_ext_slot sl[BEXT_EXT_MAX_SLOTS];
  int k = m->out_slots(v, sl);
  for (int i = 0; i < k; i++) {
    bext_release(*sl[i].at);
    *sl[i].at = NULL;
  }
}

/* A value result: its tensors are held at ids out, out+1, ... and the
 * reply carries its ordinary parts (out_encode) and the tensors' specs.
 * A value the reserved ids, the byte or the tensor limit cannot take
 * fails the call (answered: value calls wait). */
static bool finish_value(struct bxsv_session *s, const bext_ext_method *m, const Bxrm__ExtCall *x, void *v,
                         const char *what) {
  bext_ext_slot sl[BEXT_EXT_MAX_SLOTS];
  int k = m->out_slots(v, sl);
  uint64_t bytes = 0;
  size_t held = 0;
  for (int i = 0; i < k; i++) {
    const bext_tensor *t = *sl[i].at;
    if (!t) continue;
    uint64_t b = bxr_nbytes(t->dtype, t->rank, t->shape);
    bytes = b == SIZE_MAX || bytes + b < bytes ? UINT64_MAX : bytes + b;
    held++;
  }
  size_t len = m->out_encode(v, NULL, 0);
  char msg[700];
  msg[0] = 0;
  if (k > (int)x->n_out)
    snprintf(msg, sizeof msg, "deferred op `%s` failed on the server: its value holds %d tensors, the call reserved "
             "%u ids", m->what, k, x->n_out);
  else if (bytes == UINT64_MAX || s->bytes + bytes > s->cfg->max_bytes || s->bytes + bytes < s->bytes)
    snprintf(msg, sizeof msg, "deferred op `%s` failed on the server: its value's tensors of %llu bytes pass the "
             "session's limit of %llu live bytes (bext-server --max-bytes)", m->what, (unsigned long long)bytes,
             (unsigned long long)s->cfg->max_bytes);
  else if (s->tab.n + held > s->cfg->max_tensors)
    snprintf(msg, sizeof msg, "deferred op `%s` failed on the server: its value's %zu tensors pass the session's "
             "limit of %llu (bext-server --max-tensors)", m->what, held, (unsigned long long)s->cfg->max_tensors);
  else if (len == 0 || len > BXRM_MAX_CONTROL / 2)
    snprintf(msg, sizeof msg, "deferred op `%s` failed on the server: its value encodes to %zu bytes", m->what, len);
  unsigned char *enc = msg[0] ? NULL : malloc(len);
  if (!msg[0] && !enc) snprintf(msg, sizeof msg, "out of memory on the server");
  if (msg[0]) {
    release_value(m, v);
    return call_fails(s, x, msg, true);
  }
  m->out_encode(v, enc, len);
  Bxrm__TensorOut to[BEXT_EXT_MAX_SLOTS], *tp[BEXT_EXT_MAX_SLOTS];
  for (int i = 0; i < k; i++) {
    bext_tensor *t = *sl[i].at;
    bxrm__tensor_out__init(&to[i]);
    tp[i] = &to[i];
    if (!t) {
      to[i].absent = true;
      continue;
    }
    struct bxsv_entry *e = bxsv_fresh(s, x->out + (uint64_t)i, what);
    if (!e) {   /* out of memory: the session is over */
      release_value(m, v);
      free(enc);
      return false;
    }
    e->t = t;
    e->bytes = bxr_nbytes(t->dtype, t->rank, t->shape);
    bxsv_account(s, 0, (int64_t)e->bytes);
    *sl[i].at = NULL;   /* the table holds it now */
    to[i].dtype = (uint32_t)t->dtype;
    to[i].n_shape = (size_t)t->rank;
    to[i].shape = t->shape;
  }
  Bxrm__ExtDone d = BXRM__EXT_DONE__INIT;
  d.value.data = enc;
  d.value.len = len;
  d.n_outs = (size_t)k;
  d.outs = tp;
  Bxrm__Reply r = BXRM__REPLY__INIT;
  r.body_case = BXRM__REPLY__BODY_EXT_DONE;
  r.ext_done = &d;
  bool ok = bxsv_reply(s, &r, NULL, 0);
  free(enc);
  return ok;
}

/* A streamed value result: the implementation's value must be the one the
 * client built from its metadata (its tensors' specs, and its ordinary
 * parts and variant byte for byte in out_encode's form); then its tensors
 * fill the entries the frame made.  Else each of them fails. */
static bool finish_streamed_value(struct bxsv_session *s, const bext_ext_method *m, const Bxrm__ExtCall *x,
                                  void *v) {
  bext_ext_slot sl[BEXT_EXT_MAX_SLOTS];
  int k = m->out_slots(v, sl);
  char msg[900], got[160], want[160];
  msg[0] = 0;
  uint64_t bytes = 0;
  if (k != (int)x->n_out)
    snprintf(msg, sizeof msg, "deferred op `%s` failed on the server: its implementation's value holds %d tensors, "
             "its metadata on the client gave %u", m->what, k, x->n_out);
  for (int i = 0; !msg[0] && i < k; i++) {
    const bext_tensor *t = *sl[i].at;
    if (!t) {
      snprintf(msg, sizeof msg, "deferred op `%s` failed on the server: its implementation left output `%s` empty, "
               "its metadata on the client gave it a tensor", m->what, sl[i].name);
    } else if (!same_spec_out(t, x->outs[i])) {
      spec_text(t->dtype, t->rank, t->shape, got, sizeof got);
      spec_text((bext_dtype)x->outs[i]->dtype, (int)x->outs[i]->n_shape, x->outs[i]->shape, want, sizeof want);
      snprintf(msg, sizeof msg, "deferred op `%s` failed on the server: its implementation returned %s for output "
               "`%s`, its metadata on the client gave %s", m->what, got, sl[i].name, want);
    } else {
      bytes += bxr_nbytes(t->dtype, t->rank, t->shape);
    }
  }
  if (!msg[0]) {
    unsigned char ebuf[256], *enc = ebuf;
    size_t len = m->out_encode(v, ebuf, sizeof ebuf);
    if (len > sizeof ebuf && (enc = malloc(len))) m->out_encode(v, enc, len);
    if (!enc || len != x->value.len || memcmp(enc, x->value.data, len))
      snprintf(msg, sizeof msg, "deferred op `%s` failed on the server: its implementation's value differs from its "
               "metadata on the client in its ordinary fields or its variant", m->what);
    if (enc != ebuf) free(enc);
  }
  if (!msg[0] && s->bytes + bytes > s->cfg->max_bytes)
    snprintf(msg, sizeof msg, "deferred op `%s` failed on the server: its value's tensors of %llu bytes pass the "
             "session's limit of %llu live bytes (bext-server --max-bytes)", m->what, (unsigned long long)bytes,
             (unsigned long long)s->cfg->max_bytes);
  if (msg[0]) {
    release_value(m, v);
    return call_fails(s, x, msg, true);
  }
  for (int i = 0; i < k; i++) {
    struct bxsv_entry *e = bxsv_table_find(&s->tab, x->out + (uint64_t)i);
    e->t = *sl[i].at;
    e->bytes = bxr_nbytes(e->t->dtype, e->t->rank, e->t->shape);
    bxsv_account(s, 0, (int64_t)e->bytes);
    *sl[i].at = NULL;
  }
  return true;
}

bool bxsv_on_ext_call(struct bxsv_session *s, const Bxrm__ExtCall *x) {
  /* The frame itself: names, counts, ids, the spec. */
  if (!name_ok(x->trait) || !name_ok(x->id))
    return bxsv_fatal(s, "ExtCall: trait and op id must be 1 to %d bytes", BXRM_MAX_EXT_NAME);
  char what[2 * BXRM_MAX_EXT_NAME + 16];
  snprintf(what, sizeof what, "%s::%s", x->trait, x->id);
  if (x->n_in > BEXT_EXT_MAX_SLOTS)
    return bxsv_fatal(s, "ExtCall %s: %zu tensors, a call holds at most %d", what, x->n_in, BEXT_EXT_MAX_SLOTS);
  if (!x->wait && (x->dtype >= (uint32_t)BEXT_DTYPE_COUNT || x->n_shape > BEXT_MAX_RANK))
    return bxsv_fatal(s, "ExtCall %s: malformed output spec (dtype %u, rank %zu)", what, x->dtype, x->n_shape);
  for (size_t d = 0; !x->wait && d < x->n_shape; d++)
    if (x->shape[d] < 0) return bxsv_fatal(s, "ExtCall %s: output extent %lld in dim %zu", what, (long long)x->shape[d], d);
  const char *poisoned = NULL;
  for (size_t i = 0; i < x->n_in; i++) {
    struct bxsv_entry *e = bxsv_table_find(&s->tab, x->in[i]);
    if (!e)
      return bxsv_fatal(s, "ExtCall %s: tensor %zu names id %llu, which this session does not hold (never made, or "
                        "released)", what, i + 1, (unsigned long long)x->in[i]);
    if (!e->t && !poisoned) poisoned = e->err;
  }
  if (x->n_out) {
    /* a value result: waiting, its ids are taken when the value exists;
     * streamed, the client's handles exist: so do their entries, now */
    if (x->n_out > BEXT_EXT_MAX_SLOTS || x->out == 0 || x->out + x->n_out < x->out ||
        (!x->wait && x->n_outs != x->n_out))
      return bxsv_fatal(s, "ExtCall %s: a value result reserves 1 to %d ids from a non-zero `out`, and a streamed one "
                        "names each one's spec (out %llu, n_out %u, %zu specs%s)", what, BEXT_EXT_MAX_SLOTS,
                        (unsigned long long)x->out, x->n_out, x->n_outs, x->wait ? "" : ", streamed");
    for (uint32_t i = 0; !x->wait && i < x->n_out; i++)
      if (!spec_ok(x->outs[i])) return bxsv_fatal(s, "ExtCall %s: malformed spec of value tensor %u", what, i + 1);
    for (uint32_t i = 0; i < x->n_out; i++) {
      if (x->wait && bxsv_table_find(&s->tab, x->out + i))
        return bxsv_fatal(s, "ExtCall %s: result id %llu is already in use", what, (unsigned long long)(x->out + i));
      if (!x->wait && !bxsv_fresh(s, x->out + i, what)) return false;
    }
  } else if (x->out && !bxsv_fresh(s, x->out, what)) {
    return false;
  }

  /* The op: this build's, runnable here, its arguments decoded. */
  char msg[1400];
  const bext_ext_method *m;
  const char *why = cannot_run(s, x->trait, x->id, &m, msg + 700, 700);
  if (why) {
    snprintf(msg, 700, "deferred op `%s` failed on the server: %s", what, why);
    return call_fails(s, x, msg, true);
  }
  int kind = m->out_tensor ? 1 : m->out_size ? 2 : 0, asked = x->n_out ? 2 : x->out ? 1 : 0;
  if (kind != asked) {
    static const char *const what_kind[] = {"nothing", "one tensor", "a value"};
    snprintf(msg, sizeof msg, "deferred op `%s` failed on the server: the call expects %s as its result, the "
             "server's build of the method returns %s (the client's and the server's builds of the extension differ)",
             m->what, what_kind[asked], what_kind[kind]);
    return call_fails(s, x, msg, true);
  }
  if (poisoned) return call_fails(s, x, poisoned, false);   /* the first failure's message */
  if (!x->wait && x->out) {
    uint64_t want = 0;
    if (!x->n_out) want = bxr_nbytes((bext_dtype)x->dtype, (int)x->n_shape, x->shape);
    for (uint32_t i = 0; i < x->n_out && want != SIZE_MAX; i++) {
      uint64_t b = bxr_nbytes((bext_dtype)x->outs[i]->dtype, (int)x->outs[i]->n_shape, x->outs[i]->shape);
      want = b == SIZE_MAX || want + b < want ? SIZE_MAX : want + b;
    }
    if (want == SIZE_MAX || s->bytes + want > s->cfg->max_bytes || s->bytes + want < s->bytes) {
      snprintf(msg, sizeof msg, "deferred op `%s` failed on the server: its result of %llu bytes would pass the "
               "session's limit of %llu live bytes (%llu in use; bext-server --max-bytes)", m->what,
               (unsigned long long)want, (unsigned long long)s->cfg->max_bytes, (unsigned long long)s->bytes);
      return call_fails(s, x, msg, true);
    }
  }
  void *args = calloc(1, m->args_size ? m->args_size : 1);
  if (!args) return call_fails(s, x, "out of memory on the server", true);
  size_t used = m->args_decode(args, x->args.data, x->args.len);
  if (used == 0 || used != x->args.len) {
    free(args);
    snprintf(msg, sizeof msg, "deferred op `%s` failed on the server: its %zu bytes of arguments do not decode "
             "(the client's and the server's builds of the extension differ)", m->what, x->args.len);
    return call_fails(s, x, msg, true);
  }
  bext_tensor *res = NULL;
  void *value = NULL;
  if (kind == 2 && !(value = calloc(1, m->out_size))) {
    bext_ext_args_release(m, args);
    free(args);
    return call_fails(s, x, "out of memory on the server", true);
  }
  bool ran = run(s, m, x, args, value ? value : (void *)&res, msg, sizeof msg);
  if (!ran) bext_ext_args_release(m, args);   /* run failed before dispatch took them */
  free(args);
  if (!ran) {
    free(value);
    return call_fails(s, x, msg, true);
  }
  if (value) {
    bool ok = x->wait ? finish_value(s, m, x, value, what) : finish_streamed_value(s, m, x, value);
    free(value);
    return ok;
  }
  Bxrm__ExtDone d = BXRM__EXT_DONE__INIT;
  Bxrm__Reply r = BXRM__REPLY__INIT;
  r.body_case = BXRM__REPLY__BODY_EXT_DONE;
  r.ext_done = &d;
  if (!x->out) return !x->wait || bxsv_reply(s, &r, NULL, 0);   /* a method returning nothing */

  uint64_t bytes = bxr_nbytes(res->dtype, res->rank, res->shape);
  char got[160], want[160];
  if (!x->wait && !same_spec(res, x)) {
    spec_text(res->dtype, res->rank, res->shape, got, sizeof got);
    spec_text((bext_dtype)x->dtype, (int)x->n_shape, x->shape, want, sizeof want);
    snprintf(msg, sizeof msg, "deferred op `%s` failed on the server: its implementation returned %s, its metadata "
             "on the client gave %s", m->what, got, want);
    bext_release(res);
    return call_fails(s, x, msg, true);
  }
  if (bytes == SIZE_MAX || s->bytes + bytes > s->cfg->max_bytes) {
    snprintf(msg, sizeof msg, "deferred op `%s` failed on the server: its result of %llu bytes passes the session's "
             "limit of %llu live bytes (bext-server --max-bytes)", m->what, (unsigned long long)bytes,
             (unsigned long long)s->cfg->max_bytes);
    bext_release(res);
    return call_fails(s, x, msg, true);
  }
  struct bxsv_entry *e = bxsv_table_find(&s->tab, x->out);
  e->t = res;
  e->bytes = bytes;
  bxsv_account(s, 0, (int64_t)bytes);
  if (!x->wait) return true;
  d.dtype = (uint32_t)res->dtype;
  d.n_shape = (size_t)res->rank;
  d.shape = res->shape;
  return bxsv_reply(s, &r, NULL, 0);
}
