#include "app/profile/profile_report.hpp"

#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/run/output_folder.hpp"
#include "model/atomic_file.hpp"
#include "model/saved_records.hpp"
#include "model/natural_order.hpp"
#include "reports/common/program_content.hpp"
#include "reports/common/program_tables.hpp"
#include "reports/reporter.hpp"

#include "analysis/program_stream.hpp"
#include "analysis/rank_summary_file.hpp"
#include "model/profile_stream.hpp"

namespace speedlab::app {
namespace {

std::optional<analysis::device_model> saved_device(const std::filesystem::path& dir, std::vector<std::string>& notes) {
  std::ifstream in(dir / "device.json");
  if (!in) return std::nullopt;
  try {
    return read_device_record(nlohmann::json::parse(in));
  } catch (const std::exception& e) {
    notes.push_back(fmt::format("{}: unreadable: {}", (dir / "device.json").string(), json_problem(e)));
    return std::nullopt;
  }
}

} // namespace

std::string program_summary(const analysis::program_analysis& a) {
  const auto tables = reports::program_tables(a, 10);
  std::string out;
  for (const auto* id : {"program-facts", "program-split", "program-kernels"})
    for (const auto& tb : tables) {
      if (tb.id != id) continue;
      out += tb.title + "\n";
      if (tb.rows.empty()) out += "  " + tb.empty_note + "\n";
      std::vector<std::size_t> width(tb.header.size(), 0);
      for (const auto& r : tb.rows)
        for (std::size_t i = 0; i < r.size() && i < width.size(); ++i) width[i] = std::max(width[i], r[i].text.size());
      for (const auto& r : tb.rows) {
        std::string line = " ";
        for (std::size_t i = 0; i < r.size(); ++i) line += fmt::format(" {:<{}}", r[i].text, i + 1 < r.size() ? width[i] : 0);
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out += line + "\n";
      }
      if (tb.omitted) out += fmt::format("  ... {} more\n", tb.omitted);
      out += "\n";
    }
  return out;
}

namespace {

bool holds_facts(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::is_regular_file(dir / profile_facts_file, ec);
}

analysis::program_facts read_facts(const std::filesystem::path& dir) {
  const auto file = dir / profile_facts_file;
  std::ifstream in(file);
  if (!in) throw std::runtime_error(fmt::format("{}: not found: {} is not a profile folder", file.string(), dir.string()));
  try {
    return nlohmann::json::parse(in).get<analysis::program_facts>();
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("{}: unreadable: {}", file.string(), json_problem(e)));
  }
}

// A folder of rank folders: their facts as one program's (the first rank folder's command
// line; the longest wall time; the first failing exit code; every note once).
analysis::program_facts merged_facts(const std::vector<std::filesystem::path>& parts) {
  analysis::program_facts out;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    analysis::program_facts f = read_facts(parts[i]);
    names.push_back(parts[i].filename().string());
    if (i == 0) {
      out = f;
      out.notes.clear();
    }
    out.wall_s = std::max(out.wall_s, f.wall_s);
    if (f.exit_code && *f.exit_code != 0 && (!out.exit_code || *out.exit_code == 0)) out.exit_code = f.exit_code;
    if (!f.started_at.empty() && (out.started_at.empty() || f.started_at < out.started_at)) out.started_at = f.started_at;
    for (auto& n : f.notes)
      if (std::find(out.notes.begin(), out.notes.end(), n) == out.notes.end()) out.notes.push_back(std::move(n));
  }
  out.notes.insert(out.notes.begin(),
                   fmt::format("merged {} profile folders (speedlab profile ran inside each rank): {}", parts.size(),
                               fmt::join(names, ", ")));
  return out;
}

// The facts of dir: its own profile.json, or its rank folders' merged; throws naming the
// missing profile.json when it is neither.
analysis::program_facts folder_facts(const std::filesystem::path& dir, const std::vector<std::filesystem::path>& parts) {
  if (parts.empty() || (parts.size() == 1 && parts.front() == dir)) return read_facts(dir);
  return merged_facts(parts);
}

} // namespace

std::vector<std::filesystem::path> profile_parts(const std::filesystem::path& dir) {
  if (holds_facts(dir)) return {dir};
  std::vector<std::filesystem::path> parts;
  std::error_code ec;
  // A run folder is a run, whatever its subfolders hold (a profile packed beside a run's
  // records): reporting it as their program would replace the run's own reports.
  if (std::filesystem::exists(dir / layout::results, ec)) return parts;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.is_directory() && holds_facts(e.path())) parts.push_back(e.path());
  std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) {
    return natural_less(a.filename().string(), b.filename().string());
  });
  return parts;
}

bool is_profile_folder(const std::filesystem::path& dir) { return !profile_parts(dir).empty(); }

run_info program_run_info(const analysis::program_facts& facts) {
  run_info r;
  r.speedlab_version = facts.speedlab_version;
  r.started_at = facts.started_at;
  r.hostname = facts.hostname;
  r.command_line = fmt::format("{}", fmt::join(facts.command_line, " "));
  r.suite = "speedlab profile";
  r.wall_s = facts.wall_s;
  r.profilers = {"cupti"};
  r.notes = facts.notes;
  return r;
}

written_reports write_profile_reports(const std::filesystem::path& dir,
                                                         const std::vector<profile::process_profile>& processes,
                                                         const analysis::program_analysis& program,
                                                         const std::vector<std::string>& formats) {
  std::map<std::string, const trace::device_trace*> traces; // point id -> its process's trace
  for (const auto& p : processes) traces[analysis::process_point_id(p.process.pid)] = &p.trace;
  const run_info run = program_run_info(program.facts);
  reports::report_input input{run, program.points, program.result,
                              [&traces](const point_result& p) -> std::optional<trace::device_trace> {
                                auto it = traces.find(p.id);
                                if (it == traces.end()) return std::nullopt;
                                return *it->second;
                              },
                              reports::program_content(program)};
  return write_report_formats(input, dir, formats);
}

written_reports write_profile_reports(const std::filesystem::path& dir,
                                                         const std::vector<profile::process_profile>& processes,
                                                         const analysis::program_facts& facts,
                                                         const std::vector<std::string>& formats,
                                                         const analysis::device_model& device) {
  const analysis::program_analysis program = analysis::analyze_program(processes, facts, device);
  return write_profile_reports(dir, processes, program, formats);
}

saved_profile load_profile(const std::filesystem::path& dir) {
  saved_profile s;
  const auto parts = profile_parts(dir);
  s.facts = folder_facts(dir, parts);
  for (const auto& part : parts) {
    profile::folder_read read = profile::read_stream_folder(part);
    for (auto& p : read.processes) s.processes.push_back(std::move(p));
    for (auto& m : read.messages) s.messages.push_back(std::move(m));
  }
  std::stable_sort(s.processes.begin(), s.processes.end(), [](const auto& a, const auto& b) {
    return std::tie(a.process.start_ns, a.process.pid) < std::tie(b.process.start_ns, b.process.pid);
  });
  return s;
}

namespace {

// A profile folder analysed one stream at a time: each stream is read, summarized and
// dropped (a few worker threads), so the memory is that of the streams in flight plus the
// summaries; the trace exporters read a process's stream again when they need it.
struct analysed_profile {
  analysis::program_analysis analysis;
  std::map<std::string, std::filesystem::path> stream_of; // point id -> its stream file
};

// The streams a folder's profile.json names (the processes that used CUDA) that are neither
// in the folder nor read from its summary: each named, with its pid and rank. Returns the
// ranks so lost.
std::set<int> missing_streams(const std::filesystem::path& part, const std::set<std::filesystem::path>& read,
                              std::vector<std::string>& damage) {
  std::set<int> ranks;
  nlohmann::json facts;
  try {
    std::ifstream in(part / profile_facts_file);
    facts = nlohmann::json::parse(in);
  } catch (const std::exception&) {
    return ranks; // read_facts has said what is wrong with it
  }
  if (!facts.contains("processes") || !facts["processes"].is_array()) return ranks;
  for (const auto& p : facts["processes"]) {
    if (!p.is_object() || !p.contains("stream") || !p["stream"].is_string() || p["stream"].get<std::string>().empty())
      continue;
    const auto file = part / p["stream"].get<std::string>();
    std::error_code ec;
    if (std::filesystem::exists(file, ec) || read.count(file)) continue;
    profile::process_info info;
    if (p.contains("tags") && p["tags"].is_object())
      for (const auto& [k, v] : p["tags"].items())
        if (v.is_string()) info.tags[k] = v.get<std::string>();
    const auto rank = analysis::identify_rank(info).rank;
    if (rank) ranks.insert(*rank);
    damage.push_back(fmt::format("{}: missing: the stream of {}{}, named in {}, is not in the folder (nor in a "
                                 "summary.json); that process is not analysed",
                                 file.string(), rank ? fmt::format("rank {}, ", *rank) : "",
                                 p.contains("pid") ? fmt::format("pid {}", p["pid"].dump()) : "a process",
                                 (part / profile_facts_file).string()));
  }
  return ranks;
}

std::string rank_list(const std::set<int>& ranks) {
  std::vector<int> shown(ranks.begin(), ranks.end());
  const std::size_t more = shown.size() > 16 ? shown.size() - 16 : 0;
  shown.resize(shown.size() - more);
  return fmt::format("{}{}", fmt::join(shown, ", "), more ? fmt::format(" and {} more", more) : "");
}

// A job whose ranks are not all there (a lost stream, a folder left out): which ranks, and
// that the comparison across ranks (straggler, waits, imbalance) covers only those read.
void incomplete_ranks(const std::vector<analysis::rank_summary>& ranks, std::set<int> missing,
                      std::vector<std::string>& damage) {
  std::set<int> present;
  int world = 0;
  for (const auto& r : ranks) {
    if (r.id.rank) present.insert(*r.id.rank);
    world = std::max(world, r.id.world_size.value_or(0));
  }
  for (int k = 0; k < world && k < (1 << 20); ++k)
    if (!present.count(k)) missing.insert(k);
  for (int k : present) missing.erase(k);
  if (missing.empty()) return;
  damage.push_back(fmt::format("the comparison across ranks is incomplete: {} rank(s) read{}, rank {} missing; {}",
                               present.size(), world ? fmt::format(" of {} (the world size)", world) : "",
                               rank_list(missing),
                               present.size() < 2 ? "with fewer than two ranks there is no comparison (straggler, "
                                                    "waits, imbalance)"
                                                  : "its straggler, waits and imbalance are of the ranks read"));
}

analysed_profile load_and_analyze(const std::filesystem::path& dir, profile_damage& damage) {
  analysed_profile out;
  const auto parts = profile_parts(dir);
  analysis::program_facts facts = folder_facts(dir, parts);
  std::vector<std::string> notes;
  // The ceilings: DIR's device.json, else the first rank folder's.
  auto device = saved_device(dir, notes);
  if (!device && !parts.empty() && parts.front() != dir) device = saved_device(parts.front(), notes);
  // Each folder's summary file when it stands for its streams (written where the rank ran:
  // `speedlab report DIR --summary`), else its streams, one at a time per reader, chunk by
  // chunk; a rank's stream also kept for its rank summary.
  std::vector<analysis::profile_folder> folders;
  for (const auto& part : parts) folders.push_back({part, profile::stream_files(part, damage.messages)});
  analysis::folders_read got = analysis::summarize_folders(folders);
  analysis::stream_summaries& read = got.read;
  if (got.from_summaries)
    notes.push_back(fmt::format("{} of {} profile folder(s) merged from their summary file ({}): each launch's kernel "
                                "duration is not in a summary, so the rules on short kernels did not judge those "
                                "processes",
                                got.from_summaries, folders.size(), analysis::summary_file_name));
  for (auto& m : read.messages) damage.messages.push_back(std::move(m));
  const std::set<std::filesystem::path> read_files(read.files.begin(), read.files.end());
  std::set<int> lost_ranks;
  for (const auto& part : parts) lost_ranks.merge(missing_streams(part, read_files, damage.messages));
  incomplete_ranks(read.ranks, std::move(lost_ranks), damage.messages);
  damage.processes = read.processes.size();
  damage.nothing_valid = read.processes.empty() && !damage.messages.empty();
  for (std::size_t i = 0; i < read.processes.size(); ++i)
    out.stream_of[analysis::process_point_id(read.processes[i].info.pid)] = read.files[i];
  std::vector<analysis::process_summary> summaries = std::move(read.processes);
  std::vector<analysis::rank_summary> ranks = std::move(read.ranks);
  out.analysis = analysis::analyze_program(std::move(summaries), std::move(ranks), std::move(facts),
                                           device.value_or(analysis::device_model{}));
  for (auto& n : notes) out.analysis.result.notes.push_back(std::move(n));
  for (const auto& m : damage.messages) out.analysis.result.notes.push_back(m);
  return out;
}

} // namespace

analysis::program_analysis analyze_profile_folder(const std::filesystem::path& dir, profile_damage* damage) {
  profile_damage found;
  analysis::program_analysis a = load_and_analyze(dir, found).analysis;
  if (damage) *damage = std::move(found);
  return a;
}

nlohmann::json analyze_profile_json(const analysis::program_analysis& analysis) {
  return {{"program", reports::program_json(analysis)}, {"analysis", analysis.result}};
}

written_reports report_profile_folder(const std::filesystem::path& dir, const std::vector<std::string>& formats,
                                      profile_damage* damage) {
  profile_damage found;
  const analysed_profile p = load_and_analyze(dir, found);
  const bool nothing = found.nothing_valid;
  if (damage) *damage = std::move(found);
  if (nothing) return {}; // the reports of a folder are not replaced by reports of nothing
  const run_info run = program_run_info(p.analysis.facts);
  reports::report_input input{run, p.analysis.points, p.analysis.result,
                              [&p](const point_result& point) -> std::optional<trace::device_trace> {
                                auto it = p.stream_of.find(point.id);
                                if (it == p.stream_of.end()) return std::nullopt;
                                profile::stream_read r = profile::read_stream(it->second);
                                if (!r.valid) return std::nullopt;
                                return std::move(r.profile.trace);
                              },
                              reports::program_content(p.analysis)};
  return write_report_formats(input, dir, formats);
}

std::vector<std::filesystem::path> write_profile_summaries(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> written;
  const auto parts = profile_parts(dir);
  if (parts.empty())
    throw std::runtime_error(fmt::format("{}: not a profile folder (no profile.json in it or its subfolders)", dir.string()));
  for (const auto& part : parts) {
    std::vector<std::string> said;
    const auto files = profile::stream_files(part, said);
    const auto target = part / analysis::summary_file_name;
    if (files.empty()) {
      // The summary may be all that is left of this folder's streams: never replace it.
      std::error_code ec;
      if (std::filesystem::exists(target, ec)) continue;
      throw std::runtime_error(fmt::format("{}: no profile stream to summarize", part.string()));
    }
    if (std::filesystem::exists(target)) {
      // A summary from a newer speedlab is never rewritten by this one (model/saved_records.hpp).
      try {
        (void)analysis::read_summary_file(target);
      } catch (const newer_schema_error& e) {
        throw std::runtime_error(fmt::format("{} (not replaced)", e.what()));
      } catch (const std::exception&) {
        // damaged: made again from the streams below
      }
    }
    analysis::stream_summaries s = analysis::summarize_streams(files);
    s.messages.insert(s.messages.begin(), said.begin(), said.end());
    write_file_atomically(target, analysis::summary_file_json(s).dump() + "\n");
    written.push_back(target);
  }
  return written;
}

} // namespace speedlab::app
