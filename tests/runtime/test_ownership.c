/* test_ownership.c — reference counting and ownership: owned operands are
 * consumed, borrowed ones are not, views share storage, and a backend
 * reuses a buffer in place only when the operand is unique (handle and
 * storage both held once).  Runs clean under LSan: every path releases. */
#include <criterion/criterion.h>
#include <pthread.h>

#include "backend.h"

static const bext_device *nd;
static void setup(void) { cr_assert((nd = bext_device_get("ndarray"))); }

static bext_tensor *vec(int n) {
  float v[16];
  for (int i = 0; i < n; i++) v[i] = (float)i + 1;
  return bext_from_data(v, BEXT_F32, (int64_t[]){n}, 1, nd);
}

Test(ownership, retain_release_counts, .init = setup) {
  bext_tensor *t = vec(4);
  cr_assert_eq(bext_refcount(t), 1);
  cr_expect_eq(bext_retain(t), t);
  cr_expect_eq(bext_refcount(t), 2);
  bext_release(t);
  cr_expect_eq(bext_refcount(t), 1);
  /* queries and reads borrow */
  float out[4];
  cr_expect(bext_read(t, out, sizeof out));
  cr_expect_eq(bext_numel(t), 4);
  cr_expect_eq(bext_refcount(t), 1);
  bext_release(t);
  bext_release(NULL);              /* no-op */
  cr_expect_null(bext_retain(NULL));
}

Test(ownership, ops_consume_operands, .init = setup) {
  bext_tensor *a = vec(4);
  bext_retain(a); /* keep one for ourselves */
  bext_tensor *b = bext_neg(a);
  cr_assert_not_null(b);
  cr_expect_eq(bext_refcount(a), 1, "the op consumed exactly the reference it was given");
  /* a failing op still consumes */
  bext_retain(a);
  cr_expect_null(bext_add(a, vec(3)));
  cr_expect_eq(bext_refcount(a), 1);
  bext_release(a);
  bext_release(b);
}

Test(ownership, views_share_storage, .init = setup) {
  bext_tensor *a = bext_reshape(vec(6), (int64_t[]){2, 3}, 2);
  bext_tensor *v = bext_swap_dims(bext_retain(a), 0, 1);
  cr_assert_not_null(v);
  cr_expect_eq(a->storage, v->storage, "swap_dims is a view");
  cr_expect_eq(atomic_load(&a->storage->refcount), 2);
  cr_expect(!bext_is_contiguous(v));
  cr_expect(!bxr_is_unique(a), "storage shared with a view: not unique");
  bext_tensor *s = bext_slice(bext_retain(a), (int64_t[]){1}, (int64_t[]){2}, 1);
  cr_expect_eq(s->storage, a->storage);
  cr_expect_eq(s->offset, 3);
  float out[3];
  bext_read(s, out, sizeof out);
  cr_expect(out[0] == 4 && out[1] == 5 && out[2] == 6);
  bext_release(s);
  bext_release(v);
  cr_expect_eq(atomic_load(&a->storage->refcount), 1, "views released their storage");
  cr_expect(bxr_is_unique(a));
  bext_release(a);
}

Test(ownership, in_place_only_when_unique, .init = setup) {
  /* unique: the output reuses the operand's buffer */
  bext_tensor *a = vec(8);
  void *p = bxr_data(a);
  bext_tensor *b = bext_exp(a);
  cr_assert_not_null(b);
  cr_expect_eq(bxr_data(b), p, "unique operand reused in place");
  bext_release(b);

  /* shared handle: a fresh output, the operand keeps its values */
  a = vec(8);
  p = bxr_data(a);
  b = bext_exp(bext_retain(a));
  cr_expect_neq(bxr_data(b), p, "shared handle must not be overwritten");
  float out[8];
  bext_read(a, out, sizeof out);
  cr_expect_eq(out[0], 1.0f);
  bext_release(b);

  /* shared storage (a view holds it): no reuse either */
  bext_tensor *view = bext_reshape(bext_retain(a), (int64_t[]){2, 4}, 2);
  b = bext_add_scalar(a, 1); /* a's handle is unique now, its storage is not */
  cr_expect_neq(bxr_data(b), bxr_data(view));
  bext_read(view, out, sizeof out);
  cr_expect_eq(out[7], 8.0f, "the view still sees the original values");
  bext_release(b);
  bext_release(view);

  /* binary: lhs reused when it has the output's shape and dtype */
  a = vec(4);
  p = bxr_data(a);
  b = bext_mul(a, vec(4));
  cr_expect_eq(bxr_data(b), p);
  bext_release(b);
  /* ... but not when broadcasting grows it */
  a = vec(1);
  p = bxr_data(a);
  b = bext_add(a, vec(4));
  cr_expect_neq(bxr_data(b), p);
  cr_expect_eq(bext_numel(b), 4);
  bext_release(b);
}

static void *hammer(void *arg) {
  bext_tensor *t = arg;
  for (int i = 0; i < 10000; i++) bext_release(bext_retain(t));
  return NULL;
}

Test(ownership, refcounts_are_atomic, .init = setup) {
  bext_tensor *t = vec(2);
  pthread_t th[2];
  for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, hammer, t);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  cr_expect_eq(bext_refcount(t), 1);
  bext_release(t);
}

Test(ownership, cat_consumes_every_operand, .init = setup) {
  bext_tensor *keep = vec(2);
  bext_tensor *ts[5] = {vec(1), bext_retain(keep), vec(3), vec(4), vec(5)};
  bext_tensor *c = bext_cat(ts, 5, 0);
  cr_assert_not_null(c, "%s", bext_last_error());
  cr_expect_eq(bext_numel(c), 15);
  cr_expect_eq(bext_refcount(keep), 1);
  bext_release(c);
  /* failing cat (rank mismatch) still consumes all five */
  bext_tensor *bad[5] = {vec(1), bext_retain(keep), vec(3), bext_reshape(vec(4), (int64_t[]){2, 2}, 2), vec(5)};
  cr_expect_null(bext_cat(bad, 5, 0));
  cr_expect_eq(bext_refcount(keep), 1);
  bext_release(keep);
}
