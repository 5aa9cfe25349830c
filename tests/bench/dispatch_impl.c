/* dispatch_impl.c — bext-bench's implementations of BenchExt (dispatch.bext).
 * A separate translation unit, and noinline, so the "direct call" side of
 * the benchmark is a real call like the entry point's, not inlined away. */
#include "dispatch.h"

#define BXBT_NOINLINE __attribute__((noinline))

BXBT_NOINLINE bext_tensor *bench_ext_pass_flex(bext_tensor *x) { return x; }
BXBT_NOINLINE bext_tensor *bench_ext_pass_ndarray(bext_tensor *x) { return x; }
BXBT_NOINLINE bext_tensor *bench_ext_bump_flex(bext_tensor *x) { return bext_add_scalar(x, 1.0); }
BXBT_NOINLINE bext_tensor *bench_ext_bump_ndarray(bext_tensor *x) { return bext_add_scalar(x, 1.0); }
