/* test_kir_print.c — the text form (golden, expectations inline) and the
 * serialized form: exact round trips, and corrupt, truncated or
 * wrong-version blobs rejected with a clear diagnostic, never a crash
 * (a few thousand deterministic mutations; run under ASan in build-asan). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kir_samples.h"

static void golden(struct bxk_kernel *k, const char *want) {
  char *got = bxk_print_alloc(k);
  cr_assert(got);
  cr_expect_str_eq(got, want);
  /* measuring and truncating agree with the full text */
  size_t n = bxk_print(k, NULL, 0);
  cr_expect_eq(n, strlen(want));
  char small[16];
  bxk_print(k, small, sizeof small);
  cr_expect_eq(strlen(small), sizeof small - 1);
  free(got);
  bxk_kernel_free(k);
}

Test(kir_print, golden_add) {
  golden(sample_add(BXK_F32, true),
    "kernel add(b0: &tensor<f32, 1>, b1: &tensor<f32, 1>, b2: &mut tensor<f32, 1>)\n"
    "{\n"
    "  %1: u32 = topo ABSOLUTE_POS\n"
    "  %2: u32 = len b2\n"
    "  %3: bool = lt %1, %2\n"
    "  if %3 {\n"
    "    %4: f32 = load b0[%1]\n"
    "    %5: f32 = load b1[%1]\n"
    "    %6: f32 = add %4, %5\n"
    "    store b2[%1], %6\n"
    "  }\n"
    "}\n");
}

Test(kir_print, golden_gelu) {
  golden(sample_gelu(BXK_F32),
    "kernel gelu(b0: &tensor<f32>, b1: &mut tensor<f32>)\n"
    "{\n"
    "  %1: u32 = topo ABSOLUTE_POS\n"
    "  %2: u32 = len b1\n"
    "  %3: bool = lt %1, %2\n"
    "  if %3 {\n"
    "    %4: f32 = load b0[%1]\n"
    "    %5: f32 = const 0.5\n"
    "    %6: f32 = const 1.0\n"
    "    %7: f32 = const 2.0\n"
    "    %8: f32 = sqrt %7\n"
    "    %9: f32 = div %4, %8\n"
    "    %10: f32 = erf %9\n"
    "    %11: f32 = mul %4, %5\n"
    "    %12: f32 = add %6, %10\n"
    "    %13: f32 = mul %11, %12\n"
    "    store b1[%1], %13\n"
    "  }\n"
    "}\n");
}

Test(kir_print, golden_shared_sum) {
  golden(sample_shared_sum(),
    "kernel shared_sum(b0: &tensor<f32, 1>, b1: &mut tensor<f32, 1>)\n"
    "  shared sh0: f32[64]\n"
    "{\n"
    "  %1: u32 = topo UNIT_POS\n"
    "  %2: u32 = topo ABSOLUTE_POS\n"
    "  %3: f32 = load b0[%2]\n"
    "  sstore sh0[%1], %3\n"
    "  sync_cube\n"
    "  %4: u32 = const 0\n"
    "  %5: bool = eq %1, %4\n"
    "  if %5 {\n"
    "    %6: u32 = topo CUBE_POS\n"
    "    %7: u32 = const 0\n"
    "    %8: f32 = sload sh0[%7]\n"
    "    store b1[%6], %8\n"
    "  }\n"
    "}\n");
}

Test(kir_print, constants_and_names) {
  struct bxk_kernel *k = bxk_kernel_new("c");
  bxk_add_scalar(k, BXK_I64);
  bxk_add_scalar(k, BXK_BOOL);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_const_i(&B, BXK_I32, -5);
  bxk_const_i(&B, BXK_U8, 300);        /* wraps to 44 */
  bxk_const_f(&B, BXK_F64, 0.1);
  bxk_const_f(&B, BXK_F16, 0.1);       /* rounded to f16 */
  bxk_const_i(&B, BXK_BOOL, 1);
  bxk_scalar(&B, 1);
  golden(k,
    "kernel c(; s0: i64, s1: bool)\n"
    "{\n"
    "  %1: i32 = const -5\n"
    "  %2: u8 = const 44\n"
    "  %3: f64 = const 0.10000000000000001\n"
    "  %4: f16 = const 0.0999755859\n"
    "  %5: bool = const true\n"
    "  %6: bool = scalar s1\n"
    "}\n");
}

Test(kir_fold, folds_with_the_header_semantics) {
  struct bxk_kernel *k = bxk_kernel_new("fold");
  bxk_add_binding(k, BXK_I32, 1, true);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_val seven = bxk_const_i(&B, BXK_I32, -7), zero = bxk_const_i(&B, BXK_I32, 0);
  bxk_val three = bxk_const_i(&B, BXK_I32, 3);
  bxk_val d = bxk_bin(&B, BXK_OP_DIV, seven, zero);          /* 0 */
  bxk_val r = bxk_bin(&B, BXK_OP_REM, seven, three);         /* floored: 2 */
  bxk_val s = bxk_bin(&B, BXK_OP_ADD, d, r);                 /* a chain: 2 */
  bxk_val f = bxk_cast(&B, BXK_I32, bxk_const_f(&B, BXK_F32, 3e9)); /* saturates */
  bxk_val pos = bxk_topo(&B, BXK_TOPO_UNIT_POS);
  bxk_store(&B, 0, pos, s);
  bxk_store(&B, 0, pos, f);
  bxk_val one = bxk_const_f(&B, BXK_F64, 1);
  bxk_bin(&B, BXK_OP_MAX, one, bxk_const_f(&B, BXK_F64, NAN)); /* NaN wins */
  cr_expect_eq(bxk_fold(k), 5);
  struct bxk_diags ds = {0};
  cr_expect(bxk_verify(k, &ds));
  golden(k,
    "kernel fold(b0: &mut tensor<i32, 1>)\n"
    "{\n"
    "  %1: i32 = const -7\n"
    "  %2: i32 = const 0\n"
    "  %3: i32 = const 3\n"
    "  %4: i32 = const 0\n"
    "  %5: i32 = const 2\n"
    "  %6: i32 = const 2\n"
    "  %7: f32 = const 3e+09\n"
    "  %8: i32 = const 2147483647\n"
    "  %9: u32 = topo UNIT_POS\n"
    "  store b0[%9], %6\n"
    "  store b0[%9], %8\n"
    "  %10: f64 = const 1.0\n"
    "  %11: f64 = const nan\n"
    "  %12: f64 = const nan\n"
    "}\n");
}

/* Comptime branches: an `if` on a folded condition becomes its taken
 * block; a taken block ending in `return` drops what followed; values are
 * renumbered so the kernel still defines every id it declares. */
Test(kir_fold, prunes_constant_branches) {
  struct bxk_kernel *k = bxk_kernel_new("prune");
  bxk_add_binding(k, BXK_I32, 1, true);
  struct bxk_builder B = bxk_builder_at(k, NULL);
  bxk_val pos = bxk_topo(&B, BXK_TOPO_UNIT_POS);
  bxk_val one = bxk_const_i(&B, BXK_U32, 1), two = bxk_const_i(&B, BXK_U32, 2);
  struct bxk_block *then_blk, *else_blk;
  bxk_if(&B, bxk_bin(&B, BXK_OP_EQ, one, two), &then_blk, &else_blk);  /* false */
  struct bxk_builder T = bxk_builder_at(k, then_blk);
  bxk_store(&T, 0, pos, bxk_const_i(&T, BXK_I32, 5));
  struct bxk_builder E = bxk_builder_at(k, else_blk);
  struct bxk_block *inner, *inner_else;
  bxk_if(&E, bxk_bin(&E, BXK_OP_LT, one, two), &inner, &inner_else);   /* true, no else used */
  struct bxk_builder I = bxk_builder_at(k, inner);
  bxk_store(&I, 0, pos, bxk_const_i(&I, BXK_I32, 7));
  bxk_return(&E);
  bxk_store(&B, 0, pos, bxk_const_i(&B, BXK_I32, 9));                  /* after the return */
  struct bxk_diags ds = {0};
  cr_assert(bxk_verify(k, &ds));
  cr_expect_geq(bxk_fold(k), 4);
  cr_expect(bxk_verify(k, &ds), "pruned kernel verifies: %s", ds.n ? ds.d[0].msg : "");
  golden(k,
    "kernel prune(b0: &mut tensor<i32, 1>)\n"
    "{\n"
    "  %1: u32 = topo UNIT_POS\n"
    "  %2: u32 = const 1\n"
    "  %3: u32 = const 2\n"
    "  %4: bool = const false\n"
    "  %5: bool = const true\n"
    "  %6: i32 = const 7\n"
    "  store b0[%1], %6\n"
    "  return\n"
    "}\n");
}

/* -------------------------------------------------------------- serial */

typedef struct bxk_kernel *(*maker)(void);
static struct bxk_kernel *mk_add(void) { return sample_add(BXK_F32, true); }
static struct bxk_kernel *mk_gelu(void) { return sample_gelu(BXK_F16); }
static struct bxk_kernel *mk_loops(void) { return sample_loops(); }
static struct bxk_kernel *mk_topo(void) { return sample_topo(); }
static struct bxk_kernel *mk_shared(void) { return sample_shared_sum(); }
static struct bxk_kernel *mk_cast(void) { return sample_cast(BXK_I64, BXK_F64); }
static struct bxk_kernel *mk_gelu_bf16(void) { return sample_gelu(BXK_BF16); }
static struct bxk_kernel *mk_cast_bf16(void) { return sample_cast(BXK_BF16, BXK_F64); }
static const maker makers[] = {mk_add, mk_gelu, mk_loops, mk_topo, mk_shared, mk_cast, mk_gelu_bf16,
                               mk_cast_bf16};

Test(kir_serial, round_trip_exact) {
  for (size_t m = 0; m < sizeof makers / sizeof makers[0]; m++) {
    struct bxk_kernel *k = makers[m]();
    size_t len;
    uint8_t *blob = bxk_serialize(k, &len);
    cr_assert(blob);
    struct bxk_diags ds = {0};
    struct bxk_kernel *k2 = bxk_deserialize(blob, len, &ds);
    cr_assert(k2, "%s", ds.n ? ds.d[0].msg : "?");
    char *a = bxk_print_alloc(k), *b = bxk_print_alloc(k2);
    cr_expect_str_eq(b, a);
    cr_expect(bxk_verify(k2, &ds));
    /* and serializing again gives the same bytes */
    size_t len2;
    uint8_t *blob2 = bxk_serialize(k2, &len2);
    cr_expect_eq(len2, len);
    cr_expect(len2 == len && !memcmp(blob, blob2, len));
    free(a), free(b), free(blob), free(blob2);
    bxk_kernel_free(k), bxk_kernel_free(k2);
  }
}

static void expect_reject(const uint8_t *p, size_t n, enum bxk_err e, const char *msg) {
  struct bxk_diags ds = {0};
  struct bxk_kernel *k = bxk_deserialize(p, n, &ds);
  cr_expect(!k);
  bxk_kernel_free(k);
  cr_assert_geq(ds.n, 1);
  cr_expect_eq(ds.d[0].err, e, "%s", ds.d[0].msg);
  cr_expect(strstr(ds.d[0].msg, msg), "expected \"%s\" in \"%s\"", msg, ds.d[0].msg);
}

static void put32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

Test(kir_serial, bad_inputs_named) {
  struct bxk_kernel *k = sample_loops();
  size_t len;
  uint8_t *blob = bxk_serialize(k, &len);
  uint8_t *c = malloc(len);
  expect_reject(blob, 3, BXK_E_FORMAT, "not a kernel IR blob");
  memcpy(c, blob, len);
  c[0] = 'X';
  expect_reject(c, len, BXK_E_FORMAT, "not a kernel IR blob");
  memcpy(c, blob, len);
  c[6] = 3;
  expect_reject(c, len, BXK_E_VERSION,
                "kernel IR format version 3 is not supported (this build reads versions 1 to 2)");
  c[6] = 0;
  expect_reject(c, len, BXK_E_VERSION, "format version 0 is not supported");
  /* version 1 (before bf16) still reads: the layout is the same */
  memcpy(c, blob, len);
  c[6] = 1;
  struct bxk_diags ds1 = {0};
  struct bxk_kernel *old = bxk_deserialize(c, len, &ds1);
  cr_expect(old != NULL && ds1.n == 0, "a version-1 blob reads");
  bxk_kernel_free(old);
  /* ... but bf16 did not exist in version 1 */
  struct bxk_kernel *kb = sample_gelu(BXK_BF16);
  size_t lb;
  uint8_t *bb = bxk_serialize(kb, &lb);
  bb[6] = 1;
  expect_reject(bb, lb, BXK_E_FORMAT, "unknown type");
  free(bb);
  bxk_kernel_free(kb);
  memcpy(c, blob, len);
  c[len / 2] ^= 0x40;
  expect_reject(c, len, BXK_E_FORMAT, "checksum mismatch");
  expect_reject(blob, len - 1, BXK_E_FORMAT, "payload of");
  /* a truncated payload with a matching length and checksum */
  memcpy(c, blob, len);
  put32(c + 8, (uint32_t)(len - 1 - 16));
  put32(c + 12, bxk_checksum(c + 16, len - 1 - 16));
  expect_reject(c, len - 1, BXK_E_FORMAT, "truncated");
  /* an unknown opcode, checksum fixed: the first instruction's op byte is
   * the one after the block's count; find it by the first topo op */
  memcpy(c, blob, len);
  for (size_t i = 16; i < len; i++)
    if (c[i] == BXK_OP_TOPO && c[i + 1] == BXK_U32) {
      c[i] = 250;
      break;
    }
  put32(c + 12, bxk_checksum(c + 16, len - 16));
  expect_reject(c, len, BXK_E_FORMAT, "unknown opcode");
  free(c);
  free(blob);
  bxk_kernel_free(k);
}

/* xorshift: deterministic mutations */
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

Test(kir_serial, mutations_never_crash) {
  int accepted = 0, rejected = 0;
  for (size_t m = 0; m < sizeof makers / sizeof makers[0]; m++) {
    struct bxk_kernel *k = makers[m]();
    size_t len;
    uint8_t *blob = bxk_serialize(k, &len);
    uint8_t *c = malloc(len + 8);
    for (int round = 0; round < 700; round++) {
      size_t n = len;
      memcpy(c, blob, len);
      int edits = 1 + (int)(next() % 4);
      for (int e = 0; e < edits; e++) {
        size_t at = 16 + next() % (len - 16);
        switch (next() % 4) {
        case 0: c[at] ^= (uint8_t)(1u << (next() % 8)); break;
        case 1: c[at] = (uint8_t)next(); break;
        case 2: n = at + 1; break;                                  /* truncate */
        default: c[at] = (uint8_t)(next() % 2 ? 0xff : 0x80); break; /* varint edges */
        }
      }
      /* most rounds fix the header, so the parser (not the checksum) decides */
      if (round % 8) {
        put32(c + 8, (uint32_t)(n - 16));
        put32(c + 12, bxk_checksum(c + 16, n - 16));
      }
      struct bxk_diags ds = {0};
      struct bxk_kernel *k2 = bxk_deserialize(c, n, &ds);
      if (k2) {
        accepted++;
        bxk_verify(k2, &ds);                 /* may fail, must not crash */
        free(bxk_print_alloc(k2));
        bxk_kernel_free(k2);
      } else {
        rejected++;
        cr_expect_geq(ds.n, 1);
      }
    }
    free(c);
    free(blob);
    bxk_kernel_free(k);
  }
  cr_log_info("mutations: %d parsed, %d rejected", accepted, rejected);
  cr_expect_gt(rejected, 0);
}
