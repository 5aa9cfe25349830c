/* flex_layout.c — creation ops and layout ops.
 *
 * Layout ops return zero-copy strided views whenever the layout allows:
 * reshape (when the strides can express the new shape), swap_dims,
 * permute, expand (stride 0), slice and narrow.  The rest copy through
 * bxfx_copy_strided: flip (a negative-stride read), reshape of an
 * incompatible layout, cat, repeat_dim and slice_assign (in place into
 * the owned tensor when it is uniquely held). */
#include <math.h>
#include <string.h>

#include "flex_internal.h"

/* ------------------------------------------------------- strided copy */
struct copy_job {
  char *dst;
  const char *src;
  int rank;                         /* coalesced; the last dim is the row */
  int64_t shape[BEXT_MAX_RANK], ds[BEXT_MAX_RANK], ss[BEXT_MAX_RANK];
  size_t es;
  bool stream;                      /* unit-stride runs go out by stream_out */
};

/* d[i] = s[n - 1 - i] for n elements of es bytes: a row flipped along
 * the last dim, by the kernels' in-register reversal. */
static void copy_rev(char *d, const char *s, size_t n, size_t es) {
  const struct bxfx_kernels *K = bxfx_kern();
  switch (es) {
  case 1: K->rev_u8((uint8_t *)d, (const uint8_t *)s, n); break;
  case 2: K->rev_u16((uint16_t *)(void *)d, (const uint16_t *)(const void *)s, n); break;
  case 4: K->rev_u32((uint32_t *)(void *)d, (const uint32_t *)(const void *)s, n); break;
  default: K->rev_u64((uint64_t *)(void *)d, (const uint64_t *)(const void *)s, n); break;
  }
}

static void copy_rows(void *ctx, size_t b, size_t e) {
  const struct copy_job *J = ctx;
  const int R = J->rank;
  const int64_t L = J->shape[R - 1], dsl = J->ds[R - 1], ssl = J->ss[R - 1];
  const int64_t es = (int64_t)J->es;
  for (size_t row = b; row < e; row++) {
    int64_t doff = 0, soff = 0;
    size_t rem = row;
    for (int d = R - 2; d >= 0; d--) {
      int64_t i = (int64_t)(rem % (size_t)J->shape[d]);
      rem /= (size_t)J->shape[d];
      doff += i * J->ds[d];
      soff += i * J->ss[d];
    }
    char *dp = J->dst + doff * es;
    const char *sp = J->src + soff * es;
    if (dsl == 1 && ssl == 1) {
      if (J->stream) bxfx_kern()->stream_out(dp, sp, (size_t)(L * es));
      else memcpy(dp, sp, (size_t)(L * es));
      continue;
    }
    if (dsl == 1 && ssl == -1) { copy_rev(dp, sp - (L - 1) * es, (size_t)L, (size_t)es); continue; }
    switch (es) {
    case 1: for (int64_t i = 0; i < L; i++) dp[i * dsl] = sp[i * ssl]; break;
    case 2: for (int64_t i = 0; i < L; i++) ((uint16_t *)dp)[i * dsl] = ((const uint16_t *)sp)[i * ssl]; break;
    case 4: for (int64_t i = 0; i < L; i++) ((uint32_t *)dp)[i * dsl] = ((const uint32_t *)sp)[i * ssl]; break;
    default: for (int64_t i = 0; i < L; i++) ((uint64_t *)dp)[i * dsl] = ((const uint64_t *)sp)[i * ssl]; break;
    }
  }
  if (J->stream) bxfx_stream_fence();
}

/* A transposing copy: the source is contiguous along dim p (ss[p] == 1),
 * the destination along the last dim.  Walking either side alone strides
 * the other by whole rows, a new cache line (and page) per element; tiles
 * of BXFX_TILE x BXFX_TILE keep both sides' lines in L1/L2.  Elements
 * of 4, 2 or 1 bytes into unit-stride rows (the common transposes) move
 * as 8x8 blocks transposed in registers.  Task = (the other dims' index,
 * a band of BXFX_TILE along p).  64, not 32: runs of 256 bytes a side
 * (f32 2048x2048, one thread: 3.9 -> 3.3 ms with the staged tiles below). */
enum { BXFX_TILE = 64 };
struct tile_job {
  const struct copy_job *J;
  int p;
  int64_t bands;
  bool stream;   /* whole tile rows go out by stream_out (bxfx_streams) */
};

#define BXFX_TILE_COPY(T)                                                             \
  for (int64_t j0 = 0; j0 < L; j0 += BXFX_TILE) {                                     \
    int64_t j1 = j0 + BXFX_TILE < L ? j0 + BXFX_TILE : L;                             \
    for (int64_t i = i0; i < i1; i++) {                                               \
      T *d = (T *)dp + i * dsp;                                                       \
      const T *s = (const T *)sp + i;                                                 \
      for (int64_t j = j0; j < j1; j++) d[j * dsl] = s[j * ssl];                      \
    }                                                                                 \
  }

/* memcpy through a pointer of stream_out's type (a plain-store tile) */
static void memcpy_fn(void *d, const void *s, size_t n) { memcpy(d, s, n); }

/* The staging buffer of a tile (per thread, not on the stack: a caller's
 * thread may have a small one). */
static _Thread_local _Alignas(32) uint64_t tile_stage[BXFX_TILE * BXFX_TILE];

/* BXFX_TILE_COPY into unit-stride rows: BxB blocks transposed in
 * registers (tile16_u8 for bytes, tile8_u16/u32, tile4_u64), the ragged
 * edges by the RBxRB kernel and element by element.  A full tile is
 * staged in a buffer, B source runs at a time, and stored a whole
 * destination run at a time: with a power-of-two row length the runs on
 * either side map to the same L1 sets, and blocks stored straight into
 * the destination wrote each line in parts, evicted (and fetched again)
 * in between; element by element across the 64 runs missed on every
 * access (f16 and bool transposes ran at 4% of copy bandwidth).  Bytes
 * by 16x16 blocks: ~100 instructions per 256 elements against ~90 per 64
 * in 8x8 ones.  A tile: BXFX_TILE destination runs (a band) by JT source
 * runs. */
#define BXFX_TILE_COPY8(name, T, JT, kern, B, rkern, RB)                                                 \
  static void name(char *dp, int64_t dsp, const char *sp, int64_t ssl, int64_t i0, int64_t i1, int64_t L, \
                   void (*stout)(void *, const void *, size_t)) {                                        \
    void (*const tb)(T *, int64_t, const T *, int64_t) = bxfx_kern()->kern;                              \
    void (*const tr)(T *, int64_t, const T *, int64_t) = bxfx_kern()->rkern;                             \
    T *D = (T *)(void *)dp, *buf = (T *)(void *)tile_stage;                                              \
    const T *S = (const T *)(const void *)sp;                                                            \
    for (int64_t j0 = 0; j0 < L; j0 += JT) {                                                             \
      int64_t j1 = j0 + JT < L ? j0 + JT : L;                                                            \
      /* the next tile's source runs, while this one is transposed */                                    \
      if (j1 < L)                                                                                        \
        bxfx_prefetch_runs(S + j1 * ssl + i0, ssl * (int64_t)sizeof(T), L - j1 < JT ? L - j1 : JT,       \
                           (i1 - i0) * (int64_t)sizeof(T), false);                                       \
      if (i1 - i0 == BXFX_TILE && j1 - j0 == JT) {                                                       \
        for (int64_t jb = 0; jb < JT; jb += B)                                                           \
          for (int64_t ib = 0; ib < BXFX_TILE; ib += B)                                                  \
            tb(buf + ib * JT + jb, JT, S + (j0 + jb) * ssl + i0 + ib, ssl);                              \
        for (int64_t m = 0; m < BXFX_TILE; m++)                                                          \
          stout(D + (i0 + m) * dsp + j0, buf + m * JT, sizeof(T) * JT);                                  \
        continue;                                                                                        \
      }                                                                                                  \
      int64_t i = i0;                                                                                    \
      for (; i + RB <= i1; i += RB) {                                                                    \
        int64_t j = j0;                                                                                  \
        for (; j + RB <= j1; j += RB) tr(D + i * dsp + j, dsp, S + j * ssl + i, ssl);                    \
        for (int64_t m = i; m < i + RB; m++)                                                             \
          for (int64_t jj = j; jj < j1; jj++) D[m * dsp + jj] = S[jj * ssl + m];                         \
      }                                                                                                  \
      for (; i < i1; i++)                                                                                \
        for (int64_t j = j0; j < j1; j++) D[i * dsp + j] = S[j * ssl + i];                               \
    }                                                                                                    \
  }
/* 8-byte tiles 32 source runs deep: destination runs of 256 bytes as
 * the 4-byte ones, a 16 KiB buffer where 64x64 filled all of L1 with the
 * tile's source lines on top (f64 swap_dims one thread, 6 rounds, min:
 * 64 deep 2.8 ms, 32 2.2, 16 2.1 -- 16 and 32 within the noise). */
BXFX_TILE_COPY8(tile_copy_u64, uint64_t, 32, tile4_u64, 4, tile4_u64, 4)
BXFX_TILE_COPY8(tile_copy_u32, uint32_t, BXFX_TILE, tile8_u32, 8, tile8_u32, 8)
BXFX_TILE_COPY8(tile_copy_u16, uint16_t, BXFX_TILE, tile8_u16, 8, tile8_u16, 8)
BXFX_TILE_COPY8(tile_copy_u8, uint8_t, BXFX_TILE, tile16_u8, 16, tile8_u8, 8)
#undef BXFX_TILE_COPY8

static void copy_tiles(void *ctx, size_t b, size_t e) {
  const struct tile_job *TJ = ctx;
  const struct copy_job *J = TJ->J;
  const int R = J->rank, p = TJ->p;
  const int64_t L = J->shape[R - 1], dsl = J->ds[R - 1], ssl = J->ss[R - 1], dsp = J->ds[p];
  const int64_t es = (int64_t)J->es;
  /* a tile's whole destination runs: streamed past bxfx_streams, as the
   * unit-stride copies (the ragged edges keep plain stores) */
  void (*const stout)(void *, const void *, size_t) = TJ->stream ? bxfx_kern()->stream_out : memcpy_fn;
  for (size_t task = b; task < e; task++) {
    size_t rem = task / (size_t)TJ->bands;
    int64_t i0 = (int64_t)(task % (size_t)TJ->bands) * BXFX_TILE;
    int64_t i1 = i0 + BXFX_TILE < J->shape[p] ? i0 + BXFX_TILE : J->shape[p];
    int64_t doff = 0, soff = 0;
    for (int d = R - 2; d >= 0; d--) {
      if (d == p) continue;
      int64_t i = (int64_t)(rem % (size_t)J->shape[d]);
      rem /= (size_t)J->shape[d];
      doff += i * J->ds[d];
      soff += i * J->ss[d];
    }
    char *dp = J->dst + doff * es;
    const char *sp = J->src + soff * es;
    switch (es) {
    case 1:
      if (dsl == 1) tile_copy_u8(dp, dsp, sp, ssl, i0, i1, L, stout);
      else BXFX_TILE_COPY(uint8_t)
      break;
    case 2:
      if (dsl == 1) tile_copy_u16(dp, dsp, sp, ssl, i0, i1, L, stout);
      else BXFX_TILE_COPY(uint16_t)
      break;
    case 4:
      if (dsl == 1) tile_copy_u32(dp, dsp, sp, ssl, i0, i1, L, stout);
      else BXFX_TILE_COPY(uint32_t)
      break;
    default:
      if (dsl == 1) tile_copy_u64(dp, dsp, sp, ssl, i0, i1, L, stout);
      else BXFX_TILE_COPY(uint64_t)
      break;
    }
  }
  if (TJ->stream) bxfx_stream_fence();
}
#undef BXFX_TILE_COPY

/* Bytes [b, e) of one contiguous block, or of a reversed one (src the
 * lowest address of the source; whole elements, as the split is by 4 KiB). */
enum { BXFX_FLAT_MIN = 1 << 18 };
struct flat_job {
  char *dst;
  const char *src;
  size_t es, bytes;
  bool rev, stream;
};
static void copy_flat(void *ctx, size_t b, size_t e) {
  const struct flat_job *F = ctx;
  if (F->rev) copy_rev(F->dst + b, F->src + (F->bytes - e), (e - b) / F->es, F->es);
  else if (F->stream) bxfx_kern()->stream_out(F->dst + b, F->src + b, e - b), bxfx_stream_fence();
  else memcpy(F->dst + b, F->src + b, e - b);
}

void bxfx_copy_strided(void *dst, const int64_t *dst_strides, const void *src,
                       const int64_t *src_strides, int rank, const int64_t *shape, size_t esize) {
  struct copy_job J = { .dst = dst, .src = src, .es = esize };
  int r = 0;
  for (int d = 0; d < rank; d++) {
    if (shape[d] == 0) return;
    if (shape[d] == 1) continue;
    if (r > 0 && J.ds[r - 1] == dst_strides[d] * shape[d] && J.ss[r - 1] == src_strides[d] * shape[d]) {
      J.shape[r - 1] *= shape[d];
      J.ds[r - 1] = dst_strides[d];
      J.ss[r - 1] = src_strides[d];
      continue;
    }
    J.shape[r] = shape[d];
    J.ds[r] = dst_strides[d];
    J.ss[r] = src_strides[d];
    r++;
  }
  if (r == 0) { J.shape[0] = 1; J.ds[0] = J.ss[0] = 1; r = 1; }
  J.rank = r;
  /* Unit-stride runs of a copy whose source and output together reach
   * bxfx_stream_min stream, as the elementwise outputs do (glibc's memcpy stores plainly below 240 MiB
   * here, reading each line it overwrites).  Reversed runs and strided
   * element loops keep plain stores. */
  size_t total = esize, read = esize;   /* a broadcast source (expand) reads its own bytes */
  for (int d = 0; d < r; d++) {
    total *= (size_t)J.shape[d];
    if (J.ss[d]) read *= (size_t)J.shape[d];
  }
  const bool big = bxfx_streams(total, read);
  J.stream = J.ds[r - 1] == 1 && J.ss[r - 1] == 1 && big;
  /* a transpose: the source runs along some other dim than the last */
  if (r >= 2 && J.ss[r - 1] != 1 && J.shape[r - 1] >= BXFX_TILE) {
    for (int p = r - 2; p >= 0; p--) {
      if (J.ss[p] != 1 || J.shape[p] < BXFX_TILE) continue;
      struct tile_job T = { .J = &J, .p = p, .bands = (J.shape[p] + BXFX_TILE - 1) / BXFX_TILE, .stream = big };
      size_t tasks = (size_t)T.bands;
      for (int d = 0; d < r - 1; d++)
        if (d != p) tasks *= (size_t)J.shape[d];
      bxr_pool_for(tasks, (size_t)(BXFX_TILE * J.shape[r - 1]) / 4 + 1, 1, copy_tiles, &T);
      return;
    }
  }
  size_t rows = 1;
  for (int d = 0; d < r - 1; d++) rows *= (size_t)J.shape[d];
  /* A few long unit-stride rows (a contiguous block: repeat_dim,
   * slice_assign, cat along dim 0, the copies in front of in-place ops;
   * reversed: a flip of every dim) would be one memcpy per thread at
   * most: split each row instead. */
  if (rows < 4 && J.ds[r - 1] == 1 && (J.ss[r - 1] == 1 || J.ss[r - 1] == -1) &&
      (size_t)J.shape[r - 1] * esize >= BXFX_FLAT_MIN) {
    const bool rev = J.ss[r - 1] == -1;
    const size_t bytes = (size_t)J.shape[r - 1] * esize;
    for (size_t row = 0; row < rows; row++) {
      int64_t doff = 0, soff = 0;
      size_t rem = row;
      for (int d = r - 2; d >= 0; d--) {
        int64_t i = (int64_t)(rem % (size_t)J.shape[d]);
        rem /= (size_t)J.shape[d];
        doff += i * J.ds[d];
        soff += i * J.ss[d];
      }
      const char *src = J.src + soff * (int64_t)esize;
      struct flat_job F = { J.dst + doff * (int64_t)esize, rev ? src - (bytes - esize) : src, esize, bytes, rev,
                            J.stream };
      bxr_pool_for(bytes, 1, 4096, copy_flat, &F);
    }
    return;
  }
  /* cost per row: its length (in elements), so small copies stay inline */
  size_t per_row = (size_t)J.shape[r - 1] / 4 + 1;
  bxr_pool_for(rows, per_row, 1, copy_rows, &J);
}

/* Copies t (any layout) into the contiguous buffer dst. */
static void copy_to_contig(const bext_tensor *t, void *dst) {
  int64_t cs[BEXT_MAX_RANK];
  bxr_contiguous_strides(t->rank, t->shape, cs);
  bxfx_copy_strided(dst, cs, bxr_data(t), t->strides, t->rank, t->shape, bext_dtype_size(t->dtype));
}

/* ------------------------------------------------------------ creation */
struct fill_job {
  char *dst;
  size_t es;
  uint64_t pat;             /* fills: the element replicated to 8 bytes */
  bool stream;              /* fills: zeros past bxfx_stream_min (fill_chunk) */
  bool iota;                /* arange of exact integers (arange_exact) */
  int64_t istart, istep;
  const struct bxr_op *op;
  bext_dtype dt;
};

/* Every width through fill8's 32-byte stores (the 4- and 2-byte fills
 * went through glibc's wmemset, the 8-byte ones a scalar loop: all ran
 * about as fast as these).  Streamed only for zeros of bxfx_stream_min bytes or more:
 * on the matrix's EPYC a streamed zero fill of 32 MiB took 0.40 ms
 * against 0.8 ms stored, while streamed non-zero fills of 16 and 32 MiB
 * (re-filled, so cached) ran 1.3-2.6x slower than plain stores and tied
 * them at 64-128 MiB (two threads, tests/bench/matrix.c's sizes). */
static void fill_chunk(void *ctx, size_t b, size_t e) {
  const struct fill_job *J = ctx;
  bxfx_kern()->fill8(J->dst + b * J->es, (e - b) * J->es, J->pat, J->stream);
  if (J->stream) bxfx_stream_fence();
}

/* The fill pattern: one element stored by the reference's rule, repeated
 * to 8 bytes. */
static uint64_t fill_pattern(bext_dtype dt, size_t es, double v) {
  unsigned char e[8] = { 0 }, p[8];
  bxr_store_f64(e, dt, 0, v);
  for (size_t k = 0; k < 8; k++) p[k] = e[k % es];
  uint64_t r;
  memcpy(&r, p, 8);
  return r;
}

static void random_chunk(void *ctx, size_t b, size_t e) {
  const struct fill_job *J = ctx;
  const struct bxr_op *op = J->op;
  double p0 = op->sc[0].f, p1 = op->sc[1].f;
  uint64_t seed = op->at.seed;
  if (op->code == BXR_OP_RANDOM_UNIFORM)
    for (size_t i = b; i < e; i++)
      bxr_store_f64(J->dst, J->dt, (int64_t)i, p0 + (p1 - p0) * bxr_rng_uniform(seed, i));
  else {
    /* Normals a block at a time through the runtime's vectorized
     * generator (the same values as bxr_rng_normal), then scaled and
     * stored element by element as the other backends store them. */
    double z[256];
    for (size_t i = b; i < e; i += 256) {
      size_t m = e - i < 256 ? e - i : 256;
      bxr_rng_normal_block(seed, i, m, z);
      if (J->dt == BEXT_F32)
        for (size_t k = 0; k < m; k++) ((float *)(void *)J->dst)[i + k] = (float)(p0 + p1 * z[k]);
      else if (J->dt == BEXT_F64)
        for (size_t k = 0; k < m; k++) ((double *)(void *)J->dst)[i + k] = p0 + p1 * z[k];
      else if (J->dt == BEXT_F16 || J->dt == BEXT_BF16) {
        /* the store's rule (round to f32, then to the half) by the
         * conversion kernels, bit for bit bxk_f32_to_f16/_bf16 */
        float f[256];
        for (size_t k = 0; k < m; k++) f[k] = (float)(p0 + p1 * z[k]);
        uint16_t *o = (uint16_t *)(void *)J->dst + i;
        if (J->dt == BEXT_F16) bxfx_kern()->f32_to_f16(f, o, m);
        else bxfx_kern()->f32_to_bf16(f, o, m);
      } else
        for (size_t k = 0; k < m; k++) bxr_store_f64(J->dst, J->dt, (int64_t)(i + k), p0 + p1 * z[k]);
    }
  }
}

/* arange: element i is start + i * step stored by bxr_store_f64's rules;
 * f32, f64, i32 and i64 through the kernels (the same conversions, in
 * lanes), i32, i64 and f32 by integer adds when arange_exact allows (f64
 * already runs at copy speed), the rest element by element.  Never
 * streamed: staged through L1 and streamed out, the matrix's 16 MiB f32
 * arange ran up to 2x slower than with plain stores (see fill_chunk). */
static void arange_chunk(void *ctx, size_t b, size_t e) {
  const struct fill_job *J = ctx;
  const struct bxfx_kernels *K = bxfx_kern();
  const double start = J->op->sc[0].f, step = J->op->sc[2].f;
  const size_t n = e - b;
  switch (J->dt) {
  case BEXT_F32:
    if (J->iota) K->iota_f32((float *)(void *)J->dst + b, n, J->istart, J->istep, (int64_t)b);
    else K->arange_f32((float *)(void *)J->dst + b, n, start, step, (int64_t)b);
    break;
  case BEXT_F64: K->arange_f64((double *)(void *)J->dst + b, n, start, step, (int64_t)b); break;
  case BEXT_I32:
    if (J->iota) K->iota_i32((int32_t *)(void *)J->dst + b, n, J->istart, J->istep, (int64_t)b);
    else K->arange_i32((int32_t *)(void *)J->dst + b, n, start, step, (int64_t)b);
    break;
  case BEXT_I64:
    if (J->iota) K->iota_i64((int64_t *)(void *)J->dst + b, n, J->istart, J->istep, (int64_t)b);
    else K->arange_i64((int64_t *)(void *)J->dst + b, n, start, step, (int64_t)b);
    break;
  default:
    for (size_t i = b; i < e; i++) bxr_store_f64(J->dst, J->dt, (int64_t)i, start + (double)(int64_t)i * step);
    break;
  }
}

/* True when start + (double)i * step is an exact integer of magnitude
 * below 2^52 for every i < n, and within [lo, hi]: start and step
 * integers below 2^52, and both ends (the values are linear in i) and
 * |step| * (n - 1) below 2^52.  Then each product and sum of the f64 rule
 * is exact, its conversion exact, and integer adds give the same bits. */
static bool arange_exact(double start, double step, size_t n, double lo, double hi) {
  const double lim = 4503599627370496.0;   /* 2^52 */
  if (!(fabs(start) < lim && fabs(step) < lim) || start != (double)(int64_t)start || step != (double)(int64_t)step)
    return false;
  double m = (double)(n - 1);
  if (!(fabs(step) * m < lim)) return false;   /* rounding up never hides one at or past 2^52 */
  int64_t last = (int64_t)start + (int64_t)step * (int64_t)(n - 1);   /* both below 2^52: exact */
  double l = (double)last;
  return fabs(l) < lim && start >= lo && start <= hi && l >= lo && l <= hi;
}

bext_tensor *bxfx_exec_create(struct bxr_op *op) {
  bext_tensor *out = bxr_op_new_output(op);
  if (!out) return NULL;
  size_t n = (size_t)bxr_numel(out->rank, out->shape);
  struct fill_job J = { .dst = bxr_data(out), .es = bext_dtype_size(out->dtype), .op = op,
                        .dt = out->dtype };
  switch (op->code) {
  case BXR_OP_EMPTY:
    /* Contents are unspecified; small ones are zeroed so results never
     * depend on stale memory. */
    if (n * J.es <= 65536) memset(J.dst, 0, n * J.es);
    break;
  case BXR_OP_ZEROS: case BXR_OP_ONES: case BXR_OP_FULL: {
    double v = op->code == BXR_OP_ZEROS ? 0.0 : op->code == BXR_OP_ONES ? 1.0 : op->sc[0].f;
    J.pat = fill_pattern(out->dtype, J.es, v);
    J.stream = J.pat == 0 && bxfx_streams(n * J.es, 0);
    bxr_pool_for(n, 1, 64, fill_chunk, &J);
    break;
  }
  case BXR_OP_ARANGE:
    if (n && (J.dt == BEXT_I32 || J.dt == BEXT_I64 || J.dt == BEXT_F32)) {
      /* f32 from i32 lanes: the values in i32's range */
      double lo = J.dt == BEXT_I64 ? -9223372036854775808.0 : -2147483648.0;
      double hi = J.dt == BEXT_I64 ? 9223372036854775807.0 : 2147483647.0;
      J.iota = arange_exact(op->sc[0].f, op->sc[2].f, n, lo, hi);
      if (J.iota) J.istart = (int64_t)op->sc[0].f, J.istep = (int64_t)op->sc[2].f;
    }
    bxr_pool_for(n, J.iota ? 1 : 2, 64, arange_chunk, &J);
    break;
  default: /* RANDOM_UNIFORM, RANDOM_NORMAL: counter-based, so threads agree */
    bxr_pool_for(n, 16, 64, random_chunk, &J);
    break;
  }
  return out;
}

/* -------------------------------------------------------------- layout */

bext_tensor *bxfx_exec_layout(struct bxr_op *op) {
  bext_tensor *t = op->in[0];
  const bext_attrs *at = &op->at;
  int64_t st[BEXT_MAX_RANK];
  size_t es = bext_dtype_size(op->out.dtype);
  switch (op->code) {
  case BXR_OP_RESHAPE: case BXR_OP_SWAP_DIMS: case BXR_OP_PERMUTE: case BXR_OP_EXPAND:
  case BXR_OP_SLICE: case BXR_OP_NARROW: {
    bext_tensor *v;
    if (bxr_layout_view(op, &v)) return v;
    /* a reshape the strides cannot express: copy */
    bext_tensor *out = bxr_op_new_output(op);
    if (out) copy_to_contig(t, bxr_data(out));
    return out;
  }
  case BXR_OP_FLIP: {
    bext_tensor *out = bxr_op_new_output(op);
    if (!out) return NULL;
    if (bxr_numel(t->rank, t->shape) == 0) return out;
    const char *src = bxr_data(t);
    memcpy(st, t->strides, sizeof st);
    for (int i = 0; i < at->ndims; i++) {
      int d = at->dims[i];
      src += (t->shape[d] - 1) * t->strides[d] * (int64_t)es;
      st[d] = -t->strides[d];
    }
    int64_t cs[BEXT_MAX_RANK];
    bxr_contiguous_strides(out->rank, out->shape, cs);
    bxfx_copy_strided(bxr_data(out), cs, src, st, t->rank, t->shape, es);
    return out;
  }
  case BXR_OP_SLICE_ASSIGN: {
    bext_tensor *val = op->in[1];
    bext_tensor *out = bxfx_output(op, 1);
    if (!out) return NULL;
    if (out != t) copy_to_contig(t, bxr_data(out));
    char *dst = bxr_data(out);
    for (int d = 0; d < at->nranges; d++)
      if (val->shape[d] > 0) dst += at->start[d] * out->strides[d] * (int64_t)es;
    bxfx_copy_strided(dst, out->strides, bxr_data(val), val->strides, val->rank, val->shape, es);
    return out;
  }
  case BXR_OP_CAT: {
    bext_tensor *out = bxr_op_new_output(op);
    if (!out) return NULL;
    int64_t pos = 0;
    for (int k = 0; k < op->n_in; k++) {
      bext_tensor *p = op->in[k];
      char *dst = (char *)bxr_data(out) + pos * out->strides[at->dim] * (int64_t)es;
      bxfx_copy_strided(dst, out->strides, bxr_data(p), p->strides, p->rank, p->shape, es);
      pos += p->shape[at->dim];
    }
    return out;
  }
  case BXR_OP_REPEAT_DIM: {
    bext_tensor *out = bxr_op_new_output(op);
    if (!out) return NULL;
    int64_t ext = t->shape[at->dim];
    for (int64_t r = 0; r < op->sc[0].i; r++) {
      char *dst = (char *)bxr_data(out) + r * ext * out->strides[at->dim] * (int64_t)es;
      bxfx_copy_strided(dst, out->strides, bxr_data(t), t->strides, t->rank, t->shape, es);
    }
    return out;
  }
  default:
    BXR_ASSERT(!"flex: not a layout op");
    return NULL;
  }
}
