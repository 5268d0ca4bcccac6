#include "app/profile/program_launcher.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

extern char** environ;

namespace speedlab::app {
namespace {

constexpr int forwarded_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

std::atomic<pid_t> g_child{0};

void forward(int sig, siginfo_t* info, void*) {
  // SI_KERNEL: the terminal signalled the whole foreground group, the program included.
  if (info && info->si_code == SI_KERNEL) return;
  const pid_t child = g_child.load();
  if (child > 0) ::kill(child, sig);
}

std::uint64_t steady_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

// Installs the forwarding handlers for the program's lifetime; restores the old ones after.
class signal_forwarding {
public:
  signal_forwarding() {
    struct sigaction sa{};
    sa.sa_sigaction = &forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (std::size_t i = 0; i < std::size(forwarded_signals); ++i) sigaction(forwarded_signals[i], &sa, &m_old[i]);
  }
  ~signal_forwarding() {
    for (std::size_t i = 0; i < std::size(forwarded_signals); ++i) sigaction(forwarded_signals[i], &m_old[i], nullptr);
  }
  signal_forwarding(const signal_forwarding&) = delete;
  signal_forwarding& operator=(const signal_forwarding&) = delete;

private:
  struct sigaction m_old[std::size(forwarded_signals)]{};
};

} // namespace

std::vector<std::string> environment_with(const std::map<std::string, std::string>& set) {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    const auto eq = entry.find('=');
    if (eq != std::string::npos && set.count(entry.substr(0, eq))) continue;
    out.push_back(entry);
  }
  for (const auto& [k, v] : set) out.push_back(k + "=" + v);
  return out;
}

launch_result launch_and_wait(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env_set) {
  launch_result r;
  if (argv.empty() || argv[0].empty()) {
    r.error = "no program given";
    return r;
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::vector<std::string> env = environment_with(env_set);
  std::vector<char*> envp;
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  // Handlers before the spawn, so a signal in between is not lost to the default action.
  signal_forwarding forwarding;
  // The program starts with the default disposition of the forwarded signals and an empty
  // mask, whatever speedlab's were.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults, empty;
  sigemptyset(&defaults);
  for (int s : forwarded_signals) sigaddset(&defaults, s);
  sigemptyset(&empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = 0;
  r.start_ns = steady_ns();
  const int rc = posix_spawnp(&pid, args[0], nullptr, &attr, args.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    r.error = fmt::format("cannot run '{}': {}", argv[0], std::strerror(rc));
    return r;
  }
  r.started = true;
  r.pid = pid;
  g_child.store(pid);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      status = 0;
      r.error = fmt::format("waitpid failed: {}", std::strerror(errno));
      break;
    }
  }
  g_child.store(0);
  r.end_ns = steady_ns();
  r.wait_status = status;
  if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
    r.exit_code = 128 + WTERMSIG(status);
  }
  return r;
}

namespace {

constexpr const char* inject_file = "libspeedlab-inject.so";
constexpr const char* exit_shim_file = "libspeedlab-exit.so";

std::filesystem::path self_dir() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path{} : exe.parent_path();
}

} // namespace

std::filesystem::path find_inject_library() {
  std::error_code ec;
  if (const char* env = std::getenv("SPEEDLAB_INJECT_LIBRARY"); env && *env)
    return std::filesystem::exists(env, ec) ? std::filesystem::absolute(env) : std::filesystem::path{};
  const auto dir = self_dir();
  for (const auto& candidate : {dir / inject_file, dir.parent_path() / "lib" / "speedlab" / inject_file,
                                dir.parent_path() / "lib64" / "speedlab" / inject_file})
    if (!dir.empty() && std::filesystem::exists(candidate, ec)) return candidate;
  return {};
}

std::map<std::string, std::string> injection_environment(const std::filesystem::path& library,
                                                         profile::injection_options options) {
  options.dir = std::filesystem::absolute(options.dir).string();
  std::map<std::string, std::string> env = profile::to_environment(options);
  if (!library.empty()) {
    env["CUDA_INJECTION64_PATH"] = library.string();
    env["NVTX_INJECTION64_PATH"] = library.string();
  }
  return env;
}

std::string preload_with_exit_shim(const std::filesystem::path& library, const std::string& current) {
  std::error_code ec;
  const std::filesystem::path shim = library.parent_path() / exit_shim_file;
  if (library.empty() || !std::filesystem::exists(shim, ec)) return current;
  return current.empty() ? shim.string() : shim.string() + ":" + current;
}

} // namespace speedlab::app
