// speedlab: where does the time go when numerical code moves to the GPU?
// The commands and their options are in app/cli/command_line.cpp; main parses the command line,
// runs the command it names and turns errors into exit codes (app/run/commands.hpp).
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "app/cli/command_line.hpp"
#include "app/run/commands.hpp"
#include "model/saved_records.hpp"
#include "speedlab/config.hpp"

int main(int argc, char** argv) {
  using namespace speedlab::app;
  CLI::App app{"speedlab: runs workload variants (serial, threads, CUDA) over problem sizes, validates them,\n"
               "profiles them (host timers, CUPTI, NVTX) and reports where the time goes and why."};
  app.set_version_flag("--version", std::string("speedlab ") + SPEEDLAB_VERSION);
  app.require_subcommand(1);
  const command_line_input input = read_command_line(argc, argv);
  const command_registry commands = add_every_command(app, input);

  if (const auto unknown = unknown_command(app, argc, argv)) {
    std::cerr << "speedlab: error: " << *unknown << "\nRun with --help for more information.\n";
    return exit_usage;
  }
  try {
    app.parse(input.parsed_argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : exit_usage;
  }
  try {
    const auto parsed = app.get_subcommands(); // exactly one (require_subcommand)
    if (!parsed.empty()) return commands.at(parsed.front()->get_name())();
  } catch (const std::exception& e) {
    std::cerr << "speedlab: error: " << speedlab::json_problem(e) << '\n'; // never a parser's internals
    return exit_usage;
  }
  return exit_usage;
}
