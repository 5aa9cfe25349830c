/* emit_kir_c.c — `bextc FILE.bext --emit=kir-c`: every `#[cube]`
 * instantiation of the root module as serialized kernel IR in a C file
 * (docs/kernels.md "Embedded IR").  libbext embeds the stdlib kernels this
 * way at build time (each stdlib/cube file -> build/runtime/gen/kir/), and a
 * device compiles an instantiation from its bytes on first use through
 * its kernel_prepare: one form serves the CPU JIT now and the GPU
 * runtimes later.  Generated extension C will carry the same tables.
 *
 * Each kernel is constant-folded first (bxk_fold: comptime branches are
 * decided, untaken ones dropped), verified again and serialized; the
 * output names every array after the file's stem, so tables of several
 * files link into one program. */
#include <stdio.h>
#include <stdlib.h>

#include "bxk.h"
#include "check.h"
#include "cube.h"
#include "diag.h"
#include "diag_codes.h"
#include "emit.h"
#include "emit_int.h"
#include "module.h"

bool bxc_emit_kir_c(struct bxc_unit *u, FILE *out) {
    const char *stem = bxc_emit_c_identifier(&u->arena, bxc_emit_stem(u));
    bxc_emit_buf b = {0};
    bxc_emit_printf(&b,
                    "/* %s.kir.c — written by `bextc --emit=kir-c`; do not edit.\n"
                    " * Serialized kernel IR (format version %d), one array per instantiation\n"
                    " * of the `#[cube]` kernels of %s.bext (docs/kernels.md \"Embedded IR\"). */\n"
                    "#include <bext/bext.h>\n",
                    stem, BXK_FORMAT_VERSION, bxc_emit_stem(u));
    bool ok = bxc_emit_kir_rows(u, &b, bxc_arena_printf(&u->arena, "bxk_embed_%s", stem), false, false);
    if (ok && b.data) fputs(b.data, out);
    bxc_emit_buf_free(&b);
    return ok;
}
