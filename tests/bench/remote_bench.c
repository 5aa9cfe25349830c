/* remote_bench.c — the Remote backend's timings for bext-bench's remote_*
 * rows, on loopback TCP against a bext-server child hosting flex (started
 * here, from the directory bext-bench runs from):
 *   remote_chain_100     100 adds of 16 f32, each on the last result, then
 *                        one read, vs 100 blocking nng req/rep round trips
 *                        of the same bytes per op (an add's frame, echoed
 *                        by a rep thread here): streaming vs an RPC per op
 *   remote_upload_64M    bext_from_data of 64 MiB on remote: + bext_sync
 *                        (the server has it all), vs sending the same
 *                        bytes over a plain TCP socket to a thread here
 *                        that receives them into a warm buffer and acks
 *   remote_download_64M  bext_read of a 64 MiB remote tensor into a warm
 *                        buffer, vs receiving the same bytes from that
 *                        thread over the plain socket
 * The values are checked once, untimed: the chain's sum, the uploaded
 * bytes read back, the plain copy's bytes. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <libgen.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bext/bext.h"
#include "remote_bench.h"

#ifndef BEXT_HAVE_REMOTE
int bxbt_remote_times(int reps, bool chain, bool bulk, struct bxbt_remote_times *t) {
  (void)reps, (void)chain, (void)bulk, (void)t;
  printf("remote_* rows SKIPPED: the Remote backend is not in this build (nng, protobuf-c)\n");
  return 0;
}
#else
#include "remote_harness.h"
#include "rm_wire.h"   /* nng.h first: the protocol headers need it */

#include <nng/protocol/reqrep0/rep.h>
#include <nng/protocol/reqrep0/req.h>

#define CHAIN 100
#define BULK ((size_t)64 << 20)

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int fail(const char *what, const char *why) {
  fprintf(stderr, "bext-bench: remote: %s: %s\n", what, why);
  return -1;
}

/* ------------------------------------------------ the req/rep peer */

static void *echo_main(void *arg) {
  nng_socket *rep = arg;
  for (;;) {
    nng_msg *m;
    if (nng_recvmsg(*rep, &m, 0)) break;   /* closed: done */
    if (nng_sendmsg(*rep, m, 0)) nng_msg_free(m);
  }
  return NULL;
}

/* The bytes the Remote backend sends for one 16-element add: the frame
 * header and the packed Op (ids of the size a chain's have). */
static size_t add_frame_bytes(void) {
  uint64_t in[2] = {1000, 1001};
  Bxrm__Attrs at = BXRM__ATTRS__INIT;
  Bxrm__Op m = BXRM__OP__INIT;
  m.code = BXR_OP_ADD;
  m.api = "bext_add";
  m.n_in = 2;
  m.in = in;
  m.out = 1002;
  m.at = &at;
  Bxrm__Request q = BXRM__REQUEST__INIT;
  q.body_case = BXRM__REQUEST__BODY_OP;
  q.op = &m;
  return BXRM_HEADER_BYTES + protobuf_c_message_get_packed_size(&q.base);
}

/* ------------------------------------------------ the plain TCP peer */

struct tcp_peer {
  int lfd, fd;
  uint8_t *buf;
  pthread_t th;
};

static bool send_all(int fd, const void *p, size_t n) {
  for (const uint8_t *b = p; n;) {
    ssize_t k = send(fd, b, n, MSG_NOSIGNAL);
    if (k <= 0) return false;
    b += k, n -= (size_t)k;
  }
  return true;
}

static bool recv_all(int fd, void *p, size_t n) {
  for (uint8_t *b = p; n;) {
    ssize_t k = recv(fd, b, n, 0);
    if (k <= 0) return false;
    b += k, n -= (size_t)k;
  }
  return true;
}

/* 'U': receive BULK bytes, ack with one byte; 'D': send BULK bytes. */
static void *tcp_peer_main(void *arg) {
  struct tcp_peer *p = arg;
  int fd = accept(p->lfd, NULL, NULL);
  if (fd < 0) return NULL;
  for (char cmd; recv_all(fd, &cmd, 1);) {
    bool ok = cmd == 'U' ? recv_all(fd, p->buf, BULK) && send_all(fd, "k", 1)
              : cmd == 'D' ? send_all(fd, p->buf, BULK)
                           : false;
    if (!ok) break;
  }
  close(fd);
  return NULL;
}

static bool tcp_peer_start(struct tcp_peer *p) {
  p->fd = -1;
  p->buf = malloc(BULK);
  if (!p->buf) return false;
  memset(p->buf, 0, BULK);   /* warm: no page faults while timed */
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t al = sizeof a;
  p->lfd = socket(AF_INET, SOCK_STREAM, 0);
  if (p->lfd < 0 || bind(p->lfd, (struct sockaddr *)&a, sizeof a) || listen(p->lfd, 1) ||
      getsockname(p->lfd, (struct sockaddr *)&a, &al) || pthread_create(&p->th, NULL, tcp_peer_main, p))
    return false;
  p->fd = socket(AF_INET, SOCK_STREAM, 0);
  return p->fd >= 0 && connect(p->fd, (struct sockaddr *)&a, sizeof a) == 0;
}

static void tcp_peer_stop(struct tcp_peer *p) {
  if (p->fd >= 0) close(p->fd);   /* the peer's recv ends */
  pthread_join(p->th, NULL);
  close(p->lfd);
  free(p->buf);
}

/* ------------------------------------------------------------ rows */

/* One chain on dev from a: 100 adds, each on the last result, one read. */
static bool chain_once(bext_tensor *a, float *out) {
  bext_tensor *b = bext_retain(a);
  for (int i = 0; i < CHAIN; i++) b = bext_add(b, bext_retain(a));
  bool ok = b && bext_read(b, out, 16 * sizeof(float));
  bext_release(b);
  return ok;
}

static int chain_rows(int reps, const bext_device *d, struct bxbt_remote_times *t) {
  const int iters = 40;
  float v[16], out[16];
  int64_t n16 = 16;
  for (int i = 0; i < 16; i++) v[i] = (float)i * 0.25f;
  bext_tensor *a = bext_from_data(v, BEXT_F32, &n16, 1, d);
  if (!a || !chain_once(a, out)) return fail("remote_chain_100", bext_last_error());
  for (int i = 0; i < 16; i++)
    if (out[i] != (CHAIN + 1) * v[i]) return fail("remote_chain_100", "the chain read back a wrong value");

  nng_socket rep, req;
  nng_listener l;
  int port = 0, rv;
  char addr[64];
  pthread_t th;
  if ((rv = nng_rep0_open(&rep)) || (rv = nng_listen(rep, "tcp://127.0.0.1:0", &l, 0)) ||
      (rv = nng_listener_get_int(l, NNG_OPT_TCP_BOUND_PORT, &port)))
    return fail("req/rep peer", nng_strerror(rv));
  snprintf(addr, sizeof addr, "tcp://127.0.0.1:%d", port);
  if ((rv = nng_req0_open(&req)) || (rv = nng_dial(req, addr, NULL, 0)))
    return fail("req/rep peer", nng_strerror(rv));
  if (pthread_create(&th, NULL, echo_main, &rep)) return fail("req/rep peer", "pthread_create");
  size_t fb = add_frame_bytes();
  uint8_t msg[256] = {0}, back[256];
  bool ok = true;
  /* One round: CHAIN blocking round trips, each echoing fb bytes. */
#define REQREP_ROUND()                                                      \
  for (int i = 0; i < CHAIN && ok; i++) {                                   \
    size_t bn = sizeof back;                                                \
    msg[0] = (uint8_t)i;                                                    \
    ok = !nng_send(req, msg, fb, 0) && !nng_recv(req, back, &bn, 0) &&      \
         bn == fb && back[0] == (uint8_t)i;                                 \
  }
  REQREP_ROUND();   /* warm */
  for (int r = 0; r < reps && ok; r++) {
    double t0 = now_ns();
    for (int k = 0; k < iters && ok; k++) ok = chain_once(a, out);
    t->chain[r] = (now_ns() - t0) / iters;
    if (!ok) break;
    t0 = now_ns();
    for (int k = 0; k < iters && ok; k++) REQREP_ROUND();
    t->reqrep[r] = (now_ns() - t0) / iters;
  }
#undef REQREP_ROUND
  nng_close(req);
  nng_close(rep);
  pthread_join(th, NULL);
  bext_release(a);
  printf("%-20s an add's frame is %zu bytes; req/rep echoes that many per round trip\n", "", fb);
  return ok ? 1 : fail("remote_chain_100", bext_last_error());
}

static int bulk_rows(int reps, const bext_device *d, struct bxbt_remote_times *t) {
  const int64_t n = (int64_t)(BULK / sizeof(float));
  float *src = malloc(BULK), *dst = malloc(BULK);
  struct tcp_peer p = {0};
  if (!src || !dst || !tcp_peer_start(&p)) return fail("remote bulk rows", "setup (memory or sockets)");
  for (int64_t i = 0; i < n; i++) src[i] = (float)(i % 9973) * 0.5f;
  memset(dst, 0, BULK);
  int rc = 1;
  /* untimed: an upload read back equals what went up */
  bext_tensor *r = bext_from_data(src, BEXT_F32, &n, 1, d);
  if (!r || !bext_read(r, dst, BULK) || memcmp(src, dst, BULK)) {
    rc = fail("remote_upload_64M", r ? "the upload read back different bytes" : bext_last_error());
    goto out;
  }
  /* untimed: the plain copy carries the same bytes both ways */
  memset(dst, 0, BULK);
  if (!send_all(p.fd, "U", 1) || !send_all(p.fd, src, BULK) || !recv_all(p.fd, dst, 1) || !send_all(p.fd, "D", 1) ||
      !recv_all(p.fd, dst, BULK) || memcmp(src, dst, BULK)) {
    rc = fail("plain TCP peer", "the copy lost bytes");
    goto out;
  }
  for (int k = 0; k < reps && rc > 0; k++) {
    double t0 = now_ns();
    bext_tensor *u = bext_from_data(src, BEXT_F32, &n, 1, d);
    bool ok = u && bext_sync(d);
    t->up[k] = now_ns() - t0;
    bext_release(u);
    t0 = now_ns();
    ok = ok && send_all(p.fd, "U", 1) && send_all(p.fd, src, BULK) && recv_all(p.fd, dst, 1);
    t->tcp_up[k] = now_ns() - t0;
    t0 = now_ns();
    ok = ok && bext_read(r, dst, BULK);
    t->down[k] = now_ns() - t0;
    t0 = now_ns();
    ok = ok && send_all(p.fd, "D", 1) && recv_all(p.fd, dst, BULK);
    t->tcp_down[k] = now_ns() - t0;
    if (!ok) rc = fail("remote bulk rows", bext_last_error());
  }
out:
  bext_release(r);
  tcp_peer_stop(&p);
  free(src);
  free(dst);
  return rc;
}

int bxbt_remote_times(int reps, bool chain, bool bulk, struct bxbt_remote_times *t) {
  /* The server is the one built next to this program. */
  if (!getenv("BEXT_BIN_DIR")) {
    char exe[4096];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0) return fail("bext-server", "cannot find this program's directory");
    exe[k] = 0;
    setenv("BEXT_BIN_DIR", dirname(exe), 1);
  }
  struct rh_server srv;
  if (!rh_start_tcp(&srv, "flex", (const char *const[]){"--quiet", NULL})) return fail("bext-server", srv.err);
  const bext_device *d = bext_device_get(srv.spec);
  int rc = d ? 1 : fail(srv.spec, bext_last_error());
  if (rc > 0 && chain) rc = chain_rows(reps, d, t);
  if (rc > 0 && bulk) rc = bulk_rows(reps, d, t);
  if (d) bext_device_close(d);
  rh_stop(&srv, SIGTERM);
  return rc;
}
#endif
