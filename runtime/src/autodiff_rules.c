/* autodiff_rules.c — the backward rule of every opcode, in ONE table
 * indexed by opcode (bxad_rules), beside the op table's data (optable.c):
 * whether an op is differentiable, has no gradient (its output is a
 * constant), or has no rule yet (a tracked input fails the forward call,
 * PyTorch's "no autograd formula" — never a silent zero gradient).
 * The same row says whether the op is memory-bound (MEM: recomputed in
 * backward on +autodiff(balanced) devices) or compute-bound (DIFF: its
 * output is a checkpoint there).
 *
 * Rules run on the INNER device with the public op API: g and the saved
 * tensors are inner tensors, every op consumes its operands, so a rule
 * retains (R) what it borrows.  Broadcasting ops reduce each input's
 * gradient back to the input's shape (unbroadcast). */
#include <math.h>
#include <string.h>

#include "autodiff.h"

#define R bext_retain
#define NEED(i) (n->parent[i] != NULL)

/* g (OWNED) summed over the dims broadcasting added or stretched, so it
 * has spec s's shape. */
static bext_tensor *unbroadcast(bext_tensor *g, const bext_spec *s) {
  while (g && g->rank > s->rank) g = bext_sum_dim(g, 0, false);
  for (int d = 0; g && d < s->rank; d++)
    if (s->shape[d] == 1 && g->shape[d] != 1) g = bext_sum_dim(g, d, true);
  return g;
}

/* float 0/1 of a mask (OWNED), in dtype dt */
static bext_tensor *as01(bext_tensor *mask, bext_dtype dt) { return bext_cast(mask, dt); }

/* ------------------------------------------------------------ elementwise */

static void bw_add(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  if (NEED(0)) gi[0] = unbroadcast(R(g), &n->in[0]);
  if (NEED(1)) gi[1] = unbroadcast(R(g), &n->in[1]);
}
static void bw_sub(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  if (NEED(0)) gi[0] = unbroadcast(R(g), &n->in[0]);
  if (NEED(1)) gi[1] = unbroadcast(bext_neg(R(g)), &n->in[1]);
}
static void bw_mul(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  /* x * x (a squared error): both gradients are g * x, one product handed
   * out twice (backward sums the two references): a pass and a buffer
   * fewer, the same bits */
  if (NEED(0) && n->parent[0] == n->parent[1] && n->saved[0] == n->saved[1]) {
    gi[0] = unbroadcast(bext_mul(R(g), R(n->saved[0])), &n->in[0]);
    gi[1] = gi[0] ? R(gi[0]) : NULL;
    return;
  }
  if (NEED(0)) gi[0] = unbroadcast(bext_mul(R(g), R(n->saved[1])), &n->in[0]);
  if (NEED(1)) gi[1] = unbroadcast(bext_mul(R(g), R(n->saved[0])), &n->in[1]);
}
/* d(a/b)/db = -(a/b)/b: the output saves re-reading a */
static void bw_div(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  if (NEED(0)) gi[0] = unbroadcast(bext_div(R(g), R(n->saved[1])), &n->in[0]);
  if (NEED(1))
    gi[1] = unbroadcast(bext_neg(bext_div(bext_mul(R(g), R(n->saved_out)), R(n->saved[1]))), &n->in[1]);
}
/* a^b: b a^(b-1) in a, a^b log a in b */
static void bw_pow(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  bext_tensor *a = n->saved[0], *b = n->saved[1];
  if (NEED(0))
    gi[0] = unbroadcast(bext_mul(R(g), bext_mul(R(b), bext_pow(R(a), bext_sub_scalar(R(b), 1.0)))), &n->in[0]);
  if (NEED(1)) gi[1] = unbroadcast(bext_mul(R(g), bext_mul(R(n->saved_out), bext_log(R(a)))), &n->in[1]);
}
/* max/min: the gradient goes to the chosen operand; ties to the first */
static void bw_max(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  bext_tensor *a = n->saved[0], *b = n->saved[1];
  bext_dtype dt = g->dtype;
  bool mx = n->code == BXR_OP_MAX;
  if (NEED(0))
    gi[0] = unbroadcast(bext_mul(R(g), as01(mx ? bext_ge(R(a), R(b)) : bext_le(R(a), R(b)), dt)), &n->in[0]);
  if (NEED(1))
    gi[1] = unbroadcast(bext_mul(R(g), as01(mx ? bext_lt(R(a), R(b)) : bext_gt(R(a), R(b)), dt)), &n->in[1]);
}

/* floored modulus x - floor(x/y) y: 1 in x, -floor(x/y) in y (the
 * derivative exists off the jumps at x/y integer) */
static void bw_rem(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  if (NEED(0)) gi[0] = unbroadcast(R(g), &n->in[0]);
  if (NEED(1))
    gi[1] = unbroadcast(bext_neg(bext_mul(R(g), bext_floor(bext_div(R(n->saved[0]), R(n->saved[1]))))),
                        &n->in[1]);
}

static void bw_pass(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  (void)n;
  gi[0] = R(g);
}
static void bw_mul_scalar(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  gi[0] = bext_mul_scalar(R(g), n->sc[0].f);
}
static void bw_div_scalar(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  gi[0] = bext_div_scalar(R(g), n->sc[0].f);
}
static void bw_pow_scalar(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  double s = n->sc[0].f;
  gi[0] = bext_mul(R(g), bext_mul_scalar(bext_pow_scalar(R(n->saved[0]), s - 1.0), s));
}
static void bw_max_scalar(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  bext_tensor *x = R(n->saved[0]);
  double s = n->sc[0].f;
  bext_tensor *m = n->code == BXR_OP_MAX_SCALAR ? bext_ge_scalar(x, s) : bext_le_scalar(x, s);
  gi[0] = bext_mul(R(g), as01(m, g->dtype));
}
static void bw_clamp(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  bext_tensor *x = n->saved[0];
  bext_tensor *m = bext_and(bext_ge_scalar(R(x), n->sc[0].f), bext_le_scalar(R(x), n->sc[1].f));
  gi[0] = bext_mul(R(g), as01(m, g->dtype));
}

/* Unary ops: gi = g * f'(x), f' from the saved input x or output y. */
static void bw_unary(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  bext_tensor *x = n->saved[0], *y = n->saved_out, *d = NULL;
  switch (n->code) {
  case BXR_OP_NEG: gi[0] = bext_neg(R(g)); return;
  case BXR_OP_EXP: d = R(y); break;
  case BXR_OP_LOG: gi[0] = bext_div(R(g), R(x)); return;
  case BXR_OP_LOG1P: gi[0] = bext_div(R(g), bext_add_scalar(R(x), 1.0)); return;
  case BXR_OP_SQRT: gi[0] = bext_div(R(g), bext_mul_scalar(R(y), 2.0)); return;
  case BXR_OP_RSQRT: d = bext_mul_scalar(bext_div(R(y), R(x)), -0.5); break;  /* -x^-3/2 / 2 */
  case BXR_OP_SIN: d = bext_cos(R(x)); break;
  case BXR_OP_COS: d = bext_neg(bext_sin(R(x))); break;
  case BXR_OP_TANH: d = bext_add_scalar(bext_neg(bext_mul(R(y), R(y))), 1.0); break;
  case BXR_OP_SIGMOID: d = bext_mul(R(y), bext_add_scalar(bext_neg(R(y)), 1.0)); break;
  case BXR_OP_ERF: d = bext_mul_scalar(bext_exp(bext_neg(bext_mul(R(x), R(x)))), 2.0 / sqrt(M_PI)); break;
  case BXR_OP_RELU: d = as01(bext_gt_scalar(R(x), 0.0), g->dtype); break;
  case BXR_OP_RECIP: d = bext_neg(bext_mul(R(y), R(y))); break;
  case BXR_OP_ABS: d = bext_sign(R(x)); break;
  case BXR_OP_POWI: {
    int64_t k = n->sc[0].i;
    d = bext_mul_scalar(bext_powi(R(x), k - 1), (double)k);
    break;
  }
  default: BXR_ASSERT(!"bw_unary: not a unary rule");
  }
  gi[0] = bext_mul(R(g), d);
}

/* ------------------------------------------------------------- reductions */

/* g spread back over the reduced input: keepdim's shape first, then
 * expanded (a stride-0 view on host backends: no copy). */
static bext_tensor *spread(const struct bxad_node *n, bext_tensor *g) {
  const bext_spec *s = &n->in[0];
  if (!n->at.all && !n->at.keepdim) {
    int64_t sh[BEXT_MAX_RANK];
    for (int d = 0; d < s->rank; d++) sh[d] = d == n->at.dim ? 1 : s->shape[d];
    g = bext_reshape(g, sh, s->rank);
  }
  return bext_expand(g, s->shape, s->rank);
}
static void bw_sum(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) { gi[0] = spread(n, R(g)); }
static void bw_mean(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  double cnt = (double)bxr_numel(n->in[0].rank, n->in[0].shape) / (double)bxr_numel(n->out.rank, n->out.shape);
  gi[0] = spread(n, bext_div_scalar(R(g), cnt));
}
/* t (OWNED, the input's shape) reduced like the node (sum or prod) with
 * the reduced dims kept, then expanded back to the input's shape */
static bext_tensor *kept(const struct bxad_node *n, bext_tensor *t, bool prod) {
  const bext_spec *s = &n->in[0];
  if (n->at.all) t = prod ? bext_prod(t) : bext_sum(t);
  else t = prod ? bext_prod_dim(t, n->at.dim, true) : bext_sum_dim(t, n->at.dim, true);
  return bext_expand(t, s->shape, s->rank);
}
/* d prod / d x_i = the product of the others, computed from the zeros'
 * count so it is exact with any number of zeros: with z = (x == 0) and P
 * the product with zeros taken as 1, a nonzero x_i gets P / x_i and a
 * zero gets P, each only when no OTHER element of its reduction is zero
 * (else 0).  With no zeros this is the familiar prod / x_i. */
static void bw_prod(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  bext_tensor *x = n->saved[0];
  bext_dtype dt = g->dtype;
  bext_tensor *z = bext_eq_scalar(R(x), 0.0);
  bext_tensor *x1 = bext_mask_fill(R(x), R(z), 1.0);
  bext_tensor *p = kept(n, R(x1), true);
  bext_tensor *others = bext_sub(kept(n, as01(R(z), dt), false), as01(R(z), dt));  /* zeros besides x_i */
  bext_tensor *r = bext_mask_where(bext_div(R(p), x1), z, p);
  r = bext_mask_fill(r, bext_gt_scalar(others, 0.0), 0.0);
  gi[0] = bext_mul(spread(n, R(g)), r);
}
/* max/min: g goes to the elements equal to the result, split evenly among
 * ties (PyTorch's amax/amin; its max(dim) picks one index instead) */
static void bw_extreme(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  bext_tensor *hit = as01(bext_eq(R(n->saved[0]), spread(n, R(n->saved_out))), g->dtype);
  bext_tensor *cnt = kept(n, R(hit), false);
  gi[0] = bext_mul(spread(n, R(g)), bext_div(hit, cnt));
}
/* the adjoint of a prefix sum is a suffix sum */
static void bw_cumsum(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  int d = n->at.dim;
  gi[0] = bext_flip(bext_cumsum(bext_flip(R(g), &d, 1), d), &d, 1);
}

/* ---------------------------------------------------------------- matmul */

static bext_tensor *mT(bext_tensor *t) { return bext_swap_dims(t, t->rank - 2, t->rank - 1); }
static void bw_matmul(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  bext_tensor *a = n->saved[0], *b = n->saved[1];
  if (NEED(0)) gi[0] = unbroadcast(bext_matmul(R(g), mT(R(b))), &n->in[0]);
  if (NEED(1)) gi[1] = unbroadcast(bext_matmul(mT(R(a)), R(g)), &n->in[1]);
}

/* ---------------------------------------------------------------- layout */

static void bw_reshape(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  gi[0] = bext_reshape(R(g), n->in[0].shape, n->in[0].rank);
}
static void bw_swap_dims(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  gi[0] = bext_swap_dims(R(g), n->at.dims[0], n->at.dims[1]);
}
static void bw_permute(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  int inv[BEXT_MAX_RANK];
  for (int i = 0; i < n->at.ndims; i++) inv[n->at.dims[i]] = i;
  gi[0] = bext_permute(R(g), inv, n->at.ndims);
}
static void bw_expand(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  gi[0] = unbroadcast(R(g), &n->in[0]);
}
static void bw_flip(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  gi[0] = bext_flip(R(g), n->at.dims, n->at.ndims);
}
/* slice / narrow: g written into zeros of the input's shape */
static void bw_slice(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  const bext_spec *s = &n->in[0];
  int64_t st[BEXT_MAX_RANK], en[BEXT_MAX_RANK];
  int nr;
  if (n->code == BXR_OP_NARROW) {
    nr = n->at.dim + 1;
    for (int d = 0; d < nr; d++) st[d] = 0, en[d] = s->shape[d];
    st[n->at.dim] = n->sc[0].i;
    en[n->at.dim] = n->sc[0].i + n->sc[1].i;
  } else {
    nr = n->at.nranges;
    memcpy(st, n->at.start, sizeof st);
    memcpy(en, n->at.end, sizeof en);
  }
  gi[0] = bext_slice_assign(bext_zeros(s->shape, s->rank, s->dtype, g->device), st, en, nr, R(g));
}
/* slice_assign: the slice of t was overwritten, so t's gradient is g with
 * the slice zeroed; value's is the slice of g */
static void bw_slice_assign(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  const bext_spec *v = &n->in[1];
  const int64_t *st = n->at.start, *en = n->at.end;
  int nr = n->at.nranges;
  if (NEED(0)) gi[0] = bext_slice_assign(R(g), st, en, nr, bext_zeros(v->shape, v->rank, v->dtype, g->device));
  if (NEED(1)) gi[1] = bext_slice(R(g), st, en, nr);
}
/* cat: each input's gradient is its stretch of g along dim */
static void bw_cat(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  int d = n->at.dim;
  int64_t off = 0;
  for (int i = 0; i < n->n_in; i++) {
    int64_t len = n->in[i].shape[d];
    if (NEED(i)) gi[i] = bext_narrow(R(g), d, off, len);
    off += len;
  }
}
static void bw_repeat_dim(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  const bext_spec *s = &n->in[0];
  int d = n->at.dim, r = 0;
  int64_t sh[BEXT_MAX_RANK + 1];
  for (int k = 0; k < s->rank; k++) {
    if (k == d) sh[r++] = n->sc[0].i;
    sh[r++] = s->shape[k];
  }
  gi[0] = bext_sum_dim(bext_reshape(R(g), sh, r), d, false);
}
/* --------------------------------------------------------------- indexing
 * Indices and masks are constants (int/bool: never tracked); the rules
 * read them from saved[1].  Each gather/select is the adjoint of the
 * matching scatter_add/select_assign, so repeated indices accumulate. */

static void bw_gather(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  const bext_spec *s = &n->in[0];
  gi[0] = bext_scatter_add(bext_zeros(s->shape, s->rank, s->dtype, g->device), n->at.dim, R(n->saved[1]), R(g));
}
static void bw_scatter_add(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  if (NEED(0)) gi[0] = R(g);
  if (NEED(2)) gi[2] = bext_gather(R(g), n->at.dim, R(n->saved[1]));
}
static void bw_select(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  const bext_spec *s = &n->in[0];
  gi[0] = bext_select_assign(bext_zeros(s->shape, s->rank, s->dtype, g->device), n->at.dim, R(n->saved[1]), R(g));
}
static void bw_select_assign(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  if (NEED(0)) gi[0] = R(g);
  if (NEED(2)) gi[2] = bext_select(R(g), n->at.dim, R(n->saved[1]));
}
/* where(mask, value, t): g goes to value where mask holds, to t elsewhere;
 * a rank-0 zero broadcasts against the other two */
static void bw_mask_where(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  bext_tensor *m = n->saved[1];
  if (NEED(0))
    gi[0] = unbroadcast(bext_mask_where(R(g), R(m), bext_zeros(NULL, 0, g->dtype, g->device)), &n->in[0]);
  if (NEED(2))
    gi[2] = unbroadcast(bext_mask_where(bext_zeros(NULL, 0, g->dtype, g->device), R(m), R(g)), &n->in[2]);
}

static void bw_mask_fill(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  gi[0] = bext_mask_fill(R(g), R(n->saved[1]), 0.0);
}
static void bw_cast(const struct bxad_node *n, bext_tensor *g, bext_tensor **gi) {
  gi[0] = bext_cast(R(g), n->in[0].dtype);
}

/* ----------------------------------------------------------------- table */

/* DIFF: a compute-bound op (a checkpoint on balanced devices); MEM: a
 * memory-bound one, recomputed in backward on balanced devices. */
#define NOT_YET {BXAD_NOT_YET, 0, NULL, false}
#define NO_GRAD {BXAD_NO_GRAD, 0, NULL, false}
#define DIFF(save, fn) {BXAD_DIFF, save, fn, false}
#define MEM(save, fn) {BXAD_DIFF, save, fn, true}
#define S0 BXAD_SAVE_IN(0)
#define S01 (BXAD_SAVE_IN(0) | BXAD_SAVE_IN(1))
#define SO BXAD_SAVE_OUT

const struct bxad_rule bxad_rules[BXR_OP_COUNT] = {
    /* creation: no inputs, constants */
    [BXR_OP_EMPTY] = NO_GRAD, [BXR_OP_ZEROS] = NO_GRAD, [BXR_OP_ONES] = NO_GRAD, [BXR_OP_FULL] = NO_GRAD,
    [BXR_OP_ARANGE] = NO_GRAD, [BXR_OP_RANDOM_UNIFORM] = NO_GRAD, [BXR_OP_RANDOM_NORMAL] = NO_GRAD,
    /* layout */
    [BXR_OP_RESHAPE] = MEM(0, bw_reshape),
    [BXR_OP_SWAP_DIMS] = MEM(0, bw_swap_dims),
    [BXR_OP_PERMUTE] = MEM(0, bw_permute),
    [BXR_OP_EXPAND] = MEM(0, bw_expand),
    [BXR_OP_SLICE] = MEM(0, bw_slice),
    [BXR_OP_SLICE_ASSIGN] = MEM(0, bw_slice_assign),
    [BXR_OP_CAT] = MEM(0, bw_cat),
    [BXR_OP_FLIP] = MEM(0, bw_flip),
    [BXR_OP_NARROW] = MEM(0, bw_slice),
    [BXR_OP_REPEAT_DIM] = MEM(0, bw_repeat_dim),
    /* indexing */
    [BXR_OP_GATHER] = MEM(BXAD_SAVE_IN(1), bw_gather),
    [BXR_OP_SCATTER_ADD] = MEM(BXAD_SAVE_IN(1), bw_scatter_add),
    [BXR_OP_SELECT] = MEM(BXAD_SAVE_IN(1), bw_select),
    [BXR_OP_SELECT_ASSIGN] = MEM(BXAD_SAVE_IN(1), bw_select_assign),
    [BXR_OP_MASK_WHERE] = MEM(BXAD_SAVE_IN(1), bw_mask_where),
    [BXR_OP_MASK_FILL] = MEM(BXAD_SAVE_IN(1), bw_mask_fill),
    /* binary */
    [BXR_OP_ADD] = MEM(0, bw_add),
    [BXR_OP_SUB] = MEM(0, bw_sub),
    [BXR_OP_MUL] = MEM(S01, bw_mul),
    [BXR_OP_DIV] = MEM(BXAD_SAVE_IN(1) | SO, bw_div),
    [BXR_OP_REM] = MEM(S01, bw_rem),
    [BXR_OP_POW] = MEM(S01 | SO, bw_pow),
    [BXR_OP_MAX] = MEM(S01, bw_max),
    [BXR_OP_MIN] = MEM(S01, bw_max),
    /* scalar forms; rem_scalar's derivative is 1 wherever it exists */
    [BXR_OP_ADD_SCALAR] = MEM(0, bw_pass),
    [BXR_OP_SUB_SCALAR] = MEM(0, bw_pass),
    [BXR_OP_MUL_SCALAR] = MEM(0, bw_mul_scalar),
    [BXR_OP_DIV_SCALAR] = MEM(0, bw_div_scalar),
    [BXR_OP_REM_SCALAR] = MEM(0, bw_pass),
    [BXR_OP_POW_SCALAR] = MEM(S0, bw_pow_scalar),
    [BXR_OP_MAX_SCALAR] = MEM(S0, bw_max_scalar),
    [BXR_OP_MIN_SCALAR] = MEM(S0, bw_max_scalar),
    /* comparisons and bool logic: bool outputs */
    [BXR_OP_EQ] = NO_GRAD, [BXR_OP_NE] = NO_GRAD, [BXR_OP_GT] = NO_GRAD, [BXR_OP_GE] = NO_GRAD,
    [BXR_OP_LT] = NO_GRAD, [BXR_OP_LE] = NO_GRAD, [BXR_OP_EQ_SCALAR] = NO_GRAD,
    [BXR_OP_NE_SCALAR] = NO_GRAD, [BXR_OP_GT_SCALAR] = NO_GRAD, [BXR_OP_GE_SCALAR] = NO_GRAD,
    [BXR_OP_LT_SCALAR] = NO_GRAD, [BXR_OP_LE_SCALAR] = NO_GRAD,
    [BXR_OP_AND] = NO_GRAD, [BXR_OP_OR] = NO_GRAD, [BXR_OP_XOR] = NO_GRAD, [BXR_OP_NOT] = NO_GRAD,
    /* unary */
    [BXR_OP_NEG] = MEM(0, bw_unary),
    [BXR_OP_ABS] = MEM(S0, bw_unary),
    [BXR_OP_EXP] = MEM(SO, bw_unary),
    [BXR_OP_LOG] = MEM(S0, bw_unary),
    [BXR_OP_LOG1P] = MEM(S0, bw_unary),
    [BXR_OP_SQRT] = MEM(SO, bw_unary),
    [BXR_OP_RSQRT] = MEM(S0 | SO, bw_unary),
    [BXR_OP_SIN] = MEM(S0, bw_unary),
    [BXR_OP_COS] = MEM(S0, bw_unary),
    [BXR_OP_TANH] = MEM(SO, bw_unary),
    [BXR_OP_ERF] = MEM(S0, bw_unary),
    [BXR_OP_SIGMOID] = MEM(SO, bw_unary),
    [BXR_OP_RELU] = MEM(S0, bw_unary),
    [BXR_OP_RECIP] = MEM(SO, bw_unary),
    /* piecewise constant: the derivative is 0 wherever it exists, so a
     * constant output IS the gradient (PyTorch gives the same zeros) */
    [BXR_OP_FLOOR] = NO_GRAD, [BXR_OP_CEIL] = NO_GRAD, [BXR_OP_ROUND] = NO_GRAD, [BXR_OP_SIGN] = NO_GRAD,
    [BXR_OP_CLAMP] = MEM(S0, bw_clamp),
    [BXR_OP_POWI] = MEM(S0, bw_unary),
    /* reductions: compute-bound, checkpoints on balanced devices */
    [BXR_OP_SUM] = DIFF(0, bw_sum),
    [BXR_OP_MEAN] = DIFF(0, bw_mean),
    [BXR_OP_PROD] = DIFF(S0, bw_prod),
    [BXR_OP_MAX_REDUCE] = DIFF(S0 | SO, bw_extreme),
    [BXR_OP_MIN_REDUCE] = DIFF(S0 | SO, bw_extreme),
    [BXR_OP_ARGMAX] = NO_GRAD, [BXR_OP_ARGMIN] = NO_GRAD, [BXR_OP_ANY] = NO_GRAD, [BXR_OP_ALL] = NO_GRAD,
    [BXR_OP_CUMSUM] = DIFF(0, bw_cumsum),
    /* matmul, cast (float->float; a cast to int or bool is a constant) */
    [BXR_OP_MATMUL] = DIFF(S01, bw_matmul),
    [BXR_OP_CAST] = MEM(0, bw_cast),
};
_Static_assert(sizeof bxad_rules / sizeof bxad_rules[0] == BXR_OP_COUNT, "one autodiff rule per op");
/* Designated initializers leave a forgotten row zero (BXAD_UNLISTED, which
 * test_autodiff catches at run time); this catches it at build time: a new
 * opcode fails here until its row above is written and the count bumped
 * (ggml's static_assert(GGML_OP_COUNT == N) beside each op table). */
_Static_assert(BXR_OP_COUNT == 87, "a new op needs its row in bxad_rules: NO_GRAD, MEM or DIFF with a rule");
