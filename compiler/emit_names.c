/* emit_names.c — the table of every C name the generator emits for a unit.
 *
 * The naming rules of docs/codegen.md (snake_case prefixes, `_flex`
 * suffixes, `<type>_release`, `stem_` helpers, UPPER tags...) are not
 * injective: `T::m_flex` and the Flex implementation of `T::m` are both
 * `t_m_flex`, types `Out` and `OUT` both give `out_release`.  C would then
 * call the wrong function or fail with an error about generated text.  So
 * every file-scope name is claimed here, with the .bext item that produced
 * it, before it is written; a second claim of the same name, or a name C
 * or the runtime reserves, is a located error naming both items. */
#include <string.h>

#include "diag.h"
#include "emit_int.h"

/* C keywords (C11 and C23), the standard typedefs and macros the generated
 * files see through their includes, and names of the C library the
 * generated code uses: a type or function with one of these names would
 * redefine or shadow it. */
static const char *const reserved[] = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
    "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
    "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
    "volatile", "while", "alignas", "alignof", "bool", "constexpr", "false", "nullptr", "static_assert",
    "thread_local", "true", "typeof", "typeof_unqual", "size_t", "ptrdiff_t", "wchar_t", "max_align_t",
    "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
    "intptr_t", "uintptr_t", "intmax_t", "uintmax_t", "NULL", "offsetof", "errno", "assert", "FILE",
    "va_list", "EOF", "main", "memset", "memcpy", "malloc", "free", "abort", "stdin", "stdout", "stderr",
    "INT8_MAX", "INT16_MAX", "INT32_MAX", "INT64_MAX", "UINT8_MAX", "UINT16_MAX", "UINT32_MAX",
    "UINT64_MAX", "SIZE_MAX", "PTRDIFF_MAX",
};

/* Why name is reserved, or NULL if it is not. */
static const char *reserved_why(const char *name) {
    /* Generated names are mostly long (`prefix_method_flex`); the longest
     * reserved word has 13 characters, so those skip the scan. */
    if (strlen(name) <= 13)
        for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
            if (reserved[i][0] == name[0] && strcmp(reserved[i], name) == 0)
                return "a C keyword or a name of the C headers the generated files include";
    if (strncmp(name, "bext_", 5) == 0 || strncmp(name, "BEXT_", 5) == 0 || strcmp(name, "bext") == 0)
        return "reserved for the bext runtime and the generator (`bext_` / `BEXT_` prefix)";
    if (name[0] == '_' && (name[1] == '_' || (name[1] >= 'A' && name[1] <= 'Z')))
        return "reserved by the C standard (`__` or `_` + upper-case letter)";
    return NULL;
}

static bool span_known(bxc_span s) { return s.file != BXC_NO_FILE; }

/* FNV-1a: short identifiers, no adversary worth a keyed hash. */
static uint32_t name_hash(const char *s) {
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* A claim's description, formatted (for a message or a comparison). */
static const char *what_of(bxc_emit_ctx *cx, const char *fmt, const char *a, const char *b) {
    if (!a) return fmt;
    return bxc_arena_printf(cx->a, fmt, a, b ? b : "");
}

static bool same_what(bxc_emit_ctx *cx, const bxc_emit_name *o, const char *fmt, const char *a, const char *b) {
    if (o->what_fmt == fmt && o->what_a == a && o->what_b == b) return true;
    return strcmp(what_of(cx, o->what_fmt, o->what_a, o->what_b), what_of(cx, fmt, a, b)) == 0;
}

bool bxc_emit_claim(bxc_emit_ctx *cx, const char *cname, bxc_span span, const char *what) {
    return bxc_emit_claim_fmt(cx, cname, span, "%s", what, NULL);
}

bool bxc_emit_claim_fmt(bxc_emit_ctx *cx, const char *cname, bxc_span span, const char *fmt, const char *wa,
                        const char *wb) {
    const char *why = reserved_why(cname);
    if (why) {
        bxc_diag *d = bxc_diag_add(&cx->u->diags, BXC_SEV_ERROR, bxc_diag_code_str(BXC_EMIT_E_CNAME), span,
                                   "%s would be the C name `%s`, which is %s", what_of(cx, fmt, wa, wb), cname, why);
        bxc_diag_set_help(&cx->u->diags, d,
                          "rename the .bext item (docs/codegen.md, \"Names\", says how C names are formed)");
        cx->ok = false;
        return false;
    }
    /* One lookup in the hash index: a unit with thousands of methods
     * claims tens of thousands of names, and a linear scan was quadratic. */
    uint32_t mask = cx->name_nslots - 1, h = name_hash(cname);
    for (uint32_t k = cx->name_nslots ? h & mask : 0; cx->name_nslots && cx->name_slots[k]; k = (k + 1) & mask) {
        const bxc_emit_name *o = &cx->names[cx->name_slots[k] - 1];
        if (o->hash != h || strcmp(o->cname, cname) != 0) continue;
        if (o->span.file == span.file && o->span.offset == span.offset && same_what(cx, o, fmt, wa, wb))
            return true;   /* the same item claimed again (e.g. a type met twice) */
        /* Report at the second item, or at the first when only it has a
         * location (tuple types have none). */
        const char *what = what_of(cx, fmt, wa, wb), *owhat = what_of(cx, o->what_fmt, o->what_a, o->what_b);
        bool swap = !span_known(span) && span_known(o->span);
        bxc_span at = swap ? o->span : span, other = swap ? span : o->span;
        const char *first = swap ? what : owhat, *second = swap ? owhat : what;
        bxc_diag *d = bxc_diag_add(&cx->u->diags, BXC_SEV_ERROR, bxc_diag_code_str(BXC_EMIT_E_CNAME), at,
                                   "%s and %s would both be the C name `%s`", second, first, cname);
        if (span_known(other)) bxc_diag_add_note(&cx->u->diags, d, other, "%s is here", first);
        bxc_diag_set_help(&cx->u->diags, d,
                          "rename one of them so that their C names differ (docs/codegen.md, \"Names\", says how "
                          "C names are formed)");
        cx->ok = false;
        return false;
    }
    if (cx->nnames == cx->capnames) {
        uint32_t nc = cx->capnames ? cx->capnames * 2 : 64;
        bxc_emit_name *n = bxc_arena_alloc(cx->a, nc * sizeof *n);
        if (cx->nnames) memcpy(n, cx->names, cx->nnames * sizeof *n);
        cx->names = n;
        cx->capnames = nc;
    }
    cx->names[cx->nnames++] = (bxc_emit_name){cname, span, fmt, wa, wb, h};
    if (2 * cx->nnames > cx->name_nslots) {
        /* Rebuild at twice the size; the arena keeps the old array. */
        uint32_t ns = cx->name_nslots ? cx->name_nslots * 2 : 256;
        while (2 * cx->nnames > ns) ns *= 2;
        uint32_t *slots = bxc_arena_alloc(cx->a, ns * sizeof *slots);
        memset(slots, 0, ns * sizeof *slots);
        for (uint32_t i = 0; i < cx->nnames; i++) {
            uint32_t k = cx->names[i].hash & (ns - 1);
            while (slots[k]) k = (k + 1) & (ns - 1);
            slots[k] = i + 1;
        }
        cx->name_slots = slots;
        cx->name_nslots = ns;
    } else {
        uint32_t k = h & mask;
        while (cx->name_slots[k]) k = (k + 1) & mask;
        cx->name_slots[k] = cx->nnames;
    }
    return true;
}
