/* module.c — loading a compilation unit: the root file and, transitively,
 * every module named by a `use` (see module.h for the search rules). */
#include "module.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse.h"

#ifndef BEXT_STDLIB_DIR
#define BEXT_STDLIB_DIR ""
#endif

void bxc_unit_init(bxc_unit *u) {
    memset(u, 0, sizeof *u);
    bxc_arena_init(&u->arena);
    bxc_sources_init(&u->sources);
    bxc_diag_list_init(&u->diags, &u->arena);
}

void bxc_unit_free(bxc_unit *u) {
    bxc_sources_free(&u->sources);
    bxc_arena_free_all(&u->arena);
    memset(u, 0, sizeof *u);
}

void bxc_unit_add_include_dir(bxc_unit *u, const char *dir) {
    const char **nd = bxc_arena_alloc(&u->arena, (u->ninclude_dirs + 1) * sizeof *nd);
    if (u->ninclude_dirs) memcpy(nd, u->include_dirs, u->ninclude_dirs * sizeof *nd);
    nd[u->ninclude_dirs++] = bxc_arena_strdup(&u->arena, dir);
    u->include_dirs = nd;
}

void bxc_unit_add_feature(bxc_unit *u, const char *name) {
    if (bxc_unit_has_feature(u, name)) return;
    const char **nf = bxc_arena_alloc(&u->arena, (u->nfeatures + 1) * sizeof *nf);
    if (u->nfeatures) memcpy(nf, u->features, u->nfeatures * sizeof *nf);
    nf[u->nfeatures++] = bxc_arena_strdup(&u->arena, name);
    u->features = nf;
}

bool bxc_unit_has_feature(const bxc_unit *u, const char *name) {
    for (uint32_t i = 0; i < u->nfeatures; i++)
        if (strcmp(u->features[i], name) == 0) return true;
    return false;
}

void bxc_unit_set_stdlib_dir(bxc_unit *u, const char *dir) {
    u->stdlib_dir = dir ? bxc_arena_strdup(&u->arena, dir) : NULL;
}

bxc_module *bxc_unit_find_module(const bxc_unit *u, const char *name) {
    for (uint32_t i = 0; i < u->nmodules; i++)
        if (strcmp(u->modules[i]->name, name) == 0) return u->modules[i];
    return NULL;
}

/* ---- loading -------------------------------------------------------------- */

typedef struct loader {
    bxc_unit *u;
    const char *root_dir;
    bxc_module *stack[BXC_MAX_MODULE_DEPTH + 1];
    uint32_t depth;
} loader;

static void push_module(bxc_unit *u, bxc_module *m) {
    if (u->nmodules == u->capmodules) {
        uint32_t nc = u->capmodules ? u->capmodules * 2 : 8;
        bxc_module **nm = bxc_arena_alloc(&u->arena, nc * sizeof *nm);
        bxc_module **no = bxc_arena_alloc(&u->arena, nc * sizeof *no);
        if (u->nmodules) memcpy(nm, u->modules, u->nmodules * sizeof *nm);
        if (u->norder) memcpy(no, u->order, u->norder * sizeof *no);
        u->modules = nm;
        u->order = no;
        u->capmodules = nc;
    }
    u->modules[u->nmodules++] = m;
}

static const char *dir_of(bxc_arena *a, const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash) return ".";
    if (slash == path) return "/";
    return bxc_arena_strndup(a, path, (size_t)(slash - path));
}

static const char *stem_of(bxc_arena *a, const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    return bxc_arena_strndup(a, base, n);
}

static bool is_regular_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static const char *canonical(bxc_arena *a, const char *path) {
    char *r = realpath(path, NULL);
    if (!r) return bxc_arena_strdup(a, path);
    const char *c = bxc_arena_strdup(a, r);
    free(r);
    return c;
}

static bxc_module *new_module(bxc_unit *u, const char *name, const char *path,
                              uint32_t file_id) {
    bxc_module *m = bxc_arena_alloc(&u->arena, sizeof *m);
    m->name = name;
    m->path = bxc_arena_strdup(&u->arena, path);
    m->realpath = canonical(&u->arena, path);
    m->file_id = file_id;
    push_module(u, m);
    return m;
}

static void add_dep(bxc_unit *u, bxc_module *m, bxc_module *dep) {
    for (uint32_t i = 0; i < m->ndeps; i++)
        if (m->deps[i] == dep) return;
    bxc_module **nd = bxc_arena_alloc(&u->arena, (m->ndeps + 1) * sizeof *nd);
    if (m->ndeps) memcpy(nd, m->deps, m->ndeps * sizeof *nd);
    nd[m->ndeps++] = dep;
    m->deps = nd;
}

/* "a::b" and "a/b.bext" from a use's module path. */
static void module_names(bxc_arena *a, const bxc_path *p, const char **name,
                         const char **rel) {
    size_t n = 0;
    for (uint32_t i = 0; i < p->segs.len; i++) n += strlen(p->segs.items[i].name) + 2;
    char *nm = bxc_arena_alloc(a, n + 1), *rl = bxc_arena_alloc(a, n + 6);
    for (uint32_t i = 0; i < p->segs.len; i++) {
        if (i) {
            strcat(nm, "::");
            strcat(rl, "/");
        }
        strcat(nm, p->segs.items[i].name);
        strcat(rl, p->segs.items[i].name);
    }
    strcat(rl, ".bext");
    *name = nm;
    *rel = rl;
}

static void process(loader *L, bxc_module *m);

static void load_use(loader *L, bxc_module *m, bxc_item *use) {
    bxc_unit *u = L->u;
    bxc_arena *a = &u->arena;
    const bxc_path *mp = use->use_.module_path;
    if (!mp || mp->segs.len == 0) return;
    const char *name, *rel;
    module_names(a, mp, &name, &rel);

    /* Search order: the root file's directory, -I dirs, the stdlib; in
     * each, a file open in an editor (the overlay) before the disk. */
    const char *found = NULL, *otext = NULL;
    size_t olen = 0;
    uint32_t ndirs = u->ninclude_dirs + 2;
    for (uint32_t i = 0; i < ndirs && !found; i++) {
        const char *dir = i == 0 ? L->root_dir
                        : i <= u->ninclude_dirs ? u->include_dirs[i - 1]
                        : u->stdlib_dir;
        if (!dir || !*dir) continue;
        const char *cand = bxc_arena_printf(a, "%s/%s", dir, rel);
        if (u->overlay) otext = u->overlay(u->overlay_ctx, canonical(a, cand), &olen);
        if (otext || is_regular_file(cand)) found = cand;
    }
    if (!found) {
        bxc_diag *d = bxc_diag_error(&u->diags, BXC_E_MODULE_NOT_FOUND, mp->span,
                                     "cannot find module `%s`", name);
        /* The help lists where we looked, so a wrong -I is easy to spot. */
        size_t n = 64;
        n += strlen(L->root_dir) + strlen(u->stdlib_dir ? u->stdlib_dir : "") + 8;
        for (uint32_t i = 0; i < u->ninclude_dirs; i++) n += strlen(u->include_dirs[i]) + 2;
        char *where = bxc_arena_alloc(a, n);
        strcat(where, L->root_dir);
        for (uint32_t i = 0; i < u->ninclude_dirs; i++) {
            strcat(where, ", ");
            strcat(where, u->include_dirs[i]);
        }
        if (u->stdlib_dir && *u->stdlib_dir) {
            strcat(where, ", ");
            strcat(where, u->stdlib_dir);
        }
        bxc_diag_set_help(&u->diags, d, "looked for `%s` in: %s (add a directory with -I)",
                          rel, where);
        return;
    }

    const char *real = canonical(a, found);
    for (uint32_t i = 0; i < u->nmodules; i++) {
        bxc_module *other = u->modules[i];
        if (strcmp(other->realpath, real) != 0) continue;
        if (other->loading) {
            bxc_diag *d = bxc_diag_error(&u->diags, BXC_E_MODULE_CYCLE, mp->span,
                                         "import cycle: module `%s` is already being loaded",
                                         other->name);
            /* Name every link of the cycle, outermost first. */
            for (uint32_t k = 0; k < L->depth; k++) {
                if (L->stack[k] != other) continue;
                for (uint32_t j = k; j < L->depth; j++)
                    bxc_diag_add_note(&u->diags, d, bxc_span_none(), "`%s` uses `%s`",
                                      L->stack[j]->name,
                                      j + 1 < L->depth ? L->stack[j + 1]->name : name);
                break;
            }
        } else {
            add_dep(u, m, other);
            use->use_.module = other;
        }
        return;
    }

    if (L->depth >= BXC_MAX_MODULE_DEPTH) {
        bxc_diag_error(&u->diags, BXC_E_TOO_DEEP, mp->span,
                       "modules nested too deeply (limit %d)", BXC_MAX_MODULE_DEPTH);
        return;
    }
    char err[512];
    bxc_source *src = otext ? bxc_sources_add_memory(&u->sources, found, otext, olen)
                            : bxc_sources_load(&u->sources, found, err, sizeof err);
    if (!src) {
        bxc_diag_error(&u->diags, BXC_E_FILE_UNREADABLE, mp->span, "%s", err);
        return;
    }
    bxc_module *dep = new_module(u, name, found, src->id);
    add_dep(u, m, dep);
    use->use_.module = dep;
    process(L, dep);
}

static void process(loader *L, bxc_module *m) {
    bxc_unit *u = L->u;
    m->loading = true;
    L->stack[L->depth++] = m;
    const bxc_source *src = bxc_sources_get(&u->sources, m->file_id);
    m->ast = bxc_parse_file(&u->arena, &u->diags, src);
    for (uint32_t i = 0; i < m->ast->items.len; i++) {
        bxc_item *it = m->ast->items.items[i];
        if (it->kind == BXC_ITEM_USE) load_use(L, m, it);
    }
    L->depth--;
    m->loading = false;
    u->order[u->norder++] = m;
}

/* An installed bextc finds its stdlib relative to itself
 * (<prefix>/bin/bextc -> <prefix>/share/bext/stdlib), so a prefix can be
 * moved or chosen at `make install` time without rebuilding.  NULL when the
 * executable's path is unknown or no such directory exists (e.g. when run
 * from the build tree, where the compiled-in source path applies). */
static const char *relocated_stdlib(bxc_arena *a) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return NULL;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return NULL;
    *slash = '\0';
    const char *cand = bxc_arena_printf(a, "%s/../share/bext/stdlib", exe);
    struct stat st;
    return stat(cand, &st) == 0 && S_ISDIR(st.st_mode) ? canonical(a, cand) : NULL;
}

static void resolve_stdlib(bxc_unit *u) {
    if (u->stdlib_dir) return;
    const char *env = getenv("BEXT_STDLIB");
    if (env && *env) {
        u->stdlib_dir = bxc_arena_strdup(&u->arena, env);
        return;
    }
    const char *rel = relocated_stdlib(&u->arena);
    u->stdlib_dir = rel ? rel : bxc_arena_strdup(&u->arena, BEXT_STDLIB_DIR);
}

static bxc_load_status load_root(bxc_unit *u, const char *path, bxc_source *src) {
    resolve_stdlib(u);
    loader L;
    memset(&L, 0, sizeof L);
    L.u = u;
    L.root_dir = dir_of(&u->arena, path);
    bxc_module *root = new_module(u, stem_of(&u->arena, path), path, src->id);
    root->is_root = true;
    process(&L, root);
    return bxc_diag_has_errors(&u->diags) ? BXC_LOAD_ERRORS : BXC_LOAD_OK;
}

bxc_load_status bxc_unit_load(bxc_unit *u, const char *root_path) {
    char err[512];
    bxc_source *src = bxc_sources_load(&u->sources, root_path, err, sizeof err);
    if (!src) {
        bxc_diag_error(&u->diags, BXC_E_FILE_UNREADABLE, bxc_span_none(), "%s", err);
        return BXC_LOAD_UNREADABLE;
    }
    return load_root(u, root_path, src);
}

bxc_load_status bxc_unit_load_memory(bxc_unit *u, const char *path,
                                     const char *text, size_t len) {
    bxc_source *src = bxc_sources_add_memory(&u->sources, path, text, len);
    return load_root(u, path, src);
}
