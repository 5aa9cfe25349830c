/* attrs.c — the table of attributes and their keys (attrs.h).  Adding an
 * attribute or a key here is what makes the checker accept it where it
 * asks the table and bext-lsp offer it; the checker code that reads the
 * key's value still has to learn what it means. */
#include "attrs.h"

#include <stdio.h>
#include <string.h>

#include <bext/bext.h>

#define N(a) ((uint32_t)(sizeof(a) / sizeof *(a)))
#define BIT BXC_SITE_BIT
#define METHOD BIT(BXC_SITE_METHOD)
#define PARAM BIT(BXC_SITE_PARAM)
#define DERIVABLE (BIT(BXC_SITE_STRUCT) | BIT(BXC_SITE_ENUM))

static const char *const site_names[BXC_SITE_COUNT] = {
    [BXC_SITE_FN] = "a function",       [BXC_SITE_STRUCT] = "a struct",
    [BXC_SITE_ENUM] = "an enum",        [BXC_SITE_ALIAS] = "a type alias",
    [BXC_SITE_TRAIT] = "a trait",       [BXC_SITE_METHOD] = "a method",
    [BXC_SITE_PARAM] = "a parameter",   [BXC_SITE_FIELD] = "a field",
    [BXC_SITE_VARIANT] = "an enum variant", [BXC_SITE_USE] = "a `use`",
    [BXC_SITE_IMPL] = "an `impl`",
};

const char *bxc_site_name(bxc_attr_site s) {
    return (unsigned)s < BXC_SITE_COUNT ? site_names[s] : "this item";
}

/* The selectors of `#[backend_extension(...)]`: the runtime's rows of
 * backends, then layers (bext.h), in the order messages list them. */
static const bxc_attr_key selector_keys[] = {
#define SEL_B_(E, s, S) {#S, BXC_KEY_NAME, BIT(BXC_SITE_TRAIT), "backend " #s},
    BEXT_BACKENDS(SEL_B_)
#undef SEL_B_
#define SEL_L_(E, s, S, d) {#S, BXC_KEY_NAME, BIT(BXC_SITE_TRAIT), "decorator layer " #s},
    BEXT_LAYERS(SEL_L_)
#undef SEL_L_
};

static const bxc_attr_key derive_keys[] = {
    {"ExtensionType", BXC_KEY_NAME, DERIVABLE, "a value the generated C passes to an extension method"},
    {"Clone", BXC_KEY_NAME, DERIVABLE, "Rust's Clone (kept for the Rust side)"},
    {"Copy", BXC_KEY_NAME, DERIVABLE, "Rust's Copy"},
    {"Debug", BXC_KEY_NAME, DERIVABLE, "Rust's Debug"},
    {"PartialEq", BXC_KEY_NAME, DERIVABLE, "Rust's PartialEq"},
    {"Eq", BXC_KEY_NAME, DERIVABLE, "Rust's Eq"},
    {"Hash", BXC_KEY_NAME, DERIVABLE, "Rust's Hash"},
    {"Default", BXC_KEY_NAME, DERIVABLE, "Rust's Default"},
};

static const bxc_attr_key extension_type_keys[] = {
    {"fusion", BXC_KEY_FLAG, DERIVABLE, "also generate the type's fusion companion (or `fusion: cfg(..)`)"},
};

/* language.md §5 (methods), §4 (arguments and types). */
static const bxc_attr_key fusion_keys[] = {
    {"dtype", BXC_KEY_ASSIGN, METHOD, "the output's dtype, from the inputs' specs (with `shape`)"},
    {"shape", BXC_KEY_ASSIGN, METHOD, "the output's shape, from the inputs' specs (with `dtype`)"},
    {"meta", BXC_KEY_ASSIGN, METHOD, "a fn computing the output spec(s) from the inputs' specs"},
    {"default", BXC_KEY_FLAG, METHOD, "fuse the ops of the method's default body"},
    {"id", BXC_KEY_ASSIGN, METHOD, "the custom op's id string"},
    {"scalar", BXC_KEY_FLAG, PARAM | BXC_SITES_TYPE, "pass the value to the fused op as a scalar"},
    {"scalar", BXC_KEY_ASSIGN, PARAM, "pass this expression of the value as its scalar"},
};

static const bxc_attr_key backward_keys[] = {
    {"manual", BXC_KEY_FLAG, METHOD, "the Autodiff implementation is written by hand"},
};

static const bxc_attr_key cfg_keys[] = {
    {"feature", BXC_KEY_ASSIGN, BXC_SITES_ALL, "holds when the feature is enabled: `feature = \"name\"`"},
    {"not", BXC_KEY_CALL, BXC_SITES_ALL, "holds when its one condition does not"},
    {"any", BXC_KEY_CALL, BXC_SITES_ALL, "holds when one of its conditions does"},
    {"all", BXC_KEY_CALL, BXC_SITES_ALL, "holds when each of its conditions does"},
};

static const bxc_attr_key cube_keys[] = {
    {"helper", BXC_KEY_FLAG, BIT(BXC_SITE_FN), "a device function inlined into kernels, not launched"},
};

const bxc_attr_info bxc_attrs[] = {
    {"backend_extension", BIT(BXC_SITE_TRAIT), true, "the trait is an extension of these backends",
     selector_keys, N(selector_keys), BXC_MORE_NONE},
    {"derive", DERIVABLE, false, "derive traits (`ExtensionType`)", derive_keys, N(derive_keys),
     BXC_MORE_NONE},
    {"extension_type", DERIVABLE | BIT(BXC_SITE_FIELD) | PARAM, true,
     "an extension type (or a value of one)", extension_type_keys, N(extension_type_keys), BXC_MORE_NONE},
    {"fusion", METHOD | PARAM | BXC_SITES_TYPE, false,
     "how Fusion describes the method's output, or a scalar argument", fusion_keys, N(fusion_keys),
     BXC_MORE_NONE},
    {"backward", METHOD, true, "the method's gradient per tensor argument", backward_keys, N(backward_keys),
     BXC_MORE_TENSOR_ARGS},
    {"cfg", BXC_SITES_ALL & ~PARAM, false, "compile only when the condition holds", cfg_keys, N(cfg_keys),
     BXC_MORE_NONE},
    {"cube", BIT(BXC_SITE_FN) | BIT(BXC_SITE_IMPL), false, "a GPU kernel (or helper) lowered to the kernel IR",
     cube_keys, N(cube_keys), BXC_MORE_COMPTIMES},
    {"comptime", PARAM, false, "a kernel parameter fixed when the kernel is instantiated", NULL, 0,
     BXC_MORE_NONE},
    {"doc", BXC_SITES_ALL, false, "documentation (what `///` comments become)", NULL, 0, BXC_MORE_NONE},
};
const uint32_t bxc_attr_count = N(bxc_attrs);

const bxc_attr_info *bxc_attr_find(const char *name) {
    for (uint32_t i = 0; name && i < bxc_attr_count; i++)
        if (strcmp(bxc_attrs[i].name, name) == 0) return &bxc_attrs[i];
    return NULL;
}

const bxc_attr_key *bxc_attr_key_find(const bxc_attr_info *a, const char *name, bxc_attr_site site,
                                      bxc_attr_key_form form) {
    for (uint32_t i = 0; a && name && i < a->nkeys; i++) {
        const bxc_attr_key *k = &a->keys[i];
        if (k->form == form && (k->sites & BIT(site)) && strcmp(k->name, name) == 0) return k;
    }
    return NULL;
}

uint32_t bxc_attr_key_names(const bxc_attr_info *a, bxc_attr_site site, const char **out, uint32_t cap) {
    uint32_t n = 0;
    for (uint32_t i = 0; a && i < a->nkeys; i++) {
        if (!(a->keys[i].sites & BIT(site))) continue;
        bool seen = false;
        for (uint32_t j = 0; j < n; j++) seen |= strcmp(out[j], a->keys[i].name) == 0;
        if (!seen && n < cap) out[n++] = a->keys[i].name;
    }
    return n;
}

const char *bxc_attr_key_list(const bxc_attr_info *a, bxc_attr_site site, char *buf, uint32_t cap) {
    const char *names[32];
    uint32_t n = bxc_attr_key_names(a, site, names, N(names)), len = 0;
    if (cap) buf[0] = '\0';
    for (uint32_t i = 0; i < n && len < cap; i++) {
        const char *sep = i == 0 ? "" : i + 1 == n ? " and " : ", ";
        int w = snprintf(buf + len, cap - len, "%s`%s`", sep, names[i]);
        if (w < 0) break;
        len += (uint32_t)w;
    }
    return buf;
}
