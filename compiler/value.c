/* value.c — values of the metadata interpreter: constructors, integer
 * type table, deep copy, equality and Rust-Debug-style printing.  See value.h
 * for the ownership model. */
#include "value.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *bxv_xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        /* Out of memory in a compiler tool: there is no sensible recovery,
         * and a NULL would only move the crash elsewhere (as arena.h does). */
        fputs("bext: out of memory\n", stderr);
        abort();
    }
    return p;
}

/* ---- type tables ------------------------------------------------------- */

static const struct { const char *name; unsigned size; } dtype_info[] = {
#define X(n, s, sz) {s, sz},
    BXV_DTYPES(X)
#undef X
};
_Static_assert(sizeof dtype_info / sizeof dtype_info[0] == BXV_DTYPE_COUNT,
               "dtype_info follows BXV_DTYPES");

/* The kinds below BXV_ILIT are builtins.h's integer table, in its order. */
const char *bxv_int_type_name(BxvIntType t)
{
    return t < BXV_ILIT ? bxc_int_kinds[t].name : "{integer}";
}

bool bxv_int_type_signed(BxvIntType t)
{
    return t >= BXV_ILIT || bxc_int_kinds[t].is_signed;
}

bool bxv_int_fits(__int128 v, BxvIntType t)
{
    if (t < BXV_ILIT)
        return v >= (__int128)bxc_int_kinds[t].min && v <= (__int128)bxc_int_kinds[t].max;
    /* An unsuffixed literal must fit some 64-bit type. */
    return t == BXV_ILIT && v >= INT64_MIN && v <= (__int128)UINT64_MAX;
}

bool bxv_int_type_from_name(const char *name, size_t len, BxvIntType *out)
{
    int k = bxc_int_kind_find(name, (uint32_t)len);
    if (k < 0)
        return false;
    *out = (BxvIntType)k;
    return true;
}

const char *bxv_float_type_name(BxvFloatType t)
{
    return t == BXV_F32 ? "f32" : t == BXV_F64 ? "f64" : "{float}";
}

const char *bxv_dtype_name(BxvDType d) { return dtype_info[d].name; }
unsigned bxv_dtype_size(BxvDType d) { return dtype_info[d].size; }

bool bxv_dtype_from_name(const char *name, size_t len, BxvDType *out)
{
    for (int d = 0; d < BXV_DTYPE_COUNT; d++) {
        if (strlen(dtype_info[d].name) == len && memcmp(dtype_info[d].name, name, len) == 0) {
            *out = (BxvDType)d;
            return true;
        }
    }
    return false;
}

/* ---- constructors ------------------------------------------------------ */

BxvValue bxv_unit(void) { return (BxvValue){.kind = BXV_UNIT}; }

BxvValue bxv_int(__int128 v, BxvIntType ty)
{
    BxvValue r = {.kind = BXV_INT};
    r.u.i.v = v;
    r.u.i.ty = ty;
    return r;
}

BxvValue bxv_float(double v, BxvFloatType ty)
{
    BxvValue r = {.kind = BXV_FLOAT};
    /* f32 values are rounded at every step, as the generated C would. */
    r.u.f.v = ty == BXV_F32 ? (double)(float)v : v;
    r.u.f.ty = ty;
    return r;
}

BxvValue bxv_bool(bool b)
{
    BxvValue r = {.kind = BXV_BOOL};
    r.u.b = b;
    return r;
}

BxvValue bxv_dtype(BxvDType d)
{
    BxvValue r = {.kind = BXV_DTYPEV};
    r.u.dtype = d;
    return r;
}

static BxvShape shape_copy(bxc_arena *a, const BxvShape *s)
{
    BxvShape r = {0};
    r.cap = s->len ? s->len : 1;
    r.dims = bxc_arena_alloc(a, r.cap * sizeof *r.dims);
    r.len = s->len;
    if (s->len)
        memcpy(r.dims, s->dims, s->len * sizeof *r.dims);
    return r;
}

BxvValue bxv_shape_new(bxc_arena *a, size_t cap)
{
    BxvValue r = {.kind = BXV_SHAPE};
    r.u.shape.cap = cap ? cap : 4;
    r.u.shape.dims = bxc_arena_alloc(a, r.u.shape.cap * sizeof(uint64_t));
    return r;
}

BxvValue bxv_spec(bxc_arena *a, const BxvShape *s, BxvDType d)
{
    BxvValue r = {.kind = BXV_SPEC};
    r.u.spec.shape = shape_copy(a, s);
    r.u.spec.dtype = d;
    return r;
}

static void shape_reserve(bxc_arena *a, BxvShape *s, size_t need)
{
    if (need <= s->cap)
        return;
    size_t cap = s->cap ? s->cap * 2 : 4;
    while (cap < need)
        cap *= 2;
    uint64_t *d = bxc_arena_alloc(a, cap * sizeof *d);
    if (s->len)
        memcpy(d, s->dims, s->len * sizeof *d);
    s->dims = d;
    s->cap = cap;
}

void bxv_shape_push(bxc_arena *a, BxvShape *s, uint64_t d)
{
    shape_reserve(a, s, s->len + 1);
    s->dims[s->len++] = d;
}

void bxv_shape_insert(bxc_arena *a, BxvShape *s, size_t at, uint64_t d)
{
    shape_reserve(a, s, s->len + 1);
    memmove(s->dims + at + 1, s->dims + at, (s->len - at) * sizeof *s->dims);
    s->dims[at] = d;
    s->len++;
}

uint64_t bxv_shape_remove(BxvShape *s, size_t at)
{
    uint64_t d = s->dims[at];
    memmove(s->dims + at, s->dims + at + 1, (s->len - at - 1) * sizeof *s->dims);
    s->len--;
    return d;
}

/* ---- copy and equality ------------------------------------------------- */

static const char *copy_str(bxc_arena *a, const char *s)
{
    return s ? bxc_arena_strndup(a, s, strlen(s)) : NULL;
}

BxvValue bxv_copy(bxc_arena *a, const BxvValue *v)
{
    BxvValue r = *v;
    switch (v->kind) {
    case BXV_STR:
        r.u.str.s = bxc_arena_strndup(a, v->u.str.s, v->u.str.len);
        break;
    case BXV_SHAPE:
        r.u.shape = shape_copy(a, &v->u.shape);
        break;
    case BXV_SPEC:
        r.u.spec.shape = shape_copy(a, &v->u.spec.shape);
        break;
    case BXV_TUPLE:
        r.u.tuple.items = bxc_arena_alloc(a, (v->u.tuple.n ? v->u.tuple.n : 1) * sizeof(BxvValue));
        for (size_t i = 0; i < v->u.tuple.n; i++)
            r.u.tuple.items[i] = bxv_copy(a, &v->u.tuple.items[i]);
        break;
    case BXV_STRUCT:
    case BXV_ENUM: {
        size_t n = v->u.agg.n;
        r.u.agg.type = copy_str(a, v->u.agg.type);
        r.u.agg.variant = copy_str(a, v->u.agg.variant);
        r.u.agg.fields = bxc_arena_alloc(a, (n ? n : 1) * sizeof(BxvValue));
        r.u.agg.names = NULL;
        if (v->u.agg.names) {
            r.u.agg.names = bxc_arena_alloc(a, (n ? n : 1) * sizeof(char *));
            for (size_t i = 0; i < n; i++)
                r.u.agg.names[i] = copy_str(a, v->u.agg.names[i]);
        }
        for (size_t i = 0; i < n; i++)
            r.u.agg.fields[i] = bxv_copy(a, &v->u.agg.fields[i]);
        break;
    }
    case BXV_FN:
        r.u.fn.name = copy_str(a, v->u.fn.name);
        break;
    default:
        break;
    }
    return r;
}

static bool shape_eq(const BxvShape *x, const BxvShape *y)
{
    return x->len == y->len &&
           (x->len == 0 || memcmp(x->dims, y->dims, x->len * sizeof *x->dims) == 0);
}

static bool str_eq(const char *x, const char *y)
{
    return x == y || (x && y && strcmp(x, y) == 0);
}

bool bxv_equal(const BxvValue *x, const BxvValue *y)
{
    if (x->kind != y->kind)
        return false;
    switch (x->kind) {
    case BXV_UNIT:    return true;
    case BXV_INT:     return x->u.i.v == y->u.i.v;
    case BXV_FLOAT:   return x->u.f.v == y->u.f.v;
    case BXV_BOOL:    return x->u.b == y->u.b;
    case BXV_STR:     return x->u.str.len == y->u.str.len &&
                             memcmp(x->u.str.s, y->u.str.s, x->u.str.len) == 0;
    case BXV_SHAPE:   return shape_eq(&x->u.shape, &y->u.shape);
    case BXV_DTYPEV:  return x->u.dtype == y->u.dtype;
    case BXV_SPEC:    return x->u.spec.dtype == y->u.spec.dtype &&
                             shape_eq(&x->u.spec.shape, &y->u.spec.shape);
    case BXV_TUPLE:
        if (x->u.tuple.n != y->u.tuple.n)
            return false;
        for (size_t i = 0; i < x->u.tuple.n; i++)
            if (!bxv_equal(&x->u.tuple.items[i], &y->u.tuple.items[i]))
                return false;
        return true;
    case BXV_STRUCT:
    case BXV_ENUM:
        if (!str_eq(x->u.agg.type, y->u.agg.type) || !str_eq(x->u.agg.variant, y->u.agg.variant) ||
            x->u.agg.n != y->u.agg.n)
            return false;
        for (size_t i = 0; i < x->u.agg.n; i++)
            if (!bxv_equal(&x->u.agg.fields[i], &y->u.agg.fields[i]))
                return false;
        return true;
    case BXV_CLOSURE: return x->u.closure.node == y->u.closure.node;
    case BXV_FN:      return str_eq(x->u.fn.name, y->u.fn.name);
    }
    return false;
}

/* ---- printing ---------------------------------------------------------- */

void bxv_buf_append(BxvBuf *b, const char *s, size_t len)
{
    if (b->len + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        while (cap < b->len + len + 1)
            cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d) {
            fputs("bext: out of memory\n", stderr);
            abort();
        }
        b->data = d;
        b->cap = cap;
    }
    if (len)
        memcpy(b->data + b->len, s, len);
    b->len += len;
    b->data[b->len] = 0;
}

void bxv_buf_printf(BxvBuf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        bxv_buf_append(b, small, (size_t)n);
        return;
    }
    char *big = bxv_xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    bxv_buf_append(b, big, (size_t)n);
    free(big);
}

void bxv_buf_free(BxvBuf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

const char *bxv_i128_str(char buf[48], __int128 v)
{
    char tmp[48];
    int n = 0;
    bool neg = v < 0;
    unsigned __int128 u = neg ? -(unsigned __int128)v : (unsigned __int128)v;
    do {
        tmp[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    if (neg)
        tmp[n++] = '-';
    for (int i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    buf[n] = 0;
    return buf;
}

static void print_i128(BxvBuf *b, __int128 v)
{
    char out[48];
    const char *text = bxv_i128_str(out, v);   /* before strlen: argument order is unspecified */
    bxv_buf_append(b, text, strlen(text));
}

static bool roundtrips(const char *txt, double v, BxvFloatType ty)
{
    double back = strtod(txt, NULL);
    return ty == BXV_F32 ? (float)back == (float)v : back == v;
}

/* Rust's Debug for floats: the shortest text that reads back to the same
 * value (of the value's own width); plain decimals with at least one
 * fractional digit for 1e-4 <= |v| < 1e16 (and zero), otherwise scientific
 * without `+` or leading zeros in the exponent: `1e20`, `1.5e-7`. */
static void print_float(BxvBuf *b, double v, BxvFloatType ty)
{
    if (isnan(v)) {
        bxv_buf_append(b, "NaN", 3);
        return;
    }
    if (isinf(v)) {
        bxv_buf_printf(b, "%sinf", v < 0 ? "-" : "");
        return;
    }
    char tmp[64];
    double a = fabs(v);
    if (a == 0 || (a >= 1e-4 && a < 1e16)) {
        for (int prec = 0; prec <= 40; prec++) {
            snprintf(tmp, sizeof tmp, "%.*f", prec, v);
            if (roundtrips(tmp, v, ty))
                break;
        }
        bxv_buf_append(b, tmp, strlen(tmp));
        if (!strchr(tmp, '.'))
            bxv_buf_append(b, ".0", 2);
        return;
    }
    for (int prec = 0; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec, v);
        if (roundtrips(tmp, v, ty))
            break;
    }
    char *e = strchr(tmp, 'e');
    int exp = atoi(e + 1);
    *e = 0;
    bxv_buf_printf(b, "%se%d", tmp, exp);
}

static void print_shape(BxvBuf *b, const BxvShape *s)
{
    bxv_buf_append(b, "[", 1);
    for (size_t i = 0; i < s->len; i++)
        bxv_buf_printf(b, "%s%llu", i ? ", " : "", (unsigned long long)s->dims[i]);
    bxv_buf_append(b, "]", 1);
}

static void print_str(BxvBuf *b, const char *s, size_t len)
{
    bxv_buf_append(b, "\"", 1);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            bxv_buf_printf(b, "\\%c", c);
        else if (c == '\n')
            bxv_buf_append(b, "\\n", 2);
        else if (c < 0x20)
            bxv_buf_printf(b, "\\u{%x}", c);
        else
            bxv_buf_append(b, (const char *)&c, 1);
    }
    bxv_buf_append(b, "\"", 1);
}

static void print_fields(BxvBuf *b, const BxvValue *v)
{
    size_t n = v->u.agg.n;
    if (v->u.agg.braces) {
        if (n == 0) {
            bxv_buf_append(b, " {}", 3);   /* not reached for unit forms */
            return;
        }
        bxv_buf_append(b, " { ", 3);
        for (size_t i = 0; i < n; i++) {
            bxv_buf_printf(b, "%s%s: ", i ? ", " : "", v->u.agg.names ? v->u.agg.names[i] : "?");
            bxv_print(b, &v->u.agg.fields[i]);
        }
        bxv_buf_append(b, " }", 2);
    } else if (n) {
        bxv_buf_append(b, "(", 1);
        for (size_t i = 0; i < n; i++) {
            if (i)
                bxv_buf_append(b, ", ", 2);
            bxv_print(b, &v->u.agg.fields[i]);
        }
        bxv_buf_append(b, ")", 1);
    }
}

void bxv_print(BxvBuf *b, const BxvValue *v)
{
    switch (v->kind) {
    case BXV_UNIT:   bxv_buf_append(b, "()", 2); break;
    case BXV_INT:    print_i128(b, v->u.i.v); break;
    case BXV_FLOAT:  print_float(b, v->u.f.v, v->u.f.ty); break;
    case BXV_BOOL:   bxv_buf_printf(b, "%s", v->u.b ? "true" : "false"); break;
    case BXV_STR:    print_str(b, v->u.str.s, v->u.str.len); break;
    case BXV_SHAPE:  print_shape(b, &v->u.shape); break;
    case BXV_DTYPEV: bxv_buf_printf(b, "%s", bxv_dtype_name(v->u.dtype)); break;
    case BXV_SPEC:
        bxv_buf_append(b, "TensorSpec { shape: ", 20);
        print_shape(b, &v->u.spec.shape);
        bxv_buf_printf(b, ", dtype: %s }", bxv_dtype_name(v->u.spec.dtype));
        break;
    case BXV_TUPLE:
        bxv_buf_append(b, "(", 1);
        for (size_t i = 0; i < v->u.tuple.n; i++) {
            if (i)
                bxv_buf_append(b, ", ", 2);
            bxv_print(b, &v->u.tuple.items[i]);
        }
        bxv_buf_append(b, v->u.tuple.n == 1 ? ",)" : ")", v->u.tuple.n == 1 ? 2 : 1);
        break;
    case BXV_STRUCT:
        bxv_buf_printf(b, "%s", v->u.agg.type);
        print_fields(b, v);
        break;
    case BXV_ENUM:
        /* Rust's derived Debug names the variant only. */
        bxv_buf_printf(b, "%s", v->u.agg.variant);
        print_fields(b, v);
        break;
    case BXV_CLOSURE: bxv_buf_append(b, "<closure>", 9); break;
    case BXV_FN:      bxv_buf_printf(b, "<fn %s>", v->u.fn.name); break;
    }
}

void bxv_print_type(BxvBuf *b, const BxvValue *v)
{
    for (unsigned i = 0; i < v->refs; i++)
        bxv_buf_append(b, "&", 1);
    switch (v->kind) {
    case BXV_UNIT:    bxv_buf_append(b, "()", 2); break;
    case BXV_INT:     bxv_buf_printf(b, "%s", bxv_int_type_name(v->u.i.ty)); break;
    case BXV_FLOAT:   bxv_buf_printf(b, "%s", bxv_float_type_name(v->u.f.ty)); break;
    case BXV_BOOL:    bxv_buf_append(b, "bool", 4); break;
    case BXV_STR:     bxv_buf_append(b, "&str", 4); break;
    case BXV_SHAPE:   bxv_buf_append(b, "Shape", 5); break;
    case BXV_DTYPEV:  bxv_buf_append(b, "DType", 5); break;
    case BXV_SPEC:    bxv_buf_append(b, "TensorSpec", 10); break;
    case BXV_TUPLE:
        bxv_buf_append(b, "(", 1);
        for (size_t i = 0; i < v->u.tuple.n; i++) {
            if (i)
                bxv_buf_append(b, ", ", 2);
            bxv_print_type(b, &v->u.tuple.items[i]);
        }
        bxv_buf_append(b, v->u.tuple.n == 1 ? ",)" : ")", v->u.tuple.n == 1 ? 2 : 1);
        break;
    case BXV_STRUCT:
    case BXV_ENUM:    bxv_buf_printf(b, "%s", v->u.agg.type); break;
    case BXV_CLOSURE: bxv_buf_append(b, "closure", 7); break;
    case BXV_FN:      bxv_buf_printf(b, "fn %s", v->u.fn.name); break;
    }
}
