/* server.h — bext-server's library (prefix bxsv_): a listener hosting one
 * device stack, one session per connection, each with its own table of
 * tensors.  srv_main.c is the program around it; the suite starts it in
 * process too (tests/remote), and the fuzz target drives one session's
 * decoder over memory (tests/fuzz/fuzz_remote.c).
 *
 * Library code never prints: what a session refused and why goes to the
 * config's log callback, one line each. */
#ifndef BXSV_SERVER_H
#define BXSV_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rm_wire.h"

typedef void (*bxsv_log_fn)(void *ctx, const char *line);

struct bxsv_config {
  const char *listen;          /* "tcp://127.0.0.1:7878", "ipc:///run/x.sock"; port 0: any */
  const char *device;          /* the hosted device stack: "flex", "flex+fusion", ... */
  uint64_t max_frame;          /* raw bytes in one frame (an upload) */
  uint64_t max_tensors;        /* live ids per session */
  uint64_t max_bytes;          /* live tensor bytes per session */
  int max_sessions;            /* open sessions at once */
  int max_conns_per_client;    /* open sessions of one peer address (ipc: one user id) */
  int frame_timeout_ms;        /* once a frame has begun, how long the rest may take */
  const uint8_t *token;        /* shared token (NULL: none required) */
  size_t token_len;
  bxsv_log_fn log;             /* NULL: silent */
  void *log_ctx;
};
/* The defaults of bext-server's flags (rm_wire.h's limits). */
BXR_FUNC void bxsv_config_defaults(struct bxsv_config *cfg);

struct bxsv_stats {
  uint64_t sessions;           /* open now */
  uint64_t tensors, bytes;     /* live ids and their bytes, every session */
  uint64_t sessions_total;     /* accepted since start */
  uint64_t sessions_refused;   /* closed for a protocol violation, a bad token or the session limit */
};

struct bxsv_server;
/* Opens the device, listens and accepts on a thread of its own.  NULL +
 * error (bext_last_error) when the device or the address is unusable. */
BXR_FUNC struct bxsv_server *bxsv_start(const struct bxsv_config *cfg);
/* The bound TCP port (useful with port 0), or 0 for ipc. */
BXR_FUNC int bxsv_port(const struct bxsv_server *srv);
BXR_FUNC void bxsv_stats(struct bxsv_server *srv, struct bxsv_stats *st);
/* Stops listening, ends every session (their tensors are freed), joins
 * the threads and frees the server. */
BXR_FUNC void bxsv_stop(struct bxsv_server *srv);

/* ------------------------------------------------------------ sessions */
/* Where a session's bytes come from and go: a stream, or memory (fuzz).
 * read/write return 0 or an nng error; `started` says the read continues
 * a frame (so the frame timeout applies) rather than waiting for one. */
struct bxsv_port {
  void *ctx;
  int (*read)(void *ctx, void *buf, size_t n, bool started);
  int (*write)(void *ctx, const void *buf, size_t n);
};

struct bxsv_session;
/* A session over port on dev; srv may be NULL (counters are then the
 * session's alone).  NULL on allocation failure. */
BXR_FUNC struct bxsv_session *bxsv_session_new(const struct bxsv_config *cfg, struct bext_device *dev,
                                               struct bxsv_server *srv, uint64_t id, struct bxsv_port port);
/* Serves frames until the peer leaves or breaks the protocol; returns the
 * reason the session ended. */
BXR_FUNC const char *bxsv_session_run(struct bxsv_session *s);
/* Frees the session's tensors and the session. */
BXR_FUNC void bxsv_session_free(struct bxsv_session *s);

#endif /* BXSV_SERVER_H */
