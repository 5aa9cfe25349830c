/* test_remote.c — the Remote backend against real servers: bext-server
 * in this process (inproc.h) where a test reads the server's counters,
 * and as a child process (remote_harness.h) where a test kills, stops or
 * configures it.  Values, deferred errors named by their op, releases and
 * session ends returning the server to its baseline, tokens, limits, and
 * a dead or silent server giving a clear error instead of a hang. */
#include <criterion/criterion.h>
#include <sys/time.h>

#include <bext/bext.h>

#include "inproc.h"
#include "remote_harness.h"

static double now_s(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

static const bext_device *dev_ok(const char *spec) {
  const bext_device *d = bext_device_get(spec);
  cr_assert(d, "%s: %s", spec, bext_last_error());
  return d;
}

static bext_tensor *vec_f32(const float *v, int64_t n, const bext_device *d) {
  bext_tensor *t = bext_from_data(v, BEXT_F32, &n, 1, d);
  cr_assert(t, "bext_from_data: %s", bext_last_error());
  return t;
}

Test(remote, a_chain_of_ops_reads_back_the_right_values) {
  struct ip_server s;
  cr_assert(ip_start(&s, "flex", NULL), "%s", bext_last_error());
  const bext_device *d = dev_ok(s.spec);
  float x[4] = {1, 2, 3, 4};
  bext_tensor *a = vec_f32(x, 4, d);
  bext_tensor *b = bext_retain(a);
  for (int i = 0; i < 100; i++) b = bext_add(b, bext_retain(a));
  cr_assert(b, "%s", bext_last_error());
  cr_expect_eq(bext_device_of(b), d);
  bext_tensor *m = bext_sum(bext_mul_scalar(bext_retain(b), 0.5));
  float out[4], sum = 0;
  cr_assert(bext_read(b, out, sizeof out), "%s", bext_last_error());
  cr_assert(bext_read(m, &sum, sizeof sum), "%s", bext_last_error());
  for (int i = 0; i < 4; i++) cr_expect_eq(out[i], 101.0f * x[i], "element %d: %g", i, out[i]);
  cr_expect_eq(sum, 0.5f * 101.0f * 10.0f);
  bext_release(a);
  bext_release(b);
  bext_release(m);
  bext_device_close(d);
  ip_stop(&s);
}

Test(remote, to_device_moves_between_remote_and_host) {
  struct ip_server s;
  cr_assert(ip_start(&s, "ndarray", NULL), "%s", bext_last_error());
  const bext_device *d = dev_ok(s.spec), *flex = dev_ok("flex");
  int32_t v[6] = {1, -2, 3, -4, 5, -6};
  bext_tensor *h = bext_from_data(v, BEXT_I32, (int64_t[]){2, 3}, 2, flex);
  bext_tensor *r = bext_to_device(bext_swap_dims(h, 0, 1), d);   /* a strided host view goes up row-major */
  cr_assert(r, "%s", bext_last_error());
  cr_expect_eq(bext_device_of(r), d);
  bext_tensor *back = bext_to_device(bext_abs(r), flex);
  cr_assert(back, "%s", bext_last_error());
  cr_expect_eq(bext_device_of(back), flex);
  const int32_t *p = bext_data(back);
  int32_t want[6] = {1, 4, 2, 5, 3, 6};
  for (int i = 0; i < 6; i++) cr_expect_eq(p[i], want[i], "element %d", i);
  bext_release(back);
  bext_device_close(d);
  ip_stop(&s);
}

Test(remote, a_failed_op_is_reported_at_the_read_and_the_sync_naming_it) {
  struct ip_server s;
  cr_assert(ip_start(&s, "flex", NULL), "%s", bext_last_error());
  const bext_device *d = dev_ok(s.spec);
  float x[3] = {1, 2, 3};
  int64_t idx = 7, one = 1;
  bext_tensor *a = vec_f32(x, 3, d);
  bext_tensor *i = bext_from_data(&idx, BEXT_I64, &one, 1, d);
  /* The handle exists at once: the index is only checked on the server. */
  bext_tensor *g = bext_gather(bext_retain(a), 0, i);
  cr_assert(g, "the op is queued, not run: %s", bext_last_error());
  bext_tensor *later = bext_exp(bext_retain(g));            /* depends on the failure */
  bext_tensor *fine = bext_neg(bext_retain(a));             /* does not */
  float out[3];
  cr_expect(!bext_read(later, out, sizeof out));
  cr_expect(strstr(bext_last_error(), "deferred op `bext_gather` failed") &&
                strstr(bext_last_error(), "index 7"),
            "%s", bext_last_error());
  cr_expect(bext_read(fine, out, sizeof out), "%s", bext_last_error());
  cr_expect_eq(out[2], -3.0f);
  cr_expect(!bext_sync(d), "the sync reports the first failure since the last one");
  cr_expect(strstr(bext_last_error(), "bext_gather"), "%s", bext_last_error());
  cr_expect(bext_sync(d), "once: %s", bext_last_error());
  bext_release(a);
  bext_release(g);
  bext_release(later);
  bext_release(fine);
  bext_device_close(d);
  ip_stop(&s);
}

Test(remote, released_handles_and_closed_sessions_return_the_server_to_its_baseline) {
  struct ip_server s;
  cr_assert(ip_start(&s, "flex", NULL), "%s", bext_last_error());
  const bext_device *d = dev_ok(s.spec);
  float x[256] = {0};
  bext_tensor *keep[4];
  for (int i = 0; i < 1000; i++) bext_release(bext_add_scalar(vec_f32(x, 256, d), 1.0));
  for (int i = 0; i < 4; i++) keep[i] = vec_f32(x, 256, d);
  cr_assert(bext_sync(d), "%s", bext_last_error());   /* carries the batched releases */
  struct bxsv_stats st;
  cr_expect(ip_settles(&s, 1, 4, &st), "after 2000 made and 1996 released: %llu tensors", (unsigned long long)st.tensors);
  cr_expect_eq(st.bytes, 4 * 256 * sizeof(float));
  /* The client goes away with handles alive: the session's tensors die. */
  cr_assert(bext_device_close(d), "%s", bext_last_error());
  cr_expect(ip_settles(&s, 0, 0, &st), "%llu sessions, %llu tensors left", (unsigned long long)st.sessions,
            (unsigned long long)st.tensors);
  cr_expect_eq(st.bytes, 0);
  /* ... and its handles say so, without reconnecting to an empty session. */
  float out[256];
  cr_expect(!bext_read(keep[0], out, sizeof out));
  cr_expect(strstr(bext_last_error(), "remote session lost"), "%s", bext_last_error());
  for (int i = 0; i < 4; i++) bext_release(keep[i]);
  ip_stop(&s);
}

Test(remote, a_killed_server_is_a_clear_error_not_a_hang) {
  struct rh_server s;
  cr_assert(rh_start(&s, "flex", (const char *const[]){"--quiet", NULL}), "%s", s.err);
  const bext_device *d = dev_ok(s.spec);
  float x[4] = {1, 2, 3, 4}, out[4];
  bext_tensor *a = vec_f32(x, 4, d);
  cr_assert(bext_read(a, out, sizeof out), "%s", bext_last_error());
  rh_stop(&s, SIGKILL);
  double t0 = now_s();
  bext_tensor *b = bext_exp(bext_retain(a));   /* queued: may not notice yet */
  cr_expect(!bext_read(b ? b : a, out, sizeof out), "a read after the kill fails");
  cr_expect(strstr(bext_last_error(), "remote session lost") && strstr(bext_last_error(), "closed the connection"),
            "%s", bext_last_error());
  cr_expect_lt(now_s() - t0, 2.0, "at once, not after a timeout");
  cr_expect(!bext_sync(d));
  cr_expect(strstr(bext_last_error(), "remote session lost"), "%s", bext_last_error());
  cr_expect_null(bext_neg(bext_retain(a)), "new ops fail too");
  bext_release(a);
  bext_release(b);
}

Test(remote, a_silent_server_times_out) {
  setenv("BEXT_REMOTE_TIMEOUT_MS", "300", 1);
  struct rh_server s;
  cr_assert(rh_start(&s, "flex", (const char *const[]){"--quiet", NULL}), "%s", s.err);
  const bext_device *d = dev_ok(s.spec);
  float x[4] = {1, 2, 3, 4}, out[4];
  bext_tensor *a = vec_f32(x, 4, d);
  cr_assert(bext_read(a, out, sizeof out), "%s", bext_last_error());
  cr_assert(rh_pause(&s), "the server stopped");   /* alive, connected, silent */
  double t0 = now_s();
  cr_expect(!bext_read(a, out, sizeof out));
  double waited = now_s() - t0;
  cr_expect(strstr(bext_last_error(), "no answer from the server within 300 ms"), "%s", bext_last_error());
  cr_expect(waited >= 0.25 && waited < 3.0, "waited %.2f s", waited);
  kill(s.pid, SIGCONT);
  rh_stop(&s, SIGKILL);
  bext_release(a);
}

Test(remote, an_unreachable_server_fails_the_first_use_naming_the_address) {
  const bext_device *d = dev_ok("remote:ipc:///nonexistent-bext-dir/s");
  float x = 1;
  int64_t one = 1;
  cr_expect_null(bext_from_data(&x, BEXT_F32, &one, 1, d));
  cr_expect(strstr(bext_last_error(), "ipc:///nonexistent-bext-dir/s: cannot connect"), "%s", bext_last_error());
}

static bool write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return false;
  fputs(text, f);
  return fclose(f) == 0;
}

Test(remote, the_token_is_checked_before_any_work) {
  char tok[] = "/tmp/bext-token-XXXXXX";
  int fd = mkstemp(tok);
  cr_assert(fd >= 0);
  close(fd);
  cr_assert(write_file(tok, "s3cret\n"));
  struct rh_server s;
  cr_assert(rh_start(&s, "flex", (const char *const[]){"--quiet", "--token-file", tok, NULL}), "%s", s.err);
  float x = 2;
  int64_t one = 1;
  setenv("BEXT_REMOTE_TOKEN", "wrong", 1);
  const bext_device *d = dev_ok(s.spec);
  cr_expect_null(bext_from_data(&x, BEXT_F32, &one, 1, d));
  cr_expect(strstr(bext_last_error(), "wrong token"), "%s", bext_last_error());
  /* Another spelling of the same server is another device, so another session. */
  char spec2[200];
  snprintf(spec2, sizeof spec2, "remote:ipc://%s//s", s.dir);
  setenv("BEXT_REMOTE_TOKEN", "s3cret", 1);
  const bext_device *d2 = dev_ok(spec2);
  bext_tensor *t = bext_from_data(&x, BEXT_F32, &one, 1, d2);
  cr_assert(t, "%s", bext_last_error());
  float y = 0;
  cr_expect(bext_read(t, &y, sizeof y) && y == 2, "%s", bext_last_error());
  bext_release(t);
  bext_device_close(d2);
  rh_stop(&s, SIGTERM);
  unlink(tok);
}

static void small_limits(struct bxsv_config *c) {
  c->max_bytes = 1 << 16;
  c->max_sessions = 1;
}

Test(remote, limits_fail_the_op_or_refuse_the_session_saying_which) {
  struct ip_server s;
  cr_assert(ip_start(&s, "flex", small_limits), "%s", bext_last_error());
  const bext_device *d = dev_ok(s.spec);
  /* Over the byte limit: that op's value fails; the session goes on. */
  bext_tensor *big = bext_zeros((int64_t[]){1 << 20}, 1, BEXT_F32, d);
  cr_assert(big, "%s", bext_last_error());
  float v = 0;
  cr_expect(!bext_read(big, &v, 0) || true);
  float *buf = malloc((size_t)4 << 20);
  cr_expect(!bext_read(big, buf, (size_t)4 << 20));
  cr_expect(strstr(bext_last_error(), "deferred op `bext_zeros`") && strstr(bext_last_error(), "--max-bytes"), "%s",
            bext_last_error());
  free(buf);
  bext_tensor *small = bext_ones((int64_t[]){4}, 1, BEXT_F32, d);
  float out[4];
  cr_expect(bext_read(small, out, sizeof out) && out[3] == 1, "the session goes on: %s", bext_last_error());
  /* A second session past --max-sessions 1 is refused with the reason. */
  char spec2[200];
  snprintf(spec2, sizeof spec2, "remote:ipc://%s//s", s.dir);
  cr_expect_null(bext_ones((int64_t[]){4}, 1, BEXT_F32, dev_ok(spec2)));
  cr_expect(strstr(bext_last_error(), "--max-sessions"), "%s", bext_last_error());
  bext_release(big);
  bext_release(small);
  bext_device_close(d);
  ip_stop(&s);
}

static void few_handles(struct bxsv_config *c) { c->max_tensors = 8; }

/* The handle limit (--max-tensors 8): a result that would be the
 * session's ninth live tensor ends the session (docs/remote.md, "What the
 * server refuses"), naming the flag at the client and in the log; its
 * tensors are freed and the server serves other sessions. */
Test(remote, a_session_past_the_handle_limit_ends_naming_it) {
  struct ip_server s;
  cr_assert(ip_start(&s, "flex", few_handles), "%s", bext_last_error());
  const bext_device *d = dev_ok(s.spec);
  float x[4] = {1, 2, 3, 4}, out[4];
  bext_tensor *held[9] = {0};
  for (int i = 0; i < 8; i++) held[i] = vec_f32(x, 4, d);
  cr_assert(bext_read(held[7], out, sizeof out) && out[3] == 4, "8 handles are within the limit: %s",
            bext_last_error());
  held[8] = bext_neg(bext_retain(held[0]));   /* streamed: the server refuses it */
  cr_expect(!held[8] || !bext_read(held[8], out, sizeof out), "the ninth tensor is refused");
  const char *e = bext_last_error();
  cr_expect(strstr(e, "remote session lost") && strstr(e, "the server's limit (--max-tensors)"), "%s", e);
  cr_expect(ip_logged(&s, "--max-tensors"), "the log says why: %s", s.log);
  struct bxsv_stats st;
  cr_expect(ip_settles(&s, 0, 0, &st), "%llu sessions, %llu tensors left", (unsigned long long)st.sessions,
            (unsigned long long)st.tensors);
  for (int i = 0; i < 9; i++) bext_release(held[i]);
  bext_device_close(d);
  /* another session is served */
  char spec2[200];
  snprintf(spec2, sizeof spec2, "remote:ipc://%s//s", s.dir);
  bext_tensor *t = bext_full((int64_t[]){2}, 1, 1.5, BEXT_F32, dev_ok(spec2));
  cr_expect(t && bext_read(t, out, 2 * sizeof(float)) && out[1] == 1.5f, "%s", bext_last_error());
  bext_release(t);
  bext_device_close(dev_ok(spec2));
  ip_stop(&s);
}

Test(remote, sigint_stops_the_server_cleanly) {
  struct rh_server s;
  cr_assert(rh_start(&s, "flex+fusion", NULL), "%s", s.err);
  const bext_device *d = dev_ok(s.spec);
  bext_tensor *t = bext_ones((int64_t[]){8}, 1, BEXT_F64, d);
  double out[8];
  cr_assert(bext_read(t, out, sizeof out), "%s", bext_last_error());
  int st = rh_stop(&s, SIGINT);   /* a session still open, with a tensor */
  cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exit status %d", st);
  cr_expect(!bext_read(t, out, sizeof out));
  cr_expect(strstr(bext_last_error(), "remote session lost"), "%s", bext_last_error());
  bext_release(t);
}

static void two_per_client(struct bxsv_config *c) {
  c->listen = "tcp://127.0.0.1:0";
  c->max_conns_per_client = 2;
}

/* A ones tensor read back on d: whether the session was admitted. */
static bool admitted(const bext_device *d) {
  bext_tensor *t = bext_ones((int64_t[]){4}, 1, BEXT_F32, d);
  float out[4] = {0};
  bool ok = t && bext_read(t, out, sizeof out) && out[3] == 1;
  bext_release(t);
  return ok;
}

Test(remote, connections_past_the_per_client_limit_are_refused_naming_it) {
  struct ip_server s;
  cr_assert(ip_start(&s, "flex", two_per_client), "%s", bext_last_error());
  int port = bxsv_port(s.srv);
  /* one device per spelling of 127.0.0.1 (leading zeros: octal), each its own session */
  char spec[4][80];
  for (int k = 0; k < 4; k++) snprintf(spec[k], sizeof spec[k], "remote:tcp://127.0.0.%.*s1:%d", k, "000", port);
  const bext_device *d0 = dev_ok(spec[0]), *d1 = dev_ok(spec[1]), *d2 = dev_ok(spec[2]);
  cr_expect(admitted(d0) && admitted(d1), "two sessions from 127.0.0.1: %s", bext_last_error());
  cr_expect_not(admitted(d2), "a third is refused");
  const char *e = bext_last_error();
  cr_expect(strstr(e, "remote session lost") &&
                strstr(e, "127.0.0.1 has 2 sessions open, the limit per client (--max-conns-per-client 2)"),
            "%s", e);
  cr_expect(ip_logged(&s, "connection refused: 127.0.0.1 has 2 sessions open, the limit per client"), "%s", s.log);
  struct bxsv_stats st;
  bxsv_stats(s.srv, &st);
  cr_expect_eq(st.sessions_refused, 1);
  /* a session that ends makes room for the next */
  bext_device_close(d0);
  cr_expect(bext_sync(d1), "%s", bext_last_error());   /* announces d1's released tensor */
  cr_expect(ip_settles(&s, 1, 0, &st), "%llu sessions, %llu tensors", (unsigned long long)st.sessions,
            (unsigned long long)st.tensors);
  cr_expect(admitted(dev_ok(spec[3])), "%s", bext_last_error());
  bext_device_close(dev_ok(spec[3]));
  bext_device_close(d1);
  bext_device_close(d2);
  ip_stop(&s);
}

Test(remote, the_per_client_flag_counts_ipc_peers_by_user) {
  struct rh_server s;
  cr_assert(rh_start(&s, "flex", (const char *const[]){"--max-conns-per-client", "1", NULL}), "%s", s.err);
  char spec2[200];
  snprintf(spec2, sizeof spec2, "remote:ipc://%s//s", s.dir);   /* another spelling: another session */
  const bext_device *d = dev_ok(s.spec), *d2 = dev_ok(spec2);
  cr_expect(admitted(d), "%s", bext_last_error());
  cr_expect_not(admitted(d2));
  char want[120];
  snprintf(want, sizeof want, "ipc user %u has 1 sessions open, the limit per client (--max-conns-per-client 1)",
           (unsigned)getuid());
  cr_expect(strstr(bext_last_error(), want), "%s", bext_last_error());
  bext_device_close(d);
  bext_device_close(d2);
  cr_expect_eq(rh_stop(&s, SIGTERM), 0);
}
