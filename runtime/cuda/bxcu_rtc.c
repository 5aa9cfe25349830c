/* bxcu_rtc.c — the GPU runtime compilers, loaded with dlopen: CUDA C ->
 * PTX through NVRTC, and the same source -> an AMDGPU code object through
 * hiprtc (HIP compiles CUDA C as HIP C: the emitted source needs no second
 * dialect).
 *
 * No CUDA or ROCm header and no link-time dependency: the entry points are
 * declared here with their C ABI (both libraries return an int enum whose
 * success is 0, and a program is an opaque pointer).  hiprtc's API is
 * NVRTC's function for function, so one table names both: the vendor
 * picks the column, and libbext builds and runs on machines with neither,
 * reporting a missing compiler as a diagnostic when a kernel is compiled. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bxcu.h"

typedef int rtc_result;                /* nvrtcResult / hiprtcResult; success is 0 */
typedef struct rtc_prog *rtc_prog;     /* nvrtcProgram / hiprtcProgram */

/* X(field, NVRTC symbol, hiprtc symbol, return type, parameters) */
#define BXCU_RTC_FNS(X)                                                                        \
  X(version, nvrtcVersion, hiprtcVersion, rtc_result, (int *, int *))                          \
  X(error_string, nvrtcGetErrorString, hiprtcGetErrorString, const char *, (rtc_result))       \
  X(create, nvrtcCreateProgram, hiprtcCreateProgram, rtc_result,                               \
    (rtc_prog *, const char *, const char *, int, const char *const *, const char *const *))   \
  X(destroy, nvrtcDestroyProgram, hiprtcDestroyProgram, rtc_result, (rtc_prog *))              \
  X(compile, nvrtcCompileProgram, hiprtcCompileProgram, rtc_result,                            \
    (rtc_prog, int, const char *const *))                                                      \
  X(log_size, nvrtcGetProgramLogSize, hiprtcGetProgramLogSize, rtc_result, (rtc_prog, size_t *)) \
  X(log, nvrtcGetProgramLog, hiprtcGetProgramLog, rtc_result, (rtc_prog, char *))              \
  X(code_size, nvrtcGetPTXSize, hiprtcGetCodeSize, rtc_result, (rtc_prog, size_t *))           \
  X(code, nvrtcGetPTX, hiprtcGetCode, rtc_result, (rtc_prog, char *))

/* What differs between the two, as data. */
struct vendor {
  const char *name;        /* in messages */
  const char *env;         /* the variable naming the library, tried first */
  const char *libs[4];     /* then these sonames (CUDA: and the toolkit's
                            * default path, for a loader not told of it) */
  const char *def_arch;    /* the default of bxcu_rtc_compile's arch */
  const char *arch_opt;    /* the option that takes it */
  const char *code_name;   /* what the result is, in messages */
  bool text;               /* the result is text (PTX), not a binary */
  const char *opts[3];     /* the fixed options */
  int nopt;
  enum bxk_err err;
};

/* Options: both contract a*b+c into one fused multiply-add by default,
 * rounding once where the IR (and the CPU lowering) round twice, so both
 * are told not to.  hiprtc 5.x lives in libamdhip64; ROCm 6 moved it to
 * libhiprtc. */
static const struct vendor vendors[] = {
    [BXCU_CUDA] = {"NVRTC", "BEXT_NVRTC_LIB", {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so"}, "compute_90",
                    "--gpu-architecture=", "PTX", true, {"-default-device", "--std=c++17", "--fmad=false"}, 3,
                    BXK_E_CUDA},
    [BXCU_HIP] = {"hiprtc", "BEXT_HIPRTC_LIB", {"libhiprtc.so.6", "libhiprtc.so.5", "libamdhip64.so.5", NULL},
                     "gfx90a", "--offload-arch=", "code object", false, {"-std=c++17", "-ffp-contract=off", NULL}, 2,
                     BXK_E_HIP},
};

struct bxcu_rtc {
  const struct vendor *v;
  void *lib;
  char path[256];
  int major, minor;
#define BXCU_X_(f, nvsym, hipsym, ret, params) ret(*f) params;
  BXCU_RTC_FNS(BXCU_X_)
#undef BXCU_X_
};

static const struct bxk_loc noloc;

/* Resolves every function of the vendor's column; on failure names the
 * first missing one. */
static bool resolve(struct bxcu_rtc *rc, enum bxcu_vendor kind, char *why, size_t cap) {
#define BXCU_X_(f, nvsym, hipsym, ret, params)                                   \
  {                                                                              \
    const char *sym = kind == BXCU_CUDA ? #nvsym : #hipsym;                     \
    *(void **)&rc->f = dlsym(rc->lib, sym);                                      \
    if (!rc->f) {                                                                \
      snprintf(why, cap, "no %s", sym);                                          \
      return false;                                                              \
    }                                                                            \
  }
  BXCU_RTC_FNS(BXCU_X_)
#undef BXCU_X_
  return true;
}

/* Tries each of n candidates in order; the diagnostic names them all. */
static struct bxcu_rtc *open_first(enum bxcu_vendor kind, const char *const *cands, int n, const char *note,
                                   struct bxk_diags *ds) {
  const struct vendor *v = &vendors[kind];
  char tried[600] = "";
  size_t used = 0;
  struct bxcu_rtc *rc = calloc(1, sizeof *rc);
  if (!rc) {
    bxk_diag_add(ds, BXK_E_OOM, noloc, 0, "out of memory loading %s", v->name);
    return NULL;
  }
  rc->v = v;
  for (int c = 0; c < n; c++) {
    if (!cands[c]) continue;
    char why[160];
    /* NODELETE: both carry C++ runtime state (exception pools, static
     * objects) that is not meant to be unloaded; once loaded it stays,
     * and a later open finds it again without reinitializing. */
    rc->lib = dlopen(cands[c], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    bool got = rc->lib && resolve(rc, kind, why, sizeof why);
    if (got && rc->version(&rc->major, &rc->minor) == 0) {
      snprintf(rc->path, sizeof rc->path, "%s", cands[c]);
      return rc;
    }
    if (!rc->lib) {
      const char *e = dlerror();
      snprintf(why, sizeof why, "%s", e ? e : "dlopen failed");
    } else {
      if (got) snprintf(why, sizeof why, "%s failed", kind == BXCU_CUDA ? "nvrtcVersion" : "hiprtcVersion");
      dlclose(rc->lib);
      rc->lib = NULL;
    }
    int w = snprintf(tried + used, sizeof tried - used, "%s%s (%s)", used ? "; " : "", cands[c], why);
    if (w > 0) used += (size_t)w < sizeof tried - used ? (size_t)w : sizeof tried - used - 1;
  }
  free(rc);
  bxk_diag_add(ds, v->err, noloc, 0, "%s not found: %.170s%s", v->name, tried, note);
  return NULL;
}

struct bxcu_rtc *bxcu_rtc_open(enum bxcu_vendor kind, struct bxk_diags *ds) {
  const struct vendor *v = &vendors[kind];
  const char *env = getenv(v->env);
  bool has_env = env && *env;
  const char *cands[5] = {has_env ? env : NULL, v->libs[0], v->libs[1], v->libs[2], v->libs[3]};
  char note[48] = "";
  if (!has_env) snprintf(note, sizeof note, "; %s unset", v->env);
  return open_first(kind, cands, 5, note, ds);
}

struct bxcu_rtc *bxcu_rtc_open_at(enum bxcu_vendor kind, const char *lib, struct bxk_diags *ds) {
  return open_first(kind, &lib, 1, "", ds);
}

void bxcu_rtc_close(struct bxcu_rtc *rc) {
  if (!rc) return;
  dlclose(rc->lib);
  free(rc);
}

const char *bxcu_rtc_path(const struct bxcu_rtc *rc) { return rc->path; }

int bxcu_rtc_version(const struct bxcu_rtc *rc) { return rc->major * 1000 + rc->minor * 10; }

/* The program's log (malloc'd), or NULL when empty or unreadable. */
static char *prog_log(struct bxcu_rtc *rc, rtc_prog p) {
  size_t n = 0;
  if (rc->log_size(p, &n) != 0 || n <= 1) return NULL;
  char *s = malloc(n);
  if (s && rc->log(p, s) != 0) {
    free(s);
    return NULL;
  }
  if (s) s[n - 1] = 0;
  return s;
}

/* hiprtc 5.2 dies (SIGSEGV inside comgr) on targets it does not know,
 * and on some it does (gfx1100, gfx940, gfx942: dependencies.md), so HIP
 * targets are checked against those verified to compile here before it
 * sees one.  NVRTC rejects a bad architecture by itself. */
static const char *const hip_targets[] = {"gfx900", "gfx906", "gfx908", "gfx90a", "gfx1030", "gfx1031"};

static bool hip_target_ok(const char *arch) {
  for (size_t j = 0; j < sizeof hip_targets / sizeof *hip_targets; j++)
    if (!strcmp(arch, hip_targets[j])) return true;
  return false;
}

void *bxcu_rtc_compile(struct bxcu_rtc *rc, const char *src, const char *kernel, const char *arch, size_t *size,
                       char **log, struct bxk_diags *ds) {
  const struct vendor *v = rc->v;
  if (log) *log = NULL;
  if (size) *size = 0;
  if (v->err == BXK_E_HIP && arch && !hip_target_ok(arch)) {
    char known[96] = "";
    for (size_t j = 0, n = 0; j < sizeof hip_targets / sizeof *hip_targets; j++)
      n += (size_t)snprintf(known + n, sizeof known - n, "%s%s", j ? " " : "", hip_targets[j]);
    bxk_diag_add(ds, v->err, noloc, 0, "hiprtc: target %.40s for kernel %s is not one known to compile here (%s)",
                 arch, kernel, known);
    return NULL;
  }
  char archopt[64], file[96];
  snprintf(archopt, sizeof archopt, "%s%s", v->arch_opt, arch ? arch : v->def_arch);
  snprintf(file, sizeof file, "%s.cu", kernel);
  const char *opts[4] = {archopt};
  for (int j = 0; j < v->nopt; j++) opts[1 + j] = v->opts[j];
  rtc_prog p = NULL;
  rtc_result r = rc->create(&p, src, file, 0, NULL, NULL);
  if (r != 0) {
    bxk_diag_add(ds, v->err, noloc, 0, "%s could not create a program for kernel %s: %s", v->name, kernel,
                 rc->error_string(r));
    return NULL;
  }
  r = rc->compile(p, 1 + v->nopt, opts);
  char *code = NULL;
  if (r != 0) {
    char *l = prog_log(rc, p);
    bxk_diag_add(ds, v->err, noloc, 0, "%s rejected kernel %s (%s, %s): %.120s", v->name, kernel,
                 rc->error_string(r), archopt + strlen(v->arch_opt), l ? l : "no log");
    if (log) *log = l;
    else free(l);
  } else {
    /* PTX's size counts its NUL; a code object's does not: one more byte
     * keeps both NUL-terminated, and *size is the payload without it. */
    size_t n = 0;
    if (rc->code_size(p, &n) == 0 && n > 0 && (code = malloc(n + 1)) != NULL) {
      if (rc->code(p, code) != 0) {
        free(code);
        code = NULL;
      } else {
        code[n] = 0;
        if (size) *size = v->text ? strlen(code) : n;
      }
    }
    if (!code)
      bxk_diag_add(ds, v->err, noloc, 0, "%s compiled kernel %s but its %s could not be read", v->name, kernel,
                   v->code_name);
  }
  rc->destroy(&p);
  return code;
}
