/* test_flex_blocks.c — Flex's own building blocks: the AVX2 and generic
 * kernel variants agreeing and matching bxk_scalar.h's scalar rules
 * (conversions, max/min, relu), and the caching allocator (reuse of large blocks;
 * failures of the allocation hook surface as errors).  The thread pool
 * they run on is the runtime's (test_pool.c). */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flex/flex_internal.h"

Test(flex_blocks, kernel_variants_agree) {
  enum { N = 1037 };
  float a[N], b[N], o1[N], o2[N];
  for (int i = 0; i < N; i++) {
    a[i] = (float)((i * 37) % 101) / 10.0f - 5.0f;
    b[i] = (float)((i * 53) % 97) / 9.0f - 4.0f;
  }
  for (int op = 0; op < BXFX_BIN_COUNT; op++)
    for (int mode = 0; mode < 3; mode++) {
      bxfx_kern_avx2.bin[op](a, b, o1, N, mode);
      bxfx_kern_gen.bin[op](a, b, o2, N, mode);
      cr_expect(memcmp(o1, o2, sizeof o1) == 0, "binary %d mode %d differs", op, mode);
    }
  /* (streaming stores: stream_out, test_flex_stream.c) */
  for (int op = 0; op < BXFX_UN_COUNT; op++) {
    bxfx_kern_avx2.un[op](a, o1, N);
    bxfx_kern_gen.un[op](a, o2, N);
    for (int i = 0; i < N; i++) {
      if ((isnan(o1[i]) && isnan(o2[i])) || o1[i] == o2[i]) continue;
      cr_assert(fabsf(o1[i] - o2[i]) <= 4e-6f * (fabsf(o2[i]) + 1e-30f) + 1e-37f,
                "unary %d at %g: %g vs %g", op, a[i], o1[i], o2[i]);
    }
  }
  double s1 = bxfx_kern_avx2.sum_f32(a, N), s2 = bxfx_kern_gen.sum_f32(a, N), ref = 0;
  for (int i = 0; i < N; i++) ref += a[i];
  cr_expect(fabs(s1 - ref) < 1e-3 && fabs(s2 - ref) < 1e-3, "sum %g %g vs %g", s1, s2, ref);
  /* The sums are the same tree of lane-wise adds in both variants (no
   * FMA, no reassociation): the same bits, for every length's tail. */
  cr_expect(s1 == s2, "sum_f32: avx2 %.17g vs generic %.17g", s1, s2);
  static double d[N];
  for (int i = 0; i < N; i++) d[i] = (double)a[i] * (1.0 + 1e-9 * i);
  for (int n = 0; n <= N; n += n < 600 ? 1 : 997) {
    double t1 = bxfx_kern_avx2.sum_f64(d, (size_t)n), t2 = bxfx_kern_gen.sum_f64(d, (size_t)n);
    cr_assert(t1 == t2, "sum_f64 of %d: avx2 %.17g vs generic %.17g", n, t1, t2);
  }
}

/* The kernels issue 15 added, both variants on the same inputs (the
 * generic one never runs on an AVX2 machine otherwise): exact agreement
 * for everything but powi (lane products in the same order: also exact). */
Test(flex_blocks, new_kernel_variants_agree) {
  enum { N = 1037 };
  static float a[N], b[N];
  static double d[N];
  for (int i = 0; i < N; i++) {
    a[i] = (float)((i * 37) % 101) / 10.0f - 5.0f;
    b[i] = (float)((i * 53) % 97) / 9.0f - 4.0f;
    if (i % 89 == 3) a[i] = NAN;
    if (i % 97 == 5) b[i] = -INFINITY;
    if (i % 61 == 7) a[i] = (i & 1) ? 3.0e9f : -0.0f;
    d[i] = (double)b[i] * 1.25;
  }
  const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  static uint8_t c[2][N];
  for (int op = 0; op < BXFX_CMP_COUNT; op++)
    for (int mode = 0; mode < 3; mode++) {
      for (int v = 0; v < 2; v++) K[v]->cmp[op](a, b, c[v], N, mode);
      cr_expect(memcmp(c[0], c[1], N) == 0, "compare %d mode %d differs", op, mode);
    }
  static float f[2][N];
  for (int e = -5; e <= 9; e++) {
    for (int v = 0; v < 2; v++) K[v]->powi_f32(a, f[v], N, e);
    cr_expect(memcmp(f[0], f[1], sizeof f[0]) == 0, "powi %d differs", e);
  }
  /* f32 op an inexact f64 scalar: one rounding of the f64 result */
  const double ws[] = { 1e-3, -1.0 / 3.0, 1e300, NAN };
  for (int op = BXFX_BIN_add; op <= BXFX_BIN_div; op++)
    for (size_t j = 0; j < sizeof ws / sizeof ws[0]; j++) {
      for (int v = 0; v < 2; v++) K[v]->binw_f32(op, a, ws[j], f[v], N);
      cr_expect(memcmp(f[0], f[1], sizeof f[0]) == 0, "binw %d by %g differs", op, ws[j]);
      for (int i = 0; i < N; i++) {
        double x = a[i], y = ws[j], r = op == BXFX_BIN_add ? x + y : op == BXFX_BIN_sub ? x - y
                                        : op == BXFX_BIN_mul ? x * y : x / y;
        float want = (float)r;
        cr_expect(memcmp(&f[0][i], &want, sizeof want) == 0 || (want != want && f[0][i] != f[0][i]),
                  "binw %d: %g by %g gave %g, want %g", op, a[i], ws[j], f[0][i], want);
      }
    }
  static int32_t i32[2][N];
  for (int v = 0; v < 2; v++) K[v]->f32_to_i32(a, i32[v], N);
  cr_expect(memcmp(i32[0], i32[1], sizeof i32[0]) == 0, "f32_to_i32 differs");
  for (int i = 0; i < N; i++) {   /* the runtime's rule: saturate to i64, then clamp */
    int64_t w = bxr_f64_to_i64_sat(a[i]);
    w = w < INT32_MIN ? INT32_MIN : w > INT32_MAX ? INT32_MAX : w;
    cr_expect_eq(i32[0][i], (int32_t)w, "f32_to_i32(%g)", a[i]);
  }
  static uint16_t h[2][N];
  for (int v = 0; v < 2; v++) K[v]->f32_to_bf16(a, h[v], N);
  cr_expect(memcmp(h[0], h[1], sizeof h[0]) == 0, "f32_to_bf16 differs");
  for (int i = 0; i < N; i++) cr_expect_eq(h[0][i], bxk_f32_to_bf16(a[i]), "f32_to_bf16(%g)", a[i]);
  for (int v = 0; v < 2; v++) K[v]->bf16_to_f32(h[0], f[v], N);
  cr_expect(memcmp(f[0], f[1], sizeof f[0]) == 0, "bf16_to_f32 differs");
  for (int n = 1; n <= N; n += 97)
    for (int flags = 0; flags < 4; flags++) {
      float v0, v1;
      double w0, w1;
      int64_t i0 = K[0]->argext_f32(b, (size_t)n, flags, &v0), i1 = K[1]->argext_f32(b, (size_t)n, flags, &v1);
      cr_expect(i0 == i1 && memcmp(&v0, &v1, sizeof v0) == 0, "argext_f32 n=%d flags=%d", n, flags);
      i0 = K[0]->argext_f64(d, (size_t)n, flags, &w0), i1 = K[1]->argext_f64(d, (size_t)n, flags, &w1);
      cr_expect(i0 == i1 && memcmp(&w0, &w1, sizeof w0) == 0, "argext_f64 n=%d flags=%d", n, flags);
      i0 = K[0]->argext_f32(a, (size_t)n, flags, &v0);   /* a has NaNs from index 3 */
      cr_expect(n <= 3 || i0 == 3, "argext_f32 with NaN: %lld", (long long)i0);
    }
  static float acc[2][N];
  static int64_t arg[2][N];
  for (int flags = 0; flags < 2; flags++) {
    for (int v = 0; v < 2; v++) {
      memcpy(acc[v], a, sizeof a);
      memset(arg[v], 0, sizeof arg[v]);
      K[v]->extrow_f32(acc[v], arg[v], b, N, 1, flags);
      K[v]->extrow_f32(acc[v], arg[v], a, N, 2, flags);
    }
    cr_expect(memcmp(acc[0], acc[1], sizeof acc[0]) == 0 && memcmp(arg[0], arg[1], sizeof arg[0]) == 0,
              "extrow_f32 flags %d differs", flags);
  }
  for (int n = 0; n <= 64; n += 7) {
    double p0 = K[0]->prod_f32(b, (size_t)n), p1 = K[1]->prod_f32(b, (size_t)n);
    cr_expect(memcmp(&p0, &p1, sizeof p0) == 0 || (isnan(p0) && isnan(p1)), "prod_f32 n=%d: %g vs %g", n, p0, p1);
  }
}

/* leafrows (a leaf of a sum across an outer axis, flex_reduce.c) in both
 * variants: per column the first row plus each further row in turn, in
 * f64, bit for bit (a column of -0.0 stays -0.0; NaN and infinities
 * propagate), for strip widths around the 16-column register strip and
 * 1..16 rows. */
Test(flex_blocks, leaf_rows_sum_left_to_right) {
  enum { W = 41, ROWS = 16 };
  static float a[ROWS * W];
  static double d[ROWS * W];
  for (int i = 0; i < ROWS * W; i++) {
    a[i] = (float)((i * 37) % 101) / 10.0f - 5.0f;
    if (i % 89 == 3) a[i] = NAN;
    if (i % 97 == 5) a[i] = -INFINITY;
    if (i % W == 20) a[i] = -0.0f;          /* an all -0.0 column */
    if (i % W == 33) a[i] = (i / W) % 2 ? 1e30f : -1e30f;   /* cancellation */
    d[i] = (double)a[i] * 1.25;
  }
  const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  const size_t widths[] = { 0, 1, 15, 16, 17, 33, W };
  for (int v = 0; v < 2; v++)
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
      for (size_t rows = 1; rows <= ROWS; rows += rows < 3 ? 1 : 6) {
        size_t n = widths[wi];
        double got[W], gotd[W];
        K[v]->leafrows_f32(got, a, W, rows, n);
        K[v]->leafrows_f64(gotd, d, W, rows, n);
        for (size_t i = 0; i < n; i++) {
          double want = a[i], wantd = d[i];
          for (size_t r = 1; r < rows; r++) want += (double)a[r * W + i], wantd += d[r * W + i];
          cr_expect(memcmp(&got[i], &want, 8) == 0 || (isnan(got[i]) && isnan(want)),
                    "%s leafrows_f32 n=%zu rows=%zu [%zu]: %g, want %g", K[v]->isa, n, rows, i, got[i], want);
          cr_expect(memcmp(&gotd[i], &wantd, 8) == 0 || (isnan(gotd[i]) && isnan(wantd)),
                    "%s leafrows_f64 n=%zu rows=%zu [%zu]: %g, want %g", K[v]->isa, n, rows, i, gotd[i], wantd);
        }
      }
}

/* The half sums widen in registers (sum_bf16/sum_f16, leafrows_bf16/
 * leafrows_f16): in both variants, bit for bit the f32 kernels on the
 * widened values, for every length around the lane widths and the
 * 256-element leaves, with NaN, infinities, subnormals and signed zeros. */
Test(flex_blocks, half_sums_widen_in_registers) {
  enum { N = 1100, W = 41, ROWS = 16 };
  static uint16_t h[2][N];
  static float f[2][N];
  for (int i = 0; i < N; i++) {
    float x = ldexpf((float)((i * 37) % 101) / 10.0f - 5.0f, (i * 7) % 30 - 15);
    if (i % 89 == 3) x = NAN;
    if (i % 97 == 5) x = -INFINITY;
    if (i % 83 == 7) x = -0.0f;
    if (i % 79 == 9) x = 1e-7f;   /* an f16 subnormal */
    h[0][i] = bxk_f32_to_bf16(x);
    h[1][i] = bxk_f32_to_f16(x);
    f[0][i] = bxk_bf16_to_f32(h[0][i]);
    f[1][i] = bxk_f16_to_f32(h[1][i]);
  }
  const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  for (int v = 0; v < 2; v++)
    for (int t = 0; t < 2; t++) {
      double (*sum)(const uint16_t *, size_t) = t ? K[v]->sum_f16 : K[v]->sum_bf16;
      void (*rows)(double *, const uint16_t *, size_t, size_t, size_t) = t ? K[v]->leafrows_f16 : K[v]->leafrows_bf16;
      for (size_t n = 0; n <= N; n += n < 300 ? 1 : 97) {
        double got = sum(h[t], n), want = bxfx_kern_gen.sum_f32(f[t], n);
        cr_expect(memcmp(&got, &want, 8) == 0 || (isnan(got) && isnan(want)), "%s sum_%s n=%zu: %a, want %a",
                  K[v]->isa, t ? "f16" : "bf16", n, got, want);
      }
      for (size_t n = 0; n <= W; n += n < 18 ? 1 : 8)
        for (size_t r = 1; r <= ROWS; r += r < 3 ? 1 : 6) {
          double got[W], want[W];
          rows(got, h[t] + 1, W, r, n);
          bxfx_kern_gen.leafrows_f32(want, f[t] + 1, W, r, n);
          for (size_t i = 0; i < n; i++)
            cr_expect(memcmp(&got[i], &want[i], 8) == 0 || (isnan(got[i]) && isnan(want[i])),
                      "%s leafrows_%s n=%zu rows=%zu [%zu]: %a, want %a", K[v]->isa, t ? "f16" : "bf16", n, r, i,
                      got[i], want[i]);
        }
    }
}

/* i32 products run in vector lanes (wrapping: the order does not
 * matter): the sequential wrapping product, for lengths around the 32
 * lanes, in both variants; odd factors keep the product from vanishing. */
Test(flex_blocks, i32_products_wrap_as_the_sequential_product) {
  enum { N = 4200 };
  static int32_t x[N];
  uint32_t r = 99;
  for (int i = 0; i < N; i++) r = r * 1103515245u + 12345u, x[i] = (int32_t)(r | 1u);
  x[5] = -1, x[40] = INT32_MIN + 1, x[77] = INT32_MAX;
  const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  const size_t lens[] = { 0, 1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 95, 100, 4097, N };
  for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
    uint32_t want = 1;
    for (size_t i = 0; i < lens[li]; i++) want *= (uint32_t)x[i];
    for (int v = 0; v < 2; v++)
      cr_expect_eq(K[v]->red_i32(BXFX_RED_PROD, x, lens[li]), (int32_t)want, "%s red_i32 prod n=%zu", K[v]->isa,
                   lens[li]);
  }
}

/* bf16 extremes scan the 16-bit patterns as ordered int16 keys
 * (argext_bf16): in both variants, the index and value bits of argext_f32
 * on the widened values (which the reference's scan gives), for lengths
 * around the 16 lanes and the 2048-element blocks, with a NaN anywhere
 * (positive and negative patterns), infinities, subnormals, and extremes
 * that are zeros of both signs in either order. */
Test(flex_blocks, bf16_extremes_scan_the_patterns) {
  enum { N = 4200 };
  static uint16_t h[N];
  static float f[N];
  const size_t lens[] = { 1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 2047, 2048, 2049, 4097, N };
  const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  /* kinds: 0 finite values of all binades; 1 negatives only; 2 zeros and
   * negatives (max is a zero); 3 zeros and positives (min is a zero);
   * 4 all zeros; 5 infinities and subnormals */
  for (int kind = 0; kind < 6; kind++)
    for (int nanat = -1; nanat < (int)N; nanat = nanat < 40 ? nanat + 1 : nanat * 3 + 7)
      for (int sign = 0; sign < 2; sign++) {
        if (nanat < 0 && sign) continue;
        uint32_t r = 12345u + (uint32_t)kind * 7919u;
        for (int i = 0; i < N; i++) {
          r = r * 1103515245u + 12345u;
          float x = ldexpf((float)(r >> 16 & 0x7fff) / 32768.0f + 0.5f, (int)(r >> 8 & 63) - 32);
          if (r >> 31) x = -x;
          if (kind == 1 || kind == 2) x = -fabsf(x);
          if (kind == 3) x = fabsf(x);
          if ((kind == 2 || kind == 3) && (r >> 4 & 7) == 0) x = (r >> 9 & 1) ? 0.0f : -0.0f;
          if (kind == 4) x = (r >> 9 & 1) ? 0.0f : -0.0f;
          if (kind == 5 && (r >> 4 & 3) == 0) x = (r >> 9 & 1) ? INFINITY : -INFINITY;
          if (kind == 5 && (r >> 4 & 3) == 1) x = (r >> 9 & 1) ? 1e-40f : -1e-40f;
          h[i] = bxk_f32_to_bf16(x);
        }
        if (nanat >= 0) h[nanat] = sign ? 0xffc1 : 0x7f81;   /* payloads kept: the first NaN's bits */
        for (int i = 0; i < N; i++) f[i] = bxk_bf16_to_f32(h[i]);
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
          for (int flags = 0; flags < 4; flags++) {
            size_t n = lens[li];
            float want, got;
            int64_t wi = bxfx_kern_gen.argext_f32(f, n, flags, &want);
            for (int v = 0; v < 2; v++) {
              int64_t gi = K[v]->argext_bf16(h, n, flags, &got);
              cr_assert(gi == wi && memcmp(&got, &want, sizeof got) == 0,
                        "%s argext_bf16 kind %d NaN at %d (sign %d) n=%zu flags=%d: %lld %a, want %lld %a",
                        K[v]->isa, kind, nanat, sign, n, flags, (long long)gi, got, (long long)wi, want);
            }
          }
      }
}

/* The row-block kernels (mulrows, extrows, and extrows_f16/_bf16 on
 * widened rows) are the row-by-row ones (mulacc, extrow) with acc in
 * registers, and the cumsum kernels the
 * sequential chains: in both variants, bit for bit, for widths around the
 * lanes and strips, with NaN, infinities, signed zeros, wrapping ints. */
Test(flex_blocks, row_block_and_cumsum_kernels_match_row_by_row) {
  enum { W = 77, ROWS = 19 };
  /* rows 1..ROWS are read (row 0 is the accumulators' start) */
  static float a[(ROWS + 1) * W];
  static double d[(ROWS + 1) * W];
  static int32_t ia[(ROWS + 1) * W];
  static int64_t la[(ROWS + 1) * W];
  static uint16_t ha[2][(ROWS + 1) * W];   /* f16, bf16 */
  static float hw[2][(ROWS + 1) * W];      /* those widened */
  for (int i = 0; i < (ROWS + 1) * W; i++) {
    a[i] = 1.0f + (float)((i * 37) % 101 - 50) / 512.0f;
    if (i % 89 == 3) a[i] = NAN;
    if (i % 97 == 5) a[i] = -INFINITY;
    if (i % 83 == 7) a[i] = (i / W) % 2 ? 0.0f : -0.0f;
    d[i] = (double)a[i] * 1.25;
    ia[i] = (int32_t)(uint32_t)((uint32_t)i * 2654435761u);
    la[i] = (int64_t)((uint64_t)i * 0x9e3779b97f4a7c15ull);
    /* halves: a's values, and values apart in the low bits of the
     * half (1 + k/1024 or k/128), where a widening that lost them
     * would tie */
    float h = i % 5 == 1 ? 1.0f + (float)(i % 1024) / 1024.0f : i % 5 == 2 ? (float)(i % 256) / 128.0f : a[i];
    ha[0][i] = bxk_f32_to_f16(h);
    ha[1][i] = bxk_f32_to_bf16(h);
    hw[0][i] = bxk_f16_to_f32(ha[0][i]);
    hw[1][i] = bxk_bf16_to_f32(ha[1][i]);
  }
  const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  for (int v = 0; v < 2; v++)
    for (size_t n = 0; n <= W; n += n < 34 ? 1 : 43)
      for (size_t rows = 1; rows <= ROWS; rows += rows < 3 ? 1 : 8) {
        double pg[W], pw[W], qg[W], qw[W], eg[W], ew[W];
        float fg[W], fw[W], hg[2][W], hr[2][W];
        for (int flags = 0; flags <= BXFX_EXT_MAX; flags += BXFX_EXT_MAX) {
          /* extrows_f16/_bf16: extrow_f32 on the widened rows */
          for (int h = 0; h < 2; h++) {
            for (size_t i = 0; i < n; i++) hg[h][i] = hr[h][i] = hw[h][i];
            (h ? K[v]->extrows_bf16 : K[v]->extrows_f16)(hg[h], ha[h] + W, W, rows, n, flags);
            for (size_t r = 1; r <= rows; r++) bxfx_kern_gen.extrow_f32(hr[h], NULL, hw[h] + r * W, n, (int64_t)r, flags);
            for (size_t i = 0; i < n; i++)
              cr_expect(memcmp(&hg[h][i], &hr[h][i], 4) == 0 || (isnan(hg[h][i]) && isnan(hr[h][i])),
                        "%s extrows_%s flags %d n=%zu rows=%zu [%zu]: %a, want %a", K[v]->isa, h ? "bf16" : "f16", flags,
                        n, rows, i, hg[h][i], hr[h][i]);
          }
          for (size_t i = 0; i < n; i++) pg[i] = pw[i] = qg[i] = qw[i] = 1.0, fg[i] = fw[i] = a[i], eg[i] = ew[i] = d[i];
          K[v]->mulrows_f32(pg, a + W, W, rows, n);
          K[v]->mulrows_f64(qg, d + W, W, rows, n);
          K[v]->extrows_f32(fg, a + W, W, rows, n, flags);
          K[v]->extrows_f64(eg, d + W, W, rows, n, flags);
          for (size_t r = 1; r <= rows; r++) {
            bxfx_kern_gen.mulacc_f32(pw, a + r * W, n);
            bxfx_kern_gen.mulacc_f64(qw, d + r * W, n);
            bxfx_kern_gen.extrow_f32(fw, NULL, a + r * W, n, (int64_t)r, flags);
            bxfx_kern_gen.extrow_f64(ew, NULL, d + r * W, n, (int64_t)r, flags);
          }
          for (size_t i = 0; i < n; i++) {
            cr_expect(memcmp(&pg[i], &pw[i], 8) == 0 || (isnan(pg[i]) && isnan(pw[i])), "%s mulrows_f32 n=%zu rows=%zu [%zu]",
                      K[v]->isa, n, rows, i);
            cr_expect(memcmp(&qg[i], &qw[i], 8) == 0 || (isnan(qg[i]) && isnan(qw[i])), "%s mulrows_f64 n=%zu rows=%zu [%zu]",
                      K[v]->isa, n, rows, i);
            cr_expect(memcmp(&fg[i], &fw[i], 4) == 0 || (isnan(fg[i]) && isnan(fw[i])),
                      "%s extrows_f32 flags %d n=%zu rows=%zu [%zu]: %a, want %a", K[v]->isa, flags, n, rows, i, fg[i], fw[i]);
            cr_expect(memcmp(&eg[i], &ew[i], 8) == 0 || (isnan(eg[i]) && isnan(ew[i])),
                      "%s extrows_f64 flags %d n=%zu rows=%zu [%zu]", K[v]->isa, flags, n, rows, i);
          }
        }
      }
  for (int v = 0; v < 2; v++)
    for (int op = BXFX_RED_SUM; op <= BXFX_RED_MIN; op++)
      for (size_t n = 0; n <= W; n += n < 34 ? 1 : 43)
        for (size_t rows = 1; rows <= ROWS - 1; rows += rows < 3 ? 1 : 8) {
          int32_t ig[W], iw[W];
          int64_t lg[W], lw[W];
          memcpy(ig, ia, sizeof ig), memcpy(iw, ia, sizeof iw);
          memcpy(lg, la, sizeof lg), memcpy(lw, la, sizeof lw);
          K[v]->rowsacc_i32(op, ig, ia + W, W, rows, n);
          K[v]->rowsacc_i64(op, lg, la + W, W, rows, n);
          for (size_t r = 1; r <= rows; r++) {
            bxfx_kern_gen.rowacc_i32(op, iw, ia + r * W, n);
            bxfx_kern_gen.rowacc_i64(op, lw, la + r * W, n);
          }
          cr_assert(!memcmp(ig, iw, n * 4) && !memcmp(lg, lw, n * 8), "%s rowsacc op %d n=%zu rows=%zu", K[v]->isa, op,
                    n, rows);
        }
  for (int v = 0; v < 2; v++)
    for (size_t n = 0; n <= ROWS * W; n += n < 40 ? 1 : 211) {
      static int32_t io[ROWS * W];
      static int64_t lo[ROWS * W];
      static float fo[ROWS * W];
      static double dacc[ROWS * W], dacc2[ROWS * W], do_[ROWS * W];
      K[v]->cumsum_i32(ia, io, n);
      K[v]->cumsum_i64(la, lo, n);
      uint32_t s = 0;
      uint64_t t = 0;
      for (size_t i = 0; i < n; i++) {
        s += (uint32_t)ia[i], t += (uint64_t)la[i];
        cr_assert(io[i] == (int32_t)s && lo[i] == (int64_t)t, "%s cumsum ints n=%zu [%zu]", K[v]->isa, n, i);
      }
      for (size_t i = 0; i < n; i++) dacc[i] = d[i], dacc2[i] = d[i];
      K[v]->cumstep_f32(dacc, a, fo, n);
      K[v]->cumstep_f64(dacc2, d, do_, n);
      for (size_t i = 0; i < n; i++) {
        double w = d[i] + (double)a[i], w2 = d[i] + d[i];
        float wf = (float)w;
        cr_assert((memcmp(&dacc[i], &w, 8) == 0 && memcmp(&fo[i], &wf, 4) == 0) || (isnan(w) && isnan(fo[i])),
                  "%s cumstep_f32 n=%zu [%zu]", K[v]->isa, n, i);
        cr_assert((memcmp(&dacc2[i], &w2, 8) == 0 && memcmp(&do_[i], &w2, 8) == 0) || isnan(w2),
                  "%s cumstep_f64 n=%zu [%zu]", K[v]->isa, n, i);
      }
    }
}

/* argext_bf16 scans bf16 widened in registers: in both variants the
 * index and value argext_f32 gives on the widened row, for every flag,
 * lengths around the lanes and the 2048-element scan blocks, with NaN
 * (early, late, none), infinities and extremes that are zeros of both
 * signs. */
Test(flex_blocks, argext_bf16_is_argext_f32_of_the_widened_row) {
  enum { N = 4200 };
  static uint16_t h[N];
  static float f[N];
  const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  for (int kind = 0; kind < 4; kind++) {
    for (int i = 0; i < N; i++) {
      float x = (float)((i * 37) % 1001) / 7.0f - 70.0f;
      if (kind == 1 && i % 97 == 5) x = i % 2 ? INFINITY : -INFINITY;
      if (kind == 2 && (i == 3000 || i == 3500)) x = NAN;
      if (kind == 3) x = i % 3 == 0 ? -0.0f : i % 3 == 1 ? 0.0f : -1.0f;
      h[i] = bxk_f32_to_bf16(x);
      f[i] = bxk_bf16_to_f32(h[i]);
    }
    for (int v = 0; v < 2; v++)
      for (int flags = 0; flags < 4; flags++)
        for (size_t n = 1; n <= N; n += n < 40 ? 1 : 1031) {
          float gv, wv;
          int64_t gi = K[v]->argext_bf16(h, n, flags, &gv), wi = bxfx_kern_gen.argext_f32(f, n, flags, &wv);
          cr_expect(gi == wi && (memcmp(&gv, &wv, 4) == 0 || (isnan(gv) && isnan(wv))),
                    "%s argext_bf16 kind %d flags %d n=%zu: %lld %a, want %lld %a", K[v]->isa, kind, flags, n,
                    (long long)gi, gv, (long long)wi, wv);
        }
  }
}

/* tile8_u32/u16/u8 (transposed copies, flex_layout.c) in both variants:
 * every element lands at its transposed place with its bits (NaN
 * payloads, ints), and nothing outside the 8x8 block is written. */
Test(flex_blocks, tile8_transposes_bits_exactly) {
  enum { SS = 13, DS = 11 };
  static uint32_t src[8 * SS], dst[2][9 * DS];
  static uint16_t src16[8 * SS], dst16[2][9 * DS];
  static uint8_t src8[8 * SS], dst8[2][9 * DS];
  for (int i = 0; i < 8 * SS; i++) {
    src[i] = 0x7fc00001u + (uint32_t)i * 0x01010101u;
    src16[i] = (uint16_t)(0x7e01u + (unsigned)i * 0x0101u);   /* f16 NaN payloads, then others */
    src8[i] = (uint8_t)(i * 37 + 1);
  }
  const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  for (int v = 0; v < 2; v++) {
    memset(dst[v], 0xab, sizeof dst[v]);
    memset(dst16[v], 0xab, sizeof dst16[v]);
    memset(dst8[v], 0xab, sizeof dst8[v]);
    K[v]->tile8_u32(dst[v], DS, src, SS);
    K[v]->tile8_u16(dst16[v], DS, src16, SS);
    K[v]->tile8_u8(dst8[v], DS, src8, SS);
    for (int m = 0; m < 9; m++)
      for (int k = 0; k < DS; k++) {
        bool in = m < 8 && k < 8;
        uint32_t want = in ? src[k * SS + m] : 0xababababu;
        uint16_t want16 = in ? src16[k * SS + m] : 0xababu;
        uint8_t want8 = in ? src8[k * SS + m] : 0xabu;
        cr_expect_eq(dst[v][m * DS + k], want, "%s tile8 [%d][%d] = %08x, want %08x", K[v]->isa, m, k,
                     dst[v][m * DS + k], want);
        cr_expect_eq(dst16[v][m * DS + k], want16, "%s tile8_u16 [%d][%d] = %04x, want %04x", K[v]->isa, m, k,
                     dst16[v][m * DS + k], want16);
        cr_expect_eq(dst8[v][m * DS + k], want8, "%s tile8_u8 [%d][%d] = %02x, want %02x", K[v]->isa, m, k,
                     dst8[v][m * DS + k], want8);
      }
  }
}

/* One block-transpose kernel (B x B elements of T) in both variants:
 * every element lands at its transposed place with its bits, and nothing
 * outside the block is written (strides not multiples of B).  tile4_u64:
 * the 8-byte transposed copies (flex_layout.c), f64 NaN payloads among
 * the values; tile16_u8: the tile walk's bool tiles (flex_elem.c). */
#define BLOCK_TRANSPOSE_TEST(name, kern, T, B, SS, DS, FILL)                                      \
  Test(flex_blocks, name) {                                                                       \
    static T src[B * SS], dst[2][(B + 1) * DS];                                                   \
    for (int i = 0; i < B * SS; i++) src[i] = (T)(FILL);                                          \
    T outside;                                                                                    \
    memset(&outside, 0xab, sizeof outside);                                                       \
    const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };                        \
    for (int v = 0; v < 2; v++) {                                                                 \
      memset(dst[v], 0xab, sizeof dst[v]);                                                        \
      K[v]->kern(dst[v], DS, src, SS);                                                            \
      for (int m = 0; m < B + 1; m++)                                                             \
        for (int k = 0; k < DS; k++) {                                                            \
          const T want = m < B && k < B ? src[k * SS + m] : outside;                              \
          cr_expect_eq(dst[v][m * DS + k], want, "%s " #kern " [%d][%d] = %llx, want %llx", K[v]->isa, m, k, \
                       (unsigned long long)dst[v][m * DS + k], (unsigned long long)want);         \
        }                                                                                         \
    }                                                                                             \
  }
BLOCK_TRANSPOSE_TEST(tile4_u64_transposes_bits_exactly, tile4_u64, uint64_t, 4, 7, 5,
                     0x7ff8000000000001ull + (uint64_t)i * 0x0101010101010101ull)
BLOCK_TRANSPOSE_TEST(tile16_u8_transposes_every_byte, tile16_u8, uint8_t, 16, 21, 19, i * 37 + 1)
#undef BLOCK_TRANSPOSE_TEST

/* The block converters of both variants (F16C and shifts in the AVX2 one,
 * bit arithmetic in the generic one) against bxk_scalar.h's scalar rules,
 * bit for bit; f32 -> f16 NaNs too (F16C keeps a NaN's top payload bits
 * and makes it quiet, as bxk_f32_to_f16 does).  f16 -> f32 of a signaling
 * NaN: F16C quiets it, the scalar rule keeps the bits, so there NaN is
 * all that is asked. */
Test(flex_blocks, half_conversions_match_scalar_rules) {
  const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  static uint16_t all[65536];
  static float w[65536];
  for (uint32_t h = 0; h < 65536; h++) all[h] = (uint16_t)h;
  for (int v = 0; v < 2; v++) {
    K[v]->f16_to_f32(all, w, 65536);
    for (uint32_t h = 0; h < 65536; h++) {
      float r = bxk_f16_to_f32((uint16_t)h);
      cr_assert(memcmp(&w[h], &r, 4) == 0 || (isnan(r) && isnan(w[h])), "%s f16 %04x", K[v]->isa, h);
    }
    K[v]->bf16_to_f32(all, w, 65536);
    for (uint32_t h = 0; h < 65536; h++) {
      float r = bxk_bf16_to_f32((uint16_t)h);
      cr_assert(memcmp(&w[h], &r, 4) == 0, "%s bf16 %04x", K[v]->isa, h);
    }
  }
  /* A stride through all float bit patterns. */
  uint16_t v1[64], v2[64];
  float f[64];
  for (uint64_t u = 0; u < (1ull << 32); u += 65521 * 64) {
    for (int i = 0; i < 64; i++) {
      uint32_t x = (uint32_t)(u + (uint64_t)i * 65521);
      memcpy(&f[i], &x, 4);
    }
    for (int v = 0; v < 2; v++) {
      K[v]->f32_to_f16(f, v1, 64);
      K[v]->f32_to_bf16(f, v2, 64);
      for (int i = 0; i < 64; i++) {
        cr_assert_eq(v1[i], bxk_f32_to_f16(f[i]), "%s f16 of %a", K[v]->isa, f[i]);
        cr_assert_eq(v2[i], bxk_f32_to_bf16(f[i]), "%s bf16 of %a", K[v]->isa, f[i]);
      }
    }
  }
}

/* add_at_f16 (scatter_add's f16 rows) in both variants against the
 * scalar rule applied in order: every f16 value added at repeated
 * positions (16 a target), so sums overflow, cancel to signed zeros,
 * meet the few NaNs and infinities and land on subnormals. */
Test(flex_blocks, add_at_f16_matches_scalar_rule) {
  const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  enum { N = 65536, T = 4099 };
  static uint16_t vals[N];
  static int64_t pos[N];
  static uint16_t want[T], got[T];
  for (uint32_t h = 0; h < N; h++) {
    vals[h] = (uint16_t)(h * 40503u);   /* every f16 once; infinities and NaNs made rare */
    if ((vals[h] & 0x7c00) == 0x7c00 && h % 97) vals[h] &= 0xbfff;
    pos[h] = (int64_t)((h * 7u + h / 5u) % T);
  }
  for (int v = 0; v < 2; v++)
    for (int start = 0; start < 3; start++) {
      for (int t = 0; t < T; t++) want[t] = got[t] = (uint16_t)(start * 0x3c00u + (unsigned)t * 7u);
      for (uint32_t h = 0; h < N; h++)
        want[pos[h]] = bxk_f32_to_f16(bxk_f16_to_f32(want[pos[h]]) + bxk_f16_to_f32(vals[h]));
      K[v]->add_at_f16(got, pos, vals, N);
      int nans = 0;
      for (int t = 0; t < T; t++) {
        nans += (want[t] & 0x7fff) > 0x7c00;
        bool nan = (want[t] & 0x7fff) > 0x7c00 && (got[t] & 0x7fff) > 0x7c00;
        cr_expect(got[t] == want[t] || nan, "%s add_at_f16 [%d] = %04x, want %04x", K[v]->isa, t, got[t], want[t]);
      }
      cr_expect(nans < T / 4, "most sums should stay numbers (%d NaNs)", nans);
    }
}

/* add_at_bf16 of both variants (8 positions at a time in lanes when they
 * differ, one at a time otherwise) against bxk_scalar.h's rule one add at
 * a time: every bf16 pattern as a value (NaN and infinities rare, so the
 * sums stay numbers), positions that rarely repeat within 8, positions in
 * runs of 3 (every block has repeats), and repeats only between blocks
 * (a block's 8 are a permutation, the next block touches the same 8);
 * a count that is not a multiple of 8 (the tail). */
Test(flex_blocks, add_at_bf16_matches_scalar_rule) {
  const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  enum { N = 65536, T = 4099 };
  static uint16_t vals[N];
  static int64_t pos[N];
  static uint16_t want[T], got[T];
  for (uint32_t h = 0; h < N; h++) {
    vals[h] = (uint16_t)(h * 40503u);
    if ((vals[h] & 0x7f80) == 0x7f80 && h % 97) vals[h] &= 0xbfff;
  }
  for (int v = 0; v < 2; v++)
    for (int layout = 0; layout < 3; layout++)
      for (int start = 0; start < 2; start++) {
        const size_t n = N - 5;
        for (uint32_t h = 0; h < N; h++)
          pos[h] = layout == 0   ? (int64_t)((h * 7u + h / 5u) % T)
                   : layout == 1 ? (int64_t)(h / 3 % T)
                                 : (int64_t)((h / 16 * 8 + (h * 5) % 8) % T);
        for (int t = 0; t < T; t++) want[t] = got[t] = (uint16_t)(start * 0x3f80u + (unsigned)t * 7u);
        for (size_t h = 0; h < n; h++)
          want[pos[h]] = bxk_f32_to_bf16(bxk_bf16_to_f32(want[pos[h]]) + bxk_bf16_to_f32(vals[h]));
        K[v]->add_at_bf16(got, pos, vals, n);
        int nans = 0;
        for (int t = 0; t < T; t++) {
          nans += (want[t] & 0x7fff) > 0x7f80;
          bool nan = (want[t] & 0x7fff) > 0x7f80 && (got[t] & 0x7fff) > 0x7f80;
          cr_expect(got[t] == want[t] || nan, "%s add_at_bf16 layout %d [%d] = %04x, want %04x", K[v]->isa, layout, t,
                    got[t], want[t]);
        }
        cr_expect(nans < T / 4, "most sums should stay numbers (%d NaNs)", nans);
      }
}

/* rev_u8/u16/u32/u64 of both variants reverse every length from 0 to 200
 * (vector steps of 32 bytes, pairs of them, tails) bits and all, and
 * write nothing past the end. */
Test(flex_blocks, reversed_copies_of_both_variants) {
  const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  enum { M = 200 };
  static uint64_t src[M], dst[M + 1];
  for (int i = 0; i < M; i++) src[i] = 0x7ff8000000000001ull + (uint64_t)i * 0x0101010101010101ull;
  for (int v = 0; v < 2; v++)
    for (int es = 1; es <= 8; es *= 2)
      for (int n = 0; n <= M; n++) {
        memset(dst, 0xab, sizeof dst);
        switch (es) {
        case 1: K[v]->rev_u8((uint8_t *)dst, (const uint8_t *)src, (size_t)n); break;
        case 2: K[v]->rev_u16((uint16_t *)dst, (const uint16_t *)src, (size_t)n); break;
        case 4: K[v]->rev_u32((uint32_t *)dst, (const uint32_t *)src, (size_t)n); break;
        default: K[v]->rev_u64(dst, src, (size_t)n); break;
        }
        const unsigned char *d = (const unsigned char *)dst, *s = (const unsigned char *)src;
        for (int i = 0; i < n; i++)
          cr_assert(!memcmp(d + i * es, s + (n - 1 - i) * es, (size_t)es), "%s rev of %d-byte elements, n %d, [%d]",
                    K[v]->isa, es, n, i);
        for (int b = n * es; b < n * es + 8; b++)
          cr_assert_eq(d[b], 0xab, "%s rev of %d-byte elements, n %d wrote past the end", K[v]->isa, es, n);
      }
}

/* The vector forms of max, min and relu and of the f32 -> i32 cast agree
 * lane for lane with the scalar functions of bxk_scalar.h they stand for,
 * on NaN, signed zeros and infinities, in every position of a vector and
 * in the scalar tail, in both variants. */
Test(flex_blocks, vector_forms_match_scalar_rules) {
  static const float aw[] = { NAN, -NAN, 0.0f, -0.0f, INFINITY, -INFINITY, 1.0f, -1.0f,
                              2147483648.0f, -2147483648.0f, 2147483520.0f, 3.5f, -3.5f,
                              0x1p-149f, -0x1p-149f, 1e30f, -1e30f };
  enum { NA = sizeof aw / sizeof aw[0], N = NA * NA };
  static float a[N], b[N], o[N];
  static int32_t oi[N];
  for (int i = 0; i < NA; i++)
    for (int j = 0; j < NA; j++) a[i * NA + j] = aw[i], b[i * NA + j] = aw[j];
  const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  for (int v = 0; v < 2; v++) {
    for (int mode = 0; mode < 3; mode++) {
      K[v]->bin[BXFX_BIN_max](a, b, o, N, mode);
      for (int i = 0; i < N; i++) {
        float x = mode == BXFX_SV ? a[0] : a[i], y = mode == BXFX_VS ? b[0] : b[i];
        float r = bxk_max_f32(x, y);
        cr_assert(memcmp(&o[i], &r, 4) == 0, "%s max(%g, %g) mode %d: %g", K[v]->isa, x, y, mode, o[i]);
      }
      K[v]->bin[BXFX_BIN_min](a, b, o, N, mode);
      for (int i = 0; i < N; i++) {
        float x = mode == BXFX_SV ? a[0] : a[i], y = mode == BXFX_VS ? b[0] : b[i];
        float r = bxk_min_f32(x, y);
        cr_assert(memcmp(&o[i], &r, 4) == 0, "%s min(%g, %g) mode %d: %g", K[v]->isa, x, y, mode, o[i]);
      }
    }
    K[v]->un[BXFX_UN_relu](b, o, N);
    for (int i = 0; i < N; i++) {
      float r = bxk_relu_f32(b[i]);
      cr_assert(memcmp(&o[i], &r, 4) == 0, "%s relu(%g): %g", K[v]->isa, b[i], o[i]);
    }
    K[v]->f32_to_i32(b, oi, N);
    for (int i = 0; i < N; i++)
      cr_assert_eq(oi[i], bxk_f64_to_i32(b[i]), "%s f32_to_i32(%a)", K[v]->isa, b[i]);
  }
}

Test(flex_blocks, large_blocks_are_cached) {
  const bext_device *d;
  (d = bext_device_get("flex"));
  int64_t n = 1 << 20;   /* 4 MiB: a cached, huge-page-aligned block */
  bext_tensor *a = bext_zeros(&n, 1, BEXT_F32, d);
  cr_assert_not_null(a);
  bext_release(a);
  unsigned long before = bxr_host_cache_hits();
  bext_tensor *b = bext_ones(&n, 1, BEXT_F32, d);
  cr_assert_not_null(b);
  cr_expect_gt(bxr_host_cache_hits(), before, "a freed 4 MiB block was not reused");
  /* the reused block must hold the new values, not the old zeros */
  bext_tensor *tail = bext_slice(b, (int64_t[]){ n - 4 }, (int64_t[]){ n }, 1);
  float v[4];
  cr_assert(bext_read(tail, v, sizeof v));
  for (int i = 0; i < 4; i++) cr_expect_eq(v[i], 1.0f);
  bext_release(tail);
  bxr_host_cache_trim();
}

static void *failing(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud; (void)osize;
  if (nsize == 0) { free(ptr); return NULL; }
  return nsize >= 4096 ? NULL : realloc(ptr, nsize);
}

Test(flex_blocks, allocation_failure_is_an_error) {
  const bext_device *d;
  (d = bext_device_get("flex"));
  bext_set_allocator(failing, NULL);
  int64_t n = 100000;
  bext_tensor *t = bext_zeros(&n, 1, BEXT_F32, d);
  cr_expect_null(t);
  cr_expect(strstr(bext_last_error(), "memory") != NULL, "error: %s", bext_last_error());
  bext_set_allocator(NULL, NULL);
}

Test(flex_blocks, speed_matrix_kernel_variants_agree) {
  /* arange in lanes, native-width i32 ops and the i32/i64/f64 comparisons
   * (flex_kern.h): the AVX2 table and the generic one give the same bits,
   * with the integer edge values and NaN in the operands. */
  enum { N = 1037 };
  static int32_t ia[N], ib[N], io1[N], io2[N];
  static int64_t la[N], lb[N];
  static double da[N], db[N], d1[N], d2[N];
  static float f1[N], f2[N];
  static uint8_t c1[N], c2[N];
  static const int32_t edge[] = { 0, -1, 1, INT32_MAX, INT32_MIN, 7, -7 };
  for (int i = 0; i < N; i++) {
    ia[i] = i % 11 == 0 ? edge[(i / 11) % 7] : (i * 37) % 201 - 100;
    ib[i] = i % 13 == 0 ? edge[(i / 13) % 7] : (i * 53) % 97 - 48;
    la[i] = (int64_t)((uint64_t)(int64_t)ia[i] * (i % 3 ? 1u : 4294967311u));
    lb[i] = (int64_t)((uint64_t)(int64_t)ib[i] * (i % 5 ? 1u : 4294967311u));
    da[i] = i % 17 == 0 ? NAN : ia[i] / 4.0;
    db[i] = i % 19 == 0 ? -0.0 : ib[i] / 4.0;
  }
  for (int op = 0; op < BXFX_IOP_COUNT; op++)
    for (int mode = 0; mode < 3; mode += 2) {
      bxfx_kern_avx2.bin_i32(op, ia, ib, io1, N, mode);
      bxfx_kern_gen.bin_i32(op, ia, ib, io2, N, mode);
      cr_expect(memcmp(io1, io2, sizeof io1) == 0, "i32 op %d mode %d differs", op, mode);
      /* div and rem in f64 lanes, pow in blocked steps: the scalar rule
       * exactly (0, -1, INT32_MIN among ib; negative exponents) */
      for (int i = 0; i < N; i++) {
        const int32_t x = ia[i], y = mode ? ib[0] : ib[i];
        if (op == BXFX_IOP_rem) cr_expect_eq(io1[i], bxk_rem_i32(x, y), "rem(%d, %d)", x, y);
        if (op == BXFX_IOP_div) cr_expect_eq(io1[i], bxk_div_i32(x, y), "div(%d, %d)", x, y);
        if (op == BXFX_IOP_pow) cr_expect_eq(io1[i], bxk_pow_i32(x, y), "pow(%d, %d)", x, y);
      }
    }
  /* i64 binary ops (bin_i64): the scalar rule in both variants, wrapping
   * products and the extremes among la/lb, both modes */
  for (int op = 0; op < BXFX_IOP_COUNT; op++)
    for (int mode = 0; mode < 3; mode += 2) {
      static int64_t lo1[N], lo2[N];
      bxfx_kern_avx2.bin_i64(op, la, lb, lo1, N, mode);
      bxfx_kern_gen.bin_i64(op, la, lb, lo2, N, mode);
      for (int i = 0; i < N; i++) {
        const int64_t x = la[i], y = mode ? lb[0] : lb[i];
        const int64_t want = op == BXFX_IOP_add ? bxk_add_i64(x, y) : op == BXFX_IOP_sub ? bxk_sub_i64(x, y)
                           : op == BXFX_IOP_mul ? bxk_mul_i64(x, y) : op == BXFX_IOP_div ? bxk_div_i64(x, y)
                           : op == BXFX_IOP_rem ? bxk_rem_i64(x, y) : op == BXFX_IOP_max ? bxk_max_i64(x, y)
                           : op == BXFX_IOP_min ? bxk_min_i64(x, y) : bxk_pow_i64(x, y);
        cr_assert_eq(lo1[i], want, "avx2 i64 op %d mode %d (%lld, %lld)", op, mode, (long long)x, (long long)y);
        cr_assert_eq(lo2[i], want, "generic i64 op %d mode %d (%lld, %lld)", op, mode, (long long)x, (long long)y);
      }
    }
  for (int op = 0; op < BXFX_IUN_COUNT; op++) {
    bxfx_kern_avx2.un_i32(op, ia, io1, N, -50, 60);
    bxfx_kern_gen.un_i32(op, ia, io2, N, -50, 60);
    cr_expect(memcmp(io1, io2, sizeof io1) == 0, "i32 unary %d differs", op);
    static int64_t lo1[N], lo2[N];
    bxfx_kern_avx2.un_i64(op, la, lo1, N, -50, INT64_MAX - 1);
    bxfx_kern_gen.un_i64(op, la, lo2, N, -50, INT64_MAX - 1);
    cr_expect(memcmp(lo1, lo2, sizeof lo1) == 0, "i64 unary %d differs", op);
    for (int i = 0; i < N; i++) {
      const int64_t x = la[i];
      const int64_t want = op == BXFX_IUN_neg ? bxk_neg_i64(x) : op == BXFX_IUN_abs ? bxk_abs_i64(x)
                           : op == BXFX_IUN_relu ? bxk_relu_i64(x) : op == BXFX_IUN_sign ? bxk_sign_i64(x)
                           : x < -50 ? -50 : x > INT64_MAX - 1 ? INT64_MAX - 1 : x;
      cr_expect_eq(lo1[i], want, "i64 unary %d of %lld", op, (long long)x);
    }
  }
  for (int op = 0; op < BXFX_CMP_COUNT; op++)
    for (int mode = 0; mode < 3; mode += 2) {
      bxfx_kern_avx2.cmp_i32(op, ia, ib, c1, N, mode);
      bxfx_kern_gen.cmp_i32(op, ia, ib, c2, N, mode);
      cr_expect(memcmp(c1, c2, sizeof c1) == 0, "i32 comparison %d mode %d differs", op, mode);
      bxfx_kern_avx2.cmp_i64(op, la, lb, c1, N, mode);
      bxfx_kern_gen.cmp_i64(op, la, lb, c2, N, mode);
      cr_expect(memcmp(c1, c2, sizeof c1) == 0, "i64 comparison %d mode %d differs", op, mode);
      bxfx_kern_avx2.cmp_f64(op, da, db, c1, N, mode);
      bxfx_kern_gen.cmp_f64(op, da, db, c2, N, mode);
      cr_expect(memcmp(c1, c2, sizeof c1) == 0, "f64 comparison %d mode %d differs", op, mode);
    }
  for (int op = 0; op < 4; op++)
    for (size_t n = 1; n < N; n += 97) {
      cr_expect_eq(bxfx_kern_avx2.red_i32(op, ia, n), bxfx_kern_gen.red_i32(op, ia, n), "red_i32 %d [%zu]", op, n);
      cr_expect_eq(bxfx_kern_avx2.red_i64(op, la, n), bxfx_kern_gen.red_i64(op, la, n), "red_i64 %d [%zu]", op, n);
      memcpy(io1, ib, sizeof io1);
      memcpy(io2, ib, sizeof io2);
      bxfx_kern_avx2.rowacc_i32(op, io1, ia, n);
      bxfx_kern_gen.rowacc_i32(op, io2, ia, n);
      cr_expect(memcmp(io1, io2, sizeof io1) == 0, "rowacc_i32 %d [%zu] differs", op, n);
    }
  static const double ar[][2] = { { 0, 1 }, { -3.25, 0.37 }, { 0.1, 0.3 }, { 2147482000.5, 1.25 }, { 5e5, -0.7 } };
  for (size_t k = 0; k < sizeof ar / sizeof ar[0]; k++)
    for (int64_t i0 = 0; i0 < 3000; i0 += 1001) {
      bxfx_kern_avx2.arange_f32(f1, N, ar[k][0], ar[k][1], i0);
      bxfx_kern_gen.arange_f32(f2, N, ar[k][0], ar[k][1], i0);
      cr_expect(memcmp(f1, f2, sizeof f1) == 0, "arange f32 %g %g from %lld differs", ar[k][0], ar[k][1], (long long)i0);
      bxfx_kern_avx2.arange_f64(d1, N, ar[k][0], ar[k][1], i0);
      bxfx_kern_gen.arange_f64(d2, N, ar[k][0], ar[k][1], i0);
      cr_expect(memcmp(d1, d2, sizeof d1) == 0, "arange f64 %g %g from %lld differs", ar[k][0], ar[k][1], (long long)i0);
      bxfx_kern_avx2.arange_i32(io1, N, ar[k][0], ar[k][1], i0);
      bxfx_kern_gen.arange_i32(io2, N, ar[k][0], ar[k][1], i0);
      cr_expect(memcmp(io1, io2, sizeof io1) == 0, "arange i32 %g %g from %lld differs", ar[k][0], ar[k][1], (long long)i0);
    }
}

/* arange_i64 (bxk_f64_to_i64 per lane) and the integer aranges (iota_*,
 * which flex_layout.c's arange_exact picks) against the f64 rule element
 * by element: start + (double)i * step stored by bxk_f64_to_i64 /
 * bxk_f64_to_i32 / (float), in both kernel tables, on lengths around the
 * vector widths, chunk offsets i0, negative steps, and starts and steps
 * near 2^52 (iota's bound), 2^53 and 2^63 (arange_i64 saturates).  The
 * iota cases are those whose values are exact integers below 2^52 and
 * (i32, f32) in i32's range, as arange_exact requires. */
Test(flex_blocks, integer_arange_is_the_f64_rule) {
  const struct bxfx_kernels *ks[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  enum { N = 70 };
  static const size_t ns[] = { 0, 1, 3, 4, 5, 7, 8, 9, 16, 31, 33, 70 };
  static const int64_t i0s[] = { 0, 1, 64, 1000003 };
  /* exact: every value below 2^52 in magnitude (i32/f32 ones in range) */
  static const int64_t ex[][2] = { { 0, 1 }, { -5, 3 }, { 100, -7 }, { 4503599627000000, -1 },
                                   { -4503599627300000, 4 }, { 2147483000, 1 }, { -2147483648, 1 },
                                   { 2147483647, -1 }, { 16777215, 1 }, { -16777219, -3 }, { 123456789, 12345 } };
  /* general: fractional, near 2^53 and 2^63, saturating */
  static const double gen[][2] = { { 0.5, 1.25 }, { -3.75, -0.5 }, { 9007199254740990.0, 1 },
                                   { 9223372036854000000.0, 2048 }, { -9223372036854000000.0, -4096 },
                                   { 9.2233720368547758e18, 1e17 }, { 1e300, -1e299 }, { -2.5e18, 3.3e16 } };
  static int64_t l[N];
  static int32_t w[N];
  static float f[N];
  for (int v = 0; v < 2; v++) {
    if (v == 0 && bxfx_kern() != &bxfx_kern_avx2) continue;
    const struct bxfx_kernels *K = ks[v];
    for (size_t c = 0; c < sizeof gen / sizeof gen[0]; c++)
      for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
        for (size_t b = 0; b < sizeof i0s / sizeof i0s[0]; b++) {
          K->arange_i64(l, ns[a], gen[c][0], gen[c][1], i0s[b]);
          for (size_t i = 0; i < ns[a]; i++) {
            double p = (double)(i0s[b] + (int64_t)i) * gen[c][1];
            cr_assert_eq(l[i], bxk_f64_to_i64(gen[c][0] + p), "%s arange_i64(%g, %g) i0 %lld [%zu]", K->isa,
                         gen[c][0], gen[c][1], (long long)i0s[b], i);
          }
        }
    for (size_t c = 0; c < sizeof ex / sizeof ex[0]; c++)
      for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
        for (size_t b = 0; b < sizeof i0s / sizeof i0s[0]; b++) {
          const int64_t s = ex[c][0], t = ex[c][1], i0 = i0s[b];
          const int64_t last = s + t * (i0 + (int64_t)(ns[a] ? ns[a] - 1 : 0));
          const bool in32 = s >= INT32_MIN && s <= INT32_MAX && last >= INT32_MIN && last <= INT32_MAX;
          K->iota_i64(l, ns[a], s, t, i0);
          if (in32) K->iota_i32(w, ns[a], s, t, i0), K->iota_f32(f, ns[a], s, t, i0);
          for (size_t i = 0; i < ns[a]; i++) {
            double x = (double)s + (double)(i0 + (int64_t)i) * (double)t;
            cr_assert_eq(l[i], bxk_f64_to_i64(x), "%s iota_i64(%lld, %lld) i0 %lld [%zu]", K->isa, (long long)s,
                         (long long)t, (long long)i0, i);
            if (!in32) continue;
            cr_assert_eq(w[i], bxk_f64_to_i32(x), "%s iota_i32(%lld, %lld) [%zu]", K->isa, (long long)s, (long long)t, i);
            float want = (float)x;
            cr_assert(!memcmp(&f[i], &want, 4), "%s iota_f32(%lld, %lld) [%zu]: %a, want %a", K->isa, (long long)s,
                      (long long)t, i, (double)f[i], (double)want);
          }
        }
  }
}

/* rem_f32 (f64 lanes, flex_kern_body.h) is bxk_rem_f32 bit for bit: signed
 * zeros (a zero takes a's sign), infinities and NaN in either operand,
 * zero divisors, subnormals, quotients near and past the 2^29 bound of
 * the lane path, and quotients just below an integer; in every vector
 * position and in the scalar tail (lengths 0..17 and a long odd one). */
Test(flex_blocks, rem_f32_matches_scalar_rule) {
  static const float aw[] = { 0.0f, -0.0f, 1.0f, -1.0f, 7.5f, -7.5f, 3.0f, -3.0f, INFINITY, -INFINITY, NAN,
                              0x1p-149f, -0x1p-149f, 0x1p-126f, 1e30f, -1e30f, 0x1p29f, 0x1.fffffep28f,
                              16777215.0f, -16777215.0f, 0.1f, -0.1f, 5.0f, 0x1.000002p0f };
  static const float bw[] = { 1.0f, -1.0f, 0.0f, -0.0f, 2.0f, -2.0f, 0.3f, -0.3f, INFINITY, -INFINITY, NAN,
                              0x1p-149f, 0x1p-126f, 3.0f, 1e-30f, 0.1f, 0x1.000002p0f, -0x1.fffffep-1f };
  /* Each pair fills a whole vector (8 lanes): a vector with one lane
   * outside the lane path's bound goes to the scalar rule whole, so mixed
   * vectors alone would leave the lane path untested on these values. */
  enum { NA = sizeof aw / sizeof aw[0], NB = sizeof bw / sizeof bw[0], NG = 8 * NA * NB, N = NG + 2003 };
  static float a[N], b[N], o[N];
  for (int i = 0; i < NG; i++) a[i] = aw[i / 8 / NB], b[i] = bw[i / 8 % NB];
  uint32_t s = 12345;
  for (int i = NG; i < N; i++) {   /* random magnitudes, both signs, quotients mostly below 2^29 */
    s = s * 1664525u + 1013904223u;
    a[i] = ldexpf((float)(s >> 8) / 16777216.0f, (int)(s % 40) - 20) * ((s & 1) ? -1.0f : 1.0f);
    s = s * 1664525u + 1013904223u;
    b[i] = ldexpf((float)(s >> 8) / 16777216.0f + 0.01f, (int)(s % 40) - 20) * ((s & 2) ? -1.0f : 1.0f);
  }
  const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  for (int v = 0; v < 2; v++) {
    K[v]->rem_f32(a, b, o, N);
    for (int i = 0; i < N; i++) {
      float r = bxk_rem_f32(a[i], b[i]);
      cr_assert(memcmp(&o[i], &r, 4) == 0 || (r != r && o[i] != o[i]), "%s rem(%a, %a): %a, want %a", K[v]->isa,
                a[i], b[i], o[i], r);
    }
    for (int n = 0; n <= 17; n++) {   /* every tail length; o[n] stays untouched */
      o[n] = 42.0f;
      K[v]->rem_f32(a + NG + 3, b + NG + 5, o, (size_t)n);
      for (int i = 0; i < n; i++) {
        float r = bxk_rem_f32(a[NG + i + 3], b[NG + i + 5]);
        cr_assert(memcmp(&o[i], &r, 4) == 0 || (r != r && o[i] != o[i]), "%s n=%d rem(%a, %a)", K[v]->isa, n,
                  a[NG + i + 3], b[NG + i + 5]);
      }
      cr_assert_eq(o[n], 42.0f, "%s n=%d wrote past the end", K[v]->isa, n);
    }
  }
}

/* bf16_to_f32 (one vpmovzxwd and a shift per 8 lanes with AVX2) is
 * bxk_bf16_to_f32 bit for bit on every one of the 65536 patterns (NaN
 * payloads, subnormals, signed zeros), from every start offset mod 8 and
 * with every tail length; the element past the end stays untouched. */
Test(flex_blocks, bf16_widening_matches_scalar_for_every_pattern) {
  enum { N = 65536 + 8 };
  static uint16_t h[N];
  static float f[N + 1];
  for (int i = 0; i < N; i++) h[i] = (uint16_t)(i * 40503u + (unsigned)(i >> 16));   /* a permutation, then 8 more */
  const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  for (int v = 0; v < 2; v++)
    for (int off = 0; off < 8; off++) {
      const size_t n = (size_t)(N - 8 - off) + (size_t)(off * 3 % 8);   /* tails 0..7 */
      f[n] = 42.0f;
      K[v]->bf16_to_f32(h + off, f, n);
      for (size_t i = 0; i < n; i++) {
        float want = bxk_bf16_to_f32(h[off + i]);
        cr_assert(memcmp(&f[i], &want, 4) == 0, "%s bf16 0x%04x -> %a, want %a", K[v]->isa, h[off + i], f[i], want);
      }
      cr_assert_eq(f[n], 42.0f, "%s wrote past n=%zu", K[v]->isa, n);
    }
}

/* rem_f64 (trunc + FMA lanes with AVX2, flex_kern_body.h) is
 * bxk_rem_f64 bit for bit.  First each pair of edge values filling whole vectors (signed
 * zeros, infinities, NaN, zero divisors, subnormals, quotients at the
 * 2^52 bound, a tiny a whose floored result rounds to b), then 4M random
 * pairs in three families: exponents spread over the whole range (both
 * signs, subnormals included), a = k b nudged by a few ulps (quotients
 * just below and above integers, where the rounded quotient lands on
 * the next integer), and quotients near 2^52; tails of every length.
 * (The baseline variant is the scalar rule itself.) */
static uint64_t rem64_rng(uint64_t *s) {
  *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
  return *s;
}
static double rem64_pick(uint64_t *s, int fam, double b) {
  uint64_t r = rem64_rng(s);
  double sg = (r & 1) ? -1.0 : 1.0;
  switch (fam) {
  case 0: {                        /* any finite double, subnormals too */
    uint64_t u = rem64_rng(s) & 0x7fefffffffffffffull;
    if ((r >> 1) % 4 == 0) u &= 0x000fffffffffffffull;   /* subnormal */
    double d;
    memcpy(&d, &u, 8);
    if (b == 0 || (r >> 3) % 32 == 0) return sg * d;
    /* mostly within 2^-60..2^60 of b: the lane path's range, and fmod
     * (the reference) is slow on far exponents */
    return sg * ldexp(1.0 + (double)(u & 0x000fffffffffffffull) * 0x1p-52, ilogb(b) + (int)((r >> 6) % 121) - 60);
  }
  case 1: {                        /* near an integer multiple of b */
    double k = (double)(rem64_rng(s) >> (11 + (r >> 8) % 53));
    double a = k * b;
    for (int j = (int)((r >> 2) % 7) - 3; j != 0; j += j < 0 ? 1 : -1) a = nextafter(a, j < 0 ? -INFINITY : INFINITY);
    return ((r >> 5) & 1) ? -a : a;
  }
  default: {                       /* quotients around 2^52 */
    double q = ldexp(1.0 + (double)(rem64_rng(s) >> 12) * 0x1p-52, 50 + (int)((r >> 3) % 4));
    return sg * q * b;
  }
  }
}
Test(flex_blocks, rem_f64_matches_scalar_rule) {
  static const double aw[] = { 0.0, -0.0, 1.0, -1.0, 7.5, -7.5, 3.0, -3.0, INFINITY, -INFINITY, NAN, 0x1p-1074,
                               -0x1p-1074, 0x1p-1022, 1e300, -1e300, -1e-300, 1e-300, 0x1p52, 0x1.fffffffffffffp51,
                               -0x1.fffffffffffffp51, 9007199254740991.0, 0.1, -0.1, 5.0, 0x1.0000000000001p0,
                               0x1.8p-1070, DBL_MAX, -DBL_MAX };
  static const double bw[] = { 1.0, -1.0, 0.0, -0.0, 2.0, -2.0, 0.3, -0.3, INFINITY, -INFINITY, NAN, 0x1p-1074,
                               -0x1p-1074, 0x1p-1022, 3.0, 1e-300, 0.1, 0x1.0000000000001p0, -0x1.fffffffffffffp-1,
                               0x1p-1073, DBL_MAX, 1e300 };
  enum { NA = sizeof aw / sizeof aw[0], NB = sizeof bw / sizeof bw[0], NG = 8 * NA * NB, CH = 1 << 16, ROUNDS = 64 };
  static double a[NG > CH ? NG : CH], b[NG > CH ? NG : CH], o[NG > CH ? NG : CH];
  for (int i = 0; i < NG; i++) a[i] = aw[i / 8 / NB], b[i] = bw[i / 8 % NB];
  const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  static double want[NG > CH ? NG : CH];   /* the reference once per pair: glibc's fmod is slow */
#define REM64_CHECK(n, what)                                                                        \
  for (int v = 0; v < 2; v++) {                                                                     \
    K[v]->rem_f64(a, b, o, (size_t)(n));                                                            \
    for (int i = 0; i < (n); i++)                                                                   \
      cr_assert(memcmp(&o[i], &want[i], 8) == 0 || (want[i] != want[i] && o[i] != o[i]),             \
                "%s %s rem(%a, %a): %a, want %a", K[v]->isa, what, a[i], b[i], o[i], want[i]);      \
  }
  for (int i = 0; i < NG; i++) want[i] = bxk_rem_f64(a[i], b[i]);
  REM64_CHECK(NG, "edge");
  uint64_t s = 0x9e3779b97f4a7c15ull;
  for (int round = 0; round < ROUNDS; round++) {   /* 64 x 64Ki = 4M pairs */
    int fam = round % 3;
    for (int i = 0; i < CH; i++) {
      b[i] = rem64_pick(&s, 0, 0.0);
      if (fam != 0 && (b[i] == 0 || fabs(b[i]) > 0x1p900 || fabs(b[i]) < 0x1p-900))   /* keep k b finite, b nonzero */
        b[i] = ldexp(1.0 + (double)(rem64_rng(&s) >> 12) * 0x1p-52, (int)(rem64_rng(&s) % 200) - 100);
      a[i] = rem64_pick(&s, fam, b[i]);
      want[i] = bxk_rem_f64(a[i], b[i]);
    }
    REM64_CHECK(CH, fam == 0 ? "random" : fam == 1 ? "near k*b" : "near 2^52");
  }
  for (int n = 0; n <= 17; n++) {   /* every tail length; o[n] stays untouched */
    o[n] = 42.0;
    REM64_CHECK(n, "tail");
    cr_assert_eq(o[n], 42.0, "n=%d wrote past the end", n);
  }
#undef REM64_CHECK
}

/* The rule of f64 un_f64[op] for the lane-wise ops (bxk_scalar.h's). */
static double und_rule(int op, double x) {
  switch (op) {
  case BXFX_UND_sqrt: return sqrt(x);
  case BXFX_UND_rsqrt: return 1.0 / sqrt(x);
  case BXFX_UND_recip: return 1.0 / x;
  case BXFX_UND_floor: return floor(x);
  case BXFX_UND_ceil: return ceil(x);
  default: return bxk_round_f64(x);
  }
}

/* got is want's bits; a signalling NaN may come out quieted or not: GCC
 * inlines floor for the baseline ISA as an SSE2 sequence that passes it
 * through, where libm's floor and vroundpd quiet it. */
static bool same_f64_bits(uint64_t got, uint64_t want) {
  const uint64_t q = 0x0008000000000000ull;
  bool nan = (want & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
  return got == want || (nan && (got | q) == (want | q));
}

static double f64_bits(uint64_t u) {
  double d;
  memcpy(&d, &u, 8);
  return d;
}

/* f64 sqrt, rsqrt, recip, floor, ceil and round (un_f64: vsqrtpd, vdivpd,
 * vroundpd in the AVX2 table) are the scalar rule bit for bit, NaN bits
 * included (payloads, signs, sqrt(-1)'s default NaN; a signalling NaN
 * quieted or passed through): halves and the largest double below a half
 * (round to even, floor/ceil of +-0.49999999999999994), signed zeros,
 * 2^52 - 0.5 and past 2^52 (already integers), subnormals, infinities,
 * negatives under sqrt; every tail length from lane offsets 0-3, o[n]
 * untouched, and in place.  sigmoid (libmvec's exp lanes) within 4 ulps,
 * its limits (0, 1, NaN) exact. */
Test(flex_blocks, f64_unary_lanes_match_scalar_rules) {
  const double sp[] = { 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, 0.49999999999999994,
                        -0.49999999999999994, 0x1p52 - 0.5, -(0x1p52 - 0.5), 0x1p52 - 1.5, 0x1p52 + 1, -(0x1p52 + 1),
                        0x1p53 + 2, 0x1p51 + 0.5, 1e300, -1e300, DBL_MAX, -DBL_MAX, 0x1p-1074, -0x1p-1074,
                        0x1p-1022, 0x0.8p-1022, -0x0.fffffffffffffp-1022, 1e-300, INFINITY, -INFINITY, NAN, -NAN,
                        f64_bits(0x7ff8000000000123ull), f64_bits(0xfff80000deadbeefull),
                        f64_bits(0x7ff0000000000001ull), f64_bits(0xfff4000000000042ull), 4.0, 2.0, 0.1, -7.25, 710.0,
                        -710.0, -800.0, 40.0 };
  enum { NS = sizeof sp / sizeof sp[0], M = 4 * NS + 300 };
  static double a[M + 4], o[M + 4], w[M + 4];
  uint64_t s = 0x2545f4914f6cdd1dull;
  for (int i = 0; i < M + 4; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t r = s >> 20;
    /* the specials at every lane position, then quarters and wide values */
    a[i] = i < 4 * NS ? sp[(i * 5) % NS]
           : r % 3 == 0 ? ((double)(r % 4001) - 2000) / 4
                        : ldexp((r & 1 ? -1.0 : 1.0) * (1.0 + (double)(r >> 12) * 0x1p-40), (int)((r >> 2) % 140) - 70);
  }
  const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  static const int ops[] = { BXFX_UND_sqrt, BXFX_UND_rsqrt, BXFX_UND_recip, BXFX_UND_floor, BXFX_UND_ceil,
                             BXFX_UND_round };
  for (int v = 0; v < 2; v++)
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
      const int op = ops[k];
      for (int n = 0; n <= M; n = n < 40 ? n + 1 : n < M - 3 ? M - 3 : n + 1)
        for (int off = 0; off < 4; off++) {
          o[n] = 42.0;
          K[v]->un_f64[op](a + off, o, (size_t)n);
          for (int i = 0; i < n; i++) {
            double r = und_rule(op, a[off + i]);
            uint64_t gb, wb, xb;
            memcpy(&gb, &o[i], 8), memcpy(&wb, &r, 8), memcpy(&xb, &a[off + i], 8);
            cr_assert(same_f64_bits(gb, wb), "%s un_f64 %d (%a, bits %016llx) n=%d off=%d [%d]: %016llx, want %016llx",
                      K[v]->isa, op,
                      a[off + i], (unsigned long long)xb, n, off, i, (unsigned long long)gb, (unsigned long long)wb);
          }
          cr_assert_eq(o[n], 42.0, "%s un_f64 %d n=%d wrote past the end", K[v]->isa, op, n);
        }
      memcpy(w, a, sizeof w);
      K[v]->un_f64[op](w, w, M);   /* in place */
      for (int i = 0; i < M; i++) {
        double r = und_rule(op, a[i]);
        uint64_t gb, wb;
        memcpy(&gb, &w[i], 8), memcpy(&wb, &r, 8);
        cr_assert(same_f64_bits(gb, wb), "%s un_f64 %d in place (%a): %a, want %a", K[v]->isa, op, a[i], w[i], r);
      }
    }
  for (int v = 0; v < 2; v++)
    for (int n = 1; n <= M; n = n < 9 ? n + 1 : n < M ? M : M + 1) {
      K[v]->un_f64[BXFX_UND_sigmoid](a, o, (size_t)n);
      for (int i = 0; i < n; i++) {
        double r = 1.0 / (1.0 + exp(-a[i]));
        bool ok = isnan(r) ? isnan(o[i]) : (r == 0 || r == 1) ? o[i] == r : fabs(o[i] - r) <= 4 * 0x1p-52 * r;
        cr_assert(ok, "%s sigmoid(%a) n=%d: %a, want %a", K[v]->isa, a[i], n, o[i], r);
      }
    }
}

/* i32 pow by one exponent (pow_i32_s's products in registers, 32 lanes a
 * step; negative exponents the blocked scalar rule) is bxk_pow_i32
 * element for element, wrapping on overflow, for exponents 0..33, large
 * ones and negative ones, at lengths across the 8- and 32-lane steps and
 * the block, without writing past n, and in place (o == a). */
Test(flex_blocks, i32_pow_by_scalar_matches_scalar_rule) {
  enum { N = 1037 };
  static int32_t a[N], o[N + 1], io[N];
  static const int32_t edge[] = { 0, -1, 1, INT32_MAX, INT32_MIN, 2, -2, 3, 65535, -46341 };
  for (int i = 0; i < N; i++) a[i] = i % 7 == 0 ? edge[(i / 7) % 10] : (i * 37) % 201 - 100;
  const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  static const int32_t es[] = { 0, 1, 2, 3, 4, 5, 7, 8, 13, 31, 32, 33, 1000001, INT32_MAX, -1, -2, -3, INT32_MIN };
  static const size_t ns[] = { 1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 255, 256, 257, N - 2, N - 1, N };
  for (int v = 0; v < 2; v++)
    for (size_t k = 0; k < sizeof es / sizeof es[0]; k++)
      for (size_t q = 0; q < sizeof ns / sizeof ns[0]; q++) {
        const size_t n = ns[q];
        o[n] = 42;
        K[v]->bin_i32(BXFX_IOP_pow, a, &es[k], o, n, BXFX_VS);
        for (size_t i = 0; i < n; i++)
          cr_assert_eq(o[i], bxk_pow_i32(a[i], es[k]), "%s pow(%d, %d): %d", K[v]->isa, a[i], es[k], o[i]);
        cr_assert_eq(o[n], 42, "%s pow by %d, n=%zu wrote past the end", K[v]->isa, es[k], n);
        memcpy(io, a, sizeof io);
        K[v]->bin_i32(BXFX_IOP_pow, io, &es[k], io, n, BXFX_VS);
        cr_assert(memcmp(io, o, n * sizeof *o) == 0, "%s pow by %d in place differs", K[v]->isa, es[k]);
      }
  /* i64 (pow_i64_s, 16 lanes a step): 64-bit bases, exponents past 2^32 */
  static int64_t la[N], lo[N + 1];
  for (int i = 0; i < N; i++) la[i] = i % 5 == 4 ? (int64_t)((uint64_t)(int64_t)a[i] * 4294967311u) : a[i];
  static const int64_t les[] = { 0, 1, 2, 3, 5, 15, 16, 17, 63, 64, 65, (int64_t)1 << 40 | 3, INT64_MAX, -1, -2, INT64_MIN };
  for (int v = 0; v < 2; v++)
    for (size_t k = 0; k < sizeof les / sizeof les[0]; k++)
      for (size_t q = 0; q < sizeof ns / sizeof ns[0]; q++) {
        const size_t n = ns[q];
        lo[n] = 42;
        K[v]->pow_i64(la, &les[k], lo, n, BXFX_VS);
        for (size_t i = 0; i < n; i++)
          cr_assert_eq(lo[i], bxk_pow_i64(la[i], les[k]), "%s pow_i64(%lld, %lld)", K[v]->isa, (long long)la[i],
                       (long long)les[k]);
        cr_assert_eq(lo[n], 42, "%s i64 n=%zu wrote past the end", K[v]->isa, n);
      }
}

/* i64 and i32 division and floored rem by one divisor (divs_i64,
 * divs_i32: a multiply by the divisor's magic number) are bxk_div_* /
 * bxk_rem_* for every dividend: divisors 0, +-1, powers of two, the
 * type's MIN/MAX, near-powers and random ones, dividends at the extremes
 * and random, at lengths around the vector width and the unrolling, in
 * both variants, and in place.  i32 divisors are the i64 ones narrowed
 * (random bits) after their own edge list. */
Test(flex_blocks, division_by_scalar_matches_scalar_rule) {
  enum { N = 333 };
  static int64_t a[N + 1], o[N + 1], io[N];
  static int32_t a32[N + 1], o32[N + 1], io32[N];
  static const int64_t edge[] = { 0, -1, 1, INT64_MAX, INT64_MIN, INT64_MIN + 1, 7, -7, INT32_MIN, (int64_t)1 << 62 };
  static const int32_t edge32[] = { 0, -1, 1, INT32_MAX, INT32_MIN, INT32_MIN + 1, 7, -7, INT32_MAX - 1, 1 << 30 };
  uint64_t s = 12345;
  for (int i = 0; i < N; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    a[i] = i % 5 == 0 ? edge[(i / 5) % 10] : i % 5 == 1 ? (int64_t)(s >> 40) - (1 << 23) : (int64_t)s;
    a32[i] = i % 5 == 0 ? edge32[(i / 5) % 10] : i % 5 == 1 ? (int32_t)(s >> 52) - (1 << 11) : (int32_t)(s >> 32);
  }
  int64_t ds[96] = { 0, 1, -1, 2, -2, 3, -3, 5, 7, -7, 10, 641, 6700417, INT64_MAX, INT64_MIN, INT64_MIN + 1,
                     INT64_MAX - 1, (int64_t)1 << 62, -((int64_t)1 << 62), (int64_t)1 << 32, ((int64_t)1 << 32) + 1,
                     ((int64_t)1 << 31) - 1, 1000000007, -1000000007 };
  int32_t ds32[96] = { 0, 1, -1, 2, -2, 3, -3, 5, 7, -7, 10, 641, 65537, INT32_MAX, INT32_MIN, INT32_MIN + 1,
                       INT32_MAX - 1, 1 << 30, -(1 << 30), 1 << 16, 46341, -46341, 1000000007, -1000000007 };
  for (int k = 24; k < 96; k++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    ds[k] = k % 3 == 0 ? (int64_t)s : k % 3 == 1 ? (int64_t)(s >> (s % 60)) : -(int64_t)(s >> 45);
    ds32[k] = k % 3 == 0 ? (int32_t)(s >> 32) : k % 3 == 1 ? (int32_t)(s >> 32) >> (s % 30) : -(int32_t)(s >> 50);
  }
  const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  for (int v = 0; v < 2; v++)
    for (int k = 0; k < 96; k++)
      for (int rem = 0; rem < 2; rem++)
        for (size_t n = 1; n <= N; n += n < 40 ? 1 : 97) {
          o[n] = 42;
          o32[n] = 42;
          K[v]->divs_i64(a, ds[k], o, n, rem);
          K[v]->bin_i32(rem ? BXFX_IOP_rem : BXFX_IOP_div, a32, &ds32[k], o32, n, BXFX_VS);
          for (size_t i = 0; i < n; i++) {
            const int64_t want = rem ? bxk_rem_i64(a[i], ds[k]) : bxk_div_i64(a[i], ds[k]);
            cr_assert_eq(o[i], want, "%s %s(%lld, %lld) = %lld, not %lld", K[v]->isa, rem ? "rem" : "div",
                         (long long)a[i], (long long)ds[k], (long long)o[i], (long long)want);
            const int32_t want32 = rem ? bxk_rem_i32(a32[i], ds32[k]) : bxk_div_i32(a32[i], ds32[k]);
            cr_assert_eq(o32[i], want32, "%s i32 %s(%d, %d) = %d, not %d", K[v]->isa, rem ? "rem" : "div",
                         a32[i], ds32[k], o32[i], want32);
          }
          cr_assert_eq(o[n], 42, "%s n=%zu wrote past the end", K[v]->isa, n);
          cr_assert_eq(o32[n], 42, "%s i32 n=%zu wrote past the end", K[v]->isa, n);
          if (n == N) {
            memcpy(io, a, sizeof io);
            K[v]->divs_i64(io, ds[k], io, n, rem);
            cr_assert(memcmp(io, o, sizeof io) == 0, "%s by %lld in place differs", K[v]->isa, (long long)ds[k]);
            memcpy(io32, a32, sizeof io32);
            K[v]->bin_i32(rem ? BXFX_IOP_rem : BXFX_IOP_div, io32, &ds32[k], io32, n, BXFX_VS);
            cr_assert(memcmp(io32, o32, sizeof io32) == 0, "%s i32 by %d in place differs", K[v]->isa, ds32[k]);
          }
        }
}

/* i32 pow with a tensor of exponents (blocked steps per lane) is
 * bxk_pow_i32 element for element: exponents from 0 to INT32_MAX and
 * negative ones mixed in one block, lengths around the vector width and
 * the block, and in place on either operand. */
Test(flex_blocks, i32_pow_by_tensor_matches_scalar_rule) {
  enum { N = 600 };
  static int32_t a[N], b[N], o[N + 1], io[N];
  static const int32_t ea[] = { 0, -1, 1, INT32_MAX, INT32_MIN, 2, -2, 3, 65535, -46341 };
  static const int32_t eb[] = { 0, 1, 2, 31, 32, 33, INT32_MAX, -1, -2, INT32_MIN, 1000001 };
  for (int i = 0; i < N; i++) {
    a[i] = i % 7 == 0 ? ea[(i / 7) % 10] : (i * 37) % 201 - 100;
    b[i] = i % 3 == 0 ? eb[(i / 3) % 11] : (i * 53) % 41;
  }
  static const size_t ns[] = { 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 255, 256, 257, N };
  const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  for (int v = 0; v < 2; v++)
    for (size_t q = 0; q < sizeof ns / sizeof ns[0]; q++) {
      const size_t n = ns[q];
      o[n] = 42;
      K[v]->bin_i32(BXFX_IOP_pow, a, b, o, n, BXFX_VV);
      for (size_t i = 0; i < n; i++)
        cr_assert_eq(o[i], bxk_pow_i32(a[i], b[i]), "%s pow(%d, %d): %d", K[v]->isa, a[i], b[i], o[i]);
      cr_assert_eq(o[n], 42, "%s n=%zu wrote past the end", K[v]->isa, n);
      for (int w = 0; w < 2; w++) {
        memcpy(io, w ? b : a, sizeof io);
        K[v]->bin_i32(BXFX_IOP_pow, w ? a : io, w ? io : b, io, n, BXFX_VV);
        cr_assert(memcmp(io, o, n * sizeof *o) == 0, "%s pow in place on operand %d differs", K[v]->isa, w);
      }
      /* i64 (4 lanes): the same bases and exponents widened, with
       * exponents past 2^32 and 64-bit bases mixed in, tensor and scalar */
      static int64_t la[N], lb[N], lo[N + 1];
      for (size_t i = 0; i < n; i++) {
        la[i] = i % 5 == 4 ? (int64_t)((uint64_t)(int64_t)a[i] * 4294967311u) : a[i];
        lb[i] = i % 9 == 8 ? (int64_t)1 << 40 | (uint32_t)b[i] : b[i];
      }
      for (int mode = 0; mode < 3; mode += 2) {
        lo[n] = 42;
        K[v]->pow_i64(la, lb + (mode ? q % 7 : 0), lo, n, mode);
        for (size_t i = 0; i < n; i++) {
          const int64_t e = mode ? lb[q % 7] : lb[i];
          cr_assert_eq(lo[i], bxk_pow_i64(la[i], e), "%s pow_i64(%lld, %lld)", K[v]->isa, (long long)la[i],
                       (long long)e);
        }
        cr_assert_eq(lo[n], 42, "%s i64 n=%zu wrote past the end", K[v]->isa, n);
      }
    }
}

/* mm_i32/mm_i64 in both variants against a plain wrapping triple loop,
 * for column counts around the 4-vector strip, the single vector and the
 * scalar tail, odd and even row counts, with products that wrap. */
Test(flex_blocks, integer_matmul_kernels_wrap_like_the_rule) {
  enum { M = 5, K = 9, NMAX = 71 };
  static int32_t a32[M * K], b32[K * NMAX], c32[M * NMAX];
  static int64_t a64[M * K], b64[K * NMAX], c64[M * NMAX];
  uint64_t s = 7;
  for (int i = 0; i < K * NMAX; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    b32[i] = (int32_t)(s >> 32);
    b64[i] = (int64_t)s;
    if (i < M * K) a32[i] = (int32_t)s, a64[i] = (int64_t)(s * 31);
  }
  static const size_t ns[] = { 1, 7, 8, 9, 31, 32, 33, 40, 64, 71 };
  const struct bxfx_kernels *Kt[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  for (int v = 0; v < 2; v++)
    for (size_t q = 0; q < sizeof ns / sizeof ns[0]; q++)
      for (size_t m = 1; m <= M; m += 3) {   /* 1 and 4 rows: the single-row loop and the pairs */
        size_t n = ns[q];
        Kt[v]->mm_i32(a32, b32, c32, m, n, K);
        Kt[v]->mm_i64(a64, b64, c64, m, n, K);
        for (size_t i = 0; i < m; i++)
          for (size_t j = 0; j < n; j++) {
            uint32_t w32 = 0;
            uint64_t w64 = 0;
            for (size_t p = 0; p < K; p++) {
              w32 += (uint32_t)a32[i * K + p] * (uint32_t)b32[p * n + j];
              w64 += (uint64_t)a64[i * K + p] * (uint64_t)b64[p * n + j];
            }
            cr_assert_eq(c32[i * n + j], (int32_t)w32, "%s mm_i32 %zux%zu [%zu,%zu]", Kt[v]->isa, m, n, i, j);
            cr_assert_eq(c64[i * n + j], (int64_t)w64, "%s mm_i64 %zux%zu [%zu,%zu]", Kt[v]->isa, m, n, i, j);
          }
      }
}

/* ------------------------------------------------- transposed tile walk */
/* Binary ops with a transposed operand run as a tile walk (flex_elem.c,
 * ew_tiled): the output in 64x64 tiles, the transposed operand read
 * tile-wise.  Every dtype the engine takes, sides that are no multiple
 * of the tile (and too small to tile at all), transposed mixed with
 * contiguous, row and column broadcasts and scalars, NaN and infinities
 * in the data: bit for bit the NdArray reference (any NaN for NaN). */
static const bext_device *dev_of(const char *name) {
  const bext_device *d = bext_device_get(name);
  cr_assert_not_null(d, "%s", bext_last_error());
  return d;
}

/* A rows x cols tensor of dt on the reference device, edge values in
 * float data, zeros among ints (x/0 and x%0 are 0). */
static bext_tensor *tw_data(int64_t rows, int64_t cols, bext_dtype dt, unsigned seed) {
  int64_t n = rows * cols;
  double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
  bool flt = bext_dtype_kind(dt) == BEXT_KIND_FLOAT;
  for (int64_t i = 0; i < n; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t r = s >> 33;
    static const double edge[] = { NAN, INFINITY, -INFINITY, 0.0, -0.0 };
    if (dt == BEXT_BOOL) v[i] = (double)(r & 1);
    else if (flt) v[i] = r % 37 == 0 ? edge[(r >> 8) % 5] : ((double)(r % 2001) - 1000) / 64;
    else v[i] = (double)((int64_t)(r % 41) - 20);
  }
  bext_tensor *t = bext_cast(bext_from_data(v, BEXT_F64, (int64_t[]){ rows, cols }, 2, dev_of("ndarray")), dt);
  free(v);
  cr_assert_not_null(t, "%s", bext_last_error());
  return t;
}

static void tw_expect_same(bext_tensor *got, bext_tensor *want, const char *what) {
  cr_assert(got && want, "%s: %s", what, bext_last_error());
  size_t es = bext_dtype_size(bext_dtype_of(want)), n = (size_t)bext_numel(want);
  cr_assert_eq(bext_dtype_of(got), bext_dtype_of(want), "%s: dtype", what);
  cr_assert_eq((size_t)bext_numel(got), n, "%s: numel", what);
  unsigned char *g = malloc(n * es + 1), *w = malloc(n * es + 1);
  cr_assert(bext_read(got, g, n * es) && bext_read(want, w, n * es), "%s", bext_last_error());
  bext_dtype dt = bext_dtype_of(want);
  int bad = 0;
  for (size_t i = 0; i < n && bad < 3; i++) {
    const unsigned char *a = g + i * es, *b = w + i * es;
    if (memcmp(a, b, es) == 0) continue;
    bool nan = false;
    if (dt == BEXT_F32) { float x, y; memcpy(&x, a, 4); memcpy(&y, b, 4); nan = isnan(x) && isnan(y); }
    else if (dt == BEXT_F64) { double x, y; memcpy(&x, a, 8); memcpy(&y, b, 8); nan = isnan(x) && isnan(y); }
    else if (es == 2) { /* f16 / bf16: all-ones exponent and a mantissa */
      uint16_t x, y; memcpy(&x, a, 2); memcpy(&y, b, 2);
      uint16_t em = dt == BEXT_BF16 ? 0x7f80 : 0x7c00, mm = dt == BEXT_BF16 ? 0x7f : 0x3ff;
      nan = (x & em) == em && (x & mm) && (y & em) == em && (y & mm);
    }
    if (!nan) {
      cr_expect_fail("%s: element %zu differs from the reference", what, i);
      bad++;
    }
  }
  free(g);
  free(w);
  bext_release(got);
  bext_release(want);
}

enum { TW_ADD, TW_SUB, TW_MUL, TW_DIV, TW_MAX, TW_MIN, TW_REM, TW_LT, TW_EQ, TW_POW2, TW_WHERE, TW_AND, TW_N };
static const char *const tw_name[TW_N] = { "add", "sub", "mul", "div", "max", "min", "rem", "lt", "eq",
                                           "pow_scalar(2)", "mask_where", "and" };

/* op on a and b (both OWNED); NULL where op does not take dt. */
static bext_tensor *tw_apply(int op, bext_tensor *a, bext_tensor *b, bext_dtype dt) {
  bool boolean = dt == BEXT_BOOL;
  if (boolean != (op == TW_AND || op == TW_EQ)) { bext_release(a); bext_release(b); return NULL; }
  switch (op) {
  case TW_ADD: return bext_add(a, b);
  case TW_SUB: return bext_sub(a, b);
  case TW_MUL: return bext_mul(a, b);
  case TW_DIV: return bext_div(a, b);
  case TW_MAX: return bext_max(a, b);
  case TW_MIN: return bext_min(a, b);
  case TW_REM: return bext_rem(a, b);
  case TW_LT: return bext_lt(a, b);
  case TW_EQ: return bext_eq(a, b);
  case TW_POW2: bext_release(b); return bext_pow_scalar(a, 2.0);
  case TW_WHERE: return bext_mask_where(a, bext_gt_scalar(bext_retain(b), 0.0), b);
  default: return bext_and(a, b);
  }
}

/* An operand as the same values on the reference (*nd) and on Flex
 * (*fx), each device making its own view (a copy between devices would
 * make it contiguous).  form: 0 transposed (an R x C view of a C x R
 * buffer), 1 contiguous, 2 a row [1, C], 3 a column [R, 1]. */
static void tw_operand(int form, int64_t R, int64_t C, bext_dtype dt, unsigned seed, bext_tensor **nd,
                       bext_tensor **fx) {
  bext_tensor *base = form == 0 ? tw_data(C, R, dt, seed) : form == 1 ? tw_data(R, C, dt, seed)
                      : form == 2 ? tw_data(1, C, dt, seed) : tw_data(R, 1, dt, seed);
  *fx = bext_to_device(bext_retain(base), dev_of("flex"));
  *nd = base;
  if (form == 0) { *nd = bext_transpose(*nd); *fx = bext_transpose(*fx); }
  cr_assert(*nd && *fx, "%s", bext_last_error());
}

Test(flex_blocks, transposed_tile_walk_matches_reference) {
  /* 130x257 and 64x264: full 32x256 tiles and 8-column ones (8x8
   * register blocks of 4-, 2- and 1-byte operands), ragged edges beside */
  const int64_t sides[][2] = { { 1, 1 }, { 3, 5 }, { 33, 65 }, { 100, 37 }, { 130, 257 }, { 64, 264 } };
  const bext_dtype dts[] = { BEXT_F32, BEXT_F64, BEXT_F16, BEXT_BF16, BEXT_I32, BEXT_I64, BEXT_BOOL };
  const bext_device *flex = dev_of("flex");
  char what[160];
  for (size_t si = 0; si < sizeof sides / sizeof sides[0]; si++)
    for (size_t di = 0; di < sizeof dts / sizeof dts[0]; di++)
      for (int op = 0; op < TW_N; op++)
        for (int form = 0; form < 4; form++)
          for (int swap = 0; swap < 2; swap++) {
            const int64_t R = sides[si][0], C = sides[si][1];
            const bext_dtype dt = dts[di];
            unsigned seed = (unsigned)(si * 131 + di * 17 + (size_t)form);
            if (swap && (op == TW_POW2 || op == TW_WHERE)) continue;
            bext_tensor *na, *fa, *nb, *fb;   /* a: the transposed operand */
            tw_operand(0, R, C, dt, seed, &na, &fa);
            tw_operand(form, R, C, dt, seed + 7, &nb, &fb);
            if (swap) {
              bext_tensor *t = na; na = nb; nb = t;
              t = fa; fa = fb; fb = t;
            }
            bext_tensor *want = tw_apply(op, na, nb, dt);
            if (!want) { bext_release(fa); bext_release(fb); continue; }
            bext_tensor *got = tw_apply(op, fa, fb, dt);
            snprintf(what, sizeof what, "%s %ldx%ld dtype %d form %d%s", tw_name[op], (long)R, (long)C, (int)dt,
                     form, swap ? " swapped" : "");
            tw_expect_same(got, want, what);
          }
  /* a scalar operand with a transposed one, contiguous minus transposed
   * at a tile-crossing size, and a 3-D permutation whose last two dims
   * are transposed (tiles per outer index) */
  bext_tensor *na, *fa, *nc, *fc;
  tw_operand(0, 90, 77, BEXT_F32, 99, &na, &fa);
  tw_operand(1, 90, 77, BEXT_F32, 98, &nc, &fc);
  tw_expect_same(bext_add_scalar(bext_retain(fa), 0.1), bext_add_scalar(bext_retain(na), 0.1),
                 "add_scalar(0.1) transposed");
  tw_expect_same(bext_sub(fc, fa), bext_sub(nc, na), "sub contiguous - transposed");
  bext_tensor *np = bext_reshape(tw_data(6 * 70, 33, BEXT_F32, 97), (int64_t[]){ 6, 70, 33 }, 3);
  bext_tensor *fp = bext_to_device(bext_retain(np), flex);
  bext_tensor *nq = bext_reshape(tw_data(6 * 33, 70, BEXT_F32, 96), (int64_t[]){ 6, 33, 70 }, 3);
  bext_tensor *fq = bext_to_device(bext_retain(nq), flex);
  np = bext_permute(np, (int[]){ 0, 2, 1 }, 3);   /* [6, 33, 70], last two dims transposed */
  fp = bext_permute(fp, (int[]){ 0, 2, 1 }, 3);
  cr_assert(np && fp && nq && fq, "%s", bext_last_error());
  tw_expect_same(bext_mul(fp, fq), bext_mul(np, nq), "mul 6x33x70 permuted");
}

/* The fused half binary kernels (bin_half) for f16 and bf16 in both
 * variants, every mode, on all 2^16 patterns (NaN, infinities,
 * subnormals, results that overflow or fall to subnormals) against
 * bxk_scalar.h: widen, the f32 rule, round to the half type, bit for bit.
 * Lengths around the 8- and 16-lane widths check the tails, out of place
 * and in place. */
Test(flex_blocks, fused_half_kernels_match_scalars) {
  enum { N = 65536 + 5 };
  static uint16_t a[N], b[N], o[N + 1];   /* o[n]: a guard */
  for (uint32_t i = 0; i < N; i++) {
    a[i] = (uint16_t)i;
    b[i] = (uint16_t)(i * 40503u + 7u);
  }
  const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  float (*widen[BXFX_H_COUNT])(uint16_t) = { [BXFX_H_F16] = bxk_f16_to_f32, [BXFX_H_BF16] = bxk_bf16_to_f32 };
  uint16_t (*narrow[BXFX_H_COUNT])(float) = { [BXFX_H_F16] = bxk_f32_to_f16, [BXFX_H_BF16] = bxk_f32_to_bf16 };
  static const size_t lens[] = { N, 1, 7, 8, 9, 15, 16, 17, 31, 33 };
  for (int h = 0; h < BXFX_H_COUNT; h++)
    for (int v = 0; v < 2; v++)
      for (int op = 0; op < BXFX_BIN_COUNT; op++)
        for (int mode = 0; mode < 3; mode++)
          for (size_t li = 0; li < 2 * sizeof lens / sizeof lens[0]; li++) {
            /* the scalar: 1.25, or one that overflows f16 (f32 only); the
             * second round in place (o is the first operand or, SV, the second) */
            const bool inplace = li >= sizeof lens / sizeof lens[0];
            const float s = li & 1 ? 1.25f : 1e5f;
            const size_t n = lens[li % (sizeof lens / sizeof lens[0])], off = li * 4099 % 60000;
            const uint16_t *x0 = a + (n < N ? off : 0), *y0 = b + (n < N ? off : 0);   /* shorter runs start anywhere */
            memset(o, 0xa5, sizeof o);
            if (inplace) memcpy(o, mode == BXFX_SV ? y0 : x0, n * sizeof o[0]);
            K[v]->bin_half[h][op](inplace && mode != BXFX_SV ? o : x0, inplace && mode == BXFX_SV ? o : y0, s, o, n, mode);
            int bad = 0;
            for (size_t i = 0; i < n && bad < 3; i++) {
              float x = mode == BXFX_SV ? s : widen[h](x0[i]), y = mode == BXFX_VS ? s : widen[h](y0[i]);
              float r = op == BXFX_BIN_add ? x + y : op == BXFX_BIN_sub ? x - y : op == BXFX_BIN_mul ? x * y
                      : op == BXFX_BIN_div ? x / y : op == BXFX_BIN_max ? bxk_max_f32(x, y) : bxk_min_f32(x, y);
              uint16_t want = narrow[h](r);
              /* Two NaN operands: which payload survives is the compiler's
               * operand order (clang under TSan swaps x + y), so only
               * NaN-ness is the rule's; one NaN's payload is exact. */
              const bool both_nan = isnan(x) && isnan(y) && isnan(widen[h](o[i])) && isnan(widen[h](want));
              if (o[i] != want && !both_nan) {
                cr_expect_fail("%s bin_half[%s] op %d mode %d n %zu [%zu]: %#x, scalar rule %#x", K[v]->isa,
                               h == BXFX_H_F16 ? "f16" : "bf16", op, mode, n, i, o[i], want);
                bad++;
              }
            }
            cr_expect(o[n] == 0xa5a5, "bin_half wrote past n = %zu", n);
          }
}

/* mask_sel, both variants: every element width, a value array or one
 * value, random bit patterns and masks with bytes other than 0 and 1
 * (any nonzero byte selects, as the reference reads it), lengths around
 * each width's vector, in place, against the byte copy of one side. */
Test(flex_blocks, mask_sel_is_a_byte_select) {
  enum { N = 300 };
  static unsigned char t[N * 8], v[N * 8], o[N * 8 + 8], m[N];
  uint64_t r = 7;
  for (size_t i = 0; i < sizeof t; i++) {
    r = r * 6364136223846793005ull + 1442695040888963407ull;
    t[i] = (unsigned char)(r >> 33);
    v[i] = (unsigned char)(r >> 45);
  }
  for (size_t i = 0; i < N; i++) m[i] = i % 3 == 0 ? 0 : (unsigned char)(t[i] | (i % 7 == 0 ? 0x80 : 1));
  const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  static const size_t lens[] = { 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 65, N };
  for (int k = 0; k < 2; k++)
    for (size_t es = 1; es <= 8; es *= 2)
      for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
        for (int vs = 0; vs < 3; vs++) {   /* 2: in place (o is t) */
          const size_t n = lens[li];
          static unsigned char tt[N * 8];
          memcpy(tt, t, sizeof tt);
          memset(o, 0xa5, sizeof o);
          unsigned char *out = vs == 2 ? tt : o;
          K[k]->mask_sel(es, tt, m, v, out, n, vs == 1);
          for (size_t i = 0; i < n; i++) {
            const unsigned char *want = m[i] ? v + (vs == 1 ? 0 : i * es) : t + i * es;
            cr_assert(memcmp(out + i * es, want, es) == 0, "%s mask_sel es %zu vs %d n %zu [%zu]", K[k]->isa, es, vs,
                      n, i);
          }
          if (vs != 2) cr_assert(o[n * es] == 0xa5, "mask_sel wrote past n = %zu", n);
        }
}

/* The fused half comparisons (cmp_half), both kinds and variants, every
 * mode, all 2^16 patterns (NaN, signed zeros, infinities) at tail
 * lengths, against the f32 comparison of the widened values; broadcast
 * values s that are halves, that lie between two halves (the kernels
 * compare keys of the half below or above), beyond the largest finite
 * half (f16 65520 rounds to inf), below the least subnormal, and NaN. */
Test(flex_blocks, fused_half_compares_match_scalars) {
  enum { N = 65536 + 5 };
  static uint16_t a[N], b[N];
  static uint8_t o[N + 1];   /* o[n]: a guard */
  for (uint32_t i = 0; i < N; i++) {
    a[i] = (uint16_t)i;
    b[i] = (uint16_t)(i * 40503u + 7u);
  }
  const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  float (*widen[BXFX_H_COUNT])(uint16_t) = { [BXFX_H_F16] = bxk_f16_to_f32, [BXFX_H_BF16] = bxk_bf16_to_f32 };
  static const size_t lens[] = { N, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 65 };
  static const float ss[] = { 1.25f, NAN, 0.0f, -0.0f, INFINITY, -INFINITY, 1.0001f, -1.0001f, 0.1f, -0.1f,
                              65504.0f, 65519.0f, 65520.0f, -65520.0f, 1e30f, -1e30f, FLT_MAX, -FLT_MAX,
                              3.3961775e38f, 3e-8f, -3e-8f, 6e-8f, 1e-40f, -1e-45f, 5.9604645e-8f, 1.00390625f };
  for (int h = 0; h < BXFX_H_COUNT; h++)
    for (int v = 0; v < 2; v++)
      for (int op = 0; op < BXFX_CMP_COUNT; op++)
        for (int mode = 0; mode < 3; mode++)
          for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
          for (size_t si = 0; si < (mode == BXFX_VV ? 1 : sizeof ss / sizeof ss[0]); si++) {
            const float s = ss[si];
            const size_t n = lens[li], off = n < N ? li * 4099 % 60000 : 0;
            memset(o, 0xa5, sizeof o);
            K[v]->cmp_half[h][op](a + off, b + off, s, o, n, mode);
            int bad = 0;
            for (size_t i = 0; i < n && bad < 3; i++) {
              float x = mode == BXFX_SV ? s : widen[h](a[off + i]), y = mode == BXFX_VS ? s : widen[h](b[off + i]);
              uint8_t want = op == BXFX_CMP_eq ? x == y : op == BXFX_CMP_ne ? x != y : op == BXFX_CMP_gt ? x > y
                           : op == BXFX_CMP_ge ? x >= y : op == BXFX_CMP_lt ? x < y : x <= y;
              if (o[i] != want) {
                cr_expect_fail("%s cmp_half[%d] op %d mode %d s %g n %zu [%zu]: %d, want %d", K[v]->isa, h, op, mode,
                               (double)s, n, i, o[i], want);
                bad++;
              }
            }
            cr_expect(o[n] == 0xa5, "cmp_half wrote past n = %zu", n);
          }
}

/* Half comparisons through the engine: tensors (contiguous, broadcast
 * rows and columns on either side, column slices) and scalars (exact in
 * f32 or not: thresholds; halves or not; past the halves' range), against
 * the NdArray reference. */
Test(flex_blocks, fused_half_compares_match_reference) {
  bext_tensor *(*const fn[])(bext_tensor *, bext_tensor *) = { bext_eq, bext_ne, bext_gt, bext_ge, bext_lt, bext_le };
  bext_tensor *(*const fs[])(bext_tensor *, double) = { bext_eq_scalar, bext_ne_scalar, bext_gt_scalar,
                                                        bext_ge_scalar, bext_lt_scalar, bext_le_scalar };
  const int64_t sides[][2] = { { 1, 1 }, { 1, 7 }, { 1, 9 }, { 2, 16 }, { 1, 33 }, { 33, 65 } };
  const bext_dtype dts[] = { BEXT_F16, BEXT_BF16 };
  char what[160];
  for (size_t di = 0; di < 2; di++)
    for (size_t si = 0; si < sizeof sides / sizeof sides[0]; si++)
      for (size_t f = 0; f < 6; f++) {
        for (int form = 1; form < 5; form++)
          for (int swap = 0; swap < 2; swap++) {
            bext_tensor *na, *fa, *nb, *fb;
            const int64_t R = sides[si][0], C = sides[si][1];
            tw_operand(1, R, C, dts[di], (unsigned)(si * 3 + f), &na, &fa);
            if (form < 4) {
              tw_operand(form, R, C, dts[di], (unsigned)(si * 3 + f + 1), &nb, &fb);
            } else {   /* columns 2..C+1 of an R x (C + 3) tensor: rows apart */
              tw_operand(1, R, C + 3, dts[di], (unsigned)(si * 3 + f + 1), &nb, &fb);
              nb = bext_narrow(nb, 1, 2, C);
              fb = bext_narrow(fb, 1, 2, C);
            }
            if (swap) {
              bext_tensor *t = na; na = nb; nb = t;
              t = fa; fa = fb; fb = t;
            }
            snprintf(what, sizeof what, "%s compare %zu %ldx%ld form %d%s", dts[di] == BEXT_F16 ? "f16" : "bf16", f,
                     (long)R, (long)C, form, swap ? " swapped" : "");
            tw_expect_same(fn[f](fa, fb), fn[f](na, nb), what);
          }
        static const double sc[] = { 0.5, 0.1, -3.0, 1e6, NAN, -0.0, 0.0, INFINITY, -INFINITY, 65504, 65520, -65519.5,
                                     1e-8, -1e-8, 1.0000001, 15.5078125, -15.50390625, 3.4e38, 1e300, -1e300 };
        for (size_t k = 0; k < sizeof sc / sizeof sc[0]; k++) {
          bext_tensor *na, *fa;
          tw_operand(1, sides[si][0], sides[si][1], dts[di], (unsigned)(si + k), &na, &fa);
          snprintf(what, sizeof what, "%s compare_scalar %zu %g %ldx%ld", dts[di] == BEXT_F16 ? "f16" : "bf16", f,
                   sc[k], (long)sides[si][0], (long)sides[si][1]);
          tw_expect_same(fs[f](fa, sc[k]), fs[f](na, sc[k]), what);
        }
      }
}

/* The fused half unary kernels (un_half), both kinds and variants, all
 * 2^16 patterns at tail lengths, out of place and in place: the
 * lane-wise ops against bxk_scalar.h's rule between the two conversions,
 * the transcendentals against the same variant's f32 kernel (un) between
 * them, which is what the engine's block passes compute. */
Test(flex_blocks, fused_half_unary_kernels_match_scalars) {
  enum { N = 65536 + 5 };
  static uint16_t a[N], o[N + 1];   /* o[n]: a guard */
  static float w[N];
  for (uint32_t i = 0; i < N; i++) a[i] = (uint16_t)(i * 40503u + 11u);
  static const int ops[] = { BXFX_UN_sqrt, BXFX_UN_rsqrt, BXFX_UN_neg, BXFX_UN_abs, BXFX_UN_relu,
                             BXFX_UN_recip, BXFX_UN_floor, BXFX_UN_ceil, BXFX_UN_round, BXFX_UN_sign,
                             BXFX_UN_exp,  BXFX_UN_log,   BXFX_UN_log1p, BXFX_UN_sin, BXFX_UN_cos,
                             BXFX_UN_tanh, BXFX_UN_erf };
  const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  float (*widen[BXFX_H_COUNT])(uint16_t) = { [BXFX_H_F16] = bxk_f16_to_f32, [BXFX_H_BF16] = bxk_bf16_to_f32 };
  uint16_t (*narrow[BXFX_H_COUNT])(float) = { [BXFX_H_F16] = bxk_f32_to_f16, [BXFX_H_BF16] = bxk_f32_to_bf16 };
  static const size_t lens[] = { N, 1, 7, 8, 9, 15, 16, 17, 31, 33 };
  for (int h = 0; h < BXFX_H_COUNT; h++)
    for (int v = 0; v < 2; v++)
      for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++)
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
          for (int inplace = 0; inplace < 2; inplace++) {
            const int op = ops[oi];
            const size_t n = lens[li], off = n < N ? li * 4099 % 60000 : 0;
            cr_assert(K[v]->un_half[h][op], "%s un_half[%d][%d] missing", K[v]->isa, h, op);
            memset(o, 0xa5, sizeof o);
            if (inplace) memcpy(o, a + off, n * sizeof o[0]);
            K[v]->un_half[h][op](inplace ? o : a + off, o, n);
            for (size_t i = 0; i < n; i++) w[i] = widen[h](a[off + i]);
            K[v]->un[op](w, w, n);
            int bad = 0;
            for (size_t i = 0; i < n && bad < 3; i++) {
              float x = widen[h](a[off + i]);
              float r = op == BXFX_UN_sqrt ? sqrtf(x) : op == BXFX_UN_rsqrt ? 1.0f / sqrtf(x)
                      : op == BXFX_UN_neg ? -x : op == BXFX_UN_abs ? fabsf(x) : op == BXFX_UN_relu ? bxk_relu_f32(x)
                      : op == BXFX_UN_recip ? 1.0f / x : op == BXFX_UN_floor ? floorf(x)
                      : op == BXFX_UN_ceil ? ceilf(x) : op == BXFX_UN_round ? bxk_round_f32(x)
                      : op == BXFX_UN_sign ? bxk_sign_f32(x) : w[i];
              uint16_t want = narrow[h](r);
              if (o[i] != want) {
                cr_expect_fail("%s un_half[%s] op %d n %zu%s [%zu] of %#x: %#x, scalar rule %#x", K[v]->isa,
                               h == BXFX_H_F16 ? "f16" : "bf16", op, n, inplace ? " in place" : "", i, a[off + i],
                               o[i], want);
                bad++;
              }
            }
            cr_expect(o[n] == 0xa5a5, "un_half wrote past n = %zu", n);
          }
}

/* f32_to_bf16 (the 16-lane pack, the 8-lane step and the scalar tail) on
 * every top half with low halves at and around the rounding tie: NaN
 * payloads whose rounding bias would carry into the payload or the sign,
 * signalling NaNs, overflow to inf, subnormals. */
Test(flex_blocks, f32_to_bf16_matches_scalar_on_every_top_half) {
  static const uint32_t lows[] = { 0, 1, 0x7fff, 0x8000, 0x8001, 0xffff, 0x4321, 0xc0de };
  enum { L = sizeof lows / sizeof lows[0], N = 65536 * L };
  static float a[N];
  static uint16_t o[N + 1];
  for (uint32_t i = 0; i < N; i++) {
    uint32_t u = ((i / L) << 16) | lows[(i * 7) % L];
    memcpy(&a[i], &u, sizeof u);
  }
  const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  static const size_t lens[] = { N, 1, 7, 8, 9, 15, 16, 17, 31, 33 };
  for (int v = 0; v < 2; v++)
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
      const size_t n = lens[li], off = n < N ? li * 40961 % (N - 64) : 0;
      o[n] = 0xa5a5;
      K[v]->f32_to_bf16(a + off, o, n);
      int bad = 0;
      for (size_t i = 0; i < n && bad < 3; i++) {
        uint16_t want = bxk_f32_to_bf16(a[off + i]);
        if (o[i] != want) {
          uint32_t u;
          memcpy(&u, &a[off + i], sizeof u);
          cr_expect_fail("%s f32_to_bf16 n %zu [%zu] of %#x: %#x, scalar rule %#x", K[v]->isa, n, i, u, o[i], want);
          bad++;
        }
      }
      cr_expect(o[n] == 0xa5a5, "f32_to_bf16 wrote past n = %zu", n);
    }
}

/* The fused half clamp (clamp_half), both kinds and variants, all 2^16
 * patterns at tail lengths, out of place and in place, against the f32
 * rule rounded to the type: bounds that are half values (the truncating
 * path), ones that are not (rounding), lo > hi, a NaN bound, and one past
 * f16's range. */
Test(flex_blocks, fused_half_clamp_matches_scalars) {
  enum { N = 65536 + 5 };
  static uint16_t a[N], o[N + 1];   /* o[n]: a guard */
  for (uint32_t i = 0; i < N; i++) a[i] = (uint16_t)(i * 40503u + 11u);
  static const float bounds[][2] = { { 0.5f, 1.5f }, { -3.0f, 100.0f }, { 0.1f, 3.3f }, { 2.0f, -2.0f },
                                     { NAN, 1.0f }, { -INFINITY, 1e5f }, { -1e-40f, 1e-40f },
                                     /* zero bounds (-0 and +0 compare equal), infinities */
                                     { -0.0f, 0.0f }, { 0.0f, -0.0f }, { 0.0f, 2.0f }, { -1.0f, -0.0f },
                                     { -INFINITY, INFINITY }, { 6e-8f, 65504.0f } };
  const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  float (*widen[BXFX_H_COUNT])(uint16_t) = { [BXFX_H_F16] = bxk_f16_to_f32, [BXFX_H_BF16] = bxk_bf16_to_f32 };
  uint16_t (*narrow[BXFX_H_COUNT])(float) = { [BXFX_H_F16] = bxk_f32_to_f16, [BXFX_H_BF16] = bxk_f32_to_bf16 };
  static const size_t lens[] = { N, 1, 7, 8, 9, 15, 16, 17, 31, 33 };
  for (int h = 0; h < BXFX_H_COUNT; h++)
    for (int v = 0; v < 2; v++)
      for (size_t bi = 0; bi < sizeof bounds / sizeof bounds[0]; bi++)
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
          for (int inplace = 0; inplace < 2; inplace++) {
            const float lo = bounds[bi][0], hi = bounds[bi][1];
            const size_t n = lens[li], off = n < N ? li * 4099 % 60000 : 0;
            memset(o, 0xa5, sizeof o);
            if (inplace) memcpy(o, a + off, n * sizeof o[0]);
            K[v]->clamp_half[h](inplace ? o : a + off, o, n, lo, hi);
            int bad = 0;
            for (size_t i = 0; i < n && bad < 3; i++) {
              float x = widen[h](a[off + i]);
              uint16_t want = narrow[h](x < lo ? lo : x > hi ? hi : x);
              if (o[i] != want) {
                cr_expect_fail("%s clamp_half[%s] [%g, %g] n %zu%s [%zu] of %#x: %#x, scalar rule %#x", K[v]->isa,
                               h == BXFX_H_F16 ? "f16" : "bf16", lo, hi, n, inplace ? " in place" : "", i, a[off + i],
                               o[i], want);
                bad++;
              }
            }
            cr_expect(o[n] == 0xa5a5, "clamp_half wrote past n = %zu", n);
          }
}

/* clamp_f32, both variants, on f32 bit patterns (NaNs with payloads,
 * signed zeros, infinities, subnormals among them) at tail lengths, out
 * of place and in place, bit for bit against the scalar rule, with the
 * half test's bounds and signed-zero ones. */
Test(flex_blocks, f32_clamp_matches_scalar_rule) {
  enum { N = 4099 };
  static uint32_t a[N], o[N + 1];   /* o[n]: a guard */
  for (uint32_t i = 0; i < N; i++) a[i] = i * 2654435761u + 12345u;
  static const float sp[] = { 0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1e-42f, -1e-42f, 1.0f, -2.0f, 1.5f };
  for (size_t k = 0; k < sizeof sp / sizeof sp[0]; k++) memcpy(a + 3 * k, sp + k, sizeof(float));
  static const float bounds[][2] = { { 0.5f, 1.5f }, { -3.0f, 100.0f }, { 2.0f, -2.0f }, { NAN, 1.0f },
                                     { -1.0f, NAN }, { -INFINITY, 1e5f }, { -0.0f, 0.0f }, { 0.0f, -0.0f } };
  const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  static const size_t lens[] = { N, 1, 7, 8, 9, 15, 16, 17, 31, 33 };
  for (int v = 0; v < 2; v++)
    for (size_t bi = 0; bi < sizeof bounds / sizeof bounds[0]; bi++)
      for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
        for (int inplace = 0; inplace < 2; inplace++) {
          const float lo = bounds[bi][0], hi = bounds[bi][1];
          const size_t n = lens[li], off = n < N ? li * 397 % 4000 : 0;
          memset(o, 0xa5, sizeof o);
          if (inplace) memcpy(o, a + off, n * sizeof o[0]);
          K[v]->clamp_f32((const float *)(const void *)(inplace ? o : a + off), (float *)(void *)o, n, lo, hi);
          int bad = 0;
          for (size_t i = 0; i < n && bad < 3; i++) {
            float x, r;
            memcpy(&x, a + off + i, sizeof x);
            r = x < lo ? lo : x > hi ? hi : x;
            uint32_t want;
            memcpy(&want, &r, sizeof want);
            if (o[i] != want) {
              cr_expect_fail("%s clamp_f32 [%g, %g] n %zu%s [%zu] of %#x: %#x, scalar rule %#x", K[v]->isa, lo, hi, n,
                             inplace ? " in place" : "", i, a[off + i], o[i], want);
              bad++;
            }
          }
          cr_expect(o[n] == 0xa5a5a5a5u, "clamp_f32 wrote past n = %zu", n);
        }
}

/* The fused half powi (powi_half), both kinds and variants, all 2^16
 * patterns at tail lengths, out of place and in place, against the same
 * variant's powi_f32 of the widened values rounded to the type (the
 * block passes' bits). */
Test(flex_blocks, fused_half_powi_matches_f32_kernel) {
  enum { N = 65536 + 5 };
  static uint16_t a[N], o[N + 1];   /* o[n]: a guard */
  static float w[N];
  for (uint32_t i = 0; i < N; i++) a[i] = (uint16_t)(i * 40503u + 11u);
  static const int es[] = { 0, 1, 2, 3, 4, 5, 7, -1, -2, -3, 13, 64, -64 };
  const struct bxfx_kernels *K[2] = { &bxfx_kern_avx2, &bxfx_kern_gen };
  float (*widen[BXFX_H_COUNT])(uint16_t) = { [BXFX_H_F16] = bxk_f16_to_f32, [BXFX_H_BF16] = bxk_bf16_to_f32 };
  uint16_t (*narrow[BXFX_H_COUNT])(float) = { [BXFX_H_F16] = bxk_f32_to_f16, [BXFX_H_BF16] = bxk_f32_to_bf16 };
  static const size_t lens[] = { N, 1, 7, 8, 9, 15, 16, 17, 31, 33 };
  for (int h = 0; h < BXFX_H_COUNT; h++)
    for (int v = 0; v < 2; v++)
      for (size_t ei = 0; ei < sizeof es / sizeof es[0]; ei++)
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
          for (int inplace = 0; inplace < 2; inplace++) {
            const size_t n = lens[li], off = n < N ? li * 4099 % 60000 : 0;
            memset(o, 0xa5, sizeof o);
            if (inplace) memcpy(o, a + off, n * sizeof o[0]);
            K[v]->powi_half[h](inplace ? o : a + off, o, n, es[ei]);
            for (size_t i = 0; i < n; i++) w[i] = widen[h](a[off + i]);
            K[v]->powi_f32(w, w, n, es[ei]);
            int bad = 0;
            for (size_t i = 0; i < n && bad < 3; i++) {
              uint16_t want = narrow[h](w[i]);
              if (o[i] != want) {
                cr_expect_fail("%s powi_half[%s] ^%d n %zu%s [%zu] of %#x: %#x, f32 kernel %#x", K[v]->isa,
                               h == BXFX_H_F16 ? "f16" : "bf16", es[ei], n, inplace ? " in place" : "", i, a[off + i],
                               o[i], want);
                bad++;
              }
            }
            cr_expect(o[n] == 0xa5a5, "powi_half wrote past n = %zu", n);
          }
}

/* Half unary ops through the engine (the fused kernel): contiguous
 * operands consumed (in place) or kept, transposed views, lengths around
 * the vector width, against the NdArray reference. */
Test(flex_blocks, fused_half_unary_ops_match_reference) {
  bext_tensor *(*const fn[])(bext_tensor *) = { bext_sqrt, bext_rsqrt, bext_neg,  bext_abs,   bext_relu,
                                                bext_recip, bext_floor, bext_ceil, bext_round, bext_sign };
  const int64_t sides[][2] = { { 1, 1 }, { 1, 7 }, { 1, 8 }, { 1, 9 }, { 3, 15 }, { 2, 16 }, { 1, 17 }, { 1, 33 },
                               { 33, 65 }, { 7, 1000 } };
  const bext_dtype dts[] = { BEXT_F16, BEXT_BF16 };
  char what[160];
  for (size_t di = 0; di < 2; di++)
    for (size_t si = 0; si < sizeof sides / sizeof sides[0]; si++)
      for (size_t f = 0; f < sizeof fn / sizeof fn[0]; f++)
        for (int form = 0; form < 2; form++)
          for (int keep = 0; keep < 2; keep++) {
            bext_tensor *na, *fa;
            tw_operand(form, sides[si][0], sides[si][1], dts[di], (unsigned)(si * 7 + f), &na, &fa);
            if (keep) bext_retain(fa);
            snprintf(what, sizeof what, "%s unary %zu %ldx%ld form %d%s", dts[di] == BEXT_F16 ? "f16" : "bf16", f,
                     (long)sides[si][0], (long)sides[si][1], form, keep ? " kept" : " consumed");
            tw_expect_same(fn[f](fa), fn[f](na), what);
            if (keep) bext_release(fa);
          }
  /* clamp (clamp_half): bounds that are half values and ones that are not */
  static const double cb[][2] = { { -2.0, 3.0 }, { 0.1, 7.3 }, { -1e9, 0.3 } };
  for (size_t di = 0; di < 2; di++)
    for (size_t si = 0; si < sizeof sides / sizeof sides[0]; si++)
      for (size_t k = 0; k < sizeof cb / sizeof cb[0]; k++)
        for (int form = 0; form < 2; form++) {
          bext_tensor *na, *fa;
          tw_operand(form, sides[si][0], sides[si][1], dts[di], (unsigned)(si * 3 + k), &na, &fa);
          snprintf(what, sizeof what, "%s clamp [%g, %g] %ldx%ld form %d", dts[di] == BEXT_F16 ? "f16" : "bf16",
                   cb[k][0], cb[k][1], (long)sides[si][0], (long)sides[si][1], form);
          tw_expect_same(bext_clamp(fa, cb[k][0], cb[k][1]), bext_clamp(na, cb[k][0], cb[k][1]), what);
        }
  /* powi and pow_scalar by an integer (powi_half): pow's last bits are
   * open against the reference, so against Flex's f32 path between casts */
  static const int64_t pe[] = { 3, -2, 0, 13 };
  for (size_t di = 0; di < 2; di++)
    for (size_t si = 0; si < sizeof sides / sizeof sides[0]; si++)
      for (size_t k = 0; k < sizeof pe / sizeof pe[0]; k++)
        for (int form = 0; form < 2; form++)
          for (int scalar = 0; scalar < 2; scalar++) {
            bext_tensor *na, *fa;
            tw_operand(form, sides[si][0], sides[si][1], dts[di], (unsigned)(si * 5 + k), &na, &fa);
            bext_release(na);
            bext_tensor *f32 = bext_cast(bext_retain(fa), BEXT_F32);
            bext_tensor *want = bext_cast(scalar ? bext_pow_scalar(f32, (double)pe[k]) : bext_powi(f32, pe[k]), dts[di]);
            snprintf(what, sizeof what, "%s %s %lld %ldx%ld form %d", dts[di] == BEXT_F16 ? "f16" : "bf16",
                     scalar ? "pow_scalar" : "powi", (long long)pe[k], (long)sides[si][0], (long)sides[si][1], form);
            tw_expect_same(scalar ? bext_pow_scalar(fa, (double)pe[k]) : bext_powi(fa, pe[k]), want, what);
          }
  /* transcendentals: the last bits are open against the reference, so
   * against Flex's own f32 kernels between two casts */
  bext_tensor *(*const tr[])(bext_tensor *) = { bext_exp, bext_log,  bext_log1p, bext_sin,
                                                bext_cos, bext_tanh, bext_erf };
  for (size_t di = 0; di < 2; di++)
    for (size_t si = 0; si < sizeof sides / sizeof sides[0]; si++)
      for (size_t f = 0; f < sizeof tr / sizeof tr[0]; f++)
        for (int form = 0; form < 2; form++) {
          bext_tensor *na, *fa;
          tw_operand(form, sides[si][0], sides[si][1], dts[di], (unsigned)(si * 5 + f), &na, &fa);
          bext_release(na);
          bext_tensor *want = bext_cast(tr[f](bext_cast(bext_retain(fa), BEXT_F32)), dts[di]);
          snprintf(what, sizeof what, "%s transcendental %zu %ldx%ld form %d", dts[di] == BEXT_F16 ? "f16" : "bf16",
                   f, (long)sides[si][0], (long)sides[si][1], form);
          tw_expect_same(tr[f](fa), want, what);
        }
}

/* f16 and bf16 ops that take the fused kernel through the engine:
 * contiguous operands (consumed: the output reuses one in place), row /
 * column broadcasts and scalars, lengths around the vector width,
 * against the NdArray reference. */
Test(flex_blocks, fused_half_ops_match_reference) {
  const int64_t sides[][2] = { { 1, 1 }, { 1, 7 }, { 1, 8 }, { 1, 9 }, { 3, 15 }, { 2, 16 }, { 1, 17 },
                               { 3, 5 }, { 33, 65 }, { 100, 37 }, { 7, 1000 } };
  const bext_dtype dts[] = { BEXT_BF16, BEXT_F16 };
  char what[160];
  for (size_t di = 0; di < 2; di++)
    for (size_t si = 0; si < sizeof sides / sizeof sides[0]; si++)
      for (int op = TW_ADD; op <= TW_MIN; op++)
        for (int form = 1; form < 4; form++)
          for (int swap = 0; swap < 2; swap++) {
            const int64_t R = sides[si][0], C = sides[si][1];
            const bext_dtype dt = dts[di];
            bext_tensor *na, *fa, *nb, *fb;
            tw_operand(1, R, C, dt, (unsigned)si + 40, &na, &fa);
            tw_operand(form, R, C, dt, (unsigned)si + 50, &nb, &fb);
            if (swap) {
              bext_tensor *t = na; na = nb; nb = t;
              t = fa; fa = fb; fb = t;
            }
            snprintf(what, sizeof what, "%s %s %ldx%ld form %d%s", dt == BEXT_F16 ? "f16" : "bf16", tw_name[op],
                     (long)R, (long)C, form, swap ? " swapped" : "");
            tw_expect_same(tw_apply(op, fa, fb, dt), tw_apply(op, na, nb, dt), what);
          }
  for (size_t di = 0; di < 2; di++) {
    bext_tensor *na, *fa;
    tw_operand(1, 45, 91, dts[di], 77, &na, &fa);
    tw_expect_same(bext_mul_scalar(bext_retain(fa), 1.5), bext_mul_scalar(bext_retain(na), 1.5), "mul_scalar");
    tw_expect_same(bext_mul_scalar(bext_retain(fa), 1e5), bext_mul_scalar(bext_retain(na), 1e5),
                   "mul_scalar overflowing f16");
    tw_expect_same(bext_max_scalar(fa, -0.0), bext_max_scalar(na, -0.0), "max_scalar");
  }
}

/* f16 edge values through the engine: sums and products that overflow
 * to inf, results that are f16 subnormals or round to zero, NaN and
 * infinities on either side, 33 lanes (4 vectors and a tail). */
Test(flex_blocks, fused_f16_edges_match_reference) {
  static const double va[33] = { 60000, -60000, 65504, 300, 1e-4, -1e-4, 6.1e-5, 3e-8, NAN, INFINITY,
                                 -INFINITY, 0.0, -0.0, 1, -1, 2048, 2049, 0.1, 1e-7, 5.96e-8, 65519,
                                 65520, -65520, 1.5, 3, 7, 1e4, -1e4, 0.5, 2, NAN, 1e-5, 4 };
  static const double vb[33] = { 60000, -60000, 1, 300, 1e-3, 1e-4, -6e-5, 0.5, 1, NAN, INFINITY, -0.0,
                                 0.0, 0.0, -0.0, 1, 1, 3, 1e-7, 0.5, 1, 1, -1, INFINITY, 0.0, -7, 1e4,
                                 7, 3, 0.25, -INFINITY, 1e-5, 1e-4 };
  for (int op = TW_ADD; op <= TW_MIN; op++) {
    bext_tensor *na = bext_cast(bext_from_data(va, BEXT_F64, (int64_t[]){ 33 }, 1, dev_of("ndarray")), BEXT_F16);
    bext_tensor *nb = bext_cast(bext_from_data(vb, BEXT_F64, (int64_t[]){ 33 }, 1, dev_of("ndarray")), BEXT_F16);
    cr_assert(na && nb, "%s", bext_last_error());
    bext_tensor *fa = bext_to_device(bext_retain(na), dev_of("flex"));
    bext_tensor *fb = bext_to_device(bext_retain(nb), dev_of("flex"));
    char what[64];
    snprintf(what, sizeof what, "f16 edges %s", tw_name[op]);
    tw_expect_same(tw_apply(op, fa, fb, BEXT_F16), tw_apply(op, na, nb, BEXT_F16), what);
  }
}
