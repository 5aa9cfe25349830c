/* emit_backward.c — the Autodiff implementation of a method with
 * `#[backward(x = ..., y = ...)]` formulas (language.md §6).
 *
 * The generated `<entry>_bext_autodiff` has the signature of a hand-written
 * `_autodiff` implementation and does what one does with the custom-node C
 * API (bext.h, bext_autodiff_record): the forward is the method itself,
 * called through its own entry point on the inputs' values
 * (bext_autodiff_value: the inner device's tensors, so the call routes to
 * the inner device's kernel or default body), and one custom node records
 * the result with a generated backward callback.  That callback runs on the
 * inner device with plain tensors and evaluates each formula with `grad`
 * (the output's gradient), the tensor arguments' values, `output` (the
 * forward's result) and the ordinary arguments, copied into the node's
 * state at record time.  Each formula becomes a static function lowered by
 * emit_body.c, the default bodies' generator: one lowering of tensor
 * expressions.  What the checker accepts here (check_sig.c check_backward):
 * one FloatTensor output, tensor and ordinary arguments, a formula per
 * FloatTensor argument.  A formula whose value does not have its input's
 * shape (a broadcast left unreduced) fails backward with the runtime's
 * error naming the node and the input. */
#include <string.h>

#include "emit_int.h"

/* The formula of argument `name`, or NULL. */
static const bxc_expr *formula_of(const bxc_attr *attr, const char *name) {
    for (uint32_t k = 0; k < attr->args.len; k++) {
        const bxc_attr_arg *g = attr->args.items[k];
        if (g->kind == BXC_ATTR_ARG_ASSIGN && bxc_path_is(g->path, name)) return g->value;
    }
    return NULL;
}

bool bxc_emit_backward(bxc_emit_ctx *cx, const bxc_fn *fn, const bxc_attr *attr, const char *entry, const char *what,
                       const bxc_emit_param *params, uint32_t nparams, const char *cparams) {
    bxc_arena *a = cx->a;
    bxc_emit_buf *c = &cx->code_c;
    /* the names a formula sees, and the formula functions' parameters */
    bxc_emit_var *vars = bxc_arena_alloc(a, (nparams + 2) * sizeof *vars);
    uint32_t nvars = 0, ntensors = 0, nord = 0;
    const char *fparams = "bext_tensor *bext_grad, bext_tensor *bext_output";
    for (uint32_t i = 0; i < nparams; i++) {
        const bxc_emit_param *p = &params[i];
        if (!p->is_tensor && bxc_emit_type_has_tensors(p->type)) {
            /* extension values: E0709; other values hold no tensors: E0507 */
            bxc_emit_internal_error(cx, p->p->span, "extension value `%s` in a `#[backward]` method", p->src_name);
            return false;
        }
        const char *ct = p->is_tensor ? "bext_tensor *" : bxc_arena_printf(a, "%s ", bxc_emit_ctype_of(cx, p->type));
        fparams = bxc_arena_printf(a, "%s, %s%s", fparams, ct, p->name);
        bxc_type *t = bxc_type_resolve(p->type);
        vars[nvars++] = (bxc_emit_var){p->src_name, p->name, p->is_tensor, t->kind == BXC_TYPE_FLOAT};
        if (p->is_tensor) ntensors++;
        else nord++;
    }
    vars[nvars++] = (bxc_emit_var){"grad", "bext_grad", true, false};
    vars[nvars++] = (bxc_emit_var){"output", "bext_output", true, false};
    if (!ntensors) {
        /* every formula names a tensor argument, and one is needed (E0708) */
        bxc_emit_internal_error(cx, fn->name.span, "`#[backward]` without a tensor argument");
        return false;
    }

    bxc_emit_printf(c, "/* #[backward] of %s: the Autodiff implementation generated from its formulas. */\n", what);
    /* the ordinary arguments, kept for backward in the node's state */
    if (nord) {
        bxc_emit_printf(c, "struct %s_bext_bw_state {\n", entry);
        for (uint32_t i = 0; i < nparams; i++)
            if (!params[i].is_tensor)
                bxc_emit_printf(c, "  %s %s;\n", bxc_emit_ctype_of(cx, params[i].type), params[i].name);
        bxc_emit_puts(c, "};\n");
    }
    /* one function per formula: the gradient of that argument */
    bool ok = true;
    for (uint32_t i = 0; i < nparams && ok; i++) {
        const bxc_expr *f = params[i].is_tensor ? formula_of(attr, params[i].src_name) : NULL;
        if (!f) continue;
        ok = bxc_emit_formula(cx, f,
                              bxc_arena_printf(a, "#[backward] %s = ...: the gradient of `%s`.", params[i].src_name,
                                               params[i].src_name),
                              bxc_arena_printf(a, "%s_bext_grad_%s", entry, params[i].name), fparams, vars, nvars);
    }
    if (!ok) return false;

    /* the backward callback (bext_backward_fn): inputs are the tensor
     * arguments in order; saved[] their values, then the output */
    bxc_emit_printf(c,
                    "static __attribute__((unused)) bool %s_bext_backward(void *bext_st, bext_tensor *bext_grad, bext_tensor *const *bext_saved,\n"
                    "                             const bool *bext_needs, bext_tensor **bext_grad_in) {\n",
                    entry);
    if (nord) bxc_emit_printf(c, "  const struct %s_bext_bw_state *bext_s = bext_st;\n", entry);
    else bxc_emit_puts(c, "  (void)bext_st;\n");
    const char *fargs = bxc_arena_printf(a, "bext_grad, bext_saved[%u]", ntensors);
    for (uint32_t i = 0, k = 0; i < nparams; i++) {
        const bxc_emit_param *p = &params[i];
        fargs = p->is_tensor ? bxc_arena_printf(a, "%s, bext_saved[%u]", fargs, k++)
                             : bxc_arena_printf(a, "%s, bext_s->%s", fargs, p->name);
    }
    for (uint32_t i = 0, k = 0; i < nparams; i++) {
        const bxc_emit_param *p = &params[i];
        if (!p->is_tensor) continue;
        if (formula_of(attr, p->src_name))
            bxc_emit_printf(c, "  if (bext_needs[%u] && !(bext_grad_in[%u] = %s_bext_grad_%s(%s))) return false;\n", k,
                            k, entry, p->name, fargs);
        else
            bxc_emit_printf(c, "  if (bext_needs[%u]) return bext_set_error(\"%%s: #[backward] gives no gradient for `%%s`\", %s, %s);\n",
                            k, bxc_emit_cstring(a, what), bxc_emit_cstring(a, p->src_name));
        k++;
    }
    bxc_emit_puts(c, "  return true;\n}\n");

    /* the implementation: forward on the values, then one custom node */
    bxc_emit_printf(c, "static __attribute__((unused)) bext_tensor *%s_bext_autodiff(%s) {\n", entry, cparams);
    bxc_emit_printf(c, "  bext_tensor *bext_v[%u] = {NULL}, *bext_y = NULL, *bext_r = NULL;\n", ntensors);
    if (nord) bxc_emit_printf(c, "  struct %s_bext_bw_state *bext_st = NULL;\n", entry);
    const char *fwd = "", *ins = "", *sv = "";
    for (uint32_t i = 0, k = 0; i < nparams; i++) {
        const bxc_emit_param *p = &params[i];
        const char *arg;
        if (p->is_tensor) {
            bxc_emit_printf(c, "  if (!(bext_v[%u] = bext_autodiff_value(%s))) goto bext_done;\n", k, p->name);
            arg = bxc_arena_printf(a, p->borrowed ? "bext_v[%u]" : "bext_retain(bext_v[%u])", k);
            ins = bxc_arena_printf(a, "%s%s%s", ins, k ? ", " : "", p->name);
            sv = bxc_arena_printf(a, "%sbext_v[%u], ", sv, k);
            k++;
        } else {
            arg = p->name;
        }
        fwd = bxc_arena_printf(a, "%s%s%s", fwd, i ? ", " : "", arg);
    }
    bxc_emit_printf(c, "  /* the method itself on the values: routes to the inner device's implementation */\n"
                       "  if (!(bext_y = %s(%s))) goto bext_done;\n",
                    entry, fwd);
    if (nord) {
        bxc_emit_printf(c, "  if (!(bext_st = malloc(sizeof *bext_st))) {\n"
                           "    bext_set_error(\"%%s: out of memory\", %s);\n    goto bext_done;\n  }\n",
                        bxc_emit_cstring(a, what));
        for (uint32_t i = 0; i < nparams; i++) {
            const bxc_emit_param *p = &params[i];
            if (!p->is_tensor)
                bxc_emit_printf(c, "  bext_st->%s = %s%s;\n", p->name, p->borrowed ? "*" : "", p->name);
        }
    }
    bxc_emit_printf(c, "  {\n    bext_tensor *const bext_in[%u] = {%s};\n    bext_tensor *const bext_sv[%u] = {%sbext_y};\n",
                    ntensors, ins, ntensors + 1, sv);
    bxc_emit_printf(c, "    bext_custom_node bext_n = {.name = %s, .n_in = %u, .inputs = bext_in, .n_saved = %u,\n"
                       "                               .saved = bext_sv, .backward = %s_bext_backward%s};\n",
                    bxc_emit_cstring(a, what), ntensors, ntensors + 1, entry,
                    nord ? ", .state = bext_st, .state_free = free" : "");
    if (nord) bxc_emit_puts(c, "    bext_st = NULL;   /* the record owns it now, success or not */\n");
    bxc_emit_puts(c, "    bext_r = bext_autodiff_record(&bext_n, bext_retain(bext_y));\n  }\n");
    bxc_emit_puts(c, "bext_done:\n");
    if (nord) bxc_emit_puts(c, "  free(bext_st);\n");
    bxc_emit_puts(c, "  bext_release(bext_y);\n");
    bxc_emit_printf(c, "  for (int bext_i = 0; bext_i < %u; bext_i++) bext_release(bext_v[bext_i]);\n", ntensors);
    for (uint32_t i = 0; i < nparams; i++)
        if (params[i].is_tensor && !params[i].borrowed) bxc_emit_printf(c, "  bext_release(%s);\n", params[i].name);
    bxc_emit_puts(c, "  return bext_r;\n}\n\n");
    return true;
}
