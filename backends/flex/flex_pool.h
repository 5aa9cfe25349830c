/* flex_pool.h — the Flex backend's one thread pool and its tuning knobs.
 *
 * Large kernels split an index range [0, n) into one chunk per thread; the
 * calling thread runs the first chunk itself and the persistent workers
 * (created lazily, sized to the online cores or BEXT_NUM_THREADS) run the
 * rest.  Workers sleep on a condition variable between jobs (no
 * spin-forever: two cores are shared with OpenBLAS, which is told the same
 * thread count).  Small ranges, nested calls from inside a chunk and calls
 * made while another thread owns the pool all run inline on the caller, so
 * the small path takes no lock at all. */
#ifndef BXFX_POOL_H
#define BXFX_POOL_H

#include <stddef.h>

/* Ranges below this many elements (scaled by the caller's cost estimate)
 * stay on the calling thread: waking a worker costs several microseconds. */
#define BXFX_PAR_MIN ((size_t)65536)

/* A chunk of work: run indices [begin, end) of the job described by ctx. */
typedef void (*bxfx_task_fn)(void *ctx, size_t begin, size_t end);

/* Run fn over [0, n).  `cost` is the caller's per-element work estimate
 * in units of one f32 add (1 for memory-bound ops, ~8 for transcendentals):
 * n * cost below BXFX_PAR_MIN runs inline.  Chunk borders are multiples of
 * `align` (>= 1) so vector loops keep whole lanes.  Deterministic: the
 * split depends only on n, align and the thread count. */
void bxfx_parallel_for(size_t n, size_t cost, size_t align, bxfx_task_fn fn, void *ctx);

/* The number of threads large work is split across (workers + caller). */
int bxfx_num_threads(void);

/* Limit the split to `n` threads (1 = everything inline; <= 0 or more
 * than the pool holds = all of them).  Also tells OpenBLAS.  Returns the
 * previous limit.  Used by tests to compare threaded and serial results
 * and by the benchmarks to pin a thread count. */
int bxfx_set_num_threads(int n);

/* How many jobs were actually split across threads since start (tests use
 * it to prove the threaded path ran). */
unsigned long bxfx_pool_jobs_split(void);

#endif
