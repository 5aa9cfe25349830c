/* check.c — the checker's entry point and pass pipeline, its diagnostics
 * helpers, and the REPL API (check.h).
 *
 * The pipeline reads top to bottom in bxc_check_unit: every module's names
 * are collected before any `use` is resolved, every type before any body
 * is typed, so declaration order never matters.  Modules are visited in
 * unit->order (dependencies first). */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "check_internal.h"
#include "cube.h"

/* ---- diagnostics ------------------------------------------------------------ */

static bxc_diag *vreport(chk_ctx *cx, bxc_severity sev, chk_code code, bxc_span span,
                         const char *fmt, va_list ap) {
    if (cx->quiet) return NULL;
    return bxc_diag_vadd(cx->diags, sev, bxc_diag_code_str(code), span, fmt, ap);
}

bxc_diag *chk_error(chk_ctx *cx, chk_code code, bxc_span span, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    bxc_diag *d = vreport(cx, BXC_SEV_ERROR, code, span, fmt, ap);
    va_end(ap);
    return d;
}

bxc_diag *chk_warning(chk_ctx *cx, chk_code code, bxc_span span, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    bxc_diag *d = vreport(cx, BXC_SEV_WARNING, code, span, fmt, ap);
    va_end(ap);
    return d;
}

void chk_help(chk_ctx *cx, bxc_diag *d, const char *fmt, ...) {
    if (!d) return;
    va_list ap;
    va_start(ap, fmt);
    char *s = bxc_arena_vprintf(cx->arena, fmt, ap);
    va_end(ap);
    bxc_diag_set_help(cx->diags, d, "%s", s);
}

void chk_note(chk_ctx *cx, bxc_diag *d, bxc_span span, const char *fmt, ...) {
    if (!d) return;
    va_list ap;
    va_start(ap, fmt);
    char *s = bxc_arena_vprintf(cx->arena, fmt, ap);
    va_end(ap);
    bxc_diag_add_note(cx->diags, d, span, "%s", s);
}

const char *chk_tn(chk_ctx *cx, bxc_type *t) {
    return bxc_type_name(cx->arena, t);
}

const char *chk_nearest(const char *word, const char *const *cands, uint32_t n) {
    return bxc_diag_nearest(word, cands, n);
}

chk_module *chk_module_of(chk_ctx *cx, const bxc_module *m) {
    if (!m) return NULL;
    if (m->check) return m->check;
    for (uint32_t i = 0; i < cx->nmods; i++)
        if (cx->mods[i]->mod == m) return cx->mods[i];
    return NULL;
}

/* ---- the pipeline ----------------------------------------------------------- */

static bool diag_before(const bxc_diag *a, const bxc_diag *b) {
    if (a->span.file != b->span.file) {
        if (a->span.file == BXC_NO_FILE) return true;    /* driver-level first */
        if (b->span.file == BXC_NO_FILE) return false;
        return a->span.file < b->span.file;
    }
    return a->span.offset < b->span.offset;
}

/* The passes find errors in pass order (all types, then all bodies, then
 * all traits); readers expect them in source order.  Stable insertion
 * sort (the list is bounded), keeping the "too many errors" entry last. */
static void sort_diags(bxc_diag_list *l) {
    uint32_t n = l->count;
    if (l->truncated && n) n--;
    for (uint32_t i = 1; i < n; i++) {
        bxc_diag d = l->items[i];
        uint32_t j = i;
        while (j > 0 && diag_before(&d, &l->items[j - 1])) {
            l->items[j] = l->items[j - 1];
            j--;
        }
        l->items[j] = d;
    }
}

static chk_ctx *ctx_new(bxc_unit *u) {
    chk_ctx *cx = bxc_arena_alloc(&u->arena, sizeof *cx);
    cx->unit = u;
    cx->arena = &u->arena;
    cx->diags = &u->diags;
    cx->nmods = u->nmodules;
    cx->mods = bxc_arena_alloc(&u->arena, (u->nmodules ? u->nmodules : 1) * sizeof *cx->mods);
    for (uint32_t i = 0; i < u->nmodules; i++) {
        chk_module *cm = bxc_arena_alloc(&u->arena, sizeof *cm);
        cm->mod = u->modules[i];
        u->modules[i]->check = cm;
        cx->mods[i] = cm;
    }
    u->check = cx;
    return cx;
}

bool bxc_check_unit(struct bxc_unit *u) {
    chk_ctx *cx = ctx_new(u);
    /* Dependencies before dependents; fall back to discovery order when the
     * loader stopped early (errors) and the order is incomplete. */
    uint32_t n = u->norder == u->nmodules ? u->norder : u->nmodules;
    bxc_module **order = u->norder == u->nmodules ? u->order : u->modules;
    chk_module **cms = bxc_arena_alloc(cx->arena, (n ? n : 1) * sizeof *cms);
    uint32_t ncms = 0;
    for (uint32_t i = 0; i < n; i++) {
        chk_module *cm = chk_module_of(cx, order[i]);
        if (cm && cm->mod->ast) cms[ncms++] = cm;
    }
    for (uint32_t i = 0; i < ncms; i++) chk_collect_module(cx, cms[i]);
    for (uint32_t i = 0; i < ncms; i++) chk_resolve_imports(cx, cms[i]);
    for (uint32_t i = 0; i < ncms; i++) chk_resolve_types(cx, cms[i]);
    for (uint32_t i = 0; i < ncms; i++) chk_impl_signatures(cx, cms[i]);
    for (uint32_t i = 0; i < ncms; i++) chk_check_fns(cx, cms[i]);
    for (uint32_t i = 0; i < ncms; i++) chk_impl_bodies(cx, cms[i]);
    chk_cube_helpers(cx, cms, ncms);
    for (uint32_t i = 0; i < ncms; i++) chk_cube_module(cx, cms[i]);
    for (uint32_t i = 0; i < ncms; i++) {
        bxc_item_list *items = &cms[i]->mod->ast->items;
        for (uint32_t k = 0; k < items->len; k++) {
            bxc_item *it = items->items[k];
            if (it->kind != BXC_ITEM_TRAIT) continue;
            if (chk_cfg_active(cx, &it->attrs)) {
                chk_trait(cx, cms[i], it);
            } else {
                /* switched off for these features, still generated */
                const bxc_attr *be = chk_find_attr(&it->attrs, "backend_extension");
                if (be) it->trait.selectors = chk_selector_record(cx, be);
                for (uint32_t f = 0; f < it->trait.methods.len; f++) {
                    chk_method_switched_off(cx, cms[i], it->trait.methods.items[f]);
                    chk_method_record_off(cx, cms[i], it, it->trait.methods.items[f]);
                }
            }
        }
    }
    chk_root_types_c_form(cx);
    /* C names come last: they need a unit that checks (its records) */
    if (!bxc_diag_has_errors(&u->diags)) chk_c_names(cx);
    sort_diags(&u->diags);
    return !bxc_diag_has_errors(&u->diags);
}

/* ---- REPL API ---------------------------------------------------------------- */

static chk_ctx *repl_ctx(bxc_unit *u) {
    if (!u->check) bxc_check_unit(u);
    return u->check;
}

/* The module REPL names resolve in: the root, or an empty one for a unit
 * without files. */
static chk_module *repl_module(chk_ctx *cx) {
    if (cx->nmods) return cx->mods[0];
    static const char *const none = "repl";
    chk_module *cm = bxc_arena_alloc(cx->arena, sizeof *cm);
    bxc_module *m = bxc_arena_alloc(cx->arena, sizeof *m);
    m->name = none;
    m->is_root = true;
    cm->mod = m;
    cx->mods = bxc_arena_alloc(cx->arena, sizeof *cx->mods);
    cx->mods[0] = cm;
    cx->nmods = 1;
    return cm;
}

static void move_bindings(chk_ctx *cx, bxc_scope *from, bxc_scope *to) {
    /* `from` lists newest first; rebind oldest first so order survives */
    uint32_t n = 0;
    for (bxc_binding *b = from->first; b; b = b->next) n++;
    bxc_binding **all = bxc_arena_alloc(cx->arena, (n ? n : 1) * sizeof *all);
    uint32_t i = n;
    for (bxc_binding *b = from->first; b; b = b->next) all[--i] = b;
    for (i = 0; i < n; i++) {
        bxc_binding *nb = bxc_scope_bind(cx->arena, to, all[i]->name,
                                         bxc_type_zonk(cx->arena, all[i]->type), all[i]->is_mut);
        nb->span = all[i]->span;
    }
}

struct bxc_type *bxc_check_repl_block(struct bxc_unit *unit, bxc_scope *bindings,
                                      bxc_block *b) {
    chk_ctx *cx = repl_ctx(unit);
    chk_module *cm = repl_module(cx);
    uint32_t before = cx->diags->errors;
    chk_fn f;
    chk_fn_init(&f, cx, cm, CHK_MODE_META);
    f.what = "the REPL input";
    f.scope = bxc_scope_new(cx->arena, bindings);
    bxc_scope *top = f.scope;
    bxc_type *t = chk_block_in_scope(&f, b);
    chk_zonk_block(cx, b);
    if (cx->diags->errors != before) return NULL;
    if (bindings) move_bindings(cx, top, bindings);
    return bxc_type_zonk(cx->arena, t);
}

struct bxc_type *bxc_check_repl_expr(struct bxc_unit *unit, bxc_scope *bindings,
                                     bxc_expr *e) {
    if (!e) return NULL;
    if (e->kind == BXC_EXPR_BLOCK) {
        bxc_type *t = bxc_check_repl_block(unit, bindings, e->block);
        e->ty = t ? t : bxc_type_error();
        return t;
    }
    chk_ctx *cx = repl_ctx(unit);
    chk_module *cm = repl_module(cx);
    uint32_t before = cx->diags->errors;
    chk_fn f;
    chk_fn_init(&f, cx, cm, CHK_MODE_META);
    f.what = "the REPL input";
    f.scope = bxc_scope_new(cx->arena, bindings);
    bxc_type *t = chk_expr(&f, e, NULL);
    chk_zonk_expr(cx, e);
    if (cx->diags->errors != before) return NULL;
    return bxc_type_zonk(cx->arena, t);
}

bool bxc_check_repl_item(struct bxc_unit *unit, bxc_item *item) {
    chk_ctx *cx = repl_ctx(unit);
    chk_module *cm = repl_module(cx);
    uint32_t before = cx->diags->errors;
    chk_add_item(cx, cm, item);
    return cx->diags->errors == before;
}

void bxc_check_repl_see_unit(struct bxc_unit *unit, struct bxc_unit *other) {
    chk_ctx *cx = repl_ctx(unit);
    chk_ctx *ox = repl_ctx(other);
    if (cx == ox || !ox->nmods) return;
    chk_module *cm = repl_module(cx);
    chk_module *om = ox->mods[0];
    /* the symbols themselves are shared: the checker resolves a name to
     * the same record whichever file's input names it */
    for (uint32_t b = 0; b < CHK_BUCKETS; b++)
        for (chk_entry *e = om->table.buckets[b]; e; e = e->next)
            if (!chk_lookup(cm, e->name)) chk_table_put(cx, &cm->table, e->name, e->sym);
    for (chk_method *m = ox->methods; m; m = m->next) {
        chk_method *c = bxc_arena_alloc(cx->arena, sizeof *c);
        *c = *m;
        c->next = cx->methods;
        cx->methods = c;
    }
}

struct bxc_type *bxc_check_lookup_type(struct bxc_unit *unit, const char *name) {
    chk_ctx *cx = repl_ctx(unit);
    if (!cx->nmods) return NULL;
    chk_symbol *s = chk_lookup(cx->mods[0], name);
    if (!s || (s->kind != CHK_SYM_TYPE && s->kind != CHK_SYM_ALIAS)) return NULL;
    return s->type;
}

struct bxc_type *bxc_check_lookup_fn(struct bxc_unit *unit, const char *name) {
    chk_ctx *cx = repl_ctx(unit);
    if (!cx->nmods) return NULL;
    chk_symbol *s = chk_lookup(cx->mods[0], name);
    if (!s || s->kind != CHK_SYM_FN) return NULL;
    return chk_fn_signature(cx, s);
}
