// The one atomic-write helper: a failed write leaves the previous file whole and no
// temporary file behind.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "speedlab_catch.hpp"

#include <fstream>
#include <iterator>
#include <string>

#include "model/atomic_file.hpp"
#include "test_support.hpp"

using namespace speedlab;
namespace t = speedlab::testing;

namespace {
std::size_t entries(const std::filesystem::path& dir) {
  return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()));
}
} // namespace

TEST_CASE("atomic_file: replaces the file whole and leaves no temporary file", "[atomic_file]") {
  t::temp_dir dir;
  const auto file = dir.path() / "report.md";
  write_file_atomically(file, "old content\n");
  write_file_atomically(file, "new content\n");
  CHECK(t::read_text(file) == "new content\n");
  CHECK(entries(dir.path()) == 1);
}

TEST_CASE("atomic_file: a writer that fails before commit leaves the old file", "[atomic_file]") {
  t::temp_dir dir;
  const auto file = dir.path() / "results.json";
  write_file_atomically(file, "{\"old\": true}\n");
  try {
    atomic_file f(file);
    f.stream() << "{\"new\": ";
    throw std::runtime_error("the writer failed half-way");
  } catch (const std::runtime_error&) {
  }
  CHECK(t::read_text(file) == "{\"old\": true}\n");
  CHECK(entries(dir.path()) == 1);
}

TEST_CASE("atomic_file: a write that fails (file size limit) throws and keeps the old file", "[atomic_file]") {
  t::temp_dir dir;
  const auto file = dir.path() / "run.json";
  const std::string old_content = "{\"old\": true}\n";
  write_file_atomically(file, old_content);
  // In a child: the limit makes write() fail with EFBIG, as a full disk would.
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit limit{64, 64};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    try {
      write_file_atomically(file, std::string(100000, 'x'));
    } catch (const std::runtime_error& e) {
      ::_exit(std::string(e.what()).find("run.json") != std::string::npos ? 0 : 2);
    }
    ::_exit(1); // the failure went unnoticed
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(t::read_text(file) == old_content);
  CHECK(entries(dir.path()) == 1);
}

TEST_CASE("atomic_file: a target that cannot be replaced is an error naming it", "[atomic_file]") {
  t::temp_dir dir;
  std::filesystem::create_directories(dir.path() / "report.html"); // a folder where the file goes
  CHECK_THROWS_WITH(write_file_atomically(dir.path() / "report.html", "x"), Catch::Contains("report.html: cannot replace"));
  CHECK(entries(dir.path()) == 1);
}
