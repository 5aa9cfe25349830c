/* bxcu_driver.c — the GPU driver APIs, dlopen'd: CUDA's (libcuda.so.1)
 * and HIP's (libamdhip64), under the `cube:cuda:N` and `cube:hip:N`
 * devices (backends/cube/cube_cuda.c): driver and device N found and
 * named, the device's limits read, memory, modules and launches.  Where
 * there is no driver, no device, or only the stub that comes with the
 * CUDA toolkit, it says so, as "backend unavailable: ...".  The two APIs
 * differ mostly in names here, so one table holds both columns, as
 * bxcu_rtc.c does for the compilers; the few calls whose shapes differ
 * (the context, error strings) have their own fields.
 *
 * Signatures are the C ABI of cuda.h (CUDA 12/13) and hip_runtime_api.h:
 * CUdeviceptr is an unsigned 64-bit integer, hipDeviceptr_t a pointer,
 * both passed in one integer register, so one bxcu_ptr column serves
 * both.  The _v2 entry points are the ones cuda.h maps the plain names
 * to (cuMemAlloc -> cuMemAlloc_v2, size_t sizes). */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bxcu.h"

typedef int drv_result; /* CUresult / hipError_t; success is 0 */
typedef int drv_device; /* CUdevice / hipDevice_t */

typedef void *drv_handle;  /* CUcontext, CUmodule, CUfunction, and HIP's */

/* X(field, CUDA symbol, HIP symbol, return type, parameters) */
#define BXCU_DRIVER_FNS(X)                                                                       \
  X(init, cuInit, hipInit, drv_result, (unsigned))                                               \
  X(device_count, cuDeviceGetCount, hipGetDeviceCount, drv_result, (int *))                      \
  X(device_get, cuDeviceGet, hipDeviceGet, drv_result, (drv_device *, int))                      \
  X(device_name, cuDeviceGetName, hipDeviceGetName, drv_result, (char *, int, drv_device))       \
  X(attribute, cuDeviceGetAttribute, hipDeviceGetAttribute, drv_result, (int *, int, drv_device)) \
  X(mem_alloc, cuMemAlloc_v2, hipMalloc, drv_result, (bxcu_ptr *, size_t))                       \
  X(mem_free, cuMemFree_v2, hipFree, drv_result, (bxcu_ptr))                                     \
  X(htod, cuMemcpyHtoD_v2, hipMemcpyHtoD, drv_result, (bxcu_ptr, const void *, size_t))          \
  X(dtoh, cuMemcpyDtoH_v2, hipMemcpyDtoH, drv_result, (void *, bxcu_ptr, size_t))                \
  X(dtod, cuMemcpyDtoD_v2, hipMemcpyDtoD, drv_result, (bxcu_ptr, bxcu_ptr, size_t))              \
  X(memset8, cuMemsetD8_v2, hipMemsetD8, drv_result, (bxcu_ptr, unsigned char, size_t))          \
  X(module_load, cuModuleLoadDataEx, hipModuleLoadDataEx, drv_result,                           \
    (drv_handle *, const void *, unsigned, int *, void **))                                      \
  X(module_unload, cuModuleUnload, hipModuleUnload, drv_result, (drv_handle))                    \
  X(module_fn, cuModuleGetFunction, hipModuleGetFunction, drv_result,                            \
    (drv_handle *, drv_handle, const char *))                                                    \
  X(launch, cuLaunchKernel, hipModuleLaunchKernel, drv_result,                                   \
    (drv_handle, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, drv_handle, \
     void **, void **))                                                                          \
  X(synchronize, cuCtxSynchronize, hipDeviceSynchronize, drv_result, (void))                     \
  X(version, cuDriverGetVersion, hipDriverGetVersion, drv_result, (int *))

/* cuDeviceGetAttribute's numbers (cuda.h, CUdevice_attribute). */
enum {
  CU_ATTR_THREADS = 1, CU_ATTR_BLOCK_X = 2, CU_ATTR_GRID_X = 5, CU_ATTR_SHARED = 8,
  CU_ATTR_CC_MAJOR = 75, CU_ATTR_CC_MINOR = 76
};
/* CUjit_option's numbers (cuda.h). */
enum { CU_JIT_ERROR_LOG_BUFFER = 5, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6 };

struct bxcu_module {
  drv_handle mod, fn;
};

struct bxcu_driver {
  enum bxcu_vendor kind;
  void *lib;
  drv_device dev;
  int index, ndev, version_;
  char name[128];
  struct bxcu_limits lim;
  drv_handle ctx;   /* CUDA's primary context of the device (HIP: none) */
#define BXCU_X_(f, cusym, hipsym, ret, params) ret(*f) params;
  BXCU_DRIVER_FNS(BXCU_X_)
#undef BXCU_X_
  /* the error names: cuGetErrorName(r, &s) vs s = hipGetErrorName(r) */
  drv_result (*cu_error_name)(drv_result, const char **);
  const char *(*hip_error_name)(drv_result);
  /* and their text: cuGetErrorString(r, &s) vs s = hipGetErrorString(r) */
  drv_result (*cu_error_string)(drv_result, const char **);
  const char *(*hip_error_string)(drv_result);
  /* the context: CUDA retains the device's primary context and makes it
   * current per thread; HIP sets the thread's device */
  drv_result (*cu_ctx_retain)(drv_handle *, drv_device);
  drv_result (*cu_ctx_set)(drv_handle);
  drv_result (*hip_set_device)(int);
};

static const struct bxk_loc noloc;
static const char *const api[] = {[BXCU_CUDA] = "CUDA", [BXCU_HIP] = "HIP"};

/* The driver's name for r; the CUDA stub cannot even name its errors, so
 * the number (CUDA_ERROR_STUB_LIBRARY is 34) when it does not. */
static const char *err_name(struct bxcu_driver *d, drv_result r) {
  static _Thread_local char buf[32];
  const char *s = NULL;
  if (d->cu_error_name && d->cu_error_name(r, &s) == 0 && s) return s;
  if (d->hip_error_name && (s = d->hip_error_name(r)) != NULL) return s;
  snprintf(buf, sizeof buf, "%s %d", d->kind == BXCU_CUDA ? "CUresult" : "hipError_t", r);
  return buf;
}

/* A failed driver call as a diagnostic: "CUDA cuMemAlloc_v2 (4096
 * bytes): CUDA_ERROR_OUT_OF_MEMORY: out of memory"; always false. */
static bool call_failed(struct bxcu_driver *d, struct bxk_diags *ds, drv_result r, const char *what, const char *fmt,
                        ...) __attribute__((format(printf, 5, 6)));
static bool call_failed(struct bxcu_driver *d, struct bxk_diags *ds, drv_result r, const char *what, const char *fmt,
                        ...) {
  char ctx[120] = "";
  if (fmt) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx, sizeof ctx, fmt, ap);
    va_end(ap);
  }
  const char *text = NULL;
  if (d->cu_error_string && d->cu_error_string(r, &text) != 0) text = NULL;
  if (d->hip_error_string) text = d->hip_error_string(r);
  bxk_diag_add(ds, d->kind == BXCU_CUDA ? BXK_E_CUDA : BXK_E_HIP, noloc, 0, "%s %s%s%s%s: %s%s%.120s", api[d->kind],
               what, *ctx ? " (" : "", ctx, *ctx ? ")" : "", err_name(d, r), text ? ": " : "", text ? text : "");
  return false;
}

static struct bxcu_driver *fail(struct bxcu_driver *d, struct bxk_diags *ds, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static struct bxcu_driver *fail(struct bxcu_driver *d, struct bxk_diags *ds, const char *fmt, ...) {
  char msg[180];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  bxk_diag_add(ds, d->kind == BXCU_CUDA ? BXK_E_CUDA : BXK_E_HIP, noloc, 0, "backend unavailable: %s", msg);
  free(d);
  return NULL;
}

struct bxcu_driver *bxcu_driver_open_at(enum bxcu_vendor kind, const char *lib, int index,
                                        struct bxk_diags *ds) {
  struct bxcu_driver *d = calloc(1, sizeof *d);
  if (!d) {
    bxk_diag_add(ds, BXK_E_OOM, noloc, 0, "out of memory opening the %s driver", api[kind]);
    return NULL;
  }
  d->kind = kind;
  const char *A = api[kind];
  /* NODELETE: the driver keeps threads and state for the process. */
  d->lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!d->lib) {
    const char *e = dlerror();
    return fail(d, ds, "no %s driver (%.60s: %.100s)", A, lib, e ? e : "dlopen failed");
  }
#define BXCU_X_(f, cusym, hipsym, ret, params)                                          \
  {                                                                                      \
    const char *sym = kind == BXCU_CUDA ? #cusym : #hipsym;                             \
    *(void **)&d->f = dlsym(d->lib, sym);                                                \
    if (!d->f) return fail(d, ds, "no %s driver (%.60s: no %s)", A, lib, sym);           \
  }
  BXCU_DRIVER_FNS(BXCU_X_)
#undef BXCU_X_
  if (kind == BXCU_CUDA) {
    *(void **)&d->cu_error_name = dlsym(d->lib, "cuGetErrorName");
    *(void **)&d->cu_error_string = dlsym(d->lib, "cuGetErrorString");
    *(void **)&d->cu_ctx_retain = dlsym(d->lib, "cuDevicePrimaryCtxRetain");
    *(void **)&d->cu_ctx_set = dlsym(d->lib, "cuCtxSetCurrent");
    if (!d->cu_ctx_retain || !d->cu_ctx_set)
      return fail(d, ds, "no %s driver (%.60s: no cuDevicePrimaryCtxRetain / cuCtxSetCurrent)", A, lib);
  } else {
    *(void **)&d->hip_error_name = dlsym(d->lib, "hipGetErrorName");
    *(void **)&d->hip_error_string = dlsym(d->lib, "hipGetErrorString");
    *(void **)&d->hip_set_device = dlsym(d->lib, "hipSetDevice");
    if (!d->hip_set_device) return fail(d, ds, "no %s driver (%.60s: no hipSetDevice)", A, lib);
  }
  /* CUDA's stub answers CUDA_ERROR_STUB_LIBRARY; HIP without an AMD GPU
   * answers hipErrorNoDevice here already. */
  drv_result r = d->init(0);
  if (r != 0) return fail(d, ds, "no %s driver (%.60s: %s: %s)", A, lib, kind == BXCU_CUDA ? "cuInit" : "hipInit",
                          err_name(d, r));
  if ((r = d->device_count(&d->ndev)) != 0)
    return fail(d, ds, "%s driver (%.60s): device count: %s", A, lib, err_name(d, r));
  if (index < 0 || index >= d->ndev)
    return fail(d, ds, "no %s device %d (the driver sees %d)", A, index, d->ndev);
  d->index = index;
  if (d->version(&d->version_) != 0) d->version_ = 0;
  if ((r = d->device_get(&d->dev, index)) != 0 ||
      (r = d->device_name(d->name, (int)sizeof d->name, d->dev)) != 0)
    return fail(d, ds, "%s device %d: %s", A, index, err_name(d, r));
  if (kind == BXCU_CUDA) {
    static const int attrs[] = {CU_ATTR_THREADS, CU_ATTR_BLOCK_X, CU_ATTR_BLOCK_X + 1, CU_ATTR_BLOCK_X + 2,
                                CU_ATTR_GRID_X, CU_ATTR_GRID_X + 1, CU_ATTR_GRID_X + 2, CU_ATTR_SHARED,
                                CU_ATTR_CC_MAJOR, CU_ATTR_CC_MINOR};
    int v[sizeof attrs / sizeof *attrs];
    for (size_t j = 0; j < sizeof attrs / sizeof *attrs; j++)
      if ((r = d->attribute(&v[j], attrs[j], d->dev)) != 0 || v[j] < 0)
        return fail(d, ds, "CUDA device %d: cuDeviceGetAttribute(%d): %s", index, attrs[j], err_name(d, r));
    d->lim = (struct bxcu_limits){.threads = (uint32_t)v[0], .block = {(uint32_t)v[1], (uint32_t)v[2], (uint32_t)v[3]},
                                  .grid = {(uint32_t)v[4], (uint32_t)v[5], (uint32_t)v[6]}, .shared = (uint32_t)v[7],
                                  .cc_major = v[8], .cc_minor = v[9]};
    if ((r = d->cu_ctx_retain(&d->ctx, d->dev)) != 0)
      return fail(d, ds, "CUDA device %d: cuDevicePrimaryCtxRetain: %s", index, err_name(d, r));
  } else {
    /* AMD's limits on every GCN/CDNA/RDNA part: 1024 units per cube,
     * 64 KiB of LDS; grid sizes count units below 2^32 per axis */
    d->lim = (struct bxcu_limits){.threads = 1024, .block = {1024, 1024, 1024},
                                  .grid = {INT32_MAX, 65535, 65535}, .shared = 65536};
  }
  return d;
}

/* The device's context current on this thread (a thread's current
 * context is per thread, and libbext calls in from any thread). */
static bool current(struct bxcu_driver *d, struct bxk_diags *ds) {
  drv_result r = d->kind == BXCU_CUDA ? d->cu_ctx_set(d->ctx) : d->hip_set_device(d->index);
  return r == 0 || call_failed(d, ds, r, d->kind == BXCU_CUDA ? "cuCtxSetCurrent" : "hipSetDevice", NULL);
}

struct bxcu_driver *bxcu_driver_open(enum bxcu_vendor kind, int index, struct bxk_diags *ds) {
  /* $BEXT_CUDA_LIB / $BEXT_HIP_LIB name another library (a driver in an
   * odd place; the tests point it at the toolkit's stub) */
  const char *env = getenv(kind == BXCU_CUDA ? "BEXT_CUDA_LIB" : "BEXT_HIP_LIB");
  if (env && *env) return bxcu_driver_open_at(kind, env, index, ds);
  const char *lib = "libcuda.so.1";
  if (kind == BXCU_HIP) { /* ROCm 6's runtime, else Debian's ROCm 5 */
    void *h = dlopen(lib = "libamdhip64.so.6", RTLD_NOW | RTLD_LOCAL);
    if (h) dlclose(h);
    else lib = "libamdhip64.so.5";
  }
  return bxcu_driver_open_at(kind, lib, index, ds);
}

int bxcu_driver_devices(const struct bxcu_driver *d) { return d->ndev; }
const char *bxcu_driver_device_name(const struct bxcu_driver *d) { return d->name; }
const struct bxcu_limits *bxcu_driver_limits(const struct bxcu_driver *d) { return &d->lim; }
int bxcu_driver_version(const struct bxcu_driver *d) { return d->version_; }
void bxcu_driver_close(struct bxcu_driver *d) { free(d); }

/* The name of a call in messages: the column of the table. */
#define SYM(d, cusym, hipsym) ((d)->kind == BXCU_CUDA ? #cusym : #hipsym)

bool bxcu_mem_alloc(struct bxcu_driver *d, size_t bytes, bxcu_ptr *out, struct bxk_diags *ds) {
  *out = 0;
  if (!current(d, ds)) return false;
  drv_result r = d->mem_alloc(out, bytes ? bytes : 1);
  return r == 0 || call_failed(d, ds, r, SYM(d, cuMemAlloc_v2, hipMalloc), "%zu bytes", bytes);
}

bool bxcu_mem_free(struct bxcu_driver *d, bxcu_ptr p, struct bxk_diags *ds) {
  if (!p) return true;
  if (!current(d, ds)) return false;
  drv_result r = d->mem_free(p);
  return r == 0 || call_failed(d, ds, r, SYM(d, cuMemFree_v2, hipFree), NULL);
}

bool bxcu_mem_upload(struct bxcu_driver *d, bxcu_ptr dst, const void *src, size_t bytes, struct bxk_diags *ds) {
  if (!bytes) return true;
  if (!current(d, ds)) return false;
  drv_result r = d->htod(dst, src, bytes);
  return r == 0 || call_failed(d, ds, r, SYM(d, cuMemcpyHtoD_v2, hipMemcpyHtoD), "%zu bytes", bytes);
}

bool bxcu_mem_download(struct bxcu_driver *d, void *dst, bxcu_ptr src, size_t bytes, struct bxk_diags *ds) {
  if (!bytes) return true;
  if (!current(d, ds)) return false;
  drv_result r = d->dtoh(dst, src, bytes);
  return r == 0 || call_failed(d, ds, r, SYM(d, cuMemcpyDtoH_v2, hipMemcpyDtoH), "%zu bytes", bytes);
}

bool bxcu_mem_copy(struct bxcu_driver *d, bxcu_ptr dst, bxcu_ptr src, size_t bytes, struct bxk_diags *ds) {
  if (!bytes) return true;
  if (!current(d, ds)) return false;
  drv_result r = d->dtod(dst, src, bytes);
  return r == 0 || call_failed(d, ds, r, SYM(d, cuMemcpyDtoD_v2, hipMemcpyDtoD), "%zu bytes", bytes);
}

bool bxcu_mem_set8(struct bxcu_driver *d, bxcu_ptr dst, uint8_t v, size_t bytes, struct bxk_diags *ds) {
  if (!bytes) return true;
  if (!current(d, ds)) return false;
  drv_result r = d->memset8(dst, v, bytes);
  return r == 0 || call_failed(d, ds, r, SYM(d, cuMemsetD8_v2, hipMemsetD8), "%zu bytes", bytes);
}

bool bxcu_sync(struct bxcu_driver *d, struct bxk_diags *ds) {
  if (!current(d, ds)) return false;
  drv_result r = d->synchronize();
  return r == 0 || call_failed(d, ds, r, SYM(d, cuCtxSynchronize, hipDeviceSynchronize), NULL);
}

struct bxcu_module *bxcu_module_load(struct bxcu_driver *d, const void *image, const char *kernel,
                                     struct bxk_diags *ds) {
  struct bxcu_module *m = calloc(1, sizeof *m);
  if (!m) {
    bxk_diag_add(ds, BXK_E_OOM, noloc, 0, "out of memory loading kernel %s", kernel);
    return NULL;
  }
  drv_result r;
  if (!current(d, ds)) goto out;
  /* CUDA's JIT says why it rejects PTX in its error log (the PTX line
   * and ptxas's complaint): asked for, and appended to the diagnostic */
  char jit_log[512] = "";
  int opt[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *val[2] = {jit_log, (void *)(uintptr_t)sizeof jit_log};
  if ((r = d->kind == BXCU_CUDA ? d->module_load(&m->mod, image, 2, opt, val)
                                : d->module_load(&m->mod, image, 0, NULL, NULL)) != 0) {
    jit_log[sizeof jit_log - 1] = 0;
    call_failed(d, ds, r, SYM(d, cuModuleLoadDataEx, hipModuleLoadDataEx), "kernel %.60s", kernel);
    if (*jit_log) bxk_diag_add(ds, BXK_E_CUDA, noloc, 0, "the JIT's log: %.180s", jit_log);
    goto out;
  }
  if ((r = d->module_fn(&m->fn, m->mod, kernel)) != 0) {
    call_failed(d, ds, r, SYM(d, cuModuleGetFunction, hipModuleGetFunction), "kernel %.60s", kernel);
    d->module_unload(m->mod);
    goto out;
  }
  return m;
out:
  free(m);
  return NULL;
}

void bxcu_module_unload(struct bxcu_driver *d, struct bxcu_module *m) {
  if (!m) return;
  struct bxk_diags ds = {0};   /* nothing to tell: the module is gone either way */
  if (current(d, &ds)) d->module_unload(m->mod);
  free(m);
}

bool bxcu_launch(struct bxcu_driver *d, const struct bxcu_module *m, const uint32_t grid[3], const uint32_t block[3],
                 void **params, struct bxk_diags *ds) {
  if (!current(d, ds)) return false;
  /* shared memory is static (__shared__ arrays): 0 dynamic bytes; stream
   * NULL is the null stream, which orders launches and copies */
  drv_result r = d->launch(m->fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], 0, NULL, params, NULL);
  return r == 0 || call_failed(d, ds, r, SYM(d, cuLaunchKernel, hipModuleLaunchKernel),
                               "grid [%u,%u,%u], block [%u,%u,%u]", grid[0], grid[1], grid[2], block[0], block[1],
                               block[2]);
}
