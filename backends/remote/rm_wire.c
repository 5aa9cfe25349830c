/* rm_wire.c — frames and stream I/O of the remote protocol (rm_wire.h),
 * shared by the Remote backend and bext-server. */
#include "rm_wire.h"

#include <stdlib.h>
#include <string.h>

bool bxrm_buf_frame(struct bxrm_buf *b, const ProtobufCMessage *m, uint64_t raw) {
  size_t n = protobuf_c_message_get_packed_size(m);
  if (n > BXRM_MAX_CONTROL) return false;
  size_t need = b->len + BXRM_HEADER_BYTES + n;
  if (need > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < need) cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p) return false;
    b->p = p;
    b->cap = cap;
  }
  bxrm_header_put(b->p + b->len, (uint32_t)n, raw);
  protobuf_c_message_pack(m, b->p + b->len + BXRM_HEADER_BYTES);
  b->len = need;
  return true;
}

void bxrm_buf_free(struct bxrm_buf *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

bool bxrm_io_init(struct bxrm_io *io, nng_stream *s) {
  io->s = s;
  io->rx = io->tx = NULL;
  io->closed = false;
  pthread_mutex_init(&io->mu, NULL);
  if (nng_aio_alloc(&io->rx, NULL, NULL) || nng_aio_alloc(&io->tx, NULL, NULL)) {
    if (io->rx) nng_aio_free(io->rx);
    pthread_mutex_destroy(&io->mu);
    io->rx = NULL;
    io->s = NULL;   /* the caller still owns the stream */
    return false;
  }
  return true;
}

void bxrm_io_close(struct bxrm_io *io) {
  if (!io->s) return;
  pthread_mutex_lock(&io->mu);
  io->closed = true;
  nng_stream_close(io->s);
  pthread_mutex_unlock(&io->mu);
}

void bxrm_io_fini(struct bxrm_io *io) {
  if (io->s) {
    bxrm_io_close(io);
    if (io->rx) nng_aio_free(io->rx);
    if (io->tx) nng_aio_free(io->tx);
    nng_stream_free(io->s);
    pthread_mutex_destroy(&io->mu);
  }
  memset(io, 0, sizeof *io);
}

/* One send or receive on the stream, bounded by the timeout: *count
 * bytes moved (at least 1; 0 is the end of the stream, NNG_ECLOSED). */
static int one_op(struct bxrm_io *io, bool send, nng_iov *iov, unsigned niov, nng_duration timeout_ms,
                  size_t *count) {
  nng_aio *aio = send ? io->tx : io->rx;
  if (nng_aio_set_iov(aio, niov, iov)) return NNG_ENOMEM;
  nng_aio_set_timeout(aio, timeout_ms);
  pthread_mutex_lock(&io->mu);
  bool closed = io->closed;
  if (!closed) {
    if (send) nng_stream_send(io->s, aio);
    else nng_stream_recv(io->s, aio);
  }
  pthread_mutex_unlock(&io->mu);
  if (closed) return NNG_ECLOSED;
  nng_aio_wait(aio);
  int rv = nng_aio_result(aio);
  if (rv) return rv;
  *count = nng_aio_count(aio);
  return *count ? 0 : NNG_ECLOSED;   /* end of stream */
}

/* One direction, exactly n bytes over as many partial transfers as the
 * stream needs, each bounded by the timeout. */
static int transfer(struct bxrm_io *io, bool send, nng_iov *iov, unsigned niov, nng_duration timeout_ms) {
  while (niov > 0) {
    size_t k;
    int rv = one_op(io, send, iov, niov, timeout_ms, &k);
    if (rv) return rv;
    while (niov > 0 && k >= iov[0].iov_len) {
      k -= iov[0].iov_len;
      iov++;
      niov--;
    }
    if (niov > 0) {
      iov[0].iov_buf = (uint8_t *)iov[0].iov_buf + k;
      iov[0].iov_len -= k;
    }
  }
  return 0;
}

int bxrm_io_read_buffered(struct bxrm_io *io, struct bxrm_reader *r, void *buf, size_t n, nng_duration timeout_ms) {
  uint8_t *dst = buf;
  while (n > 0) {
    if (r->pos < r->len) {
      size_t k = r->len - r->pos < n ? r->len - r->pos : n;
      memcpy(dst, r->p + r->pos, k);
      r->pos += k, dst += k, n -= k;
      continue;
    }
    /* Drained: a large read (tensor bytes) goes straight to its place. */
    if (n >= BXRM_READ_AHEAD) return bxrm_io_read(io, dst, n, timeout_ms);
    if (!r->p && !(r->p = malloc(BXRM_READ_AHEAD))) return NNG_ENOMEM;
    nng_iov iov = {.iov_buf = r->p, .iov_len = BXRM_READ_AHEAD};
    size_t got;
    int rv = one_op(io, false, &iov, 1, timeout_ms, &got);
    if (rv) return rv;
    r->pos = 0, r->len = got;
  }
  return 0;
}

void bxrm_reader_free(struct bxrm_reader *r) {
  free(r->p);
  memset(r, 0, sizeof *r);
}

int bxrm_io_read(struct bxrm_io *io, void *buf, size_t n, nng_duration timeout_ms) {
  if (n == 0) return 0;
  nng_iov iov = {.iov_buf = buf, .iov_len = n};
  return transfer(io, false, &iov, 1, timeout_ms);
}

int bxrm_io_write(struct bxrm_io *io, const void *buf, size_t n, nng_duration timeout_ms) {
  if (n == 0) return 0;
  nng_iov iov = {.iov_buf = (void *)buf, .iov_len = n};
  return transfer(io, true, &iov, 1, timeout_ms);
}

int bxrm_io_write2(struct bxrm_io *io, const void *a, size_t an, const void *b, size_t bn,
                   nng_duration timeout_ms) {
  nng_iov iov[2];
  unsigned n = 0;
  if (an) iov[n++] = (nng_iov){.iov_buf = (void *)a, .iov_len = an};
  if (bn) iov[n++] = (nng_iov){.iov_buf = (void *)b, .iov_len = bn};
  return n ? transfer(io, true, iov, n, timeout_ms) : 0;
}

int bxrm_dial(const char *addr, nng_duration timeout_ms, nng_stream **out) {
  nng_stream_dialer *d = NULL;
  nng_aio *aio = NULL;
  *out = NULL;
  int rv = nng_stream_dialer_alloc(&d, addr);
  if (rv) return rv;
  if ((rv = nng_aio_alloc(&aio, NULL, NULL))) {
    nng_stream_dialer_free(d);
    return rv;
  }
  nng_aio_set_timeout(aio, timeout_ms);
  nng_stream_dialer_dial(d, aio);
  nng_aio_wait(aio);
  rv = nng_aio_result(aio);
  if (!rv) {
    *out = nng_aio_get_output(aio, 0);
    /* Small frames (an op) go out at once: the batching is ours. */
    nng_stream_set_bool(*out, NNG_OPT_TCP_NODELAY, true);
  }
  nng_aio_free(aio);
  nng_stream_dialer_free(d);
  return rv;
}

bool bxrm_token_equal(const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
  /* Every byte of the longer one is looked at whatever the contents, so
   * the time says nothing about where they differ. */
  size_t n = an > bn ? an : bn;
  volatile unsigned diff = (unsigned)(an != bn);
  for (size_t i = 0; i < n; i++) {
    unsigned x = i < an ? a[i] : 0, y = i < bn ? b[i] : 0;
    diff |= x ^ y;
  }
  return diff == 0;
}
