#include "app/run/output_folder.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>

#include <fmt/format.h>

#include "model/atomic_file.hpp"
#include "model/saved_records.hpp"

namespace speedlab::app {
namespace {

namespace fs = std::filesystem;

// What an earlier run may have left: its data, then each reporter's file (reports/*/).
constexpr const char* run_entries[] = {layout::results, layout::run,   layout::device, layout::traces,
                                       "results.json",  "results.csv", "report.md",    "report-full.md", "report.html",
                                       "trace.json",    "trace.sqlite"};

std::string read_small_file(const fs::path& file) {
  std::ifstream in(file);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return s.substr(0, 64);
}

// Whether each line of a point extends the one before: a partly measured point whose rounds
// `run --resume` completed (model/saved_records.hpp, extends_partial).
bool resumed_chain(const std::vector<point_result>& points, const std::vector<std::size_t>& same) {
  for (std::size_t k = 0; k + 1 < same.size(); ++k)
    if (!extends_partial(points[same[k]], points[same[k + 1]])) return false;
  return true;
}

// A point id on several lines: the last line is kept. A point resumed round by round is
// said nothing about; any other repeat (results.jsonl joined by hand, a copy appended twice)
// gets a warning naming every line. The file itself is never rewritten.
std::vector<point_result> keep_last_of_each_id(const fs::path& file, std::vector<point_result> points,
                                               const std::vector<int>& lines, std::vector<std::string>& warnings) {
  std::map<std::string, std::vector<std::size_t>> at; // id -> indices into points
  for (std::size_t i = 0; i < points.size(); ++i) at[points[i].id].push_back(i);
  std::vector<bool> dropped(points.size(), false);
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& same = at[points[i].id];
    if (same.size() < 2 || same.front() != i) continue; // one warning per id, at its first line
    std::vector<int> numbers;
    for (auto k : same) numbers.push_back(lines[k]);
    for (std::size_t k = 0; k + 1 < same.size(); ++k) dropped[same[k]] = true;
    if (resumed_chain(points, same)) continue;
    warnings.push_back(fmt::format("{}: point '{}' appears {} times, on lines {}; line {} is used, the others are not "
                                   "(the file is not changed)",
                                   file.string(), points[i].id, same.size(), fmt::join(numbers, ", "), numbers.back()));
  }
  std::vector<point_result> kept;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (!dropped[i]) kept.push_back(std::move(points[i]));
  return kept;
}

// A folder's results.jsonl, checked line by line: valid points in order; every skipped line
// as "file:line: why". A line of a newer schema throws: nothing of that folder is read.
std::vector<point_result> read_results_file(const fs::path& file, std::vector<std::string>& warnings, std::size_t& skipped) {
  std::error_code ec;
  if (!fs::exists(file, ec)) throw folder_refused(fmt::format("{}: not found; is {} a speedlab output folder?", file.string(),
                                                              file.parent_path().string()));
  if (!fs::is_regular_file(file, ec)) throw folder_refused(fmt::format("{}: not a file", file.string()));
  std::ifstream in(file);
  if (!in) throw folder_refused(fmt::format("{}: cannot read: {}", file.string(), std::strerror(errno)));
  std::vector<point_result> points;
  std::vector<int> lines; // the line of each point
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      // The parser takes a NUL byte for the end of its input and would say "truncated".
      if (const auto nul = line.find('\0'); nul != std::string::npos)
        throw bad_record(fmt::format("not text: a NUL byte at column {} (binary data, not a line of JSON)", nul + 1));
      points.push_back(read_point_record(nlohmann::json::parse(line)));
      lines.push_back(number);
    } catch (const newer_schema_error& e) {
      throw folder_refused(fmt::format("{}:{}: {}; nothing in {} is read or rewritten", file.string(), number, e.what(),
                                       file.parent_path().string()));
    } catch (const std::exception& e) {
      // A suite killed mid-write leaves at most one torn last line; anything else is not ours.
      ++skipped;
      warnings.push_back(fmt::format("{}:{}: skipped: {}", file.string(), number, json_problem(e)));
    }
  }
  return keep_last_of_each_id(file, std::move(points), lines, warnings);
}

// results.json is written by the json reporter and never read back, but one of a newer
// schema must not be replaced by this speedlab's reports.
void refuse_newer_results_json(const fs::path& dir) {
  const auto file = dir / "results.json";
  std::ifstream in(file);
  if (!in) return;
  try {
    const auto j = nlohmann::json::parse(in);
    if (j.is_object()) check_schema_version(j, results_schema_version);
  } catch (const newer_schema_error& e) {
    throw folder_refused(fmt::format("{}: {}; it is not rewritten", file.string(), e.what()));
  } catch (const std::exception&) {
    // Unreadable: the reporter replaces it (atomically).
  }
}

template <class T, class Reader>
std::optional<T> read_optional_record(const fs::path& file, Reader reader, std::vector<std::string>& warnings) {
  std::ifstream in(file);
  if (!in) return std::nullopt;
  try {
    return reader(nlohmann::json::parse(in));
  } catch (const newer_schema_error& e) {
    throw folder_refused(fmt::format("{}: {}; nothing in {} is read or rewritten", file.string(), e.what(),
                                     file.parent_path().string()));
  } catch (const std::exception& e) {
    warnings.push_back(fmt::format("{}: unreadable, not used: {}", file.string(), json_problem(e)));
    return std::nullopt;
  }
}

} // namespace

folder_lock::folder_lock(const fs::path& dir) {
  const auto file = dir / layout::lock;
  m_fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (m_fd < 0) throw folder_refused(fmt::format("{}: cannot create the lock file: {}", file.string(), std::strerror(errno)));
  // A POSIX record lock, not flock: it belongs to this process alone, so a point's child
  // (forked, not exec'd) never holds the folder after speedlab itself has died.
  struct flock whole {};
  whole.l_type = F_WRLCK;
  whole.l_whence = SEEK_SET;
  if (::fcntl(m_fd, F_SETLK, &whole) != 0) {
    const int error = errno;
    ::close(m_fd);
    m_fd = -1;
    if (error != EACCES && error != EAGAIN)
      throw folder_refused(fmt::format("{}: cannot lock: {}", file.string(), std::strerror(error)));
    std::string pid = read_small_file(file);
    pid.erase(std::remove_if(pid.begin(), pid.end(), [](char c) { return c < '0' || c > '9'; }), pid.end());
    throw folder_refused(fmt::format("{} is in use by another speedlab ({}); wait for it to end or choose another --out",
                                     dir.string(), pid.empty() ? "pid unknown" : "pid " + pid));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(m_fd, 0) == 0) {
    [[maybe_unused]] const auto n = ::pwrite(m_fd, pid.data(), pid.size(), 0); // only for the message above
  }
}

folder_lock::~folder_lock() {
  if (m_fd >= 0) ::close(m_fd); // releases the lock
}

std::vector<std::string> earlier_run_files(const fs::path& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const char* name : run_entries)
    if (fs::exists(dir / name, ec)) found.emplace_back(name);
  return found;
}

output_folder::output_folder(const fs::path& dir, earlier_run policy)
    : m_dir((fs::create_directories(dir), dir)), m_lock(dir) {
  const auto earlier = earlier_run_files(m_dir);
  if (!earlier.empty() && policy == earlier_run::refuse)
    throw folder_refused(fmt::format("{} holds an earlier run ({}); use --resume to measure only the points not yet in "
                                     "it, --force to replace it, or another --out",
                                     m_dir.string(), fmt::join(earlier, ", ")));
  const auto results = m_dir / layout::results;
  if (policy == earlier_run::replace) {
    for (const auto& name : earlier) fs::remove_all(m_dir / name);
    m_replaced = earlier;
  }
  if (policy == earlier_run::resume && fs::exists(results)) {
    std::size_t skipped = 0;
    m_kept = read_results_file(results, m_warnings, skipped);
    for (std::size_t i = 0; i < m_kept.size(); ++i) m_kept_ids[m_kept[i].id] = i;
  }
  m_results = std::fopen(results.c_str(), "a");
  if (!m_results) throw folder_refused(fmt::format("{}: cannot write: {}", results.string(), std::strerror(errno)));
  // A line torn by a crash stays as it was (a reader skips it); the next one starts fresh.
  if (std::fseek(m_results, 0, SEEK_END) == 0 && std::ftell(m_results) > 0) {
    std::ifstream in(results, std::ios::binary);
    in.seekg(-1, std::ios::end);
    if (in.get() != '\n') std::fputc('\n', m_results);
  }
}

output_folder::~output_folder() {
  if (m_results) std::fclose(m_results);
}

const point_result* output_folder::kept_point(const std::string& point_id) const {
  const auto it = m_kept_ids.find(point_id);
  return it == m_kept_ids.end() ? nullptr : &m_kept[it->second];
}

void output_folder::append(const point_result& p) {
  nlohmann::json j = p;
  j["schema_version"] = results_schema_version;
  const std::string line = j.dump() + "\n";
  if (std::fwrite(line.data(), 1, line.size(), m_results) != line.size() || std::fflush(m_results) != 0 ||
      ::fsync(::fileno(m_results)) != 0)
    throw std::runtime_error(fmt::format("{}: cannot append the result of {}: {}", (m_dir / layout::results).string(), p.id,
                                         std::strerror(errno)));
}

void output_folder::write_run_info(const run_info& info) {
  nlohmann::json j = info;
  j["schema_version"] = run_info_schema_version;
  write_json_file(m_dir / layout::run, j);
}

std::string safe_file_name(const std::string& id) {
  std::string out;
  for (char c : id) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') ? c : '_';
  return out;
}

std::string write_point_trace(const fs::path& dir, const std::string& point_id, const trace::device_trace& trace) {
  const auto folder = dir / layout::traces;
  fs::create_directories(folder);
  const std::string relative = std::string(layout::traces) + "/" + safe_file_name(point_id) + ".json";
  write_file_atomically(dir / relative, nlohmann::json(trace).dump());
  return relative;
}

written_reports write_report_formats(const reports::report_input& input, const fs::path& dir,
                                     const std::vector<std::string>& formats) {
  written_reports out;
  for (const auto& name : formats) {
    auto reporter = reports::make_reporter(name);
    if (!reporter) {
      std::cerr << fmt::format("speedlab: unknown report format '{}'; valid formats: {}\n", name,
                               fmt::join(reports::reporter_names(), ", "));
      ++out.failed;
      continue;
    }
    try {
      for (auto& f : reporter->write(input, dir)) out.files.push_back(std::move(f));
    } catch (const std::exception& e) {
      std::cerr << fmt::format("speedlab: error: report '{}' could not be written: {}\n", name, json_problem(e));
      ++out.failed;
    }
  }
  return out;
}

void write_json_file(const fs::path& file, const nlohmann::json& j) { write_file_atomically(file, j.dump(2) + "\n"); }

namespace {

// A folder with results.json but no results.jsonl (a published copy such as
// docs/results/*): points, run and the analysis stored in it.
void read_results_json(const fs::path& dir, saved_run& s) {
  const auto file = dir / "results.json";
  std::ifstream in(file);
  try {
    const auto j = nlohmann::json::parse(in);
    check_schema_version(j, results_schema_version);
    s.run = read_run_record(j.at("run"));
    for (const auto& p : j.at("points")) s.points.push_back(read_point_record(p));
    if (j.contains("analysis")) s.stored_analysis = j.at("analysis").get<analysis::analysis_result>();
  } catch (const newer_schema_error& e) {
    throw folder_refused(fmt::format("{}: {}; nothing in {} is read or rewritten", file.string(), e.what(), dir.string()));
  } catch (const std::exception& e) {
    throw folder_refused(fmt::format("{}: not a speedlab results file: {}", file.string(), json_problem(e)));
  }
  if (s.stored_analysis)
    s.warnings.push_back(fmt::format("{}: no results.jsonl; reporting the points and the analysis stored in results.json",
                                     dir.string()));
  // A published copy usually leaves the traces out: its points then have none.
  std::size_t missing = 0;
  std::error_code ec;
  for (auto& p : s.points)
    if (!p.trace_file.empty() && !fs::exists(dir / p.trace_file, ec)) {
      p.trace_file.clear();
      ++missing;
    }
  if (missing) s.warnings.push_back(fmt::format("{}: {} points' traces are not in this folder", dir.string(), missing));
  s.device = read_optional_record<analysis::device_model>(dir / layout::device, read_device_record, s.warnings);
}

} // namespace

saved_run load_run(const fs::path& dir) {
  saved_run s;
  s.dir = dir;
  std::error_code ec;
  if (!fs::exists(dir, ec)) throw folder_refused(fmt::format("{}: no such folder", dir.string()));
  if (!fs::is_directory(dir, ec))
    throw folder_refused(fmt::format("{}: not a folder; give the output folder of a run (the one holding results.jsonl)",
                                     dir.string()));
  if (!fs::exists(dir / layout::results, ec) && fs::is_regular_file(dir / "results.json", ec)) {
    read_results_json(dir, s);
    return s;
  }
  s.points = read_results_file(dir / layout::results, s.warnings, s.skipped);
  refuse_newer_results_json(dir);
  if (auto run = read_optional_record<run_info>(dir / layout::run, read_run_record, s.warnings)) s.run = *run;
  else if (!fs::exists(dir / layout::run, ec))
    s.warnings.push_back(fmt::format("{}: missing (the run did not finish); reporting the points found",
                                     (dir / layout::run).string()));
  s.device = read_optional_record<analysis::device_model>(dir / layout::device, read_device_record, s.warnings);
  return s;
}

std::optional<trace::device_trace> load_point_trace(const fs::path& dir, const point_result& p) {
  if (p.trace_file.empty()) return std::nullopt;
  // The name comes from a file anyone may edit: it stays inside the folder's traces/.
  if (std::string why = trace_path_problem(p.trace_file); !why.empty()) throw bad_record(why);
  const auto file = dir / p.trace_file;
  std::ifstream in(file);
  if (!in) throw bad_record(fmt::format("{}: cannot read: {}", file.string(), std::strerror(errno)));
  try {
    return read_trace_record(nlohmann::json::parse(in));
  } catch (const std::exception& e) {
    throw bad_record(fmt::format("{}: {}", file.string(), json_problem(e)));
  }
}

} // namespace speedlab::app
