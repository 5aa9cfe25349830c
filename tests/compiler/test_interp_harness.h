/* test_interp_harness.h — drives the metadata interpreter the way the REPL
 * does, for test_interp*.c and test_stdlib*.c: a unit loaded from text (its
 * `use std::...` found by the module loader), REPL lines parsed into it and
 * evaluated with persistent bindings.  Each evaluation returns what a user
 * would see: the printed value, or the rendered diagnostics (clang style,
 * `<repl>:1:5: error: ...`).  Real parser, real interpreter: no mocks. */
#ifndef BEXT_TEST_INTERP_HARNESS_H
#define BEXT_TEST_INTERP_HARNESS_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "diag.h"
#include "interp.h"
#include "module.h"
#include "parse.h"

typedef struct harness {
    bxc_unit unit;
    bxi_interp *in;
    bxc_arena darena;
    bxc_diag_list diags;
    bxi_env env;
    bxc_item_list typed[64];
    unsigned ntyped;
} harness;

static char *h_render(const bxc_diag_list *l, const bxc_sources *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    bxc_diag_render_text(f, l, s);
    fclose(f);
    return buf;
}

/* `decls` is the text of a .bext file (NULL: none). */
static __attribute__((unused)) void h_init(harness *h, const char *decls)
{
    memset(h, 0, sizeof *h);
    bxc_unit_init(&h->unit);
    if (decls) {
        bxc_load_status st = bxc_unit_load_memory(&h->unit, "test.bext", decls, strlen(decls));
        if (st != BXC_LOAD_OK) {
            char *msg = h_render(&h->unit.diags, &h->unit.sources);
            cr_assert_fail("the test's declarations do not load:\n%s", msg);
        }
    }
    bxc_arena_init(&h->darena);
    bxc_diag_list_init(&h->diags, &h->darena);
    h->in = bxi_new(&h->diags);
    bxi_env_init(&h->env);
}

/* The same, then the checker over the unit (which must accept it): helper
 * fns then run with the literal types the checker recorded. */
static __attribute__((unused)) void h_init_checked(harness *h, const char *decls)
{
    h_init(h, decls);
    if (!bxc_check_unit(&h->unit)) {
        char *msg = h_render(&h->unit.diags, &h->unit.sources);
        cr_assert_fail("the checker rejects the test's declarations:\n%s", msg);
    }
}

static __attribute__((unused)) void h_fini(harness *h)
{
    bxi_free(h->in);
    bxi_env_free(&h->env);
    bxc_arena_free_all(&h->darena);
    bxc_unit_free(&h->unit);
}

static void h_program(harness *h)
{
    bxi_clear_program(h->in);
    bxi_add_unit(h->in, &h->unit, 0);
    for (unsigned i = 0; i < h->ntyped; i++)
        bxi_add_items(h->in, &h->typed[i], 0);
}

/* Parses a REPL line into the unit; NULL (and *out set) on syntax errors. */
static bxc_file *h_parse(harness *h, const char *line, char **out)
{
    bxc_source *src = bxc_sources_add_memory(&h->unit.sources, "<repl>", line, strlen(line));
    bxc_diag_list_init(&h->unit.diags, &h->unit.arena);
    bxc_file *f = bxc_parse(&h->unit.arena, &h->unit.diags, src, BXC_PARSE_REPL);
    if (bxc_diag_has_errors(&h->unit.diags)) {
        *out = h_render(&h->unit.diags, &h->unit.sources);
        return NULL;
    }
    if (f->items.len && h->ntyped < 64)
        h->typed[h->ntyped++] = f->items;
    h_program(h);
    return f;
}

static char *h_value_text(const BxvValue *v)
{
    BxvBuf b = {0};
    bxv_print(&b, v);
    char *s = strdup(b.data ? b.data : "");
    bxv_buf_free(&b);
    return s;
}

static char *h_diags(harness *h)
{
    char *s = h_render(&h->diags, &h->unit.sources);
    bxc_arena_free_all(&h->darena);
    bxc_diag_list_init(&h->diags, &h->darena);
    return s ? s : strdup("");
}

/* Evaluates a REPL line: the printed value ("" when none), or the
 * diagnostics.  The caller frees the result. */
static __attribute__((unused)) char *h_eval(harness *h, const char *line)
{
    char *out = NULL;
    bxc_file *f = h_parse(h, line, &out);
    if (!f)
        return out;
    BxvValue v;
    bool has;
    if (!f->repl)
        return strdup("");
    if (bxi_eval_repl(h->in, f->repl, 0, &h->env, &v, &has)) {
        char *d = h_diags(h);
        if (*d)   /* warnings */
            return d;
        free(d);
        return has && v.kind != BXV_UNIT ? h_value_text(&v) : strdup("");
    }
    return h_diags(h);
}

/* `:meta CALL`: the printed metadata, the default-body message, or the
 * diagnostics. */
static __attribute__((unused)) char *h_meta(harness *h, const char *call)
{
    char *out = NULL;
    bxc_file *f = h_parse(h, call, &out);
    if (!f)
        return out;
    cr_assert(f->repl && f->repl->tail, "`%s` is not an expression", call);
    BxvValue v;
    const char *msg = NULL;
    bxi_meta_status st = bxi_meta_call(h->in, f->repl->tail, 0, &h->env, &v, &msg);
    if (st == BXI_META_VALUE)
        return h_value_text(&v);
    if (st == BXI_META_DEFAULT)
        return strdup(msg);
    return h_diags(h);
}

/* Asserts that evaluating `line` prints exactly `want`. */
#define EXPECT_VALUE(h, line, want)                                                   \
    do {                                                                              \
        char *got_ = h_eval((h), (line));                                             \
        cr_expect_str_eq(got_, (want), "`%s`", (line));                               \
        free(got_);                                                                   \
    } while (0)

/* Asserts that evaluating `line` reports an error whose text contains each
 * of the given fragments (location, message). */
#define EXPECT_ERROR(h, line, ...)                                                    \
    do {                                                                              \
        char *got_ = h_eval((h), (line));                                             \
        const char *frags_[] = {__VA_ARGS__};                                         \
        cr_expect(strstr(got_, "error[") != NULL, "`%s` gave no error: %s", (line), got_); \
        for (size_t k_ = 0; k_ < sizeof frags_ / sizeof frags_[0]; k_++)              \
            cr_expect(strstr(got_, frags_[k_]) != NULL, "`%s`: `%s` not in:\n%s",     \
                      (line), frags_[k_], got_);                                      \
        free(got_);                                                                   \
    } while (0)

#endif
