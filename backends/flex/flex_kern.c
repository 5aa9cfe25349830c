/* flex_kern.c — picks the kernel table for this CPU. */
#include "flex_kern.h"

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
