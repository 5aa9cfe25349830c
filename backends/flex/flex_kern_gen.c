/* flex_kern_gen.c — the baseline-ISA instance of flex_kern_body.h, used
 * when the CPU lacks AVX2/FMA/F16C (and as a cross-check in tests). */
#include "flex_kern.h"

/* The 8-lane vector types lower to SSE pairs here; every helper taking
 * them is static and inlined, so the ABI note does not apply. */
#pragma GCC diagnostic ignored "-Wpsabi"

#define SFX(n) bxfx_gen_##n
#define VARIANT bxfx_kern_gen
#define VARIANT_NAME "generic"

#include "flex_kern_body.h"
