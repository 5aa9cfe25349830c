/* cube_bench.h — cube:cpu timings for bext-bench (cube_bench.c). */
#ifndef BXBT_CUBE_BENCH_H
#define BXBT_CUBE_BENCH_H

#include <stdbool.h>

/* ns per cube_launch of a prepared 16-element f32 add on the Cube device
 * named (at most four devices; the first call on one prepares it,
 * untimed), each followed by bext_sync when wait; -1 on failure
 * (bext_last_error says why). */
double bxbt_cube_launch_ns(const char *device, bool wait, int iters);

/* The autotuner's test hook (cube_tune_force: every tuned launch takes
 * dim, 0: tuned again) and the elementwise family's untuned cube_dim. */
#include <stdint.h>
void bxbt_cube_force_dim(uint32_t dim);
uint32_t bxbt_cube_ew_default(void);

#endif
