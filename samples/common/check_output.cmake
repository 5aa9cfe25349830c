# check_output.cmake — runs a sample and compares what it prints with its
# expected output, for ctest:
#   cmake -DEXE=<program> -DEXPECTED=<file> -P check_output.cmake
# Fails on a non-zero exit status or any difference (shown as both texts),
# so a sample that runs but prints the wrong thing does not pass.
execute_process(COMMAND ${EXE} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXE} exited with ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
file(READ ${EXPECTED} want)
if(NOT out STREQUAL want)
  message(FATAL_ERROR "${EXE}: output differs from ${EXPECTED}\n--- expected:\n${want}--- got:\n${out}")
endif()
message(STATUS "${EXE}: output as expected")
