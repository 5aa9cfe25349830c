/* emit.c — the C code generator's driver (docs/codegen.md).
 *
 * bxc_emit_c() reads top to bottom: register the root module's types ->
 * helper fns (metadata functions) -> every backend-extension trait
 * (dispatch, default bodies, per-method metadata) -> type definitions ->
 * assemble header and source in memory -> write both (and the depfile)
 * through temporary files renamed into place, only if nothing failed.
 * Also here: output buffers, the C spellings of names and types, and cfg
 * conditions as preprocessor expressions. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "diag.h"
#include "emit_int.h"

/* ---- buffers --------------------------------------------------------------- */

static void buf_reserve(bxc_emit_buf *b, size_t extra) {
    if (b->len + extra + 1 <= b->cap) return;
    size_t nc = b->cap ? b->cap : 1024;
    while (nc < b->len + extra + 1) nc *= 2;
    char *nd = realloc(b->data, nc);
    if (!nd) {
        fputs("bextc: out of memory\n", stderr);
        abort();
    }
    b->data = nd;
    b->cap = nc;
}

void bxc_emit_printf(bxc_emit_buf *b, const char *fmt, ...) {
    /* One formatting pass into the free space when the text fits (nearly
     * always: the buffer doubles); a second only after growing it. */
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    buf_reserve(b, 0);
    size_t room = b->cap - b->len;
    int n = vsnprintf(b->data + b->len, room, fmt, ap);
    va_end(ap);
    if (n > 0 && (size_t)n >= room) {
        buf_reserve(b, (size_t)n);
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
    }
    if (n > 0) b->len += (size_t)n;
    b->data[b->len] = '\0';
    va_end(ap2);
}

void bxc_emit_puts(bxc_emit_buf *b, const char *s) {
    size_t n = strlen(s);
    buf_reserve(b, n);
    memcpy(b->data + b->len, s, n + 1);
    b->len += n;
}

void bxc_emit_doc(bxc_emit_buf *b, const char *doc) {
    if (!doc || !*doc) return;
    bxc_emit_puts(b, "/**");
    bool one = !strchr(doc, '\n');
    bxc_emit_puts(b, one ? " " : "\n * ");
    for (const char *c = doc; *c; c++) {
        if (*c == '\n') {
            bxc_emit_puts(b, "\n *");
            if (c[1] && c[1] != '\n') bxc_emit_puts(b, " ");
        } else if ((c[0] == '*' && c[1] == '/') || (c[0] == '/' && c[1] == '*')) {
            char ch[4] = {c[0], '\\', 0};   /* `*\/` and `/\*`: the comment goes on */
            bxc_emit_puts(b, ch);
        } else {
            char ch[2] = {*c, 0};
            bxc_emit_puts(b, ch);
        }
    }
    bxc_emit_puts(b, one ? " */\n" : "\n */\n");
}

void bxc_emit_append(bxc_emit_buf *b, const bxc_emit_buf *other) {
    if (!other->len) return;
    buf_reserve(b, other->len);
    memcpy(b->data + b->len, other->data, other->len);
    b->len += other->len;
    b->data[b->len] = 0;
}

void bxc_emit_buf_free(bxc_emit_buf *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void bxc_emit_error(bxc_emit_ctx *cx, bxc_span span, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    bxc_diag_vadd(&cx->u->diags, BXC_SEV_ERROR, bxc_diag_code_str(BXC_EMIT_E_UNSUPPORTED), span, fmt, ap);
    va_end(ap);
    cx->ok = false;
}

void bxc_emit_internal_error(bxc_emit_ctx *cx, bxc_span span, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    const char *what = bxc_arena_vprintf(cx->a, fmt, ap);
    va_end(ap);
    bxc_diag *d = bxc_diag_add(&cx->u->diags, BXC_SEV_ERROR, bxc_diag_code_str(BXC_EMIT_E_INTERNAL), span,
                               "internal error: the C generator met %s, which the checker rejects", what);
    bxc_diag_set_help(&cx->u->diags, d, "%s", "this is a bug of bextc: please report it with the file");
    cx->ok = false;
}

/* ---- names ------------------------------------------------------------------ */

static bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
static bool is_lower_or_digit(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
static bool is_ident_char(char c) { return is_upper(c) || is_lower_or_digit(c) || c == '_'; }

/* CamelCase -> snake_case: a `_` before an upper-case letter that follows a
 * lower-case letter or digit, or that starts a word after an acronym
 * (`NdArray` -> `nd_array`, `HTTPServer` -> `http_server`). */
const char *bxc_emit_snake(bxc_arena *a, const char *s) {
    size_t n = strlen(s);
    char *out = bxc_arena_alloc(a, 2 * n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (is_upper(c)) {
            bool after_word = i > 0 && is_lower_or_digit(s[i - 1]);
            bool acronym_end = i > 0 && is_upper(s[i - 1]) && i + 1 < n && s[i + 1] >= 'a' && s[i + 1] <= 'z';
            if ((after_word || acronym_end) && k > 0 && out[k - 1] != '_') out[k++] = '_';
            out[k++] = (char)(c - 'A' + 'a');
        } else {
            out[k++] = is_ident_char(c) ? c : '_';
        }
    }
    out[k] = 0;
    return out;
}

const char *bxc_emit_upper(bxc_arena *a, const char *s) {
    const char *sn = bxc_emit_snake(a, s);
    char *out = bxc_arena_strdup(a, sn);
    for (char *p = out; *p; p++)
        if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 'a' + 'A');
    return out;
}

static const char *const c_keywords[] = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
    "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
    "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
    "volatile", "while", "bool", "true", "false", "errno", "bext_out", "err", "assert", "NULL",
};

const char *bxc_emit_ident(bxc_arena *a, const char *name) {
    /* the first letter first: most names are no keyword (a unit's name
     * plan forms thousands, emit.h bxc_emit_check_names) */
    for (size_t i = 0; i < sizeof c_keywords / sizeof *c_keywords; i++)
        if (c_keywords[i][0] == name[0] && strcmp(c_keywords[i], name) == 0) return bxc_arena_printf(a, "%s_", name);
    /* every name the generator invents starts with `bext_`: user names
     * never do, so they cannot collide with temporaries and labels */
    if (strncmp(name, "bext_", 5) == 0 || strncmp(name, "_", 1) == 0)
        return bxc_arena_printf(a, "u_%s", name);
    return name;
}

const char *bxc_emit_cstring(bxc_arena *a, const char *s) {
    size_t n = strlen(s);
    char *out = bxc_arena_alloc(a, 4 * n + 3);
    size_t k = 0;
    out[k++] = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            out[k++] = '\\';
            out[k++] = (char)c;
        } else if (c == '\n') {
            out[k++] = '\\';
            out[k++] = 'n';
        } else if (c < 0x20 || c >= 0x7F || c == '?') {
            /* octal escapes: also keeps `??` trigraph-like pairs and
             * non-ASCII bytes literal-safe */
            k += (size_t)snprintf(out + k, 5, "\\%03o", c);
        } else {
            out[k++] = (char)c;
        }
    }
    out[k++] = '"';
    out[k] = 0;
    return out;
}

const char *bxc_emit_comment_text(bxc_arena *a, const char *s) {
    size_t n = strlen(s);
    char *out = bxc_arena_alloc(a, 2 * n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        out[k++] = (ch == '\n' || ch == '\r') ? ' ' : ch;
        /* `*` `/` would end the comment, `/` `*` trips -Wcomment, `??`
         * could start a trigraph: a space between the two breaks each */
        char nx = s[i + 1];
        if ((ch == '*' && nx == '/') || (ch == '/' && nx == '*') || (ch == '?' && nx == '?')) out[k++] = ' ';
    }
    out[k] = 0;
    return out;
}

const char *bxc_emit_int_kind(bxc_int_kind k) {
    return k < BXC_INT_KIND_COUNT ? bxc_int_kinds[k].gen : "BEXT_GEN_I64";
}

const char *bxc_emit_ctype_of(bxc_emit_ctx *cx, bxc_type *t) {
    t = bxc_type_strip_refs(bxc_type_resolve(t));
    switch (t->kind) {
    case BXC_TYPE_UNIT: return "void";
    case BXC_TYPE_BOOL: return "bool";
    case BXC_TYPE_INT: return bxc_int_kinds[t->int_kind].ctype;
    case BXC_TYPE_FLOAT: return t->float_kind == BXC_F32 ? "float" : "double";
    case BXC_TYPE_SHAPE: return "bext_meta_shape";
    case BXC_TYPE_DTYPE: return "bext_dtype";
    case BXC_TYPE_SPEC: return "bext_meta_spec";
    case BXC_TYPE_TENSOR: return "bext_tensor *";
    case BXC_TYPE_STR: return "const char *";
    case BXC_TYPE_STRUCT:
    case BXC_TYPE_ENUM:
    case BXC_TYPE_TUPLE: {
        bxc_emit_ctype *ct = bxc_emit_register_type(cx, t);
        return ct ? ct->name : "void";
    }
    default: return NULL;
    }
}

/* ---- cfg conditions ------------------------------------------------------------ */

static const char *feature_macro(bxc_arena *a, const char *feature) {
    char *m = bxc_arena_printf(a, "BEXT_FEATURE_%s", feature);
    for (char *p = m + 13; *p; p++) {
        if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 'a' + 'A');
        else if (!is_ident_char(*p)) *p = '_';
    }
    return m;
}

static const char *feature_name(const bxc_attr_arg *arg) {
    if (arg->kind != BXC_ATTR_ARG_ASSIGN || !bxc_path_is(arg->path, "feature") || !arg->value ||
        arg->value->kind != BXC_EXPR_STRING)
        return NULL;
    return arg->value->string_lit.value;
}

/* Records a feature macro for the feature check (once per macro). */
static void note_feature(bxc_emit_ctx *cx, const char *macro) {
    for (uint32_t i = 0; i < cx->nfeatures; i++)
        if (strcmp(cx->features[i], macro) == 0) return;
    if (cx->nfeatures == cx->capfeatures) {
        uint32_t nc = cx->capfeatures ? cx->capfeatures * 2 : 8;
        const char **n = bxc_arena_alloc(cx->a, nc * sizeof *n);
        if (cx->nfeatures) memcpy(n, cx->features, cx->nfeatures * sizeof *n);
        cx->features = n;
        cx->capfeatures = nc;
    }
    cx->features[cx->nfeatures++] = macro;
}

const char *bxc_emit_cfg_c(bxc_emit_ctx *cx, const bxc_attr_arg *c) {
    bxc_arena *a = cx->a;
    const char *f = feature_name(c);
    if (f) {
        const char *m = feature_macro(a, f);
        note_feature(cx, m);
        return bxc_arena_printf(a, "defined(%s)", m);
    }
    if (c->kind == BXC_ATTR_ARG_CALL && c->path && c->path->segs.len == 1) {
        const char *n = c->path->segs.items[0].name;
        if (strcmp(n, "cfg") == 0 && c->args.len == 1) return bxc_emit_cfg_c(cx, c->args.items[0]);
        if (strcmp(n, "not") == 0 && c->args.len == 1)
            return bxc_arena_printf(a, "!(%s)", bxc_emit_cfg_c(cx, c->args.items[0]));
        bool any = strcmp(n, "any") == 0;
        if (any || strcmp(n, "all") == 0) {
            if (c->args.len == 0) return any ? "0" : "1";
            const char *s = "";
            for (uint32_t i = 0; i < c->args.len; i++)
                s = bxc_arena_printf(a, "%s%s(%s)", s, i ? (any ? " || " : " && ") : "",
                                     bxc_emit_cfg_c(cx, c->args.items[i]));
            return bxc_arena_printf(a, "(%s)", s);
        }
    }
    /* chk_cfg_condition accepts exactly `feature = "x"`, `not`, `any`, `all` (E0504) */
    bxc_emit_internal_error(cx, c->span, "a cfg condition the checker did not accept");
    return "0";
}

const char *bxc_emit_cfg_text(bxc_emit_ctx *cx, const bxc_attr_arg *c) {
    bxc_arena *a = cx->a;
    const char *f = feature_name(c);
    if (f) return bxc_arena_printf(a, "feature = \"%s\"", f);
    if (c->kind == BXC_ATTR_ARG_CALL && c->path && c->path->segs.len == 1) {
        const char *s = "";
        for (uint32_t i = 0; i < c->args.len; i++)
            s = bxc_arena_printf(a, "%s%s%s", s, i ? ", " : "", bxc_emit_cfg_text(cx, c->args.items[i]));
        return bxc_arena_printf(a, "%s(%s)", c->path->segs.items[0].name, s);
    }
    return "?";
}

const char *bxc_emit_cfg_attrs(bxc_emit_ctx *cx, const bxc_attr_list *attrs) {
    const char *s = NULL;
    for (uint32_t i = 0; i < attrs->len; i++) {
        const bxc_attr *at = attrs->items[i];
        if (!bxc_path_is(at->path, "cfg")) continue;
        const char *c = at->args.len == 1 ? bxc_emit_cfg_c(cx, at->args.items[0]) : "0";
        s = s ? bxc_arena_printf(cx->a, "%s && (%s)", s, c) : bxc_arena_printf(cx->a, "(%s)", c);
    }
    return s;
}

/* ---- assembling and writing ------------------------------------------------------- */

static const char *file_stem(bxc_arena *a, const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    if (n > 5 && strcmp(base + n - 5, ".bext") == 0) n -= 5;
    return bxc_arena_strndup(a, base, n);
}

const char *bxc_emit_stem(struct bxc_unit *u) {
    return file_stem(&u->arena, u->nmodules ? u->modules[0]->path : "out");
}

const char *bxc_emit_c_identifier(bxc_arena *a, const char *s) {
    char *out = bxc_arena_printf(a, "%s%s", (s[0] >= '0' && s[0] <= '9') ? "x" : "", s);
    for (char *p = out; *p; p++)
        if (!is_ident_char(*p)) *p = '_';
    return out;
}

/* The feature check (docs/codegen.md "Features"): per feature macro the
 * unit tests, the header makes every object file that includes it
 * reference `<stem>_c_compiled_with_<MACRO>` or `..._without_<MACRO>`,
 * whichever matches the state it is compiled with, and the .c defines the
 * one of its own state.  An object file that disagrees with the .c fails
 * to link, naming the feature.  The `used` pointer keeps the reference
 * in every object file at every optimization level. */
/* The feature check's names of macro i, claimed (emit_names.c). */
static void feature_names(bxc_emit_ctx *cx, uint32_t i, const char **with, const char **without, const char **check) {
    const char *m = cx->features[i];
    *with = bxc_arena_printf(cx->a, "%s_c_compiled_with_%s", cx->cstem, m);
    *without = bxc_arena_printf(cx->a, "%s_c_compiled_without_%s", cx->cstem, m);
    *check = bxc_arena_printf(cx->a, "%s_bext_feature_check_%s", cx->cstem, m);
    const char *what = bxc_arena_printf(cx->a, "the feature check of %s", m);
    bxc_emit_claim(cx, *with, bxc_span_none(), what);
    bxc_emit_claim(cx, *without, bxc_span_none(), what);
    bxc_emit_claim(cx, *check, bxc_span_none(), what);
}

static void emit_feature_check(bxc_emit_ctx *cx, bxc_emit_buf *h, bxc_emit_buf *c) {
    if (!cx->nfeatures) return;
    bxc_emit_printf(h, "/* ---- feature check: a file that includes this header with a BEXT_FEATURE_* macro\n"
                       " * defined differently from %s.c fails to link, with an undefined reference to\n"
                       " * `%s_c_compiled_with[out]_<MACRO>` (docs/codegen.md, \"Features\") ---- */\n",
                    bxc_emit_comment_text(cx->a, cx->stem), cx->cstem);
    bxc_emit_puts(c, "/* ---- feature check: the symbol of this file's feature state per macro ---- */\n");
    for (uint32_t i = 0; i < cx->nfeatures; i++) {
        const char *m = cx->features[i];
        const char *with, *without, *check;
        feature_names(cx, i, &with, &without, &check);
        bxc_emit_printf(h,
                        "#if defined(%s)\nextern const char %s;\n"
                        "static const char *const %s __attribute__((used)) = &%s;\n"
                        "#else\nextern const char %s;\n"
                        "static const char *const %s __attribute__((used)) = &%s;\n#endif\n",
                        m, with, check, with, without, check, without);
        bxc_emit_printf(c, "#if defined(%s)\nconst char %s = 1;\n#else\nconst char %s = 0;\n#endif\n", m, with,
                        without);
    }
    bxc_emit_puts(h, "\n");
    bxc_emit_puts(c, "\n");
}

static void ctx_init(bxc_emit_ctx *cx, bxc_unit *u, const char *stem) {
    memset(cx, 0, sizeof *cx);
    cx->u = u;
    cx->a = &u->arena;
    cx->ok = true;
    cx->stem = stem;
    cx->cstem = bxc_emit_c_identifier(cx->a, stem);
}

static void ctx_free(bxc_emit_ctx *cx) {
    bxc_emit_buf_free(&cx->types_h);
    bxc_emit_buf_free(&cx->protos_h);
    bxc_emit_buf_free(&cx->types_c);
    bxc_emit_buf_free(&cx->code_c);
    bxc_emit_buf_free(&cx->register_c);
}

/* The same phases as generate() in plan mode: each forms and claims its
 * file-scope names (emit_names.c) and writes no C, so the naming rules
 * keep one home and the checker learns every clash -o would meet. */
bool bxc_emit_check_names(bxc_unit *u) {
    bxc_emit_ctx cx;
    ctx_init(&cx, u, bxc_emit_stem(u));
    cx.plan = true;
    bxc_emit_root_types(&cx);
    bxc_emit_helpers(&cx);
    bxc_emit_traits(&cx);
    bxc_emit_kernels(&cx);
    bxc_emit_types_claim(&cx);
    for (uint32_t i = 0; i < cx.nfeatures; i++) {
        const char *with, *without, *check;
        feature_names(&cx, i, &with, &without, &check);
    }
    ctx_free(&cx);
    return cx.ok;
}

static bool generate(bxc_unit *u, const char *stem, bxc_emit_buf *h, bxc_emit_buf *c) {
    bxc_emit_ctx cx;
    ctx_init(&cx, u, stem);

    bxc_emit_root_types(&cx);
    bxc_emit_helpers(&cx);
    bxc_emit_traits(&cx);
    bxc_emit_kernels(&cx);
    bxc_emit_types_finish(&cx);
    bxc_emit_buf fh = {0}, fc = {0};
    emit_feature_check(&cx, &fh, &fc);

    const char *guard = bxc_emit_upper(cx.a, cx.cstem);
    const char *root = u->nmodules ? u->modules[0]->path : stem;
    const char *rootbase = strrchr(root, '/') ? strrchr(root, '/') + 1 : root;
    bxc_emit_printf(h,
                    "/* %s.h — generated by bextc from %s; do not edit.\n"
                    " * Conventions: docs/codegen.md of the bext project. */\n"
                    "#ifndef BEXT_GEN_%s_H\n#define BEXT_GEN_%s_H\n\n"
                    "#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n\n"
                    "#include <bext/bext.h>\n#include <bext/gen.h>\n\n"
                    "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n",
                    bxc_emit_comment_text(cx.a, stem), bxc_emit_comment_text(cx.a, rootbase), guard, guard);
    bxc_emit_append(h, &cx.types_h);
    bxc_emit_append(h, &cx.protos_h);
    bxc_emit_append(h, &fh);
    bxc_emit_printf(h, "#ifdef __cplusplus\n}\n#endif\n\n#endif /* BEXT_GEN_%s_H */\n", guard);

    bxc_emit_printf(c,
                    "/* %s.c — generated by bextc from %s; do not edit.\n"
                    " * Routing, default bodies and metadata functions (docs/codegen.md). */\n"
                    "#include \"%s.h\"\n\n",
                    bxc_emit_comment_text(cx.a, stem), bxc_emit_comment_text(cx.a, rootbase), stem);
    bxc_emit_append(c, &fc);
    bxc_emit_append(c, &cx.types_c);
    bxc_emit_append(c, &cx.code_c);
    if (cx.register_c.len) {
        /* Every extension op is in the runtime's registry (bext_ext_find)
         * before main: optimizers and a remote server look ids up there. */
        bxc_emit_printf(c, "/* ---- registration of the extension ops (bext/ext.h) ---- */\n"
                           "__attribute__((constructor)) static void %s_bext_register(void) {\n",
                        cx.cstem);
        bxc_emit_append(c, &cx.register_c);
        bxc_emit_puts(c, "}\n");
    }

    ctx_free(&cx);
    bxc_emit_buf_free(&fh);
    bxc_emit_buf_free(&fc);
    return cx.ok;
}

bool bxc_emit_c_memory(bxc_unit *u, const char *stem, const char **header, const char **source) {
    if (!stem) stem = file_stem(&u->arena, u->nmodules ? u->modules[0]->path : "out");
    bxc_emit_buf h = {0}, c = {0};
    bool ok = generate(u, stem, &h, &c);
    *header = bxc_arena_strndup(&u->arena, h.data ? h.data : "", h.len);
    *source = bxc_arena_strndup(&u->arena, c.data ? c.data : "", c.len);
    bxc_emit_buf_free(&h);
    bxc_emit_buf_free(&c);
    return ok;
}

static bool io_error(bxc_unit *u, const char *what, const char *path) {
    bxc_diag_add(&u->diags, BXC_SEV_ERROR, bxc_diag_code_str(BXC_EMIT_E_IO), bxc_span_none(), "cannot %s `%s`: %s", what, path,
                 strerror(errno));
    return false;
}

/* mkdir -p */
static bool make_dirs(bxc_unit *u, const char *dir) {
    char *p = bxc_arena_strdup(&u->arena, dir);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = 0;
        if (mkdir(p, 0777) != 0 && errno != EEXIST) return io_error(u, "create directory", p);
        *s = '/';
    }
    if (mkdir(p, 0777) != 0 && errno != EEXIST) return io_error(u, "create directory", p);
    return true;
}

/* Writes data to path.tmp, then renames: a reader never sees a half file. */
static bool write_file(bxc_unit *u, const char *path, const char *data, size_t len, const char **tmp_out) {
    const char *tmp = bxc_arena_printf(&u->arena, "%s.tmp", path);
    *tmp_out = tmp;
    FILE *f = fopen(tmp, "wb");
    if (!f) return io_error(u, "write", tmp);
    bool ok = fwrite(data, 1, len, f) == len;
    ok = (fclose(f) == 0) && ok;
    if (!ok) {
        remove(tmp);
        return io_error(u, "write", tmp);
    }
    return true;
}

bool bxc_emit_c(bxc_unit *u, const char *outdir, const bxc_emit_options *opts) {
    const char *stem = file_stem(&u->arena, u->nmodules ? u->modules[0]->path : "out");
    bxc_emit_buf h = {0}, c = {0}, d = {0};
    bool ok = generate(u, stem, &h, &c);
    if (ok) ok = make_dirs(u, outdir);
    const char *hp = bxc_arena_printf(&u->arena, "%s/%s.h", outdir, stem);
    const char *cp = bxc_arena_printf(&u->arena, "%s/%s.c", outdir, stem);
    const char *dp = bxc_arena_printf(&u->arena, "%s/%s.d", outdir, stem);
    if (ok && opts && opts->depfile) bxc_emit_depfile(u, cp, hp, &d);
    const char *th = NULL, *tc = NULL, *td = NULL;
    if (ok) ok = write_file(u, hp, h.data, h.len, &th);
    if (ok) ok = write_file(u, cp, c.data, c.len, &tc);
    if (ok && opts && opts->depfile) ok = write_file(u, dp, d.data, d.len, &td);
    if (ok) {
        if (rename(th, hp) != 0) ok = io_error(u, "rename into", hp);
        else if (rename(tc, cp) != 0) ok = io_error(u, "rename into", cp);
        else if (td && rename(td, dp) != 0) ok = io_error(u, "rename into", dp);
    } else {
        if (th) remove(th);
        if (tc) remove(tc);
        if (td) remove(td);
    }
    bxc_emit_buf_free(&h);
    bxc_emit_buf_free(&c);
    bxc_emit_buf_free(&d);
    return ok;
}
