// Where a kernel's time goes by source line: what the source backend (profilers/source)
// records in its pass, folded from CUPTI's PC samples (warp stall reasons per SASS PC) and
// SASS metrics (global sectors and requests per instruction) to file:line through the
// cubin's line table. The folding is here, apart from CUPTI, so that it is tested on
// recorded records without a GPU (docs/analysis.md, "Source view").
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace speedlab::source {

// One stall reason's part of a line's samples. `reason` is the short name CUPTI gives
// (long_scoreboard, barrier, ...), kept raw in JSON; `words` is what reports print.
struct stall_share {
  std::string reason;
  std::uint64_t samples = 0;
  double share = 0; // of the line's samples
};

struct source_line {
  std::string file;             // directory + file from the line table; empty: no line info
  std::uint32_t line = 0;       // 0: no line info (then pc_offset names the place)
  std::uint64_t pc_offset = 0;  // the line's first sampled SASS offset
  std::uint64_t samples = 0;
  double share = 0;             // of the kernel's samples
  std::vector<stall_share> stalls; // dominant first (at most 3)
  // Global-memory sectors per request of the line's loads and stores (SASS metrics);
  // absent when the metrics were not read or the line has no global access.
  std::optional<double> sectors_per_request;
  std::uint64_t global_requests = 0, global_sectors = 0;
  std::string text;             // the line's source text when the file was readable
};

struct kernel_source {
  std::string kernel;            // CUPTI's function name (mangled for C++)
  std::uint64_t samples = 0;
  bool line_info = true;         // false: built without -lineinfo, lines are SASS offsets
  std::vector<source_line> lines; // most samples first, at most fold_options::top_lines
};

// What one source pass of a point recorded.
struct source_pass {
  static constexpr const char* section_key = "source"; // its section of a point (result_sections.hpp)
  std::string method = "pc_sampling";   // "pc_sampling" or "pc_sampling+sass_metrics"
  std::uint32_t sampling_period_log2 = 0; // samples every 2^n cycles per SM
  std::uint64_t total_samples = 0, dropped_samples = 0;
  double pass_wall_ns = 0;                 // the pass's repetition, sampling on
  double setup_wall_ns = 0;                // subscribe + enable + configure
  std::vector<kernel_source> kernels;      // most samples first
};

// ---- the folding (CUPTI-free inputs, shaped like CUPTI's records) -------------------

// CUpti_PCSamplingPCData: one PC of one function with its samples per stall reason index.
struct pc_record {
  std::uint64_t cubin_crc = 0;
  std::uint64_t pc_offset = 0;
  std::string function;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> stalls; // (stall reason index, samples)
};

// CUpti_SassMetrics_Data for one instruction: metric name -> value summed over instances.
struct sass_record {
  std::uint64_t cubin_crc = 0;
  std::uint64_t pc_offset = 0;
  std::string function;
  std::map<std::string, std::uint64_t> metrics;
};

struct line_location {
  std::string file; // empty: no line info for this PC
  std::uint32_t line = 0;
};

// cuptiGetSassToSourceCorrelation on the cubin with this CRC; nullopt when the cubin is unknown.
using correlate_function =
    std::function<std::optional<line_location>(std::uint64_t crc, const std::string& function, std::uint64_t pc)>;
// The text of a source line (empty when the file cannot be read).
using line_reader = std::function<std::string(const std::string& file, std::uint32_t line)>;

struct fold_options {
  std::size_t top_lines = 5;
  std::size_t top_stalls = 3;
};

// The short name of a CUPTI stall reason: "smsp__pcsamp_warps_issue_stalled_long_scoreboard"
// -> "long_scoreboard". Empty for names that are not a stall of their own: the counters
// smsp__pcsamp_sample_count and _samples_data_dropped, and the *_not_issued subsets (they
// repeat samples already counted under their reason).
std::string stall_short_name(const std::string& cupti_name);
// "waiting on global memory" for long_scoreboard, ...; the raw name for one not known.
std::string stall_words(const std::string& reason);

// PC records -> kernels -> top lines. `stall_names` maps CUPTI's stall index to its name
// (cuptiPCSamplingGetStallReasons; never assume an order). SASS records add sectors and
// requests per line. PCs whose cubin is unknown are counted under "(unknown cubin)".
std::vector<kernel_source> fold(const std::vector<pc_record>& records, const std::map<std::uint32_t, std::string>& stall_names,
                                const correlate_function& correlate, const std::vector<sass_record>& sass,
                                const line_reader& read_line, const fold_options& options = {});

// What a reader must be told about a folded pass, each said once: kernels without line info
// ("SASS offsets only"), samples of code loaded before the pass subscribed (no cubin).
std::vector<std::string> pass_notes(const source_pass& pass);
// The note when the source view cannot be collected at all (another profiler holds CUPTI, no
// PC sampling on this GPU or driver): `cause` in words; the run goes on without it.
std::string unavailable_note(const std::string& cause);

// Reads one line of a text file, at most 200 characters, tabs as spaces; empty when the file
// cannot be read, is not text, or is shorter.
std::string read_source_line(const std::string& file, std::uint32_t line);

// "softmax.cu:42" (file name only), or "+0x1a0" for a line without line info.
std::string line_label(const source_line& l);

void to_json(nlohmann::json& j, const stall_share& s);
void from_json(const nlohmann::json& j, stall_share& s);
void to_json(nlohmann::json& j, const source_line& l);
void from_json(const nlohmann::json& j, source_line& l);
void to_json(nlohmann::json& j, const kernel_source& k);
void from_json(const nlohmann::json& j, kernel_source& k);
void to_json(nlohmann::json& j, const source_pass& p);
void from_json(const nlohmann::json& j, source_pass& p);

} // namespace speedlab::source
