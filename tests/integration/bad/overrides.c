/* overrides.c — the Flex override of Defaulted::halve, alone in a static
 * library nothing references (the `override` case of this bad project). */
#include <bext/bext.h>

bext_tensor *defaulted_halve_flex(bext_tensor *x);
bext_tensor *defaulted_halve_flex(bext_tensor *x) { return bext_mul_scalar(x, 0.5); }
