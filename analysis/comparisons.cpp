#include "analysis/comparisons.hpp"

#include <cmath>

#include "analysis/analysis_stats.hpp"
#include "analysis/text.hpp"

namespace speedlab::analysis {

std::string match_key(const point_result& p, bool without_size) {
  const std::string size = without_size ? p.size_param() : std::string();
  std::string key = p.workload;
  key += '|';
  for (const auto& [k, v] : p.params) {
    if (k == "threads" || (!size.empty() && k == size)) continue;
    key += k;
    key += '=';
    key += v;
    key += ',';
  }
  return key;
}

bool is_python(const point_result& p) { return p.language == "python" || p.variant.rfind("py-", 0) == 0; }

int serial_baseline_rank(const std::string& judged, bool python, const std::string& candidate) {
  if (!python) return candidate == "serial" ? 0 : 3;
  static const std::string parallel = "-parallel";
  if (judged.size() > parallel.size() && judged.ends_with(parallel) &&
      candidate == judged.substr(0, judged.size() - parallel.size()))
    return 0;
  if (candidate == "py-numpy") return 1;
  if (candidate == "py-loop") return 2;
  return 3;
}

namespace {
bool better_threads(const point_result& a, const point_result& b) {
  if (a.threads != b.threads) return a.threads > b.threads;
  if ((a.variant == "threads") != (b.variant == "threads")) return a.variant == "threads";
  return a.variant < b.variant;
}
} // namespace

baseline_index::baseline_index(const std::vector<point_result>& points) {
  for (const auto& p : points) {
    if (!p.valid() || !(p.wall.median > 0)) continue;
    auto& c = m_by_key[match_key(p)];
    const int lang = is_python(p) ? 1 : 0;
    if (p.kind == variant_kind::serial) c.serial[lang].push_back(&p);
    if (p.kind == variant_kind::threads && (!c.threads[lang] || better_threads(p, *c.threads[lang])))
      c.threads[lang] = &p;
  }
}

const point_result* baseline_index::best_serial(const std::vector<const point_result*>& serial,
                                                const std::string& judged, bool python) {
  const point_result* best = nullptr;
  int best_rank = 0;
  for (const auto* s : serial) {
    const int rank = serial_baseline_rank(judged, python, s->variant);
    if (!best || rank < best_rank || (rank == best_rank && s->variant < best->variant)) {
      best = s;
      best_rank = rank;
    }
  }
  return best;
}

baselines baseline_index::at(const point_result& p) const {
  auto it = m_by_key.find(match_key(p));
  if (it == m_by_key.end()) return {};
  const bool python = is_python(p);
  return {best_serial(it->second.serial[python ? 1 : 0], p.variant, python), it->second.threads[python ? 1 : 0]};
}

const point_result* baseline_index::cpp_serial(const point_result& p) const {
  auto it = m_by_key.find(match_key(p));
  return it == m_by_key.end() ? nullptr : best_serial(it->second.serial[0], p.variant, false);
}

verdict verdict_for(double lo, double hi, double band) {
  if (!(lo > 0) || !(hi >= lo)) return verdict::unclear;
  if (lo >= 1 / (1 + band) && hi <= 1 + band) return verdict::same;
  if (lo > 1) return verdict::faster;
  if (hi < 1) return verdict::slower;
  return verdict::unclear;
}

speedup compare(const point_result& v, const point_result& b, const analysis_options& o) {
  speedup s;
  s.workload = v.workload;
  s.params_key = v.params_key();
  s.variant = v.variant;
  s.baseline = b.variant;
  s.point_id = v.id;
  s.baseline_point_id = b.id;
  s.ratio = v.wall.median > 0 ? b.wall.median / v.wall.median : 0;
  s.ci_low = s.ci_high = s.ratio;
  s.method = "none";
  const std::size_t n_min = o.bootstrap_min_samples;
  const std::size_t n_max = o.bootstrap_max_samples;
  const bool bootstrap = v.samples_ns.size() >= n_min && b.samples_ns.size() >= n_min &&
                         v.samples_ns.size() <= n_max && b.samples_ns.size() <= n_max;
  if (bootstrap) {
    const auto ci = stats::bootstrap_ratio_ci(b.samples_ns, v.samples_ns);
    if (ci.low > 0) {
      s.ci_low = ci.low;
      s.ci_high = ci.high;
      s.method = "bootstrap";
    }
  }
  if (s.method == "none" && v.wall.count >= 3 && b.wall.count >= 3 && v.wall.ci_low > 0 && b.wall.ci_low > 0 &&
             v.wall.median > 0 && b.wall.median > 0) {
    // Independent intervals combined in log space: the ratio is low when the baseline is
    // low and the variant high.
    auto sq = [](double x) { return x * x; };
    const double down = std::sqrt(sq(std::log(b.wall.median / b.wall.ci_low)) + sq(std::log(v.wall.ci_high / v.wall.median)));
    const double up = std::sqrt(sq(std::log(b.wall.ci_high / b.wall.median)) + sq(std::log(v.wall.median / v.wall.ci_low)));
    s.ci_low = s.ratio * std::exp(-down);
    s.ci_high = s.ratio * std::exp(up);
    s.method = "median-ci";
  }
  s.verdict = s.method == "none" ? verdict::unclear : verdict_for(s.ci_low, s.ci_high, o.same_band);
  s.ratio = text::finite(s.ratio);
  s.ci_low = text::finite(s.ci_low);
  s.ci_high = text::finite(s.ci_high);
  return s;
}

std::vector<speedup> cpp_over_python(const std::vector<point_result>& points, const analysis_options& o) {
  struct best {
    const point_result* cpp = nullptr;
    const point_result* python = nullptr;
  };
  std::map<std::string, best> by_key;
  std::vector<std::string> order; // first appearance, so the list follows the run
  for (const auto& p : points) {
    if (!p.valid() || !(p.wall.median > 0) || p.expected_invalid) continue;
    const std::string key = match_key(p);
    auto [it, added] = by_key.try_emplace(key);
    if (added) order.push_back(key);
    const point_result*& slot = is_python(p) ? it->second.python : it->second.cpp;
    if (!slot || p.wall.median < slot->wall.median) slot = &p;
  }
  std::vector<speedup> out;
  for (const auto& key : order) {
    const best& b = by_key[key];
    if (b.cpp && b.python) out.push_back(compare(*b.cpp, *b.python, o));
  }
  return out;
}

std::vector<speedup> all_speedups(const std::vector<point_result>& points, const baseline_index& index,
                                  const analysis_options& o) {
  std::vector<speedup> out;
  for (const auto& p : points) {
    if (!p.valid() || !(p.wall.median > 0)) continue;
    const baselines b = index.at(p);
    if (is_python(p))
      if (const point_result* cpp = index.cpp_serial(p)) out.push_back(compare(p, *cpp, o));
    if (b.serial && b.serial != &p) out.push_back(compare(p, *b.serial, o));
    // Serial over threads is the inverse of threads over serial, and thread counts against
    // each other are a scaling question (poor-scaling), not a comparison of implementations.
    if (b.threads && p.kind != variant_kind::threads && &p != b.serial) out.push_back(compare(p, *b.threads, o));
  }
  return out;
}

} // namespace speedlab::analysis
