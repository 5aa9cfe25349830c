/* emit_kernels.c — the `#[cube]` kernels of the unit in the generated C
 * (docs/codegen.md, "Kernels"; language.md §8–§9): the root module's, and
 * those of the modules it imports, whose instantiations and launchers are
 * named `<stem>_<module>_...` (bxc_cube_kernel.prefix) so that two
 * extensions importing one module link together.
 *
 * my_ext.c gets every instantiation's serialized IR (the versioned form
 * each runtime compiles from) in one table of bext_kernel_src rows, and
 * each kernel a launcher, declared in my_ext.h:
 *
 *   bool gelu_kernel_launch(const bext_grid *grid, bext_tensor *input, bext_tensor *output);
 *
 * Tensor parameters are tensors, scalars their C type (a generic one a
 * double), comptime parameters int64_t.  The launcher picks the
 * instantiation: each type parameter's dtype is that of the first tensor
 * of that element type (or an explicit `bext_dtype` argument named after
 * the parameter when no tensor has it), each comptime value must be one
 * the kernel lists; then bext_kernel_launch runs it on the tensors'
 * device.  On x86-64 each row also names the kernel's ahead-of-time code
 * in <stem>.kernels.o, weakly: a program that links the object runs it
 * with no JIT, one that does not compiles the IR.
 *
 * The IR table is written by the same code as `bextc --emit=kir-c`
 * (bxc_emit_kir_rows), so the stdlib tables and generated ones are one
 * form. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtins.h"
#include "bxk.h"
#include "cube.h"
#include "emit_int.h"

static int generic_index(const bxc_cube_kernel *k, const bxc_type *t) {
    t = bxc_type_resolve((bxc_type *)t);
    if (t->kind != BXC_TYPE_GENERIC) return -1;
    for (uint32_t g = 0; g < k->ngenerics; g++)
        if (!strcmp(k->generics[g].name, t->generic_name)) return (int)g;
    return -1;
}

/* The C type of a scalar parameter (a generic one: double). */
static const char *scalar_ctype(const bxc_type *t) {
    t = bxc_type_resolve((bxc_type *)t);
    switch (t->kind) {
    case BXC_TYPE_BOOL: return "bool";
    case BXC_TYPE_FLOAT: return t->float_kind == BXC_F64 ? "double" : "float"; /* f16/bf16 too */
    case BXC_TYPE_INT: return bxc_int_kinds[t->int_kind].ctype;
    default: return "double";
    }
}

/* bext_kernel_scalar's member for an IR type. */
static const char *slot_member(unsigned t) {
    switch (t) {
    case BXK_BOOL: case BXK_U8: return "u8";
    case BXK_I32: return "i32";
    case BXK_U32: return "u32";
    case BXK_I64: return "i64";
    case BXK_F32: return "f32";
    default: return "f64";
    }
}

/* The bext dtype constant of an IR type, or NULL (u32: no tensor dtype). */
static const char *dtype_const(unsigned t) {
    switch (t) {
    case BXK_BOOL: return "BEXT_BOOL";
    case BXK_U8: return "BEXT_U8";
    case BXK_I32: return "BEXT_I32";
    case BXK_I64: return "BEXT_I64";
    case BXK_F16: return "BEXT_F16";
    case BXK_BF16: return "BEXT_BF16";
    case BXK_F32: return "BEXT_F32";
    case BXK_F64: return "BEXT_F64";
    default: return NULL;
    }
}

/* Appends the bytes as C initializer text. */
static void put_bytes(bxc_emit_buf *out, const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++) bxc_emit_printf(out, "%s0x%02x,", i % 16 == 0 ? "\n  " : "", p[i]);
    bxc_emit_puts(out, "\n");
}

bool bxc_emit_kir_rows(bxc_unit *u, bxc_emit_buf *out, const char *table, bool is_static, bool aot) {
    const bxc_cube_set *set = bxc_cube_kernels(u);
    const char *stem = bxc_emit_c_identifier(&u->arena, bxc_emit_stem(u));
    uint32_t n = 0;
    bool ok = true;
    bxc_emit_buf rows = {0};
    for (uint32_t i = 0; set && i < set->len && ok; i++) {
        const bxc_cube_kernel *k = set->items[i];
        if (!k->ok || k->is_helper) continue;
        for (uint32_t inst = 0; inst < bxc_cube_instance_count(k) && ok; inst++) {
            struct bxk_kernel *ir = bxc_cube_lower(u, k, inst);
            if (!ir) {
                ok = false;
                break;
            }
            bxk_fold(ir); /* comptime branches decided, untaken ones dropped */
            struct bxk_diags ds = {0};
            size_t len = 0;
            uint8_t *bytes = bxk_verify(ir, &ds) ? bxk_serialize(ir, &len) : NULL;
            if (!bytes) {
                bxc_diag_error(&u->diags, CHK_E_CUBE_LOWER, k->fn->name.span, "kernel `%s`: %s", ir->name,
                               ds.n ? ds.d[0].msg : "out of memory serializing the IR");
                bxk_kernel_free(ir);
                ok = false;
                break;
            }
            bxc_emit_printf(out, "\n/* %s */\nstatic const uint8_t %s_kir_%u[%zu] = {", ir->name, stem, n, len);
            put_bytes(out, bytes, len);
            bxc_emit_puts(out, "};\n");
            if (aot) /* <stem>.kernels.o's symbol, when the program links it */
                bxc_emit_printf(out, "#if defined(__x86_64__)\nextern void %s(void) __attribute__((weak));\n#endif\n",
                                ir->name);
            bxc_emit_printf(&rows, "  {\"%s\", %s_kir_%u, sizeof %s_kir_%u, ", ir->name, stem, n, stem, n);
            if (aot) bxc_emit_printf(&rows, "\n#if defined(__x86_64__)\n   %s,\n#else\n   0,\n#endif\n  },\n", ir->name);
            else bxc_emit_puts(&rows, "0},\n");
            free(bytes);
            bxk_kernel_free(ir);
            n++;
        }
    }
    if (ok) {
        bxc_emit_printf(out, "\n%sconst bext_kernel_src %s[%u] = {\n", is_static ? "static " : "", table, n + 1);
        bxc_emit_append(out, &rows);
        bxc_emit_puts(out, "  {0, 0, 0, 0},\n};\n");
    }
    bxc_emit_buf_free(&rows);
    return ok;
}

/* The C name of k's launcher, claimed (emit_names.c). */
static const char *launcher_name(bxc_emit_ctx *cx, const bxc_cube_kernel *k) {
    const char *fn = bxc_arena_printf(cx->a, "%s%s_launch", k->prefix, k->name);
    bxc_emit_claim(cx, fn, k->fn->name.span, bxc_arena_printf(cx->a, "the launcher of kernel `%s`", k->name));
    return fn;
}

/* The launcher of k, whose instantiations are rows first.. of table. */
static void launcher(bxc_emit_ctx *cx, const bxc_cube_kernel *k, const char *table, uint32_t first) {
    bxc_arena *a = cx->a;
    const char *fn = launcher_name(cx, k);
    /* parameters, in the kernel's order; generics no tensor carries get a
     * bext_dtype argument after them */
    bxc_emit_buf params = {0}, body = {0};
    bxc_emit_puts(&params, "const bext_grid *bext_grid_");
    int from_tensor[16];
    for (uint32_t g = 0; g < k->ngenerics && g < 16; g++) from_tensor[g] = -1;
    uint32_t nparams = 0;
    for (uint32_t i = 0; i < k->vars.len; i++) {
        const bxc_cube_var *v = k->vars.items[i];
        if (v->kind != BXC_CUBE_TENSOR && v->kind != BXC_CUBE_SCALAR && v->kind != BXC_CUBE_COMPTIME) continue;
        nparams++;
        const char *cn = bxc_emit_ident(a, v->name);
        if (v->kind == BXC_CUBE_TENSOR) {
            bxc_emit_printf(&params, ", bext_tensor *%s", cn);
            int g = generic_index(k, v->type);
            if (g >= 0 && g < 16 && from_tensor[g] < 0) from_tensor[g] = (int)i;
        } else if (v->kind == BXC_CUBE_SCALAR) {
            bxc_emit_printf(&params, ", %s %s", scalar_ctype(v->type), cn);
        } else {
            bxc_emit_printf(&params, ", int64_t %s", cn);
        }
    }
    for (uint32_t g = 0; g < k->ngenerics && g < 16; g++)
        if (from_tensor[g] < 0) bxc_emit_printf(&params, ", bext_dtype %s", bxc_emit_ident(a, k->generics[g].name));

    bxc_emit_printf(&cx->protos_h, "/* #[cube] %s: runs it over grid on the tensors' device (docs/codegen.md,\n"
                                   " * \"Kernels\"); BORROWS every tensor; false + bext_last_error() on failure. */\n"
                                   "bool %s(%s);\n\n",
                    bxc_emit_comment_text(a, k->name), fn, params.data);

    uint32_t ninst = bxc_cube_instance_count(k);
    uint32_t ng = k->ngenerics, nc = k->ncomptimes;
    /* the instantiation table: each generic's dtype, each comptime value */
    bxc_emit_printf(&body, "bool %s(%s) {\n", fn, params.data);
    if (ng || nc) {
        bxc_emit_printf(&body, "  static const struct { int dt[%u]; int64_t cv[%u]; } bext_inst[%u] = {\n", ng ? ng : 1,
                        nc ? nc : 1, ninst);
        for (uint32_t i = 0; i < ninst; i++) {
            bxc_emit_puts(&body, "    {{");
            for (uint32_t g = 0; g < ng; g++) {
                const char *d = dtype_const(bxc_cube_instance_dtype(k, i, g));
                bxc_emit_printf(&body, "%s%s", g ? ", " : "", d ? d : "-1");
            }
            if (!ng) bxc_emit_puts(&body, "0");
            bxc_emit_puts(&body, "}, {");
            for (uint32_t c = 0; c < nc; c++)
                bxc_emit_printf(&body, "%s%lldLL", c ? ", " : "", (long long)bxc_cube_instance_value(k, i, c));
            if (!nc) bxc_emit_puts(&body, "0");
            bxc_emit_puts(&body, "}},\n");
        }
        bxc_emit_puts(&body, "  };\n");
        /* what to look for */
        bxc_emit_printf(&body, "  const int bext_want_dt[%u] = {", ng ? ng : 1);
        for (uint32_t g = 0; g < ng; g++) {
            const char *src = from_tensor[g] >= 0 ? bxc_emit_ident(a, k->vars.items[from_tensor[g]]->name) : NULL;
            if (src) bxc_emit_printf(&body, "%s%s ? (int)bext_dtype_of(%s) : -2", g ? ", " : "", src, src);
            else bxc_emit_printf(&body, "%s(int)%s", g ? ", " : "", bxc_emit_ident(a, k->generics[g].name));
        }
        if (!ng) bxc_emit_puts(&body, "0");
        bxc_emit_printf(&body, "};\n  const int64_t bext_want_cv[%u] = {", nc ? nc : 1);
        for (uint32_t c = 0; c < nc; c++)
            bxc_emit_printf(&body, "%s%s", c ? ", " : "", bxc_emit_ident(a, k->comptimes[c].var->name));
        if (!nc) bxc_emit_puts(&body, "0");
        bxc_emit_printf(&body, "};\n  (void)bext_want_dt;\n  (void)bext_want_cv;\n  int bext_pick = -1;\n"
                               "  for (int bext_i = 0; bext_i < %u && bext_pick < 0; bext_i++) {\n    bool bext_same = true;\n", ninst);
        if (ng) bxc_emit_printf(&body, "    for (int bext_k = 0; bext_k < %u; bext_k++) bext_same = bext_same && bext_inst[bext_i].dt[bext_k] == bext_want_dt[bext_k];\n", ng);
        if (nc) bxc_emit_printf(&body, "    for (int bext_k = 0; bext_k < %u; bext_k++) bext_same = bext_same && bext_inst[bext_i].cv[bext_k] == bext_want_cv[bext_k];\n", nc);
        bxc_emit_puts(&body, "    if (bext_same) bext_pick = bext_i;\n  }\n");
        /* the error names what was asked and what exists */
        bxc_emit_printf(&body, "  if (bext_pick < 0) {\n    char bext_asked[160] = \"\";\n    size_t bext_at = 0;\n");
        for (uint32_t g = 0; g < ng; g++)
            bxc_emit_printf(&body, "    bext_at += (size_t)snprintf(bext_asked + bext_at, sizeof bext_asked - bext_at, \"%s%s = %%s\", "
                                   "bext_want_dt[%u] == -2 ? \"(a NULL tensor)\" : bext_dtype_name((bext_dtype)bext_want_dt[%u]));\n",
                            g ? ", " : "", k->generics[g].name, g, g);
        for (uint32_t c = 0; c < nc; c++)
            bxc_emit_printf(&body, "    bext_at += (size_t)snprintf(bext_asked + bext_at, sizeof bext_asked - bext_at, \"%s%s = %%lld\", (long long)bext_want_cv[%u]);\n",
                            c || ng ? ", " : "", k->comptimes[c].var->name, c);
        bxc_emit_buf have = {0};
        for (uint32_t i = 0; i < ninst; i++)
            bxc_emit_printf(&have, "%s%s", i ? ", " : "", bxc_cube_instance_name(a, k, i));
        bxc_emit_printf(&body, "    (void)bext_at;\n    return bext_set_error(\"%s: no instantiation for %%s (there are: %s)\", bext_asked);\n  }\n",
                        fn, have.data ? have.data : "");
        bxc_emit_buf_free(&have);
    } else {
        bxc_emit_puts(&body, "  const int bext_pick = 0;\n");
    }
    /* bindings and scalars in slot order */
    bxc_emit_printf(&body, "  bext_tensor *bext_b[%u] = {", k->nbindings ? k->nbindings : 1);
    for (uint32_t s = 0, first_b = 1; s < k->nbindings; s++)
        for (uint32_t i = 0; i < k->vars.len; i++) {
            const bxc_cube_var *v = k->vars.items[i];
            if (v->kind == BXC_CUBE_TENSOR && v->slot == s) {
                bxc_emit_printf(&body, "%s%s", first_b ? "" : ", ", bxc_emit_ident(a, v->name));
                first_b = 0;
            }
        }
    if (!k->nbindings) bxc_emit_puts(&body, "0");
    bxc_emit_printf(&body, "};\n  bext_kernel_scalar bext_s[%u];\n  memset(bext_s, 0, sizeof bext_s);\n", k->nscalars ? k->nscalars : 1);
    for (uint32_t i = 0; i < k->vars.len; i++) {
        const bxc_cube_var *v = k->vars.items[i];
        if (v->kind != BXC_CUBE_SCALAR) continue;
        const char *cn = bxc_emit_ident(a, v->name);
        int g = generic_index(k, v->type);
        if (g < 0) {
            /* the instantiation does not change a concrete type: any row's
             * IR type is its own */
            unsigned it = bxc_cube_concrete_type(v->type);
            if (bxk_type_is_half(it)) /* the 16 bits a tensor of that dtype stores */
                bxc_emit_printf(&body, "  bext_s[%u] = bext_kernel_scalar_of(%s, %s);\n", v->slot, dtype_const(it), cn);
            else
                bxc_emit_printf(&body, "  bext_s[%u].%s = %s;\n", v->slot, slot_member(it), cn);
        } else { /* a double, stored the way the instantiation's dtype reads it */
            bxc_emit_printf(&body, "  bext_s[%u] = bext_kernel_scalar_of((bext_dtype)bext_inst[bext_pick].dt[%d], %s);\n", v->slot, g,
                            cn);
        }
    }
    bxc_emit_printf(&body, "  (void)bext_pick;\n  return bext_kernel_launch(&%s[%u + bext_pick], bext_grid_, bext_b, %u, bext_s, %u);\n}\n\n", table,
                    first, k->nbindings, k->nscalars);
    bxc_emit_append(&cx->code_c, &body);
    bxc_emit_buf_free(&params);
    bxc_emit_buf_free(&body);
}

void bxc_emit_kernels(bxc_emit_ctx *cx) {
    const bxc_cube_set *set = bxc_cube_kernels(cx->u);
    uint32_t nk = 0;
    for (uint32_t i = 0; set && i < set->len; i++) nk += set->items[i]->ok && !set->items[i]->is_helper;
    if (!nk) return;
    const char *table = bxc_arena_printf(cx->a, "%s_bext_kernels", cx->cstem);
    bxc_emit_claim(cx, table, bxc_span_none(), "the table of kernel instantiations");
    if (cx->plan) {   /* names only (bxc_emit_check_names): no IR is serialized */
        for (uint32_t i = 0; i < set->len; i++)
            if (set->items[i]->ok && !set->items[i]->is_helper) launcher_name(cx, set->items[i]);
        return;
    }
    bxc_emit_puts(&cx->code_c, "/* ---- #[cube] kernels: serialized IR, one row per instantiation ---- */\n"
                               );
    if (!bxc_emit_kir_rows(cx->u, &cx->code_c, table, false, true)) {
        cx->ok = false;
        return;
    }
    bxc_emit_puts(&cx->code_c, "\n");
    bxc_emit_printf(&cx->protos_h, "/* ==== #[cube] kernels: launchers ==== */\n\n"
                                   "/* Every instantiation, in declaration order (name, serialized IR,\n"
                                   " * ahead-of-time code); a zero row ends it.  bext_kernel_launch takes a\n"
                                   " * row; the launchers below choose one. */\n"
                                   "extern const bext_kernel_src %s[];\n\n", table);
    uint32_t first = 0;
    for (uint32_t i = 0; i < set->len; i++) {
        const bxc_cube_kernel *k = set->items[i];
        if (!k->ok || k->is_helper) continue;
        launcher(cx, k, table, first);
        first += bxc_cube_instance_count(k);
    }
}
