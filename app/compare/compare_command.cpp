// speedlab compare BASE NEW: load two saved runs, compare (analysis/compare.hpp), render
// (reports/compare/) and turn the verdict into the exit code a CI job can gate on: 0 no
// regression shown, 1 a regression, 2 bad input, 3 could not decide (a gate must not pass
// on nothing judged).
#include "app/compare/compare_command.hpp"

#include <cmath>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "analysis/compare.hpp"
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

// Each regression (slower, broken, ok in BASE and missing in NEW) named on stderr, one a line.
void say_regressions(const analysis::comparison& c) {
  for (const auto& d : c.points)
    if (d.verdict == verdict::slower || d.verdict == verdict::broken)
      std::cerr << fmt::format("speedlab compare: {}: {}{}\n", to_string(d.verdict), d.id,
                               d.verdict == verdict::slower ? fmt::format(" ({:+.1f}%)", 100 * (d.ratio - 1))
                                                            : fmt::format(" ({} in NEW)", to_string(d.new_status)));
  for (const auto& id : c.missing)
    std::cerr << fmt::format("speedlab compare: ok in BASE, missing in NEW{}: {}\n",
                             c.allow_missing ? " (--allow-missing: not a regression)" : "", id);
}

} // namespace

void check_compare_options(const compare_cli_options& options) {
  if (!std::isfinite(options.threshold_percent) || options.threshold_percent < 0 || options.threshold_percent > 1000)
    throw config_error(fmt::format("--threshold {}: give the smallest change that matters as a finite percentage "
                                   "from 0 to 1000 (default 5)",
                                   options.threshold_percent));
  if (options.out_dir.empty() && options.formats.size() > 1)
    throw config_error(fmt::format("--format {}: standard output takes one format; write several with --out DIR "
                                   "(compare.md, compare.json, ...)",
                                   fmt::join(options.formats, ",")));
}

int compare_exit_code(const analysis::comparison& c) {
  if (c.has_regression()) return exit_failures;
  return c.decided() ? exit_ok : exit_undecided;
}

int command_compare(const compare_cli_options& options) {
  check_compare_options(options);
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
  o.allow_missing = options.allow_missing;
  return write_comparison(analysis::compare_runs(base.run, base.points, next.run, next.points, o), options.formats,
                          options.out_dir);
}

int write_comparison(const analysis::comparison& c, const std::vector<std::string>& formats,
                     const std::string& out_dir) {
  if (out_dir.empty()) {
    if (formats.size() > 1) // check_compare_options refuses this first; never drop a format
      throw config_error("several formats need --out DIR: standard output takes one");
    std::cout << render(c, formats.empty() ? "md" : formats.front());
  } else {
    std::filesystem::create_directories(out_dir);
    for (const auto& f : formats) {
      // Any name of the format ("markdown" or "md") writes compare.md.
      const std::string ext = f == "markdown" ? "md" : f == "htm" ? "html" : f;
      const auto path = std::filesystem::path(out_dir) / ("compare." + ext);
      write_file_atomically(path, render(c, f));
      std::cout << path.string() << '\n';
    }
  }
  for (const auto& w : c.warnings) std::cerr << "speedlab: warning: " << w << '\n';
  say_regressions(c);
  const int code = compare_exit_code(c);
  const auto broken = c.count(verdict::broken);
  notes() << "speedlab compare: " << c.points.size() << " points: " << c.count(verdict::slower) << " slower, "
          << c.count(verdict::faster) << " faster, " << c.count(verdict::same) << " same, " << c.count(verdict::unclear)
          << " unclear" << (broken ? ", " + std::to_string(broken) + " broken" : "") << "; " << c.only_base.size()
          << " only in BASE (" << c.missing.size() << " of them ok there), " << c.only_new.size() << " only in NEW"
          << (code == exit_failures ? ": regression (exit 1)"
              : code == exit_ok     ? ": no regression shown (exit 0)"
                                    : ": could not decide, no point's time was judged (exit 3)")
          << '\n';
  if (code == exit_undecided && c.count(verdict::unclear))
    std::cerr << "speedlab compare: the points are unclear (compare.md says why for each); measure both runs with "
                 "--rounds 5 or more, or both sides at once with `speedlab compare --base-plugins DIR --new-plugins "
                 "DIR`\n";
  return code;
}

} // namespace speedlab::app
