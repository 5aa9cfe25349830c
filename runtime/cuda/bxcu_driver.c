/* bxcu_driver.c — the CUDA driver API (libcuda.so.1), dlopen'd: the start
 * of the `cube:cuda:N` device.  Today it finds the driver and device N and
 * reads the device's name; it loads no module and runs nothing (the next
 * step of issue 11, item 2).  Where there is no driver, or only the stub
 * that comes with the toolkit, it says so, as "backend unavailable: ...". */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bxcu.h"

typedef int cu_result; /* CUresult; CUDA_SUCCESS is 0 */
typedef int cu_device; /* CUdevice */

/* X(field, symbol, return type, parameters) */
#define BXCU_DRIVER_FNS(X)                                          \
  X(init, cuInit, cu_result, (unsigned))                            \
  X(error_name, cuGetErrorName, cu_result, (cu_result, const char **)) \
  X(device_count, cuDeviceGetCount, cu_result, (int *))             \
  X(device_get, cuDeviceGet, cu_result, (cu_device *, int))         \
  X(device_name, cuDeviceGetName, cu_result, (char *, int, cu_device))

struct bxcu_driver {
  void *lib;
  cu_device dev;
  int ndev;
  char name[128];
#define BXCU_X_(f, sym, ret, params) ret(*f) params;
  BXCU_DRIVER_FNS(BXCU_X_)
#undef BXCU_X_
};

static const struct bxk_loc noloc;

/* The driver's name for r; the stub cannot even name its errors, so the
 * number (CUDA_ERROR_STUB_LIBRARY is 34) when it does not. */
static const char *err_name(struct bxcu_driver *d, cu_result r) {
  static _Thread_local char buf[32];
  const char *s = NULL;
  if (d->error_name(r, &s) == 0 && s) return s;
  snprintf(buf, sizeof buf, "CUresult %d", r);
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
  bxk_diag_add(ds, BXK_E_CUDA, noloc, 0, "backend unavailable: %s", msg);
  free(d);
  return NULL;
}

struct bxcu_driver *bxcu_driver_open_at(const char *lib, int index, struct bxk_diags *ds) {
  struct bxcu_driver *d = calloc(1, sizeof *d);
  if (!d) {
    bxk_diag_add(ds, BXK_E_OOM, noloc, 0, "out of memory opening the CUDA driver");
    return NULL;
  }
  /* NODELETE: the driver keeps threads and state for the process. */
  d->lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!d->lib) {
    const char *e = dlerror();
    return fail(d, ds, "no CUDA driver (%.60s: %.100s)", lib, e ? e : "dlopen failed");
  }
#define BXCU_X_(f, sym, ret, params)                                                  \
  *(void **)&d->f = dlsym(d->lib, #sym);                                              \
  if (!d->f) return fail(d, ds, "no CUDA driver (%.60s: no %s)", lib, #sym);
  BXCU_DRIVER_FNS(BXCU_X_)
#undef BXCU_X_
  cu_result r = d->init(0); /* the toolkit's stub answers CUDA_ERROR_STUB_LIBRARY */
  if (r != 0) return fail(d, ds, "no CUDA driver (%.60s: cuInit: %s)", lib, err_name(d, r));
  if ((r = d->device_count(&d->ndev)) != 0)
    return fail(d, ds, "CUDA driver (%.60s): cuDeviceGetCount: %s", lib, err_name(d, r));
  if (index < 0 || index >= d->ndev)
    return fail(d, ds, "no CUDA device %d (the driver sees %d)", index, d->ndev);
  if ((r = d->device_get(&d->dev, index)) != 0 ||
      (r = d->device_name(d->name, (int)sizeof d->name, d->dev)) != 0)
    return fail(d, ds, "CUDA device %d: %s", index, err_name(d, r));
  return d;
}

struct bxcu_driver *bxcu_driver_open(int index, struct bxk_diags *ds) {
  return bxcu_driver_open_at("libcuda.so.1", index, ds);
}

int bxcu_driver_devices(const struct bxcu_driver *d) { return d->ndev; }
const char *bxcu_driver_device_name(const struct bxcu_driver *d) { return d->name; }
void bxcu_driver_close(struct bxcu_driver *d) { free(d); }
