/* test_device_threads.c — the device registry is shared state: threads
 * that parse, format and query devices and make tensors on the default
 * device while another thread keeps changing the default must each see a
 * whole device (ndarray or flex, never a mix), and ThreadSanitizer (make
 * tsan) must see no race.  Tensors made by one thread and released by
 * another ride along, so the runtime's cross-thread paths run too. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include <bext/bext.h>

#define ROUNDS 2000

static atomic_bool g_stop;

static void *flipper(void *arg) {
  (void)arg;
  bext_device nd, fx;
  bext_device_parse("ndarray", &nd);
  bext_device_parse("flex", &fx);
  for (int i = 0; !atomic_load(&g_stop); i++) {
    bext_set_default_device(i % 3 == 2 ? NULL : (i & 1) ? &nd : &fx);
  }
  bext_set_default_device(NULL);
  return NULL;
}

struct worker {
  bext_tensor *handoff[ROUNDS / 10];  /* released by the main thread */
  int bad;
};

static void *user(void *arg) {
  struct worker *w = arg;
  for (int i = 0; i < ROUNDS; i++) {
    bext_device d = bext_device_default();
    char buf[64];
    bext_device_format(&d, buf, sizeof buf);
    if (strcmp(buf, "ndarray") != 0 && strcmp(buf, "flex") != 0) w->bad++;
    if (!bext_device_available(&d)) w->bad++;
    float v[4] = {1, 2, 3, 4};
    bext_tensor *t = bext_from_data(v, BEXT_F32, (int64_t[]){4}, 1, NULL);
    if (!t) {
      w->bad++;
      continue;
    }
    bext_device got;
    if (!bext_device_of(t, &got) ||
        (got.backend != BEXT_BACKEND_NDARRAY && got.backend != BEXT_BACKEND_FLEX))
      w->bad++;
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
  cr_expect_eq(bext_device_default().backend, BEXT_BACKEND_FLEX, "back to the build default");
}
