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
# - /usr/share/doc/speedlab: copyright (DEP-5), README.md, changelog.gz.
# - /usr/share/man/man1: speedlab(1) and speedlab-COMMAND(1) for each command, printed by the
#   built program from its command-line definitions (`speedlab help-man --out DIR`,
#   app/cli/man_page.cpp), so they cannot drift from --help; `cmake --install` installs them too.
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
execute_process(COMMAND git log -1 --format=%as WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                OUTPUT_VARIABLE _man_date OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT _man_date)
  string(TIMESTAMP _man_date "%Y-%m-%d" UTC)
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/package/changelog.in ${PROJECT_BINARY_DIR}/package/changelog @ONLY)
find_program(SPEEDLAB_GZIP gzip)
# The manual pages: one folder, written whole by the program (the commands are its own, so a
# new command gets its page without a change here), compressed where gzip is (Debian policy 12.1).
set(_man_dir ${PROJECT_BINARY_DIR}/package/man)
add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/package/man.stamp
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${_man_dir}
  COMMAND ${CMAKE_COMMAND} -DSPEEDLAB=$<TARGET_FILE:speedlab> -DOUT=${_man_dir} -DDATE=${_man_date}
          -DGZIP=${SPEEDLAB_GZIP} -P ${PROJECT_SOURCE_DIR}/cmake/SpeedlabManPages.cmake
  COMMAND ${CMAKE_COMMAND} -E touch ${PROJECT_BINARY_DIR}/package/man.stamp
  DEPENDS speedlab ${PROJECT_SOURCE_DIR}/cmake/SpeedlabManPages.cmake VERBATIM)
set(_package_files ${PROJECT_BINARY_DIR}/package/man.stamp)
install(DIRECTORY ${_man_dir}/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
if(SPEEDLAB_GZIP)
  add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/package/changelog.gz
    COMMAND ${SPEEDLAB_GZIP} -9nf -k ${PROJECT_BINARY_DIR}/package/changelog
    DEPENDS ${PROJECT_BINARY_DIR}/package/changelog VERBATIM)
  list(APPEND _package_files ${PROJECT_BINARY_DIR}/package/changelog.gz)
  install(FILES ${PROJECT_BINARY_DIR}/package/changelog.gz DESTINATION ${_doc_dir})
endif()
add_custom_target(speedlab_package_files ALL DEPENDS ${_package_files})
include(CPack)
