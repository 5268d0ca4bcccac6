#include "app/new_project/new_project.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include "app/process/exit_code.hpp"
#include "app/suite/suite_config.hpp"
#include "speedlab/config.hpp"

namespace speedlab::app {

namespace {

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (auto pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size())) s.replace(pos, from.size(), to);
}

// Lines starting with @CUDA@ are kept (marker removed) only for --cuda, @HOST@ only without.
// The prefix, when known, replaces "<speedlab prefix>" in the build lines, quoted for the shell.
std::string fill(const std::string& text, const std::string& name, const std::string& ident, bool cuda,
                 const std::string& prefix) {
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
  if (!prefix.empty()) replace_all(out, "<speedlab prefix>", shell_quote(prefix));
  return out;
}

} // namespace

void print_next_steps(std::ostream& out, const std::string& name, const std::filesystem::path& dir, bool cuda,
                      const std::filesystem::path& prefix, const std::string& program) {
  const std::string d = shell_quote(dir.string()), build = shell_quote((dir / "build").string());
  const std::string prefix_word = prefix.empty() ? "<speedlab prefix>" : shell_quote(prefix.string());
  out << fmt::format("wrote {}: plugin '{}' with {}. Next:\n"
                     "  cmake -S {} -B {} -DCMAKE_PREFIX_PATH={} && cmake --build {}\n"
                     "  {} list --plugin-path {}\n"
                     "  {} run {} --plugin-path {}\n",
                     dir.string(), name, cuda ? "a serial and a CUDA variant" : "a serial variant", d, build,
                     prefix_word, build, program, build, program, shell_quote((dir / (name + ".yaml")).string()),
                     build);
  if (prefix.empty())
    out << fmt::format("note: no CMake package of speedlab beside {} (lib/cmake/speedlab): install one "
                       "(cmake --install BUILD --prefix P) and give P as <speedlab prefix>\n",
                       program);
}

std::vector<std::pair<std::string, std::string>> new_project_files(const std::string& name, bool cuda,
                                                                   const std::string& prefix) {
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
      if (t == tmpl) out.emplace_back(file, fill(text, name, ident, cuda, prefix));
  }
  return out;
}

std::string shell_quote(const std::string& word) {
  constexpr std::string_view plain = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=.,/:@%";
  if (!word.empty() && word.find_first_not_of(plain) == std::string::npos) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::filesystem::path package_prefix_beside(const std::filesystem::path& exe_dir) {
  std::error_code ec;
  // The build tree: the program at the top of the prefix (sdk/CMakeLists.txt's export()).
  if (std::filesystem::exists(exe_dir / SPEEDLAB_BUILD_PACKAGE_DIR / "speedlabConfig.cmake", ec))
    return std::filesystem::weakly_canonical(exe_dir, ec);
  if (std::filesystem::exists(exe_dir / SPEEDLAB_PACKAGE_DIR_FROM_BIN / "speedlabConfig.cmake", ec))
    return std::filesystem::weakly_canonical(exe_dir / SPEEDLAB_PREFIX_FROM_BIN, ec);
  return {};
}

namespace {

std::filesystem::path running_program() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path{} : exe;
}

// How the printed commands call speedlab: by name where the PATH finds this very program,
// else by its full path (after the quick start it is ./build/speedlab, on no PATH).
std::string program_word(const std::filesystem::path& exe) {
  std::error_code ec;
  if (exe.empty()) return "speedlab";
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    if (std::filesystem::equivalent(std::filesystem::path(dir) / "speedlab", exe, ec)) return "speedlab";
  }
  return shell_quote(exe.string());
}

} // namespace

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
  const auto exe = running_program();
  const auto prefix = exe.empty() ? std::filesystem::path{} : package_prefix_beside(exe.parent_path());
  for (const auto& [file, content] : new_project_files(name, options.cuda, prefix.string())) {
    std::ofstream out(dir / file, std::ios::binary);
    out << content;
    if (!out) throw config_error(fmt::format("speedlab new: cannot write {}", (dir / file).string()));
  }
  print_next_steps(std::cout, name, dir, options.cuda, prefix, program_word(exe));
  return exit_ok;
}

} // namespace speedlab::app
