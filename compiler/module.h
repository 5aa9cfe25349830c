/* module.h — a compilation unit: the root file and every module it uses.
 *
 * `use a::b::{x, y};` loads module a::b from a/b.bext, searched in the root
 * file's directory, each -I directory in order, then the standard library
 * directory (env BEXT_STDLIB, else the compiled-in BEXT_STDLIB_DIR).  At
 * each place an overlay (below), when set, is asked before the disk.  Loading
 * is transitive; import cycles and missing modules are located errors on the
 * `use`.  The unit owns the arena, the files read (for depfiles) and the
 * diagnostics. */
#ifndef BXC_MODULE_H
#define BXC_MODULE_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "ast.h"
#include "diag.h"
#include "source.h"

typedef struct bxc_module {
    const char *name;        /* "std::shape"; the root's is its file stem */
    const char *path;        /* path the file was read from */
    const char *realpath;    /* canonical path (module identity) */
    uint32_t file_id;
    bxc_file *ast;
    bool is_root;
    bool loading;            /* on the load stack (cycle detection) */
    struct bxc_module **deps;/* modules this one uses, in `use` order */
    uint32_t ndeps;
    void *check;             /* checker's per-module data */
} bxc_module;

typedef enum bxc_load_status {
    BXC_LOAD_OK,             /* everything parsed without errors */
    BXC_LOAD_ERRORS,         /* errors in some file (see diags) */
    BXC_LOAD_UNREADABLE,     /* the root file could not be read */
} bxc_load_status;

#define BXC_MAX_MODULE_DEPTH 64

/* Text a long-lived process holds for a file in place of the disk's (the
 * language server's unsaved documents, workspace.h): the text of the file
 * whose canonical path is `realpath`, or NULL to read the disk. */
typedef const char *(*bxc_overlay_fn)(void *ctx, const char *realpath, size_t *len);

typedef struct bxc_unit {
    bxc_arena arena;
    bxc_sources sources;     /* every file read, in order */
    bxc_diag_list diags;
    bxc_module **modules;    /* modules[0] is the root; then discovery order */
    uint32_t nmodules, capmodules;
    bxc_module **order;      /* dependencies before dependents (root last) */
    uint32_t norder;
    const char **include_dirs;
    uint32_t ninclude_dirs;
    const char **features;   /* --feature names */
    uint32_t nfeatures;
    const char *stdlib_dir;  /* resolved at load time */
    bxc_overlay_fn overlay;  /* consulted before the disk for every `use`d */
    void *overlay_ctx;       /* module (NULL: disk only) */
    void *check;             /* checker's per-unit data */
    void *interp;            /* interpreter's per-unit data */
} bxc_unit;

void bxc_unit_init(bxc_unit *u);
void bxc_unit_free(bxc_unit *u);
/* Copies the strings into the unit's arena. */
void bxc_unit_add_include_dir(bxc_unit *u, const char *dir);
void bxc_unit_add_feature(bxc_unit *u, const char *name);
bool bxc_unit_has_feature(const bxc_unit *u, const char *name);
/* Overrides the stdlib directory (else env BEXT_STDLIB / BEXT_STDLIB_DIR). */
void bxc_unit_set_stdlib_dir(bxc_unit *u, const char *dir);

/* Loads the root file and its imports.  UNREADABLE adds a file-less error
 * naming the path. */
bxc_load_status bxc_unit_load(bxc_unit *u, const char *root_path);
/* Same with the root's text in memory (tests, fuzzing, REPL); `path` names
 * it in diagnostics and its directory is searched for imports. */
bxc_load_status bxc_unit_load_memory(bxc_unit *u, const char *path,
                                     const char *text, size_t len);
/* The module named `name` ("std::shape"), or NULL. */
bxc_module *bxc_unit_find_module(const bxc_unit *u, const char *name);

#endif
