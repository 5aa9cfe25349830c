/* test_kernel_threads.c — kernel_prepare from several threads at once
 * (kernel_cpu.c): threads preparing one key get one kernel from one
 * compile, threads preparing other keys meanwhile get theirs, and every
 * thread then launches its kernel on its own tensors.  In the TSan list. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>

#include "backend.h"
#include "bxl.h"
#include "kir_samples.h"

#define THREADS 4

static struct bxk_kernel *ir_same, *ir_other[THREADS];
static pthread_barrier_t go;

struct job { int id; struct bxr_kernel *same, *other; bool ok; };

static bool run_add(struct bext_device *d, struct bxr_kernel *k, int id) {
  int64_t n = 1000 + id;
  float *a = malloc(sizeof(float) * (size_t)n);
  for (int64_t i = 0; i < n; i++) a[i] = (float)(i * (id + 1));
  bext_tensor *t = bext_from_data(a, BEXT_F32, &n, 1, bext_device_get("flex"));
  bext_tensor *o = bext_zeros(&n, 1, BEXT_F32, bext_device_get("flex"));
  bext_tensor *bind[3] = {t, t, o};
  uint32_t count[3] = {(uint32_t)(n + 63) / 64, 1, 1}, dim[3] = {64, 1, 1};
  bool ok = t && o && d->vt->kernel_launch(d, k, count, dim, bind, NULL);
  const float *got = ok ? bext_data(o) : NULL;
  for (int64_t i = 0; ok && i < n; i++) ok = got[i] == 2 * a[i];
  bext_release(t), bext_release(o);
  free(a);
  return ok;
}

static void *worker(void *arg) {
  struct job *j = arg;
  struct bext_device *d = bxr_device_resolve(bext_device_get("flex"), "test");
  pthread_barrier_wait(&go);
  j->same = d->vt->kernel_prepare(d, ir_same, 1000);
  j->other = d->vt->kernel_prepare(d, ir_other[j->id], 2000 + (uint64_t)j->id);
  j->ok = j->same && j->other && run_add(d, j->same, j->id) && run_add(d, j->other, j->id);
  return NULL;
}

Test(kernel_threads, one_compile_per_key) {
  setenv("BEXT_CACHE_DIR", "off", 1);   /* count compiles, not disk hits */
  ir_same = sample_add(BXK_F32, true);
  for (int i = 0; i < THREADS; i++) {
    /* distinct IR per thread, same results: the guard is
     * pos + i < len + i */
    ir_other[i] = bxk_kernel_new(i % 2 ? "add_b" : "add_a");
    struct bxk_kernel *k = ir_other[i];
    int a = bxk_add_binding(k, BXK_F32, 1, false), b = bxk_add_binding(k, BXK_F32, 1, false);
    int o = bxk_add_binding(k, BXK_F32, 1, true);
    struct bxk_builder B = bxk_builder_at(k, NULL);
    bxk_val pos = bxk_topo(&B, BXK_TOPO_ABSOLUTE_POS);
    bxk_val lim = bxk_bin(&B, BXK_OP_ADD, bxk_len(&B, o), bxk_const_i(&B, BXK_U32, i));
    struct bxk_block *then;
    bxk_if(&B, bxk_bin(&B, BXK_OP_LT, bxk_bin(&B, BXK_OP_ADD, pos, bxk_const_i(&B, BXK_U32, i)), lim),
           &then, NULL);
    struct bxk_builder I = bxk_builder_at(k, then);
    bxk_store(&I, o, pos, bxk_bin(&I, BXK_OP_ADD, bxk_load(&I, a, pos), bxk_load(&I, b, pos)));
  }
  struct bxr_kernel_stats st0, st1;
  bxr_kernel_cpu_stats(&st0);
  pthread_barrier_init(&go, NULL, THREADS);
  pthread_t t[THREADS];
  struct job jobs[THREADS];
  for (int i = 0; i < THREADS; i++) {
    jobs[i] = (struct job){.id = i};
    cr_assert_eq(pthread_create(&t[i], NULL, worker, &jobs[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&go);
  bxr_kernel_cpu_stats(&st1);
  for (int i = 0; i < THREADS; i++) {
    cr_expect(jobs[i].ok, "thread %d: %s", i, bext_last_error());
    cr_expect_eq(jobs[i].same, jobs[0].same, "thread %d got another kernel for the same key", i);
  }
  cr_expect_eq(st1.compiles - st0.compiles, 1 + THREADS,
               "%lu compiles for one shared key and %d distinct ones", st1.compiles - st0.compiles,
               THREADS);
  bxk_kernel_free(ir_same);
  for (int i = 0; i < THREADS; i++) bxk_kernel_free(ir_other[i]);
}
