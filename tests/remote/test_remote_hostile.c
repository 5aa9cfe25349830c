/* test_remote_hostile.c — bad input to bext-server over a real socket:
 * garbage, truncated and oversized frames, a wrong version, frames out of
 * order, unknown, reused and released ids, malformed ops, malformed
 * extension calls (value results too) and hostile shapes.  Each must end the session with a reason the server logs and
 * sends (or, for a valid op that fails, fail that value), never crash or
 * hang it; after each, a good client is still served and the session's
 * tensors are gone. */
#include <criterion/criterion.h>

#include <bext/bext.h>

#include "inproc.h"
#include "raw_session.h"

static void short_timeout(struct bxsv_config *c) {
  c->frame_timeout_ms = 300;
  c->max_frame = 1 << 20;
}

/* The session ends with a Fatal whose reason holds `why`, which the
 * server also logged; then the stream is closed; then a good client is
 * served and nothing of the bad session is left. */
static void expect_refused(struct ip_server *s, struct raw *r, const char *why) {
  Bxrm__Reply *rep = raw_reply(r);
  cr_assert(rep, "a Fatal before the close");
  cr_expect_eq(rep->body_case, BXRM__REPLY__BODY_FATAL);
  if (rep->body_case == BXRM__REPLY__BODY_FATAL)
    cr_expect(strstr(rep->fatal->reason, why), "reason '%s', expected '%s'", rep->fatal->reason, why);
  bxrm__reply__free_unpacked(rep, NULL);
  uint8_t b;
  cr_expect_neq(bxrm_io_read(&r->io, &b, 1, 3000), 0, "the server closed the session");
  cr_expect(ip_logged(s, why), "the log says why: %s", s->log);
  bxrm_io_fini(&r->io);
  struct bxsv_stats st;
  cr_expect(ip_settles(s, 0, 0, &st), "%llu sessions and %llu tensors left", (unsigned long long)st.sessions,
            (unsigned long long)st.tensors);
  cr_expect_geq(st.sessions_refused, 1);
  const bext_device *d = bext_device_get(s->spec);
  bext_tensor *t = bext_full((int64_t[]){3}, 1, 2.5, BEXT_F32, d);
  float out[3] = {0};
  cr_expect(t && bext_read(t, out, sizeof out) && out[2] == 2.5f, "a good client is served: %s", bext_last_error());
  bext_release(t);
  bext_device_close(d);
  ip_stop(s);
}

static struct ip_server srv;
static struct raw rc;
static void setup(void) {
  cr_assert(ip_start(&srv, "flex", short_timeout), "%s", bext_last_error());
  raw_dial(&rc, srv.addr);
}

static void op_frame(uint32_t code, const uint64_t *in, size_t n_in, uint64_t out, Bxrm__Attrs *at) {
  Bxrm__Op m = BXRM__OP__INIT;
  m.code = code;
  m.api = "bext_test";
  m.n_in = n_in;
  m.in = (uint64_t *)in;
  m.out = out;
  m.at = at;
  Bxrm__Request q = BXRM__REQUEST__INIT;
  q.body_case = BXRM__REQUEST__BODY_OP;
  q.op = &m;
  raw_send(&rc, &q, NULL, 0, 0);
}

static void upload(uint64_t id, const float *v, int64_t n) {
  Bxrm__Upload u = BXRM__UPLOAD__INIT;
  u.id = id;
  u.dtype = BEXT_F32;
  u.n_shape = 1;
  u.shape = &n;
  Bxrm__Request q = BXRM__REQUEST__INIT;
  q.body_case = BXRM__REQUEST__BODY_UPLOAD;
  q.upload = &u;
  raw_send(&rc, &q, v, (uint64_t)n * 4, (uint64_t)n * 4);
}

static void welcomed(void) {
  raw_hello(&rc, BXRM_PROTOCOL_VERSION);
  Bxrm__Reply *r = raw_reply(&rc);
  cr_assert(r && r->body_case == BXRM__REPLY__BODY_WELCOME);
  cr_expect_str_eq(r->welcome->device, "flex");
  bxrm__reply__free_unpacked(r, NULL);
}

Test(hostile, garbage_bytes, .init = setup) {
  const char junk[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  cr_assert_eq(bxrm_io_write(&rc.io, junk, sizeof junk - 1, 2000), 0);
  expect_refused(&srv, &rc, "frame header claims");
}

Test(hostile, a_control_message_that_does_not_decode, .init = setup) {
  uint8_t f[BXRM_HEADER_BYTES + 6] = {0};
  bxrm_header_put(f, 6, 0);
  memcpy(f + BXRM_HEADER_BYTES, "\xff\xff\xff\xff\xff\xff", 6);
  cr_assert_eq(bxrm_io_write(&rc.io, f, sizeof f, 2000), 0);
  expect_refused(&srv, &rc, "malformed control message");
}

Test(hostile, a_truncated_frame_times_out, .init = setup) {
  uint8_t f[BXRM_HEADER_BYTES + 3] = {0};
  bxrm_header_put(f, 100, 0);   /* 100 bytes announced, 3 sent, then silence */
  cr_assert_eq(bxrm_io_write(&rc.io, f, sizeof f, 2000), 0);
  expect_refused(&srv, &rc, "truncated frame: the control message did not arrive within 300 ms");
}

Test(hostile, a_truncated_upload_then_a_close, .init = setup) {
  welcomed();
  float v[4] = {1, 2, 3, 4};
  Bxrm__Upload u = BXRM__UPLOAD__INIT;
  int64_t n = 1000;
  u.id = 1, u.dtype = BEXT_F32, u.n_shape = 1, u.shape = &n;
  Bxrm__Request q = BXRM__REQUEST__INIT;
  q.body_case = BXRM__REQUEST__BODY_UPLOAD;
  q.upload = &u;
  raw_send(&rc, &q, v, sizeof v, 4000);   /* claims 4000, sends 16 */
  cr_expect(ip_logged(&srv, "upload: the frame ended after its header"), "%s", srv.log);
  bxrm_io_fini(&rc.io);
  struct bxsv_stats st;
  cr_expect(ip_settles(&srv, 0, 0, &st));
  ip_stop(&srv);
}

Test(hostile, an_oversized_claim_is_refused_before_reading, .init = setup) {
  welcomed();
  uint8_t f[BXRM_HEADER_BYTES] = {0};
  bxrm_header_put(f, 4, (uint64_t)1 << 40);
  cr_assert_eq(bxrm_io_write(&rc.io, f, sizeof f, 2000), 0);
  expect_refused(&srv, &rc, "over the server's limit of 1048576 (--max-frame)");
}

Test(hostile, an_oversized_control_message, .init = setup) {
  uint8_t f[BXRM_HEADER_BYTES] = {0};
  bxrm_header_put(f, BXRM_MAX_CONTROL + 1, 0);
  cr_assert_eq(bxrm_io_write(&rc.io, f, sizeof f, 2000), 0);
  expect_refused(&srv, &rc, "control message of 1048577 bytes");
}

Test(hostile, a_wrong_protocol_version, .init = setup) {
  raw_hello(&rc, 99);
  expect_refused(&srv, &rc, "protocol version 99, this server speaks version 1");
}

Test(hostile, work_before_the_hello, .init = setup) {
  op_frame(BXR_OP_NEG, (uint64_t[]){1}, 1, 2, NULL);
  expect_refused(&srv, &rc, "the first frame must be a Hello");
}

Test(hostile, an_unknown_tensor_id, .init = setup) {
  welcomed();
  op_frame(BXR_OP_ADD, (uint64_t[]){5, 6}, 2, 7, NULL);
  expect_refused(&srv, &rc, "input 1 names id 5, which this session does not hold");
}

Test(hostile, an_op_on_a_released_id, .init = setup) {
  welcomed();
  float v[2] = {1, 2};
  upload(1, v, 2);
  Bxrm__Release rel = BXRM__RELEASE__INIT;
  uint64_t ids[] = {1};
  rel.n_ids = 1, rel.ids = ids;
  Bxrm__Request q = BXRM__REQUEST__INIT;
  q.body_case = BXRM__REQUEST__BODY_RELEASE;
  q.release = &rel;
  raw_send(&rc, &q, NULL, 0, 0);
  op_frame(BXR_OP_NEG, (uint64_t[]){1}, 1, 2, NULL);
  expect_refused(&srv, &rc, "input 1 names id 1, which this session does not hold");
}

Test(hostile, a_reused_result_id, .init = setup) {
  welcomed();
  float v[2] = {1, 2};
  upload(1, v, 2);
  upload(1, v, 2);
  expect_refused(&srv, &rc, "result id 1 is already in use");
}

Test(hostile, an_upload_whose_bytes_do_not_match_its_shape, .init = setup) {
  welcomed();
  float v[4] = {0};
  Bxrm__Upload u = BXRM__UPLOAD__INIT;
  int64_t n = 3;
  u.id = 1, u.dtype = BEXT_F32, u.n_shape = 1, u.shape = &n;
  Bxrm__Request q = BXRM__REQUEST__INIT;
  q.body_case = BXRM__REQUEST__BODY_UPLOAD;
  q.upload = &u;
  raw_send(&rc, &q, v, 16, 16);
  expect_refused(&srv, &rc, "announces 16 raw bytes, its shape needs 12");
}

Test(hostile, an_op_code_outside_the_table, .init = setup) {
  welcomed();
  op_frame(999, NULL, 0, 1, NULL);
  expect_refused(&srv, &rc, "op code 999 is not in the op table");
}

Test(hostile, the_wrong_input_count, .init = setup) {
  welcomed();
  float v[2] = {1, 2};
  upload(1, v, 2);
  op_frame(BXR_OP_ADD, (uint64_t[]){1}, 1, 2, NULL);
  expect_refused(&srv, &rc, "1 inputs, the op takes 2");
}

static void ext_frame(const char *trait, const char *id, const uint64_t *in, size_t n_in, uint64_t out, bool wait,
                      uint32_t dtype, size_t rank) {
  Bxrm__ExtCall x = BXRM__EXT_CALL__INIT;
  int64_t shape[16] = {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2};
  x.trait = (char *)trait, x.id = (char *)id;
  x.n_in = n_in, x.in = (uint64_t *)in;
  x.out = out, x.wait = wait;
  x.dtype = dtype, x.n_shape = rank, x.shape = shape;
  Bxrm__Request q = BXRM__REQUEST__INIT;
  q.body_case = BXRM__REQUEST__BODY_EXT_CALL;
  q.ext_call = &x;
  raw_send(&rc, &q, NULL, 0, 0);
}

/* Malformed ExtCalls end the session; this server has no extension ops,
 * so a well-formed one fails its call (tests/remote/test_remote_ext.c
 * has the ops). */
Test(hostile, an_ext_call_without_a_trait, .init = setup) {
  welcomed();
  ext_frame("", "affine", NULL, 0, 1, false, BEXT_F32, 1);
  expect_refused(&srv, &rc, "ExtCall: trait and op id must be 1 to 128 bytes");
}

Test(hostile, an_ext_call_with_too_many_tensors, .init = setup) {
  welcomed();
  float v[2] = {1, 2};
  upload(1, v, 2);
  uint64_t ids[BEXT_EXT_MAX_SLOTS + 1];
  for (size_t i = 0; i < BEXT_EXT_MAX_SLOTS + 1; i++) ids[i] = 1;
  ext_frame("T", "m", ids, BEXT_EXT_MAX_SLOTS + 1, 2, false, BEXT_F32, 1);
  expect_refused(&srv, &rc, "ExtCall T::m: 65 tensors, a call holds at most 64");
}

Test(hostile, an_ext_call_on_an_unknown_id, .init = setup) {
  welcomed();
  ext_frame("T", "m", (uint64_t[]){9}, 1, 2, false, BEXT_F32, 1);
  expect_refused(&srv, &rc, "ExtCall T::m: tensor 1 names id 9, which this session does not hold");
}

Test(hostile, an_ext_call_with_a_malformed_output_spec, .init = setup) {
  welcomed();
  ext_frame("T", "m", NULL, 0, 2, false, BEXT_F32, 9);
  expect_refused(&srv, &rc, "ExtCall T::m: malformed output spec (dtype 0, rank 9)");
}

Test(hostile, an_ext_call_reusing_a_result_id, .init = setup) {
  welcomed();
  float v[2] = {1, 2};
  upload(1, v, 2);
  ext_frame("T", "m", (uint64_t[]){1}, 1, 1, false, BEXT_F32, 1);
  expect_refused(&srv, &rc, "T::m: result id 1 is already in use");
}

/* An ExtCall for a value result: ids out .. out+n_out-1 reserved. */
static void ext_value_frame(const uint64_t *in, size_t n_in, uint64_t out, uint32_t n_out, bool wait) {
  Bxrm__ExtCall x = BXRM__EXT_CALL__INIT;
  x.trait = "T", x.id = "m";
  x.n_in = n_in, x.in = (uint64_t *)in;
  x.out = out, x.n_out = n_out, x.wait = wait;
  Bxrm__Request q = BXRM__REQUEST__INIT;
  q.body_case = BXRM__REQUEST__BODY_EXT_CALL;
  q.ext_call = &x;
  raw_send(&rc, &q, NULL, 0, 0);
}

Test(hostile, a_streamed_value_call_without_its_specs, .init = setup) {
  welcomed();
  ext_value_frame(NULL, 0, 2, 4, false);
  expect_refused(&srv, &rc, "ExtCall T::m: a value result reserves 1 to 64 ids from a non-zero `out`, and a "
                            "streamed one names each one's spec (out 2, n_out 4, 0 specs, streamed)");
}

Test(hostile, a_value_call_reserving_65_ids, .init = setup) {
  welcomed();
  ext_value_frame(NULL, 0, 2, 65, true);
  expect_refused(&srv, &rc, "(out 2, n_out 65, 0 specs)");
}

Test(hostile, a_streamed_value_call_with_a_malformed_spec, .init = setup) {
  welcomed();
  Bxrm__TensorOut o = BXRM__TENSOR_OUT__INIT, *op = &o;
  o.dtype = BEXT_DTYPE_COUNT;
  Bxrm__ExtCall x = BXRM__EXT_CALL__INIT;
  x.trait = "T", x.id = "m", x.out = 2, x.n_out = 1, x.n_outs = 1, x.outs = &op;
  Bxrm__Request q = BXRM__REQUEST__INIT;
  q.body_case = BXRM__REQUEST__BODY_EXT_CALL;
  q.ext_call = &x;
  raw_send(&rc, &q, NULL, 0, 0);
  expect_refused(&srv, &rc, "ExtCall T::m: malformed spec of value tensor 1");
}

Test(hostile, a_value_call_whose_ids_overlap_one_in_use, .init = setup) {
  welcomed();
  float v[2] = {1, 2};
  upload(5, v, 2);
  ext_value_frame((uint64_t[]){5}, 1, 2, 64, true);   /* ids 2 .. 65 hold 5 */
  expect_refused(&srv, &rc, "ExtCall T::m: result id 5 is already in use");
}

Test(hostile, an_unknown_ext_op_fails_its_call_not_the_session, .init = setup) {
  welcomed();
  float v[2] = {1, 2};
  upload(1, v, 2);
  ext_frame("T", "m", (uint64_t[]){1}, 1, 2, true, 0, 0);   /* waits: answered */
  Bxrm__Reply *r = raw_reply(&rc);
  cr_assert(r && r->body_case == BXRM__REPLY__BODY_EXT_DONE);
  cr_expect(strstr(r->ext_done->error, "no extension op `m` of trait T in this server's build"), "%s",
            r->ext_done->error);
  bxrm__reply__free_unpacked(r, NULL);
  ext_frame("T", "m", (uint64_t[]){1}, 1, 2, false, BEXT_F32, 1);   /* streams: its value fails */
  Bxrm__Read rd = BXRM__READ__INIT;
  rd.id = 2;
  Bxrm__Request q = BXRM__REQUEST__INIT;
  q.body_case = BXRM__REQUEST__BODY_READ;
  q.read = &rd;
  raw_send(&rc, &q, NULL, 0, 0);
  r = raw_reply(&rc);
  cr_assert(r && r->body_case == BXRM__REPLY__BODY_DATA);
  cr_expect(strstr(r->data->error, "deferred op `T::m` failed on the server: no extension op"), "%s", r->data->error);
  bxrm__reply__free_unpacked(r, NULL);
  Bxrm__ExtFind f = BXRM__EXT_FIND__INIT;
  f.trait = "T", f.id = "m";
  q.body_case = BXRM__REQUEST__BODY_EXT_FIND;
  q.ext_find = &f;
  raw_send(&rc, &q, NULL, 0, 0);
  r = raw_reply(&rc);
  cr_assert(r && r->body_case == BXRM__REPLY__BODY_EXT_FOUND);
  cr_expect(strstr(r->ext_found->error, "no extension op `m` of trait T"), "%s", r->ext_found->error);
  bxrm__reply__free_unpacked(r, NULL);
  bxrm_io_fini(&rc.io);
  struct bxsv_stats st;
  cr_expect(ip_settles(&srv, 0, 0, &st), "%llu tensors left", (unsigned long long)st.tensors);
  cr_expect_eq(st.sessions_refused, 0, "the session was never refused");
  ip_stop(&srv);
}

/* Valid frames whose op cannot run: the value fails, the session lives. */
Test(hostile, hostile_shapes_and_dims_fail_their_value_not_the_server, .init = setup) {
  welcomed();
  int64_t huge[2] = {(int64_t)1 << 40, (int64_t)1 << 40};
  Bxrm__Attrs at = BXRM__ATTRS__INIT;
  at.n_shape = 2, at.shape = huge, at.dtype = BEXT_F32;
  op_frame(BXR_OP_ZEROS, NULL, 0, 1, &at);        /* 2^80 elements */
  float v[2] = {1, 2};
  upload(2, v, 2);
  Bxrm__Attrs red = BXRM__ATTRS__INIT;
  red.dim = 99;
  op_frame(BXR_OP_SUM, (uint64_t[]){2}, 1, 3, &red);   /* no dim 99 */
  const uint64_t reads[] = {1, 3, 2};
  const char *want[] = {"bext_test", "dim 99", ""};
  for (int i = 0; i < 3; i++) {
    Bxrm__Read rd = BXRM__READ__INIT;
    rd.id = reads[i];
    Bxrm__Request q = BXRM__REQUEST__INIT;
    q.body_case = BXRM__REQUEST__BODY_READ;
    q.read = &rd;
    raw_send(&rc, &q, NULL, 0, 0);
    Bxrm__Reply *r = raw_reply(&rc);
    cr_assert(r && r->body_case == BXRM__REPLY__BODY_DATA, "read %d answered", i);
    if (want[i][0]) cr_expect(strstr(r->data->error, want[i]), "read of id %d: '%s'", (int)reads[i], r->data->error);
    else cr_expect_str_eq(r->data->error, "", "the good value reads");
    bxrm__reply__free_unpacked(r, NULL);
  }
  struct bxsv_stats st;
  bxsv_stats(srv.srv, &st);
  cr_expect_eq(st.tensors, 3);
  cr_expect_eq(st.bytes, 8, "only the upload holds bytes");
  bxrm_io_fini(&rc.io);
  cr_expect(ip_settles(&srv, 0, 0, &st));
  ip_stop(&srv);
}

/* Not hostile, but the framing's edge: a good session whose bytes arrive
 * one per write (every frame boundary falls mid-receive for the server's
 * read-ahead), then the same frames again all in one write.  Both are
 * served and read back right. */
static void good_frames(struct bxrm_buf *b, uint64_t base, bool with_hello) {
  Bxrm__Request q = BXRM__REQUEST__INIT;
  Bxrm__Hello h = BXRM__HELLO__INIT;
  if (with_hello) {
    h.version = BXRM_PROTOCOL_VERSION;
    q.body_case = BXRM__REQUEST__BODY_HELLO;
    q.hello = &h;
    cr_assert(bxrm_buf_frame(b, &q.base, 0));
  }
  float v[3] = {1.5f, -2.0f, 4.25f};
  int64_t n = 3;
  Bxrm__Upload u = BXRM__UPLOAD__INIT;
  u.id = base, u.dtype = BEXT_F32, u.n_shape = 1, u.shape = &n;
  q = (Bxrm__Request)BXRM__REQUEST__INIT;
  q.body_case = BXRM__REQUEST__BODY_UPLOAD;
  q.upload = &u;
  cr_assert(bxrm_buf_frame(b, &q.base, sizeof v));
  if (b->len + sizeof v > b->cap) {
    cr_assert((b->p = realloc(b->p, b->cap * 2)));
    b->cap *= 2;
  }
  memcpy(b->p + b->len, v, sizeof v);
  b->len += sizeof v;
  Bxrm__Op m = BXRM__OP__INIT;
  uint64_t in[1] = {base};
  m.code = BXR_OP_NEG, m.api = "bext_neg", m.n_in = 1, m.in = in, m.out = base + 1;
  q = (Bxrm__Request)BXRM__REQUEST__INIT;
  q.body_case = BXRM__REQUEST__BODY_OP;
  q.op = &m;
  cr_assert(bxrm_buf_frame(b, &q.base, 0));
  Bxrm__Read rd = BXRM__READ__INIT;
  rd.id = base + 1;
  q = (Bxrm__Request)BXRM__REQUEST__INIT;
  q.body_case = BXRM__REQUEST__BODY_READ;
  q.read = &rd;
  cr_assert(bxrm_buf_frame(b, &q.base, 0));
}

static void expect_negated(struct raw *r) {
  uint8_t hb[BXRM_HEADER_BYTES];
  cr_assert_eq(bxrm_io_read(&r->io, hb, sizeof hb, 3000), 0, "the read is answered");
  struct bxrm_header h = bxrm_header_get(hb);
  cr_assert_leq(h.ctl, 1024);
  uint8_t ctl[1024];
  cr_assert_eq(bxrm_io_read(&r->io, ctl, h.ctl, 3000), 0);
  Bxrm__Reply *rep = bxrm__reply__unpack(NULL, h.ctl, ctl);
  cr_assert(rep && rep->body_case == BXRM__REPLY__BODY_DATA);
  cr_expect_str_eq(rep->data->error, "");
  bxrm__reply__free_unpacked(rep, NULL);
  float out[3];
  cr_assert_eq(h.raw, sizeof out);
  cr_assert_eq(bxrm_io_read(&r->io, out, sizeof out, 3000), 0);
  cr_expect(out[0] == -1.5f && out[1] == 2.0f && out[2] == -4.25f, "%g %g %g", out[0], out[1], out[2]);
}

Test(hostile, frames_a_byte_at_a_time_or_all_in_one_write_are_served, .init = setup) {
  struct bxrm_buf b = {0};
  good_frames(&b, 1, true);
  for (size_t i = 0; i < b.len; i++) cr_assert_eq(bxrm_io_write(&rc.io, b.p + i, 1, 2000), 0, "byte %zu", i);
  Bxrm__Reply *w = raw_reply(&rc);
  cr_assert(w && w->body_case == BXRM__REPLY__BODY_WELCOME, "the dribbled Hello is answered");
  bxrm__reply__free_unpacked(w, NULL);
  expect_negated(&rc);
  b.len = 0;
  for (uint64_t k = 0; k < 50; k++) good_frames(&b, 10 + 2 * k, false);
  cr_assert_eq(bxrm_io_write(&rc.io, b.p, b.len, 2000), 0);
  for (int k = 0; k < 50; k++) expect_negated(&rc);
  bxrm_buf_free(&b);
  struct bxsv_stats st;
  bxsv_stats(srv.srv, &st);
  cr_expect_eq(st.tensors, 2 + 2 * 50, "every upload and result held");
  cr_expect_eq(st.sessions_refused, 0);
  bxrm_io_fini(&rc.io);
  cr_expect(ip_settles(&srv, 0, 0, &st));
  ip_stop(&srv);
}
