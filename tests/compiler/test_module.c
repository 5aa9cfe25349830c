/* test_module.c — compilation units: transitive `use` loading, search
 * order (root dir, -I dirs, stdlib), located errors for missing modules
 * and cycles, the list of files read. */
#include <criterion/criterion.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fe_util.h"

static char tmpdir[256];

static void mkt(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/bext-mod-XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
}

static void put(const char *rel, const char *text) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, rel);
    /* create parent directories */
    for (char *p = path + strlen(tmpdir) + 1; *p; p++) {
        if (*p == '/') {
            *p = 0;
            mkdir(path, 0700);
            *p = '/';
        }
    }
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static void rmt(void) {
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    cr_assert_eq(system(cmd), 0);
}

static char *path_of(const char *rel) {
    static char buf[512];
    snprintf(buf, sizeof buf, "%s/%s", tmpdir, rel);
    return buf;
}

Test(module, stdlib_import) {
    bxc_unit u;
    bxc_unit_init(&u);
    char stdlib[4096];
    snprintf(stdlib, sizeof stdlib, "%s/stdlib", fe_srcdir());
    bxc_unit_set_stdlib_dir(&u, stdlib);
    const char *src = "use std::shape::{broadcast};\nfn f(a: &Shape) -> Shape { broadcast(a, a) }\n";
    bxc_load_status st = bxc_unit_load_memory(&u, "/nonexistent-dir/x.bext", src, strlen(src));
    char *txt = fe_text(&u.diags, &u.sources);
    cr_assert_eq(st, BXC_LOAD_OK, "%s", txt);
    free(txt);
    cr_assert_eq(u.nmodules, 2);
    bxc_module *m = bxc_unit_find_module(&u, "std::shape");
    cr_assert_not_null(m);
    cr_assert_eq(u.modules[0]->ndeps, 1);
    cr_assert_eq(u.modules[0]->deps[0], m);
    cr_assert_eq(u.modules[0]->ast->items.items[0]->use_.module, m);
    cr_assert_eq(u.order[u.norder - 1], u.modules[0]);   /* root last */
    cr_assert_eq(u.sources.count, 2);                    /* files read */
    bxc_unit_free(&u);
}

Test(module, search_order_transitive_and_shared) {
    mkt();
    put("root.bext", "use a::b::{x};\nuse c::{y};\n");
    put("a/b.bext", "use c::{y};\npub fn x() {}\n");
    put("inc/c.bext", "pub fn y() {}\n");
    put("std2/c.bext", "this would not parse\n");   /* -I wins over stdlib */
    bxc_unit u;
    bxc_unit_init(&u);
    bxc_unit_add_include_dir(&u, path_of("inc"));
    bxc_unit_set_stdlib_dir(&u, path_of("std2"));
    bxc_load_status st = bxc_unit_load(&u, path_of("root.bext"));
    char *txt = fe_text(&u.diags, &u.sources);
    cr_assert_eq(st, BXC_LOAD_OK, "%s", txt);
    free(txt);
    cr_assert_eq(u.nmodules, 3);                 /* c loaded once */
    cr_assert_str_eq(u.modules[0]->name, "root");
    cr_assert(u.modules[0]->is_root);
    cr_assert_not_null(bxc_unit_find_module(&u, "a::b"));
    bxc_module *c = bxc_unit_find_module(&u, "c");
    cr_assert_not_null(c);
    cr_assert_not_null(strstr(c->path, "/inc/c.bext"));
    /* dependencies come before dependents */
    cr_assert_eq(u.order[0], c);
    bxc_unit_free(&u);
    rmt();
}

Test(module, missing_module_is_located) {
    mkt();
    put("root.bext", "fn f() {}\nuse nope::deeper::{x};\n");
    bxc_unit u;
    bxc_unit_init(&u);
    bxc_unit_set_stdlib_dir(&u, path_of("nostd"));
    bxc_load_status st = bxc_unit_load(&u, path_of("root.bext"));
    cr_assert_eq(st, BXC_LOAD_ERRORS);
    cr_assert_eq(u.diags.errors, 1);
    bxc_diag *d = &u.diags.items[0];
    cr_assert_str_eq(d->code, "E0202");
    cr_assert_str_eq(d->message, "cannot find module `nope::deeper`");
    cr_assert_not_null(d->help);
    cr_assert_not_null(strstr(d->help, "nope/deeper.bext"));
    uint32_t line, col;
    bxc_source_position(bxc_sources_get(&u.sources, d->span.file), d->span.offset, &line, &col);
    cr_assert_eq(line, 2);
    cr_assert_eq(col, 5);
    bxc_unit_free(&u);
    rmt();
}

Test(module, cycle_is_an_error) {
    mkt();
    put("root.bext", "use p::{a};\n");
    put("p.bext", "use q::{b};\npub fn a() {}\n");
    put("q.bext", "use p::{a};\npub fn b() {}\n");
    bxc_unit u;
    bxc_unit_init(&u);
    bxc_load_status st = bxc_unit_load(&u, path_of("root.bext"));
    cr_assert_eq(st, BXC_LOAD_ERRORS);
    cr_assert_eq(u.diags.errors, 1, "%s", fe_text(&u.diags, &u.sources));
    cr_assert_str_eq(u.diags.items[0].code, "E0203");
    cr_assert_geq(u.diags.items[0].nnotes, 2);
    /* located in q.bext, on the `use` of p */
    const bxc_source *s = bxc_sources_get(&u.sources, u.diags.items[0].span.file);
    cr_assert_not_null(strstr(s->path, "q.bext"));
    bxc_unit_free(&u);
    rmt();
}

Test(module, root_importing_itself_is_a_cycle) {
    mkt();
    put("self.bext", "use self::{x};\npub fn x() {}\n");
    bxc_unit u;
    bxc_unit_init(&u);
    bxc_load_status st = bxc_unit_load(&u, path_of("self.bext"));
    cr_assert_eq(st, BXC_LOAD_ERRORS);
    cr_assert_str_eq(u.diags.items[0].code, "E0203");
    bxc_unit_free(&u);
    rmt();
}

Test(module, unreadable_root) {
    bxc_unit u;
    bxc_unit_init(&u);
    cr_assert_eq(bxc_unit_load(&u, "/nonexistent/zz.bext"), BXC_LOAD_UNREADABLE);
    cr_assert_eq(u.diags.errors, 1);
    cr_assert_not_null(strstr(u.diags.items[0].message, "/nonexistent/zz.bext"));
    cr_assert_eq(u.diags.items[0].span.file, BXC_NO_FILE);
    bxc_unit_free(&u);
    bxc_unit_init(&u);
    cr_assert_eq(bxc_unit_load(&u, "/tmp"), BXC_LOAD_UNREADABLE);
    cr_assert_not_null(strstr(u.diags.items[0].message, "directory"));
    bxc_unit_free(&u);
}

Test(module, features) {
    bxc_unit u;
    bxc_unit_init(&u);
    bxc_unit_add_feature(&u, "ndarray");
    bxc_unit_add_feature(&u, "ndarray");
    bxc_unit_add_feature(&u, "wgpu");
    cr_assert_eq(u.nfeatures, 2);
    cr_assert(bxc_unit_has_feature(&u, "wgpu"));
    cr_assert(!bxc_unit_has_feature(&u, "cuda"));
    bxc_unit_free(&u);
}
