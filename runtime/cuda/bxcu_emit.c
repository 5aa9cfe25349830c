/* bxcu_emit.c — one verified kernel -> CUDA C (the ABI in bxcu.h).
 *
 * The IR maps onto C almost one to one: every value becomes a const
 * variable `vN` declared where the IR defines it (C's block scoping is the
 * IR's visibility rule), locals become variables, structured control flow
 * becomes if/for/break/continue/return.  What an op *means* is never
 * written here: every op with a rule beyond plain C (integer wrapping,
 * x/0, floored rem, NaN-winning max/min, saturating casts, f16 rounding)
 * calls the function of bxk_scalar.h that the evaluator and the CPU
 * kernels use, whose text the prelude pastes in.  Only ops that are plain
 * IEEE or plain C on every path (float + - * /, comparisons, select,
 * bitwise logic, int->int and int->float conversions, libm-named math) are
 * C operators or CUDA's device math.
 *
 * f16 values live in float registers holding an f16-representable value
 * (bxk_round_f16 after every op, as bxk_scalar.h says f16 arithmetic is);
 * memory holds binary16 bits, converted on load and store.  bool is a byte
 * in memory, as on the CPU. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bxcu.h"

struct sb {
  char *p;
  size_t n, cap;
  bool oom;
};

static void sb_put(struct sb *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_put(struct sb *s, const char *fmt, ...) {
  if (s->oom) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(s->p ? s->p + s->n : NULL, s->p ? s->cap - s->n : 0, fmt, ap);
    va_end(ap);
    if (w < 0) { s->oom = true; return; }
    if (s->p && s->n + (size_t)w < s->cap) { s->n += (size_t)w; return; }
    size_t cap = s->cap ? s->cap * 2 : 4096;
    while (cap <= s->n + (size_t)w) cap *= 2;
    char *p = realloc(s->p, cap);
    if (!p) { s->oom = true; return; }
    s->p = p, s->cap = cap;
  }
}

/* ---------------------------------------------------------------- types */

/* The C type of a value in registers. */
static const char *rty(unsigned t) {
  switch (t) {
  case BXK_BOOL: return "bool";
  case BXK_U8: return "uint8_t";
  case BXK_I32: return "int32_t";
  case BXK_U32: return "uint32_t";
  case BXK_I64: return "int64_t";
  case BXK_F16: return "float"; /* an f16-representable value */
  case BXK_F32: return "float";
  case BXK_F64: return "double";
  default: return "void";
  }
}

/* The C type of an element in memory (and of a scalar parameter). */
static const char *mty(unsigned t) {
  return t == BXK_BOOL ? "uint8_t" : t == BXK_F16 ? "uint16_t" : rty(t);
}

/* bxk_scalar.h's suffix for the functions of a type: f16 math is f32's. */
static const char *sfx(unsigned t) { return t == BXK_F16 ? "f32" : bxk_type_name(t); }

/* ------------------------------------------------------------ emitting */

struct em {
  struct sb *s;
  const struct bxk_kernel *k;
  uint8_t *vt;            /* type of each value, by id */
  int depth;
};

static void ind(struct em *E) {
  for (int d = 0; d < E->depth; d++) sb_put(E->s, "  ");
}

static void lit(struct em *E, unsigned t, union bxk_lit v) {
  struct sb *s = E->s;
  if (t == BXK_BOOL) { sb_put(s, "%s", v.u ? "true" : "false"); return; }
  if (bxk_type_is_float(t)) {
    double d = v.f;
    if (d != d || d - d != 0) { /* NaN, inf: no literal spells them; the bits do */
      if (t == BXK_F64) {
        uint64_t u;
        memcpy(&u, &d, 8);
        sb_put(s, "__longlong_as_double(0x%016" PRIx64 "LL)", u);
      } else {
        float f = (float)d;
        uint32_t u;
        memcpy(&u, &f, 4);
        sb_put(s, "__uint_as_float(0x%08" PRIx32 "u)", u);
      }
    } else {
      sb_put(s, t == BXK_F64 ? "%a" : "%af", d); /* hex: exact */
    }
    return;
  }
  switch (t) { /* the literal's C type is the value's; the minima have no literal */
  case BXK_U8: sb_put(s, "(uint8_t)%" PRIu64 "u", v.u); break;
  case BXK_U32: sb_put(s, "%" PRIu64 "u", v.u); break;
  case BXK_I32: sb_put(s, v.i == INT32_MIN ? "INT32_MIN" : "%" PRId64, v.i); break;
  default: sb_put(s, v.i == INT64_MIN ? "INT64_MIN" : "%" PRId64 "LL", v.i); break;
  }
}

static void topo(struct em *E, unsigned t) {
  static const char *const names[] = {
#define BXK_X_(En, sp) #sp,
      BXK_TOPOS(BXK_X_)
#undef BXK_X_
  };
  const char *c = "xyz";
  struct sb *s = E->s;
  switch (t) {
  case BXK_TOPO_UNIT_POS_X: case BXK_TOPO_UNIT_POS_Y: case BXK_TOPO_UNIT_POS_Z:
    sb_put(s, "threadIdx.%c", c[t - BXK_TOPO_UNIT_POS_X]); break;
  case BXK_TOPO_CUBE_POS_X: case BXK_TOPO_CUBE_POS_Y: case BXK_TOPO_CUBE_POS_Z:
    sb_put(s, "blockIdx.%c", c[t - BXK_TOPO_CUBE_POS_X]); break;
  case BXK_TOPO_CUBE_DIM_X: case BXK_TOPO_CUBE_DIM_Y: case BXK_TOPO_CUBE_DIM_Z:
    sb_put(s, "blockDim.%c", c[t - BXK_TOPO_CUBE_DIM_X]); break;
  case BXK_TOPO_CUBE_COUNT_X: case BXK_TOPO_CUBE_COUNT_Y: case BXK_TOPO_CUBE_COUNT_Z:
    sb_put(s, "gridDim.%c", c[t - BXK_TOPO_CUBE_COUNT_X]); break;
  default: /* the linear and absolute ones: helpers of the prelude */
    sb_put(s, "bxcu_%s()", names[t]);
  }
}

/* A float result of type t: f16 rounds after every op. */
static void fres_open(struct em *E, unsigned t) {
  if (t == BXK_F16) sb_put(E->s, "bxk_round_f16(");
}
static void fres_close(struct em *E, unsigned t) {
  if (t == BXK_F16) sb_put(E->s, ")");
}

static void bin(struct em *E, unsigned op, unsigned t, bxk_val a, bxk_val b) {
  struct sb *s = E->s;
  const char *name = bxk_opinfo[op].name;
  static const char *const cops[] = {[BXK_OP_ADD] = "+", [BXK_OP_SUB] = "-", [BXK_OP_MUL] = "*",
                                     [BXK_OP_DIV] = "/", [BXK_OP_AND] = "&", [BXK_OP_OR] = "|",
                                     [BXK_OP_XOR] = "^", [BXK_OP_EQ] = "==", [BXK_OP_NE] = "!=",
                                     [BXK_OP_LT] = "<", [BXK_OP_LE] = "<=", [BXK_OP_GT] = ">",
                                     [BXK_OP_GE] = ">="};
  unsigned cls = bxk_opinfo[op].cls;
  if (cls == BXK_C_CMP) { /* C's float comparisons are ordered, != unordered: the IR's */
    sb_put(s, "v%u %s v%u", a, cops[op], b);
    return;
  }
  if (cls == BXK_C_LOGIC) { /* bitwise: no wrapping or rounding to care about */
    sb_put(s, "(%s)(v%u %s v%u)", rty(t), a, cops[op], b);
    return;
  }
  if (bxk_type_is_float(t)) {
    fres_open(E, t);
    if (op <= BXK_OP_DIV) sb_put(s, "v%u %s v%u", a, cops[op], b); /* IEEE */
    else if (op == BXK_OP_POW) sb_put(s, "%s(v%u, v%u)", t == BXK_F64 ? "pow" : "powf", a, b);
    else sb_put(s, "bxk_%s_%s(v%u, v%u)", name, sfx(t), a, b);
    fres_close(E, t);
    return;
  }
  sb_put(s, "bxk_%s_%s(v%u, v%u)", name, sfx(t), a, b); /* every int op: the header's */
}

/* CUDA device math names (libm's), f32 spelling with the f suffix. */
static void un(struct em *E, unsigned op, unsigned t, bxk_val a) {
  struct sb *s = E->s;
  const char *name = bxk_opinfo[op].name;
  if (!bxk_type_is_float(t)) {
    if (op == BXK_OP_NOT && t == BXK_BOOL) sb_put(s, "!v%u", a);
    else if (op == BXK_OP_NOT) sb_put(s, "(%s)~v%u", rty(t), a);
    else sb_put(s, "bxk_%s_%s(v%u)", name, sfx(t), a);
    return;
  }
  const char *f = t == BXK_F64 ? "" : "f";
  const char *one = t == BXK_F64 ? "1.0" : "1.0f";
  fres_open(E, t);
  switch (op) {
  case BXK_OP_NEG: sb_put(s, "-v%u", a); break;
  case BXK_OP_ABS: sb_put(s, "fabs%s(v%u)", f, a); break;
  case BXK_OP_SIGN: case BXK_OP_ROUND: sb_put(s, "bxk_%s_%s(v%u)", name, sfx(t), a); break;
  case BXK_OP_RSQRT: sb_put(s, "%s / sqrt%s(v%u)", one, f, a); break; /* as the LLVM lowering */
  case BXK_OP_RECIP: sb_put(s, "%s / v%u", one, a); break;
  default: sb_put(s, "%s%s(v%u)", name, f, a); break; /* exp log log1p sqrt sin cos tanh erf floor ceil trunc */
  }
  fres_close(E, t);
}

static void cast(struct em *E, unsigned to, unsigned from, bxk_val a) {
  struct sb *s = E->s;
  bool fs = bxk_type_is_float(from), ft = bxk_type_is_float(to);
  if (to == from) sb_put(s, "v%u", a);
  else if (to == BXK_BOOL) sb_put(s, "v%u != 0", a);
  else if (fs && ft) {
    if (to == BXK_F16) /* f64 -> f16 goes through f32, as the header says */
      sb_put(s, from == BXK_F64 ? "bxk_f16_to_f32(bxk_f64_to_f16(v%u))" : "bxk_round_f16(v%u)", a);
    else sb_put(s, "(%s)v%u", rty(to), a);
  } else if (fs) sb_put(s, "bxk_f64_to_%s((double)v%u)", bxk_type_name(to), a); /* saturating */
  else if (to == BXK_F16)
    sb_put(s, "bxk_f16_to_f32(bxk_%s_to_f16((%s)v%u))", bxk_type_is_signed(from) ? "i64" : "u64",
           bxk_type_is_signed(from) ? "int64_t" : "uint64_t", a);
  else sb_put(s, "(%s)v%u", rty(to), a); /* int -> float rounds, int -> int wraps */
}

/* The value of memory element `ref` (an lvalue text) of type t. */
static void mem_load(struct em *E, unsigned t, const char *ref) {
  if (t == BXK_BOOL) sb_put(E->s, "%s != 0", ref);
  else if (t == BXK_F16) sb_put(E->s, "bxk_f16_to_f32(%s)", ref);
  else sb_put(E->s, "%s", ref);
}

static void mem_store(struct em *E, unsigned t, const char *ref, bxk_val v) {
  ind(E);
  if (t == BXK_BOOL) sb_put(E->s, "%s = (uint8_t)v%u;\n", ref, v);
  else if (t == BXK_F16) sb_put(E->s, "%s = bxk_f32_to_f16(v%u);\n", ref, v);
  else sb_put(E->s, "%s = v%u;\n", ref, v);
}

static void block(struct em *E, const struct bxk_block *blk);

static void nested(struct em *E, const struct bxk_block *blk) {
  E->depth++;
  block(E, blk);
  E->depth--;
}

static void inst(struct em *E, const struct bxk_inst *i) {
  struct sb *s = E->s;
  const struct bxk_kernel *k = E->k;
  unsigned op = i->op, t = i->type, cls = bxk_opinfo[op].cls;
  unsigned at = i->arg[0] ? E->vt[i->arg[0]] : BXK_VOID;
  uint32_t ix = (uint32_t)i->imm.u;
  char ref[64];
  switch (cls) {
  case BXK_C_STORE: case BXK_C_SSTORE: {
    bool sh = cls == BXK_C_SSTORE;
    snprintf(ref, sizeof ref, sh ? "sh%u[v%u]" : "b%u.data[v%u]", ix, i->arg[0]);
    mem_store(E, sh ? k->shared[ix].elem : k->bind[ix].elem, ref, i->arg[1]);
    return;
  }
  case BXK_C_SET:
    ind(E), sb_put(s, "l%u = v%u;\n", ix, i->arg[0]);
    return;
  case BXK_C_IF:
    ind(E), sb_put(s, "if (v%u) {\n", i->arg[0]);
    nested(E, i->blk[0]);
    if (i->blk[1] && i->blk[1]->first) {
      ind(E), sb_put(s, "} else {\n");
      nested(E, i->blk[1]);
    }
    ind(E), sb_put(s, "}\n");
    return;
  case BXK_C_FOR: /* lo, hi, step are values of the enclosing block: read once */
    ind(E), sb_put(s, "for (%s v%u = v%u; v%u < v%u; v%u = bxk_add_%s(v%u, v%u)) {\n", rty(t), i->res,
                   i->arg[0], i->res, i->arg[1], i->res, sfx(t), i->res, i->arg[2]);
    E->vt[i->res] = (uint8_t)t;
    nested(E, i->blk[0]);
    ind(E), sb_put(s, "}\n");
    return;
  case BXK_C_LOOP:
    ind(E), sb_put(s, "for (;;) {\n");
    nested(E, i->blk[0]);
    ind(E), sb_put(s, "}\n");
    return;
  case BXK_C_JUMP:
    ind(E), sb_put(s, "%s;\n", bxk_opinfo[op].name);
    return;
  case BXK_C_SYNC:
    ind(E), sb_put(s, "__syncthreads();\n");
    return;
  default: break;
  }
  /* Every other op defines a value. */
  E->vt[i->res] = (uint8_t)t;
  ind(E), sb_put(s, "const %s v%u = ", rty(t), i->res);
  switch (cls) {
  case BXK_C_CONST: lit(E, t, i->imm); break;
  case BXK_C_SCALAR:
    if (t == BXK_BOOL) sb_put(s, "s%u != 0", ix);
    else if (t == BXK_F16) sb_put(s, "bxk_f16_to_f32(s%u)", ix);
    else sb_put(s, "s%u", ix);
    break;
  case BXK_C_TOPO: topo(E, ix); break;
  case BXK_C_ARITH: case BXK_C_LOGIC: case BXK_C_SHIFT: case BXK_C_CMP:
    bin(E, op, cls == BXK_C_CMP ? at : t, i->arg[0], i->arg[1]);
    break;
  case BXK_C_NUM1: case BXK_C_FLOAT1: case BXK_C_NOT: un(E, op, t, i->arg[0]); break;
  case BXK_C_SELECT: sb_put(s, "v%u ? v%u : v%u", i->arg[0], i->arg[1], i->arg[2]); break;
  case BXK_C_CAST: cast(E, t, at, i->arg[0]); break;
  case BXK_C_QUERY: sb_put(s, "b%u.%s", ix, op == BXK_OP_LEN ? "len" : "rank"); break;
  case BXK_C_AXIS: /* axis & 7: past the ABI's 8 reads a meaningless value, not memory */
    sb_put(s, "b%u.%s[v%u & 7u]", ix, op == BXK_OP_SHAPE ? "shape" : "stride", i->arg[0]);
    break;
  case BXK_C_LOAD: case BXK_C_SLOAD: {
    bool sh = cls == BXK_C_SLOAD;
    snprintf(ref, sizeof ref, sh ? "sh%u[v%u]" : "b%u.data[v%u]", ix, i->arg[0]);
    mem_load(E, sh ? k->shared[ix].elem : k->bind[ix].elem, ref);
    break;
  }
  case BXK_C_GET: sb_put(s, "l%u", ix); break;
  default: sb_put(s, "0 /* unknown op %u */", op); break; /* the verifier admits none */
  }
  sb_put(s, ";\n");
}

static void block(struct em *E, const struct bxk_block *blk) {
  for (const struct bxk_inst *i = blk ? blk->first : NULL; i; i = i->next) {
    inst(E, i);
    if (bxk_opinfo[i->op].cls == BXK_C_JUMP) break; /* the verifier saw nothing follows */
  }
}

/* The linear and absolute topology values, as the CPU ABI (bxl.h)
 * linearizes them: x fastest. */
static const char topo_helpers[] =
    "#define BXCU_TOPO_ static __device__ __forceinline__ uint32_t\n"
    "BXCU_TOPO_ bxcu_UNIT_POS(void) {\n"
    "  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);\n"
    "}\n"
    "BXCU_TOPO_ bxcu_CUBE_POS(void) {\n"
    "  return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);\n"
    "}\n"
    "BXCU_TOPO_ bxcu_CUBE_DIM(void) { return blockDim.x * blockDim.y * blockDim.z; }\n"
    "BXCU_TOPO_ bxcu_CUBE_COUNT(void) { return gridDim.x * gridDim.y * gridDim.z; }\n"
    "BXCU_TOPO_ bxcu_ABSOLUTE_POS_X(void) { return blockIdx.x * blockDim.x + threadIdx.x; }\n"
    "BXCU_TOPO_ bxcu_ABSOLUTE_POS_Y(void) { return blockIdx.y * blockDim.y + threadIdx.y; }\n"
    "BXCU_TOPO_ bxcu_ABSOLUTE_POS_Z(void) { return blockIdx.z * blockDim.z + threadIdx.z; }\n"
    "BXCU_TOPO_ bxcu_ABSOLUTE_POS(void) {\n"
    "  return bxcu_ABSOLUTE_POS_X() + gridDim.x * blockDim.x *\n"
    "         (bxcu_ABSOLUTE_POS_Y() + gridDim.y * blockDim.y * bxcu_ABSOLUTE_POS_Z());\n"
    "}\n"
    "#undef BXCU_TOPO_\n";

/* NVRTC has no libc headers: what bxk_scalar.h takes from <stdint.h>. */
static const char stdint_defs[] =
    "typedef signed char int8_t;\n"
    "typedef unsigned char uint8_t;\n"
    "typedef unsigned short uint16_t;\n"
    "typedef int int32_t;\n"
    "typedef unsigned int uint32_t;\n"
    "typedef long long int64_t;\n"
    "typedef unsigned long long uint64_t;\n"
    "#define INT32_MAX 2147483647\n"
    "#define INT32_MIN (-INT32_MAX - 1)\n"
    "#define UINT32_MAX 4294967295u\n"
    "#define INT64_MAX 9223372036854775807LL\n"
    "#define INT64_MIN (-INT64_MAX - 1)\n";

static bool is_ident(const char *n) {
  if (!n || !*n || (*n >= '0' && *n <= '9')) return false;
  for (; *n; n++)
    if (!((*n >= 'a' && *n <= 'z') || (*n >= 'A' && *n <= 'Z') || (*n >= '0' && *n <= '9') || *n == '_'))
      return false;
  return true;
}

char *bxcu_emit(const struct bxk_kernel *k, bool prelude, struct bxk_diags *ds) {
  if (!bxk_verify(k, ds)) return NULL;
  struct bxk_loc at;
  if (bxk_kernel_uses_type(k, BXK_BF16, &at)) { /* bxk_scalar.h's bf16 is not pasted in as device code yet */
    bxk_diag_add(ds, BXK_E_LOWER, at, 0, "kernel %s uses bf16, which the CUDA/HIP lowering cannot compile yet", k->name);
    return NULL;
  }
  if (!is_ident(k->name) || !strncmp(k->name, "bxcu_", 5) || !strncmp(k->name, "bxk_", 4)) {
    bxk_diag_add(ds, BXK_E_LOWER, (struct bxk_loc){0}, 0,
                 "kernel name %.60s: expected a C identifier outside bxcu_/bxk_", k->name);
    return NULL;
  }
  struct sb s = {0};
  struct em E = {.s = &s, .k = k, .vt = calloc((size_t)k->nval + 1, 1)};
  if (!E.vt) goto oom;
  if (prelude) {
    sb_put(&s, "/* CUDA C (HIP C to hiprtc) of kernel %s, emitted by bext (runtime/cuda/bxcu_emit.c). */\n", k->name);
    sb_put(&s, "%s\n/* bxk_scalar.h, verbatim */\n%s\n%s\n", stdint_defs, bxcu_scalar_src, topo_helpers);
  }
  for (uint32_t j = 0; j < k->nbind; j++) /* the layout of struct bxl_binding */
    sb_put(&s, "struct bxcu_bind%u { %s%s *data; uint32_t len, rank; uint32_t shape[8], stride[8]; };\n", j,
           k->bind[j].mut ? "" : "const ", mty(k->bind[j].elem));
  sb_put(&s, "\nextern \"C\" __global__ void %s(", k->name);
  for (uint32_t j = 0; j < k->nbind; j++) sb_put(&s, "%sstruct bxcu_bind%u b%u", j ? ", " : "", j, j);
  for (uint32_t j = 0; j < k->nscalar; j++)
    sb_put(&s, "%s%s s%u", j || k->nbind ? ", " : "", mty(k->scalar[j]), j);
  sb_put(&s, ") {\n");
  E.depth = 1;
  for (uint32_t j = 0; j < k->nshared; j++)
    sb_put(&s, "  __shared__ %s sh%u[%u];\n", mty(k->shared[j].elem), j, k->shared[j].count);
  for (uint32_t j = 0; j < k->nlocal; j++) /* locals start at zero in every unit */
    sb_put(&s, "  %s l%u = 0;\n", rty(k->local[j]), j);
  block(&E, &k->body);
  sb_put(&s, "}\n");
  free(E.vt);
  if (s.oom) goto oom;
  return s.p;
oom:
  free(E.vt);
  free(s.p);
  bxk_diag_add(ds, BXK_E_OOM, (struct bxk_loc){0}, 0, "out of memory emitting CUDA C for %s", k->name);
  return NULL;
}
