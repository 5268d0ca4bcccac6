#include "speedlab_catch.hpp"

#include "app/suite/checked_number.hpp"
#include "app/suite/suite_config.hpp"
#include "app/suite/suite_overrides.hpp"

using namespace speedlab::app;
using Catch::Contains;

TEST_CASE("checked number: finite, in range, whole where it counts", "[numbers]") {
  CHECK(checked_number("5", limits::timeout_s) == 5);
  CHECK(checked_number("1e3", limits::timeout_s) == 1000);
  CHECK(checked_number("2^10", limits::warmup_runs) == 1024);
  CHECK_THROWS_WITH(checked_number("nan", limits::timeout_s), Contains("found 'nan'") && Contains("between 0.01 and 86400"));
  CHECK_THROWS_WITH(checked_number("inf", limits::timeout_s), Contains("found 'inf'"));
  CHECK_THROWS_WITH(checked_number("1e10", limits::timeout_s), Contains("at most") || Contains("between 0.01 and 86400"));
  CHECK_THROWS_WITH(checked_number("1e999", limits::timeout_s), Contains("found '1e999'"));
  CHECK_THROWS_WITH(checked_number("0", limits::timeout_s), Contains("between 0.01 and 86400 seconds"));
  CHECK_THROWS_WITH(checked_number("-1", limits::warmup_runs), Contains("a whole number between 0 and 1000000"));
  CHECK_THROWS_WITH(checked_number("2.5", limits::samples), Contains("whole number"));
  CHECK_THROWS_WITH(checked_number("99999", limits::threads), Contains("between 0 and 4096"));
  CHECK_THROWS_WITH(checked_number("", limits::threads), Contains("found ''"));
  CHECK_THROWS_WITH(checked_number("ten", limits::threads), Contains("found 'ten'"));
  CHECK_THROWS_AS(checked_value(std::numeric_limits<double>::quiet_NaN(), limits::max_time_s), number_error);
  // No DBL_MAX or other huge numbers spelled out in messages.
  try {
    checked_number("0", limits::max_time_s);
    FAIL("no error");
  } catch (const number_error& e) {
    CHECK(std::string(e.what()).size() < 100);
  }
}

TEST_CASE("checked number: the suite file and the command line share the limits", "[numbers][config]") {
  for (const auto& [key, option, bad] :
       std::vector<std::tuple<std::string, std::string, std::string>>{{"timeout", "--timeout", "0"}, {"threads", "--threads", "99999"}}) {
    std::string file_message, cli_message;
    try {
      parse_suite(key + ": " + bad + "\n", "s.yaml");
    } catch (const config_error& e) {
      file_message = e.what();
    }
    suite_config s;
    cli_overrides cli;
    if (key == "timeout") cli.timeout_s = 0;
    else cli.threads = 99999;
    try {
      apply_overrides(s, cli);
    } catch (const config_error& e) {
      cli_message = e.what();
    }
    REQUIRE_FALSE(file_message.empty());
    REQUIRE_FALSE(cli_message.empty());
    // The same problem text after the place: "s.yaml:1:N: timeout must be ..." vs "<command line>: --timeout must be ..."
    CHECK(file_message.substr(file_message.find(" must ")) == cli_message.substr(cli_message.find(" must ")));
  }
  suite_config s;
  cli_overrides cli;
  cli.warmup_runs = static_cast<std::size_t>(-1); // what a wrapped "-1" would become
  CHECK_THROWS_WITH(apply_overrides(s, cli), Contains("--warmup must be a whole number between 0 and 1000000"));
  cli_overrides both;
  both.min_samples = 10;
  both.max_samples = 5;
  CHECK_THROWS_WITH(apply_overrides(s, both), Contains("--min-samples (10) is larger than --max-samples (5)"));
}
