// lt_shim.cpp — the LibTorch backend's ATen side (see lt_shim.h): one
// translation unit, <ATen/ATen.h> only (no autograd: <torch/torch.h> costs
// three times the compile time and ops run under c10::InferenceMode).
//
// Storage: bext owns every buffer; inputs and the output are wrapped with
// at::from_blob over bext's pointer, shape and strides (no copy for any
// layout: transposed, sliced and expanded views are strided blobs), and
// results are written into the output blob (an ATen `_out` function, or
// copy_ from ATen's result).  The view ops answer with ATen's strides and
// offset, and bext makes a view of the same storage.
//
// bext's semantics (bext.h, bxk_scalar.h) win over ATen's; where they
// differ on libtorch 1.13 the op is adjusted here (docs/runtime.md,
// "LibTorch"):
//   - f16 and bf16 compute in f32 and round back once (bext's rule for
//     half arithmetic; ATen's CPU kernels lack Half for exp, erf, tanh,
//     cumsum, matmul, ...);
//   - integer div truncates (at::div returns floats), and x/0, x%0 are 0,
//     signed x/-1 wraps and x%-1 is 0 (ATen throws, or traps on
//     INT_MIN/-1): the divisor is masked before ATen sees it;
//   - integer pow with a negative exponent is 0 except for bases 1 and -1
//     (ATen throws);
//   - integer scalars are bext's saturated int64 (ATen would cast them to
//     the tensor's dtype first, or promote to float): out-of-range ones
//     compute in int64 and store wrapping, as bext does;
//   - float-scalar comparisons compare in double (ATen rounds the scalar
//     to the tensor's dtype);
//   - sign(NaN) is NaN (ATen's is 0);
//   - integer mean is the wrapped sum divided truncating (ATen refuses);
//   - float->int casts are done by the C side with bext's saturating rule.
#include "lt_shim.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <bext/torch.h>

#include <cstdio>
#include <limits>
#include <vector>

namespace {

at::ScalarType aten_type(bext_dtype dt) {
  if ((unsigned)dt >= BEXT_DTYPE_COUNT) throw std::invalid_argument("dtype without an ATen equivalent");
  return bext::torch::scalar_type(dt); /* the one mapping, shared with users' ATen code */
}

at::Tensor wrap(const bxlt_view &v) {
  return at::from_blob(v.data, at::IntArrayRef(v.shape, (size_t)v.rank),
                       at::IntArrayRef(v.strides, (size_t)v.rank),
                       at::TensorOptions().dtype(aten_type(v.dtype)));
}

bool is_half(const at::Tensor &t) {
  return t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16;
}
// The compute form of a float operand: f16/bf16 widened to f32.
at::Tensor up(const at::Tensor &t) { return is_half(t) ? t.to(at::kFloat) : t; }

bool fits(int64_t v, at::ScalarType st) {
  switch (st) {
  case at::kInt:
    return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
  case at::kByte: return v >= 0 && v <= 255;
  default: return true;   // kLong
  }
}

// The int operand and scalar of a scalar-form op: the tensor itself when
// the scalar fits its dtype, else both in int64 (bext computes in int64
// and stores wrapping; copy_ into the output wraps the same way).
at::Tensor int_operand(const at::Tensor &a, int64_t s) { return fits(s, a.scalar_type()) ? a : a.to(at::kLong); }

// bext's integer division: truncating, x/0 = 0, signed x/-1 = -x wrapping.
at::Tensor int_div(const at::Tensor &a, const at::Tensor &b) {
  bool sgn = a.scalar_type() != at::kByte;
  at::Tensor zero = b.eq(0);
  at::Tensor bad = sgn ? zero.logical_or(b.eq(-1)) : zero;
  at::Tensor q = at::div(a, b.masked_fill(bad, 1), "trunc");
  if (sgn) q = at::where(b.eq(-1), a.neg(), q);
  return q.masked_fill(zero, 0);
}

// bext's integer remainder: floored (ATen's too), x%0 = 0, x%-1 = 0;
// masking those divisors to 1 gives 0 and never traps.
at::Tensor int_rem(const at::Tensor &a, const at::Tensor &b) {
  at::Tensor bad = b.eq(0);
  if (a.scalar_type() != at::kByte) bad = bad.logical_or(b.eq(-1));
  return at::remainder(a, b.masked_fill(bad, 1));
}

// bext's integer pow: wrapping; a negative exponent gives 0 except for the
// bases 1 (1) and -1 (-1 for odd exponents, 1 for even).
at::Tensor int_pow(const at::Tensor &a, const at::Tensor &e) {
  if (a.scalar_type() == at::kByte) return at::pow(a, e);
  at::Tensor neg = e.lt(0);
  at::Tensor p = at::pow(a, e.masked_fill(neg, 0));
  at::Tensor one = at::ones({}, a.options()), m1 = at::full({}, -1, a.options());
  at::Tensor odd = at::bitwise_and(e, 1).ne(0);
  at::Tensor negres = at::where(a.eq(1), one,
                                at::where(a.eq(-1), at::where(odd, m1, one), at::zeros({}, a.options())));
  return at::where(neg, negres, p);
}

at::Tensor scalar_of(const at::Tensor &like, int64_t v) { return at::full({}, v, like.options()); }

// Binary arithmetic (tensor-tensor or, with b a 0-dim tensor, scalar form).
at::Tensor binary(enum bxr_opcode code, const at::Tensor &a, const at::Tensor &b) {
  bool flt = at::isFloatingType(a.scalar_type());
  switch (code) {
  case BXR_OP_ADD: case BXR_OP_ADD_SCALAR: return at::add(a, b);
  case BXR_OP_SUB: case BXR_OP_SUB_SCALAR: return at::sub(a, b);
  case BXR_OP_MUL: case BXR_OP_MUL_SCALAR: return at::mul(a, b);
  case BXR_OP_DIV: case BXR_OP_DIV_SCALAR: return flt ? at::div(a, b) : int_div(a, b);
  case BXR_OP_REM: case BXR_OP_REM_SCALAR: return flt ? at::remainder(a, b) : int_rem(a, b);
  case BXR_OP_POW: case BXR_OP_POW_SCALAR: return flt ? at::pow(a, b) : int_pow(a, b);
  case BXR_OP_MAX: case BXR_OP_MAX_SCALAR: return at::maximum(a, b);
  case BXR_OP_MIN: case BXR_OP_MIN_SCALAR: return at::minimum(a, b);
  default: break;
  }
  throw std::logic_error("not a binary op");
}

at::Tensor compare(enum bxr_opcode code, const at::Tensor &a, const at::Tensor &b) {
  switch (code) {
  case BXR_OP_EQ: case BXR_OP_EQ_SCALAR: return at::eq(a, b);
  case BXR_OP_NE: case BXR_OP_NE_SCALAR: return at::ne(a, b);
  case BXR_OP_GT: case BXR_OP_GT_SCALAR: return at::gt(a, b);
  case BXR_OP_GE: case BXR_OP_GE_SCALAR: return at::ge(a, b);
  case BXR_OP_LT: case BXR_OP_LT_SCALAR: return at::lt(a, b);
  case BXR_OP_LE: case BXR_OP_LE_SCALAR: return at::le(a, b);
  default: break;
  }
  throw std::logic_error("not a comparison");
}

at::Tensor unary_float(enum bxr_opcode code, const at::Tensor &x, const bxlt_call &c) {
  switch (code) {
  case BXR_OP_EXP: return at::exp(x);
  case BXR_OP_LOG: return at::log(x);
  case BXR_OP_LOG1P: return at::log1p(x);
  case BXR_OP_SQRT: return at::sqrt(x);
  case BXR_OP_RSQRT: return at::rsqrt(x);
  case BXR_OP_SIN: return at::sin(x);
  case BXR_OP_COS: return at::cos(x);
  case BXR_OP_TANH: return at::tanh(x);
  case BXR_OP_ERF: return at::erf(x);
  case BXR_OP_SIGMOID: return at::sigmoid(x);
  case BXR_OP_RECIP: return at::reciprocal(x);
  case BXR_OP_FLOOR: return at::floor(x);
  case BXR_OP_CEIL: return at::ceil(x);
  case BXR_OP_ROUND: return at::round(x);   // half to even, as bext
  case BXR_OP_POWI: return at::pow(x, (double)c.sc[0].i);
  default: break;
  }
  throw std::logic_error("not a float unary op");
}

// The reduction of x as bext's row says: whole tensor (at.all) or one dim.
at::Tensor reduce(enum bxr_opcode code, const at::Tensor &x, const bext_attrs &at) {
  bool all = at.all, kd = at.keepdim;
  int64_t d = at.dim;
  at::IntArrayRef dims(&d, 1);
  bool flt = at::isFloatingType(x.scalar_type());
  at::ScalarType st = x.scalar_type();
  switch (code) {
  case BXR_OP_SUM:
    if (flt) return all ? at::sum(x) : at::sum(x, dims, kd);
    return all ? at::sum(x, st) : at::sum(x, dims, kd, st);   // wrapping, in the dtype
  case BXR_OP_MEAN: {
    if (flt) return all ? at::mean(x) : at::mean(x, dims, kd);
    at::Tensor s = all ? at::sum(x, st) : at::sum(x, dims, kd, st);
    int64_t ext = all ? x.numel() : x.size(d);
    return ext ? at::div(s, ext, "trunc") : at::zeros_like(s);
  }
  case BXR_OP_PROD: return all ? at::prod(x, st) : at::prod(x, d, kd, st);
  case BXR_OP_MAX_REDUCE: return all ? at::max(x) : at::amax(x, dims, kd);
  case BXR_OP_MIN_REDUCE: return all ? at::min(x) : at::amin(x, dims, kd);
  case BXR_OP_ARGMAX: return all ? at::argmax(x) : at::argmax(x, d, kd);
  case BXR_OP_ARGMIN: return all ? at::argmin(x) : at::argmin(x, d, kd);
  case BXR_OP_ANY: return all ? at::any(x) : at::any(x, d, kd);
  case BXR_OP_ALL: return all ? at::all(x) : at::all(x, d, kd);
  default: break;
  }
  throw std::logic_error("not a reduction");
}

enum bxlt_status view_op(bxlt_call &c, const at::Tensor &a) {
  const bext_attrs &at = *c.at;
  at::Tensor r;
  switch (c.code) {
  case BXR_OP_RESHAPE: {
    at::IntArrayRef shape(at.shape, (size_t)at.rank);
    if (c.out.data) {   // second call: no view expresses it, copy into out
      wrap(c.out).view(a.sizes()).copy_(a);
      return BXLT_OK;
    }
    r = a.reshape(shape);
    if (!r.is_alias_of(a)) return BXLT_NEED_OUT;
    break;
  }
  case BXR_OP_SWAP_DIMS: r = a.transpose(at.dims[0], at.dims[1]); break;
  case BXR_OP_PERMUTE: r = a.permute(at::IntArrayRef(std::vector<int64_t>(at.dims, at.dims + at.ndims))); break;
  case BXR_OP_EXPAND: r = a.expand(at::IntArrayRef(at.shape, (size_t)at.rank)); break;
  case BXR_OP_SLICE:
    r = a;
    for (int d = 0; d < at.nranges; d++) r = r.slice(d, at.start[d], std::max(at.start[d], at.end[d]));
    break;
  case BXR_OP_NARROW: r = a.narrow(at.dim, c.sc[0].i, c.sc[1].i); break;
  default: throw std::logic_error("not a view op");
  }
  for (int64_t d = 0; d < r.dim(); d++) c.view_strides[d] = r.stride(d);
  c.view_offset = r.storage_offset();
  return BXLT_VIEW;
}

enum bxlt_status run(bxlt_call &c) {
  c10::InferenceMode guard;
  const bext_attrs &at = *c.at;
  std::vector<at::Tensor> in;
  in.reserve((size_t)c.n_in);
  for (int k = 0; k < c.n_in; k++) in.push_back(wrap(c.in[k]));
  at::Tensor a = c.n_in > 0 ? in[0] : at::Tensor();
  switch (c.code) {
  case BXR_OP_RESHAPE: case BXR_OP_SWAP_DIMS: case BXR_OP_PERMUTE: case BXR_OP_EXPAND:
  case BXR_OP_SLICE: case BXR_OP_NARROW:
    return view_op(c, a);
  default: break;
  }
  at::Tensor o = wrap(c.out);
  bool flt = a.defined() && at::isFloatingType(a.scalar_type());
  switch (c.code) {
  /* creation (arange and the random ops are filled by the C side) */
  case BXR_OP_EMPTY: case BXR_OP_ZEROS: o.zero_(); break;   // never uninitialized memory
  case BXR_OP_ONES: o.fill_(1); break;
  case BXR_OP_FULL:
    if (at::isFloatingType(o.scalar_type())) o.fill_(c.fill_f);
    else o.fill_(c.fill_i);
    break;
  /* layout that copies */
  case BXR_OP_SLICE_ASSIGN: {
    o.copy_(a);
    at::Tensor v = o;
    for (int d = 0; d < at.nranges; d++) v = v.slice(d, at.start[d], std::max(at.start[d], at.end[d]));
    v.copy_(in[1]);
    break;
  }
  case BXR_OP_CAT: at::cat_out(o, in, at.dim); break;
  case BXR_OP_FLIP: o.copy_(at::flip(a, at::IntArrayRef(std::vector<int64_t>(at.dims, at.dims + at.ndims)))); break;
  case BXR_OP_REPEAT_DIM: {
    std::vector<int64_t> reps((size_t)a.dim(), 1);
    reps[(size_t)at.dim] = c.sc[0].i;
    o.copy_(a.repeat(reps));
    break;
  }
  /* indexing (index values were checked by the C side) */
  case BXR_OP_GATHER: at::gather_out(o, a, at.dim, in[1].to(at::kLong)); break;
  case BXR_OP_SCATTER_ADD:
    if (is_half(a)) o.copy_(up(a).scatter_add(at.dim, in[1].to(at::kLong), up(in[2])));
    else o.copy_(a).scatter_add_(at.dim, in[1].to(at::kLong), in[2]);
    break;
  case BXR_OP_SELECT: at::index_select_out(o, a, at.dim, in[1].to(at::kLong)); break;
  case BXR_OP_SELECT_ASSIGN:   // bext's select_assign adds (index_add)
    if (is_half(a)) o.copy_(up(a).index_add(at.dim, in[1].to(at::kLong), up(in[2])));
    else o.copy_(a).index_add_(at.dim, in[1].to(at::kLong), in[2]);
    break;
  case BXR_OP_MASK_WHERE: o.copy_(at::where(in[1], in[2], a)); break;
  case BXR_OP_MASK_FILL: {
    at::Tensor v = at::isFloatingType(a.scalar_type()) ? at::full({}, c.fill_f, a.options())
                                                        : at::full({}, c.fill_i, a.options());
    o.copy_(at::where(in[1], v, a));
    break;
  }
  /* binary arithmetic: the hot f32/f64 forms straight into the output */
  case BXR_OP_ADD: case BXR_OP_SUB: case BXR_OP_MUL: case BXR_OP_DIV: case BXR_OP_REM:
  case BXR_OP_POW: case BXR_OP_MAX: case BXR_OP_MIN:
    if (!is_half(a) && c.code == BXR_OP_ADD) at::add_out(o, a, in[1]);
    else if (!is_half(a) && c.code == BXR_OP_SUB) at::sub_out(o, a, in[1]);
    else if (!is_half(a) && c.code == BXR_OP_MUL) at::mul_out(o, a, in[1]);
    else if (flt && !is_half(a) && c.code == BXR_OP_DIV) at::div_out(o, a, in[1]);
    else o.copy_(binary(c.code, up(a), up(in[1])));
    break;
  case BXR_OP_ADD_SCALAR: case BXR_OP_SUB_SCALAR: case BXR_OP_MUL_SCALAR: case BXR_OP_DIV_SCALAR:
  case BXR_OP_REM_SCALAR: case BXR_OP_POW_SCALAR: case BXR_OP_MAX_SCALAR: case BXR_OP_MIN_SCALAR:
    if (flt) {
      at::Tensor x = up(a);
      o.copy_(binary(c.code, x, at::full({}, c.sc[0].f, x.options())));
    } else {
      at::Tensor x = int_operand(a, c.i[0]);
      o.copy_(binary(c.code, x, scalar_of(x, c.i[0])));
    }
    break;
  case BXR_OP_EQ: case BXR_OP_NE: case BXR_OP_GT: case BXR_OP_GE: case BXR_OP_LT: case BXR_OP_LE:
    o.copy_(compare(c.code, a, in[1]));   // same dtype: exact in any dtype
    break;
  case BXR_OP_EQ_SCALAR: case BXR_OP_NE_SCALAR: case BXR_OP_GT_SCALAR: case BXR_OP_GE_SCALAR:
  case BXR_OP_LT_SCALAR: case BXR_OP_LE_SCALAR:
    if (flt) {
      at::Tensor x = a.to(at::kDouble);   // bext compares in double
      o.copy_(compare(c.code, x, at::full({}, c.sc[0].f, x.options())));
    } else {
      at::Tensor x = int_operand(a, c.i[0]);
      o.copy_(compare(c.code, x, scalar_of(x, c.i[0])));
    }
    break;
  case BXR_OP_AND: at::logical_and_out(o, a, in[1]); break;
  case BXR_OP_OR: at::logical_or_out(o, a, in[1]); break;
  case BXR_OP_XOR: at::logical_xor_out(o, a, in[1]); break;
  case BXR_OP_NOT: at::logical_not_out(o, a); break;
  /* unary */
  case BXR_OP_NEG:
    // ATen's neg refuses nothing but bool; u8 wraps like bext's.
    o.copy_(flt ? at::neg(up(a)) : a.scalar_type() == at::kByte ? at::sub(at::zeros_like(a), a) : at::neg(a));
    break;
  case BXR_OP_ABS: o.copy_(at::abs(up(a))); break;
  case BXR_OP_RELU: o.copy_(at::relu(up(a))); break;
  case BXR_OP_SIGN: {
    at::Tensor x = up(a);
    o.copy_(flt ? at::where(at::isnan(x), x, at::sign(x)) : at::sign(x));   // sign(NaN) = NaN
    break;
  }
  case BXR_OP_CLAMP: {   // inference guarantees lo <= hi
    at::Tensor x = up(a);
    if (flt) {
      o.copy_(at::clamp(x, c.sc[0].f, c.sc[1].f));
    } else {
      if (!fits(c.i[0], x.scalar_type()) || !fits(c.i[1], x.scalar_type())) x = x.to(at::kLong);
      o.copy_(at::clamp(x, c.i[0], c.i[1]));
    }
    break;
  }
  case BXR_OP_EXP: case BXR_OP_LOG: case BXR_OP_LOG1P: case BXR_OP_SQRT: case BXR_OP_RSQRT:
  case BXR_OP_SIN: case BXR_OP_COS: case BXR_OP_TANH: case BXR_OP_ERF: case BXR_OP_SIGMOID:
  case BXR_OP_RECIP: case BXR_OP_FLOOR: case BXR_OP_CEIL: case BXR_OP_ROUND: case BXR_OP_POWI:
    o.copy_(unary_float(c.code, up(a), c));
    break;
  /* reductions, cumsum, matmul */
  case BXR_OP_SUM: case BXR_OP_MEAN: case BXR_OP_PROD: case BXR_OP_MAX_REDUCE: case BXR_OP_MIN_REDUCE:
  case BXR_OP_ARGMAX: case BXR_OP_ARGMIN: case BXR_OP_ANY: case BXR_OP_ALL:
    o.copy_(reduce(c.code, up(a), at));
    break;
  case BXR_OP_CUMSUM:
    if (flt) o.copy_(at::cumsum(up(a), at.dim));
    else at::cumsum_out(o, a, at.dim, a.scalar_type());   // wrapping, in the dtype
    break;
  case BXR_OP_MATMUL:
    if (is_half(a)) o.copy_(at::matmul(up(a), up(in[1])));
    else at::matmul_out(o, a, in[1]);
    break;
  case BXR_OP_CAST: o.copy_(a); break;   // float->int casts never get here (lt_backend.c)
  default: throw std::logic_error("op not handled by the libtorch shim");
  }
  return BXLT_OK;
}

}  // namespace

extern "C" enum bxlt_status bxlt_run(struct bxlt_call *c, char *err, size_t errn) {
  try {
    return run(*c);
  } catch (const c10::Error &e) {
    snprintf(err, errn, "%s", e.what_without_backtrace());
  } catch (const std::exception &e) {
    snprintf(err, errn, "%s", e.what());
  } catch (...) {
    snprintf(err, errn, "unknown C++ exception");
  }
  return BXLT_ERROR;
}

extern "C" bool bxlt_target_ok(const char *target, int index, char *err, size_t errn) {
  if (std::string(target) == "cpu") return true;
  // Tensors of this backend are bext host memory wrapped by from_blob; a
  // CUDA target needs device storage, which this backend does not have yet.
  bool cuda = false;
  try {
    cuda = at::hasCUDA();
  } catch (...) {
  }
  snprintf(err, errn, "%s:%d is not supported (this libtorch %s CUDA; the backend serves cpu only)", target, index,
           cuda ? "has" : "was built without");
  return false;
}

/* The plugin's one export (lt_shim.h): libbext finds it with dlsym. */
extern "C" __attribute__((visibility("default"))) const struct bxlt_api bxlt_api_v1 = {
    BXLT_API_VERSION, bxlt_run, bxlt_target_ok};
