/* unit_diff.c — the differential test of metadata functions (issue 4,
 * item 6): every helper fn of every module (stdlib included) and every
 * #[fusion(dtype/shape)] and #[fusion(meta)] annotation of the test
 * extensions is evaluated on many argument values twice — by the REPL's
 * interpreter (compiler/interp.h) and by the C that bextc generates, compiled
 * and run as a harness program — and the two must give identical results
 * and identical errors (code and message).
 *
 * Both sides print each outcome in one canonical form driven by the
 * declared result type, so no printer of either side is trusted:
 *   ints decimal, f32 %.9g, f64 %.17g, bools, shapes [a,b], dtypes by
 *   index, specs {shape,dtype}, structs {f,..} in declaration order, enums
 *   #Variant{..}, tuples (a,b); errors `ERR <code> <message>`. */
#include <glob.h>
#include <math.h>

#include "interp.h"
#include "types.h"
#include "unit_util.h"

#define MAX_SETS 24

typedef struct buf {
  char *d;
  size_t n, cap;
} buf;

static void bprintf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bprintf(buf *b, const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (b->n + (size_t)n + 1 > b->cap) {
    b->cap = (b->n + (size_t)n + 1) * 2;
    b->d = realloc(b->d, b->cap);
  }
  vsnprintf(b->d + b->n, (size_t)n + 1, fmt, ap2);
  b->n += (size_t)n;
  va_end(ap2);
}

static bxc_type *strip(bxc_type *t) { return bxc_type_strip_refs(bxc_type_resolve(t)); }

static const char *i128s(char *buf, __int128 v) {
  char tmp[48];
  int n = 0;
  bool neg = v < 0;
  unsigned __int128 u = neg ? -(unsigned __int128)v : (unsigned __int128)v;
  do {
    tmp[n++] = (char)('0' + (int)(u % 10));
    u /= 10;
  } while (u);
  if (neg) tmp[n++] = '-';
  for (int i = 0; i < n; i++) buf[i] = tmp[n - 1 - i];
  buf[n] = 0;
  return buf;
}

/* ---- C names (the generator's conventions, docs/codegen.md) ---- */

static const char *snake(bxc_arena *a, const char *s) {
  size_t n = strlen(s);
  char *o = bxc_arena_alloc(a, 2 * n + 1);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    bool up = c >= 'A' && c <= 'Z';
    if (up) {
      bool aw = i > 0 && ((s[i - 1] >= 'a' && s[i - 1] <= 'z') || (s[i - 1] >= '0' && s[i - 1] <= '9'));
      bool ae = i > 0 && s[i - 1] >= 'A' && s[i - 1] <= 'Z' && i + 1 < n && s[i + 1] >= 'a' && s[i + 1] <= 'z';
      if ((aw || ae) && k && o[k - 1] != '_') o[k++] = '_';
      o[k++] = (char)(c - 'A' + 'a');
    } else {
      o[k++] = c;
    }
  }
  o[k] = 0;
  return o;
}

static const char *upper(bxc_arena *a, const char *s) {
  char *o = bxc_arena_strdup(a, snake(a, s));
  for (char *p = o; *p; p++)
    if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 'a' + 'A');
  return o;
}

static const char *spelling(bxc_arena *a, bxc_type *t) {
  t = strip(t);
  switch (t->kind) {
  case BXC_TYPE_TENSOR: return "tensor";
  case BXC_TYPE_BOOL: return "bool";
  case BXC_TYPE_INT: return bxc_int_kind_name(t->int_kind);
  case BXC_TYPE_FLOAT: return bxc_float_kind_name(t->float_kind);
  case BXC_TYPE_SHAPE: return "shape";
  case BXC_TYPE_DTYPE: return "dtype";
  case BXC_TYPE_SPEC: return "spec";
  case BXC_TYPE_STRUCT:
  case BXC_TYPE_ENUM: return t->decl->name;
  case BXC_TYPE_TUPLE: {
    const char *s = bxc_arena_printf(a, "tuple%u", t->tuple.n);
    for (uint32_t i = 0; i < t->tuple.n; i++) s = bxc_arena_printf(a, "%s_%s", s, spelling(a, t->tuple.elems[i]));
    return s;
  }
  default: return "unit";
  }
}

static const char *ctype(bxc_arena *a, const char *stem, bxc_type *t) {
  t = strip(t);
  switch (t->kind) {
  case BXC_TYPE_BOOL: return "bool";
  case BXC_TYPE_INT: return bxc_int_kinds[t->int_kind].ctype;
  case BXC_TYPE_FLOAT: return t->float_kind == BXC_F32 ? "float" : "double";
  case BXC_TYPE_SHAPE: return "bext_meta_shape";
  case BXC_TYPE_DTYPE: return "bext_dtype";
  case BXC_TYPE_SPEC: return "bext_meta_spec";
  case BXC_TYPE_STRUCT:
  case BXC_TYPE_ENUM: return t->decl->name;
  case BXC_TYPE_TUPLE: return bxc_arena_printf(a, "%s_%s", stem, spelling(a, t));
  default: return NULL;
  }
}

/* Whether values of t can be generated as arguments. */
static bool generatable(bxc_type *t, int depth) {
  t = strip(t);
  if (depth > 4) return false;
  switch (t->kind) {
  case BXC_TYPE_BOOL: case BXC_TYPE_INT: case BXC_TYPE_FLOAT: case BXC_TYPE_SHAPE: case BXC_TYPE_DTYPE:
  case BXC_TYPE_SPEC: return true;
  case BXC_TYPE_TUPLE:
    for (uint32_t i = 0; i < t->tuple.n; i++)
      if (!generatable(t->tuple.elems[i], depth + 1)) return false;
    return true;
  case BXC_TYPE_STRUCT:
  case BXC_TYPE_ENUM:
    for (uint32_t i = 0; i < t->decl->nfields; i++)
      if (!generatable(t->decl->fields[i].type, depth + 1)) return false;
    for (uint32_t v = 0; v < t->decl->nvariants; v++)
      for (uint32_t i = 0; i < t->decl->variants[v].nfields; i++)
        if (!generatable(t->decl->variants[v].fields[i].type, depth + 1)) return false;
    return true;
  default: return false;
  }
}

/* ---- argument values: the same choice as a BxvValue and as C text ---- */

static const __int128 int_pool[] = {0, 1, 2, 3, 4, 5, 7, 8, 100, 127, 128, 255, 256, -1, -3, -128,
                                    65535, 4294967295LL, 2147483647, -2147483648LL, 9223372036854775807LL,
                                    (__int128)UINT64_MAX};
static const double float_pool[] = {0.0, 1.5, -2.25, 3.0, 10.0, 0.1, -7.5, 1e20};
static const uint64_t shapes[][6] = {
    /* len, dims... */
    {0}, {1, 5}, {2, 2, 3}, {2, 3, 2}, {3, 1, 4, 5}, {3, 2, 1, 3}, {4, 4, 3, 2, 1},
    {2, 1, 1}, {1, 200}, {2, 4294967296ULL, 4294967296ULL}, {3, 6, 6, 6}, {5, 2, 3, 4, 5, 6},
};
#define NSHAPES (sizeof shapes / sizeof *shapes)

static bool int_fits(__int128 v, bxc_int_kind k) {
  switch (k) {
  case BXC_I8: return v >= INT8_MIN && v <= INT8_MAX;
  case BXC_I16: return v >= INT16_MIN && v <= INT16_MAX;
  case BXC_I32: return v >= INT32_MIN && v <= INT32_MAX;
  case BXC_I64: case BXC_ISIZE: return v >= INT64_MIN && v <= INT64_MAX;
  case BXC_U8: return v >= 0 && v <= UINT8_MAX;
  case BXC_U16: return v >= 0 && v <= UINT16_MAX;
  case BXC_U32: return v >= 0 && v <= UINT32_MAX;
  default: return v >= 0 && v <= (__int128)UINT64_MAX;
  }
}

static void gen_shape(bxc_arena *a, unsigned pick, BxvValue *out, buf *c) {
  const uint64_t *s = shapes[pick % NSHAPES];
  *out = bxv_shape_new(a, 8);
  bprintf(c, "(bext_meta_shape){%llu, {", (unsigned long long)s[0]);
  for (uint64_t i = 0; i < s[0]; i++) {
    bxv_shape_push(a, &out->u.shape, s[1 + i]);
    bprintf(c, "%s%lluULL", i ? ", " : "", (unsigned long long)s[1 + i]);
  }
  if (!s[0]) bprintf(c, "0");
  bprintf(c, "}}");
}

static const char *const dtype_c[] = {"BEXT_F32", "BEXT_F64", "BEXT_F16", "BEXT_BF16",
                                      "BEXT_I32", "BEXT_I64", "BEXT_U8",  "BEXT_BOOL"};

static void gen_value(bxc_arena *a, const char *stem, bxc_type *t, unsigned pick, BxvValue *out, buf *c) {
  t = strip(t);
  switch (t->kind) {
  case BXC_TYPE_BOOL:
    *out = bxv_bool(pick % 2);
    bprintf(c, "%s", pick % 2 ? "true" : "false");
    return;
  case BXC_TYPE_INT: {
    /* pick among the pool values that fit the type */
    __int128 fits[32];
    unsigned n = 0;
    for (size_t i = 0; i < sizeof int_pool / sizeof *int_pool; i++)
      if (int_fits(int_pool[i], t->int_kind)) fits[n++] = int_pool[i];
    __int128 v = fits[pick % n];
    *out = bxv_int(v, (BxvIntType)t->int_kind);
    char b[48];
    if (v == INT64_MIN) bprintf(c, "(%s)(-9223372036854775807LL - 1)", bxc_int_kinds[t->int_kind].ctype);
    else if (v < 0) bprintf(c, "(%s)%sLL", bxc_int_kinds[t->int_kind].ctype, i128s(b, v));
    else bprintf(c, "(%s)%sULL", bxc_int_kinds[t->int_kind].ctype, i128s(b, v));
    return;
  }
  case BXC_TYPE_FLOAT: {
    double v = float_pool[pick % (sizeof float_pool / sizeof *float_pool)];
    if (t->float_kind == BXC_F32) v = (float)v;
    *out = bxv_float(v, t->float_kind == BXC_F32 ? BXV_F32 : BXV_F64);
    bprintf(c, "(%s)%.17g", t->float_kind == BXC_F32 ? "float" : "double", v);
    return;
  }
  case BXC_TYPE_SHAPE: gen_shape(a, pick, out, c); return;
  case BXC_TYPE_DTYPE:
    *out = bxv_dtype((BxvDType)(pick % 8));
    bprintf(c, "%s", dtype_c[pick % 8]);
    return;
  case BXC_TYPE_SPEC: {
    BxvValue s;
    bprintf(c, "(bext_meta_spec){");
    gen_shape(a, pick, &s, c);
    unsigned d = (pick / 3) % 8;
    bprintf(c, ", %s}", dtype_c[d]);
    *out = bxv_spec(a, &s.u.shape, (BxvDType)d);
    return;
  }
  case BXC_TYPE_TUPLE: {
    out->kind = BXV_TUPLE;
    out->refs = 0;
    out->u.tuple.n = t->tuple.n;
    out->u.tuple.items = bxc_arena_alloc(a, t->tuple.n * sizeof(BxvValue));
    bprintf(c, "(%s){", ctype(a, stem, t));
    for (uint32_t i = 0; i < t->tuple.n; i++) {
      if (i) bprintf(c, ", ");
      gen_value(a, stem, t->tuple.elems[i], pick * 7 + i, &out->u.tuple.items[i], c);
    }
    bprintf(c, "}");
    return;
  }
  case BXC_TYPE_STRUCT: {
    bxc_type_decl *d = t->decl;
    memset(out, 0, sizeof *out);
    out->kind = BXV_STRUCT;
    out->u.agg.type = d->name;
    out->u.agg.n = d->nfields;
    out->u.agg.braces = !d->is_tuple_struct;
    out->u.agg.fields = bxc_arena_alloc(a, (d->nfields + 1) * sizeof(BxvValue));
    out->u.agg.names = d->is_tuple_struct ? NULL : bxc_arena_alloc(a, (d->nfields + 1) * sizeof(char *));
    bprintf(c, "(%s){", d->name);
    for (uint32_t i = 0; i < d->nfields; i++) {
      if (i) bprintf(c, ", ");
      if (out->u.agg.names) out->u.agg.names[i] = d->fields[i].name;
      gen_value(a, stem, d->fields[i].type, pick * 5 + i, &out->u.agg.fields[i], c);
    }
    if (!d->nfields) bprintf(c, "0");
    bprintf(c, "}");
    return;
  }
  case BXC_TYPE_ENUM: {
    bxc_type_decl *d = t->decl;
    const bxc_type_variant *v = &d->variants[pick % d->nvariants];
    memset(out, 0, sizeof *out);
    out->kind = BXV_ENUM;
    out->u.agg.type = d->name;
    out->u.agg.variant = v->name;
    out->u.agg.n = v->nfields;
    out->u.agg.braces = v->shape == BXC_VSHAPE_STRUCT;
    out->u.agg.fields = bxc_arena_alloc(a, (v->nfields + 1) * sizeof(BxvValue));
    out->u.agg.names = v->shape == BXC_VSHAPE_STRUCT ? bxc_arena_alloc(a, (v->nfields + 1) * sizeof(char *)) : NULL;
    /* a metadata companion shares its enum's tag constants */
    const char *tag_owner = d->metadata_of ? d->metadata_of->decl->name : d->name;
    bprintf(c, "(%s){.tag = %s_%s", d->name, upper(a, tag_owner), upper(a, v->name));
    if (v->nfields) bprintf(c, ", .as.%s = {", v->name);
    for (uint32_t i = 0; i < v->nfields; i++) {
      if (i) bprintf(c, ", ");
      if (out->u.agg.names) out->u.agg.names[i] = v->fields[i].name;
      gen_value(a, stem, v->fields[i].type, pick * 3 + i, &out->u.agg.fields[i], c);
    }
    if (v->nfields) bprintf(c, "}");
    bprintf(c, "}");
    return;
  }
  default: cr_assert_fail("cannot generate a value of this type");
  }
}

/* ---- canonical printing ---- */

static const BxvValue *agg_field(const BxvValue *v, const bxc_type_field *fs, uint32_t i) {
  if (!v->u.agg.names || !fs[i].name) return i < v->u.agg.n ? &v->u.agg.fields[i] : NULL;
  for (size_t k = 0; k < v->u.agg.n; k++)
    if (v->u.agg.names[k] && !strcmp(v->u.agg.names[k], fs[i].name)) return &v->u.agg.fields[k];
  return NULL;
}

static void canon_interp(buf *b, bxc_type *t, const BxvValue *v) {
  t = strip(t);
  char nb[48];
  switch (t->kind) {
  case BXC_TYPE_BOOL: bprintf(b, "%s", v->kind == BXV_BOOL && v->u.b ? "true" : "false"); return;
  case BXC_TYPE_INT: bprintf(b, "%s", v->kind == BXV_INT ? i128s(nb, v->u.i.v) : "?"); return;
  case BXC_TYPE_FLOAT:
    if (t->float_kind == BXC_F32) bprintf(b, "%.9g", (double)(float)v->u.f.v);
    else bprintf(b, "%.17g", v->u.f.v);
    return;
  case BXC_TYPE_SHAPE:
    bprintf(b, "[");
    for (size_t i = 0; i < v->u.shape.len; i++) bprintf(b, "%s%llu", i ? "," : "", (unsigned long long)v->u.shape.dims[i]);
    bprintf(b, "]");
    return;
  case BXC_TYPE_DTYPE: bprintf(b, "%d", (int)v->u.dtype); return;
  case BXC_TYPE_SPEC: {
    bprintf(b, "{[");
    for (size_t i = 0; i < v->u.spec.shape.len; i++)
      bprintf(b, "%s%llu", i ? "," : "", (unsigned long long)v->u.spec.shape.dims[i]);
    bprintf(b, "],%d}", (int)v->u.spec.dtype);
    return;
  }
  case BXC_TYPE_TUPLE:
    bprintf(b, "(");
    for (uint32_t i = 0; i < t->tuple.n; i++) {
      if (i) bprintf(b, ",");
      canon_interp(b, t->tuple.elems[i], &v->u.tuple.items[i]);
    }
    bprintf(b, ")");
    return;
  case BXC_TYPE_STRUCT:
    bprintf(b, "{");
    for (uint32_t i = 0; i < t->decl->nfields; i++) {
      if (i) bprintf(b, ",");
      const BxvValue *f = agg_field(v, t->decl->fields, i);
      if (f) canon_interp(b, t->decl->fields[i].type, f);
      else bprintf(b, "?");
    }
    bprintf(b, "}");
    return;
  case BXC_TYPE_ENUM: {
    const bxc_type_variant *var = NULL;
    for (uint32_t k = 0; k < t->decl->nvariants; k++)
      if (v->u.agg.variant && !strcmp(v->u.agg.variant, t->decl->variants[k].name)) var = &t->decl->variants[k];
    if (!var) {
      bprintf(b, "#?");
      return;
    }
    bprintf(b, "#%s{", var->name);
    for (uint32_t i = 0; i < var->nfields; i++) {
      if (i) bprintf(b, ",");
      const BxvValue *f = agg_field(v, var->fields, i);
      if (f) canon_interp(b, var->fields[i].type, f);
      else bprintf(b, "?");
    }
    bprintf(b, "}");
    return;
  }
  default: bprintf(b, "?"); return;
  }
}

/* C code printing the value at lvalue `lv` of type t in the same form. */
static void canon_c(bxc_arena *a, buf *c, bxc_type *t, const char *lv) {
  t = strip(t);
  switch (t->kind) {
  case BXC_TYPE_BOOL: bprintf(c, "  fputs(%s ? \"true\" : \"false\", stdout);\n", lv); return;
  case BXC_TYPE_INT:
    if (bxc_int_kind_signed(t->int_kind)) bprintf(c, "  printf(\"%%lld\", (long long)%s);\n", lv);
    else bprintf(c, "  printf(\"%%llu\", (unsigned long long)%s);\n", lv);
    return;
  case BXC_TYPE_FLOAT:
    bprintf(c, "  printf(\"%s\", (double)%s);\n", t->float_kind == BXC_F32 ? "%.9g" : "%.17g", lv);
    return;
  case BXC_TYPE_SHAPE: bprintf(c, "  pshape(&%s);\n", lv); return;
  case BXC_TYPE_DTYPE: bprintf(c, "  printf(\"%%d\", (int)%s);\n", lv); return;
  case BXC_TYPE_SPEC:
    bprintf(c, "  fputs(\"{\", stdout);\n  pshape(&%s.shape);\n  printf(\",%%d}\", (int)%s.dtype);\n", lv, lv);
    return;
  case BXC_TYPE_TUPLE:
    bprintf(c, "  fputs(\"(\", stdout);\n");
    for (uint32_t i = 0; i < t->tuple.n; i++) {
      if (i) bprintf(c, "  fputs(\",\", stdout);\n");
      canon_c(a, c, t->tuple.elems[i], bxc_arena_printf(a, "%s._%u", lv, i));
    }
    bprintf(c, "  fputs(\")\", stdout);\n");
    return;
  case BXC_TYPE_STRUCT:
    bprintf(c, "  fputs(\"{\", stdout);\n");
    for (uint32_t i = 0; i < t->decl->nfields; i++) {
      if (i) bprintf(c, "  fputs(\",\", stdout);\n");
      const char *fn = t->decl->fields[i].name ? t->decl->fields[i].name : bxc_arena_printf(a, "_%u", i);
      canon_c(a, c, t->decl->fields[i].type, bxc_arena_printf(a, "%s.%s", lv, fn));
    }
    bprintf(c, "  fputs(\"}\", stdout);\n");
    return;
  case BXC_TYPE_ENUM:
    bprintf(c, "  switch (%s.tag) {\n", lv);
    for (uint32_t k = 0; k < t->decl->nvariants; k++) {
      const bxc_type_variant *var = &t->decl->variants[k];
      const char *tag_owner = t->decl->metadata_of ? t->decl->metadata_of->decl->name : t->decl->name;
      bprintf(c, "  case %s_%s:\n  fputs(\"#%s{\", stdout);\n", upper(a, tag_owner), upper(a, var->name), var->name);
      for (uint32_t i = 0; i < var->nfields; i++) {
        if (i) bprintf(c, "  fputs(\",\", stdout);\n");
        const char *fn = var->fields[i].name ? var->fields[i].name : bxc_arena_printf(a, "_%u", i);
        canon_c(a, c, var->fields[i].type, bxc_arena_printf(a, "%s.as.%s.%s", lv, var->name, fn));
      }
      bprintf(c, "  fputs(\"}\", stdout);\n  break;\n");
    }
    bprintf(c, "  default:\n  fputs(\"#?\", stdout);\n  }\n");
    return;
  default: bprintf(c, "  fputs(\"?\", stdout);\n"); return;
  }
}

/* ---- the two sides ---- */

typedef struct diff_state {
  bxc_unit u;
  bxi_interp *in;
  bxc_diag_list idiags;
  bxc_arena ia;
  const char *stem;
  buf harness;          /* C main body */
  buf expect;           /* expected lines */
  unsigned ncalls;
} diff_state;

static void interp_error_line(diff_state *s, buf *b) {
  const bxc_diag *d = NULL;
  for (uint32_t i = 0; i < s->idiags.count; i++)
    if (s->idiags.items[i].severity == BXC_SEV_ERROR) {
      d = &s->idiags.items[i];
      break;
    }
  bprintf(b, "ERR %s %s\n", d ? d->code : "?", d ? d->message : "?");
}

static void reset_diags(diff_state *s) { bxc_diag_list_init(&s->idiags, &s->ia); }

/* One helper fn over generated arguments. */
static unsigned diff_helper(diff_state *s, const bxc_module *mod, const bxc_item *it) {
  const bxc_fn *fn = it->fn;
  bxc_arena *a = &s->u.arena;
  uint32_t np = fn->params.len;
  if (!fn->body || fn->generics.len) return 0;
  bxc_type *ret = fn->ret ? fn->ret->ty : bxc_type_unit();
  if (!ret || !generatable(ret, 0)) return 0;
  for (uint32_t i = 0; i < np; i++) {
    const bxc_param *p = fn->params.items[i];
    if (!p->type || !p->type->ty || !generatable(p->type->ty, 0)) return 0;
  }
  const char *cname;
  if (mod->is_root) cname = bxc_arena_printf(a, "%s_%s", s->stem, fn->name.name);
  else {
    char *mn = bxc_arena_strdup(a, mod->name);
    char *w = mn;
    for (char *r = mn; *r; r++) {
      char ch = (*r == ':') ? '_' : *r;
      if (!(ch == '_' && w > mn && w[-1] == '_')) *w++ = ch;
    }
    *w = 0;
    cname = bxc_arena_printf(a, "%s_%s_%s", s->stem, mn, fn->name.name);
  }
  unsigned sets = np == 0 ? 1 : MAX_SETS;
  for (unsigned k = 0; k < sets; k++) {
    BxvValue *args = bxc_arena_alloc(a, (np + 1) * sizeof *args);
    bprintf(&s->harness, "  {\n    bext_meta_error err;\n    memset(&err, 0, sizeof err);\n");
    const char *call = "";
    for (uint32_t i = 0; i < np; i++) {
      const bxc_param *p = fn->params.items[i];
      bxc_type *pt = bxc_type_resolve(p->type->ty);
      buf c = {0};
      gen_value(a, s->stem, pt, k * (2 * i + 3) + i * 5 + k / 3, &args[i], &c);
      bprintf(&s->harness, "    %s a%u = %s;\n", ctype(a, s->stem, pt), i, c.d);
      call = bxc_arena_printf(a, "%s%sa%u, ", call, pt->kind == BXC_TYPE_REF ? "&" : "", i);
      free(c.d);
    }
    bool valued = strip(ret)->kind != BXC_TYPE_UNIT;
    if (valued) bprintf(&s->harness, "    %s out;\n    memset(&out, 0, sizeof out);\n", ctype(a, s->stem, ret));
    bprintf(&s->harness, "    if (%s(%s%s&err)) {\n    fputs(\"OK \", stdout);\n", cname, call, valued ? "&out, " : "");
    if (valued) canon_c(a, (buf *)&s->harness, ret, "out");
    bprintf(&s->harness, "    fputs(\"\\n\", stdout);\n    } else printf(\"ERR %%s %%s\\n\", err.code, err.msg);\n  }\n");
    /* interpreter */
    reset_diags(s);
    bxi_free(s->in);
    s->in = bxi_new(&s->idiags);
    bxi_add_unit(s->in, &s->u, 0);
    BxvValue out;
    bprintf(&s->expect, "%s#%u ", cname, k);
    if (bxi_call_item(s->in, it, args, np, &out)) {
      bprintf(&s->expect, "OK ");
      if (valued) canon_interp(&s->expect, ret, &out);
      bprintf(&s->expect, "\n");
    } else {
      interp_error_line(s, &s->expect);
    }
    s->ncalls++;
  }
  /* tag the C side's lines the same way: done by the caller's prefix printer */
  return sets;
}

/* The custom scalar encodings of one trait method: the generated
 * `<prefix>_scalar_<param>` against the interpreter's `:scalars` (its
 * CUSTOM entry for that parameter), on the `meta` view of the arguments
 * (pts: specs for tensors, companions for extension values). */
static unsigned diff_scalars(diff_state *s, const char *trait, const bxc_fn *fn, bxc_type *const *pts,
                             const bxc_expr *const *enc, const char *prefix) {
  bxc_arena *a = &s->u.arena;
  uint32_t np = fn->params.len;
  unsigned calls = 0;
  for (uint32_t j = 0; j < np && j < 16; j++) {
    if (!enc[j]) continue;
    const char *pn = fn->params.items[j]->pat->name.name;
    bxc_type *ret = enc[j]->ty;
    for (unsigned k = 0; k < MAX_SETS; k++) {
      BxvValue *args = bxc_arena_alloc(a, (np + 1) * sizeof *args);
      bprintf(&s->harness, "  {\n    bext_meta_error err;\n    memset(&err, 0, sizeof err);\n");
      const char *call = "";
      for (uint32_t i = 0; i < np; i++) {
        buf c = {0};
        gen_value(a, s->stem, pts[i], k * (2 * i + 7) + i * 3 + k / 5, &args[i], &c);
        bprintf(&s->harness, "    %s a%u = %s;\n", ctype(a, s->stem, pts[i]), i, c.d);
        free(c.d);
        call = bxc_arena_printf(a, "%s&a%u, ", call, i);
      }
      bprintf(&s->harness, "    %s out;\n    memset(&out, 0, sizeof out);\n", ctype(a, s->stem, ret));
      bprintf(&s->harness, "    if (%s_scalar_%s(%s&out, &err)) {\n    fputs(\"OK \", stdout);\n", prefix, pn, call);
      canon_c(a, &s->harness, ret, "out");
      bprintf(&s->harness, "    fputs(\"\\n\", stdout);\n    } else printf(\"ERR %%s %%s\\n\", err.code, err.msg);\n  }\n");
      reset_diags(s);
      bxi_free(s->in);
      s->in = bxi_new(&s->idiags);
      bxi_add_unit(s->in, &s->u, 0);
      bxi_scalar *sc = NULL;
      uint32_t nsc = 0;
      bprintf(&s->expect, "%s_scalar_%s#%u ", prefix, pn, k);
      if (bxi_scalars(s->in, trait, fn->name.name, args, np, &sc, &nsc)) {
        const bxi_scalar *found = NULL;
        for (uint32_t i = 0; i < nsc; i++)
          if (sc[i].kind == BXC_SCALAR_CUSTOM && !strcmp(sc[i].name, pn)) found = &sc[i];
        if (found) {
          bprintf(&s->expect, "OK ");
          canon_interp(&s->expect, ret, &found->value);
          bprintf(&s->expect, "\n");
        } else {
          bprintf(&s->expect, "MISSING custom scalar %s\n", pn);
        }
      } else {
        interp_error_line(s, &s->expect);
      }
      s->ncalls++;
      calls++;
    }
  }
  return calls;
}

/* One trait method's #[fusion] annotation. */
static unsigned diff_method(diff_state *s, const char *trait, const bxc_fn *fn) {
  bxc_arena *a = &s->u.arena;
  /* what the checker recorded of the method (ast.h bxc_method_rec) */
  const bxc_method_rec *rec = fn->method;
  if (!rec) return 0;
  const bxc_attr_arg *dt = rec->dtype, *sh = rec->shape, *me = rec->meta;
  /* custom scalar encodings: `#[fusion(scalar = e)]` on a parameter */
  const bxc_expr *enc[16] = {0};
  bool any_enc = false;
  for (uint32_t i = 0; i < rec->nparams && i < 16; i++) {
    const bxc_attr_arg *g = rec->params[i].encoding;
    if (g && g->value && g->value->ty && generatable(g->value->ty, 0)) {
      enc[i] = g->value;
      any_enc = true;
    }
  }
  if (!me && !(dt && sh) && !any_enc) return 0;
  /* a method a #[cfg] switches off has typed parameters (the generator
   * needs them) but unchecked metadata code: no metadata functions */
  if ((dt && (!dt->value || !dt->value->ty)) || (sh && (!sh->value || !sh->value->ty))) return 0;
  uint32_t np = fn->params.len;
  bxc_type **pts = bxc_arena_alloc(a, (np + 1) * sizeof *pts);
  for (uint32_t i = 0; i < np; i++) {
    const bxc_param *p = fn->params.items[i];
    if (!p->type || !p->type->ty) return 0;
    bxc_type *t = strip(p->type->ty);
    if (t->kind == BXC_TYPE_TENSOR) t = bxc_type_spec();
    else if ((t->kind == BXC_TYPE_STRUCT || t->kind == BXC_TYPE_ENUM) && t->decl->is_extension) t = t->decl->metadata;
    if (!t || !generatable(t, 0)) return 0;
    pts[i] = t;
  }
  bxc_type *ret = bxc_type_spec();
  if (me) {
    bxc_type *ft = me->value && me->value->ty ? strip(me->value->ty) : NULL;
    if (!ft || ft->kind != BXC_TYPE_FN || !generatable(ft->fn.ret, 0)) return 0;
    ret = ft->fn.ret;
  }
  const char *prefix = bxc_arena_printf(a, "%s_%s", snake(a, trait), fn->name.name);
  unsigned calls = 0;
  if (any_enc) calls += diff_scalars(s, trait, fn, pts, enc, prefix);
  if (!me && !(dt && sh)) return calls;
  for (unsigned k = 0; k < MAX_SETS; k++) {
    BxvValue *args = bxc_arena_alloc(a, (np + 1) * sizeof *args);
    bprintf(&s->harness, "  {\n    bext_meta_error err;\n    memset(&err, 0, sizeof err);\n");
    const char *dcall = "", *scall = "", *mcall = "";
    for (uint32_t i = 0; i < np; i++) {
      buf c = {0};
      gen_value(a, s->stem, pts[i], k * (2 * i + 5) + i * 3 + k / 4, &args[i], &c);
      bprintf(&s->harness, "    %s a%u = %s;\n", ctype(a, s->stem, pts[i]), i, c.d);
      free(c.d);
      bool tensor = strip(fn->params.items[i]->type->ty)->kind == BXC_TYPE_TENSOR;
      dcall = bxc_arena_printf(a, "%s%s, ", dcall, tensor ? bxc_arena_printf(a, "a%u.dtype", i) : bxc_arena_printf(a, "&a%u", i));
      scall = bxc_arena_printf(a, "%s%s, ", scall, tensor ? bxc_arena_printf(a, "&a%u.shape", i) : bxc_arena_printf(a, "&a%u", i));
      mcall = bxc_arena_printf(a, "%s&a%u, ", mcall, i);
    }
    bprintf(&s->harness, "    %s out;\n    memset(&out, 0, sizeof out);\n", ctype(a, s->stem, ret));
    if (me)
      bprintf(&s->harness, "    if (%s_meta(%s&out, &err)) {\n", prefix, mcall);
    else
      bprintf(&s->harness, "    if (%s_meta_dtype(%s&out.dtype, &err) && %s_meta_shape(%s&out.shape, &err)) {\n", prefix,
              dcall, prefix, scall);
    bprintf(&s->harness, "    fputs(\"OK \", stdout);\n");
    canon_c(a, &s->harness, ret, "out");
    bprintf(&s->harness, "    fputs(\"\\n\", stdout);\n    } else printf(\"ERR %%s %%s\\n\", err.code, err.msg);\n  }\n");
    reset_diags(s);
    bxi_free(s->in);
    s->in = bxi_new(&s->idiags);
    bxi_add_unit(s->in, &s->u, 0);
    BxvValue out;
    const char *msg = NULL;
    bprintf(&s->expect, "%s#%u ", prefix, k);
    bxi_meta_status st = bxi_meta(s->in, trait, fn->name.name, args, np, &out, &msg);
    if (st == BXI_META_VALUE) {
      bprintf(&s->expect, "OK ");
      canon_interp(&s->expect, ret, &out);
      bprintf(&s->expect, "\n");
    } else {
      interp_error_line(s, &s->expect);
    }
    s->ncalls++;
  }
  return calls + MAX_SETS;
}

/* Runs the whole comparison for one .bext file; returns the number of
 * calls compared. */
static unsigned diff_file(const char *rel) {
  diff_state s;
  memset(&s, 0, sizeof s);
  if (!cg_try_load(&s.u, rel)) return 0;   /* an invalid example (golden error tests) */
  bxc_arena_init(&s.ia);
  reset_diags(&s);
  s.in = bxi_new(&s.idiags);
  const char *base = strrchr(rel, '/') + 1;
  s.stem = bxc_arena_strndup(&s.u.arena, base, strlen(base) - 5);

  /* generate the C */
  char dir[1024], cmd[8192];
  static unsigned serial;
  snprintf(dir, sizeof dir, "%s/diff%u_%s", cg_tmp(), serial++, s.stem);
  mkdir(dir, 0777);
  cr_assert(bxc_emit_c(&s.u, dir, NULL), "bextc -o failed for %s", rel);

  /* Each call prints one line; the harness prefixes it with the same
   * "<fn>#<k> " label the expectations carry, so a mismatch names the call. */
  buf labels = {0};
  for (uint32_t m = 0; m < s.u.norder; m++) {
    const bxc_module *mod = s.u.order[m];
    for (uint32_t i = 0; mod->ast && i < mod->ast->items.len; i++) {
      const bxc_item *it = mod->ast->items.items[i];
      size_t before = s.expect.n;
      unsigned startc = s.ncalls;
      if (it->kind == BXC_ITEM_FN) diff_helper(&s, mod, it);
      if (it->kind == BXC_ITEM_TRAIT && mod->is_root)
        for (uint32_t k = 0; k < it->trait.methods.len; k++) diff_method(&s, it->name.name, it->trait.methods.items[k]);
      /* record the labels of the calls just added */
      for (size_t p = before; p < s.expect.n;) {
        char *nl = memchr(s.expect.d + p, '\n', s.expect.n - p);
        char *sp = memchr(s.expect.d + p, ' ', s.expect.n - p);
        bprintf(&labels, "%.*s\n", (int)(sp - (s.expect.d + p)), s.expect.d + p);
        p = (size_t)(nl - s.expect.d) + 1;
      }
      (void)startc;
    }
  }
  if (s.ncalls == 0) {   /* nothing to compare in this file */
    free(labels.d);
    free(s.harness.d);
    free(s.expect.d);
    bxi_free(s.in);
    bxc_arena_free_all(&s.ia);
    bxc_unit_free(&s.u);
    return 0;
  }
  /* The harness: main() with every call, each preceded by its label.  It
   * is built with every backend arm compiled out (an empty bext/config.h,
   * so no BEXT_HAVE_*): only the metadata functions are under test, and
   * the dispatch code then references no user implementation. */
  buf prog = {0};
  bprintf(&prog, "#include <stdio.h>\n#include <string.h>\n#include \"%s.h\"\n", s.stem);
  bprintf(&prog, "static void pshape(const bext_meta_shape *s) {\n  fputs(\"[\", stdout);\n"
                 "  for (size_t i = 0; i < s->len; i++) printf(\"%%s%%llu\", i ? \",\" : \"\", (unsigned long long)s->dims[i]);\n"
                 "  fputs(\"]\", stdout);\n}\n");
  bprintf(&prog, "int main(void) {\n  (void)pshape;\n");
  /* splice labels in front of each call block */
  char *h = s.harness.d ? s.harness.d : (char *)"";
  char *lab = labels.d ? labels.d : (char *)"";
  while (*h) {
    char *next = strstr(h + 1, "\n  {\n");
    size_t len = next ? (size_t)(next + 1 - h) : strlen(h);
    char *ln = strchr(lab, '\n');
    if (ln) {
      bprintf(&prog, "  fputs(\"%.*s \", stdout);\n", (int)(ln - lab), lab);
      lab = ln + 1;
    }
    bprintf(&prog, "%.*s", (int)len, h);
    h += len;
  }
  bprintf(&prog, "  return 0;\n}\n");
  char hp[1100];
  snprintf(hp, sizeof hp, "%s/harness.c", dir);
  FILE *f = fopen(hp, "wb");
  cr_assert_not_null(f);
  fputs(prog.d, f);
  fclose(f);
  snprintf(cmd, sizeof cmd,
           /* an empty bext/config.h: no backend arms, the harness calls only
            * metadata functions (no implementations to link) */
           "cd %s && mkdir -p nocfg/bext && : > nocfg/bext/config.h && "
           "%s -std=c11 -w %s -Inocfg -I%s/runtime/include -I. harness.c %s.c %s %s -o harness 2> cc.log && "
           "./harness > got.txt",
           dir, CODEGEN_CC, CODEGEN_SAN, cg_src(), s.stem, CODEGEN_LIBBEXT, CODEGEN_LIBS);
  int rc = cg_run(cmd);
  if (rc != 0) {
    char lp[1100];
    snprintf(lp, sizeof lp, "%s/cc.log", dir);
    char *log = cg_read(lp, NULL);
    cr_assert_fail("harness for %s failed (%d): %s", rel, rc, log ? log : "");
  }
  char gp[1100];
  snprintf(gp, sizeof gp, "%s/got.txt", dir);
  char *got = cg_read(gp, NULL);
  cr_assert_not_null(got);
  /* compare line by line for a readable failure */
  char *g = got, *e = s.expect.d ? s.expect.d : (char *)"";
  unsigned line = 0, mismatches = 0;
  while (*g || *e) {
    char *gn = strchr(g, '\n'), *en = strchr(e, '\n');
    size_t gl = gn ? (size_t)(gn - g) : strlen(g), el = en ? (size_t)(en - e) : strlen(e);
    if (gl != el || memcmp(g, e, gl) != 0) {
      if (mismatches < 10)
        cr_log_error("%s line %u:\n  generated C: %.*s\n  interpreter: %.*s", rel, line, (int)gl, g, (int)el, e);
      mismatches++;
    }
    line++;
    g = gn ? gn + 1 : g + gl;
    e = en ? en + 1 : e + el;
    if (!gn && !en) break;
  }
  cr_assert_eq(mismatches, 0, "%s: %u of %u calls differ between the generated C and the interpreter", rel,
               mismatches, s.ncalls);
  unsigned n = s.ncalls;
  free(got);
  free(prog.d);
  free(labels.d);
  free(s.harness.d);
  free(s.expect.d);
  bxi_free(s.in);
  bxc_arena_free_all(&s.ia);
  bxc_unit_free(&s.u);
  return n;
}

/* Every valid .bext of the test extensions, the language.md examples, the
 * golden tests and the samples (the stdlib comes in through their imports). */
Test(diff, metadata_functions_match_the_interpreter, .timeout = 300) {
  const char *patterns[] = {"tests/codegen/ext/*.bext", "tests/compiler/lang/*.bext", "tests/golden/*.bext",
                            "samples/*/*.bext"};
  unsigned total = 0, files = 0;
  for (size_t i = 0; i < sizeof patterns / sizeof *patterns; i++) {
    char pat[1024];
    snprintf(pat, sizeof pat, "%s/%s", cg_src(), patterns[i]);
    glob_t g;
    if (glob(pat, 0, NULL, &g) != 0) continue;
    for (size_t k = 0; k < g.gl_pathc; k++) {
      unsigned n = diff_file(g.gl_pathv[k] + strlen(cg_src()) + 1);
      total += n;
      files += n > 0;
    }
    globfree(&g);
  }
  cr_log_info("compared %u calls from %u files", total, files);
  cr_assert_gt(total, 300, "too few calls compared (%u): are the helpers found?", total);
}

/* compiler/builtins.h is the one list of builtin methods: every row needs a
 * helper <receiver>_<method> in ext/builtins.bext that calls it, which the
 * differential test above then runs through the checker, the interpreter
 * and the generated C.  A row added without one fails here. */
Test(diff, builtins_table_rows_have_a_helper) {
  const char *rel = "tests/codegen/ext/builtins.bext";
  bxc_unit u;
  cr_assert(cg_try_load(&u, rel), "%s does not check", rel);
  unsigned found = 0;
  for (int id = 0; id < BXC_BM_COUNT; id++) {
    const bxc_builtin_method_info *bm = &bxc_builtin_methods[id];
    char want[64];
    snprintf(want, sizeof want, "%s_%s", bm->recv == BXC_TYPE_SHAPE ? "shape" : "dtype", bm->name);
    cr_assert(bm->recv == BXC_TYPE_SHAPE || bm->recv == BXC_TYPE_DTYPE, "`%s`: a new receiver kind; name it here",
              bm->name);
    bool has = false;
    for (uint32_t m = 0; m < u.norder && !has; m++) {
      const bxc_module *mod = u.order[m];
      for (uint32_t i = 0; mod->is_root && mod->ast && i < mod->ast->items.len; i++) {
        const bxc_item *it = mod->ast->items.items[i];
        if (it->kind == BXC_ITEM_FN && !strcmp(it->fn->name.name, want)) has = true;
      }
    }
    cr_expect(has, "%s has no helper `%s` for the builtin method `%s`", rel, want, bm->name);
    found += has;
  }
  cr_assert_eq(found, (unsigned)BXC_BM_COUNT);
  bxc_unit_free(&u);
}
