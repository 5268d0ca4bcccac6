#include "analysis/sampled_split.hpp"

#include <algorithm>
#include <random>

namespace speedlab::analysis {
namespace {

// What one window held of the time neither GPU busy nor a wait: the classifying thread's
// launch calls' part of it, and all of it (CUDA API and host code).
struct window_launches {
  double ns = 0, idle = 0;
};

// The intervals of `from` that meet [a, b), clipped to it.
void clip_into(const std::vector<split::interval>& from, std::uint64_t a, std::uint64_t b,
               std::vector<split::interval>& to) {
  to.clear();
  auto it = std::lower_bound(from.begin(), from.end(), a,
                             [](const split::interval& iv, std::uint64_t x) { return iv.second <= x; });
  for (; it != from.end() && it->first < b; ++it) to.emplace_back(std::max(it->first, a), std::min(it->second, b));
}

std::vector<window_launches> in_windows(const split::sets& sets, const sampled_launches& l,
                                        const std::vector<std::pair<std::uint64_t, std::uint64_t>>& windows,
                                        std::uint64_t lo, std::uint64_t hi) {
  std::vector<window_launches> out;
  split::sets local; // the window's records, its API set holding the launch calls alone
  for (const auto& [start, end] : windows) {
    const std::uint64_t a = std::max(start, lo), b = std::min(end, hi);
    if (b <= a) continue;
    for (std::size_t c = 0; c < split::api; ++c) clip_into(sets[c], a, b, local[c]);
    clip_into(l.phase_calls, a, b, local[split::api]);
    const split::cover_sums mine = split::first_cover(local, a, a, b);
    std::uint64_t busy = 0; // GPU busy and waits: every category before api
    for (std::size_t c = 0; c < split::api; ++c) busy += mine.after[c];
    out.push_back({static_cast<double>(mine.after[split::api]), static_cast<double>((b - a) - std::min(busy, b - a))});
  }
  return out;
}

// The launch calls' time outside the windows if they took the windows' share of the idle time
// there: at most the host code it is taken from.
double moved_for(double ns, double idle, double idle_out, double host_out) {
  return idle > 0 ? std::min(ns / idle * idle_out, host_out) : 0.0;
}

} // namespace

split_estimate estimate_unrecorded_api(const split::sets& sets, const sampled_launches& launches,
                                       const std::vector<std::pair<std::uint64_t, std::uint64_t>>& windows,
                                       std::uint64_t lo, std::uint64_t hi, std::size_t unrecorded, time_split& split) {
  split_estimate e;
  const std::vector<window_launches> in = in_windows(sets, launches, windows, lo, hi);
  e.windows = in.size();
  e.unrecorded_calls = unrecorded;
  double ns = 0, idle = 0;
  for (const auto& w : in) ns += w.ns, idle += w.idle;
  if (idle <= 0 || unrecorded == 0) return e;
  const double idle_out = std::max(0.0, split.api + split.host - idle);
  const double host_out = std::max(0.0, split.host - (idle - ns)); // the windows' own host code stays
  e.launch_share = ns / idle;
  e.moved_ns = moved_for(ns, idle, idle_out, host_out);
  // The interval: the windows resampled with replacement, the share and the move again.
  constexpr std::size_t draws = 400;
  std::mt19937_64 rng(0x5eed);
  std::uniform_int_distribution<std::size_t> pick(0, in.size() - 1);
  std::vector<double> moved(draws);
  for (auto& m : moved) {
    double t = 0, i = 0;
    for (std::size_t k = 0; k < in.size(); ++k) {
      const window_launches& w = in[pick(rng)];
      t += w.ns, i += w.idle;
    }
    m = moved_for(t, i, idle_out, host_out);
  }
  std::sort(moved.begin(), moved.end());
  e.low_ns = moved[draws * 25 / 1000];
  e.high_ns = moved[draws * 975 / 1000 - 1];
  split.api += e.moved_ns;
  split.host -= e.moved_ns;
  return e;
}

} // namespace speedlab::analysis
