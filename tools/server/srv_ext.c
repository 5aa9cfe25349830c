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
 * limit. */
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
  if (!m->out_tensor && m->out_size) {
    snprintf(buf, n, "%s returns a value (struct, tuple, enum or plain value) a remote call does not carry yet",
             m->what);
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

/* Runs the decoded call; the result (or NULL + error) in *res. */
static bool run(struct bxsv_session *s, const bext_ext_method *m, const Bxrm__ExtCall *x, void *args,
                bext_tensor **res, char *msg, size_t n) {
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
  bext_ext_call call = {m, args, res};
  if (!bext_ext_dispatch(&call)) {
    snprintf(msg, n, "deferred op `%s` failed on the server: %s", m->what, bext_last_error());
    return false;
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
  if (x->out && !bxsv_fresh(s, x->out, what)) return false;

  /* The op: this build's, runnable here, its arguments decoded. */
  char msg[1400];
  const bext_ext_method *m;
  const char *why = cannot_run(s, x->trait, x->id, &m, msg + 700, 700);
  if (why) {
    snprintf(msg, 700, "deferred op `%s` failed on the server: %s", what, why);
    return call_fails(s, x, msg, true);
  }
  if (m->out_tensor != (x->out != 0)) {
    snprintf(msg, sizeof msg, "deferred op `%s` failed on the server: the call %s a result, the server's build of "
             "the method %s one", m->what, x->out ? "names" : "names no", m->out_tensor ? "returns" : "returns no");
    return call_fails(s, x, msg, true);
  }
  if (poisoned) return call_fails(s, x, poisoned, false);   /* the first failure's message */
  if (!x->wait && x->out) {
    uint64_t want = bxr_nbytes((bext_dtype)x->dtype, (int)x->n_shape, x->shape);
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
  bool ran = run(s, m, x, args, &res, msg, sizeof msg);
  if (!ran) bext_ext_args_release(m, args);   /* run failed before dispatch took them */
  free(args);
  if (!ran) return call_fails(s, x, msg, true);
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
