/* test_fusion_threads.c — "+fusion" across threads (issue 10; Burn's
 * fusion broke with concurrent threads, tracel-ai/burn #1117): two
 * threads record on one device at once, each on its own stream, with
 * results equal to the same work done eagerly on flex; a tensor recorded
 * (not yet computed) on one thread is used and read on another, which
 * runs the giver's stream first; a thread that exits with pending records
 * leaves them readable.  Runs under ThreadSanitizer (make tsan). */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <bext/bext.h>

#define N 64
#define ROUNDS 40

/* A chain of ops on x (borrowed), read into out. */
static bool chain(const bext_device *d, int k, float *out) {
  float v[N];
  for (int i = 0; i < N; i++) v[i] = 0.01f * (float)((i * (k + 5)) % 23) - 0.1f;
  bext_tensor *x = bext_from_data(v, BEXT_F32, (int64_t[]){N}, 1, d);
  for (int r = 0; r < ROUNDS; r++)
    x = bext_add_scalar(bext_mul_scalar(bext_tanh(bext_add(bext_sin(bext_retain(x)), x)), 0.9), 0.01 * k);
  bext_tensor *s = bext_sum_dim(bext_reshape(x, (int64_t[]){8, 8}, 2), 1, false);
  bool ok = s && bext_read(s, out, 8 * sizeof *out);
  bext_release(s);
  return ok;
}

struct worker {
  const bext_device *d;
  int k;
  float got[8];
  bool ok;
};

static void *work(void *p) {
  struct worker *w = p;
  w->ok = true;
  for (int rep = 0; rep < 5 && w->ok; rep++) w->ok = chain(w->d, w->k, w->got);
  return NULL;
}

Test(fusion_threads, two_threads_record_on_one_device) {
  const bext_device *d = bext_device_get("flex+fusion"), *flex = bext_device_get("flex");
  struct worker w[2] = {{.d = d, .k = 1}, {.d = d, .k = 2}};
  pthread_t t[2];
  for (int i = 0; i < 2; i++) cr_assert_eq(pthread_create(&t[i], NULL, work, &w[i]), 0);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < 2; i++) {
    cr_assert(w[i].ok, "thread %d: %s", i, bext_last_error());
    float want[8];
    cr_assert(chain(flex, w[i].k, want));
    for (int j = 0; j < 8; j++) cr_expect(fabsf(w[i].got[j] - want[j]) <= 1e-5f * (1 + fabsf(want[j])),
                                          "thread %d row %d: %g vs %g", i, j, w[i].got[j], want[j]);
  }
  cr_expect(bext_sync(d), "%s", bext_last_error());
}

/* A tensor recorded on the main thread, not computed yet, handed to a
 * thread that records more on it and reads; the main thread reads its
 * own afterwards. */
struct handoff {
  bext_tensor *x;   /* owned by the receiver */
  float got[N];
  bool ok;
  char err[300];
};

static void *receive(void *p) {
  struct handoff *h = p;
  bext_tensor *y = bext_exp(h->x);
  h->ok = y && bext_read(y, h->got, sizeof h->got);
  if (!h->ok) snprintf(h->err, sizeof h->err, "%s", bext_last_error());
  bext_release(y);
  return NULL;
}

Test(fusion_threads, a_tensor_moves_between_threads) {
  const bext_device *d = bext_device_get("flex+fusion");
  float v[N];
  for (int i = 0; i < N; i++) v[i] = 0.05f * (float)i;
  bext_fusion_stat s0;
  cr_assert(bext_fusion_stats(&s0));
  bext_tensor *base = bext_from_data(v, BEXT_F32, (int64_t[]){N}, 1, d);
  bext_tensor *mine = bext_neg(bext_retain(base));     /* pending on this thread */
  struct handoff h = {.x = bext_mul_scalar(base, 2.0)};  /* pending too, handed over */
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, receive, &h), 0);
  pthread_join(t, NULL);
  cr_assert(h.ok, "%s", h.err);
  for (int i = 0; i < N; i++) cr_expect(fabsf(h.got[i] - expf(2 * v[i])) <= 1e-5f * expf(2 * v[i]));
  float got[N];
  cr_assert(bext_read(mine, got, sizeof got), "%s", bext_last_error());
  for (int i = 0; i < N; i++) cr_expect_eq(got[i], -v[i]);
  bext_release(mine);
}

/* A thread records and exits without reading: its values stay readable
 * from the thread that receives them. */
static void *record_only(void *p) {
  bext_tensor **out = p;
  const bext_device *d = bext_device_get("flex+fusion");
  *out = bext_mul_scalar(bext_ones((int64_t[]){N}, 1, BEXT_F32, d), 3.0);
  return NULL;
}

Test(fusion_threads, records_outlive_the_thread_that_made_them) {
  bext_tensor *x = NULL;
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, record_only, &x), 0);
  pthread_join(t, NULL);
  cr_assert_not_null(x, "%s", bext_last_error());
  float got[N];
  cr_assert(bext_read(x, got, sizeof got), "%s", bext_last_error());
  for (int i = 0; i < N; i++) cr_expect_eq(got[i], 3.0f);
  bext_release(x);
  /* a new thread takes the stream over and records on it */
  cr_assert_eq(pthread_create(&t, NULL, record_only, &x), 0);
  pthread_join(t, NULL);
  cr_assert(bext_read(x, got, sizeof got), "%s", bext_last_error());
  cr_expect_eq(got[0], 3.0f);
  bext_release(x);
}
