#include "reports/reporter.hpp"

// Every format folder defines one anchor function next to its SPEEDLAB_REGISTER_REPORTER.
// Referencing them here keeps each format's object (and so its static registration) in the
// link even when speedlab_reports ends up inside a static archive.
namespace speedlab::reports::anchors {
void markdown();
void html();
void json();
void csv();
void perfetto();
void nsys_sqlite();
} // namespace speedlab::reports::anchors

namespace speedlab::reports {

namespace {
void link_all_formats() {
  anchors::markdown();
  anchors::html();
  anchors::json();
  anchors::csv();
  anchors::perfetto();
  anchors::nsys_sqlite();
}
} // namespace

std::map<std::string, reporter_factory>& reporter_registry() {
  static std::map<std::string, reporter_factory> registry;
  return registry;
}

std::unique_ptr<reporter> make_reporter(const std::string& name) {
  link_all_formats();
  auto& r = reporter_registry();
  auto it = r.find(name);
  return it == r.end() ? nullptr : it->second();
}

std::vector<std::string> reporter_names() {
  link_all_formats();
  std::vector<std::string> names;
  for (const auto& [name, factory] : reporter_registry()) names.push_back(name);
  return names;
}

} // namespace speedlab::reports
