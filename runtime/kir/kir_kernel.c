/* kir_kernel.c — a kernel's arena and declarations, the IR's tables (types,
 * topology builtins, ops, error codes) and the diagnostics list.
 *
 * One arena per kernel: instructions, blocks and declaration arrays are
 * bump-allocated and die together in bxk_kernel_free (a kernel is built
 * once and read many times; nothing is freed on its own). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kir_internal.h"

/* -------------------------------------------------------------- tables */

static const struct { const char *name; uint8_t bits, kind; } type_tab[] = {
#define BXK_X_(E, s, b, k) [BXK_##E] = {#s, b, k},
    BXK_TYPES(BXK_X_)
#undef BXK_X_
};
_Static_assert(sizeof type_tab / sizeof type_tab[0] == BXK_TYPE_COUNT, "one row per type");

const char *bxk_type_name(unsigned t) { return t < BXK_TYPE_COUNT ? type_tab[t].name : "?"; }
unsigned bxk_type_bits(unsigned t) { return t < BXK_TYPE_COUNT ? type_tab[t].bits : 0; }
bool bxk_type_is_float(unsigned t) { return t < BXK_TYPE_COUNT && type_tab[t].kind == 4; }
bool bxk_type_is_int(unsigned t) { return t < BXK_TYPE_COUNT && (type_tab[t].kind == 2 || type_tab[t].kind == 3); }
bool bxk_type_is_signed(unsigned t) { return t < BXK_TYPE_COUNT && type_tab[t].kind == 3; }
bool bxk_type_is_half(unsigned t) { return t == BXK_F16 || t == BXK_BF16; }

static const char *const topo_tab[] = {
#define BXK_X_(E, s) [BXK_TOPO_##E] = #s,
    BXK_TOPOS(BXK_X_)
#undef BXK_X_
};
_Static_assert(sizeof topo_tab / sizeof topo_tab[0] == BXK_TOPO_COUNT, "one row per builtin");

const char *bxk_topo_name(unsigned t) { return t < BXK_TOPO_COUNT ? topo_tab[t] : "?"; }
bool bxk_topo_varies(unsigned t) { return t <= BXK_TOPO_UNIT_POS_Z; /* ABSOLUTE_*, UNIT_* */ }

const struct bxk_opinfo bxk_opinfo[BXK_OP_COUNT] = {
#define BXK_X_(E, s, na, nb, c, im) [BXK_OP_##E] = {#s, na, nb, c, im},
    BXK_OPS(BXK_X_)
#undef BXK_X_
};

static const struct { const char *code, *desc; } err_tab[] = {
#define BXK_X_(E, c, d) [BXK_E_##E] = {#c, d},
    BXK_ERRORS(BXK_X_)
#undef BXK_X_
};
_Static_assert(sizeof err_tab / sizeof err_tab[0] == BXK_ERR_COUNT, "one row per error");
/* A code listed twice is two enumerators of one name: no compile. */
enum bxk_err_unique_ {
#define BXK_X_(E, c, d) BXK_UNIQUE_##c,
    BXK_ERRORS(BXK_X_)
#undef BXK_X_
};

const char *bxk_err_code(unsigned e) { return e < BXK_ERR_COUNT ? err_tab[e].code : "K????"; }
const char *bxk_err_desc(unsigned e) { return e < BXK_ERR_COUNT ? err_tab[e].desc : NULL; }

/* --------------------------------------------------------- diagnostics */

void bxk_diag_add(struct bxk_diags *ds, enum bxk_err e, struct bxk_loc loc, bxk_val v,
                  const char *fmt, ...) {
  if (!ds) return;
  ds->total++;
  if (ds->n >= BXK_MAX_DIAGS) return;
  struct bxk_diag *d = &ds->d[ds->n++];
  d->err = (uint8_t)e;
  d->loc = loc;
  d->val = v;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->msg, sizeof d->msg, fmt, ap);
  va_end(ap);
}

size_t bxk_diags_render(const struct bxk_diags *ds, char *buf, size_t cap) {
  size_t n = 0;
  if (cap) buf[0] = 0;
  for (uint32_t i = 0; i < ds->n; i++) {
    const struct bxk_diag *d = &ds->d[i];
    int w = snprintf(n < cap ? buf + n : NULL, n < cap ? cap - n : 0, "%s at %u+%u: %s\n",
                     bxk_err_code(d->err), d->loc.off, d->loc.len, d->msg);
    if (w > 0) n += (size_t)w;
  }
  if (ds->total > ds->n) {
    int w = snprintf(n < cap ? buf + n : NULL, n < cap ? cap - n : 0, "(%u more)\n",
                     ds->total - ds->n);
    if (w > 0) n += (size_t)w;
  }
  return n;
}

/* --------------------------------------------------------------- arena */

struct bxk_chunk {
  struct bxk_chunk *next;
  size_t used, cap;
  _Alignas(16) unsigned char mem[];
};

struct bxk_arena {
  struct bxk_chunk *head;
};

void *bxk_arena_alloc(struct bxk_kernel *k, size_t n) {
  if (k->oom) return NULL;
  n = (n + 15) & ~(size_t)15;
  struct bxk_chunk *c = k->arena->head;
  if (!c || c->cap - c->used < n) {
    size_t cap = n > 8192 ? n : 8192;
    c = malloc(sizeof *c + cap);
    if (!c) {
      k->oom = true;
      return NULL;
    }
    c->next = k->arena->head;
    c->used = 0;
    c->cap = cap;
    k->arena->head = c;
  }
  void *p = c->mem + c->used;
  c->used += n;
  memset(p, 0, n);
  return p;
}

/* Makes room for one more element of a declaration array (doubling; the
 * old array stays in the arena until the kernel dies). */
bool bxk_arena_grow(struct bxk_kernel *k, void **arr, uint32_t n, uint32_t *cap, size_t elem) {
  if (n < *cap) return true;
  uint32_t nc = *cap ? *cap * 2 : 4;
  void *p = bxk_arena_alloc(k, nc * elem);
  if (!p) return false;
  if (n) memcpy(p, *arr, n * elem);
  *arr = p;
  *cap = nc;
  return true;
}

struct bxk_kernel *bxk_kernel_new(const char *name) {
  struct bxk_kernel *k = calloc(1, sizeof *k);
  struct bxk_arena *a = calloc(1, sizeof *a);
  if (!k || !a) {
    free(k);
    free(a);
    return NULL;
  }
  k->arena = a;
  size_t n = strlen(name ? name : "");
  k->name = bxk_arena_alloc(k, n + 1);
  if (!k->name) {
    bxk_kernel_free(k);
    return NULL;
  }
  memcpy(k->name, name ? name : "", n);
  return k;
}

void bxk_kernel_free(struct bxk_kernel *k) {
  if (!k) return;
  for (struct bxk_chunk *c = k->arena->head, *nx; c; c = nx) {
    nx = c->next;
    free(c);
  }
  free(k->arena);
  free(k);
}

/* --------------------------------------------------------- declarations */

int bxk_add_binding(struct bxk_kernel *k, enum bxk_type elem, int rank, bool mut) {
  if (!bxk_arena_grow(k, (void **)&k->bind, k->nbind, &k->cap_bind, sizeof *k->bind)) return -1;
  k->bind[k->nbind] = (struct bxk_binding){.elem = (uint8_t)elem, .mut = mut,
                                           .rank = (uint8_t)(rank < 0 ? 0 : rank)};
  return (int)k->nbind++;
}

int bxk_add_scalar(struct bxk_kernel *k, enum bxk_type t) {
  if (!bxk_arena_grow(k, (void **)&k->scalar, k->nscalar, &k->cap_scalar, 1)) return -1;
  k->scalar[k->nscalar] = (uint8_t)t;
  return (int)k->nscalar++;
}

int bxk_add_shared(struct bxk_kernel *k, enum bxk_type elem, uint32_t count) {
  if (!bxk_arena_grow(k, (void **)&k->shared, k->nshared, &k->cap_shared, sizeof *k->shared))
    return -1;
  k->shared[k->nshared] = (struct bxk_shared){.elem = (uint8_t)elem, .count = count};
  return (int)k->nshared++;
}

int bxk_add_local(struct bxk_kernel *k, enum bxk_type t) {
  if (!bxk_arena_grow(k, (void **)&k->local, k->nlocal, &k->cap_local, 1)) return -1;
  k->local[k->nlocal] = (uint8_t)t;
  return (int)k->nlocal++;
}

static const struct bxk_inst *find_def(const struct bxk_block *b, bxk_val v, int depth) {
  if (depth > BXK_MAX_DEPTH) return NULL;
  for (const struct bxk_inst *i = b->first; i; i = i->next) {
    if (i->res == v) return i;
    for (int j = 0; j < 2; j++)
      if (i->blk[j]) {
        const struct bxk_inst *d = find_def(i->blk[j], v, depth + 1);
        if (d) return d;
      }
  }
  return NULL;
}

enum bxk_type bxk_value_type(const struct bxk_kernel *k, bxk_val v) {
  if (!v) return BXK_VOID;
  if (v < k->cap_vtype) return (enum bxk_type)k->vtype[v];
  const struct bxk_inst *d = find_def(&k->body, v, 0);
  return d ? (enum bxk_type)d->type : BXK_VOID;
}

/* The type of what an instruction reads from a declaration (a binding,
 * scalar, shared array or local), or BXK_VOID. */
static enum bxk_type decl_type(const struct bxk_kernel *k, const struct bxk_inst *i) {
  uint64_t x = i->imm.u;
  switch (bxk_opinfo[i->op].cls) {
  case BXK_C_LOAD: case BXK_C_STORE: case BXK_C_QUERY: case BXK_C_AXIS:
    return x < k->nbind ? (enum bxk_type)k->bind[x].elem : BXK_VOID;
  case BXK_C_SCALAR: return x < k->nscalar ? (enum bxk_type)k->scalar[x] : BXK_VOID;
  case BXK_C_SLOAD: case BXK_C_SSTORE: return x < k->nshared ? (enum bxk_type)k->shared[x].elem : BXK_VOID;
  case BXK_C_GET: case BXK_C_SET: return x < k->nlocal ? (enum bxk_type)k->local[x] : BXK_VOID;
  default: return BXK_VOID;
  }
}

static const struct bxk_inst *first_use(const struct bxk_kernel *k, const struct bxk_block *b,
                                        enum bxk_type t, int depth) {
  if (depth > BXK_MAX_DEPTH) return NULL;
  for (const struct bxk_inst *i = b->first; i; i = i->next) {
    if (!bxk_op_valid(i->op)) continue;
    if (i->type == t || decl_type(k, i) == t ||
        (i->op == BXK_OP_CAST && bxk_value_type(k, i->arg[0]) == t))
      return i;
    for (int j = 0; j < 2; j++)
      if (i->blk[j]) {
        const struct bxk_inst *u = first_use(k, i->blk[j], t, depth + 1);
        if (u) return u;
      }
  }
  return NULL;
}

bool bxk_kernel_uses_type(const struct bxk_kernel *k, enum bxk_type t, struct bxk_loc *where) {
  const struct bxk_inst *u = first_use(k, &k->body, t, 0);
  bool declared = false;
  for (uint32_t j = 0; j < k->nbind; j++) declared |= k->bind[j].elem == t;
  for (uint32_t j = 0; j < k->nscalar; j++) declared |= k->scalar[j] == t;
  for (uint32_t j = 0; j < k->nshared; j++) declared |= k->shared[j].elem == t;
  for (uint32_t j = 0; j < k->nlocal; j++) declared |= k->local[j] == t;
  if (where) *where = u ? u->loc : (struct bxk_loc){0};
  return u || declared;
}
