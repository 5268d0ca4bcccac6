#include "app/new_project/new_project.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "app/run/commands.hpp"
#include "app/suite/suite_config.hpp"

namespace speedlab::app {

namespace {

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (auto pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size())) s.replace(pos, from.size(), to);
}

// Lines starting with @CUDA@ are kept (marker removed) only for --cuda, @HOST@ only without.
std::string fill(const std::string& text, const std::string& name, const std::string& ident, bool cuda) {
  std::istringstream in(text);
  std::string out, line;
  while (std::getline(in, line)) {
    if (line.rfind("@CUDA@", 0) == 0) {
      if (!cuda) continue;
      line.erase(0, 6);
    } else if (line.rfind("@HOST@", 0) == 0) {
      if (cuda) continue;
      line.erase(0, 6);
    }
    out += line + '\n';
  }
  replace_all(out, "@CUDA_FILES@", cuda ? fmt::format(" and {}_cuda.cu", name) : "");
  replace_all(out, "@NAME@", name);
  replace_all(out, "@IDENT@", ident);
  return out;
}

} // namespace

std::vector<std::pair<std::string, std::string>> new_project_files(const std::string& name, bool cuda) {
  std::string ident = name;
  for (char& c : ident)
    if (c == '-') c = '_';
  const std::pair<const char*, std::string> targets[] = {
      {"CMakeLists.txt.in", "CMakeLists.txt"},     {"plugin.cpp.in", name + ".cpp"},
      {"plugin_cuda.hpp.in", name + "_cuda.hpp"},  {"plugin_cuda.cu.in", name + "_cuda.cu"},
      {"suite.yaml.in", name + ".yaml"},           {"README.md.in", "README.md"},
  };
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [tmpl, file] : targets) {
    if (!cuda && std::string(tmpl).rfind("plugin_cuda", 0) == 0) continue;
    for (const auto& [t, text] : new_project_templates())
      if (t == tmpl) out.emplace_back(file, fill(text, name, ident, cuda));
  }
  return out;
}

int command_new(const new_options& options) {
  const std::string& name = options.name;
  // The name becomes a file name, a CMake target and (with '-' as '_') a C++ identifier.
  const bool name_ok = !name.empty() && name.size() <= 64 && name.front() >= 'a' && name.front() <= 'z' &&
                       name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") == std::string::npos;
  if (!name_ok)
    throw config_error(fmt::format("speedlab new: '{}' is not a usable plugin name: use lower-case letters, digits, "
                                   "'_' and '-', starting with a letter (at most 64 characters)",
                                   name));
  const std::filesystem::path dir = options.dir.empty() ? std::filesystem::path(name) : std::filesystem::path(options.dir);
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_empty(dir, ec))
    throw config_error(fmt::format("speedlab new: {} exists and is not empty; nothing was written", dir.string()));
  std::filesystem::create_directories(dir, ec);
  if (ec) throw config_error(fmt::format("speedlab new: cannot create {}: {}", dir.string(), ec.message()));
  for (const auto& [file, content] : new_project_files(name, options.cuda)) {
    std::ofstream out(dir / file, std::ios::binary);
    out << content;
    if (!out) throw config_error(fmt::format("speedlab new: cannot write {}", (dir / file).string()));
  }
  const std::string d = dir.string();
  std::cout << fmt::format("wrote {}: plugin '{}' with {}. Next:\n"
                           "  cmake -S {} -B {}/build -DCMAKE_PREFIX_PATH=<speedlab prefix> && cmake --build {}/build\n"
                           "  speedlab list --plugin-path {}/build\n",
                           d, name, options.cuda ? "a serial and a CUDA variant" : "a serial variant", d, d, d, d);
  return exit_ok;
}

} // namespace speedlab::app
