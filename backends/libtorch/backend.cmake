# backend.cmake — the LibTorch backend's build needs, included by
# runtime/CMakeLists.txt while it walks backends/: built only where the top
# CMakeLists.txt found libtorch (BEXT_TORCH_FOUND), with its one C++ file
# (ATen) and libtorch_cpu + c10 in libbext's link interface (libbext is
# static: whoever links it links libtorch too; bext.pc and the CMake
# package carry them).
if(BEXT_TORCH_FOUND)
  list(APPEND _srcs ${CMAKE_CURRENT_LIST_DIR}/lt_shim.cpp)
  # stdc++: a C-only consumer links with the C driver, which adds no C++
  # runtime of its own.
  list(APPEND _bext_backend_libs ${BEXT_TORCH_CPU} ${BEXT_C10} stdc++)
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/lt_shim.cpp PROPERTIES
    COMPILE_OPTIONS "-std=c++17" INCLUDE_DIRECTORIES "${BEXT_ATEN_INCLUDE}")
else()
  set(_srcs)
endif()
