/* sgd.c — bext_sgd_step: a parameter's plain SGD update, p - lr * g, as
 * one pass over the parameter, in place when it is uniquely held.
 *
 * Why a call of its own: written with core ops the update is two passes
 * (bext_mul_scalar makes lr * g, bext_sub subtracts it), and on an
 * autodiff device the wrapper dance around them (detach, then
 * require_grad) keeps the old buffer alive until the new one is made.  On
 * the MLP training step of `make bench` the two passes over the weights
 * took 14% of the step (perf), more than anything outside the gemms.
 *
 * The values are those of bext_sub(p, bext_mul_scalar(g, lr)) bit for bit:
 * the element rule is the composition of the two ops' rules (bext.h), so
 * no new semantics live here.  The one-pass kernel covers f32 and f64
 * contiguous tensors of eager host-memory backends; everything else (other
 * dtypes, strided views, device memory, lazy devices) runs the two core
 * ops, which every backend has. */
#include <string.h>

#include "autodiff.h"

typedef float bxsg_v8f __attribute__((vector_size(32)));
typedef double bxsg_v8d __attribute__((vector_size(64)));

/* f32: mul_scalar gives (float)((double)g * lr) (the f64 product rounded
 * once, also when lr is exact in f32: the product of two floats is exact
 * in double), then sub is an f32 subtraction.  Eight lanes in f64,
 * compiled for the baseline ISA, AVX2 and AVX-512F, the widest the CPU
 * has chosen per call: the conversions make it compute-bound (0.65
 * cycles an element on AVX2 with the data in cache), not memory-bound. */
#define BXSG_F32_LOOP                                                    \
  const bxsg_v8d s = {lr, lr, lr, lr, lr, lr, lr, lr};                   \
  size_t i = 0;                                                          \
  for (; i + 8 <= n; i += 8) {                                           \
    bxsg_v8f pv, gv;                                                     \
    memcpy(&pv, p + i, sizeof pv);                                       \
    memcpy(&gv, g + i, sizeof gv);                                       \
    pv -= __builtin_convertvector(__builtin_convertvector(gv, bxsg_v8d) * s, bxsg_v8f); \
    memcpy(o + i, &pv, sizeof pv);                                       \
  }                                                                      \
  for (; i < n; i++) o[i] = p[i] - (float)((double)g[i] * lr);

static void f32_base(const float *p, const float *g, float *o, size_t n, double lr) { BXSG_F32_LOOP }
#if defined(__x86_64__)
__attribute__((target("avx2"))) static void f32_avx2(const float *p, const float *g, float *o, size_t n,
                                                      double lr) {
  BXSG_F32_LOOP
}
__attribute__((target("avx512f"))) static void f32_avx512(const float *p, const float *g, float *o, size_t n,
                                                          double lr) {
  BXSG_F32_LOOP
}
#endif
#undef BXSG_F32_LOOP

static void f64_loop(const double *p, const double *g, double *o, size_t n, double lr) {
  for (size_t i = 0; i < n; i++) o[i] = p[i] - g[i] * lr;
}

struct bxsg_job {
  bool f64;
  double lr;
  const char *p, *g;
  char *o;
  void (*f32)(const float *, const float *, float *, size_t, double);
};

static void chunk(void *ctx, size_t b, size_t e) {
  const struct bxsg_job *J = ctx;
  if (J->f64)
    f64_loop((const double *)(const void *)J->p + b, (const double *)(const void *)J->g + b,
             (double *)(void *)J->o + b, e - b, J->lr);
  else
    J->f32((const float *)(const void *)J->p + b, (const float *)(const void *)J->g + b, (float *)(void *)J->o + b,
           e - b, J->lr);
}

/* p (OWNED) - lr * g (BORROWED) on a plain device, p and g checked alike
 * (device, dtype, shape).  NULL + error. */
static bext_tensor *update(bext_tensor *p, const bext_tensor *g, double lr) {
  /* host memory of an eager backend (no queued work could still write
   * p or g) */
  bool fast = p->device->vt->host_memory && !p->device->vt->sync && (p->dtype == BEXT_F32 || p->dtype == BEXT_F64) &&
              bxr_is_contiguous(p) && bxr_is_contiguous(g);
  if (!fast) return bext_sub(p, bext_mul_scalar(bext_retain((bext_tensor *)g), lr));
  bext_tensor *o = bxr_is_unique(p) ? bext_retain(p) : bxr_tensor_new(p->device, p->dtype, p->rank, p->shape);
  if (o) {
    struct bxsg_job J = {.f64 = p->dtype == BEXT_F64, .lr = lr, .p = bxr_data(p), .g = bxr_data(g), .o = bxr_data(o),
                         .f32 = f32_base};
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f")) J.f32 = f32_avx512;
    else if (__builtin_cpu_supports("avx2")) J.f32 = f32_avx2;
#endif
    bxr_pool_for((size_t)bxr_numel(p->rank, p->shape), 1, 16, chunk, &J);
  }
  bext_release(p);
  return o;
}

bext_tensor *bext_sgd_step(bext_tensor *param, const bext_tensor *grad, double lr) {
  const char *api = "bext_sgd_step";
  if (!param || !grad) {
    bxr_error_null("%s: the %s is NULL%s", api, param ? "gradient" : "parameter",
                   param ? " (bext_grad gives NULL for a parameter the loss does not reach)" : "");
    bext_release(param);
    return NULL;
  }
  char a[200], b[200];
  bool ok = true;
  if (param->device != grad->device)
    ok = bxr_error("%s: the parameter is on %s, its gradient on %s", api, param->device->name, grad->device->name);
  else if (param->dtype != grad->dtype || !bxr_same_shape(param->rank, param->shape, grad->rank, grad->shape))
    ok = bxr_error("%s: the gradient %s does not match the parameter %s", api, bxr_describe(grad, b, sizeof b),
                   bxr_describe(param, a, sizeof a));
  else if (!((1u << bxr_dtype_kind(param->dtype)) & BXR_KF))
    ok = bxr_error("%s: the parameter %s is not a float tensor", api, bxr_describe(param, a, sizeof a));
  if (!ok) {
    bext_release(param);
    return NULL;
  }
  if (param->device->vt != &bxad_backend) return update(param, grad, lr);
  /* An autodiff device: the update runs on the inner tensors, outside the
   * graph, and a tracked parameter comes back as a new leaf. */
  struct bext_device *dev = param->device;
  bool tracked = false;
  bext_tensor *inner = bxad_take_inner(param, &tracked);
  if (!inner) return NULL;
  return bxad_wrap(dev, update(inner, bxad_inner(grad), lr), tracked);
}
