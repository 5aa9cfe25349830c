/* gated_impl.c — implementations for gated.bext.  Each is compiled under
 * the same condition as its prototype in the generated header (the build
 * defines BEXT_FEATURE_<F> for every feature it enables), so one file
 * serves both builds of the sample. */
#include "gated.h"

bext_tensor *gated_double_flex(bext_tensor *x) { return bext_mul_scalar(x, 2.0); }
#if defined(BEXT_FEATURE_REFERENCE)
bext_tensor *gated_double_ndarray(bext_tensor *x) { return bext_add(bext_retain(x), x); }
#endif

#if defined(BEXT_FEATURE_EXPERIMENTAL)
bext_tensor *gated_triple_flex(bext_tensor *x) { return bext_mul_scalar(x, 3.0); }
#if defined(BEXT_FEATURE_REFERENCE)
bext_tensor *gated_triple_ndarray(bext_tensor *x) { return bext_mul_scalar(x, 3.0); }
#endif
#endif

bext_tensor *flex_only_negate_flex(bext_tensor *x) { return bext_neg(x); }
