/* bxl_lower.c — one verified kernel -> one LLVM function with the kernel
 * ABI of bxl.h.
 *
 * Two functions per kernel: NAME.unit runs the body for one unit
 * (internal, alwaysinline; `return` is its `ret`), and NAME loops over the
 * units of the call.  Inlined into both copies of the unit loop (1-D and
 * 3-D, see bxl.h), the body's topology values become the loop counter plus
 * loop invariants in the 1-D copy, which is what lets O3 vectorize it.
 * A kernel with top-level sync_cube gets one unit function per phase
 * instead ("phases" below).
 *
 * Every op follows bxk_scalar.h exactly (tests/kir/test_llvm_jit.c checks
 * element by element): integer division and rem guard 0 and -1 with
 * selects, rem is floored, max/min are compare+select with NaN winning,
 * float->int casts are llvm.fpto[su]i.sat, f16 and bf16 math runs in f32.
 * f16 values are LLVM `half`; bf16 values are their i16 bits (LLVM's
 * `bfloat` conversions are not the header's: its NaN rule differs, and
 * x86-64 without AVX512-BF16 calls a runtime helper), widened by a shift
 * and narrowed with bxk_f32_to_bf16's rounding written out in integer ops,
 * which vectorize.
 * Reads of the ABI structs (bindings, scalars, grid) carry
 * !invariant.load: they cannot change during a call, and saying so lets
 * LICM hoist them out of the unit loop past the kernel's own stores. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bxk_scalar.h"
#include "bxl_internal.h"

struct lw {
  struct bxl_cg *cg;
  const struct bxk_kernel *k;
  LLVMBuilderRef b;
  LLVMValueRef fn, entry_term;          /* allocas go before entry_term */
  LLVMValueRef pb, ps, pg, psh, u, ux, uy, uz;  /* unit function parameters */
  LLVMValueRef pspill;                   /* phased kernels: this unit's spill record */
  bool phased;                           /* the body has top-level sync_cube */
  LLVMValueRef *val;                     /* by value id */
  LLVMValueRef *local;                   /* allocas */
  uint32_t *shoff;                       /* byte offset of each shared array */
  struct { LLVMBasicBlockRef cont, brk; } loops[66];
  int nloops;
  LLVMTypeRef i1, i8, i16, i32, i64, f16, f32, f64, ptr, voidt, bindt;
  unsigned invariant_kind;
  const struct bxk_inst *elide;          /* an `if` lowered as its then-block (guard_of) */
  bool ok;
};

static LLVMTypeRef lty(struct lw *L, unsigned t) {
  switch (t) {
  case BXK_BOOL: return L->i1;
  case BXK_U8: return L->i8;
  case BXK_I32: case BXK_U32: return L->i32;
  case BXK_I64: return L->i64;
  case BXK_F16: return L->f16;
  case BXK_BF16: return L->i16;  /* the bits */
  case BXK_F32: return L->f32;
  case BXK_F64: return L->f64;
  default: return L->voidt;
  }
}

/* In memory bool is a byte. */
static LLVMTypeRef mty(struct lw *L, unsigned t) { return t == BXK_BOOL ? L->i8 : lty(L, t); }

static void fail(struct lw *L, const struct bxk_inst *i, const char *msg) {
  L->ok = false;
  bxk_diag_add(L->cg->ds, BXK_E_LOWER, i ? i->loc : (struct bxk_loc){0}, i ? i->res : 0, "%s", msg);
}

static LLVMValueRef inv_load(struct lw *L, LLVMTypeRef t, LLVMValueRef p, const char *name) {
  LLVMValueRef v = LLVMBuildLoad2(L->b, t, p, name);
  LLVMSetMetadata(v, L->invariant_kind,
                  LLVMMetadataAsValue(L->cg->ctx, LLVMMDNodeInContext2(L->cg->ctx, NULL, 0)));
  return v;
}

static LLVMValueRef c32(struct lw *L, uint32_t v) { return LLVMConstInt(L->i32, v, 0); }

static LLVMValueRef call_fn(struct lw *L, const char *name, LLVMTypeRef rt, LLVMValueRef *args,
                            unsigned n, LLVMTypeRef *ats) {
  LLVMTypeRef ft = LLVMFunctionType(rt, ats, n, 0);
  LLVMValueRef f = LLVMGetNamedFunction(L->cg->mod, name);
  if (!f) f = LLVMAddFunction(L->cg->mod, name, ft);
  return LLVMBuildCall2(L->b, ft, f, args, n, "");
}

/* llvm.NAME.<type> */
static LLVMValueRef intrin(struct lw *L, const char *name, LLVMTypeRef *tys, unsigned ntys,
                           LLVMValueRef *args, unsigned n) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMValueRef f = LLVMGetIntrinsicDeclaration(L->cg->mod, id, tys, ntys);
  LLVMTypeRef ft = LLVMIntrinsicGetType(L->cg->ctx, id, tys, ntys);
  return LLVMBuildCall2(L->b, ft, f, args, n, "");
}

static LLVMValueRef intrin1(struct lw *L, const char *name, LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(x);
  return intrin(L, name, &t, 1, &x, 1);
}

/* Declares (once) the vector function vname, `<lanes x t>(<lanes x t> x n)`,
 * and keeps it for the vectorizer (bxl_cg_finish puts it in
 * llvm.compiler.used).  False when out of memory. */
static bool declare_vector_fn(struct lw *L, const char *vname, LLVMTypeRef t, unsigned lanes, unsigned n) {
  struct bxl_cg *cg = L->cg;
  if (LLVMGetNamedFunction(cg->mod, vname)) return true;
  LLVMTypeRef vt = LLVMVectorType(t, lanes), ats[2] = {vt, vt};
  LLVMValueRef f = LLVMAddFunction(cg->mod, vname, LLVMFunctionType(vt, ats, n, 0));
  if (cg->nused == cg->capused) {
    unsigned cap = cg->capused ? 2 * cg->capused : 16;
    LLVMValueRef *u = realloc(cg->used, cap * sizeof *u);
    if (!u) return false;
    cg->used = u, cg->capused = cap;
  }
  cg->used[cg->nused++] = f;
  return true;
}

/* A call of the libm function f64name (its f32 sibling for f32 operands:
 * f16 math is computed in f32) on n operands.  On x86-64 the call names its
 * libmvec variants for the target's ISAs (BXL_MVEC_ISAS), e.g.
 * `_ZGVdN8v_erff(_ZGVdN8v_erff)`, so a vectorized loop calls them. */
static LLVMValueRef mathcall(struct lw *L, const char *f64name, LLVMValueRef *x, unsigned n) {
  LLVMTypeRef t = LLVMTypeOf(x[0]), ats[2] = {t, t};
  bool f32 = t == L->f32;
  char name[32];
  snprintf(name, sizeof name, "%s%s", f64name, f32 ? "f" : "");
  LLVMValueRef call = call_fn(L, name, t, x, n, ats);
  LLVMContextRef ctx = L->cg->ctx;
  /* On the declaration: the function neither reads nor writes memory
   * (the IR never looks at errno), returns, throws nothing and is safe on
   * any operand, so the vectorizer may call it for masked-off lanes of a
   * guarded body (`if ABSOLUTE_POS < len`) instead of keeping the loop
   * scalar.  memory(none) is MemoryEffects' encoding 0. */
  LLVMValueRef fn = LLVMGetNamedFunction(L->cg->mod, name);
  static const char *const fn_attrs[] = {"nounwind", "willreturn", "speculatable", "nosync", "memory"};
  for (size_t j = 0; j < sizeof fn_attrs / sizeof *fn_attrs; j++)
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(ctx, LLVMGetEnumAttributeKindForName(fn_attrs[j], strlen(fn_attrs[j])), 0));
  bool vec = false;
#define BXL_X_(fn, arity) vec |= !strcmp(f64name, #fn) && arity == n;
  BXL_MVEC_FNS(BXL_X_)
#undef BXL_X_
  if (!vec || !L->cg->mvec) return call;
  char variants[256] = "", vname[48];
  size_t used = 0;
#define BXL_X_(bit, isa, lanes32, lanes64)                                                              \
  if (L->cg->mvec & (bit)) {                                                                            \
    unsigned lanes = f32 ? (lanes32) : (lanes64);                                                       \
    bxl_mvec_name(vname, sizeof vname, isa, lanes, n, name);                                            \
    if (!declare_vector_fn(L, vname, t, lanes, n)) return call; /* out of memory: stay scalar */       \
    used += (size_t)snprintf(variants + used, sizeof variants - used, "%s%s(%s)", used ? "," : "", vname, vname); \
  }
  BXL_MVEC_ISAS(BXL_X_)
#undef BXL_X_
  static const char key[] = "vector-function-abi-variant";
  LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex,
                           LLVMCreateStringAttribute(ctx, key, sizeof key - 1, variants, (unsigned)used));
  return call;
}

static LLVMValueRef math1(struct lw *L, const char *f64name, LLVMValueRef x) { return mathcall(L, f64name, &x, 1); }

/* ------------------------------------------------------------ topology */

static LLVMValueRef grid(struct lw *L, int field) {
  LLVMValueRef p = LLVMBuildGEP2(L->b, L->i32, L->pg, (LLVMValueRef[]){c32(L, (uint32_t)field)}, 1, "");
  return inv_load(L, L->i32, p, "grid");
}

static LLVMValueRef topo(struct lw *L, unsigned t) {
  LLVMBuilderRef b = L->b;
  switch (t) {
  case BXK_TOPO_UNIT_POS: return L->u;
  case BXK_TOPO_UNIT_POS_X: return L->ux;
  case BXK_TOPO_UNIT_POS_Y: return L->uy;
  case BXK_TOPO_UNIT_POS_Z: return L->uz;
  case BXK_TOPO_CUBE_COUNT_X: case BXK_TOPO_CUBE_COUNT_Y: case BXK_TOPO_CUBE_COUNT_Z:
    return grid(L, (int)(t - BXK_TOPO_CUBE_COUNT_X));
  case BXK_TOPO_CUBE_DIM_X: case BXK_TOPO_CUBE_DIM_Y: case BXK_TOPO_CUBE_DIM_Z:
    return grid(L, 3 + (int)(t - BXK_TOPO_CUBE_DIM_X));
  case BXK_TOPO_CUBE_POS_X: case BXK_TOPO_CUBE_POS_Y: case BXK_TOPO_CUBE_POS_Z:
    return grid(L, 6 + (int)(t - BXK_TOPO_CUBE_POS_X));
  case BXK_TOPO_CUBE_COUNT:
    return LLVMBuildMul(b, LLVMBuildMul(b, grid(L, 0), grid(L, 1), ""), grid(L, 2), "");
  case BXK_TOPO_CUBE_DIM:
    return LLVMBuildMul(b, LLVMBuildMul(b, grid(L, 3), grid(L, 4), ""), grid(L, 5), "");
  case BXK_TOPO_CUBE_POS: {  /* x + y*cx + z*cx*cy */
    LLVMValueRef cx = grid(L, 0), cxy = LLVMBuildMul(b, cx, grid(L, 1), "");
    return LLVMBuildAdd(b, grid(L, 6),
                        LLVMBuildAdd(b, LLVMBuildMul(b, grid(L, 7), cx, ""),
                                     LLVMBuildMul(b, grid(L, 8), cxy, ""), ""), "");
  }
  case BXK_TOPO_ABSOLUTE_POS_X: case BXK_TOPO_ABSOLUTE_POS_Y: case BXK_TOPO_ABSOLUTE_POS_Z: {
    int d = (int)(t - BXK_TOPO_ABSOLUTE_POS_X);
    LLVMValueRef up = d == 0 ? L->ux : d == 1 ? L->uy : L->uz;
    return LLVMBuildAdd(b, LLVMBuildMul(b, grid(L, 6 + d), grid(L, 3 + d), ""), up, "");
  }
  case BXK_TOPO_ABSOLUTE_POS: {  /* linear over the whole grid, x fastest */
    LLVMValueRef w = LLVMBuildMul(b, grid(L, 0), grid(L, 3), "");
    LLVMValueRef h = LLVMBuildMul(b, grid(L, 1), grid(L, 4), "");
    LLVMValueRef ax = topo(L, BXK_TOPO_ABSOLUTE_POS_X), ay = topo(L, BXK_TOPO_ABSOLUTE_POS_Y),
                 az = topo(L, BXK_TOPO_ABSOLUTE_POS_Z);
    return LLVMBuildAdd(b, ax, LLVMBuildMul(b, w, LLVMBuildAdd(b, ay, LLVMBuildMul(b, h, az, ""), ""), ""), "");
  }
  default: return c32(L, 0);
  }
}

/* ---------------------------------------------------------- bindings */

static LLVMValueRef bind_field(struct lw *L, uint32_t j, unsigned field, LLVMValueRef sub) {
  LLVMValueRef idx[3] = {c32(L, j), c32(L, field), sub};
  LLVMValueRef p = LLVMBuildGEP2(L->b, L->bindt, L->pb, idx, sub ? 3 : 2, "");
  return inv_load(L, field == 0 ? L->ptr : L->i32, p, field == 0 ? "data" : "");
}

static LLVMValueRef elem_ptr(struct lw *L, LLVMTypeRef et, LLVMValueRef base, LLVMValueRef index) {
  LLVMValueRef i = LLVMBuildZExt(L->b, index, L->i64, "");
  return LLVMBuildGEP2(L->b, et, base, &i, 1, "");
}

static LLVMValueRef mem_load(struct lw *L, unsigned t, LLVMValueRef p) {
  LLVMValueRef v = LLVMBuildLoad2(L->b, mty(L, t), p, "");
  return t == BXK_BOOL ? LLVMBuildICmp(L->b, LLVMIntNE, v, LLVMConstInt(L->i8, 0, 0), "") : v;
}

static void mem_store(struct lw *L, unsigned t, LLVMValueRef v, LLVMValueRef p) {
  if (t == BXK_BOOL) v = LLVMBuildZExt(L->b, v, L->i8, "");
  LLVMBuildStore(L->b, v, p);
}

static LLVMValueRef shared_ptr(struct lw *L, uint32_t j) {
  LLVMValueRef off = LLVMConstInt(L->i64, L->shoff[j], 0);
  return LLVMBuildGEP2(L->b, L->i8, L->psh, &off, 1, "");
}

/* ----------------------------------------------------------- arithmetic */

static LLVMValueRef fconst(LLVMTypeRef t, double v) { return LLVMConstReal(t, v); }

/* f16 and bf16 math runs in f32 and rounds back after every op
 * (bxk_scalar.h).  A bf16 is the top half of an f32: widening is exact. */
static LLVMValueRef widen(struct lw *L, unsigned t, LLVMValueRef x) {
  if (t == BXK_BF16) {
    LLVMValueRef w = LLVMBuildShl(L->b, LLVMBuildZExt(L->b, x, L->i32, ""), c32(L, 16), "");
    return LLVMBuildBitCast(L->b, w, L->f32, "");
  }
  return t == BXK_F16 ? LLVMBuildFPExt(L->b, x, L->f32, "") : x;
}

/* f32 -> bf16 bits, bxk_f32_to_bf16 step by step: NaN keeps its top bits,
 * made quiet; everything else rounds to nearest even on the bits (a carry
 * into the exponent is right, and overflows to inf). */
static LLVMValueRef to_bf16(struct lw *L, LLVMValueRef f) {
  LLVMBuilderRef b = L->b;
  LLVMValueRef x = LLVMBuildBitCast(b, f, L->i32, "");
  LLVMValueRef hi = LLVMBuildLShr(b, x, c32(L, 16), "");
  LLVMValueRef nan = LLVMBuildICmp(b, LLVMIntUGT, LLVMBuildAnd(b, x, c32(L, 0x7fffffffu), ""),
                                   c32(L, 0x7f800000u), "");
  LLVMValueRef up = LLVMBuildAdd(b, LLVMBuildAdd(b, x, c32(L, 0x7fffu), ""),
                                 LLVMBuildAnd(b, hi, c32(L, 1), ""), "");
  LLVMValueRef r = LLVMBuildSelect(b, nan, LLVMBuildOr(b, hi, c32(L, 0x40), ""),
                                   LLVMBuildLShr(b, up, c32(L, 16), ""), "");
  return LLVMBuildTrunc(b, r, L->i16, "");
}

static LLVMValueRef narrow(struct lw *L, unsigned t, LLVMValueRef x) {
  if (t == BXK_BF16) return to_bf16(L, x);
  return t == BXK_F16 ? LLVMBuildFPTrunc(L->b, x, L->f16, "") : x;
}

static LLVMValueRef fbin(struct lw *L, unsigned op, unsigned t, LLVMValueRef x, LLVMValueRef y) {
  LLVMBuilderRef b = L->b;
  x = widen(L, t, x);
  y = widen(L, t, y);
  LLVMTypeRef wt = LLVMTypeOf(x);
  LLVMValueRef r;
  switch (op) {
  case BXK_OP_ADD: r = LLVMBuildFAdd(b, x, y, ""); break;
  case BXK_OP_SUB: r = LLVMBuildFSub(b, x, y, ""); break;
  case BXK_OP_MUL: r = LLVMBuildFMul(b, x, y, ""); break;
  case BXK_OP_DIV: r = LLVMBuildFDiv(b, x, y, ""); break;
  case BXK_OP_REM: { /* floored: r = fmod(x, y); if (r != 0 && (r < 0) != (y < 0)) r += y */
    LLVMValueRef m = LLVMBuildFRem(b, x, y, "");
    LLVMValueRef zero = fconst(wt, 0);
    LLVMValueRef nz = LLVMBuildFCmp(b, LLVMRealUNE, m, zero, "");
    LLVMValueRef diff = LLVMBuildXor(b, LLVMBuildFCmp(b, LLVMRealOLT, m, zero, ""),
                                     LLVMBuildFCmp(b, LLVMRealOLT, y, zero, ""), "");
    /* NaN: une is true but both olt false, so diff is false: m stays NaN */
    r = LLVMBuildSelect(b, LLVMBuildAnd(b, nz, diff, ""), LLVMBuildFAdd(b, m, y, ""), m, "");
    break;
  }
  case BXK_OP_MAX: case BXK_OP_MIN: { /* (x OP y || x != x) ? x : y */
    LLVMValueRef xnan = LLVMBuildFCmp(b, LLVMRealUNO, x, x, "");
    LLVMValueRef ord = LLVMBuildFCmp(b, op == BXK_OP_MAX ? LLVMRealOGT : LLVMRealOLT, x, y, "");
    r = LLVMBuildSelect(b, LLVMBuildOr(b, ord, xnan, ""), x, y, "");
    break;
  }
  case BXK_OP_POW: {
    LLVMValueRef a[2] = {x, y};
    r = mathcall(L, "pow", a, 2);
    break;
  }
  default: return NULL;
  }
  return narrow(L, t, r);
}

static LLVMValueRef ibin(struct lw *L, unsigned op, unsigned t, LLVMValueRef x, LLVMValueRef y) {
  LLVMBuilderRef b = L->b;
  LLVMTypeRef it = LLVMTypeOf(x);
  bool s = bxk_type_is_signed(t);
  LLVMValueRef zero = LLVMConstInt(it, 0, 0), one = LLVMConstInt(it, 1, 0),
               m1 = LLVMConstAllOnes(it);
  switch (op) {
  case BXK_OP_ADD: return LLVMBuildAdd(b, x, y, "");
  case BXK_OP_SUB: return LLVMBuildSub(b, x, y, "");
  case BXK_OP_MUL: return LLVMBuildMul(b, x, y, "");
  case BXK_OP_AND: return LLVMBuildAnd(b, x, y, "");
  case BXK_OP_OR: return LLVMBuildOr(b, x, y, "");
  case BXK_OP_XOR: return LLVMBuildXor(b, x, y, "");
  case BXK_OP_MIN: return LLVMBuildSelect(b, LLVMBuildICmp(b, s ? LLVMIntSLT : LLVMIntULT, x, y, ""), x, y, "");
  case BXK_OP_MAX: return LLVMBuildSelect(b, LLVMBuildICmp(b, s ? LLVMIntSGT : LLVMIntUGT, x, y, ""), x, y, "");
  case BXK_OP_POW: { /* bxk_pow_*: wrapping square-and-multiply, unrolled over
                      * the exponent's bits with selects (no branches, so the
                      * unit loop still vectorizes); signed: a negative
                      * exponent gives 1 for base 1, +-1 for base -1, else 0 */
    unsigned bits = bxk_type_bits(t);
    LLVMValueRef r = one, base = x;
    for (unsigned k = 0; k < bits; k++) {
      LLVMValueRef bit = LLVMBuildAnd(b, LLVMBuildLShr(b, y, LLVMConstInt(it, k, 0), ""), one, "");
      LLVMValueRef take = LLVMBuildICmp(b, LLVMIntNE, bit, zero, "");
      r = LLVMBuildSelect(b, take, LLVMBuildMul(b, r, base, ""), r, "");
      if (k + 1 < bits) base = LLVMBuildMul(b, base, base, "");
    }
    if (!s) return r;
    LLVMValueRef odd = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, y, one, ""), zero, "");
    LLVMValueRef neg1 = LLVMBuildSelect(b, odd, m1, one, "");
    LLVMValueRef negr = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, x, one, ""), one,
                                        LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, x, m1, ""), neg1,
                                                        zero, ""), "");
    return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, y, zero, ""), negr, r, "");
  }
  case BXK_OP_SHL: case BXK_OP_SHR: { /* amount modulo the bit width */
    LLVMValueRef n = LLVMBuildAnd(b, y, LLVMConstInt(it, bxk_type_bits(t) - 1, 0), "");
    return op == BXK_OP_SHL ? LLVMBuildShl(b, x, n, "")
           : s ? LLVMBuildAShr(b, x, n, "") : LLVMBuildLShr(b, x, n, "");
  }
  case BXK_OP_DIV: case BXK_OP_REM: {
    LLVMValueRef y0 = LLVMBuildICmp(b, LLVMIntEQ, y, zero, "");
    if (!s) { /* x / 0 = x % 0 = 0 */
      LLVMValueRef sy = LLVMBuildSelect(b, y0, one, y, "");
      LLVMValueRef q = op == BXK_OP_DIV ? LLVMBuildUDiv(b, x, sy, "") : LLVMBuildURem(b, x, sy, "");
      return LLVMBuildSelect(b, y0, zero, q, "");
    }
    /* signed: 0 and -1 are special (x/-1 = -x wrapping, x%-1 = 0) */
    LLVMValueRef ym1 = LLVMBuildICmp(b, LLVMIntEQ, y, m1, "");
    LLVMValueRef sy = LLVMBuildSelect(b, LLVMBuildOr(b, y0, ym1, ""), one, y, "");
    if (op == BXK_OP_DIV) {
      LLVMValueRef q = LLVMBuildSDiv(b, x, sy, "");
      q = LLVMBuildSelect(b, ym1, LLVMBuildSub(b, zero, x, ""), q, "");
      return LLVMBuildSelect(b, y0, zero, q, "");
    }
    LLVMValueRef r = LLVMBuildSRem(b, x, sy, ""); /* y in {0, -1}: x % 1 = 0, as wanted */
    LLVMValueRef fix = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntNE, r, zero, ""),
                                    LLVMBuildXor(b, LLVMBuildICmp(b, LLVMIntSLT, r, zero, ""),
                                                 LLVMBuildICmp(b, LLVMIntSLT, y, zero, ""), ""), "");
    return LLVMBuildSelect(b, fix, LLVMBuildAdd(b, r, y, ""), r, "");
  }
  default: return NULL;
  }
}

static LLVMValueRef cmp(struct lw *L, unsigned op, unsigned t, LLVMValueRef x, LLVMValueRef y) {
  if (t == BXK_BF16) x = widen(L, t, x), y = widen(L, t, y), t = BXK_F32; /* bits do not compare */
  if (bxk_type_is_float(t)) {
    static const LLVMRealPredicate fp[] = {LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT,
                                           LLVMRealOLE, LLVMRealOGT, LLVMRealOGE};
    return LLVMBuildFCmp(L->b, fp[op - BXK_OP_EQ], x, y, "");
  }
  bool s = bxk_type_is_signed(t);
  LLVMIntPredicate p[] = {LLVMIntEQ, LLVMIntNE, s ? LLVMIntSLT : LLVMIntULT, s ? LLVMIntSLE : LLVMIntULE,
                          s ? LLVMIntSGT : LLVMIntUGT, s ? LLVMIntSGE : LLVMIntUGE};
  return LLVMBuildICmp(L->b, p[op - BXK_OP_EQ], x, y, "");
}


static LLVMValueRef un(struct lw *L, unsigned op, unsigned t, LLVMValueRef x) {
  LLVMBuilderRef b = L->b;
  if (bxk_type_is_float(t)) {
    x = widen(L, t, x);
    LLVMTypeRef wt = LLVMTypeOf(x);
    LLVMValueRef r, one = fconst(wt, 1), zero = fconst(wt, 0);
    switch (op) {
    case BXK_OP_NEG: r = LLVMBuildFNeg(b, x, ""); break;
    case BXK_OP_ABS: r = intrin1(L, "llvm.fabs", x); break;
    case BXK_OP_SIGN:
      r = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, x, zero, ""), one,
                          LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLT, x, zero, ""),
                                          fconst(wt, -1), x, ""), "");
      break;
    case BXK_OP_EXP: r = math1(L, "exp", x); break;
    case BXK_OP_LOG: r = math1(L, "log", x); break;
    case BXK_OP_LOG1P: r = math1(L, "log1p", x); break;
    case BXK_OP_SQRT: r = intrin1(L, "llvm.sqrt", x); break;
    case BXK_OP_RSQRT: r = LLVMBuildFDiv(b, one, intrin1(L, "llvm.sqrt", x), ""); break;
    case BXK_OP_RECIP: r = LLVMBuildFDiv(b, one, x, ""); break;
    case BXK_OP_SIN: r = math1(L, "sin", x); break;
    case BXK_OP_COS: r = math1(L, "cos", x); break;
    case BXK_OP_TANH: r = math1(L, "tanh", x); break;
    case BXK_OP_ERF: r = math1(L, "erf", x); break;
    case BXK_OP_FLOOR: r = intrin1(L, "llvm.floor", x); break;
    case BXK_OP_CEIL: r = intrin1(L, "llvm.ceil", x); break;
    case BXK_OP_ROUND: r = intrin1(L, "llvm.roundeven", x); break;
    case BXK_OP_TRUNC: r = intrin1(L, "llvm.trunc", x); break;
    default: return NULL;
    }
    return narrow(L, t, r);
  }
  LLVMTypeRef it = LLVMTypeOf(x);
  LLVMValueRef zero = LLVMConstInt(it, 0, 0);
  switch (op) {
  case BXK_OP_NOT: return LLVMBuildXor(b, x, LLVMConstAllOnes(it), "");
  case BXK_OP_NEG: return LLVMBuildSub(b, zero, x, "");
  case BXK_OP_ABS:
    if (!bxk_type_is_signed(t)) return x;
    return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, x, zero, ""), LLVMBuildSub(b, zero, x, ""), x, "");
  case BXK_OP_SIGN: {
    LLVMValueRef pos = LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntNE, x, zero, ""), it, "");
    if (!bxk_type_is_signed(t)) return pos;
    return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, x, zero, ""), LLVMConstAllOnes(it), pos, "");
  }
  default: return NULL;
  }
}

static LLVMValueRef cast(struct lw *L, unsigned to, unsigned from, LLVMValueRef x) {
  LLVMBuilderRef b = L->b;
  LLVMTypeRef tt = lty(L, to);
  if (to == from) return x;
  /* bf16 as an f32 (exact); anything to bf16 goes through f32, as the
   * header's int and f64 conversions do */
  if (from == BXK_BF16) x = widen(L, from, x), from = BXK_F32;
  if (to == BXK_BF16) return narrow(L, to, cast(L, BXK_F32, from, x));
  if (to == from) return x;
  if (to == BXK_BOOL)
    return bxk_type_is_float(from) ? LLVMBuildFCmp(b, LLVMRealUNE, x, fconst(LLVMTypeOf(x), 0), "")
                                   : LLVMBuildICmp(b, LLVMIntNE, x, LLVMConstInt(LLVMTypeOf(x), 0, 0), "");
  bool fs = bxk_type_is_float(from), ft = bxk_type_is_float(to);
  if (fs && ft) {
    if (to == BXK_F16 && from == BXK_F64) x = LLVMBuildFPTrunc(b, x, L->f32, ""); /* via f32 */
    return bxk_type_bits(to) > bxk_type_bits(from) ? LLVMBuildFPExt(b, x, tt, "") : LLVMBuildFPTrunc(b, x, tt, "");
  }
  if (fs) { /* saturating, NaN -> 0: exactly llvm.fpto[su]i.sat */
    x = widen(L, from, x);
    LLVMTypeRef tys[2] = {tt, LLVMTypeOf(x)};
    return intrin(L, bxk_type_is_signed(to) ? "llvm.fptosi.sat" : "llvm.fptoui.sat", tys, 2, &x, 1);
  }
  bool s = bxk_type_is_signed(from);
  if (ft) {
    LLVMTypeRef via = to == BXK_F16 ? L->f32 : tt; /* int -> f16 through f32 */
    LLVMValueRef r = s ? LLVMBuildSIToFP(b, x, via, "") : LLVMBuildUIToFP(b, x, via, "");
    return to == BXK_F16 ? LLVMBuildFPTrunc(b, r, L->f16, "") : r;
  }
  unsigned tb = bxk_type_bits(to), fb = bxk_type_bits(from);
  if (tb == fb) return x; /* i32 <-> u32 */
  if (tb < fb) return LLVMBuildTrunc(b, x, tt, "");
  return s ? LLVMBuildSExt(b, x, tt, "") : LLVMBuildZExt(b, x, tt, "");
}

/* ------------------------------------------------------ control flow */

static bool terminated(struct lw *L) {
  return LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(L->b)) != NULL;
}

static LLVMBasicBlockRef bb(struct lw *L, const char *name) {
  return LLVMAppendBasicBlockInContext(L->cg->ctx, L->fn, name);
}

static LLVMValueRef entry_alloca(struct lw *L, LLVMTypeRef t, const char *name) {
  LLVMBuilderRef ab = LLVMCreateBuilderInContext(L->cg->ctx);
  LLVMPositionBuilderBefore(ab, L->entry_term);
  LLVMValueRef a = LLVMBuildAlloca(ab, t, name);
  LLVMDisposeBuilder(ab);
  return a;
}

static void block(struct lw *L, const struct bxk_block *blk);

static void inst(struct lw *L, const struct bxk_inst *i) {
  LLVMBuilderRef b = L->b;
  const struct bxk_kernel *k = L->k;
  unsigned op = i->op, t = i->type;
  LLVMValueRef *a = (LLVMValueRef[3]){i->arg[0] ? L->val[i->arg[0]] : NULL,
                                      i->arg[1] ? L->val[i->arg[1]] : NULL,
                                      i->arg[2] ? L->val[i->arg[2]] : NULL};
  unsigned at = i->arg[0] ? (unsigned)bxk_value_type(k, i->arg[0]) : BXK_VOID;
  LLVMValueRef r = NULL;
  switch (bxk_opinfo[op].cls) {
  case BXK_C_CONST:
    r = t == BXK_BF16 ? LLVMConstInt(L->i16, bxk_f64_to_bf16(i->imm.f), 0)
        : bxk_type_is_float(t) ? LLVMConstReal(lty(L, t), i->imm.f)
                               : LLVMConstInt(lty(L, t), i->imm.u, bxk_type_is_signed(t));
    break;
  case BXK_C_SCALAR: {
    LLVMValueRef off = LLVMConstInt(L->i64, 8 * i->imm.u, 0);
    r = inv_load(L, mty(L, t), LLVMBuildGEP2(b, L->i8, L->ps, &off, 1, ""), "");
    if (t == BXK_BOOL) r = LLVMBuildICmp(b, LLVMIntNE, r, LLVMConstInt(L->i8, 0, 0), "");
    break;
  }
  case BXK_C_TOPO: r = topo(L, (unsigned)i->imm.u); break;
  case BXK_C_ARITH: case BXK_C_LOGIC: case BXK_C_SHIFT:
    r = bxk_type_is_float(t) ? fbin(L, op, t, a[0], a[1]) : ibin(L, op, t, a[0], a[1]);
    break;
  case BXK_C_CMP: r = cmp(L, op, at, a[0], a[1]); break;
  case BXK_C_NUM1: case BXK_C_FLOAT1: case BXK_C_NOT: r = un(L, op, t, a[0]); break;
  case BXK_C_SELECT: r = LLVMBuildSelect(b, a[0], a[1], a[2], ""); break;
  case BXK_C_CAST: r = cast(L, t, at, a[0]); break;
  case BXK_C_QUERY: r = bind_field(L, (uint32_t)i->imm.u, op == BXK_OP_LEN ? 1 : 2, NULL); break;
  case BXK_C_AXIS: /* axis & 7: an axis past the ABI's 8 reads a meaningless value, not memory */
    r = bind_field(L, (uint32_t)i->imm.u, op == BXK_OP_SHAPE ? 3 : 4,
                   LLVMBuildAnd(b, a[0], c32(L, BXL_MAX_RANK - 1), ""));
    break;
  case BXK_C_LOAD: case BXK_C_STORE: {
    unsigned et = k->bind[i->imm.u].elem;
    LLVMValueRef p = elem_ptr(L, mty(L, et), bind_field(L, (uint32_t)i->imm.u, 0, NULL), a[0]);
    if (op == BXK_OP_LOAD) r = mem_load(L, et, p);
    else mem_store(L, et, a[1], p);
    break;
  }
  case BXK_C_SLOAD: case BXK_C_SSTORE: {
    unsigned et = k->shared[i->imm.u].elem;
    LLVMValueRef p = elem_ptr(L, mty(L, et), shared_ptr(L, (uint32_t)i->imm.u), a[0]);
    if (op == BXK_OP_SLOAD) r = mem_load(L, et, p);
    else mem_store(L, et, a[1], p);
    break;
  }
  case BXK_C_GET: r = mem_load(L, t, L->local[i->imm.u]); break;
  case BXK_C_SET: mem_store(L, k->local[i->imm.u], a[0], L->local[i->imm.u]); break;
  case BXK_C_IF: {
    if (i == L->elide) { /* the loop's bound already holds the guard (guard_of) */
      block(L, i->blk[0]);
      break;
    }
    LLVMBasicBlockRef th = bb(L, "then"), el = bb(L, "else"), merge = bb(L, "endif");
    LLVMBuildCondBr(b, a[0], th, el);
    LLVMPositionBuilderAtEnd(b, th);
    block(L, i->blk[0]);
    if (!terminated(L)) LLVMBuildBr(b, merge);
    LLVMPositionBuilderAtEnd(b, el);
    block(L, i->blk[1]);
    if (!terminated(L)) LLVMBuildBr(b, merge);
    LLVMPositionBuilderAtEnd(b, merge);
    break;
  }
  case BXK_C_FOR: case BXK_C_LOOP: {
    if (L->nloops >= (int)(sizeof L->loops / sizeof L->loops[0])) {
      fail(L, i, "loops nested too deep for the LLVM lowering");
      return;
    }
    bool isfor = op == BXK_OP_FOR;
    LLVMBasicBlockRef head = bb(L, "head"), body = isfor ? bb(L, "body") : head,
                      latch = isfor ? bb(L, "latch") : head, exit = bb(L, "exit");
    LLVMValueRef iv = NULL, cur = NULL;
    if (isfor) {
      iv = entry_alloca(L, lty(L, t), "iv");
      LLVMBuildStore(b, a[0], iv);
    }
    LLVMBuildBr(b, head);
    LLVMPositionBuilderAtEnd(b, head);
    if (isfor) {
      cur = LLVMBuildLoad2(b, lty(L, t), iv, "i");
      LLVMBuildCondBr(b, LLVMBuildICmp(b, bxk_type_is_signed(t) ? LLVMIntSLT : LLVMIntULT, cur, a[1], ""),
                      body, exit);
      LLVMPositionBuilderAtEnd(b, body);
      L->val[i->res] = cur;
    }
    L->loops[L->nloops].cont = latch;
    L->loops[L->nloops].brk = exit;
    L->nloops++;
    block(L, i->blk[0]);
    L->nloops--;
    if (!terminated(L)) LLVMBuildBr(b, latch);
    if (isfor) {
      LLVMPositionBuilderAtEnd(b, latch);
      LLVMBuildStore(b, LLVMBuildAdd(b, cur, a[2], ""), iv);
      LLVMBuildBr(b, head);
    }
    LLVMPositionBuilderAtEnd(b, exit);
    return;
  }
  case BXK_C_JUMP:
    if (op == BXK_OP_RETURN && L->phased) /* the unit sits out the later phases */
      LLVMBuildStore(b, LLVMConstInt(L->i8, 1, 0), L->pspill);
    if (op == BXK_OP_RETURN) LLVMBuildRetVoid(b);
    else LLVMBuildBr(b, op == BXK_OP_BREAK ? L->loops[L->nloops - 1].brk : L->loops[L->nloops - 1].cont);
    return;
  case BXK_C_SYNC: /* top-level ones split the phases and never get here */
    fail(L, i, "sync_cube inside if/for/loop: the CPU lowering runs a cube's units in phases "
               "split at top-level sync_cube only");
    return;
  }
  if (i->res) {
    if (!r) fail(L, i, "internal: an op the LLVM lowering does not know");
    L->val[i->res] = r;
  }
}

static void block(struct lw *L, const struct bxk_block *blk) {
  for (const struct bxk_inst *i = blk->first; i && L->ok; i = i->next) {
    inst(L, i);
    if (bxk_opinfo[i->op].cls == BXK_C_JUMP) break; /* the verifier saw nothing follows */
  }
}

/* ------------------------------------------------------------ phases */
/* A kernel with top-level sync_cube runs as phases: the body is cut at
 * each top-level barrier into segments, each segment becomes its own unit
 * function, and the kernel runs phase 0 for every unit of the call, then
 * phase 1, and so on, so every unit reaches a barrier before any unit
 * passes it.  What a unit carries from one phase to the next lives in its
 * spill record, one per unit in an array on the kernel's stack:
 *   byte 0          1 once the unit has returned (it sits out the rest)
 *   8 * (1 + j)     the j-th local read or written in more than one
 *                   segment (locals persist across barriers)
 *   8 * (1 + nspilled + s)   the s-th value defined at top level in one
 *                   segment and used in a later one
 * A local that only one segment touches lives in that unit function's
 * own alloca (zero at its start, as a local is when no earlier segment
 * wrote it), so LLVM keeps it in registers: a matmul's accumulator tile
 * would otherwise be loaded and stored through the record and count
 * against the slots.
 * Barriers under if/for/loop are refused (K0013, at the barrier).  The
 * verifier already guarantees a top-level barrier is reached by all units
 * or by none. */

#define BXL_MAX_SPILL 64   /* slots per unit besides the flag: locals + crossing values */

struct phases {
  uint32_t n;                    /* segments */
  const struct bxk_inst **start; /* first instruction of each segment (NULL: empty) */
  uint32_t *defseg;              /* top-level value -> segment + 1 (0: not top level) */
  uint32_t *slot;                /* crossing value -> spill slot (0: not spilled) */
  uint32_t *lslot;               /* local -> spill slot (0: one segment's own) */
  uint32_t nslots, rec;          /* slots used (flag and locals included), record bytes */
};

static void nested_sync(struct lw *L, const struct bxk_block *blk, bool top) {
  for (const struct bxk_inst *i = blk ? blk->first : NULL; i && L->ok; i = i->next) {
    if (i->op == BXK_OP_SYNC && !top) inst(L, i); /* the located refusal */
    for (int j = 0; j < 2; j++) nested_sync(L, i->blk[j], false);
  }
}

/* Marks the operands of i (and of its nested blocks) defined at top level
 * in an earlier segment than seg. */
static void uses(const struct phases *P, const struct bxk_inst *i, uint32_t seg, bool *cross) {
  for (int a = 0; a < 3; a++)
    if (i->arg[a] && P->defseg[i->arg[a]] && P->defseg[i->arg[a]] - 1 < seg) cross[i->arg[a]] = true;
  for (int j = 0; j < 2; j++)
    for (const struct bxk_inst *n = i->blk[j] ? i->blk[j]->first : NULL; n; n = n->next)
      uses(P, n, seg, cross);
}

/* Notes in lseg which segments read or write each local: 0 none yet,
 * seg + 1 only that one, UINT32_MAX more than one. */
static void local_uses(const struct bxk_inst *i, uint32_t seg, uint32_t *lseg) {
  uint8_t cls = bxk_opinfo[i->op].cls;
  if (cls == BXK_C_GET || cls == BXK_C_SET) {
    uint32_t *l = &lseg[i->imm.u];
    *l = *l == 0 || *l == seg + 1 ? seg + 1 : UINT32_MAX;
  }
  for (int j = 0; j < 2; j++)
    for (const struct bxk_inst *n = i->blk[j] ? i->blk[j]->first : NULL; n; n = n->next) local_uses(n, seg, lseg);
}

/* Splits the body; false (with K0013) when too much crosses a barrier. */
static bool plan_phases(struct lw *L, struct phases *P) {
  const struct bxk_kernel *k = L->k;
  P->n = 1;
  for (const struct bxk_inst *i = k->body.first; i; i = i->next) P->n += i->op == BXK_OP_SYNC;
  P->start = calloc(P->n, sizeof *P->start);
  P->defseg = calloc((size_t)k->nval + 1, sizeof *P->defseg);
  P->slot = calloc((size_t)k->nval + 1, sizeof *P->slot);
  P->lslot = calloc((size_t)k->nlocal + 1, sizeof *P->lslot);
  bool *cross = calloc((size_t)k->nval + 1, sizeof *cross);
  if (!P->start || !P->defseg || !P->slot || !P->lslot || !cross) {
    free(cross);
    fail(L, NULL, "out of memory planning the phases");
    return false;
  }
  uint32_t seg = 0;
  bool at_start = true;
  for (const struct bxk_inst *i = k->body.first; i; i = i->next) {
    if (i->op == BXK_OP_SYNC) {
      seg++;
      at_start = true;
      continue;
    }
    if (at_start) P->start[seg] = i, at_start = false;
    if (i->res) P->defseg[i->res] = seg + 1;
  }
  seg = 0;
  for (const struct bxk_inst *i = k->body.first; i; i = i->next) {
    if (i->op == BXK_OP_SYNC) {
      seg++;
      continue;
    }
    uses(P, i, seg, cross);
    local_uses(i, seg, P->lslot);
  }
  P->nslots = 1;
  for (uint32_t j = 0; j < k->nlocal; j++) P->lslot[j] = P->lslot[j] == UINT32_MAX ? P->nslots++ : 0;
  for (uint32_t v = 1; v <= k->nval; v++)
    if (cross[v]) P->slot[v] = P->nslots++;
  free(cross);
  if (P->nslots - 1 > BXL_MAX_SPILL) {
    char msg[200];
    snprintf(msg, sizeof msg, "%u locals and values live across sync_cube; the CPU lowering keeps "
             "at most %d per unit between phases", P->nslots - 1, BXL_MAX_SPILL);
    fail(L, NULL, msg);
    return false;
  }
  P->rec = 8 * P->nslots;
  return true;
}

static void free_phases(struct phases *P) {
  free(P->start), free(P->defseg), free(P->slot), free(P->lslot);
}

static LLVMValueRef spill_slot(struct lw *L, uint32_t slot) {
  LLVMValueRef off = LLVMConstInt(L->i64, 8ull * slot, 0);
  return LLVMBuildGEP2(L->b, L->i8, L->pspill, &off, 1, "");
}

/* ------------------------------------------------------------ functions */

static LLVMAttributeRef attr(LLVMContextRef ctx, const char *name) {
  return LLVMCreateEnumAttribute(ctx, LLVMGetEnumAttributeKindForName(name, strlen(name)), 0);
}

static LLVMAttributeRef int_attr(LLVMContextRef ctx, const char *name, uint64_t v) {
  return LLVMCreateEnumAttribute(ctx, LLVMGetEnumAttributeKindForName(name, strlen(name)), v);
}

/* What the ABI promises about the three struct arrays (bxl.h): each is
 * read only, whole and aligned for the call.  Saying so lets LLVM load a
 * binding's data pointer, length and strides once, before the unit loop,
 * even when the body reads them only under a guard (`if ABSOLUTE_POS <
 * len`); loads it cannot hoist keep the loop from vectorizing. */
static void abi_param_attrs(LLVMContextRef ctx, LLVMValueRef fn, const struct bxk_kernel *k) {
  const uint64_t bytes[3] = {(uint64_t)k->nbind * sizeof(struct bxl_binding),
                             (uint64_t)k->nscalar * sizeof(union bxl_scalar), sizeof(struct bxl_grid)};
  const uint64_t align[3] = {_Alignof(struct bxl_binding), _Alignof(union bxl_scalar), _Alignof(struct bxl_grid)};
  for (unsigned j = 0; j < 3; j++) {
    unsigned at = 1 + j; /* LLVM's index of parameter j */
    LLVMAddAttributeAtIndex(fn, at, attr(ctx, "nocapture"));
    LLVMAddAttributeAtIndex(fn, at, attr(ctx, "readonly"));
    LLVMAddAttributeAtIndex(fn, at, attr(ctx, "noalias"));
    if (!bytes[j]) continue; /* no bindings or no scalars: the pointer may be NULL */
    LLVMAddAttributeAtIndex(fn, at, int_attr(ctx, "dereferenceable", bytes[j]));
    LLVMAddAttributeAtIndex(fn, at, int_attr(ctx, "align", align[j]));
  }
}

/* The body's bounds guard, when the whole body is `if ABSOLUTE_POS <
 * bJ.len() { ... }` (no else, nothing after it; before it only the
 * topo, len and const instructions that feed the test): the `if`, with
 * *j = J.  NULL otherwise.  For such a kernel the 1-D unit loop stops at
 * the guard's bound and runs the then-block unguarded: the units past it
 * do nothing either way, and without the guard the vectorized loop needs
 * no masked loads and stores (vmaskmov, slow on AMD's cores: the GELU
 * sample ran at 0.3-0.4x of the same loop in C). */
static const struct bxk_inst *guard_of(const struct bxk_kernel *k, uint32_t *j) {
  const struct bxk_inst *last = k->body.last, *lt = NULL, *pos = NULL, *len = NULL;
  if (!last || last->op != BXK_OP_IF || (last->blk[1] && last->blk[1]->first)) return NULL;
  for (const struct bxk_inst *i = k->body.first; i != last; i = i->next) {
    if (i->op != BXK_OP_TOPO && i->op != BXK_OP_LEN && i->op != BXK_OP_CONST && i->op != BXK_OP_LT) return NULL;
    if (i->res == last->arg[0]) lt = i;
  }
  if (!lt || lt->op != BXK_OP_LT) return NULL;
  for (const struct bxk_inst *i = k->body.first; i != last; i = i->next) {
    if (i->res == lt->arg[0]) pos = i;
    if (i->res == lt->arg[1]) len = i;
  }
  if (!pos || pos->op != BXK_OP_TOPO || pos->imm.u != BXK_TOPO_ABSOLUTE_POS || !len || len->op != BXK_OP_LEN)
    return NULL;
  *j = (uint32_t)len->imm.u;
  return last;
}

/* NAME.unit[.p](bindings, scalars, grid, shared, spill, u, ux, uy, uz):
 * segment p of the body for one unit (the whole body when not phased). */
static LLVMValueRef unit_fn(struct lw *L, const char *symbol, const struct phases *P, uint32_t p,
                            LLVMTypeRef uft) {
  const struct bxk_kernel *k = L->k;
  char uname[300];
  if (P) snprintf(uname, sizeof uname, "%s.unit.%u", symbol, p);
  else snprintf(uname, sizeof uname, "%s.unit%s", symbol, L->elide ? ".unguarded" : "");
  LLVMValueRef ufn = LLVMAddFunction(L->cg->mod, uname, uft);
  LLVMContextRef ctx = L->cg->ctx;
  LLVMSetLinkage(ufn, LLVMInternalLinkage);
  LLVMAddAttributeAtIndex(ufn, LLVMAttributeFunctionIndex, attr(ctx, "alwaysinline"));
  LLVMAddAttributeAtIndex(ufn, LLVMAttributeFunctionIndex, attr(ctx, "nounwind"));
  L->fn = ufn;
  L->pb = LLVMGetParam(ufn, 0), L->ps = LLVMGetParam(ufn, 1), L->pg = LLVMGetParam(ufn, 2);
  L->psh = LLVMGetParam(ufn, 3), L->pspill = LLVMGetParam(ufn, 4), L->u = LLVMGetParam(ufn, 5);
  L->ux = LLVMGetParam(ufn, 6), L->uy = LLVMGetParam(ufn, 7), L->uz = LLVMGetParam(ufn, 8);
  LLVMBasicBlockRef entry = bb(L, "entry"), start = bb(L, "start");
  LLVMPositionBuilderAtEnd(L->b, entry);
  L->entry_term = LLVMBuildBr(L->b, start);
  LLVMPositionBuilderAtEnd(L->b, start);
  if (!P) {
    for (uint32_t j = 0; j < k->nlocal; j++) { /* locals start at zero in every unit */
      L->local[j] = entry_alloca(L, mty(L, k->local[j]), "local");
      LLVMBuildStore(L->b, LLVMConstNull(mty(L, k->local[j])), L->local[j]);
    }
    block(L, &k->body);
  } else {
    for (uint32_t j = 0; j < k->nlocal; j++) {
      if (P->lslot[j]) {
        L->local[j] = spill_slot(L, P->lslot[j]);
        continue;
      }
      L->local[j] = entry_alloca(L, mty(L, k->local[j]), "local");
      LLVMBuildStore(L->b, LLVMConstNull(mty(L, k->local[j])), L->local[j]);
    }
    if (p == 0) {
      LLVMBuildStore(L->b, LLVMConstInt(L->i8, 0, 0), L->pspill);
      for (uint32_t j = 0; j < k->nlocal; j++)
        if (P->lslot[j]) LLVMBuildStore(L->b, LLVMConstNull(mty(L, k->local[j])), L->local[j]);
    } else { /* a unit that returned in an earlier phase does nothing */
      LLVMBasicBlockRef run = bb(L, "run"), out = bb(L, "returned");
      LLVMValueRef done = LLVMBuildLoad2(L->b, L->i8, L->pspill, "done");
      LLVMBuildCondBr(L->b, LLVMBuildICmp(L->b, LLVMIntNE, done, LLVMConstInt(L->i8, 0, 0), ""), out, run);
      LLVMPositionBuilderAtEnd(L->b, out);
      LLVMBuildRetVoid(L->b);
      LLVMPositionBuilderAtEnd(L->b, run);
      for (uint32_t v = 1; v <= k->nval; v++)
        if (P->slot[v] && P->defseg[v] - 1 < p)
          L->val[v] = mem_load(L, bxk_value_type(k, v), spill_slot(L, P->slot[v]));
    }
    for (const struct bxk_inst *i = P->start[p]; i && i->op != BXK_OP_SYNC && L->ok; i = i->next) {
      inst(L, i);
      if (bxk_opinfo[i->op].cls == BXK_C_JUMP) break;
    }
    if (L->ok && !terminated(L))
      for (uint32_t v = 1; v <= k->nval; v++)
        if (P->slot[v] && P->defseg[v] - 1 == p)
          mem_store(L, bxk_value_type(k, v), L->val[v], spill_slot(L, P->slot[v]));
  }
  if (L->ok && !terminated(L)) LLVMBuildRetVoid(L->b);
  return ufn;
}

bool bxl_lower(struct bxl_cg *cg, const struct bxk_kernel *k, const char *symbol) {
  LLVMContextRef ctx = cg->ctx;
  struct lw L = {.cg = cg, .k = k, .b = cg->b, .ok = true};
  L.i1 = LLVMInt1TypeInContext(ctx);
  L.i8 = LLVMInt8TypeInContext(ctx);
  L.i16 = LLVMInt16TypeInContext(ctx);
  L.i32 = LLVMInt32TypeInContext(ctx);
  L.i64 = LLVMInt64TypeInContext(ctx);
  L.f16 = LLVMHalfTypeInContext(ctx);
  L.f32 = LLVMFloatTypeInContext(ctx);
  L.f64 = LLVMDoubleTypeInContext(ctx);
  L.ptr = LLVMPointerTypeInContext(ctx, 0);
  L.voidt = LLVMVoidTypeInContext(ctx);
  LLVMTypeRef arr = LLVMArrayType2(L.i32, BXL_MAX_RANK);
  L.bindt = LLVMStructTypeInContext(ctx, (LLVMTypeRef[]){L.ptr, L.i32, L.i32, arr, arr}, 5, 0);
  L.invariant_kind = LLVMGetMDKindIDInContext(ctx, "invariant.load", 14);

  if (LLVMGetNamedFunction(cg->mod, symbol)) { /* LLVM would rename it silently */
    bxk_diag_add(cg->ds, BXK_E_LOWER, (struct bxk_loc){0}, 0, "two kernels named %s in one module",
                 symbol);
    return false;
  }
  L.val = calloc((size_t)k->nval + 1, sizeof *L.val);
  L.local = calloc((size_t)k->nlocal + 1, sizeof *L.local);
  L.shoff = calloc((size_t)k->nshared + 1, sizeof *L.shoff);
  if (!L.val || !L.local || !L.shoff) {
    free(L.val), free(L.local), free(L.shoff);
    bxk_diag_add(cg->ds, BXK_E_OOM, (struct bxk_loc){0}, 0, "out of memory lowering %s", k->name);
    return false;
  }
  uint64_t shbytes = 0;
  for (uint32_t j = 0; j < k->nshared; j++) {
    L.shoff[j] = (uint32_t)shbytes;
    shbytes += ((uint64_t)k->shared[j].count * ((bxk_type_bits(k->shared[j].elem) + 7) / 8) + 15) & ~15ull;
  }
  if (shbytes > (1u << 20)) fail(&L, NULL, "shared memory over 1 MiB per cube");
  nested_sync(&L, &k->body, true);
  struct phases P = {0};
  for (const struct bxk_inst *i = k->body.first; i; i = i->next) L.phased |= i->op == BXK_OP_SYNC;
  if (L.ok && L.phased) plan_phases(&L, &P);

  LLVMTypeRef uparams[9] = {L.ptr, L.ptr, L.ptr, L.ptr, L.ptr, L.i32, L.i32, L.i32, L.i32};
  LLVMTypeRef uft = LLVMFunctionType(L.voidt, uparams, 9, 0);
  uint32_t nphase = L.phased ? P.n : 1;
  LLVMValueRef *ufn = calloc(nphase, sizeof *ufn);
  if (!ufn) fail(&L, NULL, "out of memory lowering the phases");
  for (uint32_t p = 0; p < nphase && L.ok; p++) ufn[p] = unit_fn(&L, symbol, L.phased ? &P : NULL, p, uft);
  uint32_t gj = 0;
  const struct bxk_inst *guard = L.phased ? NULL : guard_of(k, &gj);
  LLVMValueRef ufn_open = NULL;   /* the body without its guard (guard_of) */
  if (guard && L.ok) {
    L.elide = guard;
    ufn_open = unit_fn(&L, symbol, NULL, 0, uft);
    L.elide = NULL;
  }

  if (L.ok) { /* NAME(bindings, scalars, grid, first, last): the unit loops */
    LLVMTypeRef params[5] = {L.ptr, L.ptr, L.ptr, L.i32, L.i32};
    LLVMValueRef fn = LLVMAddFunction(cg->mod, symbol, LLVMFunctionType(L.voidt, params, 5, 0));
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, attr(ctx, "nounwind"));
    abi_param_attrs(ctx, fn, k);
    L.fn = fn;
    LLVMValueRef pb = LLVMGetParam(fn, 0), ps = LLVMGetParam(fn, 1), pg = LLVMGetParam(fn, 2),
                 first = LLVMGetParam(fn, 3), last = LLVMGetParam(fn, 4);
    LLVMBasicBlockRef e = bb(&L, "entry"), pick = bb(&L, "pick"), fast = bb(&L, "unit1d"),
                      slow = bb(&L, "unit3d"), done = bb(&L, "done");
    LLVMBuilderRef b = L.b;
    LLVMPositionBuilderAtEnd(b, e);
    LLVMValueRef sh = LLVMConstNull(L.ptr), spill = LLVMConstNull(L.ptr);
    if (shbytes) {
      sh = LLVMBuildAlloca(b, LLVMArrayType2(L.i8, shbytes), "shared");
      LLVMSetAlignment(sh, 16);
    }
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, first, last, ""), pick, done);
    LLVMPositionBuilderAtEnd(b, pick);
    L.pg = pg;
    LLVMValueRef dx = grid(&L, 3), dy = grid(&L, 4), dz = grid(&L, 5);
    LLVMValueRef one = c32(&L, 1), zero = c32(&L, 0);
    if (L.phased) { /* one spill record per unit of the call */
      LLVMValueRef n = LLVMBuildZExt(b, LLVMBuildSub(b, last, first, ""), L.i64, "");
      spill = LLVMBuildArrayAlloca(b, L.i8, LLVMBuildMul(b, n, LLVMConstInt(L.i64, P.rec, 0), ""), "spill");
      LLVMSetAlignment(spill, 16);
    }
    LLVMValueRef flat = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntEQ, dy, one, ""),
                                     LLVMBuildICmp(b, LLVMIntEQ, dz, one, ""), "");
    LLVMBuildCondBr(b, flat, fast, slow);
    for (int pass = 0; pass < 2; pass++) {
      LLVMBasicBlockRef from = pass == 0 ? fast : slow;
      LLVMPositionBuilderAtEnd(b, from);
      LLVMValueRef end = last, callee = NULL;
      if (pass == 0 && ufn_open) {
        /* 1-D: ABSOLUTE_POS is base + u (topo above with uy = uz = 0),
         * so the guard base + u < len holds exactly for u < len - base;
         * a grid has < 2^32 units, so base + u does not wrap. */
        L.pb = pb;
        LLVMValueRef w = LLVMBuildMul(b, grid(&L, 0), dx, ""), h = LLVMBuildMul(b, grid(&L, 1), dy, "");
        LLVMValueRef ay = LLVMBuildMul(b, grid(&L, 7), dy, ""), az = LLVMBuildMul(b, grid(&L, 8), dz, "");
        LLVMValueRef base = LLVMBuildAdd(b, LLVMBuildMul(b, grid(&L, 6), dx, ""),
                                         LLVMBuildMul(b, w, LLVMBuildAdd(b, ay, LLVMBuildMul(b, h, az, ""), ""), ""), "");
        LLVMValueRef len = bind_field(&L, gj, 1, NULL);
        LLVMValueRef room = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntUGT, len, base, ""),
                                            LLVMBuildSub(b, len, base, ""), zero, "");
        end = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntULT, room, last, ""), room, last, "end");
        callee = ufn_open;
      }
      for (uint32_t p = 0; p < nphase; p++) { /* phase p for every unit, then p + 1 */
        LLVMBasicBlockRef body = bb(&L, "phase"), next = p + 1 < nphase ? bb(&L, "barrier") : done;
        if (callee) LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, first, end, ""), body, next);
        else LLVMBuildBr(b, body);
        LLVMPositionBuilderAtEnd(b, body);
        LLVMValueRef u = LLVMBuildPhi(b, L.i32, "u");
        LLVMValueRef ux = u, uy = zero, uz = zero;
        if (pass == 1) {
          ux = LLVMBuildURem(b, u, dx, "");
          LLVMValueRef q = LLVMBuildUDiv(b, u, dx, "");
          uy = LLVMBuildURem(b, q, dy, "");
          uz = LLVMBuildUDiv(b, q, dy, "");
        }
        LLVMValueRef rec = spill;
        if (L.phased) {
          LLVMValueRef off = LLVMBuildMul(b, LLVMBuildZExt(b, LLVMBuildSub(b, u, first, ""), L.i64, ""),
                                          LLVMConstInt(L.i64, P.rec, 0), "");
          rec = LLVMBuildGEP2(b, L.i8, spill, &off, 1, "rec");
        }
        LLVMValueRef args[9] = {pb, ps, pg, sh, rec, u, ux, uy, uz};
        LLVMBuildCall2(b, uft, callee ? callee : ufn[p], args, 9, "");
        LLVMValueRef nx = LLVMBuildAdd(b, u, one, "");
        LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, nx, end, ""), body, next);
        LLVMValueRef inv[2] = {first, nx};
        LLVMBasicBlockRef inc[2] = {from, body};
        LLVMAddIncoming(u, inv, inc, 2);
        from = next;
        LLVMPositionBuilderAtEnd(b, next);
      }
    }
    LLVMPositionBuilderAtEnd(b, done);
    LLVMBuildRetVoid(b);
  }
  free(ufn);
  free_phases(&P);
  free(L.val);
  free(L.local);
  free(L.shoff);
  return L.ok;
}
