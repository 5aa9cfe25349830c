/* cubefuse_impl.c — the implementations of ext/cubefuse.bext's methods,
 * each one launch of a #[cube] kernel (the same on Flex and on Cube), and
 * the methods as custom ops of the random program generator.  Shared by
 * codegen/e2e_cube_fusion and runtime/test_fusion. */
#include "cubefuse_impl.h"

#include <math.h>

#include "cubefuse.h"

int cubefuse_calls[CF_COUNT];

/* y = kernel(inputs..., y), one unit per element, 256 per cube;
 * consumes a and b */
static bext_tensor *launch(bool (*k1)(const bext_grid *, bext_tensor *, bext_tensor *),
                           bool (*k2)(const bext_grid *, bext_tensor *, bext_tensor *, bext_tensor *), bext_tensor *a,
                           bext_tensor *b) {
  a = bext_contiguous(a);
  if (b) b = bext_contiguous(b);
  bext_tensor *y = a ? bext_empty(bext_shape(a), bext_rank(a), bext_dtype_of(a), bext_device_of(a)) : NULL;
  int64_t n = y ? bext_numel(y) : 0;
  bext_grid grid = {{(uint32_t)((n + 255) / 256), 1, 1}, {256, 1, 1}};
  bool ok = y && (k1 ? k1(&grid, a, y) : k2(&grid, a, b, y));
  bext_release(a);
  bext_release(b);
  if (!ok) bext_release(y);
  return ok ? y : NULL;
}

/* y = add_offset(x, s0) or shift_scale(x, s0, s1); consumes x */
static bext_tensor *launch_scalars(bool two, bext_tensor *x, double s0, double s1) {
  x = bext_contiguous(x);
  bext_tensor *y = x ? bext_empty(bext_shape(x), bext_rank(x), bext_dtype_of(x), bext_device_of(x)) : NULL;
  int64_t n = y ? bext_numel(y) : 0;
  bext_grid grid = {{(uint32_t)((n + 255) / 256), 1, 1}, {256, 1, 1}};
  bool ok = y && (two ? shift_scale_launch(&grid, x, y, s0, s1) : add_offset_launch(&grid, x, y, s0));
  bext_release(x);
  if (!ok) bext_release(y);
  return ok ? y : NULL;
}

bext_tensor *cube_fused_gelu_flex(bext_tensor *x) {
  cubefuse_calls[CF_GELU]++;
  return launch(gelu_kernel_launch, NULL, x, NULL);
}
bext_tensor *cube_fused_gelu_cube(bext_tensor *x) { return cube_fused_gelu_flex(x); }
bext_tensor *cube_fused_reverse_flex(bext_tensor *x) {
  cubefuse_calls[CF_REVERSE]++;
  return launch(reverse_kernel_launch, NULL, x, NULL);
}
bext_tensor *cube_fused_reverse_cube(bext_tensor *x) { return cube_fused_reverse_flex(x); }
bext_tensor *cube_fused_mix_flex(bext_tensor *a, bext_tensor *b) {
  cubefuse_calls[CF_MIX]++;
  return launch(NULL, soft_mix_launch, a, b);
}
bext_tensor *cube_fused_mix_cube(bext_tensor *a, bext_tensor *b) { return cube_fused_mix_flex(a, b); }
bext_tensor *cube_fused_offset_flex(bext_tensor *x, double b) {
  cubefuse_calls[CF_OFFSET]++;
  return launch_scalars(false, x, b, 0);
}
bext_tensor *cube_fused_offset_cube(bext_tensor *x, double b) { return cube_fused_offset_flex(x, b); }
/* the kernel's parameters in its own order: shift, then scale */
bext_tensor *cube_fused_affine_flex(bext_tensor *x, double scale, double shift) {
  cubefuse_calls[CF_AFFINE]++;
  return launch_scalars(true, x, shift, scale);
}
bext_tensor *cube_fused_affine_cube(bext_tensor *x, double scale, double shift) {
  return cube_fused_affine_flex(x, scale, shift);
}
bext_tensor *cube_fused_steps_flex(bext_tensor *x, int32_t n, bool up) {
  cubefuse_calls[CF_STEPS]++;
  x = bext_contiguous(x);
  bext_tensor *y = x ? bext_empty(bext_shape(x), bext_rank(x), bext_dtype_of(x), bext_device_of(x)) : NULL;
  int64_t k = y ? bext_numel(y) : 0;
  bext_grid grid = {{(uint32_t)((k + 255) / 256), 1, 1}, {256, 1, 1}};
  bool ok = y && add_steps_launch(&grid, x, y, n, up);
  bext_release(x);
  if (!ok) bext_release(y);
  return ok ? y : NULL;
}
bext_tensor *cube_fused_steps_cube(bext_tensor *x, int32_t n, bool up) { return cube_fused_steps_flex(x, n, up); }
bext_tensor *cube_fused_offset_doubled_flex(bext_tensor *x, double b) {
  cubefuse_calls[CF_DOUBLED]++;
  return launch_scalars(false, x, 2 * b, 0);
}
bext_tensor *cube_fused_offset_doubled_cube(bext_tensor *x, double b) { return cube_fused_offset_doubled_flex(x, b); }
bext_tensor *cube_fused_offset_one_flex(bext_tensor *x, double b) {
  (void)b;
  cubefuse_calls[CF_ONE]++;
  return launch_scalars(false, x, 1.0, 0);
}
bext_tensor *cube_fused_offset_one_cube(bext_tensor *x, double b) { return cube_fused_offset_one_flex(x, b); }
bext_tensor *cube_fused_offset_as_flex(bext_tensor *x, double b, bext_dtype like) {
  (void)like;
  cubefuse_calls[CF_AS]++;
  return launch_scalars(false, x, b, 0);
}
bext_tensor *cube_fused_offset_as_cube(bext_tensor *x, double b, bext_dtype like) {
  return cube_fused_offset_as_flex(x, b, like);
}

/* ------------------------------------------------ generator ops */

static bext_tensor *op_gelu(bext_tensor *x, const double *s) { return (void)s, cube_fused_gelu(x); }
static bext_tensor *op_reverse(bext_tensor *x, const double *s) { return (void)s, cube_fused_reverse(x); }
/* mix needs equal shapes: x with a function of itself */
static bext_tensor *op_mix(bext_tensor *x, const double *s) {
  (void)s;
  bext_tensor *x2 = bext_retain(x);   /* before tanh consumes x: C orders no arguments */
  return cube_fused_mix(x2, bext_tanh(x));
}
static bext_tensor *op_offset(bext_tensor *x, const double *s) { return cube_fused_offset(x, s[0]); }
static bext_tensor *op_affine(bext_tensor *x, const double *s) { return cube_fused_affine(x, s[0], s[1]); }
static bext_tensor *op_steps(bext_tensor *x, const double *s) {
  return cube_fused_steps(x, (int32_t)floor(s[0] * 2), s[1] > 0);
}

/* inexact: a body compiled on its own on one side and inlined into a
 * fused kernel on the other may differ in its last bits (gelu's erf,
 * mix's tanh, affine's multiply-add contracted or not) */
const fzp_custom_op cubefuse_program_ops[CF_PROGRAM_OPS] = {
    [CF_GELU] = {"cube_fused_gelu", 0, true, op_gelu},
    [CF_REVERSE] = {"cube_fused_reverse", 0, false, op_reverse},
    [CF_MIX] = {"cube_fused_mix", 0, true, op_mix},
    [CF_OFFSET] = {"cube_fused_offset", 1, false, op_offset},
    [CF_AFFINE] = {"cube_fused_affine", 2, true, op_affine},
    [CF_STEPS] = {"cube_fused_steps", 2, false, op_steps},
};
