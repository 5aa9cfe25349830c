/* Interim stand-in for backends/cube/cube.h (branch cube-cpu), so that the
 * host halves of the stdlib kernels can be tested on flex before the
 * cube:cpu device exists.  Same declarations as announced. */
#ifndef CUBE_SHIM_H
#define CUBE_SHIM_H
#include "backend.h"
#include "bxl.h"
#include "op.h"
struct bxr_kernel *cube_kernel(struct bext_device *dev, const char *inst);
bool cube_launch(struct bext_device *dev, struct bxr_kernel *k, uint32_t units, uint32_t cube_dim,
                 bext_tensor *const *bindings, const union bxl_scalar *scalars);
bext_tensor *cube_alloc(struct bext_device *dev, const bext_spec *spec);
bext_tensor *cube_exec_reduce(struct bxr_op *op);
bext_tensor *cube_exec_cumsum(struct bxr_op *op);
bext_tensor *cube_exec_matmul(struct bxr_op *op);
bext_tensor *cube_exec_gather(struct bxr_op *op);
bext_tensor *cube_exec_scatter_add(struct bxr_op *op);
#endif
