#include "reports/reporter.hpp"

namespace speedlab::reports {

// Each format folder defines its factory; this list is the one place that names them.
std::unique_ptr<reporter> make_markdown_reporter();
std::unique_ptr<reporter> make_html_reporter();
std::unique_ptr<reporter> make_json_reporter();
std::unique_ptr<reporter> make_csv_reporter();
std::unique_ptr<reporter> make_perfetto_reporter();
std::unique_ptr<reporter> make_nsys_sqlite_reporter();

const std::map<std::string, reporter_factory>& reporter_registry() {
  static const std::map<std::string, reporter_factory> registry{
      {"markdown", make_markdown_reporter}, {"html", make_html_reporter},
      {"json", make_json_reporter},         {"csv", make_csv_reporter},
      {"perfetto", make_perfetto_reporter}, {"nsys-sqlite", make_nsys_sqlite_reporter},
  };
  return registry;
}

std::unique_ptr<reporter> make_reporter(const std::string& name) {
  const auto& r = reporter_registry();
  auto it = r.find(name);
  return it == r.end() ? nullptr : it->second();
}

std::vector<std::string> reporter_names() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : reporter_registry()) names.push_back(name);
  return names;
}

} // namespace speedlab::reports
