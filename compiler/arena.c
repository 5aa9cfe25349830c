/* arena.c — bump allocator for one compilation (see arena.h). */
#include "arena.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bxc_arena_block {
    bxc_arena_block *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
};

#define BXC_ARENA_BLOCK 65536u

void bxc_arena_init(bxc_arena *a) {
    a->head = NULL;
    a->total = 0;
    a->limit = 0;
}

static _Thread_local bxc_oom_point *oom_top;

void bxc_oom_push(bxc_oom_point *p) {
    p->prev = oom_top;
    oom_top = p;
}

void bxc_oom_pop(bxc_oom_point *p) {
    if (oom_top == p) oom_top = p->prev;
}

/* The size of the allocation that failed, for a rethrow (bxc_oom(0), as
 * parse.c does after freeing its parser) to report. */
static _Thread_local size_t oom_size;

_Noreturn void bxc_oom(size_t n) {
    if (n) oom_size = n;
    else n = oom_size;
    bxc_oom_point *p = oom_top;
    if (p) {
        oom_top = p->prev;
        longjmp(p->env, 1);
    }
    /* Out of memory: nothing sensible can be reported through diagnostics,
     * which themselves allocate. */
    fprintf(stderr, "bextc: out of memory (allocating %zu bytes)\n", n);
    abort();
}

/* Room for `size` bytes, not cleared: for callers that write every byte. */
static void *arena_alloc_raw(bxc_arena *a, size_t size) {
    size_t need = (size + 15u) & ~(size_t)15u;
    if (need < size) bxc_oom(size);
    if (a->limit && (need > a->limit || a->total > a->limit - need)) bxc_oom(size);
    bxc_arena_block *b = a->head;
    if (!b || b->size - b->used < need) {
        size_t bsize = need > BXC_ARENA_BLOCK / 4 ? need : BXC_ARENA_BLOCK;
        b = malloc(sizeof *b + bsize);
        if (!b) bxc_oom(size);
        b->size = bsize;
        b->used = 0;
        if (bsize != BXC_ARENA_BLOCK && a->head) {
            /* A big one-off block goes behind the current head so the
             * head's free space stays usable. */
            b->next = a->head->next;
            a->head->next = b;
        } else {
            b->next = a->head;
            a->head = b;
        }
    }
    void *p = b->data + b->used;
    b->used += need;
    a->total += need;
    return p;
}

void *bxc_arena_alloc(bxc_arena *a, size_t size) {
    void *p = arena_alloc_raw(a, size);
    memset(p, 0, size);
    return p;
}

char *bxc_arena_strndup(bxc_arena *a, const char *s, size_t n) {
    char *p = arena_alloc_raw(a, n + 1);
    if (n) memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *bxc_arena_strdup(bxc_arena *a, const char *s) {
    return bxc_arena_strndup(a, s, strlen(s));
}

char *bxc_arena_vprintf(bxc_arena *a, const char *fmt, va_list ap) {
    /* Format straight into the head block's free space: one formatting
     * pass instead of two in the common case (the code generator builds
     * most of its text this way). */
    bxc_arena_block *b = a->head;
    if (b && b->size > b->used) {
        size_t room = b->size - b->used;
        char *p = (char *)b->data + b->used;
        va_list ap2;
        va_copy(ap2, ap);
        int n = vsnprintf(p, room, fmt, ap2);
        va_end(ap2);
        if (n < 0) n = 0;
        size_t need = ((size_t)n + 1 + 15u) & ~(size_t)15u;
        if (need <= room) {
            /* It fit, rounding included: claim exactly those bytes (the
             * bump allocator hands out the head's free space first). */
            b->used += need;
            a->total += need;
            return p;
        }
    }
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) n = 0;
    char *p = arena_alloc_raw(a, (size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    return p;
}

char *bxc_arena_printf(bxc_arena *a, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *p = bxc_arena_vprintf(a, fmt, ap);
    va_end(ap);
    return p;
}

void bxc_arena_free_all(bxc_arena *a) {
    bxc_arena_block *b = a->head;
    while (b) {
        bxc_arena_block *n = b->next;
        free(b);
        b = n;
    }
    a->head = NULL;
    a->total = 0;   /* the limit stays */
}

char *bxc_arena_join(bxc_arena *a, ...) {
    va_list ap;
    va_start(ap, a);
    size_t n = 0;
    for (const char *s = va_arg(ap, const char *); s; s = va_arg(ap, const char *)) n += strlen(s);
    va_end(ap);
    char *out = bxc_arena_alloc(a, n + 1), *w = out;
    va_start(ap, a);
    for (const char *s = va_arg(ap, const char *); s; s = va_arg(ap, const char *)) {
        size_t k = strlen(s);
        memcpy(w, s, k);
        w += k;
    }
    va_end(ap);
    *w = '\0';
    return out;
}
