/* repl.c — bext-repl: evaluate metadata expressions against tensor specs
 * (language.md §7).
 *
 *   bext-repl [-I DIR] [--feature NAME] [FILE...]
 *
 * Loads each FILE as a unit (parsed and checked; errors shown with their
 * locations), then reads lines: `let` bindings and expressions (the value is
 * printed in Rust Debug style), `fn` definitions, and the commands of :help.
 * When stdin is a terminal, lines are edited with libedit (history kept in
 * ~/.bext_history) and the prompt is `bext> `; from a pipe, lines are read plainly and no prompt is
 * printed, so the output holds only values and diagnostics.  Values go to
 * stdout, diagnostics to stderr (stdout is flushed first, so a pipe that
 * merges both keeps their order).  An input with an unclosed `(`, `[` or `{`
 * continues on the next line.  Errors never end the session.
 *
 * Checking: REPL input is type-checked (bxc_check_repl_expr) against the
 * first loaded file's unit before it runs, with the bindings' types derived
 * from their values; `:type` prints the checker's type.  Every further
 * file's names are made visible there (bxc_check_repl_see_unit; a name the
 * first file also declares keeps the first file's meaning), so `:type`,
 * evaluation and `:meta` see the same names, and what runs is what the
 * checker resolved (its records, ast.h bxc_res).  A `use` typed at the
 * prompt loads its module as a file's `use` would (load_prompt_use) and
 * imports into that first unit.
 *
 * Memory: values of one input live in the interpreter's scratch arena and
 * die with the input; bindings are deep copies in the env's own arena,
 * compacted when rebinding leaves it mostly dead.  The syntax tree, checker
 * types and source text of each input stay in the primary unit (about 2 KB
 * per input) until :reload (or the first :load) replaces it: they are what
 * diagnostics and fns typed at the prompt point into.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <editline/readline.h>

#include <bext/bext.h>
#include <bext/ops.h>

#include "check.h"
#include "diag.h"
#include "interp.h"
#include "module.h"
#include "parse.h"
#include "source.h"
#include "types.h"
#include "value.h"

typedef struct repl {
    /* units[0] is the primary unit (the first file, or an empty unit when
     * none is loaded); REPL input lives in its sources and arena. */
    bxc_unit **units;
    uint32_t nunits;
    bool have_files;
    char **paths;             /* every file :load'ed, for :reload */
    uint32_t npaths;
    const char **incdirs;
    uint32_t nincdirs;
    const char **features;
    uint32_t nfeatures;

    bxc_item_list *typed;     /* items typed at the prompt (in units[0]) */
    uint32_t ntyped;
    /* One unit per `use` typed at the prompt that named a module no unit had
     * loaded: the loader ran on that `use` alone.  units[0]'s checker table
     * points into them, so they live exactly as long as units[0]. */
    bxc_unit **use_units;
    uint32_t nuse_units;

    bxi_interp *interp;
    bxc_arena diag_arena;     /* interpreter diagnostics of one line */
    bxc_diag_list diags;
    bxi_env env;
    bxc_sources view;         /* every unit's files, concatenated (no ownership) */
    bool interactive;
    bool echo;              /* --echo: print piped input lines after a prompt */
} repl;

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        fputs("bext-repl: out of memory\n", stderr);
        exit(1);
    }
    return p;
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n);
    if (!p) {
        fputs("bext-repl: out of memory\n", stderr);
        exit(1);
    }
    return p;
}

/* ---- units and the merged source view ------------------------------------- */

static bxc_unit *unit_new(repl *r)
{
    bxc_unit *u = xmalloc(sizeof *u);
    bxc_unit_init(u);
    for (uint32_t i = 0; i < r->nincdirs; i++)
        bxc_unit_add_include_dir(u, r->incdirs[i]);
    for (uint32_t i = 0; i < r->nfeatures; i++)
        bxc_unit_add_feature(u, r->features[i]);
    return u;
}

static void unit_delete(bxc_unit *u)
{
    bxc_unit_free(u);
    free(u);
}

/* Rebuilds the concatenated file list and tells the interpreter where each
 * unit's files start in it (call after any unit gains a file). */
static void rebuild_program(repl *r)
{
    uint32_t total = 0;
    for (uint32_t k = 0; k < r->nunits; k++)
        total += r->units[k]->sources.count;
    for (uint32_t k = 0; k < r->nuse_units; k++)
        total += r->use_units[k]->sources.count;
    if (total > r->view.cap) {
        r->view.files = xrealloc(r->view.files, total * sizeof *r->view.files);
        r->view.cap = total;
    }
    r->view.count = 0;
    bxi_clear_program(r->interp);
    for (uint32_t k = 0; k < r->nunits; k++) {
        bxc_unit *u = r->units[k];
        bxi_add_unit(r->interp, u, r->view.count);
        for (uint32_t i = 0; i < u->sources.count; i++)
            r->view.files[r->view.count++] = u->sources.files[i];
    }
    for (uint32_t k = 0; k < r->nuse_units; k++) {
        bxc_unit *u = r->use_units[k];
        bxi_add_unit(r->interp, u, r->view.count);
        for (uint32_t i = 0; i < u->sources.count; i++)
            r->view.files[r->view.count++] = u->sources.files[i];
    }
    /* Typed items belong to units[0], whose files start at 0. */
    for (uint32_t i = 0; i < r->ntyped; i++)
        bxi_add_items(r->interp, &r->typed[i], 0);
}

static void render_unit_diags(repl *r, bxc_unit *u)
{
    fflush(stdout);
    bxc_diag_render_text(stderr, &u->diags, &u->sources);
    fflush(stderr);
    /* Start a fresh list so a long session never reaches the list's limit. */
    bxc_diag_list_init(&u->diags, &u->arena);
}

static void render_interp_diags(repl *r)
{
    fflush(stdout);
    bxc_diag_render_text(stderr, &r->diags, &r->view);
    fflush(stderr);
    bxc_arena_free_all(&r->diag_arena);
    bxc_diag_list_init(&r->diags, &r->diag_arena);
}

/* Loads one file; returns its unit, or NULL after showing why not
 * (*readable says whether the file could be read at all). */
static bxc_unit *load_unit(repl *r, const char *path, bool *readable)
{
    bxc_unit *u = unit_new(r);
    bxc_load_status st = bxc_unit_load(u, path);
    if (readable)
        *readable = st != BXC_LOAD_UNREADABLE;
    bool ok = st == BXC_LOAD_OK;
    if (ok)
        ok = bxc_check_unit(u);
    render_unit_diags(r, u);
    if (!ok) {
        unit_delete(u);
        return NULL;
    }
    return u;
}

static void drop_typed(repl *r)
{
    free(r->typed);
    r->typed = NULL;
    r->ntyped = 0;
    /* the imports typed at the prompt go with the typed items */
    for (uint32_t k = 0; k < r->nuse_units; k++)
        unit_delete(r->use_units[k]);
    free(r->use_units);
    r->use_units = NULL;
    r->nuse_units = 0;
}

static void ensure_primary(repl *r)
{
    if (r->nunits)
        return;
    bxc_unit *u = unit_new(r);
    bxc_check_unit(u);    /* an empty unit: builtins only */
    render_unit_diags(r, u);
    r->units = xrealloc(r->units, sizeof *r->units);
    r->units[0] = u;
    r->nunits = 1;
}

/* Adds a loaded unit; the first file replaces the empty primary unit. */
static void add_unit(repl *r, bxc_unit *u)
{
    if (!r->have_files && r->nunits == 1) {
        unit_delete(r->units[0]);
        drop_typed(r);
        r->nunits = 0;
    }
    r->units = xrealloc(r->units, (r->nunits + 1) * sizeof *r->units);
    r->units[r->nunits++] = u;
    r->have_files = true;
    /* typed input is checked against units[0]: it sees every file's names,
     * as the interpreter (`:meta`) does, the first file's first */
    if (r->nunits > 1)
        bxc_check_repl_see_unit(r->units[0], u);
}

static void cmd_load(repl *r, const char *path)
{
    bool readable;
    bxc_unit *u = load_unit(r, path, &readable);
    /* Remember the path even when it has errors, so :reload retries it
     * after a fix; a file that cannot be read is not remembered. */
    bool known = false;
    for (uint32_t i = 0; i < r->npaths; i++)
        known |= strcmp(r->paths[i], path) == 0;
    if (!known && readable) {
        r->paths = xrealloc(r->paths, (r->npaths + 1) * sizeof *r->paths);
        r->paths[r->npaths++] = strdup(path);
    }
    if (u)
        add_unit(r, u);
    ensure_primary(r);
    rebuild_program(r);
}

static void free_units(repl *r)
{
    for (uint32_t k = 0; k < r->nunits; k++)
        unit_delete(r->units[k]);
    r->nunits = 0;
    r->have_files = false;
    drop_typed(r);
}

/* Re-reads every file; bindings survive (they are values, not syntax), fns
 * typed at the prompt do not (their syntax lived in the old unit). */
static void cmd_reload(repl *r)
{
    free_units(r);
    for (uint32_t i = 0; i < r->npaths; i++) {
        bxc_unit *u = load_unit(r, r->paths[i], NULL);
        if (u)
            add_unit(r, u);
    }
    ensure_primary(r);
    rebuild_program(r);
}

/* ---- the checker's view of the bindings ------------------------------------ */

/* The checker type of a bound value, so REPL input that uses a binding is
 * checked like any other expression. */
static bxc_type *value_type(bxc_unit *u, const BxvValue *v)
{
    bxc_type *t;
    switch (v->kind) {
    case BXV_UNIT:   t = bxc_type_unit(); break;
    case BXV_INT:    t = v->u.i.ty == BXV_ILIT ? bxc_type_int(BXC_I64) : bxc_type_int((bxc_int_kind)v->u.i.ty); break;
    case BXV_FLOAT:  t = bxc_type_float(v->u.f.ty == BXV_F32 ? BXC_F32 : BXC_F64); break;
    case BXV_BOOL:   t = bxc_type_bool(); break;
    case BXV_STR:    t = bxc_type_str(); break;
    case BXV_SHAPE:  t = bxc_type_shape(); break;
    case BXV_DTYPEV: t = bxc_type_dtype(); break;
    case BXV_SPEC:   t = bxc_type_spec(); break;
    case BXV_TUPLE: {
        bxc_type **el = bxc_arena_alloc(&u->arena, (v->u.tuple.n ? v->u.tuple.n : 1) * sizeof *el);
        for (size_t i = 0; i < v->u.tuple.n; i++)
            el[i] = value_type(u, &v->u.tuple.items[i]);
        t = bxc_type_tuple(&u->arena, el, (uint32_t)v->u.tuple.n);
        break;
    }
    case BXV_STRUCT:
    case BXV_ENUM:
        t = bxc_check_lookup_type(u, v->u.agg.type);
        if (!t)
            t = bxc_type_error();
        break;
    case BXV_FN:
        t = bxc_check_lookup_fn(u, v->u.fn.name);
        if (!t)
            t = bxc_type_error();
        break;
    default:
        t = bxc_type_error();
        break;
    }
    for (unsigned i = 0; i < v->refs; i++)
        t = bxc_type_ref(&u->arena, t, false);
    return t;
}

static bxc_scope *binding_scope(repl *r)
{
    bxc_unit *u = r->units[0];
    bxc_scope *s = bxc_scope_new(&u->arena, NULL);
    for (uint32_t i = 0; i < r->env.len; i++)
        bxc_scope_bind(&u->arena, s, r->env.items[i].name, value_type(u, &r->env.items[i].value),
                       r->env.items[i].is_mut);
    return s;
}

/* ---- one input -------------------------------------------------------------- */

/* Parses `text` as REPL input in the primary unit.  The command word (if
 * any) was blanked to spaces so columns match what was typed. */
static bxc_file *parse_input(repl *r, const char *text)
{
    bxc_unit *u = r->units[0];
    bxc_source *src = bxc_sources_add_memory(&u->sources, "<repl>", text, strlen(text));
    bxc_file *f = bxc_parse(&u->arena, &u->diags, src, BXC_PARSE_REPL);
    rebuild_program(r);
    if (bxc_diag_has_errors(&u->diags)) {
        render_unit_diags(r, u);
        return NULL;
    }
    render_unit_diags(r, u);   /* warnings */
    return f;
}

static bxc_expr *block_expr(bxc_unit *u, bxc_block *b)
{
    bxc_expr *e = bxc_ast_expr(&u->arena, BXC_EXPR_BLOCK, b->span);
    e->block = b;
    return e;
}

static void print_value(const BxvValue *v)
{
    BxvBuf b = {0};
    bxv_print(&b, v);
    printf("%s\n", b.data ? b.data : "");
    fflush(stdout);
    bxv_buf_free(&b);
}

/* The module a loaded unit (or a prompt `use`) already holds, or NULL. */
static bxc_module *loaded_module(repl *r, const char *name)
{
    for (uint32_t k = 0; k < r->nunits; k++) {
        bxc_module *m = bxc_unit_find_module(r->units[k], name);
        if (m)
            return m;
    }
    for (uint32_t k = 0; k < r->nuse_units; k++) {
        bxc_module *m = bxc_unit_find_module(r->use_units[k], name);
        if (m)
            return m;
    }
    return NULL;
}

/* A `use` typed at the prompt: the module loader only runs on files, so
 * load the named module here (searched like a file's `use`: the current
 * directory, -I dirs, the standard library) as a unit of its own holding
 * just this `use`, and point the item at it for the checker's import.
 * The unit's text is the input with everything but the `use` blanked, so
 * its diagnostics carry the typed line's lines and columns.  Returns false
 * after showing the loader's or checker's errors. */
static bool load_prompt_use(repl *r, bxc_item *it)
{
    const bxc_path *mp = it->use_.module_path;
    if (it->use_.module || !mp || !mp->segs.len)
        return true;
    bxc_unit *u0 = r->units[0];
    size_t nlen = 0;
    for (uint32_t i = 0; i < mp->segs.len; i++)
        nlen += strlen(mp->segs.items[i].name) + 2;
    char *name = xmalloc(nlen + 1);
    name[0] = '\0';
    for (uint32_t i = 0; i < mp->segs.len; i++) {
        if (i)
            strcat(name, "::");
        strcat(name, mp->segs.items[i].name);
    }
    bxc_module *m = loaded_module(r, name);
    free(name);
    if (m) {
        it->use_.module = m;
        return true;
    }
    const bxc_source *src = bxc_sources_get(&u0->sources, it->span.file);
    if (!src || it->span.offset + it->span.length > src->length)
        return true;   /* no text to load from: the checker reports the `use` */
    char *text = xmalloc((size_t)src->length + 1);
    for (uint32_t i = 0; i < src->length; i++) {
        bool inside = i >= it->span.offset && i < it->span.offset + it->span.length;
        text[i] = inside || src->text[i] == '\n' ? src->text[i] : ' ';
    }
    text[src->length] = '\0';
    bxc_unit *u = unit_new(r);
    bool ok = bxc_unit_load_memory(u, src->path, text, src->length) == BXC_LOAD_OK;
    free(text);
    if (ok)
        ok = bxc_check_unit(u);
    render_unit_diags(r, u);
    bxc_module *root = u->nmodules ? u->modules[0] : NULL;
    bxc_item *own = NULL;
    if (ok && root && root->ast)
        for (uint32_t i = 0; i < root->ast->items.len && !own; i++)
            if (root->ast->items.items[i]->kind == BXC_ITEM_USE)
                own = root->ast->items.items[i];
    if (!own || !own->use_.module) {
        unit_delete(u);
        return false;
    }
    it->use_.module = own->use_.module;
    r->use_units = xrealloc(r->use_units, (r->nuse_units + 1) * sizeof *r->use_units);
    r->use_units[r->nuse_units++] = u;
    rebuild_program(r);
    return true;
}

/* Items typed at the prompt.  The parser lists them in the file's items
 * and also leaves an item statement in the REPL block (dropped from what is
 * checked and run, see without_items). */
static void register_items(repl *r, bxc_file *f)
{
    bxc_unit *u = r->units[0];
    if (!f->items.len)
        return;
    bool ok = true;
    for (uint32_t i = 0; i < f->items.len; i++) {
        bxc_item *it = f->items.items[i];
        if (it->kind == BXC_ITEM_USE && !load_prompt_use(r, it)) {
            ok = false;
            continue;
        }
        ok &= bxc_check_repl_item(u, it);
    }
    render_unit_diags(r, u);
    if (!ok)
        return;
    r->typed = xrealloc(r->typed, (r->ntyped + 1) * sizeof *r->typed);
    r->typed[r->ntyped++] = f->items;
    rebuild_program(r);
}

/* The REPL block without its item statements (registered separately). */
static bxc_block *without_items(bxc_unit *u, bxc_block *b)
{
    bxc_block *nb = bxc_arena_alloc(&u->arena, sizeof *nb);
    *nb = *b;
    nb->stmts.items = NULL;
    nb->stmts.len = nb->stmts.cap = 0;
    for (uint32_t i = 0; i < b->stmts.len; i++)
        if (b->stmts.items[i]->kind != BXC_STMT_ITEM)
            BXC_LIST_PUSH(&u->arena, &nb->stmts, b->stmts.items[i]);
    return nb;
}

static void eval_input(repl *r, const char *text)
{
    bxc_file *f = parse_input(r, text);
    if (!f)
        return;
    register_items(r, f);
    bxc_unit *u = r->units[0];
    bxc_block *blk = f->repl ? without_items(u, f->repl) : NULL;
    if (!blk || (!blk->stmts.len && !blk->tail))
        return;
    bxc_type *t = bxc_check_repl_expr(u, binding_scope(r), block_expr(u, blk));
    bool failed = !t || bxc_diag_has_errors(&u->diags);
    render_unit_diags(r, u);
    if (failed)
        return;
    BxvValue v;
    bool has_value;
    if (bxi_eval_repl(r->interp, blk, 0, &r->env, &v, &has_value)) {
        if (has_value && v.kind != BXV_UNIT)
            print_value(&v);
    }
    render_interp_diags(r);
}

/* The single expression of `:type E` / `:meta E`, or NULL (reported). */
static bxc_expr *single_expr(repl *r, bxc_file *f, const char *cmd)
{
    if (f->repl && f->repl->tail && !f->repl->stmts.len && !f->items.len)
        return f->repl->tail;
    fflush(stdout);
    fprintf(stderr, "error: `%s` takes one expression (see :help)\n", cmd);
    return NULL;
}

static void cmd_type(repl *r, const char *text)
{
    bxc_file *f = parse_input(r, text);
    bxc_expr *e = f ? single_expr(r, f, ":type") : NULL;
    if (!e)
        return;
    bxc_unit *u = r->units[0];
    bxc_type *t = bxc_check_repl_expr(u, binding_scope(r), e);
    bool failed = !t || bxc_diag_has_errors(&u->diags);
    render_unit_diags(r, u);
    if (!failed) {
        printf("%s\n", bxc_type_name(&u->arena, t));
        fflush(stdout);
    }
}

/* `:meta` on a #[fusion(default)] method runs its body over specs, each
 * op through the runtime's own inference rule (libbext's public
 * bext_infer), so shapes and error texts match what the op would do. */
static bool runtime_infer(const char *op, const bext_spec *in, int n_in, bext_op_args *args, bext_spec *out,
                          const char **error)
{
    if (bext_infer(op, in, n_in, args, out))
        return true;
    *error = bext_last_error();
    return false;
}

static void cmd_meta(repl *r, const char *text)
{
    bxc_file *f = parse_input(r, text);
    bxc_expr *e = f ? single_expr(r, f, ":meta") : NULL;
    if (!e)
        return;
    BxvValue v;
    const char *msg = NULL;
    bxi_meta_status st = bxi_meta_call(r->interp, e, 0, &r->env, &v, &msg);
    if (st == BXI_META_VALUE)
        print_value(&v);
    else if (st == BXI_META_DEFAULT) {
        printf("%s\n", msg);
        fflush(stdout);
    }
    render_interp_diags(r);
}

/* `:scalars Trait::method(args...)`: one line per scalar the method exposes
 * to fusion optimizers, in declaration order: `name = value (kind)`. */
static void cmd_scalars(repl *r, const char *text)
{
    bxc_file *f = parse_input(r, text);
    bxc_expr *e = f ? single_expr(r, f, ":scalars") : NULL;
    if (!e)
        return;
    bxi_scalar *sc;
    uint32_t n;
    if (bxi_scalars_call(r->interp, e, 0, &r->env, &sc, &n)) {
        if (!n)
            puts("(no scalars)");
        for (uint32_t i = 0; i < n; i++) {
            BxvBuf b = {0};
            bxv_print(&b, &sc[i].value);
            printf("%s = %s (%s)\n", sc[i].name, b.data ? b.data : "", bxc_scalar_kind_name(sc[i].kind));
            bxv_buf_free(&b);
        }
        fflush(stdout);
    }
    render_interp_diags(r);
}

/* `:ast INPUT`: the syntax tree, as `bextc --dump-ast` prints it. */
static void cmd_ast(repl *r, const char *text)
{
    bxc_file *f = parse_input(r, text);
    if (!f)
        return;
    bxc_ast_dump(stdout, f);
    fflush(stdout);
}

static void cmd_help(void)
{
    puts("bext-repl: evaluate metadata expressions (language.md §7)\n"
         "  let x = TensorSpec::new([2, 3], DType::F32)   bind a value\n"
         "  EXPR                                        evaluate and print\n"
         "  fn name(...) -> T { ... }                   define a helper fn\n"
         "  :meta Trait::method(args...)                output metadata of #[fusion(...)]\n"
         "  :scalars Trait::method(args...)             its fusion scalars (inferred/marked/custom)\n"
         "  :type EXPR                                  the type of EXPR\n"
         "  :ast INPUT                                  the syntax tree (as bextc --dump-ast)\n"
         "  :load FILE                                  load a .bext file\n"
         "  :reload                                     re-read every loaded file\n"
         "  :help                                       this text\n"
         "  :quit                                       leave (also end of input)\n"
         "Tensor arguments of :meta are TensorSpecs; panic(\"msg\") raises an error.");
    fflush(stdout);
}

/* Returns false when the session should end. */
static bool handle(repl *r, char *line)
{
    char *s = line;
    while (isspace((unsigned char)*s))
        s++;
    if (!*s)
        return true;
    if (*s != ':') {
        eval_input(r, line);
        return true;
    }
    size_t wl = 1;
    while (s[wl] && !isspace((unsigned char)s[wl]))
        wl++;
    char word[32];
    snprintf(word, sizeof word, "%.*s", (int)(wl < 31 ? wl : 31), s);
    char *rest = s + wl;
    while (isspace((unsigned char)*rest))
        rest++;
    if (!strcmp(word, ":quit") || !strcmp(word, ":q") || !strcmp(word, ":exit"))
        return false;
    if (!strcmp(word, ":help") || !strcmp(word, ":h") || !strcmp(word, ":?")) {
        cmd_help();
        return true;
    }
    if (!strcmp(word, ":reload") || !strcmp(word, ":r")) {
        cmd_reload(r);
        return true;
    }
    if (!strcmp(word, ":load") || !strcmp(word, ":l")) {
        size_t n = strlen(rest);
        while (n && isspace((unsigned char)rest[n - 1]))
            rest[--n] = 0;
        if (!n) {
            fflush(stdout);
            fputs("error: `:load` needs a file name\n", stderr);
            return true;
        }
        cmd_load(r, rest);
        return true;
    }
    if (!strcmp(word, ":type") || !strcmp(word, ":t") || !strcmp(word, ":meta") || !strcmp(word, ":m") ||
        !strcmp(word, ":ast") || !strcmp(word, ":scalars") || !strcmp(word, ":s")) {
        /* Blank the command word so the expression keeps its columns. */
        memset(s, ' ', wl);
        if (word[1] == 't')
            cmd_type(r, line);
        else if (word[1] == 'a')
            cmd_ast(r, line);
        else if (word[1] == 's')
            cmd_scalars(r, line);
        else
            cmd_meta(r, line);
        return true;
    }
    fflush(stdout);
    fprintf(stderr, "error: unknown command `%s` (type :help)\n", word);
    return true;
}

/* ---- reading input ------------------------------------------------------------ */

/* Bracket depth of `text`, skipping strings and comments; > 0 asks for
 * another line. */
static int open_depth(const char *t)
{
    int depth = 0;
    bool block_comment = false;
    for (const char *p = t; *p; p++) {
        if (block_comment) {
            if (p[0] == '*' && p[1] == '/') {
                block_comment = false;
                p++;
            }
            continue;
        }
        if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n')
                p++;
            if (!*p)
                break;
            continue;
        }
        if (p[0] == '/' && p[1] == '*') {
            block_comment = true;
            p++;
            continue;
        }
        if (*p == '"') {
            for (p++; *p && *p != '"'; p++)
                if (*p == '\\' && p[1])
                    p++;
            if (!*p)
                return depth + 1;   /* unterminated string: keep reading */
            continue;
        }
        if (*p == '(' || *p == '[' || *p == '{')
            depth++;
        else if (*p == ')' || *p == ']' || *p == '}')
            depth--;
    }
    return depth + (block_comment ? 1 : 0);
}

/* One physical line (malloc'd, without newline), or NULL at end of input. */
static char *read_line(repl *r, bool continuation)
{
    if (r->interactive) {
        char *l = readline(continuation ? "....> " : "bext> ");
        if (l && *l)
            add_history(l);
        return l;
    }
    char *buf = NULL;
    size_t cap = 0;
    ssize_t n = getline(&buf, &cap, stdin);
    if (n < 0) {
        free(buf);
        return NULL;
    }
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        buf[--n] = 0;
    /* --echo: a transcript of a piped session reads like a terminal one. */
    if (r->echo) {
        printf("%s%s\n", continuation ? "....> " : "bext> ", buf);
        fflush(stdout);
    }
    return buf;
}

/* A whole input: lines joined while brackets are open. */
static char *read_input(repl *r)
{
    char *text = read_line(r, false);
    if (!text)
        return NULL;
    /* Commands other than :type/:meta are one line. */
    while (open_depth(text) > 0) {
        char *more = read_line(r, true);
        if (!more)
            break;   /* end of input: the parser reports what is missing */
        size_t a = strlen(text), b = strlen(more);
        text = xrealloc(text, a + b + 2);
        text[a] = '\n';
        memcpy(text + a + 1, more, b + 1);
        free(more);
    }
    return text;
}

static void usage(FILE *out)
{
    fputs("usage: bext-repl [-I DIR] [--feature NAME] [--echo] [FILE...]\n"
          "Evaluates bext metadata expressions; type :help once it runs.\n"
          "--echo  when input is not a terminal, print each line read after a prompt\n",
          out);
}

int main(int argc, char **argv)
{
    repl r;
    memset(&r, 0, sizeof r);
    r.interactive = isatty(0);
    bxc_arena_init(&r.diag_arena);
    bxc_diag_list_init(&r.diags, &r.diag_arena);
    r.interp = bxi_new(&r.diags);
    bxi_set_infer(r.interp, runtime_infer);
    bxi_env_init(&r.env);

    char **files = xmalloc((size_t)(argc > 1 ? argc : 1) * sizeof *files);
    int nfiles = 0;
    r.incdirs = xmalloc((size_t)(argc > 1 ? argc : 1) * sizeof *r.incdirs);
    r.features = xmalloc((size_t)(argc > 1 ? argc : 1) * sizeof *r.features);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "-I") && i + 1 < argc) {
            r.incdirs[r.nincdirs++] = argv[++i];
        } else if (!strncmp(argv[i], "-I", 2) && argv[i][2]) {
            r.incdirs[r.nincdirs++] = argv[i] + 2;
        } else if (!strcmp(argv[i], "--feature") && i + 1 < argc) {
            r.features[r.nfeatures++] = argv[++i];
        } else if (!strcmp(argv[i], "--echo")) {
            r.echo = true;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "bext-repl: unknown option `%s`\n", argv[i]);
            usage(stderr);
            return 2;
        } else {
            files[nfiles++] = argv[i];
        }
    }
    ensure_primary(&r);
    for (int i = 0; i < nfiles; i++)
        cmd_load(&r, files[i]);
    rebuild_program(&r);
    free(files);

    /* History survives sessions in ~/.bext_history (terminal only). */
    char histfile[4096] = "";
    if (r.interactive) {
        using_history();
        const char *home = getenv("HOME");
        if (home && *home && (size_t)snprintf(histfile, sizeof histfile, "%s/.bext_history", home) < sizeof histfile)
            read_history(histfile);
        else
            histfile[0] = 0;
    }
    char *text;
    while ((text = read_input(&r)) != NULL) {
        bool go_on = handle(&r, text);
        free(text);
        if (!go_on)
            break;
    }

    if (r.interactive && histfile[0]) {
        stifle_history(1000);
        write_history(histfile);
    }
    free_units(&r);
    for (uint32_t i = 0; i < r.npaths; i++)
        free(r.paths[i]);
    free(r.paths);
    free(r.units);
    free(r.view.files);
    free(r.incdirs);
    free(r.features);
    bxi_env_free(&r.env);
    bxi_free(r.interp);
    bxc_arena_free_all(&r.diag_arena);
    return 0;
}
