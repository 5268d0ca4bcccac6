#include "analysis/time_split.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "model/cuda_api.hpp"
#include "model/statistics.hpp"

namespace speedlab::analysis {
namespace {

// Categories in precedence order; a lower value wins where intervals overlap. The *_call
// ones are GPU-idle time inside a synchronous copy call (staging through a bounce buffer,
// driver setup): they count toward the copy's direction, after every GPU-busy category.
enum category : std::uint8_t {
  cat_kernel,
  cat_h2d,
  cat_d2h,
  cat_copy_other,
  cat_memset,
  cat_h2d_call,
  cat_d2h_call,
  cat_copy_other_call,
  cat_sync,
  cat_api,
  cat_count
};

struct edge {
  std::uint64_t time;
  std::uint8_t cat;
  std::int8_t delta;
};

struct segment {
  std::uint64_t start, end;
  std::uint8_t cat;
};

category copy_category(std::uint8_t kind) {
  if (kind == trace::copy_htod) return cat_h2d;
  if (kind == trace::copy_dtoh) return cat_d2h;
  return cat_copy_other;
}

category copy_call_category(std::uint8_t kind) {
  if (kind == trace::copy_htod) return cat_h2d_call;
  if (kind == trace::copy_dtoh) return cat_d2h_call;
  return cat_copy_other_call;
}

bool earlier(const edge& a, const edge& b) { return a.time < b.time; }

// The edges of every interval in time order. Records come mostly in time order per kind
// (one stream, one thread), so each kind's start edges and end edges are runs that are
// sorted already or nearly so; sorting each run and merging them pairwise costs far less
// than sorting all edges at once (a whole program has tens of millions).
class edge_runs {
public:
  void next_run() {
    m_runs.emplace_back();
    m_runs.emplace_back();
  }
  void add(std::uint64_t start, std::uint64_t end, std::uint8_t cat) {
    m_runs[m_runs.size() - 2].push_back({start, cat, +1});
    m_runs.back().push_back({end, cat, -1});
  }
  std::vector<edge> take_sorted() {
    std::erase_if(m_runs, [](const auto& r) { return r.empty(); });
    for (auto& r : m_runs)
      if (!std::is_sorted(r.begin(), r.end(), earlier)) std::sort(r.begin(), r.end(), earlier);
    while (m_runs.size() > 1) {
      std::vector<std::vector<edge>> next;
      for (std::size_t i = 0; i + 1 < m_runs.size(); i += 2) {
        std::vector<edge> both(m_runs[i].size() + m_runs[i + 1].size());
        std::merge(m_runs[i].begin(), m_runs[i].end(), m_runs[i + 1].begin(), m_runs[i + 1].end(), both.begin(), earlier);
        m_runs[i] = {};
        m_runs[i + 1] = {};
        next.push_back(std::move(both));
      }
      if (m_runs.size() % 2) next.push_back(std::move(m_runs.back()));
      m_runs = std::move(next);
    }
    return m_runs.empty() ? std::vector<edge>{} : std::move(m_runs.front());
  }

private:
  std::vector<std::vector<edge>> m_runs; // start edges, end edges, per kind
};

// Sweeps all intervals once into disjoint segments, each labelled with the winning category.
std::vector<segment> build_segments(const std::vector<edge>& edges) {
  std::array<int, cat_count> open{};
  std::vector<segment> segments;
  segments.reserve(edges.size());
  std::uint64_t prev = 0;
  for (std::size_t i = 0; i < edges.size();) {
    const std::uint64_t t = edges[i].time;
    if (i > 0 && t > prev) {
      std::uint8_t top = cat_count;
      for (std::uint8_t c = 0; c < cat_count; ++c)
        if (open[c] > 0) {
          top = c;
          break;
        }
      if (top != cat_count) {
        if (!segments.empty() && segments.back().cat == top && segments.back().end == prev) segments.back().end = t;
        else segments.push_back({prev, t, top});
      }
    }
    for (; i < edges.size() && edges[i].time == t; ++i) open[edges[i].cat] += edges[i].delta;
    prev = t;
  }
  return segments;
}

} // namespace

std::uint32_t phase_thread(const trace::device_trace& t) {
  std::map<std::uint32_t, std::size_t> range_threads;
  for (const auto& r : t.ranges)
    if (r.domain == "speedlab") ++range_threads[r.thread];
  if (!range_threads.empty())
    return std::max_element(range_threads.begin(), range_threads.end(),
                            [](const auto& a, const auto& b) { return a.second < b.second; })
        ->first;
  std::map<std::uint32_t, std::size_t> api_threads;
  for (const auto& a : t.api_calls) ++api_threads[a.thread];
  if (t.process != 0 && api_threads.count(t.process)) return t.process; // main thread: tid == pid
  if (api_threads.empty()) return 0;
  return std::max_element(api_threads.begin(), api_threads.end(),
                          [](const auto& a, const auto& b) { return a.second < b.second; })
      ->first;
}

std::vector<time_split> compute_time_splits(const trace::device_trace& t) {
  return compute_time_splits(t, t.repetitions);
}

std::vector<time_split> compute_time_splits(const trace::device_trace& t,
                                            const std::vector<trace::repetition_window>& windows) {
  edge_runs edges;
  auto add = [&](std::uint64_t start, std::uint64_t end, category c) {
    if (end <= start) return; // empty or malformed: contributes nothing
    edges.add(start, end, c);
  };
  edges.next_run();
  for (const auto& k : t.kernels) add(k.start, k.end, cat_kernel);
  edges.next_run();
  std::unordered_map<std::uint32_t, std::uint8_t> copy_kind_of_call; // correlation -> copy kind
  for (const auto& m : t.memcpys) {
    add(m.start, m.end, copy_category(m.copy_kind));
    copy_kind_of_call.emplace(m.correlation, m.copy_kind);
  }
  edges.next_run();
  for (const auto& m : t.memsets) add(m.start, m.end, cat_memset);

  // Host side: only the phase thread's calls say what the measured code was waiting on.
  const std::uint32_t thread = phase_thread(t);
  // Which calls own the sync records (only needed when there are sync records).
  std::unordered_set<std::uint32_t> phase_correlations, all_correlations;
  const bool match_syncs = !t.syncs.empty();
  edges.next_run();
  for (const auto& a : t.api_calls) {
    if (match_syncs) all_correlations.insert(a.correlation);
    if (a.thread != thread) continue;
    if (match_syncs) phase_correlations.insert(a.correlation);
    category c = cat_api;
    const trace::api_kind kind = trace::classify_api(a.name);
    if (trace::split_as_waiting(kind)) {
      c = cat_sync;
      if (kind == trace::api_kind::copy_sync)
        if (auto it = copy_kind_of_call.find(a.correlation); it != copy_kind_of_call.end())
          c = copy_call_category(it->second);
    }
    add(a.start, a.end, c);
  }
  // Sync records have no thread: they count when their call is the phase thread's, or when
  // API records were not collected. Stream-wait-event (type 2) never blocks the host.
  edges.next_run();
  for (const auto& s : t.syncs) {
    if (s.type == 2) continue;
    if (phase_correlations.count(s.correlation) || !all_correlations.count(s.correlation))
      add(s.start, s.end, cat_sync);
  }

  const std::vector<segment> segments = build_segments(edges.take_sorted());

  std::vector<time_split> out;
  out.reserve(windows.size());
  for (const auto& w : windows) {
    time_split s;
    if (w.end <= w.start) {
      out.push_back(s);
      continue;
    }
    std::array<std::uint64_t, cat_count> sum{};
    auto it = std::upper_bound(segments.begin(), segments.end(), w.start,
                               [](std::uint64_t x, const segment& seg) { return x < seg.end; });
    for (; it != segments.end() && it->start < w.end; ++it)
      sum[it->cat] += std::min(it->end, w.end) - std::max(it->start, w.start);
    const std::uint64_t wall = w.end - w.start;
    std::uint64_t accounted = 0;
    for (auto v : sum) accounted += v;
    s.kernel = static_cast<double>(sum[cat_kernel]);
    s.h2d = static_cast<double>(sum[cat_h2d] + sum[cat_h2d_call]);
    s.d2h = static_cast<double>(sum[cat_d2h] + sum[cat_d2h_call]);
    s.copy_other = static_cast<double>(sum[cat_copy_other] + sum[cat_copy_other_call]);
    s.memset = static_cast<double>(sum[cat_memset]);
    s.sync = static_cast<double>(sum[cat_sync]);
    s.api = static_cast<double>(sum[cat_api]);
    s.host = static_cast<double>(wall - accounted); // segments are disjoint, so accounted <= wall
    s.wall_ns = static_cast<double>(wall);
    out.push_back(s);
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
    out.median.*field = stats::quantile_sorted(v, 0.5);
    out.q1.*field = stats::quantile_sorted(v, 0.25);
    out.q3.*field = stats::quantile_sorted(v, 0.75);
  }
  return out;
}

} // namespace speedlab::analysis
