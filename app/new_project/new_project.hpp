// `speedlab new NAME [--cuda] [--dir DIR]`: writes a ready out-of-tree plugin project (CMake
// file using the installed package, a serial reference, a CUDA variant with --cuda,
// validation, a work model with two size axes and a constraint, a suite, a README).
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace speedlab::app {

struct new_options {
  std::string name;
  std::string dir; // empty: ./NAME
  bool cuda = false;
};
int command_new(const new_options& options);

// The project's files as written, placeholders filled in: (relative path, content). A
// non-empty prefix (speedlab's CMake package prefix) is written into the build lines.
std::vector<std::pair<std::string, std::string>> new_project_files(const std::string& name, bool cuda,
                                                                   const std::string& prefix = {});

// The commands that build, list and run the project, each word quoted for a POSIX shell, so
// that they work when pasted; an empty prefix prints a placeholder and says how to get one.
void print_next_steps(std::ostream& out, const std::string& name, const std::filesystem::path& dir, bool cuda,
                      const std::filesystem::path& prefix, const std::string& program);

// `word` as one word of a POSIX shell: unchanged when it holds only characters no shell
// treats specially, else in single quotes (a ' inside as '\'').
std::string shell_quote(const std::string& word);

// The prefix whose lib/cmake/speedlab holds speedlab's CMake package, found from the
// program's folder: the build tree (<build>/lib/cmake/speedlab beside <build>/speedlab) or an
// installed prefix (bin/../lib/cmake/speedlab); empty when neither is there.
std::filesystem::path package_prefix_beside(const std::filesystem::path& exe_dir);

// The template texts from app/new_project/ (generated source).
const std::vector<std::pair<std::string, std::string>>& new_project_templates();

} // namespace speedlab::app
