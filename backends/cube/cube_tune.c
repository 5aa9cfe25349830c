/* cube_tune.c — autotune of the cube devices' launch parameters (issue 11
 * item 6), with a cache of decisions shared by every process.
 *
 * What is tuned is cube_dim, the units per cube, of kernel families whose
 * cube_dim only groups units (cube.h's cube_tune_family): each unit
 * computes its output elements alone, in a fixed order, so any candidate
 * gives the same bits (tests/runtime/test_cube_tune.c forces each).  No
 * family tunes a parameter that splits a float sum.  On cube:cpu a cube
 * is one call of the kernel's function over its units (or, with shared
 * memory, the thread pool's unit of work), so cube_dim trades call
 * overhead against parallel slack; on a GPU it is the workgroup size.
 *
 * A decision is keyed like CubeCL's tune cache (per device, by problem
 * size buckets): "<device name>|<identity>|t<threads>|<family>|<inst>|
 * <floor log2 size0>|<floor log2 size1>".  The identity is the GPU's name
 * (cube_set_identity) or the host CPU's model; the thread count is in the
 * key because it changes what is fastest on the CPU.  The first call with
 * a key times each candidate (one warm-up run, then the best of
 * TUNE_REPS, syncing the device around each) on the caller's real
 * inputs and fresh output, keeps the fastest (the default unless another
 * is at least 5% faster), and appends it to
 * <cache root>/autotune.txt (the kernel cache's root, backend.h
 * bxr_cache_dir):
 *     bext-autotune 1
 *     <key> TAB <cube_dim> TAB <16 hex digits: bxk_hash64 of "key TAB dim">
 * Each entry is one write() to a file opened O_APPEND, so concurrent
 * processes interleave whole lines; the file is created with its header
 * by link() of a finished temporary file, so nobody sees it headerless.
 * The file is read once per process (and per cache folder).  A file with
 * another header or a line that fails its check is ignored with one
 * warning on stderr and replaced (atomically, rename) by an empty one;
 * an unterminated last line is another process's append in flight, and
 * skipped.  BEXT_AUTOTUNE=0: defaults, nothing timed, nothing read or
 * written.  Problems under TUNE_MIN_WORK elements take the default:
 * their timings are noise and the choice hardly matters. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bxk.h"
#include "cube.h"

#define TUNE_HEADER "bext-autotune 1\n"
#define TUNE_REPS 3
#define TUNE_MARGIN 0.95
#define TUNE_MIN_WORK ((uint64_t)1 << 15)
#define TUNE_FILE_MAX ((size_t)4 << 20)   /* a larger file is not ours */
#define TUNE_KEY 512

/* Elementwise kernels compute out[i] from the operands' element i alone:
 * cube_dim (64 .. 4096; a GPU refuses what exceeds its workgroup limit,
 * and a refused candidate is dropped) only groups units. */
const struct cube_tune_family cube_tune_elementwise = {
    .name = "elementwise", .def = 256, .ncand = 6, .cand = {64, 128, 256, 512, 1024, 4096}};
/* reduce.bext (other than sum_float) and scan.bext: one unit walks one
 * whole line in a fixed order; cube_dim only groups lines. */
const struct cube_tune_family cube_tune_reduce = {
    .name = "reduce", .def = 64, .ncand = 5, .cand = {16, 32, 64, 128, 256}};
/* sum_float: one unit per (line, part), its pairwise tree fixed by the
 * extent (the parts by the shape: cube_reduce.c); cube_dim groups units
 * and must stay <= 64, the units its shared stack holds. */
const struct cube_tune_family cube_tune_sum = {
    .name = "sum", .def = 64, .ncand = 4, .cand = {8, 16, 32, 64}};

struct entry {
  uint64_t hash;
  uint32_t dim;
  char *key;
};

static struct {
  pthread_mutex_t lock;
  struct entry *e;
  size_t n, cap;
  char loaded[4096];     /* the file read (per cache folder) */
  char cpu[128];         /* the host CPU's model, once */
  bool warned;
} T = {.lock = PTHREAD_MUTEX_INITIALIZER};

static _Atomic uint32_t forced;

void cube_tune_force(uint32_t dim) { forced = dim; }

static bool tune_off(void) {
  const char *e = getenv("BEXT_AUTOTUNE");
  return e && strcmp(e, "0") == 0;
}

static bool has(const struct cube_tune_family *f, uint32_t dim) {
  for (int i = 0; i < f->ncand; i++)
    if (f->cand[i] == dim) return true;
  return false;
}

static int log2_floor(uint64_t v) { return v ? 63 - __builtin_clzll(v) : -1; }

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The host CPU's model name ("unknown cpu" when /proc says nothing);
 * under T.lock. */
static const char *cpu_model(void) {
  if (T.cpu[0]) return T.cpu;
  snprintf(T.cpu, sizeof T.cpu, "unknown cpu");
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[256];
  while (f && fgets(line, sizeof line, f)) {
    char *colon = strchr(line, ':');
    if (strncmp(line, "model name", 10) != 0 || !colon) continue;
    colon += 1 + (colon[1] == ' ');
    colon[strcspn(colon, "\n")] = 0;
    snprintf(T.cpu, sizeof T.cpu, "%s", colon);
    break;
  }
  if (f) fclose(f);
  return T.cpu;
}

/* The file's path; false when the cache is off. */
static bool tune_path(char *buf, size_t cap) {
  char root[3000];
  if (!bxr_cache_dir(root, sizeof root)) return false;
  int n = snprintf(buf, cap, "%s/autotune.txt", root);
  return n > 0 && (size_t)n < cap;
}

static uint64_t line_hash(const char *key, uint32_t dim) {
  char buf[TUNE_KEY + 16];
  int n = snprintf(buf, sizeof buf, "%s\t%" PRIu32, key, dim);
  return bxk_hash64((const uint8_t *)buf, (size_t)n);
}

/* Under T.lock. */
static struct entry *find(const char *key, uint64_t h) {
  for (size_t i = 0; i < T.n; i++)
    if (T.e[i].hash == h && strcmp(T.e[i].key, key) == 0) return &T.e[i];
  return NULL;
}

/* Under T.lock; false when out of memory (the decision is then not kept). */
static bool remember(const char *key, uint64_t h, uint32_t dim) {
  struct entry *old = find(key, h);
  if (old) {
    old->dim = dim;
    return true;
  }
  if (T.n == T.cap) {
    size_t cap = T.cap ? 2 * T.cap : 32;
    struct entry *e = realloc(T.e, cap * sizeof *e);
    if (!e) return false;
    T.e = e, T.cap = cap;
  }
  char *k = strdup(key);
  if (!k) return false;
  T.e[T.n++] = (struct entry){h, dim, k};
  return true;
}

/* A finished file holding only the header, renamed (replace) or linked
 * (create only: another process's file wins) into path. */
static void write_empty(const char *path, bool replace) {
  char tmp[4200];
  static _Atomic unsigned long serial;
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%lu", path, (long)getpid(), serial++);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return;
  bool ok = write(fd, TUNE_HEADER, strlen(TUNE_HEADER)) == (ssize_t)strlen(TUNE_HEADER);
  ok = close(fd) == 0 && ok;
  if (ok && replace) ok = rename(tmp, path) == 0;
  else if (ok) link(tmp, path);   /* EEXIST: someone made it first, fine */
  if (!ok || !replace) unlink(tmp);
}

/* Why mem (a whole file of n bytes, NUL-terminated) is not a cache file
 * of this version, or NULL; with keep, every entry is remembered (the
 * caller checks the whole file first: a rejected file gives nothing).
 * Under T.lock. */
static const char *parse(const char *mem, size_t n, bool keep) {
  size_t hl = strlen(TUNE_HEADER);
  if (n < hl || memcmp(mem, TUNE_HEADER, hl) != 0)
    return strncmp(mem, "bext-autotune ", 14) == 0 ? "another format version" : "not an autotune file (bad header)";
  for (const char *p = mem + hl, *end = mem + n; p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) break;   /* another process's append in flight */
    const char *t1 = memchr(p, '\t', (size_t)(nl - p));
    const char *t2 = t1 ? memchr(t1 + 1, '\t', (size_t)(nl - t1 - 1)) : NULL;
    if (!t1 || !t2 || t1 - p >= TUNE_KEY || nl - t2 - 1 != 16) return "a malformed line";
    char key[TUNE_KEY], num[32], hex[17];
    memcpy(key, p, (size_t)(t1 - p)), key[t1 - p] = 0;
    if (t2 - t1 - 1 < 1 || t2 - t1 - 1 > 10) return "a malformed line";
    memcpy(num, t1 + 1, (size_t)(t2 - t1 - 1)), num[t2 - t1 - 1] = 0;
    memcpy(hex, t2 + 1, 16), hex[16] = 0;
    char *e1, *e2;
    errno = 0;
    unsigned long long dim = strtoull(num, &e1, 10);
    uint64_t sum = strtoull(hex, &e2, 16);
    if (errno || *e1 || *e2 || !dim || dim > UINT32_MAX || line_hash(key, (uint32_t)dim) != sum)
      return "a line failed its check";
    if (keep && remember(key, bxk_hash64((const uint8_t *)key, strlen(key)), (uint32_t)dim)) bxr_tune_loaded++;
    p = nl + 1;
  }
  return NULL;
}

/* Reads path's entries into the table, once per path; under T.lock. */
static void load(const char *path) {
  if (strcmp(T.loaded, path) == 0) return;
  snprintf(T.loaded, sizeof T.loaded, "%s", path);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;   /* none yet */
  const char *why;
  size_t got = 0;
  char *buf = (char *)bxr_cache_read(fd, TUNE_FILE_MAX, &got, &why);
  if (buf) {
    if (!(why = parse(buf, got, false))) parse(buf, got, true);
    bxr_free(buf, got + 1);
  }
  if (!why) return;
  bxr_tune_rejects++;
  if (!T.warned) {
    /* the one line libbext prints unasked: a damaged cache file would
     * otherwise cost a silent re-tune in every process */
    fprintf(stderr, "bext: warning: autotune cache %s: %s; ignored and rewritten\n", path, why);
    T.warned = true;
  }
  write_empty(path, true);
}

/* Appends key's decision as one write(); best effort. */
static void append(const char *path, const char *key, uint32_t dim) {
  char line[TUNE_KEY + 64];
  int n = snprintf(line, sizeof line, "%s\t%" PRIu32 "\t%016" PRIx64 "\n", key, dim, line_hash(key, dim));
  if (n <= 0 || (size_t)n >= sizeof line) return;
  int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    if (!slash || !bxr_cache_mkdirs(dir)) return;
    write_empty(path, false);
    fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
  }
  if (fd < 0) return;
  ssize_t w;
  do w = write(fd, line, (size_t)n);
  while (w < 0 && errno == EINTR);
  close(fd);
}

/* The fastest candidate by the best of TUNE_REPS runs, where it beats
 * the default's time by TUNE_MARGIN (a decision made in noise is kept
 * for good, so the default needs a clear loser); 0 when none ran. */
static uint32_t time_candidates(struct bext_device *dev, const struct cube_tune_family *f, cube_tune_run run,
                                void *ctx) {
  uint32_t best = 0;
  double best_t = 0, def_t = 0;
  for (int i = 0; i < f->ncand; i++) {
    uint32_t dim = f->cand[i];
    /* the warm-up also makes the candidate's pipeline on a GPU */
    if (!run(ctx, dim) || (dev->vt->sync && !dev->vt->sync(dev))) continue;   /* refused: dropped */
    double t = 0;
    bool ok = true;
    for (int r = 0; r < TUNE_REPS && ok; r++) {
      double t0 = now_s();
      ok = run(ctx, dim) && (!dev->vt->sync || dev->vt->sync(dev));
      double dt = now_s() - t0;
      if (r == 0 || dt < t) t = dt;
    }
    bxr_tune_timed++;
    if (!ok) continue;
    if (dim == f->def) def_t = t;
    if (!best || t < best_t) best = dim, best_t = t;
  }
  if (best && def_t > 0 && best_t > TUNE_MARGIN * def_t) return f->def;
  return best;
}

uint32_t cube_tune_dim(struct bext_device *dev, const struct cube_tune_family *f, const char *inst,
                       uint64_t size0, uint64_t size1, cube_tune_run run, void *ctx) {
  uint32_t fd = forced;
  if (fd) return has(f, fd) ? fd : f->def;
  if (tune_off() || size0 * (size1 ? size1 : 1) < TUNE_MIN_WORK) return f->def;
  char key[TUNE_KEY], path[4096];
  bool disk = tune_path(path, sizeof path);
  pthread_mutex_lock(&T.lock);
  const char *who = cube_identity(dev);
  int n = snprintf(key, sizeof key, "%s|%s|t%d|%s|%s|%d|%d", dev->name, who[0] ? who : cpu_model(),
                   bxr_pool_threads(), f->name, inst, log2_floor(size0), log2_floor(size1));
  if (n <= 0 || (size_t)n >= sizeof key) {
    pthread_mutex_unlock(&T.lock);
    return f->def;
  }
  for (char *p = key; *p; p++)   /* the file's separators */
    if (*p == '\t' || *p == '\n' || *p == '\r') *p = ' ';
  uint64_t h = bxk_hash64((const uint8_t *)key, strlen(key));
  if (disk) load(path);
  const struct entry *e = find(key, h);
  uint32_t dim = e && has(f, e->dim) ? e->dim : 0;
  pthread_mutex_unlock(&T.lock);
  if (dim) return dim;
  /* timed outside the lock: two threads may tune one key at once, and
   * the first to finish decides for both */
  dim = time_candidates(dev, f, run, ctx);
  bext_clear_error();   /* a refused candidate's error is not the op's */
  if (!dim) return f->def;
  pthread_mutex_lock(&T.lock);
  e = find(key, h);
  bool mine = !e || !has(f, e->dim);   /* an entry of an older candidate list is replaced */
  if (mine) remember(key, h, dim);
  else dim = e->dim;
  pthread_mutex_unlock(&T.lock);
  if (mine && disk) append(path, key, dim);
  return dim;
}
