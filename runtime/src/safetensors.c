/* safetensors.c — bext_save / bext_load: named tensors in Hugging Face's
 * safetensors format (contracts in bext.h, "data in/out").
 *
 * A file is an 8-byte little-endian header size N, N bytes of JSON
 *   {"__metadata__": {"k": "v"},
 *    "name": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}, ...}
 * padded with spaces to a multiple of 8, then the data buffer; offsets are
 * relative to the buffer, end exclusive, and the tensors tile it exactly.
 *
 * The reader trusts nothing: every rule is checked before a byte of data
 * is used, and each rejection names the file, the tensor and the problem.
 * cJSON parses the header (its parse tree is transient, allocated through
 * cJSON's own process-wide hooks, which libbext leaves to the program);
 * a lexical pass adds what cJSON's doubles cannot tell (a "2.0" where an
 * integer belongs, a "\u0000" that would cut a name short).  Data is read
 * one tensor at a time (pread for files), so loading never holds a second
 * copy of the whole file.  The writer reads tensors through bext_read,
 * writes a temporary file next to the target and renames it over the
 * target once it is on disk. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "backend.h"

/* Data is copied between files and tensors as is. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "safetensors.c moves little-endian data unswapped: a big-endian host needs byte swaps here");

/* The reference implementation's cap on N (a larger header is an attack
 * or a broken file, never a model). */
#define BXR_ST_MAX_HEADER 100000000ull
/* Integers in a header are read through cJSON's doubles: exact up to 2^53,
 * far beyond any real extent or offset. */
#define BXR_ST_MAX_INT 9007199254740992.0

/* The safetensors name of every bext dtype (ORDER DTYPE). */
static const char *const st_dtype_name[BEXT_DTYPE_COUNT] = {
    [BEXT_F32] = "F32", [BEXT_F64] = "F64", [BEXT_F16] = "F16", [BEXT_BF16] = "BF16",
    [BEXT_I32] = "I32", [BEXT_I64] = "I64", [BEXT_U8] = "U8",   [BEXT_BOOL] = "BOOL",
};
_Static_assert(BEXT_DTYPE_COUNT == 8, "a new bext dtype needs its safetensors name in st_dtype_name");
/* Safetensors dtypes bext has no dtype for (a clearer message than "unknown"). */
static const char *const st_foreign[] = {"I8",      "I16",     "U16", "U32",     "U64",     "F8_E5M2",
                                         "F8_E4M3", "F8_E8M0", "F4",  "F6_E2M3", "F6_E3M2", "C64"};

/* Index of the first byte of s[0..n) that is not valid UTF-8, n if none
 * (overlong forms, surrogates and code points past U+10FFFF are invalid). */
static size_t utf8_bad(const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned c = s[i];
    size_t len;
    uint32_t cp;
    if (c < 0x80) { i++; continue; }
    if (c >= 0xc2 && c <= 0xdf) len = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef) len = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4) len = 4, cp = c & 0x07;
    else return i;
    if (n - i < len) return i;
    for (size_t k = 1; k < len; k++) {
      if ((s[i + k] & 0xc0) != 0x80) return i;
      cp = (cp << 6) | (s[i + k] & 0x3f);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
      return i;
    i += len;
  }
  return n;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* =============================================================== loading */

/* One entry of the header. */
struct st_entry {
  const char *name;   /* the cJSON key (alive while the tree is) */
  bext_dtype dt;
  int rank;
  int64_t shape[BEXT_MAX_RANK];
  uint64_t begin, end;
};

/* Where the bytes come from, and what messages call it. */
struct ld {
  const char *api;            /* "bext_load" / "bext_load_bytes" */
  char what[300];             /* "`path`" or "<memory>" */
  const unsigned char *mem;   /* memory source, else fd */
  int fd;
  uint64_t size;
};

static bool ld_err(const struct ld *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool ld_err(const struct ld *L, const char *fmt, ...) {
  char msg[900];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return bxr_error("%s: %s: %s", L->api, L->what, msg);
}

static bool ld_read(const struct ld *L, uint64_t off, void *dst, size_t n) {
  if (L->mem) {
    memcpy(dst, L->mem + off, n);
    return true;
  }
  char *p = dst;
  while (n > 0) {
    ssize_t r = pread(L->fd, p, n, (off_t)off);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return ld_err(L, "reading %zu bytes at offset %" PRIu64 ": %s", n, off, strerror(errno));
    if (r == 0) return ld_err(L, "the file ended at offset %" PRIu64 " while reading (was it truncated meanwhile?)", off);
    p += r, off += (uint64_t)r, n -= (size_t)r;
  }
  return true;
}

static const char *json_kind(const cJSON *j) {
  if (cJSON_IsObject(j)) return "an object";
  if (cJSON_IsArray(j)) return "an array";
  if (cJSON_IsString(j)) return "a string";
  if (cJSON_IsNumber(j)) return "a number";
  if (cJSON_IsBool(j)) return "a boolean";
  return "null";
}

/* What cJSON cannot tell: a number written with a fraction or exponent
 * ("2.0", "1e3": the header holds integers only, in shapes and offsets)
 * and a "\u0000" escape (cJSON's C strings would end there, so two
 * different names could compare equal).  The JSON is valid here; the
 * top-level key being read names the tensor in the message. */
static bool ld_lex(const struct ld *L, const char *h, size_t n) {
  int depth = 0;
  const char *str = "", *key = NULL;
  int slen = 0, keylen = 0;
  for (size_t i = 0; i < n; i++) {
    char c = h[i];
    if (c == '"') {
      size_t j = i + 1;
      for (; j < n && h[j] != '"'; j++)
        if (h[j] == '\\') {
          if (j + 5 < n && h[j + 1] == 'u' && !memcmp(h + j + 2, "0000", 4))
            return ld_err(L, "header string `%.*s` contains \\u0000, which no name or value may hold",
                          (int)(j - i - 1 < 200 ? j - i - 1 : 200), h + i + 1);
          j++;
        }
      str = h + i + 1;
      slen = (int)(j - i - 1 < 200 ? j - i - 1 : 200);
      i = j;
    } else if (c == ':' && depth == 1) {
      key = str, keylen = slen;
    } else if (c == '{' || c == '[') {
      depth++;
    } else if (c == '}' || c == ']') {
      depth--;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      size_t j = i;
      bool integral = true;
      for (; j < n && h[j] && strchr("+-0123456789.eE", h[j]); j++)
        if (h[j] == '.' || h[j] == 'e' || h[j] == 'E') integral = false;
      if (!integral) {
        if (key)
          return ld_err(L, "tensor `%.*s`: `%.*s` (header offset %zu) is not an integer: shapes and data_offsets "
                        "hold integers",
                        keylen, key, (int)(j - i < 40 ? j - i : 40), h + i, i);
        return ld_err(L, "`%.*s` (header offset %zu) is not an integer", (int)(j - i < 40 ? j - i : 40), h + i, i);
      }
      i = j - 1;
    }
  }
  return true;
}

/* A header integer: a JSON number, whole, 0 <= v <= 2^53. */
static bool ld_int(const struct ld *L, const char *name, const char *field, int idx, const cJSON *j, uint64_t *out) {
  if (!cJSON_IsNumber(j))
    return ld_err(L, "tensor `%s`: %s entry %d is %s, expected a non-negative integer", name, field, idx,
                  json_kind(j));
  /* Range before integrality: converting an out-of-range double to an
   * integer type is undefined. */
  double v = j->valuedouble;
  if (v < 0 || v > BXR_ST_MAX_INT || v != floor(v)) {
    if (v < 0 && v >= -BXR_ST_MAX_INT && v == floor(v))
      return ld_err(L, "tensor `%s`: %s entry %d is %.0f, expected a non-negative integer", name, field, idx, v);
    return ld_err(L, "tensor `%s`: %s entry %d is %g, expected a non-negative integer (at most 2^53)", name, field,
                  idx, v);
  }
  *out = (uint64_t)v;
  return true;
}

/* The one field `key` of a tensor entry, or NULL + error (missing, twice). */
static const cJSON *ld_field(const struct ld *L, const char *name, const cJSON *obj, const char *key) {
  const cJSON *found = NULL;
  for (const cJSON *c = obj->child; c; c = c->next)
    if (c->string && !strcmp(c->string, key)) {
      if (found) return ld_err(L, "tensor `%s`: field `%s` appears twice", name, key), NULL;
      found = c;
    }
  if (!found) ld_err(L, "tensor `%s`: no `%s` field (a tensor needs dtype, shape and data_offsets)", name, key);
  return found;
}

static bool ld_entry(const struct ld *L, const cJSON *j, uint64_t data_len, struct st_entry *e) {
  const char *name = j->string;
  e->name = name;
  if (!cJSON_IsObject(j))
    return ld_err(L, "tensor `%s`: expected an object with dtype, shape and data_offsets, found %s", name,
                  json_kind(j));
  const cJSON *dt = ld_field(L, name, j, "dtype"), *shape, *offs;
  if (!dt) return false;
  if (!cJSON_IsString(dt))
    return ld_err(L, "tensor `%s`: dtype is %s, expected a string such as \"F32\"", name, json_kind(dt));
  int found = -1;
  for (int d = 0; d < BEXT_DTYPE_COUNT; d++)
    if (!strcmp(dt->valuestring, st_dtype_name[d])) found = d;
  if (found < 0) {
    for (size_t k = 0; k < sizeof st_foreign / sizeof st_foreign[0]; k++)
      if (!strcmp(dt->valuestring, st_foreign[k]))
        return ld_err(L, "tensor `%s`: dtype \"%s\" has no bext dtype (bext reads F32 F64 F16 BF16 I32 I64 U8 BOOL)",
                      name, dt->valuestring);
    return ld_err(L, "tensor `%s`: unknown dtype \"%.40s\" (bext reads F32 F64 F16 BF16 I32 I64 U8 BOOL)", name,
                  dt->valuestring);
  }
  e->dt = (bext_dtype)found;
  if (!(shape = ld_field(L, name, j, "shape"))) return false;
  if (!cJSON_IsArray(shape))
    return ld_err(L, "tensor `%s`: shape is %s, expected an array of extents", name, json_kind(shape));
  int rank = cJSON_GetArraySize(shape);
  if (rank > BEXT_MAX_RANK)
    return ld_err(L, "tensor `%s`: shape has %d dims, bext tensors have at most %d", name, rank, BEXT_MAX_RANK);
  e->rank = rank;
  int k = 0;
  uint64_t numel = 1;
  bool overflow = false;
  for (const cJSON *c = shape->child; c; c = c->next, k++) {
    uint64_t v;
    if (!ld_int(L, name, "shape", k, c, &v)) return false;
    e->shape[k] = (int64_t)v;
    overflow |= __builtin_mul_overflow(numel, v, &numel);
  }
  if (!(offs = ld_field(L, name, j, "data_offsets"))) return false;
  if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2)
    return ld_err(L, "tensor `%s`: data_offsets is %s%s, expected [begin, end]", name, json_kind(offs),
                  cJSON_IsArray(offs) ? " of the wrong length" : "");
  if (!ld_int(L, name, "data_offsets", 0, offs->child, &e->begin) ||
      !ld_int(L, name, "data_offsets", 1, offs->child->next, &e->end))
    return false;
  if (e->begin > e->end)
    return ld_err(L, "tensor `%s`: data_offsets [%" PRIu64 ", %" PRIu64 "] end before they begin", name, e->begin,
                  e->end);
  if (e->end > data_len)
    return ld_err(L, "tensor `%s`: data_offsets [%" PRIu64 ", %" PRIu64 "] run past the end of the data (%" PRIu64
                  " bytes)",
                  name, e->begin, e->end, data_len);
  uint64_t need;
  overflow |= __builtin_mul_overflow(numel, (uint64_t)bext_dtype_size(e->dt), &need);
  char sh[200];
  bxr_describe_shape(e->rank, e->shape, sh, sizeof sh);
  if (overflow)
    return ld_err(L, "tensor `%s`: shape %s %s needs more bytes than 64 bits count", name, sh,
                  bext_dtype_name(e->dt));
  if (need != e->end - e->begin)
    return ld_err(L, "tensor `%s`: data_offsets [%" PRIu64 ", %" PRIu64 "] hold %" PRIu64 " bytes, but shape %s %s "
                  "needs %" PRIu64,
                  name, e->begin, e->end, e->end - e->begin, sh, bext_dtype_name(e->dt), need);
  return true;
}

static int cmp_offsets(const void *a, const void *b) {
  const struct st_entry *x = a, *y = b;
  if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
  if (x->end != y->end) return x->end < y->end ? -1 : 1;
  return strcmp(x->name, y->name);
}

struct bext_tensor_file {
  struct bxr_hook hook;   /* the block outlives the call: freed to its own hook */
  size_t bytes;
  int n, nmeta;
  char **names;           /* sorted, with t in the same order */
  bext_tensor **t;
  char **mkey, **mval;
};

/* Copies s into the block at *at. */
static char *put_str(char **at, const char *s) {
  size_t n = strlen(s) + 1;
  char *r = memcpy(*at, s, n);
  *at += n;
  return r;
}

void bext_file_close(bext_tensor_file *f) {
  if (!f) return;
  for (int i = 0; i < f->n; i++) bext_release(f->t[i]);
  bxr_free_to(f->hook, f, f->bytes);
}

static bext_tensor_file *load(struct ld *L, const bext_device *dev) {
  unsigned char len8[8];
  if (L->size < 8)
    return ld_err(L, "the file has %" PRIu64 " bytes, fewer than the 8 of the header size", L->size), NULL;
  if (!ld_read(L, 0, len8, 8)) return NULL;
  uint64_t N = 0;
  for (int i = 7; i >= 0; i--) N = N << 8 | len8[i];
  if (N > BXR_ST_MAX_HEADER)
    return ld_err(L, "header size %" PRIu64 " exceeds the limit of %llu bytes", N, BXR_ST_MAX_HEADER), NULL;
  if (N > L->size - 8)
    return ld_err(L, "header size %" PRIu64 " runs past the end of the file (%" PRIu64 " bytes after the size)", N,
                  L->size - 8),
           NULL;
  const uint64_t data_at = 8 + N, data_len = L->size - data_at;

  bext_tensor_file *f = NULL;
  cJSON *root = NULL;
  struct st_entry *e = NULL;
  size_t ecap = 0;
  char *h = bxr_alloc((size_t)N + 1);
  if (!h) return NULL;
  if (!ld_read(L, 8, h, (size_t)N)) goto out;
  h[N] = 0;
  size_t bad = utf8_bad((const unsigned char *)h, (size_t)N);
  if (bad < N) {
    ld_err(L, "header is not valid UTF-8 (byte 0x%02x at header offset %zu)", (unsigned char)h[bad], bad);
    goto out;
  }
  const char *end = NULL;
  root = cJSON_ParseWithLengthOpts(h, (size_t)N, &end, false);
  if (!root) {
    size_t at = end && end >= h && end <= h + N ? (size_t)(end - h) : 0;
    ld_err(L, "header is not valid JSON (error at header offset %zu: `%.20s`)", at, h + at);
    goto out;
  }
  size_t json_end = end && end >= h && end <= h + N ? (size_t)(end - h) : (size_t)N;
  for (size_t i = json_end; i < N; i++)
    if (!strchr(" \t\r\n", h[i]) || !h[i]) {
      ld_err(L, "header has `%.20s` after its JSON object (header offset %zu): only space padding may follow", h + i,
             i);
      goto out;
    }
  if (!cJSON_IsObject(root)) {
    ld_err(L, "header is %s, expected an object mapping tensor names to dtype, shape and data_offsets",
           json_kind(root));
    goto out;
  }
  if (!ld_lex(L, h, json_end)) goto out;

  /* Entries in header order; "__metadata__" apart. */
  const cJSON *meta = NULL;
  int n = 0, nmeta = 0;
  size_t strbytes = 0;
  for (const cJSON *c = root->child; c; c = c->next) {
    if (!strcmp(c->string, "__metadata__")) {
      if (meta) { ld_err(L, "`__metadata__` appears twice"); goto out; }
      meta = c;
      if (!cJSON_IsObject(c)) {
        ld_err(L, "`__metadata__` is %s, expected an object of strings", json_kind(c));
        goto out;
      }
      for (const cJSON *m = c->child; m; m = m->next, nmeta++) {
        if (!cJSON_IsString(m)) {
          ld_err(L, "`__metadata__` key `%.200s` holds %s, expected a string", m->string, json_kind(m));
          goto out;
        }
        strbytes += strlen(m->string) + strlen(m->valuestring) + 2;
      }
      continue;
    }
    n++;
    strbytes += strlen(c->string) + 1;
  }
  ecap = (size_t)(n ? n : 1) * sizeof *e;
  if (!(e = bxr_alloc(ecap))) goto out;
  int k = 0;
  for (const cJSON *c = root->child; c; c = c->next)
    if (c != meta && !ld_entry(L, c, data_len, &e[k++])) goto out;

  /* Names once each (metadata keys too), then the tiling of the data. */
  qsort(e, (size_t)n, sizeof *e, cmp_offsets);
  {
    size_t nb = (size_t)(n ? n : 1) * sizeof(char *);
    const char **nm = bxr_alloc(nb);
    if (!nm) goto out;
    for (int i = 0; i < n; i++) nm[i] = e[i].name;
    qsort(nm, (size_t)n, sizeof *nm, cmp_str);
    for (int i = 1; i < n; i++)
      if (!strcmp(nm[i - 1], nm[i])) {
        ld_err(L, "tensor `%.200s` appears twice in the header", nm[i]);
        bxr_free(nm, nb);
        goto out;
      }
    bxr_free(nm, nb);
    nb = (size_t)(nmeta ? nmeta : 1) * sizeof(char *);
    if (!(nm = bxr_alloc(nb))) goto out;
    int m = 0;
    if (meta)
      for (const cJSON *c = meta->child; c; c = c->next) nm[m++] = c->string;
    qsort(nm, (size_t)nmeta, sizeof *nm, cmp_str);
    for (int i = 1; i < nmeta; i++)
      if (!strcmp(nm[i - 1], nm[i])) {
        ld_err(L, "`__metadata__` key `%.200s` appears twice", nm[i]);
        bxr_free(nm, nb);
        goto out;
      }
    bxr_free(nm, nb);
  }
  uint64_t at = 0;
  for (int i = 0; i < n; i++) {
    if (e[i].begin > at) {
      ld_err(L, "tensor `%s`: data_offsets [%" PRIu64 ", %" PRIu64 "] leave a hole: bytes [%" PRIu64 ", %" PRIu64
             ") of the data belong to no tensor",
             e[i].name, e[i].begin, e[i].end, at, e[i].begin);
      goto out;
    }
    if (e[i].begin < at) {
      const struct st_entry *o = &e[i - 1];
      for (int p = i - 1; p >= 0; p--)
        if (e[p].end > e[i].begin) { o = &e[p]; break; }
      ld_err(L, "tensor `%s`: data_offsets [%" PRIu64 ", %" PRIu64 "] overlap tensor `%s`'s [%" PRIu64 ", %" PRIu64
             "]",
             e[i].name, e[i].begin, e[i].end, o->name, o->begin, o->end);
      goto out;
    }
    at = e[i].end;
  }
  if (at != data_len) {
    ld_err(L, "the data has %" PRIu64 " bytes but the tensors end at %" PRIu64 ": %" PRIu64
           " bytes of trailing garbage",
           data_len, at, data_len - at);
    goto out;
  }

  /* The file object: one block holding the arrays and the strings. */
  struct bxr_hook hook = bxr_hook_now();
  size_t bytes = sizeof *f + (size_t)n * (sizeof(char *) + sizeof(bext_tensor *)) +
                 (size_t)nmeta * 2 * sizeof(char *) + strbytes;
  if (!(f = bxr_alloc_from(hook, bytes))) goto out;
  memset(f, 0, sizeof *f);
  f->hook = hook;
  f->bytes = bytes;
  f->names = (char **)(f + 1);
  f->t = (bext_tensor **)(f->names + n);
  f->mkey = (char **)(f->t + n);
  f->mval = f->mkey + nmeta;
  char *sp = (char *)(f->mval + nmeta);
  if (meta)
    for (const cJSON *m = meta->child; m; m = m->next, f->nmeta++) {
      f->mkey[f->nmeta] = put_str(&sp, m->string);
      f->mval[f->nmeta] = put_str(&sp, m->valuestring);
    }
  /* Data in file order (sequential reads); the staging buffer only for
   * files (memory is read in place) and sized to the largest tensor. */
  size_t stage_n = 0;
  unsigned char *stage = NULL;
  if (!L->mem)
    for (int i = 0; i < n; i++)
      if (e[i].end - e[i].begin > stage_n) stage_n = (size_t)(e[i].end - e[i].begin);
  if (stage_n && !(stage = bxr_alloc(stage_n))) goto fail;
  for (int i = 0; i < n; i++) {
    size_t nb = (size_t)(e[i].end - e[i].begin);
    const unsigned char *src = L->mem ? L->mem + data_at + e[i].begin : stage;
    if (!L->mem && nb && !ld_read(L, data_at + e[i].begin, stage, nb)) goto fail_stage;
    if (e[i].dt == BEXT_BOOL)
      for (size_t b = 0; b < nb; b++)
        if (src[b] > 1) {
          ld_err(L, "tensor `%s`: bool element %zu is byte %u (file offset %" PRIu64 "), expected 0 or 1", e[i].name,
                 b, src[b], data_at + e[i].begin + b);
          goto fail_stage;
        }
    uint64_t before = bext_error_count();
    bext_tensor *t = bext_from_data(nb ? src : NULL, e[i].dt, e[i].shape, e[i].rank, dev);
    if (!t) {
      char why[600];
      snprintf(why, sizeof why, "%s", bext_error_count() != before ? bext_last_error() : "failed");
      ld_err(L, "tensor `%s`: %s", e[i].name, why);
      goto fail_stage;
    }
    f->names[f->n] = put_str(&sp, e[i].name);
    f->t[f->n++] = t;
  }
  if (stage) bxr_free(stage, stage_n);
  /* Sorted by name, each tensor alongside its name. */
  {
    struct named { char *name; bext_tensor *t; } *pairs;
    size_t pb = (size_t)(n ? n : 1) * sizeof *pairs;
    if (!(pairs = bxr_alloc(pb))) goto fail;
    for (int i = 0; i < n; i++) pairs[i] = (struct named){f->names[i], f->t[i]};
    qsort(pairs, (size_t)n, sizeof *pairs, cmp_str);   /* name is the first member */
    for (int i = 0; i < n; i++) f->names[i] = pairs[i].name, f->t[i] = pairs[i].t;
    bxr_free(pairs, pb);
  }
  goto out;
fail_stage:
  if (stage) bxr_free(stage, stage_n);
fail:
  bext_file_close(f);
  f = NULL;
out:
  if (e) bxr_free(e, ecap);
  cJSON_Delete(root);
  bxr_free(h, (size_t)N + 1);
  return f;
}

bext_tensor_file *bext_load(const char *path, const bext_device *dev) {
  if (!path) return bxr_error("bext_load: path is NULL"), NULL;
  struct ld L = {.api = "bext_load", .fd = -1};
  snprintf(L.what, sizeof L.what, "`%s`", path);
  L.fd = open(path, O_RDONLY | O_CLOEXEC);
  if (L.fd < 0) return ld_err(&L, "cannot open: %s", strerror(errno)), NULL;
  struct stat st;
  bext_tensor_file *f = NULL;
  if (fstat(L.fd, &st) != 0) ld_err(&L, "cannot stat: %s", strerror(errno));
  else if (!S_ISREG(st.st_mode)) ld_err(&L, "is not a regular file");
  else {
    L.size = (uint64_t)st.st_size;
    f = load(&L, dev);
  }
  close(L.fd);
  return f;
}

bext_tensor_file *bext_load_bytes(const void *bytes, size_t n, const bext_device *dev) {
  static const unsigned char none[1];
  struct ld L = {.api = "bext_load_bytes", .what = "<memory>", .mem = bytes ? bytes : none, .size = n};
  if (!bytes && n) return ld_err(&L, "bytes is NULL but n is %zu", n), NULL;
  return load(&L, dev);
}

int bext_file_count(const bext_tensor_file *f) {
  if (!f) return bxr_error("bext_file_count: NULL file"), 0;
  return f->n;
}

const char *bext_file_name(const bext_tensor_file *f, int i) {
  if (!f) return bxr_error("bext_file_name: NULL file"), NULL;
  if (i < 0 || i >= f->n) return bxr_error("bext_file_name: index %d out of range (the file has %d tensors)", i, f->n), NULL;
  return f->names[i];
}

bext_tensor *bext_file_tensor(const bext_tensor_file *f, int i) {
  if (!f) return bxr_error("bext_file_tensor: NULL file"), NULL;
  if (i < 0 || i >= f->n)
    return bxr_error("bext_file_tensor: index %d out of range (the file has %d tensors)", i, f->n), NULL;
  return bext_retain(f->t[i]);
}

bext_tensor *bext_file_get(const bext_tensor_file *f, const char *name) {
  if (!f) return bxr_error("bext_file_get: NULL file"), NULL;
  if (!name) return bxr_error("bext_file_get: name is NULL"), NULL;
  int lo = 0, hi = f->n - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2, c = strcmp(f->names[mid], name);
    if (c == 0) return bext_retain(f->t[mid]);
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  /* Name what there is: the first few names, enough to spot a typo. */
  char list[400] = "";
  size_t at = 0;
  for (int i = 0; i < f->n && at + 4 < sizeof list; i++) {
    int w = snprintf(list + at, sizeof list - at, "%s`%s`", i ? ", " : "", f->names[i]);
    if (w < 0 || (size_t)w >= sizeof list - at) {
      snprintf(list + (at < sizeof list - 5 ? at : sizeof list - 5), 5, "...");
      break;
    }
    at += (size_t)w;
  }
  return bxr_error("bext_file_get: no tensor `%.200s` in the file (it has %d: %s)", name, f->n, list), NULL;
}

const char *bext_file_meta(const bext_tensor_file *f, const char *key) {
  if (!f) return bxr_error("bext_file_meta: NULL file"), NULL;
  if (!key) return bxr_error("bext_file_meta: key is NULL"), NULL;
  for (int i = 0; i < f->nmeta; i++)
    if (!strcmp(f->mkey[i], key)) return f->mval[i];
  return NULL;
}

/* ================================================================ saving */

/* A growing text buffer through the allocation hook (scratch). */
struct sbuf {
  char *p;
  size_t n, cap;
  bool oom;
};

static void sb_put(struct sbuf *b, const char *s, size_t n) {
  if (b->oom) return;
  if (b->n + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + n) cap *= 2;
    char *q = bxr_alloc(cap);
    if (!q) { b->oom = true; return; }
    if (b->p) memcpy(q, b->p, b->n), bxr_free(b->p, b->cap);
    b->p = q, b->cap = cap;
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
}
static void sb_str(struct sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }
static void sb_u64(struct sbuf *b, uint64_t v) {
  char t[24];
  sb_put(b, t, (size_t)snprintf(t, sizeof t, "%" PRIu64, v));
}
/* A JSON string, escaped as the reference writer (serde_json) does. */
static void sb_json(struct sbuf *b, const char *s) {
  sb_put(b, "\"", 1);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    const char *esc = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\b' ? "\\b" : c == '\f' ? "\\f"
                    : c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : NULL;
    if (esc) sb_str(b, esc);
    else if (c < 0x20) {
      char t[8];
      snprintf(t, sizeof t, "\\u%04x", c);
      sb_str(b, t);
    } else sb_put(b, (const char *)&c, 1);
  }
  sb_put(b, "\"", 1);
}

struct sv_item {
  const char *name;
  const bext_tensor *t;
  int index;
};
static int cmp_save_name(const void *a, const void *b) {
  const struct sv_item *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : x->index - y->index;
}
/* Data order: element size, largest first (every tensor then starts
 * aligned to its element size), then name. */
static int cmp_save(const void *a, const void *b) {
  const struct sv_item *x = a, *y = b;
  size_t sx = bext_dtype_size(x->t->dtype), sy = bext_dtype_size(y->t->dtype);
  if (sx != sy) return sx > sy ? -1 : 1;
  return strcmp(x->name, y->name);
}

static bool write_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n > 0) {
    ssize_t w = write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w, n -= (size_t)w;
  }
  return true;
}

/* Writes tensor t's row-major bytes: straight from host memory when it is
 * laid out that way, else through bext_read into scratch. */
static bool write_tensor(int fd, const bext_tensor *t, const char *path, const char *name) {
  size_t nb = (size_t)bxr_numel(t->rank, t->shape) * bext_dtype_size(t->dtype);
  if (nb == 0) return true;
  if (t->device->vt && t->device->vt->host_memory && bxr_is_contiguous(t)) {
    if (write_all(fd, bxr_data(t), nb)) return true;
    return bxr_error("bext_save: `%s`: writing tensor `%s`: %s", path, name, strerror(errno));
  }
  void *tmp = bxr_alloc(nb);
  if (!tmp) return false;
  bool ok = bext_read(t, tmp, nb);
  if (!ok) {
    char why[600];
    snprintf(why, sizeof why, "%s", bext_last_error());
    bxr_error("bext_save: `%s`: reading tensor `%s`: %s", path, name, why);
  } else if (!write_all(fd, tmp, nb)) {
    ok = bxr_error("bext_save: `%s`: writing tensor `%s`: %s", path, name, strerror(errno));
  }
  bxr_free(tmp, nb);
  return ok;
}

bool bext_save(const char *path, const char *const *names, bext_tensor *const *tensors, int n,
               const char *const *metadata) {
  if (!path) return bxr_error("bext_save: path is NULL");
  if (n < 0) return bxr_error("bext_save: `%s`: n is %d, expected >= 0", path, n);
  if (n > 0 && (!names || !tensors))
    return bxr_error("bext_save: `%s`: %s is NULL but n is %d", path, !names ? "names" : "tensors", n);
  for (int i = 0; i < n; i++) {
    const char *nm = names[i];
    if (!nm) return bxr_error("bext_save: `%s`: name %d is NULL", path, i);
    if (!*nm) return bxr_error("bext_save: `%s`: name %d is empty", path, i);
    if (!strcmp(nm, "__metadata__"))
      return bxr_error("bext_save: `%s`: name %d is `__metadata__`, the key the format keeps for metadata", path, i);
    if (utf8_bad((const unsigned char *)nm, strlen(nm)) < strlen(nm))
      return bxr_error("bext_save: `%s`: name %d is not valid UTF-8", path, i);
    if (!tensors[i])
      return bxr_error_null("bext_save: `%s`: tensor %d (`%.200s`) is a NULL tensor handle", path, i, nm);
  }
  int nmeta = 0;
  if (metadata)
    for (; metadata[2 * nmeta]; nmeta++) {
      const char *k = metadata[2 * nmeta], *v = metadata[2 * nmeta + 1];
      if (!v) return bxr_error("bext_save: `%s`: metadata key `%.200s` has no value (NULL)", path, k);
      if (utf8_bad((const unsigned char *)k, strlen(k)) < strlen(k) ||
          utf8_bad((const unsigned char *)v, strlen(v)) < strlen(v))
        return bxr_error("bext_save: `%s`: metadata `%.200s` is not valid UTF-8", path, k);
      for (int j = 0; j < nmeta; j++)
        if (!strcmp(metadata[2 * j], k)) return bxr_error("bext_save: `%s`: metadata key `%.200s` is given twice", path, k);
    }

  size_t ib = (size_t)(n ? n : 1) * sizeof(struct sv_item);
  struct sv_item *it = bxr_alloc(ib);
  if (!it) return false;
  for (int i = 0; i < n; i++) it[i] = (struct sv_item){names[i], tensors[i], i};
  qsort(it, (size_t)n, sizeof *it, cmp_save_name);
  for (int i = 1; i < n; i++)
    if (!strcmp(it[i - 1].name, it[i].name)) {
      int a = it[i - 1].index < it[i].index ? it[i - 1].index : it[i].index;
      int b = it[i - 1].index ^ it[i].index ^ a;
      bxr_free(it, ib);
      return bxr_error("bext_save: `%s`: name `%.200s` is given twice (tensors %d and %d)", path, names[a], a, b);
    }
  qsort(it, (size_t)n, sizeof *it, cmp_save);

  /* The header: compact JSON, metadata first, tensors in data order. */
  struct sbuf h = {0};
  sb_str(&h, "{");
  if (nmeta) {
    sb_str(&h, "\"__metadata__\":{");
    for (int j = 0; j < nmeta; j++) {
      if (j) sb_str(&h, ",");
      sb_json(&h, metadata[2 * j]);
      sb_str(&h, ":");
      sb_json(&h, metadata[2 * j + 1]);
    }
    sb_str(&h, "}");
    if (n) sb_str(&h, ",");
  }
  uint64_t off = 0;
  for (int i = 0; i < n; i++) {
    const bext_tensor *t = it[i].t;
    if (i) sb_str(&h, ",");
    sb_json(&h, it[i].name);
    sb_str(&h, ":{\"dtype\":\"");
    sb_str(&h, st_dtype_name[t->dtype]);
    sb_str(&h, "\",\"shape\":[");
    for (int d = 0; d < t->rank; d++) {
      if (d) sb_str(&h, ",");
      sb_u64(&h, (uint64_t)t->shape[d]);
    }
    uint64_t nb = (uint64_t)bxr_numel(t->rank, t->shape) * bext_dtype_size(t->dtype);
    sb_str(&h, "],\"data_offsets\":[");
    sb_u64(&h, off);
    sb_str(&h, ",");
    sb_u64(&h, off + nb);
    sb_str(&h, "]}");
    off += nb;
  }
  sb_str(&h, "}");
  while (h.n % 8) sb_str(&h, " ");
  bool ok = false, created = false;
  int fd = -1;
  char tmp[4200];
  static _Atomic unsigned counter;
  if (h.oom) goto done;
  if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp-%ld-%u", path, (long)getpid(), counter++) >= sizeof tmp) {
    bxr_error("bext_save: `%.200s...`: path too long", path);
    goto done;
  }
  fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    bxr_error("bext_save: `%s`: cannot create the temporary file `%s`: %s", path, tmp, strerror(errno));
    goto done;
  }
  created = true;
  unsigned char len8[8];
  for (int b = 0; b < 8; b++) len8[b] = (unsigned char)((uint64_t)h.n >> (8 * b));
  if (!write_all(fd, len8, 8) || !write_all(fd, h.p, h.n)) {
    bxr_error("bext_save: `%s`: writing `%s`: %s", path, tmp, strerror(errno));
    goto done;
  }
  for (int i = 0; i < n; i++)
    if (!write_tensor(fd, it[i].t, path, it[i].name)) goto done;
  if (fsync(fd) != 0) {
    bxr_error("bext_save: `%s`: flushing `%s` to disk: %s", path, tmp, strerror(errno));
    goto done;
  }
  int rc = close(fd);
  fd = -1;
  if (rc != 0) {
    bxr_error("bext_save: `%s`: closing `%s`: %s", path, tmp, strerror(errno));
    goto done;
  }
  if (rename(tmp, path) != 0) {
    bxr_error("bext_save: `%s`: renaming `%s` over it: %s", path, tmp, strerror(errno));
    goto done;
  }
  ok = true;
done:
  if (fd >= 0) close(fd);
  if (!ok && created) unlink(tmp);
  if (h.p) bxr_free(h.p, h.cap);
  bxr_free(it, ib);
  return ok;
}
