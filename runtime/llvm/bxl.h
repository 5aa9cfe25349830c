/* bxl.h — kernel IR -> native CPU code through LLVM 19 (prefix bxl_):
 * LLVM IR text (--emit=ll), object files ahead of time, and an ORC JIT.
 * The only part of bext that links LLVM (libbext_llvm).
 *
 * The kernel ABI (docs/kernels.md "CPU kernel ABI"): every kernel becomes
 *
 *   void NAME(const struct bxl_binding *bindings,   one per IR binding
 *             const union bxl_scalar *scalars,      one 8-byte slot each
 *             const struct bxl_grid *grid,          counts, dims, this cube
 *             uint32_t first, uint32_t last);       units [first, last)
 *
 * which runs units first..last-1 (linear unit ids, x fastest) of the cube
 * at grid->cube_pos, one after the other in a loop.  The loop is written
 * twice: for cubes with cube_dim y = z = 1 (UNIT_POS_X is the unit id, the
 * case O3 vectorizes) and for the general 3-D case.  A launcher may split a
 * cube's units over several calls, except for kernels using shared memory
 * or sync_cube, whose cube must run in one call (the array, and the
 * per-unit state kept between the phases a barrier splits the units
 * into, live in that call's frame).
 * Launch contract: every cube_dim and cube_count component >= 1; indices
 * are not bounds-checked (the kernel's own guards decide). */
#ifndef BXL_H
#define BXL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bxk.h"

#define BXL_MAX_RANK 8

/* A tensor as a kernel sees it.  Element storage: bool is one byte (0/1),
 * f16 is IEEE binary16, the rest their C types.  shape/stride in elements. */
struct bxl_binding {
  void *data;
  uint32_t len, rank;
  uint32_t shape[BXL_MAX_RANK];
  uint32_t stride[BXL_MAX_RANK];
};

/* A scalar parameter: its C type at offset 0 of an 8-byte slot. */
union bxl_scalar {
  int64_t i64;
  uint64_t u64;
  double f64;
  float f32;
  int32_t i32;
  uint32_t u32;
  uint16_t f16;
  uint8_t u8;
};

struct bxl_grid {
  uint32_t cube_count[3];
  uint32_t cube_dim[3];
  uint32_t cube_pos[3];   /* the cube this call runs */
};

typedef void (*bxl_kernel_fn)(const struct bxl_binding *bindings, const union bxl_scalar *scalars,
                              const struct bxl_grid *grid, uint32_t first, uint32_t last);

/* CPU names are LLVM's (-mcpu): NULL means this machine (with its
 * features); BXL_CPU_BASELINE is what objects built ahead of time target
 * unless told otherwise. */
#define BXL_CPU_BASELINE "x86-64-v2"

/* The LLVM IR of one kernel, as text (malloc'd; free()).  optimize: after
 * default<O3> for cpu.  NULL with diagnostics when the kernel does not
 * verify or LLVM rejects it. */
BXK_FUNC char *bxl_emit_ll(const struct bxk_kernel *k, const char *cpu, bool optimize,
                           struct bxk_diags *ds);

/* One object file holding every kernel (symbol = kernel name), optimized
 * for cpu.  cpu NULL on x86-64: for any x86-64 — each kernel compiled for
 * BXL_CPU_BASELINE (NAME.x86_64_v2) and for x86-64-v3 (NAME.x86_64_v3,
 * AVX2/FMA), NAME being a GNU ifunc that picks the clone the CPU runs at
 * load time (docs/kernels.md "Objects for any x86-64"). */
BXK_FUNC bool bxl_emit_object(const struct bxk_kernel *const *ks, size_t n, const char *cpu,
                              const char *path, struct bxk_diags *ds);

/* ------------------------------------------------------------------ JIT */
/* One ORC LLJIT for this machine.  Kernels stay valid until bxl_jit_free.
 * Not thread-safe: callers serialize compiles (lookups of compiled
 * kernels need no lock: they are plain function pointers). */
struct bxl_jit;
BXK_FUNC struct bxl_jit *bxl_jit_new(struct bxk_diags *ds);
BXK_FUNC void bxl_jit_free(struct bxl_jit *j);
/* Verifies, lowers, checks the module, runs default<O3> and compiles. */
BXK_FUNC bxl_kernel_fn bxl_jit_compile(struct bxl_jit *j, const struct bxk_kernel *k,
                                       struct bxk_diags *ds);

/* --------------------------------------------- objects for the runtime */
/* The runtime compiles a kernel to an object in memory (kept in its disk
 * cache) and adds that object to its JIT, so a fresh compile and a cache
 * hit load the same bytes the same way.  The object is for this machine
 * (host CPU and features) and defines `symbol` (the ABI above).
 * bxl_object_free releases *obj. */
BXK_FUNC bool bxl_compile_object(const struct bxk_kernel *k, const char *symbol, void **obj,
                                 size_t *len, struct bxk_diags *ds);
BXK_FUNC void bxl_object_free(void *obj);
/* Adds an object made by bxl_compile_object (the bytes are copied) and
 * returns its `symbol`; NULL with a diagnostic when LLVM rejects it (a
 * damaged object, a symbol already defined). */
BXK_FUNC bxl_kernel_fn bxl_jit_add_object(struct bxl_jit *j, const void *obj, size_t len,
                                          const char *symbol, struct bxk_diags *ds);
/* What compiled code depends on besides the IR: "llvm 19.1.7 <triple>
 * <cpu> <features>", into buf (truncated to cap); returns the full length.
 * Objects made under one target string are valid under that string only. */
BXK_FUNC size_t bxl_host_target(char *buf, size_t cap);

/* ---------------------------------------------------- the loaded library */
/* libbext never links LLVM: it dlopen()s libbext_llvm.so on its first
 * kernel_prepare and finds this table under the name BXL_API_SYMBOL, the
 * only symbol the shared object exports.  version changes when a member
 * is added or changes meaning; the runtime refuses another version. */
#define BXL_API_VERSION 1
#define BXL_API_SYMBOL "bxl_api_v1"
struct bxl_api {
  uint32_t version;   /* BXL_API_VERSION */
  struct bxl_jit *(*jit_new)(struct bxk_diags *ds);
  void (*jit_free)(struct bxl_jit *j);
  bool (*compile_object)(const struct bxk_kernel *k, const char *symbol, void **obj, size_t *len,
                         struct bxk_diags *ds);
  void (*object_free)(void *obj);
  bxl_kernel_fn (*jit_add_object)(struct bxl_jit *j, const void *obj, size_t len,
                                  const char *symbol, struct bxk_diags *ds);
  size_t (*host_target)(char *buf, size_t cap);
};

#endif
