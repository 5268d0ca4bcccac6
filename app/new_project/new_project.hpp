// `speedlab new NAME [--cuda] [--dir DIR]`: writes a ready out-of-tree plugin project (CMake
// file using the installed package, a serial reference, a CUDA variant with --cuda,
// validation, a work model with two size axes and a constraint, a suite, a README).
#pragma once

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

// The project's files as written, placeholders filled in: (relative path, content).
std::vector<std::pair<std::string, std::string>> new_project_files(const std::string& name, bool cuda);

// The template texts from app/new_project/ (generated source).
const std::vector<std::pair<std::string, std::string>>& new_project_templates();

} // namespace speedlab::app
