// The speedlab program's command line: each command's options, help and dispatch in one
// add_<command>_command function, which declares the command on the CLI11 app and returns
// the action that runs it once parsed. add_every_command() registers them all by name, in
// the order --help lists them; main.cpp parses, picks the action by name and turns errors
// into exit codes (app/run/commands.hpp).
//
//   const auto input = read_command_line(argc, argv);
//   CLI::App app;
//   describe_program(app);
//   const command_registry commands = add_every_command(app, input);
//   app.parse(input.parsed_argc, argv); // a CLI::ParseError: usage_error(app, e), exit 2
//   return commands.at(app.get_subcommands().front()->get_name())();
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
class ParseError;
} // namespace CLI

namespace speedlab::app {

// What the commands need of argv besides what CLI11 parses.
struct command_line_input {
  std::string text;    // argv joined by spaces: recorded in run and profile folders
  int parsed_argc = 0; // the arguments CLI11 sees: argv[0, parsed_argc)
  // `speedlab profile [options] -- PROGRAM ARGS`: whatever follows the first -- is
  // PROGRAM's, option look-alikes included, and never reaches CLI11 (set even when empty).
  std::optional<std::vector<std::string>> program_after_dashes;
};
command_line_input read_command_line(int argc, const char* const* argv);
// Where the command is in argv: the first word that is not an option (argc when none).
int command_position(int argc, const char* const* argv);

// Runs a parsed command and returns its exit code; throws on a usage or configuration
// error (main prints it and exits 2).
using command_action = std::function<int()>;
// Command name -> its action.
using command_registry = std::map<std::string, command_action>;

command_action add_list_command(CLI::App& app);
command_action add_run_command(CLI::App& app, const command_line_input& input);
command_action add_report_command(CLI::App& app);
command_action add_compare_command(CLI::App& app, const command_line_input& input);
command_action add_analyze_command(CLI::App& app);
command_action add_calibrate_command(CLI::App& app);
command_action add_new_command(CLI::App& app);
command_action add_profile_command(CLI::App& app, const command_line_input& input);

// Hidden: `speedlab help-man [COMMAND]` prints a manual page (app/cli/man_page.hpp).
command_action add_man_command(CLI::App& app);

// The program itself: name, description, -V/--version, -q/--quiet, a command required.
void describe_program(CLI::App& app);

// Every command above, declared on `app` in that order (the order of --help), each with
// -V/--version and -q/--quiet as the program has them.
command_registry add_every_command(CLI::App& app, const command_line_input& input);

// "unknown command 'x' (did you mean 'y'?); valid commands: ..." when the first word that is
// not an option is none of app's commands (CLI11 would only say "A subcommand is required").
std::optional<std::string> unknown_command(const CLI::App& app, int argc, const char* const* argv);

// "Usage: speedlab run [OPTIONS] [suite]" (the program's line for `app` itself).
std::string usage_line(const CLI::App& cmd);

// What a parse error prints, as git and cargo do: "speedlab run: error: unknown option
// '--outt' (did you mean '--out'?)", the command's usage line and where its help is.
std::string usage_error(const CLI::App& app, const CLI::ParseError& e);

} // namespace speedlab::app
