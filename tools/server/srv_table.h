/* srv_table.h — a session's tensors by id (srv_table.c): open addressing
 * over client-chosen 64-bit ids (never 0), each entry a tensor or the
 * failure that stopped it being made (a deferred error). */
#ifndef BXSV_TABLE_H
#define BXSV_TABLE_H

#include "backend.h"

struct bxsv_entry {
  uint64_t id;                 /* 0: empty slot */
  bext_tensor *t;              /* NULL: failed, see err */
  char *err;                   /* malloc'ed message of a failed op */
  uint64_t bytes;              /* what it counts against the byte limit */
};

struct bxsv_table {
  struct bxsv_entry *e;
  size_t cap, n;               /* cap: a power of two (0: nothing yet) */
};

/* The entry of id, or NULL. */
BXR_FUNC struct bxsv_entry *bxsv_table_find(struct bxsv_table *tb, uint64_t id);
/* A new entry for id (absent: the caller checked); NULL on allocation failure. */
BXR_FUNC struct bxsv_entry *bxsv_table_add(struct bxsv_table *tb, uint64_t id);
/* Removes the entry (its tensor and message are the caller's to free). */
BXR_FUNC void bxsv_table_remove(struct bxsv_table *tb, struct bxsv_entry *e);
BXR_FUNC void bxsv_table_free(struct bxsv_table *tb);

#endif /* BXSV_TABLE_H */
