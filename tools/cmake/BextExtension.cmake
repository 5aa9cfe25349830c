# BextExtension.cmake — bext_add_extension(<target> <file.bext>
#     [FEATURES f...] [INCLUDE_DIRS d...])
# Runs bextc on <file.bext> at build time (with a depfile, so an imported
# .bext that changes triggers a rebuild under Ninja and Make), adds the
# generated C to <target>, defines BEXT_FEATURE_<F> for each feature and
# links libbext.  Code emission arrives with the code generator; until then
# bextc answers -o with a clear error and the build stops there.
function(bext_add_extension target file)
  cmake_parse_arguments(ARG "" "" "FEATURES;INCLUDE_DIRS" ${ARGN})
  get_filename_component(src ${file} ABSOLUTE)
  get_filename_component(name ${file} NAME_WE)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/bext_gen/${name})
  set(flags)
  foreach(f ${ARG_FEATURES})
    list(APPEND flags --feature ${f})
    string(TOUPPER ${f} F)
    string(MAKE_C_IDENTIFIER ${F} F)
    target_compile_definitions(${target} PRIVATE BEXT_FEATURE_${F}=1)
  endforeach()
  foreach(d ${ARG_INCLUDE_DIRS})
    get_filename_component(d ${d} ABSOLUTE)
    list(APPEND flags -I ${d})
  endforeach()
  add_custom_command(
    OUTPUT ${out}/${name}.c ${out}/${name}.h
    COMMAND bext::bextc ${src} -o ${out} -MD ${flags}
    DEPENDS ${src} bext::bextc
    DEPFILE ${out}/${name}.d
    COMMENT "bextc ${file}")
  target_sources(${target} PRIVATE ${out}/${name}.c ${out}/${name}.h)
  target_include_directories(${target} PRIVATE ${out})
  target_link_libraries(${target} PRIVATE bext::bext)
endfunction()
