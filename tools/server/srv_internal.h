/* srv_internal.h — what sessions (srv_session.c) ask of the server that
 * owns them (srv_server.c): logging and the server-wide counters. */
#ifndef BXSV_INTERNAL_H
#define BXSV_INTERNAL_H

#include "server.h"

/* One line to cfg->log, if any. */
BXR_FUNC void bxsv_log(const struct bxsv_config *cfg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A session's live tensors and bytes changed by these amounts. */
BXR_FUNC void bxsv_count(struct bxsv_server *srv, int64_t tensors, int64_t bytes);
/* A session was closed for breaking the protocol. */
BXR_FUNC void bxsv_count_refused(struct bxsv_server *srv);

#endif /* BXSV_INTERNAL_H */
