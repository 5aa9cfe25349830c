/* test_remote_ext.c — extension ops on `remote:` devices (remote_ops.bext):
 * run on the server by (trait, id), through servers hosting flex and
 * flex+fusion, values equal to the same calls run locally; a method with
 * metadata streams (its handle exists while the server is stopped), one
 * without waits for the server's answer; an op the server was not built
 * with, or that its device has no arm for, is an error at the call naming
 * the op; a failure on the server is a deferred error at the read; a
 * malformed ExtCall fails its value or ends the session, and the server
 * keeps serving.  Servers: in this process (inproc.h; this binary links
 * the extension, so their registry has its ops), bext-server (no ops) and
 * remote_ext_server (bext_server_main linked with the extension) as children. */
#include <criterion/criterion.h>
#include <sys/time.h>

#include <bext/bext.h>

#include "inproc.h"
#include "raw_session.h"
#include "remote_harness.h"
#include "remote_ops.h"

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

static bext_tensor *mat_f32(const float *v, int64_t r, int64_t c, const bext_device *d) {
  bext_tensor *t = bext_from_data(v, BEXT_F32, (int64_t[]){r, c}, 2, d);
  cr_assert(t, "bext_from_data: %s", bext_last_error());
  return t;
}

static const float X[6] = {1.5f, -2, 0.25f, 4, -0.5f, 3};

/* The calls of the tests, on device d: affine twice around a core op, and
 * row_sums of the result; read into aff[6] and rows[2]. */
static void compute(const bext_device *d, float *aff, float *rows) {
  bext_tensor *x = mat_f32(X, 2, 3, d);
  bext_tensor *y = remote_ops_affine(bext_exp(remote_ops_affine(x, 0.5f, -1.0f)), -2.0f, 0.75f);
  cr_assert(y, "affine on %s: %s", bext_device_name(d), bext_last_error());
  cr_expect_eq(bext_device_of(y), d);
  cr_expect(bext_rank(y) == 2 && bext_shape(y)[0] == 2 && bext_shape(y)[1] == 3);
  bext_tensor *r = remote_shapes_row_sums(bext_retain(y), 0.5);
  cr_assert(r, "row_sums on %s: %s", bext_device_name(d), bext_last_error());
  cr_expect(bext_rank(r) == 1 && bext_shape(r)[0] == 2, "row_sums' shape from the server's answer");
  cr_assert(bext_read(y, aff, 6 * sizeof(float)), "%s", bext_last_error());
  cr_assert(bext_read(r, rows, 2 * sizeof(float)), "%s", bext_last_error());
  bext_release(y);
  bext_release(r);
}

static void same_as_local(const char *hosted) {
  float want_a[6], want_r[2], got_a[6], got_r[2];
  compute(dev_ok("flex"), want_a, want_r);
  for (int i = 0; i < 6; i++)   /* the formula, so "equal to local" cannot be equal and wrong */
    cr_expect_float_eq(want_a[i], -2.0f * expf(0.5f * X[i] - 1.0f) + 0.75f, 1e-5f, "local affine[%d]", i);
  struct ip_server s;
  cr_assert(ip_start(&s, hosted, NULL), "%s", bext_last_error());
  const bext_device *d = dev_ok(s.spec);
  compute(d, got_a, got_r);
  for (int i = 0; i < 6; i++) cr_expect_eq(got_a[i], want_a[i], "%s affine[%d]: %g, local %g", hosted, i, got_a[i], want_a[i]);
  for (int i = 0; i < 2; i++) cr_expect_eq(got_r[i], want_r[i], "%s row_sums[%d]: %g, local %g", hosted, i, got_r[i], want_r[i]);
  cr_expect(bext_sync(d), "%s", bext_last_error());
  bext_device_close(d);
  struct bxsv_stats st;
  cr_expect(ip_settles(&s, 0, 0, &st), "the session's tensors are freed: %llu left", (unsigned long long)st.tensors);
  ip_stop(&s);
}

Test(remote_ext, values_equal_local_on_a_server_hosting_flex) { same_as_local("flex"); }

Test(remote_ext, affine_equals_local_on_a_server_hosting_flex_fusion) {
  /* RemoteShapes does not list Fusion: only RemoteOps runs there */
  float want[6], got[6];
  const bext_device *f = dev_ok("flex");
  bext_tensor *y = remote_ops_affine(bext_sqrt(bext_abs(mat_f32(X, 2, 3, f))), 3.0f, -1.0f);
  cr_assert(y && bext_read(y, want, sizeof want), "%s", bext_last_error());
  bext_release(y);
  struct ip_server s;
  cr_assert(ip_start(&s, "flex+fusion", NULL), "%s", bext_last_error());
  const bext_device *d = dev_ok(s.spec);
  y = remote_ops_affine(bext_sqrt(bext_abs(mat_f32(X, 2, 3, d))), 3.0f, -1.0f);
  cr_assert(y && bext_read(y, got, sizeof got), "%s", bext_last_error());
  for (int i = 0; i < 6; i++) {
    cr_expect_float_eq(want[i], 3.0f * sqrtf(fabsf(X[i])) - 1.0f, 1e-5f);
    cr_expect_eq(got[i], want[i], "affine[%d] on flex+fusion: %g, local %g", i, got[i], want[i]);
  }
  bext_release(y);
  /* a streamed value result: flex+fusion runs it eagerly on the server */
  Scaled sc;
  cr_assert(remote_ops_scaled(mat_f32(X, 2, 3, d), 4.0f, &sc), "%s", bext_last_error());
  cr_expect(bext_read(sc.y, got, sizeof got) && got[1] == -8.0f && sc.factor == 4.0f && sc.rank == 2, "%s",
            bext_last_error());
  scaled_release(&sc);
  /* a method whose arm the hosted device lacks: an error at the call */
  bext_tensor *r = remote_shapes_row_sums(mat_f32(X, 2, 3, d), 1.0);
  cr_expect_null(r);
  const char *e = bext_last_error();
  cr_expect(strstr(e, "RemoteShapes::row_sums") && strstr(e, "flex+fusion") && strstr(e, "+fusion is not listed"),
            "%s", e);
  bext_device_close(d);
  ip_stop(&s);
}

Test(remote_ext, a_server_program_linked_with_the_extension_runs_it) {
  struct rh_server s;
  cr_assert(rh_start_program(&s, "remote_ext_server", "flex", NULL), "%s", s.err);
  float want_a[6], want_r[2], got_a[6], got_r[2];
  compute(dev_ok("flex"), want_a, want_r);
  const bext_device *d = dev_ok(s.spec);
  compute(d, got_a, got_r);
  for (int i = 0; i < 6; i++) cr_expect_eq(got_a[i], want_a[i], "affine[%d]", i);
  for (int i = 0; i < 2; i++) cr_expect_eq(got_r[i], want_r[i], "row_sums[%d]", i);
  bext_device_close(d);
  cr_expect_eq(rh_stop(&s, SIGTERM), 0, "a clean exit");
}

Test(remote_ext, an_op_the_server_was_not_built_with_is_an_error_at_the_call) {
  struct rh_server s;
  cr_assert(rh_start(&s, "flex", NULL), "%s", s.err);   /* plain bext-server: no extension ops */
  const bext_device *d = dev_ok(s.spec);
  bext_tensor *x = mat_f32(X, 2, 3, d);
  bext_tensor *y = remote_ops_affine(bext_retain(x), 2.0f, 1.0f);
  cr_expect_null(y);
  const char *e = bext_last_error();
  cr_expect(strstr(e, "RemoteOps::affine") && strstr(e, s.addr) &&
                strstr(e, "no extension op `affine` of trait RemoteOps in this server's build"),
            "%s", e);
  /* the session goes on: core ops, and the next call is refused the same way */
  bext_tensor *z = bext_mul_scalar(bext_retain(x), 2.0);
  float out[6];
  cr_expect(z && bext_read(z, out, sizeof out) && out[3] == 8.0f, "%s", bext_last_error());
  cr_expect_null(remote_shapes_row_sums(bext_retain(x), 1.0));
  cr_expect(strstr(bext_last_error(), "no extension op `row_sums` of trait RemoteShapes"), "%s", bext_last_error());
  bext_release(x);
  bext_release(z);
  bext_device_close(d);
  rh_stop(&s, SIGTERM);
}

Test(remote_ext, a_call_with_metadata_streams_while_one_without_waits) {
  setenv("BEXT_REMOTE_TIMEOUT_MS", "600", 1);
  struct rh_server s;
  cr_assert(rh_start_program(&s, "remote_ext_server", "flex", NULL), "%s", s.err);
  const bext_device *d = dev_ok(s.spec);
  bext_tensor *x = mat_f32(X, 2, 3, d);
  bext_tensor *y = remote_ops_affine(bext_retain(x), 1.0f, 1.0f);   /* asks once whether the server runs it */
  cr_assert(y, "%s", bext_last_error());
  bext_release(y);
  Scaled sc;
  cr_assert(remote_ops_scaled(bext_retain(x), 1.0f, &sc), "%s", bext_last_error());   /* asks once too */
  scaled_release(&sc);
  cr_assert(rh_pause(&s), "the server stopped");   /* nothing answers now */
  double t0 = now_s();
  y = remote_ops_affine(bext_retain(x), 2.0f, 0.0f);
  double streamed = now_s() - t0;
  cr_expect(y, "a call with metadata needs no answer: %s", bext_last_error());
  cr_expect(y && bext_shape(y)[1] == 3, "its handle has the metadata's shape at once");
  cr_expect_lt(streamed, 0.3, "it did not wait (%.3f s)", streamed);
  /* a value result its metadata gives streams too: fields and handles at once */
  t0 = now_s();
  bool sc_ok = remote_ops_scaled(bext_retain(x), 3.0f, &sc);
  double value_streamed = now_s() - t0;
  cr_expect(sc_ok, "a value with metadata needs no answer: %s", bext_last_error());
  cr_expect(sc_ok && sc.factor == 3.0f && sc.rank == 2 && sc.y && bext_shape(sc.y)[1] == 3,
            "its fields and its tensor's shape from the metadata");
  cr_expect_lt(value_streamed, 0.3, "it did not wait (%.3f s)", value_streamed);
  t0 = now_s();
  bext_tensor *r = remote_shapes_row_sums(bext_retain(x), 1.0);
  double waited = now_s() - t0;
  cr_expect_null(r, "a call without metadata waits for the server, which is stopped (%s)", r ? "returned" : bext_last_error());
  cr_expect(strstr(bext_last_error(), "RemoteShapes::row_sums") && strstr(bext_last_error(), "no answer from the server"),
            "%s", bext_last_error());
  cr_expect_geq(waited, 0.5, "it waited for the timeout (%.3f s)", waited);
  kill(s.pid, SIGCONT);
  if (sc_ok) scaled_release(&sc);   /* the timeout ended the session: its values are read elsewhere */
  bext_release(y);
  bext_release(x);
  bext_device_close(d);
  rh_stop(&s, SIGTERM);
  unsetenv("BEXT_REMOTE_TIMEOUT_MS");
}

Test(remote_ext, a_failure_on_the_server_is_a_deferred_error_at_the_read) {
  struct ip_server s;
  cr_assert(ip_start(&s, "flex", NULL), "%s", bext_last_error());
  const bext_device *d = dev_ok(s.spec);
  bext_tensor *x = mat_f32(X, 2, 3, d);
  bext_tensor *bad = remote_ops_affine(bext_retain(x), 0.0f, 1.0f);   /* its Flex implementation refuses a == 0 */
  cr_assert(bad, "the call streams, so it returns a handle: %s", bext_last_error());
  bext_tensor *after = bext_add_scalar(bext_retain(bad), 1.0);         /* built on the failed value */
  bext_tensor *good = remote_ops_affine(bext_retain(x), 1.0f, 1.0f);   /* independent of it */
  float out[6];
  cr_expect_not(bext_read(bad, out, sizeof out));
  const char *e = bext_last_error();
  cr_expect(strstr(e, "deferred op `RemoteOps::affine` failed on the server") &&
                strstr(e, "RemoteOps::affine (flex implementation) failed"),
            "%s", e);
  cr_expect_not(bext_read(after, out, sizeof out));
  cr_expect(strstr(bext_last_error(), "deferred op `RemoteOps::affine` failed"), "%s", bext_last_error());
  cr_expect(bext_read(good, out, sizeof out) && out[0] == 2.5f, "an independent value reads fine: %s",
            bext_last_error());
  cr_expect_not(bext_sync(d), "the sync reports the failure once");
  cr_expect(strstr(bext_last_error(), "RemoteOps::affine"), "%s", bext_last_error());
  cr_expect(bext_sync(d), "and only once: %s", bext_last_error());
  /* an input made by a failed core op: the ext call carries its error */
  bext_tensor *idx = bext_from_data((int64_t[]){7}, BEXT_I64, (int64_t[]){1, 1}, 2, d);
  bext_tensor *g = remote_ops_affine(bext_gather(bext_retain(x), 1, idx), 1.0f, 0.0f);
  cr_assert(g, "%s", bext_last_error());
  cr_expect_not(bext_read(g, out, sizeof(float)));
  cr_expect(strstr(bext_last_error(), "deferred op `bext_gather` failed"), "%s", bext_last_error());
  bext_release(g);
  bext_release(bad);
  bext_release(after);
  bext_release(good);
  bext_release(x);
  bext_sync(d);
  bext_device_close(d);
  ip_stop(&s);
}

Test(remote_ext, a_waiting_call_that_fails_is_an_error_at_the_call) {
  struct ip_server s;
  cr_assert(ip_start(&s, "flex", NULL), "%s", bext_last_error());
  const bext_device *d = dev_ok(s.spec);
  bext_tensor *v = bext_from_data(X, BEXT_F32, (int64_t[]){6}, 1, d);   /* 1-D: no dim 1 to sum */
  cr_assert(v, "%s", bext_last_error());
  bext_tensor *r = remote_shapes_row_sums(v, 1.0);
  cr_expect_null(r);
  const char *e = bext_last_error();
  cr_expect(strstr(e, "deferred op `RemoteShapes::row_sums` failed on the server") && strstr(e, "bext_sum_dim"), "%s",
            e);
  bext_device_close(d);
  struct bxsv_stats st;
  cr_expect(ip_settles(&s, 0, 0, &st), "nothing held for the failed call: %llu tensors", (unsigned long long)st.tensors);
  ip_stop(&s);
}

/* ---------------------------------------------- malformed ExtCall frames */

/* A raw session on s offering extensions, holding f32 [1, 2, 3] at id 1. */
static void ext_session(struct raw *r, const struct ip_server *s) {
  raw_dial(r, s->addr);
  raw_hello(r, BXRM_PROTOCOL_VERSION);
  Bxrm__Reply *w = raw_reply(r);
  cr_assert(w && w->body_case == BXRM__REPLY__BODY_WELCOME && w->welcome->extensions, "a Welcome offering extensions");
  bxrm__reply__free_unpacked(w, NULL);
  float v[3] = {1, 2, 3};
  int64_t n = 3;
  Bxrm__Upload u = BXRM__UPLOAD__INIT;
  u.id = 1, u.dtype = BEXT_F32, u.n_shape = 1, u.shape = &n;
  Bxrm__Request q = BXRM__REQUEST__INIT;
  q.body_case = BXRM__REQUEST__BODY_UPLOAD;
  q.upload = &u;
  raw_send(r, &q, v, sizeof v, sizeof v);
}

/* An ExtCall of RemoteOps::affine on `in` with these argument bytes,
 * claiming the output spec f32 [extent] (when not waiting). */
static void ext_call(struct raw *r, const uint8_t *args, size_t n, uint64_t in, uint64_t out, bool wait,
                     int64_t extent) {
  Bxrm__ExtCall x = BXRM__EXT_CALL__INIT;
  x.trait = "RemoteOps";
  x.id = "affine";
  x.n_in = 1;
  x.in = &in;
  x.args.data = (uint8_t *)args;
  x.args.len = n;
  x.out = out;
  x.wait = wait;
  x.dtype = BEXT_F32, x.n_shape = 1, x.shape = &extent;
  Bxrm__Request q = BXRM__REQUEST__INIT;
  q.body_case = BXRM__REQUEST__BODY_EXT_CALL;
  q.ext_call = &x;
  raw_send(r, &q, NULL, 0, 0);
}

Test(remote_ext, arguments_that_do_not_decode_fail_the_call_not_the_session) {
  struct ip_server s;
  cr_assert(ip_start(&s, "flex", NULL), "%s", bext_last_error());
  struct raw r;
  ext_session(&r, &s);
  const uint8_t garbage[3] = {9, 9, 9};
  ext_call(&r, garbage, sizeof garbage, 1, 2, true, 0);
  Bxrm__Reply *rep = raw_reply(&r);
  cr_assert(rep && rep->body_case == BXRM__REPLY__BODY_EXT_DONE);
  cr_expect(strstr(rep->ext_done->error, "3 bytes of arguments do not decode"), "%s", rep->ext_done->error);
  bxrm__reply__free_unpacked(rep, NULL);
  /* the same id again, well formed (version 1, a = 2, b = 0): it was not kept */
  const uint8_t ok[9] = {1, 0, 0, 0, 0x40, 0, 0, 0, 0};
  ext_call(&r, ok, sizeof ok, 1, 2, false, 3);
  Bxrm__Read rd = BXRM__READ__INIT;
  rd.id = 2;
  Bxrm__Request q = BXRM__REQUEST__INIT;
  q.body_case = BXRM__REQUEST__BODY_READ;
  q.read = &rd;
  raw_send(&r, &q, NULL, 0, 0);
  uint8_t hb[BXRM_HEADER_BYTES];
  cr_assert_eq(bxrm_io_read(&r.io, hb, sizeof hb, 3000), 0);
  struct bxrm_header h = bxrm_header_get(hb);
  uint8_t ctl[256];
  cr_assert(h.ctl <= sizeof ctl && h.raw == 12);
  cr_assert_eq(bxrm_io_read(&r.io, ctl, h.ctl, 3000), 0);
  float got[3];
  cr_assert_eq(bxrm_io_read(&r.io, got, sizeof got, 3000), 0);
  cr_expect(got[0] == 2 && got[1] == 4 && got[2] == 6, "%g %g %g", got[0], got[1], got[2]);
  /* a spec the implementation does not give, and one past the byte limit:
   * each fails its value, named at the read */
  ext_call(&r, ok, sizeof ok, 1, 3, false, 2);
  ext_call(&r, ok, sizeof ok, 1, 4, false, (int64_t)1 << 60);
  for (uint64_t id = 3; id <= 4; id++) {
    rd.id = id;
    raw_send(&r, &q, NULL, 0, 0);
    rep = raw_reply(&r);
    cr_assert(rep && rep->body_case == BXRM__REPLY__BODY_DATA);
    cr_expect(strstr(rep->data->error, "deferred op `RemoteOps::affine` failed on the server") &&
                  strstr(rep->data->error, id == 3 ? "its implementation returned f32 [3], its metadata on the "
                                                     "client gave f32 [2]"
                                                   : "would pass the session's limit"),
              "%s", rep->data->error);
    bxrm__reply__free_unpacked(rep, NULL);
  }
  /* a tensor id the session does not hold: a broken frame, the session ends */
  ext_call(&r, ok, sizeof ok, 77, 5, false, 3);
  rep = raw_reply(&r);
  cr_assert(rep && rep->body_case == BXRM__REPLY__BODY_FATAL);
  cr_expect(strstr(rep->fatal->reason, "ExtCall RemoteOps::affine: tensor 1 names id 77"), "%s", rep->fatal->reason);
  bxrm__reply__free_unpacked(rep, NULL);
  bxrm_io_fini(&r.io);
  struct bxsv_stats st;
  cr_expect(ip_settles(&s, 0, 0, &st), "%llu tensors left", (unsigned long long)st.tensors);
  ip_stop(&s);
}

/* ------------------------------------------------ results that are values */

/* The RemoteValues calls on device d, their results flattened into v[]:
 * summary's total, count, scale; split into Nothing / Whole / Halves /
 * an absent tensor (tags, fields, tensor values); halves' tensors and
 * rank; count_above.  Returns how many numbers it wrote. */
static int values_on(const bext_device *d, double *v) {
  int n = 0;
  float buf[6];
  bext_tensor *x = mat_f32(X, 2, 3, d);
  Summary s;
  cr_assert(remote_values_summary(bext_retain(x), 0.5, &s), "summary on %s: %s", bext_device_name(d), bext_last_error());
  cr_assert(s.total && bext_device_of(s.total) == d && bext_rank(s.total) == 0);
  cr_assert(bext_read(s.total, buf, sizeof(float)), "%s", bext_last_error());
  v[n++] = buf[0], v[n++] = s.count, v[n++] = s.scale;
  summary_release(&s);
  for (uint8_t parts = 0; parts <= 3; parts++) {
    Split sp;
    cr_assert(remote_values_split(bext_retain(x), parts, &sp), "split %u on %s: %s", parts, bext_device_name(d),
              bext_last_error());
    v[n++] = sp.tag;
    if (sp.tag == SPLIT_WHOLE) {
      v[n++] = sp.as.Whole._1;
      v[n++] = sp.as.Whole._0 != NULL;
      if (sp.as.Whole._0) {
        cr_assert(bext_read(sp.as.Whole._0, buf, sizeof buf), "%s", bext_last_error());
        v[n++] = buf[5];
      }
    } else if (sp.tag == SPLIT_HALVES) {
      v[n++] = (double)sp.as.Halves.cut;
      cr_assert(bext_device_of(sp.as.Halves.lo) == d && bext_device_of(sp.as.Halves.hi) == d);
      cr_assert(bext_read(sp.as.Halves.lo, buf, sizeof buf), "%s", bext_last_error());
      v[n++] = buf[1];
      cr_assert(bext_read(sp.as.Halves.hi, buf, sizeof buf), "%s", bext_last_error());
      v[n++] = buf[2];
    }
    split_release(&sp);
  }
  remote_ops_tuple3_tensor_tensor_usize h;
  cr_assert(remote_values_halves(x, &h), "halves on %s: %s", bext_device_name(d), bext_last_error());
  cr_assert(bext_rank(h._1) == 1 && bext_shape(h._1)[0] == 2, "the row sums' shape from the answer");
  cr_assert(bext_read(h._0, buf, sizeof buf) && bext_read(h._1, buf + 4, 2 * sizeof(float)), "%s", bext_last_error());
  v[n++] = buf[3], v[n++] = buf[4], v[n++] = buf[5], v[n++] = (double)h._2;
  remote_ops_tuple3_tensor_tensor_usize_release(&h);
  uint64_t above = 0;
  cr_assert(remote_values_count_above(x, 0.2f, &above), "count_above on %s: %s", bext_device_name(d), bext_last_error());
  v[n++] = (double)above;
  bext_release(x);
  return n;
}

Test(remote_ext, results_that_are_values_equal_local) {
  double want[64], got[64];
  int n = values_on(dev_ok("flex"), want);
  /* the formulas, so "equal to local" cannot be equal and wrong */
  const double expect[] = {3.125, 6, 0.5,                 /* summary: (sum X = 6.25) * 0.5, 6 elements */
                           SPLIT_NOTHING,
                           SPLIT_WHOLE, 1, 1, 3,          /* Whole(x, 1): x[5] = 3 */
                           SPLIT_HALVES, -6, -3, 1.25,    /* lo = x - 1: x[1] - 1; hi = x + 1: x[2] + 1 */
                           SPLIT_WHOLE, 3, 0,             /* an absent tensor */
                           8, -0.25, 6.5, 2,              /* 2x[3]; row sums 1.5-2+0.25, 4-0.5+3; rank */
                           4};                            /* above 0.2: 1.5, 0.25, 4, 3 */
  cr_assert_eq(n, (int)(sizeof expect / sizeof expect[0]));
  for (int i = 0; i < n; i++) cr_expect_float_eq(want[i], expect[i], 1e-6, "local value %d: %g, want %g", i, want[i], expect[i]);
  struct ip_server s;
  cr_assert(ip_start(&s, "flex", NULL), "%s", bext_last_error());
  const bext_device *d = dev_ok(s.spec);
  cr_assert_eq(values_on(d, got), n);
  for (int i = 0; i < n; i++) cr_expect_eq(got[i], want[i], "remote value %d: %g, local %g", i, got[i], want[i]);
  cr_expect(bext_sync(d), "%s", bext_last_error());
  struct bxsv_stats st;
  cr_expect(ip_settles(&s, 1, 0, &st), "every tensor of the values released: %llu left", (unsigned long long)st.tensors);
  bext_device_close(d);
  ip_stop(&s);
}

Test(remote_ext, a_server_program_returns_values_and_a_failing_value_call_is_an_error_at_the_call) {
  struct rh_server s;
  cr_assert(rh_start_program(&s, "remote_ext_server", "flex", NULL), "%s", s.err);
  const bext_device *d = dev_ok(s.spec);
  bext_tensor *x = mat_f32(X, 2, 3, d);
  Split sp;
  memset(&sp, 0x5a, sizeof sp);
  cr_expect_not(remote_values_split(bext_retain(x), 9, &sp));
  const char *e = bext_last_error();
  cr_expect(strstr(e, "deferred op `RemoteValues::split` failed on the server") &&
                strstr(e, "RemoteValues::split (flex implementation) failed"),
            "%s", e);
  cr_expect(sp.tag == 0 && sp.as.Halves.lo == NULL, "the output is zeroed");
  /* the session goes on */
  uint64_t above = 0;
  cr_expect(remote_values_count_above(x, 1.0f, &above) && above == 3, "%s", bext_last_error());
  bext_release(x);
  bext_device_close(d);
  cr_expect_eq(rh_stop(&s, SIGTERM), 0, "a clean exit");
}

/* A server that answers extension calls with broken values: the client's
 * decoder must refuse each with an error naming the method, never crash,
 * and release the ids the answer said the server holds. */
struct liar {
  struct raw_fake f;
  uint64_t freed[64], owed[64];   /* ids released by the client / named by the answers */
  int nfreed, nowed;
};

static void *liar_run(void *arg) {
  struct liar *L = arg;
  struct bxrm_io io;
  if (!raw_accept(L->f.l, &io)) return NULL;
  int call = 0;
  Bxrm__Request *q;
  while ((q = raw_request(&io))) {
    Bxrm__Reply r = BXRM__REPLY__INIT;
    Bxrm__ExtFound fo = BXRM__EXT_FOUND__INIT;
    Bxrm__ExtDone d = BXRM__EXT_DONE__INIT;
    Bxrm__Done dn = BXRM__DONE__INIT;
    Bxrm__TensorOut to[2], *tp[2] = {&to[0], &to[1]};
    int64_t shape[2] = {2, 3};
    /* Split's encodings: version 1, tag (u32), then the variant's fields */
    static const uint8_t halves_cut[7] = {1, 2, 0, 0, 0, 0xfa, 0xff};   /* Halves, its i64 `cut` cut short */
    static const uint8_t variant_7[5] = {1, 7, 0, 0, 0};               /* Split has 3 variants */
    static const uint8_t whole[6] = {1, 1, 0, 0, 0, 1};                /* Whole(_, 1): one tensor */
    switch (q->body_case) {
    case BXRM__REQUEST__BODY_HELLO:
      raw_welcome(&io, "flex", true);
      break;
    case BXRM__REQUEST__BODY_EXT_FIND:
      r.body_case = BXRM__REPLY__BODY_EXT_FOUND, r.ext_found = &fo;
      raw_answer(&io, &r, NULL, 0, 0);
      break;
    case BXRM__REQUEST__BODY_EXT_CALL:
      for (int i = 0; i < 2; i++) {
        bxrm__tensor_out__init(&to[i]);
        to[i].dtype = BEXT_F32, to[i].n_shape = 2, to[i].shape = shape;
        L->owed[L->nowed++] = q->ext_call->out + (uint64_t)i;
      }
      d.n_outs = 2, d.outs = tp;
      if (call == 0) d.value.data = (uint8_t *)halves_cut, d.value.len = sizeof halves_cut;
      else if (call == 1) d.value.data = (uint8_t *)variant_7, d.value.len = sizeof variant_7;
      else d.value.data = (uint8_t *)whole, d.value.len = sizeof whole;
      call++;
      r.body_case = BXRM__REPLY__BODY_EXT_DONE, r.ext_done = &d;
      raw_answer(&io, &r, NULL, 0, 0);
      break;
    case BXRM__REQUEST__BODY_RELEASE:
      for (size_t i = 0; i < q->release->n_ids && L->nfreed < 64; i++) L->freed[L->nfreed++] = q->release->ids[i];
      break;
    case BXRM__REQUEST__BODY_SYNC:
      r.body_case = BXRM__REPLY__BODY_DONE, r.done = &dn;
      raw_answer(&io, &r, NULL, 0, 0);
      break;
    default:
      break;
    }
    bxrm__request__free_unpacked(q, NULL);
  }
  bxrm_io_fini(&io);
  return NULL;
}

Test(remote_ext, an_answer_whose_value_does_not_decode_is_an_error_not_a_crash) {
  struct liar L;
  memset(&L, 0, sizeof L);
  raw_fake_start(&L.f, liar_run, &L);
  const bext_device *d = dev_ok(L.f.spec);
  bext_tensor *x = mat_f32(X, 2, 3, d);
  static const char *const why[] = {"does not decode (7 bytes: truncated", "does not decode (5 bytes: truncated, or naming a field or variant",
                                    "the server's answer holds 2 tensors, the value it decodes to holds 1"};
  for (int i = 0; i < 3; i++) {
    Split sp;
    memset(&sp, 0x5a, sizeof sp);
    cr_expect_not(remote_values_split(bext_retain(x), 2, &sp), "answer %d", i);
    const char *e = bext_last_error();
    cr_expect(strstr(e, "RemoteValues::split") && strstr(e, why[i]), "answer %d: %s", i, e);
    cr_expect(sp.tag == 0 && sp.as.Halves.lo == NULL && sp.as.Halves.hi == NULL, "answer %d: the output is zeroed", i);
  }
  bext_release(x);
  cr_expect(bext_sync(d), "%s", bext_last_error());   /* sends the releases */
  bext_device_close(d);
  raw_fake_stop(&L.f);
  cr_expect_eq(L.nowed, 6);
  for (int i = 0; i < L.nowed; i++) {
    bool found = false;
    for (int j = 0; j < L.nfreed; j++) found |= L.freed[j] == L.owed[i];
    cr_expect(found, "id %llu, which an answer said the server holds, was released", (unsigned long long)L.owed[i]);
  }
}

/* A streamed value result that the implementation does not give as the
 * metadata says, or that fails: its tensors' values fail (at their reads
 * and the next sync), naming why; a right one reads fine. */
Test(remote_ext, a_streamed_value_that_disagrees_with_its_metadata_fails_its_tensors) {
  struct ip_server s;
  cr_assert(ip_start(&s, "flex", NULL), "%s", bext_last_error());
  const bext_device *d = dev_ok(s.spec);
  bext_tensor *x = mat_f32(X, 2, 3, d);
  static const float as[4] = {0.0f, -2.0f, 7.0f, 2.0f};
  static const char *const why[4] = {
      "RemoteOps::scaled (flex implementation) failed",
      "its implementation's value differs from its metadata on the client in its ordinary fields or its variant",
      "its implementation returned f32 [] for output `output.y`, its metadata on the client gave f32 [2, 3]", NULL};
  Scaled sc[4];
  for (int i = 0; i < 4; i++) {
    cr_assert(remote_ops_scaled(bext_retain(x), as[i], &sc[i]), "streamed, so it returns: %s", bext_last_error());
    cr_expect(sc[i].factor == as[i] && sc[i].rank == 2, "the metadata's fields");
  }
  float out[6];
  for (int i = 0; i < 3; i++) {
    cr_expect_not(bext_read(sc[i].y, out, sizeof out), "a = %g", as[i]);
    const char *e = bext_last_error();
    cr_expect(strstr(e, "deferred op `RemoteOps::scaled` failed on the server") && strstr(e, why[i]), "a = %g: %s",
              as[i], e);
  }
  cr_expect(bext_read(sc[3].y, out, sizeof out) && out[5] == 6.0f, "a right one reads fine: %s", bext_last_error());
  cr_expect_not(bext_sync(d), "the sync reports the first failure");
  cr_expect(strstr(bext_last_error(), why[0]), "%s", bext_last_error());
  for (int i = 0; i < 4; i++) scaled_release(&sc[i]);
  bext_release(x);
  cr_expect(bext_sync(d), "%s", bext_last_error());
  struct bxsv_stats st;
  cr_expect(ip_settles(&s, 1, 0, &st), "nothing left: %llu tensors", (unsigned long long)st.tensors);
  bext_device_close(d);
  ip_stop(&s);
}
