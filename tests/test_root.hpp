// Where the tests find their files, one way for every test binary: the test root is
// $SPEEDLAB_TEST_ROOT when set, else the folder holding the test binary. Under it:
//   speedlab          the host program          plugins/        the built-in plugins
//   test-plugins/     crashers, wrong ABI, ...  tests/fixtures/ recorded data
//   tests/golden/     expected report output    tests/tools/    scripts a test runs
// The build folder is laid out so (tests/fixtures and tests/golden link to the sources), and
// scripts/gpu-prepare.sh copies the same layout into .device-carry/: no path is compiled in.
#pragma once

#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
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

// The interpreter the Python variants' tests run: $SPEEDLAB_TEST_PYTHON, else the first of
// Debian's /usr/bin/python3 and python3 from PATH that imports NumPy (a pyenv python3 here,
// a venv python3 on the GPU machine: each has NumPy on one side only), else Debian's.
inline bool python_imports_numpy(const char* python) {
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    if (const int null = open("/dev/null", O_WRONLY); null >= 0) { dup2(null, 1); dup2(null, 2); }
    execlp(python, python, "-c", "import numpy", static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

inline std::string test_python() {
  if (const char* python = std::getenv("SPEEDLAB_TEST_PYTHON"); python && *python) return python;
  static const std::string chosen = [] {
    for (const char* candidate : {"/usr/bin/python3", "python3"})
      if (python_imports_numpy(candidate)) return std::string(candidate);
    std::error_code ec;
    return std::string(std::filesystem::exists("/usr/bin/python3", ec) ? "/usr/bin/python3" : "python3");
  }();
  return chosen;
}

} // namespace speedlab::testing
