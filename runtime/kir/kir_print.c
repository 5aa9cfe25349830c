/* kir_print.c — the kernel IR's text form (bextc --emit=kir, golden tests).
 *
 * Stable by design: one instruction per line, values by id, constants in a
 * fixed format (floats with %.9g for f16/f32 and %.17g for f64, which round
 * trip), nested blocks indented by two.  It prints any kernel, verified or
 * not, so a dump can show what the verifier complained about. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kir_internal.h"

struct out {
  char *buf;
  size_t cap, n;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(o->n < o->cap ? o->buf + o->n : NULL, o->n < o->cap ? o->cap - o->n : 0, fmt, ap);
  va_end(ap);
  if (w > 0) o->n += (size_t)w;
}

static void lit(struct out *o, unsigned t, union bxk_lit v) {
  if (bxk_type_is_float(t)) {
    char s[40];
    snprintf(s, sizeof s, t == BXK_F64 ? "%.17g" : "%.9g", v.f);
    /* a float constant always looks like one: 1 -> 1.0 */
    bool plain = !strpbrk(s, ".eEni");
    put(o, "%s%s", s, plain ? ".0" : "");
  } else if (t == BXK_BOOL) {
    put(o, "%s", v.u ? "true" : "false");
  } else if (bxk_type_is_signed(t)) {
    put(o, "%lld", (long long)v.i);
  } else {
    put(o, "%llu", (unsigned long long)v.u);
  }
}

static void block(struct out *o, const struct bxk_block *b, int depth);

static void inst(struct out *o, const struct bxk_inst *i, int depth) {
  put(o, "%*s", 2 * depth, "");
  if (!bxk_op_valid(i->op)) {
    put(o, "op?%u\n", i->op);
    return;
  }
  const struct bxk_opinfo *oi = &bxk_opinfo[i->op];
  unsigned long long ix = (unsigned long long)i->imm.u;
  if (i->res) put(o, "%%%u: %s = ", i->res, bxk_type_name(i->type));
  switch (oi->cls) {
  case BXK_C_CONST: put(o, "const "); lit(o, i->type, i->imm); break;
  case BXK_C_SCALAR: put(o, "scalar s%llu", ix); break;
  case BXK_C_TOPO: put(o, "topo %s", ix < BXK_TOPO_COUNT ? bxk_topo_name((unsigned)ix) : "?"); break;
  case BXK_C_QUERY: put(o, "%s b%llu", oi->name, ix); break;
  case BXK_C_AXIS: put(o, "%s b%llu, %%%u", oi->name, ix, i->arg[0]); break;
  case BXK_C_LOAD: put(o, "load b%llu[%%%u]", ix, i->arg[0]); break;
  case BXK_C_STORE: put(o, "store b%llu[%%%u], %%%u", ix, i->arg[0], i->arg[1]); break;
  case BXK_C_SLOAD: put(o, "sload sh%llu[%%%u]", ix, i->arg[0]); break;
  case BXK_C_SSTORE: put(o, "sstore sh%llu[%%%u], %%%u", ix, i->arg[0], i->arg[1]); break;
  case BXK_C_GET: put(o, "get v%llu", ix); break;
  case BXK_C_SET: put(o, "set v%llu, %%%u", ix, i->arg[0]); break;
  case BXK_C_IF:
    put(o, "if %%%u {\n", i->arg[0]);
    if (i->blk[0]) block(o, i->blk[0], depth + 1);
    if (i->blk[1] && i->blk[1]->first) {
      put(o, "%*s} else {\n", 2 * depth, "");
      block(o, i->blk[1], depth + 1);
    }
    put(o, "%*s}\n", 2 * depth, "");
    return;
  case BXK_C_FOR:
    put(o, "for %%%u .. %%%u step %%%u {\n", i->arg[0], i->arg[1], i->arg[2]);
    if (i->blk[0]) block(o, i->blk[0], depth + 1);
    put(o, "%*s}\n", 2 * depth, "");
    return;
  case BXK_C_LOOP:
    put(o, "loop {\n");
    if (i->blk[0]) block(o, i->blk[0], depth + 1);
    put(o, "%*s}\n", 2 * depth, "");
    return;
  default:
    put(o, "%s", oi->name);
    for (int j = 0; j < oi->nargs; j++) put(o, "%s%%%u", j ? ", " : " ", i->arg[j]);
    break;
  }
  put(o, "\n");
}

static void block(struct out *o, const struct bxk_block *b, int depth) {
  if (depth > BXK_MAX_DEPTH + 1) {
    put(o, "%*s...\n", 2 * depth, "");
    return;
  }
  for (const struct bxk_inst *i = b->first; i; i = i->next) inst(o, i, depth);
}

size_t bxk_print(const struct bxk_kernel *k, char *buf, size_t cap) {
  struct out o = {buf, cap, 0};
  if (cap) buf[0] = 0;
  put(&o, "kernel %s(", k->name);
  for (uint32_t j = 0; j < k->nbind; j++) {
    const struct bxk_binding *b = &k->bind[j];
    put(&o, "%sb%u: &%stensor<%s", j ? ", " : "", j, b->mut ? "mut " : "", bxk_type_name(b->elem));
    if (b->rank) put(&o, ", %u", b->rank);
    put(&o, ">");
  }
  for (uint32_t j = 0; j < k->nscalar; j++)
    put(&o, "%ss%u: %s", j ? ", " : "; ", j, bxk_type_name(k->scalar[j]));
  put(&o, ")\n");
  for (uint32_t j = 0; j < k->nshared; j++)
    put(&o, "  shared sh%u: %s[%u]\n", j, bxk_type_name(k->shared[j].elem), k->shared[j].count);
  for (uint32_t j = 0; j < k->nlocal; j++)
    put(&o, "  local v%u: %s\n", j, bxk_type_name(k->local[j]));
  put(&o, "{\n");
  block(&o, &k->body, 1);
  put(&o, "}\n");
  return o.n;
}

char *bxk_print_alloc(const struct bxk_kernel *k) {
  size_t n = bxk_print(k, NULL, 0);
  char *s = malloc(n + 1);
  if (s) bxk_print(k, s, n + 1);
  return s;
}
