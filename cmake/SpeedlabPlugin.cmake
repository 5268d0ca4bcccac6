# speedlab_add_plugin(<name> SOURCES a.cpp ... [CUDA_SOURCES k.cu ...] [LIBRARIES ...]
#                     [OUTPUT_DIRECTORY dir] [NO_INSTALL])
# Builds a workload plugin as a shared library in <build>/plugins. CUDA sources are compiled
# only where a CUDA toolkit was found; the plugin then gets SPEEDLAB_PLUGIN_HAS_CUDA=1.
function(speedlab_add_plugin name)
  cmake_parse_arguments(ARG "NO_INSTALL" "OUTPUT_DIRECTORY" "SOURCES;CUDA_SOURCES;LIBRARIES" ${ARGN})
  if(NOT ARG_OUTPUT_DIRECTORY)
    set(ARG_OUTPUT_DIRECTORY ${SPEEDLAB_BUILD_PLUGIN_DIR})
  endif()
  set(target speedlab_plugin_${name})
  set(sources ${ARG_SOURCES})
  if(SPEEDLAB_HAS_CUDA AND ARG_CUDA_SOURCES)
    list(APPEND sources ${ARG_CUDA_SOURCES} ${PROJECT_SOURCE_DIR}/plugins/common/cuda_availability.cu)
  endif()
  add_library(${target} MODULE ${sources})
  target_link_libraries(${target} PRIVATE speedlab::sdk speedlab_warnings Threads::Threads speedlab_nvtx ${ARG_LIBRARIES})
  # Plugins may add NVTX ranges of their own (nvtx3 is header-only).
  target_compile_definitions(${target} PRIVATE SPEEDLAB_PLUGIN_HAS_NVTX=$<BOOL:${SPEEDLAB_HAS_NVTX}>)
  # plugins/common: Philox RNG, host parallel loops, CUDA checks and RAII buffers.
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/plugins/common)
  if(SPEEDLAB_HAS_CUDA AND ARG_CUDA_SOURCES)
    target_compile_definitions(${target} PRIVATE SPEEDLAB_PLUGIN_HAS_CUDA=1)
    target_link_libraries(${target} PRIVATE CUDA::cudart)
    set_target_properties(${target} PROPERTIES CUDA_SEPARABLE_COMPILATION OFF)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -lineinfo>)
  else()
    target_compile_definitions(${target} PRIVATE SPEEDLAB_PLUGIN_HAS_CUDA=0)
  endif()
  set_target_properties(${target} PROPERTIES
    PREFIX "libspeedlab-" OUTPUT_NAME ${name}
    LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY}
    CXX_VISIBILITY_PRESET hidden CUDA_VISIBILITY_PRESET hidden)
  if(NOT ARG_NO_INSTALL)
    install(TARGETS ${target} LIBRARY DESTINATION ${SPEEDLAB_INSTALL_PLUGIN_DIR})
  endif()
endfunction()
