# CUDA is found, not assumed. With a toolkit: CUDA variants, the CUPTI backend and NVTX
# ranges. Without one (or SPEEDLAB_ENABLE_CUDA=OFF) everything else builds and works.
set(SPEEDLAB_HAS_CUDA OFF)
set(SPEEDLAB_HAS_NVTX OFF)
set(SPEEDLAB_HAS_CUPTI OFF)
set(SPEEDLAB_CUDA_SUMMARY "disabled")
if(SPEEDLAB_ENABLE_CUDA)
  # sm_90 machine code plus compute_90 PTX (JIT for newer GPUs); the macro is the one
  # installed for plugin authors (cmake/SpeedlabPlugin.cmake). It sets SPEEDLAB_HAS_CUDA.
  speedlab_enable_cuda()
  if(SPEEDLAB_HAS_CUDA)
    # CMake 3.25 does not know nvcc 13 speaks C++20; kernels need only C++17.
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(SPEEDLAB_CUDA_SUMMARY "CUDA ${CUDAToolkit_VERSION} at ${CUDAToolkit_BIN_DIR}")
    if(TARGET CUDA::nvtx3)
      set(SPEEDLAB_HAS_NVTX ON)
    endif()
    if(TARGET CUDA::cupti)
      set(SPEEDLAB_HAS_CUPTI ON)
    endif()
    # The CUDA runtime is linked statically (nvcc's own default) into the program and the
    # plugins, so they start where no CUDA runtime is installed and say "no CUDA device" at
    # run time; libcupti is opened on demand (profilers/cupti/cupti_loader.cpp).
    set(SPEEDLAB_CUDART CUDA::cudart_static)
    # libcupti is found through this rpath on the build and GPU machines.
    list(APPEND CMAKE_BUILD_RPATH ${CUDAToolkit_LIBRARY_DIR})
    set(CMAKE_INSTALL_RPATH "${CUDAToolkit_LIBRARY_DIR}")
  else()
    set(SPEEDLAB_CUDA_SUMMARY "no CUDA compiler found")
  endif()
endif()

# NVTX v3 is header-only: speedlab_nvtx carries it where present and is empty otherwise.
add_library(speedlab_nvtx INTERFACE)
if(SPEEDLAB_HAS_NVTX)
  target_link_libraries(speedlab_nvtx INTERFACE CUDA::nvtx3)
endif()
