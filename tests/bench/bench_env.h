/* bench_env.h — what bext-bench and bext-matrix both do before timing
 * anything: fix every library's thread count in the environment and
 * re-exec, because OpenMP (libtorch's, OpenBLAS's) reads its environment
 * once, when libgomp loads.  Idle OpenMP threads wait passively, so they
 * do not steal the core the side being timed runs on; so do OpenBLAS's
 * (OPENBLAS_THREAD_TIMEOUT=4: 2^4 cycles of spinning instead of 2^28
 * before a worker sleeps), which a peer's gemm leaves behind. */
#ifndef BXBT_BENCH_ENV_H
#define BXBT_BENCH_ENV_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Returns only if this is already the re-executed process, or when the
 * re-exec fails (then the run goes on with the environment it has). */
static inline void bxbt_reexec_with_threads(int threads, char **argv, const char *prog) {
  if (getenv("BXBT_REEXEC")) return;
  char nt[16];
  snprintf(nt, sizeof nt, "%d", threads);
  setenv("OMP_WAIT_POLICY", "passive", 1);
  setenv("OPENBLAS_THREAD_TIMEOUT", "4", 1);
  setenv("OMP_NUM_THREADS", nt, 1);
  setenv("BEXT_NUM_THREADS", nt, 1);
  setenv("BXBT_REEXEC", "1", 1);
  execv("/proc/self/exe", argv);
  fprintf(stderr, "%s: re-exec: ", prog);
  perror(NULL);
}

#endif
