#include "analysis/time_split.hpp"

#include <algorithm>
#include <array>
#include <map>

#include "model/cuda_api.hpp"
#include "model/statistics.hpp"

namespace speedlab::analysis {

namespace split {

category copy_category(std::uint8_t kind, bool call) {
  if (kind == trace::copy_htod) return call ? h2d_call : h2d;
  if (kind == trace::copy_dtoh) return call ? d2h_call : d2h;
  return call ? copy_other_call : copy_other;
}

void copy_call_kinds::finish() {
  std::stable_sort(m_kinds.begin(), m_kinds.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
}

std::optional<std::uint8_t> copy_call_kinds::find(std::uint32_t correlation) const {
  auto it = std::lower_bound(m_kinds.begin(), m_kinds.end(), correlation,
                             [](const auto& e, std::uint32_t x) { return e.first < x; });
  if (it == m_kinds.end() || it->first != correlation) return std::nullopt;
  return it->second;
}

std::uint32_t choose_thread(const std::map<std::uint32_t, std::size_t>& phase_range_threads,
                            const std::map<std::uint32_t, std::size_t>& api_threads, std::uint32_t process) {
  auto most = [](const std::map<std::uint32_t, std::size_t>& counts) {
    return std::max_element(counts.begin(), counts.end(),
                            [](const auto& a, const auto& b) { return a.second < b.second; })
        ->first;
  };
  if (!phase_range_threads.empty()) return most(phase_range_threads);
  if (process != 0 && api_threads.count(process)) return process; // main thread: tid == pid
  if (!api_threads.empty()) return most(api_threads);
  return 0;
}

category call_category(trace::api_kind kind, std::optional<std::uint8_t> copy_kind) {
  if (!trace::split_as_waiting(kind)) return api;
  if (kind == trace::api_kind::copy_sync && copy_kind) return copy_category(*copy_kind, true);
  return sync;
}

void merge_all(sets& s) {
  for (auto& v : s) intervals::merge_in_place(v);
}

cover_sums first_cover(const sets& s, std::uint64_t lo, std::uint64_t mid, std::uint64_t hi) {
  cover_sums sum;
  std::array<std::size_t, categories> used{}, at{};
  std::size_t n = 0;
  constexpr std::uint64_t none = UINT64_MAX;
  std::uint64_t t = none;
  // Only the sets that hold intervals in the window are visited (a trace fills three or four).
  for (std::size_t c = 0; c < categories; ++c) {
    const auto& v = s[c];
    const auto first =
        std::lower_bound(v.begin(), v.end(), lo, [](const interval& iv, std::uint64_t x) { return iv.second <= x; });
    if (first == v.end() || first->first >= hi) continue;
    used[n] = c;
    at[n++] = static_cast<std::size_t>(first - v.begin());
    t = std::min(t, std::max(first->first, lo));
  }
  auto add = [&](std::size_t c, std::uint64_t a, std::uint64_t b) {
    if (a < mid) sum.before[c] += std::min(b, mid) - a;
    if (b > mid) sum.after[c] += b - std::max(a, mid);
  };
  while (t < hi) {
    std::size_t top = categories;
    std::uint64_t next = none;
    for (std::size_t u = 0; u < n; ++u) {
      const auto& v = s[used[u]];
      if (at[u] == v.size() || v[at[u]].first >= hi) continue;
      const interval& iv = v[at[u]];
      if (iv.first <= t) {
        if (top == categories) top = used[u];
        next = std::min(next, std::min(iv.second, hi));
      } else {
        next = std::min(next, iv.first);
      }
    }
    if (next == none) break;
    if (top != categories) add(top, t, next);
    t = next;
    for (std::size_t u = 0; u < n; ++u) {
      const auto& v = s[used[u]];
      while (at[u] < v.size() && std::min(v[at[u]].second, hi) <= t) ++at[u];
    }
  }
  return sum;
}

time_split split_of(const sums& covered, std::uint64_t lo, std::uint64_t hi) {
  std::uint64_t accounted = 0;
  for (const auto v : covered) accounted += v;
  auto ns = [&](std::initializer_list<category> parts) {
    std::uint64_t v = 0;
    for (const auto c : parts) v += covered[c];
    return static_cast<double>(v);
  };
  time_split x;
  x.kernel = ns({kernel});
  x.h2d = ns({h2d, h2d_call});
  x.d2h = ns({d2h, d2h_call});
  x.copy_other = ns({copy_other, copy_other_call});
  x.memset = ns({memset});
  x.sync = ns({sync});
  x.api = ns({api});
  x.host = static_cast<double>((hi > lo ? hi - lo : 0) - accounted); // the sets are disjoint: accounted <= hi - lo
  x.wall_ns = intervals::span(lo, hi);
  return x;
}

} // namespace split

std::uint32_t phase_thread(const trace::device_trace& t) {
  std::map<std::uint32_t, std::size_t> range_threads, api_threads;
  for (const auto& r : t.ranges)
    if (r.domain == "speedlab") ++range_threads[r.thread];
  for (const auto& a : t.api_calls) ++api_threads[a.thread];
  return split::choose_thread(range_threads, api_threads, t.process);
}

std::vector<time_split> compute_time_splits(const trace::device_trace& t) {
  return compute_time_splits(t, t.repetitions);
}

std::vector<time_split> compute_time_splits(const trace::device_trace& t,
                                            const std::vector<trace::repetition_window>& windows) {
  split::sets sets;
  for (const auto& k : t.kernels) sets[split::kernel].emplace_back(k.start, k.end);
  split::copy_call_kinds copies;
  for (const auto& m : t.memcpys) {
    sets[split::copy_category(m.copy_kind, false)].emplace_back(m.start, m.end);
    copies.add(m.correlation, m.copy_kind);
  }
  copies.finish();
  for (const auto& m : t.memsets) sets[split::memset].emplace_back(m.start, m.end);
  // Host side: only the phase thread's calls say what the measured code was waiting on.
  split::add_host_sets(
      t.api_calls, t.syncs, phase_thread(t), [](const trace::api_record& a) { return trace::classify_api(a.name); },
      copies, sets);
  split::merge_all(sets);

  std::vector<time_split> out;
  out.reserve(windows.size());
  for (const auto& w : windows) {
    if (w.end <= w.start) {
      out.emplace_back();
      continue;
    }
    out.push_back(split::split_of(split::first_cover(sets, w.start, w.end, w.end).before, w.start, w.end));
  }
  return out;
}

time_split_summary summarize_time_splits(const std::vector<time_split>& splits) {
  time_split_summary out;
  out.count = splits.size();
  if (splits.empty()) return out;
  std::vector<double> v(splits.size());
  for (auto field : {&time_split::kernel, &time_split::h2d, &time_split::d2h, &time_split::copy_other,
                     &time_split::memset, &time_split::sync, &time_split::api, &time_split::host, &time_split::wall_ns}) {
    for (std::size_t i = 0; i < splits.size(); ++i) v[i] = splits[i].*field;
    std::sort(v.begin(), v.end());
    out.median.*field = speedlab::stats::quantile_sorted(v, 0.5);
    out.q1.*field = speedlab::stats::quantile_sorted(v, 0.25);
    out.q3.*field = speedlab::stats::quantile_sorted(v, 0.75);
  }
  return out;
}

} // namespace speedlab::analysis
