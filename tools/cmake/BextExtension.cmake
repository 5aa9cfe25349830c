# BextExtension.cmake — bext_add_extension(<target> <file.bext>
#     [FEATURES f...] [INCLUDE_DIRS d...] [IMPLEMENTATIONS lib...])
#
# Runs bextc on <file.bext> at build time and adds what it writes (the
# dispatch code <name>.c, the header <name>.h, and <name>.kernels.o, the
# CPU code of the `#[cube]` kernels of the file and its imports, linked
# with libmvec; empty when there are none) to <target>:
#   - bextc's -MD depfile lists every .bext it read (imports, stdlib), so
#     Ninja and Makefile builds rerun bextc when any of them changes;
#   - each feature f is passed to bextc (--feature f) and defined for the
#     target's C sources as BEXT_FEATURE_<F>=1 (upper case, C identifier),
#     the macro the generated cfg(feature = "f") arms test;
#   - INCLUDE_DIRS are bextc's -I search directories for `use`;
#   - <target> gets the generated directory on its include path (so
#     `#include "<name>.h"` works) and links bext::bext;
#   - IMPLEMENTATIONS are static libraries holding implementations: linked
#     whole (every member), because the generated code refers to the
#     implementations of a method with a default body weakly, and a weak
#     reference never pulls a member out of an archive (the default body
#     would run instead of your override; docs/codegen.md, "Default
#     bodies").  Needs CMake 3.24 ($<LINK_LIBRARY:WHOLE_ARCHIVE,...>).
#   - a static library linked to <target> the ordinary way that defines an
#     override the linker left out fails the build after the link
#     (BextCheckOverrides.cmake, run with nm): never a silent default.
#
# The same file serves this project (bext::bextc and bext::bext are ALIAS
# targets of bextc_exe and bext there) and an installed or build-tree
# package (imported targets, from bextConfig.cmake).
include_guard(GLOBAL)
# Cached: include_guard(GLOBAL) skips this file in every later directory,
# and the deferred check runs in whichever directory the target lives in.
set(_BEXT_CHECK_OVERRIDES ${CMAKE_CURRENT_LIST_DIR}/BextCheckOverrides.cmake CACHE INTERNAL
    "the post-link check of overrides in static libraries")

# Depfiles are rewritten relative to the build tree by the Ninja generator
# and honoured by Makefile generators only under the 3.20+ behaviour;
# recorded here so a consumer with an older cmake_minimum_required gets it.
if(POLICY CMP0116)
  cmake_policy(SET CMP0116 NEW)
endif()

function(bext_add_extension target file)
  cmake_parse_arguments(PARSE_ARGV 2 ARG "" "" "FEATURES;INCLUDE_DIRS;IMPLEMENTATIONS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "bext_add_extension(${target} ${file}): unexpected "
      "arguments `${ARG_UNPARSED_ARGUMENTS}` (expected FEATURES ..., INCLUDE_DIRS ... and/or IMPLEMENTATIONS ...)")
  endif()
  if(ARG_IMPLEMENTATIONS AND CMAKE_VERSION VERSION_LESS 3.24)
    message(FATAL_ERROR "bext_add_extension(${target} ${file}): IMPLEMENTATIONS needs CMake 3.24 "
      "(this is ${CMAKE_VERSION}); link the libraries with -Wl,--whole-archive yourself")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "bext_add_extension: `${target}` is not a target "
      "(create it first with add_executable or add_library)")
  endif()
  if(NOT TARGET bext::bextc OR NOT TARGET bext::bext)
    message(FATAL_ERROR "bext_add_extension: bext::bextc / bext::bext are not "
      "defined (call find_package(bext) first)")
  endif()
  get_filename_component(src ${file} ABSOLUTE)
  if(NOT EXISTS ${src})
    message(FATAL_ERROR "bext_add_extension(${target}): `${src}` does not exist")
  endif()
  get_filename_component(name ${file} NAME_WE)
  # One directory per target: two targets may compile the same .bext with
  # different features without their outputs colliding.
  set(out ${CMAKE_CURRENT_BINARY_DIR}/bext_gen/${target})
  set(flags)
  foreach(f IN LISTS ARG_FEATURES)
    list(APPEND flags --feature ${f})
    string(TOUPPER ${f} F)
    string(MAKE_C_IDENTIFIER ${F} F)
    target_compile_definitions(${target} PRIVATE BEXT_FEATURE_${F}=1)
  endforeach()
  foreach(d IN LISTS ARG_INCLUDE_DIRS)
    get_filename_component(d ${d} ABSOLUTE)
    list(APPEND flags -I ${d})
  endforeach()
  file(MAKE_DIRECTORY ${out})
  # DEPENDS names the compiler target, so a rebuilt bextc regenerates (and,
  # in-tree, bextc is built first under every generator).
  # <name>.kernels.o holds the ahead-of-time CPU code of the unit's
  # `#[cube]` kernels, which the generated C refers to weakly (the
  # kernels call glibc's libmvec).  Whether any module the file imports,
  # however deep, has a kernel only bextc knows (it resolves the imports),
  # so it is asked to write the object always (--kernels-object: empty
  # when there are none) and the object is always linked.
  set(objs ${out}/${name}.kernels.o)
  list(APPEND flags --kernels-object)
  add_custom_command(
    OUTPUT ${out}/${name}.c ${out}/${name}.h ${objs}
    COMMAND bext::bextc ${src} -o ${out} -MD ${flags}
    DEPENDS ${src} bext::bextc
    DEPFILE ${out}/${name}.d
    COMMENT "bextc ${file}"
    VERBATIM)
  target_sources(${target} PRIVATE ${out}/${name}.c ${out}/${name}.h ${objs})
  set_source_files_properties(${objs} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
  target_link_libraries(${target} PRIVATE mvec m)
  target_include_directories(${target} PRIVATE ${out})
  target_link_libraries(${target} PRIVATE bext::bext)
  foreach(lib IN LISTS ARG_IMPLEMENTATIONS)
    if(TARGET ${lib})
      get_target_property(type ${lib} TYPE)
      if(NOT type STREQUAL "STATIC_LIBRARY")
        message(FATAL_ERROR "bext_add_extension(${target}): IMPLEMENTATIONS `${lib}` is a ${type}, "
          "not a static library (link other kinds with target_link_libraries)")
      endif()
    endif()
    target_link_libraries(${target} PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,${lib}>")
  endforeach()
  # The target's libraries are known once its directory is processed.
  cmake_language(EVAL CODE "cmake_language(DEFER DIRECTORY [[${CMAKE_CURRENT_SOURCE_DIR}]] CALL _bext_check_overrides [[${target}]] [[${out}/${name}.c]])")
endfunction()

# The post-link check of overrides left in static libraries (see above).
function(_bext_check_overrides target gen_c)
  get_target_property(libs ${target} LINK_LIBRARIES)
  set(archives)
  foreach(lib IN LISTS libs)
    if(lib MATCHES "^\\$<" OR lib STREQUAL "bext::bext")
      continue()   # generator expressions (IMPLEMENTATIONS: linked whole) and libbext
    endif()
    if(TARGET ${lib})
      get_target_property(type ${lib} TYPE)
      if(type STREQUAL "STATIC_LIBRARY")
        list(APPEND archives "$<TARGET_FILE:${lib}>")
      endif()
    elseif(lib MATCHES "\\.a$")
      list(APPEND archives ${lib})
    endif()
  endforeach()
  if(NOT archives OR NOT CMAKE_NM)
    return()
  endif()
  string(REPLACE ";" "|" archives "${archives}")
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:${target}> -DGEN_C=${gen_c} -DARCHIVES=${archives}
            -DNM=${CMAKE_NM} -P ${_BEXT_CHECK_OVERRIDES}
    VERBATIM)
endfunction()
