/* kir_internal.h — what the kernel IR's own files share (arena, limits). */
#ifndef KIR_INTERNAL_H
#define KIR_INTERNAL_H

#include "bxk.h"

/* Deepest nesting of blocks any pass accepts (recursion bound: the
 * deserializer rejects deeper input, the verifier reports it). */
#define BXK_MAX_DEPTH 64
/* Value ids past this are not tracked by the builder's type table. */
#define BXK_MAX_VALUES (1u << 24)

/* Zeroed, 16-byte aligned memory that lives as long as k; NULL (and k->oom
 * set) when out of memory. */
BXK_FUNC void *bxk_arena_alloc(struct bxk_kernel *k, size_t n);
BXK_FUNC bool bxk_arena_grow(struct bxk_kernel *k, void **arr, uint32_t n, uint32_t *cap,
                             size_t elem);

#endif
