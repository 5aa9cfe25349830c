/* interp_body.c — the output metadata of a `#[fusion(default)]` method:
 * its default body run over TensorSpecs instead of tensors (the REPL's
 * `:meta`).
 *
 * A default body is straight-line tensor code over the core ops
 * (language.md §3; the checker's chk_default_body_subset accepts nothing
 * else).  Each op goes through the same table the checker and the C
 * generator use (tensor_ops.h), and its result spec comes from the
 * runtime's inference rule for that row, called through a hook
 * (bxi_set_infer; the REPL passes bext_infer), so the shapes, dtypes and
 * error texts are exactly what the generated C would get from bext_*
 * at run time.  Surfaces map to rows as docs/codegen.md "Default bodies"
 * describes: a number operand selects the `_scalar` row, `2.0 - x` is
 * neg then add_scalar and `2.0 / x` recip then mul_scalar, `_dim`
 * reductions keep the dim, whole reductions give rank 0, `transpose` is
 * swap_dims(-2, -1) and `gelu` follows erf's rule (float in, same spec out).
 *
 * Numbers (literals, casts, arithmetic between numbers) are evaluated by
 * the ordinary interpreter; tensors are BXV_SPEC values. */
#include "interp_int.h"
#include "tensor_ops.h"

#include <bext/ops.h>
#include <string.h>

typedef struct body_cx {
    bxi_interp *in;
    bxi_infer_fn infer;
} body_cx;

static bxi_status eval(body_cx *b, const bxc_expr *e, BxvValue *out);

static bool is_spec(const BxvValue *v) { return v->kind == BXV_SPEC; }
static bool is_number(const BxvValue *v) { return v->kind == BXV_INT || v->kind == BXV_FLOAT; }

/* BxvDType and bext_dtype list the same dtypes; map by name, not order. */
static bool to_bext_dtype(BxvDType d, bext_dtype *out) {
    static const struct { BxvDType v; bext_dtype b; } map[] = {
        {BXV_DT_F32, BEXT_F32}, {BXV_DT_F64, BEXT_F64}, {BXV_DT_F16, BEXT_F16}, {BXV_DT_BF16, BEXT_BF16},
        {BXV_DT_I32, BEXT_I32}, {BXV_DT_I64, BEXT_I64}, {BXV_DT_U8, BEXT_U8},   {BXV_DT_BOOL, BEXT_BOOL},
    };
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (map[i].v == d) {
            *out = map[i].b;
            return true;
        }
    return false;
}

static bool from_bext_dtype(bext_dtype d, BxvDType *out) {
    for (int v = 0; v < BXV_DTYPE_COUNT; v++) {
        bext_dtype b;
        if (to_bext_dtype((BxvDType)v, &b) && b == d) {
            *out = (BxvDType)v;
            return true;
        }
    }
    return false;
}

static bool to_spec(const BxvValue *v, bext_spec *s) {
    memset(s, 0, sizeof *s);
    if (v->u.spec.shape.len > BEXT_MAX_RANK || !to_bext_dtype(v->u.spec.dtype, &s->dtype)) return false;
    s->rank = (int)v->u.spec.shape.len;
    for (size_t i = 0; i < v->u.spec.shape.len; i++) s->shape[i] = (int64_t)v->u.spec.shape.dims[i];
    return true;
}

static bool as_i64(const BxvValue *v, int64_t *out) {
    if (v->kind == BXV_INT) {
        *out = (int64_t)v->u.i.v;
        return true;
    }
    return false;
}

static double as_f64(const BxvValue *v) {
    return v->kind == BXV_INT ? (double)v->u.i.v : v->kind == BXV_FLOAT ? v->u.f.v : 0.0;
}

/* One op row over specs: `row` names the BXR_OP_TABLE row, `api` the
 * bext_* function the generated C calls (for the message). */
static bxi_status infer(body_cx *b, const char *row, const char *api, const BxvValue *ins, int nin,
                        bext_op_args *args, bxc_span span, BxvValue *out) {
    bext_spec in[3], res;
    for (int i = 0; i < nin; i++)
        if (!to_spec(&ins[i], &in[i])) {
            bxi_error(b->in, BXI_E_TYPE, span, "`%s`: an operand's spec has too many dims (limit %d)", api,
                      BEXT_MAX_RANK);
            return BXI_ERR;
        }
    args->api = api;
    const char *msg = NULL;
    if (!b->infer(row, in, nin, args, &res, &msg)) {
        bxc_diag *d = bxi_error(b->in, BXI_E_META, span, "%s", msg && *msg ? msg : "the op's inference failed");
        bxc_diag_set_help(b->in->diags, d, "the runtime's inference rule for `%s` rejects these specs", row);
        return BXI_ERR;
    }
    BxvDType dt;
    if (!from_bext_dtype(res.dtype, &dt)) {
        bxi_error(b->in, BXI_E_TYPE, span, "`%s` gives a dtype the metadata language has no name for", api);
        return BXI_ERR;
    }
    BxvValue s = bxv_shape_new(&b->in->scratch, (size_t)res.rank);
    for (int i = 0; i < res.rank; i++) bxv_shape_push(&b->in->scratch, &s.u.shape, (uint64_t)res.shape[i]);
    *out = bxv_spec(&b->in->scratch, &s.u.shape, dt);
    return BXI_OK;
}

static const char *row_of(const bxc_top *t) { return bxc_top_row_name(t->row); }

/* `op(recv, args...)` for a surface of the op table. */
static bxi_status call_op(body_cx *b, const bxc_top *t, const BxvValue *recv, const BxvValue *args, uint32_t nargs,
                          bxc_span span, BxvValue *out) {
    if (!is_spec(recv)) {
        bxi_error(b->in, BXI_E_TYPE, span, "expected a tensor, found `%s`", bxi_type_str(b->in, recv));
        return BXI_ERR;
    }
    if (nargs != t->nargs) {
        bxi_error(b->in, BXI_E_ARITY, span, "`%s` takes %u argument%s, found %u", t->name, t->nargs,
                  t->nargs == 1 ? "" : "s", nargs);
        return BXI_ERR;
    }
    bext_op_args a;
    memset(&a, 0, sizeof a);
    BxvValue ins[3];
    int nin = 0, nsc = 0;
    ins[nin++] = *recv;
    const char *row = row_of(t), *api = t->cfn;
    if (!strcmp(t->name, "transpose")) {
        a.at.ndims = 2;
        a.at.dims[0] = -2;
        a.at.dims[1] = -1;
    }
    if (t->reduce_all) a.at.all = true;
    if (t->keepdim) a.at.keepdim = true;
    int ndims = 0;
    for (uint32_t i = 0; i < nargs; i++) {
        const BxvValue *v = &args[i];
        int64_t n;
        switch (t->args[i]) {
        case BXC_TOP_ARG_OPERAND:
            if (is_number(v)) {
                row = t->scalar_cfn + 5;   /* "bext_add_scalar" -> "add_scalar" */
                api = t->scalar_cfn;
                a.sc[nsc++].f = as_f64(v);
                break;
            }
            /* fallthrough */
        case BXC_TOP_ARG_TENSOR:
        case BXC_TOP_ARG_INDICES:
        case BXC_TOP_ARG_MASK:
            if (!is_spec(v) || nin == 3) {
                bxi_error(b->in, BXI_E_TYPE, span, "argument %u of `%s`: expected a tensor, found `%s`", i + 1,
                          t->name, bxi_type_str(b->in, v));
                return BXI_ERR;
            }
            ins[nin++] = *v;
            break;
        case BXC_TOP_ARG_DIM:
            if (!as_i64(v, &n)) {
                bxi_error(b->in, BXI_E_TYPE, span, "argument %u of `%s`: expected an integer dim, found `%s`",
                          i + 1, t->name, bxi_type_str(b->in, v));
                return BXI_ERR;
            }
            if (t->nargs == 2 && t->args[1] == BXC_TOP_ARG_DIM) {   /* swap_dims(d0, d1) */
                a.at.dims[ndims++] = (int)n;
                a.at.ndims = ndims;
            } else {
                a.at.dim = (int)n;
            }
            break;
        case BXC_TOP_ARG_INT:
            if (!as_i64(v, &n)) {
                bxi_error(b->in, BXI_E_TYPE, span, "argument %u of `%s`: expected an integer, found `%s`", i + 1,
                          t->name, bxi_type_str(b->in, v));
                return BXI_ERR;
            }
            a.sc[nsc++].i = n;
            break;
        case BXC_TOP_ARG_FLOAT:
            if (!is_number(v)) {
                bxi_error(b->in, BXI_E_TYPE, span, "argument %u of `%s`: expected a number, found `%s`", i + 1,
                          t->name, bxi_type_str(b->in, v));
                return BXI_ERR;
            }
            a.sc[nsc++].f = as_f64(v);
            break;
        }
    }
    return infer(b, row, api, ins, nin, &a, span, out);
}

static const bxc_top *find_top(const char *name) { return bxc_top_find(name); }

/* A binary operator with at least one tensor operand. */
static bxi_status tensor_binop(body_cx *b, const bxc_expr *e, BxvValue l, BxvValue r, BxvValue *out) {
    const bxc_top *t = bxc_top_operator(e->binary.op);
    if (!t) {
        bxi_error(b->in, BXI_E_UNSUPPORTED, e->span, "`%s` has no tensor op", bxc_binop_str(e->binary.op));
        return BXI_ERR;
    }
    if (is_spec(&l)) return call_op(b, t, &l, &r, 1, e->span, out);
    /* a number on the left (docs/codegen.md): swapped comparisons, and
     * `s - x` = add_scalar(neg(x)), `s / x` = mul_scalar(recip(x)) */
    bxc_binop op = e->binary.op;
    const char *swap = op == BXC_BIN_LT ? "gt" : op == BXC_BIN_GT ? "lt" : op == BXC_BIN_LE ? "ge"
                     : op == BXC_BIN_GE ? "le" : NULL;
    if (swap) t = find_top(swap);
    if (op == BXC_BIN_SUB || op == BXC_BIN_DIV) {
        const bxc_top *pre = find_top(op == BXC_BIN_SUB ? "neg" : "recip");
        BxvValue tmp;
        if (call_op(b, pre, &r, NULL, 0, e->span, &tmp) != BXI_OK) return BXI_ERR;
        r = tmp;
        t = find_top(op == BXC_BIN_SUB ? "add" : "mul");
    }
    return call_op(b, t, &r, &l, 1, e->span, out);
}

static bxi_status eval_block(body_cx *b, const bxc_block *blk, BxvValue *out) {
    uint32_t mark = b->in->nvars;
    bxi_status st = BXI_OK;
    for (uint32_t i = 0; i < blk->stmts.len && st == BXI_OK; i++) {
        const bxc_stmt *s = blk->stmts.items[i];
        BxvValue v;
        if (s->kind == BXC_STMT_LET && s->init) {
            st = eval(b, s->init, &v);
            if (st == BXI_OK && s->pat && s->pat->kind == BXC_PAT_IDENT) bxi_push_var(b->in, s->pat->name.name, false, &v);
        } else if (s->kind == BXC_STMT_EXPR && s->expr) {
            st = eval(b, s->expr, &v);
        }
    }
    if (st == BXI_OK) st = blk->tail ? eval(b, blk->tail, out) : (*out = bxv_unit(), BXI_OK);
    b->in->nvars = mark;
    return st;
}

static bxi_status eval_args(body_cx *b, const bxc_expr_list *al, uint32_t from, BxvValue *vals) {
    for (uint32_t i = from; i < al->len; i++)
        if (eval(b, al->items[i], &vals[i - from]) != BXI_OK) return BXI_ERR;
    return BXI_OK;
}

static bxi_status eval(body_cx *b, const bxc_expr *e, BxvValue *out) {
    bxi_interp *in = b->in;
    switch (e->kind) {
    case BXC_EXPR_BLOCK:
        return eval_block(b, e->block, out);
    case BXC_EXPR_PATH:
    case BXC_EXPR_INT:
    case BXC_EXPR_FLOAT:
    case BXC_EXPR_BOOL:
    case BXC_EXPR_CAST:
        if (bxi_eval_expr(in, e, out) != BXI_OK) return BXI_ERR;
        *out = bxi_strip(*out);
        return BXI_OK;
    case BXC_EXPR_FIELD: {
        BxvValue o;
        if (eval(b, e->field.object, &o) != BXI_OK) return BXI_ERR;
        if (o.kind == BXV_STRUCT)
            for (size_t i = 0; i < o.u.agg.n; i++)
                if (o.u.agg.names && o.u.agg.names[i] && !strcmp(o.u.agg.names[i], e->field.name.name)) {
                    *out = bxi_strip(o.u.agg.fields[i]);
                    return BXI_OK;
                }
        bxi_error(in, BXI_E_NAME, e->field.name.span, "no field `%s` on `%s`", e->field.name.name,
                  bxi_type_str(in, &o));
        return BXI_ERR;
    }
    case BXC_EXPR_UNARY: {
        BxvValue v;
        if (eval(b, e->unary.operand, &v) != BXI_OK) return BXI_ERR;
        bxc_unop op = e->unary.op;
        if (op == BXC_UN_REF || op == BXC_UN_REF_MUT || op == BXC_UN_DEREF) {
            *out = v;
            return BXI_OK;
        }
        if (is_spec(&v)) return call_op(b, find_top(op == BXC_UN_NEG ? "neg" : "not"), &v, NULL, 0, e->span, out);
        return bxi_eval_expr(in, e, out);   /* a number: the interpreter's rules */
    }
    case BXC_EXPR_BINARY: {
        BxvValue l, r;
        if (eval(b, e->binary.lhs, &l) != BXI_OK || eval(b, e->binary.rhs, &r) != BXI_OK) return BXI_ERR;
        if (is_spec(&l) || is_spec(&r)) return tensor_binop(b, e, l, r, out);
        return bxi_binop(in, e->binary.op, l, r, e->span, out);
    }
    case BXC_EXPR_METHOD_CALL: {
        const char *name = e->method_call.method.name;
        const bxc_top *t = find_top(name);
        BxvValue recv, args[BXC_TOP_MAX_ARGS];
        if (!t) {
            bxi_error(in, BXI_E_NAME, e->method_call.method.span, "`%s` is not a tensor op", name);
            return BXI_ERR;
        }
        if (e->method_call.args.len > BXC_TOP_MAX_ARGS) {
            bxi_error(in, BXI_E_ARITY, e->span, "`%s` takes %u argument%s, found %u", t->name, t->nargs,
                      t->nargs == 1 ? "" : "s", e->method_call.args.len);
            return BXI_ERR;
        }
        if (eval(b, e->method_call.receiver, &recv) != BXI_OK || eval_args(b, &e->method_call.args, 0, args) != BXI_OK)
            return BXI_ERR;
        return call_op(b, t, &recv, args, e->method_call.args.len, e->span, out);
    }
    case BXC_EXPR_CALL: {
        const bxc_expr *c = e->call.callee;
        const bxc_top *t = c->kind == BXC_EXPR_PATH && c->path->segs.len == 1 ? find_top(bxi_path_last(c->path)) : NULL;
        uint32_t n = e->call.args.len;
        if (!t || n == 0 || n > BXC_TOP_MAX_ARGS + 1) {
            bxi_error(in, BXI_E_UNSUPPORTED, e->span, "a default body calls tensor ops only");
            return BXI_ERR;
        }
        BxvValue recv, args[BXC_TOP_MAX_ARGS];
        if (eval(b, e->call.args.items[0], &recv) != BXI_OK || eval_args(b, &e->call.args, 1, args) != BXI_OK)
            return BXI_ERR;
        if (is_number(&recv) && t->cmath) {
            /* `erf(0.5)` is <math.h>'s: a number, whose value no spec depends on */
            *out = bxv_float(as_f64(&recv), BXV_F64);
            return BXI_OK;
        }
        return call_op(b, t, &recv, args, n - 1, e->span, out);
    }
    default:
        bxi_error(in, BXI_E_UNSUPPORTED, e->span, "this expression is not allowed in a default body");
        return BXI_ERR;
    }
}

bxi_status bxi_eval_default_body(bxi_interp *in, const bxc_fn *fn, const BxvValue *args, BxvValue *out) {
    if (!in->infer) {
        bxi_error(in, BXI_E_UNSUPPORTED, fn->name.span,
                  "evaluating a default body needs the runtime's inference rules, which this program lacks");
        return BXI_ERR;
    }
    body_cx b = {in, in->infer};
    uint32_t mark = in->nvars, start = in->frame_start;
    in->frame_start = in->nvars;   /* the body sees its parameters only */
    for (uint32_t i = 0, k = 0; i < fn->params.len; i++) {
        const bxc_param *p = fn->params.items[i];
        if (p->is_self) continue;
        BxvValue v = args[k++];
        v.refs = 0;
        if (p->pat && p->pat->kind == BXC_PAT_IDENT) bxi_push_var(in, p->pat->name.name, false, &v);
    }
    bxi_status st = eval_block(&b, fn->body, out);
    in->nvars = mark;
    in->frame_start = start;
    if (st == BXI_OK && !is_spec(out)) {
        bxi_error(in, BXI_E_META, fn->body->span, "the default body of `%s` must give a tensor, found `%s`",
                  fn->name.name, bxi_type_str(in, out));
        return BXI_ERR;
    }
    return st;
}
