/* kernel_cache.c — compiled kernels kept on disk across processes, so a
 * program's second start compiles nothing (CubeCL's CPU runtime ignored
 * its cache and recompiled on every start: cubecl #1527).
 *
 * An entry is the object code of one kernel for one target:
 *   <dir>/kernels/<IR hash>-<target hash>.bxko   (16 hex digits each)
 * where the IR hash is bxk_hash64 of the serialized kernel and the target
 * is bxl_host_target's "llvm <version> <triple> <cpu> <features>".  The
 * directory is $BEXT_CACHE_DIR ("off": no disk cache), else
 * $XDG_CACHE_HOME/bext, else $HOME/.cache/bext.
 *
 * Entries are written to a temporary file in the same folder and renamed
 * into place, so a reader sees a whole entry or none.  Every entry starts
 * with a header that the reader checks before LLVM sees a byte:
 *   "BXKO" | u32 version (1) | u64 IR hash | u64 target hash
 *   | u64 object length | u64 FNV-1a 64 of the object | u32 target length
 *   | target text | object
 * (little-endian).  A mismatch (a truncated or damaged file, a hash
 * collision of the file name, another format) rejects the entry: the
 * kernel is compiled again and the entry rewritten.  The cache is best
 * effort: failing to read or write it never fails a prepare.  With
 * $BEXT_DEBUG set, each rejection or failed write is reported once, on
 * stderr (the only output of libbext, and only when asked for). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel.h"

#define KCACHE_VERSION 1u
#define KCACHE_HEADER 44u
#define KCACHE_MAX_ENTRY ((size_t)256 << 20)   /* a larger file is not ours */

static atomic_ulong tmp_serial;

static void debug(const char *path, const char *what) {
  const char *e = getenv("BEXT_DEBUG");
  if (e && *e && strcmp(e, "0") != 0) fprintf(stderr, "bext: kernel cache: %s: %s\n", path, what);
}

bool bxr_cache_dir(char *buf, size_t cap) {
  const char *d = getenv("BEXT_CACHE_DIR");
  int n;
  if (d && *d) {
    if (strcmp(d, "off") == 0) return false;
    n = snprintf(buf, cap, "%s", d);
  } else if ((d = getenv("XDG_CACHE_HOME")) && *d) {
    n = snprintf(buf, cap, "%s/bext", d);
  } else if ((d = getenv("HOME")) && *d) {
    n = snprintf(buf, cap, "%s/.cache/bext", d);
  } else {
    return false;
  }
  return n > 0 && (size_t)n < cap;
}

bool bxr_cache_mkdirs(const char *dir) {
  char d[4096];
  int n = snprintf(d, sizeof d, "%s", dir);
  if (n <= 0 || (size_t)n >= sizeof d) return false;
  for (char *p = d + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    mkdir(d, 0755);
    *p = '/';
  }
  return mkdir(d, 0755) == 0 || errno == EEXIST;
}

/* <dir>/kernels into buf; false when the cache is off or no home is known. */
static bool cache_dir(char *buf, size_t cap) {
  char root[3000];
  if (!bxr_cache_dir(root, sizeof root)) return false;
  int n = snprintf(buf, cap, "%s/kernels", root);
  return n > 0 && (size_t)n < cap;
}

bool bxr_kcache_path(uint64_t ir_hash, const char *target, char *buf, size_t cap) {
  char dir[3072];
  if (!cache_dir(dir, sizeof dir)) return false;
  uint64_t th = bxk_hash64((const uint8_t *)target, strlen(target));
  int n = snprintf(buf, cap, "%s/%016" PRIx64 "-%016" PRIx64 ".bxko", dir, ir_hash, th);
  return n > 0 && (size_t)n < cap;
}

static void put(uint8_t *p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint64_t get(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* Why the entry in mem (n bytes) is not a valid one for (ir_hash, target),
 * or NULL when it is; *obj / *len then locate the object. */
static const char *check(const uint8_t *mem, size_t n, uint64_t ir_hash, const char *target,
                         const uint8_t **obj, size_t *len) {
  size_t tlen = strlen(target);
  if (n < KCACHE_HEADER) return "truncated header";
  if (memcmp(mem, "BXKO", 4) != 0) return "not a kernel cache entry (bad magic)";
  if (get(mem + 4, 4) != KCACHE_VERSION) return "another entry format version";
  if (get(mem + 8, 8) != ir_hash) return "made for another kernel";
  if (get(mem + 16, 8) != bxk_hash64((const uint8_t *)target, tlen)) return "made for another target";
  uint64_t olen = get(mem + 24, 8), sum = get(mem + 32, 8), tl = get(mem + 40, 4);
  if (tl != tlen || n - KCACHE_HEADER < tl || memcmp(mem + KCACHE_HEADER, target, tlen) != 0)
    return "made for another target";
  if (olen != n - KCACHE_HEADER - tl) return "truncated or padded (object length differs)";
  if (bxk_hash64(mem + KCACHE_HEADER + tl, olen) != sum) return "checksum mismatch (damaged)";
  *obj = mem + KCACHE_HEADER + tl;
  *len = (size_t)olen;
  return NULL;
}

uint8_t *bxr_cache_read(int fd, size_t max, size_t *len, const char **why) {
  struct stat st;
  uint8_t *buf = NULL;
  *why = NULL;
  if (fstat(fd, &st) != 0 || st.st_size < 0 || (size_t)st.st_size > max) {
    *why = "unreadable or too large";
  } else if (!(buf = bxr_alloc((size_t)st.st_size + 1))) {
    *why = "out of memory reading it";
  } else {
    size_t got = 0, want = (size_t)st.st_size;
    while (got < want) {
      ssize_t r = read(fd, buf + got, want - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      got += (size_t)r;
    }
    buf[got] = 0;
    *len = got;
    if (got != want) *why = "short read";
  }
  close(fd);
  if (*why && buf) bxr_free(buf, (size_t)st.st_size + 1), buf = NULL;
  return buf;
}

int bxr_kcache_load(uint64_t ir_hash, const char *target, struct bxr_kcache_entry *e) {
  char path[4096];
  memset(e, 0, sizeof *e);
  if (!bxr_kcache_path(ir_hash, target, path, sizeof path)) return 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;   /* a miss */
  const char *why;
  size_t got = 0;
  uint8_t *buf = bxr_cache_read(fd, KCACHE_MAX_ENTRY, &got, &why);
  const uint8_t *o = NULL;
  if (buf) why = check(buf, got, ir_hash, target, &o, &e->len);
  if (why) {
    if (buf) bxr_free(buf, got + 1);
    debug(path, why);
    return -1;
  }
  e->obj = o;
  e->mem = buf;
  e->cap = got + 1;
  return 1;
}

void bxr_kcache_release(struct bxr_kcache_entry *e) {
  if (e->mem) bxr_free(e->mem, e->cap);
  memset(e, 0, sizeof *e);
}

/* backend.h's callback form (the Vulkan runtime's bxvk_disk): the entry
 * lives in a heap record the token names. */
int bxr_kcache_load_blob(uint64_t ir_hash, const char *target, const void **data, size_t *len, void **tok) {
  struct bxr_kcache_entry *e = malloc(sizeof *e);
  if (!e) return 0;
  int r = bxr_kcache_load(ir_hash, target, e);
  if (r <= 0) {
    free(e);
    return r;
  }
  *data = e->obj, *len = e->len, *tok = e;
  return 1;
}

void bxr_kcache_release_blob(void *tok) {
  bxr_kcache_release(tok);
  free(tok);
}

void bxr_kcache_store(uint64_t ir_hash, const char *target, const void *obj, size_t len) {
  char path[4096], tmp[4200];
  if (!bxr_kcache_path(ir_hash, target, path, sizeof path)) return;
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (!slash) return;
  *slash = 0;
  if (!bxr_cache_mkdirs(dir)) {
    debug(dir, "cannot create the cache folder; kernels are not kept");
    return;
  }
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%lu", path, (long)getpid(), atomic_fetch_add(&tmp_serial, 1));
  size_t tlen = strlen(target);
  uint8_t head[KCACHE_HEADER];
  memcpy(head, "BXKO", 4);
  put(head + 4, KCACHE_VERSION, 4);
  put(head + 8, ir_hash, 8);
  put(head + 16, bxk_hash64((const uint8_t *)target, tlen), 8);
  put(head + 24, len, 8);
  put(head + 32, bxk_hash64(obj, len), 8);
  put(head + 40, tlen, 4);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    debug(tmp, "cannot create; the kernel is not kept");
    return;
  }
  const void *part[3] = {head, target, obj};
  size_t plen[3] = {KCACHE_HEADER, tlen, len};
  bool ok = true;
  for (int i = 0; i < 3 && ok; i++) {
    const uint8_t *p = part[i];
    size_t left = plen[i];
    while (left && ok) {
      ssize_t w = write(fd, p, left);
      if (w < 0 && errno == EINTR) continue;
      ok = w > 0;
      if (ok) p += w, left -= (size_t)w;
    }
  }
  ok = close(fd) == 0 && ok;
  if (!ok || rename(tmp, path) != 0) {
    unlink(tmp);
    debug(path, "writing the entry failed; the kernel is not kept");
  }
}
