/* bxl_jit.c — kernels compiled at run time with ORC's LLJIT, for this
 * machine's CPU and features.
 *
 * The JIT gets its target machine from us (the same CPU and features the
 * O3 pipeline optimized for, so the vectorizer's choices are the ones the
 * code runs with).  The math functions the lowering calls are defined as
 * absolute symbols with the addresses this library was linked against (and
 * libmvec's vector variants with their addresses in libmvec.so.1), so
 * resolution does not depend on what the host program happened to load;
 * anything else (compiler-rt helpers such as f16 conversions on CPUs
 * without F16C) is looked up in the process. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>

#include "bxl_internal.h"

struct bxl_jit {
  LLVMOrcLLJITRef jit;
  unsigned serial;   /* symbol suffix: the same kernel may be compiled twice */
};

typedef float (*f1)(float);
typedef double (*d1)(double);
typedef float (*f2)(float, float);
typedef double (*d2)(double, double);

static const struct { const char *name; void *addr; } libm[] = {
#define F1(n) {#n "f", (void *)(f1)n##f}, {#n, (void *)(d1)n}
#define F2(n) {#n "f", (void *)(f2)n##f}, {#n, (void *)(d2)n}
    F1(exp), F1(log), F1(log1p), F1(sqrt), F1(sin), F1(cos), F1(tanh), F1(erf),
    F1(floor), F1(ceil), F1(trunc), F1(roundeven), F1(exp2), F1(log2), F1(log10), F1(fabs),
    F2(pow), F2(fmod),
#undef F1
#undef F2
    {"memset", (void *)memset}, {"memcpy", (void *)memcpy}, {"memmove", (void *)memmove},
};

#define BXL_X_(fn, arity) {#fn, arity},
static const struct { const char *name; unsigned arity; } mvec_fns[] = {BXL_MVEC_FNS(BXL_X_)};
#undef BXL_X_
#define BXL_X_(bit, isa, lanes32, lanes64) {isa, lanes32, lanes64},
static const struct { char isa; unsigned lanes32, lanes64; } mvec_isas[] = {BXL_MVEC_ISAS(BXL_X_)};
#undef BXL_X_
enum { NFNS = sizeof mvec_fns / sizeof *mvec_fns, NISAS = sizeof mvec_isas / sizeof *mvec_isas };

static LLVMOrcCSymbolMapPair sym_pair(struct bxl_jit *j, const char *name, void *addr) {
  LLVMOrcCSymbolMapPair p;
  p.Name = LLVMOrcLLJITMangleAndIntern(j->jit, name);
  p.Sym.Address = (LLVMOrcExecutorAddress)(uintptr_t)addr;
  p.Sym.Flags.GenericFlags = LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable;
  p.Sym.Flags.TargetFlags = 0;
  return p;
}

struct bxl_jit *bxl_jit_new(struct bxk_diags *ds) {
  bxl_init_targets();
  struct bxl_jit *j = calloc(1, sizeof *j);
  if (!j) {
    bxk_diag_add(ds, BXK_E_OOM, (struct bxk_loc){0}, 0, "out of memory creating the JIT");
    return NULL;
  }
  LLVMTargetMachineRef tm = bxl_target_machine(NULL, ds);
  if (!tm) {
    free(j);
    return NULL;
  }
  LLVMOrcLLJITBuilderRef jb = LLVMOrcCreateLLJITBuilder();
  /* both take ownership: tm into the JTMB, the JTMB into the builder, the
   * builder into LLVMOrcCreateLLJIT */
  LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(jb, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(tm));
  LLVMErrorRef e = LLVMOrcCreateLLJIT(&j->jit, jb);
  if (e) {
    bxl_error_diag(ds, "creating the ORC LLJIT failed", e);
    free(j);
    return NULL;
  }
  LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(j->jit);
  /* libm's functions, then libmvec's variants of BXL_MVEC_FNS for every
   * ISA (the lowering names only those the CPU runs). */
  enum { NLIBM = sizeof libm / sizeof libm[0], NMVEC = 2 * NFNS * NISAS };
  LLVMOrcCSymbolMapPair syms[NLIBM + NMVEC];
  size_t N = 0;
  for (size_t i = 0; i < NLIBM; i++) syms[N++] = sym_pair(j, libm[i].name, libm[i].addr);
  void *mv = bxl_mvec_lib();
  for (size_t i = 0; mv && i < NISAS; i++)
    for (size_t f = 0; f < NFNS; f++)
      for (int d = 0; d < 2; d++) {
        char name[48], scalar[16];
        snprintf(scalar, sizeof scalar, "%s%s", mvec_fns[f].name, d ? "" : "f");
        bxl_mvec_name(name, sizeof name, mvec_isas[i].isa, d ? mvec_isas[i].lanes64 : mvec_isas[i].lanes32,
                      mvec_fns[f].arity, scalar);
        void *addr = dlsym(mv, name);
        if (addr) syms[N++] = sym_pair(j, name, addr);
      }
  e = LLVMOrcJITDylibDefine(jd, LLVMOrcAbsoluteSymbols(syms, N));
  LLVMOrcDefinitionGeneratorRef gen = NULL;
  if (!e) e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, LLVMOrcLLJITGetGlobalPrefix(j->jit), NULL, NULL);
  if (e) {
    bxl_error_diag(ds, "setting up the JIT's symbols failed", e);
    bxl_jit_free(j);
    return NULL;
  }
  LLVMOrcJITDylibAddGenerator(jd, gen);
  return j;
}

void bxl_jit_free(struct bxl_jit *j) {
  if (!j) return;
  if (j->jit) {
    LLVMErrorRef e = LLVMOrcDisposeLLJIT(j->jit);
    if (e) LLVMConsumeError(e);
  }
  free(j);
}

bxl_kernel_fn bxl_jit_compile(struct bxl_jit *j, const struct bxk_kernel *k, struct bxk_diags *ds) {
  if (!bxk_verify(k, ds)) return NULL;
  char sym[300];
  snprintf(sym, sizeof sym, "%.200s.%u", k->name, ++j->serial);
  /* The module is built in a thread-safe context the JIT will share. */
  LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
  struct bxl_cg cg;
  bxl_kernel_fn fn = NULL;
  if (!bxl_cg_init(&cg, sym, LLVMOrcThreadSafeContextGetContext(tsc), NULL, ds)) {
    LLVMOrcDisposeThreadSafeContext(tsc);
    return NULL;
  }
  if (bxl_lower(&cg, k, sym) && bxl_cg_finish(&cg, true)) {
    LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(cg.mod, tsc);
    cg.mod = NULL; /* the JIT owns it now */
    LLVMErrorRef e = LLVMOrcLLJITAddLLVMIRModule(j->jit, LLVMOrcLLJITGetMainJITDylib(j->jit), tsm);
    LLVMOrcExecutorAddress addr = 0;
    if (e) { /* tsm is the JIT's even on failure */
      bxl_error_diag(ds, "adding the kernel to the JIT failed", e);
    } else if ((e = LLVMOrcLLJITLookup(j->jit, &addr, sym))) {
      bxl_error_diag(ds, "compiling the kernel failed", e);
    } else {
      fn = (bxl_kernel_fn)(uintptr_t)addr;
    }
  }
  bxl_cg_dispose(&cg);
  LLVMOrcDisposeThreadSafeContext(tsc); /* the module keeps its own reference */
  return fn;
}

/* ------------------------------------------------------- runtime objects */

bool bxl_compile_object(const struct bxk_kernel *k, const char *symbol, void **obj, size_t *len,
                        struct bxk_diags *ds) {
  *obj = NULL;
  *len = 0;
  if (!bxk_verify(k, ds)) return false;
  struct bxl_cg cg;
  if (!bxl_cg_init(&cg, symbol, NULL, NULL, ds)) return false;
  bool ok = bxl_lower(&cg, k, symbol) && bxl_cg_finish(&cg, true);
  if (ok) {
    char *err = NULL;
    LLVMMemoryBufferRef buf = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(cg.tm, cg.mod, LLVMObjectFile, &err, &buf)) {
      bxk_diag_add(ds, BXK_E_LLVM, (struct bxk_loc){0}, 0, "emitting the kernel's object failed: %s",
                   err ? err : "(no message)");
      ok = false;
    } else {
      size_t n = LLVMGetBufferSize(buf);
      *obj = malloc(n ? n : 1);
      if (*obj) {
        memcpy(*obj, LLVMGetBufferStart(buf), n);
        *len = n;
      } else {
        bxk_diag_add(ds, BXK_E_OOM, (struct bxk_loc){0}, 0, "out of memory copying an object");
        ok = false;
      }
      LLVMDisposeMemoryBuffer(buf);
    }
    if (err) LLVMDisposeMessage(err);
  }
  bxl_cg_dispose(&cg);
  return ok;
}

void bxl_object_free(void *obj) { free(obj); }

bxl_kernel_fn bxl_jit_add_object(struct bxl_jit *j, const void *obj, size_t len, const char *symbol,
                                 struct bxk_diags *ds) {
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(obj, len, symbol);
  if (!buf) {
    bxk_diag_add(ds, BXK_E_OOM, (struct bxk_loc){0}, 0, "out of memory copying an object");
    return NULL;
  }
  /* the JIT owns buf from here, on failure too */
  LLVMErrorRef e = LLVMOrcLLJITAddObjectFile(j->jit, LLVMOrcLLJITGetMainJITDylib(j->jit), buf);
  if (e) {
    bxl_error_diag(ds, "adding the kernel's object to the JIT failed", e);
    return NULL;
  }
  LLVMOrcExecutorAddress addr = 0;
  if ((e = LLVMOrcLLJITLookup(j->jit, &addr, symbol))) {
    bxl_error_diag(ds, "linking the kernel's object failed", e);
    return NULL;
  }
  return (bxl_kernel_fn)(uintptr_t)addr;
}

size_t bxl_host_target(char *buf, size_t cap) {
  unsigned maj = 0, min = 0, patch = 0;
  LLVMGetVersion(&maj, &min, &patch);
  char *triple = LLVMGetDefaultTargetTriple(), *cpu = LLVMGetHostCPUName(),
       *feat = LLVMGetHostCPUFeatures();
  int n = snprintf(buf, cap, "llvm %u.%u.%u %s %s %s", maj, min, patch, triple, cpu, feat);
  LLVMDisposeMessage(triple);
  LLVMDisposeMessage(cpu);
  LLVMDisposeMessage(feat);
  return n < 0 ? 0 : (size_t)n;
}
