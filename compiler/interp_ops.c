/* interp_ops.c — value arithmetic of the metadata interpreter: integer
 * literals taking their context's type, checked integer arithmetic (128-bit
 * intermediate, then a range check against the operands' type), float
 * arithmetic (f32 rounds at every step), comparisons, indexes, and checked
 * `as` casts.  Every failure is a located error (interp.h). */
#include "interp_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- integers ----------------------------------------------------------- */

/* Gives an integer literal the type `ty` (range-checked). */
bxi_status bxi_int_adopt(bxi_interp *in, BxvValue *v, BxvIntType ty, bxc_span span)
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
                      bxi_i128_str(buf, v->u.i.v), bxv_int_type_name(ty));
        else
            bxi_error(in, BXI_E_OVERFLOW, span, "value %s does not fit in `%s`",
                      bxi_i128_str(buf, v->u.i.v), bxv_int_type_name(ty));
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
        if (bxi_int_adopt(in, v, ity, span) != BXI_OK)
            return BXI_ERR;
    } else if (v->kind == BXV_FLOAT && bxi_tyexpr_float(in, t, &fty)) {
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
bxi_status bxi_int_binop(bxi_interp *in, bxc_binop op, BxvValue a, BxvValue b, bxc_span span,
                            BxvValue *out)
{
    BxvIntType ty = a.u.i.ty;
    if (a.u.i.ty != b.u.i.ty) {
        if (a.u.i.ty == BXV_ILIT) {
            if (bxi_int_adopt(in, &a, b.u.i.ty, span) != BXI_OK)
                return BXI_ERR;
            ty = b.u.i.ty;
        } else if (b.u.i.ty == BXV_ILIT) {
            if (bxi_int_adopt(in, &b, a.u.i.ty, span) != BXI_OK)
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
                      op == BXC_BIN_DIV ? "divide" : "take the remainder of", bxi_i128_str(bx, x));
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
                      binop_verb(op), bxi_i128_str(bx, x), bxc_binop_str(op), bxi_i128_str(by, y));
        else if (r < 0 && !bxv_int_type_signed(ty))
            bxi_error(in, BXI_E_OVERFLOW, span,
                      "attempt to %s with overflow: `%s %s %s` is negative, which `%s` cannot hold",
                      binop_verb(op), bxi_i128_str(bx, x), bxc_binop_str(op), bxi_i128_str(by, y),
                      bxv_int_type_name(ty));
        else
            bxi_error(in, BXI_E_OVERFLOW, span,
                      "attempt to %s with overflow: `%s %s %s` = %s does not fit in `%s`",
                      binop_verb(op), bxi_i128_str(bx, x), bxc_binop_str(op), bxi_i128_str(by, y),
                      bxi_i128_str(br, r), bxv_int_type_name(ty));
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

bxi_status bxi_binop(bxi_interp *in, bxc_binop op, BxvValue a, BxvValue b, bxc_span span,
                        BxvValue *out)
{
    /* Operators see through references (`*axis + 1` and `axis + 1` alike,
     * as Rust's `impl Add<&usize> for usize`). */
    a = bxi_strip(a);
    b = bxi_strip(b);
    if (a.kind == BXV_INT && b.kind == BXV_INT)
        return bxi_int_binop(in, op, a, b, span, out);
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
              bxi_type_str(in, &a), bxi_type_str(in, &b));
    return BXI_ERR;
}

/* A non-negative integer usable as an index or dimension. */
bxi_status bxi_to_index(bxi_interp *in, BxvValue v, bxc_span span, const char *what, uint64_t *out)
{
    v = bxi_strip(v);
    if (v.kind != BXV_INT) {
        bxi_error(in, BXI_E_TYPE, span, "%s must be a `usize`, found `%s`", what, bxi_type_str(in, &v));
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
        bxi_error(in, BXI_E_NEGATIVE, span, "%s is negative (%s)", what, bxi_i128_str(buf, v.u.i.v));
        return BXI_ERR;
    }
    if (v.u.i.v > (__int128)UINT64_MAX) {
        bxi_error(in, BXI_E_OVERFLOW, span, "%s %s does not fit in `usize`", what, bxi_i128_str(buf, v.u.i.v));
        return BXI_ERR;
    }
    *out = (uint64_t)v.u.i.v;
    return BXI_OK;
}

/* ---- casts -------------------------------------------------------------- */

/* `e as T`.  Unlike Rust, which wraps or saturates, an `as` whose value does
 * not fit the target is an error: metadata that silently wraps would
 * describe a tensor that does not exist. */
bxi_status bxi_eval_cast(bxi_interp *in, const bxc_expr *e, BxvValue *out)
{
    BxvValue v;
    bxi_status st = bxi_eval_expr(in, e->cast.expr, &v);
    if (st != BXI_OK)
        return st;
    v = bxi_strip(v);
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
            bxi_error(in, BXI_E_TYPE, e->span, "cannot cast `%s` to `%s`", bxi_type_str(in, &v), bxv_int_type_name(ity));
            return BXI_ERR;
        }
        if (!bxv_int_fits(x, ity)) {
            if (x < 0 && !bxv_int_type_signed(ity))
                bxi_error(in, BXI_E_NEGATIVE, e->span, "negative value %s cannot be cast to `%s`", bxi_i128_str(buf, x),
                          bxv_int_type_name(ity));
            else
                bxi_error(in, BXI_E_OVERFLOW, e->span, "value %s does not fit in `%s`", bxi_i128_str(buf, x),
                          bxv_int_type_name(ity));
            return BXI_ERR;
        }
        *out = bxv_int(x, ity);
        return BXI_OK;
    }
    if (bxi_tyexpr_float(in, e->cast.type, &fty)) {
        if (v.kind == BXV_INT)
            *out = bxv_float((double)v.u.i.v, fty);
        else if (v.kind == BXV_FLOAT)
            *out = bxv_float(v.u.f.v, fty);
        else {
            bxi_error(in, BXI_E_TYPE, e->span, "cannot cast `%s` to `%s`", bxi_type_str(in, &v), bxv_float_type_name(fty));
            return BXI_ERR;
        }
        return BXI_OK;
    }
    bxi_error(in, BXI_E_TYPE, e->cast.type->span, "`as` converts only to integer and float types");
    return BXI_ERR;
}

