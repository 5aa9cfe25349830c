/* check_default.c — the subset of the language a default body or a
 * `#[backward]` formula may use is what the C generator can lower: this
 * file asks it (bxc_body_lowerable, emit_body.c, the one home of those
 * limits) and turns its answer into located errors with the language's
 * help, so that what `bextc --check` accepts `bextc -o` generates.
 *
 * A default body (language.md §3) becomes straight-line C over the core
 * op API: `let` bindings of single names, expression statements, numbers,
 * booleans, parameters and locals, tensor fields of extension parameters
 * (`p.values`), unary `-` `!` `&` `*`, binary operators, the ops of
 * tensor_ops.h called as functions or methods, nested blocks and `as`
 * casts of numbers; its value is one tensor and the method returns one
 * tensor.  A formula (§6) is the same with `grad` and `output` in scope. */
#include "check_internal.h"
#include "emit.h"

typedef struct sub_err {
    chk_ctx *cx;
    bool formula;
} sub_err;

static void subset_error(void *ud, bxc_span span, const char *what) {
    sub_err *s = ud;
    bxc_diag *dg = chk_error(s->cx, s->formula ? CHK_E_BACKWARD : CHK_E_FUSION_DEFAULT, span,
                             "%s is not allowed in %s", what, s->formula ? "a backward formula" : "a default body");
    chk_help(s->cx, dg,
             "%s straight-line tensor expressions: `let` bindings, numbers, tensor operators and "
             "ops, and `as` on numbers (see language.md %s)",
             s->formula ? "backward formulas are" : "default bodies are", s->formula ? "§6" : "§3");
}

void chk_default_body_subset(chk_ctx *cx, const bxc_fn *fn, bxc_type *ret) {
    if (!fn->body) return;
    bxc_type *rt = ret ? bxc_type_resolve(ret) : NULL;
    if (rt && !bxc_type_is_error(rt) && rt->kind != BXC_TYPE_TENSOR) {
        bxc_diag *dg = chk_error(cx, CHK_E_FUSION_DEFAULT, fn->ret ? fn->ret->span : fn->name.span,
                                 "a default body must return one tensor, and `%s` returns `%s`",
                                 fn->name.name, chk_tn(cx, rt));
        chk_help(cx, dg, "drop the default body and implement `%s` per backend", fn->name.name);
        return;
    }
    sub_err s = {cx, false};
    if (bxc_body_lowerable(cx->arena, fn, NULL, subset_error, &s) != BXC_BODY_NUMBER) return;
    bxc_span at = fn->body->tail ? fn->body->tail->span : fn->body->span;
    bxc_diag *dg = chk_error(cx, CHK_E_FUSION_DEFAULT, at, "the value of a default body must be a tensor");
    chk_help(cx, dg, "end the body with the tensor it computes");
}

void chk_backward_formula_subset(chk_ctx *cx, const bxc_fn *fn, const bxc_expr *formula) {
    sub_err s = {cx, true};
    if (bxc_body_lowerable(cx->arena, fn, formula, subset_error, &s) != BXC_BODY_NUMBER) return;
    bxc_diag *dg = chk_error(cx, CHK_E_BACKWARD, formula->span, "the value of a backward formula must be a tensor");
    chk_help(cx, dg, "a formula computes the gradient of its argument, a tensor of the argument's shape");
}
