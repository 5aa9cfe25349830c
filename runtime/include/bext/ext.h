/* ext.h — extension ops as descriptors: how a generated entry point hands
 * one call of an extension method to the runtime, so that routing,
 * decorators (Fusion records it, Autodiff tapes it, Remote sends it by id)
 * and backends see extension ops exactly like core ops.
 *
 * bextc generates, per method, one static bext_ext_method (what the method
 * is: its id, its implementations per backend, how to find the tensors in
 * its arguments and output, how to call an implementation) and an entry
 * point that packs its C arguments into a generated argument struct and
 * calls bext_ext_dispatch.  People who write backends or decorators read
 * these structs; people who write extensions never touch them.
 * docs/runtime.md ("Extension ops") has the whole picture. */
#ifndef BEXT_EXT_H
#define BEXT_EXT_H

#include "bext/bext.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An implementation, stored type-erased; the method's invoke casts it
 * back to the entry point's signature. */
typedef void (*bext_ext_fn)(void);

/* Where one tensor sits inside a call's argument struct or output value,
 * and what the method declares about it. */
typedef struct bext_ext_slot {
  bext_tensor **at;       /* the slot (writable: decorators swap tensors) */
  const char *name;       /* "x", "w.inner.right", "c(Floats).t" */
  bool is_float;          /* declared FloatTensor: routing prefers it */
  bool borrowed;          /* declared `&`: the implementation only borrows it */
  signed char kind;       /* the declared kind: BEXT_KIND_FLOAT / _INT / _BOOL
                           * (FloatTensor, IntTensor, BoolTensor); -1: any
                           * (QuantizedTensor).  Dispatch rejects a tensor of
                           * another kind before any implementation sees it. */
} bext_ext_slot;

/* The most tensors one argument list or output value may hold (bextc
 * rejects methods with more). */
#define BEXT_EXT_MAX_SLOTS 64

/* One scalar a call exposes to fusion optimizers (language.md §4), in the
 * method's declaration order: its value, widened to 64 bits, and how the
 * method declares it. */
typedef enum bext_ext_scalar_kind {
  BEXT_SCALAR_INT,        /* i8 .. i64, isize: i */
  BEXT_SCALAR_UINT,       /* u8 .. u64, usize: u */
  BEXT_SCALAR_FLOAT,      /* f32, f64: f */
  BEXT_SCALAR_BOOL        /* bool: b */
} bext_ext_scalar_kind;
typedef enum bext_ext_scalar_origin {
  BEXT_SCALAR_INFERRED,   /* an argument of an integer type, f32, f64 or bool */
  BEXT_SCALAR_MARKED,     /* #[fusion(scalar)] (argument, alias or type) */
  BEXT_SCALAR_CUSTOM      /* #[fusion(scalar = expr)] */
} bext_ext_scalar_origin;
typedef struct bext_ext_scalar {
  const char *name;       /* the argument */
  const char *type;       /* the scalar's type: "u32", "f32", "bool" */
  bext_ext_scalar_kind kind;
  bext_ext_scalar_origin origin;
  union {
    int64_t i;
    uint64_t u;
    double f;
    bool b;
  };
} bext_ext_scalar;

/* The evaluation state of a metadata call (bext/gen.h). */
struct bext_meta_error;
/* A tensor's spec as metadata sees it (bext/gen.h), and a maker of the
 * tensor that stands for one slot of an output value (out_from_meta). */
struct bext_meta_spec;
typedef bext_tensor *(*bext_ext_make_fn)(void *ctx, int slot, const struct bext_meta_spec *spec);

typedef struct bext_ext_method {
  const char *trait;      /* "MyExtension" */
  const char *method;     /* "transpose_2d" */
  const char *id;         /* the op id: the method name, or #[fusion(id = "...")] */
  const char *what;       /* "MyExtension::transpose_2d", for messages */
  const char *listed;     /* the selector list as written, for messages */

  /* Base backends.  have: bit k set when the trait lists backend k and its
   * arm is compiled in (backend present, cfg condition on).  impl[k]: the
   * user's implementation, NULL for a defaulted method whose user did not
   * write one (a weak reference): fallback (the generated default body)
   * serves it then.  why[k]: for a backend whose bit is clear, why
   * ("is not listed" when NULL). */
  unsigned have;
  bext_ext_fn impl[BEXT_BACKEND_COUNT];
  bext_ext_fn fallback;
  const char *why[BEXT_BACKEND_COUNT];
  /* Decorator layers the trait lists (bit per bext_layer_kind).  Fusion's
   * and Remote's arms are the runtime's (the layer records / sends the
   * call); Autodiff's is layer_impl[BEXT_LAYER_AUTODIFF] (the user's
   * `_autodiff` implementation). */
  unsigned layers;
  bext_ext_fn layer_impl[BEXT_LAYER_COUNT];
  /* A method without tensor inputs runs on this backend's device. */
  int only_backend;

  /* The call's memory.  args_size: the generated argument struct;
   * out_size: the output value (sizeof(bext_tensor *) for out_tensor). */
  size_t args_size;
  size_t out_size;
  bool out_tensor;
  /* Tensor slots of an argument struct / an output value, in declaration
   * order, looking inside extension values (for an enum: the variant
   * active now); returns how many (<= BEXT_EXT_MAX_SLOTS). */
  int (*in_slots)(void *args, bext_ext_slot *slots);
  int (*out_slots)(void *out, bext_ext_slot *slots);
  /* Calls impl with the arguments in args, writing the output value to
   * out; true on success.  Owned tensor arguments are consumed: invoke
   * clears their slots (and the value holding them) in args. */
  bool (*invoke)(bext_ext_fn impl, void *args, void *out);
  /* Ordinary arguments (everything that is not a tensor slot: plain
   * values, and the ordinary fields and enum tags inside extension values),
   * for plans and the wire; docs/codegen.md "Descriptors" has the format.
   * args_encode writes the encoding into buf (at most cap bytes) and
   * returns its length, also when that exceeds cap (then buf holds a
   * prefix: call again with a larger one).  args_hash is the FNV-1a hash
   * of that encoding: equal ordinary arguments hash equal in every
   * process, tensors do not count.  args_decode reads one encoding from
   * the front of buf into args (a zeroed argument struct; its tensor slots
   * stay NULL) and returns its length; 0 when buf is truncated or
   * malformed (args is zeroed again then).  Never NULL in generated
   * descriptors. */
  uint64_t (*args_hash)(const void *args);
  size_t (*args_encode)(const void *args, unsigned char *buf, size_t cap);
  size_t (*args_decode)(void *args, const unsigned char *buf, size_t n);
  /* The ordinary parts of an output value, for a method returning a
   * struct, tuple, enum or plain value (NULL for one returning a tensor or
   * nothing): every field that is not a tensor slot, enum tags included,
   * in args_encode's format and with its contract.  out_decode fills a
   * zeroed output value whose tensor slots stay NULL; out_slots on it then
   * finds the slots of the decoded variant.  Remote carries a result back
   * with it (docs/remote.md "Extension ops"). */
  size_t (*out_encode)(const void *out, unsigned char *buf, size_t cap);
  size_t (*out_decode)(void *out, const unsigned char *buf, size_t n);

  /* Scalars (language.md §4), in declaration order: nscalars of them.
   * scalars writes the first min(nscalars, cap) into out and returns
   * nscalars; -1 with the error set when a custom encoding fails (or a
   * tensor it needs is NULL).  Reads args only (tensors: their specs);
   * call it before dispatch consumes them.  Never NULL in generated
   * descriptors. */
  int nscalars;
  int (*scalars)(const void *args, bext_ext_scalar *out, int cap);

  /* Output metadata from the inputs' specs (shape and dtype; no data is
   * read), for a method with `#[fusion(dtype = .., shape = ..)]` or
   * `#[fusion(meta = ..)]`; NULL otherwise.  Fills out (meta_size bytes:
   * a bext_meta_spec for a tensor output, NameMetadata for an extension
   * value, the tuple of those for a tuple) and returns true; false with
   * err set as the metadata functions set it.  Zero err before a call. */
  size_t meta_size;
  bool (*meta)(const void *args, void *out, struct bext_meta_error *err);
  /* Compares an implementation's output value out with the metadata meta
   * computed (want): every tensor's shape and dtype and every enum
   * variant, and with fields (check mode, bext_set_check) the ordinary
   * fields too.  False with why naming the output field and both values.
   * Set exactly when meta is (for a method with an output). */
  bool (*meta_check)(const void *out, const void *want, bool fields, char *why, size_t n);
  /* The inverse: builds the output value out (zeroed, out_size bytes)
   * from a metadata value meta computed: ordinary fields and enum tags
   * copied (the variant the metadata chose), each tensor slot made by
   * make(ctx, slot, spec), slots numbered in out_slots' order (at most
   * BEXT_EXT_MAX_SLOTS).  False when make returns NULL (the tensors made
   * so far are in out: the caller releases them).  Fusion publishes its
   * lazy handles with it, Remote a streamed value.  Set exactly when
   * meta_check is. */
  bool (*out_from_meta)(const void *meta, void *out, bext_ext_make_fn make, void *ctx);
} bext_ext_method;

/* One call: the method, its arguments (the call owns one reference of
 * every tensor in them: the entry point retains borrowed ones, since a
 * deferred op outlives the call) and where the output goes. */
typedef struct bext_ext_call {
  const bext_ext_method *m;
  void *args;
  void *out;
} bext_ext_call;

/* Runs a call: checks its tensors (NULL, one device), picks the arm from
 * the routing tensor's device (the first float tensor, else the first
 * tensor; the outermost decorator layer picks first), runs it on that
 * device, and releases whatever tensors the arm left in args.  True on
 * success; false with the error set (out zeroed); an arm the method lacks
 * raises through the panic hook, inputs released first. */
bool bext_ext_dispatch(bext_ext_call *call);

/* The process-wide registry of extension ops, keyed by (trait, id).
 * Generated code registers every method at start-up; registering a second
 * method under a taken key raises through the panic hook, naming both. */
void bext_ext_register(const bext_ext_method *m);
const bext_ext_method *bext_ext_find(const char *trait, const char *id);
/* Fills out[0..cap) with the registered methods (registration order);
 * returns how many there are. */
int bext_ext_list(const bext_ext_method **out, int cap);

/* A copy of call's argument struct into dst (args_size bytes) holding one
 * more reference of every tensor in it: for decorators that keep or
 * forward a call.  bext_ext_args_release drops the tensors of one. */
void bext_ext_args_copy(const bext_ext_method *m, void *dst, void *src);
void bext_ext_args_release(const bext_ext_method *m, void *args);

#ifdef __cplusplus
}
#endif
#endif /* BEXT_EXT_H */
