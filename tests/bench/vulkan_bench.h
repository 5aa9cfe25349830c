/* vulkan_bench.h — the Vulkan runtime's timings for bext-bench
 * (vulkan_bench.c): a tiny launch's round trip and the 16M GELU, each vs
 * the same IR on Flex's kernel runtime. */
#ifndef BXBT_VULKAN_BENCH_H
#define BXBT_VULKAN_BENCH_H

#include <stdbool.h>

/* Per repetition r < reps: launch_ns (launch + submit + wait of a
 * 16-element add on Vulkan device 0), cpu_launch_ns (Flex kernel_launch of
 * it), gelu_ns (GELU over 16M f32 on the device, waited for), cpu_gelu_ns
 * (on Flex).  1: done; 0: no Vulkan device (said on stdout); -1: failed
 * (a message on stderr). */
int bxbt_vulkan_times(int reps, double *launch_ns, double *cpu_launch_ns, double *gelu_ns, double *cpu_gelu_ns);

#endif
