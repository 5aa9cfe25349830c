/* cube_bench.h — cube:cpu timings for bext-bench (cube_bench.c). */
#ifndef BXBT_CUBE_BENCH_H
#define BXBT_CUBE_BENCH_H

#include <stdbool.h>

/* ns per cube_launch of a prepared 16-element f32 add on the Cube device
 * named (at most four devices; the first call on one prepares it,
 * untimed), each followed by bext_sync when wait; -1 on failure
 * (bext_last_error says why). */
double bxbt_cube_launch_ns(const char *device, bool wait, int iters);

#endif
