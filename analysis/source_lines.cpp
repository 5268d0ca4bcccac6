#include "analysis/source_lines.hpp"

#include <algorithm>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "analysis/text.hpp"
#include "model/counters.hpp"

namespace speedlab::analysis {
namespace {

// The one demangling of what a person reads (model/counters): only `_Z` names, so an
// extern "C" kernel named `d` stays `d` (not "double").
std::string demangled(const std::string& name) { return speedlab::counters::demangled_name(name); }

// Samples of a line waiting on global memory: the scoreboard of L1TEX results and a full
// global/local queue (what a strided load or store makes warps wait on).
std::uint64_t memory_wait(const source::source_line& l) {
  std::uint64_t n = 0;
  for (const auto& s : l.stalls)
    if (s.reason == "long_scoreboard" || s.reason == "lg_throttle") n += s.samples;
  return n;
}

} // namespace

std::vector<source_kernel_view> source_kernels(const point_result& p) {
  std::vector<source_kernel_view> out;
  const auto* pass = p.sections.get<source::source_pass>();
  if (!pass || pass->total_samples == 0) return out;
  const double total = static_cast<double>(pass->total_samples);
  for (const auto& k : pass->kernels) {
    const double share = static_cast<double>(k.samples) / total;
    if (share < source_min_share || k.lines.empty()) continue;
    out.push_back({demangled(k.kernel), k.kernel, share, &k});
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.share > b.share; });
  if (out.size() > source_max_kernels) out.resize(source_max_kernels);
  return out;
}

std::string describe_stalls(const source::source_line& l) {
  std::string out;
  for (const auto& s : l.stalls)
    out += (out.empty() ? "" : ", ") + source::stall_words(s.reason) + " " + text::percent(s.share);
  return out;
}

std::string describe_line(const source::source_line& l) {
  std::string out = fmt::format("{} ({} of samples", source::line_label(l), text::percent(l.share));
  if (!l.stalls.empty()) out += "; " + describe_stalls(l);
  if (l.sectors_per_request) out += fmt::format("; {} sectors per request", text::number(*l.sectors_per_request));
  return out + ")";
}

std::optional<source::source_line> uncoalesced_line(const point_result& p, const std::string& kernel) {
  const auto* pass = p.sections.get<source::source_pass>();
  if (!pass) return std::nullopt;
  for (const auto& k : pass->kernels) {
    if (k.lines.empty() || !k.line_info || (k.kernel != kernel && demangled(k.kernel) != kernel)) continue;
    const source::source_line* best = nullptr;
    for (const auto& l : k.lines)
      if (l.sectors_per_request && (!best || l.sectors_per_request > best->sectors_per_request)) best = &l;
    if (!best)
      for (const auto& l : k.lines)
        if (memory_wait(l) > 0 && (!best || memory_wait(l) > memory_wait(*best))) best = &l;
    if (best && best->line > 0) return *best;
  }
  return std::nullopt;
}

} // namespace speedlab::analysis
