#include "reports/common/report_data.hpp"

#include <algorithm>
#include <set>

#include "model/natural_order.hpp"
#include "reports/common/text.hpp"

namespace speedlab::reports {

double wall_gbps(const point_result& p) {
  return p.wall.median > 0 && p.work.bytes() > 0 ? p.work.bytes() / p.wall.median : 0;
}
double wall_gflops(const point_result& p) {
  return p.wall.median > 0 && p.work.flops > 0 ? p.work.flops / p.wall.median : 0;
}
double wall_items_per_s(const point_result& p) {
  return p.wall.median > 0 && p.work.items > 0 ? p.work.items / p.wall.median * 1e9 : 0;
}

rate primary_rate(const point_result& p, const analysis::roofline_point* roof) {
  const bool compute_bound = roof && roof->bound == "compute";
  if (wall_gflops(p) > 0 && (compute_bound || wall_gbps(p) == 0)) return {wall_gflops(p), "GFLOP/s"};
  if (wall_gbps(p) > 0) return {wall_gbps(p), "GB/s"};
  if (wall_items_per_s(p) > 0) return {wall_items_per_s(p) / 1e6, "M items/s"};
  return {};
}

std::string fmt_rate(const rate& r) { return r.unit.empty() ? "—" : fmt_sig(r.value) + " " + r.unit; }

std::string size_label(const point_result& p) {
  const std::string sp = p.size_param();
  if (!sp.empty()) return sp + "=" + p.params.at(sp);
  const std::string key = p.params_key();
  return key.empty() ? "—" : key;
}

std::string status_label(const point_result& p) {
  std::string s = to_string(p.status);
  if (p.expected_invalid && p.status == point_status::invalid) s += " (expected)";
  return s;
}

std::vector<workload_view> group_workloads(const std::vector<point_result>& points) {
  std::vector<workload_view> out;
  std::map<std::string, std::size_t> index;
  for (const auto& p : points) {
    auto [it, inserted] = index.emplace(p.workload, out.size());
    if (inserted) out.push_back(workload_view{p.workload, {}, {}, {}, false});
    auto& w = out[it->second];
    if (std::find(w.variants.begin(), w.variants.end(), p.variant) == w.variants.end())
      w.variants.push_back(p.variant);
    const std::string key = p.params_key(true);
    auto sw = std::find_if(w.sweeps.begin(), w.sweeps.end(), [&](const sweep_view& s) { return s.params_key == key; });
    if (sw == w.sweeps.end()) sw = w.sweeps.insert(w.sweeps.end(), sweep_view{key, {}, {}});
    sw->points.push_back(&p);
    if (p.split_median) w.has_splits = true;
  }
  for (auto& w : out) {
    auto variant_rank = [&w](const point_result* p) {
      return std::find(w.variants.begin(), w.variants.end(), p->variant) - w.variants.begin();
    };
    for (auto& s : w.sweeps) {
      std::stable_sort(s.points.begin(), s.points.end(), [&](const point_result* a, const point_result* b) {
        if (variant_rank(a) != variant_rank(b)) return variant_rank(a) < variant_rank(b);
        if (a->size_value() != b->size_value()) return a->size_value() < b->size_value();
        return natural_less(a->params_key(), b->params_key());
      });
      std::vector<const point_result*> by_size = s.points;
      std::stable_sort(by_size.begin(), by_size.end(), [](const point_result* a, const point_result* b) {
        if (a->size_value() != b->size_value()) return a->size_value() < b->size_value();
        return natural_less(a->params_key(), b->params_key());
      });
      for (const auto* p : by_size) {
        const std::string label = size_label(*p);
        if (std::find(s.sizes.begin(), s.sizes.end(), label) == s.sizes.end()) s.sizes.push_back(label);
      }
      w.points.insert(w.points.end(), s.points.begin(), s.points.end());
    }
  }
  return out;
}

analysis_index::analysis_index(const analysis::analysis_result& a, const std::vector<point_result>& points) {
  for (const auto& p : points) m_points.emplace(p.id, &p);
  for (const auto& r : a.roofline) {
    auto it = m_roofline.find(r.point_id);
    if (it == m_roofline.end()) m_roofline.emplace(r.point_id, &r);
    else if (!it->second->kernel.empty() && r.kernel.empty()) it->second = &r;
  }
  for (const auto& s : a.speedups) {
    std::string id = s.point_id;
    if (id.empty()) // older analyses: match by workload, variant and parameters
      for (const auto& p : points)
        if (p.workload == s.workload && p.variant == s.variant && p.params_key() == s.params_key) id = p.id;
    if (!id.empty()) m_speedup_by_point.emplace(id, &s);
    if (!s.baseline.empty()) m_baseline.emplace(s.workload, s.baseline);
  }
}

const analysis::roofline_point* analysis_index::roofline(const point_result& p) const {
  auto it = m_roofline.find(p.id);
  return it == m_roofline.end() ? nullptr : it->second;
}

const analysis::speedup* analysis_index::speedup(const point_result& p) const {
  auto it = m_speedup_by_point.find(p.id);
  return it == m_speedup_by_point.end() ? nullptr : it->second;
}

const point_result* analysis_index::point(const std::string& id) const {
  auto it = m_points.find(id);
  return it == m_points.end() ? nullptr : it->second;
}

std::string analysis_index::baseline(const std::string& workload) const {
  auto it = m_baseline.find(workload);
  return it == m_baseline.end() ? std::string() : it->second;
}

status_counts count_statuses(const std::vector<point_result>& points) {
  status_counts c;
  for (const auto& p : points) {
    ++c.total;
    switch (p.status) {
    case point_status::ok: ++c.ok; break;
    case point_status::invalid:
      ++c.invalid;
      if (p.expected_invalid) ++c.expected_invalid;
      break;
    case point_status::failed: ++c.failed; break;
    case point_status::crashed: ++c.crashed; break;
    case point_status::timeout: ++c.timeout; break;
    case point_status::skipped: ++c.skipped; break;
    }
  }
  return c;
}

std::optional<trace::device_trace> load_trace_safely(
    const std::function<std::optional<trace::device_trace>(const point_result&)>& load, const point_result& p,
    std::string& error) {
  error.clear();
  if (!load) return std::nullopt;
  try {
    return load(p);
  } catch (const std::exception& e) {
    error = e.what();
  } catch (...) {
    error = "unknown error";
  }
  return std::nullopt;
}

trace_facts collect_trace_facts(const std::optional<trace::device_trace>& t) {
  trace_facts f;
  if (!t) return f;
  f.has_trace = true;
  f.has_gpu = t->has_gpu_activity();
  f.backend = t->backend;
  f.note = t->note;
  f.kernels = t->kernels.size();
  f.memcpys = t->memcpys.size();
  f.memsets = t->memsets.size();
  f.api_calls = t->api_calls.size();
  f.ranges = t->ranges.size();
  f.dropped_records = t->dropped_records;
  f.buffer_bytes = t->buffer_bytes;
  for (const auto& o : t->overheads)
    if (o.end > o.start) f.overhead_ns[o.kind.empty() ? "unspecified" : o.kind] += static_cast<double>(o.end - o.start);
  if (!t->repetitions.empty()) {
    std::uint64_t lo = t->repetitions.front().start, hi = t->repetitions.front().end;
    for (const auto& r : t->repetitions) {
      lo = std::min(lo, r.start);
      hi = std::max(hi, r.end);
    }
    f.traced_span_ns = static_cast<double>(hi - lo);
  }
  return f;
}

} // namespace speedlab::reports
