/* flex_matmul.c — batched matmul with NumPy-broadcast batch dims.
 *
 * f32/f64 go to OpenBLAS (cblas_sgemm/dgemm), one call per batch matrix;
 * a strided operand whose rows or columns are unit-stride is passed as is
 * (NoTrans with its row stride as leading dimension, or Trans with its
 * column stride), so transposed views cost no copy.  Other layouts are
 * packed into a contiguous scratch matrix first.  f16/bf16 are widened to
 * f32 scratch, multiplied by sgemm and rounded back; integer types use a
 * plain i-k-j loop in wrapping i64. */
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

/* Packs/widens a rows x cols strided matrix of dt into f32 or f64 scratch. */
static void pack(void *dst, int repr, const char *src, bext_dtype dt, int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  size_t es = bext_dtype_size(dt), rsz = bxfx_repr_size(repr);
  for (int64_t i = 0; i < rows; i++)
    bxfx_load((char *)dst + (size_t)(i * cols) * rsz, repr, src + i * rs * (int64_t)es, dt, cs, (size_t)cols);
}

bext_tensor *bxfx_exec_matmul(struct bxr_op *op) {
  const bext_tensor *a = op->in[0], *b = op->in[1];
  bxr_pool_threads();   /* sizes the pool once, which tells OpenBLAS the same count */
  bext_tensor *out = bxr_op_new_output(op);
  if (!out) return NULL;
  const int R = out->rank, nb = R - 2;
  const int64_t m = out->shape[R - 2], n = out->shape[R - 1], k = a->shape[a->rank - 1];
  const bext_dtype dt = a->dtype;
  const size_t es = bext_dtype_size(dt);
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
  const bool native = dt == BEXT_F32 || dt == BEXT_F64;
  CBLAS_TRANSPOSE ta = CblasNoTrans, tb = CblasNoTrans;
  int64_t lda = k, ldb = n;
  bool pa = !native || !blas_layout(m, k, ars, acs, &ta, &lda);
  bool pb = !native || !blas_layout(k, n, brs, bcs, &tb, &ldb);
  if (pa) { ta = CblasNoTrans; lda = k > 0 ? k : 1; }
  if (pb) { tb = CblasNoTrans; ldb = n; }
  size_t rsz = bxfx_repr_size(repr);
  size_t sa = pa ? (size_t)(m * k) * rsz : 0, sb = pb ? (size_t)(k * n) * rsz : 0;
  size_t sc = native ? 0 : (size_t)(m * n) * rsz;
  size_t scratch = sa + sb + sc;
  char *buf = NULL;
  if (scratch) {
    buf = bxr_alloc(scratch);
    if (!buf) { bext_release(out); return NULL; }
  }
  char *A = buf, *B = buf ? buf + sa : NULL, *C = buf ? buf + sa + sb : NULL;
  int64_t idx[BEXT_MAX_RANK] = { 0 };
  for (int64_t bi = 0; bi < nbatch; bi++) {
    int64_t ao = 0, bo = 0;
    for (int d = 0; d < nb; d++) { ao += idx[d] * abs_[d]; bo += idx[d] * bbs[d]; }
    const char *ap = (const char *)bxr_data(a) + ao * (int64_t)es;
    const char *bp = (const char *)bxr_data(b) + bo * (int64_t)es;
    char *op_ = (char *)bxr_data(out) + (size_t)(bi * m * n) * es;
    if (pa) pack(A, repr, ap, dt, m, k, ars, acs);
    if (pb) pack(B, repr, bp, dt, k, n, brs, bcs);
    const void *Ap = pa ? (const void *)A : (const void *)ap, *Bp = pb ? (const void *)B : (const void *)bp;
    if (k == 0) {
      memset(native ? (void *)op_ : (void *)C, 0, (size_t)(m * n) * (native ? es : rsz));
    } else if (repr == BXFX_R_F32) {
      cblas_sgemm(CblasRowMajor, ta, tb, (int)m, (int)n, (int)k, 1.0f, Ap, (int)lda, Bp, (int)ldb, 0.0f,
                  native ? (float *)op_ : (float *)C, (int)n);
    } else if (repr == BXFX_R_F64) {
      cblas_dgemm(CblasRowMajor, ta, tb, (int)m, (int)n, (int)k, 1.0, Ap, (int)lda, Bp, (int)ldb, 0.0,
                  (double *)op_, (int)n);
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
    if (!native) bxfx_store(op_, dt, C, repr, (size_t)(m * n));
    for (int d = nb - 1; d >= 0; d--) {
      if (++idx[d] < out->shape[d]) break;
      idx[d] = 0;
    }
  }
  if (buf) bxr_free(buf, scratch);
  return out;
}
