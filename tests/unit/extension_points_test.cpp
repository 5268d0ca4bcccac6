// A rule and a report format added from outside analysis/ and reports/ (issue 39): each is
// registered by name without editing a shared file, and `speedlab report` then runs the rule
// with the built-in ones and writes the format as it writes its own. This file is the whole
// of both, as CONTRIBUTING's recipes show.
#include <atomic>
#include <fstream>
#include <sstream>

#include "analysis/rules.hpp"
#include "app/cli/commands.hpp"
#include "reports/reporter.hpp"
#include "speedlab_catch.hpp"
#include "test_root.hpp"
#include "test_support.hpp"

using namespace speedlab;

namespace {

// Only while a test holds it: CTest runs each case in its own process, a bare run of the
// test binary runs them all in one, where the other cases must not see this rule's findings.
std::atomic<bool> rule_switched_on{false};
struct switch_rule_on {
  switch_rule_on() { rule_switched_on = true; }
  ~switch_rule_on() { rule_switched_on = false; }
};

// A point rule: every valid point that ran more than once.
class repeated_point_rule final : public analysis::rule {
public:
  repeated_point_rule()
      : rule({.name = "test-repeated-point",
              .threshold = "more than one repetition",
              .summary = "test only: names each point measured more than once"}) {}

protected:
  std::vector<analysis::finding> do_evaluate(const analysis::rule_context& ctx) const override {
    if (!rule_switched_on || ctx.point->samples_ns.size() < 2) return {};
    return {start(ctx, "ran " + std::to_string(ctx.point->samples_ns.size()) + " times", 1.0)};
  }
};

// A format: one line per finding, rule then title.
class findings_text_reporter final : public reports::reporter {
public:
  findings_text_reporter() : reporter("test-findings", "test only: one line per finding") {}
  std::vector<std::filesystem::path> write(const reports::report_input& in, const std::filesystem::path& dir) override {
    const auto file = dir / "findings.txt";
    std::ofstream out(file);
    for (const auto& f : in.analysis.findings) out << f.rule << '\t' << f.title << '\n';
    return {file};
  }
};

// Registered when a case first asks, not at start-up: the other cases of a bare run of the
// test binary count the built-in rules and formats.
bool registered() {
  static const bool done =
      analysis::register_rule(std::make_unique<repeated_point_rule>()) &&
      reports::register_reporter("test-findings", [] { return std::make_unique<findings_text_reporter>(); });
  return done;
}

std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace

TEST_CASE("a rule and a format registered from outside run with the built-in ones", "[extension][rules][reports]") {
  REQUIRE(registered());
  REQUIRE(analysis::find_rule("test-repeated-point") != nullptr);
  REQUIRE(reports::make_reporter("test-findings") != nullptr);
  // Every command's help lists formats from the registry, so it names this one too.
  CHECK(reports::format_list().find("test-findings") != std::string::npos);
  CHECK(reports::format_list().find("markdown (md)") != std::string::npos);

  const switch_rule_on on;
  speedlab::testing::temp_dir dir;
  const auto run = dir.path() / "run";
  std::filesystem::copy(speedlab::testing::fixture_dir() / "cpu" / "default-suite", run,
                        std::filesystem::copy_options::recursive);
  app::report_options options;
  options.dir = run.string();
  options.formats = {"test-findings"};
  REQUIRE(app::command_report(options) == 0);

  const std::string text = read_all(run / "findings.txt");
  // The new rule judged the recorded points ...
  CHECK(text.find("test-repeated-point\tran ") != std::string::npos);
  // ... beside the built-in rules, in the one rule loop.
  CHECK(text.find("poor-scaling\t") != std::string::npos);
}

TEST_CASE("a name already taken is refused, not replaced", "[extension][rules][reports]") {
  REQUIRE(registered());
  CHECK_FALSE(analysis::register_rule(std::make_unique<repeated_point_rule>()));
  CHECK_FALSE(reports::register_reporter("markdown", [] { return std::make_unique<findings_text_reporter>(); }));
  CHECK(reports::make_reporter("markdown")->name() == "markdown");
  CHECK_FALSE(analysis::register_rule(nullptr));
}
