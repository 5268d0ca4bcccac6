// results.json: the whole result set in one document (docs/results-schema.md).
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "analysis/run_settings.hpp"
#include "model/atomic_file.hpp"
#include "reports/common/process_ranks.hpp"
#include "reports/reporter.hpp"

namespace speedlab::reports {

namespace {

// Dumps a value nested `depth` levels deep so the document reads like one indented file.
// Invalid UTF-8 in plugin text is replaced rather than failing the whole report.
std::string nested_dump(const nlohmann::json& j, int depth) {
  std::string s = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  const std::string pad(static_cast<std::size_t>(2 * depth), ' ');
  std::string out;
  out.reserve(s.size() + s.size() / 16);
  for (char c : s) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

class json_reporter final : public reporter {
public:
  json_reporter() : reporter("json", "results.json: run info, every point and the analysis in one JSON document") {}
  std::vector<std::filesystem::path> write(const report_input& in, const std::filesystem::path& dir) override {
    const auto path = dir / "results.json";
    atomic_file file(path);
    std::ofstream& out = file.stream();
    // Fixed key order at the top (schema first); members inside are nlohmann's sorted order.
    out << "{\n  \"schema\": \"speedlab-results\",\n  \"schema_version\": " << results_schema_version << ",\n";
    // Only when there is one: a plugin built without optimization (analysis/run_settings.hpp).
    if (const auto warnings = analysis::unoptimized_plugin_warnings(in.points); !warnings.empty())
      out << "  \"warnings\": " << nlohmann::json(warnings).dump() << ",\n";
    nlohmann::json run = in.run;
    out << "  \"run\": " << nested_dump(run, 1) << ",\n";
    const auto ids = identities_by_point(in.content.processes);
    out << "  \"points\": [";
    for (std::size_t i = 0; i < in.points.size(); ++i) {
      nlohmann::json p = in.points[i];
      if (auto it = ids.find(in.points[i].id); it != ids.end()) tag_with_rank(p, *it->second);
      out << (i ? ",\n    " : "\n    ") << nested_dump(p, 2);
    }
    out << (in.points.empty() ? "],\n" : "\n  ],\n");
    nlohmann::json analysis = in.analysis;
    out << "  \"analysis\": " << nested_dump(analysis, 1);
    // The content's own members after "analysis", in their order, keys as given.
    for (const auto& [key, value] : in.content.json_members)
      out << ",\n  " << nlohmann::json(key).dump() << ": " << nested_dump(value, 1);
    out << "\n}\n";
    file.commit();
    return {path};
  }
};

} // namespace

std::unique_ptr<reporter> make_json_reporter() { return std::make_unique<json_reporter>(); }

} // namespace speedlab::reports
