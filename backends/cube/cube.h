/* cube.h — the Cube backend (devices `cube:cpu`, later `cube:vulkan`,
 * `cube:cuda`, `cube:hip`): the core ops written as `.bext` kernels in
 * stdlib/cube/, embedded in libbext as serialized kernel IR (bextc
 * --emit=kir-c at build time), and compiled on first use by the device's
 * own kernel_prepare (cube:cpu: the runtime's CPU JIT).  The host code
 * here only allocates outputs, makes views and launches: the scalar
 * semantics of every op come from the IR (bxk_scalar.h through the
 * lowering), never from C in this folder (docs/runtime.md "The cube
 * backend", docs/kernels.md "The stdlib kernels").
 *
 *   cube_backend.c  the vtable and the exec table
 *   cube_kernel.c   embedded instantiations: lookup, deserialize, verify,
 *                   prepare once per device; launch of a 1-D grid
 *   cube_create.c   empty zeros ones full arange, random (the runtime's
 *                   generator, as every backend)
 *   cube_elem.c     unary, binary, _scalar, comparisons, bool logic,
 *                   cast, mask_where, mask_fill
 *   cube_layout.c   views (reshape, swap_dims, permute, expand, slice,
 *                   narrow) and copies (contiguous, cat, flip,
 *                   repeat_dim, slice_assign)
 *   cube_reduce.c   reductions and cumsum (stdlib/cube/reduce.bext, scan.bext)
 *   cube_matmul.c   batched matmul (stdlib/cube/matmul.bext)
 *   cube_index.c    gather scatter_add select select_assign (stdlib/cube/index.bext)
 *
 * Prefix cube_. */
#ifndef BXR_CUBE_H
#define BXR_CUBE_H

#include "backend.h"

#include "bxl.h"

/* The stdlib instantiation named inst (the front end's naming:
 * `unary_float_f32_2_1`, `sum_dim_f32`), prepared on dev and cached there
 * (thread-safe; the first use deserializes, verifies and prepares it
 * through dev->vt->kernel_prepare).  NULL + an error naming inst when no
 * stdlib kernel has that name or preparing it failed. */
BXR_FUNC struct bxr_kernel *cube_kernel(struct bext_device *dev, const char *inst);

/* The device's kernel cache (dev->ctx): open makes it, close frees it. */
BXR_FUNC bool cube_open(struct bext_device *dev);
BXR_FUNC void cube_close(struct bext_device *dev);
/* The embedded instantiations, all files together (tests walk them). */
BXR_FUNC uint32_t cube_stdlib_count(void);
BXR_FUNC const bext_kernel_src *cube_stdlib_row(uint32_t i);

/* Runs k on a 1-D grid covering `units` units: cube_count =
 * ceil(units / cube_dim) cubes of cube_dim units, through
 * dev->vt->kernel_launch.  units == 0 runs nothing and succeeds.
 * bindings and scalars as kernel_launch takes them (backend.h). */
BXR_FUNC bool cube_launch(struct bext_device *dev, struct bxr_kernel *k, uint32_t units,
                          uint32_t cube_dim, bext_tensor *const *bindings,
                          const union bxl_scalar *scalars);

/* Runs a kernel whose `contig` instantiation has no bounds guard over
 * exactly `units` units: the whole cubes of cube_dim units in one launch,
 * then the remainder as one cube over views of the nb bindings that start
 * at the first element left (so ABSOLUTE_POS indexes them from there).
 * Every binding must be contiguous with `units` elements. */
BXR_FUNC bool cube_launch_flat(struct bext_device *dev, struct bxr_kernel *k, uint32_t units,
                               uint32_t cube_dim, bext_tensor *const *bindings, int nb,
                               const union bxl_scalar *scalars);

/* A new contiguous tensor of spec on dev (contents undefined). */
BXR_FUNC bext_tensor *cube_alloc(struct bext_device *dev, const bext_spec *spec);

/* The kernels' element types (bool u8 i32 i64 f16 bf16 f32 f64: the IR's
 * types that a tensor dtype holds, which is every dtype). */
BXR_FUNC bool cube_dtype_ok(bext_dtype dt);
/* The IR spelling of a dtype in instantiation names ("f32", "bool"). */
BXR_FUNC const char *cube_dtype_name(bext_dtype dt);
/* Every input and the output of op have kernel dtypes; else false + the
 * error "<device>: <api> on f16 is not supported on this device (...)". */
BXR_FUNC bool cube_check_dtypes(const struct bxr_op *op);
/* Error for an op this device does not run yet:
 * "cube:cpu: `bext_sum_dim` is not implemented on this device yet".
 * Always NULL. */
BXR_FUNC bext_tensor *cube_not_yet(struct bxr_op *op);
/* Kernels index with u32: false + an error naming dev when t's element
 * count, an extent, a stride or its farthest element does not fit (or a
 * stride is negative). */
BXR_FUNC bool cube_fits_u32(struct bext_device *dev, const bext_tensor *t);

/* The scalar slot of value v converted to dtype dt the way every backend
 * stores a double (bxr_store_f64: the runtime's conversion). */
BXR_FUNC union bxl_scalar cube_scalar(bext_dtype dt, double v);
/* t seen with op->out's shape: broadcast axes get stride 0 (a view). */
BXR_FUNC bext_tensor *cube_expand_to(const bext_tensor *t, int rank, const int64_t *shape);
/* Copies src (any layout, a kernel dtype) into dst (any non-negative
 * strides, same dtype and shape) with the cast kernel; flip_mask bit d
 * reverses axis d of src. */
BXR_FUNC bool cube_copy_into(struct bext_device *dev, bext_tensor *dst, const bext_tensor *src,
                             uint32_t flip_mask);

/* ---- exec entries (cube_backend.c's table) ----------------------------- */
BXR_FUNC bext_tensor *cube_exec_create(struct bxr_op *op);
BXR_FUNC bext_tensor *cube_exec_elementwise(struct bxr_op *op);
BXR_FUNC bext_tensor *cube_exec_cast(struct bxr_op *op);
BXR_FUNC bext_tensor *cube_exec_mask(struct bxr_op *op);
BXR_FUNC bext_tensor *cube_exec_layout(struct bxr_op *op);

/* Reductions, cumsum, matmul, indexing (cube_reduce.c, cube_matmul.c,
 * cube_index.c; kernels in stdlib/cube/reduce.bext, scan.bext,
 * matmul.bext, index.bext).  One entry per family: the op code picks the
 * kernel.  cube_exec_reduce: sum mean prod max_reduce min_reduce argmax
 * argmin any all; cube_exec_gather: gather, select; cube_exec_scatter_add:
 * scatter_add, select_assign. */
BXR_FUNC bext_tensor *cube_exec_reduce(struct bxr_op *op);
BXR_FUNC bext_tensor *cube_exec_cumsum(struct bxr_op *op);
BXR_FUNC bext_tensor *cube_exec_matmul(struct bxr_op *op);
BXR_FUNC bext_tensor *cube_exec_gather(struct bxr_op *op);
BXR_FUNC bext_tensor *cube_exec_scatter_add(struct bxr_op *op);

#endif /* BXR_CUBE_H */
