# backend.cmake — the Remote backend's build needs, included by
# runtime/CMakeLists.txt while it walks backends/.  The transport is nng
# (Debian's libnng-dev: a CMake config, no .pc) and the control messages
# are protobuf-c codecs generated here from bext_remote.proto by protoc-c
# (libprotobuf-c-dev, protobuf-c-compiler).  Both are in tools/deps.sh's
# core set; without them the folder is skipped like LibTorch's, config.h
# has no BEXT_HAVE_REMOTE and the suite says its tests are skipped.
find_package(nng CONFIG QUIET)
pkg_check_modules(PROTOBUF_C QUIET IMPORTED_TARGET libprotobuf-c)
find_program(BEXT_PROTOC_C protoc-c)
if(nng_FOUND AND PROTOBUF_C_FOUND AND BEXT_PROTOC_C)
  set(_rm_gen ${CMAKE_BINARY_DIR}/gen/remote)
  file(MAKE_DIRECTORY ${_rm_gen})
  add_custom_command(
    OUTPUT ${_rm_gen}/bext_remote.pb-c.c ${_rm_gen}/bext_remote.pb-c.h
    COMMAND ${BEXT_PROTOC_C} --c_out=${_rm_gen} --proto_path=${CMAKE_CURRENT_LIST_DIR}
            ${CMAKE_CURRENT_LIST_DIR}/bext_remote.proto
    DEPENDS ${CMAKE_CURRENT_LIST_DIR}/bext_remote.proto
    COMMENT "protoc-c bext_remote.proto")
  list(APPEND _srcs ${_rm_gen}/bext_remote.pb-c.c)
  # What libbext (runtime/CMakeLists.txt) adds for this backend: PUBLIC,
  # since libbext is a static archive and its users link these too.
  list(APPEND BEXT_RT_LINK nng::nng PkgConfig::PROTOBUF_C)
  list(APPEND BEXT_RT_INCLUDE ${_rm_gen})
  set(BEXT_REMOTE_GEN ${_rm_gen} CACHE INTERNAL "generated remote codecs")
  set(BEXT_REMOTE_FOUND ON CACHE INTERNAL "")
  # The same as plain flags, for links outside CMake targets (bext.pc,
  # the codegen harness): nng has no .pc.
  set(BEXT_REMOTE_LINK_FLAGS "-lnng -lprotobuf-c" CACHE INTERNAL "")
else()
  message(STATUS "bext: nng or protobuf-c not found: the Remote backend and bext-server are not built "
                 "(tools/deps.sh installs libnng-dev libprotobuf-c-dev protobuf-c-compiler)")
  set(BEXT_REMOTE_FOUND OFF CACHE INTERNAL "")
  set(BEXT_REMOTE_LINK_FLAGS "" CACHE INTERNAL "")
  set(_srcs)
endif()
