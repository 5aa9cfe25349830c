/* builtins.c — the rows of builtins.h's tables and their look-ups. */
#include "builtins.h"

#include <string.h>

#include "types.h"

const bxc_int_info bxc_int_kinds[] = {
#define X(n, s, b, sg, lo, hi, c, g) {s, b, sg, lo, hi, c, g},
    BXC_INT_KINDS(X)
#undef X
};
_Static_assert(sizeof bxc_int_kinds / sizeof *bxc_int_kinds == BXC_INT_KIND_COUNT, "ORDER BXC_INT_KIND");

int bxc_int_kind_find(const char *name, uint32_t len) {
    for (int k = 0; k < BXC_INT_KIND_COUNT; k++)
        if (strlen(bxc_int_kinds[k].name) == len && memcmp(bxc_int_kinds[k].name, name, len) == 0) return k;
    return -1;
}

const bxc_builtin_type bxc_builtin_types[] = {
#define T(s, kind, sub) {s, BXC_TYPE_##kind, sub},
#define I(n, s, b, sg, lo, hi, c, g) {s, BXC_TYPE_INT, BXC_##n},
    BXC_BUILTIN_TYPES_HEAD(T) BXC_INT_KINDS(I) BXC_BUILTIN_TYPES_TAIL(T)
#undef T
#undef I
};
const uint32_t bxc_builtin_type_count = sizeof bxc_builtin_types / sizeof *bxc_builtin_types;

const bxc_builtin_type *bxc_builtin_type_find(const char *name) {
    for (uint32_t i = 0; i < bxc_builtin_type_count; i++)
        if (strcmp(bxc_builtin_types[i].name, name) == 0) return &bxc_builtin_types[i];
    return NULL;
}

const bxc_builtin_method_info bxc_builtin_methods[BXC_BM_COUNT] = {
#define X(id, r, s, n, m, ret) [BXC_BM_##id] = {s, BXC_TYPE_##r, n, m, BXC_BRET_##ret},
    BXC_BUILTIN_METHODS(X)
#undef X
};

bxc_builtin_method bxc_builtin_method_find(unsigned recv, const char *name) {
    for (int i = 0; i < BXC_BM_COUNT; i++)
        if (bxc_builtin_methods[i].recv == recv && strcmp(bxc_builtin_methods[i].name, name) == 0)
            return (bxc_builtin_method)i;
    return BXC_BM_NONE;
}

bool bxc_builtin_method_mutates(const char *name) {
    for (int i = 0; i < BXC_BM_COUNT; i++)
        if (bxc_builtin_methods[i].mutates && strcmp(bxc_builtin_methods[i].name, name) == 0) return true;
    return false;
}

const char *const bxc_dtype_const_names[BXC_DT_COUNT] = {
#define X(id, s, c) [BXC_DT_##id] = s,
    BXC_DTYPE_CONSTS(X)
#undef X
};

const char *const bxc_dtype_const_c[BXC_DT_COUNT] = {
#define X(id, s, c) [BXC_DT_##id] = c,
    BXC_DTYPE_CONSTS(X)
#undef X
};
