/* test_remote_load.c — load on one bext-server (a child process hosting
 * flex, on loopback TCP): 16 client threads, each its own session, each
 * running ROUNDS rounds of a ~30-op program (uploads, elementwise chains,
 * a reduction, a matmul, integer ops, reads) and checking every value it
 * reads against the same program run on local flex.  While all 16 are
 * connected the server counts 16 sessions (plus the watcher's); after they
 * leave — half of them with handles still alive — its live sessions,
 * tensors and bytes (a Stats request over the wire) are back at their
 * baseline, and the server exits cleanly.  In the TSan list
 * (tests/CMakeLists.txt): the client threads run in this process, and in
 * the TSan tree the server is a TSan build too, whose exit status counts.
 *
 * One device per spelling: bext_device_get interns one device, so one
 * session, per spec.  Each client spells the loopback address its own way
 * ("127.0.0.1", "127.0.0.01", "127.0.0.001", ...: the resolver reads a
 * leading zero as octal, so all are 127.0.0.1), which gives 16 devices
 * and 16 connections to the one server. */
#include <criterion/criterion.h>
#include <math.h>

#include <bext/bext.h>

#include "remote_harness.h"
#include "raw_session.h"

#define CLIENTS 16
#define ROUNDS 40
#define N 64            /* elements of the f32 inputs: an 8x8 matmul */
#define NI 16           /* elements of the i32 input */

/* ------------------------------------------------------------ clients */

/* What one round reads back. */
struct results {
  float chain[N], rows[8], mm[N], sum;
  int32_t ints[NI];
};

/* One round's program on device d: the same ops in the same order on the
 * remote device and on local flex.  `keep` (may be NULL) receives one
 * tensor the caller releases later (or never, before the session ends).
 * Counts the ops it issued in *ops. */
static bool program(const bext_device *d, const float *xv, const float *yv, const int32_t *iv, struct results *o,
                    bext_tensor **keep, uint64_t *ops) {
  int64_t n = N, ni = NI, sq[2] = {8, 8};
  bext_tensor *x = bext_from_data(xv, BEXT_F32, &n, 1, d);
  bext_tensor *y = bext_from_data(yv, BEXT_F32, &n, 1, d);
  bext_tensor *z = bext_retain(x);
  for (int k = 0; k < 20; k++) {
    switch (k % 4) {
    case 0: z = bext_add(z, bext_retain(y)); break;
    case 1: z = bext_mul_scalar(z, 0.5); break;
    case 2: z = bext_sub(z, bext_retain(x)); break;
    default: z = bext_tanh(z); break;
    }
  }
  bext_tensor *rows = bext_sum_dim(bext_reshape(bext_retain(z), sq, 2), 1, false);
  bext_tensor *s = bext_sum(bext_exp(bext_retain(z)));
  bext_tensor *mm = bext_matmul(bext_reshape(bext_retain(x), sq, 2), bext_reshape(bext_retain(y), sq, 2));
  bext_tensor *i = bext_from_data(iv, BEXT_I32, &ni, 1, d);
  bext_tensor *ii = bext_add_scalar(bext_mul(bext_retain(i), bext_retain(i)), -3);
  *ops += 2 + 20 + 2 + 2 + 3 + 1 + 2;
  bool ok = z && rows && s && mm && ii && bext_read(z, o->chain, sizeof o->chain) &&
            bext_read(rows, o->rows, sizeof o->rows) && bext_read(s, &o->sum, sizeof o->sum) &&
            bext_read(mm, o->mm, sizeof o->mm) && bext_read(ii, o->ints, sizeof o->ints);
  *ops += 5;
  if (keep) *keep = bext_retain(mm);
  bext_release(x), bext_release(y), bext_release(z), bext_release(rows), bext_release(s);
  bext_release(mm), bext_release(i), bext_release(ii);
  return ok;
}

static bool close_to(float a, float b) { return fabsf(a - b) <= 1e-6f * (1 + fabsf(b)); }

struct client {
  int k;
  char spec[160];
  const bext_device *dev;
  pthread_barrier_t *all_in, *go_on;
  bool bad;
  char why[400];
  uint64_t ops, values;
};

static void *client_run(void *arg) {
  struct client *c = arg;
  const bext_device *flex = bext_device_get("flex");
  uint32_t seed = 2654435761u * (uint32_t)(c->k + 1);
  bext_tensor *kept[ROUNDS] = {0};
  int nkept = 0;
  bool met = false;
  for (int r = 0; r < ROUNDS && !c->bad; r++) {
    float xv[N], yv[N];
    int32_t iv[NI];
    for (int i = 0; i < N; i++) {
      seed = seed * 1664525u + 1013904223u;
      xv[i] = (float)(seed >> 8) / (float)(1 << 24) * 2 - 1;
      seed = seed * 1664525u + 1013904223u;
      yv[i] = (float)(seed >> 8) / (float)(1 << 24) - 0.5f;
    }
    for (int i = 0; i < NI; i++) iv[i] = (int32_t)(c->k * 1000 + r * 16 + i) - 500;
    struct results got, want;
    uint64_t local_ops = 0;
    /* Odd clients keep one handle a round and leave with them alive. */
    bool ok = program(c->dev, xv, yv, iv, &got, c->k % 2 ? &kept[nkept++] : NULL, &c->ops);
    if (!ok) {
      c->bad = true;
      snprintf(c->why, sizeof c->why, "round %d on %s: %s", r, c->spec, bext_last_error());
      break;
    }
    if (!program(flex, xv, yv, iv, &want, NULL, &local_ops)) {
      c->bad = true;
      snprintf(c->why, sizeof c->why, "round %d on local flex: %s", r, bext_last_error());
      break;
    }
    const float *gf[4] = {got.chain, got.rows, got.mm, &got.sum}, *wf[4] = {want.chain, want.rows, want.mm, &want.sum};
    const int nf[4] = {N, 8, N, 1};
    const char *what[4] = {"chain", "row sums", "matmul", "sum of exp"};
    for (int v = 0; v < 4 && !c->bad; v++)
      for (int i = 0; i < nf[v] && !c->bad; i++, c->values++)
        if (!close_to(gf[v][i], wf[v][i])) {
          c->bad = true;
          snprintf(c->why, sizeof c->why, "round %d, %s[%d]: remote %.9g, local %.9g", r, what[v], i, gf[v][i],
                   wf[v][i]);
        }
    for (int i = 0; i < NI && !c->bad; i++, c->values++)
      if (got.ints[i] != want.ints[i] || want.ints[i] != iv[i] * iv[i] - 3) {
        c->bad = true;
        snprintf(c->why, sizeof c->why, "round %d, ints[%d]: remote %d, local %d, want %d", r, i, got.ints[i],
                 want.ints[i], iv[i] * iv[i] - 3);
      }
    /* After the first round every client is connected: the main thread
     * counts the sessions, then all go on together. */
    if (r == 0 && !c->bad) {
      pthread_barrier_wait(c->all_in);
      pthread_barrier_wait(c->go_on);
      met = true;
    }
  }
  if (!met) {   /* failed in round 0: the others still wait for it */
    pthread_barrier_wait(c->all_in);
    pthread_barrier_wait(c->go_on);
  }
  if (!bext_device_close(c->dev) && !c->bad) {
    c->bad = true;
    snprintf(c->why, sizeof c->why, "closing %s: %s", c->spec, bext_last_error());
  }
  for (int i = 0; i < nkept; i++) bext_release(kept[i]);
  return NULL;
}

Test(remote_load, sixteen_sessions_many_ops_all_correct_and_the_server_back_at_baseline) {
  struct rh_server srv;
  cr_assert(rh_start_tcp(&srv, "flex", (const char *const[]){"--quiet", NULL}), "%s", srv.err);
  struct raw w;   /* a session of its own that only asks for the server's stats */
  raw_open(&w, srv.addr);
  struct raw_stats base = raw_stats(&w), got;
  cr_assert_eq(base.sessions, 1, "only the watcher's session before the clients: %llu", (unsigned long long)base.sessions);
  cr_assert_eq(base.tensors, 0);
  cr_assert_eq(base.bytes, 0);

  static struct client cl[CLIENTS];
  pthread_barrier_t all_in, go_on;
  pthread_barrier_init(&all_in, NULL, CLIENTS + 1);
  pthread_barrier_init(&go_on, NULL, CLIENTS + 1);
  pthread_t th[CLIENTS];
  for (int k = 0; k < CLIENTS; k++) {
    cl[k] = (struct client){.k = k, .all_in = &all_in, .go_on = &go_on};
    snprintf(cl[k].spec, sizeof cl[k].spec, "remote:tcp://127.0.0.%.*s1:%d", k, "0000000000000000", srv.port);
    cl[k].dev = bext_device_get(cl[k].spec);
    cr_assert(cl[k].dev, "%s: %s", cl[k].spec, bext_last_error());
    for (int j = 0; j < k; j++) cr_assert_neq(cl[k].dev, cl[j].dev, "one device per spelling");
  }
  for (int k = 0; k < CLIENTS; k++) cr_assert_eq(pthread_create(&th[k], NULL, client_run, &cl[k]), 0);
  pthread_barrier_wait(&all_in);
  struct raw_stats during = raw_stats(&w);
  pthread_barrier_wait(&go_on);
  for (int k = 0; k < CLIENTS; k++) pthread_join(th[k], NULL);
  pthread_barrier_destroy(&all_in);
  pthread_barrier_destroy(&go_on);

  uint64_t ops = 0, values = 0;
  for (int k = 0; k < CLIENTS; k++) {
    cr_expect(!cl[k].bad, "client %d: %s", k, cl[k].why);
    ops += cl[k].ops;
    values += cl[k].values;
  }
  cr_expect_eq(during.sessions, 1 + CLIENTS, "every client its own session: the server counted %llu sessions",
               (unsigned long long)during.sessions);
  cr_expect_gt(during.tensors, 0, "tensors were live on the server while the clients ran");
  cr_expect_eq(values, (uint64_t)CLIENTS * ROUNDS * (N + 8 + N + 1 + NI), "every value was compared");
  cr_expect_geq(ops, (uint64_t)CLIENTS * ROUNDS * 30, "%llu remote ops", (unsigned long long)ops);

  /* All clients gone (half with handles alive): back to the baseline. */
  cr_expect(raw_settles(&w, base, &got), "after the clients left: %llu sessions, %llu tensors, "
            "%llu bytes (baseline %llu, %llu, %llu)", (unsigned long long)got.sessions, (unsigned long long)got.tensors,
            (unsigned long long)got.bytes, (unsigned long long)base.sessions, (unsigned long long)base.tensors,
            (unsigned long long)base.bytes);
  bxrm_io_fini(&w.io);
  int st = rh_stop(&srv, SIGTERM);
  cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the server exits cleanly on SIGTERM (status %#x)", st);
}
