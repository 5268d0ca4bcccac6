// Starts a user's program the way a good wrapper does (`speedlab profile -- PROGRAM`): by
// argv through posix_spawnp (never a shell string), with a few environment variables set,
// stdin/stdout/stderr inherited untouched, and SIGINT/SIGTERM/SIGHUP/SIGQUIT sent to
// speedlab forwarded to it. A signal the terminal sends to the whole foreground group
// (Ctrl-C) already reaches the program, so it is not sent twice; speedlab only survives it
// to write its report. Also where the injection library is and the environment that loads
// it (`speedlab profile` and the Python variants' workers both start programs under it).
//
//   auto r = app::launch_and_wait({"python3", "train.py"}, {{"CUDA_INJECTION64_PATH", lib}});
//   if (!r.started) ... r.error ...;     // exit 127
//   return r.exit_code;                  // the program's, 128+N for signal N
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/profile_options.hpp"

namespace speedlab::app {

struct launch_result {
  bool started = false;
  std::string error;             // why the program could not start ("no such file ...")
  int pid = 0;
  int wait_status = 0;
  int exit_code = 127;           // the program's exit code, 128+N for signal N, 127 not started
  std::optional<int> signal;     // the program was killed by this signal
  std::uint64_t start_ns = 0, end_ns = 0; // steady clock around the program's life
};

// The current environment with `set` applied (a key in `set` replaces the inherited one).
std::vector<std::string> environment_with(const std::map<std::string, std::string>& set);

launch_result launch_and_wait(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env_set);

// Where libspeedlab-inject.so is: $SPEEDLAB_INJECT_LIBRARY, else beside the speedlab
// executable (build tree), else <prefix>/lib/speedlab/ (installed). Empty if none exists.
std::filesystem::path find_inject_library();

// The variables the program gets (exposed for the tests): the library's options
// (model/profile_options.hpp, their folder made absolute) and, with a library, the
// injection paths (without one the program then runs unprofiled).
std::map<std::string, std::string> injection_environment(const std::filesystem::path& library,
                                                         profile::injection_options options);

// LD_PRELOAD for the program: the _exit shim beside the library (libspeedlab-exit.so,
// profilers/inject/exit_shim.cpp), so a process leaving through _exit (os._exit, forked
// children) still closes its stream, in front of the program's own preloads (`current`).
// `current` unchanged when there is no shim there.
std::string preload_with_exit_shim(const std::filesystem::path& library, const std::string& current);

} // namespace speedlab::app
