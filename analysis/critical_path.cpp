// The critical path of each step (critical_path.hpp): records kept, steps found, the walk.
// The figures and findings from the walked steps are in critical_path_findings.cpp.
#include "analysis/critical_path.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include <speedlab/enum_words.hpp>

#include "analysis/critical_path_walk.hpp"
#include "analysis/name_ids.hpp"
#include "model/format.hpp"

namespace speedlab::analysis {

constexpr enum_word<segment_kind> segment_kind_words[] = {
    {segment_kind::host, "host work"},        {segment_kind::api, "API call"},
    {segment_kind::kernel, "kernel"},         {segment_kind::copy, "copy"},
    {segment_kind::memset, "memset"},         {segment_kind::sync, "sync wait"},
    {segment_kind::collective, "collective"}, {segment_kind::gap, "gap"}};

std::string_view to_string(segment_kind k) { return word_of(k, segment_kind_words, "?"); }

struct path_accumulator::state {
  path_records r;
  name_ids names;
  recent_ids recent;
  std::size_t count = 0;
  std::uint32_t intern(const std::string& s) { return names.intern(s, recent); }
};

path_accumulator::path_accumulator() : m(std::make_unique<state>()) {}
path_accumulator::~path_accumulator() = default;
path_accumulator::path_accumulator(path_accumulator&&) noexcept = default;
path_accumulator& path_accumulator::operator=(path_accumulator&&) noexcept = default;

namespace {

// "copy host→device (pageable)": a copy's name on the path, by direction and host memory.
std::string copy_name(const trace::memcpy_record& c) {
  const char* dir = c.copy_kind == trace::copy_htod   ? "host→device"
                    : c.copy_kind == trace::copy_dtoh ? "device→host"
                    : c.copy_kind == trace::copy_dtod ? "device→device"
                    : c.copy_kind == trace::copy_ptop ? "peer→peer"
                                                      : "other";
  const bool pageable = c.src_kind == trace::mem_pageable || c.dst_kind == trace::mem_pageable;
  const bool pinned = c.src_kind == trace::mem_pinned || c.dst_kind == trace::mem_pinned;
  return fmt::format("copy {}{}", dir, pageable ? " (pageable)" : pinned ? " (pinned)" : "");
}

} // namespace

void path_accumulator::add(const trace::device_trace& t) {
  state& s = *m;
  s.count += t.kernels.size() + t.memcpys.size() + t.memsets.size() + t.api_calls.size() + t.ranges.size();
  if (s.count > path_records::max_records) {
    s.r.over_limit = true;
    return;
  }
  using op = path_records::gpu_op;
  for (const auto& k : t.kernels)
    s.r.ops.push_back(op{k.start, k.end, k.stream, k.correlation, s.intern(k.name), path_records::kernel_op, false,
                         trace::is_collective_kernel(k.name)});
  for (const auto& c : t.memcpys) {
    const bool pageable = c.src_kind == trace::mem_pageable || c.dst_kind == trace::mem_pageable;
    s.r.ops.push_back(
        op{c.start, c.end, c.stream, c.correlation, s.intern(copy_name(c)), path_records::copy_op, pageable, false});
  }
  for (const auto& c : t.memsets)
    s.r.ops.push_back(
        op{c.start, c.end, c.stream, c.correlation, s.intern("memset"), path_records::memset_op, false, false});
  for (const auto& a : t.api_calls)
    s.r.calls.push_back({a.start, a.end, a.thread, a.correlation,
                         s.intern(std::string(trace::strip_api_version(a.name))), trace::classify_api(a.name)});
  for (const auto& g : t.ranges) s.r.ranges.push_back({g.start, g.end, g.thread, s.intern(g.name)});
}

path_records path_accumulator::finish() {
  state& s = *m;
  path_records out = std::move(s.r);
  out.names.reserve(s.names.names.size());
  for (const auto* n : s.names.names) out.names.push_back(*n);
  if (out.over_limit) {
    out.ops.clear();
    out.calls.clear();
    out.ranges.clear();
  }
  m = std::make_unique<state>();
  return out;
}

namespace path_walk {

// ---- one rank's records, indexed for the walk ----

rank_view::rank_view(const path_input& in) : input(in), r(*in.records) {
  const auto by_start = [this](std::size_t a, std::size_t b) { return r.ops[a].start < r.ops[b].start; };
  std::map<std::uint32_t, std::vector<std::size_t>> streams;
  ops_by_end.resize(r.ops.size());
  for (std::size_t i = 0; i < r.ops.size(); ++i) {
    ops_by_end[i] = i;
    streams[r.ops[i].stream].push_back(i);
  }
  std::sort(ops_by_end.begin(), ops_by_end.end(),
            [this](std::size_t a, std::size_t b) { return r.ops[a].end < r.ops[b].end; });
  previous_on_stream.assign(r.ops.size(), SIZE_MAX);
  for (auto& [stream, v] : streams) {
    std::sort(v.begin(), v.end(), by_start);
    for (std::size_t k = 1; k < v.size(); ++k) previous_on_stream[v[k]] = v[k - 1];
  }
  for (std::size_t i = 0; i < r.calls.size(); ++i)
    if (r.calls[i].correlation != 0) call_of.emplace(r.calls[i].correlation, i);
  // The host threads: those that launch, copy or wait (a library's polling threads are not
  // the program's host side). Their calls, by end, are the host's timeline.
  std::set<std::uint32_t> launching;
  for (const auto& o : r.ops)
    if (auto it = call_of.find(o.correlation); it != call_of.end()) launching.insert(r.calls[it->second].thread);
  for (const auto& c : r.calls)
    if (trace::blocks_host(c.kind)) launching.insert(c.thread);
  for (std::size_t i = 0; i < r.calls.size(); ++i)
    if (launching.count(r.calls[i].thread)) host_calls.push_back(i);
  std::sort(host_calls.begin(), host_calls.end(),
            [this](std::size_t a, std::size_t b) { return r.calls[a].end < r.calls[b].end; });
  for (const auto& g : r.ranges)
    if (launching.count(g.thread)) host_ranges.push_back(g);
  for (std::size_t i = 0; i < r.ops.size(); ++i) {
    const auto c = launch_call(i);
    ops_by_launch.emplace_back(c ? r.calls[*c].start : r.ops[i].start, i);
  }
  std::sort(ops_by_launch.begin(), ops_by_launch.end());
  for (const std::size_t i : host_calls) calls_by_start.emplace_back(r.calls[i].start, i);
  std::sort(calls_by_start.begin(), calls_by_start.end());
  std::sort(host_ranges.begin(), host_ranges.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
}

std::uint64_t rank_view::at(std::uint64_t t) const {
  const double v = static_cast<double>(t) + input.offset_ns;
  return v > 0 ? static_cast<std::uint64_t>(std::llround(v)) : 0;
}

std::uint64_t rank_view::local(std::uint64_t t) const {
  const double v = static_cast<double>(t) - input.offset_ns;
  return v > 0 ? static_cast<std::uint64_t>(std::llround(v)) : 0;
}

std::optional<std::size_t> rank_view::launch_call(std::size_t op) const {
  auto it = call_of.find(r.ops[op].correlation);
  if (r.ops[op].correlation == 0 || it == call_of.end()) return std::nullopt;
  return it->second;
}

// The latest op ending in (lo, hi] (own clock): of any stream, or of another than not_stream.
std::optional<std::size_t> rank_view::last_op_ending(std::uint64_t lo, std::uint64_t hi, std::uint32_t not_stream,
                                                     bool any_stream) const {
  auto it = std::upper_bound(ops_by_end.begin(), ops_by_end.end(), hi,
                             [this](std::uint64_t v, std::size_t i) { return v < r.ops[i].end; });
  while (it != ops_by_end.begin()) {
    --it;
    const auto& o = r.ops[*it];
    if (o.end <= lo) return std::nullopt;
    if (any_stream || o.stream != not_stream) return *it;
  }
  return std::nullopt;
}

// The host's latest call ending at or before t (and after lo).
std::optional<std::size_t> rank_view::host_call_before(std::uint64_t t, std::uint64_t lo) const {
  auto it = std::upper_bound(host_calls.begin(), host_calls.end(), t,
                             [this](std::uint64_t v, std::size_t i) { return v < r.calls[i].end; });
  if (it == host_calls.begin()) return std::nullopt;
  const std::size_t i = *std::prev(it);
  if (r.calls[i].end <= lo) return std::nullopt;
  return i;
}

} // namespace path_walk

namespace {

using path_walk::rank_view;

// The step range: the repeating NVTX range with the most time in it on the first rank's
// host threads (as the rank analysis finds its steps); empty when none repeats.
std::string step_range(const rank_view& v) {
  std::map<std::uint32_t, std::pair<std::size_t, double>> by_name;
  for (const auto& g : v.host_ranges) {
    auto& [count, total] = by_name[g.name];
    ++count;
    total += static_cast<double>(g.end - g.start);
  }
  std::string best;
  double best_total = 0;
  for (const auto& [name, ct] : by_name)
    if (ct.first >= 2 && ct.second > best_total) {
      best = v.name(name);
      best_total = ct.second;
    }
  return best;
}

// Each step's host interval on one rank (own clock): from its range's start to the next's,
// the last to its own end; or one step over everything.
std::vector<std::pair<std::uint64_t, std::uint64_t>> step_intervals(const rank_view& v, const std::string& range) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  if (range.empty()) {
    std::uint64_t a = UINT64_MAX, b = 0;
    for (const auto& o : v.r.ops) a = std::min(a, o.start), b = std::max(b, o.end);
    for (const auto& c : v.r.calls) a = std::min(a, c.start), b = std::max(b, c.end);
    if (a < b) out.emplace_back(a, b);
    return out;
  }
  for (const auto& g : v.host_ranges)
    if (v.name(g.name) == range) out.emplace_back(g.start, g.end);
  std::sort(out.begin(), out.end());
  for (std::size_t k = 0; k + 1 < out.size(); ++k) out[k].second = out[k + 1].first;
  return out;
}

// Where a rank's step k ends: the last end of the GPU work its host interval launched (by
// launch call; a record without its call by its own start) and of the calls made in it.
path_walk::step_end last_work(const rank_view& v, std::size_t rank, std::uint64_t a, std::uint64_t b) {
  path_walk::step_end e{rank, true, SIZE_MAX, 0};
  v.ops_launched(a, b, [&](std::size_t i) {
    if (v.at(v.r.ops[i].end) > e.time) e = {rank, true, i, v.at(v.r.ops[i].end)};
  });
  for (auto it = std::lower_bound(v.calls_by_start.begin(), v.calls_by_start.end(), std::make_pair(a, std::size_t{0}));
       it != v.calls_by_start.end() && it->first < b; ++it)
    if (v.at(v.r.calls[it->second].end) > e.time) e = {rank, false, it->second, v.at(v.r.calls[it->second].end)};
  return e;
}

using step_intervals_t = std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>>;

// A rank's own time in a step on the same work as a path item: the kernels or copies of that
// name it launched in the step's interval, its calls of that name, or its ranges of that
// name (host work: the whole range, an upper bound of the host work in it).
double same_work_ns(const rank_view& v, const path_item& it, std::pair<std::uint64_t, std::uint64_t> iv) {
  const auto id = std::find(v.r.names.begin(), v.r.names.end(), it.name);
  if (id == v.r.names.end()) return 0;
  const auto name = static_cast<std::uint32_t>(id - v.r.names.begin());
  double ns = 0;
  if (it.kind == segment_kind::host) {
    for (const auto& g : v.host_ranges)
      if (g.name == name && g.end > iv.first && g.start < iv.second)
        ns += static_cast<double>(std::min(g.end, iv.second) - std::max(g.start, iv.first));
    return ns;
  }
  if (it.kind == segment_kind::api) {
    for (const std::size_t i : v.host_calls)
      if (const auto& c = v.r.calls[i]; c.name == name && c.start >= iv.first && c.start < iv.second)
        ns += static_cast<double>(c.end - c.start);
    return ns;
  }
  v.ops_launched(iv.first, iv.second, [&](std::size_t i) {
    if (v.r.ops[i].name == name) ns += static_cast<double>(v.r.ops[i].end - v.r.ops[i].start);
  });
  return ns;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// What the culprit rank does that the others do not: of its path items, the one whose path
// time most exceeds the other ranks' time on the same work in the same step (median).
void culprit_work(critical_path& p, const std::vector<rank_view>& ranks, const step_intervals_t& iv) {
  path_culprit& c = *p.culprit;
  std::size_t tried = 0; // its 20 longest path items: each costs a pass over the steps
  for (const auto& it : p.items) {
    if (tried >= 20) break;
    if (it.rank != c.rank || it.kind == segment_kind::gap || it.kind == segment_kind::collective ||
        it.kind == segment_kind::sync || it.name == "(no range)")
      continue;
    ++tried;
    std::vector<double> excess;
    for (std::size_t k = p.steps.size() > 1 ? 1 : 0; k < p.steps.size(); ++k) {
      const step_path& s = p.steps[k];
      double mine = 0, others = 0;
      std::size_t n = 0;
      for (const auto& g : s.segments)
        if (g.rank == it.rank && g.kind == it.kind && g.name == it.name) mine += g.ns();
      for (std::size_t r = 0; r < ranks.size(); ++r)
        if (ranks[r].input.rank != c.rank && s.step < iv[r].size())
          others += same_work_ns(ranks[r], it, iv[r][s.step]), ++n;
      excess.push_back(mine - (n ? others / static_cast<double>(n) : 0));
    }
    const double e = median_of(excess);
    if (e > c.cost_ns) {
      c.cost_ns = e;
      c.kind = it.kind;
      c.name = it.name;
      c.pid = it.pid;
    }
  }
}

// One process: a synchronization on the path in most steps, the host blocked in it and the
// host work after it (the GPU idle) each at least 5% of the step.
void sync_culprit(critical_path& p, const rank_view& v) {
  std::vector<double> waits, host;
  std::map<std::string, std::size_t> calls;
  for (std::size_t k = p.steps.size() > 1 ? 1 : 0; k < p.steps.size(); ++k) {
    double h = 0, w = 0;
    for (const auto& g : p.steps[k].segments) {
      if (g.kind == segment_kind::host || g.kind == segment_kind::api) h += g.ns();
      if (g.kind != segment_kind::sync) continue;
      ++calls[g.name];
      for (const std::size_t i : v.host_calls)
        if (v.at(v.r.calls[i].end) == g.end)
          w = std::max(w, static_cast<double>(v.r.calls[i].end - v.r.calls[i].start));
    }
    waits.push_back(w);
    host.push_back(h);
  }
  const double h = median_of(host);
  // Named only where the host really waits (a short copy call that saw its copy end is no
  // synchronization worth naming): the wait, too, at least 5% of the step.
  if (calls.empty() || p.judged == 0 || h < 0.05 * p.median_step_ns || median_of(waits) < 0.05 * p.median_step_ns)
    return;
  const auto top = std::max_element(calls.begin(), calls.end(), [](auto& a, auto& b) { return a.second < b.second; });
  if (top->second * 2 < p.judged) return;
  path_culprit c;
  c.pid = v.input.pid;
  c.sync_call = top->first;
  c.sync_wait_ns = median_of(waits);
  c.cost_ns = h;
  c.kind = segment_kind::host;
  c.name = "(no range)";
  for (const auto& it : p.items)
    if (it.kind == segment_kind::host && it.name != "(no range)") {
      c.name = it.name; // the largest named host work on the path
      break;
    }
  p.culprit = c;
}

// The step's matched collectives: those whose last arrival falls inside it.
void step_collectives(step_path& s, const std::vector<rank_view>& ranks, const path_walk::collectives& coll) {
  for (const auto& tuple : coll.tuples) {
    std::size_t last = 0;
    std::uint64_t s_last = 0;
    for (std::size_t q = 0; q < tuple.size(); ++q)
      if (const std::uint64_t t = ranks[q].at(ranks[q].r.ops[tuple[q]].start); t >= s_last) s_last = t, last = q;
    if (s_last <= s.start || s_last > s.end) continue;
    path_jump j{ranks[last].name(ranks[last].r.ops[tuple[last]].name), ranks[last].input.rank, {}};
    for (std::size_t q = 0; q < tuple.size(); ++q)
      j.wait_ns.push_back(static_cast<double>(s_last - std::min(s_last, ranks[q].at(ranks[q].r.ops[tuple[q]].start))));
    s.jumps.push_back(std::move(j));
  }
}

// The other ranks' own pace: the median over them of their median step range on the host.
double others_host_step(const std::vector<rank_view>& ranks, const std::string& range, int culprit) {
  std::vector<double> per_rank;
  for (const auto& v : ranks) {
    if (v.input.rank == culprit || range.empty()) continue;
    std::vector<double> d;
    for (const auto& g : v.host_ranges)
      if (v.name(g.name) == range) d.push_back(static_cast<double>(g.end - g.start));
    if (!d.empty()) per_rank.push_back(median_of(std::move(d)));
  }
  return median_of(std::move(per_rank));
}

} // namespace

void summarize_path(critical_path& p); // critical_path_findings.cpp

critical_path find_critical_path(const std::vector<path_input>& inputs) {
  critical_path p;
  std::vector<rank_view> ranks;
  for (const auto& in : inputs) {
    if (!in.records || in.records->ops.empty()) continue;
    ranks.emplace_back(in);
  }
  if (ranks.empty()) return p;
  for (const auto& v : ranks) p.ranks.push_back(v.input.rank);
  const std::string range = step_range(ranks.front());
  p.step_method = range.empty() ? "program" : "nvtx:" + range;
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> intervals;
  std::size_t steps = SIZE_MAX;
  for (const auto& v : ranks) {
    intervals.push_back(step_intervals(v, range));
    steps = std::min(steps, intervals.back().size());
  }
  const path_walk::collectives coll = path_walk::match_collectives(ranks);
  p.unmatched_collectives = coll.unmatched;
  p.notes = coll.notes;
  std::uint64_t lo = UINT64_MAX;
  for (std::size_t r = 0; r < ranks.size(); ++r)
    if (steps > 0) lo = std::min(lo, ranks[r].at(intervals[r][0].first));
  for (std::size_t k = 0; k < steps; ++k) {
    path_walk::step_end end;
    for (std::size_t r = 0; r < ranks.size(); ++r)
      if (auto e = last_work(ranks[r], r, intervals[r][k].first, intervals[r][k].second);
          e.index != SIZE_MAX && e.time > end.time)
        end = e;
    if (end.time <= lo) continue; // nothing of its own ends after the previous step
    step_path s = path_walk::walk_step(ranks, coll, lo, end);
    s.step = k;
    step_collectives(s, ranks, coll);
    lo = end.time;
    p.steps.push_back(std::move(s));
  }
  summarize_path(p);
  if (p.culprit) {
    culprit_work(p, ranks, intervals);
    p.culprit->others_host_step_ns = others_host_step(ranks, range, p.culprit->rank);
  } else if (ranks.size() == 1)
    sync_culprit(p, ranks.front());
  // A rank is named for work of its own: its excess over the others' same work must reach
  // 5% of the step (and 100 us); a rank that is only slower at the same work is not.
  if (p.culprit && p.culprit->rank >= 0 && p.culprit->cost_ns < std::max(0.05 * p.median_step_ns, 100e3)) {
    p.notes.push_back(fmt::format("the other ranks wait {} per step for rank {}, but no work of its own explains it "
                                  "(its largest excess over the others' same work is {}): no rank is named",
                                  format::duration(p.culprit->others_wait_ns), p.culprit->rank,
                                  format::duration(std::max(0.0, p.culprit->cost_ns))));
    p.culprit.reset();
  }
  if (p.culprit && p.culprit->cost_ns <= 0) p.culprit.reset();
  return p;
}

} // namespace speedlab::analysis
