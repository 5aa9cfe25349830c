/* autodiff.c — the "+autodiff" decorator: a device over any inner device
 * whose tensors are opaque wrappers holding the inner tensor and a node of
 * the autodiff graph.  Every core op forwards to the inner device (the
 * count-layer pattern, docs/runtime.md "Writing a decorator") and, when an
 * input is tracked, records a node for the backward rule of its opcode
 * (autodiff_rules.c).  Also the public autodiff API of bext.h:
 * bext_require_grad, bext_is_tracked, bext_detach, bext_backward,
 * bext_grad, bext_grads_free.
 *
 * Why reference-counted nodes: Burn's most reported autodiff bug is a
 * graph that outlives its tensors.  Here a node lives exactly as long as
 * a wrapper or a child node points at it, so dropping the tensors drops
 * the graph, with or without backward.  Why backward walks the graph in
 * an order given by its shape alone (collect): merged graphs, even ones
 * built on several threads at once, then run the same steps in the same
 * order on every run (no hash, address or creation order), which makes
 * gradients bit-identical across runs.
 *
 * On +autodiff(balanced) devices memory-bound nodes keep less and
 * backward recomputes what they dropped ("Balanced checkpointing" below,
 * "lazy values" before bext_backward). */
#include "autodiff.h"

#include <stdio.h>   /* snprintf */
#include <string.h>

/* ------------------------------------------------------------------ nodes */

/* A custom node's part (bext_autodiff_record), in the node's block. */
struct bxad_custom {
  bext_backward_fn backward;
  void *state;
  void (*state_free)(void *);
  char name[48];
};

/* A node with room for n_in inputs and n_saved saved tensors: the inline
 * arrays for a core op or a leaf, arrays past the struct (and the custom
 * part) for BXAD_CUSTOM. */
static struct bxad_node *node_new(int code, int n_in, int n_saved) {
  struct bxr_hook h = bxr_hook_now();
  bool custom = code == BXAD_CUSTOM;
  size_t sz = sizeof(struct bxad_node);
  if (custom)
    sz += sizeof(struct bxad_custom) + (size_t)n_in * (sizeof(bext_spec) + sizeof(struct bxad_node *)) +
          (size_t)n_saved * sizeof(bext_tensor *);
  struct bxad_node *n = bxr_alloc_from(h, sz);
  if (!n) return NULL;
  memset(n, 0, sz);
  atomic_init(&n->refcount, 1);
  n->hook = h;
  n->bytes = sz;
  n->code = code;
  n->n_in = n_in;
  n->n_saved = n_saved;
  if (custom) {
    /* struct, custom part, specs, parents, saved: each size a multiple of
     * the next one's alignment (8) */
    n->custom = (struct bxad_custom *)(n + 1);
    n->in = (bext_spec *)(n->custom + 1);
    n->parent = (struct bxad_node **)(n->in + n_in);
    n->saved = (bext_tensor **)(n->parent + n_in);
  } else {
    BXR_ASSERT(n_in <= BXR_MAX_INPUTS && n_saved <= BXR_MAX_INPUTS);
    n->in = n->in_buf;
    n->parent = n->parent_buf;
    n->saved = n->saved_buf;
  }
  return n;
}

static struct bxad_node *node_retain(struct bxad_node *n) {
  if (n) atomic_fetch_add_explicit(&n->refcount, 1, memory_order_relaxed);
  return n;
}

/* Drops a reference; a node reaching zero drops its parents in turn,
 * through a work list rather than recursion (a 100k-op chain must not
 * overflow the stack). */
static void node_release(struct bxad_node *n) {
  struct bxad_node *todo = NULL;
  if (n && atomic_fetch_sub_explicit(&n->refcount, 1, memory_order_acq_rel) == 1) {
    n->next_free = NULL;
    todo = n;
  }
  while (todo) {
    struct bxad_node *d = todo;
    todo = d->next_free;
    for (int i = 0; i < d->n_in; i++) {
      struct bxad_node *p = d->parent[i];
      if (p && atomic_fetch_sub_explicit(&p->refcount, 1, memory_order_acq_rel) == 1) {
        p->next_free = todo;
        todo = p;
      }
    }
    for (int i = 0; i < d->n_saved; i++) bext_release(d->saved[i]);
    bext_release(d->saved_out);
    if (d->custom && d->custom->state_free) d->custom->state_free(d->custom->state);
    bxr_free_to(d->hook, d, d->bytes);
  }
}

/* -------------------------------------------------------------- wrappers */

/* The opaque storage's priv: the inner tensor and the node (NULL: an
 * untracked tensor, a constant). */
struct bxad_priv {
  bext_tensor *inner;
  struct bxad_node *node;
  struct bxr_hook hook;
};

static void priv_free(void *p_) {
  struct bxad_priv *p = p_;
  bext_release(p->inner);
  node_release(p->node);
  bxr_free_to(p->hook, p, sizeof *p);
}

static inline struct bxad_priv *priv_of(const bext_tensor *t) { return t->storage->priv; }

/* A handle on dev holding inner and node (both taken over); NULL + error. */
static bext_tensor *wrap(struct bext_device *dev, bext_tensor *inner, struct bxad_node *node) {
  if (!inner) {
    node_release(node);
    return NULL;
  }
  struct bxr_hook h = bxr_hook_now();
  struct bxad_priv *p = bxr_alloc_from(h, sizeof *p);
  if (!p) {
    bext_release(inner);
    node_release(node);
    return NULL;
  }
  p->inner = inner;
  p->node = node;
  p->hook = h;
  return bxr_tensor_new_opaque(dev, inner->dtype, inner->rank, inner->shape, p, priv_free);
}

/* The inner tensor of a wrapper, as a new reference; a uniquely held
 * wrapper gives its reference up, so the inner backend may still reuse
 * the buffer in place (a rule that needs it retained it first). */
static bext_tensor *unwrap(bext_tensor *t) {
  struct bxad_priv *p = priv_of(t);
  if (bxr_is_unique(t)) {
    bext_tensor *in = p->inner;
    p->inner = NULL;
    return in;
  }
  return bext_retain(p->inner);
}

static bool is_float(bext_dtype dt) { return (1u << bxr_dtype_kind(dt)) & BXR_KF; }

/* ------------------------------------------------------------ the vtable */

/* A tracked cat of more inputs than a node holds (BXR_MAX_INPUTS) is
 * recorded as a tree of cats of at most that many: the same values, a
 * node per cat, each with cat's rule; the copies grow with the tree's
 * depth (log base BXR_MAX_INPUTS of the count).  The op's wrappers stay
 * the caller's: the sub-cats take new references. */
static bext_tensor *cat_tree(struct bxr_op *op) {
  int n = op->n_in, k = (n + BXR_MAX_INPUTS - 1) / BXR_MAX_INPUTS;
  bext_tensor **parts = bxr_alloc((size_t)k * sizeof *parts);
  if (!parts) return NULL;
  bool ok = true;
  for (int j = 0; j < k; j++) {
    int lo = j * BXR_MAX_INPUTS, cnt = n - lo < BXR_MAX_INPUTS ? n - lo : BXR_MAX_INPUTS;
    bext_tensor *grp[BXR_MAX_INPUTS];
    parts[j] = NULL;
    if (!ok) continue;
    for (int i = 0; i < cnt; i++) grp[i] = bext_retain(op->in[lo + i]);
    parts[j] = cnt == 1 ? grp[0] : bext_cat(grp, cnt, op->at.dim);
    ok = parts[j] != NULL;
  }
  bext_tensor *res = NULL;
  if (ok) res = bext_cat(parts, k, op->at.dim);
  else
    for (int j = 0; j < k; j++) bext_release(parts[j]);
  bxr_free(parts, (size_t)k * sizeof *parts);
  return res;
}

/* Balanced checkpointing (+autodiff(balanced)), after Burn's
 * BalancedCheckpointing: a node of a memory-bound op (the row's recompute
 * flag) is recomputable, so it keeps no reference to a value a
 * recomputable parent can give back, and backward re-runs its op when a
 * rule needs its output (bext_backward, "lazy values").  Compute-bound
 * ops, leaves and custom nodes are checkpoints: their children keep their
 * outputs, as under none.  bext's addition to Burn's scheme is the depth
 * bound (BXAD_MAX_DEPTH, autodiff.h): without it, a long elementwise chain
 * would recompute from its leaf, and holding the recomputed values would
 * bring the peak back. */
static void plan_recompute(struct bxad_node *n, const struct bxad_rule *r, bool balanced) {
  if (!balanced || !r->recompute) return;
  int depth = 0;
  for (int i = 0; i < n->n_in; i++)
    if (n->parent[i] && n->parent[i]->recompute && n->parent[i]->depth > depth) depth = n->parent[i]->depth;
  if (depth + 1 > BXAD_MAX_DEPTH) return;  /* a checkpoint: the chain restarts here */
  n->recompute = true;
  n->depth = (unsigned char)(depth + 1);
}

/* Whether node n keeps input i.  Under none: what its rule reads.  Under
 * balanced, a recomputable node also needs every input to re-run its op;
 * either way an input a recomputable parent can give back is not kept,
 * and a constant (no parent) always is, since nothing can recompute it. */
static bool keeps_input(const struct bxad_node *n, const struct bxad_rule *r, int i) {
  const struct bxad_node *p = n->parent[i];
  bool needed = n->recompute || (r->save & BXAD_SAVE_IN(i));
  return needed && !(p && p->recompute);
}

static bext_tensor *bxad_exec(struct bxr_op *op) {
  struct bext_device *dev = op->device;
  const struct bxad_rule *r = &bxad_rules[op->code];
  bool tracked = false;
  for (int i = 0; i < op->n_in; i++) tracked |= priv_of(op->in[i])->node != NULL;
  if (tracked && r->kind != BXAD_DIFF && r->kind != BXAD_NO_GRAD) {
    bxr_error("%s: no autograd formula for op '%s' yet (tracked input)",
              op->api ? op->api : bxr_op_name(op->code), bxr_op_name(op->code));
    return NULL;
  }
  if (tracked && op->code == BXR_OP_CAT && op->n_in > BXR_MAX_INPUTS && is_float(op->out.dtype))
    return cat_tree(op);
  /* A float output of a differentiable op with a tracked input is
   * recorded; everything else (cast to int, no-gradient ops) is a
   * constant, which is the right gradient for it. */
  struct bxad_node *node = NULL;
  if (tracked && r->kind == BXAD_DIFF && is_float(op->out.dtype)) {
    BXR_ASSERT(op->n_in <= BXR_MAX_INPUTS);
    if (!(node = node_new((int)op->code, op->n_in, op->n_in))) return NULL;
    memcpy(node->sc, op->sc, sizeof node->sc);
    node->at = op->at;
    node->out = op->out;
    for (int i = 0; i < op->n_in; i++) {
      node->in[i] = op->in[i]->spec;
      node->parent[i] = node_retain(priv_of(op->in[i])->node);
    }
    plan_recompute(node, r, dev->strategy == BEXT_AUTODIFF_BALANCED);
    /* retained before dispatch: the inner backend then sees them shared
     * and never overwrites them in place */
    for (int i = 0; i < op->n_in; i++)
      if (keeps_input(node, r, i)) node->saved[i] = bext_retain(priv_of(op->in[i])->inner);
  }
  struct bxr_op in = *op;
  in.device = dev->inner;
  in.in = in.inbuf;
  if (op->n_in > BXR_MAX_INPUTS && !(in.in = bxr_alloc((size_t)op->n_in * sizeof *in.in))) {
    node_release(node);
    return NULL;
  }
  for (int i = 0; i < op->n_in; i++) in.in[i] = unwrap(op->in[i]);
  bext_tensor *res = bxr_dispatch(&in);  /* consumes the inner inputs */
  if (in.in != in.inbuf) bxr_free(in.in, (size_t)op->n_in * sizeof *in.in);
  if (res && node && (r->save & BXAD_SAVE_OUT) && !node->recompute) node->saved_out = bext_retain(res);
  return wrap(dev, res, node);
}

static bext_tensor *bxad_from_data(struct bext_device *dev, bext_dtype dt, int rank, const int64_t *shape,
                                   const void *src) {
  return wrap(dev, dev->inner->vt->from_data(dev->inner, dt, rank, shape, src), NULL);
}

static bool bxad_read(const bext_tensor *t, void *dst) {
  const bext_tensor *in = priv_of(t)->inner;
  return in->device->vt->read(in, dst);
}

/* The call one layer down (bxr_ext_forward), for calls without a tracked
 * input: the inner device's own kernels, outputs untracked. */
static bext_tensor *wrap_untracked(struct bext_device *dev, bext_tensor *inner) { return wrap(dev, inner, NULL); }
static bool forward_inner(struct bext_device *dev, bext_ext_call *call) {
  return bxr_ext_forward(dev, call, unwrap, wrap_untracked);
}

/* The inputs' autodiff contexts merge (language.md §3): untracked inputs
 * are constants, tracked ones must share one checkpointing strategy.
 * Strategies of one stack route together (device.c), so a call may bring
 * `flex+autodiff` and `flex+autodiff(balanced)` here.  Tracked inputs on
 * two strategies: which one the result would follow is not the runtime's
 * to guess, so that is an error naming the method, the two arguments and
 * their strategies.  Untracked inputs on a sibling strategy are moved
 * (slot swapped, the call owns one reference of each) to the tracked
 * inputs' device, or dev when none is tracked, so that every route below
 * (a custom node, the default body's ops, the inner arm) sees one device.
 * *tracked: whether any input is tracked. */
static bool merge_contexts(struct bext_device *dev, const bext_ext_method *m, const bext_ext_slot *s, int n,
                           bool *tracked) {
  int first = -1;
  for (int i = 0; i < n; i++) {
    const bext_tensor *t = *s[i].at;
    if (!t || t->device->vt != &bxad_backend || !priv_of(t)->node) continue;
    if (first < 0) {
      first = i;
      continue;
    }
    const struct bext_device *d0 = (*s[first].at)->device, *d = t->device;
    if (d->strategy != d0->strategy)
      return bxr_error("%s: tracked inputs must share one checkpointing strategy: `%s` is on %s (strategy %s), "
                       "`%s` on %s (strategy %s)",
                       m->what, s[first].name, d0->name, bxr_strategy_name(d0->strategy), s[i].name, d->name,
                       bxr_strategy_name(d->strategy));
  }
  *tracked = first >= 0;
  struct bext_device *target = first >= 0 ? (*s[first].at)->device : dev;
  for (int i = 0; i < n; i++) {
    bext_tensor *t = *s[i].at;
    if (!t || t->device == target || t->device->vt != &bxad_backend) continue;
    bext_tensor *moved = wrap(target, bext_retain(priv_of(t)->inner), NULL);
    if (!moved) return false;
    *s[i].at = moved;
    bext_release(t);
  }
  return true;
}

/* Extension calls (docs/codegen.md "Autodiff"): after the contexts merge,
 * the user's (or the #[backward]-generated) _autodiff implementation when
 * there is one; else, with no tracked input, the inner device's arm; else
 * the default body run on THIS device, whose core ops record nodes, so it
 * is differentiable for free.  A method with none of these fails naming
 * the ways to give it a gradient. */
static bool bxad_ext_exec(struct bext_device *dev, bext_ext_call *call) {
  const bext_ext_method *m = call->m;
  bext_ext_slot s[BEXT_EXT_MAX_SLOTS];
  int n = m->in_slots(call->args, s);
  bool tracked = false;
  if (!merge_contexts(dev, m, s, n, &tracked)) return false;
  if (m->layer_impl[BEXT_LAYER_AUTODIFF]) return m->invoke(m->layer_impl[BEXT_LAYER_AUTODIFF], call->args, call->out);
  if (!tracked && bxr_ext_has_arm(m, dev->inner)) return forward_inner(dev, call);
  if (m->fallback) return m->invoke(m->fallback, call->args, call->out);
  return bxr_error("%s: no autodiff route on %s: give the method a default body, an `_autodiff` "
                   "implementation, or #[backward] formulas",
                   m->what, dev->name);
}

const struct bxr_backend bxad_backend = {
    .api_version = BXR_BACKEND_API_VERSION,
    .name = "autodiff",
    .host_memory = false,     /* its storage holds the inner tensor */
    .from_data = bxad_from_data,
    .read = bxad_read,
    .exec = {
#define BXAD_X_(E, n, nin, k0, k1, k2, ns, at, inf) [BXR_OP_##E] = bxad_exec,
        BXR_OP_TABLE(BXAD_X_)
#undef BXAD_X_
    },
    .ext_exec = bxad_ext_exec,
};

/* ------------------------------------------------------------ public API */

static bool on_autodiff(const bext_tensor *t) { return t->device->vt == &bxad_backend; }

bext_tensor *bext_require_grad(bext_tensor *t) {
  if (!t) {
    bxr_error_null("bext_require_grad: the tensor is NULL");
    return NULL;
  }
  bool ok = on_autodiff(t) ||
            bxr_error("bext_require_grad: the tensor is on device '%s', which has no +autodiff layer "
                      "(make it on '%s+autodiff')", t->device->name, t->device->name);
  ok = ok && (is_float(t->dtype) ||
              bxr_error("bext_require_grad: gradients need a float dtype, the tensor is %s",
                        bext_dtype_name(t->dtype)));
  struct bxad_node *leaf = ok ? node_new(BXAD_LEAF, 0, 0) : NULL;
  bext_tensor *r = NULL;
  if (leaf) {
    leaf->out = t->spec;
    r = wrap(t->device, bext_retain(priv_of(t)->inner), leaf);
  }
  bext_release(t);
  return r;
}

bext_tensor *bxad_take_inner(bext_tensor *t, bool *tracked) {
  *tracked = priv_of(t)->node != NULL;
  bext_tensor *in = unwrap(t);
  bext_release(t);
  return in;
}

const bext_tensor *bxad_inner(const bext_tensor *t) { return priv_of(t)->inner; }

bext_tensor *bxad_wrap(struct bext_device *dev, bext_tensor *inner, bool leaf) {
  struct bxad_node *node = NULL;
  if (inner && leaf) {
    if (!(node = node_new(BXAD_LEAF, 0, 0))) {
      bext_release(inner);
      return NULL;
    }
    node->out = inner->spec;
  }
  return wrap(dev, inner, node);
}

bool bext_is_tracked(const bext_tensor *t) { return t && on_autodiff(t) && priv_of(t)->node; }

bext_tensor *bext_detach(bext_tensor *t) {
  if (!t) {
    bxr_error_null("bext_detach: the tensor is NULL");
    return NULL;
  }
  if (!bext_is_tracked(t)) return t;
  bext_tensor *r = wrap(t->device, bext_retain(priv_of(t)->inner), NULL);
  bext_release(t);
  return r;
}

struct bext_grads {
  struct bxr_hook hook;
  size_t bytes;               /* as allocated */
  struct bext_device *dev;
  int n;
  struct {
    struct bxad_node *node;   /* retained: the key stays valid */
    bext_tensor *grad;        /* inner */
  } e[];
};

/* Scratch arrays of one backward run: through the runtime's allocation
 * hook like everything else (bxr_alloc; freed before backward returns). */
static void *scratch_grow(void *p, size_t old_bytes, size_t new_bytes) {
  void *q = bxr_alloc(new_bytes);
  if (q && p) memcpy(q, p, old_bytes);
  if (p) bxr_free(p, old_bytes);
  return q;
}

/* Node -> slot, open addressing on the pointer. */
struct nodeset {
  size_t cap;                 /* power of two */
  struct bxad_node **key;
  int *val;                   /* slot in the sorted order */
};

static size_t ns_hash(const struct bxad_node *n, size_t cap) {
  return (size_t)(((uintptr_t)n >> 4) * 0x9E3779B97F4A7C15ull) & (cap - 1);
}
/* Slot of n, or where it would go. */
static size_t ns_find(const struct nodeset *s, const struct bxad_node *n) {
  size_t h = ns_hash(n, s->cap);
  while (s->key[h] && s->key[h] != n) h = (h + 1) & (s->cap - 1);
  return h;
}
static void ns_free(struct nodeset *s) {
  if (s->key) bxr_free(s->key, s->cap * sizeof *s->key);
  if (s->val) bxr_free(s->val, s->cap * sizeof *s->val);
  s->key = NULL;
  s->val = NULL;
}
/* Doubles the table (keeps the load under one half). */
static bool ns_grow(struct nodeset *s) {
  struct nodeset o = *s;
  s->cap *= 4;
  if (!(s->key = bxr_calloc(s->cap * sizeof *s->key))) {
    *s = o;
    return false;
  }
  for (size_t j = 0; j < o.cap; j++)
    if (o.key[j]) s->key[ns_find(s, o.key[j])] = o.key[j];
  bxr_free(o.key, o.cap * sizeof *o.key);
  return true;
}

/* Every node reachable from root, children before parents (*count of
 * them, *cap_out: the array's capacity for bxr_free); set maps each to
 * its position.  The order is the reverse postorder of a depth-first walk
 * from root that takes each node's inputs in order: a topological order
 * (a node finishes after every parent it reaches) fixed by the graph's
 * shape alone.  Creation order or addresses would not do: two graphs
 * built on two threads interleave their nodes differently on every run,
 * and the order of the steps is the order in which a shared node's
 * gradient terms are summed, so only a shape-given order makes merged
 * graphs' gradients the same bits on every run (Burn's hash-ordered
 * merges were not).  Iterative: a 100k-op chain is 100k deep.  NULL +
 * error when out of memory. */
static struct bxad_node **collect(struct bxad_node *root, int *count, int *cap_out, struct nodeset *set) {
  struct frame {
    struct bxad_node *v;
    int next;                 /* the next input to walk */
  };
  int cap = 64, n = 0, top = 0, scap = 64;
  struct bxad_node **all = bxr_alloc((size_t)cap * sizeof *all);
  struct frame *stack = bxr_alloc((size_t)scap * sizeof *stack);
  set->cap = 256;
  set->key = bxr_calloc(set->cap * sizeof *set->key);
  set->val = NULL;
  if (!all || !stack || !set->key) goto oom;
  stack[top++] = (struct frame){root, 0};
  set->key[ns_find(set, root)] = root;
  while (top) {
    struct frame *f = &stack[top - 1];
    if (f->next < f->v->n_in) {
      struct bxad_node *p = f->v->parent[f->next++];
      if (!p || set->key[ns_find(set, p)]) continue;
      if ((size_t)(n + top + 1) * 2 > set->cap && !ns_grow(set)) goto oom;
      set->key[ns_find(set, p)] = p;
      if (top == scap) {
        if (!(stack = scratch_grow(stack, (size_t)scap * sizeof *stack, (size_t)scap * 2 * sizeof *stack)))
          goto oom;
        scap *= 2;
      }
      stack[top++] = (struct frame){p, 0};
      continue;
    }
    if (n == cap) {  /* every input walked: v is done */
      if (!(all = scratch_grow(all, (size_t)cap * sizeof *all, (size_t)cap * 2 * sizeof *all))) goto oom;
      cap *= 2;
    }
    all[n++] = f->v;
    top--;
  }
  bxr_free(stack, (size_t)scap * sizeof *stack);
  stack = NULL;
  for (int i = 0, j = n - 1; i < j; i++, j--) {
    struct bxad_node *t = all[i];
    all[i] = all[j];
    all[j] = t;
  }
  if (!(set->val = bxr_alloc(set->cap * sizeof *set->val))) goto oom;
  for (int i = 0; i < n; i++) set->val[ns_find(set, all[i])] = i;
  *count = n;
  *cap_out = cap;
  return all;
oom:
  if (stack) bxr_free(stack, (size_t)scap * sizeof *stack);
  if (all) bxr_free(all, (size_t)cap * sizeof *all);
  ns_free(set);
  return NULL;  /* bxr_alloc set "out of memory" */
}

/* Runs custom node v's backward into gin and checks what it gave: a
 * gradient of input k's spec on the inner device for every input that
 * needs one.  false + error naming the node (gin's entries are the
 * caller's to release either way). */
static bool custom_backward(const struct bxad_node *v, bext_tensor *g, bext_tensor **gin,
                            const struct bext_device *inner) {
  const struct bxad_custom *c = v->custom;
  bool needs[BEXT_AUTODIFF_MAX_INPUTS];
  for (int k = 0; k < v->n_in; k++) needs[k] = v->parent[k] != NULL;
  uint64_t before = bext_error_count();
  if (!c->backward(c->state, g, v->saved, needs, gin)) {
    if (bext_error_count() == before)
      bxr_error("bext_backward: the backward of custom node '%s' failed without setting an error", c->name);
    return false;
  }
  for (int k = 0; k < v->n_in; k++) {
    if (!needs[k]) {
      bext_release(gin[k]);
      gin[k] = NULL;
      continue;
    }
    if (!gin[k])
      return bxr_error("bext_backward: custom node '%s' gave no gradient for input %d, which needs one", c->name, k);
    if (gin[k]->device != inner || gin[k]->dtype != v->in[k].dtype ||
        !bxr_same_shape(gin[k]->rank, gin[k]->shape, v->in[k].rank, v->in[k].shape)) {
      char got[120], want[120];
      return bxr_error("bext_backward: custom node '%s' gave input %d a gradient %s on %s, expected %s on %s", c->name,
                       k, bxr_describe(gin[k], got, sizeof got), gin[k]->device->name,
                       bxr_describe_spec(&v->in[k], want, sizeof want), inner->name);
    }
  }
  return true;
}

/* ---------------------------------------------------------- lazy values
 * A balanced graph's rules may read values no node kept: the output of a
 * recomputable node (its own rule's saved_out, or saved[k] of a child).
 * Backward re-runs those ops on the inner device, from the inputs the
 * recomputable node kept and, recursively (at most BXAD_MAX_DEPTH deep),
 * from its recomputable parents' values: the same ops on the same values
 * as the forward pass, so the gradients are bit-identical to none's.
 *
 * Each recomputed value is cached in val[] (indexed like order[]) with the
 * count of reads still to come, planned before the first rule runs; the
 * last read takes the cache's reference, so a value lives only while a
 * step still to run needs it (and a stepping stone of a recomputation dies
 * as soon as the next op has read it).  In backward's order (children
 * first) every reader of a value runs before its node, so a value still cached when
 * its own node has run (its rule skipped) is dropped there. */
struct lazy {
  struct bxad_node **order;
  const struct nodeset *set;
  bext_tensor **val;          /* [n] recomputed outputs, NULL: none cached */
  int *reads;                 /* [n] reads still to come */
};

static int pos_of(const struct lazy *lz, const struct bxad_node *u) { return lz->set->val[ns_find(lz->set, u)]; }

/* Whether v's rule reads input k, or its output (k == -1), from a value
 * no node kept. */
static bool reads_lazy(const struct bxad_node *v, int k) {
  unsigned save = bxad_rules[v->code].save;
  if (k < 0) return (save & BXAD_SAVE_OUT) && !v->saved_out;
  return (save & BXAD_SAVE_IN(k)) && !v->saved[k] && v->parent[k];
}

/* The reads of every lazy value, children before parents: v's own rule,
 * then, when v's value will be computed at all, re-running v reads each
 * input it did not keep. */
static void plan_reads(struct lazy *lz, int n) {
  for (int i = 0; i < n; i++) {
    const struct bxad_node *v = lz->order[i];
    if (v->code < 0) continue;  /* leaves and custom nodes read what they kept */
    if (reads_lazy(v, -1)) lz->reads[i]++;
    for (int k = 0; k < v->n_in; k++)
      if (reads_lazy(v, k)) lz->reads[pos_of(lz, v->parent[k])]++;
    if (v->recompute && lz->reads[i] > 0)
      for (int k = 0; k < v->n_in; k++)
        if (!v->saved[k] && v->parent[k]) lz->reads[pos_of(lz, v->parent[k])]++;
  }
}

static bext_tensor *lazy_take(struct lazy *lz, struct bxad_node *u);

/* u's output computed again: its op on the inputs it kept and its
 * recomputable parents' values.  NULL + error. */
static bext_tensor *recompute(struct lazy *lz, struct bxad_node *u) {
  BXR_ASSERT(u->recompute && u->code >= 0);
  struct bxr_op op = {.code = (enum bxr_opcode)u->code, .api = bxr_op_name((enum bxr_opcode)u->code),
                      .n_in = u->n_in, .at = u->at};
  op.in = op.inbuf;
  memcpy(op.sc, u->sc, sizeof op.sc);
  for (int k = 0; k < u->n_in; k++)  /* a NULL (failed) input makes dispatch fail */
    op.in[k] = u->saved[k] ? bext_retain(u->saved[k]) : lazy_take(lz, u->parent[k]);
  return bxr_dispatch(&op);
}

/* A new reference to u's output: cached, or recomputed and cached; one
 * planned read spent (the last one takes the cache's reference, so an op
 * reading it may reuse the buffer in place).  NULL + error. */
static bext_tensor *lazy_take(struct lazy *lz, struct bxad_node *u) {
  int j = pos_of(lz, u);
  if (!lz->val[j] && !(lz->val[j] = recompute(lz, u))) return NULL;
  if (lz->reads[j] > 0) lz->reads[j]--;
  if (lz->reads[j] > 0) return bext_retain(lz->val[j]);
  bext_tensor *t = lz->val[j];
  lz->val[j] = NULL;
  return t;
}

/* Runs v's rule.  On a balanced graph the values it reads that no node
 * kept are put in a shadow of v (the fields a rule reads; v itself may be
 * shared with another thread's backward, so it is never written). */
static void run_rule(struct lazy *lz, struct bxad_node *v, bext_tensor *g, bext_tensor **gin) {
  const struct bxad_rule *r = &bxad_rules[v->code];
  bool lazy = false;
  for (int k = -1; lz && k < v->n_in; k++) lazy |= reads_lazy(v, k);
  if (!lazy) {
    r->backward(v, g, gin);
    return;
  }
  struct bxad_node sh;
  memset(&sh, 0, sizeof sh);
  sh.code = v->code;
  sh.n_in = sh.n_saved = v->n_in;
  memcpy(sh.sc, v->sc, sizeof sh.sc);
  sh.at = v->at;
  sh.out = v->out;
  sh.in = v->in;
  sh.parent = v->parent;
  sh.saved = sh.saved_buf;
  bext_tensor *taken[BXR_MAX_INPUTS + 1] = {NULL};
  bool ok = true;
  for (int k = 0; k < v->n_in; k++) {
    sh.saved[k] = v->saved[k];
    if (reads_lazy(v, k)) ok &= (sh.saved[k] = taken[k] = lazy_take(lz, v->parent[k])) != NULL;
  }
  sh.saved_out = v->saved_out;
  if (reads_lazy(v, -1)) ok &= (sh.saved_out = taken[BXR_MAX_INPUTS] = lazy_take(lz, v)) != NULL;
  if (ok) r->backward(&sh, g, gin);  /* else no gradient: backward fails with the recompute's error */
  for (int k = 0; k <= BXR_MAX_INPUTS; k++) bext_release(taken[k]);
}

/* The lazy-value state of one backward run; val and reads only for a
 * graph with recomputable nodes (a none graph pays nothing).  false +
 * error when out of memory. */
static bool lazy_init(struct lazy *lz, struct bxad_node **order, int n, const struct nodeset *set) {
  *lz = (struct lazy){.order = order, .set = set};
  bool any = false;
  for (int i = 0; i < n && !any; i++) any = order[i]->recompute;
  if (!any) return true;
  lz->val = bxr_calloc((size_t)n * sizeof *lz->val);
  lz->reads = bxr_calloc((size_t)n * sizeof *lz->reads);
  if (!lz->val || !lz->reads) {
    if (lz->val) bxr_free(lz->val, (size_t)n * sizeof *lz->val);
    if (lz->reads) bxr_free(lz->reads, (size_t)n * sizeof *lz->reads);
    lz->val = NULL;
    lz->reads = NULL;
    return false;
  }
  plan_reads(lz, n);
  return true;
}

static void lazy_free(struct lazy *lz, int n) {
  if (!lz->val) return;
  for (int i = 0; i < n; i++) bext_release(lz->val[i]);
  bxr_free(lz->val, (size_t)n * sizeof *lz->val);
  bxr_free(lz->reads, (size_t)n * sizeof *lz->reads);
}

/* One backward step: node order[i]'s rule on its gradient, the input
 * gradients summed into grad[] (their parents' slots).  Its own lazy
 * value, if still cached, dies here: every reader has run. */
static bool backward_step(struct lazy *lz, int i, bext_tensor **grad, const struct nodeset *set,
                          struct bext_device *inner) {
  struct bxad_node *v = lz->order[i];
  bool ok = true;
  if (v->code != BXAD_LEAF && grad[i]) {  /* no gradient: reachable only through constants' paths */
    bext_tensor *gin[BEXT_AUTODIFF_MAX_INPUTS] = {NULL};
    if (v->code == BXAD_CUSTOM) ok = custom_backward(v, grad[i], gin, inner);
    else run_rule(lz->val ? lz : NULL, v, grad[i], gin);
    for (int k = 0; k < v->n_in && ok; k++) {
      if (!v->parent[k]) continue;
      if (!gin[k]) {
        ok = false;
        continue;
      }
      BXR_ASSERT(gin[k]->dtype == v->in[k].dtype &&
                 bxr_same_shape(gin[k]->rank, gin[k]->shape, v->in[k].rank, v->in[k].shape));
      int j = set->val[ns_find(set, v->parent[k])];
      grad[j] = grad[j] ? bext_add(grad[j], gin[k]) : gin[k];
      gin[k] = NULL;
      if (!grad[j]) ok = false;
    }
    for (int k = 0; k < v->n_in; k++) bext_release(gin[k]);
    bext_release(grad[i]);  /* interior gradients die as soon as they are spent */
    grad[i] = NULL;
  }
  if (lz->val) {
    bext_release(lz->val[i]);
    lz->val[i] = NULL;
  }
  return ok;
}

bext_grads *bext_backward(bext_tensor *loss) {
  if (!loss) {
    bxr_error_null("bext_backward: the loss is NULL");
    return NULL;
  }
  if (!on_autodiff(loss)) {
    bxr_error("bext_backward: the loss is on device '%s', which has no +autodiff layer", loss->device->name);
    return NULL;
  }
  if (loss->rank != 0) {
    char b[200];
    bxr_error("bext_backward: the loss must be a rank-0 tensor, got %s (reduce it first: bext_sum, bext_mean)",
              bxr_describe(loss, b, sizeof b));
    return NULL;
  }
  struct bxad_node *root = priv_of(loss)->node;
  if (!root) {
    bxr_error("bext_backward: the loss is not tracked (no input of it went through bext_require_grad)");
    return NULL;
  }
  struct nodeset set;
  int n = 0, ocap = 0;
  struct bxad_node **order = collect(root, &n, &ocap, &set);
  if (!order) return NULL;
  BXR_ASSERT(order[0] == root);  /* every other node is an ancestor: it finished first */
  bext_tensor **grad = bxr_calloc((size_t)n * sizeof *grad);
  bool ok = grad != NULL;
  struct bext_device *inner = loss->device->inner;
  if (ok) ok = (grad[0] = bext_ones(NULL, 0, loss->dtype, inner)) != NULL;
  struct lazy lz;
  ok = lazy_init(&lz, order, n, &set) && ok;
  for (int i = 0; i < n && ok; i++) ok = backward_step(&lz, i, grad, &set, inner);
  lazy_free(&lz, n);
  int leaves = 0;
  for (int i = 0; i < n && ok; i++) leaves += order[i]->code == BXAD_LEAF && grad[i];
  bext_grads *g = NULL;
  if (ok) {
    struct bxr_hook h = bxr_hook_now();
    size_t sz = sizeof *g + (size_t)leaves * sizeof g->e[0];
    if ((g = bxr_alloc_from(h, sz))) {
      g->hook = h;
      g->bytes = sz;
      g->dev = loss->device;
      g->n = 0;
      for (int i = 0; i < n; i++)
        if (order[i]->code == BXAD_LEAF && grad[i]) {
          g->e[g->n].node = node_retain(order[i]);
          g->e[g->n].grad = grad[i];
          grad[i] = NULL;
          g->n++;
        }
    }
  }
  if (grad) {
    for (int i = 0; i < n; i++) bext_release(grad[i]);
    bxr_free(grad, (size_t)n * sizeof *grad);
  }
  bxr_free(order, (size_t)ocap * sizeof *order);
  ns_free(&set);
  return g;
}

bext_tensor *bext_grad(const bext_grads *g, const bext_tensor *t) {
  if (!g || !t) {
    bxr_error_null("bext_grad: %s is NULL", g ? "the tensor" : "the gradients");
    return NULL;
  }
  if (!bext_is_tracked(t)) return NULL;
  const struct bxad_node *node = priv_of(t)->node;
  for (int i = 0; i < g->n; i++)
    if (g->e[i].node == node) return wrap(g->dev, bext_retain(g->e[i].grad), NULL);
  return NULL;
}

void bext_grads_free(bext_grads *g) {
  if (!g) return;
  for (int i = 0; i < g->n; i++) {
    bext_release(g->e[i].grad);
    node_release(g->e[i].node);
  }
  bxr_free_to(g->hook, g, g->bytes);
}

/* ------------------------------------------------------- custom nodes */

bext_tensor *bext_autodiff_value(const bext_tensor *t) {
  if (!t) {
    bxr_error_null("bext_autodiff_value: the tensor is NULL");
    return NULL;
  }
  return bext_retain(on_autodiff(t) ? priv_of(t)->inner : (bext_tensor *)t);
}


/* The checks of bext_autodiff_record's arguments; the autodiff device
 * (NULL: the inputs are on a plain device) in *dev_out. */
static bool record_args(const bext_custom_node *n, const bext_tensor *out, struct bext_device **dev_out) {
  const char *nm = n->name ? n->name : "(unnamed)";
  if (n->n_in < 1 || n->n_in > BEXT_AUTODIFF_MAX_INPUTS || !n->inputs)
    return bxr_error("bext_autodiff_record: node '%s': n_in is %d, expected 1..%d with an inputs array", nm, n->n_in,
                     BEXT_AUTODIFF_MAX_INPUTS);
  if (n->n_saved < 0 || n->n_saved > BEXT_AUTODIFF_MAX_INPUTS || (n->n_saved && !n->saved))
    return bxr_error("bext_autodiff_record: node '%s': n_saved is %d, expected 0..%d with a saved array", nm,
                     n->n_saved, BEXT_AUTODIFF_MAX_INPUTS);
  if (!n->backward) return bxr_error("bext_autodiff_record: node '%s' has no backward function", nm);
  struct bext_device *dev = NULL;
  int first = -1;
  for (int i = 0; i < n->n_in; i++) {
    const bext_tensor *t = n->inputs[i];
    if (!t) return bxr_error_null("bext_autodiff_record: node '%s': input %d is NULL", nm, i);
    if (i == 0) {
      dev = t->device;
      first = 0;
    } else if (t->device != dev) {
      if (on_autodiff(t) && t->device->route == dev->route)
        return bxr_error("bext_autodiff_record: node '%s': tracked inputs must share one checkpointing strategy: "
                         "input %d is on %s (strategy %s), input %d on %s (strategy %s)",
                         nm, first, dev->name, bxr_strategy_name(dev->strategy), i, t->device->name,
                         bxr_strategy_name(t->device->strategy));
      return bxr_error("bext_autodiff_record: node '%s': inputs on different devices: input 0 is on %s, input %d on %s",
                       nm, dev->name, i, t->device->name);
    }
  }
  bool ad = dev->vt == &bxad_backend;
  const struct bext_device *want = ad ? dev->inner : dev;
  const bext_tensor *o = ad && out->device == dev && !priv_of(out)->node ? priv_of(out)->inner : out;
  if (o->device != want)
    return bxr_error("bext_autodiff_record: node '%s': the output is on %s, expected %s (compute it from "
                     "bext_autodiff_value of the inputs)", nm, out->device->name, want->name);
  for (int i = 0; i < n->n_saved; i++) {
    const bext_tensor *t = n->saved[i];
    if (!t) return bxr_error_null("bext_autodiff_record: node '%s': saved tensor %d is NULL", nm, i);
    if (t->device != want && !(t->device == dev && !priv_of(t)->node))
      return bxr_error("bext_autodiff_record: node '%s': saved tensor %d is on %s, expected %s", nm, i,
                       t->device->name, want->name);
  }
  *dev_out = ad ? dev : NULL;
  return true;
}

bext_tensor *bext_autodiff_record(const bext_custom_node *n, bext_tensor *output) {
  if (!n || !output) {
    bxr_error_null("bext_autodiff_record: %s is NULL", n ? "the output" : "the node description");
    if (n && n->state_free) n->state_free(n->state);
    bext_release(output);
    return NULL;
  }
  struct bext_device *dev = NULL;
  bool ok = record_args(n, output, &dev);
  bool tracked = false;
  for (int i = 0; ok && dev && i < n->n_in; i++) tracked |= priv_of(n->inputs[i])->node != NULL;
  struct bxad_node *node = NULL;
  if (ok && tracked && is_float(output->dtype)) {
    if ((node = node_new(BXAD_CUSTOM, n->n_in, n->n_saved))) {
      struct bxad_custom *c = node->custom;
      c->backward = n->backward;
      c->state = n->state;
      c->state_free = n->state_free;
      snprintf(c->name, sizeof c->name, "%s", n->name ? n->name : "(unnamed)");
      node->out = output->spec;
      for (int i = 0; i < n->n_in; i++) {
        node->in[i] = n->inputs[i]->spec;
        node->parent[i] = node_retain(priv_of(n->inputs[i])->node);
      }
      for (int i = 0; i < n->n_saved; i++) node->saved[i] = bext_autodiff_value(n->saved[i]);
    } else if (n->state_free) {
      n->state_free(n->state);
    }
    ok = node != NULL;
  } else if (n->state_free) {
    n->state_free(n->state);  /* nothing recorded (or failed): the state is spent */
  }
  if (!ok) {
    bext_release(output);
    return NULL;
  }
  if (!dev) return output;  /* plain device: nothing to track */
  bext_tensor *inner = output->device == dev ? bext_autodiff_value(output) : bext_retain(output);
  bext_release(output);
  return wrap(dev, inner, node);
}
