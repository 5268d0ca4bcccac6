// SIGINT, SIGTERM and SIGHUP during `speedlab run`: the first asks the run to stop. The
// point in a child is abandoned (the child is killed and nothing is recorded for it), a
// point measured in-process is finished; the reports for what finished are written and
// speedlab exits 128 + the signal (130 for SIGINT, 143 for SIGTERM). A second signal ends
// speedlab at once; every finished point is already in results.jsonl.
#pragma once

namespace speedlab::app {

// Installs the handlers for its lifetime (the previous ones come back after). A signal
// that was ignored when speedlab started (nohup, a background job of a script) stays so.
class stop_on_signals {
public:
  stop_on_signals();
  ~stop_on_signals();
  stop_on_signals(const stop_on_signals&) = delete;
  stop_on_signals& operator=(const stop_on_signals&) = delete;
};

// The signal that asked to stop, 0 while none did. Safe to poll from any code.
int stop_signal();

// "INT", "TERM", "HUP": the signal's abbreviation, "?" for none known.
const char* signal_name(int sig);

// In a freshly forked child: default dispositions again, so that the signals end it.
void reset_stop_signals_in_child();

} // namespace speedlab::app
