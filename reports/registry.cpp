#include "reports/reporter.hpp"

#include <algorithm>

namespace speedlab::reports {

// Each format folder defines its factory; this list is the one place that names them.
std::unique_ptr<reporter> make_markdown_reporter();
std::unique_ptr<reporter> make_html_reporter();
std::unique_ptr<reporter> make_json_reporter();
std::unique_ptr<reporter> make_csv_reporter();
std::unique_ptr<reporter> make_perfetto_reporter();
std::unique_ptr<reporter> make_nsys_sqlite_reporter();

namespace {

std::map<std::string, reporter_factory>& registry() {
  static std::map<std::string, reporter_factory> registry{
      {"markdown", make_markdown_reporter}, {"html", make_html_reporter},
      {"json", make_json_reporter},         {"csv", make_csv_reporter},
      {"perfetto", make_perfetto_reporter}, {"nsys-sqlite", make_nsys_sqlite_reporter},
  };
  return registry;
}

// Every command takes a format under its short and its long name (issue 26).
const std::map<std::string, std::string>& aliases() {
  static const std::map<std::string, std::string> aliases{{"md", "markdown"},
                                                          {"htm", "html"},
                                                          {"nsys", "nsys-sqlite"},
                                                          {"sqlite", "nsys-sqlite"},
                                                          {"nsys_sqlite", "nsys-sqlite"}};
  return aliases;
}

} // namespace

const std::map<std::string, reporter_factory>& reporter_registry() { return registry(); }

bool register_reporter(const std::string& name, reporter_factory make) {
  return make && registry().try_emplace(name, std::move(make)).second;
}

std::string format_list() {
  std::string out;
  for (const auto& [name, factory] : registry()) {
    if (!out.empty()) out += ", ";
    out += name;
    std::string shorts;
    for (const auto& [alias, target] : aliases())
      if (target == name && alias.find('_') == std::string::npos) shorts += (shorts.empty() ? "" : ", ") + alias;
    if (!shorts.empty()) out += " (" + shorts + ")";
  }
  return out;
}

std::string canonical_format(const std::string& name) {
  auto it = aliases().find(name);
  return it == aliases().end() ? name : it->second;
}

std::vector<std::string> canonical_formats(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& n : names) {
    std::string c = canonical_format(n);
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(std::move(c));
  }
  return out;
}

std::unique_ptr<reporter> make_reporter(const std::string& name) {
  const auto& r = reporter_registry();
  auto it = r.find(canonical_format(name));
  return it == r.end() ? nullptr : it->second();
}

std::vector<std::string> reporter_names() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : reporter_registry()) names.push_back(name);
  return names;
}

} // namespace speedlab::reports
