/* emit_int.h — state and helpers shared by the C code generator's files.
 *
 *   emit.c          entry point, output buffers, names, C spellings of
 *                   types, cfg conditions, writing files and the depfile
 *   emit_types.c    structs, enums, tuples, metadata companions and their
 *                   release / retain functions
 *   emit_dispatch.c dispatch entry points, routing, implementation
 *                   prototypes, weak references for default bodies
 *   emit_ext.c      the descriptor members over ordinary arguments: hash,
 *                   encode / decode, scalars, output metadata
 *   emit_body.c     default bodies: tensor expressions over the core ops
 *   emit_meta.c     metadata functions: helper fns, field expressions and
 *                   `meta` callables over <bext/gen.h>
 *   emit_depfile.c  the depfile of -MD
 * Not part of any API. */
#ifndef BXC_EMIT_INT_H
#define BXC_EMIT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "ast.h"
#include "emit.h"
#include "module.h"
#include "types.h"

/* Diagnostic codes of the generator: the BXC_EMIT_* rows of diag_codes.h. */

/* A growable text buffer (malloc-backed: the outputs can be large and die
 * with the call; everything else lives in the unit's arena). */
typedef struct bxc_emit_buf {
    char *data;
    size_t len, cap;
} bxc_emit_buf;

void bxc_emit_printf(bxc_emit_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void bxc_emit_puts(bxc_emit_buf *b, const char *s);
void bxc_emit_append(bxc_emit_buf *b, const bxc_emit_buf *other);
void bxc_emit_buf_free(bxc_emit_buf *b);
/* A `///` doc comment (bxc_item.doc, bxc_fn.doc) as a C doc comment
 * (slash, two stars, the lines, star slash) on its own lines; nothing for
 * NULL.  A star-slash or slash-star inside gets a backslash between its
 * two characters, so the comment can neither end early nor nest. */
void bxc_emit_doc(bxc_emit_buf *b, const char *doc);

/* A C type for a type of the language that needs one (struct, enum, tuple),
 * in the order the header must declare them (dependencies first). */
typedef struct bxc_emit_ctype {
    bxc_type *type;
    const char *name;          /* C name: `Inner`, `stem_tuple2_tensor_u32` */
    const char *fn_prefix;     /* release/retain prefix: `inner`, the tuple name */
    bool has_tensors;          /* needs release / retain */
    const char *cond;          /* `#if` condition or NULL */
} bxc_emit_ctype;

/* One claimed C name (emit_names.c).  The item is described by a format
 * with up to two `%s` arguments, formatted only for a message: a unit
 * claims tens of thousands of names and reports almost none. */
typedef struct bxc_emit_name {
    const char *cname;
    bxc_span span;             /* the .bext item that produced it (may be none) */
    const char *what_fmt;      /* that item, for messages: "method `%s`" */
    const char *what_a, *what_b;
    uint32_t hash;             /* of cname: the index is rebuilt without rehashing */
} bxc_emit_name;

typedef struct bxc_emit_ctx {
    bxc_unit *u;
    bxc_arena *a;
    const char *stem;          /* output file stem, e.g. "my_ext" */
    const char *cstem;         /* the same as a C identifier */
    bxc_emit_buf types_h;      /* header: type definitions */
    bxc_emit_buf protos_h;     /* header: prototypes */
    bxc_emit_buf types_c;      /* source: release/retain */
    bxc_emit_buf code_c;       /* source: functions */
    bxc_emit_buf register_c;   /* source: the start-up registration calls */
    bxc_emit_ctype *ctypes;
    uint32_t nctypes, capctypes;
    int register_depth;        /* nesting of bxc_emit_register_type */
    bxc_emit_name *names;      /* every file-scope C name emitted so far */
    uint32_t nnames, capnames;
    uint32_t *name_slots;      /* hash index into names (index + 1; 0 empty) */
    uint32_t name_nslots;      /* a power of two, at least 2 x nnames */
    const char **features;     /* every BEXT_FEATURE_* macro a cfg condition tests, */
    uint32_t nfeatures, capfeatures;   /* in first-use order (the feature check) */
    bool plan;                 /* the name plan (bxc_emit_check_names): every phase forms and
                                * claims its names but writes no C */
    bool ok;
} bxc_emit_ctx;

/* Reports an error at span (code E1101) and marks the generation failed. */
void bxc_emit_error(bxc_emit_ctx *cx, bxc_span span, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A limit the checker has already enforced was met anyway: a bug of
 * bextc, not of the input (E1104, "internal error: ...").  Each call site
 * names the checker rule that makes it unreachable. */
void bxc_emit_internal_error(bxc_emit_ctx *cx, bxc_span span, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- names (emit.c) ---- */
const char *bxc_emit_snake(bxc_arena *a, const char *camel);    /* MyExtension -> my_extension */
const char *bxc_emit_upper(bxc_arena *a, const char *camel);    /* MyExtension -> MY_EXTENSION */
const char *bxc_emit_ident(bxc_arena *a, const char *name);     /* C keywords get a `_` suffix */
const char *bxc_emit_cstring(bxc_arena *a, const char *s);      /* a C string literal, quoted */
/* Source text made safe inside a C block comment: `*` `/`, `/` `*` and `??`
 * get a space between, newlines become spaces. */
const char *bxc_emit_comment_text(bxc_arena *a, const char *s);
/* The C spelling of a value type (references stripped): `size_t`,
 * `bext_tensor *`, `Inner`, `bext_shape`; registers struct / tuple types. */
const char *bxc_emit_ctype_of(bxc_emit_ctx *cx, bxc_type *t);
/* The integer-kind constant of gen.h: `BEXT_GEN_USIZE`. */
const char *bxc_emit_int_kind(bxc_int_kind k);
/* cfg conditions: the C preprocessor expression of a cfg argument
 * (`feature = "x"`, not/any/all), and its source-like spelling. */
const char *bxc_emit_cfg_c(bxc_emit_ctx *cx, const bxc_attr_arg *cond);
const char *bxc_emit_cfg_text(bxc_emit_ctx *cx, const bxc_attr_arg *cond);
/* `#[cfg(...)]` attributes of a list as one C condition, or NULL if none. */
const char *bxc_emit_cfg_attrs(bxc_emit_ctx *cx, const bxc_attr_list *attrs);

/* ---- the C name table (emit_names.c) ---- */
/* Claims file-scope C name cname for the .bext item `what` at span.  A
 * name claimed before by another item, or reserved (C keywords, standard
 * typedefs, `bext_` / `BEXT_`), is a located error (code E1103); false then. */
bool bxc_emit_claim(bxc_emit_ctx *cx, const char *cname, bxc_span span, const char *what);
/* The same with the item described by `fmt` and its `%s` arguments a, b
 * (NULL when unused), formatted only if a message needs it. */
bool bxc_emit_claim_fmt(bxc_emit_ctx *cx, const char *cname, bxc_span span, const char *fmt, const char *a,
                        const char *b);

/* ---- types (emit_types.c) ---- */
/* Registers t (and what it contains) and returns its C type entry. */
bxc_emit_ctype *bxc_emit_register_type(bxc_emit_ctx *cx, bxc_type *t);
bool bxc_emit_type_has_tensors(bxc_type *t);
/* An enum's tag type and the tag constant of one of its variants.  A
 * metadata companion shares its enum's (`PacketMetadata` uses `PacketTag`
 * and `PACKET_FLOAT`): one numbering, not two that agree by position. */
const char *bxc_emit_tag_type(bxc_emit_ctx *cx, const bxc_type_decl *d);
const char *bxc_emit_tag_const(bxc_emit_ctx *cx, const bxc_type_decl *d, const char *variant);
/* Registers every struct / enum declared in the root module. */
void bxc_emit_root_types(bxc_emit_ctx *cx);
/* Writes every registered type into types_h / types_c. */
void bxc_emit_types_finish(bxc_emit_ctx *cx);
/* The name plan's counterpart: claims the names of every registered type
 * (as types_finish does while it writes them), writing nothing. */
void bxc_emit_types_claim(bxc_emit_ctx *cx);

/* ---- dispatch (emit_dispatch.c) ---- */
void bxc_emit_traits(bxc_emit_ctx *cx);
/* One parameter of a trait method as the generator sees it. */
typedef struct bxc_emit_param {
    const bxc_param *p;     /* the syntax (spans) */
    const bxc_method_param *rec;   /* the checker's record of it (scalar kind, encoding) */
    const char *name;       /* C name */
    const char *src_name;   /* as written (messages) */
    bxc_type *type;         /* without the reference */
    bool borrowed;          /* `&T` */
    bool is_tensor;
} bxc_emit_param;
/* ---- default bodies (emit_body.c) ---- */
/* Emits `static <ret> <name>(<params>)` computing the default body of fn;
 * `params` is the C parameter list text.  False after an error. */
/* ---- kernels (emit_kernels.c) ---- */
/* The serialized IR of every instantiation of the root module's kernels
 * into out: one array each, then `[static] const bext_kernel_src
 * table[]` (ending with a zero row); aot: each row names the kernel's
 * ahead-of-time symbol weakly on x86-64.  False after reporting errors. */
bool bxc_emit_kir_rows(bxc_unit *u, bxc_emit_buf *out, const char *table, bool is_static, bool aot);
/* The kernel table and a launcher per kernel (prototypes in the header). */
void bxc_emit_kernels(bxc_emit_ctx *cx);

bool bxc_emit_default_body(bxc_emit_ctx *cx, const bxc_fn *fn, const char *name, const char *params);
/* A name a formula sees: its source name, its C expression, its kind.
 * Tensors are BORROWED by the function (a use takes a new reference). */
typedef struct bxc_emit_var {
    const char *name;
    const char *c;
    bool tensor;
    bool is_float;
} bxc_emit_var;
/* Emits `static bext_tensor *<name>(<params>)` computing one tensor
 * expression (a `#[backward]` formula) with the same lowering as a
 * default body, `comment` above it; the C names of vars must be params.
 * False after an error. */
bool bxc_emit_formula(bxc_emit_ctx *cx, const bxc_expr *formula, const char *comment, const char *name,
                      const char *params, const bxc_emit_var *vars, uint32_t nvars);

/* ---- generated Autodiff implementations (emit_backward.c) ---- */
/* For a method with `#[backward(...)]` (attr): the formulas, the backward
 * callback and `static <ret> <entry>_bext_autodiff(<cparams>)`, which
 * runs the method on the inputs' values and records a custom node.
 * `what` is `Trait::method`, `cargs` forwards cparams. False after an error. */
bool bxc_emit_backward(bxc_emit_ctx *cx, const bxc_fn *fn, const bxc_attr *attr, const char *entry, const char *what,
                       const bxc_emit_param *params, uint32_t nparams, const char *cparams);

/* ---- depfile (emit_depfile.c) ---- */
/* Appends `c_path h_path: <every file the unit read>` to out. */
void bxc_emit_depfile(const bxc_unit *u, const char *c_path, const char *h_path, bxc_emit_buf *out);

/* ---- metadata functions (emit_meta.c) ---- */
/* Helper fns of every module. */
void bxc_emit_helpers(bxc_emit_ctx *cx);
/* What bxc_emit_method_meta emitted, for the descriptor to call. */
typedef struct bxc_emit_meta_info {
    const bxc_method_rec *rec;   /* the checker's record the functions were emitted from */
    bool dtype, shape;      /* <prefix>_meta_dtype, <prefix>_meta_shape */
    bool meta;              /* <prefix>_meta */
    bxc_type *meta_ret;     /* the result type of <prefix>_meta */
    bxc_type **scalar;      /* per parameter: the result type of
                             * <prefix>_scalar_<param>, NULL when none */
} bxc_emit_meta_info;
/* The #[fusion(...)] field expressions / meta callable and the custom
 * scalar encodings of a trait method, from its record; fills *info
 * (arena memory). */
void bxc_emit_method_meta(bxc_emit_ctx *cx, const char *prefix, const bxc_method_rec *rec, const char *cond,
                          bxc_emit_meta_info *info);

/* ---- descriptor members over ordinary arguments (emit_ext.c) ---- */
/* Emits the static functions behind args_hash / args_encode / args_decode,
 * scalars and meta of the method whose entry point is `entry` (argument
 * struct `struct <entry>_bext_args`) into code_c, and appends their
 * descriptor initializers (`  .args_hash = ...,\n`) to members. */
void bxc_emit_ext_members(bxc_emit_ctx *cx, const char *entry, const char *what, const bxc_emit_param *params,
                          uint32_t nparams, bxc_type *ret, const bxc_emit_meta_info *info, bxc_emit_buf *members);
/* The C name of a helper fn declared in module m. */
const char *bxc_emit_helper_name(bxc_emit_ctx *cx, const bxc_module *m, const char *fn);

#endif
