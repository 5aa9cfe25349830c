/* sample_shim.c — linked into the decorated builds of the samples
 * (tests/decorator/CMakeLists.txt): registers the "+count" layer before
 * main and, at exit, prints what the layer saw on stderr, one line:
 *   count layer: core N, custom M, moves K
 * check_decorated.cmake compares N and M with the figures the suite
 * expects for that sample. */
#include <stdio.h>
#include <stdlib.h>

#include "count_layer.h"

static void report(void) {
  fprintf(stderr, "count layer: core %llu, custom %llu, moves %llu\n",
          (unsigned long long)count_core_total(), (unsigned long long)count_custom_total(),
          (unsigned long long)count_moves());
}

__attribute__((constructor)) static void setup(void) {
  if (!count_layer_register()) {
    fprintf(stderr, "sample_shim: %s\n", bext_last_error());
    exit(1);
  }
  atexit(report);
}
