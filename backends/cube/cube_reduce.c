/* cube_reduce.c — the cube devices' reductions (sum mean prod max_reduce
 * min_reduce argmax argmin any all) and cumsum: host halves of the
 * kernels in stdlib/cube/reduce.bext and scan.bext.  The host picks the
 * instantiation for the op and dtype, allocates the output and launches
 * one unit per output element (per line, for cumsum); the kernels read the
 * input at its own strides.  A whole-tensor reduction is the same kernel
 * over the one axis of a rank-1 view (of a contiguous copy when the input
 * is a strided view: its elements are not one arithmetic sequence). */
#include <stdio.h>

#include "cube.h"

/* Units per cube of the staged reductions (the others' cube_dim is tuned:
 * cube_tune_reduce, cube_tune_sum); sum_float's shared stack holds 64. */
#define RED_CUBE 64u
/* Float sums of fewer than RED_FEW outputs over lines longer than
 * 2 * RED_CHUNK run in two passes (parts of RED_CHUNK elements, then the
 * parts), so a whole-tensor sum uses every thread.  Both depend on the
 * shape alone, and so does the result. */
#define RED_FEW 256
#define RED_CHUNK 8192

/* The instantiation and scalars of a reduction other than a float sum on dtype dt over an
 * extent of ext elements (reduce.bext's kernels and their parameters). */
static void pick(enum bxr_opcode c, bext_dtype dt, int64_t ext, char *inst, size_t cap,
                 union bxl_scalar *div) {
  const char *d = cube_dtype_name(dt);
  bool flt = bext_dtype_kind(dt) == BEXT_KIND_FLOAT;
  switch (c) {
  case BXR_OP_SUM:
  case BXR_OP_MEAN:
    if (flt) return;   /* float_sum's */
    snprintf(inst, cap, "fold_int_%s_0", d);
    div->i64 = c == BXR_OP_MEAN ? ext : 1;
    return;
  case BXR_OP_PROD:
    if (flt) snprintf(inst, cap, "prod_float_%s", d);
    else {
      snprintf(inst, cap, "fold_int_%s_1", d);
      div->i64 = 1;
    }
    return;
  case BXR_OP_MAX_REDUCE:
  case BXR_OP_MIN_REDUCE:
    snprintf(inst, cap, "extreme_%s_%d", d, c == BXR_OP_MAX_REDUCE);
    return;
  case BXR_OP_ARGMAX:
  case BXR_OP_ARGMIN:
    snprintf(inst, cap, "arg_extreme_%s_%d", d, c == BXR_OP_ARGMAX);
    return;
  case BXR_OP_ANY:
  case BXR_OP_ALL:
    snprintf(inst, cap, "any_all_%d", c == BXR_OP_ALL);
    return;
  default:
    BXR_ASSERT(!"not a reduction");
  }
}

/* in viewed so that the reduction runs along *dim: itself, or for a
 * whole-tensor reduction a rank-1 view of it (contiguous first).  A new
 * reference, or NULL + error. */
static bext_tensor *reduced_view(struct bxr_op *op, int *dim) {
  bext_tensor *t = bxr_op_take(op, 0);
  if (!op->at.all) {
    *dim = op->at.dim;
    return t;
  }
  *dim = 0;
  t = bxr_make_contiguous(t);
  if (!t) return NULL;
  int64_t n = bxr_numel(t->rank, t->shape), one = 1;
  bext_tensor *v = bxr_tensor_view(t, 1, &n, &one, t->offset);
  bext_release(t);
  return v;
}

/* A float sum or mean of `outputs` lines of ext elements: one launch, or
 * two through an f64 tensor of parts (sum_float in reduce.bext), with
 * cube_dim units per cube.  Writes only out (and its own parts), so
 * cube_tune_dim may run it again. */
struct sum_launch {
  struct bxr_op *op;
  bext_tensor *in, *out;
  int dim;
  int64_t outputs;
};

static bool sum_run(void *ctx, uint32_t cube_dim) {
  const struct sum_launch *L = ctx;
  struct bxr_op *op = L->op;
  bext_tensor *in = L->in, *out = L->out;
  int dim = L->dim;
  int64_t ext = in->shape[dim], outputs = L->outputs;
  const char *d = cube_dtype_name(in->dtype);
  double div = op->code == BXR_OP_MEAN ? (double)ext : 1.0;
  char inst[64];
  union bxl_scalar sc[4] = {{.u64 = 0}, {.u64 = 0}, {.u64 = 0}, {.u64 = 0}};
  /* the CONTIG instantiation: unit-stride lines, the leaf loop vectorizes */
  int contig = in->strides[dim] == 1;
  if (outputs >= RED_FEW || ext <= 2 * RED_CHUNK) {
    snprintf(inst, sizeof inst, "sum_float_%s_%s_%d", d, d, contig);
    sc[0].u32 = (uint32_t)dim, sc[1].f64 = div, sc[2].u32 = 1, sc[3].u32 = (uint32_t)ext;
    struct bxr_kernel *k = cube_kernel(op->device, inst);
    bext_tensor *bind[2] = {in, out};
    return k && cube_launch(op->device, k, (uint32_t)outputs, cube_dim, bind, sc);
  }
  int64_t parts = (ext + RED_CHUNK - 1) / RED_CHUNK;
  bext_spec ps = {.dtype = BEXT_F64, .rank = 2, .shape = {outputs, parts}};
  bext_tensor *tmp = cube_alloc(op->device, &ps);
  if (!tmp) return false;
  snprintf(inst, sizeof inst, "sum_float_%s_f64_%d", d, contig);
  sc[0].u32 = (uint32_t)dim, sc[1].f64 = 1.0, sc[2].u32 = (uint32_t)parts, sc[3].u32 = RED_CHUNK;
  struct bxr_kernel *k = cube_kernel(op->device, inst);
  bext_tensor *bind[2] = {in, tmp};
  bool ok = k && cube_launch(op->device, k, (uint32_t)(outputs * parts), cube_dim, bind, sc);
  if (ok) {
    snprintf(inst, sizeof inst, "sum_float_f64_%s_1", d);   /* tmp is contiguous */
    sc[0].u32 = 1, sc[1].f64 = div, sc[2].u32 = 1, sc[3].u32 = (uint32_t)parts;
    k = cube_kernel(op->device, inst);
    bext_tensor *bind2[2] = {tmp, out};
    ok = k && cube_launch(op->device, k, (uint32_t)outputs, cube_dim, bind2, sc);
  }
  bext_release(tmp);
  return ok;
}

/* cube_dim is tuned (cube_tune_sum): each unit sums its own (line, part)
 * in the order the extent fixes, and the parts depend on the shape alone,
 * so the grouping of units changes no bit. */
static bool float_sum(struct bxr_op *op, bext_tensor *in, int dim, bext_tensor *out, int64_t outputs) {
  int64_t ext = in->shape[dim];
  bool one_pass = outputs >= RED_FEW || ext <= 2 * RED_CHUNK;
  if (one_pass && !cube_fits_loop(op, ext)) return false;   /* one unit walks a whole line */
  struct sum_launch L = {op, in, out, dim, outputs};
  char inst[64];
  snprintf(inst, sizeof inst, "sum_float_%s_%d_%d", cube_dtype_name(in->dtype), in->strides[dim] == 1, one_pass);
  uint32_t cd = cube_tune_dim(op->device, &cube_tune_sum, inst, (uint64_t)outputs, (uint64_t)ext, sum_run, &L);
  return sum_run(&L, cd);
}

/* One launch of k with a unit per output line (the other reductions,
 * cumsum): cube_dim is tuned (cube_tune_reduce), and a unit walks its
 * line alone in a fixed order, so the grouping changes no value. */
struct line_launch {
  struct bext_device *dev;
  struct bxr_kernel *k;
  uint32_t units;
  bext_tensor *bind[2];
  const union bxl_scalar *sc;
};

static bool line_run(void *ctx, uint32_t cube_dim) {
  const struct line_launch *L = ctx;
  return cube_launch(L->dev, L->k, L->units, cube_dim, L->bind, L->sc);
}

static bool line_launch(struct bxr_op *op, struct bxr_kernel *k, const char *inst, bext_tensor *in,
                        bext_tensor *out, uint32_t units, int64_t ext, const union bxl_scalar *sc) {
  struct line_launch L = {op->device, k, units, {in, out}, sc};
  uint32_t cd = cube_tune_dim(op->device, &cube_tune_reduce, inst, units, (uint64_t)ext, line_run, &L);
  return line_run(&L, cd);
}

/* A whole-tensor reduction (in: a contiguous rank-1 view) on a device
 * whose loops stop early (cube_loop_max; llvmpipe: 65279) runs in two
 * stages where its fold is exact in pieces (integer sum, mean and prod,
 * which wrap alike in any grouping; max and min; any and all): the kernel
 * k over a [parts, chunk] view and a [1, rest] view of the tail into a
 * tensor of parts + 1 partials, then over the partials (a mean divides
 * there only).  Argmax/argmin and float products (f64 accumulation) are
 * not split: they stay refused by name.  The split depends on the shape
 * and the limit alone. */
static bool staged(struct bxr_op *op, struct bxr_kernel *k, bext_tensor *in, bext_tensor *out, union bxl_scalar div) {
  /* half the limit: a margin, and still few parts */
  int64_t n = in->shape[0], chunk = cube_loop_max(op->device) / 2, parts = n / chunk, rest = n - parts * chunk;
  if (!cube_fits_loop(op, parts + (rest > 0))) return false;
  bext_spec ps = {.dtype = out->dtype, .rank = 1, .shape = {parts + (rest > 0)}};
  bext_tensor *tmp = cube_alloc(op->device, &ps);
  if (!tmp) return false;
  const int64_t one = 1, lines[2] = {parts, chunk}, lstr[2] = {chunk, 1}, tail[2] = {1, rest}, tstr[2] = {rest, 1};
  bext_tensor *a = bxr_tensor_view(in, 2, lines, lstr, in->offset), *pa = bxr_tensor_view(tmp, 1, &parts, &one, 0);
  bext_tensor *b = rest ? bxr_tensor_view(in, 2, tail, tstr, in->offset + parts * chunk) : NULL;
  bext_tensor *pb = rest ? bxr_tensor_view(tmp, 1, &one, &one, parts) : NULL;
  union bxl_scalar sc[2] = {{.u64 = 0}, {.u64 = 0}};
  sc[0].u32 = 1, sc[1].i64 = 1;
  bool ok = a && pa && (!rest || (b && pb));
  bext_tensor *b1[2] = {a, pa}, *b2[2] = {b, pb}, *b3[2] = {tmp, out};
  ok = ok && cube_launch(op->device, k, (uint32_t)parts, RED_CUBE, b1, sc);
  ok = ok && (!rest || cube_launch(op->device, k, 1, RED_CUBE, b2, sc));
  sc[0].u32 = 0, sc[1] = div;
  ok = ok && cube_launch(op->device, k, 1, RED_CUBE, b3, sc);
  bext_tensor *views[4] = {a, pa, b, pb};
  for (int i = 0; i < 4; i++)
    if (views[i]) bext_release(views[i]);
  bext_release(tmp);
  return ok;
}

static bool splits(const struct bxr_op *op, const bext_tensor *in, int dim) {
  uint32_t lim = cube_loop_max(op->device);
  if (!op->at.all || !lim || in->shape[dim] <= (int64_t)lim) return false;
  bool flt = bext_dtype_kind(in->dtype) == BEXT_KIND_FLOAT;
  switch (op->code) {
  case BXR_OP_SUM: case BXR_OP_MEAN: case BXR_OP_PROD: return !flt;
  case BXR_OP_MAX_REDUCE: case BXR_OP_MIN_REDUCE: case BXR_OP_ANY: case BXR_OP_ALL: return true;
  default: return false;
  }
}

bext_tensor *cube_exec_reduce(struct bxr_op *op) {
  if (!cube_check_dtypes(op) || !cube_fits_u32(op->device, op->in[0])) return NULL;
  int dim;
  bext_tensor *in = reduced_view(op, &dim);
  if (!in) return NULL;
  char inst[64];
  union bxl_scalar sc[2] = {{.u64 = 0}, {.u64 = 0}};
  sc[0].u32 = (uint32_t)dim;
  pick(op->code, in->dtype, in->shape[dim], inst, sizeof inst, &sc[1]);
  bext_tensor *out = cube_alloc(op->device, &op->out);
  int64_t units = out ? bxr_numel(out->rank, out->shape) : 0;
  bool ok = out != NULL;
  bool fsum = (op->code == BXR_OP_SUM || op->code == BXR_OP_MEAN) &&
              bext_dtype_kind(in->dtype) == BEXT_KIND_FLOAT;
  if (ok && units > 0 && fsum) {
    ok = float_sum(op, in, dim, out, units);
  } else if (ok && units > 0 && splits(op, in, dim)) {
    struct bxr_kernel *k = cube_kernel(op->device, inst);
    ok = k && staged(op, k, in, out, sc[1]);
  } else if (ok && units > 0) {
    struct bxr_kernel *k = cube_fits_loop(op, in->shape[dim]) ? cube_kernel(op->device, inst) : NULL;
    ok = k && line_launch(op, k, inst, in, out, (uint32_t)units, in->shape[dim], sc);
  }
  bext_release(in);
  if (ok) return out;
  if (out) bext_release(out);
  return NULL;
}

bext_tensor *cube_exec_cumsum(struct bxr_op *op) {
  if (!cube_check_dtypes(op) || !cube_fits_u32(op->device, op->in[0])) return NULL;
  const bext_tensor *in = op->in[0];
  int dim = op->at.dim;
  bext_tensor *out = cube_alloc(op->device, &op->out);
  if (!out) return NULL;
  int64_t ext = in->shape[dim], lines = ext ? bxr_numel(in->rank, in->shape) / ext : 0;
  if (lines == 0) return out;
  if (!cube_fits_loop(op, ext)) {   /* one unit scans a whole line */
    bext_release(out);
    return NULL;
  }
  char inst[64];
  snprintf(inst, sizeof inst, "cumsum_%s_%s",
           bext_dtype_kind(in->dtype) == BEXT_KIND_FLOAT ? "float" : "int", cube_dtype_name(in->dtype));
  union bxl_scalar sc[1] = {{.u64 = 0}};
  sc[0].u32 = (uint32_t)dim;
  struct bxr_kernel *k = cube_kernel(op->device, inst);
  if (k && line_launch(op, k, inst, op->in[0], out, (uint32_t)lines, ext, sc)) return out;
  bext_release(out);
  return NULL;
}
