/* fusion.c — the "+fusion" decorator: deferred execution over any inner
 * device.  Every core op on a fusion device is recorded on the calling
 * thread's stream for that device, and its output handle is returned at
 * once: its spec is what dispatch's inference rule computed (op->out),
 * its storage a lazy value (fusion.h) that the record fills when it runs.
 * Extension calls whose method has metadata (`#[fusion(dtype, shape)]` /
 * `#[fusion(meta)]`) are recorded the same way, their output value (tensor,
 * struct, tuple or enum) published from the metadata; a
 * `#[fusion(default)]` method's body runs on this device, so its core ops
 * are recorded.
 *
 * A stream runs (fusion_plan.c) when
 *   - a tensor of it is read (bext_read, bext_to_device: the `read`
 *     member; bext_data refuses fusion tensors: not host memory),
 *   - bext_sync(device) (the `sync` member: every stream of the device),
 *   - it is full (BXFU_STREAM_CAP records),
 *   - an op on another thread's stream uses one of its values (that
 *     stream runs first, whole: correctness over speed — a tensor handed
 *     between threads costs the giver's queue at the first use),
 *   - an extension call that runs now needs the values (one without
 *     metadata whose inner device runs it, or one whose metadata gives
 *     it no tensor output),
 *   - the device closes.
 * A record that fails keeps its message in its value: a read of it (or of
 * anything computed from it) fails with that message, which names the
 * failing op, and the next bext_sync of the device reports the first
 * failure since the last one.  Records whose result nobody can observe any
 * more (dropped by the user and by every later record) are not run.
 *
 * Why one stream per thread: recording takes only the stream's own lock,
 * uncontended unless another thread flushes it, so threads recording on
 * one device never serialize on a device-wide lock (Burn's early
 * single-stream fusion broke with concurrent threads, tracel-ai/burn
 * #1117). */
#include "fusion.h"

#include "bext/gen.h"   /* bext_meta_spec: what metadata functions compute */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Atomic uint64_t bxfu_n_recorded, bxfu_n_flushes, bxfu_n_run, bxfu_n_dropped, bxfu_n_plans_built,
    bxfu_n_plans_reused, bxfu_n_unplanned, bxfu_n_kernels_compiled, bxfu_n_kernels_launched, bxfu_n_ops_fused,
    bxfu_n_reductions_fused;

static void bump(_Atomic uint64_t *c, uint64_t n) { atomic_fetch_add_explicit(c, n, memory_order_relaxed); }

/* ------------------------------------------------------------ values */

static void val_release(void *p) {
  struct bxfu_val *v = p;
  if (!v || atomic_fetch_sub_explicit(&v->rc, 1, memory_order_acq_rel) != 1) return;
  bext_release(v->inner);
  free(v->err);
  bxr_free_to(v->hook, v, sizeof *v);
}

/* A new value (rc references) pending on s, or done with inner when s is
 * NULL; NULL + error. */
static struct bxfu_val *val_new(int rc, struct bxfu_stream *s, bext_tensor *inner) {
  struct bxr_hook h = bxr_hook_now();
  struct bxfu_val *v = bxr_alloc_from(h, sizeof *v);
  if (!v) return NULL;
  atomic_init(&v->rc, rc);
  v->hook = h;
  atomic_init(&v->stream, s);
  v->inner = inner;
  v->err = NULL;
  return v;
}

/* A handle on dev for v (whose reference it takes); NULL + error. */
static bext_tensor *wrap_val(struct bext_device *dev, const bext_spec *sp, struct bxfu_val *v) {
  bext_tensor *t = bxr_tensor_new_opaque(dev, sp->dtype, sp->rank, sp->shape, v, val_release);
  if (!t) val_release(v);
  return t;
}

/* A handle on dev holding a computed inner tensor (taken over). */
static bext_tensor *wrap_done(struct bext_device *dev, bext_tensor *inner) {
  if (!inner) return NULL;
  struct bxfu_val *v = val_new(1, NULL, inner);
  if (!v) {
    bext_release(inner);
    return NULL;
  }
  return wrap_val(dev, &inner->spec, v);
}

/* ------------------------------------------------------------ streams */

static struct bxfu_dev *dev_ctx(struct bext_device *dev) { return dev->ctx; }

static bool bxfu_open(struct bext_device *dev) {
  if (dev->ctx) return true;  /* kept across close: threads hold its streams */
  struct bxfu_dev *d = calloc(1, sizeof *d);
  if (!d) return bxr_error("%s: out of memory", dev->name);
  pthread_mutex_init(&d->lock, NULL);
  dev->ctx = d;
  return true;
}

/* The calling thread's streams, one per fusion device it used.  A thread
 * that ends gives its streams up (owned = false) for the next thread to
 * take, pending records and all: values of them may still be read from
 * other threads, so they are never freed with the thread. */
#define BXFU_TLS_MAX 16
struct bxfu_tls {
  int n;
  struct {
    struct bext_device *dev;
    struct bxfu_stream *s;
  } e[BXFU_TLS_MAX];
};
static _Thread_local struct bxfu_tls *tls;
static pthread_key_t tls_key;
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;

static void tls_end(void *p) {
  struct bxfu_tls *t = p;
  for (int i = 0; i < t->n; i++) {
    struct bxfu_dev *d = dev_ctx(t->e[i].dev);
    pthread_mutex_lock(&d->lock);
    t->e[i].s->owned = false;
    pthread_mutex_unlock(&d->lock);
  }
  free(t);
}
static void tls_init(void) { pthread_key_create(&tls_key, tls_end); }

static __attribute__((noinline)) struct bxfu_stream *stream_claim(struct bext_device *dev) {
  pthread_once(&tls_once, tls_init);
  if (!tls) {
    if (!(tls = calloc(1, sizeof *tls))) return bxr_error("%s: out of memory", dev->name), NULL;
    pthread_setspecific(tls_key, tls);
  }
  if (tls->n == BXFU_TLS_MAX)
    return bxr_error("%s: one thread records on more than %d fusion devices", dev->name, BXFU_TLS_MAX), NULL;
  struct bxfu_dev *d = dev_ctx(dev);
  pthread_mutex_lock(&d->lock);
  struct bxfu_stream *s = d->streams;
  while (s && s->owned) s = s->next;
  if (!s && (s = calloc(1, sizeof *s))) {
    pthread_mutex_init(&s->lock, NULL);
    s->dev = dev;
    s->next = d->streams;
    d->streams = s;
  }
  if (s) s->owned = true;
  pthread_mutex_unlock(&d->lock);
  if (!s) return bxr_error("%s: out of memory", dev->name), NULL;
  tls->e[tls->n].dev = dev;
  tls->e[tls->n].s = s;
  tls->n++;
  return s;
}

static inline struct bxfu_stream *my_stream(struct bext_device *dev) {
  struct bxfu_tls *t = tls;
  if (t)
    for (int i = 0; i < t->n; i++)
      if (t->e[i].dev == dev) return t->e[i].s;
  return stream_claim(dev);
}

/* Runs everything s holds; s->lock held. */
static void run_locked(struct bxfu_stream *s) {
  int n = s->n;
  if (!n) return;
  s->n = 0;  /* a record's run never records on s (it runs on the inner device) */
  bump(&bxfu_n_flushes, 1);
  bump(&bxfu_n_recorded, (uint64_t)n);
  bxfu_plan_run(s, s->rec, n);
}

static void stream_run(struct bxfu_stream *s) {
  pthread_mutex_lock(&s->lock);
  run_locked(s);
  pthread_mutex_unlock(&s->lock);
}

/* Makes sure the value behind wrapper t is computed (its stream ran). */
static void need(const bext_tensor *t) {
  struct bxfu_stream *s = atomic_load_explicit(&bxfu_val_of(t)->stream, memory_order_acquire);
  if (s) stream_run(s);
}

/* Values of another stream that op inputs use: that stream runs first, so
 * every record of a stream reads only its own stream's values or computed
 * ones (no lock order between streams is ever needed). */
static void need_foreign(bext_tensor *const *in, int n, const struct bxfu_stream *mine) {
  for (int i = 0; i < n; i++) {
    struct bxfu_stream *s = atomic_load_explicit(&bxfu_val_of(in[i])->stream, memory_order_acquire);
    if (s && s != mine) stream_run(s);
  }
}

/* Room for one more record on s (lock held): a full stream runs first. */
static struct bxfu_rec *rec_slot(struct bxfu_stream *s) {
  if (s->n == BXFU_STREAM_CAP) run_locked(s);
  if (s->n == s->cap) {
    int cap = s->cap ? s->cap * 2 : 64;
    struct bxfu_rec *r = realloc(s->rec, (size_t)cap * sizeof *r);
    if (!r) return bxr_error("%s: out of memory", s->dev->name), NULL;
    for (int i = 0; i < s->n; i++)   /* inline input arrays moved with their records */
      if (r[i].n_in <= BXR_MAX_INPUTS) r[i].in = r[i].inbuf;
    s->rec = r;
    s->cap = cap;
  }
  return &s->rec[s->n];
}

/* ------------------------------------------------------------ running */

void bxfu_fail(struct bxfu_stream *s, struct bxfu_rec *r, const char *msg) {
  if (r->res && !r->res->err) r->res->err = strdup(msg);
  for (int k = 0; r->x && k < r->x->n_more; k++)
    if (!r->x->more[k]->err) r->x->more[k]->err = strdup(msg);
  if (s && !s->err) s->err = strdup(msg);
}

bext_tensor *bxfu_take_inner(bext_tensor *w, const char **err) {
  struct bxfu_val *v = bxfu_val_of(w);
  if (v->err) {
    *err = v->err;
    return NULL;
  }
  BXR_ASSERT(v->inner && !atomic_load_explicit(&v->stream, memory_order_relaxed));
  if (bxr_is_unique(w)) {  /* nobody else can see it: the inner op may reuse it */
    bext_tensor *in = v->inner;
    v->inner = NULL;
    return in;
  }
  return bext_retain(v->inner);
}

void bxfu_rec_done(struct bxfu_rec *r) {
  for (int i = 0; i < r->n_in; i++) {
    if (r->kind == BXFU_CORE) bext_release(r->in[i]);   /* an extension's are borrowed from its slots */
    r->in[i] = NULL;
  }
  r->n_in = 0;
  if (r->in != r->inbuf) free(r->in);
  r->in = r->inbuf;
  if (r->args) {
    bext_ext_args_release(r->m, r->args);
    free(r->args);
    r->args = NULL;
  }
  if (r->res) {
    atomic_store_explicit(&r->res->stream, NULL, memory_order_release);
    val_release(r->res);
    r->res = NULL;
  }
  if (r->x) {
    for (int k = 0; k < r->x->n_more; k++) {
      atomic_store_explicit(&r->x->more[k]->stream, NULL, memory_order_release);
      val_release(r->x->more[k]);
    }
    free(r->x->want);
    free(r->x);
    r->x = NULL;
  }
}

/* "deferred op `bext_gather` failed: bext_gather: index 9 ...": the
 * message a read of the value (or of anything computed from it) gives. */
static void fail_deferred(struct bxfu_stream *s, struct bxfu_rec *r, const char *what) {
  char msg[900];
  snprintf(msg, sizeof msg, "deferred op `%s` failed: %s", what, bext_last_error());
  bxfu_fail(s, r, msg);
}

static void run_core(struct bxfu_stream *s, struct bxfu_rec *r) {
  struct bxr_op op;
  memset(&op, 0, sizeof op);
  op.code = r->code;
  op.api = r->api;
  op.device = s->dev->inner;
  op.n_in = r->n_in;
  op.in = op.inbuf;
  if (r->n_in > BXR_MAX_INPUTS && !(op.in = calloc((size_t)r->n_in, sizeof *op.in))) {
    bxfu_fail(s, r, "fusion: out of memory");
    return;
  }
  memcpy(op.sc, r->sc, sizeof op.sc);
  op.at = r->at;
  const char *err = NULL;
  for (int i = 0; i < r->n_in && !err; i++) op.in[i] = bxfu_take_inner(r->in[i], &err);
  if (err) bxfu_fail(s, r, err);  /* a failed input: the same message, naming the op that failed */
  /* the wrappers go after the message is copied (err lives in one's value) */
  for (int i = 0; i < r->n_in; i++) {
    bext_release(r->in[i]);
    r->in[i] = NULL;
  }
  if (err) {
    for (int i = 0; i < r->n_in; i++) bext_release(op.in[i]);
  } else {
    bext_tensor *res = bxr_dispatch(&op);  /* consumes op.in */
    if (res) r->res->inner = res;
    else fail_deferred(s, r, r->api ? r->api : bxr_op_name(r->code));
  }
  if (op.in != op.inbuf) free(op.in);
}

/* "T::m (flex implementation) disagrees with its metadata: output ...":
 * check mode's message, for what Fusion published against what the
 * backend returned. */
static void disagrees(char *msg, size_t n, const bext_ext_method *m, const struct bext_device *inner,
                      const char *why) {
  snprintf(msg, n, "%s (%s implementation) disagrees with its metadata: %s", m->what, inner->name, why);
}

static void release_out(const bext_ext_method *m, void *out) {
  bext_ext_slot sl[BEXT_EXT_MAX_SLOTS];
  int n = m->out_slots(out, sl);
  for (int i = 0; i < n; i++) {
    bext_release(*sl[i].at);
    *sl[i].at = NULL;
  }
}

/* An extension call recorded from metadata: the inner device's arm, then
 * its output value checked against what was published (the descriptor's
 * meta_check, check mode's comparator): tensor specs and enum variants in
 * every build, ordinary fields when check mode was on at the call.  Only
 * then are the backend's tensors bound to the published handles; on a
 * disagreement (a wrong variant) none is, and every output fails with the
 * message, so the read reports it. */
static void run_ext(struct bxfu_stream *s, struct bxfu_rec *r) {
  const bext_ext_method *m = r->m;
  bext_ext_slot sl[BEXT_EXT_MAX_SLOTS];
  int n = m->in_slots(r->args, sl);
  const char *err = NULL;
  bext_tensor *w[BEXT_EXT_MAX_SLOTS];
  for (int i = 0; i < n; i++) {
    w[i] = *sl[i].at;
    *sl[i].at = err ? NULL : bxfu_take_inner(w[i], &err);
  }
  if (err) bxfu_fail(s, r, err);
  for (int i = 0; i < n; i++) bext_release(w[i]);   /* after the message is copied */
  if (err) return;
  _Alignas(16) unsigned char obuf[256];
  void *out = m->out_size <= sizeof obuf ? obuf : calloc(1, m->out_size);
  if (!out) {
    bxfu_fail(s, r, "fusion: out of memory");
    return;
  }
  memset(out, 0, m->out_size);
  bext_ext_call c = {m, r->args, out};
  char why[600], msg[900];
  struct bxfu_watch watch;   /* is it one elementwise #[cube] launch? (fusion_cube.c) */
  bxfu_cube_watch(&watch, r, s->dev->inner, r->args);
  bool ran = bxr_ext_exec(s->dev->inner, &c);
  bxfu_cube_learn(&watch, r, s->dev->inner, out, ran && watch.on && m->meta_check(out, r->x->want, false, why, sizeof why));
  if (!ran) {
    fail_deferred(s, r, m->what);
  } else if (!m->meta_check(out, r->x->want, r->x->fields, why, sizeof why)) {
    disagrees(msg, sizeof msg, m, s->dev->inner, why);
    release_out(m, out);
    bxfu_fail(s, r, msg);
  } else {
    /* the variants agree, so the slots are the published ones, in order */
    int no = m->out_slots(out, sl);
    BXR_ASSERT(no == 1 + r->x->n_more);
    r->res->inner = *sl[0].at;
    for (int k = 0; k < r->x->n_more; k++) r->x->more[k]->inner = *sl[k + 1].at;
  }
  if (out != obuf) free(out);
}

void bxfu_run_rec(struct bxfu_stream *s, struct bxfu_rec *r) {
  if (r->kind == BXFU_CORE) run_core(s, r);
  else run_ext(s, r);
  bump(&bxfu_n_run, 1);
  bxfu_rec_done(r);
}

/* ------------------------------------------------------------ the vtable */

static bext_tensor *bxfu_exec(struct bxr_op *op) {
  struct bext_device *dev = op->device;
  struct bxfu_stream *s = my_stream(dev);
  if (!s) return NULL;
  need_foreign(op->in, op->n_in, s);
  bext_tensor **in = op->inbuf;
  if (op->n_in > BXR_MAX_INPUTS && !(in = malloc((size_t)op->n_in * sizeof *in)))
    return bxr_error("%s: out of memory", dev->name), NULL;
  struct bxfu_val *v = val_new(2, s, NULL);  /* the wrapper's storage and the record */
  bext_tensor *t = v ? wrap_val(dev, &op->out, v) : NULL;
  if (!t) {
    if (v) val_release(v);
    if (in != op->inbuf) free(in);
    return NULL;
  }
  pthread_mutex_lock(&s->lock);
  struct bxfu_rec *r = rec_slot(s);
  if (!r) {
    pthread_mutex_unlock(&s->lock);
    if (in != op->inbuf) free(in);
    atomic_store(&v->stream, NULL);
    val_release(v);
    bext_release(t);
    return NULL;
  }
  r->kind = BXFU_CORE;
  r->code = op->code;
  r->api = op->api;
  r->n_in = op->n_in;
  r->in = in == op->inbuf ? r->inbuf : in;
  for (int i = 0; i < op->n_in; i++) r->in[i] = bxr_op_take(op, i);
  memcpy(r->sc, op->sc, sizeof r->sc);
  r->at = op->at;
  r->out = op->out;
  r->res = v;
  r->m = NULL;
  r->args = NULL;
  r->x = NULL;
  s->n++;
  pthread_mutex_unlock(&s->lock);
  return t;
}

static bext_tensor *bxfu_from_data(struct bext_device *dev, bext_dtype dt, int rank, const int64_t *shape,
                                   const void *src) {
  return wrap_done(dev, dev->inner->vt->from_data(dev->inner, dt, rank, shape, src));
}

static bool bxfu_read(const bext_tensor *t, void *dst) {
  need(t);
  const struct bxfu_val *v = bxfu_val_of(t);
  if (v->err) return bxr_error("%s", v->err);
  return v->inner->device->vt->read(v->inner, dst);
}

/* Every stream of dev, in list order (the list only grows). */
static struct bxfu_stream *streams_of(struct bext_device *dev) {
  struct bxfu_dev *d = dev_ctx(dev);
  if (!d) return NULL;
  pthread_mutex_lock(&d->lock);
  struct bxfu_stream *s = d->streams;
  pthread_mutex_unlock(&d->lock);
  return s;
}

/* Runs every stream of the device; reports (and forgets) the first
 * deferred failure since the last sync. */
static bool bxfu_sync(struct bext_device *dev) {
  char *err = NULL;
  for (struct bxfu_stream *s = streams_of(dev); s; s = s->next) {
    pthread_mutex_lock(&s->lock);
    run_locked(s);
    if (s->err && !err) err = s->err;
    else free(s->err);
    s->err = NULL;
    pthread_mutex_unlock(&s->lock);
  }
  if (!err) return true;
  bxr_error("%s: %s", dev->name, err);
  free(err);
  return false;
}

static void bxfu_close(struct bext_device *dev) {
  for (struct bxfu_stream *s = streams_of(dev); s; s = s->next) {
    pthread_mutex_lock(&s->lock);
    run_locked(s);
    free(s->err);
    s->err = NULL;
    pthread_mutex_unlock(&s->lock);
  }
  struct bxfu_dev *d = dev_ctx(dev);
  if (d) {
    pthread_mutex_lock(&d->lock);
    bxfu_plans_free(d);
    pthread_mutex_unlock(&d->lock);
  }
}

/* ------------------------------------------------------ extension calls */

/* Inputs as inner tensors for a call that runs now: their streams run
 * first; outputs come back wrapped as computed values. */
static bext_tensor *unwrap_now(bext_tensor *w) {
  need(w);
  const struct bxfu_val *v = bxfu_val_of(w);
  if (v->err) return bxr_error("%s", v->err), NULL;
  return bext_retain(v->inner);
}

/* A method with metadata whose output value holds no tensor (an enum
 * variant without fields, as the metadata chose it): nothing to defer, so
 * the call runs now on the inner device, and what it returned is checked
 * against the metadata as a recorded call's is; the output is the
 * metadata's (out, filled by out_from_meta). */
static bool run_now_checked(struct bext_device *dev, bext_ext_call *call, const void *want, bool fields) {
  const bext_ext_method *m = call->m;
  void *got = calloc(1, m->out_size);
  if (!got) return bxr_error("%s: out of memory", m->what);
  bext_ext_call c = {m, call->args, got};
  bool ok = bxr_ext_forward(dev, &c, unwrap_now, wrap_done);
  char why[600], msg[900];
  if (ok && !m->meta_check(got, want, fields, why, sizeof why)) {
    disagrees(msg, sizeof msg, m, dev->inner, why);
    ok = bxr_error("%s", msg);
  }
  if (ok) release_out(m, got);   /* the backend's ordinary fields are discarded (language.md §5) */
  else release_out(m, got), memset(call->out, 0, m->out_size);
  free(got);
  return ok;
}

/* out_from_meta's maker while the record is prepared: it collects each
 * tensor slot's spec and leaves a stand-in (never read as a tensor: the
 * slots get their lazy handles, or out is zeroed, before anyone sees it). */
struct spec_list {
  bext_meta_spec *ms;
  int n;
};

static bext_tensor *list_spec(void *ctx, int slot, const bext_meta_spec *spec) {
  struct spec_list *l = ctx;
  BXR_ASSERT(slot == l->n && slot < BEXT_EXT_MAX_SLOTS);
  l->ms[l->n++] = *spec;
  return (bext_tensor *)l;
}

/* A method with metadata: the call is recorded, and its output value is
 * published at once from the metadata (the descriptor's out_from_meta): a lazy
 * handle per tensor from its spec, ordinary fields and enum variants the
 * metadata's.  The metadata travels with the record, so the run can check
 * the backend's value against it before binding any handle. */
static bool record_ext(struct bext_device *dev, bext_ext_call *call) {
  const bext_ext_method *m = call->m;
  bext_meta_spec *ms = calloc(BEXT_EXT_MAX_SLOTS, sizeof *ms);
  void *want = calloc(1, m->meta_size);
  struct bxfu_ext *x = NULL;
  struct bxfu_val *v[BEXT_EXT_MAX_SLOTS];
  bext_tensor *t[BEXT_EXT_MAX_SLOTS];
  bext_spec sp[BEXT_EXT_MAX_SLOTS];
  int nt = 0, nv = 0;
  bool ok = false;
  void *args = NULL;
  if (!ms || !want) {
    bxr_error("%s: out of memory", m->what);
    goto out;
  }
  bext_meta_error merr;
  memset(&merr, 0, sizeof merr);
  if (!m->meta(call->args, want, &merr)) {
    bxr_error("%s: its metadata fails for these inputs: %s", m->what, merr.msg);
    goto out;
  }
  memset(call->out, 0, m->out_size);
  struct spec_list sl0 = {ms, 0};
  if (!m->out_from_meta(want, call->out, list_spec, &sl0)) goto out;
  nt = sl0.n;
  for (int k = 0; k < nt; k++)
    if (!bxr_ext_spec_of(m, &ms[k], &sp[k])) goto out;
  bool fields = bext_check_enabled();
  if (!nt) {
    ok = run_now_checked(dev, call, want, fields);
    goto out;
  }
  struct bxfu_stream *s = my_stream(dev);
  if (!s) goto out;
  bext_ext_slot sl[BEXT_EXT_MAX_SLOTS];
  int n = m->in_slots(call->args, sl);
  for (int i = 0; i < n; i++)
    if (*sl[i].at) need_foreign(sl[i].at, 1, s);
  args = malloc(m->args_size ? m->args_size : 1);
  x = args ? calloc(1, sizeof *x + (size_t)(nt - 1) * sizeof x->more[0]) : NULL;
  if (!x) {
    bxr_error("%s: out of memory", m->what);
    goto out;
  }
  while (nv < nt) {
    if (!(v[nv] = val_new(2, s, NULL))) goto out;   /* the wrapper's storage and the record */
    t[nv] = wrap_val(dev, &sp[nv], v[nv]);           /* on failure it dropped the wrapper's reference */
    if (!t[nv++]) goto out;
  }
  /* the record takes the call's references: the slots are cleared so
   * dispatch releases nothing */
  memcpy(args, call->args, m->args_size);
  for (int i = 0; i < n; i++) *sl[i].at = NULL;
  pthread_mutex_lock(&s->lock);
  struct bxfu_rec *r = rec_slot(s);
  if (!r) {
    pthread_mutex_unlock(&s->lock);
    memcpy(call->args, args, m->args_size);   /* back to dispatch, which releases them */
    goto out;
  }
  memset(r, 0, sizeof *r);
  r->kind = BXFU_EXT;
  r->code = BXR_OP_COUNT;
  r->api = m->what;
  r->in = r->inbuf;
  r->out = sp[0];
  r->res = v[0];
  r->m = m;
  r->args = args;
  x->want = want;
  x->fields = fields;
  x->n_more = nt - 1;
  for (int k = 1; k < nt; k++) x->more[k - 1] = v[k];
  r->x = x;
  s->n++;
  pthread_mutex_unlock(&s->lock);
  int no = m->out_slots(call->out, sl);
  BXR_ASSERT(no == nt);
  for (int k = 0; k < nt; k++) *sl[k].at = t[k];
  free(ms);
  return true;
out:
  /* a failure before the record exists: nothing was published */
  for (int k = 0; k < nv; k++) {
    atomic_store(&v[k]->stream, NULL);
    val_release(v[k]);   /* the record's reference */
    bext_release(t[k]);  /* the wrapper's */
  }
  free(x);
  free(args);
  free(want);
  free(ms);
  if (!ok) memset(call->out, 0, m->out_size);
  return ok;
}

/* Extension calls (docs/runtime.md "Fusion"): a method with metadata
 * (`#[fusion(dtype, shape)]`, `#[fusion(meta)]`: tensor, struct, tuple
 * or enum outputs) is recorded, its output published from the metadata;
 * a method without metadata is `#[fusion(default)]` (a trait listing
 * Fusion gives every method one form), so its default body is its Fusion
 * implementation and runs on this device: its core ops are recorded like
 * any others, and its outputs are the body's own, lazy. */
static bool bxfu_ext_exec(struct bext_device *dev, bext_ext_call *call) {
  const bext_ext_method *m = call->m;
  if (!m->meta && m->fallback) return m->invoke(m->fallback, call->args, call->out);
  bool inner_arm = bxr_ext_has_arm(m, dev->inner);
  if (inner_arm && m->meta && m->out_from_meta) return record_ext(dev, call);
  if (inner_arm) return bxr_ext_forward(dev, call, unwrap_now, wrap_done);
  if (m->fallback) return m->invoke(m->fallback, call->args, call->out);
  return bxr_error("%s: no route on %s: the inner device %s has no implementation and the method no default body",
                   m->what, dev->name, dev->inner->name);
}

const struct bxr_backend bxfu_backend = {
    .api_version = BXR_BACKEND_API_VERSION,
    .name = "fusion",
    .host_memory = false,     /* its storage holds a lazy value */
    .open = bxfu_open,
    .close = bxfu_close,
    .sync = bxfu_sync,
    .from_data = bxfu_from_data,
    .read = bxfu_read,
    .exec = {
#define BXFU_X_(E, n, nin, k0, k1, k2, ns, at, inf) [BXR_OP_##E] = bxfu_exec,
        BXR_OP_TABLE(BXFU_X_)
#undef BXFU_X_
    },
    .ext_exec = bxfu_ext_exec,
};

/* ------------------------------------------------------------ public API */

bool bext_fusion_stats(bext_fusion_stat *out) {
  if (!out) return bxr_error("bext_fusion_stats: out is NULL");
  out->ops_recorded = atomic_load(&bxfu_n_recorded);
  out->flushes = atomic_load(&bxfu_n_flushes);
  out->ops_run = atomic_load(&bxfu_n_run);
  out->ops_dropped = atomic_load(&bxfu_n_dropped);
  out->plans_built = atomic_load(&bxfu_n_plans_built);
  out->plans_reused = atomic_load(&bxfu_n_plans_reused);
  out->segments_unplanned = atomic_load(&bxfu_n_unplanned);
  out->kernels_compiled = atomic_load(&bxfu_n_kernels_compiled);
  out->kernels_launched = atomic_load(&bxfu_n_kernels_launched);
  out->ops_fused = atomic_load(&bxfu_n_ops_fused);
  out->reductions_fused = atomic_load(&bxfu_n_reductions_fused);
  return true;
}
