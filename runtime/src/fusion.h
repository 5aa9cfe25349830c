/* fusion.h — the "+fusion" decorator's parts (prefix bxfu_): lazy values,
 * the recorded ops of a stream, and the plans a flush runs.
 *
 * fusion.c records: every op on a fusion device becomes a record on the
 * calling thread's stream, with its output handle made at once from the
 * inference rule (or an extension method's metadata); fusion_plan.c turns
 * a flushed segment into its relative form, finds or builds its plan
 * (which ops fuse: the legality rule lives there, in one function) and
 * runs it; fusion_kernel.c builds a fused elementwise group as kernel IR
 * for the inner device's kernel_prepare / kernel_launch; fusion_cube.c
 * learns which extension calls are one elementwise `#[cube]` launch, whose
 * body then joins fused groups.
 * docs/runtime.md "Fusion" has the whole picture. */
#ifndef BXFU_FUSION_H
#define BXFU_FUSION_H

#include "backend.h"

/* The most records a stream holds before it runs them (a full stream is
 * a sync point). */
#define BXFU_STREAM_CAP 1024
/* The most plans one device caches: past it new segments run without a
 * plan (unfused), so a graph that never repeats stops growing the cache. */
#define BXFU_PLAN_CAP 256

/* A lazy value: the storage priv of every tensor of a fusion device.
 * Counted: the wrapper's storage holds one reference, the record that
 * computes it another until it ran. */
struct bxfu_val {
  _Atomic int rc;
  struct bxr_hook hook;
  /* The stream whose record will compute it; NULL once computed (or
   * failed).  Released after inner/err are written, acquired before they
   * are read, so another thread that sees NULL sees the value. */
  struct bxfu_stream *_Atomic stream;
  bext_tensor *inner;     /* the value on the inner device */
  char *err;              /* the deferred failure (malloc'd), naming the op */
};

enum bxfu_kind { BXFU_CORE, BXFU_EXT };

/* What an extension record keeps beside its argument struct (malloc'd,
 * with it): the metadata value published at the call, which the backend's
 * output is checked against when the record runs (tensor specs and enum
 * variants always, ordinary fields when check mode was on at the call),
 * and the record's tensor outputs past the first (rec->res), in
 * out_slots' order. */
struct bxfu_cube;
struct bxfu_ext {
  void *want;                 /* m->meta_size bytes */
  bool fields;                /* check mode at the call */
  const struct bxfu_cube *cube; /* set by the plan builder: the call is a learned elementwise
                                 * #[cube] kernel (fusion_cube.c), fused like a core op */
  int n_more;
  struct bxfu_val *more[];
};

/* One recorded op.  Inputs are the fusion wrappers themselves (the record
 * owns one reference of each), so a wrapper nobody else holds is seen as
 * unique when the record runs, and the inner backend may reuse its buffer
 * in place. */
struct bxfu_rec {
  uint8_t kind;               /* enum bxfu_kind */
  enum bxr_opcode code;
  const char *api;
  int n_in;
  bext_tensor **in;           /* = inbuf when n_in <= BXR_MAX_INPUTS (re-pointed when the
                               * record moves), else a heap array (cat) */
  bext_tensor *inbuf[BXR_MAX_INPUTS];
  bext_scalar sc[3];
  bext_attrs at;
  bext_spec out;
  struct bxfu_val *res;       /* NULL: dropped (nobody could observe it) */
  const bext_ext_method *m;   /* BXFU_EXT: the method, its argument struct */
  void *args;                 /* (holding the wrappers), malloc'd, */
  struct bxfu_ext *x;         /* and the rest */
};

/* Whether anyone but the record can still see one of r's outputs. */
static inline bool bxfu_rec_observed(const struct bxfu_rec *r) {
  if (atomic_load_explicit(&r->res->rc, memory_order_acquire) != 1) return true;
  for (int k = 0; r->x && k < r->x->n_more; k++)
    if (atomic_load_explicit(&r->x->more[k]->rc, memory_order_acquire) != 1) return true;
  return false;
}

/* A stream: one thread's queue of records on one device. */
struct bxfu_stream {
  pthread_mutex_t lock;
  struct bext_device *dev;
  struct bxfu_rec *rec;
  int n, cap;
  char *err;                  /* the first deferred failure sync has not reported */
  bool owned;                 /* a live thread records here */
  struct bxfu_stream *next;   /* the device's list */
};

/* A plan (fusion_plan.c). */
struct bxfu_plan;

/* Per device state (dev->ctx): its streams and its plan cache.  Never
 * freed: threads keep pointers to their streams. */
struct bxfu_dev {
  pthread_mutex_t lock;       /* the stream list and the cache */
  struct bxfu_stream *streams;
  struct bxfu_plan **plans;   /* open hashing, BXFU_PLAN_SLOTS */
  int nplans;
};

/* The decorator's vtable (device.c's BXR_LAYER_VT_FUSION). */
BXR_DATA const struct bxr_backend bxfu_backend;

/* Process-wide counters (bext_fusion_stats). */
BXR_DATA _Atomic uint64_t bxfu_n_recorded, bxfu_n_flushes, bxfu_n_run, bxfu_n_dropped,
    bxfu_n_plans_built, bxfu_n_plans_reused, bxfu_n_unplanned, bxfu_n_kernels_compiled,
    bxfu_n_kernels_launched, bxfu_n_ops_fused, bxfu_n_reductions_fused;

static inline struct bxfu_val *bxfu_val_of(const bext_tensor *t) { return t->storage->priv; }

/* Runs one record (fusion.c): its inputs' inner tensors, the op on the
 * inner device, the result into rec->res; a failure is kept in the value
 * (and the stream's err). */
BXR_FUNC void bxfu_run_rec(struct bxfu_stream *s, struct bxfu_rec *r);
/* Finishes a record: releases its inputs and the value's pending mark. */
BXR_FUNC void bxfu_rec_done(struct bxfu_rec *r);
/* Records the failure msg on r's value (and the stream's first error). */
BXR_FUNC void bxfu_fail(struct bxfu_stream *s, struct bxfu_rec *r, const char *msg);
/* The inner tensor of input wrapper w for a run (taken when w is unique:
 * in-place reuse), or NULL with *err set to its deferred failure. */
BXR_FUNC bext_tensor *bxfu_take_inner(bext_tensor *w, const char **err);

/* `#[cube]` kernels of extensions (fusion_cube.c).  A watch around a
 * recorded call run on the inner device (run_ext): bxfu_cube_watch starts
 * it when the call may be one elementwise launch (a tensor output, no
 * ordinary arguments but plain scalar ones, 1..BXR_MAX_INPUTS inputs, a
 * device with kernels), holding the call's inner inputs and scalars;
 * bxfu_cube_learn ends it, learning the kernel when the call was one
 * elementwise launch from its inputs into its output, each kernel scalar
 * given one of the call's scalars, or confirming or contradicting what
 * an earlier call taught about scalar parameters (ok: the call
 * succeeded, out its output value). */
struct bxfu_watch {
  bool on;
  struct bxr_launch_watch w, *prev;
  int nin, nsc;
  bext_tensor *in[BXR_MAX_INPUTS];
  bext_ext_scalar sc[BXR_WATCH_SCALARS];
};
BXR_FUNC void bxfu_cube_watch(struct bxfu_watch *w, const struct bxfu_rec *r, const struct bext_device *inner,
                              void *args);
BXR_FUNC void bxfu_cube_learn(struct bxfu_watch *w, const struct bxfu_rec *r, const struct bext_device *inner,
                              void *out, bool ok);
/* The learned kernel of extension record r (its inputs in r->in, as the
 * plan builder sets them) on inner, or NULL. */
BXR_FUNC const struct bxfu_cube *bxfu_cube_of(const struct bxfu_rec *r, const struct bext_device *inner);

/* Runs records [0, n) of s under its lock (fusion_plan.c): finds or builds
 * the segment's plan and runs it, fused groups through the inner device's
 * kernel_prepare / kernel_launch, the rest one by one. */
BXR_FUNC void bxfu_plan_run(struct bxfu_stream *s, struct bxfu_rec *rec, int n);
/* Frees the device's plan cache (close). */
BXR_FUNC void bxfu_plans_free(struct bxfu_dev *d);

#endif /* BXFU_FUSION_H */
