# check_fusion.cmake — runs a sample built with SAMPLE_LAYER="fusion" (every
# call through the +fusion layer) and checks, for ctest:
#   - it exits 0 and prints exactly the plain sample's expected output once
#     "+fusion" is taken out of device names;
#   - the layer recorded at least RECORDED ops (lazily recorded extension
#     calls included), from fusion_shim.c's report.
#   cmake -DEXE=.. -DEXPECTED=.. -DRECORDED=n -P check_fusion.cmake
execute_process(COMMAND ${EXE} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXE} exited with ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
string(REPLACE "+fusion" "" plain "${out}")
file(READ ${EXPECTED} want)
if(NOT plain STREQUAL want)
  message(FATAL_ERROR "${EXE}: output differs from ${EXPECTED}\n--- expected:\n${want}--- got:\n${out}")
endif()
if(NOT err MATCHES "fusion layer: recorded ([0-9]+), run ([0-9]+)")
  message(FATAL_ERROR "${EXE}: no fusion layer report on stderr:\n${err}")
endif()
set(recorded ${CMAKE_MATCH_1})
if(recorded LESS RECORDED)
  message(FATAL_ERROR "${EXE}: the fusion layer recorded ${recorded} ops, expected at least ${RECORDED}")
endif()
message(STATUS "${EXE}: output as expected; fusion recorded ${recorded} ops")
