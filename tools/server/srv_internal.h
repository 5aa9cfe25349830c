/* srv_internal.h — what sessions (srv_session.c) ask of the server that
 * owns them (srv_server.c): logging and the server-wide counters; and
 * what a session's message handlers share (srv_session.c for core ops,
 * srv_ext.c for extension calls). */
#ifndef BXSV_INTERNAL_H
#define BXSV_INTERNAL_H

#include "server.h"
#include "srv_table.h"

/* One line to cfg->log, if any. */
BXR_FUNC void bxsv_log(const struct bxsv_config *cfg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A session's live tensors and bytes changed by these amounts. */
BXR_FUNC void bxsv_count(struct bxsv_server *srv, int64_t tensors, int64_t bytes);
/* A session was closed for breaking the protocol. */
BXR_FUNC void bxsv_count_refused(struct bxsv_server *srv);

/* ------------------------------------------------------------ sessions */

struct bxsv_session {
  const struct bxsv_config *cfg;
  struct bext_device *dev;
  struct bxsv_server *srv;
  uint64_t id;
  struct bxsv_port port;
  struct bxsv_table tab;
  uint64_t bytes;              /* live bytes of this session */
  bool greeted;
  char *first_error;           /* first deferred failure since the last Sync */
  struct bxrm_buf out;         /* the reply being written */
  uint8_t *ctl;                /* the control message being read */
  size_t ctlcap;
  char why[512];               /* why the session ended */
};

/* Ends the session: remember why, log it, tell the client (Fatal).
 * Returns false so handlers can `return bxsv_fatal(...)`. */
BXR_FUNC bool bxsv_fatal(struct bxsv_session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Sends reply r and `raw` bytes after it; false: the session is over. */
BXR_FUNC bool bxsv_reply(struct bxsv_session *s, const Bxrm__Reply *r, const void *raw, uint64_t raw_len);
/* The session's live tensors and bytes changed by these amounts. */
BXR_FUNC void bxsv_account(struct bxsv_session *s, int64_t tensors, int64_t bytes);
/* A fresh entry for a result id: new, non-zero, within the count limit;
 * NULL after bxsv_fatal.  Entries move when the table grows: find them
 * again by id after it. */
BXR_FUNC struct bxsv_entry *bxsv_fresh(struct bxsv_session *s, uint64_t id, const char *what);
/* Removes entry e: its tensor or message, and its count. */
BXR_FUNC void bxsv_drop(struct bxsv_session *s, struct bxsv_entry *e);
/* Fails entry e with a message (a deferred error); `first`: also the
 * session's first failure for the next Sync, unless one is pending. */
BXR_FUNC void bxsv_fail_entry(struct bxsv_session *s, struct bxsv_entry *e, const char *msg, bool first);

/* Extension calls (srv_ext.c); false: the session is over. */
BXR_FUNC bool bxsv_on_ext_find(struct bxsv_session *s, const Bxrm__ExtFind *f);
BXR_FUNC bool bxsv_on_ext_call(struct bxsv_session *s, const Bxrm__ExtCall *x);

#endif /* BXSV_INTERNAL_H */
