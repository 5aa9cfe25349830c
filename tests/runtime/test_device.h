/* test_device.h — a device made by hand around a test-only backend
 * vtable.  The registry only knows the build's backends (and registered
 * layers); tests that need a deliberately broken or limited backend build
 * its device object here instead. */
#ifndef BEXT_TEST_DEVICE_H
#define BEXT_TEST_DEVICE_H

#include "backend.h"

/* static struct bext_device NAME: an opened base device serving VT. */
#define TEST_DEVICE(NAME, VT, SPELLING)                                                            \
  static struct bext_device NAME = {.vt = (VT), .kind = BEXT_BACKEND_NDARRAY, .layer = -1,         \
                                    .available = true, .opened = true, .name = SPELLING,           \
                                    .route = &NAME, .lock = PTHREAD_MUTEX_INITIALIZER}

#endif
