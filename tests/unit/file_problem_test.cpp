// Filesystem errors in words: the file in the way named, no "filesystem error:" or
// "Not a directory" in what a user reads (model/file_problem.hpp).
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "model/file_problem.hpp"
#include "model/saved_records.hpp"
#include "speedlab_catch.hpp"
#include "test_support.hpp"

using Catch::Contains;
namespace fs = std::filesystem;

namespace {
// The error std::filesystem throws for `make`.
template <class F>
fs::filesystem_error error_of(F make) {
  try {
    make();
  } catch (const fs::filesystem_error& e) {
    return e;
  }
  FAIL("no filesystem_error");
  throw std::logic_error("unreachable");
}
} // namespace

TEST_CASE("file_problem: a file where a folder should be is named", "[file_problem]") {
  speedlab::testing::temp_dir dir;
  const fs::path file = dir.path() / "report.txt";
  std::ofstream(file) << "x";
  CHECK(speedlab::file_in_the_way(file) == file);
  CHECK(speedlab::file_in_the_way(file / "a" / "b") == file);
  CHECK_FALSE(speedlab::file_in_the_way(dir.path() / "new" / "folder"));
  CHECK_FALSE(speedlab::file_in_the_way(dir.path()));

  const auto e = error_of([&] { fs::create_directories(file / "sub"); });
  const std::string words = speedlab::file_problem(e);
  CHECK_THAT(words, Contains(fmt::format("cannot create the folder '{}'", (file / "sub").string())) &&
                        Contains(fmt::format("'{}' is a file, not a folder", file.string())));
  CHECK_THAT(words, !Contains("filesystem error") && !Contains("Not a directory"));
  CHECK(speedlab::json_problem(e) == words); // main's catch-all says it the same way
}

TEST_CASE("file_problem: other errors keep their path and say why in lower case", "[file_problem]") {
  speedlab::testing::temp_dir dir;
  const auto missing = error_of([&] {
    fs::directory_iterator it(dir.path() / "nope");
    (void)it;
  });
  CHECK_THAT(
      speedlab::file_problem(missing),
      Contains(fmt::format("cannot open the folder '{}': no such file or folder", (dir.path() / "nope").string())));
  const auto size = error_of([&] { (void)fs::file_size(dir.path() / "nope"); });
  CHECK_THAT(speedlab::file_problem(size),
             Contains(fmt::format("'{}': no such file or folder", (dir.path() / "nope").string())) &&
                 !Contains("filesystem error"));
}
