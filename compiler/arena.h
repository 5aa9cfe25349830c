/* arena.h — bump allocator owning everything a compilation builds.
 *
 * AST nodes, decoded strings, types and symbols of one compilation live in
 * one arena and die together (bxc_arena_free_all), so the front end never
 * frees individual nodes.
 *
 * Allocation failure goes to bxc_oom.  With no recovery point that aborts:
 * a one-shot compiler that has run out of memory cannot report anything
 * useful.  A long-lived process (the language server, workspace.h) pushes
 * a recovery point around a load and check; bxc_oom then longjmps there,
 * and since everything the front end built lives in the unit's arena and
 * sources, freeing the unit reclaims it (parse.c frees its Lemon parser on
 * the way).  An arena may also carry a byte limit, past which allocation
 * fails the same way: tests inject failures with it and the server bounds
 * what one document may cost. */
#ifndef BXC_ARENA_H
#define BXC_ARENA_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

typedef struct bxc_arena_block bxc_arena_block;

typedef struct bxc_arena {
    bxc_arena_block *head;  /* newest block first */
    size_t total;           /* bytes handed out, for statistics/limits */
    size_t limit;           /* total may not pass this (0: no limit) */
} bxc_arena;

/* Where an allocation failure lands instead of abort().  Push one, then
 * `if (setjmp(p.env)) { failure path }`, and pop it when done; bxc_oom
 * pops it before jumping.  Points nest (per thread). */
typedef struct bxc_oom_point {
    jmp_buf env;
    struct bxc_oom_point *prev;
} bxc_oom_point;
void bxc_oom_push(bxc_oom_point *p);
void bxc_oom_pop(bxc_oom_point *p);
/* Allocation of n bytes failed: longjmp to the innermost point, else
 * print and abort.  n == 0 passes the last failure on (after cleanup). */
_Noreturn void bxc_oom(size_t n);

/* A zero-initialized arena is valid; init is for clarity. */
void bxc_arena_init(bxc_arena *a);
/* Zero-filled, 16-byte aligned memory; never NULL (bxc_oom on failure). */
void *bxc_arena_alloc(bxc_arena *a, size_t size);
char *bxc_arena_strdup(bxc_arena *a, const char *s);
char *bxc_arena_strndup(bxc_arena *a, const char *s, size_t n);
char *bxc_arena_printf(bxc_arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
char *bxc_arena_vprintf(bxc_arena *a, const char *fmt, va_list ap);
/* The strings up to a NULL, concatenated: what "%s_%s" would give, without
 * a formatting pass (C names are built by the ten thousand per unit). */
char *bxc_arena_join(bxc_arena *a, ...) __attribute__((sentinel));
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
