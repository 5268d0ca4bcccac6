// speedlab compare BASE NEW: load two saved runs, compare (analysis/compare.hpp), render
// (reports/compare/) and turn the verdict into the exit code a CI job can gate on.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "analysis/compare.hpp"
#include "app/run/commands.hpp"
#include "app/run/output_folder.hpp"
#include "app/run/progress.hpp"
#include "app/suite/suite_config.hpp"
#include "model/atomic_file.hpp"
#include "reports/compare/compare_report.hpp"

namespace speedlab::app {

namespace {

std::string render(const analysis::comparison& c, const std::string& format) {
  if (format == "html" || format == "htm") return reports::compare_html(c);
  if (format == "json") return reports::compare_json(c).dump(2) + "\n";
  return reports::compare_markdown(c);
}

saved_run load_side(const std::string& dir, const char* side) {
  if (!std::filesystem::is_directory(dir)) throw std::runtime_error(std::string(side) + " " + dir + " is not a folder");
  saved_run r = load_run(dir);
  for (const auto& w : r.warnings) std::cerr << "speedlab: warning: " << side << ": " << w << '\n';
  return r;
}

} // namespace

int command_compare(const compare_cli_options& options) {
  const saved_run base = load_side(options.base_dir, "BASE");
  const saved_run next = load_side(options.new_dir, "NEW");
  if (options.paired)
    if (const std::string why = analysis::unpaired_reason(base.run, next.run); !why.empty())
      throw config_error(fmt::format("--paired: {} and {} are not the two sides of one interleaved measurement: {}; "
                                     "measure both with `speedlab compare --base-plugins DIR --new-plugins DIR --out "
                                     "OUT`, or leave out --paired to compare them unpaired",
                                     options.base_dir, options.new_dir, why));
  analysis::compare_options o;
  o.threshold = options.threshold_percent / 100;
  return write_comparison(analysis::compare_runs(base.run, base.points, next.run, next.points, o), options.formats,
                          options.out_dir);
}

int write_comparison(const analysis::comparison& c, const std::vector<std::string>& formats,
                     const std::string& out_dir) {
  compare_cli_options options;
  options.formats = formats;
  options.out_dir = out_dir;
  if (options.out_dir.empty()) {
    std::cout << render(c, options.formats.empty() ? "md" : options.formats.front());
  } else {
    std::filesystem::create_directories(options.out_dir);
    for (const auto& f : options.formats) {
      // Any name of the format ("markdown" or "md") writes compare.md.
      const std::string ext = f == "markdown" ? "md" : f == "htm" ? "html" : f;
      const auto path = std::filesystem::path(options.out_dir) / ("compare." + ext);
      write_file_atomically(path, render(c, f));
      std::cout << path.string() << '\n';
    }
  }
  for (const auto& w : c.warnings) std::cerr << "speedlab: warning: " << w << '\n';
  notes() << "speedlab compare: " << c.points.size() << " points: " << c.count("slower") << " slower, "
          << c.count("faster") << " faster, " << c.count("same") << " same, " << c.count("unclear") << " unclear"
          << (c.count("broken") ? ", " + std::to_string(c.count("broken")) + " broken" : "") << "; "
          << c.only_base.size() << " only in BASE, " << c.only_new.size() << " only in NEW"
          << (c.has_regression() ? ": regression" : ": no clear regression") << '\n';
  return c.has_regression() ? exit_failures : exit_ok;
}

} // namespace speedlab::app
