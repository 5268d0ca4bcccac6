// The signal and _exit half of the injection library (termination.hpp). Everything a
// handler or the _exit hook runs is async-signal-safe: atomics, read/write/poll on pipes,
// clock_gettime, getpid, sigaction, pthread_sigmask, raise.
#include "profilers/inject/termination.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>

namespace speedlab::inject::termination {
namespace {

constexpr int handled[] = {SIGTERM, SIGINT, SIGHUP};

int g_wake[2] = {-1, -1}, g_done[2] = {-1, -1};
std::uint32_t g_wait_ms = default_wait_ms;
pid_t g_pid = 0;
std::atomic<bool> g_installed{false}, g_signals{false};
std::atomic<bool> g_closed{false}; // the stream is closed, the flush thread gone: nobody to ask
std::atomic<bool> g_busy{false}; // a request is being served: a second one does not wait for it
std::atomic<int> g_kind{request::none}, g_value{0};
std::atomic<bool> g_final{false};
std::atomic<bool> g_handler_next{false}; // the program's own handler runs after the close
// Deferred termination: the signals the handler left for the termination thread, one bit
// each, and the pipe that wakes that thread.
std::atomic<unsigned> g_pending{0};
std::atomic<unsigned> g_passing{0}; // a signal being passed on to the program's disposition
std::atomic<std::int64_t> g_signal_unix_ns{0};
std::atomic<bool> g_term_thread{false};
int g_term[2] = {-1, -1};

// The program's disposition of each handled signal: what our handler passes the signal on
// to. Written only while our handler is not installed for that signal.
struct sigaction g_chained[NSIG];

void on_signal(int sig, siginfo_t* info, void* context);

// Ours whatever flags it was installed with: a library that saves a disposition and puts
// it back later may restore our handler as a plain one-argument handler (seen with CuPy on
// the GPU machine: SIGTERM and SIGINT ended in SIGSEGV, a stack overflowed by our handler
// passing the signal on to itself).
bool is_ours(const struct sigaction& sa) {
  return (sa.sa_flags & SA_SIGINFO) ? sa.sa_sigaction == &on_signal
                                    : reinterpret_cast<void*>(sa.sa_handler) == reinterpret_cast<void*>(&on_signal);
}

// The default disposition of `sig`: what a chained disposition that is ours stands for.
struct sigaction default_action() {
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  return dfl;
}
const struct sigaction g_default_action = default_action();

void drain(int fd) {
  char buf[64];
  while (::read(fd, buf, sizeof buf) > 0) {
  }
}

std::int64_t monotonic_ms() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// Asks the flush thread and waits for it, at most g_wait_ms. Not in a forked (or vforked)
// child: the flush thread and the stream are the parent's.
void ask_and_wait(request::kind_t kind, int value, bool final) {
  if (!g_installed.load() || g_closed.load() || ::getpid() != g_pid) return;
  if (g_busy.exchange(true)) return;
  drain(g_done[0]);
  g_value.store(value);
  g_final.store(final);
  g_kind.store(kind);
  const char byte = 1;
  (void)!::write(g_wake[1], &byte, 1);
  const std::int64_t deadline = monotonic_ms() + g_wait_ms;
  for (std::int64_t left = g_wait_ms; left > 0; left = deadline - monotonic_ms()) {
    pollfd p{g_done[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) > 0) break;
  }
  drain(g_done[0]);
  g_busy.store(false);
}

// The program's handler with the mask it asked for, or the default action: the disposition
// reset and the signal raised again, so the process ends by it (the launcher sees 128+N).
void pass_on(int sig, siginfo_t* info, void* context, const struct sigaction& chained_in) {
  const struct sigaction& chained = is_ours(chained_in) ? g_default_action : chained_in;
  const bool with_info = chained.sa_flags & SA_SIGINFO;
  if (!with_info && chained.sa_handler == SIG_IGN) return;
  if (!with_info && chained.sa_handler == SIG_DFL) {
    ::sigaction(sig, &g_default_action, nullptr);
    sigset_t only{};
    sigemptyset(&only);
    sigaddset(&only, sig);
    pthread_sigmask(SIG_UNBLOCK, &only, nullptr);
    ::raise(sig);
    return; // not reached for SIGTERM, SIGINT, SIGHUP
  }
  if (chained.sa_flags & SA_RESETHAND) { // one delivery, as the kernel would have done
    g_chained[sig] = {};
    g_chained[sig].sa_handler = SIG_DFL;
  }
  sigset_t old{};
  pthread_sigmask(SIG_BLOCK, &chained.sa_mask, &old);
  if (with_info) chained.sa_sigaction(sig, info, context);
  else chained.sa_handler(sig);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

// Deferred termination: the handler never waits for CUDA or CUPTI work on the thread it
// interrupted (that thread may hold the driver's locks the final flush needs, a training
// loop is always inside a launch or a sync). It marks the signal pending, wakes the
// termination thread and returns, so the interrupted thread goes on and lets its locks go.
// The termination thread has the flush thread write the records and close the stream
// (bounded by the wait budget), then delivers the signal again to the program's own
// disposition. In a forked child, or once the stream is closed, the signal is passed on at
// once, as before the library.
void on_signal(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  const struct sigaction& chained = g_chained[sig];
  if (!(chained.sa_flags & SA_SIGINFO) && chained.sa_handler == SIG_IGN) return;
  if (g_term_thread.load() && !g_closed.load() && ::getpid() == g_pid) {
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    std::int64_t none = 0; // the first signal's time: what "finished before the signal" means
    g_signal_unix_ns.compare_exchange_strong(none, static_cast<std::int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec);
    g_pending.fetch_or(1u << sig);
    const char byte = 1;
    (void)!::write(g_term[1], &byte, 1);
    errno = saved_errno;
    return;
  }
  // A program handler that calls the disposition it replaced (ours) would bring the signal
  // back here: passed on once, not round and round until the stack overflows.
  const unsigned bit = 1u << sig;
  if (g_passing.fetch_or(bit) & bit) {
    errno = saved_errno;
    return;
  }
  errno = saved_errno;
  pass_on(sig, info, context, chained);
  g_passing.fetch_and(~bit);
}

// Ours in front of `previous`; SA_RESTART as the program had it (Python installs its
// handlers without it, so a blocking call returns EINTR and its handler runs at once), and
// SA_ONSTACK too: a program's alternate stack may be too small for more than its own handler.
void install_over(int sig, const struct sigaction& previous) {
  if (!is_ours(previous)) g_chained[sig] = previous; // ours put back: the program's disposition stays what it was
  struct sigaction ours{};
  ours.sa_sigaction = &on_signal;
  ours.sa_flags = SA_SIGINFO | (previous.sa_flags & (SA_RESTART | SA_ONSTACK));
  sigemptyset(&ours.sa_mask);
  ::sigaction(sig, &ours, nullptr);
}

// Left alone: a signal the program ignores (nohup), or a disposition already ours.
bool takes_over(const struct sigaction& now) {
  if (is_ours(now)) return !(now.sa_flags & SA_SIGINFO); // ours put back as a plain handler: again with SA_SIGINFO
  return (now.sa_flags & SA_SIGINFO) || now.sa_handler != SIG_IGN;
}

// The _exit shim (exit_shim.cpp) calls this before the process leaves.
void on_exit_call(int status) { ask_and_wait(request::exit_call, status, true); }

// ... and this before the process signals itself: when the program has put a handled
// signal back to the default (Python after an uncaught KeyboardInterrupt), our handler will
// not run and the signal ends the process, so the stream is closed now. With our handler
// in place it does the work when the signal arrives.
void on_self_kill(int sig) {
  bool ours_handles = false;
  for (int s : handled) ours_handles |= s == sig;
  if (!ours_handles || !g_signals.load()) return;
  struct sigaction now {};
  if (::sigaction(sig, nullptr, &now) != 0 || (now.sa_flags & SA_SIGINFO) || now.sa_handler != SIG_DFL) return;
  sigset_t mask{};
  if (pthread_sigmask(SIG_SETMASK, nullptr, &mask) != 0 || sigismember(&mask, sig)) return; // blocked: not now
  g_handler_next.store(false);
  ask_and_wait(request::signal, sig, true);
}

bool make_pipe(int fds[2]) { return ::pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0; }

// Puts the program's own disposition of `sig` back and signals the process again: its
// handler runs, or the default action ends the process by that signal (exit status 128+N as
// without the library). The stream is closed by then, so ours is not needed in front again.
void deliver_again(int sig) {
  ::sigaction(sig, is_ours(g_chained[sig]) ? &g_default_action : &g_chained[sig], nullptr);
  ::syscall(SYS_kill, g_pid, sig); // process-directed: this thread blocks it, another takes it
}

// A signal delivered again stays pending when every other thread has come to block it since
// the handler ran: after 2 s this thread takes it itself (the program's disposition runs
// here), so it is never swallowed.
void take_if_nobody_does(unsigned delivered) {
  sigset_t left{};
  for (int i = 0; i < 20; ++i) {
    ::usleep(100000);
    if (::sigpending(&left) != 0) return;
    bool any = false;
    for (int sig : handled) any |= (delivered & (1u << sig)) && sigismember(&left, sig);
    if (!any) return;
  }
  sigset_t take{};
  sigemptyset(&take);
  for (int sig : handled)
    if ((delivered & (1u << sig)) && sigismember(&left, sig)) sigaddset(&take, sig);
  pthread_sigmask(SIG_UNBLOCK, &take, nullptr);
  pthread_sigmask(SIG_BLOCK, &take, nullptr);
}

// The termination thread (handled signals blocked): waits for a pending signal, asks the
// flush thread for the final flush and close (at most the wait budget), then delivers every
// pending signal again. A flush that hangs only costs the budget: no signal is swallowed.
void* termination_loop(void*) {
  for (;;) {
    pollfd p{g_term[0], POLLIN, 0};
    if (::poll(&p, 1, -1) <= 0) continue;
    drain(g_term[0]);
    unsigned pending = g_pending.load();
    if (pending == 0) continue;
    int first = 0;
    for (int sig : handled) first = first == 0 && (pending & (1u << sig)) ? sig : first;
    const bool handler_next = (g_chained[first].sa_flags & SA_SIGINFO) || g_chained[first].sa_handler != SIG_DFL;
    g_handler_next.store(handler_next);
    ask_and_wait(request::signal, first, true);
    g_closed.store(true); // also when the flush ran out of time: later signals go straight on
    pending = g_pending.exchange(0);
    for (int sig : handled)
      if (pending & (1u << sig)) deliver_again(sig);
    take_if_nobody_does(pending);
  }
  return nullptr;
}

bool start_termination_thread(std::string& error) {
  if (!make_pipe(g_term)) {
    error = std::string("cannot create the termination pipe: ") + std::strerror(errno);
    return false;
  }
  // Created with the handled signals blocked, so none is ever delivered to it.
  sigset_t block{}, old{};
  sigemptyset(&block);
  for (int sig : handled) sigaddset(&block, sig);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  pthread_t thread{};
  const int rc = pthread_create(&thread, nullptr, &termination_loop, nullptr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (rc != 0) {
    error = std::string("cannot start the termination thread: ") + std::strerror(rc);
    return false;
  }
  pthread_detach(thread);
  g_term_thread.store(true);
  return true;
}

} // namespace

bool install(std::uint32_t wait_ms, bool signals, std::string& error) {
  if (g_installed.load()) return true;
  if (!make_pipe(g_wake) || !make_pipe(g_done)) {
    error = std::string("cannot create the termination pipes: ") + std::strerror(errno);
    return false;
  }
  g_wait_ms = wait_ms;
  g_pid = ::getpid();
  // Without that thread a handler would have to wait where it interrupted: nothing installed.
  if (signals && !start_termination_thread(error)) return false;
  g_installed.store(true);
  g_signals.store(signals);
  for (int sig : handled) {
    if (!signals) break;
    struct sigaction now {};
    if (::sigaction(sig, nullptr, &now) == 0 && takes_over(now)) install_over(sig, now);
  }
  // The shim is loaded only under `speedlab profile` (LD_PRELOAD); global scope, so dlsym
  // from this dlopen'ed library finds it.
  using set_hooks_fn = void (*)(void (*)(int), void (*)(int));
  if (auto set_hooks = reinterpret_cast<set_hooks_fn>(dlsym(RTLD_DEFAULT, "speedlab_exit_shim_set_hooks")))
    set_hooks(&on_exit_call, &on_self_kill);
  return true;
}

bool installed() { return g_installed.load(); }

void closed() { g_closed.store(true); }

int wake_fd() { return g_wake[0]; }

void wake() {
  if (g_wake[1] < 0) return;
  const char byte = 0;
  (void)!::write(g_wake[1], &byte, 1);
}

request take() {
  if (g_wake[0] >= 0) drain(g_wake[0]);
  request r;
  r.kind = static_cast<request::kind_t>(g_kind.exchange(request::none));
  r.value = g_value.load();
  r.final = g_final.load();
  r.handler_next = r.kind == request::signal && g_handler_next.load();
  r.signal_unix_ns = r.kind == request::signal ? g_signal_unix_ns.load() : 0;
  return r;
}

void done() {
  if (g_done[1] < 0) return;
  const char byte = 1;
  (void)!::write(g_done[1], &byte, 1);
}

std::string recheck() {
  std::string taken;
  if (!g_signals.load() || g_closed.load()) return taken;
  for (int sig : handled) {
    struct sigaction now {};
    if (::sigaction(sig, nullptr, &now) != 0 || !takes_over(now)) continue;
    install_over(sig, now);
    taken += (taken.empty() ? "" : ", ") + signal_name(sig);
  }
  return taken;
}

std::string signal_name(int sig) {
  switch (sig) {
  case SIGTERM:
    return "SIGTERM";
  case SIGINT:
    return "SIGINT";
  case SIGHUP:
    return "SIGHUP";
  default:
    return "signal " + std::to_string(sig);
  }
}

} // namespace speedlab::inject::termination
