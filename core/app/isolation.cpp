#include "core/app/isolation.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

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

std::string signal_text(int sig) {
  const char* name = sigabbrev_np(sig);
  return fmt::format("{} (SIG{})", strsignal(sig), name ? name : std::to_string(sig).c_str());
}

} // namespace

point_result failed_point(const run_request& req, point_status status, std::string reason) {
  point_result r;
  r.workload = req.workload->info.name;
  r.variant = req.variant->name;
  r.kind = to_string(req.variant->kind);
  r.params = req.point.params;
  r.id = point_id(r.workload, r.variant, r.params);
  r.expected_invalid = req.variant->expected_invalid;
  r.threads = req.variant->kind == variant_kind::threads ? req.threads : 1;
  r.status = status;
  r.reason = std::move(reason);
  return r;
}

point_result run_isolated(const run_request& request, double timeout_s) {
  int fds[2];
  if (::pipe(fds) != 0) return failed_point(request, point_status::failed, std::string("pipe() failed: ") + std::strerror(errno));
  std::fflush(nullptr); // the child must not flush the parent's buffered output again
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return failed_point(request, point_status::failed, std::string("fork() failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    run_request child = request;
    child.progress = [fd = fds[1]](const std::string& phase) { write_all(fd, "H " + phase + "\n"); };
    point_result r;
    try {
      r = measure_point(child);
    } catch (...) {
      r = failed_point(request, point_status::failed, "the runner failed outside the plugin");
    }
    write_all(fds[1], "R " + nlohmann::json(r).dump() + "\n");
    ::close(fds[1]);
    std::fflush(nullptr);
    ::_exit(0); // no static destructors of the parent's state in the child
  }

  ::close(fds[1]);
  using clock = std::chrono::steady_clock;
  auto deadline = clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(timeout_s));
  std::string buffer, result_line, phase = "start";
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd pfd{fds[0], POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    char chunk[65536];
    const ssize_t n = ::read(fds[0], chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break; // EOF: the child finished or died
    buffer.append(chunk, static_cast<std::size_t>(n));
    std::size_t nl;
    while ((nl = buffer.find('\n')) != std::string::npos) {
      std::string line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      if (line.rfind("H ", 0) == 0) {
        phase = line.substr(2);
        deadline = clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(timeout_s));
      } else if (line.rfind("R ", 0) == 0) {
        result_line = line.substr(2);
      }
    }
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }

  if (timed_out)
    return failed_point(request, point_status::timeout,
                        fmt::format("timed out: no progress for {} s (during {}); the run was killed", timeout_s, phase));
  if (!result_line.empty()) {
    try {
      return nlohmann::json::parse(result_line).get<point_result>();
    } catch (const std::exception& e) {
      return failed_point(request, point_status::failed, std::string("unreadable result from the child: ") + e.what());
    }
  }
  if (WIFSIGNALED(status))
    return failed_point(request, point_status::crashed,
                        fmt::format("crashed during {}: {}", phase, signal_text(WTERMSIG(status))));
  if (WIFEXITED(status))
    return failed_point(request, point_status::crashed,
                        fmt::format("exited with code {} during {} without a result", WEXITSTATUS(status), phase));
  return failed_point(request, point_status::crashed, "ended without a result");
}

} // namespace speedlab::app
