/* flex_kern_avx2.c — the AVX2+FMA+F16C instance of flex_kern_body.h.
 *
 * The target is set by pragma because libbext's sources share one set of
 * compile flags; bxfx_kern() only hands this table out when CPUID says
 * the CPU has these extensions.  Transcendentals call glibc's libmvec
 * (`_ZGVdN8v_*`, linked through -lmvec): ~4x scalar libm, no -ffast-math. */
#if defined(__x86_64__)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#endif
#include <immintrin.h>

#include "flex_kern.h"

#define SFX(n) bxfx_avx2_##n
#define VARIANT bxfx_kern_avx2
#define VARIANT_NAME "avx2"
#define BXFX_AVX 1
/* libmvec takes its arguments in ymm registers.  clang (the sanitizer
 * build) passes 32-byte vector arguments of these calls in memory even
 * under the target pragma, so the vector routines would read garbage
 * (caught by test_flex_paths under ASan): clang builds call libm lane by
 * lane instead, within the same contract (transcendental last bits are
 * open). */
#if !defined(__clang__)
#define BXFX_MVEC 1
#endif

/* libmvec's AVX2 8-lane entry points (glibc >= 2.22/2.35). */
__m256 _ZGVdN8v_expf(__m256);
__m256 _ZGVdN8v_logf(__m256);
__m256 _ZGVdN8v_log1pf(__m256);
__m256 _ZGVdN8v_sinf(__m256);
__m256 _ZGVdN8v_cosf(__m256);
__m256 _ZGVdN8v_tanhf(__m256);
__m256 _ZGVdN8v_erff(__m256);
__m256 _ZGVdN8vv_powf(__m256, __m256);
__m256d _ZGVdN4v_exp(__m256d);
__m256d _ZGVdN4v_log(__m256d);
__m256d _ZGVdN4v_log1p(__m256d);
__m256d _ZGVdN4v_sin(__m256d);
__m256d _ZGVdN4v_cos(__m256d);
__m256d _ZGVdN4v_tanh(__m256d);
__m256d _ZGVdN4v_erf(__m256d);
__m256d _ZGVdN4vv_pow(__m256d, __m256d);

#include "flex_kern_body.h"

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#else
/* Not x86-64: the generic table stands in for this one. */
#include "flex_kern.h"
#define SFX(n) bxfx_avx2_##n
#define VARIANT bxfx_kern_avx2
#define VARIANT_NAME "generic"
#include "flex_kern_body.h"
#endif
