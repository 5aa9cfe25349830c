/* types.c — construction, comparison and printing of the checker's types
 * (types.h).  Primitive types are static singletons; composites live in
 * the compilation's arena. */
#include "types.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- singletons ---------------------------------------------------------- */

static bxc_type t_error = {.kind = BXC_TYPE_ERROR};
static bxc_type t_never = {.kind = BXC_TYPE_NEVER};
static bxc_type t_unit = {.kind = BXC_TYPE_UNIT};
static bxc_type t_bool = {.kind = BXC_TYPE_BOOL};
static bxc_type t_str = {.kind = BXC_TYPE_STR};
static bxc_type t_shape = {.kind = BXC_TYPE_SHAPE};
static bxc_type t_dtype = {.kind = BXC_TYPE_DTYPE};
static bxc_type t_spec = {.kind = BXC_TYPE_SPEC};

#define INT_T(k) {.kind = BXC_TYPE_INT, .int_kind = k}
static bxc_type t_ints[BXC_INT_KIND_COUNT] = {
    INT_T(BXC_I8), INT_T(BXC_I16), INT_T(BXC_I32), INT_T(BXC_I64), INT_T(BXC_ISIZE),
    INT_T(BXC_U8), INT_T(BXC_U16), INT_T(BXC_U32), INT_T(BXC_U64), INT_T(BXC_USIZE),
};
#undef INT_T
static bxc_type t_floats[BXC_FLOAT_KIND_COUNT] = {
    {.kind = BXC_TYPE_FLOAT, .float_kind = BXC_F32},
    {.kind = BXC_TYPE_FLOAT, .float_kind = BXC_F64},
    {.kind = BXC_TYPE_FLOAT, .float_kind = BXC_F16},
    {.kind = BXC_TYPE_FLOAT, .float_kind = BXC_BF16},
};
static bxc_type t_tensors[BXC_TENSOR_KIND_COUNT] = {
    {.kind = BXC_TYPE_TENSOR, .tensor_kind = BXC_TENSOR_FLOAT},
    {.kind = BXC_TYPE_TENSOR, .tensor_kind = BXC_TENSOR_INT},
    {.kind = BXC_TYPE_TENSOR, .tensor_kind = BXC_TENSOR_BOOL},
    {.kind = BXC_TYPE_TENSOR, .tensor_kind = BXC_TENSOR_QUANTIZED},
};

/* Singletons are never written to: their ref_cache stays empty and their
 * references are allocated per arena instead (a static cache would point
 * into an arena that dies with its compilation). */
static bool is_singleton(const bxc_type *t) {
    return t == &t_error || t == &t_never || t == &t_unit || t == &t_bool ||
           t == &t_str || t == &t_shape || t == &t_dtype || t == &t_spec ||
           (t >= t_ints && t < t_ints + BXC_INT_KIND_COUNT) ||
           (t >= t_floats && t < t_floats + BXC_FLOAT_KIND_COUNT) ||
           (t >= t_tensors && t < t_tensors + BXC_TENSOR_KIND_COUNT);
}

bxc_type *bxc_type_error(void) { return &t_error; }
bxc_type *bxc_type_never(void) { return &t_never; }
bxc_type *bxc_type_unit(void) { return &t_unit; }
bxc_type *bxc_type_bool(void) { return &t_bool; }
bxc_type *bxc_type_str(void) { return &t_str; }
bxc_type *bxc_type_shape(void) { return &t_shape; }
bxc_type *bxc_type_dtype(void) { return &t_dtype; }
bxc_type *bxc_type_spec(void) { return &t_spec; }
bxc_type *bxc_type_int(bxc_int_kind k) { return &t_ints[k]; }
bxc_type *bxc_type_float(bxc_float_kind k) { return &t_floats[k]; }
bxc_type *bxc_type_tensor(bxc_tensor_kind k) { return &t_tensors[k]; }

static bxc_type *new_type(bxc_arena *a, bxc_type_kind kind) {
    bxc_type *t = bxc_arena_alloc(a, sizeof *t);
    t->kind = kind;
    return t;
}

bxc_type *bxc_type_ref(bxc_arena *a, bxc_type *inner, bool is_mut) {
    bool cache = !is_singleton(inner) && inner->kind != BXC_TYPE_VAR;
    if (cache && inner->ref_cache[is_mut]) return inner->ref_cache[is_mut];
    bxc_type *t = new_type(a, BXC_TYPE_REF);
    t->ref.inner = inner;
    t->ref.is_mut = is_mut;
    if (cache) inner->ref_cache[is_mut] = t;
    return t;
}

bxc_type *bxc_type_tuple(bxc_arena *a, bxc_type *const *elems, uint32_t n) {
    if (n == 0) return &t_unit;
    bxc_type *t = new_type(a, BXC_TYPE_TUPLE);
    t->tuple.elems = bxc_arena_alloc(a, n * sizeof *t->tuple.elems);
    memcpy(t->tuple.elems, elems, n * sizeof *elems);
    t->tuple.n = n;
    return t;
}

bxc_type *bxc_type_fn(bxc_arena *a, bxc_type *const *params, uint32_t n, bxc_type *ret) {
    bxc_type *t = new_type(a, BXC_TYPE_FN);
    if (n) {
        t->fn.params = bxc_arena_alloc(a, n * sizeof *t->fn.params);
        memcpy(t->fn.params, params, n * sizeof *params);
    }
    t->fn.nparams = n;
    t->fn.ret = ret;
    return t;
}

bxc_type *bxc_type_range(bxc_arena *a, bxc_type *elem) {
    bxc_type *t = new_type(a, BXC_TYPE_RANGE);
    t->range_elem = elem;
    return t;
}

bxc_type *bxc_type_var(bxc_arena *a, bool is_float) {
    bxc_type *t = new_type(a, BXC_TYPE_VAR);
    t->var.is_float = is_float;
    return t;
}

bxc_type *bxc_type_generic(bxc_arena *a, const char *name) {
    bxc_type *t = new_type(a, BXC_TYPE_GENERIC);
    t->generic_name = name;
    return t;
}

bxc_type *bxc_type_decl_type(bxc_arena *a, bxc_type_decl *decl) {
    bxc_type *t = new_type(a, decl->is_enum ? BXC_TYPE_ENUM : BXC_TYPE_STRUCT);
    t->decl = decl;
    return t;
}

/* ---- queries --------------------------------------------------------------- */

bxc_type *bxc_type_resolve(bxc_type *t) {
    while (t && t->kind == BXC_TYPE_VAR && t->var.link) t = t->var.link;
    return t;
}

bxc_type *bxc_type_zonk(bxc_arena *a, bxc_type *t) {
    t = bxc_type_resolve(t);
    if (!t) return &t_error;
    switch (t->kind) {
    case BXC_TYPE_VAR:
        return t->var.is_float ? &t_floats[BXC_F64] : &t_ints[BXC_I64];
    case BXC_TYPE_REF: {
        bxc_type *in = bxc_type_zonk(a, t->ref.inner);
        return in == t->ref.inner ? t : bxc_type_ref(a, in, t->ref.is_mut);
    }
    case BXC_TYPE_TUPLE: {
        bool changed = false;
        bxc_type *tmp[64];
        bxc_type **el = t->tuple.n <= 64 ? tmp : bxc_arena_alloc(a, t->tuple.n * sizeof *el);
        for (uint32_t i = 0; i < t->tuple.n; i++) {
            el[i] = bxc_type_zonk(a, t->tuple.elems[i]);
            changed |= el[i] != t->tuple.elems[i];
        }
        return changed ? bxc_type_tuple(a, el, t->tuple.n) : t;
    }
    case BXC_TYPE_FN: {
        bool changed = false;
        bxc_type *tmp[64];
        bxc_type **ps = t->fn.nparams <= 64 ? tmp : bxc_arena_alloc(a, t->fn.nparams * sizeof *ps);
        for (uint32_t i = 0; i < t->fn.nparams; i++) {
            ps[i] = bxc_type_zonk(a, t->fn.params[i]);
            changed |= ps[i] != t->fn.params[i];
        }
        bxc_type *r = bxc_type_zonk(a, t->fn.ret);
        changed |= r != t->fn.ret;
        return changed ? bxc_type_fn(a, ps, t->fn.nparams, r) : t;
    }
    case BXC_TYPE_RANGE: {
        bxc_type *e = bxc_type_zonk(a, t->range_elem);
        return e == t->range_elem ? t : bxc_type_range(a, e);
    }
    default:
        return t;
    }
}

bool bxc_type_equal(bxc_type *a, bxc_type *b) {
    a = bxc_type_resolve(a);
    b = bxc_type_resolve(b);
    if (a == b) return true;
    if (!a || !b) return false;
    if (a->kind == BXC_TYPE_ERROR || b->kind == BXC_TYPE_ERROR) return true;
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case BXC_TYPE_INT: return a->int_kind == b->int_kind;
    case BXC_TYPE_FLOAT: return a->float_kind == b->float_kind;
    case BXC_TYPE_TENSOR: return a->tensor_kind == b->tensor_kind;
    case BXC_TYPE_REF:
        return a->ref.is_mut == b->ref.is_mut && bxc_type_equal(a->ref.inner, b->ref.inner);
    case BXC_TYPE_TUPLE:
        if (a->tuple.n != b->tuple.n) return false;
        for (uint32_t i = 0; i < a->tuple.n; i++)
            if (!bxc_type_equal(a->tuple.elems[i], b->tuple.elems[i])) return false;
        return true;
    case BXC_TYPE_STRUCT:
    case BXC_TYPE_ENUM:
        return a->decl == b->decl;
    case BXC_TYPE_FN:
        if (a->fn.nparams != b->fn.nparams) return false;
        for (uint32_t i = 0; i < a->fn.nparams; i++)
            if (!bxc_type_equal(a->fn.params[i], b->fn.params[i])) return false;
        return bxc_type_equal(a->fn.ret, b->fn.ret);
    case BXC_TYPE_RANGE:
        return bxc_type_equal(a->range_elem, b->range_elem);
    case BXC_TYPE_VAR:
        return false;   /* two distinct unresolved variables */
    case BXC_TYPE_GENERIC:
        return strcmp(a->generic_name, b->generic_name) == 0;
    default:
        return true;    /* singleton kinds */
    }
}

bxc_type *bxc_type_strip_refs(bxc_type *t) {
    t = bxc_type_resolve(t);
    while (t && t->kind == BXC_TYPE_REF) t = bxc_type_resolve(t->ref.inner);
    return t;
}

bool bxc_type_is_error(bxc_type *t) {
    t = bxc_type_resolve(t);
    return !t || t->kind == BXC_TYPE_ERROR;
}

bool bxc_type_is_int(bxc_type *t) {
    t = bxc_type_resolve(t);
    return t && (t->kind == BXC_TYPE_INT || (t->kind == BXC_TYPE_VAR && !t->var.is_float));
}

bool bxc_type_is_float(bxc_type *t) {
    t = bxc_type_resolve(t);
    return t && (t->kind == BXC_TYPE_FLOAT || (t->kind == BXC_TYPE_VAR && t->var.is_float));
}

bool bxc_type_is_numeric(bxc_type *t) {
    return bxc_type_is_int(t) || bxc_type_is_float(t);
}

bool bxc_type_is_scalar(bxc_type *t) {
    t = bxc_type_resolve(t);
    return bxc_type_is_numeric(t) || (t && t->kind == BXC_TYPE_BOOL);
}

bool bxc_type_is_tensor(bxc_type *t) {
    t = bxc_type_resolve(t);
    return t && t->kind == BXC_TYPE_TENSOR;
}

bool bxc_type_is_extension(bxc_type *t) {
    t = bxc_type_resolve(t);
    return t && (t->kind == BXC_TYPE_STRUCT || t->kind == BXC_TYPE_ENUM) &&
           t->decl->is_extension;
}

bool bxc_type_has_tensors(bxc_type *t) {
    t = bxc_type_strip_refs(t);
    if (!t) return false;
    if (t->kind == BXC_TYPE_TENSOR) return true;
    if (bxc_type_is_extension(t)) return true;
    if (t->kind == BXC_TYPE_TUPLE)
        for (uint32_t i = 0; i < t->tuple.n; i++)
            if (bxc_type_has_tensors(t->tuple.elems[i])) return true;
    return false;
}

bxc_type *bxc_type_builtin(const bxc_builtin_type *bt) {
    switch ((bxc_type_kind)bt->kind) {
    case BXC_TYPE_TENSOR: return bxc_type_tensor((bxc_tensor_kind)bt->sub);
    case BXC_TYPE_INT: return bxc_type_int((bxc_int_kind)bt->sub);
    case BXC_TYPE_FLOAT: return bxc_type_float((bxc_float_kind)bt->sub);
    case BXC_TYPE_BOOL: return bxc_type_bool();
    case BXC_TYPE_SHAPE: return bxc_type_shape();
    case BXC_TYPE_DTYPE: return bxc_type_dtype();
    case BXC_TYPE_SPEC: return bxc_type_spec();
    default: return bxc_type_error();
    }
}

const char *bxc_int_kind_name(bxc_int_kind k) {
    return k < BXC_INT_KIND_COUNT ? bxc_int_kinds[k].name : "?";
}
bool bxc_int_kind_signed(bxc_int_kind k) { return k < BXC_INT_KIND_COUNT && bxc_int_kinds[k].is_signed; }
const char *bxc_float_kind_name(bxc_float_kind k) {
    static const char *const names[BXC_FLOAT_KIND_COUNT] = {"f32", "f64", "f16", "bf16"};
    return k < BXC_FLOAT_KIND_COUNT ? names[k] : "?";
}

const char *bxc_tensor_kind_name(bxc_tensor_kind k) {
    for (uint32_t i = 0; i < bxc_builtin_type_count; i++)
        if (bxc_builtin_types[i].kind == BXC_TYPE_TENSOR && bxc_builtin_types[i].sub == k)
            return bxc_builtin_types[i].name;
    return "?";
}

static const char *const kind_names[BXC_TYPE_KIND_COUNT] = {
    "error", "never", "unit", "bool", "int", "float", "str", "Shape", "DType",
    "TensorSpec", "tensor", "reference", "tuple", "struct", "enum", "fn",
    "range", "var", "generic",
};
_Static_assert(sizeof kind_names / sizeof *kind_names == BXC_TYPE_KIND_COUNT,
               "ORDER BXC_TYPE_KIND");
const char *bxc_type_kind_name(bxc_type_kind k) {
    return k < BXC_TYPE_KIND_COUNT ? kind_names[k] : "?";
}

bxc_type_field *bxc_type_decl_field(bxc_type_decl *d, const char *name) {
    for (uint32_t i = 0; i < d->nfields; i++)
        if (d->fields[i].name && strcmp(d->fields[i].name, name) == 0) return &d->fields[i];
    return NULL;
}

bxc_type_variant *bxc_type_decl_variant(bxc_type_decl *d, const char *name) {
    for (uint32_t i = 0; i < d->nvariants; i++)
        if (strcmp(d->variants[i].name, name) == 0) return &d->variants[i];
    return NULL;
}

/* ---- printing --------------------------------------------------------------- */

typedef struct pbuf {
    char *buf;
    size_t cap, len;
} pbuf;

static void put(pbuf *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(pbuf *p, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    size_t room = p->len < p->cap ? p->cap - p->len : 0;
    int n = vsnprintf(room ? p->buf + p->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0) p->len += (size_t)n;
}

static void print_type(pbuf *p, const bxc_type *t, int depth) {
    t = bxc_type_resolve((bxc_type *)t);
    if (!t) { put(p, "?"); return; }
    if (depth > 32) { put(p, "..."); return; }  /* types are finite, but be safe */
    switch (t->kind) {
    case BXC_TYPE_ERROR: put(p, "{error}"); break;
    case BXC_TYPE_NEVER: put(p, "!"); break;
    case BXC_TYPE_UNIT: put(p, "()"); break;
    case BXC_TYPE_BOOL: put(p, "bool"); break;
    case BXC_TYPE_INT: put(p, "%s", bxc_int_kind_name(t->int_kind)); break;
    case BXC_TYPE_FLOAT: put(p, "%s", bxc_float_kind_name(t->float_kind)); break;
    case BXC_TYPE_STR: put(p, "&str"); break;
    case BXC_TYPE_SHAPE: put(p, "Shape"); break;
    case BXC_TYPE_DTYPE: put(p, "DType"); break;
    case BXC_TYPE_SPEC: put(p, "TensorSpec"); break;
    case BXC_TYPE_TENSOR: put(p, "%s", bxc_tensor_kind_name(t->tensor_kind)); break;
    case BXC_TYPE_REF:
        put(p, t->ref.is_mut ? "&mut " : "&");
        print_type(p, t->ref.inner, depth + 1);
        break;
    case BXC_TYPE_TUPLE:
        put(p, "(");
        for (uint32_t i = 0; i < t->tuple.n; i++) {
            if (i) put(p, ", ");
            print_type(p, t->tuple.elems[i], depth + 1);
        }
        put(p, t->tuple.n == 1 ? ",)" : ")");
        break;
    case BXC_TYPE_STRUCT:
    case BXC_TYPE_ENUM: put(p, "%s", t->decl->name); break;
    case BXC_TYPE_FN:
        put(p, "fn(");
        for (uint32_t i = 0; i < t->fn.nparams; i++) {
            if (i) put(p, ", ");
            print_type(p, t->fn.params[i], depth + 1);
        }
        put(p, ")");
        if (t->fn.ret && bxc_type_resolve(t->fn.ret)->kind != BXC_TYPE_UNIT) {
            put(p, " -> ");
            print_type(p, t->fn.ret, depth + 1);
        }
        break;
    case BXC_TYPE_RANGE:
        put(p, "Range<");
        print_type(p, t->range_elem, depth + 1);
        put(p, ">");
        break;
    case BXC_TYPE_VAR: put(p, t->var.is_float ? "{float}" : "{integer}"); break;
    case BXC_TYPE_GENERIC: put(p, "%s", t->generic_name); break;
    default: put(p, "?"); break;
    }
}

size_t bxc_type_print(char *buf, size_t cap, const bxc_type *t) {
    pbuf p = {buf, cap, 0};
    if (cap) buf[0] = '\0';
    print_type(&p, t, 0);
    if (cap && p.len >= cap) buf[cap - 1] = '\0';
    return p.len;
}

const char *bxc_type_name(bxc_arena *a, const bxc_type *t) {
    char small[128];
    size_t n = bxc_type_print(small, sizeof small, t);
    if (n < sizeof small) return bxc_arena_strdup(a, small);
    char *big = bxc_arena_alloc(a, n + 1);
    bxc_type_print(big, n + 1, t);
    return big;
}
