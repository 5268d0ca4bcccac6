// Half-open time intervals [first, second) in nanoseconds: merging, measuring and
// intersecting sorted disjoint sets of them (internal to analysis/).
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace speedlab::analysis::intervals {

using interval = std::pair<std::uint64_t, std::uint64_t>;

// The length of [start, end) in ns; 0 when it ends before it starts.
inline double span(std::uint64_t start, std::uint64_t end) { return end > start ? static_cast<double>(end - start) : 0; }

// The disjoint union of intervals sorted by start (empty ones dropped; touching ones joined).
inline std::vector<interval> merged_sorted(const std::vector<interval>& v) {
  std::vector<interval> out;
  for (const auto& iv : v) {
    if (iv.second <= iv.first) continue;
    if (!out.empty() && iv.first <= out.back().second) out.back().second = std::max(out.back().second, iv.second);
    else out.push_back(iv);
  }
  return out;
}

// Total length of the union of intervals sorted by start: measure(merged(...)) without a copy.
template <class It>
double union_length(It first, It last) {
  double sum = 0;
  bool open = false;
  interval cur{};
  for (; first != last; ++first) {
    const interval iv = *first;
    if (iv.second <= iv.first) continue;
    if (open && iv.first <= cur.second) {
      cur.second = std::max(cur.second, iv.second);
      continue;
    }
    if (open) sum += static_cast<double>(cur.second - cur.first);
    cur = iv;
    open = true;
  }
  if (open) sum += static_cast<double>(cur.second - cur.first);
  return sum;
}

// Sorted, disjoint union of the intervals (empty ones dropped; touching ones joined).
inline std::vector<interval> merged(std::vector<interval> v) {
  if (!std::is_sorted(v.begin(), v.end())) std::sort(v.begin(), v.end()); // often sorted already: one pass
  return merged_sorted(v);
}

// merged() without a second vector: sorted, empty ones dropped, overlapping and touching ones
// joined, in place (a program's sets hold millions).
inline void merge_in_place(std::vector<interval>& v) {
  if (!std::is_sorted(v.begin(), v.end())) std::sort(v.begin(), v.end());
  std::size_t n = 0;
  for (const auto& iv : v) {
    if (iv.second <= iv.first) continue;
    if (n > 0 && iv.first <= v[n - 1].second)
      v[n - 1].second = std::max(v[n - 1].second, iv.second);
    else
      v[n++] = iv;
  }
  v.resize(n);
  v.shrink_to_fit();
}

// Total length of sorted disjoint intervals inside [lo, hi).
inline double measure(const std::vector<interval>& v, std::uint64_t lo, std::uint64_t hi) {
  double sum = 0;
  auto it = std::lower_bound(v.begin(), v.end(), lo, [](const interval& iv, std::uint64_t x) { return iv.second <= x; });
  for (; it != v.end() && it->first < hi; ++it) {
    const auto a = std::max(it->first, lo), b = std::min(it->second, hi);
    if (b > a) sum += static_cast<double>(b - a);
  }
  return sum;
}

// Total length of the intersection of two sorted disjoint sets.
inline double intersection(const std::vector<interval>& a, const std::vector<interval>& b) {
  double sum = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const auto lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
    if (hi > lo) sum += static_cast<double>(hi - lo);
    (a[i].second < b[j].second ? i : j)++;
  }
  return sum;
}

} // namespace speedlab::analysis::intervals
