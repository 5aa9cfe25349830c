/* autodiff.h — the +autodiff decorator's internals, shared by its two
 * files: the graph node and the decorator (autodiff.c) and the backward
 * rule table indexed by opcode (autodiff_rules.c).  Not a backend header:
 * nothing outside runtime/src includes it. */
#ifndef BXAD_AUTODIFF_H
#define BXAD_AUTODIFF_H

#include "backend.h"

/* One recorded op, a leaf (code BXAD_LEAF) or a custom node (BXAD_CUSTOM,
 * bext_autodiff_record).  Reference-counted by the tensors whose wrappers
 * point at it and by its children (parent[]), so a graph dies with its
 * last tensor whether or not backward ran.  Everything the rule needs is
 * copied in at record time: the descriptor's scalars and attributes
 * (normalized by inference), the input and output specs, and references
 * to the INNER tensors the rule reads (saved[], saved_out).
 *
 * On a balanced device (+autodiff(balanced)) a node of a memory-bound op
 * may be RECOMPUTABLE instead: it keeps no reference to a value another
 * recomputable node can give back, and backward re-runs the op from what
 * the node holds (code, sc, at and the inputs it did save).  depth counts
 * the ops re-run to get its output (itself included); a node that would
 * exceed BXAD_MAX_DEPTH becomes a checkpoint (recompute false, depth 0):
 * its children keep its output, as every child of a compute-bound node,
 * leaf or custom node does.  Both are set at record time and never change,
 * so other threads may read them without a lock.
 *
 * in/parent/saved point into the node's own block: at the inline arrays
 * for a core op (at most BXR_MAX_INPUTS inputs), at arrays allocated past
 * the struct for a custom node (up to BEXT_AUTODIFF_MAX_INPUTS).  A node
 * never moves, so the pointers stay valid. */
#define BXAD_LEAF (-1)
#define BXAD_CUSTOM (-2)
struct bxad_custom;
struct bxad_node {
  atomic_int refcount;
  struct bxr_hook hook;              /* the node is freed where it was allocated */
  size_t bytes;                      /* the block's size, for the hook */
  int code;                          /* enum bxr_opcode, BXAD_LEAF or BXAD_CUSTOM */
  int n_in;
  int n_saved;                       /* entries of saved[] (n_in for a core op) */
  bool recompute;                    /* balanced: backward re-runs the op for its output */
  unsigned char depth;               /* ops re-run to get the output; 0 unless recompute */
  bext_scalar sc[3];
  bext_attrs at;
  bext_spec out;
  bext_spec *in;                     /* [n_in] */
  struct bxad_node **parent;         /* [n_in]; NULL: that input is a constant */
  bext_tensor **saved;               /* [n_saved]; core ops: the inner inputs kept (autodiff.c keeps_input) */
  bext_tensor *saved_out;            /* the inner output, when the rule reads it */
  struct bxad_custom *custom;        /* BXAD_CUSTOM: the user's backward (autodiff.c) */
  struct bxad_node *next_free;       /* release's work list (no recursion on long chains) */
  bext_spec in_buf[BXR_MAX_INPUTS];
  struct bxad_node *parent_buf[BXR_MAX_INPUTS];
  bext_tensor *saved_buf[BXR_MAX_INPUTS];
};

/* What the decorator does with a tracked input of an op. */
enum bxad_kind {
  BXAD_UNLISTED = 0,  /* never in the table: a row was forgotten (the test suite checks) */
  BXAD_NOT_YET,       /* differentiable, rule not written: the forward call fails */
  BXAD_NO_GRAD,       /* output is a constant (comparisons, bool/int, argmax, random, creation) */
  BXAD_DIFF,          /* recorded; backward runs the rule */
};
#define BXAD_SAVE_IN(i) (1u << (i))
#define BXAD_SAVE_OUT 8u

/* A rule: g is the (inner) gradient of the node's output, BORROWED; it
 * fills gin[i] with a NEW inner tensor of input i's spec for every input
 * whose parent is non-NULL.  A failed op leaves NULL (its error set). */
typedef void (*bxad_backward_fn)(const struct bxad_node *n, bext_tensor *g, bext_tensor **gin);

struct bxad_rule {
  enum bxad_kind kind;
  unsigned save;                     /* BXAD_SAVE_* : what record keeps for the rule */
  bxad_backward_fn backward;
  /* Memory-bound (elementwise, layout, indexing, cast): re-running it costs
   * about what reading a kept copy would, so a balanced device recomputes
   * its output in backward rather than keep it.  False for compute-bound
   * ops (matmul, reductions, cumsum), whose outputs become checkpoints. */
  bool recompute;
};

/* The longest run of recomputable nodes one value may need re-run: the
 * bound on the recomputation's depth (and recursion), on the values a
 * backward step holds at once, and the spacing of the checkpoints it
 * forces in a long memory-bound chain.  A chain of n such ops then keeps
 * about n/8 checkpoints and re-runs at most 8 ops per missing value, the
 * sqrt(n) optimum (Chen et al., "Training deep nets with sublinear memory
 * cost") for chains of ~64, longer than the elementwise runs between two
 * matmuls of the usual models, where the matmuls are the checkpoints. */
#define BXAD_MAX_DEPTH 8
BXR_DATA const struct bxad_rule bxad_rules[BXR_OP_COUNT];

/* For runtime code outside the decorator that updates tensors in place of
 * the graph (bext_sgd_step, sgd.c).  bxad_take_inner: the inner tensor of
 * wrapper t (OWNED; released), as a new reference (a uniquely held
 * wrapper gives its own up, so the inner tensor may be unique); *tracked:
 * whether t had a node.  bxad_inner: t's inner tensor, BORROWED.
 * bxad_wrap: inner (OWNED) as a tensor of autodiff device dev, a new
 * tracked leaf when `leaf`, else a constant; NULL + error (inner released). */
BXR_FUNC bext_tensor *bxad_take_inner(bext_tensor *t, bool *tracked);
BXR_FUNC const bext_tensor *bxad_inner(const bext_tensor *t);
BXR_FUNC bext_tensor *bxad_wrap(struct bext_device *dev, bext_tensor *inner, bool leaf);

/* The decorator's vtable (device.c puts it in the AUTODIFF layer row). */
BXR_DATA const struct bxr_backend bxad_backend;

#endif /* BXAD_AUTODIFF_H */
