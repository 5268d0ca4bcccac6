#include "app/profile_report.hpp"

#include <fstream>
#include <iostream>
#include <map>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/output_folder.hpp"
#include "reports/common/program_tables.hpp"
#include "reports/reporter.hpp"

// The stream reader is the profile command's (model/profile_stream.hpp); a build without it
// still reports on processes handed over in memory.
#if __has_include("model/profile_stream.hpp")
#include "model/profile_stream.hpp"
#define SPEEDLAB_HAVE_PROFILE_STREAM 1
#endif

namespace speedlab::app {
namespace {

std::optional<analysis::device_model> saved_device(const std::filesystem::path& dir, std::vector<std::string>& notes) {
  std::ifstream in(dir / "device.json");
  if (!in) return std::nullopt;
  try {
    return nlohmann::json::parse(in).get<analysis::device_model>();
  } catch (const std::exception& e) {
    notes.push_back(fmt::format("{}: unreadable: {}", (dir / "device.json").string(), e.what()));
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

bool is_profile_folder(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::is_regular_file(dir / profile_facts_file, ec);
}

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
                              &program};
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
  const auto file = dir / profile_facts_file;
  std::ifstream in(file);
  if (!in) throw std::runtime_error(fmt::format("{}: not found: {} is not a profile folder", file.string(), dir.string()));
  try {
    s.facts = nlohmann::json::parse(in).get<analysis::program_facts>();
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("{}: unreadable: {}", file.string(), e.what()));
  }
#ifdef SPEEDLAB_HAVE_PROFILE_STREAM
  profile::folder_read read = profile::read_stream_folder(dir);
  s.processes = std::move(read.processes);
  s.messages = std::move(read.messages);
#else
  s.messages.push_back("this build has no profile stream reader: only profile.json was read");
#endif
  return s;
}

namespace {

struct analysed_profile {
  saved_profile saved;
  analysis::program_analysis analysis;
};

analysed_profile load_and_analyze(const std::filesystem::path& dir) {
  analysed_profile out{load_profile(dir), {}};
  std::vector<std::string> notes = out.saved.messages;
  const auto device = saved_device(dir, notes);
  out.analysis = analysis::analyze_program(out.saved.processes, out.saved.facts, device.value_or(analysis::device_model{}));
  for (auto& n : notes) out.analysis.result.notes.push_back(std::move(n));
  return out;
}

} // namespace

analysis::program_analysis analyze_profile_folder(const std::filesystem::path& dir) {
  return load_and_analyze(dir).analysis;
}

written_reports report_profile_folder(const std::filesystem::path& dir,
                                                         const std::vector<std::string>& formats) {
  const analysed_profile p = load_and_analyze(dir);
  return write_profile_reports(dir, p.saved.processes, p.analysis, formats);
}

} // namespace speedlab::app
