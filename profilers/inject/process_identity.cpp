#include "profilers/inject/process_identity.hpp"

#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <fstream>

namespace speedlab::inject {
namespace {

std::vector<std::string> read_cmdline() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> argv;
  std::string arg;
  while (std::getline(in, arg, '\0')) argv.push_back(arg);
  return argv;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

// The launcher variables of the common multi-process launchers, so ranks can be told apart.
std::map<std::string, std::string> launcher_tags() {
  static const char* names[] = {"RANK",
                                "LOCAL_RANK",
                                "WORLD_SIZE",
                                "LOCAL_WORLD_SIZE",
                                "OMPI_COMM_WORLD_RANK",
                                "OMPI_COMM_WORLD_LOCAL_RANK",
                                "OMPI_COMM_WORLD_SIZE",
                                "PMI_RANK",
                                "PMI_SIZE",
                                "SLURM_PROCID",
                                "SLURM_LOCALID",
                                "SLURM_NTASKS",
                                "CUDA_VISIBLE_DEVICES"};
  std::map<std::string, std::string> tags;
  for (const char* n : names)
    if (const char* v = std::getenv(n)) tags[n] = v;
  return tags;
}

} // namespace

std::uint64_t realtime_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}


profile::process_info this_process(std::uint32_t pid, std::uint64_t start_ns) {
  profile::process_info info;
  info.pid = pid;
  info.parent_pid = static_cast<std::uint32_t>(::getppid());
  info.host = host_name();
  info.command_line = read_cmdline();
  info.start_ns = start_ns;
  info.tags = launcher_tags();
  return info;
}

} // namespace speedlab::inject
