/* fusion_shim.c — linked into the samples built with SAMPLE_LAYER="fusion"
 * (tests/decorator/CMakeLists.txt): at exit, prints on stderr what the
 * +fusion layer did, one line:
 *   fusion layer: recorded N, run M, flushes K
 * check_fusion.cmake reads it (a lazily recorded extension call counts as
 * one recorded op). */
#include <stdio.h>
#include <stdlib.h>

#include <bext/bext.h>

static void report(void) {
  bext_fusion_stat s;
  if (!bext_fusion_stats(&s)) return;
  fprintf(stderr, "fusion layer: recorded %llu, run %llu, flushes %llu\n", (unsigned long long)s.ops_recorded,
          (unsigned long long)s.ops_run, (unsigned long long)s.flushes);
}

__attribute__((constructor)) static void setup(void) { atexit(report); }
