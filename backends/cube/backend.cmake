# backend.cmake — the Cube backend's build needs, included by
# runtime/CMakeLists.txt while it walks backends/.  cube:cpu needs nothing
# beyond libbext.  cube:vulkan:N (cube_vulkan.c, the vtable
# bxr_backend_cube_vulkan) needs the Vulkan runtime of runtime/vulkan
# (prefix bxvk_), which builds from headers alone: spirv-headers for the
# SPIR-V enums and libvulkan-dev for vulkan.h (tools/deps.sh); libvulkan
# itself is dlopen'ed when the device opens.  With the headers, the bxvk
# sources are compiled into libbext, the vtable gets its row
# (bxr_backends.inc) and config.h says BEXT_HAVE_CUBE_VULKAN, the one
# switch; without them cube_vulkan.c is left out and everything else
# builds (-DBEXT_VULKAN=OFF asks for that build on purpose).  The bare GPU
# machine's build (BEXT_GPU_CHECK) has no Vulkan.
#
# cube:cuda:N and cube:hip:N (cube_cuda.c, the vtables
# bxr_backend_cube_cuda and bxr_backend_cube_hip) need nothing to build:
# the CUDA/HIP runtime of runtime/cuda (prefix bxcu_) loads NVRTC, hiprtc
# and the drivers with dlopen, so they are in every build, the GPU
# check's included, and say at run time what is missing.
include(${CMAKE_SOURCE_DIR}/runtime/cuda/sources.cmake)
list(APPEND _rows cube_cuda cube_hip)
find_path(BEXT_SPIRV_HEADERS spirv/unified1/spirv.h)
find_path(BEXT_VULKAN_HEADERS vulkan/vulkan.h)
if(BEXT_VULKAN AND NOT BEXT_GPU_CHECK AND BEXT_SPIRV_HEADERS AND BEXT_VULKAN_HEADERS)
  file(GLOB _bxvk_src CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/runtime/vulkan/*.c)
  list(APPEND _srcs ${_bxvk_src})
  list(APPEND _rows cube_vulkan)
  list(APPEND BEXT_RT_INCLUDE ${CMAKE_SOURCE_DIR}/runtime/vulkan ${BEXT_SPIRV_HEADERS} ${BEXT_VULKAN_HEADERS})
  set(BEXT_HAVE_VULKAN ON CACHE INTERNAL "libbext has the Vulkan runtime (runtime/vulkan)")
else()
  list(REMOVE_ITEM _srcs ${CMAKE_CURRENT_LIST_DIR}/cube_vulkan.c)
  set(BEXT_HAVE_VULKAN OFF CACHE INTERNAL "libbext has the Vulkan runtime (runtime/vulkan)")
  if(NOT BEXT_GPU_CHECK)
    message(STATUS "bext: cube:vulkan is not built (BEXT_VULKAN=${BEXT_VULKAN}; without spirv/unified1/spirv.h "
                   "or vulkan/vulkan.h, tools/deps.sh installs spirv-headers libvulkan-dev)")
  endif()
endif()
