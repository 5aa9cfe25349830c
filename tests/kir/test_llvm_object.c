/* test_llvm_object.c — kernel objects built ahead of time for any x86-64
 * (bxl_dispatch.c): every kernel twice, x86-64-v2 and x86-64-v3, behind a
 * GNU ifunc.  The object is linked into a shared library with the system
 * compiler and loaded, as a user's build would, and the kernels run.
 *
 * Which clone the resolver picks is checked against the flags Linux shows
 * in /proc/cpuinfo, an independent reading of cpuid, and each clone's
 * results against C. */
#include <criterion/criterion.h>
#include <cpuid.h>
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bxl.h"
#include "kir_samples.h"
#include "llvm_bind.h"

static char dir[] = "/tmp/bxl_objXXXXXX";

/* Writes the kernels to DIR/k.o with cpu, links DIR/k.so; its handle. */
static void *build(struct bxk_kernel **ks, size_t n, const char *cpu) {
  cr_assert(mkdtemp(dir) || access(dir, F_OK) == 0);
  char obj[128], so[128], cmd[512];
  snprintf(obj, sizeof obj, "%s/k%s.o", dir, cpu ? cpu : "");
  snprintf(so, sizeof so, "%s/k%s.so", dir, cpu ? cpu : "");
  struct bxk_diags ds = {0};
  bool ok = bxl_emit_object((const struct bxk_kernel *const *)ks, n, cpu, obj, &ds);
  for (size_t j = 0; j < n; j++) bxk_kernel_free(ks[j]);
  cr_assert(ok, "%s", ds.n ? ds.d[0].msg : "?");
  snprintf(cmd, sizeof cmd, "cc -shared -Wl,--no-undefined -o '%s' '%s' -lmvec -lm", so, obj);
  cr_assert_eq(system(cmd), 0, "%s", cmd);
  void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  cr_assert(h, "%s", dlerror());
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir); /* loaded: the files can go */
  cr_expect_eq(system(cmd), 0);
  return h;
}

static void run1d(bxl_kernel_fn fn, struct bxl_binding *b, uint32_t n, uint32_t dim) {
  struct bxl_grid g = {.cube_count = {(n + dim - 1) / dim, 1, 1}, .cube_dim = {dim, 1, 1}};
  for (uint32_t c = 0; c < g.cube_count[0]; c++) {
    g.cube_pos[0] = c;
    fn(b, NULL, &g, 0, dim); /* whole cubes: the kernels' guards stop at len */
  }
}

/* LZCNT from cpuid itself (leaf 0x80000001, ecx bit 5): some hypervisors
 * report it there but leave "abm" out of /proc/cpuinfo (seen on an AMD
 * EPYC guest), and it needs no OS-saved state, so cpuid is the truth. */
static bool cpu_has_lzcnt(void) {
  unsigned a, b, c, d;
  return __get_cpuid(0x80000001u, &a, &b, &c, &d) && (c >> 5 & 1u);
}

/* The kernel's own view (Linux's /proc/cpuinfo flags, which it shows only
 * for features the OS enables) of the x86-64-v3 set, LZCNT aside: an
 * independent reading to check the resolver against. */
static bool cpu_runs_v3(void) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  cr_assert(f, "no /proc/cpuinfo");
  char line[8192];
  bool ok = false;
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, "flags", 5)) {
      static const char *const need[] = {" avx ", " avx2 ", " fma ", " bmi1 ", " bmi2 ", " f16c ", " movbe ",
                                         " popcnt ", " sse4_2 "};
      size_t n = strlen(line);
      if (n && line[n - 1] == '\n') line[n - 1] = ' ';
      ok = true;
      for (size_t i = 0; i < sizeof need / sizeof *need; i++) ok = ok && strstr(line, need[i]);
      break;
    }
  fclose(f);
  return ok && cpu_has_lzcnt();
}

Test(object, clones_dispatch_and_agree) {
  struct bxk_kernel *ks[2] = {sample_gelu(BXK_F32), sample_add(BXK_F64, true)};
  void *h = build(ks, 2, NULL);
  bxl_kernel_fn g = (bxl_kernel_fn)dlsym(h, "gelu"), g2 = (bxl_kernel_fn)dlsym(h, "gelu.x86_64_v2"),
                g3 = (bxl_kernel_fn)dlsym(h, "gelu.x86_64_v3");
  cr_assert(g && g2 && g3, "symbols: %p %p %p", (void *)g, (void *)g2, (void *)g3);
  bool v3 = cpu_runs_v3();
  cr_log_info("this CPU %s x86-64-v3: the ifunc picked %s", v3 ? "runs" : "does not run",
              g == g3 ? "the v3 clone" : g == g2 ? "the v2 clone" : "neither");
  cr_expect_eq(g, v3 ? g3 : g2, "the resolver disagrees with /proc/cpuinfo");
  uint32_t n = 1037; /* not a multiple of any vector width */
  float *x = malloc(n * 4), *y2 = malloc((n + 64) * 4), *y3 = malloc((n + 64) * 4);
  for (uint32_t i = 0; i < n; i++) x[i] = (float)i / 97.0f - 5.0f;
  struct bxl_binding b[2] = {bind(x, n), bind(y2, n)};
  run1d(g2, b, n, 64);
  if (v3) { /* the clone runs only where its instructions exist */
    b[1] = bind(y3, n);
    run1d(g3, b, n, 64);
  }
  for (uint32_t i = 0; i < n; i++) {
    float w = x[i] * 0.5f * (1.0f + erff(x[i] / sqrtf(2.0f)));
    /* libmvec's erf in the v3 clone: within 4 ulp (docs/kernels.md) */
    float tol = 2 * fabsf(x[i]) * FLT_EPSILON + 4 * FLT_EPSILON * fabsf(w);
    cr_assert_leq(fabsf(y2[i] - w), tol, "v2 i=%u: %.9g vs %.9g", i, y2[i], w);
    if (v3) cr_assert_leq(fabsf(y3[i] - w), tol, "v3 i=%u: %.9g vs %.9g", i, y3[i], w);
  }
  /* add f64 through the dispatching symbol: exact */
  bxl_kernel_fn add = (bxl_kernel_fn)dlsym(h, "add");
  cr_assert(add);
  double *p = malloc(n * 8), *q = malloc(n * 8), *r = malloc(n * 8);
  for (uint32_t i = 0; i < n; i++) p[i] = i * 0.5, q[i] = 1.0 / (i + 1);
  struct bxl_binding ab[3] = {bind(p, n), bind(q, n), bind(r, n)};
  run1d(add, ab, n, 128);
  for (uint32_t i = 0; i < n; i++) cr_assert_eq(r[i], p[i] + q[i], "add i=%u", i);
  free(x), free(y2), free(y3), free(p), free(q), free(r);
  dlclose(h);
}

/* A CPU the caller names is what they get: one function per kernel, no
 * clone, no ifunc. */
Test(object, named_cpu_is_not_dispatched) {
  struct bxk_kernel *ks[1] = {sample_add(BXK_F32, true)};
  void *h = build(ks, 1, "x86-64-v2");
  cr_expect(dlsym(h, "add"));
  cr_expect_null(dlsym(h, "add.x86_64_v3"));
  dlclose(h);
}
