/* test_remote_faults.c — either end of a session dying at the worst
 * moment.  A server killed while a client waits in a read, or dying
 * halfway through a reply's tensor bytes, fails that read at once with
 * "remote session lost" (never a hang until the timeout, never a partial
 * result taken for a whole one).  A client process killed with handles
 * alive and frames in flight leaves the server, as its Stats requests
 * say, with its sessions, live tensors and bytes back at their baseline,
 * serving the next client. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/time.h>

#include <bext/bext.h>

#include "raw_session.h"
#include "remote_harness.h"

/* Far longer than any check here waits: an error that comes from the
 * timeout instead of the closed connection fails the elapsed-time checks. */
#define LONG_TIMEOUT "30000"

static double now_s(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static bext_tensor *vec_f32(const float *v, int64_t n, const bext_device *d) {
  bext_tensor *t = bext_from_data(v, BEXT_F32, &n, 1, d);
  cr_assert(t, "bext_from_data: %s", bext_last_error());
  return t;
}

/* Stopped whatever way the test ends (a failed assertion included), so no
 * process outlives it holding ctest's output open. */
static struct rh_server child_srv;
static pid_t client_pid;

static void stop_children(void) {
  if (client_pid > 0) {
    kill(client_pid, SIGKILL);
    waitpid(client_pid, NULL, 0);
  }
  if (child_srv.pid > 0) rh_stop(&child_srv, SIGKILL);
}

/* A read on a thread of its own, so the test can kill the server while
 * the read waits. */
struct reader {
  bext_tensor *t;
  void *out;
  size_t bytes;
  bool ok;
  char err[512];
  double done_at;
  atomic_bool done;
};

static void *reader_main(void *arg) {
  struct reader *r = arg;
  r->ok = bext_read(r->t, r->out, r->bytes);
  snprintf(r->err, sizeof r->err, "%s", r->ok ? "" : bext_last_error());
  r->done_at = now_s();
  atomic_store(&r->done, true);
  return NULL;
}

Test(remote_faults, a_server_killed_while_a_read_waits_fails_that_read_at_once, .timeout = 60,
     .fini = stop_children) {
  setenv("BEXT_REMOTE_TIMEOUT_MS", LONG_TIMEOUT, 1);
  struct rh_server *s = &child_srv;
  cr_assert(rh_start_tcp(s, "flex", (const char *const[]){"--quiet", NULL}), "%s", s->err);
  const bext_device *d = bext_device_get(s->spec);
  cr_assert(d, "%s", bext_last_error());
  float x[4] = {1, 2, 3, 4}, out[4] = {0};
  bext_tensor *a = vec_f32(x, 4, d);
  cr_assert(bext_read(a, out, sizeof out) && out[3] == 4, "the session works: %s", bext_last_error());
  bext_tensor *b = bext_mul_scalar(bext_retain(a), 2.0);   /* queued: sent with the read */
  cr_assert(b, "%s", bext_last_error());
  /* Stopped, the server holds the connection open and answers nothing:
   * the read sends its frames and waits for the reply. */
  cr_assert(rh_pause(s), "the server stopped");
  struct reader r = {.t = b, .out = out, .bytes = sizeof out};
  pthread_t th;
  cr_assert_eq(pthread_create(&th, NULL, reader_main, &r), 0);
  sleep_ms(300);
  cr_expect(!atomic_load(&r.done), "the read waits for the stopped server (it returned: %s)", r.err);
  double killed = now_s();
  rh_stop(s, SIGKILL);   /* a stopped process dies of SIGKILL; the kernel closes its socket */
  pthread_join(th, NULL);
  cr_expect_not(r.ok, "the read whose server died fails");
  cr_expect(strstr(r.err, "remote session lost") && strstr(r.err, "the server closed the connection"), "%s", r.err);
  cr_expect_lt(r.done_at - killed, 2.0, "at once (%.2f s after the kill), not after the %s ms timeout",
               r.done_at - killed, LONG_TIMEOUT);
  /* Everything after says so; nothing reconnects to an empty session. */
  cr_expect_not(bext_read(a, out, sizeof out));
  cr_expect(strstr(bext_last_error(), "remote session lost"), "%s", bext_last_error());
  cr_expect_null(bext_neg(bext_retain(a)), "new ops fail too");
  bext_release(a);
  bext_release(b);
  bext_device_close(d);
}

/* ------------------------------------- a server dying in mid-reply */

/* A fake server: answers the handshake, takes uploads, and answers the
 * first Read with a Data header announcing the tensor's bytes, sends
 * only the first half of them, and closes the connection. */
#define HALF_N ((int64_t)1 << 16)   /* elements of the tensor: 256 KiB of f32 */

struct dying {
  struct raw_fake f;
  float *bytes;                  /* what the half-reply sends */
  atomic_bool answered_half;
};

static void *dying_main(void *arg) {
  struct dying *D = arg;
  struct bxrm_io io;
  if (!raw_accept(D->f.l, &io)) return NULL;
  Bxrm__Request *q;
  while ((q = raw_request(&io))) {
    bool last = false;
    Bxrm__Reply r = BXRM__REPLY__INIT;
    Bxrm__Data data = BXRM__DATA__INIT;
    int64_t n = 2 * HALF_N;
    if (q->body_case == BXRM__REQUEST__BODY_HELLO) {
      raw_welcome(&io, "flex", false);
    } else if (q->body_case == BXRM__REQUEST__BODY_READ) {
      data.dtype = BEXT_F32, data.n_shape = 1, data.shape = &n;
      r.body_case = BXRM__REPLY__BODY_DATA, r.data = &data;
      raw_answer(&io, &r, D->bytes, (uint64_t)HALF_N * sizeof(float), (uint64_t)n * sizeof(float));
      atomic_store(&D->answered_half, true);
      last = true;
    }
    bxrm__request__free_unpacked(q, NULL);
    if (last) break;
  }
  bxrm_io_fini(&io);   /* the connection closes halfway through the tensor's bytes */
  return NULL;
}

Test(remote_faults, a_server_dying_halfway_through_a_download_fails_the_read_at_once, .timeout = 60) {
  setenv("BEXT_REMOTE_TIMEOUT_MS", LONG_TIMEOUT, 1);
  static struct dying D;
  memset(&D, 0, sizeof D);
  D.bytes = calloc((size_t)HALF_N, sizeof(float));
  cr_assert(D.bytes);
  for (int64_t i = 0; i < HALF_N; i++) D.bytes[i] = 7.0f;
  raw_fake_start(&D.f, dying_main, &D);
  const bext_device *d = bext_device_get(D.f.spec);
  cr_assert(d, "%s", bext_last_error());
  float *x = calloc((size_t)(2 * HALF_N), sizeof(float)), *out = malloc((size_t)(2 * HALF_N) * sizeof(float));
  cr_assert(x && out);
  bext_tensor *a = vec_f32(x, 2 * HALF_N, d);
  double t0 = now_s();
  cr_expect_not(bext_read(a, out, (size_t)(2 * HALF_N) * sizeof(float)), "a read cut off halfway fails");
  double waited = now_s() - t0;
  const char *e = bext_last_error();
  cr_expect(atomic_load(&D.answered_half), "the fake server sent half a reply");
  cr_expect(strstr(e, "remote session lost") && strstr(e, "the server closed the connection while downloading"),
            "%s", e);
  cr_expect_lt(waited, 5.0, "at once (%.2f s), not after the %s ms timeout", waited, LONG_TIMEOUT);
  cr_expect_not(bext_sync(d), "the session stays lost");
  cr_expect(strstr(bext_last_error(), "remote session lost"), "%s", bext_last_error());
  bext_release(a);
  bext_device_close(d);
  raw_fake_stop(&D.f);
  free(x), free(out), free(D.bytes);
}

/* ------------------------------------- a client killed with handles alive */

/* The client: a process of its own, which makes tensors and results on
 * the server, tells the test through the `ready` pipe, then keeps issuing
 * ops and uploads (frames in flight, some cut off) until it is killed.
 * It is this test binary run again with BEXT_FAULTS_CLIENT set, taking
 * over before Criterion's main: a fresh exec, since nng refuses to run in
 * a forked child ("nng is not fork-reentrant safe"). */
static void client_main(const char *spec, int ready) {
  const bext_device *d = bext_device_get(spec);
  float v[1024];
  for (int i = 0; i < 1024; i++) v[i] = (float)i;
  int64_t n = 1024;
  bext_tensor *kept[8];
  for (int i = 0; i < 8; i++) {
    kept[i] = d ? bext_add_scalar(bext_from_data(v, BEXT_F32, &n, 1, d), (double)i) : NULL;
    if (!kept[i]) _exit(2);
  }
  if (!bext_sync(d)) _exit(3);
  if (write(ready, "r", 1) != 1) _exit(4);
  static float big[1 << 20];   /* 4 MiB uploads: a kill lands inside one */
  int64_t nb = 1 << 20;
  for (;;) {
    bext_tensor *t = bext_exp(bext_retain(kept[0]));
    bext_tensor *u = bext_from_data(big, BEXT_F32, &nb, 1, d);
    if (!t || !u || !bext_sync(d)) _exit(5);
    bext_release(t);
    bext_release(u);
  }
}

__attribute__((constructor)) static void client_entry(void) {
  const char *spec = getenv("BEXT_FAULTS_CLIENT"), *fd = getenv("BEXT_FAULTS_READY_FD");
  if (spec && fd) client_main(spec, atoi(fd));   /* never returns */
}

Test(remote_faults, a_client_killed_with_handles_alive_leaves_the_server_at_its_baseline, .timeout = 60,
     .fini = stop_children) {
  struct rh_server *srv = &child_srv;
  cr_assert(rh_start_tcp(srv, "flex", (const char *const[]){"--quiet", NULL}), "%s", srv->err);
  int ready[2];
  cr_assert_eq(pipe(ready), 0);
  char fd[16];
  snprintf(fd, sizeof fd, "%d", ready[1]);
  setenv("BEXT_FAULTS_CLIENT", srv->spec, 1);
  setenv("BEXT_FAULTS_READY_FD", fd, 1);
  char *argv[] = {"remote-faults-client", NULL};
  int rv = posix_spawn(&client_pid, "/proc/self/exe", NULL, NULL, argv, environ);
  unsetenv("BEXT_FAULTS_CLIENT");
  unsetenv("BEXT_FAULTS_READY_FD");
  close(ready[1]);
  cr_assert_eq(rv, 0, "starting the client: %s", strerror(rv));
  struct raw w;   /* the watcher: a session of its own asking for Stats */
  raw_open(&w, srv->addr);
  char c = 0;
  cr_assert_eq(read(ready[0], &c, 1), 1, "the client made its tensors");
  close(ready[0]);
  sleep_ms(150);   /* the client is now in its loop of ops and uploads */
  struct raw_stats during = raw_stats(&w);
  cr_expect_eq(during.sessions, 2, "the client's session and the watcher's");
  cr_expect_geq(during.tensors, 8, "the client's 8 kept results are alive: %llu", (unsigned long long)during.tensors);
  cr_expect_geq(during.bytes, 8 * 1024 * sizeof(float));
  kill(client_pid, SIGKILL);
  int st;
  cr_assert_eq(waitpid(client_pid, &st, 0), client_pid);
  client_pid = 0;
  cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "the client was still running when killed (status %#x)", st);
  /* No Release ever came: the dropped connection alone frees them. */
  struct raw_stats got, base = {.sessions = 1};
  cr_expect(raw_settles(&w, base, &got), "after the kill: %llu sessions, %llu tensors, %llu bytes (want 1, 0, 0)",
            (unsigned long long)got.sessions, (unsigned long long)got.tensors, (unsigned long long)got.bytes);
  /* ... and the server serves the next client. */
  const bext_device *d = bext_device_get(srv->spec);
  bext_tensor *t = d ? bext_full((int64_t[]){3}, 1, 2.5, BEXT_F32, d) : NULL;
  float out[3] = {0};
  cr_expect(t && bext_read(t, out, sizeof out) && out[2] == 2.5f, "the next client is served: %s", bext_last_error());
  bext_release(t);
  if (d) bext_device_close(d);
  bxrm_io_fini(&w.io);
  st = rh_stop(srv, SIGTERM);
  cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the server exits cleanly on SIGTERM (status %#x)", st);
}
