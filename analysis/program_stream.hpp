// The program analysis of a profile folder read stream by stream, chunk by chunk: no process
// is held whole, whatever its size (issue 12's scale goal: 10 million records in 10 s and
// 1 GB; docs/results/profile-run1.md has the figures), except a launcher's rank, whose
// records the ranks' comparison needs until its stream ends (docs/ranks.md, "Per rank").
//
//   analysis::program_analysis a = analysis::analyze_stream_folder(dir, facts, device, {}, &messages);
//   // streams of several folders (rank folders; `speedlab analyze DIR`):
//   analysis::stream_summaries s = analysis::summarize_streams(files);
//   a = analysis::analyze_program(std::move(s.processes), std::move(s.ranks), facts, device);
//   // or one process:
//   analysis::process_accumulator acc({{info.start_ns, UINT64_MAX, 0, 0}});
//   profile::read_stream(file, [&](const auto&, profile::records_batch&& b) { acc.add(b.trace); });
//   analysis::process_summary s = acc.finish(read.profile);
//
// summarize_process (program_analysis.hpp) is the same accumulator fed the whole trace at
// once, so a folder analysed here and the same processes analysed in memory agree exactly.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/program_analysis.hpp"
#include "analysis/rank_analysis.hpp"

namespace speedlab::analysis {

// Builds a process_summary from a process's records handed over in pieces (a stream's
// records chunks, in any order). Keeps per record only what the summary needs: 32 bytes per
// API call, range or copy, 24 per kernel or sync, 16 per memset, and 16 more per kernel,
// copy and memset for what the NVTX ranges launched; each name once.
class process_accumulator {
public:
  // `trace_windows`: the repetition windows of the trace statistics (as summarize_trace: a
  // record starting outside every window is left out of them); empty: no windows.
  explicit process_accumulator(std::vector<trace::repetition_window> trace_windows, program_options options = {});
  ~process_accumulator();
  process_accumulator(process_accumulator&&) noexcept;
  process_accumulator& operator=(process_accumulator&&) noexcept;

  // A Python process (is_python_process): keep what the lines of its program need (each GPU
  // record's correlation, duration and bytes). Before the first add().
  void track_python();
  void add(const trace::device_trace& batch);
  // The summary, from the process's facts and its trace's backend, note, process,
  // repetitions (the lifetime window) and dropped_records; records in p.trace are ignored.
  // Call once: it consumes what was accumulated.
  process_summary finish(const profile::process_profile& p);

private:
  struct state;
  std::unique_ptr<state> m;
};

// One stream file, read one records chunk at a time into its summary; a rank's stream (a
// process that used CUDA under a launcher's rank variable) also into its rank summary, its
// records kept for that until the end of the stream.
struct stream_summary {
  bool valid = false;                // a profile stream (it has a header)
  process_summary summary;
  std::optional<rank_summary> rank;  // a rank's stream
  std::vector<std::string> messages; // what the reader skipped
};
stream_summary summarize_stream(const std::filesystem::path& file, const program_options& options = {});

// Streams (of one profile folder, or of several: the rank folders of a launcher's job)
// summarized with summarize_stream, a few at a time: `threads` readers, 0 for the default
// (the cores, at most 4; SPEEDLAB_REPORT_THREADS overrides). processes in read_stream_folder's
// order (start, pid), files[i] the stream of processes[i]; ranks[k] the rank summary of
// processes[rank_process[k]].
struct stream_summaries {
  std::vector<process_summary> processes;
  std::vector<std::filesystem::path> files;
  std::vector<rank_summary> ranks;
  std::vector<std::size_t> rank_process;
  std::vector<std::string> messages; // the reader's, stream by stream
};
stream_summaries summarize_streams(const std::vector<std::filesystem::path>& files, const program_options& options = {},
                                   std::size_t threads = 0);

// Every stream of a profile folder (profile::stream_files) through summarize_streams, then
// analyze_program with the ranks (two or more are compared). The reader's messages go to
// `messages`.
program_analysis analyze_stream_folder(const std::filesystem::path& dir, program_facts facts, const device_model& device,
                                       const program_options& options = {},
                                       std::vector<std::string>* messages = nullptr);

} // namespace speedlab::analysis
