/* cubefuse_impl.h — what the tests read back from cubefuse_impl.c (the
 * implementations of ext/cubefuse.bext's methods): how often each ran,
 * and the methods as custom ops of the random program generator
 * (tests/runtime/fusion_programs.h). */
#ifndef CUBEFUSE_IMPL_H
#define CUBEFUSE_IMPL_H

#include "fusion_programs.h"

/* ORDER CF: cubefuse_calls[] and the first CF_PROGRAM_OPS entries of
 * cubefuse_program_ops[] */
enum { CF_GELU, CF_REVERSE, CF_MIX, CF_OFFSET, CF_AFFINE, CF_STEPS, CF_PROGRAM_OPS,
       CF_DOUBLED = CF_PROGRAM_OPS, CF_ONE, CF_AS, CF_COUNT };

/* implementation runs per method, on any device (eager, or called by
 * Fusion on the inner device) */
extern int cubefuse_calls[CF_COUNT];

/* gelu, reverse, mix (of x and tanh(x)), offset, affine and steps (i32
 * and bool scalars from the generator's doubles) as unary custom ops */
extern const fzp_custom_op cubefuse_program_ops[CF_PROGRAM_OPS];

#endif
