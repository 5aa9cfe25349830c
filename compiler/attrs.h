/* attrs.h — the attributes of `.bext` files (language.md §3-§8) as one
 * table: each attribute's name, the sites it may go on, whether it may be
 * given twice, and the keys it takes inside its parentheses.  The checker
 * validates against it (check_attrs.c placement, check_sig.c's fusion
 * keys, the derivable traits) and bext-lsp completes from it
 * (tools/lsp/complete.c); neither keeps a list of its own.  What a key
 * *means* stays with the checker code that reads it. */
#ifndef BXC_ATTRS_H
#define BXC_ATTRS_H

#include <stdbool.h>
#include <stdint.h>

/* Where an attribute is written.  ORDER SITE: bxc_site_names. */
typedef enum bxc_attr_site {
    BXC_SITE_FN,        /* a free fn, or a fn of an `impl` block */
    BXC_SITE_STRUCT,
    BXC_SITE_ENUM,
    BXC_SITE_ALIAS,     /* `type X = ...;` */
    BXC_SITE_TRAIT,
    BXC_SITE_METHOD,    /* a method of a trait */
    BXC_SITE_PARAM,     /* a parameter of a method or fn */
    BXC_SITE_FIELD,
    BXC_SITE_VARIANT,
    BXC_SITE_USE,
    BXC_SITE_IMPL,
    BXC_SITE_COUNT
} bxc_attr_site;

#define BXC_SITE_BIT(s) (1u << (s))
#define BXC_SITES_TYPE (BXC_SITE_BIT(BXC_SITE_STRUCT) | BXC_SITE_BIT(BXC_SITE_ENUM) | \
                        BXC_SITE_BIT(BXC_SITE_ALIAS))
#define BXC_SITES_ITEM (BXC_SITES_TYPE | BXC_SITE_BIT(BXC_SITE_FN) | BXC_SITE_BIT(BXC_SITE_TRAIT) | \
                        BXC_SITE_BIT(BXC_SITE_USE) | BXC_SITE_BIT(BXC_SITE_IMPL))
#define BXC_SITES_ALL (BXC_SITES_ITEM | BXC_SITE_BIT(BXC_SITE_METHOD) | BXC_SITE_BIT(BXC_SITE_PARAM) | \
                       BXC_SITE_BIT(BXC_SITE_FIELD) | BXC_SITE_BIT(BXC_SITE_VARIANT))

/* "a function", "a struct", ... for messages. */
const char *bxc_site_name(bxc_attr_site s);

/* How a key is written inside the attribute's parentheses. */
typedef enum bxc_attr_key_form {
    BXC_KEY_FLAG,     /* a bare name: `default`, `helper`, `scalar` */
    BXC_KEY_ASSIGN,   /* `name = expr`: `dtype = ..`, `feature = ".."` */
    BXC_KEY_CALL,     /* `name(...)`: cfg's `not(..)`, `any(..)`, `all(..)` */
    BXC_KEY_NAME,     /* one name of a list: derive's traits, selectors */
} bxc_attr_key_form;

typedef struct bxc_attr_key {
    const char *name;
    bxc_attr_key_form form;
    unsigned sites;           /* BXC_SITE_BIT mask of where the key is valid */
    const char *doc;          /* one line, for completion and help */
} bxc_attr_key;

/* What goes inside an attribute's parentheses besides its table keys:
 * names that come from the annotated item itself. */
typedef enum bxc_attr_more {
    BXC_MORE_NONE,
    BXC_MORE_COMPTIMES,       /* cube: the kernel's `#[comptime]` params and type params */
    BXC_MORE_TENSOR_ARGS,     /* backward: `arg = gradient` per tensor argument */
} bxc_attr_more;

typedef struct bxc_attr_info {
    const char *name;
    unsigned sites;           /* BXC_SITE_BIT mask */
    bool once;                /* describes one thing: given twice is an error */
    const char *doc;          /* one line */
    const bxc_attr_key *keys; /* NULL: takes no table keys */
    uint32_t nkeys;
    bxc_attr_more more;
} bxc_attr_info;

extern const bxc_attr_info bxc_attrs[];
extern const uint32_t bxc_attr_count;

/* The attribute called `name`, or NULL. */
const bxc_attr_info *bxc_attr_find(const char *name);
/* The key `name` of `a` valid at `site` in `form`, or NULL. */
const bxc_attr_key *bxc_attr_key_find(const bxc_attr_info *a, const char *name, bxc_attr_site site,
                                      bxc_attr_key_form form);
/* The distinct names of a's keys valid at `site` (into out[cap]), for
 * did-you-mean and help lists; returns how many. */
uint32_t bxc_attr_key_names(const bxc_attr_info *a, bxc_attr_site site, const char **out, uint32_t cap);
/* Those names as prose, "`dtype`, `shape`, `meta`, `default` and `id`",
 * written into buf[cap]; returns buf. */
const char *bxc_attr_key_list(const bxc_attr_info *a, bxc_attr_site site, char *buf, uint32_t cap);

#endif
