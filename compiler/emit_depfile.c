/* emit_depfile.c — the Make-syntax depfile of `bextc -o DIR -MD`.
 *
 * DIR/<stem>.c and DIR/<stem>.h depend on every .bext file the unit read
 * (the root, its imports, stdlib modules: unit->sources lists them in
 * reading order), so Ninja and Make rerun bextc when any of them changes.
 * One target line for both outputs, as compilers write them. */
#include "emit_int.h"

/* A path in a Make rule: spaces and `#` escaped, `$` doubled. */
static void dep_path(bxc_emit_buf *b, const char *p) {
    for (; *p; p++) {
        if (*p == ' ' || *p == '#') bxc_emit_printf(b, "\\%c", *p);
        else if (*p == '$') bxc_emit_puts(b, "$$");
        else bxc_emit_printf(b, "%c", *p);
    }
}

void bxc_emit_depfile(const bxc_unit *u, const char *c_path, const char *h_path, bxc_emit_buf *out) {
    dep_path(out, c_path);
    bxc_emit_puts(out, " ");
    dep_path(out, h_path);
    bxc_emit_puts(out, ":");
    for (uint32_t i = 0; i < u->sources.count; i++) {
        bxc_emit_puts(out, " \\\n  ");
        dep_path(out, u->sources.files[i]->path);
    }
    bxc_emit_puts(out, "\n");
}
