/* arena.h — bump allocator owning everything a compilation builds.
 *
 * AST nodes, decoded strings, types and symbols of one compilation live in
 * one arena and die together (bxc_arena_free_all), so the front end never
 * frees individual nodes.  Allocation failure aborts: a compiler that has
 * run out of memory cannot report anything useful. */
#ifndef BXC_ARENA_H
#define BXC_ARENA_H

#include <stdarg.h>
#include <stddef.h>

typedef struct bxc_arena_block bxc_arena_block;

typedef struct bxc_arena {
    bxc_arena_block *head;  /* newest block first */
    size_t total;           /* bytes handed out, for statistics/limits */
} bxc_arena;

/* A zero-initialized arena is valid; init is for clarity. */
void bxc_arena_init(bxc_arena *a);
/* Zero-filled, 16-byte aligned memory; never NULL (aborts on OOM). */
void *bxc_arena_alloc(bxc_arena *a, size_t size);
char *bxc_arena_strdup(bxc_arena *a, const char *s);
char *bxc_arena_strndup(bxc_arena *a, const char *s, size_t n);
char *bxc_arena_printf(bxc_arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
char *bxc_arena_vprintf(bxc_arena *a, const char *fmt, va_list ap);
/* Releases every block; the arena is empty and reusable afterwards. */
void bxc_arena_free_all(bxc_arena *a);

/* Growable typed list in an arena: any struct { T *items; uint32_t len, cap; }.
 * Growth copies into a fresh block (the old one is reclaimed with the arena). */
#define BXC_LIST_PUSH(arena, list, item)                                      \
    do {                                                                      \
        if ((list)->len == (list)->cap) {                                     \
            uint32_t nc_ = (list)->cap ? (list)->cap * 2 : 4;                 \
            void *ni_ = bxc_arena_alloc((arena), nc_ * sizeof *(list)->items);\
            if ((list)->len)                                                  \
                memcpy(ni_, (list)->items, (list)->len * sizeof *(list)->items);\
            (list)->items = ni_;                                              \
            (list)->cap = nc_;                                                \
        }                                                                     \
        (list)->items[(list)->len++] = (item);                                \
    } while (0)

#endif
