/* bxcu_driver.c — the GPU driver APIs, dlopen'd: CUDA's (libcuda.so.1)
 * and HIP's (libamdhip64), the start of the `cube:cuda:N` and
 * `cube:hip:N` devices.  Today it finds the driver and device N and reads
 * the device's name; it loads no module and runs nothing yet (issue 11,
 * items 2 and 3).  Where there is no driver, no device, or only the stub
 * that comes with the CUDA toolkit, it says so, as "backend unavailable:
 * ...".  The two APIs differ only in names here, so one table holds both
 * columns, as bxcu_rtc.c does for the compilers. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bxcu.h"

typedef int drv_result; /* CUresult / hipError_t; success is 0 */
typedef int drv_device; /* CUdevice / hipDevice_t */

/* X(field, CUDA symbol, HIP symbol, return type, parameters) */
#define BXCU_DRIVER_FNS(X)                                                             \
  X(init, cuInit, hipInit, drv_result, (unsigned))                                     \
  X(device_count, cuDeviceGetCount, hipGetDeviceCount, drv_result, (int *))            \
  X(device_get, cuDeviceGet, hipDeviceGet, drv_result, (drv_device *, int))            \
  X(device_name, cuDeviceGetName, hipDeviceGetName, drv_result, (char *, int, drv_device))

struct bxcu_driver {
  enum bxcu_vendor kind;
  void *lib;
  drv_device dev;
  int ndev;
  char name[128];
#define BXCU_X_(f, cusym, hipsym, ret, params) ret(*f) params;
  BXCU_DRIVER_FNS(BXCU_X_)
#undef BXCU_X_
  /* the error names: cuGetErrorName(r, &s) vs s = hipGetErrorName(r) */
  drv_result (*cu_error_name)(drv_result, const char **);
  const char *(*hip_error_name)(drv_result);
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
  if (kind == BXCU_CUDA) *(void **)&d->cu_error_name = dlsym(d->lib, "cuGetErrorName");
  else *(void **)&d->hip_error_name = dlsym(d->lib, "hipGetErrorName");
  /* CUDA's stub answers CUDA_ERROR_STUB_LIBRARY; HIP without an AMD GPU
   * answers hipErrorNoDevice here already. */
  drv_result r = d->init(0);
  if (r != 0) return fail(d, ds, "no %s driver (%.60s: %s: %s)", A, lib, kind == BXCU_CUDA ? "cuInit" : "hipInit",
                          err_name(d, r));
  if ((r = d->device_count(&d->ndev)) != 0)
    return fail(d, ds, "%s driver (%.60s): device count: %s", A, lib, err_name(d, r));
  if (index < 0 || index >= d->ndev)
    return fail(d, ds, "no %s device %d (the driver sees %d)", A, index, d->ndev);
  if ((r = d->device_get(&d->dev, index)) != 0 ||
      (r = d->device_name(d->name, (int)sizeof d->name, d->dev)) != 0)
    return fail(d, ds, "%s device %d: %s", A, index, err_name(d, r));
  return d;
}

struct bxcu_driver *bxcu_driver_open(enum bxcu_vendor kind, int index, struct bxk_diags *ds) {
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
void bxcu_driver_close(struct bxcu_driver *d) { free(d); }
