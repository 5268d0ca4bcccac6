// The critical path on jobs with a known culprit (tests/fixtures/culprits, recorded on two
// H200s; its README says what was injected): the first finding names the injected culprit
// with its cost within 10% of what the program measured (expected.jsonl), none is named in
// the job without one, and the path's length per measured step is within 2% of the
// program's measured step (wall_s / steps).
#include <fstream>
#include <numeric>

#include <nlohmann/json.hpp>

#include "analysis/critical_path.hpp"
#include "analysis/finding_groups.hpp"
#include "app/profile/profile_report.hpp"
#include "speedlab_catch.hpp"
#include "test_root.hpp"

using namespace speedlab;

namespace {

std::vector<nlohmann::json> expected_lines(const std::string& name) {
  std::ifstream in(testing::fixture_dir() / "culprits" / name / "expected.jsonl");
  REQUIRE(in);
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  REQUIRE(!out.empty());
  return out;
}

// The program's measured step: the last rank's wall time over the measured steps.
double measured_step_ns(const std::vector<nlohmann::json>& lines) {
  double wall = 0;
  for (const auto& l : lines) wall = std::max(wall, l.at("wall_s").get<double>());
  return wall * 1e9 / lines.front().at("steps").get<double>();
}

// The path's length per measured step: the last `steps` steps (the program's warm-up steps
// come first), their lengths summed over their count.
double path_step_ns(const analysis::critical_path& p, std::size_t steps) {
  REQUIRE(p.steps.size() >= steps);
  double sum = 0;
  for (std::size_t k = p.steps.size() - steps; k < p.steps.size(); ++k) sum += p.steps[k].length_ns();
  return sum / static_cast<double>(steps);
}

// What the rank with the culprit measured of it (0 when the key is absent).
double injected_ms(const std::vector<nlohmann::json>& lines, const char* key) {
  double v = 0;
  for (const auto& l : lines) v = std::max(v, l.value(key, 0.0));
  return v;
}

void check_tiles(const analysis::critical_path& p) {
  for (const auto& s : p.steps) {
    REQUIRE(!s.segments.empty());
    CHECK(s.segments.front().start == s.start);
    CHECK(s.segments.back().end == s.end);
    for (std::size_t i = 1; i < s.segments.size(); ++i) CHECK(s.segments[i - 1].end == s.segments[i].start);
  }
}

struct job {
  analysis::program_analysis a;
  std::vector<nlohmann::json> expected;
};

job analyze(const std::string& name) {
  return {app::analyze_profile_folder(testing::fixture_dir() / "culprits" / name), expected_lines(name)};
}

const analysis::finding& first_finding(const job& j) {
  const auto groups = analysis::group_findings(j.a.result, j.a.points);
  REQUIRE(!groups.empty());
  REQUIRE(!groups.front().findings.empty());
  return j.a.result.findings[groups.front().findings.front()];
}

void check_length(const job& j) {
  const double measured = measured_step_ns(j.expected);
  const double path = path_step_ns(j.a.path, j.expected.front().at("steps").get<std::size_t>());
  INFO("path per measured step " << path / 1e6 << " ms, measured " << measured / 1e6 << " ms");
  CHECK(std::abs(path / measured - 1) <= 0.02);
  check_tiles(j.a.path);
}

void check_rank_culprit(const std::string& name, const char* key, const std::string& what) {
  const job j = analyze(name);
  const double injected = injected_ms(j.expected, key) * 1e6;
  REQUIRE(injected > 0);
  REQUIRE(j.a.path.culprit);
  const analysis::finding& f = first_finding(j);
  INFO(f.title);
  CHECK(f.rule == analysis::critical_path_rule);
  CHECK(f.variant == "rank 1");
  CHECK(f.title.rfind("rank 1: ", 0) == 0);
  CHECK(f.title.find(what) != std::string::npos);
  INFO("cost " << j.a.path.culprit->cost_ns / 1e6 << " ms, injected " << injected / 1e6 << " ms");
  CHECK(j.a.path.culprit->rank == 1);
  CHECK(std::abs(j.a.path.culprit->cost_ns / injected - 1) <= 0.10);
  check_length(j);
}

} // namespace

TEST_CASE("critical path: extra GPU work on rank 1 (a spin kernel) is named first, at its cost") {
  check_rank_culprit("gpu", "extra_ms_per_step", "spin_kernel");
}

TEST_CASE("critical path: a host stall before each step on rank 1 (load_batch) is named first, at its cost") {
  check_rank_culprit("stall", "stall_ms_per_step", "load_batch");
}

TEST_CASE("critical path: a pageable host-to-device copy per step on rank 1 is named first, at its cost") {
  check_rank_culprit("pageable", "pageable_ms_per_step", "pageable");
}

TEST_CASE("critical path: a per-step synchronization and the host work after it are named first") {
  const job j = analyze("sync");
  REQUIRE(j.a.path.culprit);
  const auto& c = *j.a.path.culprit;
  const analysis::finding& f = first_finding(j);
  INFO(f.title);
  CHECK(f.rule == analysis::critical_path_rule);
  CHECK(f.title.find("synchronization") != std::string::npos);
  CHECK(f.title.find("load_batch") != std::string::npos);
  CHECK(c.rank == -1);
  const double wait = injected_ms(j.expected, "sync_ms_per_step") * 1e6,
               host = injected_ms(j.expected, "stall_ms_per_step") * 1e6;
  REQUIRE(wait > 0);
  REQUIRE(host > 0);
  INFO("sync wait " << c.sync_wait_ns / 1e6 << " ms (" << wait / 1e6 << "), host " << c.cost_ns / 1e6 << " ms ("
                    << host / 1e6 << ")");
  CHECK(std::abs(c.sync_wait_ns / wait - 1) <= 0.10);
  CHECK(std::abs(c.cost_ns / host - 1) <= 0.10);
  check_length(j);
}

TEST_CASE("critical path: two identical ranks: no rank is named") {
  const job j = analyze("none");
  CHECK_FALSE(j.a.path.culprit);
  for (const auto& f : j.a.result.findings) CHECK(f.rule != analysis::critical_path_rule);
  REQUIRE(!j.a.path.steps.empty());
  check_length(j);
}
