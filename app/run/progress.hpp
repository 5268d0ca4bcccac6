// Progress of a suite: a redrawn bar on a terminal, one plain line per point otherwise
// (logs, CI), never both. Under -q/--quiet only the points that failed get a line, and
// notes() drops what it is given: warnings and errors still go to std::cerr.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>

#include "model/results.hpp"

namespace speedlab::app {

class progress_display {
public:
  progress_display(std::size_t total, bool interactive);
  void starting(std::size_t index, const std::string& id);
  void finished(std::size_t index, const point_result& p);
  void done();

private:
  std::size_t m_total;
  bool m_interactive;
  std::size_t m_last_width = 0;
};

bool stderr_is_terminal();

// -q/--quiet (any command): progress and notes stay off stderr.
void set_quiet(bool quiet);
bool quiet();
// Where progress lines and notes go: std::cerr, or a stream that drops them under --quiet.
std::ostream& notes();
std::string format_duration_ns(double ns);

} // namespace speedlab::app
