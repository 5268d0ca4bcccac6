// How the injection library keeps its records when the process is ended by SIGTERM, SIGINT,
// SIGHUP or leaves through _exit (docs/profile-format.md, "Termination").
//
// A signal handler may only do async-signal-safe things, and flushing CUPTI (locks, malloc,
// write) is not one. Nor may it wait where it interrupted: the thread it runs on may be inside
// the CUDA driver holding the locks the final flush needs (a training loop always is), so a
// handler that waited there hung until its budget ran out and wrote nothing. So the handler
// defers: it marks the signal pending, writes one byte to the termination thread's pipe and
// returns; the interrupted thread goes on. The termination thread (created at install with
// these signals blocked) asks the flush thread to synchronize, flush and close the stream,
// waits for it at most the wait budget, then puts the program's own disposition back and
// signals the process again: the program's handler runs, or the default action ends the
// process by that signal (128+N, as without the library). The stream is closed (how: the
// signal) before the program's handler runs: records after it are not kept.
//
// A handler the program installs after this library (torch's elastic agent, a program that
// sets its SIGTERM handler after CUDA starts) replaces ours; the flush thread looks every
// recheck_interval_ms and puts ours back in front, chaining to the program's.
//
// _exit cannot be caught; the launcher preloads a shim (exit_shim.cpp) that calls the hook
// given to it here before the process leaves, through the same request-and-wait. The shim
// also sees the process signal itself (kill): a program that put a signal back to the
// default and raises it (Python after an uncaught KeyboardInterrupt) has the stream closed
// first.
#pragma once

#include <cstdint>
#include <string>

#include "model/profile_options.hpp"

namespace speedlab::inject::termination {

inline constexpr std::uint32_t recheck_interval_ms = 250;
inline constexpr std::uint32_t default_wait_ms = profile::default_signal_wait_ms;

// What the flush thread is asked to do.
struct request {
  enum kind_t { none, signal, exit_call } kind = none;
  int value = 0; // the signal number, or _exit's status
  // True when the process ends right after (the default action of the signal, _exit); false
  // when a handler of the program runs next and the program may go on.
  bool final = false;
  // A signal whose program's own handler runs after the close (not the default action).
  bool handler_next = false;
  // When the handler saw the signal (Unix time, ns; 0: not known, e.g. the _exit shim's kill).
  std::int64_t signal_unix_ns = 0;
};

// Creates the pipes, registers with the _exit shim if it is loaded and, with `signals`,
// installs the handlers for SIGTERM, SIGINT and SIGHUP (each signal whose disposition is not
// SIG_IGN). False, with `error` set, when the pipes cannot be made (nothing is installed then).
bool install(std::uint32_t wait_ms, bool signals, std::string& error);
// True once install() succeeded.
bool installed();
// The stream is closed and the flush thread ends: a later signal or _exit asks nobody and
// waits for nothing.
void closed();

// The descriptor the flush thread polls: readable when a request (or a wake) is waiting.
int wake_fd();
// Wakes the flush thread without a request (async-signal-safe).
void wake();
// Empties the wake pipe and returns the request waiting, if any.
request take();
// The flush thread tells the waiting handler (or _exit) that the request is done.
void done();
// Puts our handler back in front of any the program installed since; the program's is the
// one chained. Returns the signals taken back (for a note).
std::string recheck();

// "SIGTERM", "SIGINT", "SIGHUP", or "signal N".
std::string signal_name(int sig);

} // namespace speedlab::inject::termination
