/* test_cube_gpu.c — the devices `cube:cuda:N` and `cube:hip:N`
 * (backends/cube/cube_cuda.c) where they can be tested without a GPU:
 * they are in every build, a machine without the driver says why on
 * every use (availability, tensor creation, sync, to_device), with the
 * device named; the toolkit's stub driver fails cuInit through the same
 * path; and every stdlib kernel the device would prepare compiles to PTX
 * with NVRTC (bf16 ones are refused with K0013, as the device's dtype
 * mask says).  Running kernels needs a GPU: tools/gpu-check does that
 * (docs/gpu-check.md).  A test whose precondition this machine lacks
 * (a real driver is here; no NVRTC) is skipped, saying so. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bext/bext.h>

#include "backend.h"
#include "bxcu.h"
#include "cube/cube.h"

static const bext_device *get_ok(const char *s) {
  const bext_device *d = bext_device_get(s);
  cr_assert_not_null(d, "'%s' should parse: %s", s, bext_last_error());
  return d;
}

static void expect_msg(const char *what, const char *a, const char *b, const char *c) {
  const char *e = bext_last_error();
  cr_expect(strstr(e, a) && strstr(e, b) && (!c || strstr(e, c)), "%s: message: %s", what, e);
}

/* Every use of spec fails naming the device and why (why: the start of
 * the driver's reason). */
static void refused_everywhere(const char *spec, const char *why) {
  const bext_device *d = get_ok(spec);
  if (bext_device_available(d)) cr_skip_test("skipped: %s is available here (a driver and a device)", spec);
  expect_msg("available", "bext_device_available", spec, why);
  cr_expect(!strstr(bext_last_error(), "not available in this build"), "%s is in every build: %s", spec,
            bext_last_error());
  cr_expect_null(bext_from_data((float[]){1, 2}, BEXT_F32, (int64_t[]){2}, 1, d));
  expect_msg("from_data", "bext_from_data", spec, why);
  cr_expect_null(bext_zeros((int64_t[]){2}, 1, BEXT_F32, d));
  expect_msg("zeros", "bext_zeros", spec, why);
  bext_tensor *t = bext_ones((int64_t[]){2}, 1, BEXT_F32, bext_device_get("ndarray"));
  cr_assert(t, "%s", bext_last_error());
  cr_expect_null(bext_to_device(t, d));   /* takes t, also when it fails */
  expect_msg("to_device", "bext_to_device", spec, why);
  cr_expect(!bext_sync(d));
  /* and the device with layers on top says the same */
  char stacked[64];
  snprintf(stacked, sizeof stacked, "%s+fusion", spec);
  cr_expect_null(bext_zeros((int64_t[]){2}, 1, BEXT_F32, get_ok(stacked)));
  expect_msg("zeros on the stack", "bext_zeros", spec, why);
}

Test(cube_gpu, targets_are_in_every_build) {
#if !defined(BEXT_HAVE_CUBE_CUDA) || !defined(BEXT_HAVE_CUBE_HIP)
  cr_assert_fail("config.h lacks BEXT_HAVE_CUBE_CUDA / BEXT_HAVE_CUBE_HIP: the targets need no headers");
#endif
  cr_expect_str_eq(bext_device_name(get_ok("cube:cuda")), "cube:cuda:0");
  cr_expect_str_eq(bext_device_name(get_ok("cube:hip:1")), "cube:hip:1");
}

/* No libcuda.so.1 on this machine (only the toolkit's stub). */
Test(cube_gpu, cuda_without_driver_says_why) {
  unsetenv("BEXT_CUDA_LIB");
  refused_everywhere("cube:cuda:0", "no CUDA driver (libcuda.so.1: ");
}

/* HIP's runtime may be installed without an AMD GPU (hipInit fails), or
 * absent: either way "no HIP driver (...)". */
Test(cube_gpu, hip_without_device_says_why) {
  unsetenv("BEXT_HIP_LIB");
  refused_everywhere("cube:hip:0", "no HIP driver (");
}

/* The toolkit's stub libcuda loads but fails cuInit: a real driver
 * library through the device's own open, reported as unavailable. */
Test(cube_gpu, cuda_stub_driver_fails_cuinit) {
  const char *stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (access(stub, R_OK) != 0) cr_skip_test("skipped: no CUDA stub library at %s", stub);
  setenv("BEXT_CUDA_LIB", stub, 1);
  refused_everywhere("cube:cuda:1", "cuInit");
  cr_expect(strstr(bext_last_error(), "CUDA_ERROR_STUB_LIBRARY") || strstr(bext_last_error(), "CUresult 34"),
            "%s", bext_last_error());
}

/* Past the devices a driver has (a driver is needed to count them; here
 * a missing library stands in): still the device's name in front. */
Test(cube_gpu, missing_library_is_named) {
  setenv("BEXT_CUDA_LIB", "/nonexistent/libcuda.so.1", 1);
  refused_everywhere("cube:cuda:3", "no CUDA driver (/nonexistent/libcuda.so.1: ");
}

/* The kernel's entry in ptx takes what cube_cuda.c's launch passes:
 * each binding as an 80-byte, 8-aligned struct bxl_binding, then each
 * scalar with its memory type's width (bool one byte, f16 two), read by
 * the driver from the start of its 8-byte slot. */
static bool params_match(const char *ptx, const struct bxk_kernel *ir) {
  char entry[96];
  snprintf(entry, sizeof entry, ".entry %s(", ir->name);
  const char *p = strstr(ptx, entry);
  if (!p) return false;
  p += strlen(entry);
  const char *end = strchr(p, ')');
  for (uint32_t j = 0; end && j < ir->nbind + ir->nscalar; j++) {
    const char *q = strstr(p, ".param");
    if (!q || q > end) return false;
    size_t n = strcspn(q, ",\n)");
    char line[160];
    snprintf(line, sizeof line, "%.*s", (int)n, q);
    if (j < ir->nbind) {
      if (!strstr(line, ".align 8 .b8") || !strstr(line, "[80]")) return false;
    } else {
      unsigned t = ir->scalar[j - ir->nbind];
      unsigned want = t == BXK_BOOL || t == BXK_U8 ? 8 : t == BXK_F16 ? 16 : bxk_type_bits(t);
      unsigned bits = 0;   /* ".param .f64 name": the width after the type letter */
      if (sscanf(line, ".param .%*[a-z]%u", &bits) != 1 || bits != want) return false;
    }
    p = q + n;
  }
  const char *more = strstr(p, ".param");
  return end && (!more || more > end);
}

/* Compiles the n emitted kernels own[] as one NVRTC program (the
 * prelude once, each kernel's code in a namespace of its own: one
 * program per kernel costs ~0.2 s each, 997 kernels) and checks the PTX
 * has every kernel's entry; when the batch fails, each kernel alone, so
 * the failure names its kernel.  Returns how many compiled. */
static uint32_t compile_batch(struct bxcu_rtc *rc, const char *prelude, char **own,
                              const struct bxk_kernel **irs, uint32_t n) {
  size_t len = strlen(prelude) + 1;
  for (uint32_t i = 0; i < n; i++) len += strlen(own[i]) + 64;
  char *src = malloc(len), *p = src;
  cr_assert(src);
  p += sprintf(p, "%s", prelude);
  for (uint32_t i = 0; i < n; i++) p += sprintf(p, "namespace k%u {\n%s}\n", i, own[i]);
  struct bxk_diags ds = {0};
  char *log = NULL;
  char *ptx = bxcu_rtc_compile(rc, src, "stdlib_batch", "compute_90", NULL, &log, &ds);
  free(src);
  uint32_t ok = 0;
  if (ptx) {
    for (uint32_t i = 0; i < n; i++) {
      bool good = params_match(ptx, irs[i]);
      cr_expect(good, "%s: no entry in the PTX taking %u bindings and %u scalars as the launch passes them",
                irs[i]->name, irs[i]->nbind, irs[i]->nscalar);
      ok += good;
    }
  } else {
    for (uint32_t i = 0; i < n; i++) {
      size_t one = strlen(prelude) + strlen(own[i]) + 1;
      char *alone = malloc(one);
      cr_assert(alone);
      snprintf(alone, one, "%s%s", prelude, own[i]);
      char *l1 = NULL;
      ds = (struct bxk_diags){0};
      char *x = bxcu_rtc_compile(rc, alone, irs[i]->name, "compute_90", NULL, &l1, &ds);
      cr_expect(x, "%s: %s\n%s", irs[i]->name, ds.n ? ds.d[0].msg : "", l1 ? l1 : "");
      ok += x != NULL;
      free(x), free(l1), free(alone);
    }
  }
  free(ptx);
  free(log);
  return ok;
}

/* Every stdlib instantiation cube:cuda would prepare goes through the
 * device's path up to PTX: bxcu_emit with the prelude, then NVRTC for
 * compute_90 (the H200's).  bf16 instantiations are refused with K0013,
 * which is why the device's dtype mask leaves bf16 out. */
/* NVRTC in a sanitized process runs ~5x slower (every allocation it
 * makes goes through the sanitizer): there, 1 kernel in 8 is compiled,
 * said in the log; the optimized tree compiles them all. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define STDLIB_STRIDE 8u
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define STDLIB_STRIDE 8u
#endif
#endif
#ifndef STDLIB_STRIDE
#define STDLIB_STRIDE 1u
#endif

Test(cube_gpu, every_stdlib_kernel_compiles_to_ptx) {
  struct bxk_diags ds = {0};
  struct bxcu_rtc *rc = bxcu_rtc_open(BXCU_CUDA, &ds);
  if (!rc) cr_skip_test("skipped: %s", ds.n ? ds.d[0].msg : "NVRTC not found");
  enum { BATCH = 128 };
  uint32_t n = cube_stdlib_count(), ok = 0, bf16 = 0, nb = 0;
  cr_assert_gt(n, 50u, "only %u stdlib kernels", n);
  char *prelude = NULL, *own[BATCH];
  const struct bxk_kernel *irs[BATCH];
  uint32_t tried = 0;
  for (uint32_t i = 0; i < n; i += STDLIB_STRIDE) {
    const bext_kernel_src *src = cube_stdlib_row(i);
    const struct bxk_kernel *ir = bxr_kernel_src_ir(src);
    cr_assert(ir, "%s: %s", src->name, bext_last_error());
    tried++;
    ds = (struct bxk_diags){0};
    char *full = bxcu_emit(ir, true, &ds);
    struct bxk_loc at;
    if (bxk_kernel_uses_type(ir, BXK_BF16, &at)) {
      cr_expect_null(full, "%s uses bf16 but was emitted", src->name);
      cr_expect(ds.n && !strcmp(bxk_err_code(ds.d[0].err), "K0013"), "%s: %s", src->name, ds.n ? ds.d[0].msg : "");
      free(full);
      bf16++;
      continue;
    }
    char *code = bxcu_emit(ir, false, &ds);
    cr_assert(full && code, "%s: %s", src->name, ds.n ? ds.d[0].msg : "");
    /* the full source is the prelude, then the kernel's own code */
    size_t lf = strlen(full), lc = strlen(code);
    cr_assert(lf > lc && !strcmp(full + lf - lc, code), "%s: the prelude is not a prefix", src->name);
    if (!prelude) {
      full[lf - lc] = 0;
      prelude = full;
    } else {
      free(full);   /* the same prelude (but its first line, naming the kernel) */
    }
    own[nb] = code, irs[nb] = ir, nb++;
    if (nb == BATCH) {
      ok += compile_batch(rc, prelude, own, irs, nb);
      while (nb) free(own[--nb]);
    }
  }
  if (nb) ok += compile_batch(rc, prelude, own, irs, nb);
  while (nb) free(own[--nb]);
  free(prelude);
  cr_log_info("%u stdlib kernels, %u tried (1 in %u%s): %u compiled to PTX, %u bf16 refused (K0013)", n, tried,
              STDLIB_STRIDE, STDLIB_STRIDE > 1 ? ": a sanitizer build" : "", ok, bf16);
  cr_expect_eq(ok + bf16, tried);
  cr_expect_gt(bf16, 0u, "the stdlib has bf16 instantiations: the refusal was not exercised");
  bxcu_rtc_close(rc);
}

/* ------------------------------------------------ with a stand-in driver */

#ifdef BXR_TEST_FAKE_CUDA
#include <dlfcn.h>

#include "bxl.h"

struct fake_launch {   /* fake_cuda.c's record */
  char name[96];
  unsigned grid[3], block[3];
  int nparam;
  int size[48];
  unsigned char param[48][80];
};
struct fake_state {
  int allocs, frees, launches, modules, syncs;
  struct fake_launch last;
};

/* cube:cuda:0 on fake_cuda.c (device memory is host memory, launches
 * are recorded, not run): the host side of the device, through its own
 * open, storage, copies and launches, with the real NVRTC. */
Test(cube_gpu, stand_in_driver_moves_data_and_packs_launches) {
  setenv("BEXT_CUDA_LIB", BXR_TEST_FAKE_CUDA, 1);
  const bext_device *d = get_ok("cube:cuda:0");
  cr_assert(bext_device_available(d), "%s", bext_last_error());
  void *h = dlopen(BXR_TEST_FAKE_CUDA, RTLD_NOW | RTLD_NOLOAD);
  cr_assert(h, "the device did not load %s", BXR_TEST_FAKE_CUDA);
  struct fake_state *(*state)(void) = (struct fake_state * (*)(void)) dlsym(h, "fake_cuda_state");
  int (*owns)(uint64_t, size_t) = (int (*)(uint64_t, size_t))dlsym(h, "fake_cuda_owns");
  cr_assert(state && owns);
  struct fake_state *S = state();

  /* copies in and out, and a transposed view read through the host */
  float v[6] = {1, 2, 3, 4, 5, 6}, got[6] = {0};
  bext_tensor *a = bext_from_data(v, BEXT_F32, (int64_t[]){2, 3}, 2, d);
  cr_assert(a, "%s", bext_last_error());
  cr_expect(bext_read(a, got, sizeof got) && !memcmp(got, v, sizeof v), "%s", bext_last_error());
  bext_tensor *at = bext_swap_dims(bext_retain(a), 0, 1);
  cr_assert(at, "%s", bext_last_error());
  float want_t[6] = {1, 4, 2, 5, 3, 6};
  cr_expect(bext_read(at, got, sizeof got) && !memcmp(got, want_t, sizeof want_t), "%s", bext_last_error());
  bext_tensor *row = bext_narrow(bext_retain(a), 0, 1, 1);   /* offset 3: the second row */
  cr_assert(row, "%s", bext_last_error());
  cr_expect(bext_read(row, got, 3 * sizeof(float)) && got[0] == 4 && got[2] == 6, "%s", bext_last_error());
  bext_release(at);
  bext_release(row);

  /* a freed block is reused for the same size: no new device allocation */
  int allocs = S->allocs;
  bext_tensor *b = bext_from_data(v, BEXT_F32, (int64_t[]){2, 3}, 2, d);
  bext_release(b);
  b = bext_from_data(v, BEXT_F32, (int64_t[]){2, 3}, 2, d);
  cr_expect_eq(S->allocs, allocs + 1, "%d device allocations for two tensors of one size", S->allocs - allocs);
  bext_memory st;
  cr_expect(bext_memory_stats(d, &st) && st.cached_bytes == 0, "the block went back out: %zu cached", st.cached_bytes);

  /* a launch: NVRTC compiles the stdlib add, the fake loads its PTX and
   * records what the launch passed, sized by the kernel's own .entry */
  struct bxk_diags ds = {0};
  struct bxcu_rtc *rc = bxcu_rtc_open(BXCU_CUDA, &ds);
  if (!rc) cr_skip_test("skipped the launch: %s", ds.n ? ds.d[0].msg : "NVRTC not found");
  bxcu_rtc_close(rc);
  int launches = S->launches;
  bext_tensor *c = bext_add(bext_retain(a), bext_retain(b));
  cr_assert(c, "%s", bext_last_error());
  cr_expect_eq(S->launches, launches + 1);
  const struct fake_launch *L = &S->last;
  cr_log_info("launch %s: grid [%u,%u,%u] block [%u,%u,%u], %d parameters", L->name, L->grid[0], L->grid[1],
              L->grid[2], L->block[0], L->block[1], L->block[2], L->nparam);
  cr_expect(L->grid[0] * L->block[0] >= 6 && L->grid[1] == 1 && L->block[1] == 1, "grid does not cover 6 units");
  int nbind = 0;
  for (int i = 0; i < L->nparam; i++) {
    if (L->size[i] != (int)sizeof(struct bxl_binding)) continue;   /* a scalar */
    struct bxl_binding bb;
    memcpy(&bb, L->param[i], sizeof bb);
    nbind++;
    cr_expect(owns((uint64_t)(uintptr_t)bb.data, (size_t)bb.len * 4), "binding %d: %p (%u elements) is not device memory",
              i, bb.data, bb.len);
    cr_expect(bb.len == 6 && bb.rank >= 1 && bb.rank <= 8, "binding %d: len %u rank %u", i, bb.len, bb.rank);
  }
  cr_expect_eq(nbind, 3, "a + b = c passes 3 bindings, found %d", nbind);
  /* the same kernel again: prepared from memory, no second module */
  int modules = S->modules;
  bext_tensor *c2 = bext_add(bext_retain(a), bext_retain(b));
  cr_expect(c2 && S->modules == modules, "a second add loaded another module");
  cr_expect(bext_sync(d) && S->syncs > 0, "%s", bext_last_error());
  bext_release(c2);
  bext_release(c);
  bext_release(b);
  bext_release(a);
  cr_expect(bext_memory_stats(d, &st) && st.cached_bytes > 0, "released tensors' blocks are kept");
  bext_device_close(d);
}

/* The kernels users write, as their launchers run them: every #[cube]
 * kernel of the tests' extension (tests/codegen/ext/cubefuse.bext) or,
 * built again with CUBE_GPU_SAMPLE (runtime/test_cube_gpu_sample: both
 * extensions define a gelu_kernel launcher, so one binary cannot hold
 * both), of samples/gelu_cube, prepared on cube:cuda:0 in f32 and f64 —
 * emitted as CUDA C, compiled to PTX by the real NVRTC, loaded — and
 * launched (on the stand-in: recorded, not run). */
#ifdef CUBE_GPU_SAMPLE
#include "gelu_cube.h"
#else
#include "cubefuse_impl.h"
#endif

Test(cube_gpu, extension_kernels_compile_and_launch_on_the_stand_in) {
  setenv("BEXT_CUDA_LIB", BXR_TEST_FAKE_CUDA, 1);
  const bext_device *d = get_ok("cube:cuda:0");
  cr_assert(bext_device_available(d), "%s", bext_last_error());
  struct bxk_diags ds = {0};
  struct bxcu_rtc *rc = bxcu_rtc_open(BXCU_CUDA, &ds);
  if (!rc) cr_skip_test("skipped: %s", ds.n ? ds.d[0].msg : "NVRTC not found");
  bxcu_rtc_close(rc);
  void *h = dlopen(BXR_TEST_FAKE_CUDA, RTLD_NOW | RTLD_NOLOAD);
  struct fake_state *(*state)(void) = h ? (struct fake_state * (*)(void)) dlsym(h, "fake_cuda_state") : NULL;
  cr_assert(state);
  struct fake_state *S = state();
  static const bext_dtype dts[] = {BEXT_F32, BEXT_F64};
  for (int t = 0; t < 2; t++) {
    double v[300];
    float f[300];
    for (int i = 0; i < 300; i++) f[i] = (float)(v[i] = i * 0.01 - 1.5);
    bext_tensor *x = bext_from_data(dts[t] == BEXT_F32 ? (void *)f : (void *)v, dts[t], (int64_t[]){300}, 1, d);
    cr_assert(x, "%s", bext_last_error());
#ifdef CUBE_GPU_SAMPLE
    int l0 = S->launches;
    bext_tensor *y = cube_activations_gelu(bext_retain(x));
    cr_expect(y, "gelu_cube on %s: %s", bext_dtype_name(dts[t]), bext_last_error());
    cr_expect(S->launches == l0 + 1 && strstr(S->last.name, "gelu_kernel"), "gelu_cube on %s: launched %s",
              bext_dtype_name(dts[t]), S->last.name);
    bext_release(y);
#else
    for (int o = 0; o < CF_PROGRAM_OPS; o++) {
      const double sc[FZP_MAX_SCALARS] = {0.5, 1.0, 0.0};
      int l0 = S->launches;
      bext_tensor *y = cubefuse_program_ops[o].call(bext_retain(x), sc);
      cr_expect(y, "%s on %s: %s", cubefuse_program_ops[o].name, bext_dtype_name(dts[t]), bext_last_error());
      cr_expect_gt(S->launches, l0, "%s on %s launched nothing", cubefuse_program_ops[o].name, bext_dtype_name(dts[t]));
      bext_release(y);
    }
#endif
    bext_release(x);
  }
#ifndef CUBE_GPU_SAMPLE
  cr_expect_eq(cubefuse_calls[CF_GELU], 2, "the extension's own implementation ran");
#endif
  bext_device_close(d);
}
#endif
