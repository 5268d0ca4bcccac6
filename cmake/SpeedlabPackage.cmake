# `cpack -G DEB` (in the build folder): the installed prefix as one Debian package, speedlab,
# that installs on plain Debian 12 with Debian's repositories alone.
# - The program and the plugins link the CUDA runtime statically and open libcupti only
#   when a CUPTI session starts (profilers/cupti/cupti_loader.cpp), so they start without
#   NVIDIA's packages: CPU variants, analysis and reports work, CUDA variants say why they
#   cannot run. NVIDIA's CUPTI (cuda-cupti-X-Y, from NVIDIA's repository) is therefore a
#   Recommends, not a Depends: apt installs it where that repository is configured and
#   goes on without it elsewhere. libspeedlab-inject.so (`speedlab profile`) links libcupti
#   and is only loaded into programs on machines that have it.
# - Depends are the Debian packages of the shared libraries the ELF files need, as
#   dpkg-shlibdeps finds them (yaml-cpp and SQLite are linked statically, fmt, CLI11, json
#   and Boost.DLL are compiled in: cmake/SpeedlabDependencies.cmake); scripts/sdk-check.sh
#   checks them against dpkg-shlibdeps on every package it builds.
# - /usr/share/doc/speedlab: copyright (DEP-5), README.md, changelog.gz; a man page made by
#   help2man from `speedlab --help` where help2man is installed (install-deps.sh test).
set(CPACK_PACKAGE_NAME speedlab)
set(CPACK_PACKAGE_VENDOR "speedlab")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "profiles CPU and GPU workload plugins and explains where the time goes")
set(CPACK_PACKAGE_DESCRIPTION "speedlab runs workload plugins (the lessons of the classic GPU speedup
course: vector add, reductions, Monte Carlo, histogram, convolution, transpose,
Mandelbrot) in serial, threaded and CUDA variants, validates every result,
profiles the runs with host timers, CUPTI and NVTX, names the bottleneck and
writes Markdown, HTML, JSON and CSV reports. Without a GPU the CPU variants,
the analysis and the reports work; with NVIDIA's driver and CUPTI the CUDA
variants are measured and split into copies, kernels and API time.")
# Stripped ELF files (lintian: unstripped-binary-or-object); the plugins' entry symbols are
# dynamic symbols and stay, as do the kernels' -lineinfo tables (inside the CUDA fat binary).
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_CONTACT "speedlab maintainers <speedlab@localhost>")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Depends: dpkg-shlibdeps's answer for the ELF files (cpack runs it with
# --ignore-missing-info, so libcupti, which no Debian package has, is left out). Without
# dpkg-dev, its answer for this build on Debian 12, written out: libc6 from glibc 2.35's
# symbols, libstdc++6 and libgcc-s1 from GCC's, zlib for the profile stream's CRC-32.
find_program(SPEEDLAB_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(SPEEDLAB_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= 2.35), libgcc-s1 (>= 3.0), libstdc++6 (>= 11), zlib1g (>= 1:1.1.4)")
endif()
# python3 and NumPy run the lessons' py-* variants.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3, python3-numpy")
if(SPEEDLAB_HAS_CUPTI)
  string(APPEND CPACK_DEBIAN_PACKAGE_RECOMMENDS ", cuda-cupti-${CUDAToolkit_VERSION_MAJOR}-${CUDAToolkit_VERSION_MINOR}")
endif()
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "cmake (>= 3.25), g++ (>= 12), python3-numba")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)

set(_doc_dir ${CMAKE_INSTALL_DATADIR}/doc/speedlab)
install(FILES ${PROJECT_SOURCE_DIR}/cmake/package/copyright ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${_doc_dir})
# A native package's changelog (Debian policy 12.7), compressed as policy asks.
# Dated by the last commit (a fresh date at every configure would rebuild it each time).
execute_process(COMMAND git log -1 --format=%aD WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                OUTPUT_VARIABLE _changelog_date OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT _changelog_date)
  string(TIMESTAMP _changelog_date "%a, %d %b %Y %H:%M:%S +0000" UTC)
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/package/changelog.in ${PROJECT_BINARY_DIR}/package/changelog @ONLY)
find_program(SPEEDLAB_GZIP gzip)
find_program(SPEEDLAB_HELP2MAN help2man)
if(SPEEDLAB_GZIP)
  add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/package/changelog.gz
    COMMAND ${SPEEDLAB_GZIP} -9nf -k ${PROJECT_BINARY_DIR}/package/changelog
    DEPENDS ${PROJECT_BINARY_DIR}/package/changelog VERBATIM)
  set(_package_files ${PROJECT_BINARY_DIR}/package/changelog.gz)
  install(FILES ${PROJECT_BINARY_DIR}/package/changelog.gz DESTINATION ${_doc_dir})
  if(SPEEDLAB_HELP2MAN)
    # speedlab.1 from the program's own --help and --version, so the page cannot drift.
    add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/package/speedlab.1.gz
      COMMAND ${SPEEDLAB_HELP2MAN} --no-info --no-discard-stderr --section=1
              --name=${CPACK_PACKAGE_DESCRIPTION_SUMMARY}
              --include=${PROJECT_SOURCE_DIR}/cmake/package/speedlab.h2m
              --output=${PROJECT_BINARY_DIR}/package/speedlab.1 $<TARGET_FILE:speedlab>
      COMMAND ${SPEEDLAB_GZIP} -9nf ${PROJECT_BINARY_DIR}/package/speedlab.1
      DEPENDS speedlab ${PROJECT_SOURCE_DIR}/cmake/package/speedlab.h2m VERBATIM)
    list(APPEND _package_files ${PROJECT_BINARY_DIR}/package/speedlab.1.gz)
    install(FILES ${PROJECT_BINARY_DIR}/package/speedlab.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  else()
    message(STATUS "help2man not found: no man page (install-deps.sh test installs it)")
  endif()
  add_custom_target(speedlab_package_files ALL DEPENDS ${_package_files})
endif()
include(CPack)
