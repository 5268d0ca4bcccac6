# Build-time settings of the program's own libraries, in one place (included at the end of the
# top-level CMakeLists.txt, once every target exists), so no folder's CMakeLists.txt repeats them.
#
# SPEEDLAB_UNITY_BUILD (OFF; scripts/quickstart.sh switches it on): the libraries and the program
# of model/ profilers/ device/ analysis/ reports/ app/ are compiled in batches of
# SPEEDLAB_UNITY_BATCH_SIZE sources, one compiler run per batch, so nlohmann/json, fmt, yaml-cpp,
# CLI11 and the standard headers are parsed once a batch instead of once a source. It costs an
# incremental build (an edit recompiles its whole batch) and ccache hits (a batch's text changes
# with any of its files), hence off for development and CI (scripts/test.sh). Plugins are left
# as they are: their kernels are what the lessons measure, compiled the same in every build.
option(SPEEDLAB_UNITY_BUILD "Compile the program's sources in batches (a faster clean build)" OFF)
set(SPEEDLAB_UNITY_BATCH_SIZE 16 CACHE STRING "Sources per unity batch (SPEEDLAB_UNITY_BUILD)")

# Sources that cannot share a batch: their file-local names (anonymous namespaces, statics)
# collide with another source of the same target. Relative to the repository root.
# The analysis sources that call speedlab::stats as `stats::`: after a source that includes
# crossover.hpp (namespace analysis::stats) that name means the other namespace. html_reporter.cpp:
# a cell helper of another report source makes its row initialisers ambiguous.
# cupti_loader.cpp: an interface source (profilers/cupti/CMakeLists.txt), compiled into the
# profilers' library and into each program that links it; batched with the library's other
# sources, a program that needs any of them pulls the library's copy of the forwarders beside
# its own (multiple definitions: the quick start's link of speedlab_launch_storm failed).
set(_speedlab_unity_excluded analysis/program_accumulate.cpp analysis/program_merge.cpp analysis/program_serialize.cpp
  analysis/program_stream.cpp analysis/rank_analysis.cpp analysis/time_split.cpp
  reports/html/html_reporter.cpp profilers/cupti/cupti_loader.cpp)

# Every target defined in a folder and below it.
function(_speedlab_targets_below dir out)
  get_property(_targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(_subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(_sub IN LISTS _subdirs)
    _speedlab_targets_below(${_sub} _below)
    list(APPEND _targets ${_below})
  endforeach()
  set(${out} ${_targets} PARENT_SCOPE)
endfunction()

if(SPEEDLAB_UNITY_BUILD)
  set(_speedlab_unity_targets)
  foreach(_folder model profilers device analysis reports app)
    _speedlab_targets_below(${PROJECT_SOURCE_DIR}/${_folder} _found)
    list(APPEND _speedlab_unity_targets ${_found})
  endforeach()
  foreach(_target IN LISTS _speedlab_unity_targets)
    get_target_property(_type ${_target} TYPE)
    if(_type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|EXECUTABLE)$")
      set_target_properties(${_target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE BATCH
        UNITY_BUILD_BATCH_SIZE ${SPEEDLAB_UNITY_BATCH_SIZE})
      # A batch #includes its sources, so GCC takes a pimpl whose fields have file-local types
      # (counter_collector::impl, source_collector::impl) for a header's class and warns
      # (-Wsubobject-linkage); compiled one by one, as CI does, they are main-file classes.
      if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
        target_compile_options(${_target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-subobject-linkage>)
      endif()
      foreach(_source IN LISTS _speedlab_unity_excluded)
        set_source_files_properties(${PROJECT_SOURCE_DIR}/${_source} TARGET_DIRECTORY ${_target}
          PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
      endforeach()
    endif()
  endforeach()
endif()
