/* fuzz_lsp.c — libFuzzer target for bext-lsp's input side: every input is
 * a byte stream on the server's stdin (framing, JSON, methods, params,
 * positions, document texts and edits), served to its end by lsp_serve
 * as the program does (tools/lsp/, compiled into this target with
 * coverage).  Any crash, sanitizer report, leak, hang or runaway memory
 * is a finding.  Seeds (corpus-lsp/) are whole sessions. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "lsp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static FILE *out;
  if (!out) out = fopen("/dev/null", "w");
  if (!size) return 0;   /* fmemopen refuses an empty buffer */
  FILE *in = fmemopen((void *)data, size, "r");
  if (!in) return 0;
  lsp_server s;
  lsp_server_init(&s, out, NULL);
  s.ws.check_limit = (size_t)64 << 20;
  int rc = lsp_serve(&s, in);
  if (rc != 0 && rc != 1) abort();   /* the only exit statuses there are */
  lsp_server_free(&s);
  fclose(in);
  return 0;
}
