// The command line without the binary: every declared command has its action, argv is
// split for `profile -- PROGRAM`, unknown commands and options are named with a usage line,
// every command takes -V and -q, numbers are typed in help and refuse NaN and infinities,
// and the checks that run before a command starts (numbers, --out, PROGRAM) throw with
// their messages.
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/cli/command_line.hpp"
#include "app/cli/man_page.hpp"
#include "app/run/progress.hpp"
#include "app/suite/suite_config.hpp"
#include "speedlab_catch.hpp"
#include "test_support.hpp"

using namespace speedlab::app;
using Catch::Contains;

namespace {

struct parsed_command_line {
  std::vector<std::string> words;
  std::vector<const char*> argv;
  command_line_input input;
  CLI::App app;
  command_registry commands;

  explicit parsed_command_line(std::vector<std::string> w) : words(std::move(w)) {
    for (const auto& word : words) argv.push_back(word.c_str());
    input = read_command_line(static_cast<int>(argv.size()), argv.data());
    describe_program(app);
    commands = add_every_command(app, input);
  }
  ~parsed_command_line() { set_quiet(false); } // -q sets the process's flag
  // What main prints when parsing fails ("" when it does not).
  std::string parse_error() {
    try {
      app.parse(input.parsed_argc, argv.data());
    } catch (const CLI::ParseError& e) {
      return usage_error(app, e);
    }
    return "";
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
  CHECK(declared == std::vector<std::string>{"list", "run", "report", "compare", "analyze", "calibrate", "new",
                                             "profile", "help-man"});
  CHECK(line.app.get_subcommand("help-man")->get_group().empty()); // hidden from --help
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

namespace {

// The commands --help lists.
std::vector<std::string> visible_commands() {
  parsed_command_line line({"speedlab"});
  std::vector<std::string> out;
  for (const auto* sub : line.app.get_subcommands({}))
    if (!sub->get_group().empty()) out.push_back(sub->get_name());
  return out;
}

bool is_number_type(const std::string& type) {
  return type == "INT" || type == "FLOAT" || type == "SECONDS" || type == "MS" || type == "PERCENT";
}

} // namespace

TEST_CASE("command_line: -V/--version and -q/--quiet on the program and on every command", "[command_line]") {
  for (const auto& command : visible_commands()) {
    for (const char* flag : {"-V", "--version"}) {
      parsed_command_line line({"speedlab", command, flag});
      CHECK_THROWS_AS(line.parse(), CLI::CallForVersion);
    }
    parsed_command_line q({"speedlab", command, "--quiet", "--help"});
    CHECK_THROWS_AS(q.parse(), CLI::CallForHelp);
    CHECK(quiet());
  }
  parsed_command_line version({"speedlab", "-V"});
  CHECK_THROWS_WITH(version.parse(), Contains("speedlab 0."));
  parsed_command_line before({"speedlab", "-q", "list"});
  CHECK_FALSE(quiet());
  before.parse();
  CHECK(quiet());
}

TEST_CASE("command_line: --quiet drops notes, never warnings", "[command_line]") {
  set_quiet(false);
  CHECK(&notes() == &std::cerr);
  set_quiet(true);
  notes() << "dropped " << 42 << '\n';
  CHECK(notes().rdbuf() == nullptr);
  set_quiet(false);
  CHECK(&notes() == &std::cerr);
}

TEST_CASE("command_line: an unknown option or argument says so, with a suggestion and the usage line",
          "[command_line]") {
  parsed_command_line typo({"speedlab", "run", "--outt", "x"});
  auto message = typo.parse_error();
  CHECK_THAT(message, Contains("speedlab run: error: unknown option '--outt' (did you mean '--out'?)") &&
                          Contains("Usage: speedlab run [OPTIONS]") && Contains("Run 'speedlab run --help'"));
  CHECK_THAT(message, !Contains("was not expected"));

  parsed_command_line far({"speedlab", "compare", "--frobnicate"});
  message = far.parse_error();
  CHECK_THAT(message, Contains("speedlab compare: error: unknown option '--frobnicate'") && !Contains("did you mean"));
  parsed_command_line with_value({"speedlab", "run", "--timout=5"});
  CHECK_THAT(with_value.parse_error(), Contains("unknown option '--timout' (did you mean '--timeout'?)"));
  // profile hands what it does not know to PROGRAM; an option-like PROGRAM is an unknown option.
  parsed_command_line profile({"speedlab", "profile", "--flush-intervall=5", "--", "true"});
  CHECK_THROWS_WITH(profile.parse()(),
                    Contains("unknown option '--flush-intervall' (did you mean '--flush-interval'?)") &&
                        Contains("Usage: speedlab profile"));

  parsed_command_line top({"speedlab", "--quite", "list"});
  CHECK_THAT(top.parse_error(), Contains("speedlab: error: unknown option '--quite' (did you mean '--quiet'?)") &&
                                    Contains("Usage: speedlab [OPTIONS]"));
  parsed_command_line extra({"speedlab", "analyze", "a", "b"});
  CHECK_THAT(extra.parse_error(), Contains("speedlab analyze: error: unexpected argument 'b'"));
  parsed_command_line none({"speedlab"});
  CHECK_THAT(none.parse_error(), Contains("a command is required: list, run, report") && !Contains("help-man"));
  parsed_command_line missing({"speedlab", "report"});
  CHECK_THAT(missing.parse_error(), Contains("speedlab report: error:") && Contains("Usage: speedlab report"));
}

TEST_CASE("command_line: the command is the first word that is not an option", "[command_line]") {
  parsed_command_line line({"speedlab"});
  const char* quiet_typo[] = {"speedlab", "-q", "rnu"};
  CHECK(command_position(3, quiet_typo) == 2);
  const auto message = unknown_command(line.app, 3, quiet_typo);
  REQUIRE(message);
  CHECK_THAT(*message, Contains("did you mean 'run'") && !Contains("help-man"));
  const char* profile[] = {"speedlab", "-q", "profile", "--", "prog", "-q"};
  const auto input = read_command_line(6, profile);
  CHECK(input.parsed_argc == 3);
  REQUIRE(input.program_after_dashes);
  CHECK(*input.program_after_dashes == std::vector<std::string>{"prog", "-q"});
}

TEST_CASE("command_line: every option shows its type in help; numbers as INT, FLOAT, SECONDS, ...", "[command_line]") {
  parsed_command_line line({"speedlab"});
  for (const auto& command : visible_commands()) {
    const std::string help = line.app.get_subcommand(command)->help();
    INFO(help);
    CHECK_THAT(help, !Contains(" TEXT"));
  }
  CHECK_THAT(line.app.get_subcommand("run")->help(),
             Contains("--timeout SECONDS") && Contains("--warmup INT") && Contains("--rounds INT"));
  CHECK_THAT(line.app.get_subcommand("compare")->help(), Contains("--threshold PERCENT"));
  CHECK_THAT(line.app.get_subcommand("profile")->help(),
             Contains("--flush-interval MS") && Contains("--source-launches INT"));
}

TEST_CASE("command_line: every number option of every command refuses NaN and infinities", "[command_line]") {
  // The arguments each command needs to reach its number checks (which run before anything else).
  const std::map<std::string, std::vector<std::string>> needs = {
      {"run", {}},
      {"compare", {"--base-plugins", "/nonexistent", "--new-plugins", "/nonexistent", "--out", "/nonexistent"}},
      {"profile", {"--", "true"}}};
  std::size_t checked = 0;
  parsed_command_line all({"speedlab"});
  for (const auto& command : visible_commands()) {
    for (const auto* opt : all.app.get_subcommand(command)->get_options()) {
      if (!is_number_type(opt->get_type_name())) continue;
      REQUIRE(needs.count(command) == 1); // a new command with numbers: add what it needs above
      for (const char* bad : {"nan", "inf", "-inf", "NaN", "1e999"}) {
        std::vector<std::string> words = {"speedlab", command, "--" + opt->get_lnames().front(), bad};
        const auto& rest = needs.at(command);
        words.insert(words.end(), rest.begin(), rest.end());
        parsed_command_line line(words);
        INFO(command << " --" << opt->get_lnames().front() << " " << bad);
        CHECK_THROWS_WITH(line.parse()(), Contains("<command line>: --" + opt->get_lnames().front() + " must be") &&
                                              Contains(std::string("found '") + bad + "'"));
        ++checked;
      }
    }
  }
  CHECK(checked >= 5 * 13); // run's 9, compare's --threshold, profile's 3 (and compare's copies of run's)
}

TEST_CASE("command_line: --out or --dir naming a file is refused in words before anything runs", "[command_line]") {
  speedlab::testing::temp_dir dir;
  const std::string file = (dir.path() / "a-file").string();
  std::ofstream(file) << "x";
  for (const auto& words : std::vector<std::vector<std::string>>{{"speedlab", "run", "--out", file},
                                                                 {"speedlab", "run", "--out", file + "/below"},
                                                                 {"speedlab", "compare", "a", "b", "--out", file},
                                                                 {"speedlab", "profile", "--out", file, "--", "true"},
                                                                 {"speedlab", "new", "x", "--dir", file}}) {
    parsed_command_line line(words);
    INFO(words[1]);
    CHECK_THROWS_WITH(line.parse()(), Contains(": '" + file + "' is a file, not a folder") &&
                                          !Contains("filesystem error") && !Contains("Not a directory"));
  }
}

TEST_CASE("command_line: -v still selects variants for one release, with a warning naming --variant",
          "[command_line]") {
  std::ostringstream captured;
  auto* old = std::cerr.rdbuf(captured.rdbuf());
  parsed_command_line line({"speedlab", "run", "-v", "nosuchvariant", "--timeout", "nan"});
  CHECK_THROWS(line.parse()()); // stops at --timeout, after -v was read
  std::cerr.rdbuf(old);
  CHECK_THAT(captured.str(), Contains("-v is deprecated") && Contains("--variant"));
  const std::string help = line.app.get_subcommand("run")->help();
  CHECK_THAT(help, !Contains("-v,") && !Contains(",-v") && Contains("--variant NAME"));
}

TEST_CASE("command_line: each command's manual page lists its options, arguments and exit statuses", "[command_line]") {
  parsed_command_line line({"speedlab"});
  for (const auto& command : visible_commands()) {
    const std::string page = man_page(line.app, command, "2026-01-01");
    INFO(command);
    std::string upper = command;
    for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    CHECK_THAT(page, Contains(".TH \"SPEEDLAB\\-" + upper + "\" \"1\" \"2026\\-01\\-01\""));
    CHECK_THAT(page, Contains(".SH NAME\nspeedlab\\-" + command + " \\- "));
    for (const auto* opt : line.app.get_subcommand(command)->get_options()) {
      if (opt->get_group().empty()) continue;
      for (const auto& n : opt->get_lnames()) {
        std::string escaped = "\\fB\\-\\-";
        for (const char c : n) escaped += c == '-' ? std::string("\\-") : std::string(1, c);
        CHECK_THAT(page, Contains(escaped + "\\fR"));
      }
    }
    for (const auto& [status, meaning] : exit_statuses(command)) CHECK_THAT(page, Contains(status));
  }
  const std::string top = man_page(line.app, "", "");
  for (const auto& command : visible_commands()) CHECK_THAT(top, Contains("\\fBspeedlab\\-" + command + "\\fR(1)"));
  CHECK_THAT(top, !Contains("help\\-man"));
  CHECK_THAT(man_page(line.app, "compare", ""), Contains(".TP\n\\fB3\\fR\ncould not decide"));
}
