/* bxl_module.c — LLVM set-up and the ahead-of-time paths: target
 * machines, the code generator's owner struct, module verification and
 * default<O3>, LLVM IR text and object files. */
#include <pthread.h>
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
  LLVMDisposeMessage(triple);
  LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(cg->tm);
  LLVMSetModuleDataLayout(cg->mod, dl);
  LLVMDisposeTargetData(dl);
  return true;
}

/* Reverse order of creation; a module handed to the JIT is no longer ours
 * (mod is NULL then). */
void bxl_cg_dispose(struct bxl_cg *cg) {
  if (cg->b) LLVMDisposeBuilder(cg->b);
  if (cg->mod) LLVMDisposeModule(cg->mod);
  if (cg->own_ctx && cg->ctx) LLVMContextDispose(cg->ctx);
  if (cg->tm) LLVMDisposeTargetMachine(cg->tm);
  memset(cg, 0, sizeof *cg);
}

bool bxl_cg_finish(struct bxl_cg *cg, bool optimize) {
  char *msg = NULL;
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
  for (size_t j = 0; j < n && ok; j++) ok = bxl_lower(&cg, ks[j], ks[j]->name);
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
