#include "app/run/progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <ostream>

#include <fmt/format.h>

namespace speedlab::app {

namespace {
bool quiet_flag = false;
} // namespace

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) != 0; }

void set_quiet(bool quiet) { quiet_flag = quiet; }
bool quiet() { return quiet_flag; }

std::ostream& notes() {
  static std::ostream dropped(nullptr); // no buffer: every write is discarded
  return quiet_flag ? dropped : std::cerr;
}

std::string format_duration_ns(double ns) {
  if (ns < 1e3) return fmt::format("{:.0f} ns", ns);
  if (ns < 1e6) return fmt::format("{:.2f} us", ns / 1e3);
  if (ns < 1e9) return fmt::format("{:.2f} ms", ns / 1e6);
  return fmt::format("{:.2f} s", ns / 1e9);
}

progress_display::progress_display(std::size_t total, bool interactive)
    : m_total(total), m_interactive(interactive && !quiet()) {}

void progress_display::starting(std::size_t index, const std::string& id) {
  if (!m_interactive) return;
  constexpr std::size_t width = 30;
  const std::size_t filled = m_total ? width * index / m_total : width;
  std::string line =
      fmt::format("\r[{}{}] {}/{} {}", std::string(filled, '#'), std::string(width - filled, '.'), index, m_total, id);
  if (line.size() > 120) line = line.substr(0, 117) + "...";
  const std::size_t pad = m_last_width > line.size() ? m_last_width - line.size() : 0;
  m_last_width = line.size();
  std::fprintf(stderr, "%s%s", line.c_str(), std::string(pad, ' ').c_str());
  std::fflush(stderr);
}

void progress_display::finished(std::size_t index, const point_result& p) {
  const bool failed = p.status != point_status::ok && p.status != point_status::skipped &&
                      !(p.status == point_status::invalid && p.expected_invalid);
  if (quiet() && !failed) return;
  std::string what;
  if (p.status == point_status::ok)
    what = fmt::format("ok, median {}", format_duration_ns(p.wall.median));
  else
    what = fmt::format("{}: {}", to_string(p.status), p.reason);
  if (p.status == point_status::invalid && p.expected_invalid) what += " (expected: this variant is wrong on purpose)";
  if (m_interactive) {
    if (p.status == point_status::ok) return; // the bar is enough; problems get their own line
    std::fprintf(stderr, "\r%s\r", std::string(m_last_width, ' ').c_str());
    m_last_width = 0;
  }
  std::fprintf(stderr, "[%zu/%zu] %s: %s\n", index + 1, m_total, p.id.c_str(), what.c_str());
  std::fflush(stderr);
}

void progress_display::done() {
  if (m_interactive && m_last_width) std::fprintf(stderr, "\r%s\r", std::string(m_last_width, ' ').c_str());
  m_last_width = 0;
}

} // namespace speedlab::app
