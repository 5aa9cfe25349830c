/* e2e_desc.c — the generated descriptor members of ext/desc.bext, through
 * the registry as a decorator or Remote would meet them (runtime/include/
 * bext/ext.h, docs/codegen.md "Descriptors"): the op id override, the hash
 * and the encoding of ordinary arguments (round trips, what changes the
 * hash and what does not, malformed input and a short fuzz), the scalars
 * against bext-repl's `:scalars` for the same call, and `meta` against the
 * outputs the implementations really produce.
 *
 * The argument structs are mirrored here from the documented layout (one
 * field per parameter in declaration order, tensors as handles, everything
 * else by value); each test checks args_size against the mirror. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "desc.h"

struct scale_args {
  bext_tensor *x;
  float factor;
  uint32_t steps;
  bool exact;
};
struct shaped_args {
  bext_tensor *x;
  bext_meta_shape s;
  bext_dtype d;
  bext_meta_spec spec;
  size_t n;
  ptrdiff_t i;
};
struct held_args {
  Held h;
  Plain p;
  Mode m;
  float a;
  Level lv;
  Knob kb;
};
struct pick_args {
  Pick p;
  bext_tensor *x;
  double f;
  int16_t a;
  int64_t b;
  uint8_t c;
  uint64_t d;
  size_t e;
  ptrdiff_t g;
  Mode m;
  desc_tuple2_u32_bool t;
};

static const bext_ext_method *method(const char *id, size_t args_size) {
  const bext_ext_method *m = bext_ext_find("Desc", id);
  cr_assert_not_null(m, "Desc/%s is not registered", id);
  cr_assert_eq(m->args_size, args_size, "Desc/%s: the argument struct is not the documented layout", id);
  cr_assert(m->args_hash && m->args_encode && m->args_decode && m->scalars);
  return m;
}

static bext_tensor *tensor(int64_t r, int64_t c, bext_dtype dt) {
  const bext_device *d = bext_device_get("flex");
  cr_assert_not_null(d);
  int64_t shape[2] = {r, c};
  return bext_zeros(shape, 2, dt, d);
}

static struct held_args held_sample(void) {
  struct held_args a;
  memset(&a, 0, sizeof a);
  a.h.k = 3;
  a.h.on = true;
  a.p.a = -5;
  a.p.b._0 = 7;
  a.p.b._1 = 0.5f;
  a.p.m.tag = MODE_EXACT;
  a.m.tag = MODE_EXACT;
  a.a = 1.25f;
  a.lv.value = -300;
  a.kb.tag = KNOB_BOTH;
  a.kb.as.Both.lo = -4;
  a.kb.as.Both.hi = 2.75;
  return a;
}

static struct pick_args pick_sample(void) {
  struct pick_args a;
  memset(&a, 0, sizeof a);
  a.p.tag = PICK_TWO;
  a.p.as.Two.w = -1.5;
  a.f = 0.75;
  a.a = -2;
  a.b = -9000000000;
  a.c = 200;
  a.d = 18000000000000000000u;
  a.e = 12;
  a.g = -12;
  a.m.tag = MODE_EXACT;
  a.t._0 = 5;
  a.t._1 = false;
  return a;
}

static struct shaped_args shaped_sample(void) {
  struct shaped_args a;
  memset(&a, 0, sizeof a);
  a.s.len = 2;
  a.s.dims[0] = 4;
  a.s.dims[1] = 5;
  a.d = BEXT_F64;
  a.spec.shape.len = 3;
  a.spec.shape.dims[0] = 1;
  a.spec.shape.dims[1] = 2;
  a.spec.shape.dims[2] = 3;
  a.spec.dtype = BEXT_I32;
  a.n = 3;
  a.i = -1;
  return a;
}

/* encode into a fresh buffer of exactly the announced size */
static unsigned char *encode(const bext_ext_method *m, const void *args, size_t *len) {
  *len = m->args_encode(args, NULL, 0);
  cr_assert_gt(*len, 0);
  unsigned char *buf = malloc(*len);
  cr_assert_eq(m->args_encode(args, buf, *len), *len);
  return buf;
}

/* encode -> decode -> encode gives the same bytes, and decode reads them all */
static void round_trip(const bext_ext_method *m, const void *args) {
  size_t n, n2;
  unsigned char *e1 = encode(m, args, &n);
  void *back = malloc(m->args_size);
  memset(back, 0xa5, m->args_size);   /* decode zeroes it first */
  cr_assert_eq(m->args_decode(back, e1, n), n, "%s: decode of its own encoding", m->what);
  unsigned char *e2 = encode(m, back, &n2);
  cr_assert_eq(n2, n);
  cr_assert(memcmp(e1, e2, n) == 0, "%s: the round trip changed the encoding", m->what);
  cr_assert_eq(m->args_hash(back), m->args_hash(args));
  /* tensors do not travel: every slot of the decoded struct is NULL */
  bext_ext_slot slots[BEXT_EXT_MAX_SLOTS];
  int ns = m->in_slots(back, slots);
  for (int i = 0; i < ns; i++) cr_assert_null(*slots[i].at, "%s: slot %s", m->what, slots[i].name);
  free(e1);
  free(e2);
  free(back);
}

Test(desc, op_id_override_is_the_registry_key) {
  const bext_ext_method *m = bext_ext_find("Desc", "desc_scale");
  cr_assert_not_null(m);
  cr_assert_str_eq(m->method, "scale");
  cr_assert_str_eq(m->id, "desc_scale");
  cr_assert_null(bext_ext_find("Desc", "scale"), "the method name is not a key once an id is given");
  cr_assert_str_eq(bext_ext_find("Desc", "held")->id, "held");
}

Test(desc, encoding_round_trips_every_ordinary_type) {
  struct held_args h = held_sample();
  round_trip(method("held", sizeof h), &h);
  h.kb.tag = KNOB_DIAL;
  h.kb.as.Dial._0 = 65535;
  round_trip(method("held", sizeof h), &h);
  h.kb.tag = KNOB_OFF;
  round_trip(method("held", sizeof h), &h);

  struct pick_args p = pick_sample();
  const bext_ext_method *pm = method("pick", sizeof p);
  round_trip(pm, &p);
  p.p.tag = PICK_ONE;
  p.p.as.One._1 = -128;
  round_trip(pm, &p);
  p.p.tag = PICK_NOTHING;
  round_trip(pm, &p);

  struct shaped_args s = shaped_sample();
  const bext_ext_method *sm = method("shaped", sizeof s);
  round_trip(sm, &s);
  s.s.len = BEXT_SHAPE_CAP;
  for (int i = 0; i < BEXT_SHAPE_CAP; i++) s.s.dims[i] = UINT64_MAX - (uint64_t)i;
  s.spec.shape.len = 0;
  round_trip(sm, &s);

  /* floats travel by bit pattern: -0.0 and a NaN payload survive */
  struct scale_args a = {NULL, -0.0f, 4, true};
  const bext_ext_method *am = method("desc_scale", sizeof a);
  round_trip(am, &a);
  struct scale_args b = a;
  b.factor = 0.0f;
  cr_assert_neq(am->args_hash(&a), am->args_hash(&b), "-0.0 and 0.0 are different arguments");
  uint32_t nan_bits = 0x7fc01234u;
  memcpy(&a.factor, &nan_bits, 4);
  size_t n;
  unsigned char *e = encode(am, &a, &n);
  struct scale_args back;
  cr_assert_eq(am->args_decode(&back, e, n), n);
  uint32_t got;
  memcpy(&got, &back.factor, 4);
  cr_assert_eq(got, nan_bits);
  free(e);
}

/* The documented format, byte for byte, on one method. */
Test(desc, encoding_is_the_documented_little_endian_format) {
  struct scale_args a = {NULL, 1.0f, 0x01020304u, true};
  const bext_ext_method *m = method("desc_scale", sizeof a);
  unsigned char buf[16];
  size_t n = m->args_encode(&a, buf, sizeof buf);
  const unsigned char want[] = {1, 0x00, 0x00, 0x80, 0x3f, 0x04, 0x03, 0x02, 0x01, 1};
  cr_assert_eq(n, sizeof want);
  cr_assert(memcmp(buf, want, n) == 0);
  /* a short buffer gets a prefix and the full length */
  unsigned char small[4] = {0};
  cr_assert_eq(m->args_encode(&a, small, sizeof small), sizeof want);
  cr_assert(memcmp(small, want, sizeof small) == 0);
  /* FNV-1a 64 of those bytes */
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ want[i]) * 0x100000001b3ull;
  cr_assert_eq(m->args_hash(&a), h);
}

Test(desc, hash_follows_ordinary_fields_not_tensors) {
  const bext_ext_method *m = method("held", sizeof(struct held_args));
  struct held_args base = held_sample();
  uint64_t h0 = m->args_hash(&base);
  struct held_args t = base;
  t.h.t = tensor(2, 2, BEXT_F32);
  cr_assert_eq(m->args_hash(&t), h0, "a tensor is not an ordinary argument");
  bext_release(t.h.t);
#define DIFFERS(change)                                                        \
  do {                                                                         \
    struct held_args v = base;                                                 \
    change;                                                                    \
    cr_assert_neq(m->args_hash(&v), h0, "unchanged hash after `%s`", #change); \
  } while (0)
  DIFFERS(v.h.k = 4);
  DIFFERS(v.h.on = false);
  DIFFERS(v.p.a = -6);
  DIFFERS(v.p.b._0 = 8);
  DIFFERS(v.p.b._1 = 0.25f);
  DIFFERS(v.p.m.tag = MODE_FAST);
  DIFFERS(v.m.tag = MODE_FAST);
  DIFFERS(v.a = 1.5f);
  DIFFERS(v.lv.value = 300);
  DIFFERS(v.kb.as.Both.lo = 4);
  DIFFERS(v.kb.as.Both.hi = 2.5);
  DIFFERS(v.kb.tag = KNOB_OFF);
#undef DIFFERS
  /* the inactive variant's bytes are not part of the value */
  struct held_args off1 = base, off2 = base;
  off1.kb.tag = off2.kb.tag = KNOB_OFF;
  off2.kb.as.Both.lo = 99;
  cr_assert_eq(m->args_hash(&off1), m->args_hash(&off2));

  /* an extension enum's tag decides which slots exist: it is hashed */
  const bext_ext_method *pm = method("pick", sizeof(struct pick_args));
  struct pick_args p1 = pick_sample(), p2 = p1;
  p2.p.tag = PICK_ONE;
  cr_assert_neq(pm->args_hash(&p1), pm->args_hash(&p2));
  p1.p.tag = PICK_ONE;
  p1.p.as.One._1 = 1;
  p2.p.as.One._1 = 2;
  cr_assert_neq(pm->args_hash(&p1), pm->args_hash(&p2));
}

Test(desc, malformed_encodings_are_rejected) {
  const bext_ext_method *m = method("held", sizeof(struct held_args));
  struct held_args a = held_sample(), back;
  size_t n;
  unsigned char *e = encode(m, &a, &n);
  /* version, h.k(2), h.on, p.a(8), p.b(1+4), p.m(4), m(4), a(4), lv(2), kb tag(4), lo, hi(8) */
  cr_assert_eq(n, 1 + 2 + 1 + 8 + 5 + 4 + 4 + 4 + 2 + 4 + 1 + 8);
  for (size_t k = 0; k < n; k++) cr_assert_eq(m->args_decode(&back, e, k), 0, "truncated at %zu", k);
  cr_assert_eq(m->args_decode(&back, NULL, n), 0);
  unsigned char *bad = malloc(n + 3);
  memcpy(bad, e, n);
  memset(bad + n, 0xee, 3);
  cr_assert_eq(m->args_decode(&back, bad, n + 3), n, "reads one encoding from the front");
  bad[0] = 2;   /* another format version */
  cr_assert_eq(m->args_decode(&back, bad, n), 0);
  memcpy(bad, e, n);
  bad[3] = 2;   /* h.on: a bool is 0 or 1 */
  cr_assert_eq(m->args_decode(&back, bad, n), 0);
  memcpy(bad, e, n);
  bad[17] = 2;  /* p.m: Mode has 2 variants */
  cr_assert_eq(m->args_decode(&back, bad, n), 0);
  memcpy(bad, e, n);
  bad[31] = 3;  /* kb: Knob has 3 variants */
  cr_assert_eq(m->args_decode(&back, bad, n), 0);
  memcpy(bad, e, n);
  bad[34] = 1;  /* a tag's high byte */
  cr_assert_eq(m->args_decode(&back, bad, n), 0);
  /* a failed decode leaves the struct zeroed */
  cr_assert_eq(back.h.k, 0);
  cr_assert_eq(back.kb.tag, 0);
  free(bad);
  free(e);

  const bext_ext_method *sm = method("shaped", sizeof(struct shaped_args));
  struct shaped_args s = shaped_sample(), sb;
  e = encode(sm, &s, &n);
  cr_assert_eq(e[1], 2);   /* s.len */
  e[1] = BEXT_SHAPE_CAP + 1;
  cr_assert_eq(sm->args_decode(&sb, e, n), 0, "a shape longer than BEXT_SHAPE_CAP");
  e[1] = 2;
  cr_assert_eq(e[18], BEXT_F64);   /* d, after the shape */
  e[18] = BEXT_DTYPE_COUNT;
  cr_assert_eq(sm->args_decode(&sb, e, n), 0, "a dtype out of range");
  free(e);
}

/* Random bytes never make decode misbehave (the sanitizer build runs this
 * under ASan + UBSan), and whatever it accepts re-encodes to the same
 * bytes: the encoding is canonical. */
Test(desc, decode_survives_random_bytes) {
  const char *ids[] = {"desc_scale", "shaped", "held", "pick"};
  const bext_ext_method *ms[4];
  for (int i = 0; i < 4; i++) ms[i] = bext_ext_find("Desc", ids[i]);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  unsigned char buf[320], again[320];
  unsigned accepted = 0;
  for (int round = 0; round < 40000; round++) {
    const bext_ext_method *m = ms[round % 4];
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    size_t n = (size_t)(x % sizeof buf);
    for (size_t i = 0; i < n; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      /* small bytes often, so tags, bools and lengths are valid sometimes */
      buf[i] = (unsigned char)((x >> 32) % ((x & 1) ? 3 : 256));
    }
    if (n) buf[0] = 1;
    void *args = malloc(m->args_size);
    size_t got = m->args_decode(args, buf, n);
    cr_assert_leq(got, n);
    if (got) {
      accepted++;
      cr_assert_eq(m->args_encode(args, again, sizeof again), got);
      cr_assert(memcmp(again, buf, got) == 0, "%s: decode accepted a non-canonical encoding", m->what);
    }
    free(args);
  }
  cr_assert_gt(accepted, 100, "the fuzz never produced a valid encoding (%u)", accepted);
}

/* ---- scalars against bext-repl ---- */

static void print_scalars(char *out, size_t cap, const bext_ext_method *m, const void *args) {
  bext_ext_scalar s[16];
  int n = m->scalars(args, s, 16);
  cr_assert_eq(n, m->nscalars, "%s: %s", m->what, n < 0 ? bext_last_error() : "");
  static const char *const origin[] = {"inferred", "marked", "custom"};
  for (int i = 0; i < n; i++) {
    size_t len = strlen(out);
    switch (s[i].kind) {
    case BEXT_SCALAR_INT: snprintf(out + len, cap - len, "%s = %lld", s[i].name, (long long)s[i].i); break;
    case BEXT_SCALAR_UINT: snprintf(out + len, cap - len, "%s = %llu", s[i].name, (unsigned long long)s[i].u); break;
    case BEXT_SCALAR_FLOAT: snprintf(out + len, cap - len, "%s = %g", s[i].name, s[i].f); break;
    case BEXT_SCALAR_BOOL: snprintf(out + len, cap - len, "%s = %s", s[i].name, s[i].b ? "true" : "false"); break;
    }
    len = strlen(out);
    snprintf(out + len, cap - len, " (%s)\n", origin[s[i].origin]);
  }
}

static char *run_repl(const char *script) {
  const char *src = getenv("BEXT_SOURCE_DIR"), *bin = getenv("BEXT_BIN_DIR");
  cr_assert(src && bin, "BEXT_SOURCE_DIR / BEXT_BIN_DIR not set");
  char in[] = "/tmp/bext_desc_XXXXXX";
  int fd = mkstemp(in);
  cr_assert_geq(fd, 0);
  FILE *f = fdopen(fd, "w");
  fputs(script, f);
  fclose(f);
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "cd '%s/tests/codegen/ext' && '%s/bext-repl' < '%s' 2>&1", src, bin, in);
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  size_t cap = 1 << 16, len = 0;
  char *out = calloc(cap, 1);
  size_t k;
  while ((k = fread(out + len, 1, cap - 1 - len, p)) > 0) len += k;
  pclose(p);
  remove(in);
  return out;
}

Test(desc, scalars_match_the_repl) {
  bext_tensor *x = tensor(2, 3, BEXT_F32);
  struct scale_args sc = {x, 2.5f, 4, true};
  struct held_args h1 = held_sample(), h2 = held_sample();
  h1.h.t = h2.h.t = x;
  h1.kb.tag = KNOB_DIAL;
  h1.kb.as.Dial._0 = 9;
  h2.m.tag = MODE_FAST;
  h2.lv.value = 7;
  h2.kb.tag = KNOB_OFF;
  struct pick_args pk = pick_sample();
  pk.p.tag = PICK_NOTHING;
  pk.x = x;
  struct shaped_args sh = shaped_sample();
  sh.x = x;
  char want[4096] = "";
  print_scalars(want, sizeof want, method("desc_scale", sizeof sc), &sc);
  print_scalars(want, sizeof want, method("held", sizeof h1), &h1);
  print_scalars(want, sizeof want, method("held", sizeof h2), &h2);
  print_scalars(want, sizeof want, method("pick", sizeof pk), &pk);
  print_scalars(want, sizeof want, method("shaped", sizeof sh), &sh);
  char *got = run_repl(
      ":load desc.bext\n"
      "let x = TensorSpec::new([2, 3], DType::F32)\n"
      ":scalars Desc::scale(x, 2.5, 4, true)\n"
      ":scalars Desc::held(HeldMetadata { t: x, k: 3, on: true }, Plain { a: -5, b: (7, 0.5), m: Mode::Exact }, "
      "Mode::Exact, 1.25, Level { value: -300 }, Knob::Dial(9))\n"
      ":scalars Desc::held(HeldMetadata { t: x, k: 3, on: true }, Plain { a: -5, b: (7, 0.5), m: Mode::Exact }, "
      "Mode::Fast, 1.25, Level { value: 7 }, Knob::Off)\n"
      ":scalars Desc::pick(PickMetadata::Nothing, x, 0.75, -2, -9000000000, 200, 18000000000000000000, 12, -12, "
      "Mode::Exact, (5, false))\n"
      ":scalars Desc::shaped(x, [4, 5], DType::F64, TensorSpec::new([1, 2, 3], DType::I32), 3, -1)\n");
  cr_assert_str_eq(got, want);
  free(got);

  /* fewer slots than scalars: the count, and only cap written */
  bext_ext_scalar one[1];
  cr_assert_eq(method("pick", sizeof pk)->scalars(&pk, one, 1), 8);
  cr_assert_str_eq(one[0].name, "f");
  cr_assert_str_eq(one[0].type, "f64");
  /* a custom encoding needs the tensors' specs: a NULL tensor fails */
  h1.h.t = NULL;
  cr_assert_eq(method("held", sizeof h1)->scalars(&h1, one, 1), -1);
  cr_assert(strstr(bext_last_error(), "Desc::held: argument `h.t` is a NULL tensor"), "got: %s", bext_last_error());
  bext_release(x);
}

/* ---- meta against the implementations' outputs ---- */

static void expect_spec(const bext_meta_spec *s, const bext_tensor *t) {
  cr_assert_not_null(t, "%s", bext_last_error());
  cr_assert_eq(s->dtype, bext_dtype_of(t));
  cr_assert_eq((int)s->shape.len, bext_rank(t));
  for (int i = 0; i < bext_rank(t); i++) cr_assert_eq(s->shape.dims[i], (uint64_t)bext_shape(t)[i]);
}

Test(desc, meta_describes_the_outputs) {
  bext_meta_error err;
  /* field expressions: a bext_meta_spec */
  const bext_ext_method *m = method("desc_scale", sizeof(struct scale_args));
  cr_assert_eq(m->meta_size, sizeof(bext_meta_spec));
  struct scale_args sc = {tensor(2, 3, BEXT_F32), 2.0f, 1, false};
  bext_meta_spec spec;
  memset(&err, 0, sizeof err);
  cr_assert(m->meta(&sc, &spec, &err), "%s %s", err.code, err.msg);
  bext_tensor *r = desc_scale(sc.x, sc.factor, sc.steps, sc.exact);
  expect_spec(&spec, r);
  bext_release(r);

  /* meta = closure over Shape / DType arguments */
  m = method("shaped", sizeof(struct shaped_args));
  struct shaped_args sh = shaped_sample();
  sh.x = tensor(1, 1, BEXT_F32);
  memset(&err, 0, sizeof err);
  cr_assert(m->meta(&sh, &spec, &err), "%s %s", err.code, err.msg);
  r = desc_shaped(sh.x, sh.s, sh.d, sh.spec, sh.n, sh.i);
  expect_spec(&spec, r);
  cr_assert_eq(spec.dtype, BEXT_F64);
  bext_release(r);

  /* an extension output: its companion, ordinary fields included */
  m = method("held", sizeof(struct held_args));
  cr_assert_eq(m->meta_size, sizeof(HeldMetadata));
  struct held_args h = held_sample();
  h.h.t = tensor(3, 2, BEXT_F64);
  HeldMetadata hm;
  memset(&err, 0, sizeof err);
  cr_assert(m->meta(&h, &hm, &err), "%s %s", err.code, err.msg);
  Held out;
  memset(&out, 0, sizeof out);
  cr_assert(desc_held(h.h, h.p, h.m, h.a, h.lv, h.kb, &out), "%s", bext_last_error());
  expect_spec(&hm.t, out.t);
  cr_assert_eq(hm.k, out.k);
  cr_assert_eq(hm.on, out.on);
  held_release(&out);

  /* an enum extension argument: specs of the active variant's tensors */
  m = method("pick", sizeof(struct pick_args));
  struct pick_args pk = pick_sample();
  pk.p.as.Two.a = tensor(1, 2, BEXT_F32);
  pk.p.as.Two.b = tensor(2, 1, BEXT_F32);
  pk.x = tensor(4, 4, BEXT_F32);
  memset(&err, 0, sizeof err);
  cr_assert(m->meta(&pk, &spec, &err), "%s %s", err.code, err.msg);
  r = desc_pick(pk.p, pk.x, pk.f, pk.a, pk.b, pk.c, pk.d, pk.e, pk.g, pk.m, pk.t);
  expect_spec(&spec, r);
  bext_release(r);

  /* a NULL tensor is an error, not a crash */
  memset(&pk, 0, sizeof pk);
  memset(&err, 0, sizeof err);
  cr_assert_not(m->meta(&pk, &spec, &err));
  cr_assert_str_eq(err.code, "E1011");
  cr_assert(strstr(err.msg, "argument `x` is a NULL tensor"), "got: %s", err.msg);
}

/* An output value's ordinary parts (out_encode / out_decode, what Remote
 * carries back): Held's k and on, its tensor left out; a round trip, the
 * exact bytes, truncations and a bad bool refused with the value zeroed.
 * A method returning a tensor has no output codec. */
Test(desc, output_values_encode_their_ordinary_parts) {
  const bext_ext_method *m = method("held", sizeof(struct held_args));
  cr_assert(m->out_encode && m->out_decode && m->out_size == sizeof(Held));
  cr_assert_null(method("desc_scale", sizeof(struct scale_args))->out_encode);
  Held h = {.t = (bext_tensor *)&h, .k = 0x1234, .on = true};   /* any non-NULL handle: never dereferenced */
  unsigned char e[16];
  size_t n = m->out_encode(&h, e, sizeof e);
  const unsigned char want[] = {BEXT_GEN_ENCODING_VERSION, 0x34, 0x12, 1};
  cr_assert_eq(n, sizeof want);
  cr_assert_arr_eq(e, want, sizeof want);
  cr_assert_eq(m->out_encode(&h, e, 2), n, "the length also when it exceeds cap");
  Held back;
  memset(&back, 0x5a, sizeof back);
  cr_assert_eq(m->out_decode(&back, e, n), n);
  cr_assert(back.t == NULL && back.k == 0x1234 && back.on, "the tensor slot stays NULL for the caller to fill");
  for (size_t k = 0; k < n; k++) cr_assert_eq(m->out_decode(&back, e, k), 0, "truncated at %zu", k);
  e[3] = 2;   /* a bool is 0 or 1 */
  cr_assert_eq(m->out_decode(&back, e, n), 0);
  cr_assert(back.k == 0 && !back.on, "a failed decode leaves the value zeroed");
}

/* out_from_meta (a value built from its metadata, for Remote to stream
 * and Fusion to publish): Held from a HeldMetadata, its tensor made by the
 * caller's maker with the metadata's spec; a maker that fails fails the
 * build.  A method returning one tensor builds it from its spec. */
static bext_tensor *make_zeros(void *ctx, int slot, const bext_meta_spec *ms) {
  int *calls = ctx;
  cr_assert_eq(slot, *calls, "slots numbered in order");
  (*calls)++;
  int64_t shape[BEXT_SHAPE_CAP];
  for (size_t i = 0; i < ms->shape.len; i++) shape[i] = (int64_t)ms->shape.dims[i];
  return bext_zeros(shape, (int)ms->shape.len, ms->dtype, bext_device_get("flex"));
}
static bext_tensor *make_none(void *ctx, int slot, const bext_meta_spec *ms) {
  (void)ctx, (void)slot, (void)ms;
  return NULL;
}

Test(desc, output_values_build_from_their_metadata) {
  const bext_ext_method *m = method("held", sizeof(struct held_args));
  cr_assert_not_null(m->out_from_meta);
  HeldMetadata w;
  memset(&w, 0, sizeof w);
  w.t.dtype = BEXT_F64;
  w.t.shape.len = 2;
  w.t.shape.dims[0] = 3, w.t.shape.dims[1] = 5;
  w.k = 41, w.on = true;
  Held h;
  memset(&h, 0, sizeof h);
  int calls = 0;
  cr_assert(m->out_from_meta(&w, &h, make_zeros, &calls));
  cr_assert_eq(calls, 1);
  cr_assert(h.t && bext_dtype_of(h.t) == BEXT_F64 && bext_rank(h.t) == 2 && bext_shape(h.t)[1] == 5);
  cr_assert(h.k == 41 && h.on);
  char why[200];
  cr_assert(m->meta_check(&h, &w, true, why, sizeof why), "the value it builds agrees with its metadata: %s", why);
  held_release(&h);
  cr_assert_not(m->out_from_meta(&w, &h, make_none, NULL));
  cr_assert_null(h.t);

  const bext_ext_method *pm = method("pick", sizeof(struct pick_args));
  cr_assert_not_null(pm->out_from_meta, "a tensor output with dtype/shape metadata builds too");
  bext_meta_spec ps;
  memset(&ps, 0, sizeof ps);
  ps.dtype = BEXT_I32;
  ps.shape.len = 1;
  ps.shape.dims[0] = 7;
  bext_tensor *pt = NULL;
  calls = 0;
  cr_assert(pm->out_from_meta(&ps, &pt, make_zeros, &calls));
  cr_assert(calls == 1 && pt && bext_dtype_of(pt) == BEXT_I32 && bext_rank(pt) == 1 && bext_shape(pt)[0] == 7);
  cr_assert(pm->meta_check(&pt, &ps, true, why, sizeof why), "%s", why);
  ps.shape.dims[0] = 8;
  cr_assert_not(pm->meta_check(&pt, &ps, true, why, sizeof why), "a 7-element tensor is not the 8 the metadata says");
  bext_release(pt);
}
