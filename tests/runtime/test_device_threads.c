/* test_device_threads.c — the device registry is shared state: threads
 * that intern and query devices (new specs included, so the registry
 * grows under them) and make tensors on the default device while another
 * thread keeps changing the default must each see a whole device (ndarray
 * or flex), equal specs must give one object, and ThreadSanitizer (make
 * tsan) must see no race.  Tensors made by one thread and released by
 * another ride along, so the runtime's cross-thread paths run too. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <bext/bext.h>

#define ROUNDS 2000

static atomic_bool g_stop;

static void *flipper(void *arg) {
  (void)arg;
  const bext_device *nd = bext_device_get("ndarray"), *fx = bext_device_get("flex");
  for (int i = 0; !atomic_load(&g_stop); i++) {
    bext_set_default_device(i % 3 == 2 ? NULL : (i & 1) ? nd : fx);
  }
  bext_set_default_device(NULL);
  return NULL;
}

struct worker {
  bext_tensor *handoff[ROUNDS / 10];  /* released by the main thread */
  int bad;
  const bext_device *interned[64];
};

static void *user(void *arg) {
  struct worker *w = arg;
  for (int i = 0; i < ROUNDS; i++) {
    const bext_device *d = bext_device_default();
    const char *name = bext_device_name(d);
    if (strcmp(name, "ndarray") != 0 && strcmp(name, "flex") != 0) w->bad++;
    if (!bext_device_available(d)) w->bad++;
    if (i < 64) {
      /* a new spec per round: both users intern the same 64 concurrently */
      char spec[64];
      snprintf(spec, sizeof spec, "cube:cuda:%d+fusion+autodiff(balanced)", i);
      w->interned[i] = bext_device_get(spec);
      if (!w->interned[i]) w->bad++;
    }
    float v[4] = {1, 2, 3, 4};
    bext_tensor *t = bext_from_data(v, BEXT_F32, (int64_t[]){4}, 1, NULL);
    if (!t) {
      w->bad++;
      continue;
    }
    bext_backend_kind got = bext_device_backend(bext_device_of(t));
    if (got != BEXT_BACKEND_NDARRAY && got != BEXT_BACKEND_FLEX) w->bad++;
    if (i % 10 == 0) w->handoff[i / 10] = t;
    else bext_release(t);
  }
  return NULL;
}

Test(device_threads, default_device_changes_while_others_use_it) {
  pthread_t flip, users[2];
  struct worker w[2];
  memset(w, 0, sizeof w);
  cr_assert_eq(pthread_create(&flip, NULL, flipper, NULL), 0);
  for (int k = 0; k < 2; k++) cr_assert_eq(pthread_create(&users[k], NULL, user, &w[k]), 0);
  for (int k = 0; k < 2; k++) pthread_join(users[k], NULL);
  atomic_store(&g_stop, true);
  pthread_join(flip, NULL);
  for (int k = 0; k < 2; k++) {
    cr_expect_eq(w[k].bad, 0, "user %d saw %d torn or unusable devices", k, w[k].bad);
    float out[4];
    for (int i = 0; i < ROUNDS / 10; i++) {
      if (!w[k].handoff[i]) continue;
      cr_expect(bext_read(w[k].handoff[i], out, sizeof out) && out[3] == 4.0f);
      bext_release(w[k].handoff[i]);
    }
  }
  for (int i = 0; i < 64; i++)
    cr_expect_eq(w[0].interned[i], w[1].interned[i], "spec %d interned twice", i);
  cr_expect_eq(bext_device_backend(bext_device_default()), BEXT_BACKEND_FLEX, "back to the build default");
}
