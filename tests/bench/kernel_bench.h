/* kernel_bench.h — the kernel runtime's timings for bext-bench
 * (kernel_bench.c): launch overhead, JIT compile and warm-cache load. */
#ifndef BXBT_KERNEL_BENCH_H
#define BXBT_KERNEL_BENCH_H

#include <stdbool.h>

/* Per repetition r < reps (each array holds reps values):
 *   launch_ns[r]  one Flex kernel_launch of a prepared 16-element add
 *   op_ns[r]      one bext_add of the same 16 elements (the core op path)
 *   compile_ns[r] one kernel_prepare that compiles (a GELU variant new to
 *                 the process and to the disk cache)
 *   load_ns[r]    one kernel_prepare of that kernel in a fresh process
 *                 whose disk cache holds it
 * Compiles and loads run in forked children with a private temporary
 * cache (the user's is never touched).  False + a message on stderr. */
bool bxbt_kernel_times(int reps, double *launch_ns, double *op_ns, double *compile_ns,
                       double *load_ns);

#endif
