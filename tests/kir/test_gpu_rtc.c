/* test_gpu_rtc.c — kernel IR -> CUDA C -> PTX with the real NVRTC (and
 * PTX -> sm_90 code with the real ptxas where it is installed), and the
 * same source -> AMDGPU code objects for gfx90a and gfx1030 with the real
 * hiprtc.  No GPU is needed: nothing here runs a kernel (that needs a
 * driver and a device).
 *
 * Every sample kernel of the LLVM tests is emitted and compiled by both,
 * and so are the every-op x every-type and every-cast kernels.  Without a
 * compiler the tests that need it are skipped, saying so (never passed).
 * BEXT_CUDA_DUMP=<dir> writes each emitted .cu and its .ptx there. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bxcu.h"
#include "kir_samples.h"

static const char *ptxas_path(void) {
  const char *p = getenv("BEXT_PTXAS");
  return p && *p ? p : "/usr/local/cuda/bin/ptxas";
}

static bool have_ptxas(void) { return access(ptxas_path(), X_OK) == 0; }

static struct bxcu_rtc *rtc_or_skip(enum bxcu_vendor v) {
  struct bxk_diags ds = {0};
  struct bxcu_rtc *rc = bxcu_rtc_open(v, &ds);
  if (!rc) {
    cr_assert_eq(ds.n, 1);
    cr_skip_test("skipped: %s", ds.d[0].msg);
  }
  return rc;
}

/* The HIP architectures every kernel is compiled for: the CDNA2 and RDNA2
 * targets hiprtc 5.2 handles (dependencies.md: gfx1100/940/942 crash it). */
static const char *const hip_archs[] = {"gfx90a", "gfx1030"};

/* An AMDGPU code object: an ELF for the amdgcn machine (EM_AMDGPU, 224)
 * that holds the kernel's descriptor symbol NAME.kd. */
static bool is_code_object(const unsigned char *co, size_t n, const char *kernel) {
  if (n < 64 || memcmp(co, "\x7f" "ELF", 4) != 0 || co[4] != 2) return false;
  if ((co[18] | co[19] << 8) != 224) return false;
  char kd[160];
  snprintf(kd, sizeof kd, "%s.kd", kernel);
  size_t m = strlen(kd) + 1; /* with its NUL: a whole string-table entry */
  for (size_t i = 0; i + m <= n; i++)
    if (!memcmp(co + i, kd, m)) return true;
  return false;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  return strdup(buf);
}

static void dump(const char *name, const char *ext, const char *text) {
  static int seq;
  const char *dir = getenv("BEXT_CUDA_DUMP");
  if (!dir || !*dir || !text) return;
  char path[512];
  snprintf(path, sizeof path, "%s/%s_%d.%s", dir, name, strcmp(ext, "cu") ? seq - 1 : seq++, ext);
  FILE *f = fopen(path, "w");
  if (f) fputs(text, f), fclose(f);
}

/* PTX -> sm_90 with ptxas; true when it assembles (the log on failure). */
static bool ptxas_ok(const char *ptx, const char *name, bool quiet) {
  char in[] = "/tmp/bxcu_ptxXXXXXX", err[] = "/tmp/bxcu_errXXXXXX";
  int fd = mkstemp(in), fe = mkstemp(err);
  cr_assert(fd >= 0 && fe >= 0);
  close(fe);
  cr_assert_eq(write(fd, ptx, strlen(ptx)), (ssize_t)strlen(ptx));
  close(fd);
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "'%s' -arch=sm_90 -o /dev/null '%s' 2>'%s'", ptxas_path(), in, err);
  int rc = system(cmd);
  if (rc != 0 && !quiet) {
    char *log = slurp(err);
    cr_log_error("ptxas rejected %s: %s", name, log ? log : "(no log)");
    free(log);
  }
  unlink(in);
  unlink(err);
  return rc == 0;
}

static int nkernels;

/* Emits, compiles to PTX and (with ptxas) assembles k; frees it.  Returns
 * the PTX (malloc'd) for callers that look inside. */
/* One source through one compiler: PTX (with its .entry, assembled by
 * ptxas where installed) or, for HIP, a code object per architecture of
 * hip_archs.  Returns the PTX or the first code object (malloc'd). */
static char *compile_src(struct bxcu_rtc *rc, enum bxcu_vendor v, const char *src, const char *name) {
  struct bxk_diags ds = {0};
  char msg[2048];
  char *first = NULL;
  for (size_t a = 0; a < (v == BXCU_HIP ? 2u : 1u); a++) {
    char *log = NULL;
    size_t n = 0;
    char *code = bxcu_rtc_compile(rc, src, name, v == BXCU_HIP ? hip_archs[a] : NULL, &n, &log, &ds);
    if (!code) cr_log_error("%s\n--- log ---\n%s", src, log ? log : "");
    bxk_diags_render(&ds, msg, sizeof msg);
    cr_assert(code, "%s on %s: %s", v == BXCU_HIP ? "hiprtc" : "NVRTC", name, msg);
    free(log);
    if (v == BXCU_CUDA) {
      dump(name, "ptx", code);
      char entry[128];
      snprintf(entry, sizeof entry, ".entry %s(", name); /* extern "C": the name unmangled */
      cr_expect(strstr(code, entry), "PTX of %s has no %s", name, entry);
      cr_expect_eq(n, strlen(code));
      if (have_ptxas()) cr_expect(ptxas_ok(code, name, false), "ptxas on %s", name);
    } else {
      cr_expect(is_code_object((const unsigned char *)code, n, name), "%s for %s: no AMDGPU ELF with %s.kd (%zu bytes)",
                name, hip_archs[a], name, n);
    }
    if (first) free(code);
    else first = code;
  }
  return first;
}

static char *compile(struct bxcu_rtc *rc, enum bxcu_vendor v, struct bxk_kernel *k) {
  struct bxk_diags ds = {0};
  char msg[2048];
  char *src = bxcu_emit(k, true, &ds);
  bxk_diags_render(&ds, msg, sizeof msg);
  cr_assert(src, "emit %s: %s", k->name, msg);
  dump(k->name, "cu", src);
  char *code = compile_src(rc, v, src, k->name);
  free(src);
  bxk_kernel_free(k);
  nkernels++;
  return code;
}

static void compile_free(struct bxcu_rtc *rc, enum bxcu_vendor v, struct bxk_kernel *k) {
  free(compile(rc, v, k));
}

static const unsigned types[] = {BXK_BOOL, BXK_U8, BXK_I32, BXK_U32, BXK_I64, BXK_F16, BXK_F32, BXK_F64};
#define NTYPES (sizeof types / sizeof *types)

static bool valid(struct bxk_kernel *k) {
  struct bxk_diags ds = {0};
  bool ok = bxk_verify(k, &ds);
  bxk_kernel_free(k);
  return ok;
}

/* ------------------------------------------------------------ emitting */

Test(cuda, golden_add) {
  struct bxk_kernel *k = sample_add(BXK_F32, true);
  struct bxk_diags ds = {0};
  char *got = bxcu_emit(k, false, &ds);
  cr_assert(got);
  cr_expect_str_eq(got,
    "struct bxcu_bind0 { const float *data; uint32_t len, rank; uint32_t shape[8], stride[8]; };\n"
    "struct bxcu_bind1 { const float *data; uint32_t len, rank; uint32_t shape[8], stride[8]; };\n"
    "struct bxcu_bind2 { float *data; uint32_t len, rank; uint32_t shape[8], stride[8]; };\n"
    "\n"
    "extern \"C\" __global__ void add(struct bxcu_bind0 b0, struct bxcu_bind1 b1, struct bxcu_bind2 b2) {\n"
    "  const uint32_t v1 = bxcu_ABSOLUTE_POS();\n"
    "  const uint32_t v2 = b2.len;\n"
    "  const bool v3 = v1 < v2;\n"
    "  if (v3) {\n"
    "    const float v4 = b0.data[v1];\n"
    "    const float v5 = b1.data[v1];\n"
    "    const float v6 = v4 + v5;\n"
    "    b2.data[v1] = v6;\n"
    "  }\n"
    "}\n");
  free(got);
  bxk_kernel_free(k);
}

/* The semantics are the header's text, byte for byte, not a rewrite. */
Test(cuda, prelude_pastes_bxk_scalar_h) {
  const char *srcdir = getenv("BEXT_SOURCE_DIR");
  cr_assert(srcdir, "BEXT_SOURCE_DIR unset (ctest sets it)");
  char path[512];
  snprintf(path, sizeof path, "%s/runtime/kir/bxk_scalar.h", srcdir);
  char *hdr = slurp(path);
  cr_assert(hdr, "cannot read %s", path);
  cr_expect_str_eq(bxcu_scalar_src, hdr);
  struct bxk_kernel *k = sample_binop(BXK_OP_REM, BXK_I32);
  struct bxk_diags ds = {0};
  char *src = bxcu_emit(k, true, &ds);
  cr_assert(src);
  cr_expect(strstr(src, hdr), "the emitted source does not contain bxk_scalar.h verbatim");
  cr_expect(strstr(src, "bxk_rem_i32(v"), "rem.i32 does not call the header's bxk_rem_i32");
  free(src);
  free(hdr);
  bxk_kernel_free(k);
}

Test(cuda, f16_rounds_after_every_op_and_saturating_casts_call_header) {
  struct bxk_diags ds = {0};
  struct bxk_kernel *k = sample_binop(BXK_OP_ADD, BXK_F16);
  char *src = bxcu_emit(k, false, &ds);
  cr_assert(src);
  cr_expect(strstr(src, "bxk_f16_to_f32(b0.data[v1])"), "f16 load:\n%s", src);
  cr_expect(strstr(src, "const float v4 = bxk_round_f16(v"), "f16 add:\n%s", src); /* v2+v3, either order */
  cr_expect(strstr(src, "bxk_f32_to_f16(v4)"), "f16 store:\n%s", src);
  free(src);
  bxk_kernel_free(k);
  k = sample_cast(BXK_I32, BXK_F32);
  src = bxcu_emit(k, false, &ds);
  cr_assert(src);
  cr_expect(strstr(src, "bxk_f64_to_i32((double)v2)"), "f32->i32:\n%s", src);
  free(src);
  bxk_kernel_free(k);
}

Test(cuda, rejects_unverified_and_bad_names) {
  struct bxk_diags ds = {0};
  struct bxk_kernel *k = bxk_kernel_new("my-kernel");
  cr_expect_null(bxcu_emit(k, true, &ds));
  cr_assert_eq(ds.n, 1);
  cr_expect_str_eq(bxk_err_code(ds.d[0].err), "K0013");
  cr_expect(strstr(ds.d[0].msg, "my-kernel"), "%s", ds.d[0].msg);
  bxk_kernel_free(k);
  ds = (struct bxk_diags){0};
  k = bxk_kernel_new("bad");
  int o = bxk_add_binding(k, BXK_F32, 1, false); /* not mut: the store is rejected */
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_store(&B, o, bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS), bxk_const_f(&B, BXK_F32, 1));
  cr_expect_null(bxcu_emit(k, true, &ds));
  cr_expect_str_eq(bxk_err_code(ds.d[0].err), "K0007");
  bxk_kernel_free(k);
  /* bf16 is refused by name, at the first instruction that uses it */
  ds = (struct bxk_diags){0};
  k = sample_gelu(BXK_BF16);
  cr_expect_null(bxcu_emit(k, true, &ds));
  cr_assert_eq(ds.n, 1);
  cr_expect_str_eq(bxk_err_code(ds.d[0].err), "K0013");
  cr_expect(strstr(ds.d[0].msg, "kernel gelu uses bf16, which the CUDA/HIP lowering cannot compile yet"), "%s",
            ds.d[0].msg);
  bxk_kernel_free(k);
}

/* ---------------------------------------------------------------- NVRTC */

/* The LLVM tests' sample kernels, through one compiler; PTX is checked
 * for what it must contain (f64 math, no fma contraction, a barrier). */
static void samples(enum bxcu_vendor v) {
  struct bxcu_rtc *rc = rtc_or_skip(v);
  cr_log_info("%s %d from %s; ptxas %s", v == BXCU_HIP ? "hiprtc" : "NVRTC", bxcu_rtc_version(rc),
              bxcu_rtc_path(rc), v == BXCU_HIP ? "not used" : have_ptxas() ? ptxas_path() : "absent: PTX not assembled");
  for (size_t t = 0; t < NTYPES; t++)
    if (types[t] != BXK_BOOL) compile_free(rc, v, sample_add((enum bxk_type)types[t], t % 2));
  compile_free(rc, v, sample_gelu(BXK_F16));
  compile_free(rc, v, sample_gelu(BXK_F32));
  char *code = compile(rc, v, sample_gelu(BXK_F64));
  if (v == BXCU_CUDA) cr_expect(strstr(code, ".f64"), "GELU f64 computes in f64");
  free(code);
  code = compile(rc, v, sample_loops()); /* acc + x*w: two roundings, as in the IR */
  if (v == BXCU_CUDA) cr_expect_null(strstr(code, "fma.rn.f32"), "a*b+c was contracted into an fma");
  free(code);
  compile_free(rc, v, sample_topo());
  code = compile(rc, v, sample_shared_sum());
  if (v == BXCU_CUDA) {
    cr_expect(strstr(code, ".shared"), "shared_sum declares no shared memory");
    cr_expect(strstr(code, "bar.sync") || strstr(code, "barrier.sync"), "sync_cube is no barrier");
  }
  free(code);
  cr_expect_eq(nkernels, 13);
  bxcu_rtc_close(rc);
}

Test(cuda, samples_compile_to_ptx) { samples(BXCU_CUDA); }
Test(hip, samples_compile_to_code_objects) { samples(BXCU_HIP); }

/* One kernel per type computing every valid op of the family (binary:
 * add..ge, else neg..trunc) into its own output, as test_llvm_jit.c does;
 * returns how many op x type pairs were compiled. */
static unsigned compile_ops_per_type(struct bxcu_rtc *rc, enum bxcu_vendor v, bool binary) {
  unsigned total = 0, first = binary ? BXK_OP_ADD : BXK_OP_NEG, last = binary ? BXK_OP_GE : BXK_OP_TRUNC;
  for (size_t ti = 0; ti < NTYPES; ti++) {
    enum bxk_type t = (enum bxk_type)types[ti];
    struct bxk_kernel *k = bxk_kernel_new(binary ? "binops" : "unops");
    int a = bxk_add_binding(k, t, 1, false), b = bxk_add_binding(k, t, 1, false);
    struct bxk_builder B = bxk_builder_at(k, NULL);
    bxk_val pos = bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS);
    bxk_val x = bxk_load(&B, a, pos), y = bxk_load(&B, b, pos);
    for (unsigned op = first; op <= last; op++) {
      enum bxk_op o = (enum bxk_op)op;
      if (!valid(binary ? sample_binop(o, t) : sample_unop(o, t))) continue;
      int out = bxk_add_binding(k, bxk_opinfo[op].cls == BXK_C_CMP ? BXK_BOOL : t, 1, true);
      bxk_store(&B, out, pos, binary ? bxk_bin(&B, o, x, y) : bxk_un(&B, o, x));
      total++;
    }
    compile_free(rc, v, k);
  }
  return total;
}

static void ops_every_type(enum bxcu_vendor v, bool binary) {
  struct bxcu_rtc *rc = rtc_or_skip(v);
  unsigned n = compile_ops_per_type(rc, v, binary);
  cr_expect_gt(n, binary ? 100u : 50u, "only %u op x type pairs", n);
  bxcu_rtc_close(rc);
}

Test(cuda, binary_ops_every_type_compile) { ops_every_type(BXCU_CUDA, true); }
Test(cuda, unary_ops_every_type_compile) { ops_every_type(BXCU_CUDA, false); }
Test(hip, binary_ops_every_type_compile) { ops_every_type(BXCU_HIP, true); }
Test(hip, unary_ops_every_type_compile) { ops_every_type(BXCU_HIP, false); }

/* One kernel per source type casts to every type; constants of every
 * type (NaN, inf, -0, INT64_MIN) and a scalar of every type too. */
static void casts_constants_scalars(enum bxcu_vendor v) {
  struct bxcu_rtc *rc = rtc_or_skip(v);
  for (size_t f = 0; f < NTYPES; f++) {
    enum bxk_type from = (enum bxk_type)types[f];
    struct bxk_kernel *k = bxk_kernel_new("casts");
    int a = bxk_add_binding(k, from, 1, false);
    int s = bxk_add_scalar(k, from);
    struct bxk_builder B = bxk_builder_at(k, NULL);
    bxk_val pos = bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS);
    bxk_val x = bxk_select(&B, bxk_bin(&B, BXK_OP_EQ, pos, bxk_const_i(&B, BXK_U32, 0)),
                           bxk_scalar(&B, s), bxk_load(&B, a, pos));
    for (size_t t = 0; t < NTYPES; t++)
      bxk_store(&B, bxk_add_binding(k, (enum bxk_type)types[t], 1, true), pos,
                bxk_cast(&B, (enum bxk_type)types[t], x));
    int c = bxk_add_binding(k, from, 0, true);
    if (bxk_type_is_float(from)) {
      const double lits[] = {NAN, INFINITY, -INFINITY, -0.0, 0.1, 65504, 1e-300};
      for (unsigned j = 0; j < 7; j++)
        bxk_store(&B, c, bxk_const_i(&B, BXK_U32, j), bxk_const_f(&B, from, lits[j]));
    } else {
      const int64_t lits[] = {INT64_MIN, INT64_MAX, -1, 0, 1, INT32_MIN, 255};
      for (unsigned j = 0; j < 7; j++)
        bxk_store(&B, c, bxk_const_i(&B, BXK_U32, j), bxk_const_i(&B, from, lits[j]));
    }
    compile_free(rc, v, k);
  }
  bxcu_rtc_close(rc);
}

Test(cuda, casts_constants_scalars_every_type_compile) { casts_constants_scalars(BXCU_CUDA); }
Test(hip, casts_constants_scalars_every_type_compile) { casts_constants_scalars(BXCU_HIP); }

/* The compiler's own complaint reaches the caller: K0015 (CUDA) or K0016
 * (HIP) naming the kernel, and the whole log; a bad architecture is the
 * compiler's to reject too. */
static void rejected_source(enum bxcu_vendor v, const char *code, const char *bad_arch) {
  struct bxcu_rtc *rc = rtc_or_skip(v);
  struct bxk_diags ds = {0};
  char *log = NULL;
  size_t n = 1;
  char *out = bxcu_rtc_compile(rc, "extern \"C\" __global__ void broken() { undeclared_thing = 1; }", "broken",
                               NULL, &n, &log, &ds);
  cr_expect_null(out);
  cr_expect_eq(n, 0);
  cr_assert_eq(ds.n, 1);
  cr_expect_str_eq(bxk_err_code(ds.d[0].err), code);
  cr_expect(strstr(ds.d[0].msg, "kernel broken"), "%s", ds.d[0].msg);
  cr_assert(log);
  cr_expect(strstr(log, "undeclared_thing"), "log: %s", log);
  free(log);
  ds = (struct bxk_diags){0};
  cr_expect_null(bxcu_rtc_compile(rc, "extern \"C\" __global__ void k() {}", "k", bad_arch, NULL, NULL, &ds));
  cr_expect_eq(ds.n, 1);
  bxcu_rtc_close(rc);
}

Test(cuda, rejected_source_gives_log) { rejected_source(BXCU_CUDA, "K0015", "compute_1"); }
Test(hip, rejected_source_gives_log) { rejected_source(BXCU_HIP, "K0016", "gfx_no_such"); }

/* Absence is a clear error naming what was tried (real dlopen failures),
 * and a library that loads but is no compiler names the missing symbol. */
static void missing_rtc(enum bxcu_vendor v, const char *lib, const char *code, const char *what) {
  struct bxk_diags ds = {0};
  char want[256];
  cr_expect_null(bxcu_rtc_open_at(v, lib, &ds));
  cr_assert_eq(ds.n, 1);
  cr_expect_str_eq(bxk_err_code(ds.d[0].err), code);
  snprintf(want, sizeof want, "%s not found: %s (", v == BXCU_HIP ? "hiprtc" : "NVRTC", lib);
  cr_expect(strstr(ds.d[0].msg, want), "%s", ds.d[0].msg);
  ds = (struct bxk_diags){0};
  cr_expect_null(bxcu_rtc_open_at(v, "libm.so.6", &ds)); /* loads, but is no compiler */
  cr_assert_eq(ds.n, 1);
  snprintf(want, sizeof want, "libm.so.6 (no %s)", what);
  cr_expect(strstr(ds.d[0].msg, want), "%s", ds.d[0].msg);
}

Test(cuda, missing_nvrtc_is_a_clear_error) {
  missing_rtc(BXCU_CUDA, "/nonexistent/libnvrtc.so.13", "K0015", "nvrtcVersion");
}
Test(hip, missing_hiprtc_is_a_clear_error) {
  missing_rtc(BXCU_HIP, "/nonexistent/libhiprtc.so.6", "K0016", "hiprtcVersion");
}

Test(cuda, ptxas_assembles_for_sm_90) {
  if (!have_ptxas()) cr_skip_test("skipped: ptxas not found at %s (set BEXT_PTXAS)", ptxas_path());
  struct bxcu_rtc *rc = rtc_or_skip(BXCU_CUDA);
  struct bxk_diags ds = {0};
  struct bxk_kernel *k = sample_shared_sum();
  char *src = bxcu_emit(k, true, &ds);
  bxk_kernel_free(k);
  cr_assert(src);
  char *ptx = bxcu_rtc_compile(rc, src, "shared_sum", NULL, NULL, NULL, &ds);
  cr_assert(ptx);
  cr_expect(ptxas_ok(ptx, "shared_sum", false));
  /* and ptxas is a real check: corrupt PTX fails */
  cr_expect_not(ptxas_ok(".version 9.0\n.target sm_90\n.address_size 64\n.entry x( { bogus; }\n", "bogus", true));
  free(ptx);
  free(src);
  bxcu_rtc_close(rc);
}

/* ----------------------------------------------------------- CUDA driver */

/* Without a driver (this build machine) the device says so plainly; with
 * one (a lent GPU machine) it names device 0. */
Test(cuda, driver_absent_says_backend_unavailable) {
  struct bxk_diags ds = {0};
  struct bxcu_driver *d = bxcu_driver_open(BXCU_CUDA, 0, &ds);
  if (d) {
    cr_log_info("CUDA driver: %d devices, device 0 is %s", bxcu_driver_devices(d), bxcu_driver_device_name(d));
    cr_expect_gt(bxcu_driver_devices(d), 0);
    cr_expect_neq(bxcu_driver_device_name(d)[0], 0);
    bxcu_driver_close(d);
    return;
  }
  cr_assert_eq(ds.n, 1);
  cr_expect_str_eq(bxk_err_code(ds.d[0].err), "K0015");
  cr_expect(strncmp(ds.d[0].msg, "backend unavailable: ", 21) == 0, "%s", ds.d[0].msg);
  cr_log_info("%s", ds.d[0].msg);
  ds = (struct bxk_diags){0};
  cr_expect_null(bxcu_driver_open_at(BXCU_CUDA, "/nonexistent/libcuda.so.1", 0, &ds));
  cr_expect(strstr(ds.d[0].msg, "backend unavailable: no CUDA driver (/nonexistent/libcuda.so.1: "),
            "%s", ds.d[0].msg);
}

/* The toolkit's stub libcuda loads but cannot initialize: a real cuInit
 * failure, reported with the driver's error name or, as the stub cannot
 * name it, its number (34, CUDA_ERROR_STUB_LIBRARY). */
Test(cuda, driver_stub_fails_cuinit) {
  const char *stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (access(stub, R_OK) != 0) cr_skip_test("skipped: no CUDA stub library at %s", stub);
  struct bxk_diags ds = {0};
  cr_expect_null(bxcu_driver_open_at(BXCU_CUDA, stub, 0, &ds));
  cr_assert_eq(ds.n, 1);
  cr_expect(strstr(ds.d[0].msg, "backend unavailable: no CUDA driver (") &&
                (strstr(ds.d[0].msg, "cuInit: CUDA_ERROR_STUB_LIBRARY)") ||
                 strstr(ds.d[0].msg, "cuInit: CUresult 34)")),
            "%s", ds.d[0].msg);
}

/* HIP's runtime is installed here but there is no AMD GPU: hipInit itself
 * fails (hipErrorNoDevice, dependencies.md), reported as the backend being
 * unavailable; on a machine with one, device 0 is named. */
Test(hip, driver_without_device_says_backend_unavailable) {
  struct bxk_diags ds = {0};
  struct bxcu_driver *d = bxcu_driver_open(BXCU_HIP, 0, &ds);
  if (d) {
    cr_log_info("HIP: %d devices, device 0 is %s", bxcu_driver_devices(d), bxcu_driver_device_name(d));
    cr_expect_gt(bxcu_driver_devices(d), 0);
    bxcu_driver_close(d);
    return;
  }
  cr_assert_eq(ds.n, 1);
  cr_expect_str_eq(bxk_err_code(ds.d[0].err), "K0016");
  cr_expect(strncmp(ds.d[0].msg, "backend unavailable: ", 21) == 0, "%s", ds.d[0].msg);
  cr_log_info("%s", ds.d[0].msg);
  ds = (struct bxk_diags){0};
  cr_expect_null(bxcu_driver_open_at(BXCU_HIP, "/nonexistent/libamdhip64.so.6", 0, &ds));
  cr_expect(strstr(ds.d[0].msg, "backend unavailable: no HIP driver (/nonexistent/libamdhip64.so.6: "), "%s",
            ds.d[0].msg);
}
