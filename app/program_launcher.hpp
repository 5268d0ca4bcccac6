// Starts a user's program the way a good wrapper does (`speedlab profile -- PROGRAM`): by
// argv through posix_spawnp (never a shell string), with a few environment variables set,
// stdin/stdout/stderr inherited untouched, and SIGINT/SIGTERM/SIGHUP/SIGQUIT sent to
// speedlab forwarded to it. A signal the terminal sends to the whole foreground group
// (Ctrl-C) already reaches the program, so it is not sent twice; speedlab only survives it
// to write its report.
//
//   auto r = app::launch_and_wait({"python3", "train.py"}, {{"CUDA_INJECTION64_PATH", lib}});
//   if (!r.started) ... r.error ...;     // exit 127
//   return r.exit_code;                  // the program's, 128+N for signal N
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

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

} // namespace speedlab::app
