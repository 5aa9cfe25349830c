/* flex_kern.c — picks the kernel table for this CPU, and the output size
 * from which elementwise outputs are streamed past the caches. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "flex_internal.h"

const struct bxfx_kernels *bxfx_kern_chosen;

const struct bxfx_kernels *bxfx_kern_choose(void) {
  /* A benign race: every thread computes the same answer. */
  const struct bxfx_kernels *k = &bxfx_kern_gen;
#if defined(__x86_64__)
  __builtin_cpu_init();
  /* Every AVX2 CPU also has F16C (clang 14 cannot query f16c by name). */
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    k = &bxfx_kern_avx2;
#endif
  __atomic_store_n(&bxfx_kern_chosen, k, __ATOMIC_RELEASE);
  return k;
}

/* The last-level cache this CPU's threads share, in bytes.  sysfs first:
 * glibc's sysconf(_SC_LEVEL3_CACHE_SIZE) reports 320 MiB on the EPYC the
 * matrix runs on (every CCX's L3 summed), where a core sees 32 MiB. */
static size_t llc_bytes(void) {
  for (int idx = 3; idx >= 2; idx--) {
    char path[64];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", idx);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    unsigned long long v = 0;
    char unit = 0;
    int got = fscanf(f, "%llu%c", &v, &unit);
    fclose(f);
    if (got >= 1 && v > 0)
      return (size_t)v << (unit == 'K' ? 10 : unit == 'M' ? 20 : unit == 'G' ? 30 : 0);
  }
#ifdef _SC_LEVEL3_CACHE_SIZE
  long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l3 > 0) return (size_t)l3;
#endif
  return (size_t)32 << 20;
}

/* 0: not read yet (a computed threshold is never 0 unless set so; the
 * set flag tells a deliberate 0 apart). */
static _Atomic size_t stream_min;
static atomic_bool stream_min_known;

size_t bxfx_stream_min(void) {
  if (__builtin_expect(atomic_load_explicit(&stream_min_known, memory_order_acquire), 1))
    return atomic_load_explicit(&stream_min, memory_order_relaxed);
  /* A benign race: every thread computes the same answer. */
  const char *e = getenv("BEXT_FLEX_STREAM_MIN");
  size_t v = e && *e ? (size_t)strtoull(e, NULL, 0) : llc_bytes();
  atomic_store_explicit(&stream_min, v, memory_order_relaxed);
  atomic_store_explicit(&stream_min_known, true, memory_order_release);
  return v;
}

size_t bxfx_stream_set_min(size_t bytes) {
  size_t old = bxfx_stream_min();
  atomic_store_explicit(&stream_min, bytes, memory_order_relaxed);
  return old;
}
