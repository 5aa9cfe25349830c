// torch_shim.cpp — the libtorch peer for bext-bench (see torch_shim.h).
// Only <ATen/ATen.h> is included: <torch/torch.h> costs ~36 s to compile
// and autograd recording would add ~1.5 us per op that bext does not pay.
#include "torch_shim.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <chrono>
#include <string>

namespace {
std::string last_error;

template <class F>
double time_loop(int iters, F &&body) {
  try {
    body();  // warm-up: first-call allocations and dispatch caches
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; i++) body();
    auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / iters;
  } catch (const std::exception &e) {
    last_error = e.what();
    return -1.0;
  }
}

at::Tensor ramp(int64_t n, double scale) {
  return at::arange(n, at::kFloat).remainder(17).mul(scale);
}
}  // namespace

extern "C" int bxbt_torch_set_threads(int n) {
  try {
    at::set_num_threads(n);
    return at::get_num_threads();
  } catch (const std::exception &e) {
    last_error = e.what();
    return -1;
  }
}

extern "C" double bxbt_torch_add_ns(int64_t n, int iters) {
  at::Tensor a = ramp(n, 0.5), b = ramp(n, 0.25);
  volatile float sink = 0;
  return time_loop(iters, [&] {
    at::Tensor c = at::add(a, b);
    sink = c.data_ptr<float>()[n - 1];
  });
}

extern "C" double bxbt_torch_exp_ns(int64_t n, int iters) {
  at::Tensor a = ramp(n, 0.01);
  volatile float sink = 0;
  return time_loop(iters, [&] {
    at::Tensor c = at::exp(a);
    sink = c.data_ptr<float>()[n - 1];
  });
}

extern "C" double bxbt_torch_sum_ns(int64_t n, int iters) {
  at::Tensor a = ramp(n, 0.01);
  volatile float sink = 0;
  return time_loop(iters, [&] {
    at::Tensor c = at::sum(a);
    sink = c.item<float>();
  });
}

extern "C" double bxbt_torch_matmul_ns(int64_t n, int iters) {
  at::Tensor a = ramp(n * n, 0.01).reshape({n, n}), b = ramp(n * n, 0.02).reshape({n, n});
  volatile float sink = 0;
  return time_loop(iters, [&] {
    at::Tensor c = at::matmul(a, b);
    sink = c.data_ptr<float>()[0];
  });
}

extern "C" const char *bxbt_torch_error(void) { return last_error.c_str(); }
