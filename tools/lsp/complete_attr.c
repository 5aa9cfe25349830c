/* complete_attr.c — completion inside `#[...]`: the attribute names valid
 * at the site the attribute annotates, and inside `#[name(` that
 * attribute's keys (its fusion form keys, derivable traits, selectors,
 * cfg conditions), all from the one table compiler/attrs.h, plus names
 * the annotated fn itself supplies (a kernel's `#[comptime]` parameters
 * and type parameters for `#[cube(`, a method's tensor arguments for
 * `#[backward(`), read from the last check's tree.
 *
 * The text is read with the compiler's own lexer (so comments and strings
 * are skipped as the parser skips them), not the tree: an attribute being
 * typed rarely parses, and the site has to be known all the same.  A
 * stack of open brackets says where the cursor is: inside an attribute,
 * which call's parentheses, and what encloses the attribute (a trait's
 * braces: a method; a fn's parentheses: a parameter; the top level: the
 * item that follows). */
#include "lsp.h"

#include <string.h>

#include "attrs.h"
#include "lex.h"
#include "parser.h"

/* LSP CompletionItemKind values. */
enum { CK_PROPERTY = 10, CK_VALUE = 12, CK_KEYWORD = 14, CK_VARIABLE = 6, CK_TYPE_PARAMETER = 25 };

/* What a `{` or `(` belongs to, from the keyword before it. */
typedef enum owner { OWN_NONE, OWN_FN, OWN_STRUCT, OWN_ENUM, OWN_TRAIT, OWN_IMPL } owner;

typedef struct frame {
    int open;              /* TK_LPAREN, TK_LBRACKET, TK_LBRACE; TK_HASH: an attribute's `#[` */
    owner own;             /* what opened it (the keyword pending at the bracket) */
    uint32_t name, nlen;   /* TK_LPAREN: the identifier right before it (a call); attribute: its name */
} frame;

#define MAX_DEPTH 256

typedef struct scan {
    frame st[MAX_DEPTH];
    uint32_t depth;        /* frames in use; deeper nesting is counted, not kept */
    uint32_t lost;         /* frames past MAX_DEPTH */
    bool straddles;        /* the cursor is inside a token (a string, a number) */
    int last;              /* kind of the last token before the word */
    uint32_t last_at;      /* its offset */
} scan;

static owner owner_of(int tk) {
    switch (tk) {
    case TK_FN: return OWN_FN;
    case TK_STRUCT: return OWN_STRUCT;
    case TK_ENUM: return OWN_ENUM;
    case TK_TRAIT: return OWN_TRAIT;
    case TK_IMPL: return OWN_IMPL;
    default: return OWN_NONE;
    }
}

static void push(scan *s, int open, owner own, uint32_t name, uint32_t nlen) {
    if (s->depth == MAX_DEPTH) {
        s->lost++;
        return;
    }
    s->st[s->depth++] = (frame){open, own, name, nlen};
}

/* A closing bracket: back to below the innermost frame it closes (an
 * attribute still being typed closes with the brackets around it); a
 * closer nothing opened is ignored. */
static void pop(scan *s, int close) {
    if (s->lost) {
        s->lost--;
        return;
    }
    int open = close == TK_RPAREN ? TK_LPAREN : close == TK_RBRACE ? TK_LBRACE : TK_LBRACKET;
    for (uint32_t i = s->depth; i-- > 0;)
        if (s->st[i].open == open || (open == TK_LBRACKET && s->st[i].open == TK_HASH)) {
            s->depth = i;
            return;
        }
}

/* Tokens no attribute contains: one still open when they come was left
 * half-typed, and ends there. */
static bool starts_item(int tk) {
    return tk == TK_FN || tk == TK_STRUCT || tk == TK_ENUM || tk == TK_TYPE || tk == TK_TRAIT ||
           tk == TK_USE || tk == TK_IMPL || tk == TK_PUB || tk == TK_HASH;
}

static void close_attr(scan *s) {
    if (s->lost) return;
    for (uint32_t i = s->depth; i-- > 0;)
        if (s->st[i].open == TK_HASH) {
            s->depth = i;
            return;
        }
}

/* Lexes src up to `word` (the start of the word being typed). */
static void scan_to(scan *s, const bxc_source *src, uint32_t word) {
    bxc_arena scratch;
    bxc_arena_init(&scratch);
    bxc_diag_list diags;   /* lexical errors: the check reports them */
    bxc_diag_list_init(&diags, &scratch);
    bxc_lexer lx;
    bxc_lex_init(&lx, src, &diags);
    owner pending = OWN_NONE;
    int prev = BXC_TK_EOF;
    bxc_span prev_span = {0, 0, 0};
    bool attr_open = false;   /* the last token was the `[` of `#[` */
    for (;;) {
        bxc_token t = bxc_lex_next(&lx);
        if (t.kind == BXC_TK_EOF || t.span.offset >= word) break;
        if (t.span.offset + t.span.length > word) {
            s->straddles = true;
            break;
        }
        if (starts_item(t.kind)) close_attr(s);
        owner o = owner_of(t.kind);
        if (o != OWN_NONE) pending = o;
        switch (t.kind) {
        case TK_LBRACKET:
            if (prev == TK_HASH && prev_span.offset + prev_span.length == t.span.offset) {
                push(s, TK_HASH, OWN_NONE, 0, 0);
                attr_open = true;
                prev = t.kind;
                prev_span = t.span;
                s->last = t.kind;
                s->last_at = t.span.offset;
                continue;
            }
            push(s, TK_LBRACKET, OWN_NONE, 0, 0);
            break;
        case TK_LPAREN:
            push(s, TK_LPAREN, pending, prev == TK_IDENT ? prev_span.offset : 0,
                 prev == TK_IDENT ? prev_span.length : 0);
            break;
        case TK_LBRACE:
            push(s, TK_LBRACE, pending, 0, 0);
            pending = OWN_NONE;
            break;
        case TK_RPAREN:
        case TK_RBRACKET:
        case TK_RBRACE:
            pop(s, t.kind);
            if (t.kind == TK_RBRACE) pending = OWN_NONE;
            break;
        case TK_SEMI: pending = OWN_NONE; break;
        case TK_IDENT:
            if (attr_open && !s->lost && s->depth) {
                s->st[s->depth - 1].name = t.span.offset;
                s->st[s->depth - 1].nlen = t.span.length;
            }
            break;
        default: break;
        }
        attr_open = false;
        prev = t.kind;
        prev_span = t.span;
        s->last = t.kind;
        s->last_at = t.span.offset;
    }
    bxc_arena_free_all(&scratch);
}

/* The innermost attribute frame, or -1. */
static int attr_frame(const scan *s) {
    if (s->lost) return -1;   /* too deep to say */
    for (uint32_t i = s->depth; i-- > 0;)
        if (s->st[i].open == TK_HASH) return (int)i;
    return -1;
}

/* The item keyword after `from`, the word being typed inside an attribute
 * `open` brackets deep (past the rest of this attribute, other attributes,
 * `pub`), as a site mask; every item site when nothing says.  *item_at:
 * where that item starts (UINT32_MAX: none). */
static unsigned site_after(const bxc_source *src, uint32_t from, int open, uint32_t *item_at) {
    bxc_arena scratch;
    bxc_arena_init(&scratch);
    bxc_diag_list diags;
    bxc_diag_list_init(&diags, &scratch);
    bxc_lexer lx;
    bxc_lex_init(&lx, src, &diags);
    unsigned sites = BXC_SITES_ITEM;
    *item_at = UINT32_MAX;
    int depth = open, prev = BXC_TK_EOF;
    for (;;) {
        bxc_token t = bxc_lex_next(&lx);
        if (t.kind == BXC_TK_EOF) break;
        if (t.span.offset < from) continue;
        /* the rest of this attribute, to its `]`; one still open (being
         * typed) ends where an item starts on a later line */
        bool newline = memchr(src->text + from, '\n', t.span.offset - from) != NULL;
        if (depth > 0 && !(newline && starts_item(t.kind) && prev != TK_HASH)) {
            if (t.kind == TK_LPAREN || t.kind == TK_LBRACKET || t.kind == TK_LBRACE) depth++;
            if (t.kind == TK_RPAREN || t.kind == TK_RBRACKET || t.kind == TK_RBRACE) depth--;
            prev = t.kind;
            continue;
        }
        depth = 0;
        if (t.kind == TK_HASH || t.kind == TK_PUB) {   /* another attribute, `pub(crate)` */
            prev = t.kind;
            continue;
        }
        if ((prev == TK_HASH && t.kind == TK_LBRACKET) || (prev == TK_PUB && t.kind == TK_LPAREN)) {
            depth = 1;
            prev = t.kind;
            continue;
        }
        switch (t.kind) {
        case TK_FN: sites = BXC_SITE_BIT(BXC_SITE_FN); break;
        case TK_STRUCT: sites = BXC_SITE_BIT(BXC_SITE_STRUCT); break;
        case TK_ENUM: sites = BXC_SITE_BIT(BXC_SITE_ENUM); break;
        case TK_TYPE: sites = BXC_SITE_BIT(BXC_SITE_ALIAS); break;
        case TK_TRAIT: sites = BXC_SITE_BIT(BXC_SITE_TRAIT); break;
        case TK_USE: sites = BXC_SITE_BIT(BXC_SITE_USE); break;
        case TK_IMPL: sites = BXC_SITE_BIT(BXC_SITE_IMPL); break;
        default: break;
        }
        *item_at = t.span.offset;
        break;
    }
    bxc_arena_free_all(&scratch);
    return sites;
}

/* The sites an attribute opened by frame `a` can annotate. */
static unsigned site_of(const scan *s, int a, const bxc_source *src, uint32_t word, uint32_t *item_at) {
    unsigned after = site_after(src, word, (int)(s->depth - (uint32_t)a), item_at);
    for (int i = a - 1; i >= 0; i--) {
        const frame *f = &s->st[i];
        if (f->open == TK_HASH) continue;
        if (f->open == TK_LPAREN) {
            if (f->own == OWN_STRUCT) return BXC_SITE_BIT(BXC_SITE_FIELD);   /* `struct S(#[..] A)` */
            for (int j = i - 1; j >= 0; j--)
                if (s->st[j].open == TK_LBRACE && s->st[j].own == OWN_ENUM)
                    return BXC_SITE_BIT(BXC_SITE_FIELD);
            return BXC_SITE_BIT(BXC_SITE_PARAM);
        }
        if (f->open != TK_LBRACE) return 0;
        switch (f->own) {
        case OWN_TRAIT: return BXC_SITE_BIT(BXC_SITE_METHOD);
        case OWN_IMPL: return BXC_SITE_BIT(BXC_SITE_FN);
        case OWN_STRUCT: return BXC_SITE_BIT(BXC_SITE_FIELD);
        case OWN_ENUM: {
            /* a variant, or a field of a struct variant (`{` inside the enum's) */
            for (int j = i - 1; j >= 0; j--)
                if (s->st[j].open == TK_LBRACE && s->st[j].own == OWN_ENUM)
                    return BXC_SITE_BIT(BXC_SITE_FIELD);
            return BXC_SITE_BIT(BXC_SITE_VARIANT);
        }
        default: return 0;   /* a body: no attributes there */
        }
    }
    return after;
}

static void add(cJSON *list, const char *label, int kind, const char *detail, const char *insert) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "label", label);
    cJSON_AddNumberToObject(o, "kind", kind);
    if (detail) cJSON_AddStringToObject(o, "detail", detail);
    if (insert) cJSON_AddStringToObject(o, "insertText", insert);
    cJSON_AddItemToArray(list, o);
}

static void keys(cJSON *list, const bxc_attr_info *a, unsigned sites) {
    for (uint32_t i = 0; a && i < a->nkeys; i++) {
        const bxc_attr_key *k = &a->keys[i];
        if (!(k->sites & sites)) continue;
        char label[64], insert[64];
        switch (k->form) {
        case BXC_KEY_ASSIGN:
            snprintf(label, sizeof label, "%s =", k->name);
            snprintf(insert, sizeof insert, "%s = ", k->name);
            add(list, label, CK_PROPERTY, k->doc, insert);
            break;
        case BXC_KEY_CALL:
            snprintf(label, sizeof label, "%s(..)", k->name);
            snprintf(insert, sizeof insert, "%s(", k->name);
            add(list, label, CK_KEYWORD, k->doc, insert);
            break;
        case BXC_KEY_FLAG: add(list, k->name, CK_KEYWORD, k->doc, NULL); break;
        case BXC_KEY_NAME: add(list, k->name, CK_VALUE, k->doc, NULL); break;
        }
    }
}

/* The fn whose name comes first at or after `at` in the last check's tree. */
static const bxc_fn *fn_after(const bxc_file *f, uint32_t at) {
    const bxc_fn *best = NULL;
    for (uint32_t i = 0; f && i < f->items.len; i++) {
        const bxc_item *it = f->items.items[i];
        const bxc_fn *one = it->kind == BXC_ITEM_FN ? it->fn : NULL;
        const bxc_fn_list *many = it->kind == BXC_ITEM_TRAIT ? &it->trait.methods
                                  : it->kind == BXC_ITEM_IMPL ? &it->impl.methods
                                                              : NULL;
        for (uint32_t k = 0; k < (one ? 1 : many ? many->len : 0); k++) {
            const bxc_fn *fn = one ? one : many->items[k];
            if (fn && fn->name.span.offset >= at && (!best || fn->name.span.offset < best->name.span.offset))
                best = fn;
        }
    }
    return best;
}

/* Names the annotated fn supplies (bxc_attr_more). */
static void more(cJSON *list, const bxc_attr_info *a, const bxc_fn *fn) {
    if (!fn || !a) return;
    char insert[160];
    if (a->more == BXC_MORE_COMPTIMES) {
        for (uint32_t i = 0; i < fn->generics.len; i++) {
            snprintf(insert, sizeof insert, "%s = [", fn->generics.items[i]->name.name);
            add(list, fn->generics.items[i]->name.name, CK_TYPE_PARAMETER, "the dtypes to instantiate it with",
                insert);
        }
        for (uint32_t i = 0; i < fn->params.len; i++) {
            const bxc_param *p = fn->params.items[i];
            bool ct = false;
            for (uint32_t k = 0; k < p->attrs.len; k++) ct |= bxc_path_is(p->attrs.items[k]->path, "comptime");
            if (!ct || !p->pat || !p->pat->name.name) continue;
            snprintf(insert, sizeof insert, "%s = ", p->pat->name.name);
            add(list, p->pat->name.name, CK_VARIABLE, "a `#[comptime]` parameter's value(s)", insert);
        }
    } else if (a->more == BXC_MORE_TENSOR_ARGS && fn->method) {
        for (uint32_t i = 0; i < fn->method->nparams; i++) {
            const bxc_method_param *p = &fn->method->params[i];
            if (p->cls != BXC_ARG_TENSOR) continue;
            snprintf(insert, sizeof insert, "%s = ", p->name);
            add(list, p->name, CK_VARIABLE, "the gradient of this tensor argument", insert);
        }
    }
}

bool lsp_complete_attr(const bxc_doc *d, uint32_t word, cJSON *list) {
    bxc_sources srcs;
    bxc_sources_init(&srcs);
    bxc_oom_point oom;
    bxc_oom_push(&oom);
    if (setjmp(oom.env)) {
        bxc_sources_free(&srcs);
        return false;
    }
    const bxc_source *src = bxc_sources_add_memory(&srcs, d->path, d->text, d->len);
    scan s = {0};
    scan_to(&s, src, word);
    int a = s.straddles ? -1 : attr_frame(&s);
    bool handled = a >= 0;
    if (handled) {
        const frame *af = &s.st[a];
        char name[64] = "";
        if (af->nlen && af->nlen < sizeof name) memcpy(name, src->text + af->name, af->nlen), name[af->nlen] = 0;
        uint32_t item_at;
        unsigned sites = site_of(&s, a, src, word, &item_at);
        if ((uint32_t)a + 1 == s.depth) {
            /* `#[` + the word: attribute names (nothing after a complete name) */
            if (s.last == TK_LBRACKET)
                for (uint32_t i = 0; i < bxc_attr_count; i++)
                    if (bxc_attrs[i].sites & sites) add(list, bxc_attrs[i].name, CK_KEYWORD, bxc_attrs[i].doc, NULL);
        } else if (s.last == TK_LPAREN || s.last == TK_COMMA) {
            /* a key position: of the attribute itself, or of a cfg condition */
            const frame *top = &s.st[s.depth - 1];
            char call[64] = "";
            if (top->open == TK_LPAREN && top->nlen && top->nlen < sizeof call)
                memcpy(call, src->text + top->name, top->nlen), call[top->nlen] = 0;
            const bxc_attr_info *cfg = bxc_attr_find("cfg");
            if ((uint32_t)a + 2 == s.depth && top->open == TK_LPAREN && strcmp(call, name) == 0) {
                const bxc_attr_info *info = bxc_attr_find(name);
                keys(list, info, sites);
                if (info && info->more != BXC_MORE_NONE && item_at != UINT32_MAX)
                    more(list, info, fn_after(bxc_doc_ast(d), item_at));
            } else if (top->open == TK_LPAREN &&
                       (strcmp(call, "cfg") == 0 || bxc_attr_key_find(cfg, call, BXC_SITE_FN, BXC_KEY_CALL))) {
                keys(list, cfg, BXC_SITES_ALL);
            } else {
                handled = false;   /* inside an expression: the general completion */
            }
        } else {
            handled = false;   /* after `=`, `.`, ...: a value, not a key */
        }
    }
    bxc_oom_pop(&oom);
    bxc_sources_free(&srcs);
    return handled;
}
