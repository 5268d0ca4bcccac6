// The cupti backend's options block, `cupti:` in a suite: activity buffers, which records,
// and how CUPTI's clock reaches the steady clock. Compiled in every build (profilers/
// CMakeLists.txt), so a suite naming it reads the same where CUPTI was left out.
#include <fmt/format.h>

#include "profilers/cupti/cupti_options.hpp"
#include "profilers/profiler.hpp"

namespace speedlab::profiling {
namespace {

constexpr double mib = 1 << 20;

void read_cupti(section_reader& r, profiler_options& options) {
  using opts = cupti_options;
  cupti_options& out = options.block<cupti_options>();
  if (r.has("buffer_mib")) out.buffer_bytes = static_cast<std::size_t>(r.number("buffer_mib", cupti_limits::buffer_mib) * mib);
  if (r.has("max_buffer_mib"))
    out.max_buffer_bytes = static_cast<std::size_t>(r.number("max_buffer_mib", cupti_limits::max_buffer_mib) * mib);
  if (out.max_buffer_bytes < out.buffer_bytes) r.fail("", "cupti.max_buffer_mib is smaller than cupti.buffer_mib");
  if (r.has("api_records")) out.api_records = r.boolean("api_records");
  if (r.has("driver_api")) out.driver_api = r.boolean("driver_api");
  if (r.has("launch_records")) {
    const std::string v = r.choice("launch_records", {"activity", "callback", "none"});
    out.launches = v == "callback" ? opts::launch_mode::callback
                   : v == "none"   ? opts::launch_mode::none
                                   : opts::launch_mode::activity;
  }
  if (r.has("clock"))
    out.clock = r.choice("clock", {"callback", "offset"}) == "offset" ? opts::clock_mode::offset : opts::clock_mode::callback;
}

// Whenever they differ from the defaults, selected or not: a run whose suite sets them, with
// cupti off on the command line, still says what the suite asked for.
std::string cupti_note(const profiler_options& options, bool) {
  const cupti_options& o = options.get<cupti_options>();
  const cupti_options d;
  std::vector<std::string> parts;
  if (o.buffer_bytes != d.buffer_bytes) parts.push_back(fmt::format("buffer_mib={:g}", static_cast<double>(o.buffer_bytes) / mib));
  if (o.max_buffer_bytes != d.max_buffer_bytes)
    parts.push_back(fmt::format("max_buffer_mib={:g}", static_cast<double>(o.max_buffer_bytes) / mib));
  if (o.api_records != d.api_records) parts.push_back(fmt::format("api_records={}", o.api_records));
  if (o.driver_api != d.driver_api) parts.push_back(fmt::format("driver_api={}", o.driver_api));
  if (o.launches != d.launches)
    parts.push_back(std::string("launch_records=") +
                    (o.launches == cupti_options::launch_mode::callback ? "callback" : "none"));
  if (o.clock != d.clock) parts.push_back("clock=offset");
  if (parts.empty()) return {};
  std::string s = "cupti options:";
  for (const auto& p : parts) s += " " + p;
  if (!o.api_records) s += " (no CUDA API records: API and sync time count as host time)";
  return s;
}

} // namespace

const options_section& cupti_options_section() {
  static const options_section section{
      {"buffer_mib", "max_buffer_mib", "api_records", "launch_records", "clock", "driver_api"}, read_cupti, cupti_note};
  return section;
}

} // namespace speedlab::profiling
