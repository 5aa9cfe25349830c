/* count_layer.h — a test-only decorator layer, "+count": it wraps any
 * registered backend without any change to it, forwards every core op,
 * data movement and extension op to the device it wraps, and counts core
 * ops (per opcode) and extension ops (per method id) separately.  It is
 * transparent to routing (a trait need not list it), so every sample
 * extension runs through it unchanged: the proof that a decorator sees
 * extension ops exactly like core ops.  Tensors on "flex+count" are
 * handles with opaque storage holding the inner flex tensor. */
#ifndef BEXT_TEST_COUNT_LAYER_H
#define BEXT_TEST_COUNT_LAYER_H

#include <stdbool.h>
#include <stdint.h>

#include <bext/bext.h>

/* Registers the layer (idempotent); false + error on failure. */
bool count_layer_register(void);
/* The same decorator registered as a layer routing DOES see, under
 * another name: a trait that does not list it panics naming it. */
bool count_layer_register_opaque(const char *name);
/* The counting layer under another name at a given depth (backend.h:
 * 1 sits where +fusion does, inside +autodiff); transparent. */
bool count_layer_register_at(const char *name, int depth);
/* Core ops seen, per opcode (opcode < count_ops()), and in total. */
int count_ops(void);
uint64_t count_core(int opcode);
uint64_t count_core_total(void);
/* Extension ops seen, in total and for one id. */
uint64_t count_custom_total(void);
uint64_t count_custom(const char *id);
/* Data movements (from_data, read) seen. */
uint64_t count_moves(void);
void count_reset(void);

#endif
