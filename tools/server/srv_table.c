/* srv_table.c — a session's id table (srv_table.h): linear probing with
 * backward-shift deletion, so no tombstones pile up in a long session
 * that makes and frees millions of ids. */
#include "srv_table.h"

#include <stdlib.h>

static size_t slot(uint64_t id, size_t cap) {
  /* ids are sequential: mix them so neighbours do not cluster */
  id ^= id >> 33;
  id *= 0xff51afd7ed558ccdULL;
  id ^= id >> 33;
  return (size_t)id & (cap - 1);
}

struct bxsv_entry *bxsv_table_find(struct bxsv_table *tb, uint64_t id) {
  if (!tb->cap || id == 0) return NULL;
  for (size_t i = slot(id, tb->cap);; i = (i + 1) & (tb->cap - 1)) {
    if (tb->e[i].id == id) return &tb->e[i];
    if (tb->e[i].id == 0) return NULL;
  }
}

static bool grow(struct bxsv_table *tb) {
  size_t cap = tb->cap ? tb->cap * 2 : 64;
  struct bxsv_entry *e = calloc(cap, sizeof *e);
  if (!e) return false;
  for (size_t k = 0; k < tb->cap; k++) {
    if (!tb->e[k].id) continue;
    size_t i = slot(tb->e[k].id, cap);
    while (e[i].id) i = (i + 1) & (cap - 1);
    e[i] = tb->e[k];
  }
  free(tb->e);
  tb->e = e;
  tb->cap = cap;
  return true;
}

struct bxsv_entry *bxsv_table_add(struct bxsv_table *tb, uint64_t id) {
  if ((tb->n + 1) * 2 > tb->cap && !grow(tb)) return NULL;   /* load <= 1/2 */
  size_t i = slot(id, tb->cap);
  while (tb->e[i].id) i = (i + 1) & (tb->cap - 1);
  tb->e[i] = (struct bxsv_entry){.id = id};
  tb->n++;
  return &tb->e[i];
}

void bxsv_table_remove(struct bxsv_table *tb, struct bxsv_entry *e) {
  size_t mask = tb->cap - 1, i = (size_t)(e - tb->e);
  /* Shift later members of the probe run back into the hole. */
  for (size_t j = (i + 1) & mask; tb->e[j].id; j = (j + 1) & mask) {
    size_t home = slot(tb->e[j].id, tb->cap);
    /* j's entry may move to i when its home is not in (i, j] cyclically */
    bool between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
    if (!between) {
      tb->e[i] = tb->e[j];
      i = j;
    }
  }
  tb->e[i] = (struct bxsv_entry){0};
  tb->n--;
}

void bxsv_table_free(struct bxsv_table *tb) {
  free(tb->e);
  *tb = (struct bxsv_table){0};
}
