#include "analysis/rank_analysis.hpp"
#include "analysis/rank_accumulator.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "analysis/intervals.hpp"
#include "analysis/name_ids.hpp"
#include "analysis/rules.hpp"
#include "analysis/text.hpp"
#include "analysis/time_split.hpp"
#include "model/cuda_api.hpp"
#include "model/profile_options.hpp"
#include "model/statistics.hpp"

namespace speedlab::analysis {

std::string rank_label(const rank_summary& r) {
  return r.id.rank ? fmt::format("rank {}", *r.id.rank) : fmt::format("pid {}", r.pid);
}

namespace {

using intervals::interval;
using intervals::intersection;
using intervals::measure;
using intervals::merged;

std::optional<int> tag_int(const profile::process_info& p, const char* key) {
  auto it = p.tags.find(key);
  if (it == p.tags.end() || it->second.empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    const int v = std::stoi(it->second, &used);
    if (used != it->second.size() || v < 0) return std::nullopt;
    return v;
  } catch (...) {
    return std::nullopt;
  }
}

// A rank's records as the steps need them: 24 bytes per kernel, copy, memset or NVTX range,
// 16 per launch call; names once (a stream's million records are not kept whole).
struct compact_kernel {
  std::uint64_t start, end;
  std::uint32_t correlation, name;
};
struct compact_op { // a copy or memset: compute time
  std::uint64_t start, end;
  std::uint32_t correlation;
};
struct compact_range {
  std::uint64_t start, end;
  std::uint32_t name;
};

struct name_table : name_ids {
  recent_ids recent;
  std::uint32_t intern(const std::string& s) { return name_ids::intern(s, recent); }
  // Ids in the order of their names (as a std::map keyed by name would visit them).
  std::vector<std::uint32_t> by_name() const {
    std::vector<std::uint32_t> order(names.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [this](auto a, auto b) { return *names[a] < *names[b]; });
    return order;
  }
};

} // namespace

struct rank_accumulator::state {
  name_table kernel_names, range_names;
  std::vector<char> communication; // by kernel name id
  std::vector<compact_kernel> kernels;
  std::vector<compact_op> ops;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> calls; // correlation, start of the call
  std::vector<compact_range> ranges;
  std::map<std::uint32_t, std::size_t> kernels_on_device;
  bool comm(const compact_kernel& k) const { return communication[k.name] != 0; }
};

namespace {

using rank_state = rank_accumulator::state;

// Step starts: the program's own repeating NVTX range with the most time in it, else the
// kernel launched once per step (the most common launch count among kernels, earliest first).
std::pair<std::string, std::vector<std::uint64_t>> step_starts(const rank_state& st) {
  std::vector<std::pair<std::size_t, double>> ranges(st.range_names.names.size()); // by name id: count, total
  for (const auto& r : st.ranges) {
    ++ranges[r.name].first;
    ranges[r.name].second += r.end > r.start ? static_cast<double>(r.end - r.start) : 0;
  }
  std::optional<std::uint32_t> best;
  double best_total = 0;
  for (const auto id : st.range_names.by_name())
    if (ranges[id].first >= 2 && ranges[id].second > best_total) {
      best = id;
      best_total = ranges[id].second;
    }
  std::vector<std::uint64_t> starts;
  if (best) {
    for (const auto& r : st.ranges)
      if (r.name == *best) starts.push_back(r.start);
    std::sort(starts.begin(), starts.end());
    return {"nvtx:" + *st.range_names.names[*best], starts};
  }
  std::vector<std::pair<std::size_t, std::uint64_t>> kernels(st.kernel_names.names.size(), {0, UINT64_MAX}); // count, first start
  for (const auto& k : st.kernels) {
    if (st.comm(k)) continue;
    ++kernels[k.name].first;
    kernels[k.name].second = std::min(kernels[k.name].second, k.start);
  }
  std::map<std::size_t, std::size_t> how_many_with_count;
  for (const auto& cf : kernels)
    if (cf.first >= 2) ++how_many_with_count[cf.first];
  if (how_many_with_count.empty()) return {};
  const std::size_t steps = std::max_element(how_many_with_count.begin(), how_many_with_count.end(), [](auto& a, auto& b) {
                              return a.second < b.second || (a.second == b.second && a.first > b.first);
                            })->first;
  std::uint32_t marker = 0;
  std::uint64_t first = UINT64_MAX;
  for (const auto id : st.kernel_names.by_name())
    if (kernels[id].first == steps && kernels[id].second < first) {
      marker = id;
      first = kernels[id].second;
    }
  for (const auto& k : st.kernels)
    if (k.name == marker) starts.push_back(k.start);
  std::sort(starts.begin(), starts.end());
  return {"kernel:" + *st.kernel_names.names[marker], starts};
}

void shift(rank_summary& r, double offset) {
  auto move = [offset](std::uint64_t& t) {
    const double v = static_cast<double>(t) + offset;
    t = v > 0 ? static_cast<std::uint64_t>(std::llround(v)) : 0;
  };
  move(r.window_start);
  move(r.window_end);
  for (auto& s : r.steps) {
    move(s.start);
    move(s.end);
  }
  for (auto& e : r.comm_ends) move(e);
}

double median(std::vector<double> v) { return speedlab::stats::quantile(std::move(v), 0.5); }

std::vector<host_clock> align_clocks(std::vector<rank_summary>& ranks, std::vector<std::string>& notes) {
  std::vector<host_clock> clocks;
  if (ranks.empty()) return clocks;
  const rank_summary& ref = ranks.front();
  std::map<std::string, std::size_t> representative; // host -> index of its lowest rank
  for (std::size_t i = 0; i < ranks.size(); ++i) representative.try_emplace(ranks[i].host, i);
  for (const auto& [host, index] : representative) {
    host_clock c;
    c.host = host;
    if (host == ref.host) {
      c.method = index == 0 ? "reference" : "same host";
      clocks.push_back(c);
      continue;
    }
    // Every rank leaves a collective at nearly the same moment: the k-th collective's end
    // on this host against the reference rank's gives the offset between the clocks.
    const rank_summary& r = ranks[index];
    const std::size_t n = std::min(ref.comm_ends.size(), r.comm_ends.size());
    std::vector<double> d;
    d.reserve(n);
    for (std::size_t k = 0; k < n; ++k)
      d.push_back(static_cast<double>(ref.comm_ends[k]) - static_cast<double>(r.comm_ends[k]));
    if (!d.empty()) {
      c.offset_ns = median(std::move(d));
      c.matched = n;
      c.method = "collective ends";
    } else if (ref.realtime_minus_steady && r.realtime_minus_steady) {
      // No collective kernels (host-side collectives): the wall clocks the streams noted at
      // their start, as good as the hosts' time synchronization (NTP, PTP).
      c.offset_ns = static_cast<double>(*r.realtime_minus_steady - *ref.realtime_minus_steady);
      c.method = "wall clock";
      notes.push_back(fmt::format("host {}: no collective kernels to align its clock with {}'s; aligned by the wall "
                                  "clocks at the streams' start (as exact as the hosts' clock synchronization)",
                                  host, ref.host));
    } else {
      c.method = "none";
      notes.push_back(fmt::format("host {}: no collectives to align its clock with {}'s; its times are shown as recorded",
                                  host, ref.host));
    }
    clocks.push_back(c);
  }
  for (auto& r : ranks)
    for (const auto& c : clocks)
      if (c.host == r.host && c.offset_ns != 0) shift(r, c.offset_ns);
  return clocks;
}

// Waiting. With collective kernels (NCCL), each lasts as long as the transfer plus the wait
// for the last arrival, and the last to arrive waits least: a rank's wait in a step is its
// communication time above the step's shortest. Without them (host-side collectives: gloo,
// MPI on host buffers), the wait is on the host and the GPU idles meanwhile: a rank's wait is
// its step time not spent computing, above the step's least.
void find_waits(rank_analysis& out) {
  const std::size_t n = out.ranks.size();
  bool kernels_everywhere = true;
  for (const auto& r : out.ranks) {
    if (!compared(r, out.steps)) continue;
    double comm = 0;
    for (std::size_t k = 0; k < out.steps; ++k) comm += r.steps[k].comm_ns;
    kernels_everywhere = kernels_everywhere && comm > 0;
  }
  out.wait_method = kernels_everywhere ? "collective kernels" : "gpu idle";
  auto waiting_time = [&](const step_figures& s) {
    if (kernels_everywhere) return s.comm_ns;
    return std::max(0.0, static_cast<double>(s.end - s.start) - s.compute_ns);
  };
  out.wait_per_step_ns.assign(n, 0);
  out.wait_total_ns.assign(n, 0);
  // The least of any rank in each step, once (a thousand ranks: not ranks x ranks x steps).
  std::vector<double> least(out.steps, HUGE_VAL);
  for (const auto& r : out.ranks)
    if (compared(r, out.steps))
      for (std::size_t k = 0; k < out.steps; ++k) least[k] = std::min(least[k], waiting_time(r.steps[k]));
  for (std::size_t i = 0; i < n; ++i) {
    if (!compared(out.ranks[i], out.steps)) continue;
    std::vector<double> w;
    w.reserve(out.steps);
    for (std::size_t k = 0; k < out.steps; ++k) {
      w.push_back(waiting_time(out.ranks[i].steps[k]) - least[k]);
      out.wait_total_ns[i] += w.back();
    }
    out.wait_per_step_ns[i] = median(std::move(w));
  }
}

void find_straggler(rank_analysis& out) {
  const std::size_t n = out.ranks.size();
  if (n < 2 || out.steps == 0) return;
  std::vector<double> compute(n), step_time(n);
  std::vector<std::size_t> in; // the ranks compared
  for (std::size_t i = 0; i < n; ++i) {
    if (!compared(out.ranks[i], out.steps)) continue;
    in.push_back(i);
    std::vector<double> c, s;
    for (std::size_t k = 0; k < out.steps; ++k) {
      c.push_back(out.ranks[i].steps[k].compute_ns);
      s.push_back(static_cast<double>(out.ranks[i].steps[k].end - out.ranks[i].steps[k].start));
    }
    compute[i] = median(std::move(c));
    step_time[i] = median(std::move(s));
  }
  out.compute_per_step_ns = compute;
  out.step_ns = step_time;
  find_waits(out);
  if (in.size() < 2) return;
  const std::size_t slowest =
      *std::max_element(in.begin(), in.end(), [&](std::size_t a, std::size_t b) { return compute[a] < compute[b]; });
  std::vector<double> others;
  for (std::size_t i : in)
    if (i != slowest) others.push_back(compute[i]);
  const double typical = median(others);
  double mean = 0;
  for (std::size_t i : in) mean += compute[i] / static_cast<double>(in.size());
  out.imbalance = mean > 0 ? compute[slowest] / mean : 1;
  const double excess = compute[slowest] - typical;
  // Clear only when the slowest rank's extra compute is more than noise: 5% of a step's
  // compute and 10 us.
  if (excess <= 0.05 * typical || excess < 10e3) return;
  const rank_summary& s = out.ranks[slowest];
  out.straggler = s.id.rank ? *s.id.rank : static_cast<int>(slowest);
  out.straggler_index = slowest;
  out.straggler_excess_ns = excess;
}

// The job rules of the one registry (rules_ranks.cpp), on the job as a whole, then on each
// rank in order: the job is a context of its own, with no point (rule_context::scope).
void rank_rule_findings(rank_analysis& out, const std::set<std::string>& disabled) {
  static const device_model no_device{};
  analysis_options options;
  options.disabled_rules = disabled;
  const rule_context whole{.device = no_device, .options = options, .subject = "the ranks", .ranks = &out};
  std::vector<finding> found;
  run_rules(whole, found, out.notes);
  for (const auto& r : out.ranks) {
    rule_context one = whole;
    one.rank = &r;
    run_rules(one, found, out.notes);
  }
  out.findings = std::move(found);
}

// Steps found by a per-step kernel are on the GPU's clock: a step's compute and
// communication are the GPU's busy time inside it; its kernels, those that start in it.
// st.kernels is sorted by start (finish sorts it).
void measure_steps(const rank_state& st, const std::vector<interval>& compute, const std::vector<interval>& comm,
                   std::vector<step_figures>& steps) {
  std::size_t next_kernel = 0;
  for (auto& s : steps) {
    s.compute_ns = measure(compute, s.start, s.end);
    s.comm_ns = measure(comm, s.start, s.end);
    while (next_kernel < st.kernels.size() && st.kernels[next_kernel].start < s.start) ++next_kernel;
    for (; next_kernel < st.kernels.size() && st.kernels[next_kernel].start < s.end; ++next_kernel) {
      s.kernel_ns += static_cast<double>(st.kernels[next_kernel].end - st.kernels[next_kernel].start);
      ++s.kernels;
    }
  }
}

// The start of the call that launched a record, by its correlation id (the earliest call of
// an id). CUPTI numbers a process's calls from 1 up, so the ids are dense: a table indexed by
// id answers in one load; sparse ids (or none) go through the sorted calls.
class call_index {
public:
  explicit call_index(std::vector<std::pair<std::uint32_t, std::uint64_t>>& calls) : m_calls(calls) {
    if (calls.empty()) return;
    auto [lo, hi] = std::minmax_element(calls.begin(), calls.end());
    const std::uint64_t span = std::uint64_t{hi->first} - lo->first + 1;
    if (span <= 4 * calls.size() + 1024) {
      m_first = lo->first;
      m_table.assign(span, UINT64_MAX);
      for (const auto& [correlation, start] : calls) {
        auto& slot = m_table[correlation - m_first];
        slot = std::min(slot, start);
      }
    } else {
      std::sort(calls.begin(), calls.end()); // the earliest call first for a correlation id
    }
  }
  std::optional<std::uint64_t> start(std::uint32_t correlation) const {
    if (correlation == 0) return std::nullopt;
    if (!m_table.empty()) {
      if (correlation < m_first || correlation - m_first >= m_table.size()) return std::nullopt;
      const std::uint64_t v = m_table[correlation - m_first];
      return v == UINT64_MAX ? std::nullopt : std::optional<std::uint64_t>(v);
    }
    auto it = std::lower_bound(m_calls.begin(), m_calls.end(), std::make_pair(correlation, std::uint64_t{0}));
    if (it != m_calls.end() && it->first == correlation) return it->second;
    return std::nullopt;
  }

private:
  const std::vector<std::pair<std::uint32_t, std::uint64_t>>& m_calls;
  std::uint32_t m_first = 0;
  std::vector<std::uint64_t> m_table; // by correlation - m_first; UINT64_MAX: no call
};

// Where the launch call of a record missing from a sampled trace started. Placing such a
// record by its own start broke the NCCL fixture (tests/fixtures/ranks/nccl, 20 ms windows
// every 200 ms: the straggler was lost or the wrong rank named, since each rank's host runs
// steps ahead of its GPU), and the steps lying wholly inside a window are too few (a step
// of that job lasts as long as a window). But every other call is still recorded, and CUPTI
// hands out correlation ids in call order (in the fixtures, sorted by id, the calls' starts
// never go back more than 2.2 us): the missing call started between the recorded calls with
// the nearest ids below and above its own; its start is put between theirs by its id.
class neighbour_calls {
public:
  explicit neighbour_calls(const std::vector<std::pair<std::uint32_t, std::uint64_t>>& calls) : m_calls(calls) {
    std::sort(m_calls.begin(), m_calls.end());
  }
  std::optional<std::uint64_t> start(std::uint32_t correlation) const {
    if (correlation == 0 || m_calls.empty()) return std::nullopt;
    const auto next = std::lower_bound(m_calls.begin(), m_calls.end(), std::make_pair(correlation, std::uint64_t{0}));
    if (next == m_calls.begin()) return next->second;
    const auto& before = *std::prev(next);
    if (next == m_calls.end() || next->second <= before.second) return before.second;
    const double f = static_cast<double>(correlation - before.first) / static_cast<double>(next->first - before.first);
    return before.second + static_cast<std::uint64_t>(f * static_cast<double>(next->second - before.second));
  }

private:
  std::vector<std::pair<std::uint32_t, std::uint64_t>> m_calls; // correlation, start; sorted
};

// An interval of a step (projected steps): ordered by step, then start.
using step_interval = std::pair<std::size_t, interval>;

// `a` and `b`, each sorted here unless it is already, merged into `a` in order.
void merge_sorted_runs(std::vector<step_interval>& a, std::vector<step_interval>&& b) {
  if (!std::is_sorted(a.begin(), a.end())) std::sort(a.begin(), a.end());
  if (b.empty()) return;
  if (!std::is_sorted(b.begin(), b.end())) std::sort(b.begin(), b.end());
  const auto mid = static_cast<std::ptrdiff_t>(a.size());
  a.insert(a.end(), b.begin(), b.end());
  std::inplace_merge(a.begin(), a.begin() + mid, a.end());
}

// Each step's union length of its intervals (sorted by step and start) into steps[i].*field.
void sum_by_step(const std::vector<step_interval>& v, std::vector<step_figures>& steps, double step_figures::*field) {
  std::vector<interval> run;
  for (std::size_t at = 0; at < v.size();) {
    std::size_t end = at;
    run.clear();
    while (end < v.size() && v[end].first == v[at].first) run.push_back(v[end++].second);
    steps[v[at].first].*field = intervals::union_length(run.begin(), run.end());
    at = end;
  }
}

// Steps found by the program's NVTX range are on the host's clock, and the GPU runs behind
// the host: a rank's NCCL collectives do not block it, so the kernel in which rank 0 waits
// for a slow rank runs during the host's next step or later. So a GPU record belongs to the
// step in which the call that launched it started (by correlation id), and a step's compute
// and communication are the GPU time of what it launched. A record whose call is not in the
// trace (driver API records off, and a library launching through the driver) goes by its own
// start.
// With launch calls sampled, a record without its call goes where the calls recorded around
// it say its call started (neighbour_calls), never after the record itself started.
// Returns how many collective kernels went by their own start.
std::size_t project_steps(rank_state& st, std::vector<step_figures>& steps, rank_summary& r) {
  if (steps.empty()) return 0;
  const call_index calls(st.calls);
  std::optional<neighbour_calls> around;
  if (r.launch_calls_sampled) around.emplace(st.calls);
  auto call_start = [&](std::uint32_t correlation, std::uint64_t own_start) -> std::optional<std::uint64_t> {
    if (auto known = calls.start(correlation)) return known;
    if (!around) return std::nullopt;
    const auto guess = around->start(correlation);
    if (guess) ++r.placed_by_neighbours;
    return guess ? std::optional<std::uint64_t>(std::min(*guess, own_start)) : std::nullopt;
  };
  std::size_t comm_by_start = 0;
  // The last step whose start is at or before `when`; records come nearly in time order, so
  // the previous answer (or the one after it) is tried before a search.
  std::size_t hint = 0;
  auto step_of = [&steps, &hint](std::uint64_t when) -> std::size_t {
    const auto holds = [&steps, when](std::size_t i) {
      return steps[i].start <= when && (i + 1 == steps.size() || when < steps[i + 1].start);
    };
    std::size_t i = hint;
    if (!holds(i)) {
      if (i + 1 < steps.size() && holds(i + 1)) {
        i = i + 1;
      } else {
        auto it = std::upper_bound(steps.begin(), steps.end(), when,
                                   [](std::uint64_t v, const step_figures& s) { return v < s.start; });
        if (it == steps.begin()) return SIZE_MAX;
        i = static_cast<std::size_t>(it - steps.begin()) - 1;
      }
    }
    hint = i;
    return when < steps[i].end || i + 1 == steps.size() ? i : SIZE_MAX;
  };
  // (step, interval) in flat lists rather than a list per step: a rank has thousands of
  // steps, and records come nearly in step order, so sorting is mostly a check.
  std::vector<step_interval> compute, ops, comm;
  compute.reserve(st.kernels.size());
  for (const auto& k : st.kernels) {
    const bool communication = st.comm(k);
    const auto call = call_start(k.correlation, k.start);
    if (communication && !call) ++comm_by_start;
    const std::size_t i = step_of(call.value_or(k.start));
    if (i == SIZE_MAX) continue;
    (communication ? comm : compute).push_back({i, {k.start, k.end}});
    steps[i].kernel_ns += static_cast<double>(k.end - k.start);
    ++steps[i].kernels;
  }
  for (const auto& m : st.ops)
    if (const std::size_t i = step_of(call_start(m.correlation, m.start).value_or(m.start)); i != SIZE_MAX)
      ops.push_back({i, {m.start, m.end}});
  merge_sorted_runs(compute, std::move(ops));
  sum_by_step(compute, steps, &step_figures::compute_ns);
  merge_sorted_runs(comm, {});
  sum_by_step(comm, steps, &step_figures::comm_ns);
  return comm_by_start;
}

// Who the rank is: pid, host, launcher variables, its GPU, its clock facts.
rank_summary rank_header(const profile::process_info& p, const std::map<std::uint32_t, std::size_t>& kernels_on_device) {
  rank_summary r;
  r.pid = p.pid;
  r.host = p.host;
  r.id = identify_rank(p);
  r.truncated = p.truncated;
  // Its GPU: the device its kernels ran on (an index among the devices it could see; the
  // stream's gpu tag, else the kernels' device), its UUID when the stream names it.
  auto tag = [&p](const char* key) {
    auto it = p.tags.find(key);
    return it == p.tags.end() ? std::string{} : it->second;
  };
  std::string index = tag("gpu");
  if (index.empty() && !kernels_on_device.empty())
    index = std::to_string(std::max_element(kernels_on_device.begin(), kernels_on_device.end(),
                                            [](auto& a, auto& b) { return a.second < b.second; })->first);
  if (!index.empty()) r.gpu = "cuda:" + index;
  if (const std::string uuid = tag("gpu_uuid"); !uuid.empty()) r.gpu += (r.gpu.empty() ? "" : " ") + uuid;
  if (const std::string visible = tag("CUDA_VISIBLE_DEVICES"); !visible.empty() && !r.gpu.empty())
    r.gpu += fmt::format(" (CUDA_VISIBLE_DEVICES={})", visible);
  if (auto it = p.tags.find("realtime_ns_at_start"); it != p.tags.end() && p.start_ns) {
    try {
      r.realtime_minus_steady = static_cast<std::int64_t>(std::stoull(it->second)) - static_cast<std::int64_t>(p.start_ns);
    } catch (...) {
    }
  }
  return r;
}

// The time split over the window: the process's when known, else from its trace.
time_split window_split(const trace::device_trace& t, const trace::repetition_window& window) {
  if (t.repetitions.size() == 1) {
    auto splits = compute_time_splits(t);
    return splits.empty() ? time_split{} : splits.front();
  }
  trace::device_trace one = t; // the split needs exactly this one window
  one.repetitions = {window};
  auto splits = compute_time_splits(one);
  return splits.empty() ? time_split{} : splits.front();
}

} // namespace

rank_identity identify_rank(const profile::process_info& p) {
  rank_identity id;
  for (const char* key : {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"})
    if (auto v = tag_int(p, key)) {
      id.rank = v;
      id.source = key;
      break;
    }
  for (const char* key : {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (auto v = tag_int(p, key)) {
      id.local_rank = v;
      break;
    }
  for (const char* key : {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"})
    if (auto v = tag_int(p, key)) {
      id.world_size = v;
      break;
    }
  return id;
}

bool is_communication_kernel(const std::string& name) { return trace::is_collective_kernel(name); }

rank_accumulator::rank_accumulator() : m(std::make_unique<state>()) {}
rank_accumulator::~rank_accumulator() = default;
rank_accumulator::rank_accumulator(rank_accumulator&&) noexcept = default;
rank_accumulator& rank_accumulator::operator=(rank_accumulator&&) noexcept = default;

void rank_accumulator::add(const trace::device_trace& t) {
  state& st = *m;
  for (const auto& k : t.kernels) {
    const std::uint32_t name = st.kernel_names.intern(k.name);
    if (st.communication.size() <= name) st.communication.push_back(is_communication_kernel(k.name) ? 1 : 0);
    st.kernels.push_back({k.start, k.end, k.correlation, name});
    ++st.kernels_on_device[k.device];
  }
  for (const auto& c : t.memcpys) st.ops.push_back({c.start, c.end, c.correlation});
  for (const auto& c : t.memsets) st.ops.push_back({c.start, c.end, c.correlation});
  for (const auto& a : t.api_calls)
    if (a.correlation != 0) st.calls.emplace_back(a.correlation, a.start);
  for (const auto& r : t.ranges) st.ranges.push_back({r.start, r.end, st.range_names.intern(r.name)});
}

namespace {

// The steady state: the steps, else the first kernel (`first_kernel`) to the window's end.
void set_steady_state(rank_summary& r, const std::vector<interval>& busy, std::uint64_t first_kernel) {
  if (!r.steps.empty()) {
    r.steady_start = r.steps.front().start;
    r.steady_end = r.steps.back().end;
  } else if (first_kernel != UINT64_MAX) {
    r.steady_start = first_kernel;
    r.steady_end = std::max(first_kernel, r.window_end);
  }
  if (r.steady_end <= r.steady_start) return;
  r.steady_idle_ns = std::max(0.0, static_cast<double>(r.steady_end - r.steady_start) -
                                       measure(busy, r.steady_start, r.steady_end));
}

} // namespace

rank_summary rank_accumulator::finish(const profile::process_profile& process, const time_split* known_split) {
  state& st = *m;
  const auto& p = process.process;
  rank_summary r = rank_header(p, st.kernels_on_device);
  const auto by_start = [](const auto& a, const auto& b) { return a.start < b.start; };
  if (!std::is_sorted(st.kernels.begin(), st.kernels.end(), by_start))
    std::stable_sort(st.kernels.begin(), st.kernels.end(), by_start);

  std::vector<interval> compute, comm;
  compute.reserve(st.kernels.size() + st.ops.size());
  std::uint64_t lo = UINT64_MAX, hi = 0;
  for (const auto& k : st.kernels) {
    ++r.kernels;
    lo = std::min(lo, k.start);
    hi = std::max(hi, k.end);
    if (st.comm(k)) {
      ++r.comm_kernels;
      comm.emplace_back(k.start, k.end);
      r.comm_ends.push_back(k.end);
    } else {
      compute.emplace_back(k.start, k.end);
    }
  }
  // The kernels are in start order; the copies and memsets (in order of their own, mostly)
  // are merged in rather than the whole set sorted again.
  const auto kernels_end = static_cast<std::ptrdiff_t>(compute.size());
  for (const auto& o : st.ops) compute.emplace_back(o.start, o.end);
  if (!std::is_sorted(compute.begin(), compute.begin() + kernels_end)) std::sort(compute.begin(), compute.begin() + kernels_end);
  if (!std::is_sorted(compute.begin() + kernels_end, compute.end())) std::sort(compute.begin() + kernels_end, compute.end());
  std::inplace_merge(compute.begin(), compute.begin() + kernels_end, compute.end());
  std::sort(r.comm_ends.begin(), r.comm_ends.end());
  if (!st.kernels.empty()) {
    const std::uint64_t origin = p.start_ns ? p.start_ns : lo;
    r.first_kernel_ns = lo > origin ? static_cast<double>(lo - origin) : 0.0;
  }

  const auto& t = process.trace;
  trace::repetition_window window;
  if (!t.repetitions.empty()) window = t.repetitions.front();
  else window = {p.start_ns, p.end_ns, 0, 0};
  if (window.end <= window.start) window = {lo == UINT64_MAX ? 0 : lo, hi, 0, 0};
  r.window_start = window.start;
  r.window_end = window.end;

  compute = merged(std::move(compute));
  comm = merged(std::move(comm));
  r.compute_ns = measure(compute, window.start, window.end);
  r.comm_ns = measure(comm, window.start, window.end);
  r.overlap_ns = intersection(compute, comm);
  std::vector<interval> busy;
  busy.reserve(compute.size() + comm.size());
  std::merge(compute.begin(), compute.end(), comm.begin(), comm.end(), std::back_inserter(busy));
  busy = merged(std::move(busy));
  r.idle_ns = std::max(0.0, static_cast<double>(window.end - window.start) - measure(busy, window.start, window.end));
  r.split = known_split ? *known_split : window_split(t, window);

  auto [method, starts] = step_starts(st);
  r.step_method = std::move(method);
  const std::uint64_t last = std::max(hi, starts.empty() ? 0 : starts.back());
  for (std::size_t i = 0; i < starts.size(); ++i) {
    step_figures s;
    s.start = starts[i];
    s.end = i + 1 < starts.size() ? starts[i + 1] : last;
    if (s.end > s.start) r.steps.push_back(s);
  }
  r.launch_calls_sampled = profile::launch_calls_sampled(process);
  if (r.step_method.rfind("nvtx:", 0) == 0)
    r.comm_placed_by_start = project_steps(st, r.steps, r);
  else measure_steps(st, compute, comm, r.steps);
  set_steady_state(r, busy, lo);
  m = std::make_unique<state>(); // what was accumulated is consumed
  return r;
}

rank_summary summarize_rank(const profile::process_profile& process, const time_split* known_split) {
  rank_accumulator acc;
  acc.add(process.trace);
  return acc.finish(process, known_split);
}

bool compared(const rank_summary& r, std::size_t steps) { return r.kernels > 0 && r.steps.size() >= steps; }

rank_analysis analyze_ranks(std::vector<rank_summary> ranks, const std::set<std::string>& disabled_rules) {
  rank_analysis out;
  std::stable_sort(ranks.begin(), ranks.end(), [](const rank_summary& a, const rank_summary& b) {
    if (a.id.rank.has_value() != b.id.rank.has_value()) return a.id.rank.has_value();
    return a.id.rank && b.id.rank ? *a.id.rank < *b.id.rank : a.pid < b.pid;
  });
  std::size_t unranked = 0;
  for (const auto& r : ranks) unranked += r.id.rank ? 0 : 1;
  if (unranked && unranked < ranks.size())
    out.notes.push_back(fmt::format("{} process(es) carry no rank variable (RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, "
                                    "SLURM_PROCID); they are listed by pid after the ranks",
                                    unranked));
  for (const auto& r : ranks) {
    if (r.truncated)
      out.notes.push_back(fmt::format("{}: its stream is truncated; its figures end at its last flush", rank_label(r)));
    if (r.comm_placed_by_start)
      out.notes.push_back(fmt::format(
          "{}: {} collective kernel(s) have no launch call in the trace (NCCL launches through the driver API, and "
          "its records were off: {}=0?), so they are put in steps by their own start; when the host runs ahead of "
          "the GPU, a step's communication and the wait are then not its own",
          rank_label(r), r.comm_placed_by_start, profile::variable_name(profile::option::driver_api)));
  }
  for (const auto& r : ranks)
    if (r.launch_calls_sampled)
      out.notes.push_back(fmt::format(
          "{}: launch calls recorded in sampled windows; {} GPU record(s) without a recorded call were put in steps by "
          "the calls recorded around them (by correlation id), so its per-step figures are estimates",
          rank_label(r), r.placed_by_neighbours));
  out.clocks = align_clocks(ranks, out.notes);
  out.ranks = std::move(ranks);

  std::size_t steps = SIZE_MAX;
  std::map<std::string, std::size_t> methods;
  for (const auto& r : out.ranks) {
    if (r.kernels == 0) continue;
    steps = std::min(steps, r.steps.size());
    ++methods[r.step_method];
  }
  out.steps = steps == SIZE_MAX ? 0 : steps;
  if (!methods.empty()) {
    out.step_method = std::max_element(methods.begin(), methods.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
    if (methods.size() > 1)
      out.notes.push_back("the ranks' steps were found by different markers; steps are compared by their order");
  }
  if (out.ranks.size() >= 2 && out.steps == 0)
    out.notes.push_back("no repeating NVTX range or per-step kernel found: no straggler analysis by step");
  for (const auto& r : out.ranks)
    if (out.steps > 0 && !compared(r, out.steps))
      out.notes.push_back(fmt::format("{}: no kernel of it in the trace; left out of the step comparison", rank_label(r)));
  find_straggler(out);
  rank_rule_findings(out, disabled_rules);
  return out;
}

} // namespace speedlab::analysis
