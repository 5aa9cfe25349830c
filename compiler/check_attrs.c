/* check_attrs.c — attributes (language.md §1-§4): which attribute may go
 * where, `cfg` conditions, the selector list of `#[backend_extension]`,
 * `#[derive(ExtensionType)]` / `#[extension_type]` on types and
 * `#[fusion(scalar)]` on types.  The parser keeps attributes as generic
 * data; every rule about their contents lives here (and in check_sig.c
 * for the per-method `#[fusion]` forms). */
#include <ctype.h>
#include <stdio.h>

#include "check_internal.h"

/* ---- placement ----------------------------------------------------------- */

bool chk_attr_is(const bxc_attr *a, const char *name) {
    return a && bxc_path_is(a->path, name);
}

bxc_attr *chk_find_attr(const bxc_attr_list *attrs, const char *name) {
    for (uint32_t i = 0; attrs && i < attrs->len; i++)
        if (chk_attr_is(attrs->items[i], name)) return attrs->items[i];
    return NULL;
}

static bool eval_cfg(chk_ctx *cx, const bxc_attr_arg *arg, bool *value, bool report);

/* `#[cfg(cond)]`: exactly one condition. */
static bool cfg_attr(chk_ctx *cx, const bxc_attr *a, bool *value, bool report) {
    if (!a->has_args || a->args.len != 1) {
        if (report) {
            bxc_diag *d = chk_error(cx, CHK_E_CFG, a->span,
                                    "malformed `cfg`: expected exactly one condition");
            chk_help(cx, d, "write `#[cfg(feature = \"name\")]`, combined with `not`, `any`, `all`");
        }
        return false;
    }
    return eval_cfg(cx, a->args.items[0], value, report);
}

/* "backend_extension, derive, ..." from the table, for the help of an
 * unknown attribute nothing is near. */
static const char *attr_names(chk_ctx *cx) {
    char buf[256];
    uint32_t len = 0;
    buf[0] = '\0';
    for (uint32_t j = 0; j < bxc_attr_count && len < sizeof buf; j++) {
        int w = snprintf(buf + len, sizeof buf - len, "%s%s", j ? ", " : "", bxc_attrs[j].name);
        if (w < 0) break;
        len += (uint32_t)w;
    }
    return bxc_arena_strdup(cx->arena, buf);
}

void chk_attrs_placement(chk_ctx *cx, const bxc_attr_list *attrs, bxc_attr_site site) {
    for (uint32_t i = 0; attrs && i < attrs->len; i++) {
        bxc_attr *a = attrs->items[i];
        const char *name = a->path && a->path->segs.len ? a->path->segs.items[0].name : "?";
        const bxc_attr_info *k = a->path && a->path->segs.len == 1 ? bxc_attr_find(name) : NULL;
        if (!k) {
            const char *cands[32];
            uint32_t n = 0;
            for (uint32_t j = 0; j < bxc_attr_count && n < 32; j++) cands[n++] = bxc_attrs[j].name;
            bxc_diag *d = chk_error(cx, CHK_E_UNKNOWN_ATTR, a->path ? a->path->span : a->span,
                                    "unknown attribute `%s`", name);
            const char *near = chk_nearest(name, cands, n);
            if (near) chk_help(cx, d, "did you mean `#[%s]`?", near);
            else chk_help(cx, d, "attributes of `.bext` files: %s", attr_names(cx));
            continue;
        }
        if (!(k->sites & BXC_SITE_BIT(site))) {
            chk_error(cx, CHK_E_MISPLACED_ATTR, a->span, "`#[%s]` is not allowed on %s", name,
                      bxc_site_name(site));
            continue;
        }
        if (strcmp(name, "cfg") == 0) {
            bool v;
            cfg_attr(cx, a, &v, true);
        }
        if (k->once) {
            for (uint32_t j = 0; j < i; j++)
                if (chk_attr_is(attrs->items[j], name)) {
                    bxc_diag *d = chk_error(cx, CHK_E_BAD_ATTR, a->span, "duplicate `#[%s]`", name);
                    chk_note(cx, d, attrs->items[j]->span, "first given here");
                    chk_help(cx, d, "merge them into one attribute");
                    break;
                }
        }
    }
}

/* ---- cfg ------------------------------------------------------------------- */

static const char *arg_desc(chk_ctx *cx, const bxc_attr_arg *arg) {
    const char *name = arg->path && arg->path->segs.len ? arg->path->segs.items[0].name : "";
    switch (arg->kind) {
    case BXC_ATTR_ARG_PATH: return bxc_arena_printf(cx->arena, "`%s`", name);
    case BXC_ATTR_ARG_ASSIGN: return bxc_arena_printf(cx->arena, "`%s = ...`", name);
    case BXC_ATTR_ARG_COLON: return bxc_arena_printf(cx->arena, "`%s: ...`", name);
    case BXC_ATTR_ARG_CALL: return bxc_arena_printf(cx->arena, "`%s(...)`", name);
    case BXC_ATTR_ARG_STRING: return "a string";
    }
    return "?";
}

/* The C macro of a feature name, as the generator spells it
 * (compiler/emit.c): BEXT_FEATURE_ + upper case, non-identifier bytes -> `_`. */
static const char *feature_macro(chk_ctx *cx, const char *name, uint32_t len) {
    char *m = bxc_arena_alloc(cx->arena, 13 + (size_t)len + 1);
    memcpy(m, "BEXT_FEATURE_", 13);
    for (uint32_t i = 0; i < len; i++) {
        char c = name[i];
        if (c >= 'a' && c <= 'z') c = (char)(c - 'a' + 'A');
        else if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) c = '_';
        m[13 + i] = c;
    }
    m[13 + len] = 0;
    return m;
}

/* A feature name must be non-empty, and no two different names of a unit
 * may become one C macro (`a-b`, `a_b`, `A_B`: BEXT_FEATURE_A_B), or cfg
 * conditions that differ in bextc would be one condition in C. */
static void check_feature_name(chk_ctx *cx, const bxc_expr *v) {
    const char *name = v->string_lit.value;
    uint32_t len = v->string_lit.len;
    for (const chk_feature *f = cx->features; f; f = f->next)
        if (f->span.file == v->span.file && f->span.offset == v->span.offset) return;   /* seen already */
    if (len == 0) {
        bxc_diag *d = chk_error(cx, CHK_E_CFG, v->span, "empty feature name");
        chk_help(cx, d, "write the feature's name: `feature = \"gpu\"`");
    }
    const char *macro = feature_macro(cx, name, len);
    /* the first spelling met for this macro is the one compared against */
    const chk_feature *f = NULL;
    for (const chk_feature *g = cx->features; g; g = g->next)
        if (g->first && strcmp(g->macro, macro) == 0) f = g;
    chk_feature *n = bxc_arena_alloc(cx->arena, sizeof *n);
    n->name = bxc_arena_strndup(cx->arena, name, len);
    n->macro = macro;
    n->span = v->span;
    n->first = f == NULL;
    n->next = cx->features;
    cx->features = n;
    if (f && !(strlen(f->name) == len && memcmp(f->name, name, len) == 0)) {
        bxc_diag *d = chk_error(cx, CHK_E_CFG, v->span,
                                "feature names \"%s\" and \"%s\" both become the C macro `%s`",
                                bxc_arena_strndup(cx->arena, name, len), f->name, macro);
        chk_note(cx, d, f->span, "feature \"%s\" is here", f->name);
        chk_help(cx, d, "spell the feature the same way everywhere (the C macro upper-cases it and turns "
                        "other characters into `_`)");
    }
}

static bool eval_cfg(chk_ctx *cx, const bxc_attr_arg *arg, bool *value, bool report) {
    *value = false;
    const char *name = arg->path && arg->path->segs.len == 1 ? arg->path->segs.items[0].name : NULL;
    if (arg->kind == BXC_ATTR_ARG_ASSIGN && name && strcmp(name, "feature") == 0) {
        const bxc_expr *v = arg->value;
        if (v && v->kind == BXC_EXPR_STRING) {
            char buf[256];
            uint32_t n = v->string_lit.len < sizeof buf - 1 ? v->string_lit.len : sizeof buf - 1;
            memcpy(buf, v->string_lit.value, n);
            buf[n] = '\0';
            *value = bxc_unit_has_feature(cx->unit, buf);
            if (report) check_feature_name(cx, v);
            return true;
        }
        if (report) {
            bxc_diag *d = chk_error(cx, CHK_E_CFG, v ? v->span : arg->span,
                                    "malformed `cfg` condition: `feature` takes a string");
            chk_help(cx, d, "write `feature = \"name\"`");
        }
        return false;
    }
    if (arg->kind == BXC_ATTR_ARG_CALL && name &&
        (strcmp(name, "not") == 0 || strcmp(name, "any") == 0 || strcmp(name, "all") == 0)) {
        bool is_not = name[0] == 'n', is_any = name[1] == 'n';
        if (is_not && arg->args.len != 1) {
            if (report) {
                bxc_diag *d = chk_error(cx, CHK_E_CFG, arg->span,
                                        "`not` takes exactly one condition, found %u",
                                        arg->args.len);
                chk_help(cx, d, "combine several with `not(any(...))` or `not(all(...))`");
            }
            for (uint32_t i = 0; i < arg->args.len; i++) {
                bool v;
                eval_cfg(cx, arg->args.items[i], &v, report);
            }
            return false;
        }
        bool ok = true, acc = !is_any;   /* any() is false, all() is true */
        for (uint32_t i = 0; i < arg->args.len; i++) {
            bool v;
            ok &= eval_cfg(cx, arg->args.items[i], &v, report);
            if (is_any) acc = acc || v;
            else acc = acc && v;
        }
        *value = is_not ? !acc : acc;
        return ok;
    }
    if (report) {
        bxc_diag *d;
        if (name && strcmp(name, "feature") == 0 && arg->kind == BXC_ATTR_ARG_PATH)
            d = chk_error(cx, CHK_E_CFG, arg->span,
                          "malformed `cfg` condition: `feature` needs a value");
        else
            d = chk_error(cx, CHK_E_CFG, arg->span,
                          "malformed `cfg` condition: expected `feature = \"name\"`, `not(..)`, "
                          "`any(..)` or `all(..)`, found %s", arg_desc(cx, arg));
        chk_help(cx, d, "write `feature = \"name\"`, `not(c)`, `any(c, ...)` or `all(c, ...)`");
    }
    return false;
}

bool chk_cfg_condition(chk_ctx *cx, const bxc_attr_arg *arg, bool *value) {
    return eval_cfg(cx, arg, value, true);
}

bool chk_cfg_active(chk_ctx *cx, const bxc_attr_list *attrs) {
    for (uint32_t i = 0; attrs && i < attrs->len; i++) {
        bxc_attr *a = attrs->items[i];
        if (!chk_attr_is(a, "cfg")) continue;
        bool v = true;
        /* malformed conditions were reported by the placement check; keep
         * checking the item so its other errors still show */
        if (cfg_attr(cx, a, &v, false) && !v) return false;
    }
    return true;
}

/* ---- #[backend_extension(...)] ------------------------------------------------- */

const char *const chk_selector_names[CHK_SEL_COUNT] = {
#define CHK_B_(E, s, S) [CHK_SEL_##E] = #S,
    BEXT_BACKENDS(CHK_B_)
#undef CHK_B_
#define CHK_L_(E, s, S, d) [CHK_SEL_##E] = #S,
    BEXT_LAYERS(CHK_L_)
#undef CHK_L_
};

/* Spelled at compile time from the same rows: ", Cube, Flex, ..." minus
 * the leading separator. */
const char *chk_selector_list(bool backends_only) {
#define CHK_B_(E, s, S) ", " #S
#define CHK_L_(E, s, S, d) ", " #S
    static const char all[] = BEXT_BACKENDS(CHK_B_) BEXT_LAYERS(CHK_L_);
    static const char base[] = BEXT_BACKENDS(CHK_B_);
#undef CHK_B_
#undef CHK_L_
    return (backends_only ? base : all) + 2;
}

/* Cube runtimes people write by mistake, with their display names. */
static const struct { const char *name, *display, *feature; } cube_runtimes[] = {
    {"wgpu", "WGPU", "wgpu"}, {"vulkan", "Vulkan", "vulkan"}, {"cuda", "CUDA", "cuda"},
    {"rocm", "ROCm", "rocm"}, {"cpu", "CPU", "cpu"}, {"hip", "HIP", "hip"},
    {"spirv", "SPIR-V", "spirv"}, {"metal", "Metal", "metal"}, {"llvm", "LLVM", "cpu"},
};

static bool ieq(const char *a, const char *b) {
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return false;
    return *a == *b;
}

static int selector_index(const char *n) {
    for (int i = 0; i < CHK_SEL_COUNT; i++)
        if (strcmp(chk_selector_names[i], n) == 0) return i;
    return -1;
}

static void bad_selector(chk_ctx *cx, const char *name, bxc_span span) {
    bxc_diag *d = chk_error(cx, CHK_E_SELECTOR, span, "`%s` is not a backend selector", name);
    for (size_t i = 0; i < sizeof cube_runtimes / sizeof *cube_runtimes; i++)
        if (ieq(name, cube_runtimes[i].name)) {
            chk_help(cx, d, "%s is a Cube runtime: write `Cube` (optionally `Cube: cfg(feature = \"%s\")`)",
                     cube_runtimes[i].display, cube_runtimes[i].feature);
            return;
        }
    const char *near = chk_nearest(name, chk_selector_names, CHK_SEL_COUNT);
    if (near) chk_help(cx, d, "did you mean `%s`?", near);
    else
        chk_help(cx, d, "backend selectors are %s", chk_selector_list(false));
}

void chk_backend_extension(chk_ctx *cx, const bxc_attr *a, chk_selectors *out) {
    memset(out, 0, sizeof *out);
    out->present = true;
    out->names = "";
    if (!a->has_args || a->args.len == 0) {
        bxc_diag *d = chk_error(cx, CHK_E_BAD_ATTR, a->span,
                                "`#[backend_extension]` needs a list of backend selectors");
        chk_help(cx, d, "for example `#[backend_extension(Cube, Flex, Autodiff, Fusion)]`");
        return;
    }
    bxc_span first[CHK_SEL_COUNT];
    bool invalid = false;
    char names[256];
    size_t len = 0;
    names[0] = '\0';
    for (uint32_t i = 0; i < a->args.len; i++) {
        bxc_attr_arg *arg = a->args.items[i];
        if ((arg->kind != BXC_ATTR_ARG_PATH && arg->kind != BXC_ATTR_ARG_COLON) || !arg->path ||
            arg->path->segs.len != 1) {
            bxc_diag *d = chk_error(cx, CHK_E_SELECTOR, arg->span,
                                    "expected a backend selector, found %s", arg_desc(cx, arg));
            chk_help(cx, d, "write a selector, optionally gated: `Cube: cfg(feature = \"wgpu\")`");
            invalid = true;
            continue;
        }
        const char *name = arg->path->segs.items[0].name;
        bxc_span nspan = arg->path->span;
        if (arg->kind == BXC_ATTR_ARG_COLON) {
            const bxc_attr_arg *c = arg->args.len == 1 ? arg->args.items[0] : NULL;
            if (!c || c->kind != BXC_ATTR_ARG_CALL || !bxc_path_is(c->path, "cfg")) {
                bxc_diag *d = chk_error(cx, CHK_E_CFG, c ? c->span : arg->span,
                                        "expected `cfg(...)` after `%s:`, found %s", name,
                                        c ? arg_desc(cx, c) : "nothing");
                chk_help(cx, d, "write `%s: cfg(feature = \"name\")`", name);
            } else if (c->args.len != 1) {
                bxc_diag *d = chk_error(cx, CHK_E_CFG, c->span,
                                        "malformed `cfg`: expected exactly one condition");
                chk_help(cx, d, "write `cfg(feature = \"name\")`, combined with `not`, `any`, `all`");
            } else {
                bool v;
                chk_cfg_condition(cx, c->args.items[0], &v);
            }
        }
        int k = selector_index(name);
        if (k < 0) {
            bad_selector(cx, name, nspan);
            invalid = true;
            continue;
        }
        if (out->listed[k]) {
            bxc_diag *d = chk_error(cx, CHK_E_DUP_SELECTOR, nspan, "duplicate backend selector `%s`",
                                    name);
            chk_note(cx, d, first[k], "first listed here");
            chk_help(cx, d, "list each selector once; gate it with one `cfg(any(...))`");
            continue;
        }
        out->listed[k] = true;
        first[k] = nspan;
        if (k < BEXT_BACKEND_COUNT) out->nexec++;
        if (len < sizeof names - 1) {
            int w = snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "", name);
            if (w > 0) len += (size_t)w;
            if (len >= sizeof names) len = sizeof names - 1;
        }
    }
    out->names = bxc_arena_strdup(cx->arena, names);
    if (!invalid && out->nexec == 0) {
        bxc_diag *d = chk_error(cx, CHK_E_SELECTOR, a->span,
                                "`#[backend_extension]` names no execution backend");
        chk_help(cx, d, "add one of %s", chk_selector_list(true));
    }
}

const bxc_trait_selectors *chk_selector_record(chk_ctx *cx, const bxc_attr *a) {
    bxc_trait_selectors *r = bxc_arena_alloc(cx->arena, sizeof *r);
    r->items = bxc_arena_alloc(cx->arena, CHK_SEL_COUNT * sizeof *r->items);
    bool listed[CHK_SEL_COUNT] = {false};
    for (uint32_t i = 0; i < a->args.len; i++) {
        const bxc_attr_arg *arg = a->args.items[i];
        bool readable = (arg->kind == BXC_ATTR_ARG_PATH || arg->kind == BXC_ATTR_ARG_COLON) && arg->path &&
                        arg->path->segs.len == 1;
        int k = readable ? selector_index(arg->path->segs.items[0].name) : -1;
        if (k < 0) {
            if (!r->bad) r->bad = arg;
            continue;
        }
        if (listed[k]) continue;   /* a duplicate: reported by chk_backend_extension */
        listed[k] = true;
        r->items[r->len++] = (bxc_selector_use){
            (uint32_t)k, arg->path->segs.items[0].name,
            arg->kind == BXC_ATTR_ARG_COLON && arg->args.len == 1 ? arg->args.items[0] : NULL};
    }
    return r;
}

/* ---- type attributes ---------------------------------------------------------------- */

static bool derive_lists(const bxc_attr *a, const char *name) {
    for (uint32_t i = 0; i < a->args.len; i++)
        if (a->args.items[i]->kind == BXC_ATTR_ARG_PATH && bxc_path_is(a->args.items[i]->path, name))
            return true;
    return false;
}

bool chk_derives_extension(const bxc_attr_list *attrs) {
    for (uint32_t i = 0; attrs && i < attrs->len; i++)
        if (chk_attr_is(attrs->items[i], "derive") && derive_lists(attrs->items[i], "ExtensionType"))
            return true;
    return false;
}

/* `#[extension_type(fusion)]` or `#[extension_type(fusion: cfg(...))]`. */
bool chk_has_fusion_companion(const bxc_attr_list *attrs) {
    for (uint32_t i = 0; attrs && i < attrs->len; i++) {
        bxc_attr *a = attrs->items[i];
        if (!chk_attr_is(a, "extension_type")) continue;
        for (uint32_t k = 0; k < a->args.len; k++) {
            bxc_attr_arg *arg = a->args.items[k];
            if ((arg->kind == BXC_ATTR_ARG_PATH || arg->kind == BXC_ATTR_ARG_COLON) &&
                bxc_path_is(arg->path, "fusion"))
                return true;
        }
    }
    return false;
}

bool chk_has_fusion_scalar(const bxc_attr_list *attrs) {
    for (uint32_t i = 0; attrs && i < attrs->len; i++) {
        bxc_attr *a = attrs->items[i];
        if (!chk_attr_is(a, "fusion")) continue;
        for (uint32_t k = 0; k < a->args.len; k++)
            if (a->args.items[k]->kind == BXC_ATTR_ARG_PATH &&
                bxc_path_is(a->args.items[k]->path, "scalar"))
                return true;
    }
    return false;
}

/* Does a value of this type convert to a fusion scalar? Scalars do; an
 * enum of unit variants converts to its variant index; a struct with one
 * scalar field converts to that field. */
bxc_scalar_read chk_scalar_read(bxc_type *t, bxc_type **scalar) {
    t = bxc_type_resolve(t);
    *scalar = NULL;
    if (bxc_type_is_scalar(t)) {
        *scalar = t;
        return BXC_SCALAR_READ_VALUE;
    }
    if (t->kind == BXC_TYPE_ENUM) {
        if (t->decl->is_extension || !t->decl->nvariants) return BXC_SCALAR_READ_NONE;
        for (uint32_t i = 0; i < t->decl->nvariants; i++)
            if (t->decl->variants[i].shape != BXC_VSHAPE_UNIT) return BXC_SCALAR_READ_NONE;
        *scalar = bxc_type_int(BXC_U32);
        return BXC_SCALAR_READ_TAG;
    }
    if (t->kind == BXC_TYPE_STRUCT && !t->decl->is_extension && t->decl->nfields == 1 &&
        bxc_type_is_scalar(t->decl->fields[0].type)) {
        *scalar = bxc_type_resolve(t->decl->fields[0].type);
        return BXC_SCALAR_READ_FIELD;
    }
    return BXC_SCALAR_READ_NONE;
}

bool chk_type_converts_to_scalar(bxc_type *t) {
    bxc_type *s;
    return chk_scalar_read(t, &s) != BXC_SCALAR_READ_NONE;
}

void chk_type_attrs(chk_ctx *cx, chk_module *cm, bxc_item *it, chk_symbol *s) {
    (void)cm;
    bool derived = chk_derives_extension(&it->attrs);
    for (uint32_t i = 0; i < it->attrs.len; i++) {
        bxc_attr *a = it->attrs.items[i];
        if (chk_attr_is(a, "derive")) {
            if (!a->has_args || !a->args.len) {
                chk_error(cx, CHK_E_BAD_ATTR, a->span, "`#[derive]` needs a list of traits");
                continue;
            }
            for (uint32_t k = 0; k < a->args.len; k++) {
                bxc_attr_arg *arg = a->args.items[k];
                const char *n = arg->kind == BXC_ATTR_ARG_PATH && arg->path->segs.len == 1
                                    ? arg->path->segs.items[0].name : NULL;
                const bxc_attr_info *derive = bxc_attr_find("derive");
                bxc_attr_site site = it->kind == BXC_ITEM_ENUM ? BXC_SITE_ENUM : BXC_SITE_STRUCT;
                if (!bxc_attr_key_find(derive, n, site, BXC_KEY_NAME)) {
                    const char *known[32];
                    uint32_t nknown = bxc_attr_key_names(derive, site, known, 32);
                    bxc_diag *d = chk_error(cx, CHK_E_BAD_ATTR, arg->span, "unknown derive %s",
                                            n ? bxc_arena_printf(cx->arena, "`%s`", n)
                                              : arg_desc(cx, arg));
                    const char *near = n ? chk_nearest(n, known, nknown) : NULL;
                    if (near) chk_help(cx, d, "did you mean `%s`?", near);
                    else {
                        char list[256];
                        chk_help(cx, d, "`.bext` types derive %s",
                                 bxc_attr_key_list(derive, site, list, sizeof list));
                    }
                }
            }
        } else if (chk_attr_is(a, "extension_type")) {
            if (!derived) {
                bxc_diag *d = chk_error(cx, CHK_E_EXT_TYPE, it->name.span,
                                        "`#[extension_type]` on `%s`, which is not an extension type",
                                        it->name.name);
                chk_help(cx, d, "add `#[derive(ExtensionType)]`");
            }
            for (uint32_t k = 0; k < a->args.len; k++) {
                bxc_attr_arg *arg = a->args.items[k];
                if (arg->kind == BXC_ATTR_ARG_PATH && bxc_path_is(arg->path, "fusion")) continue;
                if (arg->kind == BXC_ATTR_ARG_COLON && bxc_path_is(arg->path, "fusion")) {
                    const bxc_attr_arg *c = arg->args.len == 1 ? arg->args.items[0] : NULL;
                    if (!c || c->kind != BXC_ATTR_ARG_CALL || !bxc_path_is(c->path, "cfg") ||
                        c->args.len != 1) {
                        bxc_diag *d = chk_error(cx, CHK_E_CFG, c ? c->span : arg->span,
                                                "malformed `cfg`: expected `fusion: cfg(condition)`");
                        chk_help(cx, d, "write `fusion: cfg(feature = \"fusion\")`");
                    } else {
                        bool v;
                        chk_cfg_condition(cx, c->args.items[0], &v);
                    }
                    continue;
                }
                bxc_diag *d = chk_error(cx, CHK_E_BAD_ATTR, arg->span,
                                        "unknown `extension_type` option %s", arg_desc(cx, arg));
                chk_help(cx, d, "write `#[extension_type(fusion)]` or `#[extension_type(fusion: cfg(...))]`");
            }
        } else if (chk_attr_is(a, "fusion")) {
            bool scalar = false;
            for (uint32_t k = 0; k < a->args.len; k++) {
                bxc_attr_arg *arg = a->args.items[k];
                if (arg->kind == BXC_ATTR_ARG_PATH && bxc_path_is(arg->path, "scalar")) {
                    scalar = true;
                    continue;
                }
                bxc_diag *d = chk_error(cx, CHK_E_BAD_ATTR, arg->span,
                                        "`#[fusion(...)]` on a type only takes `scalar`, found %s",
                                        arg_desc(cx, arg));
                if (arg->kind == BXC_ATTR_ARG_ASSIGN && bxc_path_is(arg->path, "scalar"))
                    chk_help(cx, d, "a custom encoding `scalar = expr` goes on a method argument");
            }
            if (!a->has_args || !a->args.len)
                chk_error(cx, CHK_E_BAD_ATTR, a->span, "`#[fusion]` on a type needs `(scalar)`");
            if (!scalar) continue;
            bxc_type *t = s->type;
            if (t && !bxc_type_is_error(t) && !chk_type_converts_to_scalar(t)) {
                bxc_diag *d = chk_error(cx, CHK_E_SCALAR_TYPE, it->name.span,
                                        "`#[fusion(scalar)]` on `%s`, which does not convert to a scalar",
                                        it->name.name);
                chk_help(cx, d, "scalars are integers, f32, f64 and bool; an enum of unit variants "
                                "or a struct with one scalar field converts too");
            } else if (t && (t->kind == BXC_TYPE_STRUCT || t->kind == BXC_TYPE_ENUM) &&
                       it->kind != BXC_ITEM_TYPE_ALIAS) {
                t->decl->fusion_scalar = true;
            }
        }
    }
}
