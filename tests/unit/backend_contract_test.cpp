// The backend contract (profilers/profiler.hpp, model/result_sections.hpp, issue 39): a
// backend added from outside profilers/, registered by name without editing a shared file,
// runs in the runner's sessions and hands over a result section of its own, which the
// point's JSON writes and reads under its key and a later round never replaces. This file
// is the whole of such a backend: its session, its profiler, its section, two registrations.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "app/plugins/plugin_loader.hpp"
#include "app/run/isolation.hpp"
#include "model/result_sections.hpp"
#include "model/results.hpp"
#include "profilers/profiler.hpp"
#include "run_request_support.hpp"
#include "speedlab_catch.hpp"
#include "test_support.hpp"

using namespace speedlab;
using namespace speedlab::app;

namespace {

// The backend's own section: what it saw of the point.
struct repetition_marks {
  static constexpr const char* section_key = "test_marks";
  int begun = 0, ended = 0;
  bool started = false, stopped = false;
};
void to_json(nlohmann::json& j, const repetition_marks& m) {
  j = {{"begun", m.begun}, {"ended", m.ended}, {"started", m.started}, {"stopped", m.stopped}};
}
void from_json(const nlohmann::json& j, repetition_marks& m) {
  j.at("begun").get_to(m.begun);
  j.at("ended").get_to(m.ended);
  j.at("started").get_to(m.started);
  j.at("stopped").get_to(m.stopped);
}

class marks_session final : public profiling::session {
public:
  void start() override { m_marks.started = true; }
  void repetition_begin() override { ++m_marks.begun; }
  void repetition_end() override { ++m_marks.ended; }
  void stop() override { m_marks.stopped = true; }
  void collect(profiling::profile_data& out) override { out.sections.set(m_marks); }

private:
  repetition_marks m_marks;
};

class marks_profiler final : public profiling::profiler {
public:
  marks_profiler() : profiling::profiler("test_marks", "test only: counts the repetitions it is told of") {}
  std::unique_ptr<profiling::session> create_session(const profiling::profiler_options&) override {
    return std::make_unique<marks_session>();
  }
};

// The two registrations a backend outside the explicit lists needs.
void register_marks() {
  static const bool done = [] {
    profiling::register_backend("test_marks", {.make = [] { return std::make_unique<marks_profiler>(); }});
    register_section<repetition_marks>();
    return true;
  }();
  (void)done;
}

const plugin_registry& registry() {
  static plugin_registry reg;
  static bool loaded = reg.load_file(speedlab::testing::faulty_plugin());
  REQUIRE(loaded);
  return reg;
}

run_request marks_request() {
  const auto* w = registry().find("faulty");
  planned_point pp{"faulty", "ok", {{"n", "1000"}, {"mode", "a"}, {"scale", "1"}}, {}, {}};
  pp.measure.min_samples = 4;
  pp.measure.max_samples = 6;
  pp.measure.min_time_s = 0;
  pp.measure.warmup_runs = 2;
  return testing::request(w, w->find_variant("ok"), pp, 1, "test_marks");
}

} // namespace

TEST_CASE("backend contract: a backend registered from a test runs in the point's sessions", "[profilers]") {
  register_marks();
  const auto names = profiling::profiler_names();
  CHECK(std::count(names.begin(), names.end(), "test_marks") == 1);
  CHECK_FALSE(profiling::register_backend("test_marks", {})); // a name is registered once

  const point_result r = measure_point(marks_request());
  REQUIRE(r.status == point_status::ok);
  const auto* marks = r.sections.get<repetition_marks>();
  REQUIRE(marks);
  CHECK(marks->started);
  CHECK(marks->stopped);
  CHECK(marks->ended == static_cast<int>(r.samples_ns.size())); // the measured repetitions only
  CHECK(marks->begun == marks->ended);
  CHECK_FALSE(r.sections.has<counters::counter_pass>()); // no other backend's section appears
}

TEST_CASE("backend contract: a section is written and read under its key, through the child too", "[profilers]") {
  register_marks();
  const point_result r = run_isolated(marks_request(), 10).value(); // the child's result comes back as JSON
  REQUIRE(r.status == point_status::ok);
  const auto* marks = r.sections.get<repetition_marks>();
  REQUIRE(marks);
  CHECK(marks->ended == static_cast<int>(r.samples_ns.size()));

  const nlohmann::json j = r;
  REQUIRE(j.contains("test_marks"));
  CHECK(j.at("test_marks").at("ended") == marks->ended);
  const auto back = j.get<point_result>();
  REQUIRE(back.sections.has<repetition_marks>());
  CHECK(back.sections.get<repetition_marks>()->ended == marks->ended);
  CHECK(back.sections.keys() == std::vector<std::string>{"test_marks"});
}

TEST_CASE("backend contract: a later round's or pass's section never replaces one already kept", "[profilers]") {
  result_sections kept, later;
  kept.set(repetition_marks{.begun = 1, .ended = 1});
  later.set(repetition_marks{.begun = 9, .ended = 9});
  later.set(source::source_pass{});
  kept.add_missing(std::move(later));
  CHECK(kept.get<repetition_marks>()->ended == 1);
  CHECK(kept.has<source::source_pass>()); // a section it lacked is added
  CHECK(kept.keys() == std::vector<std::string>{"source", "test_marks"});
}
