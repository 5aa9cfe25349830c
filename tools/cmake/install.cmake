# install.cmake — what `make install PREFIX=...` puts where, and the CMake
# package (usable from the build tree too: find_package(bext) with
# bext_DIR=<build>).  Included last from the top-level CMakeLists.txt.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(BEXT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/bext)
set(_bext_targets)
# bext_kir: libbext links the kernel IR (a static archive too);
# bext_server (bext::server): bext-server's library, for server programs
# linked with an extension (<bext/server.h>, docs/remote.md)
foreach(t bext bext_kir bext_server bextc_exe bext-repl bext-lsp)
  if(TARGET ${t})
    list(APPEND _bext_targets ${t})
  endif()
endforeach()
if(TARGET bextc_exe)
  set_target_properties(bextc_exe PROPERTIES EXPORT_NAME bextc)
endif()
if(TARGET bext_server)
  set_target_properties(bext_server PROPERTIES EXPORT_NAME server)
endif()
if(TARGET bext-repl)
  set_target_properties(bext-repl PROPERTIES EXPORT_NAME repl)
endif()
if(TARGET bext-lsp)
  set_target_properties(bext-lsp PROPERTIES EXPORT_NAME lsp)
endif()

install(TARGETS ${_bext_targets} EXPORT bextTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/runtime/include/bext
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${BEXT_GEN_INCLUDE}/bext/config.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/bext)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/stdlib/
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bext/stdlib FILES_MATCHING PATTERN "*.bext")

install(EXPORT bextTargets NAMESPACE bext:: DESTINATION ${BEXT_CMAKE_DIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/tools/cmake/bextConfig.cmake.in
  ${CMAKE_BINARY_DIR}/cmake/bextConfig.cmake INSTALL_DESTINATION ${BEXT_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/bextConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cmake/bextConfig.cmake
              ${CMAKE_BINARY_DIR}/cmake/bextConfigVersion.cmake
              ${CMAKE_SOURCE_DIR}/tools/cmake/BextExtension.cmake
              ${CMAKE_SOURCE_DIR}/tools/cmake/BextCheckOverrides.cmake
  DESTINATION ${BEXT_CMAKE_DIR})

# The same package straight from the build tree.
export(EXPORT bextTargets NAMESPACE bext:: FILE ${CMAKE_BINARY_DIR}/cmake/bextTargets.cmake)
configure_file(${CMAKE_SOURCE_DIR}/tools/cmake/BextExtension.cmake
  ${CMAKE_BINARY_DIR}/cmake/BextExtension.cmake COPYONLY)
configure_file(${CMAKE_SOURCE_DIR}/tools/cmake/BextCheckOverrides.cmake
  ${CMAKE_BINARY_DIR}/cmake/BextCheckOverrides.cmake COPYONLY)

# bext.pc locates the prefix from its own directory (${pcfiledir}): the
# prefix is only known at `cmake --install --prefix` time, not now.
file(RELATIVE_PATH BEXT_PC_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
string(REGEX REPLACE "/$" "" BEXT_PC_TO_PREFIX "${BEXT_PC_TO_PREFIX}")
# The Remote backend's dependencies, when it is built: protobuf-c has a
# .pc, nng (Debian's libnng-dev) only a CMake config, so it is a plain -l.
set(BEXT_PC_REMOTE_REQUIRES "")
set(BEXT_PC_REMOTE_LIBS "")
if(BEXT_REMOTE_FOUND)
  set(BEXT_PC_REMOTE_REQUIRES " libprotobuf-c")
  set(BEXT_PC_REMOTE_LIBS " -lnng")
endif()
configure_file(${CMAKE_SOURCE_DIR}/tools/pkgconfig/bext.pc.in ${CMAKE_BINARY_DIR}/bext.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/bext.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# bext-uninstalled.pc: the same metadata for this build tree, so a program
# can build against build/ with PKG_CONFIG_PATH=<build> and no install
# (pkg-config's `-uninstalled` convention).
configure_file(${CMAKE_SOURCE_DIR}/tools/pkgconfig/bext-uninstalled.pc.in
  ${CMAKE_BINARY_DIR}/bext-uninstalled.pc.gen @ONLY)
file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/bext-uninstalled.pc
  INPUT ${CMAKE_BINARY_DIR}/bext-uninstalled.pc.gen)

# bext-server.pc / bext-server-uninstalled.pc: the server library
# (bext::server in the CMake package), where it is built.
if(TARGET bext_server)
  configure_file(${CMAKE_SOURCE_DIR}/tools/pkgconfig/bext-server.pc.in ${CMAKE_BINARY_DIR}/bext-server.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/bext-server.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
  configure_file(${CMAKE_SOURCE_DIR}/tools/pkgconfig/bext-server-uninstalled.pc.in
    ${CMAKE_BINARY_DIR}/bext-server-uninstalled.pc.gen @ONLY)
  file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/bext-server-uninstalled.pc
    INPUT ${CMAKE_BINARY_DIR}/bext-server-uninstalled.pc.gen)
endif()
