/* device.c — device strings (parse/format), the device table mapping
 * device kinds to the backends compiled into this build, and the default
 * device (shared by all threads: locked, see bext_device_default).
 *
 * Flex: backends/flex/ defines bxfx_backend.  runtime/CMakeLists.txt sets
 * BEXT_HAVE_FLEX when a flex source defines it; the reference is then
 * strong, so the archive member is always linked in.  Without it the
 * reference is weak: the build still links, and "flex" answers "backend
 * not available in this build" (a weak reference alone would not pull the
 * member out of a static library, hence the define). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

#ifndef BEXT_HAVE_FLEX
extern const struct bxr_backend bxfx_backend __attribute__((weak));
#endif

static const char *const kind_names[BEXT_BACKEND_COUNT] = {
    [BEXT_BACKEND_NDARRAY] = "ndarray", [BEXT_BACKEND_FLEX] = "flex",
    [BEXT_BACKEND_CUBE] = "cube",       [BEXT_BACKEND_LIBTORCH] = "libtorch",
    [BEXT_BACKEND_REMOTE] = "remote",
};
_Static_assert(sizeof kind_names / sizeof kind_names[0] == BEXT_BACKEND_COUNT, "one name per kind");

const struct bxr_backend *bxr_backend_for(bext_backend_kind kind) {
  const struct bxr_backend *be = NULL;
  switch (kind) {
  case BEXT_BACKEND_NDARRAY: be = &bxnd_backend; break;
  case BEXT_BACKEND_FLEX: be = &bxfx_backend; break; /* NULL when not linked */
  default: break;
  }
  if (be && be->api_version != BXR_BACKEND_API_VERSION) return NULL;
  return be;
}

/* Parses an optional ":N" index at s; returns false on junk. */
static bool parse_index(const char *s, int *index) {
  *index = 0;
  if (*s == 0) return true;
  if (*s != ':' || s[1] == 0) return false;
  char *end;
  long v = strtol(s + 1, &end, 10);
  if (*end || v < 0 || v > 1 << 20 || s[1] == '-' || s[1] == '+') return false;
  *index = (int)v;
  return true;
}

bool bext_device_parse(const char *spec, bext_device *out) {
  if (!spec || !out) return bxr_error("bext_device_parse: NULL argument");
  bext_device d;
  memset(&d, 0, sizeof d);
  char buf[160];
  size_t len = strlen(spec);
  if (len >= sizeof buf) return bxr_error("bext_device_parse: device string too long (%zu chars)", len);
  memcpy(buf, spec, len + 1);
  static const char fus[] = "+fusion";
  if (len >= sizeof fus - 1 && strcmp(buf + len - (sizeof fus - 1), fus) == 0) {
    d.fusion = true;
    buf[len - (sizeof fus - 1)] = 0;
  }
  const char *why = NULL;
  if (strcmp(buf, "ndarray") == 0) d.backend = BEXT_BACKEND_NDARRAY;
  else if (strcmp(buf, "flex") == 0) d.backend = BEXT_BACKEND_FLEX;
  else if (strncmp(buf, "cube:", 5) == 0) {
    d.backend = BEXT_BACKEND_CUBE;
    const char *t = buf + 5;
    const char *targets[] = {"vulkan", "cuda", "hip"};
    if (strcmp(t, "cpu") == 0) strcpy(d.target, "cpu");
    else {
      bool ok = false;
      for (int i = 0; i < 3 && !ok; i++) {
        size_t n = strlen(targets[i]);
        if (strncmp(t, targets[i], n) == 0 && (t[n] == 0 || t[n] == ':')) {
          strcpy(d.target, targets[i]);
          ok = parse_index(t + n, &d.index);
          if (!ok) why = "bad device index (expected ':' and a number)";
        }
      }
      if (!ok && !why) why = "unknown cube target (expected cpu, vulkan, cuda or hip)";
    }
  } else if (strncmp(buf, "libtorch:", 9) == 0) {
    d.backend = BEXT_BACKEND_LIBTORCH;
    const char *t = buf + 9;
    if (strcmp(t, "cpu") == 0) strcpy(d.target, "cpu");
    else if (strncmp(t, "cuda", 4) == 0 && (t[4] == 0 || t[4] == ':')) {
      strcpy(d.target, "cuda");
      if (!parse_index(t + 4, &d.index)) why = "bad device index (expected ':' and a number)";
    } else why = "unknown libtorch target (expected cpu or cuda)";
  } else if (strncmp(buf, "remote:", 7) == 0) {
    d.backend = BEXT_BACKEND_REMOTE;
    size_t n = strlen(buf + 7);
    if (n == 0) why = "remote device needs an address (remote:tcp://host:port)";
    else if (n >= sizeof d.address) why = "remote address too long";
    else memcpy(d.address, buf + 7, n + 1);
  } else why = "unknown backend (expected ndarray, flex, cube:..., libtorch:..., remote:...)";
  if (why) return bxr_error("bext_device_parse: '%s': %s", spec, why);
  *out = d;
  return true;
}

int bext_device_format(const bext_device *dev, char *buf, size_t n) {
  if (!dev) return snprintf(buf, n, "NULL");
  const char *k = (unsigned)dev->backend < BEXT_BACKEND_COUNT ? kind_names[dev->backend] : "?";
  const char *f = dev->fusion ? "+fusion" : "";
  switch (dev->backend) {
  case BEXT_BACKEND_CUBE:
  case BEXT_BACKEND_LIBTORCH:
    if (strcmp(dev->target, "cpu") == 0) return snprintf(buf, n, "%s:cpu%s", k, f);
    return snprintf(buf, n, "%s:%s:%d%s", k, dev->target, dev->index, f);
  case BEXT_BACKEND_REMOTE: return snprintf(buf, n, "remote:%s%s", dev->address, f);
  default: return snprintf(buf, n, "%s%s", k, f);
  }
}

/* The default device is shared by every thread; one thread may change it
 * while others make tensors on it, so it is read and written under a lock
 * (a device is ~100 bytes: a plain copy could be torn).  Never hot: the
 * lookup that uses it formats the device name anyway. */
static pthread_mutex_t g_default_m = PTHREAD_MUTEX_INITIALIZER;
static bool g_default_set;
static bext_device g_default;

bext_device bext_device_default(void) {
  pthread_mutex_lock(&g_default_m);
  bool set = g_default_set;
  bext_device dflt = g_default;
  pthread_mutex_unlock(&g_default_m);
  if (set) return dflt;
  bext_device d;
  memset(&d, 0, sizeof d);
  d.backend = bxr_backend_for(BEXT_BACKEND_FLEX) ? BEXT_BACKEND_FLEX : BEXT_BACKEND_NDARRAY;
  return d;
}

const struct bxr_backend *bxr_backend_of_device(const bext_device *dev, const char *api) {
  bext_device d = dev ? *dev : bext_device_default();
  char name[160];
  bext_device_format(&d, name, sizeof name);
  if ((unsigned)d.backend >= BEXT_BACKEND_COUNT) {
    bxr_error("%s: invalid device (backend kind %d)", api, (int)d.backend);
    return NULL;
  }
  if (d.fusion) {
    bxr_error("%s: device '%s': the fusion decorator is not available in this build", api, name);
    return NULL;
  }
  const struct bxr_backend *be = bxr_backend_for(d.backend);
  if (!be) bxr_error("%s: device '%s': backend not available in this build", api, name);
  return be;
}

bool bext_device_available(const bext_device *dev) {
  if (!dev) return bxr_error("bext_device_available: device is NULL");
  return bxr_backend_of_device(dev, "bext_device_available") != NULL;
}

bool bext_set_default_device(const bext_device *dev) {
  if (!dev) {
    pthread_mutex_lock(&g_default_m);
    g_default_set = false; /* back to the build's default */
    pthread_mutex_unlock(&g_default_m);
    return true;
  }
  if (!bxr_backend_of_device(dev, "bext_set_default_device")) return false;
  pthread_mutex_lock(&g_default_m);
  g_default = *dev;
  g_default_set = true;
  pthread_mutex_unlock(&g_default_m);
  return true;
}
