// The reporter registry: every format folder registers itself under its documented name.
#include <algorithm>

#include "speedlab_catch.hpp"

#include "reports/reporter.hpp"

using namespace speedlab::reports;

TEST_CASE("every report format is registered by name", "[report][registry]") {
  const auto names = reporter_names();
  for (const char* expected : {"markdown", "html", "json", "csv", "perfetto", "nsys-sqlite"}) {
    INFO(expected);
    CHECK(std::find(names.begin(), names.end(), expected) != names.end());
    auto r = make_reporter(expected);
    REQUIRE(r);
    CHECK(r->name() == expected);
    CHECK_FALSE(r->description().empty());
  }
  CHECK(make_reporter("no-such-format") == nullptr);
}
