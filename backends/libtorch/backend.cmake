# backend.cmake — the LibTorch backend's build needs, included by
# runtime/CMakeLists.txt while it walks backends/: built only where the top
# CMakeLists.txt found libtorch (BEXT_TORCH_FOUND).  The C side
# (lt_backend.c) is in libbext; the C++ side (lt_shim.cpp, ATen) is its own
# shared object, libbext_torch.so, which libbext dlopens when a libtorch
# device first opens (runtime/src/plugin.c).  So nothing that links libbext
# links libtorch: mapping and initializing libtorch costs a process about a
# second, which every test binary and user program would otherwise pay.
if(BEXT_TORCH_FOUND)
  add_library(bext_torch SHARED ${CMAKE_CURRENT_LIST_DIR}/lt_shim.cpp)
  set_target_properties(bext_torch PROPERTIES CXX_VISIBILITY_PRESET hidden)
  target_compile_options(bext_torch PRIVATE -std=c++17)
  # ${CMAKE_BINARY_DIR}/include: bext/config.h (BEXT_GEN_INCLUDE is set
  # only after this file runs)
  target_include_directories(bext_torch PRIVATE ${CMAKE_SOURCE_DIR}/runtime/include ${CMAKE_BINARY_DIR}/include
                                                 ${CMAKE_CURRENT_LIST_DIR})
  target_include_directories(bext_torch SYSTEM PRIVATE ${BEXT_ATEN_INCLUDE})
  target_link_libraries(bext_torch PRIVATE ${BEXT_TORCH_CPU} ${BEXT_C10})
  # UBSan's C++ checks (vptr, function) need the C++ half of its runtime,
  # which a C program that dlopens the plugin does not carry (dlopen fails
  # on __ubsan_vptr_type_cache): the plugin keeps ASan, not UBSan.
  if(BEXT_SANITIZE)
    target_compile_options(bext_torch PRIVATE -fno-sanitize=undefined)
  endif()
else()
  set(_srcs)
endif()
