/* bext/torch.h — ATen interop for LibTorch implementations (C++ only,
 * header-only; the program links libtorch itself).
 *
 * An extension method's `_libtorch` implementation receives bext tensors
 * that live on `libtorch:cpu`, whose storage is plain host memory that the
 * backend hands to ATen without copies.  These two helpers let such an
 * implementation call ATen (or a user's existing torch code) directly:
 *
 *   at::Tensor a = bext::torch::view(x);                 // shares x's memory
 *   bext_tensor *y = bext::torch::to_bext(at::softplus(a, beta), bext_device_of(x));
 *
 * Ownership follows bext.h: view BORROWS t but keeps a reference to it for
 * as long as any at::Tensor shares its memory (released by ATen's deleter),
 * so the view stays valid after the caller releases t; to_bext returns a
 * new tensor the caller owns.  Errors come back as bext errors (NULL +
 * bext_last_error()), never as C++ exceptions across the C boundary:
 * catch ATen's exceptions in the implementation (see samples/torch_ext). */
#ifndef BEXT_TORCH_H
#define BEXT_TORCH_H

#ifndef __cplusplus
#error "bext/torch.h is C++ (it speaks ATen); C implementations use bext.h's ops"
#endif

#include <ATen/ATen.h>

#include <vector>

#include <bext/bext.h>

namespace bext {
namespace torch {

/* bext's dtype as ATen's scalar type (every bext dtype has one). */
inline at::ScalarType scalar_type(bext_dtype d) {
  switch (d) {
  case BEXT_F32: return at::kFloat;
  case BEXT_F64: return at::kDouble;
  case BEXT_F16: return at::kHalf;
  case BEXT_BF16: return at::kBFloat16;
  case BEXT_I32: return at::kInt;
  case BEXT_I64: return at::kLong;
  case BEXT_U8: return at::kByte;
  case BEXT_BOOL: return at::kBool;
  default: return at::kFloat; /* BEXT_DTYPE_COUNT: no dtype */
  }
}

/* ATen's scalar type as bext's dtype; false for a type bext lacks. */
inline bool dtype_of(at::ScalarType s, bext_dtype *out) {
  switch (s) {
  case at::kFloat: *out = BEXT_F32; return true;
  case at::kDouble: *out = BEXT_F64; return true;
  case at::kHalf: *out = BEXT_F16; return true;
  case at::kBFloat16: *out = BEXT_BF16; return true;
  case at::kInt: *out = BEXT_I32; return true;
  case at::kLong: *out = BEXT_I64; return true;
  case at::kByte: *out = BEXT_U8; return true;
  case at::kBool: *out = BEXT_BOOL; return true;
  default: return false;
  }
}

/* t's elements as an at::Tensor that shares them (any layout: strides are
 * bext's, in elements).  t must be in host memory (libtorch:cpu, flex,
 * ndarray): an undefined at::Tensor and a bext error otherwise. */
inline at::Tensor view(bext_tensor *t) {
  const void *data = bext_data(t);
  if (!data && bext_numel(t) > 0) return at::Tensor(); /* bext_data set the error */
  int r = bext_rank(t);
  std::vector<int64_t> shape(bext_shape(t), bext_shape(t) + r), strides(bext_strides(t), bext_strides(t) + r);
  bext_tensor *keep = bext_retain(t);
  return at::from_blob(const_cast<void *>(data), shape, strides, [keep](void *) { bext_release(keep); },
                       at::TensorOptions().dtype(scalar_type(bext_dtype_of(t))));
}

/* A new bext tensor on dev holding a's values (copied, row-major); NULL +
 * error for a dtype bext lacks or a tensor not on the CPU. */
inline bext_tensor *to_bext(const at::Tensor &a, const bext_device *dev) {
  bext_dtype d;
  if (!a.defined() || !a.device().is_cpu() || !dtype_of(a.scalar_type(), &d)) {
    bext_set_error("bext::torch::to_bext: %s", !a.defined() ? "an undefined at::Tensor"
                                                 : !a.device().is_cpu() ? "an at::Tensor not on the CPU"
                                                                        : "an ATen dtype bext has no equivalent of");
    return nullptr;
  }
  at::Tensor c = a.contiguous();
  return bext_from_data(c.data_ptr(), d, c.sizes().data(), (int)c.dim(), dev);
}

}  // namespace torch
}  // namespace bext

#endif
