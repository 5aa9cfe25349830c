/* fusion_programs.c — the random program generator of the Fusion tests
 * (fusion_programs.h): each program keeps a pool of values, each one a
 * pair (the value on the eager device E and on the lazy device L), and
 * runs 6 to 15 steps that take values from the pool (moved, so an op may
 * reuse the buffer in place, or kept) and push results back: core unary,
 * scalar, view, reduction, cast, matmul and cat ops; broadcasting binary
 * ops; mask_where, gather, creation ops; elementwise chains feeding a
 * reduction; reads in the middle (sync points); and, when the config has
 * them, custom ops (extension methods) on float values.  Every value left
 * at the end is read on both and compared; a full pool drops one unread
 * (a record nobody can observe). */
#include "fusion_programs.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* xorshift64: each program's own stream, seeded from its number */
static uint64_t rng;
static uint32_t rnd(uint32_t n) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return n ? (uint32_t)((rng >> 11) % n) : 0;
}

typedef struct {
  bext_tensor *e, *l;   /* the same value on E (eager) and L (lazy) */
  bool approx;          /* its last bits may differ between the two (below) */
} pair;

enum { POOL = 8 };
struct prog {
  const fzp_config *c;
  fzp_tally *t;
  pair p[POOL];
  int n;
  int64_t base[3];
  long prog, step;   /* for messages */
};

/* Takes pool entry i for an op: a moved entry leaves the pool (the op may
 * reuse its buffer in place), a kept one is retained. */
static pair take(struct prog *g, int i) {
  pair r = g->p[i];
  if (rnd(2)) {
    bext_retain(r.e);
    bext_retain(r.l);
  } else {
    g->p[i] = g->p[--g->n];
  }
  return r;
}

static void push(struct prog *g, pair r) {
  if (g->n == POOL) {   /* full: drop a random one unread */
    int i = (int)rnd(POOL);
    bext_release(g->p[i].e);
    bext_release(g->p[i].l);
    g->p[i] = r;
  } else {
    g->p[g->n++] = r;
  }
}

static bool near(double a, double b, double tol) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  if (isinf(a) || isinf(b)) return a == b;
  return fabs(a - b) <= tol * (1 + fabs(a) + fabs(b));
}

void fzp_agree(bext_tensor *e, bext_tensor *l, double tol, const char *what) {
  cr_assert_not_null(e, "%s: %s", what, bext_last_error());
  cr_assert_not_null(l, "%s: %s", what, bext_last_error());
  bext_dtype dt = bext_dtype_of(e);
  cr_assert_eq(dt, bext_dtype_of(l), "%s: dtype %s eager, %s lazy", what, bext_dtype_name(dt),
               bext_dtype_name(bext_dtype_of(l)));
  cr_assert_eq(bext_rank(e), bext_rank(l), "%s: rank", what);
  for (int d = 0; d < bext_rank(e); d++)
    cr_assert_eq(bext_shape(e)[d], bext_shape(l)[d], "%s: dim %d", what, d);
  size_t n = (size_t)bext_numel(e), es = bext_dtype_size(dt), bytes = n * es;
  unsigned char *be = malloc(bytes + 8), *bl = malloc(bytes + 8);
  cr_assert(bext_read(e, be, bytes), "%s: eager read: %s", what, bext_last_error());
  cr_assert(bext_read(l, bl, bytes), "%s: lazy read: %s", what, bext_last_error());
  for (size_t i = 0; i < n; i++) {
    if (dt == BEXT_F32)
      cr_assert(near(((float *)be)[i], ((float *)bl)[i], tol), "%s: element %zu: %.9g eager, %.9g lazy", what, i,
                ((float *)be)[i], ((float *)bl)[i]);
    else if (dt == BEXT_F64)
      cr_assert(near(((double *)be)[i], ((double *)bl)[i], tol), "%s: element %zu: %.17g eager, %.17g lazy", what, i,
                ((double *)be)[i], ((double *)bl)[i]);
    else if (memcmp(be + i * es, bl + i * es, es)) {
      int64_t ia = 0, ib = 0;
      memcpy(&ia, be + i * es, es < 8 ? es : 8);
      memcpy(&ib, bl + i * es, es < 8 ? es : 8);
      cr_assert(false, "%s: %s element %zu: %lld eager, %lld lazy (bits)", what, bext_dtype_name(dt), i, (long long)ia,
                (long long)ib);
    }
  }
  free(be);
  free(bl);
}

/* Tolerance 1e-5, for f64 too, since every f64 value here is a cast of
 * an f32 one (and keeps its last-bit differences: libm's exp vs Flex's,
 * a reduction's order). */
static void compare(struct prog *g, pair r, const char *what) {
  char w[200];
  snprintf(w, sizeof w, "%s (program %ld, step %ld)", what, g->prog, g->step);
  fzp_agree(r.e, r.l, 1e-5, w);
  g->t->compared++;
}

/* A random shape broadcastable against the program's base shape. */
static int rand_shape(const struct prog *g, int64_t *sh) {
  int rank = (int)rnd(4);
  for (int d = 0; d < rank; d++) sh[d] = rnd(3) ? g->base[3 - rank + d] : 1;
  return rank;
}

static pair leaf(struct prog *g) {
  int64_t sh[3];
  int rank = rand_shape(g, sh);
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= sh[d];
  int kind = (int)rnd(6);
  bext_dtype dt = kind < 3 ? BEXT_F32 : kind == 3 ? BEXT_I32 : kind == 4 ? BEXT_I64 : BEXT_BOOL;
  unsigned char buf[64 * 8];
  for (int64_t i = 0; i < n; i++) {
    int r = (int)rnd(25) - 12;
    if (dt == BEXT_F32) ((float *)buf)[i] = (float)r * 0.25f;
    else if (dt == BEXT_I32) ((int32_t *)buf)[i] = r;
    else if (dt == BEXT_I64) ((int64_t *)buf)[i] = r;
    else buf[i] = r > 0;
  }
  pair p = {bext_from_data(buf, dt, sh, rank, g->c->E), bext_from_data(buf, dt, sh, rank, g->c->L), false};
  cr_assert(p.e && p.l, "%s", bext_last_error());
  return p;
}

enum { U_NEG, U_ABS, U_EXP, U_SIN, U_TANH, U_SIGMOID, U_RELU, U_SQRT, U_LOG1P, U_FLOOR, U_SIGN, U_NOT, U_COUNT };
enum { B_ADD, B_SUB, B_MUL, B_DIV, B_MAX, B_MIN, B_GT, B_EQ, B_AND, B_REM, B_COUNT };

/* Values whose last bits may differ between a fused kernel and eager
 * Flex: libm's transcendentals vs Flex's own (bxk_scalar.h leaves their
 * last bits out of the contract), float sums, means and products (another
 * order, and the sign of a zero sum: Flex's sum over an extent of 1 on a
 * non-last dim keeps -0, where NdArray, the reference, and fused kernels
 * give +0), inexact custom ops, and anything computed from them.  The
 * generator keeps them away from the ops that turn a last-bit difference
 * into a large one: rem (its quotient multiplies it), thresholds (floor,
 * sign, comparisons, casts to ints), sin (of a large value) and division
 * by them (a zero's sign is an infinity's), which it replaces with add,
 * neg, tanh or mul. */
static bool u_inexact(int u) { return u == U_EXP || u == U_SIN || u == U_TANH || u == U_SIGMOID || u == U_LOG1P; }
static bool u_threshold(int u) { return u == U_FLOOR || u == U_SIGN; }
/* sin turns a large value's last-bit difference into any other value */
static int u_safe(int u) { return u_threshold(u) ? U_NEG : u == U_SIN ? U_TANH : u; }

static bext_tensor *unary(int op, bext_tensor *t, double s, int d0, int d1) {
  switch (op) {
  case 0: {
    static bext_tensor *(*const f[U_COUNT])(bext_tensor *) = {bext_neg, bext_abs, bext_exp, bext_sin,
                                                               bext_tanh, bext_sigmoid, bext_relu, bext_sqrt,
                                                               bext_log1p, bext_floor, bext_sign, bext_not};
    return f[d0 % U_COUNT](t);
  }
  case 1: {
    static bext_tensor *(*const f[])(bext_tensor *, double) = {bext_add_scalar, bext_mul_scalar, bext_sub_scalar,
                                                              bext_max_scalar, bext_div_scalar, bext_gt_scalar};
    return f[d0 % 6](t, s);
  }
  case 2: return bext_swap_dims(t, d0 % (bext_rank(t) ? bext_rank(t) : 1), d1 % (bext_rank(t) ? bext_rank(t) : 1));
  case 3: return bext_reshape(t, (int64_t[]){-1}, 1);
  case 4: return bext_sum_dim(t, d0 % (bext_rank(t) ? bext_rank(t) : 1), d1 & 1);
  case 5: return bext_mean(t);
  case 6: return bext_max_dim(t, d0 % (bext_rank(t) ? bext_rank(t) : 1), d1 & 1);
  case 7: return bext_cast(t, (bext_dtype[]){BEXT_F32, BEXT_F64, BEXT_I32, BEXT_BOOL}[d0 % 4]);
  case 8: return bext_flip(t, (int[]){0}, bext_rank(t) ? 1 : 0);
  case 9: return bext_narrow(t, 0, 0, bext_rank(t) ? (bext_shape(t)[0] + 1) / 2 : 1);
  case 10: return bext_expand(t, (int64_t[]){2, bext_rank(t) > 0 ? bext_shape(t)[0] : 1}, bext_rank(t) == 1 ? 2 : 0);
  case 11: {   /* matmul with its own transpose: [m,k] x [k,m] */
    int64_t m = bext_rank(t) ? bext_shape(t)[0] : 1, k = bext_numel(t) / (m ? m : 1);
    bext_tensor *a = bext_reshape(t, (int64_t[]){m, k}, 2);
    bext_tensor *at = bext_transpose(bext_retain(a));   /* before a is consumed: C orders no arguments */
    return bext_matmul(a, at);
  }
  case 12: {   /* cat of four: more inputs than a descriptor holds inline */
    bext_tensor *ts[4] = {bext_retain(t), bext_retain(t), bext_retain(t), t};
    return bext_cat(ts, 4, 0);
  }
  case 13: return bext_permute(t, (int[]){2, 0, 1}, bext_rank(t) == 3 ? 3 : 0);
  case 14: return bext_cumsum(t, 0);
  case 15: return bext_mean_dim(t, d0 % (bext_rank(t) ? bext_rank(t) : 1), d1 & 1);
  case 16: return bext_min_dim(t, d0 % (bext_rank(t) ? bext_rank(t) : 1), d1 & 1);
  case 17: return bext_prod(t);
  default: return bext_clamp(t, -1.0, s);
  }
}

static bext_tensor *binary(int op, bext_tensor *a, bext_tensor *b) {
  static bext_tensor *(*const f[B_COUNT])(bext_tensor *, bext_tensor *) = {
      bext_add, bext_sub, bext_mul, bext_div, bext_max, bext_min, bext_gt, bext_eq, bext_and, bext_rem};
  return f[op % B_COUNT](a, b);
}

/* Checks that both devices agree on failure (same message) or success;
 * err_e is E's message when e failed.  A success joins the pool. */
static void result(struct prog *g, bext_tensor *e, bext_tensor *l, const char *err_e, bool approx, const char *what) {
  if (!e || !l) {
    char msg[600];
    snprintf(msg, sizeof msg, "%s", bext_last_error());
    cr_assert(!e && !l, "%s: only one device failed (program %ld, step %ld): %s", what, g->prog, g->step,
              e ? msg : err_e);
    cr_assert_str_eq(msg, err_e, "%s: the same error on both devices (program %ld, step %ld):\n  eager: %s\n  lazy:  %s",
                     what, g->prog, g->step, err_e, msg);
    return;
  }
  push(g, (pair){e, l, approx});
}

/* E's error message after an op on E (empty when it succeeded), kept
 * before the same op on L overwrites it. */
typedef struct {
  char s[600];
} errbuf;
static const char *err_of(errbuf *b, const bext_tensor *e) {
  snprintf(b->s, sizeof b->s, "%s", e ? "" : bext_last_error());
  return b->s;
}

/* A custom op on a value of the pool: non-float values are cast to f32
 * first (the methods take FloatTensor).  Every draw comes before the
 * salt is read, so another salt changes the scalars only. */
static void custom_step(struct prog *g) {
  const fzp_config *c = g->c;
  int k = (int)rnd((uint32_t)c->ncustom);
  const fzp_custom_op *op = &c->custom[k];
  double s[FZP_MAX_SCALARS];
  for (int i = 0; i < op->nscalars && i < FZP_MAX_SCALARS; i++)
    s[i] = (double)((int)rnd(9) - 4) * 0.375 + c->salt * (0.625 + 0.25 * i);
  pair a = take(g, (int)rnd((uint32_t)g->n));
  bext_dtype dt = bext_dtype_of(a.e);
  if (dt != BEXT_F32 && dt != BEXT_F64) {
    a.e = bext_cast(a.e, BEXT_F32);
    a.l = bext_cast(a.l, BEXT_F32);
    cr_assert(a.e && a.l, "%s", bext_last_error());
  }
  errbuf eb;
  bext_tensor *e = op->call(a.e, s);
  const char *err_e = err_of(&eb, e);
  bext_tensor *l = op->call(a.l, s);
  if (e) g->t->custom_calls[k]++;
  result(g, e, l, err_e, a.approx || op->inexact, op->name);
}

static void run_steps(struct prog *g, int len, bool custom) {
  errbuf eb;
  for (int s = 0; s < len; s++, g->step++) {
    if (!g->n) push(g, leaf(g));
    int what = (int)rnd(custom ? 22 + (uint32_t)g->c->custom_weight : 22);
    if (what >= 22) {
      custom_step(g);
    } else if (what < 9) {   /* a one-input op */
      int op = (int)rnd(19), d0 = (int)rnd(8), d1 = (int)rnd(8);
      double sc = (double)((int)rnd(9) - 4) * 0.5;
      pair a = take(g, (int)rnd((uint32_t)g->n));
      if (a.approx && ((op == 1 && d0 % 6 == 5) || (op == 7 && d0 % 4 >= 2))) op = 0, d0 = U_NEG;
      if (a.approx && op == 0) d0 = u_safe(d0 % U_COUNT);
      bool approx = a.approx || (op == 0 && u_inexact(d0 % U_COUNT)) || op == 4 || op == 5 || op == 11 || op == 15 ||
                    op == 17;
      bext_tensor *e = unary(op, a.e, sc, d0, d1);
      const char *err_e = err_of(&eb, e);
      result(g, e, unary(op, a.l, sc, d0, d1), err_e, approx, "unary");
    } else if (what < 16) {   /* a two-input op, broadcasting */
      int op = (int)rnd(B_COUNT), i = (int)rnd((uint32_t)g->n), j = (int)rnd((uint32_t)g->n);
      pair a = take(g, i);
      if (j >= g->n) j = g->n ? (int)rnd((uint32_t)g->n) : -1;
      pair b = j >= 0 ? take(g, j) : leaf(g);
      if ((a.approx || b.approx) && (op == B_REM || op == B_GT || op == B_EQ)) op = B_ADD;
      if (b.approx && op == B_DIV) op = B_MUL;   /* a zero's sign: +-inf */
      bext_tensor *e = binary(op, a.e, b.e);
      const char *err_e = err_of(&eb, e);
      result(g, e, binary(op, a.l, b.l), err_e, a.approx || b.approx, "binary");
    } else if (what < 17) {   /* mask_where with a mask made from a value */
      pair a = take(g, (int)rnd((uint32_t)g->n));
      pair v = leaf(g);
      /* all of E's side first: a failed mask (a bool value) chains its
       * error into mask_where's, which must not chain E's too */
      bext_tensor *e = bext_mask_where(a.e, bext_gt_scalar(bext_retain(a.e), 0), v.e);
      const char *err_e = err_of(&eb, e);
      bext_tensor *l = bext_mask_where(a.l, bext_gt_scalar(bext_retain(a.l), 0), v.l);
      result(g, e, l, err_e, a.approx, "mask_where");
    } else if (what < 18) {   /* gather with in-range indices */
      pair a = take(g, (int)rnd((uint32_t)g->n));
      int64_t n0 = bext_rank(a.e) ? bext_shape(a.e)[0] : 1, idx[3] = {rnd((uint32_t)n0), 0, 0};
      idx[2] = rnd((uint32_t)n0);   /* after idx[0]: an initializer list's order is unspecified */
      int64_t sh[3];
      int rank = bext_rank(a.e);
      for (int d = 0; d < rank; d++) sh[d] = d == 0 ? 3 : bext_shape(a.e)[d];
      int64_t cnt = 1;
      for (int d = 0; d < rank; d++) cnt *= sh[d];
      int64_t *iv = calloc((size_t)(cnt ? cnt : 1), sizeof *iv);
      for (int64_t q = 0; q < cnt; q++) iv[q] = idx[q % 3] % (n0 ? n0 : 1);
      pair ix = {bext_from_data(iv, BEXT_I64, sh, rank, g->c->E), bext_from_data(iv, BEXT_I64, sh, rank, g->c->L),
                 false};
      free(iv);
      bext_tensor *e = bext_gather(a.e, 0, ix.e);
      const char *err_e = err_of(&eb, e);
      result(g, e, bext_gather(a.l, 0, ix.l), err_e, a.approx, "gather");
    } else if (what >= 20) {   /* an elementwise chain feeding a reduction (softmax, norms) */
      pair a = take(g, (int)rnd((uint32_t)g->n));
      int u = (int)rnd(U_COUNT), red = (int)rnd(7), d0 = (int)rnd(8), keep = (int)rnd(2);
      double sc = (double)((int)rnd(9) - 4) * 0.5;
      if (a.approx && d0 % 6 == 5) d0 = 0;
      if (a.approx) u = u_safe(u);
      bool approx = a.approx || u_inexact(u) || red == 0 || red == 1 || red == 3 || red == 4;
      bext_tensor *ce = unary(0, unary(1, a.e, sc, d0, 0), sc, u, 0);
      const char *err_e = err_of(&eb, ce);
      bext_tensor *cl = unary(0, unary(1, a.l, sc, d0, 0), sc, u, 0);
      if (!ce || !cl) {   /* a bool input: both fail alike */
        result(g, ce, cl, err_e, approx, "chain");
        continue;
      }
      if (rnd(3) == 0)   /* read again: stored by the kernel */
        push(g, (pair){bext_retain(ce), bext_retain(cl), a.approx || u_inexact(u)});
      int rk = bext_rank(ce), dim = (int)rnd((uint32_t)(rk ? rk : 1));
      static bext_tensor *(*const all[3])(bext_tensor *) = {bext_sum, bext_prod, bext_max_all};
      static bext_tensor *(*const dims[4])(bext_tensor *, int, bool) = {bext_sum_dim, bext_mean_dim, bext_max_dim,
                                                                       bext_min_dim};
      bext_tensor *e = red < 3 ? all[red](ce) : dims[red - 3](ce, dim, keep);
      err_e = err_of(&eb, e);
      bext_tensor *l = red < 3 ? all[red](cl) : dims[red - 3](cl, dim, keep);
      result(g, e, l, err_e, approx, "chain and reduction");
    } else if (what < 19) {   /* a read in the middle: a sync point */
      compare(g, g->p[rnd((uint32_t)g->n)], "mid-program read");
    } else {   /* a creation op */
      int64_t sh[3];
      int rank = rand_shape(g, sh);
      double v = (double)((int)rnd(9) - 4);
      bext_tensor *e = bext_full(sh, rank, v, BEXT_F32, g->c->E);
      const char *err_e = err_of(&eb, e);
      result(g, e, bext_full(sh, rank, v, BEXT_F32, g->c->L), err_e, false, "full");
    }
  }
}

void fzp_run_program(const fzp_config *c, uint64_t key, long p, fzp_tally *t) {
  cr_assert(c->ncustom >= 0 && c->ncustom <= FZP_MAX_CUSTOM && (c->ncustom == 0 || c->custom));
  rng = key ^ (uint64_t)(p + 1) * 0xD1B54A32D192ED03ull;
  if (!rng) rng = 1;   /* xorshift's one fixed point */
  struct prog g = {.c = c, .t = t, .prog = p};
  int len = 6 + (int)rnd(10);
  bool custom = c->ncustom > 0 && c->custom_weight > 0 && (c->custom_every <= 1 || p % c->custom_every == 0);
  for (int d = 0; d < 3; d++) g.base[d] = 1 + rnd(4);
  int nleaf = 2 + (int)rnd(3);
  for (int i = 0; i < nleaf; i++) push(&g, leaf(&g));
  run_steps(&g, len, custom);
  for (int i = 0; i < g.n; i++) {
    compare(&g, g.p[i], "final read");
    bext_release(g.p[i].e);
    bext_release(g.p[i].l);
  }
  t->programs++;
  t->steps += len;
  t->custom_programs += custom;
}

void fzp_run_programs(const fzp_config *c, uint64_t key, long first, long count, fzp_tally *t) {
  for (long p = first; p < count; p++) {
    fzp_run_program(c, key, p, t);
    if (c->fresh_every > 0 && p % c->fresh_every == c->fresh_every - 1)
      cr_assert(bext_device_close(c->L), "%s", bext_last_error());
  }
  cr_assert(bext_sync(c->L), "%s", bext_last_error());
}

long fzp_programs_from_env(long def) {
  const char *e = getenv("BEXT_FUSION_PROGRAMS");
  long n = e && *e ? strtol(e, NULL, 10) : def;
  return n > 0 ? n : def;
}
