// speedlab: where does the time go when numerical code moves to the GPU?
// The commands and their options are in app/cli/command_line.cpp; main parses the command line,
// runs the command it names and turns errors into exit codes (app/run/commands.hpp).
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "app/cli/command_line.hpp"
#include "app/cli/commands.hpp"
#include "model/saved_records.hpp"

int main(int argc, char** argv) {
  using namespace speedlab::app;
  CLI::App app;
  describe_program(app);
  const command_line_input input = read_command_line(argc, argv);
  const command_registry commands = add_every_command(app, input);

  if (const auto unknown = unknown_command(app, argc, argv)) {
    std::cerr << "speedlab: error: " << *unknown << '\n' << usage_line(app) << "\nRun 'speedlab --help' for more.\n";
    return exit_usage;
  }
  try {
    app.parse(input.parsed_argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e); // --help, --version
    std::cerr << usage_error(app, e);
    return exit_usage;
  }
  try {
    const auto parsed = app.get_subcommands(); // exactly one (require_subcommand)
    if (!parsed.empty()) return commands.at(parsed.front()->get_name())();
  } catch (const std::exception& e) {
    // Never a parser's or the filesystem's internals: json_problem says them in words.
    std::cerr << "speedlab: error: " << speedlab::json_problem(e) << '\n';
    return exit_usage;
  }
  return exit_usage;
}
