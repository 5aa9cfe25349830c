/* test_safetensors.c — bext_save / bext_load / bext_load_bytes (bext.h,
 * "data in/out"; runtime/src/safetensors.c).
 *
 *   - round trips of every dtype on flex and ndarray (and across them):
 *     ordinary, rank 0, empty and non-contiguous tensors, values compared
 *     byte for byte, shapes and dtypes kept, metadata kept;
 *   - the file bext writes for a tiny case equals, byte for byte, the
 *     bytes written out here by hand from the format's specification;
 *   - each kind of malformed input is rejected with its message naming
 *     the file and the tensor (short file, header size past the end, bad
 *     UTF-8 / JSON, non-object, unknown dtype, bad shapes and offsets,
 *     size mismatch, holes and overlaps, duplicate keys, trailing garbage,
 *     bool bytes other than 0/1);
 *   - save's own errors, atomic replacement, lookups by name and index;
 *   - a deterministic mutation run (flipped, cut and spliced bytes of a
 *     valid file) that must never crash; the coverage-guided fuzzer is
 *     tests/fuzz/fuzz_safetensors.c. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bext/bext.h"

static const char *const devices[] = {"flex", "ndarray"};

static const bext_device *dev(const char *spec) {
  const bext_device *d = bext_device_get(spec);
  cr_assert_not_null(d, "%s", bext_last_error());
  return d;
}

static char tmpdir[64];
static void make_tmpdir(void) {
  strcpy(tmpdir, "/tmp/bext-st-XXXXXX");
  cr_assert_not_null(mkdtemp(tmpdir));
}
static void remove_tmpdir(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  cr_expect_eq(system(cmd), 0);
}
TestSuite(safetensors, .init = make_tmpdir, .fini = remove_tmpdir);

static const char *tmp_path(const char *name) {
  static char p[2][160];
  static int k;
  k ^= 1;
  snprintf(p[k], sizeof p[k], "%s/%s", tmpdir, name);
  return p[k];
}

#define EXPECT_MSG(...)                                                                             \
  do {                                                                                              \
    const char *needles_[] = {__VA_ARGS__};                                                         \
    for (size_t k_ = 0; k_ < sizeof needles_ / sizeof needles_[0]; k_++)                            \
      cr_expect(strstr(bext_last_error(), needles_[k_]) != NULL, "message '%s' lacks '%s'",        \
                bext_last_error(), needles_[k_]);                                                   \
  } while (0)

/* Row-major bytes of t. */
static unsigned char *bytes_of(const bext_tensor *t, size_t *n) {
  *n = (size_t)bext_numel(t) * bext_dtype_size(bext_dtype_of(t));
  unsigned char *b = malloc(*n ? *n : 1);
  cr_assert(bext_read(t, b, *n), "%s", bext_last_error());
  return b;
}

/* A [2,3] tensor of dtype dt whose bytes are a pattern valid for dt. */
static bext_tensor *pattern(bext_dtype dt, const bext_device *d, int seed) {
  unsigned char b[6 * 8];
  size_t es = bext_dtype_size(dt);
  for (size_t i = 0; i < 6 * es; i++) b[i] = dt == BEXT_BOOL ? (unsigned char)((i + seed) % 2) : (unsigned char)(i * 37 + seed);
  bext_tensor *t = bext_from_data(b, dt, (int64_t[]){2, 3}, 2, d);
  cr_assert_not_null(t, "%s", bext_last_error());
  return t;
}

static void expect_same(bext_tensor *got, const bext_tensor *want, const char *what) {
  cr_assert_not_null(got, "%s: %s", what, bext_last_error());
  cr_expect_eq(bext_dtype_of(got), bext_dtype_of(want), "%s: dtype", what);
  cr_assert_eq(bext_rank(got), bext_rank(want), "%s: rank", what);
  for (int d = 0; d < bext_rank(want); d++) cr_expect_eq(bext_shape(got)[d], bext_shape(want)[d], "%s: dim %d", what, d);
  size_t n1, n2;
  unsigned char *a = bytes_of(got, &n1), *b = bytes_of(want, &n2);
  cr_expect(n1 == n2 && memcmp(a, b, n1) == 0, "%s: values differ", what);
  free(a);
  free(b);
  bext_release(got);
}

Test(safetensors, round_trip_every_dtype_and_layout) {
  for (int k = 0; k < 2; k++) {
    const bext_device *d = dev(devices[k]);
    enum { PER = 4 };
    char names[BEXT_DTYPE_COUNT * PER][32];
    const char *np[BEXT_DTYPE_COUNT * PER];
    bext_tensor *ts[BEXT_DTYPE_COUNT * PER];
    int n = 0;
    for (int dt = 0; dt < BEXT_DTYPE_COUNT; dt++) {
      const char *dn = bext_dtype_name((bext_dtype)dt);
      /* ordinary [2,3] */
      snprintf(names[n], 32, "%s.plain", dn);
      ts[n++] = pattern((bext_dtype)dt, d, dt);
      /* rank 0 */
      snprintf(names[n], 32, "%s.scalar", dn);
      ts[n++] = bext_reshape(bext_narrow(bext_reshape(pattern((bext_dtype)dt, d, 1), (int64_t[]){6}, 1), 0, 2, 1),
                             (int64_t[]){0}, 0);
      /* empty */
      snprintf(names[n], 32, "%s.empty", dn);
      ts[n++] = bext_zeros((int64_t[]){0, 4}, 2, (bext_dtype)dt, d);
      /* non-contiguous: a transposed view */
      snprintf(names[n], 32, "%s.transposed", dn);
      ts[n++] = bext_swap_dims(pattern((bext_dtype)dt, d, 3), 0, 1);
    }
    for (int i = 0; i < n; i++) {
      np[i] = names[i];
      cr_assert_not_null(ts[i], "%s: %s", names[i], bext_last_error());
    }
    cr_assert_eq(bext_rank(ts[1]), 0);
    const char *path = tmp_path("all.safetensors");
    const char *meta[] = {"format", "pt", "made by", "bext \"test\"\n", NULL};
    cr_assert(bext_save(path, np, ts, n, meta), "%s", bext_last_error());
    for (int k2 = 0; k2 < 2; k2++) {   /* onto the same device and the other one */
      bext_tensor_file *f = bext_load(path, dev(devices[k2]));
      cr_assert_not_null(f, "%s", bext_last_error());
      cr_assert_eq(bext_file_count(f), n);
      for (int i = 0; i < n; i++) {
        char what[160];
        snprintf(what, sizeof what, "%s -> %s: %.40s", devices[k], devices[k2], names[i]);
        bext_tensor *t = bext_file_get(f, names[i]);
        if (t) cr_expect_eq(bext_device_of(t), dev(devices[k2]), "%s: device", what);
        expect_same(t, ts[i], what);
      }
      /* sorted by name */
      for (int i = 1; i < n; i++) cr_expect(strcmp(bext_file_name(f, i - 1), bext_file_name(f, i)) < 0);
      cr_expect_str_eq(bext_file_meta(f, "format"), "pt");
      cr_expect_str_eq(bext_file_meta(f, "made by"), "bext \"test\"\n");
      cr_expect_null(bext_file_meta(f, "absent"));
      bext_file_close(f);
    }
    for (int i = 0; i < n; i++) bext_release(ts[i]);
  }
}

/* Reads a whole file. */
static unsigned char *slurp(const char *path, size_t *n) {
  FILE *fp = fopen(path, "rb");
  cr_assert_not_null(fp, "%s", path);
  fseek(fp, 0, SEEK_END);
  *n = (size_t)ftell(fp);
  fseek(fp, 0, SEEK_SET);
  unsigned char *b = malloc(*n + 1);
  cr_assert_eq(fread(b, 1, *n, fp), *n);
  fclose(fp);
  return b;
}

/* The specification, applied by hand: u64 LE header size, compact JSON
 * (metadata first, then tensors in data order: larger elements first,
 * then by name), spaces to a multiple of 8, then the little-endian data
 * of each tensor in that order. */
Test(safetensors, written_layout_matches_the_spec_byte_for_byte) {
  const bext_device *d = dev("flex");
  int32_t bi[2] = {1, -2};
  double av = 0.5;
  uint8_t mv[3] = {1, 0, 1};
  bext_tensor *ts[3] = {
      bext_from_data(bi, BEXT_I32, (int64_t[]){2}, 1, d),
      bext_from_data(&av, BEXT_F64, NULL, 0, d),
      bext_from_data(mv, BEXT_BOOL, (int64_t[]){3}, 1, d),
  };
  const char *names[3] = {"b", "a", "m"};
  const char *meta[] = {"format", "bext", NULL};
  const char *path = tmp_path("tiny.safetensors");
  cr_assert(bext_save(path, names, ts, 3, meta), "%s", bext_last_error());

  const char *json = "{\"__metadata__\":{\"format\":\"bext\"},"
                     "\"a\":{\"dtype\":\"F64\",\"shape\":[],\"data_offsets\":[0,8]},"
                     "\"b\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[8,16]},"
                     "\"m\":{\"dtype\":\"BOOL\",\"shape\":[3],\"data_offsets\":[16,19]}}";
  size_t jl = strlen(json), hl = (jl + 7) / 8 * 8;
  unsigned char want[512];
  size_t w = 0;
  for (int i = 0; i < 8; i++) want[w++] = (unsigned char)(hl >> (8 * i));
  memcpy(want + w, json, jl);
  memset(want + w + jl, ' ', hl - jl);
  w += hl;
  const unsigned char data[19] = {0, 0, 0, 0, 0, 0, 0xe0, 0x3f,   /* 0.5 */
                                  1, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff,  /* 1, -2 */
                                  1, 0, 1};
  memcpy(want + w, data, sizeof data);
  w += sizeof data;
  size_t n;
  unsigned char *got = slurp(path, &n);
  cr_expect_eq(n, w, "file has %zu bytes, the spec says %zu", n, w);
  cr_expect(n == w && memcmp(got, want, w) == 0, "bytes differ from the hand-made file:\n%.*s", (int)(n > 8 ? n - 8 : 0),
            got + 8);
  free(got);
  for (int i = 0; i < 3; i++) bext_release(ts[i]);
}

/* A file in memory: header size, header text as given, then data. */
static unsigned char *mk(const char *header, const void *data, size_t dn, size_t *n) {
  size_t hl = strlen(header);
  *n = 8 + hl + dn;
  unsigned char *b = malloc(*n);
  for (int i = 0; i < 8; i++) b[i] = (unsigned char)((uint64_t)hl >> (8 * i));
  memcpy(b + 8, header, hl);
  if (dn) memcpy(b + 8 + hl, data, dn);
  return b;
}

static void reject(const char *header, const void *data, size_t dn, const char *what, const char *needle1,
                   const char *needle2) {
  size_t n;
  unsigned char *b = mk(header, data, dn, &n);
  bext_clear_error();
  bext_tensor_file *f = bext_load_bytes(b, n, NULL);
  cr_expect_null(f, "%s: accepted", what);
  bext_file_close(f);
  cr_expect(strstr(bext_last_error(), "bext_load_bytes: <memory>: ") == bext_last_error(), "%s: '%s' lacks the file",
            what, bext_last_error());
  cr_expect(strstr(bext_last_error(), needle1) != NULL, "%s: '%s' lacks '%s'", what, bext_last_error(), needle1);
  if (needle2)
    cr_expect(strstr(bext_last_error(), needle2) != NULL, "%s: '%s' lacks '%s'", what, bext_last_error(), needle2);
  free(b);
}

#define T(name, dt, shape, offs) "\"" name "\":{\"dtype\":\"" dt "\",\"shape\":" shape ",\"data_offsets\":" offs "}"

Test(safetensors, malformed_inputs_rejected_with_their_message) {
  unsigned char z[64] = {0};
  /* framing */
  cr_expect_null(bext_load_bytes("abc", 3, NULL));
  EXPECT_MSG("bext_load_bytes: <memory>: the file has 3 bytes, fewer than the 8");
  {
    unsigned char b[16] = {0x00, 0x10, 0, 0, 0, 0, 0, 0, '{', '}'};
    cr_expect_null(bext_load_bytes(b, sizeof b, NULL));
    EXPECT_MSG("header size 4096 runs past the end of the file (8 bytes after the size)");
    unsigned char c[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    cr_expect_null(bext_load_bytes(c, sizeof c, NULL));
    EXPECT_MSG("header size 18446744073709551615 exceeds the limit of 100000000 bytes");
  }
  reject("{\"a\":\xff}", NULL, 0, "bad utf-8", "not valid UTF-8", "0xff at header offset 5");
  reject("{\"a\": {\"dtype\": \"F32\",", NULL, 0, "bad JSON", "header is not valid JSON", NULL);
  reject("", NULL, 0, "empty header", "header is not valid JSON", NULL);
  reject("[1, 2]", NULL, 0, "non-object", "header is an array, expected an object", NULL);
  reject("{}  x", NULL, 0, "garbage after the JSON", "after its JSON object", "only space padding");
  /* tensor entries */
  reject("{\"w\": 3}", NULL, 0, "entry not an object", "tensor `w`: expected an object", "found a number");
  reject("{" T("w", "F99", "[1]", "[0,4]") "}", z, 4, "unknown dtype", "tensor `w`: unknown dtype \"F99\"", NULL);
  reject("{" T("w", "I8", "[1]", "[0,1]") "}", z, 1, "foreign dtype", "tensor `w`: dtype \"I8\" has no bext dtype",
         NULL);
  reject("{\"w\":{\"shape\":[1],\"data_offsets\":[0,4]}}", z, 4, "no dtype", "tensor `w`: no `dtype` field", NULL);
  reject("{\"w\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", z, 4, "dtype twice",
         "tensor `w`: field `dtype` appears twice", NULL);
  reject("{" T("w", "F32", "[2,-1]", "[0,0]") "}", NULL, 0, "negative extent",
         "tensor `w`: shape entry 1 is -1, expected a non-negative integer", NULL);
  reject("{" T("w", "F32", "[2.5]", "[0,4]") "}", z, 4, "fractional extent", "tensor `w`: `2.5`", "not an integer");
  reject("{" T("w", "F32", "[1.0]", "[0,4]") "}", z, 4, "float literal extent", "tensor `w`: `1.0`", "not an integer");
  reject("{" T("w", "F32", "[99999999999999999999]", "[0,4]") "}", z, 4, "huge extent",
         "tensor `w`: shape entry 0 is 1e+20, expected a non-negative integer (at most 2^53)", NULL);
  reject("{" T("w", "F32", "[\"2\"]", "[0,8]") "}", z, 8, "string extent", "tensor `w`: shape entry 0 is a string",
         NULL);
  reject("{" T("w", "F32", "[1,1,1,1,1,1,1,1,1]", "[0,4]") "}", z, 4, "rank 9", "tensor `w`: shape has 9 dims", NULL);
  reject("{" T("w", "F32", "3", "[0,12]") "}", z, 12, "shape not an array", "tensor `w`: shape is a number", NULL);
  reject("{" T("w", "F32", "[1]", "[0]") "}", z, 4, "one offset", "tensor `w`: data_offsets is an array of the wrong length",
         NULL);
  reject("{" T("w", "F32", "[1]", "[-4,0]") "}", z, 4, "negative offset",
         "tensor `w`: data_offsets entry 0 is -4, expected a non-negative integer", NULL);
  reject("{" T("w", "F32", "[1]", "[8,4]") "}", z, 8, "reversed offsets",
         "tensor `w`: data_offsets [8, 4] end before they begin", NULL);
  reject("{" T("w", "F32", "[4]", "[0,16]") "}", z, 8, "offsets out of range",
         "tensor `w`: data_offsets [0, 16] run past the end of the data (8 bytes)", NULL);
  reject("{" T("w", "F32", "[2,2]", "[0,12]") "}", z, 12, "size mismatch",
         "tensor `w`: data_offsets [0, 12] hold 12 bytes, but shape [2,2] f32 needs 16", NULL);
  reject("{" T("w", "F64", "[4294967296,4294967296]", "[0,8]") "}", z, 8, "byte count overflow",
         "tensor `w`: shape [4294967296,4294967296] f64 needs more bytes than 64 bits count", NULL);
  /* the tiling of the data */
  reject("{" T("a", "F32", "[1]", "[0,4]") "," T("b", "F32", "[1]", "[8,12]") "}", z, 12, "hole",
         "tensor `b`: data_offsets [8, 12] leave a hole: bytes [4, 8)", NULL);
  reject("{" T("a", "F32", "[2]", "[0,8]") "," T("b", "F32", "[1]", "[4,8]") "}", z, 8, "overlap",
         "tensor `b`: data_offsets [4, 8] overlap tensor `a`'s [0, 8]", NULL);
  reject("{" T("a", "F32", "[1]", "[4,8]") "}", z, 8, "hole at the start", "tensor `a`: data_offsets [4, 8] leave a hole",
         "bytes [0, 4)");
  reject("{" T("a", "F32", "[1]", "[0,4]") "}", z, 12, "trailing garbage",
         "the data has 12 bytes but the tensors end at 4: 8 bytes of trailing garbage", NULL);
  reject("{" T("a", "F32", "[1]", "[0,4]") "," T("a", "F32", "[1]", "[4,8]") "}", z, 8, "duplicate name",
         "tensor `a` appears twice in the header", NULL);
  /* metadata */
  reject("{\"__metadata__\":{\"k\":1}}", NULL, 0, "metadata value", "`__metadata__` key `k` holds a number", NULL);
  reject("{\"__metadata__\":[]}", NULL, 0, "metadata array", "`__metadata__` is an array", NULL);
  reject("{\"__metadata__\":{\"k\":\"a\",\"k\":\"b\"}}", NULL, 0, "metadata key twice",
         "`__metadata__` key `k` appears twice", NULL);
  reject("{\"a\\u0000b\":{}}", NULL, 0, "NUL in a name", "contains \\u0000", NULL);
  /* data */
  unsigned char bools[4] = {0, 1, 2, 1};
  reject("{" T("m", "BOOL", "[4]", "[0,4]") "}", bools, 4, "bool byte",
         "tensor `m`: bool element 2 is byte 2 (file offset", "expected 0 or 1");
}

Test(safetensors, valid_corner_cases_accepted) {
  size_t n;
  /* no tensors at all, padding spaces, metadata only */
  unsigned char *b = mk("{}      ", NULL, 0, &n);
  bext_tensor_file *f = bext_load_bytes(b, n, NULL);
  cr_assert_not_null(f, "%s", bext_last_error());
  cr_expect_eq(bext_file_count(f), 0);
  bext_file_close(f);
  free(b);
  b = mk("{\"__metadata__\":{\"format\":\"pt\"}," T("e", "F32", "[0,3]", "[0,0]") "," T("x", "I64", "[]", "[0,8]") "}",
         "\x2a\0\0\0\0\0\0\0", 8, &n);
  f = bext_load_bytes(b, n, dev("ndarray"));
  cr_assert_not_null(f, "%s", bext_last_error());
  bext_tensor *x = bext_file_get(f, "x");
  cr_assert_not_null(x, "%s", bext_last_error());
  int64_t v;
  cr_expect(bext_read(x, &v, 8) && v == 42 && bext_rank(x) == 0);
  bext_release(x);
  cr_expect_null(bext_file_get(f, "y"));
  EXPECT_MSG("bext_file_get: no tensor `y` in the file (it has 2: `e`, `x`)");
  cr_expect_null(bext_file_tensor(f, 2));
  EXPECT_MSG("bext_file_tensor: index 2 out of range (the file has 2 tensors)");
  cr_expect_str_eq(bext_file_meta(f, "format"), "pt");
  bext_file_close(f);
  free(b);
}

Test(safetensors, save_errors_and_atomic_replacement) {
  const bext_device *d = dev("flex");
  bext_tensor *a = bext_ones((int64_t[]){2}, 1, BEXT_F32, d), *b = bext_zeros((int64_t[]){3}, 1, BEXT_I64, d);
  bext_tensor *ts[2] = {a, b};
  const char *path = tmp_path("m.safetensors");
  cr_assert(bext_save(path, (const char *[]){"w", "b"}, ts, 2, NULL), "%s", bext_last_error());
  size_t n0;
  unsigned char *before = slurp(path, &n0);

  cr_expect(!bext_save(path, (const char *[]){"w", "w"}, ts, 2, NULL));
  EXPECT_MSG("bext_save: `", "m.safetensors`: name `w` is given twice (tensors 0 and 1)");
  cr_expect(!bext_save(path, (const char *[]){"w", "__metadata__"}, ts, 2, NULL));
  EXPECT_MSG("name 1 is `__metadata__`");
  cr_expect(!bext_save(path, (const char *[]){"w", ""}, ts, 2, NULL));
  EXPECT_MSG("name 1 is empty");
  cr_expect(!bext_save(path, (const char *[]){"w", "\xc3("}, ts, 2, NULL));
  EXPECT_MSG("name 1 is not valid UTF-8");
  cr_expect(!bext_save(path, (const char *[]){"w", "v"}, (bext_tensor *[]){a, NULL}, 2, NULL));
  EXPECT_MSG("tensor 1 (`v`) is a NULL tensor handle");
  cr_expect(!bext_save(path, (const char *[]){"w"}, ts, 1, (const char *[]){"k", NULL}));
  EXPECT_MSG("metadata key `k` has no value");
  cr_expect(!bext_save(tmp_path("no/such/dir.safetensors"), (const char *[]){"w"}, ts, 1, NULL));
  EXPECT_MSG("cannot create the temporary file", "No such file or directory");
  /* every failure left the old file as it was, and no temporary behind */
  size_t n1;
  unsigned char *after = slurp(path, &n1);
  cr_expect(n0 == n1 && memcmp(before, after, n0) == 0, "a failed save changed the file");
  free(after);
  char cmd[200];
  snprintf(cmd, sizeof cmd, "ls '%s' | grep -q tmp-", tmpdir);
  cr_expect_neq(system(cmd), 0, "a temporary file was left behind");
  /* a successful save replaces it */
  cr_assert(bext_save(path, (const char *[]){"only"}, ts + 1, 1, NULL), "%s", bext_last_error());
  bext_tensor_file *f = bext_load(path, NULL);
  cr_assert_not_null(f, "%s", bext_last_error());
  cr_expect_eq(bext_file_count(f), 1);
  cr_expect_str_eq(bext_file_name(f, 0), "only");
  bext_file_close(f);
  cr_expect_null(bext_load(tmp_path("missing.safetensors"), NULL));
  EXPECT_MSG("bext_load: `", "missing.safetensors`: cannot open: No such file or directory");
  free(before);
  bext_release(a);
  bext_release(b);
}

/* Flipped, cut, duplicated and spliced bytes of a valid file: every
 * variant is loaded or rejected with a message, never a crash (the ASan
 * run checks memory; the fuzzer goes further). */
Test(safetensors, mutations_never_crash) {
  const bext_device *d = dev("flex");
  bext_tensor *ts[3] = {bext_ones((int64_t[]){2, 2}, 2, BEXT_F32, d), bext_zeros((int64_t[]){3}, 1, BEXT_BOOL, d),
                        bext_full((int64_t[]){1}, 1, 7, BEXT_I64, d)};
  const char *path = tmp_path("seed.safetensors");
  cr_assert(bext_save(path, (const char *[]){"w", "m", "s"}, ts, 3, (const char *[]){"a", "b", NULL}));
  size_t n;
  unsigned char *seed = slurp(path, &n), *m = malloc(2 * n + 16);
  uint64_t r = 88172645463325252ull;
  int accepted = 0;
  for (int iter = 0; iter < 20000; iter++) {
    r ^= r << 13, r ^= r >> 7, r ^= r << 17;
    size_t len = n;
    memcpy(m, seed, n);
    switch (r % 4) {
    case 0: m[(r >> 8) % n] ^= (unsigned char)(1u << ((r >> 40) % 8)); break;
    case 1: m[(r >> 8) % n] = (unsigned char)(r >> 32); break;
    case 2: len = (size_t)((r >> 8) % n); break;
    default: {   /* duplicate a span */
      size_t at = (size_t)((r >> 8) % n), k = (size_t)((r >> 24) % 16);
      if (at + k > n) k = n - at;
      memmove(m + at + k, m + at, n - at);
      len = n + k;
    }
    }
    uint64_t errs = bext_error_count();
    bext_tensor_file *f = bext_load_bytes(m, len, d);
    if (f) {
      accepted++;
      for (int i = 0; i < bext_file_count(f); i++) bext_release(bext_file_tensor(f, i));
      bext_file_close(f);
    } else {
      cr_assert_gt(bext_error_count(), errs, "rejected without a message");
      cr_assert(strncmp(bext_last_error(), "bext_load_bytes: <memory>: ", 27) == 0, "%s", bext_last_error());
    }
  }
  cr_expect_gt(accepted, 0, "some mutations (data bytes) are valid files");
  free(seed);
  free(m);
  for (int i = 0; i < 3; i++) bext_release(ts[i]);
}
