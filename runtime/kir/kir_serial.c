/* kir_serial.c — the versioned binary form of a kernel: what bextc embeds
 * in generated C and what the on-disk JIT cache will key and store.
 *
 * Layout (all integers little-endian; "v" is an unsigned LEB128 varint):
 *   header   "BXKIR\0" | u16 version | u32 payload length | u32 FNV-1a 32
 *            of the payload
 *   payload  v name length, name bytes | v value count
 *            v bindings, each: u8 elem, u8 mut, u8 rank
 *            v scalars, each: u8 type
 *            v shared arrays, each: u8 elem, v count
 *            v locals, each: u8 type
 *            block
 *   block    v instruction count, each instruction:
 *            u8 op, u8 type, v result id, v per operand (the op's arity),
 *            imm (8 bytes for constants, v for indices, nothing otherwise),
 *            v file, v offset, v length, then its nested blocks.
 * The reader trusts nothing: counts are bounded by the bytes left, nesting
 * by BXK_MAX_DEPTH, ids by the value count; any violation is a FORMAT
 * diagnostic naming the byte offset.  Version 1 is the first; version 2
 * added the type bf16 and reads version 1 blobs too (a bf16 in one is an
 * unknown type). */
#include <stdlib.h>
#include <string.h>

#include "kir_internal.h"

static const uint8_t MAGIC[6] = {'B', 'X', 'K', 'I', 'R', 0};
enum { HEADER = 16 };

uint32_t bxk_checksum(const uint8_t *p, size_t len) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < len; i++) h = (h ^ p[i]) * 16777619u;
  return h;
}

uint64_t bxk_hash64(const uint8_t *p, size_t len) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < len; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

/* -------------------------------------------------------------- writer */

struct wr {
  uint8_t *p;
  size_t n, cap;
  bool oom;
};

static void wbyte(struct wr *w, uint8_t b) {
  if (w->n == w->cap) {
    size_t cap = w->cap ? w->cap * 2 : 256;
    uint8_t *p = realloc(w->p, cap);
    if (!p) {
      w->oom = true;
      return;
    }
    w->p = p;
    w->cap = cap;
  }
  w->p[w->n++] = b;
}

static void wvar(struct wr *w, uint64_t v) {
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    wbyte(w, (uint8_t)(b | (v ? 0x80 : 0)));
  } while (v && !w->oom);
}

static void wfix(struct wr *w, uint64_t v, int n) {
  for (int i = 0; i < n; i++) wbyte(w, (uint8_t)(v >> (8 * i)));
}

static void wblock(struct wr *w, const struct bxk_block *b, int depth) {
  wvar(w, b->n);
  for (const struct bxk_inst *i = b->first; i && !w->oom; i = i->next) {
    wbyte(w, i->op);
    wbyte(w, i->type);
    wvar(w, i->res);
    const struct bxk_opinfo *oi = bxk_op_valid(i->op) ? &bxk_opinfo[i->op] : NULL;
    if (!oi) continue; /* unreadable on purpose: the reader rejects the opcode */
    for (int j = 0; j < oi->nargs; j++) wvar(w, i->arg[j]);
    if (oi->immk == BXK_I_LIT) wfix(w, i->imm.u, 8);
    else if (oi->immk == BXK_I_INDEX) wvar(w, i->imm.u);
    wvar(w, i->loc.file);
    wvar(w, i->loc.off);
    wvar(w, i->loc.len);
    for (int j = 0; j < oi->nblk; j++) {
      static const struct bxk_block empty;
      wblock(w, i->blk[j] ? i->blk[j] : &empty, depth + 1);
    }
  }
}

uint8_t *bxk_serialize(const struct bxk_kernel *k, size_t *len) {
  struct wr w = {0};
  for (int i = 0; i < HEADER; i++) wbyte(&w, 0);
  size_t nl = strlen(k->name);
  wvar(&w, nl);
  for (size_t i = 0; i < nl; i++) wbyte(&w, (uint8_t)k->name[i]);
  wvar(&w, k->nval);
  wvar(&w, k->nbind);
  for (uint32_t j = 0; j < k->nbind; j++) {
    wbyte(&w, k->bind[j].elem);
    wbyte(&w, k->bind[j].mut);
    wbyte(&w, k->bind[j].rank);
  }
  wvar(&w, k->nscalar);
  for (uint32_t j = 0; j < k->nscalar; j++) wbyte(&w, k->scalar[j]);
  wvar(&w, k->nshared);
  for (uint32_t j = 0; j < k->nshared; j++) {
    wbyte(&w, k->shared[j].elem);
    wvar(&w, k->shared[j].count);
  }
  wvar(&w, k->nlocal);
  for (uint32_t j = 0; j < k->nlocal; j++) wbyte(&w, k->local[j]);
  wblock(&w, &k->body, 0);
  if (w.oom || w.n - HEADER > UINT32_MAX) {
    free(w.p);
    return NULL;
  }
  memcpy(w.p, MAGIC, 6);
  uint64_t plen = w.n - HEADER;
  uint32_t sum = bxk_checksum(w.p + HEADER, w.n - HEADER);
  for (int i = 0; i < 2; i++) w.p[6 + i] = (uint8_t)(BXK_FORMAT_VERSION >> (8 * i));
  for (int i = 0; i < 4; i++) w.p[8 + i] = (uint8_t)(plen >> (8 * i));
  for (int i = 0; i < 4; i++) w.p[12 + i] = (uint8_t)(sum >> (8 * i));
  *len = w.n;
  return w.p;
}

/* -------------------------------------------------------------- reader */

struct rd {
  const uint8_t *p;
  size_t n, at;
  struct bxk_diags *ds;
  struct bxk_kernel *k;
  unsigned ver;            /* the blob's format version (1 has no bf16) */
  bool bad;
};

static void fail(struct rd *r, const char *what) {
  if (r->bad) return;
  r->bad = true;
  bxk_diag_add(r->ds, BXK_E_FORMAT, (struct bxk_loc){0}, 0,
               "kernel IR blob: %s at byte %zu", what, r->at);
}

static uint8_t rbyte(struct rd *r) {
  if (r->bad) return 0;
  if (r->at >= r->n) {
    fail(r, "truncated");
    return 0;
  }
  return r->p[r->at++];
}

static uint64_t rvar(struct rd *r, uint64_t max, const char *what) {
  uint64_t v = 0;
  for (int s = 0; s < 64 && !r->bad; s += 7) {
    uint8_t b = rbyte(r);
    v |= (uint64_t)(b & 0x7f) << s;
    if (!(b & 0x80)) {
      if (v > max) {
        fail(r, what);
        return 0;
      }
      return v;
    }
  }
  fail(r, "overlong varint");
  return 0;
}

/* A count of items each at least min_bytes long: no more than fit. */
static uint32_t rcount(struct rd *r, size_t min_bytes, const char *what) {
  return (uint32_t)rvar(r, (r->n - r->at) / min_bytes, what);
}

/* Version 1 predates bf16 (ORDER TYPE row 9). */
static uint8_t rtype(struct rd *r) {
  uint8_t t = rbyte(r);
  if (t >= BXK_TYPE_COUNT || (r->ver < 2 && t == BXK_BF16)) fail(r, "unknown type");
  return t;
}

static void rblock(struct rd *r, struct bxk_block *blk, int depth) {
  if (depth > BXK_MAX_DEPTH) {
    fail(r, "blocks nested too deep");
    return;
  }
  uint32_t n = rcount(r, 6, "instruction count past the end");
  struct bxk_builder b = bxk_builder_at(r->k, blk);
  for (uint32_t j = 0; j < n && !r->bad; j++) {
    size_t at = r->at;
    uint8_t op = rbyte(r);
    uint8_t type = rtype(r);
    if (!r->bad && !bxk_op_valid(op)) {
      r->at = at;
      fail(r, "unknown opcode");
    }
    bxk_val res = (bxk_val)rvar(r, r->k->nval, "value id out of range");
    if (r->bad) return;
    const struct bxk_opinfo *oi = &bxk_opinfo[op];
    bxk_val a[3] = {0, 0, 0};
    for (int x = 0; x < oi->nargs; x++) a[x] = (bxk_val)rvar(r, r->k->nval, "operand id out of range");
    union bxk_lit imm = {0};
    if (oi->immk == BXK_I_LIT)
      for (int x = 0; x < 8; x++) imm.u |= (uint64_t)rbyte(r) << (8 * x);
    else if (oi->immk == BXK_I_INDEX)
      imm.u = rvar(r, UINT32_MAX, "index out of range");
    struct bxk_loc loc;
    loc.file = (uint32_t)rvar(r, UINT32_MAX, "bad location");
    loc.off = (uint32_t)rvar(r, UINT32_MAX, "bad location");
    loc.len = (uint32_t)rvar(r, UINT32_MAX, "bad location");
    if (r->bad) return;
    /* res 0 with a type would take a fresh id: the blob must name it. */
    if (!res && type != BXK_VOID) {
      fail(r, "typed instruction without a value id");
      return;
    }
    b.loc = loc;
    struct bxk_inst *i = bxk_raw(&b, op, type, res, a[0], a[1], a[2], imm);
    if (!i) {
      bxk_diag_add(r->ds, BXK_E_OOM, loc, 0, "out of memory reading kernel IR");
      r->bad = true;
      return;
    }
    for (int x = 0; x < oi->nblk; x++) rblock(r, i->blk[x], depth + 1);
  }
}

struct bxk_kernel *bxk_deserialize(const uint8_t *p, size_t len, struct bxk_diags *ds) {
  struct rd r = {.p = p, .n = len, .ds = ds};
  if (len < HEADER || memcmp(p, MAGIC, 6) != 0) {
    bxk_diag_add(ds, BXK_E_FORMAT, (struct bxk_loc){0}, 0,
                 "not a kernel IR blob (expected the magic \"BXKIR\", %zu bytes)", len);
    return NULL;
  }
  unsigned ver = p[6] | (unsigned)p[7] << 8;
  if (ver < 1 || ver > BXK_FORMAT_VERSION) {
    bxk_diag_add(ds, BXK_E_VERSION, (struct bxk_loc){0}, 0,
                 "kernel IR format version %u is not supported (this build reads versions 1 to %u)",
                 ver, BXK_FORMAT_VERSION);
    return NULL;
  }
  r.ver = ver;
  uint32_t plen = 0, sum = 0;
  for (int i = 0; i < 4; i++) plen |= (uint32_t)p[8 + i] << (8 * i);
  for (int i = 0; i < 4; i++) sum |= (uint32_t)p[12 + i] << (8 * i);
  if (plen != len - HEADER) {
    bxk_diag_add(ds, BXK_E_FORMAT, (struct bxk_loc){0}, 0,
                 "kernel IR blob: payload of %u bytes announced, %zu present", plen, len - HEADER);
    return NULL;
  }
  if (bxk_checksum(p + HEADER, plen) != sum) {
    bxk_diag_add(ds, BXK_E_FORMAT, (struct bxk_loc){0}, 0,
                 "kernel IR blob: checksum mismatch (corrupt data)");
    return NULL;
  }
  r.at = HEADER;
  uint32_t nl = rcount(&r, 1, "name longer than the blob");
  char name[256];
  if (!r.bad && nl >= sizeof name) fail(&r, "name longer than 255 bytes");
  for (uint32_t i = 0; i < nl && !r.bad; i++) name[i] = (char)rbyte(&r);
  if (r.bad) return NULL;
  name[nl] = 0;
  if (strlen(name) != nl) {
    fail(&r, "NUL byte in the kernel name");
    return NULL;
  }
  r.k = bxk_kernel_new(name);
  if (!r.k) {
    bxk_diag_add(ds, BXK_E_OOM, (struct bxk_loc){0}, 0, "out of memory reading kernel IR");
    return NULL;
  }
  /* every value is defined by an instruction of >= 6 bytes */
  r.k->nval = (uint32_t)rvar(&r, (r.n - r.at) / 6 < BXK_MAX_VALUES ? (r.n - r.at) / 6 : BXK_MAX_VALUES,
                             "value count past the end");
  uint32_t n = rcount(&r, 3, "binding count past the end");
  for (uint32_t j = 0; j < n && !r.bad; j++) {
    uint8_t elem = rtype(&r), mut = rbyte(&r), rank = rbyte(&r);
    if (mut > 1) fail(&r, "mut flag not 0 or 1");
    if (!r.bad && bxk_add_binding(r.k, elem, rank, mut) < 0) r.bad = true;
  }
  n = rcount(&r, 1, "scalar count past the end");
  for (uint32_t j = 0; j < n && !r.bad; j++) {
    uint8_t t = rtype(&r);
    if (!r.bad && bxk_add_scalar(r.k, t) < 0) r.bad = true;
  }
  n = rcount(&r, 2, "shared count past the end");
  for (uint32_t j = 0; j < n && !r.bad; j++) {
    uint8_t t = rtype(&r);
    uint32_t c = (uint32_t)rvar(&r, UINT32_MAX, "shared size out of range");
    if (!r.bad && bxk_add_shared(r.k, t, c) < 0) r.bad = true;
  }
  n = rcount(&r, 1, "local count past the end");
  for (uint32_t j = 0; j < n && !r.bad; j++) {
    uint8_t t = rtype(&r);
    if (!r.bad && bxk_add_local(r.k, t) < 0) r.bad = true;
  }
  if (!r.bad) rblock(&r, &r.k->body, 0);
  if (!r.bad && r.k->oom) {
    bxk_diag_add(ds, BXK_E_OOM, (struct bxk_loc){0}, 0, "out of memory reading kernel IR");
    r.bad = true;
  }
  if (!r.bad && r.at != r.n) fail(&r, "trailing bytes");
  if (r.bad) {
    bxk_kernel_free(r.k);
    return NULL;
  }
  return r.k;
}
