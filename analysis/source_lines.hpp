// The source view for readers: for each kernel that matters in a point's source pass (by
// its share of the pass's PC samples, which count warps resident on the SMs, i.e. kernel
// time), its top lines with the words for their stalls; and the line a counter finding
// points at (uncoalesced-access: the line with the most sectors per request, else the one
// most samples wait on global memory at).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/results.hpp"

namespace speedlab::analysis {

struct source_kernel_view {
  std::string kernel;        // demangled
  std::string mangled;       // as CUPTI names it (the counters pass uses the same)
  double share = 0;          // of the pass's samples
  const source::kernel_source* data = nullptr;
};

inline constexpr double source_min_share = 0.05; // kernels below this share of samples are left out
inline constexpr std::size_t source_max_kernels = 3;

// Kernels of the point's source pass with at least source_min_share of its samples, most
// first, at most source_max_kernels. Empty without a source pass.
std::vector<source_kernel_view> source_kernels(const point_result& p);

// "softmax.cu:25 (43% of samples; waiting on global memory 61%, ...)" for a finding's evidence.
std::string describe_line(const source::source_line& l);
// "waiting on global memory 61%, fixed-latency wait 20%".
std::string describe_stalls(const source::source_line& l);

// The line of `kernel` (mangled or demangled) behind uncoalesced global accesses; nullopt
// when the point has no source view of that kernel.
std::optional<source::source_line> uncoalesced_line(const point_result& p, const std::string& kernel);

} // namespace speedlab::analysis
