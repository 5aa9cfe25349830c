/* fuzz_kir.c — libFuzzer target for the kernel IR's serialized form
 * (runtime/kir compiled into this target with coverage).  An input is a
 * payload: the target wraps it in a valid header (magic, version, length,
 * checksum) so the fuzzer explores the parser rather than the checksum;
 * inputs starting with 0xFF go in raw, for the header checks.  A blob
 * must be accepted or rejected with a diagnostic; an accepted kernel is
 * printed and verified, and one that verifies is round-tripped
 * (print(deserialize(serialize(k))) must equal print(k): the serializer's
 * contract covers verified kernels only) and folded.  Any crash,
 * sanitizer report, leak or hang is a finding. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bxk.h"

static char *reprint(const struct bxk_kernel *k) {
  size_t n;
  uint8_t *blob = bxk_serialize(k, &n);
  if (!blob) return NULL;
  struct bxk_diags ds = {0};
  struct bxk_kernel *k2 = bxk_deserialize(blob, n, &ds);
  free(blob);
  if (!k2) abort(); /* what we wrote, we read */
  char *s = bxk_print_alloc(k2);
  bxk_kernel_free(k2);
  return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *blob;
  size_t n;
  if (size && data[0] == 0xFF) {
    n = size - 1;
    blob = malloc(n ? n : 1);
    memcpy(blob, data + 1, n);
  } else {
    n = size + 16;
    blob = malloc(n);
    memcpy(blob, "BXKIR\0", 6);
    blob[6] = BXK_FORMAT_VERSION & 0xff, blob[7] = BXK_FORMAT_VERSION >> 8;
    uint32_t sum = bxk_checksum(data, size);
    for (int i = 0; i < 4; i++) blob[8 + i] = (uint8_t)(size >> (8 * i)), blob[12 + i] = (uint8_t)(sum >> (8 * i));
    memcpy(blob + 16, data, size);
  }
  struct bxk_diags ds = {0};
  struct bxk_kernel *k = bxk_deserialize(blob, n, &ds);
  free(blob);
  if (!k) {
    if (ds.n == 0) abort(); /* a rejection always says why */
    return 0;
  }
  /* The printer prints anything; the serializer, like every other
   * consumer, takes verified kernels only (bxk.h), so the round trip is
   * checked on those. */
  char *a = bxk_print_alloc(k);
  if (!a) abort();
  if (bxk_verify(k, &ds)) {
    char *b = reprint(k);
    if (!b || strcmp(a, b) != 0) abort();
    free(b);
    bxk_fold(k);
    if (!bxk_verify(k, &ds)) abort(); /* folding keeps a kernel valid */
  }
  free(a);
  bxk_kernel_free(k);
  return 0;
}
