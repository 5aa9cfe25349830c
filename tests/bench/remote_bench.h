/* remote_bench.h — the Remote backend's timings for bext-bench's remote_*
 * rows (remote_bench.c), against a bext-server child hosting flex on
 * loopback TCP. */
#ifndef BXBT_REMOTE_BENCH_H
#define BXBT_REMOTE_BENCH_H

#include <stdbool.h>

struct bxbt_remote_times {
  /* ns per 100-op chain + read on remote:, ns per 100 nng req/rep round trips */
  double chain[99], reqrep[99];
  /* ns per 64 MiB: remote upload (+ sync) and download, a plain TCP copy each way */
  double up[99], tcp_up[99], down[99], tcp_down[99];
};

/* Fills reps entries of the groups asked for (chain: the first pair;
 * bulk: the other four).  1 when timed, 0 when this build has no Remote
 * backend (said on stdout), -1 on failure (said on stderr). */
int bxbt_remote_times(int reps, bool chain, bool bulk, struct bxbt_remote_times *t);

#endif
