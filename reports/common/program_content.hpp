// A profiled program as the report model's content (reports/report_content.hpp), built once
// here so every reporter renders it as it renders anything else: the program's section
// (program_tables.hpp), its CSV tables (program_processes, program_kernels, program_ranges,
// program_streams), results.json's "program" member and who each process is in its job.
//
//   reports::report_input in{run, program.points, program.result, load_trace, reports::program_content(program)};
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/program_analysis.hpp"
#include "reports/report_content.hpp"

namespace speedlab::reports {

// `program` keeps what it points at (the ranks' timeline): it must outlive the content.
report_content program_content(const analysis::program_analysis& program);

// Every process of the program, in the analysis's order (analysis::identify_rank on its
// stream's tags; under several hosts, each host's clock offset from the rank analysis).
std::vector<process_identity> process_identities(const analysis::program_analysis& a);

// The program as JSON (analysis/program_analysis.hpp's to_json) with each of its per-process
// records (processes, streams) tagged with its process's host and rank, so a multi-rank job's
// records can be told apart without joining on pid. `ids`: process_identities(a).
nlohmann::json program_json(const analysis::program_analysis& a, const std::vector<process_identity>& ids);
nlohmann::json program_json(const analysis::program_analysis& a);

// The program's tables of exact values (nanoseconds, counts) for CSV.
std::vector<data_table> program_data_tables(const analysis::program_analysis& a);

} // namespace speedlab::reports
