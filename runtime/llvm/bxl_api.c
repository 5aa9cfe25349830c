/* bxl_api.c — the one symbol libbext_llvm.so exports: the table of entry
 * points the runtime finds with dlsym after loading it (bxl.h, "the
 * loaded library").  Everything else in the library stays hidden, so two
 * copies of libbext_kir (the program's and this library's) never meet. */
#include "bxl.h"

__attribute__((visibility("default"))) const struct bxl_api bxl_api_v1 = {
    .version = BXL_API_VERSION,
    .jit_new = bxl_jit_new,
    .jit_free = bxl_jit_free,
    .compile_object = bxl_compile_object,
    .object_free = bxl_object_free,
    .jit_add_object = bxl_jit_add_object,
    .host_target = bxl_host_target,
};
