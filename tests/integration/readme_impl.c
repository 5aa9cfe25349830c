/* readme_impl.c — my_ext_impl.c of the README's Makefile example. */
#include "my_ext.h"

bext_tensor *my_ext_scaled_flex(bext_tensor *x) { return bext_mul_scalar(x, 3.0); }
