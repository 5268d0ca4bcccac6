#include "app/process/interrupt.hpp"

#include <signal.h>

#include <csignal>
#include <cstring>
#include <iterator>

namespace speedlab::app {
namespace {

constexpr int handled[] = {SIGINT, SIGTERM, SIGHUP};
volatile std::sig_atomic_t g_stop_signal = 0;
struct sigaction g_previous[std::size(handled)];

void on_signal(int sig) {
  if (g_stop_signal != 0) {
    // Asked twice: end now, by the signal itself (async-signal-safe calls only).
    ::signal(sig, SIG_DFL);
    ::raise(sig);
    return;
  }
  g_stop_signal = sig;
}

} // namespace

stop_on_signals::stop_on_signals() {
  g_stop_signal = 0;
  struct sigaction action {};
  action.sa_handler = &on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0; // no SA_RESTART: a blocking wait returns EINTR and sees the request
  for (std::size_t i = 0; i < std::size(handled); ++i) {
    ::sigaction(handled[i], nullptr, &g_previous[i]);
    // Ignored when speedlab started (nohup, a background job of a script): stays ignored.
    if (g_previous[i].sa_handler != SIG_IGN) ::sigaction(handled[i], &action, nullptr);
  }
}

stop_on_signals::~stop_on_signals() {
  for (std::size_t i = 0; i < std::size(handled); ++i) ::sigaction(handled[i], &g_previous[i], nullptr);
}

int stop_signal() { return g_stop_signal; }

void reset_stop_signals_in_child() {
  g_stop_signal = 0;
  for (int sig : handled) ::signal(sig, SIG_DFL);
}

const char* signal_name(int sig) {
  const char* name = sigabbrev_np(sig);
  return name ? name : "?";
}

} // namespace speedlab::app
