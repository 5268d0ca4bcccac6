#include "app/process/child_process.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "app/process/interrupt.hpp"

namespace speedlab::app {
namespace {

void write_all(int fd, const std::string& s) {
  const char* p = s.data();
  std::size_t left = s.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return; // the parent is gone; nothing useful left to do
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

} // namespace

std::string describe_end(int wait_status) {
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    const char* name = sigabbrev_np(sig);
    return fmt::format("{} (SIG{})", strsignal(sig), name ? name : std::to_string(sig).c_str());
  }
  if (WIFEXITED(wait_status)) return fmt::format("exit code {}", WEXITSTATUS(wait_status));
  return "an unknown end";
}

namespace {

// The child's side. It dies with speedlab however speedlab ends (even SIGKILL) and sits in
// its own process group: a Ctrl-C at the terminal reaches speedlab alone, which decides.
// Protocol, one line each: "H <text>" heartbeats, then "R <result>".
[[noreturn]] void child_main(const std::function<std::string(const heartbeat_function&)>& body, int fd, pid_t parent) {
  reset_stop_signals_in_child();
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(71); // speedlab ended before prctl took effect
  std::string result;
  try {
    result = body([fd](const std::string& text) { write_all(fd, "H " + text + "\n"); });
  } catch (...) {
    ::_exit(70); // the body's own failures are its business; this one shows as an exit code
  }
  write_all(fd, "R " + result + "\n");
  ::close(fd);
  std::fflush(nullptr);
  ::_exit(0); // no static destructors of the parent's state in the child
}

// The parent's side: reads heartbeats and the result until EOF, the deadline (renewed by
// each heartbeat) or a stop signal.
void read_child(int fd, double timeout_s, child_outcome& out) {
  using clock = std::chrono::steady_clock;
  const auto timeout = std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(timeout_s));
  auto deadline = clock::now() + timeout;
  std::string buffer;
  for (;;) {
    if (const int sig = stop_signal()) {
      out.interrupted_by = sig; // abandoned: the caller kills it, nothing of it is kept
      return;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
    if (left <= 0) {
      out.timed_out = true;
      return;
    }
    pollfd pfd{fd, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left, 250)));
    if (ready < 0 && errno != EINTR) return;
    if (ready <= 0) continue;
    char chunk[65536];
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return; // EOF: the child finished or died
    buffer.append(chunk, static_cast<std::size_t>(n));
    std::size_t nl;
    while ((nl = buffer.find('\n')) != std::string::npos) {
      std::string line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      if (line.rfind("H ", 0) == 0) {
        out.last_heartbeat = line.substr(2);
        deadline = clock::now() + timeout;
      } else if (line.rfind("R ", 0) == 0) {
        out.result = line.substr(2);
      }
    }
  }
}

} // namespace

child_outcome run_in_child(const std::function<std::string(const heartbeat_function&)>& body, double timeout_s) {
  child_outcome out;
  int fds[2];
  if (::pipe(fds) != 0) {
    out.error = std::string("pipe() failed: ") + std::strerror(errno);
    return out;
  }
  std::fflush(nullptr); // the child must not flush the parent's buffered output again
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    out.error = std::string("fork() failed: ") + std::strerror(errno);
    return out;
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(body, fds[1], parent);
  }
  ::close(fds[1]);
  ::setpgid(pid, pid); // also here: whichever of the two runs first
  read_child(fds[0], timeout_s, out);
  ::close(fds[0]);
  if (out.timed_out || out.interrupted_by) {
    ::kill(-pid, SIGKILL); // the child's group: whatever it started goes too
    ::kill(pid, SIGKILL);
  }
  while (::waitpid(pid, &out.wait_status, 0) < 0 && errno == EINTR) {
  }
  return out;
}

} // namespace speedlab::app
