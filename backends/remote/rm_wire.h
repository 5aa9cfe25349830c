/* rm_wire.h — the remote protocol's frames, shared by the Remote backend
 * (the client, in libbext) and bext-server (tools/server): the frame
 * header, the limits both ends agree on, a growable output buffer that
 * batches frames, and blocking stream I/O with timeouts over nng.
 *
 * A frame is a 12-byte header — u32 LE length of the control message, u64
 * LE length of the raw part — then the control message (protobuf-c,
 * bext_remote.proto), then the raw bytes (tensor data).  One nng byte
 * stream per session (nng_stream over tcp:// or ipc://), not a socket
 * pattern: a session is exactly one connection, so a dropped connection
 * ends the session and nothing reconnects behind the client's back (the
 * socket patterns' automatic redial would attach the client to a fresh,
 * empty session).  Frames stream in both directions without waiting;
 * only reads, syncs and stats wait for their reply, which comes back in
 * order on the same stream.  docs/remote.md is the reference. */
#ifndef BXRM_WIRE_H
#define BXRM_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>

#include "backend.h"

#include "bext_remote.pb-c.h"

#define BXRM_PROTOCOL_VERSION 1u
#define BXRM_HEADER_BYTES 12
/* Control messages are small (an op is ~30-100 bytes); anything larger is
 * refused before it is read. */
#define BXRM_MAX_CONTROL ((uint32_t)1 << 20)
/* Tokens (--token-file, BEXT_REMOTE_TOKEN) are at most this long. */
#define BXRM_MAX_TOKEN 256
/* The server's default limits (flags override them; docs/remote.md). */
#define BXRM_DEFAULT_MAX_FRAME ((uint64_t)1 << 30)       /* raw bytes in one frame */
#define BXRM_DEFAULT_MAX_TENSORS ((uint64_t)1 << 20)     /* live ids per session */
#define BXRM_DEFAULT_MAX_BYTES ((uint64_t)16 << 30)      /* live tensor bytes per session */
#define BXRM_DEFAULT_MAX_SESSIONS 64
/* Sessions one client (a TCP peer's IP address, an ipc peer's user id)
 * may hold at once: half the session limit, so one address alone cannot
 * take every session. */
#define BXRM_DEFAULT_MAX_CONNS_PER_CLIENT 32
/* An op names at most this many inputs (cat's list). */
#define BXRM_MAX_OP_INPUTS 1024
/* An ExtCall's / ExtFind's trait and op id: at most this many bytes each. */
#define BXRM_MAX_EXT_NAME 128

struct bxrm_header {
  uint32_t ctl;   /* control message bytes */
  uint64_t raw;   /* raw bytes after it */
};

static inline void bxrm_header_put(uint8_t *p, uint32_t ctl, uint64_t raw) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(ctl >> (8 * i));
  for (int i = 0; i < 8; i++) p[4 + i] = (uint8_t)(raw >> (8 * i));
}
static inline struct bxrm_header bxrm_header_get(const uint8_t *p) {
  struct bxrm_header h = {0, 0};
  for (int i = 0; i < 4; i++) h.ctl |= (uint32_t)p[i] << (8 * i);
  for (int i = 0; i < 8; i++) h.raw |= (uint64_t)p[4 + i] << (8 * i);
  return h;
}

/* Bytes waiting to be sent: frames are appended here and written in one
 * go when the buffer fills or the client waits for a reply. */
struct bxrm_buf {
  uint8_t *p;
  size_t len, cap;
};
/* Appends the header and packed message m (a Request or Reply) that
 * announce `raw` raw bytes (the caller sends those itself).  False on
 * allocation failure. */
BXR_FUNC bool bxrm_buf_frame(struct bxrm_buf *b, const ProtobufCMessage *m, uint64_t raw);
BXR_FUNC void bxrm_buf_free(struct bxrm_buf *b);

/* One end of a session: the stream and one aio for each direction (a
 * sender and a receiver may run on different threads). */
struct bxrm_io {
  nng_stream *s;
  nng_aio *rx, *tx;
  /* nng aborts an operation pending when the stream closes, but one
   * started after the close waits for its timeout (forever between
   * frames): starting an operation and closing take this lock, and no
   * operation starts once `closed` is set. */
  pthread_mutex_t mu;
  bool closed;
};
/* Allocates the aios; false when nng cannot. */
BXR_FUNC bool bxrm_io_init(struct bxrm_io *io, nng_stream *s);
/* Closes the stream (aborting any pending read or write on it). */
BXR_FUNC void bxrm_io_close(struct bxrm_io *io);
/* Frees what bxrm_io_init made and the stream. */
BXR_FUNC void bxrm_io_fini(struct bxrm_io *io);
/* Reads or writes exactly n bytes; each wait is bounded by timeout_ms
 * (NNG_DURATION_INFINITE: none).  0, or nng's error (NNG_ECLOSED for an
 * end of stream, NNG_ETIMEDOUT, ...). */
BXR_FUNC int bxrm_io_read(struct bxrm_io *io, void *buf, size_t n, nng_duration timeout_ms);
BXR_FUNC int bxrm_io_write(struct bxrm_io *io, const void *buf, size_t n, nng_duration timeout_ms);
/* Reads through a buffer (a session's reader, one thread): a small read
 * (a frame header, a control message) takes what has arrived, up to
 * BXRM_READ_AHEAD bytes, in one receive, so a stream of small frames
 * costs one receive per batch instead of two per frame; a large one (tensor
 * bytes), once the buffer is drained, goes straight to its destination.
 * The same results as bxrm_io_read. */
#define BXRM_READ_AHEAD ((size_t)64 << 10)
struct bxrm_reader {
  uint8_t *p;        /* BXRM_READ_AHEAD bytes, allocated on first use */
  size_t pos, len;   /* p[pos..len) arrived and not yet read */
};
BXR_FUNC int bxrm_io_read_buffered(struct bxrm_io *io, struct bxrm_reader *r, void *buf, size_t n,
                                   nng_duration timeout_ms);
BXR_FUNC void bxrm_reader_free(struct bxrm_reader *r);
/* Writes two pieces with one gathered send when possible (a header and
 * the raw bytes of an upload, without copying them together). */
BXR_FUNC int bxrm_io_write2(struct bxrm_io *io, const void *a, size_t an, const void *b, size_t bn,
                            nng_duration timeout_ms);

/* Dials or listens at a "tcp://host:port" / "ipc:///path" address. */
BXR_FUNC int bxrm_dial(const char *addr, nng_duration timeout_ms, nng_stream **out);

/* Constant-time equality of two tokens (the server's check). */
BXR_FUNC bool bxrm_token_equal(const uint8_t *a, size_t an, const uint8_t *b, size_t bn);

#endif /* BXRM_WIRE_H */
