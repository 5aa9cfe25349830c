/* cube_bench.h — cube:cpu timings for bext-bench (cube_bench.c). */
#ifndef BXBT_CUBE_BENCH_H
#define BXBT_CUBE_BENCH_H

/* ns per cube_launch of a prepared 16-element f32 add (the first call
 * prepares it, untimed); -1 on failure (bext_last_error says why). */
double bxbt_cube_launch_ns(int iters);

#endif
