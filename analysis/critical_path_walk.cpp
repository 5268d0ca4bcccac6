// The backward walk of one step (critical_path.hpp says what each node waits for) and the
// collectives matched across ranks.
#include "analysis/critical_path_walk.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace speedlab::analysis::path_walk {
namespace {

constexpr std::uint64_t event_wait_ns = 50'000; // an op of another stream ending this close before: an event wait
constexpr std::uint64_t arrival_ns = 20'000;    // later arrivals at a collective than this are waited for
constexpr double ends_agree_ns = 300'000;       // matched collective kernels end within this of each other
constexpr std::uint64_t blocked_ns = 200'000;   // a call this long blocked (a full launch queue, a staging copy)

enum class node_kind { op, call, host, done };
struct node {
  node_kind kind = node_kind::done;
  std::size_t rank = 0, index = 0;
  std::uint32_t thread = 0;
  std::uint64_t t = 0; // the path is known from here on (global clock)
};

struct walker {
  const std::vector<rank_view>& ranks;
  const collectives& coll;
  std::uint64_t lo;
  step_path& out;
  std::vector<path_segment> rev; // latest first

  void emit(std::size_t rank, segment_kind kind, std::string where, const std::string& name, bool pageable,
            std::uint64_t a, std::uint64_t b) {
    a = std::max(a, lo);
    if (b <= a) return;
    path_segment s;
    s.rank = ranks[rank].input.rank;
    s.pid = ranks[rank].input.pid;
    s.where = std::move(where);
    s.kind = kind;
    s.name = name;
    s.pageable = pageable;
    s.start = a;
    s.end = b;
    rev.push_back(std::move(s));
  }
  void emit_host(std::size_t rank, std::uint32_t thread, std::uint64_t a, std::uint64_t b);
  node pred_of_op(std::size_t rank, std::size_t i);
  node visit_op(const node& n);
  node visit_call(const node& n);
  node visit_host(const node& n);
};

segment_kind kind_of(const path_records::gpu_op& o) {
  return o.kind == path_records::copy_op     ? segment_kind::copy
         : o.kind == path_records::memset_op ? segment_kind::memset
                                             : segment_kind::kernel;
}

// Host work between two calls, split where the innermost open NVTX range changes.
void walker::emit_host(std::size_t rank, std::uint32_t thread, std::uint64_t a, std::uint64_t b) {
  a = std::max(a, lo);
  if (b <= a) return;
  const rank_view& v = ranks[rank];
  std::vector<const path_records::range*> open;
  std::vector<std::uint64_t> cuts{a, b};
  // The ranges starting before b, latest first; the 256 latest are enough to hold the ones
  // open in a gap between two calls (nesting is shallow), and keep a long trace's walk linear.
  auto last = std::lower_bound(v.host_ranges.begin(), v.host_ranges.end(), v.local(b),
                               [](const path_records::range& g, std::uint64_t t) { return g.start < t; });
  for (std::size_t seen = 0; last != v.host_ranges.begin() && seen < 256; ++seen) {
    const auto& g = *--last;
    const std::uint64_t s = v.at(g.start), e = v.at(g.end);
    if (e <= a) continue;
    open.push_back(&g);
    if (s > a) cuts.push_back(s);
    if (e < b) cuts.push_back(e);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  const std::string where = fmt::format("thread {}", thread);
  for (std::size_t k = cuts.size() - 1; k > 0; --k) { // latest first, as the walk emits
    const std::uint64_t x = cuts[k - 1], y = cuts[k];
    const path_records::range* inner = nullptr;
    for (const auto* g : open)
      if (v.at(g->start) <= x && v.at(g->end) >= y && (!inner || g->start > inner->start)) inner = g;
    emit(rank, segment_kind::host, where, inner ? v.name(inner->name) : std::string("(no range)"), false, x, y);
  }
}

// What op i waited for: its stream's previous op, its launch call, or another stream's op.
node walker::pred_of_op(std::size_t rank, std::size_t i) {
  const rank_view& v = ranks[rank];
  const auto& o = v.r.ops[i];
  const std::uint64_t s = v.at(o.start);
  node best{node_kind::host, rank, 0, 0, s};
  std::uint64_t ready = 0;
  const char* why = "GPU idle";
  if (const std::size_t p = v.previous_on_stream[i]; p != SIZE_MAX) {
    ready = std::min(v.at(v.r.ops[p].end), s);
    best = {node_kind::op, rank, p, 0, ready};
  }
  if (const auto c = v.launch_call(i)) {
    const std::uint64_t t = std::min(v.at(v.r.calls[*c].end), s);
    if (t >= ready || best.kind != node_kind::op) {
      ready = t;
      best = {node_kind::call, rank, *c, v.r.calls[*c].thread, t};
      why = "GPU waits for the launch";
    }
  }
  const std::uint64_t own = o.start > event_wait_ns ? o.start - event_wait_ns : 0;
  if (const auto x = v.last_op_ending(own, o.start, o.stream, false); x && v.at(v.r.ops[*x].end) > ready) {
    ready = v.at(v.r.ops[*x].end);
    best = {node_kind::op, rank, *x, 0, ready};
    why = "GPU idle";
  }
  if (best.kind == node_kind::host && best.t == s && ready == 0) return best; // nothing known: the host
  emit(rank, segment_kind::gap, fmt::format("stream {}", o.stream), why, false, ready, s);
  return best;
}

node walker::visit_op(const node& n) {
  const rank_view& v = ranks[n.rank];
  const auto& o = v.r.ops[n.index];
  const std::string where = fmt::format("stream {}", o.stream);
  if (o.collective) {
    auto it = coll.tuple_of[n.rank].find(n.index);
    if (it != coll.tuple_of[n.rank].end()) {
      const auto& tuple = coll.tuples[it->second];
      std::size_t last = n.rank;
      for (std::size_t q = 0; q < tuple.size(); ++q)
        if (ranks[q].at(ranks[q].r.ops[tuple[q]].start) > ranks[last].at(ranks[last].r.ops[tuple[last]].start))
          last = q;
      const std::uint64_t s_last = ranks[last].at(ranks[last].r.ops[tuple[last]].start);
      if (last != n.rank && s_last > v.at(o.start) + arrival_ns && s_last < n.t) {
        emit(n.rank, segment_kind::collective, where, v.name(o.name), false, s_last, n.t);
        return pred_of_op(last, tuple[last]);
      }
    }
  }
  emit(n.rank, kind_of(o), where, v.name(o.name), o.pageable, v.at(o.start), n.t);
  return pred_of_op(n.rank, n.index);
}

node walker::visit_call(const node& n) {
  const rank_view& v = ranks[n.rank];
  const auto& c = v.r.calls[n.index];
  const std::uint64_t cs = v.at(c.start);
  const bool may_block = trace::blocks_host(c.kind) || c.kind == trace::api_kind::copy_async ||
                         c.kind == trace::api_kind::memset || (c.end > c.start && c.end - c.start > blocked_ns);
  if (may_block)
    if (const auto op = v.last_op_ending(c.start, v.local(n.t), 0, true)) {
      const std::uint64_t e = v.at(v.r.ops[*op].end);
      emit(n.rank, segment_kind::sync, fmt::format("thread {}", c.thread), v.name(c.name), false, e, n.t);
      return {node_kind::op, n.rank, *op, 0, e};
    }
  emit(n.rank, segment_kind::api, fmt::format("thread {}", c.thread), v.name(c.name), false, cs, n.t);
  return {node_kind::host, n.rank, 0, c.thread, cs};
}

node walker::visit_host(const node& n) {
  const rank_view& v = ranks[n.rank];
  const std::uint64_t before = n.t > 0 ? v.local(n.t) - 1 : 0; // strictly earlier: a call ending at t is the one left
  const auto i = v.host_call_before(before, v.local(lo));
  if (!i) {
    emit_host(n.rank, n.thread, lo, n.t);
    return {node_kind::done, n.rank, 0, 0, lo};
  }
  const std::uint64_t e = v.at(v.r.calls[*i].end);
  emit_host(n.rank, n.thread, e, n.t);
  return {node_kind::call, n.rank, *i, v.r.calls[*i].thread, e};
}

} // namespace

step_path walk_step(const std::vector<rank_view>& ranks, const collectives& c, std::uint64_t lo, const step_end& end) {
  step_path out;
  out.start = lo;
  out.end = end.time;
  walker w{ranks, c, lo, out, {}};
  node n{end.is_op ? node_kind::op : node_kind::call, end.rank, end.index, 0, end.time};
  if (!end.is_op) n.thread = ranks[end.rank].r.calls[end.index].thread;
  for (std::size_t guard = 0; n.kind != node_kind::done && n.t > lo && guard < 1'000'000; ++guard) {
    const std::uint64_t before = n.t;
    switch (n.kind) {
    case node_kind::op:
      n = w.visit_op(n);
      break;
    case node_kind::call:
      n = w.visit_call(n);
      break;
    case node_kind::host:
      n = w.visit_host(n);
      break;
    case node_kind::done:
      break;
    }
    if (n.t > before) n.t = before; // never forward in time
  }
  if (n.t > lo)
    w.emit(n.kind == node_kind::done ? 0 : n.rank, segment_kind::gap, "", "(nothing recorded)", false, lo, n.t);
  out.segments.assign(w.rev.rbegin(), w.rev.rend());
  return out;
}

collectives match_collectives(const std::vector<rank_view>& ranks) {
  collectives out;
  out.tuple_of.resize(ranks.size());
  if (ranks.size() < 2) return out;
  // Per rank and kernel name, the collectives in start order.
  std::vector<std::map<std::uint32_t, std::vector<std::size_t>>> by_name(ranks.size());
  std::vector<std::map<std::string, std::vector<std::size_t>>> named(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    for (std::size_t i = 0; i < ranks[r].r.ops.size(); ++i)
      if (ranks[r].r.ops[i].collective) named[r][ranks[r].name(ranks[r].r.ops[i].name)].push_back(i);
    for (auto& [name, v] : named[r])
      std::sort(v.begin(), v.end(),
                [&](std::size_t a, std::size_t b) { return ranks[r].r.ops[a].start < ranks[r].r.ops[b].start; });
  }
  for (const auto& [name, first] : named[0]) {
    bool same_count = true;
    for (std::size_t r = 1; r < ranks.size(); ++r) {
      auto it = named[r].find(name);
      same_count = same_count && it != named[r].end() && it->second.size() == first.size();
    }
    if (!same_count) {
      out.notes.push_back(
          fmt::format("{}: the ranks ran it a different number of times; the path does not cross ranks there", name));
      out.unmatched += first.size();
      continue;
    }
    for (std::size_t k = 0; k < first.size(); ++k) {
      std::vector<std::size_t> tuple(ranks.size());
      double lo_end = 1e300, hi_end = 0;
      for (std::size_t r = 0; r < ranks.size(); ++r) {
        tuple[r] = named[r].at(name)[k];
        const double e = static_cast<double>(ranks[r].at(ranks[r].r.ops[tuple[r]].end));
        lo_end = std::min(lo_end, e);
        hi_end = std::max(hi_end, e);
      }
      if (hi_end - lo_end > ends_agree_ns) {
        ++out.unmatched;
        continue;
      }
      for (std::size_t r = 0; r < ranks.size(); ++r) out.tuple_of[r][tuple[r]] = out.tuples.size();
      out.tuples.push_back(std::move(tuple));
    }
  }
  return out;
}

} // namespace speedlab::analysis::path_walk
