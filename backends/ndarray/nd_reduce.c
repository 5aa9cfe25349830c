/* nd_reduce.c — NdArray reductions (whole tensor or along one dim), cumsum
 * and batched matmul (naive triple loop; batch dims broadcast).  Floats
 * accumulate in double, ints in wrapping int64.  Float sums (and means)
 * are NumPy's pairwise summation, the reference the faster backends are
 * held to (bext.h states the bound). */
#include <math.h>
#include <string.h>

#include "ndarray.h"

/* Views the contiguous input as [outer, extent, inner] around the reduced dim. */
static void split(const struct bxr_op *op, const bext_tensor *t, int64_t *outer, int64_t *extent,
                  int64_t *inner) {
  if (op->at.all) {
    *outer = 1;
    *extent = bxr_numel(t->rank, t->shape);
    *inner = 1;
    return;
  }
  *outer = bxr_numel(op->at.dim, t->shape);
  *extent = t->shape[op->at.dim];
  *inner = bxr_numel(t->rank - op->at.dim - 1, t->shape + op->at.dim + 1);
}

/* NumPy's pairwise sum (numpy/core/src/umath/loops_utils.h.src) of n
 * elements at p[base + k*stride], in double: below 8 elements a plain
 * loop; up to 128, eight accumulators unrolled, added as a tree; above,
 * halves (the first a multiple of 8) summed recursively.  Error
 * O(log2(n) eps) of sum(|x|); depth log2(n / 128). */
static double pairwise(const void *p, bext_dtype dt, int64_t base, int64_t n, int64_t stride) {
  if (n < 8) {
    double r = 0.0;
    for (int64_t k = 0; k < n; k++) r += bxr_load_f64(p, dt, base + k * stride);
    return r;
  }
  if (n <= 128) {
    double r[8];
    for (int j = 0; j < 8; j++) r[j] = bxr_load_f64(p, dt, base + j * stride);
    int64_t k = 8;
    for (; k + 8 <= n; k += 8)
      for (int j = 0; j < 8; j++) r[j] += bxr_load_f64(p, dt, base + (k + j) * stride);
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; k < n; k++) res += bxr_load_f64(p, dt, base + k * stride);
    return res;
  }
  int64_t h = n / 2;
  h -= h % 8;
  return pairwise(p, dt, base, h, stride) + pairwise(p, dt, base + h * stride, n - h, stride);
}

bext_tensor *bxnd_reduce(struct bxr_op *op) {
  if (!bxnd_contig_inputs(op)) return NULL;
  bext_tensor *out = bxr_op_new_output(op);
  if (!out) return NULL;
  const bext_tensor *t = op->in[0];
  bext_dtype dt = t->dtype;
  bool flt = bext_dtype_kind(dt) == BEXT_KIND_FLOAT;
  const void *p = bxr_data(t);
  void *po = bxr_data(out);
  int64_t outer, ext, inner;
  split(op, t, &outer, &ext, &inner);
  enum bxr_opcode c = op->code;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      int64_t oi = o * inner + in;
      int64_t base = o * ext * inner + in;
      if (c == BXR_OP_ARGMAX || c == BXR_OP_ARGMIN) {
        int64_t best = 0;
        if (flt) {
          double bv = bxr_load_f64(p, dt, base);
          for (int64_t k = 1; k < ext && bv == bv; k++) {
            double x = bxr_load_f64(p, dt, base + k * inner);
            if (x != x || (c == BXR_OP_ARGMAX ? x > bv : x < bv)) bv = x, best = k;
          }
        } else {
          int64_t bv = bxr_load_i64(p, dt, base);
          for (int64_t k = 1; k < ext; k++) {
            int64_t x = bxr_load_i64(p, dt, base + k * inner);
            if (c == BXR_OP_ARGMAX ? x > bv : x < bv) bv = x, best = k;
          }
        }
        bxr_store_i64(po, BEXT_I64, oi, best);
        continue;
      }
      if (c == BXR_OP_ANY || c == BXR_OP_ALL) {
        bool acc = c == BXR_OP_ALL;
        for (int64_t k = 0; k < ext; k++) {
          bool x = bxr_load_i64(p, dt, base + k * inner) != 0;
          acc = c == BXR_OP_ALL ? acc && x : acc || x;
        }
        bxr_store_i64(po, BEXT_BOOL, oi, acc);
        continue;
      }
      if (flt && (c == BXR_OP_SUM || c == BXR_OP_MEAN)) {
        double acc = pairwise(p, dt, base, ext, inner);
        if (c == BXR_OP_MEAN) acc /= (double)ext; /* empty: 0/0 = NaN */
        bxr_store_f64(po, out->dtype, oi, acc);
        continue;
      }
      if (flt) {
        double acc = c == BXR_OP_PROD ? 1.0 : 0.0;
        for (int64_t k = 0; k < ext; k++) {
          double x = bxr_load_f64(p, dt, base + k * inner);
          if (k == 0 && (c == BXR_OP_MAX_REDUCE || c == BXR_OP_MIN_REDUCE)) acc = x;
          else if (c == BXR_OP_SUM || c == BXR_OP_MEAN) acc += x;
          else if (c == BXR_OP_PROD) acc *= x;
          else if (x != x || acc != acc) acc = NAN;
          else if (c == BXR_OP_MAX_REDUCE ? x > acc : x < acc) acc = x;
        }
        if (c == BXR_OP_MEAN) acc /= (double)ext; /* empty: 0/0 = NaN */
        bxr_store_f64(po, out->dtype, oi, acc);
      } else {
        int64_t acc = c == BXR_OP_PROD ? 1 : 0;
        for (int64_t k = 0; k < ext; k++) {
          int64_t x = bxr_load_i64(p, dt, base + k * inner);
          if (k == 0 && (c == BXR_OP_MAX_REDUCE || c == BXR_OP_MIN_REDUCE)) acc = x;
          else if (c == BXR_OP_SUM || c == BXR_OP_MEAN) acc = (int64_t)((uint64_t)acc + (uint64_t)x);
          else if (c == BXR_OP_PROD) acc = (int64_t)((uint64_t)acc * (uint64_t)x);
          else if (c == BXR_OP_MAX_REDUCE ? x > acc : x < acc) acc = x;
        }
        /* int mean: the wrapped sum in the dtype, divided truncating */
        if (c == BXR_OP_MEAN) {
          bxr_store_i64(po, dt, oi, acc);
          acc = bxr_load_i64(po, dt, oi);
          acc = ext ? acc / ext : 0;
        }
        bxr_store_i64(po, out->dtype, oi, acc);
      }
    }
  return out;
}

bext_tensor *bxnd_cumsum(struct bxr_op *op) {
  if (!bxnd_contig_inputs(op)) return NULL;
  bext_tensor *out = bxr_op_new_output(op);
  if (!out) return NULL;
  const bext_tensor *t = op->in[0];
  bext_dtype dt = t->dtype;
  bool flt = bext_dtype_kind(dt) == BEXT_KIND_FLOAT;
  int64_t outer, ext, inner;
  split(op, t, &outer, &ext, &inner);
  const void *p = bxr_data(t);
  void *po = bxr_data(out);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      double fa = 0;
      int64_t ia = 0;
      for (int64_t k = 0; k < ext; k++) {
        int64_t j = o * ext * inner + k * inner + in;
        if (flt) {
          fa += bxr_load_f64(p, dt, j);
          bxr_store_f64(po, dt, j, fa);
        } else {
          ia = (int64_t)((uint64_t)ia + (uint64_t)bxr_load_i64(p, dt, j));
          bxr_store_i64(po, dt, j, ia);
        }
      }
    }
  return out;
}

bext_tensor *bxnd_matmul(struct bxr_op *op) {
  if (!bxnd_contig_inputs(op)) return NULL;
  bext_tensor *out = bxr_op_new_output(op);
  if (!out) return NULL;
  const bext_tensor *a = op->in[0], *b = op->in[1];
  bext_dtype dt = a->dtype;
  bool flt = bext_dtype_kind(dt) == BEXT_KIND_FLOAT;
  int r = out->rank, br = r - 2;
  int64_t m = out->shape[r - 2], n = out->shape[r - 1], k = a->shape[a->rank - 1];
  /* batch strides (in matrices) of a and b against the broadcast batch shape */
  int64_t sa[BEXT_MAX_RANK] = {0}, sb[BEXT_MAX_RANK] = {0};
  int64_t s = 1;
  for (int d = a->rank - 3, od = br - 1; d >= 0; d--, od--) {
    sa[od] = a->shape[d] == 1 ? 0 : s;
    s *= a->shape[d];
  }
  s = 1;
  for (int d = b->rank - 3, od = br - 1; d >= 0; d--, od--) {
    sb[od] = b->shape[d] == 1 ? 0 : s;
    s *= b->shape[d];
  }
  int64_t nb = bxr_numel(br, out->shape);
  const void *pa = bxr_data(a), *pb = bxr_data(b);
  void *po = bxr_data(out);
  for (int64_t bi = 0; bi < nb; bi++) {
    int64_t ab = bxr_offset_of(bi, br, out->shape, sa) * m * k;
    int64_t bb = bxr_offset_of(bi, br, out->shape, sb) * k * n;
    int64_t ob = bi * m * n;
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        if (flt) {
          double acc = 0;
          for (int64_t l = 0; l < k; l++)
            acc += bxr_load_f64(pa, dt, ab + i * k + l) * bxr_load_f64(pb, dt, bb + l * n + j);
          bxr_store_f64(po, dt, ob + i * n + j, acc);
        } else {
          uint64_t acc = 0;
          for (int64_t l = 0; l < k; l++)
            acc += (uint64_t)bxr_load_i64(pa, dt, ab + i * k + l) * (uint64_t)bxr_load_i64(pb, dt, bb + l * n + j);
          bxr_store_i64(po, dt, ob + i * n + j, (int64_t)acc);
        }
      }
  }
  return out;
}
