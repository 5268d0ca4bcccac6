// Where the tests find their files, one way for every test binary: the test root is
// $SPEEDLAB_TEST_ROOT when set, else the folder holding the test binary. Under it:
//   speedlab          the host program          plugins/        the built-in plugins
//   test-plugins/     crashers, wrong ABI, ...  tests/fixtures/ recorded data
//   tests/golden/     expected report output    tests/tools/    scripts a test runs
// The build folder is laid out so (tests/fixtures and tests/golden link to the sources), and
// scripts/gpu-prepare.sh copies the same layout into .device-carry/: no path is compiled in.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace speedlab::testing {

inline std::filesystem::path test_root() {
  if (const char* root = std::getenv("SPEEDLAB_TEST_ROOT"); root && *root) return std::filesystem::absolute(root);
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::current_path() : exe.parent_path();
}

inline std::filesystem::path fixture_dir() { return test_root() / "tests" / "fixtures"; }
inline std::filesystem::path golden_root() { return test_root() / "tests" / "golden"; }
inline std::filesystem::path speedlab_binary() { return test_root() / "speedlab"; }
inline std::filesystem::path build_plugin_dir() { return test_root() / "plugins"; }
inline std::filesystem::path test_plugin_dir() { return test_root() / "test-plugins"; }

// The interpreter the Python variants' tests run: $SPEEDLAB_TEST_PYTHON, else Debian's
// (which has the NumPy and Numba scripts/install-deps.sh installs; a PATH python3 from pyenv
// often has neither), else python3 from PATH.
inline std::string test_python() {
  if (const char* python = std::getenv("SPEEDLAB_TEST_PYTHON"); python && *python) return python;
  std::error_code ec;
  return std::filesystem::exists("/usr/bin/python3", ec) ? "/usr/bin/python3" : "python3";
}

} // namespace speedlab::testing
