/* rm_ext.c — the Remote backend's arm of extension calls: an extension op
 * on a `remote:` tensor runs on the server by its (trait, id), through the
 * server's own build of the same extension (docs/remote.md "Extension
 * ops").
 *
 * The first call of an op in a session asks the server whether it runs
 * it (ExtFind, one round trip), so an op the server was not built with is
 * an error at the call that named it.  Then each call is one ExtCall
 * frame: the ids of its tensor slots and its ordinary arguments as the
 * descriptor encodes them (args_encode).  A method returning one tensor
 * whose spec its metadata gives streams like a core op: the handle exists
 * at once and nothing waits.  Without metadata the client cannot know the
 * output's shape, so the call waits for the server's ExtDone.  A method
 * returning a value (struct, tuple, enum, plain value) streams when its
 * metadata gives the value (out_from_meta builds it, the frame says what
 * the client expects); without, it waits, and the reply carries the
 * value's ordinary parts as the descriptor encodes them (out_encode, read
 * back by out_decode) and the specs of its tensors, which the server
 * holds at ids the call reserved. */
#include <stdlib.h>
#include <string.h>

#include "bext/gen.h"   /* bext_meta_spec: the size a one-tensor metadata value has */
#include "rm_client.h"

/* Whether the server said it runs m (c->mu held). */
static bool known(const struct bxrm_conn *c, const bext_ext_method *m) {
  for (size_t i = 0; i < c->n_ext; i++)
    if (c->ext_known[i] == m) return true;
  return false;
}

/* Asks the server once per op and session; false + error naming the op. */
static bool find(struct bxrm_conn *c, const bext_ext_method *m) {
  pthread_mutex_lock(&c->mu);
  bool have = known(c, m), ext = c->extensions;
  pthread_mutex_unlock(&c->mu);
  if (have) return true;
  if (strlen(m->trait) > BXRM_MAX_EXT_NAME || strlen(m->id) > BXRM_MAX_EXT_NAME)
    return bxr_error("%s: a remote call names its trait and op id in at most %d bytes each", m->what,
                     BXRM_MAX_EXT_NAME);
  if (!ext)
    return bxr_error("%s: the server at remote:%s (hosting %s) does not run extension ops (it predates them)",
                     m->what, c->address, c->server_device);
  Bxrm__ExtFind f = BXRM__EXT_FIND__INIT;
  f.trait = (char *)m->trait;
  f.id = (char *)m->id;
  Bxrm__Request req = BXRM__REQUEST__INIT;
  req.body_case = BXRM__REQUEST__BODY_EXT_FIND;
  req.ext_find = &f;
  Bxrm__Reply *r = NULL;
  if (!bxrm_conn_call(c, m->what, &req, &r, NULL, NULL)) return false;
  bool ok = r->body_case == BXRM__REPLY__BODY_EXT_FOUND && !r->ext_found->error[0];
  if (r->body_case != BXRM__REPLY__BODY_EXT_FOUND)
    bxr_error("%s: the server answered ExtFind with something else", m->what);
  else if (!ok)
    bxr_error("%s: the server at remote:%s (hosting %s) cannot run it: %s", m->what, c->address, c->server_device,
              r->ext_found->error);
  bxrm__reply__free_unpacked(r, NULL);
  if (!ok) return false;
  pthread_mutex_lock(&c->mu);
  if (!known(c, m)) {   /* another thread may have asked meanwhile */
    if (c->n_ext == c->ext_cap) {
      size_t cap = c->ext_cap ? 2 * c->ext_cap : 16;
      const void **p = realloc(c->ext_known, cap * sizeof *p);
      if (p) c->ext_known = p, c->ext_cap = cap;
    }
    if (c->n_ext < c->ext_cap) c->ext_known[c->n_ext++] = m;   /* else: asked again next time */
  }
  pthread_mutex_unlock(&c->mu);
  return true;
}

/* A waiting call's answer: the output's handle from ExtDone's spec. */
static bool finish_waiting(struct bext_device *dev, struct bxrm_conn *c, const bext_ext_method *m, uint64_t out,
                           Bxrm__Reply *r, void *call_out) {
  if (r->body_case != BXRM__REPLY__BODY_EXT_DONE)
    return bxr_error("%s: the server answered an extension call with something else", m->what);
  const Bxrm__ExtDone *d = r->ext_done;
  if (d->error[0]) return bxr_error("%s", d->error);
  if (!out) return true;
  if (d->dtype >= (uint32_t)BEXT_DTYPE_COUNT || d->n_shape > BEXT_MAX_RANK)
    return bxr_error("%s: the server answered with a malformed output spec", m->what);
  bext_tensor *t = bxrm_handle_new(dev, c, out, (bext_dtype)d->dtype, (int)d->n_shape, d->shape);
  if (!t) return false;
  *(bext_tensor **)call_out = t;
  return true;
}

/* The ids a value result may use: one per tensor slot, at most this many. */
#define VALUE_IDS BEXT_EXT_MAX_SLOTS

static bool spec_ok(const Bxrm__TensorOut *o) {
  if (o->dtype >= (uint32_t)BEXT_DTYPE_COUNT || o->n_shape > BEXT_MAX_RANK) return false;
  for (size_t d = 0; d < o->n_shape; d++)
    if (o->shape[d] < 0) return false;
  return true;
}

/* A value result's answer: out_decode of its ordinary parts, then a handle
 * for each tensor slot of the decoded variant at id base+i.  Anything that
 * does not fit (a value that does not decode: truncated, or naming a
 * variant this build lacks; another count of tensors; a malformed spec)
 * is an error naming the method, never a crash: out is left zeroed and
 * the ids the server holds are released. */
static bool finish_value(struct bext_device *dev, struct bxrm_conn *c, const bext_ext_method *m, uint64_t base,
                         Bxrm__Reply *r, void *out) {
  if (r->body_case != BXRM__REPLY__BODY_EXT_DONE)
    return bxr_error("%s: the server answered an extension call with something else", m->what);
  const Bxrm__ExtDone *d = r->ext_done;
  if (d->error[0]) return bxr_error("%s", d->error);
  /* From here the server holds the non-absent tensors of the answer. */
  bext_ext_slot sl[BEXT_EXT_MAX_SLOTS];
  int k = 0;
  bool ok = true;
  if (d->n_outs > VALUE_IDS)
    ok = bxr_error("%s: the server's answer names %zu tensors, the call reserved %d ids", m->what, d->n_outs,
                   VALUE_IDS);
  else if (d->value.len == 0 || m->out_decode(out, d->value.data, d->value.len) != d->value.len)
    ok = bxr_error("%s: the server's answer holds a value that does not decode (%zu bytes: truncated, or naming a "
                   "field or variant this build of the extension does not have)", m->what, d->value.len);
  else if ((k = m->out_slots(out, sl)) != (int)d->n_outs)
    ok = bxr_error("%s: the server's answer holds %zu tensors, the value it decodes to holds %d", m->what,
                   d->n_outs, k);
  for (int i = 0; ok && i < k; i++) {
    const Bxrm__TensorOut *o = d->outs[i];
    if (o->absent) continue;
    if (!spec_ok(o)) {
      ok = bxr_error("%s: the server's answer gives output `%s` a malformed spec", m->what, sl[i].name);
      break;
    }
    bext_tensor *t = bxrm_handle_new(dev, c, base + (uint64_t)i, (bext_dtype)o->dtype, (int)o->n_shape, o->shape);
    if (!t) ok = false;
    else *sl[i].at = t;
  }
  if (ok) return true;
  for (size_t i = 0; i < d->n_outs && i < VALUE_IDS; i++) {
    bext_tensor *t = (int)i < k ? *sl[i].at : NULL;
    if (t) bext_release(t);   /* its handle releases the id */
    else if (!d->outs[i]->absent) bxrm_conn_forget(c, base + i);
  }
  memset(out, 0, m->out_size);
  return false;
}

/* A value result its metadata describes streams: the client builds the
 * value from the metadata (out_from_meta) twice, first with stand-in
 * tensors to learn and check its tensors' specs and encode what it
 * expects (nothing is sent if that fails), then, once the frame is
 * queued, with handles at the reserved ids. */
struct plan {
  const bext_ext_method *m;
  void *meta;                        /* the metadata value */
  int k;                             /* tensors in the value */
  bext_spec sp[VALUE_IDS];
  unsigned char *expect;             /* out_encode of the value */
  size_t elen;
  /* the second pass */
  struct bext_device *dev;
  struct bxrm_conn *c;
  uint64_t base;
  int made;
};

static bext_tensor *plan_make(void *ctx, int slot, const bext_meta_spec *ms) {
  struct plan *p = ctx;
  if (slot >= VALUE_IDS) return bxr_error("%s: a value holds at most %d tensors", p->m->what, VALUE_IDS), NULL;
  if (!bxr_ext_spec_of(p->m, ms, &p->sp[slot])) return NULL;
  p->k = slot + 1;
  return (bext_tensor *)p;   /* a stand-in, never used as a tensor */
}

static bext_tensor *plan_handle(void *ctx, int slot, const bext_meta_spec *ms) {
  (void)ms;
  struct plan *p = ctx;
  const bext_spec *sp = &p->sp[slot];
  bext_tensor *t = slot < p->k ? bxrm_handle_new(p->dev, p->c, p->base + (uint64_t)slot, sp->dtype, sp->rank, sp->shape)
                               : NULL;
  if (t) p->made = slot + 1;
  return t;
}

/* The first pass; false + error (nothing sent).  p->k == 0: the value
 * has no tensor to carry a deferred error, so the call waits instead. */
static bool plan_value(struct plan *p, const bext_ext_call *call) {
  const bext_ext_method *m = call->m;
  bext_meta_error merr;
  memset(&merr, 0, sizeof merr);
  if (!(p->meta = calloc(1, m->meta_size ? m->meta_size : 1))) return bxr_error("%s: out of memory", m->what);
  if (!m->meta(call->args, p->meta, &merr))
    return bxr_error("%s: its metadata fails for these inputs: %s", m->what, merr.msg);
  bool ok = m->out_from_meta(p->meta, call->out, plan_make, p);
  if (ok && p->k > 0) {
    p->elen = m->out_encode(call->out, NULL, 0);
    ok = (p->expect = malloc(p->elen ? p->elen : 1)) != NULL;
    if (ok) m->out_encode(call->out, p->expect, p->elen);
    else bxr_error("%s: out of memory", m->what);
  }
  memset(call->out, 0, m->out_size);   /* the stand-ins go */
  return ok;
}

bool bxrm_ext_exec(struct bext_device *dev, bext_ext_call *call) {
  const bext_ext_method *m = call->m;
  struct bxrm_conn *c = dev->ctx;
  bool value = !m->out_tensor && m->out_size;
  if (value && !m->out_decode)
    return bxr_error("%s: its descriptor has no decoder for its output value (generated by an older bextc: "
                     "rebuild the extension)", m->what);
  bool streams = m->out_tensor && m->meta && m->meta_size == sizeof(bext_meta_spec);
  bext_spec sp;
  if (streams && !bxr_ext_meta_spec(m, call->args, &sp)) return false;
  if (!find(c, m)) return false;
  if (value && !c->ext_values)
    return bxr_error("%s: the server at remote:%s (hosting %s) does not carry extension results that are values "
                     "(it predates them)", m->what, c->address, c->server_device);
  struct plan plan;
  memset(&plan, 0, sizeof plan);
  plan.m = m;
  if (value && m->meta && m->out_from_meta && !plan_value(&plan, call)) {
    free(plan.meta);
    free(plan.expect);
    return false;
  }
  bool streams_value = plan.k > 0;

  bext_ext_slot s[BEXT_EXT_MAX_SLOTS];
  uint64_t ins[BEXT_EXT_MAX_SLOTS];
  int n = m->in_slots(call->args, s);
  for (int i = 0; i < n; i++) ins[i] = bxrm_id_of(*s[i].at);   /* dispatch checked: all on dev */
  unsigned char abuf[256], *args = abuf;
  size_t alen = m->args_encode(call->args, abuf, sizeof abuf);
  if (alen > sizeof abuf) {
    if (!(args = malloc(alen))) return bxr_error("%s: out of memory encoding its arguments", m->what);
    m->args_encode(call->args, args, alen);
  }

  Bxrm__ExtCall x = BXRM__EXT_CALL__INIT;
  x.trait = (char *)m->trait;
  x.id = (char *)m->id;
  x.n_in = (size_t)n;
  x.in = ins;
  x.args.data = args;
  x.args.len = alen;
  x.wait = !streams && !streams_value;
  if (streams) {
    x.dtype = (uint32_t)sp.dtype;
    x.n_shape = (size_t)sp.rank;
    x.shape = sp.shape;
  }
  Bxrm__TensorOut to[VALUE_IDS], *tp[VALUE_IDS];
  if (streams_value) {
    for (int i = 0; i < plan.k; i++) {
      bxrm__tensor_out__init(&to[i]);
      to[i].dtype = (uint32_t)plan.sp[i].dtype;
      to[i].n_shape = (size_t)plan.sp[i].rank;
      to[i].shape = plan.sp[i].shape;
      tp[i] = &to[i];
    }
    x.value.data = plan.expect;
    x.value.len = plan.elen;
    x.n_outs = (size_t)plan.k;
    x.outs = tp;
  }
  Bxrm__Request req = BXRM__REQUEST__INIT;
  req.body_case = BXRM__REQUEST__BODY_EXT_CALL;
  req.ext_call = &x;

  bool ok;
  pthread_mutex_lock(&c->mu);
  if (m->out_tensor) x.out = bxrm_conn_new_id(c);
  if (value) {   /* a block of ids: the value's tensors take them in slot order */
    x.out = c->next_id + 1;
    x.n_out = streams_value ? (uint32_t)plan.k : VALUE_IDS;
    c->next_id += x.n_out;
  }
  if (streams_value) {
    bool sent = bxrm_conn_send(c, m->what, &req, NULL, 0, true);
    pthread_mutex_unlock(&c->mu);
    plan.dev = dev, plan.c = c, plan.base = x.out;
    ok = sent && m->out_from_meta(plan.meta, call->out, plan_handle, &plan);
    if (!ok && sent) {   /* handles made release their ids; the server holds the others too */
      bext_ext_slot o[BEXT_EXT_MAX_SLOTS];
      int no = m->out_slots(call->out, o);
      for (int i = 0; i < no; i++)
        if (*o[i].at) bext_release(*o[i].at);
      for (int i = plan.made; i < plan.k; i++) bxrm_conn_forget(c, x.out + (uint64_t)i);
    }
    if (!ok) memset(call->out, 0, m->out_size);
  } else if (streams) {
    ok = bxrm_conn_send(c, m->what, &req, NULL, 0, true);
    pthread_mutex_unlock(&c->mu);
    bext_tensor *t = ok ? bxrm_handle_new(dev, c, x.out, sp.dtype, sp.rank, sp.shape) : NULL;
    if (t) *(bext_tensor **)call->out = t;
    ok = t != NULL;
  } else {
    pthread_mutex_unlock(&c->mu);
    Bxrm__Reply *r = NULL;
    ok = bxrm_conn_call(c, m->what, &req, &r, NULL, NULL) &&
         (value ? finish_value(dev, c, m, x.out, r, call->out) : finish_waiting(dev, c, m, x.out, r, call->out));
    if (r) bxrm__reply__free_unpacked(r, NULL);
  }
  if (args != abuf) free(args);
  free(plan.meta);
  free(plan.expect);
  return ok;
}
