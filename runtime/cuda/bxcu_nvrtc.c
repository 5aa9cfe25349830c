/* bxcu_nvrtc.c — NVRTC loaded with dlopen: CUDA C -> PTX.
 *
 * No CUDA header and no link-time dependency: the few entry points used
 * are declared here with NVRTC's C ABI (nvrtc.h: results are an int enum,
 * a program is an opaque pointer), so libbext builds and runs on machines
 * without CUDA and reports NVRTC's absence as a diagnostic when a kernel
 * is compiled. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bxcu.h"

typedef int nvrtc_result;            /* nvrtcResult; NVRTC_SUCCESS is 0 */
typedef struct nvrtc_prog *nvrtc_prog; /* nvrtcProgram */

/* X(field, symbol, return type, parameters) */
#define BXCU_NVRTC_FNS(X)                                                                    \
  X(version, nvrtcVersion, nvrtc_result, (int *, int *))                                     \
  X(error_string, nvrtcGetErrorString, const char *, (nvrtc_result))                         \
  X(create, nvrtcCreateProgram, nvrtc_result,                                                \
    (nvrtc_prog *, const char *, const char *, int, const char *const *, const char *const *)) \
  X(destroy, nvrtcDestroyProgram, nvrtc_result, (nvrtc_prog *))                              \
  X(compile, nvrtcCompileProgram, nvrtc_result, (nvrtc_prog, int, const char *const *))      \
  X(log_size, nvrtcGetProgramLogSize, nvrtc_result, (nvrtc_prog, size_t *))                  \
  X(log, nvrtcGetProgramLog, nvrtc_result, (nvrtc_prog, char *))                             \
  X(ptx_size, nvrtcGetPTXSize, nvrtc_result, (nvrtc_prog, size_t *))                         \
  X(ptx, nvrtcGetPTX, nvrtc_result, (nvrtc_prog, char *))

struct bxcu_nvrtc {
  void *lib;
  char path[256];
  int major, minor;
#define BXCU_X_(f, sym, ret, params) ret(*f) params;
  BXCU_NVRTC_FNS(BXCU_X_)
#undef BXCU_X_
};

static const struct bxk_loc noloc;

/* Resolves every function; on failure names the first missing one. */
static bool resolve(struct bxcu_nvrtc *nv, char *why, size_t cap) {
#define BXCU_X_(f, sym, ret, params)                                         \
  *(void **)&nv->f = dlsym(nv->lib, #sym);                                   \
  if (!nv->f) {                                                              \
    snprintf(why, cap, "no %s", #sym);                                       \
    return false;                                                            \
  }
  BXCU_NVRTC_FNS(BXCU_X_)
#undef BXCU_X_
  return true;
}

/* Tries each of n candidates in order; the diagnostic names them all. */
static struct bxcu_nvrtc *open_first(const char *const *cands, int n, const char *note,
                                     struct bxk_diags *ds) {
  char tried[600] = "";
  size_t used = 0;
  struct bxcu_nvrtc *nv = calloc(1, sizeof *nv);
  if (!nv) {
    bxk_diag_add(ds, BXK_E_OOM, noloc, 0, "out of memory loading NVRTC");
    return NULL;
  }
  for (int c = 0; c < n; c++) {
    if (!cands[c]) continue;
    char why[160];
    /* NODELETE: NVRTC carries C++ runtime state (its exception pool,
     * static objects) that is not meant to be unloaded; once loaded it
     * stays, and a later open finds it again without reinitializing. */
    nv->lib = dlopen(cands[c], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    bool got = nv->lib && resolve(nv, why, sizeof why);
    if (got && nv->version(&nv->major, &nv->minor) == 0) {
      snprintf(nv->path, sizeof nv->path, "%s", cands[c]);
      return nv;
    }
    if (!nv->lib) {
      const char *e = dlerror();
      snprintf(why, sizeof why, "%s", e ? e : "dlopen failed");
    } else {
      if (got) snprintf(why, sizeof why, "nvrtcVersion failed");
      dlclose(nv->lib);
      nv->lib = NULL;
    }
    int w = snprintf(tried + used, sizeof tried - used, "%s%s (%s)", used ? "; " : "", cands[c], why);
    if (w > 0) used += (size_t)w < sizeof tried - used ? (size_t)w : sizeof tried - used - 1;
  }
  free(nv);
  bxk_diag_add(ds, BXK_E_CUDA, noloc, 0, "NVRTC not found: %.170s%s", tried, note);
  return NULL;
}

struct bxcu_nvrtc *bxcu_nvrtc_open(struct bxk_diags *ds) {
  const char *env = getenv("BEXT_NVRTC_LIB");
  bool has_env = env && *env;
  const char *cands[3] = {"libnvrtc.so.13", "libnvrtc.so", has_env ? env : NULL};
  return open_first(cands, 3, has_env ? "" : "; BEXT_NVRTC_LIB unset", ds);
}

struct bxcu_nvrtc *bxcu_nvrtc_open_at(const char *lib, struct bxk_diags *ds) {
  return open_first(&lib, 1, "", ds);
}

void bxcu_nvrtc_close(struct bxcu_nvrtc *nv) {
  if (!nv) return;
  dlclose(nv->lib);
  free(nv);
}

const char *bxcu_nvrtc_path(const struct bxcu_nvrtc *nv) { return nv->path; }

int bxcu_nvrtc_version(const struct bxcu_nvrtc *nv) { return nv->major * 1000 + nv->minor * 10; }

/* The program's log (malloc'd), or NULL when empty or unreadable. */
static char *prog_log(struct bxcu_nvrtc *nv, nvrtc_prog p) {
  size_t n = 0;
  if (nv->log_size(p, &n) != 0 || n <= 1) return NULL;
  char *s = malloc(n);
  if (s && nv->log(p, s) != 0) {
    free(s);
    return NULL;
  }
  if (s) s[n - 1] = 0;
  return s;
}

char *bxcu_nvrtc_ptx(struct bxcu_nvrtc *nv, const char *src, const char *kernel, const char *arch,
                     char **log, struct bxk_diags *ds) {
  if (log) *log = NULL;
  char archopt[64], file[96];
  snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", arch ? arch : "compute_90");
  snprintf(file, sizeof file, "%s.cu", kernel);
  /* --fmad=false: NVRTC would contract a*b+c into one fma by default,
   * rounding once where the IR (and the CPU lowering) round twice. */
  const char *opts[] = {archopt, "-default-device", "--std=c++17", "--fmad=false"};
  nvrtc_prog p = NULL;
  nvrtc_result r = nv->create(&p, src, file, 0, NULL, NULL);
  if (r != 0) {
    bxk_diag_add(ds, BXK_E_CUDA, noloc, 0, "NVRTC could not create a program for kernel %s: %s", kernel,
                 nv->error_string(r));
    return NULL;
  }
  r = nv->compile(p, (int)(sizeof opts / sizeof *opts), opts);
  char *ptx = NULL;
  if (r != 0) {
    char *l = prog_log(nv, p);
    bxk_diag_add(ds, BXK_E_CUDA, noloc, 0, "NVRTC rejected kernel %s (%s, %s): %.120s", kernel,
                 nv->error_string(r), archopt + 19, l ? l : "no log");
    if (log) *log = l;
    else free(l);
  } else {
    size_t n = 0;
    if (nv->ptx_size(p, &n) == 0 && (ptx = malloc(n + 1)) != NULL) {
      if (nv->ptx(p, ptx) != 0) {
        free(ptx);
        ptx = NULL;
      } else {
        ptx[n] = 0;
      }
    }
    if (!ptx) bxk_diag_add(ds, BXK_E_CUDA, noloc, 0, "NVRTC compiled kernel %s but its PTX could not be read", kernel);
  }
  nv->destroy(&p);
  return ptx;
}
