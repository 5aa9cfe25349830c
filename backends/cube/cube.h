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
 *   cube_tune.c     autotune of launch parameters, with a cache file of
 *                   decisions shared by every process (cube_tune_)
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

/* The target's state in the device's ctx (made by cube_open, NULL until
 * the target's open sets it: cube:vulkan keeps its Vulkan device there;
 * cube:cpu has none).  Valid while the device is open. */
BXR_FUNC void **cube_target(struct bext_device *dev);
/* The dtypes dev's kernels hold: a bit per bext_dtype (cube_open: all of
 * them, the IR's types bool u8 i32 i64 f16 bf16 f32 f64), narrowed by a
 * target whose device lacks some (Vulkan: bf16 always, f64 / i64 / f16 /
 * 8-bit per its features); why says what it lacks, for the refusals. */
BXR_FUNC void cube_set_dtypes(struct bext_device *dev, uint32_t mask, const char *why);
BXR_FUNC bool cube_dtype_ok(struct bext_device *dev, bext_dtype dt);
/* A target's limits the host code must plan around (0: none; cube:cpu
 * has none): a cube's shared memory in bytes, and the most iterations a
 * kernel's long loop may run (llvmpipe, Mesa's CPU Vulkan, silently stops
 * a unit's loops after 65535 trips of them all together: 65279 there,
 * the rest left to a kernel's short loops).  who names the device for
 * the refusals. */
BXR_FUNC void cube_set_limits(struct bext_device *dev, uint32_t shared_max, uint32_t loop_max, const char *who);
BXR_FUNC bool cube_fits_shared(struct bext_device *dev, uint64_t bytes);
BXR_FUNC uint32_t cube_loop_max(struct bext_device *dev);   /* 0: none */
/* trips fits the loop limit; else false + "<device>: `<api>` with a loop
 * of N steps is not supported on this device (...)". */
BXR_FUNC bool cube_fits_loop(struct bxr_op *op, int64_t trips);
BXR_FUNC const char *cube_dtype_why(struct bext_device *dev);
/* What the autotuner keys a device's decisions by besides its name: the
 * hardware and driver (cube:vulkan: the Vulkan device's name; unset: the
 * host CPU's model, for cube:cpu).  Set by the target's open. */
BXR_FUNC void cube_set_identity(struct bext_device *dev, const char *identity);
BXR_FUNC const char *cube_identity(struct bext_device *dev);   /* "" when unset */
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

/* ---- autotune (cube_tune.c; docs/runtime.md "Autotune") -------------- */
/* A family of kernels whose cube_dim is tuned: candidates in increasing
 * order, the default among them (the fixed choice used untuned).  Every
 * family's cube_dim must be result-neutral: it only groups units, each of
 * which computes its output elements alone in a fixed order. */
struct cube_tune_family {
  const char *name;        /* for the docs and the cache key */
  uint32_t def;            /* untuned choice */
  int ncand;
  uint32_t cand[8];
};
BXR_DATA const struct cube_tune_family cube_tune_elementwise;   /* elementwise.bext */
BXR_DATA const struct cube_tune_family cube_tune_reduce;        /* reduce.bext, scan.bext: a line per unit */
BXR_DATA const struct cube_tune_family cube_tune_sum;           /* sum_float (shared stack of 64 units) */
/* One full run of the op with cube_dim (the real inputs, a fresh output:
 * running it again changes nothing); false + error when the launch fails
 * (a candidate the device refuses is dropped). */
typedef bool (*cube_tune_run)(void *ctx, uint32_t cube_dim);
/* The cube_dim to launch instantiation inst with on dev for a problem of
 * size0 x size1 (size1: 0 when one-dimensional), keyed by (device name,
 * cube_identity, thread count, family, inst, floor(log2) of each size).
 * The first call with a key (in any process sharing the cache folder)
 * times run with each candidate, keeps the fastest and appends it to
 * <cache root>/autotune.txt; later calls reuse it.  The default when
 * BEXT_AUTOTUNE=0, when the problem is too small to time, or when no
 * candidate ran.  run may have been called (its output is then complete)
 * or not: the caller launches with the answer either way. */
BXR_FUNC uint32_t cube_tune_dim(struct bext_device *dev, const struct cube_tune_family *f, const char *inst,
                                uint64_t size0, uint64_t size1, cube_tune_run run, void *ctx);
/* Test hook: every cube_tune_dim answers dim (when it is one of the
 * family's candidates, else the default) without timing; 0 undoes it. */
BXR_FUNC void cube_tune_force(uint32_t dim);

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

/* Reading a tensor of a target whose storage is device memory: dl copies
 * the first `bytes` of t's span to host memory (from the storage's start
 * when from_storage, t->offset counted in bytes; else from t's first
 * element), then t's view is gathered row-major into dst (contiguous
 * views land in dst directly).  1: read; 0: error set (a negative
 * stride, no memory); -1: dl failed, its reasons in ds for the target to
 * report.  The one read of cube:vulkan and cube:cuda/hip. */
typedef bool (*cube_download_fn)(const bext_tensor *t, void *host, size_t bytes, struct bxk_diags *ds);
BXR_FUNC int cube_read_view(const bext_tensor *t, void *dst, bool from_storage, cube_download_fn dl,
                            struct bxk_diags *ds);

/* The copy member of every cube target (cube_backend.c). */
BXR_FUNC bool cube_copy(bext_tensor *dst, const bext_tensor *src);

/* The exec table of every cube target, ONE list (cube:cpu's vtable in
 * cube_backend.c, cube:vulkan's in cube_vulkan.c both say
 * `.exec = CUBE_EXEC_TABLE`): the host code above is device-generic, so
 * what a target adds is storage, movement and kernel_prepare / launch.
 * Every row points somewhere (none NULL): rows a device does not run
 * fail with a named error the conformance matrix lists as unsupported. */
#define CUBE_EXEC_TABLE                                                       \
  {                                                                           \
    [BXR_OP_EMPTY] = cube_exec_create,                                        \
    [BXR_OP_ZEROS] = cube_exec_create,                                        \
    [BXR_OP_ONES] = cube_exec_create,                                         \
    [BXR_OP_FULL] = cube_exec_create,                                         \
    [BXR_OP_ARANGE] = cube_exec_create,                                       \
    [BXR_OP_RANDOM_UNIFORM] = cube_exec_create,                               \
    [BXR_OP_RANDOM_NORMAL] = cube_exec_create,                                \
    [BXR_OP_RESHAPE] = cube_exec_layout,                                      \
    [BXR_OP_SWAP_DIMS] = cube_exec_layout,                                    \
    [BXR_OP_PERMUTE] = cube_exec_layout,                                      \
    [BXR_OP_EXPAND] = cube_exec_layout,                                       \
    [BXR_OP_SLICE] = cube_exec_layout,                                        \
    [BXR_OP_SLICE_ASSIGN] = cube_exec_layout,                                 \
    [BXR_OP_CAT] = cube_exec_layout,                                          \
    [BXR_OP_FLIP] = cube_exec_layout,                                         \
    [BXR_OP_NARROW] = cube_exec_layout,                                       \
    [BXR_OP_REPEAT_DIM] = cube_exec_layout,                                   \
    [BXR_OP_MASK_WHERE] = cube_exec_mask,                                     \
    [BXR_OP_MASK_FILL] = cube_exec_mask,                                      \
    [BXR_OP_ADD] = cube_exec_elementwise,                                     \
    [BXR_OP_SUB] = cube_exec_elementwise,                                     \
    [BXR_OP_MUL] = cube_exec_elementwise,                                     \
    [BXR_OP_DIV] = cube_exec_elementwise,                                     \
    [BXR_OP_REM] = cube_exec_elementwise,                                     \
    [BXR_OP_POW] = cube_exec_elementwise,                                     \
    [BXR_OP_MAX] = cube_exec_elementwise,                                     \
    [BXR_OP_MIN] = cube_exec_elementwise,                                     \
    [BXR_OP_ADD_SCALAR] = cube_exec_elementwise,                              \
    [BXR_OP_SUB_SCALAR] = cube_exec_elementwise,                              \
    [BXR_OP_MUL_SCALAR] = cube_exec_elementwise,                              \
    [BXR_OP_DIV_SCALAR] = cube_exec_elementwise,                              \
    [BXR_OP_REM_SCALAR] = cube_exec_elementwise,                              \
    [BXR_OP_POW_SCALAR] = cube_exec_elementwise,                              \
    [BXR_OP_MAX_SCALAR] = cube_exec_elementwise,                              \
    [BXR_OP_MIN_SCALAR] = cube_exec_elementwise,                              \
    [BXR_OP_EQ] = cube_exec_elementwise,                                      \
    [BXR_OP_NE] = cube_exec_elementwise,                                      \
    [BXR_OP_GT] = cube_exec_elementwise,                                      \
    [BXR_OP_GE] = cube_exec_elementwise,                                      \
    [BXR_OP_LT] = cube_exec_elementwise,                                      \
    [BXR_OP_LE] = cube_exec_elementwise,                                      \
    [BXR_OP_EQ_SCALAR] = cube_exec_elementwise,                               \
    [BXR_OP_NE_SCALAR] = cube_exec_elementwise,                               \
    [BXR_OP_GT_SCALAR] = cube_exec_elementwise,                               \
    [BXR_OP_GE_SCALAR] = cube_exec_elementwise,                               \
    [BXR_OP_LT_SCALAR] = cube_exec_elementwise,                               \
    [BXR_OP_LE_SCALAR] = cube_exec_elementwise,                               \
    [BXR_OP_AND] = cube_exec_elementwise,                                     \
    [BXR_OP_OR] = cube_exec_elementwise,                                      \
    [BXR_OP_XOR] = cube_exec_elementwise,                                     \
    [BXR_OP_NOT] = cube_exec_elementwise,                                     \
    [BXR_OP_NEG] = cube_exec_elementwise,                                     \
    [BXR_OP_ABS] = cube_exec_elementwise,                                     \
    [BXR_OP_EXP] = cube_exec_elementwise,                                     \
    [BXR_OP_LOG] = cube_exec_elementwise,                                     \
    [BXR_OP_LOG1P] = cube_exec_elementwise,                                   \
    [BXR_OP_SQRT] = cube_exec_elementwise,                                    \
    [BXR_OP_RSQRT] = cube_exec_elementwise,                                   \
    [BXR_OP_SIN] = cube_exec_elementwise,                                     \
    [BXR_OP_COS] = cube_exec_elementwise,                                     \
    [BXR_OP_TANH] = cube_exec_elementwise,                                    \
    [BXR_OP_ERF] = cube_exec_elementwise,                                     \
    [BXR_OP_SIGMOID] = cube_exec_elementwise,                                 \
    [BXR_OP_RELU] = cube_exec_elementwise,                                    \
    [BXR_OP_RECIP] = cube_exec_elementwise,                                   \
    [BXR_OP_FLOOR] = cube_exec_elementwise,                                   \
    [BXR_OP_CEIL] = cube_exec_elementwise,                                    \
    [BXR_OP_ROUND] = cube_exec_elementwise,                                   \
    [BXR_OP_SIGN] = cube_exec_elementwise,                                    \
    [BXR_OP_CLAMP] = cube_exec_elementwise,                                   \
    [BXR_OP_POWI] = cube_exec_elementwise,                                    \
    [BXR_OP_CAST] = cube_exec_cast,                                           \
    [BXR_OP_SUM] = cube_exec_reduce,                                          \
    [BXR_OP_MEAN] = cube_exec_reduce,                                         \
    [BXR_OP_PROD] = cube_exec_reduce,                                         \
    [BXR_OP_MAX_REDUCE] = cube_exec_reduce,                                   \
    [BXR_OP_MIN_REDUCE] = cube_exec_reduce,                                   \
    [BXR_OP_ARGMAX] = cube_exec_reduce,                                       \
    [BXR_OP_ARGMIN] = cube_exec_reduce,                                       \
    [BXR_OP_ANY] = cube_exec_reduce,                                          \
    [BXR_OP_ALL] = cube_exec_reduce,                                          \
    [BXR_OP_CUMSUM] = cube_exec_cumsum,                                       \
    [BXR_OP_MATMUL] = cube_exec_matmul,                                       \
    [BXR_OP_GATHER] = cube_exec_gather,                                       \
    [BXR_OP_SELECT] = cube_exec_gather,                                       \
    [BXR_OP_SCATTER_ADD] = cube_exec_scatter_add,                             \
    [BXR_OP_SELECT_ASSIGN] = cube_exec_scatter_add,                           \
  }


#endif /* BXR_CUBE_H */
