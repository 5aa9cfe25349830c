/* fusion_cube.c — `#[cube]` kernels are transparent to Fusion: an
 * extension call whose implementation on the inner device is one launch
 * of an elementwise kernel becomes, in later plans, an elementwise member
 * whose body is that kernel's IR, fused with its neighbours like a core
 * op (docs/runtime.md "Fusion", "Kernels of extensions").
 *
 * Why learned and not declared: an implementation is C the runtime cannot
 * read, so Fusion watches it.  When a recorded call runs on the inner
 * device, the public launches it makes (bext_kernel_launch) are noted
 * (backend.h's watch).  The call is *transparent* when it made exactly one
 * launch, of a kernel the IR shows elementwise (pointwise() below), over
 * one unit per element of a 1-D grid, whose read-only bindings are the
 * call's own (retained, so unchanged) input tensors, contiguous and of
 * the output's shape, and whose one written binding is the tensor the
 * call returned (retained from the launch on, so nothing rewrote it).
 * What it learned is kept per (method, inner device, input specs): later
 * calls with those specs are planned as the kernel's body.  So Fusion
 * assumes an implementation does the same thing for the same specs.  Only
 * methods whose ordinary arguments are plain scalar arguments qualify
 * (nothing else out of band could change its choice).  A kernel's scalar
 * parameters come from C the runtime does not see, so the launch's
 * values are compared with the call's: each parameter must hold exactly
 * one of the call's scalars (in the parameter's type), and is bound to
 * it; a fused kernel then takes it as a parameter filled from each call's
 * own argument, as it takes mul_scalar's.  A parameter holding anything
 * else (a constant, `b * 2`) keeps the call opaque.
 *
 * Why a binding must be confirmed: it is found by value, and a constant
 * or `b * 2` equals the argument by coincidence at some call (1.0 while
 * b is 1.0; `b * 2` at b = 0).  Trusted after one call, it would make
 * every later fused call compute with its own b: a silent wrong answer.
 * So a kernel with scalar parameters is learned *pending*, and trusted
 * (planned as its body) only when, for every parameter, a later watched
 * call launched the same kernel with the parameter again equal to its
 * bound argument while that value differed from the first call's (a
 * constant cannot follow it; `b * 2` cannot either).  Until then the
 * calls run their implementation, watched; one that launches otherwise
 * or passes anything else contradicts the binding and makes the entry
 * opaque for good. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bext/gen.h"   /* the encoding of ordinary arguments */
#include "bxk.h"
#include "fusion_kernel.h"

/* Learned facts, process-wide: at most this many (method, device, specs). */
#define BXFU_CUBE_CAP 256

/* What an entry is trusted with (changed under cube_lock only). */
enum cube_state {
  CUBE_PENDING, /* scalar bindings seen once, not yet confirmed: the call stays opaque */
  CUBE_TRUSTED, /* planned as the kernel's body (what a plan keys on: never changes again) */
  CUBE_OPAQUE,  /* a later call contradicted the bindings: opaque for good */
};

struct bxfu_cube {
  const bext_ext_method *m;
  const struct bext_device *inner;
  int nin;
  bext_spec in[BXR_MAX_INPUTS], out;
  const bext_kernel_src *src;
  const struct bxk_kernel *ir;     /* src's verified IR (process lifetime) */
  const struct bxk_inst *guard;    /* the top-level length check holding the store, or NULL */
  int slot_of[BXR_WATCH_BINDINGS]; /* read-only binding -> the call's input slot */
  int nscal;                       /* the kernel's scalar parameters */
  int arg_of[BXR_WATCH_SCALARS];   /* scalar parameter -> the call's scalar (m->scalars' order) */
  bext_kernel_scalar first[BXR_WATCH_SCALARS]; /* each parameter's value at the learning call */
  unsigned confirmed;              /* bit q: parameter q followed its argument to another value */
  enum cube_state state;
  struct bxfu_cube *next;
};

static pthread_mutex_t cube_lock = PTHREAD_MUTEX_INITIALIZER;
static struct bxfu_cube *cubes;
static _Atomic int ncubes;

/* -------------------------------------------------- elementwise kernels */

/* What the IR must show: bindings read only at ABSOLUTE_POS, exactly one
 * store, into the one mutable binding at ABSOLUTE_POS, reached by every
 * unit that passes the guard (top level of the body, or of a last
 * top-level `if ABSOLUTE_POS < len(b) {..}` with an empty else); no
 * shared memory, barriers, returns or topology but ABSOLUTE_POS; no
 * shape, stride or rank queries (lengths are the element count).  Scalar
 * parameters are values like any other (judge() binds them). */
struct pw {
  const struct bxk_kernel *ir;
  const struct bxk_inst **def;     /* value -> its instruction */
  int out, stores;
  const struct bxk_inst *guard;
};

static bool is_pos(const struct pw *p, bxk_val v) {
  const struct bxk_inst *d = v && v <= p->ir->nval ? p->def[v] : NULL;
  return d && d->op == BXK_OP_TOPO && d->imm.u == BXK_TOPO_ABSOLUTE_POS;
}

static bool is_len(const struct pw *p, bxk_val v) {
  return v && v <= p->ir->nval && p->def[v] && p->def[v]->op == BXK_OP_LEN;
}

/* `pos < len(b)` or `len(b) > pos` */
static bool is_guard(const struct pw *p, bxk_val c) {
  const struct bxk_inst *d = c && c <= p->ir->nval ? p->def[c] : NULL;
  if (!d) return false;
  if (d->op == BXK_OP_LT) return is_pos(p, d->arg[0]) && is_len(p, d->arg[1]);
  if (d->op == BXK_OP_GT) return is_len(p, d->arg[0]) && is_pos(p, d->arg[1]);
  return false;
}

/* top: the block is run once by every unit past the guard, so the store
 * may be in it. */
static bool pw_block(struct pw *p, const struct bxk_block *blk, bool top) {
  for (const struct bxk_inst *i = blk->first; i; i = i->next) {
    if (i->res && i->res <= p->ir->nval) p->def[i->res] = i;
    switch (i->op) {
    case BXK_OP_TOPO:
      if (i->imm.u != BXK_TOPO_ABSOLUTE_POS) return false;
      break;
    case BXK_OP_SHAPE: case BXK_OP_STRIDE: case BXK_OP_RANK: case BXK_OP_SLOAD:
    case BXK_OP_SSTORE: case BXK_OP_SYNC: case BXK_OP_RETURN:
      return false;
    case BXK_OP_LOAD:
      if (p->ir->bind[i->imm.u].mut || !is_pos(p, i->arg[0])) return false;
      break;
    case BXK_OP_STORE:
      if (!top || (int)i->imm.u != p->out || !is_pos(p, i->arg[0]) || p->stores++) return false;
      break;
    case BXK_OP_IF:
      if (blk == &p->ir->body && !i->next && !p->stores && is_guard(p, i->arg[0]) && !i->blk[1]->first) {
        p->guard = i;
        if (!pw_block(p, i->blk[0], true)) return false;
        break;
      }
      /* an ordinary if */
      __attribute__((fallthrough));
    default:
      for (int b = 0; b < bxk_opinfo[i->op].nblk; b++)
        if (!pw_block(p, i->blk[b], false)) return false;
    }
  }
  return true;
}

/* Whether ir is elementwise (above): its output binding and guard. */
static bool pointwise(const struct bxk_kernel *ir, int *out, const struct bxk_inst **guard) {
  if (ir->nscalar > BXR_WATCH_SCALARS || ir->nshared || ir->nbind < 2 || ir->nbind > BXR_MAX_INPUTS + 1) return false;
  int o = -1;
  for (uint32_t b = 0; b < ir->nbind; b++)
    if (ir->bind[b].mut) {
      if (o >= 0) return false;
      o = (int)b;
    }
  if (o < 0) return false;
  struct pw p = {ir, calloc((size_t)ir->nval + 1, sizeof *p.def), o, 0, NULL};
  bool ok = p.def && pw_block(&p, &ir->body, true) && p.stores == 1;
  free(p.def);
  *out = o;
  *guard = p.guard;
  return ok;
}

/* -------------------------------------------------------------- scalars */

/* Call scalar s as a kernel scalar parameter of IR type t: what a
 * launcher stores for the value (floats: the C conversion, which is
 * bext_kernel_scalar_of's for a type parameter's double; integers: the C
 * conversion of a concrete parameter).  False for a pair taken as no
 * binding: a bool with a number either way, a float into an integer or
 * half parameter (so fewer values match by coincidence). */
static bool kernel_scalar(const bext_ext_scalar *s, unsigned t, bext_kernel_scalar *out) {
  memset(out, 0, sizeof *out);
  bool fl = s->kind == BEXT_SCALAR_FLOAT, bo = s->kind == BEXT_SCALAR_BOOL, in = !fl && !bo;
  double d = fl ? s->f : s->kind == BEXT_SCALAR_INT ? (double)s->i : (double)s->u;
  switch (t) {   /* i and u share their bits */
  case BXK_F32: out->f32 = (float)d; return !bo;
  case BXK_F64: out->f64 = d; return !bo;
  case BXK_I64: out->i64 = (int64_t)s->u; return in;
  case BXK_I32: out->i32 = (int32_t)s->u; return in;
  case BXK_U32: out->u32 = (uint32_t)s->u; return in;
  case BXK_U8: out->u8 = (uint8_t)s->u; return in;
  case BXK_BOOL: out->u8 = bo && s->b; return bo;
  default: return false;
  }
}

/* The call's scalars into sc when its ordinary arguments are exactly
 * plain scalar arguments (integer, float and bool parameters: inferred
 * scalars), at most BXR_WATCH_SCALARS: how many, else -1.  The encoding
 * proves it: args_encode's bytes must be the scalars' own, written in
 * order with gen.h's writer (docs/codegen.md "Descriptors"), so no other
 * ordinary argument (a mode, a shape, an enum tag) exists that could
 * change what the implementation does out of band. */
static int plain_scalars(const bext_ext_method *m, const void *args, bext_ext_scalar *sc) {
  if (m->nscalars > BXR_WATCH_SCALARS) return -1;
  if (m->nscalars && m->scalars(args, sc, BXR_WATCH_SCALARS) != m->nscalars) {
    bext_clear_error();   /* a custom encoding failed: the call just stays opaque */
    return -1;
  }
  unsigned char want[1 + 8 * BXR_WATCH_SCALARS], got[sizeof want];
  bext_gen_writer wr = {want, sizeof want, 0, 0};
  bext_gen_put(&wr, BEXT_GEN_ENCODING_VERSION, 1);
  for (int k = 0; k < m->nscalars; k++) {
    const bext_ext_scalar *s = &sc[k];
    if (s->origin != BEXT_SCALAR_INFERRED || !s->type) return -1;
    if (s->kind == BEXT_SCALAR_FLOAT && !strcmp(s->type, "f32")) bext_gen_put_f32(&wr, (float)s->f);
    else if (s->kind == BEXT_SCALAR_FLOAT) bext_gen_put_f64(&wr, s->f);
    else if (s->kind == BEXT_SCALAR_BOOL) bext_gen_put(&wr, s->b, 1);
    else   /* "i8" .. "u64": the bits say the width; isize and usize are 8 bytes */
      bext_gen_put(&wr, s->u, !strcmp(s->type + 1, "size") ? 8 : atoi(s->type + 1) / 8);
  }
  size_t n = m->args_encode(args, got, sizeof got);
  return n == wr.len && !memcmp(got, want, n) ? m->nscalars : -1;
}

/* The one call scalar whose value kernel scalar v (of IR type t) holds;
 * -1 when none does, or several (which one the implementation passed is
 * then unknown). */
static int bound_scalar(const struct bxfu_watch *w, unsigned t, const bext_kernel_scalar *v) {
  unsigned bytes = (bxk_type_bits(t) + 7) / 8;
  int hit = -1;
  for (int k = 0; k < w->nsc; k++) {
    bext_kernel_scalar x;
    if (!kernel_scalar(&w->sc[k], t, &x) || memcmp(&x, v, bytes)) continue;
    if (hit >= 0) return -1;
    hit = k;
  }
  return hit;
}

int bxfu_cube_nscalars(const struct bxfu_cube *c) { return c->nscal; }
unsigned bxfu_cube_scalar_type(const struct bxfu_cube *c, int q) { return c->ir->scalar[q]; }

bool bxfu_cube_scalar(const struct bxfu_rec *r, int q, bext_kernel_scalar *out) {
  const struct bxfu_cube *c = r->x->cube;
  bext_ext_scalar sc[BXR_WATCH_SCALARS];
  /* this call's arguments (the record keeps them): a replayed plan
   * computes with the values of the call it runs */
  if (r->m->scalars(r->args, sc, BXR_WATCH_SCALARS) != r->m->nscalars) return false;
  return kernel_scalar(&sc[c->arg_of[q]], c->ir->scalar[q], out) ||
         bext_set_error("%s: scalar `%s` no longer converts to the kernel's parameter", r->m->what, sc[c->arg_of[q]].name);
}

/* ------------------------------------------------------------- watching */

void bxfu_cube_watch(struct bxfu_watch *w, const struct bxfu_rec *r, const struct bext_device *inner, void *args) {
  memset(w, 0, sizeof *w);
  const bext_ext_method *m = r->m;
  if (!m->out_tensor || !m->meta || !inner->vt->kernel_launch ||
      atomic_load_explicit(&ncubes, memory_order_relaxed) >= BXFU_CUBE_CAP)
    return;
  bext_ext_slot sl[BEXT_EXT_MAX_SLOTS];
  int n = m->in_slots(args, sl);
  if (n < 1 || n > BXR_MAX_INPUTS || (w->nsc = plain_scalars(m, args, w->sc)) < 0) return;
  /* held by the watch: the implementation cannot reuse them in place, so
   * a binding that is one of them holds the call's input value */
  for (int k = 0; k < n; k++) w->in[k] = bext_retain(*sl[k].at);
  w->nin = n;
  w->on = true;
  w->prev = bxr_launch_watch;
  bxr_launch_watch = &w->w;
}

/* The learned fact of a launch the watch saw, its scalar parameters not
 * yet bound, or NULL when the call was not one elementwise launch over
 * its inputs into its output. */
static struct bxfu_cube *judge(const struct bxfu_watch *w, const struct bxfu_rec *r, const struct bext_device *inner,
                               const bext_tensor *out) {
  const struct bxr_launch_watch *lw = &w->w;
  if (lw->n != 1 || lw->nbind > BXR_WATCH_BINDINGS || !out || !bxr_is_contiguous(out)) return NULL;
  const struct bxk_kernel *ir = bxr_kernel_src_ir(lw->src);
  int o;
  const struct bxk_inst *guard;
  if (!ir || (uint32_t)lw->nbind != ir->nbind || (uint32_t)lw->nscalar != ir->nscalar || !pointwise(ir, &o, &guard) ||
      lw->bind[o] != out)
    return NULL;
  const bext_grid *gd = &lw->grid;
  uint64_t units = (uint64_t)gd->cube_count[0] * gd->cube_dim[0], numel = (uint64_t)bxr_numel(out->rank, out->shape);
  if (gd->cube_count[1] != 1 || gd->cube_count[2] != 1 || gd->cube_dim[1] != 1 || gd->cube_dim[2] != 1 || !numel ||
      (guard ? units < numel : units != numel))
    return NULL;
  struct bxfu_cube *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  for (int b = 0; b < lw->nbind; b++) {
    c->slot_of[b] = -1;
    for (int k = 0; k < w->nin && b != o && c->slot_of[b] < 0; k++)
      if (lw->bind[b] == w->in[k]) c->slot_of[b] = k;
    const bext_tensor *t = lw->bind[b];
    if (b != o && (c->slot_of[b] < 0 || !bxr_is_contiguous(t) || !bxr_same_shape(t->rank, t->shape, out->rank, out->shape)))
      return free(c), NULL;
  }
  c->nscal = (int)ir->nscalar;   /* bound by the caller: new (bind) or pending (confirm) */
  c->m = r->m;
  c->inner = inner;
  c->nin = w->nin;
  for (int k = 0; k < w->nin; k++) c->in[k] = w->in[k]->spec;
  c->out = out->spec;
  c->src = lw->src;
  c->ir = ir;
  c->guard = guard;
  return c;
}

/* The entry for (m, inner, in specs), or NULL; cube_lock held. */
static struct bxfu_cube *lookup(const bext_ext_method *m, const struct bext_device *inner, int nin,
                                const bext_spec *const *in) {
  for (struct bxfu_cube *c = cubes; c; c = c->next) {
    if (c->m != m || c->inner != inner || c->nin != nin) continue;
    bool eq = true;
    for (int k = 0; k < nin && eq; k++) eq = bxr_same_spec(&c->in[k], in[k]);
    if (eq) return c;
  }
  return NULL;
}

/* Whether a and b, two values of a kernel scalar of IR type t, are
 * different values that also prove something: a float parameter that
 * followed its argument from 0 to -0, or to an infinity or NaN, may be
 * `b * 2` (all fixed points of scaling), so those confirm nothing. */
static bool another_value(unsigned t, const bext_kernel_scalar *a, const bext_kernel_scalar *b) {
  if (t == BXK_F32) return isfinite(a->f32) && isfinite(b->f32) && a->f32 != b->f32;
  if (t == BXK_F64) return isfinite(a->f64) && isfinite(b->f64) && a->f64 != b->f64;
  return memcmp(a, b, (bxk_type_bits(t) + 7) / 8) != 0;
}

/* A first sight of c (new, unlinked): its parameters bound to the call's
 * scalars, pending until confirmed (trusted at once without
 * parameters); false when a parameter holds no argument of the call, or
 * a value two share (which one was passed is unknown): nothing learned. */
static bool bind(struct bxfu_cube *c, const struct bxfu_watch *w) {
  for (int q = 0; q < c->nscal; q++) {
    if ((c->arg_of[q] = bound_scalar(w, c->ir->scalar[q], &w->w.scalar[q])) < 0) return false;
    c->first[q] = w->w.scalar[q];
  }
  c->state = c->nscal ? CUBE_PENDING : CUBE_TRUSTED;
  return true;
}

/* A later watched call of pending entry e, which launched c (NULL: not
 * one elementwise launch): confirms or contradicts e's bindings; its own
 * scalars are compared with the bound arguments directly, so two
 * arguments sharing a value here are no ambiguity.  cube_lock held. */
static void confirm(struct bxfu_cube *e, const struct bxfu_cube *c, const struct bxfu_watch *w) {
  bool same = c && c->ir == e->ir && c->guard == e->guard && bxr_same_spec(&c->out, &e->out) &&
              !memcmp(c->slot_of, e->slot_of, sizeof e->slot_of);
  for (int q = 0; same && q < e->nscal; q++) {
    unsigned t = e->ir->scalar[q];
    bext_kernel_scalar x;
    same = kernel_scalar(&w->sc[e->arg_of[q]], t, &x) && !memcmp(&x, &w->w.scalar[q], (bxk_type_bits(t) + 7) / 8);
    if (same && another_value(t, &x, &e->first[q])) e->confirmed |= 1u << q;
  }
  if (!same) e->state = CUBE_OPAQUE;
  else if (e->confirmed == (1u << e->nscal) - 1) e->state = CUBE_TRUSTED;
}

void bxfu_cube_learn(struct bxfu_watch *w, const struct bxfu_rec *r, const struct bext_device *inner, void *out,
                     bool ok) {
  if (!w->on) return;
  bxr_launch_watch = w->prev;
  /* a failed call (or metadata that disagrees) says nothing either way */
  struct bxfu_cube *c = ok ? judge(w, r, inner, *(bext_tensor **)out) : NULL;
  if (ok) {
    const bext_spec *in[BXR_MAX_INPUTS];
    for (int k = 0; k < w->nin; k++) in[k] = &w->in[k]->spec;
    pthread_mutex_lock(&cube_lock);
    struct bxfu_cube *e = lookup(r->m, inner, w->nin, in);
    if (e && e->state == CUBE_PENDING) {
      confirm(e, c, w);
    } else if (!e && c && ncubes < BXFU_CUBE_CAP && bind(c, w)) {
      c->next = cubes;
      cubes = c;   /* never freed: plans key on its address */
      ncubes++;
      c = NULL;
    }
    pthread_mutex_unlock(&cube_lock);
  }
  free(c);
  if (w->w.nbind <= BXR_WATCH_BINDINGS)   /* else the note kept none */
    for (int b = 0; b < w->w.nbind; b++) bext_release(w->w.bind[b]);
  for (int k = 0; k < w->nin; k++) bext_release(w->in[k]);
}

const struct bxfu_cube *bxfu_cube_of(const struct bxfu_rec *r, const struct bext_device *inner) {
  if (r->kind != BXFU_EXT || !r->n_in || !r->m->out_tensor) return NULL;
  const bext_spec *in[BXR_MAX_INPUTS];
  for (int k = 0; k < r->n_in; k++) in[k] = &r->in[k]->spec;
  pthread_mutex_lock(&cube_lock);
  const struct bxfu_cube *c = lookup(r->m, inner, r->n_in, in);
  if (c && c->state != CUBE_TRUSTED) c = NULL;   /* pending or contradicted: opaque */
  pthread_mutex_unlock(&cube_lock);
  /* the metadata published the output the kernel computes (checked when
   * it was learned; metadata depends on the specs alone) */
  return c && bxr_same_spec(&c->out, &r->out) ? c : NULL;
}

/* ------------------------------------------------------------- inlining */

struct inl {
  const struct bxfu_cube *c;
  bxk_val *vmap;               /* the kernel's values -> the group kernel's */
  int *lmap;                   /* its locals -> the group kernel's */
  const bxk_val *in;           /* the member's inputs at this element */
  bxk_val idx, res;
  int scal;                    /* its scalar 0 is the group kernel's scalar scal */
};

static void inl_block(struct inl *s, struct bxk_builder *b, const struct bxk_block *blk) {
  for (const struct bxk_inst *i = blk->first; i; i = i->next) {
    bxk_val *r = &s->vmap[i->res];   /* vmap[0] absorbs instructions without a value */
    const bxk_val *a = i->arg;
    struct bxk_block *t, *e;
    struct bxk_builder bt, be;
    switch (i->op) {
    case BXK_OP_TOPO: *r = s->idx; break;   /* ABSOLUTE_POS is the element's index */
    case BXK_OP_LEN: *r = bxk_const_i(b, BXK_U32, bxr_numel(s->c->out.rank, s->c->out.shape)); break;
    case BXK_OP_LOAD: *r = s->in[s->c->slot_of[i->imm.u]]; break;
    case BXK_OP_SCALAR: *r = bxk_scalar(b, s->scal + (int)i->imm.u); break;   /* filled per call (run_fused) */
    case BXK_OP_STORE: s->res = s->vmap[a[1]]; break;
    case BXK_OP_GET: *r = bxk_get(b, s->lmap[i->imm.u]); break;
    case BXK_OP_SET: bxk_set(b, s->lmap[i->imm.u], s->vmap[a[0]]); break;
    case BXK_OP_IF:
      if (i == s->c->guard) {   /* always true at an element of the output */
        inl_block(s, b, i->blk[0]);
        break;
      }
      bxk_if(b, s->vmap[a[0]], &t, &e);
      bt = bxk_builder_at(b->k, t);
      be = bxk_builder_at(b->k, e);
      inl_block(s, &bt, i->blk[0]);
      inl_block(s, &be, i->blk[1]);
      break;
    case BXK_OP_FOR:
      *r = bxk_for(b, s->vmap[a[0]], s->vmap[a[1]], s->vmap[a[2]], &t);
      bt = bxk_builder_at(b->k, t);
      inl_block(s, &bt, i->blk[0]);
      break;
    case BXK_OP_LOOP:
      bxk_loop(b, &t);
      bt = bxk_builder_at(b->k, t);
      inl_block(s, &bt, i->blk[0]);
      break;
    case BXK_OP_BREAK: bxk_break(b); break;
    case BXK_OP_CONTINUE: bxk_continue(b); break;
    default: {   /* constants, arithmetic, comparisons, math, select, cast */
      struct bxk_inst *n = bxk_raw(b, i->op, i->type, 0, s->vmap[a[0]], s->vmap[a[1]], s->vmap[a[2]], i->imm);
      *r = n ? n->res : 0;
    }
    }
    s->vmap[0] = 0;
  }
}

bxk_val bxfu_cube_inline(struct bxk_builder *b, const struct bxfu_cube *c, const bxk_val *in, bxk_val idx, int scal) {
  const struct bxk_kernel *ir = c->ir;
  struct inl s = {c, calloc((size_t)ir->nval + 1, sizeof *s.vmap), malloc(((size_t)ir->nlocal + 1) * sizeof *s.lmap),
                  in, idx, 0, scal};
  if (!s.vmap || !s.lmap) {
    free(s.vmap);
    free(s.lmap);
    b->k->oom = true;   /* the group is dropped: it runs unfused */
    return 0;
  }
  /* locals start at zero in every unit; here at every element (the body
   * may be inlined inside a reduction's loop) */
  for (uint32_t l = 0; l < ir->nlocal; l++) {
    enum bxk_type t = ir->local[l];
    s.lmap[l] = bxk_add_local(b->k, t);
    bxk_set(b, s.lmap[l], bxk_type_is_float(t) ? bxk_const_f(b, t, 0.0) : bxk_const_i(b, t, 0));
  }
  inl_block(&s, b, &ir->body);
  free(s.vmap);
  free(s.lmap);
  return s.res;
}
