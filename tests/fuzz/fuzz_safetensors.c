/* fuzz_safetensors.c — libFuzzer target for the safetensors reader
 * (runtime/src/safetensors.c, compiled into this target with coverage
 * instrumentation; the rest of libbext is linked as is).  Every input is
 * a file in memory: bext_load_bytes must accept it or reject it with a
 * message, and an accepted file's tensors must read back.  Any crash,
 * sanitizer report, leak, hang or runaway memory is a finding. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bext/bext.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const bext_device *dev;
  if (!dev) dev = bext_device_get("ndarray");
  uint64_t errs = bext_error_count();
  bext_tensor_file *f = bext_load_bytes(data, size, dev);
  if (!f) {
    /* a rejection always says why, naming the input */
    if (bext_error_count() == errs || strncmp(bext_last_error(), "bext_load_bytes: <memory>: ", 27) != 0) abort();
    return 0;
  }
  for (int i = 0; i < bext_file_count(f); i++) {
    bext_tensor *t = bext_file_tensor(f, i);
    size_t n = (size_t)bext_numel(t) * bext_dtype_size(bext_dtype_of(t));
    void *buf = malloc(n ? n : 1);
    if (!bext_read(t, buf, n)) abort();
    free(buf);
    if (bext_file_get(f, bext_file_name(f, i)) != t) abort();   /* lookup by name finds it */
    bext_release(t);
    bext_release(t);   /* the reference bext_file_get returned */
  }
  bext_file_close(f);
  return 0;
}
