#include "speedlab_catch.hpp"

#include "app/plugin_loader.hpp"
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
  CHECK_THAT(reg.errors()[1].message, Contains("cannot be loaded as a shared library"));
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

TEST_CASE("loader: did-you-mean finds close names only", "[loader]") {
  CHECK(did_you_mean("vectr", {"vector", "reduction"}) == "vector");
  CHECK(did_you_mean("histgram", {"histogram", "transpose"}) == "histogram");
  CHECK(did_you_mean("zzzzzz", {"vector", "reduction"}).empty());
}

TEST_CASE("loader: SPEEDLAB_PLUGIN_PATH and --plugin-path are searched", "[loader]") {
  ::setenv("SPEEDLAB_PLUGIN_PATH", "/a:/b", 1);
  const auto paths = plugin_search_path({"/cli"});
  ::unsetenv("SPEEDLAB_PLUGIN_PATH");
  REQUIRE(paths.size() == 3);
  CHECK(paths[0] == "/cli");
  CHECK(paths[1] == "/a");
  CHECK(paths[2] == "/b");
}
