/* interp.c — the metadata interpreter's state: the interpreter object and
 * its limits, the program (where names are found), the variable stack, the
 * REPL bindings (bxi_env) with their compaction, located runtime errors, and
 * types as written.  Evaluation is in interp_eval.c, value arithmetic and
 * casts in interp_ops.c, `#[fusion(...)]` in interp_meta.c.  See interp.h
 * for the contract (located errors, scratch arena, span bases). */
#include "interp_int.h"
#include "types.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

void *bxi_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (!q) {
        fputs("bext: out of memory\n", stderr);
        abort();
    }
    return q;
}

const char *bxi_type_str(bxi_interp *in, const BxvValue *v)
{
    BxvBuf b = {0};
    bxv_print_type(&b, v);
    const char *s = bxc_arena_strdup(&in->scratch, b.data ? b.data : "?");
    bxv_buf_free(&b);
    return s;
}

/* ---- diagnostics -------------------------------------------------------- */

bxc_diag *bxi_error(bxi_interp *in, bxc_diag_code code, bxc_span span, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bxc_diag *d = bxc_diag_vadd(in->diags, BXC_SEV_ERROR, bxc_diag_code_str(code), bxi_global_span(in, span), fmt, ap);
    va_end(ap);
    /* Innermost call first, as a backtrace reads; a deep recursion would
     * repeat the same note, so keep the first few. */
    uint32_t shown = 0;
    for (uint32_t i = in->ncalls; i-- > 0 && d;) {
        if (shown == 6) {
            bxc_diag_add_note(in->diags, d, bxc_span_none(), "... and %u more enclosing calls", i + 1);
            break;
        }
        bxc_diag_add_note(in->diags, d, in->calls[i].site, "in this call to `%s`", in->calls[i].name);
        shown++;
    }
    return d;
}

/* ---- environment of REPL bindings --------------------------------------- */

void bxi_env_init(bxi_env *env)
{
    memset(env, 0, sizeof *env);
    bxc_arena_init(&env->arena);
}

void bxi_env_free(bxi_env *env)
{
    bxc_arena_free_all(&env->arena);
    free(env->items);
    memset(env, 0, sizeof *env);
}

const bxi_binding *bxi_env_get(const bxi_env *env, const char *name)
{
    if (!env)
        return NULL;
    for (uint32_t i = 0; i < env->len; i++)
        if (strcmp(env->items[i].name, name) == 0)
            return &env->items[i];
    return NULL;
}

/* Rebuilds the env's arena with only the live bindings, so rebinding the
 * same names over a long session does not grow memory without bound. */
static void env_compact(bxi_env *env)
{
    bxc_arena fresh;
    bxc_arena_init(&fresh);
    env->live_bytes = 0;
    for (uint32_t i = 0; i < env->len; i++) {
        size_t before = fresh.total;
        env->items[i].name = bxc_arena_strdup(&fresh, env->items[i].name);
        env->items[i].value = bxv_copy(&fresh, &env->items[i].value);
        env->items[i].bytes = fresh.total - before;
        env->live_bytes += env->items[i].bytes;
    }
    bxc_arena_free_all(&env->arena);
    env->arena = fresh;
}

void bxi_env_set(bxi_env *env, const char *name, bool is_mut, const BxvValue *v)
{
    size_t before = env->arena.total;
    BxvValue copy = bxv_copy(&env->arena, v);
    bxi_binding *slot = NULL;
    for (uint32_t i = 0; i < env->len; i++)
        if (strcmp(env->items[i].name, name) == 0)
            slot = &env->items[i];
    if (!slot) {
        if (env->len == env->cap) {
            env->cap = env->cap ? env->cap * 2 : 8;
            env->items = bxi_xrealloc(env->items, env->cap * sizeof *env->items);
        }
        slot = &env->items[env->len++];
        slot->name = bxc_arena_strdup(&env->arena, name);
        slot->bytes = 0;
    }
    env->live_bytes -= slot->bytes;
    slot->is_mut = is_mut;
    slot->value = copy;
    slot->bytes = env->arena.total - before;
    env->live_bytes += slot->bytes;
    /* The replaced copies are dead weight: rebuild once they dominate. */
    if (env->arena.total > 4 * env->live_bytes + (1u << 20))
        env_compact(env);
}

/* ---- interpreter object ------------------------------------------------- */

bxi_interp *bxi_new(bxc_diag_list *diags)
{
    bxi_interp *in = calloc(1, sizeof *in);
    if (!in) {
        fputs("bext: out of memory\n", stderr);
        abort();
    }
    in->diags = diags;
    bxc_arena_init(&in->scratch);
    in->lim.max_call_depth = BXI_DEFAULT_CALL_DEPTH;
    in->lim.max_steps = BXI_DEFAULT_STEPS;
    /* Expression nesting (bounded per function by the parser) times call
     * depth can still be deep, and sanitizer builds at -O0 use kilobytes
     * per level: the evaluator measures its stack instead of counting. */
    struct rlimit rl;
    size_t stack = BXI_DEFAULT_STACK_MAX;
    if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur / 2 < stack)
        stack = rl.rlim_cur / 2;
    in->lim.max_stack_bytes = stack;
    return in;
}

void bxi_free(bxi_interp *in)
{
    if (!in)
        return;
    bxc_arena_free_all(&in->scratch);
    free(in->lists);
    free(in->vars);
    free(in->calls);
    free(in);
}

void bxi_set_infer(bxi_interp *in, bxi_infer_fn fn) { in->infer = fn; }

void bxi_set_limits(bxi_interp *in, bxi_limits limits)
{
    /* A zero field keeps the current limit. */
    if (limits.max_call_depth)
        in->lim.max_call_depth = limits.max_call_depth;
    if (limits.max_steps)
        in->lim.max_steps = limits.max_steps;
    if (limits.max_stack_bytes)
        in->lim.max_stack_bytes = limits.max_stack_bytes;
}

void bxi_add_items(bxi_interp *in, const bxc_item_list *items, uint32_t file_base)
{
    if (in->nlists == in->caplists) {
        in->caplists = in->caplists ? in->caplists * 2 : 8;
        in->lists = bxi_xrealloc(in->lists, in->caplists * sizeof *in->lists);
    }
    /* REPL-typed items go first so they shadow loaded ones. */
    memmove(in->lists + 1, in->lists, in->nlists * sizeof *in->lists);
    in->lists[0] = (bxi_items_ref){items, file_base};
    in->nlists++;
}

void bxi_add_unit(bxi_interp *in, const bxc_unit *unit, uint32_t file_base)
{
    for (uint32_t i = 0; i < unit->nmodules; i++) {
        const bxc_module *m = unit->modules[i];
        if (!m->ast)
            continue;
        if (in->nlists == in->caplists) {
            in->caplists = in->caplists ? in->caplists * 2 : 8;
            in->lists = bxi_xrealloc(in->lists, in->caplists * sizeof *in->lists);
        }
        in->lists[in->nlists++] = (bxi_items_ref){&m->ast->items, file_base};
    }
}

void bxi_clear_program(bxi_interp *in) { in->nlists = 0; }

static const bxc_item *find_in_list(const bxi_items_ref *ref, const char *name, uint32_t kinds_mask)
{
    for (uint32_t i = 0; i < ref->items->len; i++) {
        const bxc_item *it = ref->items->items[i];
        if ((kinds_mask & BXI_KIND(it->kind)) && bxi_name_is(it->name.name, name))
            return it;
    }
    return NULL;
}

const bxc_item *bxi_find_item(const bxi_interp *in, const char *name, uint32_t kinds_mask, uint32_t *base,
                              uint32_t *list)
{
    uint32_t cur = in->cur_list;
    for (uint32_t k = 0; k <= in->nlists; k++) {
        /* k == 0 tries the running code's module; then every list in order. */
        uint32_t l = k == 0 ? cur : k - 1;
        if (l >= in->nlists || (k > 0 && l == cur))
            continue;
        const bxc_item *it = find_in_list(&in->lists[l], name, kinds_mask);
        if (it) {
            if (base)
                *base = in->lists[l].base;
            if (list)
                *list = l;
            return it;
        }
    }
    return NULL;
}

static bool list_holds(const bxi_items_ref *ref, const bxc_item *it)
{
    for (uint32_t i = 0; i < ref->items->len; i++)
        if (ref->items->items[i] == it)
            return true;
    return false;
}

bool bxi_list_of(const bxi_interp *in, const bxc_item *it, uint32_t *base, uint32_t *list)
{
    /* the running code's own module first: most calls stay inside it */
    for (uint32_t k = 0; k <= in->nlists; k++) {
        uint32_t l = k == 0 ? in->cur_list : k - 1;
        if (l >= in->nlists || (k > 0 && l == in->cur_list) || !list_holds(&in->lists[l], it))
            continue;
        *base = in->lists[l].base;
        *list = l;
        return true;
    }
    return false;
}

static const bxc_fn *method_in_list(const bxi_items_ref *ref, const char *type_name, const char *name)
{
    for (uint32_t i = 0; i < ref->items->len; i++) {
        const bxc_item *it = ref->items->items[i];
        /* Trait impls (`impl Trait for Cube`) hold kernel implementations,
         * not metadata methods. */
        if (it->kind != BXC_ITEM_IMPL || it->impl.trait_ty || !it->impl.self_ty)
            continue;
        const bxc_tyexpr *t = it->impl.self_ty;
        if (t->kind != BXC_TY_PATH || !t->path || !bxi_name_is(bxi_path_last(t->path), type_name))
            continue;
        for (uint32_t k = 0; k < it->impl.methods.len; k++)
            if (bxi_name_is(it->impl.methods.items[k]->name.name, name))
                return it->impl.methods.items[k];
    }
    return NULL;
}

const bxc_fn *bxi_find_method(const bxi_interp *in, const char *type_name, const char *name,
                              uint32_t *base, uint32_t *list)
{
    if (!type_name)
        return NULL;
    uint32_t cur = in->cur_list;
    for (uint32_t k = 0; k <= in->nlists; k++) {
        uint32_t l = k == 0 ? cur : k - 1;
        if (l >= in->nlists || (k > 0 && l == cur))
            continue;
        const bxc_fn *fn = method_in_list(&in->lists[l], type_name, name);
        if (fn) {
            if (base)
                *base = in->lists[l].base;
            if (list)
                *list = l;
            return fn;
        }
    }
    return NULL;
}

bool bxi_fn_has_self(const bxc_fn *fn)
{
    if (!fn->params.len)
        return false;
    const bxc_param *p = fn->params.items[0];
    return p->is_self || (p->pat && p->pat->kind == BXC_PAT_IDENT && bxi_name_is(p->pat->name.name, "self"));
}

void bxi_reset(bxi_interp *in)
{
    bxc_arena_free_all(&in->scratch);
    /* The variable slots lived in the scratch arena. */
    if (in->capvars)
        memset(in->vars, 0, in->capvars * sizeof *in->vars);
    in->nvars = 0;
    in->frame_start = 0;
    in->base = 0;
    in->cur_list = BXI_NO_LIST;
    in->self_type = NULL;
    in->depth = 0;
    in->steps = 0;
    in->stack_base = (uintptr_t)__builtin_frame_address(0);
    in->ncalls = 0;
    in->budget_reported = false;
    in->ret = bxv_unit();
}

void bxi_push_var(bxi_interp *in, const char *name, bool is_mut, const BxvValue *v)
{
    if (in->nvars == in->capvars) {
        uint32_t old = in->capvars;
        in->capvars = in->capvars ? in->capvars * 2 : 32;
        in->vars = bxi_xrealloc(in->vars, in->capvars * sizeof *in->vars);
        memset(in->vars + old, 0, (in->capvars - old) * sizeof *in->vars);
    }
    /* A popped variable's slot is reused: nothing keeps a pointer to a slot
     * past its scope (reads copy the value), and a loop that binds a
     * variable per iteration then allocates nothing for it. */
    BxvValue *slot = in->vars[in->nvars].val;
    if (!slot)
        slot = bxc_arena_alloc(&in->scratch, sizeof *slot);
    BxvValue copy = bxv_copy(&in->scratch, v);
    *slot = copy;
    in->vars[in->nvars++] = (bxi_var){name, is_mut, slot};
}

void bxi_push_env(bxi_interp *in, const bxi_env *env)
{
    if (!env)
        return;
    for (uint32_t i = 0; i < env->len; i++)
        bxi_push_var(in, env->items[i].name, env->items[i].is_mut, &env->items[i].value);
}

bxi_var *bxi_find_var(bxi_interp *in, const char *name)
{
    for (uint32_t i = in->nvars; i-- > in->frame_start;)
        if (strcmp(in->vars[i].name, name) == 0)
            return &in->vars[i];
    return NULL;
}

/* ---- types as written ----------------------------------------------------- */

const bxc_tyexpr *bxi_tyexpr_strip_refs(const bxc_tyexpr *t, unsigned *refs)
{
    unsigned n = 0;
    while (t && t->kind == BXC_TY_REF) {
        n++;
        t = t->inner;
    }
    if (refs)
        *refs = n;
    return t;
}

/* Follows `type A = B;` aliases (bounded, so a cycle cannot hang). */
static const bxc_tyexpr *resolve_alias(const bxi_interp *in, const bxc_tyexpr *t)
{
    for (int hops = 0; t && t->kind == BXC_TY_PATH && t->path && hops < 16; hops++) {
        const bxc_item *al = bxi_find_item(in, bxi_path_last(t->path), BXI_KIND(BXC_ITEM_TYPE_ALIAS), NULL, NULL);
        if (!al || !al->alias.type)
            break;
        t = al->alias.type;
    }
    return t;
}

/* The type the checker recorded for t (aliases followed, references
 * stripped), or NULL for a tree it never saw. */
static bxc_type *recorded_type(const bxc_tyexpr *t)
{
    return t && t->ty ? bxc_type_strip_refs(bxc_type_resolve(t->ty)) : NULL;
}

bool bxi_tyexpr_int(const bxi_interp *in, const bxc_tyexpr *t, BxvIntType *out)
{
    bxc_type *rt = recorded_type(t);
    if (rt) {
        if (rt->kind != BXC_TYPE_INT)
            return false;
        *out = (BxvIntType)rt->int_kind;   /* same order: interp_eval.c's static assertion */
        return true;
    }
    t = resolve_alias(in, bxi_tyexpr_strip_refs(t, NULL));
    if (!t || t->kind != BXC_TY_PATH || !t->path || t->path->segs.len != 1)
        return false;
    const char *n = bxi_path_last(t->path);
    return bxv_int_type_from_name(n, strlen(n), out);
}

bool bxi_tyexpr_float(const bxi_interp *in, const bxc_tyexpr *t, BxvFloatType *out)
{
    bxc_type *rt = recorded_type(t);
    if (rt) {
        if (rt->kind != BXC_TYPE_FLOAT || (rt->float_kind != BXC_F32 && rt->float_kind != BXC_F64))
            return false;
        *out = rt->float_kind == BXC_F32 ? BXV_F32 : BXV_F64;
        return true;
    }
    t = resolve_alias(in, bxi_tyexpr_strip_refs(t, NULL));
    if (!t || t->kind != BXC_TY_PATH || !t->path || t->path->segs.len != 1)
        return false;
    const char *n = bxi_path_last(t->path);
    if (strcmp(n, "f32") == 0)
        *out = BXV_F32;
    else if (strcmp(n, "f64") == 0)
        *out = BXV_F64;
    else
        return false;
    return true;
}

