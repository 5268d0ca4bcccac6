// Golden-file helpers for reporter tests: render a reporter into a fresh temporary folder
// and compare one of its files with tests/golden/<name>. Set SPEEDLAB_UPDATE_GOLDEN=1 to
// rewrite the golden files from the current output (then review the diff before committing).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "speedlab_catch.hpp"

#include "reports/reporter.hpp"
#include "test_root.hpp"

namespace speedlab::test_golden {

// tests/golden under the test root (test_root.hpp); in the build folder it links to the
// sources, so SPEEDLAB_UPDATE_GOLDEN=1 rewrites the files in the source tree.
inline std::filesystem::path golden_dir() { return testing::golden_root(); }

// A new empty directory under the system temp dir, removed when the object dies.
struct temp_dir {
  std::filesystem::path path;
  temp_dir() {
    std::random_device rd;
    path = std::filesystem::temp_directory_path() / ("speedlab-report-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path);
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
};

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs reporter `name` on `in` and returns the content of `file` it wrote.
inline std::string render(const std::string& name, const reports::report_input& in, const std::string& file) {
  auto r = reports::make_reporter(name);
  REQUIRE(r);
  temp_dir dir;
  const auto written = r->write(in, dir.path);
  REQUIRE(std::filesystem::exists(dir.path / file));
  return read_file(dir.path / file);
}

inline void check_golden(const std::string& golden_name, const std::string& actual) {
  const auto path = golden_dir() / golden_name;
  const char* update = std::getenv("SPEEDLAB_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    WARN("golden file rewritten: " << path.string());
    return;
  }
  REQUIRE(std::filesystem::exists(path));
  const std::string expected = read_file(path);
  if (expected != actual) {
    const auto actual_path = std::filesystem::temp_directory_path() / (golden_name + ".actual");
    std::error_code ec; // a golden name with a folder ("program/report.md") needs it made
    std::filesystem::create_directories(actual_path.parent_path(), ec);
    std::ofstream(actual_path, std::ios::binary) << actual;
    // Point at the first difference so the failure is readable without a diff tool.
    std::size_t i = 0;
    while (i < expected.size() && i < actual.size() && expected[i] == actual[i]) ++i;
    const std::size_t from = i > 80 ? i - 80 : 0;
    FAIL("output differs from " << path.string() << " at byte " << i << "\n--- expected: ...\n"
                                << expected.substr(from, 200) << "\n--- actual: ...\n" << actual.substr(from, 200)
                                << "\nfull output: " << actual_path.string()
                                << "\n(SPEEDLAB_UPDATE_GOLDEN=1 rewrites the golden file)");
  }
}

} // namespace speedlab::test_golden
