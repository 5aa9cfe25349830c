/* pool.c — the runtime's one thread pool, for every backend that splits
 * large work over threads (Flex today, cube:cpu later); the contract is in
 * backend.h.  It lives in the runtime, not in a backend, so two CPU
 * backends in one process share one set of workers and one OpenBLAS
 * thread count instead of oversubscribing the cores.
 *
 * One job at a time: a caller that finds the pool busy (another user
 * thread, or a nested call from inside a chunk) runs its range inline
 * instead of queueing, so the pool can never deadlock and small or
 * concurrent callers never block on it.
 *
 * Chunks are claimed, not assigned: the caller and the workers take the
 * next unclaimed chunk from one counter until none is left, so a worker
 * that has not woken up yet (descheduled on a busy machine: perf on the
 * MLP training step had 12% of its cycles in the caller's wait) costs
 * nothing: the caller runs its chunk too.  The chunks themselves are the
 * same whoever runs them, so results stay those of the fixed split. */
#include "backend.h"

/* BXR_HAVE_OPENBLAS: every build but the bare GPU machine's
 * (BEXT_GPU_CHECK), which has no Flex and so no OpenBLAS. */
#ifdef BXR_HAVE_OPENBLAS
#include <cblas.h>
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define BXR_POOL_MAX_THREADS 64

static struct {
  pthread_once_t once;
  pthread_mutex_t m;
  pthread_cond_t work_cv;   /* a new generation was posted */
  pthread_cond_t done_cv;   /* pending reached zero */
  int nworkers;             /* threads besides the caller */
  unsigned long gen;        /* job generation, guarded by m */
  bxr_pool_task fn;         /* the current job, guarded by m */
  void *ctx;
  size_t n, chunk;
  int nchunks;
  /* The claim counter: the job's generation (low 32 bits) in the high
   * half, the next unclaimed chunk in the low half, so a worker that read
   * an older job's description can never claim a chunk of a newer one. */
  _Atomic uint64_t ticket;
  atomic_int pending;       /* chunks not yet finished */
  atomic_flag busy;         /* held by the thread that owns the pool */
  atomic_int limit;         /* bxr_pool_set_threads */
  atomic_ulong split;       /* jobs that went to the workers */
} P = {
  .once = PTHREAD_ONCE_INIT,
  .m = PTHREAD_MUTEX_INITIALIZER,
  .work_cv = PTHREAD_COND_INITIALIZER,
  .done_cv = PTHREAD_COND_INITIALIZER,
  .busy = ATOMIC_FLAG_INIT,
};

/* The next chunk of job `gen` (nchunks of them), or -1 when all are
 * claimed or that job is over. */
static int claim(unsigned long gen, int nchunks) {
  uint64_t v = atomic_load_explicit(&P.ticket, memory_order_relaxed);
  for (;;) {
    if ((uint32_t)(v >> 32) != (uint32_t)gen || (int)(uint32_t)v >= nchunks) return -1;
    if (atomic_compare_exchange_weak_explicit(&P.ticket, &v, v + 1, memory_order_acq_rel, memory_order_relaxed))
      return (int)(uint32_t)v;
  }
}

/* Runs chunks of the job until none is left to claim; true when this
 * thread finished the job's last chunk. */
static bool run_chunks(unsigned long gen, bxr_pool_task fn, void *ctx, size_t n, size_t chunk, int nchunks) {
  bool last = false;
  for (int idx; (idx = claim(gen, nchunks)) >= 0;) {
    size_t b = (size_t)idx * chunk, e = b + chunk < n ? b + chunk : n;
    fn(ctx, b, e);
    last = atomic_fetch_sub_explicit(&P.pending, 1, memory_order_acq_rel) == 1;
  }
  return last;
}

/* Jobs often come back to back (a training step's gemms, a few small
 * inline ops apart), and a worker woken through the condition variable
 * starts tens of microseconds late, which the caller then waits out.  So
 * a worker that has just run a job watches the claim counter for the
 * next one for BXR_POOL_LINGER_NS before it sleeps: bounded, so idle
 * workers still leave the shared cores alone. */
#define BXR_POOL_LINGER_NS 50000
static void linger(unsigned long seen) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 1;; i++) {
    if ((uint32_t)(atomic_load_explicit(&P.ticket, memory_order_acquire) >> 32) != (uint32_t)seen) return;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if (i % 32 == 0) {
      clock_gettime(CLOCK_MONOTONIC, &t);
      if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) > BXR_POOL_LINGER_NS) return;
    }
  }
}

static void *worker(void *arg) {
  (void)arg;
  unsigned long seen = 0;
  for (;;) {
    if (seen) linger(seen);
    pthread_mutex_lock(&P.m);
    while (P.gen == seen) pthread_cond_wait(&P.work_cv, &P.m);
    seen = P.gen;
    bxr_pool_task fn = P.fn;
    void *ctx = P.ctx;
    size_t n = P.n, chunk = P.chunk;
    int nchunks = P.nchunks;
    pthread_mutex_unlock(&P.m);
    if (run_chunks(seen, fn, ctx, n, chunk, nchunks)) {
      /* Take the lock so the caller cannot miss the wakeup between its
       * check of `pending` and its wait. */
      pthread_mutex_lock(&P.m);
      pthread_cond_broadcast(&P.done_cv);
      pthread_mutex_unlock(&P.m);
    }
  }
  return NULL;
}

/* A forked child has none of the parent's workers: run everything inline
 * there instead of waiting for threads that do not exist. */
static void after_fork_child(void) {
  P.nworkers = 0;
  atomic_store(&P.limit, 1);
}

static void pool_init(void) {
  pthread_atfork(NULL, NULL, after_fork_child);
  long want = 0;
  const char *env = getenv("BEXT_NUM_THREADS");
  if (env && *env) want = strtol(env, NULL, 10);
  if (want <= 0) want = sysconf(_SC_NPROCESSORS_ONLN);
  if (want < 1) want = 1;
  if (want > BXR_POOL_MAX_THREADS) want = BXR_POOL_MAX_THREADS;
  int made = 0;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  for (int i = 1; i < want; i++) {
    pthread_t t;
    if (pthread_create(&t, &attr, worker, (void *)(size_t)i) != 0) break;
    made++;
  }
  pthread_attr_destroy(&attr);
  P.nworkers = made;
  atomic_store(&P.limit, made + 1);
#ifdef BXR_HAVE_OPENBLAS
  openblas_set_num_threads(1);
#endif
}

int bxr_pool_threads(void) {
  pthread_once(&P.once, pool_init);
  return atomic_load(&P.limit);
}

int bxr_pool_set_threads(int n) {
  pthread_once(&P.once, pool_init);
  /* (in a forked child nworkers is 0, so this stays 1) */
  if (n <= 0 || n > P.nworkers + 1) n = P.nworkers + 1;
  return atomic_exchange(&P.limit, n);
}

unsigned long bxr_pool_jobs_split(void) { return atomic_load(&P.split); }

int bxr_blas_threads_begin(void) {
  pthread_once(&P.once, pool_init);
#ifdef BXR_HAVE_OPENBLAS
  int old = openblas_get_num_threads();
  openblas_set_num_threads(atomic_load(&P.limit));
  return old;
#else
  return 1;
#endif
}

void bxr_blas_threads_end(int old) {
#ifdef BXR_HAVE_OPENBLAS
  openblas_set_num_threads(old);
#else
  (void)old;
#endif
}

void bxr_pool_for(size_t n, size_t cost, size_t align, bxr_pool_task fn, void *ctx) {
  if (n == 0) return;
  if (align == 0) align = 1;
  if (cost == 0) cost = 1;
  /* Small work: no pool, no lock, no atomics beyond the once check. */
  if (n * cost < BXR_POOL_MIN || n <= align) { fn(ctx, 0, n); return; }
  pthread_once(&P.once, pool_init);
  int threads = atomic_load(&P.limit);
  if (threads <= 1 || atomic_flag_test_and_set(&P.busy)) { fn(ctx, 0, n); return; }

  size_t chunk = (n + (size_t)threads - 1) / (size_t)threads;
  chunk = (chunk + align - 1) / align * align;
  int nchunks = (int)((n + chunk - 1) / chunk);
  if (nchunks <= 1) { atomic_flag_clear(&P.busy); fn(ctx, 0, n); return; }

  pthread_mutex_lock(&P.m);
  P.fn = fn; P.ctx = ctx; P.n = n; P.chunk = chunk; P.nchunks = nchunks;
  atomic_store(&P.pending, nchunks);
  unsigned long gen = ++P.gen;
  atomic_store_explicit(&P.ticket, (uint64_t)(uint32_t)gen << 32, memory_order_release);
  pthread_cond_broadcast(&P.work_cv);
  pthread_mutex_unlock(&P.m);
  atomic_fetch_add(&P.split, 1);

  /* the caller claims chunks like any worker: those no worker took yet */
  run_chunks(gen, fn, ctx, n, chunk, nchunks);

  /* Chunks still running on workers: a short spin covers those finishing
   * about when we do; then sleep. */
  for (int i = 0; i < 4000 && atomic_load(&P.pending) > 0; i++) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  if (atomic_load(&P.pending) > 0) {
    pthread_mutex_lock(&P.m);
    while (atomic_load(&P.pending) > 0) pthread_cond_wait(&P.done_cv, &P.m);
    pthread_mutex_unlock(&P.m);
  }
  atomic_flag_clear(&P.busy);
}
