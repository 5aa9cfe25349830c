/* backend.h — the backend interface: one const struct of function pointers
 * per backend, filled with designated initializers (QBE's Target, ggml's
 * ggml_backend_i).  exec has ONE uniform signature for every opcode, so a
 * decorator (Fusion, Autodiff, Remote) can wrap any backend generically by
 * wrapping its exec entries.  A NULL exec entry means "not implemented":
 * dispatch answers with an error naming the op and the backend.
 *
 * This is the backend-author header (ggml's ggml-backend-impl.h), and the
 * ONLY runtime header a backend includes (backends/<name>/ sees
 * runtime/src as an include dir: #include "backend.h"): the vtable, the
 * device object every entry reaches through its arguments (op->device,
 * t->device, s->device), the host helpers and the thread pool here; the
 * op descriptor and inference question (op.h, over the shared op table
 * bext/ops.h), tensor layout helpers (tensor.h), allocation, errors and
 * dtype helpers (internal.h) through it.  Those three are its parts, not
 * separate entry points: a backend never includes them itself. */
#ifndef BXR_BACKEND_H
#define BXR_BACKEND_H

#include "op.h"

#include <pthread.h>
#include <stdatomic.h>

#include "bext/ext.h"

struct bxk_kernel;   /* runtime/kir/bxk.h: a kernel in the kernel IR */
struct bxr_kernel;   /* a device's compiled kernel: opaque outside its backend */
union bxl_scalar;    /* runtime/llvm/bxl.h: one 8-byte scalar argument slot */

/* Bump when a member changes meaning; backends set .api_version to it and
 * the device registry refuses a mismatching backend.  2: device instances,
 * opaque storage, sync, extension ops.  3: kernel_prepare / kernel_launch. */
#define BXR_BACKEND_API_VERSION 3

struct bxr_backend {
  int api_version;           /* BXR_BACKEND_API_VERSION */
  const char *name;          /* device spelling: "ndarray", "flex"; a layer's: "fusion" */
  bext_backend_kind kind;    /* base backends: the BEXT_BACKENDS row they serve */
  /* The target of the row this vtable serves ("cpu", "vulkan": one
   * vtable per cube target, the registry picks by the spec's target);
   * NULL: every target of the row (the backend's open tells them apart). */
  const char *target;
  /* Tensor data is plain host memory at storage->data + offset that the
   * CPU may read and write directly (views, strides; bext_data /
   * bext_data_mut hand it to extension kernels).  False (the default) for
   * device memory, lazy or remote storage: bext_data answers "not host
   * memory". */
  bool host_memory;

  /* Device lifetime, all optional.  open runs on a device's first use
   * (under the device's lock) and may set dev->ctx; close frees the
   * device's caches and ctx (bext_device_close), after which open runs
   * again on the next use.  sync finishes queued work (bext_sync); NULL:
   * an eager backend (nothing queued).  memory fills what only the backend
   * knows (cached_bytes; live/peak are counted by the runtime). */
  bool (*open)(struct bext_device *dev);
  void (*close)(struct bext_device *dev);
  /* Whether the device exists on this machine (bext_device_available):
   * a GPU by its index.  May open the device; false + error saying what
   * is missing.  NULL: whenever the backend is in the build. */
  bool (*probe)(struct bext_device *dev);
  bool (*sync)(struct bext_device *dev);
  void (*memory)(struct bext_device *dev, bext_memory *st);

  /* Storage.  storage_alloc fills s->data (and s->priv) for `bytes` bytes
   * (bytes may be 0), allocating through bxr_storage_hook(s) (the hook the
   * tensor was made under, so it also frees there);
   * false with the error set on failure.  storage_free releases what it
   * allocated (s->bytes holds the size).  Both NULL: opaque storage the
   * backend fills itself (s->priv: a lazy placeholder, an inner tensor, a
   * remote id) through bxr_tensor_new_opaque. */
  bool (*storage_alloc)(struct bxr_storage *s, size_t bytes);
  void (*storage_free)(struct bxr_storage *s);
  /* True when data is plain host memory the runtime may place inline in
   * the tensor's own block for small buffers (a few KiB): storage_alloc /
   * storage_free are then not called for it and s->inline_data is set.
   * False (the default) for backends whose buffers are not host memory. */
  bool inline_small;

  /* Data movement for tensors of this backend.  from_data makes a new
   * tensor on dev holding the row-major host data src (NULL only when the
   * shape is empty); read copies t (any
   * layout) to host memory dst in row-major order; copy fills the fresh
   * contiguous dst (same dtype and shape) from src (any layout, same
   * device).  Return false with the error set on failure.  Required
   * (CPU backends use bxr_host_from_data / bxr_host_read / bxr_host_copy).
   * read is also the sync point of a lazy backend. */
  bext_tensor *(*from_data)(struct bext_device *dev, bext_dtype dt, int rank, const int64_t *shape,
                            const void *src);
  bool (*read)(const bext_tensor *t, void *dst);
  bool (*copy)(bext_tensor *dst, const bext_tensor *src);

  /* One entry per opcode.  Called by dispatch after the inference rule
   * validated op and filled op->out; the inputs are on op->device and of
   * allowed kinds.  Index VALUES are the backend's to check (gather,
   * scatter_add, select, select_assign: bxr_check_indices on host memory;
   * a lazy backend reports them at the read or sync that runs the op).
   * Returns a NEW tensor on op->device with exactly op->out's dtype and
   * shape (any layout: a view is fine), or NULL with the error set.  The
   * descriptor owns the inputs; take one with bxr_op_take to reuse it.
   * NULL entry: not implemented. */
  bext_tensor *(*exec[BXR_OP_COUNT])(struct bxr_op *op);

  /* Extension ops: runs a call whose arm dispatch chose on dev.  NULL for
   * base backends: the runtime calls the method's implementation for
   * dev's backend (bxr_ext_run).  A decorator sets it to record, tape,
   * send or (a transparent layer) forward the call to dev->inner. */
  bool (*ext_exec)(struct bext_device *dev, bext_ext_call *call);

  /* Kernels in the kernel IR reach a device through these two members
   * and no other way (issue 9): Fusion's fused chains, the stdlib kernels
   * of cube:cpu and the launchers of .bext kernels all call them.  NULL:
   * the device cannot run IR kernels (LibTorch, Remote): Fusion then runs
   * the recorded ops unfused.
   *
   * kernel_prepare compiles ir (a verified kernel; the caller keeps
   * ownership) for dev.  key identifies the IR for the device's caches
   * (equal keys mean equal IR: a hash of the serialized form).  The
   * result stays valid until the device closes (the device owns it);
   * NULL + error (the IR's diagnostics, rendered) on failure.
   *
   * kernel_launch runs k over a grid of cube_count[i] * cube_dim[i] units
   * along each axis (every component >= 1).  bindings[i] is the kernel's
   * binding i: a tensor on dev of the binding's element type (mut
   * bindings are written in place; the caller made them).  scalars[i] is
   * scalar parameter i in an 8-byte slot.  Returns when the results are
   * in place on CPU devices; a GPU device may queue and finish at sync.
   * false + error on failure. */
  struct bxr_kernel *(*kernel_prepare)(struct bext_device *dev, const struct bxk_kernel *ir,
                                       uint64_t key);
  bool (*kernel_launch)(struct bext_device *dev, struct bxr_kernel *k, const uint32_t cube_count[3],
                        const uint32_t cube_dim[3], bext_tensor *const *bindings,
                        const union bxl_scalar *scalars);
};

/* A device instance (bext.h: "A device is an object").  Made once per
 * canonical spec by the registry (device.c), never freed: tensors and
 * users hold plain pointers to it. */
struct bext_device {
  const struct bxr_backend *vt;    /* NULL: backend or layer not in this build */
  struct bext_device *inner;       /* a decorator's wrapped device; NULL for a base */
  struct bext_device *route;       /* routing identity: itself, or the same stack
                                    * with autodiff's strategy none (they route together) */
  bext_backend_kind kind;          /* the base backend under every layer */
  int layer;                       /* -1: base; else the outermost layer's row (layer table) */
  bool transparent;                /* a layer routing does not see (test tracers) */
  bool available;                  /* vt of this device and of every inner one */
  bext_autodiff_strategy strategy; /* +autodiff(...) */
  int index;                       /* device index (cube:cuda:1 -> 1) */
  uint32_t loop_max;               /* the most trips one kernel loop may run here
                                    * (0: no limit); set by the backend's open
                                    * (cube:vulkan on llvmpipe: 65279), read by
                                    * the cube host code and by Fusion's planner */
  char target[16];                 /* cube/libtorch target ("cpu", "vulkan", ...) */
  char address[96];                /* remote: the address after "remote:" */
  char name[200];                  /* canonical spelling */
  void *ctx;                       /* the backend's per-device state (open/close) */
  pthread_mutex_t lock;            /* guards open/close/ctx */
  bool opened;
  _Atomic size_t live, peak;       /* storage bytes (storage_alloc'ed buffers) */
  struct bext_device *next;        /* registry list */
};

/* Opens dev (its backend's open, once) if needed; false + error when the
 * device is not available or open failed.  api names the caller. */
BXR_FUNC bool bxr_device_use(struct bext_device *dev, const char *api);
/* The device for dev (NULL: the default), opened, or NULL + an error
 * naming api and the device. */
BXR_FUNC struct bext_device *bxr_device_resolve(const bext_device *dev, const char *api);
/* The base device of a backend kind with its default spelling ("flex",
 * "cube:cpu"), interned once; NULL + error for a kind out of range. */
BXR_FUNC const bext_device *bxr_device_base(bext_backend_kind kind);
/* "none", "balanced": a strategy as "+autodiff(...)" spells it. */
BXR_FUNC const char *bxr_strategy_name(bext_autodiff_strategy s);
/* Storage accounting (tensor.c calls these for storage_alloc'ed buffers). */
BXR_FUNC void bxr_device_count_alloc(struct bext_device *dev, size_t bytes);
BXR_FUNC void bxr_device_count_free(struct bext_device *dev, size_t bytes);

/* Decorator layers beyond the built-in rows of BEXT_LAYERS, for tests and
 * tools: a tracer registers itself as a layer named `name` (spelled
 * "flex+name"), stacking outside every built-in layer (depth > all of
 * theirs) and, when transparent, invisible to routing (the arm is chosen
 * as if the layer were absent; its ext_exec forwards).  False + error when
 * the name is taken or the table is full. */
struct bxr_layer {
  const char *name;
  const char *selector;              /* "Fusion", for messages; NULL for extra layers */
  int depth;                         /* registering: 0 = outside every layer so far;
                                      * else where it sits (1: +fusion's place,
                                      * inside +autodiff) */
  bool transparent;
  const struct bxr_backend *vt;      /* NULL: not in this build */
};
BXR_FUNC bool bxr_layer_register(const struct bxr_layer *layer);

/* A tensor of t's shape and dtype on the meta device (meta.c): no data;
 * ops on it compute output specs through their inference rules only. */
BXR_FUNC bext_tensor *bxr_meta_like(const bext_tensor *t);

/* Runs an extension call on dev with the arm dispatch would choose there
 * (decorators call it for their inner device), without re-routing. */
BXR_FUNC bool bxr_ext_exec(struct bext_device *dev, bext_ext_call *call);
/* How a decorator reaches the tensor under its own wrapper, and back.
 * unwrap(w): the inner tensor of wrapper w as a new reference (a uniquely
 * held wrapper may hand its own over, so the inner backend can reuse the
 * buffer in place), or NULL + error; wrap(dev, inner): a wrapper on dev
 * taking inner over, or NULL + error (inner released). */
typedef bext_tensor *(*bxr_unwrap_fn)(bext_tensor *w);
typedef bext_tensor *(*bxr_wrap_fn)(struct bext_device *dev, bext_tensor *inner);
/* The same call one layer down, what a decorator's ext_exec does with a
 * call it does not handle itself: a copy of the argument struct with every
 * input tensor unwrapped, the inner device's arm (bxr_ext_exec), what
 * that arm left released, and every output tensor wrapped onto dev into
 * call->out.  call keeps its own wrappers (dispatch releases them).  An
 * input that cannot be unwrapped fails the call naming it
 * ("T::m: argument `x`: <why>").  False + error, call->out untouched. */
BXR_FUNC bool bxr_ext_forward(struct bext_device *dev, bext_ext_call *call, bxr_unwrap_fn unwrap, bxr_wrap_fn wrap);
/* Whether dev can run m itself: the arm bxr_ext_exec would take there is
 * listed (a layer) or implemented (a backend: its own or the default
 * body).  Decorators ask it of their inner device before forwarding. */
BXR_FUNC bool bxr_ext_has_arm(const bext_ext_method *m, const struct bext_device *dev);
/* Whether the arm dispatch picks for m on dev is listed (the check before
 * dispatch raises "no implementation for backend ..."); false with the
 * reason in why.  A server asks it before it dispatches a client's call,
 * so an op the hosted device lacks is an error, not a panic. */
BXR_FUNC bool bxr_ext_arm_listed(const bext_ext_method *m, const struct bext_device *dev, char *why, size_t n);
/* The one tensor output's spec from a method's metadata (m->meta set,
 * out_tensor, meta_size == sizeof(bext_meta_spec)), checked (rank, dtype,
 * extents); false + error "T::m: its metadata ...".  Fusion records a call
 * and Remote streams one with it. */
BXR_FUNC bool bxr_ext_meta_spec(const bext_ext_method *m, const void *args, bext_spec *out);
/* One tensor's metadata (a slot out_from_meta makes) as a spec, with the same
 * checks and messages. */
struct bext_meta_spec;
BXR_FUNC bool bxr_ext_spec_of(const bext_ext_method *m, const struct bext_meta_spec *ms, bext_spec *out);

/* Host-memory implementations of the storage/data members for CPU backends. */
BXR_FUNC bool bxr_host_storage_alloc(struct bxr_storage *s, size_t bytes);
/* The same with large blocks (>= 64 KiB) kept in one cache shared by the
 * devices that use it (host_cache.c: a fresh 64 MiB output otherwise
 * costs ~16K page faults): Flex and cube:cpu.  Blocks go back to the hook
 * that made them; bext_set_allocator trims the cache. */
BXR_FUNC bool bxr_cached_storage_alloc(struct bxr_storage *s, size_t bytes);
BXR_FUNC void bxr_cached_storage_free(struct bxr_storage *s);
/* Returns every idle block to its hook (a device's close, a hook switch). */
BXR_FUNC void bxr_host_cache_trim(void);
/* Allocations the cache served, and the bytes it holds idle. */
BXR_FUNC unsigned long bxr_host_cache_hits(void);
BXR_FUNC size_t bxr_host_cache_bytes(void);
BXR_FUNC void bxr_host_storage_free(struct bxr_storage *s);
BXR_FUNC bext_tensor *bxr_host_from_data(struct bext_device *dev, bext_dtype dt, int rank,
                                         const int64_t *shape, const void *src);
BXR_FUNC bool bxr_host_read(const bext_tensor *t, void *dst);
BXR_FUNC bool bxr_host_copy(bext_tensor *dst, const bext_tensor *src);
/* The same storage members with a cache for large buffers
 * (host_cache.c): freed blocks of 64 KiB and more are kept (up to 1 GiB,
 * by size class, per allocation hook) and handed out again, so an op's
 * fresh large output costs no page faults; blocks of 4 MiB and more are
 * 2 MiB aligned and marked MADV_HUGEPAGE.  Flex and cube:cpu share it. */
BXR_FUNC bool bxr_cached_storage_alloc(struct bxr_storage *s, size_t bytes);
BXR_FUNC void bxr_cached_storage_free(struct bxr_storage *s);
/* Returns every idle cached block to its hook (device close, hook switch). */
BXR_FUNC void bxr_host_cache_trim(void);
/* Blocks served from the cache so far (tests). */
BXR_FUNC unsigned long bxr_host_cache_hits(void);
/* Bytes of idle blocks in the cache (bext_memory_stats' cached_bytes). */
BXR_FUNC size_t bxr_host_cache_bytes(void);
/* Checks the index tensor in[1] of a gather / scatter_add / select /
 * select_assign op in host memory against the extent of in[0] along
 * op->at.dim: false + an error naming the op, the index and the extent. */
BXR_FUNC bool bxr_check_indices(struct bxr_op *op);

/* The zero-copy layout ops (layout_view.c): true when op (reshape,
 * swap_dims, permute, expand, slice, narrow) is a view of op->in[0], with
 * *out the view (NULL + error when it cannot be allocated); false for a
 * reshape the strides cannot express and for any other op (copy it). */
BXR_FUNC bool bxr_layout_view(struct bxr_op *op, bext_tensor **out);

/* ------------------------------------------------------------ thread pool */
/* The runtime's one thread pool (pool.c), for any backend that splits
 * large work (Flex; cube:cpu later).  A range [0, n) is cut into one chunk
 * per thread; the calling thread and the persistent workers (created
 * lazily, sized to the online cores or BEXT_NUM_THREADS) claim chunks
 * until none is left, so the caller also runs any chunk no worker has
 * started yet.  A worker watches for the next job for 50 us after each,
 * then sleeps on a condition variable (no spin-forever: the cores are
 * shared with the program's own threads).  OpenBLAS runs single-threaded
 * inside pool chunks (a backend splits a large gemm into panels): its
 * own idle threads would
 * spin against the pool's.  Small ranges, nested calls from inside
 * a chunk and calls made while another thread owns the pool all run
 * inline on the caller, so the small path takes no lock at all. */

/* Ranges below this many elements (scaled by the caller's cost estimate)
 * stay on the calling thread: waking a worker costs several microseconds. */
#define BXR_POOL_MIN ((size_t)65536)

/* A chunk of work: run indices [begin, end) of the job described by ctx. */
typedef void (*bxr_pool_task)(void *ctx, size_t begin, size_t end);

/* Runs fn over [0, n).  `cost` is the caller's per-element work estimate
 * in units of one f32 add (1 for memory-bound ops, ~8 for transcendentals):
 * n * cost below BXR_POOL_MIN runs inline.  Chunk borders are multiples
 * of `align` (>= 1) so vector loops keep whole lanes.  Deterministic: the
 * split depends only on n, align and the thread count. */
BXR_FUNC void bxr_pool_for(size_t n, size_t cost, size_t align, bxr_pool_task fn, void *ctx);
/* The number of threads large work is split across (workers + caller). */
BXR_FUNC int bxr_pool_threads(void);
/* Limits the split to n threads (1 = everything inline; <= 0 or more
 * than the pool holds = all of them).  Returns the
 * previous limit.  Tests compare threaded and serial results with it; the
 * benchmarks pin a thread count. */
BXR_FUNC int bxr_pool_set_threads(int n);
/* Jobs actually split across threads since start (tests prove the
 * threaded path ran). */
BXR_FUNC unsigned long bxr_pool_jobs_split(void);
/* A call into a library that threads its own gemm through the process's
 * one OpenBLAS (ATen's matmul, for libtorch:cpu) gets the pool's thread
 * count for its duration: the pool's workers sleep while the caller
 * waits on it, and with the pool's single-threaded setting ATen's
 * 1024^2 matmul took twice its own time (bext-bench
 * libtorch_matmul_1024, 0.50-0.53x).  begin returns the count to give
 * back to end.  Process-wide: a Flex gemm on another thread meanwhile
 * runs its panels with OpenBLAS threads of its own (correct, slower). */
BXR_FUNC int bxr_blas_threads_begin(void);
BXR_FUNC void bxr_blas_threads_end(int old);

/* ------------------------------------------------------------ CPU kernels */
/* kernel_prepare / kernel_launch for any host-memory CPU device
 * (kernel_cpu.c; Flex and cube:cpu point their members here).  Kernels are
 * compiled by libbext_llvm.so, loaded on the first prepare, and shared by
 * every CPU device of the process (they depend on the IR and this machine
 * only); they stay valid for the life of the process.  Prepare is
 * thread-safe (one compile per key however many threads ask); launch
 * takes no lock and allocates nothing, accepts contiguous and strided
 * host tensors whose extents, strides and farthest element fit u32, and
 * runs the grid on the thread pool (docs/kernels.md "The CPU runtime"). */
BXR_FUNC struct bxr_kernel *bxr_kernel_cpu_prepare(struct bext_device *dev,
                                                   const struct bxk_kernel *ir, uint64_t key);
BXR_FUNC bool bxr_kernel_cpu_launch(struct bext_device *dev, struct bxr_kernel *k,
                                    const uint32_t cube_count[3], const uint32_t cube_dim[3],
                                    bext_tensor *const *bindings, const union bxl_scalar *scalars);
/* The cache root (kernel_cache.c): $BEXT_CACHE_DIR ("off": none), else
 * $XDG_CACHE_HOME/bext, else $HOME/.cache/bext, into buf; false when off
 * or no home is known.  Compiled kernels live in <root>/kernels, the
 * autotune decisions in <root>/autotune.txt (cube_tune.c). */
BXR_FUNC bool bxr_cache_dir(char *buf, size_t cap);
/* The whole of the open file fd (closed here), at most max bytes, in a
 * NUL-terminated bxr_alloc'd buffer (bxr_free(buf, *len + 1)); NULL with
 * *why ("unreadable or too large", "out of memory reading it", "short
 * read").  The kernel cache's entries and the autotune file. */
BXR_FUNC uint8_t *bxr_cache_read(int fd, size_t max, size_t *len, const char **why);
/* mkdir -p dir; true when it exists afterwards. */
BXR_FUNC bool bxr_cache_mkdirs(const char *dir);
/* The tensor dtype of a binding's IR element type (BXK_F32 -> BEXT_F32);
 * BEXT_DTYPE_COUNT for u32, which no tensor holds (kernel_cpu.c; every
 * device's kernel_prepare checks bindings with it). */
BXR_FUNC bext_dtype bxr_kernel_dtype(unsigned kir_type);
/* The on-disk kernel cache (kernel_cache.c) as a GPU runtime's callbacks
 * take it (bxvk_disk): load gives 1 and the entry's bytes in *data, *len
 * (valid until release(*tok)), 0 for none, -1 for a damaged entry; store
 * writes one (best effort).  Entries are keyed by IR hash and target
 * text, so GPU pipelines and CPU objects share one folder and format. */
BXR_FUNC int bxr_kcache_load_blob(uint64_t ir_hash, const char *target, const void **data, size_t *len,
                                  void **tok);
BXR_FUNC void bxr_kcache_release_blob(void *tok);
BXR_FUNC void bxr_kcache_store(uint64_t ir_hash, const char *target, const void *obj, size_t len);
/* A bext_kernel_src (bext.h) on dev: its IR loaded once per process
 * (cached by src's address), then dev->vt->kernel_prepare under the IR's
 * hash; CPU devices adopt src->cpu when given.  NULL + error for a device
 * without kernels or IR that does not load (kernel_api.c). */
BXR_FUNC struct bxr_kernel *bxr_kernel_src_prepare(struct bext_device *dev, const bext_kernel_src *src);
/* src's verified IR (process lifetime), or NULL + error. */
BXR_FUNC const struct bxk_kernel *bxr_kernel_src_ir(const bext_kernel_src *src);
/* A watch on the calling thread's public launches (bext_kernel_launch):
 * Fusion sets one around an extension implementation it runs on the
 * inner device, to learn whether that implementation is one launch of an
 * elementwise `#[cube]` kernel (fusion_cube.c).  Launches are counted;
 * the first one's kernel, grid, bindings and scalar values are kept, the
 * bindings retained (released by the watcher), so no later op can reuse
 * their buffers in place; the scalars tell which of the call's scalar
 * arguments each kernel parameter was given. */
#define BXR_WATCH_BINDINGS 8
#define BXR_WATCH_SCALARS 8
struct bxr_launch_watch {
  int n;                      /* launches seen */
  const bext_kernel_src *src; /* the first one's */
  bext_grid grid;
  int nbind, nscalar;         /* nbind > BXR_WATCH_BINDINGS: no bindings kept;
                               * nscalar > BXR_WATCH_SCALARS: no scalars kept */
  bext_tensor *bind[BXR_WATCH_BINDINGS];
  bext_kernel_scalar scalar[BXR_WATCH_SCALARS];
};
extern _Thread_local struct bxr_launch_watch *bxr_launch_watch __attribute__((visibility("hidden")));
/* Counters since the process started (tests and benchmarks). */
struct bxr_kernel_stats {
  unsigned long compiles;     /* kernels compiled by LLVM */
  unsigned long adopted;      /* kernels taken from ahead-of-time code */
  unsigned long memory_hits;  /* prepares answered by the in-memory cache */
  unsigned long disk_hits;    /* kernels loaded from the on-disk cache */
  unsigned long disk_rejects; /* on-disk entries that failed their checks (rebuilt) */
};
BXR_FUNC void bxr_kernel_cpu_stats(struct bxr_kernel_stats *st);
/* The autotuner's counters (cube_tune.c counts, bext_kernel_stats
 * reports): candidate launch parameters timed, decisions read from the
 * cache file, cache files rejected (corrupt or another version). */
extern _Atomic unsigned long bxr_tune_timed, bxr_tune_loaded, bxr_tune_rejects
    __attribute__((visibility("hidden")));

/* The backends of this build: each backends/<name>/ folder defines
 *     const struct bxr_backend bxr_backend_<name> = { ... };
 * and the device registry refers to all of them (bxr_backends.inc,
 * written by runtime/CMakeLists.txt from the folder list). */
#define BXR_BACKEND_ROW(s) BXR_DATA const struct bxr_backend bxr_backend_##s;
#include "bxr_backends.inc"
#undef BXR_BACKEND_ROW

#endif /* BXR_BACKEND_H */
