#include "app/output_folder.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

namespace speedlab::app {

results_writer::results_writer(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  const auto file = dir / "results.jsonl";
  m_file = std::fopen(file.c_str(), "w");
  if (!m_file) throw std::runtime_error(fmt::format("{}: cannot write: {}", file.string(), std::strerror(errno)));
}

results_writer::~results_writer() {
  if (m_file) std::fclose(m_file);
}

void results_writer::append(const point_result& p) {
  const std::string line = nlohmann::json(p).dump() + "\n";
  std::fwrite(line.data(), 1, line.size(), m_file);
  std::fflush(m_file);
  ::fsync(::fileno(m_file));
}

void write_json_file(const std::filesystem::path& file, const nlohmann::json& j) {
  const auto tmp = file.string() + ".tmp";
  {
    std::ofstream out(tmp);
    out << j.dump(2) << '\n';
    if (!out) throw std::runtime_error(fmt::format("{}: cannot write", tmp));
  }
  std::filesystem::rename(tmp, file); // readers never see half a file
}

saved_run load_run(const std::filesystem::path& dir) {
  saved_run s;
  s.dir = dir;
  if (!std::filesystem::is_directory(dir)) throw std::runtime_error(fmt::format("{}: no such folder", dir.string()));
  const auto results = dir / "results.jsonl";
  std::ifstream in(results);
  if (!in) throw std::runtime_error(fmt::format("{}: not found; is {} a speedlab output folder?", results.string(), dir.string()));
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    try {
      s.points.push_back(nlohmann::json::parse(line).get<point_result>());
    } catch (const std::exception& e) {
      // A suite killed mid-write leaves at most one torn last line; say so and go on.
      s.warnings.push_back(fmt::format("{}:{}: skipped an unreadable line: {}", results.string(), number, e.what()));
    }
  }
  if (std::ifstream rin(dir / "run.json"); rin) {
    try {
      s.run = nlohmann::json::parse(rin).get<run_info>();
    } catch (const std::exception& e) {
      s.warnings.push_back(fmt::format("{}: unreadable: {}", (dir / "run.json").string(), e.what()));
    }
  } else {
    s.warnings.push_back(fmt::format("{}: missing (the run did not finish); reporting the points found", (dir / "run.json").string()));
  }
  if (std::ifstream din(dir / "device.json"); din) {
    try {
      s.device = nlohmann::json::parse(din).get<analysis::device_model>();
    } catch (const std::exception& e) {
      s.warnings.push_back(fmt::format("{}: unreadable: {}", (dir / "device.json").string(), e.what()));
    }
  }
  return s;
}

std::optional<trace::device_trace> load_point_trace(const std::filesystem::path& dir, const point_result& p) {
  if (p.trace_file.empty()) return std::nullopt;
  std::ifstream in(dir / p.trace_file);
  if (!in) return std::nullopt;
  try {
    return nlohmann::json::parse(in).get<trace::device_trace>();
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

} // namespace speedlab::app
