// The output folder of a run, owned here alone: its layout (file names), the lock that
// keeps a second run out, what an earlier run left there (refused, replaced with --force,
// continued with --resume), results.jsonl streamed point by point (appended, flushed and
// fsync'ed, so a killed suite keeps every finished point), run.json, device.json and
// traces/ written atomically (model/atomic_file.hpp), and the readers behind
// `speedlab report DIR` / `analyze DIR`, which check every record (model/saved_records.hpp).
#pragma once

#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/analysis.hpp"
#include "model/results.hpp"
#include "model/trace.hpp"
#include "reports/reporter.hpp"

namespace speedlab::app {

namespace layout {
inline constexpr const char* results = "results.jsonl";
inline constexpr const char* run = "run.json";
inline constexpr const char* device = "device.json";
inline constexpr const char* traces = "traces";
inline constexpr const char* lock = ".speedlab.lock";
} // namespace layout

// A folder speedlab will not write into: in use, or holding an earlier run's results.
// Commands turn it into exit 2 with the message.
class folder_refused : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// A POSIX record lock (fcntl F_SETLK; not inherited by forked children) on DIR/.speedlab.lock for as long as the object lives; the holder's pid is in
// the file so that the refusal can name it. Throws folder_refused when another process
// holds it. Forked children inherit the lock and die with speedlab (child_process.hpp).
class folder_lock {
public:
  explicit folder_lock(const std::filesystem::path& dir);
  ~folder_lock();
  folder_lock(const folder_lock&) = delete;
  folder_lock& operator=(const folder_lock&) = delete;

private:
  int m_fd = -1;
};

// What to do with an earlier run's files in the folder.
enum class earlier_run { refuse, replace, resume };

class output_folder {
public:
  // Creates the folder and takes its lock, then applies `policy` to an earlier run's files:
  // refuse throws folder_refused naming them; replace removes them (replaced() lists them);
  // resume keeps results.jsonl as it is, reads its valid points (kept_points()) and appends.
  output_folder(const std::filesystem::path& dir, earlier_run policy);
  ~output_folder();
  output_folder(const output_folder&) = delete;
  output_folder& operator=(const output_folder&) = delete;

  const std::filesystem::path& dir() const { return m_dir; }
  const std::vector<std::string>& replaced() const { return m_replaced; }
  const std::vector<point_result>& kept_points() const { return m_kept; }
  const std::vector<std::string>& warnings() const { return m_warnings; } // skipped lines when resuming
  bool already_measured(const std::string& point_id) const { return m_kept_ids.count(point_id) > 0; }
  // The kept record of a point (its last line), nullptr when none: `--resume` measures the
  // missing rounds of one saved with fewer rounds than planned.
  const point_result* kept_point(const std::string& point_id) const;

  void append(const point_result& p); // one JSON line, flushed and fsync'ed
  void write_run_info(const run_info& info);

private:
  std::filesystem::path m_dir;
  folder_lock m_lock;
  std::FILE* m_results = nullptr;
  std::vector<std::string> m_replaced, m_warnings;
  std::vector<point_result> m_kept;
  std::map<std::string, std::size_t> m_kept_ids; // id -> its index in m_kept
};

// The entries of `dir` that an earlier run wrote (results, reports, traces); empty when none.
std::vector<std::string> earlier_run_files(const std::filesystem::path& dir);

// A file name made from an id (only [A-Za-z0-9._-]): each point's trace file.
std::string safe_file_name(const std::string& id);

// traces/<id>.json for one point, written atomically; returns the path relative to `dir`
// (for point_result::trace_file). Runs in the child that measured the point.
std::string write_point_trace(const std::filesystem::path& dir, const std::string& point_id,
                              const trace::device_trace& trace);

struct saved_run {
  std::filesystem::path dir;
  run_info run;
  std::vector<point_result> points;
  std::optional<analysis::device_model> device;
  std::vector<std::string> warnings; // skipped records (file:line and why), missing files
  std::size_t skipped = 0;           // results.jsonl lines that were not valid points
  // A folder with only results.json (a published copy such as docs/results/*): the analysis
  // stored in it, used instead of re-analysing without the traces it was made from.
  std::optional<analysis::analysis_result> stored_analysis;
};

// Throws folder_refused when there is nothing to read (no folder, no results.jsonl or not
// a file) or when a record of a newer schema version is found (nothing is then rewritten);
// otherwise reads every valid record and lists what it skipped in warnings. A folder without
// results.jsonl but with results.json (the json report) is read from that file.
saved_run load_run(const std::filesystem::path& dir);
// The point's trace; nullopt when it has none. Throws naming the file when the trace is
// missing or not a valid trace (reporters show that per point).
std::optional<trace::device_trace> load_point_trace(const std::filesystem::path& dir, const point_result& p);

// The files the reporters wrote, and how many formats failed (each said on stderr).
struct written_reports {
  std::vector<std::filesystem::path> files;
  std::size_t failed = 0;
};
// Runs every reporter named into dir; an unknown name or a failing reporter is a message on
// stderr and the others still run.
written_reports write_report_formats(const reports::report_input& input, const std::filesystem::path& dir,
                                     const std::vector<std::string>& formats);

// Written atomically (temporary file + fsync + rename).
void write_json_file(const std::filesystem::path& file, const nlohmann::json& j);

} // namespace speedlab::app
