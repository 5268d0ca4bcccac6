// Manual pages from the command line's own definitions (app/cli/command_line.cpp): each
// option with its names, type and help text as --help shows them, so a page cannot say what
// the program does not do. `speedlab help-man [COMMAND]` prints one in roff; the build
// writes speedlab(1) and speedlab-COMMAND(1) with it (cmake/SpeedlabPackage.cmake) and a
// test renders each with `man -l` (tests/scripts/man_pages_test.py).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace CLI {
class App;
}

namespace speedlab::app {

// The page of `command` ("" for the program's own page, which lists the commands), dated
// `date` (may be empty).
std::string man_page(const CLI::App& app, const std::string& command, const std::string& date);

// A command's exit statuses as its page lists them (status, meaning); "" the program's.
std::vector<std::pair<std::string, std::string>> exit_statuses(const std::string& command);

} // namespace speedlab::app
