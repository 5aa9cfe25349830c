/* hover_meta.c — the metadata a trait method computes, for example inputs,
 * as a line of its hover.  It runs the metadata interpreter through the
 * entry the REPL's `:meta` uses (interp.h bxi_meta), over the document's
 * last checked unit, so the hover shows what `:meta` would print; nothing
 * here evaluates an expression itself.
 *
 * Example inputs are picked deterministically from the method's record
 * (bxc_method_rec): each tensor argument gets a TensorSpec whose dtype
 * follows its kind (FloatTensor F32, IntTensor I64, BoolTensor Bool), and
 * the shapes are tried in a fixed order until one gives metadata —
 * a chain of 2-d shapes ([2, 3], [3, 4], [4, 5]: what a matmul accepts),
 * then every tensor [2, 3] (elementwise, broadcasting), [4], [2, 3, 4],
 * [2, 3, 4, 5].  Ordinary arguments get 1, 1.0, false, Shape [2, 3],
 * DType F32.  When no candidate succeeds the hover shows the first
 * candidate and the interpreter's message; a method whose example cannot
 * be built (an extension-value argument, an argument of another type)
 * says so. */
#include "lsp.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bext/ops.h>

#include "interp.h"
#include "types.h"

/* default bodies: each op's spec through the runtime's own rule, as the
 * REPL's `:meta` does (bext-lsp links libbext for bext_infer) */
static bool runtime_infer(const char *op, const bext_spec *in, int n_in, bext_op_args *args, bext_spec *out,
                          const char **error) {
    if (bext_infer(op, in, n_in, args, out)) return true;
    *error = bext_last_error();
    return false;
}

static const uint64_t candidates[][4] = {{0}, {2, 3}, {4}, {2, 3, 4}, {2, 3, 4, 5}};
static const size_t candidate_rank[] = {2, 2, 1, 3, 4};
#define NCAND (sizeof candidate_rank / sizeof *candidate_rank)

/* One example argument per non-self parameter, for candidate `c`; false
 * (why in *why) when a parameter has no example value. */
static bool example_args(bxc_arena *a, const bxc_method_rec *r, size_t c, BxvValue *args, uint32_t *nargs,
                         const char **why) {
    uint32_t n = 0, tensors = 0;
    for (uint32_t i = 0; i < r->nparams; i++) {
        const bxc_method_param *p = &r->params[i];
        if (p->p->is_self) continue;
        BxvValue v;
        bxc_type *t = bxc_type_resolve(p->base);
        if (p->cls == BXC_ARG_TENSOR && t->kind == BXC_TYPE_TENSOR) {
            BxvValue sh = bxv_shape_new(a, 4);
            for (size_t k = 0; k < candidate_rank[c]; k++)
                bxv_shape_push(a, &sh.u.shape, c == 0 ? 2 + tensors + k : candidates[c][k]);
            BxvDType dt = t->tensor_kind == BXC_TENSOR_INT ? BXV_DT_I64
                          : t->tensor_kind == BXC_TENSOR_BOOL ? BXV_DT_BOOL
                                                              : BXV_DT_F32;
            v = bxv_spec(a, &sh.u.shape, dt);
            tensors++;
        } else if (p->cls == BXC_ARG_ORDINARY && t->kind == BXC_TYPE_INT) {
            v = bxv_int(1, BXV_ILIT);
        } else if (p->cls == BXC_ARG_ORDINARY && t->kind == BXC_TYPE_FLOAT) {
            v = bxv_float(1.0, BXV_FLIT);
        } else if (p->cls == BXC_ARG_ORDINARY && t->kind == BXC_TYPE_BOOL) {
            v = bxv_bool(false);
        } else if (p->cls == BXC_ARG_ORDINARY && t->kind == BXC_TYPE_SHAPE) {
            v = bxv_shape_new(a, 2);
            bxv_shape_push(a, &v.u.shape, 2);
            bxv_shape_push(a, &v.u.shape, 3);
        } else if (p->cls == BXC_ARG_ORDINARY && t->kind == BXC_TYPE_DTYPE) {
            v = bxv_dtype(BXV_DT_F32);
        } else {
            *why = bxc_arena_printf(a, "no example value for `%s`%s", p->name,
                                    p->cls == BXC_ARG_EXT ? " (an extension value)" : "");
            return false;
        }
        args[n++] = v;
    }
    *nargs = n;
    return true;
}

/* "name(x: TensorSpec { .. }, k: 1)" into b. */
static void print_call(BxvBuf *b, const bxc_method_rec *r, const BxvValue *args) {
    BxvBuf s = {0};
    uint32_t k = 0;
    bxv_buf_printf(&s, "%s(", r->fn->name.name);
    for (uint32_t i = 0; i < r->nparams; i++) {
        if (r->params[i].p->is_self) continue;
        bxv_buf_printf(&s, "%s%s: ", k ? ", " : "", r->params[i].name);
        bxv_print(&s, &args[k++]);
    }
    bxv_buf_printf(&s, ")");
    *b = s;
}

char *lsp_meta_example(const bxc_unit *u, const bxc_method_rec *r) {
    if (!r || !r->trait || !r->trait->name.name || !r->fn || r->form == BXC_FUSION_NONE) return NULL;
    bxc_arena a;
    bxc_arena_init(&a);
    bxc_diag_list diags;
    bxc_diag_list_init(&diags, &a);
    bxi_interp *in = NULL;
    char *text = NULL;
    bxc_oom_point oom;
    bxc_oom_push(&oom);
    if (setjmp(oom.env)) {   /* no example rather than no server */
        if (in) bxi_free(in);
        bxc_arena_free_all(&a);
        return NULL;
    }
    in = bxi_new(&diags);
    bxi_set_infer(in, runtime_infer);
    bxi_add_unit(in, u, 0);
    BxvValue *args = bxc_arena_alloc(&a, (r->nparams + 1) * sizeof *args);
    BxvValue *first = bxc_arena_alloc(&a, (r->nparams + 1) * sizeof *first);
    const char *first_error = NULL;
    BxvBuf out = {0};
    for (size_t c = 0; c < NCAND && !text; c++) {
        uint32_t n;
        const char *why = NULL;
        if (!example_args(&a, r, c, args, &n, &why)) {
            text = bxc_arena_printf(&a, "metadata for example inputs: %s", why);
            break;
        }
        uint32_t before = diags.count;
        BxvValue v;
        const char *msg = NULL;
        bxi_meta_status st = bxi_meta(in, r->trait->name.name, r->fn->name.name, args, n, &v, &msg);
        BxvBuf call = {0};
        if (st == BXI_META_VALUE) {
            print_call(&call, r, args);
            bxv_print(&out, &v);
            text = bxc_arena_printf(&a, "metadata for example inputs (as `:meta` computes it):\n`%s` → `%s`",
                                    call.data ? call.data : "", out.data ? out.data : "");
        } else if (st == BXI_META_DEFAULT) {
            text = bxc_arena_printf(&a, "metadata for example inputs: %s", msg ? msg : "not evaluated");
        } else if (c == 0) {
            memcpy(first, args, n * sizeof *args);
            first_error = diags.count > before ? diags.items[before].message : "the metadata failed";
        }
        bxv_buf_free(&call);
    }
    if (!text && first_error) {
        BxvBuf call = {0};
        print_call(&call, r, first);
        text = bxc_arena_printf(&a, "metadata fails for example inputs `%s`: %s (other example shapes fail too)",
                                call.data ? call.data : "", first_error);
        bxv_buf_free(&call);
    }
    char *result = text ? strdup(text) : NULL;
    bxv_buf_free(&out);
    bxi_free(in);
    bxc_oom_pop(&oom);
    bxc_arena_free_all(&a);
    return result;
}
