// `speedlab new`: the project files, the commands it prints (quoted, with the package prefix) and
// the command's refusals (app/new_project/new_project.cpp). That the project builds and runs
// against an installed prefix is the sdk_install test's; against the build tree, with the
// printed commands pasted as they are, the scaffold_trial test's.
#include <algorithm>
#include <fstream>
#include <sstream>

#include <speedlab/config.hpp>

#include "app/new_project/new_project.hpp"
#include "speedlab_catch.hpp"
#include "test_support.hpp"

using namespace speedlab;

namespace {
const std::string* file(const std::vector<std::pair<std::string, std::string>>& files, const std::string& name) {
  for (const auto& [n, content] : files)
    if (n == name) return &content;
  return nullptr;
}
} // namespace

TEST_CASE("speedlab new writes a complete project, CUDA part only with --cuda", "[new]") {
  const auto cuda = app::new_project_files("row-sum", true);
  for (const char* name : {"CMakeLists.txt", "row-sum.cpp", "row-sum_cuda.hpp", "row-sum_cuda.cu", "row-sum.yaml", "README.md"})
    CHECK(file(cuda, name));
  for (const auto& [name, content] : cuda) {
    INFO(name);
    CHECK(content.find('@') == std::string::npos); // every placeholder filled
  }
  CHECK(file(cuda, "CMakeLists.txt")->find("find_package(speedlab") != std::string::npos);
  CHECK(file(cuda, "CMakeLists.txt")->find("CUDA_SOURCES row-sum_cuda.cu") != std::string::npos);
  CHECK(file(cuda, "row-sum.cpp")->find("row_sum_cuda_variant()") != std::string::npos); // '-' -> '_' in C++
  CHECK(file(cuda, "row-sum.cpp")->find(".as_size_axis()") != std::string::npos);
  const auto& readme = *file(cuda, "README.md");
  CHECK(std::count(readme.begin(), readme.end(), '\n') == 5);

  const auto host = app::new_project_files("row-sum", false);
  CHECK(host.size() == 4);
  CHECK_FALSE(file(host, "row-sum_cuda.cu"));
  CHECK(file(host, "CMakeLists.txt")->find("CUDA") == std::string::npos);
  CHECK(file(host, "row-sum.cpp")->find("cuda") == std::string::npos);
}

TEST_CASE("speedlab new refuses bad names and non-empty folders, exit 2", "[new][cli]") {
  const speedlab::testing::temp_dir tmp;
  const auto bin = speedlab::testing::speedlab_binary().string();
  auto bad = speedlab::testing::run_command("'" + bin + "' new 'Bad Name' --dir '" + (tmp.path() / "x").string() + "'");
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("not a usable plugin name") != std::string::npos);
  const auto dir = tmp.path() / "p";
  const auto ok = speedlab::testing::run_command("'" + bin + "' new my-kernel --dir '" + dir.string() + "'");
  REQUIRE(ok.exit_code == 0);
  CHECK(std::filesystem::exists(dir / "my-kernel.cpp"));
  const auto again = speedlab::testing::run_command("'" + bin + "' new my-kernel --dir '" + dir.string() + "'");
  CHECK(again.exit_code == 2);
  CHECK(again.output.find("not empty") != std::string::npos);
}

TEST_CASE("a speedlab new project builds Release unless told otherwise", "[new][cmake]") {
  // Configured against a stand-in speedlab package (no install, no compile): cheap, and the
  // project's own CMakeLists decides the build type. scripts/sdk-check.sh (sdk_install)
  // builds one for real and checks that its plugin says it was optimized.
  const speedlab::testing::temp_dir tmp;
  const auto stub = tmp.path() / "stub";
  std::filesystem::create_directories(stub);
  std::ofstream(stub / "speedlabConfig.cmake") << "function(speedlab_add_plugin)\nendfunction()\n";
  std::ofstream(stub / "speedlabConfigVersion.cmake")
      << "set(PACKAGE_VERSION 0.1.0)\nset(PACKAGE_VERSION_COMPATIBLE TRUE)\n";
  const auto project = tmp.path() / "p";
  std::filesystem::create_directories(project);
  for (const auto& [name, content] : app::new_project_files("my-kernel", false)) std::ofstream(project / name) << content;
  auto configure = [&](const std::string& folder, const std::string& extra) {
    const auto r = speedlab::testing::run_command("cmake -S '" + project.string() + "' -B '" + (tmp.path() / folder).string() +
                                                  "' -Dspeedlab_DIR='" + stub.string() + "' " + extra);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    return speedlab::testing::read_text(tmp.path() / folder / "CMakeCache.txt");
  };
  CHECK(configure("default", "").find("CMAKE_BUILD_TYPE:STRING=Release\n") != std::string::npos);
  CHECK(configure("debug", "-DCMAKE_BUILD_TYPE=Debug").find("CMAKE_BUILD_TYPE:STRING=Debug\n") != std::string::npos);
}

TEST_CASE("speedlab new quotes what it prints for the shell", "[new]") {
  CHECK(app::shell_quote("my-kernel/build") == "my-kernel/build");
  CHECK(app::shell_quote("my plugins/spacey") == "'my plugins/spacey'");
  CHECK(app::shell_quote("it's") == "'it'\\''s'");
  CHECK(app::shell_quote("$HOME") == "'$HOME'");
  CHECK(app::shell_quote("") == "''");
  std::ostringstream out;
  app::print_next_steps(out, "spacey", "my plugins/spacey", false, "/opt/speed lab", "speedlab");
  const std::string text = out.str();
  INFO(text);
  CHECK(text.find("  cmake -S 'my plugins/spacey' -B 'my plugins/spacey/build' -DCMAKE_PREFIX_PATH='/opt/speed lab' && "
                  "cmake --build 'my plugins/spacey/build'\n") != std::string::npos);
  CHECK(text.find("  speedlab list --plugin-path 'my plugins/spacey/build'\n") != std::string::npos);
  CHECK(text.find("  speedlab run 'my plugins/spacey/spacey.yaml' --plugin-path 'my plugins/spacey/build'\n") !=
        std::string::npos);
  std::ostringstream unknown;
  app::print_next_steps(unknown, "x", "x", false, {}, "/a b/speedlab");
  CHECK(unknown.str().find("<speedlab prefix>") != std::string::npos);
  CHECK(unknown.str().find("note: no CMake package of speedlab") != std::string::npos);
}

TEST_CASE("speedlab new finds the package beside the program: build tree or installed prefix", "[new]") {
  const speedlab::testing::temp_dir tmp;
  const auto build = tmp.path() / "build";
  std::filesystem::create_directories(build / "lib/cmake/speedlab");
  std::ofstream(build / "lib/cmake/speedlab/speedlabConfig.cmake") << "\n";
  CHECK(app::package_prefix_beside(build) == std::filesystem::weakly_canonical(build));
  const auto prefix = tmp.path() / "pre fix";
  std::filesystem::create_directories(prefix / "bin");
  CHECK(app::package_prefix_beside(prefix / "bin").empty());
  std::filesystem::create_directories(prefix / "bin" / SPEEDLAB_PACKAGE_DIR_FROM_BIN);
  std::ofstream(prefix / "bin" / SPEEDLAB_PACKAGE_DIR_FROM_BIN / "speedlabConfig.cmake") << "\n";
  CHECK(app::package_prefix_beside(prefix / "bin") == std::filesystem::weakly_canonical(prefix));
  // The project files carry the prefix, quoted, in place of the placeholder.
  const auto files = app::new_project_files("row-sum", false, (prefix).string());
  CHECK(file(files, "README.md")->find("-DCMAKE_PREFIX_PATH='" + prefix.string() + "'") != std::string::npos);
}
