# sources.cmake — the CUDA/HIP runtime's sources (prefix bxcu_), included
# by backends/cube/backend.cmake so they compile into libbext with the
# `cube:cuda:N` / `cube:hip:N` devices: nothing of CUDA or ROCm is needed to
# build (NVRTC, hiprtc and the drivers are dlopen'd), so they are always
# there.  The emitted source pastes bxk_scalar.h in, embedded here at build
# time so the header stays the one home of the ops' scalar semantics.
set(_bxcu_dir ${CMAKE_SOURCE_DIR}/runtime/cuda)
set(_scalar_h ${CMAKE_SOURCE_DIR}/runtime/kir/bxk_scalar.h)
set(_scalar_c ${CMAKE_CURRENT_BINARY_DIR}/gen/bxcu_scalar_src.c)
add_custom_command(OUTPUT ${_scalar_c}
  COMMAND ${CMAKE_COMMAND} -DIN=${_scalar_h} -DOUT=${_scalar_c} -DSYM=bxcu_scalar_src
          -P ${_bxcu_dir}/embed.cmake
  DEPENDS ${_scalar_h} ${_bxcu_dir}/embed.cmake
  COMMENT "Embedding bxk_scalar.h for the CUDA emitter" VERBATIM)
file(GLOB _bxcu_src CONFIGURE_DEPENDS ${_bxcu_dir}/*.c)
list(APPEND _srcs ${_bxcu_src} ${_scalar_c})
list(APPEND BEXT_RT_INCLUDE ${_bxcu_dir})
