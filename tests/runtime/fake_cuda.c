/* fake_cuda.c — a stand-in libcuda.so.1 for test_cube_gpu.c, loaded
 * through $BEXT_CUDA_LIB on a machine without a GPU: device memory is
 * host memory, modules are the PTX text, and a launch runs nothing but
 * records its grid and copies each parameter, the count and widths read
 * from the kernel's `.entry` in that PTX (so a host/device ABI mismatch
 * shows).  It lets the test check what cube_cuda.c does around the
 * kernels (allocation and reuse, copies in and out, views, the launch's
 * packing) with the real NVRTC; what the kernels compute is only known
 * on a GPU (tools/gpu-check).  Signatures: cuda.h's, as bxcu_driver.c
 * declares them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;

#define FAKE_MAX_PARAMS 48
#define FAKE_MAX_ALLOCS 4096

struct fake_launch {
  char name[96];
  unsigned grid[3], block[3];
  int nparam;
  int size[FAKE_MAX_PARAMS];
  unsigned char param[FAKE_MAX_PARAMS][80];
};

struct fake_state {
  int allocs, frees, launches, modules, syncs;
  struct fake_launch last;
  struct {
    uint64_t p;
    size_t n;
  } live[FAKE_MAX_ALLOCS];
};

static struct fake_state S;

/* The test reads the record through this (dlsym). */
struct fake_state *fake_cuda_state(void) { return &S; }

/* Whether [p, p+n) lies inside one live allocation. */
int fake_cuda_owns(uint64_t p, size_t n) {
  for (int i = 0; i < FAKE_MAX_ALLOCS; i++)
    if (S.live[i].p && p >= S.live[i].p && p + n <= S.live[i].p + S.live[i].n) return 1;
  return 0;
}

CUresult cuInit(unsigned flags) { return flags == 0 ? 0 : 1; }
CUresult cuDeviceGetCount(int *n) { return *n = 1, 0; }
CUresult cuDeviceGet(int *d, int i) { return i == 0 ? (*d = 0, 0) : 101; }
CUresult cuDeviceGetName(char *s, int n, int d) { return (void)d, snprintf(s, (size_t)n, "fake CUDA device"), 0; }
CUresult cuDeviceGetAttribute(int *v, int attr, int d) {
  (void)d;
  switch (attr) {
  case 1: *v = 1024; break;                              /* threads per block */
  case 2: case 3: *v = 1024; break;                      /* block x, y */
  case 4: *v = 64; break;                                /* block z */
  case 5: *v = 2147483647; break;                        /* grid x */
  case 6: case 7: *v = 65535; break;                     /* grid y, z */
  case 8: *v = 49152; break;                             /* shared per block */
  case 75: *v = 9; break;                                /* cc major */
  case 76: *v = 0; break;                                /* cc minor */
  default: return 1;
  }
  return 0;
}
CUresult cuDriverGetVersion(int *v) { return *v = 13000, 0; }
CUresult cuDevicePrimaryCtxRetain(void **ctx, int d) { return (void)d, *ctx = (void *)&S, 0; }
CUresult cuCtxSetCurrent(void *ctx) { return ctx == &S ? 0 : 201; }
CUresult cuCtxSynchronize(void) { return S.syncs++, 0; }
CUresult cuGetErrorName(CUresult r, const char **s) { return (void)r, *s = "FAKE_ERROR", 0; }
CUresult cuGetErrorString(CUresult r, const char **s) { return (void)r, *s = "a fake error", 0; }

CUresult cuMemAlloc_v2(uint64_t *p, size_t n) {
  void *m = malloc(n);
  if (!m) return 2;
  for (int i = 0; i < FAKE_MAX_ALLOCS; i++)
    if (!S.live[i].p) {
      S.live[i].p = (uint64_t)(uintptr_t)m, S.live[i].n = n;
      *p = S.live[i].p;
      S.allocs++;
      return 0;
    }
  free(m);
  return 2;
}
CUresult cuMemFree_v2(uint64_t p) {
  for (int i = 0; i < FAKE_MAX_ALLOCS; i++)
    if (S.live[i].p == p) {
      free((void *)(uintptr_t)p);
      S.live[i].p = 0;
      S.frees++;
      return 0;
    }
  return 1;
}
CUresult cuMemcpyHtoD_v2(uint64_t d, const void *s, size_t n) {
  return fake_cuda_owns(d, n) ? (memcpy((void *)(uintptr_t)d, s, n), 0) : 1;
}
CUresult cuMemcpyDtoH_v2(void *d, uint64_t s, size_t n) {
  return fake_cuda_owns(s, n) ? (memcpy(d, (void *)(uintptr_t)s, n), 0) : 1;
}
CUresult cuMemcpyDtoD_v2(uint64_t d, uint64_t s, size_t n) {
  return fake_cuda_owns(d, n) && fake_cuda_owns(s, n) ? (memmove((void *)(uintptr_t)d, (void *)(uintptr_t)s, n), 0) : 1;
}
CUresult cuMemsetD8_v2(uint64_t d, unsigned char v, size_t n) {
  return fake_cuda_owns(d, n) ? (memset((void *)(uintptr_t)d, v, n), 0) : 1;
}

/* A module is its PTX; 218 is CUDA_ERROR_INVALID_PTX. */
CUresult cuModuleLoadDataEx(void **m, const void *image, unsigned nopt, int *opt, void **val) {
  (void)nopt, (void)opt, (void)val;
  const char *t = image;
  if (!strstr(t, ".version") || !strstr(t, ".target") || !strstr(t, ".entry")) return 218;
  if (!(*m = strdup(t))) return 2;
  S.modules++;
  return 0;
}
CUresult cuModuleUnload(void *m) { return free(m), 0; }

struct fake_fn {
  char name[96];
  int nparam, size[FAKE_MAX_PARAMS];
};

/* The entry's parameters: `.param .align 8 .b8 x[80]` or `.param .u8 x`. */
CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
  char entry[128];
  snprintf(entry, sizeof entry, ".entry %s(", name);
  const char *p = strstr(m, entry);
  if (!p) return 500;   /* CUDA_ERROR_NOT_FOUND */
  static struct fake_fn fns[2048];   /* static: nothing for LeakSanitizer */
  static int nfn;
  if (nfn == 2048) return 2;
  struct fake_fn *fn = &fns[nfn++];
  snprintf(fn->name, sizeof fn->name, "%s", name);
  const char *end = strchr(p, ')');
  for (p += strlen(entry); (p = strstr(p, ".param")) && p < end && fn->nparam < FAKE_MAX_PARAMS; p += 6) {
    const char *br = strchr(p, '[');
    unsigned bits = 0, bytes = 0;
    if (br && br < strpbrk(p, ",)\n") && sscanf(br, "[%u]", &bytes) == 1) fn->size[fn->nparam++] = (int)bytes;
    else if (sscanf(p, ".param .%*[a-z]%u", &bits) == 1) fn->size[fn->nparam++] = (int)bits / 8;
    else return 218;
  }
  *f = fn;
  return 0;
}

CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void *stream, void **params, void **extra) {
  struct fake_fn *fn = f;
  if (shared || stream || extra || !params) return 1;
  struct fake_launch *L = &S.last;
  memset(L, 0, sizeof *L);
  snprintf(L->name, sizeof L->name, "%s", fn->name);
  L->grid[0] = gx, L->grid[1] = gy, L->grid[2] = gz, L->block[0] = bx, L->block[1] = by, L->block[2] = bz;
  L->nparam = fn->nparam;
  for (int i = 0; i < fn->nparam; i++) {
    L->size[i] = fn->size[i];
    memcpy(L->param[i], params[i], (size_t)fn->size[i] <= sizeof L->param[i] ? (size_t)fn->size[i] : 0);
  }
  S.launches++;
  return 0;
}
