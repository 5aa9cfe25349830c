/* test_remote_threads.c — clients and servers on many threads (in the
 * TSan list, tests/CMakeLists.txt): two in-process servers, 8 client
 * threads, each pair of servers' devices shared by 4 threads (one
 * session each, so ops of 4 threads interleave on one stream), each
 * thread uploading, computing and reading its own values, with core ops
 * and extension calls (remote_ops.bext: affine streams, row_sums waits,
 * summary returns a struct, its tensor at an id of a block the thread
 * reserved; the first calls of each thread race to ask the server
 * whether it runs them).  Every result must be right, and the servers must end with
 * nothing held. */
#include <criterion/criterion.h>

#include <bext/bext.h>

#include "inproc.h"
#include "remote_ops.h"

#define THREADS 8
#define ROUNDS 60

struct job {
  const bext_device *dev;
  int seed, bad;
  char why[300];
};

static void *client(void *arg) {
  struct job *j = arg;
  for (int r = 0; r < ROUNDS && !j->bad; r++) {
    float v[16];
    int64_t n = 16;
    for (int i = 0; i < 16; i++) v[i] = (float)(j->seed * 100 + r + i);
    bext_tensor *a = bext_from_data(v, BEXT_F32, &n, 1, j->dev);
    bext_tensor *b = bext_retain(a);
    for (int k = 0; k < 10; k++) b = bext_add(b, bext_retain(a));   /* 11 a */
    bext_tensor *s = bext_sum(bext_sub_scalar(bext_retain(b), 1.0));
    float out[16], sum = 0, want_sum = 0;
    if (!b || !s || !bext_read(b, out, sizeof out) || !bext_read(s, &sum, sizeof sum)) {
      j->bad = 1;
      snprintf(j->why, sizeof j->why, "round %d: %s", r, bext_last_error());
    }
    for (int i = 0; i < 16 && !j->bad; i++) {
      if (out[i] != 11 * v[i]) {
        j->bad = 1;
        snprintf(j->why, sizeof j->why, "round %d element %d: %g, want %g", r, i, out[i], 11 * v[i]);
      }
      want_sum += 11 * v[i] - 1;
    }
    if (!j->bad && sum != want_sum) {
      j->bad = 1;
      snprintf(j->why, sizeof j->why, "round %d sum %g, want %g", r, sum, want_sum);
    }
    bext_tensor *e = remote_ops_affine(bext_retain(a), 2.0f, 1.0f);
    bext_tensor *rs = remote_shapes_row_sums(bext_reshape(bext_retain(a), (int64_t[]){4, 4}, 2), 1.0);
    float ev[16], rv[4];
    if (!j->bad && (!e || !rs || !bext_read(e, ev, sizeof ev) || !bext_read(rs, rv, sizeof rv))) {
      j->bad = 1;
      snprintf(j->why, sizeof j->why, "round %d, extension calls: %s", r, bext_last_error());
    }
    for (int i = 0; i < 16 && !j->bad; i++)
      if (ev[i] != 2 * v[i] + 1) {
        j->bad = 1;
        snprintf(j->why, sizeof j->why, "round %d affine %d: %g, want %g", r, i, ev[i], 2 * v[i] + 1);
      }
    for (int i = 0; i < 4 && !j->bad; i++) {
      float want = v[4 * i] + v[4 * i + 1] + v[4 * i + 2] + v[4 * i + 3];
      if (rv[i] != want) {
        j->bad = 1;
        snprintf(j->why, sizeof j->why, "round %d row_sums %d: %g, want %g", r, i, rv[i], want);
      }
    }
    Summary sm;
    float total = 0, want_total = 0;
    for (int i = 0; i < 16; i++) want_total += v[i];
    if (!j->bad && (!remote_values_summary(bext_retain(a), 0.5, &sm) || !bext_read(sm.total, &total, sizeof total))) {
      j->bad = 1;
      snprintf(j->why, sizeof j->why, "round %d, a value result: %s", r, bext_last_error());
    } else if (!j->bad) {
      if (total != 0.5f * want_total || sm.count != 16 || sm.scale != 0.5) {
        j->bad = 1;
        snprintf(j->why, sizeof j->why, "round %d summary: total %g count %u scale %g, want %g 16 0.5", r, total,
                 sm.count, sm.scale, 0.5f * want_total);
      }
      summary_release(&sm);
    }
    bext_release(a);
    bext_release(b);
    bext_release(s);
    bext_release(e);
    bext_release(rs);
  }
  return NULL;
}

Test(remote_threads, clients_on_many_threads_over_two_servers) {
  static struct ip_server srv[2];
  const bext_device *devs[2];
  for (int k = 0; k < 2; k++) {
    cr_assert(ip_start(&srv[k], "flex", NULL), "%s", bext_last_error());
    cr_assert((devs[k] = bext_device_get(srv[k].spec)), "%s", bext_last_error());
  }
  pthread_t th[THREADS];
  static struct job jobs[THREADS];
  for (int i = 0; i < THREADS; i++) {
    jobs[i] = (struct job){.dev = devs[i % 2], .seed = i};
    cr_assert_eq(pthread_create(&th[i], NULL, client, &jobs[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < THREADS; i++) cr_expect(!jobs[i].bad, "thread %d: %s", i, jobs[i].why);
  for (int k = 0; k < 2; k++) {
    cr_expect(bext_sync(devs[k]), "%s", bext_last_error());   /* carries the last releases */
    struct bxsv_stats st;
    cr_expect(ip_settles(&srv[k], 1, 0, &st), "server %d holds %llu tensors", k, (unsigned long long)st.tensors);
    cr_expect(bext_device_close(devs[k]));
    cr_expect(ip_settles(&srv[k], 0, 0, &st));
    ip_stop(&srv[k]);
  }
}
