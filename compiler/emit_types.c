/* emit_types.c — C types for the language's structs, enums and tuples.
 *
 * Every struct / enum / tuple type the generated code mentions is
 * registered here (dependencies first, so the header declares a nested
 * type before its container), then written out at the end: structs as C
 * structs, enums as tagged unions (`tag` + `as.<Variant>`), tuples as
 * structs with fields _0, _1, ...  A type that holds tensors also gets
 * `<prefix>_release` (drops every tensor reference inside, nested values
 * and the active variant included) and `<prefix>_retain` (a copy holding
 * one more reference of each). */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "emit_int.h"

#define MAX_TYPE_NESTING BXC_EMIT_MAX_TYPE_NESTING

static bool has_tensors_rec(bxc_type *t, int depth) {
    if (depth > MAX_TYPE_NESTING) return false;
    t = bxc_type_strip_refs(bxc_type_resolve(t));
    switch (t->kind) {
    case BXC_TYPE_TENSOR: return true;
    case BXC_TYPE_TUPLE:
        for (uint32_t i = 0; i < t->tuple.n; i++)
            if (has_tensors_rec(t->tuple.elems[i], depth + 1)) return true;
        return false;
    case BXC_TYPE_STRUCT:
    case BXC_TYPE_ENUM: {
        bxc_type_decl *d = t->decl;
        for (uint32_t i = 0; i < d->nfields; i++)
            if (has_tensors_rec(d->fields[i].type, depth + 1)) return true;
        for (uint32_t v = 0; v < d->nvariants; v++)
            for (uint32_t i = 0; i < d->variants[v].nfields; i++)
                if (has_tensors_rec(d->variants[v].fields[i].type, depth + 1)) return true;
        return false;
    }
    default: return false;
    }
}

bool bxc_emit_type_has_tensors(bxc_type *t) { return has_tensors_rec(t, 0); }

/* What C can hold: the scalars, Shape / DType / TensorSpec, tensors, and
 * structs, enums and tuples made of those.  `()` as a part (a field, an
 * element, an argument) is no C object, and function values and type
 * parameters cross no C API.  bxc_emit_ctype_of, the field declarations
 * below and the argument encoding (emit_ext.c) rely on it; the checker
 * asks it of every signature and type the generator writes (check_limits.c). */
typedef struct c_form_seen {
    const bxc_type_decl *d[256];   /* decls found fine: a DAG of types is walked once per decl */
    uint32_t n;
} c_form_seen;

static bxc_type *no_c_form_rec(bxc_type *t, int depth, c_form_seen *seen) {
    if (depth > MAX_TYPE_NESTING) return NULL;   /* too deep: the checker's nesting rule */
    bxc_type *r = bxc_type_strip_refs(bxc_type_resolve(t));
    switch (r->kind) {
    case BXC_TYPE_ERROR:   /* reported where it arose */
    case BXC_TYPE_BOOL:
    case BXC_TYPE_INT:
    case BXC_TYPE_FLOAT:
    case BXC_TYPE_STR:
    case BXC_TYPE_SHAPE:
    case BXC_TYPE_DTYPE:
    case BXC_TYPE_SPEC:
    case BXC_TYPE_TENSOR: return NULL;
    case BXC_TYPE_TUPLE:
        for (uint32_t i = 0; i < r->tuple.n; i++) {
            bxc_type *bad = no_c_form_rec(r->tuple.elems[i], depth + 1, seen);
            if (bad) return bad;
        }
        return NULL;
    case BXC_TYPE_STRUCT:
    case BXC_TYPE_ENUM: {
        const bxc_type_decl *d = r->decl;
        for (uint32_t k = 0; k < seen->n; k++)
            if (seen->d[k] == d) return NULL;
        for (uint32_t i = 0; i < d->nfields; i++) {
            bxc_type *bad = no_c_form_rec(d->fields[i].type, depth + 1, seen);
            if (bad) return bad;
        }
        for (uint32_t v = 0; v < d->nvariants; v++)
            for (uint32_t i = 0; i < d->variants[v].nfields; i++) {
                bxc_type *bad = no_c_form_rec(d->variants[v].fields[i].type, depth + 1, seen);
                if (bad) return bad;
            }
        if (seen->n < sizeof seen->d / sizeof *seen->d) seen->d[seen->n++] = d;
        return NULL;
    }
    default: return r;
    }
}

bxc_type *bxc_emit_no_c_form(bxc_type *t) {
    c_form_seen seen;
    seen.n = 0;
    return no_c_form_rec(t, 0, &seen);
}

bxc_type *bxc_emit_output_no_c_form(bxc_type *t) {
    bxc_type *r = bxc_type_resolve(t);
    if (r->kind == BXC_TYPE_REF) return r;   /* an output is a value the callee hands over */
    if (r->kind == BXC_TYPE_UNIT) return NULL;
    return bxc_emit_no_c_form(r);
}

/* The spelling of a tuple element inside a tuple's C name. */
static const char *elem_spelling(bxc_emit_ctx *cx, bxc_type *t) {
    t = bxc_type_strip_refs(bxc_type_resolve(t));
    switch (t->kind) {
    case BXC_TYPE_TENSOR: return "tensor";
    case BXC_TYPE_BOOL: return "bool";
    case BXC_TYPE_INT: return bxc_int_kind_name(t->int_kind);
    case BXC_TYPE_FLOAT: return bxc_float_kind_name(t->float_kind);
    case BXC_TYPE_SHAPE: return "shape";
    case BXC_TYPE_DTYPE: return "dtype";
    case BXC_TYPE_SPEC: return "spec";
    case BXC_TYPE_STRUCT:
    case BXC_TYPE_ENUM: return t->decl->name;
    case BXC_TYPE_TUPLE: {
        const char *s = bxc_arena_printf(cx->a, "tuple%u", t->tuple.n);
        for (uint32_t i = 0; i < t->tuple.n; i++)
            s = bxc_arena_printf(cx->a, "%s_%s", s, elem_spelling(cx, t->tuple.elems[i]));
        return s;
    }
    default: return "unit";
    }
}

static bxc_emit_ctype *find(bxc_emit_ctx *cx, bxc_type *t, const char *tuple_name) {
    for (uint32_t i = 0; i < cx->nctypes; i++) {
        bxc_type *o = cx->ctypes[i].type;
        if (tuple_name ? (o->kind == BXC_TYPE_TUPLE && strcmp(cx->ctypes[i].name, tuple_name) == 0)
                       : (o->kind != BXC_TYPE_TUPLE && o->decl == t->decl))
            return &cx->ctypes[i];
    }
    return NULL;
}

bxc_emit_ctype *bxc_emit_register_type(bxc_emit_ctx *cx, bxc_type *t) {
    t = bxc_type_strip_refs(bxc_type_resolve(t));
    const char *tuple_name = NULL;
    if (t->kind == BXC_TYPE_TUPLE)
        tuple_name = bxc_arena_printf(cx->a, "%s_%s", cx->cstem, elem_spelling(cx, t));
    else if (t->kind != BXC_TYPE_STRUCT && t->kind != BXC_TYPE_ENUM)
        return NULL;
    bxc_emit_ctype *found = find(cx, t, tuple_name);
    if (found) return found;
    if (cx->register_depth > MAX_TYPE_NESTING) {
        bxc_emit_error(cx, t->kind == BXC_TYPE_TUPLE ? bxc_span_none() : t->decl->span,
                       "type nested too deeply (or recursive) for C");
        return NULL;
    }
    /* dependencies first */
    cx->register_depth++;
    if (t->kind == BXC_TYPE_TUPLE) {
        for (uint32_t i = 0; i < t->tuple.n; i++) bxc_emit_register_type(cx, t->tuple.elems[i]);
    } else {
        bxc_type_decl *d = t->decl;
        /* an enum's companion uses the enum's tag type */
        if (d->is_enum && d->metadata_of) bxc_emit_register_type(cx, d->metadata_of);
        for (uint32_t i = 0; i < d->nfields; i++) bxc_emit_register_type(cx, d->fields[i].type);
        for (uint32_t v = 0; v < d->nvariants; v++)
            for (uint32_t i = 0; i < d->variants[v].nfields; i++)
                bxc_emit_register_type(cx, d->variants[v].fields[i].type);
    }
    cx->register_depth--;
    found = find(cx, t, tuple_name);   /* a dependency cycle may have added it */
    if (found) return found;
    if (cx->nctypes == cx->capctypes) {
        uint32_t nc = cx->capctypes ? cx->capctypes * 2 : 16;
        bxc_emit_ctype *n = bxc_arena_alloc(cx->a, nc * sizeof *n);
        if (cx->nctypes) memcpy(n, cx->ctypes, cx->nctypes * sizeof *n);
        cx->ctypes = n;
        cx->capctypes = nc;
    }
    bxc_emit_ctype *ct = &cx->ctypes[cx->nctypes++];
    memset(ct, 0, sizeof *ct);
    ct->type = t;
    ct->name = tuple_name ? tuple_name : t->decl->name;
    ct->fn_prefix = tuple_name ? tuple_name : bxc_emit_snake(cx->a, t->decl->name);
    ct->has_tensors = bxc_emit_type_has_tensors(t);
    return ct;
}

void bxc_emit_root_types(bxc_emit_ctx *cx) {
    if (!cx->u->nmodules) return;
    bxc_file *f = cx->u->modules[0]->ast;
    for (uint32_t i = 0; f && i < f->items.len; i++) {
        bxc_item *it = f->items.items[i];
        if (it->kind != BXC_ITEM_STRUCT && it->kind != BXC_ITEM_ENUM) continue;
        bxc_type *t = bxc_check_lookup_type(cx->u, it->name.name);
        if (!t || (t->kind != BXC_TYPE_STRUCT && t->kind != BXC_TYPE_ENUM)) continue;
        bxc_emit_register_type(cx, t);
        if (t->decl->metadata) bxc_emit_register_type(cx, t->decl->metadata);
    }
}

/* Field name in C: the declared name, or _<i> for positional fields. */
static const char *field_cname(bxc_emit_ctx *cx, const bxc_type_field *f, uint32_t i) {
    return f->name ? bxc_emit_ident(cx->a, f->name) : bxc_arena_printf(cx->a, "_%u", i);
}

static void emit_fields(bxc_emit_ctx *cx, bxc_emit_buf *b, const bxc_type_field *fs, uint32_t n,
                        const char *indent) {
    for (uint32_t i = 0; i < n; i++) {
        const char *ct = bxc_emit_ctype_of(cx, fs[i].type);
        if (!ct || strcmp(ct, "void") == 0) {
            /* bxc_emit_no_c_form, asked of root types and signatures (E0710) */
            bxc_emit_internal_error(cx, fs[i].span, "a field type with no C form");
            continue;
        }
        size_t L = strlen(ct);
        bxc_emit_printf(b, "%s%s%s%s;\n", indent, ct, ct[L - 1] == '*' ? "" : " ", field_cname(cx, &fs[i], i));
    }
}

/* release / retain statements for one value `expr` (an lvalue) of type t. */
static void release_stmt(bxc_emit_ctx *cx, bxc_emit_buf *b, bxc_type *t, const char *lv, const char *ind) {
    t = bxc_type_strip_refs(bxc_type_resolve(t));
    if (!bxc_emit_type_has_tensors(t)) return;
    if (t->kind == BXC_TYPE_TENSOR) {
        bxc_emit_printf(b, "%sbext_release(%s);\n%s%s = NULL;\n", ind, lv, ind, lv);
        return;
    }
    bxc_emit_ctype *ct = bxc_emit_register_type(cx, t);
    if (ct) bxc_emit_printf(b, "%s%s_release(&%s);\n", ind, ct->fn_prefix, lv);
}

static void retain_stmt(bxc_emit_ctx *cx, bxc_emit_buf *b, bxc_type *t, const char *dst, const char *src,
                        const char *ind) {
    t = bxc_type_strip_refs(bxc_type_resolve(t));
    if (!bxc_emit_type_has_tensors(t)) return;
    if (t->kind == BXC_TYPE_TENSOR) {
        bxc_emit_printf(b, "%sbext_retain(%s);\n", ind, dst);
        return;
    }
    bxc_emit_ctype *ct = bxc_emit_register_type(cx, t);
    if (ct) bxc_emit_printf(b, "%s%s = %s_retain(&%s);\n", ind, dst, ct->fn_prefix, src);
}

/* The module a struct/enum belongs to (a metadata companion: its
 * extension type's), or NULL. */
static const bxc_module *decl_module(const bxc_type_decl *d) {
    if (d->module) return d->module;
    if (d->metadata_of && d->metadata_of->decl) return d->metadata_of->decl->module;
    return NULL;
}

/* Per-type include guard, `BEXT_TYPE_<module>_<Name>` (`::` and any other
 * non-identifier character -> `_`). Keyed by the declaring module, so the
 * headers of two extensions that import the same module (and the header of
 * that module compiled on its own) define the type once per C file. */
static const char *type_guard(bxc_emit_ctx *cx, const bxc_type_decl *d) {
    const bxc_module *m = decl_module(d);
    const char *mod = m && m->name ? m->name : "";
    char *g = (char *)bxc_arena_printf(cx->a, "BEXT_TYPE_%s_%s", mod, d->name);
    for (char *p = g; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
            *p = '_';
    return g;
}

/* Claims the file-scope C names of one type (emit_names.c): the type, an
 * enum's tag type and tag constants, release / retain. */
static void claim_type_names(bxc_emit_ctx *cx, bxc_type *t, const char *N, const char *P, bool has_tensors) {
    bxc_span sp = bxc_span_none();
    const char *what;
    if (t->kind == BXC_TYPE_TUPLE) {
        what = bxc_arena_printf(cx->a, "the tuple type `%s`", elem_spelling(cx, t));
    } else {
        bxc_type_decl *d = t->decl;
        sp = d->span;
        what = d->metadata_of ? bxc_arena_printf(cx->a, "the metadata companion `%s` of `%s`", d->name,
                                                 d->metadata_of->decl->name)
                              : bxc_arena_printf(cx->a, "%s `%s`", d->is_enum ? "enum" : "struct", d->name);
    }
    bxc_emit_claim(cx, N, sp, what);
    if (t->kind != BXC_TYPE_TUPLE && t->decl->is_enum && !t->decl->metadata_of) {
        bxc_type_decl *d = t->decl;
        bxc_emit_claim(cx, bxc_arena_printf(cx->a, "%sTag", N), sp,
                       bxc_arena_printf(cx->a, "the tag type of %s", what));
        const char *U = bxc_emit_upper(cx->a, N);
        for (uint32_t v = 0; v < d->nvariants; v++)
            bxc_emit_claim(cx, bxc_arena_printf(cx->a, "%s_%s", U, bxc_emit_upper(cx->a, d->variants[v].name)), sp,
                           bxc_arena_printf(cx->a, "the tag of variant `%s::%s`", N, d->variants[v].name));
    }
    if (has_tensors) {
        bxc_emit_claim(cx, bxc_arena_printf(cx->a, "%s_release", P), sp,
                       bxc_arena_printf(cx->a, "the release function of %s", what));
        bxc_emit_claim(cx, bxc_arena_printf(cx->a, "%s_retain", P), sp,
                       bxc_arena_printf(cx->a, "the retain function of %s", what));
    }
}

/* The enum whose tag type a decl uses: itself, or the enum a metadata
 * companion describes. */
static const bxc_type_decl *tag_owner(const bxc_type_decl *d) {
    return d->metadata_of && d->metadata_of->decl ? d->metadata_of->decl : d;
}

const char *bxc_emit_tag_type(bxc_emit_ctx *cx, const bxc_type_decl *d) {
    return bxc_arena_printf(cx->a, "%sTag", tag_owner(d)->name);
}

const char *bxc_emit_tag_const(bxc_emit_ctx *cx, const bxc_type_decl *d, const char *variant) {
    return bxc_arena_printf(cx->a, "%s_%s", bxc_emit_upper(cx->a, tag_owner(d)->name), bxc_emit_upper(cx->a, variant));
}

static void emit_one(bxc_emit_ctx *cx, const bxc_emit_ctype *ct) {
    bxc_emit_buf *h = &cx->types_h, *c = &cx->types_c;
    /* copies: registering while emitting may move the ctypes array */
    bxc_type *t = ct->type;
    const char *N = ct->name, *P = ct->fn_prefix;
    bool has_tensors = ct->has_tensors;
    /* Types of the root module: guarded, release/retain defined in the .c.
     * Types of imported modules: guarded, release/retain `static inline`
     * in the header, so every object file has its own private copy and two
     * extensions importing the same module link together. Tuples are named
     * after the unit's stem, so they never meet another unit's. */
    claim_type_names(cx, t, N, P, has_tensors);
    const char *guard = NULL;
    bool imported = false;
    if (t->kind != BXC_TYPE_TUPLE) {
        const bxc_module *m = decl_module(t->decl);
        guard = type_guard(cx, t->decl);
        imported = m && !m->is_root;
        bxc_emit_printf(h, "#ifndef %s\n#define %s\n", guard, guard);
        if (t->decl->item) bxc_emit_doc(h, t->decl->item->doc);
    }
    if (t->kind == BXC_TYPE_TUPLE) {
        bxc_emit_printf(h, "/* tuple %s */\n", elem_spelling(cx, t));
        bxc_emit_printf(h, "typedef struct %s {\n", N);
        for (uint32_t i = 0; i < t->tuple.n; i++) {
            const char *ft = bxc_emit_ctype_of(cx, t->tuple.elems[i]);
            size_t L = strlen(ft);
            bxc_emit_printf(h, "  %s%s_%u;\n", ft, ft[L - 1] == '*' ? "" : " ", i);
        }
        bxc_emit_printf(h, "} %s;\n", N);
    } else if (!t->decl->is_enum) {
        bxc_type_decl *d = t->decl;
        if (d->metadata_of) bxc_emit_printf(h, "/* metadata companion of %s: tensors replaced by specs */\n",
                                            d->metadata_of->decl->name);
        bxc_emit_printf(h, "typedef struct %s {\n", N);
        emit_fields(cx, h, d->fields, d->nfields, "  ");
        if (!d->nfields) bxc_emit_puts(h, "  char bext_empty_;   /* C has no empty structs */\n");
        bxc_emit_printf(h, "} %s;\n", N);
    } else {
        bxc_type_decl *d = t->decl;
        if (d->metadata_of) {
            bxc_emit_printf(h, "/* metadata companion of %s: tensors replaced by specs; the tag is %s's */\n",
                            d->metadata_of->decl->name, bxc_emit_tag_type(cx, d));
        } else {
            bxc_emit_printf(h, "typedef enum %s {\n", bxc_emit_tag_type(cx, d));
            for (uint32_t v = 0; v < d->nvariants; v++)
                bxc_emit_printf(h, "  %s = %u,\n", bxc_emit_tag_const(cx, d, d->variants[v].name), v);
            bxc_emit_printf(h, "} %s;\n", bxc_emit_tag_type(cx, d));
        }
        bool any = false;
        for (uint32_t v = 0; v < d->nvariants; v++) any |= d->variants[v].nfields > 0;
        bxc_emit_printf(h, "typedef struct %s {\n  %s tag;\n", N, bxc_emit_tag_type(cx, d));
        if (any) {
            bxc_emit_puts(h, "  union {\n");
            for (uint32_t v = 0; v < d->nvariants; v++) {
                if (!d->variants[v].nfields) continue;
                bxc_emit_puts(h, "    struct {\n");
                emit_fields(cx, h, d->variants[v].fields, d->variants[v].nfields, "      ");
                bxc_emit_printf(h, "    } %s;\n", d->variants[v].name);
            }
            bxc_emit_puts(h, "  } as;\n");
        }
        bxc_emit_printf(h, "} %s;\n", N);
    }
    if (!has_tensors) {
        bxc_emit_puts(h, guard ? "#endif\n\n" : "\n");
        return;
    }
    if (!imported)
        bxc_emit_printf(h, "/* Drops every tensor reference inside *v (nested values too); sets them NULL. */\n"
                           "void %s_release(%s *v);\n"
                           "/* A copy of *v holding one more reference of every tensor inside. */\n"
                           "%s %s_retain(const %s *v);\n",
                        P, N, N, P, N);
    if (!imported) bxc_emit_puts(h, guard ? "#endif\n\n" : "\n");
    bxc_emit_buf rel = {0}, ret = {0};
    if (t->kind == BXC_TYPE_TUPLE) {
        for (uint32_t i = 0; i < t->tuple.n; i++) {
            const char *lv = bxc_arena_printf(cx->a, "v->_%u", i);
            release_stmt(cx, &rel, t->tuple.elems[i], lv, "  ");
            retain_stmt(cx, &ret, t->tuple.elems[i], bxc_arena_printf(cx->a, "r._%u", i), lv, "  ");
        }
    } else if (!t->decl->is_enum) {
        bxc_type_decl *d = t->decl;
        for (uint32_t i = 0; i < d->nfields; i++) {
            const char *fn = field_cname(cx, &d->fields[i], i);
            const char *lv = bxc_arena_printf(cx->a, "v->%s", fn);
            release_stmt(cx, &rel, d->fields[i].type, lv, "  ");
            retain_stmt(cx, &ret, d->fields[i].type, bxc_arena_printf(cx->a, "r.%s", fn), lv, "  ");
        }
    } else {
        bxc_type_decl *d = t->decl;
        const char *U = bxc_emit_upper(cx->a, N);
        bxc_emit_puts(&rel, "  switch (v->tag) {\n");
        bxc_emit_puts(&ret, "  switch (v->tag) {\n");
        for (uint32_t v = 0; v < d->nvariants; v++) {
            bxc_type_variant *var = &d->variants[v];
            bool vt = false;
            for (uint32_t i = 0; i < var->nfields; i++) vt |= bxc_emit_type_has_tensors(var->fields[i].type);
            if (!vt) continue;
            const char *tag = bxc_arena_printf(cx->a, "%s_%s", U, bxc_emit_upper(cx->a, var->name));
            bxc_emit_printf(&rel, "  case %s:\n", tag);
            bxc_emit_printf(&ret, "  case %s:\n", tag);
            for (uint32_t i = 0; i < var->nfields; i++) {
                const char *fn = field_cname(cx, &var->fields[i], i);
                const char *lv = bxc_arena_printf(cx->a, "v->as.%s.%s", var->name, fn);
                release_stmt(cx, &rel, var->fields[i].type, lv, "    ");
                retain_stmt(cx, &ret, var->fields[i].type,
                            bxc_arena_printf(cx->a, "r.as.%s.%s", var->name, fn), lv, "    ");
            }
            bxc_emit_puts(&rel, "    break;\n");
            bxc_emit_puts(&ret, "    break;\n");
        }
        bxc_emit_puts(&rel, "  default:\n    break;\n  }\n");
        bxc_emit_puts(&ret, "  default:\n    break;\n  }\n");
    }
    bxc_emit_buf *out = imported ? h : c;
    const char *sto = imported ? "static inline " : "";
    if (imported)
        bxc_emit_puts(h, "/* Drops every tensor reference inside *v (nested values too); sets them NULL.\n"
                         " * Type of an imported module: private to each C file (docs/codegen.md). */\n");
    bxc_emit_printf(out, "%svoid %s_release(%s *v) {\n  if (!v) return;\n", sto, P, N);
    bxc_emit_append(out, &rel);
    if (imported)
        bxc_emit_puts(h, "}\n\n/* A copy of *v holding one more reference of every tensor inside. */\n");
    else
        bxc_emit_puts(c, "}\n\n");
    bxc_emit_printf(out, "%s%s %s_retain(const %s *v) {\n  %s r = *v;\n", sto, N, P, N, N);
    bxc_emit_append(out, &ret);
    bxc_emit_puts(out, "  return r;\n}\n");
    bxc_emit_puts(out, imported ? "#endif\n\n" : "\n");
    bxc_emit_buf_free(&rel);
    bxc_emit_buf_free(&ret);
}

void bxc_emit_types_claim(bxc_emit_ctx *cx) {
    for (uint32_t i = 0; i < cx->nctypes; i++) {
        const bxc_emit_ctype *ct = &cx->ctypes[i];
        claim_type_names(cx, ct->type, ct->name, ct->fn_prefix, ct->has_tensors);
    }
}

void bxc_emit_types_finish(bxc_emit_ctx *cx) {
    if (!cx->nctypes) return;
    bxc_emit_puts(&cx->types_h, "/* ---- types ---- */\n\n");
    /* Emitting may register more (nested tuples spelled late): loop on the
     * growing list; registration order already puts dependencies first. */
    for (uint32_t i = 0; i < cx->nctypes; i++) {
        bxc_emit_ctype copy = cx->ctypes[i];
        emit_one(cx, &copy);
    }
}
