/* llvm_bind.h — the JIT tests' one helper for a 1-D contiguous binding
 * (struct bxl_binding, bxl.h): data, len elements, rank 1, stride 1. */
#ifndef KIR_LLVM_BIND_H
#define KIR_LLVM_BIND_H

#include <stdint.h>

#include "bxl.h"

static inline struct bxl_binding bind(void *data, uint32_t len) {
  struct bxl_binding b = {.data = data, .len = len, .rank = 1};
  b.shape[0] = len;
  b.stride[0] = 1;
  return b;
}

#endif
