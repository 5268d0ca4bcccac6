// libFuzzer target: parse, override and plan a suite against a workload described here
// (integer, real and text parameters). The plan must respect its bounds or refuse with a
// config_error; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "app/plugins/plugin_loader.hpp"
#include "app/suite/suite_overrides.hpp"
#include "app/suite/suite_plan.hpp"

namespace {
const speedlab::app::plugin_registry& registry() {
  static speedlab::app::plugin_registry reg;
  static bool once = [] {
    speedlab::workload_info w{"w", "fuzzed workload"};
    w.parameters = {speedlab::param_spec::integer("n", "elements", 1000, "", 1, 1e12),
                    speedlab::param_spec::real("x", "a real", 1.5, {}, -1e6, 1e6),
                    speedlab::param_spec::text("mode", "a choice", "a", {"a", "b", "c"})};
    w.variants = {speedlab::variant_spec{}, speedlab::variant_spec{}};
    w.variants[0].name = "one";
    w.variants[1].name = "two";
    reg.add(std::move(w), "<fuzz>");
    return true;
  }();
  (void)once;
  return reg;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace speedlab::app;
  // The first line, when it has '=', is a --param override; the rest is the suite.
  std::string text(reinterpret_cast<const char*>(data), size);
  cli_overrides cli;
  if (auto nl = text.find('\n'); nl != std::string::npos && text.substr(0, nl).find('=') != std::string::npos) {
    cli.params = {text.substr(0, nl)};
    text.erase(0, nl + 1);
  }
  try {
    suite_config suite = parse_suite(text, "fuzz.yaml");
    apply_overrides(suite, cli);
    const auto points = plan_points(suite, registry());
    if (points.size() > max_planned_points) std::abort();
  } catch (const config_error&) {
  }
  return 0;
}
