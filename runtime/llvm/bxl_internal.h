/* bxl_internal.h — the LLVM code generator's shared state.
 *
 * One struct bxl_cg owns the LLVM context (unless a JIT's thread-safe
 * context lends one), the module, the builder and the target machine, and
 * bxl_cg_dispose releases them in reverse order (c3c's discipline). */
#ifndef BXL_INTERNAL_H
#define BXL_INTERNAL_H

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/TargetMachine.h>

#include "bxl.h"

struct bxl_cg {
  LLVMContextRef ctx;
  bool own_ctx;
  LLVMModuleRef mod;
  LLVMBuilderRef b;
  LLVMTargetMachineRef tm;
  struct bxk_diags *ds;
};

/* Target set-up once per process (never LLVMShutdown: LLVM's globals
 * outlive us, and other users in the process may still need them). */
BXK_FUNC void bxl_init_targets(void);
/* cpu NULL: this machine, with its features. */
BXK_FUNC LLVMTargetMachineRef bxl_target_machine(const char *cpu, struct bxk_diags *ds);
/* An LLVMErrorRef as a diagnostic (consumes it). */
BXK_FUNC void bxl_error_diag(struct bxk_diags *ds, const char *what, LLVMErrorRef e);
/* ctx NULL: the cg creates and owns one. */
BXK_FUNC bool bxl_cg_init(struct bxl_cg *cg, const char *module, LLVMContextRef ctx, const char *cpu,
                          struct bxk_diags *ds);
BXK_FUNC void bxl_cg_dispose(struct bxl_cg *cg);
/* Adds `symbol` (the ABI in bxl.h) for a verified kernel. */
BXK_FUNC bool bxl_lower(struct bxl_cg *cg, const struct bxk_kernel *k, const char *symbol);
/* LLVMVerifyModule, then default<O3> when optimize. */
BXK_FUNC bool bxl_cg_finish(struct bxl_cg *cg, bool optimize);

#endif
