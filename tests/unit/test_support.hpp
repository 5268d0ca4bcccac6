// Shared by the tests: paths of the test plugins and the speedlab binary (test_root.hpp), temp folders,
// and running the binary to check exit codes and output.
#pragma once

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include "test_root.hpp"

namespace speedlab::testing {

inline std::filesystem::path faulty_plugin() { return test_plugin_dir() / "libspeedlab-faulty.so"; }

// A fresh folder under the system temp dir, removed when the object goes.
class temp_dir {
public:
  temp_dir() {
    std::random_device rd;
    m_path = std::filesystem::temp_directory_path() / ("speedlab-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(m_path);
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
  }
  const std::filesystem::path& path() const { return m_path; }

private:
  std::filesystem::path m_path;
};

struct command_result {
  int exit_code = -1;
  std::string output; // stdout and stderr together
};

inline command_result run_command(const std::string& command) {
  command_result r;
  std::FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), pipe)) r.output += buf.data();
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// A file's whole content, bytes as they are ("" when it cannot be read).
inline std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

} // namespace speedlab::testing
