/* ext.c — extension ops as descriptors (bext/ext.h): the dispatch of one
 * extension call (tensor checks, routing on device instances, the arm,
 * the device's ext_exec or the method's implementation, the output check)
 * and the process-wide registry of extension ops keyed by (trait, id).
 *
 * Routing (language.md §3, docs/codegen.md): the routing tensor is the
 * first float tensor among the call's tensors in declaration order, else
 * the first tensor; every other tensor must be on the same device (the
 * same instance: cube:cuda:0 and :1 differ, flex and flex+fusion differ;
 * autodiff strategies of one stack route together).  The OUTERMOST layer
 * of that device picks the arm — Autodiff, Fusion, or with no layer the
 * base backend's implementation — skipping transparent layers (tracers),
 * which still see the call: the device's ext_exec runs it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "bext/gen.h"   /* bext_meta_error: what metadata functions report */

static void release_slots(const bext_ext_method *m, void *args) {
  bext_ext_slot s[BEXT_EXT_MAX_SLOTS];
  int n = m->in_slots(args, s);
  for (int i = 0; i < n; i++) {
    bext_release(*s[i].at);
    *s[i].at = NULL;
  }
}

void bext_ext_args_release(const bext_ext_method *m, void *args) {
  if (m && args) release_slots(m, args);
}

void bext_ext_args_copy(const bext_ext_method *m, void *dst, void *src) {
  memcpy(dst, src, m->args_size);
  bext_ext_slot s[BEXT_EXT_MAX_SLOTS];
  int n = m->in_slots(dst, s);
  for (int i = 0; i < n; i++) bext_retain(*s[i].at);
}

/* The arm a device offers a method: the layer or backend that must be
 * listed.  Writes the reason into why when the method lacks it. */
bool bxr_ext_arm_listed(const bext_ext_method *m, const struct bext_device *dev, char *why, size_t n) {
  const struct bext_device *d = dev;
  while (d->layer >= 0 && d->transparent) d = d->inner;
  if (d->layer >= 0) {
    if (d->layer < BEXT_LAYER_COUNT && (m->layers >> d->layer) & 1u) return true;
    /* A default body composes core ops, which +autodiff differentiates:
     * it serves autodiff tensors without the trait listing Autodiff
     * (language.md §3 "Default bodies"; docs/codegen.md "Autodiff"). */
    if (d->layer == BEXT_LAYER_AUTODIFF && m->fallback) return true;
    snprintf(why, n, "its layer +%s is not listed", bext_device_layer(d));
    return false;
  }
  if ((m->have >> d->kind) & 1u) return true;
  snprintf(why, n, "it %s", m->why[d->kind] ? m->why[d->kind] : "is not listed");
  return false;
}

bool bxr_ext_has_arm(const bext_ext_method *m, const struct bext_device *d) {
  while (d->layer >= 0 && d->transparent) d = d->inner;
  if (d->layer >= 0) return d->layer < BEXT_LAYER_COUNT && ((m->layers >> d->layer) & 1u);
  /* a backend whose arm is the runtime's (Remote sends the call) has no
   * user implementation: its ext_exec is the arm */
  return ((m->have >> d->kind) & 1u) && (m->impl[d->kind] || m->fallback || d->vt->ext_exec);
}

bool bxr_ext_meta_spec(const bext_ext_method *m, const void *args, bext_spec *out) {
  bext_meta_spec ms;
  bext_meta_error merr;
  memset(&ms, 0, sizeof ms);
  memset(&merr, 0, sizeof merr);
  if (!m->meta(args, &ms, &merr)) return bxr_error("%s: its metadata fails for these inputs: %s", m->what, merr.msg);
  return bxr_ext_spec_of(m, &ms, out);
}

bool bxr_ext_spec_of(const bext_ext_method *m, const bext_meta_spec *ms, bext_spec *out) {
  if (ms->shape.len > BEXT_MAX_RANK)
    return bxr_error("%s: its metadata gives rank %zu, more than %d", m->what, ms->shape.len, BEXT_MAX_RANK);
  if (!bext_dtype_valid(ms->dtype)) return bxr_error("%s: its metadata gives an invalid dtype", m->what);
  memset(out, 0, sizeof *out);
  out->dtype = ms->dtype;
  out->rank = (int)ms->shape.len;
  for (size_t i = 0; i < ms->shape.len; i++) {
    if (ms->shape.dims[i] > (uint64_t)INT64_MAX)
      return bxr_error("%s: its metadata gives extent %llu", m->what, (unsigned long long)ms->shape.dims[i]);
    out->shape[i] = (int64_t)ms->shape.dims[i];
  }
  return true;
}

bool bxr_ext_exec(struct bext_device *dev, bext_ext_call *call) {
  if (dev->vt->ext_exec) return dev->vt->ext_exec(dev, call);
  /* A base device: the method's implementation for its backend. */
  const bext_ext_method *m = call->m;
  bext_ext_fn fn = m->impl[dev->kind] ? m->impl[dev->kind] : m->fallback;
  BXR_ASSERT(fn);
  return m->invoke(fn, call->args, call->out);
}

bool bxr_ext_forward(struct bext_device *dev, bext_ext_call *call, bxr_unwrap_fn unwrap, bxr_wrap_fn wrap) {
  const bext_ext_method *m = call->m;
  size_t asz = m->args_size, osz = m->out_size ? m->out_size : 1;
  /* small calls on the stack: a decorator's per-call cost is the point */
  _Alignas(16) unsigned char abuf[256], obuf[256];
  bool heap = asz > sizeof abuf || osz > sizeof obuf;
  unsigned char *args = heap ? bxr_alloc(asz ? asz : 1) : abuf, *out = heap ? bxr_alloc(osz) : obuf;
  if (!args || !out) {
    if (heap) bxr_free(args, asz ? asz : 1), bxr_free(out, osz);
    return false;
  }
  memset(out, 0, osz);
  memcpy(args, call->args, asz);
  bext_ext_slot s[BEXT_EXT_MAX_SLOTS];
  int n = m->in_slots(args, s);
  bool ok = true;
  for (int i = 0; i < n; i++) {   /* the copy's slots: inner tensors, or NULL */
    bext_tensor *w = *s[i].at;
    *s[i].at = NULL;
    if (!w || !ok || (*s[i].at = unwrap(w))) continue;
    char why[600];
    snprintf(why, sizeof why, "%s", bext_last_error());
    ok = bxr_error("%s: argument `%s`: %s", m->what, s[i].name, why);
  }
  if (ok) {
    bext_ext_call inner = {m, args, out};
    ok = bxr_ext_exec(dev->inner, &inner);
  }
  for (int i = 0; i < n; i++) {   /* what the implementation left; slots stay put */
    bext_release(*s[i].at);
    *s[i].at = NULL;
  }
  if (ok) {
    n = m->out_slots(out, s);
    for (int i = 0; i < n && ok; i++)
      if (*s[i].at && !(*s[i].at = wrap(dev, *s[i].at))) ok = false;
    if (ok) memcpy(call->out, out, m->out_size);
    else
      for (int i = 0; i < n; i++) bext_release(*s[i].at);
  }
  if (heap) bxr_free(args, asz ? asz : 1), bxr_free(out, osz);
  return ok;
}

/* "flex" for a base device (the spelling messages had before devices
 * were objects), the whole stack else. */
static const char *arm_name(const struct bext_device *dev) {
  return dev->layer < 0 && dev->index == 0 && !dev->target[0] && !dev->address[0]
             ? bext_backend_name(dev->kind)
             : dev->name;
}

/* ------------------------------------------------------------ check mode */

static int g_check;   /* bext_set_check / BEXT_CHECK=1; read relaxed on every call */

#ifdef NDEBUG
#define BXR_DEBUG_CHECKS 0
#else
#define BXR_DEBUG_CHECKS 1
#endif

__attribute__((constructor)) static void check_from_env(void) {
  const char *e = getenv("BEXT_CHECK");
  if (e && *e && strcmp(e, "0") != 0) __atomic_store_n(&g_check, 1, __ATOMIC_RELAXED);
}

void bext_set_check(bool on) { __atomic_store_n(&g_check, on ? 1 : 0, __ATOMIC_RELAXED); }
bool bext_check_enabled(void) { return __atomic_load_n(&g_check, __ATOMIC_RELAXED) != 0; }

/* What check mode expects of one call, computed before the arm consumes
 * the inputs: the metadata functions' value (want), or the spec of the
 * default body's output over meta tensors (want_t). */
struct expect {
  void *want;
  bext_tensor *want_t;
};

__attribute__((noinline, cold)) static void expect_free(const bext_ext_method *m, struct expect *x) {
  if (x->want) bxr_free(x->want, m->meta_size);
  bext_release(x->want_t);
  x->want = NULL;
  x->want_t = NULL;
}

/* Runs the default body over meta copies of the inputs; false + error. */
static bool default_over_specs(const bext_ext_method *m, bext_ext_call *call, struct expect *x) {
  unsigned char *args = bxr_alloc(m->args_size);
  if (!args) return false;
  memcpy(args, call->args, m->args_size);
  bext_ext_slot s[BEXT_EXT_MAX_SLOTS];
  int n = m->in_slots(args, s);
  bool ok = true;
  for (int i = 0; i < n; i++) {
    bext_tensor *t = ok ? bxr_meta_like(*s[i].at) : NULL;
    ok = ok && t;
    *s[i].at = t;
  }
  if (ok) ok = m->invoke(m->fallback, args, &x->want_t);
  for (int i = 0; i < n; i++) bext_release(*s[i].at);
  bxr_free(args, m->args_size);
  if (!ok) {
    char cause[600];
    snprintf(cause, sizeof cause, "%s", bext_last_error());
    return bxr_error("%s: its default body over the inputs' specs fails (check mode): %s", m->what, cause);
  }
  return true;
}

__attribute__((noinline, cold)) static bool check_before(const bext_ext_method *m, const struct bext_device *dev, bext_ext_call *call,
                         struct expect *x) {
  if (m->meta && m->meta_check) {
    if (!(x->want = bxr_calloc(m->meta_size))) return false;
    bext_meta_error err;
    memset(&err, 0, sizeof err);
    if (!m->meta(call->args, x->want, &err))
      return bxr_error("%s: its metadata fails for these inputs (check mode): %s", m->what, err.msg);
    return true;
  }
  /* A defaulted method whose user implementation runs on this arm: the
   * default body, over specs, says what the implementation must return. */
  const struct bext_device *d = dev;
  while (d->layer >= 0 && d->transparent) d = d->inner;
  if (d->layer < 0 && m->fallback && m->impl[d->kind] && m->out_tensor) return default_over_specs(m, call, x);
  return true;
}

/* The output against the expectation; false + error (the caller releases
 * the output). */
__attribute__((noinline, cold)) static bool check_after(const bext_ext_method *m, const struct bext_device *dev, bext_ext_call *call,
                        const struct expect *x) {
  char why[600];
  if (x->want && !m->meta_check(call->out, x->want, true, why, sizeof why))
    return bxr_error("%s (%s implementation) disagrees with its metadata: %s", m->what, arm_name(dev), why);
  if (x->want_t) {
    const bext_tensor *got = *(bext_tensor *const *)call->out, *want = x->want_t;
    if (got->dtype != want->dtype || !bxr_same_shape(got->rank, got->shape, want->rank, want->shape)) {
      char g[200], w[200];
      return bxr_error("%s (%s implementation) disagrees with its default body: output `output` is %s, "
                       "the default body over specs gives %s",
                       m->what, arm_name(dev), bxr_describe(got, g, sizeof g), bxr_describe(want, w, sizeof w));
    }
  }
  return true;
}

static void release_output(const bext_ext_method *m, void *out) {
  bext_ext_slot o[BEXT_EXT_MAX_SLOTS];
  int no = m->out_slots(out, o);
  for (int i = 0; i < no; i++) {
    bext_release(*o[i].at);
    *o[i].at = NULL;
  }
}

static const char *const declared_kind[] = {"FloatTensor", "IntTensor", "BoolTensor"};

/* Runs the arm on dev and finishes the call: releases what the arm left
 * in args (the slots s found before still point into args: invoke clears
 * consumed values, it never moves them), checks the outputs, and on
 * failure leaves out zeroed.  x: check mode's expectation, NULL when off
 * (inlined with a constant NULL, the fast path has no check code). */
static inline __attribute__((always_inline)) bool run_arm(const bext_ext_method *m, struct bext_device *dev,
                                                          bext_ext_call *call, bext_ext_slot *s, int n,
                                                          const struct expect *x) {
  /* an implementation that fails without setting an error during THIS call
   * gets the entry point's own message (bext.h's error contract) */
  uint64_t errors = bxr_error_count();
  bool ok = bxr_ext_exec(dev, call);
  for (int i = 0; i < n; i++) {
    bext_tensor *t = *s[i].at;
    if (t) {
      *s[i].at = NULL;
      bxr_release(t);
    }
  }
  if (ok) {
    bext_ext_slot o[BEXT_EXT_MAX_SLOTS];
    int no = m->out_slots(call->out, o);
    for (int i = 0; i < no && ok; i++) {
      const bext_tensor *t = *o[i].at;
      if (!t) {
        ok = !m->out_tensor;
        continue;
      }
      if (t->device->route != dev->route)
        bxr_panic(__FILE__, __LINE__, "%s: the implementation on %s returned output `%s` on %s", m->what,
                  dev->name, o[i].name, t->device->name);
      /* Output kinds: in check mode, and always in debug builds (the
       * reference's debug checks); release builds skip the lookup. */
      if ((BXR_DEBUG_CHECKS || x) && o[i].kind >= 0 && (int)bxr_dtype_kind(t->dtype) != o[i].kind)
        ok = bxr_error("%s (%s implementation) returned output `%s` of dtype %s, declared %s", m->what,
                       arm_name(dev), o[i].name, bext_dtype_name(t->dtype), declared_kind[o[i].kind]);
    }
    if (x) ok = ok && check_after(m, dev, call, x);
    if (ok) return true;
    release_output(m, call->out);
  }
  if (bxr_error_count() == errors) bxr_error("%s (%s implementation) failed", m->what, arm_name(dev));
  memset(call->out, 0, m->out_size);
  return false;
}

/* The same in check mode: the expectation first, from the inputs. */
__attribute__((noinline, cold)) static bool run_checked(const bext_ext_method *m, struct bext_device *dev,
                                                        bext_ext_call *call, bext_ext_slot *s, int n) {
  struct expect x = {NULL, NULL};
  bool ok;
  if (!check_before(m, dev, call, &x)) {
    release_slots(m, call->args);
    memset(call->out, 0, m->out_size);
    ok = false;
  } else {
    ok = run_arm(m, dev, call, s, n, &x);
  }
  expect_free(m, &x);
  return ok;
}

/* ---------------------------------------------------------------- dispatch */

bool bext_ext_dispatch(bext_ext_call *call) {
  const bext_ext_method *m = call->m;
  bext_ext_slot s[BEXT_EXT_MAX_SLOTS];
  int n = m->in_slots(call->args, s);
  BXR_ASSERT(n >= 0 && n <= BEXT_EXT_MAX_SLOTS);
  struct bext_device *dev = NULL;
  int pick = -1;
  for (int i = 0; i < n; i++) {
    if (!*s[i].at) {
      bxr_error_null("%s: argument `%s` is a NULL tensor", m->what, s[i].name);
      goto fail;
    }
    if (pick < 0 || (s[i].is_float && !s[pick].is_float)) pick = i;
  }
  /* The declared kinds, before routing: an i64 tensor never reaches an
   * implementation written for a FloatTensor. */
  for (int i = 0; i < n; i++) {
    bext_dtype dt = (*s[i].at)->dtype;
    if (s[i].kind >= 0 && (int)bxr_dtype_kind(dt) != s[i].kind) {
      bxr_error("%s: argument `%s` is declared %s, but this tensor has dtype %s", m->what, s[i].name,
                declared_kind[s[i].kind], bext_dtype_name(dt));
      goto fail;
    }
  }
  if (pick >= 0) {
    dev = (*s[pick].at)->device;
    for (int i = 0; i < n; i++) {
      struct bext_device *o = (*s[i].at)->device;
      if (i != pick && o->route != dev->route) {
        bxr_error("%s: inputs on different devices: `%s` is on %s, `%s` is on %s", m->what, s[pick].name,
                  dev->name, s[i].name, o->name);
        goto fail;
      }
    }
  } else {
    dev = bxr_device_resolve(bxr_device_base((bext_backend_kind)m->only_backend), m->what);
    if (!dev) goto fail;
  }
  char why[200];
  if (!bxr_ext_arm_listed(m, dev, why, sizeof why)) {
    /* Inputs first, so a panic hook that longjmps leaks nothing. */
    release_slots(m, call->args);
    bxr_panic(__FILE__, __LINE__, "%s: no implementation for backend %s: %s (listed: %s)", m->what,
              arm_name(dev), why, m->listed);
  }
  if (__builtin_expect(__atomic_load_n(&g_check, __ATOMIC_RELAXED) != 0, 0)) return run_checked(m, dev, call, s, n);
  return run_arm(m, dev, call, s, n, NULL);
fail:
  release_slots(m, call->args);
  memset(call->out, 0, m->out_size);
  return false;
}

/* ------------------------------------------------------------- the registry */

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static const bext_ext_method **reg;
static int nreg, capreg;

void bext_ext_register(const bext_ext_method *m) {
  BXR_ASSERT(m && m->trait && m->id);
  pthread_mutex_lock(&reg_lock);
  for (int i = 0; i < nreg; i++)
    if (reg[i] == m) {
      pthread_mutex_unlock(&reg_lock);
      return; /* the same descriptor twice (a unit linked twice): harmless */
    } else if (!strcmp(reg[i]->trait, m->trait) && !strcmp(reg[i]->id, m->id)) {
      pthread_mutex_unlock(&reg_lock);
      bxr_panic(__FILE__, __LINE__, "extension op id '%s' of trait %s is registered twice: by %s and by %s",
                m->id, m->trait, reg[i]->what, m->what);
    }
  if (nreg == capreg) {
    /* plain realloc: the registry lives for the process, like devices */
    int nc = capreg ? capreg * 2 : 32;
    const bext_ext_method **nr = realloc(reg, (size_t)nc * sizeof *nr);
    if (!nr) {
      pthread_mutex_unlock(&reg_lock);
      bxr_panic(__FILE__, __LINE__, "bext_ext_register: out of memory");
    }
    reg = nr;
    capreg = nc;
  }
  reg[nreg++] = m;
  pthread_mutex_unlock(&reg_lock);
}

const bext_ext_method *bext_ext_find(const char *trait, const char *id) {
  if (!trait || !id) return NULL;
  const bext_ext_method *r = NULL;
  pthread_mutex_lock(&reg_lock);
  for (int i = 0; i < nreg && !r; i++)
    if (!strcmp(reg[i]->trait, trait) && !strcmp(reg[i]->id, id)) r = reg[i];
  pthread_mutex_unlock(&reg_lock);
  return r;
}

int bext_ext_list(const bext_ext_method **out, int cap) {
  pthread_mutex_lock(&reg_lock);
  int n = nreg;
  for (int i = 0; out && i < n && i < cap; i++) out[i] = reg[i];
  pthread_mutex_unlock(&reg_lock);
  return n;
}
