# BextCheckOverrides.cmake — run after a target using bext_add_extension is
# linked (a POST_BUILD step BextExtension.cmake adds when the target links
# static libraries the ordinary way):
#   cmake -DEXE=<program> -DGEN_C=<generated .c> -DARCHIVES=<a|b|...>
#         -DNM=<nm> -P BextCheckOverrides.cmake
# The implementations of a method with a default body are weak references
# in the generated .c, and a weak reference never pulls a member out of a
# static library: an override that lives in such a library is left out and
# the default body runs instead, silently.  This step makes that a build
# error: an optional implementation defined in one of ARCHIVES but absent
# from EXE fails the build (and removes EXE, so the next build links
# again), naming the function, the library and the fix.
file(STRINGS "${GEN_C}" weak REGEX "__attribute__\\(\\(weak\\)\\);$")
set(names)
foreach(line IN LISTS weak)
  if(line MATCHES "([A-Za-z_][A-Za-z0-9_]*)\\(")
    list(APPEND names ${CMAKE_MATCH_1})
  endif()
endforeach()
if(NOT names)
  return()
endif()
execute_process(COMMAND "${NM}" -P --defined-only "${EXE}" OUTPUT_VARIABLE exe_syms RESULT_VARIABLE rc
                ERROR_QUIET)
if(NOT rc EQUAL 0)
  message(WARNING "bext: cannot read the symbols of ${EXE} with ${NM}; overrides in static libraries not checked")
  return()
endif()
string(REPLACE "|" ";" archives "${ARCHIVES}")
foreach(a IN LISTS archives)
  execute_process(COMMAND "${NM}" -P --defined-only "${a}" OUTPUT_VARIABLE syms ERROR_QUIET)
  foreach(n IN LISTS names)
    if(syms MATCHES "(^|\n)${n} [TtWw] " AND NOT exe_syms MATCHES "(^|\n)${n} [TtWw] ")
      get_filename_component(lib "${a}" NAME)
      file(REMOVE "${EXE}")
      message(FATAL_ERROR "bext: `${n}` is defined in ${lib}, but the linker left it out of "
        "${EXE}: the generated code refers to an override of a defaulted method weakly, and a "
        "weak reference does not pull a member out of a static library, so the default body would "
        "run instead of your implementation. Link the library whole: "
        "bext_add_extension(... IMPLEMENTATIONS <library>) (or -Wl,--whole-archive).")
    endif()
  endforeach()
endforeach()
