/* test_check.c — unit tests of the checker through its public API
 * (check.h, types.h): type printing and equality, literal inference and the
 * types recorded on the tree, generated metadata companions, error
 * collection, and the REPL entry points.  The diagnostics rules themselves
 * are covered file by file in tests/golden/. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "module.h"
#include "parse.h"
#include "types.h"

/* ---- helpers ---------------------------------------------------------------- */

static bxc_unit U;

static void unit_setup(void) { bxc_unit_init(&U); }
static void unit_teardown(void) { bxc_unit_free(&U); }

/* Loads and checks `text`; returns bxc_check_unit's answer. */
static bool check_text(const char *text) {
    bxc_load_status st = bxc_unit_load_memory(&U, "t.bext", text, strlen(text));
    cr_assert_neq(st, BXC_LOAD_UNREADABLE);
    return bxc_check_unit(&U);
}

static const char *tn(const bxc_type *t) {
    static char buf[256];
    bxc_type_print(buf, sizeof buf, t);
    return buf;
}

static bxc_fn *find_fn(const char *name) {
    bxc_file *f = U.modules[0]->ast;
    for (uint32_t i = 0; i < f->items.len; i++) {
        bxc_item *it = f->items.items[i];
        if (it->kind == BXC_ITEM_FN && strcmp(it->fn->name.name, name) == 0) return it->fn;
    }
    return NULL;
}

/* The type recorded on the pattern of `let NAME` in the fn body (top level). */
static bxc_type *let_type(const char *fn, const char *name) {
    bxc_fn *f = find_fn(fn);
    cr_assert_not_null(f, "no fn %s", fn);
    for (uint32_t i = 0; i < f->body->stmts.len; i++) {
        bxc_stmt *s = f->body->stmts.items[i];
        if (s->kind == BXC_STMT_LET && s->pat->kind == BXC_PAT_IDENT &&
            strcmp(s->pat->name.name, name) == 0)
            return s->pat->ty;
    }
    cr_assert_fail("no let %s in %s", name, fn);
    return NULL;
}

static bool has_message(const char *needle) {
    for (uint32_t i = 0; i < U.diags.count; i++)
        if (strstr(U.diags.items[i].message, needle)) return true;
    return false;
}

static char *all_messages(void) {
    static char buf[4096];
    size_t n = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < U.diags.count && n < sizeof buf - 1; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s\n", U.diags.items[i].message);
    return buf;
}

/* ---- types.h ------------------------------------------------------------------- */

Test(types, print_and_equal) {
    bxc_arena a;
    bxc_arena_init(&a);
    bxc_type *rs = bxc_type_ref(&a, bxc_type_shape(), false);
    cr_assert_str_eq(tn(rs), "&Shape");
    cr_assert_str_eq(tn(bxc_type_ref(&a, bxc_type_tensor(BXC_TENSOR_FLOAT), true)),
                     "&mut FloatTensor");
    bxc_type *el[2] = {bxc_type_spec(), bxc_type_int(BXC_U32)};
    bxc_type *tup = bxc_type_tuple(&a, el, 2);
    cr_assert_str_eq(tn(tup), "(TensorSpec, u32)");
    cr_assert_str_eq(tn(bxc_type_tuple(&a, el, 1)), "(TensorSpec,)");
    cr_assert_eq(bxc_type_tuple(&a, el, 0), bxc_type_unit());
    bxc_type *ps[1] = {rs};
    cr_assert_str_eq(tn(bxc_type_fn(&a, ps, 1, bxc_type_shape())), "fn(&Shape) -> Shape");
    /* structural equality of composites, identity of interned refs */
    cr_assert(bxc_type_equal(tup, bxc_type_tuple(&a, el, 2)));
    cr_assert_not(bxc_type_equal(tup, bxc_type_tuple(&a, el, 1)));
    cr_assert_not(bxc_type_equal(bxc_type_int(BXC_U32), bxc_type_int(BXC_U64)));
    cr_assert(bxc_type_equal(bxc_type_error(), bxc_type_shape()), "error unifies with anything");
    /* variables print as rustc does and default on zonk */
    bxc_type *v = bxc_type_var(&a, false), *fv = bxc_type_var(&a, true);
    cr_assert_str_eq(tn(v), "{integer}");
    cr_assert_eq(bxc_type_zonk(&a, v), bxc_type_int(BXC_I64));
    cr_assert_eq(bxc_type_zonk(&a, fv), bxc_type_float(BXC_F64));
    v->var.link = bxc_type_int(BXC_U8);
    cr_assert_eq(bxc_type_zonk(&a, v), bxc_type_int(BXC_U8));
    bxc_type *vt[2] = {v, fv};
    cr_assert_str_eq(tn(bxc_type_zonk(&a, bxc_type_tuple(&a, vt, 2))), "(u8, f64)");
    /* a small buffer truncates but reports the full length */
    char small[4];
    cr_assert_eq(bxc_type_print(small, sizeof small, tup), strlen("(TensorSpec, u32)"));
    cr_assert_str_eq(small, "(Te");
    bxc_arena_free_all(&a);
}

Test(types, predicates) {
    cr_assert(bxc_type_is_scalar(bxc_type_bool()));
    cr_assert(bxc_type_is_scalar(bxc_type_float(BXC_F32)));
    cr_assert_not(bxc_type_is_scalar(bxc_type_shape()));
    cr_assert(bxc_int_kind_signed(BXC_ISIZE));
    cr_assert_not(bxc_int_kind_signed(BXC_USIZE));
    cr_assert_str_eq(bxc_int_kind_name(BXC_USIZE), "usize");
    cr_assert_str_eq(bxc_tensor_kind_name(BXC_TENSOR_QUANTIZED), "QuantizedTensor");
}

/* ---- inference and recorded types ------------------------------------------------- */

TestSuite(check, .init = unit_setup, .fini = unit_teardown);

Test(check, literal_takes_its_context_type) {
    cr_assert(check_text(
        "fn count(s: &Shape) -> usize {\n"
        "    let mut i = 0;\n"
        "    let mut n = 0;\n"
        "    while i < s.len() { n += s[i]; i += 1; }\n"
        "    n\n"
        "}\n"
        "fn defaults() -> bool {\n"
        "    let a = 5;\n"
        "    let b = 2.5;\n"
        "    let c: u8 = 7;\n"
        "    let d = c + 1;\n"
        "    let e: f32 = 1.0 * 3.0;\n"
        "    a > 0 && b > 0.0 && d > 0 && e > 0.0\n"
        "}\n"), "%s", all_messages());
    cr_assert_str_eq(tn(let_type("count", "i")), "usize");
    cr_assert_str_eq(tn(let_type("count", "n")), "usize");
    cr_assert_str_eq(tn(let_type("defaults", "a")), "i64", "unconstrained integers default to i64");
    cr_assert_str_eq(tn(let_type("defaults", "b")), "f64");
    cr_assert_str_eq(tn(let_type("defaults", "c")), "u8");
    cr_assert_str_eq(tn(let_type("defaults", "d")), "u8");
    cr_assert_str_eq(tn(let_type("defaults", "e")), "f32");
}

Test(check, types_recorded_on_every_node) {
    cr_assert(check_text("fn f(a: &Shape, k: &usize) -> usize {\n"
                         "    a.len() + *k * 2\n"
                         "}\n"), "%s", all_messages());
    bxc_expr *tail = find_fn("f")->body->tail;
    cr_assert_eq(tail->kind, BXC_EXPR_BINARY);
    cr_assert_str_eq(tn(tail->ty), "usize");
    cr_assert_str_eq(tn(tail->binary.lhs->ty), "usize");              /* a.len() */
    cr_assert_str_eq(tn(tail->binary.lhs->method_call.receiver->ty), "&Shape");
    bxc_expr *mul = tail->binary.rhs;
    cr_assert_str_eq(tn(mul->binary.lhs->ty), "usize");               /* *k */
    cr_assert_str_eq(tn(mul->binary.lhs->unary.operand->ty), "&usize");
    cr_assert_str_eq(tn(mul->binary.rhs->ty), "usize", "the literal 2 became a usize");
}

Test(check, companion_metadata_types) {
    cr_assert(check_text(
        "#[derive(ExtensionType)]\n#[extension_type(fusion)]\n"
        "pub struct Inner { integer: IntTensor, mask: BoolTensor }\n"
        "#[derive(ExtensionType)]\n#[extension_type(fusion)]\n"
        "pub enum Packet {\n"
        "    Empty,\n"
        "    Float { tensor: FloatTensor, mode: u32 },\n"
        "    Nested(#[extension_type] Inner, u32),\n"
        "}\n"
        "#[derive(ExtensionType)]\npub struct Plainly { t: FloatTensor }\n"), "%s", all_messages());
    bxc_type *im = bxc_check_lookup_type(&U, "InnerMetadata");
    cr_assert_not_null(im);
    cr_assert_eq(im->kind, BXC_TYPE_STRUCT);
    cr_assert_eq(im->decl->nfields, 2);
    cr_assert_str_eq(tn(im->decl->fields[0].type), "TensorSpec");
    cr_assert_str_eq(tn(im->decl->fields[1].type), "TensorSpec");
    cr_assert_eq(bxc_check_lookup_type(&U, "Inner")->decl->metadata, im);

    bxc_type *pm = bxc_check_lookup_type(&U, "PacketMetadata");
    cr_assert_not_null(pm);
    cr_assert_eq(pm->kind, BXC_TYPE_ENUM);
    cr_assert_eq(pm->decl->nvariants, 3);
    bxc_type_variant *fl = bxc_type_decl_variant(pm->decl, "Float");
    cr_assert_str_eq(tn(fl->fields[0].type), "TensorSpec");
    cr_assert_str_eq(tn(fl->fields[1].type), "u32", "ordinary fields are kept");
    bxc_type_variant *ne = bxc_type_decl_variant(pm->decl, "Nested");
    cr_assert_str_eq(tn(ne->fields[0].type), "InnerMetadata", "nested extensions map to metadata");
    cr_assert_null(bxc_check_lookup_type(&U, "PlainlyMetadata"),
                   "no companion without #[extension_type(fusion)]");
}

Test(check, keeps_going_after_errors) {
    /* the trait comes first in the source but is checked in the last
     * pass: the report is still in source order */
    cr_assert_not(check_text(
        "#[backend_extension(Wgpu)]\n"
        "pub trait T: Backend { fn f(input: &mut FloatTensor) -> FloatTensor; }\n"
        "fn a(s: &Shape) -> usize { s.size() }\n"
        "fn b() -> Shapee { Shape::new() }\n"
        "fn c(x: u32, y: u64) -> u64 { x + y }\n"));
    cr_assert(has_message("no method `size` on `Shape`"), "%s", all_messages());
    cr_assert(has_message("unknown type `Shapee`"));
    cr_assert(has_message("expected `u32`, found `u64`"));
    cr_assert(has_message("`Wgpu` is not a backend selector"));
    cr_assert(has_message("`&mut` tensor `input`"));
    cr_assert_eq(U.diags.errors, 5, "%s", all_messages());
    for (uint32_t i = 1; i < U.diags.count; i++)
        cr_assert_leq(U.diags.items[i - 1].span.offset, U.diags.items[i].span.offset,
                      "diagnostics are reported in source order: %s", all_messages());
}

Test(check, cfg_features_select_methods) {
    /* With the feature on, both copies of `f` are active: a duplicate. */
    bxc_unit_add_feature(&U, "x");
    cr_assert_not(check_text(
        "#[backend_extension(Flex)]\n"
        "pub trait T: Backend {\n"
        "    #[cfg(feature = \"x\")]\n"
        "    fn f(input: FloatTensor) -> FloatTensor;\n"
        "    #[cfg(any(feature = \"x\", not(feature = \"y\")))]\n"
        "    fn f(input: FloatTensor) -> FloatTensor;\n"
        "    #[cfg(all(feature = \"x\", feature = \"y\"))]\n"
        "    fn f(input: FloatTensor) -> FloatTensor;\n"
        "}\n"));
    cr_assert_eq(U.diags.errors, 1, "%s", all_messages());
    cr_assert(has_message("duplicate method `f`"));
}

/* ---- the REPL ------------------------------------------------------------------------ */

static bxc_block *repl_parse(const char *text) {
    bxc_source *src = bxc_sources_add_memory(&U.sources, "<repl>", text, strlen(text));
    bxc_file *f = bxc_parse(&U.arena, &U.diags, src, BXC_PARSE_REPL);
    cr_assert_not_null(f->repl, "no REPL block for %s", text);
    return f->repl;
}

Test(check, repl_bindings_and_helpers) {
    cr_assert(check_text("fn joined_shape(lhs: &Shape, rhs: &Shape, axis: &usize) -> Shape {\n"
                         "    let mut shape = lhs.clone();\n"
                         "    shape[*axis] += rhs[*axis];\n"
                         "    shape\n"
                         "}\n"), "%s", all_messages());
    bxc_scope *env = bxc_scope_new(&U.arena, NULL);
    bxc_type *t = bxc_check_repl_block(&U, env, repl_parse("let x = TensorSpec::new([2, 3], DType::F32)"));
    cr_assert_not_null(t, "%s", all_messages());
    bxc_binding *x = bxc_scope_lookup(env, "x");
    cr_assert_not_null(x);
    cr_assert_str_eq(tn(x->type), "TensorSpec");

    t = bxc_check_repl_block(&U, env, repl_parse("joined_shape(&x.shape, &[4, 3], &0)"));
    cr_assert_not_null(t, "%s", all_messages());
    cr_assert_str_eq(tn(t), "Shape");

    t = bxc_check_repl_block(&U, env, repl_parse("let mut n = 0; n += x.shape.num_elements(); n"));
    cr_assert_not_null(t, "%s", all_messages());
    cr_assert_str_eq(tn(t), "usize");
    cr_assert_str_eq(tn(bxc_scope_lookup(env, "n")->type), "usize");

    /* an error adds nothing to the bindings and reports once */
    uint32_t before = U.diags.errors;
    t = bxc_check_repl_block(&U, env, repl_parse("let y = x.sahpe"));
    cr_assert_null(t);
    cr_assert_eq(U.diags.errors, before + 1, "%s", all_messages());
    cr_assert(has_message("no field `sahpe` on `TensorSpec`"));
    cr_assert_null(bxc_scope_lookup(env, "y"));

    cr_assert_str_eq(tn(bxc_check_lookup_fn(&U, "joined_shape")), "fn(&Shape, &Shape, &usize) -> Shape");
}

Test(check, repl_without_files) {
    /* a REPL started without :load has an empty unit: builtins still work */
    bxc_scope *env = bxc_scope_new(&U.arena, NULL);
    bxc_type *t = bxc_check_repl_block(&U, env, repl_parse("DType::F16.size() * 2"));
    cr_assert_not_null(t, "%s", all_messages());
    cr_assert_str_eq(tn(t), "usize");
}

Test(check, repl_items) {
    cr_assert(check_text("type Amount = u32;\n"));
    bxc_item *it = NULL;
    {
        const char *text = "fn twice(a: Amount) -> Amount { a * 2 }";
        bxc_source *src = bxc_sources_add_memory(&U.sources, "<repl>", text, strlen(text));
        bxc_file *f = bxc_parse(&U.arena, &U.diags, src, BXC_PARSE_REPL);
        if (f->items.len) it = f->items.items[0];
        else if (f->repl && f->repl->stmts.len && f->repl->stmts.items[0]->kind == BXC_STMT_ITEM)
            it = f->repl->stmts.items[0]->item;
    }
    cr_assert_not_null(it);
    cr_assert(bxc_check_repl_item(&U, it), "%s", all_messages());
    bxc_scope *env = bxc_scope_new(&U.arena, NULL);
    bxc_type *t = bxc_check_repl_block(&U, env, repl_parse("twice(4)"));
    cr_assert_not_null(t, "%s", all_messages());
    cr_assert_str_eq(tn(t), "u32");
}

/* ---- types recorded on #[fusion] expressions ----------------------------------------- */

static bxc_attr_arg *fusion_arg(bxc_fn *m, const char *key) {
    for (uint32_t i = 0; i < m->attrs.len; i++) {
        bxc_attr *a = m->attrs.items[i];
        if (!a->path || strcmp(a->path->segs.items[0].name, "fusion") != 0) continue;
        for (uint32_t k = 0; k < a->args.len; k++)
            if (strcmp(a->args.items[k]->path->segs.items[0].name, key) == 0) return a->args.items[k];
    }
    return NULL;
}

Test(check, fusion_expressions_carry_types) {
    cr_assert(check_text(
        "#[backend_extension(Cube, Fusion)]\n"
        "pub trait T: Backend {\n"
        "    #[fusion(dtype = input, shape = { let mut s = input.clone(); s.push(*k); s })]\n"
        "    fn grow(input: FloatTensor, k: usize) -> FloatTensor;\n"
        "    #[fusion(meta = |x, n| (x.clone(), TensorSpec::new([*n, 2], x.dtype)))]\n"
        "    fn split(x: FloatTensor, n: usize) -> (FloatTensor, FloatTensor);\n"
        "}\n"), "%s", all_messages());
    bxc_item *tr = U.modules[0]->ast->items.items[0];
    cr_assert_eq(tr->kind, BXC_ITEM_TRAIT);
    bxc_fn *grow = tr->trait.methods.items[0], *split = tr->trait.methods.items[1];
    cr_assert_str_eq(tn(fusion_arg(grow, "dtype")->value->ty), "DType",
                     "in `dtype = E` a tensor name is its DType");
    bxc_expr *shape = fusion_arg(grow, "shape")->value;
    cr_assert_str_eq(tn(shape->ty), "Shape");
    bxc_stmt *let = shape->block->stmts.items[0];
    cr_assert_str_eq(tn(let->init->method_call.receiver->ty), "&Shape",
                     "in `shape = E` a tensor name is its &Shape");
    bxc_expr *meta = fusion_arg(split, "meta")->value;
    cr_assert_eq(meta->kind, BXC_EXPR_CLOSURE);
    cr_assert_str_eq(tn(meta->ty), "fn(&TensorSpec, &usize) -> (TensorSpec, TensorSpec)");
    bxc_expr *second = meta->closure.body->tuple.elems.items[1];
    cr_assert_str_eq(tn(second->call.args.items[0]->array.elems.items[0]->ty), "usize");
}

Test(check, diagnostic_codes_in_checker_range) {
    cr_assert_not(check_text(
        "type Amount = f32;\n"
        "fn a(s: &Shape) -> Shape { s.push(1); s.clone() }\n"
        "#[backend_extension(Cube, Cube, Fusion)]\n"
        "pub trait T: Backend {\n"
        "    #[fusion(dtype = x, shape = x)]\n"
        "    fn f(x: FloatTensor, k: Amount) -> FloatTensor;\n"
        "}\n"));
    cr_assert_geq(U.diags.count, 3, "%s", all_messages());
    bool saw_warning = false;
    for (uint32_t i = 0; i < U.diags.count; i++) {
        const bxc_diag *d = &U.diags.items[i];
        int n = atoi(d->code + 1);
        cr_assert(d->code[0] == 'E' || d->code[0] == 'W', "code %s", d->code);
        cr_assert(n >= 300 && n <= 999, "checker codes are E03xx-E09xx / W03xx-W09xx: %s (%s)",
                  d->code, d->message);
        cr_assert(d->span.file != BXC_NO_FILE, "every checker diagnostic is located");
        saw_warning |= d->severity == BXC_SEV_WARNING;
    }
    cr_assert(saw_warning, "the alias `Amount` is not exposed as a scalar: %s", all_messages());
}

Test(check, repl_single_expression) {
    cr_assert(check_text("fn grow(s: &Shape, k: usize) -> Shape { let mut t = s.clone(); t.push(k); t }\n"));
    const char *text = "grow";
    bxc_source *src = bxc_sources_add_memory(&U.sources, "<repl>", text, strlen(text));
    bxc_file *f = bxc_parse(&U.arena, &U.diags, src, BXC_PARSE_REPL);
    cr_assert_not_null(f->repl);
    cr_assert_not_null(f->repl->tail);
    bxc_type *t = bxc_check_repl_expr(&U, NULL, f->repl->tail);
    cr_assert_not_null(t, "%s", all_messages());
    cr_assert_str_eq(bxc_type_name(&U.arena, t), "fn(&Shape, usize) -> Shape");
    cr_assert_eq(f->repl->tail->ty, t);
}

Test(check, repl_items_replace_older_ones) {
    cr_assert(check_text("fn size(s: &Shape) -> usize { s.len() }\n"));
    const char *defs[] = {"fn size(s: &Shape) -> u32 { s.len() as u32 }",
                          "fn size(s: &Shape) -> bool { s.len() > 0 }"};
    const char *want[] = {"u32", "bool"};
    for (int k = 0; k < 2; k++) {
        bxc_source *src = bxc_sources_add_memory(&U.sources, "<repl>", defs[k], strlen(defs[k]));
        bxc_file *f = bxc_parse(&U.arena, &U.diags, src, BXC_PARSE_REPL);
        cr_assert_eq(f->items.len, 1);
        cr_assert(bxc_check_repl_item(&U, f->items.items[0]), "%s", all_messages());
        bxc_scope *env = bxc_scope_new(&U.arena, NULL);
        bxc_type *t = bxc_check_repl_block(&U, env, repl_parse("size(&[2, 3])"));
        cr_assert_not_null(t, "%s", all_messages());
        cr_assert_str_eq(tn(t), want[k]);
    }
}

/* compiler/builtins.h: every builtin type name resolves, in a signature, to
 * the type the row names, and that type prints as the name (the printer's
 * own names for tensor, float and integer kinds agree with the table). */
Test(check, builtin_types_table_resolves_and_prints) {
    char src[4096];
    size_t len = 0;
    for (uint32_t i = 0; i < bxc_builtin_type_count; i++) {
        const char *n = bxc_builtin_types[i].name;
        cr_assert_str_eq(tn(bxc_type_builtin(&bxc_builtin_types[i])), n);
        /* f16 and bf16 resolve in kernels only (language.md §8) */
        bool kernel_only = bxc_builtin_types[i].kind == BXC_TYPE_FLOAT && bxc_builtin_types[i].sub >= BXC_F16;
        len += (size_t)snprintf(src + len, sizeof src - len,
                                kernel_only ? "#[cube]\nfn k%u(x: %s) {}\n" : "type A%u = %s;\n", i, n);
    }
    cr_assert(check_text(src), "%s", all_messages());
    for (int k = 0; k < BXC_INT_KIND_COUNT; k++) {
        cr_assert_str_eq(bxc_int_kind_name((bxc_int_kind)k), bxc_int_kinds[k].name);
        cr_assert_eq(bxc_int_kind_signed((bxc_int_kind)k), bxc_int_kinds[k].is_signed);
        cr_assert(bxc_builtin_type_find(bxc_int_kinds[k].name), "`%s` is not a builtin type", bxc_int_kinds[k].name);
    }
}
