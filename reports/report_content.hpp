// What a report shows beside its points and their analysis, in a form no format owns:
// titled tables of text cells (sections of report.md and report.html), tables of exact
// values (CSV files beside results.csv), JSON members (results.json after "analysis") and
// who each point's process is in its job (results.json tags, trace.json groups). Every
// reporter renders it the same way whatever produced it, so no reporter asks what kind of
// run it has: a suite run's content is empty, a profiled program's is built once from its
// analysis (reports/common/program_content.hpp).
//
//   report_input in{run, points, analysis, load_trace, reports::program_content(program)};
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace speedlab::analysis {
struct rank_analysis;
struct critical_path;
} // namespace speedlab::analysis
namespace speedlab::pylines {
struct python_lines;
} // namespace speedlab::pylines

namespace speedlab::reports {

struct report_cell {
  std::string text;  // untrusted: each format escapes it
  bool code = false; // an identifier (kernel name, command line): shown as code
};

struct report_table {
  std::string id, title, intro;   // id: an anchor ("program-kernels")
  std::vector<std::string> header;
  std::vector<bool> numeric;      // per column
  std::vector<std::vector<report_cell>> rows;
  std::string empty_note;         // shown instead of an empty table
  std::size_t omitted = 0;        // rows left out beyond the table's limit (all are in results.json)
  // A chart above the rows, drawn by the formats that draw (report.html): the ranks of a job
  // by time. Owned by the analysis the content was built from, which outlives the report.
  const analysis::rank_analysis* rank_timeline = nullptr;
  // The critical path of the median step, drawn above the rows (report.html), likewise owned.
  const analysis::critical_path* critical_path = nullptr;
  // The folded Python stacks as a flame graph above the rows (report.html), likewise owned.
  const pylines::python_lines* python_flame = nullptr;
};

// A part of the human reports: the first table's title is its heading, the others' below it.
struct report_section {
  std::string id, label; // anchor of the whole section and its name in a table of contents
  std::vector<report_table> tables;
};

// A table for machine reading: `<name>.csv` beside results.csv (exact numbers, RFC 4180);
// the name is the builder's own, never text from results.
struct data_table {
  std::string name;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

// Who the process behind a point is within its job: host, pid and, under a launcher, rank,
// local rank and world size.
struct process_identity {
  std::string point_id;
  std::uint32_t pid = 0;
  std::string host;
  std::optional<int> rank, local_rank, world_size;
  double clock_offset_ns = 0; // added to this process's times to put it on the ranks' common clock
};

struct report_content {
  std::vector<report_section> sections;  // report.md and report.html, right after the overview
  std::vector<data_table> data_tables;   // the CSV reporter's files beside results.csv
  std::vector<std::pair<std::string, nlohmann::json>> json_members; // results.json, after "analysis"
  std::vector<process_identity> processes; // points that are processes of one job; none for a suite run
};

} // namespace speedlab::reports
