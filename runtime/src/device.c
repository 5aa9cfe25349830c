/* device.c — device instances: the device grammar (parse and canonical
 * spelling), the process-wide registry that interns one object per
 * canonical spec, the backend and layer tables it draws from, the default
 * device, and the device calls of bext.h (available, list, sync, memory
 * stats, close).
 *
 * Why interning: a device is identity plus state (a thread pool, a CUDA
 * context, a connection).  With one object per spec, "same device" is a
 * pointer compare on the dispatch hot path, and per-device state has one
 * home.  Devices are never freed: tensors and users keep plain pointers.
 * The registry is a mutex-guarded list; lookups are rare (users call
 * bext_device_get once per device), the hot paths read t->device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autodiff.h"
#include "fusion.h"
#include "backend.h"

/* ------------------------------------------------------------- the tables */

static const char *const backend_names[BEXT_BACKEND_COUNT] = {
#define BXR_X_(E, s, S) [BEXT_BACKEND_##E] = #s,
    BEXT_BACKENDS(BXR_X_)
#undef BXR_X_
};

/* Every backend vtable of this build (runtime/CMakeLists.txt writes the
 * rows from the backends/ folders). */
static const struct bxr_backend *const built[] = {
#define BXR_BACKEND_ROW(s) &bxr_backend_##s,
#include "bxr_backends.inc"
#undef BXR_BACKEND_ROW
};

const char *bext_backend_name(bext_backend_kind kind) {
  return (unsigned)kind < BEXT_BACKEND_COUNT ? backend_names[kind] : "?";
}

/* The vtable serving kind's target (NULL target: any vtable of kind, the
 * question "is this backend in the build"); a vtable with .target serves
 * that target alone (cube:cpu and cube:vulkan have one each). */
static const struct bxr_backend *backend_vt(bext_backend_kind kind, const char *target) {
  for (size_t i = 0; i < sizeof built / sizeof built[0]; i++)
    if (built[i]->kind == kind && built[i]->api_version == BXR_BACKEND_API_VERSION &&
        (!target || !built[i]->target || !strcmp(built[i]->target, target)))
      return built[i];
  return NULL;
}

/* Layers: the built-in rows of BEXT_LAYERS, then registered extra
 * layers.  A row's decorator is BXR_LAYER_VT_<ROW>: NULL until it arrives
 * with its issue ("not available in this build"). */
#define BXR_LAYER_VT_AUTODIFF (&bxad_backend)
#define BXR_LAYER_VT_FUSION (&bxfu_backend)
#define MAX_LAYERS 8
static struct bxr_layer layers[MAX_LAYERS] = {
#define BXR_X_(E, s, S, d) [BEXT_LAYER_##E] = {#s, #S, d, false, BXR_LAYER_VT_##E},
    BEXT_LAYERS(BXR_X_)
#undef BXR_X_
};
static int nlayers = BEXT_LAYER_COUNT;
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;

const char *bext_layer_name(bext_layer_kind layer) {
  return (unsigned)layer < BEXT_LAYER_COUNT ? layers[layer].name : "?";
}

bool bxr_layer_register(const struct bxr_layer *l) {
  if (!l || !l->name || !*l->name) return bxr_error("bxr_layer_register: a layer needs a name");
  pthread_mutex_lock(&reg_lock);
  bool ok = true;
  for (int i = 0; i < nlayers && ok; i++)
    if (!strcmp(layers[i].name, l->name)) ok = bxr_error("bxr_layer_register: layer '%s' exists", l->name);
  if (ok && nlayers == MAX_LAYERS) ok = bxr_error("bxr_layer_register: the layer table is full");
  if (ok) {
    int depth = 0;
    for (int i = 0; i < nlayers; i++)
      if (layers[i].depth > depth) depth = layers[i].depth;
    layers[nlayers] = *l;
    if (l->depth <= 0) layers[nlayers].depth = depth + 1;
    nlayers++;
  }
  pthread_mutex_unlock(&reg_lock);
  return ok;
}

/* Autodiff's strategies as spelled in "+autodiff(...)", the one list the
 * parser, the canonical spelling and autodiff's messages read. */
#define BXR_STRATEGY_COUNT 2
static const char *const strategy_names[BXR_STRATEGY_COUNT] = {
    [BEXT_AUTODIFF_NONE] = "none", [BEXT_AUTODIFF_BALANCED] = "balanced"};

const char *bxr_strategy_name(bext_autodiff_strategy s) {
  return (unsigned)s < BXR_STRATEGY_COUNT ? strategy_names[s] : "?";
}

/* -------------------------------------------------------------- the grammar */

/* A parsed spec before interning. */
struct spec {
  bext_backend_kind kind;
  char target[16];
  int index;
  char address[96];
  int nl;                            /* layers, innermost first */
  int layer[MAX_LAYERS];
  bext_autodiff_strategy strategy;
};

/* Parses an optional ":N" index at s; returns false on junk. */
static bool parse_index(const char *s, int *index) {
  *index = 0;
  if (*s == 0) return true;
  if (*s != ':' || s[1] == 0) return false;
  char *end;
  long v = strtol(s + 1, &end, 10);
  if (*end || v < 0 || v > 1 << 20 || s[1] == '-' || s[1] == '+') return false;
  *index = (int)v;
  return true;
}

/* backend := ... (bext.h); buf holds the backend part alone.  The name
 * comes from the backend table; what may follow it is each backend's own
 * grammar (a target, an index, an address), and a row without a grammar
 * of its own takes its bare name and an optional ":index". */
static const char *parse_backend(char *buf, struct spec *d, char *msg, size_t mn) {
  int kind = -1;
  size_t n = 0;
  for (int k = 0; k < BEXT_BACKEND_COUNT && kind < 0; k++) {
    n = strlen(backend_names[k]);
    if (strncmp(buf, backend_names[k], n) == 0 && (buf[n] == 0 || buf[n] == ':')) kind = k;
  }
  if (kind < 0) {
    size_t len = (size_t)snprintf(msg, mn, "unknown backend (expected ");
    for (int k = 0; k < BEXT_BACKEND_COUNT && len < mn; k++) {
      bool sub = k == BEXT_BACKEND_CUBE || k == BEXT_BACKEND_LIBTORCH || k == BEXT_BACKEND_REMOTE;
      len += (size_t)snprintf(msg + len, mn - len, "%s%s%s", k ? ", " : "", backend_names[k], sub ? ":..." : "");
    }
    if (len < mn) snprintf(msg + len, mn - len, ")");
    return msg;
  }
  d->kind = (bext_backend_kind)kind;
  const char *t = buf + n + (buf[n] == ':');
  switch (d->kind) {
  case BEXT_BACKEND_CUBE: {
    if (buf[n] != ':') return "unknown cube target (expected cpu, vulkan, cuda or hip)";
    static const char *const targets[] = {"vulkan", "cuda", "hip"};
    if (strcmp(t, "cpu") == 0) {
      strcpy(d->target, "cpu");
      return NULL;
    }
    for (int i = 0; i < 3; i++) {
      size_t tn = strlen(targets[i]);
      if (strncmp(t, targets[i], tn) == 0 && (t[tn] == 0 || t[tn] == ':')) {
        strcpy(d->target, targets[i]);
        return parse_index(t + tn, &d->index) ? NULL : "bad device index (expected ':' and a number)";
      }
    }
    return "unknown cube target (expected cpu, vulkan, cuda or hip)";
  }
  case BEXT_BACKEND_LIBTORCH:
    if (buf[n] == ':' && strcmp(t, "cpu") == 0) strcpy(d->target, "cpu");
    else if (buf[n] == ':' && strncmp(t, "cuda", 4) == 0 && (t[4] == 0 || t[4] == ':')) {
      strcpy(d->target, "cuda");
      if (!parse_index(t + 4, &d->index)) return "bad device index (expected ':' and a number)";
    } else return "unknown libtorch target (expected cpu or cuda)";
    return NULL;
  case BEXT_BACKEND_REMOTE: {
    size_t an = buf[n] == ':' ? strlen(t) : 0;
    if (an == 0) return "remote device needs an address (remote:tcp://host:port)";
    if (an >= sizeof d->address) return "remote address too long";
    memcpy(d->address, t, an + 1);
    return NULL;
  }
  case BEXT_BACKEND_FLEX:
  case BEXT_BACKEND_NDARRAY:
    /* one device per process: no index */
    return buf[n] == 0 ? NULL : "this backend takes no target or index";
  default:
    return parse_index(buf + n, &d->index) ? NULL : "bad device index (expected ':' and a number)";
  }
}

/* The layer named by "+name" or "+name(arg)" at s (after the '+'); sets
 * *len to its length.  NULL + *why on error. */
static const char *parse_layer(const char *s, struct spec *d, int *row, const char **why, char *msg,
                               size_t mn) {
  size_t n = strcspn(s, "+(");
  *row = -1;
  for (int i = 0; i < nlayers; i++)
    if (strlen(layers[i].name) == n && !strncmp(layers[i].name, s, n)) *row = i;
  if (*row < 0) {
    char known[160] = "";
    for (int i = 0; i < nlayers; i++)
      snprintf(known + strlen(known), sizeof known - strlen(known), "%s'+%s'", i ? (i + 1 == nlayers ? " or " : ", ") : "",
               layers[i].name);
    snprintf(msg, mn, "unknown decorator '+%.*s' (expected %s)", (int)n, s, known);
    *why = msg;
    return NULL;
  }
  const char *p = s + n;
  if (*p == '(') {
    const char *close = strchr(p, ')');
    if (*row != BEXT_LAYER_AUTODIFF || !close) {
      snprintf(msg, mn, *row != BEXT_LAYER_AUTODIFF ? "decorator '+%s' takes no arguments"
                                                    : "unclosed '(' after '+%s'",
               layers[*row].name);
      *why = msg;
      return NULL;
    }
    size_t an = (size_t)(close - p - 1);
    int st = -1;
    for (int k = 0; k < BXR_STRATEGY_COUNT && st < 0; k++)
      if (strlen(strategy_names[k]) == an && !strncmp(p + 1, strategy_names[k], an)) st = k;
    if (st >= 0) d->strategy = (bext_autodiff_strategy)st;
    else {
      snprintf(msg, mn, "unknown autodiff strategy '%.*s' (expected none or balanced)", (int)an, p + 1);
      *why = msg;
      return NULL;
    }
    p = close + 1;
  }
  return p;
}

static bool parse_spec(const char *spec, struct spec *d) {
  memset(d, 0, sizeof *d);
  char buf[200], msg[240];
  size_t len = strlen(spec);
  if (len >= sizeof buf) return bxr_error("bext_device_get: device string too long (%zu chars)", len);
  memcpy(buf, spec, len + 1);
  /* The backend part ends at the first '+' (no backend spelling has one). */
  char *plus = strchr(buf, '+');
  if (plus) *plus = 0;
  const char *why = parse_backend(buf, d, msg, sizeof msg);
  if (!why && plus) {
    const char *p = spec + (plus - buf) + 1;
    for (;;) {
      int row;
      p = parse_layer(p, d, &row, &why, msg, sizeof msg);
      if (!p) break;
      for (int i = 0; i < d->nl && !why; i++) {
        if (d->layer[i] == row) {
          snprintf(msg, sizeof msg, "decorator '+%s' appears twice", layers[row].name);
          why = msg;
        } else if (layers[d->layer[i]].depth > layers[row].depth) {
          snprintf(msg, sizeof msg, "bad order: '+%s' must come before '+%s'", layers[row].name,
                   layers[d->layer[i]].name);
          why = msg;
        }
      }
      if (why) break;
      d->layer[d->nl++] = row;
      if (*p == 0) break;
      if (*p != '+' || p[1] == 0) {
        snprintf(msg, sizeof msg, "unexpected '%s' after a decorator", p);
        why = msg;
        break;
      }
      p++;
    }
  }
  if (why) return bxr_error("bext_device_get: '%s': %s", spec, why);
  return true;
}

/* Canonical spelling of the first nl layers of d. */
static void format_spec(const struct spec *d, int nl, char *buf, size_t n) {
  const char *k = backend_names[d->kind];
  int w;
  if (d->kind == BEXT_BACKEND_CUBE || d->kind == BEXT_BACKEND_LIBTORCH)
    w = strcmp(d->target, "cpu") == 0 ? snprintf(buf, n, "%s:cpu", k)
                                       : snprintf(buf, n, "%s:%s:%d", k, d->target, d->index);
  else if (d->kind == BEXT_BACKEND_REMOTE) w = snprintf(buf, n, "remote:%s", d->address);
  else w = snprintf(buf, n, "%s", k);
  for (int i = 0; i < nl && w >= 0 && (size_t)w < n; i++) {
    int row = d->layer[i];
    bool st = row == BEXT_LAYER_AUTODIFF && d->strategy != BEXT_AUTODIFF_NONE;
    w += snprintf(buf + w, n - (size_t)w, "+%s%s%s%s", layers[row].name, st ? "(" : "",
                  st ? strategy_names[d->strategy] : "", st ? ")" : "");
  }
}

/* ------------------------------------------------------------- the registry */

static struct bext_device *registry;

/* The device of the first nl layers of d; reg_lock held. */
static struct bext_device *intern(const struct spec *d, int nl) {
  char name[200];
  format_spec(d, nl, name, sizeof name);
  for (struct bext_device *v = registry; v; v = v->next)
    if (!strcmp(v->name, name)) return v;
  struct bext_device *inner = nl ? intern(d, nl - 1) : NULL;
  if (nl && !inner) return NULL;
  struct bext_device *v = calloc(1, sizeof *v); /* never freed: see the file comment */
  if (!v) {
    bxr_error("bext_device_get: out of memory");
    return NULL;
  }
  memcpy(v->name, name, sizeof name);
  v->inner = inner;
  v->kind = d->kind;
  v->index = d->index;
  memcpy(v->target, d->target, sizeof v->target);
  memcpy(v->address, d->address, sizeof v->address);
  pthread_mutex_init(&v->lock, NULL);
  if (nl) {
    const struct bxr_layer *l = &layers[d->layer[nl - 1]];
    v->layer = d->layer[nl - 1];
    v->transparent = l->transparent;
    v->strategy = v->layer == BEXT_LAYER_AUTODIFF ? d->strategy : BEXT_AUTODIFF_NONE;
    v->vt = l->vt;
    v->available = l->vt && inner->available;
  } else {
    v->layer = -1;
    v->vt = backend_vt(d->kind, d->target);
    v->available = v->vt != NULL;
  }
  v->next = registry;
  registry = v;
  /* Autodiff strategies route together: the routing identity of a stack
   * is the same stack with every strategy none. */
  v->route = v;
  if (d->strategy != BEXT_AUTODIFF_NONE) {
    struct spec plain = *d;
    plain.strategy = BEXT_AUTODIFF_NONE;
    struct bext_device *r = intern(&plain, nl);
    if (r) v->route = r;
  }
  return v;
}

const bext_device *bext_device_get(const char *spec) {
  if (!spec) {
    bxr_error("bext_device_get: device string is NULL");
    return NULL;
  }
  struct spec d;
  if (!parse_spec(spec, &d)) return NULL;
  pthread_mutex_lock(&reg_lock);
  struct bext_device *v = intern(&d, d.nl);
  pthread_mutex_unlock(&reg_lock);
  return v;
}

const char *bext_device_name(const bext_device *dev) { return dev ? dev->name : "NULL"; }

bext_backend_kind bext_device_backend(const bext_device *dev) {
  return dev ? dev->kind : BEXT_BACKEND_COUNT;
}
int bext_device_index(const bext_device *dev) { return dev ? dev->index : 0; }
const char *bext_device_layer(const bext_device *dev) {
  return dev && dev->layer >= 0 ? layers[dev->layer].name : NULL;
}
const bext_device *bext_device_inner(const bext_device *dev) { return dev ? dev->inner : NULL; }

/* Why dev cannot be used: names the innermost missing part. */
static bool unavailable(const struct bext_device *dev, const char *api) {
  const struct bext_device *miss = dev;
  for (const struct bext_device *d = dev; d; d = d->inner)
    if (!d->vt) miss = d;
  if (miss->layer >= 0)
    return bxr_error("%s: device '%s': the %s decorator is not available in this build", api, dev->name,
                     layers[miss->layer].name);
  if (miss->target[0] && backend_vt(miss->kind, NULL))
    return bxr_error("%s: device '%s': the %s target `%s` is not available in this build", api, dev->name,
                     backend_names[miss->kind], miss->target);
  return bxr_error("%s: device '%s': backend not available in this build", api, dev->name);
}

bool bxr_device_use(struct bext_device *dev, const char *api) {
  if (__builtin_expect(__atomic_load_n(&dev->opened, __ATOMIC_ACQUIRE), 1)) return true;
  if (!dev->available) return unavailable(dev, api);
  if (dev->inner && !bxr_device_use(dev->inner, api)) return false;
  bool ok = true;
  pthread_mutex_lock(&dev->lock);
  if (!dev->opened) {
    ok = !dev->vt->open || dev->vt->open(dev);
    if (ok) __atomic_store_n(&dev->opened, true, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&dev->lock);
  if (!ok) {
    /* the backend's open says what is missing; the caller's name goes in
     * front, as in every other error of a public call */
    char why[512];
    snprintf(why, sizeof why, "%s", bext_last_error());
    return bxr_error("%s: %s", api, why);
  }
  return ok;
}

static _Atomic(struct bext_device *) g_default;

/* flex when this build has it, else ndarray; interned once (racing
 * threads intern the same object, so the stores agree). */
static struct bext_device *build_default(void) {
  static _Atomic(struct bext_device *) cached;
  struct bext_device *d = atomic_load_explicit(&cached, memory_order_acquire);
  if (d) return d;
  d = (struct bext_device *)bext_device_get("flex");
  if (!d || !d->available) d = (struct bext_device *)bext_device_get("ndarray");
  atomic_store_explicit(&cached, d, memory_order_release);
  return d;
}

const bext_device *bext_device_default(void) {
  struct bext_device *d = atomic_load_explicit(&g_default, memory_order_acquire);
  return d ? d : build_default();
}

struct bext_device *bxr_device_resolve(const bext_device *dev, const char *api) {
  struct bext_device *d = (struct bext_device *)(dev ? dev : bext_device_default());
  if (!d) {
    bxr_error("%s: no default device", api);
    return NULL;
  }
  return bxr_device_use(d, api) ? d : NULL;
}

bool bext_device_available(const bext_device *dev) {
  if (!dev) return bxr_error("bext_device_available: device is NULL");
  if (!dev->available) return unavailable(dev, "bext_device_available");
  /* In the build is not enough for a GPU: its base must exist here. */
  struct bext_device *base = (struct bext_device *)dev;
  while (base->inner) base = base->inner;
  return !base->vt->probe || base->vt->probe(base);
}

bool bext_set_default_device(const bext_device *dev) {
  if (dev && !bxr_device_resolve(dev, "bext_set_default_device")) return false;
  atomic_store_explicit(&g_default, (struct bext_device *)dev, memory_order_release);
  return true;
}

const bext_device *bxr_device_base(bext_backend_kind kind) {
  static _Atomic(const bext_device *) cache[BEXT_BACKEND_COUNT];
  if ((unsigned)kind >= BEXT_BACKEND_COUNT) {
    bxr_error("invalid backend kind %d", (int)kind);
    return NULL;
  }
  const bext_device *d = atomic_load_explicit(&cache[kind], memory_order_acquire);
  if (d) return d;
  /* The default spelling of each backend ("cube:cpu": a backend with
   * targets lists its others through its own open). */
  static const char *const spelling[BEXT_BACKEND_COUNT] = {
      [BEXT_BACKEND_CUBE] = "cube:cpu", [BEXT_BACKEND_LIBTORCH] = "libtorch:cpu",
      [BEXT_BACKEND_REMOTE] = "remote:tcp://127.0.0.1:7878"};
  d = bext_device_get(spelling[kind] ? spelling[kind] : backend_names[kind]);
  if (d) atomic_store_explicit(&cache[kind], d, memory_order_release);
  return d;
}

int bext_device_list(const bext_device **out, int cap) {
  int n = 0;
  for (int k = 0; k < BEXT_BACKEND_COUNT; k++) {
    const struct bxr_backend *vt = backend_vt((bext_backend_kind)k, NULL);
    /* A remote device is a server somewhere, not a backend of this
     * process: it has no default to list (its default spelling names a
     * server nobody started).  The conformance matrix starts one. */
    if (!vt || k == BEXT_BACKEND_REMOTE) continue;
    const bext_device *d = bxr_device_base((bext_backend_kind)k);
    if (!d) continue;
    if (out && n < cap) out[n] = d;
    n++;
  }
  return n;
}

bool bext_sync(const bext_device *cdev) {
  struct bext_device *dev = bxr_device_resolve(cdev, "bext_sync");
  if (!dev) return false;
  /* Outermost first: a decorator flushes into its inner device. */
  for (struct bext_device *d = dev; d; d = d->inner)
    if (d->vt->sync && !d->vt->sync(d)) return false;
  return true;
}

void bxr_device_count_alloc(struct bext_device *dev, size_t bytes) {
  size_t live = atomic_fetch_add_explicit(&dev->live, bytes, memory_order_relaxed) + bytes;
  size_t peak = atomic_load_explicit(&dev->peak, memory_order_relaxed);
  while (live > peak &&
         !atomic_compare_exchange_weak_explicit(&dev->peak, &peak, live, memory_order_relaxed,
                                                memory_order_relaxed)) {
  }
}

void bxr_device_count_free(struct bext_device *dev, size_t bytes) {
  atomic_fetch_sub_explicit(&dev->live, bytes, memory_order_relaxed);
}

bool bext_memory_stats(const bext_device *cdev, bext_memory *out) {
  if (!out) return bxr_error("bext_memory_stats: out is NULL");
  memset(out, 0, sizeof *out);
  if (!cdev) return bxr_error("bext_memory_stats: device is NULL");
  struct bext_device *dev = (struct bext_device *)cdev;
  out->live_bytes = atomic_load_explicit(&dev->live, memory_order_relaxed);
  out->peak_bytes = atomic_load_explicit(&dev->peak, memory_order_relaxed);
  if (dev->vt && dev->vt->memory && __atomic_load_n(&dev->opened, __ATOMIC_ACQUIRE)) dev->vt->memory(dev, out);
  return true;
}

bool bext_memory_reset_peak(const bext_device *cdev) {
  if (!cdev) return bxr_error("bext_memory_reset_peak: device is NULL");
  struct bext_device *dev = (struct bext_device *)cdev;
  atomic_store_explicit(&dev->peak, atomic_load_explicit(&dev->live, memory_order_relaxed),
                        memory_order_relaxed);
  return true;
}

bool bext_device_close(const bext_device *cdev) {
  if (!cdev) return bxr_error("bext_device_close: device is NULL");
  struct bext_device *dev = (struct bext_device *)cdev;
  pthread_mutex_lock(&dev->lock);
  if (dev->opened) {
    if (dev->vt->close) dev->vt->close(dev);
    __atomic_store_n(&dev->opened, false, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&dev->lock);
  return true;
}
