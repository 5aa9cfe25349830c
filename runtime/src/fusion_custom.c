/* fusion_custom.c — custom optimizers (bext/fusion.h): the registry, the
 * segment as an optimizer sees it, the claims it makes when a plan is
 * built, and the run of a claimed group at its root's position.
 *
 * A claim is a plan's, like the built-in groups: made once, when the plan
 * is built, and replayed with each run's tensors and scalars.  Legality
 * is the built-in rule's first half (bxfu_can_fuse): a member other than
 * the root may vanish only if it is read inside the group alone and held
 * by nobody; so the group runs at its root, after every input it has. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bext/fusion.h"
#include "fusion_kernel.h"

#define BXFU_OPT_MAX 16

static pthread_mutex_t opt_lock = PTHREAD_MUTEX_INITIALIZER;
static bext_fusion_optimizer opts[BXFU_OPT_MAX];
static _Atomic int nopts;

bool bext_fusion_register_optimizer(const bext_fusion_optimizer *opt) {
  if (!opt || !opt->name || !opt->optimize)
    return bxr_error("bext_fusion_register_optimizer: an optimizer needs a name and an optimize function");
  pthread_mutex_lock(&opt_lock);
  int n = atomic_load(&nopts);
  bool ok = n < BXFU_OPT_MAX;
  if (ok) {
    opts[n] = *opt;
    atomic_store_explicit(&nopts, n + 1, memory_order_release);   /* published after the copy */
  }
  pthread_mutex_unlock(&opt_lock);
  if (!ok) return bxr_error("bext_fusion_register_optimizer: `%s`: already %d optimizers", opt->name, BXFU_OPT_MAX);
  return true;
}

/* ------------------------------------------------------- the segment view */

struct bext_fusion_segment {
  const struct bxfu_segment *g;
  struct bxfu_custom *cu;      /* claims go here (plan build); NULL when running */
  const char *opt;             /* the optimizer being asked */
};

static bool in_range(const bext_fusion_segment *v, int i) { return v && i >= 0 && i < v->g->n; }

/* Input k's wrapper of record r (core: r->in; extension: its slots). */
static bext_tensor *input_of(const struct bxfu_rec *r, int k) {
  if (r->kind == BXFU_CORE) return r->in[k];
  bext_ext_slot sl[BEXT_EXT_MAX_SLOTS];
  r->m->in_slots(r->args, sl);
  return *sl[k].at;
}

int bext_fusion_segment_len(const bext_fusion_segment *g) { return g ? g->g->n : 0; }

const bext_ext_method *bext_fusion_op_method(const bext_fusion_segment *g, int i) {
  return in_range(g, i) && g->g->rec[i].kind == BXFU_EXT ? g->g->rec[i].m : NULL;
}

const char *bext_fusion_op_name(const bext_fusion_segment *g, int i) {
  if (!in_range(g, i)) return NULL;
  const struct bxfu_rec *r = &g->g->rec[i];
  return r->kind == BXFU_EXT ? r->m->id : bxr_op_name(r->code);
}

const bext_spec *bext_fusion_op_out(const bext_fusion_segment *g, int i) {
  return in_range(g, i) ? &g->g->rec[i].out : NULL;
}

int bext_fusion_op_ninputs(const bext_fusion_segment *g, int i) { return in_range(g, i) ? g->g->nsrc[i] : 0; }

int bext_fusion_op_input(const bext_fusion_segment *g, int i, int k) {
  return in_range(g, i) && k >= 0 && k < g->g->nsrc[i] ? g->g->src[i][k] : -1;
}

const bext_spec *bext_fusion_op_input_spec(const bext_fusion_segment *g, int i, int k) {
  if (!in_range(g, i) || k < 0 || k >= g->g->nsrc[i]) return NULL;
  const bext_tensor *t = input_of(&g->g->rec[i], k);
  return t ? &t->spec : NULL;
}

int bext_fusion_op_uses(const bext_fusion_segment *g, int i) { return in_range(g, i) ? g->g->uses[i] : 0; }
bool bext_fusion_op_held(const bext_fusion_segment *g, int i) { return in_range(g, i) && g->g->held[i]; }

int bext_fusion_op_scalars(const bext_fusion_segment *g, int i, bext_ext_scalar *out, int cap) {
  if (!in_range(g, i)) return bxr_error("bext_fusion_op_scalars: no op %d in this segment", i), -1;
  const struct bxfu_rec *r = &g->g->rec[i];
  if (r->kind == BXFU_EXT) return r->m->scalars(r->args, out, cap);
  /* a core row reads sc[].i for narrow's start and length, sc[].f else */
  int n = bxr_op_info[r->code].nscalar;
  bool isint = r->code == BXR_OP_NARROW;
  for (int k = 0; k < n && k < cap; k++) {
    memset(&out[k], 0, sizeof out[k]);
    out[k].name = r->code == BXR_OP_CLAMP ? (k ? "max" : "min") : "scalar";
    out[k].type = isint ? "i64" : "f64";
    out[k].kind = isint ? BEXT_SCALAR_INT : BEXT_SCALAR_FLOAT;
    out[k].origin = BEXT_SCALAR_INFERRED;
    if (isint) out[k].i = r->sc[k].i;
    else out[k].f = r->sc[k].f;
  }
  return n;
}

/* --------------------------------------------------------------- claims */

bool bext_fusion_replace(bext_fusion_segment *v, const int *members, int n, const bext_fusion_kernel *k) {
  if (!v || !v->cu) return bxr_error("bext_fusion_replace: only inside an optimizer's optimize");
  const char *who = v->opt;
  if (!members || n < 1 || n > BXFU_CUSTOM_MAX || !k || (!k->run == !k->src))
    return bxr_error("bext_fusion_replace (%s): 1 to %d members and a kernel with exactly one of run and src", who,
                     BXFU_CUSTOM_MAX);
  const struct bxfu_segment *g = v->g;
  struct bxfu_custom *cu = v->cu;
  for (int m = 0; m < n; m++) {
    int i = members[m];
    if (i < 0 || i >= g->n || (m && i <= members[m - 1]))
      return bxr_error("bext_fusion_replace (%s): members must be ops of the segment in ascending order", who);
    if (cu->claim_of[i] >= 0) return bxr_error("bext_fusion_replace (%s): op %d is already replaced", who, i);
  }
  int root = members[n - 1];
  if (g->rec[root].x && g->rec[root].x->n_more)
    return bxr_error("bext_fusion_replace (%s): op %d has several outputs; a replacement computes one", who, root);
  /* every member but the root vanishes: read only by members, held by nobody */
  for (int m = 0; m < n - 1; m++) {
    int i = members[m], inside = 0;
    for (int q = 0; q < n; q++)
      for (int s = 0; s < g->nsrc[members[q]]; s++) inside += g->src[members[q]][s] == i;
    if (g->held[i] || inside != g->uses[i] || (g->rec[i].x && g->rec[i].x->n_more))
      return bxr_error("bext_fusion_replace (%s): op %d's output is used outside the group", who, i);
  }
  struct bxfu_cgroup *ng = realloc(cu->grp, (size_t)(cu->ngroups + 1) * sizeof *ng);
  if (!ng) return bxr_error("bext_fusion_replace: out of memory");
  cu->grp = ng;
  struct bxfu_cgroup *cg = &cu->grp[cu->ngroups];
  memset(cg, 0, sizeof *cg);
  cg->n = n;
  memcpy(cg->member, members, (size_t)n * sizeof *members);
  cg->k = k;
  cg->opt = who;
  for (int m = 0; m < n; m++) cu->claim_of[members[m]] = cu->ngroups;
  cu->ngroups++;
  return true;
}

void bxfu_custom_build(struct bxfu_custom *cu, const struct bxfu_segment *g) {
  memset(cu, 0, sizeof *cu);
  int n = atomic_load_explicit(&nopts, memory_order_acquire);
  if (!n) return;
  if (!(cu->claim_of = malloc((size_t)g->n * sizeof *cu->claim_of))) return;
  for (int i = 0; i < g->n; i++) cu->claim_of[i] = -1;
  for (int o = 0; o < n; o++) {
    bext_fusion_segment v = {g, cu, opts[o].name};
    opts[o].optimize(opts[o].user, &v);
  }
  bext_clear_error();   /* a refused claim is the optimizer's business, not the run's */
  if (!cu->ngroups) bxfu_custom_free(cu);
}

void bxfu_custom_free(struct bxfu_custom *cu) {
  free(cu->claim_of);
  free(cu->grp);
  memset(cu, 0, sizeof *cu);
}

/* --------------------------------------------------------------- running */

bool bxfu_custom_run_at(const struct bxfu_custom *cu, const struct bxfu_segment *g, struct bxfu_stream *s, int i) {
  if (!cu || !cu->claim_of || cu->claim_of[i] < 0) return false;
  int id = cu->claim_of[i];
  const struct bxfu_cgroup *cg = &cu->grp[id];
  if (cg->member[cg->n - 1] != i) return true;   /* members run with their root */
  struct bxfu_rec *rr = &g->rec[i];
  const bext_fusion_kernel *k = cg->k;
  bext_tensor *in[BEXT_EXT_MAX_SLOTS + 1];
  const struct bxfu_val *seen[BEXT_EXT_MAX_SLOTS];
  int nin = 0;
  const char *err = NULL;
  char msg[900];
  bool ok = true;
  for (int m = 0; m < cg->n && ok && !err; m++) {
    const struct bxfu_rec *r = &g->rec[cg->member[m]];
    for (int q = 0; q < g->nsrc[cg->member[m]] && ok && !err; q++) {
      int src = g->src[cg->member[m]][q];
      if (src >= 0 && cu->claim_of[src] == id) continue;   /* computed inside */
      const struct bxfu_val *v = bxfu_val_of(input_of(r, q));
      bool dup = false;
      for (int e = 0; e < nin && !dup; e++) dup = seen[e] == v;
      if (dup) continue;
      if (v->err) err = v->err;
      else if (nin == BEXT_EXT_MAX_SLOTS) ok = bxr_error("more than %d inputs", BEXT_EXT_MAX_SLOTS);
      else if ((in[nin] = bext_contiguous(bext_retain(v->inner)))) seen[nin++] = v;
      else ok = false;
    }
  }
  bext_tensor *out = NULL;
  if (ok && !err) {
    bext_fusion_segment view = {g, NULL, cg->opt};
    if (k->run) {
      out = k->run(k->user, &view, cg->member, cg->n, in, nin);
      if (out && (out->device != s->dev->inner || !bxr_same_spec(&rr->out, &out->spec))) {
        char want[160], got[160];
        bxr_describe_shape(rr->out.rank, rr->out.shape, want, sizeof want);
        bxr_describe_shape(out->spec.rank, out->spec.shape, got, sizeof got);
        bxr_error("it returned %s %s on %s, the op it replaces is %s %s on %s", got, bext_dtype_name(out->dtype),
                  out->device->name, want, bext_dtype_name(rr->out.dtype), s->dev->inner->name);
        bext_release(out);
        out = NULL;
      }
    } else {
      bext_kernel_scalar sc[BEXT_EXT_MAX_SLOTS];
      int ns = k->scalars ? k->scalars(k->user, &view, cg->member, cg->n, sc, BEXT_EXT_MAX_SLOTS) : 0;
      out = ns >= 0 && ns <= BEXT_EXT_MAX_SLOTS ? bxr_tensor_new(s->dev->inner, rr->out.dtype, rr->out.rank, rr->out.shape)
                                                : NULL;
      if (ns > BEXT_EXT_MAX_SLOTS) bxr_error("more than %d scalars", BEXT_EXT_MAX_SLOTS);
      int64_t numel = 1;
      for (int d = 0; d < rr->out.rank; d++) numel *= rr->out.shape[d];
      if (out && numel > 0) {
        in[nin] = out;
        bext_grid grid = {{(uint32_t)((numel + 255) / 256), 1, 1}, {256, 1, 1}};
        if (!bext_kernel_launch(k->src, &grid, in, nin + 1, sc, ns)) {
          bext_release(out);
          out = NULL;
        }
      }
    }
  }
  for (int e = 0; e < nin; e++) bext_release(in[e]);
  if (out) {
    rr->res->inner = out;
    atomic_fetch_add_explicit(&bxfu_n_kernels_launched, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&bxfu_n_ops_fused, (uint64_t)cg->n, memory_order_relaxed);
  } else {
    if (err) snprintf(msg, sizeof msg, "%s", err);
    else snprintf(msg, sizeof msg, "deferred custom kernel of optimizer `%s` (replacing `%s`) failed: %s", cg->opt,
                  rr->kind == BXFU_EXT ? rr->m->what : rr->api ? rr->api : bxr_op_name(rr->code), bext_last_error());
    bxfu_fail(s, rr, msg);
  }
  for (int m = 0; m < cg->n; m++) {
    atomic_fetch_add_explicit(&bxfu_n_run, 1, memory_order_relaxed);
    bxfu_rec_done(&g->rec[cg->member[m]]);
  }
  return true;
}
