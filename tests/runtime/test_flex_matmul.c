/* test_flex_matmul.c — Flex's float matmul cut into gemm panels over the
 * runtime's thread pool (flex_matmul.c): every panel layout (column
 * panels when n >= m, row panels otherwise, sizes that are no multiple of
 * the 16-wide panel step, transposed operands passed to BLAS as Trans,
 * broadcast batches) gives the product a plain double loop computes, the
 * same with one thread and with two, and the two-thread run really splits. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "backend.h"

static void two_threads(void) { setenv("BEXT_NUM_THREADS", "2", 1); }

TestSuite(flex_matmul, .init = two_threads);

static const bext_device *flex(void) {
  const bext_device *d = bext_device_get("flex");
  cr_assert(d);
  return d;
}

/* t's values as doubles, row-major (t is consumed). */
static double *values(bext_tensor *t) {
  int64_t n = bext_numel(t);
  bext_tensor *w = bext_cast(t, BEXT_F64);
  double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
  cr_assert(w && v && bext_read(w, v, sizeof(double) * (size_t)n));
  bext_release(w);
  return v;
}

/* A rows x cols operand of dt; `trans` makes it as the transpose of a
 * cols x rows tensor (a strided view BLAS reads as Trans). */
static bext_tensor *operand(int64_t batch, int64_t rows, int64_t cols, bool trans, bext_dtype dt, unsigned seed) {
  int64_t shape[3], r = 0;
  if (batch) shape[r++] = batch;
  shape[r++] = trans ? cols : rows;
  shape[r++] = trans ? rows : cols;
  bext_tensor *t = bext_random_uniform(shape, (int)r, -1.0, 1.0, seed, dt, flex());
  return trans ? bext_transpose(t) : t;
}

/* a [ba?] x m x k times b [bb?] x k x n, checked against a double loop
 * (batch 0: no batch dim; a batch of 1 broadcasts). */
static void check(int64_t ba, int64_t bb, int64_t m, int64_t n, int64_t k, bool ta, bool tb, bext_dtype dt) {
  bext_tensor *a = operand(ba, m, k, ta, dt, 11), *b = operand(bb, k, n, tb, dt, 12);
  cr_assert(a && b);
  bext_tensor *res[2];
  for (int pass = 0; pass < 2; pass++) {
    int old = bxr_pool_set_threads(pass + 1);
    unsigned long before = bxr_pool_jobs_split();
    res[pass] = bext_matmul(bext_retain(a), bext_retain(b));
    cr_assert(res[pass], "matmul %ldx%ldx%ld: %s", (long)m, (long)n, (long)k, bext_last_error());
    if (pass == 1 && m * n * k >= (int64_t)BXR_POOL_MIN && (m >= 32 || n >= 32))
      cr_expect_gt(bxr_pool_jobs_split(), before, "%ldx%ldx%ld with two threads must split", (long)m, (long)n,
                   (long)k);
    bxr_pool_set_threads(old);
  }
  int64_t nb = ba > bb ? ba : bb, B = nb ? nb : 1;
  double *av = values(bext_contiguous(bext_retain(a))), *bv = values(bext_contiguous(bext_retain(b)));
  const double tol = dt == BEXT_F32 ? 1e-5 : 1e-12;
  for (int pass = 0; pass < 2; pass++) {
    cr_assert_eq(bext_numel(res[pass]), B * m * n);
    double *cv = values(res[pass]);  /* consumes it */
    int bad = 0;
    for (int64_t q = 0; q < B && bad < 3; q++) {
      const double *A = av + (ba > 1 ? q : 0) * m * k, *Bm = bv + (bb > 1 ? q : 0) * k * n;
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
          double want = 0, mag = 0;
          for (int64_t p = 0; p < k; p++) {
            want += A[i * k + p] * Bm[p * n + j];
            mag += fabs(A[i * k + p] * Bm[p * n + j]);
          }
          double got = cv[(q * m + i) * n + j];
          if (!(fabs(got - want) <= tol * (mag + 1))) {
            cr_expect_fail("%d thread(s), %s %ldx%ldx%ld%s%s: [%ld][%ld][%ld] = %.17g, want %.17g", pass + 1,
                           dt == BEXT_F32 ? "f32" : "f64", (long)m, (long)n, (long)k, ta ? " a^T" : "",
                           tb ? " b^T" : "", (long)q, (long)i, (long)j, got, want);
            bad++;
          }
        }
    }
    free(cv);
  }
  free(av);
  free(bv);
  bext_release(a);
  bext_release(b);
}

Test(flex_matmul, column_panels_of_every_layout) {
  for (int t = 0; t < 4; t++) {
    check(0, 0, 64, 515, 300, t & 1, t & 2, BEXT_F32);   /* n >= m: column panels, a ragged last one */
    check(0, 0, 37, 131, 70, t & 1, t & 2, BEXT_F64);
  }
}

Test(flex_matmul, row_panels_of_every_layout) {
  for (int t = 0; t < 4; t++) {
    check(0, 0, 517, 33, 129, t & 1, t & 2, BEXT_F32);   /* m > n: row panels */
    check(0, 0, 203, 17, 90, t & 1, t & 2, BEXT_F64);
  }
}

Test(flex_matmul, batches_and_broadcast) {
  check(3, 0, 70, 90, 130, false, true, BEXT_F32);  /* b broadcast over a's batch */
  check(1, 2, 45, 260, 64, true, false, BEXT_F32);  /* a's batch of 1 broadcasts */
  check(2, 2, 100, 100, 100, false, false, BEXT_F64);
}

Test(flex_matmul, small_and_empty_products) {
  check(0, 0, 1, 1, 1, false, false, BEXT_F32);
  check(0, 0, 5, 3, 0, false, false, BEXT_F32);      /* k = 0: zeros */
  check(0, 0, 0, 40, 8, false, false, BEXT_F64);     /* no rows */
  check(0, 0, 16, 2000, 1, false, true, BEXT_F32);   /* k = 1, long thin panels */
}

Test(flex_matmul, many_small_batches_split_by_batch) {
  /* Batches shared out whole across the pool (flex_matmul.c batch_chunk):
   * counts that do not divide by the thread count, odd sizes, transposed
   * operands, a broadcast side, and a batch of four 128^3 products (small
   * enough to go whole too). */
  for (int t = 0; t < 4; t++) {
    check(37, 37, 9, 13, 11, t & 1, t & 2, BEXT_F32);
    check(256, 256, 64, 64, 64, t & 1, t & 2, BEXT_F32);
    check(19, 1, 17, 5, 33, t & 1, t & 2, BEXT_F64);
  }
  check(1, 40, 31, 7, 64, false, false, BEXT_F32);
  check(4, 4, 128, 128, 128, false, true, BEXT_F32);
  check(9, 9, 4, 6, 0, false, false, BEXT_F64);      /* k = 0 in every batch */
}

/* f16/bf16 products are the f32 product of the widened operands, rounded
 * once to the type (flex_matmul.c widens each batch matrix into its
 * thread's scratch, prefetching the next one, multiplies by sgemm and
 * narrows): compared bit for bit with Flex's own f32 matmul of the
 * widened, contiguous operands cast back, with one thread and with two.
 * Odd batch counts, broadcast sides (where the prefetch skips the
 * repeated matrix), two batch dims, transposed operands (packed, no
 * prefetch), k = 0, and a single product large enough for panels. */
static void check_half(int64_t ba, int64_t bb, int64_t m, int64_t n, int64_t k, bool ta, bool tb, bext_dtype dt,
                       bool four_d) {
  bext_tensor *a = operand(ba, m, k, ta, dt, 21), *b = operand(bb, k, n, tb, dt, 22);
  cr_assert(a && b);
  if (four_d) a = bext_reshape(a, (int64_t[]){ 2, ba / 2, m, k }, 4);   /* [2, ba/2] x [bb] batches */
  bext_tensor *af = bext_contiguous(bext_cast(bext_retain(a), BEXT_F32));
  bext_tensor *bf = bext_contiguous(bext_cast(bext_retain(b), BEXT_F32));
  bext_tensor *want = bext_cast(bext_matmul(af, bf), dt);
  cr_assert(want, "%s", bext_last_error());
  const int64_t N = bext_numel(want);
  uint16_t *w = malloc(2 * (size_t)(N ? N : 1)), *g = malloc(2 * (size_t)(N ? N : 1));
  cr_assert(bext_read(want, w, 2 * (size_t)N));
  for (int pass = 0; pass < 2; pass++) {
    int old = bxr_pool_set_threads(pass + 1);
    bext_tensor *got = bext_matmul(bext_retain(a), bext_retain(b));
    bxr_pool_set_threads(old);
    cr_assert(got, "%s", bext_last_error());
    cr_assert_eq(bext_numel(got), N);
    cr_assert(bext_read(got, g, 2 * (size_t)N));
    for (int64_t i = 0; i < N; i++)
      if (g[i] != w[i]) {
        cr_assert_fail("%d thread(s) %s [%ld|%ld]x%ldx%ldx%ld%s%s%s: element %ld is 0x%04x, want 0x%04x", pass + 1,
                       bext_dtype_name(dt), (long)ba, (long)bb, (long)m, (long)n, (long)k, ta ? " a^T" : "",
                       tb ? " b^T" : "", four_d ? " 4-d" : "", (long)i, g[i], w[i]);
      }
    bext_release(got);
  }
  free(w);
  free(g);
  bext_release(want);
  bext_release(a);
  bext_release(b);
}

Test(flex_matmul, half_batches_are_the_rounded_f32_product) {
  static const bext_dtype dts[] = { BEXT_BF16, BEXT_F16 };
  for (int d = 0; d < 2; d++) {
    for (int t = 0; t < 4; t++) {
      check_half(37, 37, 9, 13, 11, t & 1, t & 2, dts[d], false);
      check_half(256, 256, 64, 64, 64, t & 1, t & 2, dts[d], false);
    }
    check_half(19, 1, 17, 5, 33, false, false, dts[d], false);   /* b broadcast */
    check_half(1, 40, 31, 7, 64, false, false, dts[d], false);   /* a broadcast */
    check_half(6, 3, 7, 9, 8, false, false, dts[d], true);       /* a [2,3], b [3] */
    check_half(3, 3, 130, 140, 150, false, false, dts[d], false); /* few large: panels */
    check_half(0, 0, 300, 200, 100, false, true, dts[d], false);
    check_half(5, 5, 4, 6, 0, false, false, dts[d], false);      /* k = 0: zeros */
  }
}
