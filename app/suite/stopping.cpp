#include "app/suite/stopping.hpp"

#include <fmt/format.h>

#include "model/statistics.hpp"

namespace speedlab::app {

bool past_time_limit(const measure_options& m, double elapsed_s, std::size_t runs) {
  return elapsed_s >= m.max_time_s && runs >= 1;
}

std::string limit_reason(const measure_options& m, const measure_progress& p) {
  const std::size_t n = p.samples_ns.size();
  if (n >= m.max_samples) return fmt::format("max_samples ({}) reached", m.max_samples);
  if (past_time_limit(m, p.elapsed_s, n)) return fmt::format("max_time ({} s) reached", m.max_time_s);
  return {};
}

std::string stopping_criterion::stop_reason(const measure_options& m, const measure_progress& p) const {
  if (std::string why = limit_reason(m, p); !why.empty()) return why;
  if (p.samples_ns.size() < m.min_samples || p.elapsed_s < m.min_time_s) return {};
  return do_stop_reason(m, p);
}

namespace {

// Stop once the median's 95% interval is within target_noise of it.
class noise_criterion final : public stopping_criterion {
public:
  std::string name() const override { return "noise"; }
  std::vector<std::pair<std::string, std::string>> parameters() const override {
    return {{"target_noise", "the median's 95% interval half-width, relative to it, that ends the point"}};
  }

protected:
  std::string do_stop_reason(const measure_options& m, const measure_progress& p) const override {
    const double noise = stats::summarize(p.samples_ns).relative_noise();
    if (noise > m.target_noise) return {};
    return fmt::format("converged: median CI half-width {:.2f}% <= {:.2f}%", 100 * noise, 100 * m.target_noise);
  }
};

// Stop as soon as min_samples and min_time are met: the same budget for every point.
class fixed_criterion final : public stopping_criterion {
public:
  std::string name() const override { return "fixed"; }

protected:
  std::string do_stop_reason(const measure_options& m, const measure_progress& /*progress*/) const override {
    return fmt::format("fixed: min_samples ({}) and min_time ({} s) met", m.min_samples, m.min_time_s);
  }
};

} // namespace

const std::vector<std::unique_ptr<stopping_criterion>>& stopping_criteria() {
  static const auto all = [] {
    std::vector<std::unique_ptr<stopping_criterion>> v;
    v.push_back(std::make_unique<noise_criterion>()); // the default (default_stopping)
    v.push_back(std::make_unique<fixed_criterion>());
    return v;
  }();
  return all;
}

std::vector<std::string> stopping_criterion_names() {
  std::vector<std::string> names;
  for (const auto& c : stopping_criteria()) names.push_back(c->name());
  return names;
}

const stopping_criterion& find_stopping_criterion(const std::string& name) {
  for (const auto& c : stopping_criteria())
    if (c->name() == name) return *c;
  throw config_error(
      fmt::format("unknown stopping criterion '{}' (one of {})", name, fmt::join(stopping_criterion_names(), ", ")));
}

} // namespace speedlab::app
