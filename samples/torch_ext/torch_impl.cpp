// torch_impl.cpp — TorchOps::softplus on LibTorch: ATen computes it on a
// view of bext's tensor (no copy in), and the result comes back as a bext
// tensor on the same device.  ATen's exceptions stop here and become a bext
// error, as every implementation must report failure (NULL + error).
#include <bext/torch.h>

#include "torch_ext.h"

// How many times the routing chose this implementation (the driver prints
// it: the LibTorch device must reach ATen through here, not a fallback).
extern "C" int torch_impl_calls;
int torch_impl_calls;

extern "C" bext_tensor *torch_ops_softplus_libtorch(bext_tensor *x, double beta) {
  torch_impl_calls++;
  bext_tensor *y = nullptr;
  try {
    at::Tensor a = bext::torch::view(x);
    if (a.defined()) y = bext::torch::to_bext(at::softplus(a, beta), bext_device_of(x));
  } catch (const std::exception &e) {
    bext_set_error("torch_ops_softplus_libtorch: ATen: %.200s", e.what());
  }
  bext_release(x); // consumed, as the entry point's contract says
  return y;
}
