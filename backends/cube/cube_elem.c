/* cube_elem.c — elementwise core ops on a cube device: unary, binary,
 * `_scalar` forms, comparisons, bool logic, cast, mask_where and
 * mask_fill, each a launch of a stdlib/cube/elementwise.bext kernel.
 *
 * The host picks the instantiation (kernel, dtype, op, layout), makes
 * each input a view expanded to the output's shape (stride 0 on broadcast
 * axes), converts the op's double scalars to the kernel's type the way
 * every backend stores a double (bxr_store_f64), allocates the output and
 * launches one unit per element.  It computes no element itself. */
#include <stdio.h>
#include <string.h>

#include "cube.h"

const char *cube_dtype_name(bext_dtype dt) { return bext_dtype_name(dt); }

bool cube_check_dtypes(const struct bxr_op *op) {
  for (int i = 0; i <= op->n_in; i++) {
    bext_dtype dt = i < op->n_in ? (op->in[i] ? op->in[i]->dtype : BEXT_F32) : op->out.dtype;
    if (!cube_dtype_ok(op->device, dt))
      return bxr_error("%s: `%s` on %s is not supported on this device (%s)", op->device->name, op->api,
                       bext_dtype_name(dt), cube_dtype_why(op->device));
  }
  return true;
}

bext_tensor *cube_not_yet(struct bxr_op *op) {
  bxr_error("%s: `%s` is not implemented on this device yet", op->device->name, op->api);
  return NULL;
}

union bxl_scalar cube_scalar(bext_dtype dt, double v) {
  union bxl_scalar s;
  memset(&s, 0, sizeof s);
  bxr_store_f64(&s, dt, 0, v);
  return s;
}

bext_tensor *cube_expand_to(const bext_tensor *t, int rank, const int64_t *shape) {
  int64_t st[BEXT_MAX_RANK];
  if (!bxr_broadcast_strides(t, rank, shape, st)) {
    bxr_error("cube: cannot broadcast an operand to the output's shape");
    return NULL;
  }
  return bxr_tensor_view(t, rank, shape, st, t->offset);
}

/* Inputs in[0..n) as views of op->out's shape (retained in v[]); true
 * when every one is contiguous (the `contig` instantiation). */
static bool expand_inputs(const struct bxr_op *op, int n, bext_tensor **v, bool *contig) {
  *contig = true;
  for (int i = 0; i < n; i++) {
    const bext_tensor *t = op->in[i];
    if (bxr_same_shape(t->rank, t->shape, op->out.rank, op->out.shape)) {
      bext_retain((bext_tensor *)t);
      v[i] = (bext_tensor *)t;
    } else if (!(v[i] = cube_expand_to(t, op->out.rank, op->out.shape))) {
      for (int k = 0; k < i; k++) bext_release(v[k]);
      return false;
    }
    if (!cube_fits_u32(op->device, v[i])) {
      for (int k = 0; k <= i; k++) bext_release(v[k]);
      return false;
    }
    *contig &= bxr_is_contiguous(v[i]);
  }
  return true;
}

/* One elementwise launch, as cube_tune_dim runs it: the output is fresh
 * and no operand, so running it again rewrites the same values. */
struct ew_launch {
  struct bext_device *dev;
  struct bxr_kernel *k;
  bool contig;
  uint32_t units;
  bext_tensor *b[8];
  int nb;
  const union bxl_scalar *sc;
};

static bool ew_run(void *ctx, uint32_t cube_dim) {
  const struct ew_launch *L = ctx;
  return L->contig ? cube_launch_flat(L->dev, L->k, L->units, cube_dim, (bext_tensor *const *)L->b, L->nb, L->sc)
                   : cube_launch(L->dev, L->k, L->units, cube_dim, (bext_tensor *const *)L->b, L->sc);
}

/* Allocates the output, launches inst over it with the operands v[0..n)
 * (released here) and the scalars; NULL + error on failure.  cube_dim is
 * tuned (cube_tune_elementwise): a unit computes its own element from
 * the operands' same element, so the grouping changes no value. */
static bext_tensor *launch_ew(struct bxr_op *op, const char *inst, bool contig, bext_tensor **v, int n,
                              const union bxl_scalar *sc) {
  bext_tensor *out = NULL;
  struct bxr_kernel *k = cube_kernel(op->device, inst);
  if (k) out = cube_alloc(op->device, &op->out);
  if (out) {
    /* the output has the operands' shape, which passed cube_fits_u32 */
    struct ew_launch L = {.dev = op->device, .k = k, .contig = contig, .nb = n + 1, .sc = sc,
                          .units = (uint32_t)bxr_numel(out->rank, out->shape)};
    for (int i = 0; i < n; i++) L.b[i] = v[i];
    L.b[n] = out;
    uint32_t dim = cube_tune_dim(op->device, &cube_tune_elementwise, inst, L.units, 0, ew_run, &L);
    if (!ew_run(&L, dim)) {
      bext_release(out);
      out = NULL;
    }
  }
  for (int i = 0; i < n; i++) bext_release(v[i]);
  return out;
}

static bool is_float(bext_dtype dt) { return bext_dtype_kind(dt) == BEXT_KIND_FLOAT; }

static union bxl_scalar i64_slot(double v) {
  union bxl_scalar s;
  s.i64 = bxr_f64_to_i64_sat(v);
  return s;
}

/* The comptime `op` of each kernel is the op's position in its group of
 * the op table (stdlib/cube/elementwise.bext says which group). */
static bext_tensor *unary(struct bxr_op *op) {
  bext_dtype dt = op->in[0]->dtype;
  unsigned pos = (unsigned)(op->code - BXR_OP_NEG);
  bext_tensor *v[1];
  bool contig;
  if (!expand_inputs(op, 1, v, &contig)) return NULL;
  union bxl_scalar sc[2];
  if (is_float(dt)) {
    sc[0] = cube_scalar(dt, op->code == BXR_OP_POWI ? (double)op->sc[0].i : op->sc[0].f);
    sc[1] = cube_scalar(dt, op->sc[1].f);
  } else {
    sc[0] = i64_slot(op->sc[0].f);
    sc[1] = i64_slot(op->sc[1].f);
  }
  char inst[96];
  snprintf(inst, sizeof inst, "unary_%s_%s_%u_%d", is_float(dt) ? "float" : "int", cube_dtype_name(dt), pos,
           contig);
  return launch_ew(op, inst, contig, v, 1, sc);
}

/* Operands a, b (the scalar forms bind a twice: b is not read). */
static bool two_operands(struct bxr_op *op, bool scalar, bext_tensor **v, bool *contig) {
  if (!expand_inputs(op, scalar ? 1 : 2, v, contig)) return false;
  if (scalar) {
    bext_retain(v[0]);
    v[1] = v[0];
  }
  return true;
}

static bext_tensor *binary(struct bxr_op *op, bool scalar) {
  bext_dtype dt = op->in[0]->dtype;
  unsigned pos = (unsigned)(op->code - (scalar ? BXR_OP_ADD_SCALAR : BXR_OP_ADD));
  bext_tensor *v[2];
  bool contig;
  if (!two_operands(op, scalar, v, &contig)) return NULL;
  union bxl_scalar sc[1] = {is_float(dt) ? cube_scalar(dt, op->sc[0].f) : i64_slot(op->sc[0].f)};
  char inst[96];
  snprintf(inst, sizeof inst, "binary_%s_%s_%u_%d_%d", is_float(dt) ? "float" : "int", cube_dtype_name(dt),
           pos, scalar, contig);
  return launch_ew(op, inst, contig, v, 2, sc);
}

static bext_tensor *compare(struct bxr_op *op, bool scalar) {
  bext_dtype dt = op->in[0]->dtype;
  unsigned pos = (unsigned)(op->code - (scalar ? BXR_OP_EQ_SCALAR : BXR_OP_EQ));
  bext_tensor *v[2];
  bool contig;
  if (!two_operands(op, scalar, v, &contig)) return NULL;
  char inst[96];
  if (dt == BEXT_BOOL) {
    snprintf(inst, sizeof inst, "compare_bool_%u_%d", pos, contig);
    return launch_ew(op, inst, contig, v, 2, NULL);
  }
  /* where a scalar is compared: 1 in f64 (floats), 2 in i64 (ints) */
  int domain = !scalar ? 0 : is_float(dt) ? 1 : 2;
  union bxl_scalar sc[2];
  sc[0].f64 = op->sc[0].f;
  sc[1] = i64_slot(op->sc[0].f);
  snprintf(inst, sizeof inst, "compare_%s_%u_%d_%d", cube_dtype_name(dt), pos, domain, contig);
  return launch_ew(op, inst, contig, v, 2, sc);
}

static bext_tensor *bool_logic(struct bxr_op *op) {
  bext_tensor *v[2];
  bool contig;
  bool unary_not = op->code == BXR_OP_NOT;
  if (!two_operands(op, unary_not, v, &contig)) return NULL;
  char inst[64];
  snprintf(inst, sizeof inst, "bool_logic_%u_%d", (unsigned)(op->code - BXR_OP_AND), contig);
  return launch_ew(op, inst, contig, v, 2, NULL);
}

_Static_assert(BXR_OP_MIN - BXR_OP_ADD == 7 && BXR_OP_MIN_SCALAR - BXR_OP_ADD_SCALAR == 7,
               "elementwise.bext numbers the binary group ADD..MIN 0..7");
_Static_assert(BXR_OP_POWI - BXR_OP_NEG == 19, "elementwise.bext numbers the unary group NEG..POWI 0..19");
_Static_assert(BXR_OP_LE - BXR_OP_EQ == 5 && BXR_OP_LE_SCALAR - BXR_OP_EQ_SCALAR == 5,
               "elementwise.bext numbers the comparisons EQ..LE 0..5");
_Static_assert(BXR_OP_NOT - BXR_OP_AND == 3, "elementwise.bext numbers the bool group AND..NOT 0..3");

bext_tensor *cube_exec_elementwise(struct bxr_op *op) {
  if (!cube_check_dtypes(op)) return NULL;
  enum bxr_opcode c = op->code;
  if (c >= BXR_OP_ADD && c <= BXR_OP_MIN) return binary(op, false);
  if (c >= BXR_OP_ADD_SCALAR && c <= BXR_OP_MIN_SCALAR) return binary(op, true);
  if (c >= BXR_OP_NEG && c <= BXR_OP_POWI) return unary(op);
  if (c >= BXR_OP_EQ && c <= BXR_OP_LE) return compare(op, false);
  if (c >= BXR_OP_EQ_SCALAR && c <= BXR_OP_LE_SCALAR) return compare(op, true);
  if (c >= BXR_OP_AND && c <= BXR_OP_NOT) return bool_logic(op);
  return cube_not_yet(op);
}

bext_tensor *cube_exec_cast(struct bxr_op *op) {
  if (!cube_check_dtypes(op)) return NULL;
  bext_tensor *out = cube_alloc(op->device, &op->out);
  if (!out) return NULL;
  if (!cube_copy_into(op->device, out, op->in[0], 0)) {
    bext_release(out);
    return NULL;
  }
  return out;
}

bext_tensor *cube_exec_mask(struct bxr_op *op) {
  if (!cube_check_dtypes(op)) return NULL;
  bool fill = op->code == BXR_OP_MASK_FILL;
  bext_dtype dt = op->out.dtype;
  bext_tensor *v[3];
  bool contig;
  if (!expand_inputs(op, fill ? 2 : 3, v, &contig)) return NULL;
  if (fill) {
    bext_retain(v[0]);   /* v is not read: bind a again */
    v[2] = v[0];
  }
  union bxl_scalar sc[1] = {cube_scalar(dt, fill ? op->sc[0].f : 0.0)};
  char inst[64];
  if (dt == BEXT_BOOL) snprintf(inst, sizeof inst, "mask_bool_%d_%d", fill, contig);
  else snprintf(inst, sizeof inst, "mask_%s_%d_%d", cube_dtype_name(dt), fill, contig);
  return launch_ew(op, inst, contig, v, 3, sc);
}
