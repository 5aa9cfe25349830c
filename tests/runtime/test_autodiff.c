/* test_autodiff.c — the +autodiff decorator: finite-difference gradient
 * checks (f64, central differences) for every rule written, on
 * ndarray+autodiff, flex+autodiff and with +fusion between (the
 * flex+fusion+autodiff and ndarray+fusion+autodiff stacks), with
 * broadcast and non-contiguous inputs; no row left "not yet"; prod's zeros and max/min's ties (the
 * conventions finite differences cannot check); no-gradient ops giving
 * constants; the API's contracts; graphs freed without backward and no
 * growth over a training loop (a counting allocation hook: every runtime
 * byte goes through it); bit-identical repeated backward runs.  Every
 * check also runs on +autodiff(balanced), whose gradients must equal
 * none's bit for bit, with the peak live bytes of a 32-op elementwise
 * chain at most 0.6x none's. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "autodiff.h"
#include "bext/bext.h"

/* both strategies: balanced must pass every test none does */
static const char *const DEVS[] = {"ndarray+autodiff", "flex+autodiff", "ndarray+autodiff(balanced)",
                                   "flex+autodiff(balanced)"};
#define NDEVS ((int)(sizeof DEVS / sizeof DEVS[0]))

static const bext_device *dev_of(const char *spec) {
  const bext_device *d = bext_device_get(spec);
  cr_assert(d && bext_device_available(d), "%s: %s", spec, bext_last_error());
  return d;
}

/* ------------------------------------------------------- counting hook */
static long long g_live_bytes, g_live_blocks;
static void *counting_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  if (nsize == 0) {
    if (ptr) g_live_bytes -= (long long)osize, g_live_blocks--;
    free(ptr);
    return NULL;
  }
  void *p = realloc(ptr, nsize);
  if (p) g_live_bytes += (long long)nsize - (ptr ? (long long)osize : 0), g_live_blocks += ptr ? 0 : 1;
  return p;
}
/* flushes this thread's block cache, so cached free blocks are not counted */
static void count_start(void) {
  bext_set_allocator(counting_alloc, NULL);
  g_live_bytes = g_live_blocks = 0;
}
static long long count_now(void) {
  bext_set_allocator(counting_alloc, NULL);
  return g_live_bytes;
}

/* ------------------------------------------------ finite differences */

typedef bext_tensor *(*fn_t)(bext_tensor **in);  /* OWNS in[] */

struct gcase {
  const char *name;
  fn_t f;
  int n;
  int rank[3];
  int64_t shape[3][4];
  double lo, hi;  /* input range (domains: log, sqrt) */
};

static int64_t numel(int rank, const int64_t *s) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++) n *= s[i];
  return n;
}

/* deterministic values in [lo, hi] */
static void fill(double *x, int64_t n, double lo, double hi, unsigned seed) {
  unsigned s = seed * 2654435761u + 12345u;
  for (int64_t i = 0; i < n; i++) {
    s = s * 1103515245u + 12345u;
    x[i] = lo + (hi - lo) * ((double)((s >> 8) & 0xffff) / 65535.0);
  }
}

/* sum(f(in) * W): a loss whose gradient exercises every output element */
static bext_tensor *loss_of(const struct gcase *c, const bext_device *d, bext_tensor **in, double **w,
                            int *wrank, int64_t *wshape) {
  bext_tensor *out = c->f(in);
  cr_assert_not_null(out, "%s: %s", c->name, bext_last_error());
  if (!*w) {
    *wrank = bext_rank(out);
    memcpy(wshape, bext_shape(out), (size_t)*wrank * sizeof *wshape);
    int64_t n = numel(*wrank, wshape);
    *w = malloc((size_t)(n ? n : 1) * sizeof **w);
    fill(*w, n, -1.0, 1.0, 99);
  }
  bext_tensor *W = bext_from_data(*w, BEXT_F64, wshape, *wrank, d);
  return bext_sum(bext_mul(bext_cast(out, BEXT_F64), W));
}

static double eval(const struct gcase *c, const bext_device *d, double **x, double **w, int *wr, int64_t *ws) {
  bext_tensor *in[3];
  for (int i = 0; i < c->n; i++) in[i] = bext_from_data(x[i], BEXT_F64, c->shape[i], c->rank[i], d);
  bext_tensor *l = loss_of(c, d, in, w, wr, ws);
  double v;
  cr_assert(bext_read(l, &v, sizeof v), "%s", bext_last_error());
  bext_release(l);
  return v;
}

/* keep: when non-NULL, receives each input's gradient (malloc'd, the
 * caller frees) for bit-for-bit comparisons between strategies. */
static void gradcheck_keep(const struct gcase *c, const char *spec, double **keep) {
  const bext_device *d = dev_of(spec);
  double *x[3], *w = NULL;
  int wr = 0;
  int64_t ws[BEXT_MAX_RANK];
  bext_tensor *leaf[3], *in[3];
  for (int i = 0; i < c->n; i++) {
    int64_t n = numel(c->rank[i], c->shape[i]);
    x[i] = malloc((size_t)n * sizeof *x[i]);
    fill(x[i], n, c->lo, c->hi, (unsigned)i + 1);
    leaf[i] = bext_require_grad(bext_from_data(x[i], BEXT_F64, c->shape[i], c->rank[i], d));
    cr_assert(bext_is_tracked(leaf[i]));
    in[i] = bext_retain(leaf[i]);
  }
  bext_tensor *loss = loss_of(c, d, in, &w, &wr, ws);
  cr_assert(bext_is_tracked(loss), "%s on %s: loss untracked", c->name, spec);
  bext_grads *g = bext_backward(loss);
  cr_assert_not_null(g, "%s on %s: %s", c->name, spec, bext_last_error());
  const double h = 1e-6;
  for (int i = 0; i < c->n; i++) {
    int64_t n = numel(c->rank[i], c->shape[i]);
    bext_tensor *gt = bext_grad(g, leaf[i]);
    cr_assert_not_null(gt, "%s on %s: input %d got no gradient", c->name, spec, i);
    cr_assert_eq(bext_rank(gt), c->rank[i]);
    cr_assert(!bext_is_tracked(gt));
    double *ga = malloc((size_t)n * sizeof *ga);
    cr_assert(bext_read(gt, ga, (size_t)n * sizeof *ga), "%s", bext_last_error());
    for (int64_t j = 0; j < n; j++) {
      double keep = x[i][j];
      x[i][j] = keep + h;
      double lp = eval(c, d, x, &w, &wr, ws);
      x[i][j] = keep - h;
      double lm = eval(c, d, x, &w, &wr, ws);
      x[i][j] = keep;
      double num = (lp - lm) / (2 * h), tol = 1e-6 * fmax(1.0, fmax(fabs(num), fabs(ga[j])));
      cr_expect(fabs(num - ga[j]) <= tol, "%s on %s: d/d in%d[%lld] = %.12g, finite difference %.12g", c->name,
                spec, i, (long long)j, ga[j], num);
    }
    if (keep) keep[i] = ga;
    else free(ga);
    bext_release(gt);
  }
  bext_grads_free(g);
  bext_release(loss);
  for (int i = 0; i < c->n; i++) bext_release(leaf[i]), free(x[i]);
  free(w);
}

static void gradcheck(const struct gcase *c, const char *spec) { gradcheck_keep(c, spec, NULL); }

/* ------------------------------------------------------------- the cases */
#define F1(name, expr) static bext_tensor *name(bext_tensor **in) { bext_tensor *a = in[0]; return expr; }
#define F2(name, expr) static bext_tensor *name(bext_tensor **in) { bext_tensor *a = in[0], *b = in[1]; return expr; }

F2(f_add, bext_add(a, b))
F2(f_sub, bext_sub(a, b))
F2(f_mul, bext_mul(a, b))
F2(f_div, bext_div(a, b))
F2(f_pow, bext_pow(a, b))
F2(f_max, bext_max(a, b))
F2(f_min, bext_min(a, b))
F1(f_add_s, bext_add_scalar(a, 1.5))
F1(f_sub_s, bext_sub_scalar(a, 1.5))
F1(f_mul_s, bext_mul_scalar(a, -2.5))
F1(f_div_s, bext_div_scalar(a, 3.0))
F1(f_rem_s, bext_rem_scalar(a, 0.7))
F1(f_pow_s, bext_pow_scalar(a, 2.5))
F1(f_max_s, bext_max_scalar(a, 0.1))
F1(f_min_s, bext_min_scalar(a, 0.1))
F1(f_neg, bext_neg(a))
F1(f_exp, bext_exp(a))
F1(f_log, bext_log(a))
F1(f_log1p, bext_log1p(a))
F1(f_sqrt, bext_sqrt(a))
F1(f_rsqrt, bext_rsqrt(a))
F1(f_sin, bext_sin(a))
F1(f_cos, bext_cos(a))
F1(f_tanh, bext_tanh(a))
F1(f_sigmoid, bext_sigmoid(a))
F1(f_relu, bext_relu(a))
F1(f_recip, bext_recip(a))
F1(f_abs, bext_abs(a))
F1(f_erf, bext_erf(a))
F1(f_clamp, bext_clamp(a, -0.3, 0.4))
F1(f_powi3, bext_powi(a, 3))
F1(f_powim2, bext_powi(a, -2))
F1(f_gelu, bext_gelu(a))
F1(f_sum, bext_sum(a))
F1(f_mean, bext_mean(a))
F1(f_sum_d1, bext_sum_dim(a, 1, false))
F1(f_sum_d0k, bext_sum_dim(a, 0, true))
F1(f_mean_d1, bext_mean_dim(a, 1, false))
F1(f_mean_dlk, bext_mean_dim(a, -1, true))
F1(f_cumsum, bext_cumsum(a, 1))
F2(f_matmul, bext_matmul(a, b))
F1(f_reshape, bext_reshape(a, (int64_t[]){3, 2}, 2))
F1(f_swap, bext_swap_dims(a, 0, 2))
F1(f_permute, bext_permute(a, (int[]){2, 0, 1}, 3))
F1(f_expand, bext_expand(a, (int64_t[]){2, 3, 4}, 3))
F1(f_flip, bext_flip(a, (int[]){0, 1}, 2))
F1(f_slice, bext_slice(a, (int64_t[]){1, 0}, (int64_t[]){3, 2}, 2))
F1(f_narrow, bext_narrow(a, 1, 1, 2))
F1(f_repeat, bext_repeat_dim(a, 0, 3))
/* non-contiguous: the inner op sees a strided (transposed) view */
F1(f_exp_t, bext_exp(bext_transpose(a)))
F2(f_mul_t, bext_mul(bext_transpose(a), b))
F2(f_matmul_t, bext_matmul(bext_transpose(a), b))
/* a constant mask: mask_fill differentiates only in its tensor */
F1(f_mask_fill, bext_mask_fill(a, bext_gt_scalar(bext_from_data((double[]){1, -1, 2, -2, 3, -3}, BEXT_F64,
                                                                   (int64_t[]){2, 3}, 2, bext_device_of(a)), 0.0), 0.0))
/* indexing and the rest of the layout ops: indices and masks are
 * constants built on a's device (dv, read before a is consumed: argument
 * order is unspecified) */
#define G1(name, expr) static bext_tensor *name(bext_tensor **in) { bext_tensor *a = in[0]; const bext_device *dv = bext_device_of(a); return expr; }
#define G2(name, expr) static bext_tensor *name(bext_tensor **in) { bext_tensor *a = in[0], *b = in[1]; const bext_device *dv = bext_device_of(a); return expr; }
#define F3(name, expr) static bext_tensor *name(bext_tensor **in) { bext_tensor *a = in[0], *b = in[1], *c = in[2]; return expr; }
static bext_tensor *ids(const bext_device *d, const int64_t *v, int rank, const int64_t *shape) {
  return bext_from_data(v, BEXT_I64, shape, rank, d);
}
static bext_tensor *mask23(const bext_device *d) {
  return bext_gt_scalar(bext_from_data((double[]){1, -1, 2, -2, -3, 3}, BEXT_F64, (int64_t[]){2, 3}, 2, d), 0.0);
}
F2(f_slice_assign, bext_slice_assign(a, (int64_t[]){1, 0}, (int64_t[]){3, 2}, 2, b))
F2(f_slice_assign_t, bext_slice_assign(a, (int64_t[]){1, 1}, (int64_t[]){3, 3}, 2, bext_transpose(b)))
F2(f_cat2, bext_cat((bext_tensor *[]){a, b}, 2, 1))
F3(f_cat3, bext_cat((bext_tensor *[]){bext_transpose(a), b, c}, 3, 0))
/* five parts (more than a node holds): a tree of cats; a used twice */
F2(f_cat5, bext_cat((bext_tensor *[]){bext_retain(a), b, bext_exp(bext_retain(a)), bext_retain(b), a}, 5, -1))
G1(f_gather, bext_gather(a, 1, ids(dv, (int64_t[]){0, 3, 1, 1, 2, 0}, 2, (int64_t[]){3, 2})))
G1(f_gather_t, bext_gather(bext_transpose(a), 0, ids(dv, (int64_t[]){2, 0, 1, 2, 2, 1}, 2, (int64_t[]){2, 3})))
G2(f_scatter_add, bext_scatter_add(a, 0, ids(dv, (int64_t[]){0, 2, 2, 1, 2, 2, 0, 1}, 2, (int64_t[]){2, 4}), b))
G1(f_select, bext_select(a, 0, ids(dv, (int64_t[]){2, 0, 2}, 1, (int64_t[]){3})))
G1(f_select_t, bext_select(bext_transpose(a), 0, ids(dv, (int64_t[]){1, 1, 3}, 1, (int64_t[]){3})))
G2(f_select_assign, bext_select_assign(a, 0, ids(dv, (int64_t[]){3, 1, 3}, 1, (int64_t[]){3}), b))
G2(f_mask_where, bext_mask_where(a, mask23(dv), b))
G2(f_mask_where_b, bext_mask_where(a, mask23(dv), bext_transpose(b)))
F2(f_rem, bext_rem(a, b))
F1(f_prod, bext_prod(a))
F1(f_prod_d1, bext_prod_dim(a, 1, false))
F1(f_prod_d0k, bext_prod_dim(bext_transpose(a), 0, true))
F1(f_max_all, bext_max_all(a))
F1(f_min_all, bext_min_all(a))
F1(f_max_d1, bext_max_dim(a, 1, false))
F1(f_min_d0k, bext_min_dim(a, 0, true))
F1(f_max_dt, bext_max_dim(bext_transpose(a), -1, false))
/* one tensor used twice: gradients accumulate */
static bext_tensor *f_twice(bext_tensor **in) {
  bext_tensor *a = in[0], *sq = bext_mul(bext_retain(a), bext_retain(a));  /* before a is consumed */
  return bext_add(sq, bext_sin(a));
}

/* A custom node (bext_autodiff_record): a * sin(b), same shapes, with
 * its own backward; state counts frees (one per recorded node). */
static int g_state_frees;
static void state_free(void *p) {
  (void)p;
  g_state_frees++;
}
static bool sinmul_backward(void *state, bext_tensor *g, bext_tensor *const *saved, const bool *needs,
                            bext_tensor **gin) {
  cr_assert_eq(*(int *)state, 42);
  if (needs[0]) gin[0] = bext_mul(bext_retain(g), bext_sin(bext_retain(saved[1])));
  if (needs[1]) gin[1] = bext_mul(bext_mul(bext_retain(g), bext_retain(saved[0])), bext_cos(bext_retain(saved[1])));
  return (!needs[0] || gin[0]) && (!needs[1] || gin[1]);
}
static int g_state = 42;
static bext_tensor *custom_sinmul(bext_tensor *a, bext_tensor *b, bext_backward_fn bw) {
  bext_tensor *va = bext_autodiff_value(a), *vb = bext_autodiff_value(b);
  bext_tensor *y = bext_mul(bext_retain(va), bext_sin(bext_retain(vb)));
  bext_custom_node n = {.name = "test::sinmul", .n_in = 2, .inputs = (bext_tensor *[]){a, b}, .n_saved = 2,
                        .saved = (bext_tensor *[]){va, vb}, .backward = bw, .state = &g_state,
                        .state_free = state_free};
  bext_tensor *r = bext_autodiff_record(&n, y);
  bext_release(va);
  bext_release(vb);
  bext_release(a);
  bext_release(b);
  return r;
}
F2(f_custom, custom_sinmul(a, b, sinmul_backward))
/* the custom node between core ops: gradients flow through it both ways */
F2(f_custom_mid, bext_tanh(custom_sinmul(bext_mul_scalar(a, 1.5), bext_transpose(b), sinmul_backward)))

#define C1(nm, fn, r, s0, lo, hi) {nm, fn, 1, {r}, {s0}, lo, hi}
#define C2(nm, fn, r0, s0, r1, s1, lo, hi) {nm, fn, 2, {r0, r1}, {s0, s1}, lo, hi}
#define C3(nm, fn, r0, s0, r1, s1, r2, s2, lo, hi) {nm, fn, 3, {r0, r1, r2}, {s0, s1, s2}, lo, hi}
#define SH(...) {__VA_ARGS__}

static const struct gcase CASES[] = {
    C2("add broadcast", f_add, 2, SH(2, 3), 1, SH(3), -1, 1),
    C2("add both broadcast", f_add, 2, SH(2, 1), 2, SH(1, 3), -1, 1),
    C2("sub broadcast", f_sub, 2, SH(2, 3), 2, SH(2, 1), -1, 1),
    C2("mul broadcast", f_mul, 3, SH(3, 1, 2), 2, SH(4, 1), -1, 1),
    C2("div broadcast", f_div, 2, SH(2, 3), 1, SH(3), 1, 2),
    C2("pow broadcast", f_pow, 2, SH(2, 3), 1, SH(3), 0.5, 2),
    C2("max broadcast", f_max, 2, SH(2, 3), 1, SH(3), -1, 1),
    C2("min", f_min, 2, SH(2, 3), 2, SH(2, 3), -1, 1),
    C1("add_scalar", f_add_s, 2, SH(2, 3), -1, 1),
    C1("sub_scalar", f_sub_s, 2, SH(2, 3), -1, 1),
    C1("mul_scalar", f_mul_s, 2, SH(2, 3), -1, 1),
    C1("div_scalar", f_div_s, 2, SH(2, 3), -1, 1),
    C1("rem_scalar", f_rem_s, 1, SH(5), 0.1, 0.6),
    C1("pow_scalar", f_pow_s, 2, SH(2, 3), 0.5, 2),
    C1("max_scalar", f_max_s, 2, SH(2, 3), -1, 1),
    C1("min_scalar", f_min_s, 2, SH(2, 3), -1, 1),
    C1("neg", f_neg, 2, SH(2, 3), -1, 1),
    C1("exp", f_exp, 2, SH(2, 3), -1, 1),
    C1("log", f_log, 2, SH(2, 3), 0.5, 2),
    C1("log1p", f_log1p, 2, SH(2, 3), -0.5, 2),
    C1("sqrt", f_sqrt, 2, SH(2, 3), 0.5, 2),
    C1("rsqrt", f_rsqrt, 2, SH(2, 3), 0.5, 2),
    C1("sin", f_sin, 2, SH(2, 3), -2, 2),
    C1("cos", f_cos, 2, SH(2, 3), -2, 2),
    C1("tanh", f_tanh, 2, SH(2, 3), -2, 2),
    C1("sigmoid", f_sigmoid, 2, SH(2, 3), -2, 2),
    C1("relu", f_relu, 2, SH(2, 3), -1, 1),
    C1("recip", f_recip, 2, SH(2, 3), 0.5, 2),
    C1("abs", f_abs, 2, SH(2, 3), -1, 1),
    C1("erf", f_erf, 2, SH(2, 3), -1.5, 1.5),
    C1("clamp", f_clamp, 2, SH(2, 3), -1, 1),
    C1("powi 3", f_powi3, 2, SH(2, 3), -1, 1),
    C1("powi -2", f_powim2, 2, SH(2, 3), 0.5, 2),
    C1("gelu (composed)", f_gelu, 2, SH(2, 3), -2, 2),
    C1("sum", f_sum, 2, SH(2, 3), -1, 1),
    C1("mean", f_mean, 2, SH(2, 3), -1, 1),
    C1("sum_dim", f_sum_d1, 3, SH(2, 3, 2), -1, 1),
    C1("sum_dim keepdim", f_sum_d0k, 2, SH(2, 3), -1, 1),
    C1("mean_dim", f_mean_d1, 3, SH(2, 3, 2), -1, 1),
    C1("mean_dim keepdim", f_mean_dlk, 2, SH(2, 3), -1, 1),
    C1("cumsum", f_cumsum, 2, SH(2, 4), -1, 1),
    C2("matmul", f_matmul, 2, SH(2, 3), 2, SH(3, 4), -1, 1),
    C2("matmul batched", f_matmul, 3, SH(2, 2, 3), 3, SH(2, 3, 4), -1, 1),
    C2("matmul broadcast batch", f_matmul, 2, SH(2, 3), 3, SH(5, 3, 4), -1, 1),
    C2("matmul size-1 batch", f_matmul, 4, SH(3, 1, 2, 3), 3, SH(2, 3, 2), -1, 1),
    C1("reshape", f_reshape, 2, SH(2, 3), -1, 1),
    C1("swap_dims", f_swap, 3, SH(2, 3, 4), -1, 1),
    C1("permute", f_permute, 3, SH(2, 3, 4), -1, 1),
    C1("expand", f_expand, 2, SH(3, 1), -1, 1),
    C1("flip", f_flip, 2, SH(2, 3), -1, 1),
    C1("slice", f_slice, 2, SH(4, 3), -1, 1),
    C1("narrow", f_narrow, 2, SH(2, 4), -1, 1),
    C1("repeat_dim", f_repeat, 2, SH(2, 3), -1, 1),
    C1("exp of a transposed view", f_exp_t, 2, SH(2, 3), -1, 1),
    C2("mul of a transposed view", f_mul_t, 2, SH(2, 3), 1, SH(2), -1, 1),
    C2("matmul of a transposed view", f_matmul_t, 2, SH(3, 2), 2, SH(3, 4), -1, 1),
    C1("mask_fill", f_mask_fill, 2, SH(2, 3), -1, 1),
    C2("slice_assign", f_slice_assign, 2, SH(4, 3), 2, SH(2, 2), -1, 1),
    C2("slice_assign of a transposed value", f_slice_assign_t, 2, SH(4, 3), 2, SH(2, 2), -1, 1),
    C2("cat", f_cat2, 2, SH(2, 3), 2, SH(2, 2), -1, 1),
    C3("cat of three, one transposed", f_cat3, 2, SH(3, 2), 2, SH(1, 3), 2, SH(3, 3), -1, 1),
    C2("cat of five", f_cat5, 2, SH(2, 3), 2, SH(2, 1), -1, 1),
    C1("gather (repeated indices)", f_gather, 2, SH(3, 4), -1, 1),
    C1("gather of a transposed view", f_gather_t, 2, SH(3, 3), -1, 1),
    C2("scatter_add", f_scatter_add, 2, SH(3, 4), 2, SH(2, 4), -1, 1),
    C1("select (repeated indices)", f_select, 2, SH(4, 3), -1, 1),
    C1("select of a transposed view", f_select_t, 2, SH(3, 4), -1, 1),
    C2("select_assign", f_select_assign, 2, SH(4, 3), 2, SH(3, 3), -1, 1),
    C2("mask_where broadcast value", f_mask_where, 2, SH(2, 3), 1, SH(3), -1, 1),
    C2("mask_where broadcast t, transposed value", f_mask_where_b, 2, SH(2, 1), 2, SH(3, 2), -1, 1),
    C2("rem", f_rem, 2, SH(2, 3), 2, SH(2, 3), 0.5, 2),
    C2("rem broadcast", f_rem, 2, SH(2, 3), 1, SH(3), 0.5, 2),
    C1("prod", f_prod, 2, SH(2, 3), 0.5, 1.5),
    C1("prod negative", f_prod, 1, SH(5), -1.5, -0.5),
    C1("prod_dim", f_prod_d1, 3, SH(2, 3, 2), 0.5, 1.5),
    C1("prod_dim keepdim of a transposed view", f_prod_d0k, 2, SH(3, 2), -1.5, 1.5),
    C1("max_all", f_max_all, 2, SH(3, 4), -1, 1),
    C1("min_all", f_min_all, 2, SH(3, 4), -1, 1),
    C1("max_dim", f_max_d1, 3, SH(2, 4, 3), -1, 1),
    C1("min_dim keepdim", f_min_d0k, 2, SH(3, 4), -1, 1),
    C1("max_dim of a transposed view", f_max_dt, 2, SH(4, 3), -1, 1),
    C1("a tensor used twice", f_twice, 2, SH(2, 3), -1, 1),
    C2("custom node", f_custom, 2, SH(2, 3), 2, SH(2, 3), -2, 2),
    C2("custom node between core ops, transposed input", f_custom_mid, 2, SH(2, 3), 2, SH(3, 2), -2, 2),
};

Test(autodiff, finite_differences_ndarray) {
  for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) gradcheck(&CASES[i], "ndarray+autodiff");
}
Test(autodiff, finite_differences_flex) {
  for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) gradcheck(&CASES[i], "flex+autodiff");
}
/* +fusion under +autodiff: the forward ops and the rules' ops are
 * deferred and fused one layer down, the gradients must not notice */
Test(autodiff, finite_differences_fusion) {
  for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) gradcheck(&CASES[i], "flex+fusion+autodiff");
}
/* Balanced checkpointing recomputes memory-bound ops in backward: the
 * same ops on the same values, so every case's gradients must equal
 * none's bit for bit (and pass the finite differences themselves). */
static void balanced_matches_none(const char *none, const char *balanced) {
  for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
    const struct gcase *c = &CASES[i];
    double *a[3] = {NULL}, *b[3] = {NULL};
    gradcheck_keep(c, none, a);
    gradcheck_keep(c, balanced, b);
    for (int k = 0; k < c->n; k++) {
      size_t bytes = (size_t)numel(c->rank[k], c->shape[k]) * sizeof(double);
      cr_expect(!memcmp(a[k], b[k], bytes), "%s: the gradient of input %d differs between %s and %s", c->name, k,
                none, balanced);
      free(a[k]);
      free(b[k]);
    }
  }
}
Test(autodiff, balanced_finite_differences_ndarray) {
  balanced_matches_none("ndarray+autodiff", "ndarray+autodiff(balanced)");
}
Test(autodiff, balanced_finite_differences_flex) {
  balanced_matches_none("flex+autodiff", "flex+autodiff(balanced)");
}
Test(autodiff, balanced_finite_differences_fusion) {
  balanced_matches_none("ndarray+fusion+autodiff", "ndarray+fusion+autodiff(balanced)");
}

/* -------------------------------------------------------------- the rest */

static bext_tensor *tracked(const bext_device *d, int64_t n) {
  double v[16];
  for (int64_t i = 0; i < n; i++) v[i] = 0.25 * (double)(i + 1) - 1.0;
  return bext_require_grad(bext_from_data(v, BEXT_F64, (int64_t[]){n}, 1, d));
}

Test(autodiff, every_op_has_a_rule_row) {
  for (int op = 0; op < BXR_OP_COUNT; op++) {
    const struct bxad_rule *r = &bxad_rules[op];
    cr_expect_neq(r->kind, BXAD_UNLISTED, "op '%s' has no row in the autodiff rule table", bxr_op_name(op));
    cr_expect(r->kind != BXAD_DIFF || r->backward, "op '%s' is differentiable without a rule", bxr_op_name(op));
  }
}

/* No differentiable op is "not yet" today; the row kind and its message
 * stay for the rules to come, checked here on the table. */
Test(autodiff, not_yet_ops_fail_the_forward_call) {
  for (int op = 0; op < BXR_OP_COUNT; op++)
    cr_expect_neq(bxad_rules[op].kind, BXAD_NOT_YET, "op '%s' is still \"not yet\"", bxr_op_name(op));
}

/* zeros in prod: exact (the function is multilinear), one zero and two */
static void expect_grad(const bext_device *d, const double *x, int rank, const int64_t *shape, bool whole,
                        const double *want, int64_t n) {
  bext_tensor *t = bext_require_grad(bext_from_data(x, BEXT_F64, shape, rank, d));
  bext_tensor *p = whole ? bext_prod(bext_retain(t)) : bext_sum(bext_prod_dim(bext_retain(t), 1, false));
  bext_grads *g = bext_backward(p);
  cr_assert_not_null(g, "%s", bext_last_error());
  bext_tensor *gt = bext_grad(g, t);
  double v[16];
  cr_assert(bext_read(gt, v, (size_t)n * sizeof *v), "%s", bext_last_error());
  for (int64_t i = 0; i < n; i++) cr_expect_eq(v[i], want[i], "[%lld] = %g, want %g", (long long)i, v[i], want[i]);
  bext_release(gt);
  bext_grads_free(g);
  bext_release(p);
  bext_release(t);
}

Test(autodiff, prod_with_zeros) {
  for (int k = 0; k < NDEVS; k++) {
    const bext_device *d = dev_of(DEVS[k]);
    expect_grad(d, (double[]){2, 0, 3, 4}, 1, (int64_t[]){4}, true, (double[]){0, 24, 0, 0}, 4);
    expect_grad(d, (double[]){2, 0, 3, 0}, 1, (int64_t[]){4}, true, (double[]){0, 0, 0, 0}, 4);
    /* rows: one zero, two zeros, none */
    expect_grad(d, (double[]){2, 0, 3, 0, 0, 5, 1, 2, 4}, 2, (int64_t[]){3, 3}, false,
                (double[]){0, 6, 0, 0, 0, 0, 8, 4, 2}, 9);
  }
}

/* max/min ties: the gradient is split evenly (PyTorch's amax/amin) */
Test(autodiff, max_min_ties_split_evenly) {
  for (int k = 0; k < NDEVS; k++) {
    const bext_device *d = dev_of(DEVS[k]);
    bext_tensor *x = bext_require_grad(
        bext_from_data((double[]){1, 3, 3, 2, -1, -1, 0, -1}, BEXT_F64, (int64_t[]){2, 4}, 2, d));
    bext_tensor *l = bext_add(bext_max_all(bext_retain(x)), bext_sum(bext_min_dim(bext_retain(x), 1, false)));
    bext_grads *g = bext_backward(l);
    cr_assert_not_null(g, "%s", bext_last_error());
    bext_tensor *gx = bext_grad(g, x);
    double v[8], want[8] = {1, 0.5, 0.5, 0, 1.0 / 3, 1.0 / 3, 0, 1.0 / 3};
    cr_assert(bext_read(gx, v, sizeof v));
    for (int i = 0; i < 8; i++) cr_expect(fabs(v[i] - want[i]) < 1e-15, "%s [%d] = %g, want %g", DEVS[k], i, v[i], want[i]);
    bext_release(gx);
    bext_grads_free(g);
    bext_release(l);
    bext_release(x);
  }
}

/* Every no-gradient row a tracked tensor can reach (a float first input)
 * is called here with one and gives a constant; the list is checked
 * against the table, so a new no-gradient op must join it.  (Bool-only
 * ops and creation ops never see a tracked input.) */
Test(autodiff, no_gradient_ops_give_constants) {
  const bext_device *d = dev_of("flex+autodiff");
  bext_tensor *x = tracked(d, 4);
#define XR bext_retain(x)
  struct {
    int code;
    bext_tensor *out;
  } outs[] = {
      {BXR_OP_EQ, bext_eq(XR, XR)}, {BXR_OP_NE, bext_ne(XR, XR)}, {BXR_OP_GT, bext_gt(XR, XR)},
      {BXR_OP_GE, bext_ge(XR, XR)}, {BXR_OP_LT, bext_lt(XR, XR)}, {BXR_OP_LE, bext_le(XR, XR)},
      {BXR_OP_EQ_SCALAR, bext_eq_scalar(XR, 0.5)}, {BXR_OP_NE_SCALAR, bext_ne_scalar(XR, 0.5)},
      {BXR_OP_GT_SCALAR, bext_gt_scalar(XR, 0.0)}, {BXR_OP_GE_SCALAR, bext_ge_scalar(XR, 0.0)},
      {BXR_OP_LT_SCALAR, bext_lt_scalar(XR, 0.0)}, {BXR_OP_LE_SCALAR, bext_le_scalar(XR, 0.0)},
      {BXR_OP_FLOOR, bext_floor(XR)}, {BXR_OP_CEIL, bext_ceil(XR)}, {BXR_OP_ROUND, bext_round(XR)},
      {BXR_OP_SIGN, bext_sign(XR)}, {BXR_OP_ARGMAX, bext_argmax(XR)}, {BXR_OP_ARGMIN, bext_argmin(XR)},
      {BXR_OP_CAST, bext_cast(XR, BEXT_I32)}, {BXR_OP_CAST, bext_cast(XR, BEXT_BOOL)},
  };
#undef XR
  bool seen[BXR_OP_COUNT] = {false};
  for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++) {
    cr_assert_not_null(outs[i].out, "%s: %s", bxr_op_name(outs[i].code), bext_last_error());
    cr_expect(!bext_is_tracked(outs[i].out), "%s's output is tracked", bxr_op_name(outs[i].code));
    seen[outs[i].code] = true;
    bext_release(outs[i].out);
  }
  for (int op = 0; op < BXR_OP_COUNT; op++)
    if (bxad_rules[op].kind == BXAD_NO_GRAD && bxr_op_info[op].nin != 0 && (bxr_op_info[op].kinds[0] & BXR_KF))
      cr_expect(seen[op], "no-gradient op '%s' takes floats but is not checked here", bxr_op_name(op));
  /* creation ops and from_data: constants */
  bext_tensor *z = bext_zeros((int64_t[]){2}, 1, BEXT_F32, d);
  cr_expect(!bext_is_tracked(z));
  /* a loss reaching x only through floor: x gets no gradient (NULL, no error) */
  bext_tensor *l = bext_sum(bext_add(bext_mul(bext_floor(bext_retain(x)), bext_retain(x)), bext_retain(x)));
  bext_grads *g = bext_backward(l);
  cr_assert_not_null(g, "%s", bext_last_error());
  bext_tensor *y = tracked(d, 4);
  uint64_t errs = bext_error_count();
  cr_expect_null(bext_grad(g, y));
  cr_expect_null(bext_grad(g, z));
  cr_expect_eq(bext_error_count(), errs, "NULL for no gradient sets no error");
  bext_tensor *gx = bext_grad(g, x);  /* d/dx (floor(x) * x + x) = floor(x) + 1 */
  double v[4], xv[4];
  cr_assert(bext_read(gx, v, sizeof v) && bext_read(x, xv, sizeof xv));
  for (int i = 0; i < 4; i++) cr_expect_eq(v[i], floor(xv[i]) + 1.0);
  bext_release(gx);
  bext_grads_free(g);
  bext_release(l);
  bext_release(y);
  bext_release(z);
  bext_release(x);
}

Test(autodiff, api_contracts) {
  const bext_device *flex = dev_of("flex"), *ad = dev_of("flex+autodiff");
  cr_assert_null(bext_require_grad(bext_from_data((double[]){1}, BEXT_F64, (int64_t[]){1}, 1, flex)));
  cr_expect(strstr(bext_last_error(), "device 'flex'") && strstr(bext_last_error(), "+autodiff"), "%s",
            bext_last_error());
  cr_assert_null(bext_require_grad(bext_from_data((int32_t[]){1}, BEXT_I32, (int64_t[]){1}, 1, ad)));
  cr_expect(strstr(bext_last_error(), "float dtype"), "%s", bext_last_error());
  bext_tensor *x = tracked(ad, 3);
  cr_expect(bext_is_tracked(x));
  cr_expect(!bext_is_tracked(NULL));
  /* a non-scalar loss */
  bext_tensor *y = bext_mul_scalar(bext_retain(x), 2.0);
  cr_assert_null(bext_backward(y));
  cr_expect(strstr(bext_last_error(), "rank-0"), "%s", bext_last_error());
  /* an untracked loss */
  bext_tensor *c = bext_sum(bext_detach(bext_retain(x)));
  cr_expect(!bext_is_tracked(c));
  cr_assert_null(bext_backward(c));
  cr_expect(strstr(bext_last_error(), "not tracked"), "%s", bext_last_error());
  /* detach keeps the values */
  double a[3], b[3];
  bext_tensor *dx = bext_detach(bext_retain(x));
  cr_assert(bext_read(dx, a, sizeof a) && bext_read(x, b, sizeof b));
  cr_expect(!memcmp(a, b, sizeof a));
  cr_expect_eq(bext_device_of(dx), ad);
  bext_release(dx);
  bext_release(c);
  bext_release(y);
  bext_release(x);
}

Test(autodiff, the_layer_is_available_on_both_backends) {
  const char *specs[] = {"flex+autodiff", "ndarray+autodiff", "flex+autodiff(balanced)"};
  for (int i = 0; i < 3; i++) {
    const bext_device *d = dev_of(specs[i]);
    cr_expect_str_eq(bext_device_layer(d), "autodiff");
  }
}

Test(autodiff, cast_between_float_dtypes) {
  const bext_device *d = dev_of("flex+autodiff");
  float v[3] = {1, 2, 3};
  bext_tensor *x = bext_require_grad(bext_from_data(v, BEXT_F32, (int64_t[]){3}, 1, d));
  bext_tensor *w = bext_from_data((double[]){0.5, -1.5, 2.25}, BEXT_F64, (int64_t[]){3}, 1, d);
  bext_tensor *l = bext_sum(bext_mul(bext_cast(bext_retain(x), BEXT_F64), w));
  bext_grads *g = bext_backward(l);
  cr_assert_not_null(g, "%s", bext_last_error());
  bext_tensor *gx = bext_grad(g, x);
  cr_assert_eq(bext_dtype_of(gx), BEXT_F32);
  float r[3];
  cr_assert(bext_read(gx, r, sizeof r));
  cr_expect(r[0] == 0.5f && r[1] == -1.5f && r[2] == 2.25f);
  bext_release(gx);
  bext_grads_free(g);
  bext_release(l);
  bext_release(x);
}

/* -------------------------------------------------- lifetime, determinism */

static bext_tensor *small_graph(bext_tensor *x, bext_tensor *w) {
  bext_tensor *h = bext_tanh(bext_matmul(bext_retain(x), bext_retain(w)));
  return bext_mean(bext_mul(bext_sigmoid(bext_retain(h)), h));
}

Test(autodiff, graphs_dropped_without_backward_are_freed) {
  for (int k = 0; k < NDEVS; k++) {
    const bext_device *d = dev_of(DEVS[k]);
    count_start();
    bext_tensor *x = bext_require_grad(bext_ones((int64_t[]){4, 3}, 2, BEXT_F64, d));
    bext_tensor *w = bext_require_grad(bext_full((int64_t[]){3, 2}, 2, 0.5, BEXT_F64, d));
    bext_tensor *l = small_graph(x, w);
    cr_assert_not_null(l, "%s", bext_last_error());
    cr_expect_gt(count_now(), 0);
    bext_release(l);  /* no backward */
    bext_release(w);
    bext_release(x);
    cr_expect_eq(count_now(), 0, "%s: %lld bytes left after the graph's tensors died", DEVS[k], count_now());
    /* and with backward: the grads hold only leaf nodes and gradients */
    x = bext_require_grad(bext_ones((int64_t[]){4, 3}, 2, BEXT_F64, d));
    w = bext_require_grad(bext_full((int64_t[]){3, 2}, 2, 0.5, BEXT_F64, d));
    l = small_graph(x, w);
    bext_grads *g = bext_backward(l);
    cr_assert_not_null(g, "%s", bext_last_error());
    bext_release(l);
    bext_release(w);
    bext_release(x);
    bext_grads_free(g);
    cr_expect_eq(count_now(), 0, "%s: %lld bytes left after backward", DEVS[k], count_now());
  }
}

/* sgd: the update by bext_sgd_step after the loss is released (in place),
 * else composed from core ops while the graph is alive */
static void training_loop_does_not_grow(const char *spec, bool sgd) {
  const bext_device *d = dev_of(spec);
  count_start();
  double xs[8 * 3], ys[8];
  for (int i = 0; i < 8; i++) {
    ys[i] = 0;
    for (int j = 0; j < 3; j++) xs[i * 3 + j] = 0.1 * (i + 1) * (j - 1), ys[i] += (j + 1) * xs[i * 3 + j];
  }
  bext_tensor *x = bext_from_data(xs, BEXT_F64, (int64_t[]){8, 3}, 2, d);
  bext_tensor *y = bext_from_data(ys, BEXT_F64, (int64_t[]){8, 1}, 2, d);
  bext_tensor *w = bext_require_grad(bext_zeros((int64_t[]){3, 1}, 2, BEXT_F64, d));
  long long at5 = 0;
  double first = 0, last = 0;
  for (int step = 0; step < 50; step++) {
    bext_tensor *err = bext_sub(bext_matmul(bext_retain(x), bext_retain(w)), bext_retain(y));
    bext_tensor *loss = bext_mean(bext_mul(bext_retain(err), err));
    cr_assert_not_null(loss, "%s", bext_last_error());
    double lv;
    cr_assert(bext_read(loss, &lv, sizeof lv));
    if (step == 0) first = lv;
    last = lv;
    bext_grads *g = bext_backward(loss);
    cr_assert_not_null(g, "%s", bext_last_error());
    bext_tensor *gw = bext_grad(g, w);
    if (sgd) {
      bext_release(loss);
      w = bext_sgd_step(w, gw, 0.5);
      bext_release(gw);
      cr_assert_not_null(w, "%s", bext_last_error());
    } else {
      w = bext_require_grad(bext_sub(bext_detach(w), bext_mul_scalar(gw, 0.5)));
      bext_release(loss);
    }
    bext_grads_free(g);
    if (step == 5) at5 = count_now();
  }
  cr_expect_eq(count_now(), at5, "%s: live bytes grew from %lld (step 5) to %lld (step 50)", spec, at5, count_now());
  cr_expect_lt(last, first * 0.1, "loss %g -> %g", first, last);
  bext_release(w);
  bext_release(y);
  bext_release(x);
  cr_expect_eq(count_now(), 0);
}
Test(autodiff, a_training_loop_does_not_grow) {
  training_loop_does_not_grow("flex+autodiff", false);
  training_loop_does_not_grow("flex+autodiff(balanced)", false);
  training_loop_does_not_grow("flex+autodiff", true);
  training_loop_does_not_grow("ndarray+autodiff", true);
}

Test(autodiff, a_square_gets_twice_its_input) {
  /* mul(x, x): the rule hands one product out for both operands; their
   * sum is exactly 2x (and 2 g x through a scaled loss), on every strategy */
  for (int k = 0; k < NDEVS; k++) {
    const bext_device *d = dev_of(DEVS[k]);
    bext_tensor *x = bext_require_grad(bext_random_normal((int64_t[]){4, 5}, 2, 0, 1, 7, BEXT_F32, d));
    bext_tensor *sq = bext_sin(bext_retain(x));   /* an interior value squared, too */
    bext_tensor *l = bext_add(bext_sum(bext_mul(bext_retain(x), bext_retain(x))),
                              bext_mul_scalar(bext_sum(bext_mul(bext_retain(sq), bext_retain(sq))), 0.5));
    bext_release(sq);
    bext_grads *g = bext_backward(l);
    cr_assert_not_null(g, "%s: %s", DEVS[k], bext_last_error());
    bext_tensor *gx = bext_grad(g, x);
    float xv[20], sv[20], cv[20], gv[20];
    bext_tensor *s = bext_sin(bext_detach(bext_retain(x))), *c = bext_cos(bext_detach(bext_retain(x)));
    cr_assert(bext_read(x, xv, sizeof xv) && bext_read(gx, gv, sizeof gv) && bext_read(s, sv, sizeof sv) &&
              bext_read(c, cv, sizeof cv));
    for (int i = 0; i < 20; i++) {
      /* d/dx [x^2 + sin(x)^2 / 2] = 2x + sin(x) cos(x), each product rounded as the rules do */
      float want = 2.0f * xv[i] + (float)(0.5 * (double)(2.0f * sv[i])) * cv[i];
      cr_expect(fabsf(gv[i] - want) <= 1e-6f * (1.0f + fabsf(want)), "%s: element %d: %g, expected %g", DEVS[k], i,
                gv[i], want);
    }
    bext_release(s);
    bext_release(c);
    bext_release(gx);
    bext_grads_free(g);
    bext_release(l);
    bext_release(x);
  }
}

Test(autodiff, backward_twice_is_bit_identical) {
  for (int k = 0; k < NDEVS; k++) {
    const bext_device *d = dev_of(DEVS[k]);
    bext_tensor *x = bext_require_grad(bext_random_normal((int64_t[]){16, 8}, 2, 0, 1, 1, BEXT_F32, d));
    bext_tensor *w = bext_require_grad(bext_random_normal((int64_t[]){8, 4}, 2, 0, 1, 2, BEXT_F32, d));
    bext_tensor *l = small_graph(x, w);
    cr_assert_not_null(l, "%s", bext_last_error());
    float a[32], b[32];
    for (int run = 0; run < 2; run++) {
      bext_grads *g = bext_backward(l);
      cr_assert_not_null(g, "%s", bext_last_error());
      bext_tensor *gw = bext_grad(g, w);
      cr_assert(bext_read(gw, run ? b : a, sizeof a));
      bext_release(gw);
      bext_grads_free(g);
    }
    cr_expect(!memcmp(a, b, sizeof a), "%s: two backward runs differ", DEVS[k]);
    bext_release(l);
    bext_release(w);
    bext_release(x);
  }
}

/* Two graphs over one leaf w, each using it twice, merged by one add: w's
 * gradient is the sum of four terms, in the order backward runs their
 * steps.  That order must come from the merged graph's shape, not from
 * which graph was built first (test_autodiff_threads.c builds them on two
 * threads at once). */
#define MERGE_N 512
static bext_tensor *merge_branch(bext_tensor *w, double k) {
  bext_tensor *s = bext_sin(bext_retain(w));
  return bext_sum(bext_mul(bext_exp(bext_mul_scalar(w, k)), s));
}
static void merged_grad(const char *spec, bool a_first, float *out) {
  const bext_device *d = dev_of(spec);
  bext_tensor *w = bext_require_grad(bext_random_normal((int64_t[]){MERGE_N}, 1, 0, 1, 41, BEXT_F32, d));
  bext_tensor *a, *b;
  if (a_first) {
    a = merge_branch(bext_retain(w), 1.7);
    b = merge_branch(bext_retain(w), -0.3);
  } else {
    b = merge_branch(bext_retain(w), -0.3);
    a = merge_branch(bext_retain(w), 1.7);
  }
  bext_tensor *l = bext_add(a, b);
  bext_grads *g = bext_backward(l);
  cr_assert_not_null(g, "%s: %s", spec, bext_last_error());
  bext_tensor *gw = bext_grad(g, w);
  cr_assert(gw && bext_read(gw, out, MERGE_N * sizeof *out), "%s: %s", spec, bext_last_error());
  bext_release(gw);
  bext_grads_free(g);
  bext_release(l);
  bext_release(w);
}
Test(autodiff, merged_graphs_sum_in_an_order_given_by_their_shape) {
  for (int k = 0; k < NDEVS; k++) {
    float ab[MERGE_N], ba[MERGE_N];
    merged_grad(DEVS[k], true, ab);
    merged_grad(DEVS[k], false, ba);
    cr_expect(!memcmp(ab, ba, sizeof ab), "%s: building the second graph first changed w's gradient", DEVS[k]);
  }
}

Test(autodiff, a_long_chain_is_freed_without_recursion) {
  /* node release walks a work list: 100k nodes must not overflow the stack */
  const bext_device *d = dev_of("flex+autodiff");
  count_start();
  bext_tensor *x = tracked(d, 2), *y = bext_retain(x);
  for (int i = 0; i < 100000; i++) y = bext_add_scalar(y, 1e-3);
  bext_tensor *l = bext_sum(y);
  bext_grads *g = bext_backward(l);
  cr_assert_not_null(g, "%s", bext_last_error());
  bext_tensor *gx = bext_grad(g, x);
  double v[2];
  cr_assert(bext_read(gx, v, sizeof v));
  cr_expect(v[0] == 1.0 && v[1] == 1.0);
  bext_release(gx);
  bext_grads_free(g);
  bext_release(l);
  bext_release(x);
  cr_expect_eq(count_now(), 0);
}

/* ------------------------------------------------ balanced checkpointing */

Test(autodiff, memory_bound_rows_recompute_compute_bound_rows_do_not) {
  int mem[] = {BXR_OP_SIN, BXR_OP_ADD, BXR_OP_MUL_SCALAR, BXR_OP_RESHAPE, BXR_OP_GATHER, BXR_OP_CAT, BXR_OP_CAST,
               BXR_OP_MASK_WHERE};
  int cmp[] = {BXR_OP_MATMUL, BXR_OP_SUM, BXR_OP_MEAN, BXR_OP_PROD, BXR_OP_CUMSUM, BXR_OP_MAX_REDUCE};
  for (size_t i = 0; i < sizeof mem / sizeof mem[0]; i++)
    cr_expect(bxad_rules[mem[i]].recompute, "%s is memory-bound", bxr_op_name(mem[i]));
  for (size_t i = 0; i < sizeof cmp / sizeof cmp[0]; i++)
    cr_expect(!bxad_rules[cmp[i]].recompute, "%s is compute-bound", bxr_op_name(cmp[i]));
  for (int op = 0; op < BXR_OP_COUNT; op++)
    cr_expect(bxad_rules[op].kind == BXAD_DIFF || !bxad_rules[op].recompute, "%s: recompute without a rule",
              bxr_op_name(op));
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* 32 memory-bound ops (sin, *0.5, exp, tanh, + a broadcast row, again),
 * summed: under none their rules keep 19 activations of x's size alive
 * until the graph dies; balanced keeps a checkpoint every
 * BXAD_MAX_DEPTH ops and recomputes the rest segment by segment. */
#define CHAIN_ROWS 1024
#define CHAIN_COLS 1024
static bext_tensor *chain32(bext_tensor *x, bext_tensor *row) {
  for (int i = 0; i < 32; i++) {
    switch (i % 5) {
    case 0: x = bext_sin(x); break;
    case 1: x = bext_mul_scalar(x, 0.5); break;
    case 2: x = bext_exp(x); break;
    case 3: x = bext_tanh(x); break;
    default: x = bext_add(x, bext_retain(row)); break;
    }
  }
  return bext_sum(x);
}

/* Peak live bytes of the inner device over forward + backward of chain32
 * on spec, x's gradient in grad (CHAIN_ROWS * CHAIN_COLS floats) and the
 * backward's wall time in *bw_ms.  The leaf and the row are made before
 * the peak is reset: both strategies hold them alike. */
static size_t chain_peak(const char *spec, float *grad, double *bw_ms) {
  const bext_device *d = dev_of(spec), *in = bext_device_inner(d);
  bext_tensor *x =
      bext_require_grad(bext_random_normal((int64_t[]){CHAIN_ROWS, CHAIN_COLS}, 2, 0, 1, 7, BEXT_F32, d));
  bext_tensor *row = bext_random_normal((int64_t[]){CHAIN_COLS}, 1, 0, 0.1, 8, BEXT_F32, d);
  cr_assert(x && row, "%s", bext_last_error());
  cr_assert(bext_memory_reset_peak(in));
  bext_tensor *loss = chain32(bext_retain(x), row);
  cr_assert_not_null(loss, "%s: %s", spec, bext_last_error());
  double t0 = now_ms();
  bext_grads *g = bext_backward(loss);
  *bw_ms = now_ms() - t0;
  cr_assert_not_null(g, "%s: %s", spec, bext_last_error());
  bext_memory st;
  cr_assert(bext_memory_stats(in, &st));
  bext_tensor *gx = bext_grad(g, x);
  cr_assert(bext_read(gx, grad, (size_t)CHAIN_ROWS * CHAIN_COLS * sizeof *grad), "%s", bext_last_error());
  bext_release(gx);
  bext_grads_free(g);
  bext_release(loss);
  bext_release(row);
  bext_release(x);
  return st.peak_bytes;
}

Test(autodiff, balanced_chain_peak_is_at_most_six_tenths_of_none) {
  for (int k = 0; k < 2; k++) {
    const char *none = k ? "ndarray+autodiff" : "flex+autodiff";
    const char *bal = k ? "ndarray+autodiff(balanced)" : "flex+autodiff(balanced)";
    size_t n = (size_t)CHAIN_ROWS * CHAIN_COLS;
    float *ga = malloc(n * sizeof *ga), *gb = malloc(n * sizeof *gb);
    double ta, tb;
    size_t pn = chain_peak(none, ga, &ta), pb = chain_peak(bal, gb, &tb);
    double ratio = (double)pb / (double)pn;
    printf("32-op chain, %zu f32: peak live %.1f MiB on %s (backward %.1f ms), %.1f MiB on %s (backward %.1f ms): "
           "%.2fx\n",
           n, (double)pn / 1048576.0, none, ta, (double)pb / 1048576.0, bal, tb, ratio);
    cr_expect(!memcmp(ga, gb, n * sizeof *ga), "%s and %s give different gradients", none, bal);
    cr_expect_leq(ratio, 0.6, "%s: peak %zu bytes, %s: %zu bytes (%.2fx, at most 0.6x expected)", bal, pb, none, pn,
                  ratio);
    free(ga);
    free(gb);
  }
}

/* Matmuls and reductions (checkpoints) between elementwise runs, a view, a
 * constant mask and a tensor used twice. */
static bext_tensor *mixed_graph(bext_tensor *x, bext_tensor *w1, bext_tensor *w2, bext_tensor *mask) {
  bext_tensor *h = bext_tanh(bext_matmul(bext_retain(x), w1));                    /* [8,6] */
  h = bext_mul(bext_sigmoid(bext_retain(h)), h);                                   /* used twice */
  bext_tensor *s = bext_sum_dim(bext_exp(bext_retain(h)), 1, true);                /* [8,1] */
  h = bext_div(h, bext_add_scalar(s, 1.0));
  h = bext_mask_fill(bext_transpose(h), mask, 0.0);                                /* [6,8] */
  bext_tensor *y = bext_cumsum(bext_matmul(bext_transpose(h), w2), 1);           /* [8,4] */
  bext_tensor *sy = bext_sin(bext_retain(y));  /* before cos consumes y */
  y = bext_mul(sy, bext_cos(y));
  return bext_add(bext_mean(bext_mul(bext_retain(y), y)), bext_max_all(bext_reshape(bext_exp(x), (int64_t[]){-1}, 1)));
}

/* Gradients of mixed_graph's three leaves on spec, row-major, in out[]. */
static void mixed_grads(const char *spec, double *out[3]) {
  const bext_device *d = dev_of(spec);
  const int64_t shapes[3][2] = {{8, 5}, {5, 6}, {6, 4}};
  bext_tensor *leaf[3];
  for (int i = 0; i < 3; i++)
    leaf[i] = bext_require_grad(bext_random_normal(shapes[i], 2, 0, 0.7, 11 + (unsigned)i, BEXT_F64, d));
  bool mv[48];
  for (int i = 0; i < 48; i++) mv[i] = i % 7 == 3;
  bext_tensor *mask = bext_from_data(mv, BEXT_BOOL, (int64_t[]){6, 8}, 2, d);
  bext_tensor *l = mixed_graph(bext_retain(leaf[0]), bext_retain(leaf[1]), bext_retain(leaf[2]), mask);
  cr_assert_not_null(l, "%s: %s", spec, bext_last_error());
  bext_grads *g = bext_backward(l);
  cr_assert_not_null(g, "%s: %s", spec, bext_last_error());
  for (int i = 0; i < 3; i++) {
    size_t n = (size_t)(shapes[i][0] * shapes[i][1]);
    out[i] = malloc(n * sizeof *out[i]);
    bext_tensor *gt = bext_grad(g, leaf[i]);
    cr_assert(gt && bext_read(gt, out[i], n * sizeof *out[i]), "%s: %s", spec, bext_last_error());
    bext_release(gt);
  }
  bext_grads_free(g);
  bext_release(l);
  for (int i = 0; i < 3; i++) bext_release(leaf[i]);
}

Test(autodiff, balanced_mixed_graph_is_identical_and_leak_free) {
  for (int k = 0; k < 2; k++) {
    const char *none = k ? "ndarray+autodiff" : "flex+autodiff";
    const char *bal = k ? "ndarray+autodiff(balanced)" : "flex+autodiff(balanced)";
    double *a[3], *b[3];
    mixed_grads(none, a);
    count_start();
    mixed_grads(bal, b);
    cr_expect_eq(count_now(), 0, "%s: %lld bytes left after the graph died", bal, count_now());
    const int n[3] = {40, 30, 24};
    for (int i = 0; i < 3; i++) {
      cr_expect(!memcmp(a[i], b[i], (size_t)n[i] * sizeof *a[i]), "%s: leaf %d's gradient differs from %s", bal, i,
                none);
      free(a[i]);
      free(b[i]);
    }
  }
}

/* Ten SGD steps of a two-layer MLP (relu, mean squared error) on spec;
 * the final weights in w1 (16x32) and w2 (32x1). */
static void mlp_steps(const char *spec, float *w1_out, float *w2_out) {
  const bext_device *d = dev_of(spec);
  bext_tensor *x = bext_random_normal((int64_t[]){64, 16}, 2, 0, 1, 21, BEXT_F32, d);
  bext_tensor *y = bext_sum_dim(bext_sin(bext_retain(x)), 1, true);
  bext_tensor *w1 = bext_require_grad(bext_random_normal((int64_t[]){16, 32}, 2, 0, 0.25, 22, BEXT_F32, d));
  bext_tensor *w2 = bext_require_grad(bext_random_normal((int64_t[]){32, 1}, 2, 0, 0.25, 23, BEXT_F32, d));
  for (int step = 0; step < 10; step++) {
    bext_tensor *h = bext_relu(bext_matmul(bext_retain(x), bext_retain(w1)));
    bext_tensor *err = bext_sub(bext_matmul(h, bext_retain(w2)), bext_retain(y));
    bext_tensor *loss = bext_mean(bext_mul(bext_retain(err), err));
    bext_grads *g = bext_backward(loss);
    cr_assert_not_null(g, "%s: %s", spec, bext_last_error());
    bext_tensor *g1 = bext_grad(g, w1), *g2 = bext_grad(g, w2);
    w1 = bext_require_grad(bext_sub(bext_detach(w1), bext_mul_scalar(g1, 0.1)));
    w2 = bext_require_grad(bext_sub(bext_detach(w2), bext_mul_scalar(g2, 0.1)));
    bext_grads_free(g);
    bext_release(loss);
  }
  cr_assert(bext_read(w1, w1_out, 16 * 32 * sizeof *w1_out) && bext_read(w2, w2_out, 32 * sizeof *w2_out));
  bext_release(w1);
  bext_release(w2);
  bext_release(x);
  bext_release(y);
}

Test(autodiff, balanced_mlp_training_is_identical_to_none) {
  for (int k = 0; k < 2; k++) {
    const char *none = k ? "ndarray+autodiff" : "flex+autodiff";
    const char *bal = k ? "ndarray+autodiff(balanced)" : "flex+autodiff(balanced)";
    float a1[16 * 32], a2[32], b1[16 * 32], b2[32];
    mlp_steps(none, a1, a2);
    mlp_steps(bal, b1, b2);
    cr_expect(!memcmp(a1, b1, sizeof a1) && !memcmp(a2, b2, sizeof a2), "%s: weights differ from %s's after 10 steps",
              bal, none);
  }
}

Test(autodiff, balanced_long_chain_recomputes_in_bounded_depth) {
  /* 100k recomputable ops: checkpoints every BXAD_MAX_DEPTH keep the
   * recomputation's recursion shallow, and release still walks a list */
  const bext_device *d = dev_of("flex+autodiff(balanced)");
  count_start();
  bext_tensor *x = tracked(d, 2), *y = bext_retain(x);
  for (int i = 0; i < 100000; i++) y = i % 2 ? bext_add_scalar(y, 1e-3) : bext_mul(bext_retain(y), y);
  bext_tensor *l = bext_sum(y);
  bext_grads *g = bext_backward(l);
  cr_assert_not_null(g, "%s", bext_last_error());
  bext_grads_free(g);
  bext_release(l);
  bext_release(x);
  cr_expect_eq(count_now(), 0);
}

/* Fails the (g_fail_after+1)-th allocation from now, counting as the
 * counting hook does: every error path of a balanced backward
 * (recomputation, cache, plan) must fail cleanly and free everything. */
static long long g_fail_after = -1;
static void *failing_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  if (nsize && g_fail_after >= 0 && g_fail_after-- == 0) return NULL;
  return counting_alloc(ud, ptr, osize, nsize);
}

static bext_tensor *small_chain(bext_tensor *x, bext_tensor *row) {
  for (int i = 0; i < 20; i++) {
    switch (i % 4) {
    case 0: x = bext_sin(x); break;
    case 1: x = bext_exp(x); break;
    case 2: x = bext_mul(bext_retain(x), x); break;
    default: x = bext_add(x, bext_retain(row)); break;
    }
  }
  return bext_sum(x);
}

Test(autodiff, balanced_backward_fails_cleanly_at_every_allocation) {
  const bext_device *d = dev_of("flex+autodiff(balanced)");
  static double want[1024], got[1024];  /* past the inline size: buffers come from the hook too */
  bool done = false;
  int failed = 0;
  for (int k = -1; !done; k++) {
    cr_assert_lt(k, 100000, "backward never succeeded");
    count_start();
    bext_tensor *x = bext_require_grad(bext_random_normal((int64_t[]){8, 128}, 2, 0, 0.3, 31, BEXT_F64, d));
    bext_tensor *row = bext_random_normal((int64_t[]){128}, 1, 0, 0.1, 32, BEXT_F64, d);
    bext_tensor *l = small_chain(bext_retain(x), row);
    cr_assert_not_null(l, "%s", bext_last_error());
    g_fail_after = k;  /* k == -1: the reference run, nothing fails */
    bext_set_allocator(failing_alloc, NULL);
    bext_grads *g = bext_backward(l);
    g_fail_after = -1;
    bext_set_allocator(counting_alloc, NULL);
    if (g) {
      bext_tensor *gx = bext_grad(g, x);
      cr_assert(gx && bext_read(gx, k < 0 ? want : got, sizeof want), "%s", bext_last_error());
      bext_release(gx);
      bext_grads_free(g);
      if (k >= 0) {
        cr_expect(!memcmp(want, got, sizeof want), "backward after %d allocations differs", k);
        done = true;
      }
    } else {
      cr_expect(k >= 0 && strlen(bext_last_error()) > 0, "failure %d set no error", k);
      failed++;
    }
    bext_release(l);
    bext_release(row);
    bext_release(x);
    cr_expect_eq(count_now(), 0, "failing allocation %d: %lld bytes left", k, count_now());
  }
  /* the thread's block cache and Flex's buffer cache serve most requests
   * once warm: each failure point is one the hook sees */
  cr_expect_gt(failed, 20, "only %d allocations in backward: the recomputations did not run", failed);
  printf("balanced backward: failed cleanly at each of its %d hook allocations\n", failed);
}

/* ---------------------------------------------------------- custom nodes */

static bool bw_fails(void *st, bext_tensor *g, bext_tensor *const *sv, const bool *nd, bext_tensor **gin) {
  (void)st, (void)g, (void)sv, (void)nd, (void)gin;
  return bext_set_error("the user's backward says no");
}
static bool bw_silent(void *st, bext_tensor *g, bext_tensor *const *sv, const bool *nd, bext_tensor **gin) {
  (void)st, (void)g, (void)sv, (void)nd, (void)gin;
  return false;
}
static bool bw_wrong_shape(void *st, bext_tensor *g, bext_tensor *const *sv, const bool *nd, bext_tensor **gin) {
  (void)st, (void)sv;
  for (int i = 0; i < 2; i++)
    if (nd[i]) gin[i] = bext_sum_dim(bext_retain(g), 0, false);
  return true;
}
static bool bw_missing(void *st, bext_tensor *g, bext_tensor *const *sv, const bool *nd, bext_tensor **gin) {
  (void)st, (void)g, (void)sv, (void)nd, (void)gin;
  return true;
}
static bool bw_wrong_device(void *st, bext_tensor *g, bext_tensor *const *sv, const bool *nd, bext_tensor **gin) {
  (void)st, (void)sv;
  const bext_device *nd_ = bext_device_get("ndarray");
  for (int i = 0; i < 2; i++)
    if (nd[i]) gin[i] = bext_zeros(bext_shape(g), bext_rank(g), bext_dtype_of(g), nd_);
  return true;
}

/* backward with bw over a*sin(b): NULL + its error message in *msg */
static bext_grads *custom_backward_with(const bext_device *d, bext_backward_fn bw) {
  bext_tensor *a = bext_require_grad(bext_full((int64_t[]){2, 3}, 2, 0.5, BEXT_F64, d));
  bext_tensor *b = bext_require_grad(bext_full((int64_t[]){2, 3}, 2, 0.25, BEXT_F64, d));
  bext_tensor *l = bext_sum(custom_sinmul(bext_retain(a), bext_retain(b), bw));
  cr_assert_not_null(l, "%s", bext_last_error());
  bext_grads *g = bext_backward(l);
  bext_release(l);
  bext_release(a);
  bext_release(b);
  return g;
}

Test(autodiff, custom_node_errors_name_the_node) {
  const bext_device *d = dev_of("flex+autodiff");
  struct {
    bext_backward_fn bw;
    const char *want;
  } bad[] = {
      {bw_fails, "the user's backward says no"},
      {bw_silent, "custom node 'test::sinmul' failed without setting an error"},
      {bw_wrong_shape, "custom node 'test::sinmul' gave input 0 a gradient [3] f64 on flex, expected [2,3] f64"},
      {bw_missing, "custom node 'test::sinmul' gave no gradient for input 0"},
      {bw_wrong_device, "gave input 0 a gradient [2,3] f64 on ndarray, expected [2,3] f64 on flex"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    g_state_frees = 0;
    bext_grads *g = custom_backward_with(d, bad[i].bw);
    cr_expect_null(g);
    cr_expect(strstr(bext_last_error(), bad[i].want), "case %zu: %s", i, bext_last_error());
    bext_grads_free(g);
    cr_expect_eq(g_state_frees, 1, "case %zu: the state was freed %d times", i, g_state_frees);
  }
}

Test(autodiff, custom_node_argument_errors) {
  const bext_device *d = dev_of("flex+autodiff"), *bal = dev_of("flex+autodiff(balanced)"), *flex = dev_of("flex");
  bext_tensor *a = bext_require_grad(bext_ones((int64_t[]){3}, 1, BEXT_F64, d));
  bext_tensor *b = bext_require_grad(bext_ones((int64_t[]){3}, 1, BEXT_F64, bal));
  bext_tensor *va = bext_autodiff_value(a);
  cr_expect_eq(bext_device_of(va), flex);
  cr_expect(!bext_is_tracked(va));
  struct {
    bext_custom_node n;
    bext_tensor *out;
    const char *want;
  } bad[] = {
      {{.name = "t::mix", .n_in = 2, .inputs = (bext_tensor *[]){a, b}, .backward = sinmul_backward},
       bext_retain(va),
       "node 't::mix': tracked inputs must share one checkpointing strategy: input 0 is on flex+autodiff "
       "(strategy none), input 1 on flex+autodiff(balanced) (strategy balanced)"},
      {{.name = "t::n", .n_in = 0, .inputs = (bext_tensor *[]){a}, .backward = sinmul_backward}, bext_retain(va),
       "n_in is 0, expected 1..64"},
      {{.name = "t::bw", .n_in = 1, .inputs = (bext_tensor *[]){a}}, bext_retain(va), "'t::bw' has no backward"},
      {{.name = "t::out", .n_in = 1, .inputs = (bext_tensor *[]){a}, .backward = sinmul_backward}, bext_retain(a),
       "the output is on flex+autodiff, expected flex"},
      {{.name = "t::nul", .n_in = 1, .inputs = (bext_tensor *[]){NULL}, .backward = sinmul_backward},
       bext_retain(va), "input 0 is NULL"},
      {{.name = "t::sv", .n_in = 1, .inputs = (bext_tensor *[]){a}, .n_saved = 1, .saved = (bext_tensor *[]){b},
        .backward = sinmul_backward},
       bext_retain(va), "saved tensor 0 is on flex+autodiff(balanced), expected flex"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    g_state_frees = 0;
    bad[i].n.state = &g_state;
    bad[i].n.state_free = state_free;
    cr_expect_null(bext_autodiff_record(&bad[i].n, bad[i].out));
    cr_expect(strstr(bext_last_error(), bad[i].want), "case %zu: %s", i, bext_last_error());
    cr_expect_eq(g_state_frees, 1, "case %zu: the state on failure was freed %d times", i, g_state_frees);
  }
  /* untracked inputs: nothing recorded, the state is freed at once, the
   * output comes back untracked on the autodiff device */
  g_state_frees = 0;
  bext_tensor *c = bext_ones((int64_t[]){3}, 1, BEXT_F64, d);
  bext_custom_node n = {.name = "t::c", .n_in = 1, .inputs = &c, .backward = sinmul_backward, .state = &g_state,
                        .state_free = state_free};
  bext_tensor *r = bext_autodiff_record(&n, bext_retain(va));
  cr_assert_not_null(r, "%s", bext_last_error());
  cr_expect(!bext_is_tracked(r));
  cr_expect_eq(bext_device_of(r), d);
  cr_expect_eq(g_state_frees, 1);
  bext_release(r);
  /* plain devices: the same code runs, value is the tensor itself */
  bext_tensor *p = bext_ones((int64_t[]){3}, 1, BEXT_F64, flex), *vp = bext_autodiff_value(p);
  cr_expect_eq(vp, p);
  n.inputs = &p;
  r = bext_autodiff_record(&n, vp);
  cr_expect_eq(r, p);
  bext_release(r);
  bext_release(p);
  bext_release(c);
  bext_release(va);
  bext_release(a);
  bext_release(b);
}

Test(autodiff, custom_nodes_die_with_their_graph) {
  const bext_device *d = dev_of("flex+autodiff");
  count_start();
  g_state_frees = 0;
  bext_tensor *a = bext_require_grad(bext_ones((int64_t[]){4}, 1, BEXT_F64, d));
  bext_tensor *b = bext_require_grad(bext_ones((int64_t[]){4}, 1, BEXT_F64, d));
  bext_tensor *l = bext_sum(custom_sinmul(bext_retain(a), bext_retain(b), sinmul_backward));
  cr_assert_not_null(l, "%s", bext_last_error());
  cr_expect_eq(g_state_frees, 0);
  bext_release(l);  /* no backward */
  cr_expect_eq(g_state_frees, 1);
  /* with backward, and 64 inputs (the most a custom node takes) */
  bext_tensor *many[BEXT_AUTODIFF_MAX_INPUTS];
  for (int i = 0; i < BEXT_AUTODIFF_MAX_INPUTS; i++) many[i] = i % 2 ? a : b;
  bext_tensor *va = bext_autodiff_value(a), *vb = bext_autodiff_value(b);
  bext_custom_node n = {.name = "t::many", .n_in = BEXT_AUTODIFF_MAX_INPUTS, .inputs = many, .n_saved = 2,
                        .saved = (bext_tensor *[]){va, vb}, .backward = sinmul_backward, .state = &g_state,
                        .state_free = state_free};
  bext_release(vb);
  /* sinmul's backward fills inputs 0 and 1 only: input 2 needs a
   * gradient too, and backward says which one is missing */
  l = bext_autodiff_record(&n, bext_mul(bext_retain(va), bext_retain(va)));
  cr_assert_not_null(l, "%s", bext_last_error());
  bext_release(va);
  bext_tensor *s = bext_sum(l);
  bext_grads *g = bext_backward(s);
  cr_expect_null(g);
  cr_expect(strstr(bext_last_error(), "gave no gradient for input 2"), "%s", bext_last_error());
  bext_release(s);
  cr_expect_eq(g_state_frees, 2);
  bext_release(a);
  bext_release(b);
  cr_expect_eq(count_now(), 0, "%lld bytes left", count_now());
}
