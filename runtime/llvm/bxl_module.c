/* bxl_module.c — LLVM set-up and the ahead-of-time paths: target
 * machines, the code generator's owner struct, module verification and
 * default<O3>, LLVM IR text and object files. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "bxl_internal.h"

static pthread_once_t targets_once = PTHREAD_ONCE_INIT;

static void init_targets(void) {
  LLVMInitializeNativeTarget();
  LLVMInitializeNativeAsmPrinter();
  /* the CPU dispatch of objects reads cpuid through inline assembly */
  LLVMInitializeNativeAsmParser();
}

void bxl_init_targets(void) { pthread_once(&targets_once, init_targets); }

/* Copies LLVM's message into a diagnostic and frees it. */
static void llvm_diag(struct bxk_diags *ds, const char *what, char *msg) {
  bxk_diag_add(ds, BXK_E_LLVM, (struct bxk_loc){0}, 0, "%s: %s", what, msg ? msg : "(no message)");
  if (msg) LLVMDisposeMessage(msg);
}

void bxl_error_diag(struct bxk_diags *ds, const char *what, LLVMErrorRef e) {
  char *msg = LLVMGetErrorMessage(e); /* consumes e */
  bxk_diag_add(ds, BXK_E_LLVM, (struct bxk_loc){0}, 0, "%s: %s", what, msg ? msg : "(no message)");
  LLVMDisposeErrorMessage(msg);
}

LLVMTargetMachineRef bxl_target_machine(const char *cpu, struct bxk_diags *ds) {
  bxl_init_targets();
  char *triple = LLVMGetDefaultTargetTriple();
  char *err = NULL;
  LLVMTargetRef target;
  if (LLVMGetTargetFromTriple(triple, &target, &err)) {
    llvm_diag(ds, "no LLVM target for this machine", err);
    LLVMDisposeMessage(triple);
    return NULL;
  }
  char *host_cpu = NULL, *host_feat = NULL;
  if (!cpu) {
    host_cpu = LLVMGetHostCPUName();
    host_feat = LLVMGetHostCPUFeatures();
  }
  LLVMTargetMachineRef tm =
      LLVMCreateTargetMachine(target, triple, cpu ? cpu : host_cpu, cpu ? "" : host_feat,
                              LLVMCodeGenLevelAggressive, LLVMRelocPIC, LLVMCodeModelDefault);
  if (host_cpu) LLVMDisposeMessage(host_cpu);
  if (host_feat) LLVMDisposeMessage(host_feat);
  LLVMDisposeMessage(triple);
  if (!tm)
    bxk_diag_add(ds, BXK_E_LLVM, (struct bxk_loc){0}, 0, "LLVM made no target machine for cpu %s",
                 cpu ? cpu : "(host)");
  return tm;
}

void bxl_mvec_name(char *buf, size_t cap, char isa, unsigned lanes, unsigned arity, const char *name) {
  snprintf(buf, cap, "_ZGV%cN%u%s_%s", isa, lanes, arity == 2 ? "vv" : "v", name);
}

static void *mvec_handle;
static void mvec_load(void) { mvec_handle = dlopen("libmvec.so.1", RTLD_NOW | RTLD_LOCAL); }

void *bxl_mvec_lib(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, mvec_load);
  return mvec_handle;
}

/* Whether the comma-separated "+name,-name" list has exactly entry. */
static bool has_feature(const char *list, const char *entry) {
  size_t n = strlen(entry);
  for (const char *p = list; p && *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == n && !memcmp(p, entry, n)) return true;
    p = end ? end + 1 : NULL;
  }
  return false;
}

/* Which libmvec ISAs code for this target may call.  The host's features
 * say it for the JIT; a CPU named ahead of time is known only by the
 * x86-64 levels (v3 has AVX2, v4 AVX-512), so any other name gets the
 * SSE variants every x86-64 runs.  Elsewhere: none (glibc's libmvec is
 * x86-64's; AArch64 has its own ABI, not wired yet). */
static unsigned mvec_isas(const char *triple, const char *cpu, LLVMTargetMachineRef tm) {
  if (strncmp(triple, "x86_64", 6) != 0) return 0;
  unsigned m = BXL_MVEC_SSE;
  if (cpu) {
    if (!strcmp(cpu, "x86-64-v3")) m |= BXL_MVEC_AVX2;
    if (!strcmp(cpu, "x86-64-v4")) m |= BXL_MVEC_AVX2 | BXL_MVEC_AVX512;
    return m;
  }
  if (!bxl_mvec_lib()) return 0; /* this machine's code: only if it can call them */
  char *f = LLVMGetTargetMachineFeatureString(tm);
  if (has_feature(f, "+avx2")) m |= BXL_MVEC_AVX2;
  if (has_feature(f, "+avx512f")) m |= BXL_MVEC_AVX512;
  LLVMDisposeMessage(f);
  return m;
}

bool bxl_cg_init(struct bxl_cg *cg, const char *module, LLVMContextRef ctx, const char *cpu,
                 struct bxk_diags *ds) {
  memset(cg, 0, sizeof *cg);
  cg->ds = ds;
  cg->tm = bxl_target_machine(cpu, ds);
  if (!cg->tm) return false;
  cg->own_ctx = !ctx;
  cg->ctx = ctx ? ctx : LLVMContextCreate();
  cg->mod = LLVMModuleCreateWithNameInContext(module, cg->ctx);
  cg->b = LLVMCreateBuilderInContext(cg->ctx);
  char *triple = LLVMGetTargetMachineTriple(cg->tm);
  LLVMSetTarget(cg->mod, triple);
  cg->mvec = mvec_isas(triple, cpu, cg->tm);
  LLVMDisposeMessage(triple);
  LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(cg->tm);
  LLVMSetModuleDataLayout(cg->mod, dl);
  LLVMDisposeTargetData(dl);
  return true;
}

/* Reverse order of creation; a module handed to the JIT is no longer ours
 * (mod is NULL then). */
void bxl_cg_dispose(struct bxl_cg *cg) {
  free(cg->used);
  if (cg->b) LLVMDisposeBuilder(cg->b);
  if (cg->mod) LLVMDisposeModule(cg->mod);
  if (cg->own_ctx && cg->ctx) LLVMContextDispose(cg->ctx);
  if (cg->tm) LLVMDisposeTargetMachine(cg->tm);
  memset(cg, 0, sizeof *cg);
}

/* The vector functions the calls name stay declared until the vectorizer
 * has run (nothing calls them before it does), as clang keeps its
 * `declare simd` variants: in llvm.compiler.used. */
static void keep_used(struct bxl_cg *cg) {
  if (!cg->nused) return;
  LLVMTypeRef ptr = LLVMPointerTypeInContext(cg->ctx, 0);
  LLVMTypeRef at = LLVMArrayType2(ptr, cg->nused);
  LLVMValueRef g = LLVMAddGlobal(cg->mod, at, "llvm.compiler.used");
  LLVMSetLinkage(g, LLVMAppendingLinkage);
  LLVMSetSection(g, "llvm.metadata");
  LLVMSetInitializer(g, LLVMConstArray2(ptr, cg->used, cg->nused));
}

bool bxl_cg_finish(struct bxl_cg *cg, bool optimize) {
  char *msg = NULL;
  keep_used(cg);
  if (LLVMVerifyModule(cg->mod, LLVMReturnStatusAction, &msg)) {
    /* the module text goes with the message: a lowering bug is read there */
    char *text = LLVMPrintModuleToString(cg->mod);
    bxk_diag_add(cg->ds, BXK_E_LLVM, (struct bxk_loc){0}, 0, "LLVM rejects the lowered module: %.120s",
                 msg ? msg : "");
    bxk_diag_add(cg->ds, BXK_E_LLVM, (struct bxk_loc){0}, 0, "module: %.180s", text ? text : "");
    if (text) LLVMDisposeMessage(text);
    if (msg) LLVMDisposeMessage(msg);
    return false;
  }
  if (msg) LLVMDisposeMessage(msg);
  if (!optimize) return true;
  LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
  LLVMPassBuilderOptionsSetLoopVectorization(opts, 1);
  LLVMPassBuilderOptionsSetSLPVectorization(opts, 1);
  LLVMPassBuilderOptionsSetLoopUnrolling(opts, 1);
  LLVMErrorRef e = LLVMRunPasses(cg->mod, "default<O3>", cg->tm, opts);
  LLVMDisposePassBuilderOptions(opts);
  if (e) {
    bxl_error_diag(cg->ds, "default<O3> failed", e);
    return false;
  }
  return true;
}

/* -------------------------------------------------------- ahead of time */

char *bxl_emit_ll(const struct bxk_kernel *k, const char *cpu, bool optimize, struct bxk_diags *ds) {
  if (!bxk_verify(k, ds)) return NULL;
  struct bxl_cg cg;
  if (!bxl_cg_init(&cg, k->name, NULL, cpu, ds)) return NULL;
  char *out = NULL;
  if (bxl_lower(&cg, k, k->name) && bxl_cg_finish(&cg, optimize)) {
    char *text = LLVMPrintModuleToString(cg.mod);
    out = strdup(text);
    LLVMDisposeMessage(text);
  }
  bxl_cg_dispose(&cg);
  return out;
}

bool bxl_emit_object(const struct bxk_kernel *const *ks, size_t n, const char *cpu, const char *path,
                     struct bxk_diags *ds) {
  bool ok = true;
  for (size_t j = 0; j < n; j++) ok &= bxk_verify(ks[j], ds);
  if (!ok) return false;
  struct bxl_cg cg;
  if (!bxl_cg_init(&cg, path, NULL, cpu ? cpu : BXL_CPU_BASELINE, ds)) return false;
  /* The default baseline on x86-64 gets an AVX2 clone picked at load time;
   * a CPU the caller named is what they asked for, alone. */
  bool dispatch = !cpu && (cg.mvec & BXL_MVEC_SSE);
  for (size_t j = 0; j < n && ok; j++)
    ok = dispatch ? bxl_lower_dispatched(&cg, ks[j]) : bxl_lower(&cg, ks[j], ks[j]->name);
  ok = ok && bxl_cg_finish(&cg, true);
  if (ok) {
    char *err = NULL;
    if (LLVMTargetMachineEmitToFile(cg.tm, cg.mod, (char *)path, LLVMObjectFile, &err)) {
      llvm_diag(ds, "writing the object file failed", err);
      ok = false;
    } else if (err) {
      LLVMDisposeMessage(err);
    }
  }
  bxl_cg_dispose(&cg);
  return ok;
}
