/* emit_body.c — default bodies as C over the core op API (language.md §3).
 *
 * A default body is an expression over tensors and scalars.  It becomes a
 * straight-line C function: every tensor value is an owned temporary
 * (t1, t2, ...) handed to the next op, which consumes it (the runtime's
 * ownership rule), so the temporary is set to NULL right after the call; a
 * use of a tensor variable or parameter takes a new reference first.  On
 * any failing op the function jumps to `done`, where every temporary still
 * held and every owned tensor parameter is released: no leak on any path.
 * Scalars are plain C expressions (double for floats, int64_t for ints).
 *
 * Tensor-scalar arithmetic works in both orders (`0.5 * x` is
 * bext_mul_scalar(x, 0.5); `1.0 - x` is bext_add_scalar(bext_neg(x), 1.0);
 * `2.0 / x` is bext_mul_scalar(bext_recip(x), 2.0)), the unary functions
 * of the core op set are calls (`erf(x)`), and ops are also methods
 * (`x.matmul(y)`, `x.sum_dim(1)`: the reduced dim is kept, as in Burn).
 * Which ops exist, their C functions and their argument kinds come from
 * tensor_ops.h (derived from the runtime's op table).  What this file
 * cannot lower is decided here and only here: the checker asks through
 * bxc_body_lowerable (below), which walks a body exactly as generation
 * does, so a body that checks is a body this file can lower. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "emit_int.h"
#include "tensor_ops.h"

#define MAX_VARS 128

typedef struct bval {
    bool tensor;        /* else a scalar */
    bool is_float;      /* scalar: float-valued */
    const char *c;      /* tensor: temp name (owned); scalar: C expression */
} bval;

typedef struct bvar {
    const char *name;   /* source name */
    const char *c;      /* C lvalue */
    bool tensor;
    bool is_float;
} bvar;

typedef struct body_ctx {
    bxc_emit_ctx *cx;      /* NULL: the checker asks (bxc_body_lowerable), nothing is written */
    bxc_arena *a;
    bxc_emit_buf code;
    uint32_t ntemps, nfloats, nints;
    bvar vars[MAX_VARS];
    uint32_t nvars;
    bool ok;
    bool formula;          /* a `#[backward]` formula rather than a default body */
    bool stopped;          /* an error the parser already reported: stop, say nothing */
    bxc_body_err_fn err;   /* the checker's sink for what cannot be lowered */
    void *ud;
} body_ctx;

/* The first construct this generator cannot lower ends the walk: `what`
 * names it ("`match`", "the call of `foo`").  The checker turns it into
 * its located error (check_default.c); when generating, the checker has
 * already rejected every such body, so this is a generator bug report. */
static void berr(body_ctx *b, bxc_span span, const char *what) {
    if (!b->ok) return;
    b->ok = false;
    if (b->err) b->err(b->ud, span, what);
    else bxc_emit_error(b->cx, span, "%s is not supported in %s by the C generator", what,
                        b->formula ? "a backward formula" : "a default body");
}

/* The lowering's C text: an expression (ctext) or a line of the body
 * (emit).  The checker's walk (cx NULL) keeps no text, so it formats none:
 * it asks what can be lowered, and formatting was most of its cost (the
 * 1,000-method bench file: 14.7 M of 91 M instructions per check). */
static const char *ctext(body_ctx *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *ctext(body_ctx *b, const char *fmt, ...) {
    if (!b->cx) return "";
    va_list ap;
    va_start(ap, fmt);
    const char *s = bxc_arena_vprintf(b->a, fmt, ap);
    va_end(ap);
    return s;
}

static void emit(body_ctx *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emit(body_ctx *b, const char *fmt, ...) {
    if (!b->cx) return;
    va_list ap;
    va_start(ap, fmt);
    char line[256];
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof line) {
        bxc_emit_puts(&b->code, line);
        return;
    }
    va_start(ap, fmt);
    const char *s = bxc_arena_vprintf(b->a, fmt, ap);
    va_end(ap);
    bxc_emit_puts(&b->code, s);
}

static const char *new_temp(body_ctx *b) { return ctext(b, "bext_t%u", ++b->ntemps); }

static bool ty_is_tensor(bxc_type *t) {
    return t && bxc_type_strip_refs(bxc_type_resolve(t))->kind == BXC_TYPE_TENSOR;
}
static bool ty_is_float(bxc_type *t) {
    return t && bxc_type_strip_refs(bxc_type_resolve(t))->kind == BXC_TYPE_FLOAT;
}

/* result = op(args); consumed temps set NULL (the op took them over,
 * success or not); failure jumps out. */
static bval op_calln(body_ctx *b, const char *fn, const char *args, const char *const *consumed, uint32_t nc) {
    const char *t = new_temp(b);
    emit(b, "  %s = %s(%s);\n", t, fn, args);
    for (uint32_t i = 0; i < nc; i++)
        if (consumed[i]) emit(b, "  %s = NULL;\n", consumed[i]);
    emit(b, "  if (!%s) goto bext_done;\n", t);
    return (bval){true, false, t};
}

static bval op_call(body_ctx *b, const char *fn, const char *args, const char *consumed1, const char *consumed2) {
    const char *c[2] = {consumed1, consumed2};
    return op_calln(b, fn, args, c, 2);
}

static bval unary_op(body_ctx *b, const char *fn, bval x) {
    return op_call(b, fn, x.c, x.c, NULL);
}

static bval compile(body_ctx *b, const bxc_expr *e);

static const char *dbl(body_ctx *b, bval s) { return ctext(b, "(double)(%s)", s.c); }

/* `s < t` is `t > s`: the comparison with its operands swapped. */
static const char *flipped(const char *n) {
    if (!strcmp(n, "lt")) return "gt";
    if (!strcmp(n, "gt")) return "lt";
    if (!strcmp(n, "le")) return "ge";
    if (!strcmp(n, "ge")) return "le";
    return n;
}

/* A binary op of the table (`+`, `x.matmul(y)`, `x.max(0.0)`) on two
 * values of which at least one is a tensor.  A number on the right uses the
 * `_scalar` row; on the left, the identities of bxc_top_scalar_left_ok. */
static bval tensor_binary(body_ctx *b, const bxc_top *op, bval l, bval r, bxc_span span) {
    bxc_arena *a = b->a;
    const char *n = op->name;
    if (l.tensor && r.tensor)
        return op_call(b, op->cfn, ctext(b, "%s, %s", l.c, r.c), l.c, r.c);
    if (!op->scalar_cfn) {
        berr(b, span, bxc_arena_printf(a, "`%s` with a number operand", n));
        return l.tensor ? l : r;
    }
    if (l.tensor)
        return op_call(b, op->scalar_cfn, ctext(b, "%s, %s", l.c, dbl(b, r)), l.c, NULL);
    /* scalar op tensor */
    if (!bxc_top_scalar_left_ok(op)) {
        berr(b, span, bxc_arena_printf(a, "`%s` with a number on the left", n));
        return r;
    }
    if (!strcmp(n, "sub")) {
        bval ng = unary_op(b, "bext_neg", r);
        return op_call(b, "bext_add_scalar", ctext(b, "%s, %s", ng.c, dbl(b, l)), ng.c, NULL);
    }
    if (!strcmp(n, "div")) {
        bval rc = unary_op(b, "bext_recip", r);
        return op_call(b, "bext_mul_scalar", ctext(b, "%s, %s", rc.c, dbl(b, l)), rc.c, NULL);
    }
    const bxc_top *sw = bxc_top_find(flipped(n));   /* `s < t` is `t > s`; add, mul, eq... are symmetric */
    if (!sw || !sw->scalar_cfn) {
        berr(b, span, bxc_arena_printf(a, "`%s` with a number on the left", n));
        return r;
    }
    return op_call(b, sw->scalar_cfn, ctext(b, "%s, %s", r.c, dbl(b, l)), r.c, NULL);
}

static bval scalar(const char *c, bool is_float) { return (bval){false, is_float, c}; }

/* An op of the table applied to a receiver and argument expressions; the
 * checker has already checked names, arity and operand kinds, so what is
 * left here is the lowering (and a located error for anything the
 * checker let through that this generator cannot lower). */
static bval apply_op(body_ctx *b, const char *m, bval recv, const bxc_expr_list *args, bxc_span span) {
    bxc_arena *a = b->a;
    const bxc_top *op = bxc_top_find(m);
    if (!op) {
        berr(b, span, bxc_arena_printf(a, "the call of `%s`", m));
        return recv;
    }
    if (!recv.tensor) {
        if (op->cmath && args->len == 0)
            return scalar(ctext(b, "%s(%s)", op->cmath, dbl(b, recv)), true);
        berr(b, span, bxc_arena_printf(a, "the op `%s` on a number", m));
        return recv;
    }
    if (args->len != op->nargs) {
        berr(b, span, bxc_arena_printf(a, "the op `%s` with %u argument(s)", m, args->len));
        return recv;
    }
    if (op->nargs == 1 && op->args[0] == BXC_TOP_ARG_OPERAND) {
        bval r = compile(b, args->items[0]);
        if (!b->ok) return recv;
        return tensor_binary(b, op, recv, r, span);
    }
    const char *cargs = recv.c;
    const char *consumed[1 + BXC_TOP_MAX_ARGS] = {recv.c};
    uint32_t nc = 1;
    for (uint32_t i = 0; i < op->nargs; i++) {
        bval v = compile(b, args->items[i]);
        if (!b->ok) return recv;
        bool want_tensor = op->args[i] == BXC_TOP_ARG_TENSOR || op->args[i] == BXC_TOP_ARG_INDICES ||
                           op->args[i] == BXC_TOP_ARG_MASK || op->args[i] == BXC_TOP_ARG_OPERAND;
        if (v.tensor != want_tensor) {
            berr(b, args->items[i]->span, want_tensor ? "a number where the op takes a tensor"
                                                      : "a tensor where the op takes a number");
            return recv;
        }
        const char *c;
        switch (op->args[i]) {
        case BXC_TOP_ARG_DIM: c = ctext(b, "(int)(%s)", v.c); break;
        case BXC_TOP_ARG_INT: c = ctext(b, "(int64_t)(%s)", v.c); break;
        case BXC_TOP_ARG_FLOAT: c = dbl(b, v); break;
        default: c = v.c; consumed[nc++] = v.c; break;
        }
        cargs = ctext(b, "%s, %s", cargs, c);
    }
    if (op->fixed_args) cargs = ctext(b, "%s, %s", cargs, op->fixed_args);
    if (op->keepdim) cargs = ctext(b, "%s, true", cargs);
    return op_calln(b, op->cfn, cargs, consumed, nc);
}

static bvar *lookup(body_ctx *b, const char *name) {
    for (uint32_t i = b->nvars; i-- > 0;)
        if (!strcmp(b->vars[i].name, name)) return &b->vars[i];
    return NULL;
}

static bval use_var(body_ctx *b, const bvar *v) {
    if (!v->tensor) return scalar(v->c, v->is_float);
    const char *t = new_temp(b);
    emit(b, "  %s = bext_retain(%s);\n", t, v->c);
    return (bval){true, false, t};
}

static bval compile_block(body_ctx *b, const bxc_block *blk) {
    uint32_t mark = b->nvars;
    for (uint32_t i = 0; i < blk->stmts.len && b->ok; i++) {
        const bxc_stmt *s = blk->stmts.items[i];
        if (s->kind == BXC_STMT_EMPTY) continue;
        if (s->kind == BXC_STMT_ERROR) {   /* the parser reported it */
            b->ok = false, b->stopped = true;
            break;
        }
        if (s->kind == BXC_STMT_EXPR) {
            bval v = compile(b, s->expr);
            if (v.tensor) emit(b, "  bext_release(%s);\n  %s = NULL;\n", v.c, v.c);
            continue;
        }
        if (s->kind != BXC_STMT_LET || !s->init || !s->pat || s->pat->kind != BXC_PAT_IDENT) {
            berr(b, s->span, s->kind == BXC_STMT_LET ? "this `let` (one name and a value only)" : "this statement");
            break;
        }
        bval v = compile(b, s->init);
        if (!b->ok) break;
        if (b->nvars == MAX_VARS) {
            berr(b, s->span, "more than 128 variables");
            break;
        }
        bvar *nv = &b->vars[b->nvars++];
        nv->name = s->pat->name.name;
        nv->tensor = v.tensor;
        nv->is_float = v.is_float;
        if (v.tensor) {
            nv->c = v.c;   /* the temp is the variable; released at `done` */
        } else {
            nv->c = ctext(b, v.is_float ? "bext_f%u" : "bext_n%u", v.is_float ? ++b->nfloats : ++b->nints);
            emit(b, "  %s = %s;\n", nv->c, v.c);
        }
    }
    bval r = blk->tail ? compile(b, blk->tail) : scalar("0", false);
    b->nvars = mark;
    return r;
}

static bval compile(body_ctx *b, const bxc_expr *e) {
    bxc_arena *a = b->a;
    if (!b->ok || !e) return scalar("0", false);
    switch (e->kind) {
    case BXC_EXPR_INT: return scalar(ctext(b, "%lluLL", (unsigned long long)e->int_lit.value), false);
    case BXC_EXPR_FLOAT: {
        /* always a C double literal: `1.0 / 2.0` must not become int division */
        const char *t = ctext(b, "%.17g", e->float_lit.value);
        if (!strpbrk(t, ".eni")) t = ctext(b, "%s.0", t);
        return scalar(t, true);
    }
    case BXC_EXPR_BOOL: return scalar(e->bool_lit ? "1" : "0", false);
    case BXC_EXPR_PATH: {
        if (e->path->segs.len == 1) {
            bvar *v = lookup(b, e->path->segs.items[0].name);
            if (v) return use_var(b, v);
        }
        berr(b, e->span, b->formula ? "a name other than an argument, `grad`, `output` or a `let` variable"
                                    : "a name other than a parameter or `let` variable");
        return scalar("0", false);
    }
    case BXC_EXPR_FIELD: {
        /* a tensor field of an extension parameter: `p.values` */
        const bxc_expr *o = e->field.object;
        if (o->kind == BXC_EXPR_PATH && o->path->segs.len == 1 && ty_is_tensor(e->ty)) {
            bvar *v = lookup(b, o->path->segs.items[0].name);
            if (v && !v->tensor) {
                bvar f = {e->field.name.name, ctext(b, "%s.%s", v->c, bxc_emit_ident(a, e->field.name.name)),
                          true, false};
                return use_var(b, &f);
            }
        }
        berr(b, e->span, "a field access other than a tensor field of a parameter");
        return scalar("0", false);
    }
    case BXC_EXPR_UNARY: {
        if (e->unary.op == BXC_UN_DEREF || e->unary.op == BXC_UN_REF) return compile(b, e->unary.operand);
        bval x = compile(b, e->unary.operand);
        if (!b->ok) return x;
        if (e->unary.op == BXC_UN_NEG)
            return x.tensor ? unary_op(b, "bext_neg", x) : scalar(ctext(b, "(-(%s))", x.c), x.is_float);
        if (e->unary.op == BXC_UN_NOT)
            return x.tensor ? unary_op(b, "bext_not", x) : scalar(ctext(b, "(!(%s))", x.c), false);
        berr(b, e->span, "`&mut`");
        return x;
    }
    case BXC_EXPR_BINARY: {
        bval l = compile(b, e->binary.lhs);
        bval r = compile(b, e->binary.rhs);
        if (!b->ok) return l;
        if (!l.tensor && !r.tensor)
            return scalar(ctext(b, "((%s) %s (%s))", l.c, bxc_binop_str(e->binary.op), r.c),
                          l.is_float || r.is_float);
        const bxc_top *op = bxc_top_operator(e->binary.op);
        if (!op) {
            berr(b, e->span, bxc_arena_printf(a, "`%s` on tensors", bxc_binop_str(e->binary.op)));
            return l;
        }
        return tensor_binary(b, op, l, r, e->span);
    }
    case BXC_EXPR_CALL: {
        const bxc_expr *callee = e->call.callee;
        if (callee->kind == BXC_EXPR_PATH && callee->path->segs.len == 1 && e->call.args.len >= 1) {
            const char *fn = callee->path->segs.items[0].name;
            bval x = compile(b, e->call.args.items[0]);
            if (!b->ok) return x;
            bxc_expr_list rest = {e->call.args.items + 1, e->call.args.len - 1, e->call.args.len - 1};
            return apply_op(b, fn, x, &rest, e->span);
        }
        berr(b, e->span, "this call (only tensor ops can be called)");
        return scalar("0", false);
    }
    case BXC_EXPR_METHOD_CALL: {
        bval x = compile(b, e->method_call.receiver);
        if (!b->ok) return x;
        return apply_op(b, e->method_call.method.name, x, &e->method_call.args, e->span);
    }
    case BXC_EXPR_BLOCK: return compile_block(b, e->block);
    case BXC_EXPR_CAST: {
        bval x = compile(b, e->cast.expr);
        if (x.tensor) {
            berr(b, e->span, "`as` on a tensor");
            return x;
        }
        bool f = ty_is_float(e->ty);
        return scalar(ctext(b, "((%s)(%s))", f ? "double" : "int64_t", x.c), f);
    }
    case BXC_EXPR_ERROR:   /* the parser reported it */
        b->ok = false, b->stopped = true;
        return scalar("0", false);
    default:
        berr(b, e->span, bxc_arena_printf(a, "`%s`", bxc_expr_kind_name(e->kind)));
        return scalar("0", false);
    }
}

/* Writes `static bext_tensor *name(params)` around the code compiled
 * into b (its value r): temporaries declared NULL, the result taken out of
 * r, every temporary still held released at `bext_done`, then `release`
 * (the owned parameters). */
static void emit_tensor_fn(body_ctx *b, const char *comment, const char *name, const char *params, bval r,
                           const char *const *cparams, uint32_t ncparams, const bxc_emit_buf *release) {
    bxc_emit_buf *c = &b->cx->code_c;
    bxc_emit_printf(c, "/* %s */\nstatic __attribute__((unused)) bext_tensor *%s(%s) {\n  bext_tensor *bext_result = NULL;\n",
                    comment, name, params);
    for (uint32_t i = 1; i <= b->ntemps; i++) bxc_emit_printf(c, "  bext_tensor *bext_t%u = NULL;\n", i);
    for (uint32_t i = 1; i <= b->nfloats; i++) bxc_emit_printf(c, "  double bext_f%u = 0;\n", i);
    for (uint32_t i = 1; i <= b->nints; i++) bxc_emit_printf(c, "  int64_t bext_n%u = 0;\n", i);
    /* unused parameters and scalars are fine in a body: keep -Wextra quiet */
    for (uint32_t i = 1; i <= b->nfloats; i++) bxc_emit_printf(c, "  (void)bext_f%u;\n", i);
    for (uint32_t i = 1; i <= b->nints; i++) bxc_emit_printf(c, "  (void)bext_n%u;\n", i);
    for (uint32_t i = 0; i < ncparams; i++) bxc_emit_printf(c, "  (void)%s;\n", cparams[i]);
    bxc_emit_append(c, &b->code);
    bxc_emit_printf(c, "  bext_result = %s;\n  %s = NULL;\n  goto bext_done;\nbext_done:\n", r.c, r.c);
    for (uint32_t i = 1; i <= b->ntemps; i++) bxc_emit_printf(c, "  bext_release(bext_t%u);\n", i);
    if (release) bxc_emit_append(c, release);
    bxc_emit_puts(c, "  return bext_result;\n}\n\n");
}

bool bxc_emit_default_body(bxc_emit_ctx *cx, const bxc_fn *fn, const char *name, const char *params) {
    body_ctx b;
    memset(&b, 0, sizeof b);
    b.cx = cx;
    b.a = cx->a;
    b.ok = true;
    bxc_arena *a = cx->a;
    bxc_emit_buf release = {0};
    const char **cparams = bxc_arena_alloc(a, (fn->params.len + 1) * sizeof *cparams);
    uint32_t ncparams = 0;
    for (uint32_t i = 0; i < fn->params.len; i++) {
        const bxc_param *p = fn->params.items[i];
        if (p->pat && p->pat->kind == BXC_PAT_IDENT) cparams[ncparams++] = bxc_emit_ident(a, p->pat->name.name);
        /* the checker's record types a method a `#[cfg]` switches off too */
        bxc_type *pt = fn->method && fn->method->params[i].cls != BXC_ARG_BAD ? fn->method->params[i].type : NULL;
        if (!p->pat || p->pat->kind != BXC_PAT_IDENT || !pt) continue;
        bxc_type *t = bxc_type_resolve(pt);
        bool borrowed = t->kind == BXC_TYPE_REF;
        bxc_type *inner = bxc_type_strip_refs(t);
        const char *cn = bxc_emit_ident(a, p->pat->name.name);
        bvar *v = &b.vars[b.nvars++];
        v->name = p->pat->name.name;
        v->tensor = inner->kind == BXC_TYPE_TENSOR;
        v->is_float = inner->kind == BXC_TYPE_FLOAT;
        v->c = (borrowed && !v->tensor) ? bxc_arena_printf(a, "(*%s)", cn) : cn;
        if (!borrowed && bxc_emit_type_has_tensors(inner)) {
            if (v->tensor) {
                bxc_emit_printf(&release, "  bext_release(%s);\n", cn);
            } else {
                bxc_emit_ctype *ct = bxc_emit_register_type(cx, inner);
                if (ct) bxc_emit_printf(&release, "  %s_release(&%s);\n", ct->fn_prefix, cn);
            }
        }
        if (b.nvars == MAX_VARS) break;
    }
    bval r = compile_block(&b, fn->body);
    if (b.ok && !r.tensor) berr(&b, fn->body->span, "a value that is not a tensor");
    bool ok = b.ok;
    if (ok)
        emit_tensor_fn(&b, "The default body: serves every listed backend without an implementation.", name,
                       params, r, cparams, ncparams, &release);
    bxc_emit_buf_free(&b.code);
    bxc_emit_buf_free(&release);
    return ok;
}

bool bxc_emit_formula(bxc_emit_ctx *cx, const bxc_expr *formula, const char *comment, const char *name,
                      const char *params, const bxc_emit_var *vars, uint32_t nvars) {
    body_ctx b;
    memset(&b, 0, sizeof b);
    b.cx = cx;
    b.a = cx->a;
    b.ok = true;
    b.formula = true;
    const char **cparams = bxc_arena_alloc(cx->a, (nvars + 1) * sizeof *cparams);
    for (uint32_t i = 0; i < nvars && i < MAX_VARS; i++) {
        b.vars[b.nvars++] = (bvar){vars[i].name, vars[i].c, vars[i].tensor, vars[i].is_float};
        cparams[i] = vars[i].c;
    }
    bval r = compile(&b, formula);
    if (b.ok && !r.tensor) berr(&b, formula->span, "a value that is not a tensor");
    bool ok = b.ok;
    if (ok) emit_tensor_fn(&b, comment, name, params, r, cparams, b.nvars, NULL);
    bxc_emit_buf_free(&b.code);
    return ok;
}

/* The generator's limits as the checker's predicate (issue 13: no mirror
 * of this file in the checker): the body or formula is walked exactly as
 * above, into a scratch buffer that is thrown away, with the checker's
 * types for the parameters (`p.pat->ty`, set by the checker).  A formula
 * also sees `grad` and `output`, tensors. */
bxc_body_verdict bxc_body_lowerable(bxc_arena *a, const bxc_fn *fn, const bxc_expr *formula, bxc_body_err_fn err,
                                    void *ud) {
    body_ctx b;
    memset(&b, 0, sizeof b);
    b.a = a;
    b.ok = true;
    b.formula = formula != NULL;
    b.err = err;
    b.ud = ud;
    for (uint32_t i = 0; i < fn->params.len && b.nvars < MAX_VARS - 2; i++) {
        const bxc_param *p = fn->params.items[i];
        if (!p->pat || p->pat->kind != BXC_PAT_IDENT || !p->pat->ty) continue;
        bxc_type *inner = bxc_type_strip_refs(bxc_type_resolve(p->pat->ty));
        b.vars[b.nvars++] = (bvar){p->pat->name.name, bxc_emit_ident(a, p->pat->name.name),
                                   inner->kind == BXC_TYPE_TENSOR, inner->kind == BXC_TYPE_FLOAT};
    }
    if (formula) {
        b.vars[b.nvars++] = (bvar){"grad", "grad", true, false};
        b.vars[b.nvars++] = (bvar){"output", "output", true, false};
    }
    bval r = formula ? compile(&b, formula) : compile_block(&b, fn->body);
    bxc_emit_buf_free(&b.code);
    if (b.stopped) return BXC_BODY_STOPPED;
    if (!b.ok) return BXC_BODY_REFUSED;
    return r.tensor ? BXC_BODY_TENSOR : BXC_BODY_NUMBER;
}
