// Reports of a profiled program (`speedlab profile -- PROGRAM`): the program analysis
// (analysis/program_analysis.hpp) rendered by the same reporters as a run, each process a
// point with one window over its lifetime, plus the program's tables, CSV files, results.json
// member and process identities as the report model's content (reports::program_content).
// Used by the profile command when the program has ended, and by `speedlab report DIR` /
// `analyze DIR` on a profile folder (one with profile.json and the per-process streams).
//
//   auto files = app::write_profile_reports(dir, processes, facts, {"markdown", "html"});
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/program_analysis.hpp"
#include "app/run/output_folder.hpp"
#include "model/profile.hpp"
#include "model/results.hpp"

namespace speedlab::app {

// The program's facts as `speedlab profile` writes them into DIR.
inline constexpr const char* profile_facts_file = "profile.json";

// The profile folders that make up dir: dir itself when it holds profile.json, else its
// subfolders that do, in natural order (`speedlab profile` inside each rank of a launcher
// writes DIR/rank-<R>; `speedlab report DIR` merges them). Empty: not a profile, and so for
// a run folder (results.jsonl) whatever its subfolders hold.
std::vector<std::filesystem::path> profile_parts(const std::filesystem::path& dir);

// True when dir holds a profile (profile.json, or rank folders with one each) rather than a
// run (results.jsonl).
bool is_profile_folder(const std::filesystem::path& dir);

// The program as a run: run_info from the facts (command line, start, host, wall, notes).
run_info program_run_info(const analysis::program_facts& facts);

// Analyses the processes and writes every format named into dir (an unknown or failing
// format: a message on stderr, counted in failed); device: the ceilings, when known.
written_reports write_profile_reports(const std::filesystem::path& dir,
                                                         const std::vector<profile::process_profile>& processes,
                                                         const analysis::program_facts& facts,
                                                         const std::vector<std::string>& formats,
                                                         const analysis::device_model& device = {});
// The same from an analysis already made (its processes' traces for the trace exporters).
written_reports write_profile_reports(const std::filesystem::path& dir,
                                                         const std::vector<profile::process_profile>& processes,
                                                         const analysis::program_analysis& analysis,
                                                         const std::vector<std::string>& formats);

// A profile folder read back, all in memory: its facts and streams (messages: what the
// reader skipped). Rank folders are merged. analyze/report_profile_folder read one stream at a
// time instead.
struct saved_profile {
  analysis::program_facts facts;
  std::vector<profile::process_profile> processes;
  std::vector<std::string> messages;
};
// Throws std::runtime_error naming the file when profile.json is missing or unreadable.
saved_profile load_profile(const std::filesystem::path& dir);

// The program's facts, time split and top kernels as plain text for the terminal.
std::string program_summary(const analysis::program_analysis& analysis);

// What a profile folder's reading found damaged or missing, each naming its file (and the
// byte offset inside a stream or summary): corrupt chunks, empty or wrong-magic streams, a
// path named like a stream that is no regular file, an unreadable summary.json, a stream that
// profile.json names but the folder lacks (its rank named), ranks missing from a job's
// comparison. The commands say each on standard error; they are the report's notes as well.
struct profile_damage {
  std::vector<std::string> messages;
  std::size_t processes = 0;  // processes read (from streams or summaries)
  bool nothing_valid = false; // something was damaged or missing and no process was read
};

// `speedlab analyze DIR` on a profile folder: the analysis of what it holds (device.json's
// ceilings when present). Reader messages become notes, and go to `damage` when given.
analysis::program_analysis analyze_profile_folder(const std::filesystem::path& dir, profile_damage* damage = nullptr);
// `speedlab analyze --json DIR` on a profile folder: {"program", "analysis"}, the program's
// per-process records tagged with host and rank as in results.json (reports::program_json).
nlohmann::json analyze_profile_json(const analysis::program_analysis& analysis);
// `speedlab report DIR` on a profile folder; writes nothing when damage->nothing_valid.
written_reports report_profile_folder(const std::filesystem::path& dir, const std::vector<std::string>& formats,
                                      profile_damage* damage = nullptr);

// `speedlab report DIR --summary`: each profile folder of DIR (DIR itself, or its rank
// folders) gets its summary file (analysis/rank_summary_file.hpp) from its streams, so a
// merge of the job reads the summaries instead (run it on each node under the job's
// launcher). Returns the files written; a folder whose streams are gone keeps its summary.
// Throws std::runtime_error naming the folder when it is not a profile or has no stream.
std::vector<std::filesystem::path> write_profile_summaries(const std::filesystem::path& dir);

} // namespace speedlab::app
