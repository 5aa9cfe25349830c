// torch_shim.cpp — the libtorch peer for bext-bench and bext-matrix (see
// torch_shim.h).
// Only <ATen/ATen.h> is included: <torch/torch.h> costs ~36 s to compile
// and autograd recording would add ~1.5 us per op that bext does not pay.
// The autograd peers need no more: requires_grad, backward() and grad()
// are Tensor methods, NoGradGuard is in <ATen/core/grad_mode.h>, and
// libtorch_cpu registers the autograd engine they call.
#include "torch_shim.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <cblas.h>

#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {
std::string last_error;

// libtorch's gemm is the process's one OpenBLAS, which bext keeps
// single-threaded (it splits gemm over its own pool): while libtorch is
// timed, OpenBLAS gets libtorch's thread count, as it would in a program
// of its own.
struct BlasThreads {
  int old = openblas_get_num_threads();
  BlasThreads() { openblas_set_num_threads(at::get_num_threads()); }
  ~BlasThreads() { openblas_set_num_threads(old); }
};

template <class F>
double time_loop(int iters, F &&body) {
  BlasThreads blas;
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

/* The GELU (tanh form) chain as 9 eager ops, the ops gelu_chain in
 * bext_bench.c records on flex+fusion. */
extern "C" double bxbt_torch_gelu_chain_ns(int64_t n, int iters) {
  at::Tensor x = ramp(n, 0.01);
  volatile float sink = 0;
  return time_loop(iters, [&] {
    at::Tensor t = at::mul(x, x).mul(0.044715).add(1.0).mul(x).mul(0.79788456);
    at::Tensor y = at::tanh(t).mul(0.5).add(0.5).mul(x);
    sink = y.data_ptr<float>()[n - 1];
  });
}

extern "C" double bxbt_torch_softmax_ns(int64_t rows, int64_t cols, bool log, int iters) {
  at::Tensor x = ramp(rows * cols, 0.01).reshape({rows, cols});
  volatile float sink = 0;
  return time_loop(iters, [&] {
    at::Tensor y = log ? at::log_softmax(x, 1) : at::softmax(x, 1);
    sink = y.data_ptr<float>()[rows * cols - 1];
  });
}

extern "C" double bxbt_torch_layer_norm_ns(int64_t rows, int64_t cols, int iters) {
  at::Tensor x = ramp(rows * cols, 0.01).reshape({rows, cols});
  at::Tensor w = ramp(cols, 0.02).add(1.0), b = ramp(cols, 0.03);
  volatile float sink = 0;
  return time_loop(iters, [&] {
    at::Tensor y = at::layer_norm(x, {cols}, w, b, 1e-5);
    sink = y.data_ptr<float>()[rows * cols - 1];
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

// ------------------------------------------------------ autograd peers
extern "C" double bxbt_torch_autograd_add_ns(int64_t n, int iters) {
  at::Tensor a = ramp(n, 0.5).set_requires_grad(true), b = ramp(n, 0.25).set_requires_grad(true);
  volatile float sink = 0;
  return time_loop(iters, [&] {
    at::Tensor s = at::sum(at::add(a, b));
    s.backward();
    sink = a.grad().data_ptr<float>()[n - 1] + b.grad().data_ptr<float>()[0];
    a.mutable_grad().reset();
    b.mutable_grad().reset();
  });
}

extern "C" double bxbt_torch_mlp_step_ns(const float *x, const float *w1, const float *b1, const float *w2,
                                         const float *b2, const float *y, int64_t batch, int64_t width,
                                         double lr, int iters, float *last_loss) {
  auto in = [](const float *d, std::vector<int64_t> shape) {
    return at::from_blob(const_cast<float *>(d), shape, at::kFloat).clone();
  };
  at::Tensor X = in(x, {batch, width}), Y = in(y, {batch, width});
  at::Tensor p[4] = { in(w1, {width, width}), in(b1, {width}), in(w2, {width, width}), in(b2, {width}) };
  for (at::Tensor &t : p) t.set_requires_grad(true);
  float loss_v = 0;
  double ns = time_loop(iters, [&] {
    at::Tensor h = at::relu(at::add(at::matmul(X, p[0]), p[1]));
    at::Tensor e = at::sub(at::add(at::matmul(h, p[2]), p[3]), Y);
    at::Tensor loss = at::mean(at::mul(e, e));
    loss.backward();
    {
      at::NoGradGuard no_grad;
      for (at::Tensor &t : p) t.add_(t.grad(), -lr);
    }
    for (at::Tensor &t : p) t.mutable_grad().reset();
    loss_v = loss.data_ptr<float>()[0];
  });
  *last_loss = loss_v;
  return ns;
}

// ------------------------------------------------------- the speed matrix
namespace {
// bext_dtype order (BEXT_DTYPES): f32 f64 f16 bf16 i32 i64 u8 bool.
at::ScalarType st_of(int dt) {
  static const at::ScalarType t[] = { at::kFloat, at::kDouble, at::kHalf, at::kBFloat16,
                                      at::kInt,   at::kLong,   at::kByte, at::kBool };
  if (dt < 0 || dt > 7) throw std::runtime_error("bad dtype");
  return t[dt];
}

bool is_int(const at::Tensor &t) {
  return !t.is_floating_point() && t.scalar_type() != at::kBool;
}

// A scalar typed like the tensor, so integer tensors stay integer (bext
// truncates scalars toward zero for them).
at::Scalar scalar_for(const at::Tensor &t, double v) {
  if (is_int(t)) return at::Scalar((int64_t)v);
  return at::Scalar(v);
}

at::Tensor make_input(const bxbt_in &in) {
  std::vector<int64_t> shape(in.shape, in.shape + in.rank);
  at::Tensor t = at::from_blob(const_cast<void *>(in.data), shape, at::TensorOptions().dtype(st_of(in.dtype))).clone();
  if (in.transposed) t = t.transpose(0, 1);
  return t;
}

using Body = std::function<at::Tensor()>;

// The body for op `op` over inputs x (and p), or an empty function when
// the shim maps no libtorch call for it.
Body body_for(const std::string &op, std::vector<at::Tensor> &x, const bxbt_params &p) {
  std::vector<int64_t> shape(p.shape, p.shape + p.rank);
  at::IntArrayRef sh(shape);
  at::TensorOptions o = at::TensorOptions().dtype(st_of(p.dtype));
#define U(name, expr) if (op == name) return [&x, p] { const at::Tensor &t = x[0]; (void)p; return expr; };
#define B(name, expr) if (op == name) return [&x] { const at::Tensor &t = x[0], &u = x[1]; return expr; };
  // creation
  if (op == "empty") return [shape, o] { return at::empty(shape, o); };
  if (op == "zeros") return [shape, o] { return at::zeros(shape, o); };
  if (op == "ones") return [shape, o] { return at::ones(shape, o); };
  if (op == "full") return [shape, o, p] { return at::full(shape, p.s0, o); };
  if (op == "arange") return [o, p] { return at::arange(p.s0, p.s1, 1, o); };
  if (op == "random_uniform") return [shape, o] { return at::rand(shape, o); };
  if (op == "random_normal") return [shape, o] { return at::randn(shape, o); };
  // layout: materialized (the copy a program pays when it uses the view)
  if (op == "reshape") return [&x, shape] { return x[0].reshape(shape).contiguous(); };
  if (op == "swap_dims") return [&x, p] { return x[0].transpose(p.dims[0], p.dims[1]).contiguous(); };
  if (op == "permute")
    return [&x, p] { return x[0].permute(std::vector<int64_t>(p.dims, p.dims + p.ndims)).contiguous(); };
  if (op == "expand") return [&x, shape] { return x[0].expand(shape).contiguous(); };
  if (op == "slice")
    return [&x, p] {
      at::Tensor t = x[0];
      for (int d = 0; d < p.nranges; d++) t = t.slice(d, p.start[d], p.end[d]);
      return t.contiguous();
    };
  if (op == "slice_assign")
    return [&x, p] {
      at::Tensor t = x[0].clone(), v = t;
      for (int d = 0; d < p.nranges; d++) v = v.slice(d, p.start[d], p.end[d]);
      v.copy_(x[1]);
      return t;
    };
  if (op == "cat") return [&x, p] { return at::cat({ x[0], x[1] }, p.dim); };
  if (op == "flip") return [&x, p] { return x[0].flip(std::vector<int64_t>(p.dims, p.dims + p.ndims)); };
  if (op == "narrow") return [&x, p] { return x[0].narrow(p.dim, p.i0, p.i1).contiguous(); };
  if (op == "repeat_dim")
    return [&x, p] {
      std::vector<int64_t> reps(x[0].dim(), 1);
      reps[p.dim] = p.i0;
      return x[0].repeat(reps);
    };
  // indexing
  if (op == "gather") return [&x, p] { return at::gather(x[0], p.dim, x[1]); };
  if (op == "scatter_add") return [&x, p] { return at::scatter_add(x[0], p.dim, x[1], x[2]); };
  if (op == "select") return [&x, p] { return at::index_select(x[0], p.dim, x[1]); };
  if (op == "select_assign") return [&x, p] { return at::index_add(x[0], p.dim, x[1], x[2]); };
  if (op == "mask_where") return [&x] { return at::where(x[1], x[2], x[0]); };
  if (op == "mask_fill") return [&x, p] { return x[0].masked_fill(x[1], scalar_for(x[0], p.s0)); };
  // binary
  B("add", at::add(t, u)) B("sub", at::sub(t, u)) B("mul", at::mul(t, u))
  B("div", is_int(t) ? at::div(t, u, "trunc") : at::div(t, u))
  B("rem", at::remainder(t, u)) B("pow", at::pow(t, u))
  B("max", at::maximum(t, u)) B("min", at::minimum(t, u))
  B("eq", at::eq(t, u)) B("ne", at::ne(t, u)) B("gt", at::gt(t, u))
  B("ge", at::ge(t, u)) B("lt", at::lt(t, u)) B("le", at::le(t, u))
  B("and", at::logical_and(t, u)) B("or", at::logical_or(t, u)) B("xor", at::logical_xor(t, u))
  // scalar forms
  U("add_scalar", at::add(t, scalar_for(t, p.s0))) U("sub_scalar", at::sub(t, scalar_for(t, p.s0)))
  U("mul_scalar", at::mul(t, scalar_for(t, p.s0)))
  U("div_scalar", is_int(t) ? at::div(t, scalar_for(t, p.s0), "trunc") : at::div(t, scalar_for(t, p.s0)))
  U("rem_scalar", at::remainder(t, scalar_for(t, p.s0))) U("pow_scalar", at::pow(t, scalar_for(t, p.s0)))
  U("max_scalar", at::clamp_min(t, scalar_for(t, p.s0))) U("min_scalar", at::clamp_max(t, scalar_for(t, p.s0)))
  U("eq_scalar", at::eq(t, scalar_for(t, p.s0))) U("ne_scalar", at::ne(t, scalar_for(t, p.s0)))
  U("gt_scalar", at::gt(t, scalar_for(t, p.s0))) U("ge_scalar", at::ge(t, scalar_for(t, p.s0)))
  U("lt_scalar", at::lt(t, scalar_for(t, p.s0))) U("le_scalar", at::le(t, scalar_for(t, p.s0)))
  // unary
  U("not", at::logical_not(t)) U("neg", at::neg(t)) U("abs", at::abs(t)) U("exp", at::exp(t))
  U("log", at::log(t)) U("log1p", at::log1p(t)) U("sqrt", at::sqrt(t)) U("rsqrt", at::rsqrt(t))
  U("sin", at::sin(t)) U("cos", at::cos(t)) U("tanh", at::tanh(t)) U("erf", at::erf(t))
  U("sigmoid", at::sigmoid(t)) U("relu", at::relu(t)) U("recip", at::reciprocal(t))
  U("floor", at::floor(t)) U("ceil", at::ceil(t)) U("round", at::round(t)) U("sign", at::sign(t))
  U("clamp", at::clamp(t, scalar_for(t, p.s0), scalar_for(t, p.s1)))
  U("powi", at::pow(t, at::Scalar((int64_t)p.i0)))
  // reductions: dtype kept as bext keeps it (ATen would widen ints to i64)
  U("sum", p.all ? at::sum(t, t.scalar_type()) : at::sum(t, { (int64_t)p.dim }, false, t.scalar_type()))
  U("mean", p.all ? at::mean(t) : at::mean(t, { (int64_t)p.dim }))
  U("prod", p.all ? at::prod(t, t.scalar_type()) : at::prod(t, p.dim, false, t.scalar_type()))
  U("max_reduce", p.all ? at::max(t) : at::amax(t, { (int64_t)p.dim }))
  U("min_reduce", p.all ? at::min(t) : at::amin(t, { (int64_t)p.dim }))
  U("argmax", p.all ? at::argmax(t) : at::argmax(t, p.dim))
  U("argmin", p.all ? at::argmin(t) : at::argmin(t, p.dim))
  U("any", p.all ? at::any(t) : at::any(t, p.dim)) U("all", p.all ? at::all(t) : at::all(t, p.dim))
  U("cumsum", at::cumsum(t, p.dim, t.scalar_type()))
  B("matmul", at::matmul(t, u))
  if (op == "cast") {
    at::ScalarType to = st_of(p.dtype);
    return [&x, to] { return x[0].to(to); };
  }
#undef U
#undef B
  return Body();
}
}  // namespace

struct bxbt_prep {
  std::vector<at::Tensor> x;
  Body body;
};

extern "C" bxbt_prep *bxbt_torch_prepare(const char *op, const bxbt_in *in, int n_in, const bxbt_params *p) {
  bxbt_prep *prep = new bxbt_prep;
  try {
    for (int i = 0; i < n_in; i++) prep->x.push_back(make_input(in[i]));
    prep->body = body_for(op, prep->x, *p);
    if (!prep->body) {
      last_error = "no peer";
      delete prep;
      return nullptr;
    }
    prep->body();  // ATen's "not implemented for 'Half'" shows here
    return prep;
  } catch (const std::exception &e) {
    last_error = e.what();
    size_t nl = last_error.find('\n');
    if (nl != std::string::npos) last_error.resize(nl);
    delete prep;
    return nullptr;
  }
}

extern "C" double bxbt_torch_run_ns(bxbt_prep *prep, int iters) {
  volatile int64_t sink = 0;
  return time_loop(iters, [&] {
    at::Tensor c = prep->body();
    sink = c.numel();
  });
}

extern "C" void bxbt_torch_free(bxbt_prep *prep) { delete prep; }

extern "C" const char *bxbt_torch_error(void) { return last_error.c_str(); }
