/* rm_client.h — the client end of a remote session (rm_client.c), used by
 * the Remote backend's vtable (rm_backend.c): one connection per device
 * instance, frames batched in an output buffer and sent without waiting,
 * requests that wait for their reply, and the "session lost" state every
 * later call reports. */
#ifndef BXRM_CLIENT_H
#define BXRM_CLIENT_H

#include "rm_wire.h"

struct bxrm_conn {
  struct bxrm_io io;
  pthread_mutex_t mu;         /* guards everything below and the stream */
  struct bxrm_buf out;        /* frames not yet written */
  uint64_t next_id;           /* ids are the client's: outputs exist at once */
  uint64_t *rel;              /* released ids not yet announced */
  size_t nrel, relcap;
  bool lost;                  /* the session is over: every call fails with why */
  char why[400];
  atomic_int refs;            /* the device's + one per live handle */
  nng_duration timeout;       /* bound on every wait (BEXT_REMOTE_TIMEOUT_MS) */
  char address[96];           /* "tcp://host:port": for messages */
  char server_device[128];    /* the device the server hosts (Welcome) */
  uint64_t session, max_frame;
  bool extensions;            /* the server runs extension ops (Welcome) */
  bool ext_values;            /* ... and carries results that are values (Welcome) */
  const void **ext_known;     /* extension methods the server said it runs */
  size_t n_ext, ext_cap;
};

/* A remote tensor's storage priv: the session and the server-side id. */
struct bxrm_ref {
  struct bxrm_conn *c;
  uint64_t id;
};

/* Dials addr and runs the handshake; NULL + error (naming addr) on failure. */
BXR_FUNC struct bxrm_conn *bxrm_conn_open(const char *addr);
/* Drops one reference; the last one closes the stream and frees. */
BXR_FUNC void bxrm_conn_unref(struct bxrm_conn *c);
/* Ends the session from the client's side (device close): later calls on
 * its handles fail with "remote session lost". */
BXR_FUNC void bxrm_conn_shutdown(struct bxrm_conn *c);

/* A fresh id for a result, under c->mu (the caller holds it). */
static inline uint64_t bxrm_conn_new_id(struct bxrm_conn *c) { return ++c->next_id; }

/* Queues one frame (fire and forget).  raw/raw_len: the raw part
 * (uploads), written straight from the caller's memory.  Holds c->mu
 * itself unless `locked`.  False + error (naming api) when the session is
 * lost or the write fails. */
BXR_FUNC bool bxrm_conn_send(struct bxrm_conn *c, const char *api, const Bxrm__Request *req, const void *raw,
                             uint64_t raw_len, bool locked);
/* Sends req and everything queued, then waits for the reply (c->mu held
 * throughout, so replies pair with requests).  *reply must be freed with
 * bxrm__reply__free_unpacked.  When the reply announces raw bytes,
 * raw_for(reply, ctx) says where they go and how many are expected
 * (NULL: a mismatch; the session is then lost, since the stream is out of
 * step).  False + error naming api. */
typedef void *(*bxrm_raw_sink)(const Bxrm__Reply *reply, uint64_t raw, void *ctx);
BXR_FUNC bool bxrm_conn_call(struct bxrm_conn *c, const char *api, const Bxrm__Request *req, Bxrm__Reply **reply,
                             bxrm_raw_sink raw_for, void *ctx);
/* Queues a release of a server-side id no handle holds (a result the
 * client could not take): it joins the next Release frame. */
BXR_FUNC void bxrm_conn_forget(struct bxrm_conn *c, uint64_t id);
/* Frees a handle's ref: its id joins the next Release frame. */
BXR_FUNC void bxrm_ref_free(void *priv);
/* A handle on dev for the server-side id; takes a reference on the
 * session.  NULL + error. */
BXR_FUNC bext_tensor *bxrm_handle_new(struct bext_device *dev, struct bxrm_conn *c, uint64_t id, bext_dtype dt,
                                      int rank, const int64_t *shape);
/* The server-side id of a remote handle. */
static inline uint64_t bxrm_id_of(const bext_tensor *t) { return ((const struct bxrm_ref *)t->storage->priv)->id; }

/* The Remote backend's arm of extension calls (rm_ext.c): the call goes
 * to the server by (trait, id) as an ExtCall.  docs/remote.md. */
BXR_FUNC bool bxrm_ext_exec(struct bext_device *dev, bext_ext_call *call);

#endif /* BXRM_CLIENT_H */
