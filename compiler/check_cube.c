/* check_cube.c — the checker of `#[cube]` kernels (language.md §8).
 *
 * A kernel is checked once, generically: a type parameter `F: Float` is
 * the checker's opaque generic type, and the rules below are written so
 * that every instantiation (bxc_cube_instance_*) is well typed.  Types are
 * the checker's own (types.h: the int and float singletons, bool, generic
 * types, literal inference variables); names resolve through the
 * checker's scopes (check.h) for locals and parameters, through the IR's
 * tables (bxk.h) for topology builtins and math intrinsics, and through
 * chk_resolve_tyexpr for written types.  What each name means is recorded
 * in the bxc_cube_kernel (cube.h), which is all the lowering reads.
 *
 * Kernel typing differs from the metadata language (check_expr.c) where
 * the hardware does: indices and topology values are u32, a literal that
 * nothing constrains is i32 or the kernel's float type, tensors and
 * shared arrays are places, never values.
 *
 * `#[cube(helper)]` fns are checked the same way, generically, and each
 * call records the types the arguments give the helper's type
 * parameters (bxc_cube_call), which is what the lowering inlines with.
 * Order: every signature first (chk_cube_helpers), so a body may call a
 * helper declared anywhere; then the helper bodies and a search for call
 * cycles; then the kernels (chk_cube_module). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bxk.h"
#include "check_internal.h"
#include "cube.h"
#include "emit.h"

/* ---- tables ---------------------------------------------------------------- */

typedef struct bound_row {
    const char *name;
    bool is_float, is_int;
    const uint8_t *dtypes;
    uint32_t n;
} bound_row;

#define DT_(E, s, f, i, ...) static const uint8_t dt_##E[] = __VA_ARGS__;
BXC_CUBE_BOUNDS(DT_)
#undef DT_
static const bound_row bounds[] = {
#define ROW_(E, s, f, i, ...) {s, f, i, dt_##E, sizeof dt_##E},
    BXC_CUBE_BOUNDS(ROW_)
#undef ROW_
};
#define NBOUNDS (sizeof bounds / sizeof *bounds)

static const char *const op_names[] = {
#define X_(E, s, na, nb, c, im) #s,
    BXK_OPS(X_)
#undef X_
};
static const uint8_t op_nargs[] = {
#define X_(E, s, na, nb, c, im) na,
    BXK_OPS(X_)
#undef X_
};
static const uint8_t op_class[] = {
#define X_(E, s, na, nb, c, im) c,
    BXK_OPS(X_)
#undef X_
};

/* The math intrinsics are the IR ops of the float-math class, plus `abs`,
 * `sign`, `min`, `max` and `pow`: one table (bxk_ops.h) names them. */
static bool is_intrinsic_op(unsigned op) {
    switch (op_class[op]) {
    case BXK_C_FLOAT1: return true;
    case BXK_C_NUM1: return op != BXK_OP_NEG;
    case BXK_C_ARITH: return op == BXK_OP_MIN || op == BXK_OP_MAX || op == BXK_OP_POW;
    default: return false;
    }
}

int bxc_cube_intrinsic(const char *name, uint32_t *nargs, bool *float_only) {
    for (unsigned op = 0; op < BXK_OP_COUNT; op++)
        if (is_intrinsic_op(op) && strcmp(op_names[op], name) == 0) {
            if (nargs) *nargs = op_nargs[op];
            if (float_only)
                *float_only = op_class[op] == BXK_C_FLOAT1;
            return (int)op;
        }
    return -1;
}

int bxc_cube_topo(const char *name) {
    for (unsigned t = 0; t < BXK_TOPO_COUNT; t++)
        if (strcmp(bxk_topo_name(t), name) == 0) return (int)t;
    return -1;
}

/* The kernel types: the front end's types that have an IR type. */
static unsigned ir_type_of_int(bxc_int_kind k) {
    switch (k) {
    case BXC_U8: return BXK_U8;
    case BXC_I32: return BXK_I32;
    case BXC_U32: return BXK_U32;
    case BXC_I64: return BXK_I64;
    default: return BXK_VOID;
    }
}

/* ---- instantiations ------------------------------------------------------------ */

uint32_t bxc_cube_instance_count(const bxc_cube_kernel *k) {
    uint32_t n = 1;
    for (uint32_t g = 0; g < k->ngenerics; g++) n *= k->generics[g].ndtypes;
    for (uint32_t c = 0; c < k->ncomptimes; c++) n *= k->comptimes[c].nvalues;
    return n;
}

/* Mixed radix, the first generic varying slowest: f32 before f64. */
static uint32_t digit(const bxc_cube_kernel *k, uint32_t inst, uint32_t pos) {
    uint32_t npos = k->ngenerics + k->ncomptimes;
    for (uint32_t p = npos; p-- > pos + 1;)
        inst /= p < k->ngenerics ? k->generics[p].ndtypes : k->comptimes[p - k->ngenerics].nvalues;
    uint32_t radix = pos < k->ngenerics ? k->generics[pos].ndtypes
                                        : k->comptimes[pos - k->ngenerics].nvalues;
    return radix ? inst % radix : 0;
}

unsigned bxc_cube_instance_dtype(const bxc_cube_kernel *k, uint32_t inst, uint32_t g) {
    return k->generics[g].dtypes[digit(k, inst, g)];
}

int64_t bxc_cube_instance_value(const bxc_cube_kernel *k, uint32_t inst, uint32_t c) {
    return k->comptimes[c].values[digit(k, inst, k->ngenerics + c)];
}

const char *bxc_cube_instance_name(bxc_arena *a, const bxc_cube_kernel *k, uint32_t inst) {
    const char *s = bxc_arena_printf(a, "%s%s", k->prefix ? k->prefix : "", k->name);
    for (uint32_t g = 0; g < k->ngenerics; g++)
        s = bxc_arena_printf(a, "%s_%s", s, bxk_type_name(bxc_cube_instance_dtype(k, inst, g)));
    for (uint32_t c = 0; c < k->ncomptimes; c++) {
        int64_t v = bxc_cube_instance_value(k, inst, c);
        s = v < 0 ? bxc_arena_printf(a, "%s_m%lld", s, (long long)-v)
                  : bxc_arena_printf(a, "%s_%lld", s, (long long)v);
    }
    return s;
}

/* ---- the kernel record --------------------------------------------------------- */

static uint32_t hash_ptr(const void *p, uint32_t cap) {
    uintptr_t x = (uintptr_t)p;
    x ^= x >> 17;
    x *= 0x9E3779B97F4A7C15ull;
    return (uint32_t)(x >> 32) & (cap - 1);
}

static void put_use(chk_ctx *cx, bxc_cube_kernel *k, const void *node, bxc_cube_var *v) {
    if (2 * (k->nuses + 1) > k->capuses) {
        uint32_t nc = k->capuses ? 2 * k->capuses : 64;
        bxc_cube_use *nu = bxc_arena_alloc(cx->arena, nc * sizeof *nu);
        for (uint32_t i = 0; i < k->capuses; i++)
            if (k->uses[i].node) {
                uint32_t h = hash_ptr(k->uses[i].node, nc);
                while (nu[h].node) h = (h + 1) & (nc - 1);
                nu[h] = k->uses[i];
            }
        k->uses = nu;
        k->capuses = nc;
    }
    uint32_t h = hash_ptr(node, k->capuses);
    while (k->uses[h].node && k->uses[h].node != node) h = (h + 1) & (k->capuses - 1);
    if (!k->uses[h].node) k->nuses++;
    k->uses[h].node = node;
    k->uses[h].var = v;
}

bxc_cube_var *bxc_cube_use_of(const bxc_cube_kernel *k, const void *node) {
    if (!k->capuses) return NULL;
    uint32_t h = hash_ptr(node, k->capuses);
    while (k->uses[h].node) {
        if (k->uses[h].node == node) return k->uses[h].var;
        h = (h + 1) & (k->capuses - 1);
    }
    return NULL;
}

const bxc_cube_set *bxc_cube_kernels(const struct bxc_unit *u) {
    const chk_ctx *cx = u->check;
    return cx ? cx->cubes : NULL;
}

/* ---- per-kernel checking state --------------------------------------------------- */

typedef struct kc {
    chk_ctx *cx;
    chk_module *cm;
    bxc_cube_kernel *k;
    bxc_scope *scope;
    uint32_t loop_depth;
    struct { bxc_type **items; uint32_t len, cap; } lits;   /* literal variables, defaulted at the end */
    bool broken;              /* met a syntax error's placeholder: never lower */
} kc;

static bxc_cube_var *new_var(kc *c, bxc_cube_var_kind kind, const char *name, bxc_type *t,
                             bxc_span span) {
    bxc_cube_kernel *k = c->k;
    bxc_cube_var *v = bxc_arena_alloc(c->cx->arena, sizeof *v);
    v->kind = kind;
    v->name = name;
    v->type = t;
    v->span = span;
    v->id = k->vars.len;
    BXC_LIST_PUSH(c->cx->arena, &k->vars, v);
    v->binding = bxc_scope_bind(c->cx->arena, c->scope, name, t,
                                kind == BXC_CUBE_MUT || kind == BXC_CUBE_SHARED);
    v->binding->span = span;
    return v;
}

static bxc_cube_var *lookup_var(kc *c, const char *name) {
    bxc_binding *b = bxc_scope_lookup(c->scope, name);
    if (!b) return NULL;
    for (uint32_t i = c->k->vars.len; i-- > 0;)
        if (c->k->vars.items[i]->binding == b) return c->k->vars.items[i];
    return NULL;
}

static void push_scope(kc *c) { c->scope = bxc_scope_new(c->cx->arena, c->scope); }
static void pop_scope(kc *c) { c->scope = c->scope->parent; }

static bxc_type *lit_var(kc *c, bool is_float) {
    bxc_type *v = bxc_type_var(c->cx->arena, is_float);
    BXC_LIST_PUSH(c->cx->arena, &c->lits, v);
    return v;
}

static const bxc_cube_generic *generic_of(kc *c, bxc_type *t) {
    t = bxc_type_resolve(t);
    if (!t || t->kind != BXC_TYPE_GENERIC) return NULL;
    for (uint32_t g = 0; g < c->k->ngenerics; g++)
        if (strcmp(c->k->generics[g].name, t->generic_name) == 0) return &c->k->generics[g];
    return NULL;
}

/* Classes of a kernel type; a generic has its bound's. */
static bool ty_err(bxc_type *t) {
    t = bxc_type_resolve(t);
    return !t || t->kind == BXC_TYPE_ERROR || t->kind == BXC_TYPE_NEVER;
}
static bool ty_float(kc *c, bxc_type *t) {
    t = bxc_type_resolve(t);
    const bxc_cube_generic *g = generic_of(c, t);
    if (g) return g->is_float && !g->is_int;
    return bxc_type_is_float(t);
}
static bool ty_int(kc *c, bxc_type *t) {
    t = bxc_type_resolve(t);
    const bxc_cube_generic *g = generic_of(c, t);
    if (g) return g->is_int && !g->is_float;
    return bxc_type_is_int(t);
}
static bool ty_num(kc *c, bxc_type *t) {
    return generic_of(c, t) || bxc_type_is_numeric(bxc_type_resolve(t));
}
static bool ty_bool(bxc_type *t) {
    t = bxc_type_resolve(t);
    return t && t->kind == BXC_TYPE_BOOL;
}
static bool ty_signed(kc *c, bxc_type *t) {
    t = bxc_type_resolve(t);
    if (generic_of(c, t) || t->kind == BXC_TYPE_VAR || t->kind == BXC_TYPE_FLOAT) return true;
    return t->kind == BXC_TYPE_INT && bxc_int_kind_signed(t->int_kind);
}

/* Unification of kernel types.  Unlike chk_unify, a type parameter is not
 * a wildcard: `F` matches `F` and the literals its bound admits only. */
static bool kunify(kc *c, bxc_type *a, bxc_type *b) {
    a = bxc_type_resolve(a);
    b = bxc_type_resolve(b);
    if (!a || !b || a == b) return true;
    if (ty_err(a) || ty_err(b)) return true;
    if (a->kind == BXC_TYPE_VAR || b->kind == BXC_TYPE_VAR) {
        bxc_type *v = a->kind == BXC_TYPE_VAR ? a : b, *o = v == a ? b : a;
        if (o->kind == BXC_TYPE_VAR) {
            if (o->var.is_float != v->var.is_float) return false;
            v->var.link = o;
            return true;
        }
        const bxc_cube_generic *g = generic_of(c, o);
        bool fits = g ? (v->var.is_float ? g->is_float && !g->is_int : g->is_int)
                      : (v->var.is_float ? o->kind == BXC_TYPE_FLOAT : o->kind == BXC_TYPE_INT);
        if (!fits) return false;
        v->var.link = o;
        return true;
    }
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case BXC_TYPE_INT: return a->int_kind == b->int_kind;
    case BXC_TYPE_FLOAT: return a->float_kind == b->float_kind;
    case BXC_TYPE_GENERIC: return strcmp(a->generic_name, b->generic_name) == 0;
    case BXC_TYPE_BOOL: case BXC_TYPE_UNIT: return true;
    default: return false;
    }
}

static const char *describe(kc *c, bxc_type *t) {
    t = bxc_type_resolve(t);
    if (t && t->kind == BXC_TYPE_VAR) return t->var.is_float ? "floating-point number" : "integer";
    return bxc_arena_printf(c->cx->arena, "`%s`", chk_tn(c->cx, t));
}

static bool kcoerce(kc *c, bxc_type *expected, bxc_type *found, bxc_span span) {
    if (kunify(c, expected, found)) return true;
    bxc_diag *d = chk_error(c->cx, CHK_E_MISMATCH, span, "expected %s, found %s",
                            describe(c, expected), describe(c, found));
    bxc_type *e = bxc_type_resolve(expected), *g = bxc_type_resolve(found);
    if (ty_num(c, e) && ty_num(c, g) && e->kind != BXC_TYPE_VAR && g->kind != BXC_TYPE_VAR)
        chk_help(c->cx, d, "convert with `as %s`", chk_tn(c->cx, e));
    return false;
}

/* ---- types as written ------------------------------------------------------------ */

static const char *kernel_types_help = "kernels compute with bool, u8, i32, u32, i64, f16, bf16, "
                                       "f32, f64 and their type parameters";

/* A scalar type in a kernel: resolved by the checker, then restricted. */
static bxc_type *scalar_ty(kc *c, bxc_tyexpr *te) {
    bxc_type *t = chk_resolve_tyexpr(c->cx, c->cm, te, &c->k->fn->generics);
    bxc_type *r = bxc_type_resolve(t);
    if (ty_err(r)) return bxc_type_error();
    if (r->kind == BXC_TYPE_GENERIC) {
        if (!generic_of(c, r)) return bxc_type_error();
        return r;
    }
    if (r->kind == BXC_TYPE_BOOL || r->kind == BXC_TYPE_FLOAT ||
        (r->kind == BXC_TYPE_INT && ir_type_of_int(r->int_kind) != BXK_VOID))
        return r;
    bxc_diag *d = chk_error(c->cx, CHK_E_CUBE_TYPE, te->span, "`%s` is not a kernel type",
                            chk_tn(c->cx, r));
    chk_help(c->cx, d, "%s", kernel_types_help);
    return bxc_type_error();
}

/* `Tensor<T>` / `SharedMemory<T>` written: the element type, or NULL when
 * te is not that container. */
static bxc_type *container_elem(kc *c, bxc_tyexpr *te, const char *name) {
    if (!te || te->kind != BXC_TY_PATH || !te->path || te->path->segs.len != 1 ||
        strcmp(te->path->segs.items[0].name, name) != 0)
        return NULL;
    if (te->args.len != 1) {
        chk_error(c->cx, CHK_E_TYPE_ARGS, te->span, "`%s` takes one element type: `%s<F>`", name,
                  name);
        return bxc_type_error();
    }
    return scalar_ty(c, te->args.items[0]);
}

/* ---- expressions ------------------------------------------------------------------ */

static bxc_type *kexpr(kc *c, bxc_expr *e, bxc_type *expected);
static bxc_type *kblock(kc *c, bxc_block *b, bxc_type *expected);

static bxc_type *record(bxc_expr *e, bxc_type *t) {
    e->ty = t;
    return t;
}

/* Typed against `expected` when given (reports the mismatch). */
static bxc_type *kexpect(kc *c, bxc_expr *e, bxc_type *expected) {
    bxc_type *t = kexpr(c, e, expected);
    if (expected) kcoerce(c, expected, t, e->span);
    return t;
}

static bxc_type *u32_t(void) { return bxc_type_int(BXC_U32); }

/* The tensor / shared array a PATH names, or NULL (nothing reported). */
static bxc_cube_var *place_var(kc *c, bxc_expr *e) {
    if (e->kind != BXC_EXPR_PATH || e->path->segs.len != 1) return NULL;
    bxc_cube_var *v = lookup_var(c, e->path->segs.items[0].name);
    if (!v || (v->kind != BXC_CUBE_TENSOR && v->kind != BXC_CUBE_SHARED)) return NULL;
    put_use(c->cx, c->k, e, v);
    e->ty = v->type;
    return v;
}

static const char **name_cands(kc *c, uint32_t *n, bool values) {
    uint32_t cap = BXK_TOPO_COUNT + BXK_OP_COUNT + c->k->vars.len + 1;
    const char **out = bxc_arena_alloc(c->cx->arena, cap * sizeof *out);
    uint32_t m = 0;
    if (values) {
        for (unsigned t = 0; t < BXK_TOPO_COUNT; t++) out[m++] = bxk_topo_name(t);
        for (uint32_t i = 0; i < c->k->vars.len; i++)
            if (lookup_var(c, c->k->vars.items[i]->name) == c->k->vars.items[i]) out[m++] = c->k->vars.items[i]->name;
    } else {
        for (unsigned op = 0; op < BXK_OP_COUNT; op++)
            if (is_intrinsic_op(op)) out[m++] = op_names[op];
        out[m++] = "sync_cube";
    }
    *n = m;
    return out;
}

static bxc_type *path_expr(kc *c, bxc_expr *e) {
    if (e->path->segs.len != 1) {
        chk_error(c->cx, CHK_E_BAD_EXPR, e->span, "paths are not values in kernels");
        return record(e, bxc_type_error());
    }
    const char *name = e->path->segs.items[0].name;
    bxc_cube_var *v = lookup_var(c, name);
    if (v) {
        put_use(c->cx, c->k, e, v);
        if (v->kind == BXC_CUBE_TENSOR || v->kind == BXC_CUBE_SHARED) {
            bxc_diag *d = chk_error(c->cx, CHK_E_CUBE_OBJECT, e->span,
                                    "`%s` is a %s, not a value", name,
                                    v->kind == BXC_CUBE_TENSOR ? "tensor" : "shared array");
            chk_help(c->cx, d, "read an element (`%s[i]`)%s", name,
                     v->kind == BXC_CUBE_TENSOR ? " or ask `.len()`, `.shape(d)`, `.stride(d)`" : "");
            return record(e, bxc_type_error());
        }
        return record(e, v->type);
    }
    if (bxc_cube_topo(name) >= 0) return record(e, u32_t());
    uint32_t n;
    const char **cands = name_cands(c, &n, true);
    bxc_diag *d = chk_error(c->cx, CHK_E_UNKNOWN_NAME, e->span, "unknown name `%s` in kernel `%s`",
                            name, c->k->name);
    const char *near = chk_nearest(name, cands, n);
    if (near) chk_help(c->cx, d, "did you mean `%s`?", near);
    return record(e, bxc_type_error());
}

static bool is_arith(bxc_binop op) {
    return op == BXC_BIN_ADD || op == BXC_BIN_SUB || op == BXC_BIN_MUL || op == BXC_BIN_DIV ||
           op == BXC_BIN_REM;
}
static bool is_bitwise(bxc_binop op) {
    return op == BXC_BIN_BITAND || op == BXC_BIN_BITOR || op == BXC_BIN_BITXOR;
}
static bool is_cmp(bxc_binop op) { return op >= BXC_BIN_EQ && op <= BXC_BIN_GE; }

/* Operand rule of op on type t: NULL when fine, else what it needs. */
static const char *operand_rule(kc *c, bxc_binop op, bxc_type *t) {
    if (ty_err(t)) return NULL;
    if (is_arith(op)) return ty_num(c, t) ? NULL : "numbers";
    if (is_bitwise(op)) return ty_int(c, t) || ty_bool(t) ? NULL : "integers or bools";
    if (op == BXC_BIN_AND || op == BXC_BIN_OR) return ty_bool(t) ? NULL : "bools";
    if (op == BXC_BIN_EQ || op == BXC_BIN_NE) return ty_num(c, t) || ty_bool(t) ? NULL : "numbers or bools";
    if (is_cmp(op)) return ty_num(c, t) ? NULL : "numbers";
    return "nothing";
}

static bxc_type *binary_operands(kc *c, bxc_binop op, bxc_expr *lhs, bxc_expr *rhs,
                                 bxc_type *expected, bxc_span span) {
    bxc_type *want = op == BXC_BIN_AND || op == BXC_BIN_OR ? bxc_type_bool() : NULL;
    if (!want && !is_cmp(op)) want = expected;   /* arithmetic: the result's type */
    /* A literal on the left takes the right operand's type. */
    bool lit_first = lhs->kind == BXC_EXPR_INT || lhs->kind == BXC_EXPR_FLOAT;
    bxc_type *lt, *rt;
    if (lit_first && !want) {
        rt = kexpr(c, rhs, NULL);
        lt = kexpr(c, lhs, rt);
    } else {
        lt = kexpr(c, lhs, want);
        rt = kexpr(c, rhs, lt);
    }
    if (!kunify(c, lt, rt)) {
        if (lit_first && !want) kcoerce(c, rt, lt, lhs->span);
        else kcoerce(c, lt, rt, rhs->span);
        return bxc_type_error();
    }
    const char *need = operand_rule(c, op, lt);
    if (need) {
        bxc_diag *d = chk_error(c->cx, CHK_E_BAD_OPERAND, span, "cannot apply `%s` to %s",
                                bxc_binop_str(op), describe(c, lt));
        chk_help(c->cx, d, "`%s` takes %s", bxc_binop_str(op), need);
        return bxc_type_error();
    }
    return lt;
}

/* Math intrinsics, as `f(x, y)` or `x.f(y)`. */
static bxc_type *intrinsic(kc *c, bxc_expr *e, const char *name, int op, uint32_t nargs,
                           bool float_only, bxc_expr **args, uint32_t n, bxc_type *expected) {
    (void)op;
    if (n != nargs) {
        chk_error(c->cx, CHK_E_ARG_COUNT, e->span, "`%s` takes %u argument%s, found %u", name,
                  nargs, nargs == 1 ? "" : "s", n);
        for (uint32_t i = 0; i < n; i++) kexpr(c, args[i], NULL);
        return bxc_type_error();
    }
    bxc_type *t = kexpr(c, args[0], expected);
    for (uint32_t i = 1; i < n; i++) kexpect(c, args[i], t);
    if (ty_err(t)) return bxc_type_error();
    bxc_type *r = bxc_type_resolve(t);
    if (float_only && r->kind == BXC_TYPE_VAR && !r->var.is_float) {
        bxc_diag *d = chk_error(c->cx, CHK_E_MISMATCH, args[0]->span,
                                "`%s` takes a float, found an integer", name);
        chk_help(c->cx, d, "write a float literal (`2.0`)");
        return bxc_type_error();
    }
    if (float_only ? !ty_float(c, t) : !ty_num(c, t)) {
        bxc_diag *d = chk_error(c->cx, CHK_E_BAD_OPERAND, args[0]->span, "`%s` takes %s, found %s",
                                name, float_only ? "a float" : "a number", describe(c, t));
        if (float_only && ty_num(c, t) && !generic_of(c, t))
            chk_help(c->cx, d, "convert with `as f32`");
        return bxc_type_error();
    }
    return t;
}

/* The `#[cube]` fn (kernel or helper) a call names, or NULL. */
static bxc_cube_kernel *cube_fn_named(kc *c, const char *name) {
    chk_symbol *s = chk_lookup(c->cm, name);
    if (!s || s->kind != CHK_SYM_FN || !s->is_cube || !c->cx->cubes) return NULL;
    for (uint32_t i = 0; i < c->cx->cubes->len; i++)
        if (c->cx->cubes->items[i]->item == s->item) return c->cx->cubes->items[i];
    return NULL;
}

static int helper_generic(const bxc_cube_kernel *h, bxc_type *t) {
    t = bxc_type_resolve(t);
    if (!t || t->kind != BXC_TYPE_GENERIC) return -1;
    for (uint32_t g = 0; g < h->ngenerics; g++)
        if (strcmp(h->generics[g].name, t->generic_name) == 0) return (int)g;
    return -1;
}

/* A helper's parameter type p at this call: its type parameters replaced
 * by the types the arguments gave them (NULL: not known yet). */
static bxc_type *subst(const bxc_cube_kernel *h, bxc_type **g, bxc_type *p) {
    int gi = helper_generic(h, p);
    return gi < 0 ? p : g[gi];
}

/* `h(a, b)`: each argument against its parameter, the helper's type
 * parameters taken from the arguments (`F` is the type of the first
 * argument written `F`), then the bounds checked; recorded for the
 * lowering, which inlines h's body here. */
static bxc_type *helper_call(kc *c, bxc_expr *e, bxc_cube_kernel *h, bxc_expr **args, uint32_t n) {
    if (!h->sig_ok) { /* its signature's errors were reported there */
        for (uint32_t i = 0; i < n; i++)
            if (!place_var(c, args[i])) kexpr(c, args[i], NULL);
        c->broken = true;
        return bxc_type_error();
    }
    if (n != h->nparams) {
        chk_error(c->cx, CHK_E_ARG_COUNT, e->span, "helper `%s` takes %u argument%s, found %u", h->name,
                  h->nparams, h->nparams == 1 ? "" : "s", n);
        for (uint32_t i = 0; i < n; i++)
            if (!place_var(c, args[i])) kexpr(c, args[i], NULL);
        return bxc_type_error();
    }
    bxc_type **g = bxc_arena_alloc(c->cx->arena, (h->ngenerics + 1) * sizeof *g);
    bool ok = true;
    for (uint32_t i = 0; i < n; i++) {
        const bxc_cube_var *p = h->vars.items[i];
        bxc_expr *a = args[i];
        if (p->kind == BXC_CUBE_TENSOR) {
            bxc_cube_var *v = place_var(c, a);
            if (!v || v->kind != BXC_CUBE_TENSOR) {
                bxc_type *t = v ? bxc_type_error() : kexpr(c, a, NULL);
                if (!ty_err(t) || v)
                    chk_error(c->cx, CHK_E_CUBE_HELPER, a->span,
                              "helper `%s` takes a tensor for `%s`: pass a tensor parameter", h->name, p->name);
                ok = false;
                continue;
            }
            if (p->is_mut && !v->is_mut) {
                bxc_diag *d = chk_error(c->cx, CHK_E_CUBE_READONLY, a->span,
                                        "helper `%s` writes `%s`, but `%s` is a `&Tensor`", h->name, p->name,
                                        v->name);
                chk_help(c->cx, d, "declare it `&mut Tensor<...>`");
                ok = false;
            }
            bxc_type *want = subst(h, g, p->type);
            if (want) ok &= kcoerce(c, want, v->type, a->span);
            else g[helper_generic(h, p->type)] = v->type;
            continue;
        }
        bxc_type *want = subst(h, g, p->type);
        bxc_type *t = kexpr(c, a, want);
        if (want) ok &= kcoerce(c, want, t, a->span);
        else if (!ty_err(t)) g[helper_generic(h, p->type)] = t;
        else ok = false;
    }
    for (uint32_t gi = 0; ok && gi < h->ngenerics; gi++) {
        const bxc_cube_generic *hg = &h->generics[gi];
        if (!g[gi]) {
            bxc_diag *d = chk_error(c->cx, CHK_E_CUBE_HELPER, e->span,
                                    "cannot tell `%s` of helper `%s` from the arguments", hg->name, h->name);
            chk_help(c->cx, d, "give `%s` a parameter of type `%s`", h->name, hg->name);
            ok = false;
            continue;
        }
        bxc_type *r = bxc_type_resolve(g[gi]);
        bool fits = r->kind == BXC_TYPE_VAR ? (r->var.is_float ? hg->is_float : hg->is_int)
                                            : (hg->is_float && ty_float(c, r)) || (hg->is_int && ty_int(c, r)) ||
                                                  (hg->is_float && hg->is_int && ty_num(c, r));
        if (!fits) {
            chk_error(c->cx, CHK_E_CUBE_HELPER, e->span, "`%s` of helper `%s` is a %s, found %s", hg->name, h->name,
                      hg->is_float && hg->is_int ? "number type" : hg->is_float ? "float type" : "integer type",
                      describe(c, r));
            ok = false;
        }
    }
    if (!ok) return bxc_type_error();
    bxc_cube_call *call = bxc_arena_alloc(c->cx->arena, sizeof *call);
    call->node = e;
    call->helper = h;
    call->gtypes = g;
    BXC_LIST_PUSH(c->cx->arena, &c->k->calls, call);
    bxc_type *r = subst(h, g, h->ret);
    return r ? r : bxc_type_error();
}

const bxc_cube_call *bxc_cube_call_of(const bxc_cube_kernel *k, const void *node) {
    for (uint32_t i = 0; i < k->calls.len; i++)
        if (k->calls.items[i]->node == node) return k->calls.items[i];
    return NULL;
}

static bxc_type *call_expr(kc *c, bxc_expr *e, bxc_type *expected) {
    bxc_expr *callee = e->call.callee;
    bxc_expr_list *args = &e->call.args;
    const char *name = callee->kind == BXC_EXPR_PATH && callee->path->segs.len == 1
                           ? callee->path->segs.items[0].name
                           : NULL;
    if (callee->kind == BXC_EXPR_PATH && callee->path->segs.len == 2 &&
        strcmp(callee->path->segs.items[0].name, "SharedMemory") == 0) {
        bxc_diag *d = chk_error(c->cx, CHK_E_CUBE_OBJECT, e->span,
                                "shared memory is declared by a `let` with its type");
        chk_help(c->cx, d, "declare it: `let s: SharedMemory<F> = SharedMemory::new(256);`");
        return bxc_type_error();
    }
    if (name && strcmp(name, "sync_cube") == 0) {
        if (args->len)
            chk_error(c->cx, CHK_E_ARG_COUNT, e->span, "`sync_cube` takes no arguments, found %u",
                      args->len);
        return bxc_type_unit();
    }
    uint32_t nargs;
    bool float_only;
    int op = name ? bxc_cube_intrinsic(name, &nargs, &float_only) : -1;
    if (op >= 0)
        return intrinsic(c, e, name, op, nargs, float_only, args->items, args->len, expected);
    bxc_cube_kernel *h = name ? cube_fn_named(c, name) : NULL;
    if (h && h->is_helper) return helper_call(c, e, h, args->items, args->len);
    for (uint32_t i = 0; i < args->len; i++)
        if (!h || !place_var(c, args->items[i])) kexpr(c, args->items[i], NULL);
    if (h) {
        bxc_diag *d = chk_error(c->cx, CHK_E_CUBE_HELPER, callee->span,
                                "`%s` is a kernel: kernels are launched, not called", name);
        chk_help(c->cx, d, "move the shared code into a `#[cube(helper)]` fn and call that");
        return bxc_type_error();
    }
    uint32_t n;
    const char **cands = name_cands(c, &n, false);
    bxc_diag *d = chk_error(c->cx, CHK_E_CUBE_BUILTIN, callee->span,
                            "kernels call math intrinsics, `#[cube(helper)]` fns and `sync_cube()` only%s%s%s",
                            name ? ": `" : "", name ? name : "", name ? "` is none" : "");
    const char *near = name ? chk_nearest(name, cands, n) : NULL;
    if (near) chk_help(c->cx, d, "did you mean `%s`?", near);
    return bxc_type_error();
}

static const char *const tensor_methods[] = {"len", "rank", "shape", "stride"};

static bxc_type *method_expr(kc *c, bxc_expr *e, bxc_type *expected) {
    const char *m = e->method_call.method.name;
    bxc_expr_list *args = &e->method_call.args;
    bxc_cube_var *v = place_var(c, e->method_call.receiver);
    if (v && v->kind == BXC_CUBE_TENSOR) {
        uint32_t want = strcmp(m, "shape") == 0 || strcmp(m, "stride") == 0 ? 1 : 0;
        bool known = want || strcmp(m, "len") == 0 || strcmp(m, "rank") == 0;
        if (!known) {
            bxc_diag *d = chk_error(c->cx, CHK_E_CUBE_BUILTIN, e->method_call.method.span,
                                    "tensors have no method `%s`", m);
            const char *near = chk_nearest(m, tensor_methods, 4);
            if (near) chk_help(c->cx, d, "did you mean `%s`?", near);
            else chk_help(c->cx, d, "tensor methods: len(), rank(), shape(d), stride(d)");
            return bxc_type_error();
        }
        if (args->len != want) {
            chk_error(c->cx, CHK_E_ARG_COUNT, e->span, "`%s` takes %u argument%s, found %u", m, want,
                      want ? "" : "s", args->len);
            return bxc_type_error();
        }
        if (want) kexpect(c, args->items[0], u32_t());
        return u32_t();
    }
    if (v) {
        chk_error(c->cx, CHK_E_CUBE_BUILTIN, e->method_call.method.span,
                  "shared arrays have no methods: index them (`%s[i]`)", v->name);
        return bxc_type_error();
    }
    uint32_t nargs;
    bool float_only;
    int op = bxc_cube_intrinsic(m, &nargs, &float_only);
    if (op < 0) {
        kexpr(c, e->method_call.receiver, NULL);
        for (uint32_t i = 0; i < args->len; i++) kexpr(c, args->items[i], NULL);
        uint32_t n;
        const char **cands = name_cands(c, &n, false);
        bxc_diag *d = chk_error(c->cx, CHK_E_CUBE_BUILTIN, e->method_call.method.span,
                                "unknown kernel method `%s`", m);
        const char *near = chk_nearest(m, cands, n);
        if (near) chk_help(c->cx, d, "did you mean `%s`?", near);
        return bxc_type_error();
    }
    bxc_expr **all = bxc_arena_alloc(c->cx->arena, (args->len + 1) * sizeof *all);
    all[0] = e->method_call.receiver;
    for (uint32_t i = 0; i < args->len; i++) all[i + 1] = args->items[i];
    return intrinsic(c, e, m, op, nargs, float_only, all, args->len + 1, expected);
}

static bxc_type *index_expr(kc *c, bxc_expr *e) {
    bxc_cube_var *v = place_var(c, e->index.object);
    if (!v) {
        bxc_type *t = kexpr(c, e->index.object, NULL);
        kexpr(c, e->index.index, u32_t());
        if (!ty_err(t))
            chk_error(c->cx, CHK_E_BAD_OPERAND, e->index.object->span,
                      "cannot index into %s: kernels index tensors and shared arrays",
                      describe(c, t));
        return bxc_type_error();
    }
    kexpect(c, e->index.index, u32_t());
    return v->type;
}

/* `x = v`, `x += v`, `t[i] = v`, `s[i] op= v`. */
static bxc_type *assign_expr(kc *c, bxc_expr *e) {
    bxc_expr *target = e->assign.target;
    bxc_type *tt;
    if (target->kind == BXC_EXPR_INDEX) {
        bxc_cube_var *v = place_var(c, target->index.object);
        tt = index_expr(c, target);
        target->ty = tt;
        if (v && v->kind == BXC_CUBE_TENSOR && !v->is_mut) {
            bxc_diag *d = chk_error(c->cx, CHK_E_CUBE_READONLY, target->span,
                                    "cannot store into `%s`, a `&Tensor`", v->name);
            chk_help(c->cx, d, "declare it `&mut Tensor<...>` to write it");
        }
    } else if (target->kind == BXC_EXPR_PATH && target->path->segs.len == 1) {
        tt = path_expr(c, target);
        bxc_cube_var *v = bxc_cube_use_of(c->k, target);
        if (v && v->kind != BXC_CUBE_MUT && v->kind != BXC_CUBE_TENSOR &&
            v->kind != BXC_CUBE_SHARED) {
            bxc_diag *d = chk_error(c->cx, CHK_E_NOT_MUTABLE, target->span,
                                    "cannot assign to `%s`, which is not declared `mut`", v->name);
            if (v->kind == BXC_CUBE_LET) chk_help(c->cx, d, "declare it `let mut %s`", v->name);
        }
    } else {
        kexpr(c, target, NULL);
        chk_error(c->cx, CHK_E_BAD_EXPR, target->span,
                  "kernels assign to `let mut` variables and tensor or shared elements only");
        kexpr(c, e->assign.value, NULL);
        return bxc_type_unit();
    }
    bxc_type *vt = kexpect(c, e->assign.value, tt);
    if (e->assign.op != BXC_BIN_NONE) {
        const char *need = operand_rule(c, e->assign.op, tt);
        if (need || e->assign.op == BXC_BIN_AND || e->assign.op == BXC_BIN_OR || is_cmp(e->assign.op))
            chk_error(c->cx, CHK_E_BAD_OPERAND, e->span, "cannot apply `%s=` to %s",
                      bxc_binop_str(e->assign.op), describe(c, tt));
    }
    (void)vt;
    return bxc_type_unit();
}

static bxc_type *if_expr(kc *c, bxc_expr *e, bxc_type *expected) {
    kexpect(c, e->if_.cond, bxc_type_bool());
    if (!e->if_.else_) {
        kblock(c, e->if_.then_block, bxc_type_unit());
        return bxc_type_unit();
    }
    bxc_type *t = kblock(c, e->if_.then_block, expected);
    bxc_type *et = kexpr(c, e->if_.else_, ty_err(t) ? expected : t);
    if (bxc_type_resolve(t)->kind == BXC_TYPE_NEVER) return et;
    if (!kunify(c, t, et)) {
        kcoerce(c, t, et, e->if_.else_->span);
        return bxc_type_error();
    }
    return t;
}

/* A constant expression (shared sizes, `step_by`): literals, comptime
 * parameters and arithmetic on them. */
static bool is_const_expr(kc *c, const bxc_expr *e) {
    switch (e->kind) {
    case BXC_EXPR_INT: return true;
    case BXC_EXPR_PATH: {
        bxc_cube_var *v = bxc_cube_use_of(c->k, e);
        return v && v->kind == BXC_CUBE_COMPTIME;
    }
    case BXC_EXPR_BINARY:
        return is_arith(e->binary.op) && is_const_expr(c, e->binary.lhs) &&
               is_const_expr(c, e->binary.rhs);
    default: return false;
    }
}

static void require_const(kc *c, bxc_expr *e, const char *what) {
    if (is_const_expr(c, e)) return;
    bxc_diag *d = chk_error(c->cx, CHK_E_CUBE_CONST, e->span,
                            "%s must be a compile-time constant", what);
    chk_help(c->cx, d, "use literals and `#[comptime]` parameters");
}

static bxc_type *for_expr(kc *c, bxc_expr *e) {
    bxc_expr *iter = e->for_.iter;
    bxc_expr *step = NULL;
    if (iter->kind == BXC_EXPR_METHOD_CALL && iter->method_call.receiver->kind == BXC_EXPR_RANGE &&
        strcmp(iter->method_call.method.name, "step_by") == 0) {
        if (iter->method_call.args.len != 1) {
            chk_error(c->cx, CHK_E_ARG_COUNT, iter->span, "`step_by` takes 1 argument, found %u",
                      iter->method_call.args.len);
        } else {
            step = iter->method_call.args.items[0];
        }
        iter = iter->method_call.receiver;
    }
    bxc_type *t = bxc_type_error();
    if (iter->kind != BXC_EXPR_RANGE || !iter->range.start || !iter->range.end) {
        kexpr(c, iter, NULL);
        bxc_diag *d = chk_error(c->cx, CHK_E_BAD_EXPR, iter->span,
                                "kernels loop over ranges `a..b` only");
        chk_help(c->cx, d, "write `for i in 0..n` (optionally `(0..n).step_by(2)`)");
    } else {
        bxc_type *lo = kexpr(c, iter->range.start, NULL);
        kexpect(c, iter->range.end, lo);
        t = lo;
        if (!ty_err(lo) && !ty_int(c, lo)) {
            chk_error(c->cx, CHK_E_BAD_OPERAND, iter->span, "range bounds must be integers, found %s",
                      describe(c, lo));
            t = bxc_type_error();
        }
        iter->ty = bxc_type_range(c->cx->arena, t);
    }
    if (step) {
        kexpect(c, step, t);
        require_const(c, step, "the step of `step_by`");
        if (step->kind == BXC_EXPR_INT && step->int_lit.value == 0)
            chk_error(c->cx, CHK_E_CUBE_CONST, step->span, "the step of `step_by` must be > 0");
        e->for_.iter->ty = iter->ty;
    }
    push_scope(c);
    bxc_pat *p = e->for_.pat;
    if (p->kind == BXC_PAT_IDENT) {
        if (p->is_mut) {
            bxc_diag *d = chk_error(c->cx, CHK_E_BAD_EXPR, p->span, "loop variables are not mutable");
            chk_help(c->cx, d, "copy it: `let mut j = %s;`", p->name.name);
        }
        put_use(c->cx, c->k, p, new_var(c, BXC_CUBE_INDEX, p->name.name, t, p->name.span));
        p->ty = t;
    } else if (p->kind != BXC_PAT_WILD && p->kind != BXC_PAT_ERROR) {
        chk_error(c->cx, CHK_E_BAD_EXPR, p->span, "a kernel loop binds one name");
    }
    c->loop_depth++;
    kblock(c, e->for_.body, bxc_type_unit());
    c->loop_depth--;
    pop_scope(c);
    return bxc_type_unit();
}

static bxc_type *kexpr(kc *c, bxc_expr *e, bxc_type *expected) {
    switch (e->kind) {
    case BXC_EXPR_INT: {
        bxc_type *v = lit_var(c, false);
        if (expected && !ty_err(expected)) kunify(c, v, expected);
        return record(e, v);
    }
    case BXC_EXPR_FLOAT: {
        bxc_type *v = lit_var(c, true);
        if (expected && !ty_err(expected)) kunify(c, v, expected);
        return record(e, v);
    }
    case BXC_EXPR_BOOL: return record(e, bxc_type_bool());
    case BXC_EXPR_PATH: return path_expr(c, e);
    case BXC_EXPR_UNARY: {
        bxc_unop op = e->unary.op;
        if (op != BXC_UN_NEG && op != BXC_UN_NOT) {
            kexpr(c, e->unary.operand, NULL);
            chk_error(c->cx, CHK_E_BAD_EXPR, e->span, "kernels have no references: `%s` is not allowed",
                      bxc_unop_str(op));
            return record(e, bxc_type_error());
        }
        bxc_type *t = kexpr(c, e->unary.operand, expected);
        if (ty_err(t)) return record(e, t);
        bool ok = op == BXC_UN_NEG ? ty_num(c, t) && ty_signed(c, t) : ty_int(c, t) || ty_bool(t);
        if (!ok) {
            chk_error(c->cx, CHK_E_BAD_OPERAND, e->span, "cannot apply `%s` to %s", bxc_unop_str(op),
                      describe(c, t));
            return record(e, bxc_type_error());
        }
        return record(e, t);
    }
    case BXC_EXPR_BINARY: {
        bxc_type *t = binary_operands(c, e->binary.op, e->binary.lhs, e->binary.rhs, expected, e->span);
        return record(e, is_cmp(e->binary.op) ? bxc_type_bool() : t);
    }
    case BXC_EXPR_ASSIGN: return record(e, assign_expr(c, e));
    case BXC_EXPR_CAST: {
        bxc_type *from = kexpr(c, e->cast.expr, NULL);
        bxc_type *to = scalar_ty(c, e->cast.type);
        if (!ty_err(from) && !ty_num(c, from) && !ty_bool(from))
            chk_error(c->cx, CHK_E_BAD_OPERAND, e->cast.expr->span, "cannot cast %s", describe(c, from));
        return record(e, to);
    }
    case BXC_EXPR_CALL: return record(e, call_expr(c, e, expected));
    case BXC_EXPR_METHOD_CALL: return record(e, method_expr(c, e, expected));
    case BXC_EXPR_INDEX: return record(e, index_expr(c, e));
    case BXC_EXPR_BLOCK: return record(e, kblock(c, e->block, expected));
    case BXC_EXPR_IF: return record(e, if_expr(c, e, expected));
    case BXC_EXPR_WHILE:
        kexpect(c, e->while_.cond, bxc_type_bool());
        c->loop_depth++;
        kblock(c, e->while_.body, bxc_type_unit());
        c->loop_depth--;
        return record(e, bxc_type_unit());
    case BXC_EXPR_FOR: return record(e, for_expr(c, e));
    case BXC_EXPR_LOOP:
        c->loop_depth++;
        kblock(c, e->loop_.body, bxc_type_unit());
        c->loop_depth--;
        return record(e, bxc_type_unit());
    case BXC_EXPR_BREAK:
    case BXC_EXPR_CONTINUE:
        if (!c->loop_depth)
            chk_error(c->cx, CHK_E_BAD_EXPR, e->span, "`%s` outside a loop",
                      e->kind == BXC_EXPR_BREAK ? "break" : "continue");
        return record(e, bxc_type_never());
    case BXC_EXPR_RETURN:
        if (c->k->is_helper) {
            bxc_diag *d = chk_error(c->cx, CHK_E_CUBE_HELPER, e->span,
                                    "`return` in helper `%s`: a helper's value is its body's last expression",
                                    c->k->name);
            chk_help(c->cx, d, "write the value as the body's last expression, using `if`/`else` for choices");
            if (e->ret.value) kexpr(c, e->ret.value, NULL);
            return record(e, bxc_type_never());
        }
        if (e->ret.value) {
            kexpr(c, e->ret.value, NULL);
            bxc_diag *d = chk_error(c->cx, CHK_E_CUBE_SIG, e->ret.value->span,
                                    "kernels return nothing: they write their `&mut` tensors");
            chk_help(c->cx, d, "store the value into an output tensor");
        }
        return record(e, bxc_type_never());
    case BXC_EXPR_ERROR:
        c->broken = true;
        return record(e, bxc_type_error());
    default:
        chk_error(c->cx, CHK_E_BAD_EXPR, e->span, "%s is not part of the kernel language (§8)",
                  bxc_expr_kind_name(e->kind));
        return record(e, bxc_type_error());
    }
}

/* `let s: SharedMemory<T> = SharedMemory::new(N);` */
static void shared_let(kc *c, bxc_stmt *s, bxc_type *elem) {
    bxc_expr *init = s->init;
    bxc_expr *count = NULL;
    if (init && init->kind == BXC_EXPR_CALL && init->call.callee->kind == BXC_EXPR_PATH &&
        init->call.callee->path->segs.len == 2 &&
        strcmp(init->call.callee->path->segs.items[0].name, "SharedMemory") == 0 &&
        strcmp(init->call.callee->path->segs.items[1].name, "new") == 0 && init->call.args.len == 1)
        count = init->call.args.items[0];
    if (!count) {
        bxc_diag *d = chk_error(c->cx, CHK_E_CUBE_OBJECT, init ? init->span : s->span,
                                "shared memory is created with `SharedMemory::new(count)`");
        chk_help(c->cx, d, "declare it: `let s: SharedMemory<F> = SharedMemory::new(256);`");
        if (init) kexpr(c, init, NULL);
    } else {
        init->ty = bxc_type_unit();
        kexpect(c, count, u32_t());
        require_const(c, count, "the size of shared memory");
        if (count->kind == BXC_EXPR_INT && count->int_lit.value == 0)
            chk_error(c->cx, CHK_E_CUBE_CONST, count->span, "shared memory needs at least one element");
    }
    if (s->pat->kind != BXC_PAT_IDENT) {
        chk_error(c->cx, CHK_E_BAD_EXPR, s->pat->span, "shared memory is bound to one name");
        return;
    }
    bxc_cube_var *v = new_var(c, BXC_CUBE_SHARED, s->pat->name.name, elem, s->pat->name.span);
    v->count = count;
    put_use(c->cx, c->k, s->pat, v);
    s->pat->ty = elem;
}

static void kstmt(kc *c, bxc_stmt *s) {
    switch (s->kind) {
    case BXC_STMT_LET: {
        bxc_type *elem = container_elem(c, s->type, "SharedMemory");
        if (elem) {
            shared_let(c, s, elem);
            return;
        }
        if (container_elem(c, s->type, "Tensor")) {
            chk_error(c->cx, CHK_E_CUBE_OBJECT, s->type->span,
                      "tensors are kernel parameters; a `let` cannot make one");
            return;
        }
        bxc_type *want = s->type ? scalar_ty(c, s->type) : NULL;
        bxc_type *t;
        if (!s->init) {
            bxc_diag *d = chk_error(c->cx, CHK_E_BAD_EXPR, s->span,
                                    "kernel variables need an initial value");
            chk_help(c->cx, d, "write `let mut x = 0;`");
            t = want ? want : bxc_type_error();
        } else {
            t = kexpect(c, s->init, want);
            if (want) t = want;
            bxc_type *r = bxc_type_resolve(t);
            if (r->kind == BXC_TYPE_UNIT) {
                chk_error(c->cx, CHK_E_BAD_EXPR, s->init->span, "this expression has no value to bind");
                t = bxc_type_error();
            } else if (r->kind == BXC_TYPE_NEVER) {
                t = bxc_type_error();
            }
        }
        bxc_pat *p = s->pat;
        if (p->kind == BXC_PAT_IDENT) {
            put_use(c->cx, c->k, p,
                    new_var(c, p->is_mut ? BXC_CUBE_MUT : BXC_CUBE_LET, p->name.name, t, p->name.span));
            p->ty = t;
        } else if (p->kind == BXC_PAT_WILD) {
            p->ty = t;
        } else if (p->kind != BXC_PAT_ERROR) {
            chk_error(c->cx, CHK_E_BAD_EXPR, p->span, "a kernel `let` binds one name");
        }
        return;
    }
    case BXC_STMT_EXPR: kexpr(c, s->expr, NULL); return;
    case BXC_STMT_ITEM:
        chk_error(c->cx, CHK_E_BAD_EXPR, s->span, "items cannot be declared inside a kernel");
        return;
    case BXC_STMT_ERROR:
        c->broken = true;
        c->cx->quiet++;
        return;
    case BXC_STMT_EMPTY: return;
    }
}

static bxc_type *kblock(kc *c, bxc_block *b, bxc_type *expected) {
    uint32_t quiet = c->cx->quiet;
    push_scope(c);
    bool diverges = false;
    for (uint32_t i = 0; i < b->stmts.len; i++) {
        bxc_stmt *s = b->stmts.items[i];
        kstmt(c, s);
        if (s->kind == BXC_STMT_EXPR && s->expr->ty &&
            bxc_type_resolve(s->expr->ty)->kind == BXC_TYPE_NEVER)
            diverges = true;
    }
    bxc_type *t = bxc_type_unit();
    if (b->tail) {
        t = kexpr(c, b->tail, expected);
    } else if (diverges) {
        t = bxc_type_never();
    }
    pop_scope(c);
    c->cx->quiet = quiet;
    return t;
}

/* ---- signatures ------------------------------------------------------------------- */

static bool generics(kc *c) {
    bxc_fn *fn = c->k->fn;
    bool ok = true;
    c->k->ngenerics = fn->generics.len;
    c->k->generics = bxc_arena_alloc(c->cx->arena, (fn->generics.len + 1) * sizeof *c->k->generics);
    for (uint32_t i = 0; i < fn->generics.len; i++) {
        bxc_generic *g = fn->generics.items[i];
        bxc_cube_generic *kg = &c->k->generics[i];
        kg->name = g->name.name;
        const bound_row *row = NULL;
        if (g->bounds.len == 1 && g->bounds.items[0]->kind == BXC_TY_PATH &&
            g->bounds.items[0]->path->segs.len == 1)
            for (size_t b = 0; b < NBOUNDS; b++)
                if (strcmp(bounds[b].name, g->bounds.items[0]->path->segs.items[0].name) == 0)
                    row = &bounds[b];
        if (!row) {
            bxc_diag *d = chk_error(c->cx, CHK_E_CUBE_SIG, g->span,
                                    "kernel type parameter `%s` needs one bound: Float, Int or Numeric",
                                    g->name.name);
            chk_help(c->cx, d, "write `%s: Float`", g->name.name);
            ok = false;
            /* still usable, as Float, so the body is checked */
            row = &bounds[0];
        }
        kg->dtypes = row->dtypes;
        kg->ndtypes = row->n;
        kg->is_float = row->is_float;
        kg->is_int = row->is_int;
    }
    return ok;
}

/* `#[cube(name = 4)]`, `#[cube(name = [16, 32])]`, `#[cube(flag = true)]`. */
static bool attr_value(const bxc_expr *e, int64_t *out) {
    if (e->kind == BXC_EXPR_INT && e->int_lit.value <= INT64_MAX) {
        *out = (int64_t)e->int_lit.value;
        return true;
    }
    if (e->kind == BXC_EXPR_BOOL) {
        *out = e->bool_lit;
        return true;
    }
    if (e->kind == BXC_EXPR_UNARY && e->unary.op == BXC_UN_NEG && e->unary.operand->kind == BXC_EXPR_INT &&
        e->unary.operand->int_lit.value <= INT64_MAX) {
        *out = -(int64_t)e->unary.operand->int_lit.value;
        return true;
    }
    return false;
}

static bool value_fits(bxc_type *t, int64_t v) {
    t = bxc_type_resolve(t);
    if (t->kind == BXC_TYPE_BOOL) return v == 0 || v == 1;
    if (t->kind != BXC_TYPE_INT) return false;
    const bxc_int_info *ii = &bxc_int_kinds[t->int_kind];
    return ii->is_signed ? v >= ii->min && (uint64_t)v <= ii->max : v >= 0 && (uint64_t)v <= ii->max;
}

/* `#[cube(T = [u8, i32])]`: the dtypes a type parameter is instantiated
 * at, in this order, instead of its bound's defaults.  Each is a kernel
 * type the bound allows (Float: f32 f64 f16 bf16; Int: u8 i32 u32 i64;
 * Numeric: both), named by the IR's type table. */
static bool generic_dtypes(kc *c, bxc_cube_generic *g, const bxc_expr *v) {
    const bxc_expr *const *elems = (const bxc_expr *const *)&v;
    uint32_t n = 1;
    if (v->kind == BXC_EXPR_ARRAY) {
        elems = (const bxc_expr *const *)v->array.elems.items;
        n = v->array.elems.len;
    }
    if (n == 0) {
        chk_error(c->cx, CHK_E_CUBE_COMPTIME, v->span, "no dtypes for `%s`", g->name);
        return false;
    }
    uint8_t *dts = bxc_arena_alloc(c->cx->arena, n);
    uint32_t nd = 0;
    bool ok = true;
    for (uint32_t j = 0; j < n; j++) {
        const bxc_expr *e = elems[j];
        unsigned t = BXK_TYPE_COUNT;
        if (e->kind == BXC_EXPR_PATH && e->path->segs.len == 1)
            for (unsigned k = 0; k < BXK_TYPE_COUNT; k++)
                if (strcmp(bxk_type_name(k), e->path->segs.items[0].name) == 0) t = k;
        bool fits = t < BXK_TYPE_COUNT &&
                    ((g->is_float && bxk_type_is_float(t)) || (g->is_int && bxk_type_is_int(t)));
        if (!fits) {
            bool named = e->kind == BXC_EXPR_PATH && e->path->segs.len == 1;
            bxc_diag *d = chk_error(c->cx, CHK_E_CUBE_COMPTIME, e->span,
                                    "`%s` cannot be instantiated at `%s`: expected %s", g->name,
                                    named ? e->path->segs.items[0].name : "this expression",
                                    g->is_float && g->is_int ? "a number type (f32 f64 f16 bf16 u8 i32 u32 i64)"
                                    : g->is_float           ? "a float type (f32 f64 f16 bf16)"
                                                            : "an integer type (u8 i32 u32 i64)");
            chk_help(c->cx, d, "its bound decides which kernel types it takes");
            ok = false;
            continue;
        }
        bool dup = false;
        for (uint32_t m = 0; m < nd; m++) dup |= dts[m] == t;
        if (dup) {
            chk_error(c->cx, CHK_E_CUBE_COMPTIME, e->span, "dtype `%s` of `%s` given twice",
                      bxk_type_name(t), g->name);
            ok = false;
            continue;
        }
        dts[nd++] = (uint8_t)t;
    }
    if (ok) {
        g->dtypes = dts;
        g->ndtypes = nd;
    }
    return ok;
}

static bool marked_comptime(const bxc_fn *fn, const char *name) {
    for (uint32_t i = 0; i < fn->params.len; i++) {
        const bxc_param *p = fn->params.items[i];
        if (p->pat && p->pat->kind == BXC_PAT_IDENT && strcmp(p->pat->name.name, name) == 0)
            return chk_find_attr(&p->attrs, "comptime") != NULL;
    }
    return false;
}

static bool comptime_values(kc *c, const bxc_attr *cube) {
    bool ok = true;
    bxc_cube_kernel *k = c->k;
    bool *given = bxc_arena_alloc(c->cx->arena, (k->ncomptimes + 1) * sizeof *given);
    bool *given_g = bxc_arena_alloc(c->cx->arena, (k->ngenerics + 1) * sizeof *given_g);
    for (uint32_t i = 0; cube && cube->has_args && i < cube->args.len; i++) {
        bxc_attr_arg *a = cube->args.items[i];
        if (a->kind == BXC_ATTR_ARG_PATH && a->path->segs.len == 1 &&
            strcmp(a->path->segs.items[0].name, "helper") == 0)
            continue;   /* the helper flag (is_helper_attr) */
        if (a->kind != BXC_ATTR_ARG_ASSIGN || a->path->segs.len != 1) {
            bxc_diag *d = chk_error(c->cx, CHK_E_CUBE_COMPTIME, a->span,
                                    "`#[cube(...)]` takes the values of `#[comptime]` parameters "
                                    "and the dtypes of type parameters");
            chk_help(c->cx, d, "write `#[cube(n = 256)]`, `#[cube(n = [64, 256])]`, `#[cube(T = [i32, u8])]` or `#[cube(helper)]`");
            ok = false;
            continue;
        }
        const char *name = a->path->segs.items[0].name;
        uint32_t gi = 0;
        while (gi < k->ngenerics && strcmp(k->generics[gi].name, name) != 0) gi++;
        if (gi < k->ngenerics && k->is_helper) {
            chk_error(c->cx, CHK_E_CUBE_HELPER, a->span,
                      "helper `%s` takes `%s` from its arguments: it has no dtype list", k->name, name);
            ok = false;
            continue;
        }
        if (gi < k->ngenerics) {
            if (given_g[gi]) {
                chk_error(c->cx, CHK_E_CUBE_COMPTIME, a->span, "dtypes of `%s` given twice", name);
                ok = false;
                continue;
            }
            given_g[gi] = true;
            ok &= generic_dtypes(c, &k->generics[gi], a->value);
            continue;
        }
        uint32_t ci = 0;
        while (ci < k->ncomptimes && strcmp(k->comptimes[ci].var->name, name) != 0) ci++;
        if (ci == k->ncomptimes) {
            if (marked_comptime(k->fn, name)) continue;   /* its own error was reported */
            chk_error(c->cx, CHK_E_CUBE_COMPTIME, a->path->span,
                      "`%s` is not a `#[comptime]` parameter of kernel `%s`", name, k->name);
            ok = false;
            continue;
        }
        if (given[ci]) {
            chk_error(c->cx, CHK_E_CUBE_COMPTIME, a->span, "values of `%s` given twice", name);
            ok = false;
            continue;
        }
        given[ci] = true;
        const bxc_expr *v = a->value;
        const bxc_expr *const *elems = (const bxc_expr *const *)&a->value;
        uint32_t n = 1;
        if (v->kind == BXC_EXPR_ARRAY) {
            elems = (const bxc_expr *const *)v->array.elems.items;
            n = v->array.elems.len;
        }
        bxc_cube_comptime *ct = &k->comptimes[ci];
        ct->values = bxc_arena_alloc(c->cx->arena, (n + 1) * sizeof *ct->values);
        for (uint32_t j = 0; j < n; j++) {
            int64_t x;
            if (!attr_value(elems[j], &x) || !value_fits(ct->var->type, x)) {
                chk_error(c->cx, CHK_E_CUBE_COMPTIME, elems[j]->span,
                          "expected a `%s` literal for `%s`", chk_tn(c->cx, ct->var->type), name);
                ok = false;
                continue;
            }
            ct->values[ct->nvalues++] = x;
        }
        if (n == 0) {
            chk_error(c->cx, CHK_E_CUBE_COMPTIME, a->value->span, "no values for `%s`", name);
            ok = false;
        }
    }
    for (uint32_t ci = 0; ci < k->ncomptimes; ci++)
        if (!given[ci]) {
            bxc_diag *d = chk_error(c->cx, CHK_E_CUBE_COMPTIME, k->comptimes[ci].var->span,
                                    "`#[comptime]` parameter `%s` has no values",
                                    k->comptimes[ci].var->name);
            chk_help(c->cx, d, "give them on the kernel: `#[cube(%s = 256)]`",
                     k->comptimes[ci].var->name);
            ok = false;
        }
    return ok;
}

static bool params(kc *c) {
    bxc_fn *fn = c->k->fn;
    bool ok = true;
    c->k->comptimes = bxc_arena_alloc(c->cx->arena, (fn->params.len + 1) * sizeof *c->k->comptimes);
    for (uint32_t i = 0; i < fn->params.len; i++) {
        bxc_param *p = fn->params.items[i];
        chk_attrs_placement(c->cx, &p->attrs, BXC_SITE_PARAM);
        if (p->is_self) {
            chk_error(c->cx, CHK_E_RECEIVER, p->span, "kernel `%s` cannot take `self`", c->k->name);
            ok = false;
            continue;
        }
        if (!p->pat || p->pat->kind != BXC_PAT_IDENT || !p->type) {
            chk_error(c->cx, CHK_E_CUBE_SIG, p->span, "a kernel parameter is `name: Type`");
            ok = false;
            continue;
        }
        const char *name = p->pat->name.name;
        bxc_span span = p->pat->name.span;
        bool comptime = chk_find_attr(&p->attrs, "comptime") != NULL;
        bxc_tyexpr *te = p->type;
        bxc_type *elem = te->kind == BXC_TY_REF ? container_elem(c, te->inner, "Tensor") : NULL;
        if (!elem && container_elem(c, te, "Tensor")) {
            bxc_diag *d = chk_error(c->cx, CHK_E_CUBE_SIG, te->span,
                                    "kernels take tensors by reference");
            chk_help(c->cx, d, "write `&Tensor<...>` to read it, `&mut Tensor<...>` to write it");
            ok = false;
            continue;
        }
        if (elem) {
            if (comptime) {
                chk_error(c->cx, CHK_E_CUBE_COMPTIME, span, "a tensor cannot be `#[comptime]`");
                ok = false;
            }
            bxc_cube_var *v = new_var(c, BXC_CUBE_TENSOR, name, elem, span);
            v->is_mut = te->is_mut;
            v->slot = c->k->nbindings++;
            p->pat->ty = elem;
            continue;
        }
        if (te->kind == BXC_TY_REF) {
            bxc_diag *d = chk_error(c->cx, CHK_E_CUBE_SIG, te->span,
                                    "kernel parameters are tensors (`&Tensor<F>`) or scalars by value");
            chk_help(c->cx, d, "take it by value: `%s: %s`", name,
                     te->inner ? chk_tn(c->cx, chk_resolve_tyexpr(c->cx, c->cm, te->inner,
                                                                  &fn->generics))
                               : "T");
            ok = false;
            continue;
        }
        bxc_type *t = scalar_ty(c, te);
        if (ty_err(t)) {
            ok = false;
            continue;
        }
        p->pat->ty = t;
        if (comptime && c->k->is_helper) {
            bxc_diag *d = chk_error(c->cx, CHK_E_CUBE_HELPER, span,
                                    "helper `%s` takes no `#[comptime]` parameters", c->k->name);
            chk_help(c->cx, d, "pass it as an ordinary parameter: the constant folder still sees a constant");
            ok = false;
            comptime = false;   /* checked on as a scalar, so its uses report nothing more */
        }
        if (comptime) {
            if (generic_of(c, t) || (!ty_bool(t) && !ty_int(c, t))) {
                chk_error(c->cx, CHK_E_CUBE_COMPTIME, te->span,
                          "`#[comptime]` parameters are integers or bools, found `%s`",
                          chk_tn(c->cx, t));
                ok = false;
                continue;
            }
            bxc_cube_var *v = new_var(c, BXC_CUBE_COMPTIME, name, t, span);
            v->slot = c->k->ncomptimes;
            c->k->comptimes[c->k->ncomptimes++].var = v;
            continue;
        }
        bxc_cube_var *v = new_var(c, BXC_CUBE_SCALAR, name, t, span);
        v->slot = c->k->nscalars++;
    }
    c->k->nparams = c->k->vars.len;
    c->k->ret = bxc_type_unit();
    if (fn->ret && c->k->is_helper) {
        bool unit = fn->ret->kind == BXC_TY_TUPLE && fn->ret->elems.len == 0;
        c->k->ret = unit ? bxc_type_unit() : scalar_ty(c, fn->ret);
        if (ty_err(c->k->ret)) ok = false;
    } else if (fn->ret) {
        bxc_type *r = chk_resolve_tyexpr(c->cx, c->cm, fn->ret, &fn->generics);
        if (bxc_type_resolve(r)->kind != BXC_TYPE_UNIT) {
            bxc_diag *d = chk_error(c->cx, CHK_E_CUBE_SIG, fn->ret->span,
                                    "kernels return nothing: they write their `&mut` tensors");
            chk_help(c->cx, d, "drop the return type and store results into a `&mut Tensor`, or "
                               "make it a `#[cube(helper)]` fn that kernels call");
            ok = false;
        }
    }
    return ok;
}

/* Unconstrained literals: integers are i32 (Rust's default); floats are
 * the kernel's first float type parameter, else f32. */
static void default_literals(kc *c) {
    bxc_type *fdef = bxc_type_float(BXC_F32);
    for (uint32_t g = 0; g < c->k->ngenerics; g++)
        if (c->k->generics[g].is_float && !c->k->generics[g].is_int) {
            fdef = bxc_type_generic(c->cx->arena, c->k->generics[g].name);
            break;
        }
    for (uint32_t i = 0; i < c->lits.len; i++) {
        bxc_type *r = bxc_type_resolve(c->lits.items[i]);
        if (r->kind == BXC_TYPE_VAR) r->var.link = r->var.is_float ? fdef : bxc_type_int(BXC_I32);
    }
}

static const bxc_attr *cube_attr(const bxc_item *it) {
    const bxc_attr *a = chk_find_attr(&it->attrs, "cube");
    return a ? a : chk_find_attr(&it->fn->attrs, "cube");
}

/* `#[cube(helper)]`. */
static bool is_helper_attr(const bxc_attr *cube) {
    for (uint32_t i = 0; cube && cube->has_args && i < cube->args.len; i++) {
        const bxc_attr_arg *a = cube->args.items[i];
        if (a->kind == BXC_ATTR_ARG_PATH && a->path->segs.len == 1 &&
            strcmp(a->path->segs.items[0].name, "helper") == 0)
            return true;
    }
    return false;
}

/* The signature of a `#[cube]` fn: its record, before any body, so that
 * bodies can call helpers declared anywhere. */
static void check_signature(chk_ctx *cx, chk_module *cm, bxc_item *it) {
    bxc_cube_kernel *k = bxc_arena_alloc(cx->arena, sizeof *k);
    k->item = it;
    k->fn = it->fn;
    k->name = it->fn->name.name;
    k->in_root = cm->mod->is_root;
    k->prefix = k->in_root ? "" : bxc_emit_module_name(cx->arena, cx->unit, cm->mod, "");
    k->cm = cm;
    k->is_helper = is_helper_attr(cube_attr(it));
    kc c = {.cx = cx, .cm = cm, .k = k};
    c.scope = bxc_scope_new(cx->arena, NULL);
    uint32_t before = cx->diags->errors;
    cx->in_kernel++;
    bool sig_ok = generics(&c);
    sig_ok &= params(&c);
    sig_ok &= comptime_values(&c, cube_attr(it));
    if (!it->fn->body) {
        chk_error(cx, CHK_E_CUBE_SIG, it->fn->name.span, "%s `%s` has no body", k->is_helper ? "helper" : "kernel",
                  k->name);
        sig_ok = false;
    }
    cx->in_kernel--;
    k->scope = c.scope;
    k->sig_ok = sig_ok && cx->diags->errors == before;
    if (!cx->cubes) cx->cubes = bxc_arena_alloc(cx->arena, sizeof *cx->cubes);
    BXC_LIST_PUSH(cx->arena, cx->cubes, k);
}

static void check_body(chk_ctx *cx, bxc_cube_kernel *k) {
    kc c = {.cx = cx, .cm = k->cm, .k = k, .scope = k->scope};
    uint32_t before = cx->diags->errors;
    cx->in_kernel++;
    if (k->fn->body) {
        uint32_t quiet = cx->quiet;
        bxc_block *body = k->fn->body;
        bxc_type *t = kblock(&c, body, k->ret);
        if (k->is_helper && bxc_type_resolve(k->ret)->kind != BXC_TYPE_UNIT && !ty_err(t) &&
            bxc_type_resolve(t)->kind != BXC_TYPE_NEVER)
            kcoerce(&c, k->ret, t, body->tail ? body->tail->span : k->fn->name.span);
        cx->quiet = quiet;
        default_literals(&c);
        chk_zonk_block(cx, body);
    }
    cx->in_kernel--;
    k->ok = k->sig_ok && !c.broken && cx->diags->errors == before;
}

/* Depth-first over helper calls: a call back into a helper on the stack
 * closes a cycle, reported at that call. */
static void find_cycles(chk_ctx *cx, bxc_cube_kernel *h, bxc_cube_kernel **stack, uint32_t depth, uint8_t *state,
                        const bxc_cube_set *set) {
    uint32_t self = 0;
    while (set->items[self] != h) self++;
    state[self] = 1;
    stack[depth] = h;
    for (uint32_t i = 0; i < h->calls.len; i++) {
        bxc_cube_kernel *g = h->calls.items[i]->helper;
        uint32_t gi = 0;
        while (set->items[gi] != g) gi++;
        if (state[gi] == 1) {
            bxc_diag *d = g == h ? chk_error(cx, CHK_E_CUBE_HELPER, h->calls.items[i]->node->span,
                                             "helper `%s` calls itself", g->name)
                                 : chk_error(cx, CHK_E_CUBE_HELPER, h->calls.items[i]->node->span,
                                             "helper `%s` calls itself through `%s`", g->name, h->name);
            chk_help(cx, d, "helpers are inlined where they are called, so none may be recursive: write a loop");
            for (uint32_t s = depth + 1; s-- > 0;) {
                stack[s]->ok = false;
                if (stack[s] == g) break;
            }
        } else if (state[gi] == 0) {
            find_cycles(cx, g, stack, depth + 1, state, set);
        }
    }
    state[self] = 2;
}

void chk_cube_helpers(chk_ctx *cx, chk_module **cms, uint32_t n) {
    for (uint32_t m = 0; m < n; m++) {
        bxc_item_list *items = &cms[m]->mod->ast->items;
        for (uint32_t i = 0; i < items->len; i++) {
            bxc_item *it = items->items[i];
            if (it->kind != BXC_ITEM_FN || !it->fn || !cube_attr(it)) continue;
            if (!chk_cfg_active(cx, &it->attrs)) continue;
            check_signature(cx, cms[m], it);
        }
    }
    const bxc_cube_set *set = cx->cubes;
    if (!set) return;
    for (uint32_t i = 0; i < set->len; i++)
        if (set->items[i]->is_helper) check_body(cx, set->items[i]);
    uint8_t *state = bxc_arena_alloc(cx->arena, set->len + 1);
    bxc_cube_kernel **stack = bxc_arena_alloc(cx->arena, (set->len + 1) * sizeof *stack);
    for (uint32_t i = 0; i < set->len; i++)
        if (set->items[i]->is_helper && !state[i]) find_cycles(cx, set->items[i], stack, 0, state, set);
    /* a helper that calls a broken one cannot be inlined either */
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t i = 0; i < set->len; i++) {
            bxc_cube_kernel *h = set->items[i];
            for (uint32_t j = 0; h->is_helper && h->ok && j < h->calls.len; j++)
                if (!h->calls.items[j]->helper->ok) h->ok = false, changed = true;
        }
    }
}

void chk_cube_module(chk_ctx *cx, chk_module *cm) {
    const bxc_cube_set *set = cx->cubes;
    for (uint32_t i = 0; set && i < set->len; i++) {
        bxc_cube_kernel *k = set->items[i];
        if (k->cm != cm || k->is_helper) continue;
        check_body(cx, k);
        for (uint32_t j = 0; j < k->calls.len; j++) k->ok &= k->calls.items[j]->helper->ok;
        /* Rules the IR verifier enforces (sync_cube placement) surface
         * here, located: lower every instantiation once and keep the
         * first report. */
        if (!k->ok) continue;
        uint32_t n = bxc_cube_instance_count(k);
        for (uint32_t j = 0; j < n; j++) {
            struct bxk_kernel *ir = bxc_cube_lower(cx->unit, k, j);
            if (!ir) {
                k->ok = false;
                break;
            }
            bxk_kernel_free(ir);
        }
    }
}
