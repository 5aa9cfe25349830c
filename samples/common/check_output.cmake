# check_output.cmake — runs a sample and compares what it prints with its
# expected output, for ctest:
#   cmake -DEXE=<program> -DEXPECTED=<file> [-DEXPECTED_ALT=<file>] -P check_output.cmake
# Fails on a non-zero exit status or any difference (shown as both texts),
# so a sample that runs but prints the wrong thing does not pass.
# EXPECTED_ALT is the output of a machine without an optional device (no
# Vulkan device for cube:vulkan:0): there the sample prints
# "<device> not available: <why>", and since why is the machine's own
# words, the alternative file writes it `<reason>`.
execute_process(COMMAND ${EXE} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXE} exited with ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
file(READ ${EXPECTED} want)
if(out STREQUAL want)
  message(STATUS "${EXE}: output as expected")
  return()
endif()
if(DEFINED EXPECTED_ALT)
  file(READ ${EXPECTED_ALT} alt)
  string(REGEX REPLACE " not available: [^\n]*" " not available: <reason>" masked "${out}")
  if(masked STREQUAL alt)
    message(STATUS "${EXE}: output as expected where a device is not available (${EXPECTED_ALT})")
    return()
  endif()
  message(FATAL_ERROR "${EXE}: output differs from ${EXPECTED} and from ${EXPECTED_ALT}\n--- expected:\n${want}"
                      "--- or, without the optional device:\n${alt}--- got:\n${out}")
endif()
message(FATAL_ERROR "${EXE}: output differs from ${EXPECTED}\n--- expected:\n${want}--- got:\n${out}")
