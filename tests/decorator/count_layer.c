/* count_layer.c — the "+count" test decorator (count_layer.h).  It uses
 * only the backend-author interface (runtime/src/backend.h): a vtable
 * whose every exec entry forwards, opaque storage, and ext_exec. */
#include "count_layer.h"

#include <stdatomic.h>
#include <string.h>

#include "backend.h"

static _Atomic uint64_t g_core[BXR_OP_COUNT], g_moves;
/* Per-method counts, keyed by descriptor (one per method): a lock-free
 * open-addressing table, so counting adds no lock to a call. */
enum { MAX_IDS = 128 };
static struct {
  _Atomic(const bext_ext_method *) m;
  _Atomic uint64_t n;
} g_ids[MAX_IDS];

int count_ops(void) { return BXR_OP_COUNT; }
uint64_t count_core(int op) { return op >= 0 && op < BXR_OP_COUNT ? atomic_load(&g_core[op]) : 0; }
uint64_t count_core_total(void) {
  uint64_t n = 0;
  for (int i = 0; i < BXR_OP_COUNT; i++) n += atomic_load(&g_core[i]);
  return n;
}
uint64_t count_custom_total(void) {
  uint64_t n = 0;
  for (int i = 0; i < MAX_IDS; i++) n += atomic_load(&g_ids[i].n);
  return n;
}
uint64_t count_moves(void) { return atomic_load(&g_moves); }
uint64_t count_custom(const char *id) {
  uint64_t n = 0;
  for (int i = 0; i < MAX_IDS; i++) {
    const bext_ext_method *m = atomic_load(&g_ids[i].m);
    if (m && !strcmp(m->id, id)) n += atomic_load(&g_ids[i].n);
  }
  return n;
}
void count_reset(void) {
  for (int i = 0; i < BXR_OP_COUNT; i++) atomic_store(&g_core[i], 0);
  atomic_store(&g_moves, 0);
  for (int i = 0; i < MAX_IDS; i++) atomic_store(&g_ids[i].n, 0);
}

static void count_method(const bext_ext_method *m) {
  unsigned h = (unsigned)(((uintptr_t)m >> 4) * 2654435761u) % MAX_IDS;
  for (int k = 0; k < MAX_IDS; k++, h = (h + 1) % MAX_IDS) {
    const bext_ext_method *cur = atomic_load_explicit(&g_ids[h].m, memory_order_acquire);
    if (!cur) {
      const bext_ext_method *none = NULL;
      if (atomic_compare_exchange_strong(&g_ids[h].m, &none, m)) cur = m;
      else cur = none;
    }
    if (cur == m) {
      atomic_fetch_add_explicit(&g_ids[h].n, 1, memory_order_relaxed);
      return;
    }
  }
}

/* ---------------------------------------------------------- wrapping */

static void release_inner(void *p) { bext_release(p); }

/* A handle on dev holding inner (taken over); NULL + error. */
static bext_tensor *wrap(struct bext_device *dev, bext_tensor *inner) {
  if (!inner) return NULL;
  return bxr_tensor_new_opaque(dev, inner->dtype, inner->rank, inner->shape, inner, release_inner);
}

/* The inner tensor of a wrapper, as a new reference.  A uniquely held
 * wrapper gives its reference up, so the inner backend may still reuse
 * the buffer in place. */
static bext_tensor *unwrap(bext_tensor *t) {
  struct bxr_storage *s = t->storage;
  if (bxr_is_unique(t)) {
    bext_tensor *in = s->priv;
    s->priv = NULL;  /* release_inner(NULL) is a no-op */
    return in;
  }
  return bext_retain(s->priv);
}

/* ------------------------------------------------------------ the vtable */

static bext_tensor *count_exec(struct bxr_op *op) {
  atomic_fetch_add(&g_core[op->code], 1);
  struct bext_device *dev = op->device;
  struct bxr_op in = *op;
  in.device = dev->inner;
  in.in = in.inbuf;
  if (op->n_in > BXR_MAX_INPUTS) {
    in.in = bxr_alloc((size_t)op->n_in * sizeof *in.in);
    if (!in.in) return NULL;
  }
  for (int i = 0; i < op->n_in; i++) in.in[i] = unwrap(op->in[i]);
  bext_tensor *r = bxr_dispatch(&in);  /* consumes the inner inputs */
  if (in.in != in.inbuf) bxr_free(in.in, (size_t)op->n_in * sizeof *in.in);
  return wrap(dev, r);
}

static bext_tensor *count_from_data(struct bext_device *dev, bext_dtype dt, int rank, const int64_t *shape,
                                    const void *src) {
  atomic_fetch_add(&g_moves, 1);
  return wrap(dev, dev->inner->vt->from_data(dev->inner, dt, rank, shape, src));
}

static bool count_read(const bext_tensor *t, void *dst) {
  atomic_fetch_add(&g_moves, 1);
  const bext_tensor *in = t->storage->priv;
  return in->device->vt->read(in, dst);
}

static bool count_ext_exec(struct bext_device *dev, bext_ext_call *call) {
  count_method(call->m);  /* one atomic add per call: the total is their sum */
  /* the same call one layer down; a uniquely held wrapper hands its inner
   * reference over (unwrap), as in count_exec */
  return bxr_ext_forward(dev, call, unwrap, wrap);
}

static const struct bxr_backend count_vt = {
    .api_version = BXR_BACKEND_API_VERSION,
    .name = "count",
    .host_memory = false,     /* its storage holds the inner tensor */
    .from_data = count_from_data,
    .read = count_read,
    .exec = {
#define COUNT_X_(E, n, nin, k0, k1, k2, ns, at, inf) [BXR_OP_##E] = count_exec,
        BXR_OP_TABLE(COUNT_X_)
#undef COUNT_X_
    },
    .ext_exec = count_ext_exec,
};

bool count_layer_register_opaque(const char *name) {
  struct bxr_layer l = {.name = name, .transparent = false, .vt = &count_vt};
  return bxr_layer_register(&l);
}

bool count_layer_register_at(const char *name, int depth) {
  struct bxr_layer l = {.name = name, .depth = depth, .transparent = true, .vt = &count_vt};
  bool ok = bxr_layer_register(&l);
  return ok || strstr(bext_last_error(), "exists");
}

bool count_layer_register(void) {
  static _Atomic int done;
  if (atomic_load(&done)) return true;
  struct bxr_layer l = {.name = "count", .transparent = true, .vt = &count_vt};
  bool ok = bxr_layer_register(&l);
  if (!ok && strstr(bext_last_error(), "exists")) ok = true;
  if (ok) atomic_store(&done, 1);
  return ok;
}
