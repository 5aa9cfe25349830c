/* test_resolve.c — the checker's resolution records (ast.h bxc_res) and
 * their readers (issue 13): tests/codegen/ext/shadow.bext and the module it
 * uses both declare `scale`.  The checker records which one each call
 * names; the interpreter and the C generator must call exactly that one
 * (before the records, both took the root's `scale` for
 * `shadow_lib::scale(x)`: they searched by the last segment).  Real
 * loader, checker, interpreter and generator. */
#include <criterion/criterion.h>

#include "check.h"
#include "emit.h"
#include "fe_util.h"
#include "interp.h"
#include "types.h"

static bxc_unit unit;

static void load_shadow(void) {
    bxc_unit_init(&unit);
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/codegen/ext/shadow.bext", fe_srcdir());
    bxc_load_status st = bxc_unit_load(&unit, path);
    char *msg = fe_text(&unit.diags, &unit.sources);
    cr_assert_eq(st, BXC_LOAD_OK, "%s", msg);
    cr_assert(bxc_check_unit(&unit), "%s", fe_text(&unit.diags, &unit.sources));
    free(msg);
}

static void unload(void) { bxc_unit_free(&unit); }

static const bxc_item *item_in(const bxc_module *m, bxc_item_kind kind, const char *name) {
    for (uint32_t i = 0; i < m->ast->items.len; i++) {
        const bxc_item *it = m->ast->items.items[i];
        if (it->kind != kind) continue;
        if (kind == BXC_ITEM_IMPL || !strcmp(kind == BXC_ITEM_FN ? it->fn->name.name : it->name.name, name))
            return it;
    }
    return NULL;
}

static const bxc_expr *tail_of(const char *fn) {
    const bxc_item *it = item_in(unit.modules[0], BXC_ITEM_FN, fn);
    cr_assert(it, "no fn `%s`", fn);
    return it->fn->body->tail;
}

TestSuite(resolve, .init = load_shadow, .fini = unload);

Test(resolve, calls_record_the_fn_of_the_module_they_name) {
    const bxc_module *lib = bxc_unit_find_module(&unit, "shadow_lib");
    cr_assert(lib);
    const bxc_item *lib_scale = item_in(lib, BXC_ITEM_FN, "scale");
    const bxc_item *root_scale = item_in(unit.modules[0], BXC_ITEM_FN, "scale");
    cr_assert(lib_scale && root_scale && lib_scale != root_scale);

    const bxc_expr *q = tail_of("via_module");   /* shadow_lib::scale(x) */
    cr_assert_eq(q->kind, BXC_EXPR_CALL);
    cr_assert_eq(q->res.kind, BXC_RES_FN, "%s", bxc_res_kind_name(q->res.kind));
    cr_expect_eq(q->res.item, lib_scale);
    cr_expect_eq(q->res.module, lib);
    cr_expect_eq(q->call.callee->res.item, lib_scale, "the callee path carries it too");
    cr_expect_eq(q->call.args.items[0]->res.kind, BXC_RES_LOCAL, "`x` is the parameter");

    const bxc_expr *r = tail_of("via_root");     /* scale(x) */
    cr_expect_eq(r->res.kind, BXC_RES_FN);
    cr_expect_eq(r->res.item, root_scale);
    cr_expect_eq(r->res.module, unit.modules[0]);

    /* inside the module, `scale` is the module's own */
    const bxc_expr *tw = item_in(lib, BXC_ITEM_FN, "twice_scaled")->fn->body->tail;
    cr_expect_eq(tw->res.item, lib_scale);
    cr_expect_eq(tw->call.args.items[0]->res.item, lib_scale);
}

Test(resolve, methods_fields_and_literals_record_what_they_name) {
    const bxc_module *lib = bxc_unit_find_module(&unit, "shadow_lib");
    const bxc_expr *m = tail_of("via_impl");     /* Step { by: 100 }.apply(x) */
    cr_assert_eq(m->kind, BXC_EXPR_METHOD_CALL);
    cr_assert_eq(m->res.kind, BXC_RES_IMPL_FN, "%s", bxc_res_kind_name(m->res.kind));
    cr_expect_str_eq(m->res.fn->name.name, "apply");
    cr_expect_eq(m->res.module, lib);
    cr_expect_eq(m->res.item, item_in(lib, BXC_ITEM_IMPL, NULL), "the impl block");
    cr_expect_str_eq(m->res.type->decl->name, "Step");
    const bxc_expr *lit = m->method_call.receiver;
    cr_expect_eq(lit->res.kind, BXC_RES_STRUCT);
    cr_expect_eq(lit->res.type, m->res.type);

    /* `scale(x) + self.by` in Step::apply */
    const bxc_fn *apply = m->res.fn;
    const bxc_expr *sum = apply->body->tail;
    cr_assert_eq(sum->kind, BXC_EXPR_BINARY);
    cr_expect_eq(sum->binary.lhs->res.item, item_in(lib, BXC_ITEM_FN, "scale"));
    const bxc_expr *field = sum->binary.rhs;
    cr_assert_eq(field->kind, BXC_EXPR_FIELD);
    cr_expect_eq(field->res.kind, BXC_RES_FIELD);
    cr_expect_eq(field->res.index, 0);
    cr_expect_str_eq(field->res.type->decl->fields[field->res.index].name, "by");
}

static int64_t call_u32(bxi_interp *in, const char *fn, uint32_t x) {
    BxvValue arg = bxv_int(x, BXV_U32), out;
    cr_assert(bxi_call_fn(in, fn, &arg, 1, &out), "`%s` failed", fn);
    cr_assert_eq(out.kind, BXV_INT);
    return (int64_t)out.u.i.v;
}

Test(resolve, the_interpreter_calls_what_the_checker_resolved) {
    bxc_arena a;
    bxc_arena_init(&a);
    bxc_diag_list diags;
    bxc_diag_list_init(&diags, &a);
    bxi_interp *in = bxi_new(&diags);
    bxi_add_unit(in, &unit, 0);
    cr_expect_eq(call_u32(in, "via_module", 3), 4, "shadow_lib::scale is x + 1");
    cr_expect_eq(call_u32(in, "via_root", 3), 30, "the root's scale is x * 10");
    cr_expect_eq(call_u32(in, "via_module_helper", 3), 5);
    cr_expect_eq(call_u32(in, "via_impl", 3), 104);
    bxi_free(in);
    bxc_arena_free_all(&a);
}

/* The C body of the generated function `name` (up to its closing brace). */
static char *c_body(const char *src, const char *name) {
    char sig[128];
    snprintf(sig, sizeof sig, "bool %s(", name);
    const char *s = strstr(src, sig);
    cr_assert(s, "no `%s` in the generated C", sig);
    const char *e = strstr(s, "\n}\n");
    cr_assert(e);
    return strndup(s, (size_t)(e - s));
}

Test(resolve, the_generator_calls_what_the_checker_resolved) {
    const char *h = NULL, *c = NULL;
    cr_assert(bxc_emit_c_memory(&unit, NULL, &h, &c), "%s", fe_text(&unit.diags, &unit.sources));
    char *b = c_body(c, "shadow_via_module");
    cr_expect(strstr(b, "shadow_shadow_lib_scale(") != NULL, "%s", b);
    free(b);
    b = c_body(c, "shadow_via_root");
    cr_expect(strstr(b, "shadow_scale(") != NULL && !strstr(b, "shadow_lib_scale("), "%s", b);
    free(b);
    b = c_body(c, "shadow_shadow_lib_twice_scaled");
    cr_expect(strstr(b, "shadow_shadow_lib_scale(") != NULL, "%s", b);
    free(b);
    b = c_body(c, "shadow_shadow_lib_step_apply");
    cr_expect(strstr(b, "shadow_shadow_lib_scale(") != NULL, "%s", b);
    free(b);
}

/* The selector record of `#[backend_extension]` (ast.h
 * bxc_trait_selectors): the checker's reading of the attribute, which the
 * generator emits from — also for a trait a `#[cfg]` switches off. */
Test(selectors, the_checker_records_each_trait_s_selectors) {
    static const char src[] =
        "#[backend_extension(Cube, Flex: cfg(feature = \"flex\"), Fusion)]\n"
        "pub trait On: Backend {\n"
        "    #[fusion(dtype = x, shape = x)]\n"
        "    fn op(x: FloatTensor<Self>) -> FloatTensor<Self>;\n"
        "}\n"
        "#[cfg(feature = \"never\")]\n"
        "#[backend_extension(NdArray)]\n"
        "pub trait Off: Backend {\n"
        "    fn op(x: FloatTensor<Self>) -> FloatTensor<Self>;\n"
        "}\n";
    bxc_unit u;
    bxc_unit_init(&u);
    cr_assert_eq(bxc_unit_load_memory(&u, "sel.bext", src, sizeof src - 1), BXC_LOAD_OK);
    cr_assert(bxc_check_unit(&u), "%s", fe_text(&u.diags, &u.sources));
    const bxc_item *on = u.modules[0]->ast->items.items[0], *off = u.modules[0]->ast->items.items[1];
    const bxc_trait_selectors *r = on->trait.selectors;
    cr_assert(r && !r->bad);
    cr_assert_eq(r->len, 3);
    cr_expect_str_eq(r->items[0].name, "Cube");
    cr_expect_null(r->items[0].cfg);
    cr_expect_str_eq(r->items[1].name, "Flex");
    cr_assert_not_null(r->items[1].cfg, "`Flex: cfg(..)` keeps its condition");
    cr_expect(bxc_path_is(r->items[1].cfg->path, "cfg"));
    cr_expect_str_eq(r->items[2].name, "Fusion");
    cr_expect_neq(r->items[0].index, r->items[1].index);
    cr_assert(off->trait.selectors, "a trait switched off is still recorded");
    cr_expect_eq(off->trait.selectors->len, 1);
    cr_expect_str_eq(off->trait.selectors->items[0].name, "NdArray");
    /* the generator emits both from the records */
    const char *h = NULL, *c = NULL;
    cr_assert(bxc_emit_c_memory(&u, NULL, &h, &c), "%s", fe_text(&u.diags, &u.sources));
    cr_expect(strstr(h, "#[backend_extension(Cube, Flex: cfg(feature = \"flex\"), Fusion)]") != NULL, "%s", h);
    cr_expect(strstr(h, "#[backend_extension(NdArray)]") != NULL, "%s", h);
    cr_expect(strstr(h, "on_op_flex") != NULL && strstr(h, "off_op_ndarray") != NULL, "%s", h);
    bxc_unit_free(&u);
}

/* Offset -> innermost node + its record (ast.h bxc_ast_node_at), what a
 * language server's hover and go-to-definition start from. */
static uint32_t offset_of(const bxc_source *src, const char *needle, uint32_t skip) {
    const char *p = strstr(src->text, needle);
    cr_assert(p, "`%s` not in the file", needle);
    return (uint32_t)(p - src->text) + skip;
}

Test(resolve, node_at_an_offset_carries_the_checker_s_record) {
    const bxc_module *root = unit.modules[0];
    const bxc_source *src = bxc_sources_get(&unit.sources, root->file_id);
    bxc_node_at at;
    /* on `scale` of `shadow_lib::scale(x)`: the callee path, resolved to the module's fn */
    cr_assert(bxc_ast_node_at(root->ast, offset_of(src, "{ shadow_lib::scale(x)", 15), &at));
    cr_assert_not_null(at.expr);
    cr_expect_eq(at.expr->kind, BXC_EXPR_PATH);
    cr_expect_eq(at.expr->res.kind, BXC_RES_FN);
    cr_expect_str_eq(at.expr->res.module->name, "shadow_lib");
    cr_expect_str_eq(at.fn->name.name, "via_module");
    cr_expect_eq(at.item->kind, BXC_ITEM_FN);
    /* on its argument: the parameter, typed */
    cr_assert(bxc_ast_node_at(root->ast, offset_of(src, "{ shadow_lib::scale(x)", 20), &at));
    cr_expect_eq(at.expr->res.kind, BXC_RES_LOCAL);
    cr_expect_eq(bxc_type_resolve(at.expr->ty)->kind, BXC_TYPE_INT);
    /* on `100` in `Step { by: 100 }`: the literal, typed by the field */
    cr_assert(bxc_ast_node_at(root->ast, offset_of(src, "by: 100", 5), &at));
    cr_expect_eq(at.expr->kind, BXC_EXPR_INT);
    cr_expect_eq(bxc_type_resolve(at.expr->ty), bxc_type_int(BXC_U32));
    /* on `apply`: the method call and its impl fn */
    cr_assert(bxc_ast_node_at(root->ast, offset_of(src, ".apply(x)", 2), &at));
    cr_expect_eq(at.expr->kind, BXC_EXPR_METHOD_CALL);
    cr_expect_eq(at.expr->res.kind, BXC_RES_IMPL_FN);
    /* between items: nothing */
    cr_expect_not(bxc_ast_node_at(root->ast, offset_of(src, "\n\nfn via_root", 1), &at));
    cr_expect_null(at.expr);
}

Test(selectors, node_at_finds_expressions_in_fusion_attributes) {
    static const char src[] =
        "#[backend_extension(Flex, Fusion)]\n"
        "pub trait T: Backend {\n"
        "    #[fusion(dtype = x, shape = x.clone())]\n"
        "    fn op(x: FloatTensor<Self>) -> FloatTensor<Self>;\n"
        "}\n";
    bxc_unit u;
    bxc_unit_init(&u);
    cr_assert_eq(bxc_unit_load_memory(&u, "at.bext", src, sizeof src - 1), BXC_LOAD_OK);
    cr_assert(bxc_check_unit(&u), "%s", fe_text(&u.diags, &u.sources));
    bxc_node_at at;
    uint32_t off = (uint32_t)(strstr(src, "x.clone()") - src) + 3;
    cr_assert(bxc_ast_node_at(u.modules[0]->ast, off, &at));
    cr_assert_not_null(at.expr);
    cr_expect_eq(at.expr->kind, BXC_EXPR_METHOD_CALL);
    cr_expect_eq(at.expr->res.kind, BXC_RES_CLONE);
    cr_expect_eq(at.expr->ty, bxc_type_shape(), "a shape field expression sees shapes");
    cr_expect_eq(at.item->kind, BXC_ITEM_TRAIT);
    bxc_unit_free(&u);
}

/* The per-method record (ast.h bxc_method_rec): form, op id, backward,
 * each argument's class and scalar kind, routing slots — for a method the
 * checker checks and for one a `#[cfg]` switches off (read quietly). */
Test(method_rec, the_checker_records_each_trait_method) {
    static const char src[] =
        "#[fusion(scalar)]\n"
        "enum Mode { Fast, Slow }\n"
        "#[fusion(scalar)]\n"
        "type Level = u8;\n"
        "type Plain = u32;\n"
        "#[derive(ExtensionType)]\n"
        "#[extension_type(fusion)]\n"
        "struct Pair { a: FloatTensor, b: FloatTensor }\n"
        "#[backend_extension(Flex, Fusion, Autodiff)]\n"
        "pub trait T: Backend {\n"
        "    #[fusion(dtype = x, shape = x, id = \"t.op\")]\n"
        "    #[backward(x = grad)]\n"
        "    fn op(x: FloatTensor<Self>, n: u32, m: Mode, l: Level, p: Plain,\n"
        "          #[fusion(scalar = *k as u32 + 1)] k: u64, #[fusion(scalar)] q: i8) -> FloatTensor<Self>;\n"
        "    #[fusion(meta = |x, p| (TensorSpec::new(p.a.shape.clone(), x.dtype), x.clone()))]\n"
        "    #[backward(manual)]\n"
        "    fn two(x: FloatTensor<Self>, p: &Pair) -> (FloatTensor<Self>, FloatTensor<Self>);\n"
        "    #[fusion(default)]\n"
        "    #[backward(manual)]\n"
        "    fn body(x: FloatTensor<Self>) -> FloatTensor<Self> { x.exp() }\n"
        "    #[cfg(feature = \"never\")]\n"
        "    #[fusion(dtype = x, shape = x)]\n"
        "    fn off(x: FloatTensor<Self>, #[fusion(scalar)] w: u32) -> FloatTensor<Self>;\n"
        "}\n";
    bxc_unit u;
    bxc_unit_init(&u);
    cr_assert_eq(bxc_unit_load_memory(&u, "rec.bext", src, sizeof src - 1), BXC_LOAD_OK);
    cr_assert(bxc_check_unit(&u), "%s", fe_text(&u.diags, &u.sources));
    const bxc_item *tr = u.modules[0]->ast->items.items[4];
    cr_assert_eq(tr->kind, BXC_ITEM_TRAIT);
    const bxc_method_rec *op = tr->trait.methods.items[0]->method, *two = tr->trait.methods.items[1]->method,
                         *body = tr->trait.methods.items[2]->method, *off = tr->trait.methods.items[3]->method;
    cr_assert(op && two && body && off, "every method has a record");
    cr_expect_eq(op->trait, tr);
    cr_expect(op->active && !off->active);
    cr_expect_eq(op->form, BXC_FUSION_FIELDS);
    cr_expect(op->dtype && op->shape && !op->meta);
    cr_expect_str_eq(op->op_id, "t.op");
    cr_expect_str_eq(two->op_id, "two");
    cr_expect(op->backward && !op->backward_manual);
    cr_expect(!body->backward && body->backward_manual);
    cr_expect_eq(two->form, BXC_FUSION_META);
    cr_expect_eq(body->form, BXC_FUSION_DEFAULT);
    cr_assert_eq(op->nparams, 7);
    static const bxc_scalar_kind want[] = {BXC_SCALAR_NONE, BXC_SCALAR_INFERRED, BXC_SCALAR_MARKED,
                                           BXC_SCALAR_MARKED, BXC_SCALAR_NONE, BXC_SCALAR_CUSTOM,
                                           BXC_SCALAR_MARKED};
    for (uint32_t i = 0; i < 7; i++)
        cr_expect_eq(op->params[i].scalar, want[i], "`%s`: %s", op->params[i].name,
                     bxc_scalar_kind_name(op->params[i].scalar));
    cr_expect_eq(op->params[0].cls, BXC_ARG_TENSOR);
    cr_expect_not_null(op->params[5].encoding);
    cr_expect_not_null(op->params[5].encoding->value->ty, "a checked method's encoding is typed");
    cr_expect_eq(op->in_slots, 1);
    cr_expect_eq(op->out_slots, 1);
    cr_expect_eq(two->params[1].cls, BXC_ARG_EXT);
    cr_expect(two->params[1].borrowed);
    cr_expect_eq(two->in_slots, 3);
    cr_expect_eq(two->out_slots, 2);
    /* switched off: read from the syntax, its expressions untyped */
    cr_expect_eq(off->form, BXC_FUSION_FIELDS);
    cr_expect_null(off->dtype->value->ty);
    cr_expect_eq(off->params[1].scalar, BXC_SCALAR_MARKED);
    cr_expect_str_eq(bxc_fusion_form_name(two->form), "meta");
    bxc_unit_free(&u);
}
