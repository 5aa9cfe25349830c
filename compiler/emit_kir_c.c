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
#include "module.h"

static void put_bytes(FILE *out, const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s0x%02x,", i % 16 == 0 ? "\n  " : "", p[i]);
    fputc('\n', out);
}

bool bxc_emit_kir_c(struct bxc_unit *u, FILE *out) {
    struct bxk_kernel **ks;
    uint32_t n;
    if (!bxc_cube_lower_root(u, &ks, &n)) return false;
    const char *stem = bxc_emit_c_identifier(&u->arena, bxc_emit_stem(u));
    bool ok = true;
    fprintf(out,
            "/* %s.kir.c — written by `bextc --emit=kir-c`; do not edit.\n"
            " * Serialized kernel IR (format version %d), one array per instantiation\n"
            " * of the `#[cube]` kernels of %s.bext (docs/kernels.md \"Embedded IR\"). */\n"
            "#include <stdint.h>\n\n"
            "#ifndef BXK_EMBED_DEFINED\n#define BXK_EMBED_DEFINED\n"
            "struct bxk_embed {\n  const char *name;\n  const uint8_t *ir;\n  uint32_t size;\n};\n"
            "#endif\n",
            stem, BXK_FORMAT_VERSION, bxc_emit_stem(u));
    for (uint32_t i = 0; i < n && ok; i++) {
        bxk_fold(ks[i]);
        struct bxk_diags ds = {0};
        size_t len = 0;
        uint8_t *bytes = bxk_verify(ks[i], &ds) ? bxk_serialize(ks[i], &len) : NULL;
        if (!bytes) {
            bxc_diag_error(&u->diags, CHK_E_CUBE_LOWER, (bxc_span){BXC_NO_FILE, 0, 0},
                           "kernel `%s`: %s", ks[i]->name,
                           ds.n ? ds.d[0].msg : "out of memory serializing the IR");
            ok = false;
            break;
        }
        fprintf(out, "\n/* %s */\nstatic const uint8_t %s_kir_%u[%zu] = {", ks[i]->name, stem, i, len);
        put_bytes(out, bytes, len);
        fputs("};\n", out);
        free(bytes);
    }
    if (ok) {
        fprintf(out, "\nconst struct bxk_embed bxk_embed_%s[%u] = {\n", stem, n + 1);
        for (uint32_t i = 0; i < n; i++)
            fprintf(out, "  {\"%s\", %s_kir_%u, sizeof %s_kir_%u},\n", ks[i]->name, stem, i, stem, i);
        fputs("  {0, 0, 0},\n};\n", out);
    }
    for (uint32_t i = 0; i < n; i++) bxk_kernel_free(ks[i]);
    free(ks);
    return ok;
}
