/* lower_kir.c — one instantiation of a checked `#[cube]` kernel -> the
 * kernel IR (runtime/kir/bxk.h), with the bxk_ builder.
 *
 * The checker (check_cube.c) has typed every node and recorded what every
 * name means (cube.h); this file maps those facts onto IR, instantiating
 * the type parameters and comptime parameters of one instantiation:
 *   - `let x = e` is e's value; `let mut x` is an IR local (get/set), so
 *     structured control flow needs no phis;
 *   - `while c { b }` is `loop { if c {} else { break } b }`;
 *   - `a && b` / `a || b` evaluate b only when needed (b may load past an
 *     end that a guards), through a bool local;
 *   - an `if` or block with a value goes through a local too;
 *   - code after `break`/`continue`/`return` in the same block is not
 *     emitted (the IR forbids it and it never runs);
 *   - a `#[cube(helper)]` call is its body inlined at the call, in a
 *     context of its own (lk with a parent): its tensor parameters are the
 *     caller's bindings, its scalars the arguments' values, its type
 *     parameters the IR types the call gave them.
 * Every instruction carries the span of the expression it comes from. The
 * result must pass bxk_verify: a `sync_cube` the verifier rejects becomes
 * the located error E0805, anything else it rejects is our bug (E0809). */
#include <stdlib.h>
#include <string.h>

#include "bxk.h"
#include "check_internal.h"
#include "cube.h"

typedef struct lk {
    bxc_unit *u;
    const bxc_cube_kernel *ck;
    uint32_t inst;
    struct bxk_kernel *k;
    const struct lk *parent;  /* inlining a helper: the caller's context */
    const enum bxk_type *gsub;/* helper: IR type of each type parameter */
    const int *bindmap;       /* helper: binding index of each tensor parameter */
    bxk_val *val;             /* per var id: LET / INDEX value */
    int *slot;                /* per var id: MUT local, SHARED array */
    bool dead;                /* a jump ended the current IR block */
    bool failed;              /* a located error was reported */
} lk;

static struct bxk_loc loc_of(bxc_span s) {
    struct bxk_loc l = {s.file, s.offset, s.length};
    return l;
}

static bxc_span span_of(struct bxk_loc l) {
    bxc_span s = {l.file, l.off, l.len};
    return s;
}

unsigned bxc_cube_concrete_type(bxc_type *t) {
    t = bxc_type_resolve(t);
    if (!t) return BXK_VOID;
    switch (t->kind) {
    case BXC_TYPE_BOOL: return BXK_BOOL;
    case BXC_TYPE_FLOAT:
        switch (t->float_kind) {
        case BXC_F32: return BXK_F32;
        case BXC_F64: return BXK_F64;
        case BXC_F16: return BXK_F16;
        case BXC_BF16: return BXK_BF16;
        default: return BXK_VOID;
        }
    case BXC_TYPE_INT:
        switch (t->int_kind) {
        case BXC_U8: return BXK_U8;
        case BXC_I32: return BXK_I32;
        case BXC_U32: return BXK_U32;
        case BXC_I64: return BXK_I64;
        default: return BXK_VOID;
        }
    default: return BXK_VOID;
    }
}

/* The IR type of a recorded front-end type in this instantiation. */
static enum bxk_type ir_type(const lk *L, bxc_type *t) {
    t = bxc_type_resolve(t);
    if (t && t->kind == BXC_TYPE_GENERIC) {
        for (uint32_t g = 0; g < L->ck->ngenerics; g++)
            if (strcmp(L->ck->generics[g].name, t->generic_name) == 0)
                return L->gsub ? L->gsub[g] : (enum bxk_type)bxc_cube_instance_dtype(L->ck, L->inst, g);
        return BXK_VOID;
    }
    return (enum bxk_type)bxc_cube_concrete_type(t);
}

static bool is_value_type(enum bxk_type t) { return t != BXK_VOID; }

static void fail(lk *L, bxc_diag_code code, bxc_span span, const char *msg) {
    bxc_diag_error(&L->u->diags, code, span, "%s", msg);
    L->failed = true;
}

/* ---- constants -------------------------------------------------------------- */

/* An integer constant of type t; floats take the value too (a Numeric
 * kernel instantiated at f32 sees `1` as 1.0). */
static bxk_val const_int(lk *L, struct bxk_builder *b, enum bxk_type t, int64_t v, bxc_span span) {
    if (bxk_type_is_float(t)) return bxk_const_f(b, t, (double)v);
    union bxk_lit in = {.i = v};
    union bxk_lit norm = bxk_lit_norm(t, in);
    if (norm.i != v) {
        char msg[160];
        snprintf(msg, sizeof msg, "the literal %lld does not fit `%s` in kernel `%s`", (long long)v,
                 bxk_type_name(t), bxc_cube_instance_name(&L->u->arena, L->ck, L->inst));
        fail(L, CHK_E_MISMATCH, span, msg);
    }
    return bxk_const_i(b, t, v);
}

/* Value of a constant expression (checked: literals, comptime parameters,
 * arithmetic), computed with the IR's own scalar semantics in u32. */
static bool const_u32(lk *L, const bxc_expr *e, uint32_t *out) {
    union bxk_lit r = {.u = 0};
    switch (e->kind) {
    case BXC_EXPR_INT:
        if (e->int_lit.value > UINT32_MAX) return false;
        *out = (uint32_t)e->int_lit.value;
        return true;
    case BXC_EXPR_PATH: {
        bxc_cube_var *v = bxc_cube_use_of(L->ck, e);
        if (!v || v->kind != BXC_CUBE_COMPTIME) return false;
        int64_t x = bxc_cube_instance_value(L->ck, L->inst, v->slot);
        if (x < 0 || x > UINT32_MAX) return false;
        *out = (uint32_t)x;
        return true;
    }
    case BXC_EXPR_BINARY: {
        uint32_t a, b;
        if (!const_u32(L, e->binary.lhs, &a) || !const_u32(L, e->binary.rhs, &b)) return false;
        static const enum bxk_op ops[] = {[BXC_BIN_ADD] = BXK_OP_ADD, [BXC_BIN_SUB] = BXK_OP_SUB,
                                          [BXC_BIN_MUL] = BXK_OP_MUL, [BXC_BIN_DIV] = BXK_OP_DIV,
                                          [BXC_BIN_REM] = BXK_OP_REM};
        if (e->binary.op < BXC_BIN_ADD || e->binary.op > BXC_BIN_REM) return false;
        union bxk_lit x = {.u = a}, y = {.u = b};
        if (!bxk_eval_bin(ops[e->binary.op], BXK_U32, x, y, &r)) return false;
        *out = (uint32_t)r.u;
        return true;
    }
    default: return false;
    }
}

/* ---- expressions ------------------------------------------------------------------ */

static bxk_val lexpr(lk *L, struct bxk_builder *b, const bxc_expr *e);
static bxk_val lblock(lk *L, struct bxk_builder *b, const bxc_block *blk);

static enum bxk_op binop_ir(bxc_binop op) {
    switch (op) {
    case BXC_BIN_ADD: return BXK_OP_ADD;
    case BXC_BIN_SUB: return BXK_OP_SUB;
    case BXC_BIN_MUL: return BXK_OP_MUL;
    case BXC_BIN_DIV: return BXK_OP_DIV;
    case BXC_BIN_REM: return BXK_OP_REM;
    case BXC_BIN_BITAND: return BXK_OP_AND;
    case BXC_BIN_BITOR: return BXK_OP_OR;
    case BXC_BIN_BITXOR: return BXK_OP_XOR;
    case BXC_BIN_EQ: return BXK_OP_EQ;
    case BXC_BIN_NE: return BXK_OP_NE;
    case BXC_BIN_LT: return BXK_OP_LT;
    case BXC_BIN_LE: return BXK_OP_LE;
    case BXC_BIN_GT: return BXK_OP_GT;
    case BXC_BIN_GE: return BXK_OP_GE;
    default: return BXK_OP_COUNT;
    }
}

/* Builder positioned in a nested block, same location. */
static struct bxk_builder nested(struct bxk_builder *b, struct bxk_block *blk) {
    struct bxk_builder nb = bxk_builder_at(b->k, blk);
    nb.loc = b->loc;
    return nb;
}

/* `a && b`, `a || b`: b runs only when it decides. */
static bxk_val short_circuit(lk *L, struct bxk_builder *b, const bxc_expr *e) {
    bxk_val a = lexpr(L, b, e->binary.lhs);
    int tmp = bxk_add_local(L->k, BXK_BOOL);
    b->loc = loc_of(e->span);
    bxk_set(b, tmp, a);
    struct bxk_block *then_blk, *else_blk;
    bxk_if(b, a, &then_blk, &else_blk);
    struct bxk_builder nb = nested(b, e->binary.op == BXC_BIN_AND ? then_blk : else_blk);
    bxk_val r = lexpr(L, &nb, e->binary.rhs);
    L->dead = false;
    nb.loc = loc_of(e->span);
    bxk_set(&nb, tmp, r);
    return bxk_get(b, tmp);
}

/* The IR binding of a tensor variable of this context. */
static int bslot(const lk *L, const bxc_cube_var *v) { return L->bindmap ? L->bindmap[v->slot] : (int)v->slot; }

/* The element index of `t[i]`: u32 already (checked). */
static bxk_val store_to(lk *L, struct bxk_builder *b, const bxc_expr *target, bxk_val index,
                        bxk_val v) {
    bxc_cube_var *var = bxc_cube_use_of(L->ck, target->index.object);
    b->loc = loc_of(target->span);
    if (var->kind == BXC_CUBE_TENSOR) bxk_store(b, bslot(L, var), index, v);
    else bxk_sstore(b, L->slot[var->id], index, v);
    return 0;
}

static bxk_val load_from(lk *L, struct bxk_builder *b, const bxc_expr *target, bxk_val index) {
    bxc_cube_var *var = bxc_cube_use_of(L->ck, target->index.object);
    b->loc = loc_of(target->span);
    if (var->kind == BXC_CUBE_TENSOR) return bxk_load(b, bslot(L, var), index);
    return bxk_sload(b, L->slot[var->id], index);
}

static bxk_val assign(lk *L, struct bxk_builder *b, const bxc_expr *e) {
    const bxc_expr *t = e->assign.target;
    enum bxk_op op = e->assign.op == BXC_BIN_NONE ? BXK_OP_COUNT : binop_ir(e->assign.op);
    if (t->kind == BXC_EXPR_INDEX) {
        bxk_val index = lexpr(L, b, t->index.index);
        bxk_val v = lexpr(L, b, e->assign.value);
        if (op != BXK_OP_COUNT) {
            bxk_val old = load_from(L, b, t, index);
            b->loc = loc_of(e->span);
            v = bxk_bin(b, op, old, v);
        }
        return store_to(L, b, t, index, v);
    }
    bxc_cube_var *var = bxc_cube_use_of(L->ck, t);
    if (!var || var->kind != BXC_CUBE_MUT) return 0;   /* checked: never */
    bxk_val v = lexpr(L, b, e->assign.value);
    b->loc = loc_of(e->span);
    if (op != BXK_OP_COUNT) v = bxk_bin(b, op, bxk_get(b, L->slot[var->id]), v);
    bxk_set(b, L->slot[var->id], v);
    return 0;
}

static bxk_val path_value(lk *L, struct bxk_builder *b, const bxc_expr *e) {
    bxc_cube_var *v = bxc_cube_use_of(L->ck, e);
    b->loc = loc_of(e->span);
    if (!v) return bxk_topo(b, (enum bxk_topo)bxc_cube_topo(e->path->segs.items[0].name));
    switch (v->kind) {
    case BXC_CUBE_SCALAR: return L->parent ? L->val[v->id] : bxk_scalar(b, (int)v->slot); /* helper: the argument */
    case BXC_CUBE_COMPTIME:
        return const_int(L, b, ir_type(L, v->type), bxc_cube_instance_value(L->ck, L->inst, v->slot),
                         e->span);
    case BXC_CUBE_LET: case BXC_CUBE_INDEX: return L->val[v->id];
    case BXC_CUBE_MUT: return bxk_get(b, L->slot[v->id]);
    default: return 0;   /* tensors and shared arrays are not values (checked) */
    }
}

static bxk_val intrinsic(lk *L, struct bxk_builder *b, const bxc_expr *e, const char *name,
                         const bxc_expr *const *args, uint32_t n) {
    bxk_val a[2] = {0, 0};
    for (uint32_t i = 0; i < n && i < 2; i++) a[i] = lexpr(L, b, args[i]);
    enum bxk_op op = (enum bxk_op)bxc_cube_intrinsic(name, NULL, NULL);
    b->loc = loc_of(e->span);
    return n == 2 ? bxk_bin(b, op, a[0], a[1]) : bxk_un(b, op, a[0]);
}

static bxk_val method(lk *L, struct bxk_builder *b, const bxc_expr *e) {
    const char *m = e->method_call.method.name;
    bxc_cube_var *v = bxc_cube_use_of(L->ck, e->method_call.receiver);
    if (v && v->kind == BXC_CUBE_TENSOR) {
        b->loc = loc_of(e->span);
        if (strcmp(m, "len") == 0) return bxk_len(b, bslot(L, v));
        if (strcmp(m, "rank") == 0) return bxk_rank(b, bslot(L, v));
        bxk_val axis = lexpr(L, b, e->method_call.args.items[0]);
        b->loc = loc_of(e->span);
        return strcmp(m, "shape") == 0 ? bxk_shape(b, bslot(L, v), axis)
                                       : bxk_stride(b, bslot(L, v), axis);
    }
    const bxc_expr *args[2] = {e->method_call.receiver,
                               e->method_call.args.len ? e->method_call.args.items[0] : NULL};
    return intrinsic(L, b, e, m, (const bxc_expr *const *)args, 1 + e->method_call.args.len);
}

/* A value-producing construct (if / block) writes its value into a local. */
static bxk_val if_expr(lk *L, struct bxk_builder *b, const bxc_expr *e) {
    enum bxk_type t = ir_type(L, e->ty);
    int tmp = is_value_type(t) ? bxk_add_local(L->k, t) : -1;
    bxk_val c = lexpr(L, b, e->if_.cond);
    b->loc = loc_of(e->span);
    struct bxk_block *then_blk, *else_blk;
    bxk_if(b, c, &then_blk, &else_blk);
    struct bxk_builder tb = nested(b, then_blk);
    bxk_val tv = lblock(L, &tb, e->if_.then_block);
    if (tmp >= 0 && !L->dead && tv) bxk_set(&tb, tmp, tv);
    L->dead = false;
    if (e->if_.else_) {
        struct bxk_builder eb = nested(b, else_blk);
        bxk_val ev = lexpr(L, &eb, e->if_.else_);
        if (tmp >= 0 && !L->dead && ev) bxk_set(&eb, tmp, ev);
        L->dead = false;
    }
    return tmp >= 0 ? bxk_get(b, tmp) : 0;
}

static bxk_val for_expr(lk *L, struct bxk_builder *b, const bxc_expr *e) {
    const bxc_expr *iter = e->for_.iter, *step_e = NULL;
    if (iter->kind == BXC_EXPR_METHOD_CALL) {
        step_e = iter->method_call.args.items[0];
        iter = iter->method_call.receiver;
    }
    enum bxk_type t = ir_type(L, iter->range.start->ty);
    bxk_val lo = lexpr(L, b, iter->range.start);
    bxk_val hi = lexpr(L, b, iter->range.end);
    b->loc = loc_of(iter->span);
    if (iter->range.inclusive) hi = bxk_bin(b, BXK_OP_ADD, hi, bxk_const_i(b, t, 1));
    uint32_t step = 1;
    if (step_e && (!const_u32(L, step_e, &step) || step == 0)) {
        fail(L, CHK_E_CUBE_CONST, step_e->span, "the step of `step_by` must be a constant > 0");
        step = 1;
    }
    bxk_val st = const_int(L, b, t, step, step_e ? step_e->span : iter->span);
    b->loc = loc_of(e->span);
    struct bxk_block *body;
    bxk_val i = bxk_for(b, lo, hi, st, &body);
    bxc_cube_var *v = bxc_cube_use_of(L->ck, e->for_.pat);
    if (v) L->val[v->id] = i;
    struct bxk_builder nb = nested(b, body);
    lblock(L, &nb, e->for_.body);
    L->dead = false;
    return 0;
}

/* h(args): the arguments in the caller's context, left to right, then
 * h's body in its own context; its value is the body's. */
static bxk_val inline_call(lk *L, struct bxk_builder *b, const bxc_expr *e, const bxc_cube_call *call) {
    const bxc_cube_kernel *h = call->helper;
    uint32_t depth = 0;
    for (const lk *p = L; p; p = p->parent, depth++)
        if (p->ck == h || depth > 32) { /* the checker refuses recursion: never */
            fail(L, CHK_E_CUBE_HELPER, e->span, "helper calls nested too deep to inline");
            return 0;
        }
    lk H = {.u = L->u, .ck = h, .k = L->k, .parent = L};
    H.val = calloc(h->vars.len + 1, sizeof *H.val);
    H.slot = calloc(h->vars.len + 1, sizeof *H.slot);
    enum bxk_type *gsub = calloc(h->ngenerics + 1, sizeof *gsub);
    int *bindmap = calloc(h->nparams + 1, sizeof *bindmap);
    bxk_val r = 0;
    if (H.val && H.slot && gsub && bindmap) {
        for (uint32_t g = 0; g < h->ngenerics; g++) gsub[g] = ir_type(L, call->gtypes[g]);
        H.gsub = gsub;
        H.bindmap = bindmap;
        for (uint32_t i = 0; i < h->nparams && !L->dead; i++) {
            const bxc_cube_var *p = h->vars.items[i];
            const bxc_expr *a = e->call.args.items[i];
            if (p->kind == BXC_CUBE_TENSOR) bindmap[p->slot] = bslot(L, bxc_cube_use_of(L->ck, a));
            else H.val[p->id] = lexpr(L, b, a);
        }
        if (!L->dead) r = lblock(&H, b, h->fn->body);
        L->failed |= H.failed;
    } else {
        fail(L, CHK_E_CUBE_HELPER, e->span, "out of memory inlining a helper");
    }
    free(H.val), free(H.slot), free(gsub), free(bindmap);
    return r;
}

static bxk_val lexpr(lk *L, struct bxk_builder *b, const bxc_expr *e) {
    if (L->dead) return 0;
    enum bxk_type t = ir_type(L, e->ty);
    switch (e->kind) {
    case BXC_EXPR_INT:
        b->loc = loc_of(e->span);
        return const_int(L, b, t, (int64_t)e->int_lit.value, e->span);
    case BXC_EXPR_FLOAT:
        b->loc = loc_of(e->span);
        return bxk_const_f(b, t, e->float_lit.value);
    case BXC_EXPR_BOOL:
        b->loc = loc_of(e->span);
        return bxk_const_i(b, BXK_BOOL, e->bool_lit);
    case BXC_EXPR_PATH: return path_value(L, b, e);
    case BXC_EXPR_UNARY: {
        bxk_val x = lexpr(L, b, e->unary.operand);
        b->loc = loc_of(e->span);
        return bxk_un(b, e->unary.op == BXC_UN_NEG ? BXK_OP_NEG : BXK_OP_NOT, x);
    }
    case BXC_EXPR_BINARY: {
        if (e->binary.op == BXC_BIN_AND || e->binary.op == BXC_BIN_OR) return short_circuit(L, b, e);
        bxk_val x = lexpr(L, b, e->binary.lhs);
        bxk_val y = lexpr(L, b, e->binary.rhs);
        b->loc = loc_of(e->span);
        return bxk_bin(b, binop_ir(e->binary.op), x, y);
    }
    case BXC_EXPR_ASSIGN: return assign(L, b, e);
    case BXC_EXPR_CAST: {
        bxk_val x = lexpr(L, b, e->cast.expr);
        if (ir_type(L, e->cast.expr->ty) == t) return x;
        b->loc = loc_of(e->span);
        return bxk_cast(b, t, x);
    }
    case BXC_EXPR_CALL: {
        const char *name = e->call.callee->path->segs.items[0].name;
        const bxc_cube_call *call = bxc_cube_call_of(L->ck, e);
        if (call) return inline_call(L, b, e, call);
        if (strcmp(name, "sync_cube") == 0) {
            b->loc = loc_of(e->span);
            bxk_sync(b);
            return 0;
        }
        return intrinsic(L, b, e, name, (const bxc_expr *const *)e->call.args.items, e->call.args.len);
    }
    case BXC_EXPR_METHOD_CALL: return method(L, b, e);
    case BXC_EXPR_INDEX: {
        bxk_val i = lexpr(L, b, e->index.index);
        return load_from(L, b, e, i);
    }
    case BXC_EXPR_BLOCK: return lblock(L, b, e->block);
    case BXC_EXPR_IF: return if_expr(L, b, e);
    case BXC_EXPR_WHILE: {
        b->loc = loc_of(e->span);
        struct bxk_block *body, *then_blk, *else_blk;
        bxk_loop(b, &body);
        struct bxk_builder nb = nested(b, body);
        bxk_val c = lexpr(L, &nb, e->while_.cond);
        nb.loc = loc_of(e->while_.cond->span);
        bxk_if(&nb, c, &then_blk, &else_blk);
        struct bxk_builder eb = nested(&nb, else_blk);
        bxk_break(&eb);
        lblock(L, &nb, e->while_.body);
        L->dead = false;
        return 0;
    }
    case BXC_EXPR_FOR: return for_expr(L, b, e);
    case BXC_EXPR_LOOP: {
        b->loc = loc_of(e->span);
        struct bxk_block *body;
        bxk_loop(b, &body);
        struct bxk_builder nb = nested(b, body);
        lblock(L, &nb, e->loop_.body);
        L->dead = false;
        return 0;
    }
    case BXC_EXPR_BREAK:
    case BXC_EXPR_CONTINUE:
    case BXC_EXPR_RETURN:
        b->loc = loc_of(e->span);
        if (e->kind == BXC_EXPR_BREAK) bxk_break(b);
        else if (e->kind == BXC_EXPR_CONTINUE) bxk_continue(b);
        else bxk_return(b);
        L->dead = true;
        return 0;
    default: return 0;   /* not in the kernel language: the checker reported it */
    }
}

static void lstmt(lk *L, struct bxk_builder *b, const bxc_stmt *s) {
    if (s->kind == BXC_STMT_EXPR) {
        lexpr(L, b, s->expr);
        return;
    }
    if (s->kind != BXC_STMT_LET || s->pat->kind != BXC_PAT_IDENT) {
        if (s->kind == BXC_STMT_LET && s->init) lexpr(L, b, s->init);   /* `let _ = e;` */
        return;
    }
    bxc_cube_var *v = bxc_cube_use_of(L->ck, s->pat);
    if (!v) return;
    if (v->kind == BXC_CUBE_SHARED) {
        uint32_t n = 0;
        if (!const_u32(L, v->count, &n) || n == 0) {
            fail(L, CHK_E_CUBE_CONST, v->count->span,
                 "the size of shared memory must be a constant of at least 1");
            n = 1;
        }
        L->slot[v->id] = bxk_add_shared(L->k, ir_type(L, v->type), n);
        return;
    }
    bxk_val x = lexpr(L, b, s->init);
    if (L->dead) return;
    if (v->kind == BXC_CUBE_MUT) {
        L->slot[v->id] = bxk_add_local(L->k, ir_type(L, v->type));
        b->loc = loc_of(s->span);
        bxk_set(b, L->slot[v->id], x);
    } else {
        L->val[v->id] = x;
    }
}

static bxk_val lblock(lk *L, struct bxk_builder *b, const bxc_block *blk) {
    for (uint32_t i = 0; i < blk->stmts.len && !L->dead; i++) lstmt(L, b, blk->stmts.items[i]);
    if (blk->tail && !L->dead) return lexpr(L, b, blk->tail);
    return 0;
}

/* ---- the kernel ------------------------------------------------------------------- */

static void report_verifier(lk *L, const struct bxk_diags *ds) {
    bool sync_reported = false;
    for (uint32_t i = 0; i < ds->n; i++) {
        const struct bxk_diag *d = &ds->d[i];
        if (d->err == BXK_E_BARRIER) {
            if (sync_reported) continue;
            sync_reported = true;
            bxc_diag *dd = bxc_diag_error(&L->u->diags, CHK_E_CUBE_SYNC, span_of(d->loc),
                                          "`sync_cube()` here may not be reached by every unit of "
                                          "the cube: %s", d->msg);
            bxc_diag_set_help(&L->u->diags, dd, "%s",
                              "call it outside branches and loops whose condition depends on "
                              "UNIT_POS/ABSOLUTE_POS, `let mut` variables or loaded values");
        } else {
            bxc_diag_error(&L->u->diags, CHK_E_CUBE_IR, span_of(d->loc),
                           "kernel `%s`: the IR verifier says %s %s (a bug in bextc)",
                           L->k->name, bxk_err_code(d->err), d->msg);
        }
    }
}

struct bxk_kernel *bxc_cube_lower(struct bxc_unit *u, const bxc_cube_kernel *ck, uint32_t inst) {
    const char *name = bxc_cube_instance_name(&u->arena, ck, inst);
    struct bxk_kernel *k = bxk_kernel_new(name);
    if (!k) return NULL;
    lk L = {.u = u, .ck = ck, .inst = inst, .k = k};
    L.val = calloc(ck->vars.len + 1, sizeof *L.val);
    L.slot = calloc(ck->vars.len + 1, sizeof *L.slot);
    if (!L.val || !L.slot) {
        free(L.val), free(L.slot);
        bxk_kernel_free(k);
        return NULL;
    }
    /* Declarations in parameter order: bindings b0.., scalars s0.. */
    for (uint32_t i = 0; i < ck->vars.len; i++) {
        const bxc_cube_var *v = ck->vars.items[i];
        if (v->kind == BXC_CUBE_TENSOR) bxk_add_binding(k, ir_type(&L, v->type), 0, v->is_mut);
        else if (v->kind == BXC_CUBE_SCALAR) bxk_add_scalar(k, ir_type(&L, v->type));
    }
    struct bxk_builder b = bxk_builder_at(k, &k->body);
    lblock(&L, &b, ck->fn->body);
    free(L.val);
    free(L.slot);
    struct bxk_diags ds = {0};
    if (L.failed || k->oom || !bxk_verify(k, &ds)) {
        if (!L.failed) report_verifier(&L, &ds);
        bxk_kernel_free(k);
        return NULL;
    }
    return k;
}

bool bxc_cube_lower_root(struct bxc_unit *u, struct bxk_kernel ***out, uint32_t *n) {
    *out = NULL;
    *n = 0;
    const bxc_cube_set *set = bxc_cube_kernels(u);
    uint32_t total = 0;
    for (uint32_t i = 0; set && i < set->len; i++)
        if (!set->items[i]->is_helper) {
            if (!set->items[i]->ok) return false;
            total += bxc_cube_instance_count(set->items[i]);
        }
    struct bxk_kernel **ks = calloc(total + 1, sizeof *ks);
    if (!ks) return false;
    uint32_t m = 0;
    bool ok = true;
    for (uint32_t i = 0; ok && set && i < set->len; i++) {
        const bxc_cube_kernel *ck = set->items[i];
        if (ck->is_helper) continue;
        for (uint32_t j = 0; ok && j < bxc_cube_instance_count(ck); j++) {
            ks[m] = bxc_cube_lower(u, ck, j);
            if (ks[m]) m++;
            else ok = false;
        }
    }
    if (!ok) {
        for (uint32_t i = 0; i < m; i++) bxk_kernel_free(ks[i]);
        free(ks);
        return false;
    }
    *out = ks;
    *n = m;
    return true;
}
