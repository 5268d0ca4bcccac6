// Python variants (docs/python-variants.md): variants written in Python with the package
// speedlab ships (python/speedlab_variants), run in a Python process of the user's choosing
// and driven over a socket with one JSON line per request. The workload's arrays live in a
// memfd that speedlab fills with the workload's own fill() and NumPy maps; the result is
// checked by the workload's own check(). Each such variant is an ordinary variant_spec
// ("py-<name>", language "python"), so the runner times it, isolates it and stops it by
// the same rules as the C++ variants.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "app/plugins/plugin_loader.hpp"
#include "app/suite/suite_config.hpp"

namespace speedlab::app {

struct python_settings {
  std::string interpreter = "python3";  // --python, suite key `python:`
  std::vector<std::string> files;       // extra variant files: --python-variants, suite key `python_variants:`
  bool enabled = true;                  // --no-python: C++ variants only
  // How `interpreter` was chosen ("--python", "the suite key python:"); empty: not chosen, so
  // each variant runs with the first of `interpreter` and `fallbacks` that imports what it
  // needs. A chosen interpreter is never replaced.
  std::string chosen_by;
  // The system interpreter the install script fills (python3-numpy, python3-numba).
  std::vector<std::string> fallbacks{"/usr/bin/python3"};
};

struct python_variants_added {
  // Which interpreter the Python variants run with and why (the run header, run.json's
  // notes, the reports); empty when no Python variant was listed.
  std::string interpreter;
  std::vector<std::string> notes; // no interpreter, import errors, a workload not loaded
};

// The folder holding the speedlab_variants package: SPEEDLAB_PYTHON_DIR, else the installed
// share/speedlab/python next to the binary, else the source tree's python/. Empty if none.
std::filesystem::path python_package_dir();

// Asks the interpreter(s) which Python variants exist and adds them to their workloads, each
// with the interpreter it runs with. A variant whose package no interpreter tried has is
// added and skipped at run time with the reason.
python_variants_added add_python_variants(plugin_registry& registry, const python_settings& settings);

// The Python settings a suite names (`python:`, `python_variants:`, --no-python).
python_settings python_settings_of(const suite_config& suite);

} // namespace speedlab::app
