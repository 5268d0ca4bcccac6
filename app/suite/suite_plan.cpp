#include "app/suite/suite_plan.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "app/suite/names.hpp"
#include "app/plugins/plugin_loader.hpp"
#include "app/suite/sweep.hpp"

namespace speedlab::app {
namespace {

std::vector<std::string> names_of(const plugin_registry& reg) {
  std::vector<std::string> out;
  for (const auto& [name, _] : reg.workloads()) out.push_back(name);
  return out;
}

void check_value(const param_spec& spec, const std::string& value, const source_location& loc,
                 const std::string& workload) {
  auto bad = [&](const std::string& why) {
    throw config_error(fmt::format("{}: workload '{}' parameter '{}' = '{}': {}", loc.str(), workload, spec.name,
                                   echo(value), why));
  };
  if (spec.type == param_type::text) {
    if (!spec.choices.empty() && std::find(spec.choices.begin(), spec.choices.end(), value) == spec.choices.end())
      bad(fmt::format("expected one of {}", fmt::join(spec.choices, ", ")));
    return;
  }
  double v = 0;
  try {
    v = parse_number(value);
  } catch (const sweep_error&) {
    bad(spec.type == param_type::integer ? "expected an integer" : "expected a number");
  }
  if (spec.type == param_type::integer && !parse_integer(value)) bad("expected an integer (64-bit)");
  if (spec.min_value && v < *spec.min_value) bad(fmt::format("below the minimum {}", format_number(*spec.min_value)));
  if (spec.max_value && v > *spec.max_value) bad(fmt::format("above the maximum {}", format_number(*spec.max_value)));
}

struct axis {
  std::string name;
  std::vector<std::string> values;
};

// One request checked: its variants and one axis of canonical values per parameter.
struct checked_request {
  const workload_request* request;
  const workload_info* info;
  std::vector<std::string> size_axes; // the workload's declared size axes
  std::vector<std::string> variants;
  std::vector<axis> axes;
  double points = 0, bytes = 0; // what its expansion will take
};

checked_request check_request(const workload_request& req, const plugin_registry& registry) {
  const loaded_workload* w = registry.find(req.name);
  if (!w) throw config_error(fmt::format("{}: {}", req.where.str(), unknown_name_message("workload", req.name, names_of(registry))));

  checked_request out{&req, &w->info, {}, {}, {}};
  for (const auto& spec : w->info.parameters)
    if (spec.size_axis) out.size_axes.push_back(spec.name);
  std::vector<std::string> valid_variants;
  for (const auto& v : w->info.variants) valid_variants.push_back(v.name);
  out.variants = req.variants.empty() ? valid_variants : req.variants;
  std::set<std::string> seen_variants;
  for (std::size_t i = 0; i < req.variants.size(); ++i) {
    if (!w->find_variant(req.variants[i]))
      throw config_error(fmt::format("{}: workload '{}': {}", req.variant_where[i].str(), req.name,
                                     unknown_name_message("variant", req.variants[i], valid_variants)));
    if (!seen_variants.insert(req.variants[i]).second)
      throw config_error(fmt::format("{}: workload '{}': variant '{}' is named twice", req.variant_where[i].str(),
                                     req.name, req.variants[i]));
  }

  // Parameter values: the request's, else the declared default.
  std::vector<std::string> valid_params;
  for (const auto& p : w->info.parameters) valid_params.push_back(p.name);
  for (const auto& [name, _] : req.params)
    if (std::find(valid_params.begin(), valid_params.end(), name) == valid_params.end())
      throw config_error(fmt::format("{}: workload '{}': {}", req.param_where.at(name).str(), req.name,
                                     unknown_name_message("parameter", name, valid_params)));
  double product = 1, value_bytes = 0;
  for (const auto& spec : w->info.parameters) {
    axis a{spec.name, {}};
    source_location loc;
    if (auto it = req.params.find(spec.name); it != req.params.end()) {
      a.values = it->second;
      loc = req.param_where.at(spec.name);
    } else {
      a.values = {spec.default_value};
      loc = {"<default of plugin " + w->file.filename().string() + ">", 0, 0};
    }
    std::set<std::string> seen;
    double axis_bytes = 0;
    for (auto& v : a.values) {
      // Numbers are stored in one spelling (1e3 and 1000 are one point) so ids are stable.
      if (spec.type != param_type::text) v = canonical_number(v);
      check_value(spec, v, loc, req.name);
      if (!seen.insert(v).second)
        throw config_error(fmt::format("{}: workload '{}' parameter '{}': the value {} is given twice", loc.str(),
                                       req.name, spec.name, echo(v)));
      axis_bytes += static_cast<double>(v.size() + spec.name.size() + 96);
    }
    // Bytes of this axis over the whole product: each value appears product/size times.
    const double size = static_cast<double>(a.values.size());
    value_bytes = value_bytes * size + axis_bytes * product;
    product *= size;
    out.axes.push_back(std::move(a));
  }
  const double variants = static_cast<double>(out.variants.size());
  out.points = product * variants;
  out.bytes = (value_bytes + product * 256) * variants;
  return out;
}

// The workload's constraints between parameters (rows x cols at most N), checked before
// any run. A constraint that throws (a parameter it names is missing, say) is reported as
// the plugin's error.
void check_constraints(const workload_info& info, const std::map<std::string, std::string>& params,
                       const workload_request& req) {
  if (info.constraints.empty()) return;
  const point p(params);
  std::string key;
  for (const auto& [k, v] : params) key += (key.empty() ? "" : ",") + k + "=" + v;
  for (const auto& c : info.constraints) {
    std::string why;
    try {
      why = c.check ? c.check(p) : std::string();
    } catch (const std::exception& e) {
      why = fmt::format("the plugin's check of '{}' failed: {}", c.description, e.what());
    }
    if (!why.empty())
      throw config_error(fmt::format("{}: workload '{}' point {}: {}", req.where.str(), req.name, echo(key), why));
  }
}

} // namespace

std::vector<planned_point> plan_points(const suite_config& suite, const plugin_registry& registry) {
  std::vector<workload_request> defaults;
  if (suite.workloads.empty())
    for (const auto& name : names_of(registry)) defaults.push_back(workload_request{name, {suite.source, 0, 0}, {}, {}, {}, {}, {}});
  const std::vector<workload_request>& requests = suite.workloads.empty() ? defaults : suite.workloads;

  // Every request checked and counted before a single point is made.
  std::vector<checked_request> checked;
  double total_points = 0, total_bytes = 0;
  for (const auto& req : requests) {
    checked.push_back(check_request(req, registry));
    total_points += checked.back().points;
    total_bytes += checked.back().bytes;
    if (total_points > static_cast<double>(max_planned_points) || total_bytes > max_plan_bytes)
      throw config_error(fmt::format(
          "{}: with workload '{}' the suite plans {} points ({:.0f} MiB); at most {} points and {:.0f} MiB are allowed "
          "in one run",
          req.where.str(), req.name, total_points < 1e15 ? fmt::format("{:.0f}", total_points) : std::string("more than 10^15"),
          total_bytes / (1 << 20), max_planned_points, max_plan_bytes / (1 << 20)));
  }

  std::vector<planned_point> points;
  points.reserve(static_cast<std::size_t>(total_points));
  std::map<std::string, const workload_request*> planned; // point key -> the entry that planned it
  for (const auto& c : checked) {
    const workload_request& req = *c.request;
    const std::size_t per_variant = static_cast<std::size_t>(c.points) / std::max<std::size_t>(1, c.variants.size());
    // Cartesian product, variants outermost so a variant's sweep stays together.
    for (const auto& variant : c.variants) {
      for (std::size_t index = 0; index < per_variant; ++index) {
        planned_point p{req.name, variant, {}, req.measure.value_or(suite.measure), c.size_axes};
        std::size_t rest = index;
        for (auto it = c.axes.rbegin(); it != c.axes.rend(); ++it) {
          p.params[it->name] = it->values[rest % it->values.size()];
          rest /= it->values.size();
        }
        std::string key = req.name + '\n' + variant;
        for (const auto& [k, v] : p.params) key += '\n' + k + '=' + v;
        // Sweeps along two axes that cross share their crossing point: it is measured once.
        // The same point asked for with other measurement settings has no single answer.
        if (auto [it, fresh] = planned.emplace(std::move(key), &req); !fresh) {
          if (it->second->measure.value_or(suite.measure) == p.measure) continue;
          throw config_error(fmt::format("{}: workload '{}' variant '{}' with the same parameters is already planned by "
                                         "the entry at {} with other measurement settings; a point is measured once "
                                         "per run",
                                         req.where.str(), req.name, variant, it->second->where.str()));
        }
        check_constraints(*c.info, p.params, req);
        points.push_back(std::move(p));
      }
    }
  }
  return points;
}

} // namespace speedlab::app
