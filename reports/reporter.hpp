// Reporters render results; they never measure. Each is registered by name, several run
// from one result set, and each writes its own files into the output folder.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/analysis.hpp"
#include "model/named.hpp"
#include "model/results.hpp"
#include "model/trace.hpp"
#include "reports/report_content.hpp"

namespace speedlab::reports {

struct report_input {
  const run_info& run;
  const std::vector<point_result>& points;
  const analysis::analysis_result& analysis;
  // Loads the device trace of a point (nullopt when it has none); reads files lazily.
  std::function<std::optional<trace::device_trace>(const point_result&)> load_trace;
  // What the report shows beside the points (reports/report_content.hpp): sections, CSV
  // tables, results.json members and the points' process identities. Empty for a suite run;
  // a profiled program's (its processes are the points) comes from program_content().
  report_content content = {};
};

// name() and description(): model/named.hpp.
class reporter : public named {
public:
  using named::named;
  virtual ~reporter() = default;
  // Writes into dir; returns the files written (a trace reporter writes none without GPU data).
  virtual std::vector<std::filesystem::path> write(const report_input& in, const std::filesystem::path& dir) = 0;
};

using reporter_factory = std::function<std::unique_ptr<reporter>()>;
// Registry keyed by name: the explicit list in registry.cpp (a new format is one folder
// with a make_<format>_reporter() factory plus one line there).
const std::map<std::string, reporter_factory>& reporter_registry();
// A format beside the explicit list (a test's, or one kept outside reports/), by name: the
// same as a line there (every command that takes a format then takes it); false when the
// name is taken. Call it before any report is written (registration is not synchronized).
bool register_reporter(const std::string& name, reporter_factory make);
// "markdown (md), html (htm), ...": every format with its short names, for a command's help.
std::string format_list();
std::unique_ptr<reporter> make_reporter(const std::string& name); // nullptr if unknown
std::vector<std::string> reporter_names();
// The registry's name of a format given by any of its names ("md" -> "markdown", "nsys" and
// "sqlite" -> "nsys-sqlite"); an unknown name comes back as it is, for the caller to refuse.
std::string canonical_format(const std::string& name);
// The names in order with duplicates of one format dropped: what `run --reports` and
// `report --format` write (each format once).
std::vector<std::string> canonical_formats(const std::vector<std::string>& names);

} // namespace speedlab::reports
