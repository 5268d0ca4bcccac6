// The command line without the binary: every declared command has its action, argv is
// split for `profile -- PROGRAM`, unknown commands are named, and the checks that run
// before a command starts (run's numbers, profile's PROGRAM) throw with their messages.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/cli/command_line.hpp"
#include "app/suite/suite_config.hpp"
#include "speedlab_catch.hpp"

using namespace speedlab::app;
using Catch::Contains;

namespace {

struct parsed_command_line {
  std::vector<std::string> words;
  std::vector<const char*> argv;
  command_line_input input;
  CLI::App app{"test"};
  command_registry commands;

  explicit parsed_command_line(std::vector<std::string> w) : words(std::move(w)) {
    for (const auto& word : words) argv.push_back(word.c_str());
    input = read_command_line(static_cast<int>(argv.size()), argv.data());
    app.require_subcommand(1);
    commands = add_every_command(app, input);
  }
  // Parses and returns the chosen command's action (which the test may run).
  command_action parse() {
    app.parse(input.parsed_argc, argv.data());
    return commands.at(app.get_subcommands().front()->get_name());
  }
};

} // namespace

TEST_CASE("command_line: every command is declared once, in --help's order, with its action", "[command_line]") {
  parsed_command_line line({"speedlab"});
  std::vector<std::string> declared;
  for (const auto* sub : line.app.get_subcommands({})) declared.push_back(sub->get_name());
  CHECK(declared ==
        std::vector<std::string>{"list", "run", "report", "compare", "analyze", "calibrate", "new", "profile"});
  REQUIRE(line.commands.size() == declared.size());
  for (const auto& name : declared) {
    REQUIRE(line.commands.count(name) == 1);
    CHECK(static_cast<bool>(line.commands.at(name)));
  }
}

TEST_CASE("command_line: argv as read, and `profile ... -- PROGRAM` kept from CLI11", "[command_line]") {
  const char* run[] = {"speedlab", "run", "--", "x"};
  auto input = read_command_line(4, run);
  CHECK(input.text == "speedlab run -- x");
  CHECK(input.parsed_argc == 4);
  CHECK_FALSE(input.program_after_dashes);

  const char* profile[] = {"speedlab", "profile", "--out", "p", "--", "prog", "--out", "--"};
  input = read_command_line(8, profile);
  CHECK(input.parsed_argc == 4);
  REQUIRE(input.program_after_dashes);
  CHECK(*input.program_after_dashes == std::vector<std::string>{"prog", "--out", "--"});

  const char* empty[] = {"speedlab", "profile", "--"};
  input = read_command_line(3, empty);
  CHECK(input.parsed_argc == 2);
  REQUIRE(input.program_after_dashes);
  CHECK(input.program_after_dashes->empty());
}

TEST_CASE("command_line: an unknown command is named, with a suggestion", "[command_line]") {
  parsed_command_line line({"speedlab"});
  const char* typo[] = {"speedlab", "rnu"};
  const auto message = unknown_command(line.app, 2, typo);
  REQUIRE(message);
  CHECK_THAT(*message, Contains("unknown command 'rnu'") && Contains("did you mean 'run'") && Contains("profile"));
  const char* known[] = {"speedlab", "run"};
  CHECK_FALSE(unknown_command(line.app, 2, known));
  const char* option[] = {"speedlab", "--help"};
  CHECK_FALSE(unknown_command(line.app, 2, option));
  CHECK_FALSE(unknown_command(line.app, 1, known));
}

TEST_CASE("command_line: run's numbers go through the suite's limits before anything runs", "[command_line]") {
  parsed_command_line line({"speedlab", "run", "--timeout", "0"});
  const auto run = line.parse();
  CHECK_THROWS_AS(run(), config_error);
  parsed_command_line nan({"speedlab", "run", "--warmup", "nan"});
  CHECK_THROWS_WITH(nan.parse()(), Contains("<command line>: --warmup"));
}

TEST_CASE("command_line: profile refuses PROGRAM both before and after --", "[command_line]") {
  parsed_command_line line({"speedlab", "profile", "--out", "p", "prog", "--", "prog"});
  CHECK_THROWS_WITH(line.parse()(), Contains("PROGRAM is given twice"));
}
