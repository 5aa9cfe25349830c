/* fusion_programs.h — the one random program generator of the Fusion
 * tests (fusion_programs.c): small programs of mixed core ops (views,
 * broadcasting, reductions, matmul, casts, in-place reuse, chains feeding
 * reductions, mid-program reads) and, when given, custom ops (extension
 * methods), each op run on an eager device E and a lazy one L, every
 * value compared (bitwise for non-float dtypes, within a tolerance for
 * floats) and record-time errors equal.  Used by runtime/test_fusion
 * (core ops and cubefuse's methods, flex vs flex+fusion, ndarray, Vulkan)
 * and codegen/e2e_cube_fusion (programs replayed with shifted scalars). */
#ifndef BEXT_TEST_FUSION_PROGRAMS_H
#define BEXT_TEST_FUSION_PROGRAMS_H

#include <stdbool.h>
#include <stdint.h>

#include <bext/bext.h>

enum { FZP_MAX_SCALARS = 3, FZP_MAX_CUSTOM = 16 };

/* A custom op the generator may pick: a unary extension call on a float
 * tensor (f32 or f64) returning one of the same shape and dtype. */
typedef struct fzp_custom_op {
  const char *name;
  /* how many scalars the generator draws for it (0..FZP_MAX_SCALARS):
   * multiples of 0.375 in [-1.5, 1.5], plus salt * (0.625 + 0.25 i) */
  int nscalars;
  /* its last bits may differ between eager and fused runs (libm vs the
   * JIT's erf, a contracted multiply-add): the generator keeps its value
   * away from the ops that magnify such a difference */
  bool inexact;
  /* consumes x (as every bext op); s holds nscalars values */
  bext_tensor *(*call)(bext_tensor *x, const double *s);
} fzp_custom_op;

typedef struct fzp_config {
  const bext_device *E, *L;   /* eager reference, lazy device under test */
  const fzp_custom_op *custom;   /* NULL: core ops only */
  int ncustom;                   /* at most FZP_MAX_CUSTOM */
  /* a custom op's weight among a step's 22 core choices: about
   * custom_weight / (22 + custom_weight) of the steps, in the programs
   * that use them (custom_every: one program in that many, 1: all) */
  int custom_weight, custom_every;
  /* shifts every custom op's scalars, never the program: run again with
   * another salt, a program records the same ops with other values */
  int salt;
  /* a fresh plan cache every fresh_every programs (0: never): past its
   * cap (BXFU_PLAN_CAP) new segments run unplanned and unfused, and
   * these programs never repeat */
  int fresh_every;
} fzp_config;

/* What the programs did, added to by every run. */
typedef struct fzp_tally {
  long programs, steps, compared;
  long custom_programs;                 /* programs that used custom ops */
  long custom_calls[FZP_MAX_CUSTOM];    /* custom ops called on E (each ran its implementation there) */
} fzp_tally;

/* Runs program `p` of the family `key` (fixed seeds: the same p and key
 * give the same program); stops the test with an assertion at the first
 * disagreement, naming the program and step. */
void fzp_run_program(const fzp_config *c, uint64_t key, long p, fzp_tally *t);

/* Programs first..count-1 of the family `key`, closing L every
 * c->fresh_every programs, then a sync of L. */
void fzp_run_programs(const fzp_config *c, uint64_t key, long first, long count, fzp_tally *t);

/* Reads e (eager) and l (lazy), neither released, and asserts they
 * agree: dtype and shape, ints and bools bitwise, floats within tol of
 * (1 + |a| + |b|), NaN equal to NaN, infinities equal. */
void fzp_agree(bext_tensor *e, bext_tensor *l, double tol, const char *what);

/* BEXT_FUSION_PROGRAMS, or def when unset (or not a positive number). */
long fzp_programs_from_env(long def);

#endif
