// The exit statuses of the speedlab program, one list for every command (the README's table
// and the manual pages' EXIT STATUS, app/cli/man_page.cpp, say the same).
#pragma once

namespace speedlab::app {

// Exit codes: 0 every point valid (or skipped with a reason, or wrong on purpose and
// flagged), 1 some run failed or was invalid or a report could not be written, 2 usage or
// configuration error (an output folder in use or holding an earlier run included; nothing
// valid to read), 128 + signal when SIGINT/SIGTERM/SIGHUP stopped a run (130, 143, 129);
// compare only: 3 could not decide (no point's time judged, nothing compared).
enum exit_code : int { exit_ok = 0, exit_failures = 1, exit_usage = 2, exit_undecided = 3 };

} // namespace speedlab::app
