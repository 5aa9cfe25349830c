# check_decorated.cmake — runs a sample built with SAMPLE_LAYER="count"
# (every call through the test decorator) and checks, for ctest:
#   - it exits 0 and prints exactly the undecorated sample's expected
#     output once the layer's name is taken out of device names;
#   - the layer saw exactly CORE core ops and CUSTOM extension ops.
#   cmake -DEXE=.. -DEXPECTED=.. -DCORE=n -DCUSTOM=n -P check_decorated.cmake
execute_process(COMMAND ${EXE} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXE} exited with ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
string(REPLACE "+count" "" plain "${out}")
file(READ ${EXPECTED} want)
if(NOT plain STREQUAL want)
  message(FATAL_ERROR "${EXE}: output differs from ${EXPECTED}\n--- expected:\n${want}--- got:\n${out}")
endif()
if(NOT err MATCHES "count layer: core ([0-9]+), custom ([0-9]+)")
  message(FATAL_ERROR "${EXE}: no count layer report on stderr:\n${err}")
endif()
set(core ${CMAKE_MATCH_1})
set(custom ${CMAKE_MATCH_2})
if(NOT custom EQUAL CUSTOM OR NOT core EQUAL CORE)
  message(FATAL_ERROR "${EXE}: the decorator saw ${core} core and ${custom} extension ops, "
                      "expected ${CORE} and ${CUSTOM}")
endif()
message(STATUS "${EXE}: output as expected; decorator saw ${core} core, ${custom} extension ops")
