/* bxl_dispatch.c — kernel objects that run well on any x86-64: each kernel
 * is compiled twice, for the x86-64-v2 baseline and for x86-64-v3 (AVX2,
 * FMA, BMI2, F16C...), and its public symbol is a GNU ifunc whose
 * resolver picks the v3 clone when the CPU and the OS support it.  So an
 * object built on one machine runs everywhere, fast where it can, and does
 * not depend on the build machine (issue 9, item 3).
 *
 * The resolver runs while the dynamic linker relocates, before any
 * constructor, so it calls nothing: it reads cpuid and xgetbv through
 * inline assembly.  FMA does not change results: the IR rounds a*b+c
 * twice, and LLVM contracts nothing without fast-math flags. */
#include <stdio.h>
#include <string.h>

#include "bxl_internal.h"

/* LLVM's x86-64-v3 level; the clone's functions carry it, the module
 * stays v2 (per-function subtargets). */
static const char v3_cpu[] = "x86-64-v3";

/* cpuid(leaf, sub) as {eax, ebx, ecx, edx}. */
static LLVMValueRef cpuid(struct bxl_cg *cg, LLVMTypeRef i32, unsigned leaf, unsigned sub) {
  LLVMTypeRef st = LLVMStructTypeInContext(cg->ctx, (LLVMTypeRef[]){i32, i32, i32, i32}, 4, 0);
  LLVMTypeRef ft = LLVMFunctionType(st, (LLVMTypeRef[]){i32, i32}, 2, 0);
  static const char cons[] = "={ax},={bx},={cx},={dx},{ax},{cx}";
  LLVMValueRef as = LLVMGetInlineAsm(ft, "cpuid", 5, cons, sizeof cons - 1, 0, 0, LLVMInlineAsmDialectATT, 0);
  LLVMValueRef args[2] = {LLVMConstInt(i32, leaf, 0), LLVMConstInt(i32, sub, 0)};
  return LLVMBuildCall2(cg->b, ft, as, args, 2, "cpuid");
}

/* (word & mask) == mask */
static LLVMValueRef has_bits(struct bxl_cg *cg, LLVMValueRef r, unsigned word, uint32_t mask) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
  LLVMValueRef w = LLVMBuildExtractValue(cg->b, r, word, "");
  LLVMValueRef m = LLVMConstInt(i32, mask, 0);
  return LLVMBuildICmp(cg->b, LLVMIntEQ, LLVMBuildAnd(cg->b, w, m, ""), m, "");
}

/* `bxl.cpu_is_v3()`: whether this CPU runs x86-64-v3 code.  Each check is
 * behind the previous one (a leaf past the maximum, or xgetbv without
 * OSXSAVE, would be wrong or fault). */
static LLVMValueRef cpu_is_v3_fn(struct bxl_cg *cg) {
  LLVMValueRef f = LLVMGetNamedFunction(cg->mod, "bxl.cpu_is_v3");
  if (f) return f;
  LLVMContextRef ctx = cg->ctx;
  LLVMTypeRef i1 = LLVMInt1TypeInContext(ctx), i32 = LLVMInt32TypeInContext(ctx);
  f = LLVMAddFunction(cg->mod, "bxl.cpu_is_v3", LLVMFunctionType(i1, NULL, 0, 0));
  LLVMSetLinkage(f, LLVMInternalLinkage);
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(ctx, f, "entry"),
                    l1 = LLVMAppendBasicBlockInContext(ctx, f, "leaf1"),
                    os = LLVMAppendBasicBlockInContext(ctx, f, "os"),
                    l7 = LLVMAppendBasicBlockInContext(ctx, f, "leaf7"),
                    ext = LLVMAppendBasicBlockInContext(ctx, f, "ext"),
                    ext1 = LLVMAppendBasicBlockInContext(ctx, f, "ext1"),
                    no = LLVMAppendBasicBlockInContext(ctx, f, "no");
  LLVMBuilderRef b = cg->b;
  LLVMPositionBuilderAtEnd(b, entry);
  LLVMValueRef r0 = cpuid(cg, i32, 0, 0);
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntUGE, LLVMBuildExtractValue(b, r0, 0, ""), LLVMConstInt(i32, 7, 0), ""),
                  l1, no);
  /* leaf 1, ecx: SSE4.2 (20), MOVBE (22), POPCNT (23), OSXSAVE (27), AVX
   * (28), F16C (29), FMA (12) */
  LLVMPositionBuilderAtEnd(b, l1);
  LLVMValueRef r1 = cpuid(cg, i32, 1, 0);
  uint32_t ecx1 = 1u << 12 | 1u << 20 | 1u << 22 | 1u << 23 | 1u << 27 | 1u << 28 | 1u << 29;
  LLVMBuildCondBr(b, has_bits(cg, r1, 2, ecx1), os, no);
  /* the OS saves the XMM and YMM state (XCR0 bits 1 and 2) */
  LLVMPositionBuilderAtEnd(b, os);
  LLVMTypeRef xt = LLVMStructTypeInContext(ctx, (LLVMTypeRef[]){i32, i32}, 2, 0);
  LLVMTypeRef xft = LLVMFunctionType(xt, (LLVMTypeRef[]){i32}, 1, 0);
  static const char xcons[] = "={ax},={dx},{cx}";
  LLVMValueRef xg = LLVMGetInlineAsm(xft, "xgetbv", 6, xcons, sizeof xcons - 1, 0, 0, LLVMInlineAsmDialectATT, 0);
  LLVMValueRef xr = LLVMBuildCall2(b, xft, xg, (LLVMValueRef[]){LLVMConstInt(i32, 0, 0)}, 1, "xcr0");
  LLVMBuildCondBr(b, has_bits(cg, xr, 0, 6), l7, no);
  /* leaf 7, ebx: BMI1 (3), AVX2 (5), BMI2 (8) */
  LLVMPositionBuilderAtEnd(b, l7);
  LLVMValueRef r7 = cpuid(cg, i32, 7, 0);
  LLVMBuildCondBr(b, has_bits(cg, r7, 1, 1u << 3 | 1u << 5 | 1u << 8), ext, no);
  /* extended leaf 0x80000001, ecx: LZCNT (5) */
  LLVMPositionBuilderAtEnd(b, ext);
  LLVMValueRef re = cpuid(cg, i32, 0x80000000u, 0);
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntUGE, LLVMBuildExtractValue(b, re, 0, ""),
                                   LLVMConstInt(i32, 0x80000001u, 0), ""), ext1, no);
  LLVMPositionBuilderAtEnd(b, ext1);
  LLVMValueRef r81 = cpuid(cg, i32, 0x80000001u, 0);
  LLVMBuildRet(b, has_bits(cg, r81, 2, 1u << 5));
  LLVMPositionBuilderAtEnd(b, no);
  LLVMBuildRet(b, LLVMConstInt(i1, 0, 0));
  return f;
}

/* Marks every function named `prefix` or `prefix.*` (a kernel and its
 * unit functions) as code for x86-64-v3. */
static void mark_v3(struct bxl_cg *cg, const char *prefix) {
  size_t n = strlen(prefix);
  for (LLVMValueRef f = LLVMGetFirstFunction(cg->mod); f; f = LLVMGetNextFunction(f)) {
    size_t len;
    const char *name = LLVMGetValueName2(f, &len);
    if (len < n || memcmp(name, prefix, n) != 0 || (len > n && name[n] != '.') || LLVMIsDeclaration(f)) continue;
    LLVMAddTargetDependentFunctionAttr(f, "target-cpu", v3_cpu);
  }
}

/* NAME as an ifunc over NAME.x86_64_v2 and NAME.x86_64_v3. */
static void dispatcher(struct bxl_cg *cg, const char *name, LLVMValueRef v2, LLVMValueRef v3) {
  LLVMContextRef ctx = cg->ctx;
  LLVMTypeRef ptr = LLVMPointerTypeInContext(ctx, 0);
  char rname[300];
  snprintf(rname, sizeof rname, "%s.resolver", name);
  LLVMValueRef is = cpu_is_v3_fn(cg); /* first: it moves the builder */
  LLVMValueRef r = LLVMAddFunction(cg->mod, rname, LLVMFunctionType(ptr, NULL, 0, 0));
  LLVMSetLinkage(r, LLVMInternalLinkage);
  LLVMPositionBuilderAtEnd(cg->b, LLVMAppendBasicBlockInContext(ctx, r, "entry"));
  LLVMValueRef ok = LLVMBuildCall2(cg->b, LLVMGlobalGetValueType(is), is, NULL, 0, "");
  LLVMBuildRet(cg->b, LLVMBuildSelect(cg->b, ok, v3, v2, ""));
  LLVMAddGlobalIFunc(cg->mod, name, strlen(name), LLVMGlobalGetValueType(v2), 0, r);
}

bool bxl_lower_dispatched(struct bxl_cg *cg, const struct bxk_kernel *k) {
  char v2[280], v3[280];
  snprintf(v2, sizeof v2, "%s.x86_64_v2", k->name);
  snprintf(v3, sizeof v3, "%s.x86_64_v3", k->name);
  unsigned mvec = cg->mvec;
  bool ok = bxl_lower(cg, k, v2);
  /* the clone may call libmvec's AVX2 variants; the baseline may not */
  cg->mvec = mvec | BXL_MVEC_AVX2;
  ok = ok && bxl_lower(cg, k, v3);
  cg->mvec = mvec;
  if (!ok) return false;
  mark_v3(cg, v3);
  dispatcher(cg, k->name, LLVMGetNamedFunction(cg->mod, v2), LLVMGetNamedFunction(cg->mod, v3));
  return true;
}
