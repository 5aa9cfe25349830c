/* interp.c — the metadata interpreter's evaluator: expressions, statements,
 * places (assignment targets), calls of helper fns and closures, checked
 * integer arithmetic, the builtin types' methods, and the REPL bindings.
 * `#[fusion(...)]` evaluation is in interp_meta.c.  See interp.h for the
 * contract (located errors, scratch arena, span bases). */
#include "interp_int.h"
#include "types.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>


/* ---- small helpers ------------------------------------------------------ */

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (!q) {
        fputs("bext: out of memory\n", stderr);
        abort();
    }
    return q;
}

static const char *i128_str(char buf[48], __int128 v)
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

/* A value's dynamic type as text, in the scratch arena (for messages). */
static const char *type_str(bxi_interp *in, const BxvValue *v)
{
    BxvBuf b = {0};
    bxv_print_type(&b, v);
    const char *s = bxc_arena_strdup(&in->scratch, b.data ? b.data : "?");
    bxv_buf_free(&b);
    return s;
}

static BxvValue strip(BxvValue v)
{
    v.refs = 0;
    return v;
}

static bool name_is(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

static const char *path_last(const bxc_path *p) { return p->segs.items[p->segs.len - 1].name; }

/* ---- diagnostics -------------------------------------------------------- */

static bxc_span global_span(const bxi_interp *in, bxc_span s)
{
    if (s.file != BXC_NO_FILE)
        s.file += in->base;
    return s;
}

bxc_diag *bxi_error(bxi_interp *in, const char *code, bxc_span span, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bxc_diag *d = bxc_diag_vadd(in->diags, BXC_SEV_ERROR, code, global_span(in, span), fmt, ap);
    va_end(ap);
    /* Innermost call first, as a backtrace reads; a deep recursion would
     * repeat the same note, so keep the first few. */
    uint32_t shown = 0;
    for (uint32_t i = in->ncalls; i-- > 0 && d;) {
        if (shown == 6) {
            bxc_diag_add_note(in->diags, d, bxc_span_none(), "... and %u more enclosing calls", i + 1);
            break;
        }
        bxc_diag_add_note(in->diags, d, in->calls[i].site, "in this call to `%s`", in->calls[i].name);
        shown++;
    }
    return d;
}

/* ---- environment of REPL bindings --------------------------------------- */

void bxi_env_init(bxi_env *env)
{
    memset(env, 0, sizeof *env);
    bxc_arena_init(&env->arena);
}

void bxi_env_free(bxi_env *env)
{
    bxc_arena_free_all(&env->arena);
    free(env->items);
    memset(env, 0, sizeof *env);
}

const bxi_binding *bxi_env_get(const bxi_env *env, const char *name)
{
    if (!env)
        return NULL;
    for (uint32_t i = 0; i < env->len; i++)
        if (strcmp(env->items[i].name, name) == 0)
            return &env->items[i];
    return NULL;
}

/* Rebuilds the env's arena with only the live bindings, so rebinding the
 * same names over a long session does not grow memory without bound. */
static void env_compact(bxi_env *env)
{
    bxc_arena fresh;
    bxc_arena_init(&fresh);
    env->live_bytes = 0;
    for (uint32_t i = 0; i < env->len; i++) {
        size_t before = fresh.total;
        env->items[i].name = bxc_arena_strdup(&fresh, env->items[i].name);
        env->items[i].value = bxv_copy(&fresh, &env->items[i].value);
        env->items[i].bytes = fresh.total - before;
        env->live_bytes += env->items[i].bytes;
    }
    bxc_arena_free_all(&env->arena);
    env->arena = fresh;
}

void bxi_env_set(bxi_env *env, const char *name, bool is_mut, const BxvValue *v)
{
    size_t before = env->arena.total;
    BxvValue copy = bxv_copy(&env->arena, v);
    bxi_binding *slot = NULL;
    for (uint32_t i = 0; i < env->len; i++)
        if (strcmp(env->items[i].name, name) == 0)
            slot = &env->items[i];
    if (!slot) {
        if (env->len == env->cap) {
            env->cap = env->cap ? env->cap * 2 : 8;
            env->items = xrealloc(env->items, env->cap * sizeof *env->items);
        }
        slot = &env->items[env->len++];
        slot->name = bxc_arena_strdup(&env->arena, name);
        slot->bytes = 0;
    }
    env->live_bytes -= slot->bytes;
    slot->is_mut = is_mut;
    slot->value = copy;
    slot->bytes = env->arena.total - before;
    env->live_bytes += slot->bytes;
    /* The replaced copies are dead weight: rebuild once they dominate. */
    if (env->arena.total > 4 * env->live_bytes + (1u << 20))
        env_compact(env);
}

/* ---- interpreter object ------------------------------------------------- */

bxi_interp *bxi_new(bxc_diag_list *diags)
{
    bxi_interp *in = calloc(1, sizeof *in);
    if (!in) {
        fputs("bext: out of memory\n", stderr);
        abort();
    }
    in->diags = diags;
    bxc_arena_init(&in->scratch);
    in->lim.max_call_depth = BXI_DEFAULT_CALL_DEPTH;
    in->lim.max_steps = BXI_DEFAULT_STEPS;
    /* Expression nesting (bounded per function by the parser) times call
     * depth can still be deep, and sanitizer builds at -O0 use kilobytes
     * per level: the evaluator measures its stack instead of counting. */
    struct rlimit rl;
    size_t stack = BXI_DEFAULT_STACK_MAX;
    if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur / 2 < stack)
        stack = rl.rlim_cur / 2;
    in->lim.max_stack_bytes = stack;
    return in;
}

void bxi_free(bxi_interp *in)
{
    if (!in)
        return;
    bxc_arena_free_all(&in->scratch);
    free(in->lists);
    free(in->vars);
    free(in->calls);
    free(in);
}

void bxi_set_limits(bxi_interp *in, bxi_limits limits)
{
    /* A zero field keeps the current limit. */
    if (limits.max_call_depth)
        in->lim.max_call_depth = limits.max_call_depth;
    if (limits.max_steps)
        in->lim.max_steps = limits.max_steps;
    if (limits.max_stack_bytes)
        in->lim.max_stack_bytes = limits.max_stack_bytes;
}

void bxi_add_items(bxi_interp *in, const bxc_item_list *items, uint32_t file_base)
{
    if (in->nlists == in->caplists) {
        in->caplists = in->caplists ? in->caplists * 2 : 8;
        in->lists = xrealloc(in->lists, in->caplists * sizeof *in->lists);
    }
    /* REPL-typed items go first so they shadow loaded ones. */
    memmove(in->lists + 1, in->lists, in->nlists * sizeof *in->lists);
    in->lists[0] = (bxi_items_ref){items, file_base};
    in->nlists++;
}

void bxi_add_unit(bxi_interp *in, const bxc_unit *unit, uint32_t file_base)
{
    for (uint32_t i = 0; i < unit->nmodules; i++) {
        const bxc_module *m = unit->modules[i];
        if (!m->ast)
            continue;
        if (in->nlists == in->caplists) {
            in->caplists = in->caplists ? in->caplists * 2 : 8;
            in->lists = xrealloc(in->lists, in->caplists * sizeof *in->lists);
        }
        in->lists[in->nlists++] = (bxi_items_ref){&m->ast->items, file_base};
    }
}

void bxi_clear_program(bxi_interp *in) { in->nlists = 0; }

const bxc_item *bxi_find_item(const bxi_interp *in, const char *name, uint32_t kinds_mask,
                              uint32_t *base)
{
    for (uint32_t l = 0; l < in->nlists; l++) {
        const bxc_item_list *items = in->lists[l].items;
        for (uint32_t i = 0; i < items->len; i++) {
            const bxc_item *it = items->items[i];
            if ((kinds_mask & BXI_KIND(it->kind)) && name_is(it->name.name, name)) {
                if (base)
                    *base = in->lists[l].base;
                return it;
            }
        }
    }
    return NULL;
}

void bxi_reset(bxi_interp *in)
{
    bxc_arena_free_all(&in->scratch);
    /* The variable slots lived in the scratch arena. */
    if (in->capvars)
        memset(in->vars, 0, in->capvars * sizeof *in->vars);
    in->nvars = 0;
    in->frame_start = 0;
    in->base = 0;
    in->depth = 0;
    in->steps = 0;
    in->stack_base = (uintptr_t)__builtin_frame_address(0);
    in->ncalls = 0;
    in->budget_reported = false;
    in->ret = bxv_unit();
}

void bxi_push_var(bxi_interp *in, const char *name, bool is_mut, const BxvValue *v)
{
    if (in->nvars == in->capvars) {
        uint32_t old = in->capvars;
        in->capvars = in->capvars ? in->capvars * 2 : 32;
        in->vars = xrealloc(in->vars, in->capvars * sizeof *in->vars);
        memset(in->vars + old, 0, (in->capvars - old) * sizeof *in->vars);
    }
    /* A popped variable's slot is reused: nothing keeps a pointer to a slot
     * past its scope (reads copy the value), and a loop that binds a
     * variable per iteration then allocates nothing for it. */
    BxvValue *slot = in->vars[in->nvars].val;
    if (!slot)
        slot = bxc_arena_alloc(&in->scratch, sizeof *slot);
    BxvValue copy = bxv_copy(&in->scratch, v);
    *slot = copy;
    in->vars[in->nvars++] = (bxi_var){name, is_mut, slot};
}

void bxi_push_env(bxi_interp *in, const bxi_env *env)
{
    if (!env)
        return;
    for (uint32_t i = 0; i < env->len; i++)
        bxi_push_var(in, env->items[i].name, env->items[i].is_mut, &env->items[i].value);
}

static bxi_var *find_var(bxi_interp *in, const char *name)
{
    for (uint32_t i = in->nvars; i-- > in->frame_start;)
        if (strcmp(in->vars[i].name, name) == 0)
            return &in->vars[i];
    return NULL;
}

/* ---- types as written ----------------------------------------------------- */

const bxc_tyexpr *bxi_tyexpr_strip_refs(const bxc_tyexpr *t, unsigned *refs)
{
    unsigned n = 0;
    while (t && t->kind == BXC_TY_REF) {
        n++;
        t = t->inner;
    }
    if (refs)
        *refs = n;
    return t;
}

/* Follows `type A = B;` aliases (bounded, so a cycle cannot hang). */
static const bxc_tyexpr *resolve_alias(const bxi_interp *in, const bxc_tyexpr *t)
{
    for (int hops = 0; t && t->kind == BXC_TY_PATH && t->path && hops < 16; hops++) {
        const bxc_item *al = bxi_find_item(in, path_last(t->path), BXI_KIND(BXC_ITEM_TYPE_ALIAS), NULL);
        if (!al || !al->alias.type)
            break;
        t = al->alias.type;
    }
    return t;
}

bool bxi_tyexpr_int(const bxi_interp *in, const bxc_tyexpr *t, BxvIntType *out)
{
    t = resolve_alias(in, bxi_tyexpr_strip_refs(t, NULL));
    if (!t || t->kind != BXC_TY_PATH || !t->path || t->path->segs.len != 1)
        return false;
    const char *n = path_last(t->path);
    return bxv_int_type_from_name(n, strlen(n), out);
}

static bool tyexpr_float(const bxi_interp *in, const bxc_tyexpr *t, BxvFloatType *out)
{
    t = resolve_alias(in, bxi_tyexpr_strip_refs(t, NULL));
    if (!t || t->kind != BXC_TY_PATH || !t->path || t->path->segs.len != 1)
        return false;
    const char *n = path_last(t->path);
    if (strcmp(n, "f32") == 0)
        *out = BXV_F32;
    else if (strcmp(n, "f64") == 0)
        *out = BXV_F64;
    else
        return false;
    return true;
}

/* ---- integers ----------------------------------------------------------- */

/* Gives an integer literal the type `ty` (range-checked). */
static bxi_status int_adopt(bxi_interp *in, BxvValue *v, BxvIntType ty, bxc_span span)
{
    if (v->u.i.ty == ty)
        return BXI_OK;
    if (v->u.i.ty != BXV_ILIT) {
        bxi_error(in, BXI_E_TYPE, span, "mismatched integer types: expected `%s`, found `%s`",
                  bxv_int_type_name(ty), bxv_int_type_name(v->u.i.ty));
        return BXI_ERR;
    }
    char buf[48];
    if (!bxv_int_fits(v->u.i.v, ty)) {
        if (v->u.i.v < 0 && !bxv_int_type_signed(ty))
            bxi_error(in, BXI_E_NEGATIVE, span, "negative value %s cannot be a `%s`",
                      i128_str(buf, v->u.i.v), bxv_int_type_name(ty));
        else
            bxi_error(in, BXI_E_OVERFLOW, span, "value %s does not fit in `%s`",
                      i128_str(buf, v->u.i.v), bxv_int_type_name(ty));
        return BXI_ERR;
    }
    v->u.i.ty = ty;
    return BXI_OK;
}

bxi_status bxi_coerce(bxi_interp *in, BxvValue *v, const bxc_tyexpr *t, bxc_span span)
{
    if (!t)
        return BXI_OK;
    unsigned refs;
    bxi_tyexpr_strip_refs(t, &refs);
    BxvIntType ity;
    BxvFloatType fty;
    if (v->kind == BXV_INT && bxi_tyexpr_int(in, t, &ity)) {
        if (int_adopt(in, v, ity, span) != BXI_OK)
            return BXI_ERR;
    } else if (v->kind == BXV_FLOAT && tyexpr_float(in, t, &fty)) {
        if (v->u.f.ty == BXV_FLIT)
            *v = bxv_float(v->u.f.v, fty);
        else if (v->u.f.ty != fty) {
            bxi_error(in, BXI_E_TYPE, span, "mismatched float types: expected `%s`, found `%s`",
                      bxv_float_type_name(fty), bxv_float_type_name(v->u.f.ty));
            return BXI_ERR;
        }
    }
    /* A declared `&T` takes the value by reference: the language has no
     * `&mut`, so a reference is a read-only copy (see value.h). */
    v->refs = (uint8_t)refs;
    return BXI_OK;
}

static const char *binop_verb(bxc_binop op)
{
    switch (op) {
    case BXC_BIN_ADD: return "add";
    case BXC_BIN_SUB: return "subtract";
    case BXC_BIN_MUL: return "multiply";
    case BXC_BIN_DIV: return "divide";
    case BXC_BIN_REM: return "take the remainder";
    default: return "compute";
    }
}

/* Checked integer arithmetic in 128 bits, then a range check against the
 * operands' common type: overflow is a located error, never a wrap. */
static bxi_status int_binop(bxi_interp *in, bxc_binop op, BxvValue a, BxvValue b, bxc_span span,
                            BxvValue *out)
{
    BxvIntType ty = a.u.i.ty;
    if (a.u.i.ty != b.u.i.ty) {
        if (a.u.i.ty == BXV_ILIT) {
            if (int_adopt(in, &a, b.u.i.ty, span) != BXI_OK)
                return BXI_ERR;
            ty = b.u.i.ty;
        } else if (b.u.i.ty == BXV_ILIT) {
            if (int_adopt(in, &b, a.u.i.ty, span) != BXI_OK)
                return BXI_ERR;
        } else {
            bxc_diag *d = bxi_error(in, BXI_E_TYPE, span,
                                    "mismatched integer types: `%s` %s `%s`",
                                    bxv_int_type_name(a.u.i.ty), bxc_binop_str(op),
                                    bxv_int_type_name(b.u.i.ty));
            bxc_diag_set_help(in->diags, d, "convert one side with `as`");
            return BXI_ERR;
        }
    }
    __int128 x = a.u.i.v, y = b.u.i.v, r = 0;
    bool ovf = false;
    char bx[48], by[48], br[48];
    switch (op) {
    case BXC_BIN_ADD: ovf = __builtin_add_overflow(x, y, &r); break;
    case BXC_BIN_SUB: ovf = __builtin_sub_overflow(x, y, &r); break;
    case BXC_BIN_MUL: ovf = __builtin_mul_overflow(x, y, &r); break;
    case BXC_BIN_DIV:
    case BXC_BIN_REM:
        if (y == 0) {
            bxi_error(in, BXI_E_DIV_ZERO, span, "attempt to %s `%s` by zero",
                      op == BXC_BIN_DIV ? "divide" : "take the remainder of", i128_str(bx, x));
            return BXI_ERR;
        }
        r = op == BXC_BIN_DIV ? x / y : x % y;
        break;
    case BXC_BIN_BITAND: r = x & y; break;
    case BXC_BIN_BITOR:  r = x | y; break;
    case BXC_BIN_BITXOR: r = x ^ y; break;
    case BXC_BIN_EQ: *out = bxv_bool(x == y); return BXI_OK;
    case BXC_BIN_NE: *out = bxv_bool(x != y); return BXI_OK;
    case BXC_BIN_LT: *out = bxv_bool(x < y); return BXI_OK;
    case BXC_BIN_LE: *out = bxv_bool(x <= y); return BXI_OK;
    case BXC_BIN_GT: *out = bxv_bool(x > y); return BXI_OK;
    case BXC_BIN_GE: *out = bxv_bool(x >= y); return BXI_OK;
    default:
        bxi_error(in, BXI_E_TYPE, span, "`%s` does not apply to integers", bxc_binop_str(op));
        return BXI_ERR;
    }
    if (ovf || !bxv_int_fits(r, ty)) {
        if (ovf)
            bxi_error(in, BXI_E_OVERFLOW, span, "attempt to %s with overflow: `%s %s %s`",
                      binop_verb(op), i128_str(bx, x), bxc_binop_str(op), i128_str(by, y));
        else if (r < 0 && !bxv_int_type_signed(ty))
            bxi_error(in, BXI_E_OVERFLOW, span,
                      "attempt to %s with overflow: `%s %s %s` is negative, which `%s` cannot hold",
                      binop_verb(op), i128_str(bx, x), bxc_binop_str(op), i128_str(by, y),
                      bxv_int_type_name(ty));
        else
            bxi_error(in, BXI_E_OVERFLOW, span,
                      "attempt to %s with overflow: `%s %s %s` = %s does not fit in `%s`",
                      binop_verb(op), i128_str(bx, x), bxc_binop_str(op), i128_str(by, y),
                      i128_str(br, r), bxv_int_type_name(ty));
        return BXI_ERR;
    }
    *out = bxv_int(r, ty);
    return BXI_OK;
}

static bxi_status float_binop(bxi_interp *in, bxc_binop op, BxvValue a, BxvValue b, bxc_span span,
                              BxvValue *out)
{
    BxvFloatType ty = a.u.f.ty;
    if (a.u.f.ty != b.u.f.ty) {
        if (a.u.f.ty == BXV_FLIT)
            ty = b.u.f.ty;
        else if (b.u.f.ty != BXV_FLIT) {
            bxi_error(in, BXI_E_TYPE, span, "mismatched float types: `%s` %s `%s`",
                      bxv_float_type_name(a.u.f.ty), bxc_binop_str(op), bxv_float_type_name(b.u.f.ty));
            return BXI_ERR;
        }
    }
    double x = a.u.f.v, y = b.u.f.v;
    switch (op) {
    case BXC_BIN_ADD: *out = bxv_float(x + y, ty); return BXI_OK;
    case BXC_BIN_SUB: *out = bxv_float(x - y, ty); return BXI_OK;
    case BXC_BIN_MUL: *out = bxv_float(x * y, ty); return BXI_OK;
    case BXC_BIN_DIV: *out = bxv_float(x / y, ty); return BXI_OK;  /* IEEE, as Rust */
    case BXC_BIN_REM: *out = bxv_float(fmod(x, y), ty); return BXI_OK;
    case BXC_BIN_EQ: *out = bxv_bool(x == y); return BXI_OK;
    case BXC_BIN_NE: *out = bxv_bool(x != y); return BXI_OK;
    case BXC_BIN_LT: *out = bxv_bool(x < y); return BXI_OK;
    case BXC_BIN_LE: *out = bxv_bool(x <= y); return BXI_OK;
    case BXC_BIN_GT: *out = bxv_bool(x > y); return BXI_OK;
    case BXC_BIN_GE: *out = bxv_bool(x >= y); return BXI_OK;
    default:
        bxi_error(in, BXI_E_TYPE, span, "`%s` does not apply to floats", bxc_binop_str(op));
        return BXI_ERR;
    }
}

static bxi_status binop(bxi_interp *in, bxc_binop op, BxvValue a, BxvValue b, bxc_span span,
                        BxvValue *out)
{
    /* Operators see through references (`*axis + 1` and `axis + 1` alike,
     * as Rust's `impl Add<&usize> for usize`). */
    a = strip(a);
    b = strip(b);
    if (a.kind == BXV_INT && b.kind == BXV_INT)
        return int_binop(in, op, a, b, span, out);
    if (a.kind == BXV_FLOAT && b.kind == BXV_FLOAT)
        return float_binop(in, op, a, b, span, out);
    if (a.kind == BXV_BOOL && b.kind == BXV_BOOL) {
        switch (op) {
        case BXC_BIN_BITAND: *out = bxv_bool(a.u.b & b.u.b); return BXI_OK;
        case BXC_BIN_BITOR:  *out = bxv_bool(a.u.b | b.u.b); return BXI_OK;
        case BXC_BIN_BITXOR: *out = bxv_bool(a.u.b ^ b.u.b); return BXI_OK;
        default: break;
        }
    }
    if (op == BXC_BIN_EQ || op == BXC_BIN_NE) {
        if (a.kind == b.kind && a.kind != BXV_CLOSURE) {
            bool eq = bxv_equal(&a, &b);
            *out = bxv_bool(op == BXC_BIN_EQ ? eq : !eq);
            return BXI_OK;
        }
    }
    bxi_error(in, BXI_E_TYPE, span, "cannot apply `%s` to `%s` and `%s`", bxc_binop_str(op),
              type_str(in, &a), type_str(in, &b));
    return BXI_ERR;
}

/* A non-negative integer usable as an index or dimension. */
static bxi_status to_index(bxi_interp *in, BxvValue v, bxc_span span, const char *what, uint64_t *out)
{
    v = strip(v);
    if (v.kind != BXV_INT) {
        bxi_error(in, BXI_E_TYPE, span, "%s must be a `usize`, found `%s`", what, type_str(in, &v));
        return BXI_ERR;
    }
    if (v.u.i.ty != BXV_USIZE && v.u.i.ty != BXV_ILIT) {
        bxc_diag *d = bxi_error(in, BXI_E_TYPE, span, "%s must be a `usize`, found `%s`", what,
                                bxv_int_type_name(v.u.i.ty));
        bxc_diag_set_help(in->diags, d, "convert it with `as usize`");
        return BXI_ERR;
    }
    char buf[48];
    if (v.u.i.v < 0) {
        bxi_error(in, BXI_E_NEGATIVE, span, "%s is negative (%s)", what, i128_str(buf, v.u.i.v));
        return BXI_ERR;
    }
    if (v.u.i.v > (__int128)UINT64_MAX) {
        bxi_error(in, BXI_E_OVERFLOW, span, "%s %s does not fit in `usize`", what, i128_str(buf, v.u.i.v));
        return BXI_ERR;
    }
    *out = (uint64_t)v.u.i.v;
    return BXI_OK;
}

/* ---- budget and recursion --------------------------------------------- */

static bxi_status step(bxi_interp *in, bxc_span span)
{
    if (++in->steps <= in->lim.max_steps)
        return BXI_OK;
    bxc_diag *d = bxi_error(in, BXI_E_BUDGET, span,
                            "evaluation exceeded its budget of %llu steps (loop iterations and calls)",
                            (unsigned long long)in->lim.max_steps);
    bxc_diag_set_help(in->diags, d, "metadata code must finish quickly; is this loop's condition ever false?");
    return BXI_ERR;
}

/* ---- places: assignment targets and receivers of mutating methods -------- */

typedef enum { PL_VALUE, PL_SHAPE, PL_DIM, PL_DTYPE } place_kind;
typedef struct place {
    place_kind kind;
    BxvValue *v;        /* PL_VALUE */
    BxvShape *shape;    /* PL_SHAPE, PL_DIM */
    size_t idx;         /* PL_DIM */
    BxvDType *dtype;    /* PL_DTYPE */
} place;

/* Resolves `e` to storage.  Index operands are evaluated before the storage
 * pointer is taken, so nothing evaluated later can move it. */
static bxi_status eval_place(bxi_interp *in, const bxc_expr *e, bool mutate, place *p)
{
    switch (e->kind) {
    case BXC_EXPR_PATH: {
        if (e->path->segs.len != 1)
            break;
        const char *name = e->path->segs.items[0].name;
        bxi_var *v = find_var(in, name);
        if (!v) {
            bxi_error(in, BXI_E_NAME, e->span, "cannot find variable `%s`", name);
            return BXI_ERR;
        }
        if (mutate && !v->is_mut) {
            bxc_diag *d = bxi_error(in, BXI_E_TYPE, e->span,
                                    "cannot assign to or mutate `%s`: it is not declared `mut`", name);
            bxc_diag_set_help(in->diags, d, "declare it with `let mut %s`", name);
            return BXI_ERR;
        }
        if (mutate && v->val->refs) {
            bxi_error(in, BXI_E_TYPE, e->span,
                      "cannot mutate through `%s`, a `&` reference (the language has no `&mut`)", name);
            return BXI_ERR;
        }
        p->kind = PL_VALUE;
        p->v = v->val;
        return BXI_OK;
    }
    case BXC_EXPR_FIELD: {
        place obj;
        if (eval_place(in, e->field.object, mutate, &obj) != BXI_OK)
            return BXI_ERR;
        if (obj.kind != PL_VALUE)
            break;
        BxvValue *o = obj.v;
        const char *f = e->field.name.name;
        if (o->kind == BXV_SPEC && strcmp(f, "shape") == 0) {
            p->kind = PL_SHAPE;
            p->shape = &o->u.spec.shape;
            return BXI_OK;
        }
        if (o->kind == BXV_SPEC && strcmp(f, "dtype") == 0) {
            p->kind = PL_DTYPE;
            p->dtype = &o->u.spec.dtype;
            return BXI_OK;
        }
        if ((o->kind == BXV_STRUCT || o->kind == BXV_ENUM) && o->u.agg.names) {
            for (size_t i = 0; i < o->u.agg.n; i++) {
                if (name_is(o->u.agg.names[i], f)) {
                    p->kind = PL_VALUE;
                    p->v = &o->u.agg.fields[i];
                    return BXI_OK;
                }
            }
        }
        bxi_error(in, BXI_E_NAME, e->field.name.span, "no field `%s` on a value of type `%s`", f,
                  type_str(in, o));
        return BXI_ERR;
    }
    case BXC_EXPR_TUPLE_FIELD: {
        place obj;
        if (eval_place(in, e->tuple_field.object, mutate, &obj) != BXI_OK)
            return BXI_ERR;
        if (obj.kind != PL_VALUE)
            break;
        BxvValue *o = obj.v;
        uint32_t k = e->tuple_field.index;
        if (o->kind == BXV_TUPLE && k < o->u.tuple.n) {
            p->kind = PL_VALUE;
            p->v = &o->u.tuple.items[k];
            return BXI_OK;
        }
        if ((o->kind == BXV_STRUCT || o->kind == BXV_ENUM) && !o->u.agg.braces && k < o->u.agg.n) {
            p->kind = PL_VALUE;
            p->v = &o->u.agg.fields[k];
            return BXI_OK;
        }
        bxi_error(in, BXI_E_INDEX, e->tuple_field.index_span, "no field `%u` on a value of type `%s`", k,
                  type_str(in, o));
        return BXI_ERR;
    }
    case BXC_EXPR_INDEX: {
        BxvValue iv;
        bxi_status st = bxi_eval_expr(in, e->index.index, &iv);
        if (st != BXI_OK)
            return st;
        uint64_t idx;
        if (to_index(in, iv, e->index.index->span, "an index", &idx) != BXI_OK)
            return BXI_ERR;
        place obj;
        if ((st = eval_place(in, e->index.object, mutate, &obj)) != BXI_OK)
            return st;
        BxvShape *s = obj.kind == PL_SHAPE ? obj.shape
                    : obj.kind == PL_VALUE && obj.v->kind == BXV_SHAPE ? &obj.v->u.shape : NULL;
        if (!s) {
            bxi_error(in, BXI_E_TYPE, e->index.object->span, "only a `Shape` can be indexed");
            return BXI_ERR;
        }
        if (idx >= s->len) {
            bxi_error(in, BXI_E_INDEX, e->span, "index %llu is out of range for a shape of rank %zu",
                      (unsigned long long)idx, s->len);
            return BXI_ERR;
        }
        p->kind = PL_DIM;
        p->shape = s;
        p->idx = (size_t)idx;
        return BXI_OK;
    }
    case BXC_EXPR_UNARY:
        if (e->unary.op == BXC_UN_DEREF) {
            bxi_error(in, BXI_E_TYPE, e->span,
                      "cannot assign through a `&` reference (the language has no `&mut`)");
            return BXI_ERR;
        }
        break;
    default:
        break;
    }
    bxi_error(in, BXI_E_TYPE, e->span, "this expression cannot be assigned to or mutated");
    return BXI_ERR;
}

static BxvValue place_load(bxi_interp *in, const place *p)
{
    switch (p->kind) {
    case PL_VALUE: return *p->v;
    case PL_SHAPE: {
        BxvValue v = {.kind = BXV_SHAPE};
        v.u.shape = *p->shape;
        return v;
    }
    case PL_DIM:   return bxv_int(p->shape->dims[p->idx], BXV_USIZE);
    case PL_DTYPE: return bxv_dtype(*p->dtype);
    }
    return bxv_unit();
}

static bxi_status place_store(bxi_interp *in, const place *p, BxvValue v, bxc_span span)
{
    switch (p->kind) {
    case PL_VALUE:
        if (p->v->kind == BXV_INT && v.kind == BXV_INT && int_adopt(in, &v, p->v->u.i.ty, span) != BXI_OK)
            return BXI_ERR;
        if (p->v->kind == BXV_FLOAT && v.kind == BXV_FLOAT && v.u.f.ty == BXV_FLIT)
            v = bxv_float(v.u.f.v, p->v->u.f.ty);
        if (p->v->kind != v.kind && p->v->kind != BXV_UNIT) {
            bxi_error(in, BXI_E_TYPE, span, "mismatched types: expected `%s`, found `%s`",
                      type_str(in, p->v), type_str(in, &v));
            return BXI_ERR;
        }
        *p->v = bxv_copy(&in->scratch, &v);
        return BXI_OK;
    case PL_SHAPE:
        v = strip(v);
        if (v.kind != BXV_SHAPE) {
            bxi_error(in, BXI_E_TYPE, span, "expected `Shape`, found `%s`", type_str(in, &v));
            return BXI_ERR;
        }
        *p->shape = bxv_copy(&in->scratch, &v).u.shape;
        return BXI_OK;
    case PL_DIM: {
        uint64_t d;
        if (to_index(in, v, span, "a dimension", &d) != BXI_OK)
            return BXI_ERR;
        p->shape->dims[p->idx] = d;
        return BXI_OK;
    }
    case PL_DTYPE:
        v = strip(v);
        if (v.kind != BXV_DTYPEV) {
            bxi_error(in, BXI_E_TYPE, span, "expected `DType`, found `%s`", type_str(in, &v));
            return BXI_ERR;
        }
        *p->dtype = v.u.dtype;
        return BXI_OK;
    }
    return BXI_ERR;
}

/* ---- patterns ----------------------------------------------------------- */

static bxi_status bind_pat(bxi_interp *in, const bxc_pat *pat, const BxvValue *v)
{
    switch (pat->kind) {
    case BXC_PAT_IDENT:
        bxi_push_var(in, pat->name.name, pat->is_mut, v);
        return BXI_OK;
    case BXC_PAT_WILD:
        return BXI_OK;
    case BXC_PAT_TUPLE: {
        BxvValue t = strip(*v);
        if (t.kind != BXV_TUPLE || t.u.tuple.n != pat->elems.len) {
            bxi_error(in, BXI_E_TYPE, pat->span, "a %u-element tuple pattern cannot match `%s`",
                      pat->elems.len, type_str(in, &t));
            return BXI_ERR;
        }
        for (uint32_t i = 0; i < pat->elems.len; i++) {
            BxvValue item = t.u.tuple.items[i];
            item.refs = v->refs;   /* destructuring a reference yields references */
            if (bind_pat(in, pat->elems.items[i], &item) != BXI_OK)
                return BXI_ERR;
        }
        return BXI_OK;
    }
    case BXC_PAT_ERROR:
        break;
    }
    bxi_error(in, BXI_E_UNSUPPORTED, pat->span, "cannot bind this pattern");
    return BXI_ERR;
}

/* ---- calls -------------------------------------------------------------- */

static bxi_status eval_block(bxi_interp *in, const bxc_block *b, BxvValue *out);

static bxi_status enter_call(bxi_interp *in, bxc_span site, const char *name)
{
    if (step(in, site) != BXI_OK)
        return BXI_ERR;
    if (in->depth >= in->lim.max_call_depth) {
        bxc_diag *d = bxi_error(in, BXI_E_RECURSION, site,
                                "recursion limit reached: %u nested calls (calling `%s`)",
                                in->lim.max_call_depth, name);
        bxc_diag_set_help(in->diags, d, "does the recursion have a base case that is reached?");
        return BXI_ERR;
    }
    if (in->ncalls == in->capcalls) {
        in->capcalls = in->capcalls ? in->capcalls * 2 : 16;
        in->calls = xrealloc(in->calls, in->capcalls * sizeof *in->calls);
    }
    in->calls[in->ncalls++] = (bxi_call_rec){global_span(in, site), name};
    in->depth++;
    return BXI_OK;
}

static void leave_call(bxi_interp *in)
{
    in->depth--;
    in->ncalls--;
}

/* Runs a body in a fresh frame after binding the parameters. */
typedef struct frame_save {
    uint32_t nvars, frame_start, base;
} frame_save;

static frame_save frame_push(bxi_interp *in, uint32_t base)
{
    frame_save s = {in->nvars, in->frame_start, in->base};
    in->frame_start = in->nvars;
    in->base = base;
    return s;
}

static void frame_pop(bxi_interp *in, frame_save s)
{
    in->nvars = s.nvars;
    in->frame_start = s.frame_start;
    in->base = s.base;
}

/* Finishes a body's status into a call result. */
static bxi_status call_result(bxi_interp *in, bxi_status st, BxvValue *out, const bxc_expr *where,
                              bxc_span fallback)
{
    if (st == BXI_RET) {
        *out = in->ret;
        return BXI_OK;
    }
    if (st == BXI_BREAK || st == BXI_CONT) {
        bxi_error(in, BXI_E_TYPE, where ? where->span : fallback, "`break`/`continue` outside of a loop");
        return BXI_ERR;
    }
    return st;
}

static bxi_status call_fn(bxi_interp *in, const bxc_fn *fn, uint32_t fn_base, BxvValue *args,
                          uint32_t nargs, bxc_span site, BxvValue *out)
{
    uint32_t nparams = 0;
    for (uint32_t i = 0; i < fn->params.len; i++)
        nparams += !fn->params.items[i]->is_self;
    if (nparams != nargs) {
        bxi_error(in, BXI_E_ARITY, site, "`%s` takes %u argument%s but %u %s given", fn->name.name,
                  nparams, nparams == 1 ? "" : "s", nargs, nargs == 1 ? "was" : "were");
        return BXI_ERR;
    }
    if (!fn->body) {
        bxi_error(in, BXI_E_UNSUPPORTED, site, "`%s` has no body to evaluate", fn->name.name);
        return BXI_ERR;
    }
    /* Coerce in the caller's span base: the argument spans are the call's. */
    for (uint32_t i = 0, k = 0; i < fn->params.len; i++) {
        const bxc_param *p = fn->params.items[i];
        if (p->is_self)
            continue;
        if (bxi_coerce(in, &args[k], p->type, site) != BXI_OK)
            return BXI_ERR;
        k++;
    }
    if (enter_call(in, site, fn->name.name) != BXI_OK)
        return BXI_ERR;
    frame_save fs = frame_push(in, fn_base);
    bxi_status st = BXI_OK;
    for (uint32_t i = 0, k = 0; i < fn->params.len && st == BXI_OK; i++) {
        const bxc_param *p = fn->params.items[i];
        if (p->is_self)
            continue;
        st = bind_pat(in, p->pat, &args[k++]);
    }
    if (st == BXI_OK) {
        st = call_result(in, eval_block(in, fn->body, out), out, NULL, fn->body->span);
        if (st == BXI_OK && fn->ret)
            st = bxi_coerce(in, out, fn->ret, fn->ret->span);
        if (st == BXI_OK && !fn->ret)
            *out = bxv_unit();
    }
    frame_pop(in, fs);
    leave_call(in);
    return st;
}

static bxi_status call_closure(bxi_interp *in, const BxvValue *cv, BxvValue *args, uint32_t nargs,
                               bxc_span site, BxvValue *out)
{
    const bxc_expr *ce = cv->u.closure.node;
    const bxi_capture *cap = cv->u.closure.env;
    if (ce->closure.params.len != nargs) {
        bxi_error(in, BXI_E_ARITY, site, "the closure takes %u argument%s but %u %s given",
                  ce->closure.params.len, ce->closure.params.len == 1 ? "" : "s", nargs,
                  nargs == 1 ? "was" : "were");
        return BXI_ERR;
    }
    if (enter_call(in, site, "closure") != BXI_OK)
        return BXI_ERR;
    frame_save fs = frame_push(in, cap->base);
    for (uint32_t i = 0; i < cap->n; i++)
        bxi_push_var(in, cap->vars[i].name, cap->vars[i].is_mut, cap->vars[i].val);
    bxi_status st = BXI_OK;
    for (uint32_t i = 0; i < nargs && st == BXI_OK; i++) {
        const bxc_param *p = ce->closure.params.items[i];
        st = bxi_coerce(in, &args[i], p->type, p->span);
        if (st == BXI_OK)
            st = bind_pat(in, p->pat, &args[i]);
    }
    if (st == BXI_OK) {
        st = call_result(in, bxi_eval_expr(in, ce->closure.body, out), out, NULL, ce->span);
        if (st == BXI_OK && ce->closure.ret)
            st = bxi_coerce(in, out, ce->closure.ret, ce->closure.ret->span);
    }
    frame_pop(in, fs);
    leave_call(in);
    return st;
}

bxi_status bxi_call_value(bxi_interp *in, const BxvValue *callee, BxvValue *args, uint32_t nargs,
                          bxc_span site, BxvValue *out)
{
    if (callee->kind == BXV_CLOSURE)
        return call_closure(in, callee, args, nargs, site, out);
    if (callee->kind == BXV_FN) {
        uint32_t base;
        const bxc_item *it = bxi_find_item(in, callee->u.fn.name, BXI_KIND(BXC_ITEM_FN), &base);
        if (!it) {
            bxi_error(in, BXI_E_NAME, site, "cannot find function `%s`", callee->u.fn.name);
            return BXI_ERR;
        }
        return call_fn(in, it->fn, base, args, nargs, site, out);
    }
    bxi_error(in, BXI_E_TYPE, site, "a value of type `%s` cannot be called", type_str(in, callee));
    return BXI_ERR;
}

/* ---- struct / enum types ------------------------------------------------- */

/* The declaration behind a struct or enum name; `FooMetadata` (generated
 * by #[extension_type(fusion)]) resolves to `Foo`'s declaration, whose
 * field names and order it shares. */
static const bxc_item *find_type(const bxi_interp *in, const char *name, uint32_t kinds, bool *is_meta)
{
    const bxc_item *it = bxi_find_item(in, name, kinds, NULL);
    if (is_meta)
        *is_meta = false;
    if (it)
        return it;
    size_t n = strlen(name);
    const char *suffix = "Metadata";
    size_t sl = strlen(suffix);
    if (n > sl && strcmp(name + n - sl, suffix) == 0) {
        char base[256];
        if (n - sl >= sizeof base)
            return NULL;
        memcpy(base, name, n - sl);
        base[n - sl] = 0;
        it = bxi_find_item(in, base, kinds, NULL);
        if (it && is_meta)
            *is_meta = true;
    }
    return it;
}

static const bxc_variant *find_variant(const bxc_item *en, const char *name)
{
    for (uint32_t i = 0; i < en->enum_.variants.len; i++)
        if (name_is(en->enum_.variants.items[i]->name.name, name))
            return en->enum_.variants.items[i];
    return NULL;
}

/* Integer literal fields take their declared types (not in metadata
 * companions, whose tensor fields are specs). */
static bxi_status coerce_field(bxi_interp *in, BxvValue *v, const bxc_field *f, bool is_meta, bxc_span span)
{
    if (!f || !f->type)
        return BXI_OK;
    if (v->kind == BXV_INT || v->kind == BXV_FLOAT) {
        unsigned refs = v->refs;
        bxi_status st = bxi_coerce(in, v, f->type, span);
        if (is_meta)
            v->refs = (uint8_t)refs;
        return st;
    }
    return BXI_OK;
}

/* `Name { a: e, ... }` or `Enum::Variant { a: e, ... }`. */
static bxi_status eval_struct_lit(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    const bxc_path *path = e->struct_lit.path;
    const bxc_field_init_list *inits = &e->struct_lit.fields;
    const char *type_name, *variant = NULL;
    const bxc_field_list *decl = NULL;
    bool is_meta = false;
    if (path->segs.len >= 2) {
        type_name = path->segs.items[path->segs.len - 2].name;
        variant = path_last(path);
        const bxc_item *en = find_type(in, type_name, BXI_KIND(BXC_ITEM_ENUM), &is_meta);
        if (en) {
            const bxc_variant *var = find_variant(en, variant);
            if (!var) {
                bxi_error(in, BXI_E_NAME, path->span, "enum `%s` has no variant `%s`", type_name, variant);
                return BXI_ERR;
            }
            decl = &var->fields;
        } else {
            bxi_error(in, BXI_E_NAME, path->span, "cannot find enum `%s`", type_name);
            return BXI_ERR;
        }
    } else {
        type_name = path_last(path);
        const bxc_item *st = find_type(in, type_name, BXI_KIND(BXC_ITEM_STRUCT), &is_meta);
        if (!st) {
            bxi_error(in, BXI_E_NAME, path->span, "cannot find struct `%s`", type_name);
            return BXI_ERR;
        }
        decl = &st->struct_.fields;
    }
    /* Evaluate in the order written (side effects), store in declared order. */
    BxvValue *vals = bxc_arena_alloc(&in->scratch, (inits->len ? inits->len : 1) * sizeof *vals);
    for (uint32_t i = 0; i < inits->len; i++) {
        bxi_status st = bxi_eval_expr(in, inits->items[i]->value, &vals[i]);
        if (st != BXI_OK)
            return st;
        for (uint32_t j = 0; j < i; j++) {
            if (strcmp(inits->items[j]->name.name, inits->items[i]->name.name) == 0) {
                bxi_error(in, BXI_E_NAME, inits->items[i]->name.span, "field `%s` is given twice",
                          inits->items[i]->name.name);
                return BXI_ERR;
            }
        }
    }
    uint32_t n = decl->len;
    BxvValue r = {.kind = variant ? BXV_ENUM : BXV_STRUCT};
    r.u.agg.type = type_name;
    r.u.agg.variant = variant;
    r.u.agg.braces = true;
    r.u.agg.n = n;
    r.u.agg.names = bxc_arena_alloc(&in->scratch, (n ? n : 1) * sizeof(char *));
    r.u.agg.fields = bxc_arena_alloc(&in->scratch, (n ? n : 1) * sizeof(BxvValue));
    for (uint32_t i = 0; i < inits->len; i++) {
        bool known = false;
        for (uint32_t k = 0; k < decl->len; k++)
            known |= name_is(decl->items[k]->name.name, inits->items[i]->name.name);
        if (!known) {
            bxi_error(in, BXI_E_NAME, inits->items[i]->name.span, "`%s%s%s` has no field `%s`", type_name,
                      variant ? "::" : "", variant ? variant : "", inits->items[i]->name.name);
            return BXI_ERR;
        }
    }
    for (uint32_t k = 0; k < decl->len; k++) {
        const bxc_field *f = decl->items[k];
        r.u.agg.names[k] = f->name.name;
        uint32_t i = 0;
        while (i < inits->len && !name_is(inits->items[i]->name.name, f->name.name))
            i++;
        if (i == inits->len) {
            bxi_error(in, BXI_E_NAME, e->span, "missing field `%s` in `%s%s%s`",
                      f->name.name ? f->name.name : "?", type_name, variant ? "::" : "",
                      variant ? variant : "");
            return BXI_ERR;
        }
        if (coerce_field(in, &vals[i], f, is_meta, inits->items[i]->span) != BXI_OK)
            return BXI_ERR;
        r.u.agg.fields[k] = bxv_copy(&in->scratch, &vals[i]);
    }
    *out = r;
    return BXI_OK;
}

/* A tuple or unit enum variant `E::V(args)` / `E::V`; returns false when the
 * path does not name an enum variant. */
static bool enum_variant_path(bxi_interp *in, const bxc_path *path, const bxc_item **en,
                              const bxc_variant **var, bool *is_meta)
{
    if (path->segs.len < 2)
        return false;
    const char *type_name = path->segs.items[path->segs.len - 2].name;
    *en = find_type(in, type_name, BXI_KIND(BXC_ITEM_ENUM), is_meta);
    if (!*en)
        return false;
    *var = find_variant(*en, path_last(path));
    return true;
}

static BxvValue make_variant(bxi_interp *in, const bxc_path *path, const bxc_variant *var,
                             BxvValue *args, uint32_t n)
{
    BxvValue r = {.kind = BXV_ENUM};
    r.u.agg.type = path->segs.items[path->segs.len - 2].name;
    r.u.agg.variant = var->name.name;
    r.u.agg.n = n;
    r.u.agg.fields = bxc_arena_alloc(&in->scratch, (n ? n : 1) * sizeof(BxvValue));
    for (uint32_t i = 0; i < n; i++)
        r.u.agg.fields[i] = bxv_copy(&in->scratch, &args[i]);
    return r;
}

/* ---- builtin methods ------------------------------------------------------ */

static bool is_shape_mutator(const char *m)
{
    return !strcmp(m, "push") || !strcmp(m, "pop") || !strcmp(m, "insert") || !strcmp(m, "remove") ||
           !strcmp(m, "swap");
}

static bxi_status want_args(bxi_interp *in, const bxc_expr *e, uint32_t want)
{
    uint32_t got = e->method_call.args.len;
    if (got == want)
        return BXI_OK;
    bxi_error(in, BXI_E_ARITY, e->span, "`%s` takes %u argument%s but %u %s given",
              e->method_call.method.name, want, want == 1 ? "" : "s", got, got == 1 ? "was" : "were");
    return BXI_ERR;
}

static bxi_status shape_mutate(bxi_interp *in, const bxc_expr *e, BxvShape *s, BxvValue *args,
                               BxvValue *out)
{
    const char *m = e->method_call.method.name;
    const bxc_expr_list *al = &e->method_call.args;
    *out = bxv_unit();
    if (!strcmp(m, "push")) {
        uint64_t d;
        if (want_args(in, e, 1) || to_index(in, args[0], al->items[0]->span, "a dimension", &d))
            return BXI_ERR;
        bxv_shape_push(&in->scratch, s, d);
        return BXI_OK;
    }
    if (!strcmp(m, "pop")) {
        /* Rust's Vec::pop returns an Option; the language has no Option, so
         * popping an empty shape is an error and the result is the dim. */
        if (want_args(in, e, 0))
            return BXI_ERR;
        if (s->len == 0) {
            bxi_error(in, BXI_E_INDEX, e->span, "`pop` on an empty shape");
            return BXI_ERR;
        }
        *out = bxv_int(s->dims[--s->len], BXV_USIZE);
        return BXI_OK;
    }
    if (!strcmp(m, "insert")) {
        uint64_t at, d;
        if (want_args(in, e, 2) || to_index(in, args[0], al->items[0]->span, "an index", &at) ||
            to_index(in, args[1], al->items[1]->span, "a dimension", &d))
            return BXI_ERR;
        if (at > s->len) {
            bxi_error(in, BXI_E_INDEX, al->items[0]->span,
                      "insertion index %llu is out of range for a shape of rank %zu", (unsigned long long)at,
                      s->len);
            return BXI_ERR;
        }
        bxv_shape_insert(&in->scratch, s, (size_t)at, d);
        return BXI_OK;
    }
    if (!strcmp(m, "remove")) {
        uint64_t at;
        if (want_args(in, e, 1) || to_index(in, args[0], al->items[0]->span, "an index", &at))
            return BXI_ERR;
        if (at >= s->len) {
            bxi_error(in, BXI_E_INDEX, al->items[0]->span,
                      "removal index %llu is out of range for a shape of rank %zu", (unsigned long long)at,
                      s->len);
            return BXI_ERR;
        }
        *out = bxv_int(bxv_shape_remove(s, (size_t)at), BXV_USIZE);
        return BXI_OK;
    }
    /* swap */
    uint64_t a, b;
    if (want_args(in, e, 2) || to_index(in, args[0], al->items[0]->span, "an index", &a) ||
        to_index(in, args[1], al->items[1]->span, "an index", &b))
        return BXI_ERR;
    for (int k = 0; k < 2; k++) {
        uint64_t v = k ? b : a;
        if (v >= s->len) {
            bxi_error(in, BXI_E_INDEX, al->items[k]->span, "index %llu is out of range for a shape of rank %zu",
                      (unsigned long long)v, s->len);
            return BXI_ERR;
        }
    }
    uint64_t t = s->dims[a];
    s->dims[a] = s->dims[b];
    s->dims[b] = t;
    return BXI_OK;
}

static bxi_status method_call(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    const char *m = e->method_call.method.name;
    uint32_t nargs = e->method_call.args.len;
    /* Builtin methods take at most two arguments and keep none of them, so
     * a hot `while i < s.len()` allocates nothing. */
    BxvValue small[4];
    BxvValue *args = nargs <= 4 ? small : bxc_arena_alloc(&in->scratch, nargs * sizeof *args);
    for (uint32_t i = 0; i < nargs; i++) {
        bxi_status st = bxi_eval_expr(in, e->method_call.args.items[i], &args[i]);
        if (st != BXI_OK)
            return st;
    }
    if (is_shape_mutator(m)) {
        const bxc_expr *recv = e->method_call.receiver;
        bool placeable = recv->kind == BXC_EXPR_PATH || recv->kind == BXC_EXPR_FIELD ||
                         recv->kind == BXC_EXPR_TUPLE_FIELD;
        BxvShape *s = NULL;
        if (placeable) {
            place p;
            if (eval_place(in, recv, true, &p) != BXI_OK)
                return BXI_ERR;
            if (p.kind == PL_SHAPE)
                s = p.shape;
            else if (p.kind == PL_VALUE && p.v->kind == BXV_SHAPE)
                s = &p.v->u.shape;
        } else {
            /* A temporary: mutate a private copy. */
            BxvValue *tmp = bxc_arena_alloc(&in->scratch, sizeof *tmp);
            bxi_status st = bxi_eval_expr(in, recv, tmp);
            if (st != BXI_OK)
                return st;
            *tmp = bxv_copy(&in->scratch, tmp);
            if (tmp->kind == BXV_SHAPE)
                s = &tmp->u.shape;
        }
        if (!s) {
            bxi_error(in, BXI_E_NAME, e->method_call.method.span, "`%s` is a method of `Shape` only", m);
            return BXI_ERR;
        }
        return shape_mutate(in, e, s, args, out);
    }

    BxvValue rv;
    bxi_status st = bxi_eval_expr(in, e->method_call.receiver, &rv);
    if (st != BXI_OK)
        return st;
    BxvValue v = strip(rv);   /* methods auto-deref their receiver */
    if (!strcmp(m, "clone")) {
        if (want_args(in, e, 0))
            return BXI_ERR;
        *out = bxv_copy(&in->scratch, &v);
        return BXI_OK;
    }
    if (v.kind == BXV_SHAPE) {
        const BxvShape *s = &v.u.shape;
        if (!strcmp(m, "len")) {
            if (want_args(in, e, 0))
                return BXI_ERR;
            *out = bxv_int((__int128)s->len, BXV_USIZE);
            return BXI_OK;
        }
        if (!strcmp(m, "num_elements")) {
            if (want_args(in, e, 0))
                return BXI_ERR;
            __int128 n = 1;
            for (size_t i = 0; i < s->len; i++) {
                n *= s->dims[i];
                if (n > (__int128)UINT64_MAX) {
                    bxi_error(in, BXI_E_OVERFLOW, e->span, "the number of elements overflows `usize`");
                    return BXI_ERR;
                }
            }
            *out = bxv_int(n, BXV_USIZE);
            return BXI_OK;
        }
    } else if (v.kind == BXV_DTYPEV) {
        BxvDType d = v.u.dtype;
        if (!strcmp(m, "is_float") || !strcmp(m, "is_int") || !strcmp(m, "is_bool")) {
            if (want_args(in, e, 0))
                return BXI_ERR;
            bool fl = d == BXV_DT_F32 || d == BXV_DT_F64 || d == BXV_DT_F16 || d == BXV_DT_BF16;
            bool bo = d == BXV_DT_BOOL;
            *out = bxv_bool(m[3] == 'f' ? fl : m[3] == 'b' ? bo : !fl && !bo);
            return BXI_OK;
        }
        if (!strcmp(m, "size")) {
            if (want_args(in, e, 0))
                return BXI_ERR;
            *out = bxv_int(bxv_dtype_size(d), BXV_USIZE);
            return BXI_OK;
        }
    }
    bxi_error(in, BXI_E_NAME, e->method_call.method.span, "no method `%s` on a value of type `%s`", m,
              type_str(in, &v));
    return BXI_ERR;
}

/* ---- calls by path: builtins, assoc fns, variants, helper fns ----------- */

static bxi_status eval_args(bxi_interp *in, const bxc_expr_list *l, BxvValue **args)
{
    *args = bxc_arena_alloc(&in->scratch, (l->len ? l->len : 1) * sizeof **args);
    for (uint32_t i = 0; i < l->len; i++) {
        bxi_status st = bxi_eval_expr(in, l->items[i], &(*args)[i]);
        if (st != BXI_OK)
            return st;
    }
    return BXI_OK;
}

static bxi_status call_expr(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    const bxc_expr *callee = e->call.callee;
    const bxc_expr_list *al = &e->call.args;
    BxvValue *args;
    bxi_status st;
    if (callee->kind == BXC_EXPR_PATH) {
        const bxc_path *path = callee->path;
        const char *last = path_last(path);
        const char *first = path->segs.items[0].name;
        bool single = path->segs.len == 1;
        /* A local closure or fn value shadows everything. */
        bxi_var *var = single ? find_var(in, last) : NULL;
        if (var) {
            if ((st = eval_args(in, al, &args)) != BXI_OK)
                return st;
            BxvValue cv = strip(*var->val);
            return bxi_call_value(in, &cv, args, al->len, e->span, out);
        }
        if (path->segs.len == 2 && !strcmp(first, "Shape") && !strcmp(last, "new")) {
            if ((st = eval_args(in, al, &args)) != BXI_OK)
                return st;
            if (al->len == 0) {
                *out = bxv_shape_new(&in->scratch, 4);
                return BXI_OK;
            }
            BxvValue a0 = strip(args[0]);
            if (al->len == 1 && a0.kind == BXV_SHAPE) {
                *out = bxv_copy(&in->scratch, &a0);
                return BXI_OK;
            }
            bxi_error(in, BXI_E_ARITY, e->span, "`Shape::new` takes no argument or a shape literal");
            return BXI_ERR;
        }
        if (path->segs.len == 2 && !strcmp(first, "TensorSpec") && !strcmp(last, "new")) {
            if ((st = eval_args(in, al, &args)) != BXI_OK)
                return st;
            if (al->len != 2) {
                bxi_error(in, BXI_E_ARITY, e->span, "`TensorSpec::new` takes 2 arguments (shape, dtype) but %u %s given",
                          al->len, al->len == 1 ? "was" : "were");
                return BXI_ERR;
            }
            BxvValue s = strip(args[0]), d = strip(args[1]);
            if (s.kind != BXV_SHAPE) {
                bxi_error(in, BXI_E_TYPE, al->items[0]->span, "expected `Shape`, found `%s`", type_str(in, &s));
                return BXI_ERR;
            }
            if (d.kind != BXV_DTYPEV) {
                bxi_error(in, BXI_E_TYPE, al->items[1]->span, "expected `DType`, found `%s`", type_str(in, &d));
                return BXI_ERR;
            }
            *out = bxv_spec(&in->scratch, &s.u.shape, d.u.dtype);
            return BXI_OK;
        }
        const bxc_item *en;
        const bxc_variant *var2;
        bool is_meta;
        if (enum_variant_path(in, path, &en, &var2, &is_meta)) {
            if (!var2) {
                bxi_error(in, BXI_E_NAME, path->span, "enum `%s` has no variant `%s`",
                          path->segs.items[path->segs.len - 2].name, last);
                return BXI_ERR;
            }
            if (var2->kind != BXC_VARIANT_TUPLE || var2->fields.len != al->len) {
                bxi_error(in, BXI_E_ARITY, e->span, "variant `%s` takes %u positional field%s but %u %s given", last,
                          var2->kind == BXC_VARIANT_TUPLE ? var2->fields.len : 0,
                          var2->fields.len == 1 ? "" : "s", al->len, al->len == 1 ? "was" : "were");
                return BXI_ERR;
            }
            if ((st = eval_args(in, al, &args)) != BXI_OK)
                return st;
            for (uint32_t i = 0; i < al->len; i++)
                if (coerce_field(in, &args[i], var2->fields.items[i], is_meta, al->items[i]->span) != BXI_OK)
                    return BXI_ERR;
            *out = make_variant(in, path, var2, args, al->len);
            return BXI_OK;
        }
        bool meta_struct;
        const bxc_item *ts = single ? find_type(in, last, BXI_KIND(BXC_ITEM_STRUCT), &meta_struct) : NULL;
        if (ts && ts->struct_.is_tuple && !bxi_find_item(in, last, BXI_KIND(BXC_ITEM_FN), NULL)) {
            /* `S(a, b)` builds a tuple struct. */
            if (ts->struct_.fields.len != al->len) {
                bxi_error(in, BXI_E_ARITY, e->span, "`%s` has %u field%s but %u %s given", last,
                          ts->struct_.fields.len, ts->struct_.fields.len == 1 ? "" : "s", al->len,
                          al->len == 1 ? "was" : "were");
                return BXI_ERR;
            }
            if ((st = eval_args(in, al, &args)) != BXI_OK)
                return st;
            BxvValue r = {.kind = BXV_STRUCT};
            r.u.agg.type = last;
            r.u.agg.n = al->len;
            r.u.agg.fields = bxc_arena_alloc(&in->scratch, (al->len ? al->len : 1) * sizeof(BxvValue));
            for (uint32_t i = 0; i < al->len; i++) {
                if (coerce_field(in, &args[i], ts->struct_.fields.items[i], meta_struct, al->items[i]->span) != BXI_OK)
                    return BXI_ERR;
                r.u.agg.fields[i] = bxv_copy(&in->scratch, &args[i]);
            }
            *out = r;
            return BXI_OK;
        }
        uint32_t base;
        const bxc_item *fn = bxi_find_item(in, last, BXI_KIND(BXC_ITEM_FN), &base);
        if (fn) {
            if ((st = eval_args(in, al, &args)) != BXI_OK)
                return st;
            return call_fn(in, fn->fn, base, args, al->len, e->span, out);
        }
        if (single && !strcmp(last, "panic")) {
            /* panic("message") — the language's way to reject bad input in
             * metadata code: a located error carrying the message. */
            if ((st = eval_args(in, al, &args)) != BXI_OK)
                return st;
            BxvValue msg = al->len ? strip(args[0]) : bxv_unit();
            if (al->len != 1 || msg.kind != BXV_STR) {
                bxi_error(in, BXI_E_ARITY, e->span, "`%s` takes one string literal: %s(\"message\")", last, last);
                return BXI_ERR;
            }
            bxi_error(in, BXI_E_PANIC, e->span, "%s: %.*s", last, (int)msg.u.str.len, msg.u.str.s);
            return BXI_ERR;
        }
        bxi_error(in, BXI_E_NAME, path->span, "cannot find function `%s`", last);
        return BXI_ERR;
    }
    BxvValue cv;
    if ((st = bxi_eval_expr(in, callee, &cv)) != BXI_OK)
        return st;
    if ((st = eval_args(in, al, &args)) != BXI_OK)
        return st;
    cv = strip(cv);
    return bxi_call_value(in, &cv, args, al->len, e->span, out);
}

static bxi_status eval_path(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    const bxc_path *path = e->path;
    const char *last = path_last(path);
    if (path->segs.len == 1) {
        bxi_var *v = find_var(in, last);
        if (v) {
            /* Shallow: the value shares the variable's storage until it is
             * stored somewhere (binding and aggregates copy).  Rust's move
             * and borrow rules rule out mutating the variable in between
             * (`(s, { s[0] = 9; 1 })` uses `s` after moving it). */
            *out = *v->val;
            return BXI_OK;
        }
        if (bxi_find_item(in, last, BXI_KIND(BXC_ITEM_FN), NULL)) {
            BxvValue f = {.kind = BXV_FN};
            f.u.fn.name = last;
            *out = f;
            return BXI_OK;
        }
        const bxc_item *us = find_type(in, last, BXI_KIND(BXC_ITEM_STRUCT), NULL);
        if (us && us->struct_.is_unit) {
            /* `S` names the value of a unit struct. */
            *out = (BxvValue){.kind = BXV_STRUCT};
            out->u.agg.type = last;
            return BXI_OK;
        }
        bxi_error(in, BXI_E_NAME, e->span, "cannot find value `%s`", last);
        return BXI_ERR;
    }
    const char *first = path->segs.items[path->segs.len - 2].name;
    if (!strcmp(first, "DType")) {
        BxvDType d;
        if (bxv_dtype_from_name(last, strlen(last), &d)) {
            *out = bxv_dtype(d);
            return BXI_OK;
        }
        bxc_diag *dg = bxi_error(in, BXI_E_NAME, path->segs.items[path->segs.len - 1].span,
                                 "`DType` has no variant `%s`", last);
        bxc_diag_set_help(in->diags, dg, "the dtypes are F32, F64, F16, BF16, I32, I64, U8, Bool");
        return BXI_ERR;
    }
    const bxc_item *en;
    const bxc_variant *var;
    bool is_meta;
    if (enum_variant_path(in, path, &en, &var, &is_meta)) {
        if (!var) {
            bxi_error(in, BXI_E_NAME, path->span, "enum `%s` has no variant `%s`", first, last);
            return BXI_ERR;
        }
        if (var->kind != BXC_VARIANT_UNIT) {
            bxi_error(in, BXI_E_TYPE, path->span, "variant `%s::%s` needs its fields", first, last);
            return BXI_ERR;
        }
        *out = make_variant(in, path, var, NULL, 0);
        return BXI_OK;
    }
    /* `std::shape::broadcast` names a helper fn by its last segment. */
    if (bxi_find_item(in, last, BXI_KIND(BXC_ITEM_FN), NULL)) {
        BxvValue f = {.kind = BXV_FN};
        f.u.fn.name = last;
        *out = f;
        return BXI_OK;
    }
    bxi_error(in, BXI_E_NAME, e->span, "cannot find `%s`", last);
    return BXI_ERR;
}

/* ---- casts -------------------------------------------------------------- */

/* `e as T`.  Unlike Rust, which wraps or saturates, an `as` whose value does
 * not fit the target is an error: metadata that silently wraps would
 * describe a tensor that does not exist. */
static bxi_status eval_cast(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    BxvValue v;
    bxi_status st = bxi_eval_expr(in, e->cast.expr, &v);
    if (st != BXI_OK)
        return st;
    v = strip(v);
    BxvIntType ity;
    BxvFloatType fty;
    char buf[48];
    if (bxi_tyexpr_int(in, e->cast.type, &ity)) {
        __int128 x;
        if (v.kind == BXV_INT)
            x = v.u.i.v;
        else if (v.kind == BXV_BOOL)
            x = v.u.b;
        else if (v.kind == BXV_FLOAT) {
            double t = trunc(v.u.f.v);
            if (isnan(t) || t < -1.8e19 || t > 1.9e19) {
                bxi_error(in, BXI_E_OVERFLOW, e->span, "float value does not fit in `%s`", bxv_int_type_name(ity));
                return BXI_ERR;
            }
            x = (__int128)t;
        } else {
            bxi_error(in, BXI_E_TYPE, e->span, "cannot cast `%s` to `%s`", type_str(in, &v), bxv_int_type_name(ity));
            return BXI_ERR;
        }
        if (!bxv_int_fits(x, ity)) {
            if (x < 0 && !bxv_int_type_signed(ity))
                bxi_error(in, BXI_E_NEGATIVE, e->span, "negative value %s cannot be cast to `%s`", i128_str(buf, x),
                          bxv_int_type_name(ity));
            else
                bxi_error(in, BXI_E_OVERFLOW, e->span, "value %s does not fit in `%s`", i128_str(buf, x),
                          bxv_int_type_name(ity));
            return BXI_ERR;
        }
        *out = bxv_int(x, ity);
        return BXI_OK;
    }
    if (tyexpr_float(in, e->cast.type, &fty)) {
        if (v.kind == BXV_INT)
            *out = bxv_float((double)v.u.i.v, fty);
        else if (v.kind == BXV_FLOAT)
            *out = bxv_float(v.u.f.v, fty);
        else {
            bxi_error(in, BXI_E_TYPE, e->span, "cannot cast `%s` to `%s`", type_str(in, &v), bxv_float_type_name(fty));
            return BXI_ERR;
        }
        return BXI_OK;
    }
    bxi_error(in, BXI_E_TYPE, e->cast.type->span, "`as` converts only to integer and float types");
    return BXI_ERR;
}

/* ---- statements and blocks --------------------------------------------- */

static bxi_status eval_stmt(bxi_interp *in, const bxc_stmt *s)
{
    BxvValue v;
    bxi_status st;
    switch (s->kind) {
    case BXC_STMT_LET:
        if (!s->init) {
            /* `let x;` — later assignment needs a slot; unit marks it unset. */
            if (s->pat->kind == BXC_PAT_IDENT) {
                BxvValue u = bxv_unit();
                bxi_push_var(in, s->pat->name.name, true, &u);
                return BXI_OK;
            }
            bxi_error(in, BXI_E_UNSUPPORTED, s->span, "`let` without a value needs a plain name");
            return BXI_ERR;
        }
        if ((st = bxi_eval_expr(in, s->init, &v)) != BXI_OK)
            return st;
        if (s->type && bxi_coerce(in, &v, s->type, s->init->span) != BXI_OK)
            return BXI_ERR;
        return bind_pat(in, s->pat, &v);
    case BXC_STMT_EXPR:
        return bxi_eval_expr(in, s->expr, &v);
    case BXC_STMT_EMPTY:
        return BXI_OK;
    case BXC_STMT_ITEM:
        /* Nested items are registered by the caller (the REPL). */
        return BXI_OK;
    case BXC_STMT_ERROR:
        break;
    }
    bxi_error(in, BXI_E_UNSUPPORTED, s->span, "cannot evaluate a statement with syntax errors");
    return BXI_ERR;
}

static bxi_status eval_block(bxi_interp *in, const bxc_block *b, BxvValue *out)
{
    uint32_t mark = in->nvars;
    bxi_status st = BXI_OK;
    for (uint32_t i = 0; i < b->stmts.len && st == BXI_OK; i++)
        st = eval_stmt(in, b->stmts.items[i]);
    if (st == BXI_OK) {
        if (b->tail)
            st = bxi_eval_expr(in, b->tail, out);
        else
            *out = bxv_unit();
    }
    /* The block's value may point at its locals' storage: it lives in the
     * arena, so popping the variables does not invalidate it. */
    in->nvars = mark;
    return st;
}

static bxi_status eval_loop_body(bxi_interp *in, const bxc_block *body, bxc_span span, bool *stop)
{
    BxvValue v;
    if (step(in, span) != BXI_OK)
        return BXI_ERR;
    bxi_status st = eval_block(in, body, &v);
    *stop = st == BXI_BREAK;
    if (st == BXI_BREAK || st == BXI_CONT)
        return BXI_OK;
    return st;
}

static bxi_status eval_cond(bxi_interp *in, const bxc_expr *c, bool *out)
{
    BxvValue v;
    bxi_status st = bxi_eval_expr(in, c, &v);
    if (st != BXI_OK)
        return st;
    v = strip(v);
    if (v.kind != BXV_BOOL) {
        bxi_error(in, BXI_E_TYPE, c->span, "a condition must be a `bool`, found `%s`", type_str(in, &v));
        return BXI_ERR;
    }
    *out = v.u.b;
    return BXI_OK;
}

static bxi_status eval_for(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    const bxc_expr *it = e->for_.iter;
    *out = bxv_unit();
    if (it->kind != BXC_EXPR_RANGE || !it->range.start || !it->range.end) {
        bxi_error(in, BXI_E_UNSUPPORTED, it->span, "`for` iterates over a range `a..b` or `a..=b` only");
        return BXI_ERR;
    }
    BxvValue a, b;
    bxi_status st;
    if ((st = bxi_eval_expr(in, it->range.start, &a)) != BXI_OK)
        return st;
    if ((st = bxi_eval_expr(in, it->range.end, &b)) != BXI_OK)
        return st;
    a = strip(a);
    b = strip(b);
    if (a.kind != BXV_INT || b.kind != BXV_INT) {
        bxi_error(in, BXI_E_TYPE, it->span, "a range needs integer bounds, found `%s` and `%s`", type_str(in, &a),
                  type_str(in, &b));
        return BXI_ERR;
    }
    /* Unify the bound types (the literal side adopts the other's). */
    BxvValue cmp;
    if (int_binop(in, BXC_BIN_LE, a, b, it->span, &cmp) != BXI_OK)
        return BXI_ERR;
    BxvIntType ty = a.u.i.ty == BXV_ILIT ? b.u.i.ty : a.u.i.ty;
    __int128 end = b.u.i.v + (it->range.inclusive ? 1 : 0);
    for (__int128 i = a.u.i.v; i < end; i++) {
        uint32_t mark = in->nvars;
        BxvValue iv = bxv_int(i, ty);
        if ((st = bind_pat(in, e->for_.pat, &iv)) != BXI_OK)
            return st;
        bool stop;
        st = eval_loop_body(in, e->for_.body, it->span, &stop);
        in->nvars = mark;
        if (st != BXI_OK)
            return st;
        if (stop)
            break;
    }
    return BXI_OK;
}

/* ---- expressions ----------------------------------------------------------- */

/* Integer literal suffixes (`3usize`) fix the type; otherwise the checker's
 * recorded type would, and without one the literal adopts its context. */
static BxvIntType int_lit_type(const char *text)
{
    if (!text)
        return BXV_ILIT;
    const char *s = text;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X' || s[1] == 'b' || s[1] == 'B' || s[1] == 'o' || s[1] == 'O'))
        s += 2;
    for (; *s; s++) {
        if (*s == 'i' || *s == 'u') {
            BxvIntType t;
            if (bxv_int_type_from_name(s, strlen(s), &t))
                return t;
            break;
        }
    }
    return BXV_ILIT;
}

/* value.h's integer order mirrors the checker's, so kinds convert by cast. */
_Static_assert((int)BXC_I8 == (int)BXV_I8 && (int)BXC_ISIZE == (int)BXV_ISIZE && (int)BXC_U8 == (int)BXV_U8 &&
                   (int)BXC_USIZE == (int)BXV_USIZE && (int)BXC_INT_KIND_COUNT == (int)BXV_ILIT,
               "BxvIntType follows bxc_int_kind");

/* The checker's recorded type of a literal node, when it ran. */
static bool checked_int_type(const bxc_expr *e, BxvIntType *out)
{
    const bxc_type *t = e->ty;
    if (!t || t->kind != BXC_TYPE_INT)
        return false;
    *out = (BxvIntType)t->int_kind;
    return true;
}

static bool checked_float_type(const bxc_expr *e, BxvFloatType *out)
{
    const bxc_type *t = e->ty;
    if (!t || t->kind != BXC_TYPE_FLOAT)
        return false;
    *out = t->float_kind == BXC_F32 ? BXV_F32 : BXV_F64;
    return true;
}

static BxvFloatType float_lit_type(const char *text)
{
    size_t n = text ? strlen(text) : 0;
    if (n > 3 && !strcmp(text + n - 3, "f32"))
        return BXV_F32;
    if (n > 3 && !strcmp(text + n - 3, "f64"))
        return BXV_F64;
    return BXV_FLIT;
}

/* Each expression kind is its own function so the dispatcher's frame (one
 * per nesting level) stays small: sanitizer builds at -O0 give every local
 * of a big switch its own slot and red zones. */
static __attribute__((noinline)) bxi_status ev_int(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    BxvIntType t;
    if (!checked_int_type(e, &t))
        t = int_lit_type(e->int_lit.text);
    *out = bxv_int((__int128)e->int_lit.value, t);
    if (t != BXV_ILIT && !bxv_int_fits(out->u.i.v, t)) {
        bxi_error(in, BXI_E_OVERFLOW, e->span, "literal out of range for `%s`", bxv_int_type_name(t));
        return BXI_ERR;
    }
    return BXI_OK;
}

static __attribute__((noinline)) bxi_status ev_float(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    BxvFloatType t;
    if (!checked_float_type(e, &t))
        t = float_lit_type(e->float_lit.text);
    *out = bxv_float(e->float_lit.value, t);
    return BXI_OK;
}

static __attribute__((noinline)) bxi_status ev_string(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    *out = (BxvValue){.kind = BXV_STR};
    out->u.str.s = e->string_lit.value;
    out->u.str.len = e->string_lit.len;
    return BXI_OK;
}

static __attribute__((noinline)) bxi_status ev_bool(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    *out = bxv_bool(e->bool_lit);
    return BXI_OK;
}

static __attribute__((noinline)) bxi_status ev_unary(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    bxi_status st;
    BxvValue a;
    if (e->unary.op == BXC_UN_NEG && e->unary.operand->kind == BXC_EXPR_INT) {
        /* `-128` as an i8: negate before the range check. */
        const bxc_expr *lit = e->unary.operand;
        BxvIntType t;
        if (!checked_int_type(lit, &t) && !checked_int_type(e, &t))
            t = int_lit_type(lit->int_lit.text);
        __int128 v = -(__int128)lit->int_lit.value;
        if (!bxv_int_fits(v, t)) {
            char buf[48];
            bxi_error(in, !bxv_int_type_signed(t) ? BXI_E_NEGATIVE : BXI_E_OVERFLOW, e->span,
                      "literal %s is out of range for `%s`", i128_str(buf, v), bxv_int_type_name(t));
            return BXI_ERR;
        }
        *out = bxv_int(v, t);
        return BXI_OK;
    }
    if (e->unary.op == BXC_UN_REF_MUT) {
        bxi_error(in, BXI_E_UNSUPPORTED, e->span, "`&mut` is not part of the metadata language");
        return BXI_ERR;
    }
    if ((st = bxi_eval_expr(in, e->unary.operand, &a)) != BXI_OK)
        return st;
    switch (e->unary.op) {
    case BXC_UN_REF:
        if (a.refs == 255) {
            bxi_error(in, BXI_E_UNSUPPORTED, e->span, "too many levels of reference");
            return BXI_ERR;
        }
        a.refs++;
        *out = a;
        return BXI_OK;
    case BXC_UN_DEREF:
        if (a.refs == 0) {
            bxi_error(in, BXI_E_TYPE, e->span, "`%s` is not a reference and cannot be dereferenced",
                      type_str(in, &a));
            return BXI_ERR;
        }
        a.refs--;
        *out = a;
        return BXI_OK;
    case BXC_UN_NOT:
        a = strip(a);
        if (a.kind == BXV_BOOL) {
            *out = bxv_bool(!a.u.b);
            return BXI_OK;
        }
        if (a.kind == BXV_INT && a.u.i.ty != BXV_ILIT) {
            /* Bitwise not within the type's width. */
            __int128 r = bxv_int_type_signed(a.u.i.ty) ? ~a.u.i.v : 0;
            if (!bxv_int_type_signed(a.u.i.ty)) {
                __int128 max = a.u.i.ty == BXV_U8 ? UINT8_MAX : a.u.i.ty == BXV_U16 ? UINT16_MAX
                             : a.u.i.ty == BXV_U32 ? UINT32_MAX : (__int128)UINT64_MAX;
                r = max - a.u.i.v;
            }
            *out = bxv_int(r, a.u.i.ty);
            return BXI_OK;
        }
        bxi_error(in, BXI_E_TYPE, e->span, "cannot apply `!` to `%s`", type_str(in, &a));
        return BXI_ERR;
    case BXC_UN_NEG:
        a = strip(a);
        if (a.kind == BXV_FLOAT) {
            *out = bxv_float(-a.u.f.v, a.u.f.ty);
            return BXI_OK;
        }
        if (a.kind == BXV_INT) {
            if (a.u.i.ty != BXV_ILIT && !bxv_int_type_signed(a.u.i.ty)) {
                bxi_error(in, BXI_E_NEGATIVE, e->span, "cannot negate a value of unsigned type `%s`",
                          bxv_int_type_name(a.u.i.ty));
                return BXI_ERR;
            }
            if (!bxv_int_fits(-a.u.i.v, a.u.i.ty)) {
                char buf[48];
                bxi_error(in, BXI_E_OVERFLOW, e->span, "attempt to negate with overflow: -(%s) does not fit in `%s`",
                          i128_str(buf, a.u.i.v), bxv_int_type_name(a.u.i.ty));
                return BXI_ERR;
            }
            *out = bxv_int(-a.u.i.v, a.u.i.ty);
            return BXI_OK;
        }
        bxi_error(in, BXI_E_TYPE, e->span, "cannot negate `%s`", type_str(in, &a));
        return BXI_ERR;
    default:
        break;
    }
    return BXI_ERR;
}

static __attribute__((noinline)) bxi_status ev_binary(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    bxi_status st;
    BxvValue a, b;
    if (e->binary.op == BXC_BIN_AND || e->binary.op == BXC_BIN_OR) {
        bool x, y;
        if ((st = eval_cond(in, e->binary.lhs, &x)) != BXI_OK)
            return st;
        if (x == (e->binary.op == BXC_BIN_OR)) {
            *out = bxv_bool(x);
            return BXI_OK;
        }
        if ((st = eval_cond(in, e->binary.rhs, &y)) != BXI_OK)
            return st;
        *out = bxv_bool(y);
        return BXI_OK;
    }
    if ((st = bxi_eval_expr(in, e->binary.lhs, &a)) != BXI_OK)
        return st;
    if ((st = bxi_eval_expr(in, e->binary.rhs, &b)) != BXI_OK)
        return st;
    return binop(in, e->binary.op, a, b, e->span, out);
}

static __attribute__((noinline)) bxi_status ev_assign(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    bxi_status st;
    BxvValue a, b;
    if ((st = bxi_eval_expr(in, e->assign.value, &b)) != BXI_OK)
        return st;
    place p;
    if ((st = eval_place(in, e->assign.target, true, &p)) != BXI_OK)
        return st;
    if (e->assign.op != BXC_BIN_NONE) {
        a = place_load(in, &p);
        if (binop(in, e->assign.op, a, b, e->span, &b) != BXI_OK)
            return BXI_ERR;
    }
    *out = bxv_unit();
    return place_store(in, &p, b, e->span);
}

static __attribute__((noinline)) bxi_status ev_field(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    bxi_status st;
    BxvValue a;
    if ((st = bxi_eval_expr(in, e->field.object, &a)) != BXI_OK)
        return st;
    BxvValue o = strip(a);
    const char *f = e->field.name.name;
    if (o.kind == BXV_SPEC && !strcmp(f, "shape")) {
        *out = (BxvValue){.kind = BXV_SHAPE};
        out->u.shape = o.u.spec.shape;
        out->refs = a.refs;     /* a field of a reference is borrowed */
        return BXI_OK;
    }
    if (o.kind == BXV_SPEC && !strcmp(f, "dtype")) {
        *out = bxv_dtype(o.u.spec.dtype);
        return BXI_OK;
    }
    if ((o.kind == BXV_STRUCT || o.kind == BXV_ENUM) && o.u.agg.names) {
        for (size_t i = 0; i < o.u.agg.n; i++) {
            if (name_is(o.u.agg.names[i], f)) {
                *out = o.u.agg.fields[i];
                if (!out->refs)
                    out->refs = a.refs;
                return BXI_OK;
            }
        }
    }
    bxi_error(in, BXI_E_NAME, e->field.name.span, "no field `%s` on a value of type `%s`", f, type_str(in, &o));
    return BXI_ERR;
}

static __attribute__((noinline)) bxi_status ev_tuple_field(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    bxi_status st;
    BxvValue a;
    if ((st = bxi_eval_expr(in, e->tuple_field.object, &a)) != BXI_OK)
        return st;
    BxvValue o = strip(a);
    uint32_t k = e->tuple_field.index;
    if (o.kind == BXV_TUPLE && k < o.u.tuple.n) {
        *out = o.u.tuple.items[k];
        return BXI_OK;
    }
    if ((o.kind == BXV_STRUCT || o.kind == BXV_ENUM) && !o.u.agg.braces && k < o.u.agg.n) {
        *out = o.u.agg.fields[k];
        return BXI_OK;
    }
    bxi_error(in, BXI_E_INDEX, e->tuple_field.index_span, "no field `%u` on a value of type `%s`", k,
              type_str(in, &o));
    return BXI_ERR;
}

static __attribute__((noinline)) bxi_status ev_index(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    bxi_status st;
    BxvValue a, b;
    if ((st = bxi_eval_expr(in, e->index.object, &a)) != BXI_OK)
        return st;
    if ((st = bxi_eval_expr(in, e->index.index, &b)) != BXI_OK)
        return st;
    a = strip(a);
    if (a.kind != BXV_SHAPE) {
        bxi_error(in, BXI_E_TYPE, e->index.object->span, "only a `Shape` can be indexed, found `%s`",
                  type_str(in, &a));
        return BXI_ERR;
    }
    uint64_t idx;
    if (to_index(in, b, e->index.index->span, "an index", &idx) != BXI_OK)
        return BXI_ERR;
    if (idx >= a.u.shape.len) {
        bxi_error(in, BXI_E_INDEX, e->span, "index %llu is out of range for a shape of rank %zu",
                  (unsigned long long)idx, a.u.shape.len);
        return BXI_ERR;
    }
    *out = bxv_int(a.u.shape.dims[idx], BXV_USIZE);
    return BXI_OK;
}

static __attribute__((noinline)) bxi_status ev_if(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    bxi_status st;
    bool c;
    if ((st = eval_cond(in, e->if_.cond, &c)) != BXI_OK)
        return st;
    if (c)
        return eval_block(in, e->if_.then_block, out);
    if (e->if_.else_)
        return bxi_eval_expr(in, e->if_.else_, out);
    *out = bxv_unit();
    return BXI_OK;
}

static __attribute__((noinline)) bxi_status ev_while(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    bxi_status st;
    *out = bxv_unit();
    for (;;) {
        bool c, stop;
        if ((st = eval_cond(in, e->while_.cond, &c)) != BXI_OK)
            return st;
        if (!c)
            return BXI_OK;
        if ((st = eval_loop_body(in, e->while_.body, e->while_.cond->span, &stop)) != BXI_OK)
            return st;
        if (stop)
            return BXI_OK;
    }
}

static __attribute__((noinline)) bxi_status ev_loop(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    bxi_status st;
    *out = bxv_unit();
    for (;;) {
        bool stop;
        if ((st = eval_loop_body(in, e->loop_.body, e->span, &stop)) != BXI_OK)
            return st;
        if (stop)
            return BXI_OK;
    }
}

static __attribute__((noinline)) bxi_status ev_return(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    bxi_status st;
    BxvValue a;
    if (e->ret.value) {
        if ((st = bxi_eval_expr(in, e->ret.value, &a)) != BXI_OK)
            return st;
        in->ret = a;
    } else {
        in->ret = bxv_unit();
    }
    return BXI_RET;
}

static __attribute__((noinline)) bxi_status ev_tuple(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    bxi_status st;
    BxvValue a;
    uint32_t n = e->tuple.elems.len;
    BxvValue r = {.kind = n ? BXV_TUPLE : BXV_UNIT};
    if (n) {
        r.u.tuple.n = n;
        r.u.tuple.items = bxc_arena_alloc(&in->scratch, n * sizeof(BxvValue));
        for (uint32_t i = 0; i < n; i++) {
            if ((st = bxi_eval_expr(in, e->tuple.elems.items[i], &a)) != BXI_OK)
                return st;
            r.u.tuple.items[i] = bxv_copy(&in->scratch, &a);
        }
    }
    *out = r;
    return BXI_OK;
}

static __attribute__((noinline)) bxi_status ev_array(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    bxi_status st;
    BxvValue a;
    /* `[2, 3]` is a shape literal: its elements are `usize` dims. */
    BxvValue s = bxv_shape_new(&in->scratch, e->array.elems.len);
    for (uint32_t i = 0; i < e->array.elems.len; i++) {
        uint64_t d;
        if ((st = bxi_eval_expr(in, e->array.elems.items[i], &a)) != BXI_OK)
            return st;
        if (to_index(in, a, e->array.elems.items[i]->span, "a shape dimension", &d) != BXI_OK)
            return BXI_ERR;
        bxv_shape_push(&in->scratch, &s.u.shape, d);
    }
    *out = s;
    return BXI_OK;
}

static __attribute__((noinline)) bxi_status ev_closure(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    /* Capture the defining frame by value (closures cannot mutate their
     * captures: there is no `&mut`, and `move` semantics copy). */
    bxi_capture *cap = bxc_arena_alloc(&in->scratch, sizeof *cap);
    cap->n = in->nvars - in->frame_start;
    cap->base = in->base;
    cap->vars = bxc_arena_alloc(&in->scratch, (cap->n ? cap->n : 1) * sizeof *cap->vars);
    for (uint32_t i = 0; i < cap->n; i++) {
        const bxi_var *v = &in->vars[in->frame_start + i];
        BxvValue *slot = bxc_arena_alloc(&in->scratch, sizeof *slot);
        *slot = bxv_copy(&in->scratch, v->val);
        cap->vars[i] = (bxi_var){v->name, v->is_mut, slot};
    }
    *out = (BxvValue){.kind = BXV_CLOSURE};
    out->u.closure.node = e;
    out->u.closure.env = cap;
    return BXI_OK;
}

static __attribute__((noinline)) bxi_status ev_range(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    bxi_error(in, BXI_E_UNSUPPORTED, e->span, "a range is only allowed as the iterable of `for`");
    return BXI_ERR;
}

static bxi_status eval_expr_inner(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    switch (e->kind) {
    case BXC_EXPR_INT:
        return ev_int(in, e, out);
    case BXC_EXPR_FLOAT:
        return ev_float(in, e, out);
    case BXC_EXPR_STRING:
        return ev_string(in, e, out);
    case BXC_EXPR_BOOL:
        return ev_bool(in, e, out);
    case BXC_EXPR_PATH:
        return eval_path(in, e, out);
    case BXC_EXPR_UNARY:
        return ev_unary(in, e, out);
    case BXC_EXPR_BINARY:
        return ev_binary(in, e, out);
    case BXC_EXPR_ASSIGN:
        return ev_assign(in, e, out);
    case BXC_EXPR_CAST:
        return eval_cast(in, e, out);
    case BXC_EXPR_CALL:
        return call_expr(in, e, out);
    case BXC_EXPR_METHOD_CALL:
        return method_call(in, e, out);
    case BXC_EXPR_FIELD:
        return ev_field(in, e, out);
    case BXC_EXPR_TUPLE_FIELD:
        return ev_tuple_field(in, e, out);
    case BXC_EXPR_INDEX:
        return ev_index(in, e, out);
    case BXC_EXPR_BLOCK:
        return eval_block(in, e->block, out);
    case BXC_EXPR_IF:
        return ev_if(in, e, out);
    case BXC_EXPR_WHILE:
        return ev_while(in, e, out);
    case BXC_EXPR_LOOP:
        return ev_loop(in, e, out);
    case BXC_EXPR_FOR:
        return eval_for(in, e, out);
    case BXC_EXPR_BREAK:
        return BXI_BREAK;
    case BXC_EXPR_CONTINUE:
        return BXI_CONT;
    case BXC_EXPR_RETURN:
        return ev_return(in, e, out);
    case BXC_EXPR_STRUCT:
        return eval_struct_lit(in, e, out);
    case BXC_EXPR_TUPLE:
        return ev_tuple(in, e, out);
    case BXC_EXPR_ARRAY:
        return ev_array(in, e, out);
    case BXC_EXPR_CLOSURE:
        return ev_closure(in, e, out);
    case BXC_EXPR_RANGE:
        return ev_range(in, e, out);
    case BXC_EXPR_ERROR:
    case BXC_EXPR_KIND_COUNT:
        break;
    }
    bxi_error(in, BXI_E_UNSUPPORTED, e->span, "cannot evaluate an expression with syntax errors");
    return BXI_ERR;
}

bxi_status bxi_eval_expr(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    if (in->stack_base > here && in->stack_base - here > in->lim.max_stack_bytes) {
        bxc_diag *d = bxi_error(in, BXI_E_RECURSION, e->span,
                                "evaluation nested too deeply (more than %zu KiB of stack)",
                                in->lim.max_stack_bytes >> 10);
        bxc_diag_set_help(in->diags, d, "split the expression with `let` bindings, or recurse less deeply");
        return BXI_ERR;
    }
    return eval_expr_inner(in, e, out);
}

/* ---- public entry points -------------------------------------------------- */

static bool finish(bxi_interp *in, bxi_status st, BxvValue *out, bxc_span span)
{
    if (st == BXI_RET) {
        *out = in->ret;
        return true;
    }
    if (st == BXI_BREAK || st == BXI_CONT) {
        bxi_error(in, BXI_E_TYPE, span, "`break`/`continue` outside of a loop");
        return false;
    }
    return st == BXI_OK;
}

bool bxi_eval(bxi_interp *in, const bxc_expr *e, uint32_t file_base, const bxi_env *env, BxvValue *out)
{
    bxi_reset(in);
    in->base = file_base;
    bxi_push_env(in, env);
    return finish(in, bxi_eval_expr(in, e, out), out, e->span);
}

bool bxi_eval_repl(bxi_interp *in, const bxc_block *blk, uint32_t file_base, bxi_env *env, BxvValue *out,
                   bool *has_value)
{
    bxi_reset(in);
    in->base = file_base;
    *has_value = false;
    bxi_push_env(in, env);
    bxi_status st = BXI_OK;
    /* No scope of its own: top-level `let`s stay visible for the write-back. */
    for (uint32_t i = 0; i < blk->stmts.len && st == BXI_OK; i++)
        st = eval_stmt(in, blk->stmts.items[i]);
    if (st == BXI_OK && blk->tail) {
        st = bxi_eval_expr(in, blk->tail, out);
        *has_value = st == BXI_OK;
    }
    if (!finish(in, st, out, blk->span))
        return false;
    if (st == BXI_RET)
        *has_value = true;
    /* Persist the top-level variables (new lets and mutated bindings). */
    for (uint32_t i = 0; i < in->nvars; i++) {
        const bxi_var *v = &in->vars[i];
        if (v->val->kind == BXV_CLOSURE) {
            /* A closure points into this line's syntax tree, which is
             * discarded after the line; it cannot outlive it. */
            bxc_diag_add(in->diags, BXC_SEV_WARNING, BXI_E_UNSUPPORTED, bxc_span_none(),
                         "`%s` holds a closure, which the REPL does not keep past the line", v->name);
            continue;
        }
        bxi_env_set(env, v->name, v->is_mut, v->val);
    }
    /* The out value may live in the scratch arena; the caller prints it
     * before the next evaluation. */
    return true;
}

bool bxi_call_fn(bxi_interp *in, const char *name, const BxvValue *args, uint32_t nargs, BxvValue *out)
{
    bxi_reset(in);
    uint32_t base;
    const bxc_item *it = bxi_find_item(in, name, BXI_KIND(BXC_ITEM_FN), &base);
    if (!it) {
        bxc_diag_add(in->diags, BXC_SEV_ERROR, BXI_E_NAME, bxc_span_none(), "cannot find function `%s`", name);
        return false;
    }
    BxvValue *copies = bxc_arena_alloc(&in->scratch, (nargs ? nargs : 1) * sizeof *copies);
    for (uint32_t i = 0; i < nargs; i++)
        copies[i] = bxv_copy(&in->scratch, &args[i]);
    in->base = base;
    return call_fn(in, it->fn, base, copies, nargs, it->fn->name.span, out) == BXI_OK;
}
