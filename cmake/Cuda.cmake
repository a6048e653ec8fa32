# CUDA is optional: GRAPHWORLD_CUDA=AUTO builds the CUDA paths when a toolkit is
# found (default /usr/local/cuda), ON requires it, OFF skips it. The CUDA code
# compiles anywhere the toolkit exists; it runs only where a GPU exists.
set(GRAPHWORLD_CUDA "AUTO" CACHE STRING "Build CUDA/cuDNN/cuBLAS/NCCL code paths: AUTO, ON or OFF")
set_property(CACHE GRAPHWORLD_CUDA PROPERTY STRINGS AUTO ON OFF)

set(GRAPHWORLD_HAVE_CUDA OFF)
if(NOT GRAPHWORLD_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS "/usr/local/cuda/bin/nvcc")
    set(CMAKE_CUDA_COMPILER "/usr/local/cuda/bin/nvcc")
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # Ampere and Hopper; CUDA 13 no longer targets anything older than Turing.
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)
    find_package(CUDAToolkit REQUIRED)
    get_filename_component(_cuda_root "${CUDAToolkit_BIN_DIR}" DIRECTORY)
    find_path(CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS} "${_cuda_root}/include")
    find_library(CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR} "${_cuda_root}/lib64")
    find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} "${_cuda_root}/include")
    find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} "${_cuda_root}/lib64")
    if(CUDNN_LIBRARY AND CUDNN_INCLUDE_DIR AND NCCL_LIBRARY AND NCCL_INCLUDE_DIR)
      set(GRAPHWORLD_HAVE_CUDA ON)
      add_library(graphworld_cuda_libs INTERFACE)
      target_include_directories(graphworld_cuda_libs SYSTEM INTERFACE ${CUDNN_INCLUDE_DIR} ${NCCL_INCLUDE_DIR})
      target_link_libraries(graphworld_cuda_libs INTERFACE CUDA::cudart CUDA::cublas ${CUDNN_LIBRARY} ${NCCL_LIBRARY})
    else()
      message(STATUS "graphworld: CUDA found but cuDNN (${CUDNN_LIBRARY}) or NCCL (${NCCL_LIBRARY}) missing")
    endif()
  endif()
endif()

if(GRAPHWORLD_CUDA STREQUAL "ON" AND NOT GRAPHWORLD_HAVE_CUDA)
  message(FATAL_ERROR "GRAPHWORLD_CUDA=ON but CUDA with cuDNN and NCCL was not found; install the toolkit under /usr/local/cuda or use GRAPHWORLD_CUDA=AUTO")
endif()
message(STATUS "graphworld: CUDA code paths ${GRAPHWORLD_HAVE_CUDA}")

# graphworld_cuda_compile_check(TARGET SOURCE...): where a CUDA toolkit
# exists but LibTorch has no CUDA (Debian's), compiles SOURCEs against
# LibTorch's CUDA headers without linking them anywhere, so that CI checks
# code that only a GPU build runs.
function(graphworld_cuda_compile_check target)
  add_library(${target} OBJECT ${ARGN})
  target_include_directories(${target} SYSTEM PRIVATE ${TORCH_INCLUDE_DIRS} ${CUDAToolkit_INCLUDE_DIRS})
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR})
  # Debian's LibTorch ships c10's CUDA headers without the macros file its
  # CUDA build generates beside them; nothing here is exported from a DLL.
  target_compile_definitions(${target} PRIVATE C10_USING_CUSTOM_GENERATED_MACROS)
  graphworld_warnings(${target})
endfunction()
