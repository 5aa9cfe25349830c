/* test_biased_counts.c — biased handle counts (tensor.h): the creating
 * thread changes a handle's count without atomic RMWs; the first retain or
 * release from another thread takes the handle over (membarrier + the
 * owner's busy flag) and from then on everyone uses atomics.  Checks that
 * counts stay exact when the owner and another thread race through the
 * take-over, that a handle whose owner dropped its references first is
 * still freed by the other thread, and that ops run from another thread
 * never reuse a handle biased elsewhere in place. */
#include <criterion/criterion.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backend.h"

static bext_tensor *vec(float base) {
  const bext_device *fx;
  cr_assert((fx = bext_device_get("flex")));
  float v[8];
  for (int i = 0; i < 8; i++) v[i] = base + (float)i;
  bext_tensor *t = bext_from_data(v, BEXT_F32, (int64_t[]){8}, 1, fx);
  cr_assert_not_null(t, "%s", bext_last_error());
  return t;
}

Test(biased, owner_updates_keep_the_bias) {
  bext_tensor *t = vec(0);
  long q = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  bool have = q > 0 && (q & MEMBARRIER_CMD_PRIVATE_EXPEDITED);
  cr_expect_eq(bxr_bias_on, have, "biasing is on exactly when the kernel has membarrier");
  if (!bxr_bias_on) {
    cr_expect_eq(atomic_load(&t->owner), 0, "no membarrier: handles start shared");
  } else {
    uint64_t me = atomic_load(&t->owner);
    cr_expect_gt(me, 1, "a new handle is biased towards its creator");
    for (int i = 0; i < 5; i++) bext_retain(t);
    cr_expect_eq(bext_refcount(t), 6);
    for (int i = 0; i < 5; i++) bext_release(t);
    cr_expect_eq(atomic_load(&t->owner), me, "owner updates do not unbias");
  }
  cr_expect_eq(bext_refcount(t), 1);
  bext_release(t);
}

static void *retain_once(void *arg) {
  bext_retain(arg);
  return NULL;
}

Test(biased, foreign_retain_takes_over) {
  bext_tensor *t = vec(0);
  bext_retain(t);                       /* 2, counted by the owner */
  pthread_t th;
  pthread_create(&th, NULL, retain_once, t);
  pthread_join(th, NULL);
  cr_expect_eq(atomic_load(&t->owner), 0, "a foreign retain unbiases the handle");
  cr_expect_eq(bext_refcount(t), 3, "the owner's plain updates survived the take-over");
  bext_release(t);
  bext_release(t);
  cr_expect_eq(bext_refcount(t), 1);
  bext_release(t);
}

/* The owner hands its only reference to another thread and keeps none:
 * the other thread's release must free the tensor (LSan would report the
 * block otherwise). */
static void *release_once(void *arg) {
  float v[8];
  bool ok = bext_read(arg, v, sizeof v) && v[7] == 7.0f;
  bext_release(arg);
  return ok ? arg : NULL;
}

Test(biased, handed_over_reference_is_freed_by_the_receiver) {
  for (int i = 0; i < 20; i++) {
    bext_tensor *t = vec(0);
    bext_tensor *extra = bext_retain(t);  /* owner count 2 */
    bext_release(t);                      /* owner drops its own: 1 left, for the receiver */
    pthread_t th;
    void *ok;
    pthread_create(&th, NULL, release_once, extra);
    pthread_join(th, &ok);
    cr_expect_not_null(ok, "the receiver read wrong values");
  }
}

/* Owner and a second thread both hammer the same handle; the second one
 * starts while the owner is mid-loop, so the take-over races owner
 * updates.  Every retain is matched: the count must end at 1. */
struct race {
  bext_tensor *t;
  atomic_int go;
};

static void *hammer(void *arg) {
  struct race *r = arg;
  while (!atomic_load(&r->go)) {}
  for (int i = 0; i < 20000; i++) {
    bext_retain(r->t);
    bext_release(r->t);
  }
  return NULL;
}

Test(biased, takeover_races_owner_updates) {
  for (int round = 0; round < 20; round++) {
    struct race r = { .t = vec(0) };
    pthread_t th;
    pthread_create(&th, NULL, hammer, &r);
    for (int i = 0; i < 20000; i++) {
      if (i == 100 * round) atomic_store(&r.go, 1);
      bext_retain(r.t);
      bext_retain(r.t);
      bext_release(r.t);
      bext_release(r.t);
    }
    atomic_store(&r.go, 1);
    pthread_join(th, NULL);
    cr_expect_eq(bext_refcount(r.t), 1, "round %d: count drifted to %d", round, bext_refcount(r.t));
    cr_expect_eq(atomic_load(&r.t->owner), 0, "round %d: the hammer thread took the handle over", round);
    bext_release(r.t);
  }
}

/* The take-over waits for an owner caught inside a count update: freeze
 * the owner "mid-update" by hand (busy set, count not yet written), start a
 * foreign retain, and check it neither finishes nor touches the count until
 * the owner completes its update. */
static void *retain_and_flag(void *arg) {
  struct race *r = arg;
  bext_retain(r->t);
  atomic_store(&r->go, 1);
  return NULL;
}

Test(biased, takeover_waits_for_an_owner_mid_update) {
  struct race r = { .t = vec(0) };
  if (!bxr_bias_on) {
    bext_release(r.t);
    cr_skip_test("no membarrier on this kernel: handles are never biased");
  }
  uint64_t me = atomic_load(&r.t->owner);
  atomic_store(&r.t->busy, 1);          /* owner: "I'm between load and store" */
  int rc = atomic_load(&r.t->refcount);
  pthread_t th;
  pthread_create(&th, NULL, retain_and_flag, &r);
  usleep(50 * 1000);
  cr_expect_eq(atomic_load(&r.go), 0, "the foreign retain did not wait for the owner");
  cr_expect_eq(atomic_load(&r.t->owner), 1, "the handle is marked as being taken over");
  cr_expect_neq(atomic_load(&r.t->owner), me);
  atomic_store(&r.t->refcount, rc + 1);  /* owner finishes its retain */
  atomic_store(&r.t->busy, 0);
  pthread_join(th, NULL);
  cr_expect_eq(atomic_load(&r.go), 1);
  cr_expect_eq(bext_refcount(r.t), rc + 2, "both retains counted");
  cr_expect_eq(atomic_load(&r.t->owner), 0);
  bext_release(r.t);
  bext_release(r.t);
  bext_release(r.t);
}

/* An op on another thread consuming an owned (biased) operand whose count
 * is 1 there: no in-place reuse until the handle is taken over — the
 * result is fresh and correct either way. */
struct opjob {
  bext_tensor *in, *out;
};
static void *neg_there(void *arg) {
  struct opjob *j = arg;
  j->out = bext_neg(j->in);
  return NULL;
}

Test(biased, op_on_another_thread) {
  struct opjob j = { .in = vec(1) };
  pthread_t th;
  pthread_create(&th, NULL, neg_there, &j);
  pthread_join(th, NULL);
  cr_assert_not_null(j.out, "%s", bext_last_error());
  float v[8];
  cr_assert(bext_read(j.out, v, sizeof v));
  for (int i = 0; i < 8; i++) cr_expect_eq(v[i], -(1.0f + (float)i));
  cr_expect_eq(bext_refcount(j.out), 1);
  bext_release(j.out);   /* biased towards the (exited) worker: we take it over */
}
