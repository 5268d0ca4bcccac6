#include "speedlab_catch.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>

#include "app/plugins/plugin_loader.hpp"
#include "app/plugins/plugin_probe.hpp"
#include "test_support.hpp"

using namespace speedlab::app;
using Catch::Contains;
namespace t = speedlab::testing;

TEST_CASE("loader: a good plugin loads with its workloads and variants", "[loader]") {
  plugin_registry reg;
  REQUIRE(reg.load_file(t::faulty_plugin()));
  CHECK(reg.errors().empty());
  const auto* w = reg.find("faulty");
  REQUIRE(w);
  CHECK(w->info.parameters.size() == 3);
  CHECK(w->find_variant("segfault"));
  CHECK_FALSE(w->find_variant("nope"));
  CHECK(w->file == t::faulty_plugin());
}

TEST_CASE("loader: a missing file is an error naming it", "[loader]") {
  plugin_registry reg;
  CHECK_FALSE(reg.load_file("/nonexistent/libspeedlab-missing.so"));
  REQUIRE(reg.errors().size() == 1);
  CHECK(reg.errors()[0].file == "/nonexistent/libspeedlab-missing.so");
  CHECK_THAT(reg.errors()[0].message, Contains("not found"));
}

TEST_CASE("loader: a shared library that is not a plugin, and a non-ELF file", "[loader]") {
  plugin_registry reg;
  CHECK_FALSE(reg.load_file(t::test_plugin_dir() / "not-a-plugin" / "libspeedlab-not-a-plugin.so"));
  CHECK_FALSE(reg.load_file(t::test_plugin_dir() / "garbage" / "libspeedlab-garbage.so"));
  REQUIRE(reg.errors().size() == 2);
  CHECK_THAT(reg.errors()[0].message, Contains("not a speedlab plugin"));
  CHECK_THAT(reg.errors()[1].message, Contains("not a shared library (no ELF header)"));
}

TEST_CASE("loader: a plugin built for another ABI is refused with both versions", "[loader]") {
  plugin_registry reg;
  CHECK_FALSE(reg.load_file(t::test_plugin_dir() / "wrong-abi" / "libspeedlab-wrong-abi.so"));
  REQUIRE(reg.errors().size() == 1);
  CHECK_THAT(reg.errors()[0].message, Contains("ABI version 9999") && Contains("rebuild the plugin"));
}

TEST_CASE("loader: bad files do not stop the good ones in the same folders", "[loader]") {
  plugin_registry reg;
  reg.load_directory(t::test_plugin_dir() / "garbage");
  reg.load_directory(t::test_plugin_dir() / "wrong-abi");
  reg.load_directory(t::test_plugin_dir());
  reg.load_directory("/nonexistent-folder");
  CHECK(reg.find("faulty"));
  CHECK(reg.errors().size() == 3);
}

TEST_CASE("loader: SPEEDLAB_PLUGIN_PATH and --plugin-path are searched", "[loader]") {
  ::setenv("SPEEDLAB_PLUGIN_PATH", "/a:/b", 1);
  const auto paths = plugin_search_path({"/cli"});
  ::unsetenv("SPEEDLAB_PLUGIN_PATH");
  // Built-in folder (where one is found) first, then the variable, then the command line:
  // later ones win.
  REQUIRE(paths.size() >= 3);
  const std::vector<std::filesystem::path> tail(paths.end() - 3, paths.end());
  CHECK(tail == std::vector<std::filesystem::path>{"/a", "/b", "/cli"});
}

namespace {
std::string error_for(const plugin_registry& reg, const std::string& file_name) {
  for (const auto& e : reg.errors())
    if (e.file.filename() == file_name) return e.message;
  return "<no error recorded for " + file_name + ">";
}
} // namespace

TEST_CASE("loader: plugins that crash, abort, exit or fail to link are skipped with the reason", "[loader][probe]") {
  plugin_registry reg;
  reg.load({t::test_plugin_dir() / "broken", t::faulty_plugin()});
  CHECK(reg.find("faulty")); // the good one still loads, after the bad ones
  CHECK_FALSE(reg.find("broken"));
  CHECK_THAT(error_for(reg, "libspeedlab-broken-crash.so"), Contains("SIGSEGV") && Contains("describe()"));
  CHECK_THAT(error_for(reg, "libspeedlab-broken-abort.so"), Contains("SIGABRT"));
  CHECK_THAT(error_for(reg, "libspeedlab-broken-exit.so"), Contains("exit code 3"));
  // The loader's own words, not "Bad file descriptor".
  CHECK_THAT(error_for(reg, "libspeedlab-broken-undefined.so"),
             Contains("undefined symbol") && Contains("speedlab_test_symbol_nobody_defines"));
  CHECK_THAT(error_for(reg, "libspeedlab-broken-missing-dep.so"),
             Contains("libspeedlab_test_dependency.so") && Contains("No such file"));
  const std::string truncated = error_for(reg, "libspeedlab-truncated.so");
  CHECK((truncated.find("SIGBUS") != std::string::npos || truncated.find("cannot be loaded") != std::string::npos));
  CHECK(reg.errors().size() == 6);
}

TEST_CASE("loader: a plugin whose describe() hangs is given up after the probe's timeout", "[loader][probe]") {
  const auto hang = t::test_plugin_dir() / "broken-hang" / "libspeedlab-broken-hang.so";
  const auto start = std::chrono::steady_clock::now();
  const auto verdicts = probe_plugins({hang, t::faulty_plugin()}, 0.5);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  REQUIRE(verdicts.size() == 2);
  CHECK_THAT(verdicts[0], Contains("did not finish within 0.5 s"));
  CHECK(verdicts[1].empty());
}

TEST_CASE("loader: files are judged by their first bytes before anything runs", "[loader][probe]") {
  t::temp_dir dir;
  auto write = [&](const char* name, std::string bytes) {
    std::ofstream(dir.path() / name, std::ios::binary) << bytes;
    return elf_problem(dir.path() / name);
  };
  CHECK_THAT(write("text", "hello"), Contains("no ELF header"));
  CHECK_THAT(write("empty", ""), Contains("no ELF header"));
  std::string elf32(52, '\0');
  elf32.replace(0, 5, "\x7f" "ELF\x01");
  CHECK_THAT(write("elf32", elf32), Contains("32-bit"));
  std::string arm(64, '\0');
  arm.replace(0, 5, "\x7f" "ELF\x02");
  arm[16] = 3;  // ET_DYN
  arm[18] = static_cast<char>(183); // EM_AARCH64
  CHECK_THAT(write("arm", arm), Contains("another architecture (AArch64)"));
  CHECK_THAT(write("short", std::string("\x7f" "ELF\x02", 5)), Contains("ends after 5 bytes"));
  CHECK(elf_problem(t::faulty_plugin()).empty());
  std::string object(64, '\0');
  object.replace(0, 5, "\x7f" "ELF\x02");
  object[16] = 1; // ET_REL
  CHECK_THAT(write("object", object), Contains("an object file"));
  // A position-independent executable looks like a library by its header; dlopen says no.
  REQUIRE(elf_problem(t::speedlab_binary()).empty());
  const auto verdict = probe_plugins({t::speedlab_binary()}, 10);
  CHECK_THAT(verdict.at(0), Contains("cannot be loaded"));
}

TEST_CASE("loader: files in a folder that are passed over say why", "[loader]") {
  t::temp_dir dir;
  std::filesystem::copy_file(t::faulty_plugin(), dir.path() / "libspeedlab-faulty.so");
  std::filesystem::copy_file(t::faulty_plugin(), dir.path() / "faulty.so");
  std::ofstream(dir.path() / "README") << "notes\n";
  std::filesystem::create_directory(dir.path() / "sub");
  plugin_registry reg;
  reg.load({dir.path()});
  CHECK(reg.find("faulty"));
  CHECK(reg.errors().empty());
  REQUIRE(reg.skipped().size() == 3);
  std::map<std::string, std::string> why;
  for (const auto& s : reg.skipped()) why[s.file.filename().string()] = s.message;
  CHECK_THAT(why["faulty.so"], Contains("name does not match libspeedlab-*.so"));
  CHECK_THAT(why["README"], Contains("name does not match"));
  CHECK_THAT(why["sub"], Contains("not searched recursively"));
}

TEST_CASE("loader: a later plugin defining the same workload replaces the earlier one, with a note", "[loader]") {
  t::temp_dir a, b;
  std::filesystem::copy_file(t::faulty_plugin(), a.path() / "libspeedlab-faulty.so");
  std::filesystem::copy_file(t::faulty_plugin(), b.path() / "libspeedlab-faulty.so");
  plugin_registry reg;
  reg.load({a.path(), b.path()});
  REQUIRE(reg.find("faulty"));
  CHECK(reg.find("faulty")->file == b.path() / "libspeedlab-faulty.so");
  REQUIRE(reg.notes().size() == 1);
  CHECK_THAT(reg.notes()[0], Contains("replaces") && Contains(a.path().string()));
  CHECK(reg.errors().empty());
}

TEST_CASE("loader: a folder named twice is searched once", "[loader]") {
  const auto dir = t::test_plugin_dir().string();
  const auto paths = plugin_search_path({dir, dir + "/", dir + "/../test-plugins"});
  CHECK(std::count(paths.begin(), paths.end(), std::filesystem::path(dir)) == 1);
  CHECK(paths.back() == dir);
}
