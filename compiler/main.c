/* main.c — bextc, the command-line driver.
 *
 * The pipeline reads top to bottom in run(): load (lex + parse every
 * module) -> optional dumps -> check -> code emission (-o) -> render
 * diagnostics.  Exit status: 0 no errors, 1 errors in the input, 2 usage
 * errors or an unreadable root file. */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ast.h"
#include "bxk.h"
#include "bxl.h"
#include "check.h"
#include "cube.h"
#include "diag.h"
#include "emit.h"
#include "lex.h"
#include "module.h"
#include "parse.h"

#ifndef BEXT_VERSION
#define BEXT_VERSION "0.1.0"
#endif

typedef struct options {
    const char *input;
    bool check, dump_tokens, dump_ast, json, depfile;
    bool kernels_object;     /* --kernels-object: DIR/<stem>.kernels.o even without kernels */
    const char *out_dir;
    const char *emit;        /* "kir", "ll" or "kir-c": dump a kernel stage (stdout) */
    const char *kernel_cpu;  /* LLVM CPU of kernel code (NULL: BXL_CPU_BASELINE) */
} options;

static void usage(FILE *out) {
    fputs("usage: bextc FILE.bext [options]\n"
          "\n"
          "modes: bare (or --check) checks FILE and prints every diagnostic; -o DIR also\n"
          "writes the C; --dump-tokens / --dump-ast print the parse and do not check\n"
          "\n"
          "  --check                 check (the default when no other mode is given)\n"
          "  -I DIR                  search DIR for `use` modules (repeatable)\n"
          "  --feature NAME          enable a feature for cfg(feature = ...) (repeatable)\n"
          "  --diagnostics=text|json diagnostic format on stderr (default text)\n"
          "  --dump-tokens           print the root file's tokens\n"
          "  --dump-ast              print the root file's syntax tree\n"
          "  -o DIR                  emit C sources into DIR (DIR/<stem>.h, DIR/<stem>.c) and,\n"
          "                          when FILE has `#[cube]` kernels, DIR/<stem>.kernels.o\n"
          "  -MD                     with -o: also write the depfile DIR/<stem>.d\n"
          "  --kernels-object        with -o: write DIR/<stem>.kernels.o even when no module of\n"
          "                          the unit has kernels (then it defines nothing), so build\n"
          "                          systems can list it before bextc has read the imports\n"
          "  --emit=kir              check, then print the kernel IR of every `#[cube]`\n"
          "                          instantiation of FILE (gelu_f32, gelu_f64, ...)\n"
          "  --emit=ll               the same as LLVM IR, after default<O3>\n"
          "  --emit=kir-c            the same as a C file: each instantiation's serialized IR\n"
          "                          in an array, and the table bxk_embed_<stem>[] naming them\n"
          "  --kernel-cpu CPU        LLVM CPU that kernel code targets (default x86-64-v2):\n"
          "                          --emit=ll, and DIR/<stem>.kernels.o that -o writes\n"
          "                          when FILE has kernels\n"
          "  --explain CODE          print what diagnostic CODE (e.g. E0505) means\n"
          "  --help, --version\n"
          "\n"
          "exit status: 0 no errors, 1 errors in the input, 2 usage, unreadable input or unwritable output\n",
          out);
}

static int usage_error(const char *fmt, const char *arg) {
    fputs("bextc: error: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\n(try `bextc --help`)\n", stderr);
    return 2;
}

/* --explain CODE: "E0505 (error): not a backend selector" on stdout, 0; an
 * unknown code is a usage error with a did-you-mean.  Two tables answer:
 * bextc's (diag_codes.h) and the kernel IR's (BXK_ERRORS, bxk.h). */
static int explain(const char *arg) {
    char code[16];
    size_t n = 0;
    for (; arg[n] && n + 1 < sizeof code; n++) code[n] = (char)toupper((unsigned char)arg[n]);
    code[n] = '\0';
    bxc_diag_code c;
    if (!arg[n] && bxc_diag_code_find(code, &c)) {
        printf("%s (%s): %s\n", bxc_diag_code_str(c), bxc_severity_name(bxc_diag_code_severity(c)),
               bxc_diag_code_desc(c));
        return 0;
    }
    /* the kernel IR's codes (K0013), which --emit and -o report too */
    for (unsigned k = 0; !arg[n] && k < BXK_ERR_COUNT; k++)
        if (strcmp(code, bxk_err_code(k)) == 0) {
            printf("%s (error): %s\n", bxk_err_code(k), bxk_err_desc(k));
            return 0;
        }
    fprintf(stderr, "bextc: error: unknown diagnostic code `%s`\n", arg);
    const char *cands[BXC_DIAG_CODE_COUNT + BXK_ERR_COUNT];
    for (unsigned k = 0; k < BXC_DIAG_CODE_COUNT; k++) cands[k] = bxc_diag_code_strs()[k];
    for (unsigned k = 0; k < BXK_ERR_COUNT; k++) cands[BXC_DIAG_CODE_COUNT + k] = bxk_err_code(k);
    const char *near = bxc_diag_nearest(code, cands, BXC_DIAG_CODE_COUNT + BXK_ERR_COUNT);
    if (near) fprintf(stderr, "help: did you mean `%s`?\n", near);
    fputs("(try `bextc --help`)\n", stderr);
    return 2;
}

static void dump_tokens(FILE *out, const bxc_source *src) {
    bxc_arena a;
    bxc_arena_init(&a);
    bxc_diag_list scratch;   /* lexical errors are reported by the parse */
    bxc_diag_list_init(&scratch, &a);
    bxc_lexer lx;
    bxc_lex_init(&lx, src, &scratch);
    for (;;) {
        bxc_token t = bxc_lex_next(&lx);
        uint32_t line, col;
        bxc_source_position(src, t.span.offset, &line, &col);
        fprintf(out, "%u:%u %s", line, col, bxc_token_name(t.kind));
        if (t.kind != BXC_TK_EOF) {
            fputs(" ", out);
            const char *p = bxc_source_text(src, t.span);
            uint32_t n = t.span.length > 60 ? 60 : t.span.length;
            for (uint32_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)p[i];
                if (c == '\n') fputs("\\n", out);
                else if (c < 0x20 || c == 0x7F) fprintf(out, "\\x%02x", c);
                else fputc(c, out);
            }
            if (n < t.span.length) fputs("...", out);
        }
        fputc('\n', out);
        if (t.kind == BXC_TK_EOF) break;
    }
    bxc_arena_free_all(&a);
}

static bool any_diag_with_code(const bxc_diag_list *l, const char *code) {
    for (uint32_t i = 0; i < l->count; i++)
        if (strcmp(l->items[i].code, code) == 0) return true;
    return false;
}

/* --emit=kir|ll: every instantiation of the root module's kernels, in
 * declaration order, each verified (bxc_cube_lower_root); LLVM's own
 * failures (K0013: what the CPU lowering cannot compile yet) become
 * E0810. */
/* LLVM has no C API that says whether it knows a CPU name, and aborts
 * the process on some it does not know (no 64-bit feature).  So a
 * `--kernel-cpu` is tried once on k in a child process first: bad input
 * gets an error, not an abort. */
static bool cpu_usable(const struct bxk_kernel *k, const char *cpu) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return true;   /* cannot probe: let LLVM decide */
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stderr)) _exit(2);
        struct bxk_diags ds = {0};
        char *ll = bxl_emit_ll(k, cpu, true, &ds);
        _exit(ll ? 0 : 1);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0) {}
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* --kernel-cpu, when given, tried on k; false after reporting E0810. */
static bool kernel_cpu_ok(bxc_unit *u, const struct bxk_kernel *k, const options *o) {
    if (!o->kernel_cpu || cpu_usable(k, o->kernel_cpu)) return true;
    bxc_diag *d = bxc_diag_error(&u->diags, CHK_E_CUBE_LOWER, (bxc_span){BXC_NO_FILE, 0, 0},
                                 "LLVM cannot compile for CPU `%s` (--kernel-cpu)", o->kernel_cpu);
    bxc_diag_set_help(&u->diags, d, "%s", "use an LLVM CPU name such as x86-64-v2, x86-64-v3 or haswell");
    return false;
}

/* An LLVM stage's failure as E0810: at the instruction it names, if any. */
static void report_llvm(bxc_unit *u, const struct bxk_diags *ds, const char *what) {
    bxc_span at = {BXC_NO_FILE, 0, 0};
    if (ds->n && ds->d[0].loc.len) at = (bxc_span){ds->d[0].loc.file, ds->d[0].loc.off, ds->d[0].loc.len};
    bxc_diag_error(&u->diags, CHK_E_CUBE_LOWER, at, "%s: %s %s", what,
                   ds->n ? bxk_err_code(ds->d[0].err) : "", ds->n ? ds->d[0].msg : "LLVM failed");
}

static void emit_kernels(bxc_unit *u, const options *o) {
    if (strcmp(o->emit, "kir-c") == 0) {
        bxc_emit_kir_c(u, stdout);
        return;
    }
    struct bxk_kernel **ks;
    uint32_t n;
    if (!bxc_cube_lower_root(u, &ks, &n)) return;
    if (n && strcmp(o->emit, "ll") == 0 && !kernel_cpu_ok(u, ks[0], o)) {
        for (uint32_t i = 0; i < n; i++) bxk_kernel_free(ks[i]);
        free(ks);
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (strcmp(o->emit, "kir") == 0) {
            char *text = bxk_print_alloc(ks[i]);
            if (text) fputs(text, stdout);
            if (text && i + 1 < n) fputc('\n', stdout);
            free(text);
            continue;
        }
        struct bxk_diags ds = {0};
        char *ll = bxl_emit_ll(ks[i], o->kernel_cpu ? o->kernel_cpu : BXL_CPU_BASELINE, true, &ds);
        if (ll) {
            fputs(ll, stdout);
            free(ll);
            continue;
        }
        report_llvm(u, &ds, bxc_arena_printf(&u->arena, "kernel `%s`", ks[i]->name));
    }
    for (uint32_t i = 0; i < n; i++) bxk_kernel_free(ks[i]);
    free(ks);
}

/* -o DIR: every kernel instantiation of the unit (the root module's and
 * its imported modules'), compiled by LLVM for --kernel-cpu (default
 * x86-64-v2), into DIR/<stem>.kernels.o (one symbol per instantiation, the
 * CPU kernel ABI of docs/kernels.md).  No `#[cube]` fn anywhere in the
 * unit and no --kernels-object, no file: projects without kernels are
 * unchanged.  False after reporting an error. */
static bool emit_kernel_object(bxc_unit *u, const options *o) {
    struct bxk_kernel **ks;
    uint32_t n;
    if (!bxc_cube_lower_root(u, &ks, &n)) return false;
    bool ok = true;
    /* A kernel the CPU lowering refuses (today: a sync_cube inside
     * if/for/loop, K0013) stays out of the object with a warning that
     * gives the lowering's reason, so the rest still ship.  Lowering
     * without optimizing is the cheap test: it fails exactly where the
     * object would. */
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct bxk_diags ds;
        memset(&ds, 0, sizeof ds);
        char *ll = bxl_emit_ll(ks[i], NULL, false, &ds);
        if (ll) {
            free(ll);
            ks[m++] = ks[i];
            continue;
        }
        const bxc_cube_set *set = bxc_cube_kernels(u);
        bxc_span at = {BXC_NO_FILE, 0, 0};
        for (uint32_t j = 0; set && j < set->len; j++)
            if (!set->items[j]->is_helper &&
                strncmp(ks[i]->name, bxc_cube_instance_name(&u->arena, set->items[j], 0),
                        strlen(set->items[j]->prefix) + strlen(set->items[j]->name)) == 0)
                at = set->items[j]->fn->name.span;
        const char *why = ds.n ? ds.d[0].msg : "the lowering failed";
        bxc_diag_warning(&u->diags, CHK_W_CUBE_SKIPPED, at,
                         "kernel `%s` is left out of %s.kernels.o: %s", ks[i]->name,
                         bxc_emit_stem(u), why);
        bxk_kernel_free(ks[i]);
    }
    /* A unit with kernels always gets its object, even when every kernel
     * was left out (then it defines none): the generated C refers to its
     * symbols weakly.  --kernels-object writes it for every unit: a build
     * system lists its outputs before bextc has read the imports, and
     * only bextc knows whether a module deep in them has a kernel
     * (bext_add_extension passes it). */
    const bxc_cube_set *all = bxc_cube_kernels(u);
    bool any = (all && all->len > 0) || o->kernels_object;   /* helpers only: defines nothing */
    n = m;
    if (any) {
        const char *path = bxc_arena_printf(&u->arena, "%s/%s.kernels.o", o->out_dir, bxc_emit_stem(u));
        struct bxk_diags ds = {0};
        if (n && !kernel_cpu_ok(u, ks[0], o)) {
            ok = false;
        } else if (!bxl_emit_object((const struct bxk_kernel *const *)ks, n, o->kernel_cpu, path, &ds)) {
            report_llvm(u, &ds, bxc_arena_printf(&u->arena, "cannot write `%s`", path));
            ok = false;
        }
    }
    for (uint32_t i = 0; i < n; i++) bxk_kernel_free(ks[i]);
    free(ks);
    return ok;
}

static int run(bxc_unit *u, const options *o) {
    bxc_load_status st = bxc_unit_load(u, o->input);
    if (st != BXC_LOAD_UNREADABLE && u->nmodules > 0) {
        const bxc_module *root = u->modules[0];
        if (o->dump_tokens) dump_tokens(stdout, bxc_sources_get(&u->sources, root->file_id));
        if (o->dump_ast) bxc_ast_dump(stdout, root->ast);
    }
    /* The checker runs even after syntax errors: the tree holds error
     * placeholders, and more errors per run is the goal. */
    if (st != BXC_LOAD_UNREADABLE && (o->check || o->out_dir))
        bxc_check_unit(u);
    /* Code emission (compiler/emit*.c) runs only on a unit the checker
     * accepted; it adds its own diagnostics (I/O included). */
    bool cannot_write = false;
    if (st != BXC_LOAD_UNREADABLE && o->out_dir && !bxc_diag_has_errors(&u->diags)) {
        bxc_emit_options eo = {.depfile = o->depfile};
        if (!bxc_emit_c(u, o->out_dir, &eo))
            cannot_write = any_diag_with_code(&u->diags, bxc_diag_code_str(BXC_EMIT_E_IO));
        else
            emit_kernel_object(u, o);
    }
    /* --check runs no generator: the checker asks the generator's limits
     * itself (check_limits.c, check_default.c), so what it accepts -o
     * generates (tests/codegen/compile_all.py proves it on every valid
     * file of the test suites and samples). */

    if (st != BXC_LOAD_UNREADABLE && o->emit && !bxc_diag_has_errors(&u->diags))
        emit_kernels(u, o);

    if (o->json) bxc_diag_render_json_file(stderr, &u->diags, &u->sources);
    else bxc_diag_render_text(stderr, &u->diags, &u->sources);

    /* An output directory that cannot be written is the environment's
     * fault, like an unreadable input: 2, not "errors in the input". */
    if (st == BXC_LOAD_UNREADABLE || cannot_write) return 2;
    if (bxc_diag_has_errors(&u->diags)) return 1;
    return 0;
}

int main(int argc, char **argv) {
    options o;
    memset(&o, 0, sizeof o);
    bxc_unit u;
    bxc_unit_init(&u);
    int rc = 0;
    for (int i = 1; i < argc && rc == 0; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            bxc_unit_free(&u);
            return 0;
        } else if (strcmp(a, "--explain") == 0 || strncmp(a, "--explain=", 10) == 0) {
            if (a[9] == '\0' && i + 1 >= argc) {
                rc = usage_error("`%s` needs an argument", a);
                break;
            }
            rc = explain(a[9] == '=' ? a + 10 : argv[++i]);
            bxc_unit_free(&u);
            return rc;
        } else if (strcmp(a, "--version") == 0) {
            printf("bextc %s\n", BEXT_VERSION);
            bxc_unit_free(&u);
            return 0;
        } else if (strcmp(a, "--check") == 0) {
            o.check = true;
        } else if (strcmp(a, "--dump-tokens") == 0) {
            o.dump_tokens = true;
        } else if (strcmp(a, "--emit=kir") == 0 || strcmp(a, "--emit=ll") == 0 ||
                   strcmp(a, "--emit=kir-c") == 0) {
            o.emit = a + 7;
            o.check = true;
        } else if (strncmp(a, "--emit=", 7) == 0) {
            rc = usage_error("unknown stage `%s` (expected kir, ll or kir-c)", a + 7);
        } else if (strcmp(a, "--kernel-cpu") == 0 || strncmp(a, "--kernel-cpu=", 13) == 0) {
            if (a[12] == '\0' && i + 1 >= argc) {
                rc = usage_error("`%s` needs an argument", a);
                break;
            }
            o.kernel_cpu = a[12] == '=' ? a + 13 : argv[++i];
        } else if (strcmp(a, "-MD") == 0) {
            o.depfile = true;
        } else if (strcmp(a, "--kernels-object") == 0) {
            o.kernels_object = true;
        } else if (strcmp(a, "--dump-ast") == 0) {
            o.dump_ast = true;
        } else if (strcmp(a, "--diagnostics=text") == 0) {
            o.json = false;
        } else if (strcmp(a, "--diagnostics=json") == 0) {
            o.json = true;
        } else if (strncmp(a, "--diagnostics=", 14) == 0) {
            rc = usage_error("unknown diagnostics format `%s` (expected text or json)", a + 14);
        } else if (strcmp(a, "-I") == 0 || strcmp(a, "--feature") == 0 || strcmp(a, "-o") == 0) {
            if (i + 1 >= argc) {
                rc = usage_error("`%s` needs an argument", a);
                break;
            }
            const char *v = argv[++i];
            if (a[1] == 'I') bxc_unit_add_include_dir(&u, v);
            else if (a[1] == 'o') o.out_dir = v;
            else bxc_unit_add_feature(&u, v);
        } else if (strncmp(a, "-I", 2) == 0) {
            bxc_unit_add_include_dir(&u, a + 2);
        } else if (strncmp(a, "--feature=", 10) == 0) {
            bxc_unit_add_feature(&u, a + 10);
        } else if (a[0] == '-' && a[1] != '\0') {
            rc = usage_error("unknown option `%s`", a);
        } else if (o.input) {
            rc = usage_error("more than one input file (`%s`)", a);
        } else {
            o.input = a;
        }
    }
    if (rc == 0 && !o.input) rc = usage_error("%s", "no input file");
    /* A bare invocation checks: parsing alone would exit 0 on a file the
     * checker rejects, which reads as "this file is fine". */
    if (!o.check && !o.out_dir && !o.dump_tokens && !o.dump_ast) o.check = true;
    if (rc == 0) rc = run(&u, &o);
    bxc_unit_free(&u);
    return rc;
}
