/* fusion_kernel.c — the optimizer: elementwise chains of a segment (with
 * broadcast inputs) become one kernel in the kernel IR (runtime/kir,
 * bxk_ builder), run only through the inner device's kernel_prepare /
 * kernel_launch.  A device without those members (LibTorch, Remote, and
 * any device before its JIT lands) runs every record unfused, in order;
 * the plan and its groups are the same either way.
 *
 * What fuses: ops whose every output element depends only on the input
 * elements at the same (broadcast) position and whose scalar semantics the
 * IR has (bxk_scalar.h, the one home of them): add sub mul div rem max min
 * pow, their float *_scalar forms, comparisons, and or xor not, neg abs
 * sign, the float math of the IR, relu (as a compare and a select),
 * mask_where, casts between non-16-bit dtypes.  Not yet: sigmoid and clamp
 * (no IR row), int *_scalar ops (the scalar's saturating conversion),
 * f16/bf16, reductions and everything that moves data (a chain feeding a
 * reduction stays two kernels). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bxk.h"
#include "bxl.h"
#include "fusion_kernel.h"

/* ------------------------------------------------------------ the table */

enum ew_how { EW_NO, EW_BIN, EW_BIN_SCALAR, EW_UN, EW_FUN, EW_CMP, EW_CMP_SCALAR, EW_LOGIC, EW_RELU, EW_WHERE, EW_CAST };

/* How each opcode is written in the IR: one row per elementwise opcode. */
static const struct {
  uint8_t how, op;
} ew[BXR_OP_COUNT] = {
    [BXR_OP_ADD] = {EW_BIN, BXK_OP_ADD}, [BXR_OP_SUB] = {EW_BIN, BXK_OP_SUB},
    [BXR_OP_MUL] = {EW_BIN, BXK_OP_MUL}, [BXR_OP_DIV] = {EW_BIN, BXK_OP_DIV},
    [BXR_OP_REM] = {EW_BIN, BXK_OP_REM}, [BXR_OP_MAX] = {EW_BIN, BXK_OP_MAX},
    [BXR_OP_MIN] = {EW_BIN, BXK_OP_MIN}, [BXR_OP_POW] = {EW_BIN, BXK_OP_POW},
    [BXR_OP_ADD_SCALAR] = {EW_BIN_SCALAR, BXK_OP_ADD}, [BXR_OP_SUB_SCALAR] = {EW_BIN_SCALAR, BXK_OP_SUB},
    [BXR_OP_MUL_SCALAR] = {EW_BIN_SCALAR, BXK_OP_MUL}, [BXR_OP_DIV_SCALAR] = {EW_BIN_SCALAR, BXK_OP_DIV},
    [BXR_OP_REM_SCALAR] = {EW_BIN_SCALAR, BXK_OP_REM}, [BXR_OP_POW_SCALAR] = {EW_BIN_SCALAR, BXK_OP_POW},
    [BXR_OP_MAX_SCALAR] = {EW_BIN_SCALAR, BXK_OP_MAX}, [BXR_OP_MIN_SCALAR] = {EW_BIN_SCALAR, BXK_OP_MIN},
    [BXR_OP_EQ] = {EW_CMP, BXK_OP_EQ}, [BXR_OP_NE] = {EW_CMP, BXK_OP_NE},
    [BXR_OP_GT] = {EW_CMP, BXK_OP_GT}, [BXR_OP_GE] = {EW_CMP, BXK_OP_GE},
    [BXR_OP_LT] = {EW_CMP, BXK_OP_LT}, [BXR_OP_LE] = {EW_CMP, BXK_OP_LE},
    [BXR_OP_EQ_SCALAR] = {EW_CMP_SCALAR, BXK_OP_EQ}, [BXR_OP_NE_SCALAR] = {EW_CMP_SCALAR, BXK_OP_NE},
    [BXR_OP_GT_SCALAR] = {EW_CMP_SCALAR, BXK_OP_GT}, [BXR_OP_GE_SCALAR] = {EW_CMP_SCALAR, BXK_OP_GE},
    [BXR_OP_LT_SCALAR] = {EW_CMP_SCALAR, BXK_OP_LT}, [BXR_OP_LE_SCALAR] = {EW_CMP_SCALAR, BXK_OP_LE},
    [BXR_OP_AND] = {EW_LOGIC, BXK_OP_AND}, [BXR_OP_OR] = {EW_LOGIC, BXK_OP_OR},
    [BXR_OP_XOR] = {EW_LOGIC, BXK_OP_XOR}, [BXR_OP_NOT] = {EW_UN, BXK_OP_NOT},
    [BXR_OP_NEG] = {EW_UN, BXK_OP_NEG}, [BXR_OP_ABS] = {EW_UN, BXK_OP_ABS},
    [BXR_OP_SIGN] = {EW_UN, BXK_OP_SIGN},
    [BXR_OP_EXP] = {EW_FUN, BXK_OP_EXP}, [BXR_OP_LOG] = {EW_FUN, BXK_OP_LOG},
    [BXR_OP_LOG1P] = {EW_FUN, BXK_OP_LOG1P}, [BXR_OP_SQRT] = {EW_FUN, BXK_OP_SQRT},
    [BXR_OP_RSQRT] = {EW_FUN, BXK_OP_RSQRT}, [BXR_OP_SIN] = {EW_FUN, BXK_OP_SIN},
    [BXR_OP_COS] = {EW_FUN, BXK_OP_COS}, [BXR_OP_TANH] = {EW_FUN, BXK_OP_TANH},
    [BXR_OP_ERF] = {EW_FUN, BXK_OP_ERF}, [BXR_OP_RECIP] = {EW_FUN, BXK_OP_RECIP},
    [BXR_OP_FLOOR] = {EW_FUN, BXK_OP_FLOOR}, [BXR_OP_CEIL] = {EW_FUN, BXK_OP_CEIL},
    [BXR_OP_ROUND] = {EW_FUN, BXK_OP_ROUND},
    [BXR_OP_RELU] = {EW_RELU, 0}, [BXR_OP_MASK_WHERE] = {EW_WHERE, 0}, [BXR_OP_CAST] = {EW_CAST, 0},
};

/* The IR element type of a dtype; BXK_VOID: none (f16, bf16 not yet). */
static enum bxk_type ir_type(bext_dtype dt) {
  switch (dt) {
  case BEXT_F32: return BXK_F32;
  case BEXT_F64: return BXK_F64;
  case BEXT_I32: return BXK_I32;
  case BEXT_I64: return BXK_I64;
  case BEXT_U8: return BXK_U8;
  case BEXT_BOOL: return BXK_BOOL;
  default: return BXK_VOID;
  }
}

/* Whether record i is an elementwise op the IR expresses for its dtypes. */
static bool expressible(const struct bxfu_segment *g, int i) {
  const struct bxfu_rec *r = &g->rec[i];
  if (r->kind != BXFU_CORE || ew[r->code].how == EW_NO) return false;
  if (ir_type(r->out.dtype) == BXK_VOID) return false;
  for (int k = 0; k < r->n_in; k++)
    if (ir_type(r->in[k]->dtype) == BXK_VOID) return false;
  bool fl = bxk_type_is_float(ir_type(r->in[0]->dtype));
  switch (ew[r->code].how) {
  case EW_BIN_SCALAR: case EW_CMP_SCALAR: return fl;   /* int scalars: saturating conversion, not yet */
  case EW_BIN: return r->code != BXR_OP_POW || fl;       /* the IR's pow is float-only */
  default: return true;
  }
}

/* ------------------------------------------------------------ legality */

bool bxfu_can_fuse(const struct bxfu_segment *g, int p, int c) {
  /* both elementwise and expressible; p's value read once (by c) in the
   * segment and held by nobody outside it, so eliding it is invisible;
   * and of c's output shape, so the one index of the kernel is also
   * p's (an intermediate is never broadcast inside a kernel) */
  const struct bxfu_rec *rp = &g->rec[p], *rc = &g->rec[c];
  return expressible(g, p) && expressible(g, c) && g->uses[p] == 1 && !g->held[p] &&
         bxr_same_shape(rp->out.rank, rp->out.shape, rc->out.rank, rc->out.shape);
}

/* ------------------------------------------------------------ grouping */

static int find(int *parent, int i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

/* The kernel of group gr: one unit per output element; each outside
 * input loaded at its broadcast index; members evaluated in record order;
 * the root's value stored.  Shapes are constants (they are part of the
 * plan's key); scalars are parameters (fresh on every replay). */
static struct bxk_kernel *group_ir(const struct bxfu_segment *g, struct bxfu_group *gr) {
  const struct bxfu_rec *root = &g->rec[gr->root];
  int R = root->out.rank;
  int64_t numel = bxr_numel(R, root->out.shape);
  if (numel <= 0 || numel > (int64_t)UINT32_MAX / 2) return NULL;
  gr->numel = (uint32_t)numel;
  char name[48];
  snprintf(name, sizeof name, "fused_%d_ops", gr->n);
  struct bxk_kernel *k = bxk_kernel_new(name);
  if (!k) return NULL;
  bxk_val *val = calloc((size_t)g->n, sizeof *val);  /* member record -> its value */
  if (!val) {
    bxk_kernel_free(k);
    return NULL;
  }
  for (int b = 0; b < gr->nbind - 1; b++)
    bxk_add_binding(k, ir_type(g->rec[gr->ext_rec[b]].in[gr->ext_in[b]]->dtype), 0, false);
  int out = bxk_add_binding(k, ir_type(root->out.dtype), 0, true);
  for (int s = 0; s < gr->nscal; s++) bxk_add_scalar(k, ir_type(g->rec[gr->scal_rec[s]].in[0]->dtype));
  struct bxk_builder b0 = bxk_builder_at(k, NULL);
  bxk_val pos = bxk_topo(&b0, BXK_TOPO_ABSOLUTE_POS);
  struct bxk_block *then_blk, *else_blk;
  bxk_if(&b0, bxk_bin(&b0, BXK_OP_LT, pos, bxk_const_i(&b0, BXK_U32, (int64_t)numel)), &then_blk, &else_blk);
  struct bxk_builder b = bxk_builder_at(k, then_blk);
  /* outside inputs, loaded once each */
  bxk_val *ext = calloc((size_t)gr->nbind, sizeof *ext);
  for (int e = 0; ext && e < gr->nbind - 1; e++) {
    const bext_tensor *t = g->rec[gr->ext_rec[e]].in[gr->ext_in[e]];
    bxk_val idx = pos;
    if (!bxr_same_shape(t->rank, t->shape, R, root->out.shape)) {
      /* broadcast: t's dims align on the right; stretched dims read 0 */
      idx = bxk_const_i(&b, BXK_U32, 0);
      int64_t ostride = 1, istride = 1;
      for (int d = R - 1; d >= 0; d--) {
        int td = d - (R - t->rank);
        int64_t ext_d = td >= 0 ? t->shape[td] : 1;
        if (ext_d != 1) {
          bxk_val c = bxk_bin(&b, BXK_OP_DIV, pos, bxk_const_i(&b, BXK_U32, ostride));
          c = bxk_bin(&b, BXK_OP_REM, c, bxk_const_i(&b, BXK_U32, root->out.shape[d]));
          idx = bxk_bin(&b, BXK_OP_ADD, idx, bxk_bin(&b, BXK_OP_MUL, c, bxk_const_i(&b, BXK_U32, istride)));
        }
        ostride *= root->out.shape[d];
        istride *= ext_d;
      }
    }
    ext[e] = bxk_load(&b, e, idx);
  }
  int scal = 0;
  for (int m = 0; ext && m < gr->n; m++) {
    int i = gr->member[m];
    const struct bxfu_rec *r = &g->rec[i];
    bxk_val in[BXR_MAX_INPUTS] = {0};
    for (int q = 0; q < r->n_in; q++) {
      int src = g->src[i][q];
      if (src >= 0 && g->rec[src].res && val[src]) {
        in[q] = val[src];
        continue;
      }
      const struct bxfu_val *v = bxfu_val_of(r->in[q]);
      for (int e = 0; e < gr->nbind - 1; e++)
        if (bxfu_val_of(g->rec[gr->ext_rec[e]].in[gr->ext_in[e]]) == v) in[q] = ext[e];
    }
    enum bxk_type ot = ir_type(r->out.dtype);
    bxk_val y = 0;
    switch (ew[r->code].how) {
    case EW_BIN: case EW_LOGIC: case EW_CMP: y = bxk_bin(&b, ew[r->code].op, in[0], in[1]); break;
    case EW_BIN_SCALAR: case EW_CMP_SCALAR: y = bxk_bin(&b, ew[r->code].op, in[0], bxk_scalar(&b, scal++)); break;
    case EW_UN: case EW_FUN: y = bxk_un(&b, ew[r->code].op, in[0]); break;
    case EW_RELU: {
      bxk_val zero = bxk_type_is_float(ot) ? bxk_const_f(&b, ot, 0.0) : bxk_const_i(&b, ot, 0);
      y = bxk_select(&b, bxk_bin(&b, BXK_OP_LT, in[0], zero), zero, in[0]);
      break;
    }
    case EW_WHERE: y = bxk_select(&b, in[1], in[2], in[0]); break;  /* mask ? value : x */
    case EW_CAST: y = bxk_cast(&b, ot, in[0]); break;
    default: break;
    }
    val[i] = y;
  }
  if (ext) bxk_store(&b, out, pos, val[gr->root]);
  free(ext);
  free(val);
  struct bxk_diags ds;
  memset(&ds, 0, sizeof ds);
  if (!ext || k->oom || !bxk_verify(k, &ds)) {
    bxk_kernel_free(k);  /* a group the IR cannot express runs unfused */
    return NULL;
  }
  return k;
}

/* The outside inputs and scalar parameters of group gr. */
static bool group_bindings(const struct bxfu_segment *g, struct bxfu_group *gr, const int *group_of, int id) {
  int cap = 0;
  for (int m = 0; m < gr->n; m++) cap += g->rec[gr->member[m]].n_in;
  gr->ext_rec = malloc(((size_t)cap + 1) * sizeof *gr->ext_rec);
  gr->ext_in = malloc(((size_t)cap + 1) * sizeof *gr->ext_in);
  gr->scal_rec = malloc(((size_t)gr->n + 1) * sizeof *gr->scal_rec);
  if (!gr->ext_rec || !gr->ext_in || !gr->scal_rec) return false;
  int ne = 0;
  for (int m = 0; m < gr->n; m++) {
    int i = gr->member[m];
    const struct bxfu_rec *r = &g->rec[i];
    unsigned how = ew[r->code].how;
    if (how == EW_BIN_SCALAR || how == EW_CMP_SCALAR) gr->scal_rec[gr->nscal++] = i;
    for (int q = 0; q < r->n_in; q++) {
      int src = g->src[i][q];
      if (src >= 0 && group_of[src] == id) continue;  /* computed inside */
      const struct bxfu_val *v = bxfu_val_of(r->in[q]);
      bool seen = false;
      for (int e = 0; e < ne && !seen; e++) seen = bxfu_val_of(g->rec[gr->ext_rec[e]].in[gr->ext_in[e]]) == v;
      if (seen) continue;
      gr->ext_rec[ne] = i;
      gr->ext_in[ne++] = q;
    }
  }
  gr->nbind = ne + 1;
  return true;
}

void bxfu_groups_build(struct bxfu_groups *out, const struct bxfu_segment *g, struct bext_device *dev) {
  memset(out, 0, sizeof *out);
  out->n_rec = g->n;
  int *parent = malloc((size_t)g->n * sizeof *parent), *size = calloc((size_t)g->n, sizeof *size);
  out->group_of = malloc((size_t)g->n * sizeof *out->group_of);
  if (!parent || !size || !out->group_of) goto fail;
  /* A consumer joins the group of every producer it may fuse with: since
   * a fusable producer has one use, the groups are trees rooted at their
   * last record. */
  for (int i = 0; i < g->n; i++) parent[i] = i;
  for (int c = 0; c < g->n; c++)
    for (int q = 0; q < g->rec[c].n_in && g->rec[c].kind == BXFU_CORE; q++) {
      int p = g->src[c][q];
      if (p >= 0 && bxfu_can_fuse(g, p, c)) parent[find(parent, p)] = find(parent, c);
    }
  for (int i = 0; i < g->n; i++) size[find(parent, i)]++;
  int ng = 0;
  for (int i = 0; i < g->n; i++) out->group_of[i] = -1;
  for (int i = 0; i < g->n; i++)
    if (size[i] > 1) out->group_of[i] = ng++;   /* roots of groups: the last record is the root */
  if (ng && !(out->g = calloc((size_t)ng, sizeof *out->g))) goto fail;
  out->ngroups = ng;
  for (int i = 0; i < g->n; i++) {
    int rt = find(parent, i);
    if (size[rt] > 1) out->group_of[i] = out->group_of[rt];
  }
  for (int i = 0; i < g->n; i++) {
    int id = out->group_of[i];
    if (id < 0) continue;
    struct bxfu_group *gr = &out->g[id];
    if (!gr->member && !(gr->member = malloc((size_t)size[find(parent, i)] * sizeof *gr->member))) goto fail;
    gr->member[gr->n++] = i;
    gr->root = i;   /* ascending: the last one stays */
  }
  bool jit = dev->inner->vt->kernel_prepare && dev->inner->vt->kernel_launch;
  for (int id = 0; id < ng; id++) {
    struct bxfu_group *gr = &out->g[id];
    if (!group_bindings(g, gr, out->group_of, id)) goto fail;
    gr->ir = group_ir(g, gr);
    if (gr->ir && jit) {
      size_t len = 0;
      uint8_t *ser = bxk_serialize(gr->ir, &len);
      uint64_t key = ser ? bxk_hash64(ser, len) : 0; /* the IR's identity, as every cache keys it */
      free(ser);
      gr->k = dev->inner->vt->kernel_prepare(dev->inner, gr->ir, key);
      if (gr->k) atomic_fetch_add_explicit(&bxfu_n_kernels_compiled, 1, memory_order_relaxed);
      else bext_clear_error();   /* a kernel the device refuses: the group runs unfused */
    }
  }
  free(parent);
  free(size);
  return;
fail:
  free(parent);
  free(size);
  bxfu_groups_free(out);
  memset(out, 0, sizeof *out);
}

void bxfu_groups_free(struct bxfu_groups *gs) {
  for (int i = 0; i < gs->ngroups; i++) {
    struct bxfu_group *gr = &gs->g[i];
    free(gr->member);
    free(gr->ext_rec);
    free(gr->ext_in);
    free(gr->scal_rec);
    if (gr->ir) bxk_kernel_free(gr->ir);
    /* gr->k belongs to the inner device (freed when it closes) */
  }
  free(gs->g);
  free(gs->group_of);
  gs->g = NULL;
  gs->group_of = NULL;
  gs->ngroups = 0;
}

/* ------------------------------------------------------------ running */

/* Runs group gr as its kernel; false (nothing consumed) when it cannot. */
static bool run_fused(const struct bxfu_segment *g, const struct bxfu_group *gr, struct bxfu_stream *s) {
  struct bext_device *inner = s->dev->inner;
  const struct bxfu_rec *root = &g->rec[gr->root];
  bext_tensor *bind[BEXT_EXT_MAX_SLOTS];
  union bxl_scalar sc[BEXT_EXT_MAX_SLOTS];
  if (gr->nbind > BEXT_EXT_MAX_SLOTS || gr->nscal > BEXT_EXT_MAX_SLOTS) return false;
  const char *err = NULL;
  int nb = 0;
  for (int e = 0; e < gr->nbind - 1; e++, nb++) {
    const struct bxfu_val *v = bxfu_val_of(g->rec[gr->ext_rec[e]].in[gr->ext_in[e]]);
    if (v->err) {
      err = v->err;
      break;
    }
    /* the kernel indexes elements row-major: views are materialized */
    if (!(bind[e] = bext_contiguous(bext_retain(v->inner)))) break;
  }
  bool ok = !err && nb == gr->nbind - 1;
  if (ok) ok = (bind[nb] = bxr_tensor_new(inner, root->out.dtype, root->out.rank, root->out.shape)) != NULL;
  if (ok) nb++;
  for (int q = 0; q < gr->nscal; q++) {
    const struct bxfu_rec *r = &g->rec[gr->scal_rec[q]];
    memset(&sc[q], 0, sizeof sc[q]);
    if (r->in[0]->dtype == BEXT_F32) sc[q].f32 = (float)r->sc[0].f;
    else sc[q].f64 = r->sc[0].f;
  }
  if (ok) {
    uint32_t dim[3] = {256, 1, 1}, count[3] = {(gr->numel + 255) / 256, 1, 1};
    ok = inner->vt->kernel_launch(inner, gr->k, count, dim, bind, sc);
  }
  struct bxfu_rec *rr = &g->rec[gr->root];
  if (ok) {
    rr->res->inner = bind[--nb];
    atomic_fetch_add_explicit(&bxfu_n_kernels_launched, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&bxfu_n_ops_fused, (uint64_t)gr->n, memory_order_relaxed);
  } else {
    char msg[900];
    snprintf(msg, sizeof msg, "%s", err ? err : bext_last_error());
    if (!err) snprintf(msg, sizeof msg, "deferred fused kernel ending in `%s` failed: %s",
                       rr->api ? rr->api : bxr_op_name(rr->code), bext_last_error());
    bxfu_fail(s, rr, msg);
  }
  for (int i = 0; i < nb; i++) bext_release(bind[i]);
  for (int m = 0; m < gr->n; m++) {
    atomic_fetch_add_explicit(&bxfu_n_run, 1, memory_order_relaxed);
    bxfu_rec_done(&g->rec[gr->member[m]]);
  }
  return true;
}

void bxfu_groups_run(const struct bxfu_groups *gs, const struct bxfu_segment *g, struct bxfu_stream *s) {
  for (int i = 0; i < g->n; i++) {
    int id = gs->group_of ? gs->group_of[i] : -1;
    if (id < 0) {
      bxfu_run_rec(s, &g->rec[i]);
      continue;
    }
    const struct bxfu_group *gr = &gs->g[id];
    if (gr->root != i) continue;   /* members run with their root */
    if (gr->k && run_fused(g, gr, s)) continue;
    for (int m = 0; m < gr->n; m++) bxfu_run_rec(s, &g->rec[gr->member[m]]);
  }
}

/* ---------------------------------------------------------------- dumps */

void bxfu_plan_dump(const struct bxfu_groups *gs, const struct bxfu_segment *g, struct bext_device *dev) {
  const char *dir = getenv("BEXT_FUSION_DUMP");
  if (!dir || !*dir) return;
  static _Atomic unsigned seq;
  unsigned id = atomic_fetch_add(&seq, 1);
  char path[600];
  mkdir(dir, 0777);   /* EEXIST is fine; a failure shows at fopen */
  snprintf(path, sizeof path, "%s/plan_%04u.dot", dir, id);
  FILE *f = fopen(path, "w");
  if (!f) return;
  fprintf(f, "digraph plan_%u {\n  label=\"%s: %d ops, %d fused groups\";\n  node [shape=box];\n", id, dev->name,
          g->n, gs->ngroups);
  for (int gi = 0; gi < gs->ngroups; gi++)
    fprintf(f, "  subgraph cluster_%d { label=\"fused kernel %d%s\"; style=dashed; }\n", gi, gi,
            gs->g[gi].k ? "" : " (runs unfused: no kernel on this device)");
  for (int i = 0; i < g->n; i++) {
    const struct bxfu_rec *r = &g->rec[i];
    char sh[160];
    bxr_describe_shape(r->out.rank, r->out.shape, sh, sizeof sh);
    const char *name = r->kind == BXFU_EXT ? r->m->what : bxr_op_name(r->code);
    int gid = gs->group_of ? gs->group_of[i] : -1;
    if (gid >= 0) fprintf(f, "  subgraph cluster_%d { r%d; }\n", gid, i);
    fprintf(f, "  r%d [label=\"%d: %s\\n%s %s%s\"];\n", i, i, name, sh, bext_dtype_name(r->out.dtype),
            g->held[i] ? "\\nheld" : "");
    for (int q = 0; q < r->n_in; q++)
      if (g->src[i][q] >= 0) fprintf(f, "  r%d -> r%d;\n", g->src[i][q], i);
  }
  fputs("}\n", f);
  fclose(f);
  for (int gi = 0; gi < gs->ngroups; gi++) {
    if (!gs->g[gi].ir) continue;
    char *txt = bxk_print_alloc(gs->g[gi].ir);
    snprintf(path, sizeof path, "%s/plan_%04u_kernel_%d.kir", dir, id, gi);
    if (txt && (f = fopen(path, "w"))) {
      fputs(txt, f);
      fclose(f);
    }
    free(txt);
  }
}
