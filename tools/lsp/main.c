/* main.c — bext-lsp: the language server for .bext files, on stdio. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "lsp.h"

/* Every edit frees the document's last unit and builds the next one of
 * about the same size.  glibc would hand the freed arena blocks back to
 * the kernel (blocks past the mmap threshold, a heap top past the trim
 * threshold) and fault them in again on the next check: on the 1,000-
 * method bench file that was half the wall time of an edit (system time
 * and page faults; docs/frontend.md).  Keep them for the next check
 * instead: the process then holds its largest check's memory, which the
 * RSS test bounds (tests/lsp). */
static void keep_freed_memory(void) {
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 32 << 20);   /* glibc's largest */
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}

static int usage(FILE *to, int rc) {
    fputs("usage: bext-lsp [--stdio] [-I DIR]... [--stdlib DIR] [--memory-limit BYTES]\n"
          "A language server (LSP 3.17) for .bext files; it speaks JSON-RPC on stdin and\n"
          "stdout, and is started by an editor (README.md, \"Editor set-up\").\n"
          "  --stdio                 the transport (the only one; accepted for clients that pass it)\n"
          "  -I DIR                  also search DIR for `use`d modules (like bextc -I)\n"
          "  --stdlib DIR            the standard library directory (else as bextc finds it)\n"
          "  --memory-limit BYTES    memory one document's check may use (default 1 GiB)\n"
          "  --help, --version\n", to);
    return rc;
}

int main(int argc, char **argv) {
    keep_freed_memory();
    lsp_server s;
    lsp_server_init(&s, stdout, stderr);
    int rc = -1;
    for (int i = 1; i < argc && rc < 0; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0) {
            rc = usage(stdout, 0);
        } else if (strcmp(a, "--version") == 0) {
            printf("bext-lsp %s\n", BEXT_VERSION);
            rc = 0;
        } else if (strcmp(a, "--stdio") == 0) {
            continue;
        } else if (strcmp(a, "-I") == 0 && v) {
            bxc_ws_add_include_dir(&s.ws, v), i++;
        } else if (strncmp(a, "-I", 2) == 0 && a[2]) {
            bxc_ws_add_include_dir(&s.ws, a + 2);
        } else if (strcmp(a, "--stdlib") == 0 && v) {
            bxc_ws_set_stdlib_dir(&s.ws, v), i++;
        } else if (strcmp(a, "--memory-limit") == 0 && v) {
            char *end;
            unsigned long long n = strtoull(v, &end, 10);
            if (*end || !*v) {
                fprintf(stderr, "bext-lsp: --memory-limit: expected a number of bytes, found `%s`\n", v);
                rc = 2;
            }
            s.ws.check_limit = (size_t)n;
            i++;
        } else {
            fprintf(stderr, "bext-lsp: unknown option `%s`\n", a);
            rc = usage(stderr, 2);
        }
    }
    if (rc < 0) rc = lsp_serve(&s, stdin);
    lsp_server_free(&s);
    return rc;
}
