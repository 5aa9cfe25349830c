/* fusion_plan.c — what a stream does when it runs: drop the records nobody
 * can observe, turn the rest (a segment) into its relative form, find its
 * plan in the device's cache or build one, and run it.
 *
 * The relative form is what a plan depends on and nothing else: per
 * record its op (opcode, or the extension method), the attributes its row
 * reads, its output spec, whether its value is held outside the segment,
 * and each input by position — "the output of record j" or "external
 * value k" (numbered by first use) with its spec.  Scalars (sc[], random
 * seeds, extension arguments) stay out of band: a training loop that
 * changes its learning rate replays the same plan with the new values.
 * Equal relative forms (compared whole, not only by hash) get one plan, so
 * the second iteration of a loop builds and compiles nothing.
 *
 * A plan is the grouping of the segment's records (fusion_kernel.c
 * decides which fuse, in one legality function) plus each fused group's
 * compiled kernel.  The cache holds BXFU_PLAN_CAP plans per device; past
 * that, new segments run without one (unfused): a graph that never
 * repeats stops growing the cache instead of exploring forever (Burn's
 * exploration bound plays the same role). */
#include <stdlib.h>
#include <string.h>

#include "fusion_kernel.h"

#define BXFU_PLAN_SLOTS (2 * BXFU_PLAN_CAP)

static void bump(_Atomic uint64_t *c, uint64_t n) { atomic_fetch_add_explicit(c, n, memory_order_relaxed); }

/* ------------------------------------------------------- relative form */

/* A growing byte buffer (the key). */
struct kbuf {
  unsigned char *p;
  size_t n, cap;
  bool oom;
};

static void put(struct kbuf *b, const void *src, size_t n) {
  if (b->oom) return;
  if (b->n + n > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 1024;
    while (cap < b->n + n) cap *= 2;
    unsigned char *q = realloc(b->p, cap);
    if (!q) {
      b->oom = true;
      return;
    }
    b->p = q;
    b->cap = cap;
  }
  memcpy(b->p + b->n, src, n);
  b->n += n;
}
static void put_i64(struct kbuf *b, int64_t v) { put(b, &v, sizeof v); }

static void put_spec(struct kbuf *b, const bext_spec *sp) {
  put_i64(b, ((int64_t)sp->dtype << 8) | sp->rank);
  put(b, sp->shape, (size_t)sp->rank * sizeof sp->shape[0]);
}

/* The attributes row `code` reads, counted prefixes only (op.h: entries
 * past the counts may be garbage).  The seed is a value, not structure. */
static void put_attrs(struct kbuf *b, enum bxr_opcode code, const bext_attrs *at) {
  unsigned a = bxr_op_info[code].attrs;
  if (a & BXR_A_SHAPE) {
    put_i64(b, at->rank);
    put(b, at->shape, (size_t)at->rank * sizeof at->shape[0]);
  }
  if (a & BXR_A_DTYPE) put_i64(b, at->dtype);
  if (a & BXR_A_DIM) put_i64(b, at->dim);
  if (a & BXR_A_DIMS) {
    put_i64(b, at->ndims);
    put(b, at->dims, (size_t)at->ndims * sizeof at->dims[0]);
  }
  if (a & BXR_A_KEEPDIM) put_i64(b, at->keepdim | at->all << 1);
  if (a & BXR_A_RANGES) {
    put_i64(b, at->nranges);
    put(b, at->start, (size_t)at->nranges * sizeof at->start[0]);
    put(b, at->end, (size_t)at->nranges * sizeof at->end[0]);
  }
}

/* Pointer -> small index, open hashing (externals and producers). */
struct pmap {
  const void **key;
  int *val;
  size_t cap;
};

static bool pmap_init(struct pmap *m, int n) {
  m->cap = 16;
  while (m->cap < (size_t)n * 2 + 2) m->cap *= 2;
  m->key = calloc(m->cap, sizeof *m->key);
  m->val = malloc(m->cap * sizeof *m->val);
  return m->key && m->val;
}
static void pmap_free(struct pmap *m) {
  free(m->key);
  free(m->val);
}
static size_t pmap_slot(const struct pmap *m, const void *k) {
  size_t h = ((uintptr_t)k >> 4) * 0x9E3779B97F4A7C15ull;
  for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1))
    if (!m->key[i] || m->key[i] == k) return i;
}
static int pmap_get(const struct pmap *m, const void *k) {
  size_t i = pmap_slot(m, k);
  return m->key[i] ? m->val[i] : -1;
}
static void pmap_put(struct pmap *m, const void *k, int v) {
  size_t i = pmap_slot(m, k);
  m->key[i] = k;
  m->val[i] = v;
}

static uint64_t fnv(const unsigned char *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

/* A producer in the map: its record index, and which of its outputs
 * (extension records may have several) above OUT_SHIFT. */
#define OUT_SHIFT 16
#define OUT_MASK ((1 << OUT_SHIFT) - 1)
_Static_assert(BXFU_STREAM_CAP <= OUT_MASK, "record indices fit below OUT_SHIFT");

/* The segment as the plan builder sees it: live records, the producer of
 * each input (-1: external), uses, whether each value is held outside. */
static bool segment_build(struct bxfu_segment *g, struct bxfu_rec *rec, int n, struct kbuf *key,
                          const struct bext_device *inner) {
  memset(g, 0, sizeof *g);
  g->n = n;
  g->rec = rec;
  g->src = calloc((size_t)n, sizeof *g->src);
  g->uses = calloc((size_t)n, sizeof *g->uses);
  g->held = calloc((size_t)n, sizeof *g->held);
  g->handle = calloc((size_t)n, sizeof *g->handle);
  g->first_use = malloc((size_t)n * sizeof *g->first_use);
  g->nsrc = calloc((size_t)n, sizeof *g->nsrc);
  struct pmap prod = {0}, ext = {0};
  bool ok = g->src && g->uses && g->held && g->handle && g->first_use && g->nsrc;
  for (int i = 0; ok && i < n; i++) g->first_use[i] = -1;
  ok = ok && pmap_init(&prod, n);
  /* externals: at most one per input of the segment (a full table would
   * never end a probe) */
  int total = 0;
  for (int i = 0; ok && i < n; i++) {
    bext_ext_slot sl[BEXT_EXT_MAX_SLOTS];
    total += rec[i].kind == BXFU_EXT ? rec[i].m->in_slots(rec[i].args, sl) : rec[i].n_in;
  }
  ok = ok && pmap_init(&ext, total);
  if (!ok) {
    pmap_free(&prod);
    pmap_free(&ext);
    return false;
  }
  int next_ext = 0;
  for (int i = 0; i < n; i++) {
    struct bxfu_rec *r = &rec[i];
    bext_tensor *buf[BEXT_EXT_MAX_SLOTS], **in = r->in;
    int nin = r->n_in;
    if (r->kind == BXFU_EXT) {  /* its tensors live in the argument struct */
      bext_ext_slot sl[BEXT_EXT_MAX_SLOTS];
      nin = r->m->in_slots(r->args, sl);
      for (int k = 0; k < nin; k++) buf[k] = *sl[k].at;
      in = buf;
      /* borrowed from the slots, so the optimizer reads a call's inputs
       * as a core op's; a learned elementwise #[cube] kernel (fusion_cube.c)
       * makes the call a fusable member, a fact of the plan's key */
      if (nin <= BXR_MAX_INPUTS) {
        memcpy(r->inbuf, buf, (size_t)nin * sizeof *buf);
        r->in = r->inbuf;
        r->n_in = nin;
      }
      r->x->cube = bxfu_cube_of(r, inner);
    }
    g->src[i] = calloc((size_t)nin + 1, sizeof **g->src);
    g->nsrc[i] = nin;
    if (!g->src[i]) {
      ok = false;
      break;
    }
    put_i64(key, r->kind == BXFU_EXT ? (int64_t)(uintptr_t)r->m : (int64_t)r->code);
    put_i64(key, nin);
    if (r->kind == BXFU_CORE) put_attrs(key, r->code, &r->at);
    else put_i64(key, (int64_t)(uintptr_t)r->x->cube);
    put_spec(key, &r->out);
    for (int k = 0; k < nin; k++) {
      const struct bxfu_val *v = in[k] ? bxfu_val_of(in[k]) : NULL;
      int pj = v ? pmap_get(&prod, v) : -1, j = pj >= 0 ? pj & OUT_MASK : -1;
      g->src[i][k] = j;
      if (j >= 0) {
        if (!g->uses[j]++) g->first_use[j] = i;
        g->handle[j] = in[k];
        put_i64(key, pj);   /* the record and which of its outputs */
      } else {
        int e = v ? pmap_get(&ext, v) : -2;
        if (e == -1) pmap_put(&ext, v, e = next_ext++);
        put_i64(key, -3 - e);
        if (in[k]) put_spec(key, &in[k]->spec);
      }
    }
    pmap_put(&prod, r->res, i);
    for (int k = 0; r->x && k < r->x->n_more; k++) pmap_put(&prod, r->x->more[k], i | (k + 1) << OUT_SHIFT);
  }
  pmap_free(&prod);
  pmap_free(&ext);
  if (!ok) return false;
  /* Held outside: a value nobody in the segment reads is alive only
   * because its handle is (val: storage + record); one read here is held
   * when its one handle has more references than the segment's reads. */
  for (int i = 0; i < n; i++) {
    if (rec[i].x && rec[i].x->n_more) g->held[i] = true;   /* several outputs: never elided */
    else if (!g->uses[i]) g->held[i] = atomic_load(&rec[i].res->rc) > 1;
    else g->held[i] = atomic_load_explicit(&g->handle[i]->refcount, memory_order_acquire) > g->uses[i];
    put(key, &g->held[i], 1);
  }
  return !key->oom;
}

static void segment_free(struct bxfu_segment *g) {
  if (g->src)
    for (int i = 0; i < g->n; i++) free(g->src[i]);
  free(g->src);
  free(g->uses);
  free(g->held);
  free(g->handle);
  free(g->first_use);
  free(g->nsrc);
}

/* ----------------------------------------------------------------- plans */

struct bxfu_plan {
  uint64_t hash;
  unsigned char *key;
  size_t klen;
  struct bxfu_custom custom;   /* custom optimizers' claims (fusion_custom.c) */
  struct bxfu_groups groups;   /* fusion_kernel.c */
};

static void plan_free(struct bxfu_plan *p) {
  if (!p) return;
  bxfu_groups_free(&p->groups);
  bxfu_custom_free(&p->custom);
  free(p->key);
  free(p);
}

void bxfu_plans_free(struct bxfu_dev *d) {
  if (d->plans)
    for (int i = 0; i < BXFU_PLAN_SLOTS; i++) plan_free(d->plans[i]);
  free(d->plans);
  d->plans = NULL;
  d->nplans = 0;
}

/* The cached plan for key, or NULL (d->lock held). */
static struct bxfu_plan *plan_find(struct bxfu_dev *d, uint64_t h, const unsigned char *key, size_t klen) {
  if (!d->plans) return NULL;
  for (size_t i = h % BXFU_PLAN_SLOTS;; i = (i + 1) % BXFU_PLAN_SLOTS) {
    struct bxfu_plan *p = d->plans[i];
    if (!p) return NULL;
    if (p->hash == h && p->klen == klen && !memcmp(p->key, key, klen)) return p;
  }
}

/* Caches p (d->lock held); false when the cache is full. */
static bool plan_insert(struct bxfu_dev *d, struct bxfu_plan *p) {
  if (d->nplans >= BXFU_PLAN_CAP) return false;
  if (!d->plans && !(d->plans = calloc(BXFU_PLAN_SLOTS, sizeof *d->plans))) return false;
  size_t i = p->hash % BXFU_PLAN_SLOTS;
  while (d->plans[i]) i = (i + 1) % BXFU_PLAN_SLOTS;
  d->plans[i] = p;
  d->nplans++;
  return true;
}

/* Records whose value nobody can observe (only the record holds it) are
 * dropped, last first, so a dead chain goes whole: releasing a dropped
 * record's inputs may leave an earlier record's value unobserved too. */
static void drop_unobserved(struct bxfu_rec *rec, int n) {
  uint64_t dropped = 0;
  for (int i = n - 1; i >= 0; i--) {
    struct bxfu_rec *r = &rec[i];
    if (bxfu_rec_observed(r)) continue;
    bxfu_rec_done(r);  /* releases the inputs and the value */
    dropped++;
  }
  if (dropped) bump(&bxfu_n_dropped, dropped);
}

void bxfu_plan_run(struct bxfu_stream *s, struct bxfu_rec *rec, int n) {
  drop_unobserved(rec, n);
  int live = 0;
  for (int i = 0; i < n; i++)
    if (rec[i].res) {
      rec[live] = rec[i];
      if (rec[live].n_in <= BXR_MAX_INPUTS) rec[live].in = rec[live].inbuf;   /* moved with it */
      live++;
    }
  if (!live) return;
  struct bxfu_dev *d = s->dev->ctx;
  struct bxfu_segment g;
  struct kbuf key = {0};
  struct bxfu_plan *p = NULL, *own = NULL;
  if (segment_build(&g, rec, live, &key, s->dev->inner)) {
    uint64_t h = fnv(key.p, key.n);
    pthread_mutex_lock(&d->lock);
    p = plan_find(d, h, key.p, key.n);
    bool full = d->nplans >= BXFU_PLAN_CAP;
    pthread_mutex_unlock(&d->lock);
    if (p) bump(&bxfu_n_plans_reused, 1);
    else if (full) bump(&bxfu_n_unplanned, 1);  /* exploration is over: run unfused */
    else if ((own = calloc(1, sizeof *own))) {
      own->hash = h;
      own->key = key.p;
      own->klen = key.n;
      key.p = NULL;
      bxfu_custom_build(&own->custom, &g);   /* custom optimizers first: the built-in fusion leaves their claims */
      bxfu_groups_build(&own->groups, &g, s->dev, own->custom.claim_of);
      bump(&bxfu_n_plans_built, 1);
      bxfu_plan_dump(&own->groups, &g, s->dev);
      pthread_mutex_lock(&d->lock);
      /* another thread may have cached the same plan meanwhile: keep ours
       * private then (equal plans, either serves) */
      if (!plan_find(d, h, own->key, own->klen) && plan_insert(d, own)) p = own, own = NULL;
      else bump(&bxfu_n_unplanned, 1);
      pthread_mutex_unlock(&d->lock);
      if (!p) p = own;
    }
  }
  free(key.p);
  if (p) bxfu_groups_run(&p->groups, &g, s, &p->custom);
  else
    for (int i = 0; i < live; i++) bxfu_run_rec(s, &rec[i]);
  plan_free(own);
  segment_free(&g);
}
