/* emit_ext.c — the members of an extension method's descriptor that look
 * at its ordinary arguments (runtime/include/bext/ext.h, docs/codegen.md
 * "Descriptors"):
 *
 *   args_hash / args_encode / args_decode  every non-tensor value of the
 *       argument struct, field by field (inside extension values too, enum
 *       tags included: a tag decides which tensor slots exist), in the
 *       little-endian format of <bext/gen.h>'s writer and reader;
 *   out_encode / out_decode  the same for an output value (struct, tuple,
 *       enum or plain value), so a remote call carries it back;
 *   scalars  language.md §4: the checker's list (bxc_method_rec.scalars,
 *       in declaration order: inferred, marked and custom, the last through
 *       the generated `<prefix>_scalar_<param>`), which the interpreter's
 *       `:scalars` reads too, since a test holds the two to the same answers;
 *   meta     the output metadata through the generated `_meta_dtype` /
 *       `_meta_shape` / `_meta` functions, the tensors seen as their specs;
 *   meta_check  an output value against that metadata (check mode, and
 *       Fusion when a deferred call ran);
 *   out_from_meta  the inverse: the output value built from its metadata,
 *       each tensor made by the caller (Remote streams a value with it;
 *       Fusion publishes lazy handles with it).
 *
 * emit_dispatch.c calls bxc_emit_ext_members while it writes a descriptor.
 * Types are walked like emit_dispatch.c's collect() walks them for tensor
 * slots: C accessors built as strings, enums as a switch on the tag. */
#include <string.h>

#include "emit_int.h"

#define EXT_MAX_DEPTH 64

static bxc_type *base_type(bxc_type *t) { return bxc_type_strip_refs(bxc_type_resolve(t)); }

static const char *field_cname(bxc_emit_ctx *cx, const bxc_type_field *f, uint32_t i) {
    return f->name ? bxc_emit_ident(cx->a, f->name) : bxc_arena_printf(cx->a, "_%u", i);
}

static int int_bytes(bxc_int_kind k) {
    switch (k) {
    case BXC_I8: case BXC_U8: return 1;
    case BXC_I16: case BXC_U16: return 2;
    case BXC_I32: case BXC_U32: return 4;
    default: return 8;
    }
}

/* ---- encode / hash / decode ------------------------------------------------ */

/* Appends to b the statements that write (put) or read (get) the ordinary
 * parts of the value at C lvalue acc, of type t. */
static void walk_ordinary(bxc_emit_ctx *cx, bxc_emit_buf *b, bool get, bxc_type *t, const char *acc,
                          const char *ind, int depth) {
    t = base_type(t);
    if (depth > EXT_MAX_DEPTH) return;
    switch (t->kind) {
    case BXC_TYPE_TENSOR: return;   /* a slot: travels apart */
    case BXC_TYPE_BOOL:
        if (get) bxc_emit_printf(b, "%s%s = bext_gen_get_bool(bext_r);\n", ind, acc);
        else bxc_emit_printf(b, "%sbext_gen_put(bext_w, %s ? 1u : 0u, 1);\n", ind, acc);
        return;
    case BXC_TYPE_INT: {
        int n = int_bytes(t->int_kind);
        const char *ct = bxc_emit_ctype_of(cx, t);
        if (!get) bxc_emit_printf(b, "%sbext_gen_put(bext_w, (uint64_t)%s, %d);\n", ind, acc, n);
        else if (t->int_kind == BXC_USIZE) bxc_emit_printf(b, "%s%s = bext_gen_get_usize(bext_r);\n", ind, acc);
        else if (t->int_kind == BXC_ISIZE) bxc_emit_printf(b, "%s%s = bext_gen_get_isize(bext_r);\n", ind, acc);
        else if (bxc_int_kind_signed(t->int_kind))
            bxc_emit_printf(b, "%s%s = (%s)bext_gen_get_signed(bext_r, %d);\n", ind, acc, ct, n);
        else bxc_emit_printf(b, "%s%s = (%s)bext_gen_get(bext_r, %d);\n", ind, acc, ct, n);
        return;
    }
    case BXC_TYPE_FLOAT: {
        const char *w = t->float_kind == BXC_F32 ? "f32" : "f64";
        if (get) bxc_emit_printf(b, "%s%s = bext_gen_get_%s(bext_r);\n", ind, acc, w);
        else bxc_emit_printf(b, "%sbext_gen_put_%s(bext_w, %s);\n", ind, w, acc);
        return;
    }
    case BXC_TYPE_SHAPE:
        bxc_emit_printf(b, "%sbext_gen_%s_shape(bext_%c, &%s);\n", ind, get ? "get" : "put", get ? 'r' : 'w', acc);
        return;
    case BXC_TYPE_DTYPE:
        if (get) bxc_emit_printf(b, "%s%s = bext_gen_get_dtype(bext_r);\n", ind, acc);
        else bxc_emit_printf(b, "%sbext_gen_put(bext_w, (uint64_t)%s, 1);\n", ind, acc);
        return;
    case BXC_TYPE_SPEC:
        walk_ordinary(cx, b, get, bxc_type_shape(), bxc_arena_printf(cx->a, "%s.shape", acc), ind, depth + 1);
        walk_ordinary(cx, b, get, bxc_type_dtype(), bxc_arena_printf(cx->a, "%s.dtype", acc), ind, depth + 1);
        return;
    case BXC_TYPE_TUPLE:
        for (uint32_t i = 0; i < t->tuple.n; i++)
            walk_ordinary(cx, b, get, t->tuple.elems[i], bxc_arena_printf(cx->a, "%s._%u", acc, i), ind, depth + 1);
        return;
    case BXC_TYPE_STRUCT:
        for (uint32_t i = 0; i < t->decl->nfields; i++)
            walk_ordinary(cx, b, get, t->decl->fields[i].type,
                          bxc_arena_printf(cx->a, "%s.%s", acc, field_cname(cx, &t->decl->fields[i], i)), ind,
                          depth + 1);
        return;
    case BXC_TYPE_ENUM: {
        const bxc_type_decl *d = t->decl;
        if (get)
            bxc_emit_printf(b, "%s%s.tag = (%s)bext_gen_get_tag(bext_r, %uu);\n", ind, acc, bxc_emit_tag_type(cx, d),
                            d->nvariants);
        else bxc_emit_printf(b, "%sbext_gen_put(bext_w, (uint64_t)%s.tag, 4);\n", ind, acc);
        const char *ind2 = bxc_arena_printf(cx->a, "%s  ", ind);
        bxc_emit_buf cases = {0};
        for (uint32_t v = 0; v < d->nvariants; v++) {
            const bxc_type_variant *var = &d->variants[v];
            bxc_emit_buf sub = {0};
            for (uint32_t i = 0; i < var->nfields; i++)
                walk_ordinary(cx, &sub, get, var->fields[i].type,
                              bxc_arena_printf(cx->a, "%s.as.%s.%s", acc, var->name, field_cname(cx, &var->fields[i], i)),
                              ind2, depth + 1);
            if (sub.len) {
                bxc_emit_printf(&cases, "%scase %s:\n", ind, bxc_emit_tag_const(cx, d, var->name));
                bxc_emit_append(&cases, &sub);
                bxc_emit_printf(&cases, "%sbreak;\n", ind2);
            }
            bxc_emit_buf_free(&sub);
        }
        if (cases.len) {
            bxc_emit_printf(b, "%sswitch (%s.tag) {\n", ind, acc);
            bxc_emit_append(b, &cases);
            bxc_emit_printf(b, "%sdefault:\n%sbreak;\n%s}\n", ind, ind2, ind);
        }
        bxc_emit_buf_free(&cases);
        return;
    }
    default:
        /* every kind bxc_emit_no_c_form accepts is a case above (E0710) */
        bxc_emit_internal_error(cx, bxc_span_none(), "an argument of type `%s` to encode", bxc_type_name(cx->a, t));
        return;
    }
}

/* The encoder and decoder of one value of C type ct (the argument struct,
 * or an output value): `<fn>_put` writes the version byte and then put,
 * `<fn>_encode` / `<fn>_decode` are the descriptor's members.  One writer
 * and one reader for arguments and outputs, so both travel in one format. */
static void emit_value_codec(bxc_emit_ctx *cx, const char *fn, const char *ct, bxc_emit_buf *put, bxc_emit_buf *get) {
    bxc_emit_buf *c = &cx->code_c;
    bxc_emit_printf(c, "static void %s_put(const %s *bext_a, bext_gen_writer *bext_w) {\n", fn, ct);
    bxc_emit_puts(c, "  bext_gen_put(bext_w, BEXT_GEN_ENCODING_VERSION, 1);\n");
    if (put->len) bxc_emit_append(c, put);
    else bxc_emit_puts(c, "  (void)bext_a;\n");
    bxc_emit_puts(c, "}\n");
    bxc_emit_printf(c, "static size_t %s_encode(const void *bext_p, unsigned char *bext_buf, size_t bext_cap) {\n"
                       "  bext_gen_writer bext_w = {bext_buf, bext_cap, 0, BEXT_GEN_FNV_OFFSET};\n"
                       "  %s_put((const %s *)bext_p, &bext_w);\n"
                       "  return bext_w.len;\n}\n", fn, fn, ct);
    bxc_emit_printf(c, "static size_t %s_decode(void *bext_p, const unsigned char *bext_buf, size_t bext_n) {\n"
                       "  %s *bext_a = bext_p;\n"
                       "  bext_gen_reader bext_rd = {bext_buf, bext_n, 0, false}, *bext_r = &bext_rd;\n"
                       "  memset(bext_a, 0, sizeof *bext_a);\n"
                       "  if (!bext_buf || bext_gen_get(bext_r, 1) != BEXT_GEN_ENCODING_VERSION) return 0;\n", fn, ct);
    bxc_emit_append(c, get);
    bxc_emit_puts(c, "  if (bext_r->bad) {\n    memset(bext_a, 0, sizeof *bext_a);\n    return 0;\n  }\n"
                     "  return bext_r->pos;\n}\n");
}

static void emit_codec(bxc_emit_ctx *cx, const char *e, const bxc_emit_param *ps, uint32_t np, bxc_type *ret,
                       bxc_emit_buf *mem) {
    bxc_emit_buf *c = &cx->code_c;
    bxc_emit_buf put = {0}, get = {0};
    for (uint32_t i = 0; i < np; i++) {
        if (ps[i].is_tensor) continue;
        walk_ordinary(cx, &put, false, ps[i].type, bxc_arena_printf(cx->a, "bext_a->%s", ps[i].name), "  ", 0);
        walk_ordinary(cx, &get, true, ps[i].type, bxc_arena_printf(cx->a, "bext_a->%s", ps[i].name), "  ", 0);
    }
    const char *fn = bxc_arena_printf(cx->a, "%s_bext", e);
    emit_value_codec(cx, fn, bxc_arena_printf(cx->a, "struct %s_bext_args", e), &put, &get);
    /* the hash is a function of the encoding: one walk feeds both */
    bxc_emit_printf(c, "static uint64_t %s_bext_hash(const void *bext_p) {\n"
                       "  bext_gen_writer bext_w = {NULL, 0, 0, BEXT_GEN_FNV_OFFSET};\n"
                       "  %s_bext_put((const struct %s_bext_args *)bext_p, &bext_w);\n"
                       "  return bext_w.hash;\n}\n", e, e, e);
    bxc_emit_buf_free(&put);
    bxc_emit_buf_free(&get);
    bxc_emit_printf(mem, "  .args_hash = %s_bext_hash,\n  .args_encode = %s_bext_encode,\n  .args_decode = %s_bext_decode,\n",
                    e, e, e);

    /* An output value (not one tensor, not nothing): its ordinary parts,
     * enum tags included, so a remote call can carry it back. */
    bxc_type *rt = base_type(ret);
    if (rt->kind == BXC_TYPE_TENSOR || rt->kind == BXC_TYPE_UNIT) return;
    bxc_emit_buf oput = {0}, oget = {0};
    walk_ordinary(cx, &oput, false, rt, "(*bext_a)", "  ", 0);
    walk_ordinary(cx, &oget, true, rt, "(*bext_a)", "  ", 0);
    emit_value_codec(cx, bxc_arena_printf(cx->a, "%s_bext_value", e), bxc_emit_ctype_of(cx, rt), &oput, &oget);
    bxc_emit_buf_free(&oput);
    bxc_emit_buf_free(&oget);
    bxc_emit_printf(mem, "  .out_encode = %s_bext_value_encode,\n  .out_decode = %s_bext_value_decode,\n", e, e);
}

/* ---- the metadata view of the arguments ------------------------------------- */

/* Fills dst (C lvalue of type dst_t, the metadata companion's side) from
 * src (type src_t): tensors become specs, ordinary values are copied. */
static void view_value(bxc_emit_ctx *cx, bxc_emit_buf *b, bxc_type *src_t, bxc_type *dst_t, const char *src,
                       const char *dst, const char *disp, const char *what, const char *err, const char *fail,
                       const char *ind, int depth) {
    src_t = base_type(src_t);
    dst_t = dst_t ? base_type(dst_t) : NULL;
    if (depth > EXT_MAX_DEPTH) return;
    if (src_t->kind == BXC_TYPE_TENSOR) {
        bxc_emit_printf(b, "%sif (!bext_gen_spec_of(%s, %s, %s, %s, &%s)) %s\n", ind, err, what,
                        bxc_emit_cstring(cx->a, disp), src, dst, fail);
        return;
    }
    if (!bxc_emit_type_has_tensors(src_t)) {
        bxc_emit_printf(b, "%s%s = %s;\n", ind, dst, src);
        return;
    }
    if ((src_t->kind == BXC_TYPE_STRUCT || src_t->kind == BXC_TYPE_ENUM) && src_t->decl->metadata &&
        (!dst_t || dst_t->decl != src_t->decl))
        dst_t = base_type(src_t->decl->metadata);
    if (!dst_t || dst_t->kind != src_t->kind) {
        bxc_emit_error(cx, bxc_span_none(), "the C generator cannot build the metadata of `%s`",
                       bxc_type_name(cx->a, src_t));
        return;
    }
    if (src_t->kind == BXC_TYPE_TUPLE) {
        for (uint32_t i = 0; i < src_t->tuple.n && i < dst_t->tuple.n; i++)
            view_value(cx, b, src_t->tuple.elems[i], dst_t->tuple.elems[i], bxc_arena_printf(cx->a, "%s._%u", src, i),
                       bxc_arena_printf(cx->a, "%s._%u", dst, i), bxc_arena_printf(cx->a, "%s.%u", disp, i), what, err,
                       fail, ind, depth + 1);
        return;
    }
    const bxc_type_decl *sd = src_t->decl, *dd = dst_t->decl;
    if (src_t->kind == BXC_TYPE_STRUCT) {
        for (uint32_t i = 0; i < sd->nfields && i < dd->nfields; i++) {
            const bxc_type_field *f = &sd->fields[i];
            view_value(cx, b, f->type, dd->fields[i].type, bxc_arena_printf(cx->a, "%s.%s", src, field_cname(cx, f, i)),
                       bxc_arena_printf(cx->a, "%s.%s", dst, field_cname(cx, &dd->fields[i], i)),
                       bxc_arena_printf(cx->a, "%s.%s", disp, f->name ? f->name : bxc_arena_printf(cx->a, "%u", i)),
                       what, err, fail, ind, depth + 1);
        }
        return;
    }
    /* an enum: the companion shares the enum's tag type and constants */
    bxc_emit_printf(b, "%s%s.tag = %s.tag;\n", ind, dst, src);
    bxc_emit_printf(b, "%sswitch (%s.tag) {\n", ind, src);
    const char *ind2 = bxc_arena_printf(cx->a, "%s  ", ind);
    for (uint32_t v = 0; v < sd->nvariants && v < dd->nvariants; v++) {
        const bxc_type_variant *sv = &sd->variants[v], *dv = &dd->variants[v];
        if (!sv->nfields) continue;
        bxc_emit_printf(b, "%scase %s:\n", ind, bxc_emit_tag_const(cx, sd, sv->name));
        for (uint32_t i = 0; i < sv->nfields && i < dv->nfields; i++) {
            const bxc_type_field *f = &sv->fields[i];
            view_value(cx, b, f->type, dv->fields[i].type,
                       bxc_arena_printf(cx->a, "%s.as.%s.%s", src, sv->name, field_cname(cx, f, i)),
                       bxc_arena_printf(cx->a, "%s.as.%s.%s", dst, dv->name, field_cname(cx, &dv->fields[i], i)),
                       bxc_arena_printf(cx->a, "%s(%s).%s", disp, sv->name,
                                        f->name ? f->name : bxc_arena_printf(cx->a, "%u", i)),
                       what, err, fail, ind2, depth + 1);
        }
        bxc_emit_printf(b, "%sbreak;\n", ind2);
    }
    bxc_emit_printf(b, "%sdefault:\n%sbreak;\n%s}\n", ind, ind2, ind);
}

/* Declares and fills `bext_v<i>` for every tensor (a bext_meta_spec) and
 * extension value (its companion) among the parameters; on failure runs
 * `fail` with the error in `err` (an expression of type bext_meta_error *). */
static void emit_view(bxc_emit_ctx *cx, bxc_emit_buf *b, const bxc_emit_param *ps, uint32_t np, const char *what,
                      const char *err, const char *fail) {
    for (uint32_t i = 0; i < np; i++) {
        const bxc_emit_param *p = &ps[i];
        const char *src = bxc_arena_printf(cx->a, "bext_a->%s", p->name);
        const char *dst = bxc_arena_printf(cx->a, "bext_v%u", i);
        if (p->is_tensor) {
            bxc_emit_printf(b, "  bext_meta_spec %s;\n", dst);
        } else if (bxc_type_is_extension(p->type) && p->type->decl->metadata) {
            bxc_emit_printf(b, "  %s %s;\n", bxc_emit_ctype_of(cx, p->type->decl->metadata), dst);
        } else {
            continue;
        }
        bxc_emit_printf(b, "  memset(&%s, 0, sizeof %s);\n", dst, dst);
        view_value(cx, b, p->type, NULL, src, dst, p->src_name, what, err, fail, "  ", 0);
    }
}

/* The argument list of a metadata function over the view: form 0 is
 * `dtype =` (tensors as their dtype), 1 `shape =`, 2 meta / scalar. */
static const char *view_args(bxc_emit_ctx *cx, const bxc_emit_param *ps, uint32_t np, int form) {
    const char *s = "";
    for (uint32_t i = 0; i < np; i++) {
        const bxc_emit_param *p = &ps[i];
        const char *a;
        if (p->is_tensor) a = form == 0 ? bxc_arena_printf(cx->a, "bext_v%u.dtype", i)
                              : form == 1 ? bxc_arena_printf(cx->a, "&bext_v%u.shape", i)
                                          : bxc_arena_printf(cx->a, "&bext_v%u", i);
        else if (bxc_type_is_extension(p->type)) a = bxc_arena_printf(cx->a, "&bext_v%u", i);
        else a = bxc_arena_printf(cx->a, "&bext_a->%s", p->name);
        s = bxc_arena_printf(cx->a, "%s%s, ", s, a);
    }
    return s;
}

/* ---- scalars (language.md §4) ------------------------------------------------ */

/* Appends `bext_s[k]`'s kind, type and value from C expression v of scalar
 * type t; false if t is not a scalar. */
static bool scalar_value(bxc_emit_ctx *cx, bxc_emit_buf *b, const char *ind, uint32_t k, bxc_type *t, const char *v) {
    t = base_type(t);
    if (t->kind == BXC_TYPE_INT) {
        bool s = bxc_int_kind_signed(t->int_kind);
        bxc_emit_printf(b, "%sbext_s[%u].type = \"%s\";\n%sbext_s[%u].kind = %s;\n%sbext_s[%u].%s = (%s)%s;\n", ind, k,
                        bxc_int_kind_name(t->int_kind), ind, k, s ? "BEXT_SCALAR_INT" : "BEXT_SCALAR_UINT", ind, k,
                        s ? "i" : "u", s ? "int64_t" : "uint64_t", v);
    } else if (t->kind == BXC_TYPE_FLOAT) {
        bxc_emit_printf(b, "%sbext_s[%u].type = \"%s\";\n%sbext_s[%u].kind = BEXT_SCALAR_FLOAT;\n%sbext_s[%u].f = (double)%s;\n",
                        ind, k, bxc_float_kind_name(t->float_kind), ind, k, ind, k, v);
    } else if (t->kind == BXC_TYPE_BOOL) {
        bxc_emit_printf(b, "%sbext_s[%u].type = \"bool\";\n%sbext_s[%u].kind = BEXT_SCALAR_BOOL;\n%sbext_s[%u].b = %s;\n",
                        ind, k, ind, k, ind, k, v);
    } else {
        return false;
    }
    return true;
}

/* The record's scalar list (bxc_method_rec.scalars): the checker decided
 * which arguments are scalars, how each is read and its type. */
static void emit_scalars(bxc_emit_ctx *cx, const char *e, const char *what, const bxc_emit_param *ps, uint32_t np,
                         const bxc_emit_meta_info *info, bxc_emit_buf *mem) {
    bxc_emit_buf *c = &cx->code_c;
    bxc_emit_buf body = {0};
    uint32_t n = 0;
    bool need_view = false;
    const char *wq = bxc_emit_cstring(cx->a, what);
    const bxc_method_rec *rec = info->rec;
    for (uint32_t k = 0; rec && k < rec->nscalars; k++) {
        const bxc_method_scalar *s = &rec->scalars[k];
        if (s->param >= np) {   /* method_signature keeps every parameter */
            bxc_emit_internal_error(cx, rec->fn->name.span, "a scalar of a parameter the generator has not");
            continue;
        }
        const bxc_emit_param *p = &ps[s->param];
        const char *acc = bxc_arena_printf(cx->a, "bext_a->%s", p->name);
        const char *origin = s->kind == BXC_SCALAR_CUSTOM   ? "BEXT_SCALAR_CUSTOM"
                             : s->kind == BXC_SCALAR_MARKED ? "BEXT_SCALAR_MARKED"
                                                            : "BEXT_SCALAR_INFERRED";
        switch (s->read) {
        case BXC_SCALAR_READ_ENCODING: {
            /* the result type of the generated <e>_scalar_<param> (emit_meta.c) */
            bxc_type *rt = info->scalar ? info->scalar[s->param] : NULL;
            if (!rt) {
                /* a method the checker did not see (a cfg off for bextc) */
                bxc_emit_printf(&body, "  BEXT_GEN_SET_ERROR(\"%%s: the scalar encoding of `%%s` was not generated "
                                       "(bextc did not check this method)\", %s, \"%s\");\n  return -1;\n",
                                wq, p->src_name);
                n++;
                continue;
            }
            need_view = true;
            bxc_emit_printf(&body, "  {\n    %s bext_x;\n    memset(&bext_x, 0, sizeof bext_x);\n",
                            bxc_emit_ctype_of(cx, base_type(rt)));
            bxc_emit_printf(&body, "    if (!%s_scalar_%s(%s&bext_x, &bext_err)) {\n"
                                   "      BEXT_GEN_SET_ERROR(\"%%s: the scalar encoding of `%%s` failed: %%s %%s\", %s, \"%s\", "
                                   "bext_err.code, bext_err.msg);\n      return -1;\n    }\n",
                            e, p->p->pat->name.name, view_args(cx, ps, np, 2), wq, p->src_name);
            /* `e` is the entry point, which is `<prefix>` of the encodings */
            bxc_emit_buf v = {0};
            if (!scalar_value(cx, &v, "    ", n, rt, "bext_x"))
                /* check_sig.c's check_scalars: "expected a scalar" (E0508) */
                bxc_emit_internal_error(cx, p->p->span, "a scalar encoding of `%s` that is no scalar", p->src_name);
            bxc_emit_append(&body, &v);
            bxc_emit_buf_free(&v);
            bxc_emit_puts(&body, "  }\n");
            break;
        }
        case BXC_SCALAR_READ_TAG:
        case BXC_SCALAR_READ_FIELD:
        case BXC_SCALAR_READ_VALUE: {
            const char *v = acc;
            if (s->read == BXC_SCALAR_READ_TAG) v = bxc_arena_printf(cx->a, "%s.tag", acc);
            if (s->read == BXC_SCALAR_READ_FIELD)
                v = bxc_arena_printf(cx->a, "%s.%s", acc, field_cname(cx, &base_type(p->type)->decl->fields[0], 0));
            if (!s->type || !scalar_value(cx, &body, "  ", n, s->type, v)) {
                /* check_sig.c's record_scalars gives these a scalar type */
                bxc_emit_internal_error(cx, p->p->span, "a scalar `%s` with no scalar type", p->src_name);
                continue;
            }
            break;
        }
        case BXC_SCALAR_READ_NONE:
            /* check_sig.c reports it (E0508), except on a switched-off method */
            bxc_emit_error(cx, p->p->span, "`%s` is marked `#[fusion(scalar)]`, but its type does not convert to one",
                           p->src_name);
            continue;
        }
        bxc_emit_printf(&body, "  bext_s[%u].name = \"%s\";\n  bext_s[%u].origin = %s;\n", n, p->src_name, n, origin);
        n++;
    }
    bxc_emit_printf(c, "static int %s_bext_scalars(const void *bext_p, bext_ext_scalar *bext_out, int bext_cap) {\n", e);
    if (!n) {
        bxc_emit_puts(c, "  (void)bext_p;\n  (void)bext_out;\n  (void)bext_cap;\n  return 0;\n}\n");
    } else {
        bxc_emit_printf(c, "  const struct %s_bext_args *bext_a = bext_p;\n  bext_ext_scalar bext_s[%u];\n"
                           "  memset(bext_s, 0, sizeof bext_s);\n", e, n);
        if (need_view) {
            bxc_emit_puts(c, "  bext_meta_error bext_err;\n  memset(&bext_err, 0, sizeof bext_err);\n");
            emit_view(cx, c, ps, np, wq, "&bext_err",
                      "{\n    BEXT_GEN_SET_ERROR(\"%s %s\", bext_err.code, bext_err.msg);\n    return -1;\n  }");
        }
        bxc_emit_append(c, &body);
        bxc_emit_printf(c, "  for (int bext_i = 0; bext_i < %u && bext_i < bext_cap; bext_i++) bext_out[bext_i] = bext_s[bext_i];\n"
                           "  return %u;\n}\n", n, n);
    }
    bxc_emit_buf_free(&body);
    bxc_emit_printf(mem, "  .nscalars = %u,\n  .scalars = %s_bext_scalars,\n", n, e);
}

/* ---- output metadata ----------------------------------------------------------- */

static void emit_meta(bxc_emit_ctx *cx, const char *e, const char *what, const bxc_emit_param *ps, uint32_t np,
                      const bxc_emit_meta_info *info, bxc_emit_buf *mem) {
    bool field = info->dtype && info->shape;
    if (!field && !info->meta) return;
    bxc_emit_buf *c = &cx->code_c;
    const char *out_ct = field ? "bext_meta_spec" : bxc_emit_ctype_of(cx, base_type(info->meta_ret));
    bxc_emit_printf(c, "static bool %s_bext_meta(const void *bext_p, void *bext_out, bext_meta_error *bext_err) {\n"
                       "  const struct %s_bext_args *bext_a = bext_p;\n", e, e);
    emit_view(cx, c, ps, np, bxc_emit_cstring(cx->a, what), "bext_err", "return false;");
    if (field)
        bxc_emit_printf(c, "  bext_meta_spec *bext_o = bext_out;\n"
                           "  return %s_meta_dtype(%s&bext_o->dtype, bext_err) && %s_meta_shape(%s&bext_o->shape, bext_err);\n}\n",
                        e, view_args(cx, ps, np, 0), e, view_args(cx, ps, np, 1));
    else
        bxc_emit_printf(c, "  return %s_meta(%s(%s *)bext_out, bext_err);\n}\n", e, view_args(cx, ps, np, 2), out_ct);
    bxc_emit_printf(mem, "  .meta_size = sizeof(%s),\n  .meta = %s_bext_meta,\n", out_ct, e);
}

/* ---- check mode: the output against the metadata ------------------------------ */

/* Appends the comparison of metadata values got and want (C lvalues of
 * the metadata type t), leaf by leaf; a mismatch returns false with
 * bext_why naming the field (disp) and both values.  Ordinary fields
 * (ints, floats, bools, shapes and dtypes outside a tensor's spec) are
 * compared only when `bext_fields` is set: a lazy implementation
 * publishes the metadata's own values and discards the backend's, so
 * only check mode asks about them. */
static void compare_value(bxc_emit_ctx *cx, bxc_emit_buf *b, bxc_type *t, const char *got, const char *want,
                          const char *disp, const char *ind, int depth) {
    t = base_type(t);
    if (depth > EXT_MAX_DEPTH) return;
    const char *d = bxc_emit_cstring(cx->a, disp);
    switch (t->kind) {
    case BXC_TYPE_SPEC:
        bxc_emit_printf(b, "%sif (!bext_gen_check_spec(bext_why, bext_n, %s, &%s, &%s)) return false;\n", ind, d, got,
                        want);
        return;
    case BXC_TYPE_SHAPE:
        bxc_emit_printf(b, "%sif (bext_fields && !bext_gen_check_shape(bext_why, bext_n, %s, &%s, &%s)) return false;\n", ind, d, got,
                        want);
        return;
    case BXC_TYPE_DTYPE:
        bxc_emit_printf(b, "%sif (bext_fields && !bext_gen_check_dtype(bext_why, bext_n, %s, %s, %s)) return false;\n", ind, d, got,
                        want);
        return;
    case BXC_TYPE_INT:
        bxc_emit_printf(b, "%sif (bext_fields && !bext_gen_check_int(bext_why, bext_n, %s, (bext_i128)%s, (bext_i128)%s)) return false;\n",
                        ind, d, got, want);
        return;
    case BXC_TYPE_FLOAT:
        bxc_emit_printf(b, "%sif (bext_fields && !bext_gen_check_float(bext_why, bext_n, %s, (double)%s, (double)%s)) return false;\n",
                        ind, d, got, want);
        return;
    case BXC_TYPE_BOOL:
        bxc_emit_printf(b, "%sif (bext_fields && !bext_gen_check_bool(bext_why, bext_n, %s, %s, %s)) return false;\n", ind, d, got,
                        want);
        return;
    case BXC_TYPE_TUPLE:
        for (uint32_t i = 0; i < t->tuple.n; i++)
            compare_value(cx, b, t->tuple.elems[i], bxc_arena_printf(cx->a, "%s._%u", got, i),
                          bxc_arena_printf(cx->a, "%s._%u", want, i), bxc_arena_printf(cx->a, "%s.%u", disp, i), ind,
                          depth + 1);
        return;
    case BXC_TYPE_STRUCT: {
        const bxc_type_decl *sd = t->decl;
        for (uint32_t i = 0; i < sd->nfields; i++) {
            const bxc_type_field *f = &sd->fields[i];
            compare_value(cx, b, f->type, bxc_arena_printf(cx->a, "%s.%s", got, field_cname(cx, f, i)),
                          bxc_arena_printf(cx->a, "%s.%s", want, field_cname(cx, f, i)),
                          bxc_arena_printf(cx->a, "%s.%s", disp, f->name ? f->name : bxc_arena_printf(cx->a, "%u", i)),
                          ind, depth + 1);
        }
        return;
    }
    case BXC_TYPE_ENUM: {
        const bxc_type_decl *ed = t->decl;
        const char *names = "";
        for (uint32_t v = 0; v < ed->nvariants; v++)
            names = bxc_arena_printf(cx->a, "%s%s%s", names, v ? ", " : "", bxc_emit_cstring(cx->a, ed->variants[v].name));
        bxc_emit_printf(b,
                        "%sif (!bext_gen_check_tag(bext_why, bext_n, %s, (unsigned)%s.tag, (unsigned)%s.tag,\n"
                        "%s                        (const char *const[]){%s}, %u)) return false;\n",
                        ind, d, got, want, ind, names, ed->nvariants);
        bxc_emit_printf(b, "%sswitch (%s.tag) {\n", ind, got);
        const char *ind2 = bxc_arena_printf(cx->a, "%s  ", ind);
        for (uint32_t v = 0; v < ed->nvariants; v++) {
            const bxc_type_variant *var = &ed->variants[v];
            if (!var->nfields) continue;
            bxc_emit_printf(b, "%scase %s:\n", ind, bxc_emit_tag_const(cx, ed, var->name));
            for (uint32_t i = 0; i < var->nfields; i++) {
                const bxc_type_field *f = &var->fields[i];
                compare_value(cx, b, f->type, bxc_arena_printf(cx->a, "%s.as.%s.%s", got, var->name, field_cname(cx, f, i)),
                              bxc_arena_printf(cx->a, "%s.as.%s.%s", want, var->name, field_cname(cx, f, i)),
                              bxc_arena_printf(cx->a, "%s(%s).%s", disp, var->name,
                                               f->name ? f->name : bxc_arena_printf(cx->a, "%u", i)),
                              ind2, depth + 1);
            }
            bxc_emit_printf(b, "%sbreak;\n", ind2);
        }
        bxc_emit_printf(b, "%sdefault:\n%sbreak;\n%s}\n", ind, ind2, ind);
        return;
    }
    default:
        return;
    }
}

/* meta_check: the output value seen as metadata (tensors as their specs,
 * the view meta's arguments get), then compared with what meta computed. */
static void emit_meta_check(bxc_emit_ctx *cx, const char *e, const char *what, bxc_type *ret,
                            const bxc_emit_meta_info *info, bxc_emit_buf *mem) {
    bool field = info->dtype && info->shape;
    if (!field && !info->meta) return;
    bxc_type *rt = base_type(ret);
    bxc_type *mt = field ? bxc_type_spec() : base_type(info->meta_ret);
    if (rt->kind == BXC_TYPE_UNIT) return;
    bxc_emit_buf *c = &cx->code_c;
    const char *out_ct = rt->kind == BXC_TYPE_TENSOR ? "bext_tensor *" : bxc_emit_ctype_of(cx, rt);
    const char *meta_ct = field ? "bext_meta_spec" : bxc_emit_ctype_of(cx, mt);
    bxc_emit_printf(c,
                    "static bool %s_bext_check(const void *bext_out, const void *bext_want, bool bext_fields, char *bext_why,\n"
                    "                          size_t bext_n) {\n"
                    "  %s const *bext_o = bext_out;\n  const %s *bext_w = bext_want;\n"
                    "  %s bext_got;\n  memset(&bext_got, 0, sizeof bext_got);\n"
                    "  bext_meta_error bext_e;\n  memset(&bext_e, 0, sizeof bext_e);\n",
                    e, out_ct, meta_ct, meta_ct);
    view_value(cx, c, rt, mt, "(*bext_o)", "bext_got", "output", bxc_emit_cstring(cx->a, what), "&bext_e",
               "{\n    snprintf(bext_why, bext_n, \"%s\", bext_e.msg);\n    return false;\n  }", "  ", 0);
    bxc_emit_puts(c, "  (void)bext_fields;\n");
    compare_value(cx, c, mt, "bext_got", "(*bext_w)", "output", "  ", 0);
    bxc_emit_puts(c, "  return true;\n}\n");
    bxc_emit_printf(mem, "  .meta_check = %s_bext_check,\n", e);
}

/* ---- an output value from its metadata --------------------------------------- */

/* The inverse of view_value: fills the output value at C lvalue `out`
 * (type out_t) from its metadata at `meta` (meta_t): ordinary values
 * copied, enum tags followed, each tensor made by the caller's
 * bext_make(bext_ctx, slot, &spec), slots counted by bext_k in
 * declaration order (out_slots' order). */
static void from_meta_value(bxc_emit_ctx *cx, bxc_emit_buf *b, bxc_type *out_t, bxc_type *meta_t, const char *out,
                            const char *meta, const char *ind, int depth) {
    out_t = base_type(out_t);
    meta_t = meta_t ? base_type(meta_t) : NULL;
    if (depth > EXT_MAX_DEPTH) return;
    if (out_t->kind == BXC_TYPE_TENSOR) {
        bxc_emit_printf(b, "%sif (!(%s = bext_make(bext_ctx, bext_k++, &%s))) return false;\n", ind, out, meta);
        return;
    }
    if (!bxc_emit_type_has_tensors(out_t)) {
        bxc_emit_printf(b, "%s%s = %s;\n", ind, out, meta);
        return;
    }
    if ((out_t->kind == BXC_TYPE_STRUCT || out_t->kind == BXC_TYPE_ENUM) && out_t->decl->metadata &&
        (!meta_t || meta_t->decl != out_t->decl))
        meta_t = base_type(out_t->decl->metadata);
    if (!meta_t || meta_t->kind != out_t->kind) {
        bxc_emit_error(cx, bxc_span_none(), "the C generator cannot build `%s` from its metadata",
                       bxc_type_name(cx->a, out_t));
        return;
    }
    if (out_t->kind == BXC_TYPE_TUPLE) {
        for (uint32_t i = 0; i < out_t->tuple.n && i < meta_t->tuple.n; i++)
            from_meta_value(cx, b, out_t->tuple.elems[i], meta_t->tuple.elems[i],
                            bxc_arena_printf(cx->a, "%s._%u", out, i), bxc_arena_printf(cx->a, "%s._%u", meta, i), ind,
                            depth + 1);
        return;
    }
    const bxc_type_decl *od = out_t->decl, *md = meta_t->decl;
    if (out_t->kind == BXC_TYPE_STRUCT) {
        for (uint32_t i = 0; i < od->nfields && i < md->nfields; i++)
            from_meta_value(cx, b, od->fields[i].type, md->fields[i].type,
                            bxc_arena_printf(cx->a, "%s.%s", out, field_cname(cx, &od->fields[i], i)),
                            bxc_arena_printf(cx->a, "%s.%s", meta, field_cname(cx, &md->fields[i], i)), ind, depth + 1);
        return;
    }
    /* an enum: the companion shares its tag type and constants */
    bxc_emit_printf(b, "%s%s.tag = %s.tag;\n", ind, out, meta);
    bxc_emit_printf(b, "%sswitch (%s.tag) {\n", ind, meta);
    const char *ind2 = bxc_arena_printf(cx->a, "%s  ", ind);
    for (uint32_t v = 0; v < od->nvariants && v < md->nvariants; v++) {
        const bxc_type_variant *ov = &od->variants[v], *mv = &md->variants[v];
        if (!ov->nfields) continue;
        bxc_emit_printf(b, "%scase %s:\n", ind, bxc_emit_tag_const(cx, od, ov->name));
        for (uint32_t i = 0; i < ov->nfields && i < mv->nfields; i++)
            from_meta_value(cx, b, ov->fields[i].type, mv->fields[i].type,
                            bxc_arena_printf(cx->a, "%s.as.%s.%s", out, ov->name, field_cname(cx, &ov->fields[i], i)),
                            bxc_arena_printf(cx->a, "%s.as.%s.%s", meta, mv->name, field_cname(cx, &mv->fields[i], i)),
                            ind2, depth + 1);
        bxc_emit_printf(b, "%sbreak;\n", ind2);
    }
    bxc_emit_printf(b, "%sdefault:\n%sbreak;\n%s}\n", ind, ind2, ind);
}

/* out_from_meta, for every method with metadata and an output: the
 * output value a decorator (Fusion's lazy handles) or Remote (a streamed
 * value) hands out before the implementation runs. */
static void emit_from_meta(bxc_emit_ctx *cx, const char *e, bxc_type *ret, const bxc_emit_meta_info *info,
                           bxc_emit_buf *mem) {
    bool field = info->dtype && info->shape;
    if (!field && !info->meta) return;
    bxc_type *rt = base_type(ret);
    if (rt->kind == BXC_TYPE_UNIT) return;
    bxc_type *mt = field ? bxc_type_spec() : base_type(info->meta_ret);
    const char *out_ct = rt->kind == BXC_TYPE_TENSOR ? "bext_tensor *" : bxc_emit_ctype_of(cx, rt);
    const char *meta_ct = field ? "bext_meta_spec" : bxc_emit_ctype_of(cx, mt);
    bxc_emit_buf *c = &cx->code_c;
    bxc_emit_buf body = {0};
    from_meta_value(cx, &body, rt, mt, "(*bext_v)", "(*bext_w)", "  ", 0);
    bxc_emit_printf(c,
                    "static bool %s_bext_from_meta(const void *bext_m, void *bext_o, bext_ext_make_fn bext_make, "
                    "void *bext_ctx) {\n"
                    "  const %s *bext_w = bext_m;\n  %s *bext_v = bext_o;\n  int bext_k = 0;\n"
                    "  (void)bext_make;\n  (void)bext_ctx;\n",
                    e, meta_ct, out_ct);
    bxc_emit_append(c, &body);
    bxc_emit_puts(c, "  (void)bext_k;\n  return true;\n}\n");
    bxc_emit_buf_free(&body);
    bxc_emit_printf(mem, "  .out_from_meta = %s_bext_from_meta,\n", e);
}

void bxc_emit_ext_members(bxc_emit_ctx *cx, const char *entry, const char *what, const bxc_emit_param *params,
                          uint32_t nparams, bxc_type *ret, const bxc_emit_meta_info *info, bxc_emit_buf *members) {
    emit_codec(cx, entry, params, nparams, ret, members);
    emit_scalars(cx, entry, what, params, nparams, info, members);
    emit_meta(cx, entry, what, params, nparams, info, members);
    emit_meta_check(cx, entry, what, ret, info, members);
    emit_from_meta(cx, entry, ret, info, members);
}
