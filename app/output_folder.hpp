// The output folder of a run: results.jsonl streamed point by point (flushed and synced,
// so a killed suite keeps every finished point), run.json, device.json, traces/.
// `speedlab report DIR` and `analyze DIR` read it back.
#pragma once

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "analysis/analysis.hpp"
#include "model/results.hpp"
#include "model/trace.hpp"

namespace speedlab::app {

class results_writer {
public:
  explicit results_writer(const std::filesystem::path& dir);
  ~results_writer();
  results_writer(const results_writer&) = delete;
  results_writer& operator=(const results_writer&) = delete;
  void append(const point_result& p); // one JSON line, flushed and fsync'ed

private:
  std::FILE* m_file = nullptr;
};

struct saved_run {
  std::filesystem::path dir;
  run_info run;
  std::vector<point_result> points;
  std::optional<analysis::device_model> device;
  std::vector<std::string> warnings; // unreadable lines, missing files
};

// Throws std::runtime_error naming the file (and line) when the folder is not a speedlab run.
saved_run load_run(const std::filesystem::path& dir);
std::optional<trace::device_trace> load_point_trace(const std::filesystem::path& dir, const point_result& p);

void write_json_file(const std::filesystem::path& file, const nlohmann::json& j);

} // namespace speedlab::app
