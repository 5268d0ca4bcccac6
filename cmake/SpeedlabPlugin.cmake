# speedlab_add_plugin(<name> SOURCES a.cpp ... [CUDA_SOURCES k.cu ...]
#                     [CUDA_ARCHITECTURES 90 ...] [LIBRARIES ...] [OUTPUT_DIRECTORY dir] [NO_INSTALL])
# Builds a workload plugin: a shared library libspeedlab-<name>.so that speedlab loads.
# Used in this tree and, installed beside speedlabConfig.cmake, by plugins built out of tree
# (find_package(speedlab)). It sets what every plugin needs alike:
# - the file name (speedlab loads libspeedlab-*.so) and hidden symbol visibility (only the
#   two entry symbols of SPEEDLAB_REGISTER_WORKLOAD are exported);
# - C++20 for .cpp sources (the SDK headers need only C++17) and C++17 for .cu sources;
# - the SDK headers (speedlab::sdk), whose ABI version the loader checks (the ABI stamp:
#   the plugin exports the SPEEDLAB_PLUGIN_ABI_VERSION of the headers it was built with);
# - CUDA, when CUDA_SOURCES are given and the CUDA language is enabled (speedlab_enable_cuda()
#   or project(... LANGUAGES CXX CUDA)): the static CUDA runtime (a plugin loads where no
#   CUDA runtime is installed, its CPU variants run and its CUDA ones say why not), -lineinfo, the
#   architectures (default 90: sm_90 code plus compute_90 PTX), and
#   SPEEDLAB_PLUGIN_HAS_CUDA=1; otherwise the CUDA sources are left out and it is 0;
# - SPEEDLAB_PLUGIN_HAS_NVTX=1 where NVTX v3 headers are found (plugins may add ranges).
# The library goes to OUTPUT_DIRECTORY (default: <build>/plugins in speedlab's tree, the
# top of the build folder out of tree), so `speedlab list --plugin-path <that folder>`
# loads it.
function(speedlab_add_plugin name)
  cmake_parse_arguments(ARG "NO_INSTALL" "OUTPUT_DIRECTORY" "SOURCES;CUDA_SOURCES;CUDA_ARCHITECTURES;LIBRARIES" ${ARGN})
  if(NOT ARG_SOURCES AND NOT ARG_CUDA_SOURCES)
    message(FATAL_ERROR "speedlab_add_plugin(${name}): no SOURCES given")
  endif()
  if(NOT name MATCHES "^[A-Za-z0-9_.-]+$")
    message(FATAL_ERROR "speedlab_add_plugin(${name}): the name may hold letters, digits, '_', '-' and '.' only")
  endif()
  if(NOT ARG_OUTPUT_DIRECTORY)
    if(DEFINED SPEEDLAB_BUILD_PLUGIN_DIR)
      set(ARG_OUTPUT_DIRECTORY ${SPEEDLAB_BUILD_PLUGIN_DIR})
    else()
      set(ARG_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
    endif()
  endif()
  get_property(_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  set(has_cuda OFF)
  if(ARG_CUDA_SOURCES AND "CUDA" IN_LIST _languages AND TARGET CUDA::cudart_static)
    set(has_cuda ON)
  elseif(ARG_CUDA_SOURCES AND NOT SPEEDLAB_IN_TREE)
    message(STATUS "speedlab plugin ${name}: CUDA language not enabled (or no CUDA toolkit): its CUDA variants are left out")
  endif()
  set(target speedlab_plugin_${name})
  set(sources ${ARG_SOURCES})
  if(has_cuda)
    list(APPEND sources ${ARG_CUDA_SOURCES})
  endif()
  add_library(${target} MODULE ${sources})
  target_link_libraries(${target} PRIVATE speedlab::sdk Threads::Threads ${ARG_LIBRARIES})
  target_compile_features(${target} PRIVATE cxx_std_20)
  if(SPEEDLAB_IN_TREE)
    # plugins/common: Philox RNG and host parallel loops shared by the built-in plugins.
    target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/plugins/common)
    target_link_libraries(${target} PRIVATE speedlab_warnings)
  endif()
  if(TARGET CUDA::nvtx3)
    target_link_libraries(${target} PRIVATE CUDA::nvtx3)
    target_compile_definitions(${target} PRIVATE SPEEDLAB_PLUGIN_HAS_NVTX=1)
  else()
    target_compile_definitions(${target} PRIVATE SPEEDLAB_PLUGIN_HAS_NVTX=0)
  endif()
  if(has_cuda)
    target_compile_definitions(${target} PRIVATE SPEEDLAB_PLUGIN_HAS_CUDA=1)
    target_link_libraries(${target} PRIVATE CUDA::cudart_static)
    if(NOT ARG_CUDA_ARCHITECTURES)
      if(SPEEDLAB_IN_TREE AND CMAKE_CUDA_ARCHITECTURES)
        set(ARG_CUDA_ARCHITECTURES ${CMAKE_CUDA_ARCHITECTURES})
      else()
        set(ARG_CUDA_ARCHITECTURES 90)
      endif()
    endif()
    # CMake 3.25 does not know nvcc 13 speaks C++20; kernels need only C++17.
    set_target_properties(${target} PROPERTIES CUDA_SEPARABLE_COMPILATION OFF CUDA_STANDARD 17
      CUDA_STANDARD_REQUIRED ON CUDA_ARCHITECTURES "${ARG_CUDA_ARCHITECTURES}")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -lineinfo>)
    if(DEFINED CUDAToolkit_LIBRARY_DIR)
      set_property(TARGET ${target} APPEND PROPERTY BUILD_RPATH ${CUDAToolkit_LIBRARY_DIR})
      set_property(TARGET ${target} APPEND PROPERTY INSTALL_RPATH ${CUDAToolkit_LIBRARY_DIR})
    endif()
  else()
    target_compile_definitions(${target} PRIVATE SPEEDLAB_PLUGIN_HAS_CUDA=0)
  endif()
  set_target_properties(${target} PROPERTIES
    PREFIX "libspeedlab-" OUTPUT_NAME ${name} SUFFIX ".so"
    LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY}
    CXX_VISIBILITY_PRESET hidden CUDA_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  if(NOT ARG_NO_INSTALL)
    if(DEFINED SPEEDLAB_INSTALL_PLUGIN_DIR)
      install(TARGETS ${target} LIBRARY DESTINATION ${SPEEDLAB_INSTALL_PLUGIN_DIR})
    else()
      install(TARGETS ${target} LIBRARY DESTINATION lib/speedlab/plugins)
    endif()
  endif()
endfunction()

# speedlab_enable_cuda(): enables the CUDA language where a CUDA compiler is found (a macro:
# CMake enables languages only at file scope). Sets SPEEDLAB_HAS_CUDA. Without a compiler the
# plugin builds without its CUDA variants, and says so.
macro(speedlab_enable_cuda)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  set(SPEEDLAB_HAS_CUDA OFF)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(SPEEDLAB_HAS_CUDA ON)
  endif()
endmacro()
