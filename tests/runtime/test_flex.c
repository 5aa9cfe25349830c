/* test_flex.c — Flex backend behaviour the conformance matrix cannot see:
 * zero-copy views (the output shares the input's storage), in-place reuse
 * of uniquely held operands (and no reuse when shared), strided and
 * broadcasting paths against closed-form expectations, and a complete
 * exec table.  Values are checked through the public API; storage
 * identity through the internal handle (runtime/src/tensor.h). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "backend.h"

static const bext_device *flex(void) {
  const bext_device *d;
  cr_assert((d = bext_device_get("flex")));
  return d;
}

/* A flex f32 tensor holding 0, 1, 2, ... */
static bext_tensor *ramp(int rank, const int64_t *shape) {
  const bext_device *d = flex();
  int64_t n = 1;
  for (int i = 0; i < rank; i++) n *= shape[i];
  float *v = malloc(sizeof(float) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) v[i] = (float)i;
  bext_tensor *t = bext_from_data(v, BEXT_F32, shape, rank, d);
  free(v);
  cr_assert_not_null(t, "%s", bext_last_error());
  return t;
}

static void read_f32(bext_tensor *t, float *out, size_t n) {
  cr_assert(bext_read(t, out, n * sizeof(float)), "%s", bext_last_error());
}

Test(flex, exec_table_is_complete) {
  for (int op = 0; op < BXR_OP_COUNT; op++)
    cr_expect_not_null(bxr_backend_flex.exec[op], "flex lacks op %s", bxr_op_name((enum bxr_opcode)op));
  cr_expect_eq(bxr_backend_flex.api_version, BXR_BACKEND_API_VERSION);
}

Test(flex, views_share_storage) {
  bext_tensor *t = ramp(2, (int64_t[]){ 4, 6 });
  struct bxr_storage *s = t->storage;

  bext_tensor *r = bext_reshape(bext_retain(t), (int64_t[]){ 3, 8 }, 2);
  cr_assert_not_null(r, "%s", bext_last_error());
  cr_expect_eq(r->storage, s, "reshape of a contiguous tensor copied");

  bext_tensor *tr = bext_swap_dims(bext_retain(t), 0, 1);
  cr_expect_eq(tr->storage, s, "swap_dims copied");
  cr_expect(!bext_is_contiguous(tr));

  bext_tensor *p = bext_permute(bext_retain(t), (int[]){ 1, 0 }, 2);
  cr_expect_eq(p->storage, s, "permute copied");

  bext_tensor *sl = bext_slice(bext_retain(t), (int64_t[]){ 1, 2 }, (int64_t[]){ 3, 5 }, 2);
  cr_expect_eq(sl->storage, s, "slice copied");
  float v[6];
  read_f32(sl, v, 6);
  float want[6] = { 8, 9, 10, 14, 15, 16 };
  for (int i = 0; i < 6; i++) cr_expect_eq(v[i], want[i], "slice[%d] = %g", i, v[i]);

  bext_tensor *nw = bext_narrow(bext_retain(t), 1, 4, 2);
  cr_expect_eq(nw->storage, s, "narrow copied");
  float w[8];
  read_f32(nw, w, 8);
  cr_expect_eq(w[0], 4.0f);
  cr_expect_eq(w[7], 23.0f);

  bext_tensor *col = bext_slice(bext_retain(t), (int64_t[]){ 0, 0 }, (int64_t[]){ 4, 1 }, 2);
  bext_tensor *ex = bext_expand(col, (int64_t[]){ 4, 5 }, 2);
  cr_assert_not_null(ex, "%s", bext_last_error());
  cr_expect_eq(ex->storage, s, "expand copied");
  cr_expect_eq(ex->strides[1], 0, "expanded dim must have stride 0");
  float e[20];
  read_f32(ex, e, 20);
  for (int i = 0; i < 20; i++) cr_expect_eq(e[i], (float)(6 * (i / 5)));

  /* A transposed view cannot be reshaped flat without a copy. */
  bext_tensor *flat = bext_reshape(bext_retain(tr), (int64_t[]){ 24 }, 1);
  cr_expect_neq(flat->storage, s, "reshape of a transposed view must copy");
  float f[24];
  read_f32(flat, f, 24);
  for (int i = 0; i < 24; i++) cr_expect_eq(f[i], (float)((i % 4) * 6 + i / 4));

  bext_release(flat);
  bext_release(ex);
  bext_release(nw);
  bext_release(sl);
  bext_release(p);
  bext_release(tr);
  bext_release(r);
  bext_release(t);
}

Test(flex, inplace_reuse_when_unique) {
  bext_tensor *a = ramp(1, (int64_t[]){ 16 });
  bext_tensor *b = ramp(1, (int64_t[]){ 16 });
  void *data = a->storage->data;
  bext_tensor *c = bext_add(a, b);   /* a is unique: its buffer is reused */
  cr_assert_not_null(c, "%s", bext_last_error());
  cr_expect_eq(c, a, "a unique operand should become the output");
  cr_expect_eq(c->storage->data, data);
  float v[16];
  read_f32(c, v, 16);
  for (int i = 0; i < 16; i++) cr_expect_eq(v[i], 2.0f * i);

  bext_tensor *d = bext_exp(c);      /* unary in place too */
  cr_expect_eq(d, a);
  read_f32(d, v, 16);
  cr_expect_float_eq(v[1], expf(2.0f), 1e-6f);
  bext_release(d);
}

Test(flex, no_reuse_when_shared) {
  bext_tensor *a = ramp(1, (int64_t[]){ 16 });
  bext_tensor *b = ramp(1, (int64_t[]){ 16 });
  bext_tensor *c = bext_add(bext_retain(a), b);    /* handle refcount 2 */
  cr_assert_not_null(c);
  cr_expect_neq(c, a);
  cr_expect_neq(c->storage, a->storage);
  float v[16];
  read_f32(a, v, 16);
  for (int i = 0; i < 16; i++) cr_expect_eq(v[i], (float)i, "shared input was overwritten");

  /* A view keeps the storage shared: no reuse of `a` either. */
  bext_tensor *view = bext_reshape(bext_retain(a), (int64_t[]){ 4, 4 }, 2);
  bext_tensor *n = bext_neg(a);
  cr_expect_neq(n->storage, view->storage, "storage shared by a view was reused");
  float w[16];
  read_f32(view, w, 16);
  for (int i = 0; i < 16; i++) cr_expect_eq(w[i], (float)i);
  bext_release(n);
  bext_release(view);
  bext_release(c);
}

Test(flex, broadcast_and_strided_paths) {
  /* [3,1] + [4] -> [3,4]: row and column broadcast together. */
  bext_tensor *a = ramp(2, (int64_t[]){ 3, 1 });
  bext_tensor *b = ramp(1, (int64_t[]){ 4 });
  bext_tensor *c = bext_mul(a, bext_add_scalar(b, 1.0));
  cr_assert_not_null(c, "%s", bext_last_error());
  cr_assert_eq(bext_rank(c), 2);
  float v[12];
  read_f32(c, v, 12);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++) cr_expect_eq(v[i * 4 + j], (float)(i * (j + 1)));

  /* Transposed (non-contiguous) operand against a contiguous one. */
  bext_tensor *t = bext_swap_dims(ramp(2, (int64_t[]){ 5, 7 }), 0, 1);   /* [7,5] */
  bext_tensor *u = ramp(2, (int64_t[]){ 7, 5 });
  bext_tensor *s = bext_sub(t, u);
  float w[35];
  read_f32(s, w, 35);
  for (int i = 0; i < 7; i++)
    for (int j = 0; j < 5; j++) cr_expect_eq(w[i * 5 + j], (float)(j * 7 + i) - (float)(i * 5 + j));

  /* f16 through f32, strided input, long enough to use the vector paths. */
  bext_tensor *h = bext_cast(bext_swap_dims(ramp(2, (int64_t[]){ 40, 30 }), 0, 1), BEXT_F16);
  bext_tensor *h2 = bext_add(bext_retain(h), h);
  bext_tensor *back = bext_cast(h2, BEXT_F32);
  float x[1200];
  read_f32(back, x, 1200);
  for (int i = 0; i < 30; i++)
    for (int j = 0; j < 40; j++) cr_expect_eq(x[i * 40 + j], 2.0f * (float)(j * 30 + i));

  /* matmul with a transposed operand (passed to BLAS as Trans) */
  bext_tensor *m = bext_swap_dims(ramp(2, (int64_t[]){ 3, 2 }), 0, 1);   /* [2,3] */
  bext_tensor *k = ramp(2, (int64_t[]){ 3, 2 });
  bext_tensor *p = bext_matmul(m, k);
  cr_assert_not_null(p, "%s", bext_last_error());
  float r[4];
  read_f32(p, r, 4);
  /* m = [[0,2,4],[1,3,5]], k = [[0,1],[2,3],[4,5]] */
  float want[4] = { 20, 26, 26, 35 };
  for (int i = 0; i < 4; i++) cr_expect_eq(r[i], want[i], "matmul[%d] = %g", i, r[i]);

  bext_release(back);
  bext_release(s);
  bext_release(c);
  bext_release(p);
}

Test(flex, index_errors_are_reported) {
  const bext_device *d = flex();
  int64_t bad[] = { 0, 9 };
  bext_tensor *idx = bext_from_data(bad, BEXT_I64, (int64_t[]){ 2 }, 1, d);
  bext_tensor *r = bext_select(ramp(2, (int64_t[]){ 3, 2 }), 0, idx);
  cr_expect_null(r);
  cr_expect(strstr(bext_last_error(), "select") != NULL, "error names the op: %s", bext_last_error());
}

/* The small-tensor scalar path computes in f32 only when the scalar is
 * exact in f32 (as the general engine does); an inexact scalar must still
 * be applied in double and rounded once.  Both in place (unique operand)
 * and into a fresh output (shared operand). */
Test(flex, small_scalar_ops_round_like_the_general_path) {
  const bext_device *d = flex();
  float x[16];
  for (int i = 0; i < 16; i++) x[i] = 1.0f / (float)(i + 3) + (float)i * 0.37f;
  bext_tensor *t = bext_from_data(x, BEXT_F32, (int64_t[]){16}, 1, d);
  cr_assert_not_null(t);
  float v[16];
  bext_tensor *r = bext_add_scalar(bext_retain(t), 0.5);      /* exact: f32 math */
  cr_assert_not_null(r, "%s", bext_last_error());
  cr_expect_neq(r, t, "shared operand: fresh output");
  read_f32(r, v, 16);
  for (int i = 0; i < 16; i++) cr_expect_eq(v[i], x[i] + 0.5f, "add 0.5 at %d", i);
  bext_release(r);
  r = bext_mul_scalar(bext_retain(t), 0.1);                   /* inexact: via double */
  read_f32(r, v, 16);
  for (int i = 0; i < 16; i++) cr_expect_eq(v[i], (float)((double)x[i] * 0.1), "mul 0.1 at %d", i);
  bext_release(r);
  r = bext_sub_scalar(t, -2.0);                               /* unique: in place */
  cr_expect_eq(r, t, "unique operand reused");
  read_f32(r, v, 16);
  for (int i = 0; i < 16; i++) cr_expect_eq(v[i], x[i] + 2.0f, "sub -2 at %d", i);
  r = bext_max_scalar(r, NAN);                                /* NaN: general path */
  read_f32(r, v, 16);
  for (int i = 0; i < 16; i++) cr_expect(isnan(v[i]), "max with NaN at %d", i);
  bext_release(r);
}
