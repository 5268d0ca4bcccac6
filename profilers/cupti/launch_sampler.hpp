// Launch calls recorded in windows (launch_mode::sampled, issue 29): on the
// H100 what speedlab adds to CUPTI's kernel records is what puts its cost level with nsys's,
// and on a launch-bound program that is mostly one API record per launch. So the launch call
// ids are switched on for `window` of every `period` (the other calls and every GPU record
// stay on all the time), and the stream says which windows were recorded
// (profile::process_profile::launch_windows) so the analysis knows what it is missing.
//
//   launch_sampler s(sampling, start_ns);          // on from the start
//   if (s.due(now)) { switch ids; s.switched(now_after_switch); }
//   poll(..., s.until_next(now));
//   write(s.take_closed());                          // at each flush; s.close(now) at the end
//
// The start-up window (with_startup, the callback path's default): the first window stays
// open from the start until a period after the first launch call (first_launch(t), told by
// the thread that saw it), so the launches of the start-up and of the first steps, where
// each kernel is first launched (and its module loaded), are recorded whole. The cycle of
// windows starts there.
//
// No CUPTI here: the unit tests drive it with made-up times.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/profile_options.hpp"

namespace speedlab::inject {

// The settings and their parsing are the options module's (model/profile_options.hpp).
using profile::launch_mode;
using profile::launch_sampling;
using profile::launch_settings;
using profile::parse_launch_sampling;
using profile::parse_launch_settings;

class launch_sampler {
public:
  using window = std::pair<std::uint64_t, std::uint64_t>; // [start, end), steady ns

  // On at `start_ns` (the ids are enabled when recording starts).
  launch_sampler(launch_sampling s, std::uint64_t start_ns)
      : m_s(s), m_origin(start_ns), m_on(true), m_open_since(start_ns) {}
  static launch_sampler with_startup(launch_sampling s, std::uint64_t start_ns) {
    launch_sampler l(s, start_ns);
    l.m_startup = true;
    return l;
  }

  bool on() const { return m_on; }
  // In the start-up window and its first launch not told yet.
  bool awaits_first_launch() const { return m_startup && !m_first_told && !m_done; }
  // The first launch call started at `t`: the start-up window closes a period later.
  void first_launch(std::uint64_t t) {
    if (!awaits_first_launch()) return;
    m_first_told = true;
    m_origin = std::max(t, m_open_since) + m_s.period_ns;
    m_period_start = m_origin;
  }

  // True when the ids should be switched now (the window ended, or the next one began).
  bool due(std::uint64_t now) const { return now >= next_switch(); }

  // Nanoseconds until the next switch (0: due now; UINT64_MAX: none after close()).
  std::uint64_t until_next(std::uint64_t now) const {
    if (awaits_first_launch()) return m_s.window_ns; // look again for the first launch then
    const std::uint64_t at = next_switch();
    if (at == UINT64_MAX) return UINT64_MAX;
    return now >= at ? 0 : at - now;
  }

  // The ids were switched at `t`: on, the window opens at `t` (calls starting from then
  // on are recorded); off, it closes at `t` (taken before the ids went off).
  void switched(std::uint64_t t) {
    if (m_on) {
      m_closed.emplace_back(m_open_since, std::max(t, m_open_since));
      m_off_since = t;
      m_startup = false;
    } else {
      m_open_since = t;
      m_period_start = period_start_at(t);
    }
    m_on = !m_on;
  }

  // The end of recording: an open window closes at `t`.
  void close(std::uint64_t t) {
    if (m_on) m_closed.emplace_back(m_open_since, std::max(t, m_open_since));
    m_on = false;
    m_done = true;
  }

  // Windows closed since the last call, oldest first.
  std::vector<window> take_closed() { return std::exchange(m_closed, {}); }

private:
  std::uint64_t period_start_at(std::uint64_t t) const {
    return t < m_origin ? m_origin : m_origin + (t - m_origin) / m_s.period_ns * m_s.period_ns;
  }
  // On: the end of this period's window. Off: the start of the next period. A late switch
  // (the thread woke late) never makes a window run past `window` from its period's start,
  // and a missed period is skipped, not caught up.
  std::uint64_t next_switch() const {
    if (m_done || awaits_first_launch()) return UINT64_MAX;
    if (m_startup) return m_origin; // a period after the first launch
    if (m_on) return m_period_start + m_s.window_ns;
    return period_start_at(m_off_since) + m_s.period_ns;
  }

  launch_sampling m_s;
  std::uint64_t m_origin;
  bool m_on;
  bool m_done = false;
  bool m_startup = false, m_first_told = false;
  std::uint64_t m_open_since;
  std::uint64_t m_off_since = 0;
  std::uint64_t m_period_start = m_origin;
  std::vector<window> m_closed;
};

} // namespace speedlab::inject
