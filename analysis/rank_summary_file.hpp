// The summary file of a profile folder (`summary.json`, docs/profile-format.md): each of its
// streams reduced where it was recorded to what the program and rank analyses need (the
// process's tables and counts, and for a rank its steps, collective ends and clock facts), so
// a job of a thousand ranks merges from a few hundred kilobytes per rank instead of its
// streams (docs/ranks.md, "Scale").
//
//   analysis::stream_summaries s = analysis::summarize_streams(files);   // on the node
//   std::ofstream(dir / analysis::summary_file_name) << analysis::summary_file_json(s, dir).dump();
//   analysis::saved_summary back = analysis::read_summary_file(dir / analysis::summary_file_name);
//
// The reader checks the file as every saved record is checked (model/saved_records.hpp):
// a newer schema throws newer_schema_error, anything malformed bad_record naming the file,
// the stream entry and the field.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "analysis/program_stream.hpp"

namespace speedlab::analysis {

inline constexpr const char* summary_file_name = "summary.json";
inline constexpr const char* summary_file_format = "speedlab-profile-summary";
inline constexpr int summary_file_schema_version = 1;

// The kernels kept per process (by total time): what the program's kernel table shows.
inline constexpr std::size_t summary_top_kernels = 50;

// One stream as summarized: its file (name inside the folder) and size when summarized, so
// a merge can tell that the stream beside it is still the one summarized.
struct summarized_stream {
  std::string file;
  std::uint64_t bytes = 0;
  process_summary process;
  std::optional<rank_summary> rank;
};

struct saved_summary {
  std::vector<summarized_stream> streams;
  std::vector<std::string> messages; // what the reader skipped when it was written
};

// The document for s (summarize_streams of the streams of `dir`), stream sizes read from disk.
nlohmann::json summary_file_json(const stream_summaries& s);
// Reads and checks a summary file; throws bad_record / newer_schema_error naming the file.
saved_summary read_summary_file(const std::filesystem::path& file);

// Profile folders (a job's rank or node folders) summarized for a merge: each folder's
// summary file when it covers exactly the streams in the folder now (same names, same
// sizes; or the streams were removed), else its streams read with summarize_streams, and a
// message says why the file was not used. Summary files are read by `threads` readers (0:
// the cores, at most 8). Processes in read_stream_folder's order (start, pid). A folder whose
// summary is damaged (or not a file) and has no streams to read instead is left out, with a
// message naming the file; one whose summary is of a newer schema throws newer_schema_error.
struct profile_folder {
  std::filesystem::path dir;
  std::vector<std::filesystem::path> streams; // profile::stream_files(dir)
};
struct folders_read {
  stream_summaries read;
  std::size_t from_summaries = 0; // folders merged from their summary file
};
folders_read summarize_folders(const std::vector<profile_folder>& folders, std::size_t threads = 0);

} // namespace speedlab::analysis
