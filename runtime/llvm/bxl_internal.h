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
  unsigned mvec;       /* BXL_MVEC_* bits: the libmvec ISAs the target runs */
  LLVMValueRef *used;  /* vector functions declared, for llvm.compiler.used */
  unsigned nused, capused;
  struct bxk_diags *ds;
};

/* glibc's libmvec: vector variants of libm functions under the x86-64
 * vector function ABI (_ZGV<isa>N<lanes><v per arg>_<name>), one per ISA
 * and width.  A call to a function of BXL_MVEC_FNS carries the variants
 * the target can run (the "vector-function-abi-variant" attribute), so
 * the loop vectorizer calls them on whole vectors instead of scalarizing:
 * without them, a kernel with exp or erf stays a scalar loop of libm
 * calls.  The JIT resolves every name in libmvec.so.1, loaded with dlopen
 * (bxl_jit.c); an object written ahead of time needs -lmvec where it is
 * linked. */
enum { BXL_MVEC_SSE = 1, BXL_MVEC_AVX2 = 2, BXL_MVEC_AVX512 = 4 };
/* X(name, arity): name is the f64 function; +"f" is the f32 one. */
#define BXL_MVEC_FNS(X) \
  X(exp, 1) X(log, 1) X(log1p, 1) X(sin, 1) X(cos, 1) X(tanh, 1) X(erf, 1) X(pow, 2)
/* X(bit, isa letter, lanes of f32, lanes of f64): 128, 256, 512 bits. */
#define BXL_MVEC_ISAS(X) \
  X(BXL_MVEC_SSE, 'b', 4, 2) X(BXL_MVEC_AVX2, 'd', 8, 4) X(BXL_MVEC_AVX512, 'e', 16, 8)
/* The variant's symbol: _ZGV<isa>N<lanes><"v" x arity>_<name>, name being
 * the scalar function's (expf, erf). */
BXK_FUNC void bxl_mvec_name(char *buf, size_t cap, char isa, unsigned lanes, unsigned arity, const char *name);
/* libmvec.so.1, loaded once (NULL where glibc has none): JIT'ed code may
 * call the variants only when it is there. */
BXK_FUNC void *bxl_mvec_lib(void);

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
/* k for any x86-64 (bxl_dispatch.c): NAME.x86_64_v2 (cg's baseline) and
 * NAME.x86_64_v3 (AVX2), and NAME an ifunc picking one by cpuid. */
BXK_FUNC bool bxl_lower_dispatched(struct bxl_cg *cg, const struct bxk_kernel *k);
/* LLVMVerifyModule, then default<O3> when optimize. */
BXK_FUNC bool bxl_cg_finish(struct bxl_cg *cg, bool optimize);

#endif
