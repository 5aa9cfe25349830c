/* flex_matmul.c — batched matmul with NumPy-broadcast batch dims.
 *
 * f32/f64 go to OpenBLAS (cblas_sgemm/dgemm), one call per batch matrix.
 * Many (or small) batch matrices are shared out whole across the runtime's
 * thread pool; a few large ones are each cut into column (or row) panels,
 * one single-threaded gemm per panel.  OpenBLAS's own
 * threads are never used (pool.c keeps it at one): after each call they
 * spin in sched_yield for ~2^28 cycles, which on a few shared cores took
 * the core the pool's next elementwise chunk needed (perf on the MLP
 * training step: over half the cycles in sched_yield).  A strided operand whose rows or columns are unit-stride is passed as is
 * (NoTrans with its row stride as leading dimension, or Trans with its
 * column stride), so transposed views cost no copy.  Other layouts are
 * packed into a contiguous scratch matrix first.  f16/bf16 are widened to
 * f32 scratch, multiplied by sgemm and rounded back.  i32 and i64 run at
 * their own width (the kernels' mm_i32/mm_i64, register-blocked; for i32
 * wrapping in 32 bits is the same bits as the i64 sum stored back, at
 * twice the lanes and half the bytes); other integer types use a plain
 * i-k-j loop in wrapping i64. */
#include <cblas.h>
#include <string.h>

#include "flex_internal.h"

struct mat {            /* one operand's batch matrix as BLAS sees it */
  const char *p;
  int64_t rs, cs;       /* row / column strides in elements */
};

/* BLAS layout of a rows x cols matrix with strides (rs, cs), or false. */
static bool blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, CBLAS_TRANSPOSE *tr, int64_t *ld) {
  if (rows <= 1) rs = cols > 1 ? cols : 1;    /* a lone row: its stride is free */
  if (cols <= 1) cs = 1;
  if (cs == 1 && rs >= (cols > 1 ? cols : 1)) { *tr = CblasNoTrans; *ld = rs; return true; }
  if (rs == 1 && cs >= (rows > 1 ? rows : 1)) { *tr = CblasTrans; *ld = cs; return true; }
  return false;
}

/* One gemm of a batch: C = A B, A m x k, B k x n, C m x n row-major
 * (ldc = n); the pool runs panels of it (gemm_panel). */
struct gemm_job {
  bool f64, by_cols;          /* split n (column panels) or m (row panels) */
  CBLAS_TRANSPOSE ta, tb;
  int64_t m, n, k, lda, ldb;
  const char *A, *B;
  char *C;
};

/* Element offset of row/column i of a BLAS operand stored with transpose
 * flag tr and leading dimension ld: row i of a NoTrans matrix starts at
 * i * ld, of a Trans one at i; column j the other way round. */
static int64_t row_off(CBLAS_TRANSPOSE tr, int64_t ld, int64_t i) { return tr == CblasNoTrans ? i * ld : i; }
static int64_t col_off(CBLAS_TRANSPOSE tr, int64_t ld, int64_t j) { return tr == CblasNoTrans ? j : j * ld; }

static void gemm_panel(void *ctx, size_t lo, size_t hi) {
  const struct gemm_job *g = ctx;
  const size_t es = g->f64 ? 8 : 4;
  int64_t m = g->m, n = g->n, i0 = 0, j0 = 0;
  if (g->by_cols) { j0 = (int64_t)lo; n = (int64_t)(hi - lo); }
  else { i0 = (int64_t)lo; m = (int64_t)(hi - lo); }
  const char *A = g->A + (size_t)row_off(g->ta, g->lda, i0) * es;
  const char *B = g->B + (size_t)col_off(g->tb, g->ldb, j0) * es;
  char *C = g->C + (size_t)(i0 * g->n + j0) * es;
  if (g->f64)
    cblas_dgemm(CblasRowMajor, g->ta, g->tb, (int)m, (int)n, (int)g->k, 1.0, (const double *)A, (int)g->lda,
                (const double *)B, (int)g->ldb, 0.0, (double *)C, (int)g->n);
  else
    cblas_sgemm(CblasRowMajor, g->ta, g->tb, (int)m, (int)n, (int)g->k, 1.0f, (const float *)A, (int)g->lda,
                (const float *)B, (int)g->ldb, 0.0f, (float *)C, (int)g->n);
}

/* Runs one gemm over the pool: panels along the longer of m and n, whole
 * multiples of 16 (the gemm kernels' register tile) so no panel ends in
 * a partial tile.  Cost per index is one column's (or row's) flops in
 * f32-add units, so small products stay on the calling thread. */
static void gemm_pooled(struct gemm_job *g) {
  g->by_cols = g->n >= g->m;
  size_t len = (size_t)(g->by_cols ? g->n : g->m), other = (size_t)(g->by_cols ? g->m : g->n);
  bxr_pool_for(len, 2 * other * (size_t)g->k, 16, gemm_panel, g);
}

/* A rows x cols strided matrix stored row-major contiguous: i32/i64
 * matrices in this layout go to mm_i32/mm_i64 as they are. */
static bool dense_rows(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  return (cols <= 1 || cs == 1) && (rows <= 1 || rs == cols);
}

/* Packs an i32 or i64 matrix into contiguous scratch of its own width. */
static void pack_own(void *dst, const void *src, size_t es, int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++)
      memcpy((char *)dst + (size_t)(i * cols + j) * es, (const char *)src + (i * rs + j * cs) * (int64_t)es, es);
}

/* Packs/widens a rows x cols strided matrix of dt into f32 or f64 scratch. */
static void pack(void *dst, int repr, const char *src, bext_dtype dt, int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  size_t es = bext_dtype_size(dt), rsz = bxfx_repr_size(repr);
  if (dense_rows(rows, cols, rs, cs)) {   /* one conversion call, not one per (short) row */
    bxfx_load(dst, repr, src, dt, 1, (size_t)(rows * cols));
    return;
  }
  for (int64_t i = 0; i < rows; i++)
    bxfx_load((char *)dst + (size_t)(i * cols) * rsz, repr, src + i * rs * (int64_t)es, dt, cs, (size_t)cols);
}

/* The batch loop: batch matrices [lo, hi) of one matmul, each packed (when
 * its layout or dtype needs it) into this chunk's scratch slot and
 * multiplied (gemm_pooled runs inline when called from a pool chunk). */
struct batch_job {
  const bext_tensor *a, *b;
  bext_tensor *out;
  int nb;
  int64_t m, n, k;
  bext_dtype dt;
  int repr;
  bool native, own, pa, pb;   /* own: i32/i64 at their own width */
  bool prefetch;              /* f16/bf16 with dense operands: prefetch_span the next */
  CBLAS_TRANSPOSE ta, tb;
  int64_t lda, ldb, ars, acs, brs, bcs;
  int64_t abs_[BEXT_MAX_RANK], bbs[BEXT_MAX_RANK];
  size_t sa, sb, scratch;
  char *buf;
  int nslots;               /* scratch slots in buf */
  int next_slot;            /* atomic: the next free scratch slot */
};

/* Asks for a span of the next batch matrix while this one multiplies: the
 * widening pass of f16/bf16 (a separate loop before the gemm, with no
 * arithmetic to hide the loads behind) otherwise waits on L3 for every
 * line; perf on 256 bf16 64x64x64 products put a third of the time on its
 * loads. */
static void prefetch_span(const char *p, size_t bytes) {
  for (size_t o = 0; o < bytes; o += 64) __builtin_prefetch(p + o, 0, 2);
}


static void batch_chunk(void *ctx, size_t lo, size_t hi) {
  struct batch_job *J = ctx;
  const int64_t m = J->m, n = J->n, k = J->k;
  const bext_dtype dt = J->dt;
  const size_t es = bext_dtype_size(dt);
  const int repr = J->repr, nb = J->nb;
  int slot_i = __atomic_fetch_add(&J->next_slot, 1, __ATOMIC_RELAXED);
  BXR_ASSERT(slot_i < J->nslots);
  char *slot = J->buf ? J->buf + (size_t)slot_i * J->scratch : NULL;
  char *A = slot, *B = slot ? slot + J->sa : NULL, *C = slot ? slot + J->sa + J->sb : NULL;
  int64_t idx[BEXT_MAX_RANK] = { 0 }, rem = (int64_t)lo;
  for (int d = nb - 1; d >= 0; d--) {
    idx[d] = rem % J->out->shape[d];
    rem /= J->out->shape[d];
  }
  for (int64_t bi = (int64_t)lo; bi < (int64_t)hi; bi++) {
    int64_t ao = 0, bo = 0;
    for (int d = 0; d < nb; d++) { ao += idx[d] * J->abs_[d]; bo += idx[d] * J->bbs[d]; }
    const char *ap = (const char *)bxr_data(J->a) + ao * (int64_t)es;
    const char *bp = (const char *)bxr_data(J->b) + bo * (int64_t)es;
    char *op_ = (char *)bxr_data(J->out) + (size_t)(bi * m * n) * es;
    if (J->own) {
      if (J->pa) pack_own(A, ap, es, m, k, J->ars, J->acs);
      if (J->pb) pack_own(B, bp, es, k, n, J->brs, J->bcs);
    } else {
      if (J->pa) pack(A, repr, ap, dt, m, k, J->ars, J->acs);
      if (J->pb) pack(B, repr, bp, dt, k, n, J->brs, J->bcs);
    }
    const void *Ap = J->pa ? (const void *)A : (const void *)ap, *Bp = J->pb ? (const void *)B : (const void *)bp;
    if (J->prefetch && bi + 1 < (int64_t)hi) {   /* the next matrix: idx + 1 */
      int64_t nx[BEXT_MAX_RANK], nao = 0, nbo = 0;
      memcpy(nx, idx, sizeof nx);
      for (int d = nb - 1; d >= 0; d--) {
        if (++nx[d] < J->out->shape[d]) break;
        nx[d] = 0;
      }
      for (int d = 0; d < nb; d++) { nao += nx[d] * J->abs_[d]; nbo += nx[d] * J->bbs[d]; }
      if (nao != ao) prefetch_span((const char *)bxr_data(J->a) + nao * (int64_t)es, (size_t)(m * k) * es);
      if (nbo != bo) prefetch_span((const char *)bxr_data(J->b) + nbo * (int64_t)es, (size_t)(k * n) * es);
    }
    if (k == 0) {
      memset(J->native ? (void *)op_ : (void *)C, 0, (size_t)(m * n) * (J->native ? es : bxfx_repr_size(repr)));
    } else if (J->own) {
      if (dt == BEXT_I32) bxfx_kern()->mm_i32(Ap, Bp, (int32_t *)(void *)op_, (size_t)m, (size_t)n, (size_t)k);
      else bxfx_kern()->mm_i64(Ap, Bp, (int64_t *)(void *)op_, (size_t)m, (size_t)n, (size_t)k);
    } else if (repr == BXFX_R_F32 || repr == BXFX_R_F64) {
      struct gemm_job g = { .f64 = repr == BXFX_R_F64, .ta = J->ta, .tb = J->tb, .m = m, .n = n, .k = k,
                            .lda = J->lda, .ldb = J->ldb, .A = Ap, .B = Bp, .C = J->native ? op_ : C };
      gemm_pooled(&g);
    } else {
      const int64_t *Ai = Ap, *Bi = Bp;
      int64_t *Ci = (int64_t *)C;
      for (int64_t i = 0; i < m; i++) {
        int64_t *crow = Ci + i * n;
        for (int64_t j = 0; j < n; j++) crow[j] = 0;
        for (int64_t p = 0; p < k; p++) {
          uint64_t av = (uint64_t)Ai[i * k + p];
          const int64_t *brow = Bi + p * n;
          for (int64_t j = 0; j < n; j++) crow[j] = (int64_t)((uint64_t)crow[j] + av * (uint64_t)brow[j]);
        }
      }
    }
    if (!J->native) bxfx_store(op_, dt, C, repr, (size_t)(m * n));
    for (int d = nb - 1; d >= 0; d--) {
      if (++idx[d] < J->out->shape[d]) break;
      idx[d] = 0;
    }
  }
}

bext_tensor *bxfx_exec_matmul(struct bxr_op *op) {
  const bext_tensor *a = op->in[0], *b = op->in[1];
  bxr_pool_threads();   /* sizes the pool once, which tells OpenBLAS the same count */
  bext_tensor *out = bxr_op_new_output(op);
  if (!out) return NULL;
  const int R = out->rank, nb = R - 2;
  const int64_t m = out->shape[R - 2], n = out->shape[R - 1], k = a->shape[a->rank - 1];
  const bext_dtype dt = a->dtype;
  int64_t nbatch = 1;
  for (int d = 0; d < nb; d++) nbatch *= out->shape[d];
  if (m == 0 || n == 0 || nbatch == 0) return out;

  /* Batch strides of a and b aligned to out's batch dims (0 = broadcast). */
  int64_t abs_[BEXT_MAX_RANK] = { 0 }, bbs[BEXT_MAX_RANK] = { 0 };
  for (int d = 0; d < nb; d++) {
    int da = d - (nb - (a->rank - 2)), db = d - (nb - (b->rank - 2));
    if (da >= 0 && a->shape[da] != 1) abs_[d] = a->strides[da];
    if (db >= 0 && b->shape[db] != 1) bbs[d] = b->strides[db];
  }
  const int64_t ars = a->strides[a->rank - 2], acs = a->strides[a->rank - 1];
  const int64_t brs = b->strides[b->rank - 2], bcs = b->strides[b->rank - 1];
  const int repr = bxfx_repr_of(dt);   /* f32 (f32/f16/bf16), f64, or i64 */
  const bool own = dt == BEXT_I32 || dt == BEXT_I64;
  const bool native = dt == BEXT_F32 || dt == BEXT_F64 || own;
  CBLAS_TRANSPOSE ta = CblasNoTrans, tb = CblasNoTrans;
  int64_t lda = k, ldb = n;
  bool pa, pb;
  if (own) {
    pa = !dense_rows(m, k, ars, acs);
    pb = !dense_rows(k, n, brs, bcs);
  } else {
    pa = !native || !blas_layout(m, k, ars, acs, &ta, &lda);
    pb = !native || !blas_layout(k, n, brs, bcs, &tb, &ldb);
  }
  if (pa) { ta = CblasNoTrans; lda = k > 0 ? k : 1; }
  if (pb) { tb = CblasNoTrans; ldb = n; }
  size_t rsz = own ? bext_dtype_size(dt) : bxfx_repr_size(repr);
  size_t sa = pa ? (size_t)(m * k) * rsz : 0, sb = pb ? (size_t)(k * n) * rsz : 0;
  size_t sc = native ? 0 : (size_t)(m * n) * rsz;
  size_t scratch = sa + sb + sc;
  /* Whole batch matrices per thread when there are many or they are
   * small: a small product cut into panels would pay a pool round trip
   * per batch for microseconds of work.  A few large ones keep the
   * panel split (whole matrices would balance badly: 3 on 2 threads).
   * Each chunk takes its own scratch slot (one chunk per thread). */
  const int threads = bxr_pool_threads();
  const bool by_batch = nbatch > 1 && (nbatch >= 4 * (int64_t)threads || 2 * m * n * k < ((int64_t)1 << 22));
  const int nslots = by_batch ? threads : 1;
  char *buf = NULL;
  if (scratch) {
    buf = bxr_alloc(scratch * (size_t)nslots);
    if (!buf) { bext_release(out); return NULL; }
  }
  struct batch_job J = { .a = a, .b = b, .out = out, .nb = nb, .m = m, .n = n, .k = k, .dt = dt, .repr = repr,
                         .native = native, .own = own, .pa = pa, .pb = pb, .ta = ta, .tb = tb, .lda = lda, .ldb = ldb,
                         .ars = ars, .acs = acs, .brs = brs, .bcs = bcs, .sa = sa, .sb = sb,
                         .scratch = scratch, .buf = buf, .nslots = nslots };
  /* (matrices that fit L2 next to the scratch; larger ones would evict it) */
  J.prefetch = (dt == BEXT_F16 || dt == BEXT_BF16) && dense_rows(m, k, ars, acs) && dense_rows(k, n, brs, bcs) &&
               (size_t)(m * k + k * n) * bext_dtype_size(dt) <= ((size_t)256 << 10);
  memcpy(J.abs_, abs_, sizeof abs_);
  memcpy(J.bbs, bbs, sizeof bbs);
  if (by_batch) bxr_pool_for((size_t)nbatch, (size_t)(2 * m * n * k) + 1, 1, batch_chunk, &J);
  else batch_chunk(&J, 0, (size_t)nbatch);
  if (buf) bxr_free(buf, scratch * (size_t)nslots);
  return out;
}
