#include "model/source_view.hpp"

#include <algorithm>
#include <fstream>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

#include "model/json_support.hpp"

namespace speedlab::source {
namespace {

constexpr std::string_view stall_prefix = "smsp__pcsamp_warps_issue_stalled_";
constexpr std::string_view not_issued_suffix = "_not_issued";

// SASS metric names (cuptiSassMetricsGetMetrics on GH100, SOURCE-LINES.md section 3).
constexpr const char* sectors_metric = "smsp__sass_sectors_mem_global";
constexpr const char* global_ld_metric = "smsp__sass_inst_executed_op_global_ld";
constexpr const char* global_st_metric = "smsp__sass_inst_executed_op_global_st";

struct line_key {
  std::string file;
  std::uint32_t line = 0;
  std::uint64_t pc = 0; // only for lines without line info: each offset is its own place
  bool operator<(const line_key& o) const { return std::tie(file, line, pc) < std::tie(o.file, o.line, o.pc); }
};

struct line_acc {
  std::uint64_t first_pc = UINT64_MAX;
  std::uint64_t samples = 0;
  std::map<std::string, std::uint64_t> stalls;
  std::uint64_t requests = 0, sectors = 0;
};

struct kernel_acc {
  std::uint64_t samples = 0;
  bool line_info = false;
  std::map<line_key, line_acc> lines;
};

// A PC's place: its file:line, or its offset alone without line info.
line_key place_of(const correlate_function& correlate, std::uint64_t crc, const std::string& fn, std::uint64_t pc,
                  bool& has_line) {
  std::optional<line_location> loc = correlate ? correlate(crc, fn, pc) : std::nullopt;
  if (!loc) return {"(unknown cubin)", 0, pc};
  has_line = !loc->file.empty() && loc->line > 0;
  if (!has_line) return {"", 0, pc};
  return {loc->file, loc->line, 0};
}

source_line finish_line(const line_key& key, const line_acc& acc, std::uint64_t kernel_samples,
                        const line_reader& read_line, const fold_options& options) {
  source_line l;
  l.file = key.file;
  l.line = key.line;
  l.pc_offset = acc.first_pc == UINT64_MAX ? key.pc : acc.first_pc;
  l.samples = acc.samples;
  l.share = kernel_samples ? static_cast<double>(acc.samples) / static_cast<double>(kernel_samples) : 0;
  for (const auto& [reason, n] : acc.stalls)
    l.stalls.push_back({reason, n, acc.samples ? static_cast<double>(n) / static_cast<double>(acc.samples) : 0});
  std::stable_sort(l.stalls.begin(), l.stalls.end(), [](const auto& a, const auto& b) { return a.samples > b.samples; });
  if (l.stalls.size() > options.top_stalls) l.stalls.resize(options.top_stalls);
  l.global_requests = acc.requests;
  l.global_sectors = acc.sectors;
  if (acc.requests > 0) l.sectors_per_request = static_cast<double>(acc.sectors) / static_cast<double>(acc.requests);
  if (read_line && l.line > 0) l.text = read_line(l.file, l.line);
  return l;
}

void add_sass(std::map<std::string, kernel_acc>& kernels, const std::vector<sass_record>& sass,
              const correlate_function& correlate) {
  for (const auto& s : sass) {
    auto value = [&s](const char* name) {
      auto it = s.metrics.find(name);
      return it == s.metrics.end() ? std::uint64_t{0} : it->second;
    };
    // CUPTI gives one record per (instruction, metric): a load's sectors come in a record of
    // their own, beside the one that counts its requests (seen on the H100).
    const std::uint64_t requests = value(global_ld_metric) + value(global_st_metric);
    const std::uint64_t sectors = value(sectors_metric);
    if (requests == 0 && sectors == 0) continue;
    bool has_line = false;
    auto& k = kernels[s.function];
    line_acc& acc = k.lines[place_of(correlate, s.cubin_crc, s.function, s.pc_offset, has_line)];
    k.line_info = k.line_info || has_line;
    acc.first_pc = std::min(acc.first_pc, s.pc_offset);
    acc.requests += requests;
    acc.sectors += sectors;
  }
}

} // namespace

std::string stall_short_name(const std::string& name) {
  if (name.rfind(stall_prefix, 0) != 0) return {};
  std::string rest = name.substr(stall_prefix.size());
  if (rest.size() >= not_issued_suffix.size() &&
      rest.compare(rest.size() - not_issued_suffix.size(), not_issued_suffix.size(), not_issued_suffix) == 0)
    return {};
  return rest;
}

std::string stall_words(const std::string& reason) {
  // Meanings as the Nsight Compute profiling guide states them.
  static const std::map<std::string, std::string> words{
      {"long_scoreboard", "waiting on global memory"},
      {"barrier", "barrier"},
      {"math_pipe_throttle", "math pipe throttle"},
      {"short_scoreboard", "waiting on shared memory or MUFU"},
      {"wait", "fixed-latency wait"},
      {"not_selected", "ready, not selected"},
      {"selected", "issuing"},
      {"lg_throttle", "global memory queue full"},
      {"mio_throttle", "shared memory queue full"},
      {"tex_throttle", "texture queue full"},
      {"branch_resolving", "branch resolving"},
      {"dispatch_stall", "dispatch stall"},
      {"drain", "draining stores at exit"},
      {"imc_miss", "constant cache miss"},
      {"membar", "memory fence"},
      {"misc", "miscellaneous"},
      {"no_instructions", "instruction fetch"},
      {"sleeping", "sleeping"},
      {"warpgroup_arrive", "warpgroup arrive"},
  };
  auto it = words.find(reason);
  return it == words.end() ? reason : it->second;
}

std::vector<kernel_source> fold(const std::vector<pc_record>& records, const std::map<std::uint32_t, std::string>& stall_names,
                                const correlate_function& correlate, const std::vector<sass_record>& sass,
                                const line_reader& read_line, const fold_options& options) {
  std::map<std::string, kernel_acc> kernels;
  for (const auto& r : records) {
    std::uint64_t samples = 0;
    std::map<std::string, std::uint64_t> stalls;
    for (const auto& [index, n] : r.stalls) {
      auto name = stall_names.find(index);
      const std::string reason = name == stall_names.end() ? fmt::format("stall {}", index) : stall_short_name(name->second);
      if (reason.empty() || n == 0) continue; // a counter or a not-issued subset: counted elsewhere
      stalls[reason] += n;
      samples += n;
    }
    if (samples == 0) continue;
    bool has_line = false;
    auto& k = kernels[r.function];
    line_acc& acc = k.lines[place_of(correlate, r.cubin_crc, r.function, r.pc_offset, has_line)];
    k.line_info = k.line_info || has_line;
    k.samples += samples;
    acc.first_pc = std::min(acc.first_pc, r.pc_offset);
    acc.samples += samples;
    for (const auto& [reason, n] : stalls) acc.stalls[reason] += n;
  }
  add_sass(kernels, sass, correlate);

  std::vector<kernel_source> out;
  for (const auto& [name, k] : kernels) {
    kernel_source ks;
    ks.kernel = name;
    ks.samples = k.samples;
    ks.line_info = k.line_info;
    for (const auto& [key, acc] : k.lines) ks.lines.push_back(finish_line(key, acc, k.samples, read_line, options));
    // Most samples first; lines with no samples (SASS metrics only) by their requests.
    std::stable_sort(ks.lines.begin(), ks.lines.end(), [](const source_line& a, const source_line& b) {
      return std::tie(a.samples, a.global_requests) > std::tie(b.samples, b.global_requests);
    });
    if (ks.lines.size() > options.top_lines) ks.lines.resize(options.top_lines);
    out.push_back(std::move(ks));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.samples > b.samples; });
  return out;
}

std::string read_source_line(const std::string& file, std::uint32_t line) {
  if (file.empty() || line == 0) return {};
  std::ifstream in(file);
  if (!in) return {};
  std::string text;
  for (std::uint32_t i = 0; i < line; ++i)
    if (!std::getline(in, text)) return {};
  std::string out;
  for (char c : text) {
    if (c == '\t') out += "  ";
    else if (c == '\r') continue;
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return {}; // not a text file
    else out += c;
    if (out.size() >= 200) break;
  }
  const auto first = out.find_first_not_of(' ');
  return first == std::string::npos ? std::string{} : out.substr(first);
}

std::string line_label(const source_line& l) {
  if (l.line == 0) return fmt::format("+0x{:x}", l.pc_offset);
  const auto slash = l.file.find_last_of('/');
  return fmt::format("{}:{}", slash == std::string::npos ? l.file : l.file.substr(slash + 1), l.line);
}

std::vector<std::string> pass_notes(const source_pass& pass) {
  bool unknown = false, offsets_only = false;
  for (const auto& k : pass.kernels) {
    if (!k.lines.empty() && k.lines.front().file == "(unknown cubin)") unknown = true;
    else if (!k.line_info) offsets_only = true;
  }
  std::vector<std::string> notes;
  if (unknown)
    notes.push_back("source: some kernels' code loaded before the source pass subscribed (no cubin): their samples "
                    "have no line");
  if (offsets_only)
    notes.push_back("source: kernels built without -lineinfo: SASS offsets only (build with nvcc -lineinfo for "
                    "file:line; CuPy: RawKernel options=('-lineinfo',); Numba: @cuda.jit(lineinfo=True))");
  return notes;
}

std::string unavailable_note(const std::string& cause) {
  return "source: no source view: " + cause + "; the program runs on without it";
}

void to_json(nlohmann::json& j, const stall_share& s) {
  // The words are for readers of the JSON; the raw name is what is read back.
  j = {{"reason", s.reason}, {"words", stall_words(s.reason)}, {"samples", s.samples}, {"share", s.share}};
}

void from_json(const nlohmann::json& j, stall_share& s) {
  const stall_share fallback{};
  json_checked::member(j, "reason", s.reason, fallback.reason);
  json_checked::member(j, "samples", s.samples, fallback.samples);
  json_checked::member(j, "share", s.share, fallback.share);
}

SPEEDLAB_JSON_FIELDS(source_line, file, line, pc_offset, samples, share, stalls, sectors_per_request, global_requests,
                     global_sectors, text)
SPEEDLAB_JSON_FIELDS(kernel_source, kernel, samples, line_info, lines)
SPEEDLAB_JSON_FIELDS(source_pass, method, sampling_period_log2, total_samples, dropped_samples, pass_wall_ns,
                     setup_wall_ns, kernels)

} // namespace speedlab::source
