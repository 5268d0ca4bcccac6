// Launch calls recorded in windows (profilers/cupti/launch_sampler.hpp, issue 29): the
// schedule the injection library's flush thread follows, driven here with made-up times, and
// the windows going through the stream's chunk into the reader.
#include "profilers/cupti/launch_sampler.hpp"
#include "speedlab_catch.hpp"

#include "model/profile_stream.hpp"

using speedlab::inject::launch_sampler;
using speedlab::inject::launch_sampling;
using speedlab::inject::parse_launch_sampling;
using namespace speedlab;

namespace {
constexpr std::uint64_t ms = 1'000'000;
} // namespace

TEST_CASE("launch sampler: WINDOW/PERIOD in milliseconds", "[inject][launch_sampling]") {
  std::string problem;
  const auto s = parse_launch_sampling("20/200", problem);
  REQUIRE(s);
  CHECK(s->window_ns == 20 * ms);
  CHECK(s->period_ns == 200 * ms);
  CHECK(problem.empty());
  for (const char* bad : {"", "20", "0/200", "200/200", "300/200", "a/b", "20/", "/200", "-5/200", "20/700000", "1.5/10",
                          "20/200/5"}) {
    INFO(bad);
    problem.clear();
    CHECK_FALSE(parse_launch_sampling(bad, problem));
    CHECK(problem.find("WINDOW/PERIOD") != std::string::npos);
  }
}

TEST_CASE("launch sampler: the two settings, and what a wrong one says", "[inject][launch_sampling]") {
  using speedlab::inject::launch_mode;
  using speedlab::inject::parse_launch_settings;
  std::string problem;
  CHECK(parse_launch_settings("", "", problem).mode == launch_mode::sampled); // the light default
  CHECK(parse_launch_settings("all", "5/50", problem).mode == launch_mode::all);
  CHECK(parse_launch_settings("none", "", problem).mode == launch_mode::none);
  CHECK(parse_launch_settings("0", "", problem).mode == launch_mode::none);
  const auto s = parse_launch_settings("sampled", "5/50", problem);
  CHECK(s.mode == launch_mode::sampled);
  CHECK(s.sampling.window_ns == 5 * ms);
  CHECK(s.sampling.period_ns == 50 * ms);
  CHECK(problem.empty());
  const auto d = parse_launch_settings("sampled", "", problem);
  CHECK(d.sampling.window_ns == 20 * ms);
  CHECK(problem.empty());
  const auto bad_window = parse_launch_settings("sampled", "50/5", problem);
  CHECK(bad_window.mode == launch_mode::sampled);
  CHECK(bad_window.sampling.period_ns == 200 * ms); // the default
  CHECK(problem.find("SPEEDLAB_PROFILE_LAUNCH_SAMPLE='50/5'") != std::string::npos);
  problem.clear();
  CHECK(parse_launch_settings("sometimes", "", problem).mode == launch_mode::sampled);
  CHECK(problem.find("SPEEDLAB_PROFILE_LAUNCH_CALLS='sometimes'") != std::string::npos);
}

TEST_CASE("launch sampler: on for the window, off for the rest of each period", "[inject][launch_sampling]") {
  const std::uint64_t t0 = 5 * ms;
  launch_sampler s(launch_sampling{20 * ms, 200 * ms}, t0);
  CHECK(s.on());
  CHECK_FALSE(s.due(t0 + 19 * ms));
  CHECK(s.until_next(t0 + 10 * ms) == 10 * ms);
  REQUIRE(s.due(t0 + 20 * ms));
  s.switched(t0 + 21 * ms); // the thread woke a millisecond late
  CHECK_FALSE(s.on());
  CHECK(s.until_next(t0 + 21 * ms) == 179 * ms); // the next period's start, not 200 ms after the switch
  CHECK_FALSE(s.due(t0 + 199 * ms));
  REQUIRE(s.due(t0 + 200 * ms));
  s.switched(t0 + 200 * ms + 100); // on again, after the ids were switched
  CHECK(s.on());
  CHECK(s.until_next(t0 + 201 * ms) == 19 * ms);
  s.switched(t0 + 220 * ms);
  const auto w = s.take_closed();
  REQUIRE(w.size() == 2);
  CHECK(w[0] == launch_sampler::window{t0, t0 + 21 * ms});
  CHECK(w[1] == launch_sampler::window{t0 + 200 * ms + 100, t0 + 220 * ms});
  CHECK(s.take_closed().empty()); // taken once
}

TEST_CASE("launch sampler: a late thread skips the periods it missed and never lengthens a window",
          "[inject][launch_sampling]") {
  launch_sampler s(launch_sampling{20 * ms, 200 * ms}, 0);
  s.switched(20 * ms);                 // off
  REQUIRE(s.due(650 * ms));            // asleep through two periods
  s.switched(650 * ms);                // on, in the period starting at 600 ms ...
  CHECK(s.due(650 * ms));              // ... whose window ended at 620 ms: off at once
  s.switched(651 * ms);
  CHECK(s.until_next(651 * ms) == 149 * ms); // next: the period at 800 ms
  const auto w = s.take_closed();
  REQUIRE(w.size() == 2);
  CHECK(w[1] == launch_sampler::window{650 * ms, 651 * ms});
}

TEST_CASE("launch sampler: the end closes an open window, and nothing is due after", "[inject][launch_sampling]") {
  launch_sampler s(launch_sampling{20 * ms, 200 * ms}, 100);
  s.close(5 * ms);
  CHECK_FALSE(s.on());
  CHECK_FALSE(s.due(UINT64_MAX - 1));
  CHECK(s.until_next(10 * ms) == UINT64_MAX); // the flush thread's wait is not cut short
  const auto w = s.take_closed();
  REQUIRE(w.size() == 1);
  CHECK(w[0] == launch_sampler::window{100, 5 * ms});
  launch_sampler off(launch_sampling{20 * ms, 200 * ms}, 0);
  off.switched(20 * ms);
  off.close(30 * ms); // closed while off: no empty window
  CHECK(off.take_closed().size() == 1);
}

TEST_CASE("launch sampler: the start-up window lasts to a period after the first launch", "[inject][launch_sampling]") {
  using speedlab::inject::launch_sampler;
  const std::uint64_t t0 = 5 * ms;
  auto s = launch_sampler::with_startup({20 * ms, 200 * ms}, t0);
  // No launch yet: open, nothing due however long the start-up takes; looked at again a window later.
  CHECK(s.on());
  CHECK(s.awaits_first_launch());
  CHECK_FALSE(s.due(t0 + 3000 * ms));
  CHECK(s.until_next(t0 + 3000 * ms) == 20 * ms);
  // The first launch at 3 s: the start-up window closes 200 ms later, then the cycle runs from there.
  const std::uint64_t first = t0 + 3000 * ms;
  s.first_launch(first);
  CHECK_FALSE(s.awaits_first_launch());
  CHECK_FALSE(s.due(first + 199 * ms));
  CHECK(s.until_next(first + 150 * ms) == 50 * ms);
  REQUIRE(s.due(first + 200 * ms));
  s.switched(first + 201 * ms);
  CHECK_FALSE(s.on());
  const auto closed = s.take_closed();
  REQUIRE(closed.size() == 1);
  CHECK(closed[0] == launch_sampler::window{t0, first + 201 * ms});
  // The next window opens a period after the cycle's origin and lasts its 20 ms.
  CHECK_FALSE(s.due(first + 399 * ms));
  REQUIRE(s.due(first + 400 * ms));
  s.switched(first + 400 * ms);
  CHECK(s.on());
  CHECK_FALSE(s.due(first + 419 * ms));
  CHECK(s.due(first + 420 * ms));
  // A second first launch changes nothing.
  s.first_launch(first + 410 * ms);
  CHECK(s.due(first + 420 * ms));
}

TEST_CASE("launch sampler: a start-up window never told of a launch closes at the end", "[inject][launch_sampling]") {
  using speedlab::inject::launch_sampler;
  auto s = launch_sampler::with_startup({20 * ms, 200 * ms}, 0);
  s.close(900 * ms);
  CHECK_FALSE(s.awaits_first_launch());
  CHECK(s.until_next(900 * ms) == UINT64_MAX);
  const auto closed = s.take_closed();
  REQUIRE(closed.size() == 1);
  CHECK(closed[0] == launch_sampler::window{0, 900 * ms});
}

TEST_CASE("launch sampler: the windows go through the stream to the reader", "[inject][launch_sampling][stream]") {
  profile::process_info info;
  info.pid = 42;
  info.host = "h";
  info.start_ns = 10;
  info.tags["launch_calls"] = "sampled";
  std::string bytes = profile::encode_chunk(profile::chunk_type::header, profile::header_json(info, 0, 500, "test").dump());
  bytes += profile::encode_chunk(profile::chunk_type::launch_windows,
                                 profile::launch_windows_json(50, {{10, 30}, {210, 230}}).dump());
  bytes += profile::encode_chunk(profile::chunk_type::launch_windows, profile::launch_windows_json(300, {{410, 420}}).dump());
  bytes += profile::encode_chunk(profile::chunk_type::launch_windows,
                                 nlohmann::json{{"t_ns", 1}, {"windows", {{500, 400}}}}.dump()); // ends before it starts
  bytes += profile::encode_chunk(profile::chunk_type::launch_windows,
                                 nlohmann::json{{"t_ns", 2}, {"windows", {{1, 2, 3}}}}.dump()); // not a pair
  bytes += profile::encode_chunk(profile::chunk_type::close, profile::close_json(500, "exit", 0).dump());
  const auto r = profile::read_stream_bytes(bytes, "test.slstream");
  REQUIRE(r.valid);
  CHECK(profile::launch_calls_sampled(r.profile));
  using w = std::pair<std::uint64_t, std::uint64_t>;
  CHECK(r.profile.launch_windows == std::vector<w>{{10, 30}, {210, 230}, {410, 420}});
  bool said_order = false, said_shape = false;
  for (const auto& m : r.messages) {
    said_order |= m.find("unreadable") != std::string::npos && m.find("ends before") != std::string::npos;
    said_shape |= m.find("unreadable") != std::string::npos && m.find("not [start, end]") != std::string::npos;
  }
  CHECK(said_order);
  CHECK(said_shape);
}
